/*
 * compat/rdmacm/id.c: rdma_cm_id life cycle and the connection calls
 * (rdma_create_id(3) ... rdma_disconnect(3)), each a thin layer over the
 * native iwarp_cm_* call of the same name.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/rdmacm/cma.h"

static __be16 cma_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)sa)
			->sin6_port;
	return 0;
}

void cma_sync_addr(struct cma_id *cid)
{
	memcpy(&cid->id.route.addr.src_storage, &cid->nid->src_addr,
	       sizeof(cid->id.route.addr.src_storage));
	memcpy(&cid->id.route.addr.dst_storage, &cid->nid->dst_addr,
	       sizeof(cid->id.route.addr.dst_storage));
}

static void cma_fill(struct cma_id *cid, struct ibv_context *verbs,
		     struct cma_channel *chan, void *context,
		     enum rdma_port_space ps)
{
	cid->chan = chan;
	cid->id.verbs = verbs;
	cid->id.channel = &chan->ch;
	cid->id.context = context;
	cid->id.ps = ps;
	cid->id.port_num = 1;
	cid->id.qp_type = IBV_QPT_RC;
}

struct cma_id *cma_child_id(struct cma_id *listen, struct iwarp_cm_id *nid)
{
	struct cma_id *cid = calloc(1, sizeof(*cid));

	if (!cid)
		return NULL;
	cid->nid = nid;
	nid->context = cid;
	cma_fill(cid, listen->id.verbs, listen->chan, listen->id.context,
		 listen->id.ps);
	cma_sync_addr(cid);
	return cid;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps)
{
	struct ibv_context *verbs;
	struct cma_id *cid;
	int ret;

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	/* iWARP runs over TCP only (RFC 5044): the TCP port space. */
	if (ps != RDMA_PS_TCP) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	verbs = cma_verbs();
	if (!verbs)
		return -1;
	cid = calloc(1, sizeof(*cid));
	if (!cid)
		return -1;
	if (channel) {
		cma_fill(cid, verbs, cma_channel_of(channel), context, ps);
	} else {
		struct cma_channel *own = cma_channel_create();

		if (!own) {
			free(cid);
			return -1;
		}
		cma_fill(cid, verbs, own, context, ps);
		cid->sync = 1;
	}
	ret = iwarp_cm_create_id(cid->chan->nch, iwc_native_context(verbs),
				 &cid->nid, cid, IWARP_PS_TCP);
	if (ret < 0) {
		if (cid->sync)
			cma_channel_destroy(cid->chan);
		free(cid);
		return cma_ret(ret);
	}
	*id = &cid->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id *cid;
	int ret;

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	cid = cma_id_of(id);
	cma_qp_unlink(cid);
	if (cid->sync && id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	ret = iwarp_cm_destroy_id(cid->nid);
	if (ret < 0)
		return cma_ret(ret);
	if (cid->sync)
		cma_channel_destroy(cid->chan);
	free(cid);
	return 0;
}

/* The native bind gives the id its port at once (port 0: a free one), as
 * the kernel's rdma_cm does; rdma_get_src_port() reads it from here. */
int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	int ret;

	if (!id || !addr) {
		errno = EINVAL;
		return -1;
	}
	ret = iwarp_cm_bind_addr(cma_id_of(id)->nid, addr);
	if (ret == 0)
		cma_sync_addr(cma_id_of(id));
	return cma_ret(ret);
}

/* "address:port" of |sa| for the debug log. */
static const char *cma_addr_str(const struct sockaddr *sa, char *buf,
				size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	const void *a = NULL;

	if (sa->sa_family == AF_INET)
		a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	if (a)
		inet_ntop(sa->sa_family, a, host, sizeof(host));
	snprintf(buf, len, "%s:%u", host, ntohs(cma_port(sa)));
	return buf;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		      struct sockaddr *dst_addr, int timeout_ms)
{
	char sa[INET6_ADDRSTRLEN + 8], da[INET6_ADDRSTRLEN + 8];
	int ret;

	if (!id || !dst_addr) {
		errno = EINVAL;
		return -1;
	}
	ret = iwarp_cm_resolve_addr(cma_id_of(id)->nid, src_addr, dst_addr,
				    timeout_ms);
	if (ret == 0)
		cma_sync_addr(cma_id_of(id));
	cma_log("rdma_resolve_addr %p: %s -> %s%s: %d", (void *)id,
		cma_addr_str(&id->route.addr.src_addr, sa, sizeof(sa)),
		cma_addr_str(&id->route.addr.dst_addr, da, sizeof(da)),
		cma_id_of(id)->sync ? " (sync)" : "", ret);
	if (ret < 0)
		return cma_ret(ret);
	cma_sync_addr(cma_id_of(id)); /* bound now: the source port shows */
	return cma_sync_wait(cma_id_of(id), RDMA_CM_EVENT_ADDR_RESOLVED);
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	int ret;

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	ret = iwarp_cm_resolve_route(cma_id_of(id)->nid, timeout_ms);
	if (ret < 0)
		return cma_ret(ret);
	return cma_sync_wait(cma_id_of(id), RDMA_CM_EVENT_ROUTE_RESOLVED);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	int ret;

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	ret = iwarp_cm_listen(cma_id_of(id)->nid, backlog);
	if (ret == 0)
		cma_sync_addr(cma_id_of(id));
	cma_log("rdma_listen %p port %u: %d", (void *)id,
		ntohs(rdma_get_src_port(id)), ret);
	return cma_ret(ret);
}

static void cma_param(struct iwarp_conn_param *np,
		      const struct rdma_conn_param *p)
{
	memset(np, 0, sizeof(*np));
	np->private_data = p->private_data;
	np->private_data_len = p->private_data_len;
	np->responder_resources = p->responder_resources;
	np->initiator_depth = p->initiator_depth;
	np->flow_control = p->flow_control;
	np->retry_count = p->retry_count;
	np->rnr_retry_count = p->rnr_retry_count;
	np->srq = p->srq;
	np->qp_num = p->qp_num;
}

/* rdma_connect(3) and rdma_accept(3): the same steps around the native
 * call; a synchronous id then waits for ESTABLISHED. */
static int cma_establish(struct rdma_cm_id *id,
			 struct rdma_conn_param *conn_param,
			 int (*native)(struct iwarp_cm_id *,
				       const struct iwarp_conn_param *),
			 const char *what)
{
	struct iwarp_conn_param np;
	int ret;

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	if (conn_param)
		cma_param(&np, conn_param);
	ret = native(cma_id_of(id)->nid, conn_param ? &np : NULL);
	if (ret < 0)
		return cma_ret_log(what, ret);
	return cma_sync_wait(cma_id_of(id), RDMA_CM_EVENT_ESTABLISHED);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	return cma_establish(id, conn_param, iwarp_cm_connect, "rdma_connect");
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	return cma_establish(id, conn_param, iwarp_cm_accept, "rdma_accept");
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data,
		uint8_t private_data_len)
{
	if (!id) {
		errno = EINVAL;
		return -1;
	}
	return cma_ret(iwarp_cm_reject(cma_id_of(id)->nid, private_data,
				       private_data_len));
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	if (!id) {
		errno = EINVAL;
		return -1;
	}
	return cma_ret(iwarp_cm_disconnect(cma_id_of(id)->nid));
}

int rdma_establish(struct rdma_cm_id *id)
{
	/* The native CM moves the QP it made to RTS itself; a QP the
	 * application created and connects by hand cannot be driven. */
	if (!id) {
		errno = EINVAL;
		return -1;
	}
	if (id->qp)
		return 0;
	errno = ENOSYS;
	return -1;
}

/*
 * rdma_migrate_id(3): the id's queued and future events go to |channel|;
 * NULL puts the id into synchronous mode (a channel of its own, each call
 * waits for its event). Leaving synchronous mode acks the event kept in
 * id->event first (the native move waits for delivered events to be
 * acked) and frees the id's own channel afterwards.
 */
int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cma_channel *to, *own = NULL;
	struct cma_id *cid;
	int ret;

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	cid = cma_id_of(id);
	if (channel == id->channel || (!channel && cid->sync))
		return 0;
	if (channel) {
		to = cma_channel_of(channel);
	} else {
		own = cma_channel_create();
		if (!own)
			return -1;
		to = own;
	}
	if (cid->sync && id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	ret = iwarp_cm_migrate_id(cid->nid, to->nch);
	cma_log("rdma_migrate_id %p to %s: %d", (void *)id,
		own ? "synchronous mode" : "a channel", ret);
	if (ret < 0) {
		if (own)
			cma_channel_destroy(own);
		return cma_ret(ret);
	}
	if (cid->sync)
		cma_channel_destroy(cid->chan);
	cid->chan = to;
	id->channel = &to->ch;
	cid->sync = own != NULL;
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id ? cma_port(&id->route.addr.src_addr) : 0;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id ? cma_port(&id->route.addr.dst_addr) : 0;
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		    size_t optlen)
{
	if (!id || !optval || !optlen) {
		errno = EINVAL;
		return -1;
	}
	if (level == RDMA_OPTION_ID) {
		switch (optname) {
		case RDMA_OPTION_ID_TOS: /* a QoS hint: TCP keeps its default */
		case RDMA_OPTION_ID_REUSEADDR: /* listeners already set
						  SO_REUSEADDR */
		case RDMA_OPTION_ID_AFONLY: /* the bound family is used as given
					     */
		case RDMA_OPTION_ID_ACK_TIMEOUT: /* TCP runs its own
						    retransmission */
			return 0;
		default:
			break;
		}
	}
	errno = ENOSYS;
	return -1;
}

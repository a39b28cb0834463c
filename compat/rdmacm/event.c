/*
 * compat/rdmacm/event.c: rdma_get_cm_event(3), rdma_ack_cm_event(3),
 * rdma_event_str(3) and the waits of synchronous ids.
 *
 * A native event becomes an rdma_cm_event that points at the native
 * event's private data, so the data stays valid until the application
 * acknowledges the event (rdma_get_cm_event(3)). The event numbers of the
 * native CM are librdmacm's, and it reports what the kernel's iWARP CM
 * does (a TCP connection refused is REJECTED with -ECONNREFUSED). The
 * status is a negative errno; an MPA reject (RFC 5044 §7.1, R bit) is
 * REJECTED with -ECONNREFUSED too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/rdmacm/cma.h"

static void cma_event_fill(struct cma_event *e)
{
	const struct iwarp_cm_event *n = e->nev;
	const struct iwarp_conn_param *c = &n->param.conn;

	e->ev.event = (enum rdma_cm_event_type)n->event;
	e->ev.status = n->status ? -cma_errno(n->status) : 0;
	e->ev.param.conn.private_data = c->private_data;
	e->ev.param.conn.private_data_len = c->private_data_len;
	e->ev.param.conn.responder_resources = c->responder_resources;
	e->ev.param.conn.initiator_depth = c->initiator_depth;
	e->ev.param.conn.flow_control = c->flow_control;
	e->ev.param.conn.retry_count = c->retry_count;
	e->ev.param.conn.rnr_retry_count = c->rnr_retry_count;
	e->ev.param.conn.srq = c->srq;
	e->ev.param.conn.qp_num = c->qp_num;
}

int rdma_get_cm_event(struct rdma_event_channel *channel,
		      struct rdma_cm_event **event)
{
	struct iwarp_cm_event *nev;
	struct cma_event *e;
	struct cma_id *cid;
	int ret;

	if (!channel || !event) {
		errno = EINVAL;
		return -1;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -1;
	ret = iwarp_cm_get_event(cma_channel_of(channel)->nch, &nev);
	if (ret < 0) {
		free(e);
		return cma_ret(ret);
	}
	e->nev = nev;
	if (nev->event == IWARP_CM_EVENT_CONNECT_REQUEST && nev->listen_id) {
		struct cma_id *listen = nev->listen_id->context;

		cid = cma_child_id(listen, nev->id);
		if (!cid) {
			/* no memory for the child: refuse the peer */
			int err = errno;

			iwarp_cm_reject(nev->id, NULL, 0);
			iwarp_cm_ack_event(nev);
			iwarp_cm_destroy_id(nev->id);
			free(e);
			errno = err;
			return -1;
		}
		e->ev.listen_id = &listen->id;
	} else {
		cid = nev->id->context;
		cma_sync_addr(cid);
	}
	e->ev.id = &cid->id;
	cma_event_fill(e);
	cma_log("event %s status %d id %p (native %s status %d)",
		rdma_event_str(e->ev.event), e->ev.status, (void *)&cid->id,
		iwarp_cm_event_str(nev->event), nev->status);
	*event = &e->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;
	int ret;

	if (!event) {
		errno = EINVAL;
		return -1;
	}
	ret = iwarp_cm_ack_event(e->nev);
	free(e);
	return cma_ret(ret);
}

int cma_sync_wait(struct cma_id *cid, enum rdma_cm_event_type expect)
{
	struct rdma_cm_event *ev;
	int err;

	if (!cid->sync)
		return 0;
	if (rdma_get_cm_event(&cid->chan->ch, &ev))
		return -1;
	if (ev->event == expect && ev->status == 0) {
		/* kept for the application (private data), as librdmacm does */
		if (cid->id.event)
			rdma_ack_cm_event(cid->id.event);
		cid->id.event = ev;
		return 0;
	}
	err = ev->status ? -ev->status : ECONNREFUSED;
	rdma_ack_cm_event(ev);
	errno = err;
	return -1;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] =
			"RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] =
			"RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] =
			"RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) &&
	    names[event])
		return names[event];
	return "UNKNOWN EVENT";
}

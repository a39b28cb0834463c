/*
 * cm/cm_id.c: the librdmacm-shaped id API (iwarp_cm_*). Arguments are
 * checked on the calling thread; everything that touches an id's
 * connection state runs on its context's engine thread through
 * engine_call_sync() (cm_conn.c), except before the id ever reached the
 * engine (cm_call_here).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cm/cm_int.h"
#include "cm/cm_qp.h"
#include "io/net.h"
#include "io/tls.h"
#include "util/mem.h"
#include "verbs/qp_conn.h"
#include "verbs/verbs.h"

/* Default listen backlog when the caller passes <= 0. */
#define CM_BACKLOG_DEFAULT 1024

/*
 * The id <-> QP link lock (cm/cm_qp.h): held by the application thread
 * around the engine_call_sync() that sets or clears id->pub.qp and
 * qp->cm_id, so that iwarp_destroy_qp() and iwarp_cm_destroy_id() of the
 * same pair, from any threads in any order, never see a freed object. The
 * engine thread never takes it.
 */
static pthread_mutex_t cm_link_lock = PTHREAD_MUTEX_INITIALIZER;

/* One call onto the engine thread. */
struct cm_call {
	struct cm_id *id;
	int (*fn)(struct cm_call *c);
	int rc;
	const uint8_t *pd;
	size_t len;
	int a, b;
	const struct sockaddr *src, *dst;
	struct iwarp_qp *qp;
	struct cm_listen_stats *stats;
	struct io_tls_ctx *tls;
	struct cm_channel *to;
	struct engine *eng;
};

static void cm_call_run(void *arg)
{
	struct cm_call *c = arg;

	c->rc = c->fn(c);
}

/* Runs c->fn through |call| (engine_call_sync or _here); its result. */
static int
cm_call_with(struct cm_id *id, struct cm_call *c, int (*fn)(struct cm_call *c),
	     int (*call)(struct engine *eng, void (*f)(void *arg), void *arg))
{
	int err;

	c->id = id;
	c->fn = fn;
	c->rc = -EINVAL;
	err = call(id->eng, cm_call_run, c);
	return err ? err : c->rc;
}

/* Runs c->fn on |id|'s engine thread; returns its result. */
static int cm_call(struct cm_id *id, struct cm_call *c,
		   int (*fn)(struct cm_call *c))
{
	return cm_call_with(id, c, fn, engine_call_sync);
}

/*
 * cm_call for connection set-up (connect, accept, a QP linked to an id
 * the engine runs): with direct sockets the caller runs c->fn itself when
 * no thread holds the engine (engine_call_sync_here), saving the
 * hand-off; teardown calls keep cm_call.
 */
static int cm_call_setup(struct cm_id *id, struct cm_call *c,
			 int (*fn)(struct cm_call *c))
{
	return cm_call_with(id, c, fn, engine_call_sync_here);
}

/*
 * Runs c->fn on the calling thread while the engine has never seen |id|
 * (cm_int.h, engine_owned): before connect or listen, an id's state, its
 * socket and its QP link change only inside the calls the application
 * makes on it, which librdmacm has it serialize, so rdma_resolve_addr,
 * rdma_resolve_route and rdma_create_qp need no round trip through the
 * progress thread (bench/README.md, "Where connection set-up goes").
 * Their events are queued on the channel from here, as the engine would.
 */
static int cm_call_here(struct cm_id *id, struct cm_call *c,
			int (*fn)(struct cm_call *c))
{
	if (id->engine_owned)
		return cm_call_setup(id, c, fn);
	c->id = id;
	c->fn = fn;
	return fn(c);
}

static socklen_t sa_len(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (sa->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

IWARP_EXPORT int iwarp_cm_create_id(struct iwarp_event_channel *channel,
				    struct iwarp_context *verbs,
				    struct iwarp_cm_id **out, void *context,
				    enum iwarp_port_space ps)
{
	struct iwarp_context *ctx;
	struct cm_id *id;
	bool def;

	if (!channel || !out || ps != IWARP_PS_TCP)
		return -EINVAL;
	id = iw_calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	ctx = cm_ctx_get(verbs, &def);
	if (!ctx) {
		int err = errno ? -errno : -ENODEV;

		iw_free(id);
		return err;
	}
	id->pub.verbs = ctx;
	id->pub.channel = channel;
	id->pub.context = context;
	id->pub.ps = ps;
	id->ch = cm_channel_from_pub(channel);
	id->default_ctx = def;
	id->eng = cm_ctx_engine(ctx);
	id->grace_ms = (int)ctx->attr.mpa_reply_grace_ms;
	id->resp_wait_ms = (int)ctx->attr.responder_tx_wait_ms;
	id->disc_hold_ms = ctx->disc_hold_ms;
	id->state = CM_S_IDLE;
	engine_timer_init(&id->timer);
	engine_timer_init(&id->reap);
	engine_timer_init(&id->txopen);
	engine_timer_init(&id->dischold);
	cm_channel_add_id(id);
	*out = &id->pub;
	return 0;
}

/* Clears the id <-> QP link (engine thread, cm_link_lock held). */
static void cm_unlink(struct cm_id *id)
{
	struct iwarp_qp *qp = id->pub.qp;

	if (qp && qp_from_pub(qp)->cm_id == &id->pub)
		qp_from_pub(qp)->cm_id = NULL;
	id->pub.qp = NULL;
}

static int op_teardown(struct cm_call *c)
{
	cm_conn_teardown(c->id); /* the datapath goes: the QP is left alone */
	cm_unlink(c->id);
	return 0;
}

static int op_free_children(struct cm_call *c)
{
	cm_conn_free_children(c->id, c->eng);
	return 0;
}

/* Tears |id| down on the engine and unlinks its QP (app thread). */
static void cm_id_teardown(struct cm_id *id)
{
	struct iwarp_context *ctx = id->pub.verbs;
	struct cm_call call;
	unsigned int i;

	pthread_mutex_lock(&cm_link_lock);
	cm_call(id, &call, op_teardown);
	pthread_mutex_unlock(&cm_link_lock);
	/* a listener no longer accepts: its hidden children on the other
	 * engines go there (after the hand-offs queued to them) */
	for (i = 0; id->listened && i < ctx->n_engines; i++) {
		if (ctx->engines[i] == id->eng)
			continue;
		memset(&call, 0, sizeof(call));
		call.eng = ctx->engines[i];
		call.id = id;
		call.fn = op_free_children;
		engine_call_sync(call.eng, cm_call_run, &call);
	}
}

/* Frees an id the engine no longer runs (app thread). */
static void cm_id_free(struct cm_id *id)
{
	cm_channel_del_id(id);
	if (id->default_ctx)
		cm_ctx_put_default();
	iw_free(id);
}

IWARP_EXPORT int iwarp_cm_destroy_id(struct iwarp_cm_id *pub)
{
	struct cm_id *id, *children, *c;

	if (!pub)
		return -EINVAL;
	id = cm_id_from_pub(pub);
	/* 1. no callback, no new event for |id| (or its hidden children);
	 * its QP (if any) is no longer linked to it */
	cm_id_teardown(id);
	/* 2. queued events go; children never delivered go with them */
	cm_channel_purge(id, &children);
	while ((c = children)) {
		children = c->p_next;
		c->p_next = NULL;
		cm_id_teardown(c);
		cm_channel_purge(c, &c->p_next); /* its own, if any */
		cm_id_free(c);
	}
	/* 3. librdmacm: wait until the events delivered for |id| are acked */
	cm_channel_wait_acked(id);
	cm_id_free(id);
	return 0;
}

static int op_migrate(struct cm_call *c)
{
	struct cm_id *id = c->id, *h;
	int rc;

	/* a listener's children may run on other engines: none publishes
	 * itself (cm_publish_child) while the listener moves */
	cm_conn_lock_pending(true);
	rc = cm_channel_move(id, c->to);
	/* a listener's hidden children raise their CONNECT_REQUEST (and all
	 * later events) on the listener's channel as it is then */
	for (h = id->pending; !rc && h; h = h->p_next) {
		__atomic_store_n(&h->ch, c->to, __ATOMIC_RELEASE);
		h->pub.channel = &c->to->pub;
	}
	cm_conn_lock_pending(false);
	return rc;
}

IWARP_EXPORT int iwarp_cm_migrate_id(struct iwarp_cm_id *pub,
				     struct iwarp_event_channel *channel)
{
	struct cm_channel *from;
	struct cm_id *id;
	struct cm_call c;
	int rc;

	if (!pub || !channel)
		return -EINVAL;
	id = cm_id_from_pub(pub);
	from = id->ch;
	memset(&c, 0, sizeof(c));
	c.to = cm_channel_from_pub(channel);
	do {
		/* rdma_migrate_id(3): wait until the events delivered for the
		 * id on its current channel are acked; another thread may be
		 * handed one more meanwhile, then wait again */
		cm_channel_wait_acked(id);
		rc = cm_call(id, &c, op_migrate);
	} while (rc == -EAGAIN);
	/* a get_event on the old channel may still be driving the id's
	 * INLINE engine, found through the old list: let it finish, so the
	 * id's context may be closed as soon as the id is destroyed */
	if (!rc)
		cm_channel_settle(from);
	return rc;
}

/*
 * Binds a TCP socket of the id to |addr| (port 0: a free one) and reports
 * the bound address in src_addr at once, as rdma_bind_addr gives the id its
 * port at bind time; the socket holds the port until the id listens or
 * connects from it (or is destroyed). Engine thread.
 */
static int cm_sock_bind(struct cm_id *id, const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd;

	fd = engine_tcp_bind(addr, sa_len(addr));
	if (fd < 0)
		return fd;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	memset(&id->pub.src_addr, 0, sizeof(id->pub.src_addr));
	memcpy(&id->pub.src_addr, &ss, len);
	id->sock = fd;
	id->sock_held = true;
	return 0;
}

static int op_bind(struct cm_call *c)
{
	struct cm_id *id = c->id;
	int err;

	if (id->state != CM_S_IDLE)
		return -EINVAL;
	err = cm_sock_bind(id, c->src);
	if (err)
		return err;
	id->state = CM_S_BOUND;
	return 0;
}

IWARP_EXPORT int iwarp_cm_bind_addr(struct iwarp_cm_id *pub,
				    const struct sockaddr *addr)
{
	struct cm_call c;

	if (!pub || !addr || !sa_len(addr))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.src = addr;
	return cm_call_here(cm_id_from_pub(pub), &c, op_bind);
}

/*
 * The local address the kernel would use toward |dst| (a connected UDP
 * socket sends nothing): the route lookup of rdma_resolve_addr.
 */
static int cm_route_src(const struct sockaddr *dst,
			struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	int fd, err = 0;

	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, dst, sa_len(dst)) < 0 ||
	    getsockname(fd, (struct sockaddr *)src, &len) < 0)
		err = -errno;
	close(fd);
	if (!err) {
		if (src->ss_family == AF_INET)
			((struct sockaddr_in *)src)->sin_port = 0;
		else
			((struct sockaddr_in6 *)src)->sin6_port = 0;
	}
	return err;
}

/* Whether |ss| is the wildcard address of its family. */
static bool sa_is_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

/*
 * rdma_resolve_addr: an id not yet bound is bound first (to |src|, else to
 * the wildcard address of the destination's family, port 0), so it has its
 * source port from now on, and its connection leaves from that port; a
 * bound id keeps its binding (|src| is not looked at) but must be of the
 * destination's family. A wildcard source address then becomes the one
 * the route toward |dst| uses, the port staying.
 */
static int op_resolve_addr(struct cm_call *c)
{
	struct cm_id *id = c->id;
	struct sockaddr_storage any, route;
	int err;

	if (id->state != CM_S_IDLE && id->state != CM_S_BOUND)
		return -EINVAL;
	if (id->state == CM_S_IDLE) {
		if (!c->src) {
			memset(&any, 0, sizeof(any));
			any.ss_family = c->dst->sa_family;
		}
		err = cm_sock_bind(id, c->src ? c->src
					      : (const struct sockaddr *)&any);
		if (err)
			return err;
		id->state = CM_S_BOUND;
	} else if (id->pub.src_addr.ss_family != c->dst->sa_family) {
		return -EINVAL;
	}
	memset(&id->pub.dst_addr, 0, sizeof(id->pub.dst_addr));
	memcpy(&id->pub.dst_addr, c->dst, sa_len(c->dst));
	if (sa_is_any(&id->pub.src_addr)) {
		err = cm_route_src(c->dst, &route);
		if (err) {
			/* librdmacm: the failure comes as ADDR_ERROR; the id
			 * stays bound */
			return cm_event_push(id, NULL,
					     IWARP_CM_EVENT_ADDR_ERROR, err,
					     NULL, 0, 0, 0);
		}
		if (route.ss_family == AF_INET)
			((struct sockaddr_in *)&route)->sin_port =
				((struct sockaddr_in *)&id->pub.src_addr)
					->sin_port;
		else
			((struct sockaddr_in6 *)&route)->sin6_port =
				((struct sockaddr_in6 *)&id->pub.src_addr)
					->sin6_port;
		id->pub.src_addr = route;
	}
	id->state = CM_S_ADDR_RESOLVED;
	return cm_event_push(id, NULL, IWARP_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0,
			     0, 0);
}

IWARP_EXPORT int iwarp_cm_resolve_addr(struct iwarp_cm_id *pub,
				       const struct sockaddr *src_addr,
				       const struct sockaddr *dst_addr,
				       int timeout_ms)
{
	struct cm_call c;

	(void)timeout_ms; /* resolution of a numeric address is immediate */
	if (!pub || !dst_addr || !sa_len(dst_addr))
		return -EINVAL;
	if (src_addr && src_addr->sa_family != dst_addr->sa_family)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.src = src_addr;
	c.dst = dst_addr;
	return cm_call_here(cm_id_from_pub(pub), &c, op_resolve_addr);
}

static int op_resolve_route(struct cm_call *c)
{
	struct cm_id *id = c->id;

	if (id->state != CM_S_ADDR_RESOLVED)
		return -EINVAL;
	id->state = CM_S_ROUTE_RESOLVED; /* TCP routes itself */
	return cm_event_push(id, NULL, IWARP_CM_EVENT_ROUTE_RESOLVED, 0, NULL,
			     0, 0, 0);
}

IWARP_EXPORT int iwarp_cm_resolve_route(struct iwarp_cm_id *pub, int timeout_ms)
{
	struct cm_call c;

	(void)timeout_ms;
	if (!pub)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	return cm_call_here(cm_id_from_pub(pub), &c, op_resolve_route);
}

IWARP_EXPORT int iwarp_cm_getaddr(const char *host, uint16_t port,
				  struct sockaddr_storage *out)
{
	struct addrinfo hints, *res;
	char serv[8];
	int rc;

	if (!out)
		return -EINVAL;
	snprintf(serv, sizeof(serv), "%u", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = host ? AI_ADDRCONFIG : AI_PASSIVE;
	rc = getaddrinfo(host, serv, &hints, &res);
	if (rc == EAI_BADFLAGS || (rc && host && !*host))
		return -EINVAL;
	if (rc) {
		/* AI_ADDRCONFIG hides ::1 without a global IPv6 address */
		hints.ai_flags = host ? 0 : AI_PASSIVE;
		rc = getaddrinfo(host, serv, &hints, &res);
	}
	switch (rc) {
	case 0:
		break;
	case EAI_NONAME:
	case EAI_NODATA:
	case EAI_FAIL:
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return -errno;
	default:
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	if (res->ai_addrlen > sizeof(*out)) {
		freeaddrinfo(res);
		return -EINVAL;
	}
	memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (out->ss_family == AF_INET)
		((struct sockaddr_in *)out)->sin_port = htons(port);
	else if (out->ss_family == AF_INET6)
		((struct sockaddr_in6 *)out)->sin6_port = htons(port);
	else
		return -EAFNOSUPPORT;
	return 0;
}

static int op_listen(struct cm_call *c)
{
	struct cm_id *id = c->id;

	if (id->state != CM_S_BOUND)
		return -EINVAL;
	if (id->tls && !io_tls_ctx_can_serve(id->tls))
		return -EINVAL; /* a TLS server needs a certificate or a PSK */
	return cm_conn_listen(id, c->a);
}

static int op_stats(struct cm_call *c)
{
	cm_conn_lock_pending(true);
	*c->stats = c->id->lstats;
	cm_conn_lock_pending(false);
	return 0;
}

int cm_listen_stats_get(struct iwarp_cm_id *pub, struct cm_listen_stats *out)
{
	struct cm_call c;

	if (!pub || !out)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.stats = out;
	return cm_call(cm_id_from_pub(pub), &c, op_stats);
}

IWARP_EXPORT int iwarp_cm_listen(struct iwarp_cm_id *pub, int backlog)
{
	struct cm_id *id;
	struct cm_call c;

	if (!pub)
		return -EINVAL;
	id = cm_id_from_pub(pub);
	memset(&c, 0, sizeof(c));
	c.a = backlog > 0 ? backlog : CM_BACKLOG_DEFAULT;
	/*
	 * The socket starts listening here, on the caller's thread, as
	 * rdma_listen's does in the caller's system call: a peer told the
	 * port right before (qperf 0.4.11 sends it between rdma_bind_addr
	 * and rdma_listen) is refused only while the caller itself has not
	 * reached this call, not also until the engine thread gets to run
	 * on a loaded machine. Only a bound id whose op_listen cannot refuse
	 * (the same checks); state, sock and tls change only inside calls on
	 * this id, which the caller serializes and engine_call_sync orders,
	 * so reading them here is safe. op_listen's own listen(2) then only
	 * confirms the backlog.
	 */
	if (id->state == CM_S_BOUND && id->sock_held &&
	    (!id->tls || io_tls_ctx_can_serve(id->tls)) &&
	    listen(id->sock, c.a) < 0)
		return -errno;
	id->engine_owned = true;
	return cm_call(id, &c, op_listen);
}

/* Swaps the id's TLS context for c->tls (engine thread). */
static int op_set_tls(struct cm_call *c)
{
	struct cm_id *id = c->id;
	struct io_tls_ctx *old;

	switch (id->state) {
	case CM_S_IDLE:
	case CM_S_BOUND:
	case CM_S_ADDR_RESOLVED:
	case CM_S_ROUTE_RESOLVED:
		break;
	case CM_S_LISTEN:
	case CM_S_CONNECTING:
	case CM_S_MPA_REQ_SENT:
	case CM_S_GRACE:
	case CM_S_MPA_WAIT_REQ:
	case CM_S_CONN_REQ:
	case CM_S_ACCEPTING:
	case CM_S_RTR_WAIT:
	case CM_S_ESTABLISHED:
	case CM_S_CLOSING:
	case CM_S_CLOSED:
	case CM_S_DEAD:
	default:
		return -EINVAL; /* only before connect / listen */
	}
	old = id->tls;
	id->tls = c->tls;
	c->tls = old; /* released by the caller */
	return 0;
}

IWARP_EXPORT int iwarp_cm_set_tls(struct iwarp_cm_id *pub,
				  const struct iwarp_tls_attr *attr)
{
	struct io_tls_cfg cfg;
	struct cm_call c;
	int err;

	if (!pub || (attr && attr->comp_mask))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	if (attr) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.cert_file = attr->cert_file;
		cfg.key_file = attr->key_file;
		cfg.ca_file = attr->ca_file;
		cfg.psk_file = attr->psk_file;
		cfg.psk_identity = attr->psk_identity;
		cfg.peer_name = attr->peer_name;
		cfg.require_peer_cert = attr->require_peer_cert != 0;
		c.tls = io_tls_ctx_create(&cfg);
		if (!c.tls)
			return errno ? -errno : -EINVAL;
	}
	err = cm_call(cm_id_from_pub(pub), &c, op_set_tls);
	io_tls_ctx_unref(c.tls); /* the old one, or the new one on failure */
	return err;
}

/* Links the new QP c->qp to the id (engine thread, cm_link_lock held). */
static int op_link(struct cm_call *c)
{
	struct cm_id *id = c->id;

	if (id->pub.qp || id->state == CM_S_DEAD)
		return -EINVAL;
	qp_from_pub(c->qp)->cm_id = &id->pub;
	id->pub.qp = c->qp;
	return 0;
}

IWARP_EXPORT int iwarp_cm_create_qp(struct iwarp_cm_id *pub,
				    struct iwarp_pd *pd,
				    struct iwarp_qp_init_attr *attr)
{
	struct iwarp_qp_attr qa;
	struct iwarp_qp *qp;
	struct cm_call c;
	int err;

	if (!pub || !pd || !attr || pub->qp || pd->context != pub->verbs)
		return -EINVAL;
	qp = iwarp_create_qp(pd, attr);
	if (!qp)
		return errno ? -errno : -ENOMEM;
	/* rdma_create_qp: INIT, remote access as the iWARP CM sets it */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IWARP_QPS_INIT;
	qa.qp_access_flags =
		IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_REMOTE_ATOMIC;
	err = iwarp_modify_qp(qp, &qa, IWARP_QP_STATE | IWARP_QP_ACCESS_FLAGS);
	if (err) {
		iwarp_destroy_qp(qp);
		return err;
	}
	memset(&c, 0, sizeof(c));
	c.qp = qp;
	pthread_mutex_lock(&cm_link_lock);
	err = cm_call_here(cm_id_from_pub(pub), &c, op_link);
	pthread_mutex_unlock(&cm_link_lock);
	if (err)
		iwarp_destroy_qp(qp);
	return err;
}

static int op_unlink_qp(struct cm_call *c)
{
	struct cm_id *id = c->id;

	/*
	 * The QP goes away: its datapath first (no on_close follows, it no
	 * longer touches the QP). A connection attempt still in flight finds
	 * no QP when it hands over and fails with CONNECT_ERROR.
	 */
	cm_disc_release(id); /* its completions go with the QP */
	if (id->conn) {
		engine_timer_cancel(id->eng, &id->reap);
		engine_timer_cancel(id->eng, &id->txopen);
		qp_conn_destroy(id->conn);
		id->conn = NULL;
		if (id->state == CM_S_ESTABLISHED)
			id->state = CM_S_CLOSED;
	}
	cm_unlink(id);
	return 0;
}

void cm_qp_unlink(struct iw_qp *qp)
{
	struct cm_call c;

	pthread_mutex_lock(&cm_link_lock);
	if (qp->cm_id) {
		memset(&c, 0, sizeof(c));
		cm_call(cm_id_from_pub(qp->cm_id), &c, op_unlink_qp);
	}
	pthread_mutex_unlock(&cm_link_lock);
}

IWARP_EXPORT void iwarp_cm_destroy_qp(struct iwarp_cm_id *pub)
{
	struct iwarp_qp *qp;
	struct cm_call c;

	if (!pub)
		return;
	pthread_mutex_lock(&cm_link_lock);
	qp = pub->qp;
	if (qp) {
		memset(&c, 0, sizeof(c));
		cm_call(cm_id_from_pub(pub), &c, op_unlink_qp);
	}
	pthread_mutex_unlock(&cm_link_lock);
	if (qp)
		iwarp_destroy_qp(qp); /* unlinked: cm_qp_unlink is a no-op */
}

/* Connect up to the TCP connect: checks, IRD/ORD, the MPA Request. */
static int connect_prepare(struct cm_call *c)
{
	struct cm_id *id = c->id;

	if (id->tls && !io_tls_ctx_can_connect(id->tls))
		return -EINVAL; /* nothing to authenticate the server with */
	id->conn_ird = (uint8_t)c->a;
	id->conn_ord = (uint8_t)c->b;
	return cm_conn_connect_prepare(id, c->pd, c->len);
}

static int op_connect(struct cm_call *c)
{
	int err = connect_prepare(c);

	return err ? err : cm_conn_connect_start(c->id);
}

/* The TCP connect of iwarp_cm_connect (engine thread). */
static void cm_connect_start_run(void *arg)
{
	struct cm_id *id = arg;
	int err;

	err = cm_conn_connect_start(id);
	if (err) {
		cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR, err, NULL,
			      0, 0, 0);
		id->state = CM_S_CLOSED;
	}
}

IWARP_EXPORT int iwarp_cm_connect(struct iwarp_cm_id *pub,
				  const struct iwarp_conn_param *param)
{
	struct cm_id *id;
	struct cm_call c;
	int rc;

	if (!pub || !pub->qp)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	if (param) {
		if (param->private_data_len && !param->private_data)
			return -EINVAL;
		c.pd = param->private_data;
		c.len = param->private_data_len;
		c.a = param->responder_resources; /* IRD */
		c.b = param->initiator_depth;	  /* ORD */
	} else {
		/* librdmacm: no param = the device's limits */
		c.a = IW_MAX_IRD_ORD;
		c.b = IW_MAX_IRD_ORD;
	}
	if (((const struct sockaddr *)&pub->dst_addr)->sa_family == AF_INET
		    ? !((const struct sockaddr_in *)&pub->dst_addr)->sin_port
		    : !((const struct sockaddr_in6 *)&pub->dst_addr)->sin6_port)
		return -EINVAL;
	id = cm_id_from_pub(pub);
	if (!id->engine_owned) {
		/*
		 * rdma_connect(3) returns once the request is on its way; its
		 * outcome comes as an event. Checked and framed here (the
		 * engine has never seen the id, cm_call_here), the TCP
		 * connect starts on the engine without the caller waiting
		 * for it (engine_work_here_or_queue); should it fail to
		 * start, CONNECT_ERROR says so.
		 */
		c.id = id;
		rc = connect_prepare(&c);
		if (rc)
			return rc;
		id->engine_owned = true;
		engine_work_init(&id->connect_work, cm_connect_start_run, id);
		engine_work_here_or_queue(id->eng, &id->connect_work);
		return 0;
	}
	return cm_call_setup(id, &c, op_connect);
}

static int op_accept(struct cm_call *c)
{
	return cm_conn_accept(c->id, c->pd, c->len, c->a, c->b);
}

IWARP_EXPORT int iwarp_cm_accept(struct iwarp_cm_id *pub,
				 const struct iwarp_conn_param *param)
{
	struct cm_call c;

	if (!pub || !pub->qp)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.a = c.b = -1; /* NULL: the values reported with CONNECT_REQUEST */
	if (param) {
		if (param->private_data_len && !param->private_data)
			return -EINVAL;
		c.pd = param->private_data;
		c.len = param->private_data_len;
		c.a = param->responder_resources;
		c.b = param->initiator_depth;
	}
	return cm_call_setup(cm_id_from_pub(pub), &c, op_accept);
}

static int op_reject(struct cm_call *c)
{
	return cm_conn_reject(c->id, c->pd, c->len);
}

IWARP_EXPORT int iwarp_cm_reject(struct iwarp_cm_id *pub,
				 const void *private_data,
				 uint8_t private_data_len)
{
	struct cm_call c;

	if (!pub || (private_data_len && !private_data))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.pd = private_data;
	c.len = private_data_len;
	return cm_call(cm_id_from_pub(pub), &c, op_reject);
}

static int op_disconnect(struct cm_call *c)
{
	return cm_conn_disconnect(c->id);
}

IWARP_EXPORT int iwarp_cm_disconnect(struct iwarp_cm_id *pub)
{
	struct iwarp_qp_attr qa;
	struct cm_call c;
	int rc;

	if (!pub)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	rc = cm_call(cm_id_from_pub(pub), &c, op_disconnect);
	if (rc == 1 && pub->qp) {
		/* librdmacm: the QP goes to ERR; the datapath sends our FIN */
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IWARP_QPS_ERR;
		rc = iwarp_modify_qp(pub->qp, &qa, IWARP_QP_STATE);
	}
	return rc < 0 ? rc : 0;
}

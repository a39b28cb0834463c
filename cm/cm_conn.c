/*
 * cm/cm_conn.c: the engine side of the connection manager: TCP listen and
 * connect, the MPA Request/Reply exchange over an endpoint (cm_mpa.c does
 * the protocol), deadlines, and the hand-over of the stream to the QP
 * datapath (verbs/qp_conn.h) once MPA is negotiated. Engine thread only.
 *
 * Events this file raises (see iwarp_cm_get_event(3)):
 *   initiator: REJECTED (TCP connect refused: status -ECONNREFUSED or
 *     -ECONNRESET; R=1 Reply: IWARP_ERR_MPA_REJECTED + the peer's private
 *     data), UNREACHABLE (TCP connect failed otherwise: status -errno,
 *     e.g. -ETIMEDOUT, -ENETUNREACH, -EHOSTUNREACH), CONNECT_ERROR
 *     (negotiation error: the IWARP_ERR_MPA_* code,
 *     after a TERMINATE LLP/MPA for a well-formed Reply; stream lost:
 *     -ECONNRESET or -errno, Reply deadline: -ETIMEDOUT), ESTABLISHED (QP
 *     in RTS, the Reply's private data, negotiated IRD/ORD);
 *   responder: CONNECT_REQUEST (new child id, the Request's private data,
 *     responder_resources = the IRD the peer needs = min(peer ORD, 128),
 *     initiator_depth = the ORD it allows = min(peer IRD, 128)),
 *     ESTABLISHED (after the accepting Reply was sent; in RFC 6581 P2P mode
 *     after the initiator's RTR FPDU arrived), CONNECT_ERROR (the stream
 *     failed during accept, the RTR did not come in time: -ETIMEDOUT, the
 *     first FPDU was not the negotiated RTR: IWARP_ERR_MPA_RTR after a
 *     TERMINATE LLP/MPA 0x07, or it was the peer's Terminate:
 *     -ECONNABORTED);
 *   both: DISCONNECTED (the datapath ended: status 0 for an orderly close,
 *     else the error), then TIMEWAIT_EXIT once the stream is released.
 * A hidden child (Request not yet complete) raises nothing: a silent peer,
 * a peer closing mid-Request or a bad Request just frees it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <unistd.h>

#include "cm/cm_int.h"
#include "cm/cm_mpa_term.h"
#include "io/backend.h"
#include "io/ep.h"
#include "io/net.h"
#include "io/tls.h"
#include "util/log.h"
#include "util/mem.h"
#include "verbs/qp_conn.h"
#include "verbs/verbs.h"

static const struct ep_ops cm_ep_ops;

uint64_t cm_now_ms(void)
{
	return engine_now_ns() / 1000000u;
}

static socklen_t cm_addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

static void cm_timer_cb(void *arg);
static void cm_reap_cb(void *arg);

/* Arms the id's timer |ms| from now. */
static void cm_timer_arm(struct cm_id *id, uint64_t ms)
{
	engine_timer_start(id->eng, &id->timer, ms, cm_timer_cb, id);
}

/* Arms the timer at the MPA deadline (none: disarm). */
static void cm_timer_deadline(struct cm_id *id)
{
	uint64_t dl = cm_mpa_deadline(id->mpa), now = cm_now_ms();

	if (!dl) {
		engine_timer_cancel(id->eng, &id->timer);
		return;
	}
	cm_timer_arm(id, dl > now ? dl - now : 0);
}

/* Releases the CM's endpoint (RST unless our FIN went out). */
static void cm_ep_release(struct cm_id *id)
{
	if (id->ep) {
		ep_close(id->ep);
		id->ep = NULL;
	}
}

static void cm_mpa_free(struct cm_id *id)
{
	iw_free(id->mpa);
	id->mpa = NULL;
}

/*
 * Gives up the endpoint and the handshake state together. The state holds
 * every buffer the endpoint's receive and send may still be using (the
 * ring's cancellation is asynchronous, a direct socket's pending receive
 * still reads), so it is freed once the endpoint has drained.
 */
static void cm_ep_mpa_release(struct cm_id *id)
{
	if (id->ep && id->mpa) {
		ep_close_then(id->ep, iw_free, id->mpa);
		id->ep = NULL;
		id->mpa = NULL;
		return;
	}
	cm_ep_release(id);
	cm_mpa_free(id);
}

/*
 * A listener's pending list and counters: its hidden children may run on
 * other engines than the listener (cm_on_accept hands accepted sockets
 * round-robin to the context's engines), so both are used under this lock.
 */
static pthread_mutex_t cm_pend_lock = PTHREAD_MUTEX_INITIALIZER;

/* Unlinks hidden child |c| from its listener's list (cm_pend_lock held). */
static void cm_pending_unlink(struct cm_id *c)
{
	struct cm_id *l = c->parent;

	if (c->p_prev)
		c->p_prev->p_next = c->p_next;
	else if (l->pending == c)
		l->pending = c->p_next;
	if (c->p_next)
		c->p_next->p_prev = c->p_prev;
	l->lstats.pending--;
	c->p_prev = c->p_next = NULL;
	c->parent = NULL;
}

/* Unlinks a hidden child from its listener's pending list. */
static void cm_pending_del(struct cm_id *c)
{
	if (!c->parent)
		return;
	pthread_mutex_lock(&cm_pend_lock);
	cm_pending_unlink(c);
	pthread_mutex_unlock(&cm_pend_lock);
}

void cm_conn_free_children(struct cm_id *l, struct engine *eng)
{
	struct cm_id *c;

	for (;;) {
		pthread_mutex_lock(&cm_pend_lock);
		for (c = l->pending; c && c->eng != eng; c = c->p_next)
			;
		pthread_mutex_unlock(&cm_pend_lock);
		if (!c)
			return;
		/* only this thread frees the children it runs */
		cm_conn_free_child(c);
	}
}

void cm_conn_lock_pending(bool lock)
{
	if (lock)
		pthread_mutex_lock(&cm_pend_lock);
	else
		pthread_mutex_unlock(&cm_pend_lock);
}

void cm_conn_teardown(struct cm_id *id)
{
	engine_timer_cancel(id->eng, &id->timer);
	engine_timer_cancel(id->eng, &id->reap);
	engine_timer_cancel(id->eng, &id->txopen);
	cm_disc_cancel(id);
	if (id->lst) {
		engine_listener_close(id->lst);
		id->lst = NULL;
	}
	cm_conn_free_children(id, id->eng); /* the others: cm_id.c */
	if (id->creq) {
		engine_connect_cancel(id->creq);
		id->creq = NULL;
	}
	cm_ep_mpa_release(id);
	if (id->sock_held) {
		close(id->sock);
		id->sock_held = false;
	}
	if (id->conn) {
		qp_conn_destroy(id->conn);
		id->conn = NULL;
	}
	cm_mpa_free(id);
	cm_pending_del(id);
	io_tls_ctx_unref(id->tls);
	id->tls = NULL;
	id->state = CM_S_DEAD;
}

void cm_conn_free_child(struct cm_id *child)
{
	cm_conn_teardown(child);
	iw_free(child);
}

/* The connection attempt is over without a datapath: drop everything. */
static void cm_abort(struct cm_id *id)
{
	engine_timer_cancel(id->eng, &id->timer);
	cm_ep_mpa_release(id);
	if (id->parent) {
		cm_conn_free_child(id); /* hidden: nobody knows it */
		return;
	}
	id->state = CM_S_CLOSED;
}

/*
 * Orderly close after a Reject (sent or received) or a negotiation error:
 * FIN after what is queued (the R=1 Reply), then wait for the peer's FIN
 * (input discarded) at most CM_LINGER_MS.
 */
static void cm_close_orderly(struct cm_id *id)
{
	id->state = CM_S_CLOSING;
	ep_shutdown(id->ep);
	ep_kick_tx(id->ep);
	ep_kick_rx(id->ep);
	cm_timer_arm(id, CM_LINGER_MS);
}

/* ---- hand-over to the datapath ---- */

static void cm_dp_on_close(void *arg, int err,
			   const struct iwarp_term_cause *cause)
{
	struct cm_id *id = arg;

	(void)cause; /* the QP's async event and qp->term carry it */
	id->conn_closed = true;
	if (id->state == CM_S_ESTABLISHED)
		cm_disc_on_close(id, err);
	/* qp_conn_destroy may not run inside this callback */
	engine_timer_start(id->eng, &id->reap, 0, cm_reap_cb, id);
}

static void cm_reap_cb(void *arg)
{
	struct cm_id *id = arg;

	engine_timer_cancel(id->eng, &id->txopen);
	if (id->conn) {
		qp_conn_destroy(id->conn);
		id->conn = NULL;
	}
	if (id->state == CM_S_ESTABLISHED && !cm_disc_reaped(id)) {
		id->state = CM_S_CLOSED;
		cm_event_push(id, NULL, IWARP_CM_EVENT_TIMEWAIT_EXIT, 0, NULL,
			      0, 0, 0);
	}
}

/*
 * Responder without an RFC 6581 RTR (a rev 1 exchange, or an initiator
 * that did not ask for peer-to-peer, as Linux siw never does): RFC 5044
 * §7.1 wants it to send nothing before the initiator's first FPDU. Linux
 * siw never waits, and applications written for it (a server that Sends
 * right after ESTABLISHED, perftest's ib_write_lat server) deadlock against
 * a responder that obeys. So (docs/message-order.md): with
 * responder_tx_wait_ms > 0 (default 1000) we transmit once that long has
 * passed without a first FPDU; with 0 we keep waiting. Either way work
 * held back that long is never silent: a debug log line and
 * IWARP_EVENT_QP_TX_HELD, once a connection.
 */
#define CM_TX_HELD_BOUND_MS 1000 /* report bound when waiting forever */
#define CM_TX_HELD_POLL_MS  250	 /* recheck period when waiting forever */

static void cm_tx_held_report(struct cm_id *id, uint64_t waited_ms)
{
	struct iwarp_async_event ev;

	if (id->held_reported || !id->pub.qp)
		return;
	id->held_reported = true;
	iw_log("qp %u: responder send held %llu ms: the initiator has sent no "
	       "FPDU and no RFC 6581 RTR was negotiated (RFC 5044 §7.1); %s",
	       id->pub.qp->qp_num, (unsigned long long)waited_ms,
	       id->resp_wait_ms > 0 ? "sending anyway (responder_tx_wait_ms)"
				    : "still waiting (responder_tx_wait_ms 0)");
	memset(&ev, 0, sizeof(ev));
	ev.element.qp = id->pub.qp;
	ev.event_type = IWARP_EVENT_QP_TX_HELD;
	ctx_async_push(id->pub.verbs, &ev);
}

static void cm_txopen_cb(void *arg)
{
	struct cm_id *id = arg;
	uint64_t now;

	if (!id->conn || id->state != CM_S_ESTABLISHED)
		return;
	if (id->resp_wait_ms > 0) {
		if (qp_conn_tx_held(id->conn))
			cm_tx_held_report(id, (uint64_t)id->resp_wait_ms);
		qp_conn_tx_open(id->conn);
		return;
	}
	/* waiting however long: say so once work has waited the bound */
	if (!qp_conn_tx_held(id->conn)) {
		id->held_since_ms = 0;
		if (qp_conn_tx_waiting(id->conn))
			engine_timer_start(id->eng, &id->txopen,
					   CM_TX_HELD_POLL_MS, cm_txopen_cb,
					   id);
		return;
	}
	now = cm_now_ms();
	if (!id->held_since_ms)
		id->held_since_ms = now;
	if (now - id->held_since_ms >= CM_TX_HELD_BOUND_MS) {
		cm_tx_held_report(id, now - id->held_since_ms);
		return;
	}
	engine_timer_start(id->eng, &id->txopen, CM_TX_HELD_POLL_MS,
			   cm_txopen_cb, id);
}

/*
 * Creates the QP datapath with the negotiated result and gives it the
 * endpoint plus the octets received past the peer's MPA frame (RFC 5044
 * §7.1: they are the first FPDU). The QP moves to RTS; ESTABLISHED follows.
 * Only while the endpoint has no I/O outstanding (io/ep.h ep_set_owner).
 */
static void cm_handoff(struct cm_id *id)
{
	struct cm_mpa *m = id->mpa;
	bool initiator = m->role == CM_MPA_INITIATOR;
	const uint8_t *carry, *pd = NULL;
	size_t clen, pdlen = 0;
	struct qp_conn *conn;
	int err;

	if (!ep_idle(id->ep)) {
		/* a send or receive still in flight: retry shortly */
		cm_timer_arm(id, 1);
		return;
	}
	if (!id->pub.qp) {
		err = -EINVAL;
		goto fail;
	}
	conn = qp_conn_create(qp_from_pub(id->pub.qp), &m->res, initiator,
			      cm_ctx_fpdu_max(id->pub.verbs), cm_dp_on_close,
			      id);
	if (!conn) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	carry = cm_mpa_carry(m, &clen);
	err = qp_conn_attach_ep(conn, id->ep, carry, clen);
	if (err) {
		qp_conn_destroy(conn);
		goto fail;
	}
	engine_timer_cancel(id->eng, &id->timer);
	id->ep = NULL; /* the datapath owns it now */
	id->conn = conn;
	id->state = CM_S_ESTABLISHED;
	if (!initiator && !m->res.p2p) {
		/* RFC 5044 §7.1 without an RFC 6581 RTR: see cm_txopen_cb */
		iw_log("qp %u: responder without RTR (MPA rev %u%s): first "
		       "FPDU from the initiator awaited, %s",
		       id->pub.qp->qp_num, (unsigned int)m->res.rev,
		       m->res.enhanced ? ", peer did not ask for peer-to-peer"
				       : "",
		       id->resp_wait_ms > 0 ? "bounded by responder_tx_wait_ms"
					    : "without bound");
		id->held_since_ms = 0;
		id->held_reported = false;
		engine_timer_start(id->eng, &id->txopen,
				   id->resp_wait_ms > 0
					   ? (uint64_t)id->resp_wait_ms
					   : CM_TX_HELD_POLL_MS,
				   cm_txopen_cb, id);
	}
	if (initiator)
		pd = cm_mpa_peer_pdata(m, &pdlen);
	cm_event_push(id, NULL, IWARP_CM_EVENT_ESTABLISHED, 0, pd, pdlen,
		      (uint8_t)(m->res.ird > 255 ? 255 : m->res.ird),
		      (uint8_t)(m->res.ord > 255 ? 255 : m->res.ord));
	cm_mpa_free(id);
	return;

fail:
	cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR, err, NULL, 0, 0,
		      0);
	cm_abort(id);
}

/*
 * Responder in RFC 6581 P2P mode (CM_S_RTR_WAIT): judges what arrived of
 * the initiator's first FPDU (cm_mpa_rtr_check). The negotiated RTR, whole
 * (RFC 6581 §7): hand over, ESTABLISHED follows. Any other first FPDU:
 * TERMINATE LLP/MPA 0x07 "no matching RTR option" (RFC 6581 §6),
 * CONNECT_ERROR with IWARP_ERR_MPA_RTR and an orderly
 * close; a Terminate from the peer is not answered (RFC 5040 §4.8):
 * CONNECT_ERROR -ECONNABORTED. Returns true when the wait is over.
 */
static bool cm_rtr_rx(struct cm_id *id)
{
	struct cm_mpa *m = id->mpa;
	int rc = cm_mpa_rtr_check(m), err = rc;

	switch (rc) {
	case CM_MPA_NEED_MORE:
		return false;
	case CM_MPA_DONE:
		cm_handoff(id);
		return true;
	case CM_MPA_RTR_PEER_TERM:
		err = -ECONNABORTED;
		break;
	case IWARP_ERR_MPA_RTR:
		cm_mpa_term_queue(m, IWARP_LLP_ECODE_NO_MATCHING_RTR,
				  m->res.crc, m->res.markers_tx);
		break;
	default:
		break;
	}
	cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR, err, NULL, 0, 0,
		      0);
	cm_close_orderly(id); /* the TERMINATE (if any), then FIN */
	return true;
}

/* ---- endpoint callbacks during the MPA exchange ---- */

static int cm_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct cm_id *id = owner;
	uint8_t *buf;
	size_t room;

	(void)cap;
	switch (id->state) {
	case CM_S_MPA_REQ_SENT:
	case CM_S_MPA_WAIT_REQ:
	case CM_S_RTR_WAIT:
		room = cm_mpa_rx_space(id->mpa, &buf);
		if (!room)
			return 0;
		iov[0].iov_base = buf;
		iov[0].iov_len = room;
		return 1;
	case CM_S_CLOSING:
		if (!id->mpa)
			return 0; /* the linger timer closes it */
		iov[0].iov_base = id->mpa->sink;
		iov[0].iov_len = sizeof(id->mpa->sink);
		return 1;
	case CM_S_IDLE:
	case CM_S_BOUND:
	case CM_S_ADDR_RESOLVED:
	case CM_S_ROUTE_RESOLVED:
	case CM_S_LISTEN:
	case CM_S_CONNECTING:
	case CM_S_GRACE:
	case CM_S_CONN_REQ:
	case CM_S_ACCEPTING:
	case CM_S_ESTABLISHED:
	case CM_S_CLOSED:
	case CM_S_DEAD:
	default:
		return 0; /* paused: the bytes wait in the socket */
	}
}

/*
 * The initiator's pause after a good Reply (see cm_initiator_rx): the
 * configured grace_ms, stretched to the time the responder took to answer
 * our Request (capped at 1 s); 0 when the grace is off.
 */
static uint64_t cm_grace_ms(const struct cm_id *id)
{
	uint64_t g = (uint64_t)id->grace_ms, now = cm_now_ms(), rtt;

	if (!g)
		return 0;
	rtt = now > id->req_sent_ms ? now - id->req_sent_ms : 0;
	if (rtt > 1000)
		rtt = 1000;
	return rtt > g ? rtt : g;
}

/* Initiator: the Reply arrived (or failed). */
static void cm_initiator_rx(struct cm_id *id, int rc)
{
	const uint8_t *pd;
	size_t len;

	if (rc == CM_MPA_NEED_MORE)
		return;
	if (rc == CM_MPA_DONE) {
		/*
		 * The siw race (docs/interop-notes.md §10, "Race on the
		 * responder side"): siw sends its Reply before it moves the
		 * socket to its RDMA receive path, and an FPDU arriving in that
		 * window (seen once under emulation, ~6 ms) stayed unread until
		 * more data came; a ULP that sends one message and waits
		 * (rping) then stalls. RFC 5044 §7.1 lets the initiator send
		 * its first FPDU at any time after the Reply, so we wait
		 * |grace_ms| before handing the stream to the datapath: the
		 * first FPDU (or the RFC 6581 RTR) goes out after that, and
		 * ESTABLISHED (hence the ULP's first post) comes with it.
		 * Nothing is sent that the RFCs do not ask for. ESTABLISHED
		 * must not come earlier with only the transmit held: the ULP
		 * then tells its peer over another connection that it is
		 * ready, and siw's responder writes before our RTR
		 * (tests/interop/README.md).
		 * mpa_reply_grace_ms = 0 turns it off. The window is siw's own
		 * work after its Reply, so it grows with a slow peer (under
		 * emulation and load a Request took 66 ms to answer, and an RTR
		 * 10 ms after the Reply reached siw in peer_to_peer mode while
		 * it was still accepting: the guest kernel hit BUG_ON in
		 * iw_cm's established handler). The wait is therefore at least
		 * the time the peer took to answer our Request, up to 1 s.
		 */
		id->state = CM_S_GRACE;
		cm_timer_arm(id, cm_grace_ms(id));
		return;
	}
	if (rc == IWARP_ERR_MPA_REJECTED) {
		engine_timer_cancel(id->eng, &id->timer);
		pd = cm_mpa_peer_pdata(id->mpa, &len);
		cm_event_push(id, NULL, IWARP_CM_EVENT_REJECTED, rc, pd, len, 0,
			      0);
		cm_close_orderly(id);
		return;
	}
	/*
	 * RFC 5044 §7.1 / RFC 6581 §6: a Reply we cannot use ends the stream.
	 * Having received a well-formed Reply we are in FPDU mode, so the
	 * reason goes out first as a TERMINATE LLP/MPA (0x04 invalid Reply,
	 * 0x06 insufficient IRD, 0x07 no matching RTR), as siw does; not for
	 * bytes that are no MPA frame (cm_mpa_term.h).
	 */
	cm_mpa_reply_term(id->mpa);
	cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR, rc, NULL, 0, 0,
		      0);
	cm_close_orderly(id); /* the TERMINATE (if any), then FIN */
}

/* Makes a hidden child visible: CONNECT_REQUEST to the listener's channel. */
static void cm_publish_child(struct cm_id *c)
{
	struct cm_id *l = c->parent;
	const struct cm_mpa *m = c->mpa;
	const uint8_t *pd;
	size_t len;
	int rc;

	pd = cm_mpa_peer_pdata(m, &len);
	/*
	 * rdma_cm's iWARP mapping: responder_resources is the IRD the peer's
	 * ORD needs, initiator_depth the ORD its IRD allows (RFC 6581 §5),
	 * both capped at our limit; passing them to accept (or accept NULL)
	 * answers with exactly those. The application cannot act on the
	 * event before this callback returned (its calls run on this
	 * thread), so the child is completed below.
	 */
	/* a migration of the listener (op_migrate, on the listener's
	 * engine) sees the child either hidden or published on its channel */
	pthread_mutex_lock(&cm_pend_lock);
	rc = cm_event_push(c, l, IWARP_CM_EVENT_CONNECT_REQUEST, 0, pd, len,
			   (uint8_t)m->res.ird, (uint8_t)m->res.ord);
	if (rc) {
		pthread_mutex_unlock(&cm_pend_lock);
		cm_abort(c); /* no memory for the event: still hidden */
		return;
	}
	cm_pending_unlink(c);
	c->state = CM_S_CONN_REQ;
	if (l->default_ctx) {
		cm_ctx_ref_default();
		c->default_ctx = true;
	}
	cm_channel_add_id(c);
	pthread_mutex_unlock(&cm_pend_lock);
}

/* Responder: the Request arrived (or failed). */
static void cm_responder_rx(struct cm_id *id, int rc)
{
	const uint8_t *p;

	if (rc == CM_MPA_NEED_MORE)
		return;
	engine_timer_cancel(id->eng, &id->timer);
	if (rc == CM_MPA_DONE) {
		cm_publish_child(id);
		return;
	}
	if (cm_mpa_tx_peek(id->mpa, &p)) {
		/* refused with an R=1 Reply (RFC 5044 §7.1, RFC 6581 §9) */
		cm_close_orderly(id);
		return;
	}
	cm_abort(id); /* not MPA (bad key, rev): close, no Reply */
}

static void cm_rx_done(void *owner, size_t n)
{
	struct cm_id *id = owner;

	switch (id->state) {
	case CM_S_MPA_REQ_SENT:
		cm_initiator_rx(id, cm_mpa_rx_done(id->mpa, n));
		break;
	case CM_S_MPA_WAIT_REQ:
		cm_responder_rx(id, cm_mpa_rx_done(id->mpa, n));
		break;
	case CM_S_RTR_WAIT:
		cm_mpa_rx_done(id->mpa, n);
		cm_rtr_rx(id);
		break;
	case CM_S_IDLE:
	case CM_S_BOUND:
	case CM_S_ADDR_RESOLVED:
	case CM_S_ROUTE_RESOLVED:
	case CM_S_LISTEN:
	case CM_S_CONNECTING:
	case CM_S_GRACE:
	case CM_S_CONN_REQ:
	case CM_S_ACCEPTING:
	case CM_S_ESTABLISHED:
	case CM_S_CLOSING:
	case CM_S_CLOSED:
	case CM_S_DEAD:
	default:
		break; /* CLOSING: discarded */
	}
}

static int cm_tx_iov(void *owner, struct iovec *iov, int cap)
{
	struct cm_id *id = owner;
	const uint8_t *buf;
	size_t len;

	(void)cap;
	if (!id->mpa)
		return 0;
	len = cm_mpa_tx_peek(id->mpa, &buf);
	if (!len)
		return 0;
	iov[0].iov_base = (void *)(uintptr_t)buf;
	iov[0].iov_len = len;
	return 1;
}

static void cm_tx_done(void *owner, size_t n)
{
	struct cm_id *id = owner;
	const uint8_t *p;

	if (!id->mpa)
		return;
	cm_mpa_tx_done(id->mpa, n);
	if (id->state != CM_S_ACCEPTING || cm_mpa_tx_peek(id->mpa, &p))
		return;
	/* the accepting Reply is out */
	if (id->mpa->res.p2p) {
		/* RFC 6581 §7: ESTABLISHED once the initiator's RTR is in */
		id->state = CM_S_RTR_WAIT;
		id->mpa->deadline_ms =
			cm_now_ms() + id->pub.verbs->attr.mpa_rep_timeout_ms;
		cm_timer_deadline(id);
		if (!cm_rtr_rx(id))
			ep_kick_rx(id->ep);
		return;
	}
	cm_handoff(id);
}

static void cm_closed(void *owner, int err)
{
	struct cm_id *id = owner;

	switch (id->state) {
	case CM_S_MPA_REQ_SENT:
	case CM_S_GRACE:
	case CM_S_ACCEPTING:
	case CM_S_RTR_WAIT:
		cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR,
			      err ? err : -ECONNRESET, NULL, 0, 0, 0);
		cm_abort(id);
		break;
	case CM_S_MPA_WAIT_REQ:
	case CM_S_CLOSING:
		cm_abort(id); /* hidden child freed; else CLOSED */
		break;
	case CM_S_CONN_REQ:
		/* the application still has to answer; accept will fail */
		engine_timer_cancel(id->eng, &id->timer);
		cm_ep_release(id);
		id->state = CM_S_CLOSED;
		break;
	case CM_S_IDLE:
	case CM_S_BOUND:
	case CM_S_ADDR_RESOLVED:
	case CM_S_ROUTE_RESOLVED:
	case CM_S_LISTEN:
	case CM_S_CONNECTING:
	case CM_S_ESTABLISHED:
	case CM_S_CLOSED:
	case CM_S_DEAD:
	default:
		cm_ep_release(id);
		break;
	}
}

static const struct ep_ops cm_ep_ops = {
	.rx_iov = cm_rx_iov,
	.rx_done = cm_rx_done,
	.tx_iov = cm_tx_iov,
	.tx_done = cm_tx_done,
	.closed = cm_closed,
};

static void cm_timer_cb(void *arg)
{
	struct cm_id *id = arg;
	int rc;

	switch (id->state) {
	case CM_S_MPA_REQ_SENT:
	case CM_S_MPA_WAIT_REQ:
		rc = cm_mpa_timeout(id->mpa, cm_now_ms());
		if (!rc) {
			cm_timer_deadline(id); /* early: wait on */
			return;
		}
		if (id->state == CM_S_MPA_REQ_SENT)
			cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR,
				      rc, NULL, 0, 0, 0);
		cm_abort(id); /* RST: the peer broke the exchange */
		break;
	case CM_S_GRACE:
		cm_handoff(id);
		break;
	case CM_S_RTR_WAIT:
		/* cm_handoff's retry (endpoint busy) comes here too: the RTR
		 * is in, hand over instead of waiting for the deadline */
		if (cm_rtr_rx(id))
			return;
		if (cm_now_ms() < id->mpa->deadline_ms) {
			cm_timer_deadline(id);
			return;
		}
		cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR,
			      -ETIMEDOUT, NULL, 0, 0, 0);
		cm_abort(id);
		break;
	case CM_S_CLOSING:
		cm_abort(id); /* the peer never sent its FIN */
		break;
	case CM_S_IDLE:
	case CM_S_BOUND:
	case CM_S_ADDR_RESOLVED:
	case CM_S_ROUTE_RESOLVED:
	case CM_S_LISTEN:
	case CM_S_CONNECTING:
	case CM_S_CONN_REQ:
	case CM_S_ACCEPTING:
	case CM_S_ESTABLISHED:
	case CM_S_CLOSED:
	case CM_S_DEAD:
	default:
		break;
	}
}

/*
 * The endpoint of a new TCP connection |fd| (taken): plain, or inside a
 * TLS 1.3 session when the id has credentials, so the MPA Request and
 * everything after it travel only inside TLS. NULL when out of memory
 * (|fd| closed).
 */
static struct endpoint *cm_ep_create(struct cm_id *id, int fd, bool server)
{
	struct io_backend *be;

	if (!id->tls)
		return ep_create_fd(id->eng, fd, &cm_ep_ops, id);
	be = io_sock_backend_create(id->eng, fd);
	if (be)
		be = io_tls_wrap(be, id->tls, server);
	if (!be)
		return NULL;
	return ep_create(id->eng, be, &cm_ep_ops, id);
}

/* ---- listening side ---- */

/* Closes an accepted socket with a reset (SO_LINGER 0): no TIME_WAIT. */
static void cm_fd_reset(int fd)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/* An accepted socket on its way to the engine that will run its child. */
struct cm_handoff {
	struct cm_id *l;
	struct engine *eng;
	struct io_tls_ctx *tls; /* the listener's, referenced: its teardown
				   drops l->tls meanwhile */
	int fd;
	socklen_t peer_len;
	struct sockaddr_storage peer;
};

/*
 * Creates the hidden child of listener |l| for the accepted socket |h->fd|
 * on engine h->eng (this thread), its place in l->pending reserved by
 * cm_on_accept. The listener is alive: its teardown frees the children of
 * each engine after the hand-offs queued to it (cm_id.c). It may be torn
 * down meanwhile on its own engine, so the child takes from it only what
 * never changes, h->tls, and (under cm_pend_lock) its channel and list.
 */
static void cm_child_start(struct cm_handoff *h)
{
	struct cm_id *l = h->l, *c;
	struct mpa_neg_params p;
	socklen_t len;
	uint32_t to;
	int fd = h->fd;

	c = iw_calloc(1, sizeof(*c));
	if (!c)
		goto err_fd;
	c->mpa = iw_malloc(sizeof(*c->mpa));
	if (!c->mpa)
		goto err_free;
	c->pub.verbs = l->pub.verbs;
	c->pub.context = l->pub.context;
	c->pub.ps = l->pub.ps;
	c->eng = h->eng;
	c->engine_owned = true;
	c->grace_ms = l->grace_ms;
	c->resp_wait_ms = l->resp_wait_ms;
	c->disc_hold_ms = l->disc_hold_ms;
	c->tls = h->tls; /* accepted ids inherit the listener's TLS */
	h->tls = NULL;
	engine_timer_init(&c->timer);
	engine_timer_init(&c->reap);
	engine_timer_init(&c->txopen);
	engine_timer_init(&c->dischold);
	if (h->peer_len && h->peer_len <= sizeof(c->pub.dst_addr))
		memcpy(&c->pub.dst_addr, &h->peer, h->peer_len);
	len = sizeof(c->pub.src_addr);
	getsockname(fd, (struct sockaddr *)&c->pub.src_addr, &len);

	cm_ctx_mpa_params(c->pub.verbs, &p);
	/* RFC 6581 §9.2: as responder accept every RTR type we can receive */
	p.p2p = false;
	p.rtr_mask = MPA_RTR_ALL;
	/* a hidden child always has a deadline (0: the default) */
	to = c->pub.verbs->attr.mpa_req_timeout_ms;
	cm_mpa_init(c->mpa, CM_MPA_RESPONDER, &p, cm_now_ms(),
		    to ? to : CM_MPA_REQ_TIMEOUT_DEFAULT_MS);
	c->state = CM_S_MPA_WAIT_REQ;
	c->ep = cm_ep_create(c, fd, true);
	if (!c->ep)
		goto err_mpa; /* fd closed by cm_ep_create */
	c->parent = l;
	pthread_mutex_lock(&cm_pend_lock);
	c->ch = l->ch; /* op_migrate moves it with the listener's */
	c->pub.channel = l->pub.channel;
	c->p_next = l->pending;
	if (l->pending)
		l->pending->p_prev = c;
	l->pending = c;
	pthread_mutex_unlock(&cm_pend_lock);
	cm_timer_deadline(c);
	return;

err_mpa:
	io_tls_ctx_unref(c->tls);
	iw_free(c->mpa);
	iw_free(c);
	goto err_unreserve;
err_free:
	iw_free(c);
err_fd:
	io_tls_ctx_unref(h->tls);
	close(fd);
err_unreserve:
	pthread_mutex_lock(&cm_pend_lock);
	l->lstats.pending--;
	pthread_mutex_unlock(&cm_pend_lock);
}

static void cm_child_handoff_run(void *arg)
{
	struct cm_handoff *h = arg;

	cm_child_start(h);
	iw_free(h);
}

static void cm_on_accept(void *arg, int fd, const struct sockaddr *peer,
			 socklen_t peer_len)
{
	struct cm_id *l = arg;
	struct cm_handoff local, *h = &local;
	bool refuse;

	if (fd < 0 || l->state != CM_S_LISTEN)
		return; /* accepting ended; the listener stays until destroyed
			 */
	pthread_mutex_lock(&cm_pend_lock);
	l->lstats.accepted++;
	/* too many silent peers: reset this one at once */
	refuse = l->lstats.pending >= CM_PENDING_MAX;
	if (refuse)
		l->lstats.refused++;
	else if (++l->lstats.pending > l->lstats.pending_max)
		l->lstats.pending_max = l->lstats.pending;
	pthread_mutex_unlock(&cm_pend_lock);
	if (refuse) {
		cm_fd_reset(fd);
		return;
	}
	/* the child runs on the next engine of the context (round-robin) */
	local.eng = cm_ctx_engine(l->pub.verbs);
	if (local.eng != l->eng) {
		/* no memory: the listener's engine runs the child */
		h = iw_malloc(sizeof(*h));
		if (!h)
			h = &local;
		else
			h->eng = local.eng;
	}
	if (h == &local)
		h->eng = l->eng;
	h->l = l;
	h->tls = l->tls;
	if (h->tls)
		io_tls_ctx_ref(h->tls);
	h->fd = fd;
	h->peer_len = 0;
	if (peer && peer_len <= sizeof(h->peer)) {
		memcpy(&h->peer, peer, peer_len);
		h->peer_len = peer_len;
	}
	if (h == &local) {
		cm_child_start(h);
		return;
	}
	if (engine_call(h->eng, cm_child_handoff_run, h)) {
		h->eng = l->eng;
		cm_child_start(h);
		iw_free(h);
	}
}

int cm_conn_listen(struct cm_id *id, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int err;

	if (!id->sock_held)
		return -EINVAL; /* bind_addr gave every bound id its socket */
	/* the socket bind_addr bound (and its port) starts listening */
	err = engine_listen_fd(id->eng, id->sock, backlog, cm_on_accept, id,
			       &id->lst);
	if (err)
		return err;
	id->sock_held = false; /* the listener's now */
	id->listened = true;
	if (engine_listener_addr(id->lst, &ss, &len) == 0)
		memcpy(&id->pub.src_addr, &ss, len);
	id->state = CM_S_LISTEN;
	return 0;
}

/* ---- active side ---- */

static void cm_on_connected(void *arg, int fd)
{
	struct cm_id *id = arg;
	socklen_t len;

	id->creq = NULL;
	if (fd < 0) {
		/*
		 * As the kernel's iWARP CM reports a failed connect: nobody
		 * listening (the peer's RST answering our SYN: -ECONNREFUSED,
		 * or a reset during the handshake: -ECONNRESET, or -EPIPE
		 * when the peer's FIN came before its RST, as when a listener
		 * closes with our connection still in its backlog) is
		 * REJECTED, like a refusal by the peer's CM; any other failure
		 * (no answer in time, no route) UNREACHABLE.
		 */
		cm_event_push(id, NULL,
			      fd == -ECONNREFUSED || fd == -ECONNRESET ||
					      fd == -EPIPE
				      ? IWARP_CM_EVENT_REJECTED
				      : IWARP_CM_EVENT_UNREACHABLE,
			      fd, NULL, 0, 0, 0);
		cm_mpa_free(id);
		id->state = CM_S_CLOSED;
		return;
	}
	len = sizeof(id->pub.src_addr);
	getsockname(fd, (struct sockaddr *)&id->pub.src_addr, &len);
	id->ep = cm_ep_create(id, fd, false);
	if (!id->ep) {
		cm_event_push(id, NULL, IWARP_CM_EVENT_CONNECT_ERROR, -ENOMEM,
			      NULL, 0, 0, 0);
		cm_mpa_free(id);
		id->state = CM_S_CLOSED;
		return;
	}
	/* RFC 5044 §7.1: the Reply deadline runs from the Request on */
	id->mpa->deadline_ms =
		cm_now_ms() + id->pub.verbs->attr.mpa_rep_timeout_ms;
	id->state = CM_S_MPA_REQ_SENT;
	cm_timer_deadline(id);
}

int cm_conn_connect_prepare(struct cm_id *id, const uint8_t *pd, size_t len)
{
	const struct iwarp_context_attr *a = &id->pub.verbs->attr;
	struct mpa_neg_params p;
	int err;

	switch (id->state) {
	case CM_S_ADDR_RESOLVED:
	case CM_S_ROUTE_RESOLVED:
		break;
	case CM_S_IDLE:
	case CM_S_BOUND:
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
		return -EINVAL;
	}
	cm_ctx_mpa_params(id->pub.verbs, &p);
	p.ird = id->conn_ird > MPA_NEG_IRD_ORD_MAX ? MPA_NEG_IRD_ORD_MAX
						   : id->conn_ird;
	p.ord = id->conn_ord > MPA_NEG_IRD_ORD_MAX ? MPA_NEG_IRD_ORD_MAX
						   : id->conn_ord;
	/*
	 * RFC 6581 §7 (cxgb3 96ac7e88): offering a Read RTR needs ORD >= 1
	 * on the active side, whatever initiator_depth the ULP passed
	 * (perftest gives 0 for Write tests); the responder sizes its IRD
	 * from our ORD and refuses a Read RTR with IRD 0.
	 */
	if (p.p2p && (p.rtr_mask & MPA_RTR_READ) && p.ord == 0)
		p.ord = 1;
	id->mpa = iw_malloc(sizeof(*id->mpa));
	if (!id->mpa)
		return -ENOMEM;
	id->req_sent_ms = cm_now_ms(); /* the Request goes out on connect */
	err = cm_mpa_init(id->mpa, CM_MPA_INITIATOR, &p, id->req_sent_ms, 0);
	if (!err)
		err = cm_mpa_start(id->mpa, pd, len, id->req_sent_ms,
				   a->mpa_rep_timeout_ms);
	if (err)
		goto err_mpa;
	if (!id->sock_held) {
		err = -EINVAL; /* resolve_addr bound every resolved id */
		goto err_mpa;
	}
	id->state = CM_S_CONNECTING;
	return 0;

err_mpa:
	cm_mpa_free(id);
	return err;
}

int cm_conn_connect_start(struct cm_id *id)
{
	const struct iwarp_context_attr *a = &id->pub.verbs->attr;
	int err;

	/* from the socket resolve_addr bound: the port reported since */
	err = engine_connect_fd(
		id->eng, id->sock, (struct sockaddr *)&id->pub.dst_addr,
		cm_addr_len(&id->pub.dst_addr), a->mpa_rep_timeout_ms,
		cm_on_connected, id, &id->creq);
	if (err) {
		id->state = CM_S_ROUTE_RESOLVED;
		cm_mpa_free(id);
		return err;
	}
	id->sock_held = false; /* the connect request's now */
	return 0;
}

/* ---- responder decisions ---- */

int cm_conn_accept(struct cm_id *id, const uint8_t *pd, size_t len, int ird,
		   int ord)
{
	int err;

	if (id->state == CM_S_CLOSED)
		return -ECONNRESET;
	if (id->state != CM_S_CONN_REQ || !id->ep)
		return -EINVAL;
	err = cm_mpa_accept(id->mpa, pd, len, ird, ord);
	if (err)
		return err;
	id->state = CM_S_ACCEPTING;
	ep_kick_tx(id->ep);
	return 0;
}

int cm_conn_reject(struct cm_id *id, const uint8_t *pd, size_t len)
{
	int err;

	if (id->state == CM_S_CLOSED)
		return 0; /* the peer is gone already */
	if (id->state != CM_S_CONN_REQ || !id->ep)
		return -EINVAL;
	err = cm_mpa_reject(id->mpa, pd, len);
	if (err)
		return err;
	cm_close_orderly(id);
	return 0;
}

int cm_conn_disconnect(struct cm_id *id)
{
	switch (id->state) {
	case CM_S_ESTABLISHED:
		/*
		 * The caller moves the QP to ERR (as librdmacm does); the
		 * datapath then ends the connection: orderly FIN after what
		 * was already offered, WRs flushed, on_close(0) raises
		 * DISCONNECTED. The peer's datapath sees our FIN, answers
		 * with its own and raises its DISCONNECTED.
		 */
		if (!id->conn || id->conn_closed)
			return 0;
		id->disc_local = true; /* ours raises at once (cm_disc.c) */
		return 1;
	case CM_S_CONNECTING:
	case CM_S_MPA_REQ_SENT:
	case CM_S_GRACE:
	case CM_S_ACCEPTING:
	case CM_S_RTR_WAIT:
		/* abandon the attempt; the peer sees the stream reset */
		if (id->creq) {
			engine_connect_cancel(id->creq);
			id->creq = NULL;
		}
		cm_abort(id);
		return 0;
	case CM_S_CLOSING:
	case CM_S_CLOSED:
		return 0;
	case CM_S_IDLE:
	case CM_S_BOUND:
	case CM_S_ADDR_RESOLVED:
	case CM_S_ROUTE_RESOLVED:
	case CM_S_LISTEN:
	case CM_S_MPA_WAIT_REQ:
	case CM_S_CONN_REQ:
	case CM_S_DEAD:
	default:
		return -EINVAL;
	}
}

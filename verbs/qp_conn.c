/*
 * verbs/qp_conn.c: binds a QP to its RDMAP engine: struct rdmap_ops over
 * the verbs objects, and the qp_conn_* calls the CM and the engine glue
 * make (verbs/qp_conn.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "util/mem.h"
#include "verbs/qp_conn.h"

/* ---- memory ---- */

static int ops_mem_get(void *owner, uint32_t stag, int access, uint64_t to,
		       uint64_t len, bool tagged_ddp, struct rdmap_mem *out)
{
	struct qp_conn *conn = owner;

	out->ptr = NULL;
	out->ref = 0;
	return mr_get(conn->ctx, stag, conn->pd, access, to, len, tagged_ddp,
		      &out->ptr, &out->ref);
}

static void ops_mem_put(void *owner, uint32_t ref)
{
	struct qp_conn *conn = owner;

	mr_put(conn->ctx, ref);
}

static int ops_mem_check_local(void *owner, const struct iwarp_sge *sge,
			       int access)
{
	struct qp_conn *conn = owner;

	return mr_check_local(conn->ctx, sge, conn->pd, access);
}

static int ops_invalidate(void *owner, uint32_t stag)
{
	struct qp_conn *conn = owner;

	return mr_invalidate(conn->ctx, stag, conn->pd);
}

/*
 * The QP's own access rights (qp_access_flags, set by iwarp_modify_qp; the
 * CM grants remote Read and Write as rdma_create_qp does). RFC 5040 §8: an
 * RNIC checks the access rights of the stream as well as those of the STag.
 */
static bool ops_stream_allows(void *owner, int access)
{
	struct qp_conn *conn = owner;

	return conn->qp &&
	       (__atomic_load_n(&conn->qp->access_flags, __ATOMIC_RELAXED) &
		access) == access;
}

/* ---- receive queue ---- */

static int ops_recv_take(void *owner, struct rdmap_rqe *out)
{
	struct qp_conn *conn = owner;

	if (!conn->qp)
		return -ENOENT;
	return qp_rq_pop(conn->qp, out);
}

static int ops_recv_complete(void *owner, const struct iwarp_wc *wc,
			     bool solicited)
{
	struct qp_conn *conn = owner;
	struct iwarp_wc w = *wc;

	if (!conn->qp)
		return 0;
	w.qp_num = conn->qp->pub.qp_num;
	return cq_push(cq_from_pub(conn->qp->pub.recv_cq), &w, solicited);
}

/* ---- send queue ---- */

static const struct rdmap_wqe *ops_sq_next(void *owner, uint32_t *idx)
{
	struct qp_conn *conn = owner;
	struct iw_qp *qp = conn->qp;
	uint32_t head, next;

	if (!qp ||
	    __atomic_load_n(&qp->pub.state, __ATOMIC_RELAXED) != IWARP_QPS_RTS)
		return NULL;
	head = __atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE);
	next = __atomic_load_n(&qp->sq_next, __ATOMIC_RELAXED);
	if (next == head)
		return NULL;
	*idx = next;
	return qp_sq_wqe(qp, next);
}

static void ops_sq_started(void *owner, uint32_t idx)
{
	struct qp_conn *conn = owner;

	if (conn->qp)
		__atomic_store_n(&conn->qp->sq_next, idx + 1, __ATOMIC_RELEASE);
}

static bool ops_sq_pending(void *owner)
{
	struct qp_conn *conn = owner;

	return conn->qp &&
	       __atomic_load_n(&conn->qp->sq_next, __ATOMIC_RELAXED) !=
		       __atomic_load_n(&conn->qp->sq_head, __ATOMIC_ACQUIRE);
}

static uint32_t ops_sq_oldest(void *owner)
{
	struct qp_conn *conn = owner;

	return conn->qp ? __atomic_load_n(&conn->qp->sq_tail, __ATOMIC_ACQUIRE)
			: 0;
}

static int ops_sq_complete(void *owner, uint32_t upto)
{
	struct qp_conn *conn = owner;

	if (!conn->qp)
		return 0;
	return qp_sq_complete(conn->qp, upto, IWARP_WC_SUCCESS);
}

static int ops_sq_fail_one(void *owner, enum iwarp_wc_status status,
			   uint32_t vendor_err)
{
	struct qp_conn *conn = owner;
	struct iw_qp *qp = conn->qp;
	const struct rdmap_wqe *w;
	struct iwarp_wc wc;

	if (!qp)
		return 0;
	pthread_mutex_lock(&qp->sq_lock);
	if (qp->sq_tail == __atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&qp->sq_lock);
		return 0;
	}
	w = qp_sq_wqe(qp, qp->sq_tail);
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = status;
	wc.opcode = qp_wc_opcode(w->opcode);
	wc.vendor_err = vendor_err;
	wc.qp_num = qp->pub.qp_num;
	__atomic_store_n(&qp->sq_tail, qp->sq_tail + 1, __ATOMIC_RELEASE);
	if ((int32_t)(qp->sq_next - qp->sq_tail) < 0)
		__atomic_store_n(&qp->sq_next, qp->sq_tail, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&qp->sq_lock);
	return cq_push(cq_from_pub(qp->pub.send_cq), &wc, true);
}

/* ---- state ---- */

static void ops_set_error(void *owner, const struct iwarp_term_cause *cause,
			  bool received, bool async)
{
	struct qp_conn *conn = owner;
	struct iw_qp *qp = conn->qp;

	if (!qp)
		return;
	if (received) {
		pthread_mutex_lock(&qp->lock);
		qp->term_received = true;
		pthread_mutex_unlock(&qp->lock);
	}
	qp_set_error(qp, cause, async);
}

static void ops_closed(void *owner, int err,
		       const struct iwarp_term_cause *cause)
{
	struct qp_conn *conn = owner;

	if (conn->on_close)
		conn->on_close(conn->close_arg, err, cause);
}

/* ---- driver ---- */

static void ops_kick_tx(void *owner)
{
	struct qp_conn *conn = owner;

	if (conn->io && conn->io->kick_tx)
		conn->io->kick_tx(conn->io_arg);
}

static void ops_shutdown(void *owner)
{
	struct qp_conn *conn = owner;

	if (conn->io && conn->io->shutdown)
		conn->io->shutdown(conn->io_arg);
}

static void ops_term_queued(void *owner)
{
	struct qp_conn *conn = owner;

	if (conn->io && conn->io->term_queued)
		conn->io->term_queued(conn->io_arg);
}

static void ops_cancel_rx(void *owner)
{
	struct qp_conn *conn = owner;

	if (conn->io && conn->io->cancel_rx)
		conn->io->cancel_rx(conn->io_arg);
}

/*
 * A Send found the RQ empty: the engine may wait for the application to
 * post one (rdmap_conn_set_rx_wait) while the driver times the wait. The
 * flag is set under the QP's lock after the RQ was found empty there, so
 * an iwarp_post_recv either came before (-EAGAIN: take it now) or sees the
 * flag and rings the doorbell (engine_qp_kick, rdmap_conn_rx_resume).
 */
static int ops_rx_wait(void *owner, bool wait)
{
	struct qp_conn *conn = owner;
	struct iw_qp *qp = conn->qp;
	bool posted = false;

	if (!wait) {
		if (qp) {
			pthread_mutex_lock(&qp->lock);
			qp->rx_wait = false;
			pthread_mutex_unlock(&qp->lock);
		}
		if (conn->io && conn->io->rx_wait)
			(void)conn->io->rx_wait(conn->io_arg, false);
		return 0;
	}
	/* an SRQ is shared: its posts ring no QP's doorbell */
	if (!qp || qp->pub.srq || !conn->io || !conn->io->rx_wait ||
	    conn->io->rx_wait(conn->io_arg, true))
		return -EOPNOTSUPP;
	pthread_mutex_lock(&qp->lock);
	if (qp->rq_head != __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE))
		posted = true;
	else
		qp->rx_wait = true;
	pthread_mutex_unlock(&qp->lock);
	if (posted) {
		(void)conn->io->rx_wait(conn->io_arg, false);
		return -EAGAIN;
	}
	return 0;
}

static void ops_kick_rx(void *owner)
{
	struct qp_conn *conn = owner;

	if (conn->io && conn->io->kick_rx)
		conn->io->kick_rx(conn->io_arg);
}

/* ---- local memory operations (verbs/mw.c) ---- */

static enum iwarp_wc_status ops_sq_local(void *owner, const struct rdmap_wqe *w)
{
	struct qp_conn *conn = owner;

	return mw_sq_local(conn->ctx, conn->pd, w);
}

static const struct rdmap_ops qp_conn_ops = {
	.mem_get = ops_mem_get,
	.mem_put = ops_mem_put,
	.mem_check_local = ops_mem_check_local,
	.invalidate = ops_invalidate,
	.stream_allows = ops_stream_allows,
	.recv_take = ops_recv_take,
	.recv_complete = ops_recv_complete,
	.sq_next = ops_sq_next,
	.sq_started = ops_sq_started,
	.sq_pending = ops_sq_pending,
	.sq_oldest = ops_sq_oldest,
	.sq_complete = ops_sq_complete,
	.sq_fail_one = ops_sq_fail_one,
	.set_error = ops_set_error,
	.closed = ops_closed,
	.kick_tx = ops_kick_tx,
	.shutdown = ops_shutdown,
	.term_queued = ops_term_queued,
	.cancel_rx = ops_cancel_rx,
	.rx_wait = ops_rx_wait,
	.kick_rx = ops_kick_rx,
	.sq_local = ops_sq_local,
};

/* ---- lifetime ---- */

struct qp_conn *qp_conn_create(struct iw_qp *qp,
			       const struct mpa_neg_result *neg, bool initiator,
			       size_t fpdu_max, qp_conn_close_fn on_close,
			       void *arg)
{
	struct rdmap_conn_cfg cfg;
	struct iwarp_context *ctx;
	enum iwarp_qp_state st;
	struct qp_conn *conn;

	if (!qp || !neg) {
		errno = EINVAL;
		return NULL;
	}
	conn = iw_calloc(1, sizeof(*conn));
	if (!conn)
		return NULL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.initiator = initiator;
	cfg.crc = neg->crc;
	cfg.markers_tx = neg->markers_tx;
	cfg.markers_rx = neg->markers_rx;
	cfg.p2p = neg->p2p;
	cfg.rtr = neg->rtr;
	cfg.ird = neg->ird;
	cfg.ord = neg->ord;
	cfg.rdmap_ext = neg->rdmap_ext; /* RFC 7306, both sides asked */
	cfg.fpdu_max = fpdu_max;
	conn->rc = rdmap_conn_create(&cfg, &qp_conn_ops, conn);
	if (!conn->rc) {
		iw_free(conn);
		return NULL;
	}
	ctx = qp->pub.context;
	conn->qp = qp;
	conn->ctx = ctx;
	conn->pd = qp->pub.pd;
	conn->on_close = on_close;
	conn->close_arg = arg;

	pthread_mutex_lock(&qp->lock);
	st = qp->pub.state;
	if (qp->conn || (st != IWARP_QPS_INIT && st != IWARP_QPS_RTR &&
			 st != IWARP_QPS_RTS)) {
		pthread_mutex_unlock(&qp->lock);
		conn->qp = NULL;
		rdmap_conn_destroy(conn->rc);
		iw_free(conn);
		errno = EBUSY;
		return NULL;
	}
	qp->conn = conn;
	qp->ird = (uint8_t)conn->rc->ird;
	qp->ord = (uint8_t)conn->rc->ord;
	qp->rdmap_ext = conn->rc->ext;
	__atomic_store_n(&qp->pub.state, IWARP_QPS_RTS, __ATOMIC_RELEASE);
	conn->rc->sq_sent = qp->sq_next;
	pthread_mutex_unlock(&qp->lock);

	/* created on the engine thread that will run and free it */
	conn->list = ctx_engine_self(ctx);
	pthread_mutex_lock(&ctx->conn_lock);
	conn->ctx_next = ctx->conns[conn->list];
	if (conn->ctx_next)
		conn->ctx_next->ctx_prev = conn;
	ctx->conns[conn->list] = conn;
	pthread_mutex_unlock(&ctx->conn_lock);
	return conn;
}

void qp_conn_set_io(struct qp_conn *conn, const struct qp_conn_io *io,
		    void *io_arg)
{
	conn->io = io;
	conn->io_arg = io_arg;
	rdmap_conn_set_rx_wait(conn->rc, io && io->rx_wait && io->kick_rx);
}

/* Detaches from the QP (the QP pointer is not used afterwards). */
static void qp_conn_detach(struct qp_conn *conn)
{
	struct iw_qp *qp = conn->qp;

	if (!qp)
		return;
	rdmap_conn_detach(conn->rc); /* a bound receive WQE is flushed */
	pthread_mutex_lock(&qp->lock);
	if (qp->conn == conn)
		qp->conn = NULL;
	pthread_mutex_unlock(&qp->lock);
	conn->qp = NULL;
}

void qp_conn_free(struct qp_conn *conn)
{
	struct iwarp_context *ctx = conn->ctx;

	pthread_mutex_lock(&ctx->conn_lock);
	if (conn->ctx_prev)
		conn->ctx_prev->ctx_next = conn->ctx_next;
	else
		ctx->conns[conn->list] = conn->ctx_next;
	if (conn->ctx_next)
		conn->ctx_next->ctx_prev = conn->ctx_prev;
	pthread_mutex_unlock(&ctx->conn_lock);
	rdmap_conn_destroy(conn->rc); /* gives back its memory references */
	iw_free(conn);
}

void qp_conn_destroy(struct qp_conn *conn)
{
	if (!conn)
		return;
	if (conn->qp) {
		if (conn->rc->state != RDMAP_CONN_CLOSED)
			qp_set_error(conn->qp, NULL, false);
		qp_conn_detach(conn);
	}
	rdmap_conn_detach(conn->rc);
	conn->on_close = NULL;
	if (conn->glue_free)
		conn->glue_free(conn); /* qp_conn_free once the I/O drained */
	else
		qp_conn_free(conn);
}

bool qp_conn_revoke_all(struct iwarp_context *ctx, uint32_t stag)
{
	struct qp_conn *conn;
	bool held = false;

	/* the conns of this list are freed on this (their engine's) thread
	 * only, so the list cannot lose an element while the engine revokes */
	pthread_mutex_lock(&ctx->conn_lock);
	conn = ctx->conns[ctx_engine_self(ctx)];
	pthread_mutex_unlock(&ctx->conn_lock);
	while (conn) {
		if (rdmap_conn_mem_revoke(conn->rc, stag))
			held = true;
		pthread_mutex_lock(&ctx->conn_lock);
		conn = conn->ctx_next;
		pthread_mutex_unlock(&ctx->conn_lock);
	}
	return held;
}

/* ---- the engine's entry points ---- */

int qp_conn_rx_prefill(struct qp_conn *conn, const void *buf, size_t len)
{
	return rdmap_conn_rx_prefill(conn->rc, buf, len);
}

int qp_conn_rx_iov(struct qp_conn *conn, struct iovec *iov, int cap)
{
	return rdmap_conn_rx_iov(conn->rc, iov, cap);
}

void qp_conn_rx_done(struct qp_conn *conn, size_t n)
{
	rdmap_conn_rx_done(conn->rc, n);
}

int qp_conn_tx_iov(struct qp_conn *conn, struct iovec *iov, int cap)
{
	return rdmap_conn_tx_iov(conn->rc, iov, cap);
}

void qp_conn_tx_done(struct qp_conn *conn, size_t n)
{
	rdmap_conn_tx_done(conn->rc, n);
}

void qp_conn_closed(struct qp_conn *conn, int err)
{
	rdmap_conn_closed(conn->rc, err);
}

void qp_conn_sq_kick(struct qp_conn *conn)
{
	rdmap_conn_sq_kick(conn->rc);
}

void qp_conn_app_state(struct qp_conn *conn, enum iwarp_qp_state state)
{
	rdmap_conn_app_state(conn->rc, state);
	if (state == IWARP_QPS_RESET)
		qp_conn_detach(conn);
}

void qp_conn_term_expired(struct qp_conn *conn)
{
	rdmap_conn_term_expired(conn->rc);
}

void qp_conn_rx_resume(struct qp_conn *conn)
{
	rdmap_conn_rx_resume(conn->rc);
}

void qp_conn_rx_wait_expired(struct qp_conn *conn)
{
	rdmap_conn_rx_wait_expired(conn->rc);
}

bool qp_conn_tx_pending(const struct qp_conn *conn)
{
	return rdmap_conn_tx_pending(conn->rc);
}

void qp_conn_tx_open(struct qp_conn *conn)
{
	rdmap_conn_tx_open(conn->rc);
}

bool qp_conn_tx_held(const struct qp_conn *conn)
{
	return conn->rc && rdmap_conn_tx_held(conn->rc);
}

bool qp_conn_tx_waiting(const struct qp_conn *conn)
{
	return conn->rc && rdmap_conn_tx_waiting(conn->rc);
}

/*
 * verbs/qp_engine.c: glue between a qp_conn (its sans-I/O RDMAP engine)
 * and an io/ep.h endpoint of the context's progress engine, plus the
 * engine hooks verbs calls (engine_qp_kick, engine_qp_state_change,
 * engine_progress, engine_mem_revoke).
 *
 * Threads: the endpoint callbacks run on the engine thread. The hooks are
 * called by application threads and hop onto the engine thread (a per-conn
 * doorbell work item, or engine_call_sync). A conn that is not attached to
 * an endpoint (test harnesses drive it directly) is called in place.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>

#include "io/engine.h"
#include "io/ep.h"
#include "util/mem.h"
#include "verbs/qp_conn.h"

/* Per-conn engine state. */
struct conn_glue {
	struct qp_conn *conn;
	struct endpoint *ep;
	struct engine *eng;
	struct engine_work doorbell; /* post_send -> drain the SQ */
	struct engine_timer term;    /* a queued TERMINATE's deadline */
	struct engine_timer rnr;     /* bound of a wait for a receive WQE */
	bool dead;		     /* conn gone; free when the doorbell ran */
};

static int glue_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct qp_conn *conn = owner;
	const struct conn_glue *g = conn->glue;

	/* Whole-buffer receives for a connection that fell behind cost a
	 * copy out of the bulk memory; with many streams on one CPU that
	 * copy lost to the receives it saves while every connection had a
	 * cold buffer of its own (the ring's endpoints still do), and wins
	 * when the memory is the engine's one warm scratch (bench/README.md,
	 * "Many QPs"). Not for a connection receiving Sends: a whole buffer
	 * of them placed at once outran the receive queue of qperf rc_bw on
	 * a loaded machine (the connection then ends, RFC 5041 §7.2). */
	rdmap_conn_set_rx_shared(conn->rc,
				 engine_rx_shared(g->eng) &&
					 (!ep_rx_scratch(g->ep) ||
					  rdmap_conn_rx_untagged(conn->rc)));
	return qp_conn_rx_iov(owner, iov, cap);
}

static void glue_rx_done_at(void *owner, size_t n, const uint8_t *provided)
{
	struct qp_conn *conn = owner;

	rdmap_conn_rx_done_at(conn->rc, n, provided);
}

static int glue_tx_iov(void *owner, struct iovec *iov, int cap)
{
	return qp_conn_tx_iov(owner, iov, cap);
}

static void glue_tx_done(void *owner, size_t n)
{
	qp_conn_tx_done(owner, n);
}

static void glue_closed(void *owner, int err)
{
	qp_conn_closed(owner, err);
}

static const struct ep_ops conn_ep_ops = {
	.rx_iov = glue_rx_iov,
	.rx_done_at = glue_rx_done_at,
	.tx_iov = glue_tx_iov,
	.tx_done = glue_tx_done,
	.closed = glue_closed,
};

static void glue_kick_tx(void *arg)
{
	struct conn_glue *g = arg;

	ep_kick_tx(g->ep);
}

static void glue_shutdown(void *arg)
{
	struct conn_glue *g = arg;

	ep_shutdown(g->ep);
}

static void glue_term_expired(void *arg)
{
	struct conn_glue *g = arg;

	qp_conn_term_expired(g->conn);
}

static void glue_cancel_rx(void *arg)
{
	struct conn_glue *g = arg;

	ep_cancel_rx(g->ep);
}

static void glue_rnr_expired(void *arg)
{
	struct conn_glue *g = arg;

	qp_conn_rx_wait_expired(g->conn);
}

static int glue_rx_wait(void *arg, bool wait)
{
	struct conn_glue *g = arg;
	uint32_t ms;

	if (!wait) {
		engine_timer_cancel(g->eng, &g->rnr);
		return 0;
	}
	/* the context's IWARP_RNR_WAIT_MS; 0: no waiting */
	ms = g->conn->ctx->rnr_wait_ms;
	if (!ms)
		return -EOPNOTSUPP;
	/* the bound counts from the first time the message found none */
	if (!engine_timer_armed(&g->rnr))
		/* reserved at attach: cannot fail */
		(void)engine_timer_start(g->eng, &g->rnr, ms, glue_rnr_expired,
					 g);
	return 0;
}

static void glue_kick_rx(void *arg)
{
	struct conn_glue *g = arg;

	ep_kick_rx(g->ep);
}

static void glue_term_queued(void *arg)
{
	struct conn_glue *g = arg;

	/* reserved at attach: cannot fail */
	(void)engine_timer_start(g->eng, &g->term, RDMAP_CONN_TERM_LINGER_MS,
				 glue_term_expired, g);
}

static const struct qp_conn_io glue_io = {
	.kick_tx = glue_kick_tx,
	.shutdown = glue_shutdown,
	.term_queued = glue_term_queued,
	.cancel_rx = glue_cancel_rx,
	.rx_wait = glue_rx_wait,
	.kick_rx = glue_kick_rx,
};

/* Doorbell work item (engine thread): new WQEs were posted. */
static void glue_doorbell(void *arg)
{
	struct conn_glue *g = arg;

	if (g->dead) {
		iw_free(g);
		return;
	}
	qp_conn_rx_resume(g->conn); /* a receive WQE a Send waited for */
	qp_conn_sq_kick(g->conn);
}

/* The endpoint's I/O drained after glue_free: the conn's buffers and the
 * memory references of its FPDUs are no longer in use. */
static void glue_drained(void *arg)
{
	qp_conn_free(arg);
}

/* conn->glue_free: closes the endpoint, releases the glue, and frees the
 * conn once the endpoint has no receive or send in flight (a cancelled
 * io_uring operation may still be writing into the receive buffer). */
static void glue_free(struct qp_conn *conn)
{
	struct conn_glue *g = conn->glue;
	struct endpoint *ep;

	conn->glue = NULL;
	conn->glue_free = NULL;
	conn->io = NULL;
	if (!g) {
		qp_conn_free(conn);
		return;
	}
	ep = g->ep;
	engine_timer_cancel(g->eng, &g->term);
	engine_timer_cancel(g->eng, &g->rnr);
	engine_timer_unreserve(g->eng, 2);
	/* a doorbell still queued frees the glue when it runs */
	if (atomic_load(&g->doorbell.queued))
		g->dead = true;
	else
		iw_free(g);
	ep_close_then(ep, glue_drained, conn);
}

int qp_conn_attach_ep(struct qp_conn *conn, struct endpoint *ep,
		      const void *carry, size_t len)
{
	struct conn_glue *g;
	int mss, rc;

	g = iw_calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	/* the TERMINATE linger and receive wait timers can always be armed */
	if (engine_timer_reserve(ep_engine(ep), 2)) {
		iw_free(g);
		return -ENOMEM;
	}
	g->conn = conn;
	g->ep = ep;
	g->eng = ep_engine(ep);
	engine_work_init(&g->doorbell, glue_doorbell, g);
	engine_timer_init(&g->term);
	engine_timer_init(&g->rnr);
	if (!conn->rc->fpdu_max) {
		/* FPDU <= MSS, a multiple of 8 as siw (docs/interop-notes.md
		 * §0.4) */
		mss = ep_mss(ep);
		rdmap_conn_set_fpdu_max(conn->rc,
					mss > 64 ? (size_t)mss & ~(size_t)7
						 : RDMAP_CONN_FPDU_DEFAULT);
	}
	/* bulk octets land in the engine's memory (io/ep.h EP_RX_PROVIDED):
	 * an idle QP pins no receive buffer */
	rdmap_conn_set_rx_provided(conn->rc);
	rc = ep_set_owner(ep, &conn_ep_ops, conn, carry, len);
	if (rc) {
		engine_timer_unreserve(g->eng, 2);
		iw_free(g);
		return rc;
	}
	conn->ep = ep;
	conn->glue = g;
	conn->glue_free = glue_free;
	qp_conn_set_io(conn, &glue_io, g);
	return 0;
}

void engine_qp_kick(struct iw_qp *qp, bool reads_only)
{
	struct conn_glue *g = NULL;
	struct engine *eng = NULL;
	struct qp_conn *conn;
	bool owed = false;

	pthread_mutex_lock(&qp->lock);
	conn = qp->conn;
	if (conn)
		g = conn->glue;
	if (g) {
		/* with direct sockets the poster may send the message itself
		 * (engine_assist), outside the QP's lock the doorbell takes */
		eng = g->eng;
		engine_work_queue_quiet(eng, &g->doorbell);
		/* Reads (and atomics) posted while a response is owed need
		 * not go at once: its arrival runs the engine, and that pass
		 * (or the poster's own next wait) sends what was posted
		 * until then in one system call, where a program that posts
		 * a batch of Reads between two waits would send each Read
		 * Request alone (engine_assist_owed). Read after the
		 * queueing (rdmap_conn_response_owed): when the receive that
		 * ends the debt has already run its pass, this reads false.
		 * Other messages go at once as before. */
		owed = reads_only && rdmap_conn_response_owed(conn->rc);
	}
	pthread_mutex_unlock(&qp->lock);
	if (eng && owed)
		engine_assist_owed(eng);
	else if (eng)
		engine_assist(eng);
	if (conn && !g)
		qp_conn_sq_kick(conn); /* driven in place (tests) */
}

struct state_call {
	struct iw_qp *qp;
	enum iwarp_qp_state state;
};

static void state_change_fn(void *arg)
{
	struct state_call *sc = arg;
	struct qp_conn *conn;

	pthread_mutex_lock(&sc->qp->lock);
	conn = sc->qp->conn;
	pthread_mutex_unlock(&sc->qp->lock);
	if (conn)
		qp_conn_app_state(conn, sc->state);
}

void engine_qp_state_change(struct iw_qp *qp, enum iwarp_qp_state new_state)
{
	struct state_call sc = {.qp = qp, .state = new_state};
	struct engine *eng = NULL;

	pthread_mutex_lock(&qp->lock);
	if (qp->conn && qp->conn->glue)
		eng = ((struct conn_glue *)qp->conn->glue)->eng;
	pthread_mutex_unlock(&qp->lock);
	if (eng && !engine_in_thread(eng))
		engine_call_sync(eng, state_change_fn, &sc);
	else
		state_change_fn(&sc);
}

int engine_progress(struct engine *eng)
{
	if (!eng)
		return -EINVAL;
	return engine_run_once(eng, 0);
}

struct revoke_call {
	struct iwarp_context *ctx;
	uint32_t stag;
};

static void revoke_fn(void *arg)
{
	struct revoke_call *rc = arg;

	(void)qp_conn_revoke_all(rc->ctx, rc->stag);
}

void engine_mem_revoke(struct iwarp_context *ctx, uint32_t stag)
{
	struct revoke_call rc = {.ctx = ctx, .stag = stag};
	unsigned int i;

	if (!ctx->n_engines) {
		revoke_fn(&rc);
		return;
	}
	/* each engine walks the conns it runs (docs/engine-threads.md) */
	for (i = 0; i < ctx->n_engines; i++)
		engine_call_sync(ctx->engines[i], revoke_fn, &rc);
}

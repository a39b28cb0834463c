/* tests/stack_pipe.c: see stack_pipe.h. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/backend.h"
#include "io/engine.h"
#include "io/ep.h"
#include "stack_pipe.h"
#include "verbs/qp_conn.h"
#include "verbs/verbs.h"

/* ---- the tap: a backend that records what is sent through it ---- */

struct sp_tap {
	struct io_backend be; /* first */
	struct io_backend *inner;
	struct sp_pair *pair;
	const struct iovec *tx_iov;
	int tx_cnt;
	uint8_t *cap; /* under pair->lock */
	size_t len, size;
	bool gone; /* destroyed: capture kept for the test */
};

static void tap_rx_complete(void *up, ssize_t res)
{
	struct sp_tap *t = up;

	t->be.up.rx_complete(t->be.up.up, res);
}

static void tap_tx_complete(void *up, ssize_t res)
{
	struct sp_tap *t = up;
	size_t left = res > 0 ? (size_t)res : 0;
	int i;

	pthread_mutex_lock(&t->pair->lock);
	if (t->len + left > t->size) {
		t->size = (t->len + left) * 2 + 4096;
		t->cap = realloc(t->cap, t->size);
		ck_assert_ptr_nonnull(t->cap);
	}
	for (i = 0; i < t->tx_cnt && left; i++) {
		size_t k = t->tx_iov[i].iov_len < left ? t->tx_iov[i].iov_len
						       : left;

		memcpy(t->cap + t->len, t->tx_iov[i].iov_base, k);
		t->len += k;
		left -= k;
	}
	pthread_mutex_unlock(&t->pair->lock);
	t->be.up.tx_complete(t->be.up.up, res);
}

static int tap_recv(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct sp_tap *t = (struct sp_tap *)be;

	return t->inner->ops->recv(t->inner, iov, cnt);
}

static int tap_send(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct sp_tap *t = (struct sp_tap *)be;

	/* the endpoint keeps |iov| valid until the completion */
	t->tx_iov = iov;
	t->tx_cnt = cnt;
	return t->inner->ops->send(t->inner, iov, cnt);
}

static int tap_shutdown(struct io_backend *be)
{
	struct sp_tap *t = (struct sp_tap *)be;

	return t->inner->ops->shutdown(t->inner);
}

static void tap_cancel(struct io_backend *be)
{
	struct sp_tap *t = (struct sp_tap *)be;

	t->inner->ops->cancel(t->inner);
}

static void tap_destroy(struct io_backend *be, bool abort)
{
	struct sp_tap *t = (struct sp_tap *)be;

	t->inner->ops->destroy(t->inner, abort);
	t->inner = NULL;
	t->gone = true; /* freed by sp_close */
}

static int tap_mss(struct io_backend *be)
{
	struct sp_tap *t = (struct sp_tap *)be;

	return t->inner->ops->mss(t->inner);
}

static const struct io_backend_ops tap_ops = {
	.name = "tap",
	.recv = tap_recv,
	.send = tap_send,
	.shutdown = tap_shutdown,
	.cancel = tap_cancel,
	.destroy = tap_destroy,
	.mss = tap_mss,
};

static struct sp_tap *tap_wrap(struct sp_pair *p, struct io_backend *inner)
{
	struct sp_tap *t = calloc(1, sizeof(*t));
	struct io_backend_up up = {tap_rx_complete, tap_tx_complete, NULL};

	ck_assert_ptr_nonnull(t);
	t->be.ops = &tap_ops;
	t->be.eng = inner->eng;
	t->inner = inner;
	t->pair = p;
	up.up = t;
	io_backend_set_up(inner, &up);
	return t;
}

/* ---- setup on the engine thread ---- */

static int dummy_rx_iov(void *owner, struct iovec *iov, int cap)
{
	(void)owner;
	(void)iov;
	(void)cap;
	return 0;
}

static void dummy_done(void *owner, size_t n)
{
	(void)owner;
	(void)n;
}

static void dummy_closed(void *owner, int err)
{
	(void)owner;
	(void)err;
}

static const struct ep_ops dummy_ops = {
	.rx_iov = dummy_rx_iov,
	.rx_done = dummy_done,
	.tx_iov = dummy_rx_iov,
	.tx_done = dummy_done,
	.closed = dummy_closed,
};

struct sp_close_arg {
	struct sp_pair *p;
	int i;
};

static struct sp_close_arg close_args[2];

/* After on_close (engine thread): release the datapath as the CM does, so
 * the transport is closed (FIN, or reset) and the peer learns of it. */
static void sp_reap(void *arg)
{
	struct sp_close_arg *a = arg;
	struct sp_side *s = &a->p->s[a->i];

	qp_conn_destroy(s->conn);
	s->conn = NULL;
}

static void sp_on_close(void *arg, int err, const struct iwarp_term_cause *c)
{
	struct sp_close_arg *a = arg;
	struct sp_side *s = &a->p->s[a->i];

	pthread_mutex_lock(&a->p->lock);
	s->closed = true;
	s->close_err = err;
	s->have_cause = c != NULL;
	if (c)
		s->cause = *c;
	pthread_cond_broadcast(&a->p->cond);
	pthread_mutex_unlock(&a->p->lock);
	/* qp_conn_destroy may not run inside on_close */
	ck_assert_int_eq(engine_call(a->p->ctx->engine, sp_reap, a), 0);
}

struct setup {
	struct sp_pair *p;
	const struct sp_opts *o;
	int rc;
};

static void setup_fn(void *arg)
{
	struct setup *su = arg;
	struct sp_pair *p = su->p;
	struct engine *eng = p->ctx->engine;
	struct io_backend *be[2];
	struct mpa_neg_result n;
	int i;

	su->rc = io_pipe_create(eng, su->o->pipe_cap, su->o->pipe_cap, &be[0],
				&be[1]);
	if (su->rc)
		return;
	memset(&n, 0, sizeof(n));
	n.crc = su->o->crc;
	n.markers_tx = n.markers_rx = su->o->markers;
	n.rev = 2;
	n.enhanced = true;
	n.ird = n.ord = 16;
	for (i = 0; i < 2; i++) {
		struct io_backend *b = be[i];
		struct endpoint *ep;

		if (su->o->fault[i]) {
			b = io_fault_wrap(b, &su->o->cfg[i]);
			ck_assert_ptr_nonnull(b);
		}
		p->s[i].tap = tap_wrap(p, b);
		ep = ep_create(eng, &p->s[i].tap->be, &dummy_ops, NULL);
		ck_assert_ptr_nonnull(ep);
		close_args[i].p = p;
		close_args[i].i = i;
		p->s[i].conn =
			qp_conn_create(qp_from_pub(p->s[i].qp), &n, i == 0,
				       su->o->fpdu_max ? su->o->fpdu_max : 1448,
				       sp_on_close, &close_args[i]);
		ck_assert_ptr_nonnull(p->s[i].conn);
		ck_assert_int_eq(qp_conn_attach_ep(p->s[i].conn, ep, NULL, 0),
				 0);
	}
}

void sp_open(struct sp_pair *p, const struct sp_opts *o)
{
	struct iwarp_context_attr a;
	struct iwarp_qp_init_attr qa;
	struct iwarp_qp_attr at;
	struct setup su = {.p = p, .o = o, .rc = 0};
	uint32_t wr = o->max_wr ? o->max_wr : 64;
	int i;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	st_attr(&a, 2, IWARP_CRC_OFF, 0);
	p->ctx = iwarp_open_context(&a);
	ck_assert_ptr_nonnull(p->ctx);
	p->pd = iwarp_alloc_pd(p->ctx);
	p->pd2 = iwarp_alloc_pd(p->ctx);
	ck_assert_ptr_nonnull(p->pd);
	ck_assert_ptr_nonnull(p->pd2);
	for (i = 0; i < 2; i++) {
		st_cq_open(&p->s[i].cq, p->ctx, (int)(4 * wr));
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = p->s[i].cq.cq;
		qa.recv_cq = p->s[i].cq.cq;
		qa.qp_type = IWARP_QPT_RC;
		qa.cap.max_send_wr = wr;
		qa.cap.max_recv_wr = wr;
		qa.cap.max_send_sge = 2;
		qa.cap.max_recv_sge = 2;
		p->s[i].qp = iwarp_create_qp(p->pd, &qa);
		ck_assert_ptr_nonnull(p->s[i].qp);
		memset(&at, 0, sizeof(at));
		at.qp_state = IWARP_QPS_INIT;
		/* remote access as the CM grants it (rdma_create_qp) */
		at.qp_access_flags = IWARP_ACCESS_LOCAL_WRITE |
				     IWARP_ACCESS_REMOTE_WRITE |
				     IWARP_ACCESS_REMOTE_READ;
		ck_assert_int_eq(
			iwarp_modify_qp(p->s[i].qp, &at,
					IWARP_QP_STATE | IWARP_QP_ACCESS_FLAGS),
			0);
	}
	ck_assert_int_eq(engine_call_sync(p->ctx->engine, setup_fn, &su), 0);
	ck_assert_int_eq(su.rc, 0);
	ck_assert_int_eq(p->s[0].qp->state, IWARP_QPS_RTS);
	ck_assert_int_eq(p->s[1].qp->state, IWARP_QPS_RTS);
}

bool sp_wait_closed(struct sp_pair *p, int i, int ms)
{
	struct timespec ts;
	bool closed;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	while (!p->s[i].closed &&
	       pthread_cond_timedwait(&p->cond, &p->lock, &ts) == 0)
		;
	closed = p->s[i].closed;
	pthread_mutex_unlock(&p->lock);
	return closed;
}

size_t sp_captured(struct sp_pair *p, int i, uint8_t *out, size_t cap)
{
	struct sp_tap *t = p->s[i].tap;
	size_t n;

	pthread_mutex_lock(&p->lock);
	n = t->len;
	if (out)
		memcpy(out, t->cap, n < cap ? n : cap);
	pthread_mutex_unlock(&p->lock);
	return n;
}

static void destroy_fn(void *arg)
{
	struct sp_pair *p = arg;
	int i;

	for (i = 0; i < 2; i++) {
		qp_conn_destroy(p->s[i].conn);
		p->s[i].conn = NULL;
	}
}

void sp_close(struct sp_pair *p)
{
	int i;

	ck_assert_int_eq(engine_call_sync(p->ctx->engine, destroy_fn, p), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(iwarp_destroy_qp(p->s[i].qp), 0);
		st_cq_close(&p->s[i].cq);
	}
	ck_assert_int_eq(iwarp_dealloc_pd(p->pd), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(p->pd2), 0);
	ck_assert_int_eq(iwarp_close_context(p->ctx), 0);
	for (i = 0; i < 2; i++) {
		/* the endpoint destroyed its backend when it was closed */
		ck_assert(p->s[i].tap->gone);
		free(p->s[i].tap->cap);
		free(p->s[i].tap);
	}
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

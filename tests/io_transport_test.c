/*
 * tests/io_transport_test.c: endpoints over the in-memory pipe and the
 * fault injector (io/testio.h), driven by an INLINE engine: random iovec
 * layouts, partial sends, pause/resume, hand-over with carried bytes,
 * close from callbacks, and every fault kind reaching the right callback.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/backend.h"
#include "io/engine.h"
#include "io/ep.h"
#include "io/testio.h"
#include "testutil.h"
#include "util/mem.h"

/* ---- a test owner: sends src, receives into dst, random layouts ---- */

struct sown {
	struct endpoint *ep;
	uint64_t rng;
	const uint8_t *src;
	size_t tx_len, tx_off;
	size_t last_offer;
	unsigned int partial_tx; /* tx_done(n) with n < offered */
	uint8_t *dst;
	size_t rx_cap, rx_off;
	unsigned int rx_calls;
	int max_iov;	  /* iovecs per call (1..EP_IOV_MAX) */
	size_t max_chunk; /* bytes offered per call */
	bool paused;	  /* rx_iov returns 0 */
	bool shut_when_sent;
	bool close_in_rx; /* ep_close inside the first rx_done */
	bool closed;
	int closed_err;
	unsigned int after_close; /* callbacks after closed/ep_close: bug */
	bool released;
};

static size_t rnd(struct sown *o, size_t n)
{
	return n ? (size_t)(iw_test_rand(&o->rng) % n) : 0;
}

/* Splits [base, base + len) into 1..cap random pieces. */
static int split(struct sown *o, uint8_t *base, size_t len, struct iovec *iov,
		 int cap)
{
	int want = 1 + (int)rnd(o, (size_t)cap), n = 0;

	while (len && n < cap) {
		size_t k =
			(n == want - 1 || n == cap - 1) ? len : 1 + rnd(o, len);

		/* some zero-length pieces too: the engine must cope */
		if (n + 1 < cap && rnd(o, 16) == 0)
			iov[n++] = (struct iovec){base, 0};
		iov[n].iov_base = base;
		iov[n].iov_len = k;
		base += k;
		len -= k;
		n++;
	}
	return n;
}

static int s_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct sown *o = owner;
	size_t len = o->rx_cap - o->rx_off;

	if (o->released || o->closed)
		o->after_close++;
	if (o->paused || !len)
		return 0;
	if (len > o->max_chunk)
		len = 1 + rnd(o, o->max_chunk);
	return split(o, o->dst + o->rx_off, len, iov,
		     cap < o->max_iov ? cap : o->max_iov);
}

static void s_rx_done(void *owner, size_t n)
{
	struct sown *o = owner;

	if (o->released || o->closed)
		o->after_close++;
	ck_assert_uint_le(o->rx_off + n, o->rx_cap);
	o->rx_off += n;
	o->rx_calls++;
	if (o->close_in_rx) {
		o->released = true;
		ep_close(o->ep);
	}
}

static int s_tx_iov(void *owner, struct iovec *iov, int cap)
{
	struct sown *o = owner;
	size_t len = o->tx_len - o->tx_off;

	if (o->released || o->closed)
		o->after_close++;
	if (!len)
		return 0;
	if (len > o->max_chunk)
		len = 1 + rnd(o, o->max_chunk);
	o->last_offer = len;
	return split(o, (uint8_t *)o->src + o->tx_off, len, iov,
		     cap < o->max_iov ? cap : o->max_iov);
}

static void s_tx_done(void *owner, size_t n)
{
	struct sown *o = owner;

	if (o->released || o->closed)
		o->after_close++;
	ck_assert_uint_le(n, o->last_offer);
	if (n < o->last_offer)
		o->partial_tx++;
	o->tx_off += n;
	if (o->tx_off == o->tx_len && o->shut_when_sent)
		ep_shutdown(o->ep);
}

static void s_closed(void *owner, int err)
{
	struct sown *o = owner;

	if (o->released || o->closed)
		o->after_close++;
	o->closed = true;
	o->closed_err = err;
}

static const struct ep_ops sown_ops = {
	.rx_iov = s_rx_iov,
	.rx_done = s_rx_done,
	.tx_iov = s_tx_iov,
	.tx_done = s_tx_done,
	.closed = s_closed,
};

static void sown_init(struct sown *o, uint64_t seed, const uint8_t *src,
		      size_t tx_len, uint8_t *dst, size_t rx_cap)
{
	memset(o, 0, sizeof(*o));
	o->rng = seed;
	o->src = src;
	o->tx_len = tx_len;
	o->dst = dst;
	o->rx_cap = rx_cap;
	o->max_iov = 16;
	o->max_chunk = 256 * 1024;
}

static void sown_release(struct sown *o)
{
	if (!o->released) {
		o->released = true;
		ep_close(o->ep);
	}
}

static struct engine *inline_engine(void)
{
	struct engine_attr a = {.mode = ENGINE_MODE_INLINE};
	struct engine *eng = engine_create(&a);

	ck_assert_msg(eng != NULL, "engine_create: %s", strerror(errno));
	return eng;
}

/* Runs the engine until |done(arg)| or 10 000 idle passes (never hangs). */
static void run_until(struct engine *eng, bool (*done)(void *arg), void *arg)
{
	int idle = 0;

	while (!done(arg) && idle < 10000) {
		int n = engine_run_once(eng, 0);

		ck_assert_int_ge(n, 0);
		idle = n ? 0 : idle + 1;
	}
}

struct pair {
	struct sown a, b;
};

static bool pair_transferred(void *arg)
{
	struct pair *p = arg;

	return (p->b.rx_off == p->b.rx_cap && p->a.rx_off == p->a.rx_cap &&
		p->a.tx_off == p->a.tx_len && p->b.tx_off == p->b.tx_len) ||
	       p->a.closed || p->b.closed;
}

static bool a_closed(void *arg)
{
	return ((struct pair *)arg)->a.closed;
}

static bool b_closed(void *arg)
{
	return ((struct pair *)arg)->b.closed;
}

/* Connects p->a and p->b over |ba| / |bb| (already wrapped if wanted). */
static void pair_start(struct engine *eng, struct pair *p,
		       struct io_backend *ba, struct io_backend *bb)
{
	p->a.ep = ep_create(eng, ba, &sown_ops, &p->a);
	p->b.ep = ep_create(eng, bb, &sown_ops, &p->b);
	ck_assert_ptr_nonnull(p->a.ep);
	ck_assert_ptr_nonnull(p->b.ep);
}

/* ---- pipe ---- */

START_TEST(test_pipe_bidirectional)
{
	static const size_t caps[] = {1, 7, 4096, 0};
	static const size_t sizes[] = {1, 100, 65536 + 13, 1024 * 1024 + 3};
	long mem0 = iw_mem_outstanding();
	size_t ci, si;

	for (ci = 0; ci < 4; ci++) {
		for (si = 0; si < 4; si++) {
			size_t len = sizes[si];
			struct engine *eng;
			struct io_backend *ba, *bb;
			uint8_t *s1, *s2, *d1, *d2;
			struct pair p;

			if (caps[ci] && caps[ci] < 16 && len > 100000)
				continue; /* byte-at-a-time of 1 MiB: slow */
			eng = inline_engine();
			s1 = malloc(len);
			s2 = malloc(len);
			d1 = calloc(1, len);
			d2 = calloc(1, len);
			iw_test_fill(s1, len, 1 + si);
			iw_test_fill(s2, len, 100 + si);
			sown_init(&p.a, 11 + ci, s1, len, d1, len);
			sown_init(&p.b, 23 + ci, s2, len, d2, len);
			p.a.max_iov = (int)(1 + ci * 80);
			ck_assert_int_eq(io_pipe_create(eng, caps[ci], caps[ci],
							&ba, &bb),
					 0);
			pair_start(eng, &p, ba, bb);
			run_until(eng, pair_transferred, &p);
			ck_assert(!p.a.closed && !p.b.closed);
			ck_assert_mem_eq(d2, s1, len);
			ck_assert_mem_eq(d1, s2, len);
			if (caps[ci] && caps[ci] < len)
				ck_assert_uint_gt(p.a.partial_tx, 0);
			sown_release(&p.a);
			sown_release(&p.b);
			engine_destroy(eng);
			ck_assert_uint_eq(p.a.after_close + p.b.after_close, 0);
			free(s1);
			free(s2);
			free(d1);
			free(d2);
		}
	}
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_pipe_shutdown_eof_after_data)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;
	static uint8_t src[300000], dst[300000], back[10];
	struct pair p;

	iw_test_fill(src, sizeof(src), 5);
	sown_init(&p.a, 1, src, sizeof(src), back, sizeof(back));
	sown_init(&p.b, 2, NULL, 0, dst, sizeof(dst) + 10);
	p.a.shut_when_sent = true;
	ck_assert_int_eq(io_pipe_create(eng, 1000, 0, &ba, &bb), 0);
	pair_start(eng, &p, ba, bb);
	run_until(eng, b_closed, &p);
	/* b saw every byte, then EOF; a got b's EOF after b shut down too */
	ck_assert(p.b.closed);
	ck_assert_int_eq(p.b.closed_err, 0);
	ck_assert_uint_eq(p.b.rx_off, sizeof(src));
	ck_assert_mem_eq(dst, src, sizeof(src));
	/* b never shut down its side: a still receives; b's close answers
	 * a's FIN with its own (orderly close), so a sees EOF, not a reset */
	ck_assert(!p.a.closed);
	sown_release(&p.b);
	run_until(eng, a_closed, &p);
	ck_assert(p.a.closed);
	ck_assert_int_eq(p.a.closed_err, 0);
	sown_release(&p.a);
	engine_destroy(eng);
	ck_assert_uint_eq(p.a.after_close + p.b.after_close, 0);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_pipe_abort_resets_peer)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;
	static uint8_t dst[100];
	struct pair p;

	sown_init(&p.a, 1, NULL, 0, NULL, 0);
	sown_init(&p.b, 2, NULL, 0, dst, sizeof(dst));
	ck_assert_int_eq(io_pipe_create(eng, 0, 0, &ba, &bb), 0);
	pair_start(eng, &p, ba, bb);
	engine_run_once(eng, 0);
	sown_release(&p.a); /* with b's recv outstanding */
	run_until(eng, b_closed, &p);
	ck_assert(p.b.closed);
	ck_assert_int_eq(p.b.closed_err, -ECONNRESET);
	ck_assert(!p.a.closed); /* ep_close: no callback */
	sown_release(&p.b);
	engine_destroy(eng);
	ck_assert_uint_eq(p.a.after_close + p.b.after_close, 0);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

static bool b_got(void *arg)
{
	struct pair *p = arg;

	return p->b.rx_off == p->b.rx_cap || p->b.closed;
}

START_TEST(test_pipe_pause_resume)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;
	static uint8_t src[5000], dst[5000];
	struct pair p;
	int i;

	iw_test_fill(src, sizeof(src), 9);
	sown_init(&p.a, 1, src, sizeof(src), NULL, 0);
	sown_init(&p.b, 2, NULL, 0, dst, sizeof(dst));
	p.b.paused = true;
	ck_assert_int_eq(io_pipe_create(eng, 0, 0, &ba, &bb), 0);
	pair_start(eng, &p, ba, bb);
	for (i = 0; i < 50; i++)
		engine_run_once(eng, 0);
	ck_assert_uint_eq(p.a.tx_off, sizeof(src)); /* buffered in the pipe */
	ck_assert_uint_eq(p.b.rx_off, 0);
	p.b.paused = false;
	ep_kick_rx(p.b.ep);
	run_until(eng, b_got, &p);
	ck_assert_mem_eq(dst, src, sizeof(src));
	sown_release(&p.a);
	sown_release(&p.b);
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_close_inside_rx_done)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;
	static uint8_t src[1000], dst[1000];
	struct pair p;
	int i;

	sown_init(&p.a, 1, src, sizeof(src), NULL, 0);
	sown_init(&p.b, 2, NULL, 0, dst, sizeof(dst));
	p.a.max_chunk = 10;
	p.b.close_in_rx = true;
	ck_assert_int_eq(io_pipe_create(eng, 0, 0, &ba, &bb), 0);
	pair_start(eng, &p, ba, bb);
	for (i = 0; i < 200; i++)
		engine_run_once(eng, 0);
	ck_assert_uint_eq(p.b.rx_calls, 1);
	ck_assert_uint_eq(p.b.after_close, 0);
	/* a gets EPIPE / reset when sending into the closed end */
	ck_assert(p.a.closed);
	ck_assert_int_lt(p.a.closed_err, 0);
	sown_release(&p.a);
	engine_destroy(eng);
	ck_assert_uint_eq(p.a.after_close, 0);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- hand-over (ep_set_owner) ---- */

struct hs_owner { /* reads a 5-byte "HELLO", then hands over */
	struct endpoint *ep;
	struct sown *next;
	uint8_t buf[64];
	size_t got;
	int set_rc;
	bool handed;
};

static int hs_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct hs_owner *h = owner;

	(void)cap;
	ck_assert(!h->handed);
	iov[0].iov_base = h->buf + h->got;
	iov[0].iov_len = sizeof(h->buf) - h->got;
	return 1;
}

static void hs_rx_done(void *owner, size_t n)
{
	struct hs_owner *h = owner;

	h->got += n;
	if (h->got >= 5) {
		ck_assert_mem_eq(h->buf, "HELLO", 5);
		h->next->ep = h->ep;
		h->set_rc = ep_set_owner(h->ep, &sown_ops, h->next, h->buf + 5,
					 h->got - 5);
		h->handed = true;
	}
}

static int hs_tx_iov(void *owner, struct iovec *iov, int cap)
{
	(void)owner;
	(void)iov;
	(void)cap;
	return 0;
}

static void hs_tx_done(void *owner, size_t n)
{
	(void)owner;
	(void)n;
	ck_abort_msg("no send");
}

static void hs_closed(void *owner, int err)
{
	(void)owner;
	ck_abort_msg("closed %d during handshake", err);
}

static const struct ep_ops hs_ops = {
	.rx_iov = hs_rx_iov,
	.rx_done = hs_rx_done,
	.tx_iov = hs_tx_iov,
	.tx_done = hs_tx_done,
	.closed = hs_closed,
};

START_TEST(test_set_owner_carries_bytes)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;
	static uint8_t src[20005], dst[20000];
	struct hs_owner h;
	struct pair p;

	memcpy(src, "HELLO", 5);
	iw_test_fill(src + 5, sizeof(src) - 5, 77);
	memset(&h, 0, sizeof(h));
	sown_init(&p.a, 1, src, sizeof(src), NULL, 0);
	sown_init(&p.b, 2, NULL, 0, dst, sizeof(dst));
	p.b.max_chunk = 7; /* the carry takes several rx_iov rounds */
	h.next = &p.b;
	ck_assert_int_eq(io_pipe_create(eng, 0, 0, &ba, &bb), 0);
	p.a.ep = ep_create(eng, ba, &sown_ops, &p.a);
	h.ep = ep_create(eng, bb, &hs_ops, &h);
	run_until(eng, b_got, &p);
	ck_assert_int_eq(h.set_rc, 0);
	ck_assert_uint_gt(h.got, 5); /* bytes beyond HELLO were carried */
	ck_assert_uint_eq(p.b.rx_off, sizeof(dst));
	ck_assert_mem_eq(dst, src + 5, sizeof(dst));
	sown_release(&p.a);
	sown_release(&p.b);
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_set_owner_busy)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;
	static uint8_t dst[10];
	struct pair p;
	int i;

	sown_init(&p.a, 1, NULL, 0, NULL, 0);
	sown_init(&p.b, 2, NULL, 0, dst, sizeof(dst));
	ck_assert_int_eq(io_pipe_create(eng, 0, 0, &ba, &bb), 0);
	pair_start(eng, &p, ba, bb);
	for (i = 0; i < 5; i++)
		engine_run_once(eng, 0);
	/* b's receive is outstanding: no hand-over */
	ck_assert(!ep_idle(p.b.ep));
	ck_assert_int_eq(ep_set_owner(p.b.ep, &sown_ops, &p.a, NULL, 0),
			 -EBUSY);
	sown_release(&p.a);
	sown_release(&p.b);
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- fault injector ---- */

/* a -> b transfer of |len| bytes with b's backend wrapped by |cfg_b| and a's
 * by |cfg_a| (NULL = unwrapped). */
static void fault_run(const struct io_fault_cfg *cfg_a,
		      const struct io_fault_cfg *cfg_b, size_t len,
		      struct pair *p, uint8_t *src, uint8_t *dst)
{
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;

	iw_test_fill(src, len, 31);
	memset(dst, 0, len);
	sown_init(&p->a, 3, src, len, NULL, 0);
	sown_init(&p->b, 4, NULL, 0, dst, len);
	ck_assert_int_eq(io_pipe_create(eng, 8192, 8192, &ba, &bb), 0);
	if (cfg_a)
		ba = io_fault_wrap(ba, cfg_a);
	if (cfg_b)
		bb = io_fault_wrap(bb, cfg_b);
	ck_assert_ptr_nonnull(ba);
	ck_assert_ptr_nonnull(bb);
	pair_start(eng, p, ba, bb);
	run_until(eng, b_got, p);
	{
		int i;

		for (i = 0; i < 100; i++) /* let a see what follows */
			engine_run_once(eng, 0);
	}
	sown_release(&p->a);
	sown_release(&p->b);
	engine_destroy(eng);
	ck_assert_uint_eq(p->a.after_close + p->b.after_close, 0);
}

START_TEST(test_fault_short_io)
{
	long mem0 = iw_mem_outstanding();
	static uint8_t src[200000], dst[200000];
	struct io_fault_cfg ca, cb;
	struct pair p;

	io_fault_cfg_init(&ca);
	io_fault_cfg_init(&cb);
	ca.short_tx = ca.short_rx = 1;
	cb.short_tx = cb.short_rx = 1;
	ca.seed = 5;
	cb.seed = 6;
	fault_run(&ca, &cb, sizeof(src), &p, src, dst);
	ck_assert(!p.b.closed);
	ck_assert_mem_eq(dst, src, sizeof(src));
	ck_assert_uint_gt(p.a.partial_tx, 0);
	ck_assert_uint_gt(p.b.rx_calls, 2);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_fault_error_nth)
{
	long mem0 = iw_mem_outstanding();
	static uint8_t src[50000], dst[50000];
	struct io_fault_cfg c;
	struct pair p;

	/* receive side: the 3rd recv fails */
	io_fault_cfg_init(&c);
	c.fail_rx_nth = 3;
	fault_run(NULL, &c, sizeof(src), &p, src, dst);
	ck_assert(p.b.closed);
	ck_assert_int_eq(p.b.closed_err, -EIO);
	ck_assert_uint_eq(p.b.rx_calls, 2);

	/* send side: the 2nd send fails with a chosen error */
	io_fault_cfg_init(&c);
	c.fail_tx_nth = 2;
	c.fail_err = -ETIMEDOUT;
	fault_run(&c, NULL, sizeof(src), &p, src, dst);
	ck_assert(p.a.closed);
	ck_assert_int_eq(p.a.closed_err, -ETIMEDOUT);
	ck_assert_uint_lt(p.b.rx_off, sizeof(src));
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_fault_flip)
{
	long mem0 = iw_mem_outstanding();
	static uint8_t src[40000], dst[40000];
	static const uint64_t offs[] = {0, 1, 8191, 8192, 39999};
	struct io_fault_cfg c;
	struct pair p;
	size_t i, j;

	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		io_fault_cfg_init(&c);
		c.short_rx = 1;
		c.seed = i + 1;
		c.flip_rx_off = offs[i];
		c.flip_mask = 0x40;
		fault_run(NULL, &c, sizeof(src), &p, src, dst);
		ck_assert(!p.b.closed);
		ck_assert_uint_eq(p.b.rx_off, sizeof(src));
		for (j = 0; j < sizeof(src); j++) {
			if (j == offs[i])
				ck_assert_uint_eq(dst[j], src[j] ^ 0x40);
			else
				ck_assert_uint_eq(dst[j], src[j]);
		}
	}
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_fault_cut_tx)
{
	long mem0 = iw_mem_outstanding();
	static uint8_t src[30000], dst[30000];
	struct io_fault_cfg c;
	struct pair p;

	io_fault_cfg_init(&c);
	c.cut_tx_after = 12345;
	c.short_tx = 1;
	fault_run(&c, NULL, sizeof(src), &p, src, dst);
	/* the peer got exactly the first 12345 bytes, then EOF */
	ck_assert(p.b.closed);
	ck_assert_int_eq(p.b.closed_err, 0);
	ck_assert_uint_eq(p.b.rx_off, 12345);
	ck_assert_mem_eq(dst, src, 12345);
	/* the sender's next send failed */
	ck_assert(p.a.closed);
	ck_assert_int_eq(p.a.closed_err, -ECONNRESET);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_fault_cut_rx)
{
	long mem0 = iw_mem_outstanding();
	static uint8_t src[30000], dst[30000];
	struct io_fault_cfg c;
	struct pair p;

	io_fault_cfg_init(&c);
	c.cut_rx_after = 777;
	c.cut_err = 0; /* EOF */
	fault_run(NULL, &c, sizeof(src), &p, src, dst);
	ck_assert(p.b.closed);
	ck_assert_int_eq(p.b.closed_err, 0);
	ck_assert_uint_eq(p.b.rx_off, 777);
	ck_assert_mem_eq(dst, src, 777);

	io_fault_cfg_init(&c);
	c.cut_rx_after = 0;
	fault_run(NULL, &c, sizeof(src), &p, src, dst);
	ck_assert(p.b.closed);
	ck_assert_int_eq(p.b.closed_err, -ECONNRESET);
	ck_assert_uint_eq(p.b.rx_off, 0);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_mss_pipe)
{
	struct engine *eng = inline_engine();
	struct io_backend *ba, *bb;
	struct io_fault_cfg c;
	struct pair p;

	sown_init(&p.a, 1, NULL, 0, NULL, 0);
	sown_init(&p.b, 2, NULL, 0, NULL, 0);
	io_fault_cfg_init(&c);
	ck_assert_int_eq(io_pipe_create(eng, 0, 0, &ba, &bb), 0);
	ba = io_fault_wrap(ba, &c);
	pair_start(eng, &p, ba, bb);
	ck_assert_int_gt(ep_mss(p.a.ep), 0);
	ck_assert_int_eq(ep_mss(p.a.ep), ep_mss(p.b.ep));
	sown_release(&p.a);
	sown_release(&p.b);
	engine_destroy(eng);
}
END_TEST

/* ---- a backend whose operations complete when the test says ---- */

struct held_be {
	struct io_backend be;
	bool rx_out, tx_out;
	size_t tx_len;	     /* octets of the outstanding send */
	struct iovec rx_iov; /* first piece of the outstanding receive */
};

static int hb_recv(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct held_be *h = (struct held_be *)(void *)be;

	h->rx_iov = iov[0];
	(void)cnt;
	h->rx_out = true;
	return 0;
}

static int hb_send(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct held_be *h = (struct held_be *)(void *)be;
	int i;

	h->tx_len = 0;
	for (i = 0; i < cnt; i++)
		h->tx_len += iov[i].iov_len;
	h->tx_out = true;
	return 0;
}

static int hb_shutdown(struct io_backend *be)
{
	(void)be;
	return 0;
}

/* what is outstanding completes when the test completes it */
static void hb_cancel(struct io_backend *be)
{
	(void)be;
}

static void hb_destroy(struct io_backend *be, bool abort)
{
	(void)abort;
	free(be);
}

static int hb_mss(struct io_backend *be)
{
	(void)be;
	return 1448;
}

static const struct io_backend_ops held_ops = {
	.name = "held",
	.recv = hb_recv,
	.send = hb_send,
	.shutdown = hb_shutdown,
	.cancel = hb_cancel,
	.destroy = hb_destroy,
	.mss = hb_mss,
};

/* An endpoint of owner |o| (one iovec per call) over a held backend. */
static struct held_be *held_start(struct engine *eng, struct sown *o,
				  uint64_t id, const uint8_t *src,
				  size_t src_len, uint8_t *dst, size_t dst_len)
{
	struct held_be *h = calloc(1, sizeof(*h));

	ck_assert_ptr_nonnull(h);
	h->be.ops = &held_ops;
	h->be.eng = eng;
	sown_init(o, id, src, src_len, dst, dst_len);
	o->max_iov = 1;
	o->ep = ep_create(eng, &h->be, &sown_ops, o);
	ck_assert_ptr_nonnull(o->ep);
	return h;
}

/*
 * The peer's FIN arrives while a send is in flight, and that send then
 * completes: the owner hears what the transport took (tx_done) before
 * closed(0). The peer may have read those octets and closed because of
 * them; a Send handed to TCP completes successfully rather than flushed.
 */
START_TEST(test_tx_done_after_peer_eof)
{
	static uint8_t src[100];
	struct engine *eng = inline_engine();
	struct sown o;
	struct held_be *h = held_start(eng, &o, 3, src, sizeof(src), NULL, 0);
	size_t sent;

	ep_kick_tx(o.ep);
	ck_assert(h->tx_out);
	sent = h->tx_len;
	ck_assert_uint_gt(sent, 0);
	/* EOF first: closed() waits for the send */
	h->be.up.rx_complete(h->be.up.up, 0);
	ck_assert(!o.closed);
	h->be.up.tx_complete(h->be.up.up, (ssize_t)sent);
	ck_assert_uint_eq(o.tx_off, sent);
	ck_assert(o.closed);
	ck_assert_int_eq(o.closed_err, 0);
	ck_assert_uint_eq(o.after_close, 0);
	sown_release(&o);
	engine_destroy(eng);
}
END_TEST

/*
 * The mirror case: a send fails (the peer reset) while a receive is in
 * flight, and that receive then completes with octets. They arrived
 * before the reset, so the owner gets rx_done for them before
 * closed(-ECONNRESET); dropping them would lose the peer's last message.
 */
START_TEST(test_rx_done_after_send_error)
{
	static uint8_t src[100], dst[100];
	struct engine *eng = inline_engine();
	struct sown o;
	struct held_be *h =
		held_start(eng, &o, 4, src, sizeof(src), dst, sizeof(dst));
	size_t got;

	ep_kick_rx(o.ep);
	ep_kick_tx(o.ep);
	ck_assert(h->rx_out);
	ck_assert(h->tx_out);
	got = h->rx_iov.iov_len < 7 ? h->rx_iov.iov_len : 7;
	ck_assert_uint_gt(got, 0);
	memset(h->rx_iov.iov_base, 0xa5, got);
	/* the send fails first: closed() waits for the receive */
	h->be.up.tx_complete(h->be.up.up, -ECONNRESET);
	ck_assert(!o.closed);
	h->be.up.rx_complete(h->be.up.up, (ssize_t)got);
	ck_assert_uint_eq(o.rx_off, got);
	ck_assert_uint_eq(dst[0], 0xa5);
	ck_assert_uint_eq(dst[got - 1], 0xa5);
	ck_assert(o.closed);
	ck_assert_int_eq(o.closed_err, -ECONNRESET);
	ck_assert_uint_eq(o.after_close, 0);
	sown_release(&o);
	engine_destroy(eng);
}
END_TEST

static Suite *io_transport_suite(void)
{
	Suite *s = suite_create("io_transport");
	TCase *tc = tcase_create("pipe");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pipe_bidirectional);
	tcase_add_test(tc, test_pipe_shutdown_eof_after_data);
	tcase_add_test(tc, test_pipe_abort_resets_peer);
	tcase_add_test(tc, test_pipe_pause_resume);
	tcase_add_test(tc, test_close_inside_rx_done);
	tcase_add_test(tc, test_set_owner_carries_bytes);
	tcase_add_test(tc, test_set_owner_busy);
	tcase_add_test(tc, test_mss_pipe);
	tcase_add_test(tc, test_tx_done_after_peer_eof);
	tcase_add_test(tc, test_rx_done_after_send_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("fault");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fault_short_io);
	tcase_add_test(tc, test_fault_error_nth);
	tcase_add_test(tc, test_fault_flip);
	tcase_add_test(tc, test_fault_cut_tx);
	tcase_add_test(tc, test_fault_cut_rx);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct engine *eng = engine_create(
		&(struct engine_attr){.mode = ENGINE_MODE_INLINE});

	if (!eng && (errno == ENOSYS || errno == EPERM))
		return 77; /* no io_uring here: skip */
	engine_destroy(eng);
	return iw_test_run_suite(io_transport_suite());
}

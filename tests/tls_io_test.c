/*
 * tests/tls_io_test.c: the TLS backend (io/tls.c) between two endpoints
 * over the in-memory pipe, driven by an INLINE engine: ciphertext cut at
 * every size (pipe capacity 1 octet = one byte per receive, random short
 * reads and writes from the fault injector), random plaintext iovec
 * layouts, a flipped ciphertext octet (AEAD: -EBADMSG), orderly close
 * (close_notify: EOF 0) and a cut stream during the handshake.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/engine.h"
#include "io/ep.h"
#include "io/testio.h"
#include "io/tls.h"
#include "testutil.h"
#include "util/mem.h"

struct own {
	struct endpoint *ep;
	uint64_t rng;
	const uint8_t *src;
	size_t tx_len, tx_off;
	uint8_t *dst;
	size_t rx_cap, rx_off;
	bool shut_when_sent;
	bool closed;
	int closed_err;
	bool released;
};

static int cut(struct own *o, uint8_t *base, size_t len, struct iovec *iov,
	       int cap)
{
	int n = 0;

	while (len && n < cap) {
		size_t k = n == cap - 1
				   ? len
				   : 1 + (size_t)(iw_test_rand(&o->rng) %
						  (len < 3000 ? len : 3000));

		iov[n].iov_base = base;
		iov[n].iov_len = k;
		base += k;
		len -= k;
		n++;
	}
	return n;
}

static int o_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct own *o = owner;

	return cut(o, o->dst + o->rx_off, o->rx_cap - o->rx_off, iov,
		   cap < 8 ? cap : 8);
}

static void o_rx_done(void *owner, size_t n)
{
	((struct own *)owner)->rx_off += n;
}

static int o_tx_iov(void *owner, struct iovec *iov, int cap)
{
	struct own *o = owner;

	if (o->tx_off == o->tx_len) {
		if (o->shut_when_sent) {
			o->shut_when_sent = false;
			ep_shutdown(o->ep);
		}
		return 0;
	}
	return cut(o, (uint8_t *)o->src + o->tx_off, o->tx_len - o->tx_off, iov,
		   cap < 8 ? cap : 8);
}

static void o_tx_done(void *owner, size_t n)
{
	((struct own *)owner)->tx_off += n;
}

static void o_closed(void *owner, int err)
{
	struct own *o = owner;

	o->closed = true;
	o->closed_err = err;
}

static const struct ep_ops o_ops = {
	.rx_iov = o_rx_iov,
	.rx_done = o_rx_done,
	.tx_iov = o_tx_iov,
	.tx_done = o_tx_done,
	.closed = o_closed,
};

static char psk_path[64];

static void psk_setup(void)
{
	FILE *f;

	strcpy(psk_path, "/tmp/iwarp-tls-io-XXXXXX");
	ck_assert_int_ge(mkstemp(psk_path), 0);
	f = fopen(psk_path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "00112233445566778899aabbccddeeff\n"
		   "0123456789abcdef0123456789abcdef\n");
	fclose(f);
}

static void psk_teardown(void)
{
	unlink(psk_path);
}

static struct io_tls_ctx *psk_ctx(void)
{
	struct io_tls_cfg cfg = {.psk_file = psk_path};
	struct io_tls_ctx *c = io_tls_ctx_create(&cfg);

	ck_assert_msg(c != NULL, "io_tls_ctx_create: %s", strerror(errno));
	return c;
}

struct run {
	struct engine *eng;
	struct own a, b; /* a: TLS client, b: TLS server */
};

static bool done_xfer(void *arg)
{
	struct run *r = arg;

	return (r->a.rx_off == r->a.rx_cap && r->b.rx_off == r->b.rx_cap &&
		r->a.tx_off == r->a.tx_len && r->b.tx_off == r->b.tx_len) ||
	       r->a.closed || r->b.closed;
}

static bool b_closed(void *arg)
{
	return ((struct run *)arg)->b.closed;
}

static void run_until(struct engine *eng, bool (*done)(void *), void *arg)
{
	int idle = 0;

	while (!done(arg) && idle < 10000) {
		int n = engine_run_once(eng, 0);

		ck_assert_int_ge(n, 0);
		idle = n ? 0 : idle + 1;
	}
}

/* Starts a TLS pair over a pipe of capacity |cap|, fault configs optional. */
static void run_start(struct run *r, size_t cap, const struct io_fault_cfg *fa,
		      const struct io_fault_cfg *fb)
{
	struct engine_attr ea = {.mode = ENGINE_MODE_INLINE};
	struct io_backend *ba, *bb;
	struct io_tls_ctx *ctx = psk_ctx();

	r->eng = engine_create(&ea);
	ck_assert_ptr_nonnull(r->eng);
	ck_assert_int_eq(io_pipe_create(r->eng, cap, cap, &ba, &bb), 0);
	if (fa)
		ba = io_fault_wrap(ba, fa);
	if (fb)
		bb = io_fault_wrap(bb, fb);
	ck_assert(ba && bb);
	ba = io_tls_wrap(ba, ctx, false);
	bb = io_tls_wrap(bb, ctx, true);
	ck_assert(ba && bb);
	io_tls_ctx_unref(ctx); /* the backends hold their own references */
	r->a.ep = ep_create(r->eng, ba, &o_ops, &r->a);
	r->b.ep = ep_create(r->eng, bb, &o_ops, &r->b);
	ck_assert(r->a.ep && r->b.ep);
}

static void run_end(struct run *r)
{
	int i;

	for (i = 0; i < 100; i++)
		engine_run_once(r->eng, 0);
	ep_close(r->a.ep);
	ep_close(r->b.ep);
	engine_destroy(r->eng);
}

static void own_init(struct own *o, uint64_t seed, const uint8_t *src,
		     size_t tx, uint8_t *dst, size_t rx)
{
	memset(o, 0, sizeof(*o));
	o->rng = seed;
	o->src = src;
	o->tx_len = tx;
	o->dst = dst;
	o->rx_cap = rx;
}

/* Both directions, ciphertext in pieces of every size. */
START_TEST(test_tls_splits)
{
	static const size_t caps[] = {1, 7, 1000, 0};
	size_t cap = caps[_i % 4];
	size_t len = cap == 1 ? 20000 : cap == 7 ? 60000 : 300000 + 17;
	uint8_t *s1 = malloc(len), *s2 = malloc(len);
	uint8_t *d1 = calloc(1, len), *d2 = calloc(1, len);
	struct io_fault_cfg fa, fb;
	long mem0 = iw_mem_outstanding();
	struct run r;

	iw_test_fill(s1, len, 3 + (uint64_t)_i);
	iw_test_fill(s2, len, 70 + (uint64_t)_i);
	own_init(&r.a, 5 + (uint64_t)_i, s1, len, d1, len);
	own_init(&r.b, 9 + (uint64_t)_i, s2, len, d2, len);
	io_fault_cfg_init(&fa);
	io_fault_cfg_init(&fb);
	fa.short_rx = fa.short_tx = fb.short_rx = fb.short_tx = 1;
	fa.seed = 100 + (uint64_t)_i;
	fb.seed = 200 + (uint64_t)_i;
	run_start(&r, cap, _i >= 4 ? &fa : NULL, _i >= 4 ? &fb : NULL);
	run_until(r.eng, done_xfer, &r);
	ck_assert_msg(!r.a.closed && !r.b.closed, "closed: a %d b %d",
		      r.a.closed_err, r.b.closed_err);
	ck_assert_mem_eq(d2, s1, len);
	ck_assert_mem_eq(d1, s2, len);
	run_end(&r);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
	free(s1);
	free(s2);
	free(d1);
	free(d2);
}
END_TEST

/* One flipped ciphertext octet in application data: the record fails its
 * AEAD check and the receiver ends with -EBADMSG, never delivers it. */
START_TEST(test_tls_flip)
{
	static uint8_t src[40000], dst[40000];
	struct io_fault_cfg fb;
	struct run r;

	iw_test_fill(src, sizeof(src), 1);
	own_init(&r.a, 1, src, sizeof(src), NULL, 0);
	own_init(&r.b, 2, NULL, 0, dst, sizeof(dst));
	io_fault_cfg_init(&fb);
	fb.short_rx = 1;
	fb.seed = 7;
	fb.flip_rx_off = 20000; /* well past the handshake */
	run_start(&r, 0, NULL, &fb);
	run_until(r.eng, b_closed, &r);
	ck_assert(r.b.closed);
	ck_assert_int_eq(r.b.closed_err, -EBADMSG);
	ck_assert_uint_lt(r.b.rx_off, sizeof(src));
	ck_assert_mem_eq(dst, src, r.b.rx_off); /* what came is intact */
	run_end(&r);
}
END_TEST

/* An orderly close: close_notify then FIN, the peer sees EOF (0) after
 * every byte. */
START_TEST(test_tls_shutdown)
{
	static uint8_t src[100000], dst[100000 + 1];
	struct run r;

	iw_test_fill(src, sizeof(src), 4);
	own_init(&r.a, 1, src, sizeof(src), NULL, 0);
	own_init(&r.b, 2, NULL, 0, dst, sizeof(dst));
	r.a.shut_when_sent = true;
	run_start(&r, 4096, NULL, NULL);
	run_until(r.eng, b_closed, &r);
	ck_assert(r.b.closed);
	ck_assert_int_eq(r.b.closed_err, 0);
	ck_assert_uint_eq(r.b.rx_off, sizeof(src));
	ck_assert_mem_eq(dst, src, sizeof(src));
	run_end(&r);
}
END_TEST

/* The stream ends during the handshake: before any byte from the peer
 * (not TLS: -EPROTO), or in the middle of its flight (-ECONNRESET). */
START_TEST(test_tls_cut_handshake)
{
	static uint8_t dst[100];
	struct io_fault_cfg fa;
	struct run r;

	own_init(&r.a, 1, NULL, 0, dst, sizeof(dst));
	own_init(&r.b, 2, NULL, 0, dst, sizeof(dst));
	io_fault_cfg_init(&fa);
	fa.cut_rx_after = _i ? 50 : 0; /* the client's receive side */
	fa.cut_err = 0;		       /* EOF */
	run_start(&r, 0, &fa, NULL);
	run_until(r.eng, done_xfer, &r);
	ck_assert(r.a.closed);
	ck_assert_int_eq(r.a.closed_err, _i ? -ECONNRESET : -EPROTO);
	run_end(&r);
}
END_TEST

static Suite *tls_io_suite(void)
{
	Suite *s = suite_create("tls_io");
	TCase *tc = tcase_create("pipe");

	tcase_add_unchecked_fixture(tc, psk_setup, psk_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_tls_splits, 0, 8);
	tcase_add_test(tc, test_tls_flip);
	tcase_add_test(tc, test_tls_shutdown);
	tcase_add_loop_test(tc, test_tls_cut_handshake, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(tls_io_suite)

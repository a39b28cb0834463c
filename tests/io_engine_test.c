/*
 * tests/io_engine_test.c: the progress engine over real loopback TCP in
 * every mode: echo of 0..8 MiB with random iovec layouts, many connections
 * at once, orderly shutdown, connect errors and timeout, engine_call /
 * engine_call_sync from other threads, timers, INLINE doorbell, leftovers
 * at destroy. Every wait is bounded by a deadline; no timing assertions.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/engine.h"
#include "io/engine_duty.h"
#include "io/engine_int.h"
#include "io/ep.h"
#include "io/net.h"
#include "io/testio.h"
#include "testutil.h"
#include "util/mem.h"

#define WAIT_NS (20ull * 1000000000ull)

/* The "direct" case's fixture: engines read and write their sockets with
 * system calls on readiness (engine_attr.direct_io). */
static bool g_direct;

static void direct_on(void)
{
	g_direct = true;
}

static void direct_off(void)
{
	g_direct = false;
}

static struct engine *mk_engine(enum engine_mode mode)
{
	struct engine_attr a = {
		.mode = mode, .busy_poll_us = 50, .direct_io = g_direct};
	struct engine *eng = engine_create(&a);

	ck_assert_msg(eng != NULL, "engine_create: %s", strerror(errno));
	return eng;
}

/* Waits (driving INLINE engines) until *v >= target; false on deadline. */
static bool wait_for(struct engine *eng, atomic_int *v, int target)
{
	uint64_t deadline = engine_now_ns() + WAIT_NS;

	while (atomic_load(v) < target) {
		if (engine_now_ns() > deadline)
			return false;
		if (engine_get_mode(eng) == ENGINE_MODE_INLINE)
			engine_run_once(eng, 10);
		else
			sched_yield();
	}
	return true;
}

/* ---- echo server ---- */

static atomic_int g_accepted, g_srv_closed;

struct echo {
	struct endpoint *ep;
	size_t head, len;
	uint8_t buf[4099]; /* odd size: wrapping iovecs */
};

static int echo_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct echo *e = owner;
	size_t cap_b = sizeof(e->buf), tail = (e->head + e->len) % cap_b;
	size_t free_b = cap_b - e->len, first;

	(void)cap;
	if (!free_b)
		return 0;
	first = cap_b - tail < free_b ? cap_b - tail : free_b;
	iov[0] = (struct iovec){e->buf + tail, first};
	if (first == free_b)
		return 1;
	iov[1] = (struct iovec){e->buf, free_b - first};
	return 2;
}

static void echo_rx_done(void *owner, size_t n)
{
	struct echo *e = owner;

	e->len += n;
	ep_kick_tx(e->ep);
}

static int echo_tx_iov(void *owner, struct iovec *iov, int cap)
{
	struct echo *e = owner;
	size_t cap_b = sizeof(e->buf), first;

	(void)cap;
	if (!e->len)
		return 0;
	first = cap_b - e->head < e->len ? cap_b - e->head : e->len;
	iov[0] = (struct iovec){e->buf + e->head, first};
	if (first == e->len)
		return 1;
	iov[1] = (struct iovec){e->buf, e->len - first};
	return 2;
}

static void echo_tx_done(void *owner, size_t n)
{
	struct echo *e = owner;

	e->head = (e->head + n) % sizeof(e->buf);
	e->len -= n;
	ep_kick_rx(e->ep);
}

static void echo_closed(void *owner, int err)
{
	struct echo *e = owner;

	(void)err;
	ep_close(e->ep);
	free(e);
	atomic_fetch_add(&g_srv_closed, 1);
}

static const struct ep_ops echo_ops = {
	.rx_iov = echo_rx_iov,
	.rx_done = echo_rx_done,
	.tx_iov = echo_tx_iov,
	.tx_done = echo_tx_done,
	.closed = echo_closed,
};

static struct io_fault_cfg *g_srv_fault; /* wrap accepted sockets */

static void echo_accept(void *arg, int fd, const struct sockaddr *peer,
			socklen_t len)
{
	struct engine *eng = arg;
	struct echo *e = calloc(1, sizeof(*e));
	struct io_backend *be;

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(peer);
	ck_assert_uint_gt(len, 0);
	be = io_sock_backend_create(eng, fd);
	if (g_srv_fault)
		be = io_fault_wrap(be, g_srv_fault);
	e->ep = ep_create(eng, be, &echo_ops, e);
	ck_assert_ptr_nonnull(e->ep);
	atomic_fetch_add(&g_accepted, 1);
}

/* ---- client: sends src, expects it back, random layouts ---- */

static atomic_int g_cli_done;

struct cli {
	struct engine *eng;
	struct endpoint *ep;
	uint64_t rng;
	const uint8_t *src;
	uint8_t *dst;
	size_t len, tx_off, rx_off, last_offer;
	unsigned int partial_tx;
	int conn_err;
	bool closed, done, shut_when_sent, no_rx;
	int closed_err;
	struct io_fault_cfg *fault;
	/* receives ask for provided memory (io/ep.h EP_RX_PROVIDED) */
	bool provided;
	size_t own_len;	     /* octets of the last set in dst itself */
	const uint8_t *prov; /* the provided memory seen first */
	bool prov_moved;     /* later receives got other memory */
};

static size_t rnd(struct cli *c, size_t n)
{
	return n ? (size_t)(iw_test_rand(&c->rng) % n) : 0;
}

static int split(struct cli *c, uint8_t *base, size_t len, struct iovec *iov,
		 int cap)
{
	int want = 1 + (int)rnd(c, (size_t)cap), n = 0;

	while (len && n < cap) {
		size_t k =
			(n == want - 1 || n == cap - 1) ? len : 1 + rnd(c, len);

		iov[n].iov_base = base;
		iov[n].iov_len = k;
		base += k;
		len -= k;
		n++;
	}
	return n;
}

static void cli_finish(struct cli *c)
{
	if (!c->done) {
		c->done = true;
		atomic_fetch_add(&g_cli_done, 1);
	}
}

static int cli_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct cli *c = owner;
	size_t left = c->len - c->rx_off;

	if (c->no_rx)
		return 0;
	if (!left)
		return 0;
	if (rnd(c, 2))
		left = 1 + rnd(c, left);
	/* sometimes one iovec, sometimes very many */
	return split(c, c->dst + c->rx_off, left, iov,
		     rnd(c, 4) ? 1 + (int)rnd(c, 8) : cap);
}

static void cli_rx_done(void *owner, size_t n)
{
	struct cli *c = owner;

	c->rx_off += n;
	if (c->rx_off == c->len)
		cli_finish(c);
}

static int cli_tx_iov(void *owner, struct iovec *iov, int cap)
{
	struct cli *c = owner;
	size_t left = c->len - c->tx_off;

	if (!left)
		return 0;
	if (rnd(c, 2))
		left = 1 + rnd(c, left);
	c->last_offer = left;
	return split(c, (uint8_t *)c->src + c->tx_off, left, iov,
		     rnd(c, 4) ? 1 + (int)rnd(c, 8) : cap);
}

static void cli_tx_done(void *owner, size_t n)
{
	struct cli *c = owner;

	ck_assert_uint_le(n, c->last_offer);
	if (n < c->last_offer)
		c->partial_tx++;
	c->tx_off += n;
	if (c->tx_off == c->len && c->shut_when_sent)
		ep_shutdown(c->ep);
}

static void cli_closed(void *owner, int err)
{
	struct cli *c = owner;

	c->closed = true;
	c->closed_err = err;
	cli_finish(c);
}

static const struct ep_ops cli_ops = {
	.rx_iov = cli_rx_iov,
	.rx_done = cli_rx_done,
	.tx_iov = cli_tx_iov,
	.tx_done = cli_tx_done,
	.closed = cli_closed,
};

/* Provided memory: some octets straight into dst, the rest (a random
 * length) into memory the endpoint provides, copied out at rx_done_at. */
static int cli_prov_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct cli *c = owner;
	size_t left = c->len - c->rx_off;
	int n = 0;

	if (!left)
		return 0;
	c->own_len = rnd(c, 3) ? 0 : rnd(c, left);
	if (c->own_len)
		n = split(c, c->dst + c->rx_off, c->own_len, iov, cap - 1);
	left -= c->own_len;
	iov[n].iov_base = NULL;
	iov[n].iov_len = rnd(c, 2) ? left : 1 + rnd(c, left);
	return n + 1;
}

static void cli_prov_rx_done_at(void *owner, size_t n, const uint8_t *prov)
{
	struct cli *c = owner;
	size_t own = n < c->own_len ? n : c->own_len;

	ck_assert_ptr_nonnull(prov); /* every set asked for some */
	if (!c->prov)
		c->prov = prov;
	else if (prov != c->prov)
		c->prov_moved = true;
	memcpy(c->dst + c->rx_off + own, prov, n - own);
	c->rx_off += n;
	if (c->rx_off == c->len)
		cli_finish(c);
}

static const struct ep_ops cli_prov_ops = {
	.rx_iov = cli_prov_rx_iov,
	.rx_done_at = cli_prov_rx_done_at,
	.tx_iov = cli_tx_iov,
	.tx_done = cli_tx_done,
	.closed = cli_closed,
};

static void cli_connected(void *arg, int fd)
{
	struct cli *c = arg;
	struct io_backend *be;

	if (fd < 0) {
		c->conn_err = fd;
		cli_finish(c);
		return;
	}
	be = io_sock_backend_create(c->eng, fd);
	if (c->fault)
		be = io_fault_wrap(be, c->fault);
	c->ep = ep_create(c->eng, be, c->provided ? &cli_prov_ops : &cli_ops,
			  c);
	ck_assert_ptr_nonnull(c->ep);
	if (!c->len)
		cli_finish(c);
}

struct closer {
	struct cli *cli;
	int n;
	struct listener *lst;
};

static void close_all(void *arg)
{
	struct closer *k = arg;
	int i;

	ck_assert(engine_in_thread(k->cli[0].eng));
	for (i = 0; i < k->n; i++)
		if (k->cli[i].ep)
			ep_close(k->cli[i].ep);
	if (k->lst)
		engine_listener_close(k->lst);
}

static int loopback(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*s4);
	}
	return 0;
}

/* echo_run's clients receive into provided memory; what each saw */
static bool g_cli_provided;
static const uint8_t *g_prov[64];
static bool g_prov_moved[64];

/*
 * |n| clients echo |len| bytes each through one listener. Returns false
 * when the family is unavailable (IPv6 off).
 */
static bool echo_run(struct engine *eng, int family, int n, size_t len,
		     uint64_t seed, struct io_fault_cfg *cli_fault)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct listener *lst;
	struct cli *cli = calloc((size_t)n, sizeof(*cli));
	uint8_t *src = malloc(len + 1);
	struct closer k;
	int i, rc;

	atomic_store(&g_accepted, 0);
	atomic_store(&g_srv_closed, 0);
	atomic_store(&g_cli_done, 0);
	loopback(family, &ss, &sl);
	rc = engine_listen(eng, (struct sockaddr *)&ss, sl, 128, echo_accept,
			   eng, &lst);
	if (rc == -EAFNOSUPPORT || rc == -EADDRNOTAVAIL) {
		free(cli);
		free(src);
		return false;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(engine_listener_addr(lst, &ss, &sl), 0);
	iw_test_fill(src, len + 1, seed);
	for (i = 0; i < n; i++) {
		cli[i].eng = eng;
		cli[i].rng = seed * 1000 + (uint64_t)i + 1;
		cli[i].src = src;
		cli[i].dst = malloc(len + 1);
		cli[i].len = len;
		cli[i].fault = cli_fault;
		cli[i].provided = g_cli_provided;
		ck_assert_int_eq(engine_connect(eng, (struct sockaddr *)&ss, sl,
						NULL, 0, 5000, cli_connected,
						&cli[i], NULL),
				 0);
	}
	ck_assert_msg(wait_for(eng, &g_cli_done, n), "echo did not finish");
	ck_assert(wait_for(eng, &g_accepted, n));
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(cli[i].conn_err, 0);
		ck_assert_msg(!cli[i].closed, "closed %d", cli[i].closed_err);
		ck_assert_uint_eq(cli[i].rx_off, len);
		ck_assert_mem_eq(cli[i].dst, src, len);
		if (i < 64) {
			g_prov[i] = cli[i].prov;
			g_prov_moved[i] = cli[i].prov_moved;
		}
	}
	k.cli = cli;
	k.n = n;
	k.lst = lst;
	ck_assert_int_eq(engine_call_sync(eng, close_all, &k), 0);
	/* the resets reach the servers, which free themselves */
	ck_assert(wait_for(eng, &g_srv_closed, n));
	for (i = 0; i < n; i++)
		free(cli[i].dst);
	free(cli);
	free(src);
	return true;
}

static const enum engine_mode modes[] = {
	ENGINE_MODE_ADAPTIVE,
	ENGINE_MODE_LATENCY,
	ENGINE_MODE_CPU,
	ENGINE_MODE_INLINE,
};

START_TEST(test_tcp_echo_sizes)
{
	static const size_t sizes[] = {
		0, 1, 4095, 65536 + 7, 1024 * 1024 + 3, 8 * 1024 * 1024};
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(modes[_i]);
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ck_assert(echo_run(eng, AF_INET, 1, sizes[i], i + 1, NULL));
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_tcp_echo_many)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(modes[_i]);

	ck_assert(echo_run(eng, AF_INET, 48, 200000, 7, NULL));
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/*
 * Provided receive memory (io/ep.h EP_RX_PROVIDED): the octets arrive
 * intact wherever the owner's own iovecs end; with direct sockets every
 * endpoint of the engine receives into the same scratch memory, with the
 * io_uring backend each into memory of its own that stays put.
 */
START_TEST(test_tcp_echo_provided)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(modes[_i]);
	bool direct = engine_direct(eng);
	int i, j, n = 12;

	g_cli_provided = true;
	ck_assert(echo_run(eng, AF_INET, n, 300000 + 13, 41, NULL));
	g_cli_provided = false;
	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(g_prov[i]);
		ck_assert(!g_prov_moved[i]);
		for (j = 0; j < i; j++)
			ck_assert_msg((g_prov[i] == g_prov[j]) == direct,
				      "clients %d and %d: %p, %p (direct %d)",
				      j, i, (const void *)g_prov[j],
				      (const void *)g_prov[i], direct);
	}
	/* the endpoints' own buffers went with them; the scratch with the
	 * engine */
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_tcp_echo_ipv6)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(ENGINE_MODE_ADAPTIVE);

	if (!echo_run(eng, AF_INET6, 2, 300000, 3, NULL))
		fprintf(stderr, "IPv6 loopback unavailable: skipped\n");
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_tcp_echo_faulty_short_io)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(ENGINE_MODE_CPU);
	struct io_fault_cfg c, s;

	io_fault_cfg_init(&c);
	io_fault_cfg_init(&s);
	c.short_rx = c.short_tx = 1;
	c.seed = 42;
	s.short_rx = s.short_tx = 1;
	s.seed = 43;
	g_srv_fault = &s;
	ck_assert(echo_run(eng, AF_INET, 3, 500000, 9, &c));
	g_srv_fault = NULL;
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- orderly shutdown: every byte, then EOF ---- */

struct sink {
	struct endpoint *ep;
	uint8_t buf[70000];
	size_t total;
	int closed_err;
	atomic_int closed;
};

static struct sink *g_sink;

static int sink_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct sink *s = owner;

	(void)cap;
	iov[0] = (struct iovec){s->buf, sizeof(s->buf)};
	return 1;
}

static void sink_rx_done(void *owner, size_t n)
{
	((struct sink *)owner)->total += n;
}

static int sink_tx_iov(void *owner, struct iovec *iov, int cap)
{
	(void)owner;
	(void)iov;
	(void)cap;
	return 0;
}

static void sink_tx_done(void *owner, size_t n)
{
	(void)owner;
	(void)n;
}

static void sink_closed(void *owner, int err)
{
	struct sink *s = owner;

	s->closed_err = err;
	ep_close(s->ep);
	atomic_store(&s->closed, 1);
}

static const struct ep_ops sink_ops = {
	.rx_iov = sink_rx_iov,
	.rx_done = sink_rx_done,
	.tx_iov = sink_tx_iov,
	.tx_done = sink_tx_done,
	.closed = sink_closed,
};

static void sink_accept(void *arg, int fd, const struct sockaddr *peer,
			socklen_t len)
{
	(void)peer;
	(void)len;
	g_sink->ep = ep_create_fd(arg, fd, &sink_ops, g_sink);
	ck_assert_ptr_nonnull(g_sink->ep);
}

START_TEST(test_tcp_shutdown_orderly)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(modes[_i]);
	struct sockaddr_storage ss;
	socklen_t sl;
	struct listener *lst;
	static struct sink sink;
	static uint8_t src[3 * 1024 * 1024 + 1], back[16];
	struct cli c;
	struct closer k;

	memset(&sink, 0, sizeof(sink));
	g_sink = &sink;
	memset(&c, 0, sizeof(c));
	c.eng = eng;
	c.rng = 5;
	c.src = src;
	c.dst = back;
	c.len = sizeof(src);
	c.shut_when_sent = true;
	c.no_rx = true;
	atomic_store(&g_cli_done, 0);
	loopback(AF_INET, &ss, &sl);
	ck_assert_int_eq(engine_listen(eng, (struct sockaddr *)&ss, sl, 4,
				       sink_accept, eng, &lst),
			 0);
	ck_assert_int_eq(engine_listener_addr(lst, &ss, &sl), 0);
	ck_assert_int_eq(engine_connect(eng, (struct sockaddr *)&ss, sl, NULL,
					0, 0, cli_connected, &c, NULL),
			 0);
	ck_assert(wait_for(eng, &sink.closed, 1));
	ck_assert_int_eq(sink.closed_err, 0);
	ck_assert_uint_eq(sink.total, sizeof(src));
	ck_assert_uint_eq(c.tx_off, sizeof(src));
	k.cli = &c;
	k.n = 1;
	k.lst = lst;
	ck_assert_int_eq(engine_call_sync(eng, close_all, &k), 0);
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- connect errors ---- */

START_TEST(test_connect_refused)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(modes[_i]);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct cli c;
	int fd;

	/* a port bound but not listening: refused, and nobody else can take
	 * it while the socket stays open */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	loopback(AF_INET, &ss, &sl);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&ss, sl), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	memset(&c, 0, sizeof(c));
	c.eng = eng;
	atomic_store(&g_cli_done, 0);
	ck_assert_int_eq(engine_connect(eng, (struct sockaddr *)&ss, sl, NULL,
					0, 5000, cli_connected, &c, NULL),
			 0);
	ck_assert(wait_for(eng, &g_cli_done, 1));
	ck_assert_int_eq(c.conn_err, -ECONNREFUSED);
	close(fd);
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* A plain listener with backlog 0 whose queue we fill: further SYNs are
 * dropped, so a connect can only time out. */
static int full_listener(struct sockaddr_storage *ss, socklen_t *sl,
			 int *fillers, int nfill)
{
	int lfd = socket(AF_INET, SOCK_STREAM, 0), i;

	loopback(AF_INET, ss, sl);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)ss, *sl), 0);
	ck_assert_int_eq(listen(lfd, 0), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)ss, sl), 0);
	for (i = 0; i < nfill; i++) {
		fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fillers[i], (struct sockaddr *)ss, *sl);
	}
	return lfd;
}

START_TEST(test_connect_timeout)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(modes[_i]);
	struct sockaddr_storage ss;
	socklen_t sl;
	int fill[4], lfd, i;
	struct cli c;

	lfd = full_listener(&ss, &sl, fill, 4);
	memset(&c, 0, sizeof(c));
	c.eng = eng;
	atomic_store(&g_cli_done, 0);
	ck_assert_int_eq(engine_connect(eng, (struct sockaddr *)&ss, sl, NULL,
					0, 150, cli_connected, &c, NULL),
			 0);
	ck_assert(wait_for(eng, &g_cli_done, 1));
	ck_assert_int_eq(c.conn_err, -ETIMEDOUT);
	engine_destroy(eng);
	for (i = 0; i < 4; i++)
		close(fill[i]);
	close(lfd);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

struct cancel_ctx {
	struct connect_req *req;
	atomic_int done;
};

static void do_cancel(void *arg)
{
	struct cancel_ctx *x = arg;

	engine_connect_cancel(x->req);
	atomic_store(&x->done, 1);
}

static void never_cb(void *arg, int fd)
{
	(void)arg;
	ck_abort_msg("callback after cancel (%d)", fd);
}

START_TEST(test_connect_cancel_and_leftovers)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(modes[_i]);
	struct sockaddr_storage ss, ls;
	socklen_t sl, lsl;
	struct cancel_ctx x = {0};
	struct connect_req *leak;
	struct listener *lst;
	int fill[4], lfd, i;

	lfd = full_listener(&ss, &sl, fill, 4);
	ck_assert_int_eq(engine_connect(eng, (struct sockaddr *)&ss, sl, NULL,
					0, 10000, never_cb, NULL, &x.req),
			 0);
	ck_assert_int_eq(engine_call_sync(eng, do_cancel, &x), 0);
	ck_assert_int_eq(atomic_load(&x.done), 1);
	/* leftovers: a pending connect and a listener nobody closes */
	ck_assert_int_eq(engine_connect(eng, (struct sockaddr *)&ss, sl, NULL,
					0, 10000, never_cb, NULL, &leak),
			 0);
	loopback(AF_INET, &ls, &lsl);
	ck_assert_int_eq(engine_listen(eng, (struct sockaddr *)&ls, lsl, 4,
				       echo_accept, eng, &lst),
			 0);
	engine_destroy(eng);
	for (i = 0; i < 4; i++)
		close(fill[i]);
	close(lfd);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_listen_errors)
{
	struct engine *eng = mk_engine(ENGINE_MODE_CPU);
	struct sockaddr_storage ss;
	socklen_t sl;
	struct listener *a, *b;
	struct closer k = {0};
	struct cli dummy = {0};

	loopback(AF_INET, &ss, &sl);
	ck_assert_int_eq(engine_listen(eng, (struct sockaddr *)&ss, sl, 4,
				       echo_accept, eng, &a),
			 0);
	ck_assert_int_eq(engine_listener_addr(a, &ss, &sl), 0);
	ck_assert_int_eq(engine_listen(eng, (struct sockaddr *)&ss, sl, 4,
				       echo_accept, eng, &b),
			 -EADDRINUSE);
	dummy.eng = eng;
	k.cli = &dummy;
	k.lst = a;
	ck_assert_int_eq(engine_call_sync(eng, close_all, &k), 0);
	engine_destroy(eng);
}
END_TEST

/* ---- congestion control and MSS ---- */

START_TEST(test_cc_and_mss)
{
	struct engine_attr a = {.mode = ENGINE_MODE_INLINE,
				.congestion_control = "reno"};
	char name[32];
	struct engine *eng;
	int fd;

	/* an unknown algorithm fails at creation, with the kernel's reason */
	a.congestion_control = "no-such-cc";
	ck_assert_ptr_null(engine_create(&a));
	ck_assert(errno == ENOENT || errno == EPERM);

	a.congestion_control = "reno"; /* always built in */
	eng = engine_create(&a);
	if (!eng) {
		ck_assert_int_eq(errno, EPERM); /* not in the allowed list */
		return;
	}
	ck_assert_str_eq(engine_cc(eng), "reno");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(engine_tcp_setup(fd, engine_cc(eng)), 0);
	ck_assert_int_eq(engine_tcp_cc(fd, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "reno");
	ck_assert_int_eq(engine_tcp_cc(fd, name, 2), -ENOSPC);
	close(fd);
	engine_destroy(eng);
}
END_TEST

struct mss_ctx {
	struct engine *eng;
	int mss;
	char cc[32];
	atomic_int done;
};

static void mss_connected(void *arg, int fd)
{
	struct mss_ctx *m = arg;
	struct endpoint *ep;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(engine_tcp_cc(fd, m->cc, sizeof(m->cc)), 0);
	ep = ep_create_fd(m->eng, fd, &sink_ops, NULL);
	m->mss = ep_mss(ep);
	ep_close(ep);
	atomic_store(&m->done, 1);
}

START_TEST(test_ep_mss)
{
	long mem0 = iw_mem_outstanding();
	struct engine *eng = mk_engine(ENGINE_MODE_INLINE);
	struct sockaddr_storage ss;
	socklen_t sl;
	struct listener *lst;
	static struct sink sink;
	struct mss_ctx m = {.eng = eng};
	struct closer k = {0};
	struct cli dummy = {0};

	memset(&sink, 0, sizeof(sink));
	g_sink = &sink;
	loopback(AF_INET, &ss, &sl);
	ck_assert_int_eq(engine_listen(eng, (struct sockaddr *)&ss, sl, 4,
				       sink_accept, eng, &lst),
			 0);
	ck_assert_int_eq(engine_listener_addr(lst, &ss, &sl), 0);
	ck_assert_int_eq(engine_connect(eng, (struct sockaddr *)&ss, sl, NULL,
					0, 0, mss_connected, &m, NULL),
			 0);
	ck_assert(wait_for(eng, &m.done, 1));
	ck_assert_int_gt(m.mss, 500);
	ck_assert_int_gt((int)strlen(m.cc), 0);
	ck_assert(wait_for(eng, &sink.closed, 1));
	dummy.eng = eng;
	k.cli = &dummy;
	k.lst = lst;
	ck_assert_int_eq(engine_call_sync(eng, close_all, &k), 0);
	engine_destroy(eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- cross-thread calls ---- */

struct calls {
	struct engine *eng;
	long counter;	   /* engine thread only */
	long off_thread;   /* calls that ran elsewhere: bug */
	long order_errors; /* async calls out of order: bug */
	long next_seq[4];
	atomic_int async_done;
};

struct call_arg {
	struct calls *c;
	int thread;
	long seq;
};

static void call_inc(void *arg)
{
	struct calls *c = arg;

	if (!engine_in_thread(c->eng))
		c->off_thread++;
	c->counter++;
}

static void call_seq(void *arg)
{
	struct call_arg *a = arg;
	struct calls *c = a->c;

	if (!engine_in_thread(c->eng))
		c->off_thread++;
	if (c->next_seq[a->thread] != a->seq)
		c->order_errors++;
	c->next_seq[a->thread] = a->seq + 1;
	c->counter++;
	free(a);
}

/* A sync call's item on the caller's stack: what the call wrote must be
 * there when engine_call_sync returns (the engine wakes the caller after
 * the call, with nothing of the item touched afterwards). */
struct sync_item {
	struct calls *c;
	long seq;
	long seen; /* written by the call */
};

static void call_inc_seen(void *arg)
{
	struct sync_item *it = arg;

	call_inc(it->c);
	it->seen = it->seq;
}

static void *sync_caller(void *arg)
{
	struct calls *c = arg;
	long i, early = 0;

	for (i = 0; i < 2000; i++) {
		/* a fresh item at the same stack address each round */
		struct sync_item it = {.c = c, .seq = i, .seen = -1};

		if (engine_call_sync(c->eng, call_inc_seen, &it) != 0)
			break;
		early += it.seen != i;
	}
	return (void *)(intptr_t)early;
}

static void *async_caller(void *arg)
{
	struct call_arg *base = arg;
	long i;

	for (i = 0; i < 5000; i++) {
		struct call_arg *a = malloc(sizeof(*a));

		a->c = base->c;
		a->thread = base->thread;
		a->seq = i;
		ck_assert_int_eq(engine_call(a->c->eng, call_seq, a), 0);
	}
	atomic_fetch_add(&base->c->async_done, 1);
	return NULL;
}

START_TEST(test_call_sync_threads)
{
	long mem0 = iw_mem_outstanding();
	struct calls c = {0};
	pthread_t th[4];
	int i;

	c.eng = mk_engine(modes[_i]);
	ck_assert(!engine_in_thread(c.eng));
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, sync_caller, &c),
				 0);
	if (engine_get_mode(c.eng) == ENGINE_MODE_INLINE) {
		/* drive it too: the callers either run it themselves or
		 * have this thread run their items */
		for (i = 0; i < 200; i++)
			engine_run_once(c.eng, 1);
	}
	for (i = 0; i < 4; i++) {
		void *early = NULL;

		pthread_join(th[i], &early);
		/* no call returned before its work had run */
		ck_assert_int_eq((intptr_t)early, 0);
	}
	engine_call_sync(c.eng, call_inc, &c);
	ck_assert_int_eq(c.counter, 4 * 2000 + 1);
	ck_assert_int_eq(c.off_thread, 0);
	engine_destroy(c.eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_call_async_order)
{
	long mem0 = iw_mem_outstanding();
	struct calls c = {0};
	struct call_arg base[4];
	pthread_t th[4];
	int i;

	c.eng = mk_engine(modes[_i]);
	for (i = 0; i < 4; i++) {
		base[i].c = &c;
		base[i].thread = i;
		ck_assert_int_eq(
			pthread_create(&th[i], NULL, async_caller, &base[i]),
			0);
	}
	ck_assert(wait_for(c.eng, &c.async_done, 4));
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* FIFO: a sync call queued after them runs after all of them */
	engine_call_sync(c.eng, call_inc, &c);
	ck_assert_int_eq(c.counter, 4 * 5000 + 1);
	ck_assert_int_eq(c.order_errors, 0);
	ck_assert_int_eq(c.off_thread, 0);
	engine_destroy(c.eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* INLINE: a call from another thread wakes a caller blocked in run_once. */
struct bell {
	struct engine *eng;
	atomic_int ran;
	atomic_int started;
};

static void bell_fn(void *arg)
{
	struct bell *b = arg;

	ck_assert(engine_in_thread(b->eng));
	atomic_store(&b->ran, 1);
}

static void *bell_thread(void *arg)
{
	struct bell *b = arg;

	while (!atomic_load(&b->started))
		sched_yield();
	engine_call(b->eng, bell_fn, b);
	return NULL;
}

START_TEST(test_inline_doorbell)
{
	long mem0 = iw_mem_outstanding();
	struct bell b = {0};
	pthread_t th;
	int i;

	b.eng = mk_engine(ENGINE_MODE_INLINE);
	ck_assert_int_eq(pthread_create(&th, NULL, bell_thread, &b), 0);
	atomic_store(&b.started, 1);
	/* blocks (up to 10 s per pass) until the call arrives */
	for (i = 0; i < 3 && !atomic_load(&b.ran); i++)
		ck_assert_int_ge(engine_run_once(b.eng, 10000), 0);
	ck_assert_int_eq(atomic_load(&b.ran), 1);
	pthread_join(th, NULL);
	engine_destroy(b.eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/*
 * INLINE with COOP_TASKRUN: receive completions are delivered both to a
 * caller polling with timeout 0 (it must fetch the deferred completion work
 * itself) and to a caller blocked in run_once (the kernel wakes it).
 */
struct rxw {
	struct engine *eng;
	struct sink *s;
	int fd;
	const char *msg;
	atomic_int started, written;
};

static struct sink rxw_sink;

static void rxw_open(void *arg)
{
	struct rxw *r = arg;

	r->s->ep = ep_create_fd(r->eng, r->fd, &sink_ops, r->s);
	ck_assert_ptr_nonnull(r->s->ep);
}

static void rxw_close(void *arg)
{
	struct rxw *r = arg;

	ep_close(r->s->ep);
}

static void *rxw_writer(void *arg)
{
	struct rxw *r = arg;

	while (!atomic_load(&r->started))
		sched_yield();
	ck_assert_int_eq(write(r->fd, r->msg, 5), 5);
	atomic_store(&r->written, 1);
	return NULL;
}

START_TEST(test_inline_rx_wakeup)
{
	long mem0 = iw_mem_outstanding();
	struct rxw r = {0};
	uint64_t deadline;
	pthread_t th;
	int sp[2], i;

	memset(&rxw_sink, 0, sizeof(rxw_sink));
	r.s = &rxw_sink;
	r.eng = mk_engine(ENGINE_MODE_INLINE);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp),
			 0);
	r.fd = sp[0];
	ck_assert_int_eq(engine_call_sync(r.eng, rxw_open, &r), 0);
	/* arm the receive */
	ck_assert_int_ge(engine_run_once(r.eng, 0), 0);
	/* another thread writes; we make no system call meanwhile, so the
	 * deferred completion work runs only if run_once(0) fetches it */
	r.fd = sp[1];
	r.msg = "hello";
	ck_assert_int_eq(pthread_create(&th, NULL, rxw_writer, &r), 0);
	atomic_store(&r.started, 1);
	while (!atomic_load(&r.written))
		;
	/* bounded by time, not by a count of passes a loaded machine may
	 * run through before the kernel has the data ready */
	deadline = engine_now_ns() + WAIT_NS;
	while (rxw_sink.total < 5 && engine_now_ns() < deadline)
		ck_assert_int_ge(engine_run_once(r.eng, 0), 0);
	ck_assert_uint_eq(rxw_sink.total, 5);
	pthread_join(th, NULL);
	/* now block: another thread's write must wake us */
	r.msg = "world";
	atomic_store(&r.started, 0);
	atomic_store(&r.written, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, rxw_writer, &r), 0);
	atomic_store(&r.started, 1);
	for (i = 0; i < 3 && rxw_sink.total < 10; i++)
		ck_assert_int_ge(engine_run_once(r.eng, 10000), 0);
	ck_assert_uint_eq(rxw_sink.total, 10);
	pthread_join(th, NULL);
	ck_assert_int_eq(engine_call_sync(r.eng, rxw_close, &r), 0);
	close(sp[1]);
	engine_destroy(r.eng);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- direct_io: other threads drive the engine ---- */

struct drv {
	struct engine *eng;
	struct endpoint *ep;
	int fd;
	uint8_t buf[256];
	pthread_t reader;    /* the thread of the last rx_done */
	atomic_size_t total; /* published after |reader| */
};

static int drv_rx_iov(void *owner, struct iovec *iov, int cap)
{
	struct drv *d = owner;

	(void)cap;
	iov[0] = (struct iovec){d->buf, sizeof(d->buf)};
	return 1;
}

static void drv_rx_done(void *owner, size_t n)
{
	struct drv *d = owner;

	d->reader = pthread_self();
	atomic_fetch_add(&d->total, n);
}

static void drv_closed(void *owner, int err)
{
	(void)err;
	ep_close(((struct drv *)owner)->ep);
	((struct drv *)owner)->ep = NULL;
}

static const struct ep_ops drv_ops = {
	.rx_iov = drv_rx_iov,
	.rx_done = drv_rx_done,
	.tx_iov = sink_tx_iov,
	.tx_done = sink_tx_done,
	.closed = drv_closed,
};

static void drv_open(void *arg)
{
	struct drv *d = arg;

	d->ep = ep_create_fd(d->eng, d->fd, &drv_ops, d);
	ck_assert_ptr_nonnull(d->ep);
}

static void drv_close(void *arg)
{
	struct drv *d = arg;

	if (d->ep)
		ep_close(d->ep);
	d->ep = NULL;
}

/* Waits (without driving) until |d| received |n| octets in all. */
static bool drv_wait_total(struct drv *d, size_t n)
{
	uint64_t deadline = engine_now_ns() + WAIT_NS;

	while (atomic_load(&d->total) < n)
		if (engine_now_ns() > deadline)
			return false;
		else
			sched_yield();
	return true;
}

/* A direct engine in |mode| with |d|'s endpoint on one end of a socket
 * pair (|sp|[1] is the test's end), after a first octet that the
 * progress thread received. */
static void drv_setup(struct drv *d, enum engine_mode mode, int sp[2])
{
	memset(d, 0, sizeof(*d));
	g_direct = true;
	d->eng = mk_engine(mode);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp),
			 0);
	d->fd = sp[0];
	ck_assert_int_eq(engine_call_sync(d->eng, drv_open, d), 0);
	ck_assert_int_eq(write(sp[1], "a", 1), 1);
	ck_assert(drv_wait_total(d, 1));
}

/* Undoes drv_setup and checks that nothing of the library's memory is
 * left beyond |mem0| (iw_mem_outstanding before the setup). */
static void drv_teardown(struct drv *d, int sp[2], long mem0)
{
	ck_assert_int_eq(engine_call_sync(d->eng, drv_close, d), 0);
	close(sp[1]);
	engine_destroy(d->eng);
	g_direct = false;
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}

/*
 * While a thread drives, the bytes that arrive are read by that thread
 * (not by the progress thread, which would then have to wake it); once it
 * stopped, the progress thread reads them again (after the grace period).
 */
START_TEST(test_direct_drive)
{
	long mem0 = iw_mem_outstanding();
	static struct drv d;
	struct pollfd pfd;
	uint64_t deadline;
	bool edges = false;
	int sp[2], efd;

	drv_setup(&d, modes[_i], sp);

	efd = engine_drive_begin(d.eng);
	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(engine_drive_begin(d.eng), -EBUSY);
	/* a pass holds the engine: a pass of the progress thread that began
	 * before we drove has ended when it returns */
	engine_drive_pass(d.eng, false);
	ck_assert_int_eq(write(sp[1], "hello", 5), 5);
	deadline = engine_now_ns() + WAIT_NS;
	while (atomic_load(&d.total) < 6 && engine_now_ns() < deadline) {
		pfd.fd = efd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ck_assert_int_ge(poll(&pfd, 1, 1000), 0);
		edges = pfd.revents != 0;
		engine_drive_pass(d.eng, edges);
	}
	ck_assert_uint_eq(atomic_load(&d.total), 6);
	ck_assert(pthread_equal(d.reader, pthread_self()));
	engine_drive_end(d.eng);

	ck_assert_int_eq(write(sp[1], "world", 5), 5);
	ck_assert(drv_wait_total(&d, 11));
	ck_assert(!pthread_equal(d.reader, pthread_self()));
	/* a second driver after the first left */
	ck_assert_int_ge(engine_drive_begin(d.eng), 0);
	engine_drive_end(d.eng);

	drv_teardown(&d, sp, mem0);
}
END_TEST

/*
 * The hand-back timer's push policy: a driver moves the pending timer
 * out only when it fires within half the grace period (or has already
 * fired, unhandled), so that the push costs one system call per period.
 */
START_TEST(test_tfd_push_due)
{
	const uint64_t g = 200000, now = 5000000000u;

	ck_assert(!engine_tfd_push_due(now, now + g, g));
	ck_assert(!engine_tfd_push_due(now, now + g / 2, g));
	ck_assert(engine_tfd_push_due(now, now + g / 2 - 1, g));
	ck_assert(engine_tfd_push_due(now, now, g));
	ck_assert(engine_tfd_push_due(now, now - g, g)); /* already due */
	ck_assert(!engine_tfd_push_due(now, now + 3 * g, 4 * g));
	ck_assert(engine_tfd_push_due(now, now + g, 4 * g));
}
END_TEST

/*
 * A driver that keeps coming back while the hand-back timer is pending
 * pushes it out; once the driver is gone for good the progress thread
 * still takes the sockets back and reads what arrives. Each drive lasts
 * longer than half the base grace period, so the pushes happen whatever
 * the scheduling (or the timer fired, finding a driver or not: the
 * hand-back must work after any mix).
 */
START_TEST(test_direct_drive_push)
{
	long mem0 = iw_mem_outstanding();
	static struct drv d;
	int sp[2], i;

	drv_setup(&d, modes[_i], sp);
	for (i = 0; i < 12; i++) {
		ck_assert_int_ge(engine_drive_begin(d.eng), 0);
		engine_drive_pass(d.eng, false);
		usleep(150);
		engine_drive_end(d.eng);
	}
	ck_assert_int_eq(write(sp[1], "world", 5), 5);
	ck_assert(drv_wait_total(&d, 6));
	ck_assert(!pthread_equal(d.reader, pthread_self()));

	drv_teardown(&d, sp, mem0);
}
END_TEST

static void *efd_poke(void *arg)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(*(int *)arg, &one, sizeof(one)), sizeof(one));
	return NULL;
}

/*
 * engine_drive_wait: the sleep and the readiness report in one call. A
 * socket's bytes are read by the driver within its wait (0); a watched
 * eventfd written by another thread ends the wait (1).
 */
START_TEST(test_direct_drive_wait)
{
	long mem0 = iw_mem_outstanding();
	static struct drv d;
	pthread_t th;
	int sp[2], wfd, r, i;

	drv_setup(&d, modes[_i], sp);
	wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(wfd, 0);

	ck_assert_int_ge(engine_drive_begin(d.eng), 0);
	ck_assert_int_eq(engine_drive_watch(d.eng, wfd), 0);
	ck_assert_int_eq(engine_drive_watch(d.eng, wfd), 0); /* already in */
	engine_drive_pass(d.eng, false);
	ck_assert_int_eq(write(sp[1], "hello", 5), 5);
	/* each wait returns on an edge; the bytes bring at least one */
	for (i = 0; i < 100 && atomic_load(&d.total) < 6; i++)
		ck_assert_int_ge(engine_drive_wait(d.eng), 0);
	ck_assert_uint_eq(atomic_load(&d.total), 6);
	ck_assert(pthread_equal(d.reader, pthread_self()));

	ck_assert_int_eq(pthread_create(&th, NULL, efd_poke, &wfd), 0);
	r = 0;
	for (i = 0; i < 100 && r == 0; i++)
		r = engine_drive_wait(d.eng);
	ck_assert_int_eq(r, 1);
	pthread_join(th, NULL);
	engine_drive_end(d.eng);

	/* the progress thread reads again after the driver left */
	ck_assert_int_eq(write(sp[1], "world", 5), 5);
	ck_assert(drv_wait_total(&d, 11));
	ck_assert_int_eq(engine_call_sync(d.eng, drv_close, &d), 0);
	close(sp[1]);
	close(wfd);
	engine_destroy(d.eng);
	g_direct = false;
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

struct relp {
	struct engine_pollee pe;
	int freed;
};

static void relp_free(struct engine_pollee *pe)
{
	io_container_of(pe, struct relp, pe)->freed++;
}

/*
 * engine_pollee_release: a pollee released while a driver sleeps in
 * engine_drive_wait (whose events may name it) is freed only when that
 * driver is back with the engine, not by a pass of another thread
 * meanwhile; with no driver asleep, at once.
 */
START_TEST(test_direct_release_deferred)
{
	struct relp a = {.freed = 0}, b = {.freed = 0};
	struct engine *eng;
	uint64_t one = 1;
	int wfd;

	g_direct = true;
	eng = mk_engine(ENGINE_MODE_ADAPTIVE);
	wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(wfd, 0);

	pthread_mutex_lock(&eng->run_lock);
	engine_pollee_release(eng, &a.pe, relp_free);
	ck_assert_int_eq(a.freed, 1);
	/* as if a driver slept in epoll_wait */
	atomic_store(&eng->drive_waiting, true);
	engine_pollee_release(eng, &b.pe, relp_free);
	pthread_mutex_unlock(&eng->run_lock);
	ck_assert_int_eq(b.freed, 0);
	/* another thread's pass (a poster's assist) meanwhile: still kept */
	engine_drive_pass(eng, false);
	ck_assert_int_eq(b.freed, 0);

	ck_assert_int_ge(engine_drive_begin(eng), 0);
	ck_assert_int_eq(engine_drive_watch(eng, wfd), 0);
	ck_assert_int_eq(write(wfd, &one, sizeof(one)), sizeof(one));
	ck_assert_int_eq(engine_drive_wait(eng), 1);
	engine_drive_end(eng);
	ck_assert_int_eq(b.freed, 1);
	ck_assert(!atomic_load(&eng->drive_waiting));

	close(wfd);
	engine_destroy(eng);
	g_direct = false;
}
END_TEST

/* ---- engine_call_sync_here on a direct engine nobody holds ---- */

struct callrec {
	struct engine *eng;
	atomic_int seq;
	int quiet_at, sync_at; /* seq values when each ran */
	pthread_t sync_thread;
	bool sync_in_thread;
};

static void callrec_quiet(void *arg)
{
	struct callrec *r = arg;

	r->quiet_at = atomic_fetch_add(&r->seq, 1) + 1;
}

static void callrec_sync(void *arg)
{
	struct callrec *r = arg;

	r->sync_at = atomic_fetch_add(&r->seq, 1) + 1;
	r->sync_thread = pthread_self();
	r->sync_in_thread = engine_in_thread(r->eng);
}

/* Waits (bounded) until the progress thread sleeps. */
static bool wait_sleeping(struct engine *eng)
{
	uint64_t deadline = engine_now_ns() + WAIT_NS;
	struct timespec ts = {0, 1000000};

	while (!atomic_load(&eng->sleeping)) {
		if (engine_now_ns() > deadline)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

/*
 * With direct_io, engine_call_sync_here while the progress thread sleeps runs
 * the call on the calling thread (no hand-off), holding the engine, after
 * the work queued before it; otherwise on the progress thread, in the same
 * order. Retried: the progress thread may wake for its own reasons.
 */
START_TEST(test_direct_call_sync_here)
{
	static const enum engine_mode m[] = {ENGINE_MODE_ADAPTIVE,
					     ENGINE_MODE_CPU};
	struct engine_work w;
	struct callrec r;
	struct engine *eng;
	int i, here = 0;

	g_direct = true;
	eng = mk_engine(m[_i]);
	for (i = 0; i < 50 && !here; i++) {
		memset(&r, 0, sizeof(r));
		r.eng = eng;
		ck_assert(wait_sleeping(eng));
		engine_work_init(&w, callrec_quiet, &r);
		engine_work_queue_quiet(eng, &w); /* queued, nobody woken */
		ck_assert_int_eq(engine_call_sync_here(eng, callrec_sync, &r),
				 0);
		ck_assert(r.sync_in_thread);
		ck_assert_int_eq(r.quiet_at, 1); /* the earlier work first */
		ck_assert_int_eq(r.sync_at, 2);
		here += pthread_equal(r.sync_thread, pthread_self()) != 0;
	}
	ck_assert_msg(here, "no call ran on the calling thread");
	engine_destroy(eng);
	g_direct = false;
}
END_TEST

/* An engine without direct_io, or an INLINE one, has nobody to drive it
 * from outside: engine_drive_begin says so. */
START_TEST(test_direct_drive_unsupported)
{
	struct engine *eng = mk_engine(ENGINE_MODE_ADAPTIVE);

	ck_assert(!engine_direct(eng));
	ck_assert_int_eq(engine_drive_begin(eng), -EOPNOTSUPP);
	engine_destroy(eng);
	g_direct = true;
	eng = mk_engine(ENGINE_MODE_INLINE);
	ck_assert(!engine_direct(eng));
	ck_assert_int_eq(engine_drive_begin(eng), -EOPNOTSUPP);
	engine_destroy(eng);
	g_direct = false;
}
END_TEST

struct asst {
	struct engine_work w;
	pthread_t who;
	atomic_int ran;
};

static void asst_fn(void *arg)
{
	struct asst *a = arg;

	a->who = pthread_self();
	atomic_fetch_add(&a->ran, 1);
}

/* Queues |a|'s item quietly and assists, up to |tries| times, pausing
 * so that the progress thread (CPU mode) can go to sleep, each time right
 * after a drive (begin, end) when |drive|; returns how many times the
 * item ran on the calling thread. */
static int asst_run(struct engine *eng, struct asst *a, int tries, bool drive)
{
	struct timespec nap = {0, 2000000};
	int i, mine = 0;

	for (i = 0; i < tries; i++) {
		int before = atomic_load(&a->ran);
		uint64_t deadline = engine_now_ns() + WAIT_NS;

		nanosleep(&nap, NULL);
		if (drive) {
			ck_assert_int_ge(engine_drive_begin(eng), 0);
			engine_drive_end(eng);
		}
		engine_work_queue_quiet(eng, &a->w);
		engine_assist(eng);
		while (atomic_load(&a->ran) == before &&
		       engine_now_ns() < deadline)
			sched_yield();
		ck_assert_int_eq(atomic_load(&a->ran), before + 1);
		if (pthread_equal(a->who, pthread_self()))
			mine++;
	}
	return mine;
}

/*
 * engine_assist: with direct_io, work queued while the progress thread
 * sleeps and a driver has just left (an event-driven program) runs on the
 * queuing thread (a post_send's message leaves in the poster's own system
 * call); while the progress thread has the sockets (a streaming program),
 * and without direct_io, it runs on the progress thread.
 */
START_TEST(test_direct_assist)
{
	long mem0 = iw_mem_outstanding();
	struct asst a;
	struct engine *eng;

	memset(&a, 0, sizeof(a));
	engine_work_init(&a.w, asst_fn, &a);
	g_direct = false;
	eng = mk_engine(ENGINE_MODE_CPU);
	ck_assert_int_eq(asst_run(eng, &a, 20, false), 0);
	engine_destroy(eng);

	g_direct = true;
	eng = mk_engine(ENGINE_MODE_CPU);
	ck_assert_int_eq(asst_run(eng, &a, 20, false), 0);
	/* the progress thread sleeps between tries: most run here; one is
	 * enough to show the path (a loaded machine may delay its sleep) */
	ck_assert_int_gt(asst_run(eng, &a, 200, true), 0);
	engine_destroy(eng);
	g_direct = false;
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_modes_misc)
{
	struct engine_attr a = {.mode = (enum engine_mode)7};
	struct engine *eng;

	ck_assert_ptr_null(engine_create(&a));
	ck_assert_int_eq(errno, EINVAL);
	eng = mk_engine(ENGINE_MODE_CPU);
	ck_assert_int_eq(engine_run_once(eng, 0), -EINVAL);
	ck_assert_int_eq(engine_get_mode(eng), ENGINE_MODE_CPU);
	engine_destroy(eng);
	eng = engine_create(NULL);
	ck_assert_ptr_nonnull(eng);
	ck_assert_int_eq(engine_get_mode(eng), ENGINE_MODE_ADAPTIVE);
	engine_destroy(eng);
}
END_TEST

/* ---- timers ---- */

struct tmr {
	struct engine *eng;
	struct engine_timer t[5];
	int order[8];
	int n;
	int rearmed;
	atomic_int fired;
};

struct tmr_arg {
	struct tmr *x;
	int id;
};

static struct tmr_arg targs[5];

static void tmr_cb(void *arg)
{
	struct tmr_arg *a = arg;
	struct tmr *x = a->x;

	ck_assert(engine_in_thread(x->eng));
	x->order[x->n++] = a->id;
	if (a->id == 4 && !x->rearmed) {
		/* re-arm from its own callback */
		x->rearmed = 1;
		ck_assert_int_eq(
			engine_timer_start(x->eng, &x->t[4], 1, tmr_cb, a), 0);
	}
	atomic_fetch_add(&x->fired, 1);
}

static void tmr_setup(void *arg)
{
	struct tmr *x = arg;
	static const uint64_t ms[5] = {60, 0, 20, 40, 30};
	int i;

	for (i = 0; i < 5; i++) {
		targs[i].x = x;
		targs[i].id = i;
		engine_timer_init(&x->t[i]);
		ck_assert(!engine_timer_armed(&x->t[i]));
		ck_assert_int_eq(engine_timer_start(x->eng, &x->t[i], ms[i],
						    tmr_cb, &targs[i]),
				 0);
		ck_assert(engine_timer_armed(&x->t[i]));
	}
	engine_timer_cancel(x->eng, &x->t[3]); /* 40 ms: never fires */
	ck_assert(!engine_timer_armed(&x->t[3]));
	engine_timer_cancel(x->eng, &x->t[3]); /* twice: no-op */
}

START_TEST(test_timers)
{
	long mem0 = iw_mem_outstanding();
	struct tmr x;
	int i;

	memset(&x, 0, sizeof(x));
	x.eng = mk_engine(modes[_i]);
	ck_assert_int_eq(engine_call_sync(x.eng, tmr_setup, &x), 0);
	/* 1, 2, 4, 0 fire; 4 re-arms and fires again */
	ck_assert(wait_for(x.eng, &x.fired, 5));
	ck_assert_int_eq(x.order[0], 1);
	ck_assert_int_eq(x.order[1], 2);
	ck_assert_int_eq(x.order[2], 4);
	for (i = 0; i < 5; i++)
		ck_assert_int_ne(x.order[i], 3);
	engine_destroy(x.eng);
	ck_assert_int_eq(x.n, 5);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* The duty share follows the last milliseconds: a thread that streams
 * (works 8 of every 10 µs) is high, one that answers a ping-pong (2 of
 * every 50 µs) low, and a stream that turns into a ping-pong turns low
 * within a few spans. */
START_TEST(test_duty_share)
{
	struct engine_duty d = {0};
	uint64_t t = 1000;
	int i;

	ck_assert(!engine_duty_high(&d)); /* nothing measured yet */
	for (i = 0; i < 1000; i++) {
		engine_duty_note(&d, true, t);
		engine_duty_note(&d, true, t + 4000); /* no change: ignored */
		engine_duty_note(&d, false, t + 8000);
		engine_duty_note(&d, false, t + 9000);
		t += 10000;
	}
	ck_assert(engine_duty_high(&d));
	ck_assert_uint_le(d.busy_ns + d.idle_ns, ENGINE_DUTY_SPAN_NS);
	ck_assert_uint_gt(d.busy_ns, 3 * d.idle_ns);
	for (i = 0; i < 1000; i++) {
		engine_duty_note(&d, true, t);
		engine_duty_note(&d, false, t + 2000);
		t += 50000;
	}
	ck_assert(!engine_duty_high(&d));
	ck_assert_uint_gt(d.idle_ns, 10 * d.busy_ns);
	/* one long sleep after a stream: the next burst finds it low */
	engine_duty_note(&d, true, t);
	engine_duty_note(&d, false, t + 5000000);
	ck_assert(engine_duty_high(&d));
	engine_duty_note(&d, true, t + 5000000 + 20000000);
	ck_assert(!engine_duty_high(&d));
}
END_TEST

static Suite *io_engine_suite(void)
{
	Suite *s = suite_create("io_engine");
	TCase *tc = tcase_create("engine");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_modes_misc);
	tcase_add_test(tc, test_duty_share);
	tcase_add_loop_test(tc, test_call_sync_threads, 0, 4);
	tcase_add_loop_test(tc, test_call_async_order, 0, 4);
	tcase_add_test(tc, test_inline_doorbell);
	tcase_add_test(tc, test_inline_rx_wakeup);
	tcase_add_loop_test(tc, test_timers, 0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("tcp");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_tcp_echo_sizes, 0, 4);
	tcase_add_loop_test(tc, test_tcp_echo_many, 0, 4);
	tcase_add_loop_test(tc, test_tcp_echo_provided, 0, 4);
	tcase_add_test(tc, test_tcp_echo_ipv6);
	tcase_add_test(tc, test_tcp_echo_faulty_short_io);
	tcase_add_loop_test(tc, test_tcp_shutdown_orderly, 0, 4);
	tcase_add_loop_test(tc, test_connect_refused, 0, 4);
	tcase_add_loop_test(tc, test_connect_timeout, 0, 4);
	tcase_add_loop_test(tc, test_connect_cancel_and_leftovers, 0, 4);
	tcase_add_test(tc, test_listen_errors);
	tcase_add_test(tc, test_cc_and_mss);
	tcase_add_test(tc, test_ep_mss);
	suite_add_tcase(s, tc);

	/* the same transfers over direct sockets, and the other threads
	 * that drive a direct engine */
	tc = tcase_create("direct");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, direct_on, direct_off);
	tcase_add_loop_test(tc, test_tcp_echo_sizes, 0, 3);
	tcase_add_loop_test(tc, test_tcp_echo_many, 0, 3);
	tcase_add_loop_test(tc, test_tcp_echo_provided, 0, 3);
	tcase_add_test(tc, test_tcp_echo_faulty_short_io);
	tcase_add_loop_test(tc, test_tcp_shutdown_orderly, 0, 3);
	tcase_add_loop_test(tc, test_connect_cancel_and_leftovers, 0, 3);
	tcase_add_loop_test(tc, test_direct_drive, 0, 3);
	tcase_add_test(tc, test_tfd_push_due);
	tcase_add_loop_test(tc, test_direct_drive_push, 0, 3);
	tcase_add_test(tc, test_direct_assist);
	suite_add_tcase(s, tc);
	tc = tcase_create("direct_api");
	tcase_add_loop_test(tc, test_direct_drive_wait, 0, 3);
	tcase_add_loop_test(tc, test_direct_call_sync_here, 0, 2);
	tcase_add_test(tc, test_direct_release_deferred);
	tcase_add_test(tc, test_direct_drive_unsupported);
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
	return iw_test_run_suite(io_engine_suite());
}

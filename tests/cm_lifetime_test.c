/*
 * tests/cm_lifetime_test.c: lifetimes of connection-manager objects over
 * real loopback TCP: a QP or an id destroyed while the MPA exchange is in
 * flight, from either side and in either order (iwarp_destroy_qp then
 * iwarp_cm_destroy_id, as librdmacm allows), looped so that the engine's
 * hand-over to the datapath races the application's destroy; and a
 * listener under a flood of connections that never send an MPA Request
 * (pending cap, MPA Request timeout, EMFILE back-off). Meant for the ASan
 * build: a use-after-free is the failure these loops look for. Every wait
 * is bounded; nothing asserts on timing.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cm/cm_int.h"
#include "iwarp/iwarp.h"
#include "verbs/verbs.h"
#include "cm_testutil.h"
#include "testutil.h"
#include "util/mem.h"

#define WAIT_MS	    20000 /* upper bound of any wait (a hang fails the test) */
#define RACE_ROUNDS 200

static void attr_race(struct iwarp_context_attr *a)
{
	iwarp_context_attr_init(a);
	a->mpa_rev = 2;
	a->crc = IWARP_CRC_OFF;
	a->markers = 0;
	a->p2p = IWARP_P2P_NONE;
	a->progress = IWARP_PROGRESS_CPU;
	a->mpa_reply_grace_ms = 0; /* hand over as soon as the Reply is in */
	a->responder_tx_wait_ms = 0;
	a->mpa_req_timeout_ms = 5000;
	a->mpa_rep_timeout_ms = 5000;
}

static void side_open(struct cmt_side *s, const struct iwarp_context_attr *a)
{
	cmt_side_open(s, a, 1024);
}

static struct iwarp_cm_event *expect_ev(struct iwarp_event_channel *ch,
					enum iwarp_cm_event_type type)
{
	return cmt_expect_ev(ch, type, WAIT_MS);
}

static void ack_ev(struct iwarp_event_channel *ch,
		   enum iwarp_cm_event_type type)
{
	ck_assert_int_eq(iwarp_cm_ack_event(expect_ev(ch, type)), 0);
}

/* Acks every event queued on |ch| now (none of them is waited for). */
static void drain(struct iwarp_event_channel *ch)
{
	struct iwarp_cm_event *ev;

	while (cmt_ch_ready(ch, 0)) {
		ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), 0);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
}

/* Waits (bounded) until the block count is back to |base|. */
static void wait_mem(long base)
{
	int i;

	for (i = 0; i < WAIT_MS && iw_mem_outstanding() != base; i++)
		poll(NULL, 0, 1);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}

/* Busy-waits |us| microseconds (a sleep would round up to the tick). */
static void spin_us(unsigned int us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000L +
			 (t.tv_nsec - t0.tv_nsec) / 1000 <
		 (long)us);
}

/* The server's child for the client's connect, with a QP, not accepted. */
static struct iwarp_cm_id *take_request(struct cmt_side *srv)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *child;

	ev = expect_ev(srv->ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(srv, &qa, 4);
	ck_assert_int_eq(iwarp_cm_create_qp(child, srv->pd, &qa), 0);
	return child;
}

/* How an id and its QP are destroyed. */
enum how {
	HOW_CM_QP,   /* iwarp_cm_destroy_qp, iwarp_cm_destroy_id */
	HOW_QP_ID,   /* iwarp_destroy_qp, then iwarp_cm_destroy_id */
	HOW_ID_QP,   /* iwarp_cm_destroy_id, then iwarp_destroy_qp */
	HOW_ID_ONLY, /* iwarp_cm_destroy_id only; the QP at the end */
	HOW_N,
};

/* Destroys |id| (its QP first or last per |how|); returns a QP the caller
 * still has to destroy (HOW_ID_ONLY), else NULL. */
static struct iwarp_qp *destroy_how(struct iwarp_cm_id *id, enum how how)
{
	struct iwarp_qp *qp = id->qp;

	switch (how) {
	case HOW_CM_QP:
		iwarp_cm_destroy_qp(id);
		ck_assert_ptr_null(id->qp);
		ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
		return NULL;
	case HOW_QP_ID:
		ck_assert_int_eq(iwarp_destroy_qp(qp), 0);
		ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
		return NULL;
	case HOW_ID_QP:
		ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
		ck_assert_int_eq(iwarp_destroy_qp(qp), 0);
		return NULL;
	case HOW_ID_ONLY:
	case HOW_N:
	default:
		ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
		return qp;
	}
}

/* ---- destroy order, deterministic ---- */

/*
 * iwarp_destroy_qp then iwarp_cm_destroy_id (ibv_destroy_qp then
 * rdma_destroy_id): _i 0 idle id, _i 1 initiator whose Request is out
 * (the Reply comes after the QP is gone: CONNECT_ERROR, no ESTABLISHED),
 * _i 2 responder right after accept, _i 3 an established pair.
 */
START_TEST(test_destroy_qp_then_id)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *c, *child;
	struct cmt_side srv, cli;
	uint16_t port;

	attr_race(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = cmt_listen(&srv, 16, &port);
	c = cmt_client(&cli, port, 4, WAIT_MS);
	if (_i == 0) {
		ck_assert_int_eq(iwarp_destroy_qp(c->qp), 0);
		ck_assert_int_eq(iwarp_cm_destroy_id(c), 0);
		goto out;
	}
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	if (_i == 1) {
		/* the QP goes while the Request is on its way */
		ck_assert_int_eq(iwarp_destroy_qp(c->qp), 0);
		child = take_request(&srv);
		ck_assert_int_eq(iwarp_cm_accept(child, NULL), 0);
		ev = expect_ev(cli.ch, IWARP_CM_EVENT_CONNECT_ERROR);
		ck_assert_int_lt(ev->status, 0);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		ck_assert_ptr_null(c->qp); /* the id forgot it */
		ck_assert_int_eq(iwarp_cm_destroy_id(c), 0);
		destroy_how(child, HOW_CM_QP);
		goto out;
	}
	child = take_request(&srv);
	ck_assert_int_eq(iwarp_cm_accept(child, NULL), 0);
	if (_i == 2) {
		ck_assert_int_eq(iwarp_destroy_qp(child->qp), 0);
		ck_assert_int_eq(iwarp_cm_destroy_id(child), 0);
		destroy_how(c, HOW_CM_QP);
		goto out;
	}
	ack_ev(cli.ch, IWARP_CM_EVENT_ESTABLISHED);
	ack_ev(srv.ch, IWARP_CM_EVENT_ESTABLISHED);
	destroy_how(c, HOW_QP_ID);
	destroy_how(child, HOW_QP_ID);
out:
	drain(srv.ch);
	drain(cli.ch);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* ---- destroy racing the hand-over, looped ---- */

/*
 * RACE_ROUNDS connections; in each, one side (the initiator when _i is 0,
 * the responder when 1) destroys its QP and id (every enum how in turn)
 * a varying few microseconds after accept, while the Reply is being sent
 * or received and the engine hands the stream to the datapath. The other
 * side is destroyed afterwards. Nothing may touch a freed QP or id.
 */
START_TEST(test_destroy_races_handoff)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_id *l, *c, *child;
	struct iwarp_qp *left;
	struct cmt_side srv, cli;
	uint16_t port;
	int r;

	attr_race(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = cmt_listen(&srv, 16, &port);
	for (r = 0; r < RACE_ROUNDS; r++) {
		enum how how = (enum how)(r % HOW_N);

		c = cmt_client(&cli, port, 4, WAIT_MS);
		ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
		child = take_request(&srv);
		ck_assert_int_eq(iwarp_cm_accept(child, NULL), 0);
		spin_us((unsigned int)(r * 7) % 400u);
		if (_i == 0) {
			left = destroy_how(c, how);
			drain(cli.ch);
			destroy_how(child, HOW_CM_QP);
		} else {
			left = destroy_how(child, how);
			destroy_how(c, HOW_CM_QP);
			drain(cli.ch);
		}
		if (left)
			ck_assert_int_eq(iwarp_destroy_qp(left), 0);
		drain(srv.ch);
	}
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	drain(srv.ch);
	drain(cli.ch);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/*
 * RACE_ROUNDS connect attempts whose initiator is destroyed (every enum
 * how) a varying few microseconds after connect: before the TCP connect
 * completed, with the Request out, or as the Reply arrives. The responder
 * accepts whatever Request it sees.
 */
START_TEST(test_destroy_initiator_mid_handshake)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *c;
	struct iwarp_qp_init_attr qa;
	struct iwarp_qp *left;
	struct cmt_side srv, cli;
	uint16_t port;
	int r;

	attr_race(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = cmt_listen(&srv, 16, &port);
	for (r = 0; r < RACE_ROUNDS; r++) {
		c = cmt_client(&cli, port, 4, WAIT_MS);
		ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
		spin_us((unsigned int)(r * 13) % 600u);
		left = destroy_how(c, (enum how)(r % HOW_N));
		if (left)
			ck_assert_int_eq(iwarp_destroy_qp(left), 0);
		drain(cli.ch);
		/* the responder: accept and destroy what came in */
		while (cmt_ch_ready(srv.ch, 0)) {
			ck_assert_int_eq(iwarp_cm_get_event(srv.ch, &ev), 0);
			if (ev->event != IWARP_CM_EVENT_CONNECT_REQUEST) {
				ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
				continue;
			}
			c = ev->id;
			ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
			cmt_qp_attr(&srv, &qa, 4);
			ck_assert_int_eq(iwarp_cm_create_qp(c, srv.pd, &qa), 0);
			iwarp_cm_accept(c, NULL); /* may fail: peer gone */
			destroy_how(c, HOW_QP_ID);
		}
	}
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	drain(srv.ch);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* iwarp_destroy_qp on its own thread. */
static void *destroy_qp_thread(void *arg)
{
	return (void *)(intptr_t)iwarp_destroy_qp(arg);
}

/*
 * RACE_ROUNDS connections whose initiator's QP and id are destroyed at the
 * same time from two application threads (iwarp_destroy_qp on one,
 * iwarp_cm_destroy_id on the other), while the Reply is arriving: the
 * unlink of the pair is atomic, whichever goes first.
 */
START_TEST(test_destroy_qp_and_id_concurrently)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_id *l, *c, *child;
	struct cmt_side srv, cli;
	pthread_t th;
	void *rc;
	uint16_t port;
	int r;

	attr_race(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = cmt_listen(&srv, 16, &port);
	for (r = 0; r < RACE_ROUNDS; r++) {
		c = cmt_client(&cli, port, 4, WAIT_MS);
		ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
		child = take_request(&srv);
		ck_assert_int_eq(iwarp_cm_accept(child, NULL), 0);
		spin_us((unsigned int)(r * 11) % 300u);
		ck_assert_int_eq(
			pthread_create(&th, NULL, destroy_qp_thread, c->qp), 0);
		ck_assert_int_eq(iwarp_cm_destroy_id(c), 0);
		ck_assert_int_eq(pthread_join(th, &rc), 0);
		ck_assert_ptr_null(rc);
		drain(cli.ch);
		destroy_how(child, HOW_CM_QP);
		drain(srv.ch);
	}
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	drain(srv.ch);
	drain(cli.ch);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* INLINE progress: a thread polling a channel while ids go ---- */

struct poller {
	struct iwarp_event_channel *ch;
	volatile int stop;
	unsigned long calls;
};

/* Calls iwarp_cm_get_event (non-blocking: it drives the INLINE engines of
 * the channel's ids once per call) until told to stop. */
static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	struct iwarp_cm_event *ev;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		if (iwarp_cm_get_event(p->ch, &ev) == 0)
			iwarp_cm_ack_event(ev);
		__atomic_add_fetch(&p->calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * RACE_ROUNDS times: an id on an INLINE-progress context (explicit, _i 0;
 * the default context, opened for the id and closed with it, _i 1) while
 * another thread keeps calling iwarp_cm_get_event on its channel, which
 * drives the engines of the channel's ids; the id is destroyed and the
 * context closed. Once iwarp_cm_destroy_id returned, no get_event may still
 * be running the id's engine.
 */
START_TEST(test_inline_get_event_vs_destroy)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_context *ctx = NULL;
	struct iwarp_cm_id *id;
	struct poller p;
	unsigned long seen;
	pthread_t th;
	int r, fl;

	memset(&p, 0, sizeof(p));
	p.ch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(p.ch);
	fl = fcntl(p.ch->fd, F_GETFL);
	ck_assert_int_eq(fcntl(p.ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	if (_i == 1)
		setenv("IWARP_PROGRESS", "inline", 1); /* the default context */
	ck_assert_int_eq(pthread_create(&th, NULL, poll_thread, &p), 0);
	for (r = 0; r < RACE_ROUNDS; r++) {
		if (_i == 0) {
			attr_race(&a);
			a.progress = IWARP_PROGRESS_INLINE;
			ctx = iwarp_open_context(&a);
			ck_assert_ptr_nonnull(ctx);
		}
		ck_assert_int_eq(
			iwarp_cm_create_id(p.ch, ctx, &id, NULL, IWARP_PS_TCP),
			0);
		ck_assert_int_eq(iwarp_query_context(id->verbs, &a), 0);
		ck_assert_int_eq(a.progress, IWARP_PROGRESS_INLINE);
		/* let the poller pick the id's context up */
		seen = __atomic_load_n(&p.calls, __ATOMIC_RELAXED);
		while (__atomic_load_n(&p.calls, __ATOMIC_RELAXED) < seen + 2)
			sched_yield();
		spin_us((unsigned int)(r * 3) % 50u);
		ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
		if (_i == 0)
			ck_assert_int_eq(iwarp_close_context(ctx), 0);
	}
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	iwarp_cm_destroy_event_channel(p.ch);
	if (_i == 1)
		unsetenv("IWARP_PROGRESS");
	wait_mem(base);
}
END_TEST

/* ---- floods of silent peers ---- */

#define FLOOD (CM_PENDING_MAX + 44)

/* A raw TCP socket connected to 127.0.0.1:|port| (never speaks MPA). */
static int raw_connect(uint16_t port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* True when the peer closed (EOF or reset) |fd| within |ms|. */
static bool raw_closed(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char buf[64];

	return poll(&p, 1, ms) == 1 && recv(fd, buf, sizeof(buf), 0) <= 0;
}

static struct cm_listen_stats stats(struct iwarp_cm_id *l)
{
	struct cm_listen_stats st;

	ck_assert_int_eq(cm_listen_stats_get(l, &st), 0);
	ck_assert_uint_le(st.pending_max, CM_PENDING_MAX); /* the cap holds */
	return st;
}

/* Waits (bounded) until |l| accepted |n| connections in all. */
static struct cm_listen_stats wait_accepted(struct iwarp_cm_id *l,
					    unsigned long n)
{
	struct cm_listen_stats st = stats(l);
	int i;

	for (i = 0; i < WAIT_MS && st.accepted < n; i++) {
		poll(NULL, 0, 1);
		st = stats(l);
	}
	ck_assert_uint_ge(st.accepted, n);
	return st;
}

/* A normal client connects to |port| and is accepted: both ESTABLISHED. */
static void normal_client(struct cmt_side *srv, struct cmt_side *cli,
			  uint16_t port)
{
	struct iwarp_cm_id *c, *child;

	c = cmt_client(cli, port, 4, WAIT_MS);
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	child = take_request(srv);
	ck_assert_int_eq(iwarp_cm_accept(child, NULL), 0);
	ack_ev(cli->ch, IWARP_CM_EVENT_ESTABLISHED);
	ack_ev(srv->ch, IWARP_CM_EVENT_ESTABLISHED);
	destroy_how(c, HOW_CM_QP);
	destroy_how(child, HOW_CM_QP);
	drain(cli->ch);
	drain(srv->ch);
}

/*
 * FLOOD peers connect and never send an MPA Request. At most
 * CM_PENDING_MAX wait for their Request (the counters' high-water mark,
 * checked at every look); the rest are reset at once. A normal client
 * connects while fewer than the cap are pending; the MPA Request timer
 * frees every silent child (their sockets see EOF/RST while the peers
 * still hold them open) and a normal client connects again. No event
 * reaches the listener's channel for the silent peers.
 */
START_TEST(test_flood_pending_cap)
{
	static int fds[FLOOD];
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct cm_listen_stats st;
	struct iwarp_cm_id *l;
	struct cmt_side srv, cli;
	uint16_t port;
	int i, closed = 0;

	attr_race(&a);
	/* long enough that the first silent peers still wait when the last
	 * ones are accepted, even on a slow machine */
	a.mpa_req_timeout_ms = 10000;
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = cmt_listen(&srv, 0, &port); /* backlog 0: the default, 1024 */
	/* below the cap, a normal client gets through */
	for (i = 0; i < 100; i++)
		fds[i] = raw_connect(port);
	st = wait_accepted(l, 100);
	ck_assert_uint_eq(st.refused, 0);
	normal_client(&srv, &cli, port);
	/* beyond it, the excess is reset at once */
	for (; i < FLOOD; i++)
		fds[i] = raw_connect(port);
	st = wait_accepted(l, FLOOD + 1);
	ck_assert_uint_ge(st.refused, 1);
	ck_assert_uint_le(st.pending, CM_PENDING_MAX);
	/* the MPA Request deadline frees every silent child */
	for (i = 0; i < FLOOD; i++) {
		ck_assert_msg(raw_closed(fds[i], WAIT_MS),
			      "silent peer %d not closed", i);
		closed++;
	}
	ck_assert_int_eq(closed, FLOOD);
	for (i = 0; i < WAIT_MS && stats(l).pending; i++)
		poll(NULL, 0, 1);
	ck_assert_uint_eq(stats(l).pending, 0);
	ck_assert(!cmt_ch_ready(srv.ch, 0));
	/* the listener accepts again while the silent peers still hold
	 * their sockets */
	normal_client(&srv, &cli, port);
	for (i = 0; i < FLOOD; i++)
		close(fds[i]);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* ---- out of descriptors ---- */

#define EM_CONN 4

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return tv_s(&ru.ru_utime) + tv_s(&ru.ru_stime);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The highest open descriptor of this process, or -1. */
static int max_fd(void)
{
	int fd, hi = -1;

	for (fd = 0; fd < 65536; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			hi = fd;
	return hi;
}

/*
 * The forked child of test_emfile_backoff (plain exit codes, no Check):
 * a listener whose process has no descriptor left when EM_CONN peers
 * connect. Over a 3 s wait the process must use little CPU (a listener
 * that re-arms its accept at once after EMFILE spins an engine thread),
 * then, once descriptors are freed, accept the waiting connections.
 */
static int emfile_child(void)
{
	struct iwarp_context_attr a;
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ch;
	struct iwarp_cm_id *l;
	struct sockaddr_storage ss;
	struct sockaddr_in sin;
	struct cm_listen_stats st;
	struct rlimit rl;
	int cfd[EM_CONN], spare[EM_CONN + 4], fill[256], nfill = 0, i, fd;
	double c0, t0, cpu, wall;

	attr_race(&a);
	a.mpa_req_timeout_ms = 30000;
	ctx = iwarp_open_context(&a);
	ch = iwarp_cm_create_event_channel();
	if (!ctx || !ch ||
	    iwarp_cm_create_id(ch, ctx, &l, NULL, IWARP_PS_TCP) ||
	    iwarp_cm_getaddr("127.0.0.1", 0, &ss) ||
	    iwarp_cm_bind_addr(l, (struct sockaddr *)&ss))
		return 10;
	for (i = 0; i < EM_CONN; i++) {
		cfd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (cfd[i] < 0)
			return 11;
	}
	for (i = 0; i < EM_CONN + 4; i++) {
		spare[i] = open("/dev/null", O_RDONLY);
		if (spare[i] < 0)
			return 12;
	}
	/*
	 * No descriptor left: the limit right above the highest, holes
	 * filled (the listening socket exists since bind_addr, which took
	 * the port). Before the listener arms its accept (the kernel takes
	 * the limit at submission).
	 */
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = (rlim_t)max_fd() + 2;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 13;
	while ((fd = open("/dev/null", O_RDONLY)) >= 0) {
		if (nfill == (int)(sizeof(fill) / sizeof(fill[0])))
			return 14;
		fill[nfill++] = fd;
	}
	if (errno != EMFILE || !nfill)
		return 15;
	if (iwarp_cm_listen(l, 16))
		return 16;
	memcpy(&sin, &l->src_addr, sizeof(sin));
	for (i = 0; i < EM_CONN; i++)
		if (connect(cfd[i], (struct sockaddr *)&sin, sizeof(sin)))
			return 24;
	c0 = cpu_s();
	t0 = now_s();
	poll(NULL, 0, 3000);
	cpu = cpu_s() - c0;
	wall = now_s() - t0;
	if (cm_listen_stats_get(l, &st))
		return 17;
	if (st.accepted) /* descriptors were available after all */
		return 18;
	fprintf(stderr, "EMFILE: %.3f s CPU in %.2f s\n", cpu, wall);
	if (cpu > 0.1 * wall)
		return 19;
	/* descriptors come back: the waiting connections are accepted */
	for (i = 0; i < EM_CONN + 4; i++)
		close(spare[i]);
	for (i = 0; i < WAIT_MS; i++) {
		if (cm_listen_stats_get(l, &st))
			return 20;
		if (st.accepted >= EM_CONN)
			break;
		poll(NULL, 0, 1);
	}
	if (st.accepted < EM_CONN)
		return 21;
	for (i = 0; i < nfill; i++)
		close(fill[i]);
	for (i = 0; i < EM_CONN; i++)
		close(cfd[i]);
	if (iwarp_cm_destroy_id(l))
		return 22;
	iwarp_cm_destroy_event_channel(ch);
	return iwarp_close_context(ctx) ? 23 : 0;
}

START_TEST(test_emfile_backoff)
{
	int status = -1;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		alarm(120); /* bounds the child */
		_exit(emfile_child());
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "child killed by signal %d",
		      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_msg(WEXITSTATUS(status) == 0, "child exit %d",
		      WEXITSTATUS(status));
}
END_TEST

/* ---- two engines per context (IWARP_ENGINES=2) ---- */

#define SPREAD_CONN   8
#define SPREAD_SILENT 16

/* How many of |ctx|'s engines run one of the |n| ids. */
static unsigned int engines_used(struct iwarp_context *ctx,
				 struct iwarp_cm_id **ids, int n)
{
	unsigned int e, used = 0;
	int i;

	for (e = 0; e < ctx->n_engines; e++)
		for (i = 0; i < n; i++)
			if (cm_id_from_pub(ids[i])->eng == ctx->engines[e]) {
				used++;
				break;
			}
	return used;
}

/*
 * With two engines, a listener's children and a side's active ids run on
 * both (round-robin), and the connections work across them. Then silent
 * peers leave hidden children on both engines, and destroying the
 * listener frees every one of them (each on its own engine; the block
 * count goes back to where it was).
 */
START_TEST(test_engines_spread)
{
	static int fds[SPREAD_SILENT];
	struct iwarp_cm_id *c[SPREAD_CONN], *child[SPREAD_CONN], *l;
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct cm_listen_stats st;
	struct cmt_side srv, cli;
	uint16_t port;
	int i;

	attr_race(&a);
	a.mpa_req_timeout_ms = 60000; /* the silent peers stay pending */
	side_open(&srv, &a);
	side_open(&cli, &a);
	ck_assert_uint_eq(srv.ctx->n_engines, 2);
	l = cmt_listen(&srv, 16, &port);
	for (i = 0; i < SPREAD_CONN; i++) {
		c[i] = cmt_client(&cli, port, 4, WAIT_MS);
		ck_assert_int_eq(iwarp_cm_connect(c[i], NULL), 0);
		child[i] = take_request(&srv);
		ck_assert_int_eq(iwarp_cm_accept(child[i], NULL), 0);
		ack_ev(cli.ch, IWARP_CM_EVENT_ESTABLISHED);
		ack_ev(srv.ch, IWARP_CM_EVENT_ESTABLISHED);
	}
	ck_assert_uint_eq(engines_used(cli.ctx, c, SPREAD_CONN), 2);
	ck_assert_uint_eq(engines_used(srv.ctx, child, SPREAD_CONN), 2);
	for (i = 0; i < SPREAD_SILENT; i++)
		fds[i] = raw_connect(port);
	st = wait_accepted(l, SPREAD_CONN + SPREAD_SILENT);
	for (i = 0; i < WAIT_MS && st.pending < SPREAD_SILENT; i++) {
		poll(NULL, 0, 1);
		st = stats(l);
	}
	ck_assert_uint_eq(st.pending, SPREAD_SILENT);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	for (i = 0; i < SPREAD_SILENT; i++) {
		ck_assert_msg(raw_closed(fds[i], WAIT_MS),
			      "silent peer %d not closed", i);
		close(fds[i]);
	}
	for (i = 0; i < SPREAD_CONN; i++) {
		destroy_how(c[i], HOW_CM_QP);
		destroy_how(child[i], HOW_CM_QP);
	}
	drain(cli.ch);
	drain(srv.ch);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

static Suite *cm_lifetime_suite(void)
{
	Suite *s = suite_create("cm_lifetime");
	TCase *tc = tcase_create("destroy");

	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, test_destroy_qp_then_id, 0, 4);
	tcase_add_loop_test(tc, test_destroy_races_handoff, 0, 2);
	tcase_add_test(tc, test_destroy_initiator_mid_handshake);
	tcase_add_test(tc, test_destroy_qp_and_id_concurrently);
	tcase_add_loop_test(tc, test_inline_get_event_vs_destroy, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("flood");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_flood_pending_cap);
	tcase_add_test(tc, test_emfile_backoff);
	suite_add_tcase(s, tc);
	/* the same lifetimes with a listener's children on two engines */
	tc = tcase_create("engines");
	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, iw_test_env_engines_two,
				  iw_test_env_default);
	tcase_add_test(tc, test_engines_spread);
	tcase_add_loop_test(tc, test_destroy_qp_then_id, 0, 4);
	tcase_add_loop_test(tc, test_destroy_races_handoff, 0, 2);
	tcase_add_test(tc, test_flood_pending_cap);
	suite_add_tcase(s, tc);
	/* the same lifetimes over io_uring sockets (the default with one
	 * engine is direct sockets: no io_uring operation in flight, other
	 * threads in the engine) */
	tc = tcase_create("ring");
	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, iw_test_env_socket_ring,
				  iw_test_env_default);
	tcase_add_loop_test(tc, test_destroy_qp_then_id, 0, 4);
	tcase_add_loop_test(tc, test_destroy_races_handoff, 0, 2);
	tcase_add_test(tc, test_destroy_qp_and_id_concurrently);
	tcase_add_test(tc, test_flood_pending_cap);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(cm_lifetime_suite)

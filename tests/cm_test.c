/*
 * tests/cm_test.c: the connection manager over real loopback TCP with the
 * real engine: events, private data, IRD/ORD, reject, unreachable, hostile
 * or silent peers (raw sockets), disconnect, IPv6, MPA options, many
 * connections. Every wait is bounded (WAIT_MS); nothing asserts on timing.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cm/cm_int.h"
#include "io/engine.h"
#include "iwarp/iwarp.h"
#include "cm_testutil.h"
#include "testutil.h"
#include "util/mem.h"

#define WAIT_MS 30000 /* upper bound of any wait (a hang fails the test) */
/* MPA timers of the contexts: long enough that a loaded machine never hits
 * them; tests about the timers themselves set short ones. */
#define MPA_TIMER_MS 20000
/* How long a test watches for an event that must not come, where no later
 * event can show that it did not (a slow machine only makes the check
 * weaker, never makes it fail). */
#define QUIET_MS 1000

/* One side: context, channel, PD and CQ. */
static void attr_fast(struct iwarp_context_attr *a)
{
	iwarp_context_attr_init(a);
	a->mpa_rev = 2;
	a->crc = IWARP_CRC_OFF;
	a->markers = 0;
	a->p2p = IWARP_P2P_NONE;
	a->progress = IWARP_PROGRESS_CPU;
	a->mpa_req_timeout_ms = MPA_TIMER_MS;
	a->mpa_rep_timeout_ms = MPA_TIMER_MS;
}

static void side_open(struct cmt_side *s, const struct iwarp_context_attr *a)
{
	cmt_side_open(s, a, 256);
}

/* Waits (bounded) for the next event, which must be |type|. */
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

/* A listener on |host| port 0; returns it, *port = the bound port. */
static struct iwarp_cm_id *listen_on(struct cmt_side *s, const char *host,
				     uint16_t *port)
{
	struct sockaddr_storage ss;
	struct iwarp_cm_id *l;

	ck_assert_int_eq(
		iwarp_cm_create_id(s->ch, s->ctx, &l, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr(host, 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(l, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwarp_cm_listen(l, 128), 0);
	*port = cmt_sa_port(&l->src_addr);
	ck_assert_uint_ne(*port, 0);
	return l;
}

/* Client id resolved toward host:port, with a QP. */
static struct iwarp_cm_id *client_to(struct cmt_side *s, const char *host,
				     uint16_t port)
{
	struct iwarp_qp_init_attr qa;
	struct sockaddr_storage ss;
	struct iwarp_cm_id *c;

	ck_assert_int_eq(
		iwarp_cm_create_id(s->ch, s->ctx, &c, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr(host, port, &ss), 0);
	ck_assert_int_eq(
		iwarp_cm_resolve_addr(c, NULL, (struct sockaddr *)&ss, 2000),
		0);
	ack_ev(s->ch, IWARP_CM_EVENT_ADDR_RESOLVED);
	ck_assert_int_eq(iwarp_cm_resolve_route(c, 2000), 0);
	ack_ev(s->ch, IWARP_CM_EVENT_ROUTE_RESOLVED);
	cmt_qp_attr(s, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(c, s->pd, &qa), 0);
	ck_assert_ptr_nonnull(c->qp);
	ck_assert_int_eq(cmt_qp_state(c->qp), IWARP_QPS_INIT);
	return c;
}

static void destroy(struct iwarp_cm_id *id)
{
	iwarp_cm_destroy_qp(id);
	ck_assert_ptr_null(id->qp);
	ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
}

/* A raw TCP listener on 127.0.0.1 (ephemeral port): returns the fd, and
 * the port in host order in *port. */
static int raw_listen(uint16_t *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(lfd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return lfd;
}

/* A raw TCP socket connected to 127.0.0.1:|port|. */
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

/* Waits (bounded) until the peer closed |fd| (FIN or reset): returns the
 * number of octets it sent before closing. */
static size_t raw_wait_closed(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char buf[256];
	size_t total = 0;
	ssize_t r;

	for (;;) {
		ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "peer did not close");
		r = recv(fd, buf, sizeof(buf), 0);
		if (r == 0)
			return total;
		if (r < 0) {
			ck_assert_msg(errno == ECONNRESET, "recv: %s",
				      strerror(errno));
			return total;
		}
		total += (size_t)r;
	}
}

/* A TCP port on 127.0.0.1 that is bound but not listening, so connects to
 * it are refused; it stays reserved (no other process can take it) until
 * the caller closes *fd. */
static uint16_t refused_port(int *fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(*fd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(*fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(*fd, (struct sockaddr *)&sin, &len), 0);
	return ntohs(sin.sin_port);
}

/*
 * Shows that |s->ch| holds no stray event: a connect to a refused port
 * goes through the same engine and channel, and its ADDR_RESOLVED,
 * ROUTE_RESOLVED and REJECTED must be the next events (expect_ev fails
 * on anything queued before them).
 */
static void expect_no_stray_event(struct cmt_side *s)
{
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *c;
	int fd;

	c = client_to(s, "127.0.0.1", refused_port(&fd));
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	ev = expect_ev(s->ch, IWARP_CM_EVENT_REJECTED);
	ck_assert_ptr_eq(ev->id, c);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	iwarp_cm_destroy_qp(c);
	ck_assert_int_eq(iwarp_cm_destroy_id(c), 0);
	close(fd);
}

/* Waits (bounded) until the block count is back to |base|. */
static void wait_mem(long base)
{
	int i;

	for (i = 0; i < WAIT_MS && iw_mem_outstanding() != base; i++)
		poll(NULL, 0, 1);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}

/* ---- channel, ids, addresses ---- */

START_TEST(test_channel_and_default_context)
{
	long base = iw_mem_outstanding();
	struct iwarp_event_channel *ch = iwarp_cm_create_event_channel();
	struct iwarp_cm_id *a, *b;
	struct iwarp_cm_event *ev;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_ge(ch->fd, 0);
	ck_assert_int_eq(fcntl(ch->fd, F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), -EAGAIN);
	ck_assert_int_eq(iwarp_cm_create_id(ch, NULL, &a, NULL, 0), -EINVAL);
	ck_assert_int_eq(iwarp_cm_create_id(ch, NULL, &a, &base, IWARP_PS_TCP),
			 0);
	ck_assert_ptr_nonnull(a->verbs);
	ck_assert_ptr_eq(a->context, &base);
	ck_assert_ptr_eq(a->channel, ch);
	ck_assert_int_eq(iwarp_cm_create_id(ch, NULL, &b, NULL, IWARP_PS_TCP),
			 0);
	ck_assert_ptr_eq(a->verbs, b->verbs); /* one default context */
	/* state checks */
	ck_assert_int_eq(iwarp_cm_resolve_route(a, 100), -EINVAL);
	ck_assert_int_eq(iwarp_cm_listen(a, 1), -EINVAL);
	ck_assert_int_eq(iwarp_cm_connect(a, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_cm_accept(a, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_cm_destroy_id(a), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(b), 0);
	iwarp_cm_destroy_event_channel(ch);
	/* the default context went with the last id */
	ck_assert_int_eq(iw_mem_outstanding(), base);
	ck_assert_str_eq(iwarp_cm_event_str(IWARP_CM_EVENT_ESTABLISHED),
			 "IWARP_CM_EVENT_ESTABLISHED");
}
END_TEST

#define LONG_LABEL                                                             \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

START_TEST(test_getaddr)
{
	struct sockaddr_storage ss;

	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 7174, &ss), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_uint_eq(cmt_sa_port(&ss), 7174);
	ck_assert_int_eq(iwarp_cm_getaddr("::1", 18515, &ss), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_uint_eq(cmt_sa_port(&ss), 18515);
	ck_assert_int_eq(iwarp_cm_getaddr("localhost", 1, &ss), 0);
	ck_assert(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
	ck_assert_int_eq(iwarp_cm_getaddr(NULL, 9, &ss), 0); /* wildcard */
	ck_assert_uint_eq(cmt_sa_port(&ss), 9);
	/* a name no resolver can hold: a label longer than 63 octets
	 * (RFC 1035 §2.3.4) fails before any DNS query leaves the host */
	ck_assert_int_lt(iwarp_cm_getaddr(LONG_LABEL ".invalid", 1, &ss), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 1, NULL), -EINVAL);
}
END_TEST

START_TEST(test_resolve_and_listen)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct sockaddr_storage ss;
	struct iwarp_cm_id *l, *c;
	struct cmt_side s;
	uint16_t port;
	char txt[64];

	attr_fast(&a);
	side_open(&s, &a);
	l = listen_on(&s, "127.0.0.1", &port);
	ck_assert_int_eq(iwarp_cm_listen(l, 1), -EINVAL); /* twice */
	ck_assert_int_eq(
		iwarp_cm_create_id(s.ch, s.ctx, &c, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", port, &ss), 0);
	ck_assert_int_eq(
		iwarp_cm_resolve_addr(c, NULL, (struct sockaddr *)&ss, 2000),
		0);
	ack_ev(s.ch, IWARP_CM_EVENT_ADDR_RESOLVED);
	ck_assert_int_eq(c->src_addr.ss_family, AF_INET);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&c->src_addr)->sin_addr, txt,
		  sizeof(txt));
	ck_assert_str_eq(txt, "127.0.0.1");
	ck_assert_uint_eq(cmt_sa_port(&c->dst_addr), port);
	ck_assert_int_eq(iwarp_cm_resolve_route(c, 2000), 0);
	ack_ev(s.ch, IWARP_CM_EVENT_ROUTE_RESOLVED);
	/* connect needs a QP */
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), -EINVAL);
	/* a second listener on the same port: in use */
	{
		struct iwarp_cm_id *l2;

		ck_assert_int_eq(iwarp_cm_create_id(s.ch, s.ctx, &l2, NULL,
						    IWARP_PS_TCP),
				 0);
		/* bind takes the port: refused there, as rdma_bind_addr */
		ck_assert_int_eq(iwarp_cm_bind_addr(l2, (struct sockaddr *)&ss),
				 -EADDRINUSE);
		ck_assert_int_eq(iwarp_cm_destroy_id(l2), 0);
	}
	ck_assert_int_eq(iwarp_cm_destroy_id(c), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&s);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/* ---- failures before ESTABLISHED ---- */

START_TEST(test_refused_is_rejected)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *c;
	struct cmt_side s;
	uint16_t port;
	int fd;

	port = refused_port(&fd); /* bound, not listening: refused */
	attr_fast(&a);
	side_open(&s, &a);
	c = client_to(&s, "127.0.0.1", port);
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	/* the kernel's iWARP CM: a refused TCP connect is REJECTED */
	ev = expect_ev(s.ch, IWARP_CM_EVENT_REJECTED);
	ck_assert_int_eq(ev->status, -ECONNREFUSED);
	ck_assert_ptr_eq(ev->id, c);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	expect_no_stray_event(&s); /* one event for the failed connect */
	destroy(c);
	close(fd);
	cmt_side_close(&s);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/*
 * A connect that gets no answer (a listener whose accept queue is full
 * drops the SYN) is UNREACHABLE with -ETIMEDOUT once the connect bound
 * (mpa_rep_timeout_ms) has passed.
 */
START_TEST(test_timeout_is_unreachable)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *c;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct cmt_side s;
	int lfd, fill[2], i;

	/* backlog 0: one connection waits in the accept queue, the next
	 * SYN is dropped (the queue is full) */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 0), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	for (i = 0; i < 2; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		ck_assert_int_ge(fill[i], 0);
		connect(fill[i], (struct sockaddr *)&sin, sizeof(sin));
	}
	attr_fast(&a);
	a.mpa_rep_timeout_ms = 1500; /* also the TCP connect bound */
	side_open(&s, &a);
	c = client_to(&s, "127.0.0.1", ntohs(sin.sin_port));
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	ev = expect_ev(s.ch, IWARP_CM_EVENT_UNREACHABLE);
	ck_assert_int_eq(ev->status, -ETIMEDOUT);
	ck_assert_ptr_eq(ev->id, c);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	destroy(c);
	cmt_side_close(&s);
	for (i = 0; i < 2; i++)
		close(fill[i]);
	close(lfd);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/*
 * bind_addr with port 0 gives the id its port at once (as rdma_bind_addr):
 * src_addr shows it right after the call, nobody else can bind it before
 * the listen, and the listen keeps it.
 */
START_TEST(test_bind_reserves_port)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct sockaddr_storage ss;
	struct sockaddr_in sin;
	struct iwarp_cm_id *l, *l2;
	struct cmt_side s;
	uint16_t port;
	int fd;

	attr_fast(&a);
	side_open(&s, &a);
	ck_assert_int_eq(
		iwarp_cm_create_id(s.ch, s.ctx, &l, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(l, (struct sockaddr *)&ss), 0);
	port = cmt_sa_port(&l->src_addr);
	ck_assert_uint_ne(port, 0);
	/* the port is taken: by a plain socket, and by another id */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	memcpy(&sin, &l->src_addr, sizeof(sin));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), -1);
	ck_assert_int_eq(errno, EADDRINUSE);
	close(fd);
	ck_assert_int_eq(
		iwarp_cm_create_id(s.ch, s.ctx, &l2, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(
		iwarp_cm_bind_addr(l2, (struct sockaddr *)&l->src_addr),
		-EADDRINUSE);
	ck_assert_int_eq(iwarp_cm_destroy_id(l2), 0);
	/* listen on the port bind took */
	ck_assert_int_eq(iwarp_cm_listen(l, 4), 0);
	ck_assert_uint_eq(cmt_sa_port(&l->src_addr), port);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	/* destroying the id frees the port: an id binds it again */
	ck_assert_int_eq(
		iwarp_cm_create_id(s.ch, s.ctx, &l2, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", port, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(l2, (struct sockaddr *)&ss), 0);
	ck_assert_uint_eq(cmt_sa_port(&l2->src_addr), port);
	ck_assert_int_eq(iwarp_cm_destroy_id(l2), 0);
	cmt_side_close(&s);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/*
 * resolve_addr binds an unbound id (as rdma_resolve_addr does): its source
 * port is known from ADDR_RESOLVED on, and the connection leaves from it
 * (the responder sees it as the peer's port).
 */
START_TEST(test_resolve_binds_source_port)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *c, *child;
	struct iwarp_qp_init_attr qa;
	struct cmt_side srv, cli;
	uint16_t port, sport;

	attr_fast(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = listen_on(&srv, "127.0.0.1", &port);
	c = client_to(&cli, "127.0.0.1", port);
	sport = cmt_sa_port(&c->src_addr);
	ck_assert_uint_ne(sport, 0);
	ck_assert_int_eq(c->src_addr.ss_family, AF_INET);
	ck_assert_uint_eq(((struct sockaddr_in *)&c->src_addr)->sin_addr.s_addr,
			  htonl(INADDR_LOOPBACK));
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	ev = expect_ev(srv.ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	ck_assert_uint_eq(cmt_sa_port(&child->dst_addr), sport);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(&srv, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(child, srv.pd, &qa), 0);
	ck_assert_int_eq(iwarp_cm_accept(child, NULL), 0);
	ack_ev(srv.ch, IWARP_CM_EVENT_ESTABLISHED);
	ack_ev(cli.ch, IWARP_CM_EVENT_ESTABLISHED);
	ck_assert_uint_eq(cmt_sa_port(&c->src_addr), sport);
	destroy(c);
	destroy(child);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

START_TEST(test_reject_with_private_data)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *c, *child;
	struct cmt_side srv, cli;
	uint16_t port;

	attr_fast(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = listen_on(&srv, "127.0.0.1", &port);
	c = client_to(&cli, "127.0.0.1", port);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = "let me in";
	cp.private_data_len = 9;
	cp.responder_resources = 3;
	cp.initiator_depth = 2;
	ck_assert_int_eq(iwarp_cm_connect(c, &cp), 0);

	ev = expect_ev(srv.ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	ck_assert_ptr_eq(ev->listen_id, l);
	ck_assert_ptr_ne(child, l);
	ck_assert_int_eq(ev->status, 0);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 9);
	ck_assert(!memcmp(ev->param.conn.private_data, "let me in", 9));
	/* what we must give: IRD >= peer ORD 2, ORD <= peer IRD 3 */
	ck_assert_uint_eq(ev->param.conn.responder_resources, 2);
	ck_assert_uint_eq(ev->param.conn.initiator_depth, 3);
	ck_assert_ptr_eq(child->verbs, srv.ctx);
	ck_assert_uint_eq(cmt_sa_port(&child->src_addr), port);
	ck_assert_uint_eq(cmt_sa_port(&child->dst_addr),
			  cmt_sa_port(&c->src_addr));
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(iwarp_cm_reject(child, "full", 4), 0);

	ev = expect_ev(cli.ch, IWARP_CM_EVENT_REJECTED);
	ck_assert_int_eq(ev->status, IWARP_ERR_MPA_REJECTED);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 4);
	ck_assert(!memcmp(ev->param.conn.private_data, "full", 4));
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(cmt_qp_state(c->qp), IWARP_QPS_INIT);

	ck_assert_int_eq(iwarp_cm_destroy_id(child), 0);
	destroy(c);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/* The listener still works: a CM client gets as far as CONNECT_REQUEST. */
static void listener_still_works(struct cmt_side *srv, struct cmt_side *cli,
				 struct iwarp_cm_id *l, uint16_t port)
{
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *c, *child;

	c = client_to(cli, "127.0.0.1", port);
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	ev = expect_ev(srv->ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	ck_assert_ptr_eq(ev->listen_id, l);
	child = ev->id;
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(iwarp_cm_reject(child, NULL, 0), 0);
	ev = expect_ev(cli->ch, IWARP_CM_EVENT_REJECTED);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 0);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(child), 0);
	destroy(c);
}

/* Raw clients: 0 = silent, 1 = half a Request then close, 2 = bad key,
 * 3 = rev 3, 4 = half a Request then silent. */
START_TEST(test_hostile_clients)
{
	static const uint8_t half[] = "MPA ID Req Fr";
	static const uint8_t bad[] = "MPA_ID_Bad_Frame\x10\x02\x00\x04\0\1\0\1";
	static const uint8_t rev3[] = "MPA ID Req Frame\x00\x03\x00\x00";
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct cmt_side srv, cli;
	struct iwarp_cm_id *l;
	uint16_t port;
	int fd, i;

	attr_fast(&a);
	/* the silent clients are closed by this timer; the one handshake
	 * under it (listener_still_works) is local and immediate */
	a.mpa_req_timeout_ms = 1000;
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = listen_on(&srv, "127.0.0.1", &port);
	for (i = 0; i < 3; i++) { /* several of each, the listener survives */
		fd = raw_connect(port); /* silent: closed by the timer */
		ck_assert_uint_eq(raw_wait_closed(fd), 0); /* no Reply */
		close(fd);

		fd = raw_connect(port);
		ck_assert_int_eq(send(fd, half, sizeof(half) - 1, 0),
				 (ssize_t)sizeof(half) - 1);
		close(fd);

		fd = raw_connect(port); /* refused at once, no Reply */
		ck_assert_int_eq(send(fd, bad, sizeof(bad) - 1, 0),
				 (ssize_t)sizeof(bad) - 1);
		ck_assert_uint_eq(raw_wait_closed(fd), 0); /* no Reply */
		close(fd);

		fd = raw_connect(port);
		ck_assert_int_eq(send(fd, rev3, sizeof(rev3) - 1, 0),
				 (ssize_t)sizeof(rev3) - 1);
		ck_assert_uint_eq(raw_wait_closed(fd), 0); /* no Reply */
		close(fd);

		fd = raw_connect(port); /* half, then silence: timer */
		ck_assert_int_eq(send(fd, half, sizeof(half) - 1, 0),
				 (ssize_t)sizeof(half) - 1);
		ck_assert_uint_eq(raw_wait_closed(fd), 0); /* no Reply */
		close(fd);
	}
	/* none of them produced an event: the next one on srv.ch must be
	 * this CONNECT_REQUEST (listener_still_works uses expect_ev) */
	listener_still_works(&srv, &cli, l, port);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* An MPA-speaking peer that answers wrongly or never (initiator side). */
START_TEST(test_bad_responders)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	uint16_t lport;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *c;
	struct cmt_side s;
	uint8_t buf[64];
	int lfd, fd, round;

	lfd = raw_listen(&lport);
	for (round = 0; round < 3; round++) {
		attr_fast(&a);
		if (round == 0) /* the peer never answers: the timer fires */
			a.mpa_rep_timeout_ms = 300;
		side_open(&s, &a);
		c = client_to(&s, "127.0.0.1", lport);
		ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
		fd = accept(lfd, NULL, NULL);
		ck_assert_int_ge(fd, 0);
		/* the Request: 20 + 4 (IRD/ORD 128/128) */
		ck_assert_int_eq(recv(fd, buf, 24, MSG_WAITALL), 24);
		ck_assert(!memcmp(buf,
				  "MPA ID Req Frame\x10\x02\x00\x04"
				  "\x00\x80\x00\x80",
				  24));
		if (round == 1) {
			ck_assert_int_eq(send(fd, "MPA ID Bad", 10, 0), 10);
		} else if (round == 2) {
			close(fd);
			fd = -1;
		}
		ev = expect_ev(s.ch, IWARP_CM_EVENT_CONNECT_ERROR);
		if (round == 0)
			ck_assert_int_eq(ev->status, -ETIMEDOUT);
		else if (round == 1)
			ck_assert_int_eq(ev->status, IWARP_ERR_MPA_KEY);
		else
			ck_assert_int_lt(ev->status, 0);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		if (fd >= 0) {
			/* closed with nothing sent: no FPDU mode, no
			 * TERMINATE (cm/cm_mpa_term.h) */
			ck_assert_uint_eq(raw_wait_closed(fd), 0);
			close(fd);
		}
		destroy(c);
		cmt_side_close(&s);
	}
	close(lfd);
	wait_mem(base);
}
END_TEST

/* Destroying a listener with undelivered CONNECT_REQUESTs frees them. */
START_TEST(test_destroy_listener_with_pending)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct cmt_side srv, cli;
	struct iwarp_cm_id *l, *c[4];
	uint16_t port;
	int i;

	attr_fast(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = listen_on(&srv, "127.0.0.1", &port);
	for (i = 0; i < 4; i++) {
		c[i] = client_to(&cli, "127.0.0.1", port);
		ck_assert_int_eq(iwarp_cm_connect(c[i], NULL), 0);
	}
	ck_assert(cmt_ch_ready(srv.ch, WAIT_MS)); /* at least one is queued */
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	for (i = 0; i < 4; i++) {
		struct iwarp_cm_event *ev;

		/* the stream reset during the exchange, or (still in the
		 * backlog when the listener closed) during the connect */
		ck_assert(cmt_ch_ready(cli.ch, WAIT_MS));
		ck_assert_int_eq(iwarp_cm_get_event(cli.ch, &ev), 0);
		ck_assert_msg(ev->event == IWARP_CM_EVENT_CONNECT_ERROR ||
				      ev->event == IWARP_CM_EVENT_REJECTED,
			      "%s status %d", iwarp_cm_event_str(ev->event),
			      ev->status);
		ck_assert_int_lt(ev->status, 0);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
	for (i = 0; i < 4; i++)
		destroy(c[i]);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* ---- connections ---- */

struct conn_pair {
	struct iwarp_cm_id *l, *c, *s; /* listener, client, server child */
};

/* connect_resolved's iwarp_cm_connect of p->c (private data, IRD/ORD). */
static void connect_start(struct conn_pair *p)
{
	struct iwarp_conn_param cp;

	memset(&cp, 0, sizeof(cp));
	cp.private_data = "client-hello";
	cp.private_data_len = 12;
	cp.responder_resources = 4;
	cp.initiator_depth = 8;
	ck_assert_int_eq(iwarp_cm_connect(p->c, &cp), 0);
}

/* The rest of connect_resolved once connect_start returned. */
static void connect_finish(struct cmt_side *srv, struct cmt_side *cli,
			   struct conn_pair *p)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;

	ev = expect_ev(srv->ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	p->s = ev->id;
	ck_assert_ptr_eq(ev->listen_id, p->l);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 12);
	ck_assert(!memcmp(ev->param.conn.private_data, "client-hello", 12));
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(srv, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(p->s, srv->pd, &qa), 0);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = "server-welcome";
	cp.private_data_len = 14;
	cp.responder_resources = 8;
	cp.initiator_depth = 4;
	ck_assert_int_eq(iwarp_cm_accept(p->s, &cp), 0);
	ck_assert_int_lt(iwarp_cm_accept(p->s, &cp), 0); /* only once */

	ev = expect_ev(cli->ch, IWARP_CM_EVENT_ESTABLISHED);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 14);
	ck_assert(!memcmp(ev->param.conn.private_data, "server-welcome", 14));
	/* negotiated: our IRD 4 covers its ORD 4, our ORD 8 <= its IRD 8 */
	ck_assert_uint_eq(ev->param.conn.responder_resources, 4);
	ck_assert_uint_eq(ev->param.conn.initiator_depth, 8);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(cmt_qp_state(p->c->qp), IWARP_QPS_RTS);

	ev = expect_ev(srv->ch, IWARP_CM_EVENT_ESTABLISHED);
	ck_assert_ptr_eq(ev->id, p->s);
	ck_assert_uint_eq(ev->param.conn.responder_resources, 8);
	ck_assert_uint_eq(ev->param.conn.initiator_depth, 4);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(cmt_qp_state(p->s->qp), IWARP_QPS_RTS);
}

/*
 * Connects p->c, a client of |cli| with its route resolved and a QP, to
 * the listener p->l of |srv|: private data both ways, IRD/ORD, QPs in RTS
 * on both sides.
 */
static void connect_resolved(struct cmt_side *srv, struct cmt_side *cli,
			     struct conn_pair *p)
{
	connect_start(p);
	connect_finish(srv, cli, p);
}

/* connect_resolved with a client resolved toward host:port first. */
static void connect_pair(struct cmt_side *srv, struct cmt_side *cli,
			 struct conn_pair *p, const char *host, uint16_t port)
{
	p->c = client_to(cli, host, port);
	connect_resolved(srv, cli, p);
}

/* A Send from client to server over the established pair. */
static void send_one(struct cmt_side *srv, struct cmt_side *cli,
		     struct conn_pair *p)
{
	static char sbuf[64], rbuf[64];
	struct iwarp_mr *smr, *rmr;
	struct iwarp_sge sge;
	struct iwarp_send_wr swr, *bs;
	struct iwarp_recv_wr rwr, *br;
	struct iwarp_wc wc;
	int i, n = 0;

	strcpy(sbuf, "payload over the datapath");
	memset(rbuf, 0, sizeof(rbuf));
	smr = iwarp_reg_mr(cli->pd, sbuf, sizeof(sbuf), 0);
	rmr = iwarp_reg_mr(srv->pd, rbuf, sizeof(rbuf),
			   IWARP_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(smr);
	ck_assert_ptr_nonnull(rmr);
	sge.addr = (uintptr_t)rbuf;
	sge.length = sizeof(rbuf);
	sge.lkey = rmr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 7;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ck_assert_int_eq(iwarp_post_recv(p->s->qp, &rwr, &br), 0);
	sge.addr = (uintptr_t)sbuf;
	sge.length = 26;
	sge.lkey = smr->lkey;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 9;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IWARP_WR_SEND;
	swr.send_flags = IWARP_SEND_SIGNALED;
	ck_assert_int_eq(iwarp_post_send(p->c->qp, &swr, &bs), 0);
	for (i = 0; i < WAIT_MS && !n; i++) {
		iwarp_progress(cli->ctx); /* INLINE mode: drive the sender */
		n = iwarp_poll_cq(srv->cq, 1, &wc);
		if (!n)
			poll(NULL, 0, 1);
	}
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(wc.status, IWARP_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_uint_eq(wc.byte_len, 26);
	ck_assert_str_eq(rbuf, sbuf);
	for (i = 0, n = 0; i < WAIT_MS && !n; i++) {
		n = iwarp_poll_cq(cli->cq, 1, &wc);
		if (!n)
			poll(NULL, 0, 1);
	}
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(wc.wr_id, 9);
	ck_assert_int_eq(iwarp_dereg_mr(smr), 0);
	ck_assert_int_eq(iwarp_dereg_mr(rmr), 0);
}

/* Disconnect from |who| (0 client, 1 server): DISCONNECTED on both. */
static void disconnect_pair(struct cmt_side *srv, struct cmt_side *cli,
			    struct conn_pair *p, int who)
{
	struct iwarp_cm_event *ev;

	ck_assert_int_eq(iwarp_cm_disconnect(who ? p->s : p->c), 0);
	ev = expect_ev(cli->ch, IWARP_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, p->c);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ev = expect_ev(srv->ch, IWARP_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, p->s);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ack_ev(cli->ch, IWARP_CM_EVENT_TIMEWAIT_EXIT);
	ack_ev(srv->ch, IWARP_CM_EVENT_TIMEWAIT_EXIT);
	ck_assert_int_eq(cmt_qp_state(p->c->qp), IWARP_QPS_ERR);
	ck_assert_int_eq(cmt_qp_state(p->s->qp), IWARP_QPS_ERR);
	ck_assert_int_eq(iwarp_cm_disconnect(p->c), 0); /* again: no-op */
}

/* Holds an engine thread inside a work item until the test opens the
 * gate (bounded: after WAIT_MS it lets go and says so). */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool in, open, timed_out;
};

static void gate_hold(void *arg)
{
	struct gate *g = arg;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&g->lock);
	g->in = true;
	pthread_cond_broadcast(&g->cond);
	while (!g->open && !g->timed_out)
		if (pthread_cond_timedwait(&g->cond, &g->lock, &ts) ==
		    ETIMEDOUT)
			g->timed_out = true;
	pthread_mutex_unlock(&g->lock);
}

/*
 * Until connect hands an id to its engine, rdma_resolve_addr,
 * rdma_resolve_route and rdma_create_qp run on the calling thread, and
 * rdma_connect does not wait for the engine to start the TCP connect:
 * with the client's engine thread held inside a work item they all
 * return and raise their events (before, each waited for that thread).
 * The connection then completes as any other.
 */
START_TEST(test_preconnect_calls_here)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_id *probe;
	struct cmt_side srv, cli;
	struct conn_pair p;
	struct timespec ts;
	struct gate g;
	uint16_t port;
	bool timed_out, in;

	attr_fast(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	p.l = listen_on(&srv, "127.0.0.1", &port);
	memset(&g, 0, sizeof(g));
	pthread_mutex_init(&g.lock, NULL);
	pthread_cond_init(&g.cond, NULL);
	/* the client context's engine (its ids share it) */
	ck_assert_int_eq(
		iwarp_cm_create_id(cli.ch, cli.ctx, &probe, NULL, IWARP_PS_TCP),
		0);
	ck_assert_int_eq(engine_call(cm_id_from_pub(probe)->eng, gate_hold, &g),
			 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&g.lock);
	while (!g.in &&
	       pthread_cond_timedwait(&g.cond, &g.lock, &ts) != ETIMEDOUT)
		;
	in = g.in;
	pthread_mutex_unlock(&g.lock);
	ck_assert_msg(in, "the engine thread never ran the gate");

	p.c = client_to(&cli, "127.0.0.1", port);
	connect_start(&p);

	pthread_mutex_lock(&g.lock);
	timed_out = g.timed_out;
	g.open = true;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	ck_assert_msg(!timed_out, "a pre-connect call waited for the engine");
	connect_finish(&srv, &cli, &p);
	send_one(&srv, &cli, &p);
	disconnect_pair(&srv, &cli, &p, 0);
	destroy(p.c);
	destroy(p.s);
	ck_assert_int_eq(iwarp_cm_destroy_id(probe), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(p.l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	pthread_cond_destroy(&g.cond);
	pthread_mutex_destroy(&g.lock);
	wait_mem(base);
}
END_TEST

/* MPA option sets for the option loop (both sides use the same attrs
 * except where noted). */
struct opt {
	int rev;
	enum iwarp_crc_policy crc_c, crc_s;
	int markers_c, markers_s;
	enum iwarp_p2p_rtr p2p;
	const char *host;
};

static const struct opt opts[] = {
	{2, IWARP_CRC_OFF, IWARP_CRC_OFF, 0, 0, IWARP_P2P_NONE, "127.0.0.1"},
	{1, IWARP_CRC_OFF, IWARP_CRC_OFF, 0, 0, IWARP_P2P_NONE, "127.0.0.1"},
	{2, IWARP_CRC_OFF, IWARP_CRC_OFF, 0, 0, IWARP_P2P_NONE, "::1"},
	{2, IWARP_CRC_REQUEST, IWARP_CRC_OFF, 0, 0, IWARP_P2P_NONE,
	 "127.0.0.1"},
	{2, IWARP_CRC_OFF, IWARP_CRC_REQUIRE, 0, 0, IWARP_P2P_NONE,
	 "127.0.0.1"},
	{2, IWARP_CRC_REQUIRE, IWARP_CRC_REQUIRE, 0, 0, IWARP_P2P_NONE,
	 "127.0.0.1"},
	{1, IWARP_CRC_REQUEST, IWARP_CRC_OFF, 0, 0, IWARP_P2P_NONE,
	 "127.0.0.1"},
	{2, IWARP_CRC_OFF, IWARP_CRC_OFF, 1, 0, IWARP_P2P_NONE, "127.0.0.1"},
	{2, IWARP_CRC_REQUEST, IWARP_CRC_OFF, 1, 1, IWARP_P2P_NONE,
	 "127.0.0.1"},
	{2, IWARP_CRC_OFF, IWARP_CRC_OFF, 0, 0, IWARP_P2P_WRITE, "127.0.0.1"},
	{2, IWARP_CRC_REQUEST, IWARP_CRC_OFF, 0, 0, IWARP_P2P_READ,
	 "127.0.0.1"},
	{2, IWARP_CRC_OFF, IWARP_CRC_OFF, 1, 1, IWARP_P2P_READ, "::1"},
};

START_TEST(test_connect_options)
{
	const struct opt *o = &opts[_i];
	long base = iw_mem_outstanding();
	struct iwarp_context_attr ac, as;
	struct cmt_side srv, cli;
	struct conn_pair p;
	uint16_t port;

	attr_fast(&ac);
	ac.mpa_rev = o->rev;
	ac.crc = o->crc_c;
	ac.markers = o->markers_c;
	ac.p2p = o->p2p;
	as = ac;
	as.crc = o->crc_s;
	as.markers = o->markers_s;
	as.p2p = IWARP_P2P_NONE;
	side_open(&srv, &as);
	side_open(&cli, &ac);
	p.l = listen_on(&srv, o->host, &port);
	connect_pair(&srv, &cli, &p, o->host, port);
	ck_assert_int_eq(p.s->src_addr.ss_family,
			 o->host[0] == ':' ? AF_INET6 : AF_INET);
	send_one(&srv, &cli, &p);
	disconnect_pair(&srv, &cli, &p, _i & 1);
	destroy(p.c);
	destroy(p.s);
	ck_assert_int_eq(iwarp_cm_destroy_id(p.l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* Reads exactly |len| octets from |fd| (bounded wait). */
static void raw_read_all(int fd, uint8_t *buf, size_t len)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		ck_assert_msg(poll(&pf, 1, WAIT_MS) == 1, "no data");
		r = recv(fd, buf + got, len - got, 0);
		ck_assert_int_gt(r, 0);
		got += (size_t)r;
	}
}

/*
 * Server side of a raw initiator: opens |srv| with |a|, listens on
 * 127.0.0.1, connects a raw socket that sends the |len|-octet MPA Request
 * |req|, takes the CONNECT_REQUEST, creates its QP and accepts with |cp|
 * (NULL: defaults). Returns the raw socket; *|l| and *|sid| the ids.
 */
static int raw_request_accept(struct cmt_side *srv,
			      const struct iwarp_context_attr *a,
			      const uint8_t *req, size_t len,
			      const struct iwarp_conn_param *cp,
			      struct iwarp_cm_id **l, struct iwarp_cm_id **sid)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_cm_event *ev;
	uint16_t port;
	int fd;

	side_open(srv, a);
	*l = listen_on(srv, "127.0.0.1", &port);
	fd = raw_connect(port);
	ck_assert_int_eq(send(fd, req, len, 0), (ssize_t)len);
	ev = expect_ev(srv->ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	*sid = ev->id;
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(srv, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(*sid, srv->pd, &qa), 0);
	ck_assert_int_eq(iwarp_cm_accept(*sid, cp), 0);
	return fd;
}

/*
 * RFC 6581 §9.2 / §7, siw as initiator (interop capture): the responder is
 * configured with p2p=write locally (_i 2, 3) or p2p=read (_i 0, 1),
 * which must not matter. _i 0..2: the initiator offers Write and Read RTR
 * (IRD 0x8000, ORD 0xc001); the Reply chooses Write (A echoed, `80 00
 * 80 00` with the ULP's IRD/ORD 0) and ESTABLISHED follows the 20-octet
 * zero-length Write RTR, sent whole (_i 0, 2) or one octet at a time
 * (_i 1). _i 3: only Read is offered; the Reply chooses it with IRD
 * forced to 1 (`80 01 40 00`), ESTABLISHED follows the 52-octet
 * zero-length Read Request and the responder answers with a zero-length
 * Read Response.
 */
START_TEST(test_p2p_responder_negotiated_rtr)
{
	uint8_t req[] = {
		'M',  'P',  'A',  ' ',	'I',  'D',  ' ',  'R',
		'e',  'q',  ' ',  'F',	'r',  'a',  'm',  'e',
		0x10, 0x02, 0x00, 0x04, 0x80, 0x00, 0xc0, 0x01,
	};
	uint8_t rep_want[] = {
		'M',  'P',  'A',  ' ',	'I',  'D',  ' ',  'R',
		'e',  'p',  ' ',  'F',	'r',  'a',  'm',  'e',
		0x10, 0x02, 0x00, 0x04, 0x80, 0x00, 0x80, 0x00,
	};
	/* zero-length RDMA Write, STag 1, TO 0, CRC off
	 * (docs/interop-notes.md §6.7) */
	static const uint8_t wr_rtr[20] = {
		0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	};
	/* zero-length Read Request (RFC 5040 §4.4, RFC 5041 §5.2): QN 1,
	 * MSN 1, MO 0, sink STag 1, TO 0, size 0, source STag 1, TO 0 */
	static const uint8_t rd_rtr[52] = {
		0x00, 0x2e, 0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
		0,    1,    0,	  0,	0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
		0,    0,    0,	  0,	0, 0, 0, 0, 0, 0, 0, 1,
	};
	bool read = _i == 3;
	const uint8_t *rtr = read ? rd_rtr : wr_rtr;
	size_t rtr_len = read ? sizeof(rd_rtr) : sizeof(wr_rtr);
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *sid;
	struct cmt_side srv;
	uint8_t rep[sizeof(rep_want)], rr[20];
	size_t i;
	int fd;

	if (read) {
		req[22] = 0x40;	     /* Read RTR only */
		rep_want[21] = 0x01; /* IRD forced to 1 */
		rep_want[22] = 0x40;
	}
	attr_fast(&a);
	a.p2p = _i >= 2 ? IWARP_P2P_WRITE : IWARP_P2P_READ; /* local config */
	memset(&cp, 0, sizeof(cp)); /* perftest Write test: IRD = ORD = 0 */
	fd = raw_request_accept(&srv, &a, req, sizeof(req), &cp, &l, &sid);

	raw_read_all(fd, rep, sizeof(rep));
	ck_assert_mem_eq(rep, rep_want, sizeof(rep));
	/* RFC 6581 §7: no ESTABLISHED before the RTR. The Reply is out, so
	 * a responder that did not wait would raise it now; the ESTABLISHED
	 * expected below cannot tell the two apart, hence the quiet window */
	ck_assert_msg(!cmt_ch_ready(srv.ch, QUIET_MS), "event before the RTR");
	if (_i == 1) {
		for (i = 0; i < rtr_len; i++)
			ck_assert_int_eq(send(fd, rtr + i, 1, 0), 1);
	} else {
		ck_assert_int_eq(send(fd, rtr, rtr_len, 0), (ssize_t)rtr_len);
	}
	ev = expect_ev(srv.ch, IWARP_CM_EVENT_ESTABLISHED);
	ck_assert_ptr_eq(ev->id, sid);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(cmt_qp_state(sid->qp), IWARP_QPS_RTS);
	if (read) {
		/* zero-length Read Response: tagged, last, opcode 2, STag 1 */
		raw_read_all(fd, rr, sizeof(rr));
		ck_assert_uint_eq(rr[0], 0x00);
		ck_assert_uint_eq(rr[1], 0x0e);
		ck_assert_uint_eq(rr[2], 0xc1);
		ck_assert_uint_eq(rr[3] & 0x0f, 0x2);
		ck_assert_uint_eq(rr[7], 1);
	}

	close(fd); /* the datapath sees the close */
	ack_ev(srv.ch, IWARP_CM_EVENT_DISCONNECTED);
	destroy(sid);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/*
 * RFC 6581 §7 (cxgb3 96ac7e88), interop with siw: an initiator configured
 * for a Read RTR whose ULP passes initiator_depth 0 (perftest Write tests)
 * must still advertise ORD 1 (`80 00 40 01`), and after a Reply choosing
 * Read its first FPDU is the 52-octet zero-length Read Request
 * (docs/interop-notes.md §6.7), with a QP ORD of at least 1.
 */
START_TEST(test_p2p_initiator_read_rtr_ord)
{
	static const uint8_t req_want[] = {
		'M',  'P',  'A',  ' ',	'I',  'D',  ' ',  'R',
		'e',  'q',  ' ',  'F',	'r',  'a',  'm',  'e',
		0x10, 0x02, 0x00, 0x04, 0x80, 0x00, 0x40, 0x01,
	};
	static const uint8_t rep[] = {
		'M',  'P',  'A',  ' ',	'I',  'D',  ' ',  'R',
		'e',  'p',  ' ',  'F',	'r',  'a',  'm',  'e',
		0x10, 0x02, 0x00, 0x04, 0x80, 0x01, 0x40, 0x00,
	};
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;
	uint16_t lport;
	struct iwarp_cm_id *c;
	struct cmt_side s;
	uint8_t buf[64];
	int lfd, fd;

	lfd = raw_listen(&lport);
	attr_fast(&a);
	a.p2p = IWARP_P2P_READ;
	side_open(&s, &a);
	c = client_to(&s, "127.0.0.1", lport);
	memset(&cp, 0, sizeof(cp)); /* IRD 0, ORD 0 */
	ck_assert_int_eq(iwarp_cm_connect(c, &cp), 0);
	fd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(recv(fd, buf, 24, MSG_WAITALL), 24);
	ck_assert_mem_eq(buf, req_want, sizeof(req_want));
	ck_assert_int_eq(send(fd, rep, sizeof(rep), 0), (ssize_t)sizeof(rep));

	ev = expect_ev(s.ch, IWARP_CM_EVENT_ESTABLISHED);
	ck_assert_uint_ge(ev->param.conn.initiator_depth, 1);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	/* the Read RTR: ULPDU_Length 46, untagged, RDMAP opcode 1 (Read
	 * Request), QN 1; CRC off: 52 octets */
	ck_assert_int_eq(recv(fd, buf, 52, MSG_WAITALL), 52);
	ck_assert_uint_eq(buf[0], 0x00);
	ck_assert_uint_eq(buf[1], 46);
	ck_assert_uint_eq(buf[2] & 0x80, 0); /* untagged */
	ck_assert_uint_eq(buf[3] & 0x0f, 0x1);
	ck_assert_uint_eq(buf[11], 1); /* QN 1 (RFC 5041 §5.2) */

	close(fd);
	ack_ev(s.ch, IWARP_CM_EVENT_DISCONNECTED);
	destroy(c);
	close(lfd);
	cmt_side_close(&s);
	wait_mem(base);
}
END_TEST

/* ---- TERMINATE before the FIN (RFC 5044 §7.1/§8, RFC 6581 §6-§7) ---- */

/* Reads |len| octets that must equal |want|, then the peer's FIN (an
 * orderly close: recv 0, not a reset). */
static void raw_expect_then_fin(int fd, const uint8_t *want, size_t len)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	uint8_t buf[64];

	if (len) {
		raw_read_all(fd, buf, len);
		ck_assert_mem_eq(buf, want, len);
	}
	ck_assert_msg(poll(&pf, 1, WAIT_MS) == 1, "no FIN");
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), 0), 0);
}

/*
 * Initiator (docs/interop-notes.md §1.2, siw_proc_mpareply): a well-formed
 * Reply it cannot use gets a TERMINATE LLP/MPA on the wire before the FIN, and
 * CONNECT_ERROR keeps the negotiation error as status. We offer a Write
 * RTR (p2p=write, CRC off). _i 0: the Reply chooses Read: 0x07, no CRC.
 * _i 1: the same Reply with C=1: CRC on (RFC 5044 §7.1). _i 2: the Reply
 * lacks A and asks for markers (M=1): 0x07 behind a marker. _i 3: a
 * Request key (siw's "bad key"): 0x04. _i 4: R=1: REJECTED, FIN only.
 * _i 5: bytes that are not MPA: CONNECT_ERROR, FIN only.
 */
START_TEST(test_initiator_reply_terminate)
{
	uint8_t rep[24] = {
		'M',  'P',  'A',  ' ',	'I',  'D',  ' ',  'R',
		'e',  'p',  ' ',  'F',	'r',  'a',  'm',  'e',
		0x10, 0x02, 0x00, 0x04, 0x80, 0x04, 0x40, 0x04,
	};
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_event *ev;
	uint16_t lport;
	struct iwarp_cm_id *c;
	struct cmt_side s;
	uint8_t buf[64], want[64];
	size_t wn = 0;
	int lfd, fd, status = IWARP_ERR_MPA_RTR;

	switch (_i) {
	case 1:
		rep[16] |= 0x40; /* C */
		wn = iw_test_llp_term(want, 0x07, true, false);
		break;
	case 2:
		rep[16] |= 0x80; /* M */
		rep[20] = 0x00;	 /* no A */
		rep[22] = 0x00;
		wn = iw_test_llp_term(want, 0x07, false, true);
		break;
	case 3:
		rep[9] = 'q'; /* "MPA ID Req Frame" */
		status = IWARP_ERR_MPA_KEY;
		wn = iw_test_llp_term(want, 0x04, false, false);
		break;
	case 4:
		rep[16] |= 0x20; /* R */
		status = IWARP_ERR_MPA_REJECTED;
		break;
	case 5:
		memcpy(rep, "MPA ID Bad Frame", 16);
		status = IWARP_ERR_MPA_KEY;
		break;
	default:
		wn = iw_test_llp_term(want, 0x07, false, false);
		break;
	}
	lfd = raw_listen(&lport);
	attr_fast(&a);
	a.p2p = IWARP_P2P_WRITE;
	side_open(&s, &a);
	c = client_to(&s, "127.0.0.1", lport);
	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	fd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(recv(fd, buf, 24, MSG_WAITALL), 24);
	ck_assert(!memcmp(buf, "MPA ID Req Frame\x10\x02\x00\x04", 20));
	ck_assert_uint_eq(buf[20] & 0x80, 0x80); /* A */
	ck_assert_uint_eq(buf[22] & 0xc0, 0x80); /* Write RTR only */
	ck_assert_int_eq(send(fd, rep, sizeof(rep), 0), (ssize_t)sizeof(rep));

	ev = expect_ev(s.ch, _i == 4 ? IWARP_CM_EVENT_REJECTED
				     : IWARP_CM_EVENT_CONNECT_ERROR);
	ck_assert_ptr_eq(ev->id, c);
	ck_assert_int_eq(ev->status, status);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	raw_expect_then_fin(fd, want, wn);
	close(fd);
	expect_no_stray_event(&s); /* nothing more for this attempt */
	destroy(c);
	close(lfd);
	cmt_side_close(&s);
	wait_mem(base);
}
END_TEST

/*
 * Responder in RFC 6581 P2P mode: a first FPDU that is not the negotiated
 * zero-length RTR gets TERMINATE LLP/MPA 0x07 (no matching RTR option)
 * before the FIN and CONNECT_ERROR IWARP_ERR_MPA_RTR; no ESTABLISHED.
 * The Request offers Write and Read (the Reply chooses Write). _i 0: a
 * 1-octet Send instead (CRC off). _i 1: C=1 in the Request (CRC on) and a
 * zero-length Read Request instead: the TERMINATE carries the CRC. _i 2:
 * M=1 in the Request: the TERMINATE starts with a marker. _i 3: the
 * initiator's Terminate comes first: not answered (RFC 5040 §4.8),
 * CONNECT_ERROR -ECONNABORTED, FIN only.
 */
START_TEST(test_p2p_responder_rtr_mismatch)
{
	uint8_t req[24] = {
		'M',  'P',  'A',  ' ',	'I',  'D',  ' ',  'R',
		'e',  'q',  ' ',  'F',	'r',  'a',  'm',  'e',
		0x10, 0x02, 0x00, 0x04, 0x80, 0x04, 0xc0, 0x04,
	};
	/* 1-octet Send: ULPDU 19, pad 3, 28 octets
	 * (docs/interop-notes.md §6.7) */
	static const uint8_t send1[28] = {
		0x00, 0x13, 0x41, 0x43, 0, 0, 0, 0, 0, 0,   0,
		0,    0,    0,	  0,	1, 0, 0, 0, 0, 'x',
	};
	/* zero-length Read Request (RFC 5040 §4.4), CRC field not checked
	 * by the CM */
	static const uint8_t rd[52] = {
		0x00, 0x2e, 0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
		0,    1,    0,	  0,	0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
		0,    0,    0,	  0,	0, 0, 0, 0, 0, 0, 0, 1,
	};
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *sid;
	struct cmt_side srv;
	uint8_t rep[24], want[64], term[28];
	const uint8_t *first = send1;
	size_t first_len = sizeof(send1), wn = 0;
	int fd, status = IWARP_ERR_MPA_RTR;

	switch (_i) {
	case 1:
		req[16] |= 0x40; /* C */
		first = rd;
		first_len = sizeof(rd);
		wn = iw_test_llp_term(want, 0x07, true, false);
		break;
	case 2:
		req[16] |= 0x80; /* M: insert markers toward the initiator */
		wn = iw_test_llp_term(want, 0x07, false, true);
		break;
	case 3:
		iw_test_llp_term(term, 0x01, false,
				 false); /* stream lost, say */
		first = term;
		first_len = sizeof(term);
		status = -ECONNABORTED;
		break;
	default:
		wn = iw_test_llp_term(want, 0x07, false, false);
		break;
	}
	attr_fast(&a);
	fd = raw_request_accept(&srv, &a, req, sizeof(req), NULL, &l, &sid);
	raw_read_all(fd, rep, sizeof(rep));
	ck_assert(!memcmp(rep, "MPA ID Rep Frame", 16));
	ck_assert_uint_eq(rep[16] & 0x40, req[16] & 0x40); /* C echoed */
	ck_assert_uint_eq(rep[20] & 0x80, 0x80);	   /* A */
	ck_assert_uint_eq(rep[22] & 0xc0, 0x80);	   /* Write chosen */
	/* no ESTABLISHED before the RTR: CONNECT_ERROR must be next */

	ck_assert_int_eq(send(fd, first, first_len, 0), (ssize_t)first_len);
	ev = expect_ev(srv.ch, IWARP_CM_EVENT_CONNECT_ERROR);
	ck_assert_ptr_eq(ev->id, sid);
	ck_assert_int_eq(ev->status, status);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	raw_expect_then_fin(fd, want, wn);
	close(fd);
	expect_no_stray_event(&srv); /* no ESTABLISHED, nothing else */
	destroy(sid);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* Destroying an id that still has an unacked event waits for the ack:
 * here the ack comes first, then destroy returns at once; a queued
 * (undelivered) event of the id is dropped. */
START_TEST(test_destroy_drops_queued_events)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct sockaddr_storage ss;
	struct iwarp_cm_id *c;
	struct cmt_side s;

	attr_fast(&a);
	side_open(&s, &a);
	ck_assert_int_eq(
		iwarp_cm_create_id(s.ch, s.ctx, &c, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 9, &ss), 0);
	ck_assert_int_eq(
		iwarp_cm_resolve_addr(c, NULL, (struct sockaddr *)&ss, 10), 0);
	ck_assert(cmt_ch_ready(s.ch, WAIT_MS));
	ck_assert_int_eq(iwarp_cm_destroy_id(c), 0);
	expect_no_stray_event(&s); /* the queued event was dropped */
	cmt_side_close(&s);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

#define MANY 64

START_TEST(test_many_connections)
{
	static struct conn_pair p[MANY];
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_qp_init_attr qa;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l;
	struct cmt_side srv, cli;
	int i, j, est_c = 0, est_s = 0, nreq = 0;
	uint16_t port;

	attr_fast(&a);
	side_open(&srv, &a);
	side_open(&cli, &a);
	l = listen_on(&srv, "127.0.0.1", &port);
	for (i = 0; i < MANY; i++) {
		struct iwarp_conn_param cp;
		char pd[8];

		p[i].c = client_to(&cli, "127.0.0.1", port);
		snprintf(pd, sizeof(pd), "c%02d", i);
		memset(&cp, 0, sizeof(cp));
		cp.private_data = pd;
		cp.private_data_len = 4;
		ck_assert_int_eq(iwarp_cm_connect(p[i].c, &cp), 0);
	}
	/* accept them all as their requests come in, in any order; the
	 * server's ESTABLISHED events interleave with the requests */
	while (nreq < MANY || est_s < MANY) {
		ck_assert(cmt_ch_ready(srv.ch, WAIT_MS));
		ck_assert_int_eq(iwarp_cm_get_event(srv.ch, &ev), 0);
		if (ev->event == IWARP_CM_EVENT_ESTABLISHED) {
			est_s++;
			ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
			continue;
		}
		ck_assert_int_eq(ev->event, IWARP_CM_EVENT_CONNECT_REQUEST);
		nreq++;
		ck_assert_uint_eq(ev->param.conn.private_data_len, 4);
		j = atoi((const char *)ev->param.conn.private_data + 1);
		ck_assert(j >= 0 && j < MANY && !p[j].s);
		p[j].s = ev->id;
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		cmt_qp_attr(&srv, &qa, 16);
		ck_assert_int_eq(iwarp_cm_create_qp(p[j].s, srv.pd, &qa), 0);
		ck_assert_int_eq(iwarp_cm_accept(p[j].s, NULL), 0);
	}
	for (i = 0; i < MANY; i++) {
		ev = expect_ev(cli.ch, IWARP_CM_EVENT_ESTABLISHED);
		ck_assert_uint_eq(ev->param.conn.private_data_len, 0);
		est_c++;
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
	ck_assert_int_eq(est_c, MANY);
	expect_no_stray_event(&srv); /* one ESTABLISHED per connection */
	for (i = 0; i < MANY; i++) {
		destroy(p[i].c);
		destroy(p[i].s);
	}
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/* INLINE progress: nobody runs the engines but iwarp_cm_get_event (both
 * sides on one channel) and iwarp_poll_cq. */
START_TEST(test_inline_progress)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_qp_init_attr qa;
	struct iwarp_cm_event *ev;
	struct cmt_side srv, cli;
	struct conn_pair p;
	uint16_t port;
	int i, est = 0;

	attr_fast(&a);
	a.progress = IWARP_PROGRESS_INLINE;
	side_open(&srv, &a);
	side_open(&cli, &a);
	/* one channel for both sides */
	iwarp_cm_destroy_event_channel(cli.ch);
	cli.ch = srv.ch;
	p.l = listen_on(&srv, "127.0.0.1", &port);
	p.c = client_to(&cli, "127.0.0.1", port);
	ck_assert_int_eq(iwarp_cm_connect(p.c, NULL), 0);
	ck_assert_int_eq(iwarp_cm_get_event(srv.ch, &ev), 0); /* blocks */
	ck_assert_int_eq(ev->event, IWARP_CM_EVENT_CONNECT_REQUEST);
	p.s = ev->id;
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(&srv, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(p.s, srv.pd, &qa), 0);
	ck_assert_int_eq(iwarp_cm_accept(p.s, NULL), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(iwarp_cm_get_event(srv.ch, &ev), 0);
		ck_assert_int_eq(ev->event, IWARP_CM_EVENT_ESTABLISHED);
		est |= ev->id == p.c ? 1 : 2;
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
	ck_assert_int_eq(est, 3);
	send_one(&srv, &cli, &p);
	destroy(p.c);
	destroy(p.s);
	ck_assert_int_eq(iwarp_cm_destroy_id(p.l), 0);
	cli.ch = iwarp_cm_create_event_channel();
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/*
 * The channel's fd counter changes outside its lock (cm/cm_event.c):
 * producers push events from their own threads while this thread takes
 * them, so that raises and take-backs land out of order. Each producer
 * waits for its previous event to be taken, so the queue keeps turning
 * empty and non-empty. A readable fd must always find an event, every
 * event must be found, and at the end nothing is readable.
 */
#define CHAN_PRODUCERS 4
#define CHAN_ROUNDS    3000

struct cm_chan_run {
	struct iwarp_cm_id *id[CHAN_PRODUCERS];
	unsigned int taken[CHAN_PRODUCERS];
	int failed;
};

struct cm_chan_producer {
	struct cm_chan_run *run;
	int idx;
};

static void *cm_chan_producer_main(void *arg)
{
	struct cm_chan_producer *p = arg;
	struct cm_id *id = cm_id_from_pub(p->run->id[p->idx]);
	unsigned int k;

	for (k = 1; k <= CHAN_ROUNDS; k++) {
		if (cm_event_push(id, NULL, IWARP_CM_EVENT_ADDR_RESOLVED, 0,
				  NULL, 0, 0, 0)) {
			__atomic_store_n(&p->run->failed, 1, __ATOMIC_RELEASE);
			return NULL;
		}
		/* a lost event fails here */
		if (!iw_test_wait_count(&p->run->taken[p->idx], k, 20)) {
			__atomic_store_n(&p->run->failed, 2, __ATOMIC_RELEASE);
			return NULL;
		}
	}
	return NULL;
}

START_TEST(test_channel_concurrent)
{
	bool nonblocking = _i == 1;
	struct cm_chan_producer prod[CHAN_PRODUCERS];
	long base = iw_mem_outstanding();
	struct iwarp_event_channel *ch;
	pthread_t th[CHAN_PRODUCERS];
	struct iwarp_cm_event *ev;
	struct cm_chan_run run;
	struct pollfd pfd;
	unsigned int total;
	int i;

	memset(&run, 0, sizeof(run));
	ch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(ch);
	if (nonblocking)
		ck_assert_int_eq(fcntl(ch->fd, F_SETFL, O_NONBLOCK), 0);
	for (i = 0; i < CHAN_PRODUCERS; i++)
		ck_assert_int_eq(iwarp_cm_create_id(ch, NULL, &run.id[i],
						    (void *)(intptr_t)i,
						    IWARP_PS_TCP),
				 0);
	for (i = 0; i < CHAN_PRODUCERS; i++) {
		prod[i].run = &run;
		prod[i].idx = i;
		ck_assert_int_eq(pthread_create(&th[i], NULL,
						cm_chan_producer_main,
						&prod[i]),
				 0);
	}
	for (total = 0; total < CHAN_PRODUCERS * CHAN_ROUNDS;) {
		ck_assert_int_eq(__atomic_load_n(&run.failed, __ATOMIC_ACQUIRE),
				 0);
		pfd.fd = ch->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		/* bounded: a lost raise fails here, not by hanging */
		ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
		/* readable: an event is there (a blocking call would return
		 * one anyway; a non-blocking one must not say -EAGAIN) */
		ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), 0);
		i = (int)(intptr_t)ev->id->context;
		ck_assert_int_ge(i, 0);
		ck_assert_int_lt(i, CHAN_PRODUCERS);
		ck_assert_int_eq(ev->event, IWARP_CM_EVENT_ADDR_RESOLVED);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		__atomic_add_fetch(&run.taken[i], 1, __ATOMIC_RELEASE);
		total++;
	}
	for (i = 0; i < CHAN_PRODUCERS; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	ck_assert_int_eq(run.failed, 0);
	/* every raise taken back: nothing readable, nothing queued */
	pfd.revents = 0;
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	if (nonblocking)
		ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), -EAGAIN);
	for (i = 0; i < CHAN_PRODUCERS; i++)
		ck_assert_int_eq(iwarp_cm_destroy_id(run.id[i]), 0);
	iwarp_cm_destroy_event_channel(ch);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

static Suite *cm_suite(void)
{
	Suite *s = suite_create("cm");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_channel_and_default_context);
	tcase_add_test(tc, test_getaddr);
	tcase_add_test(tc, test_resolve_and_listen);
	tcase_add_test(tc, test_refused_is_rejected);
	tcase_add_test(tc, test_timeout_is_unreachable);
	tcase_add_test(tc, test_bind_reserves_port);
	tcase_add_test(tc, test_resolve_binds_source_port);
	tcase_add_test(tc, test_reject_with_private_data);
	tcase_add_test(tc, test_hostile_clients);
	tcase_add_test(tc, test_bad_responders);
	tcase_add_test(tc, test_destroy_listener_with_pending);
	tcase_add_test(tc, test_destroy_drops_queued_events);
	tcase_add_loop_test(tc, test_channel_concurrent, 0, 2);
	tcase_add_test(tc, test_preconnect_calls_here);
	tcase_add_loop_test(tc, test_connect_options, 0,
			    (int)(sizeof(opts) / sizeof(opts[0])));
	tcase_add_loop_test(tc, test_p2p_responder_negotiated_rtr, 0, 4);
	tcase_add_test(tc, test_p2p_initiator_read_rtr_ord);
	tcase_add_loop_test(tc, test_initiator_reply_terminate, 0, 6);
	tcase_add_loop_test(tc, test_p2p_responder_rtr_mismatch, 0, 4);
	tcase_add_test(tc, test_many_connections);
	tcase_add_test(tc, test_inline_progress);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(cm_suite)

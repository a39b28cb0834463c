/*
 * tests/cm_migrate_test.c: iwarp_cm_migrate_id over real loopback TCP:
 * queued events move in order and leave the old channel, later events
 * come on the new one, a listener takes its undelivered CONNECT_REQUESTs
 * and their children along, the call waits for delivered events to be
 * acked, and the old channel may be destroyed right after. Every wait is
 * bounded (WAIT_MS); nothing asserts on timing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>

#include "cm/cm_int.h"
#include "iwarp/iwarp.h"
#include "cm_testutil.h"
#include "testutil.h"
#include "util/mem.h"

#define WAIT_MS	     30000 /* upper bound of any wait (a hang fails the test) */
#define MPA_TIMER_MS 20000
/* How long a test lets a thread run that must still be blocked (a slow
 * machine only makes the check weaker, never makes it fail). */
#define QUIET_MS 300

static void attr_fast(struct iwarp_context_attr *a,
		      enum iwarp_progress_mode progress)
{
	iwarp_context_attr_init(a);
	a->mpa_rev = 2;
	a->crc = IWARP_CRC_OFF;
	a->markers = 0;
	a->p2p = IWARP_P2P_NONE;
	a->progress = progress;
	a->mpa_req_timeout_ms = MPA_TIMER_MS;
	a->mpa_rep_timeout_ms = MPA_TIMER_MS;
}

/* The channel's queue is empty now: its fd is not readable and a
 * non-blocking get_event says EAGAIN. Only used right after a call that
 * emptied it synchronously (no event of the channel can be in flight). */
static void expect_empty(struct iwarp_event_channel *ch)
{
	struct iwarp_cm_event *ev = NULL;
	int fl = fcntl(ch->fd, F_GETFL);

	ck_assert(!cmt_ch_ready(ch, 0));
	ck_assert_int_ge(fl, 0);
	ck_assert_int_eq(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), -EAGAIN);
	ck_assert_ptr_null(ev);
	ck_assert_int_eq(fcntl(ch->fd, F_SETFL, fl), 0);
}

/* Waits (bounded) until |ch| holds |n| queued events (a look inside the
 * channel: the API cannot count them without taking them). */
static void wait_queued(struct iwarp_event_channel *ch, int n)
{
	struct cm_channel *c = cm_channel_from_pub(ch);
	struct cm_event *ev;
	int i, got = 0;

	for (i = 0; i < WAIT_MS; i++) {
		pthread_mutex_lock(&c->lock);
		for (got = 0, ev = c->head; ev; ev = ev->next)
			got++;
		pthread_mutex_unlock(&c->lock);
		if (got >= n)
			break;
		poll(NULL, 0, 1);
	}
	ck_assert_int_eq(got, n);
}

/* The next event of |ch| (bounded wait; INLINE contexts are driven by the
 * blocking get_event itself), which must be |type| for |id|. */
static struct iwarp_cm_event *expect_ev(struct iwarp_event_channel *ch,
					enum iwarp_cm_event_type type,
					struct iwarp_cm_id *id, bool inl)
{
	struct iwarp_cm_event *ev;

	if (!inl) {
		ev = cmt_expect_ev(ch, type, WAIT_MS);
	} else {
		ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), 0);
		ck_assert_msg(ev->event == type, "got %s, wanted %s",
			      iwarp_cm_event_str(ev->event),
			      iwarp_cm_event_str(type));
	}
	if (id)
		ck_assert_ptr_eq(ev->id, id);
	return ev;
}

static void ack_ev(struct iwarp_event_channel *ch,
		   enum iwarp_cm_event_type type, struct iwarp_cm_id *id,
		   bool inl)
{
	ck_assert_int_eq(iwarp_cm_ack_event(expect_ev(ch, type, id, inl)), 0);
}

/* A client id on s->ch whose ADDR_RESOLVED and ROUTE_RESOLVED are queued
 * (not fetched), with a QP. */
static struct iwarp_cm_id *client_queued(struct cmt_side *s, uint16_t port)
{
	struct iwarp_cm_id *c = cmt_resolving(s, port);
	struct iwarp_qp_init_attr qa;

	ck_assert_int_eq(iwarp_cm_resolve_route(c, 2000), 0);
	cmt_qp_attr(s, &qa, 4);
	ck_assert_int_eq(iwarp_cm_create_qp(c, s->pd, &qa), 0);
	return c;
}

static void destroy(struct iwarp_cm_id *id)
{
	iwarp_cm_destroy_qp(id);
	ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
}

static void wait_mem(long base)
{
	int i;

	for (i = 0; i < WAIT_MS && iw_mem_outstanding() != base; i++)
		poll(NULL, 0, 1);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}

START_TEST(test_migrate_args)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_cm_id *id;
	struct cmt_side s;

	attr_fast(&a, IWARP_PROGRESS_CPU);
	cmt_side_open(&s, &a, 64);
	ck_assert_int_eq(
		iwarp_cm_create_id(s.ch, s.ctx, &id, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_migrate_id(NULL, s.ch), -EINVAL);
	ck_assert_int_eq(iwarp_cm_migrate_id(id, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_cm_migrate_id(id, s.ch), 0); /* no move */
	ck_assert_ptr_eq(id->channel, s.ch);
	ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
	cmt_side_close(&s);
	wait_mem(base);
}
END_TEST

/*
 * A client's queued ADDR_RESOLVED and ROUTE_RESOLVED move, in order, to
 * the new channel, which also gets everything later (ESTABLISHED,
 * DISCONNECTED, TIMEWAIT_EXIT); the old channel sees none of them and is
 * destroyed right after the move, while the id lives on. Loop: 0 a thread
 * progress mode, 1 INLINE (the new channel's get_event drives the engine).
 */
START_TEST(test_migrate_queued_and_later_events)
{
	bool inl = _i == 1;
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_qp_init_attr qa;
	struct iwarp_event_channel *nch;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *c, *child;
	struct cmt_side srv, cli;
	uint16_t port;
	int i, est = 0;

	attr_fast(&a, inl ? IWARP_PROGRESS_INLINE : IWARP_PROGRESS_CPU);
	cmt_side_open(&srv, &a, 64);
	cmt_side_open(&cli, &a, 64);
	l = cmt_listen(&srv, 16, &port);
	c = client_queued(&cli, port);
	ck_assert(cmt_ch_ready(cli.ch, WAIT_MS));
	nch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(nch);
	ck_assert_int_eq(iwarp_cm_migrate_id(c, nch), 0);
	ck_assert_ptr_eq(c->channel, nch);
	expect_empty(cli.ch);
	/* the old channel goes; the id's events keep coming on the new one */
	iwarp_cm_destroy_event_channel(cli.ch);
	cli.ch = NULL;
	ck_assert(cmt_ch_ready(nch, 0)); /* readable: the moved events */
	ack_ev(nch, IWARP_CM_EVENT_ADDR_RESOLVED, c, inl);
	ack_ev(nch, IWARP_CM_EVENT_ROUTE_RESOLVED, c, inl);
	expect_empty(nch);

	ck_assert_int_eq(iwarp_cm_connect(c, NULL), 0);
	if (inl) {
		/* one channel drives both INLINE contexts: put the listener
		 * on it too (a second migration, listener side) */
		ck_assert_int_eq(iwarp_cm_migrate_id(l, nch), 0);
		ck_assert_ptr_eq(l->channel, nch);
	}
	ev = expect_ev(inl ? nch : srv.ch, IWARP_CM_EVENT_CONNECT_REQUEST, NULL,
		       inl);
	child = ev->id;
	ck_assert_ptr_eq(ev->listen_id, l);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(&srv, &qa, 4);
	ck_assert_int_eq(iwarp_cm_create_qp(child, srv.pd, &qa), 0);
	ck_assert_int_eq(iwarp_cm_accept(child, NULL), 0);
	if (inl) {
		for (i = 0; i < 2; i++) {
			ev = expect_ev(nch, IWARP_CM_EVENT_ESTABLISHED, NULL,
				       true);
			est |= ev->id == c ? 1 : ev->id == child ? 2 : 4;
			ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		}
		ck_assert_int_eq(est, 3);
	} else {
		ack_ev(nch, IWARP_CM_EVENT_ESTABLISHED, c, false);
		ack_ev(srv.ch, IWARP_CM_EVENT_ESTABLISHED, child, false);
	}
	ck_assert_int_eq(cmt_qp_state(c->qp), IWARP_QPS_RTS);
	destroy(c);
	destroy(child);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	iwarp_cm_destroy_event_channel(nch);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

/*
 * A listener with CONNECT_REQUESTs queued moves with them: they arrive on
 * the new channel (in order), their child ids' channel is the new one and
 * the children's own events (ESTABLISHED) come there; a connection made
 * after the move raises its CONNECT_REQUEST there too. Events of another
 * id stay on the old channel, in their order.
 */
START_TEST(test_migrate_listener)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_qp_init_attr qa;
	struct iwarp_event_channel *nch;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l, *other, *c[3], *child[3], *kids[3];
	struct sockaddr_storage ss;
	struct cmt_side srv, cli;
	uint16_t port;
	int i;

	attr_fast(&a, IWARP_PROGRESS_CPU);
	cmt_side_open(&srv, &a, 64);
	cmt_side_open(&cli, &a, 64);
	l = cmt_listen(&srv, 16, &port);
	/* an id that stays: its ADDR_RESOLVED is queued before the requests */
	ck_assert_int_eq(
		iwarp_cm_create_id(srv.ch, srv.ctx, &other, NULL, IWARP_PS_TCP),
		0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 9, &ss), 0);
	ck_assert_int_eq(
		iwarp_cm_resolve_addr(other, NULL, (struct sockaddr *)&ss, 10),
		0);
	for (i = 0; i < 2; i++) {
		struct iwarp_conn_param cp;
		char pd[2] = {(char)('a' + i), 0};

		c[i] = client_queued(&cli, port);
		ack_ev(cli.ch, IWARP_CM_EVENT_ADDR_RESOLVED, c[i], false);
		ack_ev(cli.ch, IWARP_CM_EVENT_ROUTE_RESOLVED, c[i], false);
		memset(&cp, 0, sizeof(cp));
		cp.private_data = pd;
		cp.private_data_len = 2;
		ck_assert_int_eq(iwarp_cm_connect(c[i], &cp), 0);
	}
	/* both requests queued behind |other|'s event, so that they move */
	wait_queued(srv.ch, 3);
	nch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(nch);
	ck_assert_int_eq(iwarp_cm_migrate_id(l, nch), 0);
	ck_assert_ptr_eq(l->channel, nch);
	/* the old channel keeps |other|'s event, and nothing else */
	ack_ev(srv.ch, IWARP_CM_EVENT_ADDR_RESOLVED, other, false);
	expect_empty(srv.ch);
	/* a third connection, after the move */
	c[2] = client_queued(&cli, port);
	ack_ev(cli.ch, IWARP_CM_EVENT_ADDR_RESOLVED, c[2], false);
	ack_ev(cli.ch, IWARP_CM_EVENT_ROUTE_RESOLVED, c[2], false);
	ck_assert_int_eq(iwarp_cm_connect(c[2], NULL), 0);
	for (i = 0; i < 3; i++) {
		ev = expect_ev(nch, IWARP_CM_EVENT_CONNECT_REQUEST, NULL,
			       false);
		ck_assert_ptr_eq(ev->listen_id, l);
		if (i < 2) {
			/* the two first in their order */
			ck_assert_uint_eq(ev->param.conn.private_data_len, 2);
			ck_assert_int_eq(
				((const char *)ev->param.conn.private_data)[0],
				'a' + i);
		} else {
			ck_assert_uint_eq(ev->param.conn.private_data_len, 0);
		}
		child[i] = kids[i] = ev->id;
		ck_assert_ptr_eq(child[i]->channel, nch);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		cmt_qp_attr(&srv, &qa, 4);
		ck_assert_int_eq(iwarp_cm_create_qp(child[i], srv.pd, &qa), 0);
	}
	/* accepted in that order: the children's ESTABLISHED come on the new
	 * channel, the clients' in the same order */
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(iwarp_cm_accept(child[i], NULL), 0);
	for (i = 0; i < 3; i++) {
		int j;

		ev = expect_ev(nch, IWARP_CM_EVENT_ESTABLISHED, NULL, false);
		for (j = 0; j < 3 && ev->id != child[j]; j++)
			;
		ck_assert_int_lt(j, 3);
		child[j] = NULL; /* once each */
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
	for (i = 0; i < 3; i++) {
		ev = expect_ev(cli.ch, IWARP_CM_EVENT_ESTABLISHED, NULL, false);
		ck_assert(ev->id == c[0] || ev->id == c[1] || ev->id == c[2]);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
	expect_empty(srv.ch);
	for (i = 0; i < 3; i++) {
		destroy(c[i]);
		destroy(kids[i]);
	}
	ck_assert_int_eq(iwarp_cm_destroy_id(other), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	/* the old server channel goes last-but-one, the new one after it */
	iwarp_cm_destroy_event_channel(nch);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
	wait_mem(base);
}
END_TEST

struct mig_arg {
	struct iwarp_cm_id *id;
	struct iwarp_event_channel *to;
	atomic_int done;
	int rc;
};

static void *mig_thread(void *p)
{
	struct mig_arg *m = p;

	m->rc = iwarp_cm_migrate_id(m->id, m->to);
	atomic_store(&m->done, 1);
	return NULL;
}

/*
 * An event delivered on the old channel and not yet acked holds the
 * migration until it is acked; the events queued behind it move.
 */
START_TEST(test_migrate_waits_for_ack)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_event_channel *nch;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *c;
	struct mig_arg m;
	pthread_t th;
	struct cmt_side s;

	attr_fast(&a, IWARP_PROGRESS_CPU);
	cmt_side_open(&s, &a, 64);
	c = client_queued(&s, 9);
	ev = expect_ev(s.ch, IWARP_CM_EVENT_ADDR_RESOLVED, c, false);
	nch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(nch);
	memset(&m, 0, sizeof(m));
	m.id = c;
	m.to = nch;
	ck_assert_int_eq(pthread_create(&th, NULL, mig_thread, &m), 0);
	poll(NULL, 0, QUIET_MS);
	ck_assert_int_eq(atomic_load(&m.done), 0); /* still waiting */
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(m.rc, 0);
	ck_assert_ptr_eq(c->channel, nch);
	expect_empty(s.ch);
	ack_ev(nch, IWARP_CM_EVENT_ROUTE_RESOLVED, c, false);
	expect_empty(nch);
	/* and back: the channels are locked in address order both ways */
	ck_assert_int_eq(iwarp_cm_migrate_id(c, s.ch), 0);
	ck_assert_ptr_eq(c->channel, s.ch);
	destroy(c);
	iwarp_cm_destroy_event_channel(nch);
	cmt_side_close(&s);
	wait_mem(base);
}
END_TEST

static Suite *cm_migrate_suite(void)
{
	Suite *s = suite_create("cm_migrate");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_migrate_args);
	tcase_add_loop_test(tc, test_migrate_queued_and_later_events, 0, 2);
	tcase_add_test(tc, test_migrate_listener);
	tcase_add_test(tc, test_migrate_waits_for_ack);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(cm_migrate_suite)

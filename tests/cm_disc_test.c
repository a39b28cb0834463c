/*
 * tests/cm_disc_test.c: when DISCONNECTED is raised (cm/cm_disc.c). A
 * connection the peer ended raises it once the application has polled the
 * QP's completions other than flushes, or after IWARP_DISCONNECT_HOLD_MS;
 * a disconnect the application asked for raises it at once.
 *
 * The side whose event is held (the server) runs in INLINE progress mode:
 * its engine runs only inside this test's calls, so once a call has seen
 * its QP in ERR, the end of its connection has been handled completely
 * (conn_finish moves the QP to ERR and reports the end in one engine
 * pass) and whether DISCONNECTED was queued is settled, not a race. The
 * client runs its own engine thread. Every wait is bounded (WAIT_MS); the
 * only clock check is a lower bound (the hold lasts at least its bound).
 */
#include "config.h"

#include <check.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "cm/cm_int.h"
#include "cm_testutil.h"
#include "io/engine.h"
#include "iwarp/iwarp.h"
#include "testutil.h"
#include "util/mem.h"
#include "verbs/verbs.h"

#define WAIT_MS 30000 /* upper bound of any wait (a hang fails the test) */
/* A hold longer than any wait here: only polling (or a destroyed QP) can
 * end it within a test. */
#define HOLD_LONG "60000"

struct pair {
	struct cmt_side srv, cli;
	struct iwarp_cm_id *l, *s, *c;
	char sbuf[64], rbuf[4][64];
	struct iwarp_mr *smr, *rmr;
};

static void attr_side(struct iwarp_context_attr *a, bool inline_progress)
{
	iwarp_context_attr_init(a);
	a->p2p = IWARP_P2P_NONE;
	a->progress =
		inline_progress ? IWARP_PROGRESS_INLINE : IWARP_PROGRESS_CPU;
	a->mpa_req_timeout_ms = 20000;
	a->mpa_rep_timeout_ms = 20000;
}

/* The server's next event within WAIT_MS, driving its INLINE engine. */
static struct iwarp_cm_event *srv_expect(struct pair *p,
					 enum iwarp_cm_event_type type)
{
	struct iwarp_cm_event *ev;
	int i;

	for (i = 0; i < WAIT_MS; i++) {
		iwarp_progress(p->srv.ctx);
		if (cmt_ch_ready(p->srv.ch, 1))
			break;
	}
	ck_assert_msg(i < WAIT_MS, "server: no event, wanted %s",
		      iwarp_cm_event_str(type));
	ck_assert_int_eq(iwarp_cm_get_event(p->srv.ch, &ev), 0);
	ck_assert_msg(ev->event == type, "server: got %s, wanted %s",
		      iwarp_cm_event_str(ev->event), iwarp_cm_event_str(type));
	return ev;
}

static void srv_ack(struct pair *p, enum iwarp_cm_event_type type)
{
	ck_assert_int_eq(iwarp_cm_ack_event(srv_expect(p, type)), 0);
}

static void cli_ack(struct pair *p, enum iwarp_cm_event_type type)
{
	ck_assert_int_eq(
		iwarp_cm_ack_event(cmt_expect_ev(p->cli.ch, type, WAIT_MS)), 0);
}

/* An established pair, the server in INLINE mode, |nrecv| receives posted
 * on the server. IWARP_DISCONNECT_HOLD_MS is |hold| (NULL: unset). */
static void pair_open(struct pair *p, const char *hold, int nrecv)
{
	struct iwarp_context_attr a;
	struct iwarp_qp_init_attr qa;
	struct iwarp_recv_wr rwr, *bad;
	struct iwarp_sge sge;
	struct iwarp_cm_event *ev;
	uint16_t port;
	int i;

	memset(p, 0, sizeof(*p));
	if (hold)
		ck_assert_int_eq(setenv("IWARP_DISCONNECT_HOLD_MS", hold, 1),
				 0);
	else
		unsetenv("IWARP_DISCONNECT_HOLD_MS");
	attr_side(&a, true);
	cmt_side_open(&p->srv, &a, 64);
	attr_side(&a, false);
	cmt_side_open(&p->cli, &a, 64);
	p->l = cmt_listen(&p->srv, 8, &port);
	p->c = cmt_client(&p->cli, port, 16, WAIT_MS);
	ck_assert_int_eq(iwarp_cm_connect(p->c, NULL), 0);
	ev = srv_expect(p, IWARP_CM_EVENT_CONNECT_REQUEST);
	p->s = ev->id;
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(&p->srv, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(p->s, p->srv.pd, &qa), 0);

	p->rmr = iwarp_reg_mr(p->srv.pd, p->rbuf, sizeof(p->rbuf),
			      IWARP_ACCESS_LOCAL_WRITE);
	p->smr = iwarp_reg_mr(p->cli.pd, p->sbuf, sizeof(p->sbuf), 0);
	ck_assert_ptr_nonnull(p->rmr);
	ck_assert_ptr_nonnull(p->smr);
	for (i = 0; i < nrecv; i++) {
		sge.addr = (uintptr_t)p->rbuf[i];
		sge.length = sizeof(p->rbuf[i]);
		sge.lkey = p->rmr->lkey;
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 100 + (uint64_t)i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ck_assert_int_eq(iwarp_post_recv(p->s->qp, &rwr, &bad), 0);
	}
	ck_assert_int_eq(iwarp_cm_accept(p->s, NULL), 0);
	srv_ack(p, IWARP_CM_EVENT_ESTABLISHED);
	cli_ack(p, IWARP_CM_EVENT_ESTABLISHED);
}

/* The client Sends one message and polls its completion; the server's
 * engine is driven until the receive completion is in its CQ (not polled:
 * the CQ's count is read directly). */
static void send_unpolled(struct pair *p)
{
	struct iwarp_send_wr swr, *bad;
	struct iwarp_sge sge;
	struct iwarp_wc wc;
	int i, n = 0;

	strcpy(p->sbuf, "the last message");
	sge.addr = (uintptr_t)p->sbuf;
	sge.length = 17;
	sge.lkey = p->smr->lkey;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 9;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IWARP_WR_SEND;
	swr.send_flags = IWARP_SEND_SIGNALED;
	ck_assert_int_eq(iwarp_post_send(p->c->qp, &swr, &bad), 0);
	for (i = 0; i < WAIT_MS && !n; i++) {
		iwarp_progress(p->srv.ctx);
		n = iwarp_poll_cq(p->cli.cq, 1, &wc);
		if (!n)
			poll(NULL, 0, 1);
	}
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(wc.status, IWARP_WC_SUCCESS);
	for (i = 0; i < WAIT_MS; i++) {
		iwarp_progress(p->srv.ctx);
		if (__atomic_load_n(&cq_from_pub(p->srv.cq)->count,
				    __ATOMIC_ACQUIRE))
			break;
		poll(NULL, 0, 1);
	}
	ck_assert_int_lt(i, WAIT_MS);
}

/* Drives the server until its QP reads ERR: the end of the connection has
 * then been handled (see the top of the file). */
static void srv_until_err(struct pair *p)
{
	int i;

	for (i = 0; i < WAIT_MS; i++) {
		iwarp_progress(p->srv.ctx);
		if (cmt_qp_state(p->s->qp) == IWARP_QPS_ERR)
			break;
		poll(NULL, 0, 1);
	}
	ck_assert_int_lt(i, WAIT_MS);
}

/* Polls the server's receive completion: the message, intact. */
static void srv_poll_message(struct pair *p)
{
	struct iwarp_wc wc;

	ck_assert_int_eq(iwarp_poll_cq(p->srv.cq, 1, &wc), 1);
	ck_assert_int_eq(wc.status, IWARP_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 100);
	ck_assert_uint_eq(wc.byte_len, 17);
	ck_assert_str_eq(p->rbuf[0], "the last message");
}

static void pair_close(struct pair *p)
{
	if (p->s) {
		iwarp_cm_destroy_qp(p->s);
		ck_assert_int_eq(iwarp_cm_destroy_id(p->s), 0);
	}
	iwarp_cm_destroy_qp(p->c);
	ck_assert_int_eq(iwarp_cm_destroy_id(p->c), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(p->l), 0);
	ck_assert_int_eq(iwarp_dereg_mr(p->smr), 0);
	ck_assert_int_eq(iwarp_dereg_mr(p->rmr), 0);
	cmt_side_close(&p->cli);
	cmt_side_close(&p->srv);
}

/* The events left after the server's DISCONNECTED (its TIMEWAIT_EXIT when
 * |srv_timewait|; the client's two), then everything closed. */
static void pair_finish(struct pair *p, bool srv_timewait)
{
	if (srv_timewait)
		srv_ack(p, IWARP_CM_EVENT_TIMEWAIT_EXIT);
	cli_ack(p, IWARP_CM_EVENT_DISCONNECTED);
	cli_ack(p, IWARP_CM_EVENT_TIMEWAIT_EXIT);
	pair_close(p);
}

/* The peer ends the connection while the last message waits in the CQ:
 * DISCONNECTED comes after it was polled, not before. */
START_TEST(test_held_until_polled)
{
	struct pair p;

	pair_open(&p, HOLD_LONG, 1);
	send_unpolled(&p);
	ck_assert_int_eq(iwarp_cm_disconnect(p.c), 0);
	cli_ack(&p, IWARP_CM_EVENT_DISCONNECTED); /* ours: not held */
	srv_until_err(&p);
	/* settled (INLINE): without the hold it would be queued by now */
	ck_assert(!cmt_ch_ready(p.srv.ch, 0));
	srv_poll_message(&p);
	srv_ack(&p, IWARP_CM_EVENT_DISCONNECTED);
	srv_ack(&p, IWARP_CM_EVENT_TIMEWAIT_EXIT);
	cli_ack(&p, IWARP_CM_EVENT_TIMEWAIT_EXIT);
	pair_close(&p);
}
END_TEST

/* IWARP_DISCONNECT_HOLD_MS=0: no hold, the event is queued with the end. */
START_TEST(test_hold_zero_raises_at_once)
{
	struct pair p;

	pair_open(&p, "0", 1);
	send_unpolled(&p);
	ck_assert_int_eq(iwarp_cm_disconnect(p.c), 0);
	srv_until_err(&p);
	ck_assert(cmt_ch_ready(p.srv.ch, 0));
	srv_ack(&p, IWARP_CM_EVENT_DISCONNECTED);
	srv_poll_message(&p); /* still there: nothing lost */
	pair_finish(&p, true);
}
END_TEST

/* Flushes are not waited for: with only flushes left in the CQ, the event
 * comes although a very long hold is set. */
START_TEST(test_flushes_not_waited_for)
{
	struct iwarp_wc wc[4];
	struct pair p;
	int n;

	pair_open(&p, HOLD_LONG, 3);
	send_unpolled(&p);
	srv_poll_message(&p);
	ck_assert_int_eq(iwarp_cm_disconnect(p.c), 0);
	srv_ack(&p, IWARP_CM_EVENT_DISCONNECTED);
	/* the two receives never used were flushed, and are still there */
	n = iwarp_poll_cq(p.srv.cq, 4, wc);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc[1].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc[0].wr_id, 101);
	ck_assert_uint_eq(wc[1].wr_id, 102);
	pair_finish(&p, true);
}
END_TEST

/* A disconnect the application asked for is not held, although its CQ
 * still holds a completion it has not polled. */
START_TEST(test_own_disconnect_not_held)
{
	struct pair p;

	pair_open(&p, HOLD_LONG, 1);
	send_unpolled(&p);
	ck_assert_int_eq(iwarp_cm_disconnect(p.s), 0);
	srv_ack(&p, IWARP_CM_EVENT_DISCONNECTED);
	srv_poll_message(&p);
	pair_finish(&p, true);
}
END_TEST

/* Never polled: the event comes when the bound has passed, no earlier,
 * and the completion is still there afterwards. */
START_TEST(test_bound)
{
	struct pair p;
	uint64_t t0;

	pair_open(&p, "300", 1);
	send_unpolled(&p);
	t0 = engine_now_ns();
	ck_assert_int_eq(iwarp_cm_disconnect(p.c), 0);
	srv_ack(&p, IWARP_CM_EVENT_DISCONNECTED);
	ck_assert_uint_ge(engine_now_ns() - t0, 300u * 1000000u);
	srv_poll_message(&p);
	pair_finish(&p, true);
}
END_TEST

/* Destroying the QP raises a held DISCONNECTED at once (its completions
 * go with it); destroying the id instead drops it with every other event. */
START_TEST(test_destroy_releases)
{
	struct iwarp_cm_event *ev;
	struct pair p;

	pair_open(&p, HOLD_LONG, 1);
	send_unpolled(&p);
	ck_assert_int_eq(iwarp_cm_disconnect(p.c), 0);
	srv_until_err(&p);
	ck_assert(!cmt_ch_ready(p.srv.ch, 0));
	iwarp_cm_destroy_qp(p.s);
	ev = srv_expect(&p, IWARP_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, p.s);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(p.s), 0);
	p.s = NULL;
	pair_finish(&p, false);
}
END_TEST

START_TEST(test_destroy_id_drops_held)
{
	long base = iw_mem_outstanding();
	struct iwarp_qp *qp;
	struct pair p;

	pair_open(&p, HOLD_LONG, 1);
	send_unpolled(&p);
	ck_assert_int_eq(iwarp_cm_disconnect(p.c), 0);
	srv_until_err(&p);
	/* the id goes while its event waits: no timer of it may fire later
	 * (ASan would see the freed id) */
	qp = p.s->qp;
	ck_assert_int_eq(iwarp_cm_destroy_id(p.s), 0);
	p.s = NULL;
	ck_assert_int_ge(iwarp_progress(p.srv.ctx), 0);
	ck_assert_int_eq(iwarp_destroy_qp(qp), 0); /* the id left it to us */
	pair_finish(&p, false);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/* The bound a new context reads from IWARP_DISCONNECT_HOLD_MS. */
static uint32_t env_hold_ms(const char *val)
{
	struct iwarp_context *ctx;
	uint32_t ms;

	if (val)
		ck_assert_int_eq(setenv("IWARP_DISCONNECT_HOLD_MS", val, 1), 0);
	else
		unsetenv("IWARP_DISCONNECT_HOLD_MS");
	ctx = iwarp_open_context(NULL);
	ck_assert_ptr_nonnull(ctx);
	ms = ctx->disc_hold_ms;
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	unsetenv("IWARP_DISCONNECT_HOLD_MS");
	return ms;
}

/* Values the environment may not set fall back to the default (100). */
START_TEST(test_env_values)
{
	ck_assert_uint_eq(env_hold_ms("250"), 250);
	ck_assert_uint_eq(env_hold_ms("0"), 0);
	ck_assert_uint_eq(env_hold_ms("60000"), 60000);
	ck_assert_uint_eq(env_hold_ms("60001"), 100);
	ck_assert_uint_eq(env_hold_ms("-1"), 100);
	ck_assert_uint_eq(env_hold_ms("12ms"), 100);
	ck_assert_uint_eq(env_hold_ms(""), 100);
	ck_assert_uint_eq(env_hold_ms(NULL), 100);
}
END_TEST

static Suite *cm_disc_suite(void)
{
	Suite *s = suite_create("cm_disc");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_env_values);
	tcase_add_test(tc, test_held_until_polled);
	tcase_add_test(tc, test_hold_zero_raises_at_once);
	tcase_add_test(tc, test_flushes_not_waited_for);
	tcase_add_test(tc, test_own_disconnect_not_held);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_destroy_releases);
	tcase_add_test(tc, test_destroy_id_drops_held);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(cm_disc_suite)

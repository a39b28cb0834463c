/*
 * tests/stack_overflow_test.c: CQ overflow over a real connection (CM,
 * loopback TCP, threaded engines). ibverbs semantics: the completion that
 * does not fit is lost, the CQ raises IWARP_EVENT_CQ_ERR once, and the QP
 * that tried to complete into it goes to ERR with IWARP_EVENT_QP_FATAL
 * (the engine calls qp_fail_cq_overflow when a push returns -ENOSPC).
 * _i 0: the send CQ overflows with Write completions (the client's);
 * _i 1: the receive CQ overflows with Send arrivals (the server's).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

#define CQE 2 /* the small CQ */
#define NWR 6 /* completions aimed at it: CQE fit, then overflow */
#define LEN 256

/* Acks CM events of |ch| until TIMEWAIT_EXIT of |id| (the connection is
 * gone on that side), bounded; DISCONNECTED may come first. */
static void drain_until_timewait(struct iwarp_event_channel *ch,
				 struct iwarp_cm_id *id)
{
	struct iwarp_cm_event *ev;
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	enum iwarp_cm_event_type t;

	do {
		ck_assert_msg(poll(&p, 1, ST_WAIT_MS) == 1,
			      "no TIMEWAIT_EXIT after the overflow");
		ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), 0);
		ck_assert_ptr_eq(ev->id, id);
		t = ev->event;
		ck_assert_msg(t == IWARP_CM_EVENT_DISCONNECTED ||
				      t == IWARP_CM_EVENT_TIMEWAIT_EXIT,
			      "got %s", iwarp_cm_event_str(t));
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	} while (t != IWARP_CM_EVENT_TIMEWAIT_EXIT);
}

START_TEST(test_cq_overflow_fails_qp)
{
	long base = iw_mem_outstanding();
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE;
	bool recv_side = _i == 1;
	struct iwarp_async_event ev;
	struct iwarp_context_attr a;
	struct iwarp_context *ctx;
	struct iwarp_wc wc[NWR];
	struct st_cq small;
	struct st_qp_opts o;
	struct iwarp_qp *qp;
	struct st_buf bc, bs;
	struct st_net n;
	struct st_conn k;
	int i, got;

	st_attr(&a, 2, IWARP_CRC_REQUEST, 0);
	st_net_open(&n, &a);
	ctx = recv_side ? n.srv.ctx : n.cli.ctx;
	st_cq_open(&small, ctx, CQE);
	memset(&o, 0, sizeof(o));
	o.max_send_wr = 16;
	o.max_recv_wr = 16;
	if (recv_side)
		o.srv_cq = &small;
	else
		o.cli_cq = &small;
	st_conn_open(&n, &k, &o);
	qp = recv_side ? k.s->qp : k.c->qp;
	st_buf_reg(&bc, n.cli.pd, LEN, rw);
	st_buf_reg(&bs, n.srv.pd, NWR * LEN, rw);
	for (i = 0; i < NWR; i++) {
		if (recv_side)
			ck_assert_int_eq(st_post_recv(k.s->qp, (uint64_t)i,
						      bs.mr, bs.p + i * LEN,
						      LEN),
					 0);
	}
	for (i = 0; i < NWR; i++) {
		int prc = st_post_send(
			k.c->qp, 100 + (uint64_t)i,
			recv_side ? IWARP_WR_SEND : IWARP_WR_RDMA_WRITE,
			IWARP_SEND_SIGNALED, bc.mr, bc.p, LEN,
			(uintptr_t)(bs.p + i * LEN), bs.mr->rkey, 0);

		/* the sender's own small CQ may overflow while it still
		 * posts: its QP is then in ERR and a post whose flush
		 * completion has no room is refused (iwarp_post_send(3),
		 * ENOSPC) */
		if (prc == -ENOSPC && !recv_side)
			break;
		ck_assert_int_eq(prc, 0);
	}

	/* CQ_ERR for the small CQ, then QP_FATAL for the QP, in that order
	 * (the QP fails because of the lost completion) */
	ck_assert_msg(st_async_wait(ctx, &ev, ST_WAIT_MS), "no CQ_ERR");
	ck_assert_msg(ev.event_type == IWARP_EVENT_CQ_ERR, "got %s",
		      iwarp_event_type_str(ev.event_type));
	ck_assert_ptr_eq(ev.element.cq, small.cq);
	ck_assert_msg(st_async_wait(ctx, &ev, ST_WAIT_MS),
		      "the QP was not failed after the CQ overflow");
	ck_assert_msg(ev.event_type == IWARP_EVENT_QP_FATAL, "got %s",
		      iwarp_event_type_str(ev.event_type));
	ck_assert_ptr_eq(ev.element.qp, qp);
	ck_assert_int_eq(qp->state, IWARP_QPS_ERR);
	/* what fitted is still there, successful and in order */
	got = iwarp_poll_cq(small.cq, NWR, wc);
	ck_assert_int_eq(got, CQE);
	for (i = 0; i < got; i++) {
		ck_assert_int_eq(wc[i].status, IWARP_WC_SUCCESS);
		ck_assert_uint_eq(wc[i].wr_id,
				  recv_side ? (uint64_t)i : 100 + (uint64_t)i);
	}

	drain_until_timewait(n.cli.ech, k.c);
	drain_until_timewait(n.srv.ech, k.s);
	st_conn_close(&k);
	st_cq_close(&small);
	st_buf_free(&bc);
	st_buf_free(&bs);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

static Suite *stack_overflow_suite(void)
{
	Suite *s = suite_create("stack_overflow");
	TCase *tc = tcase_create("overflow");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_cq_overflow_fails_qp, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_overflow_suite)

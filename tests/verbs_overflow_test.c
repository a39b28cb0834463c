/*
 * tests/verbs_overflow_test.c: CQ overflow on the verbs side, without a
 * connection (the test plays the engine, as tests/verbs_test.c does):
 * the overflow is sticky and raises IWARP_EVENT_CQ_ERR once; the send
 * completion and flush paths report a lost completion (-ENOSPC);
 * qp_fail_cq_overflow moves the QP to ERR with IWARP_EVENT_QP_FATAL and
 * flushes what is left.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "testutil.h"
#include "util/mem.h"
#include "verbs/qp_overflow.h"
#include "verbs/verbs.h"

struct fx {
	struct iwarp_context *ctx;
	struct iwarp_pd *pd;
	struct iwarp_cq *scq, *rcq;
	struct iwarp_qp *qp;
};

/* An INLINE context (no engine thread) and an unconnected RTS QP whose
 * CQs hold |scqe| / |rcqe| completions. */
static void fx_open(struct fx *f, int scqe, int rcqe)
{
	struct iwarp_context_attr a;
	struct iwarp_qp_init_attr ia;
	struct iwarp_qp_attr qa;
	enum iwarp_qp_state s;

	memset(f, 0, sizeof(*f));
	iwarp_context_attr_init(&a);
	a.progress = IWARP_PROGRESS_INLINE;
	f->ctx = iwarp_open_context(&a);
	ck_assert_ptr_nonnull(f->ctx);
	/* get_async_event must not block when the test expects nothing */
	ck_assert_int_eq(fcntl(iwarp_async_fd(f->ctx), F_SETFL, O_NONBLOCK), 0);
	f->pd = iwarp_alloc_pd(f->ctx);
	f->scq = iwarp_create_cq(f->ctx, scqe, NULL, NULL, 0);
	f->rcq = iwarp_create_cq(f->ctx, rcqe, NULL, NULL, 0);
	ck_assert_ptr_nonnull(f->pd);
	ck_assert_ptr_nonnull(f->scq);
	ck_assert_ptr_nonnull(f->rcq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = f->scq;
	ia.recv_cq = f->rcq;
	ia.qp_type = IWARP_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	f->qp = iwarp_create_qp(f->pd, &ia);
	ck_assert_ptr_nonnull(f->qp);
	for (s = IWARP_QPS_INIT; s <= IWARP_QPS_RTS; s++) {
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = s;
		ck_assert_int_eq(iwarp_modify_qp(f->qp, &qa, IWARP_QP_STATE),
				 0);
	}
}

static void fx_close(struct fx *f)
{
	ck_assert_int_eq(iwarp_destroy_qp(f->qp), 0);
	ck_assert_int_eq(iwarp_destroy_cq(f->scq), 0);
	ck_assert_int_eq(iwarp_destroy_cq(f->rcq), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(f->pd), 0);
	ck_assert_int_eq(iwarp_close_context(f->ctx), 0);
}

/* The next async event of |f| is |type| for |element|. */
static void expect_async(struct fx *f, enum iwarp_event_type type,
			 const void *element)
{
	struct iwarp_async_event ev;

	ck_assert_int_eq(iwarp_get_async_event(f->ctx, &ev), 0);
	ck_assert_msg(ev.event_type == type, "async %s, wanted %s",
		      iwarp_event_type_str(ev.event_type),
		      iwarp_event_type_str(type));
	ck_assert_ptr_eq((const void *)ev.element.qp, element);
	iwarp_ack_async_event(&ev);
}

/* The async queue is empty (the events above were all queued
 * synchronously by the calls the test made: nothing is in flight). */
static void expect_no_async(struct fx *f)
{
	struct iwarp_async_event ev;

	ck_assert_int_eq(iwarp_get_async_event(f->ctx, &ev), -EAGAIN);
}

static int post_writes(struct fx *f, uint64_t first, int n)
{
	struct iwarp_send_wr wr, *bad;
	int i, rc;

	for (i = 0; i < n; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = first + (uint64_t)i;
		wr.opcode = IWARP_WR_RDMA_WRITE;
		wr.send_flags = IWARP_SEND_SIGNALED;
		rc = iwarp_post_send(f->qp, &wr, &bad);
		if (rc)
			return rc;
	}
	return 0;
}

static int post_recvs(struct fx *f, uint64_t first, int n)
{
	struct iwarp_recv_wr wr, *bad;
	int i, rc;

	for (i = 0; i < n; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = first + (uint64_t)i;
		rc = iwarp_post_recv(f->qp, &wr, &bad);
		if (rc)
			return rc;
	}
	return 0;
}

/* cq_push: the first push that does not fit raises CQ_ERR; the overflow
 * stays even after polling made room; CQ_ERR is never raised again. */
START_TEST(test_cq_overflow_sticky)
{
	long base = iw_mem_outstanding();
	struct iwarp_wc w, wc[4];
	struct iw_cq *cq;
	struct fx f;
	int i;

	fx_open(&f, 2, 2);
	cq = cq_from_pub(f.scq);
	memset(&w, 0, sizeof(w));
	for (i = 0; i < 2; i++) {
		w.wr_id = (uint64_t)i;
		ck_assert_int_eq(cq_push(cq, &w, false), 0);
	}
	ck_assert(!cq_overflowed(cq));
	ck_assert_int_eq(qp_cq_overflowed(qp_from_pub(f.qp)), 0);
	w.wr_id = 2;
	ck_assert_int_eq(cq_push(cq, &w, false), -ENOSPC);
	ck_assert(cq_overflowed(cq));
	ck_assert_int_eq(qp_cq_overflowed(qp_from_pub(f.qp)), -ENOSPC);
	expect_async(&f, IWARP_EVENT_CQ_ERR, f.scq);
	/* room again, still in overflow: the completions are lost */
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 4, wc), 2);
	ck_assert_uint_eq(wc[0].wr_id, 0);
	ck_assert_uint_eq(wc[1].wr_id, 1);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(cq_push(cq, &w, true), -ENOSPC);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 4, wc), 0);
	expect_no_async(&f);
	/* the other CQ is unaffected */
	ck_assert(!cq_overflowed(cq_from_pub(f.rcq)));
	ck_assert_int_eq(cq_push(cq_from_pub(f.rcq), &w, false), 0);
	ck_assert_int_eq(iwarp_poll_cq(f.rcq, 4, wc), 1);
	fx_close(&f);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/* qp_sq_complete_rc reports the lost completions; the QP is then failed
 * by qp_fail_cq_overflow: ERR, QP_FATAL once, the rest flushed (into the
 * receive CQ that has room; into the overflowed send CQ: lost). */
START_TEST(test_sq_complete_overflow_fails_qp)
{
	long base = iw_mem_outstanding();
	struct iwarp_wc wc[8];
	struct iw_qp *qp;
	struct fx f;

	fx_open(&f, 2, 8);
	qp = qp_from_pub(f.qp);
	ck_assert_int_eq(post_writes(&f, 10, 5), 0);
	ck_assert_int_eq(post_recvs(&f, 100, 3), 0);
	/* 2 fit, the 3rd overflows */
	ck_assert_int_eq(
		qp_sq_complete_rc(qp, qp->sq_tail + 1, IWARP_WC_SUCCESS), 0);
	ck_assert_int_eq(
		qp_sq_complete_rc(qp, qp->sq_tail + 2, IWARP_WC_SUCCESS),
		-ENOSPC);
	ck_assert_int_eq(qp_cq_overflowed(qp), -ENOSPC);
	expect_async(&f, IWARP_EVENT_CQ_ERR, f.scq);
	ck_assert_int_eq(f.qp->state, IWARP_QPS_RTS);

	qp_fail_cq_overflow(qp);
	ck_assert_int_eq(f.qp->state, IWARP_QPS_ERR);
	expect_async(&f, IWARP_EVENT_QP_FATAL, f.qp);
	expect_no_async(&f);
	/* the receives were flushed into the receive CQ, which had room */
	ck_assert_int_eq(iwarp_poll_cq(f.rcq, 8, wc), 3);
	ck_assert_uint_eq(wc[0].wr_id, 100);
	ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc[2].wr_id, 102);
	/* the send CQ holds the two that fitted, nothing after */
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 2);
	ck_assert_uint_eq(wc[0].wr_id, 10);
	ck_assert_uint_eq(wc[1].wr_id, 11);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 0);
	/* a second call changes nothing (no second QP_FATAL) */
	qp_fail_cq_overflow(qp);
	expect_no_async(&f);
	/* posting in ERR completes at once with FLUSH_ERR; into the
	 * overflowed send CQ that is impossible: -ENOSPC, not posted */
	ck_assert_int_eq(post_writes(&f, 20, 1), -ENOSPC);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 0);
	ck_assert_int_eq(post_recvs(&f, 200, 1), 0);
	ck_assert_int_eq(iwarp_poll_cq(f.rcq, 8, wc), 1);
	ck_assert_uint_eq(wc[0].wr_id, 200);
	ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
	fx_close(&f);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

/* qp_set_error_rc flushing into an overflowed CQ reports -ENOSPC, into
 * CQs with room 0; the QP is in ERR and its queues are empty either way. */
START_TEST(test_set_error_reports_overflow)
{
	long base = iw_mem_outstanding();
	struct iwarp_wc wc[8];
	struct iw_qp *qp;
	struct fx f;
	int i;

	/* receive CQ of 2, three receives to flush */
	fx_open(&f, 8, 2);
	qp = qp_from_pub(f.qp);
	ck_assert_int_eq(post_writes(&f, 1, 2), 0);
	ck_assert_int_eq(post_recvs(&f, 100, 3), 0);
	ck_assert_int_eq(qp_set_error_rc(qp, NULL, true), -ENOSPC);
	ck_assert_int_eq(f.qp->state, IWARP_QPS_ERR);
	ck_assert_uint_eq(qp->rq_tail, qp->rq_head);
	ck_assert_uint_eq(qp->sq_tail, qp->sq_head);
	expect_async(&f, IWARP_EVENT_CQ_ERR, f.rcq);
	expect_async(&f, IWARP_EVENT_QP_FATAL, f.qp);
	expect_no_async(&f);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 2);
	ck_assert_int_eq(iwarp_poll_cq(f.rcq, 8, wc), 2);
	for (i = 0; i < 2; i++)
		ck_assert_uint_eq(wc[i].wr_id, 100 + (uint64_t)i);
	fx_close(&f);

	/* everything fits: 0 */
	fx_open(&f, 8, 8);
	qp = qp_from_pub(f.qp);
	ck_assert_int_eq(post_writes(&f, 1, 2), 0);
	ck_assert_int_eq(post_recvs(&f, 100, 3), 0);
	ck_assert_int_eq(qp_set_error_rc(qp, NULL, false), 0);
	ck_assert_int_eq(qp_cq_overflowed(qp), 0);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 2);
	ck_assert_int_eq(iwarp_poll_cq(f.rcq, 8, wc), 3);
	expect_no_async(&f);
	fx_close(&f);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

static Suite *verbs_overflow_suite(void)
{
	Suite *s = suite_create("verbs_overflow");
	TCase *tc = tcase_create("overflow");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cq_overflow_sticky);
	tcase_add_test(tc, test_sq_complete_overflow_fails_qp);
	tcase_add_test(tc, test_set_error_reports_overflow);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(verbs_overflow_suite)

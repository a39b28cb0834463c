/*
 * tests/stack_scale_test.c: many QPs over the whole stack (CM + loopback
 * TCP): a shared receive queue serving several connections (with its limit
 * event), and 64 connections of one listener in one context pair with
 * traffic on all of them at once, every byte verified; both again with two
 * engines per context (IWARP_ENGINES=2), where the QPs of one CQ, SRQ and
 * MR table run on two threads (the TSan build checks their sharing).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

#define NSRQ_QP 4
#define SLOT	2048
#define NSLOT	32

START_TEST(test_srq_shared)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_srq_init_attr sa;
	struct iwarp_srq_attr q;
	struct iwarp_async_event ev;
	struct iwarp_srq *srq;
	struct st_net n;
	struct st_conn k[NSRQ_QP];
	struct st_cq scq;
	struct st_qp_opts o;
	struct st_buf sb, cb;
	struct iwarp_wc wc[NSLOT];
	int seq[NSRQ_QP] = {0}, i, j, sent = 0;
	const int total = NSLOT - 8 + 1; /* 7 left < limit 8: the event */

	st_attr(&a, 2, IWARP_CRC_REQUEST, 0);
	st_net_open(&n, &a);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = NSLOT;
	sa.attr.max_sge = 1;
	srq = iwarp_create_srq(n.srv.pd, &sa);
	ck_assert_ptr_nonnull(srq);
	st_cq_open(&scq, n.srv.ctx, 256);
	memset(&o, 0, sizeof(o));
	o.srv_srq = srq;
	o.srv_cq = &scq;
	st_conn_open_many(&n, k, NSRQ_QP, &o);
	ck_assert_ptr_eq(k[0].s->qp->srq, srq);
	/* a QP with an SRQ takes no receive of its own */
	st_buf_reg(&sb, n.srv.pd, NSLOT * SLOT, IWARP_ACCESS_LOCAL_WRITE);
	ck_assert_int_lt(st_post_recv(k[0].s->qp, 1, sb.mr, sb.p, 16), 0);
	for (i = 0; i < NSLOT; i++)
		ck_assert_int_eq(st_post_srq_recv(srq, (uint64_t)i, sb.mr,
						  sb.p + i * SLOT, SLOT),
				 0);
	memset(&q, 0, sizeof(q));
	q.srq_limit = 8;
	ck_assert_int_eq(iwarp_modify_srq(srq, &q, IWARP_SRQ_LIMIT), 0);
	ck_assert_int_eq(iwarp_query_srq(srq, &q), 0);
	ck_assert_uint_eq(q.srq_limit, 8);

	/* client i sends messages (i, seq) of length 100 + 37 * seq */
	st_buf_reg(&cb, n.cli.pd, NSRQ_QP * 8 * SLOT, 0);
	for (i = 0; i < NSRQ_QP; i++)
		for (j = 0; j < 8 && sent < total; j++, sent++) {
			uint8_t *m = cb.p + (i * 8 + j) * SLOT;
			uint32_t len = 100 + 37 * (uint32_t)j;

			iw_test_fill(m, len, (uint64_t)(i * 100 + j));
			m[0] = (uint8_t)i;
			m[1] = (uint8_t)j;
			ck_assert_int_eq(st_post_send(k[i].c->qp, (uint64_t)j,
						      IWARP_WR_SEND,
						      IWARP_SEND_SIGNALED,
						      cb.mr, m, len, 0, 0, 0),
					 0);
		}
	ck_assert_int_eq(sent, total);
	st_poll_n(&scq, wc, total);
	for (i = 0; i < total; i++) {
		uint8_t *m = sb.p + wc[i].wr_id * SLOT;
		int qi = m[0], sj = m[1];

		ck_assert_int_eq(wc[i].status, IWARP_WC_SUCCESS);
		ck_assert_int_eq(wc[i].opcode, IWARP_WC_RECV);
		ck_assert(qi < NSRQ_QP);
		/* the completion names the QP the message came in on */
		ck_assert_uint_eq(wc[i].qp_num, k[qi].s->qp->qp_num);
		/* per QP, messages arrive in order */
		ck_assert_int_eq(sj, seq[qi]);
		seq[qi]++;
		ck_assert_uint_eq(wc[i].byte_len, 100 + 37 * (uint32_t)sj);
		ck_assert(!memcmp(m, cb.p + (qi * 8 + sj) * SLOT,
				  wc[i].byte_len));
	}
	/* the limit event: once, then disarmed */
	ck_assert(st_async_wait(n.srv.ctx, &ev, ST_WAIT_MS));
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_SRQ_LIMIT_REACHED);
	ck_assert_ptr_eq(ev.element.srq, srq);
	ck_assert_int_eq(iwarp_query_srq(srq, &q), 0);
	ck_assert_uint_eq(q.srq_limit, 0);
	ck_assert(!st_async_wait(n.srv.ctx, &ev, ST_QUIET_MS)); /* once */
	for (i = 0; i < NSRQ_QP; i++) {
		st_poll_n(k[i].cq_c, wc, seq[i]);
		for (j = 0; j < seq[i]; j++)
			st_wc_check(&wc[j], (uint64_t)j, IWARP_WC_SUCCESS,
				    IWARP_WC_SEND, 100 + 37 * (uint32_t)j, 0);
	}
	for (i = 0; i < NSRQ_QP; i++)
		st_conn_disconnect(&n, &k[i], i & 1);
	/* QPs of an SRQ report their last WQE on the way to ERR (ibverbs)
	 * when they fail; drain whatever comes until ST_QUIET_MS pass
	 * without an event, nothing else may be there */
	while (st_async_wait(n.srv.ctx, &ev, ST_QUIET_MS))
		ck_assert_int_eq(ev.event_type,
				 IWARP_EVENT_QP_LAST_WQE_REACHED);
	/* the SRQ's remaining receives are not flushed by the QPs */
	st_cq_empty(&scq);
	for (i = 0; i < NSRQ_QP; i++)
		st_conn_close(&k[i]);
	ck_assert_int_eq(iwarp_destroy_srq(srq), 0);
	st_cq_close(&scq);
	st_buf_free(&sb);
	st_buf_free(&cb);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

#define MANY 64
#define PER  (16 * 1024) /* per-connection region */

START_TEST(test_64_qps)
{
	long base = iw_mem_outstanding();
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;
	struct iwarp_context_attr a;
	struct st_conn *k = calloc(MANY, sizeof(*k));
	struct iwarp_wc *wc = calloc(4 * MANY, sizeof(*wc));
	struct st_cq ccq, scq;
	struct st_qp_opts o;
	struct st_net n;
	struct st_buf c, s;
	int i, got[MANY] = {0}, rcv[MANY] = {0};

	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(wc);
	st_attr(&a, 2, _i ? IWARP_CRC_REQUEST : IWARP_CRC_OFF, _i);
	st_net_open(&n, &a);
	st_cq_open(&ccq, n.cli.ctx, 8 * MANY);
	st_cq_open(&scq, n.srv.ctx, 8 * MANY);
	memset(&o, 0, sizeof(o));
	o.max_send_wr = 8;
	o.max_recv_wr = 8;
	o.cli_cq = &ccq;
	o.srv_cq = &scq;
	st_conn_open_many(&n, k, MANY, &o);
	/* per connection i: [0, PER/4) Send source / receive target,
	 * [PER/4, PER/2) Write, [PER/2, PER) Read */
	st_buf_reg(&c, n.cli.pd, MANY * PER, rw);
	st_buf_reg(&s, n.srv.pd, MANY * PER, rw);
	for (i = 0; i < MANY; i++) {
		uint8_t *cp = c.p + i * PER, *sp = s.p + i * PER;

		iw_test_fill(cp, PER / 2, (uint64_t)i);
		iw_test_fill(sp + PER / 2, PER / 2, 1000u + (uint64_t)i);
		ck_assert_int_eq(st_post_recv(k[i].s->qp, (uint64_t)i, s.mr, sp,
					      PER / 4),
				 0);
	}
	for (i = 0; i < MANY; i++) {
		uint8_t *cp = c.p + i * PER, *sp = s.p + i * PER;
		struct iwarp_qp *qp = k[i].c->qp;

		ck_assert_int_eq(st_post_send(qp, 0, IWARP_WR_RDMA_WRITE,
					      IWARP_SEND_SIGNALED, c.mr,
					      cp + PER / 4, PER / 4,
					      (uintptr_t)(sp + PER / 4),
					      s.mr->rkey, 0),
				 0);
		ck_assert_int_eq(st_post_send(qp, 1, IWARP_WR_SEND,
					      IWARP_SEND_SIGNALED, c.mr, cp,
					      PER / 4 - (uint32_t)i, 0, 0, 0),
				 0);
		ck_assert_int_eq(st_post_send(qp, 2, IWARP_WR_RDMA_READ,
					      IWARP_SEND_SIGNALED, c.mr,
					      cp + PER / 2, PER / 2,
					      (uintptr_t)(sp + PER / 2),
					      s.mr->rkey, 0),
				 0);
	}
	st_poll_n(&ccq, wc, 3 * MANY);
	for (i = 0; i < 3 * MANY; i++) {
		int q;

		for (q = 0; q < MANY; q++)
			if (k[q].c->qp->qp_num == wc[i].qp_num)
				break;
		ck_assert_int_lt(q, MANY);
		/* per QP in posting order */
		ck_assert_int_eq(wc[i].status, IWARP_WC_SUCCESS);
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)got[q]);
		got[q]++;
	}
	st_poll_n(&scq, wc, MANY);
	for (i = 0; i < MANY; i++) {
		int q = (int)wc[i].wr_id;

		ck_assert_int_eq(wc[i].status, IWARP_WC_SUCCESS);
		ck_assert_uint_eq(wc[i].qp_num, k[q].s->qp->qp_num);
		ck_assert_uint_eq(wc[i].byte_len, PER / 4 - (uint32_t)q);
		rcv[q]++;
	}
	for (i = 0; i < MANY; i++) {
		uint8_t *cp = c.p + i * PER, *sp = s.p + i * PER;

		ck_assert_int_eq(got[i], 3);
		ck_assert_int_eq(rcv[i], 1);
		/* the Send and the Write (placed before the Send completed) */
		ck_assert(!memcmp(sp, cp, PER / 4 - (size_t)i));
		ck_assert(!memcmp(sp + PER / 4, cp + PER / 4, PER / 4));
		ck_assert(!memcmp(cp + PER / 2, sp + PER / 2, PER / 2));
	}
	for (i = 0; i < MANY; i++)
		st_conn_disconnect(&n, &k[i], i & 1);
	for (i = 0; i < MANY; i++)
		st_conn_close(&k[i]);
	st_cq_empty(&ccq);
	st_cq_empty(&scq);
	st_cq_close(&ccq);
	st_cq_close(&scq);
	st_buf_free(&c);
	st_buf_free(&s);
	st_net_close(&n);
	free(k);
	free(wc);
	st_wait_mem(base);
}
END_TEST

static Suite *stack_scale_suite(void)
{
	Suite *s = suite_create("stack_scale");
	TCase *tc = tcase_create("scale");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_srq_shared);
	tcase_add_loop_test(tc, test_64_qps, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("engines");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, iw_test_env_engines_two,
				  iw_test_env_default);
	tcase_add_test(tc, test_srq_shared);
	tcase_add_loop_test(tc, test_64_qps, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("ring");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, iw_test_env_socket_ring,
				  iw_test_env_default);
	tcase_add_test(tc, test_srq_shared);
	tcase_add_loop_test(tc, test_64_qps, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_scale_suite)

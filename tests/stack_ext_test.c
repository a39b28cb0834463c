/*
 * tests/stack_ext_test.c: the RFC 7306 RDMAP extensions end to end over
 * the CM and loopback TCP: Send with Immediate, RDMA Write with Immediate
 * (data placed before the receive completes; consumes a receive WQE),
 * fetch-and-add, compare-and-swap (match and mismatch), the masked forms,
 * an unaligned target and a missing REMOTE_ATOMIC right (error completion
 * and TERMINATE), the extensions not negotiated (EOPNOTSUPP at post time,
 * whichever side did not ask), and concurrent atomics from 4 QPs on two
 * server contexts (two engine threads) onto one counter.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

#define LEN 4096
#define RW_ATOMIC                                                              \
	(IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |                \
	 IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_REMOTE_ATOMIC)

static void ext_attr(struct iwarp_context_attr *a, int ext)
{
	st_attr(a, 2, IWARP_CRC_REQUEST, 0);
	a->rdmap_ext = ext;
}

static int post_imm(struct iwarp_qp *qp, uint64_t wr_id,
		    enum iwarp_wr_opcode op, unsigned int flags,
		    const struct st_buf *src, uint32_t len, uint64_t raddr,
		    uint32_t rkey, uint32_t imm_host)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.imm_data = htonl(imm_host);
	if (len) {
		sge.addr = (uintptr_t)src->p;
		sge.length = len;
		sge.lkey = src->mr->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return iwarp_post_send(qp, &wr, &bad);
}

static int post_atomic(struct iwarp_qp *qp, uint64_t wr_id,
		       enum iwarp_wr_opcode op, const struct st_buf *res,
		       size_t res_off, uint64_t raddr, uint32_t rkey,
		       uint64_t compare_add, uint64_t swap)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;

	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)(res->p + res_off);
	sge.length = 8;
	sge.lkey = res->mr->lkey;
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return iwarp_post_send(qp, &wr, &bad);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Both sides asked: the device reports global atomics. */
START_TEST(test_query_caps)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_device_attr d;
	struct iwarp_context *ctx;

	ext_attr(&a, 1);
	ctx = iwarp_open_context(&a);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(iwarp_query_device(ctx, &d), 0);
	ck_assert_int_eq(d.atomic_cap, IWARP_ATOMIC_GLOB);
	ck_assert_int_ge(d.max_qp_rd_atom, 1);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	ext_attr(&a, 0);
	ctx = iwarp_open_context(&a);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(iwarp_query_device(ctx, &d), 0);
	ck_assert_int_eq(d.atomic_cap, IWARP_ATOMIC_NONE);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	st_wait_mem(base);
}
END_TEST

/* Send with Immediate and Write with Immediate. */
START_TEST(test_imm)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct st_net n;
	struct st_conn k;
	struct st_buf src, dst, rbuf;
	struct iwarp_wc wc[2];

	ext_attr(&a, 1);
	st_net_open(&n, &a);
	st_conn_open(&n, &k, NULL);
	st_buf_reg(&src, n.cli.pd, LEN, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&dst, n.srv.pd, LEN, RW_ATOMIC);
	st_buf_reg(&rbuf, n.srv.pd, 256, IWARP_ACCESS_LOCAL_WRITE);
	iw_test_fill(src.p, LEN, 17);

	/* Send with Immediate (with SE): no payload, the value in the wc */
	ck_assert_int_eq(st_post_recv(k.s->qp, 1, rbuf.mr, rbuf.p, 256), 0);
	ck_assert_int_eq(post_imm(k.c->qp, 2, IWARP_WR_SEND_WITH_IMM,
				  IWARP_SEND_SIGNALED | IWARP_SEND_SOLICITED,
				  NULL, 0, 0, 0, 0xA1B2C3D4u),
			 0);
	st_poll_n(k.cq_c, wc, 1);
	st_wc_check(&wc[0], 2, IWARP_WC_SUCCESS, IWARP_WC_SEND, 0, 0);
	st_poll_n(k.cq_s, wc, 1);
	st_wc_check(&wc[0], 1, IWARP_WC_SUCCESS, IWARP_WC_RECV, 0,
		    IWARP_WC_WITH_IMM | IWARP_WC_WITH_SE);
	ck_assert_uint_eq(ntohl(wc[0].imm_data), 0xA1B2C3D4u);
	st_check_fill(rbuf.p, 256, ST_GUARD); /* nothing placed */

	/* Send with Immediate and a payload: refused (RFC 7306 Immediate
	 * Data is the 8-octet message alone) */
	ck_assert_int_eq(post_imm(k.c->qp, 3, IWARP_WR_SEND_WITH_IMM,
				  IWARP_SEND_SIGNALED, &src, 16, 0, 0, 1),
			 -EINVAL);

	/* Write with Immediate: the data is placed when the receive (the
	 * older of two) completes; the second one is left for a Send */
	ck_assert_int_eq(st_post_recv(k.s->qp, 10, NULL, NULL, 0), 0);
	ck_assert_int_eq(st_post_recv(k.s->qp, 11, rbuf.mr, rbuf.p, 256), 0);
	ck_assert_int_eq(post_imm(k.c->qp, 4, IWARP_WR_RDMA_WRITE_WITH_IMM,
				  IWARP_SEND_SIGNALED, &src, LEN,
				  (uintptr_t)dst.p, dst.mr->rkey, 77),
			 0);
	st_poll_n(k.cq_s, wc, 1);
	st_wc_check(&wc[0], 10, IWARP_WC_SUCCESS, IWARP_WC_RECV_RDMA_WITH_IMM,
		    0, IWARP_WC_WITH_IMM);
	ck_assert_uint_eq(ntohl(wc[0].imm_data), 77);
	ck_assert_mem_eq(dst.p, src.p, LEN);
	st_poll_n(k.cq_c, wc, 1);
	st_wc_check(&wc[0], 4, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, LEN, 0);
	/* a zero-length Write with Immediate still consumes a receive */
	ck_assert_int_eq(post_imm(k.c->qp, 5, IWARP_WR_RDMA_WRITE_WITH_IMM,
				  IWARP_SEND_SIGNALED, NULL, 0, 0, 0, 78),
			 0);
	st_poll_n(k.cq_s, wc, 1);
	st_wc_check(&wc[0], 11, IWARP_WC_SUCCESS, IWARP_WC_RECV_RDMA_WITH_IMM,
		    0, IWARP_WC_WITH_IMM);
	ck_assert_uint_eq(ntohl(wc[0].imm_data), 78);
	st_poll_n(k.cq_c, wc, 1);
	st_wc_check(&wc[0], 5, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, 0, 0);

	st_conn_disconnect(&n, &k, false);
	st_buf_free(&src);
	st_buf_free(&dst);
	st_buf_free(&rbuf);
	st_conn_close(&k);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

/* Fetch-and-add, compare-and-swap (match, mismatch), masked forms. */
START_TEST(test_atomics)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;
	struct st_net n;
	struct st_conn k;
	struct st_buf res, tgt;
	struct iwarp_wc wc[4];
	uint64_t raddr;

	ext_attr(&a, 1);
	st_net_open(&n, &a);
	st_conn_open(&n, &k, NULL);
	st_buf_reg(&res, n.cli.pd, 64, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&tgt, n.srv.pd, 64, RW_ATOMIC);
	put64(tgt.p + 8, 100);
	raddr = (uintptr_t)(tgt.p + 8);

	ck_assert_int_eq(post_atomic(k.c->qp, 1, IWARP_WR_ATOMIC_FETCH_AND_ADD,
				     &res, 0, raddr, tgt.mr->rkey, 5, 0),
			 0);
	ck_assert_int_eq(post_atomic(k.c->qp, 2, IWARP_WR_ATOMIC_CMP_AND_SWP,
				     &res, 8, raddr, tgt.mr->rkey, 105, 7),
			 0);
	ck_assert_int_eq(post_atomic(k.c->qp, 3, IWARP_WR_ATOMIC_CMP_AND_SWP,
				     &res, 16, raddr, tgt.mr->rkey, 105, 9),
			 0);
	st_poll_n(k.cq_c, wc, 3);
	st_wc_check(&wc[0], 1, IWARP_WC_SUCCESS, IWARP_WC_FETCH_ADD, 8, 0);
	st_wc_check(&wc[1], 2, IWARP_WC_SUCCESS, IWARP_WC_COMP_SWAP, 8, 0);
	st_wc_check(&wc[2], 3, IWARP_WC_SUCCESS, IWARP_WC_COMP_SWAP, 8, 0);
	ck_assert_uint_eq(get64(res.p), 100);	  /* before the add */
	ck_assert_uint_eq(get64(res.p + 8), 105); /* matched: swapped */
	ck_assert_uint_eq(get64(res.p + 16), 7);  /* mismatch: kept */
	ck_assert_uint_eq(get64(tgt.p + 8), 7);
	st_check_fill(tgt.p, 8, ST_GUARD); /* neighbours untouched */
	st_check_fill(tgt.p + 16, 48, ST_GUARD);
	st_check_fill(res.p + 24, 40, ST_GUARD);

	/* masked fetch-and-add: two 32-bit fields, no carry between them */
	put64(tgt.p + 8, 0x00000005FFFFFFFFull);
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)(res.p + 24);
	sge.length = 8;
	sge.lkey = res.mr->lkey;
	wr.wr_id = 4;
	wr.opcode = IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = tgt.mr->rkey;
	wr.wr.atomic.compare_add = 0x0000000100000001ull;
	wr.wr.atomic.compare_add_mask = 0x8000000080000000ull;
	ck_assert_int_eq(iwarp_post_send(k.c->qp, &wr, &bad), 0);
	/* masked compare-and-swap: compare the low half, swap the high */
	wr.wr_id = 5;
	wr.opcode = IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP;
	sge.addr = (uintptr_t)(res.p + 32);
	wr.wr.atomic.compare_add = 0x1234567800000000ull;
	wr.wr.atomic.compare_add_mask = 0x00000000FFFFFFFFull;
	wr.wr.atomic.swap = 0xAAAAAAAA55555555ull;
	wr.wr.atomic.swap_mask = 0xFFFFFFFF00000000ull;
	ck_assert_int_eq(iwarp_post_send(k.c->qp, &wr, &bad), 0);
	st_poll_n(k.cq_c, wc, 2);
	st_wc_check(&wc[0], 4, IWARP_WC_SUCCESS, IWARP_WC_MASKED_FETCH_ADD, 8,
		    0);
	st_wc_check(&wc[1], 5, IWARP_WC_SUCCESS, IWARP_WC_MASKED_COMP_SWAP, 8,
		    0);
	ck_assert_uint_eq(get64(res.p + 24), 0x00000005FFFFFFFFull);
	ck_assert_uint_eq(get64(res.p + 32), 0x0000000600000000ull);
	ck_assert_uint_eq(get64(tgt.p + 8), 0xAAAAAAAA00000000ull);

	st_conn_disconnect(&n, &k, false);
	st_buf_free(&res);
	st_buf_free(&tgt);
	st_conn_close(&k);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

/*
 * An atomic the responder must refuse: _i 0 an unaligned target (RDMAP
 * remote protection, base/bounds), _i 1 an MR without REMOTE_ATOMIC
 * (RDMAP remote protection, access rights). The requester's WR fails with
 * REM_ACCESS_ERR and the TERMINATE's cause, both QPs go to ERR, the
 * target is untouched.
 */
START_TEST(test_atomic_refused)
{
	static const struct iwarp_term_cause want[2] = {{0, 1, 0x01},
							{0, 1, 0x02}};
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct iwarp_async_event ev;
	struct st_net n;
	struct st_conn k;
	struct st_buf res, tgt;
	struct iwarp_wc wc[2];
	uint64_t raddr;

	ext_attr(&a, 1);
	st_net_open(&n, &a);
	st_conn_open(&n, &k, NULL);
	st_buf_reg(&res, n.cli.pd, 64, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&tgt, n.srv.pd, 64,
		   _i == 0 ? RW_ATOMIC
			   : RW_ATOMIC & ~IWARP_ACCESS_REMOTE_ATOMIC);
	raddr = (uintptr_t)tgt.p + (_i == 0 ? 4 : 8);
	ck_assert_int_eq(post_atomic(k.c->qp, 1, IWARP_WR_ATOMIC_FETCH_AND_ADD,
				     &res, 0, raddr, tgt.mr->rkey, 1, 0),
			 0);
	st_poll_n(k.cq_c, wc, 1);
	ck_assert_uint_eq(wc[0].wr_id, 1);
	ck_assert_msg(wc[0].status == IWARP_WC_REM_ACCESS_ERR, "%s",
		      iwarp_wc_status_str(wc[0].status));
	ck_assert_int_eq(wc[0].opcode, IWARP_WC_FETCH_ADD);
	ck_assert_uint_eq(wc[0].vendor_err,
			  (uint32_t)want[_i].layer << 16 |
				  (uint32_t)want[_i].etype << 8 |
				  want[_i].ecode);
	ck_assert(st_async_wait(n.srv.ctx, &ev, ST_WAIT_MS));
	ck_assert_ptr_eq(ev.element.qp, k.s->qp);
	ck_assert_int_eq(ev.term.layer, want[_i].layer);
	ck_assert_int_eq(ev.term.etype, want[_i].etype);
	ck_assert_int_eq(ev.term.ecode, want[_i].ecode);
	ck_assert_int_eq(ev.term_received, 0);
	ck_assert(st_async_wait(n.cli.ctx, &ev, ST_WAIT_MS));
	ck_assert_ptr_eq(ev.element.qp, k.c->qp);
	ck_assert_int_eq(ev.term_received, 1);
	ck_assert_int_eq(ev.term.ecode, want[_i].ecode);
	st_cm_expect(n.cli.ech, IWARP_CM_EVENT_DISCONNECTED, k.c);
	st_cm_expect(n.srv.ech, IWARP_CM_EVENT_DISCONNECTED, k.s);
	st_cm_expect(n.cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k.c);
	st_cm_expect(n.srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k.s);
	ck_assert_int_eq(cmt_qp_state(k.c->qp), IWARP_QPS_ERR);
	ck_assert_int_eq(cmt_qp_state(k.s->qp), IWARP_QPS_ERR);
	st_check_fill(tgt.p, 64, ST_GUARD);
	st_check_fill(res.p, 64, ST_GUARD);
	st_buf_free(&res);
	st_buf_free(&tgt);
	st_conn_close(&k);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

/*
 * Not negotiated (_i: 0 neither side, 1 only the client, 2 only the
 * server asked): every RFC 7306 WR fails at post time with EOPNOTSUPP,
 * nothing reaches the wire, and the connection keeps working.
 */
START_TEST(test_not_negotiated)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr as, ac;
	struct st_net n;
	struct st_conn k;
	struct st_buf res, tgt;
	struct iwarp_wc wc[2];

	ext_attr(&as, _i == 2);
	ext_attr(&ac, _i == 1);
	st_net_open2(&n, &as, &ac);
	st_conn_open(&n, &k, NULL);
	st_buf_reg(&res, n.cli.pd, 64, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&tgt, n.srv.pd, 64, RW_ATOMIC);
	ck_assert_int_eq(post_imm(k.c->qp, 1, IWARP_WR_SEND_WITH_IMM,
				  IWARP_SEND_SIGNALED, NULL, 0, 0, 0, 1),
			 -EOPNOTSUPP);
	ck_assert_int_eq(post_imm(k.c->qp, 2, IWARP_WR_RDMA_WRITE_WITH_IMM,
				  IWARP_SEND_SIGNALED, &res, 8,
				  (uintptr_t)tgt.p, tgt.mr->rkey, 1),
			 -EOPNOTSUPP);
	ck_assert_int_eq(post_atomic(k.c->qp, 3, IWARP_WR_ATOMIC_FETCH_AND_ADD,
				     &res, 0, (uintptr_t)tgt.p, tgt.mr->rkey, 1,
				     0),
			 -EOPNOTSUPP);
	ck_assert_int_eq(post_atomic(k.c->qp, 4, IWARP_WR_ATOMIC_CMP_AND_SWP,
				     &res, 0, (uintptr_t)tgt.p, tgt.mr->rkey, 1,
				     0),
			 -EOPNOTSUPP);
	/* the server side refuses them as well */
	ck_assert_int_eq(post_imm(k.s->qp, 5, IWARP_WR_SEND_WITH_IMM,
				  IWARP_SEND_SIGNALED, NULL, 0, 0, 0, 1),
			 -EOPNOTSUPP);
	/* plain traffic still flows */
	ck_assert_int_eq(st_post_recv(k.s->qp, 6, tgt.mr, tgt.p, 64), 0);
	ck_assert_int_eq(st_post_send(k.c->qp, 7, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, res.mr, res.p, 8, 0,
				      0, 0),
			 0);
	st_poll_n(k.cq_c, wc, 1);
	st_wc_check(&wc[0], 7, IWARP_WC_SUCCESS, IWARP_WC_SEND, 8, 0);
	st_poll_n(k.cq_s, wc, 1);
	st_wc_check(&wc[0], 6, IWARP_WC_SUCCESS, IWARP_WC_RECV, 8, 0);
	st_cq_empty(k.cq_c);
	st_conn_disconnect(&n, &k, false);
	st_buf_free(&res);
	st_buf_free(&tgt);
	st_conn_close(&k);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

#define CONC_QPS 4
#define CONC_OPS 256
#define CONC_WIN 32

/*
 * Fetch-and-add of 1 from 4 QPs onto one counter whose memory is
 * registered in two server contexts (two engine threads execute them at
 * the same time): the counter ends at exactly 4 * CONC_OPS, and the
 * original values returned are 0 .. 4 * CONC_OPS - 1, each exactly once.
 */
START_TEST(test_concurrent_atomics)
{
	long base = iw_mem_outstanding();
	struct iwarp_context_attr a;
	struct st_net n[2];
	struct st_conn k[CONC_QPS];
	struct st_buf res[CONC_QPS];
	struct iwarp_mr *cmr[2];
	struct iwarp_wc wc[CONC_WIN];
	uint64_t *counter;
	uint8_t *seen;
	int posted[CONC_QPS] = {0}, done[CONC_QPS] = {0};
	int q, i, got, total = 0;

	counter = aligned_alloc(64, 64);
	seen = calloc(CONC_QPS * CONC_OPS, 1);
	ck_assert_ptr_nonnull(counter);
	ck_assert_ptr_nonnull(seen);
	*counter = 0;
	ext_attr(&a, 1);
	for (i = 0; i < 2; i++) {
		st_net_open(&n[i], &a);
		st_conn_open_many(&n[i], &k[2 * i], 2, NULL);
		cmr[i] = iwarp_reg_mr(n[i].srv.pd, counter, 64, RW_ATOMIC);
		ck_assert_ptr_nonnull(cmr[i]);
	}
	for (q = 0; q < CONC_QPS; q++)
		st_buf_reg(&res[q], n[q / 2].cli.pd, 8 * CONC_OPS,
			   IWARP_ACCESS_LOCAL_WRITE);
	while (total < CONC_QPS * CONC_OPS) {
		for (q = 0; q < CONC_QPS; q++)
			while (posted[q] < CONC_OPS &&
			       posted[q] - done[q] < CONC_WIN) {
				ck_assert_int_eq(
					post_atomic(
						k[q].c->qp, (uint64_t)posted[q],
						IWARP_WR_ATOMIC_FETCH_AND_ADD,
						&res[q], 8 * (size_t)posted[q],
						(uintptr_t)counter,
						cmr[q / 2]->rkey, 1, 0),
					0);
				posted[q]++;
			}
		for (q = 0; q < CONC_QPS; q++) {
			if (done[q] == posted[q])
				continue;
			got = st_poll(k[q].cq_c, wc, posted[q] - done[q],
				      ST_WAIT_MS);
			ck_assert_int_gt(got, 0);
			for (i = 0; i < got; i++) {
				ck_assert_int_eq(wc[i].status,
						 IWARP_WC_SUCCESS);
				ck_assert_uint_eq(wc[i].wr_id,
						  (uint64_t)done[q] +
							  (uint64_t)i);
			}
			done[q] += got;
			total += got;
		}
	}
	ck_assert_uint_eq(__atomic_load_n(counter, __ATOMIC_SEQ_CST),
			  CONC_QPS * CONC_OPS);
	for (q = 0; q < CONC_QPS; q++)
		for (i = 0; i < CONC_OPS; i++) {
			uint64_t v = get64(res[q].p + 8 * i);

			ck_assert_uint_lt(v, CONC_QPS * CONC_OPS);
			ck_assert_msg(!seen[v], "value %llu returned twice",
				      (unsigned long long)v);
			seen[v] = 1;
		}
	for (i = 0; i < 2; i++) {
		st_conn_disconnect(&n[i], &k[2 * i], false);
		st_conn_disconnect(&n[i], &k[2 * i + 1], false);
		ck_assert_int_eq(iwarp_dereg_mr(cmr[i]), 0);
	}
	for (q = 0; q < CONC_QPS; q++) {
		st_buf_free(&res[q]);
		st_conn_close(&k[q]);
	}
	for (i = 0; i < 2; i++)
		st_net_close(&n[i]);
	free(counter);
	free(seen);
	st_wait_mem(base);
}
END_TEST

static Suite *ext_suite(void)
{
	Suite *s = suite_create("stack_ext");
	TCase *tc = tcase_create("rfc7306");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_query_caps);
	tcase_add_test(tc, test_imm);
	tcase_add_test(tc, test_atomics);
	tcase_add_loop_test(tc, test_atomic_refused, 0, 2);
	tcase_add_loop_test(tc, test_not_negotiated, 0, 3);
	tcase_add_test(tc, test_concurrent_atomics);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(ext_suite)

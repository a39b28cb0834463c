/*
 * tests/stack_access_test.c: remote access errors end to end (RFC 5040 §8,
 * RFC 5041 §7, RFC 5042): bad STag, stale key after re-registration, MR of
 * another PD, missing access right (of the MR or of the QP's
 * qp_access_flags), out of bounds and TO wrap, for RDMA
 * Write and RDMA Read, over the CM and real loopback TCP. Each gives the
 * right completion on the requester, an async event with the TERMINATE
 * cause on both sides (term_received on the requester), both QPs in ERR,
 * DISCONNECTED on both, every WR completed, nothing placed (guard bytes),
 * and a second connection of the same contexts keeps working. One run over
 * the in-memory transport checks the TERMINATE octets on the wire.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "stack_pipe.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/mem.h"

#define LEN 4096

/* T_QP_ACCESS: the MR allows it, the target QP's qp_access_flags do not */
enum target {
	T_BAD_STAG,
	T_STALE,
	T_WRONG_PD,
	T_NO_ACCESS,
	T_BOUNDS,
	T_WRAP,
	T_QP_ACCESS
};

struct acase {
	bool read;
	enum target t;
	struct iwarp_term_cause cause;
	bool local; /* the requester refuses the WR itself (see below) */
};

static const struct acase cases[] = {
	{false, T_BAD_STAG, {1, 1, 0x00}, false}, /* DDP tagged: invalid STag */
	{false, T_STALE, {1, 1, 0x00}, false},
	{false, T_WRONG_PD, {1, 1, 0x02}, false},  /* STag not associated */
	{false, T_NO_ACCESS, {0, 1, 0x02}, false}, /* RDMAP: access rights */
	{false, T_BOUNDS, {1, 1, 0x01}, false},
	/* a Write whose TO + length wraps cannot be segmented (RFC 5041 §7):
	 * the requester fails it locally (LOC_QP_OP_ERR) and terminates with
	 * RDMAP local catastrophic; the target's own TO wrap check is run by
	 * test_write_to_wrap_raw_peer with a crafted segment */
	{false, T_WRAP, {0, 0, 0x00}, true},
	{true, T_BAD_STAG, {0, 1, 0x00}, false}, /* RDMAP remote protection */
	{true, T_STALE, {0, 1, 0x00}, false},
	{true, T_WRONG_PD, {0, 1, 0x03}, false},
	{true, T_NO_ACCESS, {0, 1, 0x02}, false},
	{true, T_BOUNDS, {0, 1, 0x01}, false},
	{true, T_WRAP, {0, 1, 0x04}, false},
	{false, T_QP_ACCESS, {0, 1, 0x02}, false}, /* RDMAP: access rights */
	{true, T_QP_ACCESS, {0, 1, 0x02}, false},
};

static void cause_eq(const struct iwarp_term_cause *got,
		     const struct iwarp_term_cause *want)
{
	ck_assert_msg(got->layer == want->layer && got->etype == want->etype &&
			      got->ecode == want->ecode,
		      "cause %u/%u/0x%02x (%s), wanted %u/%u/0x%02x",
		      got->layer, got->etype, got->ecode,
		      iwarp_term_strerror(got->layer, got->etype, got->ecode),
		      want->layer, want->etype, want->ecode);
}

/* The async event of |qp| (bounded wait); other QPs' events are errors. */
static void expect_qp_event(struct iwarp_context *ctx, struct iwarp_qp *qp,
			    const struct iwarp_term_cause *cause, int received,
			    enum iwarp_event_type type)
{
	struct iwarp_async_event ev;

	ck_assert_msg(st_async_wait(ctx, &ev, ST_WAIT_MS), "no async event");
	ck_assert_ptr_eq(ev.element.qp, qp);
	cause_eq(&ev.term, cause);
	ck_assert_msg(ev.event_type == type, "event %s",
		      iwarp_event_type_str(ev.event_type));
	ck_assert_int_eq(ev.term_received, received);
}

/* Completions of a failed SQ: all |n| in order, a success prefix then
 * flushes (|first| may instead be |first_status|). */
static void check_sq_tail(const struct iwarp_wc *wc, int n, uint64_t wr0)
{
	bool flushed = false;
	int i;

	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(wc[i].wr_id, wr0 + (uint64_t)i);
		if (wc[i].status == IWARP_WC_WR_FLUSH_ERR)
			flushed = true;
		else
			ck_assert_msg(!flushed &&
					      wc[i].status == IWARP_WC_SUCCESS,
				      "wr %d: %s", i,
				      iwarp_wc_status_str(wc[i].status));
	}
}

/* Send + Write + Read on |k|, all verified. */
static void traffic_ok(struct st_net *n, struct st_conn *k)
{
	struct st_buf c, s;
	struct iwarp_wc wc[3];
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;

	st_buf_reg(&c, n->cli.pd, 3 * 1024, rw);
	st_buf_reg(&s, n->srv.pd, 3 * 1024, rw);
	iw_test_fill(c.p, 2048, 91);
	iw_test_fill(s.p + 2048, 1024, 92);
	ck_assert_int_eq(st_post_recv(k->s->qp, 1, s.mr, s.p, 1024), 0);
	ck_assert_int_eq(st_post_send(k->c->qp, 2, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, c.mr, c.p, 1024, 0,
				      0, 0),
			 0);
	ck_assert_int_eq(st_post_send(k->c->qp, 3, IWARP_WR_RDMA_WRITE,
				      IWARP_SEND_SIGNALED, c.mr, c.p + 1024,
				      1024, (uintptr_t)(s.p + 1024), s.mr->rkey,
				      0),
			 0);
	ck_assert_int_eq(st_post_send(k->c->qp, 4, IWARP_WR_RDMA_READ,
				      IWARP_SEND_SIGNALED, c.mr, c.p + 2048,
				      1024, (uintptr_t)(s.p + 2048), s.mr->rkey,
				      0),
			 0);
	st_poll_n(k->cq_c, wc, 3);
	st_wc_check(&wc[0], 2, IWARP_WC_SUCCESS, IWARP_WC_SEND, 1024, 0);
	st_wc_check(&wc[1], 3, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, 1024, 0);
	st_wc_check(&wc[2], 4, IWARP_WC_SUCCESS, IWARP_WC_RDMA_READ, 1024, 0);
	st_poll_n(k->cq_s, wc, 1);
	st_wc_check(&wc[0], 1, IWARP_WC_SUCCESS, IWARP_WC_RECV, 1024, 0);
	/* the Read completed after the Write was placed (same stream) */
	ck_assert(!memcmp(s.p, c.p, 2048));
	ck_assert(!memcmp(c.p + 2048, s.p + 2048, 1024));
	st_buf_free(&c);
	st_buf_free(&s);
}

START_TEST(test_remote_access_error)
{
	const struct acase *ac = &cases[_i];
	long base = iw_mem_outstanding();
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;
	struct iwarp_context_attr a;
	struct iwarp_pd *pd2;
	struct st_net n;
	struct st_conn k[2];
	struct st_buf tgt, src, sink, stale;
	struct iwarp_wc wc[4];
	uint32_t rkey, stale_rkey;
	uint64_t raddr, wr0 = 100;
	int access = rw;
	struct iwarp_pd *tpd;

	st_attr(&a, 2, IWARP_CRC_REQUEST, 0);
	st_net_open(&n, &a);
	st_conn_open_many(&n, k, 2, NULL);
	pd2 = iwarp_alloc_pd(n.srv.ctx);
	ck_assert_ptr_nonnull(pd2);

	/* the target on the server */
	if (ac->t == T_NO_ACCESS)
		access = ac->read ? IWARP_ACCESS_LOCAL_WRITE |
					    IWARP_ACCESS_REMOTE_WRITE
				  : IWARP_ACCESS_REMOTE_READ;
	tpd = ac->t == T_WRONG_PD ? pd2 : n.srv.pd;
	st_buf_reg(&stale, n.srv.pd, LEN, rw);
	stale_rkey = stale.mr->rkey;
	st_buf_reg(&tgt, tpd, LEN, access);
	ck_assert_int_eq(iwarp_dereg_mr(stale.mr), 0);
	/* re-registration of the same memory: a new key */
	stale.mr = iwarp_reg_mr(n.srv.pd, stale.p, LEN, rw);
	ck_assert_ptr_nonnull(stale.mr);
	ck_assert_uint_ne(stale.mr->rkey, stale_rkey);
	rkey = tgt.mr->rkey;
	raddr = (uintptr_t)tgt.p;
	switch (ac->t) {
	case T_BAD_STAG:
		rkey = 0x00abcd00u | 0x5a; /* an index never registered */
		break;
	case T_STALE:
		rkey = stale_rkey;
		raddr = (uintptr_t)stale.p;
		break;
	case T_BOUNDS:
		raddr = (uintptr_t)tgt.p + LEN - 8; /* 8 in, 56 beyond */
		break;
	case T_WRAP:
		raddr = UINT64_MAX - 15;
		break;
	case T_QP_ACCESS: {
		/* the QP gives up the right this case uses (RTS -> RTS) */
		struct iwarp_qp_attr qa;

		memset(&qa, 0, sizeof(qa));
		qa.qp_access_flags = IWARP_ACCESS_LOCAL_WRITE |
				     (ac->read ? IWARP_ACCESS_REMOTE_WRITE
					       : IWARP_ACCESS_REMOTE_READ);
		ck_assert_int_eq(
			iwarp_modify_qp(k[0].s->qp, &qa, IWARP_QP_ACCESS_FLAGS),
			0);
		break;
	}
	case T_WRONG_PD:
	case T_NO_ACCESS:
		break;
	}
	/* client: a source and a Read sink, both guarded */
	st_buf_reg(&src, n.cli.pd, LEN, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&sink, n.cli.pd, LEN, IWARP_ACCESS_LOCAL_WRITE);
	iw_test_fill(src.p, LEN, 3);

	/* a receive on the server QP (flushed) */
	ck_assert_int_eq(st_post_recv(k[0].s->qp, 7, stale.mr, stale.p, 64), 0);
	/* the bad access, then a Send that may or may not make it out */
	ck_assert_int_eq(
		st_post_send(k[0].c->qp, wr0,
			     ac->read ? IWARP_WR_RDMA_READ
				      : IWARP_WR_RDMA_WRITE,
			     IWARP_SEND_SIGNALED, ac->read ? sink.mr : src.mr,
			     ac->read ? sink.p : src.p, 64, raddr, rkey, 0),
		0);
	ck_assert_int_eq(st_post_send(k[0].c->qp, wr0 + 1, IWARP_WR_RDMA_WRITE,
				      IWARP_SEND_SIGNALED, src.mr, src.p, 64,
				      (uintptr_t)stale.p, stale.mr->rkey, 0),
			 0);

	if (ac->local) {
		/* the requester detected it and sent the TERMINATE */
		expect_qp_event(n.cli.ctx, k[0].c->qp, &ac->cause, 0,
				IWARP_EVENT_QP_FATAL);
		expect_qp_event(n.srv.ctx, k[0].s->qp, &ac->cause, 1,
				IWARP_EVENT_QP_FATAL);
	} else {
		/* the target detected it and sent the TERMINATE */
		expect_qp_event(n.srv.ctx, k[0].s->qp, &ac->cause, 0,
				IWARP_EVENT_QP_ACCESS_ERR);
		/* the requester received it */
		expect_qp_event(n.cli.ctx, k[0].c->qp, &ac->cause, 1,
				IWARP_EVENT_QP_ACCESS_ERR);
	}
	st_poll_n(k[0].cq_c, wc, 2);
	if (ac->local) {
		st_wc_check(&wc[0], wr0, IWARP_WC_LOC_QP_OP_ERR,
			    IWARP_WC_RDMA_WRITE, 0, 0);
		st_wc_check(&wc[1], wr0 + 1, IWARP_WC_WR_FLUSH_ERR,
			    IWARP_WC_RDMA_WRITE, 0, 0);
	} else if (ac->read) {
		/* RFC 5040 §5.4: the Read fails with the remote error */
		ck_assert_uint_eq(wc[0].wr_id, wr0);
		ck_assert_msg(wc[0].status == IWARP_WC_REM_ACCESS_ERR,
			      "Read: %s", iwarp_wc_status_str(wc[0].status));
		ck_assert_int_eq(wc[0].opcode, IWARP_WC_RDMA_READ);
		ck_assert_uint_eq(wc[0].vendor_err,
				  (uint32_t)ac->cause.layer << 16 |
					  (uint32_t)ac->cause.etype << 8 |
					  ac->cause.ecode);
		ck_assert_uint_eq(wc[1].wr_id, wr0 + 1);
		ck_assert_int_eq(wc[1].status, IWARP_WC_WR_FLUSH_ERR);
	} else {
		ck_assert_int_eq(wc[0].opcode, IWARP_WC_RDMA_WRITE);
		check_sq_tail(wc, 2, wr0);
	}
	st_poll_n(k[0].cq_s, wc, 1);
	st_wc_check(&wc[0], 7, IWARP_WC_WR_FLUSH_ERR, IWARP_WC_RECV, 0, 0);
	ck_assert_int_eq(cmt_qp_state(k[0].c->qp), IWARP_QPS_ERR);
	ck_assert_int_eq(cmt_qp_state(k[0].s->qp), IWARP_QPS_ERR);
	st_cm_expect(n.cli.ech, IWARP_CM_EVENT_DISCONNECTED, k[0].c);
	st_cm_expect(n.srv.ech, IWARP_CM_EVENT_DISCONNECTED, k[0].s);
	st_cm_expect(n.cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k[0].c);
	st_cm_expect(n.srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k[0].s);
	/* nothing placed anywhere (the follow-up Write came after the
	 * error on the stream and was discarded) */
	st_check_fill(tgt.p, LEN, ST_GUARD);
	st_check_fill(sink.p, LEN, ST_GUARD);
	st_check_fill(stale.p, LEN, ST_GUARD);
	/* no other event on either context (watched for ST_QUIET_MS:
	 * nothing later could show it), and a WR posted now is flushed */
	{
		struct pollfd pf[2] = {
			{.fd = iwarp_async_fd(n.cli.ctx), .events = POLLIN},
			{.fd = iwarp_async_fd(n.srv.ctx), .events = POLLIN},
		};

		ck_assert_int_eq(poll(pf, 2, ST_QUIET_MS), 0);
	}
	ck_assert_int_eq(st_post_send(k[0].c->qp, 55, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, NULL, NULL, 0, 0, 0,
				      0),
			 0);
	st_poll_n(k[0].cq_c, wc, 1);
	st_wc_check(&wc[0], 55, IWARP_WC_WR_FLUSH_ERR, IWARP_WC_SEND, 0, 0);
	/* the other connection of the same contexts is unaffected */
	traffic_ok(&n, &k[1]);
	st_conn_disconnect(&n, &k[1], true);
	st_buf_free(&tgt);
	st_buf_free(&stale);
	st_buf_free(&src);
	st_buf_free(&sink);
	st_conn_close(&k[0]);
	st_conn_close(&k[1]);
	ck_assert_int_eq(iwarp_dealloc_pd(pd2), 0);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

/*
 * The TERMINATE on the wire (in-memory transport, CRC on): a Write to an
 * unknown STag. The target sends exactly one FPDU: an untagged DDP
 * message on QN 2, MSN 1, MO 0, L=1, RDMAP opcode 7 (RFC 5040 §4.8,
 * RFC 5041 §5), control word DDP/tagged/invalid STag with M and D, the
 * DDP segment length and the 14-octet tagged header of the offending
 * segment, pad, and a good CRC32c (little-endian, RFC 5044 §4).
 */
START_TEST(test_terminate_wire_bytes)
{
	long base = iw_mem_outstanding();
	struct sp_opts o;
	struct sp_pair *p = calloc(1, sizeof(*p));
	struct st_buf src;
	struct iwarp_async_event ev;
	struct iwarp_wc wc;
	uint8_t w[512], t[512];
	size_t wlen, tlen, fpdu;
	uint16_t ulpdu, wulpdu;
	uint32_t crc, stag = 0x00f00d00u | 0x33;
	int got[2] = {0, 0}, i;

	ck_assert_ptr_nonnull(p);
	memset(&o, 0, sizeof(o));
	o.crc = true;
	sp_open(p, &o);
	st_buf_reg(&src, p->pd, 256, IWARP_ACCESS_LOCAL_WRITE);
	iw_test_fill(src.p, 256, 4);
	ck_assert_int_eq(st_post_send(p->s[0].qp, 1, IWARP_WR_RDMA_WRITE,
				      IWARP_SEND_SIGNALED, src.mr, src.p, 100,
				      0x123456789aull, stag, 0),
			 0);
	ck_assert(sp_wait_closed(p, 1, ST_WAIT_MS));
	ck_assert(sp_wait_closed(p, 0, ST_WAIT_MS));
	ck_assert(p->s[1].have_cause);
	ck_assert(p->s[0].have_cause);
	ck_assert_int_eq(p->s[0].close_err, -ECONNABORTED);
	st_poll_n(&p->s[0].cq, &wc, 1);
	ck_assert_uint_eq(wc.wr_id, 1);
	for (i = 0; i < 2; i++) {
		ck_assert(st_async_wait(p->ctx, &ev, ST_WAIT_MS));
		ck_assert_int_eq(ev.event_type, IWARP_EVENT_QP_ACCESS_ERR);
		ck_assert_uint_eq(ev.term.layer, IWARP_TERM_LAYER_DDP);
		ck_assert_uint_eq(ev.term.etype, IWARP_DDP_ETYPE_TAGGED_BUFFER);
		ck_assert_uint_eq(ev.term.ecode,
				  IWARP_DDP_ECODE_T_INVALID_STAG);
		got[ev.element.qp == p->s[0].qp ? 0 : 1]++;
		ck_assert_int_eq(ev.term_received, ev.element.qp == p->s[0].qp);
	}
	ck_assert_int_eq(got[0], 1);
	ck_assert_int_eq(got[1], 1);

	/* the Write FPDU as sent */
	wlen = sp_captured(p, 0, w, sizeof(w));
	ck_assert_uint_ge(wlen, 2 + 14 + 100 + 4);
	wulpdu = iw_get_u16be(w);
	ck_assert_uint_eq(wulpdu, 14 + 100);
	ck_assert_uint_eq(w[2], 0xc1); /* T, L, DV 1 */
	ck_assert_uint_eq(w[3], 0x40); /* RV 1, opcode 0 Write */
	ck_assert_uint_eq(iw_get_u32be(w + 4), stag);

	/* the TERMINATE, exactly one FPDU and nothing else */
	tlen = sp_captured(p, 1, t, sizeof(t));
	ulpdu = iw_get_u16be(t);
	ck_assert_uint_eq(ulpdu, 18 + 4 + 2 + 14);
	fpdu = ((2u + ulpdu + 3u) & ~3u) + 4u;
	ck_assert_uint_eq(tlen, fpdu);
	ck_assert_uint_eq(t[2], 0x41); /* untagged, L, DV 1 */
	ck_assert_uint_eq(t[3], 0x47); /* RV 1, opcode 7 Terminate */
	ck_assert_uint_eq(iw_get_u32be(t + 8), 2);  /* QN */
	ck_assert_uint_eq(iw_get_u32be(t + 12), 1); /* MSN */
	ck_assert_uint_eq(iw_get_u32be(t + 16), 0); /* MO */
	ck_assert_uint_eq(t[20], 0x11);	       /* layer DDP, etype tagged */
	ck_assert_uint_eq(t[21], 0x00);	       /* invalid STag */
	ck_assert_uint_eq(t[22] & 0xe0, 0xc0); /* M and D, no R */
	ck_assert_uint_eq(iw_get_u16be(t + 24), wulpdu); /* segment length */
	ck_assert(!memcmp(t + 26, w + 2, 14)); /* the offending header */
	crc = crc32c(t, fpdu - 4);
	ck_assert_uint_eq(t[fpdu - 4], crc & 0xff);
	ck_assert_uint_eq(t[fpdu - 3], (crc >> 8) & 0xff);
	ck_assert_uint_eq(t[fpdu - 2], (crc >> 16) & 0xff);
	ck_assert_uint_eq(t[fpdu - 1], crc >> 24);

	st_buf_free(&src);
	sp_close(p);
	free(p);
	st_wait_mem(base);
}
END_TEST

static Suite *stack_access_suite(void)
{
	Suite *s = suite_create("stack_access");
	TCase *tc = tcase_create("access");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_remote_access_error, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_terminate_wire_bytes);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_access_suite)

/*
 * tests/stack_mw_test.c: memory windows and invalidation end to end
 * (RFC 5040 §2.1, §5.3, §6.4, §7; RFC 5042 §5; ibverbs bind/invalidate
 * rules) over the CM and real loopback TCP: type 1 and type 2 binds and
 * their completions, Write and Read through a window, the key bump on
 * rebind (the old STag is refused), bind checks (beyond the region,
 * wider rights, region without MW_BIND), Local Invalidate then access
 * (refused with the RFC cause at the target and REM_ACCESS_ERR at the
 * requester), Send with Invalidate of a type 2 window (WITH_INV, later
 * access refused), Send with Invalidate of a region or a type 1 window
 * (refused with RDMAP remote operation 0x09; the region stays usable),
 * and deregistration of a region with a window bound (-EBUSY).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

#define LEN 4096
#define RW                                                                     \
	(IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |                \
	 IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_MW_BIND)
#define WIN_RW (IWARP_ACCESS_REMOTE_WRITE | IWARP_ACCESS_REMOTE_READ)

/* Two connections of one pair of contexts, server memory |tgt| (RW with
 * MW_BIND), client source |src| and Read sink |sink|. */
struct fix {
	long base;
	struct st_net n;
	struct st_conn k[2];
	struct st_buf tgt, src, sink;
};

static void fix_open(struct fix *f)
{
	struct iwarp_context_attr a;

	f->base = iw_mem_outstanding();
	st_attr(&a, 2, IWARP_CRC_REQUEST, 0);
	st_net_open(&f->n, &a);
	st_conn_open_many(&f->n, f->k, 2, NULL);
	st_buf_reg(&f->tgt, f->n.srv.pd, LEN, RW);
	st_buf_reg(&f->src, f->n.cli.pd, LEN, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&f->sink, f->n.cli.pd, LEN, IWARP_ACCESS_LOCAL_WRITE);
	iw_test_fill(f->src.p, LEN, 7);
}

/* k[0] failed (a TERMINATE): DISCONNECTED and TIMEWAIT_EXIT on both. */
static void fix_failed_k0(struct fix *f)
{
	st_cm_expect(f->n.cli.ech, IWARP_CM_EVENT_DISCONNECTED, f->k[0].c);
	st_cm_expect(f->n.srv.ech, IWARP_CM_EVENT_DISCONNECTED, f->k[0].s);
	st_cm_expect(f->n.cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, f->k[0].c);
	st_cm_expect(f->n.srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, f->k[0].s);
}

static void fix_close(struct fix *f, bool k0_up)
{
	if (k0_up)
		st_conn_disconnect(&f->n, &f->k[0], true);
	st_conn_disconnect(&f->n, &f->k[1], true);
	st_buf_free(&f->tgt);
	st_buf_free(&f->src);
	st_buf_free(&f->sink);
	st_conn_close(&f->k[0]);
	st_conn_close(&f->k[1]);
	st_net_close(&f->n);
	st_wait_mem(f->base);
}

static void cause_eq(const struct iwarp_term_cause *got, uint8_t layer,
		     uint8_t etype, uint8_t ecode)
{
	ck_assert_msg(got->layer == layer && got->etype == etype &&
			      got->ecode == ecode,
		      "cause %u/%u/0x%02x (%s), wanted %u/%u/0x%02x",
		      got->layer, got->etype, got->ecode,
		      iwarp_term_strerror(got->layer, got->etype, got->ecode),
		      layer, etype, ecode);
}

/* The async event of |qp| with a TERMINATE cause (bounded wait). */
static void expect_term(struct iwarp_context *ctx, struct iwarp_qp *qp,
			int received, uint8_t layer, uint8_t etype,
			uint8_t ecode)
{
	struct iwarp_async_event ev;

	ck_assert_msg(st_async_wait(ctx, &ev, ST_WAIT_MS), "no async event");
	ck_assert_ptr_eq(ev.element.qp, qp);
	ck_assert_int_eq(ev.term_received, received);
	cause_eq(&ev.term, layer, etype, ecode);
}

/* Posts a type 2 bind WR on the server QP of k[0] and checks its
 * completion; returns the window's new STag (also stored in mw->rkey). */
static uint32_t bind2(struct fix *f, struct iwarp_mw *mw, uint64_t off,
		      uint64_t len, unsigned int access, uint64_t wr_id)
{
	struct iwarp_send_wr wr, *bad = NULL;
	struct iwarp_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IWARP_WR_BIND_MW;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = iwarp_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = f->tgt.mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)f->tgt.p + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	ck_assert_int_eq(iwarp_post_send(f->k[0].s->qp, &wr, &bad), 0);
	st_poll_n(f->k[0].cq_s, &wc, 1);
	st_wc_check(&wc, wr_id, IWARP_WC_SUCCESS, IWARP_WC_BIND_MW, 0, 0);
	mw->rkey = wr.bind_mw.rkey;
	return mw->rkey;
}

static void local_inv(struct fix *f, uint32_t rkey, uint64_t wr_id)
{
	struct iwarp_send_wr wr, *bad = NULL;
	struct iwarp_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IWARP_WR_LOCAL_INV;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	ck_assert_int_eq(iwarp_post_send(f->k[0].s->qp, &wr, &bad), 0);
	st_poll_n(f->k[0].cq_s, &wc, 1);
	st_wc_check(&wc, wr_id, IWARP_WC_SUCCESS, IWARP_WC_LOCAL_INV, 0, 0);
}

/* Client Write of |len| at window offset |off| (success expected). */
static void write_ok(struct fix *f, int k, uint32_t rkey, uint64_t to,
		     uint32_t len, uint64_t wr_id)
{
	struct iwarp_wc wc;

	ck_assert_int_eq(st_post_send(f->k[k].c->qp, wr_id, IWARP_WR_RDMA_WRITE,
				      IWARP_SEND_SIGNALED, f->src.mr, f->src.p,
				      len, to, rkey, 0),
			 0);
	st_poll_n(f->k[k].cq_c, &wc, 1);
	st_wc_check(&wc, wr_id, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, len, 0);
}

/* Client Read of |len| from |to| into the sink (success expected). A
 * Write before it on connection |k| was placed when it completes (the
 * Read Response follows the Write on the stream). */
static void read_ok(struct fix *f, int k, uint32_t rkey, uint64_t to,
		    uint32_t len, uint64_t wr_id)
{
	struct iwarp_wc wc;

	ck_assert_int_eq(st_post_send(f->k[k].c->qp, wr_id, IWARP_WR_RDMA_READ,
				      IWARP_SEND_SIGNALED, f->sink.mr,
				      f->sink.p, len, to, rkey, 0),
			 0);
	st_poll_n(f->k[k].cq_c, &wc, 1);
	st_wc_check(&wc, wr_id, IWARP_WC_SUCCESS, IWARP_WC_RDMA_READ, len, 0);
}

/* A Write through a dead STag: the target terminates with DDP tagged
 * invalid STag (RFC 5041 §7), nothing is placed. */
static void write_refused(struct fix *f, uint32_t rkey, uint64_t to)
{
	struct iwarp_wc wc[2];

	ck_assert_int_eq(st_post_send(f->k[0].c->qp, 90, IWARP_WR_RDMA_WRITE,
				      IWARP_SEND_SIGNALED, f->src.mr, f->src.p,
				      64, to, rkey, 0),
			 0);
	expect_term(f->n.srv.ctx, f->k[0].s->qp, 0, IWARP_TERM_LAYER_DDP,
		    IWARP_DDP_ETYPE_TAGGED_BUFFER,
		    IWARP_DDP_ECODE_T_INVALID_STAG);
	expect_term(f->n.cli.ctx, f->k[0].c->qp, 1, IWARP_TERM_LAYER_DDP,
		    IWARP_DDP_ETYPE_TAGGED_BUFFER,
		    IWARP_DDP_ECODE_T_INVALID_STAG);
	/* the Write completes once handed to TCP, or is flushed */
	st_poll_n(f->k[0].cq_c, wc, 1);
	ck_assert_uint_eq(wc[0].wr_id, 90);
	ck_assert(wc[0].status == IWARP_WC_SUCCESS ||
		  wc[0].status == IWARP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(f->k[0].s->qp->state, IWARP_QPS_ERR);
	fix_failed_k0(f);
}

/* A Read through a dead STag: REM_ACCESS_ERR with RDMAP remote
 * protection, invalid STag (RFC 5040 §7) on the requester. */
static void read_refused(struct fix *f, uint32_t rkey, uint64_t to)
{
	struct iwarp_wc wc;

	ck_assert_int_eq(st_post_send(f->k[0].c->qp, 91, IWARP_WR_RDMA_READ,
				      IWARP_SEND_SIGNALED, f->sink.mr,
				      f->sink.p, 64, to, rkey, 0),
			 0);
	expect_term(f->n.srv.ctx, f->k[0].s->qp, 0, IWARP_TERM_LAYER_RDMAP,
		    IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
		    IWARP_RDMAP_ECODE_INVALID_STAG);
	expect_term(f->n.cli.ctx, f->k[0].c->qp, 1, IWARP_TERM_LAYER_RDMAP,
		    IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
		    IWARP_RDMAP_ECODE_INVALID_STAG);
	st_poll_n(f->k[0].cq_c, &wc, 1);
	ck_assert_uint_eq(wc.wr_id, 91);
	ck_assert_msg(wc.status == IWARP_WC_REM_ACCESS_ERR, "Read: %s",
		      iwarp_wc_status_str(wc.status));
	ck_assert_int_eq(wc.opcode, IWARP_WC_RDMA_READ);
	ck_assert_uint_eq(wc.vendor_err,
			  (uint32_t)IWARP_RDMAP_ETYPE_REMOTE_PROTECTION << 8 |
				  IWARP_RDMAP_ECODE_INVALID_STAG);
	fix_failed_k0(f);
}

/* Type 1: bind by verb (new key, BIND_MW completion), Write and Read
 * through it at its offset, region busy while bound; rebind bumps the key
 * and the old STag is refused. */
START_TEST(test_type1_bind_rebind)
{
	struct iwarp_mw_bind mb;
	struct iwarp_mw *mw;
	struct iwarp_wc wc;
	uint32_t first, old;
	uint64_t base;
	struct fix f;

	fix_open(&f);
	base = (uintptr_t)f.tgt.p;
	mw = iwarp_alloc_mw(f.n.srv.pd, IWARP_MW_TYPE_1);
	ck_assert_ptr_nonnull(mw);
	first = mw->rkey;
	memset(&mb, 0, sizeof(mb));
	mb.wr_id = 11;
	mb.send_flags = IWARP_SEND_SIGNALED;
	mb.bind_info.mr = f.tgt.mr;
	mb.bind_info.addr = base + 1024;
	mb.bind_info.length = 1024;
	mb.bind_info.mw_access_flags = WIN_RW;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw, &mb), 0);
	st_poll_n(f.k[0].cq_s, &wc, 1);
	st_wc_check(&wc, 11, IWARP_WC_SUCCESS, IWARP_WC_BIND_MW, 0, 0);
	/* same index, a new key */
	ck_assert_uint_eq(mw->rkey >> 8, first >> 8);
	ck_assert_uint_ne(mw->rkey, first);
	ck_assert_uint_ne(mw->rkey, f.tgt.mr->rkey);
	/* Write then Read through the window (TO is the address) */
	write_ok(&f, 0, mw->rkey, base + 1024 + 100, 512, 12);
	read_ok(&f, 0, mw->rkey, base + 1024 + 100, 512, 13);
	ck_assert(!memcmp(f.tgt.p + 1024 + 100, f.src.p, 512));
	st_check_fill(f.tgt.p, 1024 + 100, ST_GUARD);
	ck_assert(!memcmp(f.sink.p, f.src.p, 512));
	/* the window holds the region: deregistration refused */
	ck_assert_int_eq(iwarp_dereg_mr(f.tgt.mr), -EBUSY);
	/* rebind elsewhere: the key moves on */
	old = mw->rkey;
	mb.wr_id = 14;
	mb.bind_info.addr = base;
	mb.bind_info.length = 512;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw, &mb), 0);
	st_poll_n(f.k[0].cq_s, &wc, 1);
	st_wc_check(&wc, 14, IWARP_WC_SUCCESS, IWARP_WC_BIND_MW, 0, 0);
	ck_assert_uint_ne(mw->rkey, old);
	ck_assert_uint_eq(mw->rkey >> 8, old >> 8);
	write_ok(&f, 1, mw->rkey, base, 64, 15); /* any QP of the PD */
	/* the old STag is refused, even inside the new binding */
	write_refused(&f, old, base);
	ck_assert_int_eq(iwarp_dealloc_mw(mw), 0);
	/* unbound: the region may go */
	ck_assert_int_eq(iwarp_dereg_mr(f.tgt.mr), 0);
	f.tgt.mr = iwarp_reg_mr(f.n.srv.pd, f.tgt.p, LEN, RW);
	ck_assert_ptr_nonnull(f.tgt.mr);
	fix_close(&f, false);
}
END_TEST

/* Bind checks at post time: beyond the region, wider rights, a region
 * without MW_BIND, a type 2 window through iwarp_bind_mw or a type 1 one
 * through a WR, an rkey of another index. Nothing is posted: the QP stays
 * usable. */
START_TEST(test_bind_checks)
{
	struct iwarp_send_wr wr, *bad = NULL;
	struct iwarp_mw *mw1, *mw2;
	struct iwarp_mw_bind mb;
	struct st_buf ro, nob;
	uint64_t base;
	struct fix f;

	fix_open(&f);
	base = (uintptr_t)f.tgt.p;
	st_buf_reg(&ro, f.n.srv.pd, 256,
		   IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_MW_BIND);
	st_buf_reg(&nob, f.n.srv.pd, 256, IWARP_ACCESS_LOCAL_WRITE);
	mw1 = iwarp_alloc_mw(f.n.srv.pd, IWARP_MW_TYPE_1);
	mw2 = iwarp_alloc_mw(f.n.srv.pd, IWARP_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw1);
	ck_assert_ptr_nonnull(mw2);
	memset(&mb, 0, sizeof(mb));
	mb.send_flags = IWARP_SEND_SIGNALED;
	mb.bind_info.mr = f.tgt.mr;
	mb.bind_info.mw_access_flags = WIN_RW;
	/* beyond the region: one octet past its end, and before it */
	mb.bind_info.addr = base + 1;
	mb.bind_info.length = LEN;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw1, &mb), -EINVAL);
	mb.bind_info.addr = base - 1;
	mb.bind_info.length = 2;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw1, &mb), -EINVAL);
	/* remote write on a region without local write */
	mb.bind_info.mr = ro.mr;
	mb.bind_info.addr = (uintptr_t)ro.p;
	mb.bind_info.length = 256;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw1, &mb), -EACCES);
	mb.bind_info.mw_access_flags = IWARP_ACCESS_REMOTE_READ; /* fine */
	mb.wr_id = 3;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw1, &mb), 0);
	/* a region that does not allow binding */
	mb.bind_info.mr = nob.mr;
	mb.bind_info.addr = (uintptr_t)nob.p;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw1, &mb), -EACCES);
	/* rights a window cannot have */
	mb.bind_info.mr = f.tgt.mr;
	mb.bind_info.addr = base;
	mb.bind_info.mw_access_flags = IWARP_ACCESS_LOCAL_WRITE;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw1, &mb), -EINVAL);
	/* the wrong verb for the type */
	mb.bind_info.mw_access_flags = WIN_RW;
	ck_assert_int_eq(iwarp_bind_mw(f.k[0].s->qp, mw2, &mb), -EINVAL);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IWARP_WR_BIND_MW;
	wr.bind_mw.mw = mw1;
	wr.bind_mw.rkey = iwarp_inc_rkey(mw1->rkey);
	wr.bind_mw.bind_info = mb.bind_info;
	ck_assert_int_eq(iwarp_post_send(f.k[0].s->qp, &wr, &bad), -EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	/* an rkey naming another index */
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = mw2->rkey + 0x100;
	ck_assert_int_eq(iwarp_post_send(f.k[0].s->qp, &wr, &bad), -EINVAL);
	{
		struct iwarp_wc wc;

		/* only the good bind was posted */
		st_poll_n(f.k[0].cq_s, &wc, 1);
		st_wc_check(&wc, 3, IWARP_WC_SUCCESS, IWARP_WC_BIND_MW, 0, 0);
	}
	/* the QP is still usable */
	write_ok(&f, 0, f.tgt.mr->rkey, base, 64, 20);
	ck_assert_int_eq(iwarp_dealloc_mw(mw1), 0);
	ck_assert_int_eq(iwarp_dealloc_mw(mw2), 0);
	st_buf_free(&ro);
	st_buf_free(&nob);
	fix_close(&f, true);
}
END_TEST

/* Type 2: bind by WR, Write through it, Local Invalidate, then a Write
 * through it is refused at the target (DDP invalid STag). */
START_TEST(test_write_after_local_inv)
{
	struct iwarp_mw *mw;
	uint64_t base;
	struct fix f;

	fix_open(&f);
	base = (uintptr_t)f.tgt.p;
	mw = iwarp_alloc_mw(f.n.srv.pd, IWARP_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	bind2(&f, mw, 0, LEN, WIN_RW, 31);
	write_ok(&f, 0, mw->rkey, base + 8, 256, 32);
	read_ok(&f, 0, mw->rkey, base + 8, 256, 35);
	ck_assert(!memcmp(f.tgt.p + 8, f.src.p, 256));
	ck_assert_int_eq(iwarp_dereg_mr(f.tgt.mr), -EBUSY);
	local_inv(&f, mw->rkey, 33);
	memset(f.tgt.p, ST_GUARD, LEN);
	write_refused(&f, mw->rkey, base);
	st_check_fill(f.tgt.p, LEN, ST_GUARD);
	/* invalidated: the region is free again, its own STag still works */
	write_ok(&f, 1, f.tgt.mr->rkey, base, 64, 34);
	ck_assert_int_eq(iwarp_dealloc_mw(mw), 0);
	fix_close(&f, false);
}
END_TEST

/* Local Invalidate of a region's own STag: no access through it any
 * more (the region can still be deregistered); a region of the other
 * connection's PD is untouched. */
START_TEST(test_local_inv_region)
{
	uint64_t base;
	struct fix f;

	fix_open(&f);
	base = (uintptr_t)f.tgt.p;
	write_ok(&f, 0, f.tgt.mr->rkey, base, 64, 71);
	local_inv(&f, f.tgt.mr->rkey, 72);
	memset(f.tgt.p, ST_GUARD, LEN);
	write_refused(&f, f.tgt.mr->rkey, base);
	st_check_fill(f.tgt.p, LEN, ST_GUARD);
	fix_close(&f, false);
}
END_TEST

/* Type 2 rebind needs an invalidated window; the rebind's new key
 * replaces the old one, which a Read is then refused with. */
START_TEST(test_type2_rebind_old_key)
{
	struct iwarp_send_wr wr, *bad = NULL;
	struct iwarp_mw *mw;
	struct iwarp_wc wc;
	uint32_t old;
	uint64_t base;
	struct fix f;

	fix_open(&f);
	base = (uintptr_t)f.tgt.p;
	mw = iwarp_alloc_mw(f.n.srv.pd, IWARP_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	old = bind2(&f, mw, 0, 1024, WIN_RW, 41);
	local_inv(&f, old, 42);
	bind2(&f, mw, 1024, 1024, WIN_RW, 43);
	ck_assert_uint_ne(mw->rkey, old);
	ck_assert_uint_eq(mw->rkey >> 8, old >> 8);
	iw_test_fill(f.tgt.p + 1024, 64, 44);
	read_ok(&f, 0, mw->rkey, base + 1024, 64, 44);
	ck_assert(!memcmp(f.sink.p, f.tgt.p + 1024, 64));
	/* a bound type 2 window does not bind again: the bind fails
	 * (MW_BIND_ERR) and the QP goes to ERR, as in ibverbs */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 45;
	wr.opcode = IWARP_WR_BIND_MW;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = iwarp_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = f.tgt.mr;
	wr.bind_mw.bind_info.addr = base;
	wr.bind_mw.bind_info.length = 64;
	wr.bind_mw.bind_info.mw_access_flags = WIN_RW;
	ck_assert_int_eq(iwarp_post_send(f.k[0].s->qp, &wr, &bad), 0);
	st_poll_n(f.k[0].cq_s, &wc, 1);
	ck_assert_uint_eq(wc.wr_id, 45);
	ck_assert_msg(wc.status == IWARP_WC_MW_BIND_ERR, "bind: %s",
		      iwarp_wc_status_str(wc.status));
	ck_assert_int_eq(wc.opcode, IWARP_WC_BIND_MW);
	expect_term(f.n.srv.ctx, f.k[0].s->qp, 0, IWARP_TERM_LAYER_RDMAP,
		    IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC, 0);
	expect_term(f.n.cli.ctx, f.k[0].c->qp, 1, IWARP_TERM_LAYER_RDMAP,
		    IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC, 0);
	fix_failed_k0(&f);
	/* the failed bind left the binding as it was: the old STag (of the
	 * first bind) is refused, the current one works */
	write_ok(&f, 1, mw->rkey, base + 1024, 64, 46);
	{
		struct iwarp_wc w;

		ck_assert_int_eq(st_post_send(f.k[1].c->qp, 47,
					      IWARP_WR_RDMA_READ,
					      IWARP_SEND_SIGNALED, f.sink.mr,
					      f.sink.p, 64, base, old, 0),
				 0);
		st_poll_n(f.k[1].cq_c, &w, 1);
		ck_assert_uint_eq(w.wr_id, 47);
		ck_assert_int_eq(w.status, IWARP_WC_REM_ACCESS_ERR);
		expect_term(f.n.srv.ctx, f.k[1].s->qp, 0,
			    IWARP_TERM_LAYER_RDMAP,
			    IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			    IWARP_RDMAP_ECODE_INVALID_STAG);
		expect_term(f.n.cli.ctx, f.k[1].c->qp, 1,
			    IWARP_TERM_LAYER_RDMAP,
			    IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			    IWARP_RDMAP_ECODE_INVALID_STAG);
		st_cm_expect(f.n.cli.ech, IWARP_CM_EVENT_DISCONNECTED,
			     f.k[1].c);
		st_cm_expect(f.n.srv.ech, IWARP_CM_EVENT_DISCONNECTED,
			     f.k[1].s);
		st_cm_expect(f.n.cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT,
			     f.k[1].c);
		st_cm_expect(f.n.srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT,
			     f.k[1].s);
	}
	ck_assert_int_eq(iwarp_dealloc_mw(mw), 0);
	st_buf_free(&f.tgt);
	st_buf_free(&f.src);
	st_buf_free(&f.sink);
	st_conn_close(&f.k[0]);
	st_conn_close(&f.k[1]);
	st_net_close(&f.n);
	st_wait_mem(f.base);
}
END_TEST

/* Send with Invalidate of a bound type 2 window: WITH_INV and the STag in
 * the receive completion; a Read through it afterwards is refused. */
START_TEST(test_send_inv_window)
{
	struct iwarp_mw *mw;
	struct iwarp_wc wc;
	uint64_t base;
	struct fix f;

	fix_open(&f);
	base = (uintptr_t)f.tgt.p;
	mw = iwarp_alloc_mw(f.n.srv.pd, IWARP_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	bind2(&f, mw, 0, LEN, WIN_RW, 51);
	read_ok(&f, 0, mw->rkey, base, 64, 52);
	ck_assert_int_eq(
		st_post_recv(f.k[0].s->qp, 53, f.tgt.mr, f.tgt.p + 2048, 64),
		0);
	ck_assert_int_eq(st_post_send(f.k[0].c->qp, 54, IWARP_WR_SEND_WITH_INV,
				      IWARP_SEND_SIGNALED, f.src.mr, f.src.p,
				      32, 0, 0, mw->rkey),
			 0);
	st_poll_n(f.k[0].cq_s, &wc, 1);
	st_wc_check(&wc, 53, IWARP_WC_SUCCESS, IWARP_WC_RECV, 32,
		    IWARP_WC_WITH_INV);
	ck_assert_uint_eq(wc.invalidated_rkey, mw->rkey);
	st_poll_n(f.k[0].cq_c, &wc, 1);
	st_wc_check(&wc, 54, IWARP_WC_SUCCESS, IWARP_WC_SEND, 32, 0);
	/* remotely invalidated: the region may be deregistered again */
	read_refused(&f, mw->rkey, base);
	ck_assert_int_eq(iwarp_dealloc_mw(mw), 0);
	fix_close(&f, false);
}
END_TEST

/* Send with Invalidate naming a region (_i 0) or a type 1 window (_i 1):
 * refused with RDMAP remote operation error 0x09 "STag cannot be
 * invalidated"; the STag keeps working for the other connection. */
START_TEST(test_send_inv_refused)
{
	struct iwarp_mw_bind mb;
	struct iwarp_mw *mw = NULL;
	struct iwarp_wc wc;
	uint32_t stag;
	uint64_t base;
	struct fix f;

	fix_open(&f);
	base = (uintptr_t)f.tgt.p;
	stag = f.tgt.mr->rkey;
	if (_i == 1) {
		mw = iwarp_alloc_mw(f.n.srv.pd, IWARP_MW_TYPE_1);
		ck_assert_ptr_nonnull(mw);
		memset(&mb, 0, sizeof(mb));
		mb.wr_id = 60;
		mb.send_flags = IWARP_SEND_SIGNALED;
		mb.bind_info.mr = f.tgt.mr;
		mb.bind_info.addr = base;
		mb.bind_info.length = LEN;
		mb.bind_info.mw_access_flags = WIN_RW;
		ck_assert_int_eq(iwarp_bind_mw(f.k[1].s->qp, mw, &mb), 0);
		st_poll_n(f.k[1].cq_s, &wc, 1);
		st_wc_check(&wc, 60, IWARP_WC_SUCCESS, IWARP_WC_BIND_MW, 0, 0);
		stag = mw->rkey;
	}
	ck_assert_int_eq(
		st_post_recv(f.k[0].s->qp, 61, f.tgt.mr, f.tgt.p + 2048, 64),
		0);
	ck_assert_int_eq(st_post_send(f.k[0].c->qp, 62, IWARP_WR_SEND_WITH_INV,
				      IWARP_SEND_SIGNALED, f.src.mr, f.src.p,
				      32, 0, 0, stag),
			 0);
	expect_term(f.n.srv.ctx, f.k[0].s->qp, 0, IWARP_TERM_LAYER_RDMAP,
		    IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
		    IWARP_RDMAP_ECODE_CANT_INVALIDATE);
	expect_term(f.n.cli.ctx, f.k[0].c->qp, 1, IWARP_TERM_LAYER_RDMAP,
		    IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
		    IWARP_RDMAP_ECODE_CANT_INVALIDATE);
	/* the receive does not complete successfully */
	st_poll_n(f.k[0].cq_s, &wc, 1);
	ck_assert_uint_eq(wc.wr_id, 61);
	ck_assert_int_ne(wc.status, IWARP_WC_SUCCESS);
	ck_assert_uint_eq(wc.wc_flags & IWARP_WC_WITH_INV, 0);
	st_poll_n(f.k[0].cq_c, &wc, 1);
	ck_assert_uint_eq(wc.wr_id, 62);
	fix_failed_k0(&f);
	/* the STag was left alone: Write and Read through it work */
	write_ok(&f, 1, stag, base + 512, 128, 63);
	read_ok(&f, 1, stag, base + 512, 128, 64);
	ck_assert(!memcmp(f.tgt.p + 512, f.src.p, 128));
	if (mw)
		ck_assert_int_eq(iwarp_dealloc_mw(mw), 0);
	fix_close(&f, false);
}
END_TEST

static Suite *stack_mw_suite(void)
{
	Suite *s = suite_create("stack_mw");
	TCase *tc = tcase_create("mw");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_type1_bind_rebind);
	tcase_add_test(tc, test_bind_checks);
	tcase_add_test(tc, test_write_after_local_inv);
	tcase_add_test(tc, test_local_inv_region);
	tcase_add_test(tc, test_type2_rebind_old_key);
	tcase_add_test(tc, test_send_inv_window);
	tcase_add_loop_test(tc, test_send_inv_refused, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_mw_suite)

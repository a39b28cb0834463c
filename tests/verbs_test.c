/*
 * tests/verbs_test.c: verbs objects: context, PD, MR/STag table, CQ and
 * completion channel, SRQ, QP state machine, posting, flush, async events.
 * The engine hooks are the weak stubs (or a real engine that ignores
 * unconnected QPs): posted WRs stay queued until the test completes or
 * flushes them, playing the engine with qp_sq_complete / qp_rq_pop.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/engine.h"
#include "iwarp/iwarp.h"
#include "testutil.h"
#include "util/mem.h"
#include "verbs/verbs.h"

static long mem_start;

static void mem_begin(void)
{
	mem_start = iw_mem_outstanding();
}

static void mem_end(void)
{
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}

static struct iwarp_context *ctx_open_inline(void)
{
	struct iwarp_context_attr a;
	struct iwarp_context *ctx;

	iwarp_context_attr_init(&a);
	a.progress = IWARP_PROGRESS_INLINE;
	ctx = iwarp_open_context(&a);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

/* true when |fd| is readable right now */
static bool fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void set_nonblock(int fd)
{
	ck_assert_int_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK),
			 0);
}

/* ---- a QP fixture ---- */
struct fx {
	struct iwarp_context *ctx;
	struct iwarp_pd *pd;
	struct iwarp_cq *scq, *rcq;
	struct iwarp_qp *qp;
	uint8_t buf[4096];
	struct iwarp_mr *mr;
};

/* RC QP attributes on |f|'s CQs. */
static void fx_qp_attr(const struct fx *f, struct iwarp_qp_init_attr *ia,
		       uint32_t sq, uint32_t rq, uint32_t sge)
{
	memset(ia, 0, sizeof(*ia));
	ia->send_cq = f->scq;
	ia->recv_cq = f->rcq;
	ia->qp_type = IWARP_QPT_RC;
	ia->cap.max_send_wr = sq;
	ia->cap.max_recv_wr = rq;
	ia->cap.max_send_sge = sge;
	ia->cap.max_recv_sge = sge;
}

static void fx_open(struct fx *f, uint32_t sq, uint32_t rq, int sig_all)
{
	struct iwarp_qp_init_attr ia;

	memset(f, 0, sizeof(*f));
	f->ctx = ctx_open_inline();
	f->pd = iwarp_alloc_pd(f->ctx);
	ck_assert_ptr_nonnull(f->pd);
	f->scq = iwarp_create_cq(f->ctx, 256, NULL, NULL, 0);
	f->rcq = iwarp_create_cq(f->ctx, 256, NULL, NULL, 0);
	ck_assert_ptr_nonnull(f->scq);
	ck_assert_ptr_nonnull(f->rcq);
	f->mr = iwarp_reg_mr(f->pd, f->buf, sizeof(f->buf),
			     IWARP_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(f->mr);
	fx_qp_attr(f, &ia, sq, rq, 2);
	ia.sq_sig_all = sig_all;
	f->qp = iwarp_create_qp(f->pd, &ia);
	ck_assert_ptr_nonnull(f->qp);
}

static void fx_close(struct fx *f)
{
	ck_assert_int_eq(iwarp_destroy_qp(f->qp), 0);
	ck_assert_int_eq(iwarp_dereg_mr(f->mr), 0);
	ck_assert_int_eq(iwarp_destroy_cq(f->scq), 0);
	ck_assert_int_eq(iwarp_destroy_cq(f->rcq), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(f->pd), 0);
	ck_assert_int_eq(iwarp_close_context(f->ctx), 0);
}

static int qp_to(struct iwarp_qp *qp, enum iwarp_qp_state s)
{
	struct iwarp_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	return iwarp_modify_qp(qp, &a, IWARP_QP_STATE);
}

static void qp_to_rts(struct iwarp_qp *qp)
{
	ck_assert_int_eq(qp_to(qp, IWARP_QPS_INIT), 0);
	ck_assert_int_eq(qp_to(qp, IWARP_QPS_RTR), 0);
	ck_assert_int_eq(qp_to(qp, IWARP_QPS_RTS), 0);
}

static void send_wr_init(struct iwarp_send_wr *wr, struct iwarp_sge *sge,
			 uint64_t id, enum iwarp_wr_opcode op, unsigned flags)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->sg_list = sge;
	wr->num_sge = sge ? 1 : 0;
	wr->opcode = op;
	wr->send_flags = flags;
}

/* ================= context ================= */

START_TEST(test_attr_defaults)
{
	struct iwarp_context_attr a;

	unsetenv("IWARP_PROGRESS");
	unsetenv("IWARP_CRC");
	unsetenv("IWARP_MPA_REV");
	unsetenv("IWARP_MARKERS");
	unsetenv("IWARP_P2P");
	unsetenv("IWARP_FPDU_MAX");
	unsetenv("IWARP_CC");
	unsetenv("IWARP_RESPONDER_TX_WAIT_MS");
	memset(&a, 0xa5, sizeof(a));
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.mpa_rev, 2);
	ck_assert_int_eq(a.crc, IWARP_CRC_OFF);
	ck_assert_int_eq(a.markers, 0);
	/* RFC 6581 RTR offered by default, bounded wait without one */
	ck_assert_int_eq(a.p2p, IWARP_P2P_AUTO);
	ck_assert_uint_eq(a.responder_tx_wait_ms, 1000);
	ck_assert_uint_eq(a.fpdu_max, 0);
	ck_assert_int_eq(a.progress, IWARP_PROGRESS_ADAPTIVE);
	ck_assert_uint_eq(a.busy_poll_us, 0);
	ck_assert_ptr_null(a.congestion_control);
	ck_assert_uint_eq(a.mpa_req_timeout_ms, 5000);
	ck_assert_uint_eq(a.mpa_rep_timeout_ms, 10000);
	ck_assert_uint_eq(a.max_private_data, 512);
	iwarp_context_attr_init(NULL); /* no crash */
}
END_TEST

START_TEST(test_attr_env)
{
	struct iwarp_context_attr a, q;
	struct iwarp_context *ctx;

	mem_begin();
	setenv("IWARP_PROGRESS", "inline", 1);
	setenv("IWARP_CRC", "require", 1);
	setenv("IWARP_MPA_REV", "1", 1);
	setenv("IWARP_MARKERS", "1", 1);
	setenv("IWARP_P2P", "read", 1);
	setenv("IWARP_FPDU_MAX", "1448", 1);
	setenv("IWARP_CC", "cubic", 1);
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.progress, IWARP_PROGRESS_INLINE);
	ck_assert_int_eq(a.crc, IWARP_CRC_REQUIRE);
	ck_assert_int_eq(a.mpa_rev, 1);
	ck_assert_int_eq(a.markers, 1);
	ck_assert_int_eq(a.p2p, IWARP_P2P_READ);
	ck_assert_uint_eq(a.fpdu_max, 1448);
	ck_assert_str_eq(a.congestion_control, "cubic");

	/* NULL attr: defaults + environment */
	ctx = iwarp_open_context(NULL);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(iwarp_query_context(ctx, &q), 0);
	ck_assert_int_eq(q.crc, IWARP_CRC_REQUIRE);
	ck_assert_int_eq(q.p2p, IWARP_P2P_READ);
	ck_assert_str_eq(q.congestion_control, "cubic");
	ck_assert_int_eq(iwarp_close_context(ctx), 0);

	/* explicit attr: used as is, caller's values win */
	a.crc = IWARP_CRC_OFF;
	a.p2p = IWARP_P2P_WRITE;
	a.congestion_control = NULL;
	ctx = iwarp_open_context(&a);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(iwarp_query_context(ctx, &q), 0);
	ck_assert_int_eq(q.crc, IWARP_CRC_OFF);
	ck_assert_int_eq(q.p2p, IWARP_P2P_WRITE);
	ck_assert_ptr_null(q.congestion_control);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);

	/* unparsable values are ignored */
	setenv("IWARP_PROGRESS", "fast", 1);
	setenv("IWARP_CRC", "maybe", 1);
	setenv("IWARP_MPA_REV", "3", 1);
	setenv("IWARP_MARKERS", "2", 1);
	setenv("IWARP_P2P", "x", 1);
	setenv("IWARP_FPDU_MAX", "12", 1);
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.progress, IWARP_PROGRESS_ADAPTIVE);
	ck_assert_int_eq(a.crc, IWARP_CRC_OFF);
	ck_assert_int_eq(a.mpa_rev, 2);
	ck_assert_int_eq(a.markers, 0);
	ck_assert_int_eq(a.p2p, IWARP_P2P_AUTO);
	ck_assert_uint_eq(a.fpdu_max, 0);
	setenv("IWARP_P2P", "NONE", 1);
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.p2p, IWARP_P2P_NONE);
	setenv("IWARP_P2P", "auto", 1);
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.p2p, IWARP_P2P_AUTO);
	setenv("IWARP_FPDU_MAX", "70000", 1);
	setenv("IWARP_CRC", "REQUEST", 1);
	iwarp_context_attr_init(&a);
	ck_assert_uint_eq(a.fpdu_max, 0);
	ck_assert_int_eq(a.crc, IWARP_CRC_REQUEST);
	mem_end();
}
END_TEST

/*
 * Which socket I/O a context's engines get (iwarp_open_context(3), "Socket
 * I/O"): IWARP_SOCKET_IO when it names one, else direct with one engine and
 * the ring with several; never direct in INLINE mode.
 */
START_TEST(test_socket_io_choice)
{
	static const struct {
		const char *io, *engines;
		enum iwarp_progress_mode progress;
		bool direct;
	} t[] = {
		{NULL, NULL, IWARP_PROGRESS_ADAPTIVE, true},
		{NULL, "2", IWARP_PROGRESS_ADAPTIVE, false},
		{"ring", NULL, IWARP_PROGRESS_ADAPTIVE, false},
		{"RING", NULL, IWARP_PROGRESS_CPU, false},
		{"direct", "2", IWARP_PROGRESS_ADAPTIVE, true},
		{"sideways", NULL, IWARP_PROGRESS_CPU, true},
		{"sideways", "2", IWARP_PROGRESS_ADAPTIVE, false},
		{NULL, NULL, IWARP_PROGRESS_INLINE, false},
		{"direct", NULL, IWARP_PROGRESS_INLINE, false},
	};
	struct iwarp_context_attr a;
	struct iwarp_context *ctx;
	unsigned int i, e;

	mem_begin();
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].io)
			ck_assert_int_eq(setenv("IWARP_SOCKET_IO", t[i].io, 1),
					 0);
		else
			unsetenv("IWARP_SOCKET_IO");
		if (t[i].engines)
			ck_assert_int_eq(
				setenv("IWARP_ENGINES", t[i].engines, 1), 0);
		else
			unsetenv("IWARP_ENGINES");
		iwarp_context_attr_init(&a);
		a.progress = t[i].progress;
		ctx = iwarp_open_context(&a);
		ck_assert_msg(ctx != NULL, "case %u: %s", i, strerror(errno));
		for (e = 0; e < ctx->n_engines; e++)
			ck_assert_msg(engine_direct(ctx->engines[e]) ==
					      t[i].direct,
				      "case %u engine %u: direct %d", i, e,
				      !t[i].direct);
		ck_assert_int_eq(iwarp_close_context(ctx), 0);
	}
	unsetenv("IWARP_SOCKET_IO");
	unsetenv("IWARP_ENGINES");
	mem_end();
}
END_TEST

START_TEST(test_open_invalid)
{
	struct iwarp_context_attr a;
	struct iwarp_context_attr bad[8];
	char longcc[64];
	size_t i;

	mem_begin();
	iwarp_context_attr_init(&a);
	a.progress = IWARP_PROGRESS_INLINE;
	for (i = 0; i < 8; i++)
		bad[i] = a;
	bad[0].mpa_rev = 3;
	bad[1].crc = (enum iwarp_crc_policy)3;
	bad[2].p2p = (enum iwarp_p2p_rtr)5;
	bad[3].progress = (enum iwarp_progress_mode)4;
	bad[4].markers = 2;
	bad[5].fpdu_max = 10;
	bad[6].max_private_data = 513;
	memset(longcc, 'a', sizeof(longcc) - 1);
	longcc[sizeof(longcc) - 1] = 0;
	bad[7].congestion_control = longcc;
	for (i = 0; i < 8; i++) {
		errno = 0;
		ck_assert_ptr_null(iwarp_open_context(&bad[i]));
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_int_eq(iwarp_close_context(NULL), -EINVAL);
	ck_assert_int_eq(iwarp_query_context(NULL, &a), -EINVAL);
	ck_assert_int_eq(iwarp_progress(NULL), -EINVAL);
	ck_assert_int_eq(iwarp_query_device(NULL, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_async_fd(NULL), -EINVAL);
	mem_end();
}
END_TEST

START_TEST(test_query_device)
{
	struct iwarp_device_attr d;
	struct iwarp_context *ctx;

	mem_begin();
	ctx = ctx_open_inline();
	ck_assert_int_eq(iwarp_query_device(ctx, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_query_device(ctx, &d), 0);
	ck_assert_int_ge(d.max_sge, 6);
	ck_assert_int_eq(d.max_sge_rd, 1);
	ck_assert_int_ge(d.max_inline_data, 80);
	ck_assert_int_le(d.max_qp_rd_atom, 128);
	ck_assert_int_gt(d.max_qp_rd_atom, 0);
	ck_assert_int_le(d.max_qp_init_rd_atom, 128);
	ck_assert_int_eq(d.max_qp, IW_MAX_QP);
	ck_assert_int_eq(d.max_qp_wr, IW_MAX_QP_WR);
	ck_assert(d.max_mr_size > (1ULL << 40));
	ck_assert_int_eq(d.transport_type, IWARP_TRANSPORT_IWARP);
	ck_assert_int_eq(d.node_type, IWARP_NODE_RNIC);
	ck_assert_int_eq(d.max_private_data, 508); /* rev 2: 4 for IRD/ORD */
	ck_assert(strlen(d.fw_ver) > 0);
	ck_assert_int_eq(iwarp_progress(ctx), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_close_busy)
{
	struct iwarp_comp_channel *ch;
	struct iwarp_context *ctx;
	struct iwarp_pd *pd;
	struct iwarp_cq *cq;

	mem_begin();
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	ck_assert_int_eq(iwarp_close_context(ctx), -EBUSY);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ch = iwarp_create_comp_channel(ctx);
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(iwarp_close_context(ctx), -EBUSY);
	cq = iwarp_create_cq(ctx, 4, NULL, ch, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_eq(iwarp_destroy_comp_channel(ch), -EBUSY);
	ck_assert_int_eq(iwarp_destroy_cq(cq), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), -EBUSY);
	ck_assert_int_eq(iwarp_destroy_comp_channel(ch), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

/* ================= PD and MR ================= */

START_TEST(test_pd_busy)
{
	struct iwarp_srq_init_attr sa;
	struct iwarp_context *ctx;
	struct iwarp_srq *srq;
	struct iwarp_pd *pd, *pd2;
	struct iwarp_mr *mr;
	struct fx f;
	char buf[64];

	mem_begin();
	errno = 0;
	ck_assert_ptr_null(iwarp_alloc_pd(NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(iwarp_dealloc_pd(NULL), -EINVAL);
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	pd2 = iwarp_alloc_pd(ctx);
	ck_assert_ptr_eq(pd->context, ctx);
	ck_assert_uint_ne(pd->handle, pd2->handle);
	mr = iwarp_reg_mr(pd, buf, sizeof(buf), 0);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), -EBUSY);
	ck_assert_int_eq(iwarp_dereg_mr(mr), 0);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	srq = iwarp_create_srq(pd, &sa);
	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), -EBUSY);
	ck_assert_int_eq(iwarp_destroy_srq(srq), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd2), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);

	fx_open(&f, 4, 4, 0);
	ck_assert_int_eq(iwarp_dereg_mr(f.mr), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(f.pd), -EBUSY); /* the QP */
	f.mr = iwarp_reg_mr(f.pd, f.buf, 1, 0);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_mr_reg_errors)
{
	struct iwarp_context *ctx;
	struct iwarp_pd *pd;
	char buf[64];
	struct {
		struct iwarp_pd *pd;
		void *addr;
		size_t len;
		int access;
	} bad[6];
	size_t i;

	mem_begin();
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	for (i = 0; i < 6; i++) {
		bad[i].pd = pd;
		bad[i].addr = buf;
		bad[i].len = sizeof(buf);
		bad[i].access = IWARP_ACCESS_LOCAL_WRITE;
	}
	bad[0].pd = NULL;
	bad[1].addr = NULL;
	bad[2].len = 0;
	/* RFC 7306 remote atomic access, like remote write, needs
	 * LOCAL_WRITE (ibverbs rule) */
	bad[3].access = IWARP_ACCESS_REMOTE_ATOMIC;
	bad[4].access = IWARP_ACCESS_REMOTE_WRITE; /* needs LOCAL_WRITE */
	bad[5].addr = (void *)(uintptr_t)(UINTPTR_MAX - 8); /* wraps */
	for (i = 0; i < 6; i++) {
		errno = 0;
		ck_assert_ptr_null(iwarp_reg_mr(bad[i].pd, bad[i].addr,
						bad[i].len, bad[i].access));
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_int_eq(iwarp_dereg_mr(NULL), -EINVAL);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_mr_stag_keys)
{
	struct iwarp_context *ctx;
	struct iwarp_pd *pd;
	struct iwarp_mr *mr;
	uint32_t prev = 0, idx = 0;
	unsigned int changes = 0;
	int seen[256] = {0};
	unsigned int distinct = 0;
	char buf[64];
	int i;

	mem_begin();
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	for (i = 0; i < 300; i++) {
		mr = iwarp_reg_mr(pd, buf, sizeof(buf),
				  IWARP_ACCESS_LOCAL_WRITE |
					  IWARP_ACCESS_REMOTE_WRITE);
		ck_assert_ptr_nonnull(mr);
		ck_assert_uint_eq(mr->lkey, mr->rkey);
		ck_assert_uint_ne(mr->lkey, 0);
		ck_assert_uint_ne(MR_STAG_INDEX(mr->lkey), 0);
		ck_assert_ptr_eq(mr->addr, buf);
		ck_assert_uint_eq(mr->length, sizeof(buf));
		ck_assert_ptr_eq(mr->pd, pd);
		if (i) {
			/* the freed index is reused with a new key */
			ck_assert_uint_eq(MR_STAG_INDEX(mr->lkey), idx);
			ck_assert_uint_ne(mr->lkey, prev);
			changes++;
		}
		idx = MR_STAG_INDEX(mr->lkey);
		prev = mr->lkey;
		if (!seen[MR_STAG_KEY(mr->lkey)]++)
			distinct++;
		ck_assert_int_eq(iwarp_dereg_mr(mr), 0);
	}
	ck_assert_uint_eq(changes, 299);
	ck_assert_uint_gt(distinct, 100); /* not a counter stuck on few keys */
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_mr_table_grows)
{
	static uint8_t buf[1000];
	struct iwarp_context *ctx;
	struct iwarp_mr *mrs[1000];
	struct iwarp_pd *pd;
	uint8_t *dst;
	int i, j;

	mem_begin();
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	for (i = 0; i < 1000; i++) {
		mrs[i] = iwarp_reg_mr(pd, buf + i, 1, IWARP_ACCESS_REMOTE_READ);
		ck_assert_ptr_nonnull(mrs[i]);
	}
	for (i = 0; i < 1000; i += 97)
		for (j = i + 1; j < 1000; j++)
			ck_assert_uint_ne(mrs[i]->lkey, mrs[j]->lkey);
	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(mr_check_remote(ctx, mrs[i]->rkey, pd,
						 IWARP_ACCESS_REMOTE_READ,
						 (uint64_t)(uintptr_t)(buf + i),
						 1, false, &dst),
				 0);
		ck_assert_ptr_eq(dst, buf + i);
	}
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(iwarp_dereg_mr(mrs[i]), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_mr_check_remote)
{
	struct iwarp_context *ctx;
	struct iwarp_pd *pd, *pd2;
	struct iwarp_mr *mr, *ro, *stale;
	uint8_t buf[256], *dst = NULL;
	uint64_t base = (uint64_t)(uintptr_t)buf;
	uint32_t old;
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;

	mem_begin();
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	pd2 = iwarp_alloc_pd(ctx);
	mr = iwarp_reg_mr(pd, buf, sizeof(buf), rw);
	ro = iwarp_reg_mr(pd, buf, sizeof(buf), IWARP_ACCESS_REMOTE_READ);
	stale = iwarp_reg_mr(pd, buf, sizeof(buf), rw);
	old = stale->rkey;
	ck_assert_int_eq(iwarp_dereg_mr(stale), 0);

	/* success: dst points at the TO */
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd,
					 IWARP_ACCESS_REMOTE_WRITE, base + 10,
					 20, true, &dst),
			 0);
	ck_assert_ptr_eq(dst, buf + 10);
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd,
					 IWARP_ACCESS_REMOTE_READ, base,
					 sizeof(buf), false, NULL),
			 0);
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd, 0,
					 base + sizeof(buf), 0, false, NULL),
			 0);
	/* invalid STag: 0, the RTR's 1, stale, wrong key, unknown index */
	ck_assert_int_eq(mr_check_remote(ctx, 0, pd, 0, base, 1, false, NULL),
			 IWARP_ERR_RDMAP_STAG);
	ck_assert_int_eq(mr_check_remote(ctx, 1, pd, 0, base, 0, true, NULL),
			 IWARP_ERR_DDP_STAG);
	ck_assert_int_eq(mr_check_remote(ctx, old, pd, 0, base, 1, false, NULL),
			 IWARP_ERR_RDMAP_STAG);
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey ^ 0x01, pd, 0, base, 1,
					 true, NULL),
			 IWARP_ERR_DDP_STAG);
	ck_assert_int_eq(
		mr_check_remote(ctx, 0xffffff00u, pd, 0, base, 1, false, NULL),
		IWARP_ERR_RDMAP_STAG);
	/* another PD */
	ck_assert_int_eq(
		mr_check_remote(ctx, mr->rkey, pd2, 0, base, 1, false, NULL),
		IWARP_ERR_RDMAP_STAG_STREAM);
	ck_assert_int_eq(
		mr_check_remote(ctx, mr->rkey, pd2, 0, base, 1, true, NULL),
		IWARP_ERR_DDP_STAG_STREAM);
	/* access */
	ck_assert_int_eq(mr_check_remote(ctx, ro->rkey, pd,
					 IWARP_ACCESS_REMOTE_WRITE, base, 1,
					 true, NULL),
			 IWARP_ERR_RDMAP_ACCESS);
	ck_assert_int_eq(mr_check_remote(ctx, ro->rkey, pd,
					 IWARP_ACCESS_LOCAL_WRITE, base, 1,
					 false, NULL),
			 IWARP_ERR_RDMAP_ACCESS);
	/* Read sink rule: REMOTE_WRITE grants LOCAL_WRITE */
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd,
					 IWARP_ACCESS_LOCAL_WRITE, base, 1,
					 true, NULL),
			 0);
	/* bounds */
	ck_assert_int_eq(
		mr_check_remote(ctx, mr->rkey, pd, 0, base - 1, 2, false, NULL),
		IWARP_ERR_RDMAP_BOUNDS);
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd, 0, base + 200, 57,
					 true, NULL),
			 IWARP_ERR_DDP_BOUNDS);
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd, 0,
					 base + sizeof(buf) + 1, 0, false,
					 NULL),
			 IWARP_ERR_RDMAP_BOUNDS);
	/* TO wrap */
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd, 0, base + 4,
					 UINT64_MAX - 2, false, NULL),
			 IWARP_ERR_RDMAP_TO_WRAP);
	ck_assert_int_eq(mr_check_remote(ctx, mr->rkey, pd, 0, base + 4,
					 UINT64_MAX - 2, true, NULL),
			 IWARP_ERR_DDP_TO_WRAP);

	ck_assert_int_eq(iwarp_dereg_mr(mr), 0);
	ck_assert_int_eq(iwarp_dereg_mr(ro), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd2), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

/* Memory windows at the STag table (verbs/mr.c, verbs/mw.c): alloc,
 * bind rules, lookups through a window, remote and local invalidation,
 * dereg of a region with a window bound. */
START_TEST(test_mw_table)
{
	struct iwarp_context *ctx;
	struct iwarp_pd *pd, *pd2;
	struct iwarp_mr *mr, *nob, *ro;
	struct iwarp_mw *w1, *w2, *wx;
	struct mw_bind_req b;
	uint8_t buf[256];
	uint64_t base = (uint64_t)(uintptr_t)buf;
	uint32_t old;
	struct iwarp_sge sge;
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_MW_BIND;

	mem_begin();
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	pd2 = iwarp_alloc_pd(ctx);
	mr = iwarp_reg_mr(pd, buf, sizeof(buf), rw);
	nob = iwarp_reg_mr(pd, buf, sizeof(buf), IWARP_ACCESS_LOCAL_WRITE);
	ro = iwarp_reg_mr(pd, buf, sizeof(buf),
			  IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_MW_BIND);
	ck_assert_ptr_nonnull(mr);
	ck_assert_ptr_nonnull(ro);
	/* bad arguments */
	errno = 0;
	ck_assert_ptr_null(iwarp_alloc_mw(NULL, IWARP_MW_TYPE_1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(iwarp_alloc_mw(pd, (enum iwarp_mw_type)3));
	ck_assert_int_eq(iwarp_dealloc_mw(NULL), -EINVAL);
	w1 = iwarp_alloc_mw(pd, IWARP_MW_TYPE_1);
	w2 = iwarp_alloc_mw(pd, IWARP_MW_TYPE_2);
	wx = iwarp_alloc_mw(pd2, IWARP_MW_TYPE_2);
	ck_assert_ptr_nonnull(w1);
	ck_assert_ptr_nonnull(w2);
	ck_assert_ptr_nonnull(wx);
	ck_assert_int_eq(w2->type, IWARP_MW_TYPE_2);
	ck_assert_ptr_eq(w2->pd, pd);
	ck_assert_uint_eq(w2->handle, w2->rkey >> 8);
	ck_assert_uint_ne(w1->rkey >> 8, w2->rkey >> 8);
	/* unbound: no access, nothing to invalidate */
	ck_assert_int_eq(
		mr_check_remote(ctx, w2->rkey, pd, 0, base, 1, false, NULL),
		IWARP_ERR_RDMAP_STAG);
	ck_assert_int_eq(mr_invalidate(ctx, w2->rkey, pd),
			 IWARP_ERR_RDMAP_INVALIDATE_OP);
	ck_assert_int_eq(mr_local_invalidate(ctx, w2->rkey, pd), -EINVAL);

	memset(&b, 0, sizeof(b));
	b.mw_stag = w2->rkey;
	b.new_stag = iwarp_inc_rkey(w2->rkey);
	b.mr_lkey = mr->lkey;
	b.addr = base + 16;
	b.length = 64;
	b.access = IWARP_ACCESS_REMOTE_READ;
	/* the rules: bounds, MW_BIND, write needs local write, PD, index */
	b.length = 256;
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), -EFAULT);
	b.length = 64;
	b.mr_lkey = nob->lkey;
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), -EACCES);
	b.mr_lkey = ro->lkey;
	b.access = IWARP_ACCESS_REMOTE_WRITE;
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), -EACCES);
	b.mr_lkey = mr->lkey;
	b.access = IWARP_ACCESS_REMOTE_READ;
	ck_assert_int_eq(mr_mw_bind(ctx, pd2, &b), -EINVAL);
	b.new_stag = w1->rkey;
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), -EINVAL);
	b.new_stag = iwarp_inc_rkey(w2->rkey);
	b.mw_stag = wx->rkey; /* a window of another PD, our region */
	b.new_stag = iwarp_inc_rkey(wx->rkey);
	ck_assert_int_eq(mr_mw_bind(ctx, pd2, &b), -EINVAL);
	b.mw_stag = w2->rkey;
	b.new_stag = iwarp_inc_rkey(w2->rkey);
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), 0);
	w2->rkey = b.new_stag;
	/* a bound type 2 window does not bind again */
	b.mw_stag = w2->rkey;
	b.new_stag = iwarp_inc_rkey(w2->rkey);
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), -EBUSY);

	/* lookups through it: its own range and rights */
	ck_assert_int_eq(mr_check_remote(ctx, w2->rkey, pd,
					 IWARP_ACCESS_REMOTE_READ, base + 16,
					 64, false, NULL),
			 0);
	ck_assert_int_eq(mr_check_remote(ctx, w2->rkey, pd,
					 IWARP_ACCESS_REMOTE_READ, base + 15, 2,
					 false, NULL),
			 IWARP_ERR_RDMAP_BOUNDS);
	ck_assert_int_eq(mr_check_remote(ctx, w2->rkey, pd,
					 IWARP_ACCESS_REMOTE_WRITE, base + 16,
					 1, true, NULL),
			 IWARP_ERR_RDMAP_ACCESS);
	ck_assert_int_eq(mr_check_remote(ctx, w2->rkey, pd2, 0, base + 16, 1,
					 true, NULL),
			 IWARP_ERR_DDP_STAG_STREAM);
	/* a window is no lkey */
	sge.addr = base + 16;
	sge.length = 8;
	sge.lkey = w2->rkey;
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd, 0), -EINVAL);
	/* the region is held */
	ck_assert_int_eq(iwarp_dereg_mr(mr), -EBUSY);

	/* remote invalidation: never a region or a type 1 window */
	ck_assert_int_eq(mr_invalidate(ctx, mr->rkey, pd),
			 IWARP_ERR_RDMAP_INVALIDATE_OP);
	ck_assert_int_eq(
		mr_check_remote(ctx, mr->rkey, pd, 0, base, 1, false, NULL), 0);
	b.mw_stag = w1->rkey;
	b.new_stag = iwarp_inc_rkey(w1->rkey);
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), 0);
	old = w1->rkey;
	w1->rkey = b.new_stag;
	ck_assert_int_eq(mr_invalidate(ctx, w1->rkey, pd),
			 IWARP_ERR_RDMAP_INVALIDATE_OP);
	ck_assert_int_eq(mr_local_invalidate(ctx, w1->rkey, pd), -EINVAL);
	/* a type 1 rebind: the old key is dead, the new one works */
	b.mw_stag = w1->rkey;
	b.new_stag = iwarp_inc_rkey(w1->rkey);
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), 0);
	ck_assert_int_eq(mr_check_remote(ctx, w1->rkey, pd, 0, base + 16, 1,
					 false, NULL),
			 IWARP_ERR_RDMAP_STAG);
	ck_assert_int_eq(
		mr_check_remote(ctx, old, pd, 0, base + 16, 1, false, NULL),
		IWARP_ERR_RDMAP_STAG);
	w1->rkey = b.new_stag;
	ck_assert_int_eq(mr_check_remote(ctx, w1->rkey, pd, 0, base + 16, 1,
					 false, NULL),
			 0);
	/* zero-length bind unbinds a type 1 window */
	b.mw_stag = w1->rkey;
	b.new_stag = iwarp_inc_rkey(w1->rkey);
	b.length = 0;
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), 0);
	w1->rkey = b.new_stag;
	b.length = 64;
	ck_assert_int_eq(mr_check_remote(ctx, w1->rkey, pd, 0, base + 16, 1,
					 false, NULL),
			 IWARP_ERR_RDMAP_STAG);

	/* type 2: another PD's stream is refused with the protection
	 * variant; its own invalidates it, once */
	ck_assert_int_eq(mr_invalidate(ctx, w2->rkey, pd2),
			 IWARP_ERR_RDMAP_INVALIDATE);
	ck_assert_int_eq(mr_invalidate(ctx, w2->rkey, pd), 0);
	ck_assert_int_eq(mr_invalidate(ctx, w2->rkey, pd),
			 IWARP_ERR_RDMAP_INVALIDATE_OP);
	ck_assert_int_eq(mr_check_remote(ctx, w2->rkey, pd, 0, base + 16, 1,
					 false, NULL),
			 IWARP_ERR_RDMAP_STAG);
	/* invalidated: it binds again, but only under a new key */
	b.mw_stag = w2->rkey;
	b.new_stag = w2->rkey;
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), -EINVAL);
	b.new_stag = iwarp_inc_rkey(w2->rkey);
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), 0);
	w2->rkey = b.new_stag;
	/* local invalidation of the window, then of the region itself */
	ck_assert_int_eq(mr_local_invalidate(ctx, w2->rkey, pd2), -EPERM);
	ck_assert_int_eq(mr_local_invalidate(ctx, w2->rkey, pd), 0);
	ck_assert_int_eq(mr_local_invalidate(ctx, w2->rkey, pd), -EINVAL);
	ck_assert_int_eq(mr_local_invalidate(ctx, ro->rkey, pd), 0);
	ck_assert_int_eq(
		mr_check_remote(ctx, ro->rkey, pd, 0, base, 1, false, NULL),
		IWARP_ERR_RDMAP_STAG);
	/* a window bound to a region that is deallocated frees it */
	b.mw_stag = w2->rkey;
	b.new_stag = iwarp_inc_rkey(w2->rkey);
	ck_assert_int_eq(mr_mw_bind(ctx, pd, &b), 0);
	ck_assert_int_eq(iwarp_dereg_mr(mr), -EBUSY);
	ck_assert_int_eq(iwarp_close_context(ctx), -EBUSY);
	ck_assert_int_eq(iwarp_dealloc_mw(w2), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), -EBUSY);
	ck_assert_int_eq(iwarp_dealloc_mw(w1), 0);
	ck_assert_int_eq(iwarp_dealloc_mw(wx), 0);
	ck_assert_int_eq(iwarp_dereg_mr(mr), 0);
	ck_assert_int_eq(iwarp_dereg_mr(nob), 0);
	ck_assert_int_eq(iwarp_dereg_mr(ro), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd2), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_mr_check_local)
{
	struct iwarp_context *ctx;
	struct iwarp_pd *pd, *pd2;
	struct iwarp_mr *mr, *ro;
	struct iwarp_sge sge;
	uint8_t buf[128];
	uint64_t base = (uint64_t)(uintptr_t)buf;

	mem_begin();
	ctx = ctx_open_inline();
	pd = iwarp_alloc_pd(ctx);
	pd2 = iwarp_alloc_pd(ctx);
	mr = iwarp_reg_mr(pd, buf, sizeof(buf), IWARP_ACCESS_LOCAL_WRITE);
	ro = iwarp_reg_mr(pd, buf, sizeof(buf), 0);
	sge.addr = base + 8;
	sge.length = 16;
	sge.lkey = mr->lkey;
	ck_assert_int_eq(
		mr_check_local(ctx, &sge, pd, IWARP_ACCESS_LOCAL_WRITE), 0);
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd2, 0), -EPERM);
	sge.lkey = mr->lkey + 1;
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd, 0), -EINVAL);
	sge.length = 0; /* zero length: always valid */
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd, 0), 0);
	sge.lkey = mr->lkey;
	sge.length = 121;
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd, 0), -EFAULT);
	sge.addr = base - 1;
	sge.length = 1;
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd, 0), -EFAULT);
	sge.addr = UINT64_MAX - 1;
	sge.length = 4;
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd, 0), -EFAULT);
	sge.addr = base;
	sge.length = 128;
	sge.lkey = ro->lkey;
	ck_assert_int_eq(mr_check_local(ctx, &sge, pd, 0), 0);
	ck_assert_int_eq(
		mr_check_local(ctx, &sge, pd, IWARP_ACCESS_LOCAL_WRITE),
		-EACCES);
	ck_assert_int_eq(iwarp_dereg_mr(mr), 0);
	ck_assert_int_eq(iwarp_dereg_mr(ro), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(pd2), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

/* ================= CQ and channel ================= */

static struct iwarp_wc wc_make(uint64_t id)
{
	struct iwarp_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = id;
	wc.opcode = IWARP_WC_RECV;
	return wc;
}

START_TEST(test_cq_basic)
{
	struct iwarp_context *ctx, *ctx2;
	struct iwarp_comp_channel *ch2;
	struct iwarp_async_event ev;
	struct iwarp_wc wc[8], w;
	struct iwarp_cq *cq;
	int i, n;

	mem_begin();
	ctx = ctx_open_inline();
	ctx2 = ctx_open_inline();
	ch2 = iwarp_create_comp_channel(ctx2);
	errno = 0;
	ck_assert_ptr_null(iwarp_create_cq(NULL, 4, NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(iwarp_create_cq(ctx, 0, NULL, NULL, 0));
	ck_assert_ptr_null(iwarp_create_cq(ctx, IW_MAX_CQE + 1, NULL, NULL, 0));
	ck_assert_ptr_null(iwarp_create_cq(ctx, 4, NULL, ch2, 0));
	ck_assert_int_eq(errno, EINVAL);
	cq = iwarp_create_cq(ctx, 4, (void *)0x1234, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_eq(cq->cqe, 4);
	ck_assert_ptr_eq(cq->cq_context, (void *)0x1234);
	ck_assert_int_eq(iwarp_poll_cq(cq, 8, wc), 0);
	ck_assert_int_eq(iwarp_poll_cq(NULL, 1, wc), -EINVAL);
	ck_assert_int_eq(iwarp_poll_cq(cq, -1, wc), -EINVAL);
	ck_assert_int_eq(iwarp_poll_cq(cq, 1, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_poll_cq(cq, 0, NULL), 0);
	/* fill, wrap around, order kept */
	for (i = 0; i < 3; i++) {
		w = wc_make((uint64_t)i);
		ck_assert_int_eq(cq_push(cq_from_pub(cq), &w, false), 0);
	}
	ck_assert_int_eq(iwarp_poll_cq(cq, 2, wc), 2);
	ck_assert_uint_eq(wc[0].wr_id, 0);
	ck_assert_uint_eq(wc[1].wr_id, 1);
	for (i = 3; i < 6; i++) {
		w = wc_make((uint64_t)i);
		ck_assert_int_eq(cq_push(cq_from_pub(cq), &w, false), 0);
	}
	/* overflow: CQ_ERR once, further pushes dropped */
	w = wc_make(99);
	ck_assert_int_eq(cq_push(cq_from_pub(cq), &w, false), -ENOSPC);
	ck_assert_int_eq(cq_push(cq_from_pub(cq), &w, false), -ENOSPC);
	ck_assert(fd_readable(iwarp_async_fd(ctx)));
	ck_assert_int_eq(iwarp_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_CQ_ERR);
	ck_assert_ptr_eq(ev.element.cq, cq);
	iwarp_ack_async_event(&ev);
	ck_assert(!fd_readable(iwarp_async_fd(ctx)));
	n = iwarp_poll_cq(cq, 8, wc);
	ck_assert_int_eq(n, 4);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)i + 2);
	ck_assert_int_eq(iwarp_destroy_cq(NULL), -EINVAL);
	ck_assert_int_eq(iwarp_destroy_cq(cq), 0);
	ck_assert_int_eq(iwarp_destroy_comp_channel(ch2), 0);
	ck_assert_int_eq(iwarp_close_context(ctx2), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_cq_resize)
{
	struct iwarp_context *ctx;
	struct iwarp_wc wc[16], w;
	struct iwarp_cq *cq;
	int i;

	mem_begin();
	ctx = ctx_open_inline();
	cq = iwarp_create_cq(ctx, 4, NULL, NULL, 0);
	/* put the ring's head in the middle so the copy must unwrap */
	for (i = 0; i < 3; i++) {
		w = wc_make(100);
		cq_push(cq_from_pub(cq), &w, false);
	}
	ck_assert_int_eq(iwarp_poll_cq(cq, 3, wc), 3);
	for (i = 0; i < 4; i++) {
		w = wc_make((uint64_t)i);
		ck_assert_int_eq(cq_push(cq_from_pub(cq), &w, false), 0);
	}
	ck_assert_int_eq(iwarp_resize_cq(cq, 3), -EINVAL); /* 4 pending */
	ck_assert_int_eq(iwarp_resize_cq(cq, 0), -EINVAL);
	ck_assert_int_eq(iwarp_resize_cq(NULL, 8), -EINVAL);
	ck_assert_int_eq(iwarp_resize_cq(cq, 8), 0);
	ck_assert_int_eq(cq->cqe, 8);
	for (i = 4; i < 8; i++) {
		w = wc_make((uint64_t)i);
		ck_assert_int_eq(cq_push(cq_from_pub(cq), &w, false), 0);
	}
	ck_assert_int_eq(iwarp_poll_cq(cq, 16, wc), 8);
	for (i = 0; i < 8; i++)
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)i);
	ck_assert_int_eq(iwarp_resize_cq(cq, 4), 0); /* shrink when empty */
	ck_assert_int_eq(iwarp_destroy_cq(cq), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_channel_notify)
{
	struct iwarp_comp_channel *ch;
	struct iwarp_context *ctx;
	struct iwarp_cq *cq, *got, *cq2;
	struct iwarp_wc w, wc[4];
	void *cctx;

	mem_begin();
	ctx = ctx_open_inline();
	errno = 0;
	ck_assert_ptr_null(iwarp_create_comp_channel(NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(iwarp_destroy_comp_channel(NULL), -EINVAL);
	ch = iwarp_create_comp_channel(ctx);
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_ge(ch->fd, 0);
	cq = iwarp_create_cq(ctx, 16, (void *)0x77, ch, 0);
	cq2 = iwarp_create_cq(ctx, 16, (void *)0x88, ch, 0);
	ck_assert_int_eq(ch->refcnt, 2);
	set_nonblock(ch->fd);
	ck_assert_int_eq(iwarp_get_cq_event(ch, &got, &cctx), -EAGAIN);
	ck_assert_int_eq(iwarp_get_cq_event(NULL, &got, &cctx), -EINVAL);
	ck_assert_int_eq(iwarp_get_cq_event(ch, NULL, &cctx), -EINVAL);
	ck_assert_int_eq(iwarp_req_notify_cq(NULL, 0), -EINVAL);

	/* not armed: no event */
	w = wc_make(1);
	cq_push(cq_from_pub(cq), &w, false);
	ck_assert(!fd_readable(ch->fd));
	/* armed: next completion fires once */
	ck_assert_int_eq(iwarp_req_notify_cq(cq, 0), 0);
	cq_push(cq_from_pub(cq), &w, false);
	ck_assert(fd_readable(ch->fd));
	cq_push(cq_from_pub(cq), &w, false); /* disarmed: no second event */
	ck_assert_int_eq(iwarp_get_cq_event(ch, &got, &cctx), 0);
	ck_assert_ptr_eq(got, cq);
	ck_assert_ptr_eq(cctx, (void *)0x77);
	ck_assert(!fd_readable(ch->fd));
	ck_assert_int_eq(iwarp_get_cq_event(ch, &got, &cctx), -EAGAIN);
	/* unacked event: destroy refused */
	ck_assert_int_eq(iwarp_destroy_cq(cq), -EBUSY);
	iwarp_ack_cq_events(cq, 1);
	iwarp_ack_cq_events(NULL, 1);

	/* solicited only: a plain completion does not fire, a solicited one
	 * does */
	ck_assert_int_eq(iwarp_req_notify_cq(cq2, 1), 0);
	cq_push(cq_from_pub(cq2), &w, false);
	ck_assert(!fd_readable(ch->fd));
	cq_push(cq_from_pub(cq2), &w, true);
	ck_assert(fd_readable(ch->fd));
	/* two CQs pending: FIFO order; fd readable until both are fetched */
	ck_assert_int_eq(iwarp_req_notify_cq(cq, 1), 0);
	ck_assert_int_eq(iwarp_req_notify_cq(cq, 0), 0); /* widens */
	cq_push(cq_from_pub(cq), &w, false);
	ck_assert_int_eq(iwarp_get_cq_event(ch, &got, &cctx), 0);
	ck_assert_ptr_eq(got, cq2);
	ck_assert(fd_readable(ch->fd));
	ck_assert_int_eq(iwarp_get_cq_event(ch, &got, &cctx), 0);
	ck_assert_ptr_eq(got, cq);
	ck_assert(!fd_readable(ch->fd));
	iwarp_ack_cq_events(cq, 1);
	iwarp_ack_cq_events(cq2, 1);
	/* coalescing: re-armed before fetch -> one event */
	ck_assert_int_eq(iwarp_req_notify_cq(cq, 0), 0);
	cq_push(cq_from_pub(cq), &w, false);
	ck_assert_int_eq(iwarp_req_notify_cq(cq, 0), 0);
	cq_push(cq_from_pub(cq), &w, false);
	ck_assert_int_eq(iwarp_get_cq_event(ch, &got, &cctx), 0);
	ck_assert_int_eq(iwarp_get_cq_event(ch, &got, &cctx), -EAGAIN);
	iwarp_ack_cq_events(cq, 1);
	/* a pending (unfetched) event is dropped by destroy */
	ck_assert_int_eq(iwarp_req_notify_cq(cq2, 0), 0);
	cq_push(cq_from_pub(cq2), &w, false);
	ck_assert(fd_readable(ch->fd));
	ck_assert_int_eq(iwarp_destroy_cq(cq2), 0);
	ck_assert(!fd_readable(ch->fd));
	while (iwarp_poll_cq(cq, 4, wc) > 0)
		;
	ck_assert_int_eq(iwarp_destroy_cq(cq), 0);
	ck_assert_int_eq(ch->refcnt, 0);
	ck_assert_int_eq(iwarp_destroy_comp_channel(ch), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

struct waiter {
	struct iwarp_comp_channel *ch;
	struct iwarp_cq *got;
	int rc;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	void *cctx;

	w->rc = iwarp_get_cq_event(w->ch, &w->got, &cctx);
	return NULL;
}

START_TEST(test_channel_blocking)
{
	struct iwarp_comp_channel *ch;
	struct iwarp_context *ctx;
	struct waiter wt;
	struct iwarp_cq *cq;
	struct iwarp_wc w;
	pthread_t th;

	mem_begin();
	ctx = ctx_open_inline();
	ch = iwarp_create_comp_channel(ctx);
	cq = iwarp_create_cq(ctx, 4, NULL, ch, 0);
	wt.ch = ch;
	wt.got = NULL;
	wt.rc = 1;
	ck_assert_int_eq(pthread_create(&th, NULL, waiter_main, &wt), 0);
	/* the waiter blocks (fd is blocking) until this completion arrives */
	ck_assert_int_eq(iwarp_req_notify_cq(cq, 0), 0);
	w = wc_make(5);
	cq_push(cq_from_pub(cq), &w, false);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(wt.rc, 0);
	ck_assert_ptr_eq(wt.got, cq);
	iwarp_ack_cq_events(cq, 1);
	ck_assert_int_eq(iwarp_destroy_cq(cq), 0);
	ck_assert_int_eq(iwarp_destroy_comp_channel(ch), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

/*
 * Several threads fire one channel while one thread takes its events: the
 * fd's counter is changed outside the channel's lock (comp_channel.c), so
 * raises and take-backs land in any order. With one consumer, a readable
 * fd must always yield an event (a take-back that zeroed the counter, or
 * one applied before its raise, would lose a wake-up or leave the fd
 * readable with nothing to take), and every fire must arrive. Producer p
 * fires its own CQ, then waits for that event to be taken before arming
 * again, so each fire is one event.
 */
#define CHAN_PRODUCERS 4
#define CHAN_ROUNDS    3000

struct chan_run {
	struct iwarp_comp_channel *ch;
	struct iwarp_cq *cq[CHAN_PRODUCERS];
	unsigned int taken[CHAN_PRODUCERS]; /* atomic */
	int failed;			    /* atomic */
};

struct chan_producer {
	struct chan_run *run;
	int idx;
};

static void *chan_producer_main(void *arg)
{
	struct chan_producer *p = arg;
	struct iwarp_cq *cq = p->run->cq[p->idx];
	struct iwarp_wc w = wc_make(1), wc[4];
	unsigned int k;

	for (k = 1; k <= CHAN_ROUNDS; k++) {
		if (iwarp_req_notify_cq(cq, 0) ||
		    cq_push(cq_from_pub(cq), &w, false)) {
			__atomic_store_n(&p->run->failed, 1, __ATOMIC_RELEASE);
			return NULL;
		}
		while (iwarp_poll_cq(cq, 4, wc) > 0)
			;
		/* a lost event fails here */
		if (!iw_test_wait_count(&p->run->taken[p->idx], k, 20)) {
			__atomic_store_n(&p->run->failed, 2, __ATOMIC_RELEASE);
			return NULL;
		}
	}
	return NULL;
}

static void chan_concurrent(bool nonblocking)
{
	struct chan_producer prod[CHAN_PRODUCERS];
	pthread_t th[CHAN_PRODUCERS];
	struct iwarp_context *ctx;
	struct chan_run run;
	struct iwarp_cq *got;
	struct pollfd pfd;
	unsigned int total;
	void *cctx;
	int i, rc;

	mem_begin();
	memset(&run, 0, sizeof(run));
	ctx = ctx_open_inline();
	run.ch = iwarp_create_comp_channel(ctx);
	ck_assert_ptr_nonnull(run.ch);
	if (nonblocking)
		set_nonblock(run.ch->fd);
	for (i = 0; i < CHAN_PRODUCERS; i++) {
		run.cq[i] = iwarp_create_cq(ctx, 16, (void *)(intptr_t)i,
					    run.ch, 0);
		ck_assert_ptr_nonnull(run.cq[i]);
	}
	for (i = 0; i < CHAN_PRODUCERS; i++) {
		prod[i].run = &run;
		prod[i].idx = i;
		ck_assert_int_eq(pthread_create(&th[i], NULL,
						chan_producer_main, &prod[i]),
				 0);
	}
	for (total = 0; total < CHAN_PRODUCERS * CHAN_ROUNDS;) {
		ck_assert_int_eq(__atomic_load_n(&run.failed, __ATOMIC_ACQUIRE),
				 0);
		if (nonblocking) {
			pfd.fd = run.ch->fd;
			pfd.events = POLLIN;
			pfd.revents = 0;
			/* bounded: a lost wake-up fails here, not by hanging */
			ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
		}
		rc = iwarp_get_cq_event(run.ch, &got, &cctx);
		ck_assert_int_eq(rc, 0); /* readable: an event is there */
		i = (int)(intptr_t)cctx;
		ck_assert_ptr_eq(got, run.cq[i]);
		iwarp_ack_cq_events(got, 1);
		__atomic_add_fetch(&run.taken[i], 1, __ATOMIC_RELEASE);
		total++;
	}
	for (i = 0; i < CHAN_PRODUCERS; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	ck_assert_int_eq(run.failed, 0);
	/* every raise taken back: nothing readable, nothing pending */
	ck_assert(!fd_readable(run.ch->fd));
	if (nonblocking)
		ck_assert_int_eq(iwarp_get_cq_event(run.ch, &got, &cctx),
				 -EAGAIN);
	for (i = 0; i < CHAN_PRODUCERS; i++)
		ck_assert_int_eq(iwarp_destroy_cq(run.cq[i]), 0);
	ck_assert_int_eq(iwarp_destroy_comp_channel(run.ch), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}

START_TEST(test_channel_concurrent_nonblocking)
{
	chan_concurrent(true);
}
END_TEST

START_TEST(test_channel_concurrent_blocking)
{
	/* a blocking wait that a readable fd ends must find its event: the
	 * fd would otherwise stay readable and the wait spin or block */
	chan_concurrent(false);
}
END_TEST

/* ================= async events ================= */

START_TEST(test_async_queue)
{
	struct iwarp_async_event ev, got;
	struct iwarp_context *ctx;
	int fd;

	mem_begin();
	ctx = ctx_open_inline();
	fd = iwarp_async_fd(ctx);
	ck_assert_int_ge(fd, 0);
	ck_assert(!fd_readable(fd));
	set_nonblock(fd);
	ck_assert_int_eq(iwarp_get_async_event(ctx, &got), -EAGAIN);
	ck_assert_int_eq(iwarp_get_async_event(NULL, &got), -EINVAL);
	ck_assert_int_eq(iwarp_get_async_event(ctx, NULL), -EINVAL);
	memset(&ev, 0, sizeof(ev));
	ev.event_type = IWARP_EVENT_COMM_EST;
	ev.element.qp = (struct iwarp_qp *)(void *)&ev;
	ctx_async_push(ctx, &ev);
	ev.event_type = IWARP_EVENT_SQ_DRAINED;
	ev.element.qp = (struct iwarp_qp *)(void *)&got;
	ctx_async_push(ctx, &ev);
	ev.event_type = IWARP_EVENT_SRQ_ERR;
	ctx_async_push(ctx, &ev);
	ck_assert(fd_readable(fd));
	/* purge drops the events of one element, keeps the rest in order */
	ctx_async_purge(ctx, &got);
	ck_assert(fd_readable(fd));
	ck_assert_int_eq(iwarp_get_async_event(ctx, &got), 0);
	ck_assert_int_eq(got.event_type, IWARP_EVENT_COMM_EST);
	ck_assert(!fd_readable(fd));
	ck_assert_int_eq(iwarp_get_async_event(ctx, &got), -EAGAIN);
	iwarp_ack_async_event(&got);
	iwarp_ack_async_event(NULL);
	/* events left at close are freed */
	ctx_async_push(ctx, &ev);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_strings)
{
	static const enum iwarp_wc_status st[] = {
		IWARP_WC_SUCCESS,	 IWARP_WC_LOC_LEN_ERR,
		IWARP_WC_LOC_QP_OP_ERR,	 IWARP_WC_LOC_PROT_ERR,
		IWARP_WC_WR_FLUSH_ERR,	 IWARP_WC_BAD_RESP_ERR,
		IWARP_WC_LOC_ACCESS_ERR, IWARP_WC_REM_INV_REQ_ERR,
		IWARP_WC_REM_ACCESS_ERR, IWARP_WC_REM_OP_ERR,
		IWARP_WC_RETRY_EXC_ERR,	 IWARP_WC_RNR_RETRY_EXC_ERR,
		IWARP_WC_FATAL_ERR,	 IWARP_WC_GENERAL_ERR,
	};
	static const enum iwarp_event_type et[] = {
		IWARP_EVENT_CQ_ERR,
		IWARP_EVENT_QP_FATAL,
		IWARP_EVENT_QP_REQ_ERR,
		IWARP_EVENT_QP_ACCESS_ERR,
		IWARP_EVENT_COMM_EST,
		IWARP_EVENT_SQ_DRAINED,
		IWARP_EVENT_QP_LAST_WQE_REACHED,
		IWARP_EVENT_SRQ_LIMIT_REACHED,
		IWARP_EVENT_SRQ_ERR,
	};
	size_t i, j;

	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		ck_assert_str_ne(iwarp_wc_status_str(st[i]), "unknown");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(iwarp_wc_status_str(st[i]),
					 iwarp_wc_status_str(st[j]));
	}
	ck_assert_str_eq(iwarp_wc_status_str(IWARP_WC_WR_FLUSH_ERR),
			 "Work Request Flushed Error");
	ck_assert_str_eq(iwarp_wc_status_str((enum iwarp_wc_status)3),
			 "unknown");
	for (i = 0; i < sizeof(et) / sizeof(et[0]); i++) {
		ck_assert_str_ne(iwarp_event_type_str(et[i]), "unknown");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(iwarp_event_type_str(et[i]),
					 iwarp_event_type_str(et[j]));
	}
	ck_assert_str_eq(iwarp_event_type_str((enum iwarp_event_type)99),
			 "unknown");
}
END_TEST

/* ================= QP ================= */

START_TEST(test_qp_create)
{
	struct iwarp_context *ctx2;
	struct iwarp_qp_init_attr ia, bad;
	struct iwarp_srq_init_attr sa;
	struct iwarp_qp *qp, *qp2;
	struct iwarp_srq *srq;
	struct iwarp_cq *cq2;
	struct fx f;
	int i;

	mem_begin();
	fx_open(&f, 8, 8, 0);
	ctx2 = ctx_open_inline();
	cq2 = iwarp_create_cq(ctx2, 4, NULL, NULL, 0);
	fx_qp_attr(&f, &ia, 4, 4, 1);
	ia.cap.max_inline_data = 16;
	for (i = 0; i < 11; i++) {
		bad = ia;
		switch (i) {
		case 0:
			bad.qp_type = (enum iwarp_qp_type)3;
			break;
		case 1:
			bad.send_cq = NULL;
			break;
		case 2:
			bad.recv_cq = NULL;
			break;
		case 3:
			bad.cap.max_send_wr = IW_MAX_QP_WR + 1;
			break;
		case 4:
			bad.cap.max_recv_wr = IW_MAX_QP_WR + 1;
			break;
		case 5:
			bad.cap.max_send_sge = IW_MAX_SGE + 1;
			break;
		case 6:
			bad.cap.max_recv_sge = IW_MAX_SGE + 1;
			break;
		case 7:
			bad.cap.max_inline_data = IW_MAX_INLINE + 1;
			break;
		case 8:
			bad.send_cq = cq2;
			break;
		case 9:
			bad.recv_cq = cq2;
			break;
		default:
			break;
		}
		errno = 0;
		if (i == 10)
			ck_assert_ptr_null(iwarp_create_qp(NULL, &bad));
		else
			ck_assert_ptr_null(iwarp_create_qp(f.pd, &bad));
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_ptr_null(iwarp_create_qp(f.pd, NULL));
	qp = iwarp_create_qp(f.pd, &ia);
	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_eq(ia.cap.max_inline_data, IW_MAX_INLINE);
	ck_assert_uint_eq(ia.cap.max_send_wr, 4);
	ck_assert_int_eq(qp->state, IWARP_QPS_RESET);
	ck_assert_int_eq(qp->qp_type, IWARP_QPT_RC);
	ck_assert_uint_ne(qp->qp_num, f.qp->qp_num);
	ck_assert_ptr_eq(qp->pd, f.pd);
	ck_assert_int_eq(iwarp_destroy_cq(f.scq), -EBUSY);

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 2;
	srq = iwarp_create_srq(f.pd, &sa);
	ia.srq = srq;
	qp2 = iwarp_create_qp(f.pd, &ia);
	ck_assert_ptr_nonnull(qp2);
	ck_assert_uint_eq(ia.cap.max_recv_wr, 0); /* no RQ with an SRQ */
	ck_assert_uint_eq(ia.cap.max_recv_sge, 0);
	ck_assert_int_eq(iwarp_destroy_srq(srq), -EBUSY);
	ck_assert_int_eq(iwarp_destroy_qp(qp2), 0);
	ck_assert_int_eq(iwarp_destroy_srq(srq), 0);
	ck_assert_int_eq(iwarp_destroy_qp(qp), 0);
	ck_assert_int_eq(iwarp_destroy_qp(NULL), -EINVAL);
	ck_assert_int_eq(iwarp_destroy_cq(cq2), 0);
	ck_assert_int_eq(iwarp_close_context(ctx2), 0);
	fx_close(&f);
	mem_end();
}
END_TEST

/* Drives a fresh QP into |s| (RESET, INIT, RTR, RTS, SQD, ERR). */
static void qp_reach(struct iwarp_qp *qp, enum iwarp_qp_state s)
{
	static const enum iwarp_qp_state path[] = {
		IWARP_QPS_INIT, IWARP_QPS_RTR, IWARP_QPS_RTS, IWARP_QPS_SQD};
	size_t i;

	if (s == IWARP_QPS_ERR) {
		ck_assert_int_eq(qp_to(qp, IWARP_QPS_ERR), 0);
		return;
	}
	for (i = 0; i < 4 && s != IWARP_QPS_RESET; i++) {
		ck_assert_int_eq(qp_to(qp, path[i]), 0);
		if (path[i] == s)
			break;
	}
	ck_assert_int_eq(qp->state, s);
}

START_TEST(test_qp_state_table)
{
	/* ibverbs qp_state_table: allowed[cur][next] */
	static const bool allowed[7][7] = {
		[IWARP_QPS_RESET] = {[IWARP_QPS_RESET] = 1,
				     [IWARP_QPS_INIT] = 1,
				     [IWARP_QPS_ERR] = 1},
		[IWARP_QPS_INIT] = {[IWARP_QPS_RESET] = 1,
				    [IWARP_QPS_INIT] = 1,
				    [IWARP_QPS_RTR] = 1,
				    [IWARP_QPS_ERR] = 1},
		[IWARP_QPS_RTR] = {[IWARP_QPS_RESET] = 1,
				   [IWARP_QPS_RTS] = 1,
				   [IWARP_QPS_ERR] = 1},
		[IWARP_QPS_RTS] = {[IWARP_QPS_RESET] = 1,
				   [IWARP_QPS_RTS] = 1,
				   [IWARP_QPS_SQD] = 1,
				   [IWARP_QPS_ERR] = 1},
		[IWARP_QPS_SQD] = {[IWARP_QPS_RESET] = 1,
				   [IWARP_QPS_RTS] = 1,
				   [IWARP_QPS_SQD] = 1,
				   [IWARP_QPS_ERR] = 1},
		[IWARP_QPS_ERR] = {[IWARP_QPS_RESET] = 1, [IWARP_QPS_ERR] = 1},
	};
	static const enum iwarp_qp_state st[] = {
		IWARP_QPS_RESET, IWARP_QPS_INIT, IWARP_QPS_RTR, IWARP_QPS_RTS,
		IWARP_QPS_SQD,	 IWARP_QPS_SQE,	 IWARP_QPS_ERR};
	struct fx f;
	size_t c, n;
	int rc;

	mem_begin();
	fx_open(&f, 4, 4, 0);
	for (c = 0; c < 7; c++) {
		if (st[c] == IWARP_QPS_SQE)
			continue; /* not reachable by modify_qp */
		for (n = 0; n < 7; n++) {
			ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_RESET), 0);
			qp_reach(f.qp, st[c]);
			rc = qp_to(f.qp, st[n]);
			if (allowed[st[c]][st[n]]) {
				ck_assert_msg(rc == 0, "%zu -> %zu: %d", c, n,
					      rc);
				ck_assert_int_eq(f.qp->state, st[n]);
			} else {
				ck_assert_msg(rc == -EINVAL, "%zu -> %zu: %d",
					      c, n, rc);
				ck_assert_int_eq(f.qp->state, st[c]);
			}
		}
	}
	rc = qp_to(f.qp, (enum iwarp_qp_state)9);
	ck_assert_int_eq(rc, -EINVAL);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_qp_modify_attrs)
{
	struct iwarp_qp_init_attr ia;
	struct iwarp_qp_attr a, q;
	struct fx f;

	mem_begin();
	fx_open(&f, 4, 4, 1);
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(iwarp_modify_qp(NULL, &a, IWARP_QP_STATE), -EINVAL);
	ck_assert_int_eq(iwarp_modify_qp(f.qp, NULL, IWARP_QP_STATE), -EINVAL);
	a.qp_state = IWARP_QPS_INIT;
	ck_assert_int_eq(iwarp_modify_qp(f.qp, &a, IWARP_QP_STATE | (1 << 5)),
			 -EINVAL);
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a, IWARP_QP_STATE | IWARP_QP_CAP),
		-EINVAL);
	a.cur_qp_state = IWARP_QPS_RTS;
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a, IWARP_QP_STATE | IWARP_QP_CUR_STATE),
		-EINVAL);
	a.qp_access_flags = 16; /* no such right */
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a,
				IWARP_QP_STATE | IWARP_QP_ACCESS_FLAGS),
		-EINVAL);
	a.qp_access_flags =
		IWARP_ACCESS_REMOTE_WRITE | IWARP_ACCESS_LOCAL_WRITE;
	a.cur_qp_state = IWARP_QPS_RESET;
	ck_assert_int_eq(iwarp_modify_qp(f.qp, &a,
					 IWARP_QP_STATE | IWARP_QP_CUR_STATE |
						 IWARP_QP_ACCESS_FLAGS),
			 0);
	ck_assert_int_eq(f.qp->state, IWARP_QPS_INIT);
	a.qp_state = IWARP_QPS_RTR;
	a.max_dest_rd_atomic = 129;
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a,
				IWARP_QP_STATE | IWARP_QP_MAX_DEST_RD_ATOMIC),
		-EINVAL);
	a.max_dest_rd_atomic = 16;
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a,
				IWARP_QP_STATE | IWARP_QP_MAX_DEST_RD_ATOMIC),
		0);
	a.qp_state = IWARP_QPS_RTS;
	a.max_rd_atomic = 200;
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a,
				IWARP_QP_STATE | IWARP_QP_MAX_QP_RD_ATOMIC),
		-EINVAL);
	a.max_rd_atomic = 8;
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a,
				IWARP_QP_STATE | IWARP_QP_MAX_QP_RD_ATOMIC),
		0);
	/* attribute change without a state change (RTS -> RTS) */
	a.max_rd_atomic = 4;
	ck_assert_int_eq(iwarp_modify_qp(f.qp, &a, IWARP_QP_MAX_QP_RD_ATOMIC),
			 0);
	/* no attributes on a move to ERR */
	a.qp_state = IWARP_QPS_ERR;
	ck_assert_int_eq(
		iwarp_modify_qp(f.qp, &a,
				IWARP_QP_STATE | IWARP_QP_MAX_QP_RD_ATOMIC),
		-EINVAL);
	ck_assert_int_eq(iwarp_query_qp(NULL, &q, 0, &ia), -EINVAL);
	ck_assert_int_eq(iwarp_query_qp(f.qp, NULL, 0, &ia), -EINVAL);
	ck_assert_int_eq(iwarp_query_qp(f.qp, &q, 0, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_query_qp(f.qp, &q, IWARP_QP_STATE, &ia), 0);
	ck_assert_int_eq(q.qp_state, IWARP_QPS_RTS);
	ck_assert_int_eq(q.cur_qp_state, IWARP_QPS_RTS);
	ck_assert_uint_eq(q.max_rd_atomic, 4);
	ck_assert_uint_eq(q.max_dest_rd_atomic, 16);
	ck_assert_int_eq(q.qp_access_flags,
			 IWARP_ACCESS_REMOTE_WRITE | IWARP_ACCESS_LOCAL_WRITE);
	ck_assert_uint_eq(q.cap.max_send_wr, 4);
	ck_assert_uint_eq(q.cap.max_inline_data, IW_MAX_INLINE);
	ck_assert_ptr_eq(ia.send_cq, f.scq);
	ck_assert_ptr_eq(ia.recv_cq, f.rcq);
	ck_assert_int_eq(ia.sq_sig_all, 1);
	ck_assert_int_eq(ia.qp_type, IWARP_QPT_RC);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_post_send_errors)
{
	struct iwarp_send_wr wr, wr2, wr3, *bad;
	struct iwarp_sge sge[3];
	static const enum iwarp_qp_state early[] = {
		IWARP_QPS_RESET, IWARP_QPS_INIT, IWARP_QPS_RTR};
	uint8_t big[IW_MAX_INLINE + 1];
	struct fx f;
	size_t i;

	mem_begin();
	fx_open(&f, 2, 2, 0);
	for (i = 0; i < 3; i++) {
		sge[i].addr = (uint64_t)(uintptr_t)f.buf;
		sge[i].length = 8;
		sge[i].lkey = f.mr->lkey;
	}
	send_wr_init(&wr, sge, 1, IWARP_WR_SEND, 0);
	ck_assert_int_eq(iwarp_post_send(NULL, &wr, &bad), -EINVAL);
	ck_assert_int_eq(iwarp_post_send(f.qp, NULL, &bad), -EINVAL);
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, NULL), -EINVAL);
	for (i = 0; i < 3; i++) {
		if (i)
			ck_assert_int_eq(qp_to(f.qp, early[i]), 0);
		bad = NULL;
		ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
		ck_assert_ptr_eq(bad, &wr);
	}
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_RTS), 0);
	/* RFC 7306 opcodes without the extensions negotiated (this QP has
	 * no connection): EOPNOTSUPP; unknown opcodes (LOCAL_INV, BIND_MW,
	 * TSO, ...): EINVAL */
	for (i = 0; i < 16; i++) {
		if (i == IWARP_WR_RDMA_WRITE || i == IWARP_WR_SEND ||
		    i == IWARP_WR_RDMA_READ || i == IWARP_WR_SEND_WITH_INV ||
		    i == IWARP_WR_LOCAL_INV) /* any rkey posts; runs later */
			continue;
		send_wr_init(&wr, sge, 1, (enum iwarp_wr_opcode)i, 0);
		if (i == IWARP_WR_SEND_WITH_IMM)
			wr.num_sge = 0;
		if (i == IWARP_WR_RDMA_WRITE_WITH_IMM ||
		    i == IWARP_WR_SEND_WITH_IMM ||
		    i == IWARP_WR_ATOMIC_CMP_AND_SWP ||
		    i == IWARP_WR_ATOMIC_FETCH_AND_ADD ||
		    i == IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP ||
		    i == IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD)
			ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad),
					 -EOPNOTSUPP);
		else
			ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad),
					 -EINVAL);
	}
	send_wr_init(&wr, sge, 1, IWARP_WR_SEND, 1u << 4);
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	send_wr_init(&wr, sge, 1, IWARP_WR_SEND, 0);
	wr.num_sge = 3; /* cap 2 */
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	wr.num_sge = -1;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	wr.num_sge = 1;
	wr.sg_list = NULL;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	/* RDMA Read: exactly one SGE, never inline */
	send_wr_init(&wr, sge, 1, IWARP_WR_RDMA_READ, 0);
	wr.num_sge = 2;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	wr.num_sge = 0;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	wr.num_sge = 1;
	wr.send_flags = IWARP_SEND_INLINE;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	/* inline longer than max_inline_data */
	sge[0].addr = (uint64_t)(uintptr_t)big;
	sge[0].length = sizeof(big);
	send_wr_init(&wr, sge, 1, IWARP_WR_SEND, IWARP_SEND_INLINE);
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	sge[0].length = IW_MAX_INLINE;
	memset(big, 0x5a, sizeof(big));
	/* chain: two fit (SQ of 2), the third is -ENOMEM */
	send_wr_init(&wr2, sge, 1, IWARP_WR_RDMA_WRITE, 0);
	send_wr_init(&wr3, sge, 1, IWARP_WR_SEND, 0);
	wr.next = &wr2;
	wr2.next = &wr3;
	bad = NULL;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -ENOMEM);
	ck_assert_ptr_eq(bad, &wr3);
	ck_assert_uint_eq(qp_from_pub(f.qp)->sq_head, 2);
	/* an invalid WR in the middle of a chain stops there */
	qp_sq_complete(qp_from_pub(f.qp), 2, IWARP_WC_SUCCESS);
	wr2.opcode = (enum iwarp_wr_opcode)10; /* ibverbs TSO: unknown */
	bad = NULL;
	wr.send_flags = 0;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), -EINVAL);
	ck_assert_ptr_eq(bad, &wr2);
	ck_assert_uint_eq(qp_from_pub(f.qp)->sq_head, 3);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_post_send_wqe)
{
	struct iwarp_send_wr wr, wr2, *bad;
	struct iwarp_sge sge[2];
	uint8_t src[40];
	struct iw_wqe *w;
	struct iw_qp *qp;
	struct fx f;

	mem_begin();
	fx_open(&f, 8, 8, 0);
	qp = qp_from_pub(f.qp);
	qp_to_rts(f.qp);
	iw_test_fill(src, sizeof(src), 7);
	sge[0].addr = (uint64_t)(uintptr_t)src;
	sge[0].length = 10;
	sge[0].lkey = 0;
	sge[1].addr = (uint64_t)(uintptr_t)(src + 20);
	sge[1].length = 20;
	sge[1].lkey = 0;
	send_wr_init(&wr, sge, 77, IWARP_WR_SEND,
		     IWARP_SEND_INLINE | IWARP_SEND_SOLICITED);
	wr.num_sge = 2;
	send_wr_init(&wr2, sge, 78, IWARP_WR_RDMA_WRITE, IWARP_SEND_SIGNALED);
	wr2.wr.rdma.remote_addr = 0x1000;
	wr2.wr.rdma.rkey = 0xabcd01;
	wr.next = &wr2;
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), 0);
	memset(src, 0, sizeof(src)); /* inline: copied at post time */
	w = qp_sq_wqe(qp, 0);
	ck_assert_uint_eq(w->wr_id, 77);
	ck_assert(w->is_inline);
	ck_assert_uint_eq(w->total_len, 30);
	ck_assert_uint_eq(w->send_flags & IWARP_SEND_SIGNALED, 0);
	ck_assert_uint_ne(w->send_flags & IWARP_SEND_SOLICITED, 0);
	iw_test_fill(src, sizeof(src), 7);
	ck_assert_mem_eq(w->inline_data, src, 10);
	ck_assert_mem_eq(w->inline_data + 10, src + 20, 20);
	w = qp_sq_wqe(qp, 1);
	ck_assert_uint_eq(w->wr_id, 78);
	ck_assert(!w->is_inline);
	ck_assert_uint_eq(w->remote_addr, 0x1000);
	ck_assert_uint_eq(w->rkey, 0xabcd01);
	ck_assert_uint_eq(w->num_sge, 1);
	ck_assert_uint_ne(w->send_flags & IWARP_SEND_SIGNALED, 0);
	fx_close(&f);

	/* sq_sig_all folds SIGNALED into every WQE */
	fx_open(&f, 8, 8, 1);
	qp_to_rts(f.qp);
	send_wr_init(&wr, NULL, 5, IWARP_WR_SEND, 0);
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), 0);
	ck_assert_uint_ne(qp_sq_wqe(qp_from_pub(f.qp), 0)->send_flags &
				  IWARP_SEND_SIGNALED,
			  0);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_post_recv)
{
	struct iwarp_recv_wr rw, rw2, rw3, *bad;
	struct iwarp_sge sge[3];
	struct iw_rqe r;
	struct fx f;

	mem_begin();
	fx_open(&f, 2, 2, 0);
	memset(sge, 0, sizeof(sge));
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = 1;
	rw.sg_list = sge;
	rw.num_sge = 1;
	sge[0].length = 100;
	ck_assert_int_eq(iwarp_post_recv(NULL, &rw, &bad), -EINVAL);
	ck_assert_int_eq(iwarp_post_recv(f.qp, NULL, &bad), -EINVAL);
	ck_assert_int_eq(iwarp_post_recv(f.qp, &rw, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_post_recv(f.qp, &rw, &bad), -EINVAL); /* RESET */
	ck_assert_ptr_eq(bad, &rw);
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_INIT), 0); /* pre-post in INIT */
	rw.num_sge = 3;
	ck_assert_int_eq(iwarp_post_recv(f.qp, &rw, &bad), -EINVAL);
	rw.num_sge = 1;
	rw2 = rw;
	rw2.wr_id = 2;
	rw3 = rw;
	rw3.wr_id = 3;
	rw.next = &rw2;
	rw2.next = &rw3;
	ck_assert_int_eq(iwarp_post_recv(f.qp, &rw, &bad), -ENOMEM);
	ck_assert_ptr_eq(bad, &rw3);
	/* the engine takes them in order */
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(f.qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 1);
	ck_assert_uint_eq(r.total_len, 100);
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(f.qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 2);
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(f.qp), &r), -ENOENT);
	ck_assert_int_eq(iwarp_post_recv(f.qp, &rw3, &bad), 0);
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(f.qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 3);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_flush_on_err)
{
	struct iwarp_send_wr wr[3], *bad;
	struct iwarp_recv_wr rw[2], *rbad;
	struct iwarp_sge sge;
	struct iwarp_wc wc[8];
	struct fx f;
	int i;

	mem_begin();
	fx_open(&f, 8, 8, 0);
	qp_to_rts(f.qp);
	sge.addr = (uint64_t)(uintptr_t)f.buf;
	sge.length = 64;
	sge.lkey = f.mr->lkey;
	for (i = 0; i < 3; i++) {
		/* the middle one unsignaled: flushed WRs all complete */
		send_wr_init(&wr[i], &sge, 10 + (uint64_t)i,
			     i == 2 ? IWARP_WR_RDMA_READ : IWARP_WR_SEND,
			     i == 1 ? 0 : IWARP_SEND_SIGNALED);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	memset(rw, 0, sizeof(rw));
	for (i = 0; i < 2; i++) {
		rw[i].wr_id = 20 + (uint64_t)i;
		rw[i].sg_list = &sge;
		rw[i].num_sge = 1;
		rw[i].next = i < 1 ? &rw[i + 1] : NULL;
	}
	ck_assert_int_eq(iwarp_post_send(f.qp, wr, &bad), 0);
	ck_assert_int_eq(iwarp_post_recv(f.qp, rw, &rbad), 0);
	/* the engine sent the first one already */
	qp_sq_complete(qp_from_pub(f.qp), 1, IWARP_WC_SUCCESS);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 1);
	ck_assert_uint_eq(wc[0].wr_id, 10);
	ck_assert_int_eq(wc[0].status, IWARP_WC_SUCCESS);
	ck_assert_int_eq(wc[0].opcode, IWARP_WC_SEND);
	ck_assert_uint_eq(wc[0].byte_len, 64);
	ck_assert_uint_eq(wc[0].qp_num, f.qp->qp_num);
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_ERR), 0);
	ck_assert_int_eq(f.qp->state, IWARP_QPS_ERR);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 2);
	ck_assert_uint_eq(wc[0].wr_id, 11);
	ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc[1].wr_id, 12);
	ck_assert_int_eq(wc[1].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc[1].opcode, IWARP_WC_RDMA_READ);
	ck_assert_int_eq(iwarp_poll_cq(f.rcq, 8, wc), 2);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(wc[i].wr_id, 20 + (uint64_t)i);
		ck_assert_int_eq(wc[i].status, IWARP_WC_WR_FLUSH_ERR);
		ck_assert_int_eq(wc[i].opcode, IWARP_WC_RECV);
		ck_assert_uint_eq(wc[i].qp_num, f.qp->qp_num);
	}
	/* a late engine completion of a flushed range is ignored */
	qp_sq_complete(qp_from_pub(f.qp), 3, IWARP_WC_SUCCESS);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 0);
	/* posting in ERR: accepted, flushed at once */
	wr[0].next = NULL;
	ck_assert_int_eq(iwarp_post_send(f.qp, wr, &bad), 0);
	rw[0].next = NULL;
	ck_assert_int_eq(iwarp_post_recv(f.qp, rw, &rbad), 0);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 1);
	ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc[0].wr_id, 10);
	ck_assert_int_eq(iwarp_poll_cq(f.rcq, 8, wc), 1);
	ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
	/* ... but still validated */
	wr[0].num_sge = 5;
	ck_assert_int_eq(iwarp_post_send(f.qp, wr, &bad), -EINVAL);
	/* app-requested ERR raises no async event */
	set_nonblock(iwarp_async_fd(f.ctx));
	ck_assert(!fd_readable(iwarp_async_fd(f.ctx)));
	/* ERR -> RESET -> usable again */
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_RESET), 0);
	qp_to_rts(f.qp);
	wr[0].num_sge = 1;
	ck_assert_int_eq(iwarp_post_send(f.qp, wr, &bad), 0);
	/* destroy takes the QP's WRs and completions with it (as rdma-core's
	 * hardware providers clean the CQ): nothing of it is polled later,
	 * the other QP's completion stays */
	{
		struct iwarp_qp_init_attr oa;
		struct iwarp_qp *other;

		fx_qp_attr(&f, &oa, 4, 4, 1);
		other = iwarp_create_qp(f.pd, &oa);
		ck_assert_ptr_nonnull(other);
		qp_to_rts(other);
		ck_assert_int_eq(qp_to(other, IWARP_QPS_ERR), 0);
		wr[0].wr_id = 11;
		ck_assert_int_eq(iwarp_post_send(other, wr, &bad), 0);
		ck_assert_int_eq(iwarp_destroy_qp(f.qp), 0);
		ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 1);
		ck_assert_uint_eq(wc[0].wr_id, 11);
		ck_assert_uint_eq(wc[0].qp_num, other->qp_num);
		ck_assert_int_eq(iwarp_destroy_qp(other), 0);
	}
	f.qp = NULL;
	ck_assert_int_eq(iwarp_dereg_mr(f.mr), 0);
	ck_assert_int_eq(iwarp_destroy_cq(f.scq), 0);
	ck_assert_int_eq(iwarp_destroy_cq(f.rcq), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(f.pd), 0);
	ck_assert_int_eq(iwarp_close_context(f.ctx), 0);
	mem_end();
}
END_TEST

START_TEST(test_reset_discards)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_wc wc[4];
	struct fx f;

	mem_begin();
	fx_open(&f, 4, 4, 1);
	qp_to_rts(f.qp);
	send_wr_init(&wr, NULL, 1, IWARP_WR_SEND, 0);
	ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), 0);
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_RESET), 0);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 4, wc), 0);
	ck_assert_uint_eq(qp_from_pub(f.qp)->sq_head, 0);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_sq_complete_and_drain)
{
	struct iwarp_send_wr wr[4], *bad;
	struct iwarp_async_event ev;
	struct iwarp_wc wc[8];
	struct fx f;
	int i;

	mem_begin();
	fx_open(&f, 8, 8, 0);
	qp_to_rts(f.qp);
	for (i = 0; i < 4; i++) {
		send_wr_init(&wr[i], NULL, (uint64_t)i, IWARP_WR_RDMA_WRITE,
			     (i & 1) ? IWARP_SEND_SIGNALED : 0);
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	ck_assert_int_eq(iwarp_post_send(f.qp, wr, &bad), 0);
	qp_sq_complete(qp_from_pub(f.qp), 2, IWARP_WC_SUCCESS);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 1); /* only #1 signaled */
	ck_assert_uint_eq(wc[0].wr_id, 1);
	ck_assert_int_eq(wc[0].opcode, IWARP_WC_RDMA_WRITE);
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_SQD), 0);
	set_nonblock(iwarp_async_fd(f.ctx));
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), -EAGAIN);
	/* error status: every WQE of the range completes; beyond head clamps */
	qp_sq_complete(qp_from_pub(f.qp), 100, IWARP_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(iwarp_poll_cq(f.scq, 8, wc), 2);
	ck_assert_uint_eq(wc[0].wr_id, 2);
	ck_assert_int_eq(wc[0].status, IWARP_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(wc[1].wr_id, 3);
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_SQ_DRAINED);
	ck_assert_ptr_eq(ev.element.qp, f.qp);
	/* SQD with an empty SQ: drained at once */
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_RTS), 0);
	ck_assert_int_eq(qp_to(f.qp, IWARP_QPS_SQD), 0);
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_SQ_DRAINED);
	/* posting in SQD queues */
	wr[0].next = NULL;
	ck_assert_int_eq(iwarp_post_send(f.qp, wr, &bad), 0);
	fx_close(&f);
	mem_end();
}
END_TEST

START_TEST(test_set_error_term)
{
	static const struct {
		struct iwarp_term_cause t;
		enum iwarp_event_type ev;
	} cases[] = {
		{{IWARP_TERM_LAYER_RDMAP, IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
		  IWARP_RDMAP_ECODE_INVALID_STAG},
		 IWARP_EVENT_QP_ACCESS_ERR},
		{{IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_TAGGED_BUFFER,
		  IWARP_DDP_ECODE_T_BASE_BOUNDS},
		 IWARP_EVENT_QP_ACCESS_ERR},
		{{IWARP_TERM_LAYER_RDMAP, IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
		  IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE},
		 IWARP_EVENT_QP_REQ_ERR},
		{{IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
		  IWARP_DDP_ECODE_UT_INVALID_QN},
		 IWARP_EVENT_QP_REQ_ERR},
		{{IWARP_TERM_LAYER_LLP, IWARP_LLP_ETYPE_MPA,
		  IWARP_LLP_ECODE_CRC},
		 IWARP_EVENT_QP_FATAL},
	};
	struct iwarp_async_event ev;
	struct iwarp_recv_wr rw, *rbad;
	struct iwarp_wc wc[4];
	struct fx f;
	size_t i;

	mem_begin();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fx_open(&f, 4, 4, 0);
		qp_to_rts(f.qp);
		memset(&rw, 0, sizeof(rw));
		rw.wr_id = 9;
		ck_assert_int_eq(iwarp_post_recv(f.qp, &rw, &rbad), 0);
		qp_from_pub(f.qp)->term_received = (i & 1) != 0;
		qp_set_error(qp_from_pub(f.qp), &cases[i].t, true);
		qp_set_error(qp_from_pub(f.qp), NULL, true); /* idempotent */
		ck_assert_int_eq(iwarp_poll_cq(f.rcq, 4, wc), 1);
		ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
		ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), 0);
		ck_assert_int_eq(ev.event_type, cases[i].ev);
		ck_assert_ptr_eq(ev.element.qp, f.qp);
		ck_assert_uint_eq(ev.term.layer, cases[i].t.layer);
		ck_assert_uint_eq(ev.term.etype, cases[i].t.etype);
		ck_assert_uint_eq(ev.term.ecode, cases[i].t.ecode);
		ck_assert_int_eq(ev.term_received, (i & 1) != 0);
		set_nonblock(iwarp_async_fd(f.ctx));
		ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), -EAGAIN);
		fx_close(&f);
	}
	/* no cause: QP_FATAL; an async event queued for a QP dies with it */
	fx_open(&f, 4, 4, 0);
	qp_set_error(qp_from_pub(f.qp), NULL, true);
	ck_assert(fd_readable(iwarp_async_fd(f.ctx)));
	ck_assert_int_eq(iwarp_destroy_qp(f.qp), 0);
	ck_assert(!fd_readable(iwarp_async_fd(f.ctx)));
	f.qp = iwarp_create_qp(
		f.pd, &(struct iwarp_qp_init_attr){.send_cq = f.scq,
						   .recv_cq = f.rcq,
						   .qp_type = IWARP_QPT_RC});
	ck_assert_ptr_nonnull(f.qp);
	fx_close(&f);
	mem_end();
}
END_TEST

/* ================= SRQ ================= */

START_TEST(test_srq)
{
	struct iwarp_srq_init_attr sa, bad;
	struct iwarp_qp_init_attr ia;
	struct iwarp_recv_wr rw[5], *rbad;
	struct iwarp_async_event ev;
	struct iwarp_srq_attr q;
	struct iwarp_sge sge[3];
	struct iwarp_srq *srq;
	struct iwarp_qp *qp;
	struct iw_rqe r;
	struct fx f;
	int i;

	mem_begin();
	fx_open(&f, 4, 4, 0);
	memset(&sa, 0, sizeof(sa));
	sa.srq_context = (void *)0x55;
	sa.attr.max_wr = 5;
	sa.attr.max_sge = 2;
	errno = 0;
	ck_assert_ptr_null(iwarp_create_srq(NULL, &sa));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(iwarp_create_srq(f.pd, NULL));
	bad = sa;
	bad.attr.max_wr = 0;
	ck_assert_ptr_null(iwarp_create_srq(f.pd, &bad));
	bad.attr.max_wr = IW_MAX_SRQ_WR + 1;
	ck_assert_ptr_null(iwarp_create_srq(f.pd, &bad));
	bad = sa;
	bad.attr.max_sge = IW_MAX_SGE + 1;
	ck_assert_ptr_null(iwarp_create_srq(f.pd, &bad));
	bad = sa;
	bad.attr.srq_limit = 6;
	ck_assert_ptr_null(iwarp_create_srq(f.pd, &bad));
	ck_assert_int_eq(errno, EINVAL);
	srq = iwarp_create_srq(f.pd, &sa);
	ck_assert_ptr_nonnull(srq);
	ck_assert_ptr_eq(srq->srq_context, (void *)0x55);
	ck_assert_ptr_eq(srq->pd, f.pd);

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = f.scq;
	ia.recv_cq = f.rcq;
	ia.srq = srq;
	ia.qp_type = IWARP_QPT_RC;
	ia.cap.max_recv_wr = 4;
	qp = iwarp_create_qp(f.pd, &ia);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(qp_to(qp, IWARP_QPS_INIT), 0);
	memset(rw, 0, sizeof(rw));
	memset(sge, 0, sizeof(sge));
	for (i = 0; i < 5; i++) {
		rw[i].wr_id = (uint64_t)i;
		rw[i].sg_list = sge;
		rw[i].num_sge = 1;
		rw[i].next = i < 4 ? &rw[i + 1] : NULL;
	}
	ck_assert_int_eq(iwarp_post_recv(qp, rw, &rbad), -EINVAL);
	ck_assert_int_eq(iwarp_post_srq_recv(NULL, rw, &rbad), -EINVAL);
	ck_assert_int_eq(iwarp_post_srq_recv(srq, NULL, &rbad), -EINVAL);
	ck_assert_int_eq(iwarp_post_srq_recv(srq, rw, NULL), -EINVAL);
	rw[2].num_sge = 3;
	ck_assert_int_eq(iwarp_post_srq_recv(srq, rw, &rbad), -EINVAL);
	ck_assert_ptr_eq(rbad, &rw[2]);
	rw[2].num_sge = 1;
	ck_assert_int_eq(iwarp_post_srq_recv(srq, &rw[2], &rbad), 0);
	/* 0 and 1 went in before the bad WR, then 2, 3, 4: full (max_wr 5) */
	ck_assert_int_eq(iwarp_post_srq_recv(srq, &rw[4], &rbad), -ENOMEM);
	ck_assert_ptr_eq(rbad, &rw[4]);

	/* modify / query */
	ck_assert_int_eq(iwarp_query_srq(NULL, &q), -EINVAL);
	ck_assert_int_eq(iwarp_query_srq(srq, NULL), -EINVAL);
	ck_assert_int_eq(iwarp_modify_srq(NULL, &q, IWARP_SRQ_LIMIT), -EINVAL);
	ck_assert_int_eq(iwarp_modify_srq(srq, NULL, IWARP_SRQ_LIMIT), -EINVAL);
	q.srq_limit = 3;
	q.max_wr = 5;
	ck_assert_int_eq(iwarp_modify_srq(srq, &q, 1 << 4), -EINVAL);
	q.max_wr = 4; /* 5 posted */
	ck_assert_int_eq(iwarp_modify_srq(srq, &q, IWARP_SRQ_MAX_WR), -EINVAL);
	q.srq_limit = 6;
	ck_assert_int_eq(iwarp_modify_srq(srq, &q, IWARP_SRQ_LIMIT), -EINVAL);
	/* grow keeps the posted WQEs in order */
	q.max_wr = 9;
	ck_assert_int_eq(iwarp_modify_srq(srq, &q, IWARP_SRQ_MAX_WR), 0);
	q.srq_limit = 3;
	ck_assert_int_eq(iwarp_modify_srq(srq, &q, IWARP_SRQ_LIMIT), 0);
	ck_assert_int_eq(iwarp_query_srq(srq, &q), 0);
	ck_assert_uint_eq(q.max_wr, 9);
	ck_assert_uint_eq(q.max_sge, 2);
	ck_assert_uint_eq(q.srq_limit, 3);
	set_nonblock(iwarp_async_fd(f.ctx));
	/* posted in order 0..4: pop until fewer than 3 remain */
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 0);
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 1);
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev),
			 -EAGAIN); /* 3 left */
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 2);
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_SRQ_LIMIT_REACHED);
	ck_assert_ptr_eq(ev.element.srq, srq);
	ck_assert_int_eq(iwarp_query_srq(srq, &q), 0);
	ck_assert_uint_eq(q.srq_limit, 0); /* disarmed */
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 3);
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), -EAGAIN); /* once */
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(qp), &r), 0);
	ck_assert_uint_eq(r.wr_id, 4);
	ck_assert_int_eq(qp_rq_pop(qp_from_pub(qp), &r), -ENOENT);

	/* a QP with an SRQ going to ERR: LAST_WQE_REACHED */
	qp_set_error(qp_from_pub(qp), NULL, true);
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_QP_FATAL);
	ck_assert_int_eq(iwarp_get_async_event(f.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_QP_LAST_WQE_REACHED);
	ck_assert_int_eq(iwarp_destroy_srq(srq), -EBUSY);
	ck_assert_int_eq(iwarp_destroy_qp(qp), 0);
	ck_assert_int_eq(iwarp_destroy_srq(NULL), -EINVAL);
	ck_assert_int_eq(iwarp_destroy_srq(srq), 0);
	fx_close(&f);
	mem_end();
}
END_TEST

/* ================= concurrency ================= */

#define CONC_N 20000u

struct conc {
	struct iwarp_qp *qp;
	unsigned int polled; /* atomic */
	unsigned int cqe;
	bool stop; /* atomic */
};

static void *conc_poster(void *arg)
{
	struct conc *c = arg;
	struct iwarp_send_wr wr, *bad;
	uint32_t i = 0;
	int rc;

	send_wr_init(&wr, NULL, 0, IWARP_WR_SEND, IWARP_SEND_SIGNALED);
	while (i < CONC_N) {
		/* keep completions that are not yet polled below the CQ size */
		if (i - __atomic_load_n(&c->polled, __ATOMIC_ACQUIRE) >=
		    c->cqe) {
			sched_yield(); /* three spinners may share one core */
			continue;
		}
		wr.wr_id = i;
		rc = iwarp_post_send(c->qp, &wr, &bad);
		if (rc == -ENOMEM) {
			sched_yield();
			continue;
		}
		if (rc)
			break;
		i++;
	}
	return NULL;
}

static void *conc_engine(void *arg)
{
	struct conc *c = arg;
	struct iw_qp *qp = qp_from_pub(c->qp);

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		qp_sq_complete(qp,
			       __atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE),
			       IWARP_WC_SUCCESS);
		sched_yield(); /* three spinners may share one core */
	}
	return NULL;
}

START_TEST(test_concurrent_post_poll)
{
	struct iwarp_wc wc[16];
	pthread_t tp, te;
	struct conc c;
	uint64_t next = 0;
	struct fx f;
	int n, i;

	mem_begin();
	fx_open(&f, 64, 4, 0);
	qp_to_rts(f.qp);
	c.qp = f.qp;
	c.polled = 0;
	c.cqe = (unsigned int)f.scq->cqe;
	c.stop = false;
	ck_assert_int_eq(pthread_create(&tp, NULL, conc_poster, &c), 0);
	ck_assert_int_eq(pthread_create(&te, NULL, conc_engine, &c), 0);
	while (next < CONC_N) {
		n = iwarp_poll_cq(f.scq, 16, wc);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++) {
			ck_assert_uint_eq(wc[i].wr_id, next);
			ck_assert_int_eq(wc[i].status, IWARP_WC_SUCCESS);
			next++;
		}
		__atomic_store_n(&c.polled, (unsigned int)next,
				 __ATOMIC_RELEASE);
		if (!n)
			sched_yield();
	}
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(tp, NULL), 0);
	ck_assert_int_eq(pthread_join(te, NULL), 0);
	ck_assert(!cq_from_pub(f.scq)->overflow);
	fx_close(&f);
	mem_end();
}
END_TEST

/*
 * A completion frees its WQE's slot before its CQE can be polled: the
 * engine completes under sq_lock, not qp->lock, so posting goes on
 * meanwhile, and with the SQ full a consumer that polled one CQE must be
 * able to post one WR at once (perftest keeps its SQ full this way). The
 * completer takes whole full queues, so the poster polls amid a batch: a
 * completion that moved sq_tail only after pushing the batch's CQEs fails
 * here with -ENOMEM (checked); the per-entry order is too quick a window
 * to catch this way.
 */
struct slot_run {
	struct iwarp_qp *qp;
	bool stop; /* atomic */
};

static void *slot_completer(void *arg)
{
	struct slot_run *r = arg;
	struct iw_qp *qp = qp_from_pub(r->qp);
	uint32_t head;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		/* only a full SQ (or the last WRs): every post of the poster
		 * needs a slot that this batch frees */
		head = __atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE);
		if (head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) ==
			    qp->cap.max_send_wr ||
		    head == CONC_N)
			qp_sq_complete(qp, head, IWARP_WC_SUCCESS);
		else
			sched_yield(); /* two spinners may share one core */
	}
	return NULL;
}

START_TEST(test_cqe_frees_slot)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_wc wc[16];
	struct slot_run r;
	uint32_t posted = 0, polled = 0;
	pthread_t th;
	struct fx f;
	int n, i;

	mem_begin();
	fx_open(&f, 128, 4, 0); /* a batch long enough to poll amid */
	qp_to_rts(f.qp);
	send_wr_init(&wr, NULL, 0, IWARP_WR_SEND, IWARP_SEND_SIGNALED);
	for (;;) {
		wr.wr_id = posted;
		n = iwarp_post_send(f.qp, &wr, &bad);
		if (n == -ENOMEM)
			break;
		ck_assert_int_eq(n, 0);
		posted++;
	}
	ck_assert_uint_eq(posted, 128);
	r.qp = f.qp;
	r.stop = false;
	ck_assert_int_eq(pthread_create(&th, NULL, slot_completer, &r), 0);
	while (polled < CONC_N) {
		n = iwarp_poll_cq(f.scq, 16, wc);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++, polled++) {
			ck_assert_uint_eq(wc[i].wr_id, polled);
			if (posted == CONC_N)
				continue;
			wr.wr_id = posted;
			ck_assert_int_eq(iwarp_post_send(f.qp, &wr, &bad), 0);
			posted++;
		}
		if (!n)
			sched_yield();
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	fx_close(&f);
	mem_end();
}
END_TEST

/*
 * The engine takes receives under rq_lock while the application posts
 * under qp->lock: with the RQ kept full, every receive comes out once, in
 * order and whole (its length was posted with it), and a poster never
 * overwrites a slot the taker is still copying.
 */
struct rq_run {
	struct iwarp_qp *qp;
	uint32_t taken; /* atomic */
	uint32_t bad;	/* receives out of order or torn */
};

static void *rq_taker(void *arg)
{
	struct rq_run *r = arg;
	struct iw_qp *qp = qp_from_pub(r->qp);
	struct iw_rqe e;
	uint32_t n = 0;

	while (n < CONC_N) {
		if (qp_rq_pop(qp, &e)) {
			sched_yield(); /* two spinners may share one core */
			continue;
		}
		if (e.wr_id != n || e.num_sge != 1 ||
		    e.sge[0].length != 1 + n % 4096 ||
		    e.total_len != 1 + n % 4096)
			r->bad++;
		n++;
		__atomic_store_n(&r->taken, n, __ATOMIC_RELEASE);
	}
	return NULL;
}

START_TEST(test_concurrent_post_recv)
{
	struct iwarp_recv_wr rw, *bad;
	struct iwarp_sge sge;
	struct rq_run r;
	uint32_t posted = 0;
	pthread_t th;
	struct fx f;
	int rc;

	mem_begin();
	fx_open(&f, 4, 64, 0);
	qp_to_rts(f.qp);
	memset(&rw, 0, sizeof(rw));
	memset(&sge, 0, sizeof(sge));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	r.qp = f.qp;
	r.taken = 0;
	r.bad = 0;
	ck_assert_int_eq(pthread_create(&th, NULL, rq_taker, &r), 0);
	while (posted < CONC_N) {
		rw.wr_id = posted;
		sge.length = 1 + posted % 4096;
		rc = iwarp_post_recv(f.qp, &rw, &bad);
		if (rc == -ENOMEM) {
			sched_yield();
			continue;
		}
		ck_assert_int_eq(rc, 0);
		posted++;
	}
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_uint_eq(__atomic_load_n(&r.taken, __ATOMIC_ACQUIRE), CONC_N);
	ck_assert_uint_eq(r.bad, 0);
	fx_close(&f);
	mem_end();
}
END_TEST

static Suite *verbs_suite(void)
{
	Suite *s = suite_create("verbs");
	TCase *tc;

	tc = tcase_create("context");
	tcase_add_test(tc, test_attr_defaults);
	tcase_add_test(tc, test_attr_env);
	tcase_add_test(tc, test_socket_io_choice);
	tcase_add_test(tc, test_open_invalid);
	tcase_add_test(tc, test_query_device);
	tcase_add_test(tc, test_close_busy);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_async_queue);
	suite_add_tcase(s, tc);

	tc = tcase_create("pd_mr");
	tcase_add_test(tc, test_pd_busy);
	tcase_add_test(tc, test_mr_reg_errors);
	tcase_add_test(tc, test_mr_stag_keys);
	tcase_add_test(tc, test_mr_table_grows);
	tcase_add_test(tc, test_mr_check_remote);
	tcase_add_test(tc, test_mr_check_local);
	tcase_add_test(tc, test_mw_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("cq");
	tcase_add_test(tc, test_cq_basic);
	tcase_add_test(tc, test_cq_resize);
	tcase_add_test(tc, test_channel_notify);
	tcase_add_test(tc, test_channel_blocking);
	tcase_add_test(tc, test_channel_concurrent_nonblocking);
	tcase_add_test(tc, test_channel_concurrent_blocking);
	/* the concurrent cases' own bounds are 20 s */
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("qp");
	tcase_add_test(tc, test_qp_create);
	tcase_add_test(tc, test_qp_state_table);
	tcase_add_test(tc, test_qp_modify_attrs);
	tcase_add_test(tc, test_post_send_errors);
	tcase_add_test(tc, test_post_send_wqe);
	tcase_add_test(tc, test_post_recv);
	tcase_add_test(tc, test_flush_on_err);
	tcase_add_test(tc, test_reset_discards);
	tcase_add_test(tc, test_sq_complete_and_drain);
	tcase_add_test(tc, test_set_error_term);
	tcase_add_test(tc, test_srq);
	tcase_add_test(tc, test_concurrent_post_poll);
	tcase_add_test(tc, test_cqe_frees_slot);
	tcase_add_test(tc, test_concurrent_post_recv);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(verbs_suite)

/*
 * tests/stack_fault_test.c: the whole datapath (qp_conn + engine + endpoint
 * + progress thread) over the in-memory transport with the fault injector
 * (io/testio.h): short reads and writes (everything still works), the
 * connection cut or failed at random points (seeded, many iterations), and
 * flipped bytes (CRC on: TERMINATE LLP/MPA 0x02 and no delivery; CRC off:
 * whatever happens, no crash, hang or leak). Every posted WR completes, in
 * order: a success prefix, then errors.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "stack_pipe.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/mem.h"
#include "verbs/qp_conn.h"

#define AREA (64 * 1024)
#define NMSG 24

/* Traffic both ways: side 0 Sends, Writes and Reads to side 1; side 1
 * Sends to side 0. Message i uses [i * 2 KiB, +len) of each area. */
struct traffic {
	struct st_buf
		b[2]; /* per side: [0, AREA) source, [AREA, 2 AREA) target */
	int nsend[2], nrecv[2];
	enum iwarp_wr_opcode op[NMSG];
	uint32_t len[NMSG];
	uint32_t len1[NMSG]; /* side 1 -> side 0 Sends */
};

#define SLOTSZ ((size_t)2048)

/* Posts side |s|'s receive for message |i| into its target slot. */
static void traffic_post_recv(struct sp_pair *p, struct traffic *t, int s,
			      int i)
{
	ck_assert_int_eq(st_post_recv(p->s[s].qp, 1000u + (uint64_t)i,
				      t->b[s].mr,
				      t->b[s].p + AREA + (size_t)i * SLOTSZ,
				      (uint32_t)SLOTSZ),
			 0);
	t->nrecv[s]++;
}

static void traffic_post(struct sp_pair *p, struct traffic *t, uint64_t seed,
			 bool reads, bool back)
{
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;
	uint64_t r = seed | 1;
	int i, s;

	memset(t, 0, sizeof(*t));
	for (s = 0; s < 2; s++) {
		st_buf_reg(&t->b[s], p->pd, 2 * AREA, rw);
		iw_test_fill(t->b[s].p, AREA, seed + (uint64_t)s);
	}
	for (i = 0; i < NMSG; i++) {
		uint32_t k = (uint32_t)(iw_test_rand(&r) % (reads ? 3 : 2));

		t->op[i] = k == 0   ? IWARP_WR_SEND
			   : k == 1 ? IWARP_WR_RDMA_WRITE
				    : IWARP_WR_RDMA_READ;
		t->len[i] = (uint32_t)(iw_test_rand(&r) % SLOTSZ);
		t->len1[i] = back ? (uint32_t)(iw_test_rand(&r) % SLOTSZ) : 0;
	}
	/* receives first, as many as Sends will come */
	for (i = 0; i < NMSG; i++) {
		if (t->op[i] == IWARP_WR_SEND)
			traffic_post_recv(p, t, 1, i);
		if (back)
			traffic_post_recv(p, t, 0, i);
	}
	for (i = 0; i < NMSG; i++) {
		uint8_t *src = t->b[0].p + (size_t)i * SLOTSZ;
		uint8_t *dst = t->b[1].p + AREA + (size_t)i * SLOTSZ;

		if (t->op[i] == IWARP_WR_RDMA_READ)
			ck_assert_int_eq(
				st_post_send(p->s[0].qp, (uint64_t)i, t->op[i],
					     IWARP_SEND_SIGNALED, t->b[0].mr,
					     t->b[0].p + AREA +
						     (size_t)i * SLOTSZ,
					     t->len[i],
					     (uintptr_t)(t->b[1].p +
							 (size_t)i * SLOTSZ),
					     t->b[1].mr->rkey, 0),
				0);
		else
			ck_assert_int_eq(
				st_post_send(p->s[0].qp, (uint64_t)i, t->op[i],
					     IWARP_SEND_SIGNALED, t->b[0].mr,
					     src, t->len[i], (uintptr_t)dst,
					     t->b[1].mr->rkey, 0),
				0);
		t->nsend[0]++;
		if (back) {
			ck_assert_int_eq(
				st_post_send(p->s[1].qp, (uint64_t)i,
					     IWARP_WR_SEND, IWARP_SEND_SIGNALED,
					     t->b[1].mr,
					     t->b[1].p + (size_t)i * SLOTSZ,
					     t->len1[i], 0, 0, 0),
				0);
			t->nsend[1]++;
		}
	}
}

/*
 * Collects every completion of side |s| (bounded) and checks them: sends
 * and receives each in posting order, a success prefix then errors;
 * successful transfers verified. Returns the number of successful
 * receives.
 */
static int traffic_check(struct sp_pair *p, struct traffic *t, int s,
			 bool strict, bool verify)
{
	struct iwarp_wc wc[4 * NMSG];
	int n = t->nsend[s] + t->nrecv[s], i, ns = 0, nr = 0, ok = 0;
	bool sfail = false, rfail = false;

	st_poll_n(&p->s[s].cq, wc, n);
	st_cq_empty(&p->s[s].cq);
	for (i = 0; i < n; i++) {
		bool good = wc[i].status == IWARP_WC_SUCCESS;

		if (wc[i].opcode == IWARP_WC_RECV) {
			int m = (int)wc[i].wr_id - 1000;
			uint32_t len = s ? t->len[m] : t->len1[m];

			ck_assert_int_ge(m, 0);
			ck_assert_int_lt(m, NMSG);
			if (s == 1)
				while (nr < NMSG && t->op[nr] != IWARP_WR_SEND)
					nr++;
			ck_assert_int_eq(m, nr);
			nr++;
			ck_assert_msg(good || !strict, "recv %d: %s", m,
				      iwarp_wc_status_str(wc[i].status));
			if (good) {
				ck_assert(!rfail);
				ck_assert_uint_eq(wc[i].byte_len, len);
				ck_assert(!verify ||
					  !memcmp(t->b[s].p + AREA +
							  (size_t)m * SLOTSZ,
						  t->b[1 - s].p +
							  (size_t)m * SLOTSZ,
						  len));
				ok++;
			} else {
				rfail = true;
			}
			continue;
		}
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)ns);
		ck_assert_msg(good || !strict, "send %d: %s", ns,
			      iwarp_wc_status_str(wc[i].status));
		if (good) {
			ck_assert(!sfail);
			if (verify && s == 0 && t->op[ns] == IWARP_WR_RDMA_READ)
				ck_assert(!memcmp(
					t->b[0].p + AREA + (size_t)ns * SLOTSZ,
					t->b[1].p + (size_t)ns * SLOTSZ,
					t->len[ns]));
		} else {
			sfail = true;
		}
		ns++;
	}
	ck_assert_int_eq(ns, t->nsend[s]);
	return ok;
}

static void traffic_free(struct traffic *t)
{
	st_buf_free(&t->b[0]);
	st_buf_free(&t->b[1]);
}

/* Ends what still runs (side 0 to ERR) and waits for both sides. */
static void end_both(struct sp_pair *p)
{
	struct iwarp_qp_attr at;

	if (!sp_wait_closed(p, 0, 0)) {
		memset(&at, 0, sizeof(at));
		at.qp_state = IWARP_QPS_ERR;
		ck_assert_int_eq(
			iwarp_modify_qp(p->s[0].qp, &at, IWARP_QP_STATE), 0);
	}
	ck_assert(sp_wait_closed(p, 0, ST_WAIT_MS));
	ck_assert(sp_wait_closed(p, 1, ST_WAIT_MS));
	ck_assert_int_eq(cmt_qp_state(p->s[0].qp), IWARP_QPS_ERR);
	ck_assert_int_eq(cmt_qp_state(p->s[1].qp), IWARP_QPS_ERR);
}

static void drain_async(struct sp_pair *p)
{
	struct iwarp_async_event ev;

	while (st_async_wait(p->ctx, &ev, 0))
		;
}

/* Short reads and writes everywhere: everything still works. */
START_TEST(test_short_io)
{
	long base = iw_mem_outstanding();
	struct sp_pair *p = calloc(1, sizeof(*p));
	struct traffic *t = calloc(1, sizeof(*t));
	struct sp_opts o;
	int s;

	memset(&o, 0, sizeof(o));
	o.crc = _i & 1;
	o.markers = (_i >> 1) & 1;
	o.fpdu_max = _i & 2 ? 600 : 0;
	o.pipe_cap = 4096;
	for (s = 0; s < 2; s++) {
		o.fault[s] = true;
		io_fault_cfg_init(&o.cfg[s]);
		o.cfg[s].seed = 11u + (uint64_t)(_i * 2 + s);
		o.cfg[s].short_rx = 1;
		o.cfg[s].short_tx = 1;
	}
	sp_open(p, &o);
	traffic_post(p, t, 42u + (uint64_t)_i, true, true);
	traffic_check(p, t, 0, true, true);
	traffic_check(p, t, 1, true, true);
	/* every Write was placed: it precedes the last Send on the stream */
	{
		int i;

		for (i = 0; i < NMSG; i++)
			if (t->op[i] == IWARP_WR_RDMA_WRITE)
				ck_assert(!memcmp(
					t->b[1].p + AREA + (size_t)i * SLOTSZ,
					t->b[0].p + (size_t)i * SLOTSZ,
					t->len[i]));
	}
	end_both(p);
	ck_assert_int_eq(p->s[0].close_err, 0);
	drain_async(p);
	traffic_free(t);
	sp_close(p);
	free(p);
	free(t);
	st_wait_mem(base);
}
END_TEST

/*
 * The connection cut, reset or failed at a random point (seeded): every
 * WR on both sides completes, in order, both sides close, nothing leaks.
 */
START_TEST(test_cut_random)
{
	long base = iw_mem_outstanding();
	uint64_t r = 0x5eed0000u + (uint64_t)_i;
	int it;

	for (it = 0; it < 16; it++) {
		struct sp_pair *p = calloc(1, sizeof(*p));
		struct traffic *t = calloc(1, sizeof(*t));
		struct sp_opts o;
		int side = (int)(iw_test_rand(&r) & 1);
		uint64_t at = iw_test_rand(&r) % 40000;

		memset(&o, 0, sizeof(o));
		o.crc = it & 1;
		o.markers = (it >> 1) & 1;
		o.pipe_cap = 8192;
		o.fault[side] = true;
		io_fault_cfg_init(&o.cfg[side]);
		o.cfg[side].seed = at + 1;
		o.cfg[side].short_rx = (it >> 2) & 1;
		o.cfg[side].short_tx = (it >> 2) & 1;
		switch (iw_test_rand(&r) % 5) {
		case 0:
			o.cfg[side].cut_tx_after = at;
			break;
		case 1:
			o.cfg[side].cut_rx_after = at;
			break;
		case 2:
			o.cfg[side].cut_rx_after = at;
			o.cfg[side].cut_err = 0; /* EOF in mid-stream */
			break;
		case 3:
			o.cfg[side].fail_rx_nth = 1 + at % 40;
			break;
		default:
			o.cfg[side].fail_tx_nth = 1 + at % 40;
			break;
		}
		sp_open(p, &o);
		traffic_post(p, t, r, true, true);
		traffic_check(p, t, 0, false, true);
		traffic_check(p, t, 1, false, true);
		end_both(p);
		drain_async(p);
		traffic_free(t);
		sp_close(p);
		free(p);
		free(t);
		ck_assert_int_eq(iw_mem_outstanding(), base);
	}
	st_wait_mem(base);
}
END_TEST

/* Offsets of the 2-octet ULPDU_Length fields in a captured stream (no
 * markers): true when |off| falls in one. */
static bool in_length_field(const uint8_t *w, size_t len, uint64_t off)
{
	size_t pos = 0;

	while (pos + 2 <= len) {
		size_t f = ((2u + iw_get_u16be(w + pos) + 3u) & ~(size_t)3) + 4;

		if (off >= pos && off < pos + 2)
			return true;
		if (off < pos + f)
			return false;
		pos += f;
	}
	return false;
}

/*
 * One byte flipped in what side 1 receives. CRC on, a flip outside the
 * length fields: side 1 sends TERMINATE LLP/MPA CRC error (RFC 5044 §8)
 * and delivers nothing of the damaged message or after it. Otherwise
 * (CRC off, or the length field): no crash, hang or leak.
 */
START_TEST(test_flip)
{
	long base = iw_mem_outstanding();
	uint64_t r = 0xf11b0000u + (uint64_t)_i;
	bool crc = _i == 0;
	uint8_t *w = malloc(AREA);
	int it;

	ck_assert_ptr_nonnull(w);
	for (it = 0; it < 16; it++) {
		struct sp_pair *p = calloc(1, sizeof(*p));
		struct traffic *t = calloc(1, sizeof(*t));
		struct sp_opts o;
		uint64_t off = iw_test_rand(&r) % 12000;
		bool lenf;
		size_t wl;

		memset(&o, 0, sizeof(o));
		o.crc = crc;
		o.pipe_cap = 256 * 1024; /* side 0 never blocks */
		o.fault[1] = true;
		io_fault_cfg_init(&o.cfg[1]);
		o.cfg[1].flip_rx_off = off;
		o.cfg[1].flip_mask = (uint8_t)(1u << (it & 7));
		sp_open(p, &o);
		/* one direction, no Reads: side 1 only ever sends a
		 * TERMINATE */
		traffic_post(p, t, r, false, false);
		traffic_check(p, t, 0, false, true);
		wl = sp_captured(p, 0, w, AREA);
		ck_assert_uint_gt(wl, off); /* the flip is inside */
		lenf = in_length_field(w, wl, off);
		if (crc && !lenf) {
			struct iwarp_async_event ev;
			uint8_t term[128];
			size_t tl;

			ck_assert(sp_wait_closed(p, 1, ST_WAIT_MS));
			ck_assert(p->s[1].have_cause);
			ck_assert_uint_eq(p->s[1].cause.layer,
					  IWARP_TERM_LAYER_LLP);
			ck_assert_uint_eq(p->s[1].cause.etype,
					  IWARP_LLP_ETYPE_MPA);
			ck_assert_uint_eq(p->s[1].cause.ecode,
					  IWARP_LLP_ECODE_CRC);
			/* on the wire: side 1 sent only the TERMINATE */
			tl = sp_captured(p, 1, term, sizeof(term));
			ck_assert_uint_ge(tl, 2 + 22 + 4);
			ck_assert_uint_eq(term[3] & 0x0f, 7); /* Terminate */
			ck_assert_uint_eq(term[20], 0x20);    /* LLP, MPA */
			ck_assert_uint_eq(term[21], 0x02);    /* CRC error */
			ck_assert(st_async_wait(p->ctx, &ev, ST_WAIT_MS));
			ck_assert_int_eq(ev.event_type, IWARP_EVENT_QP_FATAL);
			ck_assert_uint_eq(ev.term.ecode, IWARP_LLP_ECODE_CRC);
		}
		end_both(p);
		/* a damaged Send is never delivered: traffic_check verifies
		 * the bytes of every successful receive */
		traffic_check(p, t, 1, false, crc);
		drain_async(p);
		traffic_free(t);
		sp_close(p);
		free(p);
		free(t);
		ck_assert_int_eq(iw_mem_outstanding(), base);
	}
	free(w);
	st_wait_mem(base);
}
END_TEST

/*
 * Side 1 stops reading, side 0's 1 MiB Write fills the pipe, then side 0
 * receives a Send with a bad CRC: its TERMINATE can never be taken by the
 * transport. The QP must still go to ERR (RDMAP_CONN_TERM_LINGER_MS later) with
 * the CRC cause, the async event and the Write flushed, not wait for a
 * reader that never comes.
 */
START_TEST(test_term_unsent)
{
	long base = iw_mem_outstanding();
	struct sp_pair *p = calloc(1, sizeof(*p));
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE;
	struct iwarp_async_event ev;
	struct iwarp_qp_attr at;
	struct iwarp_wc wc;
	struct st_buf b[2];
	struct sp_opts o;
	uint64_t t0;

	memset(&o, 0, sizeof(o));
	o.crc = true;
	o.pipe_cap = 16384;
	o.fault[1] = true;
	io_fault_cfg_init(&o.cfg[1]);
	o.cfg[1].stall_rx_after = 4096;
	o.fault[0] = true;
	io_fault_cfg_init(&o.cfg[0]);
	o.cfg[0].flip_rx_off = 40; /* in the payload of side 1's Send */
	sp_open(p, &o);
	st_buf_reg(&b[0], p->pd, 1u << 20, rw);
	st_buf_reg(&b[1], p->pd, 1u << 20, rw);
	ck_assert_int_eq(st_post_recv(p->s[0].qp, 7, b[0].mr, b[0].p, 4096), 0);
	ck_assert_int_eq(st_post_send(p->s[0].qp, 1, IWARP_WR_RDMA_WRITE,
				      IWARP_SEND_SIGNALED, b[0].mr, b[0].p,
				      1u << 20, (uintptr_t)b[1].p,
				      b[1].mr->rkey, 0),
			 0);
	/* side 0's transmit stalls at side 1's 4 KiB + the pipe's 16 KiB */
	t0 = st_now_ms();
	while (sp_captured(p, 0, NULL, 0) < 16384 + 4096 &&
	       st_now_ms() - t0 < ST_WAIT_MS)
		usleep(1000);
	ck_assert_uint_eq(sp_captured(p, 0, NULL, 0), 16384 + 4096);
	t0 = st_now_ms();
	ck_assert_int_eq(st_post_send(p->s[1].qp, 2, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, b[1].mr, b[1].p, 64,
				      0, 0, 0),
			 0);
	ck_assert(sp_wait_closed(p, 0, ST_WAIT_MS));
	ck_assert_uint_ge(st_now_ms() - t0, RDMAP_CONN_TERM_LINGER_MS / 2);
	ck_assert(p->s[0].have_cause);
	ck_assert_uint_eq(p->s[0].cause.layer, IWARP_TERM_LAYER_LLP);
	ck_assert_uint_eq(p->s[0].cause.etype, IWARP_LLP_ETYPE_MPA);
	ck_assert_uint_eq(p->s[0].cause.ecode, IWARP_LLP_ECODE_CRC);
	ck_assert_int_eq(cmt_qp_state(p->s[0].qp), IWARP_QPS_ERR);
	ck_assert(st_async_wait(p->ctx, &ev, ST_WAIT_MS));
	ck_assert_int_eq(ev.event_type, IWARP_EVENT_QP_FATAL);
	ck_assert_uint_eq(ev.term.ecode, IWARP_LLP_ECODE_CRC);
	/* the damaged Send is not delivered; the receive and the Write end */
	ck_assert_int_eq(st_poll(&p->s[0].cq, &wc, 1, ST_WAIT_MS), 1);
	ck_assert_uint_ne(wc.status, IWARP_WC_SUCCESS);
	ck_assert_int_eq(st_poll(&p->s[0].cq, &wc, 1, ST_WAIT_MS), 1);
	ck_assert_uint_ne(wc.status, IWARP_WC_SUCCESS);
	/* side 1 never read the TERMINATE: end it by hand */
	memset(&at, 0, sizeof(at));
	at.qp_state = IWARP_QPS_ERR;
	ck_assert_int_eq(iwarp_modify_qp(p->s[1].qp, &at, IWARP_QP_STATE), 0);
	ck_assert(sp_wait_closed(p, 1, ST_WAIT_MS));
	drain_async(p);
	st_buf_free(&b[0]);
	st_buf_free(&b[1]);
	sp_close(p);
	free(p);
	st_wait_mem(base);
}
END_TEST

static Suite *stack_fault_suite(void)
{
	Suite *s = suite_create("stack_fault");
	TCase *tc = tcase_create("fault");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_short_io, 0, 4);
	tcase_add_loop_test(tc, test_cut_random, 0, 6);
	tcase_add_loop_test(tc, test_flip, 0, 2);
	tcase_add_test(tc, test_term_unsent);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_fault_suite)

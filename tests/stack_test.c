/*
 * tests/stack_test.c: every operation over the whole stack (public verbs +
 * CM + progress engines + real loopback TCP), the way an application uses
 * the library: Send, Send with Solicited Event, Send with Invalidate (of a
 * real MR of the receiver), RDMA Write, RDMA Read and inline Send, for
 * sizes 0 .. 8 MiB, for every MPA revision x CRC x markers combination.
 * Each transfer is verified byte for byte, the memory around the target
 * (guard bytes) is checked untouched, and every completion's opcode,
 * byte_len and flags are checked. One connection per combination.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"
#include "verbs/verbs.h"

#define MAXLEN ((size_t)8 << 20)
#define OFF    64 /* guard bytes before every target */
#define TAIL   64 /* guard bytes after every target */
#define BUFLEN (OFF + MAXLEN + TAIL)

static const uint32_t sizes[] = {0,   1,    3,	   4,	     511,     512,
				 513, 4095, 65536, 1u << 20, 8u << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

enum op {
	OP_SEND,
	OP_SEND_SE,
	OP_SEND_INV,
	OP_WRITE,
	OP_READ,
	OP_INLINE,
	OP_COUNT
};

struct fix {
	struct st_net n;
	struct st_conn k;
	struct st_buf csrc; /* client: Send/Write source */
	struct st_buf cdst; /* client: Read sink */
	struct st_buf sdst; /* server: receive and Write target */
	struct st_buf ssrc; /* server: Read source */
	uint64_t wr;
	int max_inline;
};

/* Fast deterministic fill (8 octets per step). */
static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		memcpy(p + i, &x, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

static void fix_open_attr(struct fix *f, const struct iwarp_context_attr *a)
{
	struct iwarp_device_attr da;
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE;

	memset(f, 0, sizeof(*f));
	st_net_open(&f->n, a);
	st_conn_open(&f->n, &f->k, NULL);
	st_buf_reg(&f->csrc, f->n.cli.pd, BUFLEN, 0);
	st_buf_reg(&f->cdst, f->n.cli.pd, BUFLEN, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&f->sdst, f->n.srv.pd, BUFLEN, rw);
	st_buf_reg(&f->ssrc, f->n.srv.pd, BUFLEN, IWARP_ACCESS_REMOTE_READ);
	ck_assert_int_eq(iwarp_query_device(f->n.cli.ctx, &da), 0);
	ck_assert_int_ge(da.max_inline_data, 80);
	f->max_inline = da.max_inline_data;
	f->wr = 1;
}

static void fix_open(struct fix *f, int rev, int crc, int markers)
{
	struct iwarp_context_attr a;

	st_attr(&a, rev, crc ? IWARP_CRC_REQUEST : IWARP_CRC_OFF, markers);
	fix_open_attr(f, &a);
}

static void fix_close(struct fix *f, bool from_server)
{
	st_conn_disconnect(&f->n, &f->k, from_server);
	st_conn_close(&f->k);
	st_buf_free(&f->csrc);
	st_buf_free(&f->cdst);
	st_buf_free(&f->sdst);
	st_buf_free(&f->ssrc);
	st_net_close(&f->n);
}

/* The guards around [OFF, OFF + len) of |b| are intact. */
static void check_guards(const struct st_buf *b, uint32_t len)
{
	st_check_fill(b->p, OFF, ST_GUARD);
	st_check_fill(b->p + OFF + len, TAIL, ST_GUARD);
}

static void data_eq(const uint8_t *got, const uint8_t *want, uint32_t len)
{
	uint32_t i;

	if (!memcmp(got, want, len))
		return;
	for (i = 0; got[i] == want[i]; i++)
		;
	ck_abort_msg("data differs at %u of %u: 0x%02x, wanted 0x%02x", i, len,
		     got[i], want[i]);
}

/* Send-family op (Send, SE, Invalidate, inline) of |len| octets. */
static void do_send(struct fix *f, enum op op, uint32_t len, uint64_t seed)
{
	struct iwarp_qp *cqp = f->k.c->qp, *sqp = f->k.s->qp;
	uint8_t inl[256];
	struct st_buf inv = {0};
	struct iwarp_mw *inv_mw = NULL;
	struct mw_bind_req br;
	struct iwarp_wc wc;
	enum iwarp_wr_opcode wop = IWARP_WR_SEND;
	unsigned int flags = IWARP_SEND_SIGNALED, wflags = 0;
	uint32_t inv_rkey = 0;
	uint64_t ws = f->wr++, wr = f->wr++;
	uint8_t *src = f->csrc.p + OFF;
	struct iwarp_mr *smr = f->csrc.mr;

	memset(f->sdst.p, ST_GUARD, OFF + (size_t)len + TAIL);
	fill(src, len, seed);
	ck_assert_int_eq(
		st_post_recv(sqp, wr, f->sdst.mr, f->sdst.p + OFF, len + TAIL),
		0);
	switch (op) {
	case OP_SEND_SE:
		flags |= IWARP_SEND_SOLICITED;
		wflags = IWARP_WC_WITH_SE;
		break;
	case OP_SEND_INV:
		/* a bound type 2 window of the receiver, in the QP's PD
		 * (only those may be invalidated remotely) */
		st_buf_reg(&inv, f->n.srv.pd, 64,
			   IWARP_ACCESS_LOCAL_WRITE |
				   IWARP_ACCESS_REMOTE_WRITE |
				   IWARP_ACCESS_MW_BIND);
		inv_mw = iwarp_alloc_mw(f->n.srv.pd, IWARP_MW_TYPE_2);
		ck_assert_ptr_nonnull(inv_mw);
		memset(&br, 0, sizeof(br));
		br.mw_stag = inv_mw->rkey;
		br.new_stag = iwarp_inc_rkey(inv_mw->rkey);
		br.mr_lkey = inv.mr->lkey;
		br.addr = (uint64_t)(uintptr_t)inv.p;
		br.length = 64;
		br.access = IWARP_ACCESS_REMOTE_WRITE;
		ck_assert_int_eq(mr_mw_bind(f->n.srv.ctx, f->n.srv.pd, &br), 0);
		inv_mw->rkey = br.new_stag;
		inv_rkey = inv_mw->rkey;
		wop = IWARP_WR_SEND_WITH_INV;
		wflags = IWARP_WC_WITH_INV;
		ck_assert_int_eq(
			mr_check_remote(f->n.srv.ctx, inv_rkey, f->n.srv.pd, 0,
					(uintptr_t)inv.p, 1, false, NULL),
			0);
		break;
	case OP_INLINE:
		ck_assert_uint_le(len, sizeof(inl));
		flags |= IWARP_SEND_INLINE;
		memcpy(inl, src, len);
		src = inl;
		smr = NULL;
		break;
	case OP_SEND:
	case OP_WRITE:
	case OP_READ:
	case OP_COUNT:
		break;
	}
	ck_assert_int_eq(st_post_send(cqp, ws, wop, flags, smr, src, len, 0, 0,
				      inv_rkey),
			 0);
	if (op == OP_INLINE)
		memset(inl, 0x5a, sizeof(inl)); /* the data was copied */

	st_poll_n(f->k.cq_s, &wc, 1);
	st_wc_check(&wc, wr, IWARP_WC_SUCCESS, IWARP_WC_RECV, len, wflags);
	ck_assert_uint_eq(wc.qp_num, sqp->qp_num);
	if (op == OP_SEND_INV) {
		ck_assert_uint_eq(wc.invalidated_rkey, inv_rkey);
		/* the STag is invalid from now on */
		ck_assert_int_eq(
			mr_check_remote(f->n.srv.ctx, inv_rkey, f->n.srv.pd, 0,
					(uintptr_t)inv.p, 1, false, NULL),
			IWARP_ERR_RDMAP_STAG);
		ck_assert_int_eq(iwarp_dealloc_mw(inv_mw), 0);
		st_buf_free(&inv);
	}
	st_poll_n(f->k.cq_c, &wc, 1);
	st_wc_check(&wc, ws, IWARP_WC_SUCCESS, IWARP_WC_SEND, len, 0);
	ck_assert_uint_eq(wc.qp_num, cqp->qp_num);
	data_eq(f->sdst.p + OFF, f->csrc.p + OFF, len);
	check_guards(&f->sdst, len);
}

/* RDMA Write of |len| octets, then a zero-length Send: its receive
 * completion says the Write was placed (RFC 5040 §5.5 ordering). */
static void do_write(struct fix *f, uint32_t len, uint64_t seed)
{
	struct iwarp_qp *cqp = f->k.c->qp, *sqp = f->k.s->qp;
	struct iwarp_wc wc[2];
	uint64_t ww = f->wr++, ws = f->wr++, wr = f->wr++;

	memset(f->sdst.p, ST_GUARD, OFF + (size_t)len + TAIL);
	fill(f->csrc.p + OFF, len, seed);
	ck_assert_int_eq(st_post_recv(sqp, wr, NULL, NULL, 0), 0);
	ck_assert_int_eq(
		st_post_send(cqp, ww, IWARP_WR_RDMA_WRITE, IWARP_SEND_SIGNALED,
			     f->csrc.mr, f->csrc.p + OFF, len,
			     (uintptr_t)(f->sdst.p + OFF), f->sdst.mr->rkey, 0),
		0);
	ck_assert_int_eq(st_post_send(cqp, ws, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, NULL, NULL, 0, 0, 0,
				      0),
			 0);
	st_poll_n(f->k.cq_s, wc, 1);
	st_wc_check(&wc[0], wr, IWARP_WC_SUCCESS, IWARP_WC_RECV, 0, 0);
	st_poll_n(f->k.cq_c, wc, 2);
	st_wc_check(&wc[0], ww, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, len, 0);
	st_wc_check(&wc[1], ws, IWARP_WC_SUCCESS, IWARP_WC_SEND, 0, 0);
	data_eq(f->sdst.p + OFF, f->csrc.p + OFF, len);
	check_guards(&f->sdst, len);
}

/* RDMA Read of |len| octets from the server into the client. */
static void do_read(struct fix *f, uint32_t len, uint64_t seed)
{
	struct iwarp_qp *cqp = f->k.c->qp;
	struct iwarp_wc wc;
	uint64_t wr = f->wr++;

	memset(f->cdst.p, ST_GUARD, OFF + (size_t)len + TAIL);
	fill(f->ssrc.p + OFF, len, seed);
	ck_assert_int_eq(
		st_post_send(cqp, wr, IWARP_WR_RDMA_READ, IWARP_SEND_SIGNALED,
			     f->cdst.mr, f->cdst.p + OFF, len,
			     (uintptr_t)(f->ssrc.p + OFF), f->ssrc.mr->rkey, 0),
		0);
	st_poll_n(f->k.cq_c, &wc, 1);
	st_wc_check(&wc, wr, IWARP_WC_SUCCESS, IWARP_WC_RDMA_READ, len, 0);
	data_eq(f->cdst.p + OFF, f->ssrc.p + OFF, len);
	check_guards(&f->cdst, len);
}

/* (rev, crc, markers) of loop index |i|. */
static void combo(int i, int *rev, int *crc, int *markers)
{
	*rev = i & 1 ? 1 : 2;
	*crc = (i >> 1) & 1;
	*markers = (i >> 2) & 1;
}

START_TEST(test_all_ops)
{
	long base = iw_mem_outstanding();
	struct fix *f = calloc(1, sizeof(*f));
	struct iwarp_context_attr q;
	int rev, crc, markers, op;
	uint64_t seed = 1000u * (uint64_t)_i;
	size_t si;

	ck_assert_ptr_nonnull(f);
	combo(_i, &rev, &crc, &markers);
	fix_open(f, rev, crc, markers);
	ck_assert_int_eq(iwarp_query_context(f->n.cli.ctx, &q), 0);
	ck_assert_int_eq(q.mpa_rev, rev);
	for (si = 0; si < NSIZES; si++) {
		uint32_t len = sizes[si];

		for (op = 0; op < OP_COUNT; op++) {
			seed++;
			switch ((enum op)op) {
			case OP_SEND:
			case OP_SEND_SE:
			case OP_SEND_INV:
				do_send(f, (enum op)op, len, seed);
				break;
			case OP_INLINE:
				if (len <= (uint32_t)f->max_inline) {
					do_send(f, OP_INLINE, len, seed);
				} else {
					/* beyond the inline limit: refused */
					ck_assert_int_eq(
						st_post_send(f->k.c->qp, 0,
							     IWARP_WR_SEND,
							     IWARP_SEND_INLINE,
							     NULL, f->csrc.p,
							     len, 0, 0, 0),
						-EINVAL);
				}
				break;
			case OP_WRITE:
				do_write(f, len, seed);
				break;
			case OP_READ:
				do_read(f, len, seed);
				break;
			case OP_COUNT:
				break;
			}
		}
	}
	st_cq_empty(f->k.cq_c);
	st_cq_empty(f->k.cq_s);
	fix_close(f, _i & 1);
	free(f);
	st_wait_mem(base);
}
END_TEST

/*
 * Many WRs of every kind in flight at once on one connection: completions
 * come in posting order with the right opcodes and lengths, unsignaled WRs
 * complete silently, and every transfer is intact.
 */
START_TEST(test_pipelined)
{
	enum { N = 48 };
	long base = iw_mem_outstanding();
	struct fix *f = calloc(1, sizeof(*f));
	struct iwarp_wc wc[N];
	uint32_t lens[N], off[N];
	enum op ops[N];
	uint64_t rnd = 77;
	int i, nsig = 0, nrecv = 0, sig[N];
	uint32_t pos = 0;

	ck_assert_ptr_nonnull(f);
	fix_open(f, _i ? 1 : 2, _i, _i);
	fill(f->csrc.p, BUFLEN, 5);
	fill(f->ssrc.p, BUFLEN, 6);
	for (i = 0; i < N; i++) {
		switch (iw_test_rand(&rnd) % 3) {
		case 0:
			ops[i] = OP_SEND;
			break;
		case 1:
			ops[i] = OP_WRITE;
			break;
		default:
			ops[i] = OP_READ;
			break;
		}
		lens[i] = sizes[iw_test_rand(&rnd) % 9]; /* up to 64 KiB */
		off[i] = pos;
		pos += lens[i] + 8;
		sig[i] = (int)(iw_test_rand(&rnd) & 1) || i == N - 1;
		if (ops[i] == OP_SEND) {
			ck_assert_int_eq(
				st_post_recv(f->k.s->qp, 1000u + (uint64_t)i,
					     f->sdst.mr,
					     f->sdst.p + OFF + off[i], lens[i]),
				0);
			nrecv++;
		}
	}
	ck_assert_uint_le(pos, MAXLEN);
	for (i = 0; i < N; i++) {
		unsigned int fl = sig[i] ? IWARP_SEND_SIGNALED : 0;
		int rc;

		switch (ops[i]) {
		case OP_WRITE:
			rc = st_post_send(f->k.c->qp, (uint64_t)i,
					  IWARP_WR_RDMA_WRITE, fl, f->csrc.mr,
					  f->csrc.p + OFF + off[i], lens[i],
					  (uintptr_t)(f->sdst.p + OFF + off[i]),
					  f->sdst.mr->rkey, 0);
			break;
		case OP_READ:
			rc = st_post_send(f->k.c->qp, (uint64_t)i,
					  IWARP_WR_RDMA_READ, fl, f->cdst.mr,
					  f->cdst.p + OFF + off[i], lens[i],
					  (uintptr_t)(f->ssrc.p + OFF + off[i]),
					  f->ssrc.mr->rkey, 0);
			break;
		case OP_SEND:
		case OP_SEND_SE:
		case OP_SEND_INV:
		case OP_INLINE:
		case OP_COUNT:
		default:
			rc = st_post_send(f->k.c->qp, (uint64_t)i,
					  IWARP_WR_SEND, fl, f->csrc.mr,
					  f->csrc.p + OFF + off[i], lens[i], 0,
					  0, 0);
			break;
		}
		ck_assert_int_eq(rc, 0);
		nsig += sig[i];
	}
	st_poll_n(f->k.cq_c, wc, nsig);
	{
		int j = 0;

		for (i = 0; i < N; i++) {
			if (!sig[i])
				continue;
			st_wc_check(&wc[j], (uint64_t)i, IWARP_WC_SUCCESS,
				    ops[i] == OP_WRITE	? IWARP_WC_RDMA_WRITE
				    : ops[i] == OP_READ ? IWARP_WC_RDMA_READ
							: IWARP_WC_SEND,
				    lens[i], 0);
			j++;
		}
	}
	st_poll_n(f->k.cq_s, wc, nrecv);
	{
		int j = 0;

		for (i = 0; i < N; i++) {
			if (ops[i] != OP_SEND)
				continue;
			st_wc_check(&wc[j], 1000u + (uint64_t)i,
				    IWARP_WC_SUCCESS, IWARP_WC_RECV, lens[i],
				    0);
			j++;
		}
	}
	/* Writes were placed before the last Send's receive completed, and
	 * they precede it on the stream: all are visible now, unless the
	 * last WR is not a Send; then post a marker Send */
	ck_assert_int_eq(st_post_recv(f->k.s->qp, 9999, NULL, NULL, 0), 0);
	ck_assert_int_eq(st_post_send(f->k.c->qp, 9998, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, NULL, NULL, 0, 0, 0,
				      0),
			 0);
	st_poll_n(f->k.cq_s, wc, 1);
	st_wc_check(&wc[0], 9999, IWARP_WC_SUCCESS, IWARP_WC_RECV, 0, 0);
	st_poll_n(f->k.cq_c, wc, 1);
	st_wc_check(&wc[0], 9998, IWARP_WC_SUCCESS, IWARP_WC_SEND, 0, 0);
	for (i = 0; i < N; i++) {
		if (ops[i] == OP_READ)
			data_eq(f->cdst.p + OFF + off[i],
				f->ssrc.p + OFF + off[i], lens[i]);
		else
			data_eq(f->sdst.p + OFF + off[i],
				f->csrc.p + OFF + off[i], lens[i]);
	}
	st_check_fill(f->sdst.p, OFF, ST_GUARD);
	st_cq_empty(f->k.cq_c);
	st_cq_empty(f->k.cq_s);
	fix_close(f, false);
	free(f);
	st_wait_mem(base);
}
END_TEST

/*
 * Solicited-only notification over the wire: the receiver's CQ is armed
 * for solicited events; a plain Send then a Send with SE arrive. The one
 * channel event is raised by the SE Send's completion (RFC 5040 §5.3), so
 * when it fires both completions are already in the CQ (a plain Send that
 * fired the event would have done so before the SE Send arrived).
 */
START_TEST(test_solicited_notify)
{
	long base = iw_mem_outstanding();
	struct fix *f = calloc(1, sizeof(*f));
	struct pollfd pfd;
	struct iwarp_cq *ecq;
	struct iwarp_wc wc[3];
	void *ectx;

	ck_assert_ptr_nonnull(f);
	fix_open(f, 2, 1, 0);
	ck_assert_int_eq(st_post_recv(f->k.s->qp, 1, f->sdst.mr, f->sdst.p, 64),
			 0);
	ck_assert_int_eq(
		st_post_recv(f->k.s->qp, 2, f->sdst.mr, f->sdst.p + 64, 64), 0);
	ck_assert_int_eq(iwarp_req_notify_cq(f->k.cq_s->cq, 1), 0);
	ck_assert_int_eq(st_post_send(f->k.c->qp, 11, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, f->csrc.mr,
				      f->csrc.p, 10, 0, 0, 0),
			 0);
	ck_assert_int_eq(
		st_post_send(f->k.c->qp, 12, IWARP_WR_SEND,
			     IWARP_SEND_SIGNALED | IWARP_SEND_SOLICITED,
			     f->csrc.mr, f->csrc.p, 20, 0, 0, 0),
		0);
	pfd.fd = f->k.cq_s->ch->fd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, ST_WAIT_MS), 1);
	ck_assert_int_eq(iwarp_get_cq_event(f->k.cq_s->ch, &ecq, &ectx), 0);
	ck_assert_ptr_eq(ecq, f->k.cq_s->cq);
	iwarp_ack_cq_events(ecq, 1);
	ck_assert_int_eq(iwarp_poll_cq(f->k.cq_s->cq, 3, wc), 2);
	st_wc_check(&wc[0], 1, IWARP_WC_SUCCESS, IWARP_WC_RECV, 10, 0);
	st_wc_check(&wc[1], 2, IWARP_WC_SUCCESS, IWARP_WC_RECV, 20,
		    IWARP_WC_WITH_SE);
	/* one event only: watched for ST_QUIET_MS, as no later event of
	 * this CQ could tell a second one apart */
	ck_assert_int_eq(poll(&pfd, 1, ST_QUIET_MS), 0);
	st_poll_n(f->k.cq_c, wc, 2);
	st_wc_check(&wc[0], 11, IWARP_WC_SUCCESS, IWARP_WC_SEND, 10, 0);
	st_wc_check(&wc[1], 12, IWARP_WC_SUCCESS, IWARP_WC_SEND, 20, 0);
	fix_close(f, true);
	free(f);
	st_wait_mem(base);
}
END_TEST

/*
 * The responder (server) posts first. RFC 5044 §7.1: it sends nothing
 * before the initiator's first FPDU (responder_tx_wait_ms 0); with
 * responder_tx_wait_ms it transmits once that time passed without one
 * (Linux siw's behaviour, which perftest's ib_write_lat relies on).
 */
START_TEST(test_responder_first)
{
	long base = iw_mem_outstanding();
	struct fix *f = calloc(1, sizeof(*f));
	struct iwarp_context_attr a;
	struct iwarp_wc wc[2];

	ck_assert_ptr_nonnull(f);
	st_attr(&a, 2, IWARP_CRC_REQUEST, 0);
	a.responder_tx_wait_ms = _i ? 150 : 0;
	fix_open_attr(f, &a);
	fill(f->ssrc.p, 32, 5);
	ck_assert_int_eq(st_post_recv(f->k.c->qp, 1, f->cdst.mr, f->cdst.p, 64),
			 0);
	ck_assert_int_eq(st_post_send(f->k.s->qp, 2, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, f->ssrc.mr,
				      f->ssrc.p, 32, 0, 0, 0),
			 0);
	if (_i) {
		/* the client has sent nothing: only the timer opens the way */
		st_poll_n(f->k.cq_c, wc, 1);
		st_wc_check(&wc[0], 1, IWARP_WC_SUCCESS, IWARP_WC_RECV, 32, 0);
	} else {
		/* nothing arrives before the client's first FPDU: watched
		 * for ST_QUIET_MS (a slow machine only weakens this) */
		ck_assert_int_eq(st_poll(f->k.cq_c, wc, 1, ST_QUIET_MS), 0);
		ck_assert_int_eq(
			st_post_recv(f->k.s->qp, 3, f->sdst.mr, f->sdst.p, 64),
			0);
		ck_assert_int_eq(st_post_send(f->k.c->qp, 4, IWARP_WR_SEND,
					      IWARP_SEND_SIGNALED, f->csrc.mr,
					      f->csrc.p, 8, 0, 0, 0),
				 0);
		st_poll_n(f->k.cq_c, wc, 2); /* the Send, then the Recv */
		ck_assert_uint_eq(wc[0].wr_id + wc[1].wr_id, 5);
		st_poll_n(f->k.cq_s, wc, 2);
	}
	if (_i)
		st_poll_n(f->k.cq_s, wc, 1);
	ck_assert_int_eq(memcmp(f->cdst.p, f->ssrc.p, 32), 0);
	fix_close(f, true);
	free(f);
	st_wait_mem(base);
}
END_TEST

/*
 * Sends that reach the server before it posted any receive wait for one
 * (docs/receive-wait.md) instead of ending the connection as RFC 5041
 * §7.2 would have it at once (siw): posted late, the receives complete in
 * order with the data, and the connection carries on. The bound is set
 * far beyond any slow machine; the Sends are on the wire (completed at
 * the client) and the server is left ST_QUIET_MS to take them in first
 * (a slow machine only makes the wait less likely to be exercised).
 */
START_TEST(test_send_waits_for_recv)
{
	long base = iw_mem_outstanding();
	struct fix *f = calloc(1, sizeof(*f));
	struct iwarp_wc wc[4];
	int i;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(setenv("IWARP_RNR_WAIT_MS", "600000", 1), 0);
	fix_open(f, 2, IWARP_CRC_REQUEST, _i);
	fill(f->csrc.p, 400, 11);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(st_post_send(f->k.c->qp, 10 + (uint64_t)i,
					      IWARP_WR_SEND,
					      IWARP_SEND_SIGNALED, f->csrc.mr,
					      f->csrc.p + 100 * i, 100, 0, 0,
					      0),
				 0);
	st_poll_n(f->k.cq_c, wc, 3);
	ck_assert_int_eq(st_poll(f->k.cq_s, wc, 1, ST_QUIET_MS), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(st_post_recv(f->k.s->qp, 20 + (uint64_t)i,
					      f->sdst.mr, f->sdst.p + 128 * i,
					      128),
				 0);
	st_poll_n(f->k.cq_s, wc, 3);
	for (i = 0; i < 3; i++) {
		st_wc_check(&wc[i], 20 + (uint64_t)i, IWARP_WC_SUCCESS,
			    IWARP_WC_RECV, 100, 0);
		ck_assert_int_eq(
			memcmp(f->sdst.p + 128 * i, f->csrc.p + 100 * i, 100),
			0);
	}
	/* the connection goes on: a receive posted first, as usual */
	ck_assert_int_eq(
		st_post_recv(f->k.s->qp, 30, f->sdst.mr, f->sdst.p, 128), 0);
	ck_assert_int_eq(st_post_send(f->k.c->qp, 31, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, f->csrc.mr,
				      f->csrc.p + 300, 100, 0, 0, 0),
			 0);
	st_poll_n(f->k.cq_s, wc, 1);
	st_wc_check(&wc[0], 30, IWARP_WC_SUCCESS, IWARP_WC_RECV, 100, 0);
	st_poll_n(f->k.cq_c, wc, 1);
	fix_close(f, true);
	free(f);
	ck_assert_int_eq(unsetenv("IWARP_RNR_WAIT_MS"), 0);
	st_wait_mem(base);
}
END_TEST

/*
 * A thread that waits only in iwarp_get_cq_event (blocking, nothing else
 * polls the channel): rounds of a Send to the server, each ended by the
 * server's receive event. With direct sockets (the default) this thread reads
 * the message itself while it waits; the channel's fd must still show
 * exactly the events left (none, once this one was taken).
 */
START_TEST(test_event_wait)
{
	long base = iw_mem_outstanding();
	struct fix *f = malloc(sizeof(*f));
	struct iwarp_wc wc;
	struct iwarp_cq *ecq;
	struct pollfd pfd;
	void *ectx;
	int i;

	ck_assert_ptr_nonnull(f);
	fix_open(f, 2, 0, 0);
	for (i = 0; i < 50; i++) {
		uint64_t r = 1000 + (uint64_t)i, w = 2000 + (uint64_t)i;

		ck_assert_int_eq(st_post_recv(f->k.s->qp, r, f->sdst.mr,
					      f->sdst.p + OFF, 64),
				 0);
		ck_assert_int_eq(iwarp_req_notify_cq(f->k.cq_s->cq, 0), 0);
		fill(f->csrc.p + OFF, 64, (uint64_t)i);
		ck_assert_int_eq(st_post_send(f->k.c->qp, w, IWARP_WR_SEND,
					      IWARP_SEND_SIGNALED, f->csrc.mr,
					      f->csrc.p + OFF, 64, 0, 0, 0),
				 0);
		ck_assert_int_eq(iwarp_get_cq_event(f->k.cq_s->ch, &ecq, &ectx),
				 0);
		ck_assert_ptr_eq(ecq, f->k.cq_s->cq);
		iwarp_ack_cq_events(ecq, 1);
		/* the one event was taken: the counter is back to zero */
		pfd.fd = f->k.cq_s->ch->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ck_assert_int_eq(poll(&pfd, 1, 0), 0);
		st_poll_n(f->k.cq_s, &wc, 1);
		st_wc_check(&wc, r, IWARP_WC_SUCCESS, IWARP_WC_RECV, 64, 0);
		data_eq(f->sdst.p + OFF, f->csrc.p + OFF, 64);
		st_poll_n(f->k.cq_c, &wc, 1);
		st_wc_check(&wc, w, IWARP_WC_SUCCESS, IWARP_WC_SEND, 64, 0);
	}
	fix_close(f, false);
	free(f);
	st_wait_mem(base);
}
END_TEST

struct poster {
	struct fix *f;
	uint64_t wr_id;
	int rc;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;

	p->rc = st_post_send(
		p->f->k.c->qp, p->wr_id, IWARP_WR_RDMA_WRITE,
		IWARP_SEND_SIGNALED, p->f->csrc.mr, p->f->csrc.p + OFF, 64,
		(uintptr_t)(p->f->sdst.p + OFF), p->f->sdst.mr->rkey, 0);
	return NULL;
}

/*
 * The completion a thread waits for in iwarp_get_cq_event is made by
 * another thread: here the Write's own completion, produced by whoever
 * sends it (the poster, the progress thread, or the waiter while it reads
 * the sockets). Each round's wait must end with exactly that event,
 * whichever thread got there first.
 */
START_TEST(test_event_wait_other_poster)
{
	long base = iw_mem_outstanding();
	struct fix *f = malloc(sizeof(*f));
	struct poster p;
	struct iwarp_wc wc;
	struct iwarp_cq *ecq;
	pthread_t th;
	void *ectx;
	int i;

	ck_assert_ptr_nonnull(f);
	fix_open(f, 2, 0, 0);
	for (i = 0; i < 50; i++) {
		ck_assert_int_eq(iwarp_req_notify_cq(f->k.cq_c->cq, 0), 0);
		fill(f->csrc.p + OFF, 64, (uint64_t)i);
		p.f = f;
		p.wr_id = 3000 + (uint64_t)i;
		p.rc = -1;
		ck_assert_int_eq(pthread_create(&th, NULL, poster_main, &p), 0);
		ck_assert_int_eq(iwarp_get_cq_event(f->k.cq_c->ch, &ecq, &ectx),
				 0);
		ck_assert_ptr_eq(ecq, f->k.cq_c->cq);
		iwarp_ack_cq_events(ecq, 1);
		pthread_join(th, NULL);
		ck_assert_int_eq(p.rc, 0);
		st_poll_n(f->k.cq_c, &wc, 1);
		st_wc_check(&wc, p.wr_id, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE,
			    64, 0);
	}
	fix_close(f, false);
	free(f);
	st_wait_mem(base);
}
END_TEST

static Suite *stack_suite(void)
{
	Suite *s = suite_create("stack");
	TCase *tc = tcase_create("ops");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_all_ops, 0, 8);
	tcase_add_loop_test(tc, test_pipelined, 0, 2);
	tcase_add_test(tc, test_solicited_notify);
	tcase_add_loop_test(tc, test_responder_first, 0, 2);
	tcase_add_loop_test(tc, test_send_waits_for_recv, 0, 2);
	tcase_add_test(tc, test_event_wait);
	tcase_add_test(tc, test_event_wait_other_poster);
	suite_add_tcase(s, tc);

	/* the same over io_uring sockets (IWARP_SOCKET_IO=ring; the default
	 * with one engine is direct) */
	tc = tcase_create("ring");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, iw_test_env_socket_ring,
				  iw_test_env_default);
	tcase_add_loop_test(tc, test_all_ops, 0, 8);
	tcase_add_loop_test(tc, test_pipelined, 0, 2);
	tcase_add_test(tc, test_solicited_notify);
	tcase_add_loop_test(tc, test_send_waits_for_recv, 0, 2);
	tcase_add_test(tc, test_event_wait);
	tcase_add_test(tc, test_event_wait_other_poster);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_suite)

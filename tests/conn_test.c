/*
 * tests/conn_test.c: the QP datapath (verbs/conn_*.c), two qp_conns wired
 * back to back by a harness that moves the octets one offers in tx_iov
 * (accepting random prefixes) to the other's rx_iov in chunks of random
 * sizes (including single octets). No sockets, deterministic.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm_testutil.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_rx.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_term.h"
#include "testutil.h"
#include "util/mem.h"
#include "verbs/qp_conn.h"
#include "verbs/verbs.h"

#define BUF_LEN	     ((size_t)9 << 20)
#define GUARD	     0xEE
#define EP_IOV_MAX_T 256
/* a gather that takes every FPDU a connection frames ahead (127 slots of
 * at most 3 iovecs without markers and one payload piece) */
#define EP_IOV_MAX_WHOLE 512

static long mem_start;

/* One end: verbs objects, a conn, and the octets it sent. */
struct side {
	struct iwarp_context *ctx;
	struct iwarp_pd *pd, *pd2;
	struct iwarp_cq *cq;
	struct iwarp_qp *qp;
	struct qp_conn *conn;
	uint8_t *buf;
	struct iwarp_mr *mr;
	/* everything this side's conn handed to "TCP", and how much of it
	 * was delivered to the peer */
	uint8_t *wire;
	size_t wire_len, wire_cap, delivered;
	bool shut, eof;
	int closes, close_err;
	bool have_cause;
	struct iwarp_term_cause cause;
	uint64_t flip_at; /* corrupt the octet at this wire offset (or ~0) */
};

struct pair {
	struct side a, b; /* a: initiator */
	uint64_t rnd;
	int chunk_mode; /* 0 random, 1 one octet, 2 whole */
};

static void on_close(void *arg, int err, const struct iwarp_term_cause *c)
{
	struct side *s = arg;

	s->closes++;
	s->close_err = err;
	s->have_cause = c != NULL;
	if (c)
		s->cause = *c;
}

static void io_shutdown(void *arg)
{
	struct side *s = arg;

	s->shut = true;
}

static const struct qp_conn_io test_io = {
	.kick_tx = NULL,
	.shutdown = io_shutdown,
};

static void side_open(struct side *s)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_qp_attr at;

	memset(s, 0, sizeof(*s));
	s->flip_at = UINT64_MAX;
	s->ctx = iwarp_open_context(NULL);
	ck_assert_ptr_nonnull(s->ctx);
	s->pd = iwarp_alloc_pd(s->ctx);
	s->pd2 = iwarp_alloc_pd(s->ctx);
	ck_assert_ptr_nonnull(s->pd);
	s->cq = iwarp_create_cq(s->ctx, 4096, NULL, NULL, 0);
	ck_assert_ptr_nonnull(s->cq);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 256;
	qa.cap.max_recv_wr = 256;
	qa.cap.max_send_sge = 6;
	qa.cap.max_recv_sge = 6;
	qa.cap.max_inline_data = 128;
	s->qp = iwarp_create_qp(s->pd, &qa);
	ck_assert_ptr_nonnull(s->qp);
	memset(&at, 0, sizeof(at));
	at.qp_state = IWARP_QPS_INIT;
	at.qp_access_flags = IWARP_ACCESS_LOCAL_WRITE |
			     IWARP_ACCESS_REMOTE_WRITE |
			     IWARP_ACCESS_REMOTE_READ;
	ck_assert_int_eq(
		iwarp_modify_qp(s->qp, &at,
				IWARP_QP_STATE | IWARP_QP_ACCESS_FLAGS),
		0);
	at.qp_state = IWARP_QPS_RTR;
	ck_assert_int_eq(iwarp_modify_qp(s->qp, &at, IWARP_QP_STATE), 0);
	s->buf = malloc(BUF_LEN);
	ck_assert_ptr_nonnull(s->buf);
	memset(s->buf, GUARD, BUF_LEN);
	s->mr = iwarp_reg_mr(s->pd, s->buf, BUF_LEN,
			     IWARP_ACCESS_LOCAL_WRITE |
				     IWARP_ACCESS_REMOTE_WRITE |
				     IWARP_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(s->mr);
}

static void side_close(struct side *s)
{
	if (s->conn)
		qp_conn_destroy(s->conn);
	ck_assert_int_eq(iwarp_destroy_qp(s->qp), 0);
	ck_assert_int_eq(iwarp_dereg_mr(s->mr), 0);
	ck_assert_int_eq(iwarp_destroy_cq(s->cq), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(s->pd2), 0);
	ck_assert_int_eq(iwarp_close_context(s->ctx), 0);
	free(s->buf);
	free(s->wire);
}

struct neg_opts {
	bool crc, markers, p2p;
	enum mpa_rtr rtr;
	uint16_t ird_a, ord_a, ird_b, ord_b;
	size_t fpdu_max;
};

static void neg_default(struct neg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ird_a = o->ord_a = o->ird_b = o->ord_b = 16;
	o->fpdu_max = 1448;
}

static void pair_open(struct pair *p, const struct neg_opts *o, uint64_t seed)
{
	struct mpa_neg_result n;

	memset(p, 0, sizeof(*p));
	p->rnd = seed | 1;
	side_open(&p->a);
	side_open(&p->b);
	memset(&n, 0, sizeof(n));
	n.crc = o->crc;
	n.markers_tx = n.markers_rx = o->markers;
	n.rev = 2;
	n.enhanced = true;
	n.p2p = o->p2p;
	n.rtr = o->rtr;
	n.ird = o->ird_a;
	n.ord = o->ord_a;
	p->a.conn = qp_conn_create(qp_from_pub(p->a.qp), &n, true, o->fpdu_max,
				   on_close, &p->a);
	ck_assert_ptr_nonnull(p->a.conn);
	n.ird = o->ird_b;
	n.ord = o->ord_b;
	p->b.conn = qp_conn_create(qp_from_pub(p->b.qp), &n, false, o->fpdu_max,
				   on_close, &p->b);
	ck_assert_ptr_nonnull(p->b.conn);
	qp_conn_set_io(p->a.conn, &test_io, &p->a);
	qp_conn_set_io(p->b.conn, &test_io, &p->b);
	ck_assert_int_eq(cmt_qp_state(p->a.qp), IWARP_QPS_RTS);
}

static void pair_close(struct pair *p)
{
	side_close(&p->a);
	side_close(&p->b);
}

static size_t rnd_upto(struct pair *p, size_t n)
{
	return n ? (size_t)(iw_test_rand(&p->rnd) % n) + 1 : 0;
}

static void wire_append(struct side *s, const void *d, size_t n)
{
	if (s->wire_len + n > s->wire_cap) {
		s->wire_cap = (s->wire_len + n) * 2 + 4096;
		s->wire = realloc(s->wire, s->wire_cap);
		ck_assert_ptr_nonnull(s->wire);
	}
	memcpy(s->wire + s->wire_len, d, n);
	s->wire_len += n;
}

/* Lets |s| send: accepts a random prefix of what it offers. */
static bool pump_tx_cap(struct pair *p, struct side *s, int cap)
{
	struct iovec iov[EP_IOV_MAX_WHOLE];
	size_t total = 0, take, left, k;
	int n, i;

	n = qp_conn_tx_iov(s->conn, iov, cap);
	if (n <= 0)
		return false;
	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	ck_assert_uint_gt(total, 0);
	take = (p->chunk_mode == 0 && iw_test_rand(&p->rnd) % 4 == 0)
		       ? rnd_upto(p, total)
		       : total;
	left = take;
	for (i = 0; i < n && left; i++) {
		k = iov[i].iov_len < left ? iov[i].iov_len : left;
		wire_append(s, iov[i].iov_base, k);
		left -= k;
	}
	qp_conn_tx_done(s->conn, take);
	return true;
}

static bool pump_tx(struct pair *p, struct side *s)
{
	return pump_tx_cap(p, s, EP_IOV_MAX_T);
}

/* Delivers a chunk of what |src| sent to |dst|. */
static bool pump_rx(struct pair *p, struct side *src, struct side *dst)
{
	struct iovec iov[EP_IOV_MAX_T];
	size_t avail = src->wire_len - src->delivered, chunk, done = 0, k;
	uint64_t r;
	int n, i;

	if (!avail) {
		if (src->shut && !dst->eof) {
			dst->eof = true;
			qp_conn_closed(dst->conn, 0);
			return true;
		}
		return false;
	}
	switch (p->chunk_mode) {
	case 1:
		chunk = 1;
		break;
	case 2:
		chunk = avail;
		break;
	default:
		r = iw_test_rand(&p->rnd) % 8;
		chunk = r == 0	 ? 1
			: r == 1 ? rnd_upto(p, 16)
			: r == 2 ? rnd_upto(p, 1500)
				 : rnd_upto(p, 300000);
		break;
	}
	if (chunk > avail)
		chunk = avail;
	n = qp_conn_rx_iov(dst->conn, iov, EP_IOV_MAX_T);
	if (n <= 0)
		return false;
	for (i = 0; i < n && done < chunk; i++) {
		k = iov[i].iov_len < chunk - done ? iov[i].iov_len
						  : chunk - done;
		memcpy(iov[i].iov_base, src->wire + src->delivered + done, k);
		if (src->flip_at >= src->delivered + done &&
		    src->flip_at < src->delivered + done + k)
			((uint8_t *)iov[i].iov_base)[src->flip_at -
						     (src->delivered + done)] ^=
				0x01;
		done += k;
	}
	src->delivered += done;
	qp_conn_rx_done(dst->conn, done);
	return true;
}

static void pump(struct pair *p)
{
	bool moved;
	int guard = 0;

	do {
		moved = false;
		moved |= pump_tx(p, &p->a);
		moved |= pump_tx(p, &p->b);
		moved |= pump_rx(p, &p->a, &p->b);
		moved |= pump_rx(p, &p->b, &p->a);
		ck_assert_int_lt(++guard, 10000000);
	} while (moved);
}

static int poll_all(struct side *s, struct iwarp_wc *wc, int max)
{
	int n = 0, r;

	while (n < max) {
		r = iwarp_poll_cq(s->cq, max - n, wc + n);
		ck_assert_int_ge(r, 0);
		if (!r)
			break;
		n += r;
	}
	return n;
}

static void post_recv(struct side *s, uint64_t id, size_t off, uint32_t len,
		      int nsge)
{
	struct iwarp_sge sge[3];
	struct iwarp_recv_wr wr, *bad;
	uint32_t part = nsge > 1 ? len / 2 : len;
	int i;

	memset(&wr, 0, sizeof(wr));
	for (i = 0; i < nsge; i++) {
		sge[i].addr = (uint64_t)(uintptr_t)(s->buf + off);
		sge[i].lkey = s->mr->lkey;
		sge[i].length = i == nsge - 1 ? len : part;
		off += sge[i].length;
		len -= sge[i].length;
	}
	wr.wr_id = id;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	ck_assert_int_eq(iwarp_post_recv(s->qp, &wr, &bad), 0);
}

static int post_send(struct side *s, uint64_t id, enum iwarp_wr_opcode op,
		     unsigned int flags, size_t off, uint32_t len,
		     uint64_t raddr, uint32_t rkey, int nsge)
{
	struct iwarp_sge sge[3];
	struct iwarp_send_wr wr, *bad;
	uint32_t part = nsge > 1 ? len / 3 : len;
	int i;

	memset(&wr, 0, sizeof(wr));
	for (i = 0; i < nsge; i++) {
		sge[i].addr = (uint64_t)(uintptr_t)(s->buf + off);
		sge[i].lkey = s->mr->lkey;
		sge[i].length = i == nsge - 1 ? len : part;
		off += sge[i].length;
		len -= sge[i].length;
	}
	wr.wr_id = id;
	wr.opcode = op;
	wr.send_flags = flags | IWARP_SEND_SIGNALED;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	wr.invalidate_rkey = rkey;
	return iwarp_post_send(s->qp, &wr, &bad);
}

static uint64_t addr_of(const struct side *s, size_t off)
{
	return (uint64_t)(uintptr_t)(s->buf + off);
}

/* ---- the operation matrix ---- */
enum op_kind { OP_SEND, OP_SEND_SE, OP_SEND_INV, OP_WRITE, OP_READ, OP_INLINE };

static const uint32_t sizes[] = {0,   1,    3,	   4,	     511,     512,
				 513, 4095, 65536, 1u << 20, 8u << 20};
#define NSIZES	(sizeof(sizes) / sizeof(sizes[0]))
#define DST_OFF ((size_t)4096)

/* Runs one operation of |len| octets from a to b, verifies data and WCs. */
static void run_op(struct pair *p, enum op_kind op, uint32_t len, uint64_t seed)
{
	struct side *a = &p->a, *b = &p->b;
	struct iwarp_wc wc[8];
	uint8_t *src, *dst;
	int n, nsge = len >= 3 ? 3 : 1;
	unsigned int flags = 0;
	size_t w0;
	static uint8_t inv_buf[64];
	struct iwarp_mr *inv_mr = NULL;
	struct iwarp_mw *inv_mw = NULL;
	struct mw_bind_req br;

	/* READ: b's buffer is the source, a's the sink */
	src = op == OP_READ ? b->buf : a->buf;
	dst = op == OP_READ ? a->buf + DST_OFF : b->buf + DST_OFF;
	iw_test_fill(src, len, seed);
	memset(dst, GUARD, (size_t)len + 16);
	switch (op) {
	case OP_SEND:
	case OP_SEND_SE:
	case OP_SEND_INV:
	case OP_INLINE:
		post_recv(b, 100, DST_OFF, len + 8, len >= 2 ? 2 : 1);
		if (op == OP_SEND_SE)
			flags = IWARP_SEND_SOLICITED;
		if (op == OP_INLINE)
			flags = IWARP_SEND_INLINE;
		if (op == OP_SEND_INV) {
			/* a bound type 2 window of the receiver's PD for
			 * the peer to invalidate (only those may be) */
			inv_mr =
				iwarp_reg_mr(b->pd, inv_buf, sizeof(inv_buf),
					     IWARP_ACCESS_LOCAL_WRITE |
						     IWARP_ACCESS_REMOTE_WRITE |
						     IWARP_ACCESS_MW_BIND);
			ck_assert_ptr_nonnull(inv_mr);
			inv_mw = iwarp_alloc_mw(b->pd, IWARP_MW_TYPE_2);
			ck_assert_ptr_nonnull(inv_mw);
			memset(&br, 0, sizeof(br));
			br.mw_stag = inv_mw->rkey;
			br.new_stag = iwarp_inc_rkey(inv_mw->rkey);
			br.mr_lkey = inv_mr->lkey;
			br.addr = (uint64_t)(uintptr_t)inv_buf;
			br.length = sizeof(inv_buf);
			br.access = IWARP_ACCESS_REMOTE_WRITE;
			ck_assert_int_eq(mr_mw_bind(b->ctx, b->pd, &br), 0);
			inv_mw->rkey = br.new_stag;
		}
		ck_assert_int_eq(
			post_send(a, 7,
				  op == OP_SEND_INV ? IWARP_WR_SEND_WITH_INV
						    : IWARP_WR_SEND,
				  flags, 0, len, 0, inv_mw ? inv_mw->rkey : 0,
				  op == OP_INLINE ? 1 : nsge),
			0);
		break;
	case OP_WRITE:
		ck_assert_int_eq(post_send(a, 7, IWARP_WR_RDMA_WRITE, 0, 0, len,
					   addr_of(b, DST_OFF), b->mr->rkey,
					   nsge),
				 0);
		break;
	case OP_READ:
		ck_assert_int_eq(post_send(a, 7, IWARP_WR_RDMA_READ, 0, DST_OFF,
					   len, addr_of(b, 0), b->mr->rkey, 1),
				 0);
		break;
	}
	w0 = a->wire_len + b->wire_len;
	pump(p);
	/* the payload crossed the wire (plus headers and CRCs) */
	ck_assert_uint_ge(a->wire_len + b->wire_len - w0, (size_t)len + 20);
	n = poll_all(a, wc, 8);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(wc[0].status, IWARP_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, 7);
	ck_assert_int_eq(wc[0].opcode, op == OP_WRITE  ? IWARP_WC_RDMA_WRITE
				       : op == OP_READ ? IWARP_WC_RDMA_READ
						       : IWARP_WC_SEND);
	if (op == OP_READ)
		ck_assert_uint_eq(wc[0].byte_len, len);
	n = poll_all(b, wc, 8);
	if (op == OP_WRITE || op == OP_READ) {
		ck_assert_int_eq(n, 0);
	} else {
		ck_assert_int_eq(n, 1);
		ck_assert_int_eq(wc[0].status, IWARP_WC_SUCCESS);
		ck_assert_int_eq(wc[0].opcode, IWARP_WC_RECV);
		ck_assert_uint_eq(wc[0].wr_id, 100);
		ck_assert_uint_eq(wc[0].byte_len, len);
		ck_assert_uint_eq(wc[0].wc_flags,
				  op == OP_SEND_SE    ? IWARP_WC_WITH_SE
				  : op == OP_SEND_INV ? IWARP_WC_WITH_INV
						      : 0);
		if (op == OP_SEND_INV) {
			/* RFC 5040 §6.2: the STag no longer grants access */
			ck_assert_uint_eq(wc[0].invalidated_rkey, inv_mw->rkey);
			ck_assert_int_eq(
				mr_check_remote(b->ctx, inv_mw->rkey, b->pd,
						IWARP_ACCESS_REMOTE_WRITE,
						(uint64_t)(uintptr_t)inv_buf, 1,
						true, NULL),
				IWARP_ERR_DDP_STAG);
			/* the region itself was not invalidated */
			ck_assert_int_eq(
				mr_check_remote(b->ctx, inv_mr->rkey, b->pd,
						IWARP_ACCESS_REMOTE_WRITE,
						(uint64_t)(uintptr_t)inv_buf, 1,
						true, NULL),
				0);
			ck_assert_int_eq(iwarp_dealloc_mw(inv_mw), 0);
			ck_assert_int_eq(iwarp_dereg_mr(inv_mr), 0);
		}
	}
	ck_assert_int_eq(memcmp(src, dst, len), 0);
	ck_assert_uint_eq(dst[len], GUARD);
	ck_assert_int_eq(cmt_qp_state(a->qp), IWARP_QPS_RTS);
	ck_assert_int_eq(cmt_qp_state(b->qp), IWARP_QPS_RTS);
	ck_assert_int_eq(a->closes + b->closes, 0);
}

/* _i: op * 4 + crc * 2 + markers */
START_TEST(test_matrix)
{
	enum op_kind op = (enum op_kind)(_i / 4);
	struct neg_opts o;
	struct pair p;
	size_t k;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.crc = (_i & 2) != 0;
	o.markers = (_i & 1) != 0;
	/* markers: a full loopback-MSS FPDU (130 markers) without CRC, an
	 * Ethernet one with it (RFC 5044 §5: markers do not cap the FPDU) */
	o.fpdu_max = o.crc ? (o.markers ? 1448 : 9000) : 65483;
	pair_open(&p, &o, 0x1000u + (uint64_t)_i);
	for (k = 0; k < NSIZES; k++) {
		if (op == OP_INLINE && sizes[k] > 128)
			continue;
		/* one-octet chunks for the small sizes, random otherwise */
		p.chunk_mode = sizes[k] <= 4095 && (k & 1) ? 1 : 0;
		run_op(&p, op, sizes[k], (uint64_t)k * 77 + 1);
	}
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* Mixed traffic in both directions at once: ordering of completions. */
START_TEST(test_mixed_both_ways)
{
	struct iwarp_wc wc[64];
	struct neg_opts o;
	struct pair p;
	int i, n;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.crc = true;
	pair_open(&p, &o, 99);
	iw_test_fill(p.a.buf, 1 << 20, 5);
	iw_test_fill(p.b.buf, 1 << 20, 6);
	for (i = 0; i < 4; i++) {
		post_recv(&p.a, 200 + (uint64_t)i,
			  (2u << 20) + (size_t)i * 70000, 70000, 1);
		post_recv(&p.b, 300 + (uint64_t)i,
			  (2u << 20) + (size_t)i * 70000, 70000, 1);
	}
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(
			post_send(&p.a, 10 + (uint64_t)i, IWARP_WR_RDMA_READ, 0,
				  (4u << 20) + (size_t)i * 100000, 100000,
				  addr_of(&p.b, 0), p.b.mr->rkey, 1),
			0);
		ck_assert_int_eq(post_send(&p.a, 20 + (uint64_t)i,
					   IWARP_WR_SEND, 0, 0, 65536, 0, 0, 2),
				 0);
		ck_assert_int_eq(
			post_send(&p.b, 30 + (uint64_t)i, IWARP_WR_RDMA_READ, 0,
				  (4u << 20) + (size_t)i * 100000, 100000,
				  addr_of(&p.a, 0), p.a.mr->rkey, 1),
			0);
		ck_assert_int_eq(post_send(&p.b, 40 + (uint64_t)i,
					   IWARP_WR_RDMA_WRITE, 0, 0, 50000,
					   addr_of(&p.a, 6u << 20),
					   p.a.mr->rkey, 3),
				 0);
	}
	pump(&p);
	n = poll_all(&p.a, wc, 64);
	ck_assert_int_eq(n, 8);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(wc[i].status, IWARP_WC_SUCCESS);
		/* SQ order: Read i, Send i */
		ck_assert_uint_eq(wc[i].wr_id, (i & 1) ? 20 + (uint64_t)i / 2
						       : 10 + (uint64_t)i / 2);
	}
	n = poll_all(&p.b, wc, 64);
	ck_assert_int_eq(n, 12);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(
			memcmp(p.a.buf + (4u << 20) + (size_t)i * 100000,
			       p.b.buf, 100000),
			0);
		ck_assert_int_eq(
			memcmp(p.b.buf + (4u << 20) + (size_t)i * 100000,
			       p.a.buf, 100000),
			0);
		ck_assert_int_eq(
			memcmp(p.b.buf + (2u << 20) + (size_t)i * 70000,
			       p.a.buf, 65536),
			0);
	}
	ck_assert_int_eq(memcmp(p.a.buf + (6u << 20), p.b.buf, 50000), 0);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* ---- errors ---- */

/* Finds the first Terminate FPDU in what |s| sent and decodes it. */
static bool wire_find_term(const struct side *s, bool markers, bool crc,
			   struct rdmap_term *t)
{
	struct mpa_rx_cfg cfg;
	struct mpa_rx_event ev;
	struct mpa_rx rx;
	uint8_t ulpdu[256];
	const uint8_t *in = s->wire;
	size_t len = s->wire_len, hl = 0, off;
	ssize_t r;

	memset(&cfg, 0, sizeof(cfg));
	cfg.markers = markers;
	cfg.crc = crc;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg), 0);
	while (len) {
		r = mpa_rx_process(&rx, in, len, &ev);
		if (r < 0)
			return false;
		in += r;
		len -= (size_t)r;
		switch (ev.type) {
		case MPA_RX_HEADER:
			hl = ev.hdr_len < sizeof(ulpdu) ? ev.hdr_len : 0;
			memcpy(ulpdu, ev.hdr, hl);
			break;
		case MPA_RX_PAYLOAD:
			off = hl + ev.data_off;
			if (off + ev.data_len <= sizeof(ulpdu))
				memcpy(ulpdu + off, ev.data, ev.data_len);
			break;
		case MPA_RX_FPDU_DONE:
			if (ev.ulpdu_len >= 2 && ev.ulpdu_len <= 70 &&
			    !(ulpdu[0] & DDP_CTRL_T) &&
			    (ulpdu[1] & 0x0f) == RDMAP_OP_TERMINATE)
				return rdmap_term_decode(t, NULL, ulpdu,
							 ev.ulpdu_len) > 0;
			break;
		case MPA_RX_NEED_MORE:
			break;
		}
	}
	return false;
}

static void assert_cause(const struct iwarp_term_cause *c, int layer, int etype,
			 int ecode)
{
	ck_assert_int_eq(c->layer, layer);
	ck_assert_int_eq(c->etype, etype);
	ck_assert_int_eq(c->ecode, ecode);
}

/*
 * |detector| found a violation: it sent a TERMINATE with the cause, both
 * QPs are in ERR, both CMs were told, the peer knows it received it.
 */
static void assert_terminated(struct pair *p, struct side *det,
			      struct side *peer, const struct neg_opts *o,
			      int layer, int etype, int ecode, bool hdr)
{
	struct rdmap_term t;

	ck_assert(wire_find_term(det, o->markers, o->crc, &t));
	assert_cause(&t.cause, layer, etype, ecode);
	ck_assert_int_eq(t.d, hdr);
	ck_assert_int_eq(t.m, hdr);
	ck_assert_int_eq(cmt_qp_state(det->qp), IWARP_QPS_ERR);
	ck_assert_int_eq(cmt_qp_state(peer->qp), IWARP_QPS_ERR);
	ck_assert_int_eq(det->closes, 1);
	ck_assert_int_eq(peer->closes, 1);
	ck_assert(det->have_cause);
	ck_assert(peer->have_cause);
	assert_cause(&det->cause, layer, etype, ecode);
	assert_cause(&peer->cause, layer, etype, ecode);
	ck_assert(!qp_from_pub(det->qp)->term_received);
	ck_assert(qp_from_pub(peer->qp)->term_received);
	ck_assert(det->shut);
	(void)p;
}

struct access_case {
	bool read;
	int bad; /* 0 stag, 1 key, 2 pd, 3 access, 4 bounds */
	int layer, etype, ecode;
};

static const struct access_case access_cases[] = {
	{false, 0, 1, 1, 0x00}, {false, 1, 1, 1, 0x00}, {false, 2, 1, 1, 0x02},
	{false, 3, 0, 1, 0x02}, {false, 4, 1, 1, 0x01}, {true, 0, 0, 1, 0x00},
	{true, 1, 0, 1, 0x00},	{true, 2, 0, 1, 0x03},	{true, 3, 0, 1, 0x02},
	{true, 4, 0, 1, 0x01},
};

START_TEST(test_remote_access_errors)
{
	const struct access_case *ac = &access_cases[_i];
	struct iwarp_mr *mr2 = NULL;
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;
	uint64_t raddr;
	uint32_t rkey;
	size_t k;
	int n;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.crc = _i & 1;
	o.markers = (_i / 2) & 1;
	pair_open(&p, &o, 500 + (uint64_t)_i);
	iw_test_fill(p.a.buf, 1 << 16, 3);
	iw_test_fill(p.b.buf, 1 << 16, 4);
	raddr = addr_of(&p.b, 8192);
	rkey = p.b.mr->rkey;
	switch (ac->bad) {
	case 0:
		rkey += 1000u << 8;
		break;
	case 1:
		rkey ^= 0x01;
		break;
	case 2:
		mr2 = iwarp_reg_mr(p.b.pd2, p.b.buf, 1 << 20,
				   IWARP_ACCESS_LOCAL_WRITE |
					   IWARP_ACCESS_REMOTE_WRITE |
					   IWARP_ACCESS_REMOTE_READ);
		rkey = mr2->rkey;
		break;
	case 3:
		mr2 = iwarp_reg_mr(p.b.pd, p.b.buf, 1 << 20,
				   ac->read ? IWARP_ACCESS_LOCAL_WRITE |
						      IWARP_ACCESS_REMOTE_WRITE
					    : IWARP_ACCESS_REMOTE_READ);
		ck_assert_ptr_nonnull(mr2);
		rkey = mr2->rkey;
		break;
	default:
		raddr = addr_of(&p.b, BUF_LEN - 100);
		break;
	}
	if (ac->read)
		ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_RDMA_READ, 0,
					   1 << 20, 1000, raddr, rkey, 1),
				 0);
	else
		ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_RDMA_WRITE, 0, 0,
					   1000, raddr, rkey, 1),
				 0);
	memset(p.a.buf + (1 << 20), GUARD, 1000);
	pump(&p);
	assert_terminated(&p, &p.b, &p.a, &o, ac->layer, ac->etype, ac->ecode,
			  true);
	n = poll_all(&p.a, wc, 8);
	ck_assert_int_eq(n, 1);
	if (ac->read) {
		struct rdmap_term t;

		ck_assert_int_eq(wc[0].status, IWARP_WC_REM_ACCESS_ERR);
		ck_assert_int_eq(wc[0].opcode, IWARP_WC_RDMA_READ);
		ck_assert_uint_eq(wc[0].vendor_err,
				  (uint32_t)ac->layer << 16 |
					  (uint32_t)ac->etype << 8 |
					  (uint32_t)ac->ecode);
		/* RFC 5040 §4.8: the Read Request header is attached too */
		ck_assert(wire_find_term(&p.b, o.markers, o.crc, &t));
		ck_assert(t.r);
		for (k = 0; k < 1000; k++)
			ck_assert_uint_eq(p.a.buf[(1 << 20) + k], GUARD);
	} else {
		/* a Write completes when handed to TCP (as siw) */
		ck_assert_int_eq(wc[0].status, IWARP_WC_SUCCESS);
		/* nothing placed */
		ck_assert_int_ne(memcmp(p.b.buf + 8192, p.a.buf, 1000), 0);
	}
	ck_assert_int_eq(poll_all(&p.b, wc, 8), 0);
	if (mr2)
		ck_assert_int_eq(iwarp_dereg_mr(mr2), 0);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/*
 * The source of a Read deregistered while its Read Response is still being
 * sent (RFC 5040 §8): every segment checks the STag again, so the responder
 * sends a TERMINATE (RDMAP, remote protection, invalid STag) instead of
 * reading memory the application gave back; the Read fails with
 * REM_ACCESS_ERR.
 */
START_TEST(test_read_source_gone)
{
	struct iwarp_mr *src;
	struct iwarp_wc wc[4];
	struct neg_opts o;
	struct pair p;
	size_t before;

	mem_start = iw_mem_outstanding();
	neg_default(&o); /* 1448-octet FPDUs: 1 MiB is > RDMAP_CONN_TX_SLOTS
			    FPDUs */
	o.crc = _i;
	pair_open(&p, &o, 900 + (uint64_t)_i);
	p.chunk_mode = 2;
	src = iwarp_reg_mr(p.b.pd, p.b.buf, 1 << 20, IWARP_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(src);
	ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_RDMA_READ, 0, 1 << 20,
				   1 << 20, addr_of(&p.b, 0), src->rkey, 1),
			 0);
	ck_assert(pump_tx(&p, &p.a));	    /* the Read Request */
	ck_assert(pump_rx(&p, &p.a, &p.b)); /* accepted: source valid */
	/* the first FPDUs of it, whole: an FPDU partly sent must be
	 * finished before the TERMINATE (RFC 5044 §4), with its reference,
	 * and nobody here would send the rest while dereg waits */
	ck_assert(pump_tx_cap(&p, &p.b, EP_IOV_MAX_WHOLE));
	before = p.b.wire_len;
	ck_assert_uint_lt(before, (size_t)1 << 20);
	ck_assert_int_eq(iwarp_dereg_mr(src), 0);
	pump(&p);
	assert_terminated(&p, &p.b, &p.a, &o, IWARP_TERM_LAYER_RDMAP,
			  IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			  IWARP_RDMAP_ECODE_INVALID_STAG, false);
	/* nothing more of the response than what was framed before */
	ck_assert_uint_lt(p.b.wire_len - before, 128);
	ck_assert_int_eq(poll_all(&p.a, wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IWARP_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(wc[0].opcode, IWARP_WC_RDMA_READ);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* A Send with no receive posted: DDP untagged 0x02 (RFC 5041 §7). */
START_TEST(test_send_no_rqe)
{
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	pair_open(&p, &o, 7);
	ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_SEND, 0, 0, 100, 0, 0, 1),
			 0);
	pump(&p);
	assert_terminated(&p, &p.b, &p.a, &o, 1, 2, 0x02, true);
	ck_assert_int_eq(poll_all(&p.a, wc, 8), 1);
	ck_assert_int_eq(poll_all(&p.b, wc, 8), 0);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* A receive buffer too small: LOC_LEN_ERR and DDP untagged 0x05. */
START_TEST(test_send_too_long)
{
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.crc = true;
	pair_open(&p, &o, 8);
	post_recv(&p.b, 50, 0, 50, 1);
	post_recv(&p.b, 51, 100, 5000, 1);
	ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_SEND, 0, 0, 3000, 0, 0, 1),
			 0);
	pump(&p);
	assert_terminated(&p, &p.b, &p.a, &o, 1, 2, 0x05, true);
	ck_assert_int_eq(poll_all(&p.b, wc, 8), 2);
	ck_assert_uint_eq(wc[0].wr_id, 50);
	ck_assert_int_eq(wc[0].status, IWARP_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(wc[0].vendor_err, 1u << 16 | 2u << 8 | 5u);
	ck_assert_uint_eq(wc[1].wr_id, 51);
	ck_assert_int_eq(wc[1].status, IWARP_WC_WR_FLUSH_ERR);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* A corrupted FPDU: TERMINATE LLP/MPA 0x02, nothing delivered. */
START_TEST(test_crc_error)
{
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.crc = true;
	o.markers = _i & 1;
	pair_open(&p, &o, 9);
	p.chunk_mode = _i >= 2 ? 1 : 0;
	p.a.flip_at = 40 + (uint64_t)_i; /* in the payload */
	post_recv(&p.b, 50, 0, 1000, 1);
	ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_SEND, 0, 0, 1000, 0, 0, 1),
			 0);
	pump(&p);
	assert_terminated(&p, &p.b, &p.a, &o, 2, 0, 0x02, false);
	ck_assert_int_eq(poll_all(&p.b, wc, 8), 1);
	ck_assert_int_eq(wc[0].status, IWARP_WC_WR_FLUSH_ERR);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* RFC 6581 P2P: the initiator's first FPDU is the RTR; the responder waits. */
START_TEST(test_p2p_rtr)
{
	static const uint8_t write_rtr[] = {0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1,
					    0,	  0,	0,    0,    0, 0, 0, 0};
	struct iovec iov[EP_IOV_MAX_T];
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;
	uint8_t wire[64];
	size_t got;
	int n, i;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.p2p = true;
	o.rtr = _i ? MPA_RTR_READ : MPA_RTR_WRITE;
	o.ord_a = 1;
	o.crc = true;
	pair_open(&p, &o, 10);
	iw_test_fill(p.b.buf, 4096, 1);
	post_recv(&p.a, 60, 1 << 20, 100, 1);
	ck_assert_int_eq(post_send(&p.b, 2, IWARP_WR_SEND, 0, 0, 100, 0, 0, 1),
			 0);
	ck_assert_int_eq(post_send(&p.a, 3, IWARP_WR_RDMA_READ, 0, 2 << 20,
				   4096, addr_of(&p.b, 0), p.b.mr->rkey, 1),
			 0);
	/* the responder transmits nothing before the RTR */
	ck_assert_int_eq(qp_conn_tx_iov(p.b.conn, iov, EP_IOV_MAX_T), 0);
	n = qp_conn_tx_iov(p.a.conn, iov, EP_IOV_MAX_T);
	ck_assert_int_gt(n, 0);
	for (i = 0, got = 0; i < n && got < sizeof(wire); i++) {
		size_t k = iov[i].iov_len < sizeof(wire) - got
				   ? iov[i].iov_len
				   : sizeof(wire) - got;

		memcpy(wire + got, iov[i].iov_base, k);
		got += k;
	}
	if (!_i) {
		/* zero-length Write, STag 1, TO 0 (docs/interop-notes.md §6.7)
		 * + CRC */
		ck_assert_uint_ge(got, sizeof(write_rtr));
		ck_assert_int_eq(memcmp(wire, write_rtr, sizeof(write_rtr)), 0);
	} else {
		/* zero-length Read Request, QN 1, sink STag 1, size 0: a
		 * 46-octet ULPDU */
		ck_assert_uint_ge(got, 4);
		ck_assert_uint_eq((unsigned int)wire[0] << 8 | wire[1], 46);
		ck_assert_uint_eq(wire[3], 0x41);
	}
	qp_conn_tx_done(p.a.conn, 0);
	pump(&p);
	ck_assert_int_eq(poll_all(&p.a, wc, 8), 2);
	ck_assert_int_eq(wc[0].status, IWARP_WC_SUCCESS);
	ck_assert_int_eq(wc[1].status, IWARP_WC_SUCCESS);
	ck_assert_int_eq(memcmp(p.a.buf + (2 << 20), p.b.buf, 4096), 0);
	ck_assert_int_eq(memcmp(p.a.buf + (1 << 20), p.b.buf, 100), 0);
	ck_assert_int_eq(poll_all(&p.b, wc, 8), 1);
	ck_assert_int_eq(p.a.closes + p.b.closes, 0);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* Client-server: the responder sends nothing before the first FPDU. */
START_TEST(test_responder_waits)
{
	struct iovec iov[EP_IOV_MAX_T];
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	pair_open(&p, &o, 11);
	post_recv(&p.a, 60, 0, 100, 1);
	post_recv(&p.b, 61, 0, 100, 1);
	ck_assert_int_eq(post_send(&p.b, 2, IWARP_WR_SEND, 0, 0, 10, 0, 0, 1),
			 0);
	ck_assert_int_eq(qp_conn_tx_iov(p.b.conn, iov, EP_IOV_MAX_T), 0);
	pump(&p);
	ck_assert_uint_eq(p.b.wire_len, 0);
	ck_assert_int_eq(post_send(&p.a, 3, IWARP_WR_SEND, 0, 0, 10, 0, 0, 1),
			 0);
	pump(&p);
	ck_assert_int_eq(poll_all(&p.a, wc, 8), 2);
	ck_assert_int_eq(poll_all(&p.b, wc, 8), 2);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* Connection loss flushes everything outstanding. */
START_TEST(test_flush_on_close)
{
	struct iwarp_wc wc[16];
	struct neg_opts o;
	struct pair p;
	int i;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	pair_open(&p, &o, 12);
	for (i = 0; i < 3; i++)
		post_recv(&p.a, 70 + (uint64_t)i, 0, 100, 1);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(
			post_send(&p.a, 80 + (uint64_t)i,
				  i & 1 ? IWARP_WR_RDMA_READ : IWARP_WR_SEND, 0,
				  0, 100, addr_of(&p.b, 0), p.b.mr->rkey, 1),
			0);
	/* part of it is in flight */
	pump_tx(&p, &p.a);
	qp_conn_closed(p.a.conn, -ECONNRESET);
	ck_assert_int_eq(p.a.closes, 1);
	ck_assert_int_eq(p.a.close_err, -ECONNRESET);
	assert_cause(&p.a.cause, 2, 0, 0x01);
	ck_assert_int_eq(cmt_qp_state(p.a.qp), IWARP_QPS_ERR);
	ck_assert_int_eq(poll_all(&p.a, wc, 16), 8);
	/* sends handed to TCP may complete; everything else is flushed */
	ck_assert_int_eq(wc[7].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc[1].status, IWARP_WC_WR_FLUSH_ERR); /* the Read */
	qp_conn_closed(p.a.conn, 0); /* no second close */
	ck_assert_int_eq(p.a.closes, 1);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* A bad lkey: LOC_PROT_ERR in order, QP to ERR, peer told. */
START_TEST(test_local_prot_error)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	pair_open(&p, &o, 13);
	post_recv(&p.b, 1, 0, 100, 1);
	ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_SEND, 0, 0, 10, 0, 0, 1),
			 0);
	memset(&wr, 0, sizeof(wr));
	sge.addr = addr_of(&p.a, 0);
	sge.length = 10;
	sge.lkey = p.a.mr->lkey + (77u << 8);
	wr.wr_id = 2;
	wr.opcode = IWARP_WR_SEND;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ck_assert_int_eq(iwarp_post_send(p.a.qp, &wr, &bad), 0);
	ck_assert_int_eq(post_send(&p.a, 3, IWARP_WR_SEND, 0, 0, 10, 0, 0, 1),
			 0);
	pump(&p);
	ck_assert_int_eq(poll_all(&p.a, wc, 8), 3);
	ck_assert_int_eq(wc[0].status, IWARP_WC_SUCCESS);
	ck_assert_int_eq(wc[1].status, IWARP_WC_LOC_PROT_ERR);
	ck_assert_int_eq(wc[2].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(cmt_qp_state(p.a.qp), IWARP_QPS_ERR);
	ck_assert_int_eq(cmt_qp_state(p.b.qp), IWARP_QPS_ERR);
	ck_assert(qp_from_pub(p.b.qp)->term_received);
	ck_assert_int_eq(poll_all(&p.b, wc, 8), 1);
	ck_assert_int_eq(wc[0].status, IWARP_WC_SUCCESS);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* More Read Requests than IRD: RDMAP/RemoteOp 0x07
 * (docs/interop-notes.md §1.4). */
START_TEST(test_ird_overflow)
{
	struct iwarp_wc wc[8];
	struct neg_opts o;
	struct pair p;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.ird_b = 1;
	o.ord_a = 4;
	pair_open(&p, &o, 14);
	p.chunk_mode = 2;
	ck_assert_int_eq(post_send(&p.a, 1, IWARP_WR_RDMA_READ, 0, 1 << 20, 64,
				   addr_of(&p.b, 0), p.b.mr->rkey, 1),
			 0);
	ck_assert_int_eq(post_send(&p.a, 2, IWARP_WR_RDMA_READ, 0, 2 << 20, 64,
				   addr_of(&p.b, 0), p.b.mr->rkey, 1),
			 0);
	pump(&p);
	assert_terminated(&p, &p.b, &p.a, &o, 0, 2, 0x07, true);
	ck_assert_int_ge(poll_all(&p.a, wc, 8), 1);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

/* ORD and Fence: Reads beyond ORD wait; a fenced Send waits for them. */
START_TEST(test_ord_fence)
{
	struct iwarp_wc wc[16];
	struct neg_opts o;
	struct pair p;
	int i, n;

	mem_start = iw_mem_outstanding();
	neg_default(&o);
	o.ord_a = 2;
	o.ird_b = 2;
	pair_open(&p, &o, 15);
	iw_test_fill(p.b.buf, 1 << 16, 2);
	post_recv(&p.b, 9, 1 << 20, 100, 1);
	for (i = 0; i < 6; i++)
		ck_assert_int_eq(
			post_send(&p.a, 1 + (uint64_t)i, IWARP_WR_RDMA_READ, 0,
				  (1u << 20) + (size_t)i * 8192, 5000,
				  addr_of(&p.b, (size_t)i), p.b.mr->rkey, 1),
			0);
	ck_assert_int_eq(post_send(&p.a, 7, IWARP_WR_SEND, IWARP_SEND_FENCE, 0,
				   10, 0, 0, 1),
			 0);
	pump(&p);
	n = poll_all(&p.a, wc, 16);
	ck_assert_int_eq(n, 7);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(wc[i].status, IWARP_WC_SUCCESS);
		ck_assert_uint_eq(wc[i].wr_id, 1 + (uint64_t)i);
	}
	for (i = 0; i < 6; i++)
		ck_assert_int_eq(memcmp(p.a.buf + (1u << 20) + (size_t)i * 8192,
					p.b.buf + i, 5000),
				 0);
	ck_assert_int_eq(p.a.closes + p.b.closes, 0);
	pair_close(&p);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
}
END_TEST

Suite *conn_suite(void);

Suite *conn_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("ops");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_matrix, 0, 6 * 4);
	tcase_add_test(tc, test_mixed_both_ways);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc, test_remote_access_errors, 0,
		(int)(sizeof(access_cases) / sizeof(access_cases[0])));
	tcase_add_loop_test(tc, test_read_source_gone, 0, 2);
	tcase_add_test(tc, test_send_no_rqe);
	tcase_add_test(tc, test_send_too_long);
	tcase_add_loop_test(tc, test_crc_error, 0, 4);
	tcase_add_loop_test(tc, test_p2p_rtr, 0, 2);
	tcase_add_test(tc, test_responder_waits);
	tcase_add_test(tc, test_flush_on_close);
	tcase_add_test(tc, test_local_prot_error);
	tcase_add_test(tc, test_ird_overflow);
	tcase_add_test(tc, test_ord_fence);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(conn_suite)

/*
 * tests/rdmap_conn_test.c: the RDMAP engine (rdmap/rdmap_conn.h) alone,
 * behind a fake ops table (tests/rdmap_fake.h): no verbs objects, no
 * sockets. Two engines are wired back to back (one's tx_iov octets fed to
 * the other's rx_iov), deterministically. Every test checks that every
 * memory reference was given back and no guard octet around a region was
 * written.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_tx.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_rreq.h"
#include "rdmap/rdmap_term.h"
#include "rdmap_fake.h"
#include "testutil.h"
#include "util/mem.h"

#define RW  (IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE)
#define RR  (IWARP_ACCESS_REMOTE_READ)
#define LW  (IWARP_ACCESS_LOCAL_WRITE)
#define RWA (RW | IWARP_ACCESS_REMOTE_ATOMIC)

/* mkcfg: the RFC 7306 extensions negotiated (set around pair_init) */
static bool mk_ext;
#define ALL	 (RW | RR)
#define WIRE_CAP ((size_t)1 << 20)

/* Framing modes: MPA CRC and markers (RFC 5044 §5, §6). */
struct mode {
	bool crc, markers;
};

static const struct mode modes[] = {
	{false, false},
	{true, false},
	{false, true},
	{true, true},
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static uint8_t wire[WIRE_CAP];
static long mem_start; /* library allocations before the pair */

static struct rdmap_conn_cfg mkcfg(bool initiator, struct mode m)
{
	struct rdmap_conn_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.initiator = initiator;
	cfg.crc = m.crc;
	cfg.markers_tx = m.markers;
	cfg.markers_rx = m.markers;
	cfg.ird = 16;
	cfg.ord = 16;
	cfg.rdmap_ext = mk_ext;
	return cfg;
}

/* A: initiator, B: responder. */
static void pair_init(struct fk_owner *a, struct fk_owner *b, struct mode m,
		      uint32_t ird, uint32_t ord, size_t fpdu_max)
{
	struct rdmap_conn_cfg ca = mkcfg(true, m), cb = mkcfg(false, m);

	ca.ird = cb.ird = ird;
	ca.ord = cb.ord = ord;
	ca.fpdu_max = cb.fpdu_max = fpdu_max;
	mem_start = iw_mem_outstanding();
	fk_init(a);
	fk_init(b);
	ck_assert(fk_create(a, &ca));
	ck_assert(fk_create(b, &cb));
}

/* Destroys both engines: every reference must be back, guards intact. */
static void pair_fini(struct fk_owner *a, struct fk_owner *b)
{
	ck_assert(fk_guards_ok(a));
	ck_assert(fk_guards_ok(b));
	rdmap_conn_destroy(a->c);
	a->c = NULL;
	rdmap_conn_destroy(b->c);
	b->c = NULL;
	ck_assert_int_eq(fk_refs(a), 0);
	ck_assert_int_eq(fk_refs(b), 0);
	ck_assert_int_eq(a->bad_puts, 0);
	ck_assert_int_eq(b->bad_puts, 0);
	ck_assert_int_eq(iw_mem_outstanding(), mem_start);
	fk_fini(a);
	fk_fini(b);
}

/* ---- wire parsing (no markers) ---- */

/* One FPDU found on the wire: its ULPDU. */
struct fpdu {
	const uint8_t *ulpdu;
	size_t len;
};

/* Splits an FPDU stream without markers. Returns the count. */
static int wire_split(const uint8_t *w, size_t len, bool crc, struct fpdu *out,
		      int cap)
{
	size_t off = 0, ul, tot;
	int n = 0;

	(void)crc; /* the CRC field is there either way */
	while (off + 2 <= len && n < cap) {
		ul = (size_t)w[off] << 8 | w[off + 1];
		tot = 2 + ul;
		tot += (4 - tot % 4) % 4;
		tot += 4; /* the CRC field is there, 0 without CRC (RFC 5044 §6)
			   */
		ck_assert_uint_le(off + tot, len);
		out[n].ulpdu = w + off + 2;
		out[n].len = ul;
		n++;
		off += tot;
	}
	ck_assert_uint_eq(off, len);
	return n;
}

static uint8_t fpdu_opcode(const struct fpdu *f)
{
	return f->ulpdu[1] & RDMAP_CTRL_OPCODE_MASK;
}

/* Frames |ulpdu| (no markers) into |out| with the library's MPA framer. */
static size_t frame(uint8_t *out, const uint8_t *ulpdu, size_t len, bool crc)
{
	struct mpa_tx tx;
	struct mpa_tx_scratch s;
	struct iovec in = {(void *)(uintptr_t)ulpdu, len}, iov[8];
	size_t cnt = 0, off = 0, i;
	int rc;

	ck_assert_int_eq(mpa_tx_init(&tx, false, crc, 0), 0);
	rc = mpa_tx_frame(&tx, &in, 1, &s, iov, 8, &cnt);
	ck_assert_int_gt(rc, 0);
	for (i = 0; i < cnt; i++) {
		memcpy(out + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	ck_assert_uint_eq(off, (size_t)rc);
	return off;
}

/* Builds a DDP/RDMAP header (+ |pay|) as a ULPDU into |out|. */
static size_t ulpdu_build(uint8_t *out, const struct ddp_hdr *h,
			  const void *pay, size_t pay_len)
{
	size_t n = ddp_hdr_encode(out, h);

	if (pay_len)
		memcpy(out + n, pay, pay_len);
	return n + pay_len;
}

static struct ddp_hdr hdr_tagged(uint8_t op, uint32_t stag, uint64_t to)
{
	struct ddp_hdr h;

	memset(&h, 0, sizeof(h));
	h.tagged = true;
	h.last = true;
	h.dv = 1;
	h.rv = 1;
	h.opcode = op;
	h.stag = stag;
	h.to = to;
	return h;
}

static struct ddp_hdr hdr_untagged(uint8_t op, uint32_t qn, uint32_t msn)
{
	struct ddp_hdr h;

	memset(&h, 0, sizeof(h));
	h.last = true;
	h.dv = 1;
	h.rv = 1;
	h.opcode = op;
	h.qn = qn;
	h.msn = msn;
	return h;
}

/* Finds the TERMINATE in |w| (no markers) and decodes it. */
static void term_find(const uint8_t *w, size_t len, bool crc,
		      struct rdmap_term *t, struct ddp_hdr *h)
{
	static struct fpdu f[512];
	int n = wire_split(w, len, crc, f, 512), i, found = -1;

	for (i = 0; i < n; i++)
		if (!(f[i].ulpdu[0] & DDP_CTRL_T) &&
		    fpdu_opcode(&f[i]) == RDMAP_OP_TERMINATE) {
			ck_assert_int_eq(found, -1); /* exactly one */
			found = i;
		}
	ck_assert_int_ge(found, 0);
	ck_assert_int_eq(found, n - 1); /* the last thing sent */
	ck_assert_int_eq(rdmap_term_decode(t, h, f[found].ulpdu, f[found].len),
			 (int)f[found].len);
	ck_assert(!t->siw_nibble_swapped);
}

static void cause_eq(const struct iwarp_term_cause *c, int layer, int etype,
		     int ecode)
{
	ck_assert_int_eq(c->layer, layer);
	ck_assert_int_eq(c->etype, etype);
	ck_assert_int_eq(c->ecode, ecode);
}

static const struct iwarp_wc *wc_find(const struct iwarp_wc *cq, int n,
				      uint64_t wr_id)
{
	int i;

	for (i = 0; i < n; i++)
		if (cq[i].wr_id == wr_id)
			return &cq[i];
	return NULL;
}

/* ---- round trips ---- */

static void fill_pattern(uint8_t *p, size_t len, uint64_t seed)
{
	iw_test_fill(p, len, seed);
}

START_TEST(test_roundtrips)
{
	static const uint32_t sizes[] = {0, 1, 17, 1448, 5000, 70000};
	struct mode m = modes[(size_t)_i % NMODES];
	size_t si;

	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		uint32_t len = sizes[si];
		struct fk_owner a, b;
		struct fk_region *asrc, *asink, *bdst, *brq, *bsrc, *binv;
		const struct iwarp_wc *wc;
		struct rdmap_wqe *w;

		pair_init(&a, &b, m, 16, 16, ((size_t)_i / NMODES) ? 9000 : 0);
		asrc = fk_region_add(&a, 0x10, 70000, LW, 0);
		asink = fk_region_add(&a, 0x11, 70000, RW, 0x33);
		bdst = fk_region_add(&b, 0x20, 70000, RW, 0x44);
		brq = fk_region_add(&b, 0x21, 70000, LW, 0x55);
		bsrc = fk_region_add(&b, 0x22, 70000, RR, 0);
		binv = fk_region_add(&b, 0x23, 16, RW, 0);
		binv->invalidatable = true;
		fill_pattern(asrc->buf, 70000, 1 + si);
		fill_pattern(bsrc->buf, 70000, 100 + si);
		fk_post_recv(&b, 500, 0x21, brq->buf, 70000);
		fk_post_recv(&b, 501, 0x21, brq->buf, 70000);

		/* Write, then a Send, a Read, a Send with Invalidate (SE) */
		w = fk_post_send(&a, 1, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf,
				 len);
		w->rkey = 0x20;
		w->remote_addr = (uintptr_t)bdst->buf;
		fk_post_send(&a, 2, IWARP_WR_SEND, 0, 0x10, asrc->buf + 1,
			     len ? len - 1 : 0);
		w = fk_post_send(&a, 3, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf,
				 len);
		w->rkey = 0x22;
		w->remote_addr = (uintptr_t)bsrc->buf;
		w = fk_post_send(&a, 4, IWARP_WR_SEND_WITH_INV,
				 IWARP_SEND_SOLICITED, 0x10, asrc->buf, 3);
		w->invalidate_rkey = 0x23;
		rdmap_conn_sq_kick(a.c);
		fk_pump(&a, &b);

		ck_assert_int_eq(a.set_error_calls, 0);
		ck_assert_int_eq(b.set_error_calls, 0);
		ck_assert_int_eq(a.nscq, 4);
		ck_assert_int_eq(b.nrcq, 2);
		ck_assert(memcmp(bdst->buf, asrc->buf, len) == 0);
		if (len < 70000)
			ck_assert_uint_eq(bdst->buf[len], 0x44);
		ck_assert(memcmp(asink->buf, bsrc->buf, len) == 0);
		if (len < 70000)
			ck_assert_uint_eq(asink->buf[len], 0x33);
		/* completions in SQ order, all successful */
		for (int k = 0; k < 4; k++) {
			ck_assert_uint_eq(a.scq[k].wr_id, (uint64_t)k + 1);
			ck_assert_int_eq(a.scq[k].status, IWARP_WC_SUCCESS);
		}
		ck_assert_int_eq(a.scq[2].opcode, IWARP_WC_RDMA_READ);
		wc = &b.rcq[0];
		ck_assert_uint_eq(wc->wr_id, 500);
		ck_assert_int_eq(wc->status, IWARP_WC_SUCCESS);
		ck_assert_int_eq(wc->opcode, IWARP_WC_RECV);
		ck_assert_uint_eq(wc->byte_len, len ? len - 1 : 0);
		ck_assert_uint_eq(wc->wc_flags, 0);
		/* the second Send overwrote the first's first 3 octets */
		ck_assert(memcmp(brq->buf, asrc->buf, 3) == 0);
		if (len > 4)
			ck_assert(memcmp(brq->buf + 3, asrc->buf + 4,
					 len - 4) == 0);
		wc = &b.rcq[1];
		ck_assert_uint_eq(wc->wr_id, 501);
		ck_assert_int_eq(wc->status, IWARP_WC_SUCCESS);
		ck_assert_uint_eq(wc->byte_len, 3);
		ck_assert_uint_eq(wc->wc_flags,
				  IWARP_WC_WITH_INV | IWARP_WC_WITH_SE);
		ck_assert_uint_eq(wc->invalidated_rkey, 0x23);
		ck_assert(!binv->valid);
		pair_fini(&a, &b);
	}
}
END_TEST

/* A Write and a Send posted after a Read complete after it (RFC 5040
 * §5.2: the Read completes with its response; completions in SQ order). */
START_TEST(test_sq_order_after_read)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *asink, *bdst, *bsrc, *brq;
	struct rdmap_wqe *w;
	size_t n;

	pair_init(&a, &b, modes[1], 16, 16, 0);
	asrc = fk_region_add(&a, 0x10, 4096, LW, 1);
	asink = fk_region_add(&a, 0x11, 8192, RW, 0);
	bdst = fk_region_add(&b, 0x20, 4096, RW, 0);
	bsrc = fk_region_add(&b, 0x22, 8192, RR, 7);
	brq = fk_region_add(&b, 0x21, 4096, LW, 0);
	fk_post_recv(&b, 9, 0x21, brq->buf, 4096);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 8192);
	w->rkey = 0x22;
	w->remote_addr = (uintptr_t)bsrc->buf;
	w = fk_post_send(&a, 2, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf, 4096);
	w->rkey = 0x20;
	w->remote_addr = (uintptr_t)bdst->buf;
	fk_post_send(&a, 3, IWARP_WR_SEND, 0, 0x10, asrc->buf, 100);
	rdmap_conn_sq_kick(a.c);
	/* everything A has is sent, nothing answered yet */
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	ck_assert_uint_gt(n, 4096);
	ck_assert_int_eq(a.nscq, 0);
	fk_rx_feed(&b, wire, n, 0);
	ck_assert_int_eq(b.nrcq, 1);
	ck_assert(memcmp(bdst->buf, asrc->buf, 4096) == 0);
	ck_assert_int_eq(a.nscq, 0);
	fk_pump(&a, &b);
	ck_assert_int_eq(a.nscq, 3);
	ck_assert_uint_eq(a.scq[0].wr_id, 1);
	ck_assert_uint_eq(a.scq[1].wr_id, 2);
	ck_assert_uint_eq(a.scq[2].wr_id, 3);
	ck_assert_int_eq(a.scq[0].status, IWARP_WC_SUCCESS);
	ck_assert(memcmp(asink->buf, bsrc->buf, 8192) == 0);
	pair_fini(&a, &b);
}
END_TEST

/* Posts |count| Reads of 100 octets (wr_id 10, 11, ...): piece i of
 * |src| (STag 0x22) into piece i of |sink| (STag 0x11). */
static void post_reads(struct fk_owner *a, struct fk_region *sink,
		       struct fk_region *src, int count)
{
	struct rdmap_wqe *w;
	int i;

	for (i = 0; i < count; i++) {
		w = fk_post_send(a, 10 + (uint64_t)i, IWARP_WR_RDMA_READ, 0,
				 0x11, sink->buf + 100 * i, 100);
		w->rkey = 0x22;
		w->remote_addr = (uintptr_t)src->buf + 100 * (uint32_t)i;
	}
}

/* ORD: at most |ord| Read Requests outstanding (RFC 6581 §5). */
START_TEST(test_ord_limit)
{
	static struct fpdu f[64];
	struct fk_owner a, b;
	struct fk_region *asink, *bsrc;
	size_t n;
	int i, nf;

	pair_init(&a, &b, modes[0], 8, 2, 0);
	asink = fk_region_add(&a, 0x11, 4 * 100, RW, 0);
	bsrc = fk_region_add(&b, 0x22, 400, RR, 9);
	post_reads(&a, asink, bsrc, 4);
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	nf = wire_split(wire, n, false, f, 64);
	ck_assert_int_eq(nf, 2);
	for (i = 0; i < nf; i++)
		ck_assert_int_eq(fpdu_opcode(&f[i]), RDMAP_OP_READ_REQUEST);
	fk_rx_feed(&b, wire, n, 0);
	fk_pump(&a, &b);
	ck_assert_int_eq(a.nscq, 4);
	for (i = 0; i < 4; i++) {
		ck_assert_uint_eq(a.scq[i].wr_id, 10 + (uint64_t)i);
		ck_assert_int_eq(a.scq[i].status, IWARP_WC_SUCCESS);
	}
	ck_assert(memcmp(asink->buf, bsrc->buf, 400) == 0);
	pair_fini(&a, &b);
}
END_TEST

/*
 * rdmap_conn_response_owed: true from a Read Request's framing until its
 * response completes it (RFC 5040 §5.2), and after the connection ended
 * with a Read unanswered, false (no response will come: a poster must not
 * leave its work to one).
 */
START_TEST(test_response_owed)
{
	struct fk_owner a, b;
	struct fk_region *asink, *bsrc;
	struct rdmap_wqe *w;
	size_t n;

	pair_init(&a, &b, modes[0], 4, 2, 0);
	asink = fk_region_add(&a, 0x11, 3 * 100, RW, 0);
	bsrc = fk_region_add(&b, 0x22, 300, RR, 9);
	ck_assert(!rdmap_conn_response_owed(a.c));
	post_reads(&a, asink, bsrc, 3);
	/* posted, not framed: nothing owed yet */
	rdmap_conn_sq_kick(a.c);
	ck_assert(!rdmap_conn_response_owed(a.c));
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	ck_assert(rdmap_conn_response_owed(a.c));
	ck_assert(!rdmap_conn_response_owed(b.c));
	fk_rx_feed(&b, wire, n, 0);
	/* the responder owes; the requester still waits */
	ck_assert(!rdmap_conn_response_owed(b.c));
	ck_assert(rdmap_conn_response_owed(a.c));
	fk_pump(&a, &b);
	ck_assert_int_eq(a.nscq, 3);
	ck_assert(!rdmap_conn_response_owed(a.c));
	/* a Read left unanswered when the stream ends */
	w = fk_post_send(&a, 20, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 100);
	w->rkey = 0x22;
	w->remote_addr = (uintptr_t)bsrc->buf;
	rdmap_conn_sq_kick(a.c);
	(void)fk_tx_drain(&a, wire, WIRE_CAP);
	ck_assert(rdmap_conn_response_owed(a.c));
	rdmap_conn_closed(a.c, -ECONNRESET);
	ck_assert(!rdmap_conn_response_owed(a.c));
	ck_assert_int_eq(a.nscq, 4);
	ck_assert_int_ne(a.scq[3].status, IWARP_WC_SUCCESS);
	pair_fini(&a, &b);
}
END_TEST

/* IRD: a Read Request beyond the responder's IRD is a stream error
 * (RFC 5040 §7 RDMAP remote operation, RFC 6581 §5), with the Read
 * Request header attached (RFC 5040 §4.8). */
START_TEST(test_ird_limit)
{
	static struct fpdu f[8];
	struct fk_owner a, b;
	struct fk_region *asink, *bsrc;
	struct rdmap_term t;
	struct ddp_hdr h;
	struct rdmap_wqe *w;
	size_t n;
	int i;

	pair_init(&a, &b, modes[0], 1, 4, 0);
	rdmap_conn_destroy(b.c);
	{
		struct rdmap_conn_cfg cb = mkcfg(false, modes[0]);

		cb.ird = 1;
		cb.ord = 1;
		ck_assert(fk_create(&b, &cb));
	}
	asink = fk_region_add(&a, 0x11, 200, RW, 0);
	bsrc = fk_region_add(&b, 0x22, 200, RR, 9);
	for (i = 0; i < 2; i++) {
		w = fk_post_send(&a, 10 + (uint64_t)i, IWARP_WR_RDMA_READ, 0,
				 0x11, asink->buf + 100 * i, 100);
		w->rkey = 0x22;
		w->remote_addr = (uintptr_t)bsrc->buf;
	}
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	ck_assert_int_eq(wire_split(wire, n, false, f, 8), 2);
	fk_rx_feed(&b, wire, n, 0);
	n = fk_tx_drain(&b, wire + WIRE_CAP / 2, WIRE_CAP / 2);
	term_find(wire + WIRE_CAP / 2, n, false, &t, &h);
	cause_eq(&t.cause, IWARP_TERM_LAYER_RDMAP,
		 IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
		 IWARP_RDMAP_ECODE_CATASTROPHIC_STREAM);
	ck_assert(t.d && t.m && t.r);
	ck_assert_uint_eq(t.ddp_seg_len, f[1].len);
	ck_assert(memcmp(t.ddp_hdr, f[1].ulpdu, DDP_UNTAGGED_HDR_LEN) == 0);
	ck_assert(memcmp(t.rdmap_hdr, f[1].ulpdu + DDP_UNTAGGED_HDR_LEN,
			 RDMAP_RREQ_HDR_LEN) == 0);
	ck_assert_int_eq(b.set_error_calls, 1);
	ck_assert(!b.err_received);
	cause_eq(&b.err_cause, t.cause.layer, t.cause.etype, t.cause.ecode);
	ck_assert_int_eq(b.closed_calls, 1);
	pair_fini(&a, &b);
}
END_TEST

/* ---- the receive path at every byte split ---- */

/* What a receiver ended up with. */
struct rx_snap {
	uint8_t *dst, *rq;
	size_t dst_len, rq_len;
	struct iwarp_wc rcq[8], scq[8];
	int nrcq, nscq, set_error_calls, closed_calls;
	uint8_t *tx;
	size_t tx_len;
};

#define SPLIT_DST 40000
#define SPLIT_RQ  8000

/* B for the split test: initiator (sends its Read first), with the
 * regions and receives the stream from A needs. */
static void split_b_setup(struct fk_owner *b, struct mode m)
{
	static uint8_t dst[SPLIT_DST + 2 * FK_GUARD],
		rq[SPLIT_RQ + 2 * FK_GUARD], src[3000 + 2 * FK_GUARD];
	struct rdmap_conn_cfg cb = mkcfg(true, m);
	struct fk_region *r;
	struct rdmap_wqe *w;

	cb.fpdu_max = 32768;
	fk_init(b);
	ck_assert(fk_create(b, &cb));
	/* the same addresses for every B: A's stream names them */
	fk_region_add_ext(b, 0x200, dst, SPLIT_DST, RW, 0x11);
	r = fk_region_add_ext(b, 0x201, rq, SPLIT_RQ, LW, 0x22);
	fk_region_add_ext(b, 0x202, src, 3000, RR, 0);
	fill_pattern(fk_region_find(b, 0x202)->buf, 3000, 77);
	fk_post_recv(b, 71, 0x201, r->buf, 4000);
	fk_post_recv(b, 72, 0x201, r->buf + 4000, 4000);
	/* B reads 6000 octets of A's 0x100 into 0x200 at 30000 */
	w = fk_post_send(b, 61, IWARP_WR_RDMA_READ, 0, 0x200,
			 fk_region_find(b, 0x200)->buf + 30000, 6000);
	w->rkey = 0x100;
	w->remote_addr = 0; /* set by the caller */
	rdmap_conn_sq_kick(b->c);
}

static void split_snap(struct fk_owner *b, struct rx_snap *s)
{
	s->dst_len = SPLIT_DST;
	s->rq_len = SPLIT_RQ;
	s->dst = malloc(SPLIT_DST);
	s->rq = malloc(SPLIT_RQ);
	ck_assert(s->dst && s->rq);
	memcpy(s->dst, fk_region_find(b, 0x200)->buf, SPLIT_DST);
	memcpy(s->rq, fk_region_find(b, 0x201)->buf, SPLIT_RQ);
	ck_assert_int_le(b->nrcq, 8);
	ck_assert_int_le(b->nscq, 8);
	memcpy(s->rcq, b->rcq, sizeof(s->rcq));
	memcpy(s->scq, b->scq, sizeof(s->scq));
	s->nrcq = b->nrcq;
	s->nscq = b->nscq;
	s->set_error_calls = b->set_error_calls;
	s->closed_calls = b->closed_calls;
	s->tx = malloc(65536);
	ck_assert(s->tx);
	s->tx_len = fk_tx_drain(b, s->tx, 65536);
}

static void snap_eq(const struct rx_snap *x, const struct rx_snap *y)
{
	ck_assert(memcmp(x->dst, y->dst, x->dst_len) == 0);
	ck_assert(memcmp(x->rq, y->rq, x->rq_len) == 0);
	ck_assert_int_eq(x->nrcq, y->nrcq);
	ck_assert_int_eq(x->nscq, y->nscq);
	ck_assert(memcmp(x->rcq, y->rcq, sizeof(x->rcq)) == 0);
	ck_assert(memcmp(x->scq, y->scq, sizeof(x->scq)) == 0);
	ck_assert_int_eq(x->set_error_calls, y->set_error_calls);
	ck_assert_int_eq(x->closed_calls, y->closed_calls);
	ck_assert_uint_eq(x->tx_len, y->tx_len);
	ck_assert(memcmp(x->tx, y->tx, x->tx_len) == 0);
}

static void snap_free(struct rx_snap *s)
{
	free(s->dst);
	free(s->rq);
	free(s->tx);
}

/* A fresh B, its Read Request sent, then |stream| in pieces: split at
 * |cut| (0: whole) or one octet at a time (|cut| == SIZE_MAX). */
static void split_run(struct mode m, uint64_t a_src, const uint8_t *stream,
		      size_t len, size_t cut, struct rx_snap *s)
{
	static uint8_t scratch[4096];
	long mem0 = iw_mem_outstanding();
	struct fk_owner b;

	split_b_setup(&b, m);
	b.sq[0].remote_addr = a_src;
	ck_assert_uint_gt(fk_tx_drain(&b, scratch, sizeof(scratch)), 0);
	if (cut == SIZE_MAX) {
		fk_rx_feed(&b, stream, len, 1);
	} else {
		fk_rx_feed(&b, stream, cut, 0);
		fk_rx_feed(&b, stream + cut, len - cut, 0);
	}
	split_snap(&b, s);
	ck_assert(fk_guards_ok(&b));
	rdmap_conn_destroy(b.c);
	b.c = NULL;
	ck_assert_int_eq(fk_refs(&b), 0);
	ck_assert_int_eq(b.bad_puts, 0);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
	fk_fini(&b);
}

/*
 * A stream of mixed FPDUs (Read Response, RDMA Write large enough to be
 * placed in place, Send, Send with SE, Read Request), delivered to the
 * receiver in two pieces split at every octet, and one octet at a time:
 * what it places, completes and sends back is the same as for whole
 * delivery.
 */
START_TEST(test_rx_every_split)
{
	struct mode m = modes[_i];
	struct fk_owner a, b;
	struct fk_region *asrc, *aloc, *asink;
	struct rdmap_conn_cfg ca = mkcfg(false, m);
	struct rx_snap ref, got;
	struct rdmap_wqe *w;
	static uint8_t stream[65536];
	uint8_t *bdst;
	size_t n, len, cut;

	/* A: responder to B's Read, then its own SQ traffic */
	ca.fpdu_max = 32768;
	fk_init(&a);
	ck_assert(fk_create(&a, &ca));
	asrc = fk_region_add(&a, 0x100, 6000, RR, 0);
	fill_pattern(asrc->buf, 6000, 5);
	aloc = fk_region_add(&a, 0x101, 20000, LW, 0);
	fill_pattern(aloc->buf, 20000, 6);
	asink = fk_region_add(&a, 0x103, 3000, RW, 0);
	split_b_setup(&b, m);
	b.sq[0].remote_addr = (uintptr_t)asrc->buf;
	bdst = fk_region_find(&b, 0x200)->buf;
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	fk_rx_feed(&a, wire, n, 0);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_WRITE, 0, 0x101, aloc->buf,
			 18000);
	w->rkey = 0x200;
	w->remote_addr = (uintptr_t)bdst;
	fk_post_send(&a, 2, IWARP_WR_SEND, IWARP_SEND_SOLICITED, 0x101,
		     aloc->buf + 18000, 2000);
	w = fk_post_send(&a, 3, IWARP_WR_RDMA_READ, 0, 0x103, asink->buf, 3000);
	w->rkey = 0x202;
	w->remote_addr = (uintptr_t)fk_region_find(&b, 0x202)->buf;
	fk_post_send(&a, 4, IWARP_WR_SEND, 0, 0x101, aloc->buf + 7, 33);
	rdmap_conn_sq_kick(a.c);
	len = fk_tx_drain(&a, stream, sizeof(stream));
	ck_assert_uint_gt(len, 26000);
	ck_assert_uint_lt(len, sizeof(stream));
	fk_rx_feed(&b, stream, len, 0);
	/* sanity of the whole delivery itself */
	ck_assert_int_eq(b.set_error_calls, 0);
	ck_assert_int_eq(b.nrcq, 2);
	ck_assert_int_eq(b.nscq, 1);
	ck_assert_int_eq(b.scq[0].status, IWARP_WC_SUCCESS);
	ck_assert(memcmp(bdst, aloc->buf, 18000) == 0);
	ck_assert(memcmp(bdst + 30000, asrc->buf, 6000) == 0);
	ck_assert(memcmp(fk_region_find(&b, 0x201)->buf, aloc->buf + 18000,
			 2000) == 0);
	ck_assert_uint_eq(b.rcq[0].wc_flags, IWARP_WC_WITH_SE);
	ck_assert_uint_eq(b.rcq[1].byte_len, 33);
	rdmap_conn_destroy(b.c);
	b.c = NULL;
	ck_assert_int_eq(fk_refs(&b), 0);
	fk_fini(&b);

	split_run(m, (uintptr_t)asrc->buf, stream, len, 0, &ref);
	ck_assert_uint_gt(ref.tx_len, 3000); /* the Read Response to A */
	for (cut = 1; cut < len; cut++) {
		split_run(m, (uintptr_t)asrc->buf, stream, len, cut, &got);
		snap_eq(&ref, &got);
		snap_free(&got);
	}
	split_run(m, (uintptr_t)asrc->buf, stream, len, SIZE_MAX, &got);
	snap_eq(&ref, &got);
	snap_free(&got);
	snap_free(&ref);
	ck_assert(fk_guards_ok(&a));
	rdmap_conn_destroy(a.c);
	a.c = NULL;
	ck_assert_int_eq(fk_refs(&a), 0);
	fk_fini(&a);
}
END_TEST

/* ---- protocol errors: the exact TERMINATE ---- */

enum bad_kind {
	BAD_WRITE_STAG,
	BAD_WRITE_BOUNDS,
	BAD_WRITE_ACCESS,
	BAD_WRITE_TO_WRAP,
	BAD_SEND_NO_RQE,
	BAD_SEND_TOO_LONG,
	BAD_RRESP_UNSOLICITED,
	BAD_OPCODE,
	BAD_DDP_VERSION,
	BAD_RDMAP_VERSION,
	BAD_QN,
	BAD_MSN,
	BAD_MO,
	BAD_RREQ_STAG,
	BAD_CRC,
	BAD_SEND_INV,
	BAD_RREQ_BOUNDS,
	BAD_RREQ_STREAM,
	/* RFC 7306 opcodes on a connection that did not negotiate them */
	BAD_EXT_IMM_OFF,
	BAD_EXT_ATOMIC_OFF,
	/* ... and errors on one that did */
	BAD_EXT_IMM_NO_RQE,
	BAD_EXT_ATOMIC_OP,
	BAD_EXT_ATOMIC_ALIGN,
	BAD_EXT_ATOMIC_ACCESS,
	BAD_EXT_ATOMIC_STAG,
	BAD_EXT_ARESP_UNSOLICITED,
	BAD_EXT_IMM_TOO_LONG,
	BAD_COUNT
};

#define BAD_IS_EXT(i) ((i) >= BAD_EXT_IMM_NO_RQE && (i) < BAD_COUNT)

struct bad_case {
	int layer, etype, ecode;
	bool attached; /* the offending DDP header is in the TERMINATE */
	bool rreq;     /* and the Read Request header */
};

static const struct bad_case bad_cases[BAD_COUNT] = {
	[BAD_WRITE_STAG] = {IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_TAGGED_BUFFER,
			    IWARP_DDP_ECODE_T_INVALID_STAG, true, false},
	[BAD_WRITE_BOUNDS] = {IWARP_TERM_LAYER_DDP,
			      IWARP_DDP_ETYPE_TAGGED_BUFFER,
			      IWARP_DDP_ECODE_T_BASE_BOUNDS, true, false},
	[BAD_WRITE_ACCESS] = {IWARP_TERM_LAYER_RDMAP,
			      IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			      IWARP_RDMAP_ECODE_ACCESS_RIGHTS, true, false},
	[BAD_WRITE_TO_WRAP] = {IWARP_TERM_LAYER_DDP,
			       IWARP_DDP_ETYPE_TAGGED_BUFFER,
			       IWARP_DDP_ECODE_T_TO_WRAP, true, false},
	[BAD_SEND_NO_RQE] = {IWARP_TERM_LAYER_DDP,
			     IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
			     IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF, true,
			     false},
	[BAD_SEND_TOO_LONG] = {IWARP_TERM_LAYER_DDP,
			       IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
			       IWARP_DDP_ECODE_UT_MSG_TOO_LONG, true, false},
	[BAD_RRESP_UNSOLICITED] = {IWARP_TERM_LAYER_RDMAP,
				   IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
				   IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE, true,
				   false},
	[BAD_OPCODE] = {IWARP_TERM_LAYER_RDMAP,
			IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
			IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE, true, false},
	[BAD_DDP_VERSION] = {IWARP_TERM_LAYER_DDP,
			     IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
			     IWARP_DDP_ECODE_UT_INVALID_VERSION, true, false},
	[BAD_RDMAP_VERSION] = {IWARP_TERM_LAYER_RDMAP,
			       IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
			       IWARP_RDMAP_ECODE_INVALID_VERSION, true, false},
	[BAD_QN] = {IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
		    IWARP_DDP_ECODE_UT_INVALID_QN, true, false},
	[BAD_MSN] = {IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
		     IWARP_DDP_ECODE_UT_INVALID_MSN_RANGE, true, false},
	[BAD_MO] = {IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
		    IWARP_DDP_ECODE_UT_INVALID_MO, true, false},
	[BAD_RREQ_STAG] = {IWARP_TERM_LAYER_RDMAP,
			   IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			   IWARP_RDMAP_ECODE_INVALID_STAG, true, true},
	[BAD_CRC] = {IWARP_TERM_LAYER_LLP, IWARP_LLP_ETYPE_MPA,
		     IWARP_LLP_ECODE_CRC, false, false},
	[BAD_SEND_INV] = {IWARP_TERM_LAYER_RDMAP,
			  IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			  IWARP_RDMAP_ECODE_CANT_INVALIDATE, true, false},
	[BAD_RREQ_BOUNDS] = {IWARP_TERM_LAYER_RDMAP,
			     IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			     IWARP_RDMAP_ECODE_BASE_BOUNDS, true, true},
	[BAD_RREQ_STREAM] = {IWARP_TERM_LAYER_RDMAP,
			     IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
			     IWARP_RDMAP_ECODE_ACCESS_RIGHTS, true, true},
	/* RFC 5040 §7: an opcode not in use on this stream */
	[BAD_EXT_IMM_OFF] = {IWARP_TERM_LAYER_RDMAP,
			     IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
			     IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE, true, false},
	[BAD_EXT_ATOMIC_OFF] = {IWARP_TERM_LAYER_RDMAP,
				IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
				IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE, true,
				false},
	[BAD_EXT_IMM_NO_RQE] = {IWARP_TERM_LAYER_DDP,
				IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
				IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF, true,
				false},
	[BAD_EXT_ATOMIC_OP] = {IWARP_TERM_LAYER_RDMAP,
			       IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
			       IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE, true,
			       false},
	[BAD_EXT_ATOMIC_ALIGN] = {IWARP_TERM_LAYER_RDMAP,
				  IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
				  IWARP_RDMAP_ECODE_BASE_BOUNDS, true, false},
	[BAD_EXT_ATOMIC_ACCESS] = {IWARP_TERM_LAYER_RDMAP,
				   IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
				   IWARP_RDMAP_ECODE_ACCESS_RIGHTS, true,
				   false},
	[BAD_EXT_ATOMIC_STAG] = {IWARP_TERM_LAYER_RDMAP,
				 IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
				 IWARP_RDMAP_ECODE_INVALID_STAG, true, false},
	[BAD_EXT_ARESP_UNSOLICITED] = {IWARP_TERM_LAYER_RDMAP,
				       IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
				       IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE,
				       true, false},
	[BAD_EXT_IMM_TOO_LONG] = {IWARP_TERM_LAYER_DDP,
				  IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
				  IWARP_DDP_ECODE_UT_MSG_TOO_LONG, true, false},
};

START_TEST(test_protocol_errors)
{
	const struct bad_case *bc = &bad_cases[_i];
	struct mode m = {true, false};
	struct fk_owner a, b;
	struct fk_region *dst, *ro, *rq;
	static uint8_t ul[2048], fp[4096], pay[1024];
	struct ddp_hdr h;
	struct rdmap_rreq rr;
	struct rdmap_term t;
	struct ddp_hdr th;
	struct rdmap_atomic_req ar;
	struct fk_region *at;
	uint8_t body[RDMAP_ATOMIC_REQ_LEN];
	size_t ulen = 0, flen, n;

#ifdef IWARP_FUZZING
	if (_i == BAD_CRC)
		return; /* fuzzing builds do not check CRCs */
#endif
	mk_ext = BAD_IS_EXT(_i);
	pair_init(&a, &b, m, 4, 4, 0);
	mk_ext = false;
	dst = fk_region_add(&b, 0x20, 1024, RW, 0x5A);
	ro = fk_region_add(&b, 0x24, 1024, RR, 0x5A);
	rq = fk_region_add(&b, 0x21, 64, LW, 0x5A);
	at = fk_region_add(&b, 0x26, 64, RWA, 0x5A);
	if (_i != BAD_SEND_NO_RQE && _i != BAD_EXT_IMM_NO_RQE)
		fk_post_recv(&b, 1, 0x21, rq->buf, 64);
	memset(pay, 0xC3, sizeof(pay));
	memset(&ar, 0, sizeof(ar));
	ar.op = RDMAP_ATOMIC_FETCH_ADD;
	ar.req_id = 1;
	ar.stag = 0x26;
	ar.to = (uintptr_t)at->buf + 8;
	ar.add_swap = 1;
	switch ((enum bad_kind)_i) {
	case BAD_WRITE_STAG:
		h = hdr_tagged(RDMAP_OP_WRITE, 0x99, (uintptr_t)dst->buf);
		ulen = ulpdu_build(ul, &h, pay, 100);
		break;
	case BAD_WRITE_BOUNDS:
		h = hdr_tagged(RDMAP_OP_WRITE, 0x20,
			       (uintptr_t)dst->buf + 1000);
		ulen = ulpdu_build(ul, &h, pay, 100);
		break;
	case BAD_WRITE_ACCESS:
		h = hdr_tagged(RDMAP_OP_WRITE, 0x24, (uintptr_t)ro->buf);
		ulen = ulpdu_build(ul, &h, pay, 100);
		break;
	case BAD_WRITE_TO_WRAP:
		h = hdr_tagged(RDMAP_OP_WRITE, 0x20, UINT64_MAX - 10);
		ulen = ulpdu_build(ul, &h, pay, 100);
		break;
	case BAD_SEND_NO_RQE:
		h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_SEND_TOO_LONG:
		h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
		ulen = ulpdu_build(ul, &h, pay, 65);
		break;
	case BAD_RRESP_UNSOLICITED:
		h = hdr_tagged(RDMAP_OP_READ_RESPONSE, 0x20,
			       (uintptr_t)dst->buf);
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_OPCODE:
		h = hdr_untagged(0x0C, DDP_QN_SEND, 1);
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_DDP_VERSION:
		h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
		h.dv = 2;
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_RDMAP_VERSION:
		h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
		h.rv = 2;
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_QN:
		h = hdr_untagged(RDMAP_OP_SEND, 3, 1);
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_MSN:
		h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 7);
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_MO:
		h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
		h.mo = 4;
		h.last = false;
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_RREQ_STAG:
		memset(&rr, 0, sizeof(rr));
		rr.sink_stag = 0x77;
		rr.size = 16;
		rr.src_stag = 0x98;
		rr.src_to = (uintptr_t)ro->buf;
		ulen = rdmap_rreq_msg_encode(ul, 1, &rr);
		break;
	case BAD_CRC:
		h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_SEND_INV: /* 0x20 cannot be invalidated */
		h = hdr_untagged(RDMAP_OP_SEND_INV, DDP_QN_SEND, 1);
		h.rsvdulp = 0x20;
		ulen = ulpdu_build(ul, &h, pay, 10);
		break;
	case BAD_RREQ_BOUNDS:
	case BAD_RREQ_STREAM:
		memset(&rr, 0, sizeof(rr));
		rr.sink_stag = 0x77;
		rr.size = _i == BAD_RREQ_BOUNDS ? 1025 : 16;
		rr.src_stag = 0x24;
		rr.src_to = (uintptr_t)ro->buf;
		ulen = rdmap_rreq_msg_encode(ul, 1, &rr);
		if (_i == BAD_RREQ_STREAM)
			b.stream_access = IWARP_ACCESS_REMOTE_WRITE;
		break;
	case BAD_EXT_IMM_OFF:
	case BAD_EXT_IMM_NO_RQE:
	case BAD_EXT_IMM_TOO_LONG:
		h = hdr_untagged(RDMAP_OP_IMM_DATA, DDP_QN_SEND, 1);
		ulen = ulpdu_build(ul, &h, pay,
				   _i == BAD_EXT_IMM_TOO_LONG ? 9 : 8);
		break;
	case BAD_EXT_ARESP_UNSOLICITED:
		h = hdr_untagged(RDMAP_OP_ATOMIC_RESPONSE,
				 RDMAP_QN_ATOMIC_RESPONSE, 1);
		ulen = ulpdu_build(ul, &h, pay, RDMAP_ATOMIC_RESP_LEN);
		break;
	case BAD_EXT_ATOMIC_OFF:
	case BAD_EXT_ATOMIC_OP:
	case BAD_EXT_ATOMIC_ALIGN:
	case BAD_EXT_ATOMIC_ACCESS:
	case BAD_EXT_ATOMIC_STAG:
		if (_i == BAD_EXT_ATOMIC_OP)
			ar.op = 5; /* reserved Atomic Operation Code */
		if (_i == BAD_EXT_ATOMIC_ALIGN)
			ar.to += 4;
		if (_i == BAD_EXT_ATOMIC_ACCESS) {
			ar.stag = 0x20; /* RW, no REMOTE_ATOMIC */
			ar.to = (uintptr_t)dst->buf;
		}
		if (_i == BAD_EXT_ATOMIC_STAG)
			ar.stag = 0x99;
		h = hdr_untagged(RDMAP_OP_ATOMIC_REQUEST,
				 RDMAP_QN_ATOMIC_REQUEST, 1);
		rdmap_atomic_req_encode(body, &ar);
		ulen = ulpdu_build(ul, &h, body, sizeof(body));
		break;
	case BAD_COUNT:
		break;
	}
	flen = frame(fp, ul, ulen, m.crc);
	if (_i == BAD_CRC)
		fp[5] ^= 0x40;
	fk_rx_feed(&b, fp, flen, 0);
	ck_assert_int_eq(b.term_queued, 1);
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	term_find(wire, n, m.crc, &t, &th);
	ck_assert_uint_eq(th.msn, 1);
	ck_assert_uint_eq(th.qn, DDP_QN_TERMINATE);
	cause_eq(&t.cause, bc->layer, bc->etype, bc->ecode);
	ck_assert_int_eq(t.d, bc->attached);
	ck_assert_int_eq(t.r, bc->rreq);
	if (bc->attached) {
		ck_assert(t.m);
		ck_assert_uint_eq(t.ddp_seg_len, ulen);
		ck_assert(memcmp(t.ddp_hdr, ul, t.ddp_hdr_len) == 0);
	}
	if (bc->rreq)
		ck_assert(memcmp(t.rdmap_hdr, ul + DDP_UNTAGGED_HDR_LEN,
				 RDMAP_RREQ_HDR_LEN) == 0);
	/* nothing of the failed message was placed */
	for (n = 0; n < 1024; n++)
		ck_assert_uint_eq(dst->buf[n], 0x5A);
	for (n = 0; n < 64; n++)
		ck_assert_uint_eq(at->buf[n], 0x5A);
	/* (a Send whose CRC fails, or whose Invalidate fails, may have been
	 * placed: its completion is an error, RFC 5041 §5, RFC 5040 §6.2) */
	for (n = 0; n < 64 && _i != BAD_CRC && _i != BAD_SEND_INV; n++)
		ck_assert_uint_eq(rq->buf[n], 0x5A);
	if (_i == BAD_SEND_INV) {
		/* the message arrived, its Invalidate failed (RFC 5040 §6.2) */
		ck_assert_int_eq(b.nrcq, 1);
		ck_assert_int_eq(b.rcq[0].status, IWARP_WC_LOC_PROT_ERR);
		ck_assert(dst->valid);
	}
	/* the TERMINATE was sent: the QP is in ERR with that cause */
	ck_assert_int_eq(b.set_error_calls, 1);
	ck_assert(b.err_cause_valid);
	ck_assert(!b.err_received);
	ck_assert(b.err_async);
	cause_eq(&b.err_cause, bc->layer, bc->etype, bc->ecode);
	ck_assert_int_eq(b.closed_calls, 1);
	ck_assert(b.closed_cause_valid);
	ck_assert_int_ne(b.closed_err, 0);
	cause_eq(&b.closed_cause, bc->layer, bc->etype, bc->ecode);
	ck_assert_int_ge(b.shutdowns, 1);
	/* no receive completed successfully */
	for (n = 0; n < (size_t)b.nrcq; n++)
		ck_assert_int_ne(b.rcq[n].status, IWARP_WC_SUCCESS);
	/* input after the failure is not processed */
	fk_rx_feed(&b, fp, flen, 0);
	ck_assert_int_eq(b.set_error_calls, 1);
	pair_fini(&a, &b);
}
END_TEST

/* Read Responses that do not match the outstanding Read (RFC 5040 §4.5,
 * RFC 5041 §7): TERMINATE with the DDP tagged cause; the Read never
 * completes successfully and nothing is placed. _i: wrong STag, wrong TO,
 * too long, last segment short. */
START_TEST(test_read_response_mismatch)
{
	static const int ecodes[] = {
		IWARP_DDP_ECODE_T_INVALID_STAG, IWARP_DDP_ECODE_T_BASE_BOUNDS,
		IWARP_DDP_ECODE_T_BASE_BOUNDS, IWARP_DDP_ECODE_T_BASE_BOUNDS};
	static uint8_t ul[512], fp[1024], pay[256];
	struct fk_owner a, b;
	struct fk_region *asink;
	struct rdmap_wqe *w;
	struct rdmap_term t;
	struct ddp_hdr h, th;
	size_t n, ulen, flen;

	pair_init(&a, &b, modes[1], 4, 4, 0);
	asink = fk_region_add(&a, 0x11, 256, RW, 0x5A);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 100);
	w->rkey = 0x22;
	w->remote_addr = 0x1000;
	rdmap_conn_sq_kick(a.c);
	ck_assert_uint_gt(fk_tx_drain(&a, wire, WIRE_CAP), 0);
	memset(pay, 0xC3, sizeof(pay));
	h = hdr_tagged(RDMAP_OP_READ_RESPONSE, 0x11, (uintptr_t)asink->buf);
	switch (_i) {
	case 0:
		h.stag = 0x12;
		ulen = ulpdu_build(ul, &h, pay, 100);
		break;
	case 1:
		h.to += 4;
		ulen = ulpdu_build(ul, &h, pay, 96);
		break;
	case 2:
		ulen = ulpdu_build(ul, &h, pay, 150);
		break;
	default:
		ulen = ulpdu_build(ul, &h, pay, 50);
		break;
	}
	flen = frame(fp, ul, ulen, true);
	fk_rx_feed(&a, fp, flen, 0);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	term_find(wire, n, true, &t, &th);
	cause_eq(&t.cause, IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_TAGGED_BUFFER,
		 ecodes[_i]);
	ck_assert(t.d);
	ck_assert(memcmp(t.ddp_hdr, ul, DDP_TAGGED_HDR_LEN) == 0);
	ck_assert_int_eq(a.nscq, 1);
	ck_assert_int_ne(a.scq[0].status, IWARP_WC_SUCCESS);
	for (n = 0; n < 256; n++)
		ck_assert_uint_eq(asink->buf[n], 0x5A);
	pair_fini(&a, &b);
}
END_TEST

/* A zero-length Read: one Read Request, a zero-length Read Response
 * (RFC 5040 §4.4 allows size 0), completes successfully. */
START_TEST(test_zero_length_read)
{
	struct fk_owner a, b;
	struct fk_region *asink, *bsrc;
	struct rdmap_wqe *w;

	pair_init(&a, &b, modes[3], 4, 4, 0);
	asink = fk_region_add(&a, 0x11, 16, RW, 0x5A);
	bsrc = fk_region_add(&b, 0x22, 16, RR, 1);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 0);
	w->rkey = 0x22;
	w->remote_addr = (uintptr_t)bsrc->buf;
	fk_post_send(&a, 2, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 0);
	a.sq[1].rkey = 0x999; /* never looked up: no octet is read */
	rdmap_conn_sq_kick(a.c);
	fk_pump(&a, &b);
	ck_assert_int_eq(a.set_error_calls, 0);
	ck_assert_int_eq(b.set_error_calls, 0);
	ck_assert_int_eq(a.nscq, 2);
	ck_assert_int_eq(a.scq[0].status, IWARP_WC_SUCCESS);
	ck_assert_int_eq(a.scq[1].status, IWARP_WC_SUCCESS);
	ck_assert_uint_eq(asink->buf[0], 0x5A);
	pair_fini(&a, &b);
}
END_TEST

/* A Send of two segments whose second one is bad (MO, RFC 5041 §7): the
 * receive WQE bound to it completes in error, never successfully. _i 0:
 * bad MO; 1: a TERMINATE instead of the second segment. */
START_TEST(test_send_fails_mid_message)
{
	static uint8_t ul[512], fp[2048], pay[256];
	struct fk_owner a, b;
	struct fk_region *rq;
	struct ddp_hdr h;
	struct rdmap_term t, tx;
	size_t ulen, flen, n;
	int len;

	pair_init(&a, &b, modes[1], 4, 4, 0);
	rq = fk_region_add(&b, 0x21, 512, LW, 0);
	fk_post_recv(&b, 1, 0x21, rq->buf, 512);
	fk_post_recv(&b, 2, 0x21, rq->buf, 512);
	memset(pay, 0xC3, sizeof(pay));
	h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
	h.last = false;
	ulen = ulpdu_build(ul, &h, pay, 100);
	flen = frame(fp, ul, ulen, true);
	if (_i == 0) {
		h.mo = 200; /* should be 100 */
		h.last = true;
		ulen = ulpdu_build(ul, &h, pay, 100);
	} else {
		memset(&tx, 0, sizeof(tx));
		tx.cause.layer = IWARP_TERM_LAYER_RDMAP;
		tx.cause.etype = IWARP_RDMAP_ETYPE_REMOTE_OPERATION;
		tx.cause.ecode = IWARP_RDMAP_ECODE_UNSPECIFIED;
		len = rdmap_term_encode(ul, sizeof(ul), 1, &tx);
		ck_assert_int_gt(len, 0);
		ulen = (size_t)len;
	}
	fk_rx_feed(&b, fp, flen, 0);
	ck_assert_int_eq(b.nrcq, 0);
	flen = frame(fp, ul, ulen, true);
	fk_rx_feed(&b, fp, flen, 0);
	ck_assert_int_ge(b.nrcq, 1);
	ck_assert_uint_eq(b.rcq[0].wr_id, 1);
	ck_assert_int_ne(b.rcq[0].status, IWARP_WC_SUCCESS);
	for (n = 0; n < (size_t)b.nrcq; n++)
		ck_assert_int_ne(b.rcq[n].status, IWARP_WC_SUCCESS);
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	ck_assert_int_eq(b.set_error_calls, 1);
	if (_i == 0) {
		term_find(wire, n, true, &t, &h);
		cause_eq(&t.cause, IWARP_TERM_LAYER_DDP,
			 IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
			 IWARP_DDP_ECODE_UT_INVALID_MO);
		ck_assert(!b.err_received);
	} else {
		ck_assert_uint_eq(n, 0); /* a TERMINATE is not answered */
		ck_assert(b.err_received);
		cause_eq(&b.err_cause, IWARP_TERM_LAYER_RDMAP,
			 IWARP_RDMAP_ETYPE_REMOTE_OPERATION,
			 IWARP_RDMAP_ECODE_UNSPECIFIED);
	}
	pair_fini(&a, &b);
}
END_TEST

/* A TERMINATE the peer never takes: after the linger the connection ends
 * without it (RFC 5040 §5.4 "if possible"), and its references return. */
START_TEST(test_term_linger_expired)
{
	static uint8_t ul[64], fp[128];
	struct fk_owner a, b;
	struct ddp_hdr h;
	size_t ulen, flen;

	pair_init(&a, &b, modes[0], 4, 4, 0);
	h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1); /* no receive WQE */
	ulen = ulpdu_build(ul, &h, NULL, 0);
	flen = frame(fp, ul, ulen, false);
	fk_rx_feed(&b, fp, flen, 0);
	ck_assert_int_eq(b.term_queued, 1);
	ck_assert(rdmap_conn_tx_pending(b.c));
	ck_assert_int_eq(b.set_error_calls, 0); /* waits for the TERMINATE */
	rdmap_conn_term_expired(b.c);
	ck_assert_int_eq(b.set_error_calls, 1);
	ck_assert_int_eq(b.closed_calls, 1);
	cause_eq(&b.err_cause, IWARP_TERM_LAYER_DDP,
		 IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
		 IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF);
	ck_assert(!rdmap_conn_tx_pending(b.c));
	rdmap_conn_term_expired(b.c); /* idempotent */
	ck_assert_int_eq(b.closed_calls, 1);
	pair_fini(&a, &b);
}
END_TEST

/* The application moves the QP to ERR (_i 0) or RESET (_i 1) in the
 * middle of an inbound Send: its receive WQE completes flushed, the
 * stream is shut down, closed runs once, and nothing more is taken in. */
START_TEST(test_app_state_mid_message)
{
	static uint8_t ul[256], fp[512], pay[128];
	struct iovec iov[4];
	struct fk_owner a, b;
	struct fk_region *rq;
	struct ddp_hdr h;
	size_t ulen, flen;

	pair_init(&a, &b, modes[0], 4, 4, 0);
	rq = fk_region_add(&b, 0x21, 512, LW, 0);
	fk_post_recv(&b, 1, 0x21, rq->buf, 512);
	memset(pay, 0xC3, sizeof(pay));
	h = hdr_untagged(RDMAP_OP_SEND, DDP_QN_SEND, 1);
	h.last = false;
	ulen = ulpdu_build(ul, &h, pay, 100);
	flen = frame(fp, ul, ulen, false);
	fk_rx_feed(&b, fp, flen, 0);
	ck_assert_int_eq(b.nrcq, 0);
	rdmap_conn_app_state(b.c, _i ? IWARP_QPS_RESET : IWARP_QPS_ERR);
	ck_assert_int_eq(b.nrcq, 1);
	ck_assert_uint_eq(b.rcq[0].wr_id, 1);
	ck_assert_int_eq(b.rcq[0].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(b.closed_calls, 1);
	ck_assert_int_eq(b.closed_err, 0);
	ck_assert_int_ge(b.shutdowns, 1);
	ck_assert_int_eq(fk_rx_iov(&b, iov, 4), 0);
	ck_assert_int_eq(rdmap_conn_tx_iov(b.c, iov, 4), 0);
	ck_assert_int_eq(rdmap_conn_rx_prefill(b.c, fp, flen), -EPIPE);
	rdmap_conn_app_state(b.c, IWARP_QPS_ERR);
	ck_assert_int_eq(b.closed_calls, 1);
	rdmap_conn_closed(b.c, 0);
	ck_assert_int_eq(b.closed_calls, 1);
	pair_fini(&a, &b);
}
END_TEST

/* A WQE that fails a local check (_i 0: bad lkey; 1: a Read with ORD 0)
 * completes in order with its local status, what was posted after it is
 * flushed, and the QP fails with a TERMINATE (RDMAP local catastrophic)
 * after the FPDUs of the WQEs before it. */
START_TEST(test_local_wqe_error)
{
	static struct fpdu f[8];
	struct fk_owner a, b;
	struct fk_region *asrc, *brq;
	struct rdmap_term t;
	struct ddp_hdr th;
	size_t n;
	int nf;

	pair_init(&a, &b, modes[0], 4, _i ? 0 : 4, 0);
	asrc = fk_region_add(&a, 0x10, 64, LW, 1);
	brq = fk_region_add(&b, 0x21, 64, LW, 0);
	fk_post_recv(&b, 7, 0x21, brq->buf, 64);
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 16);
	if (_i == 0)
		fk_post_send(&a, 2, IWARP_WR_SEND, 0, 0x66, asrc->buf, 16);
	else
		fk_post_send(&a, 2, IWARP_WR_RDMA_READ, 0, 0x10, asrc->buf, 16);
	fk_post_send(&a, 3, IWARP_WR_SEND, 0, 0x10, asrc->buf, 16);
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	nf = wire_split(wire, n, false, f, 8);
	ck_assert_int_eq(nf, 2);
	ck_assert_int_eq(fpdu_opcode(&f[0]), RDMAP_OP_SEND);
	term_find(wire, n, false, &t, &th);
	cause_eq(&t.cause, IWARP_TERM_LAYER_RDMAP,
		 IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC, 0);
	ck_assert_int_eq(a.nscq, 3);
	ck_assert_uint_eq(a.scq[0].wr_id, 1);
	ck_assert_int_eq(a.scq[0].status, IWARP_WC_SUCCESS);
	ck_assert_uint_eq(a.scq[1].wr_id, 2);
	ck_assert_int_eq(a.scq[1].status,
			 _i ? IWARP_WC_LOC_QP_OP_ERR : IWARP_WC_LOC_PROT_ERR);
	ck_assert_uint_eq(a.scq[2].wr_id, 3);
	ck_assert_int_eq(a.scq[2].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(a.set_error_calls, 1);
	/* the peer gets the Send, then the TERMINATE */
	fk_rx_feed(&b, wire, n, 0);
	ck_assert_int_eq(b.rcq[0].status, IWARP_WC_SUCCESS);
	ck_assert(b.err_received);
	pair_fini(&a, &b);
}
END_TEST

/* One direction of a randomized wire: octets the sender's transport
 * accepted and the receiver has not read yet. */
struct rwire {
	uint8_t *buf;
	size_t len, cap;
};

/* Accepts a random prefix of what |x| offers; returns the octets. */
static size_t rand_tx(struct fk_owner *x, struct rwire *w, uint64_t *seed)
{
	struct iovec iov[64];
	size_t total = 0, take, k = 0;
	int n, i;

	n = rdmap_conn_tx_iov(x->c, iov, 1 + (int)(iw_test_rand(seed) % 64));
	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (!total)
		return 0;
	take = iw_test_rand(seed) % 3 ? total : 1 + iw_test_rand(seed) % total;
	ck_assert_uint_le(w->len + take, w->cap);
	for (i = 0; i < n && k < take; i++) {
		size_t c =
			iov[i].iov_len < take - k ? iov[i].iov_len : take - k;

		memcpy(w->buf + w->len + k, iov[i].iov_base, c);
		k += c;
	}
	w->len += take;
	rdmap_conn_tx_done(x->c, take);
	return take;
}

/* Delivers a random part of |w| to |x| in random pieces. */
static size_t rand_rx(struct fk_owner *x, struct rwire *w, uint64_t *seed)
{
	size_t n, piece;

	if (!w->len)
		return 0;
	n = iw_test_rand(seed) % 2 ? w->len : 1 + iw_test_rand(seed) % w->len;
	piece = iw_test_rand(seed) % 4 ? 1 + iw_test_rand(seed) % 3000 : 1;
	fk_rx_feed(x, w->buf, n, piece);
	memmove(w->buf, w->buf + n, w->len - n);
	w->len -= n;
	return n;
}

/*
 * Random Sends, Writes and Reads of random sizes both ways, the octets
 * moved with random partial acceptance by the transport and random
 * receive sizes (direct placement included): everything completes
 * successfully, in order, with the data in place.
 */
START_TEST(test_random_traffic)
{
	struct mode m = modes[_i % 4];
	uint64_t seed = 0x1234567u + (uint64_t)_i;
	struct fk_owner x[2];
	struct rwire w[2];
	struct fk_region *src[2], *dst[2], *rq[2];
	uint64_t expect_wr[2] = {0, 0};
	int side, k, round, moved;

	pair_init(&x[0], &x[1], m, 8, 8, (_i / 4) ? 32768 : 0);
	for (side = 0; side < 2; side++) {
		src[side] = fk_region_add(&x[side], 0x10, 1 << 16, RR | LW, 0);
		fill_pattern(src[side]->buf, 1 << 16, 40 + (uint64_t)side);
		dst[side] = fk_region_add(&x[side], 0x20, 1 << 16, RW, 0);
		rq[side] = fk_region_add(&x[side], 0x30, 1 << 16, LW, 0);
		w[side].cap = 1 << 22;
		w[side].buf = malloc(w[side].cap);
		w[side].len = 0;
		ck_assert_ptr_nonnull(w[side].buf);
	}
	for (round = 0; round < 12; round++) {
		for (side = 0; side < 2; side++) {
			struct fk_owner *me = &x[side], *peer = &x[1 - side];
			int nwr = 1 + (int)(iw_test_rand(&seed) % 6);

			for (k = 0; k < nwr; k++) {
				uint32_t len = (uint32_t)(iw_test_rand(&seed) %
							  (1 << 15));
				uint32_t off = (uint32_t)(iw_test_rand(&seed) %
							  (1 << 15));
				struct rdmap_wqe *wq;
				uint64_t id = ++expect_wr[side];

				switch (iw_test_rand(&seed) % 3) {
				case 0:
					fk_post_recv(peer, id, 0x30,
						     rq[1 - side]->buf,
						     1 << 16);
					fk_post_send(me, id, IWARP_WR_SEND, 0,
						     0x10, src[side]->buf + off,
						     len);
					break;
				case 1:
					wq = fk_post_send(
						me, id, IWARP_WR_RDMA_WRITE, 0,
						0x10, src[side]->buf + off,
						len);
					wq->rkey = 0x20;
					wq->remote_addr =
						(uintptr_t)dst[1 - side]->buf +
						off;
					break;
				default:
					wq = fk_post_send(
						me, id, IWARP_WR_RDMA_READ, 0,
						0x20, dst[side]->buf + off,
						len);
					wq->rkey = 0x10;
					wq->remote_addr =
						(uintptr_t)src[1 - side]->buf +
						off;
					break;
				}
			}
			rdmap_conn_sq_kick(me->c);
		}
		do {
			moved = 0;
			for (side = 0; side < 2; side++) {
				moved += rand_tx(&x[side], &w[side], &seed) > 0;
				moved += rand_rx(&x[1 - side], &w[side],
						 &seed) > 0;
			}
		} while (moved || w[0].len || w[1].len ||
			 rdmap_conn_tx_pending(x[0].c) ||
			 rdmap_conn_tx_pending(x[1].c));
		for (side = 0; side < 2; side++) {
			ck_assert_int_eq(x[side].set_error_calls, 0);
			ck_assert_int_eq(x[side].nscq, (int)expect_wr[side]);
		}
	}
	for (side = 0; side < 2; side++) {
		for (k = 0; k < x[side].nscq; k++) {
			ck_assert_uint_eq(x[side].scq[k].wr_id,
					  (uint64_t)k + 1);
			ck_assert_int_eq(x[side].scq[k].status,
					 IWARP_WC_SUCCESS);
		}
		for (k = 0; k < x[side].nrcq; k++)
			ck_assert_int_eq(x[side].rcq[k].status,
					 IWARP_WC_SUCCESS);
		/* every Write and Read moved the source octets at the same
		 * offset, so whatever was written is the peer's source */
		for (k = 0; k < 1 << 16; k++)
			if (dst[side]->buf[k])
				ck_assert_uint_eq(dst[side]->buf[k],
						  src[1 - side]->buf[k]);
		free(w[side].buf);
	}
	pair_fini(&x[0], &x[1]);
}
END_TEST

/*
 * Writes into and Reads from B's regions while B's application
 * deregisters one at a random point (invalid first, then
 * rdmap_conn_mem_revoke), sometimes while a receive is in flight (between
 * rx_iov and rx_done, the octets already landed). Once the engine holds
 * no reference any more, the region is never written again, and every
 * reference comes back.
 */
START_TEST(test_random_revoke)
{
	struct mode m = modes[_i % 4];
	uint64_t seed = 0xABCDEFu + (uint64_t)_i * 7919u;
	struct fk_owner a, b;
	struct rwire wa = {NULL, 0, 1 << 22}, wb = {NULL, 0, 1 << 22};
	struct fk_region *asrc, *asink, *bw, *br, *vict;
	uint8_t *snap = NULL;
	struct iovec iov[8];
	bool revoked = false, held = true;
	int k, step, moved, cnt, i, revoke_step;

	pair_init(&a, &b, m, 8, 8, (_i / 4) % 2 ? 32768 : 0);
	revoke_step = (int)(iw_test_rand(&seed) % 24);
	asrc = fk_region_add(&a, 0x10, 1 << 16, LW, 0);
	fill_pattern(asrc->buf, 1 << 16, 3);
	asink = fk_region_add(&a, 0x11, 1 << 16, RW, 0);
	bw = fk_region_add(&b, 0x20, 1 << 16, RW, 0);
	br = fk_region_add(&b, 0x21, 1 << 16, RR, 0);
	fill_pattern(br->buf, 1 << 16, 4);
	vict = (_i / 8) % 2 ? br : bw;
	wa.buf = malloc(wa.cap);
	wb.buf = malloc(wb.cap);
	ck_assert(wa.buf && wb.buf);
	for (k = 0; k < 24; k++) {
		uint32_t len = 1 + (uint32_t)(iw_test_rand(&seed) % 40000);
		uint32_t off =
			(uint32_t)(iw_test_rand(&seed) % ((1 << 16) - len));
		struct rdmap_wqe *wq;

		if (k % 2) {
			wq = fk_post_send(&a, (uint64_t)k + 1,
					  IWARP_WR_RDMA_WRITE, 0, 0x10,
					  asrc->buf + off, len);
			wq->rkey = 0x20;
			wq->remote_addr = (uintptr_t)bw->buf + off;
		} else {
			wq = fk_post_send(&a, (uint64_t)k + 1,
					  IWARP_WR_RDMA_READ, 0, 0x11,
					  asink->buf + off, len);
			wq->rkey = 0x21;
			wq->remote_addr = (uintptr_t)br->buf + off;
		}
	}
	rdmap_conn_sq_kick(a.c);
	step = 0;
	do {
		moved = 0;
		moved += rand_tx(&a, &wa, &seed) > 0;
		if (!revoked && wa.len && iw_test_rand(&seed) % 2 == 0) {
			/* a receive in flight: its octets land, then the
			 * application revokes, then the receive ends */
			size_t n = 0, want = 1 + iw_test_rand(&seed) % wa.len;

			cnt = fk_rx_iov(&b, iov, 8);
			for (i = 0; i < cnt && n < want; i++) {
				size_t c = iov[i].iov_len < want - n
						   ? iov[i].iov_len
						   : want - n;

				memcpy(iov[i].iov_base, wa.buf + n, c);
				n += c;
			}
			/* (also when the receive places straight into it) */
			if (step++ == revoke_step ||
			    (cnt > 0 &&
			     (uint8_t *)iov[0].iov_base >= vict->buf &&
			     (uint8_t *)iov[0].iov_base <
				     vict->buf + vict->len &&
			     iw_test_rand(&seed) % 2)) {
				vict->valid = false;
				held = rdmap_conn_mem_revoke(b.c, vict->stag);
				revoked = true;
				/* false: the engine holds it no more */
				if (!held)
					ck_assert_int_eq(vict->refs, 0);
			}
			if (cnt > 0) {
				fk_rx_done(&b, n);
				memmove(wa.buf, wa.buf + n, wa.len - n);
				wa.len -= n;
				moved++;
			}
		} else {
			moved += rand_rx(&b, &wa, &seed) > 0;
		}
		moved += rand_tx(&b, &wb, &seed) > 0;
		moved += rand_rx(&a, &wb, &seed) > 0;
		if (revoked && !snap && vict->refs == 0) {
			snap = malloc(vict->len);
			ck_assert_ptr_nonnull(snap);
			memcpy(snap, vict->buf, vict->len);
		}
		if (snap)
			ck_assert(memcmp(snap, vict->buf, vict->len) == 0);
	} while (moved || wa.len || wb.len);
	if (!revoked) { /* everything was done before: revoke now */
		vict->valid = false;
		held = rdmap_conn_mem_revoke(b.c, vict->stag);
		if (!held)
			ck_assert_int_eq(vict->refs, 0);
	}
	(void)held; /* either way the reference comes back below */
	/* the stream ends; nothing is held any more */
	rdmap_conn_closed(a.c, 0);
	rdmap_conn_closed(b.c, 0);
	ck_assert_int_eq(vict->refs, 0);
	if (snap)
		ck_assert(memcmp(snap, vict->buf, vict->len) == 0);
	/* no Read completed successfully with data the engine did not
	 * place: a successful Read has the source's octets */
	for (k = 0; k < a.nscq; k++)
		if (a.scq[k].status == IWARP_WC_SUCCESS &&
		    a.scq[k].opcode == IWARP_WC_RDMA_READ) {
			const struct rdmap_wqe *wq =
				&a.sq[(a.scq[k].wr_id - 1) & (FK_SQ - 1)];
			uint64_t off = wq->sge[0].addr - (uintptr_t)asink->buf;

			ck_assert(memcmp(asink->buf + off, br->buf + off,
					 wq->sge[0].length) == 0);
		}
	free(snap);
	free(wa.buf);
	free(wb.buf);
	pair_fini(&a, &b);
}
END_TEST

/* ---- a received TERMINATE ---- */

/*
 * Write with a bad STag, then a Read and a Send in one post list: the
 * responder terminates (DDP tagged, invalid STag). The Write was handed to
 * TCP and completed; the Read, which never got its response, fails with
 * the remote status and the cause in vendor_err; the Send is flushed.
 */
START_TEST(test_term_received_fails_read)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *asink, *bsrc;
	const struct iwarp_wc *wc;
	struct rdmap_wqe *w;

	pair_init(&a, &b, modes[_i], 4, 4, 0);
	asrc = fk_region_add(&a, 0x10, 256, LW, 3);
	asink = fk_region_add(&a, 0x11, 256, RW, 0);
	bsrc = fk_region_add(&b, 0x22, 256, RR, 4);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf, 64);
	w->rkey = 0x4242;
	w->remote_addr = 0;
	w = fk_post_send(&a, 2, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 64);
	w->rkey = 0x22;
	w->remote_addr = (uintptr_t)bsrc->buf;
	fk_post_send(&a, 3, IWARP_WR_SEND, 0, 0x10, asrc->buf, 8);
	rdmap_conn_sq_kick(a.c);
	fk_pump(&a, &b);
	ck_assert_int_eq(b.set_error_calls, 1);
	ck_assert_int_eq(a.set_error_calls, 1);
	ck_assert(a.err_received);
	cause_eq(&a.err_cause, IWARP_TERM_LAYER_DDP,
		 IWARP_DDP_ETYPE_TAGGED_BUFFER, IWARP_DDP_ECODE_T_INVALID_STAG);
	ck_assert_int_eq(a.nscq, 3);
	wc = wc_find(a.scq, a.nscq, 2);
	ck_assert_ptr_nonnull(wc);
	ck_assert_int_eq(wc->status, IWARP_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(wc->vendor_err,
			  (uint32_t)IWARP_TERM_LAYER_DDP << 16 |
				  IWARP_DDP_ETYPE_TAGGED_BUFFER << 8 |
				  IWARP_DDP_ECODE_T_INVALID_STAG);
	ck_assert_uint_eq(a.scq[1].wr_id, 2);
	ck_assert_uint_eq(a.scq[2].wr_id, 3);
	ck_assert_int_eq(a.scq[2].status, IWARP_WC_WR_FLUSH_ERR);
	for (int i = 0; i < 256; i++)
		ck_assert_uint_eq(asink->buf[i], 0);
	pair_fini(&a, &b);
}
END_TEST

/* A Read whose source is bad: the TERMINATE (RDMAP remote protection,
 * Read Request header attached) fails that Read; what follows flushes. */
START_TEST(test_term_received_names_read)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *asink;
	struct rdmap_wqe *w;

	pair_init(&a, &b, modes[1], 4, 4, 0);
	asrc = fk_region_add(&a, 0x10, 256, LW, 3);
	asink = fk_region_add(&a, 0x11, 256, RW, 0);
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 8);
	w = fk_post_send(&a, 2, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 64);
	w->rkey = 0x5151;
	fk_post_send(&a, 3, IWARP_WR_SEND, 0, 0x10, asrc->buf, 8);
	fk_post_recv(&b, 50, 0x0, NULL, 0);
	fk_region_add(&b, 0x30, 64, LW, 0);
	b.rq[0].sge[0].lkey = 0x30;
	b.rq[0].sge[0].addr = (uintptr_t)fk_region_find(&b, 0x30)->buf;
	b.rq[0].sge[0].length = 64;
	b.rq[0].total_len = 64;
	rdmap_conn_sq_kick(a.c);
	fk_pump(&a, &b);
	ck_assert_int_eq(a.nscq, 3);
	ck_assert_uint_eq(a.scq[0].wr_id, 1);
	ck_assert_int_eq(a.scq[0].status, IWARP_WC_SUCCESS);
	ck_assert_uint_eq(a.scq[1].wr_id, 2);
	ck_assert_int_eq(a.scq[1].status, IWARP_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(a.scq[1].vendor_err,
			  IWARP_RDMAP_ETYPE_REMOTE_PROTECTION << 8 |
				  IWARP_RDMAP_ECODE_INVALID_STAG);
	ck_assert_int_eq(a.scq[2].status, IWARP_WC_WR_FLUSH_ERR);
	ck_assert(a.err_received);
	pair_fini(&a, &b);
}
END_TEST

/* A receiver that is behind (its bounded receive was filled) switches to
 * whole-buffer receives, unless its owner says the CPU serves other
 * incoming streams too: then large payloads stay in place, with a small
 * lookahead after them. Either way every octet lands where it belongs. */
START_TEST(test_rx_shared_keeps_placement)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst;
	struct rdmap_wqe *w;
	struct iovec iov[8];
	const size_t len = 20000, fpdu = 2 + 14 + 20000 + 4;
	size_t n, k, got, take;
	uint64_t i;
	int cnt, j;

	pair_init(&a, &b, modes[0], 4, 4, 32768);
	asrc = fk_region_add(&a, 0x10, 3 * len, LW, 0);
	fill_pattern(asrc->buf, 3 * len, 11);
	bdst = fk_region_add(&b, 0x20, 3 * len, RW, 0xEE);
	for (i = 0; i < 3; i++) {
		w = fk_post_send(&a, 1 + i, IWARP_WR_RDMA_WRITE, 0, 0x10,
				 asrc->buf + i * len, (uint32_t)len);
		w->rkey = 0x20;
		w->remote_addr = (uintptr_t)bdst->buf + i * len;
	}
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	ck_assert_uint_eq(n, 3 * fpdu); /* one FPDU each */
	/* the first header arrives through the bulk buffer */
	fk_rx_feed(&b, wire, 116, 0);
	got = 116;
	/* in place, then a lookahead; fill it: the receiver is behind */
	cnt = fk_rx_iov(&b, iov, 8);
	ck_assert_int_eq(cnt, 2);
	ck_assert_ptr_eq(iov[0].iov_base, bdst->buf + 100);
	ck_assert_uint_eq(iov[1].iov_len, RDMAP_CONN_RX_LOOKAHEAD);
	for (k = 0, j = 0; j < cnt; j++) {
		memcpy(iov[j].iov_base, wire + got + k, iov[j].iov_len);
		k += iov[j].iov_len;
	}
	fk_rx_done(&b, k);
	got += k;
	/* the second payload in place; after it the whole buffer, or only
	 * the lookahead when the CPU is shared */
	take = got - fpdu - 16; /* second payload octets already parsed */
	rdmap_conn_set_rx_shared(b.c, false);
	cnt = fk_rx_iov(&b, iov, 8);
	ck_assert_int_eq(cnt, 2);
	ck_assert_ptr_eq(iov[0].iov_base, bdst->buf + len + take);
	ck_assert_uint_eq(iov[1].iov_len, RDMAP_CONN_RX_BUF);
	rdmap_conn_set_rx_shared(b.c, true);
	cnt = fk_rx_iov(&b, iov, 8);
	ck_assert_int_eq(cnt, 2);
	ck_assert_ptr_eq(iov[0].iov_base, bdst->buf + len + take);
	ck_assert_uint_eq(iov[1].iov_len, RDMAP_CONN_RX_LOOKAHEAD);
	fk_rx_feed(&b, wire + got, n - got, 0);
	ck_assert(memcmp(bdst->buf, asrc->buf, 3 * len) == 0);
	ck_assert_int_eq(b.set_error_calls, 0);
	pair_fini(&a, &b);
}
END_TEST

/* A Send (a receive WQE taken) marks the connection as receiving
 * untagged messages lately; RDMAP_CONN_RX_UNTAGGED_CREDIT tagged FPDUs
 * later it no longer is, and a Write alone never marks it. Its owner
 * keeps such a connection off whole-buffer receives (verbs/qp_engine.c). */
START_TEST(test_rx_untagged_lately)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst, *brq;
	struct rdmap_wqe *w;
	uint32_t i;

	pair_init(&a, &b, modes[_i], 4, 4, 0);
	asrc = fk_region_add(&a, 0x10, 4096, LW, 0);
	bdst = fk_region_add(&b, 0x20, 4096, RW, 0);
	brq = fk_region_add(&b, 0x21, 64, LW, 0);
	for (i = 0; i < 3; i++) { /* Writes alone */
		w = fk_post_send(&a, 1, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf,
				 8);
		w->rkey = 0x20;
		w->remote_addr = (uintptr_t)bdst->buf;
		fk_pump(&a, &b);
		ck_assert(!rdmap_conn_rx_untagged(b.c));
	}
	fk_post_recv(&b, 9, 0x21, brq->buf, 64);
	fk_post_send(&a, 2, IWARP_WR_SEND, 0, 0x10, asrc->buf, 16);
	fk_pump(&a, &b);
	ck_assert_int_eq(b.nrcq, 1);
	ck_assert(rdmap_conn_rx_untagged(b.c));
	for (i = 0; i < RDMAP_CONN_RX_UNTAGGED_CREDIT; i++) {
		ck_assert(rdmap_conn_rx_untagged(b.c));
		w = fk_post_send(&a, 3 + i, IWARP_WR_RDMA_WRITE, 0, 0x10,
				 asrc->buf, 8);
		w->rkey = 0x20;
		w->remote_addr = (uintptr_t)bdst->buf;
		fk_pump(&a, &b);
	}
	ck_assert(!rdmap_conn_rx_untagged(b.c));
	ck_assert_int_eq(b.set_error_calls, 0);
	pair_fini(&a, &b);
}
END_TEST

/* ---- waiting for a receive WQE (rdmap_conn_set_rx_wait) ---- */

/* Feeds |o| from |buf| in pieces of at most |chunk| octets (0: any) until
 * done or the engine offers no room; returns the octets taken. */
static size_t feed_some(struct fk_owner *o, const uint8_t *buf, size_t len,
			size_t chunk)
{
	struct iovec iov[8];
	size_t done = 0, want, k, take;
	int n, i;

	while (len > done) {
		n = fk_rx_iov(o, iov, 8);
		if (n <= 0)
			break;
		want = len - done;
		if (chunk && chunk < want)
			want = chunk;
		for (i = 0, k = 0; i < n && k < want; i++) {
			take = iov[i].iov_len < want - k ? iov[i].iov_len
							 : want - k;
			memcpy(iov[i].iov_base, buf + done + k, take);
			k += take;
		}
		fk_rx_done(o, k);
		if (!k)
			break;
		done += k;
	}
	return done;
}

/*
 * A Send finds no receive WQE: the receive pauses after its header, with
 * the octets behind it kept, and the Write and the second Send behind it
 * wait too (nothing is placed out of order, nothing goes on the wire).
 * Each posted WQE resumes it. Fed in two pieces split at every octet.
 */
START_TEST(test_rx_wait_resume)
{
	static uint8_t w[4096];
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst, *brq;
	struct rdmap_wqe *wq;
	size_t total, split, off;
	uint32_t i;

	for (split = 1;; split++) {
		pair_init(&a, &b, modes[_i], 4, 4, 0);
		rdmap_conn_set_rx_wait(b.c, true);
		asrc = fk_region_add(&a, 0x10, 256, LW, 0);
		for (i = 0; i < 256; i++)
			asrc->buf[i] = (uint8_t)(i * 7 + 1);
		bdst = fk_region_add(&b, 0x20, 64, RW, 0x5A);
		brq = fk_region_add(&b, 0x21, 256, LW, 0x5A);
		fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 100);
		wq = fk_post_send(&a, 2, IWARP_WR_RDMA_WRITE, 0, 0x10,
				  asrc->buf + 100, 8);
		wq->rkey = 0x20;
		wq->remote_addr = (uintptr_t)bdst->buf;
		fk_post_send(&a, 3, IWARP_WR_SEND, 0, 0x10, asrc->buf + 108,
			     16);
		total = fk_tx_drain(&a, w, sizeof(w));
		ck_assert_uint_gt(total, 124);
		if (split >= total) {
			pair_fini(&a, &b);
			break;
		}
		off = feed_some(&b, w, split, 0);
		off += feed_some(&b, w + off, total - off, 0);
		ck_assert(rdmap_conn_rx_waiting(b.c));
		ck_assert_int_eq(b.rx_waits, 1);
		ck_assert_int_eq(b.nrcq, 0);
		ck_assert_uint_eq(bdst->buf[0], 0x5A); /* the Write waits */
		ck_assert_uint_eq(fk_tx_drain(&b, wire, WIRE_CAP), 0);
		rdmap_conn_rx_resume(b.c); /* none posted yet: asks again */
		ck_assert(rdmap_conn_rx_waiting(b.c));
		ck_assert_int_eq(b.rx_waits, 2);
		ck_assert_int_eq(b.rx_wait_ends, 0);
		/* one WQE: the first Send, the Write, then the second waits */
		fk_post_recv(&b, 9, 0x21, brq->buf, 128);
		rdmap_conn_rx_resume(b.c);
		if (!rdmap_conn_rx_waiting(b.c)) {
			/* it stopped before the second Send's header */
			ck_assert_int_eq(b.rx_kicks, 1);
			off += feed_some(&b, w + off, total - off, 0);
		}
		ck_assert(rdmap_conn_rx_waiting(b.c));
		ck_assert_int_eq(b.nrcq, 1);
		ck_assert_int_eq(b.rcq[0].status, IWARP_WC_SUCCESS);
		ck_assert_uint_eq(b.rcq[0].byte_len, 100);
		ck_assert(memcmp(brq->buf, asrc->buf, 100) == 0);
		ck_assert(memcmp(bdst->buf, asrc->buf + 100, 8) == 0);
		ck_assert_int_eq(b.rx_waits, 3);
		ck_assert_int_eq(b.rx_wait_ends, 1);
		fk_post_recv(&b, 10, 0x21, brq->buf + 128, 128);
		rdmap_conn_rx_resume(b.c);
		ck_assert(!rdmap_conn_rx_waiting(b.c));
		off += feed_some(&b, w + off, total - off, 0);
		ck_assert_uint_eq(off, total);
		ck_assert_int_eq(b.nrcq, 2);
		ck_assert_uint_eq(b.rcq[1].wr_id, 10);
		ck_assert_uint_eq(b.rcq[1].byte_len, 16);
		ck_assert(memcmp(brq->buf + 128, asrc->buf + 108, 16) == 0);
		ck_assert_int_eq(b.rx_wait_ends, 2);
		ck_assert_int_ge(b.rx_kicks, 1);
		ck_assert_int_eq(b.set_error_calls, 0);
		ck_assert_int_eq(b.term_queued, 0);
		/* and the stream goes on */
		fk_post_recv(&b, 11, 0x21, brq->buf, 8);
		fk_post_send(&a, 4, IWARP_WR_SEND, 0, 0x10, asrc->buf, 8);
		fk_pump(&a, &b);
		ck_assert_int_eq(b.nrcq, 3);
		ck_assert_int_eq(b.rcq[2].status, IWARP_WC_SUCCESS);
		pair_fini(&a, &b);
	}
}
END_TEST

/*
 * The owner's bound runs out: the waiting Send fails as it would have at
 * once (RFC 5041 §7.2: DDP untagged, invalid MSN, no buffer available,
 * its header attached). An owner that cannot wait (rx_wait_rc) fails it
 * at once. A connection that ends while a Send waits ends the wait.
 */
START_TEST(test_rx_wait_expired)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *brq;
	struct rdmap_term t;
	struct ddp_hdr th;
	const struct mode m = modes[_i];
	size_t n;

	pair_init(&a, &b, m, 4, 4, 0);
	rdmap_conn_set_rx_wait(b.c, true);
	asrc = fk_region_add(&a, 0x10, 64, LW, 3);
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 40);
	fk_pump(&a, &b);
	ck_assert(rdmap_conn_rx_waiting(b.c));
	ck_assert_int_eq(b.term_queued, 0);
	rdmap_conn_rx_wait_expired(b.c);
	ck_assert(!rdmap_conn_rx_waiting(b.c));
	ck_assert_int_eq(b.rx_wait_ends, 1);
	ck_assert_int_eq(b.term_queued, 1);
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	if (!m.markers) {
		term_find(wire, n, m.crc, &t, &th);
		cause_eq(&t.cause, IWARP_TERM_LAYER_DDP,
			 IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
			 IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF);
		ck_assert(t.d);
	}
	ck_assert_int_eq(b.set_error_calls, 1);
	cause_eq(&b.err_cause, IWARP_TERM_LAYER_DDP,
		 IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
		 IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF);
	rdmap_conn_rx_resume(b.c); /* too late: nothing happens */
	ck_assert_int_eq(b.nrcq, 0);
	pair_fini(&a, &b);

	/* an owner that cannot wait now: at once */
	pair_init(&a, &b, m, 4, 4, 0);
	rdmap_conn_set_rx_wait(b.c, true);
	b.rx_wait_rc = -EOPNOTSUPP;
	asrc = fk_region_add(&a, 0x10, 64, LW, 3);
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 40);
	fk_pump(&a, &b);
	ck_assert(!rdmap_conn_rx_waiting(b.c));
	ck_assert_int_eq(b.rx_waits, 1);
	ck_assert_int_eq(b.set_error_calls, 1);
	cause_eq(&b.err_cause, IWARP_TERM_LAYER_DDP,
		 IWARP_DDP_ETYPE_UNTAGGED_BUFFER,
		 IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF);
	pair_fini(&a, &b);

	/* the connection ends while a Send waits: the wait ends with it */
	pair_init(&a, &b, m, 4, 4, 0);
	rdmap_conn_set_rx_wait(b.c, true);
	asrc = fk_region_add(&a, 0x10, 64, LW, 3);
	brq = fk_region_add(&b, 0x21, 64, LW, 0x5A);
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 40);
	fk_pump(&a, &b);
	ck_assert(rdmap_conn_rx_waiting(b.c));
	rdmap_conn_closed(b.c, 0);
	ck_assert(!rdmap_conn_rx_waiting(b.c));
	ck_assert_int_eq(b.rx_wait_ends, 1);
	ck_assert_int_eq(b.closed_calls, 1);
	fk_post_recv(&b, 9, 0x21, brq->buf, 64);
	rdmap_conn_rx_resume(b.c);
	ck_assert_int_eq(b.nrcq, 0);
	ck_assert_uint_eq(brq->buf[0], 0x5A);
	pair_fini(&a, &b);
}
END_TEST

/* ---- transmit gathers ---- */

/*
 * Posts five 1000-octet Writes from |a| to |b|; WQE i + 1 asks for a
 * completion when bit i of |signaled| is set.
 */
static void post_five_writes(struct fk_owner *a, struct fk_region *asrc,
			     struct fk_region *bdst, unsigned int signaled)
{
	struct rdmap_wqe *w;
	uint64_t i;

	for (i = 0; i < 5; i++) {
		w = fk_post_send(a, 1 + i, IWARP_WR_RDMA_WRITE, 0, 0x10,
				 asrc->buf + i * 1000, 1000);
		w->rkey = 0x20;
		w->remote_addr = (uintptr_t)bdst->buf + i * 1000;
		if (!(signaled & (1u << i)))
			w->send_flags &= ~(unsigned int)IWARP_SEND_SIGNALED;
	}
	rdmap_conn_sq_kick(a->c);
}

/* Wire octets of the first |k| FPDUs framed and not yet sent by |a|. */
static size_t slots_wire(const struct fk_owner *a, int k)
{
	size_t len = 0;
	int j;

	for (j = 0; j < k; j++)
		len += a->c->slots[(a->c->slot_head + (uint32_t)j) %
				   a->c->slot_cap]
			       .wire_len;
	return len;
}

/* Takes one gather of |a| into wire + *n; returns its octets. */
static size_t take_gather(struct fk_owner *a, size_t *n)
{
	struct iovec iov[256];
	size_t k = 0;
	int cnt, j;

	cnt = rdmap_conn_tx_iov(a->c, iov, 256);
	ck_assert_int_gt(cnt, 0);
	for (j = 0; j < cnt; j++) {
		memcpy(wire + *n + k, iov[j].iov_base, iov[j].iov_len);
		k += iov[j].iov_len;
	}
	*n += k;
	return k;
}

/*
 * A gather ends after the last FPDU of the last WQE in it that asked for
 * a completion, so the transport's return completes it before the
 * unsignaled tail goes out; a queue that signals every WQE (or only its
 * last) sends everything in one gather. Loop index: mode (markers too).
 */
START_TEST(test_tx_gather_ends_at_signaled)
{
	const struct mode m = modes[_i];
	/* 2 + 14-octet tagged header + 1000 octets + CRC, no pad */
	const size_t fpdu = 2 + 14 + 1000 + 4;
	static const struct {
		unsigned int signaled; /* bit i: WQE i + 1 */
		int first;	       /* WQEs in the first gather */
	} cases[] = {
		{0x0a, 4}, /* 2 and 4: up to 4, then 5 */
		{0x02, 2}, /* 2 only */
		{0x1f, 5}, /* all: one gather */
		{0x10, 5}, /* the last only: one gather */
		{0x00, 5}, /* none */
	};
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst;
	size_t c, n = 0, k;
	int done = 0, j;

	pair_init(&a, &b, m, 4, 4, 0);
	asrc = fk_region_add(&a, 0x10, 5000, LW, 0);
	fill_pattern(asrc->buf, 5000, 7);
	bdst = fk_region_add(&b, 0x20, 5000, RW, 0xEE);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		post_five_writes(&a, asrc, bdst, cases[c].signaled);
		k = take_gather(&a, &n);
		if (!m.markers)
			ck_assert_uint_eq(k, (size_t)cases[c].first * fpdu);
		else /* staged back to back, yet cut all the same */
			ck_assert_uint_eq(k, slots_wire(&a, cases[c].first));
		ck_assert_int_eq(a.nscq, done);
		rdmap_conn_tx_done(a.c, k);
		/* handed over: what it carried completes, the rest waits */
		done += cases[c].first;
		ck_assert_int_eq(a.nscq, done);
		ck_assert_uint_eq(a.scq[done - 1].wr_id,
				  (uint64_t)cases[c].first);
		if (cases[c].first < 5) {
			k = take_gather(&a, &n);
			if (!m.markers)
				ck_assert_uint_eq(
					k, (size_t)(5 - cases[c].first) * fpdu);
			rdmap_conn_tx_done(a.c, k);
			done += 5 - cases[c].first;
		}
		ck_assert_int_eq(a.nscq, done);
		ck_assert_int_eq(
			rdmap_conn_tx_iov(a.c, (struct iovec[1]){{0}}, 1), 0);
	}
	fk_rx_feed(&b, wire, n, 0);
	for (j = 0; j < 5; j++)
		ck_assert(memcmp(bdst->buf + j * 1000, asrc->buf + j * 1000,
				 1000) == 0);
	ck_assert_int_eq(b.set_error_calls, 0);
	pair_fini(&a, &b);
}
END_TEST

/*
 * With markers every FPDU is copied whole into the staging ring and
 * offered as one iovec (RFC 5044 §5 markers cut it into 512-octet pieces
 * otherwise). Writes keep the ring busy across its end (partial sends, so
 * it never drains), then a drained ring starts the next FPDU at its first
 * octet; the peer checks markers and CRC. Loop index: CRC off/on.
 */
START_TEST(test_tx_stage_markers)
{
	const struct mode m = {_i != 0, true};
	enum { WR_LEN = 60000, NWR = 40, CHUNK = 4 };
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst;
	struct rdmap_wqe *w;
	struct iovec iov[64];
	uint8_t *out = malloc(WR_LEN * NWR);
	size_t sent = 0, k, taken;
	uint32_t posted = 0, s;
	const struct rdmap_slot *sl;
	int cnt, j;

	ck_assert_ptr_nonnull(out);
	pair_init(&a, &b, m, 4, 4, 65483);
	asrc = fk_region_add(&a, 0x10, WR_LEN * NWR, LW, 0);
	fill_pattern(asrc->buf, WR_LEN * NWR, 21);
	bdst = fk_region_add(&b, 0x20, WR_LEN * NWR, RW, 0xEE);
	for (;;) {
		for (j = 0; j < CHUNK && posted < NWR; j++, posted++) {
			w = fk_post_send(&a, 1 + posted, IWARP_WR_RDMA_WRITE, 0,
					 0x10, asrc->buf + posted * WR_LEN,
					 WR_LEN);
			w->rkey = 0x20;
			w->remote_addr = (uintptr_t)bdst->buf + posted * WR_LEN;
		}
		rdmap_conn_sq_kick(a.c);
		cnt = rdmap_conn_tx_iov(a.c, iov, 64);
		if (cnt == 0)
			break;
		/* every framed FPDU is one iovec in the staging ring */
		for (s = a.c->slot_head; s != a.c->slot_tail; s++) {
			sl = &a.c->slots[s % a.c->slot_cap];
			ck_assert_uint_eq(sl->niov, 1);
			ck_assert_uint_eq(sl->iov[0].iov_len, sl->wire_len);
			ck_assert((uint8_t *)sl->iov[0].iov_base >= a.c->stage);
			ck_assert((uint8_t *)sl->iov[0].iov_base +
					  sl->wire_len <=
				  a.c->stage + RDMAP_CONN_TX_STAGE);
		}
		/* back to back in the ring: one iovec, two at its end */
		ck_assert_int_le(cnt, 2);
		for (k = 0, j = 0; j < cnt; j++)
			k += iov[j].iov_len;
		/* TCP takes about half until the last Writes are posted */
		if (posted < NWR)
			k = k / 2 + 1;
		for (taken = 0, j = 0; taken < k; j++) {
			size_t n = iov[j].iov_len < k - taken ? iov[j].iov_len
							      : k - taken;

			memcpy(wire, iov[j].iov_base, n);
			ck_assert_uint_eq(fk_rx_feed(&b, wire, n, 0), n);
			taken += n;
		}
		rdmap_conn_tx_done(a.c, k);
		sent += k;
	}
	ck_assert_int_eq(a.nscq, NWR);
	ck_assert_int_eq(b.set_error_calls, 0);
	ck_assert(memcmp(bdst->buf, asrc->buf, WR_LEN * NWR) == 0);
	/* more than the ring went through it, so it crossed its end */
	ck_assert_uint_gt(sent, 2 * RDMAP_CONN_TX_STAGE);
	/* drained: the next FPDU starts the ring again */
	w = fk_post_send(&a, 99, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf, 100);
	w->rkey = 0x20;
	w->remote_addr = (uintptr_t)bdst->buf;
	rdmap_conn_sq_kick(a.c);
	cnt = rdmap_conn_tx_iov(a.c, iov, 64);
	ck_assert_int_eq(cnt, 1);
	ck_assert_ptr_eq(iov[0].iov_base, a.c->stage);
	memcpy(out, iov[0].iov_base, iov[0].iov_len);
	ck_assert_uint_eq(fk_rx_feed(&b, out, iov[0].iov_len, 0),
			  iov[0].iov_len);
	rdmap_conn_tx_done(a.c, iov[0].iov_len);
	ck_assert_int_eq(a.nscq, NWR + 1);
	ck_assert_int_eq(b.set_error_calls, 0);
	free(out);
	pair_fini(&a, &b);
}
END_TEST

/*
 * Sends everything |a| frames, each gather whole, feeding it to |b|. Returns
 * the most FPDUs one gather found framed.
 */
static uint32_t drain_to(struct fk_owner *a, struct fk_owner *b)
{
	static struct iovec iov[1024];
	uint32_t most = 0;
	size_t k;
	int cnt, j;

	while ((cnt = rdmap_conn_tx_iov(a->c, iov, 1024)) > 0) {
		if (a->c->slot_tail - a->c->slot_head > most)
			most = a->c->slot_tail - a->c->slot_head;
		for (k = 0, j = 0; j < cnt; j++) {
			ck_assert_uint_eq(fk_rx_feed(b, iov[j].iov_base,
						     iov[j].iov_len, 0),
					  iov[j].iov_len);
			k += iov[j].iov_len;
		}
		rdmap_conn_tx_done(a->c, k);
	}
	return most;
}

/* Posts |n| Writes of |len| octets from asrc to bdst, and kicks. */
static void post_writes(struct fk_owner *a, struct fk_region *asrc,
			struct fk_region *bdst, uint32_t n, size_t len,
			uint64_t first_id)
{
	struct rdmap_wqe *w;
	uint32_t i;

	for (i = 0; i < n; i++) {
		w = fk_post_send(a, first_id + i, IWARP_WR_RDMA_WRITE, 0, 0x10,
				 asrc->buf + i * len, (uint32_t)len);
		w->rkey = 0x20;
		w->remote_addr = (uintptr_t)bdst->buf + i * len;
	}
	rdmap_conn_sq_kick(a->c);
}

/*
 * The transmit rings are used in full only for small FPDUs: a new
 * connection frames at most RDMAP_CONN_TX_SLOTS_FEW - 1 FPDUs ahead; once
 * that ran out on small ones it takes all RDMAP_CONN_TX_SLOTS after the
 * rings drained, and goes back after large ones. What was framed across
 * each change arrives intact. Loop index: mode (markers too).
 */
START_TEST(test_tx_ring_sizes)
{
	const struct mode m = modes[_i];
	enum { BIG = 16384, NBIG = 150, SMALL = 64, NSMALL = 200 };
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst;
	uint32_t most;

	pair_init(&a, &b, m, 4, 4, 65483);
	asrc = fk_region_add(&a, 0x10, BIG * NBIG, LW, 0);
	fill_pattern(asrc->buf, BIG * NBIG, 5);
	bdst = fk_region_add(&b, 0x20, BIG * NBIG, RW, 0xEE);
	ck_assert_uint_eq(a.c->slot_cap, RDMAP_CONN_TX_SLOTS_FEW);

	/* large FPDUs: the few slots, one kept for TERMINATE (markers:
	 * the staging ring may run out first) */
	post_writes(&a, asrc, bdst, NBIG, BIG, 1);
	most = drain_to(&a, &b);
	if (!m.markers)
		ck_assert_uint_eq(most, RDMAP_CONN_TX_SLOTS_FEW - 1);
	ck_assert_uint_le(most, RDMAP_CONN_TX_SLOTS_FEW - 1);
	ck_assert_uint_eq(a.c->slot_cap, RDMAP_CONN_TX_SLOTS_FEW);
	ck_assert_int_eq(a.nscq, NBIG);
	ck_assert(memcmp(bdst->buf, asrc->buf, BIG * NBIG) == 0);

	/* small ones: the few slots run out, then all of them */
	a.nscq = 0; /* the fake's CQ holds FK_CQ */
	memset(bdst->buf, 0xEE, BIG * NBIG);
	post_writes(&a, asrc, bdst, NSMALL, SMALL, 1000);
	most = drain_to(&a, &b);
	ck_assert_uint_eq(most, RDMAP_CONN_TX_SLOTS - 1);
	ck_assert_uint_eq(a.c->slot_cap, RDMAP_CONN_TX_SLOTS);
	ck_assert_int_eq(a.nscq, NSMALL);
	ck_assert(memcmp(bdst->buf, asrc->buf, SMALL * NSMALL) == 0);

	/* large ones again: back to the few slots once drained */
	a.nscq = 0;
	memset(bdst->buf, 0xEE, BIG * NBIG);
	post_writes(&a, asrc, bdst, NBIG, BIG, 2000);
	most = drain_to(&a, &b);
	ck_assert_uint_gt(most, RDMAP_CONN_TX_SLOTS_FEW);
	ck_assert_uint_eq(a.c->slot_cap, RDMAP_CONN_TX_SLOTS_FEW);
	post_writes(&a, asrc, bdst, NBIG, BIG, 3000);
	most = drain_to(&a, &b);
	ck_assert_uint_le(most, RDMAP_CONN_TX_SLOTS_FEW - 1);
	ck_assert_int_eq(a.nscq, 2 * NBIG);
	ck_assert(memcmp(bdst->buf, asrc->buf, BIG * NBIG) == 0);
	ck_assert_int_eq(b.set_error_calls, 0);
	pair_fini(&a, &b);
}
END_TEST

/* ---- memory revoked while in use ---- */

/* Revoked while an inbound Write is placed through the bulk buffer: the
 * reference comes back at once, the rest is discarded, TERMINATE DDP
 * tagged invalid STag after the FPDU (RFC 5041 §7). */
START_TEST(test_revoke_inbound_write_bulk)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst;
	struct rdmap_term t;
	struct ddp_hdr th;
	struct rdmap_wqe *w;
	size_t n, k;

	pair_init(&a, &b, modes[1], 4, 4, 9000);
	asrc = fk_region_add(&a, 0x10, 3000, LW, 0);
	fill_pattern(asrc->buf, 3000, 9);
	bdst = fk_region_add(&b, 0x20, 3000, RW, 0xEE);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf, 3000);
	w->rkey = 0x20;
	w->remote_addr = (uintptr_t)bdst->buf;
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	ck_assert_uint_eq(n, 2 + 14 + 3000 + 4); /* one FPDU */
	fk_rx_feed(&b, wire, 1000, 0);
	ck_assert_int_eq(bdst->refs, 1);
	ck_assert(!rdmap_conn_mem_revoke(b.c, 0x20));
	ck_assert_int_eq(bdst->refs, 0);
	bdst->valid = false;
	fk_rx_feed(&b, wire + 1000, n - 1000, 0);
	ck_assert(memcmp(bdst->buf, asrc->buf, 1000 - 16) == 0);
	for (k = 1000 - 16; k < 3000; k++)
		ck_assert_uint_eq(bdst->buf[k], 0xEE);
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	term_find(wire, n, true, &t, &th);
	cause_eq(&t.cause, IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_TAGGED_BUFFER,
		 IWARP_DDP_ECODE_T_INVALID_STAG);
	ck_assert(t.d);
	ck_assert_uint_eq(t.ddp_seg_len, 14 + 3000);
	ck_assert_int_eq(b.set_error_calls, 1);
	pair_fini(&a, &b);
}
END_TEST

/* Revoked while a large inbound Write is received in place: the receive
 * is cancelled, the reference comes back when it ends (rx_done(0)). */
START_TEST(test_revoke_inbound_write_direct)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *bdst;
	struct rdmap_term t;
	struct ddp_hdr th;
	struct rdmap_wqe *w;
	struct iovec iov[8];
	size_t n, k;
	int cnt;

	pair_init(&a, &b, modes[0], 4, 4, 32768);
	asrc = fk_region_add(&a, 0x10, 20000, LW, 0);
	fill_pattern(asrc->buf, 20000, 10);
	bdst = fk_region_add(&b, 0x20, 20000, RW, 0xEE);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf, 20000);
	w->rkey = 0x20;
	w->remote_addr = (uintptr_t)bdst->buf;
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	ck_assert_uint_eq(n, 2 + 14 + 20000 + 4); /* CRC field */
	fk_rx_feed(&b, wire, 116, 0);
	cnt = fk_rx_iov(&b, iov, 8);
	ck_assert_int_ge(cnt, 1);
	/* the payload goes straight to the region */
	ck_assert_ptr_eq(iov[0].iov_base, bdst->buf + 100);
	ck_assert(rdmap_conn_mem_revoke(b.c, 0x20));
	ck_assert_int_eq(b.cancel_rx, 1);
	ck_assert_int_eq(bdst->refs, 1);
	fk_rx_done(&b, 0); /* the cancelled receive ends */
	ck_assert_int_eq(bdst->refs, 0);
	bdst->valid = false;
	fk_rx_feed(&b, wire + 116, n - 116, 0);
	ck_assert(memcmp(bdst->buf, asrc->buf, 100) == 0);
	for (k = 100; k < 20000; k++)
		ck_assert_uint_eq(bdst->buf[k], 0xEE);
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	term_find(wire, n, false, &t, &th);
	cause_eq(&t.cause, IWARP_TERM_LAYER_DDP, IWARP_DDP_ETYPE_TAGGED_BUFFER,
		 IWARP_DDP_ECODE_T_INVALID_STAG);
	ck_assert_int_eq(b.set_error_calls, 1);
	pair_fini(&a, &b);
}
END_TEST

/* Revoked while a Read Response is being sent: FPDUs the transport has
 * not taken are dropped, their references come back with tx_done, and
 * the TERMINATE (RDMAP invalid STag, RFC 5040 §7) fails the Read. */
START_TEST(test_revoke_read_response)
{
	struct fk_owner a, b;
	struct fk_region *asink, *bsrc;
	struct rdmap_term t;
	struct ddp_hdr th;
	struct rdmap_wqe *w;
	struct iovec iov[64];
	size_t n, sent = 0, part;
	int cnt, i;
	static uint8_t out[65536];

	pair_init(&a, &b, modes[1], 4, 4, 0);
	asink = fk_region_add(&a, 0x11, 8000, RW, 0);
	bsrc = fk_region_add(&b, 0x22, 8000, RR, 0);
	fill_pattern(bsrc->buf, 8000, 11);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 8000);
	w->rkey = 0x22;
	w->remote_addr = (uintptr_t)bsrc->buf;
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	fk_rx_feed(&b, wire, n, 0);
	cnt = rdmap_conn_tx_iov(b.c, iov, 64);
	ck_assert_int_gt(cnt, 0);
	ck_assert_int_ge(bsrc->refs, 2); /* several FPDUs framed */
	/* the transport takes the first FPDU and a bit of the second */
	for (i = 0; i < cnt; i++)
		sent += iov[i].iov_len;
	part = 1448 + 100;
	ck_assert_uint_gt(sent, part);
	for (i = 0, n = 0; n < part; i++) {
		size_t take =
			iov[i].iov_len < part - n ? iov[i].iov_len : part - n;

		memcpy(out + n, iov[i].iov_base, take);
		n += take;
	}
	bsrc->valid = false;
	ck_assert(rdmap_conn_mem_revoke(b.c, 0x22));
	rdmap_conn_tx_done(b.c, part);
	n += fk_tx_drain(&b, out + n, sizeof(out) - n);
	ck_assert_int_eq(bsrc->refs, 0);
	term_find(out, n, true, &t, &th);
	cause_eq(&t.cause, IWARP_TERM_LAYER_RDMAP,
		 IWARP_RDMAP_ETYPE_REMOTE_PROTECTION,
		 IWARP_RDMAP_ECODE_INVALID_STAG);
	ck_assert_int_eq(b.set_error_calls, 1);
	fk_rx_feed(&a, out, n, 0);
	ck_assert_int_eq(a.nscq, 1);
	ck_assert_int_eq(a.scq[0].status, IWARP_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(a.scq[0].vendor_err,
			  IWARP_RDMAP_ETYPE_REMOTE_PROTECTION << 8);
	ck_assert(a.err_received);
	pair_fini(&a, &b);
}
END_TEST

/* ---- CQ overflow ---- */

/* |x| sent a TERMINATE (last in its |n| octets at wire) with RDMAP local
 * catastrophic error and moved to ERR with that cause. */
static void expect_local_catastrophic(struct fk_owner *x, size_t n)
{
	struct rdmap_term t;
	struct ddp_hdr th;

	term_find(wire, n, false, &t, &th);
	cause_eq(&t.cause, IWARP_TERM_LAYER_RDMAP,
		 IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC, 0);
	ck_assert_int_eq(x->set_error_calls, 1);
	cause_eq(&x->err_cause, IWARP_TERM_LAYER_RDMAP,
		 IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC, 0);
	ck_assert_int_eq(x->closed_calls, 1);
}

START_TEST(test_cq_overflow_recv)
{
	struct fk_owner a, b;
	struct fk_region *asrc, *brq;
	size_t n;

	pair_init(&a, &b, modes[0], 4, 4, 0);
	asrc = fk_region_add(&a, 0x10, 64, LW, 1);
	brq = fk_region_add(&b, 0x21, 64, LW, 0);
	fk_post_recv(&b, 1, 0x21, brq->buf, 64);
	b.rcq_room = 0;
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 32);
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	fk_rx_feed(&b, wire, n, 0);
	ck_assert_int_eq(b.term_queued, 1);
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	expect_local_catastrophic(&b, n);
	pair_fini(&a, &b);
}
END_TEST

START_TEST(test_cq_overflow_send)
{
	static struct fpdu f[4];
	struct fk_owner a, b;
	struct fk_region *asrc;
	size_t n;

	pair_init(&a, &b, modes[0], 4, 4, 0);
	asrc = fk_region_add(&a, 0x10, 64, LW, 1);
	a.scq_room = 0;
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 32);
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	/* the Send went out; completing it overflowed the CQ: TERMINATE */
	ck_assert_int_eq(wire_split(wire, n, false, f, 4), 2);
	ck_assert_int_eq(fpdu_opcode(&f[0]), RDMAP_OP_SEND);
	ck_assert_int_eq(a.term_queued, 1);
	expect_local_catastrophic(&a, n);
	ck_assert_int_eq(a.nscq, 0); /* the CQ stays full */
	pair_fini(&a, &b);
}
END_TEST

/* ---- Read Responses do not starve the send queue ---- */

START_TEST(test_responses_do_not_starve_sq)
{
	static struct fpdu f[1024];
	struct fk_owner a, b;
	struct fk_region *asrc, *asink, *bsrc;
	struct rdmap_wqe *w;
	size_t n;
	int i, nf, first_send = -1, last_resp = -1, sends = 0, run, max_run;

	pair_init(&a, &b, modes[0], 64, 64, 0);
	asink = fk_region_add(&a, 0x11, 40 * 8192, RW, 0);
	bsrc = fk_region_add(&b, 0x22, 8192, RR, 1);
	asrc = fk_region_add(&b, 0x23, 64, LW, 2);
	/* A (initiator) asks for 40 Reads of 8 KiB; B answers them */
	for (i = 0; i < 40; i++) {
		w = fk_post_send(&a, 100 + (uint64_t)i, IWARP_WR_RDMA_READ, 0,
				 0x11, asink->buf + 8192 * (size_t)i, 8192);
		w->rkey = 0x22;
		w->remote_addr = (uintptr_t)bsrc->buf;
	}
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	fk_rx_feed(&b, wire, n, 0);
	/* meanwhile B's application posts Sends */
	for (i = 0; i < 5; i++)
		fk_post_send(&b, 1 + (uint64_t)i, IWARP_WR_SEND, 0, 0x23,
			     asrc->buf, 64);
	rdmap_conn_sq_kick(b.c);
	n = fk_tx_drain(&b, wire, WIRE_CAP);
	nf = wire_split(wire, n, false, f, 1024);
	for (i = 0; i < nf; i++) {
		uint8_t op = fpdu_opcode(&f[i]);

		if (op == RDMAP_OP_SEND) {
			sends++;
			if (first_send < 0)
				first_send = i;
		} else {
			ck_assert_int_eq(op, RDMAP_OP_READ_RESPONSE);
			last_resp = i;
		}
	}
	ck_assert_int_eq(sends, 5);
	ck_assert_int_gt(nf, 40 * 5); /* 8 KiB in 1448-octet FPDUs */
	/*
	 * The send queue gets a turn after every RDMAP_CONN_RESP_BURST
	 * response FPDUs, at the end of the Read Response message in
	 * progress (a new message does not start inside a tagged one, RFC
	 * 5041 §5.1): at most RESP_BURST + (FPDUs of one response - 1)
	 * response FPDUs before each Send while responses are pending.
	 */
	for (i = 0, run = 0, max_run = 0; i < nf; i++) {
		if (fpdu_opcode(&f[i]) == RDMAP_OP_SEND) {
			if (run > max_run)
				max_run = run;
			run = 0;
		} else {
			run++;
		}
	}
	ck_assert_int_gt(first_send, 0);
	ck_assert_int_lt(first_send, last_resp);
	ck_assert_int_le(max_run, (int)RDMAP_CONN_RESP_BURST + 5);
	for (i = nf - 1; i >= 0 && fpdu_opcode(&f[i]) != RDMAP_OP_SEND; i--)
		;
	ck_assert_int_lt(i, last_resp); /* all Sends out before the end */
	/* and everything still arrives */
	fk_post_recv(&a, 7, 0x11, asink->buf, 64);
	for (i = 0; i < 4; i++)
		fk_post_recv(&a, 8 + (uint64_t)i, 0x11, asink->buf, 64);
	fk_rx_feed(&a, wire, n, 0);
	fk_pump(&a, &b);
	ck_assert_int_eq(a.set_error_calls, 0);
	ck_assert_int_eq(a.nscq, 40);
	ck_assert_int_eq(a.nrcq, 5);
	pair_fini(&a, &b);
}
END_TEST

/* ---- RFC 6581 RTR ---- */

static void p2p_pair(struct fk_owner *a, struct fk_owner *b, enum mpa_rtr rtr,
		     bool p2p)
{
	struct rdmap_conn_cfg ca = mkcfg(true, modes[1]),
			      cb = mkcfg(false, modes[1]);

	ca.p2p = cb.p2p = p2p;
	ca.rtr = cb.rtr = p2p ? rtr : MPA_RTR_NONE;
	mem_start = iw_mem_outstanding();
	fk_init(a);
	fk_init(b);
	ck_assert(fk_create(a, &ca));
	ck_assert(fk_create(b, &cb));
}

/* _i: 0 Write RTR, 1 Read RTR, 2 Send RTR, 3 no P2P. */
START_TEST(test_rtr)
{
	static const enum mpa_rtr rtrs[] = {MPA_RTR_WRITE, MPA_RTR_READ,
					    MPA_RTR_SEND, MPA_RTR_NONE};
	static struct fpdu f[16];
	struct fk_owner a, b;
	struct fk_region *asrc, *arq, *bsrc, *brq;
	struct iovec iov[8];
	struct ddp_hdr h;
	struct rdmap_rreq rr;
	size_t n;
	int nf;

	p2p_pair(&a, &b, rtrs[_i], _i < 3);
	asrc = fk_region_add(&a, 0x10, 64, LW, 1);
	arq = fk_region_add(&a, 0x12, 64, LW, 0);
	bsrc = fk_region_add(&b, 0x20, 64, LW, 2);
	brq = fk_region_add(&b, 0x21, 64, LW, 0);
	fk_post_recv(&a, 80, 0x12, arq->buf, 64);
	fk_post_recv(&b, 90, 0x21, brq->buf, 64);
	/* both applications post a Send right away */
	fk_post_send(&a, 1, IWARP_WR_SEND, 0, 0x10, asrc->buf, 10);
	fk_post_send(&b, 2, IWARP_WR_SEND, 0, 0x20, bsrc->buf, 11);
	rdmap_conn_sq_kick(a.c);
	rdmap_conn_sq_kick(b.c);
	/* the responder sends nothing before the first inbound FPDU */
	ck_assert(!rdmap_conn_tx_pending(b.c));
	ck_assert_int_eq(rdmap_conn_tx_iov(b.c, iov, 8), 0);
	/* ... and says its Send is held (what the CM reports) */
	ck_assert(rdmap_conn_tx_waiting(b.c));
	ck_assert(rdmap_conn_tx_held(b.c));
	ck_assert(!rdmap_conn_tx_waiting(a.c));
	ck_assert(!rdmap_conn_tx_held(a.c));
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	nf = wire_split(wire, n, true, f, 16);
	ck_assert_int_eq(nf, _i < 3 ? 2 : 1);
	ck_assert_int_eq(ddp_hdr_decode(&h, f[0].ulpdu, f[0].len),
			 (int)ddp_hdr_len(f[0].ulpdu[0] & DDP_CTRL_T));
	switch (_i) {
	case 0: /* zero-length Write, STag 1, TO 0 */
		ck_assert(h.tagged && h.last);
		ck_assert_uint_eq(h.opcode, RDMAP_OP_WRITE);
		ck_assert_uint_eq(h.stag, MPA_RTR_STAG);
		ck_assert_uint_eq(h.to, 0);
		ck_assert_uint_eq(f[0].len, DDP_TAGGED_HDR_LEN);
		break;
	case 1: /* zero-length Read Request, sink and source STag 1 */
		ck_assert_int_eq(
			rdmap_rreq_msg_decode(&h, &rr, f[0].ulpdu, f[0].len),
			RDMAP_RREQ_MSG_LEN);
		ck_assert_uint_eq(rr.size, 0);
		ck_assert_uint_eq(rr.sink_stag, MPA_RTR_STAG);
		ck_assert_uint_eq(rr.src_stag, MPA_RTR_STAG);
		break;
	case 2: /* zero-length Send */
		ck_assert(!h.tagged && h.last);
		ck_assert_uint_eq(h.opcode, RDMAP_OP_SEND);
		ck_assert_uint_eq(h.msn, 1);
		ck_assert_uint_eq(f[0].len, DDP_UNTAGGED_HDR_LEN);
		break;
	default: /* client-server: the initiator's Send itself */
		ck_assert_uint_eq(h.opcode, RDMAP_OP_SEND);
		break;
	}
	if (_i < 3)
		ck_assert_uint_eq(fpdu_opcode(&f[1]), RDMAP_OP_SEND);
	/* the first inbound FPDU lets the responder send */
	fk_rx_feed(&b, wire, f[0].len + 2 + 2 + 4, 0);
	ck_assert(rdmap_conn_tx_pending(b.c));
	ck_assert(!rdmap_conn_tx_waiting(b.c));
	ck_assert(!rdmap_conn_tx_held(b.c));
	fk_rx_feed(&b, wire + f[0].len + 8, n - (f[0].len + 8), 0);
	fk_pump(&a, &b);
	ck_assert_int_eq(a.set_error_calls, 0);
	ck_assert_int_eq(b.set_error_calls, 0);
	/* the Send RTR consumed no receive WQE: A's Send used 90 */
	ck_assert_int_eq(b.nrcq, 1);
	ck_assert_uint_eq(b.rcq[0].wr_id, 90);
	ck_assert_uint_eq(b.rcq[0].byte_len, 10);
	ck_assert_int_eq(a.nrcq, 1);
	ck_assert_uint_eq(a.rcq[0].byte_len, 11);
	ck_assert_int_eq(a.nscq, 1);
	ck_assert_int_eq(b.nscq, 1);
	ck_assert_int_eq(a.scq[0].status, IWARP_WC_SUCCESS);
	/* the Read RTR's ORQ slot was answered: the RTR counts in none */
	ck_assert_int_eq(a.c->orq_head, a.c->orq_tail);
	pair_fini(&a, &b);
}
END_TEST

/* Destroying an engine in the middle of things gives every reference
 * back (framed Read Responses, a segment being received). */
START_TEST(test_destroy_gives_back)
{
	struct fk_owner a, b;
	struct fk_region *asink, *bsrc, *bdst, *asrc;
	struct rdmap_wqe *w;
	size_t n;

	pair_init(&a, &b, modes[3], 4, 4, 0);
	asink = fk_region_add(&a, 0x11, 8000, RW, 0);
	asrc = fk_region_add(&a, 0x10, 8000, LW, 0);
	bsrc = fk_region_add(&b, 0x22, 8000, RR, 0);
	bdst = fk_region_add(&b, 0x20, 8000, RW, 0);
	w = fk_post_send(&a, 1, IWARP_WR_RDMA_READ, 0, 0x11, asink->buf, 8000);
	w->rkey = 0x22;
	w->remote_addr = (uintptr_t)bsrc->buf;
	w = fk_post_send(&a, 2, IWARP_WR_RDMA_WRITE, 0, 0x10, asrc->buf, 1000);
	w->rkey = 0x20;
	w->remote_addr = (uintptr_t)bdst->buf;
	rdmap_conn_sq_kick(a.c);
	n = fk_tx_drain(&a, wire, WIRE_CAP);
	fk_rx_feed(&b, wire, n - 200, 0); /* inside the Write */
	ck_assert_int_eq(bdst->refs, 1);
	{
		struct iovec iov[64];

		ck_assert_int_gt(rdmap_conn_tx_iov(b.c, iov, 64), 0);
	}
	ck_assert_int_gt(bsrc->refs, 0);
	pair_fini(&a, &b);
}
END_TEST

/* ---- RFC 7306 ---- */

#define EXT_DST 4096
static uint8_t ext_dst_mem[EXT_DST + 2 * FK_GUARD];
static uint8_t ext_at_mem[64 + 2 * FK_GUARD];

/* B: ext responder with stable region addresses and three receives. */
static void ext_b_setup(struct fk_owner *b, struct mode m)
{
	struct rdmap_conn_cfg cb = mkcfg(false, m);
	struct fk_region *rq;

	cb.rdmap_ext = true;
	fk_init(b);
	ck_assert(fk_create(b, &cb));
	fk_region_add_ext(b, 0x40, ext_dst_mem, EXT_DST, RW, 0);
	fk_region_add_ext(b, 0x41, ext_at_mem, 64, RWA, 0);
	rq = fk_region_add(b, 0x42, 256, LW, 0);
	fk_post_recv(b, 11, 0x42, rq->buf, 64);
	fk_post_recv(b, 12, 0x42, rq->buf + 64, 64);
	fk_post_recv(b, 13, 0x42, rq->buf + 128, 64);
	{
		uint64_t c40 = 40; /* the counter, host order */

		memcpy(ext_at_mem + FK_GUARD, &c40, 8);
	}
}

struct ext_snap {
	struct iwarp_wc rcq[8];
	int nrcq, set_error_calls;
	uint8_t dst[EXT_DST];
	uint8_t at[8];
	uint8_t tx[512];
	size_t tx_len;
};

static void ext_run(struct mode m, const uint8_t *stream, size_t len,
		    size_t cut, struct ext_snap *s)
{
	long mem0 = iw_mem_outstanding();
	struct fk_owner b;

	ext_b_setup(&b, m);
	if (cut == SIZE_MAX) {
		fk_rx_feed(&b, stream, len, 1);
	} else {
		fk_rx_feed(&b, stream, cut, 0);
		fk_rx_feed(&b, stream + cut, len - cut, 0);
	}
	memset(s, 0, sizeof(*s));
	s->nrcq = b.nrcq < 8 ? b.nrcq : 8;
	memcpy(s->rcq, b.rcq, sizeof(s->rcq[0]) * (size_t)s->nrcq);
	s->set_error_calls = b.set_error_calls;
	memcpy(s->dst, ext_dst_mem + FK_GUARD, EXT_DST);
	/* the atomic runs when its response is framed (IRQ order) */
	s->tx_len = fk_tx_drain(&b, s->tx, sizeof(s->tx));
	memcpy(s->at, ext_at_mem + FK_GUARD, 8);
	ck_assert(fk_guards_ok(&b));
	rdmap_conn_destroy(b.c);
	b.c = NULL;
	ck_assert_int_eq(fk_refs(&b), 0);
	ck_assert_int_eq(b.bad_puts, 0);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
	fk_fini(&b);
}

/*
 * RFC 7306 traffic (Send with Immediate with SE, Write with Immediate,
 * fetch-and-add, Send) delivered to the receiver whole, split at every
 * octet and one octet at a time: the same completions (immediate values,
 * opcodes), placement, atomic result and Atomic Response. The Atomic
 * Response then completes the requester's WQE with the original value.
 */
START_TEST(test_ext_every_split)
{
	struct mode m = modes[_i];
	struct rdmap_conn_cfg ca = mkcfg(true, m);
	static uint8_t stream[16384];
	struct fk_owner a;
	struct fk_region *src, *res;
	struct rdmap_wqe *w;
	struct ext_snap ref, got;
	uint64_t v;
	size_t len, cut;

	ca.rdmap_ext = true;
	fk_init(&a);
	ck_assert(fk_create(&a, &ca));
	src = fk_region_add(&a, 0x50, EXT_DST, LW, 0);
	fill_pattern(src->buf, EXT_DST, 9);
	res = fk_region_add(&a, 0x51, 8, LW, 0);
	w = fk_post_send(&a, 1, IWARP_WR_SEND_WITH_IMM, IWARP_SEND_SOLICITED, 0,
			 NULL, 0);
	w->num_sge = 0;
	w->imm_data = 0x11223344u;
	w = fk_post_send(&a, 2, IWARP_WR_RDMA_WRITE_WITH_IMM, 0, 0x50, src->buf,
			 3000);
	w->rkey = 0x40;
	w->remote_addr = (uintptr_t)(ext_dst_mem + FK_GUARD + 100);
	w->imm_data = 0x55667788u;
	w = fk_post_send(&a, 3, IWARP_WR_ATOMIC_FETCH_AND_ADD, 0, 0x51,
			 res->buf, 8);
	w->rkey = 0x41;
	w->remote_addr = (uintptr_t)(ext_at_mem + FK_GUARD);
	w->compare_add = 2;
	fk_post_send(&a, 4, IWARP_WR_SEND, 0, 0x50, src->buf + 5, 20);
	rdmap_conn_sq_kick(a.c);
	len = fk_tx_drain(&a, stream, sizeof(stream));
	ck_assert_uint_gt(len, 3000);
	ck_assert_uint_lt(len, sizeof(stream));

	ext_run(m, stream, len, 0, &ref);
	ck_assert_int_eq(ref.set_error_calls, 0);
	ck_assert_int_eq(ref.nrcq, 3);
	ck_assert_uint_eq(ref.rcq[0].wr_id, 11);
	ck_assert_int_eq(ref.rcq[0].opcode, IWARP_WC_RECV);
	ck_assert_uint_eq(ref.rcq[0].wc_flags,
			  IWARP_WC_WITH_IMM | IWARP_WC_WITH_SE);
	ck_assert_uint_eq(ref.rcq[0].imm_data, 0x11223344u);
	ck_assert_uint_eq(ref.rcq[1].wr_id, 12);
	ck_assert_int_eq(ref.rcq[1].opcode, IWARP_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(ref.rcq[1].imm_data, 0x55667788u);
	ck_assert_uint_eq(ref.rcq[2].wr_id, 13);
	ck_assert_int_eq(ref.rcq[2].opcode, IWARP_WC_RECV);
	ck_assert_uint_eq(ref.rcq[2].byte_len, 20);
	ck_assert(memcmp(ref.dst + 100, src->buf, 3000) == 0);
	memcpy(&v, ref.at, 8);
	ck_assert_uint_eq(v, 42);
	ck_assert_uint_gt(ref.tx_len, 0); /* the Atomic Response */
	for (cut = 1; cut < len; cut++) {
		ext_run(m, stream, len, cut, &got);
		ck_assert_int_eq(got.set_error_calls, 0);
		ck_assert_int_eq(got.nrcq, ref.nrcq);
		ck_assert(memcmp(got.rcq, ref.rcq, sizeof(ref.rcq)) == 0);
		ck_assert(memcmp(got.dst, ref.dst, EXT_DST) == 0);
		ck_assert(memcmp(got.at, ref.at, 8) == 0);
		ck_assert_uint_eq(got.tx_len, ref.tx_len);
		ck_assert(memcmp(got.tx, ref.tx, ref.tx_len) == 0);
	}
	ext_run(m, stream, len, SIZE_MAX, &got);
	ck_assert(memcmp(got.rcq, ref.rcq, sizeof(ref.rcq)) == 0);
	ck_assert_uint_eq(got.tx_len, ref.tx_len);
	ck_assert(memcmp(got.tx, ref.tx, ref.tx_len) == 0);

	/* the Atomic Response, fed one octet at a time, completes the
	 * fetch-and-add with the original value (after the Sends/Write) */
	memset(res->buf, 0, 8);
	fk_rx_feed(&a, ref.tx, ref.tx_len, 1);
	ck_assert_int_eq(a.set_error_calls, 0);
	ck_assert_int_eq(a.nscq, 4);
	ck_assert_uint_eq(a.scq[2].wr_id, 3);
	ck_assert_int_eq(a.scq[2].status, IWARP_WC_SUCCESS);
	ck_assert_int_eq(a.scq[2].opcode, IWARP_WC_FETCH_ADD);
	memcpy(&v, res->buf, 8);
	ck_assert_uint_eq(v, 40);
	ck_assert(fk_guards_ok(&a));
	rdmap_conn_destroy(a.c);
	a.c = NULL;
	fk_fini(&a);
}
END_TEST

static void provided_on(void)
{
	fk_rx_provided = true;
}

static void provided_off(void)
{
	fk_rx_provided = false;
}

static Suite *rdmap_conn_suite(void)
{
	Suite *s = suite_create("rdmap_conn");
	TCase *tc = tcase_create("conn");
	TCase *tsplit = tcase_create("split"), *tprov;

	/* CPU-bound and deterministic: bounds generous for a loaded VM */
	tcase_set_timeout(tc, 300);

	tcase_add_loop_test(tc, test_roundtrips, 0, 2 * NMODES);
	tcase_add_test(tc, test_sq_order_after_read);
	tcase_add_test(tc, test_ord_limit);
	tcase_add_test(tc, test_response_owed);
	tcase_add_test(tc, test_ird_limit);
	tcase_add_loop_test(tc, test_protocol_errors, 0, BAD_COUNT);
	tcase_add_loop_test(tc, test_ext_every_split, 0, (int)NMODES);
	tcase_add_loop_test(tc, test_term_received_fails_read, 0, NMODES);
	tcase_add_test(tc, test_term_received_names_read);
	tcase_add_loop_test(tc, test_read_response_mismatch, 0, 4);
	tcase_add_test(tc, test_zero_length_read);
	tcase_add_loop_test(tc, test_send_fails_mid_message, 0, 2);
	tcase_add_test(tc, test_term_linger_expired);
	tcase_add_loop_test(tc, test_local_wqe_error, 0, 2);
	tcase_add_loop_test(tc, test_random_traffic, 0, 8);
	tcase_add_loop_test(tc, test_random_revoke, 0, 48);
	tcase_add_loop_test(tc, test_app_state_mid_message, 0, 2);
	tcase_add_test(tc, test_rx_shared_keeps_placement);
	tcase_add_loop_test(tc, test_rx_wait_resume, 0, NMODES);
	tcase_add_loop_test(tc, test_rx_wait_expired, 0, NMODES);
	tcase_add_loop_test(tc, test_rx_untagged_lately, 0, NMODES);
	tcase_add_test(tc, test_revoke_inbound_write_bulk);
	tcase_add_test(tc, test_revoke_inbound_write_direct);
	tcase_add_test(tc, test_revoke_read_response);
	tcase_add_test(tc, test_cq_overflow_recv);
	tcase_add_test(tc, test_cq_overflow_send);
	tcase_add_test(tc, test_responses_do_not_starve_sq);
	tcase_add_loop_test(tc, test_rtr, 0, 4);
	tcase_add_test(tc, test_destroy_gives_back);
	tcase_add_loop_test(tc, test_tx_gather_ends_at_signaled, 0, NMODES);
	tcase_add_loop_test(tc, test_tx_stage_markers, 0, 2);
	tcase_add_loop_test(tc, test_tx_ring_sizes, 0, NMODES);
	suite_add_tcase(s, tc);
	/* every split of a ~28 KB stream, four framings: generous bound */
	tcase_set_timeout(tsplit, 600);
	tcase_add_loop_test(tsplit, test_rx_every_split, 0, NMODES);
	suite_add_tcase(s, tsplit);
	/* the same receive paths with bulk octets in provided memory */
	tprov = tcase_create("provided");
	tcase_add_checked_fixture(tprov, provided_on, provided_off);
	tcase_set_timeout(tprov, 600);
	tcase_add_loop_test(tprov, test_roundtrips, 0, 2 * NMODES);
	tcase_add_loop_test(tprov, test_ext_every_split, 0, (int)NMODES);
	tcase_add_loop_test(tprov, test_random_traffic, 0, 8);
	tcase_add_loop_test(tprov, test_random_revoke, 0, 48);
	tcase_add_test(tprov, test_rx_shared_keeps_placement);
	tcase_add_test(tprov, test_revoke_inbound_write_bulk);
	tcase_add_test(tprov, test_revoke_inbound_write_direct);
	tcase_add_loop_test(tprov, test_rx_every_split, 0, NMODES);
	suite_add_tcase(s, tprov);
	return s;
}

IW_TEST_MAIN(rdmap_conn_suite)

/*
 * tests/decode_test.c: Check suite for iwarp_decode's engine
 * (tools/decode/): TCP reassembly (stream.c), FPDU framing with markers
 * and CRC (fpdu.c) and the MPA/DDP/RDMAP connection follower driven
 * through dec_decoder_feed_dir(), valid and broken conversations, whole,
 * split at every byte boundary and out of order.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp/ddp_hdr.h"
#include "decoder.h"
#include "fpdu.h"
#include "mpa/mpa_marker.h"
#include "mpa/mpa_rr.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_rreq.h"
#include "stream.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/mem.h"

/* ---- a recording sink ---------------------------------------------------- */

#define MAXF 64

struct rec {
	unsigned units, fpdus, errors, warnings, conns;
	char what[MAXF][24];
	char text[MAXF][320];
	int sev[MAXF];
	unsigned nf;
	char last_unit[320];
	char units_text[4096];
	struct dec_conn_info ci;
};

static void rec_unit(void *ctx, const struct dec_unit *u)
{
	struct rec *r = ctx;
	size_t o = strlen(r->units_text);

	r->units++;
	if (u->kind == DEC_UNIT_FPDU)
		r->fpdus++;
	snprintf(r->last_unit, sizeof(r->last_unit), "%s", u->text);
	if (o + 2 < sizeof(r->units_text))
		snprintf(r->units_text + o, sizeof(r->units_text) - o, "%s\n",
			 u->text);
}

static void rec_finding(void *ctx, const struct dec_finding *f)
{
	struct rec *r = ctx;

	if (f->severity == DEC_ERROR)
		r->errors++;
	else
		r->warnings++;
	if (r->nf < MAXF) {
		snprintf(r->what[r->nf], sizeof(r->what[0]), "%s", f->what);
		snprintf(r->text[r->nf], sizeof(r->text[0]), "%s", f->text);
		r->sev[r->nf] = (int)f->severity;
		r->nf++;
	}
}

static void rec_conn(void *ctx, const struct dec_conn_info *ci)
{
	struct rec *r = ctx;

	r->conns++;
	r->ci = *ci;
}

static bool rec_has(const struct rec *r, const char *what)
{
	unsigned i;

	for (i = 0; i < r->nf; i++)
		if (strcmp(r->what[i], what) == 0)
			return true;
	return false;
}

/* The severity of the first finding |what|, -1 if none. */
static int rec_severity(const struct rec *r, const char *what)
{
	unsigned i;

	for (i = 0; i < r->nf; i++)
		if (strcmp(r->what[i], what) == 0)
			return r->sev[i];
	return -1;
}

static struct dec_decoder *rec_decoder(struct rec *r)
{
	struct dec_sink s = {r, rec_unit, rec_finding, rec_conn};

	memset(r, 0, sizeof(*r));
	return dec_decoder_new(&s);
}

/* ---- frame builders ------------------------------------------------------ */

/* A byte stream of one direction under construction. */
struct wstream {
	uint8_t b[8192];
	size_t len;
	size_t base; /* stream offset of marker position 0 */
	bool markers;
};

static void put_rr(struct wstream *w, bool req, uint8_t flags, uint8_t rev,
		   const uint8_t *pd, uint16_t pdlen)
{
	memcpy(w->b + w->len, req ? "MPA ID Req Frame" : "MPA ID Rep Frame",
	       16);
	w->b[w->len + 16] = flags;
	w->b[w->len + 17] = rev;
	iw_put_u16be(w->b + w->len + 18, pdlen);
	if (pdlen)
		memcpy(w->b + w->len + 20, pd, pdlen);
	w->len += 20u + pdlen;
	w->base = w->len;
}

/* Appends the FPDU of |ulpdu| with pad, markers and CRC. */
static void put_fpdu(struct wstream *w, const uint8_t *ulpdu, size_t ulen,
		     bool crc_on, bool corrupt_crc)
{
	uint8_t content[70000];
	size_t clen = 0, i, start = w->len, crc_at;
	uint32_t crc;

	iw_put_u16be(content, (uint16_t)ulen);
	memcpy(content + 2, ulpdu, ulen);
	clen = 2 + ulen;
	while (clen % 4)
		content[clen++] = 0;
	for (i = 0; i < clen; i++) {
		if (w->markers && (w->len - w->base) % 512 == 0) {
			iw_put_u16be(w->b + w->len, 0);
			iw_put_u16be(w->b + w->len + 2,
				     (uint16_t)(w->len - start));
			w->len += 4;
		}
		w->b[w->len++] = content[i];
	}
	crc_at = w->len;
	crc = crc_on ? crc32c(w->b + start, crc_at - start) : 0;
	if (corrupt_crc)
		crc ^= 0x01000000;
	iw_put_u32le(w->b + w->len, crc);
	w->len += 4;
}

static size_t ulp_send(uint8_t *out, uint32_t msn, uint32_t mo, bool last,
		       const uint8_t *data, size_t len)
{
	struct ddp_hdr h;
	size_t n;

	memset(&h, 0, sizeof(h));
	h.last = last;
	h.dv = DDP_VERSION;
	h.rv = RDMAP_VERSION;
	h.opcode = RDMAP_OP_SEND;
	h.qn = DDP_QN_SEND;
	h.msn = msn;
	h.mo = mo;
	n = ddp_hdr_encode(out, &h);
	memcpy(out + n, data, len);
	return n + len;
}

static size_t ulp_tagged(uint8_t *out, uint8_t op, uint32_t stag, uint64_t to,
			 bool last, const uint8_t *data, size_t len)
{
	struct ddp_hdr h;
	size_t n;

	memset(&h, 0, sizeof(h));
	h.tagged = true;
	h.last = last;
	h.dv = DDP_VERSION;
	h.rv = RDMAP_VERSION;
	h.opcode = op;
	h.stag = stag;
	h.to = to;
	n = ddp_hdr_encode(out, &h);
	memcpy(out + n, data, len);
	return n + len;
}

/* A two-direction conversation plus the order segments are fed in. */
struct conv {
	struct wstream ab, ba;
	/* (dir, end offset) checkpoints: feed the other side up to here */
	struct {
		int dir;
		size_t end;
	} step[32];
	unsigned nsteps;
};

static void mark(struct conv *cv, int dir)
{
	cv->step[cv->nsteps].dir = dir;
	cv->step[cv->nsteps].end = dir == DEC_AB ? cv->ab.len : cv->ba.len;
	cv->nsteps++;
}

/*
 * An rping-like exchange: Req/Rep (rev 2 enhanced, IRD/ORD 4/4, C and M
 * as given), a Send in 3 segments, a Read Request answered by a Read
 * Response in 2 segments, a Write, and a Send back.
 */
static void build_rping(struct conv *cv, bool crc, bool markers, uint8_t msn2,
			bool bad_crc)
{
	static const uint8_t irdord[4] = {0, 4, 0, 4};
	uint8_t u[2048], data[1200];
	uint8_t fl =
		(uint8_t)(MPA_RR_FLAG_ENHANCED | (crc ? MPA_RR_FLAG_C : 0) |
			  (markers ? MPA_RR_FLAG_M : 0));
	struct rdmap_rreq rr;
	size_t n;

	memset(cv, 0, sizeof(*cv));
	iw_test_fill(data, sizeof(data), 7);
	put_rr(&cv->ab, true, fl, 2, irdord, 4);
	mark(cv, DEC_AB);
	put_rr(&cv->ba, false, fl, 2, irdord, 4);
	mark(cv, DEC_BA);
	cv->ab.markers = markers;
	cv->ba.markers = markers;
	/* Send of 1000 octets in 3 segments (MO 0, 400, 800). */
	n = ulp_send(u, 1, 0, false, data, 400);
	put_fpdu(&cv->ab, u, n, crc, false);
	n = ulp_send(u, 1, 400, false, data + 400, 400);
	put_fpdu(&cv->ab, u, n, crc, bad_crc);
	n = ulp_send(u, 1, 800, true, data + 800, 200);
	put_fpdu(&cv->ab, u, n, crc, false);
	mark(cv, DEC_AB);
	/* B reads 300 octets. */
	memset(&rr, 0, sizeof(rr));
	rr.sink_stag = 0x1234;
	rr.sink_to = 0x10000;
	rr.size = 300;
	rr.src_stag = 0x99;
	rr.src_to = 0x2000;
	n = rdmap_rreq_msg_encode(u, 1, &rr);
	put_fpdu(&cv->ba, u, n, crc, false);
	mark(cv, DEC_BA);
	n = ulp_tagged(u, RDMAP_OP_READ_RESPONSE, 0x1234, 0x10000, false, data,
		       100);
	put_fpdu(&cv->ab, u, n, crc, false);
	n = ulp_tagged(u, RDMAP_OP_READ_RESPONSE, 0x1234, 0x10000 + 100, true,
		       data + 100, 200);
	put_fpdu(&cv->ab, u, n, crc, false);
	mark(cv, DEC_AB);
	n = ulp_tagged(u, RDMAP_OP_WRITE, 0x5678, 0x3000, true, data, 64);
	put_fpdu(&cv->ba, u, n, crc, false);
	n = ulp_send(u, 1, 0, true, data, 16);
	put_fpdu(&cv->ba, u, n, crc, false);
	mark(cv, DEC_BA);
	n = ulp_send(u, msn2, 0, true, data, 3);
	put_fpdu(&cv->ab, u, n, crc, false);
	mark(cv, DEC_AB);
}

#define ISN_A 0xfffffff0u /* makes the A->B sequence numbers wrap */
#define ISN_B 1000u

/*
 * Feeds |cv| in step order; each step's new octets are cut at |cut| (0: one
 * segment) relative to the step's start. Ends with FIN both ways.
 */
static void feed_conv(struct dec_decoder *d, const struct conv *cv, size_t cut)
{
	size_t done[2] = {0, 0};
	unsigned i;

	dec_decoder_feed_dir(d, DEC_AB, ISN_A, DEC_TCP_SYN, NULL, 0);
	dec_decoder_feed_dir(d, DEC_BA, ISN_B, DEC_TCP_SYN | DEC_TCP_ACK, NULL,
			     0);
	for (i = 0; i < cv->nsteps; i++) {
		int dir = cv->step[i].dir;
		const struct wstream *w = dir == DEC_AB ? &cv->ab : &cv->ba;
		uint32_t isn = dir == DEC_AB ? ISN_A : ISN_B;
		size_t from = done[dir], to = cv->step[i].end;

		if (cut > 0 && from + cut < to) {
			dec_decoder_feed_dir(d, dir, isn + 1 + (uint32_t)from,
					     DEC_TCP_ACK, w->b + from, cut);
			from += cut;
		}
		dec_decoder_feed_dir(d, dir, isn + 1 + (uint32_t)from,
				     DEC_TCP_ACK, w->b + from, to - from);
		done[dir] = to;
	}
	dec_decoder_feed_dir(d, DEC_AB, ISN_A + 1 + (uint32_t)done[0],
			     DEC_TCP_FIN | DEC_TCP_ACK, NULL, 0);
	dec_decoder_feed_dir(d, DEC_BA, ISN_B + 1 + (uint32_t)done[1],
			     DEC_TCP_FIN | DEC_TCP_ACK, NULL, 0);
}

static void run_conv(struct rec *r, const struct conv *cv, size_t cut)
{
	struct dec_decoder *d = rec_decoder(r);

	ck_assert_ptr_nonnull(d);
	feed_conv(d, cv, cut);
	dec_decoder_finish(d);
	ck_assert_uint_eq(dec_decoder_errors(d), r->errors);
	dec_decoder_free(d);
}

/* ---- stream reassembly --------------------------------------------------- */

struct sink_buf {
	uint8_t b[4096];
	size_t len;
	bool ordered;
};

static void sb_deliver(void *ctx, uint64_t off, const uint8_t *data, size_t len)
{
	struct sink_buf *s = ctx;

	if (off != s->len)
		s->ordered = false;
	memcpy(s->b + s->len, data, len);
	s->len += len;
}

START_TEST(test_stream_reorder_overlap_wrap)
{
	long mem0 = iw_mem_outstanding();
	uint8_t data[3000];
	struct dec_stream st;
	struct sink_buf sb;
	const uint32_t isn = 0xfffffc00u; /* wraps inside the data */
	uint64_t goff, glen, after;
	/* segments (offset, length), out of order, overlapping, repeated */
	static const size_t seg[][2] = {
		{1000, 500},  {0, 300}, {200, 400}, {2500, 500},
		{1400, 1200}, {0, 100}, {600, 450}, {2990, 10},
	};
	size_t i;

	iw_test_fill(data, sizeof(data), 42);
	dec_stream_init(&st);
	memset(&sb, 0, sizeof(sb));
	sb.ordered = true;
	dec_stream_segment(&st, isn, DEC_TCP_SYN, NULL, 0, 0, sb_deliver, &sb);
	for (i = 0; i < sizeof(seg) / sizeof(seg[0]); i++)
		ck_assert_int_eq(dec_stream_segment(
					 &st, isn + 1 + (uint32_t)seg[i][0],
					 DEC_TCP_ACK, data + seg[i][0],
					 seg[i][1], seg[i][1], sb_deliver, &sb),
				 0);
	ck_assert(sb.ordered);
	ck_assert_uint_eq(sb.len, sizeof(data));
	ck_assert_mem_eq(sb.b, data, sizeof(data));
	ck_assert(!dec_stream_gap(&st, &goff, &glen, &after));
	ck_assert_uint_gt(st.retrans_bytes, 0);
	ck_assert_uint_gt(st.ooo_segments, 0);
	dec_stream_release(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_stream_gap)
{
	long mem0 = iw_mem_outstanding();
	uint8_t data[100];
	struct dec_stream st;
	struct sink_buf sb;
	uint64_t goff, glen, after;

	memset(data, 0xab, sizeof(data));
	dec_stream_init(&st);
	memset(&sb, 0, sizeof(sb));
	dec_stream_segment(&st, 7, DEC_TCP_SYN, NULL, 0, 0, sb_deliver, &sb);
	dec_stream_segment(&st, 8, 0, data, 10, 10, sb_deliver, &sb);
	dec_stream_segment(&st, 8 + 30, 0, data, 20, 20, sb_deliver, &sb);
	dec_stream_segment(&st, 8 + 50, DEC_TCP_FIN, NULL, 0, 0, sb_deliver,
			   &sb);
	ck_assert_uint_eq(sb.len, 10);
	ck_assert(dec_stream_gap(&st, &goff, &glen, &after));
	ck_assert_uint_eq(goff, 10);
	ck_assert_uint_eq(glen, 20);
	ck_assert_uint_eq(after, 20);
	ck_assert(st.fin);
	ck_assert_uint_eq(st.fin_off, 50);
	dec_stream_release(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/*
 * A control segment without data far before the stream start (an RST with
 * sequence number 0, as stacks send it) once underflowed the wire length:
 * iwarp_decode then reported "snaplen: 18446744073617636435 octets missing".
 */
START_TEST(test_stream_stale_control_segment)
{
	long mem0 = iw_mem_outstanding();
	uint8_t data[40];
	struct dec_stream st;
	struct sink_buf sb;
	uint64_t goff, glen, after;
	const uint32_t isn = 91915180u;

	iw_test_fill(data, sizeof(data), 7);
	dec_stream_init(&st);
	memset(&sb, 0, sizeof(sb));
	sb.ordered = true;
	dec_stream_segment(&st, isn, DEC_TCP_SYN, NULL, 0, 0, sb_deliver, &sb);
	dec_stream_segment(&st, isn + 1, DEC_TCP_ACK, data, sizeof(data),
			   sizeof(data), sb_deliver, &sb);
	ck_assert_int_eq(dec_stream_segment(&st, 0, DEC_TCP_RST | DEC_TCP_ACK,
					    NULL, 0, 0, sb_deliver, &sb),
			 0);
	ck_assert_int_eq(dec_stream_segment(&st, isn - 5000u, DEC_TCP_ACK, NULL,
					    0, 0, sb_deliver, &sb),
			 0);
	ck_assert(sb.ordered);
	ck_assert_uint_eq(sb.len, sizeof(data));
	ck_assert_uint_eq(st.truncated_bytes, 0);
	ck_assert_uint_eq(st.end_off, sizeof(data));
	ck_assert(st.rst);
	ck_assert(!dec_stream_gap(&st, &goff, &glen, &after));
	dec_stream_release(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- FPDU framing, split at every byte boundary ---------------------------
 */

struct fx_ctx {
	struct dec_fpdu_rx rx;
	unsigned n, bad_crc, bad_marker, markers;
	size_t ulpdu_total;
	uint64_t base;
};

static void fx_on(void *ctx, const struct dec_fpdu *f)
{
	struct fx_ctx *x = ctx;

	x->n++;
	x->ulpdu_total += f->ulpdu_len;
	x->markers += f->markers;
	if (f->crc_field != f->crc_calc)
		x->bad_crc++;
	if (f->marker_bad)
		x->bad_marker++;
	ck_assert_msg(f->lib_agrees, "%s", f->lib_text);
}

static void fx_reset(void *ctx)
{
	struct fx_ctx *x = ctx;
	uint64_t base = x->base;

	if (x->rx.wire)
		dec_fpdu_rx_release(&x->rx);
	memset(x, 0, sizeof(*x));
	x->base = base;
	ck_assert_int_eq(dec_fpdu_rx_init(&x->rx, base, true, true), 0);
}

static int fx_feed(void *ctx, const uint8_t *buf, size_t len)
{
	struct fx_ctx *x = ctx;

	dec_fpdu_rx_feed(&x->rx, buf, len, fx_on, x);
	return 0;
}

static size_t fx_expect_n, fx_expect_total;

static void fx_check(void *ctx, int rc)
{
	struct fx_ctx *x = ctx;

	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(x->n, fx_expect_n);
	ck_assert_uint_eq(x->ulpdu_total, fx_expect_total);
	ck_assert_uint_eq(x->bad_crc, 0);
	ck_assert_uint_eq(x->bad_marker, 0);
	ck_assert_uint_ge(x->markers, 3);
}

START_TEST(test_fpdu_markers_splits)
{
	static const struct iw_test_rx_ops ops = {fx_reset, fx_feed, fx_check};
	long mem0 = iw_mem_outstanding();
	struct wstream w;
	struct fx_ctx x;
	uint8_t u[1024], data[1000];
	size_t n, sizes[] = {490, 18, 506, 2, 600, 0};
	unsigned i;

	/* FPDUs of several sizes so markers fall at the FPDU start, inside
	 * the header, the payload, the pad and before the CRC. */
	memset(&w, 0, sizeof(w));
	w.markers = true;
	iw_test_fill(data, sizeof(data), 3);
	fx_expect_total = 0;
	for (i = 0; i < 6; i++) {
		n = ulp_send(u, i + 1, 0, true, data, sizes[i]);
		put_fpdu(&w, u, n, true, false);
		fx_expect_total += n;
	}
	fx_expect_n = 6;
	memset(&x, 0, sizeof(x));
	iw_test_feed_splits(&ops, &x, w.b, w.len);
	dec_fpdu_rx_release(&x.rx);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- whole conversations ------------------------------------------------- */

START_TEST(test_conv_valid_all_splits)
{
	long mem0 = iw_mem_outstanding();
	struct conv cv;
	struct rec r;
	size_t cut;
	int variant = _i; /* 0: plain, 1: CRC, 2: CRC + markers */

	build_rping(&cv, variant >= 1, variant == 2, 2, false);
	for (cut = 0; cut < 700; cut += cut < 64 ? 1 : 37) {
		run_conv(&r, &cv, cut);
		if (r.errors || r.warnings)
			ck_abort_msg("cut %zu: %s: %s", cut, r.what[0],
				     r.text[0]);
		ck_assert_uint_eq(r.conns, 1);
		ck_assert_uint_eq(r.fpdus, 9);
		ck_assert(r.ci.established);
		ck_assert_uint_eq(r.ci.dir[DEC_AB].messages[RDMAP_OP_SEND], 2);
		ck_assert_uint_eq(
			r.ci.dir[DEC_AB].messages[RDMAP_OP_READ_RESPONSE], 1);
		ck_assert_uint_eq(r.ci.dir[DEC_BA].messages[RDMAP_OP_WRITE], 1);
		ck_assert_uint_eq(
			r.ci.dir[DEC_BA].messages[RDMAP_OP_READ_REQUEST], 1);
		ck_assert_uint_eq(r.ci.dir[DEC_AB].markers, variant == 2);
		ck_assert_uint_eq(r.ci.crc, variant >= 1);
	}
	ck_assert_ptr_nonnull(
		strstr(r.units_text, "MPA Request rev 2 enhanced"));
	if (variant >= 1)
		ck_assert_ptr_nonnull(strstr(r.last_unit, "crc ok"));
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_conv_out_of_order)
{
	long mem0 = iw_mem_outstanding();
	struct dec_decoder *d;
	struct conv cv;
	struct rec r;

	build_rping(&cv, true, true, 2, false);
	d = rec_decoder(&r);
	dec_decoder_feed_dir(d, DEC_AB, 100, DEC_TCP_SYN, NULL, 0);
	dec_decoder_feed_dir(d, DEC_BA, 500, DEC_TCP_SYN | DEC_TCP_ACK, NULL,
			     0);
	/* A's request, B's whole stream, then A's rest backwards in
	 * 50-octet pieces: A's data all held until the hole at 24 fills. */
	dec_decoder_feed_dir(d, DEC_AB, 101, 0, cv.ab.b, 24);
	dec_decoder_feed_dir(d, DEC_BA, 501, 0, cv.ba.b, cv.ba.len);
	{
		size_t off = cv.ab.len;

		while (off > 24) {
			size_t from = off >= 74 ? off - 50 : 24;

			dec_decoder_feed_dir(d, DEC_AB, 101 + (uint32_t)from, 0,
					     cv.ab.b + from, off - from);
			off = from;
		}
	}
	dec_decoder_finish(d);
	/* B answered before A's Send arrived in order: that ordering is
	 * what the capture shows, so it is reported. */
	ck_assert(rec_has(&r, "early-fpdu"));
	ck_assert_uint_eq(r.fpdus, 9);
	ck_assert_uint_gt(r.ci.dir[DEC_AB].ooo_segments, 0);
	dec_decoder_free(d);
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_conv_bad_crc)
{
	struct conv cv;
	struct rec r;

	build_rping(&cv, true, false, 2, true);
	run_conv(&r, &cv, 0);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert(rec_has(&r, "crc"));
	ck_assert(!rec_has(&r, "lib-mpa-rx"));
}
END_TEST

/*
 * MPA flag 0x01 alone (libiwarp's RFC 7306 offer, MPA_RR_FLAG_RDMAP_EXT)
 * is no error; another reserved bit beside it still is.
 */
START_TEST(test_conv_rdmap_ext_flag)
{
	struct conv cv;
	struct rec r;

	build_rping(&cv, true, false, 2, false);
	cv.ab.b[16] |= MPA_RR_FLAG_RDMAP_EXT; /* the Request's flags octet */
	cv.ba.b[16] |= MPA_RR_FLAG_RDMAP_EXT; /* the Reply's */
	run_conv(&r, &cv, 0);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert(!rec_has(&r, "mpa-reserved"));
	build_rping(&cv, true, false, 2, false);
	cv.ab.b[16] |= MPA_RR_FLAG_RDMAP_EXT | 0x02;
	run_conv(&r, &cv, 0);
	ck_assert(rec_has(&r, "mpa-reserved"));
}
END_TEST

START_TEST(test_conv_crc_field_without_crc)
{
	struct conv cv;
	struct rec r;

	build_rping(&cv, false, false, 2, true);
	run_conv(&r, &cv, 0);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert(rec_has(&r, "crc-field"));
}
END_TEST

START_TEST(test_conv_bad_msn)
{
	struct conv cv;
	struct rec r;

	build_rping(&cv, true, true, 5, false); /* second Send: MSN 5, not 2 */
	run_conv(&r, &cv, 0);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert(rec_has(&r, "ddp-msn"));
}
END_TEST

START_TEST(test_conv_bad_marker)
{
	struct conv cv;
	struct rec r;
	size_t i;

	build_rping(&cv, false, true, 2, false);
	/* corrupt the FPDUPTR of the second marker of A->B */
	i = cv.ab.base + 512 + 3;
	cv.ab.b[i] ^= 0x04;
	run_conv(&r, &cv, 0);
	ck_assert(rec_has(&r, "mpa-marker"));
	ck_assert(!rec_has(&r, "lib-mpa-rx"));
}
END_TEST

START_TEST(test_conv_read_response_mismatch)
{
	struct conv cv;
	struct rec r;
	size_t i;

	build_rping(&cv, false, false, 2, false);
	/* the first Read Response's STag (after the Send's 3 FPDUs) */
	i = 24 + (2 + 418 + 4) * 2 + (2 + 218 + 4) + 2 + 2;
	ck_assert_uint_eq(iw_get_u32be(cv.ab.b + i), 0x1234);
	cv.ab.b[i + 3] = 0x35;
	run_conv(&r, &cv, 0);
	ck_assert(rec_has(&r, "rdmap-rresp"));
}
END_TEST

START_TEST(test_reject_and_fin)
{
	struct dec_decoder *d;
	struct rec r;
	struct wstream a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	put_rr(&a, true, MPA_RR_FLAG_M, 1, NULL, 0);
	put_rr(&b, false, MPA_RR_FLAG_R, 1, NULL, 0);
	d = rec_decoder(&r);
	dec_decoder_feed_dir(d, DEC_AB, 0, DEC_TCP_SYN, NULL, 0);
	dec_decoder_feed_dir(d, DEC_BA, 0, DEC_TCP_SYN | DEC_TCP_ACK, NULL, 0);
	dec_decoder_feed_dir(d, DEC_AB, 1, 0, a.b, a.len);
	dec_decoder_feed_dir(d, DEC_BA, 1, DEC_TCP_FIN, b.b, b.len);
	dec_decoder_feed_dir(d, DEC_AB, 1 + (uint32_t)a.len, DEC_TCP_FIN, NULL,
			     0);
	dec_decoder_finish(d);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert(rec_has(&r, "mpa-reject"));
	ck_assert(r.ci.rejected);
	ck_assert_ptr_nonnull(strstr(r.ci.state, "rejected"));
	dec_decoder_free(d);
}
END_TEST

/*
 * A connection's start for the Terminate tests: empty streams |a| (A, the
 * initiator) and |b| holding an MPA rev 1 Request and Reply with
 * |flags|, and a decoder into |r| that has seen the SYNs.
 */
static struct dec_decoder *term_conn(struct rec *r, struct wstream *a,
				     struct wstream *b, uint8_t flags)
{
	struct dec_decoder *d;

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	put_rr(a, true, flags, 1, NULL, 0);
	put_rr(b, false, flags, 1, NULL, 0);
	d = rec_decoder(r);
	dec_decoder_feed_dir(d, DEC_AB, 0, DEC_TCP_SYN, NULL, 0);
	dec_decoder_feed_dir(d, DEC_BA, 0, DEC_TCP_SYN | DEC_TCP_ACK, NULL, 0);
	return d;
}

START_TEST(test_siw_terminate_and_cut)
{
	/* siw's Terminate for a CRC error, as captured (README b). */
	static const uint8_t term[] = {
		0x00, 0x16, 0x41, 0x47, 0, 0, 0, 0, 0,	  0,	0, 2,
		0,    0,    0,	  1,	0, 0, 0, 0, 0x02, 0x02, 0, 0,
	};
	uint8_t u[64];
	struct dec_decoder *d;
	struct rec r;
	struct wstream a, b;
	size_t n;

	d = term_conn(&r, &a, &b, MPA_RR_FLAG_C);
	n = ulp_send(u, 1, 0, true, (const uint8_t *)"hi", 2);
	put_fpdu(&a, u, n, true, false);
	put_fpdu(&b, term + 2, sizeof(term) - 2, true, false);
	dec_decoder_feed_dir(d, DEC_AB, 1, 0, a.b, a.len);
	dec_decoder_feed_dir(d, DEC_BA, 1, 0, b.b, b.len);
	/* A sends half an FPDU more, then FIN: the stream was cut, after
	 * B's Terminate (a teardown, not a lost stream). */
	dec_decoder_feed_dir(d, DEC_AB, 1 + (uint32_t)a.len, DEC_TCP_FIN,
			     a.b + 20, 6);
	dec_decoder_finish(d);
	ck_assert(rec_has(&r, "terminate"));
	ck_assert(rec_has(&r, "term-encoding"));
	ck_assert_int_eq(rec_severity(&r, "cut"), DEC_WARNING);
	ck_assert_ptr_nonnull(
		strstr(r.units_text, "RDMAP Terminate LLP/MPA: CRC error"));
	ck_assert_ptr_nonnull(
		strstr(r.units_text, "siw nibble-swapped control word"));
	ck_assert(r.ci.dir[DEC_BA].messages[RDMAP_OP_TERMINATE] == 1);
	dec_decoder_free(d);
}
END_TEST

/*
 * A's stream reset inside an FPDU: a lost stream (error) unless the
 * connection carried a Terminate before, which tears it down anyway
 * (warning): |_i| 0 no Terminate, 1 B's Terminate first.
 */
START_TEST(test_rst_inside_fpdu)
{
	/* DDP untagged buffer error, invalid MSN: no buffer (RFC 5040 §7.2:
	 * layer 1, etype 2, code 0x02), QN 2, MSN 1, no header included */
	static const uint8_t term[] = {
		0x00, 0x16, 0x41, 0x47, 0, 0, 0, 0, 0,	  0,	0, 2,
		0,    0,    0,	  1,	0, 0, 0, 0, 0x12, 0x02, 0, 0,
	};
	uint8_t u[64];
	struct dec_decoder *d;
	struct rec r;
	struct wstream a, b;
	size_t n;

	d = term_conn(&r, &a, &b, 0);
	n = ulp_send(u, 1, 0, true, (const uint8_t *)"first", 5);
	put_fpdu(&a, u, n, false, false);
	n = ulp_send(u, 2, 0, true, (const uint8_t *)"second", 6);
	put_fpdu(&a, u, n, false, false);
	if (_i)
		put_fpdu(&b, term + 2, sizeof(term) - 2, false, false);
	/* Request, Reply, all of A's FPDUs but the last 4 octets (inside
	 * the 2nd), B's Terminate if any, then A's reset; the Terminate must
	 * decode as the no-buffer one (a warning, not an error) */
	dec_decoder_feed_dir(d, DEC_AB, 1, 0, a.b, 20);
	dec_decoder_feed_dir(d, DEC_BA, 1, 0, b.b, 20);
	dec_decoder_feed_dir(d, DEC_AB, 21, 0, a.b + 20, a.len - 24);
	if (b.len > 20)
		dec_decoder_feed_dir(d, DEC_BA, 21, 0, b.b + 20, b.len - 20);
	dec_decoder_feed_dir(d, DEC_AB, 1 + (uint32_t)(a.len - 4), DEC_TCP_RST,
			     NULL, 0);
	dec_decoder_finish(d);
	ck_assert_int_eq(rec_severity(&r, "cut"),
			 (_i ? DEC_WARNING : DEC_ERROR));
	ck_assert_uint_eq(r.errors, (_i ? 0u : 1u));
	if (_i)
		ck_assert_ptr_nonnull(strstr(r.units_text, "invalid MSN"));
	dec_decoder_free(d);
}
END_TEST

START_TEST(test_gap_and_not_iwarp)
{
	struct dec_decoder *d;
	struct rec r;
	struct conv cv;
	static const uint8_t http[] = "GET / HTTP/1.0\r\n\r\n";

	build_rping(&cv, false, false, 2, false);
	d = rec_decoder(&r);
	dec_decoder_feed_dir(d, DEC_AB, 0, DEC_TCP_SYN, NULL, 0);
	dec_decoder_feed_dir(d, DEC_AB, 1, 0, cv.ab.b, 24);
	dec_decoder_feed_dir(d, DEC_BA, 0, DEC_TCP_SYN | DEC_TCP_ACK, NULL, 0);
	dec_decoder_feed_dir(d, DEC_BA, 1, 0, cv.ba.b, 24);
	/* A->B octets 24..99 never arrive. */
	dec_decoder_feed_dir(d, DEC_AB, 101, 0, cv.ab.b + 100, 60);
	dec_decoder_finish(d);
	ck_assert(rec_has(&r, "gap"));
	ck_assert_uint_eq(r.errors, 1);
	dec_decoder_free(d);

	d = rec_decoder(&r);
	dec_decoder_feed_dir(d, DEC_AB, 0, DEC_TCP_SYN, NULL, 0);
	dec_decoder_feed_dir(d, DEC_AB, 1, 0, http, sizeof(http) - 1);
	dec_decoder_finish(d);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_int_eq(r.ci.kind, DEC_CONN_NOT_IWARP);
	dec_decoder_free(d);
}
END_TEST

START_TEST(test_data_before_request)
{
	struct dec_decoder *d;
	struct rec r;
	uint8_t buf[64];
	struct conv cv;

	build_rping(&cv, false, false, 2, false);
	memcpy(buf, "junk", 4);
	memcpy(buf + 4, cv.ab.b, 24);
	d = rec_decoder(&r);
	dec_decoder_feed_dir(d, DEC_AB, 0, DEC_TCP_SYN, NULL, 0);
	dec_decoder_feed_dir(d, DEC_AB, 1, 0, buf, 28);
	dec_decoder_feed_dir(d, DEC_BA, 0, DEC_TCP_SYN | DEC_TCP_ACK, NULL, 0);
	dec_decoder_feed_dir(d, DEC_BA, 1, 0, cv.ba.b, 24);
	dec_decoder_finish(d);
	ck_assert(rec_has(&r, "data-before-mpa"));
	ck_assert(r.ci.established);
	dec_decoder_free(d);
}
END_TEST

/* Arbitrary bytes must not crash the engine (what a fuzz target does). */
START_TEST(test_garbage_no_crash)
{
	long mem0 = iw_mem_outstanding();
	uint8_t buf[4096];
	struct dec_decoder *d;
	struct conv cv;
	struct rec r;
	uint64_t st = 99;
	int round;

	build_rping(&cv, true, true, 2, false);
	for (round = 0; round < 200; round++) {
		size_t i, n = sizeof(buf);

		memcpy(buf, cv.ab.b, cv.ab.len);
		for (i = 0; i < 8; i++)
			buf[iw_test_rand(&st) % cv.ab.len] ^=
				(uint8_t)iw_test_rand(&st);
		d = rec_decoder(&r);
		dec_decoder_feed_dir(d, DEC_AB, 0, DEC_TCP_SYN, NULL, 0);
		dec_decoder_feed_dir(d, DEC_BA, 0, DEC_TCP_SYN, NULL, 0);
		dec_decoder_feed_dir(d, DEC_BA, 1, 0, cv.ba.b, cv.ba.len);
		for (i = 0; i < cv.ab.len; i += n) {
			n = 1 + iw_test_rand(&st) % 300;
			if (i + n > cv.ab.len)
				n = cv.ab.len - i;
			dec_decoder_feed_dir(d, DEC_AB, 1 + (uint32_t)i, 0,
					     buf + i, n);
		}
		dec_decoder_finish(d);
		dec_decoder_free(d);
	}
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

/* ---- RFC 7306 and Send with Invalidate ---------------------------------- */

/* An untagged ULPDU built byte by byte (RFC 5041 §4.3, RFC 5040 §4.2). */
static size_t ulp_untagged(uint8_t *out, uint8_t op, uint32_t ulp, uint32_t qn,
			   uint32_t msn, const uint8_t *data, size_t len)
{
	out[0] = 0x40 | 0x01; /* L, DV 1 */
	out[1] = (uint8_t)(0x40 | op);
	iw_put_u32be(out + 2, ulp);
	iw_put_u32be(out + 6, qn);
	iw_put_u32be(out + 10, msn);
	iw_put_u32be(out + 14, 0);
	memcpy(out + 18, data, len);
	return 18 + len;
}

/* Atomic Request payload (RFC 7306 §5.2.1). */
static void atomic_req(uint8_t *a, uint32_t aop, uint32_t id, uint64_t swap,
		       uint64_t cmp)
{
	memset(a, 0, 52);
	iw_put_u32be(a, aop);
	iw_put_u32be(a + 4, id);
	iw_put_u32be(a + 8, 0x6601);
	iw_put_u64be(a + 12, 0x8000);
	iw_put_u64be(a + 20, swap);
	iw_put_u64be(a + 28, ~0ull);
	iw_put_u64be(a + 36, cmp);
	iw_put_u64be(a + 44, ~0ull);
}

/*
 * Rev 2, CRC on. A: Immediate Data, Immediate Data with SE (QN 0, MSN 1
 * and 2), a Send (MSN 3), Atomic Requests Fetch and Add id 7 and Compare
 * and Swap id 8 (QN 3, MSN 1, 2). B: Atomic Responses id 7 and 8 (QN 4).
 * |bad| breaks one thing: 1 Immediate Data of 4 octets, 2 Immediate Data
 * on QN 1, 3 a Response to id 9, 4 atomic operation 5.
 */
static void build_7306(struct conv *cv, int bad)
{
	static const uint8_t irdord[4] = {0, 4, 0, 4};
	uint8_t u[128], imm[8], a[52], r[12];
	uint8_t fl = MPA_RR_FLAG_ENHANCED | MPA_RR_FLAG_C;
	size_t n;

	memset(cv, 0, sizeof(*cv));
	put_rr(&cv->ab, true, fl, 2, irdord, 4);
	mark(cv, DEC_AB);
	put_rr(&cv->ba, false, fl, 2, irdord, 4);
	mark(cv, DEC_BA);
	iw_put_u64be(imm, 0x1122334455667788ull);
	n = ulp_untagged(u, RDMAP_OP_IMM_DATA, 0, bad == 2 ? 1 : 0, 1, imm,
			 bad == 1 ? 4 : 8);
	put_fpdu(&cv->ab, u, n, true, false);
	n = ulp_untagged(u, RDMAP_OP_IMM_DATA_SE, 0, 0, 2, imm, 8);
	put_fpdu(&cv->ab, u, n, true, false);
	n = ulp_untagged(u, RDMAP_OP_SEND, 0, 0, 3, imm, 5);
	put_fpdu(&cv->ab, u, n, true, false);
	atomic_req(a, bad == 4 ? 5 : 0, 7, 1, 0);
	n = ulp_untagged(u, RDMAP_OP_ATOMIC_REQUEST, 0, 3, 1, a, 52);
	put_fpdu(&cv->ab, u, n, true, false);
	atomic_req(a, 2, 8, 9, 1);
	n = ulp_untagged(u, RDMAP_OP_ATOMIC_REQUEST, 0, 3, 2, a, 52);
	put_fpdu(&cv->ab, u, n, true, false);
	mark(cv, DEC_AB);
	iw_put_u32be(r, 7);
	iw_put_u64be(r + 4, 41);
	n = ulp_untagged(u, RDMAP_OP_ATOMIC_RESPONSE, 0, 4, 1, r, 12);
	put_fpdu(&cv->ba, u, n, true, false);
	iw_put_u32be(r, bad == 3 ? 9 : 8);
	iw_put_u64be(r + 4, 1);
	n = ulp_untagged(u, RDMAP_OP_ATOMIC_RESPONSE, 0, 4, 2, r, 12);
	put_fpdu(&cv->ba, u, n, true, false);
	mark(cv, DEC_BA);
}

START_TEST(test_rfc7306_valid_all_splits)
{
	struct conv cv;
	struct rec r;
	size_t cut;

	build_7306(&cv, 0);
	for (cut = 0; cut < 120; cut++) {
		run_conv(&r, &cv, cut);
		ck_assert_msg(r.errors == 0 && r.warnings == 0,
			      "cut %zu: %u errors, %u warnings: %s", cut,
			      r.errors, r.warnings, r.nf ? r.text[0] : "");
		ck_assert_uint_eq(r.fpdus, 7);
		ck_assert_ptr_nonnull(strstr(
			r.units_text, "QN 0 MSN 1 MO 0 L RDMAP Immediate "
				      "Data imm 0x1122334455667788"));
		ck_assert_ptr_nonnull(strstr(r.units_text, "QN 0 MSN 3"));
		ck_assert_ptr_nonnull(strstr(r.units_text,
					     "QN 3 MSN 2 MO 0 L RDMAP Atomic "
					     "Request Compare and Swap id "
					     "0x00000008"));
		ck_assert_ptr_nonnull(strstr(r.units_text,
					     "QN 4 MSN 1 MO 0 L RDMAP Atomic "
					     "Response id 0x00000007 orig "
					     "0x0000000000000029"));
	}
}
END_TEST

START_TEST(test_rfc7306_errors)
{
	static const char *const want[] = {"", "rdmap-7306", "ddp-qn",
					   "atomic-unpaired", "rdmap-7306"};
	struct conv cv;
	struct rec r;

	build_7306(&cv, _i);
	run_conv(&r, &cv, 0);
	ck_assert_msg(rec_has(&r, want[_i]), "case %d: no %s", _i, want[_i]);
	if (_i == 3) /* id 8 never answered */
		ck_assert(rec_has(&r, "unanswered"));
}
END_TEST

/* Send with Invalidate names STag 0x5678 of B; A then Writes to it. */
START_TEST(test_send_invalidate_then_access)
{
	static const uint8_t irdord[4] = {0, 4, 0, 4};
	uint8_t u[128], d[8] = {0};
	struct conv cv;
	struct rec r;
	size_t n;

	memset(&cv, 0, sizeof(cv));
	put_rr(&cv.ab, true, MPA_RR_FLAG_ENHANCED, 2, irdord, 4);
	mark(&cv, DEC_AB);
	put_rr(&cv.ba, false, MPA_RR_FLAG_ENHANCED, 2, irdord, 4);
	mark(&cv, DEC_BA);
	n = ulp_untagged(u, RDMAP_OP_SEND_INV, 0x5678, 0, 1, d, 8);
	put_fpdu(&cv.ab, u, n, false, false);
	mark(&cv, DEC_AB);
	/* B writing to an A STag of the same value is fine */
	n = ulp_tagged(u, RDMAP_OP_WRITE, 0x5678, 0, true, d, 8);
	put_fpdu(&cv.ba, u, n, false, false);
	mark(&cv, DEC_BA);
	run_conv(&r, &cv, 0);
	ck_assert_uint_eq(r.warnings, 0);
	n = ulp_tagged(u, RDMAP_OP_WRITE, 0x5678, 0, true, d, 8);
	put_fpdu(&cv.ab, u, n, false, false);
	mark(&cv, DEC_AB);
	run_conv(&r, &cv, 0);
	ck_assert(rec_has(&r, "stag-invalidated"));
	ck_assert_uint_eq(r.errors, 0);
}
END_TEST

static Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_stream_reorder_overlap_wrap);
	tcase_add_test(tc, test_stream_gap);
	tcase_add_test(tc, test_stream_stale_control_segment);
	tcase_add_test(tc, test_fpdu_markers_splits);
	tcase_add_loop_test(tc, test_conv_valid_all_splits, 0, 3);
	tcase_add_test(tc, test_conv_out_of_order);
	tcase_add_test(tc, test_conv_bad_crc);
	tcase_add_test(tc, test_conv_crc_field_without_crc);
	tcase_add_test(tc, test_conv_bad_msn);
	tcase_add_test(tc, test_conv_bad_marker);
	tcase_add_test(tc, test_conv_read_response_mismatch);
	tcase_add_test(tc, test_reject_and_fin);
	tcase_add_test(tc, test_siw_terminate_and_cut);
	tcase_add_loop_test(tc, test_rst_inside_fpdu, 0, 2);
	tcase_add_test(tc, test_gap_and_not_iwarp);
	tcase_add_test(tc, test_data_before_request);
	tcase_add_test(tc, test_garbage_no_crash);
	tcase_add_test(tc, test_rfc7306_valid_all_splits);
	tcase_add_test(tc, test_conv_rdmap_ext_flag);
	tcase_add_loop_test(tc, test_rfc7306_errors, 1, 5);
	tcase_add_test(tc, test_send_invalidate_then_access);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(decode_suite)

/*
 * tests/mpa_rx_test.c: the MPA FPDU deframer, every stream replayed whole,
 * split at every byte boundary and one byte at a time; markers in every
 * position; TX -> RX round trips in bulk and direct placement mode.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "mpa/mpa_rx.h"
#include "mpa/mpa_tx.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/mem.h"

#define MAXF 512 /* FPDUs per test stream */

/* DDP-like header length: 14 tagged, 18 untagged, 46 Read Request. */
static size_t ddp_hdr_len(void *ulp, const uint8_t *first2, uint16_t len)
{
	(void)ulp;
	(void)len;
	if (first2[0] & 0x80)
		return 14;
	return (first2[1] & 0x0f) == 1 ? 46 : 18;
}

/* A ULP with headers shorter than 2 octets (0..3): clamped up to 2. */
static size_t tiny_hdr_len(void *ulp, const uint8_t *first2, uint16_t len)
{
	(void)ulp;
	(void)len;
	return first2[0] % 4u;
}

/* ---- test streams built with mpa_tx (checked byte-exact in mpa_tx_test) */

struct stream {
	bool markers, crc;
	uint64_t start;
	uint8_t *wire; /* iw_malloc'd */
	size_t wire_len;
	uint8_t *ulpdus; /* all ULPDUs back to back, iw_malloc'd */
	size_t nf;
	size_t len[MAXF];	 /* ULPDU lengths */
	uint64_t fpdu_pos[MAXF]; /* stream position of each FPDU */
};

/* Random ULPDUs of |lens|; the caller may patch st->ulpdus, then frame. */
static void stream_prep(struct stream *st, bool markers, bool crc,
			uint64_t start, const size_t *lens, size_t nf,
			uint64_t seed)
{
	size_t total = 0, wmax = 0, i;

	ck_assert_uint_le(nf, MAXF);
	memset(st, 0, sizeof(*st));
	st->markers = markers;
	st->crc = crc;
	st->start = start;
	st->nf = nf;
	for (i = 0; i < nf; i++) {
		st->len[i] = lens[i];
		total += lens[i];
		wmax += mpa_fpdu_content_len(lens[i]) +
			4 * MPA_MAX_FPDU_MARKERS;
	}
	st->ulpdus = iw_malloc(total + 1);
	st->wire = iw_malloc(wmax + 1);
	ck_assert_ptr_nonnull(st->ulpdus);
	ck_assert_ptr_nonnull(st->wire);
	iw_test_fill(st->ulpdus, total, seed);
}

/* Frame the prepared ULPDUs with mpa_tx into st->wire. */
static void stream_frame(struct stream *st)
{
	struct mpa_tx tx;
	struct mpa_tx_scratch *s = iw_malloc(sizeof(*s));
	size_t cap = MPA_TX_IOV_MAX(1, MPA_MAX_FPDU_MARKERS), cnt, i, j;
	struct iovec *iov = iw_malloc(cap * sizeof(*iov)), in;
	size_t off = 0;
	const size_t *lens = st->len;
	int rc;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(iov);
	st->wire_len = 0;
	ck_assert_int_eq(mpa_tx_init(&tx, st->markers, st->crc, st->start), 0);
	for (i = 0; i < st->nf; i++) {
		st->fpdu_pos[i] = tx.pos;
		in.iov_base = st->ulpdus + off;
		in.iov_len = lens[i];
		cnt = 0;
		rc = mpa_tx_frame(&tx, &in, 1, s, iov, cap, &cnt);
		ck_assert_int_gt(rc, 0);
		for (j = 0; j < cnt; j++) {
			memcpy(st->wire + st->wire_len, iov[j].iov_base,
			       iov[j].iov_len);
			st->wire_len += iov[j].iov_len;
		}
		off += lens[i];
	}
	iw_free(iov);
	iw_free(s);
}

static void stream_build(struct stream *st, bool markers, bool crc,
			 uint64_t start, const size_t *lens, size_t nf,
			 uint64_t seed)
{
	stream_prep(st, markers, crc, start, lens, nf, seed);
	stream_frame(st);
}

static void stream_free(struct stream *st)
{
	iw_free(st->wire);
	iw_free(st->ulpdus);
}

/* ---- a bulk-mode receiver recording what it was told */

struct coll {
	struct mpa_rx rx;
	struct mpa_rx_cfg cfg;
	const struct stream *st;
	size_t want_done; /* FPDUs expected complete */
	int want_err;	  /* expected final error, 0 for none */
	uint8_t *out;	  /* ULPDUs reassembled (size: all ULPDUs) */
	size_t out_len;
	size_t done;	  /* FPDU_DONE events */
	size_t delivered; /* out_len at the last FPDU_DONE */
	size_t hdr_seen;  /* HEADER events */
	size_t cur_hdr;	  /* header length of the current FPDU */
	size_t cur_pay;	  /* payload octets of the current FPDU so far */
	const char *bad;  /* first inconsistency found while feeding */
};

static size_t total_ulpdu(const struct stream *st)
{
	size_t i, t = 0;

	for (i = 0; i < st->nf; i++)
		t += st->len[i];
	return t;
}

/* The header length the deframer must report for FPDU |f|. */
static size_t want_hdr_len(const struct coll *c, size_t f, size_t at)
{
	const uint8_t *u = c->st->ulpdus + at;
	size_t len = c->st->len[f], n, min2 = len < 2 ? len : 2;
	uint8_t first2[2] = {0, 0};

	if (!c->cfg.hdr_len || len == 0)
		return 0;
	memcpy(first2, u, min2);
	n = c->cfg.hdr_len(NULL, first2, (uint16_t)len);
	n = n < min2 ? min2 : n;
	n = n > len ? len : n;
	return n > MPA_RX_HDR_MAX ? MPA_RX_HDR_MAX : n;
}

static size_t fpdu_offset(const struct stream *st, size_t f)
{
	size_t i, at = 0;

	for (i = 0; i < f; i++)
		at += st->len[i];
	return at;
}

static void coll_reset(void *ctx)
{
	struct coll *c = ctx;

	ck_assert_int_eq(mpa_rx_init(&c->rx, &c->cfg), 0);
	c->out_len = 0;
	c->done = 0;
	c->delivered = 0;
	c->hdr_seen = 0;
	c->cur_hdr = 0;
	c->cur_pay = 0;
	c->bad = NULL;
}

/* Account one event; returns false on an inconsistency (c->bad says). */
static bool coll_event(struct coll *c, const struct mpa_rx_event *ev)
{
	const struct stream *st = c->st;
	size_t f = c->done, at;

	switch (ev->type) {
	case MPA_RX_NEED_MORE:
		return true;
	case MPA_RX_HEADER:
		if (c->hdr_seen != c->done || f >= st->nf)
			return c->bad = "HEADER out of order", false;
		at = fpdu_offset(st, f);
		if (ev->ulpdu_len != st->len[f])
			return c->bad = "HEADER ulpdu_len", false;
		if (ev->hdr_len != want_hdr_len(c, f, at))
			return c->bad = "HEADER hdr_len", false;
		memcpy(c->out + c->out_len, ev->hdr, ev->hdr_len);
		c->out_len += ev->hdr_len;
		c->cur_hdr = ev->hdr_len;
		c->cur_pay = 0;
		c->hdr_seen++;
		return true;
	case MPA_RX_PAYLOAD:
		if (c->hdr_seen != c->done + 1)
			return c->bad = "PAYLOAD before HEADER", false;
		if (ev->data_off != c->cur_pay || ev->data_len == 0 ||
		    c->cur_hdr + c->cur_pay + ev->data_len > st->len[f] ||
		    ev->ulpdu_len != st->len[f])
			return c->bad = "PAYLOAD offset/length", false;
		memcpy(c->out + c->out_len, ev->data, ev->data_len);
		c->out_len += ev->data_len;
		c->cur_pay += ev->data_len;
		return true;
	case MPA_RX_FPDU_DONE:
		if (c->hdr_seen != c->done + 1 ||
		    c->cur_hdr + c->cur_pay != st->len[f] ||
		    ev->ulpdu_len != st->len[f])
			return c->bad = "FPDU_DONE early", false;
		c->done++;
		c->delivered = c->out_len;
		return true;
	}
	return c->bad = "bad event type", false;
}

static int coll_feed(void *ctx, const uint8_t *buf, size_t len)
{
	struct coll *c = ctx;
	struct mpa_rx_event ev;
	ssize_t n;

	while (len > 0) {
		n = mpa_rx_process(&c->rx, buf, len, &ev);
		if (n < 0)
			return (int)n;
		if ((size_t)n > len || (n == 0 && ev.type == MPA_RX_NEED_MORE))
			return c->bad = "consumed count", -EPROTO;
		if (ev.type == MPA_RX_NEED_MORE && (size_t)n != len)
			return c->bad = "NEED_MORE before the end", -EPROTO;
		if (!coll_event(c, &ev))
			return -EPROTO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void coll_check(void *ctx, int rc)
{
	struct coll *c = ctx;

	if (c->bad)
		ck_abort_msg("deframer: %s", c->bad);
	ck_assert_int_eq(rc, c->want_err);
	ck_assert_uint_eq(c->done, c->want_done);
	/* everything delivered (CRC-checked) is exactly the sent ULPDUs */
	ck_assert_uint_le(c->out_len, total_ulpdu(c->st));
	ck_assert_mem_eq(c->out, c->st->ulpdus, c->delivered);
	ck_assert_uint_eq(c->delivered, fpdu_offset(c->st, c->done));
	if (c->want_err == 0) {
		ck_assert_uint_eq(c->out_len, total_ulpdu(c->st));
		ck_assert_int_eq(mpa_rx_get_state(&c->rx), MPA_RX_GET_LEN);
		ck_assert_uint_eq(mpa_rx_stream_pos(&c->rx),
				  c->st->start + c->st->wire_len);
		if (c->st->nf > 0)
			ck_assert_uint_eq(mpa_rx_fpdu_start(&c->rx),
					  c->st->fpdu_pos[c->st->nf - 1]);
	} else {
		/* sticky: the error repeats */
		struct mpa_rx_event ev;
		uint8_t z = 0;

		ck_assert_int_eq(mpa_rx_process(&c->rx, &z, 1, &ev), rc);
	}
}

static const struct iw_test_rx_ops coll_ops = {coll_reset, coll_feed,
					       coll_check};

static void coll_init(struct coll *c, const struct stream *st,
		      mpa_rx_hdr_len_fn fn)
{
	memset(c, 0, sizeof(*c));
	c->st = st;
	c->cfg.markers = st->markers;
	c->cfg.crc = st->crc;
	c->cfg.start_pos = st->start;
	c->cfg.hdr_len = fn;
	c->want_done = st->nf;
	c->out = iw_malloc(total_ulpdu(st) + 1);
	ck_assert_ptr_nonnull(c->out);
}

/* Feed |st| (optionally |wire| instead of st->wire) with all splits. */
static void replay_splits(const struct stream *st, const uint8_t *wire,
			  size_t want_done, int want_err, uint16_t max_ulpdu)
{
	struct coll c;

	coll_init(&c, st, ddp_hdr_len);
	c.cfg.max_ulpdu = max_ulpdu;
	c.want_done = want_done;
	c.want_err = want_err;
	iw_test_feed_splits(&coll_ops, &c, wire ? wire : st->wire,
			    st->wire_len);
	iw_free(c.out);
}

/* ---- vectors */

static const uint8_t rtr_fpdu[20] = {0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00,
				     0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
				     0x00, 0x00, 0xeb, 0xd3, 0x4c, 0x5f};

/* Wrap a hand-made wire image without markers as a stream. */
static void stream_from_wire(struct stream *st, const uint8_t *wire,
			     size_t wlen, const size_t *lens, size_t nf,
			     bool crc)
{
	size_t i, w = 0, at = 0;

	memset(st, 0, sizeof(*st));
	st->crc = crc;
	st->nf = nf;
	st->wire = iw_malloc(wlen);
	st->ulpdus = iw_malloc(wlen);
	ck_assert_ptr_nonnull(st->wire);
	ck_assert_ptr_nonnull(st->ulpdus);
	memcpy(st->wire, wire, wlen);
	st->wire_len = wlen;
	for (i = 0; i < nf; i++) {
		st->len[i] = lens[i];
		st->fpdu_pos[i] = w;
		memcpy(st->ulpdus + at, wire + w + 2, lens[i]);
		at += lens[i];
		w += mpa_fpdu_content_len(lens[i]);
	}
}

START_TEST(test_rtr_vector)
{
	long mem = iw_mem_outstanding();
	static const size_t lens[3] = {14, 14, 14};
	uint8_t three[60], bad[60];
	struct stream st;

	memcpy(three, rtr_fpdu, 20);
	memcpy(three + 20, rtr_fpdu, 20);
	memcpy(three + 40, rtr_fpdu, 20);
	stream_from_wire(&st, three, 60, lens, 3, true);
	replay_splits(&st, NULL, 3, 0, 0);

	/* corrupted CRC of the 2nd FPDU: CRC error, only the 1st is done */
	memcpy(bad, three, 60);
	bad[20 + 19] ^= 0x01;
	replay_splits(&st, bad, 1, IWARP_ERR_MPA_CRC, 0);
	/* corrupted header octet (the STag) of the 3rd FPDU */
	memcpy(bad, three, 60);
	bad[40 + 7] ^= 0x80;
	replay_splits(&st, bad, 2, IWARP_ERR_MPA_CRC, 0);
	stream_free(&st);

	/* CRC off: the CRC field's value is ignored
	 * (docs/interop-notes.md §10) */
	stream_from_wire(&st, three, 60, lens, 3, false);
	memcpy(bad, three, 60);
	bad[19] = 0;
	bad[39] ^= 0xff;
	replay_splits(&st, bad, 3, 0, 0);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* Bare Terminate (ULPDU 22) and a 1-byte Send are 28 octets each. */
START_TEST(test_sizes)
{
	long mem = iw_mem_outstanding();
	static const size_t lens[2] = {22, 19};
	struct stream st;
	int mode;

	for (mode = 0; mode < 4; mode++) {
		stream_prep(&st, mode & 1, mode & 2, 0, lens, 2, 3);
		st.ulpdus[0] = 0x41; /* untagged, Terminate */
		st.ulpdus[1] = 0x47;
		st.ulpdus[22] = 0x41; /* untagged Send */
		st.ulpdus[23] = 0x43;
		stream_frame(&st);
		ck_assert_uint_eq(st.wire_len, (mode & 1) ? 60 : 56);
		replay_splits(&st, NULL, 2, 0, 0);
		stream_free(&st);
	}
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/*
 * A marker in every position, by choosing the start position and sizes.
 * |moff|: the expected offset of the (first) marker from the FPDU start
 * (where 0 means a leading marker); checked on the built stream.
 */
struct marker_case {
	const char *what;
	uint64_t start;
	size_t len[3];
	size_t nf;
	size_t fpdu; /* which FPDU holds the marker */
	size_t moff; /* marker offset from that FPDU's start */
};

static const struct marker_case marker_cases[] = {
	{"at FPDU start", 0, {14}, 1, 0, 0},
	{"at a later FPDU start", 0, {502, 30}, 2, 1, 0},
	{"in the length field", 511, {30}, 1, 0, 1},
	{"between length and ULPDU", 510, {30}, 1, 0, 2},
	{"in the DDP header", 504, {30}, 1, 0, 8},
	{"in the tagged DDP header end", 496, {30}, 1, 0, 16},
	{"in the payload", 0, {1000}, 1, 0, 512},
	{"in the pad", 490, {19}, 1, 0, 22},
	{"just before the CRC", 488, {19}, 1, 0, 24},
	{"inside the CRC", 486, {19}, 1, 0, 26},
	{"after the CRC = next FPDU start", 484, {19, 19}, 2, 1, 0},
	{"three FPDUs, markers in all", 300, {700, 1300, 5}, 3, 1, 12},
};

START_TEST(test_marker_positions)
{
	long mem = iw_mem_outstanding();
	const struct marker_case *mc = &marker_cases[_i / 2];
	bool crc = _i % 2;
	struct stream st;
	uint64_t fstart, m;

	stream_build(&st, true, crc, mc->start, mc->len, mc->nf,
		     (uint64_t)_i + 1);
	/* the case really puts a marker where it says */
	fstart = st.fpdu_pos[mc->fpdu];
	m = mc->moff ? (fstart / 512 + 1) * 512 : fstart / 512 * 512;
	ck_assert_msg(m - fstart == mc->moff, "%s: marker at +%llu", mc->what,
		      (unsigned long long)(m - fstart));
	ck_assert_uint_eq(st.wire_len,
			  mpa_fpdu_wire_len(st.fpdu_pos[st.nf - 1],
					    st.len[st.nf - 1], true) +
				  st.fpdu_pos[st.nf - 1] - st.start);
	replay_splits(&st, NULL, st.nf, 0, 0);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* Marker content errors, and the 508 convention
 * (docs/interop-notes.md §11). */
START_TEST(test_marker_errors)
{
	long mem = iw_mem_outstanding();
	static const size_t lens[2] = {1000, 40};
	struct stream st;
	uint8_t *bad;
	int crc;

	for (crc = 0; crc < 2; crc++) {
		/* FPDU0 @0: markers @0 (ptr 0), @512 (ptr 512); 1016 octets */
		stream_build(&st, true, crc, 0, lens, 2, 11);
		ck_assert_uint_eq(st.wire_len, 1016 + 52);
		ck_assert_uint_eq(iw_get_u16be(st.wire + 514), 512);
		bad = iw_malloc(st.wire_len);
		ck_assert_ptr_nonnull(bad);

		/* 508 (counted from the length field) is accepted too */
		memcpy(bad, st.wire, st.wire_len);
		iw_put_u16be(bad + 514, 508);
		if (crc)
			iw_put_u32le(bad + 1012, crc32c(bad, 1012));
		replay_splits(&st, bad, 2, 0, 0);

		/* anything else is LLP 0x03; nothing of FPDU0 completes */
		memcpy(bad, st.wire, st.wire_len);
		iw_put_u16be(bad + 514, 511);
		replay_splits(&st, bad, 0, IWARP_ERR_MPA_MARKER, 0);
		memcpy(bad, st.wire, st.wire_len);
		bad[512] = 0x80; /* reserved */
		replay_splits(&st, bad, 0, IWARP_ERR_MPA_MARKER, 0);
		memcpy(bad, st.wire, st.wire_len);
		bad[3] = 4; /* leading marker must be 0 */
		replay_splits(&st, bad, 0, IWARP_ERR_MPA_MARKER, 0);
		memcpy(bad, st.wire, st.wire_len);
		iw_put_u16be(bad + 2, 0xfffc); /* not "0 - 4" either */
		replay_splits(&st, bad, 0, IWARP_ERR_MPA_MARKER, 0);
		iw_free(bad);
		stream_free(&st);

		/* FPDU without a leading marker: 508 is not accepted */
		stream_build(&st, true, crc, 4, lens, 1, 12);
		bad = iw_malloc(st.wire_len);
		ck_assert_ptr_nonnull(bad);
		memcpy(bad, st.wire, st.wire_len);
		ck_assert_uint_eq(iw_get_u16be(bad + 508 + 2), 508);
		iw_put_u16be(bad + 508 + 2, 504);
		if (crc)
			iw_put_u32le(bad + st.wire_len - 4,
				     crc32c(bad, st.wire_len - 4));
		replay_splits(&st, bad, 0, IWARP_ERR_MPA_MARKER, 0);
		iw_free(bad);
		stream_free(&st);
	}
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* CRC error with markers: corrupt a payload octet and a marker-covered
 * CRC (flip a marker bit is a marker error, so flip the CRC itself). */
START_TEST(test_crc_errors_markers)
{
	long mem = iw_mem_outstanding();
	static const size_t lens[3] = {100, 1000, 20};
	struct stream st;
	uint8_t *bad;

	stream_build(&st, true, true, 0, lens, 3, 21);
	bad = iw_malloc(st.wire_len);
	ck_assert_ptr_nonnull(bad);
	memcpy(bad, st.wire, st.wire_len);
	bad[st.fpdu_pos[1] + 700] ^= 0x10; /* payload of FPDU1 */
	replay_splits(&st, bad, 1, IWARP_ERR_MPA_CRC, 0);
	memcpy(bad, st.wire, st.wire_len);
	bad[st.fpdu_pos[2] - 1] ^= 0x01; /* CRC of FPDU1 */
	replay_splits(&st, bad, 1, IWARP_ERR_MPA_CRC, 0);
	memcpy(bad, st.wire, st.wire_len);
	bad[st.wire_len - 7] ^= 0x01; /* last ULPDU octet (pad 2) */
	replay_splits(&st, bad, 2, IWARP_ERR_MPA_CRC, 0);
	iw_free(bad);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

START_TEST(test_ulpdu_too_long)
{
	long mem = iw_mem_outstanding();
	static const size_t lens[3] = {1000, 999, 1001};
	struct stream st;

	stream_build(&st, true, true, 0, lens, 3, 31);
	replay_splits(&st, NULL, 2, IWARP_ERR_MPA_ULPDU_LENGTH, 1000);
	replay_splits(&st, NULL, 3, 0, 1001);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* Short ULPDUs, header clamping and no header callback at all. */
START_TEST(test_short_and_headerless)
{
	long mem = iw_mem_outstanding();
	size_t lens[24], i;
	struct stream st;
	struct coll c;

	for (i = 0; i < 24; i++)
		lens[i] = i;
	stream_prep(&st, true, true, 500, lens, 24, 41);
	for (i = 0; i < 24; i++) { /* tagged, untagged, Read Request */
		if (lens[i] == 0)
			continue;
		st.ulpdus[fpdu_offset(&st, i)] = i % 3 ? 0xc1 : 0x41;
		if (lens[i] > 1)
			st.ulpdus[fpdu_offset(&st, i) + 1] =
				i % 3 == 1 ? 0x40 : 0x41;
	}
	stream_frame(&st);
	replay_splits(&st, NULL, 24, 0, 0);

	coll_init(&c, &st, NULL);
	iw_test_feed_splits(&coll_ops, &c, st.wire, st.wire_len);
	iw_free(c.out);
	coll_init(&c, &st, tiny_hdr_len);
	iw_test_feed_splits(&coll_ops, &c, st.wire, st.wire_len);
	iw_free(c.out);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

START_TEST(test_init)
{
	struct mpa_rx rx;
	struct mpa_rx_cfg cfg = {.markers = true};

	cfg.start_pos = 514;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg), -EINVAL);
	cfg.start_pos = 516;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg), 0);
	ck_assert_uint_eq(mpa_rx_stream_pos(&rx), 516);
	ck_assert_uint_eq(rx.max_ulpdu, 65535);
	/* direct placement outside a payload: nothing to lay out */
	ck_assert_int_eq(mpa_rx_payload_iov(&rx, &cfg, 1, NULL, 0), 0);
	ck_assert_int_eq(mpa_rx_commit(&rx, 0), 0);
	ck_assert_int_eq(mpa_rx_commit(&rx, 1), -EINVAL);
}
END_TEST

/* ---- long streams: whole, random chunks, one byte at a time */

static void feed_chunks(struct coll *c, const uint8_t *w, size_t len,
			uint64_t *rng, size_t maxchunk)
{
	size_t off = 0, k;
	int rc = 0;

	coll_reset(c);
	while (off < len && rc == 0) {
		k = 1 + (size_t)(iw_test_rand(rng) % maxchunk);
		if (k > len - off)
			k = len - off;
		rc = coll_feed(c, w + off, k);
		off += k;
	}
	coll_check(c, rc);
}

START_TEST(test_round_trip_many)
{
	long mem = iw_mem_outstanding();
	bool mk = _i & 1, crc = _i & 2;
	uint64_t rng = 1000 + (uint64_t)_i;
	size_t lens[MAXF], nf = 0, l;
	struct stream st;
	struct coll c;

	/* 0..299, then sizes up to 70000 clamped to the 16-bit field */
	for (l = 0; l < 300; l++)
		lens[nf++] = l;
	while (nf < 360) {
		l = (size_t)(iw_test_rand(&rng) % 70001);
		lens[nf++] = l > 65535 ? 65535 : l;
	}
	lens[nf++] = 65535;
	lens[nf++] = 0;
	stream_build(&st, mk, crc, 0, lens, nf, rng);
	coll_init(&c, &st, ddp_hdr_len);
	feed_chunks(&c, st.wire, st.wire_len, &rng, st.wire_len);
	feed_chunks(&c, st.wire, st.wire_len, &rng, 3000);
	feed_chunks(&c, st.wire, st.wire_len, &rng, 7);
	feed_chunks(&c, st.wire, st.wire_len, &rng, 1);
	/* the limit: 65535 is fine at the default, lower limits bite */
	c.cfg.max_ulpdu = 65534;
	c.want_err = IWARP_ERR_MPA_ULPDU_LENGTH;
	for (l = 0; l < nf && lens[l] <= 65534; l++)
		;
	c.want_done = l;
	feed_chunks(&c, st.wire, st.wire_len, &rng, 5000);
	iw_free(c.out);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* A few-KB stream of mixed sizes with every split. */
START_TEST(test_small_stream_splits)
{
	long mem = iw_mem_outstanding();
	static const size_t lens[] = {14, 0,   1, 2,   3,  18, 19,
				      46, 600, 5, 513, 30, 22};
	struct stream st;

	stream_build(&st, _i & 1, _i & 2, (_i & 4) ? 508 : 0, lens,
		     sizeof(lens) / sizeof(lens[0]), 51 + (uint64_t)_i);
	replay_splits(&st, NULL, st.nf, 0, 0);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* ---- direct placement */

/*
 * Drive |c| over |st| mixing bulk chunks and direct placement with random
 * sizes: the "socket" fills the laid-out iovecs from the wire, sometimes
 * short. Payload lands in c->out at its final place. Returns the final
 * return code (0 or the error).
 */
static int drive_direct(struct coll *c, const uint8_t *w, size_t wlen,
			uint64_t *rng)
{
	struct iovec iov[12];
	size_t off = 0, k, cap, dlen, total, i, fill, left;
	ssize_t placed;
	int n, rc = 0;

	coll_reset(c);
	while (off < wlen) {
		if (mpa_rx_get_state(&c->rx) == MPA_RX_GET_PAYLOAD &&
		    iw_test_rand(rng) % 3 != 0) {
			size_t f = c->done;
			size_t room = c->st->len[f] - c->cur_hdr - c->cur_pay;

			dlen = 1 + (size_t)(iw_test_rand(rng) % (room + 50));
			cap = 1 + (size_t)(iw_test_rand(rng) % 12);
			n = mpa_rx_payload_iov(&c->rx, c->out + c->out_len,
					       dlen, iov, cap);
			if (n == -ENOSPC)
				continue; /* 1 iovec and a marker comes next */
			if (n <= 0)
				return n < 0 ? n : -EPROTO;
			for (i = 0, total = 0; i < (size_t)n; i++)
				total += iov[i].iov_len;
			if (total > wlen - off)
				return -EPROTO;
			/* the socket fills a random prefix */
			fill = 1 + (size_t)(iw_test_rand(rng) % total);
			if (iw_test_rand(rng) % 2)
				fill = total;
			for (i = 0, left = fill; left > 0; i++) {
				k = iov[i].iov_len < left ? iov[i].iov_len
							  : left;
				memcpy(iov[i].iov_base, w + off, k);
				off += k;
				left -= k;
			}
			placed = mpa_rx_commit(&c->rx, fill);
			if (placed < 0)
				return (int)placed;
			if ((size_t)placed > fill ||
			    fill - (size_t)placed > 4 * (fill / 508 + 2))
				return -EPROTO;
			c->out_len += (size_t)placed;
			c->cur_pay += (size_t)placed;
			continue;
		}
		k = 1 + (size_t)(iw_test_rand(rng) % 200);
		if (k > wlen - off)
			k = wlen - off;
		rc = coll_feed(c, w + off, k);
		if (rc < 0)
			return rc;
		off += k;
	}
	return rc;
}

START_TEST(test_direct_round_trip)
{
	long mem = iw_mem_outstanding();
	bool mk = _i & 1, crc = _i & 2;
	uint64_t rng = 77 + (uint64_t)_i;
	size_t lens[200], nf = 0, l, seed;
	struct stream st;
	struct coll c;
	int rc;

	for (nf = 0; nf < 200; nf++) {
		l = (size_t)(iw_test_rand(&rng) %
			     (nf % 10 == 0 ? 65536 : 3000));
		lens[nf] = l;
	}
	stream_build(&st, mk, crc, (_i & 4) ? 256 : 0, lens, nf, rng);
	coll_init(&c, &st, ddp_hdr_len);
	for (seed = 0; seed < 30; seed++) {
		rc = drive_direct(&c, st.wire, st.wire_len, &rng);
		coll_check(&c, rc);
	}
	iw_free(c.out);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* Errors found in direct placement mode. */
START_TEST(test_direct_errors)
{
	long mem = iw_mem_outstanding();
	static const size_t lens[4] = {3000, 3000, 3000, 3000};
	uint64_t rng = 3;
	struct stream st;
	struct coll c;
	uint8_t *bad;
	size_t seed, p;
	int rc;

	stream_build(&st, true, true, 0, lens, 4, 61);
	bad = iw_malloc(st.wire_len);
	ck_assert_ptr_nonnull(bad);
	coll_init(&c, &st, ddp_hdr_len);
	for (seed = 0; seed < 40; seed++) {
		/* a payload octet of FPDU 2: CRC error, FPDUs 0-1 done */
		memcpy(bad, st.wire, st.wire_len);
		bad[st.fpdu_pos[2] + 1500] ^= 0x04;
		c.want_done = 2;
		c.want_err = IWARP_ERR_MPA_CRC;
		rc = drive_direct(&c, bad, st.wire_len, &rng);
		coll_check(&c, rc);

		/* a marker inside FPDU 1's payload: marker error */
		memcpy(bad, st.wire, st.wire_len);
		p = (size_t)(st.fpdu_pos[1] + 1023) / 512 * 512;
		p += 1024;
		bad[p + 3] ^= 0x01;
		c.want_done = 1;
		c.want_err = IWARP_ERR_MPA_MARKER;
		rc = drive_direct(&c, bad, st.wire_len, &rng);
		coll_check(&c, rc);
	}
	iw_free(c.out);
	iw_free(bad);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* Direct placement layout details: markers steered to scratch, bounds. */
START_TEST(test_direct_layout)
{
	static const size_t lens[1] = {2000};
	static uint8_t dst[2000];
	struct stream st;
	struct mpa_rx rx;
	struct mpa_rx_cfg cfg = {
		.markers = true, .crc = true, .hdr_len = ddp_hdr_len};
	struct mpa_rx_event ev;
	struct iovec iov[16];
	ssize_t n;
	size_t i, total = 0;
	int cnt;

	long mem = iw_mem_outstanding();

	stream_prep(&st, true, true, 0, lens, 1, 71);
	st.ulpdus[0] = 0xc1; /* tagged: header 14 */
	stream_frame(&st);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg), 0);
	/* leading marker + length + header = 4 + 2 + 14 */
	n = mpa_rx_process(&rx, st.wire, st.wire_len, &ev);
	ck_assert_int_eq(n, 20);
	ck_assert_int_eq(ev.type, MPA_RX_HEADER);
	ck_assert_uint_eq(ev.hdr_len, 14);
	cnt = mpa_rx_payload_iov(&rx, dst, sizeof(dst), iov, 16);
	/* payload 1986 octets from stream pos 20: markers at 512,1024,1536 */
	ck_assert_int_eq(cnt, 7);
	ck_assert_ptr_eq(iov[0].iov_base, dst);
	ck_assert_uint_eq(iov[0].iov_len, 492);
	ck_assert_uint_eq(iov[1].iov_len, 4);
	ck_assert(!((uint8_t *)iov[1].iov_base >= dst &&
		    (uint8_t *)iov[1].iov_base < dst + sizeof(dst)));
	ck_assert_ptr_eq(iov[2].iov_base, dst + 492);
	ck_assert_uint_eq(iov[2].iov_len, 508);
	for (i = 0; i < 7; i++)
		total += iov[i].iov_len;
	ck_assert_uint_eq(total, 1986 + 12);
	/* a short fill ending inside a marker, then bulk takes over */
	for (i = 0, total = 0; total < 494; i++) {
		size_t k = iov[i].iov_len < 494 - total ? iov[i].iov_len
							: 494 - total;
		memcpy(iov[i].iov_base, st.wire + 20 + total, k);
		total += k;
	}
	ck_assert_int_eq(mpa_rx_commit(&rx, 494), 492);
	ck_assert_uint_eq(mpa_rx_stream_pos(&rx), 514);
	/* layout resumes with the rest of the marker */
	cnt = mpa_rx_payload_iov(&rx, dst + 492, 10, iov, 16);
	ck_assert_int_eq(cnt, 2);
	ck_assert_uint_eq(iov[0].iov_len, 2);
	ck_assert_uint_eq(iov[1].iov_len, 10);
	/* one iovec only, and a marker comes first: no room */
	ck_assert_int_eq(mpa_rx_payload_iov(&rx, dst + 492, 10, iov, 1),
			 -ENOSPC);
	/* commit beyond the layout */
	cnt = mpa_rx_payload_iov(&rx, dst + 492, 10, iov, 16);
	ck_assert_int_eq(mpa_rx_commit(&rx, 13), -EINVAL);
	/* bulk continues from stream pos 514 */
	n = mpa_rx_process(&rx, st.wire + 514, st.wire_len - 514, &ev);
	ck_assert_int_eq(n, 2 + 508);
	ck_assert_int_eq(ev.type, MPA_RX_PAYLOAD);
	ck_assert_uint_eq(ev.data_off, 492);
	ck_assert_mem_eq(dst, st.ulpdus + 14, 492);
	stream_free(&st);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

static Suite *mpa_rx_suite(void)
{
	Suite *s = suite_create("mpa_rx");
	TCase *tc = tcase_create("core");
	size_t nmc = sizeof(marker_cases) / sizeof(marker_cases[0]);

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_rtr_vector);
	tcase_add_test(tc, test_sizes);
	tcase_add_loop_test(tc, test_marker_positions, 0, (int)(2 * nmc));
	tcase_add_test(tc, test_marker_errors);
	tcase_add_test(tc, test_crc_errors_markers);
	tcase_add_test(tc, test_ulpdu_too_long);
	tcase_add_test(tc, test_short_and_headerless);
	tcase_add_loop_test(tc, test_small_stream_splits, 0, 8);
	tcase_add_loop_test(tc, test_round_trip_many, 0, 4);
	tcase_add_loop_test(tc, test_direct_round_trip, 0, 8);
	tcase_add_test(tc, test_direct_errors);
	tcase_add_test(tc, test_direct_layout);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(mpa_rx_suite)

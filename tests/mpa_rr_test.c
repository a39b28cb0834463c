/*
 * tests/mpa_rr_test.c: MPA Request/Reply codec (RFC 5044 §7.1, RFC 6581 §5).
 * Byte vectors come from docs/interop-notes.md §6.7 and the siw probes
 * (docs/interop-notes.md §10).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "mpa/mpa_rr.h"
#include "testutil.h"

#define REQ_KEY                                                                \
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x71, 0x20,      \
		0x46, 0x72, 0x61, 0x6d, 0x65
#define REP_KEY                                                                \
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x70, 0x20,      \
		0x46, 0x72, 0x61, 0x6d, 0x65

/* siw probe "rev2-enhanced": Request with IRD/ORD 16/16 + "hello-rev2". */
static const uint8_t req_rev2_hello[] = {
	REQ_KEY, 0x10, 0x02, 0x00, 0x0e, 0x00, 0x10, 0x00, 0x10, 'h',
	'e',	 'l',  'l',  'o',  '-',	 'r',  'e',  'v',  '2',
};
/* v2 Request without ULP private data, 24 octets
 * (docs/interop-notes.md §6.7). */
static const uint8_t req_rev2_plain[] = {
	REQ_KEY, 0x10, 0x02, 0x00, 0x04, 0x00, 0x10, 0x00, 0x10,
};
/* siw replies from the probe table. */
static const uint8_t rep_rev1[] = {REP_KEY, 0x00, 0x01, 0x00, 0x00};
static const uint8_t rep_rev1_crc[] = {REP_KEY, 0x40, 0x01, 0x00, 0x00};
static const uint8_t rep_rev1_markers_rej[] = {REP_KEY, 0x20, 0x01, 0x00, 0x00};
static const uint8_t rep_rev1_crc_markers_rej[] = {REP_KEY, 0x60, 0x01, 0x00,
						   0x00};
static const uint8_t rep_ird128_ord1[] = {REP_KEY, 0x10, 0x02, 0x00, 0x04,
					  0x00,	   0x80, 0x00, 0x01};
static const uint8_t rep_p2p_write[] = {REP_KEY, 0x10, 0x02, 0x00, 0x04,
					0x80,	 0x10, 0x80, 0x10};
static const uint8_t rep_p2p_read[] = {REP_KEY, 0x10, 0x02, 0x00, 0x04,
				       0x80,	0x10, 0x40, 0x10};
static const uint8_t rep_no_h[] = {REP_KEY, 0x00, 0x02, 0x00, 0x00};
static const uint8_t rep_h_reject[] = {REP_KEY, 0x30, 0x02, 0x00, 0x00};
static const uint8_t rep_rev0[] = {REP_KEY, 0x00, 0x00, 0x00, 0x00};
static const uint8_t rep_gso[] = {REP_KEY, 0x18, 0x02, 0x00, 0x04,
				  0x00,	   0x10, 0x00, 0x10};

START_TEST(test_encode_rfc_facts_v2_request)
{
	struct mpa_rr rr = {0};
	uint8_t out[64];

	rr.kind = MPA_RR_REQUEST;
	rr.rev = MPA_REV_2;
	rr.enhanced = true;
	rr.ird = 16;
	rr.ord = 16;
	ck_assert_uint_eq(mpa_rr_encoded_len(&rr), 24);
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), 24);
	ck_assert_mem_eq(out, req_rev2_plain, sizeof(req_rev2_plain));

	rr.pdata = (const uint8_t *)"hello-rev2";
	rr.pdata_len = 10;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), 34);
	ck_assert_mem_eq(out, req_rev2_hello, sizeof(req_rev2_hello));
}
END_TEST

START_TEST(test_decode_request_enhanced)
{
	struct mpa_rr rr;

	ck_assert_int_eq(mpa_rr_decode(&rr, req_rev2_hello,
				       sizeof(req_rev2_hello),
				       MPA_RR_DECODE_STRICT),
			 34);
	ck_assert_int_eq(rr.kind, MPA_RR_REQUEST);
	ck_assert(!rr.m && !rr.c && !rr.r);
	ck_assert(rr.enhanced && rr.has_ird_ord);
	ck_assert_uint_eq(rr.rsvd, 0);
	ck_assert_uint_eq(rr.rev, 2);
	ck_assert_uint_eq(rr.pd_length, 14);
	ck_assert_uint_eq(rr.ird, 16);
	ck_assert_uint_eq(rr.ord, 16);
	ck_assert(!rr.p2p);
	ck_assert_uint_eq(rr.rtr, MPA_RTR_NONE);
	ck_assert_uint_eq(rr.pdata_len, 10);
	ck_assert_ptr_eq(rr.pdata, req_rev2_hello + 24);
	ck_assert_mem_eq(rr.pdata, "hello-rev2", 10);
}
END_TEST

/* Decode one siw reply (strict) and return it. */
static struct mpa_rr decode_ok(const uint8_t *buf, size_t len)
{
	struct mpa_rr rr;

	ck_assert_int_eq(mpa_rr_decode(&rr, buf, len, MPA_RR_DECODE_STRICT),
			 (int)len);
	ck_assert_int_eq(rr.kind, MPA_RR_REPLY);
	return rr;
}

START_TEST(test_decode_siw_replies)
{
	struct mpa_rr rr;

	rr = decode_ok(rep_rev1, sizeof(rep_rev1));
	ck_assert(!rr.m && !rr.c && !rr.r && !rr.enhanced);
	ck_assert_uint_eq(rr.rev, 1);
	ck_assert_ptr_null(rr.pdata);
	ck_assert_uint_eq(rr.pdata_len, 0);

	rr = decode_ok(rep_rev1_crc, sizeof(rep_rev1_crc));
	ck_assert(rr.c && !rr.r && !rr.m);

	rr = decode_ok(rep_rev1_markers_rej, sizeof(rep_rev1_markers_rej));
	ck_assert(rr.r && !rr.m && !rr.c);

	rr = decode_ok(rep_rev1_crc_markers_rej,
		       sizeof(rep_rev1_crc_markers_rej));
	ck_assert(rr.r && rr.c && !rr.m);

	rr = decode_ok(rep_ird128_ord1, sizeof(rep_ird128_ord1));
	ck_assert(rr.enhanced && rr.has_ird_ord && !rr.p2p);
	ck_assert_uint_eq(rr.ird, 128);
	ck_assert_uint_eq(rr.ord, 1);
	ck_assert_uint_eq(rr.pdata_len, 0);

	rr = decode_ok(rep_p2p_write, sizeof(rep_p2p_write));
	ck_assert(rr.p2p);
	ck_assert_uint_eq(rr.rtr, MPA_RTR_WRITE);
	ck_assert_uint_eq(rr.ird, 16);
	ck_assert_uint_eq(rr.ord, 16);

	rr = decode_ok(rep_p2p_read, sizeof(rep_p2p_read));
	ck_assert(rr.p2p);
	ck_assert_uint_eq(rr.rtr, MPA_RTR_READ);

	rr = decode_ok(rep_no_h, sizeof(rep_no_h));
	ck_assert(!rr.enhanced && !rr.has_ird_ord);
	ck_assert_uint_eq(rr.rev, 2);

	rr = decode_ok(rep_rev0, sizeof(rep_rev0));
	ck_assert_uint_eq(rr.rev, 0);
}
END_TEST

START_TEST(test_decode_all_control_bits)
{
	static const uint8_t f[] = {REQ_KEY, 0xd0, 0x02, 0x00, 0x07, 0xff,
				    0xff,    0xff, 0xff, 1,    2,    3};
	struct mpa_rr rr;

	ck_assert_int_eq(mpa_rr_decode(&rr, f, sizeof(f), 0), 27);
	ck_assert(rr.m && rr.c && !rr.r && rr.enhanced && rr.p2p);
	ck_assert_uint_eq(rr.rtr, MPA_RTR_ALL);
	ck_assert_uint_eq(rr.ird, 0x3fff);
	ck_assert_uint_eq(rr.ord, 0x3fff);
	ck_assert_uint_eq(rr.pdata_len, 3);
	ck_assert_uint_eq(rr.pdata[2], 3);
}
END_TEST

/* siw's GSO bit: strict says reserved, lax accepts and reports it. */
START_TEST(test_decode_gso_bit)
{
	struct mpa_rr rr;

	ck_assert_int_eq(mpa_rr_decode(&rr, rep_gso, sizeof(rep_gso),
				       MPA_RR_DECODE_STRICT),
			 IWARP_ERR_MPA_RESERVED);
	ck_assert_int_eq(
		mpa_rr_decode(&rr, rep_gso, sizeof(rep_gso), MPA_RR_DECODE_LAX),
		24);
	ck_assert_uint_eq(rr.rsvd, MPA_RR_FLAG_SIW_GSO);
	ck_assert(rr.enhanced && rr.has_ird_ord);
	ck_assert_uint_eq(rr.ird, 16);
	ck_assert_uint_eq(rr.ord, 16);
}
END_TEST

/* 0x10 is the Enhanced flag only in rev 2; reserved in rev 0/1. */
START_TEST(test_decode_0x10_in_rev1_is_reserved)
{
	static const uint8_t f[] = {REQ_KEY, 0x10, 0x01, 0x00, 0x04,
				    0x00,    0x10, 0x00, 0x10};
	struct mpa_rr rr;

	ck_assert_int_eq(mpa_rr_decode(&rr, f, sizeof(f), 0),
			 IWARP_ERR_MPA_RESERVED);
	ck_assert_int_eq(mpa_rr_decode(&rr, f, sizeof(f), MPA_RR_DECODE_LAX),
			 24);
	ck_assert(!rr.enhanced && !rr.has_ird_ord);
	ck_assert_uint_eq(rr.rsvd, 0x10);
	ck_assert_uint_eq(rr.pdata_len, 4); /* plain ULP private data */
}
END_TEST

START_TEST(test_decode_reserved_bits_each)
{
	uint8_t f[] = {REQ_KEY, 0x00, 0x02, 0x00, 0x00};
	struct mpa_rr rr;
	unsigned int bit;

	for (bit = 0x01; bit <= 0x08; bit <<= 1) {
		f[16] = (uint8_t)bit;
		f[17] = 2;
		ck_assert_int_eq(mpa_rr_decode(&rr, f, sizeof(f), 0),
				 IWARP_ERR_MPA_RESERVED);
		f[17] = 1;
		ck_assert_int_eq(mpa_rr_decode(&rr, f, sizeof(f), 0),
				 IWARP_ERR_MPA_RESERVED);
		ck_assert_int_eq(
			mpa_rr_decode(&rr, f, sizeof(f), MPA_RR_DECODE_LAX),
			20);
		ck_assert_uint_eq(rr.rsvd, bit);
	}
}
END_TEST

/* siw rejects `10 02 00 00` with `30 02 00 00` (enhanced, PD_Length 0). */
START_TEST(test_decode_siw_enhanced_reject)
{
	struct mpa_rr rr;

	ck_assert_int_eq(mpa_rr_decode(&rr, rep_h_reject, sizeof(rep_h_reject),
				       MPA_RR_DECODE_STRICT),
			 IWARP_ERR_MPA_ENHANCED_PD);
	ck_assert_int_eq(mpa_rr_decode(&rr, rep_h_reject, sizeof(rep_h_reject),
				       MPA_RR_DECODE_LAX),
			 20);
	ck_assert(rr.r && rr.enhanced && !rr.has_ird_ord);
	ck_assert_uint_eq(rr.pdata_len, 0);
}
END_TEST

START_TEST(test_decode_errors)
{
	uint8_t f[40];
	struct mpa_rr rr;
	size_t n = sizeof(req_rev2_plain);

	/* bad key: any octet of the key */
	memcpy(f, req_rev2_plain, n);
	f[0] = 'X';
	ck_assert_int_eq(mpa_rr_decode(&rr, f, n, 0), IWARP_ERR_MPA_KEY);
	ck_assert_int_eq(mpa_rr_decode(&rr, f, n, MPA_RR_DECODE_LAX),
			 IWARP_ERR_MPA_KEY);
	memcpy(f, req_rev2_plain, n);
	f[15] = 'E';
	ck_assert_int_eq(mpa_rr_decode(&rr, f, n, 0), IWARP_ERR_MPA_KEY);
	/* siw probe "bad-key" */
	memcpy(f, "MPA_ID_Bad_Frame\x00\x01\x00\x00", 20);
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, 0), IWARP_ERR_MPA_KEY);

	/* Rev > 2 (siw probe "rev3") */
	memcpy(f, rep_rev1, 20);
	f[17] = 3;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, 0), IWARP_ERR_MPA_REV);
	f[17] = 0xff;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, MPA_RR_DECODE_LAX),
			 IWARP_ERR_MPA_REV);

	/* PD_Length 513 (decidable from the header alone) */
	memcpy(f, rep_rev1, 20);
	f[18] = 0x02;
	f[19] = 0x01;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, 0), IWARP_ERR_MPA_PD_LENGTH);
	f[18] = 0xff;
	f[19] = 0xff;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, MPA_RR_DECODE_LAX),
			 IWARP_ERR_MPA_PD_LENGTH);

	/* R in a Request */
	memcpy(f, req_rev2_plain, n);
	f[16] |= MPA_RR_FLAG_R;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, n, 0), IWARP_ERR_MPA_REQ_REP);
	ck_assert_int_eq(mpa_rr_decode(&rr, f, n, MPA_RR_DECODE_LAX),
			 IWARP_ERR_MPA_REQ_REP);

	/* enhanced with PD_Length 0..3 (siw probe "rev2-H-without-ird-ord") */
	for (int pd = 0; pd < 4; pd++) {
		memcpy(f, req_rev2_plain, n);
		f[19] = (uint8_t)pd;
		ck_assert_int_eq(mpa_rr_decode(&rr, f, n, 0),
				 IWARP_ERR_MPA_ENHANCED_PD);
		ck_assert_int_eq(mpa_rr_decode(&rr, f, n, MPA_RR_DECODE_LAX),
				 IWARP_ERR_MPA_ENHANCED_PD);
	}
}
END_TEST

START_TEST(test_decode_header_errors_before_truncation)
{
	uint8_t f[20];
	struct mpa_rr rr;

	/* only the header of a frame announcing 100 octets: error wins */
	memcpy(f, req_rev2_plain, 20);
	f[19] = 100;
	f[17] = 3;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, 0), IWARP_ERR_MPA_REV);
	f[17] = 2;
	f[16] = 0x18;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, 0), IWARP_ERR_MPA_RESERVED);
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 20, MPA_RR_DECODE_LAX),
			 IWARP_ERR_TRUNCATED);
	/* a wrong first octet is a key error even before 20 octets */
	f[0] = 0;
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 1, 0), IWARP_ERR_MPA_KEY);
}
END_TEST

/* Every truncation of every valid frame is IWARP_ERR_TRUNCATED. */
START_TEST(test_decode_every_truncation)
{
	static const struct {
		const uint8_t *buf;
		size_t len;
	} v[] = {
		{req_rev2_hello, sizeof(req_rev2_hello)},
		{req_rev2_plain, sizeof(req_rev2_plain)},
		{rep_rev1, sizeof(rep_rev1)},
		{rep_p2p_read, sizeof(rep_p2p_read)},
		{rep_gso, sizeof(rep_gso)},
	};
	struct mpa_rr rr;
	size_t i, cut;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (cut = 0; cut < v[i].len; cut++) {
			ck_assert_int_eq(mpa_rr_decode(&rr, v[i].buf, cut,
						       MPA_RR_DECODE_LAX),
					 IWARP_ERR_TRUNCATED);
			if (v[i].buf != rep_gso)
				ck_assert_int_eq(
					mpa_rr_decode(&rr, v[i].buf, cut, 0),
					IWARP_ERR_TRUNCATED);
		}
		/* extra octets after the frame are not consumed */
		ck_assert_int_eq(mpa_rr_decode(&rr, v[i].buf, v[i].len,
					       MPA_RR_DECODE_LAX),
				 (int)v[i].len);
	}
}
END_TEST

START_TEST(test_decode_max_pd)
{
	uint8_t f[MPA_RR_FRAME_MAX + 8];
	struct mpa_rr rr;

	memset(f, 0xab, sizeof(f));
	memcpy(f, rep_rev1, 20);
	f[18] = 0x02; /* 512 */
	ck_assert_int_eq(mpa_rr_decode(&rr, f, sizeof(f), 0), 532);
	ck_assert_uint_eq(rr.pdata_len, 512);
	ck_assert_int_eq(mpa_rr_decode(&rr, f, 531, 0), IWARP_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_peek)
{
	uint8_t f[24];
	size_t cut;

	for (cut = 0; cut < 20; cut++)
		ck_assert_int_eq(mpa_rr_peek(req_rev2_hello, cut),
				 IWARP_ERR_TRUNCATED);
	for (cut = 20; cut <= sizeof(req_rev2_hello); cut++)
		ck_assert_int_eq(mpa_rr_peek(req_rev2_hello, cut), 34);
	ck_assert_int_eq(mpa_rr_peek(rep_rev1, 20), 20);

	memcpy(f, req_rev2_plain, sizeof(f));
	f[9] = 'x'; /* neither 'q' nor 'p' */
	ck_assert_int_eq(mpa_rr_peek(f, 9), IWARP_ERR_TRUNCATED);
	ck_assert_int_eq(mpa_rr_peek(f, 10), IWARP_ERR_MPA_KEY);
	ck_assert_int_eq(mpa_rr_peek(f, 24), IWARP_ERR_MPA_KEY);
	f[0] = 'G'; /* e.g. an HTTP client */
	ck_assert_int_eq(mpa_rr_peek(f, 1), IWARP_ERR_MPA_KEY);

	memcpy(f, req_rev2_plain, sizeof(f));
	f[18] = 0x02;
	f[19] = 0x01;
	ck_assert_int_eq(mpa_rr_peek(f, 20), IWARP_ERR_MPA_PD_LENGTH);
	f[19] = 0x00;
	ck_assert_int_eq(mpa_rr_peek(f, 20), 532);
}
END_TEST

/* Stream receiver: accumulate, peek for the length, decode when complete. */
struct rx_ctx {
	uint8_t buf[MPA_RR_FRAME_MAX];
	size_t have;
	int total;
	struct mpa_rr rr;
	int decoded;
	const uint8_t *expect;
	size_t expect_len;
};

static void rx_reset(void *arg)
{
	struct rx_ctx *c = arg;

	c->have = 0;
	c->total = 0;
	c->decoded = 0;
}

static int rx_feed(void *arg, const uint8_t *buf, size_t len)
{
	struct rx_ctx *c = arg;
	int rc;

	ck_assert_uint_le(c->have + len, sizeof(c->buf));
	memcpy(c->buf + c->have, buf, len);
	c->have += len;
	rc = mpa_rr_peek(c->buf, c->have);
	if (rc == IWARP_ERR_TRUNCATED)
		return 0;
	if (rc < 0)
		return rc;
	c->total = rc;
	if (c->have < (size_t)rc)
		return 0;
	rc = mpa_rr_decode(&c->rr, c->buf, c->have, MPA_RR_DECODE_LAX);
	if (rc > 0)
		c->decoded++;
	return rc < 0 ? rc : 0;
}

static void rx_check(void *arg, int last_rc)
{
	struct rx_ctx *c = arg;

	ck_assert_int_eq(last_rc, 0);
	ck_assert_int_eq(c->decoded, 1);
	ck_assert_int_eq(c->total, (int)c->expect_len);
	ck_assert_mem_eq(c->buf, c->expect, c->expect_len);
}

START_TEST(test_stream_splits)
{
	static const struct iw_test_rx_ops ops = {rx_reset, rx_feed, rx_check};
	static struct rx_ctx c;

	c.expect = req_rev2_hello;
	c.expect_len = sizeof(req_rev2_hello);
	iw_test_feed_splits(&ops, &c, req_rev2_hello, sizeof(req_rev2_hello));
	ck_assert_uint_eq(c.rr.pdata_len, 10);
	ck_assert_uint_eq(c.rr.ird, 16);

	c.expect = rep_rev1;
	c.expect_len = sizeof(rep_rev1);
	iw_test_feed_splits(&ops, &c, rep_rev1, sizeof(rep_rev1));
	ck_assert_uint_eq(c.rr.rev, 1);
}
END_TEST

START_TEST(test_roundtrip_all_flags)
{
	uint8_t out[MPA_RR_FRAME_MAX], pd[100];
	struct mpa_rr in, rr;
	unsigned int bits;
	int n;

	iw_test_fill(pd, sizeof(pd), 7);
	for (bits = 0; bits < 256; bits++) {
		memset(&in, 0, sizeof(in));
		in.kind = (bits & 1) ? MPA_RR_REPLY : MPA_RR_REQUEST;
		in.m = (bits & 2) != 0;
		in.c = (bits & 4) != 0;
		in.r = in.kind == MPA_RR_REPLY && (bits & 8);
		in.enhanced = (bits & 16) != 0;
		in.rev = in.enhanced ? 2 : (uint8_t)((bits >> 5) % 3);
		in.p2p = in.enhanced && (bits & 32);
		in.rtr = in.enhanced ? (uint8_t)((bits >> 5) & MPA_RTR_ALL) : 0;
		in.ird = in.enhanced ? (uint16_t)(bits * 61u & 0x3fff) : 0;
		in.ord = in.enhanced ? (uint16_t)(bits * 37u & 0x3fff) : 0;
		in.pdata = pd;
		in.pdata_len = bits % sizeof(pd);
		n = mpa_rr_encode(out, sizeof(out), &in);
		ck_assert_int_eq(n, (int)mpa_rr_encoded_len(&in));
		ck_assert_int_eq(mpa_rr_decode(&rr, out, (size_t)n, 0), n);
		ck_assert_int_eq(rr.kind, in.kind);
		ck_assert(rr.m == in.m && rr.c == in.c && rr.r == in.r);
		ck_assert(rr.enhanced == in.enhanced);
		ck_assert_uint_eq(rr.rev, in.rev);
		ck_assert(rr.p2p == in.p2p);
		ck_assert_uint_eq(rr.rtr, in.rtr);
		ck_assert_uint_eq(rr.ird, in.ird);
		ck_assert_uint_eq(rr.ord, in.ord);
		ck_assert_uint_eq(rr.pdata_len, in.pdata_len);
		if (in.pdata_len)
			ck_assert_mem_eq(rr.pdata, pd, in.pdata_len);
	}
}
END_TEST

START_TEST(test_encode_siw_frames)
{
	struct mpa_rr rr = {0};
	uint8_t out[64];

	rr.kind = MPA_RR_REPLY;
	rr.rev = 1;
	rr.r = true;
	rr.c = true;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), 20);
	ck_assert_mem_eq(out, rep_rev1_crc_markers_rej, 20);

	memset(&rr, 0, sizeof(rr));
	rr.kind = MPA_RR_REPLY;
	rr.rev = 2;
	rr.enhanced = true;
	rr.p2p = true;
	rr.rtr = MPA_RTR_READ;
	rr.ird = 16;
	rr.ord = 16;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), 24);
	ck_assert_mem_eq(out, rep_p2p_read, 24);
	/* reserved bits are written as given (to build test frames) */
	rr.p2p = false;
	rr.rtr = 0;
	rr.rsvd = MPA_RR_FLAG_SIW_GSO;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), 24);
	ck_assert_mem_eq(out, rep_gso, 24);
}
END_TEST

START_TEST(test_encode_errors)
{
	static uint8_t pd[MPA_RR_PD_MAX + 1];
	uint8_t out[MPA_RR_FRAME_MAX + 8];
	struct mpa_rr rr = {0};

	rr.kind = MPA_RR_REQUEST;
	rr.rev = 2;
	rr.enhanced = true;
	rr.pdata = pd;
	rr.pdata_len = MPA_RR_PD_MAX - 4;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr),
			 MPA_RR_FRAME_MAX);
	ck_assert_int_eq(mpa_rr_encode(out, MPA_RR_FRAME_MAX - 1, &rr),
			 -ENOSPC);
	ck_assert_int_eq(mpa_rr_encode(out, 0, &rr), -ENOSPC);
	rr.pdata_len = MPA_RR_PD_MAX - 3;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.enhanced = false;
	rr.pdata_len = MPA_RR_PD_MAX;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr),
			 MPA_RR_FRAME_MAX);
	rr.pdata_len = MPA_RR_PD_MAX + 1;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);

	memset(&rr, 0, sizeof(rr));
	rr.kind = MPA_RR_REQUEST;
	rr.rev = 1;
	rr.enhanced = true; /* enhanced needs rev 2 */
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.enhanced = false;
	rr.r = true; /* R in a Request */
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.r = false;
	rr.rsvd = 0x20; /* not a reserved bit */
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.rev = 2;
	rr.rsvd = 0x10; /* in rev 2 that is Enhanced, not reserved */
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.rsvd = 0;
	rr.enhanced = true;
	rr.ird = 0x4000;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.ird = 0;
	rr.ord = 0x4000;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.ord = 0;
	rr.rtr = 0x8;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
	rr.rtr = 0;
	rr.pdata = NULL;
	rr.pdata_len = 1;
	ck_assert_int_eq(mpa_rr_encode(out, sizeof(out), &rr), -EINVAL);
}
END_TEST

static Suite *mpa_rr_suite(void)
{
	Suite *s = suite_create("mpa_rr");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_encode_rfc_facts_v2_request);
	tcase_add_test(tc, test_decode_request_enhanced);
	tcase_add_test(tc, test_decode_siw_replies);
	tcase_add_test(tc, test_decode_all_control_bits);
	tcase_add_test(tc, test_decode_gso_bit);
	tcase_add_test(tc, test_decode_0x10_in_rev1_is_reserved);
	tcase_add_test(tc, test_decode_reserved_bits_each);
	tcase_add_test(tc, test_decode_siw_enhanced_reject);
	tcase_add_test(tc, test_decode_errors);
	tcase_add_test(tc, test_decode_header_errors_before_truncation);
	tcase_add_test(tc, test_decode_every_truncation);
	tcase_add_test(tc, test_decode_max_pd);
	tcase_add_test(tc, test_peek);
	tcase_add_test(tc, test_stream_splits);
	tcase_add_test(tc, test_roundtrip_all_flags);
	tcase_add_test(tc, test_encode_siw_frames);
	tcase_add_test(tc, test_encode_errors);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(mpa_rr_suite)

/* tests/ddp_hdr_test.c: DDP header codec, checks. */
#include "config.h"

#include <string.h>

#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "testutil.h"

static struct ddp_hdr hdr_make(bool tagged, bool last, uint8_t opcode)
{
	struct ddp_hdr h;

	memset(&h, 0, sizeof(h));
	h.tagged = tagged;
	h.last = last;
	h.dv = DDP_VERSION;
	h.rv = RDMAP_VERSION;
	h.opcode = opcode;
	return h;
}

/* docs/interop-notes.md §6.4: control words of one-segment messages */
START_TEST(test_control_words)
{
	static const struct {
		bool tagged;
		uint8_t opcode;
		uint8_t c0, c1;
	} kat[] = {
		{false, 3, 0x41, 0x43}, /* Send */
		{true, 0, 0xC1, 0x40},	/* Write */
		{false, 1, 0x41, 0x41}, /* Read Request */
		{true, 2, 0xC1, 0x42},	/* Read Response */
		{false, 7, 0x41, 0x47}, /* Terminate */
	};
	uint8_t buf[DDP_UNTAGGED_HDR_LEN];
	struct ddp_hdr h, d;
	size_t i;

	for (i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		h = hdr_make(kat[i].tagged, true, kat[i].opcode);
		ck_assert_uint_eq(ddp_hdr_encode(buf, &h),
				  ddp_hdr_len(kat[i].tagged));
		ck_assert_uint_eq(buf[0], kat[i].c0);
		ck_assert_uint_eq(buf[1], kat[i].c1);
		ck_assert_int_eq(ddp_hdr_decode(&d, buf, sizeof(buf)),
				 (int)ddp_hdr_len(kat[i].tagged));
		ck_assert(d.tagged == kat[i].tagged);
		ck_assert(d.last);
		ck_assert_uint_eq(d.dv, 1);
		ck_assert_uint_eq(d.rv, 1);
		ck_assert_uint_eq(d.opcode, kat[i].opcode);
		ck_assert_uint_eq(d.ddp_rsvd, 0);
		ck_assert_uint_eq(d.rdmap_rsv, 0);
		ck_assert_int_eq(ddp_hdr_check(&d), 0);
	}
}
END_TEST

/* docs/interop-notes.md §6.7: zero-length RDMA Write RTR, STag 1, TO 0 */
START_TEST(test_write_rtr_kat)
{
	static const uint8_t kat[DDP_TAGGED_HDR_LEN] = {
		0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	uint8_t buf[DDP_UNTAGGED_HDR_LEN];
	struct ddp_hdr h = hdr_make(true, true, 0), d;

	h.stag = 1;
	h.to = 0;
	memset(buf, 0xAA, sizeof(buf));
	ck_assert_uint_eq(ddp_hdr_encode(buf, &h), 14);
	ck_assert_mem_eq(buf, kat, sizeof(kat));
	ck_assert_uint_eq(buf[14], 0xAA); /* nothing beyond the header */

	ck_assert_int_eq(ddp_hdr_decode(&d, kat, sizeof(kat)), 14);
	ck_assert(d.tagged && d.last);
	ck_assert_uint_eq(d.stag, 1);
	ck_assert_uint_eq(d.to, 0);
	ck_assert_uint_eq(d.opcode, 0);
}
END_TEST

/* docs/interop-notes.md §6.6: bare Terminate header, QN 2, MSN 1, MO 0 */
START_TEST(test_terminate_hdr_kat)
{
	static const uint8_t kat[DDP_UNTAGGED_HDR_LEN] = {
		0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0,
	};
	uint8_t buf[DDP_UNTAGGED_HDR_LEN];
	struct ddp_hdr h = hdr_make(false, true, 7), d;

	h.qn = DDP_QN_TERMINATE;
	h.msn = 1;
	ck_assert_uint_eq(ddp_hdr_encode(buf, &h), 18);
	ck_assert_mem_eq(buf, kat, sizeof(kat));
	ck_assert_int_eq(ddp_hdr_decode(&d, kat, sizeof(kat)), 18);
	ck_assert_uint_eq(d.qn, 2);
	ck_assert_uint_eq(d.msn, 1);
	ck_assert_uint_eq(d.mo, 0);
	ck_assert_uint_eq(d.rsvdulp, 0);
}
END_TEST

/* Field placement: distinct values in every field, tagged and untagged. */
START_TEST(test_fields_kat)
{
	static const uint8_t tkat[] = {
		0x80 | 0x3C | 0x01,
		0x40 | 0x30 | 0x02,
		0x12,
		0x34,
		0x56,
		0x78,
		0x01,
		0x02,
		0x03,
		0x04,
		0x05,
		0x06,
		0x07,
		0x08,
	};
	static const uint8_t ukat[] = {
		0x40 | 0x14 | 0x02,
		0xC0 | 0x10 | 0x06,
		0xde,
		0xad,
		0xbe,
		0xef,
		0x00,
		0x00,
		0x00,
		0x01,
		0xff,
		0xff,
		0xff,
		0xfe,
		0x80,
		0x00,
		0x00,
		0x07,
	};
	uint8_t buf[DDP_UNTAGGED_HDR_LEN];
	struct ddp_hdr h, d;

	h = hdr_make(true, false, 2);
	h.ddp_rsvd = 0xF;
	h.rdmap_rsv = 3;
	h.stag = 0x12345678;
	h.to = 0x0102030405060708ull;
	ck_assert_uint_eq(ddp_hdr_encode(buf, &h), sizeof(tkat));
	ck_assert_mem_eq(buf, tkat, sizeof(tkat));
	ck_assert_int_eq(ddp_hdr_decode(&d, tkat, sizeof(tkat)), 14);
	ck_assert(d.tagged && !d.last);
	ck_assert_uint_eq(d.ddp_rsvd, 0xF);
	ck_assert_uint_eq(d.rdmap_rsv, 3);
	ck_assert_uint_eq(d.stag, 0x12345678);
	ck_assert_uint_eq(d.to, 0x0102030405060708ull);

	h = hdr_make(false, true, 6);
	h.dv = 2;
	h.rv = 3;
	h.ddp_rsvd = 5;
	h.rdmap_rsv = 1;
	h.rsvdulp = 0xdeadbeef;
	h.qn = 1;
	h.msn = 0xfffffffe;
	h.mo = 0x80000007;
	ck_assert_uint_eq(ddp_hdr_encode(buf, &h), sizeof(ukat));
	ck_assert_mem_eq(buf, ukat, sizeof(ukat));
	ck_assert_int_eq(ddp_hdr_decode(&d, ukat, sizeof(ukat)), 18);
	ck_assert(!d.tagged && d.last);
	ck_assert_uint_eq(d.dv, 2);
	ck_assert_uint_eq(d.rv, 3);
	ck_assert_uint_eq(d.ddp_rsvd, 5);
	ck_assert_uint_eq(d.rdmap_rsv, 1);
	ck_assert_uint_eq(d.opcode, 6);
	ck_assert_uint_eq(d.rsvdulp, 0xdeadbeef);
	ck_assert_uint_eq(d.qn, 1);
	ck_assert_uint_eq(d.msn, 0xfffffffe);
	ck_assert_uint_eq(d.mo, 0x80000007);
	/* untagged decode leaves the tagged fields zero and vice versa */
	ck_assert_uint_eq(d.stag, 0);
	ck_assert_uint_eq(d.to, 0);
}
END_TEST

/* Random round trips: decode(encode(h)) == h for every field. */
START_TEST(test_roundtrip_random)
{
	uint64_t seed = 42;
	uint8_t buf[DDP_UNTAGGED_HDR_LEN + 4];
	struct ddp_hdr h, d;
	int i;

	for (i = 0; i < 2000; i++) {
		uint64_t r = iw_test_rand(&seed);

		memset(&h, 0, sizeof(h));
		h.tagged = (r & 1) != 0;
		h.last = (r & 2) != 0;
		h.ddp_rsvd = (uint8_t)((r >> 2) & 0xF);
		h.dv = (uint8_t)((r >> 6) & 3);
		h.rv = (uint8_t)((r >> 8) & 3);
		h.rdmap_rsv = (uint8_t)((r >> 10) & 3);
		h.opcode = (uint8_t)((r >> 12) & 0xF);
		r = iw_test_rand(&seed);
		if (h.tagged) {
			h.stag = (uint32_t)r;
			h.to = iw_test_rand(&seed);
		} else {
			h.rsvdulp = (uint32_t)r;
			h.qn = (uint32_t)(r >> 32);
			r = iw_test_rand(&seed);
			h.msn = (uint32_t)r;
			h.mo = (uint32_t)(r >> 32);
		}
		ck_assert_uint_eq(ddp_hdr_encode(buf, &h),
				  ddp_hdr_len(h.tagged));
		ck_assert_int_eq(ddp_hdr_decode(&d, buf, sizeof(buf)),
				 (int)ddp_hdr_len(h.tagged));
		ck_assert(d.tagged == h.tagged && d.last == h.last);
		ck_assert_uint_eq(d.ddp_rsvd, h.ddp_rsvd);
		ck_assert_uint_eq(d.dv, h.dv);
		ck_assert_uint_eq(d.rv, h.rv);
		ck_assert_uint_eq(d.rdmap_rsv, h.rdmap_rsv);
		ck_assert_uint_eq(d.opcode, h.opcode);
		ck_assert_uint_eq(d.stag, h.stag);
		ck_assert_uint_eq(d.to, h.to);
		ck_assert_uint_eq(d.rsvdulp, h.rsvdulp);
		ck_assert_uint_eq(d.qn, h.qn);
		ck_assert_uint_eq(d.msn, h.msn);
		ck_assert_uint_eq(d.mo, h.mo);
	}
}
END_TEST

/* Every truncation of a tagged and an untagged header. */
START_TEST(test_truncated)
{
	uint8_t buf[DDP_UNTAGGED_HDR_LEN];
	struct ddp_hdr h, d;
	size_t n;
	int t;

	for (t = 0; t < 2; t++) {
		h = hdr_make(t != 0, true, 3);
		h.msn = 1;
		ck_assert_uint_eq(ddp_hdr_encode(buf, &h), ddp_hdr_len(t != 0));
		for (n = 0; n < ddp_hdr_len(t != 0); n++)
			ck_assert_int_eq(ddp_hdr_decode(&d, buf, n),
					 IWARP_ERR_TRUNCATED);
		ck_assert_int_eq(ddp_hdr_decode(&d, buf, n), (int)n);
	}
}
END_TEST

/* Stream-style replay: accumulate bytes, decode until not truncated. */
struct acc {
	uint8_t buf[64];
	size_t n;
	int rc;
	const struct ddp_hdr *want;
};

static void acc_reset(void *ctx)
{
	struct acc *a = ctx;

	a->n = 0;
	a->rc = IWARP_ERR_TRUNCATED;
}

static int acc_feed(void *ctx, const uint8_t *buf, size_t len)
{
	struct acc *a = ctx;
	struct ddp_hdr d;

	memcpy(a->buf + a->n, buf, len);
	a->n += len;
	a->rc = ddp_hdr_decode(&d, a->buf, a->n);
	if (a->rc > 0) {
		ck_assert_uint_eq(d.stag, a->want->stag);
		ck_assert_uint_eq(d.to, a->want->to);
		ck_assert_uint_eq(d.msn, a->want->msn);
		ck_assert_uint_eq(d.mo, a->want->mo);
	} else {
		ck_assert_uint_lt(a->n, ddp_hdr_len((a->buf[0] & 0x80) != 0));
	}
	return 0;
}

static void acc_check(void *ctx, int last_rc)
{
	struct acc *a = ctx;

	ck_assert_int_eq(last_rc, 0);
	ck_assert_int_eq(a->rc, (int)a->n);
}

START_TEST(test_splits)
{
	static const struct iw_test_rx_ops ops = {acc_reset, acc_feed,
						  acc_check};
	uint8_t buf[DDP_UNTAGGED_HDR_LEN];
	struct ddp_hdr h;
	struct acc a;
	size_t n;

	h = hdr_make(false, false, 3);
	h.msn = 77;
	h.mo = 1234;
	n = ddp_hdr_encode(buf, &h);
	a.want = &h;
	iw_test_feed_splits(&ops, &a, buf, n);

	h = hdr_make(true, false, 0);
	h.stag = 0xabcdef01;
	h.to = 0x1122334455667788ull;
	n = ddp_hdr_encode(buf, &h);
	iw_test_feed_splits(&ops, &a, buf, n);
}
END_TEST

/* DV != 1 -> the buffer model's version error (RFC 5041 §7). */
START_TEST(test_check_version)
{
	struct ddp_hdr h;
	uint8_t dv;

	for (dv = 0; dv < 4; dv++) {
		h = hdr_make(true, true, 0);
		h.dv = dv;
		ck_assert_int_eq(ddp_hdr_check(&h),
				 dv == 1 ? 0 : IWARP_ERR_DDP_TAGGED_VERSION);
		h.tagged = false;
		ck_assert_int_eq(ddp_hdr_check(&h),
				 dv == 1 ? 0 : IWARP_ERR_DDP_UNTAGGED_VERSION);
	}
}
END_TEST

/* Reserved bits are not checked on receive (RFC 5041 §4.2), nor are the
 * RDMAP octet's fields (RDMAP's job). */
START_TEST(test_check_reserved_ignored)
{
	static const uint8_t w[] = {0xFD, 0x30, 0, 0, 0, 1, 0,
				    0,	  0,	0, 0, 0, 0, 0};
	struct ddp_hdr d;

	ck_assert_int_eq(ddp_hdr_decode(&d, w, sizeof(w)), 14);
	ck_assert_uint_eq(d.ddp_rsvd, 0xF);
	ck_assert_uint_eq(d.rv, 0);
	ck_assert_int_eq(ddp_hdr_check(&d), 0);
}
END_TEST

static Suite *ddp_hdr_suite(void)
{
	Suite *s = suite_create("ddp_hdr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_control_words);
	tcase_add_test(tc, test_write_rtr_kat);
	tcase_add_test(tc, test_terminate_hdr_kat);
	tcase_add_test(tc, test_fields_kat);
	tcase_add_test(tc, test_roundtrip_random);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_splits);
	tcase_add_test(tc, test_check_version);
	tcase_add_test(tc, test_check_reserved_ignored);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(ddp_hdr_suite)

/* tests/rdmap_term_test.c: Terminate codec (RFC 5040 §4.8). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "rdmap/rdmap_rreq.h"
#include "rdmap/rdmap_term.h"
#include "testutil.h"

/* The untagged DDP header of a Terminate on QN 2, MSN |m| (one octet). */
#define TERM_DDP(m)                                                            \
	0x41, 0x47, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,      \
		0x00, 0x00, (m), 0x00, 0x00, 0x00, 0x00

/* Bare Terminate, ulplen 22, qn 2 msn 1 mo 0, hdrct 00
 * (docs/interop-notes.md §6.7). */
static const uint8_t bare_crc[] = {
	TERM_DDP(1), 0x20, 0x02, 0x00, 0x00, /* LLP / MPA / CRC error */
};

/*
 * siw's real TERMINATE for a CRC error (docs/interop-notes.md §10,
 * tests/data/mpa-lo.pcapng frame 269): nibble-swapped control word.
 */
static const uint8_t siw_crc[] = {
	TERM_DDP(1), 0x02, 0x02, 0x00, 0x00,
};

/* An offending Write header (tagged, STag 9, TO 0x1000). */
static const uint8_t write_hdr[DDP_TAGGED_HDR_LEN] = {
	0xc1, 0x40, 0x00, 0x00, 0x00, 0x09, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
};

/* DDP/tagged/invalid STag with M, D and the Write header (checked in tshark).
 */
static const uint8_t term_tagged[] = {
	TERM_DDP(2), 0x11, 0x00, 0xc0, 0x00, 0x00, 0x72, 0xc1, 0x40, 0x00, 0x00,
	0x00,	     0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
};

/* A Read Request: MSN 5, sink 0x11223344/0x1000, 64 octets, src
 * 0x55667788/0x2000. */
static const uint8_t rreq[RDMAP_RREQ_MSG_LEN] = {
	0x41, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x40, 0x55, 0x66,
	0x77, 0x88, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,
};

static struct rdmap_term term_make(uint8_t layer, uint8_t etype, uint8_t ecode)
{
	struct rdmap_term t;

	memset(&t, 0, sizeof(t));
	t.cause.layer = layer;
	t.cause.etype = etype;
	t.cause.ecode = ecode;
	return t;
}

static void term_assert_eq(const struct rdmap_term *a,
			   const struct rdmap_term *b)
{
	ck_assert_uint_eq(a->cause.layer, b->cause.layer);
	ck_assert_uint_eq(a->cause.etype, b->cause.etype);
	ck_assert_uint_eq(a->cause.ecode, b->cause.ecode);
	ck_assert(a->m == b->m);
	ck_assert(a->d == b->d);
	ck_assert(a->r == b->r);
	if (a->m)
		ck_assert_uint_eq(a->ddp_seg_len, b->ddp_seg_len);
	if (a->d) {
		ck_assert_uint_eq(a->ddp_hdr_len, b->ddp_hdr_len);
		ck_assert_mem_eq(a->ddp_hdr, b->ddp_hdr, a->ddp_hdr_len);
	}
	if (a->r)
		ck_assert_mem_eq(a->rdmap_hdr, b->rdmap_hdr,
				 RDMAP_RREQ_HDR_LEN);
}

START_TEST(test_bare_kat)
{
	struct rdmap_term t = term_make(IWARP_TERM_LAYER_LLP,
					IWARP_LLP_ETYPE_MPA,
					IWARP_LLP_ECODE_CRC),
			  d;
	struct ddp_hdr h;
	uint8_t buf[RDMAP_TERM_MAX_LEN];

	ck_assert_uint_eq(rdmap_term_len(&t), 22);
	memset(buf, 0xEE, sizeof(buf));
	ck_assert_int_eq(rdmap_term_encode(buf, sizeof(buf), 1, &t), 22);
	ck_assert_mem_eq(buf, bare_crc, sizeof(bare_crc));
	ck_assert_uint_eq(buf[22], 0xEE);

	memset(&d, 0xA5, sizeof(d));
	ck_assert_int_eq(rdmap_term_decode(&d, &h, bare_crc, sizeof(bare_crc)),
			 22);
	term_assert_eq(&d, &t);
	ck_assert(!d.siw_nibble_swapped);
	ck_assert_uint_eq(d.rsvd, 0);
	ck_assert(!h.tagged && h.last);
	ck_assert_uint_eq(h.qn, 2);
	ck_assert_uint_eq(h.msn, 1);
	ck_assert_uint_eq(h.mo, 0);
	ck_assert_uint_eq(h.opcode, 7);
	/* exact capacity works, one less does not */
	ck_assert_int_eq(rdmap_term_encode(buf, 22, 1, &t), 22);
	ck_assert_int_eq(rdmap_term_encode(buf, 21, 1, &t), -ENOSPC);
}
END_TEST

START_TEST(test_siw_real_terminate)
{
	struct rdmap_term d;

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, siw_crc, sizeof(siw_crc)),
			 22);
	ck_assert(d.siw_nibble_swapped);
	ck_assert_uint_eq(d.cause.layer, IWARP_TERM_LAYER_LLP);
	ck_assert_uint_eq(d.cause.etype, IWARP_LLP_ETYPE_MPA);
	ck_assert_uint_eq(d.cause.ecode, IWARP_LLP_ECODE_CRC);
	ck_assert(!d.m && !d.d && !d.r);
	ck_assert_str_eq(iwarp_term_strerror(d.cause.layer, d.cause.etype,
					     d.cause.ecode),
			 "LLP/MPA: CRC error");
	/* what an RFC reader (and Wireshark) sees instead */
	rdmap_term_ctrl_decode(&d, siw_crc + DDP_UNTAGGED_HDR_LEN, false);
	ck_assert_uint_eq(d.cause.layer, 0);
	ck_assert_uint_eq(d.cause.etype, 2);
	ck_assert_uint_eq(d.cause.ecode, 2);
	ck_assert(!rdmap_term_cause_valid(0, 2, 2));
}
END_TEST

/* siw-style Terminates with headers: M/D/R in the low bits of octet 2. */
START_TEST(test_siw_swapped_with_headers)
{
	uint8_t buf[RDMAP_TERM_MAX_LEN];
	struct rdmap_term d;
	size_t n;

	/* RDMAP / RemoteOp / unexpected opcode, M+D, untagged Send header */
	memcpy(buf, bare_crc, DDP_UNTAGGED_HDR_LEN);
	n = DDP_UNTAGGED_HDR_LEN;
	buf[n++] = 0x20; /* etype 2 << 4 | layer 0 */
	buf[n++] = 0x06;
	buf[n++] = 0x03; /* M | D */
	buf[n++] = 0x00;
	buf[n++] = 0x00;
	buf[n++] = 0x30; /* segment length 48 */
	memcpy(buf + n, rreq, DDP_UNTAGGED_HDR_LEN);
	buf[n + 1] = 0x43; /* a Send */
	n += DDP_UNTAGGED_HDR_LEN;
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, n), (int)n);
	ck_assert(d.siw_nibble_swapped);
	ck_assert_uint_eq(d.cause.layer, IWARP_TERM_LAYER_RDMAP);
	ck_assert_uint_eq(d.cause.etype, IWARP_RDMAP_ETYPE_REMOTE_OPERATION);
	ck_assert_uint_eq(d.cause.ecode, IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE);
	ck_assert(d.m && d.d && !d.r);
	ck_assert_uint_eq(d.ddp_seg_len, 48);
	ck_assert_uint_eq(d.ddp_hdr_len, 18);
	ck_assert_uint_eq(d.ddp_hdr[1], 0x43);

	/* RDMAP / RemoteProt / access rights on a Read Request, M+D+R */
	memcpy(buf, bare_crc, DDP_UNTAGGED_HDR_LEN);
	n = DDP_UNTAGGED_HDR_LEN;
	buf[n++] = 0x10;
	buf[n++] = 0x02;
	buf[n++] = 0x07;
	buf[n++] = 0x00;
	buf[n++] = 0x00;
	buf[n++] = 0x2e;
	memcpy(buf + n, rreq, sizeof(rreq));
	n += sizeof(rreq);
	ck_assert_uint_eq(n, RDMAP_TERM_MAX_LEN);
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, n), (int)n);
	ck_assert(d.siw_nibble_swapped);
	ck_assert_uint_eq(d.cause.layer, 0);
	ck_assert_uint_eq(d.cause.etype, 1);
	ck_assert_uint_eq(d.cause.ecode, 2);
	ck_assert(d.m && d.d && d.r);
	ck_assert_mem_eq(d.ddp_hdr, rreq, DDP_UNTAGGED_HDR_LEN);
	ck_assert_mem_eq(d.rdmap_hdr, rreq + DDP_UNTAGGED_HDR_LEN,
			 RDMAP_RREQ_HDR_LEN);

	/* siw DDP / untagged / MSN range, bare: RFC reads LLP/1/3 */
	memcpy(buf, siw_crc, sizeof(siw_crc));
	buf[18] = 0x21;
	buf[19] = 0x03;
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, 22), 22);
	ck_assert(d.siw_nibble_swapped);
	ck_assert_uint_eq(d.cause.layer, IWARP_TERM_LAYER_DDP);
	ck_assert_uint_eq(d.cause.etype, IWARP_DDP_ETYPE_UNTAGGED_BUFFER);
	ck_assert_uint_eq(d.cause.ecode, IWARP_DDP_ECODE_UT_INVALID_MSN_RANGE);
}
END_TEST

START_TEST(test_ambiguous_and_unknown)
{
	uint8_t buf[22];
	struct rdmap_term d;

	/* valid both ways: the RFC reading wins */
	memcpy(buf, bare_crc, sizeof(buf));
	buf[18] = 0x20;
	buf[19] = 0x06;
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, 22), 22);
	ck_assert(!d.siw_nibble_swapped);
	ck_assert_uint_eq(d.cause.layer, IWARP_TERM_LAYER_LLP);
	ck_assert_uint_eq(d.cause.ecode, IWARP_LLP_ECODE_INSUFFICIENT_IRD);

	/* valid neither way: well formed, cause returned as is */
	buf[18] = 0x30;
	buf[19] = 0x00;
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, 22), 22);
	ck_assert(!d.siw_nibble_swapped);
	ck_assert_uint_eq(d.cause.layer, 3);
	ck_assert(!rdmap_term_cause_valid(d.cause.layer, d.cause.etype,
					  d.cause.ecode));

	/* reserved bits are reported, not refused (RFC 5040 §4.8) */
	memcpy(buf, bare_crc, sizeof(buf));
	buf[20] = 0x1F;
	buf[21] = 0xFF;
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, 22), 22);
	ck_assert(!d.siw_nibble_swapped);
	ck_assert_uint_eq(d.rsvd, 0x1FFF);
	ck_assert_uint_eq(d.cause.ecode, IWARP_LLP_ECODE_CRC);

	/* M without D: nothing follows, M reported */
	memcpy(buf, bare_crc, sizeof(buf));
	buf[20] = 0x80;
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, 22), 22);
	ck_assert(d.m && !d.d && !d.r);
}
END_TEST

START_TEST(test_tagged_header_kat)
{
	struct rdmap_term t = term_make(IWARP_TERM_LAYER_DDP,
					IWARP_DDP_ETYPE_TAGGED_BUFFER,
					IWARP_DDP_ECODE_T_INVALID_STAG),
			  d;
	uint8_t buf[RDMAP_TERM_MAX_LEN];

	ck_assert_int_eq(rdmap_term_attach(&t, write_hdr, sizeof(write_hdr),
					   14 + 100, false),
			 0);
	ck_assert(t.m && t.d && !t.r);
	ck_assert_uint_eq(t.ddp_hdr_len, 14);
	ck_assert_uint_eq(rdmap_term_len(&t), sizeof(term_tagged));
	ck_assert_int_eq(rdmap_term_encode(buf, sizeof(buf), 2, &t),
			 (int)sizeof(term_tagged));
	ck_assert_mem_eq(buf, term_tagged, sizeof(term_tagged));
	ck_assert_int_eq(
		rdmap_term_decode(&d, NULL, term_tagged, sizeof(term_tagged)),
		(int)sizeof(term_tagged));
	ck_assert(!d.siw_nibble_swapped);
	term_assert_eq(&d, &t);
	ck_assert_uint_eq(d.ddp_seg_len, 114);
}
END_TEST

START_TEST(test_untagged_and_rreq_round_trip)
{
	static const struct iwarp_term_cause causes[] = {
		{1, 2, 0x01}, {1, 2, 0x03}, {1, 2, 0x06},
		{0, 1, 0x00}, {0, 1, 0x02}, {0, 2, 0x07},
	};
	uint8_t buf[RDMAP_TERM_MAX_LEN];
	struct rdmap_term t, d;
	struct ddp_hdr h;
	size_t i;
	int with_r, m;

	for (i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		for (with_r = 0; with_r < 2; with_r++) {
			for (m = 0; m < 2; m++) {
				t = term_make(causes[i].layer, causes[i].etype,
					      causes[i].ecode);
				ck_assert_int_eq(rdmap_term_attach(&t, rreq,
								   sizeof(rreq),
								   m ? 46 : -1,
								   with_r != 0),
						 0);
				ck_assert_uint_eq(rdmap_term_len(&t),
						  with_r ? 70u : 42u);
				ck_assert_int_eq(rdmap_term_encode(buf,
								   sizeof(buf),
								   7, &t),
						 with_r ? 70 : 42);
				/* the optional part on the wire */
				ck_assert_uint_eq(buf[22], 0x00);
				ck_assert_uint_eq(buf[23], m ? 46 : 0);
				ck_assert_mem_eq(buf + 24, rreq,
						 with_r ? 46u : 18u);
				ck_assert_uint_eq(buf[20],
						  (m ? 0x80 : 0) | 0x40 |
							  (with_r ? 0x20 : 0));
				ck_assert_int_eq(
					rdmap_term_decode(&d, &h, buf,
							  rdmap_term_len(&t)),
					(int)rdmap_term_len(&t));
				ck_assert(!d.siw_nibble_swapped);
				ck_assert_uint_eq(h.msn, 7);
				term_assert_eq(&d, &t);
			}
		}
	}
}
END_TEST

START_TEST(test_r_without_d)
{
	struct rdmap_term t = term_make(0, 1, 0), d;
	uint8_t buf[RDMAP_TERM_MAX_LEN];

	t.r = true;
	memcpy(t.rdmap_hdr, rreq + DDP_UNTAGGED_HDR_LEN, RDMAP_RREQ_HDR_LEN);
	ck_assert_int_eq(rdmap_term_encode(buf, sizeof(buf), 1, &t), 50);
	ck_assert_mem_eq(buf + 22, rreq + 18, RDMAP_RREQ_HDR_LEN);
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, 50), 50);
	term_assert_eq(&d, &t);
}
END_TEST

START_TEST(test_encode_errors)
{
	struct rdmap_term t = term_make(2, 0, 2);
	uint8_t buf[RDMAP_TERM_MAX_LEN];

	t.m = true; /* M without D */
	ck_assert_int_eq(rdmap_term_encode(buf, sizeof(buf), 1, &t), -EINVAL);
	t = term_make(16, 0, 2);
	ck_assert_int_eq(rdmap_term_encode(buf, sizeof(buf), 1, &t), -EINVAL);
	t = term_make(2, 16, 2);
	ck_assert_int_eq(rdmap_term_encode(buf, sizeof(buf), 1, &t), -EINVAL);
	/* D with a length that disagrees with the header's T bit */
	t = term_make(1, 1, 0);
	ck_assert_int_eq(rdmap_term_attach(&t, write_hdr, 14, 14, false), 0);
	t.ddp_hdr_len = 18;
	ck_assert_int_eq(rdmap_term_encode(buf, sizeof(buf), 1, &t), -EINVAL);
	t.ddp_hdr_len = 14;
	ck_assert_int_eq(rdmap_term_encode(buf, 37, 1, &t), -ENOSPC);
	ck_assert_int_eq(rdmap_term_encode(buf, 38, 1, &t), 38);
}
END_TEST

START_TEST(test_attach_errors)
{
	struct rdmap_term t = term_make(1, 1, 0);
	size_t n;

	ck_assert_int_eq(rdmap_term_attach(&t, write_hdr, 14, 65536, false),
			 -EINVAL);
	ck_assert_int_eq(rdmap_term_attach(&t, write_hdr, 14, 65535, false), 0);
	ck_assert_uint_eq(t.ddp_seg_len, 65535);
	ck_assert_int_eq(rdmap_term_attach(&t, write_hdr, 14, 14, true),
			 -EINVAL);
	for (n = 0; n < 14; n++)
		ck_assert_int_eq(rdmap_term_attach(&t, write_hdr, n, 14, false),
				 IWARP_ERR_TRUNCATED);
	for (n = 1; n < 46; n++)
		ck_assert_int_eq(rdmap_term_attach(&t, rreq, n, 46, n >= 18),
				 IWARP_ERR_TRUNCATED);
	ck_assert_int_eq(rdmap_term_attach(&t, rreq, 18, 46, false), 0);
	ck_assert(!t.r);
}
END_TEST

/* Every truncation and every extension of every well-formed Terminate. */
START_TEST(test_truncations)
{
	struct rdmap_term t = term_make(0, 2, 7), d;
	uint8_t full[RDMAP_TERM_MAX_LEN + 8];
	const uint8_t *msgs[3] = {bare_crc, term_tagged, full};
	size_t lens[3] = {sizeof(bare_crc), sizeof(term_tagged), 0};
	size_t i, n;
	int rc;

	ck_assert_int_eq(rdmap_term_attach(&t, rreq, sizeof(rreq), 46, true),
			 0);
	rc = rdmap_term_encode(full, sizeof(full), 1, &t);
	ck_assert_int_eq(rc, 70);
	lens[2] = 70;
	memset(full + 70, 0, 8);
	for (i = 0; i < 3; i++) {
		for (n = 0; n < lens[i]; n++)
			ck_assert_int_eq(
				rdmap_term_decode(&d, NULL, msgs[i], n),
				IWARP_ERR_RDMAP_TERMINATE);
		ck_assert_int_eq(rdmap_term_decode(&d, NULL, msgs[i], lens[i]),
				 (int)lens[i]);
	}
	for (n = 71; n <= sizeof(full); n++)
		ck_assert_int_eq(rdmap_term_decode(&d, NULL, full, n),
				 IWARP_ERR_RDMAP_TERMINATE);
}
END_TEST

START_TEST(test_bad_ddp_header)
{
	uint8_t buf[22];
	struct rdmap_term d;
	static const struct {
		size_t off;
		uint8_t val;
	} bad[] = {
		{0, 0xC1},  /* tagged */
		{0, 0x01},  /* L = 0 */
		{1, 0x43},  /* a Send */
		{1, 0x87},  /* RDMAP version 2 */
		{9, 0x00},  /* QN 0 */
		{9, 0x01},  /* QN 1 */
		{17, 0x01}, /* MO 1 */
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(buf, bare_crc, sizeof(buf));
		buf[bad[i].off] = bad[i].val;
		ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, sizeof(buf)),
				 IWARP_ERR_RDMAP_TERMINATE);
	}
	/* the MSN is the caller's to check */
	memcpy(buf, bare_crc, sizeof(buf));
	buf[13] = 9;
	ck_assert_int_eq(rdmap_term_decode(&d, NULL, buf, sizeof(buf)), 22);
}
END_TEST

/* The validity function and iwarp_term_strerror agree on all 4096 triples. */
START_TEST(test_cause_valid_table)
{
	unsigned int layer, etype, ecode, count = 0;

	for (layer = 0; layer < 16; layer++)
		for (etype = 0; etype < 16; etype++)
			for (ecode = 0; ecode < 256; ecode++) {
				bool v = rdmap_term_cause_valid((uint8_t)layer,
								(uint8_t)etype,
								(uint8_t)ecode);
				const char *s = iwarp_term_strerror(
					(uint8_t)layer, (uint8_t)etype,
					(uint8_t)ecode);

				ck_assert_ptr_nonnull(s);
				ck_assert(v == (strncmp(s, "unknown", 7) != 0));
				count += v;
			}
	/* RDMAP 1 + 7 + 6, DDP 1 + 5 + 6, LLP 7 */
	ck_assert_uint_eq(count, 33);
	ck_assert(rdmap_term_cause_valid(0, 1, 0xFF));
	ck_assert(rdmap_term_cause_valid(0, 2, 0x09));
	ck_assert(!rdmap_term_cause_valid(0, 1, 0x05));
	ck_assert(!rdmap_term_cause_valid(1, 2, 0x00));
	ck_assert(!rdmap_term_cause_valid(1, 3, 0x00));
	ck_assert(!rdmap_term_cause_valid(2, 0, 0x00));
	ck_assert(!rdmap_term_cause_valid(2, 0, 0x08));
}
END_TEST

static Suite *rdmap_term_suite(void)
{
	Suite *s = suite_create("rdmap_term");
	TCase *tc = tcase_create("term");

	tcase_add_test(tc, test_bare_kat);
	tcase_add_test(tc, test_siw_real_terminate);
	tcase_add_test(tc, test_siw_swapped_with_headers);
	tcase_add_test(tc, test_ambiguous_and_unknown);
	tcase_add_test(tc, test_tagged_header_kat);
	tcase_add_test(tc, test_untagged_and_rreq_round_trip);
	tcase_add_test(tc, test_r_without_d);
	tcase_add_test(tc, test_encode_errors);
	tcase_add_test(tc, test_attach_errors);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_bad_ddp_header);
	tcase_add_test(tc, test_cause_valid_table);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(rdmap_term_suite)

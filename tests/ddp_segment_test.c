/* tests/ddp_segment_test.c: DDP TX MSN allocation and segmentation. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddp/ddp_segment.h"
#include "iwarp/iwarp.h"
#include "testutil.h"
#include "util/mem.h"

START_TEST(test_msn_alloc)
{
	struct ddp_tx_queues q;
	uint32_t msn = 0;
	int i;

	ddp_tx_queues_init(&q);
	for (i = 1; i <= 3; i++) {
		ck_assert_int_eq(ddp_tx_msn_alloc(&q, DDP_QN_SEND, &msn), 0);
		ck_assert_uint_eq(msn, (uint32_t)i);
	}
	/* queues are independent, each starts at 1 (RFC 5041 §5.3) */
	ck_assert_int_eq(ddp_tx_msn_alloc(&q, DDP_QN_READ_REQUEST, &msn), 0);
	ck_assert_uint_eq(msn, 1);
	ck_assert_int_eq(ddp_tx_msn_alloc(&q, DDP_QN_TERMINATE, &msn), 0);
	ck_assert_uint_eq(msn, 1);
	ck_assert_int_eq(ddp_tx_msn_alloc(&q, DDP_QN_SEND, &msn), 0);
	ck_assert_uint_eq(msn, 4);
	msn = 99;
	ck_assert_int_eq(ddp_tx_msn_alloc(&q, 5, &msn), IWARP_ERR_DDP_QN);
	ck_assert_int_eq(ddp_tx_msn_alloc(&q, UINT32_MAX, &msn),
			 IWARP_ERR_DDP_QN);
	ck_assert_uint_eq(msn, 99);
	/* modulo 2^32 */
	q.next_msn[1] = UINT32_MAX;
	ck_assert_int_eq(ddp_tx_msn_alloc(&q, 1, &msn), 0);
	ck_assert_uint_eq(msn, UINT32_MAX);
	ck_assert_int_eq(ddp_tx_msn_alloc(&q, 1, &msn), 0);
	ck_assert_uint_eq(msn, 0);
}
END_TEST

/*
 * Assertions for the hot loops: Check's ck_assert_* report every passing
 * check to the parent process, which makes millions of them slow.
 */
#define HOT(c)                                                                 \
	do {                                                                   \
		if (!(c))                                                      \
			ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);     \
	} while (0)
#define HOT_EQ(a, b) HOT((a) == (b))
#define HOT_LE(a, b) HOT((a) <= (b))
#define HOT_LT(a, b) HOT((a) < (b))

/* MULPDU source for one run: fixed, or varying per call. */
struct mulpdu_src {
	size_t fixed;  /* 0: varying */
	size_t lo, hi; /* varying range [lo, hi] */
	uint64_t seed;
};

static size_t mulpdu_next(struct mulpdu_src *m)
{
	if (m->fixed)
		return m->fixed;
	return m->lo + (size_t)(iw_test_rand(&m->seed) % (m->hi - m->lo + 1));
}

/*
 * Segments a message and checks every invariant; reassembles the payload
 * at the offsets given and compares it with the message.
 */
static void seg_run(bool tagged, uint32_t len, struct mulpdu_src *m)
{
	const uint32_t stag = 0x00abcd17, rsvdulp = 0x55667788, msn = 7;
	const uint64_t to0 = 0x7fff0000ffff0001ull;
	const uint8_t opcode = tagged ? 0 : 4;
	uint8_t *msg = malloc(len ? len : 1);
	uint8_t *out = calloc(1, len ? len : 1);
	size_t hl = ddp_hdr_len(tagged), mp, nseg = 0;
	uint64_t expect_off = 0;
	struct ddp_seg_iter it;
	struct ddp_seg seg;
	struct ddp_hdr d;
	int rc;

	ck_assert_ptr_nonnull(msg);
	ck_assert_ptr_nonnull(out);
	iw_test_fill(msg, len, len + 1);
	if (tagged)
		rc = ddp_seg_init_tagged(&it, opcode, stag, to0, len);
	else
		rc = ddp_seg_init_untagged(&it, opcode, DDP_QN_SEND, msn,
					   rsvdulp, len);
	ck_assert_int_eq(rc, 0);
	ck_assert(!ddp_seg_done(&it));

	for (;;) {
		mp = mulpdu_next(m);
		rc = ddp_seg_next(&it, mp, &seg);
		if (rc == 0)
			break;
		HOT_EQ(rc, 1);
		nseg++;
		if (mp > DDP_MAX_ULPDU)
			mp = DDP_MAX_ULPDU;
		HOT_EQ(seg.hdr_len, hl);
		HOT_LE(seg.hdr_len + seg.len, mp);
		HOT_EQ(seg.offset, expect_off);
		/* the wire bytes decode to the reported header */
		HOT_EQ(ddp_hdr_decode(&d, seg.hdr_bytes, seg.hdr_len), (int)hl);
		HOT(d.tagged == tagged);
		HOT(d.last == seg.hdr.last);
		HOT_EQ(d.dv, 1);
		HOT_EQ(d.rv, 1);
		HOT_EQ(d.ddp_rsvd, 0);
		HOT_EQ(d.rdmap_rsv, 0);
		HOT_EQ(d.opcode, opcode);
		if (tagged) {
			HOT_EQ(d.stag, stag);
			HOT_EQ(d.to, to0 + seg.offset);
		} else {
			HOT_EQ(d.rsvdulp, rsvdulp);
			HOT_EQ(d.qn, DDP_QN_SEND);
			HOT_EQ(d.msn, msn);
			HOT_EQ(d.mo, seg.offset);
		}
		/* L only on the last; every other segment is full */
		if (d.last) {
			HOT_EQ(seg.offset + seg.len, len);
			HOT(ddp_seg_done(&it));
		} else {
			HOT_EQ(seg.hdr_len + seg.len, mp);
			HOT_LT(seg.offset + seg.len, len);
			HOT(!ddp_seg_done(&it));
		}
		if (seg.len)
			memcpy(out + seg.offset, msg + seg.offset, seg.len);
		expect_off += seg.len;
	}
	ck_assert(ddp_seg_done(&it));
	ck_assert_uint_eq(expect_off, len);
	ck_assert_uint_ge(nseg, 1);
	if (m->fixed && len > 0) {
		size_t room =
			(m->fixed > DDP_MAX_ULPDU ? DDP_MAX_ULPDU : m->fixed) -
			hl;
		ck_assert_uint_eq(nseg, (len + room - 1) / room);
	}
	ck_assert_int_eq(memcmp(out, msg, len), 0);
	/* finished: further calls produce nothing */
	ck_assert_int_eq(ddp_seg_next(&it, 1000, &seg), 0);
	free(msg);
	free(out);
}

static const uint32_t sizes[] = {0,   1,    3,	   4,	     511,     512,
				 513, 4095, 65536, 1u << 20, 8u << 20};

START_TEST(test_sizes_fixed)
{
	static const size_t mulpdus[] = {19,   20,   64,    531,   1436,
					 1448, 9000, 65535, 65536, 1u << 20};
	long mem0 = iw_mem_outstanding();
	size_t s, m;
	int t;

	for (t = 0; t < 2; t++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (m = 0; m < sizeof(mulpdus) / sizeof(mulpdus[0]);
			     m++) {
				struct mulpdu_src src = {mulpdus[m], 0, 0, 0};

				/* keep tiny MULPDUs to the small sizes */
				if (mulpdus[m] < 64 && sizes[s] > 65536)
					continue;
				seg_run(t != 0, sizes[s], &src);
			}
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

START_TEST(test_sizes_varying)
{
	static const struct {
		size_t lo, hi;
	} ranges[] = {{19, 40}, {19, 600}, {500, 1500}, {1400, 70000}};
	size_t s, r;
	int t;

	for (t = 0; t < 2; t++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (r = 0; r < sizeof(ranges) / sizeof(ranges[0]);
			     r++) {
				struct mulpdu_src src = {0, ranges[r].lo,
							 ranges[r].hi,
							 s * 7 + r + 1};

				if (ranges[r].hi < 64 && sizes[s] > 65536)
					continue;
				seg_run(t != 0, sizes[s], &src);
			}
}
END_TEST

/* Marker-like pattern: the MULPDU alternates with the stream position. */
START_TEST(test_alternating_mulpdu)
{
	struct ddp_seg_iter it;
	struct ddp_seg seg;
	uint32_t off = 0;
	size_t i = 0;
	const size_t mp[3] = {1436, 1432, 1428};

	ck_assert_int_eq(ddp_seg_init_untagged(&it, 3, 0, 1, 0, 10000), 0);
	while (ddp_seg_next(&it, mp[i % 3], &seg) == 1) {
		ck_assert_uint_eq(seg.offset, off);
		if (!seg.hdr.last)
			ck_assert_uint_eq(seg.len, mp[i % 3] - 18);
		off += seg.len;
		i++;
	}
	ck_assert_uint_eq(off, 10000);
	ck_assert_uint_eq(i, 8); /* 1418+1414+1410 = 4242 per 3 */
}
END_TEST

/* Zero-length messages: one segment with L=1 (e.g. the RFC 6581 RTR). */
START_TEST(test_zero_length)
{
	static const uint8_t rtr[14] = {0xc1, 0x40, 0, 0, 0, 1, 0,
					0,    0,    0, 0, 0, 0, 0};
	struct ddp_seg_iter it;
	struct ddp_seg seg;

	ck_assert_int_eq(ddp_seg_init_tagged(&it, 0, 1, 0, 0), 0);
	ck_assert_int_eq(ddp_seg_next(&it, 13, &seg), -EINVAL);
	ck_assert(!ddp_seg_done(&it));
	ck_assert_int_eq(ddp_seg_next(&it, 14, &seg), 1);
	ck_assert_uint_eq(seg.hdr_len, 14);
	ck_assert_uint_eq(seg.len, 0);
	ck_assert_uint_eq(seg.offset, 0);
	ck_assert_mem_eq(seg.hdr_bytes, rtr, 14);
	ck_assert_int_eq(ddp_seg_next(&it, 14, &seg), 0);

	ck_assert_int_eq(ddp_seg_init_untagged(&it, 1, 1, 1, 0, 0), 0);
	ck_assert_int_eq(ddp_seg_next(&it, 17, &seg), -EINVAL);
	ck_assert_int_eq(ddp_seg_next(&it, 18, &seg), 1);
	ck_assert(seg.hdr.last);
	ck_assert_uint_eq(seg.hdr_bytes[0], 0x41);
	ck_assert_uint_eq(seg.hdr_bytes[1], 0x41);
	ck_assert_int_eq(ddp_seg_next(&it, 18, &seg), 0);
}
END_TEST

/* A MULPDU with no room for payload fails and leaves the iterator as is. */
START_TEST(test_no_room)
{
	struct ddp_seg_iter it;
	struct ddp_seg seg;

	ck_assert_int_eq(ddp_seg_init_untagged(&it, 3, 0, 1, 0, 5), 0);
	ck_assert_int_eq(ddp_seg_next(&it, 18, &seg), -EINVAL);
	ck_assert_int_eq(ddp_seg_next(&it, 0, &seg), -EINVAL);
	ck_assert_int_eq(ddp_seg_next(&it, 19, &seg), 1);
	ck_assert_uint_eq(seg.len, 1);
	ck_assert(!seg.hdr.last);
	ck_assert_int_eq(ddp_seg_next(&it, 18, &seg), -EINVAL);
	ck_assert_int_eq(ddp_seg_next(&it, 100, &seg), 1);
	ck_assert_uint_eq(seg.offset, 1);
	ck_assert_uint_eq(seg.len, 4);
	ck_assert_uint_eq(seg.hdr.mo, 1);
	ck_assert(seg.hdr.last);
}
END_TEST

START_TEST(test_init_errors)
{
	struct ddp_seg_iter it;
	struct ddp_seg seg;

	ck_assert_int_eq(ddp_seg_init_tagged(&it, 16, 1, 0, 1), -EINVAL);
	ck_assert_int_eq(ddp_seg_init_untagged(&it, 16, 0, 1, 0, 1), -EINVAL);
	ck_assert_int_eq(ddp_seg_init_untagged(&it, 3, 5, 1, 0, 1),
			 IWARP_ERR_DDP_QN);
	/* TO + len <= 2^64 is fine, one more octet wraps (RFC 5041 §7) */
	ck_assert_int_eq(ddp_seg_init_tagged(&it, 0, 1, UINT64_MAX, 0), 0);
	ck_assert_int_eq(ddp_seg_init_tagged(&it, 0, 1, UINT64_MAX, 1), 0);
	ck_assert_int_eq(ddp_seg_init_tagged(&it, 0, 1, UINT64_MAX, 2),
			 IWARP_ERR_DDP_TO_WRAP);
	ck_assert_int_eq(ddp_seg_init_tagged(&it, 0, 1, UINT64_MAX - 9, 10), 0);
	ck_assert_int_eq(ddp_seg_next(&it, 19, &seg), 1);
	ck_assert_uint_eq(seg.hdr.to, UINT64_MAX - 9);
	ck_assert_int_eq(ddp_seg_next(&it, 19, &seg), 1);
	ck_assert_uint_eq(seg.hdr.to, UINT64_MAX - 4);
	ck_assert(seg.hdr.last);
	ck_assert_int_eq(ddp_seg_init_tagged(&it, 0, 1, UINT64_MAX - 9, 11),
			 IWARP_ERR_DDP_TO_WRAP);
}
END_TEST

/* MSN sequence across messages of one queue, via the allocator. */
START_TEST(test_msn_sequence)
{
	struct ddp_tx_queues q;
	struct ddp_seg_iter it;
	struct ddp_seg seg;
	uint32_t msn, m;

	ddp_tx_queues_init(&q);
	for (m = 1; m <= 5; m++) {
		ck_assert_int_eq(ddp_tx_msn_alloc(&q, DDP_QN_SEND, &msn), 0);
		ck_assert_int_eq(ddp_seg_init_untagged(&it, 3, DDP_QN_SEND, msn,
						       0, 3000),
				 0);
		while (ddp_seg_next(&it, 1000, &seg) == 1) {
			ck_assert_uint_eq(seg.hdr.msn, m);
			ck_assert_uint_eq(seg.hdr_bytes[13], m);
		}
	}
}
END_TEST

static Suite *ddp_segment_suite(void)
{
	Suite *s = suite_create("ddp_segment");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_msn_alloc);
	tcase_add_test(tc, test_sizes_fixed);
	tcase_add_test(tc, test_sizes_varying);
	tcase_add_test(tc, test_alternating_mulpdu);
	tcase_add_test(tc, test_zero_length);
	tcase_add_test(tc, test_no_room);
	tcase_add_test(tc, test_init_errors);
	tcase_add_test(tc, test_msn_sequence);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(ddp_segment_suite)

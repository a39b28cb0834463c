/* tests/ddp_rx_test.c: DDP receive-side validation. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddp/ddp_rx.h"
#include "ddp/ddp_segment.h"
#include "iwarp/iwarp.h"
#include "testutil.h"
#include "util/mem.h"

static struct ddp_hdr uhdr(uint32_t qn, uint32_t msn, uint32_t mo, bool last)
{
	struct ddp_hdr h;

	memset(&h, 0, sizeof(h));
	h.dv = DDP_VERSION;
	h.rv = RDMAP_VERSION;
	h.opcode = qn == 1 ? 1 : qn == 2 ? 7 : 3;
	h.qn = qn;
	h.msn = msn;
	h.mo = mo;
	h.last = last;
	return h;
}

static struct ddp_hdr thdr(uint32_t stag, uint64_t to, bool last)
{
	struct ddp_hdr h;

	memset(&h, 0, sizeof(h));
	h.tagged = true;
	h.dv = DDP_VERSION;
	h.rv = RDMAP_VERSION;
	h.stag = stag;
	h.to = to;
	h.last = last;
	return h;
}

/* Runs |h| through ddp_rx_untagged and asserts |rx| is unchanged on error. */
static int rx_u(struct ddp_rx *rx, struct ddp_hdr h, uint32_t len,
		struct ddp_rx_seg *out)
{
	struct ddp_rx before;
	int rc;

	memcpy(&before, rx, sizeof(before));
	rc = ddp_rx_untagged(rx, &h, len, out);
	if (rc < 0)
		ck_assert_int_eq(memcmp(&before, rx, sizeof(before)), 0);
	return rc;
}

static int rx_t(struct ddp_rx *rx, struct ddp_hdr h, uint32_t len,
		const struct ddp_tagged_buf *b, struct ddp_rx_seg *out)
{
	struct ddp_rx before;
	int rc;

	memcpy(&before, rx, sizeof(before));
	rc = ddp_rx_tagged(rx, &h, len, b, out);
	if (rc < 0)
		ck_assert_int_eq(memcmp(&before, rx, sizeof(before)), 0);
	return rc;
}

START_TEST(test_untagged_ok)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ck_assert_int_eq(ddp_rx_post(&rx, 0, 1000), 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 100, &o), 0);
	ck_assert(o.first && !o.complete);
	ck_assert_uint_eq(o.offset, 0);
	ck_assert_uint_eq(o.len, 100);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 100, false), 200, &o), 0);
	ck_assert(!o.first && !o.complete);
	ck_assert_uint_eq(o.offset, 100);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 300, true), 700, &o), 0);
	ck_assert(!o.first && o.complete);
	ck_assert_uint_eq(o.offset, 300);
	ck_assert_uint_eq(o.msg_len, 1000);
	/* next message: MSN 2, needs a new buffer */
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_NO_BUFFER);
	ck_assert_int_eq(ddp_rx_post(&rx, 0, 0), 0);
	/* zero-length message into a zero-length buffer */
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, true), 0, &o), 0);
	ck_assert(o.first && o.complete);
	ck_assert_uint_eq(o.msg_len, 0);
	ck_assert_uint_eq(rx.q[0].msn, 3);
}
END_TEST

START_TEST(test_untagged_version)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;
	struct ddp_hdr h = uhdr(0, 1, 0, true);
	uint8_t dv;

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 10);
	for (dv = 0; dv < 4; dv++) {
		if (dv == 1)
			continue;
		h.dv = dv;
		ck_assert_int_eq(rx_u(&rx, h, 1, &o),
				 IWARP_ERR_DDP_UNTAGGED_VERSION);
	}
	/* reserved DDP bits are not checked (RFC 5041 §4.2) */
	h.dv = 1;
	h.ddp_rsvd = 0xF;
	ck_assert_int_eq(rx_u(&rx, h, 1, &o), 0);
}
END_TEST

START_TEST(test_untagged_qn)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ck_assert_int_eq(ddp_rx_post(&rx, 5, 10), IWARP_ERR_DDP_QN);
	ck_assert_int_eq(rx_u(&rx, uhdr(5, 1, 0, true), 1, &o),
			 IWARP_ERR_DDP_QN);
	ck_assert_int_eq(rx_u(&rx, uhdr(UINT32_MAX, 1, 0, true), 1, &o),
			 IWARP_ERR_DDP_QN);
	/* QN 1 and 2 are valid queues with their own MSN */
	ddp_rx_post(&rx, 1, 28);
	ddp_rx_post(&rx, 2, 28);
	ck_assert_int_eq(rx_u(&rx, uhdr(1, 1, 0, true), 28, &o), 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(2, 1, 0, true), 4, &o), 0);
	ck_assert_uint_eq(rx.q[0].msn, 1);
	ck_assert_uint_eq(rx.q[1].msn, 2);
	ck_assert_uint_eq(rx.q[2].msn, 2);
}
END_TEST

START_TEST(test_untagged_no_buffer)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_NO_BUFFER);
	ck_assert_int_eq(ddp_rx_post(&rx, 0, 10), 0);
	ddp_rx_unpost(&rx, 0);
	ddp_rx_unpost(&rx, 7); /* no-op */
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_NO_BUFFER);
	/* a buffer on another queue does not help */
	ddp_rx_post(&rx, 1, 10);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_NO_BUFFER);
	/* buffer posted during a message serves the next one */
	ddp_rx_post(&rx, 0, 10);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 5, &o), 0);
	ck_assert(!rx.q[0].posted);
	ddp_rx_post(&rx, 0, 3);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 5, true), 5, &o), 0);
	ck_assert_uint_eq(o.msg_len, 10);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, true), 3, &o), 0);
	ck_assert(o.first && o.complete);
}
END_TEST

START_TEST(test_untagged_msn_range)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 100);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 0, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_RANGE);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_RANGE);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, UINT32_MAX, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_RANGE);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, true), 1, &o), 0);
	/* the old message again */
	ddp_rx_post(&rx, 0, 100);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_RANGE);
	/* range is checked before the buffer */
	ddp_rx_unpost(&rx, 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 5, 0, true), 1, &o),
			 IWARP_ERR_DDP_MSN_RANGE);
}
END_TEST

START_TEST(test_untagged_msn_wrap)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	rx.q[0].msn = UINT32_MAX;
	ddp_rx_post(&rx, 0, 10);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, UINT32_MAX, 0, true), 1, &o), 0);
	ddp_rx_post(&rx, 0, 10);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 0, 0, true), 1, &o), 0);
	ck_assert_uint_eq(rx.q[0].msn, 1);
}
END_TEST

/* Two messages of one queue may not interleave. */
START_TEST(test_untagged_same_queue_interleave)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 100);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 10, &o), 0);
	ddp_rx_post(&rx, 0, 100);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, false), 10, &o),
			 IWARP_ERR_DDP_MSN_RANGE);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, true), 10, &o),
			 IWARP_ERR_DDP_MSN_RANGE);
	/* the first one goes on */
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 10, true), 10, &o), 0);
	ck_assert_uint_eq(o.msg_len, 20);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, true), 10, &o), 0);
	ck_assert(o.first && o.complete);
}
END_TEST

/* Different queues may interleave (e.g. a Terminate or Read Request
 * between the segments of a Send). */
START_TEST(test_untagged_cross_queue_interleave)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 100);
	ddp_rx_post(&rx, 1, 28);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 10, &o), 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(1, 1, 0, true), 28, &o), 0);
	ck_assert(o.first && o.complete);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 10, true), 90, &o), 0);
	ck_assert_uint_eq(o.msg_len, 100);
}
END_TEST

START_TEST(test_untagged_mo)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 100);
	/* a new message starts at MO 0 */
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 5, false), 10, &o),
			 IWARP_ERR_DDP_MO);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 10, &o), 0);
	/* gap, overlap, duplicate */
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 11, false), 10, &o),
			 IWARP_ERR_DDP_MO);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 9, false), 10, &o),
			 IWARP_ERR_DDP_MO);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 10, &o),
			 IWARP_ERR_DDP_MO);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 10, true), 10, &o), 0);
}
END_TEST

START_TEST(test_untagged_too_long)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 100);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, true), 101, &o),
			 IWARP_ERR_DDP_MSG_TOO_LONG);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 60, &o), 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 60, true), 41, &o),
			 IWARP_ERR_DDP_MSG_TOO_LONG);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 60, false), 40, &o), 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 100, true), 1, &o),
			 IWARP_ERR_DDP_MSG_TOO_LONG);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 100, true), 0, &o), 0);
	ck_assert_uint_eq(o.msg_len, 100);
	/* no 32-bit overflow in MO + len */
	ddp_rx_post(&rx, 0, UINT32_MAX);
	rx.q[0].msn = 2;
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, 0, false), 65000, &o), 0);
	rx.q[0].mo = UINT32_MAX - 10;
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, UINT32_MAX - 10, true), 11, &o),
			 IWARP_ERR_DDP_MSG_TOO_LONG);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 2, UINT32_MAX - 10, true), 10, &o),
			 0);
	ck_assert_uint_eq(o.msg_len, UINT32_MAX);
}
END_TEST

START_TEST(test_model_mismatch)
{
	struct ddp_rx rx;
	struct ddp_rx_seg o;
	struct ddp_tagged_buf b = {DDP_STAG_VALID, 0, 100};

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 100);
	ck_assert_int_eq(rx_u(&rx, thdr(1, 0, true), 1, &o), -EINVAL);
	ck_assert_int_eq(rx_t(&rx, uhdr(0, 1, 0, true), 1, &b, &o), -EINVAL);
	ck_assert_int_eq(ddp_tagged_check(&(struct ddp_hdr){.dv = 1}, 0, &b),
			 -EINVAL);
}
END_TEST

START_TEST(test_tagged_bounds)
{
	/* [1000, 1100) */
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 1000, 100), 0);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 1050, 50), 0);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 1100, 0), 0);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 999, 1),
			 IWARP_ERR_DDP_BOUNDS);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 999, 0),
			 IWARP_ERR_DDP_BOUNDS);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 1000, 101),
			 IWARP_ERR_DDP_BOUNDS);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 1099, 2),
			 IWARP_ERR_DDP_BOUNDS);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 1101, 0),
			 IWARP_ERR_DDP_BOUNDS);
	ck_assert_int_eq(ddp_tagged_bounds(1000, 100, 0, 0),
			 IWARP_ERR_DDP_BOUNDS);
	/* a buffer at the top of the TO space */
	ck_assert_int_eq(ddp_tagged_bounds(UINT64_MAX - 99, 100, UINT64_MAX, 1),
			 0);
	ck_assert_int_eq(
		ddp_tagged_bounds(UINT64_MAX - 99, 100, UINT64_MAX - 99, 100),
		0);
	/* TO wrap: TO + len > 2^64 (RFC 5041 §7) */
	ck_assert_int_eq(ddp_tagged_bounds(UINT64_MAX - 99, 100, UINT64_MAX, 2),
			 IWARP_ERR_DDP_TO_WRAP);
	ck_assert_int_eq(ddp_tagged_bounds(0, UINT64_MAX, UINT64_MAX - 5, 100),
			 IWARP_ERR_DDP_TO_WRAP);
	ck_assert_int_eq(ddp_tagged_bounds(0, UINT64_MAX, 5, UINT64_MAX),
			 IWARP_ERR_DDP_TO_WRAP);
	ck_assert_int_eq(ddp_tagged_bounds(0, UINT64_MAX, 0, UINT64_MAX), 0);
}
END_TEST

START_TEST(test_tagged_check_codes)
{
	struct ddp_tagged_buf b = {DDP_STAG_VALID, 4096, 8192};
	struct ddp_hdr h = thdr(0x1234, 4096, true);
	uint8_t dv;

	ck_assert_int_eq(ddp_tagged_check(&h, 8192, &b), 0);
	ck_assert_int_eq(ddp_tagged_check(&h, 8193, &b), IWARP_ERR_DDP_BOUNDS);
	ck_assert_int_eq(ddp_tagged_check(&h, 1, NULL), IWARP_ERR_DDP_STAG);
	b.state = DDP_STAG_INVALID;
	ck_assert_int_eq(ddp_tagged_check(&h, 1, &b), IWARP_ERR_DDP_STAG);
	b.state = DDP_STAG_NOT_ASSOC;
	ck_assert_int_eq(ddp_tagged_check(&h, 1, &b),
			 IWARP_ERR_DDP_STAG_STREAM);
	b.state = DDP_STAG_VALID;
	h.to = UINT64_MAX;
	ck_assert_int_eq(ddp_tagged_check(&h, 2, &b), IWARP_ERR_DDP_TO_WRAP);
	h.to = 4095;
	ck_assert_int_eq(ddp_tagged_check(&h, 1, &b), IWARP_ERR_DDP_BOUNDS);
	for (dv = 0; dv < 4; dv++) {
		h.dv = dv;
		ck_assert_int_eq(ddp_tagged_check(&h, 0, NULL),
				 dv == 1 ? IWARP_ERR_DDP_STAG
					 : IWARP_ERR_DDP_TAGGED_VERSION);
	}
}
END_TEST

START_TEST(test_tagged_messages)
{
	struct ddp_tagged_buf b = {DDP_STAG_VALID, 0x10000, 0x10000};
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ck_assert_int_eq(rx_t(&rx, thdr(7, 0x10000, false), 100, &b, &o), 0);
	ck_assert(o.first && !o.complete);
	ck_assert_uint_eq(o.offset, 0);
	/* another STag or a TO gap while the message is open */
	ck_assert_int_eq(rx_t(&rx, thdr(8, 0x10064, false), 100, &b, &o),
			 -EPROTO);
	ck_assert_int_eq(rx_t(&rx, thdr(7, 0x10065, false), 100, &b, &o),
			 -EPROTO);
	ck_assert_int_eq(rx_t(&rx, thdr(7, 0x10000, false), 100, &b, &o),
			 -EPROTO);
	/* errors from the checks also leave the context alone */
	ck_assert_int_eq(rx_t(&rx, thdr(7, 0x10064, false), 100, NULL, &o),
			 IWARP_ERR_DDP_STAG);
	ck_assert_int_eq(rx_t(&rx, thdr(7, 0x10064, false), 100, &b, &o), 0);
	ck_assert(!o.first && !o.complete);
	ck_assert_uint_eq(o.offset, 100);
	ck_assert_int_eq(rx_t(&rx, thdr(7, 0x100c8, true), 50, &b, &o), 0);
	ck_assert(o.complete);
	ck_assert_uint_eq(o.msg_len, 250);
	ck_assert_uint_eq(o.offset, 200);
	/* a new tagged message may now use any STag and TO */
	ck_assert_int_eq(rx_t(&rx, thdr(9, 0x18000, true), 0, &b, &o), 0);
	ck_assert(o.first && o.complete);
	ck_assert_uint_eq(o.msg_len, 0);
	ck_assert_uint_eq(o.offset, 0x8000);
}
END_TEST

/* A Write interleaves with a Send and a Read Request between segments. */
START_TEST(test_tagged_untagged_interleave)
{
	struct ddp_tagged_buf b = {DDP_STAG_VALID, 0, 1000};
	struct ddp_rx rx;
	struct ddp_rx_seg o;

	ddp_rx_init(&rx);
	ddp_rx_post(&rx, 0, 300);
	ddp_rx_post(&rx, 1, 28);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 0, false), 100, &o), 0);
	ck_assert_int_eq(rx_t(&rx, thdr(5, 0, false), 400, &b, &o), 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 100, false), 100, &o), 0);
	ck_assert_int_eq(rx_u(&rx, uhdr(1, 1, 0, true), 28, &o), 0);
	ck_assert_int_eq(rx_t(&rx, thdr(5, 400, true), 600, &b, &o), 0);
	ck_assert_uint_eq(o.msg_len, 1000);
	ck_assert_int_eq(rx_u(&rx, uhdr(0, 1, 200, true), 100, &o), 0);
	ck_assert_uint_eq(o.msg_len, 300);
}
END_TEST

/*
 * End to end: a Send and a Write segmented by ddp_segment with varying
 * MULPDUs, their segments alternated on the "wire", decoded from bytes,
 * validated and placed by ddp_rx; both buffers must equal the sources.
 */
START_TEST(test_end_to_end)
{
	static const uint32_t sizes[] = {0, 1, 513, 4095, 65536, 300000};
	long mem0 = iw_mem_outstanding();
	uint64_t seed = 5;
	size_t s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t len = sizes[s];
		uint8_t *src_u = malloc(len + 1), *src_t = malloc(len + 1);
		uint8_t *dst_u = calloc(1, len + 1),
			*dst_t = calloc(1, len + 1);
		const uint64_t base = 0x7000000000ull;
		struct ddp_tagged_buf b = {DDP_STAG_VALID, base, len};
		struct ddp_tx_queues txq;
		struct ddp_seg_iter iu, itg;
		struct ddp_seg seg;
		struct ddp_rx rx;
		struct ddp_rx_seg o;
		struct ddp_hdr d;
		bool done_u = false, done_t = false, turn = false;
		uint32_t msn;

		ck_assert_ptr_nonnull(src_u);
		ck_assert_ptr_nonnull(src_t);
		ck_assert_ptr_nonnull(dst_u);
		ck_assert_ptr_nonnull(dst_t);
		iw_test_fill(src_u, len, s + 100);
		iw_test_fill(src_t, len, s + 200);
		ddp_tx_queues_init(&txq);
		ddp_rx_init(&rx);
		ck_assert_int_eq(ddp_rx_post(&rx, 0, len), 0);
		ck_assert_int_eq(ddp_tx_msn_alloc(&txq, 0, &msn), 0);
		ck_assert_int_eq(ddp_seg_init_untagged(&iu, 3, 0, msn, 0, len),
				 0);
		ck_assert_int_eq(
			ddp_seg_init_tagged(&itg, 0, 0x4242, base, len), 0);
		while (!done_u || !done_t) {
			struct ddp_seg_iter *it;
			size_t mp = 19 + (size_t)(iw_test_rand(&seed) % 3000);
			const uint8_t *src;
			uint8_t *dst;
			int rc;

			turn = !turn;
			if ((turn && !done_u) || done_t) {
				it = &iu;
				src = src_u;
				dst = dst_u;
			} else {
				it = &itg;
				src = src_t;
				dst = dst_t;
			}
			ck_assert_int_eq(ddp_seg_next(it, mp, &seg), 1);
			ck_assert_int_eq(
				ddp_hdr_decode(&d, seg.hdr_bytes, seg.hdr_len),
				(int)seg.hdr_len);
			if (d.tagged)
				rc = rx_t(&rx, d, seg.len, &b, &o);
			else
				rc = rx_u(&rx, d, seg.len, &o);
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(o.offset, seg.offset);
			ck_assert_uint_eq(o.len, seg.len);
			if (o.len)
				memcpy(dst + o.offset, src + seg.offset, o.len);
			if (o.complete) {
				ck_assert_uint_eq(o.msg_len, len);
				if (d.tagged)
					done_t = true;
				else
					done_u = true;
			}
			ck_assert(o.complete == ddp_seg_done(it));
		}
		ck_assert_int_eq(memcmp(dst_u, src_u, len), 0);
		ck_assert_int_eq(memcmp(dst_t, src_t, len), 0);
		ck_assert_uint_eq(rx.q[0].msn, 2);
		free(src_u);
		free(src_t);
		free(dst_u);
		free(dst_t);
	}
	ck_assert_int_eq(iw_mem_outstanding(), mem0);
}
END_TEST

static Suite *ddp_rx_suite(void)
{
	Suite *s = suite_create("ddp_rx");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_untagged_ok);
	tcase_add_test(tc, test_untagged_version);
	tcase_add_test(tc, test_untagged_qn);
	tcase_add_test(tc, test_untagged_no_buffer);
	tcase_add_test(tc, test_untagged_msn_range);
	tcase_add_test(tc, test_untagged_msn_wrap);
	tcase_add_test(tc, test_untagged_same_queue_interleave);
	tcase_add_test(tc, test_untagged_cross_queue_interleave);
	tcase_add_test(tc, test_untagged_mo);
	tcase_add_test(tc, test_untagged_too_long);
	tcase_add_test(tc, test_model_mismatch);
	tcase_add_test(tc, test_tagged_bounds);
	tcase_add_test(tc, test_tagged_check_codes);
	tcase_add_test(tc, test_tagged_messages);
	tcase_add_test(tc, test_tagged_untagged_interleave);
	tcase_add_test(tc, test_end_to_end);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(ddp_rx_suite)

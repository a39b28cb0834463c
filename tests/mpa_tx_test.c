/*
 * tests/mpa_tx_test.c: MPA FPDU transmit framing against hand-built vectors
 * and an independent octet-by-octet reference encoder.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mpa/mpa_tx.h"
#include "testutil.h"
#include "util/mem.h"

#define EQ(a, b)                                                               \
	do {                                                                   \
		if ((uint64_t)(a) != (uint64_t)(b))                            \
			ck_assert_uint_eq((uint64_t)(a), (uint64_t)(b));       \
	} while (0)

/* Bitwise CRC-32C (reflected 0x82F63B78), independent of util/crc32c. */
static uint32_t ref_crc_update(uint32_t crc, uint8_t b)
{
	int k;

	crc ^= b;
	for (k = 0; k < 8; k++)
		crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	return crc;
}

/*
 * Reference FPDU encoder, one octet at a time: content = len(BE) | ULPDU |
 * zero pad | CRC; a marker {0, 0, ptr} goes before every content octet at a
 * stream position multiple of 512, ptr = position - FPDU start. CRC over all
 * wire octets except the 4 CRC content octets, stored little-endian.
 * Returns the wire length written to |out|.
 */
static size_t ref_fpdu(uint64_t pos, bool markers, bool crc_on,
		       const uint8_t *ulpdu, size_t len, uint8_t *out)
{
	size_t pad = (4 - (2 + len) % 4) % 4;
	size_t ncontent = 2 + len + pad + 4, c, w = 0, crc_at[4], ncrc = 0, i;
	uint64_t p = pos;
	uint32_t crc = 0xFFFFFFFFu;
	uint8_t b;

	for (c = 0; c < ncontent;) {
		if (markers && p % 512 == 0) {
			out[w++] = 0;
			out[w++] = 0;
			out[w++] = (uint8_t)((p - pos) >> 8);
			out[w++] = (uint8_t)(p - pos);
			p += 4;
			continue;
		}
		if (c == 0)
			b = (uint8_t)(len >> 8);
		else if (c == 1)
			b = (uint8_t)len;
		else if (c < 2 + len)
			b = ulpdu[c - 2];
		else
			b = 0;
		if (c >= 2 + len + pad)
			crc_at[ncrc++] = w;
		out[w++] = b;
		c++;
		p++;
	}
	for (i = 0, c = 0; i < w; i++) {
		if (c < 4 && crc_at[c] == i) {
			c++;
			continue;
		}
		crc = ref_crc_update(crc, out[i]);
	}
	crc = crc_on ? ~crc : 0;
	for (c = 0; c < 4; c++)
		out[crc_at[c]] = (uint8_t)(crc >> (8 * c));
	return w;
}

static size_t flatten(const struct iovec *iov, size_t n, uint8_t *out)
{
	size_t i, w = 0;

	for (i = 0; i < n; i++) {
		memcpy(out + w, iov[i].iov_base, iov[i].iov_len);
		w += iov[i].iov_len;
	}
	return w;
}

static const uint8_t rtr_hdr[14] = {0xc1, 0x40, 0, 0, 0, 1};

/* Zero-length RDMA Write RTR, 20 octets, CRC eb d3 4c 5f
 * (docs/interop-notes.md §6.7). */
START_TEST(test_rtr_vector)
{
	static const uint8_t want[20] = {
		0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xeb, 0xd3, 0x4c, 0x5f};
	struct mpa_tx tx;
	struct mpa_tx_scratch s;
	struct iovec in = {(void *)rtr_hdr, sizeof(rtr_hdr)}, iov[8];
	uint8_t out[64];
	size_t cnt = 0;

	ck_assert_int_eq(mpa_tx_init(&tx, false, true, 0), 0);
	ck_assert_uint_eq(mpa_tx_wire_len(&tx, 14), 20);
	ck_assert_int_eq(mpa_tx_frame(&tx, &in, 1, &s, iov, 8, &cnt), 20);
	ck_assert_uint_eq(cnt, 3); /* len | header | CRC */
	ck_assert_ptr_eq(iov[1].iov_base, rtr_hdr);
	ck_assert_uint_eq(flatten(iov, cnt, out), 20);
	ck_assert_mem_eq(out, want, 20);
	ck_assert_uint_eq(tx.pos, 20);

	/* CRC off: the field is still sent, as zero */
	ck_assert_int_eq(mpa_tx_init(&tx, false, false, 0), 0);
	cnt = 0;
	ck_assert_int_eq(mpa_tx_frame(&tx, &in, 1, &s, iov, 8, &cnt), 20);
	flatten(iov, cnt, out);
	ck_assert_mem_eq(out, want, 16);
	ck_assert_uint_eq(out[16] | out[17] | out[18] | out[19], 0);
}
END_TEST

/* Sizes (docs/interop-notes.md §6.7): bare Terminate 28, 1-byte Send 28
 * (pad 3). */
START_TEST(test_sizes)
{
	uint8_t term[22] = {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1};
	uint8_t send[19] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	struct mpa_tx tx;
	struct mpa_tx_scratch s;
	struct iovec in[2], iov[8];
	uint8_t out[64], ref[64], one = 0x5a;
	size_t cnt = 0;

	send[18] = 0x5a; /* the reference encoder takes one buffer */
	mpa_tx_init(&tx, false, true, 0);
	in[0].iov_base = term;
	in[0].iov_len = 22;
	ck_assert_int_eq(mpa_tx_frame(&tx, in, 1, &s, iov, 8, &cnt), 28);
	ck_assert_uint_eq(flatten(iov, cnt, out), 28);
	ck_assert_uint_eq(ref_fpdu(0, false, true, term, 22, ref), 28);
	ck_assert_mem_eq(out, ref, 28);

	/* 1-byte Send: header scratch + 1 payload octet, pad 3 + CRC */
	mpa_tx_init(&tx, false, true, 0);
	in[0].iov_base = send;
	in[0].iov_len = 18;
	in[1].iov_base = &one; /* not adjacent to the header scratch */
	in[1].iov_len = 1;
	cnt = 0;
	ck_assert_int_eq(mpa_tx_frame(&tx, in, 2, &s, iov, 8, &cnt), 28);
	ck_assert_uint_eq(cnt, 4); /* len | hdr | payload | pad+CRC */
	ck_assert_uint_eq(iov[3].iov_len, 7);
	ck_assert_uint_eq(flatten(iov, cnt, out), 28);
	ck_assert_uint_eq(ref_fpdu(0, false, true, send, 19, ref), 28);
	ck_assert_mem_eq(out, ref, 28);
	ck_assert_uint_eq(out[21] | out[22] | out[23], 0); /* pad */
	ck_assert_uint_eq(out[20], 0x5a);
}
END_TEST

/*
 * A marker stream built by hand, octet by octet (CRC off so every octet is
 * spelled out; CRC on is covered by the reference comparison):
 *   FPDU1 @0    leading marker (ptr 0), ULPDU 14            wire 24
 *   FPDU2 @24   ULPDU 500, marker @512 in the payload (ptr 488)   wire 512
 *   FPDU3 @536  ULPDU 482, ends exactly at 1024 (no marker) wire 488
 *   FPDU4 @1024 leading marker, ULPDU 600 (pad 2), marker @1536 ptr 512
 */
START_TEST(test_hand_marker_stream)
{
	static uint8_t want[1640], out[1640], u2[500], u3[482], u4[600];
	struct mpa_tx tx;
	struct mpa_tx_scratch s[4];
	struct iovec in, iov[64];
	size_t cnt = 0, w;

	iw_test_fill(u2, sizeof(u2), 2);
	iw_test_fill(u3, sizeof(u3), 3);
	iw_test_fill(u4, sizeof(u4), 4);
	memset(want, 0xee, sizeof(want));
	/* FPDU1 */
	memcpy(want + 0, "\x00\x00\x00\x00\x00\x0e", 6);
	memcpy(want + 6, rtr_hdr, 14);
	memset(want + 20, 0, 4);
	/* FPDU2: len 0x01f4 at 24, ULPDU octets 0..485 at 26..511 */
	memcpy(want + 24, "\x01\xf4", 2);
	memcpy(want + 26, u2, 486);
	memcpy(want + 512, "\x00\x00\x01\xe8", 4); /* 512 - 24 = 488 */
	memcpy(want + 516, u2 + 486, 14);
	memset(want + 530, 0, 6); /* pad 0, CRC 0 */
	/* FPDU3: 536 + 2 + 482 + 4 = 1024 */
	memcpy(want + 536, "\x01\xe2", 2);
	memcpy(want + 538, u3, 482);
	memset(want + 1020, 0, 4);
	/* FPDU4 */
	memcpy(want + 1024, "\x00\x00\x00\x00\x02\x58", 6);
	memcpy(want + 1030, u4, 506);
	memcpy(want + 1536, "\x00\x00\x02\x00", 4); /* 512 from the marker */
	memcpy(want + 1540, u4 + 506, 94);
	memset(want + 1634, 0, 6); /* pad 2, CRC 0 */

	mpa_tx_init(&tx, true, false, 0);
	in.iov_base = (void *)rtr_hdr;
	in.iov_len = 14;
	ck_assert_int_eq(mpa_tx_frame(&tx, &in, 1, &s[0], iov, 64, &cnt), 24);
	in.iov_base = u2;
	in.iov_len = sizeof(u2);
	ck_assert_int_eq(mpa_tx_frame(&tx, &in, 1, &s[1], iov, 64, &cnt), 512);
	in.iov_base = u3;
	in.iov_len = sizeof(u3);
	ck_assert_int_eq(mpa_tx_frame(&tx, &in, 1, &s[2], iov, 64, &cnt), 488);
	ck_assert_uint_eq(tx.pos, 1024);
	in.iov_base = u4;
	in.iov_len = sizeof(u4);
	ck_assert_int_eq(mpa_tx_frame(&tx, &in, 1, &s[3], iov, 64, &cnt), 616);
	ck_assert_uint_eq(tx.pos, 1640);
	w = flatten(iov, cnt, out);
	ck_assert_uint_eq(w, 1640);
	ck_assert_mem_eq(out, want, 1640);
}
END_TEST

/* Split |len| octets at |buf| into up to |max| random iovecs (some empty). */
static size_t random_split(uint8_t *buf, size_t len, struct iovec *iov,
			   size_t max, uint64_t *rng)
{
	size_t n = 0, left = len, k;

	while (n + 1 < max && left > 0) {
		k = (size_t)(iw_test_rand(rng) % (left + 1));
		if (iw_test_rand(rng) % 4 == 0)
			k = 0;
		iov[n].iov_base = buf + (len - left);
		iov[n++].iov_len = k;
		left -= k;
	}
	iov[n].iov_base = buf + (len - left);
	iov[n++].iov_len = left;
	return n;
}

/* Every position class x many sizes x markers x CRC against the reference. */
START_TEST(test_reference_diff)
{
	static const uint64_t starts[] = {
		0,    4, 8, 12, 500, 504, 508, 512,	   496,
		1020, 5, 6, 7,	509, 510, 511, 4096 + 509, 100000};
	static const size_t big[] = {1442,  1448,  4000,  9000,	 65530,
				     65531, 65532, 65533, 65534, 65535};
	long mem = iw_mem_outstanding();
	size_t cap = MPA_TX_IOV_MAX(8, MPA_MAX_FPDU_MARKERS);
	uint8_t *pay = iw_malloc(65535), *out = iw_malloc(70000),
		*ref = iw_malloc(70000);
	struct mpa_tx_scratch *s = iw_malloc(sizeof(*s));
	struct iovec in[8], *iov = iw_malloc(cap * sizeof(*iov));
	struct mpa_tx tx;
	uint64_t rng = 77;
	size_t si, len, n, cnt, w, li;
	int mode, rc;
	bool mk, crc;

	ck_assert_ptr_nonnull(pay);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(iov);
	iw_test_fill(pay, 65535, 9);
	for (mode = 0; mode < 4; mode++) {
		mk = mode & 1;
		crc = mode & 2;
		for (si = 0; si < sizeof(starts) / sizeof(starts[0]); si++) {
			for (li = 0; li < 1100 + sizeof(big) / sizeof(big[0]);
			     li++) {
				len = li < 1100 ? li : big[li - 1100];
				if (li >= 600 && li < 1100 && li % 7 != 0)
					continue;
				n = random_split(pay, len, in, 8, &rng);
				rc = mpa_tx_init(&tx, mk, crc, starts[si]);
				EQ(rc, 0);
				cnt = 0;
				rc = mpa_tx_frame(&tx, in, n, s, iov, cap,
						  &cnt);
				w = ref_fpdu(starts[si], mk, crc, pay, len,
					     ref);
				EQ(rc, w);
				EQ(mpa_tx_wire_len(
					   &(struct mpa_tx){.pos = starts[si],
							    .markers = mk},
					   len),
				   w);
				EQ(tx.pos, starts[si] + w);
				if (cnt >
				    mpa_tx_iov_bound(
					    &(struct mpa_tx){.pos = starts[si],
							     .markers = mk},
					    len, n))
					ck_abort_msg("iov bound exceeded");
				EQ(flatten(iov, cnt, out), w);
				if (memcmp(out, ref, w) != 0)
					ck_abort_msg(
						"pos %llu len %zu mode %d",
						(unsigned long long)starts[si],
						len, mode);
			}
		}
	}
	/* a 65535-octet ULPDU at position 0 with markers: 130 markers */
	mpa_tx_init(&tx, true, true, 0);
	in[0].iov_base = pay;
	in[0].iov_len = 65535;
	cnt = 0;
	ck_assert_int_eq(mpa_tx_frame(&tx, in, 1, s, iov, cap, &cnt),
			 65544 + 520);
	ck_assert_uint_le(cnt, MPA_TX_IOV_MAX(1, MPA_MAX_FPDU_MARKERS));
	iw_free(iov);
	iw_free(s);
	iw_free(ref);
	iw_free(out);
	iw_free(pay);
	ck_assert_int_eq(iw_mem_outstanding(), mem);
}
END_TEST

/* Many FPDUs back to back into one iovec array (one sendmsg). */
START_TEST(test_batch)
{
	enum { NF = 40 };
	static uint8_t pay[40000], out[60000], ref[60000];
	struct mpa_tx_scratch *s = iw_calloc(NF, sizeof(*s));
	struct iovec in[4], iov[NF * 20];
	struct mpa_tx tx;
	uint64_t rng = 5, pos = 0;
	size_t cnt = 0, off = 0, w = 0, len, n, f, prev;
	int rc;

	ck_assert_ptr_nonnull(s);
	iw_test_fill(pay, sizeof(pay), 1);
	mpa_tx_init(&tx, true, true, 0);
	for (f = 0; f < NF; f++) {
		len = (size_t)(iw_test_rand(&rng) % 1400);
		n = random_split(pay + off, len, in, 4, &rng);
		prev = cnt;
		rc = mpa_tx_frame(&tx, in, n, &s[f], iov, NF * 20, &cnt);
		ck_assert_int_gt(rc, 0);
		ck_assert_uint_le(cnt - prev, MPA_TX_IOV_MAX(n, 3));
		w += ref_fpdu(pos, true, true, pay + off, len, ref + w);
		pos += (size_t)rc;
		off += len;
	}
	ck_assert_uint_eq(tx.pos, w);
	ck_assert_uint_eq(flatten(iov, cnt, out), w);
	ck_assert_mem_eq(out, ref, w);
	iw_free(s);
	ck_assert_int_eq(iw_mem_outstanding(), 0);
}
END_TEST

START_TEST(test_errors)
{
	static uint8_t pay[65536];
	struct mpa_tx_scratch s;
	struct iovec in[2], iov[300];
	struct mpa_tx tx;
	size_t cnt, need;
	int rc;

	/* a marker position is 4 octets long: no start inside one */
	ck_assert_int_eq(mpa_tx_init(&tx, true, true, 1), -EINVAL);
	ck_assert_int_eq(mpa_tx_init(&tx, true, true, 515), -EINVAL);
	ck_assert_int_eq(mpa_tx_init(&tx, false, true, 1), 0);

	/* ULPDU above 65535 (also as a sum of pieces) */
	mpa_tx_init(&tx, true, true, 0);
	in[0].iov_base = pay;
	in[0].iov_len = 65536;
	cnt = 0;
	ck_assert_int_eq(mpa_tx_frame(&tx, in, 1, &s, iov, 300, &cnt), -EINVAL);
	in[0].iov_len = 40000;
	in[1].iov_base = pay;
	in[1].iov_len = 25536;
	ck_assert_int_eq(mpa_tx_frame(&tx, in, 2, &s, iov, 300, &cnt), -EINVAL);
	ck_assert_uint_eq(cnt, 0);
	ck_assert_uint_eq(tx.pos, 0);

	/* iovec array too small: nothing changes; the exact need works */
	in[0].iov_len = 3000;
	cnt = 5;
	need = 0;
	for (rc = -ENOSPC; rc == -ENOSPC; need++)
		rc = mpa_tx_frame(&tx, in, 1, &s, iov, 5 + need, &cnt);
	ck_assert_int_eq(rc, (int)mpa_fpdu_wire_len(0, 3000, true));
	ck_assert_uint_eq(cnt, 5 + need - 1);
	ck_assert_uint_le(
		need - 1,
		mpa_tx_iov_bound(&(struct mpa_tx){.pos = 0, .markers = true},
				 3000, 1));
	ck_assert_uint_eq(tx.pos, (uint64_t)rc);
	mpa_tx_init(&tx, true, true, 0);
	cnt = 5;
	ck_assert_int_eq(mpa_tx_frame(&tx, in, 1, &s, iov, 5 + need - 2, &cnt),
			 -ENOSPC);
	ck_assert_uint_eq(cnt, 5);
	ck_assert_uint_eq(tx.pos, 0);
	/* max ULPDU for the next FPDU */
	ck_assert_int_eq(mpa_tx_max_ulpdu(&tx, 1448), 1442 - 12);
}
END_TEST

/*
 * The scratch in two parts (a connection without markers keeps no marker
 * storage): the same octets as with a whole scratch; a header right after
 * the fixed part goes out in one iovec with the length field; markers
 * without storage for them are refused, nothing changed.
 */
struct slot_like {
	struct mpa_tx_fixed fixed;
	uint8_t hdr[14];
};

START_TEST(test_parts)
{
	static uint8_t pay[3000];
	struct slot_like slot;
	struct mpa_tx_scratch s;
	struct iovec in[2], iov[16];
	uint8_t a[3100], b[3100];
	struct mpa_tx tx;
	size_t cnt_a = 0, cnt_b = 0;
	int rc;

	iw_test_fill(pay, sizeof(pay), 9);
	iw_test_fill(slot.hdr, sizeof(slot.hdr), 10);
	in[0].iov_base = slot.hdr;
	in[0].iov_len = sizeof(slot.hdr);
	in[1].iov_base = pay;
	in[1].iov_len = _i ? 1 : sizeof(pay); /* with and without pad */
	mpa_tx_init(&tx, false, true, 0);
	rc = mpa_tx_frame(&tx, in, 2, &s, iov, 16, &cnt_a);
	ck_assert_int_gt(rc, 0);
	ck_assert_uint_eq(flatten(iov, cnt_a, a), (size_t)rc);
	mpa_tx_init(&tx, false, true, 0);
	ck_assert_int_eq(mpa_tx_frame_parts(&tx, in, 2, &slot.fixed, NULL, iov,
					    16, &cnt_b),
			 rc);
	ck_assert_uint_eq(flatten(iov, cnt_b, b), (size_t)rc);
	ck_assert_int_eq(memcmp(a, b, (size_t)rc), 0);
	ck_assert_uint_eq(offsetof(struct slot_like, hdr), sizeof(slot.fixed));
	ck_assert_uint_eq(cnt_b, cnt_a - 1);
	ck_assert_uint_eq(iov[0].iov_len, MPA_LEN_FIELD + sizeof(slot.hdr));
	mpa_tx_init(&tx, true, true, 0);
	cnt_b = 3;
	ck_assert_int_eq(mpa_tx_frame_parts(&tx, in, 2, &slot.fixed, NULL, iov,
					    16, &cnt_b),
			 -EINVAL);
	ck_assert_uint_eq(cnt_b, 3);
	ck_assert_uint_eq(tx.pos, 0);
}
END_TEST

static Suite *mpa_tx_suite(void)
{
	Suite *s = suite_create("mpa_tx");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rtr_vector);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_hand_marker_stream);
	tcase_add_test(tc, test_reference_diff);
	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_errors);
	tcase_add_loop_test(tc, test_parts, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(mpa_tx_suite)

/*
 * tests/mpa_marker_test.c: MPA FPDU size and marker arithmetic, checked
 * exhaustively against an octet-by-octet walk of the stream.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "mpa/mpa_marker.h"
#include "testutil.h"

/* Independent pad: count up until 2 + L + pad is a multiple of 4. */
static size_t ref_pad(size_t len)
{
	size_t pad = 0;

	while ((2 + len + pad) % 4 != 0)
		pad++;
	return pad;
}

static size_t ref_content(size_t len)
{
	return 2 + len + ref_pad(len) + 4;
}

/*
 * Walk the stream from |pos| octet by octet: end[c] = wire octets used once
 * c content octets were placed (a marker sits wherever the stream position
 * is a multiple of 512 and a content octet follows).
 */
static void ref_walk(uint64_t pos, bool markers, size_t *end, size_t ncontent)
{
	uint64_t p = pos;
	size_t c = 0;

	end[0] = 0;
	while (c < ncontent) {
		if (markers && p % 512 == 0) {
			p += 4;
			continue;
		}
		p++;
		c++;
		end[c] = (size_t)(p - pos);
	}
}

/*
 * Hot-loop assertions: check's ck_assert_* report every passed check
 * through a pipe in fork mode, so loops of millions only call it on failure.
 */
#define EQ(a, b)                                                               \
	do {                                                                   \
		if ((uint64_t)(a) != (uint64_t)(b))                            \
			ck_assert_uint_eq((uint64_t)(a), (uint64_t)(b));       \
	} while (0)
#define LE(a, b)                                                               \
	do {                                                                   \
		if ((uint64_t)(a) > (uint64_t)(b))                             \
			ck_assert_uint_le((uint64_t)(a), (uint64_t)(b));       \
	} while (0)

static bool inside_marker(uint64_t pos)
{
	return pos % 512 >= 1 && pos % 512 <= 3;
}

START_TEST(test_pad_and_content)
{
	size_t len;

	for (len = 0; len <= 70000; len++) {
		EQ(mpa_pad_len(len), ref_pad(len));
		EQ(mpa_fpdu_content_len(len), ref_content(len));
		EQ(mpa_fpdu_content_len(len) % 4, 0);
	}
	/* docs/interop-notes.md §6.7 sizes */
	ck_assert_uint_eq(mpa_fpdu_content_len(14), 20); /* Write RTR */
	ck_assert_uint_eq(mpa_fpdu_content_len(22), 28); /* bare Terminate */
	ck_assert_uint_eq(mpa_fpdu_content_len(19), 28); /* 1-byte Send */
	ck_assert_uint_eq(mpa_fpdu_content_len(46), 52); /* Read RTR */
	ck_assert_uint_eq(mpa_fpdu_content_len(34), 40); /* rping Send */
	ck_assert_uint_eq(mpa_pad_len(19), 3);
	ck_assert_uint_eq(mpa_fpdu_content_len(0), 8);
	ck_assert_uint_eq(mpa_fpdu_content_len(65535), 65544);
}
END_TEST

START_TEST(test_markers_in)
{
	uint64_t pos, n, count, octets;

	for (pos = 0; pos < 1600; pos++) {
		count = 0;
		octets = 0;
		for (n = 0; n <= 1100; n++) {
			EQ(mpa_markers_in(pos, n), count);
			EQ(mpa_marker_octets_in(pos, n), octets);
			/* extend the run by octet pos + n */
			if ((pos + n) % 512 == 0)
				count++;
			if ((pos + n) % 512 < 4)
				octets++;
		}
	}
	ck_assert_uint_eq(mpa_markers_in(0, 1), 1);
	ck_assert_uint_eq(mpa_markers_in(1, 511), 0);
	ck_assert_uint_eq(mpa_markers_in(1, 512), 1);
	ck_assert_uint_eq(mpa_markers_in((uint64_t)1 << 40, 1024), 2);
	ck_assert(mpa_marker_at(0));
	ck_assert(mpa_marker_at(1024));
	ck_assert(!mpa_marker_at(4));
}
END_TEST

/* Wire length and marker count against the walk, every position. */
START_TEST(test_wire_len_small)
{
	enum { MAXL = 1200 };
	size_t *end = malloc((ref_content(MAXL) + 1) * sizeof(*end));
	uint64_t pos;
	size_t len, w;
	int mk;

	ck_assert_ptr_nonnull(end);
	for (mk = 0; mk < 2; mk++) {
		for (pos = 0; pos < 1560; pos++) {
			if (mk && inside_marker(pos))
				continue;
			ref_walk(pos, mk, end, ref_content(MAXL));
			for (len = 0; len <= MAXL; len++) {
				w = end[ref_content(len)];
				EQ(mpa_fpdu_wire_len(pos, len, mk), w);
				EQ(mpa_fpdu_markers(pos, len, mk),
				   (w - ref_content(len)) / 4);
			}
		}
	}
	free(end);
}
END_TEST

/* Full ULPDU range at every 4-aligned offset in a 512 block, and a few
 * unaligned ones; the worst case marker count is exactly 130. */
START_TEST(test_wire_len_large)
{
	size_t *end = malloc((ref_content(65535) + 1) * sizeof(*end));
	static const uint64_t odd[] = {5, 510, 511, 1023, 4097, 6};
	uint64_t pos;
	size_t len, most = 0, i;

	ck_assert_ptr_nonnull(end);
	for (i = 0; i < 128 + sizeof(odd) / sizeof(odd[0]); i++) {
		pos = i < 128 ? 4 * i + 512 * (i % 3) : odd[i - 128];
		ref_walk(pos, true, end, ref_content(65535));
		for (len = 0; len <= 65535; len += (len < 64000 ? 7 : 1))
			EQ(mpa_fpdu_wire_len(pos, len, true),
			   end[ref_content(len)]);
		ck_assert_uint_eq(mpa_fpdu_wire_len(pos, 65535, true),
				  end[ref_content(65535)]);
		if (mpa_fpdu_markers(pos, 65535, true) > most)
			most = mpa_fpdu_markers(pos, 65535, true);
	}
	ck_assert_uint_eq(most, MPA_MAX_FPDU_MARKERS);
	ck_assert_uint_eq(mpa_fpdu_markers(0, 65535, true), 130);
	ck_assert_uint_eq(mpa_fpdu_wire_len(0, 65535, true), 65544 + 520);
	ck_assert_uint_eq(mpa_fpdu_wire_len(0, 65535, false), 65544);
	free(end);
}
END_TEST

/* Hand-checked placements. */
START_TEST(test_wire_len_vectors)
{
	/* position 0: leading marker, then 20 octets */
	ck_assert_uint_eq(mpa_fpdu_wire_len(0, 14, true), 24);
	ck_assert_uint_eq(mpa_fpdu_markers(0, 14, true), 1);
	/* an FPDU ending exactly at 512 does not own the marker there */
	ck_assert_uint_eq(mpa_fpdu_wire_len(492, 14, true), 20);
	ck_assert_uint_eq(mpa_fpdu_wire_len(496, 14, true), 24);
	/* 508 content octets after a leading marker: exactly one marker */
	ck_assert_uint_eq(mpa_fpdu_wire_len(0, 502, true), 512);
	ck_assert_uint_eq(mpa_fpdu_wire_len(0, 503, true), 520);
	ck_assert_uint_eq(mpa_fpdu_wire_len(4, 502, true), 508);
	ck_assert_uint_eq(mpa_fpdu_wire_len(8, 502, true), 512);
}
END_TEST

/* Largest L with wire length <= |budget|, starting from the answer |prev|
 * for a smaller budget (the wire length grows with L). */
static int ref_max_ulpdu(const size_t *end, size_t nend, size_t budget,
			 int prev)
{
	size_t len = prev < 0 ? 0 : (size_t)prev + 1;
	int best = prev;

	for (; len <= 65535 && ref_content(len) < nend; len++) {
		if (end[ref_content(len)] > budget)
			break;
		best = (int)len;
	}
	return best;
}

START_TEST(test_max_ulpdu)
{
	enum { MAXB = 1300 };
	size_t nend = MAXB + 8;
	size_t *end = malloc((nend + 1) * sizeof(*end));
	uint64_t pos;
	size_t b;
	int mk, got, want;

	ck_assert_ptr_nonnull(end);
	for (mk = 0; mk < 2; mk++) {
		for (pos = 0; pos < 1100; pos++) {
			if (mk && inside_marker(pos))
				continue;
			ref_walk(pos, mk, end, nend);
			want = -EINVAL;
			for (b = 0; b <= MAXB; b++) {
				got = mpa_max_ulpdu(pos, b, mk);
				want = ref_max_ulpdu(end, nend, b, want);
				if (got != want)
					ck_assert_int_eq(got, want);
				if (got >= 0)
					LE(mpa_fpdu_wire_len(pos, (size_t)got,
							     mk),
					   b);
			}
		}
	}
	free(end);

	/* the cap and the edge around it */
	for (pos = 0; pos < 1024; pos += 4) {
		size_t w = mpa_fpdu_wire_len(pos, 65535, true);

		ck_assert_int_eq(mpa_max_ulpdu(pos, w, true), 65535);
		ck_assert_int_eq(mpa_max_ulpdu(pos, 100000, true), 65535);
		got = mpa_max_ulpdu(pos, w - 1, true);
		ck_assert_int_lt(got, 65535);
		ck_assert_uint_le(mpa_fpdu_wire_len(pos, (size_t)got, true),
				  w - 1);
		ck_assert_uint_gt(mpa_fpdu_wire_len(pos, (size_t)got + 1, true),
				  w - 1);
	}
	ck_assert_int_eq(mpa_max_ulpdu(0, 1448, false), 1442);
	ck_assert_int_eq(mpa_max_ulpdu(0, 7, false), -EINVAL);
	ck_assert_int_eq(mpa_max_ulpdu(0, 8, false), 2);
	ck_assert_int_eq(mpa_max_ulpdu(0, 11, true), -EINVAL);
	ck_assert_int_eq(mpa_max_ulpdu(0, 12, true), 2);
}
END_TEST

START_TEST(test_mulpdu)
{
	size_t emss, m;
	uint64_t pos;

	/* RFC 5044: EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4) */
	ck_assert_uint_eq(mpa_mulpdu(1448, true), 1448 - 6 - 12);
	ck_assert_uint_eq(mpa_mulpdu(1460, true), 1460 - 6 - 12);
	ck_assert_uint_eq(mpa_mulpdu(1461, true), 1461 - 6 - 12 - 1);
	ck_assert_uint_eq(mpa_mulpdu(512, true), 502);
	ck_assert_uint_eq(mpa_mulpdu(513, true), 513 - 6 - 8 - 1);
	ck_assert_uint_eq(mpa_mulpdu(1448, false), 1442);
	ck_assert_uint_eq(mpa_mulpdu(1450, false), 1442);
	ck_assert_uint_eq(mpa_mulpdu(65483, false), 65474);
	ck_assert_uint_eq(mpa_mulpdu(70000, false), 65535);
	ck_assert_uint_eq(mpa_mulpdu(11, true), 0);
	ck_assert_uint_eq(mpa_mulpdu(12, true), 2);
	ck_assert_uint_eq(mpa_mulpdu(5, false), 0);

	/* position independent: fits wherever the FPDU starts */
	for (emss = 12; emss <= 9000; emss++) {
		m = mpa_mulpdu(emss, true);
		for (pos = 0; pos < 1024; pos += 4) {
			LE(mpa_fpdu_wire_len(pos, m, true), emss);
			LE(m, mpa_max_ulpdu(pos, emss, true));
		}
		m = mpa_mulpdu(emss, false);
		EQ(mpa_fpdu_wire_len(0, m, false), emss & ~3u);
		EQ(mpa_max_ulpdu(0, emss, false), m);
	}
}
END_TEST

static Suite *mpa_marker_suite(void)
{
	Suite *s = suite_create("mpa_marker");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_pad_and_content);
	tcase_add_test(tc, test_markers_in);
	tcase_add_test(tc, test_wire_len_small);
	tcase_add_test(tc, test_wire_len_large);
	tcase_add_test(tc, test_wire_len_vectors);
	tcase_add_test(tc, test_max_ulpdu);
	tcase_add_test(tc, test_mulpdu);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(mpa_marker_suite)

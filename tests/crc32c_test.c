/*
 * tests/crc32c_test.c: CRC-32C backends (util/crc32c*.c).
 *
 * Every available backend, and the crc32c_update dispatcher, is checked
 * against the RFC 3720 Appendix B.4 vectors and against a bitwise
 * reference on random data: every length 0..1100 at every start alignment
 * 0..15, the SSE4.2 tier boundaries, 64 KiB and 1 MiB + 3, random split
 * points and iovec layouts. Unavailable backends are skipped with a note.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "testutil.h"
#include "util/crc32c.h"

#define POLY 0x82F63B78u

/* Bitwise reference: one polynomial step per bit. */
static uint32_t ref_update(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ POLY : crc >> 1;
	}
	return crc;
}

/* What is tested: each available backend plus the dispatcher. */
struct impl {
	const char *name;
	uint32_t (*update)(uint32_t crc, const void *buf, size_t len);
};

static struct impl impls[8];
static size_t n_impls;

static void impls_setup(void)
{
	const struct crc32c_backend *b;
	size_t n, i;

#ifndef HAVE_ISAL
	fprintf(stderr, "crc32c_test: isal not built in (no libisal-dev or "
			"--without-isal), skipped\n");
#endif
	n_impls = 0;
	impls[n_impls].name = "dispatch";
	impls[n_impls++].update = crc32c_update;
	b = crc32c_backends(&n);
	for (i = 0; i < n && n_impls < sizeof(impls) / sizeof(impls[0]); i++) {
		if (!b[i].available()) {
			fprintf(stderr,
				"crc32c_test: backend %s not available here, "
				"skipped\n",
				b[i].name);
			continue;
		}
		impls[n_impls].name = b[i].name;
		impls[n_impls++].update = b[i].update;
	}
}

/* Random bytes in a malloc'd buffer of |len| (+16 slack for alignment). */
static uint8_t *rand_buf(size_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len + 16);

	ck_assert_ptr_nonnull(buf);
	iw_test_fill(buf, len + 16, seed);
	return buf;
}

static const uint8_t iscsi_read_pdu[48] = {
	0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static uint32_t impl_crc(const struct impl *im, const void *buf, size_t len)
{
	return crc32c_final(im->update(CRC32C_SEED, buf, len));
}

START_TEST(test_known_answers)
{
	uint8_t b[32];
	size_t i, k;

	for (k = 0; k < n_impls; k++) {
		const struct impl *im = &impls[k];

		memset(b, 0x00, sizeof(b));
		ck_assert_msg(impl_crc(im, b, 32) == 0x8A9136AAu, "%s",
			      im->name);
		memset(b, 0xff, sizeof(b));
		ck_assert_msg(impl_crc(im, b, 32) == 0x62A8AB43u, "%s",
			      im->name);
		for (i = 0; i < 32; i++)
			b[i] = (uint8_t)i;
		ck_assert_msg(impl_crc(im, b, 32) == 0x46DD794Eu, "%s",
			      im->name);
		for (i = 0; i < 32; i++)
			b[i] = (uint8_t)(31 - i);
		ck_assert_msg(impl_crc(im, b, 32) == 0x113FDB5Cu, "%s",
			      im->name);
		ck_assert_msg(impl_crc(im, iscsi_read_pdu, 48) == 0xD9963A56u,
			      "%s", im->name);
		ck_assert_msg(impl_crc(im, "123456789", 9) == 0xE3069283u, "%s",
			      im->name);
		/* Running state of "123456789" before finalisation. */
		ck_assert_msg(im->update(CRC32C_SEED, "123456789", 9) ==
				      ~0xE3069283u,
			      "%s", im->name);
		ck_assert_msg(im->update(0x12345678u, b, 0) == 0x12345678u,
			      "%s", im->name);
	}
	ck_assert_uint_eq(crc32c("123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(crc32c(NULL, 0), 0);
	ck_assert_uint_eq(ref_update(CRC32C_SEED, iscsi_read_pdu, 48),
			  ~0xD9963A56u);
}
END_TEST

/* Every length 0..1100 at every alignment 0..15, from varying states. */
START_TEST(test_lengths_alignments)
{
	const size_t max = 1100;
	uint8_t *buf = rand_buf(max, 1);
	uint64_t rs = 7;
	uint32_t start, want, got;
	size_t len, al, k;

	for (len = 0; len <= max; len++) {
		for (al = 0; al < 16; al++) {
			start = (len + al) & 1 ? CRC32C_SEED
					       : (uint32_t)iw_test_rand(&rs);
			want = ref_update(start, buf + al, len);
			for (k = 0; k < n_impls; k++) {
				got = impls[k].update(start, buf + al, len);
				ck_assert_msg(got == want,
					      "%s len %zu align %zu: %08x != "
					      "%08x",
					      impls[k].name, len, al, got,
					      want);
			}
		}
	}
	free(buf);
}
END_TEST

/* Large sizes and the SSE4.2 tier edges (3 lanes of 8192, 1024, 256). */
START_TEST(test_large_sizes)
{
	static const size_t sizes[] = {
		767,	      768,	  769,	      775,
		776,	      3071,	  3072,	      3073,
		3072 + 768,   3072 + 769, 24575,      24576,
		24577,	      24583,	  24584,      24576 + 3072 + 768 + 7,
		49152 + 3071, 65536,	  65536 + 13, 1048576 + 3,
	};
	const size_t max = 1048576 + 3;
	uint8_t *buf = rand_buf(max, 2);
	uint32_t want, got;
	size_t i, k, al;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (al = 0; al < 16; al += 5) {
			want = ref_update(CRC32C_SEED, buf + al, sizes[i]);
			for (k = 0; k < n_impls; k++) {
				got = impls[k].update(CRC32C_SEED, buf + al,
						      sizes[i]);
				ck_assert_msg(got == want,
					      "%s size %zu align %zu",
					      impls[k].name, sizes[i], al);
			}
		}
	}
	free(buf);
}
END_TEST

/* Streaming: the CRC over pieces equals the CRC over the whole. */
START_TEST(test_streaming_splits)
{
	const size_t max = 70000;
	uint8_t *buf = rand_buf(max, 3);
	uint64_t rs = 11;
	size_t cuts[6], ncut, len, i, j, k, pos, tmp;
	uint32_t want, c;

	/* Two pieces, every cut point of a 1100-byte buffer. */
	want = ref_update(CRC32C_SEED, buf, 1100);
	for (i = 0; i <= 1100; i++)
		for (k = 0; k < n_impls; k++) {
			c = impls[k].update(CRC32C_SEED, buf, i);
			c = impls[k].update(c, buf + i, 1100 - i);
			ck_assert_msg(c == want, "%s cut %zu", impls[k].name,
				      i);
		}

	/* Random lengths cut at 1..5 random points. */
	for (j = 0; j < 300; j++) {
		len = (size_t)(iw_test_rand(&rs) % max);
		ncut = 1 + (size_t)(iw_test_rand(&rs) % 5);
		for (i = 0; i < ncut; i++)
			cuts[i] = len ? (size_t)(iw_test_rand(&rs) % len) : 0;
		for (i = 1; i < ncut; i++) /* insertion sort */
			for (k = i; k > 0 && cuts[k - 1] > cuts[k]; k--) {
				tmp = cuts[k];
				cuts[k] = cuts[k - 1];
				cuts[k - 1] = tmp;
			}
		cuts[ncut] = len;
		want = ref_update(CRC32C_SEED, buf, len);
		for (k = 0; k < n_impls; k++) {
			c = CRC32C_SEED;
			pos = 0;
			for (i = 0; i <= ncut; i++) {
				c = impls[k].update(c, buf + pos,
						    cuts[i] - pos);
				pos = cuts[i];
			}
			ck_assert_msg(c == want, "%s len %zu cuts %zu",
				      impls[k].name, len, ncut);
		}
	}
	free(buf);
}
END_TEST

/* crc32c_update_iov over several layouts of one buffer. */
START_TEST(test_update_iov)
{
	const size_t max = 100000;
	uint8_t *buf = rand_buf(max, 4);
	struct iovec iov[64];
	uint64_t rs = 5;
	size_t n, pos, len, i, layout;
	uint32_t want, got;

	/* No iovecs: the state is unchanged. */
	ck_assert_uint_eq(crc32c_update_iov(0xDEADBEEFu, iov, 0), 0xDEADBEEFu);

	for (layout = 0; layout < 200; layout++) {
		n = 1 + layout % 64;
		pos = 0;
		for (i = 0; i < n; i++) {
			switch (layout % 4) {
			case 0: /* tiny pieces, some empty */
				len = (size_t)(iw_test_rand(&rs) % 9);
				break;
			case 1: /* FPDU-like: 2-byte header, payload */
				len = i & 1 ? (size_t)(iw_test_rand(&rs) % 1500)
					    : 2;
				break;
			case 2: /* markers: 4 bytes every 512 */
				len = i & 1 ? 4 : 508;
				break;
			default: /* large pieces across the SSE4.2 tiers */
				len = (size_t)(iw_test_rand(&rs) % 30000);
				break;
			}
			if (pos + len > max)
				len = max - pos;
			iov[i].iov_base = buf + pos;
			iov[i].iov_len = len;
			pos += len;
		}
		want = ref_update(CRC32C_SEED, buf, pos);
		got = crc32c_update_iov(CRC32C_SEED, iov, n);
		ck_assert_msg(got == want, "layout %zu (%zu iovecs, %zu bytes)",
			      layout, n, pos);
		/* An iovec array split in two calls streams the same. */
		got = crc32c_update_iov(CRC32C_SEED, iov, n / 2);
		got = crc32c_update_iov(got, iov + n / 2, n - n / 2);
		ck_assert_uint_eq(got, want);
	}
	free(buf);
}
END_TEST

/* GF(2) helpers: zero runs, combine, powers of x. */
START_TEST(test_gf2)
{
	const size_t max = 5000;
	uint8_t *zero = calloc(1, max);
	uint8_t *buf = rand_buf(max, 6);
	uint32_t a, b;
	size_t n;

	ck_assert_ptr_nonnull(zero);
	ck_assert_uint_eq(crc32c_xpow(0), 0x80000000u);
	ck_assert_uint_eq(crc32c_xpow(1), 0x40000000u);
	ck_assert_uint_eq(crc32c_xpow(31), 0x00000001u);
	/* x^32 mod P is P without its x^32 term. */
	ck_assert_uint_eq(crc32c_xpow(32), POLY);
	ck_assert_uint_eq(crc32c_mulmod(crc32c_xpow(1000), crc32c_xpow(2345)),
			  crc32c_xpow(3345));
	for (n = 0; n < max; n += 1 + n / 3) {
		ck_assert_uint_eq(crc32c_zeros(CRC32C_SEED, n),
				  ref_update(CRC32C_SEED, zero, n));
		a = ref_update(CRC32C_SEED, buf, max - n);
		b = ref_update(0, buf + max - n, n);
		ck_assert_uint_eq(crc32c_combine(a, b, n),
				  ref_update(CRC32C_SEED, buf, max));
	}
	free(zero);
	free(buf);
}
END_TEST

/* Selection: the first available backend of the table, stable. */
START_TEST(test_selected)
{
	const struct crc32c_backend *b, *sel = crc32c_selected();
	size_t n, i;

	ck_assert_ptr_nonnull(sel);
	ck_assert(sel->available());
	b = crc32c_backends(&n);
	ck_assert_uint_ge(n, 2);
	for (i = 0; i < n && !b[i].available(); i++)
		;
	ck_assert_ptr_eq(sel, &b[i]);
	ck_assert_ptr_eq(crc32c_selected(), sel);
	ck_assert_str_eq(b[n - 1].name, "slice8");
#ifdef HAVE_ISAL
	ck_assert_str_eq(sel->name, "isal");
#else
	if (crc32c_sse42_available())
		ck_assert_str_eq(sel->name, "sse42");
#endif
	fprintf(stderr, "crc32c_test: selected backend %s\n", sel->name);
}
END_TEST

static void *race_main(void *arg)
{
	uint32_t *out = arg;

	out[0] = crc32c_update(CRC32C_SEED, "123456789", 9);
	out[1] = crc32c_update(CRC32C_SEED, iscsi_read_pdu, 48);
	return crc32c_selected() ? arg : NULL;
}

/*
 * First use from several threads at once (each Check test runs in a fresh
 * fork, so nothing is selected yet unless CK_FORK=no): all agree.
 */
START_TEST(test_first_use_threads)
{
	pthread_t th[4];
	uint32_t out[4][2];
	void *ret;
	size_t i;

	for (i = 0; i < 4; i++)
		ck_assert_int_eq(
			pthread_create(&th[i], NULL, race_main, out[i]), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(th[i], &ret), 0);
		ck_assert_ptr_eq(ret, out[i]);
		ck_assert_uint_eq(out[i][0], ~0xE3069283u);
		ck_assert_uint_eq(out[i][1], ~0xD9963A56u);
	}
}
END_TEST

/*
 * Beyond INT_MAX octets (ISA-L takes an int length): 2 GiB + 21 zero
 * octets from a read-only anonymous mapping, against crc32c_zeros().
 * slicing-by-8 is left out for time.
 */
START_TEST(test_huge)
{
	const size_t len = ((size_t)1 << 31) + 21;
	const struct crc32c_backend *b;
	uint8_t *p;
	uint32_t want;
	size_t n, i;

	p = mmap(NULL, len, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr,
			"crc32c_test: no 2 GiB mapping, huge skipped\n");
		return;
	}
	want = crc32c_zeros(CRC32C_SEED, len);
	ck_assert_uint_eq(crc32c_update(CRC32C_SEED, p, len), want);
	b = crc32c_backends(&n);
	for (i = 0; i < n; i++) {
		if (!strcmp(b[i].name, "slice8") || !b[i].available())
			continue;
		ck_assert_msg(b[i].update(CRC32C_SEED, p, len) == want, "%s",
			      b[i].name);
	}
	munmap(p, len);
}
END_TEST

static Suite *crc32c_suite(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc = tcase_create("core");

	impls_setup();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_first_use_threads);
	tcase_add_test(tc, test_known_answers);
	tcase_add_test(tc, test_lengths_alignments);
	tcase_add_test(tc, test_large_sizes);
	tcase_add_test(tc, test_streaming_splits);
	tcase_add_test(tc, test_update_iov);
	tcase_add_test(tc, test_gf2);
	tcase_add_test(tc, test_selected);
	tcase_add_test(tc, test_huge);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(crc32c_suite)

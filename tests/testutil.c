/* tests/testutil.c: shared helpers for the Check suites (see testutil.h). */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

int iw_test_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void iw_test_feed_splits(const struct iw_test_rx_ops *ops, void *ctx,
			 const uint8_t *buf, size_t len)
{
	size_t cut, i;
	int rc;

	ops->reset(ctx);
	rc = ops->feed(ctx, buf, len);
	ops->check(ctx, rc);

	for (cut = 1; cut < len; cut++) {
		ops->reset(ctx);
		rc = ops->feed(ctx, buf, cut);
		if (rc >= 0)
			rc = ops->feed(ctx, buf + cut, len - cut);
		ops->check(ctx, rc);
	}

	ops->reset(ctx);
	rc = 0;
	for (i = 0; i < len && rc >= 0; i++)
		rc = ops->feed(ctx, buf + i, 1);
	ops->check(ctx, rc);
}

uint64_t iw_test_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

void iw_test_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(iw_test_rand(&seed) >> 56);
}

const char *iw_test_srcpath(const char *relpath)
{
	static char path[4096];
	const char *top = getenv("top_srcdir");

	snprintf(path, sizeof(path), "%s/%s", top && *top ? top : ".", relpath);
	return path;
}

uint8_t *iw_test_read_file(const char *relpath, size_t *len)
{
	FILE *f = fopen(iw_test_srcpath(relpath), "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else if (buf) {
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

uint32_t iw_test_crc32c_ref(const uint8_t *p, size_t len)
{
	uint32_t c = 0xFFFFFFFFu;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		c ^= p[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
	}
	return ~c;
}

size_t iw_test_llp_term(uint8_t *out, uint8_t ecode, bool crc, bool markers)
{
	static const uint8_t body[24] = {
		0x00, 0x16, 0x41, 0x47, 0, 0, 0, 0, 0,	  0, 0, 2,
		0,    0,    0,	  1,	0, 0, 0, 0, 0x20, 0, 0, 0,
	};
	size_t n = 0;
	uint32_t c;

	if (markers) {
		memset(out, 0, 4); /* Reserved 0, FPDUPTR 0 */
		n = 4;
	}
	memcpy(out + n, body, sizeof(body));
	out[n + 21] = ecode;
	n += sizeof(body);
	c = crc ? iw_test_crc32c_ref(out, n) : 0;
	out[n++] = (uint8_t)c;
	out[n++] = (uint8_t)(c >> 8);
	out[n++] = (uint8_t)(c >> 16);
	out[n++] = (uint8_t)(c >> 24);
	return n;
}

void iw_test_env_engines_two(void)
{
	ck_assert_int_eq(setenv("IWARP_ENGINES", "2", 1), 0);
}

void iw_test_env_socket_ring(void)
{
	ck_assert_int_eq(setenv("IWARP_SOCKET_IO", "ring", 1), 0);
}

void iw_test_env_default(void)
{
	unsetenv("IWARP_ENGINES");
	unsetenv("IWARP_SOCKET_IO");
}

bool iw_test_wait_count(const unsigned int *count, unsigned int want,
			double bound_s)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < want) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) +
			    (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >
		    bound_s)
			return false;
		sched_yield();
	}
	return true;
}

/*
 * bench/bench_crc.c: CRC-32C throughput per backend (`make bench-crc`).
 *
 * For each available backend and the crc32c_update dispatcher, hashes a
 * cache-resident buffer of 64 B .. 1 MiB from the seed, repeatedly for
 * about 0.2 s per cell (CLOCK_MONOTONIC), and prints GB/s (1e9 bytes/s).
 * A benchmark, not a test: nothing is asserted.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/crc32c.h"

#define CELL_NS 200000000LL /* ~0.2 s per cell */
#define BUF_MAX ((size_t)1 << 20)

typedef uint32_t update_fn(uint32_t crc, const void *buf, size_t len);

static const size_t sizes[] = {64, 1024, 4096, 65536, BUF_MAX};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static volatile uint32_t sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* GB/s of |fn| over |len| bytes of |buf|, each call from the seed. */
static double bench_cell(update_fn *fn, const uint8_t *buf, size_t len)
{
	size_t batch = BUF_MAX / len, i;
	unsigned long long bytes = 0;
	long long t0, dt;
	uint32_t acc = 0;

	fn(CRC32C_SEED, buf, len); /* warm up: tables, dispatch, caches */
	t0 = now_ns();
	do {
		for (i = 0; i < batch; i++)
			acc ^= fn(CRC32C_SEED, buf, len);
		bytes += (unsigned long long)(batch * len);
		dt = now_ns() - t0;
	} while (dt < CELL_NS);
	sink = acc;
	return (double)bytes / (double)dt; /* bytes per ns == GB/s */
}

static void bench_row(const char *name, update_fn *fn, const uint8_t *buf)
{
	size_t i;

	printf("%-10s", name);
	fflush(stdout);
	for (i = 0; i < NSIZES; i++) {
		printf(" %9.2f", bench_cell(fn, buf, sizes[i]));
		fflush(stdout);
	}
	printf("\n");
}

int main(void)
{
	const struct crc32c_backend *sel = crc32c_selected();
	const struct crc32c_backend *b;
	uint8_t *buf = malloc(BUF_MAX);
	size_t n, i;

	if (!buf) {
		perror("bench_crc: malloc");
		return EXIT_FAILURE;
	}
	for (i = 0; i < BUF_MAX; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 24);

	b = crc32c_backends(&n);
	printf("CRC-32C throughput, GB/s (1e9 B/s), buffer in cache, "
	       "~%.1f s per cell\n",
	       (double)CELL_NS / 1e9);
	printf("%-10s %9s %9s %9s %9s %9s\n", "backend", "64 B", "1 KiB",
	       "4 KiB", "64 KiB", "1 MiB");
	for (i = 0; i < n; i++) {
		if (!b[i].available()) {
			printf("%-10s (not available)\n", b[i].name);
			continue;
		}
		bench_row(b[i].name, b[i].update, buf);
	}
	bench_row("dispatch", crc32c_update, buf);
	printf("selected: %s (crc32c_update: the dispatch row)\n", sel->name);
	free(buf);
	return EXIT_SUCCESS;
}

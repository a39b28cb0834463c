/*
 * tools/ping/stats.c: round-trip statistics (count, min, mean, p50, p99,
 * max) and the monotonic clock.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "tools/ping/ping.h"

void ping_stats_init(struct ping_stats *s)
{
	s->count = 0;
	s->min_ns = UINT64_MAX;
	s->max_ns = 0;
	s->sum_ns = 0.0;
	s->sample = NULL;
	s->n_sample = 0;
	s->cap = 0;
	s->rng = UINT64_C(0x9e3779b97f4a7c15);
}

/* xorshift64: reservoir slot choice, no quality needed. */
static uint64_t stats_rand(struct ping_stats *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

int ping_stats_add(struct ping_stats *s, uint64_t ns)
{
	uint32_t v = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	uint64_t slot;

	s->count++;
	s->sum_ns += (double)ns;
	if (ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;

	if (s->n_sample == s->cap && s->cap < PING_STATS_KEEP) {
		uint32_t cap = s->cap ? s->cap * 2 : 1024;
		uint32_t *p;

		if (cap > PING_STATS_KEEP)
			cap = PING_STATS_KEEP;
		p = realloc(s->sample, (size_t)cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->sample = p;
		s->cap = cap;
	}
	if (s->n_sample < s->cap) {
		s->sample[s->n_sample++] = v;
		return 0;
	}
	/* reservoir (Algorithm R): keep each sample with p = cap / count */
	slot = stats_rand(s) % s->count;
	if (slot < s->cap)
		s->sample[slot] = v;
	return 0;
}

static int stats_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

uint64_t ping_stats_percentile(struct ping_stats *s, double pct)
{
	double rank;
	uint32_t idx;

	if (!s->n_sample)
		return 0;
	qsort(s->sample, s->n_sample, sizeof(*s->sample), stats_cmp);
	/* nearest rank: ceil(pct / 100 * n), 1-based */
	rank = pct / 100.0 * (double)s->n_sample;
	idx = (uint32_t)rank;
	if ((double)idx < rank)
		idx++;
	if (idx < 1)
		idx = 1;
	if (idx > s->n_sample)
		idx = s->n_sample;
	return s->sample[idx - 1];
}

void ping_stats_free(struct ping_stats *s)
{
	free(s->sample);
	s->sample = NULL;
	s->n_sample = 0;
	s->cap = 0;
}

uint64_t ping_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) +
	       (uint64_t)ts.tv_nsec;
}

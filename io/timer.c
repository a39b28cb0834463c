/*
 * io/timer.c: one-shot timers of the engine, a binary min-heap by deadline.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "io/engine_int.h"
#include "util/mem.h"

#define TIMER_NONE UINT32_MAX

void engine_timer_init(struct engine_timer *t)
{
	t->deadline_ns = 0;
	t->cb = NULL;
	t->arg = NULL;
	t->idx = TIMER_NONE;
}

bool engine_timer_armed(const struct engine_timer *t)
{
	return t->idx != TIMER_NONE;
}

static void heap_set(struct engine *eng, uint32_t i, struct engine_timer *t)
{
	eng->heap[i] = t;
	t->idx = i;
}

static void heap_up(struct engine *eng, uint32_t i)
{
	struct engine_timer *t = eng->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (eng->heap[parent]->deadline_ns <= t->deadline_ns)
			break;
		heap_set(eng, i, eng->heap[parent]);
		i = parent;
	}
	heap_set(eng, i, t);
}

static void heap_down(struct engine *eng, uint32_t i)
{
	struct engine_timer *t = eng->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= eng->n_timers)
			break;
		if (c + 1 < eng->n_timers &&
		    eng->heap[c + 1]->deadline_ns < eng->heap[c]->deadline_ns)
			c++;
		if (t->deadline_ns <= eng->heap[c]->deadline_ns)
			break;
		heap_set(eng, i, eng->heap[c]);
		i = c;
	}
	heap_set(eng, i, t);
}

void engine_timer_cancel(struct engine *eng, struct engine_timer *t)
{
	uint32_t i = t->idx;
	struct engine_timer *last;

	if (i == TIMER_NONE)
		return;
	t->idx = TIMER_NONE;
	last = eng->heap[--eng->n_timers];
	if (last == t)
		return;
	heap_set(eng, i, last);
	heap_down(eng, i);
	heap_up(eng, last->idx);
}

/* Grows the heap to hold at least |need| timers. 0 or -ENOMEM. */
static int timer_heap_grow(struct engine *eng, uint32_t need)
{
	struct engine_timer **h;
	uint32_t cap = eng->heap_cap ? eng->heap_cap : 16;

	if (need <= eng->heap_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	h = iw_realloc(eng->heap, cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	eng->heap = h;
	eng->heap_cap = cap;
	return 0;
}

int engine_timer_reserve(struct engine *eng, uint32_t n)
{
	int rc = timer_heap_grow(eng, eng->timers_reserved + n);

	if (!rc)
		eng->timers_reserved += n;
	return rc;
}

void engine_timer_unreserve(struct engine *eng, uint32_t n)
{
	eng->timers_reserved -=
		n < eng->timers_reserved ? n : eng->timers_reserved;
}

int engine_timer_start(struct engine *eng, struct engine_timer *t, uint64_t ms,
		       void (*cb)(void *arg), void *arg)
{
	engine_timer_cancel(eng, t);
	if (eng->n_timers == eng->heap_cap &&
	    timer_heap_grow(eng, eng->heap_cap + 1))
		return -ENOMEM;
	t->cb = cb;
	t->arg = arg;
	t->deadline_ns = engine_now_ns() + ms * 1000000u;
	heap_set(eng, eng->n_timers++, t);
	heap_up(eng, t->idx);
	return 0;
}

int engine_timers_run(struct engine *eng, uint64_t now)
{
	int n = 0;

	/* Bounded: timers re-armed by their callback with 0 ms wait for the
	 * next pass. */
	while (eng->n_timers && eng->heap[0]->deadline_ns <= now && n < 64) {
		struct engine_timer *t = eng->heap[0];

		engine_timer_cancel(eng, t);
		t->cb(t->arg);
		n++;
	}
	return n;
}

uint64_t engine_timers_next(struct engine *eng, uint64_t now)
{
	if (!eng->n_timers)
		return UINT64_MAX;
	if (eng->heap[0]->deadline_ns <= now)
		return 0;
	return eng->heap[0]->deadline_ns - now;
}

void engine_timers_fini(struct engine *eng)
{
	while (eng->n_timers)
		engine_timer_cancel(eng, eng->heap[0]);
	iw_free(eng->heap);
	eng->heap = NULL;
	eng->heap_cap = 0;
}

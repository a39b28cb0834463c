/*
 * io/engine_duty.h: the progress thread's duty: how much of its time goes to
 * work. The ADAPTIVE mode sleeps at once, instead of polling through its busy
 * window, while the share is high (io/engine.c, engine_thread_main).
 *
 * Busy is the time from the first poll that found work to the first that
 * did not; idle the time from there to the next poll that found work,
 * polled or asleep. Both are halved whenever their sum passes
 * ENGINE_DUTY_SPAN_NS, so the share follows the last few milliseconds.
 */
#ifndef IWARP_IO_ENGINE_DUTY_H
#define IWARP_IO_ENGINE_DUTY_H

#include <stdbool.h>
#include <stdint.h>

#define ENGINE_DUTY_SPAN_NS  2000000u
#define ENGINE_DUTY_HIGH_PCT 50u

struct engine_duty {
	uint64_t mark; /* start of the current period; 0 before the first */
	uint64_t busy_ns, idle_ns;
	bool working;
};

/* The thread's polls found work (working) or none at time now. */
static inline void engine_duty_note(struct engine_duty *d, bool working,
				    uint64_t now)
{
	if (d->working == working)
		return;
	if (d->mark) {
		if (d->working)
			d->busy_ns += now - d->mark;
		else
			d->idle_ns += now - d->mark;
		if (d->busy_ns + d->idle_ns > ENGINE_DUTY_SPAN_NS) {
			d->busy_ns /= 2;
			d->idle_ns /= 2;
		}
	}
	d->mark = now;
	d->working = working;
}

/* True while the thread works ENGINE_DUTY_HIGH_PCT of its time or more. */
static inline bool engine_duty_high(const struct engine_duty *d)
{
	uint64_t all = d->busy_ns + d->idle_ns;

	return all && d->busy_ns * 100u >= all * ENGINE_DUTY_HIGH_PCT;
}

#endif

/*
 * tools/bw/idle.c: the idle policy of the BW loops (see idle.h).
 */
#include "tools/bw/idle.h"

void bw_idle_init(struct bw_idle *w, uint64_t spin_ns)
{
	w->since = 0;
	w->armed = 0;
	w->spin_ns = spin_ns;
}

int bw_idle_may_wait(int busy, int have_chan, int completion_due,
		     int credit_wait)
{
	return !busy && have_chan && (completion_due || credit_wait);
}

enum bw_idle_act bw_idle_next(struct bw_idle *w, uint64_t now, int busy,
			      int have_chan, int completion_due,
			      int credit_wait)
{
	if (!bw_idle_may_wait(busy, have_chan, completion_due, credit_wait)) {
		w->since = 0;
		w->armed = 0;
		return BW_IDLE_SPIN;
	}
	if (completion_due && w->armed) {
		/* armed, and the pass after the arm found nothing */
		w->since = 0;
		w->armed = 0;
		return BW_IDLE_SLEEP;
	}
	if (!w->since) {
		w->since = now;
		if (w->spin_ns)
			return BW_IDLE_SPIN;
	}
	if (now - w->since < w->spin_ns)
		return BW_IDLE_SPIN;
	return completion_due ? BW_IDLE_ARM : BW_IDLE_NAP;
}

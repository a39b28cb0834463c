/*
 * tools/bw/idle.h: what a BW loop does when a pass posted and reaped
 * nothing (pure policy, no I/O; run.c carries the actions out).
 */
#ifndef TOOLS_BW_IDLE_H
#define TOOLS_BW_IDLE_H

#include <stdint.h>

/*
 * A Send test's sender waiting for a credit naps this long per idle pass
 * once the spin window has passed. Credits arrive by RDMA Write, which
 * completes nothing on the sender, so it cannot sleep on the completion
 * channel; spinning instead took a core from the three threads that carry
 * the credit back (its engine, the peer's engine and application) on a
 * 2-core machine, halving 4 KiB Send (bench/README.md).
 */
#define BW_CREDIT_NAP_US 50

/* What the caller does after bw_idle_next. */
enum bw_idle_act {
	BW_IDLE_SPIN,  /* poll again at once */
	BW_IDLE_ARM,   /* arm the CQs, then poll once more */
	BW_IDLE_SLEEP, /* sleep on the completion channel */
	BW_IDLE_NAP,   /* sleep BW_CREDIT_NAP_US (nothing would wake us) */
};

/* Idle state of a BW loop; zero it (or bw_idle_reset) to start. */
struct bw_idle {
	uint64_t since;	  /* first empty pass (ns), 0 = not idle */
	uint64_t spin_ns; /* busy-poll window before arming / napping */
	int armed;	  /* the CQs were armed after the last empty pass */
};

/* Starts |w| with a busy-poll window of |spin_ns| (0: none). */
void bw_idle_init(struct bw_idle *w, uint64_t spin_ns);

/*
 * Whether a pass may lead anywhere but BW_IDLE_SPIN: it posted and reaped
 * nothing (!|busy|), the loop may sleep (|have_chan|) and a completion is
 * due or a Send sender waits for credit (arguments as for bw_idle_next).
 * bw_idle_next reads its |now| only when this holds, so a caller may skip
 * the clock otherwise. Returns 1 or 0.
 */
int bw_idle_may_wait(int busy, int have_chan, int completion_due,
		     int credit_wait);

/*
 * The next step after a pass at |now| (ns): |busy| when the pass posted or
 * reaped something; |have_chan| when the loop may sleep (hybrid or event
 * wait; 0 for spin mode and INLINE progress, which only spin);
 * |completion_due| when a completion on the armed CQs is bound to come
 * and nothing else can wake us; |credit_wait| when a Send test's sender
 * is blocked on its peer's credit. BW_IDLE_ARM and BW_IDLE_SLEEP only
 * with |completion_due|, BW_IDLE_NAP only with |credit_wait|, each once
 * the spin window has passed. Set w->armed after a successful arm.
 */
enum bw_idle_act bw_idle_next(struct bw_idle *w, uint64_t now, int busy,
			      int have_chan, int completion_due,
			      int credit_wait);

#endif

/*
 * tools/bw/bw_idle_test.c: Check suite for the idle policy of iwarp_bw's
 * BW loops (tools/bw/idle.c).
 */
#include "config.h"

#include "testutil.h"
#include "tools/bw/idle.h"

#define US 1000u

/* Hybrid wait, a completion due: spin for the window, arm, sleep. */
START_TEST(completion_due_spins_arms_sleeps)
{
	struct bw_idle w;

	bw_idle_init(&w, 20 * US);
	ck_assert_int_eq(bw_idle_next(&w, 1000 * US, 0, 1, 1, 0), BW_IDLE_SPIN);
	ck_assert_int_eq(bw_idle_next(&w, 1019 * US, 0, 1, 1, 0), BW_IDLE_SPIN);
	ck_assert_int_eq(bw_idle_next(&w, 1020 * US, 0, 1, 1, 0), BW_IDLE_ARM);
	w.armed = 1;
	ck_assert_int_eq(bw_idle_next(&w, 1021 * US, 0, 1, 1, 0),
			 BW_IDLE_SLEEP);
	/* after the sleep a new window starts */
	ck_assert_int_eq(bw_idle_next(&w, 2000 * US, 0, 1, 1, 0), BW_IDLE_SPIN);
}
END_TEST

/* Event wait (no window): arm at once. */
START_TEST(event_wait_arms_at_once)
{
	struct bw_idle w;

	bw_idle_init(&w, 0);
	ck_assert_int_eq(bw_idle_next(&w, 5 * US, 0, 1, 1, 0), BW_IDLE_ARM);
}
END_TEST

/*
 * A Send sender blocked on credits naps after the window, again and again,
 * instead of spinning for as long as the credit takes (no completion will
 * wake it, so it never arms or sleeps on the channel).
 */
START_TEST(credit_wait_naps)
{
	struct bw_idle w;
	int i;

	bw_idle_init(&w, 20 * US);
	ck_assert_int_eq(bw_idle_next(&w, 1000 * US, 0, 1, 0, 1), BW_IDLE_SPIN);
	ck_assert_int_eq(bw_idle_next(&w, 1010 * US, 0, 1, 0, 1), BW_IDLE_SPIN);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(bw_idle_next(&w,
					      (1020u + 60u * (unsigned)i) * US,
					      0, 1, 0, 1),
				 BW_IDLE_NAP);
	ck_assert_int_eq(w.armed, 0);
	/* the credit came: the pass posted, the window starts over */
	ck_assert_int_eq(bw_idle_next(&w, 1400 * US, 1, 1, 0, 0), BW_IDLE_SPIN);
	ck_assert_int_eq(bw_idle_next(&w, 1401 * US, 0, 1, 0, 1), BW_IDLE_SPIN);
	ck_assert_int_eq(bw_idle_next(&w, 1421 * US, 0, 1, 0, 1), BW_IDLE_NAP);
}
END_TEST

/* Spin mode and INLINE progress (no channel) and busy passes only spin;
 * so does a loop with neither a completion due nor a credit wait. */
START_TEST(spin_cases)
{
	struct bw_idle w;
	uint64_t t;

	bw_idle_init(&w, 20 * US);
	for (t = 0; t < 1000 * US; t += 50 * US) {
		ck_assert_int_eq(bw_idle_next(&w, t, 0, 0, 1, 0), BW_IDLE_SPIN);
		ck_assert_int_eq(bw_idle_next(&w, t, 0, 0, 0, 1), BW_IDLE_SPIN);
		ck_assert_int_eq(bw_idle_next(&w, t, 1, 1, 1, 0), BW_IDLE_SPIN);
		ck_assert_int_eq(bw_idle_next(&w, t, 0, 1, 0, 0), BW_IDLE_SPIN);
	}
}
END_TEST

/*
 * The predicate run.c uses to skip the clock: false on a busy pass, without
 * a channel and with nothing to wait for; true on an idle pass with a
 * channel and a completion due, a credit wait or both.
 */
START_TEST(may_wait_cases)
{
	/* busy, have_chan, completion_due, credit_wait */
	ck_assert_int_eq(bw_idle_may_wait(1, 1, 1, 1), 0);
	ck_assert_int_eq(bw_idle_may_wait(1, 1, 1, 0), 0);
	ck_assert_int_eq(bw_idle_may_wait(1, 1, 0, 1), 0);
	ck_assert_int_eq(bw_idle_may_wait(0, 0, 1, 1), 0);
	ck_assert_int_eq(bw_idle_may_wait(0, 0, 1, 0), 0);
	ck_assert_int_eq(bw_idle_may_wait(0, 0, 0, 1), 0);
	ck_assert_int_eq(bw_idle_may_wait(0, 1, 0, 0), 0);
	ck_assert_int_eq(bw_idle_may_wait(0, 1, 1, 0), 1);
	ck_assert_int_eq(bw_idle_may_wait(0, 1, 0, 1), 1);
	ck_assert_int_eq(bw_idle_may_wait(0, 1, 1, 1), 1);
}
END_TEST

/*
 * Where the predicate is false bw_idle_next spins whatever the time (so a
 * caller that passes 0 there loses nothing); where it holds, with no spin
 * window, it arms or naps: the time matters there, for every combination.
 */
START_TEST(may_wait_matches_next)
{
	int bits;

	for (bits = 0; bits < 16; bits++) {
		int busy = bits & 1, chan = !!(bits & 2);
		int due = !!(bits & 4), credit = !!(bits & 8);
		struct bw_idle w;
		enum bw_idle_act a;

		bw_idle_init(&w, 0);
		a = bw_idle_next(&w, 7 * US, busy, chan, due, credit);
		if (bw_idle_may_wait(busy, chan, due, credit)) {
			ck_assert_int_eq(a, due ? BW_IDLE_ARM : BW_IDLE_NAP);
		} else {
			ck_assert_int_eq(a, BW_IDLE_SPIN);
			bw_idle_init(&w, 20 * US);
			ck_assert_int_eq(
				bw_idle_next(&w, 0, busy, chan, due, credit),
				BW_IDLE_SPIN);
			ck_assert_int_eq(bw_idle_next(&w, 1000 * US, busy, chan,
						      due, credit),
					 BW_IDLE_SPIN);
		}
	}
}
END_TEST

static Suite *bw_idle_suite(void)
{
	Suite *s = suite_create("bw_idle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, completion_due_spins_arms_sleeps);
	tcase_add_test(tc, event_wait_arms_at_once);
	tcase_add_test(tc, credit_wait_naps);
	tcase_add_test(tc, spin_cases);
	tcase_add_test(tc, may_wait_cases);
	tcase_add_test(tc, may_wait_matches_next);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(bw_idle_suite)

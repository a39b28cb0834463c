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

static Suite *bw_idle_suite(void)
{
	Suite *s = suite_create("bw_idle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, completion_due_spins_arms_sleeps);
	tcase_add_test(tc, event_wait_arms_at_once);
	tcase_add_test(tc, credit_wait_naps);
	tcase_add_test(tc, spin_cases);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(bw_idle_suite)

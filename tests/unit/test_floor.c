/*
 * test_floor.c: the engine's timings of a sign and a verify (floor.c).  A
 * window's floor is the median of the batches timed inside it: a window
 * with none gets 5 timed at its end; a window that began before them takes
 * them and times nothing more; each figure is a real CPU time in a sane
 * range, the median between the extremes.
 */
#include <check.h>
#include <string.h>

#include "clock.h"
#include "engine.h"

START_TEST(test_window_batches)
{
	struct run r;
	struct floor_cost fc;
	uint64_t t0;

	memset(&r, 0, sizeof(r));
	t0 = clock_mono_us();
	/* Nothing timed yet: five at the end. */
	ck_assert_int_eq(floor_cost(&r, t0, &fc), 0);
	ck_assert_uint_eq(fc.batches, 5);
	ck_assert_uint_eq(fc.late, 5);
	ck_assert(fc.sign_s > 1e-7 && fc.sign_s < 0.1);
	ck_assert(fc.verify_s > 1e-7 && fc.verify_s < 0.1);
	ck_assert(fc.verify_lo_s <= fc.verify_s);
	ck_assert(fc.verify_s <= fc.verify_hi_s);
	/* The same window again: those five are inside it, none is added. */
	ck_assert_int_eq(floor_cost(&r, t0, &fc), 0);
	ck_assert_uint_eq(fc.batches, 5);
	ck_assert_uint_eq(fc.late, 0);
	/* A window that opens now holds none of them. */
	ck_assert_int_eq(floor_cost(&r, clock_mono_us() + 1, &fc), 0);
	ck_assert_uint_eq(fc.batches, 5);
	ck_assert_uint_eq(fc.late, 5);
	/* And the first window now holds all ten. */
	ck_assert_int_eq(floor_cost(&r, t0, &fc), 0);
	ck_assert_uint_eq(fc.batches, 10);
	ck_assert_uint_eq(fc.late, 0);
	floor_free(&r);
	ck_assert_ptr_null(r.floor);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("floor");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_window_batches);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

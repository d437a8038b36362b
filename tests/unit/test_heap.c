/*
 * test_heap.c: when the daemon's tick trims the heap (peerd/heap.c).  A
 * look at the heap is due a period after the last, only at a tick with no
 * frame received since the tick before (put off HEAP_PUT_OFF periods at
 * most); a trim pays only when the free bytes rose HEAP_TRIM_MIN above the
 * least seen since the last trim.  The ticks here are driven by hand.
 */
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "heap.h"
#include "peerd_stub.h"

#define PERIOD	1000u
#define TICK	250u

/* Tick every TICK ms from t for ms, frames coming in at rate per tick. */
static int
looks(struct heap_trim *h, uint64_t *t, uint64_t *frames, uint64_t ms,
    unsigned rate)
{
	int n = 0;

	for (uint64_t end = *t + ms; *t < end; *t += TICK) {
		*frames += rate;
		n += heap_look_due(h, *t, PERIOD, *frames);
	}
	return n;
}

START_TEST(no_look_while_input_flows_then_one_once_idle)
{
	struct heap_trim h = { .last_ms = 100000 };
	uint64_t t = 100000, frames = 0;

	/* A look just now; the first idle tick a period on looks again. */
	ck_assert_int_eq(looks(&h, &t, &frames, PERIOD + TICK, 0), 1);
	/*
	 * Frames on every tick (a burst): no look for HEAP_PUT_OFF periods,
	 * then one, however long the burst.
	 */
	ck_assert_int_eq(looks(&h, &t, &frames, (HEAP_PUT_OFF - 1) * PERIOD,
	    5), 0);
	ck_assert_int_eq(looks(&h, &t, &frames, PERIOD + TICK, 5), 1);
	ck_assert_int_eq(looks(&h, &t, &frames, (HEAP_PUT_OFF - 1) * PERIOD,
	    5), 0);
	/* The input stops: the first tick with none new looks at once. */
	ck_assert_int_eq(looks(&h, &t, &frames, TICK, 5), 0);
	ck_assert_int_eq(looks(&h, &t, &frames, TICK, 0), 1);
	/* Idle from then on: one look a period. */
	ck_assert_int_eq(looks(&h, &t, &frames, 4 * PERIOD, 0), 4);
}
END_TEST

START_TEST(a_trim_pays_only_for_bytes_freed_since_the_last)
{
	struct heap_trim h = { 0 };
	const size_t mib = HEAP_TRIM_MIN;

	/* Free bytes that stay (a fragmented heap, trimmed or not): never. */
	for (int i = 0; i < 10; i++)
		ck_assert(!heap_trim_pays(&h, 3 * mib));
	/* Reused, then freed again, HEAP_TRIM_MIN above the low: once. */
	ck_assert(!heap_trim_pays(&h, mib / 2));
	ck_assert(!heap_trim_pays(&h, mib));
	ck_assert(heap_trim_pays(&h, mib / 2 + mib));
	ck_assert(!heap_trim_pays(&h, mib / 2 + mib));
	ck_assert(!heap_trim_pays(&h, 2 * mib));
	ck_assert(heap_trim_pays(&h, mib / 2 + 2 * mib));
}
END_TEST

static Suite *
heap_suite(void)
{
	Suite *s = suite_create("heap");
	TCase *tc = tcase_create("trim");

	tcase_add_test(tc, no_look_while_input_flows_then_one_once_idle);
	tcase_add_test(tc, a_trim_pays_only_for_bytes_freed_since_the_last);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(heap_suite());
	int nf;

	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

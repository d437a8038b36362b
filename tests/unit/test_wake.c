/*
 * test_wake.c: the daemon's timers with slack (peerd/wake.c), on
 * fake_clock.h's time.  wake_serve is what the loop calls after every
 * turn and what the shared timer calls when it fires; the test calls it
 * by hand at the times it sets (and lets the shared timer fire once).
 * What it shows: a loop turn runs what is due and nothing early; the
 * timer's own wake-up runs what is due and what is due within its early
 * slack (a tick and an IHAVE, in one wake-up); a timer with late slack runs at a later serve inside its window
 * and never before its due time; a stopped or re-armed timer does not run
 * at its old time; a timer that re-arms itself for a window still open
 * runs once a serve (no spin), and one it arms is served in the same
 * wake-up.
 */
#include <stdint.h>
#include <stdlib.h>

#include <check.h>
#include <event2/event.h>

#include "fake_clock.h"
#include "peerd_stub.h"
#include "stats.h"
#include "wake.h"

static struct wake	*tick, *ihave, *other;
static unsigned		 ran_tick, ran_ihave, ran_other;
static bool		 rearm_self, arm_other;

static uint64_t
t0(void)
{
	return FAKE_CLOCK_START_US / 1000u;
}

static void
tick_fn(void *arg)
{
	(void)arg;
	ran_tick++;
	if (rearm_self)
		wake_at(tick, clock_mono_ms(), 0, 0);
	if (arm_other)
		wake_at(other, clock_mono_ms(), 0, 0);
}

static void
ihave_fn(void *arg)
{
	(void)arg;
	ran_ihave++;
}

static void
other_fn(void *arg)
{
	(void)arg;
	ran_other++;
}

static void
setup(void)
{
	stub_conf();
	pd->base = event_base_new();
	stats_init();
	fake_now_us = FAKE_CLOCK_START_US;
	ran_tick = ran_ihave = ran_other = 0;
	rearm_self = arm_other = false;
	tick = wake_new("tick", tick_fn, NULL);
	ihave = wake_new("ihave", ihave_fn, NULL);
	other = wake_new("other", other_fn, NULL);
	ck_assert_ptr_nonnull(tick);
	ck_assert_ptr_nonnull(ihave);
	ck_assert_ptr_nonnull(other);
}

static void
teardown(void)
{
	wake_free(tick);
	wake_free(ihave);
	wake_free(other);
	event_base_free(pd->base);
}

START_TEST(open_windows_run_in_one_serve)
{
	uint64_t due;

	/* A loop turn (a frame woke the peer): what is due, nothing early. */
	wake_at(tick, t0() + 1000, 0, 250);
	wake_at(ihave, t0() + 1100, 100, 0);
	fake_clock_to_ms(t0() + 999);
	wake_serve();
	ck_assert_uint_eq(ran_tick + ran_ihave, 0);
	ck_assert(wake_armed(ihave, &due));
	ck_assert_uint_eq(due, t0() + 1100);
	fake_clock_to_ms(t0() + 1000);
	wake_serve();
	ck_assert_uint_eq(ran_tick, 1);
	ck_assert_uint_eq(ran_ihave, 0);
	ck_assert(!wake_fired());
	fake_clock_to_ms(t0() + 1100);
	wake_serve();
	ck_assert_uint_eq(ran_ihave, 1);
	ck_assert_uint_eq(pd_metrics.wake_early, 0);
	/*
	 * The shared timer's own wake-up (5 ms on, real time as well as
	 * fake): the tick due then, and the IHAVE due within its early slack
	 * with it.
	 */
	wake_at(tick, t0() + 1105, 0, 0);
	wake_at(ihave, t0() + 1160, 100, 0);
	fake_clock_to_ms(t0() + 1105);
	event_base_loop(pd->base, EVLOOP_ONCE);
	ck_assert_uint_eq(pd_metrics.wake_timer_runs, 1);
	ck_assert_uint_eq(ran_tick, 2);
	ck_assert_uint_eq(ran_ihave, 2);		/* 55 ms early */
	ck_assert_uint_eq(pd_metrics.wake_early, 1);
	ck_assert(!wake_armed(tick, NULL));
	ck_assert(!wake_armed(ihave, NULL));
	wake_serve();
	ck_assert_uint_eq(ran_tick + ran_ihave, 4);	/* each ran once */
}
END_TEST

START_TEST(late_slack_rides_a_later_wakeup)
{
	wake_at(tick, t0() + 1000, 0, 250);
	fake_clock_to_ms(t0() + 990);
	wake_serve();				/* before its due: never */
	ck_assert_uint_eq(ran_tick, 0);
	fake_clock_advance_ms(210);		/* a frame, 200 ms on */
	wake_serve();
	ck_assert_uint_eq(ran_tick, 1);
	ck_assert_uint_eq(pd_metrics.wake_late, 1);
}
END_TEST

START_TEST(stopped_or_moved_timers_keep_quiet)
{
	wake_at(tick, t0() + 1000, 0, 0);
	wake_at(ihave, t0() + 1000, 0, 0);
	wake_stop(tick);
	wake_at(ihave, t0() + 3000, 0, 0);	/* moved later */
	fake_clock_to_ms(t0() + 1000);
	wake_serve();
	ck_assert_uint_eq(ran_tick + ran_ihave, 0);
	fake_clock_to_ms(t0() + 3000);
	wake_serve();
	ck_assert_uint_eq(ran_tick, 0);
	ck_assert_uint_eq(ran_ihave, 1);
}
END_TEST

START_TEST(a_timer_rearmed_open_runs_once_a_serve)
{
	rearm_self = arm_other = true;
	wake_at(tick, t0() + 10, 0, 0);
	fake_clock_to_ms(t0() + 10);
	wake_serve();
	ck_assert_uint_eq(ran_tick, 1);		/* not a spin */
	ck_assert_uint_eq(ran_other, 1);	/* armed by it, same wake-up */
	ck_assert(wake_armed(tick, NULL));
	rearm_self = arm_other = false;
	wake_serve();
	ck_assert_uint_eq(ran_tick, 2);
	ck_assert_uint_eq(ran_other, 1);
}
END_TEST

static Suite *
wake_suite(void)
{
	Suite *s = suite_create("wake");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, open_windows_run_in_one_serve);
	tcase_add_test(tc, late_slack_rides_a_later_wakeup);
	tcase_add_test(tc, stopped_or_moved_timers_keep_quiet);
	tcase_add_test(tc, a_timer_rearmed_open_runs_once_a_serve);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(wake_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

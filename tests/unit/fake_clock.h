/*
 * fake_clock.h: one stand-in for common/clock.c, for the unit tests that
 * drive a module's timers (view.c's swaps, pings and labels) without
 * waiting for them.  Include it once, from the test's own .c file: it
 * defines clock_* (so the archive's clock.o is not pulled in).  Time
 * stands still until the test moves it with fake_clock_advance_ms or
 * fake_clock_to_ms; it starts at FAKE_CLOCK_START_US, far from zero, as a
 * host's monotonic clock is.
 */
#ifndef FAKE_CLOCK_H
#define FAKE_CLOCK_H

#include <stdint.h>
#include <sys/time.h>

#include "clock.h"

#define FAKE_CLOCK_START_US	(1000000ull * 1000000ull)

static uint64_t	fake_now_us = FAKE_CLOCK_START_US;

uint64_t
clock_mono_us(void)
{
	return fake_now_us;
}

uint64_t
clock_mono_ms(void)
{
	return fake_now_us / 1000u;
}

struct timeval
clock_tv_until_ms(uint64_t due_ms)
{
	uint64_t now = clock_mono_ms();
	struct timeval tv = { 0, 0 };

	if (due_ms > now) {
		tv.tv_sec = (time_t)((due_ms - now) / 1000);
		tv.tv_usec = (suseconds_t)((due_ms - now) % 1000) * 1000;
	}
	return tv;
}

static void
fake_clock_advance_ms(uint64_t ms)
{
	fake_now_us += ms * 1000u;
}

/* Move the clock to mono_ms unless it is already past it. */
static void
fake_clock_to_ms(uint64_t mono_ms)
{
	if (mono_ms * 1000u > fake_now_us)
		fake_now_us = mono_ms * 1000u;
}

#endif

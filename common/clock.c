/*
 * clock.c: monotonic clock helpers (see clock.h).
 */
#include <time.h>

#include "clock.h"

uint64_t
clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t
clock_mono_ms(void)
{
	return clock_mono_us() / 1000u;
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

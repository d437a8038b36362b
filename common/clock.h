/*
 * clock.h: the monotonic microsecond clock shared by every process on a
 * host.  Writers stamp entries with it so that latencies across processes
 * (write-to-visible, write-to-take) can be measured on one machine; the
 * HLC's millisecond physical part is for ordering only (docs/report.md).
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>
#include <sys/time.h>

/* CLOCK_MONOTONIC in microseconds. */
uint64_t	clock_mono_us(void);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t	clock_mono_ms(void);
/* From now until due_ms of clock_mono_ms() (zero if past): a timer's wait. */
struct timeval	clock_tv_until_ms(uint64_t due_ms);

#endif

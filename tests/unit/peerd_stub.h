/*
 * peerd_stub.h: what peerd/main.c defines for the other modules, for the
 * unit tests that link libpeerd without main.c: the daemon's state (td,
 * which the test points pd at in its setup) and the two functions.
 * Include it once, from the test's own .c file.
 */
#ifndef PEERD_STUB_H
#define PEERD_STUB_H

#include <stdint.h>

#include "clock.h"
#include "peerd.h"

struct peerd		*pd;
static struct peerd	 td;

void
peerd_shutdown(const char *why)
{
	(void)why;
	pd->stopping = true;
}

uint64_t
peerd_uptime_us(void)
{
	return clock_mono_us() - pd->start_us;
}

#endif

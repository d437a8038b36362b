/*
 * peerd_stub.h: what peerd/main.c defines for the other modules, for the
 * unit tests that link libpeerd without main.c: the daemon's state (td,
 * which the test points pd at in its setup) and the two functions, and
 * the start and end every such fixture shares (stub_conf, stub_free,
 * and stub_replication for a test of the protocols on the real store).
 * Include it once, from the test's own .c file.
 */
#ifndef PEERD_STUB_H
#define PEERD_STUB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "identity.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "stats.h"
#include "replica.h"
#include "trace.h"

#include "wire_stub.h"

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

/* pd at td, zeroed, with conf_defaults and the name "t": a fixture's start. */
static inline void
stub_conf(void)
{
	pd = &td;
	memset(pd, 0, sizeof(*pd));
	conf_defaults(&pd->conf);
	pd->conf.name = "t";
}

/*
 * The daemon a fixture starts from, after stub_conf and its knobs: the
 * log (errors only) under name, the identity of seed bytes 7, a loop, the
 * trace, the clock, the counters and the member table.
 */
static inline void
stub_daemon(const char *name)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	log_init(name, LOG_LVL_ERROR, NULL);
	memset(seed, 7, sizeof(seed));
	if (identity_from_seed(&pd->ident, seed) == -1 ||
	    (pd->base = event_base_new()) == NULL)
		abort();
	trace_init(64);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
}

/* What every fixture holds, freed: replica, members, trace, loop, key. */
static inline void
stub_free(void)
{
	replica_free();
	member_free_all();
	trace_free();
	event_base_free(pd->base);
	identity_free(&pd->ident);
}

#endif

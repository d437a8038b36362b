/*
 * conf.c: the daemon's defaults, one place for them: REFERENCE.md's timing
 * constants and the limits.  main.c lays the command line over them; the
 * fuzz harnesses start from them too.
 */
#include <string.h>

#include "peerd.h"

/* Every knob at its documented default (peerd --help). */
void
conf_defaults(struct peerd_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->listen = "127.0.0.1:0";
	c->group = "fleet";
	c->log_level = "info";
	c->settle_ms = 200;
	c->take_retry_ms = 20;
	c->take_lease_ms = 30000;
	c->take_mode = TAKE_LEASE;
	c->gossip_ms = 1000;
	c->tick_ms = 250;
	c->silence_ms = 30000;
	c->ping_timeout_ms = 2000;
	c->fanout = 3;
	c->hops = 6;
	c->max_age_s = 300;
	c->max_future_s = 600;
	c->rate_burst = 50000;
	c->rate_per_s = 10000;
	c->strikes = 16;
	c->quarantine_s = 600;
	c->max_links = 256;
	c->max_clients = 64;
	c->max_frame = 8u << 20;
	c->max_line = 1u << 20;
	c->max_entries = 1000000;
	c->trace_events = 8192;
}

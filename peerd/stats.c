/*
 * stats.c: the process's metrics (see stats.h).  It reads no module: the
 * modules bump its counters and register their gauges.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frame.h"
#include "identity.h"
#include "log.h"
#include "peerd.h"
#include "stats.h"
#include "xmalloc.h"

struct metrics		pd_metrics;
struct metrics_hists	pd_hists;
static struct identity_cost vcost_base;	/* at the last reset */

/*
 * The visible log: for the last STATS_VISIBLE_MAX entries of other peers
 * this one took in, the writer's stamp and the write-to-visible latency,
 * so a report can draw each write's latency against its time (the
 * histogram has lost which write each value was).  Grown as it fills:
 * 16 bytes an entry, nothing for a peer that took in none.
 */
#define STATS_VISIBLE_MAX	4096
static struct {
	uint64_t	(*pairs)[2];	/* stamp_us, latency_us */
	size_t		 cap, n, next;	/* a ring once n == STATS_VISIBLE_MAX */
	uint64_t	 dropped;	/* overwritten */
} vlog;

void
stats_visible(uint64_t stamp_us, uint64_t latency_us)
{
	if (vlog.n == vlog.cap && vlog.cap < STATS_VISIBLE_MAX) {
		vlog.cap = vlog.cap ? vlog.cap * 2 : 64;
		vlog.pairs = xreallocarray(vlog.pairs, vlog.cap,
		    sizeof(*vlog.pairs));
	}
	if (vlog.n < vlog.cap) {
		vlog.pairs[vlog.n][0] = stamp_us;
		vlog.pairs[vlog.n++][1] = latency_us;
		return;
	}
	vlog.pairs[vlog.next][0] = stamp_us;
	vlog.pairs[vlog.next][1] = latency_us;
	vlog.next = (vlog.next + 1) % vlog.n;
	vlog.dropped++;
}

/* {"stamp_us": [...], "latency_us": [...], "dropped": n}, oldest first. */
static json_t *
visible_json(void)
{
	json_t *st = json_array(), *lat = json_array();

	for (size_t i = 0; i < vlog.n; i++) {
		size_t k = (vlog.next + i) % vlog.n;

		json_array_append_new(st, json_integer((json_int_t)
		    vlog.pairs[k][0]));
		json_array_append_new(lat, json_integer((json_int_t)
		    vlog.pairs[k][1]));
	}
	return json_pack("{s:o, s:o, s:I}", "stamp_us", st, "latency_us", lat,
	    "dropped", (json_int_t)vlog.dropped);
}

void
stats_bad_frame(int err)
{
	if (err > FRAME_OK && err < FRAME_ERR_MAX)
		pd_metrics.bad_frames[err]++;
	if (err == FRAME_ESIG || err == FRAME_EFROM)
		pd_metrics.sig_failures++;
	if (err == FRAME_EMAC)
		pd_metrics.mac_failures++;
}

void
stats_frame_in(uint32_t kind, size_t bytes)
{
	pd_metrics.frames_in++;
	pd_metrics.bytes_in += bytes;
	if (kind < FRAME_KIND_MAX) {
		pd_metrics.frames_in_kind[kind]++;
		pd_metrics.bytes_in_kind[kind] += bytes;
	}
}

void
stats_frame_out(uint32_t kind, size_t bytes)
{
	pd_metrics.frames_out++;
	pd_metrics.bytes_out += bytes;
	if (kind < FRAME_KIND_MAX) {
		pd_metrics.frames_out_kind[kind]++;
		pd_metrics.bytes_out_kind[kind] += bytes;
	}
}

/* crypto.verifies and crypto.verify_timed*: identity.c counts them. */
static void
stats_verify_cost(void)
{
	struct identity_cost c;

	identity_verify_cost(&c);
	pd_metrics.verifies = c.verifies - vcost_base.verifies;
	pd_metrics.verify_timed = c.timed - vcost_base.timed;
	pd_metrics.verify_timed_us = (c.timed_ns - vcost_base.timed_ns) / 1000;
}

/*
 * The gauges, one table: each registered by the module that owns it
 * (stats_gauge), in the order they were registered.
 */
#define STATS_GAUGES	32

static struct gauge {
	const char	*name;
	uint64_t	(*count)(void);
	double		(*real)(void);
}			 gauges[STATS_GAUGES];
static const char	*gauge_names[STATS_GAUGES];
static size_t		 ngauges;
static struct metrics_mask gauges_mask = { NULL, "gauges", gauge_names, 0,
    NULL, 0 };

static void
gauge_add(const char *name, uint64_t (*count)(void), double (*real)(void))
{
	for (size_t i = 0; i < ngauges; i++)
		if (strcmp(gauges[i].name, name) == 0) {
			/* A module started again (a test's next case). */
			gauges[i].count = count;
			gauges[i].real = real;
			return;
		}
	if (ngauges == STATS_GAUGES)
		fatalx("stats: more than %d gauges", STATS_GAUGES);
	gauges[ngauges].name = gauge_names[ngauges] = name;
	gauges[ngauges].count = count;
	gauges[ngauges++].real = real;
	/* The mask is rebuilt for the new table at the next ask. */
	free(gauges_mask.want);
	json_decref(gauges_mask.only);
	gauges_mask.want = NULL;
	gauges_mask.only = NULL;
	gauges_mask.n = ngauges;
}

void
stats_gauge(const char *name, uint64_t (*fn)(void))
{
	gauge_add(name, fn, NULL);
}

void
stats_gauge_real(const char *name, double (*fn)(void))
{
	gauge_add(name, NULL, fn);
}

size_t
stats_gauge_count(void)
{
	return ngauges;
}

const char *
stats_gauge_name(size_t i)
{
	return i < ngauges ? gauges[i].name : NULL;
}

/* The gauges only names (NULL: all), each computed only when named. */
static json_t *
gauges_json(const json_t *only)
{
	const uint8_t *w = metrics_mask(&gauges_mask, only);
	json_t *o = json_object();

	for (size_t i = 0; i < ngauges; i++) {
		if (w != NULL && !w[i])
			continue;
		json_object_set_new(o, gauges[i].name, gauges[i].real != NULL ?
		    json_real(gauges[i].real()) :
		    json_integer((json_int_t)gauges[i].count()));
	}
	return o;
}

static double
uptime_s(void)
{
	return (double)(clock_mono_us() - pd->start_us) / 1e6;
}

/* Zero the counters and histograms (the gauges stay). */
static void
stats_zero(void)
{
	metrics_reset(&pd_metrics);
	metrics_hists_init(&pd_hists);
	identity_verify_cost(&vcost_base);
}

void
stats_init(void)
{
	stats_zero();
	ngauges = 0;
	gauges_mask.n = 0;
	stats_gauge_real("uptime_s", uptime_s);
	stats_gauge("activity", stats_activity);
}

json_t *
stats_json(const json_t *only)
{
	json_t *j;

	stats_verify_cost();
	j = metrics_snapshot_json(&pd_metrics, &pd_hists, only);
	metrics_put_section(j, "gauges", gauges_json(only), only);
	if (only == NULL)	/* never in a sample: the whole answer only */
		json_object_set_new(j, "visible_log", visible_json());
	json_object_set_new(j, "name", json_string(pd->conf.name));
	json_object_set_new(j, "peer_id", json_string(pd->ident.peer_id));
	return j;
}

void
stats_reset(void)
{
	stats_zero();
	vlog.n = vlog.next = 0;
	vlog.dropped = 0;
}

uint64_t
stats_activity(void)
{
	return pd_metrics.frames_in + pd_metrics.frames_out +
	    pd_metrics.writes + pd_metrics.takes_won +
	    pd_metrics.records_received;
}

/*
 * stats.c: the process's metrics (see stats.h).
 */
#include "frame.h"
#include "identity.h"
#include "gossip.h"
#include "link.h"
#include "xmalloc.h"
#include "peerd.h"
#include "replica.h"
#include "stats.h"
#include "control.h"
#include "view.h"

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

void
stats_init(void)
{
	metrics_reset(&pd_metrics);
	metrics_hists_init(&pd_hists);
	identity_verify_cost(&vcost_base);
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

/* The gauges, in the order of gauge_names. */
enum gauge {
	G_LINKS, G_RECORDS, G_VISIBLE, G_CONTROL_CLIENTS, G_UPTIME_S,
	G_VIEW_ACTIVE, G_VIEW_PASSIVE, G_TREE_DEGREE, G_REPAIR_PERIOD_MS,
	G_HEAP_IN_USE, G_HEAP_FREE, G_ACTIVITY, G_MAX
};

static const char *const gauge_names[G_MAX] = {
	"links", "records", "visible", "control_clients", "uptime_s",
	"view.active", "view.passive", "push.tree_degree",
	"recon.repair_period_ms", "heap.in_use", "heap.free", "activity"
};

static struct metrics_mask gauges_mask = { NULL, "gauges", gauge_names,
    G_MAX, NULL, 0 };

/* The gauges only names (NULL: all); the heap's only when asked. */
static json_t *
gauges_json(const json_t *only)
{
	const uint8_t *w = metrics_mask(&gauges_mask, only);
	json_t *o = json_object();
	size_t in_use = 0, free_bytes = 0;
	double v[G_MAX];

	/* mallinfo walks the heap's free lists: only when asked for */
	if (w == NULL || w[G_HEAP_IN_USE] || w[G_HEAP_FREE])
		xmalloc_heap(&in_use, &free_bytes);
	v[G_LINKS] = link_count();
	v[G_RECORDS] = (double)replica_count();
	v[G_VISIBLE] = (double)replica_visible();
	v[G_CONTROL_CLIENTS] = control_clients();
	v[G_UPTIME_S] = (double)peerd_uptime_us() / 1e6;
	v[G_VIEW_ACTIVE] = (double)view_active_count();
	v[G_VIEW_PASSIVE] = (double)view_passive_count();
	v[G_TREE_DEGREE] = gossip_tree_degree();
	v[G_REPAIR_PERIOD_MS] = (double)gossip_repair_period_ms();
	v[G_HEAP_IN_USE] = (double)in_use;
	v[G_HEAP_FREE] = (double)free_bytes;
	v[G_ACTIVITY] = (double)stats_activity();
	for (size_t i = 0; i < G_MAX; i++) {
		if (w != NULL && !w[i])
			continue;
		json_object_set_new(o, gauge_names[i], i == G_UPTIME_S ||
		    i == G_TREE_DEGREE ? json_real(v[i]) :
		    json_integer((json_int_t)v[i]));
	}
	return o;
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
	stats_init();
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

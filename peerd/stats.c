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
	json_object_set_new(j, "name", json_string(pd->conf.name));
	json_object_set_new(j, "peer_id", json_string(pd->ident.peer_id));
	return j;
}

void
stats_reset(void)
{
	stats_init();
}

uint64_t
stats_activity(void)
{
	return pd_metrics.frames_in + pd_metrics.frames_out +
	    pd_metrics.writes + pd_metrics.takes_won +
	    pd_metrics.records_received;
}

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

json_t *
stats_json(const json_t *only)
{
	json_t *j;
	size_t in_use = 0, free_bytes = 0;

	stats_verify_cost();
	j = metrics_snapshot_json(&pd_metrics, &pd_hists, only);
	/* mallinfo walks the heap's free lists: only when asked for */
	if (metrics_wants(only, "gauges", "heap.in_use") ||
	    metrics_wants(only, "gauges", "heap.free"))
		xmalloc_heap(&in_use, &free_bytes);
	metrics_set_section(j, "gauges", json_pack("{s:I, s:I, s:I, s:I, s:f, "
	    "s:I, s:I, s:f, s:I, s:I, s:I, s:I}",
	    "links", (json_int_t)link_count(),
	    "records", (json_int_t)replica_count(),
	    "visible", (json_int_t)replica_visible(),
	    "control_clients", (json_int_t)control_clients(),
	    "uptime_s", (double)peerd_uptime_us() / 1e6,
	    "view.active", (json_int_t)view_active_count(),
	    "view.passive", (json_int_t)view_passive_count(),
	    "push.tree_degree", gossip_tree_degree(),
	    "recon.repair_period_ms", (json_int_t)gossip_repair_period_ms(),
	    "heap.in_use", (json_int_t)in_use,
	    "heap.free", (json_int_t)free_bytes,
	    "activity", (json_int_t)stats_activity()),
	    only);
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

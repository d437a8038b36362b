/*
 * stats.h: the daemon's counters and histograms (common/metrics.h) and the
 * short macros the hot paths bump them with.  One instance per process.
 */
#ifndef STATS_H
#define STATS_H

#include <jansson.h>

#include "metrics.h"

extern struct metrics		pd_metrics;
extern struct metrics_hists	pd_hists;

#define pd_count(f)		(pd_metrics.f++)
#define pd_count_add(f, n)	(pd_metrics.f += (n))
#define pd_count_reject(r)	(pd_metrics.rejected[METRICS_REJECT_##r]++)
#define pd_count_limit(l)	(pd_metrics.limits_hit[METRICS_LIMIT_##l]++)
#define pd_count_tls(r)		(pd_metrics.tls_failures[METRICS_TLS_##r]++)
#define pd_count_dtls(r)	(pd_metrics.dtls_failures[METRICS_DTLS_##r]++)
#define pd_count_handshake(h)	\
	(pd_metrics.handshake_failed[METRICS_HANDSHAKE_##h]++)
#define pd_hist(f, v)		hist_record(&pd_hists.f, (v))

/* A frame refused by the codec, by reason (signature failures apart). */
void	stats_bad_frame(int err);
#define pd_count_bad(err)	stats_bad_frame(err)
/* A frame in or out, by kind and size (prefix included). */
void	stats_frame_in(uint32_t kind, size_t bytes);
void	stats_frame_out(uint32_t kind, size_t bytes);
#define pd_count_kind_in(k, n)	stats_frame_in((k), (n))
#define pd_count_kind_out(k, n)	stats_frame_out((k), (n))

/* Zero everything, and make the gauge table with stats' own two. */
void	 stats_init(void);
/* An entry of another peer's became visible here: its writer's stamp and
 * the latency, into the visible log ("metrics" visible_log). */
void	 stats_visible(uint64_t stamp_us, uint64_t latency_us);
/*
 * Register a gauge of the "metrics" answer (docs/control.md): fn is called
 * only when the gauge is asked for; an integer, or a real number.  The
 * module that owns a gauge registers it in its _init (again: the same
 * row, its function replaced).
 */
void	 stats_gauge(const char *name, uint64_t (*fn)(void));
void	 stats_gauge_real(const char *name, double (*fn)(void));
/* The gauge table: how many, and the name of the i-th (NULL past it). */
size_t	 stats_gauge_count(void);
const char *stats_gauge_name(size_t i);
/*
 * The "metrics" answer: counters, latency, process and the gauges, only
 * what only names (metrics_wants; NULL: everything).
 */
json_t	*stats_json(const json_t *only);
/* Zero the counters and histograms ("reset"). */
void	 stats_reset(void);
/* A number that moves while the peer does anything (hello's "activity"). */
uint64_t stats_activity(void);

#endif

/*
 * hist.h: mergeable log-linear latency histograms (docs/report.md), after
 * HdrHistogram.
 *
 * Values are microseconds.  Below 256 every value has its own bucket; above,
 * each power of two is cut into 128 equal buckets, so a bucket is never
 * wider than 1/128 of its lower bound and the value reported for it (its
 * middle) is within 0.4% of anything it holds.  The range ends at one hour:
 * larger values are counted in the top bucket, while min, max, count and
 * sum stay exact.  Merging adds bucket by bucket, so fleet percentiles come
 * from the merged histogram and never from averaging per-peer figures.
 *
 * A histogram is a fixed ~26 KiB struct with no pointers: embed it, or use
 * hist_new/hist_free.  The JSON form is the one report.json and metrics.json
 * carry (docs/report.md): {"unit": "us", "count", "min", "max", "sum",
 * "mean", "p50", "p90", "p99", "p999", "buckets": [[index, count], ...]}
 * with only non-empty buckets, in index order.
 */
#ifndef HIST_H
#define HIST_H

#include <stdint.h>

#include <jansson.h>

#define HIST_SUB_BITS	7
#define HIST_SUB	(1u << HIST_SUB_BITS)	/* buckets per power of two */
#define HIST_MAX_VALUE	3600000000ull		/* one hour in microseconds */
/* Values are clamped to this so every figure fits a JSON integer. */
#define HIST_VALUE_CAP	((uint64_t)INT64_MAX)
/* Index of HIST_MAX_VALUE, plus one (it lies in [2^31, 2^32)). */
#define HIST_BUCKETS							\
	((31 - HIST_SUB_BITS) * HIST_SUB +				\
	 (unsigned)(HIST_MAX_VALUE >> (31 - HIST_SUB_BITS)) + 1)

struct hist {
	uint64_t	count;
	uint64_t	sum;		/* saturates at HIST_VALUE_CAP */
	uint64_t	min;		/* UINT64_MAX while empty */
	uint64_t	max;
	uint64_t	counts[HIST_BUCKETS];
};

/* A new empty histogram (never NULL). */
struct hist	*hist_new(void);
void		 hist_free(struct hist *h);
/* Make h empty; for histograms embedded in other structs. */
void		 hist_init(struct hist *h);
/* Same as hist_init: forget every value. */
void		 hist_reset(struct hist *h);
/* Count value v (microseconds) once. */
void		 hist_record(struct hist *h, uint64_t v);
/* Count value v n times. */
void		 hist_record_n(struct hist *h, uint64_t v, uint64_t n);
/* Add every value of src to dst. */
void		 hist_merge(struct hist *dst, const struct hist *src);

uint64_t	 hist_count(const struct hist *h);
/* Exact smallest and largest values; 0 when empty. */
uint64_t	 hist_min(const struct hist *h);
uint64_t	 hist_max(const struct hist *h);
/* Exact mean (sum / count); 0 when empty. */
double		 hist_mean(const struct hist *h);
/*
 * The rank (1-based, in sorted order) of the pct percentile of count values:
 * the nearest-rank rule, ceil(pct / 100 * count) clamped to [1, count]
 * (pct <= 0 gives the minimum, pct >= 100 the maximum); 0 when count is 0.
 * A relative slack of 1e-12 keeps 99.9% of 1000 at rank 999 whatever the
 * binary rounding of 99.9.  Tests compute exact percentiles with it too.
 */
uint64_t	 hist_rank(uint64_t count, double pct);
/*
 * The value of rank hist_rank(count, pct): exact for the minimum, the
 * maximum and values below 256, otherwise within 1% (0.4% in fact) for
 * values up to HIST_MAX_VALUE.  0 when empty.
 */
uint64_t	 hist_percentile(const struct hist *h, double pct);

/* The JSON form above (a new reference; never NULL). */
json_t		*hist_to_json(const struct hist *h);
/*
 * Rebuild h from hist_to_json's form.  Everything is checked (types,
 * ranges, bucket order, counts adding up, min and max in the first and
 * last buckets, sum between count*min and count*max); the derived fields
 * (mean, pNN) must be numbers if present and are recomputed; other keys
 * are ignored.  0, or -1 with h untouched.
 */
int		 hist_from_json(struct hist *h, const json_t *j);

#endif

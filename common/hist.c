/*
 * hist.c: log-linear latency histograms (see hist.h).
 *
 * Bucket index of a value v >= 256 with top bit e: the power of two gives
 * the block (e - 7), the next seven bits below the top bit the place in it;
 * values below 256 index themselves, and the two ranges join at 256.  The
 * percentile walk is linear in HIST_BUCKETS, which is cheap next to the
 * report it feeds; recording is a few instructions and never allocates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "u64.h"
#include "xmalloc.h"

_Static_assert(HIST_MAX_VALUE >= (1ull << 31) && HIST_MAX_VALUE < (1ull << 32),
    "HIST_BUCKETS assumes the top value has bit 31 as its highest");

/* Derived JSON fields: name and percentile. */
static const struct {
	const char	*name;
	double		 pct;
} hist_pcts[] = {
	{ "p50", 50.0 }, { "p90", 90.0 }, { "p99", 99.0 }, { "p999", 99.9 },
};

#define NPCTS (sizeof(hist_pcts) / sizeof(hist_pcts[0]))

static unsigned
hist_index(uint64_t v)
{
	int e;

	if (v > HIST_MAX_VALUE)
		v = HIST_MAX_VALUE;
	if (v < 2 * HIST_SUB)
		return (unsigned)v;
	e = 63 - __builtin_clzll(v);
	return (unsigned)(e - HIST_SUB_BITS) * HIST_SUB +
	    (unsigned)(v >> (e - HIST_SUB_BITS));
}

/* The values bucket i holds: [*lo, *lo + *width). */
static void
hist_bucket(unsigned i, uint64_t *lo, uint64_t *width)
{
	unsigned shift;

	if (i < 2 * HIST_SUB) {
		*lo = i;
		*width = 1;
		return;
	}
	shift = i / HIST_SUB - 1;
	*lo = (uint64_t)(i % HIST_SUB + HIST_SUB) << shift;
	*width = (uint64_t)1 << shift;
}

/* a + b, capped at HIST_VALUE_CAP. */
static uint64_t
sum_capped(uint64_t a, uint64_t b)
{
	uint64_t s = u64_sat_add(a, b);

	return s > HIST_VALUE_CAP ? HIST_VALUE_CAP : s;
}

static uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_mul_overflow(a, b, &r) || r > HIST_VALUE_CAP)
		return HIST_VALUE_CAP;
	return r;
}

struct hist *
hist_new(void)
{
	struct hist *h = xmalloc(sizeof(*h));

	hist_init(h);
	return h;
}

void
hist_free(struct hist *h)
{
	free(h);
}

void
hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void
hist_reset(struct hist *h)
{
	hist_init(h);
}

void
hist_record_n(struct hist *h, uint64_t v, uint64_t n)
{
	if (n == 0)
		return;
	if (v > HIST_VALUE_CAP)
		v = HIST_VALUE_CAP;
	h->counts[hist_index(v)] += n;
	h->count += n;
	h->sum = sum_capped(h->sum, sat_mul(v, n));
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void
hist_record(struct hist *h, uint64_t v)
{
	hist_record_n(h, v, 1);
}

void
hist_merge(struct hist *dst, const struct hist *src)
{
	if (src->count == 0)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	dst->sum = sum_capped(dst->sum, src->sum);
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t
hist_count(const struct hist *h)
{
	return h->count;
}

uint64_t
hist_min(const struct hist *h)
{
	return h->count ? h->min : 0;
}

uint64_t
hist_max(const struct hist *h)
{
	return h->count ? h->max : 0;
}

double
hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

uint64_t
hist_rank(uint64_t count, double pct)
{
	double r;
	uint64_t rank;

	if (count == 0)
		return 0;
	if (!(pct > 0.0))		/* also NaN */
		return 1;
	if (pct >= 100.0)
		return count;
	r = pct / 100.0 * (double)count;
	r -= r * 1e-12;
	rank = r < 1.0 ? 1 : (uint64_t)ceil(r);
	return rank > count ? count : rank;
}

uint64_t
hist_percentile(const struct hist *h, double pct)
{
	uint64_t rank, seen = 0, lo, width, v;
	unsigned i;

	if (h->count == 0)
		return 0;
	rank = hist_rank(h->count, pct);
	/* The ends are known exactly; no bucket needed. */
	if (rank == 1)
		return h->min;
	if (rank == h->count)
		return h->max;
	for (i = 0; i < HIST_BUCKETS - 1; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			break;
	}
	hist_bucket(i, &lo, &width);
	v = lo + (width - 1) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

/* ---- JSON -------------------------------------------------------------- */

json_t *
hist_to_json(const struct hist *h)
{
	json_t *o = json_object(), *b = json_array();

	json_object_set_new(o, "unit", json_string("us"));
	json_object_set_new(o, "count", json_integer((json_int_t)h->count));
	json_object_set_new(o, "min", json_integer((json_int_t)hist_min(h)));
	json_object_set_new(o, "max", json_integer((json_int_t)hist_max(h)));
	json_object_set_new(o, "sum", json_integer((json_int_t)h->sum));
	json_object_set_new(o, "mean", json_real(hist_mean(h)));
	for (size_t k = 0; k < NPCTS; k++)
		json_object_set_new(o, hist_pcts[k].name, json_integer(
		    (json_int_t)hist_percentile(h, hist_pcts[k].pct)));
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (h->counts[i] == 0)
			continue;
		json_array_append_new(b, json_pack("[II]", (json_int_t)i,
		    (json_int_t)h->counts[i]));
	}
	json_object_set_new(o, "buckets", b);
	return o;
}

/* A non-negative JSON integer. 0 or -1. */
static int
json_uint(const json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int
hist_from_json(struct hist *h, const json_t *j)
{
	const json_t *unit, *buckets, *pair, *v;
	uint64_t count, min, max, sum, idx, n, total = 0;
	uint64_t first = 0, last = 0;
	size_t k, nb;

	if (!json_is_object(j))
		return -1;
	unit = json_object_get(j, "unit");
	if (!json_is_string(unit) || strcmp(json_string_value(unit), "us") != 0)
		return -1;
	if (json_uint(json_object_get(j, "count"), &count) == -1 ||
	    json_uint(json_object_get(j, "min"), &min) == -1 ||
	    json_uint(json_object_get(j, "max"), &max) == -1 ||
	    json_uint(json_object_get(j, "sum"), &sum) == -1)
		return -1;
	if (json_object_get(j, "mean") != NULL &&
	    !json_is_number(json_object_get(j, "mean")))
		return -1;
	for (k = 0; k < NPCTS; k++) {
		v = json_object_get(j, hist_pcts[k].name);
		if (v != NULL && !json_is_number(v))
			return -1;
	}
	buckets = json_object_get(j, "buckets");
	if (!json_is_array(buckets))
		return -1;

	/* First pass: validate, touching nothing. */
	nb = json_array_size(buckets);
	for (k = 0; k < nb; k++) {
		pair = json_array_get(buckets, k);
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    json_uint(json_array_get(pair, 0), &idx) == -1 ||
		    json_uint(json_array_get(pair, 1), &n) == -1)
			return -1;
		if (idx >= HIST_BUCKETS || n == 0)
			return -1;
		if (k > 0 && idx <= last)	/* sorted, no repeats */
			return -1;
		if (k == 0)
			first = idx;
		last = idx;
		if (__builtin_add_overflow(total, n, &total))
			return -1;
	}
	if (total != count)
		return -1;
	if (count == 0) {
		if (min != 0 || max != 0 || sum != 0)
			return -1;
	} else {
		if (min > max || max > HIST_VALUE_CAP)
			return -1;
		if (hist_index(min) != first || hist_index(max) != last)
			return -1;
		if (sum < sat_mul(min, count) || sum > sat_mul(max, count))
			return -1;
	}

	/* Second pass: fill. */
	hist_init(h);
	for (k = 0; k < nb; k++) {
		pair = json_array_get(buckets, k);
		h->counts[json_integer_value(json_array_get(pair, 0))] =
		    (uint64_t)json_integer_value(json_array_get(pair, 1));
	}
	h->count = count;
	h->sum = sum;
	if (count > 0) {
		h->min = min;
		h->max = max;
	}
	return 0;
}

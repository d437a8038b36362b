/*
 * test_hist.c: unit tests for common/hist.c.
 *
 * The core is a property test: for data sets drawn from a seeded PRNG
 * (uniform, log-uniform over 1 us..1 h, constant, tiny), every percentile
 * the reports use must lie within 1% of the exact order statistic, found
 * by sorting with the same nearest-rank rule (hist_rank).  Merging two
 * histograms must equal recording the union, and the JSON form must
 * survive a round trip and refuse malformed input.
 *
 * The seed is HIST_TEST_SEED from the environment, or a fixed default so
 * that `make check` is reproducible; every failure message names it.
 */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hist.h"
#include "rng.h"

static const double pcts[] = { 0, 1, 50, 90, 99, 99.9, 100 };
#define NPCTS (sizeof(pcts) / sizeof(pcts[0]))

static uint64_t seed;
static uint64_t rng;

static void
seed_rng(void)
{
	const char *s = getenv("HIST_TEST_SEED");

	seed = s != NULL ? strtoull(s, NULL, 0) : 0x5eed2024ull;
	rng = seed;
}

/* splitmix64: small, good enough, and the same on every machine. */
static uint64_t
next_u64(void)
{
	return rng_splitmix64(&rng);
}

/* Uniform in [0, 1). */
static double
next_unit(void)
{
	return (double)(next_u64() >> 11) / 9007199254740992.0;
}

static uint64_t
uniform(uint64_t lo, uint64_t hi)
{
	return lo + next_u64() % (hi - lo + 1);
}

static uint64_t
log_uniform(uint64_t lo, uint64_t hi)
{
	double l = log((double)lo), h = log((double)hi);
	uint64_t v = (uint64_t)exp(l + (h - l) * next_unit());

	return v < lo ? lo : v > hi ? hi : v;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

enum shape { UNIFORM, LOG_UNIFORM, CONSTANT, TINY, SMALL_VALUES, NSHAPES };

static const char *const shape_names[] = {
	"uniform", "log-uniform", "constant", "tiny", "small-values",
};

/* Fill v with a data set of the given shape; returns its size. */
static size_t
make_data(enum shape s, uint64_t *v, size_t cap)
{
	size_t n;
	uint64_t c;

	switch (s) {
	case UNIFORM:
		n = (size_t)uniform(1, cap);
		for (size_t i = 0; i < n; i++)
			v[i] = uniform(1, HIST_MAX_VALUE);
		return n;
	case LOG_UNIFORM:
		n = (size_t)uniform(1, cap);
		for (size_t i = 0; i < n; i++)
			v[i] = log_uniform(1, HIST_MAX_VALUE);
		return n;
	case CONSTANT:
		n = (size_t)uniform(1, cap);
		c = log_uniform(1, HIST_MAX_VALUE);
		for (size_t i = 0; i < n; i++)
			v[i] = c;
		return n;
	case TINY:
		n = (size_t)uniform(1, 4);
		for (size_t i = 0; i < n; i++)
			v[i] = log_uniform(1, HIST_MAX_VALUE);
		return n;
	case SMALL_VALUES:
	default:
		n = (size_t)uniform(1, cap);
		for (size_t i = 0; i < n; i++)
			v[i] = uniform(0, 600);
		return n;
	}
}

/* Every percentile of h within 1% of the exact one of sorted[0..n). */
static void
assert_percentiles(const struct hist *h, const uint64_t *sorted, size_t n,
    const char *what)
{
	for (size_t k = 0; k < NPCTS; k++) {
		uint64_t rank = hist_rank(n, pcts[k]);
		uint64_t exact = sorted[rank - 1];
		uint64_t got = hist_percentile(h, pcts[k]);
		double err = fabs((double)got - (double)exact);

		ck_assert_msg(err <= 0.01 * (double)exact,
		    "seed %" PRIu64 ": %s n=%zu p%g: got %" PRIu64
		    ", exact %" PRIu64, seed, what, n, pcts[k], got, exact);
	}
}

/* ---- properties ----------------------------------------------------- */

START_TEST(percentiles_within_one_percent)
{
	enum { CAP = 20000, ROUNDS = 60 };
	uint64_t *v = calloc(CAP, sizeof(*v));
	struct hist *h = hist_new();

	ck_assert_ptr_nonnull(v);
	seed_rng();
	for (int r = 0; r < ROUNDS; r++) {
		for (int s = 0; s < NSHAPES; s++) {
			size_t n = make_data((enum shape)s, v, CAP);
			uint64_t sum = 0;

			hist_reset(h);
			for (size_t i = 0; i < n; i++) {
				/* Mix the two ways of recording. */
				if (i + 1 < n && v[i] == v[i + 1]) {
					hist_record_n(h, v[i], 2);
					sum += 2 * v[i];
					i++;
					continue;
				}
				hist_record(h, v[i]);
				sum += v[i];
			}
			qsort(v, n, sizeof(*v), u64_cmp);
			ck_assert_msg(hist_count(h) == n, "seed %" PRIu64, seed);
			ck_assert_msg(hist_min(h) == v[0] &&
			    hist_max(h) == v[n - 1], "seed %" PRIu64, seed);
			ck_assert_msg(fabs(hist_mean(h) - (double)sum /
			    (double)n) <= 1e-9 * (double)sum / (double)n,
			    "seed %" PRIu64 ": mean", seed);
			assert_percentiles(h, v, n, shape_names[s]);
		}
	}
	hist_free(h);
	free(v);
}
END_TEST

/*
 * The worst case for a bucket: the exact value sits at one end of it.
 * Walk every value around every power of two up to the top, and a dense
 * stretch, as one-value histograms whose p50 is the bucket's pick.
 */
START_TEST(bucket_edges)
{
	struct hist h;
	uint64_t v;

	seed_rng();
	for (int e = 0; e < 32; e++) {
		for (int d = -3; d <= 3; d++) {
			v = (1ull << e) + (uint64_t)(int64_t)d;
			if ((int64_t)v < 1 || v > HIST_MAX_VALUE)
				continue;
			hist_init(&h);
			hist_record(&h, v);
			hist_record(&h, 0);
			hist_record(&h, HIST_MAX_VALUE);
			/* p50 of {0, v, top} is v, read from its bucket. */
			ck_assert_msg(fabs((double)hist_percentile(&h, 50) -
			    (double)v) <= 0.01 * (double)v, "v=%" PRIu64, v);
		}
	}
	for (v = 1; v < 70000; v++) {
		hist_init(&h);
		hist_record(&h, 0);
		hist_record(&h, v);
		hist_record(&h, HIST_MAX_VALUE);
		ck_assert_msg(fabs((double)hist_percentile(&h, 50) -
		    (double)v) <= 0.01 * (double)v, "v=%" PRIu64, v);
		if (v < 256)
			ck_assert_uint_eq(hist_percentile(&h, 50), v);
	}
}
END_TEST

START_TEST(rank_rule)
{
	ck_assert_uint_eq(hist_rank(0, 50), 0);
	ck_assert_uint_eq(hist_rank(1, 0), 1);
	ck_assert_uint_eq(hist_rank(1, 100), 1);
	ck_assert_uint_eq(hist_rank(10, 0), 1);
	ck_assert_uint_eq(hist_rank(10, -5), 1);
	ck_assert_uint_eq(hist_rank(10, NAN), 1);
	ck_assert_uint_eq(hist_rank(10, 10), 1);
	ck_assert_uint_eq(hist_rank(10, 10.0001), 2);
	ck_assert_uint_eq(hist_rank(10, 50), 5);
	ck_assert_uint_eq(hist_rank(10, 51), 6);
	ck_assert_uint_eq(hist_rank(10, 100), 10);
	ck_assert_uint_eq(hist_rank(10, 250), 10);
	ck_assert_uint_eq(hist_rank(1000, 99.9), 999);
	ck_assert_uint_eq(hist_rank(100000, 99.9), 99900);
	ck_assert_uint_eq(hist_rank(1000, 99), 990);
	ck_assert_uint_eq(hist_rank(3, 50), 2);
	ck_assert_uint_eq(hist_rank(2, 50), 1);
	ck_assert_uint_eq(hist_rank(2, 1), 1);
}
END_TEST

/* Same numbers, same buckets: compared through the public view and JSON. */
static void
assert_hist_eq(const struct hist *a, const struct hist *b, const char *what)
{
	json_t *ja = hist_to_json(a), *jb = hist_to_json(b);

	ck_assert_msg(hist_count(a) == hist_count(b) &&
	    hist_min(a) == hist_min(b) && hist_max(a) == hist_max(b) &&
	    hist_mean(a) == hist_mean(b), "seed %" PRIu64 ": %s", seed, what);
	ck_assert_msg(json_equal(ja, jb), "seed %" PRIu64 ": %s: JSON differs",
	    seed, what);
	for (size_t k = 0; k < NPCTS; k++)
		ck_assert_uint_eq(hist_percentile(a, pcts[k]),
		    hist_percentile(b, pcts[k]));
	json_decref(ja);
	json_decref(jb);
}

START_TEST(merge_equals_union)
{
	enum { CAP = 5000 };
	uint64_t *v = calloc(CAP, sizeof(*v));
	struct hist *a = hist_new(), *b = hist_new(), *all = hist_new();
	struct hist *m = hist_new();

	seed_rng();
	for (int r = 0; r < 40; r++) {
		size_t n = make_data((enum shape)(r % NSHAPES), v, CAP);

		hist_reset(a);
		hist_reset(b);
		hist_reset(all);
		hist_reset(m);
		for (size_t i = 0; i < n; i++) {
			hist_record(next_u64() & 1 ? a : b, v[i]);
			hist_record(all, v[i]);
		}
		hist_merge(m, a);
		hist_merge(m, b);
		assert_hist_eq(m, all, "merge a+b");
		/* Order does not matter, and merging nothing changes nothing. */
		hist_reset(m);
		hist_merge(m, b);
		hist_merge(m, a);
		hist_reset(a);
		hist_merge(m, a);
		assert_hist_eq(m, all, "merge b+a+empty");
	}
	hist_free(a);
	hist_free(b);
	hist_free(all);
	hist_free(m);
	free(v);
}
END_TEST

START_TEST(empty_and_reset)
{
	struct hist *h = hist_new();
	json_t *j;

	ck_assert_uint_eq(hist_count(h), 0);
	ck_assert_uint_eq(hist_min(h), 0);
	ck_assert_uint_eq(hist_max(h), 0);
	ck_assert(hist_mean(h) == 0.0);
	ck_assert_uint_eq(hist_percentile(h, 50), 0);
	j = hist_to_json(h);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "count")), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "buckets")), 0);
	json_decref(j);
	hist_record(h, 5);
	hist_record_n(h, 7, 0);		/* zero times: nothing */
	ck_assert_uint_eq(hist_count(h), 1);
	ck_assert_uint_eq(hist_max(h), 5);
	hist_reset(h);
	ck_assert_uint_eq(hist_count(h), 0);
	ck_assert_uint_eq(hist_min(h), 0);
	ck_assert_uint_eq(hist_percentile(h, 100), 0);
	/* A histogram of zeros. */
	hist_record_n(h, 0, 3);
	ck_assert_uint_eq(hist_percentile(h, 50), 0);
	ck_assert_uint_eq(hist_max(h), 0);
	hist_free(h);
	hist_free(NULL);
}
END_TEST

/* Values over an hour land in the top bucket but stay exact at the ends. */
START_TEST(clamp_above_range)
{
	struct hist *h = hist_new();
	json_t *j, *b;

	hist_record(h, 10);
	hist_record(h, 2 * HIST_MAX_VALUE);
	hist_record(h, UINT64_MAX);	/* clamped to HIST_VALUE_CAP */
	ck_assert_uint_eq(hist_count(h), 3);
	ck_assert_uint_eq(hist_max(h), HIST_VALUE_CAP);
	ck_assert_uint_eq(hist_min(h), 10);
	ck_assert_uint_eq(hist_percentile(h, 100), HIST_VALUE_CAP);
	/* p50 lies above the range: the top bucket's value. */
	ck_assert_uint_ge(hist_percentile(h, 50), HIST_MAX_VALUE * 99 / 100);
	j = hist_to_json(h);
	b = json_object_get(j, "buckets");
	ck_assert_uint_eq(json_array_size(b), 2);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(b,
	    1), 0)), HIST_BUCKETS - 1);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(b,
	    1), 1)), 2);
	/* The sum saturated and is still a valid JSON integer. */
	ck_assert_int_eq(json_integer_value(json_object_get(j, "sum")),
	    INT64_MAX);
	json_decref(j);
	hist_free(h);
}
END_TEST

/* Small enough that a peer keeps several. */
START_TEST(footprint)
{
	ck_assert_uint_le(sizeof(struct hist), 32 * 1024);
	ck_assert_uint_eq(HIST_BUCKETS, 3287);
}
END_TEST

/* ---- JSON ------------------------------------------------------------- */

START_TEST(json_round_trip)
{
	enum { CAP = 3000 };
	uint64_t *v = calloc(CAP, sizeof(*v));
	struct hist *h = hist_new(), *back = hist_new();

	seed_rng();
	for (int r = 0; r < 30; r++) {
		size_t n = make_data((enum shape)(r % NSHAPES), v, CAP);
		json_t *j, *parsed;
		json_error_t err;
		char *text;

		hist_reset(h);
		for (size_t i = 0; i < n; i++)
			hist_record(h, v[i]);
		if (r == 0)
			hist_reset(h);		/* the empty one too */
		j = hist_to_json(h);
		text = json_dumps(j, JSON_COMPACT);
		ck_assert_ptr_nonnull(text);
		parsed = json_loads(text, 0, &err);
		ck_assert_ptr_nonnull(parsed);
		hist_record(back, 12345);	/* overwritten */
		ck_assert_msg(hist_from_json(back, parsed) == 0,
		    "seed %" PRIu64 ": %s", seed, text);
		assert_hist_eq(h, back, "json round trip");
		ck_assert_str_eq(json_string_value(json_object_get(parsed,
		    "unit")), "us");
		ck_assert_int_eq(json_integer_value(json_object_get(parsed,
		    "p99")), (json_int_t)hist_percentile(h, 99));
		ck_assert_int_eq(json_integer_value(json_object_get(parsed,
		    "p999")), (json_int_t)hist_percentile(h, 99.9));
		free(text);
		json_decref(j);
		json_decref(parsed);
	}
	hist_free(h);
	hist_free(back);
	free(v);
}
END_TEST

/*
 * Each string is a valid histogram JSON (count 3: 5, 10, 1000 us) with
 * one thing wrong.  bucket 5 = 5 us, 10 = 10 us, 1000 us is bucket 506.
 */
START_TEST(json_rejects_malformed)
{
#define OKB "[[5,1],[10,1],[506,1]]"
	static const char *const bad[] = {
		"[]",
		"42",
		"null",
		"{}",
		"{\"count\":3,\"min\":5,\"max\":1000,\"sum\":1015,"
		    "\"buckets\":" OKB "}",				/* no unit */
		"{\"unit\":\"ms\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",
		"{\"unit\":7,\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",
		"{\"unit\":\"us\",\"count\":-3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",
		"{\"unit\":\"us\",\"count\":3.0,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",
		"{\"unit\":\"us\",\"count\":\"3\",\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",
		"{\"unit\":\"us\",\"count\":3,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",		/* no min */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"buckets\":" OKB "}",				/* no sum */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015}",					/* no buckets */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":{}}",
		"{\"unit\":\"us\",\"count\":4,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",		/* sum of counts */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[5,1],[10,1],[506]]}",
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[5,1],[10,1],[506,1,0]]}",
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[5,1],[10,1],506]}",
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[5,1],[506,1],[10,1]]}",	/* order */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":5,"
		    "\"sum\":15,\"buckets\":[[5,1],[5,2]]}",		/* repeat */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":5,"
		    "\"sum\":15,\"buckets\":[[5,3],[6,0]]}",		/* zero */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[-5,1],[10,1],[506,1]]}",
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[5,1],[10,1],[3287,1]]}",
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[5,1],[10,1],[506,-1]]}",
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"buckets\":[[5,1],[10.5,1],[506,1]]}",
		"{\"unit\":\"us\",\"count\":3,\"min\":6,\"max\":1000,"
		    "\"sum\":1016,\"buckets\":" OKB "}",	/* min not in first */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":2000,"
		    "\"sum\":1015,\"buckets\":" OKB "}",	/* max not in last */
		"{\"unit\":\"us\",\"count\":3,\"min\":1000,\"max\":5,"
		    "\"sum\":1015,\"buckets\":" OKB "}",	/* min > max */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":10,\"buckets\":" OKB "}",		/* sum < 3 * min */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":3001,\"buckets\":" OKB "}",	/* sum > 3 * max */
		"{\"unit\":\"us\",\"count\":0,\"min\":5,\"max\":0,"
		    "\"sum\":0,\"buckets\":[]}",		/* empty with min */
		"{\"unit\":\"us\",\"count\":0,\"min\":0,\"max\":0,"
		    "\"sum\":0,\"buckets\":[[5,1]]}",
		"{\"unit\":\"us\",\"count\":1,\"min\":0,\"max\":0,"
		    "\"sum\":0,\"buckets\":[[0,9223372036854775807],"
		    "[1,9223372036854775807],[2,2]]}",		/* overflow */
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"mean\":\"x\",\"buckets\":" OKB "}",
		"{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
		    "\"sum\":1015,\"p99\":null,\"buckets\":" OKB "}",
	};
	static const char *good =
	    "{\"unit\":\"us\",\"count\":3,\"min\":5,\"max\":1000,"
	    "\"sum\":1015,\"mean\":338.3,\"p50\":10,\"extra\":[1],"
	    "\"buckets\":" OKB "}";
#undef OKB
	struct hist *h = hist_new();
	json_error_t err;
	json_t *j;

	/* The template itself is fine. */
	j = json_loads(good, 0, &err);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(hist_from_json(h, j), 0);
	ck_assert_uint_eq(hist_count(h), 3);
	ck_assert_uint_eq(hist_percentile(h, 50), 10);
	ck_assert_uint_eq(hist_max(h), 1000);
	json_decref(j);

	ck_assert_int_eq(hist_from_json(h, NULL), -1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = json_loads(bad[i], JSON_DECODE_ANY, &err);
		ck_assert_msg(j != NULL, "test JSON %zu: %s", i, err.text);
		ck_assert_msg(hist_from_json(h, j) == -1, "accepted: %s",
		    bad[i]);
		json_decref(j);
		/* A refusal leaves the histogram alone. */
		ck_assert_uint_eq(hist_count(h), 3);
		ck_assert_uint_eq(hist_max(h), 1000);
	}
	hist_free(h);
}
END_TEST

static Suite *
hist_suite(void)
{
	Suite *s = suite_create("hist");
	TCase *tc;

	tc = tcase_create("properties");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, percentiles_within_one_percent);
	tcase_add_test(tc, bucket_edges);
	tcase_add_test(tc, rank_rule);
	tcase_add_test(tc, merge_equals_union);
	suite_add_tcase(s, tc);

	tc = tcase_create("edges");
	tcase_add_test(tc, empty_and_reset);
	tcase_add_test(tc, clamp_above_range);
	tcase_add_test(tc, footprint);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_test(tc, json_round_trip);
	tcase_add_test(tc, json_rejects_malformed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(hist_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

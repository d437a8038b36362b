/*
 * test_compare.c: orchestrate compare (orchestrator/compare.c) on
 * hand-made report.json pairs: every shared measure and statistic is a
 * row, ratios and deltas are B/A and (B - A) / A, the flag follows the
 * measure's direction from measures.h and the threshold or the repeats'
 * own spread, checks that flipped are listed, the geomean is per
 * direction.  And the exact number forms the report files use
 * (orchestrator/num.c): integers as integers, reals in their shortest
 * round-trip form.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "num.h"

static json_t *
report(double wall, double takes_s, json_int_t p99, double lost,
    const char *check)
{
	return json_pack("{s:s, s:s, s:{s:{s:f, s:s}, s:{s:f, s:s}, "
	    "s:{s:s, s:I, s:I, s:I, s:I, s:I, s:I}, s:{s:f, s:s}}, "
	    "s:[{s:s, s:s}]}", "scenario", "throughput", "status", "pass",
	    "measures",
	    "run.wall_ms", "value", wall, "unit", "ms",
	    "throughput.takes_per_s", "value", takes_s, "unit", "ops/s",
	    "throughput.write_to_take", "unit", "us", "count", (json_int_t)100,
	    "p50", (json_int_t)(p99 / 2), "p90", p99 - 10, "p99", p99, "p999",
	    p99, "max", p99,
	    "history.lost", "value", lost, "unit", "count",
	    "checks", "name", "nothing lost", "result", check);
}

static const json_t *
row(const json_t *cmp, const char *measure, const char *stat)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(cmp, "rows"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "measure")),
		    measure) == 0 && strcmp(json_string_value(json_object_get(r,
		    "stat")), stat) == 0)
			return r;
	return NULL;
}

static double
num(const json_t *r, const char *k)
{
	ck_assert_ptr_nonnull(json_object_get(r, k));
	return json_number_value(json_object_get(r, k));
}

static const char *
flag(const json_t *r)
{
	return json_string_value(json_object_get(r, "flag"));
}

START_TEST(test_rows_ratios_flags)
{
	json_t *a = json_pack("[o]", report(1000, 50, 2000, 0, "PASS"));
	json_t *b = json_pack("[o]", report(1100, 30, 5000, 2, "FAIL"));
	json_t *cmp = compare_build(a, b, 20);
	const json_t *r;

	/* 1 + 1 + 6 + 1 rows: every shared measure and latency statistic */
	ck_assert_uint_eq(json_array_size(json_object_get(cmp, "rows")), 9);
	r = row(cmp, "run.wall_ms", "value");
	ck_assert_double_eq_tol(num(r, "ratio"), 1.1, 1e-12);
	ck_assert_double_eq_tol(num(r, "delta_pct"), 10, 1e-9);
	ck_assert_str_eq(flag(r), "");			/* within 20% */
	r = row(cmp, "throughput.takes_per_s", "value");
	ck_assert_double_eq_tol(num(r, "ratio"), 0.6, 1e-12);
	ck_assert_double_eq_tol(num(r, "delta_pct"), -40, 1e-9);
	ck_assert_str_eq(flag(r), "regression");	/* higher is better */
	r = row(cmp, "throughput.write_to_take", "p99");
	ck_assert_double_eq_tol(num(r, "ratio"), 2.5, 1e-12);
	ck_assert_str_eq(flag(r), "regression");	/* lower is better */
	ck_assert_str_eq(json_string_value(json_object_get(r, "unit")), "us");
	r = row(cmp, "throughput.write_to_take", "count");
	ck_assert_str_eq(json_string_value(json_object_get(r, "better")),
	    "none");
	ck_assert_str_eq(flag(r), "");
	/* from 0 to 2: no ratio, but changed */
	r = row(cmp, "history.lost", "value");
	ck_assert(json_is_null(json_object_get(r, "ratio")));
	ck_assert_str_eq(flag(r), "changed");
	/* the worst regression: write_to_take p90, 1990 to 4990 us */
	ck_assert_double_eq_tol(num(cmp, "worst_regression_pct"),
	    3000.0 / 1990 * 100, 1e-9);
	/* the flipped check */
	ck_assert_uint_eq(json_array_size(json_object_get(cmp,
	    "checks_flipped")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(cmp, "checks_flipped"), 0), "b")), "FAIL");
	json_decref(a);
	json_decref(b);
	json_decref(cmp);
}
END_TEST

START_TEST(test_geomean_per_direction)
{
	json_t *a = json_pack("[o]", report(1000, 50, 2000, 0, "PASS"));
	json_t *b = json_pack("[o]", report(2000, 100, 2000, 0, "PASS"));
	json_t *cmp = compare_build(a, b, 20);
	const json_t *g = json_object_get(cmp, "geomean");
	double lower;

	/* lower is better: wall x2, write_to_take p50..max x1 (5 stats),
	 * lost 0/0 = 1: (2 * 1^5 * 1)^(1/7) */
	lower = num(json_object_get(g, "lower_is_better"), "ratio");
	ck_assert_double_eq_tol(lower, pow(2, 1.0 / 7), 1e-12);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(g,
	    "lower_is_better"), "measures")), 7);
	ck_assert_double_eq_tol(num(json_object_get(g, "higher_is_better"),
	    "ratio"), 2, 1e-12);
	ck_assert_str_eq(flag(row(cmp, "throughput.takes_per_s", "value")),
	    "improvement");
	json_decref(a);
	json_decref(b);
	json_decref(cmp);
}
END_TEST

START_TEST(test_spread_raises_the_threshold_and_only_one_side)
{
	/* A's repeats spread 1000..1600 (median 1300, spread 46%): B at
	 * 1800 (+38%) is inside it, so not flagged; without repeats it is. */
	json_t *a = json_pack("[o, o, o]", report(1000, 50, 2000, 0, "PASS"),
	    report(1300, 50, 2000, 0, "PASS"), report(1600, 50, 2000, 0,
	    "PASS"));
	json_t *b = json_pack("[o]", report(1800, 50, 2000, 0, "PASS"));
	json_t *a1 = json_pack("[o]", report(1300, 50, 2000, 0, "PASS"));
	json_t *cmp = compare_build(a, b, 20), *cmp1 = compare_build(a1, b, 20);
	const json_t *r = row(cmp, "run.wall_ms", "value");

	ck_assert_double_eq_tol(num(r, "a"), 1300, 1e-9);
	ck_assert_double_eq_tol(num(r, "a_min"), 1000, 1e-9);
	ck_assert_double_eq_tol(num(r, "spread_pct"), 600.0 / 1300 * 100,
	    1e-9);
	ck_assert_str_eq(flag(r), "");
	ck_assert_str_eq(flag(row(cmp1, "run.wall_ms", "value")),
	    "regression");
	json_decref(cmp);
	json_decref(cmp1);
	/* a measure only B has is listed apart, not as a row */
	json_object_set_new(json_object_get(json_array_get(b, 0), "measures"),
	    "churn.catch_up_ms", json_pack("{s:f, s:s}", "value", 5.0, "unit",
	    "ms"));
	cmp = compare_build(a, b, 20);
	ck_assert_ptr_null(row(cmp, "churn.catch_up_ms", "value"));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(cmp,
	    "only_b"), 0)), "churn.catch_up_ms");
	json_decref(cmp);
	json_decref(a);
	json_decref(a1);
	json_decref(b);
}
END_TEST

START_TEST(test_welch_p)
{
	double a[] = { 1, 2, 3, 4, 5 }, b[] = { 2, 4, 6, 8, 10 };
	double c[] = { 7, 7, 7 }, d[] = { 8, 8, 8 };

	/* t = 1.897, df = 5.88: p from the t distribution's density
	 * integrated numerically (Simpson, 200,000 steps) */
	ck_assert_double_eq_tol(compare_welch_p(a, 5, b, 5), 0.10753119493,
	    1e-8);
	ck_assert_double_eq_tol(compare_welch_p(a, 5, a, 5), 1, 1e-12);
	ck_assert_double_eq(compare_welch_p(c, 3, d, 3), 0);	/* certain */
	ck_assert_double_eq(compare_welch_p(c, 3, c, 3), 1);
	ck_assert(isnan(compare_welch_p(a, 1, b, 5)));
}
END_TEST

/* n reports whose wall_ms and p99 are base + i * step, and takes_per_s
 * tps + i * 0.001. */
static json_t *
repeats(int n, double base, double step, double tps)
{
	json_t *arr = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(arr, report(base + i * step, tps + i *
		    0.001, (json_int_t)(base + i * step), 0, "PASS"));
	return arr;
}

START_TEST(test_repeats_flag_by_the_test_and_the_floor)
{
	/* the same spread on both sides, means 10 apart: noise, not flagged
	 * (it was: 1000..1400 against 1010..1410 is +1% at n=1, but the
	 * old rule flagged anything past 20% and the spread, and a 7x p99
	 * between two seeds passed that) */
	json_t *a = repeats(5, 1000, 100, 50), *b = repeats(5, 1010, 100, 50);
	json_t *cmp = compare_build(a, b, 20);
	json_t *r;
	size_t i;

	ck_assert_str_eq(json_string_value(json_object_get(cmp, "test")),
	    "welch-holm");
	ck_assert_int_eq(json_integer_value(json_object_get(cmp, "n_a")), 5);
	json_array_foreach(json_object_get(cmp, "rows"), i, r)
		ck_assert_str_eq(flag(r), "");
	json_decref(b);
	json_decref(cmp);
	/* twice as slow, tight runs: significant after Holm, flagged */
	b = repeats(5, 2000, 100, 50);
	cmp = compare_build(a, b, 20);
	r = (json_t *)row(cmp, "run.wall_ms", "value");
	ck_assert_str_eq(flag(r), "regression");
	ck_assert(json_is_true(json_object_get(r, "significant")));
	ck_assert(num(r, "p_value") < 0.001);
	/* takes_per_s moved by 0.5 ops/s on tight runs: significant, but
	 * below the 1 ops/s floor, so not flagged */
	json_decref(b);
	json_decref(cmp);
	b = repeats(5, 1000, 100, 50.5);
	cmp = compare_build(a, b, 20);
	r = (json_t *)row(cmp, "throughput.takes_per_s", "value");
	ck_assert(num(r, "p_value") < 0.001);
	ck_assert_str_eq(flag(r), "");
	ck_assert(json_array_size(json_object_get(cmp, "mismatch")) == 0);
	json_decref(a);
	json_decref(b);
	json_decref(cmp);
}
END_TEST

START_TEST(test_mismatch_scenario_and_params)
{
	json_t *a = repeats(2, 1000, 100, 50), *b = repeats(2, 1000, 100, 50);
	json_t *cmp, *m;

	for (size_t i = 0; i < 2; i++) {
		json_object_set_new(json_array_get(a, i), "params", json_pack(
		    "{s:i, s:i}", "peers", 4, "entries", 50));
		json_object_set_new(json_array_get(b, i), "params", json_pack(
		    "{s:i, s:i}", "peers", 4, "entries", i ? 600 : 50));
	}
	cmp = compare_build(a, b, 20);
	m = json_array_get(json_object_get(cmp, "mismatch"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(m, "what")), "param");
	ck_assert_str_eq(json_string_value(json_object_get(m, "name")),
	    "entries");
	ck_assert_int_eq(json_integer_value(json_object_get(m, "b")), 600);
	ck_assert_uint_eq(json_array_size(json_object_get(cmp, "mismatch")), 1);
	json_decref(cmp);
	json_object_set_new(json_array_get(b, 0), "scenario",
	    json_string("churn"));
	cmp = compare_build(a, b, 20);
	m = json_array_get(json_object_get(cmp, "mismatch"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(m, "what")),
	    "scenario");
	json_decref(a);
	json_decref(b);
	json_decref(cmp);
}
END_TEST

START_TEST(test_exact_numbers)
{
	char buf[NUM_BUF];
	double tricky[] = { 0.039161, 0.1, 1.0 / 3, 2145960.5, 1e-300,
	    123456789.123, 5e-324, 1.7976931348623157e308, -0.25 };

	ck_assert_str_eq(num_exact(2145960, buf, sizeof(buf)), "2145960");
	ck_assert_str_eq(num_exact(0.039161, buf, sizeof(buf)), "0.039161");
	ck_assert_str_eq(num_exact(-0.0, buf, sizeof(buf)), "0");
	ck_assert_str_eq(num_exact(NAN, buf, sizeof(buf)), "null");
	for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
		char shorter[NUM_BUF];

		num_exact(tricky[i], buf, sizeof(buf));
		ck_assert(strtod(buf, NULL) == tricky[i]);
		/* and no shorter form reads back the same */
		for (int p = 1; p < 17; p++) {
			snprintf(shorter, sizeof(shorter), "%.*g", p, tricky[i]);
			if (strtod(shorter, NULL) == tricky[i]) {
				ck_assert_uint_le(strlen(buf), strlen(shorter));
				break;
			}
		}
	}
	ck_assert_str_eq(num_human(517119, "us", buf, sizeof(buf)), "517 ms");
	ck_assert_str_eq(num_human(2.5 * 1048576, "bytes", buf, sizeof(buf)),
	    "2.5 MiB");
	ck_assert_str_eq(num_human(1500, "ms", buf, sizeof(buf)), "1.5 s");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_rows_ratios_flags);
	tcase_add_test(tc, test_geomean_per_direction);
	tcase_add_test(tc, test_spread_raises_the_threshold_and_only_one_side);
	tcase_add_test(tc, test_exact_numbers);
	tcase_add_test(tc, test_welch_p);
	tcase_add_test(tc, test_repeats_flag_by_the_test_and_the_floor);
	tcase_add_test(tc, test_mismatch_scenario_and_params);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

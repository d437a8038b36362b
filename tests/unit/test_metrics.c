/*
 * test_metrics.c: unit tests for common/metrics.c.
 *
 * The tests walk the same X-macro lists the module is generated from, so
 * a counter added to metrics.h is covered here without editing this file:
 * reset must zero every byte, the JSON must hold every declared name (and
 * nothing else), metrics_add must sum each counter, and the JSON must read
 * back.  The per-kind and per-reason names must be frame.h's.
 */
#include <sys/resource.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "metrics.h"

/* Give every counter and slot a distinct value: base + its position. */
static void
fill(struct metrics *m, uint64_t base)
{
	uint64_t *p = (uint64_t *)(void *)m;

	for (size_t i = 0; i < sizeof(*m) / sizeof(uint64_t); i++)
		p[i] = base + i;
}

START_TEST(reset_zeroes_everything)
{
	static const struct metrics zero;
	struct metrics m;

	ck_assert_uint_eq(sizeof(m) % sizeof(uint64_t), 0);
	memset(&m, 0xa5, sizeof(m));
	metrics_reset(&m);
	ck_assert(memcmp(&m, &zero, sizeof(m)) == 0);
}
END_TEST

START_TEST(json_has_every_name)
{
	struct metrics m;
	json_t *j, *sub;
	size_t keys = 0;

	fill(&m, 1);
	j = metrics_to_json(&m);
#define HAS(f, n) do {							\
	ck_assert_msg(json_is_integer(json_object_get(j, n)), "%s", n);	\
	ck_assert_int_eq(json_integer_value(json_object_get(j, n)),	\
	    (json_int_t)m.f);						\
	keys++;								\
} while (0);
	METRICS_COUNTERS(HAS)
#undef HAS
#define HAS_ARRAY(f, n, size, names) do {				\
	sub = json_object_get(j, n);					\
	ck_assert_msg(json_is_object(sub), "%s", n);			\
	keys++;								\
} while (0);
	METRICS_ARRAYS(HAS_ARRAY)
#undef HAS_ARRAY
	ck_assert_uint_eq(json_object_size(j), keys);

	/* Every frame kind, by its wire value, in each per-kind object. */
#define KIND(e, v, n) do {						\
	ck_assert_int_eq(json_integer_value(json_object_get(		\
	    json_object_get(j, "frames.in_by_kind"), n)),		\
	    (json_int_t)m.frames_in_kind[v]);				\
	ck_assert_int_eq(json_integer_value(json_object_get(		\
	    json_object_get(j, "bytes.out_by_kind"), n)),		\
	    (json_int_t)m.bytes_out_kind[v]);				\
} while (0);
	FRAME_KINDS(KIND)
#undef KIND
	ck_assert_uint_eq(json_object_size(json_object_get(j,
	    "frames.out_by_kind")), FRAME_KIND_MAX - 1);
	/* Every frame error but "ok". */
#define FERR(e, n) do {							\
	json_t *v = json_object_get(json_object_get(j, "frames.bad"), n); \
	if (FRAME_##e == FRAME_OK)					\
		ck_assert_ptr_null(v);					\
	else								\
		ck_assert_int_eq(json_integer_value(v),			\
		    (json_int_t)m.bad_frames[FRAME_##e]);		\
} while (0);
	FRAME_ERRORS(FERR)
#undef FERR
	ck_assert_uint_eq(json_object_size(json_object_get(j, "frames.bad")),
	    FRAME_ERR_MAX - 1);
#define REJ(e, n)							\
	ck_assert_int_eq(json_integer_value(json_object_get(		\
	    json_object_get(j, "frames.rejected"), n)),			\
	    (json_int_t)m.rejected[METRICS_REJECT_##e]);
	METRICS_REJECTS(REJ)
#undef REJ
#define LIM(e, n)							\
	ck_assert_int_eq(json_integer_value(json_object_get(		\
	    json_object_get(j, "limits.hit"), n)),			\
	    (json_int_t)m.limits_hit[METRICS_LIMIT_##e]);
	METRICS_LIMITS(LIM)
#undef LIM
	json_decref(j);

	/* Zeros are kept: same keys for an idle peer. */
	metrics_reset(&m);
	j = metrics_to_json(&m);
	ck_assert_uint_eq(json_object_size(j), keys);
	ck_assert_int_eq(json_integer_value(json_object_get(
	    json_object_get(j, "frames.rejected"), "replay")), 0);
	json_decref(j);
}
END_TEST

START_TEST(spot_names)
{
	struct metrics m;
	json_t *j;

	metrics_reset(&m);
	m.frames_in = 7;
	m.frames_in_kind[FRAME_RUMOR] = 3;
	m.bad_frames[FRAME_ESIG] = 2;
	m.rejected[METRICS_REJECT_FUTURE_STRIKE] = 1;
	m.limits_hit[METRICS_LIMIT_CONTROL_LINE] = 4;
	j = metrics_to_json(&m);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "frames.in")),
	    7);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "frames.in_by_kind"), "rumor")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "frames.bad"), "bad_signature")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "frames.rejected"), "future_strike")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "limits.hit"), "control_line")), 4);
	json_decref(j);
}
END_TEST

START_TEST(add_sums)
{
	struct metrics a, b, c;
	const uint64_t *pa, *pc;

	fill(&a, 1);
	fill(&b, 1000);
	c = a;
	metrics_add(&c, &b);
#define SUM(f, n) ck_assert_uint_eq(c.f, a.f + b.f);
	METRICS_COUNTERS(SUM)
#undef SUM
#define SUM_ARRAY(f, n, size, names)					\
	for (size_t i = 0; i < (size_t)(size); i++)			\
		ck_assert_uint_eq(c.f[i], a.f[i] + b.f[i]);
	METRICS_ARRAYS(SUM_ARRAY)
#undef SUM_ARRAY
	/* Every byte of the struct took part. */
	pa = (const uint64_t *)(const void *)&a;
	pc = (const uint64_t *)(const void *)&c;
	for (size_t i = 0; i < sizeof(a) / sizeof(uint64_t); i++)
		ck_assert_uint_eq(pc[i], 2 * pa[i] + 999);
}
END_TEST

START_TEST(json_round_trip)
{
	struct metrics m, back;
	json_t *j, *k;
	char *text;

	fill(&m, 5);
	/* Slots without a name are never counted; keep them zero. */
	m.frames_in_kind[0] = m.frames_out_kind[0] = 0;
	m.bytes_in_kind[0] = m.bytes_out_kind[0] = 0;
	m.bad_frames[FRAME_OK] = 0;
	j = metrics_to_json(&m);
	text = json_dumps(j, JSON_COMPACT);
	k = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(k);
	memset(&back, 0xff, sizeof(back));
	ck_assert_int_eq(metrics_from_json(&back, k), 0);
	ck_assert(memcmp(&m, &back, sizeof(m)) == 0);
	free(text);
	json_decref(k);

	/* Refusals leave the target alone. */
	ck_assert_int_eq(metrics_from_json(&back, NULL), -1);
	k = json_array();
	ck_assert_int_eq(metrics_from_json(&back, k), -1);
	json_decref(k);
	k = json_deep_copy(j);
	json_object_del(k, "takes.won");
	ck_assert_int_eq(metrics_from_json(&back, k), -1);
	json_decref(k);
	k = json_deep_copy(j);
	json_object_set_new(k, "links.up", json_integer(-1));
	ck_assert_int_eq(metrics_from_json(&back, k), -1);
	json_decref(k);
	k = json_deep_copy(j);
	json_object_set_new(k, "links.up", json_string("3"));
	ck_assert_int_eq(metrics_from_json(&back, k), -1);
	json_decref(k);
	k = json_deep_copy(j);
	json_object_del(json_object_get(k, "frames.bad"), "cbor");
	ck_assert_int_eq(metrics_from_json(&back, k), -1);
	json_decref(k);
	k = json_deep_copy(j);
	json_object_set_new(k, "limits.hit", json_integer(1));
	ck_assert_int_eq(metrics_from_json(&back, k), -1);
	json_decref(k);
	ck_assert(memcmp(&m, &back, sizeof(m)) == 0);
	/* Unknown keys are ignored (a newer peer may say more). */
	k = json_deep_copy(j);
	json_object_set_new(k, "future.counter", json_integer(1));
	ck_assert_int_eq(metrics_from_json(&back, k), 0);
	json_decref(k);
	json_decref(j);
}
END_TEST

START_TEST(hists_merge_and_json)
{
	struct metrics_hists *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct metrics_hists *back = malloc(sizeof(*back));
	json_t *j, *bad;

	metrics_hists_init(a);
	metrics_hists_init(b);
	hist_record(&a->write_to_visible, 100);
	hist_record(&b->write_to_visible, 300);
	hist_record(&b->control_rtt, 42);
	metrics_hists_merge(a, b);
	ck_assert_uint_eq(hist_count(&a->write_to_visible), 2);
	ck_assert_uint_eq(hist_max(&a->write_to_visible), 300);
	ck_assert_uint_eq(hist_count(&a->control_rtt), 1);
	ck_assert_uint_eq(hist_count(&a->write_to_take), 0);

	j = metrics_hists_to_json(a);
#define HAS(f, n) ck_assert(json_is_object(json_object_get(j, n)));
	METRICS_HISTS(HAS)
#undef HAS
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "control_rtt"), "unit")), "us");
	metrics_hists_init(back);
	ck_assert_int_eq(metrics_hists_from_json(back, j), 0);
	ck_assert_uint_eq(hist_count(&back->write_to_visible), 2);
	ck_assert_uint_eq(hist_percentile(&back->control_rtt, 50), 42);

	bad = json_deep_copy(j);
	json_object_del(bad, "write_to_take");
	ck_assert_int_eq(metrics_hists_from_json(b, bad), -1);
	ck_assert_int_eq(metrics_hists_from_json(b, NULL), -1);
	ck_assert_uint_eq(hist_count(&b->write_to_visible), 1);
	json_decref(bad);
	json_decref(j);
	free(a);
	free(b);
	free(back);
}
END_TEST

START_TEST(rusage_json)
{
	struct rusage ru;
	json_t *j;

	memset(&ru, 0, sizeof(ru));
	ru.ru_utime.tv_sec = 1;
	ru.ru_utime.tv_usec = 500000;
	ru.ru_stime.tv_usec = 250000;
	ru.ru_maxrss = 12345;
	ru.ru_nvcsw = 77;
	ru.ru_nivcsw = 5;
	j = metrics_rusage_to_json(&ru);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "wakeups")), 77);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "preemptions")), 5);
	ck_assert(json_real_value(json_object_get(j, "cpu_s")) == 1.75);
	ck_assert(json_real_value(json_object_get(j, "cpu_user_s")) == 1.5);
	ck_assert(json_real_value(json_object_get(j, "cpu_sys_s")) == 0.25);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "max_rss_kib")), 12345);
	json_decref(j);

	/* This process: the keys are there and a live process has an RSS. */
	j = metrics_rusage_json();
	ck_assert(json_is_real(json_object_get(j, "cpu_s")));
	ck_assert(json_real_value(json_object_get(j, "cpu_s")) >= 0.0);
	ck_assert_int_gt(json_integer_value(json_object_get(j,
	    "max_rss_kib")), 0);
	ck_assert(json_is_integer(json_object_get(j, "wakeups")));
	json_decref(j);
}
END_TEST

START_TEST(snapshot_sections)
{
	struct metrics m;
	struct metrics_hists *h = malloc(sizeof(*h));
	json_t *j;

	metrics_reset(&m);
	m.writes = 9;
	metrics_hists_init(h);
	j = metrics_snapshot_json(&m, h, NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "counters"), "space.writes")), 9);
	ck_assert(json_is_object(json_object_get(json_object_get(j,
	    "latency"), "write_to_take")));
	ck_assert(json_is_integer(json_object_get(json_object_get(j,
	    "process"), "max_rss_kib")));
	json_decref(j);
	j = metrics_snapshot_json(&m, NULL, NULL);
	ck_assert_ptr_null(json_object_get(j, "latency"));
	json_decref(j);
	free(h);
}
END_TEST

START_TEST(only_names_what_it_says)
{
	json_t *only = json_pack("[s,s,s,s,i]", "gauges", "counters.frames.in",
	    "counters.limits.hit.links", "latency.write", 7);
	struct metrics m;
	json_t *j, *c;

	ck_assert(metrics_wants(NULL, "counters", "frames.in"));
	ck_assert(metrics_wants(only, "gauges", "links"));
	ck_assert(metrics_wants(only, "counters", "frames.in"));
	/* Whole dotted components only. */
	ck_assert(!metrics_wants(only, "counters", "frames.in_by_kind"));
	ck_assert(!metrics_wants(only, "counters", "frames.out"));
	ck_assert(!metrics_wants(only, "latency", "write_to_visible"));
	ck_assert(!metrics_wants(only, "gaugesx", "links"));
	/* A name inside an object figure names the figure. */
	ck_assert(metrics_wants(only, "counters", "limits.hit"));
	ck_assert(!metrics_wants(only, "counters", "limits.hits"));
	ck_assert(!metrics_wants(only, "process", "cpu_s"));
	json_decref(only);
	only = json_pack("[s]", "counters.frames");
	ck_assert(metrics_wants(only, "counters", "frames.in"));
	ck_assert(metrics_wants(only, "counters", "frames.bad"));
	ck_assert(!metrics_wants(only, "counters", "framesx"));

	metrics_reset(&m);
	m.frames_in = 3;
	j = metrics_snapshot_json(&m, NULL, only);
	c = json_object_get(j, "counters");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "frames.in")), 3);
	ck_assert(json_is_object(json_object_get(c, "frames.in_by_kind")));
	ck_assert_ptr_null(json_object_get(c, "space.writes"));
	ck_assert_ptr_null(json_object_get(j, "process"));	/* none named */
	json_decref(j);
	json_decref(only);
}
END_TEST

/*
 * The mask of an only is built once and kept while the peer is asked the
 * same names (each sample asks the same), rebuilt when they change, and
 * says what metrics_wants says.
 */
START_TEST(mask_is_kept_for_the_same_only)
{
	json_t *a = json_pack("[s,s]", "counters.frames.in", "gauges"),
	    *b = json_pack("[s,s]", "counters.frames.in", "gauges"),
	    *c = json_pack("[s]", "counters.space");
	struct metrics m;
	uint64_t b0;
	json_t *j;

	metrics_reset(&m);
	m.frames_in = 4;
	m.writes = 2;
	b0 = metrics_counters_mask.builds;
	j = metrics_snapshot_json(&m, NULL, a);
	json_decref(j);
	j = metrics_snapshot_json(&m, NULL, b);	/* equal, another object */
	ck_assert_uint_eq(metrics_counters_mask.builds, b0 + 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "counters"), "frames.in")), 4);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "counters"),
	    "space.writes"));
	json_decref(j);
	j = metrics_snapshot_json(&m, NULL, c);
	ck_assert_uint_eq(metrics_counters_mask.builds, b0 + 2);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "counters"),
	    "frames.in"));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "counters"), "space.writes")), 2);
	json_decref(j);
	/* The mask agrees with metrics_wants, name by name. */
	{
		const uint8_t *w = metrics_mask(&metrics_counters_mask, a);

		for (size_t i = 0; i < metrics_counters_mask.n; i++)
			ck_assert_int_eq(w[i], metrics_wants(a, "counters",
			    metrics_counters_mask.keys[i]));
	}
	ck_assert_ptr_null(metrics_mask(&metrics_counters_mask, NULL));
	json_decref(a);
	json_decref(b);
	json_decref(c);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("metrics");

	tcase_add_test(tc, reset_zeroes_everything);
	tcase_add_test(tc, json_has_every_name);
	tcase_add_test(tc, spot_names);
	tcase_add_test(tc, add_sums);
	tcase_add_test(tc, json_round_trip);
	tcase_add_test(tc, hists_merge_and_json);
	tcase_add_test(tc, rusage_json);
	tcase_add_test(tc, snapshot_sections);
	tcase_add_test(tc, only_names_what_it_says);
	tcase_add_test(tc, mask_is_kept_for_the_same_only);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(metrics_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

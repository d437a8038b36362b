/*
 * test_measures.c: the one measure table (orchestrator/measures.h) and the
 * engine's way of storing a measure (orchestrator/engine.c).  A name the
 * table does not list has no row (the old measures_find() fell back to the
 * wait step's row, so a renamed measure went on with another's unit and
 * direction: the first test fails on that code); each row's id is its
 * name; the engine takes the unit from the row alone, and a name made at
 * run time that the table lacks stops the run instead of being stored.
 */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "knob.h"
#include "measures.h"

START_TEST(test_unknown_name_has_no_row)
{
	ck_assert_ptr_null(measures_find("no.such_measure"));
	ck_assert_ptr_null(measures_find("run.wall"));
	ck_assert_ptr_null(measures_find("counters.frames.out"));
	ck_assert_ptr_null(measures_find(""));
	ck_assert_ptr_nonnull(measures_find("run.wall_ms"));
	ck_assert_str_eq(measures_find("run.wall_ms")->unit, "ms");
	ck_assert_str_eq(measures_find("swarm.aggregate_mib_s")->unit, "MiB/s");
	/* The report's readers: a wait step's own measure. */
	ck_assert_str_eq(measures_shown("churn.catch_up_ms")->unit, "ms");
	ck_assert_ptr_eq(measures_shown("run.wall_ms"),
	    measures_find("run.wall_ms"));
}
END_TEST

/* Every row's id is its name in capitals with '_' for '.'. */
START_TEST(test_ids_are_the_names)
{
	static const struct {
		const char	*id, *name;
		enum measure_id	 m;
	} rows[] = {
#define ROW(id, n, ...) { #id, n, M_##id },
		MEASURES(ROW)
#undef ROW
	};
	char want[128];

	ck_assert_int_eq(sizeof(rows) / sizeof(rows[0]), M_COUNT);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t k;

		for (k = 0; rows[i].name[k] != '\0' && k + 1 < sizeof(want); k++)
			want[k] = rows[i].name[k] == '.' ? '_' :
			    (char)toupper((unsigned char)rows[i].name[k]);
		want[k] = '\0';
		ck_assert_str_eq(rows[i].id, want);
		ck_assert_int_eq(rows[i].m, (int)i);
		ck_assert_str_eq(measures_row(rows[i].m)->name, rows[i].name);
		ck_assert_ptr_eq(measures_find(rows[i].name),
		    measures_row(rows[i].m));
		/* A latency is a histogram of microseconds. */
		if (measures_row(rows[i].m)->latency)
			ck_assert_str_eq(measures_row(rows[i].m)->unit, "us");
	}
}
END_TEST

/* The names act_reconcile makes at run time: every method's are listed. */
START_TEST(test_every_reconcile_method_has_its_rows)
{
	static const char *const keys[] = { "rounds", "bytes", "record_bytes",
	    "records", "ms", "record_ratio", "equal", NULL };
	char name[128];
	size_t n = 0;

	for (const char *const *m = knob_methods; *m != NULL; m++)
		for (const char *const *k = keys; *k != NULL; k++) {
			snprintf(name, sizeof(name), "reconcile.%s.%s", *m,
			    *k);
			ck_assert_msg(measures_find(name) != NULL,
			    "%s is not in MEASURES()", name);
			n++;
		}
	ck_assert_uint_ge(n, 7);
}
END_TEST

START_TEST(test_engine_stores_the_rows_unit_and_refuses_unknown_names)
{
	struct run r;
	json_t *m;

	memset(&r, 0, sizeof(r));
	r.measures = json_object();
	engine_measure(&r, M_FLEET_REST_BYTES_PER_PEER_S, 12.5);
	m = json_object_get(r.measures, "fleet.rest_bytes_per_peer_s");
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(json_string_value(json_object_get(m, "unit")),
	    "bytes/s");
	ck_assert(json_real_value(json_object_get(m, "value")) == 12.5);
	ck_assert_int_eq(engine_measure_named(&r, "reconcile.riblt.bytes", 3),
	    0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    r.measures, "reconcile.riblt.bytes"), "unit")), "bytes");
	engine_measure_wait(&r, "churn.catch_up_ms", 40);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    r.measures, "churn.catch_up_ms"), "unit")), "ms");
	engine_measure_counter(&r, "counters.frames.out", 7);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    r.measures, "counters.frames.out"), "unit")), "count");
	ck_assert_int_eq(r.status, RUN_PASS);

	ck_assert_int_eq(engine_measure_named(&r, "reconcile.nope.bytes", 3),
	    -1);
	ck_assert_ptr_null(json_object_get(r.measures, "reconcile.nope.bytes"));
	ck_assert_int_eq(r.status, RUN_ERROR);
	ck_assert_ptr_nonnull(strstr(r.error, "reconcile.nope.bytes"));
	json_decref(r.measures);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("measures");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_unknown_name_has_no_row);
	tcase_add_test(tc, test_ids_are_the_names);
	tcase_add_test(tc, test_every_reconcile_method_has_its_rows);
	tcase_add_test(tc,
	    test_engine_stores_the_rows_unit_and_refuses_unknown_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

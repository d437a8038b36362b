/*
 * test_step.c: a resolved scenario step as the engine reads it
 * (orchestrator/step.c into struct step, whose members the field tables of
 * orchestrator/action.h declare).  Every step of every scenario in
 * scenarios/ reads; each kind of field arrives with its C type, defaults
 * filled and absent values marked; a value not of its field's kind and an
 * action ACTIONS() does not list are refused by name.  And the parser's
 * "action missing" message lists every action of ACTIONS() (it had a stale
 * hand-written list without publish, fetch, reconcile and rest: that test
 * fails on the old code).
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "scenario.h"
#include "step.h"

static json_t *
parse(const char *text)
{
	char err[512];
	json_t *res = scenario_parse(text, strlen(text), "t.json", NULL, 0,
	    err, sizeof(err));

	ck_assert_msg(res != NULL, "%s", err);
	return res;
}

static void
read_ok(json_t *steps, size_t i, struct step *s)
{
	char err[300];

	ck_assert_msg(step_read(json_array_get(steps, i), s, err,
	    sizeof(err)) == 0, "steps[%zu]: %s", i, err);
}

START_TEST(test_every_scenario_reads)
{
	DIR *d = opendir("scenarios");
	struct dirent *e;
	size_t files = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		char path[512], err[512];
		json_t *res, *steps;
		size_t n = strlen(e->d_name);
		struct step s;

		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "scenarios/%s", e->d_name);
		res = scenario_load(path, NULL, 0, err, sizeof(err));
		ck_assert_msg(res != NULL, "%s", err);
		steps = json_object_get(res, "steps");
		for (size_t i = 0; i < json_array_size(steps); i++) {
			read_ok(steps, i, &s);
			ck_assert_str_eq(s.action, json_string_value(
			    json_object_get(json_array_get(steps, i),
			    "action")));
			ck_assert_str_eq(s.name, json_string_value(
			    json_object_get(json_array_get(steps, i), "name")));
			ck_assert(s.timeout_s > 0);
		}
		json_decref(res);
		files++;
	}
	closedir(d);
	ck_assert_uint_ge(files, 8);
}
END_TEST

START_TEST(test_typed_values)
{
	json_t *res = parse(
	    "{\"name\": \"t\", \"description\": \"d\",\n"
	    " \"fleet\": {\"peers\": 3},\n"
	    " \"steps\": [\n"
	    "  {\"action\": \"start\", \"peers\": [0, 1]},\n"
	    "  {\"action\": \"join\", \"knobs\": {\"hops\": 2}, \"at_ms\": 5},\n"
	    "  {\"action\": \"connect\", \"from\": 3, \"to\": 0, \"at_ms\": 5},\n"
	    "  {\"action\": \"fault\", \"drop\": 0.5, \"peer\": 3, "
	    "\"target\": 1},\n"
	    "  {\"action\": \"fault\", \"partition\": [[0, 1], [2, 3]]},\n"
	    "  {\"action\": \"fault\", \"clear\": true},\n"
	    "  {\"action\": \"write\", \"peer\": 0, \"count\": 9, "
	    "\"rate\": 2},\n"
	    "  {\"action\": \"take\", \"peer\": 2},\n"
	    "  {\"action\": \"wait\", \"until\": \"taken\", \"measure\": "
	    "\"x.took_ms\"},\n"
	    "  {\"action\": \"wait\", \"until\": \"metric\", \"metric\": "
	    "\"x.took_ms\", \"op\": \">\", \"value\": 1},\n"
	    "  {\"action\": \"rest\", \"ms\": 10, \"timeout_s\": 0.5},\n"
	    "  {\"action\": \"reconcile\", \"method\": \"riblt\", "
	    "\"diff\": 7},\n"
	    "  {\"action\": \"restart\", \"peer\": \"all\"}]}");
	json_t *steps = json_object_get(res, "steps");
	struct step s;

	read_ok(steps, 0, &s);
	ck_assert_int_eq(s.act, ACTION_start);
	ck_assert_int_eq(s.at_ms, -1);
	ck_assert(s.timeout_s == 60.0);
	ck_assert_int_eq(json_array_size(s.u.start.peers), 2);
	read_ok(steps, 1, &s);
	ck_assert_int_eq(s.act, ACTION_join);
	ck_assert_int_eq(s.at_ms, 5);
	ck_assert_int_eq(json_integer_value(json_object_get(s.u.join.knobs,
	    "hops")), 2);
	read_ok(steps, 2, &s);
	ck_assert_int_eq(s.u.connect.from, 3);
	ck_assert_int_eq(s.u.connect.to, 0);
	read_ok(steps, 3, &s);
	ck_assert_int_eq(s.act, ACTION_fault);
	ck_assert(s.u.fault.drop == 0.5);
	ck_assert_int_eq(s.u.fault.delay_ms, 0);
	ck_assert_int_eq(s.u.fault.target, 1);
	ck_assert_ptr_null(s.u.fault.partition);
	ck_assert(!s.u.fault.clear);
	read_ok(steps, 4, &s);
	ck_assert_int_eq(json_array_size(s.u.fault.partition), 2);
	ck_assert_ptr_null(s.u.fault.peer);
	ck_assert_int_eq(s.u.fault.target, -1);
	read_ok(steps, 5, &s);
	ck_assert(s.u.fault.clear);
	ck_assert_str_eq(json_string_value(s.u.fault.peer), "all");
	read_ok(steps, 6, &s);
	ck_assert_int_eq(s.act, ACTION_write);
	ck_assert_int_eq(s.u.write.count, 9);
	ck_assert(s.u.write.rate == 2.0);
	ck_assert_str_eq(s.u.write.type, "task#v1");
	ck_assert_int_eq(s.u.write.payload_bytes, 64);
	ck_assert_int_eq(s.u.write.lease_ms, 3600000);
	ck_assert(s.u.write.wait);
	ck_assert_int_eq(s.u.write.bulk_above, -1);
	read_ok(steps, 7, &s);
	ck_assert_int_eq(s.u.take.count, -1);		/* null: all */
	ck_assert_int_eq(s.u.take.workers, 1);
	ck_assert(s.u.take.complete);
	ck_assert_int_eq(s.u.take.timeout_ms, 1000);
	read_ok(steps, 8, &s);
	ck_assert_str_eq(s.u.wait.until, "taken");
	ck_assert_str_eq(s.u.wait.measure, "x.took_ms");
	ck_assert_ptr_null(s.u.wait.metric);
	ck_assert(isnan(s.u.wait.value));
	read_ok(steps, 9, &s);
	ck_assert_ptr_null(s.u.wait.measure);
	ck_assert_str_eq(s.u.wait.op, ">");
	ck_assert(s.u.wait.value == 1.0);
	read_ok(steps, 10, &s);
	ck_assert_int_eq(s.act, ACTION_rest);
	ck_assert_int_eq(s.u.sleep.ms, 10);
	ck_assert(s.timeout_s == 0.5);
	read_ok(steps, 11, &s);
	ck_assert_str_eq(s.u.reconcile.method, "riblt");
	ck_assert_int_eq(s.u.reconcile.peer, 0);
	ck_assert_int_eq(s.u.reconcile.with, 1);
	ck_assert_int_eq(s.u.reconcile.diff, 7);
	ck_assert_int_eq(s.u.reconcile.common, 0);
	read_ok(steps, 12, &s);
	ck_assert_int_eq(s.act, ACTION_restart);
	ck_assert_str_eq(json_string_value(s.u.peer.peer), "all");
	json_decref(res);
}
END_TEST

START_TEST(test_refused_by_name)
{
	char err[300];
	struct step s;
	json_t *j;

	j = json_pack("{s:s, s:s, s:n, s:f, s:i, s:s}", "action", "write",
	    "name", "w", "at_ms", "timeout_s", 60.0, "peer", 0, "count", "9");
	ck_assert_int_eq(step_read(j, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "count"));
	json_decref(j);
	j = json_pack("{s:s, s:s}", "name", "w", "action", "explode");
	ck_assert_int_eq(step_read(j, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "\"explode\""));
	ck_assert_ptr_nonnull(strstr(err, "start, stop, kill"));
	ck_assert_ptr_nonnull(strstr(err, "reconcile"));
	json_decref(j);
	j = json_pack("{s:s}", "name", "w");	/* no action */
	ck_assert_int_eq(step_read(j, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "action"));
	json_decref(j);
	j = json_pack("{s:s, s:s}", "action", "sleep", "name", "z");
	ck_assert_int_eq(step_read(j, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "ms"));	/* required */
	json_decref(j);
	ck_assert_int_eq(step_read(json_null(), &s, err, sizeof(err)), -1);
}
END_TEST

/* The parser's message for a step without an action names every action. */
START_TEST(test_missing_action_lists_every_action)
{
	static const char *const names[] = {
#define ACTION_NAME(n, f, check) #n,
		ACTIONS(ACTION_NAME)
#undef ACTION_NAME
	};
	const char *text = "{\"name\": \"t\", \"description\": \"d\", "
	    "\"fleet\": {\"peers\": 2}, \"steps\": [{\"name\": \"a\"}]}";
	char err[1024];

	ck_assert_ptr_null(scenario_parse(text, strlen(text), "t.json", NULL,
	    0, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "steps[0].action: missing"));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(strstr(err, names[i]) != NULL, "%s lacks %s",
		    err, names[i]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("step");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_every_scenario_reads);
	tcase_add_test(tc, test_typed_values);
	tcase_add_test(tc, test_refused_by_name);
	tcase_add_test(tc, test_missing_action_lists_every_action);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

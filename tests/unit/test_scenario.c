/*
 * test_scenario.c: the scenario parser (orchestrator/scenario.c, scstep.c,
 * sc.c) and its positioned JSON reader (orchestrator/jpos.c).
 *
 * Each built-in scenario resolves to its golden file in tests/golden/
 * (paths are relative to the repository root, where make check runs);
 * each kind of broken file yields its exact one-line message.
 *
 * SCENARIO_GOLDEN_WRITE=1 rewrites the golden files from the current
 * parser (review the diff); SCENARIO_SEED_DIR=dir writes the built-in
 * scenarios and the broken examples as seeds for fuzz_scenario (a leading
 * 0 byte: no --set).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "jpos.h"
#include "action.h"
#include "knob.h"
#include "scenario.h"

#define ERRLEN	1024

static int seedno;

/* Write text as a fuzz seed when SCENARIO_SEED_DIR is set. */
static void
seed_write(const char *name, const char *text, size_t len)
{
	const char *dir = getenv("SCENARIO_SEED_DIR");
	char path[512];
	FILE *fp;

	if (dir == NULL || *dir == '\0')
		return;
	snprintf(path, sizeof(path), "%s/%s_%d", dir, name, seedno++);
	ck_assert_ptr_nonnull(fp = fopen(path, "wb"));
	fputc(0, fp);
	fwrite(text, 1, len, fp);
	fclose(fp);
}

static json_t *
parse(const char *text, char *const *sets, size_t nsets, char *err)
{
	return scenario_parse(text, strlen(text), "t.json", sets, nsets, err,
	    ERRLEN);
}

/* text must be refused with exactly want. */
static void
refused(const char *text, char *const *sets, size_t nsets, const char *want)
{
	char err[ERRLEN];
	json_t *res;

	seed_write("broken", text, strlen(text));
	res = parse(text, sets, nsets, err);
	if (res != NULL) {
		char *s = json_dumps(res, JSON_COMPACT);

		ck_abort_msg("accepted, expected \"%s\": %s", want, s);
	}
	ck_assert_str_eq(err, want);
}

static json_t *
accepted(const char *text, char *const *sets, size_t nsets)
{
	char err[ERRLEN];
	json_t *res;

	seed_write("ok", text, strlen(text));
	res = parse(text, sets, nsets, err);
	ck_assert_msg(res != NULL, "refused: %s", err);
	ck_assert_str_eq(err, "");
	return res;
}

/* A scenario with one step; the caller supplies the step(s) JSON. */
static char *
with_steps(const char *steps, const char *extra)
{
	char *s;

	ck_assert_int_ne(asprintf(&s,
	    "{\"name\": \"t\", \"description\": \"d\",\n"
	    " \"params\": {\"n\": {\"type\": \"int\", \"default\": 5, "
	    "\"min\": 0, \"max\": 9}},\n"
	    " \"fleet\": {\"peers\": 3},%s\n"
	    " \"steps\": [\n%s\n ]}\n", extra, steps), -1);
	return s;
}

/* got must equal want (a new reference, released). */
static void
same(const json_t *got, json_t *want)
{
	ck_assert_ptr_nonnull(want);
	if (!json_equal((json_t *)got, want))
		ck_abort_msg("got %s", json_dumps(got, JSON_COMPACT));
	json_decref(want);
}

/* ---- the built-in scenarios -------------------------------------------- */

static void
golden(const char *name)
{
	char path[256], gpath[256], err[ERRLEN];
	json_error_t jerr;
	json_t *res, *want;
	FILE *fp;
	char *s;

	snprintf(path, sizeof(path), "scenarios/%s.json", name);
	snprintf(gpath, sizeof(gpath), "tests/golden/scenario_%s.json", name);
	res = scenario_load(path, NULL, 0, err, sizeof(err));
	ck_assert_msg(res != NULL, "%s", err);
	if (getenv("SCENARIO_SEED_DIR") != NULL) {
		ck_assert_ptr_nonnull(fp = fopen(path, "rb"));
		s = calloc(1, 1 << 20);
		seed_write(name, s, fread(s, 1, (1 << 20) - 1, fp));
		free(s);
		fclose(fp);
	}
	if (getenv("SCENARIO_GOLDEN_WRITE") != NULL)
		ck_assert_int_eq(json_dump_file(res, gpath, JSON_INDENT(2)), 0);
	want = json_load_file(gpath, 0, &jerr);
	ck_assert_msg(want != NULL, "%s: %s", gpath, jerr.text);
	if (!json_equal(res, want)) {
		s = json_dumps(res, JSON_INDENT(2));
		ck_abort_msg("%s differs from %s:\n%s", path, gpath, s);
	}
	json_decref(want);
	json_decref(res);
}

START_TEST(test_golden_throughput) { golden("throughput"); }
END_TEST
START_TEST(test_golden_gossip) { golden("gossip"); }
END_TEST
START_TEST(test_golden_churn) { golden("churn"); }
END_TEST
START_TEST(test_golden_swarm) { golden("swarm"); }
END_TEST
START_TEST(test_golden_scale) { golden("scale"); }
END_TEST
START_TEST(test_golden_reconcile) { golden("reconcile"); }
END_TEST
START_TEST(test_golden_partition_takes) { golden("partition_takes"); }
END_TEST
START_TEST(test_golden_rest) { golden("rest"); }
END_TEST

START_TEST(test_set_overrides)
{
	char *sets[] = { (char *)"peers=5", (char *)"victim=4", (char *)"entries=7" }, err[ERRLEN];
	json_t *res, *st;

	res = scenario_load("scenarios/churn.json", sets, 3, err, sizeof(err));
	ck_assert_msg(res != NULL, "%s", err);
	ck_assert_int_eq(json_integer_value(json_object_get(
	    json_object_get(res, "fleet"), "peers")), 5);
	st = json_array_get(json_object_get(res, "steps"), 0);
	ck_assert_int_eq(json_array_size(json_object_get(st, "peers")), 5);
	st = json_array_get(json_object_get(res, "steps"), 3);
	same(json_object_get(st, "peer"), json_pack("[i]", 4));
	st = json_array_get(json_object_get(res, "steps"), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(st, "count")), 7);
	st = json_array_get(json_object_get(res, "steps"), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(st, "index")), 5);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(res,
	    "description")), "writes 7 entries, peer 4 is killed"));
	json_decref(res);
}
END_TEST

/* ---- resolution ------------------------------------------------------ */

START_TEST(test_substitution_types)
{
	const char *text =
	    "{\"name\": \"sub-${n}\", \"description\": \"$$5 for ${s}, "
	    "${r} ${b}\",\n"
	    " \"params\": {\"n\": {\"type\": \"int\", \"default\": 2},\n"
	    "  \"r\": {\"type\": \"number\", \"default\": 2, \"choices\": "
	    "[0.5, 2]},\n"
	    "  \"b\": {\"type\": \"bool\", \"default\": false},\n"
	    "  \"s\": {\"type\": \"string\", \"default\": \"x\", "
	    "\"choices\": [\"x\", \"y\"]}},\n"
	    " \"fleet\": {\"peers\": \"$n\", \"topology\": {\"random\": \"$n\"},"
	    " \"knobs\": {\"log-level\": \"debug\", \"gossip-ms\": 50}},\n"
	    " \"steps\": [{\"action\": \"write\", \"peer\": [1, 0], "
	    "\"count\": \"$n\", \"rate\": \"$r\", \"wait\": \"$b\"}]}";
	char *sets[] = { (char *)"r=0.5", (char *)"s=y", (char *)"b=true" };
	json_t *res, *st;

	res = accepted(text, sets, 3);
	ck_assert_str_eq(json_string_value(json_object_get(res, "name")),
	    "sub-2");
	ck_assert_str_eq(json_string_value(json_object_get(res,
	    "description")), "$5 for y, 0.5 true");
	same(json_object_get(res, "params"), json_pack(
	    "{s:i, s:f, s:b, s:s}", "n", 2, "r", 0.5, "b", 1, "s", "y"));
	same(json_object_get(res, "fleet"), json_pack(
	    "{s:i, s:s, s:{s:i}, s:{s:s, s:i}}", "peers", 2, "binding", "tcp",
	    "topology", "random", 2, "knobs", "log-level", "debug",
	    "gossip-ms", 50));
	st = json_array_get(json_object_get(res, "steps"), 0);
	same(st, json_pack("{s:s, s:s, s:n, s:f, s:[i,i], "
	    "s:i, s:f, s:s, s:i, s:i, s:b, s:n}", "action", "write", "name",
	    "write#0", "at_ms", "timeout_s", 60.0, "peer", 1, 0, "count", 2,
	    "rate", 0.5, "type", "task#v1", "payload_bytes", 64, "lease_ms",
	    3600000, "wait", 1, "bulk_above"));
	ck_assert_int_eq(json_array_size(json_object_get(res, "checks")), 0);
	json_decref(res);
}
END_TEST

START_TEST(test_actions_defaults)
{
	const char *text =
	    "{\"name\": \"t\", \"description\": \"d\",\n"
	    " \"timeout_s\": 10, \"sample_ms\": 0,\n"
	    " \"fleet\": {\"peers\": 3, \"knobs\": {\"hops\": 4, "
	    "\"active\": 2}},\n"
	    " \"steps\": [\n"
	    "  {\"action\": \"start\", \"peers\": [0, 1]},\n"
	    "  {\"action\": \"join\", \"knobs\": {\"hops\": 2}, \"at_ms\": 5},\n"
	    "  {\"action\": \"connect\", \"from\": 3, \"to\": 0, \"at_ms\": 5},\n"
	    "  {\"action\": \"fault\", \"drop\": 0.5, \"peer\": 3},\n"
	    "  {\"action\": \"fault\", \"partition\": [[0, 1], [2, 3]]},\n"
	    "  {\"action\": \"fault\", \"clear\": true},\n"
	    "  {\"action\": \"take\", \"peer\": 2, \"count\": 4},\n"
	    "  {\"action\": \"wait\", \"until\": \"taken\", \"measure\": "
	    "\"x.took_ms\"},\n"
	    "  {\"action\": \"wait\", \"until\": \"metric\", \"metric\": "
	    "\"x.took_ms\", \"op\": \">\", \"value\": 1},\n"
	    "  {\"action\": \"sleep\", \"ms\": 10, \"timeout_s\": 0.5},\n"
	    "  {\"action\": \"mark\", \"label\": \"done\"},\n"
	    "  {\"action\": \"restart\", \"peer\": \"all\"}],\n"
	    " \"checks\": [{\"metric\": \"throughput.write_to_take\", \"op\": "
	    "\"<\", \"bound\": 2.5}, {\"metric\": \"counters.links.up\", "
	    "\"op\": \">=\", \"bound\": 1}]}";
	json_t *res, *steps, *want;

	res = accepted(text, NULL, 0);
	steps = json_object_get(res, "steps");
	want = json_loads("["
	    "{\"action\":\"start\",\"name\":\"start#0\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"peers\":[0,1]},"
	    "{\"action\":\"join\",\"name\":\"join#1\",\"at_ms\":5,"
	    "\"timeout_s\":60.0,\"knobs\":{\"hops\":2,\"active\":2},"
	    "\"index\":3},"
	    "{\"action\":\"connect\",\"name\":\"connect#2\",\"at_ms\":5,"
	    "\"timeout_s\":60.0,\"from\":3,\"to\":0},"
	    "{\"action\":\"fault\",\"name\":\"fault#3\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"peer\":[3],\"drop\":0.5,\"delay_ms\":0,"
	    "\"jitter_ms\":0,\"target\":\"*\"},"
	    "{\"action\":\"fault\",\"name\":\"fault#4\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"partition\":[[0,1],[2,3]]},"
	    "{\"action\":\"fault\",\"name\":\"fault#5\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"peer\":\"all\",\"clear\":true},"
	    "{\"action\":\"take\",\"name\":\"take#6\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"peer\":[2],\"workers\":1,\"type\":"
	    "\"task#v1\",\"complete\":true,\"count\":4,\"timeout_ms\":1000,"
	    "\"wait\":true},"
	    "{\"action\":\"wait\",\"name\":\"wait#7\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"until\":\"taken\",\"measure\":"
	    "\"x.took_ms\"},"
	    "{\"action\":\"wait\",\"name\":\"wait#8\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"until\":\"metric\",\"measure\":null,"
	    "\"metric\":\"x.took_ms\",\"op\":\">\",\"value\":1.0},"
	    "{\"action\":\"sleep\",\"name\":\"sleep#9\",\"at_ms\":null,"
	    "\"timeout_s\":0.5,\"ms\":10},"
	    "{\"action\":\"mark\",\"name\":\"mark#10\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"label\":\"done\"},"
	    "{\"action\":\"restart\",\"name\":\"restart#11\",\"at_ms\":null,"
	    "\"timeout_s\":60.0,\"peer\":\"all\"}]", 0, NULL);
	ck_assert_ptr_nonnull(want);
	if (!json_equal(steps, want))
		ck_abort_msg("steps: %s", json_dumps(steps, JSON_COMPACT));
	json_decref(want);
	want = json_loads("["
	    "{\"name\":\"throughput.write_to_take < 2.5\",\"metric\":"
	    "\"throughput.write_to_take\",\"op\":\"<\",\"bound\":2.5,"
	    "\"stat\":\"p99\"},"
	    "{\"name\":\"counters.links.up >= 1.0\",\"metric\":"
	    "\"counters.links.up\",\"op\":\">=\",\"bound\":1.0,\"stat\":null}]",
	    0, NULL);
	ck_assert(json_equal(json_object_get(res, "checks"), want));
	ck_assert(json_real_value(json_object_get(res, "timeout_s")) == 10.0);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "sample_ms")),
	    0);
	json_decref(want);
	json_decref(res);
}
END_TEST

/* ---- one test per kind of broken file ---------------------------------- */

START_TEST(test_err_syntax)
{
	refused("{\n  \"name\": \"t\",\n  \"description\": \"d\"\n"
	    "  \"fleet\": {\"peers\": 1}\n}\n", NULL, 0,
	    "t.json:4: syntax error at column 3: expected ',' or '}' after "
	    "a member, got '\"'");
	refused("{\"name\": \"t\",\n \"steps\": [1,\n  {\"a\": tru}]}", NULL,
	    0, "t.json:3: steps[1].a: syntax error at column 9: expected a "
	    "JSON value, got 't'");
	refused("{\"steps\": [1, 2,]}", NULL, 0, "t.json:1: steps[2]: syntax "
	    "error at column 17: expected a JSON value, got ']'");
	refused("{\"name\": \"\xff\"}", NULL, 0, "t.json:1: name: syntax error "
	    "at column 11: invalid UTF-8 in a string");
	refused("{\"name\": \"a\\u0000\"}", NULL, 0, "t.json:1: name: syntax "
	    "error at column 12: \\u0000 is not allowed");
	refused("{\"n\": 99999999999999999999}", NULL, 0, "t.json:1: n: "
	    "syntax error at column 7: integer 99999999999999999999 out of "
	    "range");
	refused("", NULL, 0, "t.json:1: syntax error at column 1: expected a "
	    "JSON value, got end of input");
	refused("{} x", NULL, 0, "t.json:1: syntax error at column 4: "
	    "expected end of input after the value, got 'x'");
}
END_TEST

START_TEST(test_err_unknown_key)
{
	char *t = with_steps("  {\"action\": \"start\"},\n"
	    "  {\"action\": \"write\", \"peer\": 0, \"cuont\": 5}", "");

	refused(t, NULL, 0, "t.json:6: steps[1].cuont: unknown key for a "
	    "write step; expected one of action, name, at_ms, timeout_s, "
	    "peer, count, rate, type, payload_bytes, lease_ms, wait, bulk_above");
	free(t);
	refused("{\"name\": \"t\", \"descripton\": \"d\"}", NULL, 0,
	    "t.json:1: descripton: unknown key; expected one of name, "
	    "description, params, fleet, steps, checks, timeout_s, "
	    "sample_ms");
	t = with_steps("  {\"action\": \"start\"}",
	    " \"checks\": [{\"metric\": \"history.lost\", \"op\": \"==\", "
	    "\"bound\": 0, \"stats\": \"p99\"}],");
	refused(t, NULL, 0, "t.json:3: checks[0].stats: unknown key for a "
	    "check; expected one of name, metric, op, bound, stat");
	free(t);
	refused("{\"a\\u0001\\\"b\": 1}", NULL, 0, "t.json:1: "
	    "[\"a\\u0001\\\"b\"]: unknown key; expected one of name, "
	    "description, params, fleet, steps, checks, timeout_s, "
	    "sample_ms");
	/* A long key of escapes is cut short in the path (the fuzzer's
	 * first find overflowed here). */
	refused("{\"\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001"
	    "\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001"
	    "\": 1}", NULL, 0, "t.json:1: [\"\\u0001\\u0001\\u0001\\u0001"
	    "\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001..."
	    "\"]: "
	    "unknown key; expected one of name, description, params, fleet, "
	    "steps, checks, timeout_s, sample_ms");
	/* The list is every knob of common/knob.h, in its order. */
	{
		char want[2048];
		size_t len = (size_t)snprintf(want, sizeof(want), "t.json:1: "
		    "fleet.knobs.setle-ms: unknown peerd flag; expected one "
		    "of ");

		for (size_t i = 0; i < knob_count; i++)
			len += (size_t)snprintf(want + len, sizeof(want) - len,
			    "%s%s", i ? ", " : "", knob_table[i].name);
		ck_assert(strstr(want, "settle-ms, take-retry-ms") != NULL);
		refused("{\"name\": \"t\", \"description\": \"d\", "
		    "\"fleet\": {\"peers\": 1, \"knobs\": {\"setle-ms\": "
		    "1}}}", NULL, 0, want);
	}
}
END_TEST

START_TEST(test_err_wrong_type)
{
	char *t;

	refused("{\"name\": \"t\", \"description\": \"d\",\n"
	    " \"fleet\": {\"peers\": \"three\"}}", NULL, 0,
	    "t.json:2: fleet.peers: expected an int from 1 to 1024, got "
	    "\"three\"");
	t = with_steps("  {\"action\": \"write\", \"peer\": 0, \"count\": "
	    "2.0, \"wait\": 1}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].count: expected an int from "
	    "0 to 1000000000, got 2.0");
	free(t);
	t = with_steps("  {\"action\": \"write\", \"peer\": 0, \"count\": "
	    "2, \"wait\": 1}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].wait: expected true or "
	    "false, got 1");
	free(t);
	refused("{\"name\": \"t\", \"description\": \"d\",\n"
	    " \"params\": {\"peers\": {\"type\": \"int\", \"default\": 3.5}}}",
	    NULL, 0, "t.json:2: params.peers.default: expected an int, got "
	    "3.5");
	refused("{\"name\": \"t\", \"description\": \"d\", \"fleet\": "
	    "{\"peers\": 1, \"knobs\": {\"log-level\": \"loud\", \"hops\": "
	    "0}}}", NULL, 0, "t.json:1: fleet.knobs.log-level: expected one "
	    "of \"error\", \"warn\", \"info\", \"debug\", got \"loud\"");
	refused("{\"name\": \"t\", \"description\": \"d\", \"fleet\": "
	    "{\"peers\": 1, \"knobs\": {\"hops\": 65}}}", NULL, 0,
	    "t.json:1: fleet.knobs.hops: expected an int from 1 to 64, got "
	    "65");
	refused("{\"name\": \"T\"}", NULL, 0, "t.json:1: name: expected a "
	    "name of [a-z0-9_-], at most 64, got \"T\"");
	refused("[]", NULL, 0, "t.json:1: expected an object, got an array");
}
END_TEST

START_TEST(test_err_missing_key)
{
	char *t = with_steps("  {\"action\": \"start\"},\n"
	    "  {\"action\": \"write\", \"peer\": 0}", "");

	refused(t, NULL, 0, "t.json:6: steps[1].count: missing (expected an "
	    "int from 0 to 1000000000)");
	free(t);
	refused("{\"name\": \"t\", \"description\": \"d\"}", NULL, 0,
	    "t.json:1: fleet: missing (expected an object with peers and "
	    "optionally binding, topology, knobs)");
	refused("{\"name\": \"t\", \"description\": \"d\",\n"
	    " \"fleet\": {\"peers\": 2}}", NULL, 0,
	    "t.json:1: steps: missing (expected a non-empty array of steps)");
	refused("{\"description\": \"d\"}", NULL, 0, "t.json:1: name: missing "
	    "(expected a name of [a-z0-9_-], at most 64)");
}
END_TEST

START_TEST(test_err_bad_name)
{
	char *t = with_steps("  {\"action\": \"write\", \"peer\": 0, "
	    "\"count\": \"$entires\"}", "");

	refused(t, NULL, 0, "t.json:5: steps[0].count: unknown parameter "
	    "$entires (declared: n)");
	free(t);
	t = with_steps("  {\"action\": \"mark\", \"label\": \"n=$n\"}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].label: expected \"$name\" "
	    "alone, or ${name} or $$ inside a string, got \"n=$n\"");
	free(t);
	t = with_steps("  {\"action\": \"mark\", \"label\": \"${m}\"}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].label: unknown parameter $m "
	    "(declared: n); did you mean $n?");
	free(t);
	t = with_steps("  {\"action\": \"sleep\", \"ms\": \"${n}\"}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].ms: expected an int from 0 "
	    "to 604800000, got \"5\"");
	free(t);
}
END_TEST

START_TEST(test_err_set_type)
{
	char *sets[] = { (char *)"peers=abc" }, *sets2[] = { (char *)"peers=3.0" };
	char *sets3[] = { (char *)"peers" };

	refused("{\"name\": \"t\", \"description\": \"d\", \"params\": "
	    "{\"peers\": {\"type\": \"int\", \"default\": 3}}}", sets, 1,
	    "--set peers=abc: expected an int");
	refused("{\"name\": \"t\", \"description\": \"d\", \"params\": "
	    "{\"peers\": {\"type\": \"int\", \"default\": 3}}}", sets2, 1,
	    "--set peers=3.0: expected an int");
	refused("{\"name\": \"t\", \"description\": \"d\", \"params\": "
	    "{\"peers\": {\"type\": \"int\", \"default\": 3}}}", sets3, 1,
	    "--set peers: expected NAME=VALUE");
}
END_TEST

START_TEST(test_err_set_range)
{
	char *sets[] = { (char *)"peers=0" }, *sets2[] = { (char *)"mode=udp" };
	char *sets3[] = { (char *)"fast=yes" };
	const char *text = "{\"name\": \"t\", \"description\": \"d\", "
	    "\"params\": {\"peers\": {\"type\": \"int\", \"default\": 3, "
	    "\"min\": 1, \"max\": 256}, \"mode\": {\"type\": \"string\", "
	    "\"default\": \"tcp\", \"choices\": [\"tcp\"]}, \"fast\": "
	    "{\"type\": \"bool\", \"default\": true}}}";

	refused(text, sets, 1, "--set peers=0: expected an int from 1 to 256");
	refused(text, sets2, 1, "--set mode=udp: expected one of \"tcp\"");
	refused(text, sets3, 1, "--set fast=yes: expected true or false");
}
END_TEST

START_TEST(test_err_set_undeclared)
{
	char *sets[] = { (char *)"peers=3", (char *)"nodes=3" };

	refused("{\"name\": \"t\", \"description\": \"d\", \"params\": "
	    "{\"peers\": {\"type\": \"int\", \"default\": 3}}}", sets, 2,
	    "--set nodes=3: no such parameter (declared: peers)");
	refused("{\"name\": \"t\", \"description\": \"d\"}", sets, 1,
	    "--set peers=3: no such parameter (no parameters are declared)");
}
END_TEST

START_TEST(test_err_selector)
{
	char *t = with_steps("  {\"action\": \"start\"},\n"
	    "  {\"action\": \"mark\", \"label\": \"x\"},\n"
	    "  {\"action\": \"mark\", \"label\": \"y\"},\n"
	    "  {\"action\": \"kill\", \"peer\": \"x\"}", "");

	refused(t, NULL, 0, "t.json:8: steps[3].peer: expected a peer index, "
	    "a list of them or \"all\", got \"x\"");
	free(t);
	t = with_steps("  {\"action\": \"kill\", \"peer\": [0, 3]}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].peer[1]: expected a peer "
	    "index from 0 to 2, got 3");
	free(t);
	t = with_steps("  {\"action\": \"join\"},\n"
	    "  {\"action\": \"kill\", \"peer\": [3, 1, 3]}", "");
	refused(t, NULL, 0, "t.json:6: steps[1].peer[2]: peer 3 is listed "
	    "twice");
	free(t);
	t = with_steps("  {\"action\": \"stop\", \"peer\": []}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].peer: expected a peer index, "
	    "a list of them or \"all\", got an array");
	free(t);
	t = with_steps("  {\"action\": \"fault\", \"partition\": [[0], "
	    "[1, 0]]}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].partition[1][1]: peer 0 is "
	    "listed twice");
	free(t);
	t = with_steps("  {\"action\": \"connect\", \"from\": 1, \"to\": 1}",
	    "");
	refused(t, NULL, 0, "t.json:5: steps[0].to: expected a peer other "
	    "than from (1)");
	free(t);
}
END_TEST

START_TEST(test_err_action)
{
	char *t = with_steps("  {\"action\": \"start\"},\n"
	    "  {\"action\": \"explode\"}", "");

	{
		/* Every row of ACTIONS() (action.h), in its order. */
#define ACTION_NAME(name, fields, check) #name,
		static const char *const names[] = { ACTIONS(ACTION_NAME) };
#undef ACTION_NAME
		char want[1024];
		size_t len = (size_t)snprintf(want, sizeof(want), "t.json:6: "
		    "steps[1].action: expected an action: ");

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			len += (size_t)snprintf(want + len, sizeof(want) - len,
			    "%s%s", names[i], i + 1 < sizeof(names) /
			    sizeof(names[0]) ? ", " : "");
		snprintf(want + len, sizeof(want) - len, ", got \"explode\"");
		ck_assert(strstr(want, "start, stop, kill") != NULL);
		refused(t, NULL, 0, want);
	}
	free(t);
	t = with_steps("  {\"action\": \"fault\", \"drop\": 0.1, \"clear\": "
	    "true}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].drop: drop cannot be "
	    "combined with clear");
	free(t);
	t = with_steps("  {\"action\": \"fault\", \"peer\": 1}", "");
	refused(t, NULL, 0, "t.json:5: steps[0]: a fault needs drop, "
	    "delay_ms or jitter_ms, or partition, or clear");
	free(t);
	t = with_steps("  {\"action\": \"wait\", \"until\": \"connected\", "
	    "\"op\": \"<\"}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].op: op applies only with "
	    "until \"metric\"");
	free(t);
	t = with_steps("  {\"name\": \"a\", \"action\": \"start\"},\n"
	    "  {\"action\": \"mark\", \"label\": \"x\", \"name\": \"a\"}", "");
	refused(t, NULL, 0, "t.json:6: steps[1].name: the step name \"a\" is "
	    "already used by steps[0]");
	free(t);
	t = with_steps("  {\"action\": \"fault\", \"clear\": false}", "");
	refused(t, NULL, 0, "t.json:5: steps[0].clear: expected true, got "
	    "false");
	free(t);
}
END_TEST

START_TEST(test_err_check_op)
{
	char *t = with_steps("  {\"action\": \"start\"}",
	    "\n \"checks\": [\n  {\"metric\": \"history.lost\", \"op\": "
	    "\"=<\", \"bound\": 0}],");

	refused(t, NULL, 0, "t.json:5: checks[0].op: expected one of \"<\", "
	    "\"<=\", \"==\", \"!=\", \">=\", \">\", got \"=<\"");
	free(t);
	t = with_steps("  {\"action\": \"start\"}",
	    " \"checks\": [{\"metric\": \"history.lost\", \"op\": \"==\", "
	    "\"bound\": 0, \"stat\": \"p99\"}],");
	refused(t, NULL, 0, "t.json:3: checks[0].stat: stat applies only to "
	    "a latency measure, and history.lost is not one");
	free(t);
	t = with_steps("  {\"action\": \"start\"}",
	    " \"checks\": [{\"metric\": \"history.lots\", \"op\": \"==\", "
	    "\"bound\": 0}],");
	refused(t, NULL, 0, "t.json:3: checks[0].metric: expected a measure "
	    "name (one listed in docs/report.md, counters.NAME or an earlier "
	    "wait step's measure), got \"history.lots\"; did you mean "
	    "\"history.lost\"?");
	free(t);
}
END_TEST

START_TEST(test_err_at_ms_order)
{
	char *t = with_steps("  {\"action\": \"start\", \"at_ms\": 0},\n"
	    "  {\"action\": \"mark\", \"label\": \"a\", \"at_ms\": 2000},\n"
	    "  {\"action\": \"mark\", \"label\": \"b\"},\n"
	    "  {\"action\": \"mark\", \"label\": \"c\", \"at_ms\": 1000}", "");

	refused(t, NULL, 0, "t.json:8: steps[3].at_ms: expected at_ms >= 2000 "
	    "(the at_ms of steps[1]), got 1000");
	free(t);
}
END_TEST

START_TEST(test_err_duplicate_key)
{
	refused("{\"name\": \"t\",\n \"fleet\": {\"peers\": 1,\n"
	    "   \"peers\": 2}}", NULL, 0, "t.json:3: fleet.peers: duplicate "
	    "key (first at line 2)");
}
END_TEST

START_TEST(test_err_depth)
{
	char text[200], err[ERRLEN];
	struct jpos_error je;
	struct jpos *pos;
	json_t *v;
	int i;

	/* 64 levels parse; 65 do not. */
	for (i = 0; i < 64; i++) {
		text[i] = '[';
		text[64 + i] = ']';
	}
	ck_assert_ptr_nonnull(v = jpos_parse(text, 128, &pos, &je));
	json_decref(v);
	jpos_free(pos);
	text[0] = '{';
	memcpy(text + 1, "\"a\":", 4);
	for (i = 0; i < 64; i++) {
		text[5 + i] = '[';
		text[69 + i] = ']';
	}
	text[133] = '}';
	text[134] = '\0';
	ck_assert_ptr_null(scenario_parse(text, 134, "t.json", NULL, 0, err,
	    sizeof(err)));
	ck_assert_str_eq(err, "t.json:1: a[0][0][0][0][0][0][0][0][0][0][0]"
	    "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
	    "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
	    "[0][0][0][0][0][0][0][0][0][0]: syntax error at column 69: "
	    "nesting deeper than 64");
	seed_write("broken", text, 134);
}
END_TEST

START_TEST(test_err_too_large)
{
	size_t n = (1u << 20) + 1;
	char *big = malloc(n), err[ERRLEN], path[] = "/tmp/scenXXXXXX";
	FILE *fp;
	int fd;

	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	ck_assert_ptr_null(scenario_parse(big, n, "t.json", NULL, 0, err,
	    sizeof(err)));
	ck_assert_str_eq(err, "t.json: larger than 1 MiB (1048577 bytes)");
	/* Exactly 1 MiB is allowed (and an empty object is not a scenario). */
	big[n - 2] = '}';
	ck_assert_ptr_null(scenario_parse(big, n - 1, "t.json", NULL, 0, err,
	    sizeof(err)));
	ck_assert_str_eq(err, "t.json:1: name: missing (expected a name of "
	    "[a-z0-9_-], at most 64)");
	big[n - 2] = ' ';
	ck_assert_int_ne(fd = mkstemp(path), -1);
	ck_assert_ptr_nonnull(fp = fdopen(fd, "wb"));
	ck_assert_int_eq(fwrite(big, 1, n, fp), n);
	fclose(fp);
	ck_assert_ptr_null(scenario_load(path, NULL, 0, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, ": larger than 1 MiB (1048577 "
	    "bytes)"));
	unlink(path);
	free(big);
}
END_TEST

START_TEST(test_err_no_file)
{
	char err[ERRLEN];

	ck_assert_ptr_null(scenario_load("scenarios/nope.json", NULL, 0, err,
	    sizeof(err)));
	ck_assert_str_eq(err, "scenarios/nope.json: No such file or "
	    "directory");
	ck_assert_ptr_null(scenario_load("scenarios", NULL, 0, err,
	    sizeof(err)));
	ck_assert_str_eq(err, "scenarios: is a directory");
}
END_TEST

START_TEST(test_err_short_buffer)
{
	char err[8];

	ck_assert_ptr_null(scenario_parse("[", 1, "t.json", NULL, 0, err,
	    sizeof(err)));
	ck_assert_str_eq(err, "t.json:");
	ck_assert_ptr_null(scenario_parse("[", 1, "t.json", NULL, 0, NULL, 0));
}
END_TEST

/* ---- jpos ------------------------------------------------------------ */

START_TEST(test_jpos_positions)
{
	const char *text = "{\"a\": [1,\n  true, true],\n \"b\": {\"c\":\n"
	    "null}, \"d\\u00e9\": \"\\ud83d\\ude00\"}";
	struct jpos_error je;
	struct jpos *pos;
	json_t *v, *a;
	int line, col;

	ck_assert_ptr_nonnull(v = jpos_parse(text, strlen(text), &pos, &je));
	a = json_object_get(v, "a");
	ck_assert_int_eq(jpos_lookup(pos, v, "a", 0, &line, &col), 0);
	ck_assert_int_eq(line, 1);
	ck_assert_int_eq(col, 2);
	ck_assert_int_eq(jpos_lookup(pos, a, NULL, 2, &line, &col), 0);
	ck_assert_int_eq(line, 2);
	ck_assert_int_eq(col, 9);
	ck_assert_int_eq(jpos_lookup(pos, json_object_get(v, "b"), "c", 0,
	    &line, NULL), 0);
	ck_assert_int_eq(line, 3);
	ck_assert_int_eq(jpos_lookup(pos, v, "d\xc3\xa9", 0, &line, NULL), 0);
	ck_assert_int_eq(line, 4);
	ck_assert_str_eq(json_string_value(json_object_get(v, "d\xc3\xa9")),
	    "\xf0\x9f\x98\x80");
	ck_assert_int_eq(jpos_lookup(pos, v, "x", 0, &line, NULL), -1);
	ck_assert_int_eq(jpos_lookup(pos, NULL, NULL, 0, &line, &col), 0);
	ck_assert_int_eq(line, 1);
	json_decref(v);
	jpos_free(pos);
}
END_TEST

static Suite *
scenario_suite(void)
{
	Suite *s = suite_create("scenario");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_golden_throughput);
	tcase_add_test(tc, test_golden_gossip);
	tcase_add_test(tc, test_golden_churn);
	tcase_add_test(tc, test_golden_swarm);
	tcase_add_test(tc, test_golden_scale);
	tcase_add_test(tc, test_golden_reconcile);
	tcase_add_test(tc, test_golden_partition_takes);
	tcase_add_test(tc, test_golden_rest);
	tcase_add_test(tc, test_set_overrides);
	tcase_add_test(tc, test_substitution_types);
	tcase_add_test(tc, test_actions_defaults);
	tcase_add_test(tc, test_err_syntax);
	tcase_add_test(tc, test_err_unknown_key);
	tcase_add_test(tc, test_err_wrong_type);
	tcase_add_test(tc, test_err_missing_key);
	tcase_add_test(tc, test_err_bad_name);
	tcase_add_test(tc, test_err_set_type);
	tcase_add_test(tc, test_err_set_range);
	tcase_add_test(tc, test_err_set_undeclared);
	tcase_add_test(tc, test_err_selector);
	tcase_add_test(tc, test_err_action);
	tcase_add_test(tc, test_err_check_op);
	tcase_add_test(tc, test_err_at_ms_order);
	tcase_add_test(tc, test_err_duplicate_key);
	tcase_add_test(tc, test_err_depth);
	tcase_add_test(tc, test_err_too_large);
	tcase_add_test(tc, test_err_no_file);
	tcase_add_test(tc, test_err_short_buffer);
	tcase_add_test(tc, test_jpos_positions);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(scenario_suite());
	int nfail;

	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * fuzz_scenario.c: libFuzzer target for the scenario file parser.
 *
 * The first input byte picks a list of --set strings (low three bits) and
 * whether the error buffer is tiny (bit 3); the rest is the file text.
 * Whatever happens, the parser must return NULL with a one-line message
 * that names the file or the --set, or a resolved scenario that keeps the
 * promises of scenario.h: the checks below are the engine's view of that
 * contract (types, ranges, peer indexes against the peers that exist at
 * each step, at_ms order, unique names), and every resolved step reads
 * into the engine's typed step (step_read).
 * Seeds: tests/fuzz/seeds/fuzz_scenario/, written by test_scenario when
 * SCENARIO_SEED_DIR is set (a leading 0 byte, then a file).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "action.h"
#include "scenario.h"
#include "step.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *const set_none[] = { NULL };
static char *const set_peers[] = { (char *)"peers=2" };
static char *const set_bad[] = { (char *)"peers=abc" };
static char *const set_many[] = {
	(char *)"peers=5", (char *)"entries=1", (char *)"victim=1",
	(char *)"workers=3", (char *)"tasks=9", (char *)"settle_ms=0"
};
static char *const set_undeclared[] = { (char *)"nope=1" };
static char *const set_odd[] = {
	(char *)"n=-0", (char *)"s=${x}", (char *)"r=1e308", (char *)"b=true"
};
static char *const set_empty[] = { (char *)"=", (char *)"peers=" };
static char *const set_big[] = { (char *)"peers=1024", (char *)"n=1e999" };

static const struct {
	char *const	*sets;
	size_t		 n;
} set_lists[8] = {
	{ set_none, 0 }, { set_peers, 1 }, { set_bad, 1 }, { set_many, 6 },
	{ set_undeclared, 1 }, { set_odd, 4 }, { set_empty, 2 },
	{ set_big, 2 },
};

static void
need(bool cond)
{
	if (!cond)
		abort();
}

static bool
is_index(const json_t *v, json_int_t bound)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < bound;
}

/* "all" or a non-empty list of distinct indexes below bound. */
static void
check_sel(const json_t *v, json_int_t bound)
{
	size_t i, j;

	if (json_is_string(v)) {
		need(strcmp(json_string_value(v), "all") == 0);
		return;
	}
	need(json_is_array(v) && json_array_size(v) > 0);
	for (i = 0; i < json_array_size(v); i++) {
		need(is_index(json_array_get(v, i), bound));
		for (j = 0; j < i; j++)
			need(!json_equal(json_array_get(v, i),
			    json_array_get(v, j)));
	}
}

/* a is a row of ACTIONS() (action.h), the parser's and engine's list. */
static bool
action_known(const char *a)
{
#define ACTION_NAME(n, fields, check) #n,
	static const char *const names[] = { ACTIONS(ACTION_NAME) };
#undef ACTION_NAME

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i], a) == 0)
			return true;
	return false;
}

static void
check_step(const json_t *st, json_int_t npeers, json_int_t *joins)
{
	const char *a = json_string_value(json_object_get(st, "action"));
	json_int_t now = npeers + *joins;
	const json_t *v;
	struct step typed;
	char err[300];

	need(a != NULL);
	need(action_known(a));
	/* The engine reads every step the parser resolves (step.h). */
	need(step_read((json_t *)st, &typed, err, sizeof(err)) == 0);
	need(strcmp(typed.action, a) == 0 && typed.timeout_s > 0);
	need(json_string_length(json_object_get(st, "name")) > 0);
	v = json_object_get(st, "at_ms");
	need(json_is_null(v) || (json_is_integer(v) &&
	    json_integer_value(v) >= 0));
	v = json_object_get(st, "timeout_s");
	need(json_is_real(v) && json_real_value(v) > 0);
	if (strcmp(a, "start") == 0) {
		check_sel(json_object_get(st, "peers"), npeers);
		need(json_is_array(json_object_get(st, "peers")));
	} else if (strcmp(a, "stop") == 0 || strcmp(a, "kill") == 0 ||
	    strcmp(a, "pause") == 0 || strcmp(a, "resume") == 0 ||
	    strcmp(a, "restart") == 0)
		check_sel(json_object_get(st, "peer"), now);
	else if (strcmp(a, "join") == 0) {
		need(json_is_object(json_object_get(st, "knobs")));
		need(json_integer_value(json_object_get(st, "index")) == now);
		(*joins)++;
	} else if (strcmp(a, "connect") == 0) {
		need(is_index(json_object_get(st, "from"), now));
		need(is_index(json_object_get(st, "to"), now));
	} else if (strcmp(a, "write") == 0 || strcmp(a, "take") == 0) {
		check_sel(json_object_get(st, "peer"), now);
		need(json_is_string(json_object_get(st, "type")));
		need(json_is_boolean(json_object_get(st, "wait")));
	} else if (strcmp(a, "fault") == 0) {
		if ((v = json_object_get(st, "partition")) != NULL) {
			need(json_is_array(v) && json_array_size(v) >= 2);
			need(json_object_get(st, "peer") == NULL);
		} else {
			check_sel(json_object_get(st, "peer"), now);
			need(json_is_true(json_object_get(st, "clear")) ||
			    json_is_real(json_object_get(st, "drop")));
		}
	} else if (strcmp(a, "wait") == 0) {
		v = json_object_get(st, "measure");
		need(json_is_null(v) || json_is_string(v));
		need(json_is_string(json_object_get(st, "until")));
	} else if (strcmp(a, "sleep") == 0)
		need(json_is_integer(json_object_get(st, "ms")));
	else if (strcmp(a, "mark") == 0)
		need(json_is_string(json_object_get(st, "label")));
	else if (strcmp(a, "publish") == 0)
		need(is_index(json_object_get(st, "peer"), now));
	else if (strcmp(a, "fetch") == 0) {
		check_sel(json_object_get(st, "peer"), now);
		need(json_is_boolean(json_object_get(st, "wait")));
	}
}

static void
check_resolved(const json_t *res)
{
	const json_t *fleet, *steps, *checks, *c, *v;
	json_int_t npeers, joins = 0, last = -1;
	char *text;
	size_t i;

	need(json_object_size(res) == 8);
	need(json_is_string(json_object_get(res, "name")));
	need(json_is_string(json_object_get(res, "description")));
	need(json_is_object(json_object_get(res, "params")));
	need(json_is_real(json_object_get(res, "timeout_s")));
	need(json_is_integer(json_object_get(res, "sample_ms")));
	fleet = json_object_get(res, "fleet");
	npeers = json_integer_value(json_object_get(fleet, "peers"));
	need(npeers >= 1 && npeers <= 1024);
	need(json_is_object(json_object_get(fleet, "knobs")));
	steps = json_object_get(res, "steps");
	need(json_is_array(steps) && json_array_size(steps) > 0);
	for (i = 0; i < json_array_size(steps); i++) {
		check_step(json_array_get(steps, i), npeers, &joins);
		v = json_object_get(json_array_get(steps, i), "at_ms");
		if (json_is_integer(v)) {
			need(json_integer_value(v) >= last);
			last = json_integer_value(v);
		}
	}
	checks = json_object_get(res, "checks");
	need(json_is_array(checks));
	for (i = 0; i < json_array_size(checks); i++) {
		c = json_array_get(checks, i);
		need(json_object_size(c) == 5);
		need(json_is_real(json_object_get(c, "bound")));
		v = json_object_get(c, "stat");
		need(json_is_null(v) || json_is_string(v));
	}
	/* The engine prints it: it must serialize. */
	text = json_dumps(res, JSON_COMPACT);
	need(text != NULL);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	size_t errlen, sel;
	json_t *res;

	if (size < 1)
		return 0;
	sel = data[0] & 7;
	errlen = (data[0] & 8) ? 5 : sizeof(err);
	memset(err, 'x', sizeof(err));
	res = scenario_parse((const char *)data + 1, size - 1, "f.json",
	    set_lists[sel].sets, set_lists[sel].n, err, errlen);
	need(memchr(err, '\0', errlen) != NULL);
	if (res == NULL) {
		need(err[0] != '\0');
		need(strchr(err, '\n') == NULL);
		if (errlen == sizeof(err))
			need(strncmp(err, "f.json", 6) == 0 ||
			    strncmp(err, "--set ", 6) == 0);
		return 0;
	}
	need(err[0] == '\0');
	check_resolved(res);
	json_decref(res);
	return 0;
}

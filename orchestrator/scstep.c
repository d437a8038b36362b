/*
 * scstep.c: the steps and checks of a scenario file (docs/scenarios.md).
 * Table driven: one struct field per key says its kind, range and default;
 * a hook per action (post_NAME, named in action.h) checks what a table
 * cannot (the shapes of fault, wait's metric, join's index).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "action.h"
#include "entry.h"
#include "knob.h"
#include "sc.h"
#include "xmalloc.h"

struct action_row {
	const char		*name;
	const struct field	*fields;
	int			(*post)(struct sc *, const struct at *,
				    json_t *, json_t *);
};

#define UNTIL_NAME(n) #n,
static const char *const untils[] = { CONDITIONS(UNTIL_NAME) NULL };
#undef UNTIL_NAME
/* A fault's layer (launch.h): the kernel's network, or peerd's filter. */
static const char *const fault_layers[] = { "net", "peer", NULL };
static const char *const ops[] = { "<", "<=", "==", "!=", ">=", ">", NULL };
static const char *const stats[] = {
	"p50", "p90", "p99", "p999", "max", "count", NULL
};

/* ---- fields of steps and checks -------------------------------------- */

/* The tables of action.h as rows for the walk. */
#define FIELD_ROW(key, kind, flags, min, max, def, choices) \
	{ #key, kind, flags, min, max, def, choices },
#define FIELD_END { NULL, 0, 0, 0, 0, NULL, NULL }
#define FIELD_KEY(key, ...) #key,

static const struct field common_fields[] = {
	FIELDS_COMMON(FIELD_ROW)
	FIELD_END
};
static const char *const common_keys[] = { FIELDS_COMMON(FIELD_KEY) NULL };

#define FIELD_TABLE(t) \
	static const struct field t##_fields[] = { FIELDS_##t(FIELD_ROW) \
	    FIELD_END };
FIELD_TABLES(FIELD_TABLE)
#undef FIELD_TABLE

static const struct field check_fields[] = {
	{ "name", FK_STR, 0, 0, LABEL_MAX, NULL, NULL },
	{ "metric", FK_STR, F_REQ, 0, NAME_LEN, NULL, NULL },
	{ "op", FK_ENUM, F_REQ, 0, 0, NULL, ops },
	{ "bound", FK_NUM, F_REQ, -INFINITY, INFINITY, NULL, NULL },
	{ "stat", FK_ENUM, 0, 0, 0, NULL, stats },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

/* Peers that exist when the current step runs. */
static json_int_t
peers_now(const struct sc *sc)
{
	return sc->npeers + sc->joins;
}

/* What a field wants, for "missing" and "expected" messages. */
static void
field_want(const struct sc *sc, const struct field *f, char *buf,
    size_t size)
{
	switch (f->kind) {
	case FK_INT:
		sc_int_want(buf, size, "an int", (json_int_t)f->min,
		    (json_int_t)f->max);
		break;
	case FK_NUM:
		sc_num_want(buf, size, f->min, f->max, f->flags & F_ABOVE);
		break;
	case FK_BOOL:
		snprintf(buf, size, "true or false");
		break;
	case FK_STR:
		snprintf(buf, size, "a non-empty string");
		break;
	case FK_ENUM:
		snprintf(buf, size, "one of ");
		sc_list_text(f->choices, true, buf + 7, size - 7);
		break;
	case FK_TYPE:
		snprintf(buf, size, "an entry type \"name#vN\"");
		break;
	case FK_SEL:
	case FK_START:
		snprintf(buf, size, "a peer index, a list of them or \"all\"");
		break;
	case FK_INDEX:
		snprintf(buf, size, "a peer index from 0 to %lld",
		    (long long)peers_now(sc) - 1);
		break;
	case FK_TARGET:
		snprintf(buf, size, "a peer index or \"*\"");
		break;
	case FK_KNOBS:
		snprintf(buf, size, "an object of peerd flags");
		break;
	case FK_GROUPS:
		snprintf(buf, size, "a list of groups of peer indexes");
		break;
	case FK_TRUE:
		snprintf(buf, size, "true");
		break;
	}
}

/* The resolved value of field f, v being its value in the file. */
static json_t *
field_value(struct sc *sc, const struct at *at, const struct field *f,
    json_t *v)
{
	char want[MSG_MAX / 2];
	json_int_t n;
	double d;
	int i;

	switch (f->kind) {
	case FK_INT:
		if (sc_want_int(sc, at, v, (json_int_t)f->min,
		    (json_int_t)f->max,
		    &n) == -1)
			return NULL;
		return json_integer(n);
	case FK_NUM:
		if (sc_want_num(sc, at, v, f->min, f->max, f->flags & F_ABOVE,
		    &d) == -1)
			return NULL;
		return json_real(d);
	case FK_BOOL:
		if (json_is_boolean(v))
			return json_incref(v);
		break;
	case FK_STR:
		if (sc_want_str(sc, at, v, f->max > 0 ? (size_t)f->max :
		    LABEL_MAX) == -1)
			return NULL;
		return json_incref(v);
	case FK_ENUM:
		if ((i = sc_want_enum(sc, at, v, f->choices)) < 0)
			return NULL;
		return json_incref(v);
	case FK_TYPE:
		if (json_is_string(v) && entry_type_valid(json_string_value(v),
		    json_string_length(v)))
			return json_incref(v);
		break;
	case FK_SEL:
		return sc_want_sel(sc, at, v, peers_now(sc));
	case FK_START:
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), "all") == 0) {
			json_t *all = json_array();

			for (n = 0; n < sc->npeers; n++)
				json_array_append_new(all, json_integer(n));
			return all;
		}
		return sc_want_sel(sc, at, v, sc->npeers);
	case FK_INDEX:
		if (sc_want_index(sc, at, v, peers_now(sc), &n) == -1)
			return NULL;
		return json_integer(n);
	case FK_TARGET:
		if (json_is_string(v) && strcmp(json_string_value(v), "*") == 0)
			return json_incref(v);
		if (json_is_integer(v)) {
			if (sc_want_index(sc, at, v, peers_now(sc), &n) == -1)
				return NULL;
			return json_integer(n);
		}
		break;
	case FK_KNOBS:
		return sc_want_knobs(sc, at, v, sc->knobs);
	case FK_GROUPS:
		return sc_want_groups(sc, at, v, peers_now(sc));
	case FK_TRUE:
		if (json_is_true(v))
			return json_incref(v);
		break;
	}
	field_want(sc, f, want, sizeof(want));
	sc_fail_got(sc, at, v, want);
	return NULL;
}

/*
 * Fill out with every field of the table from obj, in table order:
 * the value from the file, else the default, else null (F_NULL), else
 * nothing.  A missing F_REQ field is an error.
 */
static int
fields(struct sc *sc, const struct at *up, const json_t *obj,
    const struct field *table, json_t *out)
{
	char want[MSG_MAX / 2];
	const struct field *f;
	struct at at;
	json_t *v, *r;

	for (f = table; f->key != NULL; f++) {
		v = sc_get(sc, up, obj, f->key, &at);
		if (sc->failed)
			return -1;
		if (v == NULL) {
			if (f->flags & F_REQ) {
				field_want(sc, f, want, sizeof(want));
				return sc_fail(sc, &at, "missing (expected %s)",
				    want);
			}
			if (f->def != NULL) {
				/* Through field_value: "all" expands, knobs merge. */
				v = json_loads(f->def, JSON_DECODE_ANY, NULL);
				r = field_value(sc, &at, f, v);
				json_decref(v);
				if (r == NULL)
					return -1;
				json_object_set_new(out, f->key, r);
			} else if (f->flags & F_NULL)
				json_object_set_new(out, f->key, json_null());
			continue;
		}
		if (f->flags & F_NULL && json_is_null(v)) {
			json_object_set_new(out, f->key, v);
			continue;
		}
		r = field_value(sc, &at, f, v);
		json_decref(v);
		if (r == NULL)
			return -1;
		json_object_set_new(out, f->key, r);
	}
	return 0;
}

/* Move key to the end of out with its value or def (JSON text). */
static void
set_last(json_t *out, const char *key, const char *def)
{
	json_t *v = json_object_get(out, key);

	if (v != NULL) {
		json_incref(v);
		json_object_del(out, key);
	} else
		v = json_loads(def, JSON_DECODE_ANY, NULL);
	json_object_set_new(out, key, v);
}

/* ---- action hooks ---------------------------------------------------- */

static int
post_join(struct sc *sc, const struct at *at, json_t *raw, json_t *out)
{
	(void)at;
	(void)raw;
	json_object_set_new(out, "index", json_integer(peers_now(sc)));
	sc->joins++;
	return 0;
}

static int
post_connect(struct sc *sc, const struct at *at, json_t *raw, json_t *out)
{
	struct at ta = { at, raw, "to", 0, NULL };

	if (json_equal(json_object_get(out, "from"),
	    json_object_get(out, "to")))
		return sc_fail(sc, &ta,
		    "expected a peer other than from (%lld)",
		    (long long)json_integer_value(json_object_get(out, "to")));
	return 0;
}

static int
post_fault(struct sc *sc, const struct at *at, json_t *raw, json_t *out)
{
	static const char *const link[] = {
		"drop", "delay_ms", "jitter_ms", "target", NULL
	};
	const char *const *k;
	struct at ka;
	const char *shape = NULL;

	if (json_object_get(out, "partition") != NULL)
		shape = "partition";
	else if (json_object_get(out, "clear") != NULL)
		shape = "clear";
	if (shape != NULL) {
		for (k = link; *k != NULL; k++) {
			ka = (struct at){ at, raw, *k, 0, NULL };
			if (json_object_get(out, *k) != NULL)
				return sc_fail(sc, &ka, "%s cannot be combined "
				    "with %s", *k, shape);
		}
		ka = (struct at){ at, raw, "clear", 0, NULL };
		if (*shape == 'p' && json_object_get(out, "clear") != NULL)
			return sc_fail(sc, &ka, "clear cannot be combined with "
			    "partition");
		ka = (struct at){ at, raw, "peer", 0, NULL };
		if (*shape == 'p' && json_object_get(raw, "peer") != NULL)
			return sc_fail(sc, &ka,
			    "a partition names its peers in "
			    "its groups: remove peer");
		if (*shape == 'p')
			json_object_del(out, "peer");
		return 0;
	}
	if (json_object_get(out, "drop") == NULL &&
	    json_object_get(out, "delay_ms") == NULL &&
	    json_object_get(out, "jitter_ms") == NULL)
		return sc_fail(sc, at, "a fault needs drop, delay_ms or "
		    "jitter_ms, or partition, or clear");
	set_last(out, "drop", "0.0");
	set_last(out, "delay_ms", "0");
	set_last(out, "jitter_ms", "0");
	set_last(out, "target", "\"*\"");
	return 0;
}

static int
post_wait(struct sc *sc, const struct at *at, json_t *raw, json_t *out)
{
	static const char *const mkeys[] = { "metric", "op", "value", NULL };
	const char *const *k, *until, *name;
	struct at ka;
	const json_t *m;
	char want[80];

	until = json_string_value(json_object_get(out, "until"));
	for (k = mkeys; *k != NULL; k++) {
		ka = (struct at){ at, raw, *k, 0, NULL };
		if (strcmp(until, "metric") != 0 &&
		    json_object_get(out, *k) != NULL)
			return sc_fail(sc, &ka, "%s applies only with until "
			    "\"metric\"", *k);
		if (strcmp(until, "metric") == 0 &&
		    json_object_get(out, *k) == NULL) {
			snprintf(want, sizeof(want), "%s", *k == mkeys[0] ?
			    "a measure name" : *k == mkeys[1] ?
			    "one of \"<\", \"<=\", \"==\", \"!=\", \">=\", "
			    "\">\"" : "a number");
			return sc_fail(sc, &ka,
			    "missing (expected %s: until is "
			    "\"metric\")", want);
		}
	}
	ka = (struct at){ at, raw, "metric", 0, NULL };
	if ((m = json_object_get(out, "metric")) != NULL &&
	    sc_measure_kind(sc, json_string_value(m)) != 0) {
		ka.from = NULL;
		return sc_fail_got(sc, &ka, m, sc_measure_kind(sc,
		    json_string_value(m)) == 1 ? "a measure that is not a "
		    "latency" : "a measure name (" MEASURES_TEXT_ALL ")");
	}
	ka = (struct at){ at, raw, "measure", 0, NULL };
	m = json_object_get(out, "measure");
	if (json_is_string(m)) {
		name = json_string_value(m);
		if (!sc_measure_name_ok(name))
			return sc_fail_got(sc, &ka, m, "a measure name "
			    "\"family.name\" of [a-z0-9_]");
		if (sc_measure_kind(sc, name) != -1 ||
		    strncmp(name, "counters.", 9) == 0)
			return sc_fail_got(sc, &ka, m, "a measure name not yet "
			    "in use");
		json_object_set_new(sc->measures, name, json_true());
	}
	return 0;
}

#define ACTION_ROW(n, f, check) { #n, f##_fields, check },
static const struct action_row actions[] = { ACTIONS(ACTION_ROW) };
#undef ACTION_ROW

/* ---- steps and checks ------------------------------------------------ */

/* A name not used before in seen (name -> index); kind for messages. */
static int
unique_name(struct sc *sc, const struct at *at, json_t *seen,
    const char *name, size_t index, const char *kind)
{
	json_t *prev;

	if ((prev = json_object_get(seen, name)) != NULL)
		return sc_fail(sc, at,
		    "the %s name \"%.80s\" is already used by "
		    "%ss[%lld]", kind, name, kind,
		    (long long)json_integer_value(prev));
	json_object_set_new(seen, name, json_integer((json_int_t)index));
	return 0;
}

#define ACTION_NAME(n, f, check) #n,
static const char *const action_names[] = { ACTIONS(ACTION_NAME) NULL };
#undef ACTION_NAME

static json_t *
step(struct sc *sc, const struct at *at, json_t *raw, size_t index,
    json_t *names)
{
	char what[48], want[MSG_MAX / 2], dflt[80];
	const struct action_row *a;
	struct at aa;
	json_t *out, *v;

	if (!json_is_object(raw)) {
		sc_fail_got(sc, at, raw, "a step object");
		return NULL;
	}
	if ((v = sc_get(sc, at, raw, "action", &aa)) == NULL) {
		if (!sc->failed) {
			sc_list_text(action_names, false, want, sizeof(want));
			sc_fail(sc, &aa, "missing (expected one of %s)", want);
		}
		return NULL;
	}
	for (a = actions; a < actions + nitems(actions); a++)
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), a->name) == 0)
			break;
	if (a == actions + nitems(actions)) {
		snprintf(want, sizeof(want), "an action: ");
		sc_list_text(action_names, false, want + 11, sizeof(want) - 11);
		sc_fail_got(sc, &aa, v, want);
		json_decref(v);
		return NULL;
	}
	json_decref(v);
	snprintf(what, sizeof(what), " for a %s step", a->name);
	if (sc_only_keys(sc, at, raw, common_keys, a->fields, what) == -1)
		return NULL;
	out = json_object();
	if (fields(sc, at, raw, common_fields, out) == -1)
		goto bad;
	json_object_set_new(out, "action", json_string(a->name));
	if (json_object_get(out, "name") == NULL) {
		snprintf(dflt, sizeof(dflt), "%s#%zu", a->name, index);
		json_object_set_new(out, "name", json_string(dflt));
	}
	set_last(out, "at_ms", "null");
	set_last(out, "timeout_s", "60.0");
	aa = (struct at){ at, raw, "name", 0, NULL };
	if (unique_name(sc, &aa, names,
	    json_string_value(json_object_get(out, "name")), index,
	    "step") == -1)
		goto bad;
	if (fields(sc, at, raw, a->fields, out) == -1)
		goto bad;
	if (a->post != NULL && a->post(sc, at, raw, out) == -1)
		goto bad;
	return out;
bad:
	json_decref(out);
	return NULL;
}

/* The steps array of top into res; -1 after sc_fail(). */
int
scstep_steps(struct sc *sc, const struct at *root, const json_t *top,
    json_t *res)
{
	struct at sa, ea, ma;
	json_t *raw, *out, *st, *names, *at_ms;
	json_int_t last = -1;
	size_t i, lasti = 0;

	sa = (struct at){ root, top, "steps", 0, NULL };
	if ((raw = json_object_get(top, "steps")) == NULL)
		return sc_fail(sc, &sa,
		    "missing (expected a non-empty array of "
		    "steps)");
	if (!json_is_array(raw) || json_array_size(raw) == 0)
		return sc_fail_got(sc, &sa, raw, "a non-empty array of steps");
	out = json_array();
	names = json_object();
	json_object_set_new(res, "steps", out);
	for (i = 0; i < json_array_size(raw); i++) {
		ea = (struct at){ &sa, raw, NULL, i, NULL };
		if ((st = step(sc, &ea, json_array_get(raw, i), i,
		    names)) == NULL)
			break;
		json_array_append_new(out, st);
		at_ms = json_object_get(st, "at_ms");
		if (json_is_integer(at_ms)) {
			ma = (struct at){ &ea, json_array_get(raw, i),
			    "at_ms", 0, NULL };
			if (json_integer_value(at_ms) < last) {
				sc_fail(sc, &ma, "expected at_ms >= %lld (the "
				    "at_ms of steps[%zu]), got %lld",
				    (long long)last, lasti,
				    (long long)json_integer_value(at_ms));
				break;
			}
			last = json_integer_value(at_ms);
			lasti = i;
		}
	}
	json_decref(names);
	return sc->failed ? -1 : 0;
}

static json_t *
check(struct sc *sc, const struct at *at, json_t *raw, size_t index,
    json_t *names)
{
	char bound[40], dflt[160];
	const char *metric;
	struct at ka;
	json_t *out, *res;
	int kind;

	if (!json_is_object(raw)) {
		sc_fail_got(sc, at, raw, "a check object");
		return NULL;
	}
	if (sc_only_keys(sc, at, raw, (const char *const []){ NULL },
	    check_fields, " for a check") == -1)
		return NULL;
	out = json_object();
	if (fields(sc, at, raw, check_fields, out) == -1)
		goto bad;
	metric = json_string_value(json_object_get(out, "metric"));
	ka = (struct at){ at, raw, "metric", 0, NULL };
	if ((kind = sc_measure_kind(sc, metric)) == -1) {
		sc_fail_measure(sc, &ka, json_object_get(out, "metric"));
		goto bad;
	}
	ka = (struct at){ at, raw, "stat", 0, NULL };
	if (kind == 0 && json_object_get(out, "stat") != NULL) {
		sc_fail(sc, &ka, "stat applies only to a latency measure, and "
		    "%s is not one", metric);
		goto bad;
	}
	res = json_object();
	if (json_object_get(out, "name") == NULL) {
		sc_real_text(json_real_value(json_object_get(out, "bound")),
		    bound, sizeof(bound));
		snprintf(dflt, sizeof(dflt), "%s %s %s", metric,
		    json_string_value(json_object_get(out, "op")), bound);
		json_object_set_new(res, "name", json_string(dflt));
	} else
		json_object_set(res, "name", json_object_get(out, "name"));
	json_object_set(res, "metric", json_object_get(out, "metric"));
	json_object_set(res, "op", json_object_get(out, "op"));
	json_object_set(res, "bound", json_object_get(out, "bound"));
	if (kind == 0)
		json_object_set_new(res, "stat", json_null());
	else if (json_object_get(out, "stat") != NULL)
		json_object_set(res, "stat", json_object_get(out, "stat"));
	else
		json_object_set_new(res, "stat", json_string("p99"));
	json_decref(out);
	ka = (struct at){ at, raw, "name", 0, NULL };
	if (unique_name(sc, &ka, names,
	    json_string_value(json_object_get(res, "name")), index,
	    "check") == -1) {
		json_decref(res);
		return NULL;
	}
	return res;
bad:
	json_decref(out);
	return NULL;
}

/* The checks array of top into res; -1 after sc_fail(). */
int
scstep_checks(struct sc *sc, const struct at *root, const json_t *top,
    json_t *res)
{
	struct at ca, ea;
	json_t *raw, *out, *c, *names;
	size_t i;

	ca = (struct at){ root, top, "checks", 0, NULL };
	out = json_array();
	json_object_set_new(res, "checks", out);
	if ((raw = json_object_get(top, "checks")) == NULL)
		return 0;
	if (!json_is_array(raw))
		return sc_fail_got(sc, &ca, raw, "an array of checks");
	names = json_object();
	for (i = 0; i < json_array_size(raw); i++) {
		ea = (struct at){ &ca, raw, NULL, i, NULL };
		if ((c = check(sc, &ea, json_array_get(raw, i), i,
		    names)) == NULL)
			break;
		json_array_append_new(out, c);
	}
	json_decref(names);
	return sc->failed ? -1 : 0;
}


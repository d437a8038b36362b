/*
 * scenario.c: check a scenario file and resolve it (see scenario.h and
 * docs/scenarios.md).
 *
 * jpos reads the text and keeps every value's line; this file walks the
 * tree once, in file order of sections (params first, since everything
 * after them may say "$name"), and builds a fresh resolved tree.  The walk
 * carries a chain of struct at (parent container, key or index) on the C
 * stack: it gives both the path of an error and, through jpos, its line.
 * This file holds the top level, the parameters and --set, the fleet and
 * the entry points; scstep.c the steps and checks; sc.c the helpers all
 * three walk with (sc.h).  The first error wins and stops the walk.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "hint.h"
#include "jpos.h"
#include "knob.h"
#include "sc.h"
#include "scenario.h"
#include "xmalloc.h"

static const char *const top_keys[] = {
	"name", "description", "params", "fleet", "steps", "checks",
	"timeout_s", "sample_ms", NULL
};
static const char *const param_keys[] = {
	"type", "default", "min", "max", "choices", "help", NULL
};
static const char *const param_types[] = {
	"int", "number", "bool", "string", NULL
};
static const char *const fleet_keys[] = {
	"peers", "binding", "topology", "knobs", NULL
};
static const char *const bindings[] = { "tcp", "tls", "dtls", NULL };
static const char *const topologies[] = { "mesh", "ring", "star", "none",
    NULL };

/* ---- parameters ------------------------------------------------------ */

static const char *
type_want(int type)
{
	static const char *const wants[] = {
		"an int", "a number", "true or false", "a string"
	};

	return wants[type];
}

/*
 * v checked against a declaration: the normalized value (a number is a
 * real), or NULL with what was wanted; *typeerr tells a wrong type from a
 * value out of range or choices.
 */
static json_t *
param_fit(const json_t *decl, const json_t *v, char *want, size_t size,
    bool *typeerr)
{
	int type = (int)json_integer_value(json_object_get(decl, "$type"));
	const json_t *min = json_object_get(decl, "min");
	const json_t *max = json_object_get(decl, "max");
	const json_t *choices = json_object_get(decl, "choices");
	const json_t *c;
	char one[80];
	size_t i, n;
	bool ok;

	*typeerr = false;
	snprintf(want, size, "%s", type_want(type));
	ok = (type == 0 && json_is_integer(v)) ||
	    (type == 1 && json_is_number(v)) ||
	    (type == 2 && json_is_boolean(v)) ||
	    (type == 3 && json_is_string(v));
	if (!ok) {
		*typeerr = true;
		return NULL;
	}
	if (type == 3 && json_string_length(v) > PARAM_STR_MAX) {
		snprintf(want, size, "a string of at most %d bytes",
		    PARAM_STR_MAX);
		return NULL;
	}
	if (type <= 1 && ((min != NULL && json_number_value(v) <
	    json_number_value(min)) || (max != NULL && json_number_value(v) >
	    json_number_value(max)))) {
		n = strlen(want);
		if (min != NULL) {
			sc_value_text(min, one, sizeof(one));
			n += (size_t)snprintf(want + n, size - n, " %s %s",
			    max != NULL ? "from" : ">=", one);
		}
		if (max != NULL) {
			sc_value_text(max, one, sizeof(one));
			snprintf(want + n, size - n, " %s %s",
			    min != NULL ? "to" : "<=", one);
		}
		return NULL;
	}
	if (choices != NULL) {
		for (i = 0; i < json_array_size(choices); i++) {
			c = json_array_get(choices, i);
			if (type == 3 ? json_equal((json_t *)c, (json_t *)v) :
			    json_number_value(c) == json_number_value(v))
				break;
		}
		if (i == json_array_size(choices)) {
			n = (size_t)snprintf(want, size, "one of");
			json_array_foreach(choices, i, c) {
				sc_value_text(c, one, sizeof(one));
				if (n + strlen(one) + 8 >= size) {
					snprintf(want + n, size - n, ", ...");
					break;
				}
				n += (size_t)snprintf(want + n, size - n,
				    "%s %s",
				    i ? "," : "", one);
			}
			return NULL;
		}
	}
	if (type == 1)
		return json_real(json_number_value(v));
	return json_incref((json_t *)v);
}

/* The declaration spec of a parameter, checked; a copy with "$type". */
static json_t *
param_decl(struct sc *sc, const struct at *at, json_t *spec)
{
	struct at ta, ka;
	json_t *decl, *v, *c, *val;
	char want[MSG_MAX / 2];
	const char *k;
	size_t i;
	bool typeerr;
	int type;

	if (!json_is_object(spec)) {
		sc_fail_got(sc, at, spec, "an object with type and default");
		return NULL;
	}
	if (sc_only_keys(sc, at, spec, param_keys, NULL,
	    " in a parameter") == -1)
		return NULL;
	ta = (struct at){ at, spec, "type", 0, NULL };
	if ((v = json_object_get(spec, "type")) == NULL) {
		sc_fail(sc, &ta,
		    "missing (expected one of \"int\", \"number\", "
		    "\"bool\", \"string\")");
		return NULL;
	}
	if ((type = sc_want_enum(sc, &ta, v, param_types)) < 0)
		return NULL;
	decl = json_pack("{s:i}", "$type", type);
	for (i = 0; i < 2; i++) {
		k = i == 0 ? "min" : "max";
		ka = (struct at){ at, spec, k, 0, NULL };
		if ((v = json_object_get(spec, k)) == NULL)
			continue;
		if (type > 1) {
			sc_fail(sc, &ka,
			    "min and max apply only to an int or a "
			    "number");
			goto bad;
		}
		if (type == 0 ? !json_is_integer(v) : !json_is_number(v)) {
			sc_fail_got(sc, &ka, v, type_want(type));
			goto bad;
		}
		json_object_set(decl, k, v);
	}
	if (json_object_get(decl, "min") != NULL &&
	    json_object_get(decl, "max") != NULL &&
	    json_number_value(json_object_get(decl, "min")) >
	    json_number_value(json_object_get(decl, "max"))) {
		ka = (struct at){ at, spec, "max", 0, NULL };
		sc_fail_got(sc, &ka, json_object_get(decl, "max"),
		    "a max >= min");
		goto bad;
	}
	ka = (struct at){ at, spec, "choices", 0, NULL };
	if ((v = json_object_get(spec, "choices")) != NULL) {
		if (type == 2) {
			sc_fail(sc, &ka, "choices do not apply to a bool");
			goto bad;
		}
		if (!json_is_array(v) || json_array_size(v) == 0) {
			sc_fail_got(sc, &ka, v, "a non-empty list");
			goto bad;
		}
		json_array_foreach(v, i, c) {
			ta = (struct at){ &ka, v, NULL, i, NULL };
			if ((val = param_fit(decl, c, want, sizeof(want),
			    &typeerr)) == NULL) {
				sc_fail_got(sc, &ta, c, want);
				goto bad;
			}
			json_decref(val);
		}
		json_object_set(decl, "choices", v);
	}
	ka = (struct at){ at, spec, "help", 0, NULL };
	if ((v = json_object_get(spec, "help")) != NULL &&
	    !json_is_string(v)) {
		sc_fail_got(sc, &ka, v, "a string");
		goto bad;
	}
	return decl;
bad:
	json_decref(decl);
	return NULL;
}

static int
params(struct sc *sc, const struct at *root, const json_t *top)
{
	struct at pa, na, da;
	const char *name;
	json_t *raw, *spec, *decl, *v, *val;
	char want[MSG_MAX / 2];
	bool typeerr;

	pa = (struct at){ root, top, "params", 0, NULL };
	if ((raw = json_object_get(top, "params")) == NULL)
		return 0;
	if (!json_is_object(raw))
		return sc_fail_got(sc, &pa, raw, "an object of parameters");
	json_object_foreach(raw, name, spec) {
		na = (struct at){ &pa, raw, name, 0, NULL };
		if (!sc_name_ok(name, strlen(name)))
			return sc_fail(sc, &na, "expected a parameter name (a "
			    "letter or '_', then letters, digits or '_', at "
			    "most %d)", NAME_LEN);
		if ((decl = param_decl(sc, &na, spec)) == NULL)
			return -1;
		json_object_set_new(sc->decls, name, decl);
		da = (struct at){ &na, spec, "default", 0, NULL };
		if ((v = json_object_get(spec, "default")) == NULL)
			return sc_fail(sc, &da, "missing (expected %s)",
			    type_want((int)json_integer_value(
			    json_object_get(decl, "$type"))));
		if ((val = param_fit(decl, v, want, sizeof(want),
		    &typeerr)) == NULL)
			return sc_fail_got(sc, &da, v, want);
		json_object_set_new(sc->params, name, val);
	}
	return 0;
}

/* Apply one "NAME=VALUE" from --set. */
static int
param_set(struct sc *sc, const char *set)
{
	char want[MSG_MAX / 2], known[160], *name;
	const char *eq = strchr(set, '='), *text;
	struct jpos_error je;
	struct jpos *pos = NULL;
	json_t *decl, *v = NULL, *val = NULL;
	bool typeerr = true;
	int type;

	if (eq == NULL || eq == set) {
		snprintf(sc->err, sc->errlen, "--set %.80s: expected "
		    "NAME=VALUE", set);
		return -1;
	}
	name = xstrndup(set, (size_t)(eq - set));
	if ((decl = json_object_get(sc->decls, name)) == NULL) {
		const char *near = hint_closest_key(name, sc->decls);

		sc_params_text(sc, known, sizeof(known));
		if (near != NULL)
			snprintf(sc->err, sc->errlen, "--set %.80s: no such "
			    "parameter (%s); did you mean \"%s\"?", set, known,
			    near);
		else
			snprintf(sc->err, sc->errlen, "--set %.80s: no such "
			    "parameter (%s)", set, known);
		free(name);
		return -1;
	}
	type = (int)json_integer_value(json_object_get(decl, "$type"));
	text = eq + 1;
	if (type <= 1) {
		if ((v = jpos_parse(text, strlen(text), &pos, &je)) != NULL &&
		    !json_is_number(v)) {
			json_decref(v);
			v = NULL;
		}
		jpos_free(pos);
	} else if (type == 2) {
		if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)
			v = json_boolean(text[0] == 't');
	} else
		v = json_string(text);	/* NULL if not UTF-8 */
	if (v != NULL)
		val = param_fit(decl, v, want, sizeof(want), &typeerr);
	json_decref(v);
	if (val == NULL) {
		snprintf(sc->err, sc->errlen, "--set %.80s: expected %s", set,
		    typeerr ? type_want(type) : want);
		free(name);
		return -1;
	}
	json_object_set_new(sc->params, name, val);
	free(name);
	return 0;
}

/* ---- the fleet and the top level ------------------------------------- */

static int
topology(struct sc *sc, const struct at *at, json_t *v, json_t *fleet)
{
	struct at ka;
	json_t *k;
	json_int_t n;

	if (json_is_string(v)) {
		if (sc_want_enum(sc, at, v, topologies) < 0)
			return -1;
		json_object_set(fleet, "topology", v);
		return 0;
	}
	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    (k = json_object_get(v, "random")) == NULL)
		return sc_fail_got(sc, at, v, "\"mesh\", \"ring\", \"star\", "
		    "\"none\" or {\"random\": K}");
	ka = (struct at){ at, v, "random", 0, NULL };
	if ((k = sc_subst(sc, &ka, k)) == NULL)
		return -1;
	if (sc_want_int(sc, &ka, k, 1, PEERS_MAX, &n) == -1) {
		json_decref(k);
		return -1;
	}
	json_decref(k);
	json_object_set_new(fleet, "topology", json_pack("{s:I}", "random",
	    n));
	return 0;
}

static int
fleet(struct sc *sc, const struct at *root, const json_t *top, json_t *res)
{
	struct at fa, ka;
	json_t *raw, *out, *v, *k;
	json_int_t n;

	fa = (struct at){ root, top, "fleet", 0, NULL };
	if ((raw = json_object_get(top, "fleet")) == NULL)
		return sc_fail(sc, &fa,
		    "missing (expected an object with peers "
		    "and optionally binding, topology, knobs)");
	if (!json_is_object(raw))
		return sc_fail_got(sc, &fa, raw, "an object with peers and "
		    "optionally binding, topology, knobs");
	if (sc_only_keys(sc, &fa, raw, fleet_keys, NULL, " in fleet") == -1)
		return -1;
	out = json_object();
	json_object_set_new(res, "fleet", out);
	if ((v = sc_get(sc, &fa, raw, "peers", &ka)) == NULL)
		return sc->failed ? -1 : sc_fail(sc, &ka,
		    "missing (expected an "
		    "int from 1 to %d)", PEERS_MAX);
	if (sc_want_int(sc, &ka, v, 1, PEERS_MAX, &n) == -1)
		goto bad;
	json_decref(v);
	sc->npeers = n;
	json_object_set_new(out, "peers", json_integer(n));
	if ((v = sc_get(sc, &fa, raw, "binding", &ka)) == NULL) {
		if (sc->failed)
			return -1;
		v = json_string("tcp");
	}
	if (sc_want_enum(sc, &ka, v, bindings) < 0)
		goto bad;
	json_object_set_new(out, "binding", v);
	if ((v = sc_get(sc, &fa, raw, "topology", &ka)) == NULL) {
		if (sc->failed)
			return -1;
		v = json_string("mesh");
	}
	if (topology(sc, &ka, v, out) == -1)
		goto bad;
	json_decref(v);
	ka = (struct at){ &fa, raw, "knobs", 0, NULL };
	if ((v = json_object_get(raw, "knobs")) == NULL)
		k = json_object();
	else if ((k = sc_want_knobs(sc, &ka, v, NULL)) == NULL)
		return -1;
	json_object_set_new(out, "knobs", k);
	sc->knobs = k;
	return 0;
bad:
	json_decref(v);
	return -1;
}

static bool
scenario_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > NAME_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

static json_t *
resolve(struct sc *sc, const json_t *top, char *const *sets, size_t nsets)
{
	struct at root = { NULL, NULL, NULL, 0, NULL }, ka;
	json_t *res, *v;
	json_int_t n;
	double d;
	size_t i;

	if (!json_is_object(top)) {
		sc_fail_got(sc, &root, top, "an object");
		return NULL;
	}
	if (sc_only_keys(sc, &root, top, top_keys, NULL, "") == -1)
		return NULL;
	sc->params = json_object();
	sc->decls = json_object();
	sc->measures = json_object();
	if (params(sc, &root, top) == -1)
		return NULL;
	for (i = 0; i < nsets; i++)
		if (param_set(sc, sets[i]) == -1) {
			sc->failed = true;
			return NULL;
		}
	res = json_object();

	if ((v = sc_get(sc, &root, top, "name", &ka)) == NULL) {
		if (!sc->failed)
			sc_fail(sc, &ka, "missing (expected a name of "
			    "[a-z0-9_-], at most %d)", NAME_LEN);
		goto bad;
	}
	json_object_set_new(res, "name", v);
	if (!json_is_string(v) || !scenario_name_ok(json_string_value(v),
	    json_string_length(v))) {
		sc_fail_got(sc, &ka, v, "a name of [a-z0-9_-], at most 64");
		goto bad;
	}
	if ((v = sc_get(sc, &root, top, "description", &ka)) == NULL) {
		if (!sc->failed)
			sc_fail(sc, &ka,
			    "missing (expected a string saying what "
			    "the scenario measures and why)");
		goto bad;
	}
	json_object_set_new(res, "description", v);
	if (!json_is_string(v)) {
		sc_fail_got(sc, &ka, v, "a string");
		goto bad;
	}
	json_object_set(res, "params", sc->params);

	d = 300;
	if ((v = sc_get(sc, &root, top, "timeout_s", &ka)) != NULL) {
		sc_want_num(sc, &ka, v, 0, TIME_S_MAX, true, &d);
		json_decref(v);
	}
	if (sc->failed)
		goto bad;
	json_object_set_new(res, "timeout_s", json_real(d));
	/* absent: the engine's default period, which fits the run */
	if ((v = sc_get(sc, &root, top, "sample_ms", &ka)) != NULL) {
		sc_want_int(sc, &ka, v, 0, 3600000, &n);
		json_decref(v);
		if (!sc->failed)
			json_object_set_new(res, "sample_ms", json_integer(n));
	}
	if (sc->failed)
		goto bad;

	if (fleet(sc, &root, top, res) == -1 ||
	    scstep_steps(sc, &root, top, res) == -1 ||
	    scstep_checks(sc, &root, top, res) == -1)
		goto bad;
	return res;
bad:
	json_decref(res);
	return NULL;
}

/* ---- entry points ---------------------------------------------------- */

json_t *
scenario_parse(const char *text, size_t len, const char *filename,
    char *const *sets, size_t nsets, char *err, size_t errlen)
{
	struct jpos_error je;
	struct sc sc;
	json_t *top, *res;

	memset(&sc, 0, sizeof(sc));
	sc.file = filename != NULL ? filename : "<input>";
	sc.err = err;
	sc.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	if (len > JPOS_MAX_SIZE) {
		if (errlen > 0)
			snprintf(err, errlen, "%s: larger than 1 MiB (%zu "
			    "bytes)", sc.file, len);
		return NULL;
	}
	if ((top = jpos_parse(text, len, &sc.pos, &je)) == NULL) {
		if (errlen > 0 && je.path[0] != '\0')
			snprintf(err, errlen, "%s:%d: %s: %s", sc.file,
			    je.line, je.path, je.text);
		else if (errlen > 0)
			snprintf(err, errlen, "%s:%d: %s", sc.file, je.line,
			    je.text);
		return NULL;
	}
	res = resolve(&sc, top, sets, nsets);
	json_decref(sc.params);
	json_decref(sc.decls);
	json_decref(sc.measures);
	json_decref(top);
	jpos_free(sc.pos);
	return res;
}

json_t *
scenario_load(const char *path, char *const *sets, size_t nsets, char *err,
    size_t errlen)
{
	struct stat st;
	char *buf;
	size_t len = 0, cap = JPOS_MAX_SIZE + 1;
	ssize_t n;
	json_t *res;
	int fd;

	if (errlen > 0)
		err[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, S_ISDIR(st.st_mode) ?
		    "is a directory" : strerror(errno));
		close(fd);
		return NULL;
	}
	if (S_ISREG(st.st_mode) && st.st_size > JPOS_MAX_SIZE) {
		snprintf(err, errlen, "%s: larger than 1 MiB (%lld bytes)",
		    path, (long long)st.st_size);
		close(fd);
		return NULL;
	}
	/* Read one byte past the limit to tell "too large" from "at it". */
	buf = xmalloc(cap);
	while (len < cap && (n = read(fd, buf + len, cap - len)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		len += (size_t)n;
	}
	close(fd);
	res = scenario_parse(buf, len, path, sets, nsets, err, errlen);
	free(buf);
	return res;
}


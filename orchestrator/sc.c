/*
 * sc.c: the helpers every part of the scenario parser walks with (sc.h):
 * errors with their path and line, "$name" substitution, typed values,
 * peer selectors, knobs and measure names.  The first error wins: sc_fail()
 * writes it and marks the parse failed, and every caller stops.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jpos.h"
#include "knob.h"
#include "measures.h"
#include "sc.h"
#include "xmalloc.h"

/* ---- errors ---------------------------------------------------------- */

static void
at_path(const struct at *at, char *buf, size_t size)
{
	if (at == NULL || at->parent == NULL) {
		buf[0] = '\0';
		return;
	}
	at_path(at->up, buf, size);
	jpos_path_push(buf, size, at->key, at->index);
}

/* The line of the value at at, or of the nearest enclosing one. */
static int
at_line(const struct sc *sc, const struct at *at)
{
	int line;

	for (; at != NULL; at = at->up)
		if (jpos_lookup(sc->pos, at->parent, at->key, at->index,
		    &line, NULL) == 0)
			return line;
	return 1;
}

/*
 * The error at at, with its path and line, into sc->err; marks the parse failed; -1.
 */
int __attribute__((format(printf, 3, 4)))
sc_fail(struct sc *sc, const struct at *at, const char *fmt, ...)
{
	char path[JPOS_PATH_MAX], msg[MSG_MAX];
	va_list ap;

	if (sc->failed)
		return -1;
	sc->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (sc->errlen == 0)
		return -1;
	at_path(at, path, sizeof(path));
	if (path[0] != '\0')
		snprintf(sc->err, sc->errlen, "%s:%d: %s: %s", sc->file,
		    at_line(sc, at), path, msg);
	else
		snprintf(sc->err, sc->errlen, "%s:%d: %s", sc->file,
		    at_line(sc, at), msg);
	return -1;
}

/* The shortest text that reads back as d, always with a '.' or 'e'. */
void
sc_real_text(double d, char *buf, size_t size)
{
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (strpbrk(buf, ".e") == NULL && strlen(buf) + 3 <= size)
		strcat(buf, ".0");
}

/* A short quoted rendering of a string, cut at a character boundary. */
static void
quote_text(const char *s, size_t len, char *buf, size_t size)
{
	size_t i, k = 0, cut = len > 40 ? 40 : len;

	while (cut < len && cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	if (size < 16)
		return;
	buf[k++] = '"';
	for (i = 0; i < cut && k < size - 12; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			buf[k++] = '\\';
			buf[k++] = (char)c;
		} else if (c < 0x20)
			k += (size_t)snprintf(buf + k, size - k, "\\u%04x", c);
		else
			buf[k++] = (char)c;
	}
	if (i < len)
		k += (size_t)snprintf(buf + k, size - k, "...");
	snprintf(buf + k, size - k, "\"");
}

/* v as short JSON text for a message. */
void
sc_value_text(const json_t *v, char *buf, size_t size)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		snprintf(buf, size, "an object");
		break;
	case JSON_ARRAY:
		snprintf(buf, size, "an array");
		break;
	case JSON_STRING:
		quote_text(json_string_value(v), json_string_length(v), buf,
		    size);
		break;
	case JSON_INTEGER:
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		break;
	case JSON_REAL:
		sc_real_text(json_real_value(v), buf, size);
		break;
	case JSON_TRUE:
		snprintf(buf, size, "true");
		break;
	case JSON_FALSE:
		snprintf(buf, size, "false");
		break;
	default:
		snprintf(buf, size, "null");
		break;
	}
}

/* "expected WANT, got V[ (from $name)]" at at. */
int
sc_fail_got(struct sc *sc, const struct at *at, const json_t *v,
    const char *want)
{
	char got[80];

	sc_value_text(v, got, sizeof(got));
	return sc_fail(sc, at, "expected %s, got %s%s%s%s", want, got,
	    at->from ? " (from $" : "", at->from ? at->from : "",
	    at->from ? ")" : "");
}

/* The words of list, comma-separated, quoted if quote. */
void
sc_list_text(const char *const *list, bool quote, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; *list != NULL && n < size; list++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s",
		    n ? ", " : "", quote ? "\"" : "", *list, quote ? "\"" : "");
}

/* Names of the declared parameters, for "unknown" messages. */
void
sc_params_text(const struct sc *sc, char *buf, size_t size)
{
	const char *name;
	json_t *v;
	size_t n = 0;

	if (json_object_size(sc->params) == 0) {
		snprintf(buf, size, "no parameters are declared");
		return;
	}
	n = (size_t)snprintf(buf, size, "declared: ");
	json_object_foreach(sc->params, name, v) {
		if (n + strlen(name) + 8 >= size) {
			snprintf(buf + n, size - n, ", ...");
			return;
		}
		n += (size_t)snprintf(buf + n, size - n, "%s%s",
		    n > 10 ? ", " : "", name);
	}
}

/* ---- substitution ---------------------------------------------------- */

/* A parameter name: [A-Za-z_][A-Za-z0-9_]*, at most NAME_LEN. */
bool
sc_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > NAME_LEN || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_'))
			return false;
	return true;
}

static json_t *
param_value(struct sc *sc, const struct at *at, const char *name, size_t n)
{
	char key[NAME_LEN + 1], known[160];
	json_t *v;

	memcpy(key, name, n);
	key[n] = '\0';
	if ((v = json_object_get(sc->params, key)) == NULL) {
		sc_params_text(sc, known, sizeof(known));
		sc_fail(sc, at, "unknown parameter $%s (%s)", key, known);
	}
	return v;
}

static void
sbuf_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*cap - *len < n + 1) {
		while (*cap - *len < n + 1)
			*cap = *cap ? *cap * 2 : 64;
		*buf = xreallocarray(*buf, *cap, 1);
	}
	memcpy(*buf + *len, s, n);
	*len += n;
}

/*
 * raw with its "$" references resolved, as a new reference; NULL after
 * sc_fail().  Exactly "$name" takes the value with its type; in a longer
 * string "${name}" takes its text and "$$" is a '$'.
 */
json_t *
sc_subst(struct sc *sc, struct at *at, json_t *raw)
{
	const char *s, *p, *close;
	char *buf = NULL, num[40], got[80];
	size_t len, blen = 0, cap = 0;
	json_t *v;

	if (!json_is_string(raw))
		return json_incref(raw);
	s = json_string_value(raw);
	len = json_string_length(raw);
	if (memchr(s, '$', len) == NULL)
		return json_incref(raw);
	if (s[0] == '$' && sc_name_ok(s + 1, len - 1)) {
		if ((v = param_value(sc, at, s + 1, len - 1)) == NULL)
			return NULL;
		at->from = s + 1;
		return json_incref(v);
	}
	for (p = s; p < s + len; p++) {
		if (*p != '$') {
			sbuf_put(&buf, &blen, &cap, p, 1);
			continue;
		}
		if (p + 1 < s + len && p[1] == '$') {
			sbuf_put(&buf, &blen, &cap, "$", 1);
			p++;
			continue;
		}
		if (p + 1 >= s + len || p[1] != '{' || (close = memchr(p + 2,
		    '}', (size_t)(s + len - p - 2))) == NULL ||
		    !sc_name_ok(p + 2, (size_t)(close - p - 2))) {
			quote_text(s, len, got, sizeof(got));
			sc_fail(sc, at,
			    "expected \"$name\" alone, or ${name} or "
			    "$$ inside a string, got %s", got);
			free(buf);
			return NULL;
		}
		if ((v = param_value(sc, at, p + 2,
		    (size_t)(close - p - 2))) == NULL) {
			free(buf);
			return NULL;
		}
		if (json_is_string(v))
			sbuf_put(&buf, &blen, &cap, json_string_value(v),
			    json_string_length(v));
		else {
			sc_value_text(v, num, sizeof(num));
			sbuf_put(&buf, &blen, &cap, num, strlen(num));
		}
		p = close;
	}
	v = json_stringn_nocheck(buf ? buf : "", blen);
	free(buf);
	return v;
}

/* obj[key] resolved, at filled in; NULL when absent or after sc_fail(). */
json_t *
sc_get(struct sc *sc, const struct at *up, const json_t *obj, const char *key,
    struct at *at)
{
	json_t *raw;

	at->up = up;
	at->parent = obj;
	at->key = key;
	at->index = 0;
	at->from = NULL;
	if ((raw = json_object_get(obj, key)) == NULL)
		return NULL;
	return sc_subst(sc, at, raw);
}

static json_t *
get_elem(struct sc *sc, const struct at *up, const json_t *arr, size_t i,
    struct at *at)
{
	at->up = up;
	at->parent = arr;
	at->key = NULL;
	at->index = i;
	at->from = NULL;
	return sc_subst(sc, at, json_array_get(arr, i));
}

/* ---- typed values ---------------------------------------------------- */

/* "what from min to max" (or open-ended) into buf. */
void
sc_int_want(char *buf, size_t size, const char *what, json_int_t min,
    json_int_t max)
{
	if (min == LLONG_MIN && max == LLONG_MAX)
		snprintf(buf, size, "%s", what);
	else if (max == LLONG_MAX)
		snprintf(buf, size, "%s >= %lld", what, min);
	else if (min == LLONG_MIN)
		snprintf(buf, size, "%s <= %lld", what, max);
	else
		snprintf(buf, size, "%s from %lld to %lld", what, min, max);
}

/* "a number from min to max" (or above min) into buf. */
void
sc_num_want(char *buf, size_t size, double min, double max, bool above)
{
	if (isinf(min) && isinf(max))
		snprintf(buf, size, "a number");
	else if (isinf(max))
		snprintf(buf, size, "a number %s %g", above ? ">" : ">=", min);
	else if (above)
		snprintf(buf, size, "a number > %g and <= %g", min, max);
	else
		snprintf(buf, size, "a number from %g to %g", min, max);
}

/* v as an int in [min, max] into *out; -1 after sc_fail(). */
int
sc_want_int(struct sc *sc, const struct at *at, const json_t *v, json_int_t min,
    json_int_t max, json_int_t *out)
{
	char want[80];

	if (json_is_integer(v) && json_integer_value(v) >= min &&
	    json_integer_value(v) <= max) {
		*out = json_integer_value(v);
		return 0;
	}
	sc_int_want(want, sizeof(want), "an int", min, max);
	return sc_fail_got(sc, at, v, want);
}

/* A number in [min, max], or (min, max] when above; min may be -inf. */
int
sc_want_num(struct sc *sc, const struct at *at, const json_t *v, double min,
    double max, bool above, double *out)
{
	char want[80];
	double d;

	if (json_is_number(v)) {
		d = json_number_value(v);
		if ((above ? d > min : d >= min) && d <= max) {
			*out = d;
			return 0;
		}
	}
	sc_num_want(want, sizeof(want), min, max, above);
	return sc_fail_got(sc, at, v, want);
}

/* The index of v in choices; -1 after sc_fail(). */
int
sc_want_enum(struct sc *sc, const struct at *at, const json_t *v,
    const char *const *choices)
{
	char want[MSG_MAX / 2];
	const char *const *c;

	if (json_is_string(v))
		for (c = choices; *c != NULL; c++)
			if (strcmp(json_string_value(v), *c) == 0)
				return (int)(c - choices);
	snprintf(want, sizeof(want), "one of ");
	sc_list_text(choices, true, want + 7, sizeof(want) - 7);
	return sc_fail_got(sc, at, v, want);
}

/* v as a string of at most max bytes; -1 after sc_fail(). */
int
sc_want_str(struct sc *sc, const struct at *at, const json_t *v, size_t max)
{
	char want[80];

	if (json_is_string(v) && json_string_length(v) > 0 &&
	    json_string_length(v) <= max)
		return 0;
	snprintf(want, sizeof(want), "a non-empty string of at most %zu "
	    "bytes", max);
	return sc_fail_got(sc, at, v, want);
}

/* Check that obj has no key outside keys (and extra, if not NULL). */
int
sc_only_keys(struct sc *sc, const struct at *up, const json_t *obj,
    const char *const *keys, const struct field *extra, const char *what)
{
	char want[MSG_MAX / 2];
	const char *key, *const *k;
	const struct field *f;
	struct at at;
	size_t n;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		for (k = keys; *k != NULL; k++)
			if (strcmp(key, *k) == 0)
				break;
		if (*k != NULL)
			continue;
		for (f = extra; f != NULL && f->key != NULL; f++)
			if (strcmp(key, f->key) == 0)
				break;
		if (f != NULL && f->key != NULL)
			continue;
		at = (struct at){ up, obj, key, 0, NULL };
		sc_list_text(keys, false, want, sizeof(want));
		n = strlen(want);
		for (f = extra; f != NULL && f->key != NULL; f++)
			n += (size_t)snprintf(want + n, n < sizeof(want) ?
			    sizeof(want) - n : 0, "%s%s", n ? ", " : "",
			    f->key);
		return sc_fail(sc, &at, "unknown key%s; expected one of %s",
		    what, want);
	}
	return 0;
}

/* ---- peers ----------------------------------------------------------- */

/* v as a peer index below bound into *out; -1 after sc_fail(). */
int
sc_want_index(struct sc *sc, const struct at *at, const json_t *v,
    json_int_t bound, json_int_t *out)
{
	char want[80];

	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < bound) {
		*out = json_integer_value(v);
		return 0;
	}
	snprintf(want, sizeof(want), "a peer index from 0 to %lld",
	    (long long)bound - 1);
	return sc_fail_got(sc, at, v, want);
}

/*
 * A list of distinct indexes below bound into out; seen is a bitmap of
 * bound bytes shared by the groups of a partition.
 */
static int
want_list(struct sc *sc, const struct at *at, const json_t *arr,
    json_int_t bound, char *seen, json_t *out)
{
	struct at ea;
	json_int_t idx;
	json_t *v;
	size_t i;

	for (i = 0; i < json_array_size(arr); i++) {
		if ((v = get_elem(sc, at, arr, i, &ea)) == NULL)
			return -1;
		if (sc_want_index(sc, &ea, v, bound, &idx) == -1) {
			json_decref(v);
			return -1;
		}
		json_decref(v);
		if (seen[idx])
			return sc_fail(sc, &ea, "peer %lld is listed twice",
			    (long long)idx);
		seen[idx] = 1;
		json_array_append_new(out, json_integer(idx));
	}
	return 0;
}

/* A peer selector (an index, a list or "all"); NULL after sc_fail(). */
json_t *
sc_want_sel(struct sc *sc, const struct at *at, const json_t *v,
    json_int_t bound)
{
	json_int_t idx;
	json_t *out;
	char *seen;
	int rc;

	if (json_is_string(v) && strcmp(json_string_value(v), "all") == 0)
		return json_string("all");
	if (json_is_integer(v)) {
		if (sc_want_index(sc, at, v, bound, &idx) == -1)
			return NULL;
		return json_pack("[I]", idx);
	}
	if (!json_is_array(v) || json_array_size(v) == 0) {
		sc_fail_got(sc, at, v,
		    "a peer index, a list of them or \"all\"");
		return NULL;
	}
	out = json_array();
	seen = xcalloc((size_t)bound, 1);
	rc = want_list(sc, at, v, bound, seen, out);
	free(seen);
	if (rc == -1) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* A partition: at least two disjoint groups of peers; NULL after sc_fail(). */
json_t *
sc_want_groups(struct sc *sc, const struct at *at, const json_t *v,
    json_int_t bound)
{
	struct at ga;
	json_t *out, *g, *og;
	char *seen;
	size_t i;

	if (!json_is_array(v) || json_array_size(v) < 2) {
		sc_fail_got(sc, at, v, "a list of at least two groups of peer "
		    "indexes");
		return NULL;
	}
	out = json_array();
	seen = xcalloc((size_t)bound, 1);
	for (i = 0; i < json_array_size(v); i++) {
		ga = (struct at){ at, v, NULL, i, NULL };
		g = json_array_get(v, i);
		if (!json_is_array(g) || json_array_size(g) == 0) {
			sc_fail_got(sc, &ga, g,
			    "a non-empty list of peer indexes");
			break;
		}
		og = json_array();
		json_array_append_new(out, og);
		if (want_list(sc, &ga, g, bound, seen, og) == -1)
			break;
	}
	free(seen);
	if (sc->failed) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* The knobs object v laid over a copy of base; NULL after sc_fail(). */
json_t *
sc_want_knobs(struct sc *sc, const struct at *at, const json_t *v,
    const json_t *base)
{
	char names[MSG_MAX / 2];
	const char *key;
	const struct knob *k;
	struct at ka;
	json_t *out, *raw, *val;
	json_int_t n;
	size_t i, len = 0;

	if (!json_is_object(v)) {
		sc_fail_got(sc, at, v, "an object of peerd flags");
		return NULL;
	}
	out = base != NULL ? json_copy((json_t *)base) : json_object();
	json_object_foreach((json_t *)v, key, raw) {
		ka = (struct at){ at, v, key, 0, NULL };
		if ((k = knob_find(key)) == NULL) {
			for (i = 0; i < knob_count && len < sizeof(names); i++)
				len += (size_t)snprintf(names + len,
				    sizeof(names) - len, "%s%s", i ? ", " : "",
				    knob_table[i].name);
			sc_fail(sc, &ka,
			    "unknown peerd flag; expected one of %s",
			    names);
			break;
		}
		if ((val = sc_subst(sc, &ka, raw)) == NULL)
			break;
		if (knob_words(k) != NULL) {
			if (sc_want_enum(sc, &ka, val, knob_words(k)) >= 0)
				json_object_set(out, key, val);
		} else if (sc_want_int(sc, &ka, val, (json_int_t)k->min,
		    (json_int_t)k->max, &n) == 0)
			json_object_set_new(out, key, json_integer(n));
		json_decref(val);
		if (sc->failed)
			break;
	}
	if (sc->failed) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* ---- measures -------------------------------------------------------- */

/* A measure name: dotted words of [a-z0-9_], at most NAME_LEN. */
bool
sc_measure_name_ok(const char *s)
{
	size_t n = strlen(s), i;
	bool dot = false;

	if (n == 0 || n > NAME_LEN || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (s[i + 1] == '.')
				return false;
			dot = true;
		} else if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	}
	return dot;
}

/* 1 a latency, 0 a value, -1 unknown. */
int
sc_measure_kind(const struct sc *sc, const char *name)
{
	const struct measure_info *mi = measures_find(name);

	if (mi != NULL)
		return mi->latency;
	if (json_object_get(sc->measures, name) != NULL)
		return 0;
	if (strncmp(name, "counters.", 9) == 0 && sc_measure_name_ok(name))
		return 0;
	return -1;
}


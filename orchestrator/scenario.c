/*
 * scenario.c: check a scenario file and resolve it (see scenario.h and
 * docs/scenarios.md).
 *
 * jpos reads the text and keeps every value's line; this file walks the
 * tree once, in file order of sections (params first, since everything
 * after them may say "$name"), and builds a fresh resolved tree.  The walk
 * carries a chain of struct at (parent container, key or index) on the C
 * stack: it gives both the path of an error and, through jpos, its line.
 * Steps and checks are table driven: one struct field per key says its
 * kind, range and default; a hook per action checks what a table cannot
 * (the shapes of fault, wait's metric, join's index).  The first error
 * wins and stops the walk.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "entry.h"
#include "jpos.h"
#include "measures.h"
#include "scenario.h"
#include "xmalloc.h"

#define NAME_LEN	64		/* names of parameters and scenarios */
#define PARAM_STR_MAX	256		/* bounds what "$s" can multiply */
#define LABEL_MAX	1024
#define PEERS_MAX	1024
#define TIME_S_MAX	604800.0	/* a week */
#define TIME_MS_MAX	604800000ll
#define MSG_MAX		640

struct at {
	const struct at	*up;
	const json_t	*parent;	/* NULL: the root */
	const char	*key;		/* NULL: an element */
	size_t		 index;
	const char	*from;		/* "$name" the value came from, or NULL */
};

struct sc {
	const char	*file;
	struct jpos	*pos;
	char		*err;
	size_t		 errlen;
	bool		 failed;
	json_t		*decls;		/* name -> declaration (checked) */
	json_t		*params;	/* name -> resolved value */
	json_int_t	 npeers;	/* fleet.peers */
	json_int_t	 joins;		/* join steps seen so far */
	json_t		*knobs;		/* fleet.knobs, resolved */
	json_t		*measures;	/* wait measures so far: name -> true */
};

enum fkind {
	FK_INT, FK_NUM, FK_BOOL, FK_STR, FK_ENUM, FK_TYPE, FK_SEL, FK_START,
	FK_INDEX, FK_TARGET, FK_KNOBS, FK_GROUPS, FK_TRUE,
};

#define F_REQ	0x1			/* required */
#define F_NULL	0x2			/* absent: null */
#define F_ABOVE	0x4			/* FK_NUM: > min, not >= */

struct field {
	const char		*key;
	enum fkind		 kind;
	int			 flags;
	double			 min, max;	/* FK_INT, FK_NUM; FK_STR len */
	const char		*def;		/* JSON text, NULL: none */
	const char *const	*choices;	/* FK_ENUM */
};

struct action {
	const char		*name;
	const struct field	*fields;
	int			(*post)(struct sc *, const struct at *,
				    json_t *, json_t *);
};

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
static const char *const bindings[] = { "tcp", NULL };
static const char *const topologies[] = { "mesh", "ring", "star", NULL };
static const char *const untils[] = {
	"connected", "converged", "visible", "taken", "fetched", "metric", NULL
};
static const char *const ops[] = { "<", "<=", "==", "!=", ">=", ">", NULL };
static const char *const stats[] = {
	"p50", "p90", "p99", "p999", "max", "count", NULL
};
static const char *const levels[] = {
	"error", "warn", "info", "debug", NULL
};

/* peerd's flags and the ranges peerd/main.c accepts for them. */
static const char *const take_modes[] = { "lease", "quorum", NULL };

static const struct knob {
	const char	*name;
	long long	 min, max;	/* max -1: a log level, -2: a take mode */
} knobs[] = {
	{ "settle-ms", 0, 600000 },
	{ "take-retry-ms", 1, 60000 },
	{ "take-lease-ms", 1, 86400000 },
	{ "gossip-ms", 10, 3600000 },
	{ "tick-ms", 10, 3600000 },
	{ "silence-ms", 100, 86400000 },
	{ "ping-timeout-ms", 10, 3600000 },
	{ "fanout", 1, 1024 },
	{ "hops", 1, 64 },
	{ "max-age-s", 1, 86400 },
	{ "max-future-s", 1, 86400 },
	{ "rate-burst", 1, 4294967295ll },
	{ "rate", 1, 4294967295ll },
	{ "strikes", 1, 1000000 },
	{ "quarantine-s", 1, 86400 },
	{ "max-links", 1, 65536 },
	{ "max-clients", 1, 65536 },
	{ "max-frame", 1024, 64ll << 20 },
	{ "max-line", 256, 64ll << 20 },
	{ "max-entries", 1, 4294967295ll },
	{ "trace-events", 16, 1ll << 24 },
	{ "log-level", 0, -1 },
	{ "take-mode", 0, -2 },
	{ "test-hooks", 0, 1 },		/* 1: pass --test-hooks */
	{ "direct-io", 0, 1 },		/* 1: pass --direct-io */
};

static const struct measure {
	const char	*name;
	bool		 latency;
} measures[] = {
#define MEASURE_ROW(n, lat) { n, lat },
	MEASURES(MEASURE_ROW)
#undef MEASURE_ROW
};

#define MEASURES_TEXT_ALL "one listed in docs/report.md, counters.NAME " \
	"or an earlier wait step's measure"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

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

static int __attribute__((format(printf, 3, 4)))
fail(struct sc *sc, const struct at *at, const char *fmt, ...)
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
static void
real_text(double d, char *buf, size_t size)
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

static void
value_text(const json_t *v, char *buf, size_t size)
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
		real_text(json_real_value(v), buf, size);
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
static int
fail_got(struct sc *sc, const struct at *at, const json_t *v,
    const char *want)
{
	char got[80];

	value_text(v, got, sizeof(got));
	return fail(sc, at, "expected %s, got %s%s%s%s", want, got,
	    at->from ? " (from $" : "", at->from ? at->from : "",
	    at->from ? ")" : "");
}

static void
list_text(const char *const *list, bool quote, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; *list != NULL && n < size; list++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s",
		    n ? ", " : "", quote ? "\"" : "", *list, quote ? "\"" : "");
}

/* Names of the declared parameters, for "unknown" messages. */
static void
params_text(const struct sc *sc, char *buf, size_t size)
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

static bool
name_ok(const char *s, size_t n)
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
		params_text(sc, known, sizeof(known));
		fail(sc, at, "unknown parameter $%s (%s)", key, known);
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
 * fail().  Exactly "$name" takes the value with its type; in a longer
 * string "${name}" takes its text and "$$" is a '$'.
 */
static json_t *
subst(struct sc *sc, struct at *at, json_t *raw)
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
	if (s[0] == '$' && name_ok(s + 1, len - 1)) {
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
		    !name_ok(p + 2, (size_t)(close - p - 2))) {
			quote_text(s, len, got, sizeof(got));
			fail(sc, at, "expected \"$name\" alone, or ${name} or "
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
			value_text(v, num, sizeof(num));
			sbuf_put(&buf, &blen, &cap, num, strlen(num));
		}
		p = close;
	}
	v = json_stringn_nocheck(buf ? buf : "", blen);
	free(buf);
	return v;
}

/* obj[key] resolved, at filled in; NULL when absent or after fail(). */
static json_t *
get(struct sc *sc, const struct at *up, const json_t *obj, const char *key,
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
	return subst(sc, at, raw);
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
	return subst(sc, at, json_array_get(arr, i));
}

/* ---- typed values ---------------------------------------------------- */

static void
int_want(char *buf, size_t size, const char *what, json_int_t min,
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

static void
num_want(char *buf, size_t size, double min, double max, bool above)
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

static int
want_int(struct sc *sc, const struct at *at, const json_t *v, json_int_t min,
    json_int_t max, json_int_t *out)
{
	char want[80];

	if (json_is_integer(v) && json_integer_value(v) >= min &&
	    json_integer_value(v) <= max) {
		*out = json_integer_value(v);
		return 0;
	}
	int_want(want, sizeof(want), "an int", min, max);
	return fail_got(sc, at, v, want);
}

/* A number in [min, max], or (min, max] when above; min may be -inf. */
static int
want_num(struct sc *sc, const struct at *at, const json_t *v, double min,
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
	num_want(want, sizeof(want), min, max, above);
	return fail_got(sc, at, v, want);
}

static int
want_enum(struct sc *sc, const struct at *at, const json_t *v,
    const char *const *choices)
{
	char want[MSG_MAX / 2];
	const char *const *c;

	if (json_is_string(v))
		for (c = choices; *c != NULL; c++)
			if (strcmp(json_string_value(v), *c) == 0)
				return (int)(c - choices);
	snprintf(want, sizeof(want), "one of ");
	list_text(choices, true, want + 7, sizeof(want) - 7);
	return fail_got(sc, at, v, want);
}

static int
want_str(struct sc *sc, const struct at *at, const json_t *v, size_t max)
{
	char want[80];

	if (json_is_string(v) && json_string_length(v) > 0 &&
	    json_string_length(v) <= max)
		return 0;
	snprintf(want, sizeof(want), "a non-empty string of at most %zu "
	    "bytes", max);
	return fail_got(sc, at, v, want);
}

/* Check that obj has no key outside keys (and extra, if not NULL). */
static int
only_keys(struct sc *sc, const struct at *up, const json_t *obj,
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
		list_text(keys, false, want, sizeof(want));
		n = strlen(want);
		for (f = extra; f != NULL && f->key != NULL; f++)
			n += (size_t)snprintf(want + n, n < sizeof(want) ?
			    sizeof(want) - n : 0, "%s%s", n ? ", " : "",
			    f->key);
		return fail(sc, &at, "unknown key%s; expected one of %s",
		    what, want);
	}
	return 0;
}

/* ---- peers ----------------------------------------------------------- */

static int
want_index(struct sc *sc, const struct at *at, const json_t *v,
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
	return fail_got(sc, at, v, want);
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
		if (want_index(sc, &ea, v, bound, &idx) == -1) {
			json_decref(v);
			return -1;
		}
		json_decref(v);
		if (seen[idx])
			return fail(sc, &ea, "peer %lld is listed twice",
			    (long long)idx);
		seen[idx] = 1;
		json_array_append_new(out, json_integer(idx));
	}
	return 0;
}

static json_t *
want_sel(struct sc *sc, const struct at *at, const json_t *v,
    json_int_t bound)
{
	json_int_t idx;
	json_t *out;
	char *seen;
	int rc;

	if (json_is_string(v) && strcmp(json_string_value(v), "all") == 0)
		return json_string("all");
	if (json_is_integer(v)) {
		if (want_index(sc, at, v, bound, &idx) == -1)
			return NULL;
		return json_pack("[I]", idx);
	}
	if (!json_is_array(v) || json_array_size(v) == 0) {
		fail_got(sc, at, v, "a peer index, a list of them or \"all\"");
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

static json_t *
want_groups(struct sc *sc, const struct at *at, const json_t *v,
    json_int_t bound)
{
	struct at ga;
	json_t *out, *g, *og;
	char *seen;
	size_t i;

	if (!json_is_array(v) || json_array_size(v) < 2) {
		fail_got(sc, at, v, "a list of at least two groups of peer "
		    "indexes");
		return NULL;
	}
	out = json_array();
	seen = xcalloc((size_t)bound, 1);
	for (i = 0; i < json_array_size(v); i++) {
		ga = (struct at){ at, v, NULL, i, NULL };
		g = json_array_get(v, i);
		if (!json_is_array(g) || json_array_size(g) == 0) {
			fail_got(sc, &ga, g, "a non-empty list of peer indexes");
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

/* The knobs object v laid over a copy of base; NULL after fail(). */
static json_t *
want_knobs(struct sc *sc, const struct at *at, const json_t *v,
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
		fail_got(sc, at, v, "an object of peerd flags");
		return NULL;
	}
	out = base != NULL ? json_copy((json_t *)base) : json_object();
	json_object_foreach((json_t *)v, key, raw) {
		ka = (struct at){ at, v, key, 0, NULL };
		for (k = knobs; k < knobs + nitems(knobs); k++)
			if (strcmp(k->name, key) == 0)
				break;
		if (k == knobs + nitems(knobs)) {
			for (i = 0; i < nitems(knobs) && len < sizeof(names);
			    i++)
				len += (size_t)snprintf(names + len,
				    sizeof(names) - len, "%s%s", i ? ", " : "",
				    knobs[i].name);
			fail(sc, &ka, "unknown peerd flag; expected one of %s",
			    names);
			break;
		}
		if ((val = subst(sc, &ka, raw)) == NULL)
			break;
		if (k->max < 0) {
			if (want_enum(sc, &ka, val, k->max == -1 ? levels :
			    take_modes) >= 0)
				json_object_set(out, key, val);
		} else if (want_int(sc, &ka, val, k->min, k->max, &n) == 0)
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

static bool
measure_name_ok(const char *s)
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
static int
measure_kind(const struct sc *sc, const char *name)
{
	size_t i;

	for (i = 0; i < nitems(measures); i++)
		if (strcmp(measures[i].name, name) == 0)
			return measures[i].latency;
	if (json_object_get(sc->measures, name) != NULL)
		return 0;
	if (strncmp(name, "counters.", 9) == 0 && measure_name_ok(name))
		return 0;
	return -1;
}

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
			value_text(min, one, sizeof(one));
			n += (size_t)snprintf(want + n, size - n, " %s %s",
			    max != NULL ? "from" : ">=", one);
		}
		if (max != NULL) {
			value_text(max, one, sizeof(one));
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
				value_text(c, one, sizeof(one));
				if (n + strlen(one) + 8 >= size) {
					snprintf(want + n, size - n, ", ...");
					break;
				}
				n += (size_t)snprintf(want + n, size - n, "%s %s",
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
		fail_got(sc, at, spec, "an object with type and default");
		return NULL;
	}
	if (only_keys(sc, at, spec, param_keys, NULL, " in a parameter") == -1)
		return NULL;
	ta = (struct at){ at, spec, "type", 0, NULL };
	if ((v = json_object_get(spec, "type")) == NULL) {
		fail(sc, &ta, "missing (expected one of \"int\", \"number\", "
		    "\"bool\", \"string\")");
		return NULL;
	}
	if ((type = want_enum(sc, &ta, v, param_types)) < 0)
		return NULL;
	decl = json_pack("{s:i}", "$type", type);
	for (i = 0; i < 2; i++) {
		k = i == 0 ? "min" : "max";
		ka = (struct at){ at, spec, k, 0, NULL };
		if ((v = json_object_get(spec, k)) == NULL)
			continue;
		if (type > 1) {
			fail(sc, &ka, "min and max apply only to an int or a "
			    "number");
			goto bad;
		}
		if (type == 0 ? !json_is_integer(v) : !json_is_number(v)) {
			fail_got(sc, &ka, v, type_want(type));
			goto bad;
		}
		json_object_set(decl, k, v);
	}
	if (json_object_get(decl, "min") != NULL &&
	    json_object_get(decl, "max") != NULL &&
	    json_number_value(json_object_get(decl, "min")) >
	    json_number_value(json_object_get(decl, "max"))) {
		ka = (struct at){ at, spec, "max", 0, NULL };
		fail_got(sc, &ka, json_object_get(decl, "max"),
		    "a max >= min");
		goto bad;
	}
	ka = (struct at){ at, spec, "choices", 0, NULL };
	if ((v = json_object_get(spec, "choices")) != NULL) {
		if (type == 2) {
			fail(sc, &ka, "choices do not apply to a bool");
			goto bad;
		}
		if (!json_is_array(v) || json_array_size(v) == 0) {
			fail_got(sc, &ka, v, "a non-empty list");
			goto bad;
		}
		json_array_foreach(v, i, c) {
			ta = (struct at){ &ka, v, NULL, i, NULL };
			if ((val = param_fit(decl, c, want, sizeof(want),
			    &typeerr)) == NULL) {
				fail_got(sc, &ta, c, want);
				goto bad;
			}
			json_decref(val);
		}
		json_object_set(decl, "choices", v);
	}
	ka = (struct at){ at, spec, "help", 0, NULL };
	if ((v = json_object_get(spec, "help")) != NULL &&
	    !json_is_string(v)) {
		fail_got(sc, &ka, v, "a string");
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
		return fail_got(sc, &pa, raw, "an object of parameters");
	json_object_foreach(raw, name, spec) {
		na = (struct at){ &pa, raw, name, 0, NULL };
		if (!name_ok(name, strlen(name)))
			return fail(sc, &na, "expected a parameter name (a "
			    "letter or '_', then letters, digits or '_', at "
			    "most %d)", NAME_LEN);
		if ((decl = param_decl(sc, &na, spec)) == NULL)
			return -1;
		json_object_set_new(sc->decls, name, decl);
		da = (struct at){ &na, spec, "default", 0, NULL };
		if ((v = json_object_get(spec, "default")) == NULL)
			return fail(sc, &da, "missing (expected %s)",
			    type_want((int)json_integer_value(
			    json_object_get(decl, "$type"))));
		if ((val = param_fit(decl, v, want, sizeof(want),
		    &typeerr)) == NULL)
			return fail_got(sc, &da, v, want);
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
		params_text(sc, known, sizeof(known));
		snprintf(sc->err, sc->errlen, "--set %.80s: no such parameter "
		    "(%s)", set, known);
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

/* ---- fields of steps and checks -------------------------------------- */

static const struct field common_fields[] = {
	{ "action", FK_STR, F_REQ, 0, 0, NULL, NULL },
	{ "name", FK_STR, 0, 0, LABEL_MAX, NULL, NULL },
	{ "at_ms", FK_INT, F_NULL, 0, (double)TIME_MS_MAX, NULL, NULL },
	{ "timeout_s", FK_NUM, F_ABOVE, 0, TIME_S_MAX, "60.0", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const char *const common_keys[] = {
	"action", "name", "at_ms", "timeout_s", NULL
};

static const struct field start_fields[] = {
	{ "peers", FK_START, 0, 0, 0, "\"all\"", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field peer_fields[] = {
	{ "peer", FK_SEL, F_REQ, 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field join_fields[] = {
	{ "knobs", FK_KNOBS, 0, 0, 0, "{}", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field connect_fields[] = {
	{ "from", FK_INDEX, F_REQ, 0, 0, NULL, NULL },
	{ "to", FK_INDEX, F_REQ, 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field write_fields[] = {
	{ "peer", FK_SEL, F_REQ, 0, 0, NULL, NULL },
	{ "count", FK_INT, F_REQ, 0, 1e9, NULL, NULL },
	{ "rate", FK_NUM, 0, 0, 1e9, "0.0", NULL },
	{ "type", FK_TYPE, 0, 0, 0, "\"task#v1\"", NULL },
	{ "payload_bytes", FK_INT, 0, 0, 65536, "64", NULL },
	{ "lease_ms", FK_INT, 0, 1, 2147483647.0, "3600000", NULL },
	{ "wait", FK_BOOL, 0, 0, 0, "true", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field take_fields[] = {
	{ "peer", FK_SEL, F_REQ, 0, 0, NULL, NULL },
	{ "workers", FK_INT, 0, 1, 1024, "1", NULL },
	{ "type", FK_TYPE, 0, 0, 0, "\"task#v1\"", NULL },
	{ "complete", FK_BOOL, 0, 0, 0, "true", NULL },
	{ "count", FK_INT, F_NULL, 0, 1e9, NULL, NULL },
	{ "timeout_ms", FK_INT, 0, 0, 3600000, "1000", NULL },
	{ "wait", FK_BOOL, 0, 0, 0, "true", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field fault_fields[] = {
	{ "peer", FK_SEL, 0, 0, 0, "\"all\"", NULL },
	{ "drop", FK_NUM, 0, 0, 1, NULL, NULL },
	{ "delay_ms", FK_INT, 0, 0, 3600000, NULL, NULL },
	{ "jitter_ms", FK_INT, 0, 0, 3600000, NULL, NULL },
	{ "target", FK_TARGET, 0, 0, 0, NULL, NULL },
	{ "partition", FK_GROUPS, 0, 0, 0, NULL, NULL },
	{ "clear", FK_TRUE, 0, 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field wait_fields[] = {
	{ "until", FK_ENUM, F_REQ, 0, 0, NULL, untils },
	{ "measure", FK_STR, F_NULL, 0, NAME_LEN, NULL, NULL },
	{ "metric", FK_STR, 0, 0, NAME_LEN, NULL, NULL },
	{ "op", FK_ENUM, 0, 0, 0, NULL, ops },
	{ "value", FK_NUM, 0, -INFINITY, INFINITY, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field publish_fields[] = {
	{ "peer", FK_INDEX, 0, 0, 0, "0", NULL },
	{ "mebibytes", FK_NUM, F_REQ | F_ABOVE, 0, 65536, NULL, NULL },
	{ "piece_kib", FK_INT, 0, 1, 4096, "1024", NULL },
	{ "seed", FK_INT, 0, 0, 4294967295.0, "1", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field fetch_fields[] = {
	{ "peer", FK_SEL, 0, 0, 0, "\"all\"", NULL },
	{ "wait", FK_BOOL, 0, 0, 0, "true", NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field sleep_fields[] = {
	{ "ms", FK_INT, F_REQ, 0, (double)TIME_MS_MAX, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct field mark_fields[] = {
	{ "label", FK_STR, F_REQ, 0, LABEL_MAX, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
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
		int_want(buf, size, "an int", (json_int_t)f->min,
		    (json_int_t)f->max);
		break;
	case FK_NUM:
		num_want(buf, size, f->min, f->max, f->flags & F_ABOVE);
		break;
	case FK_BOOL:
		snprintf(buf, size, "true or false");
		break;
	case FK_STR:
		snprintf(buf, size, "a non-empty string");
		break;
	case FK_ENUM:
		snprintf(buf, size, "one of ");
		list_text(f->choices, true, buf + 7, size - 7);
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
		if (want_int(sc, at, v, (json_int_t)f->min, (json_int_t)f->max,
		    &n) == -1)
			return NULL;
		return json_integer(n);
	case FK_NUM:
		if (want_num(sc, at, v, f->min, f->max, f->flags & F_ABOVE,
		    &d) == -1)
			return NULL;
		return json_real(d);
	case FK_BOOL:
		if (json_is_boolean(v))
			return json_incref(v);
		break;
	case FK_STR:
		if (want_str(sc, at, v, f->max > 0 ? (size_t)f->max :
		    LABEL_MAX) == -1)
			return NULL;
		return json_incref(v);
	case FK_ENUM:
		if ((i = want_enum(sc, at, v, f->choices)) < 0)
			return NULL;
		return json_incref(v);
	case FK_TYPE:
		if (json_is_string(v) && entry_type_valid(json_string_value(v),
		    json_string_length(v)))
			return json_incref(v);
		break;
	case FK_SEL:
		return want_sel(sc, at, v, peers_now(sc));
	case FK_START:
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), "all") == 0) {
			json_t *all = json_array();

			for (n = 0; n < sc->npeers; n++)
				json_array_append_new(all, json_integer(n));
			return all;
		}
		return want_sel(sc, at, v, sc->npeers);
	case FK_INDEX:
		if (want_index(sc, at, v, peers_now(sc), &n) == -1)
			return NULL;
		return json_integer(n);
	case FK_TARGET:
		if (json_is_string(v) && strcmp(json_string_value(v), "*") == 0)
			return json_incref(v);
		if (json_is_integer(v)) {
			if (want_index(sc, at, v, peers_now(sc), &n) == -1)
				return NULL;
			return json_integer(n);
		}
		break;
	case FK_KNOBS:
		return want_knobs(sc, at, v, sc->knobs);
	case FK_GROUPS:
		return want_groups(sc, at, v, peers_now(sc));
	case FK_TRUE:
		if (json_is_true(v))
			return json_incref(v);
		break;
	}
	field_want(sc, f, want, sizeof(want));
	fail_got(sc, at, v, want);
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
		v = get(sc, up, obj, f->key, &at);
		if (sc->failed)
			return -1;
		if (v == NULL) {
			if (f->flags & F_REQ) {
				field_want(sc, f, want, sizeof(want));
				return fail(sc, &at, "missing (expected %s)",
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
		return fail(sc, &ta, "expected a peer other than from (%lld)",
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
				return fail(sc, &ka, "%s cannot be combined "
				    "with %s", *k, shape);
		}
		ka = (struct at){ at, raw, "clear", 0, NULL };
		if (*shape == 'p' && json_object_get(out, "clear") != NULL)
			return fail(sc, &ka, "clear cannot be combined with "
			    "partition");
		ka = (struct at){ at, raw, "peer", 0, NULL };
		if (*shape == 'p' && json_object_get(raw, "peer") != NULL)
			return fail(sc, &ka, "a partition names its peers in "
			    "its groups: remove peer");
		if (*shape == 'p')
			json_object_del(out, "peer");
		return 0;
	}
	if (json_object_get(out, "drop") == NULL &&
	    json_object_get(out, "delay_ms") == NULL &&
	    json_object_get(out, "jitter_ms") == NULL)
		return fail(sc, at, "a fault needs drop, delay_ms or "
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
			return fail(sc, &ka, "%s applies only with until "
			    "\"metric\"", *k);
		if (strcmp(until, "metric") == 0 &&
		    json_object_get(out, *k) == NULL) {
			snprintf(want, sizeof(want), "%s", *k == mkeys[0] ?
			    "a measure name" : *k == mkeys[1] ?
			    "one of \"<\", \"<=\", \"==\", \"!=\", \">=\", "
			    "\">\"" : "a number");
			return fail(sc, &ka, "missing (expected %s: until is "
			    "\"metric\")", want);
		}
	}
	ka = (struct at){ at, raw, "metric", 0, NULL };
	if ((m = json_object_get(out, "metric")) != NULL &&
	    measure_kind(sc, json_string_value(m)) != 0) {
		ka.from = NULL;
		return fail_got(sc, &ka, m, measure_kind(sc,
		    json_string_value(m)) == 1 ? "a measure that is not a "
		    "latency" : "a measure name (" MEASURES_TEXT_ALL ")");
	}
	ka = (struct at){ at, raw, "measure", 0, NULL };
	m = json_object_get(out, "measure");
	if (json_is_string(m)) {
		name = json_string_value(m);
		if (!measure_name_ok(name))
			return fail_got(sc, &ka, m, "a measure name "
			    "\"family.name\" of [a-z0-9_]");
		if (measure_kind(sc, name) != -1 ||
		    strncmp(name, "counters.", 9) == 0)
			return fail_got(sc, &ka, m, "a measure name not yet "
			    "in use");
		json_object_set_new(sc->measures, name, json_true());
	}
	return 0;
}

static const struct action actions[] = {
	{ "start", start_fields, NULL },
	{ "stop", peer_fields, NULL },
	{ "kill", peer_fields, NULL },
	{ "pause", peer_fields, NULL },
	{ "resume", peer_fields, NULL },
	{ "restart", peer_fields, NULL },
	{ "join", join_fields, post_join },
	{ "connect", connect_fields, post_connect },
	{ "write", write_fields, NULL },
	{ "take", take_fields, NULL },
	{ "fault", fault_fields, post_fault },
	{ "wait", wait_fields, post_wait },
	{ "sleep", sleep_fields, NULL },
	{ "mark", mark_fields, NULL },
	{ "publish", publish_fields, NULL },
	{ "fetch", fetch_fields, NULL },
};

/* ---- steps and checks ------------------------------------------------ */

/* A name not used before in seen (name -> index); kind for messages. */
static int
unique_name(struct sc *sc, const struct at *at, json_t *seen,
    const char *name, size_t index, const char *kind)
{
	json_t *prev;

	if ((prev = json_object_get(seen, name)) != NULL)
		return fail(sc, at, "the %s name \"%.80s\" is already used by "
		    "%ss[%lld]", kind, name, kind,
		    (long long)json_integer_value(prev));
	json_object_set_new(seen, name, json_integer((json_int_t)index));
	return 0;
}

static json_t *
step(struct sc *sc, const struct at *at, json_t *raw, size_t index,
    json_t *names)
{
	char what[48], want[MSG_MAX / 2], dflt[80];
	const struct action *a;
	const char *names_list[nitems(actions) + 1];
	struct at aa;
	json_t *out, *v;
	size_t i;

	if (!json_is_object(raw)) {
		fail_got(sc, at, raw, "a step object");
		return NULL;
	}
	if ((v = get(sc, at, raw, "action", &aa)) == NULL) {
		if (!sc->failed)
			fail(sc, &aa, "missing (expected one of start, stop, "
			    "kill, pause, resume, restart, join, connect, "
			    "write, take, fault, wait, sleep, mark)");
		return NULL;
	}
	for (i = 0; i < nitems(actions); i++)
		names_list[i] = actions[i].name;
	names_list[i] = NULL;
	for (a = actions; a < actions + nitems(actions); a++)
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), a->name) == 0)
			break;
	if (a == actions + nitems(actions)) {
		snprintf(want, sizeof(want), "an action: ");
		list_text(names_list, false, want + 11, sizeof(want) - 11);
		fail_got(sc, &aa, v, want);
		json_decref(v);
		return NULL;
	}
	json_decref(v);
	snprintf(what, sizeof(what), " for a %s step", a->name);
	if (only_keys(sc, at, raw, common_keys, a->fields, what) == -1)
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

static int
steps(struct sc *sc, const struct at *root, const json_t *top, json_t *res)
{
	struct at sa, ea, ma;
	json_t *raw, *out, *st, *names, *at_ms;
	json_int_t last = -1;
	size_t i, lasti = 0;

	sa = (struct at){ root, top, "steps", 0, NULL };
	if ((raw = json_object_get(top, "steps")) == NULL)
		return fail(sc, &sa, "missing (expected a non-empty array of "
		    "steps)");
	if (!json_is_array(raw) || json_array_size(raw) == 0)
		return fail_got(sc, &sa, raw, "a non-empty array of steps");
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
				fail(sc, &ma, "expected at_ms >= %lld (the "
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
		fail_got(sc, at, raw, "a check object");
		return NULL;
	}
	if (only_keys(sc, at, raw, (const char *const []){ NULL },
	    check_fields, " for a check") == -1)
		return NULL;
	out = json_object();
	if (fields(sc, at, raw, check_fields, out) == -1)
		goto bad;
	metric = json_string_value(json_object_get(out, "metric"));
	ka = (struct at){ at, raw, "metric", 0, NULL };
	if ((kind = measure_kind(sc, metric)) == -1) {
		fail_got(sc, &ka, json_object_get(out, "metric"),
		    "a measure name (" MEASURES_TEXT_ALL ")");
		goto bad;
	}
	ka = (struct at){ at, raw, "stat", 0, NULL };
	if (kind == 0 && json_object_get(out, "stat") != NULL) {
		fail(sc, &ka, "stat applies only to a latency measure, and "
		    "%s is not one", metric);
		goto bad;
	}
	res = json_object();
	if (json_object_get(out, "name") == NULL) {
		real_text(json_real_value(json_object_get(out, "bound")),
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

static int
checks(struct sc *sc, const struct at *root, const json_t *top, json_t *res)
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
		return fail_got(sc, &ca, raw, "an array of checks");
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

/* ---- the fleet and the top level ------------------------------------- */

static int
topology(struct sc *sc, const struct at *at, json_t *v, json_t *fleet)
{
	struct at ka;
	json_t *k;
	json_int_t n;

	if (json_is_string(v)) {
		if (want_enum(sc, at, v, topologies) < 0)
			return -1;
		json_object_set(fleet, "topology", v);
		return 0;
	}
	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    (k = json_object_get(v, "random")) == NULL)
		return fail_got(sc, at, v, "\"mesh\", \"ring\", \"star\" or "
		    "{\"random\": K}");
	ka = (struct at){ at, v, "random", 0, NULL };
	if ((k = subst(sc, &ka, k)) == NULL)
		return -1;
	if (want_int(sc, &ka, k, 1, PEERS_MAX, &n) == -1) {
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
		return fail(sc, &fa, "missing (expected an object with peers "
		    "and optionally binding, topology, knobs)");
	if (!json_is_object(raw))
		return fail_got(sc, &fa, raw, "an object with peers and "
		    "optionally binding, topology, knobs");
	if (only_keys(sc, &fa, raw, fleet_keys, NULL, " in fleet") == -1)
		return -1;
	out = json_object();
	json_object_set_new(res, "fleet", out);
	if ((v = get(sc, &fa, raw, "peers", &ka)) == NULL)
		return sc->failed ? -1 : fail(sc, &ka, "missing (expected an "
		    "int from 1 to %d)", PEERS_MAX);
	if (want_int(sc, &ka, v, 1, PEERS_MAX, &n) == -1)
		goto bad;
	json_decref(v);
	sc->npeers = n;
	json_object_set_new(out, "peers", json_integer(n));
	if ((v = get(sc, &fa, raw, "binding", &ka)) == NULL) {
		if (sc->failed)
			return -1;
		v = json_string("tcp");
	}
	if (want_enum(sc, &ka, v, bindings) < 0)
		goto bad;
	json_object_set_new(out, "binding", v);
	if ((v = get(sc, &fa, raw, "topology", &ka)) == NULL) {
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
	else if ((k = want_knobs(sc, &ka, v, NULL)) == NULL)
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
		fail_got(sc, &root, top, "an object");
		return NULL;
	}
	if (only_keys(sc, &root, top, top_keys, NULL, "") == -1)
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

	if ((v = get(sc, &root, top, "name", &ka)) == NULL) {
		if (!sc->failed)
			fail(sc, &ka, "missing (expected a name of "
			    "[a-z0-9_-], at most %d)", NAME_LEN);
		goto bad;
	}
	json_object_set_new(res, "name", v);
	if (!json_is_string(v) || !scenario_name_ok(json_string_value(v),
	    json_string_length(v))) {
		fail_got(sc, &ka, v, "a name of [a-z0-9_-], at most 64");
		goto bad;
	}
	if ((v = get(sc, &root, top, "description", &ka)) == NULL) {
		if (!sc->failed)
			fail(sc, &ka, "missing (expected a string saying what "
			    "the scenario measures and why)");
		goto bad;
	}
	json_object_set_new(res, "description", v);
	if (!json_is_string(v)) {
		fail_got(sc, &ka, v, "a string");
		goto bad;
	}
	json_object_set(res, "params", sc->params);

	d = 300;
	if ((v = get(sc, &root, top, "timeout_s", &ka)) != NULL) {
		want_num(sc, &ka, v, 0, TIME_S_MAX, true, &d);
		json_decref(v);
	}
	if (sc->failed)
		goto bad;
	json_object_set_new(res, "timeout_s", json_real(d));
	n = 1000;
	if ((v = get(sc, &root, top, "sample_ms", &ka)) != NULL) {
		want_int(sc, &ka, v, 0, 3600000, &n);
		json_decref(v);
	}
	if (sc->failed)
		goto bad;
	json_object_set_new(res, "sample_ms", json_integer(n));

	if (fleet(sc, &root, top, res) == -1 ||
	    steps(sc, &root, top, res) == -1 ||
	    checks(sc, &root, top, res) == -1)
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

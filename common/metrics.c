/*
 * metrics.c: reset, sum and JSON for peerd's counters and histograms (see
 * metrics.h).  Everything here is generated from the X-macro lists; the
 * slot names of the per-kind and per-reason arrays come from the same lists
 * frame.h uses for its enums, so this file does not link frame.c.
 */
#include <sys/resource.h>

#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "xmalloc.h"

/* Slot names, NULL for slots that are never counted. */
static const char *const kind_names[FRAME_KIND_MAX] = {
#define KIND_NAME(e, v, n) [v] = n,
	FRAME_KINDS(KIND_NAME)
#undef KIND_NAME
};

static const char *const ferr_names[FRAME_ERR_MAX] = {
#define FERR_NAME(e, n) [FRAME_##e] = FRAME_##e == FRAME_OK ? NULL : n,
	FRAME_ERRORS(FERR_NAME)
#undef FERR_NAME
};

static const char *const reject_names[METRICS_REJECT_MAX] = {
#define REJECT_NAME(e, n) [METRICS_REJECT_##e] = n,
	METRICS_REJECTS(REJECT_NAME)
#undef REJECT_NAME
};

static const char *const limit_names[METRICS_LIMIT_MAX] = {
#define LIMIT_NAME(e, n) [METRICS_LIMIT_##e] = n,
	METRICS_LIMITS(LIMIT_NAME)
#undef LIMIT_NAME
};

static const char *const tlsfail_names[METRICS_TLS_FAIL_MAX] = {
#define TLSFAIL_NAME(e, n) [METRICS_TLS_##e] = n,
	METRICS_TLS_FAILS(TLSFAIL_NAME)
#undef TLSFAIL_NAME
};

static const char *const dtlsfail_names[METRICS_DTLS_FAIL_MAX] = {
#define DTLSFAIL_NAME(e, n) [METRICS_DTLS_##e] = n,
	METRICS_DTLS_FAILS(DTLSFAIL_NAME)
#undef DTLSFAIL_NAME
};

static const char *const handshake_names[METRICS_HANDSHAKE_MAX] = {
#define HANDSHAKE_NAME(e, n) [METRICS_HANDSHAKE_##e] = n,
	METRICS_HANDSHAKES(HANDSHAKE_NAME)
#undef HANDSHAKE_NAME
};

void
metrics_reset(struct metrics *m)
{
#define RESET(f, n) m->f = 0;
	METRICS_COUNTERS(RESET)
#undef RESET
#define RESET_ARRAY(f, n, size, names) memset(m->f, 0, sizeof(m->f));
	METRICS_ARRAYS(RESET_ARRAY)
#undef RESET_ARRAY
}

void
metrics_add(struct metrics *dst, const struct metrics *src)
{
#define ADD(f, n) dst->f += src->f;
	METRICS_COUNTERS(ADD)
#undef ADD
#define ADD_ARRAY(f, n, size, names)					\
	for (size_t i = 0; i < (size_t)(size); i++)			\
		dst->f[i] += src->f[i];
	METRICS_ARRAYS(ADD_ARRAY)
#undef ADD_ARRAY
}

static json_t *
array_to_json(const uint64_t *v, size_t n, const char *const *names)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++)
		if (names[i] != NULL)
			json_object_set_new(o, names[i],
			    json_integer((json_int_t)v[i]));
	return o;
}

bool
metrics_wants(const json_t *only, const char *sec, const char *key)
{
	size_t i, sl = strlen(sec), kl = strlen(key);
	json_t *v;

	if (only == NULL)
		return true;
	json_array_foreach(only, i, v) {
		const char *n = json_string_value(v);
		size_t nl;

		if (n == NULL || strncmp(n, sec, sl) != 0)
			continue;
		if (n[sl] == '\0')
			return true;		/* the whole section */
		if (n[sl] != '.')
			continue;
		n += sl + 1;
		nl = strlen(n);
		/* n names the key, a dotted prefix of it, or a name inside it. */
		if (strncmp(key, n, nl < kl ? nl : kl) == 0 && (nl == kl ||
		    (nl < kl && key[nl] == '.') || (nl > kl && n[kl] == '.')))
			return true;
	}
	return false;
}

/* Some name in only (NULL: all) is sec or a name inside it. */
static bool
section_wanted(const json_t *only, const char *sec)
{
	size_t i, sl = strlen(sec);
	json_t *v;

	if (only == NULL)
		return true;
	json_array_foreach(only, i, v) {
		const char *n = json_string_value(v);

		if (n != NULL && strncmp(n, sec, sl) == 0 && (n[sl] == '\0' ||
		    n[sl] == '.'))
			return true;
	}
	return false;
}

void
metrics_keep(json_t *o, const json_t *only, const char *sec)
{
	const char *key;
	json_t *v;
	void *tmp;

	if (only == NULL)
		return;
	json_object_foreach_safe(o, tmp, key, v) {
		(void)v;
		if (!metrics_wants(only, sec, key))
			json_object_del(o, key);
	}
}

const uint8_t *
metrics_mask(struct metrics_mask *mk, const json_t *only)
{
	if (only == NULL)
		return NULL;
	if (mk->want != NULL && json_equal(mk->only, only))
		return mk->want;
	json_decref(mk->only);
	mk->only = json_deep_copy(only);
	if (mk->want == NULL)
		mk->want = xcalloc(mk->n ? mk->n : 1, 1);
	for (size_t i = 0; i < mk->n; i++)
		mk->want[i] = metrics_wants(only, mk->sec, mk->keys[i]);
	mk->builds++;
	return mk->want;
}

/* The counters' names in METRICS_COUNTERS then METRICS_ARRAYS order. */
static const char *const counter_names[] = {
#define NAME(f, n) n,
	METRICS_COUNTERS(NAME)
#undef NAME
#define NAME_ARRAY(f, n, size, names) n,
	METRICS_ARRAYS(NAME_ARRAY)
#undef NAME_ARRAY
};

static const char *const hist_names[] = {
#define NAME(f, n) n,
	METRICS_HISTS(NAME)
#undef NAME
};

/* The masks of the last only asked for (an engine asks the same each time). */
struct metrics_mask metrics_counters_mask = { NULL, "counters", counter_names,
    sizeof(counter_names) / sizeof(counter_names[0]), NULL, 0 };
static struct metrics_mask hists_mask = { NULL, "latency", hist_names,
    sizeof(hist_names) / sizeof(hist_names[0]), NULL, 0 };

/* The counters only names (NULL: all), built only where named. */
static json_t *
counters_json(const struct metrics *m, const json_t *only)
{
	json_t *o = json_object();
	const uint8_t *w = metrics_mask(&metrics_counters_mask, only);
	size_t i = 0;

#define TO_JSON(f, n)							\
	if (w == NULL || w[i])						\
		json_object_set_new(o, n, json_integer((json_int_t)m->f)); \
	i++;
	METRICS_COUNTERS(TO_JSON)
#undef TO_JSON
#define TO_JSON_ARRAY(f, n, size, names)				\
	if (w == NULL || w[i])						\
		json_object_set_new(o, n, array_to_json(m->f,		\
		    (size_t)(size), names##_names));			\
	i++;
	METRICS_ARRAYS(TO_JSON_ARRAY)
#undef TO_JSON_ARRAY
	return o;
}

json_t *
metrics_to_json(const struct metrics *m)
{
	return counters_json(m, NULL);
}

/* A non-negative JSON integer. 0 or -1. */
static int
uint_from_json(const json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int
array_from_json(const json_t *o, uint64_t *v, size_t n,
    const char *const *names)
{
	if (!json_is_object(o))
		return -1;
	for (size_t i = 0; i < n; i++) {
		v[i] = 0;
		if (names[i] != NULL &&
		    uint_from_json(json_object_get(o, names[i]), &v[i]) == -1)
			return -1;
	}
	return 0;
}

int
metrics_from_json(struct metrics *m, const json_t *j)
{
	struct metrics tmp;

	if (!json_is_object(j))
		return -1;
#define FROM_JSON(f, n)							\
	if (uint_from_json(json_object_get(j, n), &tmp.f) == -1)	\
		return -1;
	METRICS_COUNTERS(FROM_JSON)
#undef FROM_JSON
#define FROM_JSON_ARRAY(f, n, size, names)				\
	if (array_from_json(json_object_get(j, n), tmp.f, (size_t)(size), \
	    names##_names) == -1)					\
		return -1;
	METRICS_ARRAYS(FROM_JSON_ARRAY)
#undef FROM_JSON_ARRAY
	*m = tmp;
	return 0;
}

/* ---- histograms -------------------------------------------------------- */

void
metrics_hists_init(struct metrics_hists *h)
{
#define INIT(f, n) hist_init(&h->f);
	METRICS_HISTS(INIT)
#undef INIT
}

void
metrics_hists_merge(struct metrics_hists *dst, const struct metrics_hists *src)
{
#define MERGE(f, n) hist_merge(&dst->f, &src->f);
	METRICS_HISTS(MERGE)
#undef MERGE
}

/* The histograms only names (NULL: all), built only where named. */
static json_t *
hists_json(const struct metrics_hists *h, const json_t *only)
{
	json_t *o = json_object();
	const uint8_t *w = metrics_mask(&hists_mask, only);
	size_t i = 0;

#define TO_JSON(f, n)							\
	if (w == NULL || w[i])						\
		json_object_set_new(o, n, hist_to_json(&h->f));		\
	i++;
	METRICS_HISTS(TO_JSON)
#undef TO_JSON
	return o;
}

json_t *
metrics_hists_to_json(const struct metrics_hists *h)
{
	return hists_json(h, NULL);
}

int
metrics_hists_from_json(struct metrics_hists *h, const json_t *j)
{
	/* ~80 KiB: on the heap, so that a refusal leaves h untouched. */
	struct metrics_hists *tmp;

	if (!json_is_object(j))
		return -1;
	tmp = xmalloc(sizeof(*tmp));
#define FROM_JSON(f, n)							\
	if (hist_from_json(&tmp->f, json_object_get(j, n)) == -1) {	\
		free(tmp);						\
		return -1;						\
	}
	METRICS_HISTS(FROM_JSON)
#undef FROM_JSON
	memcpy(h, tmp, sizeof(*h));
	free(tmp);
	return 0;
}

/* ---- process ------------------------------------------------------------ */

json_t *
metrics_rusage_to_json(const struct rusage *ru)
{
	double user = (double)ru->ru_utime.tv_sec +
	    (double)ru->ru_utime.tv_usec / 1e6;
	double sys = (double)ru->ru_stime.tv_sec +
	    (double)ru->ru_stime.tv_usec / 1e6;

	return json_pack("{s:f, s:f, s:f, s:I, s:I, s:I}", "cpu_s",
	    user + sys, "cpu_user_s", user, "cpu_sys_s", sys, "max_rss_kib",
	    (json_int_t)ru->ru_maxrss, "wakeups", (json_int_t)ru->ru_nvcsw,
	    "preemptions", (json_int_t)ru->ru_nivcsw);
}

json_t *
metrics_rusage_json(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		memset(&ru, 0, sizeof(ru));
	return metrics_rusage_to_json(&ru);
}

void
metrics_put_section(json_t *o, const char *sec, json_t *v, const json_t *only)
{
	if (only != NULL && json_object_size(v) == 0)
		json_decref(v);		/* nothing in it asked for */
	else
		json_object_set_new(o, sec, v);
}

void
metrics_set_section(json_t *o, const char *sec, json_t *v, const json_t *only)
{
	metrics_keep(v, only, sec);
	if (only != NULL && json_object_size(v) == 0)
		json_decref(v);		/* nothing in it asked for */
	else
		json_object_set_new(o, sec, v);
}

json_t *
metrics_snapshot_json(const struct metrics *m,
    const struct metrics_hists *hists, const json_t *only)
{
	json_t *o = json_object();

	/* A section none of only names is not built (a sample's answer). */
	if (section_wanted(only, "counters"))
		metrics_put_section(o, "counters", counters_json(m, only),
		    only);
	if (hists != NULL && section_wanted(only, "latency"))
		metrics_put_section(o, "latency", hists_json(hists, only),
		    only);
	if (section_wanted(only, "process"))
		metrics_set_section(o, "process", metrics_rusage_json(), only);
	return o;
}

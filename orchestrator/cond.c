/*
 * cond.c: the wait conditions, one function per row of CONDITIONS()
 * (action.h), each cond_NAME(): 1 holds, 0 not yet (why says what is
 * missing), -1 the run stops.  cond_eval() picks the step's.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "action.h"
#include "engine.h"
#include "fleet.h"

/* The index of the running peer whose PeerId is id, or -1. */
static int
live_index(struct run *r, const char *id)
{
	for (int i = 0; i < r->fleet.npeers; i++)
		if (r->fleet.peers[i]->state == PEER_RUNNING && id != NULL &&
		    strcmp(r->fleet.peers[i]->peer_id, id) == 0)
			return i;
	return -1;
}

/*
 * Whether a engine_call_each answer counts: p still running, and an answer
 * (else err says who did not answer cmd).
 */
static bool
answered(const struct peer *p, const json_t *res, const char *cmd,
    char *err, size_t len)
{
	if (p->state != PEER_RUNNING)
		return false;
	if (res == NULL) {
		snprintf(err, len, "%s did not answer %s", p->name, cmd);
		return false;
	}
	return true;
}

/* cond_connected's look at every peer's links, filled as answers come. */
struct overlay {
	int		 n, live;
	uint8_t		*adj;
	int		*links, *want;
	bool		*answered;
	char		 err[256];
};

static void
overlay_one(struct run *r, int i, struct peer *p, json_t *res, void *arg)
{
	struct overlay *o = arg;
	json_int_t want;
	json_t *m;
	size_t k;

	if (!answered(p, res, "peers", o->err, sizeof(o->err)))
		return;
	o->answered[i] = true;
	json_array_foreach(json_object_get(res, "members"), k, m) {
		int j = live_index(r, json_string_value(
		    json_object_get(m, "peer_id")));

		if (j < 0 || j == i || !json_is_true(json_object_get(m, "link")))
			continue;
		o->adj[(size_t)i * (size_t)o->n + (size_t)j] = 1;
		o->adj[(size_t)j * (size_t)o->n + (size_t)i] = 1;
		o->links[i]++;
	}
	want = json_integer_value(json_object_get(json_object_get(res, "view"),
	    "active_max"));
	if (want <= 0 || want > o->live - 1)
		want = o->live - 1;
	o->want[i] = (int)want;
}

/*
 * Partial views (docs/scenarios.md "connected"): every running peer has
 * at least min(its --active, live - 1) links to running peers, and the
 * overlay (the union of the peers' links) is one connected graph.  A full
 * mesh is the case live - 1 <= --active.  Every peer is asked at once
 * (engine_call_each).
 */
static int
cond_connected(struct run *r, const struct step_wait *w, uint64_t deadline,
    char *why, size_t len)
{
	int n = r->fleet.npeers, reached = 0, *queue, qh = 0, qt = 0;
	struct overlay o;
	uint8_t *seen;
	int rc = 0;

	(void)w;
	(void)deadline;
	memset(&o, 0, sizeof(o));
	o.n = n;
	o.adj = calloc((size_t)n * (size_t)n, 1);
	o.links = calloc((size_t)n, sizeof(*o.links));
	o.want = calloc((size_t)n, sizeof(*o.want));
	o.answered = calloc((size_t)n, sizeof(*o.answered));
	seen = calloc((size_t)n, 1);
	queue = calloc((size_t)n, sizeof(*queue));
	if (o.adj == NULL || o.links == NULL || o.want == NULL ||
	    o.answered == NULL || seen == NULL || queue == NULL) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		o.live += r->fleet.peers[i]->state == PEER_RUNNING;
	engine_call_each(r, "peers", NULL, CALL_MS, overlay_one, &o);
	for (int i = 0; i < n; i++) {
		struct peer *p = r->fleet.peers[i];

		if (p->state != PEER_RUNNING)
			continue;
		if (!o.answered[i]) {
			snprintf(why, len, "%s", o.err[0] != '\0' ? o.err :
			    "a peer was not asked (the watchdog stopped the run)");
			goto out;
		}
		if (o.links[i] < o.want[i]) {
			snprintf(why, len, "%s has %d of %d links", p->name,
			    o.links[i], o.want[i]);
			goto out;
		}
	}
	for (int i = 0; i < n && qt == 0; i++)
		if (r->fleet.peers[i]->state == PEER_RUNNING) {
			seen[i] = 1;
			queue[qt++] = i;
		}
	while (qh < qt) {
		int i = queue[qh++];

		reached++;
		for (int j = 0; j < n; j++)
			if (o.adj[(size_t)i * (size_t)n + (size_t)j] &&
			    !seen[j]) {
				seen[j] = 1;
				queue[qt++] = j;
			}
	}
	if (reached < o.live) {
		snprintf(why, len, "the overlay is split: %d of %d peers "
		    "reachable from the first", reached, o.live);
		goto out;
	}
	rc = 1;
out:
	free(o.adj);
	free(o.links);
	free(o.want);
	free(o.answered);
	free(seen);
	free(queue);
	return rc;
}

/* cond_converged's and cond_visible's answers, as they come. */
struct agree {
	json_t		*writes;	/* visible: the ids each must have */
	json_int_t	 first;
	bool		 have, differ;
	int		 bad;		/* a fleet index, or -1 */
	size_t		 missing;
	char		 err[256];
};

static void
digest_one(struct run *r, int i, struct peer *p, json_t *res, void *arg)
{
	struct agree *a = arg;
	json_int_t d;

	(void)r;
	if (!answered(p, res, "dump", a->err, sizeof(a->err)))
		return;
	d = json_integer_value(json_object_get(json_object_get(res, "space"),
	    "digest"));
	if (a->have && d != a->first && !a->differ) {
		a->differ = true;
		a->bad = i;
	}
	a->first = d;
	a->have = true;
}

static int
cond_converged(struct run *r, const struct step_wait *w, uint64_t deadline,
    char *why, size_t len)
{
	struct agree a;
	json_t *args;

	(void)w;
	(void)deadline;
	memset(&a, 0, sizeof(a));
	a.bad = -1;
	args = json_pack("{s:i}", "limit", 0);
	engine_call_each(r, "dump", args, CALL_MS, digest_one, &a);
	json_decref(args);
	if (a.err[0] != '\0') {
		snprintf(why, len, "%s", a.err);
		return 0;
	}
	if (a.differ) {
		snprintf(why, len, "%s differs from another peer",
		    r->fleet.peers[a.bad]->name);
		return 0;
	}
	return 1;
}

static void
ids_one(struct run *r, int i, struct peer *p, json_t *res, void *arg)
{
	struct agree *a = arg;
	json_t *have, *v;
	const char *id;
	size_t k, missing = 0;

	(void)r;
	if (!answered(p, res, "ids", a->err, sizeof(a->err)))
		return;
	have = json_object();
	json_array_foreach(json_object_get(res, "ids"), k, v)
		json_object_set_new(have, json_string_value(
		    json_array_get(v, 0)), json_true());
	json_object_foreach(a->writes, id, v)
		if (json_object_get(have, id) == NULL)
			missing++;
	json_decref(have);
	if (missing > 0 && a->bad == -1) {
		a->bad = i;
		a->missing = missing;
	}
}

/* Every written id on every running peer. */
static int
cond_visible(struct run *r, const struct step_wait *w, uint64_t deadline,
    char *why, size_t len)
{
	struct agree a;

	(void)w;
	(void)deadline;
	history_loads_look(r);
	memset(&a, 0, sizeof(a));
	a.bad = -1;
	a.writes = r->writes;
	engine_call_each(r, "ids", NULL, CALL_MS * 2, ids_one, &a);
	if (a.err[0] != '\0') {
		snprintf(why, len, "%s", a.err);
		return 0;
	}
	if (a.bad != -1) {
		snprintf(why, len, "%s lacks %zu entries",
		    r->fleet.peers[a.bad]->name, a.missing);
		return 0;
	}
	return 1;
}

static double
fleet_counter(struct run *r, const char *name, bool *ok)
{
	char err[256];
	double sum = 0;

	*ok = false;
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *m, *v;

		if (p->state != PEER_RUNNING)
			continue;
		if ((m = engine_call(r, p, "metrics", NULL, CALL_MS, err,
		    sizeof(err))) == NULL)
			continue;
		v = json_object_get(json_object_get(m, "counters"), name);
		if (json_is_number(v)) {
			sum += json_number_value(v);
			*ok = true;
		}
		json_decref(m);
	}
	return sum;
}

/* Every fetcher complete (wait_fetched waits itself, bounded). */
static int
cond_fetched(struct run *r, const struct step_wait *w, uint64_t deadline,
    char *why, size_t len)
{
	(void)w;
	(void)why;
	(void)len;
	return content_wait_fetched(r, deadline) == -1 ? -1 : 1;
}

/* Every task written so far taken. */
static int
cond_taken(struct run *r, const struct step_wait *w, uint64_t deadline,
    char *why, size_t len)
{
	(void)w;
	(void)deadline;
	history_loads_look(r);
	history_takes(r);
	snprintf(why, len, "%zu of %zu taken", history_taken(r),
	    json_object_size(r->writes));
	return history_taken(r) >= json_object_size(r->writes);
}

/* A measure (or a fleet counter) against the step's op and value. */
static int
cond_metric(struct run *r, const struct step_wait *w, uint64_t deadline,
    char *why, size_t len)
{
	const char *m = w->metric;
	json_t *mv = json_object_get(json_object_get(r->measures, m), "value");
	bool have = json_is_number(mv);
	double v = have ? json_number_value(mv) : 0;

	(void)deadline;
	if (strncmp(m, "counters.", 9) == 0)
		v = fleet_counter(r, m + 9, &have);
	snprintf(why, len, "%s = %g", m, v);
	return have && engine_compare(v, w->op, w->value);
}

/*
 * The engine's half of CONDITIONS() (action.h): 1 holds, 0 not yet (why
 * says what is missing), -1 the run stops.
 */
#define COND_ROW(n) { #n, cond_##n },
static const struct {
	const char	*name;
	int		(*eval)(struct run *, const struct step_wait *, uint64_t,
			    char *, size_t);
} conditions[] = { CONDITIONS(COND_ROW) };
#undef COND_ROW

int
cond_eval(struct run *r, const struct step_wait *w, uint64_t deadline,
    char *why, size_t len)
{
	const char *until = w->until;

	for (size_t c = 0; c < sizeof(conditions) / sizeof(conditions[0]); c++)
		if (until != NULL && strcmp(conditions[c].name, until) == 0)
			return conditions[c].eval(r, w, deadline, why, len);
	return -2;
}

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
 * Partial views (docs/scenarios.md "connected"): every running peer has
 * at least min(its --active, live - 1) links to running peers, and the
 * overlay (the union of the peers' links) is one connected graph.  A full
 * mesh is the case live - 1 <= --active.
 */
static int
cond_connected(struct run *r, json_t *step, uint64_t deadline, char *why,
    size_t len)
{
	int n = r->fleet.npeers, live = 0, reached = 0, *queue, qh = 0, qt = 0;
	uint8_t *adj, *seen;
	char err[256];
	int rc = 0;

	(void)step;
	(void)deadline;
	adj = calloc((size_t)n * (size_t)n, 1);
	seen = calloc((size_t)n, 1);
	queue = calloc((size_t)n, sizeof(*queue));
	if (adj == NULL || seen == NULL || queue == NULL) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		live += r->fleet.peers[i]->state == PEER_RUNNING;
	for (int i = 0; i < n; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *res, *m;
		json_int_t want;
		size_t k;
		int links = 0;

		if (p->state != PEER_RUNNING)
			continue;
		if ((res = run_call(r, p, "peers", NULL, CALL_MS, err,
		    sizeof(err))) == NULL) {
			snprintf(why, len, "%s", err);
			goto out;
		}
		json_array_foreach(json_object_get(res, "members"), k, m) {
			int j = live_index(r, json_string_value(
			    json_object_get(m, "peer_id")));

			if (j < 0 || j == i ||
			    !json_is_true(json_object_get(m, "link")))
				continue;
			adj[(size_t)i * (size_t)n + (size_t)j] = 1;
			adj[(size_t)j * (size_t)n + (size_t)i] = 1;
			links++;
		}
		want = json_integer_value(json_object_get(json_object_get(res,
		    "view"), "active_max"));
		json_decref(res);
		if (want <= 0 || want > live - 1)
			want = live - 1;
		if (links < want) {
			snprintf(why, len, "%s has %d of %lld links", p->name,
			    links, (long long)want);
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
			if (adj[(size_t)i * (size_t)n + (size_t)j] && !seen[j]) {
				seen[j] = 1;
				queue[qt++] = j;
			}
	}
	if (reached < live) {
		snprintf(why, len, "the overlay is split: %d of %d peers "
		    "reachable from the first", reached, live);
		goto out;
	}
	rc = 1;
out:
	free(adj);
	free(seen);
	free(queue);
	return rc;
}

static int
cond_converged(struct run *r, json_t *step, uint64_t deadline, char *why,
    size_t len)
{
	char err[256];
	json_int_t first = 0;
	bool have = false;

	(void)step;
	(void)deadline;
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *args, *res;
		json_int_t d;

		if (p->state != PEER_RUNNING)
			continue;
		args = json_pack("{s:i}", "limit", 0);
		res = run_call(r, p, "dump", args, CALL_MS, err, sizeof(err));
		json_decref(args);
		if (res == NULL) {
			snprintf(why, len, "%s", err);
			return 0;
		}
		d = json_integer_value(json_object_get(json_object_get(res,
		    "space"), "digest"));
		json_decref(res);
		if (have && d != first) {
			snprintf(why, len, "%s differs from the first peer",
			    p->name);
			return 0;
		}
		first = d;
		have = true;
	}
	return 1;
}

/* Every written id on every running peer. */
static int
cond_visible(struct run *r, json_t *step, uint64_t deadline, char *why,
    size_t len)
{
	char err[256];

	(void)step;
	(void)deadline;
	history_loads_look(r);
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *res, *have, *v;
		const char *id;
		size_t k, missing = 0;

		if (p->state != PEER_RUNNING)
			continue;
		if ((res = run_call(r, p, "ids", NULL, CALL_MS * 2, err,
		    sizeof(err))) == NULL) {
			snprintf(why, len, "%s", err);
			return 0;
		}
		have = json_object();
		json_array_foreach(json_object_get(res, "ids"), k, v)
			json_object_set_new(have, json_string_value(
			    json_array_get(v, 0)), json_true());
		json_object_foreach(r->writes, id, v)
			if (json_object_get(have, id) == NULL)
				missing++;
		json_decref(have);
		json_decref(res);
		if (missing > 0) {
			snprintf(why, len, "%s lacks %zu entries", p->name,
			    missing);
			return 0;
		}
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
		if ((m = run_call(r, p, "metrics", NULL, CALL_MS, err,
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
cond_fetched(struct run *r, json_t *step, uint64_t deadline, char *why,
    size_t len)
{
	(void)step;
	(void)why;
	(void)len;
	return content_wait_fetched(r, deadline) == -1 ? -1 : 1;
}

/* Every task written so far taken. */
static int
cond_taken(struct run *r, json_t *step, uint64_t deadline, char *why,
    size_t len)
{
	(void)step;
	(void)deadline;
	history_loads_look(r);
	history_takes(r);
	snprintf(why, len, "%zu of %zu taken", history_taken(r),
	    json_object_size(r->writes));
	return history_taken(r) >= json_object_size(r->writes);
}

/* A measure (or a fleet counter) against the step's op and value. */
static int
cond_metric(struct run *r, json_t *step, uint64_t deadline, char *why,
    size_t len)
{
	const char *m = json_string_value(json_object_get(step, "metric"));
	json_t *mv = json_object_get(json_object_get(r->measures, m), "value");
	bool have = json_is_number(mv);
	double v = have ? json_number_value(mv) : 0;

	(void)deadline;
	if (strncmp(m, "counters.", 9) == 0)
		v = fleet_counter(r, m + 9, &have);
	snprintf(why, len, "%s = %g", m, v);
	return have && run_compare(v, json_string_value(json_object_get(step,
	    "op")), json_number_value(json_object_get(step, "value")));
}

/*
 * The engine's half of CONDITIONS() (action.h): 1 holds, 0 not yet (why
 * says what is missing), -1 the run stops.
 */
#define COND_ROW(n) { #n, cond_##n },
static const struct {
	const char	*name;
	int		(*eval)(struct run *, json_t *, uint64_t, char *,
			    size_t);
} conditions[] = { CONDITIONS(COND_ROW) };
#undef COND_ROW

int
cond_eval(struct run *r, json_t *step, uint64_t deadline, char *why,
    size_t len)
{
	const char *until = json_string_value(json_object_get(step, "until"));

	for (size_t c = 0; c < sizeof(conditions) / sizeof(conditions[0]); c++)
		if (until != NULL && strcmp(conditions[c].name, until) == 0)
			return conditions[c].eval(r, step, deadline, why, len);
	return -2;
}

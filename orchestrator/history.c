/*
 * history.c: what the fleet did, as the checks need it: every take won
 * (collected on a timer and before a signal), every write a load
 * acknowledged (waited for or not), and the history measures (duplicates,
 * never taken, lost).  A write load that could not be collected makes the
 * measures over it UNKNOWN.
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

#include "clock.h"
#include "ctl.h"
#include "engine.h"
#include "fleet.h"
#include "xmalloc.h"

static void
history_take(struct run *r, struct peer *p, const char *id, json_int_t mono)
{
	json_t *list = json_object_get(r->takes, id);

	if (list == NULL) {
		list = json_array();
		json_object_set_new(r->takes, id, list);
	}
	json_array_append_new(list, json_pack("{s:i, s:I}", "peer", p->index,
	    "mono_us", mono));
	engine_timeline(r, "take_won", json_pack("{s:s, s:i, s:I}", "id", id,
	    "peer", p->index, "mono_us", mono));
}

static void
takes_cb(struct peer *p, enum ctl_status st, json_t *res, const char *err,
    void *arg)
{
	struct run *r = arg;
	size_t i;
	json_t *v;

	p->takes_inflight = false;
	if (st == CTL_TIMEOUT)
		engine_trip(r, p, err);
	if (st != CTL_OK)
		return;
	json_array_foreach(json_object_get(res, "takes"), i, v) {
		history_take(r, p, json_string_value(json_object_get(v, "id")),
		    json_integer_value(json_object_get(v, "mono_us")));
		p->takes_seen++;
	}
}

/* Ask p for its takes since the last look (one call in flight at most). */
void
history_takes_async(struct run *r, struct peer *p)
{
	json_t *args;

	if (p->state != PEER_RUNNING || p->stuck || p->takes_inflight)
		return;
	p->takes_inflight = true;
	args = json_pack("{s:I}", "since", (json_int_t)p->takes_seen);
	ctl_call(r->base, p, "takes", args, CALL_MS, takes_cb, r);
	json_decref(args);
}

static bool
takes_pending(struct run *r, struct peer *only)
{
	for (int i = 0; i < r->fleet.npeers; i++)
		if ((only == NULL || only == r->fleet.peers[i]) &&
		    r->fleet.peers[i]->takes_inflight)
			return true;
	return false;
}

/* p's takes (every peer's when p is NULL) up to now, awaited. */
static void
collect_takes_now(struct run *r, struct peer *only)
{
	/* A round already in flight may predate now: wait, then ask again. */
	bool again = takes_pending(r, only);

	for (int pass = 0; pass < (again ? 2 : 1); pass++) {
		for (int i = 0; i < r->fleet.npeers; i++)
			if (only == NULL || only == r->fleet.peers[i])
				history_takes_async(r, r->fleet.peers[i]);
		while (takes_pending(r, only) && !(r->hang && !r->hang_done))
			event_base_loop(r->base, EVLOOP_ONCE);
	}
}

void
history_takes_of(struct run *r, struct peer *p)
{
	collect_takes_now(r, p);
}

void
history_takes(struct run *r)
{
	collect_takes_now(r, NULL);
}

/*
 * The ids a write load has acknowledged so far, into the history: op
 * "status" looks, "stop" ends the load first.  final: the last look (a
 * note for a load that stopped on an error).  How many were new, or -1.
 */
int
history_writes(struct run *r, struct peer *p, const char *load,
    const char *op, bool final)
{
	char err[256];
	json_t *args, *res, *l, *v;
	size_t i, fresh = 0;

	args = json_pack("{s:s, s:s, s:b}", "op", op, "name", load, "ids", 1);
	res = engine_call(r, p, "load", args, CALL_MS * 4, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return engine_fail(r, "collecting writes from %s: %s", p->name,
		    err);
	l = json_array_get(json_object_get(res, "loads"), 0);
	json_array_foreach(json_object_get(l, "ids"), i, v) {
		const char *id = json_string_value(json_array_get(v, 0));
		json_int_t mono = json_integer_value(json_array_get(v, 1));

		if (id == NULL || json_object_get(r->writes, id) != NULL)
			continue;
		fresh++;
		json_object_set_new(r->writes, id, json_pack("{s:i, s:I}",
		    "peer", p->index, "mono_us", mono));
		engine_timeline(r, "write_acked", json_pack("{s:s, s:i, s:s, s:I}",
		    "id", id, "peer", p->index, "load", load, "mono_us", mono));
	}
	if (final && json_object_get(l, "last_error") != NULL)
		engine_note(r, "%s: write load %s stopped: %s", p->name, load,
		    json_string_value(json_object_get(l, "last_error")));
	if (fresh > 0)
		engine_timeline(r, "writes_acked", json_pack("{s:i, s:s, s:I}",
		    "peer",
		    p->index, "load", load, "count", (json_int_t)fresh));
	json_decref(res);
	return (int)fresh;
}

/*
 * r->loads: the write loads whose acknowledgements are not all in the
 * history yet ({"peer", "load", "restarts"}): the ones of "wait": false
 * steps.  They are looked at while conditions need them, collected before
 * a signal ends or stops their peer, and stopped and collected before the
 * checks; a load whose peer went away first is uncollected, and the
 * history measures are then UNKNOWN.
 */
void
history_load_add(struct run *r, struct peer *p, const char *load)
{
	json_array_append_new(r->loads, json_pack("{s:i, s:s, s:I}", "peer",
	    p->index, "load", load, "restarts", (json_int_t)p->restarts));
}

/* Look at (or with final, stop and collect) only's pending loads, or all. */
int
history_loads(struct run *r, struct peer *only, bool final)
{
	size_t i = 0;

	while (i < json_array_size(r->loads)) {
		json_t *l = json_array_get(r->loads, i);
		struct peer *p = r->fleet.peers[json_integer_value(
		    json_object_get(l, "peer"))];
		const char *load = json_string_value(json_object_get(l, "load"));
		bool same = (json_int_t)p->restarts == json_integer_value(
		    json_object_get(l, "restarts"));
		int fresh;

		if (only != NULL && p != only) {
			i++;
			continue;
		}
		if (!same || !fleet_live(p) || p->stuck ||
		    p->state == PEER_PAUSED) {
			if (final || !same || !fleet_live(p)) {
				r->writes_uncollected++;
				engine_note(r,
				    "%s: the acknowledgements of write load %s "
				    "could not be collected (%s)", p->name, load,
				    p->stuck ? "stuck" : fleet_state_name(
				    p->state));
				json_array_remove(r->loads, i);
			} else
				i++;
			continue;
		}
		if ((fresh = history_writes(r, p, load, final ? "stop" :
		    "status", final)) == -1)
			return -1;
		json_object_set_new(l, "seen", json_integer(json_integer_value(
		    json_object_get(l, "seen")) + fresh));
		if (final)
			json_array_remove(r->loads, i);
		else
			i++;
	}
	return 0;
}

struct load_ask {
	struct run	*r;
	int		 peer;
	json_int_t	 restarts;
	char		 load[128];
};

/* The pending load this answer is about, if it is still pending. */
static json_t *
load_of(struct load_ask *a)
{
	size_t i;
	json_t *l;

	json_array_foreach(a->r->loads, i, l)
		if (json_integer_value(json_object_get(l, "peer")) == a->peer &&
		    json_integer_value(json_object_get(l, "restarts")) ==
		    a->restarts && strcmp(json_string_value(json_object_get(l,
		    "load")), a->load) == 0)
			return l;
	return NULL;
}

static void
count_cb(struct peer *p, enum ctl_status st, json_t *res, const char *err,
    void *arg)
{
	struct load_ask *a = arg;
	json_t *l = load_of(a), *w;

	if (st == CTL_TIMEOUT)
		engine_trip(a->r, p, err);
	if (l != NULL) {
		json_object_del(l, "asking");
		w = json_object_get(json_array_get(json_object_get(res,
		    "loads"), 0), "written");
		if (st == CTL_OK && json_is_integer(w))
			json_object_set(l, "written", w);
	}
	free(a);
}

/*
 * How far each pending load has got (its "written", without the ids), for
 * the progress line: one call in flight per load, from the collect timer.
 */
void
history_loads_count(struct run *r)
{
	size_t i;
	json_t *l;

	json_array_foreach(r->loads, i, l) {
		struct peer *p = r->fleet.peers[json_integer_value(
		    json_object_get(l, "peer"))];
		struct load_ask *a;
		json_t *args;

		if (json_object_get(l, "asking") != NULL || p->state !=
		    PEER_RUNNING || p->stuck || (json_int_t)p->restarts !=
		    json_integer_value(json_object_get(l, "restarts")))
			continue;
		a = xcalloc(1, sizeof(*a));
		a->r = r;
		a->peer = p->index;
		a->restarts = (json_int_t)p->restarts;
		snprintf(a->load, sizeof(a->load), "%s", json_string_value(
		    json_object_get(l, "load")));
		json_object_set_new(l, "asking", json_true());
		args = json_pack("{s:s, s:s}", "op", "status", "name", a->load);
		ctl_call(r->base, p, "load", args, CALL_MS, count_cb, a);
		json_decref(args);
	}
}

/* Writes acknowledged so far: in the history, or counted by a load. */
size_t
history_written(struct run *r)
{
	size_t n = json_object_size(r->writes), i;
	json_t *l;

	json_array_foreach(r->loads, i, l) {
		json_int_t w = json_integer_value(json_object_get(l, "written"));
		json_int_t seen = json_integer_value(json_object_get(l, "seen"));

		if (w > seen)
			n += (size_t)(w - seen);
	}
	return n;
}

/* The pending loads' acknowledgements so far, at most every COLLECT_MS. */
void
history_loads_look(struct run *r)
{
	if (json_array_size(r->loads) == 0 || clock_mono_ms() -
	    r->last_look_ms < COLLECT_MS)
		return;
	r->last_look_ms = clock_mono_ms();
	history_loads(r, NULL, false);
}

/* Before the checks: stop and collect every load still pending. */
void
history_loads_end(struct run *r)
{
	history_loads(r, NULL, true);
}

size_t
history_taken(struct run *r)
{
	return json_object_size(r->takes);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The winners' own stamps say when the n-th task fell, so a take step's
 * end does not depend on how often the engine looks (the peers' and the
 * engine's CLOCK_MONOTONIC are one clock on one host).
 */
uint64_t
history_nth_taken_us(struct run *r, size_t n)
{
	size_t k = 0, i;
	uint64_t *first, at = 0;
	const char *id;
	json_t *list, *v;

	if (n == 0 || json_object_size(r->takes) < n)
		return 0;
	first = xcalloc(json_object_size(r->takes), sizeof(*first));
	json_object_foreach(r->takes, id, list) {
		uint64_t lo = UINT64_MAX;

		json_array_foreach(list, i, v) {
			uint64_t t = (uint64_t)json_integer_value(
			    json_object_get(v, "mono_us"));

			if (t < lo)
				lo = t;
		}
		first[k++] = lo;
	}
	qsort(first, k, sizeof(*first), cmp_u64);
	at = first[n - 1];
	free(first);
	return at == UINT64_MAX ? 0 : at;
}

/* Duplicates, tasks never taken, entries lost. */
void
history_check(struct run *r)
{
	const char *id;
	json_t *v, *present = json_object();
	size_t dup = 0, never = 0, lost = 0, k;
	bool any_live = false;
	char err[256];

	json_object_foreach(r->takes, id, v)
		if (json_array_size(v) > 1)
			dup += json_array_size(v) - 1;
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *res, *e;

		if (p->state != PEER_RUNNING)
			continue;
		if ((res = engine_call(r, p, "ids", NULL, CALL_MS * 2, err,
		    sizeof(err))) == NULL)
			continue;
		any_live = true;
		json_array_foreach(json_object_get(res, "ids"), k, e)
			if (json_is_true(json_array_get(e, 1)) ||
			    json_is_true(json_array_get(e, 2)))
				json_object_set_new(present, json_string_value(
				    json_array_get(e, 0)), json_true());
		json_decref(res);
	}
	json_object_foreach(r->writes, id, v) {
		bool taken = json_object_get(r->takes, id) != NULL;

		if (!taken)
			never++;
		if (!taken && json_object_get(present, id) == NULL)
			lost++;
	}
	json_decref(present);
	if (r->had_take_step) {
		engine_measure(r, M_HISTORY_DUPLICATES, (double)dup);
		engine_measure(r, M_HISTORY_NEVER_TAKEN, (double)never);
	}
	/* A run that wrote and took nothing has no history to report. */
	if (json_object_size(r->writes) == 0 && !r->had_take_step &&
	    r->writes_uncollected == 0)
		return;
	/* Over writes issued but never collected, no history: UNKNOWN. */
	if (r->writes_uncollected > 0) {
		engine_note(r,
		    "%zu write loads were not collected: history.writes, "
		    "history.lost and history.never_taken are UNKNOWN",
		    r->writes_uncollected);
		json_object_del(r->measures, "history.never_taken");
	} else {
		if (any_live)
			engine_measure(r, M_HISTORY_LOST, (double)lost);
		engine_measure(r, M_HISTORY_WRITES, (double)json_object_size(
		    r->writes));
	}
	engine_measure(r, M_HISTORY_TAKES, (double)json_object_size(r->takes));
	if (r->take_end_ms > r->take_start_ms)
		engine_measure(r, M_THROUGHPUT_TAKES_PER_S,
		    (double)r->take_target /
		    ((double)(r->take_end_ms - r->take_start_ms) / 1000.0));
}

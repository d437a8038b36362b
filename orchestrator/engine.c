/*
 * engine.c: the library every file of the engine calls down into
 * (engine.h): the run's timeline, notes, errors and measures, control
 * calls awaited on the loop (engine_call, engine_call_each), the naps
 * between two looks, the checks between them (engine_housekeep) and peer
 * selectors.  The driver (run.c: the steps in order, the timers, the
 * checks) and the actions (act.c) call it; it calls nothing above it.
 */
#include <sys/wait.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ctl.h"
#include "engine.h"
#include "fleet.h"
#include "hist.h"
#include "log.h"
#include "measures.h"
#include "xmalloc.h"

volatile sig_atomic_t engine_interrupted;

uint64_t
engine_rng(struct run *r)
{
	uint64_t x = r->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return r->rng = x;
}

uint64_t
engine_ms(const struct run *r)
{
	return clock_mono_ms() - r->t0_ms;
}

/* One line of timeline.ndjson: {"t_ms", "event", ...fields}. */
void
engine_timeline(struct run *r, const char *event, json_t *fields)
{
	json_t *j = fields ? fields : json_object();

	json_object_set_new(j, "t_ms", json_integer((json_int_t)engine_ms(r)));
	json_object_set_new(j, "event", json_string(event));
	if (r->timeline != NULL) {
		json_dumpf(j, r->timeline, JSON_COMPACT | JSON_SORT_KEYS);
		fputc('\n', r->timeline);
		fflush(r->timeline);
	}
	json_decref(j);
}

void
engine_note(struct run *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(r->notes, json_string(buf));
	if (r->opts.verbose >= 0)
		fprintf(stderr, "%s%s\n", r->tty ? "\r\033[K" : "", buf);
}

/* A note on something the scenario did to the fleet, with time and step. */
void
engine_fault_note(struct run *r, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	engine_note(r, "%.1f s, step %s: %s", (double)engine_ms(r) / 1000.0,
	    r->step_name ? r->step_name : "?", buf);
}

int
engine_fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->status != RUN_ERROR && !r->hang) {
		va_start(ap, fmt);
		vsnprintf(r->error, sizeof(r->error), fmt, ap);
		va_end(ap);
		r->status = RUN_ERROR;
		engine_timeline(r, "error", json_pack("{s:s}", "message",
		    r->error));
	}
	return -1;
}

/* name -> {"value", "unit"}, the unit the row's. */
static void
measure_store(struct run *r, const char *name, double value,
    const struct measure_info *mi)
{
	json_object_set_new(r->measures, name, json_pack("{s:f, s:s}",
	    "value", value, "unit", mi->unit));
}

void
engine_measure(struct run *r, enum measure_id id, double value)
{
	const struct measure_info *mi = measures_row(id);

	measure_store(r, mi->name, value, mi);
}

void
engine_measure_hist(struct run *r, enum measure_id id, const struct hist *h)
{
	const struct measure_info *mi = measures_row(id);

	if (hist_count(h) == 0)
		return;
	json_object_set_new(r->measures, mi->name, json_pack(
	    "{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "unit", mi->unit,
	    "count", (json_int_t)hist_count(h),
	    "p50", (json_int_t)hist_percentile(h, 50),
	    "p90", (json_int_t)hist_percentile(h, 90),
	    "p99", (json_int_t)hist_percentile(h, 99),
	    "p999", (json_int_t)hist_percentile(h, 99.9),
	    "max", (json_int_t)hist_max(h)));
}

int
engine_measure_named(struct run *r, const char *name, double value)
{
	const struct measure_info *mi = measures_find(name);

	if (mi == NULL)
		return engine_fail(r, "no measure \"%s\" in MEASURES() "
		    "(orchestrator/measures.h)", name);
	measure_store(r, name, value, mi);
	return 0;
}

void
engine_measure_wait(struct run *r, const char *name, double ms)
{
	measure_store(r, name, ms, measures_wait());
}

void
engine_measure_counter(struct run *r, const char *name, double value)
{
	measure_store(r, name, value, measures_counter());
}

void
engine_blame(struct run *r, struct peer *p)
{
	size_t used = strlen(r->hang_peers);

	if (p->stuck)
		return;
	p->stuck = true;
	snprintf(r->hang_peers + used, sizeof(r->hang_peers) - used, "%s%s",
	    used ? ", " : "", p->name);
}

/*
 * The watchdog trips: p (NULL: the fleet) missed a bound.  The run stops
 * at once — every wait on the loop returns — and the driver captures
 * every peer before the teardown (watch_capture).
 */
void
engine_trip(struct run *r, struct peer *p, const char *why)
{
	/* Done, or a peer the scenario paused: an answer is not due. */
	if (r->hang_done || (p != NULL && p->state == PEER_PAUSED))
		return;
	if (p != NULL)
		engine_blame(r, p);
	if (!r->hang) {
		r->hang = true;
		snprintf(r->hang_why, sizeof(r->hang_why), "%s", why);
		engine_timeline(r, "watchdog", json_pack("{s:s, s:s, s:s}", "why",
		    why,
		    "step", r->step_name ? r->step_name : "", "peer", p != NULL ?
		    p->name : ""));
	}
	event_base_loopbreak(r->base);
}

struct waiter {
	bool		 done, abandoned;
	enum ctl_status	 st;
	json_t		*res;
	char		 err[512];
};

static void
waiter_cb(struct peer *p, enum ctl_status st, json_t *res, const char *err,
    void *arg)
{
	struct waiter *w = arg;

	(void)p;
	if (w->abandoned) {
		free(w);
		return;
	}
	w->done = true;
	w->st = st;
	w->res = json_incref(res);
	snprintf(w->err, sizeof(w->err), "%s", err);
}

/*
 * One control call to p, bounded by timeout_ms, awaited on the loop: the
 * timers (watchdog, samples, progress, take collection) keep running while
 * it waits.  A missed bound trips the watchdog; so does the watchdog
 * tripping meanwhile end the wait.  The result (a new reference) or NULL
 * with err.
 */
json_t *
engine_call(struct run *r, struct peer *p, const char *cmd, json_t *args,
    int timeout_ms, char *err, size_t errlen)
{
	struct waiter *w;
	json_t *res;

	if (r->hang && !r->hang_done) {
		snprintf(err, errlen, "the watchdog stopped the run");
		return NULL;
	}
	if (p->stuck || p->state == PEER_PAUSED) {
		snprintf(err, errlen, "%s is %s", p->name, p->stuck ? "stuck" :
		    "paused");
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	ctl_call(r->base, p, cmd, args, timeout_ms, waiter_cb, w);
	while (!w->done && !(r->hang && !r->hang_done))
		event_base_loop(r->base, EVLOOP_ONCE);
	if (!w->done) {
		w->abandoned = true;
		snprintf(err, errlen, "the watchdog stopped the run");
		return NULL;
	}
	if (w->st == CTL_TIMEOUT)
		engine_trip(r, p, w->err);
	snprintf(err, errlen, "%.250s", w->err);
	res = w->st == CTL_OK ? w->res : NULL;
	if (res == NULL)
		json_decref(w->res);
	free(w);
	return res;
}

/*
 * engine_call_each's state, on the heap: when the watchdog ends the wait,
 * the calls still in flight complete later, and the last frees it.
 */
struct each {
	struct run	*r;
	const char	*cmd;
	json_t		*args;
	int		 timeout_ms;
	engine_each_fn	 fn;
	void		*arg;
	int		 next, inflight;
	bool		 abandoned;
};

struct each_call {
	struct each	*e;
	int		 index;
};

static void	each_issue(struct each *);

static void
each_cb(struct peer *p, enum ctl_status st, json_t *res, const char *err,
    void *arg)
{
	struct each_call *k = arg;
	struct each *e = k->e;

	e->inflight--;
	if (!e->abandoned) {
		if (st == CTL_TIMEOUT)
			engine_trip(e->r, p, err);
		e->fn(e->r, k->index, p, st == CTL_OK ? res : NULL, e->arg);
		each_issue(e);
	} else if (e->inflight == 0) {
		json_decref(e->args);
		free(e);
	}
	free(k);
}

/* Keep ENGINE_EACH_WINDOW calls in flight while peers are left to ask. */
static void
each_issue(struct each *e)
{
	struct run *r = e->r;

	while (e->inflight < ENGINE_EACH_WINDOW && e->next < r->fleet.npeers) {
		struct peer *p = r->fleet.peers[e->next];
		struct each_call *k;

		if (!fleet_live(p) || p->stuck || p->state == PEER_PAUSED) {
			e->next++;
			continue;
		}
		k = xcalloc(1, sizeof(*k));
		k->e = e;
		k->index = e->next++;
		e->inflight++;
		ctl_call(r->base, p, e->cmd, e->args, e->timeout_ms, each_cb, k);
	}
}

void
engine_call_each(struct run *r, const char *cmd, json_t *args, int timeout_ms,
    engine_each_fn fn, void *arg)
{
	struct each *e;

	if (r->hang && !r->hang_done)
		return;
	e = xcalloc(1, sizeof(*e));
	e->r = r;
	e->cmd = cmd;
	e->args = args != NULL ? json_incref(args) : NULL;
	e->timeout_ms = timeout_ms;
	e->fn = fn;
	e->arg = arg;
	each_issue(e);
	while ((e->inflight > 0 || e->next < r->fleet.npeers) &&
	    !(r->hang && !r->hang_done))
		event_base_loop(r->base, EVLOOP_ONCE);
	if (e->inflight > 0) {
		e->abandoned = true;	/* the last callback frees it */
		return;
	}
	json_decref(e->args);
	free(e);
}

static void
nap_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(bool *)arg = true;
}

void
engine_nap_until(struct run *r, uint64_t until_ms)
{
	uint64_t now = clock_mono_ms(), ms;
	struct timeval tv;
	bool done = false;
	struct event *ev;

	if (r->ev_wake == NULL) {	/* no pipe: the polls' pace */
		engine_nap(r);
		return;
	}
	ms = until_ms > now ? until_ms - now : 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	ev = evtimer_new(r->base, nap_cb, &done);
	evtimer_add(ev, &tv);
	r->woken = false;
	/* A signal that came before the nap left its flag: look first. */
	if (!fleet_sigchld && !engine_interrupted)
		while (!done && !r->woken && !(r->hang && !r->hang_done))
			event_base_loop(r->base, EVLOOP_ONCE);
	event_free(ev);
}

/* A short pause between two looks, with the timers running. */
void
engine_nap(struct run *r)
{
	struct timeval tv = { 0, POLL_NS / 1000 };
	bool done = false;
	struct event *ev = evtimer_new(r->base, nap_cb, &done);

	evtimer_add(ev, &tv);
	while (!done && !(r->hang && !r->hang_done))
		event_base_loop(r->base, EVLOOP_ONCE);
	event_free(ev);
}

/* Everything a waiting loop checks between two looks. -1: stop the run. */
int
engine_housekeep(struct run *r)
{
	if (r->hang)
		return -1;
	if (engine_interrupted)
		return engine_fail(r, "interrupted by a signal");
	if (fleet_sigchld && fleet_reap(&r->fleet) > 0) {
		for (int i = 0; i < r->fleet.npeers; i++) {
			struct peer *p = r->fleet.peers[i];
			int st = p->exit_status;

			if (p->state != PEER_CRASHED)
				continue;
			engine_fault_note(r,
			    "%s crashed: %s %d; see %s/stderr.log",
			    p->name, WIFSIGNALED(st) ? "signal" : "exit status",
			    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
			    p->dir);
			engine_timeline(r, "crash", json_pack("{s:i, s:i}", "peer",
			    i,
			    "status", st));
			return engine_fail(r, "%s crashed", p->name);
		}
	}
	return 0;
}

int
engine_select(struct run *r, json_t *sel, struct peer **out, int max,
    bool live_only)
{
	int n = 0;

	if (sel == NULL || json_is_string(sel)) {	/* "all" */
		for (int i = 0; i < r->fleet.npeers && n < max; i++)
			if (!live_only || fleet_live(r->fleet.peers[i]))
				out[n++] = r->fleet.peers[i];
		return n;
	}
	if (json_is_integer(sel)) {
		json_int_t k = json_integer_value(sel);

		if (k < 0 || k >= r->fleet.npeers)
			return -1;
		out[0] = r->fleet.peers[k];
		return 1;
	}
	size_t i;
	json_t *v;
	json_array_foreach(sel, i, v) {
		json_int_t k = json_integer_value(v);

		if (k < 0 || k >= r->fleet.npeers || n >= max)
			return -1;
		out[n++] = r->fleet.peers[k];
	}
	return n;
}

struct peer *
engine_peer(struct run *r, json_int_t k)
{
	if (k < 0 || k >= r->fleet.npeers)
		return NULL;
	return r->fleet.peers[k];
}

bool
engine_compare(double a, const char *op, double b)
{
	if (strcmp(op, "<") == 0) return a < b;
	if (strcmp(op, "<=") == 0) return a <= b;
	if (strcmp(op, "==") == 0) return a == b;
	if (strcmp(op, "!=") == 0) return a != b;
	if (strcmp(op, ">=") == 0) return a >= b;
	if (strcmp(op, ">") == 0) return a > b;
	return false;
}

void
engine_write_json(const char *path, json_t *j)
{
	if (json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
		log_warnx("cannot write %s", path);
}

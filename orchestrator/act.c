/*
 * act.c: the engine's actions, one function per row of ACTIONS()
 * (action.h), each reading its step's typed fields (struct step, step.h),
 * and act_run(), which runs a step by its action.
 *
 * Starting forks each peer as soon as the peers it is seeded with are
 * ready and reads the ready lines on the loop; signals collect a peer's
 * history first; loads run inside the peers and are awaited through
 * bounded control calls on the loop (engine_call), so the timers keep
 * running.
 */
#include <sys/wait.h>

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
#include "clock.h"
#include "ctl.h"
#include "engine.h"
#include "fleet.h"
#include "launch.h"
#include "num.h"
#include "step.h"
#include "xmalloc.h"

/* Seeds for a (re)starting peer: up to three live peers other than it. */
static int
live_seeds(struct run *r, struct peer *self, char **seeds, int max)
{
	int n = 0;

	for (int i = 0; i < r->fleet.npeers && n < max; i++) {
		struct peer *p = r->fleet.peers[i];

		if (p != self && p->state == PEER_RUNNING && p->listen[0])
			seeds[n++] = p->listen;
	}
	return n;
}

/* True if index k is in a list like "1,3" or "all". */
static bool
index_listed(const char *list, int k)
{
	const char *c = list;

	if (list == NULL)
		return false;
	if (strcmp(list, "all") == 0)
		return true;
	while (*c != '\0') {
		char *end;
		long v = strtol(c, &end, 10);

		if (end == c)
			return false;
		if (v == k)
			return true;
		c = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			return false;
	}
	return false;
}

static char
proc_state(pid_t pid)
{
	char st;

	fleet_proc(pid, &st);
	return st;
}

/* A held peer: say how to attach, then wait (bounded) until continued. */
static int
await_held(struct run *r, struct peer *p)
{
	pid_t pid = p->peerd_pid > 0 ? p->peerd_pid : p->pid;
	uint64_t until = clock_mono_ms() + 5000;
	struct timespec ts = { 0, POLL_NS };

	/* The loop (and so the watchdog) waits while a debugger may hold it. */

	while (proc_state(pid) != 'T' && clock_mono_ms() < until)
		nanosleep(&ts, NULL);
	fprintf(stderr, "%s%s is held before its loop: pid %d\n"
	    "  attach:   gdb -p %d        (then: continue)\n"
	    "  or go on: kill -CONT %d\n"
	    "  waiting up to %d s ...\n", r->tty ? "\r\033[K" : "", p->name,
	    (int)pid, (int)pid, (int)pid, r->opts.hold_timeout_s);
	engine_timeline(r, "held", json_pack("{s:i, s:I}", "peer", p->index, "pid",
	    (json_int_t)pid));
	until = clock_mono_ms() + (uint64_t)r->opts.hold_timeout_s * 1000u;
	while (proc_state(pid) == 'T' || proc_state(pid) == 't') {
		if (clock_mono_ms() >= until)
			return engine_fail(r,
			    "%s was held and not continued within %d s",
			    p->name, r->opts.hold_timeout_s);
		if (engine_interrupted)
			return engine_fail(r, "interrupted by a signal");
		nanosleep(&ts, NULL);
	}
	engine_timeline(r, "continued", json_pack("{s:i}", "peer", p->index));
	p->answered_ms = clock_mono_ms();
	r->progress_ms = clock_mono_ms();
	return 0;
}

/* p's hold flag and command prefix, from --hold and --wrap. */
static int
start_prepare(struct run *r, struct peer *p)
{
	p->hold = index_listed(r->opts.hold, p->index);
	for (int i = 0; i < r->opts.nwraps; i++) {
		char *eq = strchr(r->opts.wraps[i], '=');
		char which[64];

		if (eq == NULL || (size_t)(eq - r->opts.wraps[i]) >= sizeof(which))
			continue;
		snprintf(which, sizeof(which), "%.*s",
		    (int)(eq - r->opts.wraps[i]), r->opts.wraps[i]);
		if (index_listed(which, p->index) &&
		    fleet_set_wrap(p, eq + 1) == -1)
			return engine_fail(r, "--wrap %s: cannot parse the prefix",
			    r->opts.wraps[i]);
	}
	return 0;
}

/* A peer's ready line is in: a held one waits, then the timeline. */
static int
start_done(struct run *r, struct peer *p)
{
	json_t *cmd;
	char *line;

	if (p->hold && await_held(r, p) == -1)
		return -1;
	line = fleet_cmdline(p);
	cmd = json_pack("{s:i, s:s, s:I, s:I, s:s, s:s, s:s}", "peer",
	    p->index, "name", p->name, "pid", (json_int_t)p->pid,
	    "peerd_pid", (json_int_t)p->peerd_pid, "listen", p->listen,
	    "peer_id", p->peer_id, "cmdline", line);
	engine_timeline(r, "peer_started", cmd);
	free(line);
	return 0;
}

static int
start_peer(struct run *r, struct peer *p, char **seeds, int nseeds)
{
	char err[512];

	if (start_prepare(r, p) == -1)
		return -1;
	if (fleet_start(&r->fleet, p, seeds, nseeds, err, sizeof(err)) == -1)
		return engine_fail(r, "starting %s: %s", p->name, err);
	return start_done(r, p);
}

/* One peer of a start step, with the peers it is seeded with (indexes). */
struct start_job {
	struct peer	*p;
	int		 seeds[8];
	int		 nseeds;
	bool		 spawned, ready, failed;
	struct event	*ev;
	char		 err[512];
};

static void
start_ready_cb(evutil_socket_t fd, short what, void *arg)
{
	struct start_job *j = arg;
	int rc;

	(void)fd;
	(void)what;
	if ((rc = fleet_ready_read(j->p, j->err, sizeof(j->err))) == 0)
		return;
	event_del(j->ev);
	if (rc == 1)
		j->ready = true;
	else
		j->failed = true;
}

/* Seeds by topology (the random draws in index order, as replay needs). */
static void
start_seeds(struct run *r, struct start_job *j)
{
	json_t *topo = json_object_get(json_object_get(r->scn, "fleet"),
	    "topology");
	const char *t = json_string_value(topo);

	if (j->p->index == 0 || (t != NULL && strcmp(t, "none") == 0))
		return;
	if (t != NULL && strcmp(t, "ring") == 0)
		j->seeds[j->nseeds++] = j->p->index - 1;
	else if (json_is_object(topo)) {
		json_int_t k = json_integer_value(json_object_get(topo,
		    "random"));

		for (json_int_t s = 0; s < k && j->nseeds < 8; s++)
			j->seeds[j->nseeds++] = (int)(engine_rng(r) %
			    (uint64_t)j->p->index);
	} else
		j->seeds[j->nseeds++] = 0;
}

/* Fork j's peer if the peers it is seeded with are ready. 1 forked. */
static int
start_spawn(struct run *r, struct start_job *j)
{
	char *seeds[8];

	for (int s = 0; s < j->nseeds; s++) {
		struct peer *q = r->fleet.peers[j->seeds[s]];

		if (q->listen[0] == '\0' || !fleet_live(q))
			return 0;
		seeds[s] = q->listen;
	}
	if (start_prepare(r, j->p) == -1)
		return -1;
	if (fleet_spawn(&r->fleet, j->p, seeds, j->nseeds, j->err,
	    sizeof(j->err)) == -1)
		return engine_fail(r, "starting %s: %s", j->p->name, j->err);
	j->spawned = true;
	j->ev = event_new(r->base, j->p->ready_fd, EV_READ | EV_PERSIST,
	    start_ready_cb, j);
	event_add(j->ev, NULL);
	return 1;
}

/*
 * Start the selected peers: each is forked as soon as the peers it is
 * seeded with are ready (mesh and star: after p0; "none": all at once;
 * ring: one after another), without waiting for the others; the ready
 * lines are read on the loop as they come, all within the step's bound.
 */
static int
act_start(struct run *r, const struct step *s, uint64_t deadline)
{
	json_int_t n = json_integer_value(json_object_get(json_object_get(
	    r->scn, "fleet"), "peers"));
	json_t *sel = s->u.start.peers;
	struct peer *ps[FLEET_MAX_PEERS];
	struct start_job *jobs;
	int np, nready = 0, rc = 0;

	while (r->fleet.npeers < n)
		if (fleet_add(&r->fleet, NULL) == NULL)
			return engine_fail(r, "too many peers");
	if (sel == NULL)
		sel = json_string("all");
	else
		json_incref(sel);
	np = engine_select(r, sel, ps, FLEET_MAX_PEERS, false);
	json_decref(sel);
	if (np < 0)
		return engine_fail(r, "start: a peer index out of range");
	jobs = xcalloc((size_t)np + 1, sizeof(*jobs));
	for (int i = 0; i < np; i++) {
		jobs[i].p = ps[i];
		if (fleet_live(ps[i])) {
			jobs[i].spawned = jobs[i].ready = true;
			nready++;
		} else
			start_seeds(r, &jobs[i]);
	}
	while (rc == 0 && nready < np) {
		for (int i = 0; i < np && rc == 0; i++)
			if (!jobs[i].spawned && start_spawn(r, &jobs[i]) == -1)
				rc = -1;
		if (rc == 0)
			engine_nap(r);
		for (int i = 0; i < np && rc == 0; i++) {
			struct start_job *j = &jobs[i];

			if (j->failed)
				rc = engine_fail(r, "starting %s: %s", j->p->name,
				    j->err);
			else if (j->ready && j->ev != NULL) {
				event_free(j->ev);
				j->ev = NULL;
				nready++;
				rc = start_done(r, j->p);
			}
		}
		if (rc == 0 && nready < np && clock_mono_ms() >= deadline)
			rc = engine_fail(r,
			    "start: %d of %d peers ready within the "
			    "step's bound", nready, np);
		if (rc == 0 && engine_housekeep(r) == -1)
			rc = -1;
	}
	for (int i = 0; i < np; i++) {
		if (jobs[i].ev != NULL)
			event_free(jobs[i].ev);
		if (!jobs[i].ready)
			fleet_ready_abandon(jobs[i].p);
	}
	free(jobs);
	return rc;
}

static int	signal_one(struct run *, struct peer *, const char *, int,
		    uint64_t);

static int
act_signal(struct run *r, const struct step *s, int sig, uint64_t deadline)
{
	struct peer *ps[FLEET_MAX_PEERS];
	const char *action = s->action;
	json_t *sel = s->u.peer.peer;
	int np = engine_select(r, sel, ps, FLEET_MAX_PEERS,
	    json_is_string(sel));

	if (np <= 0)
		return engine_fail(r, "%s: no such peer", action);
	for (int i = 0; i < np; i++)
		if (signal_one(r, ps[i], action, sig, deadline) == -1)
			return -1;
	return 0;
}

static int
signal_one(struct run *r, struct peer *p, const char *action, int sig,
    uint64_t deadline)
{
	if (!fleet_live(p))
		return engine_fail(r, "%s: %s is not running (%s)", action,
		    p->name, fleet_state_name(p->state));
	/* Its history first: after a kill nobody can ask it. */
	if (sig == SIGTERM || sig == SIGKILL || sig == SIGSTOP) {
		if (r->had_take_step)
			history_takes_of(r, p);
		if (history_loads(r, p, sig != SIGSTOP) == -1)
			return -1;
	}
	engine_timeline(r, "signal", json_pack("{s:i, s:s, s:I}", "peer", p->index,
	    "signal", sigabbrev_np(sig), "pid", (json_int_t)p->pid));
	engine_fault_note(r, "%s %s (SIG%s to pid %d)", action, p->name,
	    sigabbrev_np(sig), (int)p->pid);
	if (fleet_signal(p, sig) == -1)
		return engine_fail(r, "%s: kill(%d): %s", action, (int)p->pid,
		    strerror(errno));
	if (sig == SIGTERM || sig == SIGKILL) {
		uint64_t now = clock_mono_ms();

		if (!fleet_wait_exit(&r->fleet, p, now < deadline ?
		    (int)(deadline - now) : 0))
			return engine_fail(r, "%s: %s did not exit", action,
			    p->name);
		if (sig == SIGTERM && !(WIFEXITED(p->exit_status) &&
		    WEXITSTATUS(p->exit_status) == 0))
			engine_note(r, "%s exited with status 0x%x after SIGTERM",
			    p->name, p->exit_status);
	}
	return 0;
}

static int
act_stop(struct run *r, const struct step *s, uint64_t deadline)
{
	return act_signal(r, s, SIGTERM, deadline);
}

static int
act_kill(struct run *r, const struct step *s, uint64_t deadline)
{
	return act_signal(r, s, SIGKILL, deadline);
}

static int
act_pause(struct run *r, const struct step *s, uint64_t deadline)
{
	return act_signal(r, s, SIGSTOP, deadline);
}

static int
act_resume(struct run *r, const struct step *s, uint64_t deadline)
{
	return act_signal(r, s, SIGCONT, deadline);
}

static int
act_restart(struct run *r, const struct step *s, uint64_t deadline)
{
	struct peer *ps[FLEET_MAX_PEERS];
	char *seeds[3];
	int ns, np;

	(void)deadline;
	np = engine_select(r, s->u.peer.peer, ps, FLEET_MAX_PEERS, false);
	if (np <= 0)
		return engine_fail(r, "restart: no such peer");
	for (int i = 0; i < np; i++) {
		struct peer *p = ps[i];

		if (fleet_live(p)) {
			if (json_is_string(s->u.peer.peer))
				continue;	/* "all": the ones that are down */
			return engine_fail(r, "restart: %s is still running",
			    p->name);
		}
		ns = live_seeds(r, p, seeds, 3);
		p->restarts++;
		p->takes_seen = 0;
		if (start_peer(r, p, seeds, ns) == -1)
			return -1;
		engine_fault_note(r, "restart %s (restart %u, pid %d)", p->name,
		    p->restarts, (int)p->pid);
	}
	return 0;
}

static int
act_join(struct run *r, const struct step *s, uint64_t deadline)
{
	json_t *knobs = s->u.join.knobs;
	struct peer *p;
	char *seeds[3];
	int ns;

	(void)deadline;
	if ((p = fleet_add(&r->fleet, json_is_object(knobs) ? knobs : NULL)) ==
	    NULL)
		return engine_fail(r, "join: too many peers");
	ns = live_seeds(r, p, seeds, 3);
	return start_peer(r, p, seeds, ns);
}

static int
act_connect(struct run *r, const struct step *s, uint64_t deadline)
{
	struct peer *from = engine_peer(r, s->u.connect.from);
	struct peer *to = engine_peer(r, s->u.connect.to);
	char err[256];
	json_t *args, *res;

	(void)deadline;
	if (from == NULL || to == NULL)
		return engine_fail(r, "connect: no such peer");
	args = json_pack("{s:s}", "addr", to->listen);
	res = engine_call(r, from, "connect", args, CALL_MS, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return engine_fail(r, "connect: %s", err);
	json_decref(res);
	return 0;
}

/*
 * Wait for the loads called name on ps to end, within deadline, the
 * progress line counting their entries written; each load's last status
 * (written, elapsed_s, rate_achieved) appended to ends when not NULL.
 */
static int
wait_loads(struct run *r, struct peer **ps, int np, const char *name,
    uint64_t deadline, json_t *ends)
{
	uint64_t done = 0;
	char err[256];

	r->prog_what = "writes";
	for (int i = 0; i < np; i++) {
		for (;;) {
			json_t *args = json_pack("{s:s, s:s}", "op", "status",
			    "name", name), *res, *l;
			bool running;

			res = engine_call(r, ps[i], "load", args, CALL_MS, err,
			    sizeof(err));
			json_decref(args);
			if (res == NULL)
				return engine_fail(r, "%s: %s", name, err);
			l = json_array_get(json_object_get(res, "loads"), 0);
			running = json_is_true(json_object_get(l, "running"));
			r->prog_total = (uint64_t)json_integer_value(
			    json_object_get(l, "count")) * (uint64_t)np;
			r->prog_done = done + (uint64_t)json_integer_value(
			    json_object_get(l, "written"));
			if (!running) {
				done = r->prog_done;
				if (ends != NULL)
					json_array_append(ends, l);
			}
			json_decref(res);
			if (!running)
				break;
			if (clock_mono_ms() >= deadline)
				return engine_fail(r,
				    "%s: not done within its bound", name);
			if (engine_housekeep(r) == -1)
				return -1;
			engine_nap(r);
		}
	}
	return 0;
}

/* Start an in-peer load named name on each peer: op, name, then keys. */
static int
start_loads(struct run *r, struct peer **ps, int np, const char *name,
    const char *op, json_t *keys)
{
	char err[256];
	int rc = 0;

	for (int i = 0; i < np && rc == 0; i++) {
		json_t *args = json_pack("{s:s, s:s}", "op", op, "name", name),
		    *res;

		json_object_update(args, keys);
		res = engine_call(r, ps[i], "load", args, CALL_MS, err,
		    sizeof(err));
		json_decref(args);
		if (res == NULL)
			rc = engine_fail(r, "%s: %s", name, err);
		json_decref(res);
	}
	json_decref(keys);
	return rc;
}

/*
 * Start a bulk load (peerd's load "bulk") named name on p; type and
 * lease_ms a write step's own (a reconcile step has none: NULL, -1).
 */
static int
bulk_start(struct run *r, struct peer *p, const char *name, json_int_t seed,
    json_int_t count, json_int_t from, json_int_t stamp_ms,
    json_int_t payload_bytes, const char *type, json_int_t lease_ms)
{
	char err[256];
	json_t *args, *res;

	args = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "op", "bulk",
	    "name", name, "seed", seed, "count", count, "from", from,
	    "stamp_ms", stamp_ms, "payload_bytes", payload_bytes);
	if (type != NULL)
		json_object_set_new(args, "type", json_string(type));
	if (lease_ms >= 0)
		json_object_set_new(args, "lease_ms", json_integer(lease_ms));
	res = engine_call(r, p, "load", args, CALL_MS, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return engine_fail(r, "%s: %s", name, err);
	json_decref(res);
	return 0;
}

/*
 * A write step of more than bulk_above entries a peer: each selected
 * writer's entries (a bulk key seeded by the step's name and the writer's
 * index, so every step and writer its own) are bulk-loaded by every live
 * peer at once, as if the writer's gossip had already reached them: a big
 * space without signing, gossiping and verifying each entry as it is
 * written.  The history takes each set's acknowledgements from the first
 * live peer.
 */
static int
write_bulk(struct run *r, const struct step *s, struct peer **ws, int nw,
    uint64_t deadline)
{
	const struct step_write *wr = &s->u.write;
	struct peer *ps[FLEET_MAX_PEERS];
	const char *name = s->name;
	json_int_t stamp = (json_int_t)(time(NULL) * 1000);
	uint32_t h = 2166136261u;
	char ln[96];
	int np = 0;

	for (const char *c = name; *c != '\0'; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;	/* FNV-1a */
	for (int i = 0; i < r->fleet.npeers; i++)
		if (fleet_live(r->fleet.peers[i]))
			ps[np++] = r->fleet.peers[i];
	for (int w = 0; w < nw; w++) {
		snprintf(ln, sizeof(ln), nw > 1 ? "%s.%d" : "%s", name,
		    ws[w]->index);
		for (int i = 0; i < np; i++)
			if (bulk_start(r, ps[i], ln, (json_int_t)(h & 0x7fffffff) +
			    ws[w]->index, wr->count, 0, stamp, wr->payload_bytes,
			    wr->type, wr->lease_ms) == -1)
				return -1;
		if (wait_loads(r, ps, np, ln, deadline, NULL) == -1 ||
		    history_writes(r, ps[0], ln, "status", true) == -1)
			return -1;
	}
	return 0;
}

/*
 * A waited write step's rate, asked (the step's, per writer) and achieved
 * (each writer's entries over its load's time, averaged), into the notes
 * and r->rates for the summary.
 */
static void
write_rates(struct run *r, const struct step *s, json_t *ends)
{
	double sum = 0, secs = 0;
	json_int_t written = 0;
	json_t *l;
	size_t i;

	json_array_foreach(ends, i, l) {
		sum += json_number_value(json_object_get(l, "rate_achieved"));
		written += json_integer_value(json_object_get(l, "written"));
		secs = fmax(secs, json_number_value(json_object_get(l,
		    "elapsed_s")));
	}
	if (json_array_size(ends) == 0)
		return;
	sum /= (double)json_array_size(ends);
	json_array_append_new(r->rates, json_pack("{s:s, s:I, s:i, s:f, s:f, "
	    "s:f}", "step", s->name, "written", written, "writers",
	    (int)json_array_size(ends), "seconds", secs, "rate_asked",
	    s->u.write.rate, "rate_achieved", sum));
	engine_note(r, "write step %s: %lld entries by %zu writer%s in %.3g s; "
	    "rate asked %g/s a writer%s, achieved %.1f/s a writer", s->name,
	    (long long)written, json_array_size(ends),
	    json_array_size(ends) == 1 ? "" : "s", secs, s->u.write.rate,
	    s->u.write.rate == 0 ? " (0: as fast as it can)" : "", sum);
}

static int
act_write(struct run *r, const struct step *s, uint64_t deadline)
{
	const struct step_write *w = &s->u.write;
	struct peer *ps[FLEET_MAX_PEERS];
	const char *name = s->name;
	json_t *ends;
	int np;

	gather_window_open(r);
	np = engine_select(r, w->peer, ps, FLEET_MAX_PEERS, true);
	if (np <= 0)
		return engine_fail(r, "%s: no live peer selected", name);
	if (w->bulk_above >= 0 && w->count > w->bulk_above)
		return write_bulk(r, s, ps, np, deadline);
	if (start_loads(r, ps, np, name, "write", json_pack("{s:I, s:f, s:s, "
	    "s:I, s:I}", "count", w->count, "rate", w->rate, "type", w->type,
	    "payload_bytes", w->payload_bytes, "lease_ms", w->lease_ms)) == -1)
		return -1;
	if (!w->wait) {
		for (int i = 0; i < np; i++)
			history_load_add(r, ps[i], name);
		return 0;
	}
	ends = json_array();
	if (wait_loads(r, ps, np, name, deadline, ends) == -1) {
		json_decref(ends);
		return -1;
	}
	write_rates(r, s, ends);
	json_decref(ends);
	for (int i = 0; i < np; i++)
		if (history_writes(r, ps[i], name, "status", true) == -1)
			return -1;
	return 0;
}

/*
 * How often a take step asks the peers for their wins: each look is a
 * control call on every peer, so at the engine's 20 ms nap it was 50 calls
 * a second a peer, a tenth of a 3-peer fleet's CPU during the takes.  The
 * step's end comes from the winners' stamps, so the look's period bounds
 * only how long the workers run on after the last task (they find nothing
 * and wait --take-retry-ms between scans).
 */
#define TAKE_LOOK_MS	250

static int
act_take(struct run *r, const struct step *s, uint64_t deadline)
{
	const struct step_take *t = &s->u.take;
	struct peer *ps[FLEET_MAX_PEERS];
	const char *name = s->name;
	json_int_t count = t->count;	/* -1: null, every task written */
	char err[256];
	int np;

	np = engine_select(r, t->peer, ps, FLEET_MAX_PEERS, true);
	if (np <= 0)
		return engine_fail(r, "%s: no live peer selected", name);
	r->had_take_step = true;
	if (count <= 0)
		history_loads(r, NULL, false);
	r->take_target = count > 0 ? (uint64_t)count :
	    json_object_size(r->writes);
	gather_take_cpu_mark(r);
	r->take_start_ms = clock_mono_ms();
	r->take_end_ms = 0;
	if (start_loads(r, ps, np, name, "take", json_pack("{s:I, s:s, s:b, "
	    "s:I}", "workers", t->workers, "type", t->type, "complete",
	    t->complete, "timeout_ms", t->timeout_ms)) == -1)
		return -1;
	if (!t->wait)
		return 0;
	r->prog_what = "takes";
	r->prog_total = r->take_target;
	for (uint64_t look = 0;;) {
		if (clock_mono_ms() >= look) {
			history_takes(r);
			look = clock_mono_ms() + TAKE_LOOK_MS;
		}
		r->prog_done = history_taken(r);
		if (history_taken(r) >= r->take_target)
			break;
		if (clock_mono_ms() >= deadline)
			return engine_fail(r,
			    "%s: %zu of %llu tasks taken within its "
			    "bound", name, history_taken(r),
			    (unsigned long long)r->take_target);
		if (engine_housekeep(r) == -1)
			return -1;
		engine_nap(r);
	}
	/* When the last task fell, by its winner's stamp: not when we looked. */
	r->take_end_ms = history_nth_taken_us(r, r->take_target) / 1000;
	if (r->take_end_ms <= r->take_start_ms)
		r->take_end_ms = clock_mono_ms();
	for (int i = 0; i < np; i++) {
		json_t *args = json_pack("{s:s, s:s}", "op", "stop", "name", name),
		    *res;

		if (!fleet_live(ps[i]))
			continue;
		res = engine_call(r, ps[i], "load", args, CALL_MS, err,
		    sizeof(err));
		json_decref(args);
		json_decref(res);
	}
	history_takes(r);
	return 0;
}

/* The fault step in words, into the notes, with the layer it acts in. */
static void
fault_describe(struct run *r, const struct step_fault *f, const char *layer)
{
	json_t *part = f->partition;
	char *sel = f->peer != NULL ? json_dumps(f->peer, JSON_ENCODE_ANY |
	    JSON_COMPACT) : NULL;
	char how[120];

	snprintf(how, sizeof(how), "at layer %s (%s)", layer,
	    strcmp(layer, "net") == 0 ? "nft in the peers' namespaces, "
	    "the kernel's" : "peerd's own filter");
	if (json_is_array(part)) {
		char *g = json_dumps(part, JSON_COMPACT);

		engine_fault_note(r, "partition %s %s", g, how);
		free(g);
	} else if (f->clear)
		engine_fault_note(r, "faults cleared on peers %s %s",
		    sel ? sel : "?", how);
	else
		engine_fault_note(r,
		    "fault on peers %s toward %s: drop %g, delay %lld ms, "
		    "jitter %lld ms %s", sel ? sel : "?", f->target >= 0 ?
		    "one peer" : "all", f->drop, (long long)f->delay_ms,
		    (long long)f->jitter_ms, how);
	free(sel);
}

/* Whether peer index k is in one of part's groups other than self's. */
static bool
fault_cut_from(json_t *part, int self, json_int_t k)
{
	json_t *g, *v;
	size_t gi, vi;
	bool self_in, k_in, mine = false, cut = false;

	json_array_foreach(part, gi, g) {
		self_in = k_in = false;
		json_array_foreach(g, vi, v) {
			self_in |= json_integer_value(v) == self;
			k_in |= json_integer_value(v) == k;
		}
		mine |= self_in;
		cut |= k_in && !self_in;
	}
	return mine && cut;
}

/* The host of a listen address "HOST:PORT" into buf. */
static const char *
fault_host(const char *listen, char *buf, size_t len)
{
	const char *colon = strrchr(listen, ':');

	snprintf(buf, len, "%.*s", colon ? (int)(colon - listen) :
	    (int)strlen(listen), listen);
	return buf;
}

/* One peer's share of a fault step in the kernel (the launcher's). */
static int
fault_net(struct run *r, const struct step_fault *f, struct peer *p)
{
	struct launch_fault nf = { .clear = f->clear, .drop = f->drop,
	    .partition = json_is_array(f->partition) };
	const char *cut[FLEET_MAX_PEERS];
	char hosts[FLEET_MAX_PEERS][64], target[64], err[400];
	int rc;

	if (json_is_array(f->partition))
		for (int k = 0; k < r->fleet.npeers; k++)
			if (r->fleet.peers[k]->listen[0] != '\0' &&
			    fault_cut_from(f->partition, p->index, k)) {
				cut[nf.ncut] = fault_host(
				    r->fleet.peers[k]->listen, hosts[nf.ncut],
				    sizeof(hosts[0]));
				nf.ncut++;
			}
	nf.cut = cut;
	if (f->target >= 0 && f->target < r->fleet.npeers) {
		if (r->fleet.peers[f->target]->listen[0] == '\0')
			return engine_fail(r, "fault: the target p%lld has no "
			    "address yet (never started)", (long long)f->target);
		nf.target = fault_host(r->fleet.peers[f->target]->listen,
		    target, sizeof(target));
	}
	if (isnan(nf.drop))
		nf.drop = 0;
	engine_timeline(r, "fault", json_pack("{s:i, s:s, s:b, s:i, s:f}",
	    "peer", p->index, "layer", "net", "clear", f->clear, "cut",
	    nf.ncut, "drop", nf.drop));
	rc = r->fleet.launch->net_fault(&r->fleet, p, &nf, err, sizeof(err));
	return rc == 0 ? 0 : engine_fail(r, "fault: %s", err);
}

/* One peer's share of a fault step in peerd's own filter. */
static int
fault_peer(struct run *r, const struct step_fault *f, struct peer *p)
{
	json_t *part = f->partition, *args, *res;
	char err[256];

	if (f->clear)
		args = json_pack("{s:b}", "clear", 1);
	else if (json_is_array(part)) {
		/* Cut this peer off from every peer outside its group. */
		json_t *cut = json_array();

		for (int k = 0; k < r->fleet.npeers; k++)
			if (fault_cut_from(part, p->index, k))
				json_array_append_new(cut, json_string(
				    r->fleet.peers[k]->peer_id));
		args = json_pack("{s:o}", "partition", cut);
	} else {
		const char *peer = "*";

		if (f->target >= 0 && f->target < r->fleet.npeers)
			peer = r->fleet.peers[f->target]->peer_id;
		args = json_pack("{s:s, s:f, s:I, s:I}", "peer", peer,
		    "drop", f->drop, "delay_ms", f->delay_ms,
		    "jitter_ms", f->jitter_ms);
	}
	engine_timeline(r, "fault", json_pack("{s:i, s:s, s:O}", "peer",
	    p->index, "layer", "peer", "args", args));
	res = engine_call(r, p, "fault", args, CALL_MS, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return engine_fail(r, "fault: %s", err);
	json_decref(res);
	return 0;
}

/*
 * A fault step, in the layer it names or the launcher's default
 * (launch_fault_layer): the kernel's network (nft, netns launcher) or
 * peerd's own filter.  launch_check refused before the run a layer the
 * launcher lacks.
 */
static int
act_fault(struct run *r, const struct step *s, uint64_t deadline)
{
	const struct step_fault *f = &s->u.fault;
	const char *layer = launch_fault_layer(r->fleet.launch, f->layer);
	bool net = strcmp(layer, "net") == 0;
	struct peer *ps[FLEET_MAX_PEERS];
	int np;

	(void)deadline;
	if (net && r->fleet.launch->net_fault == NULL)
		return engine_fail(r, "fault: the %s launcher has no network "
		    "layer", r->fleet.launch->name);
	np = engine_select(r, json_is_array(f->partition) ? NULL : f->peer,
	    ps, FLEET_MAX_PEERS, true);
	if (np < 0)
		return engine_fail(r, "fault: a peer index out of range");
	fault_describe(r, f, layer);
	for (int i = 0; i < np; i++)
		if ((net ? fault_net(r, f, ps[i]) : fault_peer(r, f, ps[i])) ==
		    -1)
			return -1;
	return 0;
}

static int
act_publish(struct run *r, const struct step *s, uint64_t deadline)
{
	const struct step_publish *pb = &s->u.publish;
	struct peer *p = engine_peer(r, pb->peer);
	double mib = pb->mebibytes;
	uint64_t now = clock_mono_ms();
	char err[256];
	json_t *args, *res;

	if (p == NULL || !fleet_live(p))
		return engine_fail(r, "publish: the publisher is not running");
	r->swarm_size = floor(mib * 1048576.0);
	args = json_pack("{s:I, s:I, s:I}", "size", (json_int_t)r->swarm_size,
	    "seed", pb->seed, "piece_kib", pb->piece_kib);
	res = engine_call(r, p, "publish", args, now < deadline ?
	    (int)(deadline - now) : 1000, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return engine_fail(r, "publish: %s", err);
	snprintf(r->swarm_cid, sizeof(r->swarm_cid), "%s",
	    json_string_value(json_object_get(res, "cid")));
	snprintf(r->swarm_sha, sizeof(r->swarm_sha), "%s",
	    json_string_value(json_object_get(res, "sha256")));
	r->swarm_publisher = p->index;
	engine_timeline(r, "published", json_pack("{s:i, s:s, s:s, s:O, s:O}",
	    "peer", p->index, "cid", r->swarm_cid, "sha256", r->swarm_sha,
	    "size", json_object_get(res, "size"), "pieces",
	    json_object_get(res, "pieces")));
	json_decref(res);
	return 0;
}

static int
act_fetch(struct run *r, const struct step *s, uint64_t deadline)
{
	struct peer *ps[FLEET_MAX_PEERS];
	char err[256];
	int np;

	if (r->swarm_cid[0] == '\0')
		return engine_fail(r, "fetch: nothing was published");
	np = engine_select(r, s->u.fetch.peer, ps, FLEET_MAX_PEERS, true);
	if (np <= 0)
		return engine_fail(r, "fetch: no live peer selected");
	for (int i = 0; i < np; i++) {
		json_t *args, *res;

		if (ps[i]->index == r->swarm_publisher)
			continue;
		args = json_pack("{s:s}", "cid", r->swarm_cid);
		res = engine_call(r, ps[i], "fetch", args, 15000, err,
		    sizeof(err));
		json_decref(args);
		if (res == NULL)
			return engine_fail(r, "fetch: %s", err);
		json_decref(res);
		json_array_append_new(r->swarm_fetchers,
		    json_integer(ps[i]->index));
		engine_timeline(r, "fetch_started", json_pack("{s:i, s:s}", "peer",
		    ps[i]->index, "cid", r->swarm_cid));
	}
	if (!s->u.fetch.wait)
		return 0;
	return content_wait_fetched(r, deadline);
}

static int
act_wait(struct run *r, const struct step *s, uint64_t deadline)
{
	const struct step_wait *w = &s->u.wait;
	const char *until = w->until, *measure = w->measure;
	uint64_t start = clock_mono_ms();
	char why[300] = "";

	if (cond_eval(r, w, deadline, why, sizeof(why)) == -2)
		return engine_fail(r, "unknown condition \"%s\"", until);
	for (;;) {
		int ok = cond_eval(r, w, deadline, why, sizeof(why));

		if (ok == -1)
			return -1;
		if (ok)
			break;
		if (clock_mono_ms() >= deadline) {
			if (measure != NULL)
				engine_note(r,
				    "%s: not reached within its bound, so "
				    "%s is UNKNOWN", s->name, measure);
			return engine_fail(r,
			    "%s: \"%s\" not reached within its bound "
			    "(%s)", s->name, until, why);
		}
		if (engine_housekeep(r) == -1)
			return -1;
		engine_nap(r);
	}
	if (measure != NULL)
		engine_measure_wait(r, measure, (double)(clock_mono_ms() -
		    start));
	return 0;
}

static int
act_sleep(struct run *r, const struct step *s, uint64_t deadline)
{
	uint64_t until = clock_mono_ms() + (uint64_t)s->u.sleep.ms;

	(void)deadline;
	while (clock_mono_ms() < until) {
		if (engine_housekeep(r) == -1)
			return -1;
		engine_nap_until(r, until);
	}
	return 0;
}

/*
 * rest: sleep ms with the fleet left alone, and say what its background
 * costs: fleet.rest_* (frames, bytes and CPU per peer per second, from
 * the live peers' counters summed at the start and the end) and a note
 * naming the kinds that spent the most frames.
 */
static int
act_rest(struct run *r, const struct step *s, uint64_t deadline)
{
	json_t *b, *e;
	uint64_t t0 = clock_mono_ms();
	double secs, peers, frames;
	size_t nk;
	char kinds[512], num[NUM_BUF];

	if (s->u.sleep.ms == 0)
		return 0;	/* a scenario's rest turned off */
	b = gather_fleet_sum(r);
	if (act_sleep(r, s, deadline) == -1) {
		json_decref(b);
		return -1;
	}
	e = gather_fleet_sum(r);
	secs = (double)(clock_mono_ms() - t0) / 1000.0;
	peers = json_number_value(json_object_get(e, "peers"));
	if (peers < 1 || secs <= 0 || json_number_value(json_object_get(b,
	    "peers")) != peers) {
		engine_note(r, "rest: %g of the peers answered at the start and %g "
		    "at the end; fleet.rest_* not measured",
		    json_number_value(json_object_get(b, "peers")), peers);
		json_decref(b);
		json_decref(e);
		return 0;
	}
#define REST_D(name) ((json_number_value(json_object_get(e, name)) - \
	json_number_value(json_object_get(b, name))) / peers / secs)
	frames = REST_D("frames.out");
	engine_measure(r, M_FLEET_REST_FRAMES_PER_PEER_S, frames);
	engine_measure(r, M_FLEET_REST_BYTES_PER_PEER_S, REST_D("bytes.out"));
	engine_measure(r, M_FLEET_REST_CPU_MS_PER_PEER_S,
	    REST_D("process.cpu_s") * 1000.0);
	engine_measure(r, M_FLEET_REST_WAKEUPS_PER_PEER_S,
	    REST_D("process.wakeups"));
#undef REST_D
	nk = gather_kinds_text(b, e, peers * secs, 6, kinds, sizeof(kinds));
	engine_note(r, "rest: %.0f peers for %.1f s sent %s frames per peer "
	    "per second (%s); the engine called each peer once every %.1f s "
	    "(the watchdog's round)", peers, secs, num_human(frames, "", num,
	    sizeof(num)), nk ? kinds : "none", (double)watch_round_ms(
	    r->fleet.npeers, r->opts.watch_ms) / 1000.0);
	json_decref(b);
	json_decref(e);
	return 0;
}

static int
act_mark(struct run *r, const struct step *s, uint64_t deadline)
{
	(void)r;
	(void)s;
	(void)deadline;
	return 0;
}

/* ---- set reconciliation ----------------------------------------------- */

/*
 * reconcile: with common > 0 both peers first bulk-load the same common
 * entries; each then loads its own half of diff (seeds from the step's
 * seed, so every step brings a new difference); then peer reconciles
 * with "with" by method, and reconcile.<method>.* are what that cost and
 * whether both replicas ended equal.
 */
/* reconcile.METHOD.KEY from the reconcile command's result of that KEY. */
static const char *const recon_keys[] = { "rounds", "bytes", "record_bytes",
    "records", "ms", NULL };

static int
act_reconcile(struct run *r, const struct step *s, uint64_t deadline)
{
	const struct step_reconcile *rs = &s->u.reconcile;
	struct peer *ps[2] = { engine_peer(r, rs->peer),
	    engine_peer(r, rs->with) };
	const char *method = rs->method;
	const char *name = s->name;
	json_int_t common = rs->common;
	json_int_t diff = rs->diff;
	json_int_t seed = rs->seed;
	json_int_t stamp = (json_int_t)(time(NULL) * 1000);
	json_t *args, *res, *sp[2] = { NULL, NULL };
	char err[256], ln[96], m[80];
	uint64_t now;
	double payload;
	int rc;

	if (ps[0] == NULL || ps[1] == NULL || ps[0] == ps[1] ||
	    !fleet_live(ps[0]) || !fleet_live(ps[1]))
		return engine_fail(r, "%s: needs two different running peers", name);
	if (common > 0) {
		snprintf(ln, sizeof(ln), "%s.common", name);
		for (int i = 0; i < 2; i++)
			if (bulk_start(r, ps[i], ln, 1, common, 0, stamp,
			    rs->payload_bytes, NULL, -1) == -1)
				return -1;
		if (wait_loads(r, ps, 2, ln, deadline, NULL) == -1)
			return -1;
	}
	snprintf(ln, sizeof(ln), "%s.own", name);
	for (int i = 0; i < 2; i++) {
		json_int_t n = i == 0 ? diff / 2 : diff - diff / 2;

		/* after the common entries in FIFO order, as new writes are */
		if (n > 0 && bulk_start(r, ps[i], ln, 1000 + 2 * seed + i, n,
		    1000000000, stamp, rs->payload_bytes, NULL, -1) == -1)
			return -1;
	}
	if (wait_loads(r, ps, 2, ln, deadline, NULL) == -1)
		return -1;
	now = clock_mono_ms();
	args = json_pack("{s:s, s:s, s:I}", "peer", ps[1]->name, "method",
	    method, "timeout_ms", (json_int_t)(deadline > now + 1000 ?
	    deadline - now - 500 : 500));
	res = engine_call(r, ps[0], "reconcile", args, deadline > now ?
	    (int)(deadline - now) : 1000, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return engine_fail(r, "%s: %s", name, err);
	engine_timeline(r, "reconciled", json_pack("{s:s, s:O}", "method", method,
	    "result", res));
	for (const char *const *k = recon_keys; *k != NULL; k++) {
		snprintf(m, sizeof(m), "reconcile.%s.%s", method, *k);
		if (engine_measure_named(r, m, json_number_value(
		    json_object_get(res, *k))) == -1) {
			json_decref(res);
			return -1;
		}
	}
	/* Records over their own encoded size (the digest reports none). */
	payload = json_number_value(json_object_get(res, "payload"));
	snprintf(m, sizeof(m), "reconcile.%s.record_ratio", method);
	if (payload > 0 && engine_measure_named(r, m, json_number_value(
	    json_object_get(res, "record_bytes")) / payload) == -1) {
		json_decref(res);
		return -1;
	}
	json_decref(res);
	for (int i = 0; i < 2; i++) {
		args = json_pack("{s:i}", "limit", 0);
		res = engine_call(r, ps[i], "dump", args, CALL_MS, err,
		    sizeof(err));
		json_decref(args);
		if (res == NULL) {
			json_decref(sp[0]);
			return engine_fail(r, "%s: %s", name, err);
		}
		sp[i] = json_incref(json_object_get(res, "space"));
		json_decref(res);
	}
	snprintf(m, sizeof(m), "reconcile.%s.equal", method);
	rc = engine_measure_named(r, m, json_equal(json_object_get(sp[0],
	    "digest"), json_object_get(sp[1], "digest")) && json_equal(
	    json_object_get(sp[0], "records"), json_object_get(sp[1],
	    "records")));
	json_decref(sp[0]);
	json_decref(sp[1]);
	return rc;
}

/* The engine's half of ACTIONS() (action.h): a step's function by action. */
#define ACTION_EXEC(n, fields, check) [ACTION_##n] = act_##n,
static int (*const actions[ACTION_COUNT])(struct run *, const struct step *,
    uint64_t) = { ACTIONS(ACTION_EXEC) };
#undef ACTION_EXEC

int
act_run(struct run *r, const struct step *s)
{
	uint64_t deadline = clock_mono_ms() + (uint64_t)(1000.0 *
	    (isnan(s->timeout_s) ? 60 : s->timeout_s));

	if (s->act >= ACTION_COUNT)
		return engine_fail(r, "unknown action \"%s\"", s->action);
	return actions[s->act](r, s, deadline);
}

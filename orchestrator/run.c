/*
 * run.c: the scenario engine (see run.h).
 *
 * Single-threaded and synchronous: each step is a loop of short control
 * requests (each with a deadline) and housekeeping — reap children, notice
 * a crash or an interrupt, sample metrics, collect the take history, print
 * progress — until the step's condition holds or its bound runs out.
 * Nothing waits without a bound, and nothing sleeps to wait for a peer:
 * peers are awaited through their ready line and their answers.
 */
#include <sys/stat.h>
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

#include "clock.h"
#include "debug.h"
#include "fleet.h"
#include "hist.h"
#include "identity.h"
#include "log.h"
#include "metrics.h"
#include "run.h"
#include "xmalloc.h"

#define CALL_MS		5000	/* bound on one control request */
#define POLL_NS		(20 * 1000 * 1000)
#define COLLECT_MS	500
#define RAW_RUNS	3	/* tcpstream runs; the median is kept */
#define PROGRESS_MS	10000
#define WATCH_EVERY_MS	1000
#define WATCH_ANSWER_MS	5000

volatile sig_atomic_t run_interrupted;

static uint64_t
rng_next(struct run *r)
{
	uint64_t x = r->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return r->rng = x;
}

static uint64_t
run_ms(const struct run *r)
{
	return clock_mono_ms() - r->t0_ms;
}

/* One line of timeline.ndjson: {"t_ms", "event", ...fields}. */
static void
timeline(struct run *r, const char *event, json_t *fields)
{
	json_t *j = fields ? fields : json_object();

	json_object_set_new(j, "t_ms", json_integer((json_int_t)run_ms(r)));
	json_object_set_new(j, "event", json_string(event));
	if (r->timeline != NULL) {
		json_dumpf(j, r->timeline, JSON_COMPACT | JSON_SORT_KEYS);
		fputc('\n', r->timeline);
		fflush(r->timeline);
	}
	json_decref(j);
}

static void
note(struct run *r, const char *fmt, ...)
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

static int
fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->status != RUN_ERROR) {
		va_start(ap, fmt);
		vsnprintf(r->error, sizeof(r->error), fmt, ap);
		va_end(ap);
		r->status = RUN_ERROR;
		timeline(r, "error", json_pack("{s:s}", "message", r->error));
	}
	return -1;
}

static void
set_measure(struct run *r, const char *name, double value, const char *unit)
{
	json_object_set_new(r->measures, name, json_pack("{s:f, s:s}",
	    "value", value, "unit", unit));
}

/* ---- history ----------------------------------------------------------- */

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
	timeline(r, "take_won", json_pack("{s:s, s:i, s:I}", "id", id, "peer",
	    p->index, "mono_us", mono));
}

/* Fetch p's takes since the last look. */
static void
collect_takes(struct run *r, struct peer *p)
{
	char err[256];
	json_t *args, *res, *v;
	size_t i;

	if (!fleet_live(p) || p->state == PEER_PAUSED)
		return;
	args = json_pack("{s:I}", "since", (json_int_t)p->takes_seen);
	res = fleet_call(p, "takes", args, CALL_MS, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return;
	json_array_foreach(json_object_get(res, "takes"), i, v) {
		history_take(r, p, json_string_value(json_object_get(v, "id")),
		    json_integer_value(json_object_get(v, "mono_us")));
		p->takes_seen++;
	}
	json_decref(res);
}

static void
collect_all_takes(struct run *r)
{
	for (int i = 0; i < r->fleet.npeers; i++)
		collect_takes(r, r->fleet.peers[i]);
	r->last_collect_ms = clock_mono_ms();
}

/* The ids a finished write load acknowledged, into the history. */
static int
collect_writes(struct run *r, struct peer *p, const char *load)
{
	char err[256];
	json_t *args, *res, *l, *v;
	size_t i;

	args = json_pack("{s:s, s:s, s:b}", "op", "status", "name", load,
	    "ids", 1);
	res = fleet_call(p, "load", args, CALL_MS * 4, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return fail(r, "collecting writes from %s: %s", p->name, err);
	l = json_array_get(json_object_get(res, "loads"), 0);
	json_array_foreach(json_object_get(l, "ids"), i, v) {
		const char *id = json_string_value(json_array_get(v, 0));
		json_int_t mono = json_integer_value(json_array_get(v, 1));

		json_object_set_new(r->writes, id, json_pack("{s:i, s:I}",
		    "peer", p->index, "mono_us", mono));
		timeline(r, "write_acked", json_pack("{s:s, s:i, s:s, s:I}",
		    "id", id, "peer", p->index, "load", load, "mono_us", mono));
	}
	if (json_object_get(l, "last_error") != NULL)
		note(r, "%s: write load %s stopped: %s", p->name, load,
		    json_string_value(json_object_get(l, "last_error")));
	timeline(r, "writes_acked", json_pack("{s:i, s:s, s:I}", "peer",
	    p->index, "load", load, "count",
	    (json_int_t)json_array_size(json_object_get(l, "ids"))));
	json_decref(res);
	return 0;
}

/* ---- housekeeping ------------------------------------------------------ */

static void
progress(struct run *r, bool force)
{
	uint64_t now = clock_mono_ms();
	int live = 0;

	if (r->opts.verbose < 0)
		return;
	if (!force && !r->tty && now - r->last_progress_ms < PROGRESS_MS)
		return;
	if (!force && r->tty && now - r->last_progress_ms < 200)
		return;
	r->last_progress_ms = now;
	for (int i = 0; i < r->fleet.npeers; i++)
		live += fleet_live(r->fleet.peers[i]);
	fprintf(stderr, "%s[%s] step %d/%zu %-16s %6.1fs  peers %d/%d  "
	    "written %zu  taken %zu%s", r->tty ? "\r\033[K" : "",
	    json_string_value(json_object_get(r->scn, "name")), r->step + 1,
	    json_array_size(json_object_get(r->scn, "steps")),
	    r->step_name ? r->step_name : "", (double)run_ms(r) / 1000.0,
	    live, r->fleet.npeers, json_object_size(r->writes),
	    json_object_size(r->takes), r->tty ? "" : "\n");
	fflush(stderr);
}

static void
sample(struct run *r)
{
	json_int_t period = json_integer_value(json_object_get(r->scn,
	    "sample_ms"));
	uint64_t now = clock_mono_ms();
	char err[256];

	if (period <= 0 || now - r->last_sample_ms < (uint64_t)period ||
	    r->samples == NULL)
		return;
	r->last_sample_ms = now;
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *m, *c, *line;

		if (p->state != PEER_RUNNING)
			continue;
		if ((m = fleet_call(p, "metrics", NULL, CALL_MS, err,
		    sizeof(err))) == NULL)
			continue;
		c = json_object_get(m, "counters");
		line = json_pack("{s:I, s:i, s:O, s:O, s:O, s:O, s:O, s:O, s:O}",
		    "t_ms", (json_int_t)run_ms(r), "peer", i,
		    "frames.in", json_object_get(c, "frames.in"),
		    "frames.out", json_object_get(c, "frames.out"),
		    "bytes.in", json_object_get(c, "bytes.in"),
		    "bytes.out", json_object_get(c, "bytes.out"),
		    "space.writes", json_object_get(c, "space.writes"),
		    "takes.won", json_object_get(c, "takes.won"),
		    "gauges", json_object_get(m, "gauges"));
		if (line != NULL) {
			json_dumpf(line, r->samples, JSON_COMPACT);
			fputc('\n', r->samples);
			json_decref(line);
		}
		json_decref(m);
	}
	fflush(r->samples);
}

/*
 * The watchdog: every second ask each running peer "hello" (bounded by
 * WATCH_ANSWER_MS).  A peer that does not answer in time is stuck; a fleet
 * whose activity (frames, writes, takes) has not moved and no step ended
 * for --stall-s is stalled.  Either way capture every peer's stacks, dump
 * and trace tail into hang/ and end the run.
 */
static int
watchdog(struct run *r)
{
	uint64_t now = clock_mono_ms();
	char err[256], stuck[400] = "";
	bool moved = false;

	if (r->in_watch || r->opts.stall_s <= 0 ||
	    now - r->last_watch_ms < WATCH_EVERY_MS)
		return 0;
	r->in_watch = true;
	r->last_watch_ms = now;
	if (r->progress_ms == 0)
		r->progress_ms = now;
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *h;

		if (p->state != PEER_RUNNING)
			continue;
		h = fleet_call(p, "hello", NULL, WATCH_ANSWER_MS, err,
		    sizeof(err));
		if (h == NULL) {
			size_t used = strlen(stuck);

			snprintf(stuck + used, sizeof(stuck) - used, "%s%s",
			    used ? ", " : "", p->name);
			continue;
		}
		p->answered_ms = clock_mono_ms();
		if ((uint64_t)json_integer_value(json_object_get(h, "activity"))
		    != p->activity) {
			p->activity = (uint64_t)json_integer_value(
			    json_object_get(h, "activity"));
			moved = true;
		}
		json_decref(h);
	}
	if (moved)
		r->progress_ms = clock_mono_ms();
	r->in_watch = false;
	if (stuck[0] != '\0') {
		note(r, "stuck: %s did not answer its control socket within "
		    "%d ms", stuck, WATCH_ANSWER_MS);
		debug_capture_hang(r, "a peer stopped answering");
		return fail(r, "stuck peers: %s (stacks in %s/hang/)", stuck,
		    r->dir);
	}
	if (clock_mono_ms() - r->progress_ms >= (uint64_t)r->opts.stall_s *
	    1000u) {
		note(r, "stall: no step ended and no activity for %d s",
		    r->opts.stall_s);
		debug_capture_hang(r, "no progress");
		return fail(r, "stalled for %d s in step %s (stacks in %s/hang/)",
		    r->opts.stall_s, r->step_name ? r->step_name : "?", r->dir);
	}
	return 0;
}

/* Everything a waiting loop does between two looks. -1: stop the run. */
static int
housekeep(struct run *r)
{
	if (run_interrupted)
		return fail(r, "interrupted by a signal");
	if (fleet_sigchld && fleet_reap(&r->fleet) > 0) {
		for (int i = 0; i < r->fleet.npeers; i++) {
			struct peer *p = r->fleet.peers[i];
			int st = p->exit_status;

			if (p->state != PEER_CRASHED)
				continue;
			note(r, "%s (pid exited) crashed: %s %d; see %s/stderr.log",
			    p->name, WIFSIGNALED(st) ? "signal" : "exit status",
			    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
			    p->dir);
			timeline(r, "crash", json_pack("{s:i, s:i}", "peer", i,
			    "status", st));
			return fail(r, "%s crashed", p->name);
		}
	}
	if (r->had_take_step && clock_mono_ms() - r->last_collect_ms >=
	    COLLECT_MS)
		collect_all_takes(r);
	sample(r);
	if (watchdog(r) == -1)
		return -1;
	progress(r, false);
	return 0;
}

static void
nap(void)
{
	struct timespec ts = { 0, POLL_NS };

	nanosleep(&ts, NULL);
}

/* ---- selectors and peers ----------------------------------------------- */

static int
select_peers(struct run *r, json_t *sel, struct peer **out, int max,
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

static struct peer *
one_peer(struct run *r, json_t *step, const char *key)
{
	struct peer *p[1];
	json_t *sel = json_object_get(step, key);

	if (json_is_array(sel) && json_array_size(sel) == 1)
		sel = json_array_get(sel, 0);
	if (!json_is_integer(sel) || select_peers(r, sel, p, 1, false) != 1)
		return NULL;
	return p[0];
}

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
run_index_listed(const char *list, int k)
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
	char path[64], buf[512], *c;
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	if ((c = strrchr(buf, ')')) == NULL || c[1] == '\0')
		return '?';
	return c[2];
}

/* A held peer: say how to attach, then wait (bounded) until continued. */
static int
await_held(struct run *r, struct peer *p)
{
	pid_t pid = p->peerd_pid > 0 ? p->peerd_pid : p->pid;
	uint64_t until = clock_mono_ms() + 5000;

	while (proc_state(pid) != 'T' && clock_mono_ms() < until)
		nap();
	fprintf(stderr, "%s%s is held before its loop: pid %d\n"
	    "  attach:   gdb -p %d        (then: continue)\n"
	    "  or go on: kill -CONT %d\n"
	    "  waiting up to %d s ...\n", r->tty ? "\r\033[K" : "", p->name,
	    (int)pid, (int)pid, (int)pid, r->opts.hold_timeout_s);
	timeline(r, "held", json_pack("{s:i, s:I}", "peer", p->index, "pid",
	    (json_int_t)pid));
	until = clock_mono_ms() + (uint64_t)r->opts.hold_timeout_s * 1000u;
	while (proc_state(pid) == 'T' || proc_state(pid) == 't') {
		if (clock_mono_ms() >= until)
			return fail(r, "%s was held and not continued within %d s",
			    p->name, r->opts.hold_timeout_s);
		if (run_interrupted)
			return fail(r, "interrupted by a signal");
		nap();
	}
	timeline(r, "continued", json_pack("{s:i}", "peer", p->index));
	p->answered_ms = clock_mono_ms();
	return 0;
}

static int
start_peer(struct run *r, struct peer *p, char **seeds, int nseeds)
{
	char err[512];
	json_t *cmd;
	char *line;

	p->hold = run_index_listed(r->opts.hold, p->index);
	for (int i = 0; i < r->opts.nwraps; i++) {
		char *eq = strchr(r->opts.wraps[i], '=');
		char which[64];

		if (eq == NULL || (size_t)(eq - r->opts.wraps[i]) >= sizeof(which))
			continue;
		snprintf(which, sizeof(which), "%.*s",
		    (int)(eq - r->opts.wraps[i]), r->opts.wraps[i]);
		if (run_index_listed(which, p->index) &&
		    fleet_set_wrap(p, eq + 1) == -1)
			return fail(r, "--wrap %s: cannot parse the prefix",
			    r->opts.wraps[i]);
	}
	if (fleet_start(&r->fleet, p, seeds, nseeds, err, sizeof(err)) == -1)
		return fail(r, "starting %s: %s", p->name, err);
	if (p->hold && await_held(r, p) == -1)
		return -1;
	line = fleet_cmdline(p);
	cmd = json_pack("{s:i, s:s, s:I, s:I, s:s, s:s, s:s}", "peer",
	    p->index, "name", p->name, "pid", (json_int_t)p->pid,
	    "peerd_pid", (json_int_t)p->peerd_pid, "listen", p->listen,
	    "peer_id", p->peer_id, "cmdline", line);
	timeline(r, "peer_started", cmd);
	free(line);
	return 0;
}

/* ---- actions ----------------------------------------------------------- */

static int
act_start(struct run *r, json_t *step)
{
	json_t *fleet = json_object_get(r->scn, "fleet");
	json_int_t n = json_integer_value(json_object_get(fleet, "peers"));
	json_t *topo = json_object_get(fleet, "topology");
	json_t *sel = json_object_get(step, "peers");
	struct peer *ps[FLEET_MAX_PEERS];
	int np;

	while (r->fleet.npeers < n)
		if (fleet_add(&r->fleet, NULL) == NULL)
			return fail(r, "too many peers");
	if (sel == NULL || json_is_null(sel))
		sel = json_string("all");
	else
		json_incref(sel);
	np = select_peers(r, sel, ps, FLEET_MAX_PEERS, false);
	json_decref(sel);
	if (np < 0)
		return fail(r, "start: a peer index out of range");
	for (int i = 0; i < np; i++) {
		struct peer *p = ps[i];
		char *seeds[8];
		int ns = 0;

		if (fleet_live(p))
			continue;
		if (p->index > 0) {
			if (json_is_string(topo) && strcmp(json_string_value(topo),
			    "ring") == 0)
				seeds[ns++] = r->fleet.peers[p->index - 1]->listen;
			else if (json_is_object(topo)) {
				json_int_t k = json_integer_value(
				    json_object_get(topo, "random"));

				for (json_int_t j = 0; j < k && ns < 8; j++)
					seeds[ns++] = r->fleet.peers[rng_next(r) %
					    (uint64_t)p->index]->listen;
			} else
				seeds[ns++] = r->fleet.peers[0]->listen;
		}
		if (start_peer(r, p, seeds, ns) == -1)
			return -1;
		if (housekeep(r) == -1)
			return -1;
	}
	return 0;
}

static int	signal_one(struct run *, struct peer *, const char *, int,
		    uint64_t);

static int
act_signal(struct run *r, json_t *step, int sig, uint64_t deadline)
{
	struct peer *ps[FLEET_MAX_PEERS];
	const char *action = json_string_value(json_object_get(step, "action"));
	int np = select_peers(r, json_object_get(step, "peer"), ps,
	    FLEET_MAX_PEERS, json_is_string(json_object_get(step, "peer")));

	if (np <= 0)
		return fail(r, "%s: no such peer", action);
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
		return fail(r, "%s: %s is not running (%s)", action, p->name,
		    fleet_state_name(p->state));
	/* Its history first: after a kill nobody can ask it. */
	if (sig == SIGTERM || sig == SIGKILL || sig == SIGSTOP) {
		if (r->had_take_step)
			collect_takes(r, p);
	}
	timeline(r, "signal", json_pack("{s:i, s:s, s:I}", "peer", p->index,
	    "signal", sigabbrev_np(sig), "pid", (json_int_t)p->pid));
	if (fleet_signal(p, sig) == -1)
		return fail(r, "%s: kill(%d): %s", action, (int)p->pid,
		    strerror(errno));
	if (sig == SIGTERM || sig == SIGKILL) {
		uint64_t now = clock_mono_ms();

		if (!fleet_wait_exit(&r->fleet, p, now < deadline ?
		    (int)(deadline - now) : 0))
			return fail(r, "%s: %s did not exit", action, p->name);
		if (sig == SIGTERM && !(WIFEXITED(p->exit_status) &&
		    WEXITSTATUS(p->exit_status) == 0))
			note(r, "%s exited with status 0x%x after SIGTERM",
			    p->name, p->exit_status);
	}
	return 0;
}

static int
act_restart(struct run *r, json_t *step)
{
	struct peer *ps[FLEET_MAX_PEERS];
	char *seeds[3];
	int ns, np;

	np = select_peers(r, json_object_get(step, "peer"), ps,
	    FLEET_MAX_PEERS, false);
	if (np <= 0)
		return fail(r, "restart: no such peer");
	for (int i = 0; i < np; i++) {
		struct peer *p = ps[i];

		if (fleet_live(p)) {
			if (json_is_string(json_object_get(step, "peer")))
				continue;	/* "all": the ones that are down */
			return fail(r, "restart: %s is still running", p->name);
		}
		ns = live_seeds(r, p, seeds, 3);
		p->restarts++;
		p->takes_seen = 0;
		if (start_peer(r, p, seeds, ns) == -1)
			return -1;
	}
	return 0;
}

static int
act_join(struct run *r, json_t *step)
{
	json_t *knobs = json_object_get(step, "knobs");
	struct peer *p;
	char *seeds[3];
	int ns;

	if ((p = fleet_add(&r->fleet, json_is_object(knobs) ? knobs : NULL)) ==
	    NULL)
		return fail(r, "join: too many peers");
	ns = live_seeds(r, p, seeds, 3);
	return start_peer(r, p, seeds, ns);
}

static int
act_connect(struct run *r, json_t *step)
{
	struct peer *from = one_peer(r, step, "from"), *to = one_peer(r, step,
	    "to");
	char err[256];
	json_t *args, *res;

	if (from == NULL || to == NULL)
		return fail(r, "connect: no such peer");
	args = json_pack("{s:s}", "addr", to->listen);
	res = fleet_call(from, "connect", args, CALL_MS, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return fail(r, "connect: %s", err);
	json_decref(res);
	return 0;
}

static int
wait_loads(struct run *r, struct peer **ps, int np, const char *name,
    uint64_t deadline)
{
	char err[256];

	for (int i = 0; i < np; i++) {
		for (;;) {
			json_t *args = json_pack("{s:s, s:s}", "op", "status",
			    "name", name), *res, *l;
			bool running;

			res = fleet_call(ps[i], "load", args, CALL_MS, err,
			    sizeof(err));
			json_decref(args);
			if (res == NULL)
				return fail(r, "%s: %s", name, err);
			l = json_array_get(json_object_get(res, "loads"), 0);
			running = json_is_true(json_object_get(l, "running"));
			json_decref(res);
			if (!running)
				break;
			if (clock_mono_ms() >= deadline)
				return fail(r, "%s: not done within its bound",
				    name);
			if (housekeep(r) == -1)
				return -1;
			nap();
		}
	}
	return 0;
}

static const char *const write_keys[] = { "count", "rate", "type",
    "payload_bytes", "lease_ms", NULL };
static const char *const take_keys[] = { "workers", "type", "complete",
    "timeout_ms", NULL };

/* Start an in-peer load named after the step, with the step's keys. */
static int
start_loads(struct run *r, struct peer **ps, int np, json_t *step,
    const char *op, const char *const *keys)
{
	json_t *name = json_object_get(step, "name");
	char err[256];

	for (int i = 0; i < np; i++) {
		json_t *args = json_pack("{s:s, s:O}", "op", op, "name", name),
		    *res;

		for (const char *const *k = keys; *k != NULL; k++)
			json_object_set(args, *k, json_object_get(step, *k));
		res = fleet_call(ps[i], "load", args, CALL_MS, err, sizeof(err));
		json_decref(args);
		if (res == NULL)
			return fail(r, "%s: %s", json_string_value(name), err);
		json_decref(res);
	}
	return 0;
}

static int
act_write(struct run *r, json_t *step, uint64_t deadline)
{
	struct peer *ps[FLEET_MAX_PEERS];
	const char *name = json_string_value(json_object_get(step, "name"));
	int np;

	np = select_peers(r, json_object_get(step, "peer"), ps,
	    FLEET_MAX_PEERS, true);
	if (np <= 0)
		return fail(r, "%s: no live peer selected", name);
	if (start_loads(r, ps, np, step, "write", write_keys) == -1)
		return -1;
	if (!json_is_true(json_object_get(step, "wait")))
		return 0;
	if (wait_loads(r, ps, np, name, deadline) == -1)
		return -1;
	for (int i = 0; i < np; i++)
		if (collect_writes(r, ps[i], name) == -1)
			return -1;
	return 0;
}

static size_t
taken_count(struct run *r)
{
	return json_object_size(r->takes);
}

static void	take_cpu_mark(struct run *);

static int
act_take(struct run *r, json_t *step, uint64_t deadline)
{
	struct peer *ps[FLEET_MAX_PEERS];
	const char *name = json_string_value(json_object_get(step, "name"));
	json_int_t count = json_integer_value(json_object_get(step, "count"));
	char err[256];
	int np;

	np = select_peers(r, json_object_get(step, "peer"), ps,
	    FLEET_MAX_PEERS, true);
	if (np <= 0)
		return fail(r, "%s: no live peer selected", name);
	r->had_take_step = true;
	r->take_target = count > 0 ? (uint64_t)count :
	    json_object_size(r->writes);
	take_cpu_mark(r);
	r->take_start_ms = clock_mono_ms();
	r->take_end_ms = 0;
	if (start_loads(r, ps, np, step, "take", take_keys) == -1)
		return -1;
	if (!json_is_true(json_object_get(step, "wait")))
		return 0;
	for (;;) {
		collect_all_takes(r);
		if (taken_count(r) >= r->take_target)
			break;
		if (clock_mono_ms() >= deadline)
			return fail(r, "%s: %zu of %llu tasks taken within its "
			    "bound", name, taken_count(r),
			    (unsigned long long)r->take_target);
		if (housekeep(r) == -1)
			return -1;
		nap();
	}
	r->take_end_ms = clock_mono_ms();
	for (int i = 0; i < np; i++) {
		json_t *args = json_pack("{s:s, s:s}", "op", "stop", "name", name),
		    *res;

		if (!fleet_live(ps[i]))
			continue;
		res = fleet_call(ps[i], "load", args, CALL_MS, err, sizeof(err));
		json_decref(args);
		json_decref(res);
	}
	collect_all_takes(r);
	return 0;
}

static int
act_fault(struct run *r, json_t *step)
{
	struct peer *ps[FLEET_MAX_PEERS];
	json_t *part = json_object_get(step, "partition");
	char err[256];
	int np;

	np = select_peers(r, json_is_array(part) ? NULL :
	    json_object_get(step, "peer"), ps, FLEET_MAX_PEERS, true);
	if (np < 0)
		return fail(r, "fault: a peer index out of range");
	for (int i = 0; i < np; i++) {
		json_t *args, *res;

		if (json_is_true(json_object_get(step, "clear")))
			args = json_pack("{s:b}", "clear", 1);
		else if (json_is_array(part)) {
			/* Cut this peer off from every peer outside its group. */
			json_t *cut = json_array(), *g, *v;
			size_t gi, vi;
			bool mine = false;

			json_array_foreach(part, gi, g) {
				bool in = false;

				json_array_foreach(g, vi, v)
					in |= json_integer_value(v) == ps[i]->index;
				if (in) {
					mine = true;
					continue;
				}
				json_array_foreach(g, vi, v) {
					json_int_t k = json_integer_value(v);

					if (k >= 0 && k < r->fleet.npeers)
						json_array_append_new(cut,
						    json_string(r->fleet.peers[k]->peer_id));
				}
			}
			if (!mine)
				json_array_clear(cut);
			args = json_pack("{s:o}", "partition", cut);
		} else {
			json_t *target = json_object_get(step, "target");
			const char *peer = "*";

			if (json_is_integer(target) &&
			    json_integer_value(target) < r->fleet.npeers)
				peer = r->fleet.peers[json_integer_value(target)]->
				    peer_id;
			args = json_pack("{s:s, s:O, s:O, s:O}", "peer", peer,
			    "drop", json_object_get(step, "drop"),
			    "delay_ms", json_object_get(step, "delay_ms"),
			    "jitter_ms", json_object_get(step, "jitter_ms"));
		}
		timeline(r, "fault", json_pack("{s:i, s:O}", "peer",
		    ps[i]->index, "args", args));
		res = fleet_call(ps[i], "fault", args, CALL_MS, err, sizeof(err));
		json_decref(args);
		if (res == NULL)
			return fail(r, "fault: %s", err);
		json_decref(res);
	}
	return 0;
}

/* ---- the content swarm ------------------------------------------------- */

static int
act_publish(struct run *r, json_t *step, uint64_t deadline)
{
	struct peer *p = one_peer(r, step, "peer");
	double mib = json_number_value(json_object_get(step, "mebibytes"));
	uint64_t now = clock_mono_ms();
	char err[256];
	json_t *args, *res;

	if (p == NULL || !fleet_live(p))
		return fail(r, "publish: the publisher is not running");
	r->swarm_size = floor(mib * 1048576.0);
	args = json_pack("{s:I, s:O, s:O}", "size", (json_int_t)r->swarm_size,
	    "seed", json_object_get(step, "seed"), "piece_kib",
	    json_object_get(step, "piece_kib"));
	res = fleet_call(p, "publish", args, now < deadline ?
	    (int)(deadline - now) : 1000, err, sizeof(err));
	json_decref(args);
	if (res == NULL)
		return fail(r, "publish: %s", err);
	snprintf(r->swarm_cid, sizeof(r->swarm_cid), "%s",
	    json_string_value(json_object_get(res, "cid")));
	snprintf(r->swarm_sha, sizeof(r->swarm_sha), "%s",
	    json_string_value(json_object_get(res, "sha256")));
	r->swarm_publisher = p->index;
	timeline(r, "published", json_pack("{s:i, s:s, s:s, s:O, s:O}",
	    "peer", p->index, "cid", r->swarm_cid, "sha256", r->swarm_sha,
	    "size", json_object_get(res, "size"), "pieces",
	    json_object_get(res, "pieces")));
	json_decref(res);
	return 0;
}

/*
 * The content of a fetcher.  While others still fetch, without the whole
 * blob's SHA-256: hashing a complete copy would take CPU from the fetch
 * being timed.
 */
static json_t *
content_of(struct run *r, struct peer *p, bool sha, char *err, size_t errlen)
{
	json_t *args = json_pack("{s:s, s:b}", "cid", r->swarm_cid, "sha256",
	    sha), *res;

	res = fleet_call(p, "content", args, CALL_MS, err, errlen);
	json_decref(args);
	return res;
}

/* Every fetcher complete; lines every 10 s, a stall after 30 s quiet. */
static int
wait_fetched(struct run *r, uint64_t deadline)
{
	size_t n = json_array_size(r->swarm_fetchers);
	uint64_t *last_gain = xcalloc(n ? n : 1, sizeof(*last_gain));
	json_int_t *last_v = xcalloc(n ? n : 1, sizeof(*last_v));
	bool *stalled = xcalloc(n ? n : 1, sizeof(*stalled));
	uint64_t next_line = clock_mono_ms() + PROGRESS_MS;
	int rc = 0;
	char err[256];

	for (size_t i = 0; i < n; i++)
		last_gain[i] = clock_mono_ms();
	for (;;) {
		size_t done = 0;
		char line[1024] = "";
		bool print = clock_mono_ms() >= next_line;

		for (size_t i = 0; i < n; i++) {
			struct peer *p = r->fleet.peers[json_integer_value(
			    json_array_get(r->swarm_fetchers, i))];
			json_t *c;
			json_int_t v;

			if (!fleet_live(p) || (c = content_of(r, p, false, err,
			    sizeof(err))) == NULL)
				continue;
			v = json_integer_value(json_object_get(c, "verified"));
			if (json_is_true(json_object_get(c, "complete")))
				done++;
			else if (v != last_v[i]) {
				last_v[i] = v;
				last_gain[i] = clock_mono_ms();
				stalled[i] = false;
			} else if (!stalled[i] && clock_mono_ms() -
			    last_gain[i] >= 30000) {
				json_t *args = json_pack("{s:i}", "n", 20), *t;

				stalled[i] = true;
				r->swarm_stalls++;
				note(r, "stall: %s gained no piece for 30 s "
				    "(%lld of %lld verified)", p->name,
				    (long long)v, (long long)json_integer_value(
				    json_object_get(c, "pieces")));
				timeline(r, "stall", json_pack("{s:i, s:I}",
				    "peer", p->index, "verified", v));
				t = fleet_call(p, "trace", args, CALL_MS, err,
				    sizeof(err));
				if (t != NULL && r->opts.verbose >= 0) {
					size_t k;
					json_t *e;

					fprintf(stderr, "%s trace tail:\n", p->name);
					json_array_foreach(json_object_get(t,
					    "events"), k, e)
						fprintf(stderr, "  %s %s\n",
						    json_string_value(
						    json_object_get(e, "cat")),
						    json_string_value(
						    json_object_get(e, "detail")));
				}
				json_decref(t);
				json_decref(args);
			}
			if (print) {
				size_t used = strlen(line);

				snprintf(line + used, sizeof(line) - used,
				    " %s %lld/%lld", p->name, (long long)
				    json_integer_value(json_object_get(c,
				    "verified")), (long long)json_integer_value(
				    json_object_get(c, "pieces")));
			}
			json_decref(c);
		}
		if (print) {
			next_line = clock_mono_ms() + PROGRESS_MS;
			if (r->opts.verbose >= 0)
				fprintf(stderr, "%sswarm: pieces verified:%s\n",
				    r->tty ? "\r\033[K" : "", line);
		}
		if (done == n)
			break;
		if (clock_mono_ms() >= deadline) {
			rc = fail(r, "fetch: %zu of %zu fetchers complete within "
			    "the bound", done, n);
			break;
		}
		if (housekeep(r) == -1) {
			rc = -1;
			break;
		}
		nap();
	}
	free(last_gain);
	free(last_v);
	free(stalled);
	return rc;
}

static int
act_fetch(struct run *r, json_t *step, uint64_t deadline)
{
	struct peer *ps[FLEET_MAX_PEERS];
	char err[256];
	int np;

	if (r->swarm_cid[0] == '\0')
		return fail(r, "fetch: nothing was published");
	np = select_peers(r, json_object_get(step, "peer"), ps,
	    FLEET_MAX_PEERS, true);
	if (np <= 0)
		return fail(r, "fetch: no live peer selected");
	for (int i = 0; i < np; i++) {
		json_t *args, *res;

		if (ps[i]->index == r->swarm_publisher)
			continue;
		args = json_pack("{s:s}", "cid", r->swarm_cid);
		res = fleet_call(ps[i], "fetch", args, 15000, err, sizeof(err));
		json_decref(args);
		if (res == NULL)
			return fail(r, "fetch: %s", err);
		json_decref(res);
		json_array_append_new(r->swarm_fetchers,
		    json_integer(ps[i]->index));
		timeline(r, "fetch_started", json_pack("{s:i, s:s}", "peer",
		    ps[i]->index, "cid", r->swarm_cid));
	}
	if (!json_is_true(json_object_get(step, "wait")))
		return 0;
	return wait_fetched(r, deadline);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The same bytes over one plain TCP stream, now, for the ratio: the median
 * of RAW_RUNS runs, since one loopback stream on two shared cores varies
 * by half from run to run (BENCHMARKS.md); each run is noted.
 */
static void
raw_stream(struct run *r, double bytes)
{
	char tool[700], arg[64], line[512], runs[256] = "";
	double v[RAW_RUNS];
	int out[2], status, got = 0;
	ssize_t n;
	pid_t pid;
	json_t *j;

	snprintf(tool, sizeof(tool), "%s", r->opts.peerd);
	if (strrchr(tool, '/') != NULL)
		snprintf(strrchr(tool, '/') + 1, sizeof(tool) - (size_t)(
		    strrchr(tool, '/') + 1 - tool), "tcpstream");
	else
		snprintf(tool, sizeof(tool), "tcpstream");
	if (access(tool, X_OK) != 0) {
		note(r, "no %s: swarm.raw_stream_mib_s not measured", tool);
		return;
	}
	snprintf(arg, sizeof(arg), "%.0f", bytes);
	for (int k = 0; k < RAW_RUNS; k++) {
		if (pipe(out) == -1)
			break;
		if ((pid = fork()) == 0) {
			dup2(out[1], STDOUT_FILENO);
			close(out[0]);
			execl(tool, tool, "-n", arg, (char *)NULL);
			_exit(127);
		}
		close(out[1]);
		if (pid == -1) {
			close(out[0]);
			break;
		}
		n = read(out[0], line, sizeof(line) - 1);
		close(out[0]);
		waitpid(pid, &status, 0);
		if (n <= 0)
			break;
		line[n] = '\0';
		if ((j = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL)) ==
		    NULL)
			break;
		v[got] = json_number_value(json_object_get(j, "mib_s"));
		json_decref(j);
		if (v[got] <= 0)
			break;
		snprintf(runs + strlen(runs), sizeof(runs) - strlen(runs),
		    "%s%.0f", got ? ", " : "", v[got]);
		got++;
	}
	if (got < RAW_RUNS) {
		note(r, "tcpstream failed: swarm.raw_stream_mib_s not measured");
		return;
	}
	qsort(v, (size_t)got, sizeof(v[0]), cmp_double);
	note(r, "raw stream: %s MiB/s; the median is used", runs);
	set_measure(r, "swarm.raw_stream_mib_s", v[got / 2], "MiB/s");
}

/* Per fetcher: verified, bytes from the seeder and from the others. */
static void
gather_swarm(struct run *r)
{
	const char *pub;
	double total = 0, from_seeder = 0, first_us = 0, last_us = 0;
	size_t i, verified = 0, n = json_array_size(r->swarm_fetchers);
	json_t *ix;
	char err[256];

	if (r->swarm_cid[0] == '\0' || n == 0)
		return;
	pub = r->fleet.peers[r->swarm_publisher]->name;
	json_array_foreach(r->swarm_fetchers, i, ix) {
		struct peer *p = r->fleet.peers[json_integer_value(ix)];
		json_t *c = fleet_live(p) ? content_of(r, p, true, err,
		    sizeof(err)) : NULL, *from, *v;
		double mine = 0, seeder = 0, s_us, e_us;
		const char *k, *sha;
		bool ok;

		if (c == NULL) {
			json_array_append_new(r->swarm_rows, json_pack(
			    "{s:s, s:b}", "name", p->name, "verified", 0));
			continue;
		}
		from = json_object_get(c, "from");
		json_object_foreach(from, k, v) {
			mine += json_number_value(v);
			if (strcmp(k, pub) == 0)
				seeder += json_number_value(v);
		}
		sha = json_string_value(json_object_get(c, "sha256"));
		ok = json_is_true(json_object_get(c, "complete")) && sha != NULL &&
		    strcmp(sha, r->swarm_sha) == 0;
		verified += ok;
		total += mine;
		from_seeder += seeder;
		s_us = json_number_value(json_object_get(c, "start_us"));
		e_us = json_number_value(json_object_get(c, "end_us"));
		if (first_us == 0 || s_us < first_us)
			first_us = s_us;
		if (e_us > last_us)
			last_us = e_us;
		json_array_append_new(r->swarm_rows, json_pack(
		    "{s:s, s:b, s:f, s:f, s:O, s:O}", "name", p->name,
		    "verified", ok, "bytes_from_seeder", seeder,
		    "bytes_from_others", mine - seeder, "seconds",
		    json_object_get(c, "seconds"), "bad_pieces",
		    json_object_get(c, "bad_pieces")));
		json_decref(c);
	}
	set_measure(r, "swarm.verified", (double)verified, "count");
	set_measure(r, "swarm.unverified", (double)(n - verified), "count");
	set_measure(r, "swarm.stalls", (double)r->swarm_stalls, "count");
	if (verified == n && last_us > first_us) {
		double secs = (last_us - first_us) / 1e6;
		json_t *raw;

		set_measure(r, "swarm.wall_ms", secs * 1000.0, "ms");
		set_measure(r, "swarm.aggregate_mib_s", r->swarm_size *
		    (double)n / 1048576.0 / secs, "MiB/s");
		if (total > 0)
			set_measure(r, "swarm.seeder_share", from_seeder / total,
			    "ratio");
		raw_stream(r, r->swarm_size * (double)n);
		raw = json_object_get(json_object_get(r->measures,
		    "swarm.raw_stream_mib_s"), "value");
		if (json_number_value(raw) > 0)
			set_measure(r, "swarm.ratio_to_raw", r->swarm_size *
			    (double)n / 1048576.0 / secs / json_number_value(raw),
			    "ratio");
	}
}

/* ---- conditions -------------------------------------------------------- */

static int
cond_connected(struct run *r, char *why, size_t len)
{
	char err[256];

	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *res, *m;
		size_t k;

		if (p->state != PEER_RUNNING)
			continue;
		if ((res = fleet_call(p, "peers", NULL, CALL_MS, err,
		    sizeof(err))) == NULL) {
			snprintf(why, len, "%s", err);
			return 0;
		}
		for (int j = 0; j < r->fleet.npeers; j++) {
			struct peer *q = r->fleet.peers[j];
			bool linked = false;

			if (q == p || q->state != PEER_RUNNING)
				continue;
			json_array_foreach(json_object_get(res, "members"), k, m)
				if (strcmp(json_string_value(json_object_get(m,
				    "peer_id")), q->peer_id) == 0 &&
				    json_is_true(json_object_get(m, "link")))
					linked = true;
			if (!linked) {
				snprintf(why, len, "%s has no link to %s",
				    p->name, q->name);
				json_decref(res);
				return 0;
			}
		}
		json_decref(res);
	}
	return 1;
}

static int
cond_converged(struct run *r, char *why, size_t len)
{
	char err[256];
	json_int_t first = 0;
	bool have = false;

	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *args, *res;
		json_int_t d;

		if (p->state != PEER_RUNNING)
			continue;
		args = json_pack("{s:i}", "limit", 0);
		res = fleet_call(p, "dump", args, CALL_MS, err, sizeof(err));
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
cond_visible(struct run *r, char *why, size_t len)
{
	char err[256];

	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *res, *have, *v;
		const char *id;
		size_t k, missing = 0;

		if (p->state != PEER_RUNNING)
			continue;
		if ((res = fleet_call(p, "ids", NULL, CALL_MS * 2, err,
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
		if ((m = fleet_call(p, "metrics", NULL, CALL_MS, err,
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

static bool
compare(double a, const char *op, double b)
{
	if (strcmp(op, "<") == 0) return a < b;
	if (strcmp(op, "<=") == 0) return a <= b;
	if (strcmp(op, "==") == 0) return a == b;
	if (strcmp(op, "!=") == 0) return a != b;
	if (strcmp(op, ">=") == 0) return a >= b;
	if (strcmp(op, ">") == 0) return a > b;
	return false;
}

static int
act_wait(struct run *r, json_t *step, uint64_t deadline)
{
	const char *until = json_string_value(json_object_get(step, "until"));
	const char *measure = json_string_value(json_object_get(step,
	    "measure"));
	uint64_t start = clock_mono_ms();
	char why[300] = "";

	for (;;) {
		int ok = 0;

		if (strcmp(until, "connected") == 0)
			ok = cond_connected(r, why, sizeof(why));
		else if (strcmp(until, "converged") == 0)
			ok = cond_converged(r, why, sizeof(why));
		else if (strcmp(until, "visible") == 0)
			ok = cond_visible(r, why, sizeof(why));
		else if (strcmp(until, "fetched") == 0) {
			if (wait_fetched(r, deadline) == -1)
				return -1;
			ok = 1;
		} else if (strcmp(until, "taken") == 0) {
			collect_all_takes(r);
			ok = taken_count(r) >= json_object_size(r->writes);
			snprintf(why, sizeof(why), "%zu of %zu taken",
			    taken_count(r), json_object_size(r->writes));
		} else if (strcmp(until, "metric") == 0) {
			const char *m = json_string_value(json_object_get(step,
			    "metric"));
			json_t *mv = json_object_get(json_object_get(r->measures,
			    m), "value");
			bool have = json_is_number(mv);
			double v = have ? json_number_value(mv) : 0;

			if (strncmp(m, "counters.", 9) == 0)
				v = fleet_counter(r, m + 9, &have);

			ok = have && compare(v, json_string_value(
			    json_object_get(step, "op")), json_number_value(
			    json_object_get(step, "value")));
			snprintf(why, sizeof(why), "%s = %g", m, v);
		}
		if (ok)
			break;
		if (clock_mono_ms() >= deadline) {
			if (measure != NULL)
				note(r, "%s: not reached within its bound, so "
				    "%s is UNKNOWN", json_string_value(
				    json_object_get(step, "name")), measure);
			return fail(r, "%s: \"%s\" not reached within its bound "
			    "(%s)", json_string_value(json_object_get(step,
			    "name")), until, why);
		}
		if (housekeep(r) == -1)
			return -1;
		nap();
	}
	if (measure != NULL)
		set_measure(r, measure, (double)(clock_mono_ms() - start), "ms");
	return 0;
}

static int
act_sleep(struct run *r, json_t *step)
{
	uint64_t until = clock_mono_ms() + (uint64_t)json_integer_value(
	    json_object_get(step, "ms"));

	while (clock_mono_ms() < until) {
		if (housekeep(r) == -1)
			return -1;
		nap();
	}
	return 0;
}

static int
run_step(struct run *r, json_t *step)
{
	const char *a = json_string_value(json_object_get(step, "action"));
	json_t *tmo = json_object_get(step, "timeout_s");
	uint64_t deadline = clock_mono_ms() + (uint64_t)(1000.0 *
	    (json_is_number(tmo) ? json_number_value(tmo) : 60));

	if (strcmp(a, "start") == 0) return act_start(r, step);
	if (strcmp(a, "stop") == 0) return act_signal(r, step, SIGTERM, deadline);
	if (strcmp(a, "kill") == 0) return act_signal(r, step, SIGKILL, deadline);
	if (strcmp(a, "pause") == 0) return act_signal(r, step, SIGSTOP, deadline);
	if (strcmp(a, "resume") == 0) return act_signal(r, step, SIGCONT, deadline);
	if (strcmp(a, "restart") == 0) return act_restart(r, step);
	if (strcmp(a, "join") == 0) return act_join(r, step);
	if (strcmp(a, "connect") == 0) return act_connect(r, step);
	if (strcmp(a, "write") == 0) return act_write(r, step, deadline);
	if (strcmp(a, "take") == 0) return act_take(r, step, deadline);
	if (strcmp(a, "fault") == 0) return act_fault(r, step);
	if (strcmp(a, "wait") == 0) return act_wait(r, step, deadline);
	if (strcmp(a, "sleep") == 0) return act_sleep(r, step);
	if (strcmp(a, "mark") == 0) return 0;
	if (strcmp(a, "publish") == 0) return act_publish(r, step, deadline);
	if (strcmp(a, "fetch") == 0) return act_fetch(r, step, deadline);
	return fail(r, "unknown action \"%s\"", a);
}

/* ---- gathering and checks ---------------------------------------------- */

static void
hist_measure(struct run *r, const char *name, struct hist *h)
{
	if (hist_count(h) == 0)
		return;
	json_object_set_new(r->measures, name, json_pack(
	    "{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "unit", "us",
	    "count", (json_int_t)hist_count(h),
	    "p50", (json_int_t)hist_percentile(h, 50),
	    "p90", (json_int_t)hist_percentile(h, 90),
	    "p99", (json_int_t)hist_percentile(h, 99),
	    "p999", (json_int_t)hist_percentile(h, 99.9),
	    "max", (json_int_t)hist_max(h)));
}

static void
write_file_json(const char *path, json_t *j)
{
	if (json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
		log_warnx("cannot write %s", path);
}

/* Metrics of every live peer into its directory and the merged measures. */
static void
gather(struct run *r)
{
	struct metrics_hists all, one;
	double frames_out = 0, bytes_out = 0, bad = 0, rumor_out = 0;
	bool have_metrics = false;
	char err[256], path[700];

	metrics_hists_init(&all);
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *m = NULL, *c, *proc, *row, *v;
		const char *k;

		if (p->state == PEER_PAUSED)
			fleet_signal(p, SIGCONT);
		if (fleet_live(p))
			m = fleet_call(p, "metrics", NULL, CALL_MS, err,
			    sizeof(err));
		row = json_pack("{s:s, s:i, s:s}", "name", p->name, "index", i,
		    "state", fleet_state_name(p->state));
		if (p->pid > 0)
			json_object_set_new(row, "pid", json_integer(p->pid));
		if (m == NULL) {
			json_array_append_new(r->peer_rows, row);
			continue;
		}
		snprintf(path, sizeof(path), "%s/metrics.json", p->dir);
		write_file_json(path, m);
		c = json_object_get(m, "counters");
		proc = json_object_get(m, "process");
		json_object_set(row, "cpu_s", json_object_get(proc, "cpu_s"));
		json_object_set(row, "max_rss_kib", json_object_get(proc,
		    "max_rss_kib"));
		json_object_set(row, "frames_in", json_object_get(c, "frames.in"));
		json_object_set(row, "frames_out", json_object_get(c,
		    "frames.out"));
		json_object_set(row, "bytes_in", json_object_get(c, "bytes.in"));
		json_object_set(row, "bytes_out", json_object_get(c, "bytes.out"));
		json_array_append_new(r->peer_rows, row);
		frames_out += json_number_value(json_object_get(c, "frames.out"));
		bytes_out += json_number_value(json_object_get(c, "bytes.out"));
		json_object_foreach(json_object_get(c, "frames.bad"), k, v)
			bad += json_number_value(v);
		rumor_out += json_number_value(json_object_get(json_object_get(c,
		    "frames.out_by_kind"), "rumor"));
		json_object_foreach(c, k, v) {
			json_t *sum = json_object_get(r->counters, k);

			if (json_is_number(v))
				json_object_set_new(r->counters, k, json_real(
				    json_number_value(v) + (sum ?
				    json_number_value(sum) : 0)));
		}
		metrics_hists_init(&one);
		if (metrics_hists_from_json(&one, json_object_get(m, "latency"))
		    == 0)
			metrics_hists_merge(&all, &one);
		have_metrics = true;
		json_decref(m);
	}
	hist_measure(r, "gossip.write_to_visible", &all.write_to_visible);
	hist_measure(r, "throughput.write_to_take", &all.write_to_take);
	hist_measure(r, "control.rtt", &all.control_rtt);
	if (have_metrics) {
		set_measure(r, "fleet.frames_out", frames_out, "count");
		set_measure(r, "fleet.bytes_out", bytes_out, "bytes");
		set_measure(r, "fleet.bad_frames", bad, "count");
		if (json_object_size(r->writes) > 0) {
			set_measure(r, "gossip.frames_per_write", frames_out /
			    (double)json_object_size(r->writes), "ratio");
			set_measure(r, "gossip.rumor_frames_per_write", rumor_out /
			    (double)json_object_size(r->writes), "ratio");
		}
	}
}

/* The fleet's CPU seconds now (take.cpu_s_per_take counts from here). */
static void
take_cpu_mark(struct run *r)
{
	char err[256];

	r->take_cpu0 = 0;
	r->take_cpu0_ok = true;
	for (int i = 0; i < r->fleet.npeers; i++) {
		json_t *m = NULL;

		if (fleet_live(r->fleet.peers[i]))
			m = fleet_call(r->fleet.peers[i], "metrics", NULL,
			    CALL_MS, err, sizeof(err));
		if (m == NULL) {
			r->take_cpu0_ok = false;
			continue;
		}
		r->take_cpu0 += json_number_value(json_object_get(
		    json_object_get(m, "process"), "cpu_s"));
		json_decref(m);
	}
}

/*
 * CPU seconds of one Ed25519 sign and one verify on this host now, as the
 * mean of n each: the floor of a take's cost is measured, not assumed.
 */
static int
take_crypto_cost(double *sign_s, double *verify_s)
{
	struct identity id;
	uint8_t msg[128], sig[IDENTITY_SIG_LEN];
	const int n = 200;
	struct timespec a, b;

	memset(msg, 0x5c, sizeof(msg));
	if (identity_generate(&id) == -1)
		return -1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (int i = 0; i < n; i++)
		identity_sign(&id, msg, sizeof(msg), sig);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	*sign_s = ((double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9) / n;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (int i = 0; i < n; i++)
		if (identity_verify(id.pub, msg, sizeof(msg), sig) == -1)
			break;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	*verify_s = ((double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9) / n;
	identity_free(&id);
	return 0;
}

/*
 * The take measures, from the metrics.json gather() wrote for each peer:
 * take.claim_to_visible (a claim's monotonic stamp to each other peer
 * holding it), take.retries, take.no_quorum, and the fleet's CPU seconds
 * from the take step's start to the end of the run, per take, beside its
 * floor (one claim sign plus one verify per other peer).  Runs after
 * check_history (it needs history.takes).
 */
static void
gather_takes(struct run *r)
{
	struct metrics_hists all, one;
	double cpu = 0, retries = 0, noq = 0, takes, sign_s, verify_s, floor;
	json_t *m, *c, *tk;
	char path[700];
	int have = 0;

	if (!r->had_take_step)
		return;
	metrics_hists_init(&all);
	for (int i = 0; i < r->fleet.npeers; i++) {
		snprintf(path, sizeof(path), "%s/metrics.json",
		    r->fleet.peers[i]->dir);
		if ((m = json_load_file(path, 0, NULL)) == NULL)
			continue;
		c = json_object_get(m, "counters");
		cpu += json_number_value(json_object_get(json_object_get(m,
		    "process"), "cpu_s"));
		retries += json_number_value(json_object_get(c,
		    "takes.retried"));
		noq += json_number_value(json_object_get(c, "takes.no_quorum"));
		metrics_hists_init(&one);
		if (metrics_hists_from_json(&one, json_object_get(m, "latency"))
		    == 0)
			metrics_hists_merge(&all, &one);
		have++;
		json_decref(m);
	}
	if (have == 0)
		return;
	hist_measure(r, "take.claim_to_visible", &all.claim_to_visible);
	set_measure(r, "take.retries", retries, "count");
	set_measure(r, "take.no_quorum", noq, "count");
	tk = json_object_get(json_object_get(r->measures, "history.takes"),
	    "value");
	takes = json_number_value(tk);
	/* Only when every peer reported: a partial sum is no figure. */
	if (takes <= 0 || have != r->fleet.npeers || !r->take_cpu0_ok ||
	    take_crypto_cost(&sign_s, &verify_s) == -1)
		return;
	cpu -= r->take_cpu0;
	floor = sign_s + (double)(r->fleet.npeers - 1) * verify_s;
	set_measure(r, "take.cpu_ms_per_take", cpu / takes * 1e3, "ms");
	set_measure(r, "take.cpu_floor_ms_per_take", floor * 1e3, "ms");
	set_measure(r, "take.cpu_over_floor", cpu / takes / floor, "ratio");
}

/* Duplicates, tasks never taken, entries lost. */
static void
check_history(struct run *r)
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
		if ((res = fleet_call(p, "ids", NULL, CALL_MS * 2, err,
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
		set_measure(r, "history.duplicates", (double)dup, "count");
		set_measure(r, "history.never_taken", (double)never, "count");
	}
	/* A run that wrote and took nothing has no history to report. */
	if (json_object_size(r->writes) == 0 && !r->had_take_step)
		return;
	if (any_live)
		set_measure(r, "history.lost", (double)lost, "count");
	set_measure(r, "history.writes", (double)json_object_size(r->writes),
	    "count");
	set_measure(r, "history.takes", (double)json_object_size(r->takes),
	    "count");
	if (r->take_end_ms > r->take_start_ms)
		set_measure(r, "throughput.takes_per_s", (double)r->take_target /
		    ((double)(r->take_end_ms - r->take_start_ms) / 1000.0),
		    "ops/s");
}

static void
run_checks(struct run *r)
{
	size_t i;
	json_t *c;
	bool all_pass = true;

	json_array_foreach(json_object_get(r->scn, "checks"), i, c) {
		const char *metric = json_string_value(json_object_get(c,
		    "metric"));
		const char *op = json_string_value(json_object_get(c, "op"));
		const char *stat = json_string_value(json_object_get(c, "stat"));
		double bound = json_number_value(json_object_get(c, "bound"));
		json_t *m = json_object_get(r->measures, metric), *v = NULL;
		const char *result;
		json_t *row;

		if (m == NULL && strncmp(metric, "counters.", 9) == 0 &&
		    json_object_get(r->counters, metric + 9) != NULL) {
			set_measure(r, metric, json_number_value(json_object_get(
			    r->counters, metric + 9)), "count");
			m = json_object_get(r->measures, metric);
		}

		if (m != NULL) {
			if (json_object_get(m, "value") != NULL)
				v = json_object_get(m, "value");
			else
				v = json_object_get(m, stat ? stat : "p99");
		}
		if (v == NULL || !json_is_number(v))
			result = "UNKNOWN";
		else
			result = compare(json_number_value(v), op, bound) ?
			    "PASS" : "FAIL";
		if (strcmp(result, "PASS") != 0)
			all_pass = false;
		row = json_pack("{s:O, s:s, s:s, s:f, s:s}", "name",
		    json_object_get(c, "name"), "metric", metric, "op", op,
		    "bound", bound, "result", result);
		if (stat != NULL)
			json_object_set_new(row, "stat", json_string(stat));
		json_object_set(row, "value", v ? v : json_null());
		json_array_append_new(r->checks, row);
	}
	if (r->status != RUN_ERROR)
		r->status = all_pass ? RUN_PASS : RUN_FAIL;
}

/* ---- the run ----------------------------------------------------------- */

static int
make_run_dir(struct run *r)
{
	char stamp[32], link[700];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	mkdir(r->opts.out, 0755);
	for (int n = 0; n < 100; n++) {
		if (n == 0)
			snprintf(r->dir, sizeof(r->dir), "%s/%s-%s", r->opts.out,
			    json_string_value(json_object_get(r->scn, "name")),
			    stamp);
		else
			snprintf(r->dir, sizeof(r->dir), "%s/%s-%s.%d",
			    r->opts.out, json_string_value(json_object_get(
			    r->scn, "name")), stamp, n);
		if (mkdir(r->dir, 0755) == 0)
			break;
		if (errno != EEXIST)
			return -1;
	}
	snprintf(link, sizeof(link), "%s/latest", r->opts.out);
	unlink(link);
	if (symlink(strrchr(r->dir, '/') + 1, link) == -1)
		log_warn("symlink %s", link);
	return 0;
}

/*
 * After a PASS, with the fleet down, remove the swarm blob's copies that
 * are known good (peers/K/content/CID/data of the publisher and of each
 * fetcher whose copy matched the publisher's SHA-256, which the report
 * keeps): eight copies of a 1 GiB blob would otherwise stay behind in
 * every run.  Any other copy, the manifests and piece maps stay.  A failed
 * run keeps everything, as does --keep-content.
 */
static void
drop_content(struct run *r)
{
	double freed = 0;
	int n = 0;

	if (r->swarm_cid[0] == '\0' || r->status != RUN_PASS ||
	    r->opts.keep_content)
		return;
	for (int i = 0; i < r->fleet.npeers; i++) {
		const char *name = r->fleet.peers[i]->name;
		char path[512];
		struct stat st;
		bool ok = i == r->swarm_publisher;
		size_t k;
		json_t *row;

		/* Only the publisher's and the verified fetchers' copies. */
		json_array_foreach(r->swarm_rows, k, row)
			if (strcmp(json_string_value(json_object_get(row,
			    "name")), name) == 0 && json_is_true(json_object_get(
			    row, "verified")))
				ok = true;
		if (!ok)
			continue;
		snprintf(path, sizeof(path), "%s/content/%s/data",
		    r->fleet.peers[i]->dir, r->swarm_cid);
		if (stat(path, &st) == 0 && unlink(path) == 0) {
			freed += (double)st.st_blocks * 512;
			n++;
		}
	}
	if (n > 0)
		note(r, "removed %d verified copies of the blob (%.0f MiB on "
		    "disk; --keep-content keeps them)", n, freed / 1048576.0);
}


enum run_status
run_scenario(struct run *r, json_t *scn, const struct run_opts *opts)
{
	char path[700];
	json_t *steps = json_object_get(scn, "steps"), *step;
	json_int_t timeout_s;
	uint64_t run_deadline;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->scn = json_incref(scn);
	r->opts = *opts;
	r->measures = json_object();
	r->writes = json_object();
	r->takes = json_object();
	r->notes = json_array();
	r->peer_rows = json_array();
	r->checks = json_array();
	r->counters = json_object();
	r->swarm_fetchers = json_array();
	r->swarm_rows = json_array();
	r->swarm_publisher = -1;
	r->rng = opts->seed ? opts->seed : 0x9e3779b97f4a7c15ull;
	r->tty = isatty(STDERR_FILENO) && opts->verbose >= 0;
	r->t0_ms = clock_mono_ms();
	r->t0_wall_ms = (uint64_t)time(NULL) * 1000u;
	r->step = -1;
	if (make_run_dir(r) == -1) {
		snprintf(r->error, sizeof(r->error), "cannot make a run directory "
		    "under %s: %s", opts->out, strerror(errno));
		r->status = RUN_ERROR;
		return r->status;
	}
	snprintf(path, sizeof(path), "%s/timeline.ndjson", r->dir);
	r->timeline = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/samples.ndjson", r->dir);
	r->samples = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/scenario.json", r->dir);
	write_file_json(path, scn);
	fleet_init(&r->fleet, r->dir, opts->peerd, json_object_get(
	    json_object_get(scn, "fleet"), "knobs"));
	r->fleet.keep = opts->keep;
	r->fleet.seed = opts->seed;
	timeout_s = opts->timeout_s > 0 ? opts->timeout_s :
	    (json_int_t)json_number_value(json_object_get(scn, "timeout_s"));
	if (timeout_s <= 0)
		timeout_s = 300;
	run_deadline = r->t0_ms + (uint64_t)timeout_s * 1000u;
	timeline(r, "run_start", json_pack("{s:s, s:I}", "dir", r->dir,
	    "seed", (json_int_t)opts->seed));
	json_array_foreach(steps, i, step) {
		json_t *at = json_object_get(step, "at_ms");
		int rc;

		r->step = (int)i;
		r->step_name = json_string_value(json_object_get(step, "name"));
		if (json_is_integer(at))
			while (run_ms(r) < (uint64_t)json_integer_value(at)) {
				if (housekeep(r) == -1)
					break;
				nap();
			}
		if (r->status == RUN_ERROR)
			break;
		if (clock_mono_ms() >= run_deadline) {
			fail(r, "the run's bound of %lld s ran out before %s",
			    (long long)timeout_s, r->step_name);
			break;
		}
		timeline(r, "step_start", json_pack("{s:i, s:s, s:O}", "step",
		    (int)i, "name", r->step_name, "action",
		    json_object_get(step, "action")));
		if (r->opts.verbose > 0)
			fprintf(stderr, "%s%s\n", r->tty ? "\r\033[K" : "",
			    r->step_name);
		rc = run_step(r, step);
		r->progress_ms = clock_mono_ms();
		timeline(r, "step_end", json_pack("{s:i, s:s, s:b}", "step",
		    (int)i, "name", r->step_name, "ok", rc == 0));
		if (rc == -1 || housekeep(r) == -1)
			break;
		progress(r, false);
	}
	if (r->status != RUN_ERROR && r->had_take_step)
		collect_all_takes(r);
	r->end_ms = clock_mono_ms();
	set_measure(r, "run.wall_ms", (double)(r->end_ms - r->t0_ms), "ms");
	gather(r);
	gather_swarm(r);
	check_history(r);
	gather_takes(r);
	run_checks(r);
	if (r->tty)
		fputs("\r\033[K", stderr);
	timeline(r, "run_end", json_pack("{s:s}", "status", r->status ==
	    RUN_PASS ? "pass" : r->status == RUN_FAIL ? "fail" : "error"));
	if (!opts->keep) {
		fleet_teardown(&r->fleet, 5000);
		drop_content(r);
	} else
		fleet_reap(&r->fleet);
	return r->status;
}

void
run_free(struct run *r)
{
	if (r->timeline != NULL)
		fclose(r->timeline);
	if (r->samples != NULL)
		fclose(r->samples);
	fleet_free(&r->fleet);
	json_decref(r->scn);
	json_decref(r->measures);
	json_decref(r->writes);
	json_decref(r->takes);
	json_decref(r->notes);
	json_decref(r->peer_rows);
	json_decref(r->checks);
	json_decref(r->counters);
	json_decref(r->swarm_fetchers);
	json_decref(r->swarm_rows);
}

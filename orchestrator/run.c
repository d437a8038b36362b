/*
 * run.c: the scenario engine's driver (see run.h): the run, its steps in
 * order as a state machine (step_set), the loop's timers and the checks at
 * the end.  It calls down into the actions (act.c), the gathering of the
 * fleet's figures (gather.c, content.c, history.c) and the library all of
 * them share (engine.c: timeline, notes, errors, measures, control calls
 * awaited on the loop); nothing calls up into it but main.c.
 *
 * One libevent loop, like peerd.  A step runs its action (act.c); while it
 * waits — for a control call's answer or between two looks — the loop runs
 * the timers: the watchdog (watch.c), the samples, the take collection and
 * the progress line (sample.c).  Nothing waits without a bound, and nothing
 * sleeps to wait for a peer: peers are awaited through their ready line
 * and their answers.
 */
#include <sys/resource.h>
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
#include "ctl.h"
#include "debug.h"
#include "engine.h"
#include "fleet.h"
#include "num.h"
#include "hist.h"
#include "identity.h"
#include "launch.h"
#include "log.h"
#include "metrics.h"
#include "xmalloc.h"

/* A signal's byte on the wake pipe: drain it and end the nap. */
static void
wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	char buf[64];

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	r->woken = true;
}

/*
 * Room for the fleet's descriptors: per peer its control connection, its
 * ready pipe while it starts, and one for a hang capture; the soft limit
 * is raised toward the hard one when that is short, and a note says so.
 */
static void
raise_nofile(struct run *r)
{
	json_int_t n = json_integer_value(json_object_get(json_object_get(
	    r->scn, "fleet"), "peers"));
	rlim_t want = (rlim_t)(n + 64) * 3 + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		engine_note(r, "raised RLIMIT_NOFILE to %llu for %lld peers",
		    (unsigned long long)rl.rlim_cur, (long long)n);
	if (rl.rlim_cur < want)
		engine_note(r, "RLIMIT_NOFILE's hard limit %llu is below the %llu "
		    "descriptors %lld peers may need", (unsigned long long)
		    rl.rlim_max, (unsigned long long)want, (long long)n);
}

/*
 * The timers, started once the run directory exists.  The samples ride on
 * the watchdog's tick (watch.c), which runs every second, or every
 * sample_ms when that is shorter.
 */
static void
timers_start(struct run *r)
{
	int period = sample_period_ms(r);
	struct timeval watch;
	struct timeval collect = { 0, COLLECT_MS * 1000 };
	struct timeval prog = r->tty ? (struct timeval){ 0, 200 * 1000 } :
	    (struct timeval){ PROGRESS_MS / 1000, 0 };

	r->sample_ms = period;
	r->watch_ms = r->sample_ms > 0 && r->sample_ms < WATCH_EVERY_MS ?
	    r->sample_ms : WATCH_EVERY_MS;
	watch.tv_sec = r->watch_ms / 1000;
	watch.tv_usec = (suseconds_t)(r->watch_ms % 1000) * 1000;
	r->ev_watch = event_new(r->base, -1, EV_PERSIST, watch_tick, r);
	event_add(r->ev_watch, &watch);
	r->ev_collect = event_new(r->base, -1, EV_PERSIST, sample_collect_tick, r);
	event_add(r->ev_collect, &collect);
	r->ev_progress = event_new(r->base, -1, EV_PERSIST, sample_progress_tick, r);
	if (r->opts.verbose >= 0)
		event_add(r->ev_progress, &prog);
	if (fleet_wake_fd >= 0) {
		r->ev_wake = event_new(r->base, fleet_wake_fd, EV_READ |
		    EV_PERSIST, wake_cb, r);
		event_add(r->ev_wake, NULL);
	}
	floor_start(r);
}

static void
timers_stop(struct run *r)
{
	struct event **evs[] = { &r->ev_watch, &r->ev_progress,
	    &r->ev_collect, &r->ev_wake };

	floor_stop(r);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (*evs[i] != NULL) {
			event_free(*evs[i]);
			*evs[i] = NULL;
		}
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
			engine_measure_counter(r, metric,
			    json_number_value(json_object_get(
			    r->counters, metric + 9)));
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
			result = engine_compare(json_number_value(v), op, bound) ?
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

static int
make_run_dir(struct run *r)
{
	char stamp[32], link[700], part[sizeof(r->dir)];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	/* --out and its parents, as mkdir -p would. */
	snprintf(part, sizeof(part), "%s", r->opts.out);
	for (char *q = part + 1, c; ; q++) {
		if (*q != '/' && *q != '\0')
			continue;
		c = *q;
		*q = '\0';
		if (mkdir(part, 0755) == -1 && errno != EEXIST)
			return -1;
		if ((*q = c) == '\0')
			break;
	}
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
		engine_note(r,
		    "removed %d verified copies of the blob (%.0f MiB on "
		    "disk; --keep-content keeps them)", n, freed / 1048576.0);
}


/* The launcher's set-up before any peer starts (launch.h). 0 or -1. */
static int
launch_prepare(struct run *r)
{
	const struct launcher *l = r->fleet.launch;
	json_int_t n = json_integer_value(json_object_get(json_object_get(
	    r->scn, "fleet"), "peers"));
	char err[400];

	if (l->prepare != NULL && l->prepare(&r->fleet, (int)n, err,
	    sizeof(err)) == -1)
		return engine_fail(r, "launcher %s: %s", l->name, err);
	engine_timeline(r, "launcher", json_pack("{s:s, s:s}", "name", l->name,
	    "id", r->fleet.launch_id));
	if (l->prepare != NULL)
		engine_note(r, "launcher %s (run id %s): %s", l->name,
		    r->fleet.launch_id, l->about);
	return 0;
}

/*
 * A step's state machine: pending -> running -> done | failed, every
 * transition here (the timeline's step_start and step_end, the watchdog's
 * progress mark, the progress line).
 */
static void
step_set(struct run *r, const struct step *s, enum run_step_state to)
{
	enum run_step_state from = r->step_state;

	if (to == STEP_PENDING) {
		r->step_state = to;
		return;
	}
	if (to == STEP_RUNNING && from == STEP_PENDING) {
		engine_timeline(r, "step_start", json_pack("{s:i, s:s, s:s}",
		    "step", r->step, "name", r->step_name, "action",
		    s->action));
		r->step_start_ms = clock_mono_ms();
		r->prog_what = NULL;
		r->prog_done = r->prog_total = 0;
		if (r->opts.verbose > 0)
			fprintf(stderr, "%s%s\n", r->tty ? "\r\033[K" : "",
			    r->step_name);
	} else if ((to == STEP_DONE || to == STEP_FAILED) &&
	    from == STEP_RUNNING) {
		r->progress_ms = clock_mono_ms();
		if (s->act == ACTION_start && to == STEP_DONE)
			engine_measure(r, M_FLEET_START_MS,
			    (double)(clock_mono_ms() -
			    r->step_start_ms));
		engine_timeline(r, "step_end", json_pack("{s:i, s:s, s:b}", "step",
		    r->step, "name", r->step_name, "ok", to == STEP_DONE));
		sample_progress(r, true);	/* a line per step */
	} else
		log_warnx("step %s: no transition from %d to %d", r->step_name,
		    (int)from, (int)to);
	r->step_state = to;
}

/* A pending step's turn: its at_ms, within the run's bound. -1: stop. */
static int
step_wait_turn(struct run *r, const struct step *s, uint64_t run_deadline,
    json_int_t timeout_s)
{
	if (s->at_ms >= 0)
		while (engine_ms(r) < (uint64_t)s->at_ms) {
			if (engine_housekeep(r) == -1)
				break;
			engine_nap(r);
		}
	if (r->status == RUN_ERROR || r->hang)
		return -1;
	if (clock_mono_ms() >= run_deadline)
		return engine_fail(r,
		    "the run's bound of %lld s ran out before %s",
		    (long long)timeout_s, r->step_name);
	return 0;
}

enum run_status
run_scenario(struct run *r, json_t *scn, const struct run_opts *opts)
{
	char path[700];
	json_t *steps = json_object_get(scn, "steps"), *step;
	json_int_t timeout_s;
	const char *binding;
	uint64_t run_deadline;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->scn = json_incref(scn);
	r->opts = *opts;
	r->measures = json_object();
	r->writes = json_object();
	r->takes = json_object();
	r->notes = json_array();
	r->rates = json_array();
	r->peer_rows = json_array();
	r->checks = json_array();
	r->counters = json_object();
	r->swarm_fetchers = json_array();
	r->swarm_rows = json_array();
	r->swarm_publisher = -1;
	r->loads = json_array();
	r->base = event_base_new();
	r->rng = opts->seed ? opts->seed : 0x9e3779b97f4a7c15ull;
	r->tty = isatty(STDERR_FILENO) && opts->verbose >= 0;
	r->t0_ms = clock_mono_ms();
	r->t0_wall_ms = (uint64_t)time(NULL) * 1000u;
	r->step = -1;
	if (make_run_dir(r) == -1) {
		snprintf(r->error, sizeof(r->error), "cannot make a run directory "
		    "under %s: %s", opts->out, strerror(errno));
		r->dir[0] = '\0';	/* no bundle, no report */
		r->end_ms = clock_mono_ms();
		r->status = RUN_ERROR;
		return r->status;
	}
	snprintf(path, sizeof(path), "%s/timeline.ndjson", r->dir);
	r->timeline = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/samples.ndjson", r->dir);
	r->samples = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/scenario.json", r->dir);
	engine_write_json(path, scn);
	fleet_init(&r->fleet, r->dir, opts->peerd, json_object_get(
	    json_object_get(scn, "fleet"), "knobs"));
	binding = json_string_value(json_object_get(json_object_get(scn,
	    "fleet"), "binding"));
	snprintf(r->fleet.binding, sizeof(r->fleet.binding), "%s",
	    binding != NULL ? binding : "");
	r->fleet.keep = opts->keep;
	r->fleet.seed = opts->seed;
	if (opts->launch != NULL)
		r->fleet.launch = opts->launch;
	timeout_s = opts->timeout_s > 0 ? opts->timeout_s :
	    (json_int_t)json_number_value(json_object_get(scn, "timeout_s"));
	if (timeout_s <= 0)
		timeout_s = 300;
	run_deadline = r->t0_ms + (uint64_t)timeout_s * 1000u;
	/* mono_ms: the run's 0 on the host's monotonic clock, which the
	 * writers' stamps are on (the report's latency over time) */
	engine_timeline(r, "run_start", json_pack("{s:s, s:I, s:I}", "dir", r->dir,
	    "seed", (json_int_t)opts->seed, "mono_ms", (json_int_t)r->t0_ms));
	raise_nofile(r);
	timers_start(r);
	if (launch_prepare(r) == -1)
		steps = NULL;	/* the error is the run's */
	json_array_foreach(steps, i, step) {
		struct step st;
		char err[300];

		r->step = (int)i;
		if (step_read(step, &st, err, sizeof(err)) == -1) {
			engine_fail(r, "steps[%zu]: %s", i, err);
			break;
		}
		r->step_name = st.name;
		step_set(r, &st, STEP_PENDING);
		if (step_wait_turn(r, &st, run_deadline, timeout_s) == -1)
			break;
		step_set(r, &st, STEP_RUNNING);
		step_set(r, &st, act_run(r, &st) == 0 && engine_housekeep(r) == 0 ?
		    STEP_DONE : STEP_FAILED);
		if (r->step_state == STEP_FAILED)
			break;
	}
	timers_stop(r);
	if (r->hang)
		watch_capture(r);
	if (r->status != RUN_ERROR && r->had_take_step)
		history_takes(r);
	history_loads_end(r);
	r->end_ms = clock_mono_ms();
	engine_measure(r, M_RUN_WALL_MS, (double)(r->end_ms - r->t0_ms));
	if (r->sample_rounds > 0)
		engine_measure(r, M_ENGINE_SAMPLE_ROUND_MS,
		    r->sample_round_max_ms);
	gather_run(r);
	content_gather(r);
	history_check(r);
	gather_takes(r);
	if (r->hang && !r->hang_done)
		watch_capture(r);
	run_checks(r);
	if (r->tty)
		fputs("\r\033[K", stderr);
	engine_timeline(r, "run_end", json_pack("{s:s}", "status", r->status ==
	    RUN_PASS ? "pass" : r->status == RUN_FAIL ? "fail" : "error"));
	if (!opts->keep) {
		fleet_teardown(&r->fleet, 5000);
		if (r->fleet.launch->teardown != NULL)
			r->fleet.launch->teardown(&r->fleet);
		drop_content(r);
	} else
		fleet_reap(&r->fleet);
	return r->status;
}

void
run_free(struct run *r)
{
	/* The fleet first: its last callbacks may still look at the run. */
	if (r->fleet.launch != NULL && r->fleet.launch->teardown != NULL &&
	    !r->opts.keep)
		r->fleet.launch->teardown(&r->fleet);	/* a run cut short */
	fleet_free(&r->fleet);
	floor_free(r);
	if (r->timeline != NULL)
		fclose(r->timeline);
	if (r->samples != NULL)
		fclose(r->samples);
	r->timeline = r->samples = NULL;
	json_decref(r->scn);
	json_decref(r->measures);
	json_decref(r->writes);
	json_decref(r->takes);
	json_decref(r->notes);
	json_decref(r->rates);
	json_decref(r->peer_rows);
	json_decref(r->checks);
	json_decref(r->counters);
	json_decref(r->write_base);
	json_decref(r->swarm_fetchers);
	json_decref(r->swarm_rows);
	json_decref(r->loads);
	timers_stop(r);
	if (r->base != NULL)
		event_base_free(r->base);
}

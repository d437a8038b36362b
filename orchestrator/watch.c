/*
 * watch.c: the watchdog.  A timer gives every running peer one call each
 * second: the sample's "metrics" when a sample round is due (sample.c),
 * else a "hello"; any control call that misses its bound, or a fleet
 * without progress for --stall-s, trips it (engine_trip): every wait on the
 * loop returns, and run_scenario() calls watch_capture(), which tells
 * starved from stuck from /proc, captures every peer into hang/ and ends
 * the run with an error naming them.
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
#include "debug.h"
#include "engine.h"
#include "fleet.h"

void
watch_answer(struct run *r, struct peer *p, enum ctl_status st,
    const json_t *res, const char *err)
{
	json_t *act;

	p->watch_inflight = false;
	if (st == CTL_TIMEOUT) {
		engine_trip(r, p, err);
		return;
	}
	if (st != CTL_OK)
		return;		/* gone: the reaper says how */
	p->answered_ms = clock_mono_ms();
	/* hello's "activity", or the sample's gauge of the same number */
	act = json_object_get(res, "activity");
	if (act == NULL)
		act = json_object_get(json_object_get(res, "gauges"),
		    "activity");
	if ((uint64_t)json_integer_value(act) != p->activity) {
		p->activity = (uint64_t)json_integer_value(act);
		r->progress_ms = clock_mono_ms();
	}
}

static void
hello_cb(struct peer *p, enum ctl_status st, json_t *h, const char *err,
    void *arg)
{
	watch_answer(arg, p, st, h, err);
}

uint64_t
watch_round_ms(int npeers, int opt_ms)
{
	uint64_t by_size = (uint64_t)(npeers > 0 ? npeers : 0) * WATCH_PEER_MS;

	if (opt_ms > 0)
		return (uint64_t)opt_ms;
	return by_size > WATCH_EVERY_MS ? by_size : WATCH_EVERY_MS;
}

/*
 * The watchdog timer, every second (every sample_ms when that is
 * shorter) whatever the step: once a round (watch_round_ms), one call to
 * each running peer with none in flight, bounded by WATCH_ANSWER_MS -- the
 * sample's "metrics" when a sample round is due, else a "hello" -- and the
 * stall check: no step ended and no activity (frames, writes, takes) moved
 * for --stall-s.  A sample round is that round's call, so a peer gets one
 * call a round, never a sample and a hello.  Each answer costs a peer a
 * wake-up and a reply: at 1,000 peers at rest one a second was about a
 * third of a peer's wake-ups (2.81 a second, 2.18 with a 5 s round), so
 * the round grows with the fleet (the engine measures the fabric, and
 * should weigh on it little).
 */
void
watch_tick(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	uint64_t now = clock_mono_ms(), round;
	json_t *sample;
	bool hello;

	(void)fd;
	(void)what;
	if (r->hang || r->hang_done)
		return;
	if (r->progress_ms == 0)
		r->progress_ms = now;
	round = watch_round_ms(r->fleet.npeers, r->opts.watch_ms);
	/* Samples more often than a round only while the round is 1 s. */
	sample = sample_round(r, round > WATCH_EVERY_MS ? round : 0);
	hello = sample == NULL && now + round / 4 >= r->hello_round_ms + round;
	if (sample != NULL || hello)
		r->hello_round_ms = now;
	for (int i = 0; i < r->fleet.npeers && (sample != NULL || hello);
	    i++) {
		struct peer *p = r->fleet.peers[i];

		if (p->state != PEER_RUNNING || p->stuck || p->watch_inflight)
			continue;
		p->watch_inflight = true;
		if (sample != NULL)
			sample_call(r, p, sample);
		else
			ctl_call(r->base, p, "hello", NULL, WATCH_ANSWER_MS,
			    hello_cb, r);
	}
	json_decref(sample);
	if (r->opts.stall_s > 0 && now - r->progress_ms >= (uint64_t)
	    r->opts.stall_s * 1000u) {
		char why[120];

		snprintf(why, sizeof(why), "no step ended and no activity for "
		    "%d s", r->opts.stall_s);
		engine_trip(r, NULL, why);
	}
}

/*
 * Starved or stuck: two reads of /proc 500 ms apart.  A peer that ran or
 * waited for a CPU between them (fleet_progress), or that is runnable (R),
 * is starved (alive, short of CPU); one stopped (T, t) or without
 * progress is stuck.
 */
static void
watch_verdicts(struct run *r)
{
	long long t0[FLEET_MAX_PEERS];
	struct timespec half = { 0, 500 * 1000 * 1000 };
	char st;

	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];

		t0[i] = fleet_live(p) ? fleet_progress(p->peerd_pid > 0 ?
		    p->peerd_pid : p->pid, &st) : -1;
	}
	nanosleep(&half, NULL);
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		long long t1;

		if (t0[i] < 0)
			continue;
		t1 = fleet_progress(p->peerd_pid > 0 ? p->peerd_pid : p->pid,
		    &st);
		if (t1 < 0) {
			p->verdict_kind = VERDICT_GONE;
			snprintf(p->verdict, sizeof(p->verdict), "gone");
		} else if (st == 'T' || st == 't') {
			p->verdict_kind = VERDICT_STOPPED;
			snprintf(p->verdict, sizeof(p->verdict), "stuck (state "
			    "%c: stopped; no CPU time in 0.5 s)", st);
		} else if (t1 > t0[i]) {
			p->verdict_kind = VERDICT_STARVED;
			snprintf(p->verdict, sizeof(p->verdict), "starved (state "
			    "%c; running or waiting for a CPU within 0.5 s)",
			    st);
		} else if (st == 'R') {
			p->verdict_kind = VERDICT_STARVED;
			snprintf(p->verdict, sizeof(p->verdict), "starved (state "
			    "R: runnable, waiting for a CPU)");
		} else {
			p->verdict_kind = VERDICT_STUCK;
			snprintf(p->verdict, sizeof(p->verdict), "stuck (state "
			    "%c; no CPU time in 0.5 s)", st);
		}
	}
}

/*
 * A trip names the peer that missed a bound, but a fleet stall can come
 * first (nothing moved for --stall-s while a hello to a stuck peer was
 * still inside its bound).  So after the verdicts, every peer the scenario
 * did not pause is named too when it is stopped from outside (state T) or
 * found stuck without having answered the watchdog's call (a hello or a
 * sample) for WATCH_QUIET_MS.
 */
static void
watch_blame(struct run *r)
{
	uint64_t now = clock_mono_ms();

	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];

		if (p->stuck || p->state != PEER_RUNNING)
			continue;
		if (p->verdict_kind == VERDICT_STOPPED ||
		    (p->verdict_kind == VERDICT_STUCK && p->watch_inflight &&
		    now - p->answered_ms >= WATCH_QUIET_MS))
			engine_blame(r, p);
	}
}

/*
 * After a trip, with the loop stopped: tell starved from stuck, capture
 * every peer into hang/, and end the run with an error naming the peers.
 */
void
watch_capture(struct run *r)
{
	char names[900] = "";

	watch_verdicts(r);
	watch_blame(r);
	r->hang_done = true;
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		size_t used = strlen(names);

		if (!p->stuck || p->verdict[0] == '\0')
			continue;
		snprintf(names + used, sizeof(names) - used, "%s%s %s",
		    used ? "; " : "", p->name, p->verdict);
		engine_note(r, "watchdog: %s is %s", p->name, p->verdict);
	}
	engine_note(r, "watchdog in step %s: %s",
	    r->step_name ? r->step_name : "?", r->hang_why);
	debug_capture_hang(r, r->hang_why);
	r->hang = false;	/* engine_fail() may speak again */
	r->status = RUN_PASS;	/* the watchdog's message replaces any */
	if (r->hang_peers[0] != '\0')
		engine_fail(r, "watchdog: %s missed a bound in step %s (%s): %s; "
		    "stacks in %s/hang/", r->hang_peers, r->step_name ?
		    r->step_name : "?", r->hang_why, names, r->dir);
	else
		engine_fail(r, "watchdog: %s in step %s; stacks in %s/hang/",
		    r->hang_why, r->step_name ? r->step_name : "?", r->dir);
}

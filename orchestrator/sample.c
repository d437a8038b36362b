/*
 * sample.c: the samples (one "metrics" call to every running peer at once,
 * sent by the watchdog's tick as that tick's call: watch.c), and the
 * engine's other timers: the take collection and the progress line.  They
 * run on the loop whatever the step does.
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

void
sample_progress(struct run *r, bool force)
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
	    r->step_name ? r->step_name : "", (double)engine_ms(r) / 1000.0,
	    live, r->fleet.npeers, history_written(r),
	    json_object_size(r->takes), r->tty ? "" : "\n");
	fflush(stderr);
}

static void
sample_cb(struct peer *p, enum ctl_status st, json_t *m, const char *err,
    void *arg)
{
	struct run *r = arg;
	json_t *c, *line;

	if (--r->sample_inflight == 0) {
		double ms = (double)(clock_mono_us() - r->sample_sent_us) / 1e3;

		r->sample_rounds++;
		if (ms > r->sample_round_max_ms)
			r->sample_round_max_ms = ms;
	}
	watch_answer(r, p, st, m, err);	/* trips on a timeout */
	if (st != CTL_OK || r->samples == NULL)
		return;
	c = json_object_get(m, "counters");
	line = json_pack("{s:I, s:i, s:O, s:O, s:O, s:O, s:O, s:O, s:O*, "
	    "s:O}",
	    "t_ms", (json_int_t)engine_ms(r), "peer", p->index,
	    "frames.in", json_object_get(c, "frames.in"),
	    "frames.out", json_object_get(c, "frames.out"),
	    "bytes.in", json_object_get(c, "bytes.in"),
	    "bytes.out", json_object_get(c, "bytes.out"),
	    "space.writes", json_object_get(c, "space.writes"),
	    "takes.won", json_object_get(c, "takes.won"),
	    "swarm.bytes_received", json_object_get(c,
	    "swarm.bytes_received"),
	    "gauges", json_object_get(m, "gauges"));
	if (line != NULL) {
		json_dumpf(line, r->samples, JSON_COMPACT);
		fputc('\n', r->samples);
		json_decref(line);
	}
	if (r->sample_inflight == 0)
		fflush(r->samples);
}

/*
 * A sample round is due (every sample_ms, or every watchdog round when
 * that is longer, at the watchdog tick nearest its time; none while the
 * last round is not in yet): start it and return the request's arguments
 * for sample_call (the caller's reference), else NULL.
 */
json_t *
sample_round(struct run *r, uint64_t round_ms)
{
	uint64_t now = clock_mono_ms(), every = (uint64_t)r->sample_ms;

	if (r->sample_ms <= 0 || r->samples == NULL || r->sample_inflight > 0)
		return NULL;
	if (every < round_ms) {
		if (r->sample_raised_ms != round_ms)
			engine_note(r, "samples every %llu ms, not sample_ms %d: "
			    "the engine calls each of %d peers once a watchdog "
			    "round (docs/scenarios.md, \"The engine\")",
			    (unsigned long long)round_ms, r->sample_ms,
			    r->fleet.npeers);
		r->sample_raised_ms = round_ms;
		every = round_ms;
	}
	if (r->sample_next_ms != 0 && now + (uint64_t)r->watch_ms / 2 <
	    r->sample_next_ms)
		return NULL;
	r->sample_next_ms = r->sample_next_ms == 0 || now >
	    r->sample_next_ms + every ? now + every : r->sample_next_ms + every;
	r->sample_sent_us = clock_mono_us();
	/*
	 * Only what a sample line keeps: the whole answer is 20 KB of JSON a
	 * peer, which at 1,000 peers a second is the engine's and the
	 * fleet's largest cost at rest.  The gauges are those docs/report.md
	 * lists for a sample line (not the heap's: mallinfo walks the heap)
	 * and "activity", which the watchdog reads as it reads a hello's.
	 */
	return json_pack("{s:[s,s,s,s,s,s,s,s,s,s,s,s,s]}", "only",
	    "counters.frames.in", "counters.frames.out", "counters.bytes.in",
	    "counters.bytes.out", "counters.space.writes", "counters.takes.won",
	    "counters.swarm.bytes_received", "gauges.links", "gauges.records",
	    "gauges.visible", "gauges.control_clients", "gauges.uptime_s",
	    "gauges.activity");
}

/* p's sample in round only: the watchdog's call to p this tick. */
void
sample_call(struct run *r, struct peer *p, json_t *only)
{
	r->sample_inflight++;
	ctl_call(r->base, p, "metrics", only, WATCH_ANSWER_MS, sample_cb, r);
}

void
sample_progress_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sample_progress(arg, false);
}

void
sample_collect_tick(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;

	(void)fd;
	(void)what;
	history_loads_count(r);
	if (!r->had_take_step)
		return;
	for (int i = 0; i < r->fleet.npeers; i++)
		history_takes_async(r, r->fleet.peers[i]);
}

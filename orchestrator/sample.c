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
#include "xmalloc.h"

/*
 * The progress line: on a terminal, redrawn in place every 200 ms; else a
 * line when a step ends (and every PROGRESS_MS in a long step).  A load
 * step (writes, takes, fetched pieces) shows done/total, its rate since
 * the step began and the time left at that rate.
 */
void
sample_progress(struct run *r, bool force)
{
	uint64_t now = clock_mono_ms();
	double secs = (double)(now - r->step_start_ms) / 1000.0;
	char load[160] = "";
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
	if (r->prog_what != NULL && r->prog_total > 0) {
		double rate = secs > 0 ? (double)r->prog_done / secs : 0;
		int n = snprintf(load, sizeof(load), "  %s %llu/%llu (%.0f%%)  "
		    "%.0f/s", r->prog_what, (unsigned long long)r->prog_done,
		    (unsigned long long)r->prog_total, 100.0 *
		    (double)r->prog_done / (double)r->prog_total, rate);

		if (rate > 0 && r->prog_done < r->prog_total)
			snprintf(load + n, sizeof(load) - (size_t)n,
			    "  ETA %.1fs", (double)(r->prog_total -
			    r->prog_done) / rate);
	}
	fprintf(stderr, "%s[%s] step %d/%zu %-16s %6.1fs  peers %d/%d%s%s",
	    r->tty ? "\r\033[K" : "",
	    json_string_value(json_object_get(r->scn, "name")), r->step + 1,
	    json_array_size(json_object_get(r->scn, "steps")),
	    r->step_name ? r->step_name : "", (double)engine_ms(r) / 1000.0,
	    live, r->fleet.npeers, load, r->tty ? "" : "\n");
	fflush(stderr);
}

/*
 * One sample round: its calls in flight (plus one held by the watchdog's
 * tick while it sends them), and when it was sent.  Rounds overlap: a
 * peer still answering the last one (a writer deep in its load) is left
 * out of the next, and the others are sampled on time, so a busy step
 * has its samples.
 */
struct sample_batch {
	struct run	*r;
	uint64_t	 sent_us;
	int		 inflight;
};

/* One reference of b dropped; the last one times the round. */
static void
batch_drop(struct sample_batch *b)
{
	struct run *r = b->r;

	if (--b->inflight > 0)
		return;
	if (r->sample_cur == b)
		r->sample_cur = NULL;
	r->sample_rounds++;
	if ((double)(clock_mono_us() - b->sent_us) / 1e3 >
	    r->sample_round_max_ms)
		r->sample_round_max_ms = (double)(clock_mono_us() -
		    b->sent_us) / 1e3;
	if (r->samples != NULL)
		fflush(r->samples);
	free(b);
}

static void
sample_cb(struct peer *p, enum ctl_status st, json_t *m, const char *err,
    void *arg)
{
	struct sample_batch *b = arg;
	struct run *r = b->r;
	json_t *c, *line;

	r->sample_inflight--;
	watch_answer(r, p, st, m, err);	/* trips on a timeout */
	if (st != CTL_OK || r->samples == NULL) {
		batch_drop(b);
		return;
	}
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
	batch_drop(b);
}

/*
 * The period: --sample-ms, else the scenario's sample_ms, else one that
 * fits the run: SAMPLE_AUTO_MS for its first SAMPLE_AUTO_SPAN_MS (a run
 * under a minute gets hundreds of points a peer, a 2 s run 20), then
 * SAMPLE_AUTO_LATE_MS (an hour at 100 ms would be 36,000 lines a peer).
 * 0: no samples.
 */
int
sample_period_ms(const struct run *r)
{
	json_t *v = json_object_get(r->scn, "sample_ms");

	if (r->opts.sample_ms != 0)
		return r->opts.sample_ms > 0 ? r->opts.sample_ms : 0;
	if (json_is_integer(v))
		return (int)json_integer_value(v);
	return SAMPLE_AUTO_MS;
}

/* Whether the period is the engine's own (it thins after a minute). */
static bool
sample_auto(const struct run *r)
{
	return r->opts.sample_ms == 0 && !json_is_integer(json_object_get(
	    r->scn, "sample_ms"));
}

/*
 * A sample round is due (every sample_ms, or every watchdog round when
 * that is longer, at the watchdog tick nearest its time): start it and
 * return the request's arguments for sample_call (the caller's
 * reference), else NULL.  A peer whose last answer is not in yet is left
 * out (the watchdog's tick skips it), the others are not held back.
 */
json_t *
sample_round(struct run *r, uint64_t round_ms)
{
	uint64_t now = clock_mono_ms(), every = (uint64_t)r->sample_ms;

	if (r->sample_ms <= 0 || r->samples == NULL)
		return NULL;
	if (sample_auto(r) && engine_ms(r) >= SAMPLE_AUTO_SPAN_MS)
		every = SAMPLE_AUTO_LATE_MS;
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
	r->sample_cur = xcalloc(1, sizeof(*r->sample_cur));
	r->sample_cur->r = r;
	r->sample_cur->sent_us = clock_mono_us();
	r->sample_cur->inflight = 1;	/* the tick's, until sample_sent */
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

/* p's sample in the round begun: the watchdog's call to p this tick. */
void
sample_call(struct run *r, struct peer *p, json_t *only)
{
	r->sample_inflight++;
	r->sample_cur->inflight++;
	ctl_call(r->base, p, "metrics", only, WATCH_ANSWER_MS, sample_cb,
	    r->sample_cur);
}

/* Every call of the round begun is sent: it ends with its last answer. */
void
sample_sent(struct run *r)
{
	struct sample_batch *b = r->sample_cur;

	r->sample_cur = NULL;
	if (b != NULL)
		batch_drop(b);
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

/*
 * engine.h: what the engine's files share (run.c, act.c, cond.c,
 * content.c, engine.c, history.c, sample.c, watch.c); nothing outside the
 * engine includes it.  Each function's prefix is its file's name.  Calls
 * go down: run.c (the driver) -> act.c, cond.c, gather.c, ... -> engine.c;
 * no file calls up into run.c.
 */
#ifndef ENGINE_H
#define ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "ctl.h"
#include "measures.h"
#include "run.h"
#include "step.h"

#define CALL_MS		5000	/* bound on one control request */
#define ENGINE_EACH_WINDOW	64	/* engine_call_each's calls in flight */
#define POLL_NS		(20 * 1000 * 1000)	/* between two looks */
#define COLLECT_MS	500	/* take collection; looks at write loads */
#define PROGRESS_MS	10000	/* progress line when not on a terminal */
#define WATCH_EVERY_MS	1000	/* the watchdog's round, up to 200 peers */
#define WATCH_PEER_MS	5	/* beyond: 5 ms a peer (watch_round_ms) */
#define WATCH_ANSWER_MS	5000	/* bound on a hello */
#define WATCH_QUIET_MS	2000	/* after a stall: unanswered this long and
				   without CPU time is stuck (watch.c) */

/* ---- engine.c: the library under every engine file ---------------------- */

/* The run's xorshift draw (topology choices: replay draws the same). */
uint64_t	 engine_rng(struct run *r);
/* Milliseconds since the run began. */
uint64_t	 engine_ms(const struct run *r);
/* One line of timeline.ndjson: {"t_ms", "event", ...fields} (fields stolen). */
void		 engine_timeline(struct run *r, const char *event, json_t *fields);
/* A line of the report's notes (and stderr). */
void		 engine_note(struct run *r, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* A note on something done to the fleet, with its time and step. */
void		 engine_fault_note(struct run *r, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* The run's first error (exit 2); -1 always. */
int		 engine_fail(struct run *r, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* The measure id of MEASURES() (measures.h), in the row's unit. */
void		 engine_measure(struct run *r, enum measure_id id, double value);
/* A latency measure id (microseconds) from the fleet's merged histogram;
 * an empty one sets nothing. */
struct hist;
void		 engine_measure_hist(struct run *r, enum measure_id id,
		    const struct hist *h);
/* engine_measure() by a name made at run time; one MEASURES() lacks
 * stops the run (engine_fail): -1. */
int		 engine_measure_named(struct run *r, const char *name,
		    double value);
/* A wait step's own measure: how long it waited (measures_wait()'s row). */
void		 engine_measure_wait(struct run *r, const char *name, double ms);
/* counters.NAME, a peerd counter summed (measures_counter()'s row). */
void		 engine_measure_counter(struct run *r, const char *name,
		    double value);
/* p (NULL: the fleet) missed a bound: stop the run for a capture. */
void		 engine_trip(struct run *r, struct peer *p, const char *why);
/* p missed a bound: marked stuck and named once in the run's hang_peers. */
void		 engine_blame(struct run *r, struct peer *p);
/* One control call awaited on the loop (timers running); NULL with err. */
json_t		*engine_call(struct run *r, struct peer *p, const char *cmd,
		    json_t *args, int timeout_ms, char *err, size_t errlen);
/* One answer of engine_call_each: res borrowed, NULL when the call failed. */
typedef void	(*engine_each_fn)(struct run *r, int index, struct peer *p,
		    json_t *res, void *arg);
/*
 * The same call to every live peer, ENGINE_EACH_WINDOW of them in flight at
 * once, awaited on the loop; fn gets each answer as it comes (in any
 * order).  A 1,000-peer fleet answers in seconds, not one by one.
 */
void		 engine_call_each(struct run *r, const char *cmd, json_t *args,
		    int timeout_ms, engine_each_fn fn, void *arg);
/* A short pause between two looks, with the timers running. */
void		 engine_nap(struct run *r);
/*
 * A pause until until_ms, the timers running, ended early by a signal
 * (a child's exit, an interrupt: fleet_wake_fd) or the watchdog: a step
 * that only waits for time and those wakes at neither 20 ms pace.
 */
void		 engine_nap_until(struct run *r, uint64_t until_ms);
/* Interrupt, crash, watchdog: -1 when the run must stop. */
int		 engine_housekeep(struct run *r);
/* The peers of a selector into out; -1 for an index out of range. */
int		 engine_select(struct run *r, json_t *sel, struct peer **out, int max,
		    bool live_only);
/* The peer of index k, or NULL. */
struct peer	*engine_peer(struct run *r, json_int_t k);
/* a OP b for OP in < <= == != >= >. */
bool		 engine_compare(double a, const char *op, double b);
void		 engine_write_json(const char *path, json_t *j);

/* ---- gather.c: the fleet's figures into measures -------------------------- */

/* Every peer's metrics at the end into the measures and peer rows. */
void		 gather_run(struct run *r);
/* The take measures, CPU per take beside its floor; after check_history. */
void		 gather_takes(struct run *r);
/* The fleet's CPU seconds when a take step begins (take.cpu_*). */
void		 gather_take_cpu_mark(struct run *r);
/* Sum the fleet's counters once, when the first write step begins. */
void		 gather_window_open(struct run *r);
/*
 * The live peers' numeric counters summed (and "frames.out_by_kind.KIND",
 * "process.cpu_s", "peers"), asked of all at once: a new object.
 */
json_t		*gather_fleet_sum(struct run *r);
/*
 * The frames sent by kind between two such sums, each over div, largest
 * first, at most max of them, as "kind n, kind n" into out: how many.
 */
size_t		 gather_kinds_text(json_t *from, json_t *to, double div,
		    size_t max, char *out, size_t len);

/* ---- act.c: the actions ------------------------------------------------- */

/* Run step by its action (ACTIONS() in action.h), within its timeout_s. */
int		 act_run(struct run *r, const struct step *s);

/* ---- cond.c: the wait conditions ---------------------------------------- */

/* The step's "until": 1 holds, 0 not yet, -1 stop, -2 no such condition. */
int		 cond_eval(struct run *r, const struct step_wait *w,
		    uint64_t deadline,
		    char *why, size_t len);

/* ---- content.c: the content swarm --------------------------------------- */

/* Every fetcher of the last fetch step complete, within deadline. 0/-1. */
int		 content_wait_fetched(struct run *r, uint64_t deadline);
/* The fetchers' rows and the swarm measures, at the end. */
void		 content_gather(struct run *r);

/* ---- history.c: takes and writes ---------------------------------------- */

/* Ask p for its takes since the last look (one call in flight at most). */
void		 history_takes_async(struct run *r, struct peer *p);
/* p's takes up to now, awaited. */
void		 history_takes_of(struct run *r, struct peer *p);
/* Every peer's takes up to now, awaited. */
void		 history_takes(struct run *r);
/* Distinct ids taken so far. */
size_t		 history_taken(struct run *r);
/* When the n-th distinct task was first taken (monotonic us), or 0. */
uint64_t	 history_nth_taken_us(struct run *r, size_t n);
/* The acks of p's load so far ("status") or at its "stop": how many new. */
int		 history_writes(struct run *r, struct peer *p, const char *load,
		    const char *op, bool final);
/* A write load of a step that does not wait: collect it later. */
void		 history_load_add(struct run *r, struct peer *p, const char *load);
/* Look at (final: stop and collect) only's pending loads, or all. */
int		 history_loads(struct run *r, struct peer *only, bool final);
/* The pending loads' acknowledgements so far, at most every COLLECT_MS. */
void		 history_loads_look(struct run *r);
/* Ask each pending load how far it got (no ids), for the progress line. */
void		 history_loads_count(struct run *r);
/* Writes acknowledged so far, collected or only counted. */
size_t		 history_written(struct run *r);
/* Before the checks: stop and collect every load still pending. */
void		 history_loads_end(struct run *r);
/* Duplicates, never taken, lost, writes, takes: the history measures. */
void		 history_check(struct run *r);

/* ---- sample.c: samples, take collection, the progress line -------------- */

void		 sample_progress(struct run *r, bool force);
/* A sample round due now (sample_ms, or round_ms when longer): its
 * request's arguments (yours), else NULL. */
json_t		*sample_round(struct run *r, uint64_t round_ms);
/* Send p its sample of the round (the watchdog's call to p this tick). */
void		 sample_call(struct run *r, struct peer *p, json_t *only);
void		 sample_progress_tick(evutil_socket_t fd, short what, void *arg);
void		 sample_collect_tick(evutil_socket_t fd, short what, void *arg);

/* ---- watch.c: the watchdog ---------------------------------------------- */

/* The answer to the watchdog's call to p (a hello or a sample). */
void		 watch_answer(struct run *r, struct peer *p, enum ctl_status st,
		    const json_t *res, const char *err);
/*
 * The watchdog's round for a fleet of npeers: each running peer gets one
 * call a round.  --watch-ms (opt_ms > 0), else WATCH_EVERY_MS up to 200
 * peers and WATCH_PEER_MS a peer beyond (5 s at 1,000).
 */
uint64_t	 watch_round_ms(int npeers, int opt_ms);
/* The watchdog's timer: a hello or a sample to each peer, the stall check. */
void		 watch_tick(evutil_socket_t fd, short what, void *arg);
/* After a trip: verdicts, hang/, the error naming the peers. */
void		 watch_capture(struct run *r);

/* ---- floor.c: a sign's and a verify's cost, timed all through the run -- */

struct floor_cost {
	size_t		 batches;	/* the median's */
	size_t		 late;		/* of them timed at the end: the
					   window held fewer than 5 */
	double		 sign_s, verify_s;	/* their medians */
	double		 verify_lo_s, verify_hi_s;
};
/* Time a batch now and one every second from now on (the run's loop). */
void		 floor_start(struct run *r);
void		 floor_stop(struct run *r);
/* The median batch since since_us (clock_mono_us); 0 or -1. */
int		 floor_cost(struct run *r, uint64_t since_us,
		    struct floor_cost *out);
void		 floor_free(struct run *r);

#endif

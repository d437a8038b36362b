/*
 * run.h: one run of a resolved scenario (orchestrator/scenario.h) against
 * a real fleet: the steps in order (or at their time), each bounded; the
 * history of writes and takes; the measures; the checks.  report.c turns
 * the finished run into the bundle.  The engine behind it is run.c (the
 * driver: the step machine), act.c, cond.c, content.c, history.c,
 * sample.c, watch.c, ctl.c and engine.c (the library under them all);
 * engine.h is what they share.
 */
#ifndef RUN_H
#define RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/event.h>
#include <jansson.h>

#include "fleet.h"

enum run_status { RUN_PASS = 0, RUN_FAIL = 1, RUN_ERROR = 2 };

/* A step's life; run.c's step_set() makes every transition. */
enum run_step_state {
	STEP_PENDING = 0,	/* waiting for its turn or its at_ms */
	STEP_RUNNING,
	STEP_DONE,
	STEP_FAILED,
};

struct run_opts {
	const char	*out;		/* parent of the run directory */
	const char	*peerd;		/* the peerd binary */
	uint64_t	 seed;
	int		 timeout_s;	/* 0: the scenario's */
	int		 verbose;	/* -1 quiet, 0 normal, 1 verbose */
	bool		 keep;		/* leave the fleet up at the end */
	bool		 keep_content;	/* keep the swarm's blob copies */
	const char	*hold;		/* peers to start held: "1,3" or "all" */
	int		 hold_timeout_s;
	char		**wraps;	/* "K=PREFIX" (K a list or "all") */
	int		 nwraps;
	int		 stall_s;	/* watchdog: no progress for this long */
	int		 watch_ms;	/* --watch-ms: the round (0: by size) */
	int		 sample_ms;	/* --sample-ms (0: not given, -1: off) */
	const struct launcher *launch;	/* --launcher (launch.h); NULL local */
	char		**argv;		/* the orchestrator's own command line */
	int		 argc;
};

struct run {
	json_t		*scn;		/* resolved scenario */
	struct run_opts	 opts;
	struct fleet	 fleet;
	char		 dir[512];
	FILE		*timeline;
	FILE		*samples;
	uint64_t	 t0_ms;		/* monotonic at start */
	uint64_t	 t0_wall_ms;
	uint64_t	 end_ms;
	json_t		*measures;	/* name -> measure object */
	json_t		*writes;	/* id -> {"peer", "mono_us"} */
	json_t		*takes;		/* id -> [{"peer", "mono_us"}, ...] */
	json_t		*notes;		/* strings for the report */
	json_t		*peer_rows;	/* per-peer table, gathered at the end */
	json_t		*checks;	/* results */
	json_t		*counters;	/* counters summed over live peers */
	json_t		*write_base;	/* the same when the first write began */
	double		 tree_degree;	/* push.tree_degree summed at the end */
	bool		 had_take_step;
	uint64_t	 take_start_ms, take_end_ms, take_target;
	double		 take_cpu0;	/* fleet CPU s when the takes began */
	double		 take_wake0;	/* fleet wakeups then (process.wakeups) */
	bool		 take_cpu0_ok;	/* every peer answered then */
	enum run_status	 status;
	char		 error[512];
	int		 step;		/* index of the running step */
	const char	*step_name;
	bool		 tty;
	uint64_t	 last_progress_ms;
	uint64_t	 last_look_ms;	/* pending write loads */
	uint64_t	 rng;
	/* the content swarm */
	char		 swarm_cid[65];
	char		 swarm_sha[65];
	int		 swarm_publisher;	/* -1: none */
	double		 swarm_size;
	json_t		*swarm_fetchers;	/* [index, ...] */
	json_t		*swarm_rows;		/* per fetcher, for the report */
	uint64_t	 swarm_stalls;
	uint64_t	 progress_ms;	/* watchdog: last step end or activity */
	/* the engine's loop and its timers (run.c) */
	struct event_base *base;
	struct event	*ev_watch;	/* watchdog round, samples: watch_ms */
	int		 watch_ms;	/* 1 s, or sample_ms when shorter */
	int		 sample_ms;	/* sample_period_ms(); 0: no samples */
	uint64_t	 sample_next_ms;	/* the next round's time */
	uint64_t	 hello_round_ms;	/* the last round's calls */
	uint64_t	 sample_raised_ms;	/* the round samples wait for */
	struct event	*ev_progress;	/* the progress line */
	struct event	*ev_collect;	/* takes, load counts: COLLECT_MS */
	struct event	*ev_wake;	/* a signal came: fleet_wake_fd */
	bool		 woken;		/* ev_wake fired since the nap began */
	struct floor	*floor;		/* crypto timings (floor.c) */
	uint64_t	 write_open_us;	/* the write window opened */
	uint64_t	 take_open_us;	/* the take step began */
	enum run_step_state step_state;
	uint64_t	 step_start_ms;
	bool		 hang;		/* the watchdog tripped: stop, capture */
	bool		 hang_done;	/* captured: calls may go on (not to
					   the stuck peers) */
	char		 hang_why[300];
	char		 hang_peers[400];	/* the peers that missed a bound */
	int		 sample_inflight;	/* calls, every round */
	struct sample_batch *sample_cur;	/* the round being sent */
	uint64_t	 sample_rounds;		/* complete rounds */
	double		 sample_round_max_ms;	/* the slowest of them */
	/* the load step's progress (sample_progress): done of total what */
	const char	*prog_what;	/* "writes", "takes", "pieces"; NULL */
	uint64_t	 prog_done, prog_total;
	json_t		*rates;		/* each write step's asked and achieved
					   rates, for the summary */
	json_t		*loads;		/* write loads not yet collected */
	size_t		 writes_uncollected;	/* issued, never collected */
};

/* Set by the caller's signal handler: the run stops at its next look. */
extern volatile sig_atomic_t engine_interrupted;

/* Make the run directory, run every step, gather, check. */
enum run_status	 run_scenario(struct run *r, json_t *scn,
		    const struct run_opts *opts);
/* Free what run_scenario built (after report_write). */
void		 run_free(struct run *r);

#endif

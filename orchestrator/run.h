/*
 * run.h: one run of a resolved scenario (orchestrator/scenario.h) against
 * a real fleet: the steps in order (or at their time), each bounded; the
 * history of writes and takes; the measures; the checks.  report.c turns
 * the finished run into the bundle.
 */
#ifndef RUN_H
#define RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "fleet.h"

enum run_status { RUN_PASS = 0, RUN_FAIL = 1, RUN_ERROR = 2 };

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
	bool		 had_take_step;
	uint64_t	 take_start_ms, take_end_ms, take_target;
	double		 take_cpu0;	/* fleet CPU s when the takes began */
	bool		 take_cpu0_ok;	/* every peer answered then */
	enum run_status	 status;
	char		 error[512];
	int		 step;		/* index of the running step */
	const char	*step_name;
	bool		 tty;
	uint64_t	 last_progress_ms;
	uint64_t	 last_sample_ms;
	uint64_t	 last_collect_ms;
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
	uint64_t	 last_watch_ms;
	bool		 in_watch;
};

extern volatile sig_atomic_t run_interrupted;

/* Make the run directory, run every step, gather, check. */
enum run_status	 run_scenario(struct run *r, json_t *scn,
		    const struct run_opts *opts);
/* Free what run_scenario built (after report_write). */
void		 run_free(struct run *r);

#endif

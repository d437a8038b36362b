/*
 * fleet.h: the orchestrator's view of its peerd processes.
 *
 * Peers are spawned by the run's launcher (launch.h; the default's
 * fork/exec is fleet_exec here: each in its own process group, with
 * PR_SET_PDEATHSIG so none outlives a crashed orchestrator), awaited
 * through their one ready line with a bound, talked to only through their
 * control sockets and signalled only by pid.  SIGCHLD sets a flag; the
 * orchestrator's loop reaps with fleet_reap().
 */
#ifndef FLEET_H
#define FLEET_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include <jansson.h>

#define FLEET_MAX_PEERS	1024

enum peer_state {
	PEER_NEW = 0,		/* not started yet */
	PEER_RUNNING,
	PEER_PAUSED,		/* SIGSTOP by the scenario */
	PEER_STOPPED,		/* exited after our TERM */
	PEER_KILLED,		/* exited after our KILL */
	PEER_CRASHED,		/* exited on its own: a failure */
};

struct ctl;
struct launcher;

struct peer {
	int		 index;
	char		 name[32];
	char		 dir[320];
	char		 control[384];
	char		 listen[64];
	char		 peer_id[64];
	pid_t		 pid;		/* what we forked (a wrapper, if any) */
	pid_t		 peerd_pid;	/* peerd itself, from its ready line */
	enum peer_state	 state;
	int		 exit_status;	/* waitpid status of the last exit */
	bool		 expect_exit;	/* we sent TERM/KILL */
	char		**argv;		/* the last command line */
	int		 ctl_fd;	/* fleet_call's: -1 until connected */
	struct ctl	*ctl;		/* ctl.c's asynchronous client */
	char		*rbuf;
	size_t		 rlen, rcap;
	int		 next_id;
	uint64_t	 started_ms;
	json_t		*knobs;		/* extra flags for this peer */
	size_t		 takes_seen;	/* history cursor */
	uint32_t	 restarts;
	char		**wrap;		/* command prefix (perf, valgrind...) */
	bool		 hold;		/* start with --hold */
	uint64_t	 activity;	/* watchdog: last "activity" seen */
	uint64_t	 answered_ms;	/* watchdog: last answer */
	int		 ready_fd;	/* the ready line's pipe; -1 */
	char		 ready_buf[2048];
	size_t		 ready_len;
	bool		 watch_inflight;	/* watchdog: its call not answered */
	bool		 takes_inflight;	/* a "takes" call not answered */
	bool		 stuck;		/* missed a bound: no more calls */
	uint64_t	 starved_graces;	/* late answers forgiven: no CPU */
	uint64_t	 starved_max_ms;	/* the longest such grace */
	char		 verdict[160];	/* the watchdog's: starved or stuck */
	enum verdict {
		VERDICT_NONE = 0, VERDICT_GONE, VERDICT_STARVED,
		VERDICT_STUCK, VERDICT_STOPPED
	}		 verdict_kind;	/* what verdict says */
};

struct fleet {
	char		 run_dir[256];
	char		 peerd[512];	/* path of the peerd binary */
	json_t		*knobs;		/* fleet-wide flags */
	char		 binding[8];	/* peerd --binding; "" for its default */
	bool		 keep;		/* no PDEATHSIG: a kept fleet */
	struct peer	*peers[FLEET_MAX_PEERS];
	int		 npeers;
	int		 ready_timeout_ms;
	uint64_t	 seed;		/* the run's: each peer's fault seed */
	const struct launcher *launch;	/* the backend (launch.h): local */
	void		*launch_state;	/* the backend's own, or NULL */
	char		 launch_id[16];	/* its name for this run's things */
};

extern volatile sig_atomic_t fleet_sigchld;
/*
 * The read end of a pipe a byte arrives on whenever a signal the engine
 * waits for came (SIGCHLD here, the interrupts in main.c): a loop that
 * watches it sleeps until its deadline or that, not in 20 ms polls.
 * -1 when the pipe could not be made.
 */
extern int	 fleet_wake_fd;
/* Write that byte: async-signal-safe (errno kept). */
void		 fleet_wake(void);

/* Set up the SIGCHLD flag handler. */
void		 fleet_init(struct fleet *f, const char *run_dir,
		    const char *peerd, json_t *knobs);
/* A new peer slot (not started) with its directory made. */
struct peer	*fleet_add(struct fleet *f, json_t *knobs);
/*
 * Start p with the given seeds (host:port strings); wait for its ready
 * line for at most the ready timeout.  0, or -1 with err set.
 */
int		 fleet_start(struct fleet *f, struct peer *p, char **seeds,
		    int nseeds, char *err, size_t errlen);
/*
 * Fork/exec p with the given seeds without waiting: its ready line comes
 * on p->ready_fd (non-blocking), read with fleet_ready_read().  0, or -1
 * with err set.
 */
int		 fleet_spawn(struct fleet *f, struct peer *p, char **seeds,
		    int nseeds, char *err, size_t errlen);
/*
 * The local fork/exec of p->argv (a backend's spawn, launch.h): in the
 * child, setns(netns_fd, CLONE_NEWNET) first when netns_fd >= 0.  Its
 * ready line comes on p->ready_fd.  0, or -1 with err set.
 */
int		 fleet_exec(struct fleet *f, struct peer *p, int netns_fd,
		    char *err, size_t errlen);
/*
 * Run argv (a helper: gdb, ip, nft) with stdout and stderr to path
 * (appended or truncated), inside network namespace netns_fd when >= 0,
 * killed after timeout_ms: its exit status, or -1.
 */
int		 fleet_run_bounded(char *const argv[], const char *path,
		    bool append, int netns_fd, int timeout_ms);
/*
 * Read what p's ready pipe holds: 1 ready (listen, peer_id, peerd_pid
 * set; the pipe closed), 0 not yet, -1 with err (the pipe closed).
 */
int		 fleet_ready_read(struct peer *p, char *err, size_t errlen);
/* Close p's ready pipe without its line (the start step gave up). */
void		 fleet_ready_abandon(struct peer *p);
/*
 * Set a command prefix for p from a shell-like string, with {dir} and
 * {name} substituted. 0, or -1 if it does not parse.
 */
int		 fleet_set_wrap(struct peer *p, const char *prefix);
/* Send sig to a running peer's process group; TERM/KILL exits are expected. */
int		 fleet_signal(struct peer *p, int sig);
/* Wait (bounded) for p to exit after a signal; true if it did. */
bool		 fleet_wait_exit(struct fleet *f, struct peer *p, int timeout_ms);
/* Reap every exited child; returns how many crashed (unexpected exits). */
int		 fleet_reap(struct fleet *f);
/* TERM every live peer, then KILL after grace_ms; reap them all. */
void		 fleet_teardown(struct fleet *f, int grace_ms);
/*
 * utime + stime of pid in clock ticks, and its state letter (R, S, T...)
 * from /proc/PID/stat; -1 and '?' when it cannot be read.
 */
long long	 fleet_proc(pid_t pid, char *state);
/* ns pid ran plus waited for a CPU; -1 gone or unknown. */
long long	 fleet_sched(pid_t pid);
/* schedstat's ns, else CPU ticks, and the state letter; -1 gone. */
long long	 fleet_progress(pid_t pid, char *state);
/* Live: running or paused. */
bool		 fleet_live(const struct peer *p);
/*
 * One control request to p, bounded by timeout_ms: the result object (a
 * new reference), or NULL with err ("timeout", the error code, ...).
 */
json_t		*fleet_call(struct peer *p, const char *cmd, json_t *args,
		    int timeout_ms, char *err, size_t errlen);
/* Drop the control connection (after a restart, or on error). */
void		 fleet_disconnect(struct peer *p);
const char	*fleet_state_name(enum peer_state s);
/* The peer's command line as one shell-quoted string (malloc'd). */
char		*fleet_cmdline(const struct peer *p);
void		 fleet_free(struct fleet *f);

#endif

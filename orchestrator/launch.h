/*
 * launch.h: the launcher interface: how a run's peers come to exist and
 * where their faults live.  One table (LAUNCHERS in launch.c) holds one row
 * a backend, each a struct launcher of operations and the capabilities it
 * declares; the engine reaches a backend only through its row
 * (fleet->launch).  A scenario that needs what the chosen backend lacks is
 * refused before the run (launch_check), as unknown keys are.
 *
 * Built: "local" (fork/exec on 127.0.0.1, the default) and "netns" (root:
 * one network namespace a peer on a bridge, network faults by nft).  Both
 * run their peers as children on this host, so both use the process
 * operations of fleet.c (signal, reap, /proc for the watchdog, gdb for
 * hang/, the peer's files already in the run directory); a backend whose
 * peers live elsewhere (ssh, not built) would add those as rows' ops.
 * docs/launchers.md is the user's page.
 */
#ifndef LAUNCH_H
#define LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct fleet;
struct peer;

/* What a backend can do; a scenario's needs are checked against these. */
#define LAUNCH_NET_PARTITION	0x01	/* fault partition in the kernel */
#define LAUNCH_NET_DROP		0x02	/* fault drop (random loss) there */
#define LAUNCH_NET_DELAY	0x04	/* fault delay_ms/jitter_ms there */
#define LAUNCH_KEEP		0x08	/* --keep: a fleet left up is safe */
#define LAUNCH_WRAP		0x10	/* --wrap and --hold */

/* A fault at the network layer: one peer's share of a fault step. */
struct launch_fault {
	bool		 clear;		/* remove every rule */
	bool		 partition;	/* a partition (replaces the last) */
	const char	**cut;		/* its addresses cut off */
	int		 ncut;
	double		 drop;		/* else loss of what this peer sends
					   (replaces the last drop) */
	const char	*target;	/* drop toward this address; NULL all */
};

struct launcher {
	const char	*name;
	unsigned	 caps;		/* LAUNCH_* */
	const char	*about;		/* one line for --help and errors */
	/*
	 * Before any peer starts: the backend's own setup for up to npeers
	 * (after cleaning what a killed run of this backend left).  0, or
	 * -1 with err.
	 */
	int		(*prepare)(struct fleet *f, int npeers, char *err,
			    size_t len);
	/*
	 * p's --listen address (its endpoint) into buf; the address it
	 * advertises comes back on its ready line.
	 */
	void		(*endpoint)(struct fleet *f, const struct peer *p,
			    char *buf, size_t len);
	/*
	 * Fork and exec p->argv with the ready line on p->ready_fd
	 * (fleet_exec with the backend's child set-up).  0, or -1 with err.
	 */
	int		(*spawn)(struct fleet *f, struct peer *p, char *err,
			    size_t len);
	/* A fault in the kernel on p's side; NULL: the backend has none. */
	int		(*net_fault)(struct fleet *f, struct peer *p,
			    const struct launch_fault *nf, char *err,
			    size_t len);
	/* After the peers are down: remove all the backend made. */
	void		(*teardown)(struct fleet *f);
};

/* The backend named name, or NULL. */
const struct launcher	*launch_find(const char *name);
/* The default backend ("local"). */
const struct launcher	*launch_default(void);
/* Every backend's name and about, one a line, into fp (usage). */
void		 launch_list(void *fp);
/*
 * Whether the resolved scenario scn (and --keep, --wrap/--hold) asks
 * nothing of l it lacks: 0, or -1 with err naming the step and the want.
 */
int		 launch_check(const struct launcher *l, json_t *scn, bool keep,
		    bool wrap, char *err, size_t len);
/*
 * The layer a fault step acts in: its "layer", else "net" where l has
 * network faults, else "peer".
 */
const char	*launch_fault_layer(const struct launcher *l,
		    const char *layer);

/* ---- netns.c: the network-namespace backend (root) --------------------- */

int		 netns_prepare(struct fleet *f, int npeers, char *err,
		    size_t len);
void		 netns_endpoint(struct fleet *f, const struct peer *p,
		    char *buf, size_t len);
int		 netns_spawn(struct fleet *f, struct peer *p, char *err,
		    size_t len);
int		 netns_fault(struct fleet *f, struct peer *p,
		    const struct launch_fault *nf, char *err, size_t len);
void		 netns_teardown(struct fleet *f);
/*
 * Remove what netns runs killed before their teardown left (their state
 * files under NETNS_STATE_DIR name it); how many runs were cleaned.
 */
int		 netns_clean_stale(void);

#define NETNS_STATE_DIR	"/run/fleet-lab"

#endif

/*
 * peerd.h: the peer daemon's shared state.
 *
 * One process, one libevent loop, no threads.  struct peerd holds the
 * configuration (every knob of docs/scenarios.md and the
 * limits), the identity, the clock, the replica and the subsystems:
 * control.c (the JSON control socket), cmd.c (the one command table),
 * link.c (links and their state machine) over transport.c (TCP or TLS),
 * member.c (the member table), view.c (membership: the partial views),
 * swim.c (the failure detector), replica.c (the replicated space, the
 * store), plumtree.c (broadcast), recon.c and digest.c (anti-entropy),
 * take.c and vote.c (the lease race), fault.c (injected faults), trace.c
 * (the ring of recent events).  main.c wires them (docs/hacking.md).
 */
#ifndef PEERD_H
#define PEERD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "hlc.h"
#include "identity.h"

#define PEERD_VERSION	"0.1.0"

struct event_base;
struct event;
struct evconnlistener;
struct control;


struct peerd_conf {
	const char	*name;
	const char	*dir;
	const char	*listen;	/* host:port, port 0 picks one */
	const char	*advertise;	/* host:port told to peers, or NULL */
	const char	*control;	/* control socket path */
	const char	*group;
	const char	*log_level;
	const char	*log_file;	/* default DIR/peerd.log; "-" stderr */
	const char	*binding;	/* "tcp" or "tls" (transport.c) */
	char		**seeds;	/* host:port */
	int		 nseeds;
	bool		 hold;
	bool		 test_hooks;	/* enables the "debug" command */
	bool		 direct_io;	/* fetched pieces: O_DIRECT + cache */

	/* timing (the knob table of docs/scenarios.md), milliseconds */
	uint32_t	 settle_ms;
	uint32_t	 take_retry_ms;
	uint32_t	 take_window;	/* candidates a take picks among */
	uint32_t	 take_lease_ms;
	uint32_t	 gossip_ms;
	uint32_t	 repair_max_ms;
	uint32_t	 repair_horizon_ms;
	uint32_t	 tick_ms;
	uint32_t	 silence_ms;
	uint32_t	 ping_timeout_ms;
	uint32_t	 hops;		/* a rumor's hop budget */

	/* membership (view.c) and broadcast (plumtree.c) */
	uint32_t	 active;	/* active view: links kept */
	uint32_t	 passive;	/* passive view: addresses kept */
	uint32_t	 shuffle_ms;
	uint32_t	 swap_ms;
	uint32_t	 lazy_ms;	/* IHAVE batches leave this often */
	uint32_t	 batch_ms;	/* rumors to one link: one frame per */
	uint32_t	 graft_ms;	/* an IHAVE'd id missing: GRAFT after */
	uint32_t	 reconcile;	/* enum recon_method (recon.h) */
	uint32_t	 link_auth;	/* LINK_AUTH_SIG or LINK_AUTH_MAC (knob.h) */
	/*
	 * How a take decides it won (docs/protocol.md section 6): lease, the
	 * settle-window race; quorum, a majority of the membership acked.
	 */
	uint32_t	 take_mode;	/* TAKE_LEASE or TAKE_QUORUM */
	uint32_t	 fleet_size;	/* 0: not known (the proven members) */
	uint32_t	 answer_wait_ms; /* lease, with fleet_size */
	uint32_t	 settle_grid_ms; /* take.c: settle deadlines */
#define TAKE_LEASE	0
#define TAKE_QUORUM	1

	/* receiver checks */
	uint32_t	 max_age_s;
	uint32_t	 max_future_s;
	uint32_t	 rate_burst;
	uint32_t	 rate_per_s;
	uint32_t	 strikes;
	uint32_t	 quarantine_s;

	/* limits */
	uint32_t	 max_links;
	uint32_t	 max_preauth;	/* accepted links not yet proven */
	uint32_t	 preauth_ms;	/* to finish a handshake */
	uint32_t	 max_clients;
	uint32_t	 max_frame;
	uint32_t	 max_line;
	uint32_t	 max_entries;
	uint32_t	 trace_events;
	uint32_t	 trim_ms;	/* heap trim period, 0: never */
};

struct peerd {
	struct peerd_conf	 conf;
	struct event_base	*base;
	struct identity		 ident;
	struct hlc		 hlc;

	struct control		*control;
	char			 listen_addr[64];
	uint64_t		 start_us;	/* monotonic */
	bool			 stopping;
};

/* The one daemon of this process (signal handlers and logs reach it). */
extern struct peerd *pd;

/* Fill c with every default (conf.c). */
void	conf_defaults(struct peerd_conf *c);
/* Begin an orderly shutdown from inside the loop. */
void	peerd_shutdown(const char *why);
/* Microseconds since start. */
uint64_t peerd_uptime_us(void);

#endif

/*
 * peerd.h: the peer daemon's shared state.
 *
 * One process, one libevent loop, no threads.  struct peerd holds the
 * configuration (every knob of REFERENCE.md's timing constants and the
 * limits), the identity, the clock, the replica and the subsystems:
 * control.c (the JSON control socket), cmd.c (the one command table),
 * link.c (TCP links and their state machine), member.c (membership),
 * gossip.c (rumors and anti-entropy), replica.c (the replicated space),
 * fault.c (injected faults), trace.c (the ring of recent events).
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
	const char	*control;	/* control socket path */
	const char	*group;
	const char	*log_level;
	const char	*log_file;	/* default DIR/peerd.log; "-" stderr */
	char		**seeds;	/* host:port */
	int		 nseeds;
	bool		 hold;
	bool		 test_hooks;	/* enables the "debug" command */
	bool		 direct_io;	/* fetched pieces: O_DIRECT + cache */

	/* timing (REFERENCE.md "Timing constants"), milliseconds */
	uint32_t	 settle_ms;
	uint32_t	 take_retry_ms;
	uint32_t	 take_lease_ms;
	uint32_t	 gossip_ms;
	uint32_t	 tick_ms;
	uint32_t	 silence_ms;
	uint32_t	 ping_timeout_ms;
	uint32_t	 fanout;
	uint32_t	 hops;
	/*
	 * How a take decides it won (docs/protocol.md section 6): lease, the
	 * settle-window race; quorum, a majority of the membership acked.
	 */
	enum { TAKE_LEASE, TAKE_QUORUM } take_mode;

	/* receiver checks */
	uint32_t	 max_age_s;
	uint32_t	 max_future_s;
	uint32_t	 rate_burst;
	uint32_t	 rate_per_s;
	uint32_t	 strikes;
	uint32_t	 quarantine_s;

	/* limits */
	uint32_t	 max_links;
	uint32_t	 max_clients;
	uint32_t	 max_frame;
	uint32_t	 max_line;
	uint32_t	 max_entries;
	uint32_t	 trace_events;
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

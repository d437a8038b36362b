/*
 * view.h: membership as HyParView-style partial views (docs/protocol.md
 * section 4), above the link layer.
 *
 * The active view is the set of members this peer holds an UP link to:
 * a peer dials until it has --active of them and accepts a neighbour while
 * it has at most --active + VIEW_MARGIN, so every view fills (a full mesh
 * when the fleet has at most --active + 1 peers); the passive view is up to --passive addresses it may dial to
 * replace an active link that closes.  A new peer dials its seeds and sends
 * JOIN; the contact forwards FORWARD_JOIN on random walks of VIEW_ARWL hops,
 * whose ends link to the newcomer (NEIGHBOR with priority) and whose
 * VIEW_PRWL-th hop remembers its address.  NEIGHBOR asks the other side to
 * keep a new link (with priority when the asker has no other link: always
 * granted); DISCONNECT drops one without calling it a failure; SHUFFLE
 * swaps a few addresses with a random neighbour every --shuffle-ms.  The
 * link itself is the failure detector: TCP state, the handshake, and a
 * silence timeout (an idle link is pinged; silent for --silence-ms it is
 * closed).  A closed active link is replaced from the passive view at once.
 * Whatever a peer is sent, the views stay bounded: one frame adds at most
 * VIEW_FRAME_ADDS addresses, one sender owns at most a quarter of the
 * passive view, dials in flight are at most VIEW_DIALS, and an address
 * whose dials fail is backed off exponentially and forgotten after
 * VIEW_FAILS_MAX failures in a row (and not learnt again for
 * VIEW_FORGET_MS, whoever advertises it).
 */
#ifndef VIEW_H
#define VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define VIEW_ARWL		6	/* FORWARD_JOIN walk length */
#define VIEW_PRWL		3	/* the hop that keeps the address */
#define VIEW_MARGIN		1	/* links a peer may hold beyond --active */
#define VIEW_DIALS		8	/* dials in flight */
#define VIEW_FRAME_ADDS		16	/* addresses one frame can add */
#define VIEW_SHUFFLE_LEN	8	/* addresses a SHUFFLE carries */
#define VIEW_FAILS_MAX		6	/* failed dials in a row, then forgotten */
#define VIEW_FORGOTTEN		64	/* forgotten addresses remembered */
#define VIEW_FORGET_MS		60000	/* and refused for this long */
#define VIEW_BACKOFF_MIN_MS	200
#define VIEW_BACKOFF_MAX_MS	30000

struct member;

/* Register the view's frame kinds and observer; load DIR/view.addrs. */
void	 view_init(void);
/*
 * What losing the link to a member costs the layers above (0 nothing):
 * when a link must be dropped and none is quiet or unproven, one of the
 * cheapest goes.  The broadcast layer sets it.
 */
typedef unsigned (*view_cost_fn)(const struct member *);
void	 view_set_drop_cost(view_cost_fn fn);
/* Save the passive view and forget everything (at shutdown). */
void	 view_free(void);
/* Dial host:port as a seed: JOIN through it until a link comes up. 0/-1. */
int	 view_add_seed(const char *hostport);
/*
 * Fill, trim, ping and back off (called by main.c's tick); returns when it
 * next has work (monotonic ms): now while dials, a join, a fill or a trim
 * are pending, else the earliest ping, silence, shuffle, swap or save.
 */
uint64_t view_tick(void);
/*
 * Dispatch a JOIN, FORWARD_JOIN, NEIGHBOR, DISCONNECT, SHUFFLE or GROUP_AD
 * body from m. 0, or -1 if it is malformed (the link closes).
 */
int	 view_recv(struct member *m, uint32_t kind, const uint8_t *body,
	    size_t len);
/* Members in the active view (UP links). */
size_t	 view_active_count(void);
/* Addresses in the passive view. */
size_t	 view_passive_count(void);
/* Dials in flight. */
size_t	 view_dials_count(void);
/* The views as JSON (the "peers" answer's "view"). */
json_t	*view_json(void);

#endif

/*
 * plumtree.h: Plumtree broadcast, one tree per origin (plumtree.c;
 * docs/protocol.md section 7).  A record is the unit of replication:
 * [entry, state, claim or null].  Local changes queue records; at the end
 * of the loop iteration they become one rumor: it goes in full along
 * eager edges (tree edges) of the active view and as an id in a batched
 * IHAVE (every --lazy-ms) along the lazy ones.  A peer missing an IHAVE'd
 * id after --graft-ms sends GRAFT (the edge turns eager, the records come
 * back); a duplicate rumor answers PRUNE (the edge turns lazy).  Rumors
 * waiting for one link within --batch-ms leave in one frame.
 */
#ifndef PLUMTREE_H
#define PLUMTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_buf;
struct member;

#define PLUMTREE_SEEN		4096
#define PLUMTREE_HOPS_MAX	64	/* a rumor's hop budget, at most */
#define PLUMTREE_RUMORS_MAX	1024	/* rumors in one RUMOR frame */
#define PLUMTREE_IHAVE_MAX	1024	/* ids in one IHAVE or GRAFT */
#define PLUMTREE_CACHE		4096	/* rumors kept to answer GRAFT */
#define PLUMTREE_CACHE_BYTES	(16u << 20)
#define PLUMTREE_MISSING	4096	/* IHAVE'd ids awaited */
#define PLUMTREE_MISSING_SRC	4	/* announcers remembered per id */
#define PLUMTREE_ORIGINS	64	/* broadcast trees kept (one bit each) */

/*
 * Reset (the seen set, the cache, the trees) and make the timers; register
 * RUMOR, IHAVE, GRAFT and PRUNE and a link observer with link.c, and an
 * observer of the records this peer writes with replica.c.
 */
void	plumtree_init(void);
void	plumtree_free(void);
/* Queue one encoded record for the next rumor of this loop turn. */
void	plumtree_queue(const uint8_t *rec, size_t len);
/* n records (concatenated) as one rumor on the urgent lane of every link. */
void	plumtree_send_urgent(const uint8_t *recs, size_t len, size_t n);
/* A RUMOR, IHAVE, GRAFT or PRUNE body from an UP link. 0, or -1 malformed. */
int	plumtree_recv(struct member *from, uint32_t kind, const uint8_t *body,
	    size_t len);
/* Eager edges: the mean over the origins held (links when none). */
double	plumtree_tree_degree(void);

/*
 * What losing the link to m costs the trees now (view_set_drop_cost):
 * the origins in use (a rumor within 2 x (--lazy-ms + --graft-ms)) it
 * carries eagerly, counted each way.  A link lazy both ways for every
 * origin in use goes without a GRAFT or a cut subtree.
 */
unsigned plumtree_link_cost(const struct member *m);

/*
 * The bodies, appended to b (docs/protocol.md 7): an IHAVE or GRAFT (and a
 * RUMOR batch's closing ihave map) naming n rumor ids; a PRUNE naming n
 * origins.
 */
void	plumtree_ids_put(struct dcbor_buf *b, const uint64_t *ids,
	    size_t n);
void	plumtree_prune_put(struct dcbor_buf *b, const uint64_t *origin,
	    size_t n);

#endif

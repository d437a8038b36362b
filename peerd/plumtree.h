/*
 * plumtree.h: Plumtree broadcast, one tree per origin (plumtree.c;
 * docs/protocol.md section 7).  gossip.c calls it: the API the replica
 * sees stays gossip.h's (gossip_queue, gossip_send_urgent).
 */
#ifndef PLUMTREE_H
#define PLUMTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_buf;
struct member;

/* Reset (the seen set, the cache, the trees) and make the timers. */
void	plumtree_init(void);
void	plumtree_free(void);
/* Queue one encoded record for the next rumor of this loop turn. */
void	plumtree_queue(const uint8_t *rec, size_t len);
/* n records (concatenated) as one rumor on the urgent lane of every link. */
void	plumtree_send_urgent(const uint8_t *recs, size_t len, size_t n);
/* A RUMOR, IHAVE, GRAFT or PRUNE body from an UP link. 0, or -1 malformed. */
int	plumtree_recv(struct member *from, uint32_t kind, const uint8_t *body,
	    size_t len);
/* The link to m came up or went down. */
void	plumtree_link(struct member *m, bool up);
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

/*
 * rumorset.h: the rumor ids a peer has seen lately (the last PLUMTREE_SEEN,
 * a FIFO ring over an open-addressing set) and the rumors it keeps to
 * answer a GRAFT (the last PLUMTREE_CACHE, PLUMTREE_CACHE_BYTES at most).
 * Plumtree's bookkeeping, apart from its trees (plumtree.c).
 */
#ifndef RUMORSET_H
#define RUMORSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A kept rumor: what a GRAFT's answer carries again. */
struct rumorset_rumor {
	uint64_t	 rid;
	uint64_t	 hops;
	uint64_t	 origin;
	uint8_t		*items;
	size_t		 len;
};

/* Whether rid was seen lately (the last PLUMTREE_SEEN ids). */
bool	 rumorset_seen(uint64_t rid);
/* Remember rid as seen, forgetting the oldest. */
void	 rumorset_mark(uint64_t rid);
/* Keep a copy of a rumor to answer GRAFTs (oldest dropped past the caps). */
void	 rumorset_keep(uint64_t rid, uint64_t hops, uint64_t origin,
	    const uint8_t *items, size_t len);
/* The kept rumor rid, or NULL. */
const struct rumorset_rumor *rumorset_find(uint64_t rid);
/* Forget every id and free every kept rumor (start and shutdown). */
void	 rumorset_reset(void);

#endif

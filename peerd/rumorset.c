/*
 * rumorset.c: the rumors a peer has seen and the ones it keeps (see
 * rumorset.h).  plumtree.c asks whether an id is new, and answers GRAFTs
 * from the kept copies; nothing here sends or knows the trees.
 */
#include <stdlib.h>
#include <string.h>

#include "plumtree.h"
#include "rumorset.h"
#include "xmalloc.h"

/* Seen rumor ids: a FIFO ring for eviction plus an open-addressing set. */
#define SEEN_SLOTS	(PLUMTREE_SEEN * 4)
static uint64_t		 seen_ring[PLUMTREE_SEEN];
static size_t		 seen_next;
static uint64_t		 seen_set[SEEN_SLOTS];	/* 0 = empty */

/* Recently forwarded rumors, to answer a GRAFT: a ring. */
static struct rumorset_rumor	 cache[PLUMTREE_CACHE];
static size_t		 cache_next, cache_bytes;

/* Whether rid was seen lately (the last PLUMTREE_SEEN ids). */
bool
rumorset_seen(uint64_t rid)
{
	for (size_t i = rid % SEEN_SLOTS, n = 0; n < SEEN_SLOTS;
	    i = (i + 1) % SEEN_SLOTS, n++) {
		if (seen_set[i] == 0)
			return false;
		if (seen_set[i] == rid)
			return true;
	}
	return false;
}

static void
seen_del(uint64_t rid)
{
	size_t i = rid % SEEN_SLOTS, j;

	while (seen_set[i] != rid) {
		if (seen_set[i] == 0)
			return;
		i = (i + 1) % SEEN_SLOTS;
	}
	/* Backward-shift deletion keeps the probe chains whole. */
	seen_set[i] = 0;
	for (j = (i + 1) % SEEN_SLOTS; seen_set[j] != 0;
	    j = (j + 1) % SEEN_SLOTS) {
		uint64_t v = seen_set[j];
		size_t home = v % SEEN_SLOTS;
		bool move = i <= j ? (home <= i || home > j) :
		    (home <= i && home > j);

		if (move) {
			seen_set[i] = v;
			seen_set[j] = 0;
			i = j;
		}
	}
}

/* Remember rid as seen, forgetting the oldest. */
void
rumorset_mark(uint64_t rid)
{
	size_t i;

	if (seen_ring[seen_next] != 0)
		seen_del(seen_ring[seen_next]);
	seen_ring[seen_next] = rid;
	seen_next = (seen_next + 1) % PLUMTREE_SEEN;
	for (i = rid % SEEN_SLOTS; seen_set[i] != 0; i = (i + 1) % SEEN_SLOTS)
		;
	seen_set[i] = rid;
}


/* Keep a copy of a rumor to answer GRAFTs (oldest dropped past the caps). */
void
rumorset_keep(uint64_t rid, uint64_t hops, uint64_t origin, const uint8_t *items,
    size_t len)
{
	struct rumorset_rumor *c;

	while (cache_bytes + len > PLUMTREE_CACHE_BYTES && cache_bytes > 0) {
		/* Drop the oldest until it fits. */
		for (size_t i = 0; i < PLUMTREE_CACHE; i++) {
			c = &cache[(cache_next + i) % PLUMTREE_CACHE];
			if (c->items != NULL) {
				cache_bytes -= c->len;
				free(c->items);
				c->items = NULL;
				break;
			}
		}
	}
	if (len > PLUMTREE_CACHE_BYTES)
		return;
	c = &cache[cache_next];
	if (c->items != NULL) {
		cache_bytes -= c->len;
		free(c->items);
	}
	c->rid = rid;
	c->hops = hops;
	c->origin = origin;
	c->items = xmalloc(len);
	memcpy(c->items, items, len);
	c->len = len;
	cache_bytes += len;
	cache_next = (cache_next + 1) % PLUMTREE_CACHE;
}

/* The kept rumor rid, or NULL. */
const struct rumorset_rumor *
rumorset_find(uint64_t rid)
{
	for (size_t i = 0; i < PLUMTREE_CACHE; i++)
		if (cache[i].items != NULL && cache[i].rid == rid)
			return &cache[i];
	return NULL;
}

static void
cache_free(void)
{
	for (size_t i = 0; i < PLUMTREE_CACHE; i++) {
		free(cache[i].items);
		cache[i].items = NULL;
	}
	cache_next = cache_bytes = 0;
}

void
rumorset_reset(void)
{
	memset(seen_ring, 0, sizeof(seen_ring));
	memset(seen_set, 0, sizeof(seen_set));
	seen_next = 0;
	cache_free();
}

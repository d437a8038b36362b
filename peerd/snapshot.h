/*
 * snapshot.h: a reconciliation's view of the replica, taken once when a
 * session starts: every item's (state hash, entry id), sorted by hash and
 * without repeats, records issued at or after a horizon cut left out
 * (docs/protocol.md sections 8.1 and 8.4).  A session answers from it.
 */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "entry.h"

struct snapshot_item {
	uint64_t	h;
	uint8_t		id[ENTRY_ID_LEN];
};

struct snapshot {
	struct snapshot_item	*it;	/* sorted by h */
	size_t			 n;
};

/* Take s from the replica; cut (wall ms) leaves out later entries, 0 none. */
void	 snapshot_take(struct snapshot *s, uint64_t cut);
/* The hashes in order, for negentropy and RIBLT (caller frees). */
uint64_t *snapshot_hashes(const struct snapshot *s);
/* The entry id of hash h, or NULL when the snapshot has none. */
const uint8_t *snapshot_id(const struct snapshot *s, uint64_t h);
/* Forget s (it may be taken again). */
void	 snapshot_free(struct snapshot *s);

#endif

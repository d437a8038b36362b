/*
 * graft.h: the ids a peer was told of (IHAVE, or the ids at the end of a
 * RUMOR frame) and has not received: when and from whom each is GRAFTed,
 * and the eager copies' lag that sets the wait.  plumtree.c owns the
 * trees and hands the announcements and arrivals on.
 */
#ifndef GRAFT_H
#define GRAFT_H

#include <stddef.h>
#include <stdint.h>

struct member;

/* How a GRAFT frame of ids leaves for m: plumtree.c's sender. */
typedef int (*graft_send_fn)(struct member *m, uint32_t kind,
	    const uint64_t *ids, size_t n);

/* Forget every awaited id and lag; GRAFT frames leave through send. */
void	graft_init(graft_send_fn send);
void	graft_free(void);
/*
 * from announced rid, which we lack: GRAFT it when overdue, wait_ms from
 * now or the eager copies' recent lag, whichever is longer.
 */
void	graft_announced(uint64_t rid, struct member *from, uint64_t wait_ms);
/*
 * The first copy of rid came from from: if it was awaited, its lag is a
 * sample and up to max of its announcers go into has (they hold it: no
 * id of it goes back to them); returns how many.
 */
size_t	graft_arrived(uint64_t rid, struct member *from, struct member **has,
	    size_t max);
/* A duplicate of rid from m: after a GRAFT elsewhere, the eager copy. */
void	graft_copy(uint64_t rid, const struct member *m);

#endif

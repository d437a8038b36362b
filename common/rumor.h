/*
 * rumor.h: the rumor map, the one body format of a RUMOR frame's rumors
 * (docs/protocol.md section 7): {"rid", "hops", "items", "origin"}, in
 * that order, and the rid that names a rumor.  peerd's broadcast and the
 * benchmarks read and write it here.
 */
#ifndef RUMOR_H
#define RUMOR_H

#include <stddef.h>
#include <stdint.h>

#include "dcbor.h"

struct rumor_map {
	uint64_t	 rid;		/* never 0 */
	uint64_t	 hops;
	uint64_t	 origin;
	const uint8_t	*items;		/* the raw items, inside the frame */
	size_t		 items_len;
};

/* A rumor's rid: XXH3-64 (seed 0) of its encoded items, low bit set. */
uint64_t rumor_rid(const uint8_t *items, size_t len);
/* Append a rumor map to b. */
void	rumor_map_put(struct dcbor_buf *b, uint64_t rid, uint64_t hops,
	    uint64_t origin, const uint8_t *items, size_t len);
/* Read one rumor map; -1 when malformed (a rid of 0 included). */
int	rumor_map_get(struct dcbor_rd *rd, struct rumor_map *m);

#endif

/*
 * rumor.c: the rumor map's reader and writer and the rid (rumor.h).  Whether the rid
 * names the items is the caller's check: it counts the refusal.
 */
#include <xxhash.h>

#include "rumor.h"

uint64_t
rumor_rid(const uint8_t *items, size_t len)
{
	return XXH3_64bits(items, len) | 1;
}

void
rumor_map_put(struct dcbor_buf *b, uint64_t rid, uint64_t hops,
    uint64_t origin, const uint8_t *items, size_t len)
{
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "rid");
	dcbor_put_uint(b, rid);
	dcbor_put_cstr(b, "hops");
	dcbor_put_uint(b, hops);
	dcbor_put_cstr(b, "items");
	dcbor_put_raw(b, items, len);
	dcbor_put_cstr(b, "origin");
	dcbor_put_uint(b, origin);
}

int
rumor_map_get(struct dcbor_rd *rd, struct rumor_map *m)
{
	uint64_t n;

	if (dcbor_get_map(rd, &n) == -1 || n != 4 ||
	    dcbor_get_key(rd, "rid") == -1 ||
	    dcbor_get_uint(rd, &m->rid) == -1 ||
	    dcbor_get_key(rd, "hops") == -1 ||
	    dcbor_get_uint(rd, &m->hops) == -1 ||
	    dcbor_get_key(rd, "items") == -1 ||
	    dcbor_get_raw(rd, &m->items, &m->items_len) == -1 ||
	    m->rid == 0 ||
	    dcbor_get_key(rd, "origin") == -1 ||
	    dcbor_get_uint(rd, &m->origin) == -1)
		return -1;
	return 0;
}

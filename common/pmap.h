/*
 * pmap.h: persistent maps: a prolly tree of m nodes (pnode.h) over entries
 * sorted by key (docs/content.md, "Maps").
 *
 * A level is cut into nodes by a size-aware rule on the hash of each
 * entry's key (never its value): after an entry that brings the node from
 * s0 to s1 bytes, the node closes if s1 >= max, never if s1 < min, and
 * otherwise if XXH3-64(key, seed = level) mod 2^32 is below
 * (x1^2 - x0^2) * K, x = max(s, min) - min (a Rayleigh hazard, so nodes
 * come out near their target size whatever the entries' sizes).  Leaves:
 * min 512, target about 2 KiB, max 4 KiB, K = 1430; above them: min 256,
 * target about 1 KiB, max 2 KiB, K = 5719.  The tree depends only on the
 * entries; a changed value of the same size rewrites exactly one node a
 * level, and any put or delete re-cuts leaves only from the leaf holding
 * the key until a cut falls on an old one.
 */
#ifndef PMAP_H
#define PMAP_H

#include <stddef.h>
#include <stdint.h>

#include "dcbor.h"
#include "nodestore.h"
#include "pnode.h"

struct pmap_kv {
	const uint8_t	*key;
	size_t		 klen;
	const uint8_t	*val;
	size_t		 vlen;
};

struct pmap_info {
	uint8_t		root[PNODE_ID_LEN];
	unsigned	height;		/* the root's level (0: one leaf) */
	uint64_t	count;		/* entries */
	uint64_t	nodes;		/* nodes written or found (this call) */
	uint64_t	new_nodes;	/* nodes the store did not hold */
	uint64_t	new_bytes;
};

/*
 * Build the map of kv[0..n) (sorted by pnode_key_cmp, keys unique) into
 * s.  0, or -1 with err (unsorted, a key or value too long, a write).
 */
int	pmap_build(struct nodestore *s, const struct pmap_kv *kv, size_t n,
	    struct pmap_info *info, char *err, size_t errlen);
/*
 * Set key to val (val NULL: delete key) in map root, giving the new root
 * in info.  0, or -1 with err (a node missing or corrupt, a write).
 * Deleting an absent key gives the same root.
 */
int	pmap_put(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
	    const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
	    struct pmap_info *info, char *err, size_t errlen);
/* Delete key: pmap_put with no value. */
int	pmap_delete(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
	    const uint8_t *key, size_t klen, struct pmap_info *info, char *err,
	    size_t errlen);
/* Key's value into val (reset first): 0, 1 if absent, -1 on a bad node. */
int	pmap_get(struct pnode_src *src, const uint8_t root[PNODE_ID_LEN],
	    const uint8_t *key, size_t klen, struct dcbor_buf *val);
/*
 * Call fn for every entry in key order (the pointers live until fn
 * returns).  0, fn's nonzero, or -1 on a missing or bad node.
 */
int	pmap_iter(struct pnode_src *src, const uint8_t root[PNODE_ID_LEN],
	    int (*fn)(void *arg, const uint8_t *key, size_t klen,
	    const uint8_t *val, size_t vlen), void *arg);

#endif

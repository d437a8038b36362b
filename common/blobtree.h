/*
 * blobtree.h: blob trees: a value of up to 64 MiB cut into chunks by
 * FastCDC (16/64/256 KiB, level 2) under a tree of b nodes whose fan-out
 * is content-defined (docs/content.md, "Blob trees").
 *
 * A level's entries are grouped into nodes of the level above: a node is
 * closed after a child whose id's fourth byte has its low five bits all
 * one (a mean fan-out of 32) once it has at least 2 children, or when it
 * has 128; levels are built until one node remains, the root (a blob of
 * one chunk, or none, still has a level-1 root).  The tree depends only
 * on the bytes (history independent): an edit gives exactly the tree a
 * build of the edited bytes gives.  An edit re-chunks from the start of
 * the chunk whose cut could see the first changed byte until a cut falls
 * on an old cut past the change, and writes only the nodes the store does
 * not hold: the new chunks and the changed path.
 */
#ifndef BLOBTREE_H
#define BLOBTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fastcdc.h"
#include "nodestore.h"
#include "pnode.h"

/* The low bits of an id's fourth byte that close a b node when all one. */
#define BLOBTREE_FANOUT_MASK	0x1f
#define BLOBTREE_MIN_KIDS	2

struct blobtree_info {
	uint8_t		root[PNODE_ID_LEN];
	uint64_t	len;		/* content bytes */
	unsigned	height;		/* the root's level (>= 1) */
	bool		has_blake3;
	uint8_t		blake3[32];	/* the blob's identity (build only) */
	uint64_t	chunks;		/* chunks in the blob */
	uint64_t	bnodes;		/* b nodes in the tree */
	uint64_t	new_nodes;	/* nodes the store did not hold */
	uint64_t	new_bytes;
	uint64_t	rechunked;	/* content bytes cut again (an edit) */
};

/* One entry of a level: a chunk or a b node, and the content below it. */
struct blobtree_kid {
	uint8_t		id[PNODE_ID_LEN];
	uint64_t	len;
};

/*
 * Build the tree of data[0..len) into s with chunker params p (NULL: the
 * defaults) and its BLAKE3 identity.  0, or -1 with err (a value above
 * 64 MiB is refused; a store write failed).
 */
int	blobtree_build(struct nodestore *s, const struct fastcdc_params *p,
	    const uint8_t *data, uint64_t len, struct blobtree_info *info,
	    char *err, size_t errlen);
/*
 * Replace del bytes at off of blob root by ins[0..ins_len), giving a new
 * tree in info (its BLAKE3 is not computed: blobtree_identity).  Overwrite
 * in place is del == ins_len, insert del == 0, append off == the length
 * and del == 0.  0, or -1 with err (a range outside the blob, a result
 * above 64 MiB, a node missing or corrupt in s, a failed write).
 */
int	blobtree_edit(struct nodestore *s, const struct fastcdc_params *p,
	    const uint8_t root[PNODE_ID_LEN], uint64_t off, uint64_t del,
	    const uint8_t *ins, uint64_t ins_len, struct blobtree_info *info,
	    char *err, size_t errlen);
/*
 * The chunks of blob root in order (*kids allocated, the caller frees),
 * with the blob's length and height.  0, or -1 with err.
 */
int	blobtree_chunks(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
	    struct blobtree_kid **kids, size_t *n, uint64_t *len,
	    unsigned *height, char *err, size_t errlen);
/* Content [off, off+len) of blob root into out.  0, or -1 with err. */
int	blobtree_read(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
	    uint64_t off, uint64_t len, uint8_t *out, char *err,
	    size_t errlen);
/* The BLAKE3 identity of blob root, reading every chunk.  0 or -1. */
int	blobtree_identity(struct nodestore *s,
	    const uint8_t root[PNODE_ID_LEN], uint8_t out[32], char *err,
	    size_t errlen);

#endif

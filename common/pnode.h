/*
 * pnode.h: the nodes of persistent data trees (docs/content.md), their
 * bytes and their strict decoders.
 *
 * A node is named by its id, the SHA-256 of its bytes.  A chunk (`c`) is
 * raw content bytes; every other kind is one deterministic CBOR array
 * whose first item names the kind:
 *
 *   b   ["b", level, total_len, [[child_id, child_len], ...]]
 *       a blob tree node: level 1 lists chunks, level k+1 lists level-k
 *       nodes, each with the content length below it
 *   z   ["z", base_chunk_id, new_len, [op, ...]]
 *       a level-2 delta frame: a new chunk made from an old one; an op is
 *       [offset, len] (COPY from the base) or a byte string (ADD)
 *   bo  ["bo", 0, pairs] a Bao outboard leaf: the parent pairs of one
 *       span (2^span_log groups) in pre-order;
 *       ["bo", 1, content_len, group_log, span_log, pairs, [leaf_id, ...]]
 *       the top node: the pairs above the spans and one leaf a span
 *   m   ["m", 0, [[key, value], ...]] a map leaf;
 *       ["m", level, [[last_key, child_id, count], ...]] a map node above
 *
 * The decoders take untrusted bytes (a node from the network or a pack
 * file): canonical CBOR only, every count, length and order checked, and
 * the result points into the input (nothing in it outlives the bytes).
 * The tree modules (blobtree, pmap, bonode, pwalk) build on these; the
 * node store (nodestore.h) keeps the bytes.
 */
#ifndef PNODE_H
#define PNODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcbor.h"

#define PNODE_ID_LEN		32
/* The largest node of any kind (a z frame may ADD a whole chunk). */
#define PNODE_MAX_LEN		(1u << 20)
/* The largest blob (the owner's ruling: no value above 64 MiB). */
#define PNODE_BLOB_MAX		(64ull << 20)
/* Children of a b node (the grouping's clamp). */
#define PNODE_B_MAX_KIDS	128
/* Levels of b and m nodes above the leaves. */
#define PNODE_MAX_LEVEL		16
/* Ops of a z frame. */
#define PNODE_Z_MAX_OPS		4096
/* Pairs of one bo leaf: a span of at most 2^PNODE_BO_MAX_SPAN_LOG groups. */
#define PNODE_BO_MAX_SPAN_LOG	10
#define PNODE_BO_PAIR_LEN	64	/* = BAO_PAIR_LEN */
/* Entries of a map node, a map key, a map value. */
#define PNODE_M_MAX_ENTRIES	4096
#define PNODE_M_MAX_KEY		1024
#define PNODE_M_MAX_VALUE	65536

enum pnode_kind {
	PNODE_NONE = 0,
	PNODE_C,		/* chunk: raw bytes */
	PNODE_B,		/* blob tree node */
	PNODE_Z,		/* level-2 delta frame */
	PNODE_BO,		/* Bao outboard node */
	PNODE_M,		/* map node */
	PNODE_NKINDS
};

/* The kind's short name ("c", "b", "z", "bo", "m"), or "?" . */
const char	*pnode_kind_name(int kind);
/* The kind named s (as pnode_kind_name spells it), or PNODE_NONE. */
int		 pnode_kind_from_name(const char *s);

/* id = SHA-256(p[0..n)). */
void	pnode_id(const void *p, size_t n, uint8_t id[PNODE_ID_LEN]);

/* ---- b: blob tree node ---- */
struct pnode_child {
	const uint8_t	*id;		/* PNODE_ID_LEN bytes */
	uint64_t	 len;		/* content bytes below it */
};

struct pnode_b {
	uint64_t		 level;	/* 1: children are chunks */
	uint64_t		 total;	/* = the sum of the children's lengths */
	size_t			 n;
	struct pnode_child	 kids[PNODE_B_MAX_KIDS];
};

/* Append ["b", level, total, [[id, len], ...]] for kids[0..n). */
void	pnode_b_encode(struct dcbor_buf *out, uint64_t level,
	    const struct pnode_child *kids, size_t n);
/*
 * Decode a b node: 0, or -1 (not canonical, not a b node, a level outside
 * 1..PNODE_MAX_LEVEL, no child or more than PNODE_B_MAX_KIDS (an empty
 * level-1 node, the empty blob, is the one node with none), a child of
 * length 0, lengths that do not add up to total, total above
 * PNODE_BLOB_MAX).
 */
int	pnode_b_decode(const uint8_t *p, size_t n, struct pnode_b *b);

/* ---- z: level-2 delta frame ---- */
struct pnode_zop {
	bool		 add;		/* ADD bytes, else COPY off, len */
	uint64_t	 off;
	uint64_t	 len;
	const uint8_t	*bytes;		/* ADD: len bytes */
};

struct pnode_z {
	const uint8_t		*base;	/* the base chunk's id */
	uint64_t		 new_len;
	size_t			 nops;
	struct pnode_zop	*ops;	/* allocated: pnode_z_free */
};

/* Append ["z", base, new_len, ops]. */
void	pnode_z_encode(struct dcbor_buf *out, const uint8_t base[PNODE_ID_LEN],
	    uint64_t new_len, const struct pnode_zop *ops, size_t nops);
/*
 * Decode a z frame: 0, or -1 (not canonical, no op or more than
 * PNODE_Z_MAX_OPS, an empty op, ops whose lengths do not add up to
 * new_len, new_len 0 or above PNODE_MAX_LEN).  Whether a COPY stays inside
 * the base is the applier's check (zdelta_apply): only it has the base.
 */
int	pnode_z_decode(const uint8_t *p, size_t n, struct pnode_z *z);
void	pnode_z_free(struct pnode_z *z);

/* ---- bo: Bao outboard nodes ---- */
struct pnode_bo {
	uint64_t	 level;		/* 0 leaf, 1 top */
	const uint8_t	*pairs;		/* npairs x 64 bytes */
	size_t		 npairs;
	/* top only: */
	uint64_t	 content_len;
	unsigned	 group_log;
	unsigned	 span_log;
	size_t		 nleaves;
	const uint8_t	*leaves;	/* nleaves ids, 32 bytes each */
	const uint8_t	*leaf_items;	/* the encoded ids (read with dcbor) */
};

/* Append a leaf ["bo", 0, pairs]. */
void	pnode_bo_leaf_encode(struct dcbor_buf *out, const uint8_t *pairs,
	    size_t npairs);
/* Append a top ["bo", 1, content_len, g, span_log, pairs, [leaf ids]]. */
void	pnode_bo_top_encode(struct dcbor_buf *out, uint64_t content_len,
	    unsigned group_log, unsigned span_log, const uint8_t *pairs,
	    size_t npairs, const uint8_t *leaf_ids, size_t nleaves);
/*
 * Decode a bo node: 0, or -1 (not canonical; a leaf of more than
 * 2^PNODE_BO_MAX_SPAN_LOG - 1 pairs or a byte string that is not whole
 * pairs; a top whose pair and leaf counts are not those of its content
 * length, group and span size (bonode.h), or whose content length is
 * above PNODE_BLOB_MAX).  A top's leaf ids are copied nowhere: use
 * pnode_bo_leaf_id.
 */
int	pnode_bo_decode(const uint8_t *p, size_t n, struct pnode_bo *bo);
/* The id of leaf i of a decoded top node (i < nleaves). */
const uint8_t *pnode_bo_leaf_id(const struct pnode_bo *bo, size_t i);
/* Spans (at least 1) of content_len at group log g, span log s. */
uint64_t pnode_bo_spans(uint64_t content_len, unsigned group_log,
	    unsigned span_log);

/* ---- m: map node ---- */
struct pnode_mentry {
	const uint8_t	*key;
	size_t		 klen;
	/* leaf: */
	const uint8_t	*val;
	size_t		 vlen;
	/* above the leaves: */
	const uint8_t	*id;		/* PNODE_ID_LEN bytes */
	uint64_t	 count;		/* entries below */
};

struct pnode_m {
	uint64_t		 level;
	size_t			 n;
	struct pnode_mentry	*e;	/* allocated: pnode_m_free */
};

/* Append a map node of level with e[0..n) (leaf: key, val; else key, id, count). */
void	pnode_m_encode(struct dcbor_buf *out, uint64_t level,
	    const struct pnode_mentry *e, size_t n);
/* Bytes entry e adds to a map node of level (its encoded array). */
size_t	pnode_m_entry_len(uint64_t level, const struct pnode_mentry *e);
/*
 * Decode a map node: 0, or -1 (not canonical, level above PNODE_MAX_LEVEL,
 * keys not strictly increasing (pnode_key_cmp), a key above
 * PNODE_M_MAX_KEY or a value above PNODE_M_MAX_VALUE bytes, more than
 * PNODE_M_MAX_ENTRIES entries, an empty node above the leaves, a count of
 * 0).  Only a leaf may be empty: the empty map.
 */
int	pnode_m_decode(const uint8_t *p, size_t n, struct pnode_m *m);
void	pnode_m_free(struct pnode_m *m);
/* Map key order: bytewise, a proper prefix first. <0, 0, >0. */
int	pnode_key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/* ---- any kind ---- */
/* The kind of a CBOR node p[0..n) (b, z, bo or m), or PNODE_NONE. */
int	pnode_kind_of(const uint8_t *p, size_t n);
/* Check p[0..n) as a node of kind: 0 or -1 (a chunk: any 1..MAX bytes). */
int	pnode_check(int kind, const uint8_t *p, size_t n);
/*
 * Call fn for every child of a node of kind (b: its children, chunks
 * below level 1; m above the leaves: its children; a bo top: its leaves),
 * with the child's kind, id, level and content length (map: entry count;
 * bo leaf: 0).  0, or -1 if the node does not decode, or fn's nonzero.
 */
int	pnode_children(int kind, const uint8_t *p, size_t n,
	    int (*fn)(void *arg, int kind, const uint8_t *id, uint64_t level,
	    uint64_t len), void *arg);

/*
 * Where nodes come from: get appends node id's bytes to out (after a
 * reset) and returns 0, 1 if the source does not hold it, -1 on an error
 * (a stored node that does not hash to its id is an error).  *kind gets
 * the kind it was stored as (PNODE_NONE if the source does not know).
 */
struct pnode_src {
	int	(*get)(void *arg, const uint8_t id[PNODE_ID_LEN],
		    struct dcbor_buf *out, int *kind);
	void	 *arg;
};

#endif

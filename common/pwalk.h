/*
 * pwalk.h: the walks a holder and a reader make over persistent data
 * trees (blob trees and maps; docs/content.md, "Deltas and catch-up").
 *
 * pwalk_delta is the holder's: every node reachable from a want root and
 * not from the have roots the reader names, found by walking the trees
 * level by level from the top and skipping every subtree whose id the
 * have side holds at that level; nodes come out parents first, so a
 * reader can check each against an id it already trusts as it arrives.
 * At feature level 2 a new chunk that starts where a have chunk started
 * travels as a z frame against it when the frame is smaller.  (A node is
 * sent although the reader has it only when it repeats inside a subtree
 * the two trees share: the walk never opens shared subtrees.)
 *
 * pwalk_levels is the reader's without a base it can trust: level by
 * level from the root, the ids of the next level that its store lacks,
 * one round each (depth + 1 rounds for a blob: one a b-node level and one
 * for the chunks).
 */
#ifndef PWALK_H
#define PWALK_H

#include <stddef.h>
#include <stdint.h>

#include "pnode.h"

/* One node to send. */
struct pwalk_node {
	int		 kind;	/* PNODE_Z: chunk id travels as a frame */
	const uint8_t	*id;	/* the node (for a z frame, the chunk it makes) */
	const uint8_t	*base;	/* z: the base chunk's id */
	uint64_t	 level;	/* 0: chunks and map leaves */
	const uint8_t	*bytes;	/* what travels (the node, or the frame) */
	size_t		 len;
};

struct pwalk_stat {
	uint64_t	nodes[PNODE_NKINDS];	/* sent, by kind sent as */
	uint64_t	bytes[PNODE_NKINDS];
	uint64_t	nodes_total, bytes_total;
	uint64_t	have_read;	/* have-side nodes read to compare */
};

/*
 * Walk want against have[0..nhave) (roots of the same kind: b, m or a bo
 * top) in
 * src, calling fn for every node to send (fn's nonzero stops the walk and
 * is returned).  level 2 allows z frames.  0, fn's value, or -1 if a node
 * is missing or bad in src (a have root src lacks is such a node: the
 * holder answers that the base is unknown).
 */
int	pwalk_delta(struct pnode_src *src, const uint8_t want[PNODE_ID_LEN],
	    const uint8_t *have, size_t nhave, int level,
	    int (*fn)(void *arg, const struct pwalk_node *n), void *arg,
	    struct pwalk_stat *st);

struct pwalk_levels;

/* A level walk of the tree under root (a b, m or bo top node) for a reader. */
struct pwalk_levels *pwalk_levels_new(const uint8_t root[PNODE_ID_LEN]);
void	pwalk_levels_free(struct pwalk_levels *w);
/*
 * The next round: the ids (*n of them, 32 bytes each, valid until the
 * next call) at the next level down that local lacks, of *kind.  The
 * previous round's nodes must be in local by now: they are read from it
 * to find their children (held nodes are opened there too, so a reader
 * that restarts asks only for what it lacks).  A level local holds
 * entirely costs no round: it is passed.  0 (*n == 0: the tree is whole),
 * or -1 if a node of the walk is missing or bad in local.
 */
int	pwalk_levels_next(struct pwalk_levels *w, struct pnode_src *local,
	    const uint8_t **ids, size_t *n, int *kind);
/* Rounds returned so far with ids in them, and the depth seen (root level). */
unsigned pwalk_levels_rounds(const struct pwalk_levels *w);
unsigned pwalk_levels_depth(const struct pwalk_levels *w);

#endif

/*
 * bonode.h: a blob's Bao outboard kept as bo nodes (pnode.h), so that a
 * reader of a window fetches only the outboard it needs.
 *
 * The outboard (Bao's layout: the content length, 8 bytes little-endian,
 * then every parent pair of the BLAKE3 tree of groups, 64 bytes, in
 * pre-order) splits at spans of 2^span_log groups: every span aligned to
 * its size is a subtree of the tree (a left subtree always holds a power
 * of two groups), so its pairs are one run of the pre-order; each span's
 * run is a leaf node and the pairs above the spans, with one leaf id a
 * span, are the top node.  At 16 KiB groups and 1,024-group spans a leaf
 * covers 16 MiB with at most 1,023 pairs (65,472 bytes), and a window
 * inside one span needs that leaf and the top node (3 pairs at 64 MiB).
 */
#ifndef BONODE_H
#define BONODE_H

#include <stddef.h>
#include <stdint.h>

#include "dcbor.h"
#include "nodestore.h"
#include "pnode.h"

#define BONODE_SPAN_LOG_DEFAULT	PNODE_BO_MAX_SPAN_LOG

/*
 * Split outboard ob[0..oblen) made at group log g into leaves of
 * 2^span_log groups and a top node, stored in s; the top's id into top.
 * 0, or -1 with err (a length that is not the outboard's, a write).
 */
int	bonode_split(struct nodestore *s, const uint8_t *ob, size_t oblen,
	    unsigned g, unsigned span_log, uint8_t top[PNODE_ID_LEN],
	    char *err, size_t errlen);
/*
 * The whole outboard again from top and its leaves in src, into out
 * (reset first).  0, or -1 if a node is missing or bad.
 */
int	bonode_join(struct pnode_src *src, const uint8_t top[PNODE_ID_LEN],
	    struct dcbor_buf *out);
/*
 * The spans (leaf indexes first..last) a window [off, off+len) of
 * content_len touches (len 0 reads as 1; clamped to the content).
 */
void	bonode_window(uint64_t content_len, unsigned g, unsigned span_log,
	    uint64_t off, uint64_t len, uint64_t *first, uint64_t *last);

#endif

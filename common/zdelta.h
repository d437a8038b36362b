/*
 * zdelta.h: level-2 intra-chunk delta frames (z nodes, pnode.h): a new
 * chunk carried as COPY and ADD ops against an old chunk the reader holds.
 *
 * zdelta_make keeps the longest common prefix and suffix of the two chunks
 * and ADDs what lies between, so a one-byte edit is COPY + ADD + COPY
 * (about 60 bytes against a 64 KiB chunk) and an insert is COPY + ADD +
 * COPY of the inserted bytes.  zdelta_apply rebuilds the new chunk and
 * checks its SHA-256 against the id the reader expects (the id its
 * verified b node names), so a frame can never put a wrong chunk in place.
 */
#ifndef ZDELTA_H
#define ZDELTA_H

#include <stddef.h>
#include <stdint.h>

#include "dcbor.h"
#include "pnode.h"

/*
 * Append the z frame that makes new[0..nn) from base[0..bn) (whose id is
 * base_id) to out.  Returns the frame's length; the caller sends the
 * chunk whole instead when that is not smaller.
 */
size_t	zdelta_make(struct dcbor_buf *out, const uint8_t base_id[PNODE_ID_LEN],
	    const uint8_t *base, size_t bn, const uint8_t *new, size_t nn);
/*
 * Apply frame f[0..fn) to base[0..bn): the new chunk into out (reset
 * first) when it decodes, names this base (SHA-256 of base equals its
 * base id), every COPY lies inside the base, and SHA-256 of the result is
 * want_id.  0, or -1 with a static reason in *why.
 */
int	zdelta_apply(const uint8_t *f, size_t fn, const uint8_t *base,
	    size_t bn, const uint8_t want_id[PNODE_ID_LEN],
	    struct dcbor_buf *out, const char **why);

#endif

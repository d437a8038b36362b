/*
 * neg.h: range-based set reconciliation after negentropy (Doug Hoyte's
 * protocol for Nostr), written for this project.
 *
 * Items are 64-bit values (peerd uses the XXH3-64 of a record's mergeable
 * state, so a changed state reconciles, not only presence).  Each side
 * holds its items sorted.  A message is a CBOR array of ranges that
 * together cover [0, 2^64): each range names its exclusive upper bound
 * (null for the last one, which runs to the end) and a mode:
 *
 *   [upper, 0]            skip: nothing to do here
 *   [upper, 1, fp]        fingerprint of the sender's items in the range
 *   [upper, 2, bstr(8k)]  the sender's items in the range, big-endian,
 *                         strictly ascending
 *
 * On a fingerprint that differs from its own the receiver answers with
 * its item list when it holds at most NEG_IDLIST_MAX items there, and
 * otherwise splits the range into NEG_BRANCH ranges of equal item counts,
 * each with its fingerprint.  On an item list it learns both sides of the
 * difference in that range at once (have: its items the sender lacks;
 * need: the sender's items it lacks) and answers skip.  A reply of skips
 * only is not sent: the reconciliation is over.  docs/protocol.md has the
 * wire form and the fingerprint.
 *
 * Bounded: a message of more than NEG_IN_RANGES ranges is refused; a reply
 * never holds more than NEG_OUT_RANGES ranges or NEG_OUT_ITEMS listed
 * items (past either budget a differing range is answered with the
 * receiver's own fingerprint unsplit, and the other side splits it next),
 * so no message can make a peer compute or allocate without limit.
 */
#ifndef NEG_H
#define NEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_buf;

#define NEG_BRANCH	16
#define NEG_IDLIST_MAX	32
#define NEG_IN_RANGES	(1u << 16)
#define NEG_OUT_RANGES	(1u << 14)
#define NEG_OUT_ITEMS	(1u << 16)

/* A growable list of items. */
struct neg_ids {
	uint64_t	*v;
	size_t		 n, cap;
};

struct neg;

/* A side of a reconciliation over a copy of items (sorted, deduplicated). */
struct neg	*neg_new(const uint64_t *items, size_t n);
void		 neg_free(struct neg *ng);
/* Items held (after deduplication). */
size_t		 neg_size(const struct neg *ng);
/* The initiator's first message, appended to out. */
void		 neg_initiate(struct neg *ng, struct dcbor_buf *out);
/*
 * Answer message msg: the reply is appended to out (nothing appended: the
 * reconciliation is over), what this side has and the sender lacks to
 * have, what the sender has and this side lacks to need.  0, or -1 if msg
 * is malformed (out, have and need may hold a partial answer then).
 */
int		 neg_reply(struct neg *ng, const uint8_t *msg, size_t len,
		    struct dcbor_buf *out, struct neg_ids *have,
		    struct neg_ids *need);
/* The fingerprint of a run of sorted items (docs/protocol.md). */
uint64_t	 neg_fingerprint(uint64_t sum, uint64_t count);

void		 neg_ids_push(struct neg_ids *l, uint64_t v);
void		 neg_ids_free(struct neg_ids *l);

#endif

/*
 * crdt.h: the replicated state of entries (docs/protocol.md section 6,
 * "Claim merge", "The lease-race take").
 *
 * Per entry:
 *  - add dots and remove dots: grow-only sets of (node, counter), merged by
 *    union, at most CRDT_MAX_DOTS each (a merge that would exceed it is
 *    refused and changes nothing);
 *  - the lease: a last-writer-wins register (HLC stamp, expires_at_ms);
 *    equal stamps keep the later expiry so the merge stays deterministic;
 *  - completion: a set-once flag, merged by OR.
 * An entry is present when some add dot is not removed and it is not
 * completed.
 *
 * A take claim is merged by a total order, so one of the two inputs always
 * wins: 1 higher epoch; 2 lower bid; 3 lower HLC stamp; 4 lower holder id;
 * 5 (same holder) later expiry, which is a renewal.  Two claims equal in
 * all of that differ at most in their signature bytes; as a last rule the
 * lower signature wins, only to keep the merge commutative.  Epoch 0 means
 * "no claim" and loses to every claim.
 *
 * A crdt_map holds (id, state, claim) records sorted by entry id: the
 * whole-state merge, the delta for anti-entropy, and their encodings.
 * Every merge here is commutative, associative and idempotent
 * (tests/unit/test_crdt.c checks it on random inputs); records merge their
 * claim first, then their state.
 *
 * Encodings (canonical CBOR):
 *   state  = { "add": [* node, counter], "rem": [* node, counter],
 *              "done": bool, "lease": [stamp, expires_ms] }
 *            (dot lists flattened, strictly increasing by (node, counter))
 *   claim  = { "bid", "key": bstr(32), "sig": bstr(64), "mono", "epoch",
 *              "stamp", "expiry", "holder": bstr(32) }
 *   signed claim = the claim without "key", "sig" and "mono", plus
 *              "entry": bstr(16)
 * mono is the holder's CLOCK_MONOTONIC in us when it claimed: metadata for
 * latency measured on one host, like an entry's; it takes no part in the
 * merge.
 * A claim carries its holder's public key (holder = SHA-256(key)) so that
 * any peer can verify it, whether or not it has met the holder.
 *   record = { "id": bstr(16), "st": state, "claim": claim (if any) }
 *   map    = [* record]
 */
#ifndef CRDT_H
#define CRDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "hlc.h"
#include "identity.h"

struct dcbor_buf;
struct dcbor_rd;

#define CRDT_MAX_DOTS		1024
#define CRDT_EPOCH_JUMP_MAX	(1ull << 20)
#define CRDT_HOLD_MAX_MS	(24ull * 3600 * 1000)
#define CRDT_STAMP_BEFORE_MS	(600ull * 1000)

enum crdt_err {
	CRDT_OK = 0,
	CRDT_EFULL,		/* a dot set would exceed CRDT_MAX_DOTS */
	CRDT_EDECODE,		/* malformed encoding */
	CRDT_EEPOCH,		/* remote claim: epoch 0 or jump over 2^20 */
	CRDT_EHOLD,		/* remote claim: held over 24 h */
	CRDT_ESTAMP,		/* remote claim: stamped long before the entry */
};

struct crdt_dot {
	uint64_t	node;
	uint64_t	counter;
};

struct crdt_dotset {
	struct crdt_dot	*d;		/* sorted, unique */
	uint32_t	 n;
	uint32_t	 cap;
};

struct crdt_lease {
	struct hlc_stamp	stamp;	/* all zero: never set */
	uint64_t		expires_ms;
};

struct crdt_state {
	struct crdt_dotset	adds;
	struct crdt_dotset	rems;
	struct crdt_lease	lease;
	bool			completed;
};

/* Epoch 0 is "no claim"; such a claim is all zero (decoders make it so). */
struct crdt_claim {
	uint64_t		epoch;		/* 0: no claim */
	uint64_t		bid;
	struct hlc_stamp	stamp;
	uint8_t			holder[IDENTITY_ID_LEN];
	uint8_t			key[IDENTITY_PUB_LEN];	/* holder's */
	uint64_t		mono_us;	/* not signed, not merged */
	uint64_t		expiry_ms;
	uint8_t			sig[IDENTITY_SIG_LEN];
};

struct crdt_rec {
	uint8_t			id[ENTRY_ID_LEN];
	struct crdt_state	st;
	struct crdt_claim	claim;
};

struct crdt_map {
	struct crdt_rec	*r;		/* sorted by id */
	size_t		 n;
	size_t		 cap;
};

/* A static name for an error. */
const char	*crdt_strerror(int err);

/* ---- per-entry state ---- */

void	crdt_state_init(struct crdt_state *st);
void	crdt_state_free(struct crdt_state *st);
/* dst becomes a deep copy of src (dst must be initialised). */
void	crdt_state_copy(struct crdt_state *dst, const struct crdt_state *src);
/* Add an add dot. CRDT_OK or CRDT_EFULL. */
int	crdt_state_add(struct crdt_state *st, uint64_t node, uint64_t counter);
/* Remove every add dot seen so far (observed remove). OK or EFULL. */
int	crdt_state_remove(struct crdt_state *st);
/* Fold a lease write into the LWW register. */
void	crdt_state_lease(struct crdt_state *st, const struct hlc_stamp *stamp,
	    uint64_t expires_ms);
void	crdt_state_complete(struct crdt_state *st);
/* Some add dot not removed, and not completed. */
bool	crdt_state_present(const struct crdt_state *st);
/* dst = dst merge src. CRDT_OK, or CRDT_EFULL with dst unchanged. */
int	crdt_state_merge(struct crdt_state *dst, const struct crdt_state *src);
/* True when merging src into dst would change dst. */
bool	crdt_state_would_change(const struct crdt_state *dst,
	    const struct crdt_state *src);
bool	crdt_state_equal(const struct crdt_state *a,
	    const struct crdt_state *b);
void	crdt_state_encode(struct dcbor_buf *b, const struct crdt_state *st);
/* Decode into an initialised st (its old contents are dropped). 0 or -1. */
int	crdt_state_decode(struct dcbor_rd *rd, struct crdt_state *st);

/* ---- take claims ---- */

/* The winner of a and b under the claim rules (always one of the two). */
const struct crdt_claim *crdt_claim_merge(const struct crdt_claim *a,
	    const struct crdt_claim *b);
bool	crdt_claim_equal(const struct crdt_claim *a,
	    const struct crdt_claim *b);
/* A real claim whose expiry is after now. */
bool	crdt_claim_active(const struct crdt_claim *c, uint64_t now_ms);
/* Append the bytes the holder signs: the claim bound to entry id. */
void	crdt_claim_signing_bytes(struct dcbor_buf *b,
	    const struct crdt_claim *c, const uint8_t id[ENTRY_ID_LEN]);
void	crdt_claim_encode(struct dcbor_buf *b, const struct crdt_claim *c);
/* 0, or -1 (rd->err set, or DCBOR_ETYPE for a bad shape). */
int	crdt_claim_decode(struct dcbor_rd *rd, struct crdt_claim *c);
/*
 * Bounds on a claim from a peer, against the current winner's epoch, the
 * entry's issue stamp and now: CRDT_OK, CRDT_EEPOCH, CRDT_EHOLD or
 * CRDT_ESTAMP.
 */
int	crdt_claim_check_remote(const struct crdt_claim *c, uint64_t cur_epoch,
	    const struct hlc_stamp *entry_stamp, uint64_t now_ms);

/* ---- records and whole-state maps ---- */

void	crdt_rec_init(struct crdt_rec *r, const uint8_t id[ENTRY_ID_LEN]);
void	crdt_rec_free(struct crdt_rec *r);
/* dst (same id) = dst merge src: claim first, then state. OK or EFULL. */
int	crdt_rec_merge(struct crdt_rec *dst, const struct crdt_rec *src);
bool	crdt_rec_would_change(const struct crdt_rec *dst,
	    const struct crdt_rec *src);
void	crdt_rec_encode(struct dcbor_buf *b, const struct crdt_rec *r);
/* Decode into an initialised r. 0 or -1. */
int	crdt_rec_decode(struct dcbor_rd *rd, struct crdt_rec *r);

void	crdt_map_init(struct crdt_map *m);
void	crdt_map_free(struct crdt_map *m);
struct crdt_rec *crdt_map_get(const struct crdt_map *m,
	    const uint8_t id[ENTRY_ID_LEN]);
/* Merge one record in (inserting a copy if its id is new). OK or EFULL. */
int	crdt_map_merge_rec(struct crdt_map *m, const struct crdt_rec *r);
/*
 * dst = dst merge src; CRDT_EFULL if some record was refused.  One pass
 * over both sorted arrays: linear in dst->n + src->n however many ids are
 * new (dst == src, or a src not sorted, falls back to record by record).
 */
int	crdt_map_merge(struct crdt_map *dst, const struct crdt_map *src);
/* out (initialised, emptied first) = the records of a that would change b. */
void	crdt_map_delta(const struct crdt_map *a, const struct crdt_map *b,
	    struct crdt_map *out);
bool	crdt_map_equal(const struct crdt_map *a, const struct crdt_map *b);
void	crdt_map_encode(struct dcbor_buf *b, const struct crdt_map *m);
/* Merge the records of an encoded map into m; at most max_recs. 0 or -1. */
int	crdt_map_decode(struct dcbor_rd *rd, struct crdt_map *m,
	    size_t max_recs);

#endif

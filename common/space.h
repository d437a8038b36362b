/*
 * space.h: the local replica of one tuple space (docs/protocol.md section 6).
 *
 * A space holds records: a signed entry, its CRDT state and the winning
 * take claim (crdt.h).  The daemon composes the verbs from these calls:
 *
 *   write     space_write (a local entry, already signed)
 *   read      space_read / space_read_all: local state only
 *   take      LEASE_RACE: space_take_candidate, space_claim_make, sign,
 *             space_claim, spread; after the settle window space_won.
 *             space_take_local claims at once, for non-replicated use.
 *   complete  space_complete (set-once)
 *   lease     space_lease (renew or cancel: an LWW lease write)
 *   gossip    space_merge for remote records, space_digest and
 *             space_foreach_bucket for anti-entropy, space_rec_encode /
 *             space_rec_decode for the record on the wire.
 *
 * Visible = present (crdt.h), lease unexpired and no unexpired claim.
 * Matching is FIFO within a type: by issue stamp, then id.  Each type keeps
 * an index of its visible records only (claimed, completed and expired
 * ones leave it and come back when a claim lapses), so a take scans from
 * the oldest visible entry and costs about the same at 100 or 10,000
 * entries.  A template with conditions also gets a cursor on its type (the
 * 32 most recently used per type, keyed by the conditions' canonical form)
 * that remembers how far the visible records are known to fail it, so a
 * selective take resumes where the last one stopped instead of rescanning
 * what it never takes.  A template with an eq condition (or, for a first
 * match, a short "in" list) skips the scan: a per-(type, field) hash
 * index, made the first time a template asks for that field and kept
 * with the type index after, yields the visible records whose field
 * equals the operand (numbers by value: 1 and 1.0 alike) in FIFO order.
 * A template with neither still walks from the oldest visible entry on
 * its first scan (or its first after cursor eviction).
 *
 * Time is always passed in (now_ms, wall ms).  Any call that takes now_ms
 * first runs what fell due by then: lease expiries (EXPIRED), lapsed
 * claims (REAPPEARED) and the collection of tombstones.  An expired,
 * removed or completed record stays as a tombstone (so a stale peer cannot
 * resurrect it) until its lease end + min(2 x the largest lease seen,
 * 24 h); remote records older than that are refused.  A completed record
 * is *compacted* at the next call that takes now_ms: it keeps its id, dots,
 * lease and completion and drops its entry and claim (space_rec_entry is
 * NULL from then on, and a merge ignores claims for it).  The usual
 * completed state (one add dot, no remove dot, the lease stamped by the
 * dot's node) is then held packed in 64 bytes, outside the due times;
 * its hash, its encoding and every answer are those of the unpacked
 * record.  Record pointers handed out stay valid until the next call that
 * takes now_ms.
 *
 * The event callback sees every transition once per replica: WRITTEN when
 * a record becomes live, TAKEN when it gets an active claim, COMPLETED,
 * EXPIRED (lease end or removal, not completed) and REAPPEARED (a claim
 * lapsed without completion).  It must not call back into the space.
 *
 * Digest: B buckets by id; a bucket's value is the sum of XXH3-64 of the
 * encoded (id, state, claim) of its records, so it does not depend on
 * insertion order.  Signatures (entries, claims) are the daemon's job:
 * verify before space_merge / space_claim.
 */
#ifndef SPACE_H
#define SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crdt.h"
#include "entry.h"
#include "hlc.h"
#include "identity.h"
#include "template.h"

struct dcbor_buf;
struct dcbor_rd;

#define SPACE_RETENTION_MAX_MS	(24ull * 3600 * 1000)

enum space_err {
	SPACE_OK = 0,
	SPACE_EFULL,		/* max_entries records held */
	SPACE_EEXISTS,		/* a local write of an id already held */
	SPACE_ENOENT,		/* no record with that id */
	SPACE_EEXPIRED,		/* lease (and tombstone time) already over */
	SPACE_EDOTS,		/* a dot set would exceed CRDT_MAX_DOTS */
	SPACE_EALREADY,		/* completed before */
	SPACE_EINVAL,		/* entry and state disagree on the id */
};

enum space_event {
	SPACE_EV_WRITTEN = 0,
	SPACE_EV_TAKEN,
	SPACE_EV_COMPLETED,
	SPACE_EV_EXPIRED,
	SPACE_EV_REAPPEARED,
};

struct space;
struct space_rec;

typedef void	(*space_event_cb)(void *arg, enum space_event ev,
		    const struct space_rec *r);
/* Iteration callback; return false to stop. */
typedef bool	(*space_rec_cb)(void *arg, const struct space_rec *r);

const char	*space_strerror(int err);
const char	*space_event_name(enum space_event ev);

/*
 * A new empty space.  node is this peer's HLC node (the issuer of its add
 * dots), self its 32-byte id (the holder of its claims), max_entries the
 * record limit (tombstones included).
 */
struct space	*space_new(uint64_t node, const uint8_t self[IDENTITY_ID_LEN],
		    size_t max_entries);
void		 space_free(struct space *sp);
void		 space_set_event_cb(struct space *sp, space_event_cb cb,
		    void *arg);

/* Insert a local write (consumes e). SPACE_OK, EEXISTS, EFULL, EEXPIRED. */
int		 space_write(struct space *sp, struct entry *e,
		    uint64_t now_ms);
/*
 * Merge a remote record: claim first, then state; e (consumed, may be
 * NULL when the id is known) is needed only for a new id.  Idempotent.
 * SPACE_OK, ENOENT, EINVAL, EFULL, EEXPIRED, EDOTS.
 */
int		 space_merge(struct space *sp, struct entry *e,
		    const struct crdt_rec *cr, uint64_t now_ms);
struct space_rec *space_get(const struct space *sp,
		    const uint8_t id[ENTRY_ID_LEN]);
/* Records held, tombstones included. */
size_t		 space_count(const struct space *sp);
/* Records visible now (in the type indexes). */
size_t		 space_visible_count(const struct space *sp);
/* Due times queued (lease ends, claim expiries, collections), stale ones
 * included: never more than 1.5 x space_count + 1024. */
size_t		 space_due_count(const struct space *sp);
/* Every record, in no particular order. */
void		 space_foreach(const struct space *sp, space_rec_cb cb,
		    void *arg);
/* Run what fell due by now_ms (the same as every now_ms call does first). */
void		 space_sweep(struct space *sp, uint64_t now_ms);

/* The first visible match in FIFO order, or NULL. */
struct space_rec *space_read(struct space *sp, const struct template *t,
		    uint64_t now_ms);
/* Call cb on each visible match in FIFO order; returns how many. */
size_t		 space_read_all(struct space *sp, const struct template *t,
		    uint64_t now_ms, space_rec_cb cb, void *arg);
/* The first visible match with no active claim (a take's step 1). */
struct space_rec *space_take_candidate(struct space *sp,
		    const struct template *t, uint64_t now_ms);
/*
 * Fill a fresh claim on r for this peer: epoch = current + 1, bid 0, the
 * given stamp, expiry = now + take_ms, signature zero (the daemon signs).
 */
void		 space_claim_make(const struct space *sp,
		    const struct space_rec *r, const struct hlc_stamp *stamp,
		    uint64_t now_ms, uint64_t take_ms, struct crdt_claim *out);
/* Merge a claim (local or remote, verified) into record id. OK or ENOENT. */
int		 space_claim(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
		    const struct crdt_claim *c, uint64_t now_ms);
/* The winning claim of record id (epoch 0: none), or NULL if unknown. */
const struct crdt_claim *space_winner(const struct space *sp,
		    const uint8_t id[ENTRY_ID_LEN]);
/* True when the winner is still this peer's claim of that epoch, unexpired. */
bool		 space_won(const struct space *sp,
		    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
		    uint64_t now_ms);
/* Find and claim at once (holder self, expiry now + take_ms); or NULL. */
struct space_rec *space_take_local(struct space *sp, const struct template *t,
		    const struct hlc_stamp *stamp, uint64_t now_ms,
		    uint64_t take_ms);
/* Mark record id completed. SPACE_OK the first time, EALREADY after. */
int		 space_complete(struct space *sp,
		    const uint8_t id[ENTRY_ID_LEN], uint64_t now_ms);
/* Write the lease register (renew; cancel with expires <= now). */
int		 space_lease(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
		    const struct hlc_stamp *stamp, uint64_t expires_ms,
		    uint64_t now_ms);
/* Remove record id (observed remove of its add dots). OK, ENOENT, EDOTS. */
int		 space_remove(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
		    uint64_t now_ms);

/* Bucket of an id among nbuckets (> 0). */
uint32_t	 space_bucket_of(const uint8_t id[ENTRY_ID_LEN],
		    uint32_t nbuckets);
/* out[0..nbuckets) = the digest of every bucket. */
void		 space_digest(const struct space *sp, uint32_t nbuckets,
		    uint64_t *out);
/* Call cb on each record in the listed buckets. */
void		 space_foreach_bucket(const struct space *sp,
		    uint32_t nbuckets, const uint32_t *buckets, size_t nb,
		    space_rec_cb cb, void *arg);

/*
 * Record on the wire: { "rec": crdt record, "entry": entry }, "entry" null
 * for a compact (completed) record.
 */
void		 space_rec_encode(struct dcbor_buf *b, const struct space_rec *r);
/*
 * Read one wire record: *e gets a new entry, cr (initialised by the
 * caller) its state.  0, or -1 (*e NULL), also when the state's id is not
 * the entry's.  A completed record may come without its entry: 0 with *e
 * NULL (space_merge keeps it as a compact tombstone).
 */
int		 space_rec_decode(struct dcbor_rd *rd, struct entry **e,
		    struct crdt_rec *cr);
/*
 * As space_rec_decode, but a copy of a record sp holds with its entry is
 * not parsed: when the wire's entry is byte for byte the encoding of the
 * held one, it is stepped over (no parse, no hash, no allocation) and 1 is
 * returned with *e NULL.  Any other bytes are decoded, and refused, exactly
 * as by space_rec_decode (0 or -1).
 */
int		 space_rec_decode_known(const struct space *sp,
		    struct dcbor_rd *rd, struct entry **e, struct crdt_rec *cr);

/* The entry; NULL once the record is completed and compacted. */
const struct entry	*space_rec_entry(const struct space_rec *r);
/* The CRDT state.  A packed record's is unpacked into one static view:
 * valid until the next space_rec_state call. */
const struct crdt_state	*space_rec_state(const struct space_rec *r);
/* The winning claim; the empty claim (epoch 0) for a compact record. */
const struct crdt_claim	*space_rec_claim(const struct space_rec *r);
/* The record's id (ENTRY_ID_LEN bytes), whether or not it has its entry. */
const uint8_t		*space_rec_id(const struct space_rec *r);
/* The record's digest contribution (XXH3-64 of its encoded crdt record). */
uint64_t		 space_rec_hash(const struct space_rec *r);

#endif

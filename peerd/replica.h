/*
 * replica.h: this peer's replica of the space, the store, composed from
 * common/space: apply a wire record, digest, put, foreach, stamp, write,
 * read, complete, and the observers.  It verifies entries once per id and
 * claims on arrival and measures write-to-visible from the writer's
 * monotonic stamp.
 *
 * It calls no protocol and speaks no JSON (docs/hacking.md): the
 * protocols above it (plumtree.c, digest.c, recon.c, take.c) call it, and
 * learn what changed through replica_observe: a record this peer changed
 * (to spread), a verified remote claim merged (to answer), and every
 * space event (cmd.c's notify).  cmd.c turns control arguments into the
 * C structs here and the results back into JSON.
 */
#ifndef REPLICA_H
#define REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "space.h"

struct crdt_claim;
struct dcbor_buf;
struct dcbor_rd;
struct identity;
struct member;
struct template;

/* What an observer hears of. */
enum replica_ev {
	REPLICA_EV_SPACE,	/* a space event (WRITTEN ... REAPPEARED) */
	REPLICA_EV_LOCAL,	/* this peer wrote or completed rec: spread it */
	REPLICA_EV_CLAIM,	/* a verified remote claim merged on rec */
};

struct replica_event {
	enum replica_ev		 ev;
	const struct space_rec	*rec;
	enum space_event	 space;		/* REPLICA_EV_SPACE */
	bool			 urgent;	/* LOCAL: a completion, not a write */
	const struct crdt_claim	*claim;		/* CLAIM: the claim merged */
	const struct member	*from;		/* CLAIM: the neighbour, or NULL */
	bool			 fresh;		/* CLAIM: not the claim rec held */
	uint64_t		 now;		/* CLAIM: wall ms of the merge */
};

typedef void (*replica_observer_fn)(void *arg, const struct replica_event *e);

/* Make the space (--max-entries). */
void	replica_init(void);
/* Free the space and forget the observers. */
void	replica_free(void);
/*
 * Call fn(arg, event) on every event from now on, in the order observers
 * were added (at most 8; once per fn).
 */
void	replica_observe(replica_observer_fn fn, void *arg);
/* The space itself, for take.c's lease race (it outlives every take). */
struct space *replica_space(void);

/* Apply one wire record from a member. 0, or -1 if it is malformed. */
int	replica_apply_record(struct member *from, struct dcbor_rd *rd);
/* Apply an items array of records (a rumor's, a pull's). 0, or -1. */
int	replica_apply_items(struct member *from, struct dcbor_rd *rd);
/* The digest over nbuckets buckets (expired entries swept first). */
void	replica_digest(uint64_t *out, size_t nbuckets);
/*
 * Append an array of the records in the buckets marked in diff (of
 * nbuckets), at most max_bytes of them (*more says some were left out);
 * returns how many.
 */
size_t	replica_put_records(struct dcbor_buf *b, const bool *diff,
	    size_t nbuckets, size_t max_bytes, bool *more);
/* Call cb with every record's state hash (space_rec_hash) and id. */
void	replica_foreach_item(void (*cb)(void *arg, uint64_t h,
	    const uint8_t *id), void *arg);
/* Call fn on every record (after a sweep) until it returns false. */
void	replica_foreach(bool (*fn)(void *arg, const struct space_rec *r),
	    void *arg);
/* Append the current wire record of id: its size, or 0 if not held. */
size_t	replica_put_record(struct dcbor_buf *b, const uint8_t *id);
/*
 * The issue stamp of id's entry (the order of the FIFO index, with the
 * id): -1 when id is absent or held without its entry.
 */
int	replica_entry_stamp(const uint8_t *id, struct hlc_stamp *out);

/*
 * A generated entry, not spread (load.c's bulk): issuer gen, fields
 * {"pad", "seq"}, stamp (stamp_ms, seq, gen's node), one add dot (gen's
 * node, seq + 1), so the same arguments give the same record on every
 * peer.  0 with id set, or -1 with err.
 */
int	replica_generate(const struct identity *gen, uint64_t seq,
	    uint64_t stamp_ms, uint64_t lease_ms, const char *type,
	    const char *pad, uint8_t *id, char *err, size_t errlen);

#define REPLICA_SPACE		"default"
#define REPLICA_LEASE_MS	(3600u * 1000u)

/* A write's arguments: fields is one encoded CBOR map. */
struct replica_write {
	const char	 *space;	/* REPLICA_SPACE when NULL */
	const char	 *type;
	const uint8_t	 *fields;
	size_t		  fields_len;
	const char	**tags;
	size_t		  ntags;
	uint64_t	  lease_ms;
};
/*
 * write: a new entry of ours, signed, stored and spread (a LOCAL event):
 * 0 with its id and stamp, or -1 with err ("write: ...": "full" when the
 * space is, "too_big" when the entry is).
 */
int	replica_write(const struct replica_write *w,
	    uint8_t id[ENTRY_ID_LEN], struct hlc_stamp *stamp, char *err,
	    size_t errlen);
/* read: the first visible match of t now, or NULL. */
const struct space_rec *replica_read(const struct template *t);
/* read all: fn on every visible match of t now, until it returns false. */
void	replica_read_all(const struct template *t,
	    bool (*fn)(void *arg, const struct space_rec *r), void *arg);
/*
 * complete: SPACE_OK (and spread urgently: a LOCAL event), SPACE_EALREADY
 * (completed before), SPACE_ENOENT (no such entry) or another space error.
 */
int	replica_complete(const uint8_t id[ENTRY_ID_LEN]);
/* Records held and visible. */
size_t	replica_count(void);
size_t	replica_visible(void);
/* The digest over nbuckets folded into one number (dump's "digest"). */
uint64_t replica_digest_sum(size_t nbuckets);

#endif

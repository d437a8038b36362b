/*
 * replica.h: this peer's replica of the space, composed from common/space
 * and spread by gossip.c.  It owns the verbs the control socket offers
 * (write, read, complete; notify through one event observer; the take is
 * take.c's, on this space) and answers in C: it never calls the control
 * API, and peerd/cmd.c turns its results into replies.  It verifies
 * entries once per id and claims on arrival and measures write-to-visible
 * from the writer's monotonic stamp.
 */
#ifndef REPLICA_H
#define REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "entry.h"
#include "gossip.h"
#include "space.h"

struct dcbor_buf;
struct dcbor_rd;
struct member;
struct template;

void	replica_init(void);
void	replica_free(void);

/* Apply one wire record from a member. 0, or -1 if it is malformed. */
int	replica_apply_record(struct member *from, struct dcbor_rd *rd);
/* The anti-entropy digest. */
void	replica_digest(uint64_t out[GOSSIP_BUCKETS]);
/*
 * Append an array of the records in the marked buckets, at most max_bytes
 * of them (*more says some were left out); returns how many.
 */
size_t	replica_put_records(struct dcbor_buf *b,
	    const bool diff[GOSSIP_BUCKETS], size_t max_bytes, bool *more);

/* Call cb with every record's state hash (space_rec_hash) and id. */
void	replica_foreach_item(void (*cb)(void *arg, uint64_t h,
	    const uint8_t *id), void *arg);
/* Append the current wire record of id: its size, or 0 if not held. */
size_t	replica_put_record(struct dcbor_buf *b, const uint8_t *id);
/*
 * The issue stamp of id's entry (the order of the FIFO index, with the
 * id): -1 when id is absent or held without its entry.
 */
int	replica_entry_stamp(const uint8_t *id, struct hlc_stamp *out);

struct identity;
/*
 * A generated entry, not spread (load.c's bulk): issuer gen, fields
 * {"pad", "seq"}, stamp (stamp_ms, seq, gen's node), one add dot (gen's
 * node, seq + 1), so the same arguments give the same record on every
 * peer.  0 with id set, or -1 with err.
 */
int	replica_generate(const struct identity *gen, uint64_t seq,
	    uint64_t stamp_ms, uint64_t lease_ms, const char *type,
	    const char *pad, uint8_t *id, char *err, size_t errlen);

/* write: a new entry from JSON args; the result or NULL with err. */
json_t	*replica_write(json_t *args, char *err, size_t errlen);
/* read: the first match (or all, up to limit) of the template, now. */
json_t	*replica_read(const struct template *t, bool all, size_t limit);
/*
 * complete: SPACE_OK (and spread), SPACE_EALREADY (completed before),
 * SPACE_ENOENT (no such entry) or another space error.
 */
int	replica_complete(const uint8_t id[ENTRY_ID_LEN]);
/* Every space event (WRITTEN ... REAPPEARED) on a record, to an observer. */
typedef void (*replica_event_cb)(void *arg, enum space_event ev,
	    const struct space_rec *r);
/* Set the one observer (cmd.c's notify); NULL for none. */
void	replica_on_event(replica_event_cb cb, void *arg);
/* Counts and a sample of the store for dump. */
json_t	*replica_dump_json(size_t limit);
/* Every record: {"ids": [[id, present, completed, claimed], ...]}. */
json_t	*replica_ids_json(void);
/* Records held and visible. */
size_t	replica_count(void);
size_t	replica_visible(void);
/* An entry as JSON (the control socket's form). */
json_t	*replica_entry_json(const void *space_rec);
/*
 * Send id's record on every link's urgent lane (claims, completions) at the
 * end of this loop turn, in one rumor with the turn's others, as it stands
 * then; never in a bulk batch.
 */
void	replica_spread_urgent(const uint8_t id[ENTRY_ID_LEN]);
/* Flush the urgent lane at the end of this turn (take.c's answers wait). */
void	replica_urgent_soon(void);

#endif

/*
 * replica.h: this peer's replica of the space, composed from common/space
 * and spread by gossip.c.  It owns the verbs the control socket offers
 * (write, read, take with the LEASE_RACE, complete, notify), verifies
 * entries once per id and claims on arrival, measures write-to-visible and
 * write-to-take latency from the writer's monotonic stamp, and remembers
 * every take this peer believed it won so a harness can count duplicates.
 */
#ifndef REPLICA_H
#define REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gossip.h"

struct ctl_req;
struct ctl_client;
struct dcbor_buf;
struct dcbor_rd;
struct member;
struct template;

void	replica_init(void);
void	replica_free(void);

/* Apply one wire record from a member. 0, or -1 if it is malformed. */
int	replica_apply_record(struct member *from, struct dcbor_rd *rd);
/* A CLAIM_ACK from a member (quorum mode). 0, or -1 if it is malformed. */
int	replica_recv_ack(struct member *from, const uint8_t *body, size_t len);
/* The anti-entropy digest. */
void	replica_digest(uint64_t out[GOSSIP_BUCKETS]);
/*
 * Append an array of the records in the marked buckets, at most max_bytes
 * of them (*more says some were left out); returns how many.
 */
size_t	replica_put_records(struct dcbor_buf *b,
	    const bool diff[GOSSIP_BUCKETS], size_t max_bytes, bool *more);

/* write: a new entry from JSON args; the result or NULL with err. */
json_t	*replica_write(json_t *args, char *err, size_t errlen);
/* read: the first match (or all, up to limit) of the template, now. */
json_t	*replica_read(const struct template *t, bool all, size_t limit);
struct space_rec;
/* A take's end: the record won, or NULL at the deadline or on shutdown. */
typedef void (*replica_take_cb)(void *arg, const struct space_rec *won,
	    uint32_t attempts);
/* take (consumes t): done is called once, when won or at the deadline. */
void	replica_take(struct template *t, uint32_t timeout_ms,
	    replica_take_cb done, void *arg);
/* complete: 0, or -1 with err and *code a control error. */
int	replica_complete(const char *idhex, json_t **result, int *code,
	    char *err, size_t errlen);
/* notify: subscribe client c to events for t. */
void	replica_notify(struct ctl_client *c, struct template *t,
	    unsigned mask, uint64_t lease_ms);
/* The takes this peer won, from index 'since'. */
json_t	*replica_takes_json(size_t since);
/* Counts and a sample of the store for dump. */
json_t	*replica_dump_json(size_t limit);
/* Every record: {"ids": [[id, present, completed, claimed], ...]}. */
json_t	*replica_ids_json(void);
/* Records held and visible. */
size_t	replica_count(void);
size_t	replica_visible(void);
/* An entry as JSON (the control socket's form). */
json_t	*replica_entry_json(const void *space_rec);
/* Cancel every take in flight (shutdown). */
void	replica_cancel_takes(void);

/* Notify event mask bits, from space_event values. */
#define REPLICA_EV_BIT(ev)	(1u << (ev))
/* Parse ["WRITTEN", ...] into a mask; -1 if a name is unknown. */
int	replica_event_mask(json_t *arr, unsigned *mask);

#endif

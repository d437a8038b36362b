/*
 * vote.h: the answers this peer gives to other peers' claims: promises
 * (quorum votes; in lease mode a rival's refusals), the CLAIM_ACK,
 * CLAIM_ACK_RELAY and CLAIM_ACKS bodies, the relay routes and the
 * per-turn answer batch (docs/protocol.md section 6).  take.c drives it
 * and hears of answers to its own claims through a vote_count_cb;
 * gossip.c hands it the CLAIM_ACK, CLAIM_ACK_RELAY and CLAIM_ACKS frames.
 */
#ifndef VOTE_H
#define VOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "identity.h"

struct crdt_claim;
struct dcbor_buf;
struct member;
struct space_rec;

/* voter answered our claim (id, epoch): ok, or a refusal. */
typedef void (*vote_count_cb)(const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
	    const uint8_t voter[IDENTITY_ID_LEN], bool ok);

/* Answers to this peer's own claims go to cb (take.c's). */
void	vote_init(vote_count_cb cb);
/* Forget every promise, route and queued answer (take_free). */
void	vote_free(void);

/*
 * Vouch for claim c on id now: true (and the promise made or renewed)
 * unless an unexpired promise to another holder stands.
 */
bool	vote_promise_make(const uint8_t id[ENTRY_ID_LEN],
	    const struct crdt_claim *c, uint64_t now);
/*
 * Answer a verified remote claim c on r, delivered by neighbour from
 * (NULL: none), queued for the turn's end.
 */
void	vote_claim_answer(const struct space_rec *r, const struct crdt_claim *c,
	    const struct member *from, uint64_t now);
/* Send the turn's queued answers: one frame per neighbour still linked. */
void	vote_acks_flush(void);

/*
 * The answer bodies, appended to b (docs/protocol.md 6): a CLAIM_ACK; the
 * bytes a relayed answer's voter signs; a CLAIM_ACK_RELAY whose sig is
 * key's over those bytes.
 */
void	vote_ack_put(struct dcbor_buf *b, bool ok,
	    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch);
void	vote_signing_bytes(struct dcbor_buf *b, bool ok,
	    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
	    const uint8_t holder[IDENTITY_ID_LEN]);
void	vote_relay_put(struct dcbor_buf *b, bool ok,
	    const uint8_t key[IDENTITY_PUB_LEN],
	    const uint8_t sig[IDENTITY_SIG_LEN], uint64_t hops,
	    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
	    const uint8_t holder[IDENTITY_ID_LEN]);

/* A CLAIM_ACK from a member. 0, or -1 if it is malformed. */
int	vote_recv_ack(struct member *from, const uint8_t *body, size_t len);
/*
 * A CLAIM_ACK_RELAY from a member: counted if it is a signed answer to our
 * claim, else passed one hop on toward its holder. 0, or -1 if malformed.
 */
int	vote_recv_relay(struct member *from, const uint8_t *body, size_t len);
/* A CLAIM_ACKS list of answers from a member. 0, or -1 if malformed. */
int	vote_recv_acks(struct member *from, const uint8_t *body, size_t len);

#endif

/*
 * take.h: the take verb of this peer: the lease race, the trust rule
 * "left, answered, settled", quorum wins and take waits (docs/protocol.md
 * section 6); the answers this peer gives to others' claims are vote.c's.
 * It works on replica.c's space: replica.c hands it the space at start-up
 * and tells it of every verified remote claim it merges; cmd.c and load.c
 * start takes.  It remembers every take this peer believed it won so a
 * harness can count duplicates, until the space collects the entry's
 * tombstone (a chunk of TAKE_LOG_CHUNK wins at a time).
 */
#ifndef TAKE_H
#define TAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "entry.h"
#include "identity.h"

/* Wins a chunk of the log of won takes (take_won_json). */
#define TAKE_LOG_CHUNK	1024

struct crdt_claim;
struct member;
struct space;
struct space_rec;
struct template;

/* Take on space (replica.c's, which outlives every take). */
void	take_init(struct space *space);
/* Cancel every take in flight, forget promises and wins (replica_free). */
void	take_free(void);

/*
 * How a take ended: its claims made (or adopted), and the live members
 * that never answered its last claim when its deadline cut the wait for
 * them (none otherwise); silent is valid only during the callback.
 */
struct take_end {
	uint32_t	  attempts;
	const uint8_t	(*silent)[IDENTITY_ID_LEN];
	size_t		  nsilent;
};

/* A take's end: the record won, or NULL at the deadline or on shutdown. */
typedef void (*take_done_cb)(void *arg, const struct space_rec *won,
	    const struct take_end *end);
/* take (consumes t): done is called once, when won or at the deadline. */
void	take_start(struct template *t, uint32_t timeout_ms, take_done_cb done,
	    void *arg);
/* Cancel every take in flight (shutdown): each done is called with NULL. */
void	take_cancel(void);

/*
 * replica.c merged a verified remote claim c on r, delivered by neighbour
 * from (NULL: none; fresh: not the claim r held already): answer its holder
 * and tell a take of ours it beat.
 */
void	take_remote_claim(const struct space_rec *r,
	    const struct crdt_claim *c, const struct member *from, bool fresh,
	    uint64_t now);
/*
 * The turn's urgent rumor (its claims, completions) has been queued on
 * every link (replica.c): send the turn's answers (vote.c), and the claims made in
 * it start to wait for their links to drain.
 */
void	take_turn_sent(void);

/*
 * The takes this peer won, from index 'since' (indexes count every win;
 * wins whose entries' tombstones were collected are no longer listed).
 */
json_t	*take_won_json(size_t since);
/* Takes in flight, and takes won since start. */
size_t	take_in_flight(void);
size_t	take_won_count(void);

#endif

/*
 * gossip.h: rumors, anti-entropy and the small membership messages.
 *
 * A record is the unit of replication: [entry, state, claim or null].
 * Local changes queue records; at the end of the loop iteration they leave
 * as one RUMOR (a batch) to `fanout` random members, who forward it with
 * one hop less, dropping rumors they have seen (by id, last 4,096).  Every
 * gossip period a peer sends its digest (GOSSIP_BUCKETS hashes) to one
 * random member, which answers with its records in the buckets that differ
 * and receives ours back (docs/protocol.md section 6).
 */
#ifndef GOSSIP_H
#define GOSSIP_H

#include <stddef.h>
#include <stdint.h>

struct member;
struct dcbor_buf;

#define GOSSIP_BUCKETS		64
#define GOSSIP_SEEN		4096
#define GOSSIP_PULL_MAX		(4u << 20)	/* bytes of records a reply */

void	gossip_init(void);
void	gossip_free(void);
/* Dispatch a post-handshake frame body. 0, or -1 if it is malformed. */
int	gossip_recv(struct member *from, uint32_t kind, const uint8_t *body,
	    size_t len);
/* Queue one encoded record for the next rumor batch. */
void	gossip_queue(const uint8_t *rec, size_t len);
/*
 * Send one encoded record now, as a rumor of its own on every link's
 * urgent lane (claims and completions: they never wait behind a batch).
 */
void	gossip_send_urgent(const uint8_t *rec, size_t len);
void	gossip_link_up(struct member *m);
void	gossip_link_down(struct member *m);
/* Called every tick: anti-entropy when the period has passed. */
void	gossip_tick(void);

#endif

/*
 * gossip.h: broadcast, anti-entropy and PING/ACK.
 *
 * A record is the unit of replication: [entry, state, claim or null].
 * Local changes queue records; at the end of the loop iteration they become
 * one rumor, broadcast by Plumtree (docs/protocol.md section 7): the rumor
 * goes in full along eager edges (tree edges) of the active view and as an
 * id in a batched IHAVE (every --lazy-ms) along the lazy ones.  A peer
 * missing an IHAVE'd id after --graft-ms sends GRAFT (the edge turns
 * eager, the records come back); a duplicate rumor answers PRUNE (the edge
 * turns lazy).  Rumors waiting for one link within --batch-ms leave in one
 * frame.  Every gossip period a peer sends its digest (GOSSIP_BUCKETS
 * hashes) to one random neighbour, which answers with its records in the
 * buckets that differ and receives ours back: the safety net.
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
#define GOSSIP_HOPS_MAX		64	/* a rumor's hop budget, at most */
#define GOSSIP_RUMORS_MAX	1024	/* rumors in one RUMOR frame */
#define GOSSIP_IHAVE_MAX	1024	/* ids in one IHAVE or GRAFT */
#define GOSSIP_CACHE		4096	/* rumors kept to answer GRAFT */
#define GOSSIP_CACHE_BYTES	(16u << 20)
#define GOSSIP_MISSING		4096	/* IHAVE'd ids awaited */
#define GOSSIP_MISSING_SRC	4	/* announcers remembered per id */
#define GOSSIP_ORIGINS		64	/* broadcast trees kept (one bit each) */

/* A rumor's rid: XXH3-64 (seed 0) of its encoded items, low bit set. */
uint64_t gossip_rid(const uint8_t *items, size_t len);
/* Reset, and register the gossip kinds and a link observer with link.c. */
void	gossip_init(void);
void	gossip_free(void);
/* Apply an items array of records (a rumor's, a pull's). 0 or -1. */
struct dcbor_rd;
int	gossip_apply_items(struct member *from, struct dcbor_rd *rd);
/* Dispatch a post-handshake frame body. 0, or -1 if it is malformed. */
int	gossip_recv(struct member *from, uint32_t kind, const uint8_t *body,
	    size_t len);
/* Queue one encoded record for the next rumor batch. */
void	gossip_queue(const uint8_t *rec, size_t len);
/*
 * Eager (tree) edges of this peer: its degree in the broadcast trees, the
 * mean over the origins it holds (its links when it holds none).
 */
double	gossip_tree_degree(void);
/* The periodic repair's period now (it backs off while repairs find nothing). */
uint64_t	gossip_repair_period_ms(void);
/* Send m the digest now (recon.c measures a digest round with it). */
void	gossip_digest(struct member *m);
/*
 * Send n encoded records (concatenated) now, as one rumor on the urgent
 * lane of every link (a loop turn's claims and completions: they never
 * wait behind a bulk batch).
 */
void	gossip_send_urgent(const uint8_t *recs, size_t len, size_t n);
/*
 * Called by main.c's tick: anti-entropy when the period has passed;
 * returns when the next periodic repair is due (monotonic ms).
 */
uint64_t gossip_tick(void);

#endif

/*
 * digest.h: the digest method of anti-entropy (docs/protocol.md section
 * 8): a peer sends its digest (DIGEST_BUCKETS hashes of the replica's
 * buckets) and the other answers with its records in the buckets that
 * differ (PULL_RESP) and receives ours back.  The oldest method, and the
 * fallback of a GRAFT for a rumor too old for the cache; recon.c starts
 * it for --reconcile digest and measures a round of it.
 */
#ifndef DIGEST_H
#define DIGEST_H

#include <stddef.h>
#include <stdint.h>

struct member;

#define DIGEST_BUCKETS		64
#define DIGEST_PULL_MAX		(4u << 20)	/* bytes of records a reply */

/* Register DIGEST and PULL_RESP and a link observer with link.c. */
void	digest_init(void);
/* A DIGEST or PULL_RESP body from m. 0, or -1 if it is malformed. */
int	digest_recv(struct member *from, uint32_t kind, const uint8_t *body,
	    size_t len);
/* Send m our digest now. */
void	digest_send(struct member *m);

#endif

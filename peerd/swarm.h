/*
 * swarm.h: the content swarm (DESIGN 7, the seed's ContentSwarmStress;
 * docs/protocol.md "Content swarm").
 *
 * A blob is published as a manifest (common/manifest.h) and pieces kept in
 * a file-backed store per blob (common/pstore.h) under DIR/content/<cid>/.
 * A fetcher asks every linked peer for the manifest (QUERY / QUERY_HIT),
 * learns who holds which pieces (HAVE: a bitfield, then additions), and
 * requests pieces (BLOCK_WANT / BLOCK) rarest first from every holder,
 * several in flight per source.  Each piece is verified before it is
 * stored, announced, or served; a fetcher serves what it has verified at
 * once, so the seeder is not the only server.  A source that times out
 * backs off with jitter and is retried; it is never dropped while it is
 * the only holder of a needed piece.  A source that sends a bad piece is
 * counted and used only for pieces nobody else holds.  Stores persist, so
 * a restarted peer resumes its fetches with what it had verified.
 */
#ifndef SWARM_H
#define SWARM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct ctl_req;
struct member;

#define SWARM_INFLIGHT_DEFAULT	4	/* requests in flight per source */
#define SWARM_INFLIGHT_MAX	16
#define SWARM_TIMEOUT_MS	5000	/* a request without an answer */
#define SWARM_BACKOFF_MIN_MS	200
#define SWARM_BACKOFF_MAX_MS	8000
#define SWARM_BACKOFF_SOLE_MS	1000	/* cap for a needed piece's only holder */
#define SWARM_DEFLECT_MS	1000	/* a deflected piece: ask others first */
#define SWARM_CACHE_BYTES	(8u << 20) /* --direct-io: pieces kept */
#define SWARM_TICK_MS		100
#define SWARM_FLUSH_MS		250	/* the verified-pieces map on disk */
#define SWARM_PROGRESS_MS	10000	/* log each fetch's progress */
#define SWARM_STALL_MS		30000	/* no piece for this long: a stall */
#define SWARM_OUTQ_MAX		(32u << 20) /* refuse wants above this queue */
#define SWARM_FETCH_TIMEOUT_MS	10000	/* default wait for the manifest */

/* Open the stores under DIR/content (resuming incomplete fetches). */
void	 swarm_init(void);
/* Answer waiting requests, flush and close every store. */
void	 swarm_free(void);
/* A link to m came up / went down. */
void	 swarm_link_up(struct member *m);
void	 swarm_link_down(struct member *m);
/*
 * Dispatch a QUERY, QUERY_HIT, HAVE, BLOCK_WANT or BLOCK body from m, with
 * the frame's detached payload (a BLOCK's piece; NULL otherwise), which no
 * signature covers: a piece is believed only if its SHA-256 is the
 * manifest's.  0, or -1 with *why when the link must close (malformed
 * body, a piece whose length is not the one its body and manifest say).
 */
int	 swarm_recv(struct member *m, uint32_t kind, const uint8_t *body,
	    size_t len, const uint8_t *data, size_t data_len,
	    const char **why);

/*
 * The control commands (docs/control.md).  publish answers at once;
 * fetch answers when the manifest is known (or, with "wait", when the
 * blob is complete) and fails not_found if no linked peer has it;
 * content reports one blob or all; swarm_fault sets the test-only fault.
 * Each answers req exactly once.
 */
void	 swarm_publish(struct ctl_req *req, json_t *args);
void	 swarm_fetch(struct ctl_req *req, json_t *args);
void	 swarm_content(struct ctl_req *req, json_t *args);
void	 swarm_fault(struct ctl_req *req, json_t *args);

#endif

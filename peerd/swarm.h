/*
 * swarm.h: the content swarm (docs/protocol.md section 9, the seed's ContentSwarmStress;
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

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

/*
 * Open the stores under DIR/content (resuming incomplete fetches); register
 * the swarm's kinds and a link observer with link.c.
 */
void	 swarm_init(void);
/* Answer waiting requests, flush and close every store. */
void	 swarm_free(void);
/* Content was added: the swarm's tick runs while any is held. */
void	 swarm_wake(void);
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

/* How a swarm request ended; the command handlers (cmd.c) translate. */
enum swarm_err {
	SWARM_OK = 0,
	SWARM_EARGS,		/* a bad argument */
	SWARM_ENOTFOUND,	/* no such file, blob, or no peer has it */
	SWARM_EBUSY,		/* publishing a blob being fetched */
	SWARM_ETIMEOUT,		/* the deadline passed */
	SWARM_EINTERNAL,	/* storage failed, or the peer is stopping */
};

/*
 * A fetch's answer, called exactly once: SWARM_OK with result (a new
 * reference for the callee), or an error with a message.
 */
typedef void	(*swarm_done_fn)(void *arg, enum swarm_err err,
		    const char *msg, json_t *result);

struct swarm_fetch_req {
	const char	*cid;		/* 64 lower-case hex digits */
	bool		 wait;		/* answer when complete, not at the
					   manifest */
	int64_t		 timeout_ms, inflight, stall_ms;
	const char	*order;		/* "rarest" or "random" */
};

/*
 * Fetch a blob: done is called when the manifest is known (with wait,
 * when the blob is complete), or with SWARM_ENOTFOUND if no linked peer
 * has it, or at once for bad arguments.
 */
void		 swarm_fetch(const struct swarm_fetch_req *r,
		    swarm_done_fn done, void *arg);
/* One blob (hex) or all (hex NULL) as *result, or msg. */
enum swarm_err	 swarm_content(const char *hex, bool want_sha,
		    json_t **result, char *msg, size_t msglen);
/* The test-only fault (-1 leaves a flag as it is); the flags now. */
json_t		*swarm_fault(int corrupt, int shorten);

/* Between the swarm's own files (content.h's structs), not for others. */
struct content;
struct source;
/* Ask s for piece i of c: true if sent (and counted in flight). */
bool		 swarm_want(struct content *c, struct source *s, uint32_t i,
		    uint64_t now);
/* Our whole bitfield to every linked peer; reply asks for theirs. */
void		 swarm_announce(struct content *c, bool reply);
/* Fail a request: the message into msg, and the error back. */
enum swarm_err	 swarm_fail(char *msg, size_t msglen, enum swarm_err e,
		    const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));

#endif

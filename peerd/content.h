/*
 * content.h: the content swarm's blobs, shared by its files (swarm.c the
 * wire side, source.c the holders, picker.c the piece scheduler, publish.c
 * publishing); nothing outside the swarm includes it.
 *
 * A content is one blob this peer publishes or fetches: its manifest and
 * store once known, the sources (linked peers as holders and requesters)
 * and the control requests waiting on it.  Every content is on one list,
 * oldest first.
 */
#ifndef CONTENT_H
#define CONTENT_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bit.h"
#include "manifest.h"
#include "swarm.h"

#define CID_LEN		MANIFEST_HASH_LEN

struct member;
struct pstore;

enum cstate { CS_MANIFEST, CS_FETCHING, CS_COMPLETE };

struct sreq {
	uint32_t	 piece;
	uint64_t	 sent_ms;
};

/* One peer as a holder and a requester of one blob. */
struct source {
	struct member	*m;
	uint8_t		*bits;		/* what it holds; NULL before manifest */
	uint32_t	 nhave;
	struct sreq	 reqs[SWARM_INFLIGHT_MAX];
	uint32_t	 inflight;
	uint64_t	 backoff_until;	/* monotonic ms */
	uint32_t	 streak;	/* timeouts in a row */
	uint8_t		*no_defl;	/* pieces it gets from us at once: sent
					   or deflected to it before */
	uint8_t		*defl_from;	/* pieces it asked us to get elsewhere */
	bool		 said_none;	/* answered our QUERY: not found */
	bool		 interested;	/* it tracks this blob: send it adds */
	uint64_t	 bytes_from, pieces_from, bytes_to, pieces_to;
	uint64_t	 bad, timeouts, refused, deflected;
};

struct waiter {
	struct waiter	*next;
	swarm_done_fn	 done;		/* answered exactly once */
	void		*arg;
	bool		 complete;	/* wait for the blob, not the manifest */
	uint64_t	 deadline_ms;
};

struct content {
	TAILQ_ENTRY(content)	 entry;
	uint8_t			 cid[CID_LEN];
	char			 hex[MANIFEST_CID_HEX];
	enum cstate		 state;
	bool			 publisher;
	bool			 resumed;	/* opened from disk at start */
	struct pstore		*ps;
	const struct manifest	*m;
	uint16_t		*avail;		/* holders per piece */
	uint8_t			*pin;		/* requests in flight per piece */
	uint8_t			*served;	/* pieces sent at least once */
	uint64_t		*defer_until;	/* deflected: elsewhere until */
	uint32_t		*order;		/* scheduler scratch */
	struct source		**src;
	size_t			 nsrc;
	uint32_t		 limit;		/* in flight per source */
	bool			 peers_serving;	/* a linked non-seed holds some */
	uint32_t		 timeout_ms;
	uint32_t		 stall_ms;
	bool			 random_order;
	uint32_t		 at_start;	/* pieces held when opened */
	uint64_t		 pieces_fetched, bytes_fetched, dups, bad;
	uint64_t		 timeouts, refused, stalls, truncated;
	uint64_t		 deflections;	/* ours deflected */
	uint64_t		 start_us, end_us;
	uint64_t		 last_progress_ms, last_log_ms, last_flush_ms;
	uint64_t		 manifest_deadline_ms;
	uint32_t		*adds;		/* verified, not yet announced */
	size_t			 nadds, capadds;
	bool			 have_sha;
	uint8_t			 sha[MANIFEST_HASH_LEN];
	struct waiter		*waiters;
};

/* Every content, oldest first: CONTENT_FOREACH(c) { ... }. */
#define CONTENT_FOREACH(c)						\
	for ((c) = content_first(); (c) != NULL; (c) = TAILQ_NEXT((c), entry))

/* The bytes of c's piece bitfields (its manifest is known). */
static inline size_t
nbytes_of(const struct content *c)
{
	return (c->m->npieces + 7) / 8;
}

/* Make DIR/content (the stores' parent) if it is missing. */
void		 content_init(void);
/* DIR/content. */
const char	*content_root(void);
/* The oldest content, or NULL. */
struct content	*content_first(void);
struct content	*content_find(const uint8_t cid[CID_LEN]);
struct content	*content_new(const uint8_t cid[CID_LEN]);
void		 content_free(struct content *c);
void		 content_dir_of(const struct content *c, char *out,
		    size_t len);
void		 content_attach(struct content *c, struct pstore *ps);
void		 content_done(struct content *c);
void		 content_wait(struct content *c, swarm_done_fn done, void *arg,
		    bool complete, uint64_t timeout_ms);
void		 content_answer(struct content *c, enum swarm_err err,
		    const char *msg);
json_t		*content_json(struct content *c, bool want_sha);

#endif

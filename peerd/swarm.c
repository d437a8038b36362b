/*
 * swarm.c: the content swarm (see swarm.h and docs/protocol.md "Content
 * swarm"): the wire bodies, the piece scheduler, serving from the store,
 * the source policy, progress and stall reports, and the logic behind the
 * publish, fetch, content and swarm_fault commands.
 *
 * Nothing here blocks but pread/pwrite on the local store.  Requests are
 * bounded per source (backpressure on the sender's output buffers), and a
 * peer whose output queue to a requester is long refuses ("busy") instead
 * of queueing more.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "hex.h"
#include "link.h"
#include "log.h"
#include "manifest.h"
#include "member.h"
#include "peerd.h"
#include "pstore.h"
#include "stats.h"
#include "swarm.h"
#include "trace.h"
#include "xmalloc.h"

#define CID_LEN		MANIFEST_HASH_LEN

enum cstate { CS_MANIFEST, CS_FETCHING, CS_COMPLETE };

static const char *const cstate_names[] = { "manifest", "fetching",
    "complete" };

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

static TAILQ_HEAD(, content) contents = TAILQ_HEAD_INITIALIZER(contents);
static struct event	*tick_ev, *have_ev;
static struct dcbor_buf	 wbuf;		/* bodies being built */
static uint64_t		 rng_state;
static bool		 corrupt_pieces;	/* test-only faults */
static bool		 short_pieces;
static uint8_t		*fault_buf;		/* a piece being spoilt */
static uint32_t		 stage_serial;
static char		 content_dir[PATH_MAX];

static void	pump(struct content *);
static json_t	*content_json(struct content *, bool);

/* ---- small helpers ------------------------------------------------------ */

static uint64_t
rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t
rng_below(uint32_t n)
{
	return n ? (uint32_t)(rng_next() % n) : 0;
}

static bool
bit_get(const uint8_t *bits, uint32_t i)
{
	return (bits[i / 8] & (0x80u >> (i % 8))) != 0;
}

static void
bit_set(uint8_t *bits, uint32_t i)
{
	bits[i / 8] |= (uint8_t)(0x80u >> (i % 8));
}

static void
bit_clr(uint8_t *bits, uint32_t i)
{
	bits[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
}

static size_t
nbytes_of(const struct content *c)
{
	return (c->m->npieces + 7) / 8;
}

static const char *
src_name(const struct source *s)
{
	return s->m->name[0] ? s->m->name : s->m->peer_id;
}

/* ---- contents and sources ---------------------------------------------- */

static struct content *
content_find(const uint8_t cid[CID_LEN])
{
	struct content *c;

	TAILQ_FOREACH(c, &contents, entry)
		if (memcmp(c->cid, cid, CID_LEN) == 0)
			return c;
	return NULL;
}

static struct content *
content_new(const uint8_t cid[CID_LEN])
{
	struct content *c = xcalloc(1, sizeof(*c));

	memcpy(c->cid, cid, CID_LEN);
	hex_encode(cid, CID_LEN, c->hex);
	c->state = CS_MANIFEST;
	c->limit = SWARM_INFLIGHT_DEFAULT;
	c->timeout_ms = SWARM_TIMEOUT_MS;
	c->stall_ms = SWARM_STALL_MS;
	c->start_us = clock_mono_us();
	c->last_progress_ms = c->last_log_ms = c->last_flush_ms =
	    clock_mono_ms();
	TAILQ_INSERT_TAIL(&contents, c, entry);
	return c;
}

static struct source *
source_find(struct content *c, const struct member *m)
{
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->src[i]->m == m)
			return c->src[i];
	return NULL;
}

static void
source_alloc(const struct content *c, struct source *s)
{
	s->bits = xcalloc(1, nbytes_of(c));
	s->no_defl = xcalloc(1, nbytes_of(c));
	s->defl_from = xcalloc(1, nbytes_of(c));
}

static struct source *
source_get(struct content *c, struct member *m)
{
	struct source *s = source_find(c, m);

	if (s != NULL)
		return s;
	s = xcalloc(1, sizeof(*s));
	s->m = m;
	if (c->m != NULL)
		source_alloc(c, s);
	c->src = xreallocarray(c->src, c->nsrc + 1, sizeof(*c->src));
	c->src[c->nsrc++] = s;
	return s;
}

/* Forget the requests in flight to s (its link went down, or timeouts). */
static void
source_cancel(struct content *c, struct source *s)
{
	for (uint32_t i = 0; i < s->inflight; i++)
		if (c->pin != NULL && c->pin[s->reqs[i].piece] > 0)
			c->pin[s->reqs[i].piece]--;
	s->inflight = 0;
}

static bool
source_take_req(struct content *c, struct source *s, uint32_t piece)
{
	for (uint32_t i = 0; i < s->inflight; i++)
		if (s->reqs[i].piece == piece) {
			s->reqs[i] = s->reqs[--s->inflight];
			if (c->pin[piece] > 0)
				c->pin[piece]--;
			return true;
		}
	return false;
}

static bool
source_has_req(const struct source *s, uint32_t piece)
{
	for (uint32_t i = 0; i < s->inflight; i++)
		if (s->reqs[i].piece == piece)
			return true;
	return false;
}

/* Replace what s is known to hold, keeping the availability counts. */
static void
source_set_bits(struct content *c, struct source *s, const uint8_t *bits)
{
	s->nhave = 0;
	for (uint32_t i = 0; i < c->m->npieces; i++) {
		bool was = bit_get(s->bits, i), now = bit_get(bits, i);

		if (was && !now)
			c->avail[i]--;
		else if (!was && now)
			c->avail[i]++;
		s->nhave += now;
	}
	memcpy(s->bits, bits, nbytes_of(c));
}

static void
source_add_piece(struct content *c, struct source *s, uint32_t i)
{
	if (bit_get(s->bits, i))
		return;
	bit_set(s->bits, i);
	s->nhave++;
	c->avail[i]++;
}

static void
source_drop_piece(struct content *c, struct source *s, uint32_t i)
{
	if (!bit_get(s->bits, i))
		return;
	bit_clr(s->bits, i);
	s->nhave--;
	c->avail[i]--;
}

/* True if s holds a needed piece that no other known source holds. */
static bool
source_is_sole(const struct content *c, const struct source *s)
{
	if (c->state != CS_FETCHING || s->bits == NULL)
		return false;
	for (uint32_t i = 0; i < c->m->npieces; i++)
		if (c->avail[i] == 1 && bit_get(s->bits, i) &&
		    !pstore_has(c->ps, i))
			return true;
	return false;
}

/* ---- sending ------------------------------------------------------------ */

static void
put_cid(struct dcbor_buf *b, const struct content *c)
{
	dcbor_put_cstr(b, "cid");
	dcbor_put_bytes(b, c->cid, CID_LEN);
}

static void
send_query(struct content *c, struct member *m)
{
	dcbor_buf_reset(&wbuf);
	dcbor_put_map(&wbuf, 1);
	put_cid(&wbuf, c);
	link_send_member(m, FRAME_QUERY, wbuf.data, wbuf.len);
}

static void
send_hit(const uint8_t cid[CID_LEN], struct member *m, const uint8_t *menc,
    size_t mlen)
{
	dcbor_buf_reset(&wbuf);
	dcbor_put_map(&wbuf, 2);
	dcbor_put_cstr(&wbuf, "cid");
	dcbor_put_bytes(&wbuf, cid, CID_LEN);
	dcbor_put_cstr(&wbuf, "manifest");
	if (menc != NULL)
		dcbor_put_bytes(&wbuf, menc, mlen);
	else
		dcbor_put_null(&wbuf);
	link_send_member(m, FRAME_QUERY_HIT, wbuf.data, wbuf.len);
}

/* Our whole bitfield; reply asks the receiver for its own. */
static void
send_bits(struct content *c, struct member *m, bool reply)
{
	size_t blen;
	const uint8_t *bits = pstore_bits(c->ps, &blen);

	dcbor_buf_reset(&wbuf);
	dcbor_put_map(&wbuf, 3);
	put_cid(&wbuf, c);
	dcbor_put_cstr(&wbuf, "bits");
	dcbor_put_bytes(&wbuf, bits, blen);
	dcbor_put_cstr(&wbuf, "reply");
	dcbor_put_bool(&wbuf, reply);
	link_send_member(m, FRAME_HAVE, wbuf.data, wbuf.len);
}

static void
announce_bits(struct content *c, bool reply)
{
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link != NULL)
			send_bits(c, m, reply);
	}
}

static void
send_refuse(const uint8_t cid[CID_LEN], struct member *m, uint64_t piece,
    const char *reason)
{
	dcbor_buf_reset(&wbuf);
	dcbor_put_map(&wbuf, 3);
	dcbor_put_cstr(&wbuf, "cid");
	dcbor_put_bytes(&wbuf, cid, CID_LEN);
	dcbor_put_cstr(&wbuf, "piece");
	dcbor_put_uint(&wbuf, piece);
	dcbor_put_cstr(&wbuf, "reason");
	dcbor_put_cstr(&wbuf, reason);
	link_send_member(m, FRAME_BLOCK, wbuf.data, wbuf.len);
	if (strcmp(reason, "elsewhere") == 0)
		pd_count(swarm_deflected);
	else
		pd_count(swarm_refused);
}

/*
 * Serve piece i of c to m from the store: the signed body names the piece
 * and its length, and the piece follows as the frame's detached payload,
 * straight from the store's file (frame.h), so neither a signature nor a
 * copy here costs anything per byte.  The test-only faults read it into
 * memory to spoil it.
 */
static void
send_piece(struct content *c, struct source *s, uint32_t i)
{
	uint32_t len = manifest_piece_len(c->m, i);
	struct link_payload pl;

	memset(&pl, 0, sizeof(pl));
	if ((pl.mem = pstore_cache_hold(c->ps, i, &pl.arg)) != NULL) {
		pl.release = pstore_cache_release;
		pd_count(swarm_pieces_served_cached);
	} else if (pstore_piece_at(c->ps, i, &pl.fd, &pl.off) == -1) {
		send_refuse(c->cid, s->m, i, "missing");
		return;
	}
	pl.len = len;
	if (corrupt_pieces || short_pieces) {
		if (pl.release != NULL) {	/* a copy is spoilt instead */
			pl.release(pl.mem, len, pl.arg);
			pl.release = NULL;
		}
		fault_buf = xreallocarray(fault_buf, len, 1);
		if (pstore_get(c->ps, i, fault_buf) == -1) {
			log_warn("swarm %.12s: read piece %u", c->hex, i);
			send_refuse(c->cid, s->m, i, "missing");
			return;
		}
		if (corrupt_pieces)
			fault_buf[len / 2] ^= 0x5a;
		if (short_pieces && len > 1)
			pl.len--;	/* the body still says len */
		pl.mem = fault_buf;
	}
	dcbor_buf_reset(&wbuf);
	dcbor_put_map(&wbuf, 3);
	put_cid(&wbuf, c);
	dcbor_put_cstr(&wbuf, "len");
	dcbor_put_uint(&wbuf, len);
	dcbor_put_cstr(&wbuf, "piece");
	dcbor_put_uint(&wbuf, i);
	if (link_send_member_data(s->m, FRAME_BLOCK, wbuf.data, wbuf.len,
	    &pl) == 0) {
		bit_set(c->served, i);
		bit_set(s->no_defl, i);
		s->bytes_to += len;
		s->pieces_to++;
		pd_count(swarm_pieces_served);
		pd_count_add(swarm_bytes_served, len);
	}
}

static bool
send_want(struct content *c, struct source *s, uint32_t i, uint64_t now)
{
	dcbor_buf_reset(&wbuf);
	dcbor_put_map(&wbuf, 2);
	put_cid(&wbuf, c);
	dcbor_put_cstr(&wbuf, "piece");
	dcbor_put_uint(&wbuf, i);
	if (link_send_member(s->m, FRAME_BLOCK_WANT, wbuf.data,
	    wbuf.len) == -1)
		return false;
	s->reqs[s->inflight].piece = i;
	s->reqs[s->inflight].sent_ms = now;
	s->inflight++;
	c->pin[i]++;
	return true;
}

/*
 * Announce pieces verified since the last call: one HAVE per peer that
 * tracks the blob, listing only the pieces it is not known to hold.  A
 * peer known to hold them all (a seed, a finished fetcher) gets none: it
 * will never ask for them, and each frame costs a signature here and a
 * verification there (BENCHMARKS.md).  Its view of what we hold may lag;
 * it gets our whole bitfield again whenever the link comes back.
 */
static void
flush_adds(evutil_socket_t fd, short ev, void *arg)
{
	struct content *c;

	(void)fd;
	(void)ev;
	(void)arg;
	TAILQ_FOREACH(c, &contents, entry) {
		if (c->nadds == 0)
			continue;
		for (size_t i = 0; i < c->nsrc; i++) {
			struct source *s = c->src[i];
			size_t n = 0;

			if (!s->interested || s->m->link == NULL ||
			    s->bits == NULL)
				continue;
			for (size_t k = 0; k < c->nadds; k++)
				n += !bit_get(s->bits, c->adds[k]);
			if (n == 0)
				continue;
			dcbor_buf_reset(&wbuf);
			dcbor_put_map(&wbuf, 2);
			dcbor_put_cstr(&wbuf, "add");
			dcbor_put_array(&wbuf, n);
			for (size_t k = 0; k < c->nadds; k++)
				if (!bit_get(s->bits, c->adds[k]))
					dcbor_put_uint(&wbuf, c->adds[k]);
			put_cid(&wbuf, c);
			link_send_member(s->m, FRAME_HAVE, wbuf.data, wbuf.len);
			pd_count_add(swarm_have_pieces, n);
		}
		c->nadds = 0;
	}
}

/* ---- waiting requests --------------------------------------------------- */

static void
waiter_add(struct content *c, swarm_done_fn done, void *arg, bool complete,
    uint64_t timeout_ms)
{
	struct waiter *w = xcalloc(1, sizeof(*w));

	w->done = done;
	w->arg = arg;
	w->complete = complete;
	w->deadline_ms = clock_mono_ms() + timeout_ms;
	w->next = c->waiters;
	c->waiters = w;
	if (c->state == CS_MANIFEST && w->deadline_ms > c->manifest_deadline_ms)
		c->manifest_deadline_ms = w->deadline_ms;
}

/* Answer the waiters that are satisfied now (all of them with err). */
static void
waiters_answer(struct content *c, enum swarm_err err, const char *msg)
{
	struct waiter **wp = &c->waiters, *w;
	uint64_t now = clock_mono_ms();
	char late[160];

	while ((w = *wp) != NULL) {
		bool done = c->state == CS_COMPLETE ||
		    (c->state == CS_FETCHING && !w->complete);

		if (msg != NULL)
			w->done(w->arg, err, msg, NULL);
		else if (done)
			w->done(w->arg, SWARM_OK, NULL, content_json(c, true));
		else if (now >= w->deadline_ms) {
			snprintf(late, sizeof(late), "fetch %.12s: %s after "
			    "the deadline (%u of %u pieces)", c->hex,
			    c->state == CS_MANIFEST ? "no manifest" :
			    "not complete", c->ps ? pstore_count(c->ps) : 0,
			    c->m ? c->m->npieces : 0);
			w->done(w->arg, SWARM_ETIMEOUT, late, NULL);
		} else {
			wp = &w->next;
			continue;
		}
		*wp = w->next;
		free(w);
	}
}

static void
content_free(struct content *c)
{
	TAILQ_REMOVE(&contents, c, entry);
	waiters_answer(c, SWARM_EINTERNAL, "the peer is shutting down");
	for (size_t i = 0; i < c->nsrc; i++) {
		free(c->src[i]->bits);
		free(c->src[i]->no_defl);
		free(c->src[i]->defl_from);
		free(c->src[i]);
	}
	free(c->src);
	pstore_close(c->ps);
	free(c->avail);
	free(c->pin);
	free(c->served);
	free(c->defer_until);
	free(c->order);
	free(c->adds);
	free(c);
}

/* ---- the store ---------------------------------------------------------- */

static void
content_dir_of(const struct content *c, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", content_dir, c->hex);
}

static void
content_done(struct content *c)
{
	c->state = CS_COMPLETE;
	c->end_us = clock_mono_us();
	if (pstore_flush(c->ps) == -1)
		log_warn("swarm %.12s: flush the piece map", c->hex);
	/*
	 * The whole blob's SHA-256 is not needed to trust it (every piece
	 * was checked against the manifest): it is computed when a report
	 * first asks (content_json), off the transfer's clock.
	 */
	for (size_t i = 0; i < c->nsrc; i++)
		source_cancel(c, c->src[i]);
	log_info("swarm %.12s: complete, %u pieces (%llu fetched this run) in "
	    "%.3f s", c->hex, c->m->npieces,
	    (unsigned long long)c->pieces_fetched,
	    (double)(c->end_us - c->start_us) / 1e6);
	trace_add("swarm", "%.12s complete: %u pieces, %llu fetched", c->hex,
	    c->m->npieces, (unsigned long long)c->pieces_fetched);
	waiters_answer(c, SWARM_EINTERNAL, NULL);
}

/* The store is open: size the scheduler's tables. */
static void
content_attach(struct content *c, struct pstore *ps)
{
	c->ps = ps;
	c->m = pstore_manifest(ps);
	c->avail = xcalloc(c->m->npieces, sizeof(*c->avail));
	c->pin = xcalloc(c->m->npieces, sizeof(*c->pin));
	c->order = xcalloc(c->m->npieces, sizeof(*c->order));
	c->served = xcalloc(1, nbytes_of(c));
	c->defer_until = xcalloc(c->m->npieces, sizeof(*c->defer_until));
	for (size_t i = 0; i < c->nsrc; i++)
		source_alloc(c, c->src[i]);
	c->at_start = pstore_count(ps);
	c->state = pstore_complete(ps) ? CS_COMPLETE : CS_FETCHING;
	if (c->state == CS_FETCHING && pd->conf.direct_io &&
	    pstore_direct(ps, SWARM_CACHE_BYTES) == -1)
		log_warn("swarm %.12s: --direct-io refused here; the store "
		    "writes through the page cache", c->hex);
	c->last_progress_ms = clock_mono_ms();
}

/* ---- the scheduler ------------------------------------------------------ */

/* Slots for s: a seed gets half while other fetchers can serve too. */
static uint32_t
slots_of(const struct content *c, const struct source *s)
{
	if (s->nhave == c->m->npieces && c->peers_serving)
		return c->limit > 3 ? c->limit / 4 : 1;
	return c->limit;
}

static bool
usable(const struct content *c, const struct source *s, uint64_t now)
{
	return s->bits != NULL && s->m->link != NULL &&
	    now >= s->backoff_until && s->inflight < slots_of(c, s);
}

/*
 * The source to ask for piece p: among holders with a free slot, those
 * that never sent a bad piece (a bad one only if no good holder is
 * linked), then not seeds (holders of everything) before seeds, so the
 * seeder's share falls as fetchers serve each other, then the fewest in
 * flight, then at random.  In the endgame, skip holders already asked.
 */
static struct source *
pick(struct content *c, uint32_t p, uint64_t now, bool endgame)
{
	struct source *best = NULL;
	uint32_t best_rank = UINT32_MAX, ties = 0;
	bool good = false;

	for (size_t i = 0; i < c->nsrc; i++) {
		const struct source *s = c->src[i];

		if (s->bits != NULL && s->bad == 0 && s->m->link != NULL &&
		    bit_get(s->bits, p)) {
			good = true;
			break;
		}
	}
	for (size_t i = 0; i < c->nsrc; i++) {
		struct source *s = c->src[i];
		uint32_t rank;

		if (!usable(c, s, now) || !bit_get(s->bits, p) ||
		    (s->bad > 0 && good) ||
		    (bit_get(s->defl_from, p) && now < c->defer_until[p]) ||
		    (endgame && source_has_req(s, p)))
			continue;
		rank = (s->nhave == c->m->npieces ? 1u << 16 : 0) + s->inflight;
		if (rank < best_rank) {
			best = s;
			best_rank = rank;
			ties = 1;
		} else if (rank == best_rank && rng_below(++ties) == 0)
			best = s;
	}
	return best;
}

/*
 * The missing pieces nobody is asked for, rarest first (counting sort by
 * holders, from a random rotation so fetchers spread over equally rare
 * pieces), or in random order.  Returns how many; *unasked counts those
 * with no holder too.
 */
static uint32_t
missing_order(struct content *c, uint32_t *unasked)
{
	uint32_t n = c->m->npieces, k = 0, maxa = 0, rot = rng_below(n);
	uint32_t *cnt;

	*unasked = 0;
	for (uint32_t j = 0; j < n; j++) {
		if (pstore_has(c->ps, j) || c->pin[j] > 0)
			continue;
		(*unasked)++;
		if (c->avail[j] > maxa)
			maxa = c->avail[j];
	}
	if (c->random_order) {
		for (uint32_t j = 0; j < n; j++)
			if (!pstore_has(c->ps, j) && c->pin[j] == 0 &&
			    c->avail[j] > 0)
				c->order[k++] = j;
		for (uint32_t j = k; j > 1; j--) {
			uint32_t r = rng_below(j), t = c->order[j - 1];

			c->order[j - 1] = c->order[r];
			c->order[r] = t;
		}
		return k;
	}
	cnt = xcalloc(maxa + 2, sizeof(*cnt));
	for (uint32_t j = 0; j < n; j++)
		if (!pstore_has(c->ps, j) && c->pin[j] == 0 && c->avail[j] > 0)
			cnt[c->avail[j] + 1]++;
	for (uint32_t a = 1; a <= maxa + 1; a++)
		cnt[a] += cnt[a - 1];
	for (uint32_t t = 0; t < n; t++) {
		uint32_t j = (rot + t) % n;

		if (!pstore_has(c->ps, j) && c->pin[j] == 0 && c->avail[j] > 0)
			c->order[cnt[c->avail[j]]++] = j;
	}
	k = cnt[maxa];
	free(cnt);
	return k;
}

static void
pump(struct content *c)
{
	uint64_t now = clock_mono_ms();
	uint32_t slots = 0, n, unasked, rot;

	if (c->state != CS_FETCHING)
		return;
	c->peers_serving = false;
	for (size_t i = 0; i < c->nsrc; i++) {
		const struct source *s = c->src[i];

		if (s->bits != NULL && s->m->link != NULL && s->nhave > 0 &&
		    s->nhave < c->m->npieces && s->bad == 0)
			c->peers_serving = true;
	}
	for (size_t i = 0; i < c->nsrc; i++)
		if (usable(c, c->src[i], now))
			slots += slots_of(c, c->src[i]) - c->src[i]->inflight;
	if (slots == 0)
		return;
	n = missing_order(c, &unasked);
	for (uint32_t k = 0; k < n && slots > 0; k++) {
		struct source *s = pick(c, c->order[k], now, false);

		if (s != NULL && send_want(c, s, c->order[k], now))
			slots--;
	}
	if (unasked > 0 || slots == 0)
		return;
	/*
	 * Endgame: every missing piece is asked for; ask a second holder for
	 * those with one request, so one slow source cannot hold the tail.
	 */
	rot = rng_below(c->m->npieces);
	for (uint32_t t = 0; t < c->m->npieces && slots > 0; t++) {
		uint32_t j = (rot + t) % c->m->npieces;
		struct source *s;

		if (pstore_has(c->ps, j) || c->pin[j] != 1)
			continue;
		if ((s = pick(c, j, now, true)) != NULL &&
		    send_want(c, s, j, now))
			slots--;
	}
}

/* ---- receiving ---------------------------------------------------------- */

struct body {
	const uint8_t	*cid;
	bool		 has_piece;
	uint64_t	 piece;
	bool		 has_len;
	uint64_t	 len;		/* BLOCK: the piece's length */
	const uint8_t	*data;		/* the frame's detached payload */
	size_t		 data_len;
	const uint8_t	*bits;
	size_t		 bits_len;
	bool		 has_bits;
	struct dcbor_rd	 adds;		/* positioned at the array's items */
	uint64_t	 nadds;
	bool		 has_adds;
	bool		 reply;
	bool		 has_manifest;
	const uint8_t	*manifest;	/* NULL: "not found" */
	size_t		 manifest_len;
	char		 reason[16];
};

/*
 * Parse a swarm body; the keys allowed depend on the kind, and a BLOCK
 * has a payload (data) exactly when it carries a piece. 0 or -1.
 */
static int
body_parse(uint32_t kind, const uint8_t *p, size_t len, const uint8_t *data,
    struct body *b)
{
	struct dcbor_rd rd;
	uint64_t n;

	memset(b, 0, sizeof(*b));
	if (data != NULL && kind != FRAME_BLOCK)
		return -1;	/* frame.c refuses it first */
	b->data = data;
	dcbor_rd_init(&rd, p, len);
	if (dcbor_get_map(&rd, &n) == -1 || n > 4)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *k;
		size_t kl, cl;

		if (dcbor_get_text(&rd, &k, &kl) == -1)
			return -1;
		if (dcbor_text_is(k, kl, "cid")) {
			if (dcbor_get_bytes(&rd, &b->cid, &cl) == -1 ||
			    cl != CID_LEN)
				return -1;
		} else if (dcbor_text_is(k, kl, "piece") &&
		    (kind == FRAME_BLOCK || kind == FRAME_BLOCK_WANT)) {
			if (dcbor_get_uint(&rd, &b->piece) == -1)
				return -1;
			b->has_piece = true;
		} else if (dcbor_text_is(k, kl, "len") && kind == FRAME_BLOCK) {
			if (dcbor_get_uint(&rd, &b->len) == -1)
				return -1;
			b->has_len = true;
		} else if (dcbor_text_is(k, kl, "reason") &&
		    kind == FRAME_BLOCK) {
			const char *r;
			size_t rl;

			if (dcbor_get_text(&rd, &r, &rl) == -1 ||
			    rl >= sizeof(b->reason))
				return -1;
			memcpy(b->reason, r, rl);
		} else if (dcbor_text_is(k, kl, "bits") && kind == FRAME_HAVE) {
			if (dcbor_get_bytes(&rd, &b->bits, &b->bits_len) == -1)
				return -1;
			b->has_bits = true;
		} else if (dcbor_text_is(k, kl, "reply") &&
		    kind == FRAME_HAVE) {
			if (dcbor_get_bool(&rd, &b->reply) == -1)
				return -1;
		} else if (dcbor_text_is(k, kl, "add") && kind == FRAME_HAVE) {
			if (dcbor_get_array(&rd, &b->nadds) == -1 ||
			    b->nadds > MANIFEST_PIECES_MAX)
				return -1;
			b->adds = rd;
			b->has_adds = true;
			for (uint64_t j = 0; j < b->nadds; j++)
				if (dcbor_skip(&rd) == -1)
					return -1;
		} else if (dcbor_text_is(k, kl, "manifest") &&
		    kind == FRAME_QUERY_HIT) {
			b->has_manifest = true;
			if (!dcbor_take_null(&rd) && dcbor_get_bytes(&rd,
			    &b->manifest, &b->manifest_len) == -1)
				return -1;
		} else
			return -1;
	}
	if (dcbor_left(&rd) != 0 || b->cid == NULL)
		return -1;
	switch (kind) {
	case FRAME_QUERY_HIT:
		return b->has_manifest ? 0 : -1;
	case FRAME_HAVE:
		return b->has_bits != b->has_adds ? 0 : -1;
	case FRAME_BLOCK_WANT:
		return b->has_piece ? 0 : -1;
	case FRAME_BLOCK:
		/* A piece (len, and the payload) or a refusal (reason). */
		return b->has_piece && b->has_len != (b->reason[0] != '\0') &&
		    b->has_len == (b->data != NULL) ? 0 : -1;
	default:
		return n == 1 ? 0 : -1;
	}
}

static void
recv_query(struct member *m, const struct body *b)
{
	struct content *c = content_find(b->cid);
	const uint8_t *menc;
	size_t mlen;

	if (c == NULL || c->ps == NULL) {
		send_hit(b->cid, m, NULL, 0);
		return;
	}
	menc = pstore_manifest_enc(c->ps, &mlen);
	send_hit(c->cid, m, menc, mlen);
	source_get(c, m)->interested = true;
	send_bits(c, m, false);
}

static void
manifest_failed(struct content *c, enum swarm_err err, const char *why)
{
	log_info("swarm %.12s: fetch abandoned: %s", c->hex, why);
	trace_add("swarm", "%.12s fetch abandoned: %s", c->hex, why);
	waiters_answer(c, err, why);
	content_free(c);
}

static int
recv_hit(struct member *m, const struct body *b)
{
	struct content *c = content_find(b->cid);
	uint8_t cid[CID_LEN];
	char dir[PATH_MAX + 80], err[256];
	struct pstore *ps;
	struct source *s;

	if (c == NULL || c->state != CS_MANIFEST)
		return 0;
	s = source_get(c, m);
	if (b->manifest == NULL) {
		s->said_none = true;
		/* Not found once every linked peer has said so. */
		for (size_t i = 0; i < member_count(); i++) {
			struct member *o = member_at(i);
			struct source *os = source_find(c, o);

			if (o->link != NULL && (os == NULL || !os->said_none))
				return 0;
		}
		manifest_failed(c, SWARM_ENOTFOUND, "no linked peer has it");
		return 0;
	}
	manifest_cid(b->manifest, b->manifest_len, cid);
	if (memcmp(cid, c->cid, CID_LEN) != 0) {
		s->bad++;
		c->bad++;
		pd_count(swarm_pieces_bad);
		log_warnx("swarm %.12s: %s sent a manifest for another cid",
		    c->hex, src_name(s));
		return 0;
	}
	content_dir_of(c, dir, sizeof(dir));
	if ((ps = pstore_open(dir, b->manifest, b->manifest_len, err,
	    sizeof(err))) == NULL) {
		/* A valid manifest (its hash is the cid) we cannot store. */
		log_warnx("swarm %.12s: %s", c->hex, err);
		manifest_failed(c, SWARM_EINTERNAL, err);
		return 0;
	}
	content_attach(c, ps);
	s->interested = true;
	log_info("swarm %.12s: manifest from %s: %llu bytes in %u pieces of "
	    "%u", c->hex, src_name(s), (unsigned long long)c->m->size,
	    c->m->npieces, c->m->piece_size);
	trace_add("swarm", "%.12s manifest from %s, %u pieces", c->hex,
	    src_name(s), c->m->npieces);
	announce_bits(c, true);
	if (c->state == CS_COMPLETE)
		content_done(c);
	else
		waiters_answer(c, SWARM_EINTERNAL, NULL);
	pump(c);
	return 0;
}

static int
recv_have(struct member *m, struct body *b)
{
	struct content *c = content_find(b->cid);
	struct source *s;

	if (c == NULL || c->m == NULL)
		return 0;	/* not ours (yet): the manifest brings bits */
	s = source_get(c, m);
	s->interested = true;
	if (b->has_bits) {
		/* The right length, and bits past the last piece clear. */
		if (b->bits_len != nbytes_of(c) || (c->m->npieces % 8 != 0 &&
		    (b->bits[b->bits_len - 1] &
		    (0xffu >> (c->m->npieces % 8))) != 0)) {
			pd_count(bad_body);
			return -1;
		}
		source_set_bits(c, s, b->bits);
	} else {
		for (uint64_t i = 0; i < b->nadds; i++) {
			uint64_t p;

			if (dcbor_get_uint(&b->adds, &p) == -1 ||
			    p >= c->m->npieces) {
				pd_count(bad_body);
				return -1;
			}
			source_add_piece(c, s, (uint32_t)p);
		}
	}
	if (b->reply)
		send_bits(c, m, false);
	pump(c);
	return 0;
}

static void
recv_want(struct member *m, const struct body *b)
{
	struct content *c = content_find(b->cid);
	struct source *s;

	if (c == NULL || c->ps == NULL || b->piece >= c->m->npieces ||
	    !pstore_has(c->ps, (uint32_t)b->piece)) {
		send_refuse(b->cid, m, b->piece, "missing");
		return;
	}
	s = source_get(c, m);
	s->interested = true;
	/*
	 * A seed sends each piece out once: a piece it has sent before is
	 * deflected once per asker, who gets it from a fetcher that has it
	 * (or, if none has by then, asks again and is served).
	 */
	if (c->state == CS_COMPLETE && bit_get(c->served, b->piece) &&
	    !bit_get(s->no_defl, b->piece)) {
		bit_set(s->no_defl, b->piece);
		s->deflected++;
		send_refuse(b->cid, m, b->piece, "elsewhere");
		return;
	}
	if (link_outq(m) > SWARM_OUTQ_MAX) {
		send_refuse(b->cid, m, b->piece, "busy");
		return;
	}
	send_piece(c, s, (uint32_t)b->piece);
}

static void
piece_verified(struct content *c, struct source *s, uint32_t p,
    size_t len)
{
	uint64_t now = clock_mono_ms();

	c->pieces_fetched++;
	c->bytes_fetched += len;
	s->bytes_from += len;
	s->pieces_from++;
	pd_count(swarm_pieces_received);
	pd_count_add(swarm_bytes_received, len);
	c->last_progress_ms = now;
	if (c->nadds == c->capadds) {
		c->capadds = c->capadds ? c->capadds * 2 : 64;
		c->adds = xreallocarray(c->adds, c->capadds,
		    sizeof(*c->adds));
	}
	c->adds[c->nadds++] = p;
	/*
	 * Announce after every link ready in this turn of the loop has been
	 * read (a zero timeout runs after the next poll; event_active would
	 * run before it, one piece a HAVE): fewer, fuller HAVEs.
	 */
	if (!evtimer_pending(have_ev, NULL)) {
		struct timeval zero = { 0, 0 };

		evtimer_add(have_ev, &zero);
	}
	if (pstore_complete(c->ps)) {
		flush_adds(-1, 0, NULL);
		content_done(c);
	}
}

static int
recv_block(struct member *m, const struct body *b, const char **why)
{
	struct content *c = content_find(b->cid);
	struct source *s;
	uint32_t p;
	int rc;

	if (c == NULL || c->m == NULL || (s = source_find(c, m)) == NULL ||
	    b->piece >= c->m->npieces)
		return 0;	/* nothing we asked for */
	p = (uint32_t)b->piece;
	source_take_req(c, s, p);
	if (!b->has_len && strcmp(b->reason, "elsewhere") == 0) {
		bit_set(s->defl_from, p);
		c->defer_until[p] = clock_mono_ms() + SWARM_DEFLECT_MS;
		c->deflections++;
		pump(c);
		return 0;
	}
	if (!b->has_len) {
		s->refused++;
		c->refused++;
		if (strcmp(b->reason, "missing") == 0)
			source_drop_piece(c, s, p);
		else if (s->backoff_until < clock_mono_ms() + 50)
			s->backoff_until = clock_mono_ms() + 50 +
			    rng_below(100);
		pump(c);
		return 0;
	}
	/* The signed len, the payload and the manifest must all agree. */
	if (b->len != manifest_piece_len(c->m, p) || b->data_len != b->len) {
		c->truncated++;
		s->bad++;
		pd_count(swarm_pieces_truncated);
		trace_add("swarm", "%.12s truncated piece %u from %s (%zu "
		    "bytes)", c->hex, p, src_name(s), b->data_len);
		*why = "swarm: truncated piece";
		return -1;
	}
	s->streak = 0;
	s->backoff_until = 0;
	switch ((rc = pstore_put(c->ps, p, b->data, b->data_len))) {
	case PSTORE_OK:
		source_add_piece(c, s, p);	/* it evidently has it */
		piece_verified(c, s, p, b->data_len);
		break;
	case PSTORE_DUP:
		c->dups++;
		pd_count(swarm_pieces_duplicate);
		break;
	case PSTORE_EBAD:
		c->bad++;
		if (s->bad++ == 0)
			log_warnx("swarm %.12s: bad piece %u from %s: its "
			    "hash is wrong; the source is deprioritised",
			    c->hex, p, src_name(s));
		pd_count(swarm_pieces_bad);
		trace_add("swarm", "%.12s bad piece %u from %s (bad %llu)",
		    c->hex, p, src_name(s), (unsigned long long)s->bad);
		break;
	default:
		log_warn("swarm %.12s: write piece %u", c->hex, p);
		break;
	}
	pump(c);
	return 0;
}

int
swarm_recv(struct member *m, uint32_t kind, const uint8_t *body, size_t len,
    const uint8_t *data, size_t data_len, const char **why)
{
	struct body b;

	*why = "malformed swarm body";
	if (body_parse(kind, body, len, data, &b) == -1) {
		pd_count(bad_body);
		return -1;
	}
	b.data_len = data_len;
	switch (kind) {
	case FRAME_QUERY:
		recv_query(m, &b);
		return 0;
	case FRAME_QUERY_HIT:
		return recv_hit(m, &b);
	case FRAME_HAVE:
		return recv_have(m, &b);
	case FRAME_BLOCK_WANT:
		recv_want(m, &b);
		return 0;
	case FRAME_BLOCK:
		return recv_block(m, &b, why);
	default:
		return 0;
	}
}

static void
swarm_link_up(struct member *m)
{
	struct content *c;

	TAILQ_FOREACH(c, &contents, entry) {
		if (c->state == CS_MANIFEST) {
			send_query(c, m);
			continue;
		}
		/* A fetcher asks for the other side's bits in return. */
		send_bits(c, m, c->state == CS_FETCHING);
	}
}

static void
swarm_link_down(struct member *m)
{
	struct content *c, *next;

	for (c = TAILQ_FIRST(&contents); c != NULL; c = next) {
		struct source *s = source_find(c, m);

		next = TAILQ_NEXT(c, entry);
		if (s != NULL)
			source_cancel(c, s);
		if (c->state == CS_FETCHING)
			pump(c);
	}
}

static void
swarm_link(struct member *m, bool up)
{
	if (up)
		swarm_link_up(m);
	else
		swarm_link_down(m);
}

/* The link-layer handler for the swarm's kinds. */
static int
swarm_frame(struct member *m, const struct frame *f, const char **why)
{
	return swarm_recv(m, f->kind, f->body, f->body_len, f->data,
	    f->data_len, why);
}

/* ---- the tick: timeouts, backoff, flush, progress, stalls ------------- */

static void
source_timeouts(struct content *c, struct source *s, uint64_t now)
{
	uint32_t n = 0;
	uint64_t b;
	bool sole;

	for (uint32_t i = 0; i < s->inflight; ) {
		if (now - s->reqs[i].sent_ms < c->timeout_ms) {
			i++;
			continue;
		}
		if (c->pin[s->reqs[i].piece] > 0)
			c->pin[s->reqs[i].piece]--;
		s->reqs[i] = s->reqs[--s->inflight];
		n++;
	}
	if (n == 0)
		return;
	s->timeouts += n;
	c->timeouts += n;
	pd_count_add(swarm_timeouts, n);
	s->streak++;
	b = (uint64_t)SWARM_BACKOFF_MIN_MS << (s->streak < 7 ? s->streak - 1 :
	    6);
	if (b > SWARM_BACKOFF_MAX_MS)
		b = SWARM_BACKOFF_MAX_MS;
	/* Never leave a fetcher without its only source for long. */
	if ((sole = source_is_sole(c, s)) && b > SWARM_BACKOFF_SOLE_MS)
		b = SWARM_BACKOFF_SOLE_MS;
	b = b / 2 + rng_below((uint32_t)(b / 2 + 1));
	s->backoff_until = now + b;
	log_info("swarm %.12s: %u request(s) to %s timed out (%u in a row); "
	    "retry in %llu ms, source kept%s", c->hex, n, src_name(s),
	    s->streak, (unsigned long long)b,
	    sole ? " (the only holder of a needed piece)" : "");
	trace_add("swarm", "%.12s %s timed out x%u, backoff %llu ms%s",
	    c->hex, src_name(s), s->streak, (unsigned long long)b,
	    sole ? " (sole holder)" : "");
}

static void
stall_report(struct content *c, uint64_t now)
{
	json_t *tail, *ev;
	size_t i;

	c->stalls++;
	pd_count(swarm_stalls);
	log_warnx("swarm %.12s: stalled: no piece verified for %llu ms "
	    "(%u of %u pieces)", c->hex,
	    (unsigned long long)(now - c->last_progress_ms),
	    pstore_count(c->ps), c->m->npieces);
	trace_add("swarm", "%.12s stall: %u of %u pieces, nothing for %llu ms",
	    c->hex, pstore_count(c->ps), c->m->npieces,
	    (unsigned long long)(now - c->last_progress_ms));
	for (size_t k = 0; k < c->nsrc; k++) {
		struct source *s = c->src[k];

		log_warnx("swarm %.12s:   source %s: link %s, holds %u, in "
		    "flight %u, timeouts %llu (%u in a row), bad %llu, backoff "
		    "%lld ms", c->hex, src_name(s), s->m->link ? "up" : "down",
		    s->nhave, s->inflight, (unsigned long long)s->timeouts,
		    s->streak, (unsigned long long)s->bad,
		    (long long)(s->backoff_until > now ? s->backoff_until - now :
		    0));
	}
	/* The tail of the trace, as the seed's harness prints it. */
	tail = trace_json(20);
	json_array_foreach(tail, i, ev)
		log_warnx("swarm %.12s:   trace %s %s", c->hex,
		    json_string_value(json_object_get(ev, "cat")),
		    json_string_value(json_object_get(ev, "detail")));
	json_decref(tail);
	/* Ask every linked peer for its bits again, in case we missed some. */
	announce_bits(c, true);
	c->last_progress_ms = now;
}

static void
swarm_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct content *c, *next;
	uint64_t now = clock_mono_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	for (c = TAILQ_FIRST(&contents); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->state == CS_MANIFEST) {
			waiters_answer(c, SWARM_EINTERNAL, NULL);
			if (c->waiters == NULL || now >= c->manifest_deadline_ms)
				manifest_failed(c, SWARM_ETIMEOUT, "no manifest "
				    "before the deadline");
			continue;
		}
		if (c->ps != NULL && now - c->last_flush_ms >= SWARM_FLUSH_MS) {
			if (pstore_flush(c->ps) == -1)
				log_warn("swarm %.12s: flush the piece map",
				    c->hex);
			c->last_flush_ms = now;
		}
		if (c->waiters != NULL)
			waiters_answer(c, SWARM_EINTERNAL, NULL);
		if (c->state != CS_FETCHING)
			continue;
		for (size_t i = 0; i < c->nsrc; i++)
			source_timeouts(c, c->src[i], now);
		if (now - c->last_log_ms >= SWARM_PROGRESS_MS) {
			c->last_log_ms = now;
			log_info("swarm %.12s: %u of %u pieces verified (%llu "
			    "fetched this run)", c->hex, pstore_count(c->ps),
			    c->m->npieces,
			    (unsigned long long)c->pieces_fetched);
		}
		if (now - c->last_progress_ms >= c->stall_ms)
			stall_report(c, now);
		pump(c);
	}
}

/* ---- start and stop ----------------------------------------------------- */

static bool
is_cid_hex(const char *s)
{
	if (strlen(s) != 2 * CID_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* Open every store under DIR/content; incomplete ones resume fetching. */
static void
swarm_load(void)
{
	DIR *d;
	struct dirent *de;

	if ((d = opendir(content_dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX + 300], err[256];
		uint8_t cid[CID_LEN], chk[CID_LEN];
		const uint8_t *menc;
		struct pstore *ps;
		struct content *c;
		size_t mlen;

		if (strncmp(de->d_name, ".stage-", 7) == 0) {
			snprintf(path, sizeof(path), "%s/%s", content_dir,
			    de->d_name);
			unlink(path);
			continue;
		}
		if (!is_cid_hex(de->d_name) ||
		    hex_decode(de->d_name, cid, CID_LEN) == -1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", content_dir, de->d_name);
		if ((ps = pstore_open(path, NULL, 0, err, sizeof(err))) ==
		    NULL) {
			log_warnx("swarm: skip %s: %s", path, err);
			continue;
		}
		menc = pstore_manifest_enc(ps, &mlen);
		manifest_cid(menc, mlen, chk);
		if (memcmp(chk, cid, CID_LEN) != 0) {
			log_warnx("swarm: skip %s: its manifest is for "
			    "another cid", path);
			pstore_close(ps);
			continue;
		}
		c = content_new(cid);
		c->resumed = true;
		content_attach(c, ps);
		if (c->state == CS_COMPLETE)
			c->end_us = c->start_us;
		log_info("swarm %.12s: opened, %u of %u pieces%s%s", c->hex,
		    pstore_count(ps), c->m->npieces,
		    pstore_rebuilt(ps) ? " (map rebuilt from the data)" : "",
		    c->state == CS_FETCHING ? "; resuming the fetch" : "");
		trace_add("swarm", "%.12s opened with %u of %u pieces", c->hex,
		    pstore_count(ps), c->m->npieces);
	}
	closedir(d);
}

void
swarm_init(void)
{
	struct timeval tv = { 0, SWARM_TICK_MS * 1000 };

	RAND_bytes((unsigned char *)&rng_state, sizeof(rng_state));
	dcbor_buf_init(&wbuf);
	snprintf(content_dir, sizeof(content_dir), "%s/content", pd->conf.dir);
	if (mkdir(content_dir, 0700) == -1 && errno != EEXIST)
		log_warn("swarm: mkdir %s", content_dir);
	swarm_load();
	tick_ev = event_new(pd->base, -1, EV_PERSIST, swarm_tick, NULL);
	event_add(tick_ev, &tv);
	link_register(FRAME_QUERY, swarm_frame);
	link_register(FRAME_QUERY_HIT, swarm_frame);
	link_register(FRAME_HAVE, swarm_frame);
	link_register(FRAME_BLOCK_WANT, swarm_frame);
	link_register(FRAME_BLOCK, swarm_frame);
	link_observe(swarm_link);
	have_ev = event_new(pd->base, -1, 0, flush_adds, NULL);
}

void
swarm_free(void)
{
	while (!TAILQ_EMPTY(&contents))
		content_free(TAILQ_FIRST(&contents));
	if (tick_ev != NULL)
		event_free(tick_ev);
	if (have_ev != NULL)
		event_free(have_ev);
	tick_ev = have_ev = NULL;
	dcbor_buf_free(&wbuf);
	free(fault_buf);
	fault_buf = NULL;
}

/* ---- the control commands ----------------------------------------------- */

static json_t *
content_json(struct content *c, bool want_sha)
{
	json_t *j, *from = json_object(), *served = json_object();
	json_t *bad = json_object(), *srcs = json_object();
	char sha[2 * MANIFEST_HASH_LEN + 1];
	uint64_t end = c->end_us ? c->end_us : clock_mono_us();
	uint64_t bytes_served = 0, deflected = 0;

	for (size_t i = 0; i < c->nsrc; i++) {
		struct source *s = c->src[i];
		const char *nm = src_name(s);

		bytes_served += s->bytes_to;
		deflected += s->deflected;
		json_object_set_new(from, nm, json_integer((json_int_t)
		    s->bytes_from));
		json_object_set_new(served, nm, json_integer((json_int_t)
		    s->bytes_to));
		json_object_set_new(bad, nm, json_integer((json_int_t)s->bad));
		json_object_set_new(srcs, nm, json_pack("{s:I, s:I, s:I, s:I, "
		    "s:I, s:I, s:I, s:I, s:I, s:b, s:I}",
		    "bytes_from", (json_int_t)s->bytes_from,
		    "pieces_from", (json_int_t)s->pieces_from,
		    "bytes_to", (json_int_t)s->bytes_to,
		    "pieces_to", (json_int_t)s->pieces_to,
		    "bad", (json_int_t)s->bad,
		    "timeouts", (json_int_t)s->timeouts,
		    "refused", (json_int_t)s->refused,
		    "deflected", (json_int_t)s->deflected,
		    "holds", (json_int_t)s->nhave,
		    "linked", s->m->link != NULL,
		    "in_flight", (json_int_t)s->inflight));
	}
	j = json_pack("{s:s, s:s, s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:I}",
	    "cid", c->hex, "state", cstate_names[c->state],
	    "role", c->publisher ? "publisher" : "fetcher",
	    "complete", c->state == CS_COMPLETE, "resumed", c->resumed,
	    "size", (json_int_t)(c->m ? c->m->size : 0),
	    "piece_size", (json_int_t)(c->m ? c->m->piece_size : 0),
	    "pieces", (json_int_t)(c->m ? c->m->npieces : 0),
	    "verified", (json_int_t)(c->ps ? pstore_count(c->ps) : 0),
	    "pieces_at_start", (json_int_t)c->at_start);
	json_object_set_new(j, "direct_io", json_boolean(c->ps != NULL &&
	    pstore_is_direct(c->ps)));
	json_object_set_new(j, "pieces_fetched",
	    json_integer((json_int_t)c->pieces_fetched));
	json_object_set_new(j, "bytes_fetched",
	    json_integer((json_int_t)c->bytes_fetched));
	json_object_set_new(j, "bytes_served",
	    json_integer((json_int_t)bytes_served));
	json_object_set_new(j, "duplicates", json_integer((json_int_t)c->dups));
	json_object_set_new(j, "bad_pieces", json_integer((json_int_t)c->bad));
	json_object_set_new(j, "truncated",
	    json_integer((json_int_t)c->truncated));
	json_object_set_new(j, "timeouts",
	    json_integer((json_int_t)c->timeouts));
	json_object_set_new(j, "refused", json_integer((json_int_t)c->refused));
	json_object_set_new(j, "deflected", json_integer((json_int_t)deflected));
	json_object_set_new(j, "deflections",
	    json_integer((json_int_t)c->deflections));
	json_object_set_new(j, "stalls", json_integer((json_int_t)c->stalls));
	json_object_set_new(j, "start_us", json_integer((json_int_t)c->start_us));
	json_object_set_new(j, "end_us", c->end_us ?
	    json_integer((json_int_t)c->end_us) : json_null());
	json_object_set_new(j, "seconds", json_real((double)(end -
	    c->start_us) / 1e6));
	if (want_sha && !c->have_sha && c->state == CS_COMPLETE &&
	    pstore_sha256(c->ps, c->sha) == 0)
		c->have_sha = true;
	if (c->have_sha) {
		hex_encode(c->sha, sizeof(c->sha), sha);
		json_object_set_new(j, "sha256", json_string(sha));
	} else
		json_object_set_new(j, "sha256", json_null());
	json_object_set_new(j, "from", from);
	json_object_set_new(j, "served", served);
	json_object_set_new(j, "bad", bad);
	json_object_set_new(j, "sources", srcs);
	return j;
}

/* Blob byte k is byte k % 8 of the (k / 8 + 1)-th splitmix64 output. */
static uint64_t
gen_next(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
gen_fill(uint64_t *st, uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = gen_next(st);

		for (size_t k = 0; k < 8 && i + k < n; k++)
			buf[i + k] = (uint8_t)(v >> (8 * k));
	}
}

static int
read_full(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int
write_full(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Write the blob to a staging file piece by piece, hashing each piece and
 * the whole.  From the file at src (fd >= 0) or generated from seed.
 */
static int
publish_stage(const char *stage, int src, uint64_t seed, struct manifest *m,
    uint8_t sha[MANIFEST_HASH_LEN], char *err, size_t errlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t *buf = xmalloc(m->piece_size);
	unsigned int olen = MANIFEST_HASH_LEN;
	int fd, rc = -1;

	if ((fd = open(stage, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		snprintf(err, errlen, "%.160s: %s", stage, strerror(errno));
		goto out;
	}
	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		snprintf(err, errlen, "sha256 init failed");
		goto out;
	}
	for (uint32_t i = 0; i < m->npieces; i++) {
		uint32_t len = manifest_piece_len(m, i);

		if (src >= 0) {
			if (read_full(src, buf, len) == -1) {
				snprintf(err, errlen, "read: %s", errno ?
				    strerror(errno) : "short file");
				goto out;
			}
		} else
			gen_fill(&seed, buf, len);
		manifest_sha256(buf, len, manifest_hash(m, i));
		if (EVP_DigestUpdate(ctx, buf, len) != 1 ||
		    write_full(fd, buf, len) == -1) {
			snprintf(err, errlen, "write %.160s: %s", stage,
			    strerror(errno));
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, sha, &olen) == 1)
		rc = 0;
out:
	if (fd != -1 && close(fd) == -1 && rc == 0) {
		snprintf(err, errlen, "close %.160s: %s", stage,
		    strerror(errno));
		rc = -1;
	}
	if (rc == -1)
		unlink(stage);
	EVP_MD_CTX_free(ctx);
	free(buf);
	return rc;
}

/* Fail a request: the message into msg, and the error back. */
static enum swarm_err
swarm_fail(char *msg, size_t msglen, enum swarm_err e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return e;
}

enum swarm_err
swarm_publish(const struct swarm_publish_req *r, json_t **result, char *msg,
    size_t msglen)
{
	const char *path = r->path;
	int64_t kib = r->piece_kib;
	uint64_t size, seed = r->seed;
	char stage[PATH_MAX + 64], dir[PATH_MAX + 80], err[256];
	enum swarm_err rc = SWARM_OK;
	uint8_t sha[MANIFEST_HASH_LEN], cid[CID_LEN];
	struct manifest m;
	struct dcbor_buf enc;
	struct pstore *ps;
	struct content *c;
	struct stat st;
	int src = -1;

	*result = NULL;
	if ((path == NULL) == !r->have_size)
		return swarm_fail(msg, msglen, SWARM_EARGS, "publish: give "
		    "\"path\", or \"size\" and \"seed\" for generated "
		    "content");
	if (kib < 1 || (uint64_t)kib * 1024 > MANIFEST_PIECE_MAX)
		return swarm_fail(msg, msglen, SWARM_EARGS, "publish: "
		    "\"piece_kib\" %lld is out of range: 1 to %u (4 MiB, so a "
		    "piece fits one frame)", (long long)kib,
		    MANIFEST_PIECE_MAX / 1024);
	if ((uint64_t)kib * 1024 + 1024 > pd->conf.max_frame)
		return swarm_fail(msg, msglen, SWARM_EARGS, "publish: a piece "
		    "of %lld KiB does not fit --max-frame %u", (long long)kib,
		    pd->conf.max_frame);
	if (path != NULL) {
		if ((src = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
		    fstat(src, &st) == -1 || !S_ISREG(st.st_mode)) {
			rc = swarm_fail(msg, msglen, src == -1 ?
			    SWARM_ENOTFOUND : SWARM_EARGS, "publish: %s: %s",
			    path, src == -1 ? strerror(errno) :
			    "not a regular file");
			if (src != -1)
				close(src);
			return rc;
		}
		size = (uint64_t)st.st_size;
	} else {
		if (r->size < 1)
			return swarm_fail(msg, msglen, SWARM_EARGS, "publish: "
			    "\"size\" must be >= 1");
		size = (uint64_t)r->size;
	}
	if (manifest_init(&m, size, (uint32_t)kib * 1024) == -1) {
		rc = swarm_fail(msg, msglen, SWARM_EARGS, "publish: %llu bytes "
		    "in pieces of %lld KiB: empty, or more than %u pieces",
		    (unsigned long long)size, (long long)kib,
		    MANIFEST_PIECES_MAX);
		if (src != -1)
			close(src);
		return rc;
	}
	snprintf(stage, sizeof(stage), "%s/.stage-%d-%u", content_dir,
	    (int)getpid(), ++stage_serial);
	if (publish_stage(stage, src, seed, &m, sha, err, sizeof(err)) == -1) {
		rc = swarm_fail(msg, msglen, SWARM_EINTERNAL, "publish: %s",
		    err);
		goto out;
	}
	dcbor_buf_init(&enc);
	manifest_encode(&m, &enc);
	manifest_cid(enc.data, enc.len, cid);
	if ((c = content_find(cid)) != NULL) {
		unlink(stage);
		dcbor_buf_free(&enc);
		if (c->state != CS_COMPLETE) {
			rc = swarm_fail(msg, msglen, SWARM_EBUSY, "publish: "
			    "%s is being fetched", c->hex);
			goto out;
		}
		*result = content_json(c, true);
		goto out;
	}
	c = content_new(cid);
	content_dir_of(c, dir, sizeof(dir));
	ps = pstore_adopt(dir, enc.data, enc.len, stage, err, sizeof(err));
	dcbor_buf_free(&enc);
	if (ps == NULL) {
		unlink(stage);
		content_free(c);
		rc = swarm_fail(msg, msglen, SWARM_EINTERNAL, "publish: %s",
		    err);
		goto out;
	}
	content_attach(c, ps);
	c->publisher = true;
	memcpy(c->sha, sha, sizeof(sha));
	c->have_sha = true;
	c->end_us = c->start_us;
	log_info("swarm %.12s: published %llu bytes in %u pieces of %u",
	    c->hex, (unsigned long long)m.size, m.npieces, m.piece_size);
	trace_add("swarm", "%.12s published, %u pieces", c->hex, m.npieces);
	announce_bits(c, false);
	*result = content_json(c, true);
out:
	if (src != -1)
		close(src);
	manifest_free(&m);
	return rc;
}

void
swarm_fetch(const struct swarm_fetch_req *r, swarm_done_fn done, void *arg)
{
	const char *hex = r->cid, *order = r->order;
	bool wait = r->wait;
	int64_t timeout = r->timeout_ms, limit = r->inflight,
	    stall = r->stall_ms;
	char msg[160];
	uint8_t cid[CID_LEN];
	struct content *c;
	bool fresh = false;

	if (!is_cid_hex(hex) || hex_decode(hex, cid, CID_LEN) == -1) {
		done(arg, SWARM_EARGS, "fetch: \"cid\" must be 64 lower-case "
		    "hex digits", NULL);
		return;
	}
	if (timeout < 1 || timeout > 86400000 || limit < 1 ||
	    limit > SWARM_INFLIGHT_MAX || stall < 100 || stall > 86400000 ||
	    (strcmp(order, "rarest") != 0 && strcmp(order, "random") != 0)) {
		swarm_fail(msg, sizeof(msg), SWARM_EARGS, "fetch: "
		    "\"timeout_ms\" 1..86400000, \"inflight\" 1..%u, "
		    "\"stall_ms\" 100..86400000, \"order\" rarest or random",
		    SWARM_INFLIGHT_MAX);
		done(arg, SWARM_EARGS, msg, NULL);
		return;
	}
	if ((c = content_find(cid)) == NULL) {
		c = content_new(cid);
		fresh = true;
	}
	c->limit = (uint32_t)limit;
	c->stall_ms = (uint32_t)stall;
	c->random_order = strcmp(order, "random") == 0;
	if (c->state == CS_COMPLETE || (c->state == CS_FETCHING && !wait)) {
		done(arg, SWARM_OK, NULL, content_json(c, true));
		return;
	}
	waiter_add(c, done, arg, wait, (uint64_t)timeout);
	if (!fresh) {
		pump(c);
		return;
	}
	log_info("swarm %.12s: fetch started", c->hex);
	trace_add("swarm", "%.12s fetch started", c->hex);
	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->link != NULL)
			send_query(c, member_at(i));
}

enum swarm_err
swarm_content(const char *hex, bool want_sha, json_t **result, char *msg,
    size_t msglen)
{
	uint8_t cid[CID_LEN];
	struct content *c;
	json_t *arr;

	*result = NULL;
	if (hex != NULL) {
		if (!is_cid_hex(hex) || hex_decode(hex, cid, CID_LEN) == -1)
			return swarm_fail(msg, msglen, SWARM_EARGS, "content: "
			    "\"cid\" must be 64 lower-case hex digits");
		if ((c = content_find(cid)) == NULL)
			return swarm_fail(msg, msglen, SWARM_ENOTFOUND,
			    "content: %.64s is not held or fetched here", hex);
		*result = content_json(c, want_sha);
		return SWARM_OK;
	}
	arr = json_array();
	TAILQ_FOREACH(c, &contents, entry)
		json_array_append_new(arr, content_json(c, want_sha));
	*result = json_pack("{s:o}", "contents", arr);
	return SWARM_OK;
}

json_t *
swarm_fault(int corrupt, int shorten)
{
	if (corrupt != -1)
		corrupt_pieces = corrupt != 0;
	if (shorten != -1)
		short_pieces = shorten != 0;
	log_warnx("swarm: test-only fault corrupt_pieces %s, short_pieces %s",
	    corrupt_pieces ? "ON: every piece served has a byte flipped" :
	    "off", short_pieces ? "ON: every piece served is a byte short" :
	    "off");
	trace_add("fault", "swarm corrupt_pieces %s short_pieces %s",
	    corrupt_pieces ? "on" : "off", short_pieces ? "on" : "off");
	return json_pack("{s:b, s:b}", "corrupt_pieces", corrupt_pieces,
	    "short_pieces", short_pieces);
}

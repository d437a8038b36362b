/*
 * swarm.c: the content swarm's wire side and life cycle (see swarm.h and
 * docs/protocol.md "Content swarm"): the bodies sent and received, serving
 * pieces from the store, the source policy on timeouts, progress and stall
 * reports, start and stop, and the fetch, content and swarm_fault commands.
 * The blobs and their sources are content.c and source.c, the piece
 * scheduler picker.c, publishing publish.c.
 *
 * Nothing here blocks but pread/pwrite on the local store.  Requests are
 * bounded per source (backpressure on the sender's output buffers), and a
 * peer whose output queue to a requester is long refuses ("busy") instead
 * of queueing more.
 */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "content.h"
#include "dcbor.h"
#include "frame.h"
#include "hex.h"
#include "link.h"
#include "log.h"
#include "manifest.h"
#include "member.h"
#include "peerd.h"
#include "pstore.h"
#include "picker.h"
#include "source.h"
#include "stats.h"
#include "swarm.h"
#include "trace.h"
#include "xmalloc.h"

static struct event	*tick_ev, *have_ev;
static struct dcbor_buf	 wbuf;		/* bodies being built */
static bool		 corrupt_pieces;	/* test-only faults */
static bool		 short_pieces;
static uint8_t		*fault_buf;		/* a piece being spoilt */

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

/* Our whole bitfield to every linked peer; reply asks for theirs. */
void
swarm_announce(struct content *c, bool reply)
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

/* Ask s for piece i of c: true if sent (and counted in flight). */
bool
swarm_want(struct content *c, struct source *s, uint32_t i, uint64_t now)
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
	CONTENT_FOREACH(c) {
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
	content_answer(c, err, why);
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
		    c->hex, source_name(s));
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
	    "%u", c->hex, source_name(s), (unsigned long long)c->m->size,
	    c->m->npieces, c->m->piece_size);
	trace_add("swarm", "%.12s manifest from %s, %u pieces", c->hex,
	    source_name(s), c->m->npieces);
	swarm_announce(c, true);
	if (c->state == CS_COMPLETE)
		content_done(c);
	else
		content_answer(c, SWARM_EINTERNAL, NULL);
	picker_pump(c);
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
	picker_pump(c);
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
		picker_pump(c);
		return 0;
	}
	if (!b->has_len) {
		s->refused++;
		c->refused++;
		if (strcmp(b->reason, "missing") == 0)
			source_drop_piece(c, s, p);
		else if (s->backoff_until < clock_mono_ms() + 50)
			s->backoff_until = clock_mono_ms() + 50 +
			    picker_rand(100);
		picker_pump(c);
		return 0;
	}
	/* The signed len, the payload and the manifest must all agree. */
	if (b->len != manifest_piece_len(c->m, p) || b->data_len != b->len) {
		c->truncated++;
		s->bad++;
		pd_count(swarm_pieces_truncated);
		trace_add("swarm", "%.12s truncated piece %u from %s (%zu "
		    "bytes)", c->hex, p, source_name(s), b->data_len);
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
			    c->hex, p, source_name(s));
		pd_count(swarm_pieces_bad);
		trace_add("swarm", "%.12s bad piece %u from %s (bad %llu)",
		    c->hex, p, source_name(s), (unsigned long long)s->bad);
		break;
	default:
		log_warn("swarm %.12s: write piece %u", c->hex, p);
		break;
	}
	picker_pump(c);
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

	CONTENT_FOREACH(c) {
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

	for (c = content_first(); c != NULL; c = next) {
		struct source *s = source_find(c, m);

		next = TAILQ_NEXT(c, entry);
		if (s != NULL)
			source_cancel(c, s);
		if (c->state == CS_FETCHING)
			picker_pump(c);
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
	b = b / 2 + picker_rand((uint32_t)(b / 2 + 1));
	s->backoff_until = now + b;
	log_info("swarm %.12s: %u request(s) to %s timed out (%u in a row); "
	    "retry in %llu ms, source kept%s", c->hex, n, source_name(s),
	    s->streak, (unsigned long long)b,
	    sole ? " (the only holder of a needed piece)" : "");
	trace_add("swarm", "%.12s %s timed out x%u, backoff %llu ms%s",
	    c->hex, source_name(s), s->streak, (unsigned long long)b,
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
		    "%lld ms", c->hex, source_name(s), s->m->link ? "up" : "down",
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
	swarm_announce(c, true);
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
	for (c = content_first(); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->state == CS_MANIFEST) {
			content_answer(c, SWARM_EINTERNAL, NULL);
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
			content_answer(c, SWARM_EINTERNAL, NULL);
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
		picker_pump(c);
	}
	/* Nothing held: no wake-ups until there is (swarm_wake). */
	if (content_first() == NULL)
		event_del(tick_ev);
}

/*
 * Content was added: run the tick every SWARM_TICK_MS while any is held.
 * A peer that holds none (most peers of a gossip or takes fleet) then
 * wakes only for its own tick, not 10 times a second for the swarm's.
 */
void
swarm_wake(void)
{
	struct timeval tv = { 0, SWARM_TICK_MS * 1000 };

	if (tick_ev != NULL && !event_pending(tick_ev, EV_TIMEOUT, NULL))
		event_add(tick_ev, &tv);
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

	if ((d = opendir(content_root())) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX + 300], err[256];
		uint8_t cid[CID_LEN], chk[CID_LEN];
		const uint8_t *menc;
		struct pstore *ps;
		struct content *c;
		size_t mlen;

		if (strncmp(de->d_name, ".stage-", 7) == 0) {
			snprintf(path, sizeof(path), "%s/%s", content_root(),
			    de->d_name);
			unlink(path);
			continue;
		}
		if (!is_cid_hex(de->d_name) ||
		    hex_decode(de->d_name, cid, CID_LEN) == -1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", content_root(),
		    de->d_name);
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
		swarm_wake();
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

	picker_init(swarm_want);
	dcbor_buf_init(&wbuf);
	content_init();
	swarm_load();
	tick_ev = event_new(pd->base, -1, EV_PERSIST, swarm_tick, NULL);
	if (content_first() != NULL)
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
	while (content_first() != NULL)
		content_free(content_first());
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

/* Fail a request: the message into msg, and the error back. */
enum swarm_err
swarm_fail(char *msg, size_t msglen, enum swarm_err e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return e;
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
		swarm_wake();
		fresh = true;
	}
	c->limit = (uint32_t)limit;
	c->stall_ms = (uint32_t)stall;
	c->random_order = strcmp(order, "random") == 0;
	if (c->state == CS_COMPLETE || (c->state == CS_FETCHING && !wait)) {
		done(arg, SWARM_OK, NULL, content_json(c, true));
		return;
	}
	content_wait(c, done, arg, wait, (uint64_t)timeout);
	if (!fresh) {
		picker_pump(c);
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
	CONTENT_FOREACH(c)
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


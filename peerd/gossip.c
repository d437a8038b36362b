/*
 * gossip.c: Plumtree broadcast (eager rumors along tree edges, IHAVE on
 * the rest of the active view, GRAFT and PRUNE mending the tree), batched
 * per link; anti-entropy by digest and delta; PING/ACK/PING_REQ (see
 * gossip.h and docs/protocol.md).  The records themselves are the replica's business:
 * this file moves them.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <xxhash.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "gossip.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "recon.h"
#include "replica.h"
#include "take.h"
#include "trace.h"
#include "xmalloc.h"

/* Seen rumor ids: a FIFO ring for eviction plus an open-addressing set. */
#define SEEN_SLOTS	(GOSSIP_SEEN * 4)

static uint64_t		 seen_ring[GOSSIP_SEEN];
static size_t		 seen_next;
static uint64_t		 seen_set[SEEN_SLOTS];	/* 0 = empty */

static struct dcbor_buf	 batch;		/* queued records, concatenated */
static size_t		 batch_n;
static struct event	*flush_ev;
static uint64_t		 last_ae_ms;

static bool
seen_has(uint64_t rid)
{
	for (size_t i = rid % SEEN_SLOTS, n = 0; n < SEEN_SLOTS;
	    i = (i + 1) % SEEN_SLOTS, n++) {
		if (seen_set[i] == 0)
			return false;
		if (seen_set[i] == rid)
			return true;
	}
	return false;
}

static void
seen_del(uint64_t rid)
{
	size_t i = rid % SEEN_SLOTS, j;

	while (seen_set[i] != rid) {
		if (seen_set[i] == 0)
			return;
		i = (i + 1) % SEEN_SLOTS;
	}
	/* Backward-shift deletion keeps the probe chains whole. */
	seen_set[i] = 0;
	for (j = (i + 1) % SEEN_SLOTS; seen_set[j] != 0;
	    j = (j + 1) % SEEN_SLOTS) {
		uint64_t v = seen_set[j];
		size_t home = v % SEEN_SLOTS;
		bool move = i <= j ? (home <= i || home > j) :
		    (home <= i && home > j);

		if (move) {
			seen_set[i] = v;
			seen_set[j] = 0;
			i = j;
		}
	}
}

static void
seen_add(uint64_t rid)
{
	size_t i;

	if (seen_ring[seen_next] != 0)
		seen_del(seen_ring[seen_next]);
	seen_ring[seen_next] = rid;
	seen_next = (seen_next + 1) % GOSSIP_SEEN;
	for (i = rid % SEEN_SLOTS; seen_set[i] != 0; i = (i + 1) % SEEN_SLOTS)
		;
	seen_set[i] = rid;
}

/* ---- Plumtree: eager rumors on tree edges, IHAVE on the rest ----------- */

/* Recently forwarded rumors, to answer a GRAFT: a ring. */
struct cached {
	uint64_t	 rid;
	uint64_t	 hops;
	uint8_t		*items;
	size_t		 len;
};

/* Ids announced by IHAVE and not yet received: GRAFT when overdue. */
struct missing {
	uint64_t	 rid;
	uint64_t	 due_ms;
	struct member	*src[GOSSIP_MISSING_SRC];
	uint32_t	 nsrc;
};

static struct cached	 cache[GOSSIP_CACHE];
static size_t		 cache_next, cache_bytes;
static struct missing	 missing[GOSSIP_MISSING];
static size_t		 nmissing;
static struct event	*eager_ev, *lazy_ev, *graft_ev;

static void	send_digest(struct member *);

/* A rumor map (docs/protocol.md section 7) appended to b. */
static void
rumor_put(struct dcbor_buf *b, uint64_t rid, uint64_t hops,
    const uint8_t *items, size_t len)
{
	dcbor_put_map(b, 3);
	dcbor_put_cstr(b, "rid");
	dcbor_put_uint(b, rid);
	dcbor_put_cstr(b, "hops");
	dcbor_put_uint(b, hops);
	dcbor_put_cstr(b, "items");
	dcbor_put_raw(b, items, len);
}

static void
cache_add(uint64_t rid, uint64_t hops, const uint8_t *items, size_t len)
{
	struct cached *c;

	while (cache_bytes + len > GOSSIP_CACHE_BYTES && cache_bytes > 0) {
		/* Drop the oldest until it fits. */
		for (size_t i = 0; i < GOSSIP_CACHE; i++) {
			c = &cache[(cache_next + i) % GOSSIP_CACHE];
			if (c->items != NULL) {
				cache_bytes -= c->len;
				free(c->items);
				c->items = NULL;
				break;
			}
		}
	}
	if (len > GOSSIP_CACHE_BYTES)
		return;
	c = &cache[cache_next];
	if (c->items != NULL) {
		cache_bytes -= c->len;
		free(c->items);
	}
	c->rid = rid;
	c->hops = hops;
	c->items = xmalloc(len);
	memcpy(c->items, items, len);
	c->len = len;
	cache_bytes += len;
	cache_next = (cache_next + 1) % GOSSIP_CACHE;
}

static const struct cached *
cache_find(uint64_t rid)
{
	for (size_t i = 0; i < GOSSIP_CACHE; i++)
		if (cache[i].items != NULL && cache[i].rid == rid)
			return &cache[i];
	return NULL;
}

static void
cache_free(void)
{
	for (size_t i = 0; i < GOSSIP_CACHE; i++) {
		free(cache[i].items);
		cache[i].items = NULL;
	}
	cache_next = cache_bytes = 0;
}

/* Send what is queued for m: one rumor map, or an array of them. */
static void
pt_flush_member(struct member *m)
{
	struct dcbor_buf b;

	if (m->pt_nout == 0)
		return;
	if (m->link != NULL) {
		if (m->pt_nout == 1)
			link_send_member(m, FRAME_RUMOR, m->pt_out.data,
			    m->pt_out.len);
		else {
			dcbor_buf_init(&b);
			dcbor_put_array(&b, m->pt_nout);
			dcbor_put_raw(&b, m->pt_out.data, m->pt_out.len);
			link_send_member(m, FRAME_RUMOR, b.data, b.len);
			dcbor_buf_free(&b);
		}
		pd_count(rumors_sent);
		pd_count_add(push_eager, m->pt_nout);
	}
	m->pt_last_ms = clock_mono_ms();
	dcbor_buf_reset(&m->pt_out);
	m->pt_nout = 0;
	m->pt_due_ms = 0;
}

/* (Re)arm ev for the earliest of the members' due times (field at off). */
static void
pt_arm(struct event *ev, uint64_t due_ms)
{
	uint64_t now = clock_mono_ms();
	struct timeval tv = { 0, 0 };

	if (due_ms > now) {
		tv.tv_sec = (time_t)((due_ms - now) / 1000);
		tv.tv_usec = (suseconds_t)((due_ms - now) % 1000) * 1000;
	}
	event_add(ev, &tv);
}

static void
pt_eager_cb(evutil_socket_t fd, short ev, void *arg)
{
	uint64_t now = clock_mono_ms(), next = 0;

	(void)fd;
	(void)ev;
	(void)arg;
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->pt_nout == 0)
			continue;
		if (m->pt_due_ms <= now)
			pt_flush_member(m);
		else if (next == 0 || m->pt_due_ms < next)
			next = m->pt_due_ms;
	}
	if (next != 0)
		pt_arm(eager_ev, next);
}

/*
 * Queue one rumor map for m's eager edge.  Nagle-like: the first rumor
 * after a quiet --batch-ms leaves at the end of this loop turn; the rest
 * wait until --batch-ms after the last frame, so records waiting for the
 * same link leave together.
 */
static void
pt_eager(struct member *m, const uint8_t *map, size_t len)
{
	uint64_t now = clock_mono_ms(), due;

	if (m->pt_out.len + len > pd->conf.max_frame / 2)
		pt_flush_member(m);
	dcbor_put_raw(&m->pt_out, map, len);
	if (m->pt_nout++ > 0)
		return;
	due = m->pt_last_ms + pd->conf.batch_ms;
	m->pt_due_ms = due > now ? due : now;
	if (!event_pending(eager_ev, EV_TIMEOUT, NULL) || m->pt_due_ms <= now)
		pt_arm(eager_ev, m->pt_due_ms);
}

static void
pt_lazy_flush(struct member *m)
{
	struct dcbor_buf b;

	if (m->pt_nihave == 0)
		return;
	if (m->link != NULL) {
		dcbor_buf_init(&b);
		dcbor_put_map(&b, 1);
		dcbor_put_cstr(&b, "ids");
		dcbor_put_array(&b, m->pt_nihave);
		for (uint32_t i = 0; i < m->pt_nihave; i++)
			dcbor_put_uint(&b, m->pt_ihave[i]);
		if (link_send_member(m, FRAME_IHAVE, b.data, b.len) == 0) {
			pd_count(push_ihave_frames);
			pd_count_add(push_ihave_ids, m->pt_nihave);
		}
		dcbor_buf_free(&b);
	}
	m->pt_nihave = 0;
}

static void
pt_lazy_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	for (size_t i = 0; i < member_count(); i++)
		pt_lazy_flush(member_at(i));
}

/* Announce rid to m's lazy edge in its next IHAVE (every --lazy-ms). */
static void
pt_ihave(struct member *m, uint64_t rid)
{
	struct timeval tv;

	if (m->pt_ihave == NULL)
		m->pt_ihave = xcalloc(GOSSIP_IHAVE_MAX, sizeof(uint64_t));
	if (m->pt_nihave == GOSSIP_IHAVE_MAX)
		pt_lazy_flush(m);
	m->pt_ihave[m->pt_nihave++] = rid;
	if (!event_pending(lazy_ev, EV_TIMEOUT, NULL)) {
		tv.tv_sec = pd->conf.lazy_ms / 1000;
		tv.tv_usec = (suseconds_t)(pd->conf.lazy_ms % 1000) * 1000;
		event_add(lazy_ev, &tv);
	}
}

/* Forward a rumor: records on eager edges, its id on lazy ones. */
static void
pt_broadcast(uint64_t rid, uint64_t hops, const uint8_t *items, size_t len,
    const struct member *from)
{
	struct dcbor_buf map;

	dcbor_buf_init(&map);
	rumor_put(&map, rid, hops, items, len);
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link == NULL || m == from)
			continue;
		if (m->pt_lazy)
			pt_ihave(m, rid);
		else
			pt_eager(m, map.data, map.len);
	}
	dcbor_buf_free(&map);
}

static void
send_ids(struct member *m, uint32_t kind, const uint64_t *ids, size_t n)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "ids");
	dcbor_put_array(&b, n);
	for (size_t i = 0; i < n; i++)
		dcbor_put_uint(&b, ids[i]);
	link_send_member(m, kind, b.data, b.len);
	dcbor_buf_free(&b);
}

uint64_t
gossip_rid(const uint8_t *items, size_t len)
{
	return XXH3_64bits(items, len) | 1;
}

static void
send_prune(struct member *m)
{
	static const uint8_t empty_map = 0xa0;

	if (link_send_member(m, FRAME_PRUNE, &empty_map, 1) == 0)
		pd_count(push_prunes_sent);
}

static struct missing *
missing_find(uint64_t rid)
{
	for (size_t i = 0; i < nmissing; i++)
		if (missing[i].rid == rid)
			return &missing[i];
	return NULL;
}

static void
missing_del(struct missing *x)
{
	*x = missing[--nmissing];
}

/* An IHAVE'd id we lack: GRAFT from its first announcer when overdue. */
static void
missing_add(uint64_t rid, struct member *from)
{
	struct missing *x = missing_find(rid);

	if (x == NULL) {
		if (nmissing == GOSSIP_MISSING) {
			pd_count(push_missing_dropped);
			return;		/* anti-entropy will bring it */
		}
		x = &missing[nmissing++];
		memset(x, 0, sizeof(*x));
		x->rid = rid;
		x->due_ms = clock_mono_ms() + pd->conf.graft_ms;
	}
	for (uint32_t i = 0; i < x->nsrc; i++)
		if (x->src[i] == from)
			return;
	if (x->nsrc < GOSSIP_MISSING_SRC)
		x->src[x->nsrc++] = from;
	if (!event_pending(graft_ev, EV_TIMEOUT, NULL))
		pt_arm(graft_ev, x->due_ms);
}

static void
pt_graft_cb(evutil_socket_t fd, short ev, void *arg)
{
	uint64_t now = clock_mono_ms(), next = 0;

	(void)fd;
	(void)ev;
	(void)arg;
	for (size_t i = 0; i < nmissing; ) {
		struct missing *x = &missing[i];
		struct member *m = NULL;

		if (seen_has(x->rid)) {
			missing_del(x);
			continue;
		}
		if (x->due_ms > now) {
			if (next == 0 || x->due_ms < next)
				next = x->due_ms;
			i++;
			continue;
		}
		while (x->nsrc > 0 && m == NULL) {
			m = x->src[0];
			memmove(&x->src[0], &x->src[1],
			    (x->nsrc - 1) * sizeof(x->src[0]));
			x->nsrc--;
			if (m->link == NULL)
				m = NULL;
		}
		if (m == NULL) {
			missing_del(x);	/* nobody left: anti-entropy */
			continue;
		}
		/* m pushes to us eagerly from now on: the tree mends. */
		send_ids(m, FRAME_GRAFT, &x->rid, 1);
		pd_count(push_grafts_sent);
		x->due_ms = now + pd->conf.graft_ms;
		if (next == 0 || x->due_ms < next)
			next = x->due_ms;
		i++;
	}
	if (next != 0)
		pt_arm(graft_ev, next);
}

/*
 * One rumor of n records (concatenated in recs) from this peer.  A bulk
 * rumor goes by Plumtree (eager edges, IHAVE on lazy ones); an urgent one
 * (a claim or a completion) goes at once, in full, on the urgent lane of
 * every link of the active view, tree edge or not, so it never waits behind
 * bulk records or for a GRAFT; its receivers forward it by Plumtree.
 */
static void
rumor_start(const uint8_t *recs, size_t len, size_t n, bool urgent)
{
	struct dcbor_buf items, map;
	uint64_t rid;

	dcbor_buf_init(&items);
	dcbor_put_array(&items, n);
	dcbor_put_raw(&items, recs, len);
	rid = gossip_rid(items.data, items.len);
	seen_add(rid);
	cache_add(rid, pd->conf.hops, items.data, items.len);
	if (!urgent)
		pt_broadcast(rid, pd->conf.hops, items.data, items.len, NULL);
	else {
		dcbor_buf_init(&map);
		rumor_put(&map, rid, pd->conf.hops, items.data, items.len);
		for (size_t i = 0; i < member_count(); i++) {
			struct member *m = member_at(i);

			if (m->link != NULL && link_send_member_urgent(m,
			    FRAME_RUMOR, map.data, map.len) == 0) {
				pd_count(rumors_sent);
				pd_count(push_eager);
			}
		}
		dcbor_buf_free(&map);
	}
	pd_count_add(records_batched, n);
	dcbor_buf_free(&items);
}

static void
gossip_flush(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (batch_n == 0)
		return;
	rumor_start(batch.data, batch.len, batch_n, false);
	dcbor_buf_reset(&batch);
	batch_n = 0;
}

void
gossip_send_urgent(const uint8_t *rec, size_t len)
{
	rumor_start(rec, len, 1, true);
}

void
gossip_queue(const uint8_t *rec, size_t len)
{
	/* A batch stays well under the frame cap. */
	if (batch.len + len > pd->conf.max_frame / 4)
		gossip_flush(-1, 0, NULL);
	dcbor_put_raw(&batch, rec, len);
	batch_n++;
	event_active(flush_ev, EV_TIMEOUT, 0);
}

static int
apply_items(struct member *from, struct dcbor_rd *rd)
{
	uint64_t n;

	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (replica_apply_record(from, rd) == -1)
			return -1;
	return 0;
}

/* Items' record count (the array head), for the duplicate counter. */
static uint64_t
items_count(const uint8_t *items, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n;

	dcbor_rd_init(&rd, items, len);
	return dcbor_get_array(&rd, &n) == 0 ? n : 0;
}

/* One rumor map; *dup is set when it was seen before. */
static int
recv_one_rumor(struct member *from, struct dcbor_rd *rd, bool *dup)
{
	uint64_t rid, hops;
	const uint8_t *items;
	size_t items_len;
	struct dcbor_rd ird;
	struct missing *x;
	uint64_t n;

	if (dcbor_get_map(rd, &n) == -1 || n != 3 ||
	    dcbor_get_key(rd, "rid") == -1 || dcbor_get_uint(rd, &rid) == -1 ||
	    dcbor_get_key(rd, "hops") == -1 ||
	    dcbor_get_uint(rd, &hops) == -1 ||
	    dcbor_get_key(rd, "items") == -1 ||
	    dcbor_get_raw(rd, &items, &items_len) == -1 || rid == 0)
		return -1;
	pd_count(rumors_received);
	/*
	 * The rid names the items: one that does not would let a sender mark
	 * someone else's future rumor as seen, or slip past the duplicate
	 * check.  Refused before the seen set is touched.
	 */
	if (rid != gossip_rid(items, items_len)) {
		pd_count(rumors_bad_rid);
		trace_add("gossip", "rumor from %s with a wrong rid", from->name);
		return 0;
	}
	if (seen_has(rid)) {
		pd_count(duplicates_dropped);
		pd_count_add(push_duplicate_records,
		    items_count(items, items_len));
		*dup = true;
		return 0;
	}
	seen_add(rid);
	from->pt_first_ms = clock_mono_ms();
	if ((x = missing_find(rid)) != NULL)
		missing_del(x);
	dcbor_rd_init(&ird, items, items_len);
	if (apply_items(from, &ird) == -1)
		return -1;
	if (hops > GOSSIP_HOPS_MAX)
		hops = GOSSIP_HOPS_MAX;
	if (hops > 1) {
		cache_add(rid, hops - 1, items, items_len);
		pt_broadcast(rid, hops - 1, items, items_len, from);
	}
	return 0;
}

/*
 * A RUMOR body is one rumor map or an array of them (a batch for one
 * link).  Edges are directed: a duplicate from a sender that has not
 * delivered anything first for 4 x --graft-ms answers PRUNE, and the
 * sender pushes only ids to us from then on.  Keeping the edges that are
 * still first for some writer stops concurrent prunes (many writers, slow
 * links) from cutting every path into a peer at once.
 */
static int
recv_rumor(struct member *from, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	struct dcbor_item it;
	uint64_t n = 1;
	bool dup = false;

	dcbor_rd_init(&rd, body, len);
	{
		struct dcbor_rd peek = rd;

		if (dcbor_next(&peek, &it) == -1)
			return -1;
		if (it.type == DCBOR_ARRAY) {
			if (dcbor_get_array(&rd, &n) == -1 || n == 0 ||
			    n > GOSSIP_RUMORS_MAX)
				return -1;
		}
	}
	for (uint64_t i = 0; i < n; i++)
		if (recv_one_rumor(from, &rd, &dup) == -1)
			return -1;
	if (dcbor_left(&rd) != 0)
		return -1;
	if (dup && clock_mono_ms() - from->pt_first_ms >
	    4u * (uint64_t)pd->conf.graft_ms)
		send_prune(from);
	return 0;
}

static int
get_ids(const uint8_t *body, size_t len, uint64_t *ids, size_t *n)
{
	struct dcbor_rd rd;
	uint64_t k, cnt;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &k) == -1 || k != 1 ||
	    dcbor_get_key(&rd, "ids") == -1 ||
	    dcbor_get_array(&rd, &cnt) == -1 || cnt > GOSSIP_IHAVE_MAX)
		return -1;
	for (uint64_t i = 0; i < cnt; i++)
		if (dcbor_get_uint(&rd, &ids[i]) == -1 || ids[i] == 0)
			return -1;
	*n = (size_t)cnt;
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

static int
recv_ihave(struct member *from, const uint8_t *body, size_t len)
{
	static uint64_t ids[GOSSIP_IHAVE_MAX];
	size_t n;

	if (get_ids(body, len, ids, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!seen_has(ids[i]))
			missing_add(ids[i], from);
	return 0;
}

/* A GRAFT: the edge turns eager and the records it names go at once. */
static int
recv_graft(struct member *from, const uint8_t *body, size_t len)
{
	static uint64_t ids[GOSSIP_IHAVE_MAX];
	struct dcbor_buf map;
	bool lost = false;
	size_t n;

	if (get_ids(body, len, ids, &n) == -1)
		return -1;
	from->pt_lazy = false;
	dcbor_buf_init(&map);
	for (size_t i = 0; i < n; i++) {
		const struct cached *c = cache_find(ids[i]);

		if (c == NULL) {
			lost = true;
			continue;
		}
		dcbor_buf_reset(&map);
		rumor_put(&map, c->rid, c->hops, c->items, c->len);
		pt_eager(from, map.data, map.len);
		pd_count(push_grafts_answered);
	}
	dcbor_buf_free(&map);
	if (lost)
		send_digest(from);	/* too old for the cache */
	return 0;
}

static int
recv_prune(struct member *from, const uint8_t *body, size_t len)
{
	if (len != 1 || body[0] != 0xa0)
		return -1;
	from->pt_lazy = true;
	pd_count(push_prunes_received);
	return 0;
}

/* ---- anti-entropy ------------------------------------------------------ */

static void
send_digest(struct member *m)
{
	uint64_t dig[GOSSIP_BUCKETS];
	struct dcbor_buf b;

	replica_digest(dig);
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "b");
	dcbor_put_array(&b, GOSSIP_BUCKETS);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		dcbor_put_uint(&b, dig[i]);
	if (link_send_member(m, FRAME_DIGEST, b.data, b.len) == 0) {
		m->ae_asked_ms = clock_mono_ms();
		pd_count(digests_sent);
	}
	dcbor_buf_free(&b);
}

void
gossip_digest(struct member *m)
{
	send_digest(m);
}

/* Anti-entropy by --reconcile; the digest unless recon.c takes it. */
static void
ae_start(struct member *m, bool link_up)
{
	if (recon_start(m, link_up) == -1)
		send_digest(m);
}

static void
send_pull(struct member *m, const bool diff[GOSSIP_BUCKETS], bool final)
{
	struct dcbor_buf b;
	size_t ndiff = 0, nrec;
	bool more = false;

	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		ndiff += diff[i];
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "diff");
	dcbor_put_array(&b, ndiff);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		if (diff[i])
			dcbor_put_uint(&b, i);
	dcbor_put_cstr(&b, "more");
	{
		size_t at = b.len;

		dcbor_put_bool(&b, false);
		dcbor_put_cstr(&b, "recs");
		nrec = replica_put_records(&b, diff, GOSSIP_PULL_MAX, &more);
		if (more)
			b.data[at] = 0xf5;	/* true, same length */
	}
	dcbor_put_cstr(&b, "final");
	dcbor_put_bool(&b, final);
	if (link_send_member(m, FRAME_PULL_RESP, b.data, b.len) == 0) {
		pd_count(deltas_sent);
		pd_count_add(delta_entries, nrec);
	}
	dcbor_buf_free(&b);
}

static int
recv_digest(struct member *from, const uint8_t *body, size_t len)
{
	uint64_t mine[GOSSIP_BUCKETS], n, v;
	bool diff[GOSSIP_BUCKETS];
	struct dcbor_rd rd;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 1 ||
	    dcbor_get_key(&rd, "b") == -1 ||
	    dcbor_get_array(&rd, &n) == -1 || n != GOSSIP_BUCKETS)
		return -1;
	pd_count(digests_received);
	replica_digest(mine);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++) {
		if (dcbor_get_uint(&rd, &v) == -1)
			return -1;
		diff[i] = v != mine[i];
	}
	from->ae_answered_ms = clock_mono_ms();
	send_pull(from, diff, false);
	return 0;
}

static int
recv_pull(struct member *from, const uint8_t *body, size_t len)
{
	bool diff[GOSSIP_BUCKETS] = { false };
	bool final = false, more = false;
	struct dcbor_rd rd;
	uint64_t n, cnt, idx;
	uint64_t now = clock_mono_ms(), window = 10u * pd->conf.gossip_ms +
	    10000u;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 4)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *k;
		size_t kl;

		if (dcbor_get_text(&rd, &k, &kl) == -1)
			return -1;
		if (dcbor_text_is(k, kl, "diff")) {
			if (dcbor_get_array(&rd, &cnt) == -1 ||
			    cnt > GOSSIP_BUCKETS)
				return -1;
			for (uint64_t j = 0; j < cnt; j++) {
				if (dcbor_get_uint(&rd, &idx) == -1 ||
				    idx >= GOSSIP_BUCKETS)
					return -1;
				diff[idx] = true;
			}
		} else if (dcbor_text_is(k, kl, "more")) {
			if (dcbor_get_bool(&rd, &more) == -1)
				return -1;
		} else if (dcbor_text_is(k, kl, "recs")) {
			/* Accept deltas only from a peer we are talking to. */
			bool asked = from->ae_asked_ms != 0 &&
			    now - from->ae_asked_ms < window;
			bool answered = from->ae_answered_ms != 0 &&
			    now - from->ae_answered_ms < window;

			if (!asked && !answered) {
				pd_count_reject(UNASKED_DELTA);
				return 0;
			}
			pd_count(deltas_received);
			if (apply_items(from, &rd) == -1)
				return -1;
		} else if (dcbor_text_is(k, kl, "final")) {
			if (dcbor_get_bool(&rd, &final) == -1)
				return -1;
		} else
			return -1;
	}
	if (dcbor_left(&rd) != 0)
		return -1;
	if (final) {
		from->ae_answered_ms = 0;
		return 0;
	}
	from->ae_asked_ms = 0;
	send_pull(from, diff, true);
	if (more)
		send_digest(from);	/* there is more: go on at once */
	return 0;
}

/* ---- PING and ACK (view.c sends the pings) ------------------------------ */

static int
recv_ping(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	struct dcbor_rd rd;
	uint64_t n, seq = 0;
	uint8_t target[IDENTITY_ID_LEN];
	bool have_target = false;
	struct dcbor_buf b;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n < 1 || n > 2)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		char key[8];

		if (dcbor_get_cstr(&rd, key, sizeof(key)) == -1)
			return -1;
		if (strcmp(key, "seq") == 0) {
			if (dcbor_get_uint(&rd, &seq) == -1)
				return -1;
		} else if (strcmp(key, "target") == 0) {
			if (dcbor_get_fixed(&rd, target, sizeof(target)) == -1)
				return -1;
			have_target = true;
		} else
			return -1;
	}
	if (kind == FRAME_ACK) {
		struct member *t;

		if (have_target && (t = member_find(target)) != NULL)
			member_heard(t);
		else
			member_ack(from, seq);
		return 0;
	}
	if (kind == FRAME_PING_REQ) {
		struct member *t;

		if (!have_target)
			return -1;
		/* Vouch for the target only if we heard it recently. */
		t = member_find(target);
		if (t == NULL || t->last_heard_ms == 0 || clock_mono_ms() -
		    t->last_heard_ms >= pd->conf.ping_timeout_ms)
			return 0;
	}
	dcbor_buf_init(&b);
	dcbor_put_map(&b, have_target ? 2 : 1);
	dcbor_put_cstr(&b, "seq");
	dcbor_put_uint(&b, seq);
	if (have_target) {
		dcbor_put_cstr(&b, "target");
		dcbor_put_bytes(&b, target, sizeof(target));
	}
	link_send_member(from, FRAME_ACK, b.data, b.len);
	dcbor_buf_free(&b);
	return 0;
}

int
gossip_recv(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	switch (kind) {
	case FRAME_PING:
	case FRAME_PING_REQ:
	case FRAME_ACK:
		return recv_ping(from, kind, body, len);
	case FRAME_RUMOR:
		return recv_rumor(from, body, len);
	case FRAME_DIGEST:
		return recv_digest(from, body, len);
	case FRAME_PULL_RESP:
		return recv_pull(from, body, len);
	case FRAME_IHAVE:
		return recv_ihave(from, body, len);
	case FRAME_GRAFT:
		return recv_graft(from, body, len);
	case FRAME_PRUNE:
		return recv_prune(from, body, len);
	case FRAME_CLAIM_ACK:
		return take_recv_ack(from, body, len);
	case FRAME_CLAIM_ACK_RELAY:
		return take_recv_relay(from, body, len);
	case FRAME_RECON_NEG:
	case FRAME_RECON_SYMS:
	case FRAME_RECON_ACK:
	case FRAME_RECON_RECS:
	case FRAME_RECON_END:
		return recon_recv(from, kind, body, len);
	default:
		return 0;
	}
}

/* A link came up: advertise ourselves and catch up at once; went down. */
static void
gossip_link(struct member *m, bool up)
{
	if (up) {
		m->pt_lazy = false;	/* a new edge starts eager */
		m->pt_last_ms = 0;
		m->pt_first_ms = clock_mono_ms();
		ae_start(m, true);	/* catch up at once */
		return;
	}
	m->ae_asked_ms = 0;
	m->ae_answered_ms = 0;
	recon_link_down(m);
	m->pt_lazy = false;
	dcbor_buf_free(&m->pt_out);
	m->pt_nout = 0;
	m->pt_due_ms = 0;
	free(m->pt_ihave);
	m->pt_ihave = NULL;
	m->pt_nihave = 0;
}

/* The link-layer handler for every gossip kind. */
static int
gossip_frame(struct member *from, const struct frame *f, const char **why)
{
	if (gossip_recv(from, f->kind, f->body, f->body_len) == -1) {
		pd_count(bad_body);
		*why = "malformed frame body";
		return -1;
	}
	return 0;
}

size_t
gossip_tree_degree(void)
{
	size_t n = 0;

	for (size_t i = 0; i < member_count(); i++)
		n += member_at(i)->link != NULL && !member_at(i)->pt_lazy;
	return n;
}

void
gossip_tick(void)
{
	uint64_t now = clock_mono_ms();
	struct member *m;

	if (now - last_ae_ms < pd->conf.gossip_ms)
		return;
	last_ae_ms = now;
	if (member_pick_up(&m, 1, NULL) == 1)
		ae_start(m, false);
}

void
gossip_init(void)
{
	/* A fresh start forgets the rumors of a previous one (tests re-init). */
	memset(seen_ring, 0, sizeof(seen_ring));
	memset(seen_set, 0, sizeof(seen_set));
	seen_next = 0;
	dcbor_buf_init(&batch);
	batch_n = 0;
	flush_ev = event_new(pd->base, -1, 0, gossip_flush, NULL);
	eager_ev = event_new(pd->base, -1, 0, pt_eager_cb, NULL);
	lazy_ev = event_new(pd->base, -1, 0, pt_lazy_cb, NULL);
	graft_ev = event_new(pd->base, -1, 0, pt_graft_cb, NULL);
	nmissing = 0;
	cache_free();
	last_ae_ms = clock_mono_ms();
	link_register(FRAME_PING, gossip_frame);
	link_register(FRAME_PING_REQ, gossip_frame);
	link_register(FRAME_ACK, gossip_frame);
	link_register(FRAME_RUMOR, gossip_frame);
	link_register(FRAME_DIGEST, gossip_frame);
	link_register(FRAME_PULL_RESP, gossip_frame);
	link_register(FRAME_IHAVE, gossip_frame);
	link_register(FRAME_GRAFT, gossip_frame);
	link_register(FRAME_PRUNE, gossip_frame);
	link_register(FRAME_CLAIM_ACK, gossip_frame);
	link_register(FRAME_CLAIM_ACK_RELAY, gossip_frame);
	link_observe(gossip_link);
	link_register(FRAME_RECON_NEG, gossip_frame);
	link_register(FRAME_RECON_SYMS, gossip_frame);
	link_register(FRAME_RECON_ACK, gossip_frame);
	link_register(FRAME_RECON_RECS, gossip_frame);
	link_register(FRAME_RECON_END, gossip_frame);
	recon_init();
}

void
gossip_free(void)
{
	recon_free();
	dcbor_buf_free(&batch);
	if (flush_ev != NULL)
		event_free(flush_ev);
	if (eager_ev != NULL)
		event_free(eager_ev);
	if (lazy_ev != NULL)
		event_free(lazy_ev);
	if (graft_ev != NULL)
		event_free(graft_ev);
	flush_ev = eager_ev = lazy_ev = graft_ev = NULL;
	cache_free();
	nmissing = 0;
}

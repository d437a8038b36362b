/*
 * plumtree.c: Plumtree broadcast (Leitão, Pereira, Rodrigues, SRDS 2007)
 * with one tree per origin (docs/protocol.md section 7): rumors go in
 * full along the eager edges of their origin's tree and as ids along the
 * rest of the active view (within --lazy-ms, in an IHAVE or at the end of
 * a RUMOR frame going that way); a missing id GRAFTs, a duplicate PRUNEs,
 * a lost way in GRAFTs at once (when and to whom a missing id is GRAFTed
 * is graft.c's).  Rumors for one link within --batch-ms
 * leave in one frame.  gossip.c dispatches the
 * frames here and owns anti-entropy; the records are the replica's; the
 * seen ids and the rumors kept for GRAFTs are rumorset.c's.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "gossip.h"
#include "graft.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "plumtree.h"
#include "rumor.h"
#include "rumorset.h"
#include "stats.h"
#include "trace.h"
#include "view.h"
#include "wake.h"
#include "xmalloc.h"

static struct wake	*eager_wk, *lazy_wk;
static struct dcbor_buf	 batch;		/* queued records, concatenated */
static size_t		 batch_n;
static struct event	*flush_ev;

/* ---- Plumtree: eager rumors on tree edges, IHAVE on the rest ----------- */



/*
 * One broadcast tree per origin (the peer that started a rumor), as the
 * Plumtree implementations of Riak and Partisan keep eager and lazy sets
 * per root: a PRUNE for one writer's tree then never cuts another's.  The
 * origins seen lately get a slot each (GOSSIP_ORIGINS, least recently
 * used replaced); a member's pt_lazy and pt_pruned are bit masks over the
 * slots.  A slot given to a new origin starts eager everywhere.
 */
static struct origin {
	uint64_t	 origin;
	uint64_t	 used_ms;
	bool		 live;
	struct member	*first;		/* sent us its latest rumor first */
	struct member	*prev;		/* the one before (members stay) */
	uint64_t	 last_rid;	/* its latest rumor we hold */
} origins[GOSSIP_ORIGINS];

/*
 * An origin is in use while its rumors came within twice what a cut of its
 * tree costs a rumor (the IHAVE's wait and the GRAFT's): losing an edge of
 * a quiet origin's tree costs only its next rumor a repair, which a link
 * drop at rest may pay; inside a burst every rumor after the cut pays it.
 */
#define PT_BUSY_MS()	(2 * ((uint64_t)pd->conf.lazy_ms + pd->conf.graft_ms))


/* Our rumors' origin: our node, the first 8 bytes of our id. */
static uint64_t
self_origin(void)
{
	return pd->ident.node;
}

/* The slot of origin, or -1 when it has none. */
static int
origin_find(uint64_t origin)
{
	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++)
		if (origins[k].live && origins[k].origin == origin)
			return (int)k;
	return -1;
}

/* The slot of origin, taken (the least recently used one) if new. */
static unsigned
origin_slot(uint64_t origin)
{
	uint64_t now = clock_mono_ms();
	unsigned k, old = 0;

	for (k = 0; k < GOSSIP_ORIGINS; k++) {
		if (origins[k].live && origins[k].origin == origin) {
			origins[k].used_ms = now;
			return k;
		}
		if (!origins[k].live || (origins[old].live &&
		    origins[k].used_ms < origins[old].used_ms))
			old = k;
	}
	if (origins[old].live) {
		pd_count(push_origins_replaced);
		for (size_t i = 0; i < member_count(); i++) {
			member_at(i)->pt_lazy &= ~(1ull << old);
			member_at(i)->pt_pruned &= ~(1ull << old);
		}
	}
	memset(&origins[old], 0, sizeof(origins[old]));
	origins[old].origin = origin;
	origins[old].used_ms = now;
	origins[old].live = true;
	return old;
}

/* The map {key: [v...]}: IHAVE, GRAFT and PRUNE bodies. */
static void
uints_put(struct dcbor_buf *b, const char *key, const uint64_t *v, size_t n)
{
	dcbor_put_map(b, 1);
	dcbor_put_cstr(b, key);
	dcbor_put_array(b, n);
	for (size_t i = 0; i < n; i++)
		dcbor_put_uint(b, v[i]);
}

/* An IHAVE or GRAFT body, or a batch's ihave map: {"ids": [...]}. */
void
plumtree_ids_put(struct dcbor_buf *b, const uint64_t *ids, size_t n)
{
	uints_put(b, "ids", ids, n);
}

/*
 * Send what is queued for m: one rumor map, or an array of them.  The ids
 * waiting for m's next IHAVE ride along as the batch's last element (an
 * ihave map), so a link that carries rumors carries no IHAVE frames.
 */
static void	pt_lazy_arm(void);

/*
 * m's IHAVE queue (due at due_ms) was emptied without an IHAVE frame: if
 * the IHAVE timer waited for it, it waits for the next one instead (else
 * it would wake the peer for nothing).
 */
static void
pt_lazy_gone(uint64_t due_ms)
{
	uint64_t armed;

	if (wake_armed(lazy_wk, &armed) && armed == due_ms)
		pt_lazy_arm();
}

static void
pt_flush_member(struct member *m)
{
	struct dcbor_buf b;
	uint32_t nids = m->pt_nihave;

	if (m->pt_nout == 0)
		return;
	if (m->link != NULL) {
		if (m->pt_nout == 1 && nids == 0)
			link_send_member(m, FRAME_RUMOR, m->pt_out.data,
			    m->pt_out.len);
		else {
			dcbor_buf_init(&b);
			dcbor_put_array(&b, m->pt_nout + (nids > 0));
			dcbor_put_raw(&b, m->pt_out.data, m->pt_out.len);
			if (nids > 0)
				plumtree_ids_put(&b, m->pt_ihave, nids);
			link_send_member(m, FRAME_RUMOR, b.data, b.len);
			dcbor_buf_free(&b);
		}
		pd_count(rumors_sent);
		pd_count_add(push_eager, m->pt_nout);
		if (nids > 0) {
			pd_count_add(push_ihave_ids, nids);
			pd_count_add(push_ihave_piggybacked, nids);
			m->pt_nihave = 0;
			pt_lazy_gone(m->pt_ihave_due_ms);
		}
	}
	m->pt_last_ms = clock_mono_ms();
	dcbor_buf_reset(&m->pt_out);
	m->pt_nout = 0;
	m->pt_due_ms = 0;
}

/*
 * An IHAVE is due --lazy-ms after its first id.  It leaves at the first
 * wake-up from then on, within PT_IHAVE_LATE_MS (a quarter of --lazy-ms
 * or of --graft-ms, whichever is less: a repair is held a quarter of its
 * own wait at most), so while frames flow it rides their wake-ups; and up
 * to a quarter of --lazy-ms early in a wake-up of the timers' own
 * (another link's IHAVE, the tick), so a peer whose lazy links' first ids
 * came at different times wakes once for them, not once a link.  A
 * wake-up for a frame pulls none early: frames come often, and early
 * IHAVEs there only shorten each link's window (more IHAVE frames).
 * docs/protocol.md section 7.  The eager batch keeps its time.
 */
#define PT_IHAVE_EARLY_MS()	(pd->conf.lazy_ms / 4)
#define PT_IHAVE_LATE_MS()	((pd->conf.lazy_ms < pd->conf.graft_ms ? \
	pd->conf.lazy_ms : pd->conf.graft_ms) / 4)

static void
pt_eager_cb(void *arg)
{
	uint64_t now = clock_mono_ms(), next = 0;

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
		wake_at(eager_wk, next, 0, 0);
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

	/* Room is kept for the ihave map that may end the batch. */
	if (m->pt_out.len + len > pd->conf.max_frame / 2 ||
	    m->pt_nout == GOSSIP_RUMORS_MAX - 1)
		pt_flush_member(m);
	dcbor_put_raw(&m->pt_out, map, len);
	if (m->pt_nout++ > 0)
		return;
	due = m->pt_last_ms + pd->conf.batch_ms;
	m->pt_due_ms = due > now ? due : now;
	if (!wake_armed(eager_wk, &due) || m->pt_due_ms < due)
		wake_at(eager_wk, m->pt_due_ms, 0, 0);
}

/* An IHAVE or GRAFT body, {"ids": [...]}, to m. 0, or -1 (no link). */
static int
send_ids(struct member *m, uint32_t kind, const uint64_t *ids, size_t n)
{
	struct dcbor_buf b;
	int rc;

	dcbor_buf_init(&b);
	plumtree_ids_put(&b, ids, n);
	rc = link_send_member(m, kind, b.data, b.len);
	dcbor_buf_free(&b);
	return rc;
}

static void
pt_lazy_flush(struct member *m)
{
	if (m->pt_nihave == 0)
		return;
	if (m->link != NULL && send_ids(m, FRAME_IHAVE, m->pt_ihave,
	    m->pt_nihave) == 0) {
		pd_count(push_ihave_frames);
		pd_count_add(push_ihave_ids, m->pt_nihave);
	}
	m->pt_nihave = 0;
}

/* The IHAVE timer for the earliest IHAVE queued (none: disarmed). */
static void
pt_lazy_arm(void)
{
	uint64_t next = 0;

	for (size_t i = 0; i < member_count(); i++) {
		const struct member *m = member_at(i);

		if (m->pt_nihave != 0 &&
		    (next == 0 || m->pt_ihave_due_ms < next))
			next = m->pt_ihave_due_ms;
	}
	if (next != 0)
		wake_at(lazy_wk, next, PT_IHAVE_EARLY_MS(),
		    PT_IHAVE_LATE_MS());
	else
		wake_stop(lazy_wk);
}

/*
 * The IHAVEs due within their slack leave, together; the timer waits for
 * the next one.
 */
static void
pt_lazy_cb(void *arg)
{
	uint64_t until = clock_mono_ms() + (wake_fired() ?
	    PT_IHAVE_EARLY_MS() : 0);

	(void)arg;
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->pt_nihave != 0 && m->pt_ihave_due_ms <= until)
			pt_lazy_flush(m);
	}
	pt_lazy_arm();
}

/*
 * Announce rid to m's lazy edge: in an IHAVE --lazy-ms after the first id
 * queued for it, unless a RUMOR frame to m takes the ids along first.
 */
static void
pt_ihave(struct member *m, uint64_t rid)
{
	if (m->pt_ihave == NULL)
		m->pt_ihave = xcalloc(GOSSIP_IHAVE_MAX, sizeof(uint64_t));
	if (m->pt_nihave == GOSSIP_IHAVE_MAX)
		pt_lazy_flush(m);
	if (m->pt_nihave++ == 0) {
		m->pt_ihave_due_ms = clock_mono_ms() + pd->conf.lazy_ms;
		if (!wake_armed(lazy_wk, NULL))
			wake_at(lazy_wk, m->pt_ihave_due_ms,
			    PT_IHAVE_EARLY_MS(), PT_IHAVE_LATE_MS());
	}
	m->pt_ihave[m->pt_nihave - 1] = rid;
}

/*
 * m has rid (it sent or announced it to us): an announcement of rid still
 * queued for m would tell it nothing, and leaves the queue.
 */
static void
pt_ihave_drop(struct member *m, uint64_t rid)
{
	for (uint32_t i = 0; i < m->pt_nihave; i++)
		if (m->pt_ihave[i] == rid) {
			m->pt_ihave[i] = m->pt_ihave[--m->pt_nihave];
			pd_count(push_ihave_unsent);
			if (m->pt_nihave == 0)
				pt_lazy_gone(m->pt_ihave_due_ms);
			return;
		}
}

/* Whether m is one of the n members in has (they announced the id). */
static bool
member_in(const struct member *m, struct member *const *has, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (has[i] == m)
			return true;
	return false;
}

/*
 * Send a rumor on: the records on the edges of its origin's tree, its id
 * on the other links: all but from's and those of the n members in has,
 * which announced it to us before it came (they hold it).  On the urgent
 * lane (claims and completions, from their origin only) it goes in full
 * and at once on every link, tree edge or not, so it never waits for a
 * batch or a GRAFT.
 */
static void
pt_broadcast(uint64_t rid, uint64_t hops, uint64_t origin,
    const uint8_t *items, size_t len, const struct member *from,
    struct member *const *has, size_t nhas, bool urgent)
{
	unsigned k = origin_slot(origin);
	uint64_t bit = 1ull << k;
	struct dcbor_buf map;

	if (from == NULL)
		origins[k].last_rid = rid;
	dcbor_buf_init(&map);
	rumor_map_put(&map, rid, hops, origin, items, len);
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link == NULL || m == from)
			continue;
		if (urgent) {
			if (link_send_member_urgent(m, FRAME_RUMOR, map.data,
			    map.len) == 0) {
				pd_count(rumors_sent);
				pd_count(push_eager);
			}
		} else if (member_in(m, has, nhas))
			pd_count(push_ihave_unsent);
		else if (m->pt_lazy & bit)
			pt_ihave(m, rid);
		else
			pt_eager(m, map.data, map.len);
	}
	dcbor_buf_free(&map);
}

/* A PRUNE body: {"origins": [...]}. */
void
plumtree_prune_put(struct dcbor_buf *b, const uint64_t *origin, size_t n)
{
	uints_put(b, "origins", origin, n);
}

/* PRUNE the origins of the slots in mask: m pushes us their ids only. */
static void
send_prune(struct member *m, uint64_t mask)
{
	uint64_t named[GOSSIP_ORIGINS];
	struct dcbor_buf b;
	unsigned n = 0;

	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++)
		n += (mask >> k) & 1;
	if (n == 0)
		return;
	for (unsigned k = 0, i = 0; k < GOSSIP_ORIGINS; k++)
		if ((mask >> k) & 1)
			named[i++] = origins[k].origin;
	dcbor_buf_init(&b);
	plumtree_prune_put(&b, named, n);
	if (link_send_member(m, FRAME_PRUNE, b.data, b.len) == 0) {
		pd_count(push_prunes_sent);
		m->pt_pruned |= mask;
		m->pt_prune_ms = clock_mono_ms();
	}
	dcbor_buf_free(&b);
}

/*
 * A duplicate of a rumor of the origin in slot k came from m: whether to
 * prune m from that origin's tree.  Our own rumors need no way in.  Else
 * m is kept when it brought the origin's previous rumor first (it lost
 * one race, and is likely our path: two prunes racing along two paths
 * would otherwise cut both), and we keep one edge into the tree: m is
 * pruned only while another link we have not pruned for k remains
 * (copies that crossed a PRUNE in flight would otherwise cut the last
 * one, and the tree would mend only by GRAFT).  A PRUNE already sent is
 * repeated only after --graft-ms (m may have forgotten the origin, or the
 * frame crossed its GRAFT).
 */
static bool
prune_wanted(const struct member *m, unsigned k)
{
	uint64_t bit = 1ull << k;

	if (m->pt_pruned & bit)
		return clock_mono_ms() - m->pt_prune_ms >= pd->conf.graft_ms;
	if (origins[k].origin == self_origin())
		return true;
	if (origins[k].prev == m)
		return false;
	for (size_t i = 0; i < member_count(); i++) {
		const struct member *o = member_at(i);

		if (o != m && o->link != NULL && !(o->pt_pruned & bit))
			return true;
	}
	return false;
}

/*
 * Every member of a fleet of known size is on a direct link: an urgent
 * rumor sent on every link has then reached every member, and a forwarded
 * copy can only be a duplicate (one more RUMOR, IHAVE or PRUNE a claim).
 */
static bool
all_direct(void)
{
	size_t linked = 0;

	if (pd->conf.fleet_size <= 1)
		return false;
	for (size_t i = 0; i < member_count(); i++) {
		if (member_at(i)->link == NULL)
			return false;
		linked++;
	}
	return linked + 1 >= pd->conf.fleet_size;
}

/*
 * One rumor of n records (concatenated in recs) from this peer.  A bulk
 * rumor goes by Plumtree (eager edges, IHAVE on lazy ones); an urgent one
 * (a claim or a completion) goes at once, in full, on the urgent lane of
 * every link of the active view, tree edge or not, so it never waits behind
 * bulk records or for a GRAFT; its receivers forward it by Plumtree, but
 * for a full mesh's (all_direct), which goes one hop.
 */
static void
rumor_start(const uint8_t *recs, size_t len, size_t n, bool urgent)
{
	struct dcbor_buf items;
	uint64_t rid, origin = self_origin();
	/* A full mesh's urgent rumor goes one hop: nobody forwards it. */
	uint64_t hops = urgent && all_direct() ? 1 : pd->conf.hops;

	dcbor_buf_init(&items);
	dcbor_put_array(&items, n);
	dcbor_put_raw(&items, recs, len);
	rid = gossip_rid(items.data, items.len);
	rumorset_mark(rid);
	rumorset_keep(rid, hops, origin, items.data, items.len);
	pt_broadcast(rid, hops, origin, items.data, items.len, NULL, NULL, 0,
	    urgent);
	pd_count_add(records_batched, n);
	dcbor_buf_free(&items);
}

static void
pt_flush(evutil_socket_t fd, short ev, void *arg)
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
plumtree_send_urgent(const uint8_t *recs, size_t len, size_t n)
{
	rumor_start(recs, len, n, true);
}

void
plumtree_queue(const uint8_t *rec, size_t len)
{
	/* A batch stays well under the frame cap. */
	if (batch.len + len > pd->conf.max_frame / 4)
		pt_flush(-1, 0, NULL);
	dcbor_put_raw(&batch, rec, len);
	batch_n++;
	event_active(flush_ev, EV_TIMEOUT, 0);
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

/*
 * One rumor map.  A duplicate adds its origin's slot to *dup (the trees
 * from which to prune the sender); a first copy shows that the sender
 * pushes that origin to us eagerly.
 */
static int
recv_one_rumor(struct member *from, struct dcbor_rd *rd, uint64_t *dup)
{
	struct rumor_map rm;
	uint64_t rid, hops, origin;
	unsigned k;
	const uint8_t *items;
	size_t items_len;
	struct dcbor_rd ird;
	struct member *has[GOSSIP_MISSING_SRC];
	size_t nhas = 0;

	if (rumor_map_get(rd, &rm) == -1)
		return -1;
	rid = rm.rid;
	hops = rm.hops;
	origin = rm.origin;
	items = rm.items;
	items_len = rm.items_len;
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
	k = origin_slot(origin);
	if (rumorset_seen(rid)) {
		pd_count(duplicates_dropped);
		pd_count_add(push_duplicate_records,
		    items_count(items, items_len));
		graft_copy(rid, from);
		pt_ihave_drop(from, rid);
		*dup |= 1ull << k;
		return 0;
	}
	rumorset_mark(rid);
	origins[k].prev = origins[k].first;
	origins[k].first = from;
	origins[k].last_rid = rid;
	/* A copy that crossed our PRUNE in flight does not count. */
	if (clock_mono_ms() - from->pt_prune_ms >= pd->conf.graft_ms)
		from->pt_pruned &= ~(1ull << k);
	nhas = graft_arrived(rid, from, has, GOSSIP_MISSING_SRC);
	dcbor_rd_init(&ird, items, items_len);
	if (gossip_apply_items(from, &ird) == -1)
		return -1;
	if (hops > GOSSIP_HOPS_MAX)
		hops = GOSSIP_HOPS_MAX;
	if (hops > 1) {
		rumorset_keep(rid, hops - 1, origin, items, items_len);
		pt_broadcast(rid, hops - 1, origin, items, items_len, from,
		    has, nhas, false);
	}
	return 0;
}

/* One {"ids": [...]} map from rd (at most GOSSIP_IHAVE_MAX, none 0). */
static int
ids_get(struct dcbor_rd *rd, uint64_t *ids, size_t *n)
{
	uint64_t k, cnt;

	if (dcbor_get_map(rd, &k) == -1 || k != 1 ||
	    dcbor_get_key(rd, "ids") == -1 ||
	    dcbor_get_array(rd, &cnt) == -1 || cnt > GOSSIP_IHAVE_MAX)
		return -1;
	for (uint64_t i = 0; i < cnt; i++)
		if (dcbor_get_uint(rd, &ids[i]) == -1 || ids[i] == 0)
			return -1;
	*n = (size_t)cnt;
	return 0;
}

/* An IHAVE or GRAFT body: one ids map and nothing after it. */
static int
get_ids(const uint8_t *body, size_t len, uint64_t *ids, size_t *n)
{
	struct dcbor_rd rd;

	dcbor_rd_init(&rd, body, len);
	if (ids_get(&rd, ids, n) == -1)
		return -1;
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

/*
 * Announced ids: await those we lack, --graft-ms after an IHAVE frame.
 * Ids at the end of a RUMOR batch (riding) skipped the wait an IHAVE
 * would have had on the sender (up to --lazy-ms), and the eager copy is
 * given that time too: else piggybacking would shorten the GRAFT timeout
 * and GRAFT copies still on their way.
 */
static void
ids_announced(struct member *from, const uint64_t *ids, size_t n,
    bool riding)
{
	uint64_t wait = pd->conf.graft_ms + (riding ? pd->conf.lazy_ms : 0);

	for (size_t i = 0; i < n; i++) {
		if (!rumorset_seen(ids[i]))
			graft_announced(ids[i], from, wait);
		else
			pt_ihave_drop(from, ids[i]);
	}
}

/*
 * A RUMOR body is one rumor map or an array of them (a batch for one
 * link).  A duplicate answers PRUNE for the trees of its origins (after
 * prune_wanted), and the sender pushes those origins' ids only to us from
 * then on: one PRUNE frame for the whole batch.
 */
static int
recv_rumor(struct member *from, const uint8_t *body, size_t len)
{
	static uint64_t ids[GOSSIP_IHAVE_MAX];
	struct dcbor_rd rd;
	struct dcbor_item it;
	uint64_t n = 1;
	uint64_t dup = 0, prune = 0;
	size_t nids = 0;

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
	for (uint64_t i = 0; i < n; i++) {
		struct dcbor_rd peek = rd;

		/* A batch of two or more may end with one ihave map. */
		if (i > 0 && i == n - 1 && dcbor_next(&peek, &it) == 0 &&
		    it.type == DCBOR_MAP && it.u == 1) {
			if (ids_get(&rd, ids, &nids) == -1 || nids == 0)
				return -1;
		} else if (recv_one_rumor(from, &rd, &dup) == -1)
			return -1;
	}
	if (dcbor_left(&rd) != 0)
		return -1;
	for (unsigned k = 0; dup != 0 && k < GOSSIP_ORIGINS; k++)
		if (((dup >> k) & 1) && prune_wanted(from, k))
			prune |= 1ull << k;
	send_prune(from, prune);
	ids_announced(from, ids, nids, true);
	return 0;
}

static int
recv_ihave(struct member *from, const uint8_t *body, size_t len)
{
	static uint64_t ids[GOSSIP_IHAVE_MAX];
	size_t n;

	if (get_ids(body, len, ids, &n) == -1)
		return -1;
	ids_announced(from, ids, n, false);
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
	dcbor_buf_init(&map);
	for (size_t i = 0; i < n; i++) {
		const struct rumorset_rumor *c = rumorset_find(ids[i]);

		if (c == NULL) {
			lost = true;
			continue;
		}
		from->pt_lazy &= ~(1ull << origin_slot(c->origin));
		dcbor_buf_reset(&map);
		rumor_map_put(&map, c->rid, c->hops, c->origin, c->items, c->len);
		pt_eager(from, map.data, map.len);
		pd_count(push_grafts_answered);
	}
	dcbor_buf_free(&map);
	if (lost) {
		from->pt_lazy = 0;	/* whose tree is unknown: all eager */
		gossip_digest(from);	/* too old for the cache */
	}
	return 0;
}

/* A PRUNE: from takes only ids from us for the origins it names. */
static int
recv_prune(struct member *from, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t k, n, origin, mask = 0;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &k) == -1 || k != 1 ||
	    dcbor_get_key(&rd, "origins") == -1 ||
	    dcbor_get_array(&rd, &n) == -1 || n == 0 || n > GOSSIP_ORIGINS)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		int slot;

		if (dcbor_get_uint(&rd, &origin) == -1)
			return -1;
		/* A tree we do not hold has nothing to prune (no slot taken). */
		if ((slot = origin_find(origin)) != -1)
			mask |= 1ull << slot;
	}
	if (dcbor_left(&rd) != 0)
		return -1;
	from->pt_lazy |= mask;
	pd_count(push_prunes_received);
	return 0;
}

/*
 * m's link went down.  For each tree whose last way in it was (no other
 * link left that we have not pruned from it), GRAFT the tree's latest
 * rumor from another link at once: its answer is one duplicate, and that
 * link pushes the origin to us eagerly from then on.  Waiting for the next
 * rumor's IHAVE would cost --lazy-ms + --graft-ms of every tree that ran
 * through m (a view swap, a dead peer).
 */
static void
pt_link_lost(struct member *m)
{
	uint64_t ids[GOSSIP_ORIGINS], mask = 0;
	struct member *to = NULL;
	size_t n = 0;

	if (member_pick_up(&to, 1, m) != 1 || to == m)
		return;
	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++) {
		uint64_t bit = 1ull << k;
		bool other = false;

		if (!origins[k].live || origins[k].last_rid == 0 ||
		    (m->pt_pruned & bit) || origins[k].origin == self_origin())
			continue;
		for (size_t i = 0; i < member_count() && !other; i++) {
			const struct member *o = member_at(i);

			other = o != m && o->link != NULL &&
			    !(o->pt_pruned & bit);
		}
		if (other)
			continue;
		ids[n++] = origins[k].last_rid;
		mask |= bit;
	}
	if (n == 0)
		return;
	send_ids(to, FRAME_GRAFT, ids, n);
	pd_count(push_grafts_sent);
	pd_count_add(push_graft_ids, n);
	trace_add("push", "graft %zu trees from %s: the link to %s was their "
	    "last way in", n, to->name, m->name);
	to->pt_pruned &= ~mask;
}

double
plumtree_tree_degree(void)
{
	size_t n = 0, links = 0, norigins = 0;

	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++) {
		if (!origins[k].live)
			continue;
		norigins++;
		for (size_t i = 0; i < member_count(); i++)
			n += member_at(i)->link != NULL &&
			    !(member_at(i)->pt_lazy & 1ull << k);
	}
	for (size_t i = 0; i < member_count(); i++)
		links += member_at(i)->link != NULL;
	return norigins == 0 ? (double)links : (double)n / (double)norigins;
}

unsigned
plumtree_link_cost(const struct member *m)
{
	uint64_t now = clock_mono_ms(), busy = PT_BUSY_MS();
	unsigned n = 0;

	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++) {
		uint64_t bit = 1ull << k;

		if (origins[k].live && origins[k].last_rid != 0 &&
		    now - origins[k].used_ms < busy)
			n += !(m->pt_lazy & bit) + !(m->pt_pruned & bit);
	}
	return n;
}

/* A link to m came up (a new edge starts eager) or went down. */
void
plumtree_link(struct member *m, bool up)
{
	if (up) {
		m->pt_lazy = m->pt_pruned = 0;
		m->pt_last_ms = 0;
		return;
	}
	if (!pd->stopping)
		pt_link_lost(m);
	m->pt_lazy = m->pt_pruned = 0;
	dcbor_buf_free(&m->pt_out);
	m->pt_nout = 0;
	m->pt_due_ms = 0;
	free(m->pt_ihave);
	m->pt_ihave = NULL;
	if (m->pt_nihave != 0) {
		m->pt_nihave = 0;
		pt_lazy_gone(m->pt_ihave_due_ms);
	}
}

int
plumtree_recv(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	switch (kind) {
	case FRAME_RUMOR:
		return recv_rumor(from, body, len);
	case FRAME_IHAVE:
		return recv_ihave(from, body, len);
	case FRAME_GRAFT:
		return recv_graft(from, body, len);
	case FRAME_PRUNE:
		return recv_prune(from, body, len);
	default:
		return 0;
	}
}

void
plumtree_init(void)
{
	/* A fresh start forgets the rumors of a previous one (tests re-init). */
	rumorset_reset();
	dcbor_buf_init(&batch);
	batch_n = 0;
	flush_ev = event_new(pd->base, -1, 0, pt_flush, NULL);
	eager_wk = wake_new("eager", pt_eager_cb, NULL);
	lazy_wk = wake_new("ihave", pt_lazy_cb, NULL);
	memset(origins, 0, sizeof(origins));
	graft_init(send_ids);
	view_set_drop_cost(plumtree_link_cost);
}

void
plumtree_free(void)
{
	dcbor_buf_free(&batch);
	if (flush_ev != NULL)
		event_free(flush_ev);
	wake_free(eager_wk);
	wake_free(lazy_wk);
	flush_ev = NULL;
	eager_wk = lazy_wk = NULL;
	graft_free();
	rumorset_reset();
}

/*
 * plumtree.c: Plumtree broadcast (Leitão, Pereira, Rodrigues, SRDS 2007)
 * with one tree per origin (docs/protocol.md section 7): rumors go in
 * full along the eager edges of their origin's tree and as ids along the
 * rest of the active view (within --lazy-ms, in an IHAVE or at the end of
 * a RUMOR frame going that way); a missing id GRAFTs, a duplicate PRUNEs,
 * a lost way in GRAFTs at once.  Rumors for one link within --batch-ms
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
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "plumtree.h"
#include "rumorset.h"
#include "stats.h"
#include "trace.h"
#include "view.h"
#include "xmalloc.h"

#define GRAFT_WAITS	4	/* GRAFTs put off while behind the input */
#define LAG_SAMPLES	64	/* eager copies' lags kept for the GRAFT wait */
#define LAG_MAX		8	/* the wait is at most this x --graft-ms */
#define GRAFTED_KEEP	256	/* grafted ids remembered to spot a late copy */

static struct dcbor_buf	 batch;		/* queued records, concatenated */
static size_t		 batch_n;
static struct event	*flush_ev;

/* ---- Plumtree: eager rumors on tree edges, IHAVE on the rest ----------- */


/* Ids announced by IHAVE and not yet received: GRAFT when overdue. */
struct missing {
	uint64_t	 rid;
	uint64_t	 due_ms;
	struct member	*src[GOSSIP_MISSING_SRC];
	uint32_t	 nsrc;
	uint32_t	 waits;		/* put off while behind its input */
	uint64_t	 first_ms;	/* its first announcement came then */
	uint64_t	 graft_ms;	/* our last GRAFT for it, 0 none */
	struct member	*asked[GOSSIP_MISSING_SRC];	/* GRAFTed from */
	uint32_t	 nasked;
	bool		 ask;		/* in this turn's GRAFT to asked[last] */
};

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

static struct missing	 missing[GOSSIP_MISSING];
static size_t		 nmissing;
static struct event	*eager_ev, *lazy_ev, *graft_ev;
static uint64_t		 graft_armed_ms;	/* graft_ev fires then */

/*
 * The GRAFT wait follows the eager copies' measured lag: for an id that
 * was announced before its eager copy came, the time from the first
 * announcement to that copy (a GRAFT's own answer is no sample).  The
 * last LAG_SAMPLES lags of the last 20 x --graft-ms are kept; an id is
 * GRAFTed after --graft-ms or, when longer, 1.5 x their 90th percentile
 * (at most LAG_MAX x --graft-ms).  On a loaded host the eager path slows
 * down and the wait with it, instead of every late copy costing a GRAFT,
 * its answer and the PRUNE of the duplicate.
 */
static struct lag {
	uint64_t	 at_ms;
	uint64_t	 ms;
} lags[LAG_SAMPLES];
static size_t		 lag_next;
static uint64_t		 lag_wait_ms, lag_calc_ms;
static bool		 lag_dirty;

/*
 * Ids GRAFTed and then answered, or given up on (nobody left to ask): a
 * ring, so that an eager copy coming after that still counts as late.
 */
static struct grafted {
	uint64_t	 rid;
	uint64_t	 first_ms;
	struct member	*to;
} grafted[GRAFTED_KEEP];
static size_t		 grafted_next;

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

/* A rumor map (docs/protocol.md section 7) appended to b. */
static void
rumor_put(struct dcbor_buf *b, uint64_t rid, uint64_t hops, uint64_t origin,
    const uint8_t *items, size_t len)
{
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "rid");
	dcbor_put_uint(b, rid);
	dcbor_put_cstr(b, "hops");
	dcbor_put_uint(b, hops);
	dcbor_put_cstr(b, "items");
	dcbor_put_raw(b, items, len);
	dcbor_put_cstr(b, "origin");
	dcbor_put_uint(b, origin);
}

/* An IHAVE or GRAFT body, or a batch's ihave map: {"ids": [...]}. */
static void
ids_put(struct dcbor_buf *b, const uint64_t *ids, size_t n)
{
	dcbor_put_map(b, 1);
	dcbor_put_cstr(b, "ids");
	dcbor_put_array(b, n);
	for (size_t i = 0; i < n; i++)
		dcbor_put_uint(b, ids[i]);
}

/*
 * Send what is queued for m: one rumor map, or an array of them.  The ids
 * waiting for m's next IHAVE ride along as the batch's last element (an
 * ihave map), so a link that carries rumors carries no IHAVE frames.
 */
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
				ids_put(&b, m->pt_ihave, nids);
			link_send_member(m, FRAME_RUMOR, b.data, b.len);
			dcbor_buf_free(&b);
		}
		pd_count(rumors_sent);
		pd_count_add(push_eager, m->pt_nout);
		if (nids > 0) {
			pd_count_add(push_ihave_ids, nids);
			pd_count_add(push_ihave_piggybacked, nids);
			m->pt_nihave = 0;
		}
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

	/* Room is kept for the ihave map that may end the batch. */
	if (m->pt_out.len + len > pd->conf.max_frame / 2 ||
	    m->pt_nout == GOSSIP_RUMORS_MAX - 1)
		pt_flush_member(m);
	dcbor_put_raw(&m->pt_out, map, len);
	if (m->pt_nout++ > 0)
		return;
	due = m->pt_last_ms + pd->conf.batch_ms;
	m->pt_due_ms = due > now ? due : now;
	if (!event_pending(eager_ev, EV_TIMEOUT, NULL) || m->pt_due_ms <= now)
		pt_arm(eager_ev, m->pt_due_ms);
}

/* An IHAVE or GRAFT body, {"ids": [...]}, to m. 0, or -1 (no link). */
static int
send_ids(struct member *m, uint32_t kind, const uint64_t *ids, size_t n)
{
	struct dcbor_buf b;
	int rc;

	dcbor_buf_init(&b);
	ids_put(&b, ids, n);
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

/* The IHAVEs that are due leave; the timer waits for the next one. */
static void
pt_lazy_cb(evutil_socket_t fd, short ev, void *arg)
{
	uint64_t now = clock_mono_ms(), next = 0;

	(void)fd;
	(void)ev;
	(void)arg;
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->pt_nihave == 0)
			continue;
		if (m->pt_ihave_due_ms <= now)
			pt_lazy_flush(m);
		else if (next == 0 || m->pt_ihave_due_ms < next)
			next = m->pt_ihave_due_ms;
	}
	if (next != 0)
		pt_arm(lazy_ev, next);
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
		if (!event_pending(lazy_ev, EV_TIMEOUT, NULL))
			pt_arm(lazy_ev, m->pt_ihave_due_ms);
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
	rumor_put(&map, rid, hops, origin, items, len);
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

/* PRUNE the origins of the slots in mask: m pushes us their ids only. */
static void
send_prune(struct member *m, uint64_t mask)
{
	struct dcbor_buf b;
	unsigned n = 0;

	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++)
		n += (mask >> k) & 1;
	if (n == 0)
		return;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "origins");
	dcbor_put_array(&b, n);
	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++)
		if ((mask >> k) & 1)
			dcbor_put_uint(&b, origins[k].origin);
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

/* The graft timer for due_ms, unless it fires sooner already. */
static void
graft_arm(uint64_t due_ms)
{
	if (event_pending(graft_ev, EV_TIMEOUT, NULL) &&
	    graft_armed_ms <= due_ms)
		return;
	graft_armed_ms = due_ms;
	pt_arm(graft_ev, due_ms);
}

/* One eager copy's lag behind its first announcement. */
static void
lag_add(uint64_t ms)
{
	lags[lag_next].at_ms = clock_mono_ms();
	lags[lag_next].ms = ms;
	lag_next = (lag_next + 1) % LAG_SAMPLES;
	lag_dirty = true;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The wait the eager copies' recent lags ask for (0: none recent). */
static uint64_t
lag_wait(void)
{
	uint64_t now = clock_mono_ms(), v[LAG_SAMPLES], max;
	uint64_t horizon = 20u * (uint64_t)pd->conf.graft_ms;
	size_t n = 0;

	/* Recomputed on a new sample, or when samples may have aged out. */
	if (!lag_dirty && now - lag_calc_ms < pd->conf.graft_ms)
		return lag_wait_ms;
	for (size_t i = 0; i < LAG_SAMPLES; i++)
		if (lags[i].at_ms != 0 && now - lags[i].at_ms <= horizon)
			v[n++] = lags[i].ms;
	lag_wait_ms = 0;
	if (n > 0) {
		qsort(v, n, sizeof(v[0]), u64_cmp);
		lag_wait_ms = v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
		lag_wait_ms += lag_wait_ms / 2;
		max = (uint64_t)LAG_MAX * pd->conf.graft_ms;
		if (lag_wait_ms > max)
			lag_wait_ms = max;
	}
	lag_calc_ms = now;
	lag_dirty = false;
	return lag_wait_ms;
}

/* Remember GRAFTed id x, last asked from m, for its late copy. */
static void
grafted_add(const struct missing *x, struct member *m)
{
	grafted[grafted_next].rid = x->rid;
	grafted[grafted_next].first_ms = x->first_ms;
	grafted[grafted_next].to = m;
	grafted_next = (grafted_next + 1) % GRAFTED_KEEP;
}

/*
 * The first copy of an id we were awaiting came from m.  A copy from
 * another link than the one we GRAFTed was late, not lost (the GRAFT was
 * for nothing); any copy but the GRAFT's answer is a lag sample.
 */
static void
missing_arrived(struct missing *x, struct member *m)
{
	uint64_t now = clock_mono_ms();

	for (uint32_t i = 0; i < x->nasked; i++) {
		if (x->asked[i] != m)
			continue;
		grafted_add(x, m);
		return;
	}
	if (x->nasked > 0) {
		pd_count(push_grafts_late);
		trace_add("push", "late %016llx from %s %llu ms after its "
		    "first announcement, %llu after its graft",
		    (unsigned long long)x->rid, m->name,
		    (unsigned long long)(now - x->first_ms),
		    (unsigned long long)(now - x->graft_ms));
	}
	lag_add(now - x->first_ms);
}

/*
 * A copy of rid from m, a duplicate or a first one we no longer awaited:
 * when we GRAFTed rid from another link, this is the eager copy, late.
 */
static void
grafted_copy(uint64_t rid, const struct member *m)
{
	for (size_t i = 0; i < GRAFTED_KEEP; i++) {
		struct grafted *g = &grafted[i];

		if (g->rid != rid)
			continue;
		if (g->to != m) {
			pd_count(push_grafts_late);
			trace_add("push", "late %016llx from %s %llu ms after "
			    "its first announcement, after its graft ended",
			    (unsigned long long)rid, m->name,
			    (unsigned long long)(clock_mono_ms() - g->first_ms));
			lag_add(clock_mono_ms() - g->first_ms);
			g->rid = 0;	/* one sample an id */
		}
		return;
	}
}

/*
 * An announced id we lack: GRAFT from its first announcer when overdue,
 * wait_ms from now or the eager copies' recent lag, whichever is longer
 * (the first announcement sets it).
 */
static void
missing_add(uint64_t rid, struct member *from, uint64_t wait_ms)
{
	struct missing *x = missing_find(rid);

	if (x == NULL) {
		uint64_t lag = lag_wait();

		if (nmissing == GOSSIP_MISSING) {
			pd_count(push_missing_dropped);
			return;		/* anti-entropy will bring it */
		}
		x = &missing[nmissing++];
		memset(x, 0, sizeof(*x));
		x->rid = rid;
		x->first_ms = clock_mono_ms();
		x->due_ms = x->first_ms + (lag > wait_ms ? lag : wait_ms);
	}
	for (uint32_t i = 0; i < x->nsrc; i++)
		if (x->src[i] == from)
			return;
	if (x->nsrc < GOSSIP_MISSING_SRC)
		x->src[x->nsrc++] = from;
	graft_arm(x->due_ms);
}

/*
 * The ids due this turn leave in one GRAFT frame per announcer (m pushes
 * their origins to us eagerly from then on: the tree mends).  A tree cut
 * while its writer is busy leaves every id announced during the
 * --lazy-ms + --graft-ms of the repair missing at once; a frame for each
 * cost a GRAFT and an answer per id (at 64 peers, hundreds per run).
 */
static void
graft_send(uint64_t now)
{
	static uint64_t ids[GOSSIP_IHAVE_MAX];

	for (size_t i = 0; i < nmissing; ) {
		struct member *m;
		uint64_t first_ms;
		size_t n = 0;

		if (!missing[i].ask) {
			i++;		/* (else: more than a frame for m) */
			continue;
		}
		m = missing[i].asked[missing[i].nasked - 1];
		first_ms = missing[i].first_ms;
		for (size_t j = i; j < nmissing; j++) {
			struct missing *x = &missing[j];

			if (!x->ask || x->asked[x->nasked - 1] != m)
				continue;
			x->ask = false;
			ids[n++] = x->rid;
			if (x->first_ms < first_ms)
				first_ms = x->first_ms;
			if (n == GOSSIP_IHAVE_MAX)
				break;
		}
		send_ids(m, FRAME_GRAFT, ids, n);
		pd_count(push_grafts_sent);
		pd_count_add(push_graft_ids, n);
		trace_add("push", "graft %016llx and %zu more to %s %llu ms "
		    "after the first one's announcement",
		    (unsigned long long)ids[0], n - 1, m->name,
		    (unsigned long long)(now - first_ms));
	}
}

static void
pt_graft_cb(evutil_socket_t fd, short ev, void *arg)
{
	uint64_t now = clock_mono_ms(), next = 0;
	int behind = -1;	/* link_rx_backlog(), asked once a turn */

	(void)fd;
	(void)ev;
	(void)arg;
	for (size_t i = 0; i < nmissing; ) {
		struct missing *x = &missing[i];
		struct member *m = NULL;

		if (rumorset_seen(x->rid)) {
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
			if (x->nasked > 0)
				grafted_add(x, x->asked[x->nasked - 1]);
			missing_del(x);	/* nobody left: anti-entropy */
			continue;
		}
		/*
		 * Behind its own input (a loaded host), the eager copy may be
		 * among the bytes not read yet: a GRAFT now would turn a lazy
		 * edge eager for nothing and add to the load.  Put it off, a
		 * quarter period at a time, at most GRAFT_WAITS times.
		 */
		if (x->waits < GRAFT_WAITS && behind == -1)
			behind = link_rx_backlog();
		if (x->waits < GRAFT_WAITS && behind == 1) {
			x->waits++;
			/* m stays the next to ask. */
			memmove(&x->src[1], &x->src[0],
			    x->nsrc * sizeof(x->src[0]));
			x->src[0] = m;
			x->nsrc++;
			pd_count(push_grafts_put_off);
			x->due_ms = now + pd->conf.graft_ms / 4 + 1;
			if (next == 0 || x->due_ms < next)
				next = x->due_ms;
			i++;
			continue;
		}
		/* Asked below, with the turn's other ids for m. */
		x->ask = true;
		x->graft_ms = now;
		if (x->nasked < GOSSIP_MISSING_SRC)
			x->asked[x->nasked++] = m;
		else
			x->asked[x->nasked - 1] = m;
		x->due_ms = now + pd->conf.graft_ms;
		if (next == 0 || x->due_ms < next)
			next = x->due_ms;
		i++;
	}
	graft_send(now);
	if (next != 0)
		graft_arm(next);
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
	uint64_t rid, hops, origin;
	unsigned k;
	const uint8_t *items;
	size_t items_len;
	struct dcbor_rd ird;
	struct missing *x;
	struct member *has[GOSSIP_MISSING_SRC];
	size_t nhas = 0;
	uint64_t n;

	if (dcbor_get_map(rd, &n) == -1 || n != 4 ||
	    dcbor_get_key(rd, "rid") == -1 || dcbor_get_uint(rd, &rid) == -1 ||
	    dcbor_get_key(rd, "hops") == -1 ||
	    dcbor_get_uint(rd, &hops) == -1 ||
	    dcbor_get_key(rd, "items") == -1 ||
	    dcbor_get_raw(rd, &items, &items_len) == -1 || rid == 0 ||
	    dcbor_get_key(rd, "origin") == -1 ||
	    dcbor_get_uint(rd, &origin) == -1)
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
	k = origin_slot(origin);
	if (rumorset_seen(rid)) {
		pd_count(duplicates_dropped);
		pd_count_add(push_duplicate_records,
		    items_count(items, items_len));
		grafted_copy(rid, from);
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
	if ((x = missing_find(rid)) != NULL) {
		missing_arrived(x, from);
		nhas = x->nsrc;
		memcpy(has, x->src, nhas * sizeof(*has));
		missing_del(x);
	} else
		grafted_copy(rid, from);
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
			missing_add(ids[i], from, wait);
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
		rumor_put(&map, c->rid, c->hops, c->origin, c->items, c->len);
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
	unsigned n = 0;

	for (unsigned k = 0; k < GOSSIP_ORIGINS; k++) {
		uint64_t bit = 1ull << k;

		if (origins[k].live && origins[k].last_rid != 0)
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
	m->pt_nihave = 0;
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
	eager_ev = event_new(pd->base, -1, 0, pt_eager_cb, NULL);
	lazy_ev = event_new(pd->base, -1, 0, pt_lazy_cb, NULL);
	graft_ev = event_new(pd->base, -1, 0, pt_graft_cb, NULL);
	nmissing = 0;
	memset(origins, 0, sizeof(origins));
	memset(lags, 0, sizeof(lags));
	lag_next = 0;
	lag_wait_ms = lag_calc_ms = 0;
	lag_dirty = false;
	memset(grafted, 0, sizeof(grafted));
	grafted_next = 0;
	view_set_drop_cost(plumtree_link_cost);
}

void
plumtree_free(void)
{
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
	rumorset_reset();
	nmissing = 0;
}

/*
 * graft.c: Plumtree's repair of a tree (docs/protocol.md section 7): an
 * id announced on a lazy edge and not received in time is GRAFTed from
 * its announcers in turn, the ids due in one loop turn in one GRAFT frame
 * per announcer; the wait follows the eager copies' measured lag, and is
 * put off while the peer is behind its own input.  Late eager copies of
 * GRAFTed ids are counted (push.grafts_late) and are lag samples too.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frame.h"
#include "plumtree.h"
#include "graft.h"
#include "link.h"
#include "member.h"
#include "peerd.h"
#include "rumorset.h"
#include "stats.h"
#include "trace.h"
#include "wake.h"

#define GRAFT_WAITS	4	/* GRAFTs put off while behind the input */
#define LAG_SAMPLES	64	/* eager copies' lags kept for the GRAFT wait */
#define LAG_MAX		8	/* the wait is at most this x --graft-ms */
#define GRAFTED_KEEP	256	/* grafted ids remembered to spot a late copy */

/* Ids announced by IHAVE and not yet received: GRAFT when overdue. */
struct missing {
	uint64_t	 rid;
	uint64_t	 due_ms;
	struct member	*src[PLUMTREE_MISSING_SRC];
	uint32_t	 nsrc;
	uint32_t	 waits;		/* put off while behind its input */
	uint64_t	 first_ms;	/* its first announcement came then */
	uint64_t	 graft_ms;	/* our last GRAFT for it, 0 none */
	struct member	*asked[PLUMTREE_MISSING_SRC];	/* GRAFTed from */
	uint32_t	 nasked;
	bool		 ask;		/* in this turn's GRAFT to asked[last] */
};

static struct missing	 missing[PLUMTREE_MISSING];
static size_t		 nmissing;
static struct wake	*graft_wk;
static graft_send_fn	 send_ids;

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
/*
 * How many ring entries hash to each bucket: graft_copy runs for every
 * rumor a peer receives, and nearly every rid is in no entry, so a zero
 * bucket answers without the scan of the whole ring.
 */
#define GRAFTED_BUCKETS	1024	/* a power of two */
static uint16_t		 grafted_count[GRAFTED_BUCKETS];

static uint16_t *
grafted_bucket(uint64_t rid)
{
	return &grafted_count[(rid >> 1) & (GRAFTED_BUCKETS - 1)];
}

/* Empty ring entry g (its rid no longer spots a late copy). */
static void
grafted_clear(struct grafted *g)
{
	if (g->rid != 0)
		(*grafted_bucket(g->rid))--;
	g->rid = 0;
}

static void	graft_cb(void *);

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

/*
 * The graft timer for due_ms, unless it fires sooner already.  A GRAFT
 * keeps its time (no slack: early would GRAFT copies still on their way,
 * late would hold a repair), but other timers' slack may join its wake-up.
 */
static void
graft_arm(uint64_t due_ms)
{
	uint64_t armed;

	if (wake_armed(graft_wk, &armed) && armed <= due_ms)
		return;
	wake_at(graft_wk, due_ms, 0, 0);
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
	grafted_clear(&grafted[grafted_next]);
	grafted[grafted_next].rid = x->rid;
	(*grafted_bucket(x->rid))++;
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
void
graft_copy(uint64_t rid, const struct member *m)
{
	if (*grafted_bucket(rid) == 0)
		return;
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
			grafted_clear(g);	/* one sample an id */
		}
		return;
	}
}

/* The first announcement sets the wait (graft.h). */
void
graft_announced(uint64_t rid, struct member *from, uint64_t wait_ms)
{
	struct missing *x = missing_find(rid);

	if (x == NULL) {
		uint64_t lag = lag_wait();

		if (nmissing == PLUMTREE_MISSING) {
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
	if (x->nsrc < PLUMTREE_MISSING_SRC)
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
	static uint64_t ids[PLUMTREE_IHAVE_MAX];

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
			if (n == PLUMTREE_IHAVE_MAX)
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
graft_cb(void *arg)
{
	uint64_t now = clock_mono_ms(), next = 0;
	int behind = -1;	/* link_rx_backlog(), asked once a turn */

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
		if (x->nasked < PLUMTREE_MISSING_SRC)
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

size_t
graft_arrived(uint64_t rid, struct member *from, struct member **has,
    size_t max)
{
	struct missing *x = missing_find(rid);
	size_t n;

	if (x == NULL) {
		graft_copy(rid, from);
		return 0;
	}
	missing_arrived(x, from);
	n = x->nsrc < max ? x->nsrc : max;
	memcpy(has, x->src, n * sizeof(*has));
	missing_del(x);
	if (nmissing == 0)
		wake_stop(graft_wk);	/* nothing left to wake for */
	return n;
}

void
graft_init(graft_send_fn send)
{
	if (graft_wk == NULL)
		graft_wk = wake_new("graft", graft_cb, NULL);
	send_ids = send;
	nmissing = 0;
	memset(lags, 0, sizeof(lags));
	lag_next = 0;
	lag_wait_ms = lag_calc_ms = 0;
	lag_dirty = false;
	memset(grafted, 0, sizeof(grafted));
	memset(grafted_count, 0, sizeof(grafted_count));
	grafted_next = 0;
}

void
graft_free(void)
{
	wake_free(graft_wk);
	graft_wk = NULL;
	nmissing = 0;
}

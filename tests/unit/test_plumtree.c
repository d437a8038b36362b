/*
 * test_plumtree.c: the broadcast trees of plumtree.c against three
 * neighbours played by the test.  The link layer is fake_link.h's and the
 * store fake_store.h's (so neither link.c nor replica.c is linked, and
 * replica_init is never called): a member "has a link" when its pointer is
 * set, every frame plumtree.c sends is captured, and the records a rumor
 * brings are merged unverified and counted.  What it shows: a rumor
 * goes eagerly to every neighbour but the one it came from; a duplicate
 * answers PRUNE for its origin's tree at once, but never for the last
 * link into that tree; a PRUNE turns that edge lazy (IHAVE only) for that
 * origin only; an IHAVE'd id that does not arrive is GRAFTed from its
 * announcer; a GRAFT is answered with the records and turns the edge
 * eager again; a neighbour's link lost is routed around.  Each rumor
 * carries one real signed record and the rid plumtree.c requires for it
 * (rumor_rid of its items: record_util.h); the tests name rumors by a small number and
 * give each an origin (the writer that started it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <event2/event.h>

#include "clock.h"
#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "plumtree.h"
#include "replica.h"
#include "rumor.h"
#include "stats.h"
#include "trace.h"
#include "view.h"

#include "peerd_stub.h"

#include "fake_link.h"
#include "fake_store.h"
#include "record_util.h"

/* ---- helpers ------------------------------------------------------------ */

static struct member *a, *b, *c;

/* Two writers somewhere in the fleet, and rumors' default origin. */
#define ORIGIN_X	0x1111111111111111ull
#define ORIGIN_Y	0x2222222222222222ull

static struct member *
neighbour(uint8_t idb, const char *name, size_t slot)
{
	uint8_t id[IDENTITY_ID_LEN];
	struct member *m;

	memset(id, idb, sizeof(id));
	m = member_get(id, name, "127.0.0.1:1");
	fake_link_up(m, slot);
	return m;
}

static void
setup(void)
{
	stub_conf();
	pd->conf.graft_ms = 20;
	pd->conf.lazy_ms = 10;
	pd->conf.batch_ms = 0;
	pd->conf.gossip_ms = 3600000;	/* no anti-entropy in the way */
	stub_daemon("test_plumtree");
	fake_link_reset();
	fake_store_init();		/* no replica_init: the fake store */
	plumtree_init();		/* its link observer */
	a = neighbour(0xaa, "a", 0);
	b = neighbour(0xbb, "b", 1);
	c = neighbour(0xcc, "c", 2);
	fake_link_clear();		/* forget the link-up digests */
}

static void
teardown(void)
{
	plumtree_free();
	stub_free();
	fake_link_reset();
}

/* Let the loop run for ms (the batch, lazy and graft timers fire). */
static void
run_for(unsigned ms)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t end = clock_mono_ms() + ms;

	do {
		event_base_loop(pd->base, EVLOOP_NONBLOCK);
		nanosleep(&ts, NULL);
	} while (clock_mono_ms() < end);
	event_base_loop(pd->base, EVLOOP_NONBLOCK);
}

/* The rid of rumor n. */
static uint64_t
rid_of(uint32_t n)
{
	struct dcbor_buf items;
	uint64_t rid;

	items_for(&items, n);
	rid = rumor_rid(items.data, items.len);
	dcbor_buf_free(&items);
	return rid;
}

/* Rumor n, started by origin, as one rumor map, appended to buf. */
static void
put_rumor_from(struct dcbor_buf *buf, uint32_t n, uint64_t origin)
{
	struct dcbor_buf items;

	items_for(&items, n);
	dcbor_put_map(buf, 4);
	dcbor_put_cstr(buf, "rid");
	dcbor_put_uint(buf, rumor_rid(items.data, items.len));
	dcbor_put_cstr(buf, "hops");
	dcbor_put_uint(buf, 8);
	dcbor_put_cstr(buf, "items");
	dcbor_put_raw(buf, items.data, items.len);
	dcbor_put_cstr(buf, "origin");
	dcbor_put_uint(buf, origin);
	dcbor_buf_free(&items);
}

static void
put_rumor(struct dcbor_buf *buf, uint32_t n)
{
	put_rumor_from(buf, n, ORIGIN_X);
}

/* A RUMOR body: rumor n alone, from origin. */
static void
rumor_from(struct dcbor_buf *buf, uint32_t n, uint64_t origin)
{
	dcbor_buf_init(buf);
	put_rumor_from(buf, n, origin);
}

static void
rumor(struct dcbor_buf *buf, uint32_t n)
{
	rumor_from(buf, n, ORIGIN_X);
}

/* A PRUNE body naming one origin. */
static void
prune(struct dcbor_buf *buf, uint64_t origin)
{
	dcbor_buf_init(buf);
	dcbor_put_map(buf, 1);
	dcbor_put_cstr(buf, "origins");
	dcbor_put_array(buf, 1);
	dcbor_put_uint(buf, origin);
}

static void
ids(struct dcbor_buf *buf, uint64_t rid)
{
	dcbor_buf_init(buf);
	dcbor_put_map(buf, 1);
	dcbor_put_cstr(buf, "ids");
	dcbor_put_array(buf, 1);
	dcbor_put_uint(buf, rid);
}

static void
recv_kind(struct member *from, uint32_t kind, struct dcbor_buf *buf)
{
	ck_assert_int_eq(plumtree_recv(from, kind, buf->data, buf->len), 0);
	dcbor_buf_free(buf);
}

/* How many frames of kind went to m, and whether one carries rid. */
static size_t
sent_to(const struct member *m, uint32_t kind, uint64_t rid, bool *has)
{
	struct dcbor_buf enc;
	size_t n = 0;

	dcbor_buf_init(&enc);
	dcbor_put_uint(&enc, rid);
	*has = false;
	ck_assert_uint_eq(fake_overflow, 0);
	for (size_t i = 0; i < fake_nsent; i++) {
		const struct fake_sent *x = &fake_sent[i];

		if (x->to != m || x->kind != kind)
			continue;
		n++;
		if (x->len >= enc.len && memmem(x->body, x->len, enc.data,
		    enc.len) != NULL)
			*has = true;
	}
	dcbor_buf_free(&enc);
	return n;
}

/* ---- the tests ---------------------------------------------------------- */

START_TEST(eager_then_prune_then_lazy)
{
	struct dcbor_buf buf;
	bool has;

	/* From b: forwarded eagerly to a and c, never back to b. */
	rumor(&buf, 0x1001);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x1001), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(c, FRAME_RUMOR, rid_of(0x1001), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(b, FRAME_RUMOR, rid_of(0x1001), &has), 0);
	ck_assert(plumtree_tree_degree() == 3.0);
	/* Its rid names its items, and its one record was taken. */
	ck_assert_uint_eq(pd_metrics.rumors_bad_rid, 0);
	ck_assert_uint_eq(pd_metrics.records_received, 1);
	ck_assert_uint_eq(pd_metrics.entries_bad_signature, 0);
	ck_assert_uint_eq(pd_metrics.records_refused, 0);

	/*
	 * The copy from a comes second: a is pruned from X's tree at once,
	 * though it just joined (the old rule waited 4 x --graft-ms of a
	 * delivering nothing first, which one writer never gives it).
	 */
	rumor(&buf, 0x1001);
	recv_kind(a, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(a, FRAME_PRUNE, ORIGIN_X, &has), 1);
	ck_assert(has);
	/* And c's copy: c too.  b stays, our one way into X's tree. */
	rumor(&buf, 0x1001);
	recv_kind(c, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(c, FRAME_PRUNE, ORIGIN_X, &has), 1);
	ck_assert_uint_eq(pd_metrics.push_prunes_sent, 2);
	/* The two copies after the first, one record each, are duplicates. */
	ck_assert_uint_eq(pd_metrics.duplicates_dropped, 2);
	ck_assert_uint_eq(pd_metrics.push_duplicate_records, 2);
	ck_assert_uint_eq(pd_metrics.records_received, 1);

	/*
	 * The next rumor of X: a copy that a sent before our PRUNE reached it
	 * comes first, then b's.  b is our last link into X's tree that we
	 * have not pruned: it is kept (pruning it too would leave X's
	 * rumors to reach us only by IHAVE and GRAFT).
	 */
	rumor(&buf, 0x1003);
	recv_kind(a, FRAME_RUMOR, &buf);
	rumor(&buf, 0x1003);
	recv_kind(b, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(b, FRAME_PRUNE, 0, &has), 0);
	ck_assert_uint_eq(pd_metrics.push_prunes_sent, 2);

	/* Another writer, Y: its tree is its own, b's copy second is pruned. */
	rumor_from(&buf, 0x1005, ORIGIN_Y);
	recv_kind(a, FRAME_RUMOR, &buf);
	rumor_from(&buf, 0x1005, ORIGIN_Y);
	recv_kind(b, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(b, FRAME_PRUNE, ORIGIN_Y, &has), 1);
	ck_assert(has);

	/* a prunes us from X's tree: X goes to a as ids, Y still in full. */
	prune(&buf, ORIGIN_X);
	recv_kind(a, FRAME_PRUNE, &buf);
	fake_link_clear();
	rumor(&buf, 0x2003);
	recv_kind(b, FRAME_RUMOR, &buf);
	rumor_from(&buf, 0x2005, ORIGIN_Y);
	recv_kind(c, FRAME_RUMOR, &buf);
	run_for(pd->conf.lazy_ms + 10);
	/*
	 * X's id goes to a at the end of the RUMOR frame that carries Y's
	 * rumor its way (an ihave map), not in an IHAVE frame of its own;
	 * X's record itself does not go.
	 */
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, rid_of(0x2003), &has), 0);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x2005), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x2003), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(pd_metrics.push_ihave_piggybacked, 1);
	/* On a link with no rumor going its way, the id has its own IHAVE. */
	fake_link_clear();
	rumor(&buf, 0x2007);
	recv_kind(c, FRAME_RUMOR, &buf);
	run_for(pd->conf.lazy_ms + 10);
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, rid_of(0x2007), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x2007), &has), 0);
	/* X: 2 of 3 links eager (a lazy); Y: all 3. */
	ck_assert(plumtree_tree_degree() == 2.5);

	/* a GRAFTs it: the records come back and X's edge is eager. */
	ids(&buf, rid_of(0x2003));
	recv_kind(a, FRAME_GRAFT, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x2003), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(pd_metrics.push_grafts_answered, 1);
	ck_assert(plumtree_tree_degree() == 3.0);
	fake_link_clear();
	rumor(&buf, 0x3005);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x3005), &has), 1);
	ck_assert(has);
}
END_TEST

/*
 * Our own rumors need no way in: every copy that comes back is pruned,
 * and the urgent lane (a claim) goes in full to every link, lazy or not.
 */
/*
 * What dropping a link costs the trees (the view drops the cheapest when
 * it must drop one): nothing before any rumor; after X's tree formed, a
 * neighbour we pruned and that pruned us costs nothing, our way in costs
 * both directions.
 */
START_TEST(a_link_in_no_tree_costs_nothing_to_drop)
{
	struct dcbor_buf buf;

	/* Origins stay in use 2 x (lazy + graft): far past this test. */
	pd->conf.lazy_ms = 5000;
	pd->conf.graft_ms = 5000;
	ck_assert_uint_eq(plumtree_link_cost(a), 0);
	ck_assert_uint_eq(plumtree_link_cost(b), 0);
	rumor(&buf, 0x1001);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(plumtree_link_cost(a), 2);
	ck_assert_uint_eq(plumtree_link_cost(b), 2);
	rumor(&buf, 0x1001);
	recv_kind(a, FRAME_RUMOR, &buf);	/* a duplicate: we prune a */
	ck_assert_uint_eq(plumtree_link_cost(a), 1);
	prune(&buf, ORIGIN_X);
	recv_kind(a, FRAME_PRUNE, &buf);	/* and a prunes us */
	ck_assert_uint_eq(plumtree_link_cost(a), 0);
	ck_assert_uint_eq(plumtree_link_cost(b), 2);
	ck_assert_uint_eq(plumtree_link_cost(c), 2);
}
END_TEST

/*
 * A tree edge costs a drop only while its origin is in use: once no rumor
 * of it came for 2 x (--lazy-ms + --graft-ms), losing the link costs only
 * its next rumor a repair, and a swap may drop it (view.c waits for that).
 */
START_TEST(a_quiet_tree_costs_nothing_to_drop)
{
	struct dcbor_buf buf;

	pd->conf.lazy_ms = 5000;
	pd->conf.graft_ms = 5000;
	rumor(&buf, 0x1001);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(plumtree_link_cost(b), 2);
	ck_assert_uint_eq(plumtree_link_cost(c), 2);
	pd->conf.lazy_ms = 2;		/* in use for 2 x (2 + 3) = 10 ms */
	pd->conf.graft_ms = 3;
	run_for(15);
	ck_assert_uint_eq(plumtree_link_cost(b), 0);
	ck_assert_uint_eq(plumtree_link_cost(c), 0);
	rumor(&buf, 0x1002);		/* the origin speaks again */
	recv_kind(c, FRAME_RUMOR, &buf);
	pd->conf.lazy_ms = 5000;
	pd->conf.graft_ms = 5000;
	ck_assert_uint_gt(plumtree_link_cost(b), 0);
}
END_TEST

START_TEST(own_rumors_and_the_urgent_lane)
{
	struct dcbor_buf buf, rec;
	uint64_t self = pd->ident.node;
	bool has;

	/* A copy of one of ours, from each of the three: all pruned. */
	for (int i = 0; i < 3; i++) {
		struct member *m = i == 0 ? a : i == 1 ? b : c;

		rumor_from(&buf, 0x7001, self);
		recv_kind(m, FRAME_RUMOR, &buf);
		ck_assert_uint_eq(sent_to(m, FRAME_PRUNE, self, &has),
		    i == 0 ? 0 : 1);
	}
	/* (The first was new to us: it was applied, not a duplicate.) */
	ck_assert_uint_eq(pd_metrics.push_prunes_sent, 2);
	/* Every neighbour prunes our tree: bulk goes as ids, urgent whole. */
	for (int i = 0; i < 3; i++) {
		prune(&buf, self);
		recv_kind(i == 0 ? a : i == 1 ? b : c, FRAME_PRUNE, &buf);
	}
	fake_link_clear();
	items_for(&rec, 0x7003);
	/* items_for's array head (one record) is not what the queue takes. */
	plumtree_send_urgent(rec.data + 1, rec.len - 1, 1);
	dcbor_buf_free(&rec);
	ck_assert_uint_eq(fake_nsent, 3);
	for (size_t i = 0; i < fake_nsent; i++) {
		ck_assert_uint_eq(fake_sent[i].kind, FRAME_RUMOR);
		ck_assert(fake_sent[i].urgent);
	}
	ck_assert_uint_eq(sent_to(c, FRAME_RUMOR, rid_of(0x7003), &has), 1);
	ck_assert(has);
}
END_TEST

/* The hop limit of the rumor map in a sent RUMOR body. */
static uint64_t
sent_hops(const struct fake_sent *x)
{
	struct dcbor_rd rd;
	uint64_t n, rid, hops;

	dcbor_rd_init(&rd, x->body, x->len);
	ck_assert_int_eq(dcbor_get_map(&rd, &n), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "rid"), 0);
	ck_assert_int_eq(dcbor_get_uint(&rd, &rid), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "hops"), 0);
	ck_assert_int_eq(dcbor_get_uint(&rd, &hops), 0);
	return hops;
}

/*
 * When every member of a fleet of known size is a direct link, an urgent
 * rumor (sent on every link) leaves with one hop, so no receiver forwards
 * it (each copy forwarded in a full mesh is a duplicate: a RUMOR, IHAVE or
 * PRUNE a claim); with a member off our links, or the size unknown, it
 * keeps the full hop limit, and a bulk rumor always does.
 */
START_TEST(a_full_mesh_urgent_rumor_goes_one_hop)
{
	struct dcbor_buf rec;
	static const struct { uint32_t fleet; uint64_t hops; } cases[] = {
		{ 4, 1 },	/* self, a, b, c: all direct */
		{ 5, 0 },	/* one member we have no link to */
		{ 0, 0 },	/* size unknown */
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint64_t want = cases[k].hops ? cases[k].hops : pd->conf.hops;

		pd->conf.fleet_size = cases[k].fleet;
		fake_link_clear();
		items_for(&rec, 0x7100 + (uint32_t)k);
		plumtree_send_urgent(rec.data + 1, rec.len - 1, 1);
		dcbor_buf_free(&rec);
		ck_assert_uint_eq(fake_nsent, 3);
		for (size_t i = 0; i < fake_nsent; i++)
			ck_assert_uint_eq(sent_hops(&fake_sent[i]), want);
	}
	/* Bulk in a full mesh: the tree still carries it on. */
	pd->conf.fleet_size = 4;
	fake_link_clear();
	items_for(&rec, 0x7110);
	plumtree_queue(rec.data + 1, rec.len - 1);
	dcbor_buf_free(&rec);
	run_for(5);
	ck_assert_uint_ge(fake_nsent, 1);
	for (size_t i = 0; i < fake_nsent; i++)
		if (fake_sent[i].kind == FRAME_RUMOR)
			ck_assert_uint_eq(sent_hops(&fake_sent[i]),
			    pd->conf.hops);
}
END_TEST

/*
 * A tree node lost mid-burst: b was our one way into X's tree and its
 * link goes.  At once, one of the others (a or c, both pruned from X's
 * tree) is sent a GRAFT for X's latest rumor, so that link pushes X to us
 * again without waiting for the next rumor's IHAVE and --graft-ms; its
 * answer (a duplicate) is not pruned, being our last way in, and the next
 * rumors come from it.
 */
START_TEST(a_lost_tree_node_is_routed_around)
{
	struct member *x;
	struct dcbor_buf buf;
	bool has_a, has_c;

	rumor(&buf, 0x8001);
	recv_kind(b, FRAME_RUMOR, &buf);
	rumor(&buf, 0x8001);
	recv_kind(a, FRAME_RUMOR, &buf);
	rumor(&buf, 0x8001);
	recv_kind(c, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(pd_metrics.push_prunes_sent, 2);
	fake_link_clear();
	fake_link_down(b);
	ck_assert_uint_eq(sent_to(a, FRAME_GRAFT, rid_of(0x8001), &has_a) +
	    sent_to(c, FRAME_GRAFT, rid_of(0x8001), &has_c), 1);
	ck_assert(has_a || has_c);
	x = has_a ? a : c;
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 1);
	/* x answers with the rumor we have: a duplicate, not pruned. */
	rumor(&buf, 0x8001);
	recv_kind(x, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(x, FRAME_PRUNE, 0, &has_a), 0);
	/* The next rumor comes from x first: nothing is missing. */
	rumor(&buf, 0x8003);
	recv_kind(x, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(pd_metrics.records_received, 2);
	run_for(pd->conf.graft_ms + 10);
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 1);
	/* A link lost that was no way in (a pruned peer's) grafts nothing. */
	fake_link_down(x == a ? c : a);
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 1);
}
END_TEST

START_TEST(graft_repairs_a_pruned_path)
{
	struct dcbor_buf buf;
	bool has;

	/* Our only path from b was pruned; b announces an id we lack. */
	ids(&buf, rid_of(0x4007));
	recv_kind(b, FRAME_IHAVE, &buf);
	/* Not at once (checked before the loop runs: no timer can fire). */
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0x4007), &has), 0);
	/* Missing after --graft-ms: GRAFT from its announcer. */
	run_for(pd->conf.graft_ms + 10);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0x4007), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 1);
	/* b answers with the rumor: it is applied and relayed to a. */
	rumor(&buf, 0x4007);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x4007), &has), 1);
	ck_assert(has);
	/* Received: no second GRAFT, even after more timeouts. */
	run_for(3 * pd->conf.graft_ms);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0x4007), &has), 1);
	/* An id announced by a neighbour whose link went: the next one. */
	ids(&buf, rid_of(0x5009));
	recv_kind(b, FRAME_IHAVE, &buf);
	ids(&buf, rid_of(0x5009));
	recv_kind(a, FRAME_IHAVE, &buf);
	fake_link_down(b);
	run_for(pd->conf.graft_ms + 10);
	ck_assert_uint_eq(sent_to(a, FRAME_GRAFT, rid_of(0x5009), &has), 1);
	ck_assert(has);
}
END_TEST

/*
 * A peer behind its own input puts a due GRAFT off (the eager copy may be
 * in the bytes it has not read), at most four quarter periods, then asks.
 */
START_TEST(graft_waits_while_behind_its_input)
{
	struct dcbor_buf buf;
	uint64_t put_off;
	bool has;

	fake_backlog = true;
	ids(&buf, rid_of(0x4107));
	recv_kind(b, FRAME_IHAVE, &buf);
	/* Due, and put off instead of sent (the loop runs until it is). */
	for (int i = 0; i < 500 && pd_metrics.push_grafts_put_off == 0; i++)
		run_for(5);
	ck_assert_uint_ge(pd_metrics.push_grafts_put_off, 1);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0x4107), &has), 0);
	/* The copy arrives meanwhile: no GRAFT at all. */
	rumor(&buf, 0x4107);
	recv_kind(a, FRAME_RUMOR, &buf);
	run_for(2 * pd->conf.graft_ms);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0x4107), &has), 0);
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 0);
	/*
	 * Behind for good: asked all the same once its four waits are spent
	 * (however slow the host: the loop runs until the GRAFT leaves).
	 */
	put_off = pd_metrics.push_grafts_put_off;
	ids(&buf, rid_of(0x4209));
	recv_kind(b, FRAME_IHAVE, &buf);
	for (int i = 0; i < 100 && sent_to(b, FRAME_GRAFT, rid_of(0x4209),
	    &has) == 0; i++)
		run_for(pd->conf.graft_ms);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0x4209), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(pd_metrics.push_grafts_put_off - put_off, 4);
	fake_backlog = false;
}
END_TEST

/*
 * Ids announced at the end of a RUMOR batch are awaited like an IHAVE's:
 * the batch's rumors are taken first (an id among them is not missing),
 * a missing one is GRAFTed from the sender, after --lazy-ms + --graft-ms.  An ihave
 * map anywhere but last in a batch of two or more, empty, or alone is
 * malformed: the frame is refused and its ids are not awaited.
 */
START_TEST(ids_at_the_end_of_a_batch)
{
	struct dcbor_buf buf;
	bool has;

	pd->conf.lazy_ms = 1000;
	dcbor_buf_init(&buf);
	dcbor_put_array(&buf, 2);
	put_rumor(&buf, 0xa001);
	dcbor_put_map(&buf, 1);
	dcbor_put_cstr(&buf, "ids");
	dcbor_put_array(&buf, 2);
	dcbor_put_uint(&buf, rid_of(0xa001));
	dcbor_put_uint(&buf, rid_of(0xa003));
	recv_kind(b, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(pd_metrics.records_received, 1);
	/*
	 * Riding ids skipped the sender's IHAVE wait: the eager copy gets
	 * --lazy-ms + --graft-ms, not --graft-ms alone.
	 */
	run_for(pd->conf.graft_ms + 10);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0xa003), &has), 0);
	run_for(pd->conf.lazy_ms);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0xa003), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0xa001), &has), 1);
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 1);

	/* The ihave map first, alone, or empty: refused, nothing taken. */
	dcbor_buf_init(&buf);
	dcbor_put_array(&buf, 2);
	dcbor_put_map(&buf, 1);
	dcbor_put_cstr(&buf, "ids");
	dcbor_put_array(&buf, 1);
	dcbor_put_uint(&buf, rid_of(0xa005));
	put_rumor(&buf, 0xa007);
	ck_assert_int_eq(plumtree_recv(b, FRAME_RUMOR, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	dcbor_buf_init(&buf);
	dcbor_put_array(&buf, 1);
	dcbor_put_map(&buf, 1);
	dcbor_put_cstr(&buf, "ids");
	dcbor_put_array(&buf, 1);
	dcbor_put_uint(&buf, rid_of(0xa005));
	ck_assert_int_eq(plumtree_recv(b, FRAME_RUMOR, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	ck_assert_uint_eq(pd_metrics.records_received, 1);
	/* (As in any batch, rumors before a malformed tail were taken.) */
	dcbor_buf_init(&buf);
	dcbor_put_array(&buf, 2);
	put_rumor(&buf, 0xa009);
	dcbor_put_map(&buf, 1);
	dcbor_put_cstr(&buf, "ids");
	dcbor_put_array(&buf, 0);
	ck_assert_int_eq(plumtree_recv(b, FRAME_RUMOR, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	run_for(pd->conf.graft_ms + 10);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0xa005), &has), 1);
	ck_assert(!has);
}
END_TEST

/*
 * An id waits --lazy-ms at most from the moment it was queued for its
 * link, not until a fleet-wide IHAVE tick: a RUMOR frame going that way
 * within the wait takes it along, and no IHAVE frame leaves.  Here c's
 * id (Y's tree) arms the timer first; a's (X's tree) is queued 700 ms
 * later and the next rumor to a, 400 ms after that, still finds it
 * waiting (one timer for every link would have sent a's IHAVE with c's).
 */
START_TEST(ids_wait_from_their_own_queueing)
{
	struct dcbor_buf buf;
	bool has;

	pd->conf.lazy_ms = 1000;
	/* Both trees held (a PRUNE names a tree we hold), then pruned. */
	rumor_from(&buf, 0xb007, ORIGIN_X);
	recv_kind(b, FRAME_RUMOR, &buf);
	rumor_from(&buf, 0xb009, ORIGIN_Y);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	prune(&buf, ORIGIN_X);
	recv_kind(a, FRAME_PRUNE, &buf);
	prune(&buf, ORIGIN_Y);
	recv_kind(c, FRAME_PRUNE, &buf);
	fake_link_clear();
	rumor_from(&buf, 0xb001, ORIGIN_Y);	/* whole to a, id to c */
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(700);
	rumor_from(&buf, 0xb003, ORIGIN_X);	/* id to a, whole to c */
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(400);
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, rid_of(0xb003), &has), 0);
	rumor_from(&buf, 0xb005, ORIGIN_Y);	/* whole to a: X's id along */
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, rid_of(0xb003), &has), 0);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0xb003), &has), 2);
	ck_assert(has);
	/* c's id rode on X's rumor to c: no IHAVE frame to anyone. */
	ck_assert_uint_eq(pd_metrics.push_ihave_frames, 0);
	ck_assert_uint_eq(pd_metrics.push_ihave_piggybacked, 2);
}
END_TEST

/*
 * The GRAFT wait follows the eager copies' lag.  Copies that come well
 * after their announcement (here 10 x --graft-ms: first after a GRAFT to
 * the announcer went unanswered, once after the GRAFT's answer) are
 * counted late (push.grafts_late) and lengthen the wait: the next id
 * announced is not GRAFTed before its eager copy arrives.  A truly lost
 * copy is still GRAFTed, once the longer wait (at most 8 x --graft-ms)
 * has passed.  On code with a fixed wait the GRAFT goes at --graft-ms.
 */
START_TEST(graft_wait_follows_the_eager_lag)
{
	uint64_t lag = 10u * pd->conf.graft_ms, sent;
	struct dcbor_buf buf;
	bool has;

	/* Late after an unanswered GRAFT: the eager copy from a comes. */
	for (uint32_t n = 0xc001; n <= 0xc00b; n += 2) {
		ids(&buf, rid_of(n));
		recv_kind(b, FRAME_IHAVE, &buf);
		run_for((unsigned)lag);
		rumor(&buf, n);
		recv_kind(a, FRAME_RUMOR, &buf);
	}
	ck_assert_uint_ge(pd_metrics.push_grafts_sent, 1);
	ck_assert_uint_eq(pd_metrics.push_grafts_late,
	    pd_metrics.push_grafts_sent);
	/* Late after the GRAFT's answer: the eager copy is a duplicate. */
	fake_link_clear();
	ids(&buf, rid_of(0xc101));
	recv_kind(b, FRAME_IHAVE, &buf);
	for (int i = 0; i < 200 && sent_to(b, FRAME_GRAFT, rid_of(0xc101),
	    &has) == 0; i++)
		run_for(5);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0xc101), &has), 1);
	ck_assert(has);
	sent = pd_metrics.push_grafts_late;
	rumor(&buf, 0xc101);
	recv_kind(b, FRAME_RUMOR, &buf);	/* the answer */
	ck_assert_uint_eq(pd_metrics.push_grafts_late, sent);
	rumor(&buf, 0xc101);
	recv_kind(a, FRAME_RUMOR, &buf);	/* the eager copy, late */
	ck_assert_uint_eq(pd_metrics.push_grafts_late, sent + 1);

	/* Now the wait covers the lag: no GRAFT before the copy comes. */
	sent = pd_metrics.push_grafts_sent;
	fake_link_clear();
	ids(&buf, rid_of(0xc201));
	recv_kind(b, FRAME_IHAVE, &buf);
	run_for(2 * pd->conf.graft_ms);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0xc201), &has), 0);
	rumor(&buf, 0xc201);
	recv_kind(a, FRAME_RUMOR, &buf);
	run_for((unsigned)lag);
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, sent);

	/* A copy that never comes is GRAFTed all the same. */
	fake_link_clear();
	ids(&buf, rid_of(0xc301));
	recv_kind(b, FRAME_IHAVE, &buf);
	for (int i = 0; i < 100 && sent_to(b, FRAME_GRAFT, rid_of(0xc301),
	    &has) == 0; i++)
		run_for(pd->conf.graft_ms);
	ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(0xc301), &has), 1);
	ck_assert(has);
}
END_TEST

/*
 * Ids that fall due together (announced in one IHAVE: a tree cut while
 * its writer was busy) are asked for in one GRAFT frame per announcer,
 * not one frame an id (the old code sent three here).
 */
START_TEST(due_ids_leave_in_one_graft)
{
	struct dcbor_buf buf;
	bool has;

	dcbor_buf_init(&buf);
	dcbor_put_map(&buf, 1);
	dcbor_put_cstr(&buf, "ids");
	dcbor_put_array(&buf, 3);
	for (uint32_t n = 0xd001; n <= 0xd005; n += 2)
		dcbor_put_uint(&buf, rid_of(n));
	recv_kind(b, FRAME_IHAVE, &buf);
	for (int i = 0; i < 200 && pd_metrics.push_grafts_sent == 0; i++)
		run_for(5);
	for (uint32_t n = 0xd001; n <= 0xd005; n += 2) {
		ck_assert_uint_eq(sent_to(b, FRAME_GRAFT, rid_of(n), &has), 1);
		ck_assert(has);
	}
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 1);
	ck_assert_uint_eq(pd_metrics.push_graft_ids, 3);
}
END_TEST

/*
 * A lazy link that already holds an id is not told of it: not when its
 * member announced the id before the copy came here, nor when it
 * announced it or sent a copy while our announcement still waited.  Only
 * the lazy links that showed nothing of the id get it (the old code
 * announced every id on every lazy link but the one it came from).
 */
START_TEST(no_ihave_to_a_link_that_has_the_id)
{
	struct dcbor_buf buf;
	bool has;

	pd->conf.lazy_ms = 200;
	/* X's tree: b brings it, a and c pruned us (lazy edges). */
	rumor_from(&buf, 0xe001, ORIGIN_X);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	prune(&buf, ORIGIN_X);
	recv_kind(a, FRAME_PRUNE, &buf);
	prune(&buf, ORIGIN_X);
	recv_kind(c, FRAME_PRUNE, &buf);
	run_for(pd->conf.lazy_ms + 20);
	fake_link_clear();

	/* c announced 0xe003 before its copy came from b. */
	ids(&buf, rid_of(0xe003));
	recv_kind(c, FRAME_IHAVE, &buf);
	rumor(&buf, 0xe003);
	recv_kind(b, FRAME_RUMOR, &buf);
	/* a announces 0xe005 and c sends a copy while ours wait. */
	rumor(&buf, 0xe005);
	recv_kind(b, FRAME_RUMOR, &buf);
	ids(&buf, rid_of(0xe005));
	recv_kind(a, FRAME_IHAVE, &buf);
	rumor(&buf, 0xe007);
	recv_kind(b, FRAME_RUMOR, &buf);
	rumor(&buf, 0xe007);
	recv_kind(c, FRAME_RUMOR, &buf);
	run_for(pd->conf.lazy_ms + 20);

	ck_assert_uint_eq(sent_to(c, FRAME_IHAVE, rid_of(0xe003), &has), 1);
	ck_assert(!has);
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, rid_of(0xe003), &has), 1);
	ck_assert(has);
	sent_to(a, FRAME_IHAVE, rid_of(0xe005), &has);
	ck_assert(!has);
	sent_to(c, FRAME_IHAVE, rid_of(0xe005), &has);
	ck_assert(has);
	sent_to(c, FRAME_IHAVE, rid_of(0xe007), &has);
	ck_assert(!has);
	sent_to(a, FRAME_IHAVE, rid_of(0xe007), &has);
	ck_assert(has);
	ck_assert_uint_eq(pd_metrics.push_ihave_unsent, 3);
	/* Nothing was missing: no GRAFT. */
	ck_assert_uint_eq(pd_metrics.push_grafts_sent, 0);
}
END_TEST

START_TEST(batched_rumors_and_bounds)
{
	struct dcbor_buf buf;
	bool has;

	/* Two rumors in one frame (an array) are both taken. */
	dcbor_buf_init(&buf);
	dcbor_put_array(&buf, 2);
	for (uint32_t n = 0x6001; n <= 0x6003; n += 2)
		put_rumor(&buf, n);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	/* ...and leave to a in one frame. */
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x6003), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x6001), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(pd_metrics.push_eager, 4);	/* to a and c */
	ck_assert_uint_eq(pd_metrics.records_received, 2);
	ck_assert_uint_eq(pd_metrics.rumors_bad_rid, 0);
	/* An empty batch, a zero id, a bad PRUNE: malformed. */
	dcbor_buf_init(&buf);
	dcbor_put_array(&buf, 0);
	ck_assert_int_eq(plumtree_recv(b, FRAME_RUMOR, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	ids(&buf, 0);
	ck_assert_int_eq(plumtree_recv(b, FRAME_IHAVE, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	ck_assert_int_eq(plumtree_recv(b, FRAME_PRUNE, (const uint8_t *)"\xa1",
	    1), -1);
	/* The old empty PRUNE, and one naming no origin, are refused too. */
	ck_assert_int_eq(plumtree_recv(b, FRAME_PRUNE, (const uint8_t *)"\xa0",
	    1), -1);
	dcbor_buf_init(&buf);
	dcbor_put_map(&buf, 1);
	dcbor_put_cstr(&buf, "origins");
	dcbor_put_array(&buf, 0);
	ck_assert_int_eq(plumtree_recv(b, FRAME_PRUNE, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	/* A PRUNE for a tree we do not hold takes no slot. */
	prune(&buf, 0x3333333333333333ull);
	recv_kind(b, FRAME_PRUNE, &buf);
	ck_assert_uint_eq(pd_metrics.push_origins_replaced, 0);
	/* More writers than slots: the least recently used is replaced. */
	for (uint32_t k = 0; k < PLUMTREE_ORIGINS + 1; k++) {
		rumor_from(&buf, 0x9001 + 2 * k, 0x4000 + k);
		recv_kind(b, FRAME_RUMOR, &buf);
	}
	ck_assert_uint_eq(pd_metrics.push_origins_replaced, 2);
	/* A flood of IHAVE ids is held to the missing table's size. */
	for (uint64_t k = 0; k < PLUMTREE_MISSING + 100; k++) {
		ids(&buf, 0x100000 + 2 * k + 1);
		recv_kind(b, FRAME_IHAVE, &buf);
	}
	ck_assert_uint_eq(pd_metrics.push_missing_dropped, 100);
}
END_TEST

/*
 * IHAVEs that fall due for several links within a quarter of --lazy-ms
 * leave in one timer callback, not one wake-up each.  Here a's first id
 * (rumor 0xd003; c announced it, so c is not told) is queued 60 ms before
 * c's (rumor 0xd005, to both): when a's IHAVE leaves, c's has left with
 * it, 60 ms before it was due.  On code with no slack c's IHAVE waits for
 * a timer of its own, and is not there when a's is.
 */
START_TEST(ihaves_due_together_leave_in_one_wakeup)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t r3 = rid_of(0xd003), r5 = rid_of(0xd005), end;
	struct dcbor_buf buf;
	bool has;

	/* A slack of 300 ms: room for the test's 60 ms, and for a slow box. */
	pd->conf.lazy_ms = 1200;
	/* X's tree held, then a and c pruned us: both edges lazy. */
	rumor_from(&buf, 0xd001, ORIGIN_X);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	prune(&buf, ORIGIN_X);
	recv_kind(a, FRAME_PRUNE, &buf);
	prune(&buf, ORIGIN_X);
	recv_kind(c, FRAME_PRUNE, &buf);
	fake_link_clear();
	ids(&buf, r3);
	recv_kind(c, FRAME_IHAVE, &buf);
	rumor_from(&buf, 0xd003, ORIGIN_X);	/* its id to a only */
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(60);
	rumor_from(&buf, 0xd005, ORIGIN_X);	/* its id to a and c */
	recv_kind(b, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(c, FRAME_IHAVE, r5, &has), 0);
	/* The loop runs until a's IHAVE leaves (bounded, not timed). */
	end = clock_mono_ms() + 10u * pd->conf.lazy_ms;
	while (sent_to(a, FRAME_IHAVE, r3, &has) == 0 &&
	    clock_mono_ms() < end) {
		event_base_loop(pd->base, EVLOOP_NONBLOCK);
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, r3, &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, r5, &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(c, FRAME_IHAVE, r5, &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(c, FRAME_IHAVE, r3, &has), 1);
	ck_assert(!has);
	ck_assert_uint_eq(pd_metrics.push_ihave_frames, 2);
}
END_TEST

static Suite *
plumtree_suite(void)
{
	Suite *s = suite_create("plumtree");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, eager_then_prune_then_lazy);
	tcase_add_test(tc, a_link_in_no_tree_costs_nothing_to_drop);
	tcase_add_test(tc, a_quiet_tree_costs_nothing_to_drop);
	tcase_add_test(tc, own_rumors_and_the_urgent_lane);
	tcase_add_test(tc, a_full_mesh_urgent_rumor_goes_one_hop);
	tcase_add_test(tc, a_lost_tree_node_is_routed_around);
	tcase_add_test(tc, graft_repairs_a_pruned_path);
	tcase_add_test(tc, graft_waits_while_behind_its_input);
	tcase_add_test(tc, graft_wait_follows_the_eager_lag);
	tcase_add_test(tc, due_ids_leave_in_one_graft);
	tcase_add_test(tc, ids_at_the_end_of_a_batch);
	tcase_add_test(tc, ids_wait_from_their_own_queueing);
	tcase_add_test(tc, ihaves_due_together_leave_in_one_wakeup);
	tcase_add_test(tc, no_ihave_to_a_link_that_has_the_id);
	tcase_add_test(tc, batched_rumors_and_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(plumtree_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

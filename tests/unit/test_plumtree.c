/*
 * test_plumtree.c: the broadcast tree of gossip.c against two neighbours
 * played by the test.  The link layer is replaced by the functions below
 * (so link.c is not linked): a member "has a link" when its pointer is
 * set, and every frame gossip.c sends is captured here.  What it shows: a
 * rumor goes eagerly to every neighbour but the one it came from; a stale
 * duplicate answers PRUNE; a PRUNE turns that edge lazy (IHAVE only); an
 * IHAVE'd id that does not arrive is GRAFTed from its announcer; a GRAFT
 * is answered with the records and turns the edge eager again.  Each
 * rumor carries one real signed record and the rid gossip.c requires for
 * it (gossip_rid of its items); the tests name rumors by a small number.
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
#include "gossip.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "stats.h"
#include "trace.h"
#include "view.h"

#include "peerd_stub.h"

/* ---- the fake link layer ------------------------------------------------ */

#define SENT_MAX	256

static struct sent {
	struct member	*to;
	uint32_t	 kind;
	uint8_t		 body[4096];
	size_t		 len;
} sent[SENT_MAX];
static size_t		 nsent;
static link_observer_fn	 observers[8];
static size_t		 nobservers;
static char		 fake_links[4];

void
link_register(uint32_t kind, link_handler_fn fn)
{
	(void)kind;
	(void)fn;
}

void
link_observe(link_observer_fn fn)
{
	for (size_t i = 0; i < nobservers; i++)
		if (observers[i] == fn)
			return;
	observers[nobservers++] = fn;
}

int
link_send_member(struct member *m, uint32_t kind, const uint8_t *body,
    size_t len)
{
	if (m->link == NULL)
		return -1;
	ck_assert_uint_lt(nsent, SENT_MAX);
	ck_assert_uint_le(len, sizeof(sent[0].body));
	sent[nsent].to = m;
	sent[nsent].kind = kind;
	memcpy(sent[nsent].body, body, len);
	sent[nsent].len = len;
	nsent++;
	return 0;
}

/* The urgent lane is recorded like the other: the order is what counts. */
int
link_send_member_urgent(struct member *m, uint32_t kind, const uint8_t *body,
    size_t len)
{
	return link_send_member(m, kind, body, len);
}

/* Every frame "leaves" at once here: nothing is queued. */
size_t
link_mark_all(struct link_mark *out, size_t max)
{
	(void)out;
	(void)max;
	return 0;
}

bool
link_mark_left(const struct link_mark *m, size_t n)
{
	(void)m;
	(void)n;
	return true;
}

int
link_send_member_data(struct member *m, uint32_t kind, const uint8_t *body,
    size_t len, const struct link_payload *pl)
{
	if (pl != NULL && pl->release != NULL)
		pl->release(pl->mem, pl->len, pl->arg);
	return link_send_member(m, kind, body, len);
}

size_t
link_outq(const struct member *m)
{
	return m->link == NULL ? SIZE_MAX : 0;
}

uint32_t
link_count(void)
{
	return 2;
}

json_t *
link_list_json(void)
{
	return json_array();
}

struct link *
link_dial(const char *hostport)
{
	(void)hostport;
	return NULL;
}

bool
link_to_addr(const char *addr)
{
	(void)addr;
	return false;
}

bool
link_addr_ok(const char *hostport)
{
	return strchr(hostport, ':') != NULL;
}

void
link_close(struct link *l, const char *why)
{
	(void)why;
	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->link == l) {
			member_at(i)->link = NULL;
			for (size_t k = 0; k < nobservers; k++)
				observers[k](member_at(i), false);
		}
}

void
link_close_flush(struct link *l, const char *why)
{
	link_close(l, why);
}

/* ---- helpers ------------------------------------------------------------ */

static struct member *a, *b;

static struct member *
neighbour(uint8_t idb, const char *name, size_t slot)
{
	uint8_t id[IDENTITY_ID_LEN];
	struct member *m;

	memset(id, idb, sizeof(id));
	m = member_get(id, name, "127.0.0.1:1");
	m->link = (struct link *)&fake_links[slot];
	for (size_t k = 0; k < nobservers; k++)
		observers[k](m, true);
	return m;
}

static void
setup(void)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	pd = &td;
	memset(pd, 0, sizeof(*pd));
	conf_defaults(&pd->conf);
	pd->conf.name = "t";
	pd->conf.graft_ms = 20;
	pd->conf.lazy_ms = 10;
	pd->conf.batch_ms = 0;
	pd->conf.gossip_ms = 3600000;	/* no anti-entropy in the way */
	log_init("test_plumtree", LOG_LVL_ERROR, NULL);
	memset(seed, 7, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&pd->ident, seed), 0);
	pd->base = event_base_new();
	trace_init(64);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	replica_init();
	nsent = 0;
	a = neighbour(0xaa, "a", 0);
	b = neighbour(0xbb, "b", 1);
	nsent = 0;			/* forget the link-up digests */
}

static void
teardown(void)
{
	replica_free();
	member_free_all();
	trace_free();
	event_base_free(pd->base);
	identity_free(&pd->ident);
	nobservers = 0;
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

/*
 * A rumor's rid must be gossip_rid() of its items (gossip.c refuses any
 * other), so distinct rumors need distinct items.  The tests name a rumor
 * by a small number n; its items are one record, an entry by a fixed
 * "remote" identity with the field {"n": n} and stamp logical n, signed
 * and at a fixed stamp so the same n gives the same bytes (and rid) on
 * every call.
 */
#define REC_PHYS	1700000000000ull	/* a fixed issue time (2023) */
#define REC_LEASE	(100ull * 365 * 24 * 3600 * 1000)	/* 100 years */

static void
items_for(struct dcbor_buf *items, uint32_t n)
{
	static const uint8_t rseed[IDENTITY_SEED_LEN] = { 9 };
	struct identity issuer;
	struct entry_spec spec;
	struct dcbor_buf f;
	struct crdt_rec cr;
	struct entry *e;
	const uint8_t *body;
	size_t blen;
	uint8_t sig[IDENTITY_SIG_LEN];

	ck_assert_int_eq(identity_from_seed(&issuer, rseed), 0);
	dcbor_buf_init(&f);
	dcbor_put_map(&f, 1);
	dcbor_put_cstr(&f, "n");
	dcbor_put_uint(&f, n);
	memset(&spec, 0, sizeof(spec));
	spec.space = "default";
	spec.type = "task#v1";
	spec.fields = f.data;
	spec.fields_len = f.len;
	spec.issuer = issuer.pub;
	spec.stamp.phys = REC_PHYS;
	spec.stamp.logical = n;
	spec.stamp.node = issuer.node;
	spec.lease_ms = REC_LEASE;
	spec.mono_us = 1000000u + n;
	ck_assert_int_eq(entry_new(&spec, &e), ENTRY_OK);
	dcbor_buf_free(&f);
	entry_signing_bytes(e, &body, &blen);
	ck_assert_int_eq(identity_sign(&issuer, body, blen, sig), 0);
	entry_set_sig(e, sig);
	/* The record as space_write makes it (one add dot, the lease). */
	crdt_rec_init(&cr, e->id);
	ck_assert_int_eq(crdt_state_add(&cr.st, issuer.node, 1), CRDT_OK);
	crdt_state_lease(&cr.st, &e->stamp, entry_expires_ms(e));
	dcbor_buf_init(items);
	dcbor_put_array(items, 1);
	/* space_rec_encode's shape; canonical order: "rec" < "entry". */
	dcbor_put_map(items, 2);
	dcbor_put_cstr(items, "rec");
	crdt_rec_encode(items, &cr);
	dcbor_put_cstr(items, "entry");
	entry_encode(items, e);
	crdt_rec_free(&cr);
	entry_free(e);
	identity_free(&issuer);
}

/* The rid of rumor n. */
static uint64_t
rid_of(uint32_t n)
{
	struct dcbor_buf items;
	uint64_t rid;

	items_for(&items, n);
	rid = gossip_rid(items.data, items.len);
	dcbor_buf_free(&items);
	return rid;
}

/* Rumor n as one rumor map, appended to buf. */
static void
put_rumor(struct dcbor_buf *buf, uint32_t n)
{
	struct dcbor_buf items;

	items_for(&items, n);
	dcbor_put_map(buf, 3);
	dcbor_put_cstr(buf, "rid");
	dcbor_put_uint(buf, gossip_rid(items.data, items.len));
	dcbor_put_cstr(buf, "hops");
	dcbor_put_uint(buf, 8);
	dcbor_put_cstr(buf, "items");
	dcbor_put_raw(buf, items.data, items.len);
	dcbor_buf_free(&items);
}

/* A RUMOR body: rumor n alone. */
static void
rumor(struct dcbor_buf *buf, uint32_t n)
{
	dcbor_buf_init(buf);
	put_rumor(buf, n);
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
	ck_assert_int_eq(gossip_recv(from, kind, buf->data, buf->len), 0);
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
	for (size_t i = 0; i < nsent; i++) {
		if (sent[i].to != m || sent[i].kind != kind)
			continue;
		n++;
		if (sent[i].len >= enc.len && memmem(sent[i].body, sent[i].len,
		    enc.data, enc.len) != NULL)
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

	/* From b: forwarded eagerly to a, never back to b. */
	rumor(&buf, 0x1001);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x1001), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(sent_to(b, FRAME_RUMOR, rid_of(0x1001), &has), 0);
	ck_assert_uint_eq(gossip_tree_degree(), 2);
	/* Its rid names its items, and its one record was taken. */
	ck_assert_uint_eq(pd_metrics.rumors_bad_rid, 0);
	ck_assert_uint_eq(pd_metrics.records_received, 1);
	ck_assert_uint_eq(pd_metrics.entries_bad_signature, 0);
	ck_assert_uint_eq(pd_metrics.records_refused, 0);

	/* A duplicate from an edge that has been first lately: kept. */
	rumor(&buf, 0x1001);
	recv_kind(a, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(a, FRAME_PRUNE, 0, &has), 0);
	/* Stale (nothing first from a for 4 x --graft-ms): PRUNE. */
	run_for(4 * pd->conf.graft_ms + 10);
	rumor(&buf, 0x1001);
	recv_kind(a, FRAME_RUMOR, &buf);
	ck_assert_uint_eq(sent_to(a, FRAME_PRUNE, 0, &has), 1);
	ck_assert_uint_eq(pd_metrics.push_prunes_sent, 1);
	/* The two copies after the first, one record each, are duplicates. */
	ck_assert_uint_eq(pd_metrics.duplicates_dropped, 2);
	ck_assert_uint_eq(pd_metrics.push_duplicate_records, 2);
	ck_assert_uint_eq(pd_metrics.records_received, 1);

	/* a prunes us: we push it ids only, batched every --lazy-ms. */
	dcbor_buf_init(&buf);
	dcbor_put_map(&buf, 0);
	recv_kind(a, FRAME_PRUNE, &buf);
	ck_assert_uint_eq(gossip_tree_degree(), 1);
	nsent = 0;
	rumor(&buf, 0x2003);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(pd->conf.lazy_ms + 10);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x2003), &has), 0);
	ck_assert_uint_eq(sent_to(a, FRAME_IHAVE, rid_of(0x2003), &has), 1);
	ck_assert(has);

	/* a GRAFTs it: the records come back and the edge is eager. */
	ids(&buf, rid_of(0x2003));
	recv_kind(a, FRAME_GRAFT, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x2003), &has), 1);
	ck_assert(has);
	ck_assert_uint_eq(pd_metrics.push_grafts_answered, 1);
	ck_assert_uint_eq(gossip_tree_degree(), 2);
	nsent = 0;
	rumor(&buf, 0x3005);
	recv_kind(b, FRAME_RUMOR, &buf);
	run_for(5);
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, rid_of(0x3005), &has), 1);
	ck_assert(has);
}
END_TEST

START_TEST(graft_repairs_a_pruned_path)
{
	struct dcbor_buf buf;
	bool has;

	/* Our only path from b was pruned; b announces an id we lack. */
	ids(&buf, rid_of(0x4007));
	recv_kind(b, FRAME_IHAVE, &buf);
	run_for(2);
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
	link_close(b->link, "test");
	run_for(pd->conf.graft_ms + 10);
	ck_assert_uint_eq(sent_to(a, FRAME_GRAFT, rid_of(0x5009), &has), 1);
	ck_assert(has);
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
	ck_assert_uint_eq(pd_metrics.push_eager, 2);
	ck_assert_uint_eq(pd_metrics.records_received, 2);
	ck_assert_uint_eq(pd_metrics.rumors_bad_rid, 0);
	/* An empty batch, a zero id, a bad PRUNE: malformed. */
	dcbor_buf_init(&buf);
	dcbor_put_array(&buf, 0);
	ck_assert_int_eq(gossip_recv(b, FRAME_RUMOR, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	ids(&buf, 0);
	ck_assert_int_eq(gossip_recv(b, FRAME_IHAVE, buf.data, buf.len), -1);
	dcbor_buf_free(&buf);
	ck_assert_int_eq(gossip_recv(b, FRAME_PRUNE, (const uint8_t *)"\xa1",
	    1), -1);
	/* A flood of IHAVE ids is held to the missing table's size. */
	for (uint64_t k = 0; k < GOSSIP_MISSING + 100; k++) {
		ids(&buf, 0x100000 + 2 * k + 1);
		recv_kind(b, FRAME_IHAVE, &buf);
	}
	ck_assert_uint_eq(pd_metrics.push_missing_dropped, 100);
}
END_TEST

static Suite *
plumtree_suite(void)
{
	Suite *s = suite_create("plumtree");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, eager_then_prune_then_lazy);
	tcase_add_test(tc, graft_repairs_a_pruned_path);
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

/*
 * test_take.c: the urgent turn of take.c and replica.c against two
 * neighbours played by the test (fake_link.h: a member "has a link" when
 * its pointer is set, every frame sent is captured, and fake_held keeps
 * every frame from "leaving").  What it shows: the claims one loop turn
 * makes leave as one rumor per link, the answers one turn makes to one
 * holder as one CLAIM_ACKS frame; each claim of such a batch is trusted
 * exactly as a lone one would be: not before its frame has left every
 * link, not before every live member answered it, and not before the
 * settle window has passed since it left; a CLAIM_ACKS list that does not
 * parse whole changes nothing.  And, alone (no neighbours), the log of won
 * takes: it lists every win by index until the space has collected the
 * tombstones of a whole chunk of them, and then lists the wins after it.
 */
#include <stdint.h>
#include <stdio.h>
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
#include "hex.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "stats.h"
#include "take.h"
#include "template.h"
#include "trace.h"
#include "vote.h"

#include "peerd_stub.h"

#include "fake_link.h"

#define SETTLE_MS	40
#define TASKS		4

static struct identity	 writer, holder_a, holder_b;
static struct member	*a, *b;
static uint8_t		 task[TASKS][ENTRY_ID_LEN];
static unsigned		 ndone, nwon;
static uint64_t		 t0;		/* the wall clock at setup */
static uint64_t		 claim_mono_us;	/* claim_record's (not signed) */

static struct member *
neighbour(const struct identity *who, const char *name, size_t slot)
{
	struct member *m = member_get(who->id, name, "127.0.0.1:1");

	memcpy(m->pub, who->pub, IDENTITY_PUB_LEN);
	m->have_pub = true;
	fake_link_up(m, slot);
	return m;
}

/* The peer, its keys and its replica; no neighbour, no task. */
static void
setup_alone(void)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	stub_conf();
	pd->conf.settle_ms = SETTLE_MS;
	pd->conf.gossip_ms = 3600000;	/* no anti-entropy in the way */
	pd->conf.batch_ms = 0;
	log_init("test_take", LOG_LVL_ERROR, NULL);
	memset(seed, 7, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&pd->ident, seed), 0);
	memset(seed, 8, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&writer, seed), 0);
	memset(seed, 9, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&holder_a, seed), 0);
	memset(seed, 10, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&holder_b, seed), 0);
	pd->base = event_base_new();
	trace_init(64);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	fake_link_reset();
	fake_held = false;
	replica_init();
	a = b = NULL;
	ndone = nwon = 0;
	claim_mono_us = 0;
}

static void
setup(void)
{
	char err[128];
	uint64_t now;

	setup_alone();
	a = neighbour(&holder_a, "a", 0);
	b = neighbour(&holder_b, "b", 1);
	now = t0 = hlc_wall_ms();
	for (unsigned i = 0; i < TASKS; i++)
		ck_assert_int_eq(replica_generate(&writer, i, now, 3600000,
		    "task#v1", "", task[i], err, sizeof(err)), 0);
	ndone = nwon = 0;
	fake_link_clear();
}

static void
teardown(void)
{
	stub_free();
	identity_free(&writer);
	identity_free(&holder_a);
	identity_free(&holder_b);
	fake_link_reset();
	fake_held = false;
}

/* One pass of the loop: what is active runs (the urgent turn among it). */
static void
turn(void)
{
	event_base_loop(pd->base, EVLOOP_NONBLOCK);
}

/* Run the loop until ndone reaches want or ms pass. */
static void
run_until_done(unsigned want, unsigned ms)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t end = clock_mono_ms() + ms;

	while (ndone < want && clock_mono_ms() < end) {
		turn();
		nanosleep(&ts, NULL);
	}
}

static void
take_done(void *arg, const struct space_rec *won, const struct take_end *end)
{
	(void)arg;
	(void)end;
	ndone++;
	if (won != NULL)
		nwon++;
}

/* The frames of kind sent to m. */
static size_t
sent_to(const struct member *m, uint32_t kind, size_t *last)
{
	size_t n = 0;

	for (size_t i = 0; i < fake_nsent; i++)
		if (fake_sent[i].to == m && fake_sent[i].kind == kind) {
			n++;
			*last = i;
		}
	return n;
}

/* The records in a RUMOR body of one rumor map. */
static uint64_t
rumor_items(const struct fake_sent *s)
{
	struct dcbor_rd rd;
	const uint8_t *items;
	size_t len;
	uint64_t n, v;

	dcbor_rd_init(&rd, s->body, s->len);
	ck_assert_int_eq(dcbor_get_map(&rd, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(dcbor_get_key(&rd, "rid"), 0);
	ck_assert_int_eq(dcbor_get_uint(&rd, &v), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "hops"), 0);
	ck_assert_int_eq(dcbor_get_uint(&rd, &v), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "items"), 0);
	ck_assert_int_eq(dcbor_get_raw(&rd, &items, &len), 0);
	dcbor_rd_init(&rd, items, len);
	ck_assert_int_eq(dcbor_get_array(&rd, &n), 0);
	return n;
}

/* A CLAIM_ACK body {ok, entry, epoch}. */
static void
put_ack(struct dcbor_buf *out, bool ok, const uint8_t id[ENTRY_ID_LEN],
    uint64_t epoch)
{
	dcbor_put_map(out, 3);
	dcbor_put_cstr(out, "ok");
	dcbor_put_bool(out, ok);
	dcbor_put_cstr(out, "entry");
	dcbor_put_bytes(out, id, ENTRY_ID_LEN);
	dcbor_put_cstr(out, "epoch");
	dcbor_put_uint(out, epoch);
}

/* m answers ok to our first claims (epoch 1) on tasks 0 and 1 at once. */
static void
answer_both(struct member *m)
{
	struct dcbor_buf l;

	dcbor_buf_init(&l);
	dcbor_put_array(&l, 2);
	put_ack(&l, true, task[0], 1);
	put_ack(&l, true, task[1], 1);
	ck_assert_int_eq(vote_recv_acks(m, l.data, l.len), 0);
	dcbor_buf_free(&l);
}

/* How claim_record spoils a claim after signing it (TAMPER_NONE: not). */
enum tamper { TAMPER_NONE, TAMPER_EXPIRY, TAMPER_SIG, TAMPER_MONO };

/*
 * The record of task i with h's claim (epoch, or the next one if 0) on
 * it, as h would send it, then spoiled as tamper says: a later expiry (a
 * signed field) or a flipped signature bit under the same key, or another
 * mono stamp (not signed).
 */
static void
claim_record(struct dcbor_buf *out, unsigned i, const struct identity *h,
    uint64_t epoch, enum tamper tamper)
{
	uint64_t now = t0;		/* the same claim at every call */
	struct crdt_claim c;
	struct dcbor_buf sb;
	struct dcbor_buf rec;
	struct dcbor_rd rd;
	struct space *other;
	struct entry *e = NULL;
	struct crdt_rec cr;

	/* Rebuild the record in a space of h's and claim it there. */
	dcbor_buf_init(&rec);
	ck_assert_uint_gt(replica_put_record(&rec, task[i]), 0);
	dcbor_rd_init(&rd, rec.data, rec.len);
	crdt_rec_init(&cr, task[i]);
	ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), 0);
	memset(&cr.claim, 0, sizeof(cr.claim));	/* h's claim alone */
	other = space_new(h->node, h->id, 10);
	ck_assert_int_eq(space_merge(other, e, &cr, now), SPACE_OK);
	crdt_rec_free(&cr);
	space_claim_make(other, space_get(other, task[i]), &(struct hlc_stamp){
	    now, 1, h->node }, now, 30000, &c);
	if (epoch != 0)
		c.epoch = epoch;
	c.mono_us = claim_mono_us;
	memcpy(c.key, h->pub, IDENTITY_PUB_LEN);
	dcbor_buf_init(&sb);
	crdt_claim_signing_bytes(&sb, &c, task[i]);
	ck_assert_int_eq(identity_sign(h, sb.data, sb.len, c.sig), 0);
	dcbor_buf_free(&sb);
	if (tamper == TAMPER_EXPIRY)
		c.expiry_ms += 60000;
	else if (tamper == TAMPER_SIG)
		c.sig[IDENTITY_SIG_LEN / 2] ^= 0x10;
	else if (tamper == TAMPER_MONO)
		c.mono_us += 12345;
	ck_assert_int_eq(space_claim(other, task[i], &c, now), SPACE_OK);
	space_rec_encode(out, space_get(other, task[i]));
	space_free(other);
	dcbor_buf_free(&rec);
}

static void
claimed_record(struct dcbor_buf *out, unsigned i, const struct identity *h)
{
	claim_record(out, i, h, 0, TAMPER_NONE);
}

/* The claim this replica holds on task i, read back from its record. */
static struct crdt_claim
held_claim(unsigned i)
{
	struct dcbor_buf rec;
	struct dcbor_rd rd;
	struct entry *e = NULL;
	struct crdt_rec cr;
	struct crdt_claim c;

	dcbor_buf_init(&rec);
	ck_assert_uint_gt(replica_put_record(&rec, task[i]), 0);
	dcbor_rd_init(&rd, rec.data, rec.len);
	crdt_rec_init(&cr, task[i]);
	ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), 0);
	c = cr.claim;
	entry_free(e);
	crdt_rec_free(&cr);
	dcbor_buf_free(&rec);
	return c;
}

/* Apply one record as if neighbour from had sent it. */
static void
apply(struct member *from, const struct dcbor_buf *rec)
{
	struct dcbor_rd rd;

	dcbor_rd_init(&rd, rec->data, rec->len);
	ck_assert_int_eq(replica_apply_record(from, &rd), 0);
}

/* ---- the tests ---------------------------------------------------------- */

/* Two takes of one turn: one rumor per link, both claims in it. */
START_TEST(a_turns_claims_leave_in_one_frame_per_link)
{
	size_t last = 0;

	take_start(template_new("task#v1"), 5000, take_done, NULL);
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	/* Nothing leaves before the turn ends. */
	ck_assert_uint_eq(fake_nsent, 0);
	turn();
	ck_assert_uint_eq(sent_to(a, FRAME_RUMOR, &last), 1);
	ck_assert(fake_sent[last].urgent);
	ck_assert_uint_eq(rumor_items(&fake_sent[last]), 2);
	ck_assert_uint_eq(sent_to(b, FRAME_RUMOR, &last), 1);
	ck_assert(fake_sent[last].urgent);
	ck_assert_uint_eq(rumor_items(&fake_sent[last]), 2);
	ck_assert_uint_eq(pd_metrics.rumors_sent, 2);
}
END_TEST

/*
 * Two claims by a merged in one turn: a gets one CLAIM_ACKS frame holding
 * both answers, and b (not their holder) nothing.
 */
START_TEST(a_turns_answers_leave_in_one_frame)
{
	struct dcbor_buf r0, r1;
	struct dcbor_rd rd;
	const uint8_t *p;
	size_t last = 0, len;
	uint64_t n;

	dcbor_buf_init(&r0);
	dcbor_buf_init(&r1);
	claimed_record(&r0, 2, &holder_a);
	claimed_record(&r1, 3, &holder_a);
	dcbor_rd_init(&rd, r0.data, r0.len);
	ck_assert_int_eq(replica_apply_record(a, &rd), 0);
	dcbor_rd_init(&rd, r1.data, r1.len);
	ck_assert_int_eq(replica_apply_record(a, &rd), 0);
	/* A second copy of one claim in the same turn: answered once. */
	dcbor_rd_init(&rd, r0.data, r0.len);
	ck_assert_int_eq(replica_apply_record(a, &rd), 0);
	dcbor_buf_free(&r0);
	dcbor_buf_free(&r1);
	ck_assert_uint_eq(fake_nsent, 0);
	turn();
	ck_assert_uint_eq(sent_to(a, FRAME_CLAIM_ACK, &last), 0);
	ck_assert_uint_eq(sent_to(a, FRAME_CLAIM_ACKS, &last), 1);
	ck_assert(fake_sent[last].urgent);
	ck_assert_uint_eq(sent_to(b, FRAME_CLAIM_ACKS, &last), 0);
	ck_assert_uint_eq(pd_metrics.claim_acks_sent, 2);
	dcbor_rd_init(&rd, fake_sent[sent_to(a, FRAME_CLAIM_ACKS, &last) ?
	    last : 0].body, fake_sent[last].len);
	ck_assert_int_eq(dcbor_get_array(&rd, &n), 0);
	ck_assert_uint_eq(n, 2);
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_int_eq(dcbor_get_raw(&rd, &p, &len), 0);
		ck_assert_uint_eq(p[0], 0xa3);	/* a CLAIM_ACK body */
	}
	ck_assert_uint_eq(dcbor_left(&rd), 0);
}
END_TEST

/*
 * Each claim of a batch is trusted exactly as a lone one: answered by
 * every live member and still held in the links, neither wins; once the
 * frame has left, neither wins before the settle window has passed since.
 */
START_TEST(batched_claims_wait_for_left_answered_settled)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t left_ms, end;
	json_t *j, *t;
	size_t i;

	fake_held = true;		/* nothing leaves the links */
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	turn();
	answer_both(a);
	answer_both(b);
	/* Three settle windows with every answer in: still not left. */
	end = clock_mono_ms() + 3 * SETTLE_MS;
	while (clock_mono_ms() < end) {
		turn();
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_eq(ndone, 0);
	ck_assert_uint_eq(take_won_count(), 0);
	left_ms = hlc_wall_ms();
	fake_held = false;
	run_until_done(2, 5000);
	ck_assert_uint_eq(ndone, 2);
	ck_assert_uint_eq(nwon, 2);
	j = take_won_json(0);
	t = json_object_get(j, "takes");
	ck_assert_uint_eq(json_array_size(t), 2);
	for (i = 0; i < 2; i++)
		ck_assert_uint_ge((uint64_t)json_integer_value(json_object_get(
		    json_array_get(t, i), "wall_ms")), left_ms + SETTLE_MS);
	json_decref(j);
}
END_TEST

/* With b's answers missing, a batch whose frame left does not win. */
START_TEST(batched_claims_wait_for_every_live_member)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t end;

	take_start(template_new("task#v1"), 5000, take_done, NULL);
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	turn();
	answer_both(a);
	/* Until both claims settled and were refused trust (5 s bound). */
	end = clock_mono_ms() + 5000;
	while (pd_metrics.takes_untrusted < 2 && clock_mono_ms() < end) {
		turn();
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_eq(pd_metrics.takes_untrusted, 2);
	ck_assert_uint_eq(ndone, 0);
	answer_both(b);
	run_until_done(2, 5000);
	ck_assert_uint_eq(nwon, 2);
}
END_TEST

/* ---- the settle grid ---------------------------------------------------- */

#define GRID_MS		10
#define SLACK_US	250	/* take.c's GRID_SLACK_US */

/* The grid instant at or after us + the settle window. */
static uint64_t
grid_due_us(uint64_t us)
{
	uint64_t due = us + (uint64_t)pd->conf.settle_ms * 1000;
	uint64_t g = GRID_MS * 1000;

	return (due + g - 1) / g * g;
}

/* Wait (bounded) until the clock is lo_us to hi_us past a grid instant. */
static void
wait_grid_phase(uint64_t lo_us, uint64_t hi_us)
{
	struct timespec ts = { 0, 100000 };
	uint64_t end = clock_mono_ms() + 5000;

	while (((clock_mono_us() % (GRID_MS * 1000)) < lo_us ||
	    (clock_mono_us() % (GRID_MS * 1000)) > hi_us) &&
	    clock_mono_ms() < end)
		nanosleep(&ts, NULL);
}

/* Wait (bounded) until the clock reads at least us. */
static void
wait_clock_us(uint64_t us)
{
	struct timespec ts = { 0, 200000 };
	uint64_t end = clock_mono_ms() + 5000;

	while (clock_mono_us() < us && clock_mono_ms() < end)
		nanosleep(&ts, NULL);
}

/* Turn the loop until ndone reaches want; how many passes moved ndone. */
static unsigned
passes_until_done(unsigned want, unsigned ms, uint64_t *done_us)
{
	struct timespec ts = { 0, 200000 };
	uint64_t end = clock_mono_ms() + ms;
	unsigned before, moved = 0;

	while (ndone < want && clock_mono_ms() < end) {
		before = ndone;
		turn();
		if (ndone != before) {
			moved++;
			*done_us = clock_mono_us();
		}
		nanosleep(&ts, NULL);
	}
	return moved;
}

/*
 * With --settle-grid-ms, the claims of one turn end their settle windows
 * on one grid instant and are decided in one pass of the loop, not before
 * that instant nor before the rule's window.  The turn starts just past a
 * grid instant, so the rule's window ends 8.5 to 9.5 ms before the grid's.
 */
START_TEST(a_turns_claims_settle_on_one_grid_instant)
{
	uint64_t before_us, left_ms, done_us = 0;

	pd->conf.settle_grid_ms = GRID_MS;
	wait_grid_phase(500, 1500);
	before_us = clock_mono_us();
	left_ms = hlc_wall_ms();
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	turn();
	answer_both(a);
	answer_both(b);
	ck_assert_uint_eq(passes_until_done(2, 5000, &done_us), 1);
	ck_assert_uint_eq(nwon, 2);
	ck_assert_uint_ge(done_us + SLACK_US, grid_due_us(before_us));
	ck_assert_uint_ge(hlc_wall_ms(), left_ms + SETTLE_MS);
}
END_TEST

/*
 * A fresh remote claim made nearly with ours (its mono stamp) moves our
 * settle ends to its grid instant, two grid steps past our own at most: a
 * claim made later than that, or stamped in the future, moves nothing.
 * Both our claims wait for the later instant and are still decided in one
 * pass, once every live member has answered.  The window is 1 s here, so
 * the claims are still settling however slowly the test runs, and the
 * turn starts 2-4 ms past a grid instant, so ours end 6-8 ms before the
 * next one: a claim made 15 ms after ours ends one step later, one made
 * 45 ms after ours four or more.  Nothing is decided until the test turns
 * the loop again.
 */
START_TEST(a_near_remote_claim_moves_the_settle_end_two_steps_at_most)
{
	struct dcbor_buf r;
	uint64_t left_us, now_us, near_due, done_us = 0;

	pd->conf.settle_grid_ms = GRID_MS;
	pd->conf.settle_ms = 1000;
	wait_grid_phase(2000, 4000);
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	left_us = clock_mono_us();
	turn();
	answer_both(a);
	answer_both(b);
	/* A claim made 45 ms after ours ends 3+ steps past our end. */
	wait_clock_us(left_us + 45000);
	now_us = clock_mono_us();
	ck_assert_uint_eq(ndone, 0);
	claim_mono_us = now_us;
	dcbor_buf_init(&r);
	claimed_record(&r, 2, &holder_a);
	apply(a, &r);
	dcbor_buf_free(&r);
	ck_assert_uint_eq(pd_metrics.takes_aligned, 0);
	/* Stamped in the future: not of this host's last window. */
	claim_mono_us = now_us + 1000000;
	dcbor_buf_init(&r);
	claimed_record(&r, 3, &holder_b);
	apply(b, &r);
	dcbor_buf_free(&r);
	ck_assert_uint_eq(pd_metrics.takes_aligned, 0);
	/* Made 15 ms after ours: one step later. */
	claim_mono_us = left_us + 15000;
	near_due = grid_due_us(claim_mono_us);
	dcbor_buf_init(&r);
	claimed_record(&r, 3, &holder_a);
	apply(a, &r);
	dcbor_buf_free(&r);
	ck_assert_uint_eq(pd_metrics.takes_aligned, 2);
	ck_assert_uint_eq(passes_until_done(2, 5000, &done_us), 1);
	ck_assert_uint_eq(nwon, 2);
	ck_assert_uint_ge(done_us + SLACK_US, near_due);
}
END_TEST

/* The index of the one task read no longer sees (our claim hides it). */
static int
claimed_task(void)
{
	struct template *t = template_new("task#v1");
	json_t *res = replica_read(t, true, TASKS), *e;
	char hex[2 * ENTRY_ID_LEN + 1];
	int found = -1;
	size_t k;

	template_free(t);
	ck_assert_uint_eq(json_array_size(json_object_get(res, "entries")),
	    TASKS - 1);
	for (unsigned i = 0; i < TASKS; i++) {
		bool seen = false;

		hex_encode(task[i], ENTRY_ID_LEN, hex);
		json_array_foreach(json_object_get(res, "entries"), k, e)
			if (strcmp(json_string_value(json_object_get(e, "id")),
			    hex) == 0)
				seen = true;
		if (!seen)
			found = (int)i;
	}
	json_decref(res);
	return found;
}

/*
 * --take-window: 1 takes the head of the queue; N takes, among the first N
 * claimable entries, the first whose home (its id's first 8 bytes modulo
 * the live members known, this peer included) is this peer's rank by id,
 * else the entry at this peer's offset (its id's first 8 bytes, then one
 * more per attempt); alone, every entry is this peer's and it takes the
 * head.
 */
START_TEST(take_window_picks_this_peers_own_entries)
{
	uint64_t h, rank;
	int first = -1;

	take_start(template_new("task#v1"), 5000, take_done, NULL);
	ck_assert_int_eq(claimed_task(), 0);
	take_cancel();
	teardown();
	setup();
	pd->conf.take_window = TASKS;
	rank = (memcmp(holder_a.id, pd->ident.id, IDENTITY_ID_LEN) < 0) +
	    (memcmp(holder_b.id, pd->ident.id, IDENTITY_ID_LEN) < 0);
	for (int i = TASKS - 1; i >= 0; i--) {
		memcpy(&h, task[i], sizeof(h));
		if (h % 3 == rank)
			first = i;
	}
	memcpy(&h, pd->ident.id, sizeof(h));
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	ck_assert_int_eq(claimed_task(), first >= 0 ? first :
	    (int)(h % TASKS));
	take_cancel();
	teardown();
	setup();
	pd->conf.take_window = TASKS;
	a->state = b->state = MEMBER_DEAD;	/* alone: all are ours */
	take_start(template_new("task#v1"), 5000, take_done, NULL);
	ck_assert_int_eq(claimed_task(), 0);
}
END_TEST

/*
 * A claim verified once is believed again without a second verification
 * (it lost the merge here, so it is not the record's claim and arrives
 * "fresh"), but only a claim identical in key, signed bytes and signature:
 * the same claim with a later expiry, or with one signature bit flipped,
 * is verified, refused, and changes nothing; a new mono stamp (not
 * signed) changes no signed byte.  A cache keyed by the key and the
 * signature alone would take the later expiry.
 */
START_TEST(a_verified_claim_is_not_verified_twice_and_a_forged_one_is_refused)
{
	struct dcbor_buf rb1, ra2, bad;
	struct crdt_claim cur;
	uint64_t expiry;

	dcbor_buf_init(&rb1);
	dcbor_buf_init(&ra2);
	dcbor_buf_init(&bad);
	claim_record(&rb1, 2, &holder_b, 1, TAMPER_NONE);
	claim_record(&ra2, 2, &holder_a, 2, TAMPER_NONE);
	apply(b, &rb1);				/* b's epoch 1: verified */
	ck_assert_uint_eq(pd_metrics.verifies_claim, 1);
	apply(a, &ra2);				/* a's epoch 2 leads now */
	ck_assert_uint_eq(pd_metrics.verifies_claim, 2);
	cur = held_claim(2);
	ck_assert_uint_eq(cur.epoch, 2);
	expiry = cur.expiry_ms;
	/* b's claim again, by another path: no second verification. */
	apply(a, &rb1);
	ck_assert_uint_eq(pd_metrics.verifies_claim, 2);
	ck_assert_uint_eq(pd_metrics.verifies_claim_cached, 1);
	ck_assert_uint_eq(pd_metrics.claims_rejected, 0);
	/* Its mono stamp is not signed: still the claim verified. */
	claim_record(&bad, 2, &holder_b, 1, TAMPER_MONO);
	apply(a, &bad);
	ck_assert_uint_eq(pd_metrics.verifies_claim, 2);
	ck_assert_uint_eq(pd_metrics.claims_rejected, 0);
	/* a's claim with a later expiry under a's signature: refused. */
	dcbor_buf_reset(&bad);
	claim_record(&bad, 2, &holder_a, 2, TAMPER_EXPIRY);
	apply(b, &bad);
	ck_assert_uint_eq(pd_metrics.verifies_claim, 3);
	ck_assert_uint_eq(pd_metrics.claims_rejected, 1);
	cur = held_claim(2);
	ck_assert_uint_eq(cur.expiry_ms, expiry);
	/* b's verified claim with one signature bit flipped: refused. */
	dcbor_buf_reset(&bad);
	claim_record(&bad, 2, &holder_b, 1, TAMPER_SIG);
	apply(a, &bad);
	ck_assert_uint_eq(pd_metrics.verifies_claim, 4);
	ck_assert_uint_eq(pd_metrics.claims_rejected, 2);
	/* And neither forgery was remembered as verified. */
	dcbor_buf_reset(&bad);
	claim_record(&bad, 2, &holder_a, 2, TAMPER_EXPIRY);
	apply(b, &bad);
	ck_assert_uint_eq(pd_metrics.verifies_claim, 5);
	ck_assert_uint_eq(pd_metrics.claims_rejected, 3);
	ck_assert_uint_eq(pd_metrics.verifies_claim_cached, 2);
	dcbor_buf_free(&rb1);
	dcbor_buf_free(&ra2);
	dcbor_buf_free(&bad);
}
END_TEST

/* A list with a bad item changes nothing: its good answers do not count. */
START_TEST(a_bad_list_changes_nothing)
{
	struct dcbor_buf l;

	take_start(template_new("task#v1"), 5000, take_done, NULL);
	turn();
	dcbor_buf_init(&l);
	dcbor_put_array(&l, 2);
	put_ack(&l, true, task[0], 1);
	dcbor_put_map(&l, 1);		/* neither answer's shape */
	dcbor_put_cstr(&l, "ok");
	dcbor_put_bool(&l, true);
	ck_assert_int_eq(vote_recv_acks(a, l.data, l.len), -1);
	dcbor_buf_reset(&l);
	dcbor_put_array(&l, 1);		/* one answer goes as its own kind */
	put_ack(&l, true, task[0], 1);
	ck_assert_int_eq(vote_recv_acks(a, l.data, l.len), -1);
	dcbor_buf_reset(&l);
	dcbor_put_array(&l, 2);		/* bytes after the list */
	put_ack(&l, true, task[0], 1);
	put_ack(&l, true, task[1], 1);
	dcbor_put_uint(&l, 0);
	ck_assert_int_eq(vote_recv_acks(a, l.data, l.len), -1);
	dcbor_buf_free(&l);
	ck_assert_uint_eq(pd_metrics.claim_acks_received, 0);
}
END_TEST

/*
 * Only an answer to a claim in flight is received: one for an epoch we
 * never claimed, for an entry we never claimed, or for a claim already
 * decided is counted apart, and changes no take.
 */
START_TEST(an_answer_to_no_claim_is_counted_apart)
{
	struct dcbor_buf l;

	take_start(template_new("task#v1"), 5000, take_done, NULL);
	turn();
	dcbor_buf_init(&l);
	put_ack(&l, true, task[0], 9);		/* not our epoch */
	ck_assert_int_eq(vote_recv_ack(a, l.data, l.len), 0);
	dcbor_buf_reset(&l);
	put_ack(&l, true, task[3], 1);		/* not our entry */
	ck_assert_int_eq(vote_recv_ack(a, l.data, l.len), 0);
	ck_assert_uint_eq(pd_metrics.claim_acks_received, 0);
	ck_assert_uint_eq(pd_metrics.claim_acks_unmatched, 2);
	/* Our claim's answers are received, and the take is won. */
	dcbor_buf_reset(&l);
	put_ack(&l, true, task[0], 1);
	ck_assert_int_eq(vote_recv_ack(a, l.data, l.len), 0);
	ck_assert_int_eq(vote_recv_ack(b, l.data, l.len), 0);
	ck_assert_uint_eq(pd_metrics.claim_acks_received, 2);
	run_until_done(1, 5000);
	ck_assert_uint_eq(nwon, 1);
	/* A late copy of an answer to the decided claim: not received. */
	ck_assert_int_eq(vote_recv_ack(a, l.data, l.len), 0);
	ck_assert_uint_eq(pd_metrics.claim_acks_received, 2);
	ck_assert_uint_eq(pd_metrics.claim_acks_unmatched, 3);
	dcbor_buf_free(&l);
}
END_TEST

/*
 * A live member that never answers holds a take until its deadline, no
 * longer (not for the claim's whole lease), and the take names it.
 */
static uint8_t			 last_silent[4][IDENTITY_ID_LEN];
static size_t			 last_nsilent;

static void
take_done_silent(void *arg, const struct space_rec *won,
    const struct take_end *end)
{
	last_nsilent = end->nsilent < 4 ? end->nsilent : 4;
	memcpy(last_silent, end->silent, last_nsilent * IDENTITY_ID_LEN);
	take_done(arg, won, end);
}

START_TEST(a_silent_member_holds_a_take_until_its_deadline_only)
{
	struct dcbor_buf l;

	pd->conf.take_lease_ms = 3600000;
	take_start(template_new("task#v1"), 300, take_done_silent, NULL);
	turn();
	dcbor_buf_init(&l);
	put_ack(&l, true, task[0], 1);
	/* a answers; b never does. */
	ck_assert_int_eq(vote_recv_ack(a, l.data, l.len), 0);
	dcbor_buf_free(&l);
	run_until_done(1, 20000);
	ck_assert_uint_eq(ndone, 1);
	ck_assert_uint_eq(nwon, 0);
	ck_assert_uint_eq(pd_metrics.takes_unanswered, 1);
	ck_assert_uint_eq(last_nsilent, 1);
	ck_assert_mem_eq(last_silent[0], holder_b.id, IDENTITY_ID_LEN);
}
END_TEST

/* A take's end that completes what it won (as a take load does). */
static void
take_done_complete(void *arg, const struct space_rec *won,
    const struct take_end *end)
{
	take_done(arg, won, end);
	if (won != NULL)
		ck_assert_int_eq(replica_complete(space_rec_id(won)), SPACE_OK);
}

/*
 * Write n tasks (seq from) with this lease and take each, completing it:
 * in waves of 256, each won well inside its tasks' lease.
 */
static void
win_tasks(uint64_t from, unsigned n, uint64_t lease_ms,
    uint8_t (*ids)[ENTRY_ID_LEN])
{
	char err[128];

	for (unsigned w = 0; w < n; w += 256) {
		unsigned k = n - w < 256 ? n - w : 256, want = ndone + k;
		uint64_t now = hlc_wall_ms();

		for (unsigned i = w; i < w + k; i++) {
			ck_assert_int_eq(replica_generate(&writer, from + i,
			    now, lease_ms, "task#v1", "", ids[from + i], err,
			    sizeof(err)), 0);
			take_start(template_new("task#v1"), 20000,
			    take_done_complete, NULL);
		}
		run_until_done(want, 25000);
		ck_assert_uint_eq(ndone, want);
		ck_assert_uint_eq(nwon, want);
	}
}

/* The id listed at position k of a takes answer. */
static const char *
listed(json_t *j, size_t k)
{
	return json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "takes"), k), "id"));
}

START_TEST(won_log_goes_with_the_tombstones)
{
	const unsigned chunk = TAKE_LOG_CHUNK, n = 3 * TAKE_LOG_CHUNK + 1;
	const uint64_t lease = 2000;	/* tombstones go at end + 2 x lease */
	uint8_t (*ids)[ENTRY_ID_LEN] = calloc(n, ENTRY_ID_LEN);
	char hex[2 * ENTRY_ID_LEN + 1];
	struct timespec ts = { 0, 1000000 };
	uint64_t end;
	json_t *j;

	ck_assert_ptr_nonnull(ids);
	/* Two chunks of wins, each completed, and one more win. */
	win_tasks(0, 2 * chunk, lease, ids);
	win_tasks(2 * chunk, 1, lease, ids);
	ck_assert_uint_eq(take_won_count(), 2 * chunk + 1);
	/* The space holds them all: every win is listed, by index. */
	j = take_won_json(0);
	ck_assert_uint_eq(json_integer_value(json_object_get(j, "total")),
	    2 * chunk + 1);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "takes")),
	    2 * chunk + 1);
	json_decref(j);
	j = take_won_json(chunk + 5);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "takes")),
	    chunk - 4);
	json_decref(j);
	/* Until the tombstones of the first 2 x chunk are collected. */
	end = clock_mono_ms() + 30000;
	while (replica_count() > 0 && clock_mono_ms() < end) {
		(void)replica_visible();	/* sweeps */
		turn();
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_eq(replica_count(), 0);
	/* Nothing is dropped before a new chunk starts. */
	j = take_won_json(0);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "takes")),
	    2 * chunk + 1);
	json_decref(j);
	/* The fourth chunk's first win drops the two collected ones; the
	 * third (its first id collected, the rest held) stays. */
	win_tasks(2 * chunk + 1, chunk, lease, ids);
	ck_assert_uint_eq(take_won_count(), n);
	j = take_won_json(0);
	ck_assert_uint_eq(json_integer_value(json_object_get(j, "total")), n);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "takes")),
	    n - 2 * chunk);
	hex_encode(ids[2 * chunk], ENTRY_ID_LEN, hex);
	ck_assert_str_eq(listed(j, 0), hex);
	snprintf(hex, sizeof(hex), "%s", listed(j, n - 2 * chunk - 1));
	json_decref(j);
	/* An index past the dropped ones answers as before. */
	j = take_won_json(n - 1);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "takes")), 1);
	ck_assert_str_eq(listed(j, 0), hex);
	json_decref(j);
	free(ids);
}
END_TEST

static Suite *
take_suite(void)
{
	Suite *s = suite_create("take");
	TCase *tc = tcase_create("turn");
	TCase *tl = tcase_create("log");

	tcase_add_checked_fixture(tl, setup_alone, teardown);
	tcase_set_timeout(tl, 90);
	tcase_add_test(tl, won_log_goes_with_the_tombstones);
	suite_add_tcase(s, tl);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a_turns_claims_leave_in_one_frame_per_link);
	tcase_add_test(tc, a_turns_answers_leave_in_one_frame);
	tcase_add_test(tc, batched_claims_wait_for_left_answered_settled);
	tcase_add_test(tc, batched_claims_wait_for_every_live_member);
	tcase_add_test(tc, a_turns_claims_settle_on_one_grid_instant);
	tcase_add_test(tc,
	    a_near_remote_claim_moves_the_settle_end_two_steps_at_most);
	tcase_add_test(tc, a_bad_list_changes_nothing);
	tcase_add_test(tc, an_answer_to_no_claim_is_counted_apart);
	tcase_add_test(tc,
	    a_silent_member_holds_a_take_until_its_deadline_only);
	tcase_add_test(tc, take_window_picks_this_peers_own_entries);
	tcase_add_test(tc,
	    a_verified_claim_is_not_verified_twice_and_a_forged_one_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(take_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

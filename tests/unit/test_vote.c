/*
 * test_vote.c: vote.c alone, on fake links (fake_link.h) and with no
 * replica at all: its records are a common/space of the test's own, its
 * answers to our claims go to the test's vote_count_cb and its requests
 * for the turn's end to the test's vote_soon_fn, as main.c wires them to
 * take.c and urgent.c.  What it shows: vote_init registers the three
 * CLAIM_ACK kinds; a CLAIM_ACK from a neighbour counts for it, once, with
 * its ok; a malformed one is refused and counts nothing; an answer to a
 * linked holder's claim waits for the turn's end (it asks for it through
 * the soon function) and then leaves as one CLAIM_ACK on the urgent lane.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>

#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "space.h"
#include "stats.h"
#include "trace.h"
#include "vote.h"

#include "peerd_stub.h"

#include "fake_link.h"
#include "space_util.h"

static struct member	*a;
static struct space	*sp;
static unsigned		 ncount, nsoon;
static uint8_t		 count_id[ENTRY_ID_LEN], count_voter[IDENTITY_ID_LEN];
static uint64_t		 count_epoch;
static bool		 count_ok;

static void
count(const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
    const uint8_t voter[IDENTITY_ID_LEN], bool ok)
{
	ncount++;
	memcpy(count_id, id, ENTRY_ID_LEN);
	memcpy(count_voter, voter, IDENTITY_ID_LEN);
	count_epoch = epoch;
	count_ok = ok;
}

static void
soon(void)
{
	nsoon++;
}

static void
setup(void)
{
	uint8_t id[IDENTITY_ID_LEN];

	stub_conf();
	stub_daemon("test_vote");
	fake_link_reset();
	ncount = nsoon = 0;
	vote_init(count, soon);
	memset(id, 0xaa, sizeof(id));
	a = member_get(id, "a", "127.0.0.1:1");
	fake_link_up(a, 0);
	sp = space_new(pd->ident.node, pd->ident.id, 100);
}

static void
teardown(void)
{
	space_free(sp);
	vote_free();
	member_free_all();	/* stub_free less the replica: there is none */
	trace_free();
	event_base_free(pd->base);
	identity_free(&pd->ident);
	fake_link_reset();
}

/* A CLAIM_ACK body {ok, entry, epoch}, by vote.c's own encoder. */
static void
ack_body(struct dcbor_buf *b, bool ok, const uint8_t id[ENTRY_ID_LEN],
    uint64_t epoch)
{
	dcbor_buf_init(b);
	vote_ack_put(b, ok, id, epoch);
}

START_TEST(claim_ack_kinds_are_registered)
{
	ck_assert_ptr_nonnull(fake_handlers[FRAME_CLAIM_ACK]);
	ck_assert_ptr_nonnull(fake_handlers[FRAME_CLAIM_ACK_RELAY]);
	ck_assert_ptr_nonnull(fake_handlers[FRAME_CLAIM_ACKS]);
	ck_assert_ptr_null(fake_handlers[FRAME_RUMOR]);
}
END_TEST

START_TEST(a_claim_ack_counts_for_its_sender)
{
	uint8_t id[ENTRY_ID_LEN];
	struct dcbor_buf b;

	memset(id, 0x42, sizeof(id));
	ack_body(&b, true, id, 3);
	ck_assert_int_eq(vote_recv_ack(a, b.data, b.len), 0);
	ck_assert_uint_eq(ncount, 1);
	ck_assert(count_ok);
	ck_assert_uint_eq(count_epoch, 3);
	ck_assert_mem_eq(count_id, id, ENTRY_ID_LEN);
	ck_assert_mem_eq(count_voter, a->id, IDENTITY_ID_LEN);
	/* Truncated: refused, nothing counted. */
	ck_assert_int_eq(vote_recv_ack(a, b.data, b.len - 1), -1);
	ck_assert_uint_eq(ncount, 1);
	dcbor_buf_free(&b);
	/* A refusal counts as one. */
	ack_body(&b, false, id, 3);
	ck_assert_int_eq(vote_recv_ack(a, b.data, b.len), 0);
	ck_assert_uint_eq(ncount, 2);
	ck_assert(!count_ok);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(an_answer_waits_for_the_turn_end)
{
	uint64_t now = hlc_wall_ms();
	struct entry *e = mk("task#v1", "{\"n\": 1}", now, 1, 3600000);
	uint8_t id[ENTRY_ID_LEN];
	struct space_rec *r;
	struct crdt_claim c;
	struct dcbor_rd rd;
	uint64_t n, epoch;
	bool ok;

	memcpy(id, e->id, ENTRY_ID_LEN);
	ck_assert_int_eq(space_write(sp, e, now), SPACE_OK);
	ck_assert_ptr_nonnull(r = space_get(sp, id));
	/* a's claim, active: a lease-mode answer to a linked holder. */
	memset(&c, 0, sizeof(c));
	c.epoch = 1;
	memcpy(c.holder, a->id, IDENTITY_ID_LEN);
	c.expiry_ms = now + 60000;
	vote_claim_answer(r, &c, a, now);
	ck_assert_uint_eq(nsoon, 1);
	ck_assert_uint_eq(fake_nsent, 0);	/* not before the turn's end */
	vote_acks_flush();
	ck_assert_uint_eq(fake_nsent, 1);
	ck_assert_ptr_eq(fake_sent[0].to, a);
	ck_assert_uint_eq(fake_sent[0].kind, FRAME_CLAIM_ACK);
	ck_assert(fake_sent[0].urgent);
	dcbor_rd_init(&rd, fake_sent[0].body, fake_sent[0].len);
	ck_assert_int_eq(dcbor_get_map(&rd, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(dcbor_get_key(&rd, "ok"), 0);
	ck_assert_int_eq(dcbor_get_bool(&rd, &ok), 0);
	ck_assert(ok);
	ck_assert_int_eq(dcbor_get_key(&rd, "entry"), 0);
	ck_assert_int_eq(dcbor_skip(&rd), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "epoch"), 0);
	ck_assert_int_eq(dcbor_get_uint(&rd, &epoch), 0);
	ck_assert_uint_eq(epoch, 1);
	ck_assert_uint_eq(pd_metrics.claim_acks_sent, 1);
	/* Flushed: nothing more leaves. */
	vote_acks_flush();
	ck_assert_uint_eq(fake_nsent, 1);
}
END_TEST

static Suite *
vote_suite(void)
{
	Suite *s = suite_create("vote");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, claim_ack_kinds_are_registered);
	tcase_add_test(tc, a_claim_ack_counts_for_its_sender);
	tcase_add_test(tc, an_answer_waits_for_the_turn_end);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(vote_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_reconcile.c: peerd's anti-entropy (recon.c and the digest method,
 * digest.c) against a neighbour played by the test, on fake links
 * (fake_link.h) and a fake store (fake_store.h): no link.c, no replica.c,
 * no replica_init.  What it shows: recon_init and
 * digest_init register their kinds; a link that comes up catches up at
 * once (the digest with --reconcile digest; a negentropy session started
 * by the end with the lower id only); the periodic repair leaves when its
 * period has passed and says when the next is due; a DIGEST is answered
 * with the records of the buckets that differ, read from the store.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <event2/event.h>

#include "clock.h"
#include "dcbor.h"
#include "digest.h"
#include "frame.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "recon.h"
#include "replica.h"
#include "space.h"
#include "stats.h"
#include "trace.h"

#include "peerd_stub.h"

#include "fake_link.h"
#include "fake_store.h"
#include "record_util.h"

static struct member *
neighbour(uint8_t idb, const char *name)
{
	uint8_t id[IDENTITY_ID_LEN];

	memset(id, idb, sizeof(id));
	return member_get(id, name, "127.0.0.1:1");
}

static void
setup(void)
{
	stub_conf();
	pd->conf.gossip_ms = 3600000;	/* no periodic repair unless asked */
	stub_daemon("test_reconcile");
	fake_link_reset();
	fake_store_init();		/* no replica_init: the fake store */
	recon_init();
	digest_init();
}

static void
teardown(void)
{
	recon_free();
	stub_free();
	fake_link_reset();
}

/* Frames of kind sent to m. */
static size_t
sent_to(const struct member *m, uint32_t kind)
{
	size_t n = 0;

	for (size_t i = 0; i < fake_nsent; i++)
		n += fake_sent[i].to == m && fake_sent[i].kind == kind;
	return n;
}

/* The store holds records n0 .. n0 + k - 1 (record_util.h). */
static void
hold(uint32_t n0, uint32_t k)
{
	struct dcbor_buf items;
	struct dcbor_rd rd;

	for (uint32_t n = n0; n < n0 + k; n++) {
		items_for(&items, n);
		dcbor_rd_init(&rd, items.data, items.len);
		ck_assert_int_eq(replica_apply_items(NULL, &rd), 0);
		dcbor_buf_free(&items);
	}
}

START_TEST(kinds_are_registered)
{
	static const uint32_t mine[] = { FRAME_RECON_NEG, FRAME_RECON_SYMS,
	    FRAME_RECON_ACK, FRAME_RECON_RECS, FRAME_RECON_END, FRAME_DIGEST,
	    FRAME_PULL_RESP };

	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
		ck_assert_ptr_nonnull(fake_handlers[mine[i]]);
	ck_assert_ptr_null(fake_handlers[FRAME_RUMOR]);
	ck_assert_ptr_null(fake_handlers[FRAME_PING]);
}
END_TEST

START_TEST(a_link_up_sends_the_digest)
{
	struct member *a = neighbour(0xaa, "a");
	uint64_t mine[DIGEST_BUCKETS], v, n;
	struct dcbor_rd rd;

	pd->conf.reconcile = RECON_DIGEST;
	hold(1, 3);
	fake_link_up(a, 0);
	ck_assert_uint_eq(fake_nsent, 1);
	ck_assert_uint_eq(sent_to(a, FRAME_DIGEST), 1);
	ck_assert_uint_eq(pd_metrics.digests_sent, 1);
	/* {"b": [the store's digest]} */
	replica_digest(mine, DIGEST_BUCKETS);
	dcbor_rd_init(&rd, fake_sent[0].body, fake_sent[0].len);
	ck_assert_int_eq(dcbor_get_map(&rd, &n), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "b"), 0);
	ck_assert_int_eq(dcbor_get_array(&rd, &n), 0);
	ck_assert_uint_eq(n, DIGEST_BUCKETS);
	for (size_t i = 0; i < DIGEST_BUCKETS; i++) {
		ck_assert_int_eq(dcbor_get_uint(&rd, &v), 0);
		ck_assert_uint_eq(v, mine[i]);
	}
	/* With the digest the period never backs off. */
	ck_assert_uint_eq(recon_repair_period_ms(), pd->conf.gossip_ms);
}
END_TEST

START_TEST(a_link_up_starts_a_session_from_the_lower_id)
{
	struct member *lo = neighbour(0x00, "lo"), *hi = neighbour(0xff, "hi");

	pd->conf.reconcile = RECON_NEGENTROPY;
	hold(1, 2);
	fake_link_up(hi, 0);		/* we are the lower id: we start */
	ck_assert_uint_eq(sent_to(hi, FRAME_RECON_NEG), 1);
	ck_assert_uint_eq(sent_to(hi, FRAME_DIGEST), 0);
	fake_link_clear();
	fake_link_up(lo, 1);		/* the other end starts this one */
	ck_assert_uint_eq(fake_nsent, 0);
}
END_TEST

START_TEST(the_periodic_repair_waits_for_its_period)
{
	struct timespec ts = { 0, 1000000 };
	struct member *a = neighbour(0xaa, "a");
	uint64_t next, t, t1, t2, end;

	pd->conf.reconcile = RECON_DIGEST;
	pd->conf.gossip_ms = pd->conf.repair_max_ms = 60000;
	t = clock_mono_ms();
	recon_free();
	recon_init();			/* the period starts now */
	fake_link_up(a, 0);
	fake_link_clear();
	next = recon_tick();
	ck_assert_uint_eq(fake_nsent, 0);	/* not due yet */
	ck_assert_uint_ge(next, t + 60000);
	ck_assert_uint_le(next, clock_mono_ms() + 60000);
	/* A period of 20 ms, past (bounded wait, no sleep for a time). */
	pd->conf.gossip_ms = pd->conf.repair_max_ms = 20;
	end = clock_mono_ms() + 5000;
	while (clock_mono_ms() < next - 60000 + 20 && clock_mono_ms() < end)
		nanosleep(&ts, NULL);
	t1 = clock_mono_ms();
	next = recon_tick();
	t2 = clock_mono_ms();
	ck_assert_uint_eq(sent_to(a, FRAME_DIGEST), 1);
	/* The next one is a period after this one. */
	ck_assert_uint_ge(next, t1 + 20);
	ck_assert_uint_le(next, t2 + 20);
}
END_TEST

START_TEST(a_digest_is_answered_with_the_differing_records)
{
	struct member *a = neighbour(0xaa, "a");
	struct dcbor_buf b;
	struct dcbor_rd rd;
	uint64_t n, ndiff, nrecs;
	bool more, final;

	pd->conf.reconcile = RECON_DIGEST;
	fake_link_up(a, 0);
	hold(1, 2);
	fake_link_clear();
	/* All zeros: every bucket holding a record differs. */
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "b");
	dcbor_put_array(&b, DIGEST_BUCKETS);
	for (size_t i = 0; i < DIGEST_BUCKETS; i++)
		dcbor_put_uint(&b, 0);
	ck_assert_int_eq(digest_recv(a, FRAME_DIGEST, b.data, b.len), 0);
	dcbor_buf_free(&b);
	ck_assert_uint_eq(sent_to(a, FRAME_PULL_RESP), 1);
	dcbor_rd_init(&rd, fake_sent[0].body, fake_sent[0].len);
	ck_assert_int_eq(dcbor_get_map(&rd, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(dcbor_get_key(&rd, "diff"), 0);
	ck_assert_int_eq(dcbor_get_array(&rd, &ndiff), 0);
	ck_assert_uint_ge(ndiff, 1);
	ck_assert_uint_le(ndiff, 2);
	for (uint64_t i = 0; i < ndiff; i++)
		ck_assert_int_eq(dcbor_skip(&rd), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "more"), 0);
	ck_assert_int_eq(dcbor_get_bool(&rd, &more), 0);
	ck_assert(!more);
	ck_assert_int_eq(dcbor_get_key(&rd, "recs"), 0);
	ck_assert_int_eq(dcbor_get_array(&rd, &nrecs), 0);
	ck_assert_uint_eq(nrecs, 2);
	for (uint64_t i = 0; i < nrecs; i++)
		ck_assert_int_eq(dcbor_skip(&rd), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "final"), 0);
	ck_assert_int_eq(dcbor_get_bool(&rd, &final), 0);
	ck_assert(!final);
	ck_assert_uint_eq(pd_metrics.delta_entries, 2);
	/* A malformed digest closes the link. */
	ck_assert_int_eq(digest_recv(a, FRAME_DIGEST,
	    (const uint8_t *)"\xa0", 1), -1);
}
END_TEST

static Suite *
reconcile_suite(void)
{
	Suite *s = suite_create("reconcile");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, kinds_are_registered);
	tcase_add_test(tc, a_link_up_sends_the_digest);
	tcase_add_test(tc, a_link_up_starts_a_session_from_the_lower_id);
	tcase_add_test(tc, the_periodic_repair_waits_for_its_period);
	tcase_add_test(tc, a_digest_is_answered_with_the_differing_records);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(reconcile_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_gossip.c: membership bodies after the handshake, through view_recv,
 * with a daemon state but no sockets (members have no link, so nothing is
 * sent).  What a peer receives must be refused or bounded, never trusted
 * to size the receiver's tables: an advertisement feeds the passive view
 * (bounded by --passive, a quarter of it per sender) and never the member
 * table, which only a handshake grows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <event2/event.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
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

static struct member *from;

static void
setup(void)
{
	uint8_t seed[IDENTITY_SEED_LEN], id[IDENTITY_ID_LEN];

	pd = &td;
	memset(pd, 0, sizeof(*pd));
	pd->conf.name = "t";
	pd->conf.group = "fleet";
	pd->conf.gossip_ms = 1000;
	pd->conf.hops = 6;
	pd->conf.active = 5;
	pd->conf.passive = 30;
	pd->conf.shuffle_ms = 1000;
	pd->conf.rate_burst = 100;
	pd->conf.max_links = 8;
	pd->conf.max_frame = 8u << 20;
	pd->conf.max_entries = 100;
	log_init("test_gossip", LOG_LVL_ERROR, NULL);
	memset(seed, 7, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&pd->ident, seed), 0);
	pd->base = event_base_new();
	ck_assert_ptr_nonnull(pd->base);
	trace_init(64);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	replica_init();
	ck_assert_int_eq(link_init("127.0.0.1:0", pd->listen_addr,
	    sizeof(pd->listen_addr)), 0);
	view_init();
	memset(id, 0xee, sizeof(id));
	from = member_get(id, "sender", "127.0.0.1:1");
}

static void
teardown(void)
{
	view_free();
	link_shutdown();
	stub_free();
}

/* {"members": [n made-up members]} */
static void
group_ad(struct dcbor_buf *b, size_t n)
{
	dcbor_put_map(b, 1);
	dcbor_put_cstr(b, "members");
	dcbor_put_array(b, n);
	for (size_t i = 0; i < n; i++) {
		uint8_t id[IDENTITY_ID_LEN];

		memset(id, 0, sizeof(id));
		memcpy(id, &i, sizeof(i));
		id[31] = 0x5a;
		dcbor_put_map(b, 3);
		dcbor_put_cstr(b, "id");
		dcbor_put_bytes(b, id, sizeof(id));
		dcbor_put_cstr(b, "addr");
		{
			char addr[32];

			snprintf(addr, sizeof(addr), "127.0.0.1:%zu",
			    1000 + i);
			dcbor_put_cstr(b, addr);
		}
		dcbor_put_cstr(b, "name");
		dcbor_put_cstr(b, "made-up");
	}
}

START_TEST(group_ad_bounded)
{
	struct dcbor_buf b;
	uint64_t refused;

	dcbor_buf_init(&b);
	group_ad(&b, 1000);
	ck_assert_int_eq(view_recv(from, FRAME_GROUP_AD, b.data, b.len), 0);
	/* No member from an advertisement; one sender fills a quarter. */
	ck_assert_uint_eq(member_count(), 1);
	ck_assert_uint_eq(view_passive_count(), pd->conf.passive / 4);
	refused = pd_metrics.view_refused;
	ck_assert_uint_eq(refused, 1000 - pd->conf.passive / 4);
	/* The same again adds nothing. */
	ck_assert_int_eq(view_recv(from, FRAME_GROUP_AD, b.data, b.len), 0);
	ck_assert_uint_eq(view_passive_count(), pd->conf.passive / 4);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(group_ad_small_fits)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	group_ad(&b, 3);
	ck_assert_int_eq(view_recv(from, FRAME_GROUP_AD, b.data, b.len), 0);
	ck_assert_uint_eq(view_passive_count(), 3);
	ck_assert_uint_eq(member_count(), 1);
	ck_assert_uint_eq(pd_metrics.view_refused, 0);
	/* A truncated advertisement is malformed. */
	ck_assert_int_eq(view_recv(from, FRAME_GROUP_AD, b.data, b.len - 1),
	    -1);
	dcbor_buf_free(&b);
}
END_TEST

/* A peer entry {id, addr, name} numbered k. */
static void
peer_entry(struct dcbor_buf *b, size_t k)
{
	uint8_t id[IDENTITY_ID_LEN];
	char addr[32];

	memset(id, 0, sizeof(id));
	memcpy(id, &k, sizeof(k));
	id[31] = 0x77;
	snprintf(addr, sizeof(addr), "127.0.0.1:%zu", 20000 + k % 40000);
	dcbor_put_map(b, 3);
	dcbor_put_cstr(b, "id");
	dcbor_put_bytes(b, id, sizeof(id));
	dcbor_put_cstr(b, "addr");
	dcbor_put_cstr(b, addr);
	dcbor_put_cstr(b, "name");
	dcbor_put_cstr(b, "made-up");
}

START_TEST(shuffle_flood_bounded)
{
	struct dcbor_buf b;

	for (size_t f = 0; f < 1000; f++) {
		dcbor_buf_init(&b);
		dcbor_put_map(&b, 2);
		dcbor_put_cstr(&b, "peers");
		dcbor_put_array(&b, 8);
		for (size_t k = 0; k < 8; k++)
			peer_entry(&b, f * 8 + k);
		dcbor_put_cstr(&b, "reply");
		dcbor_put_bool(&b, (f & 1) != 0);
		ck_assert_int_eq(view_recv(from, FRAME_SHUFFLE, b.data, b.len),
		    0);
		dcbor_buf_free(&b);
	}
	ck_assert_uint_eq(pd_metrics.view_shuffle_received, 1000);
	ck_assert_uint_le(view_passive_count(), pd->conf.passive / 4);
	ck_assert_uint_eq(member_count(), 1);
}
END_TEST

START_TEST(forward_join_flood_bounded)
{
	struct dcbor_buf b;

	pd->conf.max_links = 64;
	for (size_t f = 0; f < 1000; f++) {
		dcbor_buf_init(&b);
		dcbor_put_map(&b, 2);
		dcbor_put_cstr(&b, "ttl");
		dcbor_put_uint(&b, f % 3 == 0 ? 0 : 1000000);
		dcbor_put_cstr(&b, "peer");
		peer_entry(&b, f);
		ck_assert_int_eq(view_recv(from, FRAME_FORWARD_JOIN, b.data,
		    b.len), 0);
		dcbor_buf_free(&b);
	}
	/* Dials (to ports nobody listens on) and addresses stay bounded. */
	ck_assert_uint_le(view_dials_count(), VIEW_DIALS);
	ck_assert_uint_le(link_count(), VIEW_DIALS);
	ck_assert_uint_le(view_passive_count(), pd->conf.passive / 4);
	ck_assert_uint_eq(member_count(), 1);
	/* A truncated one is malformed. */
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 2);
	dcbor_put_cstr(&b, "ttl");
	dcbor_put_uint(&b, 1);
	ck_assert_int_eq(view_recv(from, FRAME_FORWARD_JOIN, b.data, b.len),
	    -1);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(join_flood_counted_once)
{
	for (int f = 0; f < 1000; f++)
		ck_assert_int_eq(view_recv(from, FRAME_JOIN,
		    (const uint8_t *)"\xa0", 1), 0);
	ck_assert_uint_eq(pd_metrics.view_join_received, 1);
	ck_assert_uint_eq(pd_metrics.view_refused, 999);
	/* JOIN and DISCONNECT take an empty map and nothing else. */
	ck_assert_int_eq(view_recv(from, FRAME_JOIN, (const uint8_t *)"\xf6",
	    1), -1);
	ck_assert_int_eq(view_recv(from, FRAME_DISCONNECT,
	    (const uint8_t *)"\xa0\x00", 2), -1);
	ck_assert_int_eq(view_recv(from, FRAME_NEIGHBOR,
	    (const uint8_t *)"\xa0", 1), -1);
}
END_TEST

/*
 * An advertised address that refuses connections is dialed with backoff,
 * forgotten after VIEW_FAILS_MAX failures, and not learnt again.
 */
START_TEST(refusing_address_backed_off_and_forgotten)
{
	struct timespec ts = { 0, 5000000 };
	struct dcbor_buf b;
	uint64_t end;

	pd->conf.max_links = 64;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "members");
	dcbor_put_array(&b, 1);
	dcbor_put_map(&b, 3);
	dcbor_put_cstr(&b, "id");
	dcbor_put_bytes(&b, (const uint8_t[IDENTITY_ID_LEN]){ 0x33 },
	    IDENTITY_ID_LEN);
	dcbor_put_cstr(&b, "addr");
	dcbor_put_cstr(&b, "127.0.0.1:1");	/* nothing listens there */
	dcbor_put_cstr(&b, "name");
	dcbor_put_cstr(&b, "refuser");
	ck_assert_int_eq(view_recv(from, FRAME_GROUP_AD, b.data, b.len), 0);
	ck_assert_uint_eq(view_passive_count(), 1);
	end = clock_mono_ms() + 30000;
	while (pd_metrics.view_forgotten == 0 && clock_mono_ms() < end) {
		view_tick();
		event_base_loop(pd->base, EVLOOP_NONBLOCK);
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_eq(pd_metrics.view_forgotten, 1);
	ck_assert_uint_eq(pd_metrics.view_dials_failed, VIEW_FAILS_MAX);
	ck_assert_uint_eq(view_passive_count(), 0);
	/* Advertised again: refused, and never dialed again. */
	ck_assert_int_eq(view_recv(from, FRAME_GROUP_AD, b.data, b.len), 0);
	ck_assert_uint_eq(view_passive_count(), 0);
	for (int i = 0; i < 20; i++) {
		view_tick();
		event_base_loop(pd->base, EVLOOP_NONBLOCK);
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_eq(pd_metrics.view_dials_failed, VIEW_FAILS_MAX);
	dcbor_buf_free(&b);
}
END_TEST

static Suite *
gossip_suite(void)
{
	Suite *s = suite_create("gossip");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);	/* the backoff test waits ~5 s */
	tcase_add_test(tc, group_ad_bounded);
	tcase_add_test(tc, group_ad_small_fits);
	tcase_add_test(tc, shuffle_flood_bounded);
	tcase_add_test(tc, forward_join_flood_bounded);
	tcase_add_test(tc, join_flood_counted_once);
	tcase_add_test(tc, refusing_address_backed_off_and_forgotten);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gossip_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

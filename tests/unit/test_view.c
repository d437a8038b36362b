/*
 * test_view.c: the view's timed rules (view_tick) with the links played by
 * the test (fake_link.h: a dial "starts" and the test brings its link up).
 * A swap changes the view by one link and never pushes it over --active
 * + 1 (the drop that started a chain of fills is gone); a linkless
 * member's suspect and dead labels follow the clock without arming the
 * tick, and are right whenever the member is looked at; an idle link is
 * pinged by its lower end first, its upper end pinging only later.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

#include "fake_clock.h"
#include "fake_link.h"

static void
setup(void)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	stub_conf();
	pd->conf.active = 3;
	pd->conf.passive = 30;
	pd->conf.swap_ms = 100;
	pd->conf.shuffle_ms = 3600000;	/* no SHUFFLE in the way */
	log_init("test_view", LOG_LVL_ERROR, NULL);
	memset(seed, 7, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&pd->ident, seed), 0);
	snprintf(pd->listen_addr, sizeof(pd->listen_addr), "127.0.0.1:9");
	pd->base = event_base_new();
	trace_init(64);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	replica_init();
	fake_link_reset();
	view_init();
}

static void
teardown(void)
{
	view_free();
	stub_free();
}

static struct member *
peer(uint8_t idb, const char *addr)
{
	uint8_t id[IDENTITY_ID_LEN];

	memset(id, idb, sizeof(id));
	return member_get(id, addr, addr);
}

/* m tells us of n passive peers 127.0.0.1:2000+i (a GROUP_AD). */
static void
tell_passive(struct member *m, size_t n)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "members");
	dcbor_put_array(&b, n);
	for (size_t i = 0; i < n; i++) {
		uint8_t id[IDENTITY_ID_LEN];
		char addr[32];

		memset(id, (int)(0x80 + i), sizeof(id));
		snprintf(addr, sizeof(addr), "127.0.0.1:%zu", 2000 + i);
		dcbor_put_map(&b, 3);
		dcbor_put_cstr(&b, "id");
		dcbor_put_bytes(&b, id, sizeof(id));
		dcbor_put_cstr(&b, "addr");
		dcbor_put_cstr(&b, addr);
		dcbor_put_cstr(&b, "name");
		dcbor_put_cstr(&b, addr);
	}
	ck_assert_int_eq(view_recv(m, FRAME_GROUP_AD, b.data, b.len), 0);
	dcbor_buf_free(&b);
}

static size_t
sent_of(uint32_t kind)
{
	size_t n = 0;

	for (size_t i = 0; i < fake_nsent; i++)
		n += fake_sent[i].kind == kind;
	return n;
}

/* Tick until the view has done `swaps` swaps (bounded: 5 s of ticks). */
static void
tick_until_swaps(uint64_t swaps)
{
	for (int i = 0; i < 1000 && pd_metrics.view_swaps < swaps; i++) {
		view_tick();
		fake_clock_advance_ms(5);
	}
	ck_assert_uint_eq(pd_metrics.view_swaps, swaps);
}

START_TEST(a_swap_changes_the_view_by_one_link)
{
	struct member *n[3], *new;

	for (size_t i = 0; i < 3; i++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "127.0.0.1:%zu", 1000 + i);
		n[i] = peer((uint8_t)(1 + i), addr);
		fake_link_up(n[i], i);
	}
	tell_passive(n[0], 3);
	ck_assert_uint_eq(view_active_count(), 3);
	fake_dial_ok = true;
	fake_link_clear();

	/* At exactly --active: the swap dials a passive peer and drops none. */
	tick_until_swaps(1);
	ck_assert_uint_eq(fake_ndialed, 1);
	ck_assert_uint_eq(sent_of(FRAME_DISCONNECT), 0);
	new = peer(0x77, fake_dialed[0]);
	fake_link_up(new, 5);
	/* Its link is kept: the view is one over --active, within its bound. */
	ck_assert_uint_eq(sent_of(FRAME_NEIGHBOR), 1);
	ck_assert_uint_eq(sent_of(FRAME_DISCONNECT), 0);
	ck_assert_uint_eq(view_active_count(), 4);
	ck_assert_uint_eq(pd_metrics.view_trims, 0);

	/* Over --active: the next swap sheds one link and dials nobody. */
	tick_until_swaps(2);
	ck_assert_uint_eq(sent_of(FRAME_DISCONNECT), 1);
	ck_assert_uint_eq(view_active_count(), 3);
	ck_assert_uint_eq(fake_ndialed, 1);
	ck_assert_uint_eq(pd_metrics.view_trims, 0);
	ck_assert_uint_eq(pd_metrics.view_dials, 1);
}
END_TEST

static const char *
state_of(const struct member *m)
{
	json_t *all = member_list_json(), *e;
	static char st[16];
	size_t i;

	st[0] = '\0';
	json_array_foreach(all, i, e)
		if (strcmp(json_string_value(json_object_get(e, "name")),
		    m->name) == 0)
			snprintf(st, sizeof(st), "%s", json_string_value(
			    json_object_get(e, "state")));
	json_decref(all);
	return st;
}

START_TEST(a_linkless_member_fades_without_waking_the_tick)
{
	struct member *m;
	uint64_t next;

	pd->conf.ping_timeout_ms = 10;
	pd->conf.silence_ms = 100;
	pd->conf.swap_ms = 3600000;
	m = peer(0x42, "127.0.0.1:1042");
	member_heard(m);	/* heard, and it has no link */
	view_tick();		/* a swap due at the start is out of the way */
	next = view_tick();
	/* Nothing to do for 10 s at least: the label is no reason to wake. */
	ck_assert_uint_gt(next, clock_mono_ms() + 10000);
	ck_assert_str_eq(state_of(m), "alive");
	fake_clock_advance_ms(30);	/* past the ping timeout */
	/* No tick ran, and the "peers" answer has it right. */
	ck_assert_str_eq(state_of(m), "suspect");
	ck_assert_uint_eq(pd_metrics.members_dead, 0);
	fake_clock_advance_ms(120);	/* past the silence window */
	view_tick();
	ck_assert_str_eq(state_of(m), "dead");
	ck_assert_uint_eq(pd_metrics.members_dead, 1);
	/* Heard again: alive at once. */
	member_heard(m);
	ck_assert_str_eq(state_of(m), "alive");
}
END_TEST

static size_t
pings_to(const struct member *m)
{
	size_t n = 0;

	for (size_t i = 0; i < fake_nsent; i++)
		n += fake_sent[i].kind == FRAME_PING && fake_sent[i].to == m;
	return n;
}

START_TEST(the_lower_id_pings_an_idle_link)
{
	uint8_t lo[IDENTITY_ID_LEN], hi[IDENTITY_ID_LEN];
	struct member *below, *above;
	uint64_t t0;

	/* Two neighbours, one with an id below ours, one above. */
	memset(lo, 0x00, sizeof(lo));
	memset(hi, 0xff, sizeof(hi));
	ck_assert_int_gt(memcmp(pd->ident.id, lo, sizeof(lo)), 0);
	ck_assert_int_lt(memcmp(pd->ident.id, hi, sizeof(hi)), 0);
	pd->conf.active = 2;
	pd->conf.silence_ms = 8000;	/* ping after 2 s, or 3 s */
	pd->conf.swap_ms = 3600000;
	below = member_get(lo, "below", "127.0.0.1:1001");
	above = member_get(hi, "above", "127.0.0.1:1002");
	fake_link_up(below, 0);
	fake_link_up(above, 1);
	member_heard(below);
	member_heard(above);
	t0 = clock_mono_ms();
	fake_link_clear();

	/* A quarter window idle: we ping the link whose other end is above
	 * us; the one below us pings us (its turn), so we do not. */
	fake_clock_to_ms(t0 + 2300);
	view_tick();
	ck_assert_uint_eq(pings_to(above), 1);
	ck_assert_uint_eq(pings_to(below), 0);
	/* Three eighths idle and still nothing heard from below (traffic one
	 * way, or its pings lost): we ping it too. */
	fake_clock_to_ms(t0 + 3300);
	view_tick();
	ck_assert_uint_eq(pings_to(below), 1);
	ck_assert_uint_eq(pings_to(above), 1);
}
END_TEST

static Suite *
view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("view");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a_swap_changes_the_view_by_one_link);
	tcase_add_test(tc, a_linkless_member_fades_without_waking_the_tick);
	tcase_add_test(tc, the_lower_id_pings_an_idle_link);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(view_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

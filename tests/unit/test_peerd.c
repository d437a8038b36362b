/*
 * test_peerd.c: units of the daemon that need no loop: the link state
 * machine's table, the per-sender receiver checks (member_admit) and the
 * fault filter.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "link.h"
#include "member.h"
#include "peerd.h"
#include "trace.h"

static struct peerd tpd;
struct peerd *pd = &tpd;

void
peerd_shutdown(const char *why)
{
	(void)why;
}

uint64_t
peerd_uptime_us(void)
{
	return 0;
}

static void
setup(void)
{
	memset(&tpd, 0, sizeof(tpd));
	tpd.conf.max_age_s = 300;
	tpd.conf.max_future_s = 600;
	tpd.conf.rate_burst = 5;
	tpd.conf.rate_per_s = 10;
	tpd.conf.strikes = 3;
	tpd.conf.quarantine_s = 600;
	trace_init(64);
	member_init();
}

static void
teardown(void)
{
	fault_clear();
	member_free_all();
	trace_free();
}

static struct member *
new_member(uint8_t tag)
{
	uint8_t id[IDENTITY_ID_LEN];
	char name[8];

	memset(id, tag, sizeof(id));
	snprintf(name, sizeof(name), "m%u", tag);
	return member_get(id, name, "127.0.0.1:1");
}

START_TEST(fsm_table)
{
	/* The handshake in order, from both starting states. */
	ck_assert_int_eq(link_fsm_next(LINK_CONNECTING, LINK_EV_CONNECTED),
	    LINK_HELLO_SENT);
	ck_assert_int_eq(link_fsm_next(LINK_HELLO_SENT, LINK_EV_HELLO),
	    LINK_PROOF_SENT);
	ck_assert_int_eq(link_fsm_next(LINK_PROOF_SENT, LINK_EV_PROOF),
	    LINK_UP);
	/* Everything out of order is refused. */
	ck_assert_int_eq(link_fsm_next(LINK_CONNECTING, LINK_EV_HELLO), -1);
	ck_assert_int_eq(link_fsm_next(LINK_CONNECTING, LINK_EV_PROOF), -1);
	ck_assert_int_eq(link_fsm_next(LINK_HELLO_SENT, LINK_EV_PROOF), -1);
	ck_assert_int_eq(link_fsm_next(LINK_HELLO_SENT, LINK_EV_CONNECTED), -1);
	ck_assert_int_eq(link_fsm_next(LINK_PROOF_SENT, LINK_EV_HELLO), -1);
	ck_assert_int_eq(link_fsm_next(LINK_UP, LINK_EV_HELLO), -1);
	ck_assert_int_eq(link_fsm_next(LINK_UP, LINK_EV_PROOF), -1);
	ck_assert_int_eq(link_fsm_next(LINK_DEAD, LINK_EV_CONNECTED), -1);
	/* A close is allowed from anywhere. */
	for (int s = LINK_CONNECTING; s <= LINK_DEAD; s++)
		ck_assert_int_eq(link_fsm_next((enum link_state)s,
		    LINK_EV_CLOSE), LINK_DEAD);
	ck_assert_str_eq(link_state_name(LINK_PROOF_SENT), "proof_sent");
}
END_TEST

START_TEST(admit_age_replay_future)
{
	struct member *m = new_member(1);
	struct hlc_stamp st = { .phys = 1000000, .logical = 0, .node = 1 };
	uint64_t wall = 1000000, now = 5000;
	enum metrics_reject why;

	ck_assert(member_admit(m, &st, wall, now, &why));
	/* The same stamp again is a replay; an older one too. */
	ck_assert(!member_admit(m, &st, wall, now, &why));
	ck_assert_int_eq(why, METRICS_REJECT_REPLAY);
	st.logical = 1;
	ck_assert(member_admit(m, &st, wall, now, &why));
	/* Exactly 300 s old passes (seen from 300 s later); older does not. */
	st.phys = wall + 1;
	ck_assert(member_admit(m, &st, wall + 1 + 300000, now, &why));
	st.logical = 2;
	ck_assert(!member_admit(m, &st, wall + 1 + 300001, now, &why));
	ck_assert_int_eq(why, METRICS_REJECT_TOO_OLD);
	/* More than 600 s ahead: a strike; three strikes quarantine. */
	st.phys = wall + 600001;
	ck_assert(!member_admit(m, &st, wall, now, &why));
	ck_assert_int_eq(why, METRICS_REJECT_FUTURE_STRIKE);
	ck_assert(!member_admit(m, &st, wall, now, &why));
	ck_assert(!member_admit(m, &st, wall, now, &why));
	ck_assert_uint_eq(m->strikes, 3);
	st.phys = wall + 10;
	ck_assert(!member_admit(m, &st, wall, now, &why));
	ck_assert_int_eq(why, METRICS_REJECT_QUARANTINED);
	/* Ten minutes later it is heard again. */
	ck_assert(member_admit(m, &st, wall, now + 600001, &why));
}
END_TEST

START_TEST(admit_rate)
{
	struct member *m = new_member(2);
	struct hlc_stamp st = { .phys = 1000000, .logical = 0, .node = 2 };
	enum metrics_reject why;
	int ok = 0;

	m->tokens = 5;
	m->tokens_ms = 100;
	for (int i = 0; i < 10; i++) {
		st.logical++;
		ok += member_admit(m, &st, 1000000, 100, &why);
	}
	ck_assert_int_eq(ok, 5);		/* the burst */
	ck_assert_int_eq(why, METRICS_REJECT_RATE_LIMITED);
	st.logical++;
	/* 10 frames/s: after 100 ms one more token. */
	ck_assert(member_admit(m, &st, 1000000, 200, &why));
	st.logical++;
	ck_assert(!member_admit(m, &st, 1000000, 200, &why));
}
END_TEST

START_TEST(fault_filter)
{
	struct member *a = new_member(3), *b = new_member(4);
	char msg[256];
	const char *js;
	json_t *args;
	uint64_t delay;
	int drops = 0;

	ck_assert_int_eq(fault_on_send(a->id, &delay), 0);
	ck_assert_uint_eq(delay, 0);
	ck_assert(!fault_on_recv(a->id));

	args = json_pack("{s:s, s:f}", "peer", "m3", "drop", 1.0);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), 0);
	json_decref(args);
	ck_assert_int_eq(fault_on_send(a->id, &delay), -1);
	ck_assert_int_eq(fault_on_send(b->id, &delay), 0);

	fault_seed(42);
	args = json_pack("{s:s, s:f, s:i, s:i}", "peer", "*", "drop", 0.5,
	    "delay_ms", 10, "jitter_ms", 5);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), 0);
	json_decref(args);
	for (int i = 0; i < 1000; i++) {
		if (fault_on_send(b->id, &delay) == -1)
			drops++;
		else
			ck_assert(delay >= 10000 && delay <= 15000);
	}
	ck_assert(drops > 400 && drops < 600);
	/* The rule for a named peer wins over "*". */
	ck_assert_int_eq(fault_on_send(a->id, &delay), -1);

	js = "{\"partition\": [\"m4\"]}";
	args = json_loads(js, 0, NULL);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), 0);
	json_decref(args);
	ck_assert(fault_on_recv(b->id));
	ck_assert_int_eq(fault_on_send(b->id, &delay), -1);
	ck_assert(!fault_on_recv(a->id));
	/* An empty partition heals. */
	args = json_loads("{\"partition\": []}", 0, NULL);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), 0);
	json_decref(args);
	ck_assert(!fault_on_recv(b->id));

	/* Bad requests say what is wrong and change nothing. */
	args = json_loads("{\"peer\": \"nobody\", \"drop\": 0.1}", 0, NULL);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), -1);
	ck_assert_ptr_nonnull(strstr(msg, "unknown peer"));
	json_decref(args);
	args = json_loads("{\"peer\": \"m3\", \"drop\": 2}", 0, NULL);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), -1);
	json_decref(args);
	args = json_loads("{\"partition\": [\"m3\", 7]}", 0, NULL);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), -1);
	json_decref(args);

	args = json_loads("{\"clear\": true}", 0, NULL);
	ck_assert_int_eq(fault_apply(args, msg, sizeof(msg)), 0);
	json_decref(args);
	ck_assert_int_eq(fault_on_send(a->id, &delay), 0);
	args = fault_json();
	ck_assert_uint_eq(json_array_size(args), 0);
	json_decref(args);
}
END_TEST

static Suite *
peerd_suite(void)
{
	Suite *s = suite_create("peerd");
	TCase *tc = tcase_create("units");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, fsm_table);
	tcase_add_test(tc, admit_age_replay_future);
	tcase_add_test(tc, admit_rate);
	tcase_add_test(tc, fault_filter);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(peerd_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

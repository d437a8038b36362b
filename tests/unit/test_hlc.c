/*
 * test_hlc.c: the hybrid logical clock (common/hlc.c) on random inputs
 * (seeded; HLC_TEST_SEED to reproduce, the seed is in every failure
 * message): stamps never go backwards, update dominates both inputs, the
 * 600 s cap holds, the logical counter saturates; and the encodings.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "hlc.h"

static uint64_t seed, rng;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
setup(void)
{
	const char *e = getenv("HLC_TEST_SEED");

	seed = e != NULL ? strtoull(e, NULL, 10) : 20261130;
	rng = seed ? seed : 1;
}

START_TEST(now_never_goes_backwards)
{
	struct hlc c;
	struct hlc_stamp prev = { 0, 0, 0 }, s;
	uint64_t wall = 1700000000000ull;

	hlc_init(&c, 42);
	for (int i = 0; i < 100000; i++) {
		/* The wall clock jumps forward, stalls, or steps back. */
		switch (next() % 4) {
		case 0: wall += next() % 1000; break;
		case 1: break;
		case 2: wall -= next() % 5000; break;
		default: wall += 1; break;
		}
		s = hlc_now(&c, wall);
		ck_assert_msg(hlc_cmp(&s, &prev) > 0, "seed %llu step %d",
		    (unsigned long long)seed, i);
		ck_assert_msg(s.node == 42, "seed %llu", (unsigned long long)seed);
		ck_assert_msg(s.phys >= wall || s.phys == prev.phys,
		    "seed %llu: physical part behind the wall", (unsigned long
		    long)seed);
		prev = s;
	}
}
END_TEST

START_TEST(update_dominates_both_inputs)
{
	struct hlc c;
	struct hlc_stamp last, remote, out, prev = { 0, 0, 0 };
	uint64_t wall = 1700000000000ull;

	hlc_init(&c, 7);
	for (int i = 0; i < 100000; i++) {
		bool capped;

		wall += next() % 50;
		last = c.last;
		remote.phys = wall - 10000 + next() % 20000;
		remote.logical = (uint32_t)(next() % 5);
		remote.node = next() % 100;
		capped = hlc_update(&c, &remote, wall, &out);
		ck_assert_msg(!capped, "seed %llu", (unsigned long long)seed);
		ck_assert_msg(hlc_cmp(&out, &last) > 0, "seed %llu step %d: "
		    "behind the local clock", (unsigned long long)seed, i);
		/* Greater than the remote in (phys, logical). */
		ck_assert_msg(out.phys > remote.phys || (out.phys ==
		    remote.phys && out.logical > remote.logical),
		    "seed %llu step %d: behind the remote",
		    (unsigned long long)seed, i);
		ck_assert_msg(hlc_cmp(&out, &prev) > 0, "seed %llu",
		    (unsigned long long)seed);
		prev = out;
		if (next() % 3 == 0) {
			out = hlc_now(&c, wall);
			ck_assert(hlc_cmp(&out, &prev) > 0);
			prev = out;
		}
	}
}
END_TEST

START_TEST(remote_far_ahead_is_capped)
{
	struct hlc c;
	struct hlc_stamp r = { 0, 3, 9 }, out;
	uint64_t wall = 1700000000000ull;

	hlc_init(&c, 1);
	r.phys = wall + HLC_MAX_AHEAD_MS;
	ck_assert(!hlc_update(&c, &r, wall, &out));
	ck_assert_uint_eq(out.phys, wall + HLC_MAX_AHEAD_MS);
	r.phys = wall + HLC_MAX_AHEAD_MS + 1000 * 1000;
	ck_assert(hlc_update(&c, &r, wall + 1, &out));
	ck_assert(out.phys <= wall + 1 + HLC_MAX_AHEAD_MS);
	/* Still never backwards. */
	ck_assert(hlc_cmp(&out, &c.last) == 0);
}
END_TEST

START_TEST(logical_saturates)
{
	struct hlc c;
	struct hlc_stamp s, r;
	uint64_t wall = 1000;

	hlc_init(&c, 1);
	c.last.phys = wall;
	c.last.logical = UINT32_MAX - 1;
	s = hlc_now(&c, wall);
	ck_assert_uint_eq(s.logical, UINT32_MAX);
	s = hlc_now(&c, wall);
	ck_assert_uint_eq(s.logical, UINT32_MAX);	/* no wrap */
	r.phys = wall;
	r.logical = UINT32_MAX;
	r.node = 2;
	hlc_update(&c, &r, wall, &s);
	ck_assert_uint_eq(s.logical, UINT32_MAX);
	s = hlc_now(&c, wall + 1);
	ck_assert_uint_eq(s.logical, 0);
	ck_assert_uint_eq(s.phys, wall + 1);
}
END_TEST

START_TEST(order_and_encodings)
{
	struct hlc_stamp a = { 5, 1, 9 }, b = { 5, 2, 1 }, c = { 6, 0, 0 };
	struct hlc_stamp d = { 5, 1, 10 }, back;
	struct dcbor_buf buf;
	struct dcbor_rd rd;
	char text[HLC_TEXT_MAX];

	ck_assert(hlc_cmp(&a, &b) < 0 && hlc_cmp(&b, &c) < 0);
	ck_assert(hlc_cmp(&a, &d) < 0 && hlc_cmp(&d, &a) > 0);
	ck_assert(hlc_cmp(&a, &a) == 0);
	dcbor_buf_init(&buf);
	for (int i = 0; i < 1000; i++) {
		struct hlc_stamp s = { next(), (uint32_t)next(), next() };

		dcbor_buf_reset(&buf);
		hlc_encode(&buf, &s);
		ck_assert_int_eq(dcbor_check(buf.data, buf.len, 64, true, NULL),
		    DCBOR_OK);
		dcbor_rd_init(&rd, buf.data, buf.len);
		ck_assert_int_eq(hlc_parse(&rd, &back), 0);
		ck_assert(hlc_cmp(&s, &back) == 0);
		hlc_format(&s, text, sizeof(text));
		ck_assert_int_eq(hlc_parse_text(text, &back), 0);
		ck_assert(hlc_cmp(&s, &back) == 0);
	}
	/* Wrong shapes: two items, a logical part over 32 bits, text. */
	dcbor_buf_reset(&buf);
	dcbor_put_array(&buf, 2);
	dcbor_put_uint(&buf, 1);
	dcbor_put_uint(&buf, 2);
	dcbor_rd_init(&rd, buf.data, buf.len);
	ck_assert_int_eq(hlc_parse(&rd, &back), -1);
	dcbor_buf_reset(&buf);
	dcbor_put_array(&buf, 3);
	dcbor_put_uint(&buf, 1);
	dcbor_put_uint(&buf, (uint64_t)UINT32_MAX + 1);
	dcbor_put_uint(&buf, 2);
	dcbor_rd_init(&rd, buf.data, buf.len);
	ck_assert_int_eq(hlc_parse(&rd, &back), -1);
	dcbor_buf_reset(&buf);
	dcbor_put_cstr(&buf, "1.2.3");
	dcbor_rd_init(&rd, buf.data, buf.len);
	ck_assert_int_eq(hlc_parse(&rd, &back), -1);
	dcbor_buf_free(&buf);
	ck_assert_int_eq(hlc_parse_text("", &back), -1);
	ck_assert_int_eq(hlc_parse_text("1.2", &back), -1);
	ck_assert_int_eq(hlc_parse_text("1.99999999999.3", &back), -1);
	ck_assert_int_eq(hlc_parse_text("1.2.zz", &back), -1);
	ck_assert_int_eq(hlc_parse_text("1.2.3x", &back), -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hlc");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, now_never_goes_backwards);
	tcase_add_test(tc, update_dominates_both_inputs);
	tcase_add_test(tc, remote_far_ahead_is_capped);
	tcase_add_test(tc, logical_saturates);
	tcase_add_test(tc, order_and_encodings);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_rng.c: common/rng.h's generators give the reference sequences
 * (splitmix64 from state 0; xorshift64 13/7/17 from state 1), so every
 * program that draws from them (riblt, picker, publish, fault, the
 * engine, the benchmarks) draws what it drew when each had its own copy.
 */
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "rng.h"

START_TEST(splitmix64_reference)
{
	uint64_t s = 0;

	ck_assert_uint_eq(rng_splitmix64(&s), 0xe220a8397b1dcdafull);
	ck_assert_uint_eq(rng_splitmix64(&s), 0x6e789e6aa1b965f4ull);
	ck_assert_uint_eq(rng_splitmix64(&s), 0x06c45d188009454full);
	ck_assert_uint_eq(s, 3 * 0x9e3779b97f4a7c15ull);
}
END_TEST

START_TEST(xorshift64_reference)
{
	uint64_t s = 1;

	ck_assert_uint_eq(rng_xorshift64(&s), 0x40822041ull);
	ck_assert_uint_eq(s, 0x40822041ull);	/* the state is the output */
	ck_assert_uint_eq(rng_xorshift64(&s), 0x100041060c011441ull);
	ck_assert_uint_eq(rng_xorshift64(&s), 0x9b1e842f6e862629ull);
	s = 0;
	ck_assert_uint_eq(rng_xorshift64(&s), 0);	/* 0 is its fixed point */
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rng");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, splitmix64_reference);
	tcase_add_test(tc, xorshift64_reference);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

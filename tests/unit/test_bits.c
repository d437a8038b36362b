/*
 * test_bits.c: common/bit.h (a bitfield's bit i, the most significant bit
 * of byte 0 first), common/be.h (big-endian integers) and common/u64.h
 * (the uint64_t comparator and saturating sum): the byte order the wire
 * and the piece index expect, and the edges.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "be.h"
#include "bit.h"
#include "u64.h"

START_TEST(bits_msb_first)
{
	uint8_t b[2] = { 0, 0 };

	bit_set(b, 0);
	ck_assert_uint_eq(b[0], 0x80);
	bit_set(b, 9);
	ck_assert_uint_eq(b[1], 0x40);
	ck_assert(bit_get(b, 0) && bit_get(b, 9));
	ck_assert(!bit_get(b, 1) && !bit_get(b, 8) && !bit_get(b, 15));
	bit_clear(b, 0);
	ck_assert_uint_eq(b[0], 0);
	ck_assert(bit_get(b, 9));
	bit_set(b, 9);			/* idempotent */
	ck_assert_uint_eq(b[1], 0x40);
}
END_TEST

START_TEST(be_round_trip)
{
	uint8_t p[8];

	be_put64(p, 0x0102030405060708ull);
	ck_assert_mem_eq(p, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	ck_assert_uint_eq(be_get64(p), 0x0102030405060708ull);
	be_put32(p, 0xdeadbeef);
	ck_assert_mem_eq(p, "\xde\xad\xbe\xef", 4);
	ck_assert_uint_eq(be_get32(p), 0xdeadbeef);
	be_put64(p, UINT64_MAX);
	ck_assert_uint_eq(be_get64(p), UINT64_MAX);
}
END_TEST

START_TEST(u64_cmp_sorts)
{
	uint64_t v[] = { UINT64_MAX, 0, 1ull << 63, 5, 5, 1 };
	uint64_t a = 1, b = UINT64_MAX;

	qsort(v, 6, sizeof(v[0]), u64_cmp);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_uint_eq(v[1], 1);
	ck_assert_uint_eq(v[2], 5);
	ck_assert_uint_eq(v[3], 5);
	ck_assert_uint_eq(v[4], 1ull << 63);
	ck_assert_uint_eq(v[5], UINT64_MAX);
	/* No subtraction: the far ends compare right. */
	ck_assert_int_lt(u64_cmp(&a, &b), 0);
	ck_assert_int_gt(u64_cmp(&b, &a), 0);
	ck_assert_int_eq(u64_cmp(&a, &a), 0);
}
END_TEST

START_TEST(u64_sat_add_saturates)
{
	ck_assert_uint_eq(u64_sat_add(2, 3), 5);
	ck_assert_uint_eq(u64_sat_add(UINT64_MAX - 1, 1), UINT64_MAX);
	ck_assert_uint_eq(u64_sat_add(UINT64_MAX - 1, 2), UINT64_MAX);
	ck_assert_uint_eq(u64_sat_add(UINT64_MAX, UINT64_MAX), UINT64_MAX);
	ck_assert_uint_eq(u64_sat_add(0, UINT64_MAX), UINT64_MAX);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("bits");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, bits_msb_first);
	tcase_add_test(tc, be_round_trip);
	tcase_add_test(tc, u64_cmp_sorts);
	tcase_add_test(tc, u64_sat_add_saturates);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_text.c: the small text helpers: UTF-8 validity and scrubbing
 * (common/utf8.c) and hexadecimal (common/hex.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "utf8.h"

START_TEST(utf8_valid_and_not)
{
	static const struct { const char *s; size_t n; bool ok; } cases[] = {
		{ "", 0, true },
		{ "plain ascii", 11, true },
		{ "caf\xc3\xa9", 5, true },			/* é */
		{ "\xe2\x82\xac", 3, true },			/* € */
		{ "\xf0\x9f\x98\x80", 4, true },		/* U+1F600 */
		{ "\xf4\x8f\xbf\xbf", 4, true },		/* U+10FFFF */
		{ "\x80", 1, false },				/* lone continuation */
		{ "\xc3", 1, false },				/* cut short */
		{ "\xc0\xaf", 2, false },			/* overlong '/' */
		{ "\xe0\x80\xaf", 3, false },			/* overlong */
		{ "\xed\xa0\x80", 3, false },			/* surrogate */
		{ "\xf4\x90\x80\x80", 4, false },		/* past U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", 5, false },		/* 5-byte form */
		{ "a\xe2\x82", 3, false },			/* cut inside */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(utf8_valid(cases[i].s, cases[i].n) == cases[i].ok,
		    "case %zu", i);
}
END_TEST

START_TEST(utf8_scrub_keeps_valid_text)
{
	char a[] = "caf\xc3\xa9 \xe2\x82\xac";
	char b[] = "x\x80y\xc3";
	char c[] = "\xed\xa0\x80z";

	utf8_scrub(a);
	ck_assert_str_eq(a, "caf\xc3\xa9 \xe2\x82\xac");
	utf8_scrub(b);
	ck_assert_str_eq(b, "x?y?");
	utf8_scrub(c);
	ck_assert_str_eq(c, "???z");
	ck_assert(utf8_valid(b, strlen(b)) && utf8_valid(c, strlen(c)));
}
END_TEST

START_TEST(hex_round_trip_and_refusals)
{
	uint8_t in[32], out[32];
	char text[65];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 37 + 11);
	hex_encode(in, sizeof(in), text);
	ck_assert_uint_eq(strlen(text), 64);
	ck_assert_int_eq(hex_decode(text, out, sizeof(out)), 0);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_int_eq(hex_decode("ABcd", out, 2), 0);
	ck_assert_uint_eq(out[0], 0xab);
	ck_assert_uint_eq(out[1], 0xcd);
	ck_assert_int_eq(hex_decode("abc", out, 2), -1);	/* short */
	ck_assert_int_eq(hex_decode("abcdef", out, 2), -1);	/* long */
	ck_assert_int_eq(hex_decode("zz00", out, 2), -1);
	ck_assert_int_eq(hex_digit('f'), 15);
	ck_assert_int_eq(hex_digit('G'), -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, utf8_valid_and_not);
	tcase_add_test(tc, utf8_scrub_keeps_valid_text);
	tcase_add_test(tc, hex_round_trip_and_refusals);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

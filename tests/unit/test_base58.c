/*
 * test_base58.c: base58btc against published vectors (Bitcoin, IETF
 * draft-msporny-base58), random round trips, and rejection of bad input.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base58.h"

struct vec {
	const char	*hex;
	const char	*text;
};

static const struct vec vectors[] = {
	{ "", "" },
	{ "00", "1" },
	{ "0000", "11" },
	{ "61", "2g" },
	{ "626262", "a3gV" },
	{ "636363", "aPEr" },
	{ "0000287fb4cd", "11233QC4" },
	{ "00eb15231dfceb60925886b67d065299925915aeb172c06647",
	    "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L" },
	{ "516b6fcd0f", "ABnLTmg" },
	{ "bf4f89001e670274dd", "3SEo3LWLoPntC" },
	{ "572e4794", "3EFU7m" },
	{ "ecac89cad93923c02321", "EJDM8drfXA6uyA" },
	{ "10c8511e", "Rt5zm" },
	{ "00000000000000000000", "1111111111" },
	/* draft-msporny-base58-03 section 5 */
	{ "48656c6c6f20576f726c6421", "2NEpo7TZRRrLZSi2U" },
	{ "54686520717569636b2062726f776e20666f78206a756d7073206f76657220"
	  "746865206c617a7920646f672e",
	  "USm3fpXnKG5EUBx2ndxBDMPVciP5hGey2Jh4NDv6gmeo1LkMeiKrLJUUBk6Z" },
};

static size_t
unhex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		ck_assert(sscanf(hex + 2 * i, "%2x", &v) == 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

START_TEST(test_vectors)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		uint8_t bin[128], back[128];
		char text[256];
		size_t n, m;

		n = unhex(vectors[i].hex, bin);
		ck_assert_uint_eq(base58_encode(bin, n, text, sizeof(text)),
		    strlen(vectors[i].text));
		ck_assert_str_eq(text, vectors[i].text);
		ck_assert_int_eq(base58_decode(vectors[i].text, back,
		    sizeof(back), &m), 0);
		ck_assert_uint_eq(m, n);
		ck_assert_mem_eq(back, bin, n);
	}
}
END_TEST

START_TEST(test_hello_world_string)
{
	const char *msg = "Hello World!";
	char text[64];

	base58_encode((const uint8_t *)msg, strlen(msg), text, sizeof(text));
	ck_assert_str_eq(text, "2NEpo7TZRRrLZSi2U");
}
END_TEST

START_TEST(test_round_trip_random)
{
	unsigned int seed = 0x5eed58u;

	for (int iter = 0; iter < 2000; iter++) {
		uint8_t in[80], back[80];
		char text[BASE58_ENCODED_MAX(sizeof(in))];
		size_t n = (size_t)(rand_r(&seed) % (int)sizeof(in)), m, len;
		size_t zeros = (size_t)(rand_r(&seed) % 4);

		for (size_t i = 0; i < n; i++)
			in[i] = i < zeros ? 0 : (uint8_t)rand_r(&seed);
		len = base58_encode(in, n, text, sizeof(text));
		ck_assert_uint_eq(len, strlen(text));
		ck_assert(n == 0 || len > 0);
		ck_assert_int_eq(base58_decode(text, back, sizeof(back), &m),
		    0);
		ck_assert_uint_eq(m, n);
		ck_assert_mem_eq(back, in, n);
	}
}
END_TEST

START_TEST(test_all_ff_fits_bound)
{
	uint8_t in[64];
	char text[BASE58_ENCODED_MAX(sizeof(in))];

	for (size_t n = 1; n <= sizeof(in); n++) {
		memset(in, 0xff, n);
		ck_assert_uint_gt(base58_encode(in, n, text,
		    BASE58_ENCODED_MAX(n)), 0);
	}
}
END_TEST

START_TEST(test_reject_invalid)
{
	const char *bad[] = { "0", "O", "I", "l", "2NEpo7TZRRrLZSi2U0",
	    "abc def", "+", "\xff", "1111O" };
	uint8_t out[64];
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(base58_decode(bad[i], out, sizeof(out), &n),
		    -1);
}
END_TEST

START_TEST(test_output_too_small)
{
	const uint8_t in[] = { 0x00, 0x00, 0x28, 0x7f, 0xb4, 0xcd };
	uint8_t out[8];
	char text[16];
	size_t n;

	/* "11233QC4" needs 9 bytes with the NUL. */
	ck_assert_uint_eq(base58_encode(in, sizeof(in), text, 8), 0);
	ck_assert_str_eq(text, "");
	ck_assert_uint_eq(base58_encode(in, sizeof(in), text, 1), 0);
	ck_assert_uint_eq(base58_encode(in, sizeof(in), text, 9), 8);
	ck_assert_int_eq(base58_decode("11233QC4", out, 5, &n), -1);
	ck_assert_int_eq(base58_decode("11233QC4", out, 1, &n), -1);
	ck_assert_int_eq(base58_decode("11233QC4", out, 6, &n), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_mem_eq(out, in, 6);
}
END_TEST

static Suite *
base58_suite(void)
{
	Suite *s = suite_create("base58");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_vectors);
	tcase_add_test(tc, test_hello_world_string);
	tcase_add_test(tc, test_round_trip_random);
	tcase_add_test(tc, test_all_ff_fits_bound);
	tcase_add_test(tc, test_reject_invalid);
	tcase_add_test(tc, test_output_too_small);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(base58_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

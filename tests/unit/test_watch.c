/*
 * test_watch.c: the watchdog's round by fleet size (watch.c): one second
 * up to 200 peers, 5 ms a peer beyond, and --watch-ms over both.
 */
#include <check.h>

#include "engine.h"

START_TEST(test_round_by_size)
{
	ck_assert_uint_eq(watch_round_ms(0, 0), WATCH_EVERY_MS);
	ck_assert_uint_eq(watch_round_ms(3, 0), 1000);
	ck_assert_uint_eq(watch_round_ms(200, 0), 1000);
	ck_assert_uint_eq(watch_round_ms(201, 0), 1005);
	ck_assert_uint_eq(watch_round_ms(1000, 0), 5000);
	ck_assert_uint_eq(watch_round_ms(1024, 0), 5120);
	/* --watch-ms wins either way. */
	ck_assert_uint_eq(watch_round_ms(3, 4000), 4000);
	ck_assert_uint_eq(watch_round_ms(1000, 300), 300);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("watch");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_round_by_size);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

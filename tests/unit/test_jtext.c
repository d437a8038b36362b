/*
 * test_jtext.c: common/jtext.c, the JSON writer of the control socket's
 * replies and of peerctl: every real in its shortest round-trip form
 * (jansson wrote 0.020531 as 0.020531000000000001), without an exponent
 * where Python's repr has none (240 at two digits is not 2.4e+02), an
 * integral real keeping ".0", strings escaped as JSON wants.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jtext.h"

START_TEST(test_reals_shortest)
{
	static const struct {
		double		 d;
		const char	*want;
	} cases[] = {
		{ 0.020531, "0.020531" }, { 240, "240" }, { 0.1, "0.1" },
		{ 1.0 / 3, "0.3333333333333333" }, { 2145960.5, "2145960.5" },
		{ 1e-300, "1e-300" }, { 1e20, "1e+20" }, { 0.0001, "0.0001" },
		{ 0.00001, "1e-05" }, { -12.5, "-12.5" },
		{ 123456789012345680.0, "1.2345678901234568e+17" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_str_eq(jtext_real(cases[i].d, buf, sizeof(buf)),
		    cases[i].want);
		ck_assert(strtod(buf, NULL) == cases[i].d);
	}
}
END_TEST

START_TEST(test_dumps)
{
	json_t *j = json_pack("{s:f, s:f, s:[i, s, b, n], s:{}}", "a", 60.0,
	    "b", 0.020531, "c", 7, "q\"\\\n\x01é", 1, "d");
	char *c = jtext_dumps(j, 0), *i = jtext_dumps(j, 2);
	json_t *back = json_loads(c, 0, NULL);

	ck_assert_str_eq(c, "{\"a\":60.0,\"b\":0.020531,\"c\":[7,"
	    "\"q\\\"\\\\\\n\\u0001é\",true,null],\"d\":{}}");
	ck_assert_str_eq(i, "{\n  \"a\": 60.0,\n  \"b\": 0.020531,\n  \"c\": "
	    "[\n    7,\n    \"q\\\"\\\\\\n\\u0001é\",\n    true,\n    null\n"
	    "  ],\n  \"d\": {}\n}");
	/* read back, the same document, 60.0 still a real */
	ck_assert(json_equal(back, j));
	ck_assert(json_is_real(json_object_get(back, "a")));
	free(c);
	free(i);
	json_decref(back);
	json_decref(j);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("jtext");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_reals_shortest);
	tcase_add_test(tc, test_dumps);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

/*
 * test_knob.c: the one knob list (common/knob.h) against what is made from
 * it: peerd's defaults (conf_defaults), the scenario parser's ranges, and
 * the knob table of docs/scenarios.md, which must be exactly the rows the
 * list gives (the expected table is printed when it is not).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knob.h"
#include "peerd.h"
#include "scenario.h"

#define DOC		"docs/scenarios.md"
#define BEGIN_MARK	"<!-- knobs: begin -->\n"
#define END_MARK	"<!-- knobs: end -->\n"

/* The docs table the list gives (malloc'd). */
static char *
expected_table(void)
{
	size_t cap = 16384, len = 0;
	char *out = malloc(cap);

	len += (size_t)snprintf(out + len, cap - len, "| knob | values | "
	    "default | meaning |\n|---|---|---|---|\n");
	for (size_t i = 0; i < knob_count; i++) {
		const struct knob *k = &knob_table[i];
		char vals[128], def[64];

		if (k->type == KNOB_U32) {
			snprintf(vals, sizeof(vals), "int %llu..%llu", k->min,
			    k->max);
			snprintf(def, sizeof(def), "%llu", k->def);
		} else if (k->type == KNOB_SWITCH) {
			snprintf(vals, sizeof(vals), "0 or 1 (1 passes `--%s`)",
			    k->name);
			snprintf(def, sizeof(def), "%llu", k->def);
		} else {
			const char *const *w = knob_words(k);
			size_t vl = 0;

			vals[0] = '\0';
			for (size_t j = 0; w[j] != NULL; j++)
				vl += (size_t)snprintf(vals + vl, sizeof(vals) - vl,
				    "%s`\"%s\"`", j > 0 ? ", " : "", w[j]);
			snprintf(def, sizeof(def), "`\"%s\"`", w[k->def]);
		}
		len += (size_t)snprintf(out + len, cap - len,
		    "| `%s` | %s | %s | %s |\n", k->name, vals, def, k->help);
		ck_assert_uint_lt(len, cap);
	}
	return out;
}

START_TEST(docs_table_matches_list)
{
	FILE *fp = fopen(DOC, "r");
	char *text, *want, *b, *e;
	long n;

	ck_assert_ptr_nonnull(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	text = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(text, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	b = strstr(text, BEGIN_MARK);
	ck_assert_msg(b != NULL, DOC " has no " BEGIN_MARK);
	b += strlen(BEGIN_MARK);
	e = strstr(b, END_MARK);
	ck_assert_msg(e != NULL, DOC " has no " END_MARK);
	*e = '\0';
	want = expected_table();
	if (strcmp(b, want) != 0)
		fprintf(stderr, "the knob table of " DOC " should be:\n%s",
		    want);
	ck_assert_str_eq(b, want);
	free(want);
	free(text);
}
END_TEST

START_TEST(defaults_come_from_list)
{
	struct peerd_conf c;

	conf_defaults(&c);
	ck_assert_uint_eq(c.settle_ms, knob_find("settle-ms")->def);
	ck_assert_uint_eq(c.rate_per_s, knob_find("rate")->def);
	ck_assert_uint_eq(c.max_frame, knob_find("max-frame")->def);
	ck_assert_str_eq(c.log_level, "info");
	ck_assert(!c.test_hooks);
	ck_assert_ptr_null(knob_find("nope"));
	ck_assert_int_eq(knob_word(knob_find("log-level"), "debug"), 3);
	ck_assert_int_eq(knob_word(knob_find("log-level"), "loud"), -1);
}
END_TEST

/* The parser takes each knob's bounds and refuses one past them. */
START_TEST(parser_ranges_come_from_list)
{
	char text[512], err[512];
	json_t *res;

	for (size_t i = 0; i < knob_count; i++) {
		const struct knob *k = &knob_table[i];

		if (knob_words(k) != NULL)
			continue;
		snprintf(text, sizeof(text), "{\"name\": \"k\", \"description\": \"d\", \"fleet\": "
		    "{\"peers\": 1, \"knobs\": {\"%s\": %llu}}, \"steps\": "
		    "[{\"action\": \"start\"}]}", k->name, k->max);
		res = scenario_parse(text, strlen(text), "k.json", NULL, 0, err,
		    sizeof(err));
		ck_assert_msg(res != NULL, "%s: %s", k->name, err);
		json_decref(res);
		snprintf(text, sizeof(text), "{\"name\": \"k\", \"description\": \"d\", \"fleet\": "
		    "{\"peers\": 1, \"knobs\": {\"%s\": %llu}}, \"steps\": "
		    "[{\"action\": \"start\"}]}", k->name, k->max + 1);
		res = scenario_parse(text, strlen(text), "k.json", NULL, 0, err,
		    sizeof(err));
		ck_assert_msg(res == NULL, "%s accepted %llu", k->name,
		    k->max + 1);
	}
}
END_TEST

static Suite *
knob_suite(void)
{
	Suite *s = suite_create("knob");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, docs_table_matches_list);
	tcase_add_test(tc, defaults_come_from_list);
	tcase_add_test(tc, parser_ranges_come_from_list);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(knob_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * doc_blocks.h: the worked examples of a doc page are what the code
 * produces, byte for byte (test_docs for docs/protocol.md, test_docs_content
 * for docs/content.md).
 *
 * A test makes each example with the real encoders into ex_new(NAME) and
 * calls doc_blocks_check(PAGE) (its main: doc_blocks_main): the page must have exactly these blocks,
 * each a fenced block opened by "```hex NAME", with exactly these bytes,
 * and no other.  DOCS_PRINT=1 prints the blocks instead, for pasting into
 * the page after a deliberate change.
 */
#ifndef DOC_BLOCKS_H
#define DOC_BLOCKS_H

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "hex.h"

#define MAX_EX		64

struct example {
	char		 name[32];
	struct dcbor_buf b;
};

static struct example	 ex[MAX_EX];
static size_t		 nex;

static struct dcbor_buf *
ex_new(const char *name)
{
	struct example *x;

	ck_assert_uint_lt(nex, MAX_EX);
	x = &ex[nex++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	dcbor_buf_init(&x->b);
	return &x->b;
}

static void
ex_bytes(const char *name, const void *p, size_t n)
{
	dcbor_put_raw(ex_new(name), p, n);
}

/* The hex digits of the doc's block "```hex name", or NULL. */
static char *
doc_block(const char *doc, const char *name)
{
	char open[64];
	const char *p, *end;
	char *hex;
	size_t n = 0;

	snprintf(open, sizeof(open), "```hex %.32s\n", name);
	if ((p = strstr(doc, open)) == NULL)
		return NULL;
	p += strlen(open);
	if ((end = strstr(p, "```")) == NULL)
		return NULL;
	hex = calloc(1, (size_t)(end - p) + 1);
	for (; p < end; p++)
		if (isxdigit((unsigned char)*p))
			hex[n++] = *p;
	return hex;
}

static char *
slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *s;
	long n;

	ck_assert_msg(fp != NULL, "open %s (run from the repository root)",
	    path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	s = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return s;
}

static char *
to_hex(const struct dcbor_buf *b)
{
	char *s = calloc(1, 2 * b->len + 1);

	hex_encode(b->data, b->len, s);
	return s;
}

static void
print_block(const struct example *x)
{
	char *s = to_hex(&x->b);
	size_t n = strlen(s);

	printf("```hex %s\n", x->name);
	for (size_t i = 0; i < n; i += 64)
		printf("%.*s\n", (int)(n - i < 64 ? n - i : 64), s + i);
	printf("```\n\n");
	free(s);
}

/* Check (or with DOCS_PRINT print) every example against page; free them. */
static void
doc_blocks_check(const char *page)
{
	char *doc = slurp(page);
	size_t blocks = 0;
	const char *p;

	if (getenv("DOCS_PRINT") != NULL)
		for (size_t i = 0; i < nex; i++)
			print_block(&ex[i]);
	for (size_t i = 0; i < nex; i++) {
		char *want = to_hex(&ex[i].b), *got = doc_block(doc, ex[i].name);

		ck_assert_msg(got != NULL, "%s: no block \"```hex %s\"", page,
		    ex[i].name);
		ck_assert_msg(strcmp(got, want) == 0,
		    "%s: block %s is not what the code produces:\n"
		    "doc:  %s\ncode: %s", page, ex[i].name, got, want);
		free(got);
		free(want);
	}
	/* And no block the code does not make (a stale example). */
	for (p = doc; (p = strstr(p, "```hex ")) != NULL; p++)
		blocks++;
	ck_assert_uint_eq(blocks, nex);
	for (size_t i = 0; i < nex; i++)
		dcbor_buf_free(&ex[i].b);
	nex = 0;
	free(doc);
}

/* A main that runs the one test, unforked under DOCS_PRINT: its exit code. */
static int
doc_blocks_main(const char *suite, const TTest *test)
{
	Suite *s = suite_create(suite);
	TCase *tc = tcase_create("examples");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, getenv("DOCS_PRINT") ? CK_NOFORK :
	    CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}

#endif

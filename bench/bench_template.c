/*
 * bench_template.c: the Template family (the seed's TemplateBenchmark):
 * template_match, the inner loop of read, take and notify routing, on one
 * entry of eight fields (fixture.h; here number 7: kind "test", prio 9,
 * owner "agent-7", title "compile module 7 of the fleet lab").
 *
 * Rows: the type alone; one eq on text; a range (prio gt 3); "in" with 8
 * operands whose last one matches; contains on the title text; a
 * conjunction of 4 conditions (eq, gte, in of 8, contains) that matches;
 * and the same conjunction with its last condition failing (nomatch_4),
 * so the non-matching case does all the work before it says no.
 * type_only is the baseline of the others: the ratio is what the
 * conditions add to the type compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dcbor.h"
#include "entry.h"
#include "fixture.h"
#include "template.h"

enum tcase {
	T_TYPE, T_EQ, T_GT, T_IN8, T_CONTAINS, T_CONJ4, T_NOMATCH4,
};

struct tpl_state {
	struct entry	*e;
	struct template	*t;
	bool		 want;		/* the expected answer */
};

static void
tpl_teardown(void *state)
{
	struct tpl_state *st = state;

	entry_free(st->e);
	if (st->t != NULL)
		template_free(st->t);
	free(st);
}

static int
add_text(struct template *t, const char *field, enum template_op op,
    const char *s)
{
	struct dcbor_buf b;
	char err[128];
	int rc;

	dcbor_buf_init(&b);
	dcbor_put_cstr(&b, s);
	rc = template_add(t, field, op, b.data, b.len, err, sizeof(err));
	dcbor_buf_free(&b);
	return rc;
}

static int
add_uint(struct template *t, const char *field, enum template_op op,
    uint64_t v)
{
	struct dcbor_buf b;
	char err[128];
	int rc;

	dcbor_buf_init(&b);
	dcbor_put_uint(&b, v);
	rc = template_add(t, field, op, b.data, b.len, err, sizeof(err));
	dcbor_buf_free(&b);
	return rc;
}

/* owner in ["agent-0", ..., "agent-7"]: the entry's owner is the last. */
static int
add_in8(struct template *t)
{
	struct dcbor_buf b;
	char err[128], s[16];
	int rc;

	dcbor_buf_init(&b);
	dcbor_put_array(&b, 8);
	for (int i = 0; i < 8; i++) {
		snprintf(s, sizeof(s), "agent-%d", i);
		dcbor_put_cstr(&b, s);
	}
	rc = template_add(t, "owner", TEMPLATE_IN, b.data, b.len, err,
	    sizeof(err));
	dcbor_buf_free(&b);
	return rc;
}

static int
tpl_setup(void **state, size_t param)
{
	struct tpl_state *st;
	struct template *t;
	int rc = 0;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	if ((st->e = fixture_entry(7, 1764480000000ull, 60000,
	    FIXTURE_KIND_ALT)) == NULL)
		return -1;
	if ((st->t = t = template_new(FIXTURE_TYPE)) == NULL)
		return -1;
	st->want = true;
	switch ((enum tcase)param) {
	case T_TYPE:
		break;
	case T_EQ:
		rc = add_text(t, "kind", TEMPLATE_EQ, "test");
		break;
	case T_GT:
		rc = add_uint(t, "prio", TEMPLATE_GT, 3);
		break;
	case T_IN8:
		rc = add_in8(t);
		break;
	case T_CONTAINS:
		rc = add_text(t, "title", TEMPLATE_CONTAINS, "fleet");
		break;
	case T_CONJ4:
	case T_NOMATCH4:
		if (add_text(t, "kind", TEMPLATE_EQ, "test") == -1 ||
		    add_uint(t, "prio", TEMPLATE_GTE, 5) == -1 ||
		    add_in8(t) == -1)
			return -1;
		if (param == T_CONJ4)
			rc = add_text(t, "title", TEMPLATE_CONTAINS, "fleet");
		else {
			rc = add_text(t, "title", TEMPLATE_CONTAINS, "swarm");
			st->want = false;
		}
		break;
	}
	if (rc == -1 || template_match(st->t, st->e) != st->want)
		return -1;
	return 0;
}

static int
run_match(void *state, uint64_t n)
{
	struct tpl_state *st = state;
	uint64_t hits = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->e);
		hits += template_match(st->t, st->e);
	}
	if (hits != (st->want ? n : 0))
		return -1;
	bench_consume(hits);
	return 0;
}

#define ROW(name, base, c) \
	{ "Template." name, base, c, tpl_setup, run_match, tpl_teardown, NULL }

static const struct bench_row template_rows[] = {
	ROW("type_only", NULL, T_TYPE),
	ROW("eq", "Template.type_only", T_EQ),
	ROW("gt", "Template.type_only", T_GT),
	ROW("in_8", "Template.type_only", T_IN8),
	ROW("contains_text", "Template.type_only", T_CONTAINS),
	ROW("conj_4", "Template.type_only", T_CONJ4),
	ROW("nomatch_4", "Template.type_only", T_NOMATCH4),
};

const struct bench_family bench_family_template = {
	"Template", template_rows, BENCH_NROWS(template_rows)
};

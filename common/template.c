/*
 * template.c: building and matching templates (template.h).  Everything
 * that can be worked out once (operand parsing, "in" element lists, field
 * name lengths) is done when the template is built, so the per-entry
 * match is a walk of the entry's field map and a few comparisons.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "jcbor.h"
#include "template.h"
#include "xmalloc.h"

static const struct {
	const char		*name;
	enum template_op	 op;
} op_names[] = {
	{ "eq", TEMPLATE_EQ }, { "ne", TEMPLATE_NE }, { "lt", TEMPLATE_LT },
	{ "lte", TEMPLATE_LTE }, { "gt", TEMPLATE_GT },
	{ "gte", TEMPLATE_GTE }, { "in", TEMPLATE_IN },
	{ "contains", TEMPLATE_CONTAINS }, { "null", TEMPLATE_NULL },
	{ "notnull", TEMPLATE_NOTNULL }, { "isNull", TEMPLATE_NULL },
	{ "notNull", TEMPLATE_NOTNULL },
};

int
template_op_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strcmp(op_names[i].name, name) == 0)
			return (int)op_names[i].op;
	return -1;
}

const char *
template_op_name(enum template_op op)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (op_names[i].op == op)
			return op_names[i].name;
	return "unknown";
}

struct template *
template_new(const char *type)
{
	struct template *t;
	size_t n = strlen(type);

	if (!entry_type_valid(type, n))
		return NULL;
	t = xcalloc(1, sizeof(*t));
	memcpy(t->type, type, n + 1);
	return t;
}

void
template_free(struct template *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nconds; i++) {
		free(t->conds[i].field);
		free(t->conds[i].operand);
		free(t->conds[i].items);
	}
	free(t->conds);
	free(t);
}

int
template_add(struct template *t, const char *field, enum template_op op,
    const uint8_t *operand, size_t operand_len, char *err, size_t errlen)
{
	struct template_cond c;
	struct dcbor_rd rd;
	size_t flen = strlen(field);
	bool wants = op != TEMPLATE_NULL && op != TEMPLATE_NOTNULL;

	if ((unsigned)op > TEMPLATE_NOTNULL) {
		snprintf(err, errlen, "unknown op");
		return -1;
	}
	if (t->nconds >= TEMPLATE_MAX_CONDS) {
		snprintf(err, errlen, "more than %d conditions",
		    TEMPLATE_MAX_CONDS);
		return -1;
	}
	if (flen == 0 || flen > TEMPLATE_FIELD_MAX) {
		snprintf(err, errlen, "field name empty or over %d bytes",
		    TEMPLATE_FIELD_MAX);
		return -1;
	}
	if (wants != (operand != NULL)) {
		snprintf(err, errlen, wants ? "%s: \"value\" missing" :
		    "%s takes no \"value\"", template_op_name(op));
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.op = op;
	if (wants) {
		if (dcbor_check(operand, operand_len, DCBOR_MAX_DEPTH, true,
		    NULL) != DCBOR_OK) {
			snprintf(err, errlen, "%s: value is not canonical CBOR",
			    field);
			return -1;
		}
		c.operand = xmemdup(operand, operand_len);
		c.operand_len = operand_len;
		dcbor_rd_init(&rd, c.operand, c.operand_len);
		if (val_read(&rd, &c.v) == -1) {
			snprintf(err, errlen, "%s: unsupported value", field);
			free(c.operand);
			return -1;
		}
	}
	if (op == TEMPLATE_IN) {
		if (c.v.type != VAL_ARRAY || c.v.n > TEMPLATE_IN_MAX) {
			snprintf(err, errlen, "%s: \"in\" needs an array of at "
			    "most %d values", field, TEMPLATE_IN_MAX);
			free(c.operand);
			return -1;
		}
		c.nitems = c.v.n;
		c.items = xreallocarray(NULL, c.nitems ? c.nitems : 1,
		    sizeof(*c.items));
		val_iter(&c.v, &rd);
		for (size_t i = 0; i < c.nitems; i++)
			if (val_read(&rd, &c.items[i]) == -1) {
				snprintf(err, errlen, "%s: unsupported value "
				    "in array", field);
				free(c.items);
				free(c.operand);
				return -1;
			}
	}
	c.field = xstrdup(field);
	c.field_len = flen;
	t->conds = xreallocarray(t->conds, t->nconds + 1, sizeof(*t->conds));
	t->conds[t->nconds++] = c;
	return 0;
}

static int
cond_from_json(struct template *t, const json_t *w, size_t idx, char *err,
    size_t errlen)
{
	struct dcbor_buf b;
	const char *key, *field, *opname;
	json_t *f, *o, *v, *m;
	char e2[160];
	int op, rc;

	if (!json_is_object(w)) {
		snprintf(err, errlen, "where[%zu]: not an object", idx);
		return -1;
	}
	json_object_foreach((json_t *)w, key, m) {
		if (strcmp(key, "field") != 0 && strcmp(key, "op") != 0 &&
		    strcmp(key, "value") != 0) {
			snprintf(err, errlen, "where[%zu]: unknown key \"%s\"",
			    idx, key);
			return -1;
		}
	}
	f = json_object_get(w, "field");
	o = json_object_get(w, "op");
	v = json_object_get(w, "value");
	if (!json_is_string(f)) {
		snprintf(err, errlen, "where[%zu]: \"field\" missing or not a "
		    "string", idx);
		return -1;
	}
	if (!json_is_string(o)) {
		snprintf(err, errlen, "where[%zu]: \"op\" missing or not a "
		    "string", idx);
		return -1;
	}
	field = json_string_value(f);
	opname = json_string_value(o);
	if ((op = template_op_parse(opname)) == -1) {
		snprintf(err, errlen, "where[%zu]: unknown op \"%s\"", idx,
		    opname);
		return -1;
	}
	dcbor_buf_init(&b);
	if (v != NULL && jcbor_from_json(&b, v, e2, sizeof(e2)) == -1) {
		snprintf(err, errlen, "where[%zu]: value: %s", idx, e2);
		dcbor_buf_free(&b);
		return -1;
	}
	rc = template_add(t, field, (enum template_op)op,
	    v != NULL ? b.data : NULL, b.len, e2, sizeof(e2));
	if (rc == -1)
		snprintf(err, errlen, "where[%zu]: %s", idx, e2);
	dcbor_buf_free(&b);
	return rc;
}

struct template *
template_from_json(const json_t *j, char *err, size_t errlen)
{
	struct template *t;
	const char *key;
	json_t *ty, *where, *m;
	size_t i;

	if (!json_is_object(j)) {
		snprintf(err, errlen, "template is not an object");
		return NULL;
	}
	json_object_foreach((json_t *)j, key, m) {
		if (strcmp(key, "type") != 0 && strcmp(key, "where") != 0) {
			snprintf(err, errlen, "unknown key \"%s\"", key);
			return NULL;
		}
	}
	ty = json_object_get(j, "type");
	if (!json_is_string(ty)) {
		snprintf(err, errlen, "\"type\" missing or not a string");
		return NULL;
	}
	if ((t = template_new(json_string_value(ty))) == NULL) {
		snprintf(err, errlen, "bad type \"%s\" (want name#vN)",
		    json_string_value(ty));
		return NULL;
	}
	where = json_object_get(j, "where");
	if (where == NULL)
		return t;
	if (!json_is_array(where)) {
		snprintf(err, errlen, "\"where\" is not an array");
		template_free(t);
		return NULL;
	}
	json_array_foreach(where, i, m) {
		if (cond_from_json(t, m, i, err, errlen) == -1) {
			template_free(t);
			return NULL;
		}
	}
	return t;
}

static bool
text_contains(const struct val *hay, const struct val *needle)
{
	if (needle->len == 0)
		return true;
	return memmem(hay->ptr, hay->len, needle->ptr, needle->len) != NULL;
}

static bool
array_contains(const struct val *arr, const struct val *x)
{
	struct dcbor_rd rd;
	struct val el;

	val_iter(arr, &rd);
	for (uint64_t i = 0; i < arr->n; i++) {
		if (val_read(&rd, &el) == -1)
			return false;
		if (val_eq(&el, x))
			return true;
	}
	return false;
}

/* c against the field's value fv (found) or its absence (!found). */
static bool
cond_eval(const struct template_cond *c, bool found, const struct val *fv_)
{
	const struct val fv = found ? *fv_ : (struct val){ .type = VAL_NULL };
	int cmp;

	if (c->op == TEMPLATE_NULL)
		return !found || fv.type == VAL_NULL;
	if (c->op == TEMPLATE_NOTNULL)
		return found && fv.type != VAL_NULL;
	if (!found)
		return false;
	switch (c->op) {
	case TEMPLATE_EQ:
		return val_eq(&fv, &c->v);
	case TEMPLATE_NE:
		if (val_is_number(&fv) != val_is_number(&c->v) ||
		    (!val_is_number(&fv) && fv.type != c->v.type))
			return false;
		return !val_eq(&fv, &c->v);
	case TEMPLATE_LT:
		return val_cmp(&fv, &c->v, &cmp) && cmp < 0;
	case TEMPLATE_LTE:
		return val_cmp(&fv, &c->v, &cmp) && cmp <= 0;
	case TEMPLATE_GT:
		return val_cmp(&fv, &c->v, &cmp) && cmp > 0;
	case TEMPLATE_GTE:
		return val_cmp(&fv, &c->v, &cmp) && cmp >= 0;
	case TEMPLATE_IN:
		for (size_t i = 0; i < c->nitems; i++)
			if (val_eq(&fv, &c->items[i]))
				return true;
		return false;
	case TEMPLATE_CONTAINS:
		if (fv.type == VAL_TEXT && c->v.type == VAL_TEXT)
			return text_contains(&fv, &c->v);
		if (fv.type == VAL_ARRAY)
			return array_contains(&fv, &c->v);
		return false;
	default:
		return false;
	}
}

static bool
cond_match(const struct template_cond *c, const struct entry *e)
{
	struct val fv;
	int found = entry_field(e, c->field, c->field_len, &fv);

	return cond_eval(c, found == 1, &fv);
}

/*
 * One walk of the entry's fields map for all conditions: each key is
 * decoded once and compared with the names of the conditions still open,
 * its value read once if some condition wants it; the walk stops at the
 * first failure or when every condition is settled, and conditions whose
 * field never came are judged on its absence.  The same result as each
 * condition looking its field up alone (entry_field), in one pass instead
 * of nconds.
 */
bool
template_match_fields(const struct template *t, const struct entry *e)
{
	struct dcbor_rd rd;
	uint64_t open, n;

	if (t->nconds == 0)
		return true;
	if (t->nconds == 1)
		return cond_match(&t->conds[0], e);
	open = t->nconds >= 64 ? UINT64_MAX : (UINT64_C(1) << t->nconds) - 1;
	dcbor_rd_init(&rd, e->fields, e->fields_len);
	if (dcbor_get_map(&rd, &n) == -1)
		n = 0;
	for (uint64_t i = 0; i < n && open != 0; i++) {
		const char *k;
		size_t klen;
		struct val v;
		int have = 0;	/* 1: v read; -1: the value is unreadable */

		if (dcbor_get_text(&rd, &k, &klen) == -1)
			break;
		for (size_t c = 0; c < t->nconds; c++) {
			const struct template_cond *tc = &t->conds[c];

			if (!(open & (UINT64_C(1) << c)) ||
			    tc->field_len != klen ||
			    memcmp(tc->field, k, klen) != 0)
				continue;
			if (have == 0)
				have = val_read(&rd, &v) == 0 ? 1 : -1;
			if (!cond_eval(tc, have == 1, &v))
				return false;
			open &= ~(UINT64_C(1) << c);
		}
		if (have == -1)
			break;
		if (have == 0 && dcbor_skip(&rd) == -1)
			break;
	}
	for (size_t c = 0; c < t->nconds; c++)
		if ((open & (UINT64_C(1) << c)) && !cond_eval(&t->conds[c],
		    false, NULL))
			return false;
	return true;
}

bool
template_match(const struct template *t, const struct entry *e)
{
	if (strcmp(t->type, e->type) != 0)
		return false;
	return template_match_fields(t, e);
}

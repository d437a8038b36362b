/*
 * template.h: entry templates (docs/protocol.md section 6).
 *
 * A template is a type and a conjunction of conditions on fields:
 *
 *   eq, ne           equal / not equal
 *   lt, lte, gt, gte ordered comparison (numbers, text, bytes)
 *   in               the field equals one element of the operand array
 *   contains         text field: the operand text is a substring;
 *                    array field: some element equals the operand
 *   null             the field is absent or null
 *   notnull          the field is present and not null
 *
 * Values follow val.h: int, uint and float are one "number" type and
 * compare by exact value (3 == 3.0, 2 < 2.5); text and bytes compare
 * bytewise; bool, null, arrays and maps have equality only.  A condition
 * whose field is absent, or whose field and operand are of other types
 * (or not ordered, for lt..gte), does not match; that is never an error.
 * ne matches only values of the operand's type that differ from it.
 *
 * JSON form (control socket):
 *   {"type": "task#v1",
 *    "where": [{"field": "prio", "op": "gt", "value": 3}, ...]}
 * "where" is optional; "value" is required for every op but null and
 * notnull (where it is refused); "in" needs an array.  Operands are kept
 * as canonical CBOR and parsed once, so template_match never allocates.
 */
#ifndef TEMPLATE_H
#define TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "entry.h"
#include "val.h"

#define TEMPLATE_MAX_CONDS	32
#define TEMPLATE_FIELD_MAX	128
#define TEMPLATE_IN_MAX		1024

enum template_op {
	TEMPLATE_EQ = 0,
	TEMPLATE_NE,
	TEMPLATE_LT,
	TEMPLATE_LTE,
	TEMPLATE_GT,
	TEMPLATE_GTE,
	TEMPLATE_IN,
	TEMPLATE_CONTAINS,
	TEMPLATE_NULL,
	TEMPLATE_NOTNULL,
};

struct template_cond {
	char			*field;
	size_t			 field_len;
	enum template_op	 op;
	uint8_t			*operand;	/* canonical CBOR, owned */
	size_t			 operand_len;
	struct val		 v;		/* points into operand */
	struct val		*items;		/* "in": the elements */
	size_t			 nitems;
};

struct template {
	char			 type[ENTRY_TYPE_MAX + 1];
	struct template_cond	*conds;
	size_t			 nconds;
};

/* The op named name ("eq", ..., also "isNull"/"notNull"), or -1. */
int		 template_op_parse(const char *name);
const char	*template_op_name(enum template_op op);
/* An empty template of the given type; NULL if type is not "name#vN". */
struct template	*template_new(const char *type);
/*
 * Add a condition.  operand is one canonical CBOR value (NULL for null and
 * notnull).  0, or -1 with a message in err.
 */
int		 template_add(struct template *t, const char *field,
		    enum template_op op, const uint8_t *operand,
		    size_t operand_len, char *err, size_t errlen);
/* Parse the JSON form; NULL with a message naming the problem in err. */
struct template	*template_from_json(const json_t *j, char *err,
		    size_t errlen);
void		 template_free(struct template *t);
/* True when e has the template's type and meets every condition. */
bool		 template_match(const struct template *t,
		    const struct entry *e);
/* True when e meets every condition (its type is not looked at). */
bool		 template_match_fields(const struct template *t,
		    const struct entry *e);

#endif

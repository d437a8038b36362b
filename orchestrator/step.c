/*
 * step.c: a resolved scenario step into struct step (step.h), one reader
 * per field kind, the calls generated from the field tables of action.h.
 * The parser (scstep.c) made the step, so a value not of its kind is a
 * scenario the parser did not make; it is refused, never guessed at.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "step.h"

/*
 * Each reader: v (NULL when absent) into *out, its absent mark when v is
 * absent or null; -1 when v is not of the kind, or is absent and required.
 * present(): 1 v is a value of the kind (ok), 0 absent and allowed, -1 not.
 */
static int
present(const json_t *v, int flags, bool ok)
{
	if (v == NULL || json_is_null(v))
		return flags & F_REQ ? -1 : 0;
	return ok ? 1 : -1;
}

/* A reader of one C type: is() the kind's test, get() its value. */
#define READER(name, type, is, get, none)				\
static int								\
name(const json_t *v, int flags, type *out)				\
{									\
	int p = present(v, flags, is(v));				\
									\
	*out = p == 1 ? get(v) : (none);				\
	return p < 0 ? -1 : 0;						\
}

READER(read_int, json_int_t, json_is_integer, json_integer_value, -1)
READER(read_FK_NUM, double, json_is_number, json_number_value, NAN)
READER(read_bool, bool, json_is_boolean, json_is_true, false)
READER(read_str, const char *, json_is_string, json_string_value, NULL)
#undef READER

#define read_FK_INT	read_int
#define read_FK_INDEX	read_int
#define read_FK_BOOL	read_bool
#define read_FK_TRUE	read_bool
#define read_FK_STR	read_str
#define read_FK_ENUM	read_str
#define read_FK_TYPE	read_str

/* FK_TARGET: "*" is every peer, as absent: -1. */
static int
read_FK_TARGET(const json_t *v, int flags, json_int_t *out)
{
	if (json_is_string(v) && strcmp(json_string_value(v), "*") == 0) {
		*out = -1;
		return 0;
	}
	return read_int(v, flags, out);
}

/* A shape the parser checked: the value itself, borrowed. */
static int
read_json(json_t *v, int flags, json_t **out)
{
	int p = present(v, flags, true);

	*out = p == 1 ? v : NULL;
	return p < 0 ? -1 : 0;
}

#define read_FK_SEL	read_json
#define read_FK_START	read_json
#define read_FK_KNOBS	read_json
#define read_FK_GROUPS	read_json

static int
bad(const char *key, const char *kind, char *err, size_t len)
{
	snprintf(err, len, "%s: not a value of kind %s", key, kind);
	return -1;
}

#define STEP_READ(key, kind, flags, ...)				\
	if (read_##kind(json_object_get(j, #key), flags, &out->key) == -1) \
		return bad(#key, #kind, err, len);

#define STEP_READ_TABLE(t)						\
static int								\
read_##t(json_t *j, struct step_##t *out, char *err, size_t len)	\
{									\
	FIELDS_##t(STEP_READ)						\
	return 0;							\
}
FIELD_TABLES(STEP_READ_TABLE)
#undef STEP_READ_TABLE

#define ACTION_NAME(n, f, check) #n,
static const char *const names[] = { ACTIONS(ACTION_NAME) NULL };
#undef ACTION_NAME

static int
read_common(json_t *j, struct step *out, char *err, size_t len)
{
	FIELDS_COMMON(STEP_READ)
	return 0;
}

int
step_read(json_t *j, struct step *s, char *err, size_t len)
{
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(j)) {
		snprintf(err, len, "not a step object");
		return -1;
	}
	if (read_common(j, s, err, len) == -1)
		return -1;
	for (s->act = 0; s->act < ACTION_COUNT; s->act++)
		if (strcmp(names[s->act], s->action) == 0)
			break;
	switch (s->act) {
#define ACTION_CASE(n, f, check)					\
	case ACTION_##n:						\
		return read_##f(j, &s->u.f, err, len);
	ACTIONS(ACTION_CASE)
#undef ACTION_CASE
	case ACTION_COUNT:
		break;
	}
	n = (size_t)snprintf(err, len, "action: \"%.64s\" is not one of ",
	    s->action);
	for (const char *const *a = names; *a != NULL && n < len; a++)
		n += (size_t)snprintf(err + n, len - n, "%s%s", *a,
		    a[1] != NULL ? ", " : "");
	return -1;
}

/*
 * step.h: a step of a resolved scenario as a C struct, its members declared
 * by the same field tables the parser validates it against (FIELDS_* in
 * action.h), so the engine's actions (act.c) and conditions (cond.c) read
 * s->u.write.count, not a JSON key: a field renamed in its table fails the
 * build where it is read.  run.c reads each step before it runs it.
 *
 * A member's C type is its field's kind's: FK_INT and FK_INDEX json_int_t
 * (-1: absent or null; every such field's minimum is 0 or more), FK_TARGET
 * json_int_t (-1: "*" or absent), FK_NUM double (NAN: absent), FK_BOOL and
 * FK_TRUE bool (false: absent), FK_STR, FK_ENUM and FK_TYPE a string (NULL:
 * absent or null), and the shapes the parser checked (FK_SEL, FK_START,
 * FK_KNOBS, FK_GROUPS) the JSON value, borrowed from the scenario (NULL:
 * absent).
 */
#ifndef STEP_H
#define STEP_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "action.h"

#define STEP_T_FK_INT		json_int_t
#define STEP_T_FK_INDEX		json_int_t
#define STEP_T_FK_TARGET	json_int_t
#define STEP_T_FK_NUM		double
#define STEP_T_FK_BOOL		bool
#define STEP_T_FK_TRUE		bool
#define STEP_T_FK_STR		const char *
#define STEP_T_FK_ENUM		const char *
#define STEP_T_FK_TYPE		const char *
#define STEP_T_FK_SEL		json_t *
#define STEP_T_FK_START		json_t *
#define STEP_T_FK_KNOBS		json_t *
#define STEP_T_FK_GROUPS	json_t *

#define STEP_MEMBER(key, kind, ...)	STEP_T_##kind key;
#define STEP_STRUCT(t)	struct step_##t { FIELDS_##t(STEP_MEMBER) };
FIELD_TABLES(STEP_STRUCT)
#undef STEP_STRUCT

struct step {
	enum action	 act;
	FIELDS_COMMON(STEP_MEMBER)	/* action, name, at_ms, timeout_s */
	union {
#define STEP_UNION(t)	struct step_##t t;
		FIELD_TABLES(STEP_UNION)
#undef STEP_UNION
	} u;				/* by act's field table (ACTIONS()) */
};

/*
 * Read the resolved step j into s (borrowing j's strings and values):
 * 0, or -1 with err naming the field whose value is not of its kind or
 * the action ACTIONS() does not list.
 */
int	 step_read(json_t *j, struct step *s, char *err, size_t len);

#endif

/*
 * val.h: one typed CBOR value, read in place (no allocation).
 *
 * Entry fields and template operands are canonical CBOR; a struct val is
 * the view the matcher works on.  Text and bytes point into the encoded
 * input; an array or a map keeps the span of its whole encoded item (head
 * included) and its count, so equality of two containers is bytewise
 * equality of their canonical encodings, and val_iter walks the elements.
 *
 * Comparison rules (template.h builds on them):
 *  - int64, uint64 and double are one "number" type and compare by exact
 *    mathematical value (1 == 1.0, 2^63 > INT64_MAX); NaN is unordered: it
 *    equals nothing, not even itself.
 *  - text compares bytewise (which is code point order for UTF-8), bytes
 *    bytewise; bool, null, arrays and maps have equality only, and two
 *    containers are equal when their canonical encodings are (so [1] and
 *    [1.0] differ: numeric unification stops at the top level).
 *  - values of different types are never equal and never ordered: that
 *    is "no match", not an error.
 * Tags and undefined are not values: val_read refuses them (DCBOR_ETYPE).
 */
#ifndef VAL_H
#define VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_rd;

enum val_type {
	VAL_NULL = 0,
	VAL_BOOL,
	VAL_INT,	/* fits int64 */
	VAL_UINT,	/* above INT64_MAX */
	VAL_DOUBLE,
	VAL_TEXT,
	VAL_BYTES,
	VAL_ARRAY,
	VAL_MAP,
};

struct val {
	enum val_type	 type;
	union {
		bool	 b;
		int64_t	 i;
		uint64_t u;
		double	 d;
	};
	const uint8_t	*ptr;	/* text/bytes: data; array/map: whole item */
	size_t		 len;
	uint64_t	 n;	/* array items or map pairs */
};

/* Read one value (a container is skipped as a whole). 0, or -1 with rd->err. */
int	val_read(struct dcbor_rd *rd, struct val *v);
/* True for the number types (int, uint, double). */
bool	val_is_number(const struct val *v);
/* True when a and b are of one type (numbers: one type) and equal. */
bool	val_eq(const struct val *a, const struct val *b);
/*
 * Order a against b: *cmp gets <0, 0, >0.  Returns false when the pair is
 * not ordered (other types, bool/null/containers, NaN).
 */
bool	val_cmp(const struct val *a, const struct val *b, int *cmp);
/* Start walking an array's items or a map's keys and values in turn. */
void	val_iter(const struct val *v, struct dcbor_rd *rd);
/* A static name of the type, e.g. "text". */
const char *val_type_name(enum val_type t);

#endif

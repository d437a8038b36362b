/*
 * val.c: typed views of CBOR values and the comparison rules of val.h,
 * shared by entry.c (field lookup) and template.c (matching).  Nothing
 * here allocates: the matcher runs once per candidate entry.
 */
#include <math.h>
#include <string.h>

#include "dcbor.h"
#include "val.h"

static int
val_fail(struct dcbor_rd *rd, int err)
{
	if (rd->err == DCBOR_OK)
		rd->err = err;
	return -1;
}

int
val_read(struct dcbor_rd *rd, struct val *v)
{
	struct dcbor_item it;
	const uint8_t *start = rd->p;

	memset(v, 0, sizeof(*v));
	if (dcbor_next(rd, &it) == -1)
		return -1;
	switch (it.type) {
	case DCBOR_UINT:
		if (it.u > INT64_MAX) {
			v->type = VAL_UINT;
			v->u = it.u;
		} else {
			v->type = VAL_INT;
			v->i = (int64_t)it.u;
		}
		return 0;
	case DCBOR_NEGINT:
		if (it.u > INT64_MAX) {
			/* Below INT64_MIN: keep it as the nearest double. */
			v->type = VAL_DOUBLE;
			v->d = -1.0 - (double)it.u;
		} else {
			v->type = VAL_INT;
			v->i = -1 - (int64_t)it.u;
		}
		return 0;
	case DCBOR_FLOAT:
		v->type = VAL_DOUBLE;
		v->d = it.f;
		return 0;
	case DCBOR_BOOL:
		v->type = VAL_BOOL;
		v->b = it.b;
		return 0;
	case DCBOR_NULL:
		v->type = VAL_NULL;
		return 0;
	case DCBOR_TEXT:
	case DCBOR_BYTES:
		v->type = it.type == DCBOR_TEXT ? VAL_TEXT : VAL_BYTES;
		v->ptr = it.ptr;
		v->len = it.len;
		return 0;
	case DCBOR_ARRAY:
	case DCBOR_MAP:
		v->type = it.type == DCBOR_ARRAY ? VAL_ARRAY : VAL_MAP;
		v->n = it.u;
		rd->p = start;
		return dcbor_get_raw(rd, &v->ptr, &v->len);
	default:
		rd->p = start;
		return val_fail(rd, DCBOR_ETYPE);
	}
}

bool
val_is_number(const struct val *v)
{
	return v->type == VAL_INT || v->type == VAL_UINT ||
	    v->type == VAL_DOUBLE;
}

/* int64 against a double, exactly. false if d is NaN. */
static bool
cmp_int_double(int64_t i, double d, int *cmp)
{
	double t;
	int64_t ti;

	if (isnan(d))
		return false;
	if (d >= 9223372036854775808.0) {		/* 2^63 */
		*cmp = -1;
		return true;
	}
	if (d < -9223372036854775808.0) {
		*cmp = 1;
		return true;
	}
	t = trunc(d);
	ti = (int64_t)t;
	if (i != ti)
		*cmp = i < ti ? -1 : 1;
	else
		*cmp = d > t ? -1 : d < t ? 1 : 0;
	return true;
}

/* uint64 above INT64_MAX against a double, exactly. */
static bool
cmp_uint_double(uint64_t u, double d, int *cmp)
{
	uint64_t du;

	if (isnan(d))
		return false;
	if (d >= 18446744073709551616.0) {		/* 2^64 */
		*cmp = -1;
		return true;
	}
	if (d < 9223372036854775808.0) {
		*cmp = 1;
		return true;
	}
	du = (uint64_t)d;	/* integral in [2^63, 2^64) */
	*cmp = u < du ? -1 : u > du;
	return true;
}

static bool
cmp_number(const struct val *a, const struct val *b, int *cmp)
{
	switch (a->type) {
	case VAL_INT:
		if (b->type == VAL_INT) {
			*cmp = a->i < b->i ? -1 : a->i > b->i;
			return true;
		}
		if (b->type == VAL_UINT) {
			*cmp = -1;
			return true;
		}
		return cmp_int_double(a->i, b->d, cmp);
	case VAL_UINT:
		if (b->type == VAL_INT) {
			*cmp = 1;
			return true;
		}
		if (b->type == VAL_UINT) {
			*cmp = a->u < b->u ? -1 : a->u > b->u;
			return true;
		}
		return cmp_uint_double(a->u, b->d, cmp);
	default:
		if (b->type == VAL_DOUBLE) {
			if (isnan(a->d) || isnan(b->d))
				return false;
			*cmp = a->d < b->d ? -1 : a->d > b->d;
			return true;
		}
		if (!cmp_number(b, a, cmp))
			return false;
		*cmp = -*cmp;
		return true;
	}
}

static int
cmp_span(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c < 0 ? -1 : 1;
	return alen < blen ? -1 : alen > blen;
}

bool
val_cmp(const struct val *a, const struct val *b, int *cmp)
{
	if (val_is_number(a) && val_is_number(b))
		return cmp_number(a, b, cmp);
	if (a->type != b->type)
		return false;
	if (a->type != VAL_TEXT && a->type != VAL_BYTES)
		return false;
	*cmp = cmp_span(a->ptr, a->len, b->ptr, b->len);
	return true;
}

bool
val_eq(const struct val *a, const struct val *b)
{
	int c;

	if (val_is_number(a) && val_is_number(b))
		return cmp_number(a, b, &c) && c == 0;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case VAL_NULL:
		return true;
	case VAL_BOOL:
		return a->b == b->b;
	default:
		/* Canonical encodings: equal values have equal bytes. */
		return a->len == b->len && (a->len == 0 ||
		    memcmp(a->ptr, b->ptr, a->len) == 0);
	}
}

void
val_iter(const struct val *v, struct dcbor_rd *rd)
{
	struct dcbor_item it;

	dcbor_rd_init(rd, v->ptr, v->len);
	if (v->type == VAL_ARRAY || v->type == VAL_MAP)
		(void)dcbor_next(rd, &it);
}

const char *
val_type_name(enum val_type t)
{
	static const char *const names[] = {
		"null", "bool", "int", "uint", "double", "text", "bytes",
		"array", "map",
	};

	if ((unsigned)t >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[t];
}

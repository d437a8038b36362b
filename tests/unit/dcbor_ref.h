/*
 * dcbor_ref.h: a test helper shared by tests/unit/test_dcbor.c and
 * tests/fuzz/fuzz_dcbor.c, the reference head decoder: libcbor's
 * cbor_stream_decode, with the rules dcbor.c had on top of it before its
 * rd_token decoded heads itself.  A head read by both must give the same
 * item (type, argument, string span, head length, value) and the same
 * error.  Canonical-form verdicts are not compared: dcbor_next does not
 * report them (test_dcbor's canonical tests cover them).  Header-only and
 * static because it is test code, not part of libcommon.
 */
#ifndef DCBOR_REF_H
#define DCBOR_REF_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <cbor.h>

#include "dcbor.h"

struct ref_tok {
	struct dcbor_item *it;
	bool indef;
};

#define REF_TOK(name, T, ty) \
static void name(void *c, T v) { struct ref_tok *t = c; \
	t->it->type = ty; t->it->u = (uint64_t)v; }
REF_TOK(ref_u8, uint8_t, DCBOR_UINT)
REF_TOK(ref_u16, uint16_t, DCBOR_UINT)
REF_TOK(ref_u32, uint32_t, DCBOR_UINT)
REF_TOK(ref_u64, uint64_t, DCBOR_UINT)
REF_TOK(ref_n8, uint8_t, DCBOR_NEGINT)
REF_TOK(ref_n16, uint16_t, DCBOR_NEGINT)
REF_TOK(ref_n32, uint32_t, DCBOR_NEGINT)
REF_TOK(ref_n64, uint64_t, DCBOR_NEGINT)
REF_TOK(ref_tag, uint64_t, DCBOR_TAG)
REF_TOK(ref_array, size_t, DCBOR_ARRAY)
REF_TOK(ref_map, size_t, DCBOR_MAP)
#undef REF_TOK

static void
ref_str(struct ref_tok *t, enum dcbor_type ty, cbor_data p, size_t n)
{
	t->it->type = ty;
	t->it->ptr = p;
	t->it->len = n;
	t->it->u = n;
}

static void ref_bytes(void *c, cbor_data p, uint64_t n) { ref_str(c, DCBOR_BYTES, p, n); }
static void ref_text(void *c, cbor_data p, uint64_t n) { ref_str(c, DCBOR_TEXT, p, n); }
static void ref_indef(void *c) { ((struct ref_tok *)c)->indef = true; }
static void ref_null(void *c) { ((struct ref_tok *)c)->it->type = DCBOR_NULL; }
static void ref_undef(void *c) { ((struct ref_tok *)c)->it->type = DCBOR_UNDEF; }
static void ref_f(void *c, float f) { struct ref_tok *t = c; t->it->type = DCBOR_FLOAT; t->it->f = f; }
static void ref_d(void *c, double f) { struct ref_tok *t = c; t->it->type = DCBOR_FLOAT; t->it->f = f; }
static void ref_bool(void *c, bool v) { struct ref_tok *t = c; t->it->type = DCBOR_BOOL; t->it->b = v; }

static const struct cbor_callbacks ref_callbacks = {
	.uint8 = ref_u8, .uint16 = ref_u16, .uint32 = ref_u32,
	.uint64 = ref_u64,
	.negint8 = ref_n8, .negint16 = ref_n16, .negint32 = ref_n32,
	.negint64 = ref_n64,
	.byte_string = ref_bytes, .byte_string_start = ref_indef,
	.string = ref_text, .string_start = ref_indef,
	.array_start = ref_array, .indef_array_start = ref_indef,
	.map_start = ref_map, .indef_map_start = ref_indef,
	.tag = ref_tag,
	.float2 = ref_f, .float4 = ref_f, .float8 = ref_d,
	.undefined = ref_undef, .null = ref_null, .boolean = ref_bool,
	.indef_break = ref_indef,
};

/* One head at *pp (left bytes) into it: DCBOR_OK, or the error. */
static int
dcbor_ref_head(const uint8_t **pp, size_t left, struct dcbor_item *it)
{
	static const size_t argw[] = { 2, 3, 5, 9 };
	struct ref_tok t = { .it = it, .indef = false };
	struct cbor_decoder_result r;
	const uint8_t *p = *pp;
	size_t after;

	if (left == 0)
		return DCBOR_ETRUNC;
	memset(it, 0, sizeof(*it));
	it->type = DCBOR_UNDEF;
	it->start = p;
	if ((p[0] & 0x1f) >= 28 && (p[0] & 0x1f) <= 30)
		return DCBOR_EMALFORMED;
	if ((p[0] >= 0xe0 && p[0] <= 0xf3) || p[0] == 0xf8 || p[0] == 0xff)
		return DCBOR_EMALFORMED;
	/* libcbor 0.8 refuses the one-byte tags 6..20: read them here. */
	if (p[0] >= 0xc0 && p[0] <= 0xd7) {
		it->type = DCBOR_TAG;
		it->u = p[0] & 0x1f;
		it->head = 1;
		*pp = p + 1;
		return DCBOR_OK;
	}
	r = cbor_stream_decode(p, left, &ref_callbacks, &t);
	if (r.status == CBOR_DECODER_NEDATA) {
		if ((p[0] >> 5 == 2 || p[0] >> 5 == 3) &&
		    left >= ((p[0] & 0x1f) >= 24 ? argw[(p[0] & 0x1f) - 24] :
		    1))
			return DCBOR_ELENGTH;
		return DCBOR_ETRUNC;
	}
	if (r.status != CBOR_DECODER_FINISHED || r.read == 0)
		return DCBOR_EMALFORMED;
	if (t.indef)
		return DCBOR_EINDEF;
	it->head = r.read - it->len;
	*pp = p + r.read;
	after = left - r.read;
	if (it->type == DCBOR_ARRAY && it->u > after)
		return DCBOR_ELENGTH;
	if (it->type == DCBOR_MAP && it->u > after / 2)
		return DCBOR_ELENGTH;
	return DCBOR_OK;
}

/* The two decoders read the same item: every field, NaNs alike. */
static bool
dcbor_ref_same(const struct dcbor_item *a, const struct dcbor_item *b)
{
	bool f = (isnan(a->f) && isnan(b->f)) ||
	    memcmp(&a->f, &b->f, sizeof(a->f)) == 0;

	return a->type == b->type && a->u == b->u && a->b == b->b &&
	    a->ptr == b->ptr && a->len == b->len && a->start == b->start &&
	    a->head == b->head && f;
}

#endif

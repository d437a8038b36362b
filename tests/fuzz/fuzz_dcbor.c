/*
 * fuzz_dcbor.c: libFuzzer target for common/dcbor.c, the gate every byte
 * from the network passes first.
 *
 * For any input: dcbor_check must not crash or read out of bounds, in
 * either mode.  When it passes, the cursor functions must walk the item to
 * exactly the length the checker reported (dcbor_next item by item,
 * dcbor_skip and dcbor_get_raw in one go), and reading then writing the
 * item (tests/unit/dcbor_walk.h) must give the input back byte for byte
 * when it was canonical; and every head of the input must decode exactly
 * as libcbor's cbor_stream_decode reads it (check_heads, the reference
 * dcbor.c used before it decoded heads itself).  Broken invariants abort, which libFuzzer saves
 * as a crash file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include <cbor.h>

#include "dcbor.h"
#include "../unit/dcbor_walk.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

/*
 * The reference head decoder: libcbor's cbor_stream_decode, with the rules
 * dcbor.c had on top of it before rd_token decoded heads itself.  Every
 * head of the input is read by both, one after another, and they must
 * agree on the item (type, argument, string span, head length, value) and
 * on the error.  Canonical-form verdicts are not compared here: dcbor_next
 * does not report them (test_dcbor's canonical tests and check_item cover
 * them).
 */
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
ref_head(const uint8_t **pp, size_t left, struct dcbor_item *it)
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

static bool
same_float(double a, double b)
{
	return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof(a)) == 0;
}

/* Every head in turn, by both decoders, until one fails: they must agree. */
static void
check_heads(const uint8_t *data, size_t size)
{
	struct dcbor_rd rd;
	const uint8_t *p = data;

	dcbor_rd_init(&rd, data, size);
	for (;;) {
		struct dcbor_item a, b;
		int rc_ref = ref_head(&p, (size_t)(data + size - p), &b);
		int rc = dcbor_next(&rd, &a) == 0 ? DCBOR_OK : rd.err;

		REQUIRE(rc == rc_ref);
		if (rc != DCBOR_OK)
			return;
		REQUIRE(a.type == b.type && a.u == b.u && a.b == b.b &&
		    a.ptr == b.ptr && a.len == b.len && a.start == b.start &&
		    a.head == b.head && same_float(a.f, b.f) && rd.p == p);
	}
}

/* Count the items of one item by dcbor_next alone; -1 on a reader error. */
static long
walk_count(struct dcbor_rd *rd)
{
	struct dcbor_item it;
	uint64_t need = 1;
	long n = 0;

	while (need > 0) {
		if (dcbor_next(rd, &it) == -1)
			return -1;
		n++;
		need--;
		if (it.type == DCBOR_ARRAY)
			need += it.u;
		else if (it.type == DCBOR_MAP)
			need += 2 * it.u;
		else if (it.type == DCBOR_TAG)
			need++;
		if (it.type == DCBOR_BYTES || it.type == DCBOR_TEXT)
			REQUIRE(it.ptr + it.len <= rd->end &&
			    it.start + it.head + it.len == rd->p);
	}
	return n;
}

static void
check_item(const uint8_t *data, size_t used, bool canonical)
{
	struct dcbor_buf out, again;
	struct dcbor_rd rd;
	const uint8_t *raw;
	size_t rawlen;

	/* dcbor_next item by item. */
	dcbor_rd_init(&rd, data, used);
	REQUIRE(walk_count(&rd) > 0);
	REQUIRE(dcbor_left(&rd) == 0);

	/* dcbor_skip and dcbor_get_raw agree on the span. */
	dcbor_rd_init(&rd, data, used);
	REQUIRE(dcbor_skip(&rd) == 0 && dcbor_left(&rd) == 0);
	dcbor_rd_init(&rd, data, used);
	REQUIRE(dcbor_get_raw(&rd, &raw, &rawlen) == 0);
	REQUIRE(raw == data && rawlen == used);

	/* Read, write: the same bytes when canonical; stable either way. */
	dcbor_buf_init(&out);
	dcbor_buf_init(&again);
	dcbor_rd_init(&rd, data, used);
	REQUIRE(dcbor_walk_copy(&rd, &out) == 0);
	REQUIRE(dcbor_left(&rd) == 0);
	if (canonical) {
		REQUIRE(out.len == used && memcmp(out.data, data, used) == 0);
	} else {
		/* Shortest heads and floats now; map order is untouched. */
		int rc = dcbor_check(out.data, out.len, DCBOR_MAX_DEPTH, true,
		    NULL);

		REQUIRE(rc == DCBOR_OK || rc == DCBOR_ENONCANON ||
		    rc == DCBOR_EDUPKEY || rc == DCBOR_EUTF8);
		REQUIRE(out.len <= used);
		dcbor_rd_init(&rd, out.data, out.len);
		REQUIRE(dcbor_walk_copy(&rd, &again) == 0);
		REQUIRE(again.len == out.len &&
		    memcmp(again.data, out.data, out.len) == 0);
	}

	/* Sorting a canonical map must not move a byte. */
	if (canonical && (data[0] >> 5) == 5) {
		dcbor_buf_reset(&again);
		dcbor_put_raw(&again, data, used);
		REQUIRE(dcbor_sort_map(&again, 0) == DCBOR_OK);
		REQUIRE(memcmp(again.data, data, used) == 0);
	}
	dcbor_buf_free(&out);
	dcbor_buf_free(&again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used_c = 0, used_n = 0;
	int whole_c, whole_n, pre_c, pre_n;

	whole_n = dcbor_check(data, size, DCBOR_MAX_DEPTH, false, NULL);
	whole_c = dcbor_check(data, size, DCBOR_MAX_DEPTH, true, NULL);
	pre_n = dcbor_check(data, size, DCBOR_MAX_DEPTH, false, &used_n);
	pre_c = dcbor_check(data, size, DCBOR_MAX_DEPTH, true, &used_c);

	/* Canonical is a subset of well-formed. */
	if (whole_c == DCBOR_OK)
		REQUIRE(whole_n == DCBOR_OK);
	if (pre_c == DCBOR_OK)
		REQUIRE(pre_n == DCBOR_OK && used_n == used_c);
	/* One item with nothing after it, or an item and trailing bytes. */
	if (whole_n == DCBOR_OK)
		REQUIRE(pre_n == DCBOR_OK && used_n == size);
	if (pre_n == DCBOR_OK && used_n < size)
		REQUIRE(whole_n == DCBOR_ETRAILING);
	if (pre_n == DCBOR_OK)
		REQUIRE(used_n > 0 && used_n <= size);

	if (pre_n == DCBOR_OK)
		check_item(data, used_n, pre_c == DCBOR_OK);
	check_heads(data, size);
	return 0;
}

/*
 * test_dcbor.c: unit tests for common/dcbor.c.
 *
 * The reference is RFC 8949 Appendix A: every example that deterministic
 * CBOR can express is built with the dcbor_put_* writer and must give the
 * Appendix A bytes, then read back item by item through the reader, pass
 * dcbor_check in canonical mode and survive a read-write round trip.  The
 * rest covers what a peer meets on the wire: non-canonical forms,
 * indefinite lengths, truncation at every length, lying lengths, nesting
 * limits and typed reads of the wrong type.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "dcbor_ref.h"
#include "dcbor_walk.h"

/* ---- helpers ------------------------------------------------------------ */

static size_t
unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;

	ck_assert_uint_le(n, cap);
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void
tohex(const uint8_t *p, size_t n, char *out, size_t cap)
{
	ck_assert_uint_lt(2 * n, cap);
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
	out[2 * n] = '\0';
}

/* The buffer's bytes must be exactly the hex string. */
static void
assert_bytes(const struct dcbor_buf *b, const char *hex, const char *what)
{
	char got[512];

	tohex(b->data, b->len, got, sizeof(got));
	ck_assert_msg(strcmp(got, hex) == 0, "%s: got %s, want %s", what, got,
	    hex);
}

/* Check a copy of exactly n bytes so that ASan sees any over-read. */
static int
check_exact(const uint8_t *p, size_t n, bool canonical)
{
	uint8_t *copy = malloc(n ? n : 1);
	int rc;

	ck_assert_ptr_nonnull(copy);
	if (n > 0)
		memcpy(copy, p, n);
	rc = dcbor_check(copy, n, DCBOR_MAX_DEPTH, canonical, NULL);
	free(copy);
	return rc;
}

/* Read the item and write it again; the bytes must come back unchanged. */
static void
assert_round_trip(const uint8_t *p, size_t n, const char *hex)
{
	struct dcbor_buf out;
	struct dcbor_rd rd;

	dcbor_buf_init(&out);
	dcbor_rd_init(&rd, p, n);
	ck_assert_int_eq(dcbor_walk_copy(&rd, &out), 0);
	ck_assert_uint_eq(dcbor_left(&rd), 0);
	assert_bytes(&out, hex, "round trip");
	dcbor_buf_free(&out);
}

/* ---- RFC 8949 Appendix A ------------------------------------------------ */

enum opk { OP_END = 0, OP_U, OP_N, OP_F, OP_B, OP_T, OP_A, OP_M, OP_G,
	OP_BOOL, OP_NULL, OP_UNDEF };

struct op {
	enum opk	 k;
	uint64_t	 u;
	double		 f;
	const char	*s;
	size_t		 n;
};

#define OU(x)		{ OP_U, (x), 0, NULL, 0 }
#define ON(x)		{ OP_N, (x), 0, NULL, 0 }	/* -1 - x */
#define OF(x)		{ OP_F, 0, (x), NULL, 0 }
#define OB(lit)		{ OP_B, 0, 0, (lit), sizeof(lit) - 1 }
#define OT(lit)		{ OP_T, 0, 0, (lit), sizeof(lit) - 1 }
#define OA(x)		{ OP_A, (x), 0, NULL, 0 }
#define OM(x)		{ OP_M, (x), 0, NULL, 0 }
#define OG(x)		{ OP_G, (x), 0, NULL, 0 }
#define OBOOL(x)	{ OP_BOOL, (x), 0, NULL, 0 }
#define ONULL		{ OP_NULL, 0, 0, NULL, 0 }
#define OUNDEF		{ OP_UNDEF, 0, 0, NULL, 0 }

struct vec {
	const char	*diag;
	const char	*hex;
	struct op	 ops[32];
};

static const struct vec appendix_a[] = {
	{ "0", "00", { OU(0) } },
	{ "1", "01", { OU(1) } },
	{ "10", "0a", { OU(10) } },
	{ "23", "17", { OU(23) } },
	{ "24", "1818", { OU(24) } },
	{ "25", "1819", { OU(25) } },
	{ "100", "1864", { OU(100) } },
	{ "1000", "1903e8", { OU(1000) } },
	{ "1000000", "1a000f4240", { OU(1000000) } },
	{ "1000000000000", "1b000000e8d4a51000", { OU(1000000000000) } },
	{ "18446744073709551615", "1bffffffffffffffff",
	    { OU(UINT64_MAX) } },
	{ "18446744073709551616", "c249010000000000000000",
	    { OG(2), OB("\x01\0\0\0\0\0\0\0\0") } },
	{ "-18446744073709551616", "3bffffffffffffffff",
	    { ON(UINT64_MAX) } },
	{ "-18446744073709551617", "c349010000000000000000",
	    { OG(3), OB("\x01\0\0\0\0\0\0\0\0") } },
	{ "-1", "20", { ON(0) } },
	{ "-10", "29", { ON(9) } },
	{ "-100", "3863", { ON(99) } },
	{ "-1000", "3903e7", { ON(999) } },
	{ "0.0", "f90000", { OF(0.0) } },
	{ "-0.0", "f98000", { OF(-0.0) } },
	{ "1.0", "f93c00", { OF(1.0) } },
	{ "1.1", "fb3ff199999999999a", { OF(1.1) } },
	{ "1.5", "f93e00", { OF(1.5) } },
	{ "65504.0", "f97bff", { OF(65504.0) } },
	{ "100000.0", "fa47c35000", { OF(100000.0) } },
	{ "3.4028234663852886e+38", "fa7f7fffff",
	    { OF(3.4028234663852886e+38) } },
	{ "1.0e+300", "fb7e37e43c8800759c", { OF(1.0e+300) } },
	{ "5.960464477539063e-8", "f90001", { OF(5.960464477539063e-8) } },
	{ "0.00006103515625", "f90400", { OF(0.00006103515625) } },
	{ "-4.0", "f9c400", { OF(-4.0) } },
	{ "-4.1", "fbc010666666666666", { OF(-4.1) } },
	{ "Infinity", "f97c00", { OF(INFINITY) } },
	{ "NaN", "f97e00", { OF(NAN) } },
	{ "-Infinity", "f9fc00", { OF(-INFINITY) } },
	{ "false", "f4", { OBOOL(0) } },
	{ "true", "f5", { OBOOL(1) } },
	{ "null", "f6", { ONULL } },
	{ "undefined", "f7", { OUNDEF } },
	{ "0(\"2013-03-21T20:04:00Z\")",
	    "c074323031332d30332d32315432303a30343a30305a",
	    { OG(0), OT("2013-03-21T20:04:00Z") } },
	{ "1(1363896240)", "c11a514b67b0", { OG(1), OU(1363896240) } },
	{ "1(1363896240.5)", "c1fb41d452d9ec200000",
	    { OG(1), OF(1363896240.5) } },
	{ "23(h'01020304')", "d74401020304",
	    { OG(23), OB("\x01\x02\x03\x04") } },
	{ "24(h'6449455446')", "d818456449455446",
	    { OG(24), OB("\x64\x49\x45\x54\x46") } },
	{ "32(\"http://www.example.com\")",
	    "d82076687474703a2f2f7777772e6578616d706c652e636f6d",
	    { OG(32), OT("http://www.example.com") } },
	{ "h''", "40", { OB("") } },
	{ "h'01020304'", "4401020304", { OB("\x01\x02\x03\x04") } },
	{ "\"\"", "60", { OT("") } },
	{ "\"a\"", "6161", { OT("a") } },
	{ "\"IETF\"", "6449455446", { OT("IETF") } },
	{ "\"\\\"\\\\\"", "62225c", { OT("\"\\") } },
	{ "\"\\u00fc\"", "62c3bc", { OT("\xc3\xbc") } },
	{ "\"\\u6c34\"", "63e6b0b4", { OT("\xe6\xb0\xb4") } },
	{ "\"\\ud800\\udd51\"", "64f0908591", { OT("\xf0\x90\x85\x91") } },
	{ "[]", "80", { OA(0) } },
	{ "[1, 2, 3]", "83010203", { OA(3), OU(1), OU(2), OU(3) } },
	{ "[1, [2, 3], [4, 5]]", "8301820203820405",
	    { OA(3), OU(1), OA(2), OU(2), OU(3), OA(2), OU(4), OU(5) } },
	{ "[1, 2, ..., 25]",
	    "98190102030405060708090a0b0c0d0e0f101112131415161718181819",
	    { OA(25), OU(1), OU(2), OU(3), OU(4), OU(5), OU(6), OU(7),
	      OU(8), OU(9), OU(10), OU(11), OU(12), OU(13), OU(14), OU(15),
	      OU(16), OU(17), OU(18), OU(19), OU(20), OU(21), OU(22),
	      OU(23), OU(24), OU(25) } },
	{ "{}", "a0", { OM(0) } },
	{ "{1: 2, 3: 4}", "a201020304",
	    { OM(2), OU(1), OU(2), OU(3), OU(4) } },
	{ "{\"a\": 1, \"b\": [2, 3]}", "a26161016162820203",
	    { OM(2), OT("a"), OU(1), OT("b"), OA(2), OU(2), OU(3) } },
	{ "[\"a\", {\"b\": \"c\"}]", "826161a161626163",
	    { OA(2), OT("a"), OM(1), OT("b"), OT("c") } },
	{ "{\"a\": \"A\", ..., \"e\": \"E\"}",
	    "a56161614161626142616361436164614461656145",
	    { OM(5), OT("a"), OT("A"), OT("b"), OT("B"), OT("c"), OT("C"),
	      OT("d"), OT("D"), OT("e"), OT("E") } },
};

#define NVEC (sizeof(appendix_a) / sizeof(appendix_a[0]))

static void
build(struct dcbor_buf *b, const struct op *ops)
{
	uint8_t undef = 0xf7;

	for (; ops->k != OP_END; ops++) {
		switch (ops->k) {
		case OP_U:
			dcbor_put_uint(b, ops->u);
			break;
		case OP_N:
			dcbor_put_negint(b, ops->u);
			break;
		case OP_F:
			dcbor_put_float(b, ops->f);
			break;
		case OP_B:
			dcbor_put_bytes(b, ops->s, ops->n);
			break;
		case OP_T:
			dcbor_put_text(b, ops->s, ops->n);
			break;
		case OP_A:
			dcbor_put_array(b, (size_t)ops->u);
			break;
		case OP_M:
			dcbor_put_map(b, (size_t)ops->u);
			break;
		case OP_G:
			dcbor_put_tag(b, ops->u);
			break;
		case OP_BOOL:
			dcbor_put_bool(b, ops->u != 0);
			break;
		case OP_NULL:
			dcbor_put_null(b);
			break;
		case OP_UNDEF:
			dcbor_put_raw(b, &undef, 1);
			break;
		case OP_END:
			break;
		}
	}
}

static const enum dcbor_type op_type[] = {
	[OP_U] = DCBOR_UINT, [OP_N] = DCBOR_NEGINT, [OP_F] = DCBOR_FLOAT,
	[OP_B] = DCBOR_BYTES, [OP_T] = DCBOR_TEXT, [OP_A] = DCBOR_ARRAY,
	[OP_M] = DCBOR_MAP, [OP_G] = DCBOR_TAG, [OP_BOOL] = DCBOR_BOOL,
	[OP_NULL] = DCBOR_NULL, [OP_UNDEF] = DCBOR_UNDEF,
};

/* Read the bytes item by item; each must be what the op list says. */
static void
read_back(const uint8_t *p, size_t n, const struct vec *v)
{
	struct dcbor_rd rd;
	struct dcbor_item it;
	const struct op *o;

	dcbor_rd_init(&rd, p, n);
	for (o = v->ops; o->k != OP_END; o++) {
		ck_assert_msg(dcbor_next(&rd, &it) == 0, "%s: read: %s",
		    v->diag, dcbor_strerror(rd.err));
		ck_assert_msg(it.type == op_type[o->k], "%s: type %d, want %d",
		    v->diag, it.type, op_type[o->k]);
		switch (o->k) {
		case OP_F:
			if (isnan(o->f))
				ck_assert(isnan(it.f));
			else {
				ck_assert_msg(it.f == o->f, "%s: got %.17g",
				    v->diag, it.f);
				ck_assert_int_eq(!!signbit(it.f),
				    !!signbit(o->f));
			}
			break;
		case OP_B:
		case OP_T:
			ck_assert_uint_eq(it.len, o->n);
			ck_assert_uint_eq(it.u, o->n);
			ck_assert(o->n == 0 || memcmp(it.ptr, o->s, o->n) == 0);
			break;
		case OP_BOOL:
			ck_assert_int_eq(it.b, o->u != 0);
			break;
		case OP_NULL:
		case OP_UNDEF:
			break;
		default:
			ck_assert_msg(it.u == o->u, "%s: u %llu", v->diag,
			    (unsigned long long)it.u);
			break;
		}
	}
	ck_assert_uint_eq(dcbor_left(&rd), 0);
	ck_assert_int_eq(rd.err, DCBOR_OK);
}

START_TEST(appendix_a_encode_decode)
{
	const struct vec *v = &appendix_a[_i];
	struct dcbor_buf b;
	uint8_t want[128];
	size_t n;

	dcbor_buf_init(&b);
	build(&b, v->ops);
	assert_bytes(&b, v->hex, v->diag);
	n = unhex(v->hex, want, sizeof(want));
	read_back(want, n, v);
	ck_assert_int_eq(check_exact(want, n, true), DCBOR_OK);
	ck_assert_int_eq(check_exact(want, n, false), DCBOR_OK);
	assert_round_trip(want, n, v->hex);
	dcbor_buf_free(&b);
}
END_TEST

/* A prefix of one item is never an item (CBOR is prefix-free). */
START_TEST(appendix_a_truncated)
{
	const struct vec *v = &appendix_a[_i];
	uint8_t want[128];
	size_t n = unhex(v->hex, want, sizeof(want));

	for (size_t i = 0; i < n; i++) {
		for (int canon = 0; canon <= 1; canon++) {
			int rc = check_exact(want, i, canon);

			ck_assert_msg(rc == DCBOR_ETRUNC || rc == DCBOR_ELENGTH,
			    "%s cut at %zu: %s", v->diag, i,
			    dcbor_strerror(rc));
		}
		{
			uint8_t *copy = malloc(i ? i : 1);
			struct dcbor_rd rd;
			size_t used;

			memcpy(copy, want, i);
			ck_assert_int_ne(dcbor_check(copy, i, DCBOR_MAX_DEPTH,
			    true, &used), DCBOR_OK);
			dcbor_rd_init(&rd, copy, i);
			ck_assert_int_eq(dcbor_skip(&rd), -1);
			ck_assert_int_ne(rd.err, DCBOR_OK);
			free(copy);
		}
	}
}
END_TEST

/* Appendix A examples that deterministic CBOR has no room for. */
START_TEST(appendix_a_refused)
{
	static const struct {
		const char	*hex;
		int		 err;
	} t[] = {
		/* Indefinite lengths. */
		{ "5f42010243030405ff", DCBOR_EINDEF },
		{ "7f657374726561646d696e67ff", DCBOR_EINDEF },
		{ "9fff", DCBOR_EINDEF },
		{ "9f018202039f0405ffff", DCBOR_EINDEF },
		{ "9f01820203820405ff", DCBOR_EINDEF },
		{ "83018202039f0405ff", DCBOR_EINDEF },
		{ "83019f0203ff820405", DCBOR_EINDEF },
		{ "9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff",
		    DCBOR_EINDEF },
		{ "bf61610161629f0203ffff", DCBOR_EINDEF },
		{ "826161bf61626163ff", DCBOR_EINDEF },
		{ "bf6346756ef563416d7421ff", DCBOR_EINDEF },
		/* Unassigned simple values: not in the reader's types. */
		{ "f0", DCBOR_EMALFORMED },
		{ "f8ff", DCBOR_EMALFORMED },
	};
	uint8_t b[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = unhex(t[i].hex, b, sizeof(b));

		ck_assert_msg(check_exact(b, n, true) == t[i].err, "%s",
		    t[i].hex);
		ck_assert_msg(check_exact(b, n, false) == t[i].err, "%s",
		    t[i].hex);
	}
}
END_TEST

/* ---- canonical form ------------------------------------------------------ */

/*
 * Non-canonical encodings: refused with canonical=true, accepted with
 * canonical=false, and read-then-written they become the canonical form.
 * The first six are Appendix A's non-shortest floats.
 */
START_TEST(noncanonical_forms)
{
	static const struct {
		const char	*hex;
		const char	*canon;
	} t[] = {
		{ "fa7f800000", "f97c00" },
		{ "fa7fc00000", "f97e00" },
		{ "faff800000", "f9fc00" },
		{ "fb7ff0000000000000", "f97c00" },
		{ "fb7ff8000000000000", "f97e00" },
		{ "fbfff0000000000000", "f9fc00" },
		{ "1817", "17" },
		{ "190017", "17" },
		{ "1a00000017", "17" },
		{ "1b0000000000000017", "17" },
		{ "1900ff", "18ff" },
		{ "1a0000ffff", "19ffff" },
		{ "1b00000000ffffffff", "1affffffff" },
		{ "3817", "37" },
		{ "fb3ff0000000000000", "f93c00" },	/* 1.0 as double */
		{ "fa3fc00000", "f93e00" },		/* 1.5 as single */
		{ "fb40f86a0000000000", "fa47c35000" },	/* 100000.0 */
		{ "f97e01", "f97e00" },			/* NaN payload */
		{ "f9fe00", "f97e00" },			/* negative NaN */
		{ "5801ff", "41ff" },
		{ "780161", "6161" },
		{ "980100", "8100" },
		{ "b8010000", "a10000" },
		{ "d80100", "c100" },
		{ "d9000800", "c800" },	/* found by fuzz_dcbor */
		{ "811817", "8117" },	/* 23 long inside an array */
	};
	uint8_t b[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = unhex(t[i].hex, b, sizeof(b));

		ck_assert_msg(check_exact(b, n, true) == DCBOR_ENONCANON,
		    "%s", t[i].hex);
		ck_assert_msg(check_exact(b, n, false) == DCBOR_OK, "%s",
		    t[i].hex);
		if (t[i].canon != NULL)
			assert_round_trip(b, n, t[i].canon);
	}
}
END_TEST

START_TEST(map_key_order)
{
	uint8_t b[64];
	size_t n;

	/* {2: 1, 1: 2}: out of order. */
	n = unhex("a202010102", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_ENONCANON);
	ck_assert_int_eq(check_exact(b, n, false), DCBOR_OK);
	/*
	 * {10, -1, 100}: RFC 7049 length-first order, not the bytewise order
	 * of RFC 8949 (0a < 1864 < 20).
	 */
	n = unhex("a30a002000186400", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_ENONCANON);
	ck_assert_int_eq(check_exact(b, n, false), DCBOR_OK);
	n = unhex("a30a001864002000", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_OK);
	/* Composite keys inside an array: [-1] (8120) < ["a"] (816161). */
	n = unhex("81a281200081616100", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_OK);
	n = unhex("81a281616100812000", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_ENONCANON);
	ck_assert_int_eq(check_exact(b, n, false), DCBOR_OK);
	/* "a" before "aa": the heads 61 and 62 decide, not the contents. */
	n = unhex("a261610062616100", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_OK);
	/* Out of order in a map nested as a value. */
	n = unhex("a10aa202000100", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_ENONCANON);
}
END_TEST

/*
 * Duplicate keys: refused in canonical mode (the sorted order makes them
 * adjacent, so the check is free); accepted in non-canonical mode, which
 * checks well-formedness only (documented in dcbor.h).
 */
START_TEST(map_duplicate_keys)
{
	uint8_t b[64];
	size_t n;

	n = unhex("a201010102", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_EDUPKEY);
	ck_assert_int_eq(check_exact(b, n, false), DCBOR_OK);
	/* Composite duplicate keys: [1] twice. */
	n = unhex("a2810100810102", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_EDUPKEY);
	ck_assert_int_eq(check_exact(b, n, false), DCBOR_OK);
	/* 1 and 1.0 are different keys. */
	n = unhex("a20100f93c0000", b, sizeof(b));
	ck_assert_int_eq(check_exact(b, n, true), DCBOR_OK);
}
END_TEST

/* RFC 8949 4.2.1's example order: 10, 100, -1, "z", "aa", [100], [-1], false. */
START_TEST(sort_map_order)
{
	struct dcbor_buf b;
	struct dcbor_rd rd;
	uint64_t n, v;

	dcbor_buf_init(&b);
	dcbor_put_array(&b, 2);
	dcbor_put_cstr(&b, "prefix");
	dcbor_put_map(&b, 8);
	dcbor_put_bool(&b, false);	dcbor_put_uint(&b, 7);
	dcbor_put_array(&b, 1);		dcbor_put_int(&b, -1);
	dcbor_put_uint(&b, 6);
	dcbor_put_cstr(&b, "aa");	dcbor_put_uint(&b, 4);
	dcbor_put_uint(&b, 10);		dcbor_put_uint(&b, 0);
	dcbor_put_array(&b, 1);		dcbor_put_uint(&b, 100);
	dcbor_put_uint(&b, 5);
	dcbor_put_int(&b, -1);		dcbor_put_uint(&b, 2);
	dcbor_put_cstr(&b, "z");	dcbor_put_uint(&b, 3);
	dcbor_put_uint(&b, 100);	dcbor_put_uint(&b, 1);
	ck_assert_int_eq(check_exact(b.data, b.len, true), DCBOR_ENONCANON);
	ck_assert_int_eq(dcbor_sort_map(&b, 8), DCBOR_OK);
	assert_bytes(&b, "8266707265666978a8"
	    "0a00" "186401" "2002" "617a03" "62616104" "81186405" "812006"
	    "f407", "sorted");
	ck_assert_int_eq(check_exact(b.data, b.len, true), DCBOR_OK);
	/* Values travel with their keys: read them back in order. */
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(dcbor_get_array(&rd, &n), 0);
	ck_assert_int_eq(dcbor_skip(&rd), 0);
	ck_assert_int_eq(dcbor_get_map(&rd, &n), 0);
	ck_assert_uint_eq(n, 8);
	for (uint64_t i = 0; i < n; i++) {
		ck_assert_int_eq(dcbor_skip(&rd), 0);
		ck_assert_int_eq(dcbor_get_uint(&rd, &v), 0);
		ck_assert_uint_eq(v, i);
	}
	/* Sorting a sorted map changes nothing. */
	ck_assert_int_eq(dcbor_sort_map(&b, 8), DCBOR_OK);
	ck_assert_int_eq(check_exact(b.data, b.len, true), DCBOR_OK);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(sort_map_edges)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	/* Duplicates: sorted anyway, and reported. */
	dcbor_put_map(&b, 3);
	dcbor_put_cstr(&b, "k");	dcbor_put_uint(&b, 1);
	dcbor_put_cstr(&b, "a");	dcbor_put_uint(&b, 2);
	dcbor_put_cstr(&b, "k");	dcbor_put_uint(&b, 1);
	ck_assert_int_eq(dcbor_sort_map(&b, 0), DCBOR_EDUPKEY);
	ck_assert_int_eq(check_exact(b.data, b.len, true), DCBOR_EDUPKEY);
	/* Not a map. */
	dcbor_buf_reset(&b);
	dcbor_put_array(&b, 0);
	ck_assert_int_eq(dcbor_sort_map(&b, 0), DCBOR_ETYPE);
	/* Empty and one-pair maps are sorted already. */
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 0);
	ck_assert_int_eq(dcbor_sort_map(&b, 0), DCBOR_OK);
	assert_bytes(&b, "a0", "empty map");
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_uint(&b, 1);
	dcbor_put_uint(&b, 2);
	ck_assert_int_eq(dcbor_sort_map(&b, 0), DCBOR_OK);
	assert_bytes(&b, "a10102", "one pair");
	/* A map whose pairs are missing: an error, not a huge allocation. */
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, (size_t)1 << 32);
	ck_assert_int_eq(dcbor_sort_map(&b, 0), DCBOR_ELENGTH);
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 2);
	dcbor_put_uint(&b, 1);
	dcbor_put_uint(&b, 2);
	dcbor_put_uint(&b, 3);
	ck_assert_int_ne(dcbor_sort_map(&b, 0), DCBOR_OK);
	dcbor_buf_free(&b);
}
END_TEST

/*
 * Every tag number writes and reads back, in each head width.  libcbor
 * 0.8 alone refuses the one-byte tags 6..20; the fuzzer found that our
 * own dcbor_put_tag(8) was unreadable.
 */
START_TEST(tags_round_trip)
{
	static const uint64_t big[] = { 23, 24, 255, 256, 65535, 65536,
	    4294967295ull, 4294967296ull, UINT64_MAX };
	struct dcbor_buf b;
	struct dcbor_rd rd;
	struct dcbor_item it;

	dcbor_buf_init(&b);
	for (size_t i = 0; i < 32 + sizeof(big) / sizeof(big[0]); i++) {
		uint64_t tag = i < 32 ? i : big[i - 32];

		dcbor_buf_reset(&b);
		dcbor_put_tag(&b, tag);
		dcbor_put_uint(&b, 0);
		ck_assert_msg(check_exact(b.data, b.len, true) == DCBOR_OK,
		    "tag %llu", (unsigned long long)tag);
		dcbor_rd_init(&rd, b.data, b.len);
		ck_assert_int_eq(dcbor_next(&rd, &it), 0);
		ck_assert_int_eq(it.type, DCBOR_TAG);
		ck_assert_uint_eq(it.u, tag);
		ck_assert_uint_eq(it.head, b.len - 1);
		ck_assert_int_eq(dcbor_skip(&rd), 0);
		ck_assert_uint_eq(dcbor_left(&rd), 0);
	}
	dcbor_buf_free(&b);
}
END_TEST

/* ---- floats -------------------------------------------------------------- */

static double
half_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, e - 25);
	return (h & 0x8000) ? -v : v;
}

/* Every half-precision value is written in three bytes, bit for bit. */
START_TEST(float_every_half)
{
	struct dcbor_buf b;
	struct dcbor_rd rd;
	struct dcbor_item it;

	dcbor_buf_init(&b);
	for (uint32_t h = 0; h <= 0xffff; h++) {
		double v = half_to_double((uint16_t)h);

		dcbor_buf_reset(&b);
		dcbor_put_float(&b, v);
		ck_assert_uint_eq(b.len, 3);
		ck_assert_uint_eq(b.data[0], 0xf9);
		if (isnan(v)) {
			ck_assert_uint_eq(b.data[1], 0x7e);
			ck_assert_uint_eq(b.data[2], 0x00);
		} else {
			ck_assert_msg(b.data[1] == h >> 8 &&
			    b.data[2] == (h & 0xff), "half %04x", h);
		}
		ck_assert_int_eq(dcbor_check(b.data, b.len, 1, true, NULL),
		    DCBOR_OK);
		dcbor_rd_init(&rd, b.data, b.len);
		ck_assert_int_eq(dcbor_next(&rd, &it), 0);
		ck_assert(isnan(v) ? isnan(it.f) : it.f == v &&
		    !!signbit(it.f) == !!signbit(v));
	}
	dcbor_buf_free(&b);
}
END_TEST

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Random singles and doubles: the writer picks the shortest width that
 * keeps the value (checked against the table of every half value), and
 * the reader gives the value back exactly.
 */
START_TEST(float_random_widths)
{
	static double halves[65536];
	size_t nh = 0;
	struct dcbor_buf b;
	struct dcbor_rd rd;
	struct dcbor_item it;
	uint64_t s = 0x9e3779b97f4a7c15ull;

	for (uint32_t h = 0; h <= 0xffff; h++) {
		double v = half_to_double((uint16_t)h);

		if (!isnan(v))
			halves[nh++] = v;
	}
	qsort(halves, nh, sizeof(halves[0]), dbl_cmp);
	dcbor_buf_init(&b);
	for (int i = 0; i < 400000; i++) {
		uint64_t r = xorshift(&s);
		double v;
		bool is_half, is_single;

		if (i % 2 == 0) {
			uint32_t x = (uint32_t)r;
			float f;

			/* Bias towards the half range now and then. */
			if (i % 8 == 0)
				x = (x & 0x8fffffffu) | 0x38000000u;
			memcpy(&f, &x, sizeof(f));
			v = f;
		} else
			memcpy(&v, &r, sizeof(v));
		if (isnan(v))
			continue;
		is_half = bsearch(&v, halves, nh, sizeof(halves[0]),
		    dbl_cmp) != NULL;
		is_single = (double)(float)v == v || isinf(v);
		dcbor_buf_reset(&b);
		dcbor_put_float(&b, v);
		ck_assert_uint_eq(b.len, is_half ? 3 : is_single ? 5 : 9);
		ck_assert_int_eq(dcbor_check(b.data, b.len, 1, true, NULL),
		    DCBOR_OK);
		dcbor_rd_init(&rd, b.data, b.len);
		ck_assert_int_eq(dcbor_next(&rd, &it), 0);
		ck_assert_int_eq(it.type, DCBOR_FLOAT);
		ck_assert(it.f == v && !!signbit(it.f) == !!signbit(v));
	}
	dcbor_buf_free(&b);
}
END_TEST

/* ---- hostile input ------------------------------------------------------- */

START_TEST(lying_lengths)
{
	static const struct {
		const char	*hex;
		int		 err;
	} t[] = {
		{ "5b1000000000000000", DCBOR_ELENGTH },	/* 2^60 bytes */
		{ "7b1000000000000000", DCBOR_ELENGTH },
		{ "5bffffffffffffffff00", DCBOR_ELENGTH },
		{ "5a7fffffff00", DCBOR_ELENGTH },
		{ "4501", DCBOR_ELENGTH },
		{ "9b0000000100000000", DCBOR_ELENGTH },	/* 2^32 items */
		{ "9affffffff00", DCBOR_ELENGTH },
		{ "9bffffffffffffffff", DCBOR_ELENGTH },
		{ "bb0000000100000000", DCBOR_ELENGTH },
		{ "a3010203", DCBOR_ELENGTH },	/* 3 pairs in 3 bytes */
		{ "8201", DCBOR_ELENGTH },
		{ "5b00000000", DCBOR_ETRUNC },		/* cut head */
		{ "c0", DCBOR_ETRUNC },			/* tag, no item */
		{ "", DCBOR_ETRUNC },
		{ "1c", DCBOR_EMALFORMED },		/* reserved AI */
		{ "5d", DCBOR_EMALFORMED },
		{ "1f", DCBOR_EMALFORMED },		/* indefinite uint */
		{ "ff", DCBOR_EMALFORMED },		/* lone break */
		{ "0000", DCBOR_ETRAILING },
	};
	uint8_t b[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = unhex(t[i].hex, b, sizeof(b));

		ck_assert_msg(check_exact(b, n, true) == t[i].err, "%s: %s",
		    t[i].hex, dcbor_strerror(check_exact(b, n, true)));
		ck_assert_msg(check_exact(b, n, false) == t[i].err, "%s",
		    t[i].hex);
	}
}
END_TEST

START_TEST(trailing_and_used)
{
	uint8_t b[] = { 0x82, 0x01, 0x02, 0xff, 0xff };
	size_t used = 0;

	ck_assert_int_eq(dcbor_check(b, sizeof(b), 4, true, NULL),
	    DCBOR_ETRAILING);
	ck_assert_int_eq(dcbor_check(b, sizeof(b), 4, true, &used), DCBOR_OK);
	ck_assert_uint_eq(used, 3);
}
END_TEST

/* n containers, each holding the next; the innermost holds inner[]. */
static size_t
nest(uint8_t *b, int n, uint8_t head, const uint8_t *inner, size_t ilen)
{
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		b[len++] = head;
		if (head == 0xa1)
			b[len++] = 0x00;	/* key 0, value: the next map */
	}
	memcpy(b + len, inner, ilen);
	return len + ilen;
}

START_TEST(depth_limit)
{
	static const uint8_t heads[] = { 0x81, 0xa1, 0xc1 };
	static const struct {
		uint8_t	in[2];
		size_t	len;
	} inners[] = { { { 0x00 }, 1 }, { { 0x80 }, 1 }, { { 0xa0 }, 1 } };
	uint8_t b[256];

	for (size_t h = 0; h < sizeof(heads); h++) {
		for (size_t k = 0; k < sizeof(inners) / sizeof(inners[0]); k++) {
			/* An empty innermost container counts as a level. */
			int extra = inners[k].in[0] != 0x00;
			size_t n;

			n = nest(b, 64 - extra, heads[h], inners[k].in,
			    inners[k].len);
			ck_assert_msg(check_exact(b, n, true) == DCBOR_OK,
			    "head %02x inner %02x: 64 deep", heads[h],
			    inners[k].in[0]);
			n = nest(b, 65 - extra, heads[h], inners[k].in,
			    inners[k].len);
			ck_assert_msg(check_exact(b, n, true) == DCBOR_EDEPTH,
			    "head %02x inner %02x: 65 deep", heads[h],
			    inners[k].in[0]);
			ck_assert_int_eq(check_exact(b, n, false),
			    DCBOR_EDEPTH);
		}
	}
	/* A smaller limit, and a limit above the maximum is clamped. */
	b[0] = 0x81; b[1] = 0x81; b[2] = 0x00;
	ck_assert_int_eq(dcbor_check(b, 3, 2, true, NULL), DCBOR_OK);
	ck_assert_int_eq(dcbor_check(b, 3, 1, true, NULL), DCBOR_EDEPTH);
	ck_assert_int_eq(dcbor_check(b + 2, 1, 0, true, NULL), DCBOR_OK);
	ck_assert_int_eq(dcbor_check(b + 1, 2, 0, true, NULL), DCBOR_EDEPTH);
	{
		size_t n = nest(b, 65, 0x81, (const uint8_t *)"", 1);

		ck_assert_int_eq(dcbor_check(b, n, 1000, true, NULL),
		    DCBOR_EDEPTH);
	}
}
END_TEST

/* ---- typed reads ----------------------------------------------------- */

/* Each typed read refuses an item of another type and leaves it unread. */
START_TEST(get_wrong_type)
{
	/* 1, "a", h'01', [], {}, true, null, 1.5 */
	uint8_t b[32];
	size_t n = unhex("016161410180a0f5f6f93e00", b, sizeof(b));
	struct dcbor_rd rd;
	const uint8_t *p;
	const char *s;
	uint64_t u;
	int64_t i;
	bool v;
	size_t len;
	uint8_t fixed[1];

	dcbor_rd_init(&rd, b, n);
	ck_assert_int_eq(dcbor_get_text(&rd, &s, &len), -1);
	ck_assert_int_eq(rd.err, DCBOR_ETYPE);
	ck_assert_ptr_eq(rd.p, b);
	/* Sticky: nothing reads after the first error. */
	ck_assert_int_eq(dcbor_get_uint(&rd, &u), -1);
	ck_assert_int_eq(rd.err, DCBOR_ETYPE);

#define WRONG(off, call) do {						\
	dcbor_rd_init(&rd, b + (off), n - (off));			\
	ck_assert_msg((call) == -1, #call " at %d", (off));		\
	ck_assert_int_eq(rd.err, DCBOR_ETYPE);				\
	ck_assert_ptr_eq(rd.p, b + (off));				\
} while (0)
	WRONG(0, dcbor_get_bytes(&rd, &p, &len));
	WRONG(0, dcbor_get_bool(&rd, &v));
	WRONG(0, dcbor_get_array(&rd, &u));
	WRONG(0, dcbor_get_map(&rd, &u));
	WRONG(0, dcbor_get_fixed(&rd, fixed, 1));
	WRONG(1, dcbor_get_uint(&rd, &u));
	WRONG(1, dcbor_get_int(&rd, &i));
	WRONG(1, dcbor_get_bytes(&rd, &p, &len));
	WRONG(3, dcbor_get_text(&rd, &s, &len));
	WRONG(5, dcbor_get_map(&rd, &u));
	WRONG(6, dcbor_get_array(&rd, &u));
	WRONG(7, dcbor_get_uint(&rd, &u));
	WRONG(8, dcbor_get_bool(&rd, &v));
	WRONG(9, dcbor_get_int(&rd, &i));
#undef WRONG

	/* And each reads its own type. */
	dcbor_rd_init(&rd, b, n);
	ck_assert_int_eq(dcbor_get_uint(&rd, &u), 0);
	ck_assert_uint_eq(u, 1);
	ck_assert_int_eq(dcbor_get_text(&rd, &s, &len), 0);
	ck_assert(len == 1 && s[0] == 'a');
	ck_assert_int_eq(dcbor_get_fixed(&rd, fixed, 1), 0);
	ck_assert_uint_eq(fixed[0], 1);
	ck_assert_int_eq(dcbor_get_array(&rd, &u), 0);
	ck_assert_uint_eq(u, 0);
	ck_assert_int_eq(dcbor_get_map(&rd, &u), 0);
	ck_assert_uint_eq(u, 0);
	ck_assert_int_eq(dcbor_get_bool(&rd, &v), 0);
	ck_assert(v);
	ck_assert(dcbor_take_null(&rd));
	ck_assert(!dcbor_take_null(&rd));
	ck_assert_int_eq(dcbor_get_raw(&rd, &p, &len), 0);
	ck_assert(len == 3 && p == b + 9);
	ck_assert_uint_eq(dcbor_left(&rd), 0);
	ck_assert_int_eq(dcbor_get_uint(&rd, &u), -1);
	ck_assert_int_eq(rd.err, DCBOR_ETRUNC);
}
END_TEST

START_TEST(get_int_range)
{
	uint8_t b[16];
	struct dcbor_rd rd;
	int64_t v;
	size_t n;

	n = unhex("3b7fffffffffffffff", b, sizeof(b));
	dcbor_rd_init(&rd, b, n);
	ck_assert_int_eq(dcbor_get_int(&rd, &v), 0);
	ck_assert(v == INT64_MIN);
	n = unhex("1b7fffffffffffffff", b, sizeof(b));
	dcbor_rd_init(&rd, b, n);
	ck_assert_int_eq(dcbor_get_int(&rd, &v), 0);
	ck_assert(v == INT64_MAX);
	n = unhex("1b8000000000000000", b, sizeof(b));
	dcbor_rd_init(&rd, b, n);
	ck_assert_int_eq(dcbor_get_int(&rd, &v), -1);
	ck_assert_int_eq(rd.err, DCBOR_ERANGE);
	n = unhex("3b8000000000000000", b, sizeof(b));
	dcbor_rd_init(&rd, b, n);
	ck_assert_int_eq(dcbor_get_int(&rd, &v), -1);
	ck_assert_int_eq(rd.err, DCBOR_ERANGE);
	/* Fixed-size bytes of the wrong size. */
	n = unhex("420102", b, sizeof(b));
	dcbor_rd_init(&rd, b, n);
	ck_assert_int_eq(dcbor_get_fixed(&rd, b + 8, 3), -1);
	ck_assert_int_eq(rd.err, DCBOR_ERANGE);
}
END_TEST

/* ---- writer odds and ends ----------------------------------------------- */

START_TEST(writer_ints_and_buffers)
{
	struct dcbor_buf b;
	uint8_t *p;
	size_t len;

	dcbor_buf_init(&b);
	dcbor_put_int(&b, INT64_MIN);
	dcbor_put_int(&b, INT64_MAX);
	dcbor_put_int(&b, -24);
	dcbor_put_int(&b, -25);
	dcbor_put_cstr(&b, "");
	dcbor_put_bytes(&b, NULL, 0);
	assert_bytes(&b, "3b7fffffffffffffff1b7fffffffffffffff37381860"
	    "40", "ints");
	/* Growth past the first allocation keeps the contents. */
	for (int i = 0; i < 1000; i++)
		dcbor_put_uint(&b, 1000000);
	ck_assert_uint_eq(b.len, 23 + 5000);
	ck_assert_uint_eq(b.data[23 + 4995], 0x1a);
	p = dcbor_buf_steal(&b, &len);
	ck_assert_uint_eq(len, 5023);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	free(p);
	p = dcbor_buf_steal(&b, &len);	/* empty: still a freeable pointer */
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(len, 0);
	free(p);
	dcbor_buf_free(&b);
}
END_TEST

/* Map keys: dcbor_text_is compares a read text, dcbor_get_key reads one. */
START_TEST(keys_by_name)
{
	struct dcbor_buf b;
	struct dcbor_rd rd;
	const char *k;
	size_t n;

	ck_assert(dcbor_text_is("cid", 3, "cid"));
	ck_assert(!dcbor_text_is("cid", 3, "ci"));
	ck_assert(!dcbor_text_is("ci", 2, "cid"));
	ck_assert(!dcbor_text_is("cix", 3, "cid"));
	ck_assert(dcbor_text_is("", 0, ""));
	dcbor_buf_init(&b);
	dcbor_put_cstr(&b, "size");
	dcbor_put_cstr(&b, "size");
	dcbor_put_uint(&b, 4);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(dcbor_get_key(&rd, "size"), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "piece"), -1);
	/* A key that is not text is not a key. */
	ck_assert_int_eq(dcbor_get_key(&rd, "4"), -1);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(dcbor_get_text(&rd, &k, &n), 0);
	ck_assert(dcbor_text_is(k, n, "size"));
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(strerror_names)
{
	ck_assert_str_eq(dcbor_strerror(DCBOR_OK), "ok");
	ck_assert_str_eq(dcbor_strerror(DCBOR_ETRUNC), "trunc");
	ck_assert_str_eq(dcbor_strerror(DCBOR_ETRAILING), "trailing");
	ck_assert_str_eq(dcbor_strerror(-1), "unknown");
	ck_assert_str_eq(dcbor_strerror(DCBOR_EUTF8), "utf8");
	ck_assert_str_eq(dcbor_strerror(DCBOR_EUTF8 + 1), "unknown");
}
END_TEST

START_TEST(text_must_be_utf8_when_canonical)
{
	/* ["a", "\x80"]: a text string holding a lone continuation byte. */
	static const uint8_t bad[] = { 0x82, 0x61, 'a', 0x61, 0x80 };
	static const uint8_t good[] = { 0x82, 0x61, 'a', 0x62, 0xc3, 0xa9 };

	ck_assert_int_eq(dcbor_check(bad, sizeof(bad), 64, true, NULL),
	    DCBOR_EUTF8);
	ck_assert_int_eq(dcbor_check(bad, sizeof(bad), 64, false, NULL),
	    DCBOR_OK);
	ck_assert_int_eq(dcbor_check(good, sizeof(good), 64, true, NULL),
	    DCBOR_OK);
}
END_TEST

/*
 * The head decoder reads every head as libcbor's decoder does
 * (dcbor_ref.h): every input of one and two bytes, and every initial byte
 * followed by 1 to 16 bytes of several fillers (argument bytes of every
 * width, strings that fit and ones that run past the end, floats, NaNs),
 * each head of the input in turn until the first error; same item, same
 * error, same position.
 */
static void
heads_agree(const uint8_t *in, size_t len)
{
	struct dcbor_rd rd;
	const uint8_t *p = in;

	dcbor_rd_init(&rd, in, len);
	for (;;) {
		struct dcbor_item a, b;
		int want = dcbor_ref_head(&p, (size_t)(in + len - p), &b);
		int got = dcbor_next(&rd, &a) == 0 ? DCBOR_OK : rd.err;

		ck_assert_msg(got == want, "%02x len %zu: %s, libcbor %s",
		    in[0], len, dcbor_strerror(got), dcbor_strerror(want));
		if (got != DCBOR_OK)
			return;
		ck_assert_msg(dcbor_ref_same(&a, &b) && rd.p == p,
		    "%02x len %zu: items differ", in[0], len);
	}
}

START_TEST(heads_read_as_libcbor_reads_them)
{
	static const uint8_t fill[] = { 0x00, 0x01, 0x17, 0x18, 0x7e, 0x7f,
	    0x80, 0xc0, 0xf6, 0xff };
	uint8_t in[17];

	for (unsigned a = 0; a < 256; a++) {
		in[0] = (uint8_t)a;
		heads_agree(in, 1);
		for (unsigned b = 0; b < 256; b++) {
			in[1] = (uint8_t)b;
			heads_agree(in, 2);
		}
		for (size_t f = 0; f < sizeof(fill); f++)
			for (size_t len = 2; len <= sizeof(in); len++) {
				memset(in + 1, fill[f], len - 1);
				heads_agree(in, len);
			}
	}
}
END_TEST

static Suite *
dcbor_suite(void)
{
	Suite *s = suite_create("dcbor");
	TCase *tc;

	tc = tcase_create("appendix_a");
	tcase_add_loop_test(tc, appendix_a_encode_decode, 0, (int)NVEC);
	tcase_add_loop_test(tc, appendix_a_truncated, 0, (int)NVEC);
	tcase_add_test(tc, appendix_a_refused);
	tcase_add_test(tc, heads_read_as_libcbor_reads_them);
	suite_add_tcase(s, tc);

	tc = tcase_create("canonical");
	tcase_add_test(tc, noncanonical_forms);
	tcase_add_test(tc, map_key_order);
	tcase_add_test(tc, map_duplicate_keys);
	tcase_add_test(tc, sort_map_order);
	tcase_add_test(tc, sort_map_edges);
	tcase_add_test(tc, tags_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("floats");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, float_every_half);
	tcase_add_test(tc, float_random_widths);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, lying_lengths);
	tcase_add_test(tc, trailing_and_used);
	tcase_add_test(tc, depth_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("reader");
	tcase_add_test(tc, get_wrong_type);
	tcase_add_test(tc, get_int_range);
	tcase_add_test(tc, writer_ints_and_buffers);
	tcase_add_test(tc, keys_by_name);
	tcase_add_test(tc, strerror_names);
	tcase_add_test(tc, text_must_be_utf8_when_canonical);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dcbor_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_bao.c: Bao outboards, slices and slice verification. At g = 0
 * (1 KiB groups) every case of Bao's vectors
 * (../shared/data/bao/test_vectors.json: hash, encode, outboard, slice),
 * where each listed corruption must be refused; a few of their figures
 * written here as facts for a clone without the data. At g = 4 (16 KiB,
 * the default) and other sizes: the root is BLAKE3 (and b3sum's), the
 * outboard has one pair per group but one and is the g = 0 outboard with
 * the pairs under a group left out, random slices verify and return
 * exactly their bytes, and every corrupted or truncated slice is refused
 * before a wrong byte is handed on.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bao.h"
#include "blake3.h"
#include "hex.h"
#include "random_bytes.h"

#define VECTORS	"../shared/data/bao/test_vectors.json"

static const char *const paths[] = { "portable", "sse41", "avx2", "avx512" };
#define NPATHS	(sizeof(paths) / sizeof(paths[0]))

/* Bao's vector input: little-endian u32 counter from 1. */
static uint8_t *
counter_input(size_t len)
{
	uint8_t *p = malloc(len + 4);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < len; i += 4) {
		uint32_t c = (uint32_t)(i / 4 + 1);

		p[i] = (uint8_t)c;
		p[i + 1] = (uint8_t)(c >> 8);
		p[i + 2] = (uint8_t)(c >> 16);
		p[i + 3] = (uint8_t)(c >> 24);
	}
	return p;
}

static void
hex32(const char *hex, uint8_t out[32])
{
	ck_assert(hex_decode(hex, out, 32) == 0);
}

/* What a verifier handed on: bytes must arrive in order, contiguous. */
struct sink {
	uint8_t		*buf;
	size_t		 cap;
	uint64_t	 first, n;
	int		 calls;
};

static void
sink_emit(void *arg, uint64_t off, const uint8_t *p, size_t n)
{
	struct sink *s = arg;

	if (s->calls++ == 0)
		s->first = off;
	ck_assert_uint_eq(off, s->first + s->n);
	ck_assert_uint_le(s->n + n, s->cap);
	memcpy(s->buf + s->n, p, n);
	s->n += n;
}

/* Verify a slice fed in pieces of `piece` bytes (0: all at once).
 * 0 when accepted; every byte handed on must be the content's. */
static int
verify(const uint8_t root[32], unsigned g, uint64_t off, uint64_t len,
    const uint8_t *slice, size_t slice_len, size_t piece,
    const uint8_t *content, uint64_t content_len, struct sink *s)
{
	struct bao_verify *v = bao_verify_new(root, g, off, len, sink_emit, s);
	int rc = 0;

	ck_assert_ptr_nonnull(v);
	memset(s, 0, sizeof(*s));
	s->cap = content_len + 1;
	s->buf = malloc(s->cap);
	for (size_t i = 0; i < slice_len && rc == 0; ) {
		size_t n = piece == 0 || piece > slice_len - i ?
		    slice_len - i : piece;

		rc = bao_verify_feed(v, slice + i, n);
		i += n;
	}
	if (rc == 0)
		rc = bao_verify_finish(v);
	if (rc != 0) {
		uint64_t bo, bl;

		ck_assert_ptr_nonnull(bao_verify_error(v, &bo, &bl));
	} else {
		ck_assert_ptr_null(bao_verify_error(v, NULL, NULL));
	}
	/* Whatever was handed on, accepted or not, is the content. */
	if (s->n > 0)
		ck_assert(memcmp(s->buf, content + s->first, s->n) == 0);
	bao_verify_free(v);
	return rc;
}

/* The bytes [off, off + len) a slice must hand on (Bao's rules). */
static void
expect_range(uint64_t content_len, uint64_t off, uint64_t len, uint64_t *a,
    uint64_t *n)
{
	*a = off < content_len ? off : content_len;
	*n = len < content_len - *a ? len : content_len - *a;
}

static void
check_accepts(const uint8_t root[32], unsigned g, uint64_t off, uint64_t len,
    const uint8_t *slice, size_t slice_len, const uint8_t *content,
    uint64_t content_len)
{
	static const size_t pieces[] = { 0, 1, 7, 64, 1000, 4096 };
	uint64_t a, n;

	expect_range(content_len, off, len, &a, &n);
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		struct sink s;

		ck_assert_msg(verify(root, g, off, len, slice, slice_len,
		    pieces[i], content, content_len, &s) == 0,
		    "g %u off %llu len %llu piece %zu", g,
		    (unsigned long long)off, (unsigned long long)len,
		    pieces[i]);
		ck_assert_uint_eq(s.n, n);
		if (n > 0)
			ck_assert_uint_eq(s.first, a);
		free(s.buf);
	}
}

/* Flip one byte of the slice: the verifier must refuse it. */
static void
check_refuses_at(const uint8_t root[32], unsigned g, uint64_t off,
    uint64_t len, const uint8_t *slice, size_t slice_len, size_t at,
    const uint8_t *content, uint64_t content_len)
{
	uint8_t *bad = malloc(slice_len + 1);
	struct sink s;

	memcpy(bad, slice, slice_len);
	bad[at] ^= 1;
	ck_assert_msg(verify(root, g, off, len, bad, slice_len, 0, content,
	    content_len, &s) != 0, "corruption at %zu accepted", at);
	free(s.buf);
	free(bad);
}

START_TEST(test_vectors_file)
{
	json_error_t err;
	json_t *root = json_load_file(VECTORS, 0, &err), *sec;
	size_t ran = 0;

	if (root == NULL) {
		printf("test_bao: skipped the vector file (%s: %s)\n", VECTORS,
		    err.text);
		return;
	}
	for (size_t p = 0; p < NPATHS; p++) {
		if (blake3_use(paths[p]) != 0)
			continue;
		/* hash: the root is BLAKE3, and the outboard pass says so. */
		sec = json_object_get(root, "hash");
		for (size_t i = 0; i < json_array_size(sec); i++) {
			json_t *c = json_array_get(sec, i);
			size_t len = (size_t)json_integer_value(
			    json_object_get(c, "input_len"));
			uint8_t *in = counter_input(len), want[32], got[32];
			uint8_t *ob = malloc(bao_outboard_len(len, 0));

			hex32(json_string_value(json_object_get(c, "bao_hash")),
			    want);
			blake3_hash(in, len, got);
			ck_assert(memcmp(got, want, 32) == 0);
			bao_outboard(in, len, 0, got, ob);
			ck_assert(memcmp(got, want, 32) == 0);
			free(ob);
			free(in);
			ran++;
		}
		/* encode: the combined encoding is the slice of everything. */
		sec = json_object_get(root, "encode");
		for (size_t i = 0; i < json_array_size(sec); i++) {
			json_t *c = json_array_get(sec, i), *cor;
			size_t len = (size_t)json_integer_value(
			    json_object_get(c, "input_len"));
			uint8_t *in = counter_input(len), want[32], got[32], rt[32];
			uint8_t *ob = malloc(bao_outboard_len(len, 0));
			size_t elen = (size_t)bao_slice_len(len, 0, 0, len);
			uint8_t *enc = malloc(elen + 1);

			ck_assert_uint_eq(elen, json_integer_value(
			    json_object_get(c, "output_len")));
			bao_outboard(in, len, 0, rt, ob);
			ck_assert_int_eq(bao_slice(in, len, ob, 0, 0, len, enc),
			    0);
			hex32(json_string_value(json_object_get(c,
			    "encoded_blake3")), want);
			blake3_hash(enc, elen, got);
			ck_assert(memcmp(got, want, 32) == 0);
			check_accepts(rt, 0, 0, len, enc, elen, in, len);
			cor = json_object_get(c, "corruptions");
			for (size_t k = 0; k < json_array_size(cor); k++)
				check_refuses_at(rt, 0, 0, len, enc, elen,
				    (size_t)json_integer_value(
				    json_array_get(cor, k)), in, len);
			free(enc);
			free(ob);
			free(in);
		}
		/* outboard: its bytes; a corrupt outboard or input byte is
		 * refused when the content is read through it. */
		sec = json_object_get(root, "outboard");
		for (size_t i = 0; i < json_array_size(sec); i++) {
			json_t *c = json_array_get(sec, i), *cor;
			size_t len = (size_t)json_integer_value(
			    json_object_get(c, "input_len"));
			size_t oblen = (size_t)bao_outboard_len(len, 0);
			size_t elen = (size_t)bao_slice_len(len, 0, 0, len);
			uint8_t *in = counter_input(len), want[32], got[32], rt[32];
			uint8_t *ob = malloc(oblen), *enc = malloc(elen + 1);

			ck_assert_uint_eq(oblen, json_integer_value(
			    json_object_get(c, "output_len")));
			bao_outboard(in, len, 0, rt, ob);
			hex32(json_string_value(json_object_get(c,
			    "encoded_blake3")), want);
			blake3_hash(ob, oblen, got);
			ck_assert(memcmp(got, want, 32) == 0);
			cor = json_object_get(c, "outboard_corruptions");
			for (size_t k = 0; k < json_array_size(cor); k++) {
				size_t at = (size_t)json_integer_value(
				    json_array_get(cor, k));
				struct sink s;

				ob[at] ^= 1;
				/* A wrong length is refused by the slicer,
				 * a wrong pair by the verifier. */
				if (bao_slice(in, len, ob, 0, 0, len, enc) == 0) {
					ck_assert_msg(verify(rt, 0, 0, len, enc,
					    elen, 0, in, len, &s) != 0,
					    "outboard corruption %zu", at);
					free(s.buf);
				} else {
					ck_assert_uint_lt(at, BAO_HEADER_LEN);
				}
				ob[at] ^= 1;
			}
			cor = json_object_get(c, "input_corruptions");
			for (size_t k = 0; k < json_array_size(cor); k++) {
				size_t at = (size_t)json_integer_value(
				    json_array_get(cor, k));
				uint8_t *bad = malloc(len);
				struct sink s;

				memcpy(bad, in, len);
				bad[at] ^= 1;
				ck_assert_int_eq(bao_slice(bad, len, ob, 0, 0,
				    len, enc), 0);
				ck_assert_msg(verify(rt, 0, 0, len, enc, elen,
				    0, in, len, &s) != 0, "input corruption %zu",
				    at);
				free(s.buf);
				free(bad);
			}
			free(enc);
			free(ob);
			free(in);
		}
		/* slice: length, bytes, acceptance, every corruption. */
		sec = json_object_get(root, "slice");
		for (size_t i = 0; i < json_array_size(sec); i++) {
			json_t *c = json_array_get(sec, i);
			json_t *sl = json_object_get(c, "slices");
			size_t len = (size_t)json_integer_value(
			    json_object_get(c, "input_len"));
			uint8_t *in = counter_input(len), rt[32], want[32];
			uint8_t *ob = malloc(bao_outboard_len(len, 0));

			bao_outboard(in, len, 0, rt, ob);
			hex32(json_string_value(json_object_get(c, "bao_hash")),
			    want);
			ck_assert(memcmp(rt, want, 32) == 0);
			for (size_t k = 0; k < json_array_size(sl); k++) {
				json_t *e = json_array_get(sl, k), *cor;
				uint64_t off = (uint64_t)json_integer_value(
				    json_object_get(e, "start"));
				uint64_t n = (uint64_t)json_integer_value(
				    json_object_get(e, "len"));
				size_t slen = (size_t)bao_slice_len(len, 0, off,
				    n);
				uint8_t *s = malloc(slen + 1), got[32];

				ck_assert_uint_eq(slen, json_integer_value(
				    json_object_get(e, "output_len")));
				ck_assert_int_eq(bao_slice(in, len, ob, 0, off,
				    n, s), 0);
				hex32(json_string_value(json_object_get(e,
				    "output_blake3")), want);
				blake3_hash(s, slen, got);
				ck_assert(memcmp(got, want, 32) == 0);
				check_accepts(rt, 0, off, n, s, slen, in, len);
				cor = json_object_get(e, "corruptions");
				for (size_t q = 0; q < json_array_size(cor); q++)
					check_refuses_at(rt, 0, off, n, s, slen,
					    (size_t)json_integer_value(
					    json_array_get(cor, q)), in, len);
				free(s);
			}
			free(ob);
			free(in);
		}
	}
	blake3_use(NULL);
	ck_assert(ran > 0);
	json_decref(root);
}
END_TEST

/* Facts from Bao's vectors, kept here: BLAKE3 of the outboard, of the
 * combined encoding and of one slice (13 KiB input, g = 0). */
START_TEST(test_vector_facts)
{
	size_t len = 13312;
	uint8_t *in = counter_input(len), rt[32], got[32], want[32];
	uint8_t *ob = malloc(bao_outboard_len(len, 0));
	size_t elen = (size_t)bao_slice_len(len, 0, 0, len);
	uint8_t *enc = malloc(elen), *s;

	bao_outboard(in, len, 0, rt, ob);
	ck_assert_uint_eq(bao_outboard_len(len, 0), 776);
	blake3_hash(ob, 776, got);
	hex32("ad01dbb6b7d0fefd1f8e52783d6212856546f382b815a7c370377bc79e0bd41a",
	    want);
	ck_assert(memcmp(got, want, 32) == 0);
	ck_assert_uint_eq(elen, 14088);
	ck_assert_int_eq(bao_slice(in, len, ob, 0, 0, len, enc), 0);
	blake3_hash(enc, elen, got);
	hex32("e5ca844ba6ac49fad8f888b63b437d7d25ee15d80a7bc01edac16f78e2a65271",
	    want);
	ck_assert(memcmp(got, want, 32) == 0);
	ck_assert_uint_eq(bao_slice_len(len, 0, 1024, 1024), 1288);
	s = malloc(1288);
	ck_assert_int_eq(bao_slice(in, len, ob, 0, 1024, 1024, s), 0);
	blake3_hash(s, 1288, got);
	hex32("5d28684321edc332c061d7089736c7eae3916aacdb6a8b61912b53fc3127333e",
	    want);
	ck_assert(memcmp(got, want, 32) == 0);
	check_accepts(rt, 0, 1024, 1024, s, 1288, in, len);
	for (size_t at = 0; at < 1288; at++)
		if (at >= 7)
			check_refuses_at(rt, 0, 1024, 1024, s, 1288, at, in,
			    len);
	free(s);
	free(enc);
	free(ob);
	free(in);
}
END_TEST

/* The g = 0 outboard's pairs whose subtree is bigger than a group of
 * 1024 << g bytes, in order: what the g outboard must hold. */
static void
keep_pairs(const uint8_t **ob0, uint64_t n, unsigned g, uint8_t **out)
{
	uint64_t left;

	if (n <= BLAKE3_CHUNK_LEN)
		return;
	if (n > (uint64_t)BLAKE3_CHUNK_LEN << g) {
		memcpy(*out, *ob0, 64);
		*out += 64;
	}
	*ob0 += 64;
	left = blake3_left_len(n);
	keep_pairs(ob0, left, g, out);
	keep_pairs(ob0, n - left, g, out);
}

static void
check_groups(const uint8_t *in, size_t len, unsigned g)
{
	uint8_t r0[32], rg[32], h[32];
	size_t ol0 = (size_t)bao_outboard_len(len, 0);
	size_t olg = (size_t)bao_outboard_len(len, g);
	uint8_t *ob0 = malloc(ol0), *obg = malloc(olg), *want = malloc(olg);
	const uint8_t *p = ob0 + 8;
	uint8_t *w = want + 8;
	uint64_t groups = len == 0 ? 1 : (len + ((size_t)1024 << g) - 1) >>
	    (10 + g);

	ck_assert_uint_eq(olg, 8 + 64 * (groups - 1));
	blake3_hash(in, len, h);
	bao_outboard(in, len, 0, r0, ob0);
	bao_outboard(in, len, g, rg, obg);
	ck_assert(memcmp(r0, h, 32) == 0);
	ck_assert(memcmp(rg, h, 32) == 0);
	memcpy(want, ob0, 8);
	keep_pairs(&p, len, g, &w);
	ck_assert_uint_eq((size_t)(w - want), olg);
	ck_assert_msg(memcmp(obg, want, olg) == 0, "len %zu g %u", len, g);
	free(want);
	free(obg);
	free(ob0);
}

START_TEST(test_groups_match_g0)
{
	static const size_t lens[] = { 0, 1, 1024, 1025, 16383, 16384, 16385,
	    32768, 32769, 65535, 65536, 65537, 100000, 262144, 1048576 + 1,
	    3 * 1048576 + 12345 };

	srandom(4);
	for (size_t p = 0; p < NPATHS; p++) {
		if (blake3_use(paths[p]) != 0)
			continue;
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			uint8_t *in = random_bytes(lens[i]);

			for (unsigned g = 1; g <= 6; g++)
				check_groups(in, lens[i], g);
			free(in);
		}
		for (int i = 0; i < 20; i++) {
			size_t len = (size_t)random() % (4 << 20);
			uint8_t *in = random_bytes(len);

			check_groups(in, len, BAO_GROUP_LOG_DEFAULT);
			check_groups(in, len, (unsigned)random() % 11);
			free(in);
		}
	}
	blake3_use(NULL);
}
END_TEST

/* Random slices at g = 4 and others: accepted with exactly their bytes;
 * a flipped byte anywhere, a cut anywhere, an extra byte: refused. */
START_TEST(test_slices_random)
{
	srandom(27);
	for (int round = 0; round < 40; round++) {
		size_t len = round < 4 ? (size_t)round * 16384 :
		    (size_t)random() % (2 << 20);
		unsigned g = round % 3 == 0 ? (unsigned)random() % 8 :
		    BAO_GROUP_LOG_DEFAULT;
		uint8_t *in = random_bytes(len), rt[32];
		uint8_t *ob = malloc(bao_outboard_len(len, g));

		bao_outboard(in, len, g, rt, ob);
		for (int k = 0; k < 6; k++) {
			uint64_t off = len ? (uint64_t)random() % (len + 10) : 0;
			uint64_t n = k == 5 ? UINT64_MAX :	/* no overflow */
			    (uint64_t)random() % (k < 3 ? 70000 : len + 1);
			size_t slen = (size_t)bao_slice_len(len, g, off, n);
			uint8_t *s = malloc(slen + 1);
			struct sink sk;

			ck_assert_int_eq(bao_slice(in, len, ob, g, off, n, s), 0);
			check_accepts(rt, g, off, n, s, slen, in, len);
			/* Any pair or content byte; of the header, the top
			 * byte (a small change of the length shows only in
			 * the last group, which a slice may leave out: Bao
			 * proves the length only with the last group). */
			for (int c = 0; c < 20 && slen > 8; c++)
				check_refuses_at(rt, g, off, n, s, slen, 8 +
				    (size_t)random() % (slen - 8), in, len);
			check_refuses_at(rt, g, off, n, s, slen, 7, in, len);
			for (int c = 0; c < 5; c++) {
				size_t cut = (size_t)random() % slen;

				ck_assert(verify(rt, g, off, n, s, cut, 0, in,
				    len, &sk) != 0);
				free(sk.buf);
			}
			s[slen] = 0;
			ck_assert(verify(rt, g, off, n, s, slen + 1, 0, in,
			    len, &sk) != 0);
			free(sk.buf);
			free(s);
		}
		free(ob);
		free(in);
	}
}
END_TEST

/* The first bad range names the node that failed. */
START_TEST(test_bad_range)
{
	size_t len = 5 * 16384 + 100;
	uint8_t *in = random_bytes(len), rt[32];
	uint8_t *ob = malloc(bao_outboard_len(len, 4));
	size_t slen = (size_t)bao_slice_len(len, 4, 0, len);
	uint8_t *s = malloc(slen);
	struct bao_verify *v;
	uint64_t bo, bl;

	bao_outboard(in, len, 4, rt, ob);
	ck_assert_int_eq(bao_slice(in, len, ob, 4, 0, len, s), 0);
	/* Layout: header, root pair, left pair (groups 0-3), pair, groups
	 * 0, 1, pair, groups 2, 3, right pair, group 4, group 5 (100
	 * bytes). Group 2's first byte sits after 8 + 4 x 64 + 2 x 16384. */
	s[8 + 4 * 64 + 2 * 16384] ^= 0x80;
	v = bao_verify_new(rt, 4, 0, len, NULL, NULL);
	ck_assert_int_eq(bao_verify_feed(v, s, slen), -1);
	ck_assert_ptr_nonnull(bao_verify_error(v, &bo, &bl));
	ck_assert_uint_eq(bo, 2 * 16384);
	ck_assert_uint_eq(bl, 16384);
	bao_verify_free(v);
	s[8 + 4 * 64 + 2 * 16384] ^= 0x80;
	/* Cut inside the last group: the last group is the bad range. */
	v = bao_verify_new(rt, 4, 0, len, NULL, NULL);
	ck_assert_int_eq(bao_verify_feed(v, s, slen - 50), 0);
	ck_assert_int_eq(bao_verify_finish(v), -1);
	ck_assert_ptr_nonnull(bao_verify_error(v, &bo, &bl));
	ck_assert_uint_eq(bo, 5 * 16384);
	ck_assert_uint_eq(bl, 100);
	bao_verify_free(v);
	ck_assert_ptr_null(bao_verify_new(rt, BAO_GROUP_LOG_MAX + 1, 0, 1,
	    NULL, NULL));
	/* The empty content may come as NULL everywhere. */
	{
		uint8_t ob0[8], sl[8], want[32];

		blake3_hash(NULL, 0, want);
		bao_outboard(NULL, 0, 4, rt, ob0);
		ck_assert(memcmp(rt, want, 32) == 0);
		ck_assert_uint_eq(bao_slice_len(0, 4, 0, 0), 8);
		ck_assert_int_eq(bao_slice(NULL, 0, ob0, 4, 0, 0, sl), 0);
		v = bao_verify_new(rt, 4, 0, 0, NULL, NULL);
		ck_assert_int_eq(bao_verify_feed(v, NULL, 0), 0);
		ck_assert_int_eq(bao_verify_feed(v, sl, 8), 0);
		ck_assert_int_eq(bao_verify_finish(v), 0);
		bao_verify_free(v);
	}
	free(s);
	free(ob);
	free(in);
}
END_TEST

/* g = 4 roots against b3sum, the independent oracle. */
START_TEST(test_b3sum_roots)
{
	char dir[] = "/tmp/test_bao.XXXXXX", cmd[256], line[256];
	size_t lens[12] = { 0, 16383, 16384, 16385, 65536, 1048577 };
	FILE *f;

	if (system("b3sum --version >/dev/null 2>&1") != 0) {
		printf("test_bao: skipped the b3sum oracle (no b3sum)\n");
		return;
	}
	srandom(8);
	for (int i = 6; i < 12; i++)
		lens[i] = (size_t)random() % (3 << 20);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int i = 0; i < 12; i++) {
		uint8_t *in = random_bytes(lens[i]), rt[32];
		uint8_t *ob = malloc(bao_outboard_len(lens[i], 4));
		char name[64], hex[65];

		snprintf(name, sizeof(name), "%s/f", dir);
		f = fopen(name, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(in, 1, lens[i], f), lens[i]);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "b3sum --no-names %s", name);
		f = popen(cmd, "r");
		ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
		ck_assert_int_eq(pclose(f), 0);
		bao_outboard(in, lens[i], 4, rt, ob);
		hex_encode(rt, 32, hex);
		ck_assert(strncmp(hex, line, 64) == 0);
		unlink(name);
		free(ob);
		free(in);
	}
	rmdir(dir);
}
END_TEST

static Suite *
bao_suite(void)
{
	Suite *s = suite_create("bao");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_vectors_file);
	tcase_add_test(tc, test_vector_facts);
	tcase_add_test(tc, test_groups_match_g0);
	tcase_add_test(tc, test_slices_random);
	tcase_add_test(tc, test_bad_range);
	tcase_add_test(tc, test_b3sum_roots);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(bao_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * bench_cbor.c: the Cbor family (the seed's CborCodecBenchmark): encode and
 * decode of a small record and of a 16 KiB blob through dcbor.
 *
 * The small record is shaped like an entry header: a map of 8 mixed fields
 * (two 32-byte ids, three uints, a text, an HLC stamp array, an array of
 * texts).  Encoding emits the pairs in field order and lets dcbor_sort_map
 * make them canonical, as a generic encoder does; encode_small_nosort emits
 * them already in canonical order, so the ratio is the cost of the sort.
 * Decoding is what a receiver does with untrusted bytes: dcbor_check
 * (canonical, depth 64), then the cursor reads every field into a struct;
 * check_small, the check alone, is its baseline.  The reader is zero-copy,
 * so decode_blob_16k never copies the 16 KiB; encode_blob_16k does, and
 * memcpy_16k (the same copy, same buffers, no CBOR) is its baseline.
 *
 * Where the blob sits matters: on the AMD EPYC this was first run on, a
 * 16 KiB memcpy whose destination is 1..63 bytes past the source modulo
 * 4 KiB (4K aliasing) took ~20x longer than the same copy 2 KiB apart.
 * malloc decides that distance, so the rows place the source themselves:
 * param is (destination - source) mod 4096, 2048 for the ordinary rows and
 * 16 for the _aliased row that shows the slow case.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dcbor.h"
#include "hlc.h"

#define BLOB_LEN	(16u * 1024u)

struct rec {
	uint8_t			 id[32];
	uint8_t			 owner[32];
	uint64_t		 kind;
	uint64_t		 ttl;
	uint64_t		 size;
	const char		*group;
	size_t			 group_len;
	struct hlc_stamp	 stamp;
	const char		*tags[4];
	size_t			 tag_len[4];
	size_t			 ntags;
};

struct cbor_state {
	struct rec		 rec;
	struct dcbor_buf	 enc;	/* scratch for encoding */
	struct dcbor_buf	 small;	/* the record, canonical */
	struct dcbor_buf	 blob;	/* the blob, encoded */
	uint8_t			*rawbuf;	/* holds raw, placed (below) */
	uint8_t			*raw;	/* the blob's bytes */
};

static void
put_key(struct dcbor_buf *b, const char *k)
{
	dcbor_put_cstr(b, k);
}

static void
put_id(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "id");
	dcbor_put_bytes(b, r->id, sizeof(r->id));
}

static void
put_ttl(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "ttl");
	dcbor_put_uint(b, r->ttl);
}

static void
put_kind(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "kind");
	dcbor_put_uint(b, r->kind);
}

static void
put_size(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "size");
	dcbor_put_uint(b, r->size);
}

static void
put_tags(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "tags");
	dcbor_put_array(b, r->ntags);
	for (size_t i = 0; i < r->ntags; i++)
		dcbor_put_text(b, r->tags[i], r->tag_len[i]);
}

static void
put_group(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "group");
	dcbor_put_text(b, r->group, r->group_len);
}

static void
put_owner(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "owner");
	dcbor_put_bytes(b, r->owner, sizeof(r->owner));
}

static void
put_stamp(struct dcbor_buf *b, const struct rec *r)
{
	put_key(b, "stamp");
	hlc_encode(b, &r->stamp);
}

/* Field order, then dcbor_sort_map: what a generic encoder does. */
static int
rec_encode(struct dcbor_buf *b, const struct rec *r)
{
	dcbor_put_map(b, 8);
	put_id(b, r);
	put_kind(b, r);
	put_stamp(b, r);
	put_owner(b, r);
	put_group(b, r);
	put_ttl(b, r);
	put_size(b, r);
	put_tags(b, r);
	return dcbor_sort_map(b, 0) == DCBOR_OK ? 0 : -1;
}

/* Canonical order by hand (shorter keys first, then bytewise). */
static void
rec_encode_nosort(struct dcbor_buf *b, const struct rec *r)
{
	dcbor_put_map(b, 8);
	put_id(b, r);
	put_ttl(b, r);
	put_kind(b, r);
	put_size(b, r);
	put_tags(b, r);
	put_group(b, r);
	put_owner(b, r);
	put_stamp(b, r);
}

static bool
key_is(const char *k, size_t n, const char *want)
{
	return strlen(want) == n && memcmp(k, want, n) == 0;
}

/* Check, then read every field. 0 or -1. */
static int
rec_decode(const uint8_t *p, size_t len, struct rec *r)
{
	struct dcbor_rd rd;
	uint64_t n, nt;
	const char *k;
	size_t klen;

	if (dcbor_check(p, len, DCBOR_MAX_DEPTH, true, NULL) != DCBOR_OK)
		return -1;
	dcbor_rd_init(&rd, p, len);
	if (dcbor_get_map(&rd, &n) == -1)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		if (dcbor_get_text(&rd, &k, &klen) == -1)
			return -1;
		if (key_is(k, klen, "id")) {
			if (dcbor_get_fixed(&rd, r->id, sizeof(r->id)) == -1)
				return -1;
		} else if (key_is(k, klen, "ttl")) {
			if (dcbor_get_uint(&rd, &r->ttl) == -1)
				return -1;
		} else if (key_is(k, klen, "kind")) {
			if (dcbor_get_uint(&rd, &r->kind) == -1)
				return -1;
		} else if (key_is(k, klen, "size")) {
			if (dcbor_get_uint(&rd, &r->size) == -1)
				return -1;
		} else if (key_is(k, klen, "tags")) {
			if (dcbor_get_array(&rd, &nt) == -1 || nt > 4)
				return -1;
			r->ntags = (size_t)nt;
			for (size_t t = 0; t < r->ntags; t++)
				if (dcbor_get_text(&rd, &r->tags[t],
				    &r->tag_len[t]) == -1)
					return -1;
		} else if (key_is(k, klen, "group")) {
			if (dcbor_get_text(&rd, &r->group,
			    &r->group_len) == -1)
				return -1;
		} else if (key_is(k, klen, "owner")) {
			if (dcbor_get_fixed(&rd, r->owner,
			    sizeof(r->owner)) == -1)
				return -1;
		} else if (key_is(k, klen, "stamp")) {
			if (hlc_parse(&rd, &r->stamp) == -1)
				return -1;
		} else if (dcbor_skip(&rd) == -1)
			return -1;
	}
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

static int
cbor_setup(void **state, size_t param)
{
	static const char group[] = "lab/fleet-7";
	static const char *const tags[] = { "task", "priority:1" };
	struct cbor_state *st;
	struct rec *r;
	uintptr_t dst, src;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	r = &st->rec;
	bench_fill(r->id, sizeof(r->id), 1);
	bench_fill(r->owner, sizeof(r->owner), 2);
	r->kind = 5;
	r->ttl = 60000;
	r->size = 4096;
	r->group = group;
	r->group_len = sizeof(group) - 1;
	r->stamp.phys = 1767225600000u;
	r->stamp.logical = 3;
	r->stamp.node = 0x8f3a29c1d4e5b607u;
	r->ntags = 2;
	for (size_t i = 0; i < r->ntags; i++) {
		r->tags[i] = tags[i];
		r->tag_len[i] = strlen(tags[i]);
	}
	dcbor_buf_init(&st->enc);
	dcbor_buf_init(&st->small);
	dcbor_buf_init(&st->blob);
	*state = st;
	/* The encoder writes the blob after its 3-byte head in enc.data. */
	dst = (uintptr_t)dcbor_buf_reserve(&st->enc, BLOB_LEN + 16) + 3;
	if ((st->rawbuf = malloc(BLOB_LEN + 8192)) == NULL)
		return -1;
	src = (uintptr_t)st->rawbuf;
	st->raw = st->rawbuf + ((dst - param - src) & 4095u);
	bench_fill(st->raw, BLOB_LEN, 3);
	dcbor_put_bytes(&st->blob, st->raw, BLOB_LEN);
	if (rec_encode(&st->small, r) == -1)
		return -1;
	/* Both encoders must agree, or the nosort baseline measures nonsense. */
	rec_encode_nosort(&st->enc, r);
	if (st->enc.len != st->small.len ||
	    memcmp(st->enc.data, st->small.data, st->enc.len) != 0)
		return -1;
	dcbor_buf_reset(&st->enc);
	return 0;
}

static void
cbor_teardown(void *state)
{
	struct cbor_state *st = state;

	if (st == NULL)
		return;
	dcbor_buf_free(&st->enc);
	dcbor_buf_free(&st->small);
	dcbor_buf_free(&st->blob);
	free(st->rawbuf);
	free(st);
}

static int
run_encode_small(void *state, uint64_t n)
{
	struct cbor_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->enc);
		if (rec_encode(&st->enc, &st->rec) == -1)
			return -1;
		bench_escape(st->enc.data);
		acc += st->enc.len;
	}
	bench_consume(acc);
	return 0;
}

static int
run_encode_small_nosort(void *state, uint64_t n)
{
	struct cbor_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->enc);
		rec_encode_nosort(&st->enc, &st->rec);
		bench_escape(st->enc.data);
		acc += st->enc.len;
	}
	bench_consume(acc);
	return 0;
}

static int
run_check_small(void *state, uint64_t n)
{
	struct cbor_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->small.data);
		if (dcbor_check(st->small.data, st->small.len,
		    DCBOR_MAX_DEPTH, true, NULL) != DCBOR_OK)
			return -1;
		acc++;
	}
	bench_consume(acc);
	return 0;
}

static int
run_decode_small(void *state, uint64_t n)
{
	struct cbor_state *st = state;
	struct rec r;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->small.data);
		if (rec_decode(st->small.data, st->small.len, &r) == -1)
			return -1;
		acc += r.ttl + r.id[0] + r.stamp.logical + r.ntags;
	}
	bench_consume(acc);
	return 0;
}

static int
run_memcpy_16k(void *state, uint64_t n)
{
	struct cbor_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint8_t *dst = st->enc.data + 3;

		memcpy(dst, st->raw, BLOB_LEN);
		bench_escape(dst);
		acc += dst[i % BLOB_LEN];
	}
	bench_consume(acc);
	return 0;
}

static int
run_encode_blob_16k(void *state, uint64_t n)
{
	struct cbor_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->enc);
		dcbor_put_bytes(&st->enc, st->raw, BLOB_LEN);
		bench_escape(st->enc.data);
		acc += st->enc.len;
	}
	bench_consume(acc);
	return 0;
}

static int
run_decode_blob_16k(void *state, uint64_t n)
{
	struct cbor_state *st = state;
	struct dcbor_rd rd;
	const uint8_t *p;
	size_t len;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->blob.data);
		if (dcbor_check(st->blob.data, st->blob.len, DCBOR_MAX_DEPTH,
		    true, NULL) != DCBOR_OK)
			return -1;
		dcbor_rd_init(&rd, st->blob.data, st->blob.len);
		if (dcbor_get_bytes(&rd, &p, &len) == -1 || len != BLOB_LEN)
			return -1;
		acc += p[i % len];
	}
	bench_consume(acc);
	return 0;
}

#define ROW(name, base, fn) ROWP(name, base, 2048, fn)
#define ROWP(name, base, dist, fn) \
	{ "Cbor." name, base, dist, cbor_setup, fn, cbor_teardown, NULL }

static const struct bench_row cbor_rows[] = {
	ROW("encode_small_nosort", NULL, run_encode_small_nosort),
	ROW("encode_small", "Cbor.encode_small_nosort", run_encode_small),
	ROW("check_small", NULL, run_check_small),
	ROW("decode_small", "Cbor.check_small", run_decode_small),
	ROW("memcpy_16k", NULL, run_memcpy_16k),
	ROW("encode_blob_16k", "Cbor.memcpy_16k", run_encode_blob_16k),
	ROWP("encode_blob_16k_aliased", "Cbor.memcpy_16k", 16,
	    run_encode_blob_16k),
	ROW("decode_blob_16k", NULL, run_decode_blob_16k),
};

const struct bench_family bench_family_cbor = {
	"Cbor", cbor_rows, BENCH_NROWS(cbor_rows)
};

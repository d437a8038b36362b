/*
 * test_frame.c: the signed wire frame.  Random frames round trip; every
 * one-byte change of a signed frame is refused; each error code has a
 * crafted input that produces it; the cap, the nesting limit and every
 * truncation are enforced.  A detached payload ("data") round trips on
 * BLOCK, is refused on every other kind, and is outside the signature:
 * changing its bytes leaves a frame that opens, which is why the kind's
 * own rules (the swarm's SHA-256 against the manifest) must check it.
 * (The MAC'd frame of a keyed link is test_linkkey's.)
 *
 * Random cases come from a seeded PRNG: FRAME_TEST_SEED=n replays a run,
 * and every failing assertion in them prints the seed.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dcbor.h"
#include "frame.h"
#include "rng.h"
#include "hlc.h"
#include "identity.h"
#include "linkkey.h"

static uint64_t test_seed;

#define CHECK(cond) ck_assert_msg((cond), "%s (FRAME_TEST_SEED=%" PRIu64 \
	")", #cond, test_seed)

static uint64_t
rnd(uint64_t *st)
{
	return rng_splitmix64(st);
}

static void
rnd_bytes(uint64_t *st, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(st);
}

static void
seed_setup(void)
{
	const char *s = getenv("FRAME_TEST_SEED");

	if (s != NULL && *s != '\0')
		test_seed = strtoull(s, NULL, 0);
	else
		test_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
}

static void
ident_from_rng(struct identity *id, uint64_t *st)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	rnd_bytes(st, seed, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(id, seed), 0);
}

/* One random canonical CBOR item, nesting at most 4 more levels. */
static void
rand_item(struct dcbor_buf *b, uint64_t *st, int depth)
{
	uint8_t tmp[48];
	size_t start, n;

	switch (rnd(st) % (depth >= 4 ? 7 : 9)) {
	case 0:
		dcbor_put_uint(b, rnd(st) >> (rnd(st) % 64));
		break;
	case 1:
		dcbor_put_negint(b, rnd(st) >> (rnd(st) % 64));
		break;
	case 2:
		n = rnd(st) % sizeof(tmp);
		rnd_bytes(st, tmp, n);
		dcbor_put_bytes(b, tmp, n);
		break;
	case 3:
		n = rnd(st) % sizeof(tmp);
		for (size_t i = 0; i < n; i++)
			tmp[i] = (uint8_t)(' ' + rnd(st) % 95);
		dcbor_put_text(b, (const char *)tmp, n);
		break;
	case 4:
		dcbor_put_bool(b, rnd(st) & 1);
		break;
	case 5:
		dcbor_put_null(b);
		break;
	case 6:
		dcbor_put_float(b, (double)(int64_t)rnd(st) /
		    (double)(1 + rnd(st) % 1000));
		break;
	case 7:
		n = rnd(st) % 5;
		dcbor_put_array(b, n);
		for (size_t i = 0; i < n; i++)
			rand_item(b, st, depth + 1);
		break;
	case 8:
		start = b->len;
		n = rnd(st) % 5;
		dcbor_put_map(b, n);
		for (size_t i = 0; i < n; i++) {
			dcbor_put_uint(b, i * 1000 + rnd(st) % 1000);
			rand_item(b, st, depth + 1);
		}
		ck_assert_int_eq(dcbor_sort_map(b, start), DCBOR_OK);
		break;
	}
}

/* ---- crafting frames field by field ---------------------------------- */

enum { F_TO, F_VER, F_BODY, F_FROM, F_KIND, F_GROUP, F_STAMP, F_EXTRA, F_N };
static const char *const fnames[F_N] = {
	"to", "ver", "body", "from", "kind", "group", "stamp", "extra",
};

struct craft {
	struct dcbor_buf	 v[F_N];	/* a value's CBOR; empty: omit */
	const struct identity	*signer;
	size_t			 key_len;
	size_t			 sig_len;
	bool			 bare;		/* no key, no sig */
	bool			 bad_sig;	/* flip a bit of the signature */
	bool			 reverse;	/* envelope keys out of order */
	struct dcbor_buf	 data;		/* "data" value's CBOR; empty: omit */
};

/* A valid PING from signer to anyone; tests then change one thing. */
static void
craft_init(struct craft *c, const struct identity *signer)
{
	struct hlc_stamp s = { 1700000000000ull, 2, signer->node };

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < F_N; i++)
		dcbor_buf_init(&c->v[i]);
	dcbor_buf_init(&c->data);
	c->signer = signer;
	c->key_len = IDENTITY_PUB_LEN;
	c->sig_len = IDENTITY_SIG_LEN;
	dcbor_put_bytes(&c->v[F_TO], "", 0);
	dcbor_put_uint(&c->v[F_VER], FRAME_VERSION);
	dcbor_put_uint(&c->v[F_BODY], 7);
	dcbor_put_bytes(&c->v[F_FROM], signer->id, IDENTITY_ID_LEN);
	dcbor_put_uint(&c->v[F_KIND], FRAME_PING);
	dcbor_put_cstr(&c->v[F_GROUP], "g");
	hlc_encode(&c->v[F_STAMP], &s);
}

/* Empty one field's value so the test can write another. */
static struct dcbor_buf *
craft_field(struct craft *c, int f)
{
	dcbor_buf_reset(&c->v[f]);
	return &c->v[f];
}

static void
craft_free(struct craft *c)
{
	for (int i = 0; i < F_N; i++)
		dcbor_buf_free(&c->v[i]);
	dcbor_buf_free(&c->data);
}

/* The frame bytes (no length prefix) into out. */
static void
craft_build(struct craft *c, struct dcbor_buf *out)
{
	uint8_t sig[IDENTITY_SIG_LEN + 1], key[IDENTITY_PUB_LEN + 1];
	size_t n = 0, env;

	dcbor_buf_reset(out);
	for (int i = 0; i < F_N; i++)
		n += c->v[i].len > 0;
	dcbor_put_map(out, (c->bare ? 1 : 3) + (c->data.len > 0));
	dcbor_put_cstr(out, "env");
	env = out->len;
	dcbor_put_map(out, n);
	for (int j = 0; j < F_N; j++) {
		int i = c->reverse ? F_N - 1 - j : j;

		if (c->v[i].len == 0)
			continue;
		dcbor_put_cstr(out, fnames[i]);
		dcbor_put_raw(out, c->v[i].data, c->v[i].len);
	}
	if (!c->reverse)
		ck_assert_int_eq(dcbor_sort_map(out, env), DCBOR_OK);
	if (c->bare) {
		if (c->data.len > 0) {
			dcbor_put_cstr(out, "data");
			dcbor_put_raw(out, c->data.data, c->data.len);
		}
		return;
	}
	memset(sig, 0, sizeof(sig));
	ck_assert_int_eq(identity_sign(c->signer, out->data + env,
	    out->len - env, sig), 0);
	if (c->bad_sig)
		sig[17] ^= 0x04;
	memset(key, 0, sizeof(key));
	memcpy(key, c->signer->pub, IDENTITY_PUB_LEN);
	dcbor_put_cstr(out, "key");
	dcbor_put_bytes(out, key, c->key_len);
	dcbor_put_cstr(out, "sig");
	dcbor_put_bytes(out, sig, c->sig_len);
	if (c->data.len > 0) {
		dcbor_put_cstr(out, "data");
		dcbor_put_raw(out, c->data.data, c->data.len);
	}
}

static struct identity alice, bob;

static void
idents_setup(void)
{
	uint64_t st = 42;

	seed_setup();
	ident_from_rng(&alice, &st);
	ident_from_rng(&bob, &st);
}

static void
idents_teardown(void)
{
	identity_free(&alice);
	identity_free(&bob);
	identity_cache_clear();
}

/* Build c and return what frame_open says of it. */
static int
craft_open(struct craft *c)
{
	struct dcbor_buf b;
	struct frame f;
	int rc;

	dcbor_buf_init(&b);
	craft_build(c, &b);
	rc = frame_open(b.data, b.len, &f);
	dcbor_buf_free(&b);
	return rc;
}

static int
craft_decode(struct craft *c, bool allow_bare)
{
	struct dcbor_buf b;
	struct frame f;
	int rc;

	dcbor_buf_init(&b);
	craft_build(c, &b);
	rc = frame_decode(b.data, b.len, &f, allow_bare);
	dcbor_buf_free(&b);
	return rc;
}

/* ---- round trips -------------------------------------------------------- */

START_TEST(test_crafted_baseline_is_valid)
{
	struct craft c;

	craft_init(&c, &alice);
	ck_assert_int_eq(craft_open(&c), FRAME_OK);
	craft_free(&c);
}
END_TEST

START_TEST(test_round_trip_random)
{
	uint64_t st = test_seed;
	struct identity ids[4];
	struct dcbor_buf out, body;

	dcbor_buf_init(&out);
	dcbor_buf_init(&body);
	for (int i = 0; i < 4; i++)
		ident_from_rng(&ids[i], &st);
	for (int iter = 0; iter < 300; iter++) {
		const struct identity *me = &ids[rnd(&st) % 4];
		uint8_t to[IDENTITY_ID_LEN];
		char group[64];
		struct hlc_stamp s;
		struct frame f;
		uint32_t kind, len;
		size_t glen = rnd(&st) % 40;
		bool any = rnd(&st) % 3 == 0;

		kind = 1 + (uint32_t)(rnd(&st) % (FRAME_KIND_MAX - 1));
		for (size_t i = 0; i < glen; i++)
			group[i] = (char)('a' + rnd(&st) % 26);
		group[glen] = '\0';
		rnd_bytes(&st, to, sizeof(to));
		s.phys = rnd(&st) >> (rnd(&st) % 64);
		s.logical = (uint32_t)rnd(&st);
		s.node = rnd(&st);
		dcbor_buf_reset(&body);
		rand_item(&body, &st, 0);
		dcbor_buf_reset(&out);
		CHECK(frame_encode(&out, me, kind, group, any ? NULL : to, &s,
		    body.data, body.len, FRAME_MAX_DEFAULT) == 0);
		CHECK(frame_read_len(out.data, out.len, FRAME_MAX_DEFAULT,
		    &len) == FRAME_OK);
		CHECK(len == out.len - FRAME_LEN_PREFIX);
		CHECK(frame_open(out.data + 4, len, &f) == FRAME_OK);
		CHECK(f.ver == FRAME_VERSION);
		CHECK(f.kind == kind);
		CHECK(f.group_len == glen);
		CHECK(memcmp(f.group, group, glen) == 0);
		CHECK(memcmp(f.from, me->id, IDENTITY_ID_LEN) == 0);
		CHECK(memcmp(f.key, me->pub, IDENTITY_PUB_LEN) == 0);
		CHECK(f.to_any == any);
		CHECK(any || memcmp(f.to, to, IDENTITY_ID_LEN) == 0);
		CHECK(hlc_cmp(&f.stamp, &s) == 0);
		CHECK(f.body_len == body.len);
		CHECK(memcmp(f.body, body.data, body.len) == 0);
		CHECK(!f.bare);
		/* Zero-copy: the results point into the input. */
		CHECK(f.env > out.data && f.env + f.env_len <= out.data +
		    out.len);
		CHECK(f.body > f.env && f.body + f.body_len <= f.env +
		    f.env_len);
		CHECK(identity_verify(me->pub, f.env, f.env_len, f.sig) == 0);
	}
	for (int i = 0; i < 4; i++)
		identity_free(&ids[i]);
	dcbor_buf_free(&out);
	dcbor_buf_free(&body);
}
END_TEST

START_TEST(test_frames_append)
{
	struct hlc_stamp s = { 1, 2, 3 };
	struct dcbor_buf out;
	struct frame f;
	uint8_t body = 0x05;
	uint32_t len;
	size_t off = 0;

	dcbor_buf_init(&out);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(frame_encode(&out, &alice, FRAME_ACK, "g",
		    NULL, &s, &body, 1, FRAME_MAX_DEFAULT), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(frame_read_len(out.data + off, out.len - off,
		    FRAME_MAX_DEFAULT, &len), FRAME_OK);
		ck_assert_int_eq(frame_open(out.data + off + 4, len, &f),
		    FRAME_OK);
		ck_assert_uint_eq(f.kind, FRAME_ACK);
		off += 4 + len;
	}
	ck_assert_uint_eq(off, out.len);
	dcbor_buf_free(&out);
}
END_TEST

/* ---- tampering ---------------------------------------------------------- */

START_TEST(test_every_byte_change_refused)
{
	static const uint8_t groups[] = "group-x";
	struct hlc_stamp s = { 1700000000123ull, 9, alice.node };
	struct dcbor_buf out, body;
	uint8_t *buf, to[IDENTITY_ID_LEN];
	struct frame f;
	size_t len, tried = 0;
	uint32_t plen;

	dcbor_buf_init(&out);
	dcbor_buf_init(&body);
	memset(to, 0x33, sizeof(to));
	dcbor_put_map(&body, 2);
	dcbor_put_uint(&body, 1);
	dcbor_put_cstr(&body, "payload");
	dcbor_put_uint(&body, 2);
	dcbor_put_array(&body, 3);
	dcbor_put_int(&body, -5);
	dcbor_put_bool(&body, true);
	dcbor_put_float(&body, 1.5);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_RUMOR,
	    (const char *)groups, to, &s, body.data, body.len,
	    FRAME_MAX_DEFAULT), 0);
	len = out.len - FRAME_LEN_PREFIX;
	buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, out.data + FRAME_LEN_PREFIX, len);
	ck_assert_int_eq(frame_open(buf, len, &f), FRAME_OK);

	for (size_t i = 0; i < len; i++) {
		const uint8_t orig = buf[i];
		const uint8_t vals[] = {
			(uint8_t)(orig ^ 0x01), (uint8_t)(orig ^ 0x80),
			(uint8_t)(orig ^ 0xff), (uint8_t)(orig + 1),
			(uint8_t)(orig - 1), 0x00, 0xff, 0x18, 0x40, 0x60,
			0xa0, 0xf6,
		};

		for (size_t v = 0; v < sizeof(vals); v++) {
			int rc;

			if (vals[v] == orig)
				continue;
			buf[i] = vals[v];
			rc = frame_open(buf, len, &f);
			ck_assert_msg(rc != FRAME_OK,
			    "byte %zu: %#x -> %#x accepted", i, orig, vals[v]);
			/* Even a parser that allows bare frames refuses it. */
			rc = frame_decode(buf, len, &f, true);
			ck_assert_msg(rc != FRAME_OK || frame_verify(&f) !=
			    FRAME_OK, "byte %zu: %#x -> %#x accepted (bare)",
			    i, orig, vals[v]);
			tried++;
		}
		buf[i] = orig;
	}
	ck_assert_uint_gt(tried, len * 8);
	/* A changed length prefix never yields this frame's length. */
	for (size_t i = 0; i < FRAME_LEN_PREFIX; i++) {
		uint8_t pfx[FRAME_LEN_PREFIX];

		memcpy(pfx, out.data, sizeof(pfx));
		pfx[i] ^= 0x01;
		ck_assert(frame_read_len(pfx, sizeof(pfx), FRAME_MAX_DEFAULT,
		    &plen) != FRAME_OK || plen != len);
	}
	free(buf);
	dcbor_buf_free(&out);
	dcbor_buf_free(&body);
}
END_TEST

START_TEST(test_truncations)
{
	struct hlc_stamp s = { 5, 6, 7 };
	struct dcbor_buf out;
	struct frame f;
	uint8_t body[3] = { 0x82, 0x01, 0x02 };
	uint32_t plen;
	size_t len;

	dcbor_buf_init(&out);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_DIGEST, "", NULL,
	    &s, body, sizeof(body), FRAME_MAX_DEFAULT), 0);
	len = out.len - FRAME_LEN_PREFIX;
	for (size_t n = 0; n < FRAME_LEN_PREFIX; n++)
		ck_assert_int_eq(frame_read_len(out.data, n,
		    FRAME_MAX_DEFAULT, &plen), FRAME_ESHORT);
	for (size_t n = 0; n < len; n++) {
		/* A copy of exactly n bytes, so ASan sees any overread. */
		uint8_t *p = malloc(n ? n : 1);

		ck_assert_ptr_nonnull(p);
		memcpy(p, out.data + FRAME_LEN_PREFIX, n);
		ck_assert_int_ne(frame_open(p, n, &f), FRAME_OK);
		ck_assert_int_ne(frame_decode(p, n, &f, true), FRAME_OK);
		free(p);
	}
	ck_assert_int_eq(frame_open(out.data + FRAME_LEN_PREFIX, len, &f),
	    FRAME_OK);
	dcbor_buf_free(&out);
}
END_TEST

/* ---- the detached payload ---------------------------------------------- */

/* A BLOCK frame: head by frame_encode_head, then data_len bytes of data. */
static int
encode_with_data(struct dcbor_buf *out, const struct identity *id,
    uint32_t kind, const uint8_t *to, const uint8_t *data, size_t data_len,
    size_t cap)
{
	struct hlc_stamp s = { 1700000000000ull, 3, id->node };
	static const uint8_t body[] = { 0xa1, 0x63, 'l', 'e', 'n', 0x01 };

	if (frame_encode_head(out, id, kind, "g", to, &s, body, sizeof(body),
	    data_len, cap) == -1)
		return -1;
	dcbor_put_raw(out, data, data_len);
	return 0;
}

START_TEST(test_round_trip_data)
{
	static const size_t lens[] = { 1, 23, 24, 255, 256, 65535, 65536,
	    70001, 1u << 20 };
	uint64_t st = test_seed;
	struct dcbor_buf out;
	uint8_t *data = malloc(1u << 20);
	struct frame f;
	uint32_t len;

	ck_assert_ptr_nonnull(data);
	dcbor_buf_init(&out);
	rnd_bytes(&st, data, 1u << 20);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		dcbor_buf_reset(&out);
		CHECK(encode_with_data(&out, &alice, FRAME_BLOCK, bob.id, data,
		    lens[i], FRAME_MAX_DEFAULT) == 0);
		CHECK(frame_read_len(out.data, out.len, FRAME_MAX_DEFAULT,
		    &len) == FRAME_OK);
		/* The prefix counts the payload: one frame, one length. */
		CHECK(len == out.len - FRAME_LEN_PREFIX);
		CHECK(frame_open(out.data + 4, len, &f) == FRAME_OK);
		CHECK(f.kind == FRAME_BLOCK && !f.bare);
		CHECK(f.data_len == lens[i]);
		CHECK(memcmp(f.data, data, lens[i]) == 0);
		/* Zero-copy, the last thing in the frame, after the envelope. */
		CHECK(f.data + f.data_len == out.data + out.len);
		CHECK(f.data >= f.env + f.env_len);
		CHECK(f.body_len == 6);
		/* The signature covers the envelope alone. */
		CHECK(identity_verify(alice.pub, f.env, f.env_len, f.sig) == 0);
	}
	/* Without data, no "data": the frame frame_encode makes. */
	dcbor_buf_reset(&out);
	CHECK(encode_with_data(&out, &alice, FRAME_BLOCK, NULL, data, 0,
	    FRAME_MAX_DEFAULT) == 0);
	CHECK(out.data[4] == 0xa3);
	CHECK(frame_open(out.data + 4, out.len - 4, &f) == FRAME_OK);
	CHECK(f.data == NULL && f.data_len == 0);
	free(data);
	dcbor_buf_free(&out);
}
END_TEST

START_TEST(test_data_encode_refused)
{
	struct dcbor_buf out;
	uint8_t data[100];
	struct frame f;
	uint32_t flen;

	memset(data, 0x42, sizeof(data));
	dcbor_buf_init(&out);
	dcbor_put_raw(&out, "xy", 2);
	/* Every kind but BLOCK refuses a payload; out is left as it was. */
	for (uint32_t k = 1; k < FRAME_KIND_MAX; k++) {
		ck_assert(frame_kind_allows_data(k) == (k == FRAME_BLOCK));
		if (k == FRAME_BLOCK)
			continue;
		ck_assert_int_eq(encode_with_data(&out, &alice, k, NULL, data,
		    sizeof(data), FRAME_MAX_DEFAULT), -1);
		ck_assert_uint_eq(out.len, 2);
	}
	/* The cap counts the payload. */
	ck_assert_int_eq(encode_with_data(&out, &alice, FRAME_BLOCK, NULL,
	    data, sizeof(data), FRAME_MAX_DEFAULT), 0);
	flen = (uint32_t)(out.len - 2 - FRAME_LEN_PREFIX);
	dcbor_buf_reset(&out);
	ck_assert_int_eq(encode_with_data(&out, &alice, FRAME_BLOCK, NULL,
	    data, sizeof(data), flen - 1), -1);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_int_eq(encode_with_data(&out, &alice, FRAME_BLOCK, NULL,
	    data, sizeof(data), flen), 0);
	ck_assert_int_eq(frame_open(out.data + 4, out.len - 4, &f), FRAME_OK);
	ck_assert_int_eq(frame_encode_head(&out, &alice, FRAME_BLOCK, "g",
	    NULL, &f.stamp, f.body, f.body_len, SIZE_MAX, SIZE_MAX), -1);
	dcbor_buf_free(&out);
}
END_TEST

START_TEST(test_err_detached)
{
	struct craft c;
	uint8_t data[40];

	memset(data, 0x7e, sizeof(data));
	/* A PING with a payload: signed and well formed, but not allowed. */
	craft_init(&c, &alice);
	dcbor_put_bytes(&c.data, data, sizeof(data));
	ck_assert_int_eq(craft_open(&c), FRAME_EDETACHED);
	ck_assert_int_eq(craft_decode(&c, true), FRAME_EDETACHED);
	c.bare = true;
	ck_assert_int_eq(craft_decode(&c, true), FRAME_EDETACHED);
	c.bare = false;
	/* Every kind but BLOCK. */
	for (uint32_t k = 1; k < FRAME_KIND_MAX; k++) {
		dcbor_put_uint(craft_field(&c, F_KIND), k);
		ck_assert_int_eq(craft_open(&c), k == FRAME_BLOCK ? FRAME_OK :
		    FRAME_EDETACHED);
	}
	/* On BLOCK: bare with data is a bare frame like any other. */
	dcbor_put_uint(craft_field(&c, F_KIND), FRAME_BLOCK);
	c.bare = true;
	ck_assert_int_eq(craft_decode(&c, true), FRAME_OK);
	ck_assert_int_eq(craft_decode(&c, false), FRAME_EBARE);
	c.bare = false;
	/* Empty data would be a second spelling of "no data". */
	dcbor_buf_reset(&c.data);
	dcbor_put_bytes(&c.data, "", 0);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	/* Data that is not a byte string. */
	dcbor_buf_reset(&c.data);
	dcbor_put_text(&c.data, "abc", 3);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	dcbor_buf_reset(&c.data);
	dcbor_put_uint(&c.data, 5);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	craft_free(&c);
}
END_TEST

/*
 * The payload is outside the signature: every one-byte change of a BLOCK
 * frame outside its data bytes is refused, and a change inside them is
 * not: the frame opens with the changed bytes, so only the kind's rules
 * can catch it (the swarm checks a piece's SHA-256 against the manifest
 * and discards it; tests/fleet/test_peerd_swarm.py shows that end).
 */
START_TEST(test_data_outside_signature)
{
	struct dcbor_buf out;
	uint8_t data[300], *buf;
	struct frame f;
	size_t len, dstart;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	dcbor_buf_init(&out);
	ck_assert_int_eq(encode_with_data(&out, &alice, FRAME_BLOCK, bob.id,
	    data, sizeof(data), FRAME_MAX_DEFAULT), 0);
	len = out.len - FRAME_LEN_PREFIX;
	buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, out.data + FRAME_LEN_PREFIX, len);
	dstart = len - sizeof(data);
	for (size_t i = 0; i < len; i++) {
		const uint8_t orig = buf[i];

		for (unsigned v = 1; v < 256; v += 17) {
			int rc;

			buf[i] = (uint8_t)(orig ^ v);
			rc = frame_open(buf, len, &f);
			if (i < dstart)
				ck_assert_msg(rc != FRAME_OK, "byte %zu: %#x -> "
				    "%#x accepted", i, orig, buf[i]);
			else {
				ck_assert_int_eq(rc, FRAME_OK);
				ck_assert_uint_eq(f.data[i - dstart], buf[i]);
			}
		}
		buf[i] = orig;
	}
	/* A payload cut short is a frame of another length: not this one. */
	ck_assert_int_ne(frame_open(buf, len - 1, &f), FRAME_OK);
	free(buf);
	dcbor_buf_free(&out);
}
END_TEST

/* ---- the cap ------------------------------------------------------------ */

START_TEST(test_size_cap)
{
	struct hlc_stamp s = { 5, 6, 7 };
	struct dcbor_buf out, body;
	static uint8_t blob[70000];
	struct frame f;
	uint32_t len, flen;

	dcbor_buf_init(&out);
	dcbor_buf_init(&body);
	dcbor_put_bytes(&body, blob, sizeof(blob));
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_BLOCK, "g", NULL,
	    &s, body.data, body.len, FRAME_MAX_DEFAULT), 0);
	flen = (uint32_t)(out.len - FRAME_LEN_PREFIX);
	/* One byte under the frame's size: refused, out untouched. */
	dcbor_buf_reset(&out);
	dcbor_put_raw(&out, "xy", 2);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_BLOCK, "g", NULL,
	    &s, body.data, body.len, flen - 1), -1);
	ck_assert_uint_eq(out.len, 2);
	/* Exactly the size: accepted. */
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_BLOCK, "g", NULL,
	    &s, body.data, body.len, flen), 0);
	ck_assert_uint_eq(out.len, 2 + FRAME_LEN_PREFIX + flen);
	ck_assert_int_eq(frame_read_len(out.data + 2, out.len - 2, flen, &len),
	    FRAME_OK);
	ck_assert_uint_eq(len, flen);
	ck_assert_int_eq(frame_read_len(out.data + 2, out.len - 2, flen - 1,
	    &len), FRAME_ETOOBIG);
	ck_assert_int_eq(frame_open(out.data + 6, len, &f), FRAME_OK);
	dcbor_buf_free(&out);
	dcbor_buf_free(&body);
}
END_TEST

START_TEST(test_read_len_bounds)
{
	const uint8_t zero[4] = { 0, 0, 0, 0 };
	const uint8_t one[4] = { 0, 0, 0, 1 };
	const uint8_t max[4] = { 0x00, 0x80, 0x00, 0x00 };	/* 8 MiB */
	const uint8_t over[4] = { 0x00, 0x80, 0x00, 0x01 };
	const uint8_t huge[4] = { 0xff, 0xff, 0xff, 0xff };
	uint32_t len = 0;

	ck_assert_int_eq(frame_read_len(zero, 3, FRAME_MAX_DEFAULT, &len),
	    FRAME_ESHORT);
	ck_assert_int_eq(frame_read_len(zero, 0, FRAME_MAX_DEFAULT, &len),
	    FRAME_ESHORT);
	ck_assert_int_eq(frame_read_len(zero, 4, FRAME_MAX_DEFAULT, &len),
	    FRAME_EZERO);
	ck_assert_int_eq(frame_read_len(one, 4, FRAME_MAX_DEFAULT, &len),
	    FRAME_OK);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(frame_read_len(max, 4, FRAME_MAX_DEFAULT, &len),
	    FRAME_OK);
	ck_assert_uint_eq(len, FRAME_MAX_DEFAULT);
	ck_assert_int_eq(frame_read_len(over, 4, FRAME_MAX_DEFAULT, &len),
	    FRAME_ETOOBIG);
	ck_assert_int_eq(frame_read_len(huge, 4, FRAME_MAX_DEFAULT, &len),
	    FRAME_ETOOBIG);
	ck_assert_int_eq(frame_read_len(huge, 4, UINT32_MAX, &len), FRAME_OK);
}
END_TEST

START_TEST(test_encode_refuses_bad_input)
{
	struct hlc_stamp s = { 5, 6, 7 };
	struct dcbor_buf out;
	char group[300];
	uint8_t body = 0x01, two[2] = { 0x01, 0x02 }, bad = 0xff;

	dcbor_buf_init(&out);
	memset(group, 'a', sizeof(group));
	group[256] = '\0';
	ck_assert_int_eq(frame_encode(&out, &alice, 0, "g", NULL, &s, &body,
	    1, FRAME_MAX_DEFAULT), -1);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_KIND_MAX, "g", NULL,
	    &s, &body, 1, FRAME_MAX_DEFAULT), -1);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, group, NULL,
	    &s, &body, 1, FRAME_MAX_DEFAULT), -1);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, "g", NULL, &s,
	    two, 2, FRAME_MAX_DEFAULT), -1);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, "g", NULL, &s,
	    &bad, 1, FRAME_MAX_DEFAULT), -1);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, "g", NULL, &s,
	    &body, 0, FRAME_MAX_DEFAULT), -1);
	ck_assert_uint_eq(out.len, 0);
	group[255] = '\0';
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, group, NULL,
	    &s, &body, 1, FRAME_MAX_DEFAULT), 0);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, NULL, NULL,
	    &s, &body, 1, FRAME_MAX_DEFAULT), 0);
	dcbor_buf_free(&out);
}
END_TEST

/* ---- one crafted input per error code --------------------------------- */

START_TEST(test_err_short_zero_toobig)
{
	const uint8_t p[4] = { 0x00, 0x00, 0x01, 0x00 };
	uint32_t len;

	ck_assert_int_eq(frame_read_len(p, 3, 1024, &len), FRAME_ESHORT);
	ck_assert_int_eq(frame_read_len((const uint8_t *)"\0\0\0\0", 4, 1024,
	    &len), FRAME_EZERO);
	ck_assert_int_eq(frame_read_len(p, 4, 255, &len), FRAME_ETOOBIG);
}
END_TEST

START_TEST(test_err_cbor)
{
	const uint8_t trunc[] = { 0xa3, 0x63, 'e', 'n' };
	const uint8_t reserved[] = { 0x1c };
	const uint8_t indef[] = { 0xbf, 0x63, 'e', 'n', 'v', 0x01, 0xff };
	const uint8_t longcount[] = { 0x9a, 0xff, 0xff, 0xff, 0xff, 0x00 };
	const uint8_t simple[] = { 0xf0 };
	struct frame f;

	ck_assert_int_eq(frame_decode(trunc, sizeof(trunc), &f, false),
	    FRAME_ECBOR);
	ck_assert_int_eq(frame_decode(reserved, sizeof(reserved), &f, false),
	    FRAME_ECBOR);
	ck_assert_int_eq(frame_decode(indef, sizeof(indef), &f, false),
	    FRAME_ECBOR);
	ck_assert_int_eq(frame_decode(longcount, sizeof(longcount), &f,
	    false), FRAME_ECBOR);
	ck_assert_int_eq(frame_decode(simple, sizeof(simple), &f, false),
	    FRAME_ECBOR);
	ck_assert_int_eq(frame_decode(trunc, 0, &f, false), FRAME_ECBOR);
}
END_TEST

static void
put_nested(struct dcbor_buf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		dcbor_put_array(b, 1);
	dcbor_put_uint(b, 0);
}

START_TEST(test_err_depth)
{
	struct craft c;
	struct hlc_stamp s = { 1, 2, 3 };
	struct dcbor_buf body, out;

	craft_init(&c, &alice);
	/* The frame map and the envelope are two levels: 62 more fit. */
	put_nested(craft_field(&c, F_BODY), FRAME_MAX_DEPTH - 2);
	ck_assert_int_eq(craft_open(&c), FRAME_OK);
	put_nested(craft_field(&c, F_BODY), FRAME_MAX_DEPTH - 1);
	ck_assert_int_eq(craft_open(&c), FRAME_EDEPTH);
	put_nested(craft_field(&c, F_BODY), 65);
	ck_assert_int_eq(craft_open(&c), FRAME_EDEPTH);
	put_nested(craft_field(&c, F_BODY), 1000);
	ck_assert_int_eq(craft_open(&c), FRAME_EDEPTH);
	craft_free(&c);

	/* The encoder will not make a frame the decoder refuses. */
	dcbor_buf_init(&body);
	dcbor_buf_init(&out);
	put_nested(&body, 65);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, "g", NULL, &s,
	    body.data, body.len, FRAME_MAX_DEFAULT), -1);
	dcbor_buf_reset(&body);
	put_nested(&body, FRAME_MAX_DEPTH - 2);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, "g", NULL, &s,
	    body.data, body.len, FRAME_MAX_DEFAULT), 0);
	dcbor_buf_free(&body);
	dcbor_buf_free(&out);
}
END_TEST

START_TEST(test_err_noncanon)
{
	struct craft c;
	static const uint8_t ver_long[] = { 0x18, 0x01 };
	static const uint8_t kind_long[] = { 0x19, 0x00, 0x02 };
	static const uint8_t half_as_single[] = { 0xfa, 0x3f, 0xc0, 0x00,
	    0x00 };
	struct dcbor_buf *b;

	craft_init(&c, &alice);
	c.reverse = true;
	ck_assert_int_eq(craft_open(&c), FRAME_ENONCANON);
	c.reverse = false;
	dcbor_put_raw(craft_field(&c, F_VER), ver_long, sizeof(ver_long));
	ck_assert_int_eq(craft_open(&c), FRAME_ENONCANON);
	craft_free(&c);

	craft_init(&c, &alice);
	dcbor_put_raw(craft_field(&c, F_KIND), kind_long, sizeof(kind_long));
	ck_assert_int_eq(craft_open(&c), FRAME_ENONCANON);
	craft_free(&c);

	craft_init(&c, &alice);
	dcbor_put_raw(craft_field(&c, F_BODY), half_as_single,
	    sizeof(half_as_single));
	ck_assert_int_eq(craft_open(&c), FRAME_ENONCANON);
	/* A duplicate key inside the body. */
	b = craft_field(&c, F_BODY);
	dcbor_put_map(b, 2);
	dcbor_put_uint(b, 1);
	dcbor_put_null(b);
	dcbor_put_uint(b, 1);
	dcbor_put_null(b);
	ck_assert_int_eq(craft_open(&c), FRAME_ENONCANON);
	craft_free(&c);
}
END_TEST

START_TEST(test_err_dup_envelope_key)
{
	/* {"env": {"to": h'', "to": h''}}: a duplicate key at the top. */
	const uint8_t dup[] = { 0xa1, 0x63, 'e', 'n', 'v', 0xa2, 0x62, 't',
	    'o', 0x40, 0x62, 't', 'o', 0x40 };
	struct frame f;

	ck_assert_int_eq(frame_decode(dup, sizeof(dup), &f, true),
	    FRAME_ENONCANON);
}
END_TEST

START_TEST(test_err_shape)
{
	struct craft c;
	uint8_t junk[40];

	memset(junk, 0x11, sizeof(junk));
	/* Each envelope field missing in turn. */
	for (int i = 0; i < F_EXTRA; i++) {
		craft_init(&c, &alice);
		craft_field(&c, i);
		ck_assert_msg(craft_open(&c) == FRAME_ESHAPE, "without %s",
		    fnames[i]);
		craft_free(&c);
	}
	/* An extra field. */
	craft_init(&c, &alice);
	dcbor_put_uint(craft_field(&c, F_EXTRA), 1);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	craft_free(&c);
	/* Each field mistyped. */
	for (int i = 0; i < F_EXTRA; i++) {
		if (i == F_BODY)
			continue;	/* the body may be anything */
		craft_init(&c, &alice);
		dcbor_put_bool(craft_field(&c, i), true);
		ck_assert_msg(craft_open(&c) == FRAME_ESHAPE, "mistyped %s",
		    fnames[i]);
		craft_free(&c);
	}
	/* Wrong lengths and bad values. */
	craft_init(&c, &alice);
	dcbor_put_bytes(craft_field(&c, F_TO), junk, 31);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	dcbor_put_bytes(craft_field(&c, F_TO), junk, 33);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	dcbor_put_bytes(craft_field(&c, F_TO), junk, 32);
	ck_assert_int_eq(craft_open(&c), FRAME_OK);
	craft_free(&c);

	craft_init(&c, &alice);
	dcbor_put_bytes(craft_field(&c, F_FROM), alice.id, 31);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	dcbor_put_bytes(craft_field(&c, F_FROM), "", 0);
	ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	craft_free(&c);

	craft_init(&c, &alice);
	{
		char g[300];

		memset(g, 'g', sizeof(g));
		dcbor_put_text(craft_field(&c, F_GROUP), g, 256);
		ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
		dcbor_put_text(craft_field(&c, F_GROUP), g, 255);
		ck_assert_int_eq(craft_open(&c), FRAME_OK);
		/*
		 * Not UTF-8 (a lone continuation byte, an overlong '/', a
		 * surrogate): text that is not UTF-8 is not valid CBOR, and
		 * the canonical check refuses it anywhere in the frame.
		 */
		dcbor_put_text(craft_field(&c, F_GROUP), "a\x80", 2);
		ck_assert_int_eq(craft_open(&c), FRAME_ECBOR);
		dcbor_put_text(craft_field(&c, F_GROUP), "\xc0\xaf", 2);
		ck_assert_int_eq(craft_open(&c), FRAME_ECBOR);
		dcbor_put_text(craft_field(&c, F_GROUP), "\xed\xa0\x80", 3);
		ck_assert_int_eq(craft_open(&c), FRAME_ECBOR);
		dcbor_put_cstr(craft_field(&c, F_GROUP), "gr\xc3\xbcn");
		ck_assert_int_eq(craft_open(&c), FRAME_OK);
	}
	craft_free(&c);

	/* Stamps: two items, a negative, a logical over 32 bits. */
	craft_init(&c, &alice);
	{
		struct dcbor_buf *b = craft_field(&c, F_STAMP);

		dcbor_put_array(b, 2);
		dcbor_put_uint(b, 1);
		dcbor_put_uint(b, 2);
		ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
		b = craft_field(&c, F_STAMP);
		dcbor_put_array(b, 3);
		dcbor_put_int(b, -1);
		dcbor_put_uint(b, 2);
		dcbor_put_uint(b, 3);
		ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
		b = craft_field(&c, F_STAMP);
		dcbor_put_array(b, 3);
		dcbor_put_uint(b, 1);
		dcbor_put_uint(b, (uint64_t)UINT32_MAX + 1);
		dcbor_put_uint(b, 3);
		ck_assert_int_eq(craft_open(&c), FRAME_ESHAPE);
	}
	craft_free(&c);

	/* Key without sig, and the top level not a map. */
	craft_init(&c, &alice);
	{
		struct dcbor_buf b;
		struct frame f;
		const uint8_t arr[] = { 0x83, 0x01, 0x02, 0x03 };
		uint8_t onlykey[7 + IDENTITY_PUB_LEN] = { 0xa1, 0x63, 'k', 'e',
		    'y', 0x58, IDENTITY_PUB_LEN };

		dcbor_buf_init(&b);
		craft_build(&c, &b);
		/* Drop the "sig" pair (67 bytes) and say the map has 2. */
		ck_assert_uint_eq(b.data[0], 0xa3);
		b.data[0] = 0xa2;
		b.len -= 4 + 2 + IDENTITY_SIG_LEN;
		ck_assert_int_eq(frame_decode(b.data, b.len, &f, true),
		    FRAME_ESHAPE);
		/* The same with a payload after it: three keys, no sig. */
		b.data[0] = 0xa3;
		dcbor_put_cstr(&b, "data");
		dcbor_put_bytes(&b, "x", 1);
		ck_assert_int_eq(frame_decode(b.data, b.len, &f, true),
		    FRAME_ESHAPE);
		ck_assert_int_eq(frame_decode(arr, sizeof(arr), &f, true),
		    FRAME_ESHAPE);
		ck_assert_int_eq(frame_decode(onlykey, sizeof(onlykey), &f,
		    true), FRAME_ESHAPE);
		dcbor_buf_free(&b);
	}
	craft_free(&c);
}
END_TEST

START_TEST(test_err_version)
{
	struct craft c;

	craft_init(&c, &alice);
	dcbor_put_uint(craft_field(&c, F_VER), FRAME_VERSION + 1);
	ck_assert_int_eq(craft_open(&c), FRAME_EVERSION);
	dcbor_put_uint(craft_field(&c, F_VER), 0);
	ck_assert_int_eq(craft_open(&c), FRAME_EVERSION);
	craft_free(&c);
}
END_TEST

START_TEST(test_err_kind)
{
	struct craft c;

	craft_init(&c, &alice);
	dcbor_put_uint(craft_field(&c, F_KIND), 0);
	ck_assert_int_eq(craft_open(&c), FRAME_EKIND);
	dcbor_put_uint(craft_field(&c, F_KIND), FRAME_KIND_MAX);
	ck_assert_int_eq(craft_open(&c), FRAME_EKIND);
	dcbor_put_uint(craft_field(&c, F_KIND), UINT64_MAX);
	ck_assert_int_eq(craft_open(&c), FRAME_EKIND);
	dcbor_put_uint(craft_field(&c, F_KIND), FRAME_KIND_MAX - 1);
	ck_assert_int_eq(craft_open(&c), FRAME_OK);
	craft_free(&c);
}
END_TEST

START_TEST(test_err_key)
{
	struct craft c;

	craft_init(&c, &alice);
	c.key_len = IDENTITY_PUB_LEN - 1;
	ck_assert_int_eq(craft_open(&c), FRAME_EKEY);
	c.key_len = IDENTITY_PUB_LEN + 1;
	ck_assert_int_eq(craft_open(&c), FRAME_EKEY);
	craft_free(&c);
}
END_TEST

START_TEST(test_err_siglen)
{
	struct craft c;

	craft_init(&c, &alice);
	c.sig_len = IDENTITY_SIG_LEN - 1;
	ck_assert_int_eq(craft_open(&c), FRAME_ESIGLEN);
	c.sig_len = IDENTITY_SIG_LEN + 1;
	ck_assert_int_eq(craft_open(&c), FRAME_ESIGLEN);
	craft_free(&c);
}
END_TEST

START_TEST(test_err_from)
{
	struct craft c;

	/* Signed by alice, claiming to be bob. */
	craft_init(&c, &alice);
	dcbor_put_bytes(craft_field(&c, F_FROM), bob.id, IDENTITY_ID_LEN);
	ck_assert_int_eq(craft_open(&c), FRAME_EFROM);
	craft_free(&c);
}
END_TEST

START_TEST(test_err_sig)
{
	struct craft c;

	craft_init(&c, &alice);
	c.bad_sig = true;
	ck_assert_int_eq(craft_open(&c), FRAME_ESIG);
	craft_free(&c);
}
END_TEST

START_TEST(test_err_trailing)
{
	struct hlc_stamp s = { 1, 2, 3 };
	struct dcbor_buf out;
	struct frame f;
	uint8_t body = 0x00;
	size_t len;

	dcbor_buf_init(&out);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, "g", NULL, &s,
	    &body, 1, FRAME_MAX_DEFAULT), 0);
	len = out.len - FRAME_LEN_PREFIX;
	dcbor_put_uint(&out, 0);
	ck_assert_int_eq(frame_open(out.data + 4, len + 1, &f),
	    FRAME_ETRAILING);
	ck_assert_int_eq(frame_open(out.data + 4, len, &f), FRAME_OK);
	dcbor_buf_free(&out);
}
END_TEST

START_TEST(test_err_bare)
{
	struct craft c;
	struct dcbor_buf b;
	struct frame f;

	craft_init(&c, &alice);
	c.bare = true;
	ck_assert_int_eq(craft_decode(&c, false), FRAME_EBARE);
	ck_assert_int_eq(craft_open(&c), FRAME_EBARE);
	dcbor_buf_init(&b);
	craft_build(&c, &b);
	ck_assert_int_eq(frame_decode(b.data, b.len, &f, true), FRAME_OK);
	ck_assert(f.bare);
	ck_assert_mem_eq(f.from, alice.id, IDENTITY_ID_LEN);
	ck_assert_uint_eq(f.kind, FRAME_PING);
	/* A bare frame has nothing to verify: the channel vouches for it. */
	ck_assert_int_eq(frame_verify(&f), FRAME_EBARE);
	dcbor_buf_free(&b);
	/* A bare frame still has to be well formed. */
	dcbor_put_uint(craft_field(&c, F_VER), 9);
	ck_assert_int_eq(craft_decode(&c, true), FRAME_EVERSION);
	craft_free(&c);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(frame_strerror(FRAME_OK), "ok");
	ck_assert_str_eq(frame_strerror(FRAME_ESIG), "bad_signature");
	ck_assert_str_eq(frame_strerror(FRAME_EBARE), "bare");
	ck_assert_str_eq(frame_strerror(FRAME_EDETACHED), "detached");
	ck_assert_str_eq(frame_strerror(-1), "unknown");
	ck_assert_str_eq(frame_strerror(FRAME_ERR_MAX), "unknown");
	for (int i = 0; i < FRAME_ERR_MAX; i++)
		for (int j = i + 1; j < FRAME_ERR_MAX; j++)
			ck_assert_str_ne(frame_strerror(i), frame_strerror(j));
	ck_assert_str_eq(frame_kind_name(FRAME_RUMOR), "rumor");
	ck_assert_str_eq(frame_kind_name(FRAME_CHANNEL_HELLO),
	    "channel_hello");
	ck_assert_str_eq(frame_kind_name(FRAME_BYE), "bye");
	ck_assert_str_eq(frame_kind_name(0), "unknown");
	ck_assert_str_eq(frame_kind_name(FRAME_KIND_MAX), "unknown");
	for (uint32_t k = 1; k < FRAME_KIND_MAX; k++)
		ck_assert_str_ne(frame_kind_name(k), "unknown");
}
END_TEST

/* ---- fuzz seeds ---------------------------------------------------------- */

static void
write_seed(const char *dir, const char *name, uint8_t mode,
    const uint8_t *p, size_t n)
{
	char path[1024];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_ptr_nonnull(fp = fopen(path, "wb"));
	ck_assert_int_eq(fputc(mode, fp), mode);
	ck_assert_uint_eq(fwrite(p, 1, n, fp), n);
	ck_assert_int_eq(fclose(fp), 0);
}

/*
 * fuzz_frame's keyed seeds: MAC'd frames under its fixed key (32 bytes of
 * 0x42; mode 2 a stream, mode 3 one frame), from its fixed peer (identity
 * seed 00 01 .. 1f).
 */
static void
write_keyed_seeds(const char *dir)
{
	struct identity id;
	struct linkkey_mac mac;
	struct dcbor_buf out;
	uint8_t seed[IDENTITY_SEED_LEN], key[LINKKEY_LEN], to[IDENTITY_ID_LEN];
	struct hlc_stamp st = { 1700000000000ull, 1, 0 };
	static const uint8_t body[] = { 0xa1, 0x63, 's', 'e', 'q', 0x01 };
	size_t one;

	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)i;
	ck_assert_int_eq(identity_from_seed(&id, seed), 0);
	memset(key, 0x42, sizeof(key));
	memset(to, 0x24, sizeof(to));
	ck_assert_int_eq(linkkey_mac_init(&mac, key), 0);
	st.node = id.node;
	dcbor_buf_init(&out);
	ck_assert_int_eq(frame_encode_mac(&out, &id, &mac, FRAME_PING, "fleet",
	    to, &st, body, sizeof(body), 0, FRAME_MAX_DEFAULT), 0);
	one = out.len;
	write_seed(dir, "one_mac_ping", 3, out.data + FRAME_LEN_PREFIX,
	    one - FRAME_LEN_PREFIX);
	st.logical++;
	ck_assert_int_eq(frame_encode_mac(&out, &id, &mac, FRAME_BLOCK, "fleet",
	    to, &st, body, sizeof(body), 4, FRAME_MAX_DEFAULT), 0);
	dcbor_put_raw(&out, (const uint8_t *)"data", 4);
	write_seed(dir, "one_mac_block_data", 3, out.data + one +
	    FRAME_LEN_PREFIX, out.len - one - FRAME_LEN_PREFIX);
	st.logical++;
	ck_assert_int_eq(frame_encode(&out, &id, FRAME_PING, "fleet", to, &st,
	    body, sizeof(body), FRAME_MAX_DEFAULT), 0);
	write_seed(dir, "stream_mac_block_signed", 2, out.data, out.len);
	dcbor_buf_free(&out);
	linkkey_mac_free(&mac);
	identity_free(&id);
}

/*
 * With FRAME_SEED_DIR set, write the fuzz_frame seed corpus there: valid
 * signed, bare and MAC'd frames, deterministic (fixed keys, Ed25519,
 * HMAC).  The first byte is fuzz_frame's mode: 0 a length-prefixed stream,
 * 1 one frame, 2 and 3 the same opened as a keyed link opens them.
 */
START_TEST(test_write_fuzz_seeds)
{
	const char *dir = getenv("FRAME_SEED_DIR");
	struct hlc_stamp s = { 1700000000000ull, 1, alice.node };
	struct dcbor_buf out, body;
	uint8_t to[IDENTITY_ID_LEN], blob[300];
	struct craft c;

	if (dir == NULL || *dir == '\0')
		return;
	dcbor_buf_init(&out);
	dcbor_buf_init(&body);
	memcpy(to, bob.id, sizeof(to));
	memset(blob, 0xa5, sizeof(blob));

	dcbor_put_null(&body);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_PING, "", NULL, &s,
	    body.data, body.len, FRAME_MAX_DEFAULT), 0);
	write_seed(dir, "stream_ping", 0, out.data, out.len);
	write_seed(dir, "one_ping", 1, out.data + 4, out.len - 4);

	dcbor_buf_reset(&body);
	dcbor_put_map(&body, 2);
	dcbor_put_uint(&body, 1);
	dcbor_put_cstr(&body, "entry");
	dcbor_put_uint(&body, 2);
	dcbor_put_array(&body, 4);
	dcbor_put_int(&body, -7);
	dcbor_put_float(&body, 0.25);
	dcbor_put_bool(&body, false);
	dcbor_put_bytes(&body, blob, 16);
	ck_assert_int_eq(frame_encode(&out, &bob, FRAME_RUMOR, "space-1", to,
	    &s, body.data, body.len, FRAME_MAX_DEFAULT), 0);
	dcbor_buf_reset(&body);
	dcbor_put_bytes(&body, blob, sizeof(blob));
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_BLOCK, "g\xc3\xbc",
	    to, &s, body.data, body.len, FRAME_MAX_DEFAULT), 0);
	write_seed(dir, "stream_three", 0, out.data, out.len);

	/* A BLOCK with a detached payload, and a PING that has one. */
	dcbor_buf_reset(&out);
	dcbor_buf_reset(&body);
	dcbor_put_map(&body, 3);
	dcbor_put_cstr(&body, "cid");
	dcbor_put_bytes(&body, blob, 32);
	dcbor_put_cstr(&body, "len");
	dcbor_put_uint(&body, 100);
	dcbor_put_cstr(&body, "piece");
	dcbor_put_uint(&body, 3);
	ck_assert_int_eq(frame_encode_head(&out, &alice, FRAME_BLOCK, "g", to,
	    &s, body.data, body.len, 100, FRAME_MAX_DEFAULT), 0);
	dcbor_put_raw(&out, blob, 100);
	write_seed(dir, "one_block_data", 1, out.data + 4, out.len - 4);
	write_seed(dir, "stream_block_data", 0, out.data, out.len);
	craft_init(&c, &alice);
	dcbor_put_bytes(&c.data, blob, 20);
	craft_build(&c, &out);
	write_seed(dir, "one_ping_data", 1, out.data, out.len);
	craft_free(&c);

	dcbor_buf_reset(&out);
	dcbor_buf_reset(&body);
	put_nested(&body, 12);
	ck_assert_int_eq(frame_encode(&out, &alice, FRAME_DIGEST, "deep", NULL,
	    &s, body.data, body.len, FRAME_MAX_DEFAULT), 0);
	write_seed(dir, "one_nested", 1, out.data + 4, out.len - 4);

	craft_init(&c, &alice);
	c.bare = true;
	craft_build(&c, &out);
	write_seed(dir, "one_bare", 1, out.data, out.len);
	craft_free(&c);
	write_keyed_seeds(dir);

	dcbor_buf_free(&out);
	dcbor_buf_free(&body);
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("codec");
	TCase *te = tcase_create("errors");

	tcase_add_checked_fixture(tc, idents_setup, idents_teardown);
	tcase_add_test(tc, test_crafted_baseline_is_valid);
	tcase_add_test(tc, test_round_trip_random);
	tcase_add_test(tc, test_frames_append);
	tcase_add_test(tc, test_every_byte_change_refused);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_size_cap);
	tcase_add_test(tc, test_read_len_bounds);
	tcase_add_test(tc, test_encode_refuses_bad_input);
	tcase_add_test(tc, test_round_trip_data);
	tcase_add_test(tc, test_data_encode_refused);
	tcase_add_test(tc, test_data_outside_signature);
	tcase_add_test(tc, test_write_fuzz_seeds);
	tcase_set_timeout(tc, 240);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(te, idents_setup, idents_teardown);
	tcase_add_test(te, test_err_short_zero_toobig);
	tcase_add_test(te, test_err_cbor);
	tcase_add_test(te, test_err_depth);
	tcase_add_test(te, test_err_noncanon);
	tcase_add_test(te, test_err_dup_envelope_key);
	tcase_add_test(te, test_err_shape);
	tcase_add_test(te, test_err_version);
	tcase_add_test(te, test_err_kind);
	tcase_add_test(te, test_err_key);
	tcase_add_test(te, test_err_siglen);
	tcase_add_test(te, test_err_from);
	tcase_add_test(te, test_err_sig);
	tcase_add_test(te, test_err_trailing);
	tcase_add_test(te, test_err_bare);
	tcase_add_test(te, test_err_detached);
	tcase_add_test(te, test_names);
	suite_add_tcase(s, te);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(frame_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * bench_wire.c: the Wire family, the CPU of one MAC'd frame at both ends
 * of a keyed TCP link (issues #10 and #12), for the bodies that dominate a
 * write and a take:
 *
 *   rumor1   a RUMOR map {"rid","hops","items":[1 record],"origin"}
 *   rumor8   the same with 8 records (a batch of one loop turn's writes)
 *   ihave    an IHAVE body {"ids": [32 ids]}
 *   claim    a RUMOR of one claimed record (the urgent lane's frame)
 *   acks     a CLAIM_ACKS body, [3 CLAIM_ACK maps]
 *
 * The records are wire records (space.h) of the bench fixture's task
 * entries (fixture.h), one add dot each.  Rows, for
 * each body B:
 *
 *   rx_B     the whole receive path of one frame as peerd runs it:
 *            frame_open_keyed (decode, canonical check, MAC, from check),
 *            then the body's parse the way peerd's handler walks it (the
 *            rumor map, the rid's XXH3 over the items, space_rec_decode
 *            of every record; the ids; every answer map), verify excluded
 *            (that is the Ed25519 floor, not the frame's cost)
 *   open_B   frame_open_keyed alone;  body_B  the body's parse alone
 *   check_B  dcbor_check of the frame bytes alone (the canonical check)
 *   mac_B    linkkey_mac over the envelope bytes alone
 *   tx_B     the send path: frame_encode_mac of the body (its sender-side
 *            check of the body, the envelope, the MAC)
 *
 * and the same run's baselines: hmac_B (one HMAC-SHA256 of the same
 * envelope bytes by raw OpenSSL, the one-shot HMAC() with the same key),
 * libcbor_B (one libcbor pass over the frame's bytes: cbor_stream_decode
 * head by head with empty callbacks, no checks) and memcpy_B (a copy of
 * the frame's bytes).  rx and mac name hmac, open and check name libcbor,
 * tx and body name memcpy.  Never linked into peerd.
 */
#include <stdlib.h>
#include <string.h>

#include <cbor.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <xxhash.h>

#include "bench.h"
#include "dcbor.h"
#include "crdt.h"
#include "entry.h"
#include "fixture.h"
#include "frame.h"
#include "hlc.h"
#include "identity.h"
#include "linkkey.h"
#include "rumor.h"
#include "space.h"

enum wire_body { WB_RUMOR1, WB_RUMOR8, WB_IHAVE, WB_CLAIM, WB_ACKS };

#define WIRE_IHAVE_IDS	32
#define WIRE_ACKS	3

struct wire_state {
	enum wire_body		 which;
	uint32_t		 kind;
	struct identity		 ident;
	struct hlc_stamp	 stamp;
	uint8_t			 key[LINKKEY_LEN];
	struct linkkey_mac	 mac;
	struct dcbor_buf	 body;
	struct dcbor_buf	 out;	/* tx's output, reused */
	uint8_t			*wire;	/* one MAC'd frame, no prefix */
	size_t			 wire_len;
	const uint8_t		*env;	/* its envelope, inside wire */
	size_t			 env_len;
	uint8_t			*copy;	/* memcpy's target */
};

static void
wire_teardown(void *state)
{
	struct wire_state *st = state;

	identity_free(&st->ident);
	linkkey_mac_free(&st->mac);
	dcbor_buf_free(&st->body);
	dcbor_buf_free(&st->out);
	free(st->wire);
	free(st->copy);
	free(st);
}

/*
 * n wire records (space.h: {"rec": state, "entry": entry}) of fixture
 * entries as one CBOR array, appended to b; claimed: each carries a claim.
 */
static int
put_records(struct dcbor_buf *b, size_t n, uint64_t first, bool claimed)
{
	dcbor_put_array(b, n);
	for (size_t i = 0; i < n; i++) {
		struct entry *e = fixture_entry(first + i, 1764480000000ull +
		    i, 30000, FIXTURE_KIND_ALT);
		struct crdt_rec cr;

		if (e == NULL)
			return -1;
		crdt_rec_init(&cr, e->id);
		if (crdt_state_add(&cr.st, e->stamp.node, 1) == -1) {
			entry_free(e);
			return -1;
		}
		if (claimed) {
			cr.claim.epoch = 1;
			cr.claim.bid = 77;
			cr.claim.stamp = e->stamp;
			cr.claim.mono_us = 123456789;
			cr.claim.expiry_ms = 1764480030000ull;
			bench_fill(cr.claim.key, sizeof(cr.claim.key), 50 + i);
			bench_fill(cr.claim.holder, sizeof(cr.claim.holder),
			    60 + i);
			bench_fill(cr.claim.sig, sizeof(cr.claim.sig), 70 + i);
		}
		dcbor_put_map(b, 2);
		dcbor_put_cstr(b, "rec");
		crdt_rec_encode(b, &cr);
		dcbor_put_cstr(b, "entry");
		entry_encode(b, e);
		crdt_rec_free(&cr);
		entry_free(e);
	}
	return 0;
}

static int
put_rumor(struct dcbor_buf *b, size_t nrec, uint64_t first, bool claimed)
{
	struct dcbor_buf items;
	int rc;

	dcbor_buf_init(&items);
	rc = put_records(&items, nrec, first, claimed);
	rumor_map_put(b, XXH3_64bits(items.data, items.len) | 1, 6,
	    0x1234567890abcdefull, items.data, items.len);
	dcbor_buf_free(&items);
	return rc;
}

static void
put_body(struct wire_state *st)
{
	struct dcbor_buf *b = &st->body;
	uint8_t id[16];

	switch (st->which) {
	case WB_RUMOR1:
	case WB_CLAIM:
		st->kind = FRAME_RUMOR;
		(void)put_rumor(b, 1, 1, st->which == WB_CLAIM);
		break;
	case WB_RUMOR8:
		st->kind = FRAME_RUMOR;
		(void)put_rumor(b, 8, 1, false);
		break;
	case WB_IHAVE:
		st->kind = FRAME_IHAVE;
		dcbor_put_map(b, 1);
		dcbor_put_cstr(b, "ids");
		dcbor_put_array(b, WIRE_IHAVE_IDS);
		for (uint64_t i = 0; i < WIRE_IHAVE_IDS; i++)
			dcbor_put_uint(b, (0x9e3779b97f4a7c15ull * (i + 1)) | 1);
		break;
	case WB_ACKS:
		st->kind = FRAME_CLAIM_ACKS;
		dcbor_put_array(b, WIRE_ACKS);
		for (unsigned i = 0; i < WIRE_ACKS; i++) {
			bench_fill(id, sizeof(id), 40 + i);
			dcbor_put_map(b, 3);
			dcbor_put_cstr(b, "ok");
			dcbor_put_bool(b, true);
			dcbor_put_cstr(b, "entry");
			dcbor_put_bytes(b, id, sizeof(id));
			dcbor_put_cstr(b, "epoch");
			dcbor_put_uint(b, 7 + i);
		}
		break;
	}
}

/* The rumor map's walk, as peerd's RUMOR handler does it. */
static int
parse_rumor(struct dcbor_rd *rd, uint64_t *acc)
{
	struct rumor_map rm;
	uint64_t nrec;
	struct dcbor_rd ird;

	if (rumor_map_get(rd, &rm) == -1 ||
	    rm.rid != (XXH3_64bits(rm.items, rm.items_len) | 1))
		return -1;
	dcbor_rd_init(&ird, rm.items, rm.items_len);
	if (dcbor_get_array(&ird, &nrec) == -1)
		return -1;
	for (uint64_t i = 0; i < nrec; i++) {
		struct entry *e;
		struct crdt_rec cr;
		int rc;

		crdt_rec_init(&cr, (const uint8_t[ENTRY_ID_LEN]){ 0 });
		rc = space_rec_decode(&ird, &e, &cr);
		if (rc == 0)
			*acc += e->stamp.phys + cr.claim.epoch;
		entry_free(e);
		crdt_rec_free(&cr);
		if (rc != 0)
			return -1;
	}
	*acc += rm.hops + rm.origin;
	return 0;
}

static int
parse_ihave(struct dcbor_rd *rd, uint64_t *acc)
{
	uint64_t k, cnt, id;

	if (dcbor_get_map(rd, &k) == -1 || k != 1 ||
	    dcbor_get_key(rd, "ids") == -1 ||
	    dcbor_get_array(rd, &cnt) == -1 || cnt > 4096)
		return -1;
	for (uint64_t i = 0; i < cnt; i++) {
		if (dcbor_get_uint(rd, &id) == -1 || id == 0)
			return -1;
		*acc += id;
	}
	return 0;
}

static int
parse_acks(struct dcbor_rd *rd, uint64_t *acc)
{
	uint64_t n, k, epoch;
	const uint8_t *p;
	size_t plen;
	uint8_t id[16];
	bool ok;

	if (dcbor_get_array(rd, &n) == -1 || n < 2 || n > 4096)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct dcbor_rd ard;

		if (dcbor_get_raw(rd, &p, &plen) == -1 || p[0] != 0xa3)
			return -1;
		dcbor_rd_init(&ard, p, plen);
		if (dcbor_get_map(&ard, &k) == -1 || k != 3 ||
		    dcbor_get_key(&ard, "ok") == -1 ||
		    dcbor_get_bool(&ard, &ok) == -1 ||
		    dcbor_get_key(&ard, "entry") == -1 ||
		    dcbor_get_fixed(&ard, id, sizeof(id)) == -1 ||
		    dcbor_get_key(&ard, "epoch") == -1 ||
		    dcbor_get_uint(&ard, &epoch) == -1 ||
		    dcbor_left(&ard) != 0)
			return -1;
		*acc += epoch + id[0] + ok;
	}
	return 0;
}

static int
parse_body(const struct wire_state *st, const uint8_t *body, size_t len,
    uint64_t *acc)
{
	struct dcbor_rd rd;
	int rc;

	dcbor_rd_init(&rd, body, len);
	switch (st->which) {
	case WB_IHAVE:
		rc = parse_ihave(&rd, acc);
		break;
	case WB_ACKS:
		rc = parse_acks(&rd, acc);
		break;
	default:
		rc = parse_rumor(&rd, acc);
		break;
	}
	return rc == 0 && dcbor_left(&rd) == 0 ? 0 : -1;
}

static int
wire_setup(void **state, size_t param)
{
	struct wire_state *st;
	struct frame f;
	uint8_t seed[IDENTITY_SEED_LEN];
	uint64_t acc = 0;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	st->which = (enum wire_body)param;
	dcbor_buf_init(&st->body);
	dcbor_buf_init(&st->out);
	bench_fill(seed, sizeof(seed), 31);
	if (identity_from_seed(&st->ident, seed) == -1)
		return -1;
	st->stamp.phys = 1764480000000ull;
	st->stamp.logical = 2;
	st->stamp.node = st->ident.node;
	bench_fill(st->key, sizeof(st->key), 32);
	if (linkkey_mac_init(&st->mac, st->key) == -1)
		return -1;
	put_body(st);
	if (frame_encode_mac(&st->out, &st->ident, &st->mac, st->kind,
	    "bench-group", NULL, &st->stamp, st->body.data, st->body.len, 0,
	    FRAME_MAX_DEFAULT) == -1)
		return -1;
	st->wire_len = st->out.len - FRAME_LEN_PREFIX;
	if ((st->wire = malloc(st->wire_len)) == NULL ||
	    (st->copy = malloc(st->wire_len)) == NULL)
		return -1;
	memcpy(st->wire, st->out.data + FRAME_LEN_PREFIX, st->wire_len);
	if (frame_open_keyed(st->wire, st->wire_len, &f, st->ident.id,
	    &st->mac) != FRAME_OK || parse_body(st, f.body, f.body_len,
	    &acc) == -1)
		return -1;
	st->env = f.env;
	st->env_len = f.env_len;
	return 0;
}

static int
run_rx(void *state, uint64_t n)
{
	struct wire_state *st = state;
	struct frame f;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		if (frame_open_keyed(st->wire, st->wire_len, &f, st->ident.id,
		    &st->mac) != FRAME_OK ||
		    parse_body(st, f.body, f.body_len, &acc) == -1)
			return -1;
	}
	bench_consume(acc);
	return 0;
}

static int
run_open(void *state, uint64_t n)
{
	struct wire_state *st = state;
	struct frame f;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		if (frame_open_keyed(st->wire, st->wire_len, &f, st->ident.id,
		    &st->mac) != FRAME_OK)
			return -1;
		acc += f.body_len;
	}
	bench_consume(acc);
	return 0;
}

static int
run_body(void *state, uint64_t n)
{
	struct wire_state *st = state;
	struct frame f;
	uint64_t acc = 0;

	if (frame_open_keyed(st->wire, st->wire_len, &f, st->ident.id,
	    &st->mac) != FRAME_OK)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		if (parse_body(st, f.body, f.body_len, &acc) == -1)
			return -1;
	}
	bench_consume(acc);
	return 0;
}

static int
run_check(void *state, uint64_t n)
{
	struct wire_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		if (dcbor_check(st->wire, st->wire_len, FRAME_MAX_DEPTH, true,
		    NULL) != DCBOR_OK)
			return -1;
		acc++;
	}
	bench_consume(acc);
	return 0;
}

static int
run_mac(void *state, uint64_t n)
{
	struct wire_state *st = state;
	uint8_t tag[LINKKEY_MAC_LEN];
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		if (linkkey_mac(&st->mac, st->env, st->env_len, tag) == -1)
			return -1;
		acc += tag[0];
	}
	bench_consume(acc);
	return 0;
}

static int
run_tx(void *state, uint64_t n)
{
	struct wire_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->out);
		if (frame_encode_mac(&st->out, &st->ident, &st->mac, st->kind,
		    "bench-group", NULL, &st->stamp, st->body.data,
		    st->body.len, 0, FRAME_MAX_DEFAULT) == -1)
			return -1;
		acc += st->out.data[st->out.len - 1];
	}
	bench_consume(acc);
	return 0;
}

static int
run_hmac(void *state, uint64_t n)
{
	struct wire_state *st = state;
	uint8_t tag[EVP_MAX_MD_SIZE];
	unsigned int tlen;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		if (HMAC(EVP_sha256(), st->key, sizeof(st->key), st->env,
		    st->env_len, tag, &tlen) == NULL)
			return -1;
		acc += tag[0];
	}
	bench_consume(acc);
	return 0;
}

static void cb_u8(void *c, uint8_t v) { (void)c; (void)v; }
static void cb_u16(void *c, uint16_t v) { (void)c; (void)v; }
static void cb_u32(void *c, uint32_t v) { (void)c; (void)v; }
static void cb_u64(void *c, uint64_t v) { (void)c; (void)v; }
static void cb_str(void *c, cbor_data p, uint64_t n) { (void)c; (void)p; (void)n; }
static void cb_coll(void *c, uint64_t n) { (void)c; (void)n; }
static void cb_none(void *c) { (void)c; }
static void cb_f(void *c, float f) { (void)c; (void)f; }
static void cb_d(void *c, double d) { (void)c; (void)d; }
static void cb_b(void *c, bool b) { (void)c; (void)b; }

static const struct cbor_callbacks empty_callbacks = {
	.uint8 = cb_u8, .uint16 = cb_u16, .uint32 = cb_u32, .uint64 = cb_u64,
	.negint8 = cb_u8, .negint16 = cb_u16, .negint32 = cb_u32,
	.negint64 = cb_u64,
	.byte_string = cb_str, .byte_string_start = cb_none,
	.string = cb_str, .string_start = cb_none,
	.array_start = cb_coll, .indef_array_start = cb_none,
	.map_start = cb_coll, .indef_map_start = cb_none,
	.tag = cb_u64, .float2 = cb_f, .float4 = cb_f, .float8 = cb_d,
	.undefined = cb_none, .null = cb_none, .boolean = cb_b,
	.indef_break = cb_none,
};

static int
run_libcbor(void *state, uint64_t n)
{
	struct wire_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t off = 0;

		bench_escape(st->wire);
		while (off < st->wire_len) {
			struct cbor_decoder_result r = cbor_stream_decode(
			    st->wire + off, st->wire_len - off,
			    &empty_callbacks, NULL);

			if (r.status != CBOR_DECODER_FINISHED || r.read == 0)
				return -1;
			off += r.read;
			acc++;
		}
	}
	bench_consume(acc);
	return 0;
}

static int
run_memcpy(void *state, uint64_t n)
{
	struct wire_state *st = state;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		memcpy(st->copy, st->wire, st->wire_len);
		bench_escape(st->copy);
	}
	bench_consume(st->copy[st->wire_len - 1]);
	return 0;
}

#define WIRE_ROWS(B, P)							\
	{ "Wire.hmac_" B, NULL, P, wire_setup, run_hmac, wire_teardown,	\
	    NULL },							\
	{ "Wire.libcbor_" B, NULL, P, wire_setup, run_libcbor,		\
	    wire_teardown, NULL },					\
	{ "Wire.memcpy_" B, NULL, P, wire_setup, run_memcpy,		\
	    wire_teardown, NULL },					\
	{ "Wire.rx_" B, "Wire.hmac_" B, P, wire_setup, run_rx,		\
	    wire_teardown, NULL },					\
	{ "Wire.open_" B, "Wire.libcbor_" B, P, wire_setup, run_open,	\
	    wire_teardown, NULL },					\
	{ "Wire.check_" B, "Wire.libcbor_" B, P, wire_setup, run_check,	\
	    wire_teardown, NULL },					\
	{ "Wire.mac_" B, "Wire.hmac_" B, P, wire_setup, run_mac,	\
	    wire_teardown, NULL },					\
	{ "Wire.body_" B, "Wire.memcpy_" B, P, wire_setup, run_body,	\
	    wire_teardown, NULL },					\
	{ "Wire.tx_" B, "Wire.memcpy_" B, P, wire_setup, run_tx,	\
	    wire_teardown, NULL }

static const struct bench_row wire_rows[] = {
	WIRE_ROWS("rumor1", WB_RUMOR1),
	WIRE_ROWS("rumor8", WB_RUMOR8),
	WIRE_ROWS("ihave", WB_IHAVE),
	WIRE_ROWS("claim", WB_CLAIM),
	WIRE_ROWS("acks", WB_ACKS),
};

const struct bench_family bench_family_wire = {
	"Wire", wire_rows, BENCH_NROWS(wire_rows)
};

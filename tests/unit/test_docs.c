/*
 * test_docs.c: the worked examples of docs/protocol.md section 11 are what
 * the code produces, byte for byte.
 *
 * Each example is a fenced block opened by "```hex NAME" in the doc.  This
 * test makes every example with the real encoders (frame_encode_head,
 * entry_new and entry_signing_bytes, space_write and space_rec_encode,
 * crdt_claim_signing_bytes, gossip_rid, space_digest, space_bucket_of,
 * handshake_encode) from fixed keys and stamps (Ed25519 is deterministic),
 * and checks that the doc has exactly these blocks with exactly these
 * bytes.  DOCS_PRINT=1 prints the blocks instead, for pasting into the doc
 * after a deliberate change to the wire.
 */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "gossip.h"
#include "hex.h"
#include "identity.h"
#include "handshake.h"
#include "link.h"
#include "peerd.h"
#include "space.h"

#include <xxhash.h>

#define DOC		"docs/protocol.md"
#define EX_PHYS		1796000000000ull	/* 2026-11-30T...Z, ms */
#define EX_LEASE	60000u
#define MAX_EX		16

/* link.c and gossip.c come with the daemon; nothing here runs it. */
static struct peerd tpd;
struct peerd *pd = &tpd;

void
peerd_shutdown(const char *why)
{
	(void)why;
}

uint64_t
peerd_uptime_us(void)
{
	return 0;
}

struct example {
	char		 name[32];
	struct dcbor_buf b;
};

static struct example	 ex[MAX_EX];
static size_t		 nex;

static struct dcbor_buf *
ex_new(const char *name)
{
	struct example *x;

	ck_assert_uint_lt(nex, MAX_EX);
	x = &ex[nex++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	dcbor_buf_init(&x->b);
	return &x->b;
}

static void
ex_bytes(const char *name, const void *p, size_t n)
{
	dcbor_put_raw(ex_new(name), p, n);
}

static void
fixed_key(struct identity *id, uint8_t first)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)(first + i);
	ck_assert_int_eq(identity_from_seed(id, seed), 0);
}

/* The record's "rec" map (its CRDT part), as the digest hashes it. */
static struct dcbor_buf	 recbuf;
static size_t		 rec_map_len;

static const uint8_t *
rec_map(const struct space_rec *r)
{
	struct dcbor_buf whole;
	struct dcbor_rd rd;
	const uint8_t *p;
	uint64_t n;

	dcbor_buf_init(&whole);
	space_rec_encode(&whole, r);
	dcbor_rd_init(&rd, whole.data, whole.len);
	ck_assert_int_eq(dcbor_get_map(&rd, &n), 0);
	ck_assert_int_eq(dcbor_get_key(&rd, "rec"), 0);
	ck_assert_int_eq(dcbor_get_raw(&rd, &p, &rec_map_len), 0);
	dcbor_buf_reset(&recbuf);
	dcbor_put_raw(&recbuf, p, rec_map_len);
	dcbor_buf_free(&whole);
	return recbuf.data;
}

/* Every example, from the keys A (seed 00 01 .. 1f) and B (seed 20 .. 3f). */
static void
make_examples(void)
{
	struct identity a, b;
	struct hlc_stamp st = { EX_PHYS, 0, 0 };
	struct dcbor_buf body, *out, items;
	struct entry_spec spec;
	struct entry *e;
	struct space *sp;
	struct space_rec *r;
	struct crdt_claim c;
	struct link_hello h;
	const uint8_t *sb;
	size_t sblen;
	uint8_t sig[IDENTITY_SIG_LEN], nonce[LINK_HELLO_NONCE];
	uint8_t eid[ENTRY_ID_LEN];
	uint64_t dig[GOSSIP_BUCKETS], rid;
	uint32_t bucket;

	fixed_key(&a, 0x00);
	fixed_key(&b, 0x20);
	ex_bytes("key_a_public", a.pub, IDENTITY_PUB_LEN);
	ex_bytes("key_a_id", a.id, IDENTITY_ID_LEN);
	ex_bytes("key_b_id", b.id, IDENTITY_ID_LEN);
	st.node = a.node;

	/* 1. A PING from A to B, the whole frame with its length prefix. */
	dcbor_buf_init(&body);
	dcbor_put_map(&body, 1);
	dcbor_put_cstr(&body, "seq");
	dcbor_put_uint(&body, 1);
	out = ex_new("frame_ping");
	ck_assert_int_eq(frame_encode_head(out, &a, FRAME_PING, "fleet", b.id,
	    &st, body.data, body.len, 0, 8u << 20), 0);
	{
		struct frame f;

		ck_assert_int_eq(frame_open(out->data + FRAME_LEN_PREFIX,
		    out->len - FRAME_LEN_PREFIX, &f), FRAME_OK);
		ex_bytes("frame_ping_env", f.env, f.env_len);
		ck_assert_int_eq(identity_sign(&a, f.env, f.env_len, sig), 0);
		ex_bytes("frame_ping_sig", sig, sizeof(sig));
	}

	/* 2. A's first hello to B (to empty), nonce 00 11 22 .. ff. */
	for (size_t i = 0; i < sizeof(nonce); i++)
		nonce[i] = (uint8_t)(i * 0x11);
	memset(&h, 0, sizeof(h));
	strcpy(h.addr, "127.0.0.1:4000");
	strcpy(h.name, "a");
	h.nonce = nonce;
	h.nonce_len = sizeof(nonce);
	dcbor_buf_reset(&body);
	handshake_encode(&body, &h);
	ex_bytes("hello_body", body.data, body.len);

	/* 3. An entry by A, written into a space: its record and a rumor. */
	dcbor_buf_reset(&body);
	dcbor_put_map(&body, 1);
	dcbor_put_cstr(&body, "n");
	dcbor_put_uint(&body, 7);
	memset(&spec, 0, sizeof(spec));
	spec.space = "default";
	spec.type = "task#v1";
	spec.fields = body.data;
	spec.fields_len = body.len;
	spec.issuer = a.pub;
	spec.stamp = st;
	spec.lease_ms = EX_LEASE;
	spec.mono_us = 5000000;
	ck_assert_int_eq(entry_new(&spec, &e), ENTRY_OK);
	entry_signing_bytes(e, &sb, &sblen);
	ex_bytes("entry_body", sb, sblen);
	ck_assert_int_eq(identity_sign(&a, sb, sblen, sig), 0);
	entry_set_sig(e, sig);
	memcpy(eid, e->id, ENTRY_ID_LEN);
	sp = space_new(a.node, a.id, 16);
	ck_assert_int_eq(space_write(sp, e, EX_PHYS), SPACE_OK);	/* owns e */
	ck_assert_ptr_nonnull(r = space_get(sp, eid));
	dcbor_buf_init(&items);
	dcbor_put_array(&items, 1);
	space_rec_encode(&items, r);
	rid = gossip_rid(items.data, items.len);
	out = ex_new("rumor_body");
	dcbor_put_map(out, 4);
	dcbor_put_cstr(out, "rid");
	dcbor_put_uint(out, rid);
	dcbor_put_cstr(out, "hops");
	dcbor_put_uint(out, 1);
	dcbor_put_cstr(out, "items");
	dcbor_put_raw(out, items.data, items.len);
	dcbor_put_cstr(out, "origin");		/* A's node: its id's first 8 bytes */
	dcbor_put_uint(out, a.node);

	/* 4. A claim by B on that entry: the bytes B signs. */
	memset(&c, 0, sizeof(c));
	c.epoch = 1;
	c.bid = 0;
	c.stamp = (struct hlc_stamp){ EX_PHYS + 10, 0, b.node };
	memcpy(c.holder, b.id, IDENTITY_ID_LEN);
	c.expiry_ms = EX_PHYS + 10 + 30000;
	out = ex_new("claim_signed_bytes");
	crdt_claim_signing_bytes(out, &c, eid);
	ck_assert_int_eq(identity_sign(&b, out->data, out->len, sig), 0);
	ex_bytes("claim_sig", sig, sizeof(sig));

	/* 5. The digest exchange: A holds the record, B holds nothing. */
	space_digest(sp, GOSSIP_BUCKETS, dig);
	bucket = space_bucket_of(eid, GOSSIP_BUCKETS);
	ck_assert_uint_eq(bucket, eid[3] & 63);
	{
		const uint8_t *rm = rec_map(r);

		ex_bytes("digest_rec_map", rm, rec_map_len);
		ck_assert_uint_eq(dig[bucket], XXH3_64bits(rm, rec_map_len));
	}
	out = ex_new("digest_body");
	dcbor_put_map(out, 1);
	dcbor_put_cstr(out, "b");
	dcbor_put_array(out, GOSSIP_BUCKETS);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		dcbor_put_uint(out, dig[i]);
	for (int fin = 0; fin < 2; fin++) {
		out = ex_new(fin ? "pull_resp_final" : "pull_resp_first");
		dcbor_put_map(out, 4);
		dcbor_put_cstr(out, "diff");
		dcbor_put_array(out, 1);
		dcbor_put_uint(out, bucket);
		dcbor_put_cstr(out, "more");
		dcbor_put_bool(out, false);
		dcbor_put_cstr(out, "recs");
		if (fin)
			dcbor_put_raw(out, items.data, items.len);
		else
			dcbor_put_array(out, 0);
		dcbor_put_cstr(out, "final");
		dcbor_put_bool(out, fin);
	}
	dcbor_buf_free(&items);
	dcbor_buf_free(&body);
	space_free(sp);
	identity_free(&a);
	identity_free(&b);
}

/* The hex digits of the doc's block "```hex name", or NULL. */
static char *
doc_block(const char *doc, const char *name)
{
	char open[64];
	const char *p, *end;
	char *hex;
	size_t n = 0;

	snprintf(open, sizeof(open), "```hex %.32s\n", name);
	if ((p = strstr(doc, open)) == NULL)
		return NULL;
	p += strlen(open);
	if ((end = strstr(p, "```")) == NULL)
		return NULL;
	hex = calloc(1, (size_t)(end - p) + 1);
	for (; p < end; p++)
		if (isxdigit((unsigned char)*p))
			hex[n++] = *p;
	return hex;
}

static char *
slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *s;
	long n;

	ck_assert_msg(fp != NULL, "open %s (run from the repository root)",
	    path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	s = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return s;
}

static char *
to_hex(const struct dcbor_buf *b)
{
	char *s = calloc(1, 2 * b->len + 1);

	hex_encode(b->data, b->len, s);
	return s;
}

static void
print_block(const struct example *x)
{
	char *s = to_hex(&x->b);
	size_t n = strlen(s);

	printf("```hex %s\n", x->name);
	for (size_t i = 0; i < n; i += 64)
		printf("%.*s\n", (int)(n - i < 64 ? n - i : 64), s + i);
	printf("```\n\n");
	free(s);
}

START_TEST(examples_match_the_code)
{
	char *doc = slurp(DOC);
	size_t blocks = 0;
	const char *p;

	dcbor_buf_init(&recbuf);
	make_examples();
	if (getenv("DOCS_PRINT") != NULL)
		for (size_t i = 0; i < nex; i++)
			print_block(&ex[i]);
	for (size_t i = 0; i < nex; i++) {
		char *want = to_hex(&ex[i].b), *got = doc_block(doc, ex[i].name);

		ck_assert_msg(got != NULL, "%s: no block \"```hex %s\"", DOC,
		    ex[i].name);
		ck_assert_msg(strcmp(got, want) == 0,
		    "%s: block %s is not what the code produces:\n"
		    "doc:  %s\ncode: %s", DOC, ex[i].name, got, want);
		free(got);
		free(want);
	}
	/* And no block the code does not make (a stale example). */
	for (p = doc; (p = strstr(p, "```hex ")) != NULL; p++)
		blocks++;
	ck_assert_uint_eq(blocks, nex);
	for (size_t i = 0; i < nex; i++)
		dcbor_buf_free(&ex[i].b);
	nex = 0;
	dcbor_buf_free(&recbuf);
	free(doc);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("docs");
	TCase *tc = tcase_create("examples");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, examples_match_the_code);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, getenv("DOCS_PRINT") ? CK_NOFORK :
	    CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}

/*
 * test_docs.c: the worked examples of docs/protocol.md section 11 are what
 * the code produces, byte for byte.
 *
 * Each example is a fenced block opened by "```hex NAME" in the doc.  This
 * test makes every example with the real encoders (frame_encode_head,
 * entry_new and entry_signing_bytes, space_write and space_rec_encode,
 * crdt_claim_signing_bytes, gossip_rid, space_digest, space_bucket_of,
 * handshake_encode, linkkey_derive, frame_encode_mac) from fixed keys and
 * stamps (Ed25519, X25519, HKDF and HMAC are deterministic),
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
#include "doc_blocks.h"
#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "gossip.h"
#include "hex.h"
#include "identity.h"
#include "handshake.h"
#include "link.h"
#include "linkkey.h"
#include "peerd.h"
#include "space.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <xxhash.h>

#define DOC		"docs/protocol.md"
#define EX_PHYS		1796000000000ull	/* 2026-11-30T...Z, ms */
#define EX_LEASE	60000u

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

/* X25519 by OpenSSL directly: the doc's ikm, independently of linkkey.c. */
static void
x25519_raw(const uint8_t priv[32], const uint8_t pub[32], uint8_t out[32])
{
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv,
	    32);
	EVP_PKEY *p = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, pub,
	    32);
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(k, NULL);
	size_t n = 32;

	ck_assert(k != NULL && p != NULL && c != NULL);
	ck_assert_int_eq(EVP_PKEY_derive_init(c), 1);
	ck_assert_int_eq(EVP_PKEY_derive_set_peer(c, p), 1);
	ck_assert_int_eq(EVP_PKEY_derive(c, out, &n), 1);
	EVP_PKEY_CTX_free(c);
	EVP_PKEY_free(k);
	EVP_PKEY_free(p);
}

/* HKDF-SHA256 by OpenSSL directly, as the doc states it. */
static void
hkdf_raw(const uint8_t *ikm, const uint8_t *salt, size_t salt_len,
    const uint8_t *info, size_t info_len, uint8_t *out, size_t n)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *c = EVP_KDF_CTX_new(kdf);
	OSSL_PARAM prm[] = {
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256",
		    0),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, 32),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt,
		    salt_len),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_INFO, (void *)info,
		    info_len),
		OSSL_PARAM_END
	};

	ck_assert_int_eq(EVP_KDF_derive(c, out, n, prm), 1);
	EVP_KDF_CTX_free(c);
	EVP_KDF_free(kdf);
}

/*
 * A's and B's hellos with kx (X25519 private keys 40 41 .. 5f for A and
 * 60 61 .. 7f for B; A's nonce 00 11 .. ff, B's ff ee .. 00), the
 * derivation's inputs and outputs, and the PING of example 1 MAC'd by A.
 * B's id is the lower, so B's nonce and id come first and the first key
 * is B's sending key.
 */
static void
keyed_examples(const struct identity *a, const struct identity *b,
    const uint8_t *a_nonce, const struct hlc_stamp *st)
{
	uint8_t pa[LINKKEY_PRIV_LEN], pb[LINKKEY_PRIV_LEN];
	uint8_t b_nonce[LINK_HELLO_NONCE], ikm[32], salt[32], okm[64];
	uint8_t info[sizeof(LINKKEY_LABEL) - 1 + 64];
	uint8_t a_tx[32], a_rx[32], b_tx[32], b_rx[32];
	const size_t lab = sizeof(LINKKEY_LABEL) - 1;
	struct linkkey_eph ea, eb;
	struct linkkey_mac mac;
	struct link_hello h;
	struct dcbor_buf body, *out;

	for (size_t i = 0; i < 32; i++) {
		pa[i] = (uint8_t)(0x40 + i);
		pb[i] = (uint8_t)(0x60 + i);
	}
	for (size_t i = 0; i < sizeof(b_nonce); i++)
		b_nonce[i] = (uint8_t)(0xff - i * 0x11);
	ck_assert_int_eq(linkkey_eph_from_private(&ea, pa), 0);
	ck_assert_int_eq(linkkey_eph_from_private(&eb, pb), 0);
	ex_bytes("kx_a_public", ea.pub, LINKKEY_PUB_LEN);
	ex_bytes("kx_b_public", eb.pub, LINKKEY_PUB_LEN);

	memset(&h, 0, sizeof(h));
	strcpy(h.addr, "127.0.0.1:4000");
	strcpy(h.name, "a");
	h.nonce = a_nonce;
	h.nonce_len = LINK_HELLO_NONCE;
	h.kx = ea.pub;
	h.kx_len = LINKKEY_PUB_LEN;
	dcbor_buf_init(&body);
	handshake_encode(&body, &h);
	ex_bytes("hello_kx_a", body.data, body.len);
	strcpy(h.addr, "127.0.0.1:4001");
	strcpy(h.name, "b");
	h.nonce = b_nonce;
	h.echo = a_nonce;		/* B's proof: echoes A's nonce */
	h.echo_len = LINK_HELLO_NONCE;
	h.kx = eb.pub;
	dcbor_buf_reset(&body);
	handshake_encode(&body, &h);
	ex_bytes("proof_kx_b", body.data, body.len);

	/* The doc's recipe, by OpenSSL directly. */
	ck_assert(memcmp(b->id, a->id, IDENTITY_ID_LEN) < 0);
	x25519_raw(pa, eb.pub, ikm);
	ex_bytes("link_ikm", ikm, sizeof(ikm));
	memcpy(salt, b_nonce, 16);
	memcpy(salt + 16, a_nonce, 16);
	ex_bytes("link_salt", salt, sizeof(salt));
	memcpy(info, LINKKEY_LABEL, lab);
	memcpy(info + lab, b->id, 32);
	memcpy(info + lab + 32, a->id, 32);
	ex_bytes("link_info", info, sizeof(info));
	hkdf_raw(ikm, salt, sizeof(salt), info, sizeof(info), okm, sizeof(okm));
	ex_bytes("link_key_lower", okm, 32);
	ex_bytes("link_key_higher", okm + 32, 32);

	/* ... is what both ends derive. */
	ck_assert_int_eq(linkkey_derive(&ea, eb.pub, a->id, a_nonce, b->id,
	    b_nonce, a_tx, a_rx), 0);
	ck_assert_int_eq(linkkey_derive(&eb, ea.pub, b->id, b_nonce, a->id,
	    a_nonce, b_tx, b_rx), 0);
	ck_assert_mem_eq(a_tx, okm + 32, 32);
	ck_assert_mem_eq(a_rx, okm, 32);
	ck_assert_mem_eq(b_tx, okm, 32);
	ck_assert_mem_eq(b_rx, okm + 32, 32);

	/* The PING of example 1, MAC'd by A on that link. */
	dcbor_buf_reset(&body);
	dcbor_put_map(&body, 1);
	dcbor_put_cstr(&body, "seq");
	dcbor_put_uint(&body, 1);
	ck_assert_int_eq(linkkey_mac_init(&mac, a_tx), 0);
	out = ex_new("frame_ping_mac");
	ck_assert_int_eq(frame_encode_mac(out, a, &mac, FRAME_PING, "fleet",
	    b->id, st, body.data, body.len, 0, 8u << 20), 0);
	{
		struct frame f;
		struct linkkey_mac brx;

		ck_assert_int_eq(linkkey_mac_init(&brx, b_rx), 0);
		ck_assert_int_eq(frame_open_keyed(out->data + FRAME_LEN_PREFIX,
		    out->len - FRAME_LEN_PREFIX, &f, a->id, &brx), FRAME_OK);
		ex_bytes("frame_ping_mac_tag", f.mac, LINKKEY_MAC_LEN);
		linkkey_mac_free(&brx);
	}
	linkkey_mac_free(&mac);
	linkkey_eph_free(&ea);
	linkkey_eph_free(&eb);
	dcbor_buf_free(&body);
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

	/* 2b. A keyed hello pair, the link's keys and a MAC'd PING. */
	keyed_examples(&a, &b, nonce, &st);

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

START_TEST(examples_match_the_code)
{
	dcbor_buf_init(&recbuf);
	make_examples();
	doc_blocks_check(DOC);
	dcbor_buf_free(&recbuf);
}
END_TEST

int
main(void)
{
	return doc_blocks_main("docs", examples_match_the_code);
}

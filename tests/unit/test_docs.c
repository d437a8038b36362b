/*
 * test_docs.c: the worked examples of docs/protocol.md section 11 are what
 * the code produces, byte for byte.
 *
 * Each example is a fenced block opened by "```hex NAME" in the doc.  This
 * test makes every example with the real encoders (frame_encode_head,
 * entry_new and entry_signing_bytes, space_write and space_rec_encode,
 * crdt_claim_signing_bytes, rumor_rid, space_digest, space_bucket_of,
 * handshake_encode, linkkey_derive, frame_encode_mac, vote_ack_put,
 * vote_signing_bytes, vote_relay_put, plumtree_ids_put, plumtree_prune_put,
 * riblt_checksum, riblt_enc_next, riblt_put_syms, neg_fingerprint,
 * neg_initiate, neg_reply, recon_neg_put, recon_syms_put, recon_end_put,
 * dtlsid_msg, dtlsid_endorse and rstream's packets) from fixed keys and
 * stamps (Ed25519, X25519, HKDF and HMAC are deterministic),
 * and checks that the doc has exactly these blocks with exactly these
 * bytes.  DOCS_PRINT=1 prints the blocks instead, for pasting into the doc
 * after a deliberate change to the wire.
 */
#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdt.h"
#include "dtlsid.h"
#include "doc_blocks.h"
#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "digest.h"
#include "hex.h"
#include "identity.h"
#include "handshake.h"
#include "link.h"
#include "linkkey.h"
#include "neg.h"
#include "peerd.h"
#include "plumtree.h"
#include "recon.h"
#include "riblt.h"
#include "rstream.h"
#include "rumor.h"
#include "space.h"
#include "vote.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <xxhash.h>

#define DOC		"docs/protocol.md"
#define EX_PHYS		1796000000000ull	/* 2026-11-30T...Z, ms */
#define EX_LEASE	60000u

/* link.c comes with the daemon; nothing here runs it. */
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
/* The stream packets rstream sends, caught for the examples. */
static struct dcbor_buf *ack_out;

static int
catch_ack(void *arg, const uint8_t *p, size_t len)
{
	(void)arg;
	if (ack_out != NULL && len > 0 && p[0] == RSTREAM_ACK)
		dcbor_put_raw(ack_out, p, len);
	return 0;
}

static void
drop_bytes(void *arg, const uint8_t *p, size_t len)
{
	(void)arg;
	(void)p;
	(void)len;
}

/*
 * The DTLS binding (docs/protocol.md "The DTLS binding"): A's endorsement
 * of a channel key for one session, and the frame stream's packets.  The
 * channel key is the P-256 generator (private scalar 1: an example only),
 * the exported bytes 80 81 .. 9f.
 */
static void
dtls_examples(const struct identity *a, const struct identity *b)
{
	static const uint8_t g[DTLSID_CHAN_PUB_LEN] = {
		0x04, 0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8,
		0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2, 0x77, 0x03, 0x7d,
		0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8,
		0x98, 0xc2, 0x96, 0x4f, 0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f,
		0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16, 0x2b,
		0xce, 0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40,
		0x68, 0x37, 0xbf, 0x51, 0xf5,
	};
	uint8_t ekm[DTLSID_EKM_LEN], msg[DTLSID_MSG_LEN];
	uint8_t e[DTLSID_ENDORSE_LEN], pub[IDENTITY_PUB_LEN];
	uint8_t id[IDENTITY_ID_LEN];
	uint8_t data[RSTREAM_DATA_HDR + 3] = { RSTREAM_DATA };
	struct rstream_io io = { catch_ack, drop_bytes, NULL };
	struct rstream *rs;

	for (size_t i = 0; i < sizeof(ekm); i++)
		ekm[i] = (uint8_t)(0x80 + i);
	ex_bytes("dtls_chan_key", g, sizeof(g));
	dtlsid_msg(g, a->id, ekm, msg);
	ex_bytes("dtls_endorse_msg", msg, sizeof(msg));
	ck_assert_int_eq(dtlsid_endorse(a, g, ekm, e), 0);
	ex_bytes("dtls_endorsement", e, sizeof(e));
	/* It checks, and names A; under other exported bytes it does not. */
	ck_assert_int_eq(dtlsid_check(e, g, ekm, pub, id), 0);
	ck_assert_mem_eq(id, a->id, IDENTITY_ID_LEN);
	ekm[0] ^= 1;
	ck_assert_int_eq(dtlsid_check(e, g, ekm, pub, id), -1);
	(void)b;

	/* Segment 5, bytes "abc"; then what a receiver that holds 0, 2, 3
	 * and 5 acknowledges: cum 1, ranges [1,3) and [4,5) past it. */
	data[8] = 5;
	memcpy(data + RSTREAM_DATA_HDR, "abc", 3);
	ex_bytes("rstream_data", data, sizeof(data));
	rs = rstream_new(1000, &io, 0);
	for (uint8_t seq = 0; seq < 6; seq++) {
		if (seq == 1 || seq == 4)
			continue;
		data[8] = seq;
		ck_assert_int_eq(rstream_input(rs, data, sizeof(data), 0),
		    RSTREAM_OK);
	}
	ack_out = ex_new("rstream_ack");
	rstream_poll(rs, 0);
	ack_out = NULL;
	rstream_free(rs);
}

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

/* ---- the answers, the tree's bodies, the reconciliations --------------- */

#define EX_SID		0x1122334455667788ull	/* a session's sid */
#define EX_HOPS		32u			/* --hops */
#define EX_STEPS	4			/* mapping steps shown */

static void
put_be64(struct dcbor_buf *b, uint64_t v)
{
	uint8_t p[8];

	for (int k = 0; k < 8; k++)
		p[k] = (uint8_t)(v >> (56 - 8 * k));
	dcbor_put_raw(b, p, sizeof(p));
}

/* splitmix64 exactly as docs/protocol.md 8.3 states it. */
static uint64_t
doc_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Item x's first EX_STEPS mapping steps as the doc states them, one line
 * of 32 bytes a step: the state after its add, r, u (IEEE-754 bits) and
 * the index, each 8 bytes big-endian; and the indexes, for the encoder.
 */
static void
riblt_steps(uint64_t x, uint64_t idx[EX_STEPS + 1])
{
	struct dcbor_buf *out = ex_new("riblt_steps");
	uint64_t st = riblt_checksum(x), r, bits;
	double u, g;

	idx[0] = 0;
	for (int s = 1; s <= EX_STEPS; s++) {
		r = doc_splitmix(&st);
		u = (double)((r >> 11) + 1) * 0x1p-53;
		g = ceil(((double)idx[s - 1] + 1.5) * (1.0 / sqrt(u) - 1.0));
		idx[s] = idx[s - 1] + (g < 1 ? 1 : (uint64_t)g);
		memcpy(&bits, &u, sizeof(bits));
		put_be64(out, st);
		put_be64(out, r);
		put_be64(out, bits);
		put_be64(out, idx[s]);
	}
}

/*
 * The RIBLT examples over item x (A's record's state hash): its checksum,
 * its mapping (checked against the encoder: a set of x alone has symbols
 * at exactly those indexes), the first frame of symbols of a session whose
 * initiator holds x alone, and symbol 0 of the items 1..100 (a count of
 * two LEB128 bytes).
 */
static void
riblt_examples(uint64_t x)
{
	uint64_t idx[EX_STEPS + 1], many[100];
	struct riblt_sym *sym, s0;
	struct riblt_enc *e;
	size_t n, k = 0;
	struct dcbor_buf *out;

	put_be64(ex_new("riblt_checksum"), riblt_checksum(x));
	riblt_steps(x, idx);
	n = (size_t)idx[EX_STEPS] + 1;
	ck_assert_uint_lt(n, 1u << 16);
	sym = calloc(n, sizeof(*sym));
	e = riblt_enc_new(&x, 1, n);
	ck_assert_uint_eq(riblt_enc_next(e, sym, n), n);
	for (size_t i = 0; i < n; i++) {
		bool mapped = k <= EX_STEPS && i == idx[k];

		ck_assert_int_eq(sym[i].count, mapped ? 1 : 0);
		ck_assert_uint_eq(sym[i].sum, mapped ? x : 0);
		ck_assert_uint_eq(sym[i].chk, mapped ? riblt_checksum(x) : 0);
		k += mapped;
	}
	out = ex_new("recon_syms_body");
	recon_syms_put(out, 0, 0, EX_SID, 1, sym, 4);
	riblt_enc_free(e);
	free(sym);
	for (uint64_t i = 0; i < 100; i++)
		many[i] = i + 1;
	e = riblt_enc_new(many, 100, 1);
	ck_assert_uint_eq(riblt_enc_next(e, &s0, 1), 1);
	ck_assert_int_eq(s0.count, 100);
	riblt_put_syms(ex_new("riblt_sym0_of_100"), &s0, 1);
	riblt_enc_free(e);
}

/*
 * The negentropy examples: a fingerprint (of item x alone), then a
 * session whose initiator holds the 40 items k * 2^58 (k = 1..40) and
 * whose responder holds the same but the last, which it holds changed
 * (+ 1): the first message, the reply (an item list where the
 * fingerprints differ), and the initiator's END step 1, which asks for
 * the responder's changed item.
 */
static void
neg_examples(uint64_t x)
{
	uint64_t mine[40], theirs[40];
	struct neg *ni, *nr;
	struct neg_ids have = { 0 }, need = { 0 }, have2 = { 0 }, need2 = { 0 };
	struct dcbor_buf msg, reply, last, *out;

	out = ex_new("neg_fp_input");
	put_be64(out, x);
	put_be64(out, 1);
	put_be64(ex_new("neg_fp"), neg_fingerprint(x, 1));
	ck_assert_uint_eq(neg_fingerprint(x, 1), XXH3_64bits(out->data, 16));

	for (uint64_t k = 1; k <= 40; k++)
		mine[k - 1] = theirs[k - 1] = k << 58;
	theirs[39] += 1;
	ni = neg_new(mine, 40);
	nr = neg_new(theirs, 40);
	dcbor_buf_init(&msg);
	dcbor_buf_init(&reply);
	dcbor_buf_init(&last);
	neg_initiate(ni, &msg);
	recon_neg_put(ex_new("recon_neg_first"), 0, EX_SID, msg.data,
	    msg.len, NULL, 0);
	/* The responder lists its items where the fingerprints differ. */
	ck_assert_int_eq(neg_reply(nr, msg.data, msg.len, &reply, &have,
	    &need), 0);
	ck_assert_uint_eq(have.n, 0);
	ck_assert_uint_eq(need.n, 0);
	recon_neg_put(ex_new("recon_neg_reply"), 0, EX_SID, reply.data,
	    reply.len, NULL, 0);
	/*
	 * The initiator: it sends mine[39]'s record, has nothing left to say
	 * (all skips) and wants theirs[39].
	 */
	ck_assert_int_eq(neg_reply(ni, reply.data, reply.len, &last, &have2,
	    &need2), 0);
	ck_assert_uint_eq(last.len, 0);
	ck_assert_uint_eq(have2.n, 1);
	ck_assert_uint_eq(have2.v[0], mine[39]);
	ck_assert_uint_eq(need2.n, 1);
	ck_assert_uint_eq(need2.v[0], theirs[39]);
	recon_end_put(ex_new("recon_end_want"), EX_SID, 1, false, need2.v,
	    need2.n);
	dcbor_buf_free(&msg);
	dcbor_buf_free(&reply);
	dcbor_buf_free(&last);
	neg_ids_free(&have);
	neg_ids_free(&need);
	neg_ids_free(&have2);
	neg_ids_free(&need2);
	neg_free(ni);
	neg_free(nr);
}

/*
 * A's answers to B's claim (epoch 1) on the entry: direct, and relayed
 * (the vote bytes A signs, its signature, the relay body); the IHAVE and
 * GRAFT of the rumor's rid and the PRUNE of A's tree.
 */
static void
answer_examples(const struct identity *a, const struct identity *b,
    const uint8_t eid[ENTRY_ID_LEN], uint64_t rid)
{
	uint8_t sig[IDENTITY_SIG_LEN];
	uint64_t ids[2] = { rid, 3 };
	struct dcbor_buf *out;

	vote_ack_put(ex_new("claim_ack_body"), true, eid, 1);
	out = ex_new("vote_signed_bytes");
	vote_signing_bytes(out, true, eid, 1, b->id);
	ck_assert_int_eq(identity_sign(a, out->data, out->len, sig), 0);
	ex_bytes("vote_sig", sig, sizeof(sig));
	vote_relay_put(ex_new("claim_ack_relay_body"), true, a->pub, sig,
	    EX_HOPS, eid, 1, b->id);
	plumtree_ids_put(ex_new("ihave_body"), ids, 1);
	plumtree_ids_put(ex_new("graft_body"), ids, 2);
	plumtree_prune_put(ex_new("prune_body"), &a->node, 1);
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
	uint64_t dig[DIGEST_BUCKETS], rid;
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
	dtls_examples(&a, &b);

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
	rid = rumor_rid(items.data, items.len);
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
	space_digest(sp, DIGEST_BUCKETS, dig);
	bucket = space_bucket_of(eid, DIGEST_BUCKETS);
	ck_assert_uint_eq(bucket, eid[3] & 63);
	{
		const uint8_t *rm = rec_map(r);

		ex_bytes("digest_rec_map", rm, rec_map_len);
		ck_assert_uint_eq(dig[bucket], XXH3_64bits(rm, rec_map_len));
	}
	out = ex_new("digest_body");
	dcbor_put_map(out, 1);
	dcbor_put_cstr(out, "b");
	dcbor_put_array(out, DIGEST_BUCKETS);
	for (size_t i = 0; i < DIGEST_BUCKETS; i++)
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
	answer_examples(&a, &b, eid, rid);
	riblt_examples(dig[bucket]);
	neg_examples(dig[bucket]);
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

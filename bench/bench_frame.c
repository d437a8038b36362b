/*
 * bench_frame.c: the Frame family (the seed's WireCodecBenchmark): a
 * complete signed wire frame, encode plus sign (frame_encode) and decode
 * plus verify (frame_open), with a body of 256 B, 4 KiB and 64 KiB.
 *
 * The body is one CBOR byte string of that many bytes (so the encoded body
 * is 3 or 5 bytes longer).  Ed25519 signs the envelope, which is the body
 * plus about 130 bytes of header fields, so the like-for-like floor is raw
 * OpenSSL over the *envelope* bytes: the sign_raw_env_* and verify_raw_env_*
 * rows do exactly what Crypto.ed25519_{sign,verify}_raw_* do (one reused
 * EVP_MD_CTX, EVP_DigestSignInit / EVP_DigestVerifyInit with the key, then
 * the one-shot EVP_DigestSign / EVP_DigestVerify) over a copy of the
 * frame's own envelope, with the same key.  The encode_sign and
 * decode_verify rows name those as baselines.  The _vs_msg256 rows repeat
 * the 256-byte rows against Crypto's 256-byte message, the figure an
 * issue quoting "raw sign of 256 bytes" would compare with.
 *
 * decode_verify goes through identity_verify's cache of parsed keys, as
 * every frame from a known sender does; it also pays SHA-256 of the key
 * (from == SHA-256(key)) and the two-pass decode.
 *
 * The MAC'd frame of a keyed TCP link (docs/protocol.md section 2):
 * encode_mac (frame_encode_mac, HMAC-SHA256 of the same envelope under a
 * direction key) and decode_mac (frame_open_keyed: the decode, the MAC
 * check, from == the link's peer), each against the raw Ed25519 row it
 * replaces; hop_sig (encode_sign then decode_verify: one frame's whole
 * cost over one hop, sender and receiver) and hop_mac (encode_mac then
 * decode_mac), the latter against the former.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "bench.h"
#include "dcbor.h"
#include "frame.h"
#include "hlc.h"
#include "identity.h"
#include "linkkey.h"

struct frame_state {
	struct identity		 ident;
	struct hlc_stamp	 stamp;
	uint8_t			 to[IDENTITY_ID_LEN];
	struct dcbor_buf	 body;	/* one encoded CBOR bstr */
	struct dcbor_buf	 out;	/* frame_encode's output, reused */
	uint8_t			*wire;	/* one encoded frame, no prefix */
	size_t			 wire_len;
	uint8_t			*env;	/* a copy of its envelope bytes */
	size_t			 env_len;
	uint8_t			 sig[IDENTITY_SIG_LEN];
	struct linkkey_mac	 mac;	/* a direction key, for the mac rows */
	uint8_t			*mwire;	/* the same frame MAC'd, no prefix */
	size_t			 mwire_len;
	/* the raw rows: their own key objects and context, as Crypto's */
	EVP_PKEY		*priv;
	EVP_PKEY		*pub;
	EVP_MD_CTX		*mctx;
};

static void
frame_teardown(void *state)
{
	struct frame_state *st = state;

	identity_free(&st->ident);
	dcbor_buf_free(&st->body);
	dcbor_buf_free(&st->out);
	free(st->wire);
	free(st->env);
	free(st->mwire);
	linkkey_mac_free(&st->mac);
	EVP_PKEY_free(st->priv);
	EVP_PKEY_free(st->pub);
	EVP_MD_CTX_free(st->mctx);
	free(st);
}

static int
frame_setup(void **state, size_t param)
{
	struct frame_state *st;
	struct frame f;
	uint8_t seed[IDENTITY_SEED_LEN], *data;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	dcbor_buf_init(&st->body);
	dcbor_buf_init(&st->out);
	bench_fill(seed, sizeof(seed), 21);
	bench_fill(st->to, sizeof(st->to), 22);
	if (identity_from_seed(&st->ident, seed) == -1)
		return -1;
	st->stamp.phys = 1764480000000ull;
	st->stamp.logical = 3;
	st->stamp.node = st->ident.node;
	if ((data = malloc(param)) == NULL)
		return -1;
	bench_fill(data, param, 23);
	dcbor_put_bytes(&st->body, data, param);
	free(data);

	if (frame_encode(&st->out, &st->ident, FRAME_RUMOR, "bench-group",
	    st->to, &st->stamp, st->body.data, st->body.len,
	    FRAME_MAX_DEFAULT) == -1)
		return -1;
	st->wire_len = st->out.len - FRAME_LEN_PREFIX;
	if ((st->wire = malloc(st->wire_len)) == NULL)
		return -1;
	memcpy(st->wire, st->out.data + FRAME_LEN_PREFIX, st->wire_len);
	if (frame_open(st->wire, st->wire_len, &f) != FRAME_OK)
		return -1;
	st->env_len = f.env_len;
	if ((st->env = malloc(st->env_len)) == NULL)
		return -1;
	memcpy(st->env, f.env, f.env_len);
	memcpy(st->sig, f.sig, IDENTITY_SIG_LEN);

	bench_fill(seed, sizeof(seed), 24);	/* the direction key */
	dcbor_buf_reset(&st->out);
	if (linkkey_mac_init(&st->mac, seed) == -1 ||
	    frame_encode_mac(&st->out, &st->ident, &st->mac, FRAME_RUMOR,
	    "bench-group", st->to, &st->stamp, st->body.data, st->body.len, 0,
	    FRAME_MAX_DEFAULT) == -1)
		return -1;
	st->mwire_len = st->out.len - FRAME_LEN_PREFIX;
	if ((st->mwire = malloc(st->mwire_len)) == NULL)
		return -1;
	memcpy(st->mwire, st->out.data + FRAME_LEN_PREFIX, st->mwire_len);
	if (frame_open_keyed(st->mwire, st->mwire_len, &f, st->ident.id,
	    &st->mac) != FRAME_OK)
		return -1;
	bench_fill(seed, sizeof(seed), 21);

	st->priv = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed,
	    sizeof(seed));
	st->pub = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL,
	    st->ident.pub, IDENTITY_PUB_LEN);
	st->mctx = EVP_MD_CTX_new();
	if (st->priv == NULL || st->pub == NULL || st->mctx == NULL)
		return -1;
	return 0;
}

static int
run_encode_sign(void *state, uint64_t n)
{
	struct frame_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->out);
		if (frame_encode(&st->out, &st->ident, FRAME_RUMOR,
		    "bench-group", st->to, &st->stamp, st->body.data,
		    st->body.len, FRAME_MAX_DEFAULT) == -1)
			return -1;
		acc += st->out.data[st->out.len - 1];
	}
	bench_consume(acc);
	return 0;
}

static int
run_decode_verify(void *state, uint64_t n)
{
	struct frame_state *st = state;
	struct frame f;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->wire);
		if (frame_open(st->wire, st->wire_len, &f) != FRAME_OK)
			return -1;
		acc += f.body_len;
	}
	bench_consume(acc);
	return 0;
}

static int
run_encode_mac(void *state, uint64_t n)
{
	struct frame_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->out);
		if (frame_encode_mac(&st->out, &st->ident, &st->mac,
		    FRAME_RUMOR, "bench-group", st->to, &st->stamp,
		    st->body.data, st->body.len, 0, FRAME_MAX_DEFAULT) == -1)
			return -1;
		acc += st->out.data[st->out.len - 1];
	}
	bench_consume(acc);
	return 0;
}

static int
run_decode_mac(void *state, uint64_t n)
{
	struct frame_state *st = state;
	struct frame f;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		bench_escape(st->mwire);
		if (frame_open_keyed(st->mwire, st->mwire_len, &f,
		    st->ident.id, &st->mac) != FRAME_OK)
			return -1;
		acc += f.body_len;
	}
	bench_consume(acc);
	return 0;
}

/* One frame over one hop, signed: the sender's encode, the receiver's open. */
static int
run_hop_sig(void *state, uint64_t n)
{
	return run_encode_sign(state, n) == -1 ? -1 :
	    run_decode_verify(state, n);
}

/* The same, MAC'd. */
static int
run_hop_mac(void *state, uint64_t n)
{
	return run_encode_mac(state, n) == -1 ? -1 : run_decode_mac(state, n);
}

/* As Crypto's sign_once, over the envelope. */
static int
run_sign_raw_env(void *state, uint64_t n)
{
	struct frame_state *st = state;
	uint8_t sig[IDENTITY_SIG_LEN];
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t siglen = sizeof(sig);

		if (EVP_DigestSignInit(st->mctx, NULL, NULL, NULL,
		    st->priv) != 1 ||
		    EVP_DigestSign(st->mctx, sig, &siglen, st->env,
		    st->env_len) != 1 || siglen != sizeof(sig))
			return -1;
		acc += sig[0];
	}
	bench_consume(acc);
	return 0;
}

/* As Crypto's verify_once, over the envelope. */
static int
run_verify_raw_env(void *state, uint64_t n)
{
	struct frame_state *st = state;

	for (uint64_t i = 0; i < n; i++)
		if (EVP_DigestVerifyInit(st->mctx, NULL, NULL, NULL,
		    st->pub) != 1 ||
		    EVP_DigestVerify(st->mctx, st->sig, IDENTITY_SIG_LEN,
		    st->env, st->env_len) != 1)
			return -1;
	bench_consume(n);
	return 0;
}

#define ROW(name, base, size, fn) \
	{ "Frame." name, base, size, frame_setup, fn, frame_teardown, NULL }

static const struct bench_row frame_rows[] = {
	ROW("sign_raw_env_256", NULL, 256, run_sign_raw_env),
	ROW("verify_raw_env_256", NULL, 256, run_verify_raw_env),
	ROW("encode_sign_256", "Frame.sign_raw_env_256", 256,
	    run_encode_sign),
	ROW("decode_verify_256", "Frame.verify_raw_env_256", 256,
	    run_decode_verify),
	ROW("encode_sign_256_vs_msg256", "Crypto.ed25519_sign_raw_256", 256,
	    run_encode_sign),
	ROW("decode_verify_256_vs_msg256", "Crypto.ed25519_verify_raw_256",
	    256, run_decode_verify),
	ROW("encode_mac_256", "Frame.sign_raw_env_256", 256, run_encode_mac),
	ROW("decode_mac_256", "Frame.verify_raw_env_256", 256, run_decode_mac),
	ROW("hop_sig_256", NULL, 256, run_hop_sig),
	ROW("hop_mac_256", "Frame.hop_sig_256", 256, run_hop_mac),
	ROW("sign_raw_env_4k", NULL, 4096, run_sign_raw_env),
	ROW("verify_raw_env_4k", NULL, 4096, run_verify_raw_env),
	ROW("encode_sign_4k", "Frame.sign_raw_env_4k", 4096, run_encode_sign),
	ROW("decode_verify_4k", "Frame.verify_raw_env_4k", 4096,
	    run_decode_verify),
	ROW("encode_mac_4k", "Frame.sign_raw_env_4k", 4096, run_encode_mac),
	ROW("decode_mac_4k", "Frame.verify_raw_env_4k", 4096, run_decode_mac),
	ROW("hop_sig_4k", NULL, 4096, run_hop_sig),
	ROW("hop_mac_4k", "Frame.hop_sig_4k", 4096, run_hop_mac),
	ROW("sign_raw_env_64k", NULL, 65536, run_sign_raw_env),
	ROW("verify_raw_env_64k", NULL, 65536, run_verify_raw_env),
	ROW("encode_sign_64k", "Frame.sign_raw_env_64k", 65536,
	    run_encode_sign),
	ROW("decode_verify_64k", "Frame.verify_raw_env_64k", 65536,
	    run_decode_verify),
	ROW("encode_mac_64k", "Frame.sign_raw_env_64k", 65536, run_encode_mac),
	ROW("decode_mac_64k", "Frame.verify_raw_env_64k", 65536,
	    run_decode_mac),
	ROW("hop_sig_64k", NULL, 65536, run_hop_sig),
	ROW("hop_mac_64k", "Frame.hop_sig_64k", 65536, run_hop_mac),
};

const struct bench_family bench_family_frame = {
	"Frame", frame_rows, BENCH_NROWS(frame_rows)
};

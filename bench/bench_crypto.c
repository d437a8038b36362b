/*
 * bench_crypto.c: the Crypto family (the seed's CryptoBenchmark): SHA-256,
 * Ed25519 sign and verify, AES-256-GCM seal and open, at 256 B, 4 KiB and
 * 64 KiB, straight on OpenSSL 3 EVP.
 *
 * These are the floors: everything that can be made once is made in setup
 * (fetched EVP_MD and EVP_CIPHER, the EVP_PKEYs, reused contexts), so a row
 * is the per-operation cost of the primitive itself.  The _raw_ rows keep
 * stable names because the identity, frame and seal rows name them as
 * baselines; do not rename them.  sha256_256_implicit_fetch shows what
 * passing EVP_sha256() costs per call in OpenSSL 3 (an implicit fetch)
 * against the pre-fetched digest.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "bench.h"

#define SIG_LEN		64
#define GCM_KEY_LEN	32
#define GCM_NONCE_LEN	12
#define GCM_TAG_LEN	16

struct crypto_state {
	size_t		 len;
	uint8_t		*msg;
	uint8_t		*out;		/* ciphertext / plaintext out */
	uint8_t		*sealed;	/* msg sealed under nonce0 */
	uint8_t		 tag[GCM_TAG_LEN];	/* sealed's tag */
	uint8_t		 sig[SIG_LEN];	/* msg's signature */
	uint8_t		 nonce0[GCM_NONCE_LEN];
	EVP_MD		*sha256;
	EVP_PKEY	*priv;
	EVP_PKEY	*pub;		/* the public half, from raw bytes */
	EVP_MD_CTX	*mctx;
	EVP_CIPHER	*gcm;
	EVP_CIPHER_CTX	*enc;
	EVP_CIPHER_CTX	*dec;
};

static void
crypto_teardown(void *state)
{
	struct crypto_state *st = state;

	EVP_CIPHER_CTX_free(st->enc);
	EVP_CIPHER_CTX_free(st->dec);
	EVP_CIPHER_free(st->gcm);
	EVP_MD_CTX_free(st->mctx);
	EVP_PKEY_free(st->priv);
	EVP_PKEY_free(st->pub);
	EVP_MD_free(st->sha256);
	free(st->msg);
	free(st->out);
	free(st->sealed);
	free(st);
}

static int
sign_once(struct crypto_state *st, uint8_t sig[SIG_LEN])
{
	size_t siglen = SIG_LEN;

	if (EVP_DigestSignInit(st->mctx, NULL, NULL, NULL, st->priv) != 1 ||
	    EVP_DigestSign(st->mctx, sig, &siglen, st->msg, st->len) != 1 ||
	    siglen != SIG_LEN)
		return -1;
	return 0;
}

static int
verify_once(struct crypto_state *st)
{
	if (EVP_DigestVerifyInit(st->mctx, NULL, NULL, NULL, st->pub) != 1 ||
	    EVP_DigestVerify(st->mctx, st->sig, SIG_LEN, st->msg,
	    st->len) != 1)
		return -1;
	return 0;
}

static int
seal_once(struct crypto_state *st, const uint8_t nonce[GCM_NONCE_LEN],
    uint8_t *ct, uint8_t tag[GCM_TAG_LEN])
{
	int outl, finl;

	if (EVP_EncryptInit_ex(st->enc, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_EncryptUpdate(st->enc, ct, &outl, st->msg,
	    (int)st->len) != 1 ||
	    EVP_EncryptFinal_ex(st->enc, ct + outl, &finl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(st->enc, EVP_CTRL_GCM_GET_TAG, GCM_TAG_LEN,
	    tag) != 1)
		return -1;
	return 0;
}

static int
open_once(struct crypto_state *st)
{
	int outl, finl;

	if (EVP_DecryptInit_ex(st->dec, NULL, NULL, NULL, st->nonce0) != 1 ||
	    EVP_DecryptUpdate(st->dec, st->out, &outl, st->sealed,
	    (int)st->len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(st->dec, EVP_CTRL_GCM_SET_TAG, GCM_TAG_LEN,
	    st->tag) != 1 ||
	    EVP_DecryptFinal_ex(st->dec, st->out + outl, &finl) != 1)
		return -1;
	return 0;
}

/* Everything every Crypto row needs, for a message of param bytes. */
static int
crypto_setup(void **state, size_t param)
{
	struct crypto_state *st;
	uint8_t seed[32], pub[32], key[GCM_KEY_LEN];
	size_t publen = sizeof(pub);

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	st->len = param;
	st->msg = malloc(param);
	st->out = malloc(param + GCM_TAG_LEN);
	st->sealed = malloc(param + GCM_TAG_LEN);
	if (st->msg == NULL || st->out == NULL || st->sealed == NULL)
		return -1;
	bench_fill(st->msg, param, 7);
	bench_fill(seed, sizeof(seed), 8);
	bench_fill(key, sizeof(key), 9);
	bench_fill(st->nonce0, sizeof(st->nonce0), 10);

	st->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	st->priv = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed,
	    sizeof(seed));
	if (st->sha256 == NULL || st->priv == NULL ||
	    EVP_PKEY_get_raw_public_key(st->priv, pub, &publen) != 1)
		return -1;
	st->pub = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub,
	    publen);
	st->mctx = EVP_MD_CTX_new();
	st->gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	st->enc = EVP_CIPHER_CTX_new();
	st->dec = EVP_CIPHER_CTX_new();
	if (st->pub == NULL || st->mctx == NULL || st->gcm == NULL ||
	    st->enc == NULL || st->dec == NULL)
		return -1;
	/* The key schedule is per group key, not per message: set it once. */
	if (EVP_EncryptInit_ex(st->enc, st->gcm, NULL, key, NULL) != 1 ||
	    EVP_DecryptInit_ex(st->dec, st->gcm, NULL, key, NULL) != 1)
		return -1;
	if (sign_once(st, st->sig) == -1 || verify_once(st) == -1 ||
	    seal_once(st, st->nonce0, st->sealed, st->tag) == -1 ||
	    open_once(st) == -1 || memcmp(st->out, st->msg, param) != 0)
		return -1;
	return 0;
}

static int
run_sha256(void *state, uint64_t n)
{
	struct crypto_state *st = state;
	uint8_t md[32];
	unsigned int mdlen;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (EVP_Digest(st->msg, st->len, md, &mdlen, st->sha256,
		    NULL) != 1)
			return -1;
		acc += md[0];
	}
	bench_consume(acc);
	return 0;
}

static int
run_sha256_implicit(void *state, uint64_t n)
{
	struct crypto_state *st = state;
	uint8_t md[32];
	unsigned int mdlen;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (EVP_Digest(st->msg, st->len, md, &mdlen, EVP_sha256(),
		    NULL) != 1)
			return -1;
		acc += md[0];
	}
	bench_consume(acc);
	return 0;
}

static int
run_sign(void *state, uint64_t n)
{
	struct crypto_state *st = state;
	uint8_t sig[SIG_LEN];
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (sign_once(st, sig) == -1)
			return -1;
		acc += sig[0];
	}
	bench_consume(acc);
	return 0;
}

static int
run_verify(void *state, uint64_t n)
{
	struct crypto_state *st = state;

	for (uint64_t i = 0; i < n; i++)
		if (verify_once(st) == -1)
			return -1;
	bench_consume(n);
	return 0;
}

/* A fresh nonce per message (a counter), as a sender must. */
static int
run_seal(void *state, uint64_t n)
{
	struct crypto_state *st = state;
	uint8_t nonce[GCM_NONCE_LEN], tag[GCM_TAG_LEN];
	uint64_t acc = 0;

	memcpy(nonce, st->nonce0, sizeof(nonce));
	for (uint64_t i = 0; i < n; i++) {
		memcpy(nonce + 4, &i, sizeof(i));
		if (seal_once(st, nonce, st->out, tag) == -1)
			return -1;
		acc += tag[0];
	}
	bench_consume(acc);
	return 0;
}

static int
run_open(void *state, uint64_t n)
{
	struct crypto_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (open_once(st) == -1)
			return -1;
		acc += st->out[0];
	}
	bench_consume(acc);
	return 0;
}

#define ROW(name, base, size, fn) \
	{ "Crypto." name, base, size, crypto_setup, fn, crypto_teardown, \
	    NULL }

static const struct bench_row crypto_rows[] = {
	ROW("sha256_256", NULL, 256, run_sha256),
	ROW("sha256_256_implicit_fetch", "Crypto.sha256_256", 256,
	    run_sha256_implicit),
	ROW("sha256_4k", NULL, 4096, run_sha256),
	ROW("sha256_64k", NULL, 65536, run_sha256),
	ROW("ed25519_sign_raw_256", NULL, 256, run_sign),
	ROW("ed25519_sign_raw_4k", NULL, 4096, run_sign),
	ROW("ed25519_sign_raw_64k", NULL, 65536, run_sign),
	ROW("ed25519_verify_raw_256", NULL, 256, run_verify),
	ROW("ed25519_verify_raw_4k", NULL, 4096, run_verify),
	ROW("ed25519_verify_raw_64k", NULL, 65536, run_verify),
	ROW("aes256gcm_seal_raw_256", NULL, 256, run_seal),
	ROW("aes256gcm_seal_raw_4k", NULL, 4096, run_seal),
	ROW("aes256gcm_seal_raw_64k", NULL, 65536, run_seal),
	ROW("aes256gcm_open_raw_256", NULL, 256, run_open),
	ROW("aes256gcm_open_raw_4k", NULL, 4096, run_open),
	ROW("aes256gcm_open_raw_64k", NULL, 65536, run_open),
};

const struct bench_family bench_family_crypto = {
	"Crypto", crypto_rows, BENCH_NROWS(crypto_rows)
};

/*
 * linkkey.c: a TCP link's X25519 key agreement, its HKDF-SHA256
 * derivation and its HMAC-SHA256 (see linkkey.h), on OpenSSL 3 EVP.
 *
 * The MAC sits on the path of every frame, so the key is hashed once per
 * direction when the link comes up: HMAC's inner and outer SHA-256 states
 * (after the key XOR ipad and XOR opad blocks, RFC 2104) are kept, and a
 * frame's MAC copies them and hashes only the message and the inner digest.
 * That is SHA256_Init/Update/Final on a SHA256_CTX, deprecated in OpenSSL
 * 3 but the same code EVP's SHA-256 runs: OpenSSL 3.0's EVP_MAC re-armed
 * per frame (EVP_MAC_init with no key) copied its digest contexts through
 * EVP_MD_CTX_copy_ex (an allocation and a free per frame) and built
 * OSSL_PARAMs in EVP_MAC_final, ~150 ns a frame more than the two states
 * copied here (build/bench Wire.mac_*).  Secrets (the ephemeral private
 * key, the shared secret, the HKDF output, the key pads, the per-frame
 * state copies) are wiped with OPENSSL_cleanse as soon as they are used.
 */
#define OPENSSL_SUPPRESS_DEPRECATED	/* SHA256_CTX: see above */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/sha.h>

#include "linkkey.h"
#include "xmalloc.h"

/* A direction key's precomputed HMAC-SHA256 states. */
struct linkkey_states {
	SHA256_CTX	inner;		/* after (key ^ ipad) */
	SHA256_CTX	outer;		/* after (key ^ opad) */
};

static int
linkkey_eph_fill(struct linkkey_eph *e, EVP_PKEY *pkey)
{
	size_t len = LINKKEY_PUB_LEN;

	if (pkey == NULL)
		return -1;
	if (EVP_PKEY_get_raw_public_key(pkey, e->pub, &len) != 1 ||
	    len != LINKKEY_PUB_LEN) {
		EVP_PKEY_free(pkey);
		return -1;
	}
	e->pkey = pkey;
	return 0;
}

int
linkkey_eph_new(struct linkkey_eph *e)
{
	memset(e, 0, sizeof(*e));
	return linkkey_eph_fill(e, EVP_PKEY_Q_keygen(NULL, NULL, "X25519"));
}

int
linkkey_eph_from_private(struct linkkey_eph *e,
    const uint8_t priv[LINKKEY_PRIV_LEN])
{
	memset(e, 0, sizeof(*e));
	return linkkey_eph_fill(e, EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519,
	    NULL, priv, LINKKEY_PRIV_LEN));
}

void
linkkey_eph_free(struct linkkey_eph *e)
{
	/* EVP_PKEY_free wipes the private key (ecx_key_free cleanses it). */
	EVP_PKEY_free(e->pkey);
	memset(e, 0, sizeof(*e));
}

/* ikm = X25519(mine, theirs) into secret. 0 or -1 (a low-order point). */
static int
linkkey_shared(const struct linkkey_eph *mine,
    const uint8_t their_pub[LINKKEY_PUB_LEN], uint8_t secret[32])
{
	static const uint8_t zero[32];
	EVP_PKEY *peer;
	EVP_PKEY_CTX *ctx = NULL;
	size_t len = 32;
	int rc = -1;

	if (mine->pkey == NULL || (peer = EVP_PKEY_new_raw_public_key(
	    EVP_PKEY_X25519, NULL, their_pub, LINKKEY_PUB_LEN)) == NULL)
		return -1;
	if ((ctx = EVP_PKEY_CTX_new(mine->pkey, NULL)) != NULL &&
	    EVP_PKEY_derive_init(ctx) == 1 &&
	    EVP_PKEY_derive_set_peer(ctx, peer) == 1 &&
	    EVP_PKEY_derive(ctx, secret, &len) == 1 && len == 32 &&
	    CRYPTO_memcmp(secret, zero, 32) != 0)
		rc = 0;
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(peer);
	return rc;
}

/* HKDF-SHA256(ikm, salt, info) -> out[outlen]. 0 or -1. */
static int
linkkey_hkdf(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt,
    size_t salt_len, const uint8_t *info, size_t info_len, uint8_t *out,
    size_t outlen)
{
	EVP_KDF *kdf;
	EVP_KDF_CTX *kctx = NULL;
	OSSL_PARAM params[5];
	int rc = -1;

	if ((kdf = EVP_KDF_fetch(NULL, "HKDF", NULL)) == NULL)
		return -1;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
	    (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
	    (void *)(uintptr_t)ikm, ikm_len);
	params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
	    (void *)(uintptr_t)salt, salt_len);
	params[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
	    (void *)(uintptr_t)info, info_len);
	params[4] = OSSL_PARAM_construct_end();
	if ((kctx = EVP_KDF_CTX_new(kdf)) != NULL &&
	    EVP_KDF_derive(kctx, out, outlen, params) == 1)
		rc = 0;
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	return rc;
}

int
linkkey_derive(const struct linkkey_eph *mine,
    const uint8_t their_pub[LINKKEY_PUB_LEN],
    const uint8_t my_id[LINKKEY_ID_LEN],
    const uint8_t my_nonce[LINKKEY_NONCE_LEN],
    const uint8_t their_id[LINKKEY_ID_LEN],
    const uint8_t their_nonce[LINKKEY_NONCE_LEN],
    uint8_t tx[LINKKEY_LEN], uint8_t rx[LINKKEY_LEN])
{
	uint8_t secret[32], salt[2 * LINKKEY_NONCE_LEN], okm[2 * LINKKEY_LEN];
	uint8_t info[sizeof(LINKKEY_LABEL) - 1 + 2 * LINKKEY_ID_LEN];
	const size_t lab = sizeof(LINKKEY_LABEL) - 1;
	int c = memcmp(my_id, their_id, LINKKEY_ID_LEN), rc = -1;
	bool lower = c < 0;

	memset(tx, 0, LINKKEY_LEN);
	memset(rx, 0, LINKKEY_LEN);
	if (c == 0 || linkkey_shared(mine, their_pub, secret) == -1)
		return -1;
	memcpy(salt, lower ? my_nonce : their_nonce, LINKKEY_NONCE_LEN);
	memcpy(salt + LINKKEY_NONCE_LEN, lower ? their_nonce : my_nonce,
	    LINKKEY_NONCE_LEN);
	memcpy(info, LINKKEY_LABEL, lab);
	memcpy(info + lab, lower ? my_id : their_id, LINKKEY_ID_LEN);
	memcpy(info + lab + LINKKEY_ID_LEN, lower ? their_id : my_id,
	    LINKKEY_ID_LEN);
	if (linkkey_hkdf(secret, sizeof(secret), salt, sizeof(salt), info,
	    sizeof(info), okm, sizeof(okm)) == 0) {
		/* okm: the lower id's sending key, then the higher id's. */
		memcpy(tx, okm + (lower ? 0 : LINKKEY_LEN), LINKKEY_LEN);
		memcpy(rx, okm + (lower ? LINKKEY_LEN : 0), LINKKEY_LEN);
		rc = 0;
	}
	OPENSSL_cleanse(secret, sizeof(secret));
	OPENSSL_cleanse(okm, sizeof(okm));
	return rc;
}

int
linkkey_mac_init(struct linkkey_mac *m, const uint8_t key[LINKKEY_LEN])
{
	struct linkkey_states *st;
	uint8_t ipad[SHA256_CBLOCK], opad[SHA256_CBLOCK];
	int ok;

	m->ctx = NULL;
	/* The key is shorter than a block: zero-padded, never hashed. */
	memset(ipad, 0x36, sizeof(ipad));
	memset(opad, 0x5c, sizeof(opad));
	for (size_t i = 0; i < LINKKEY_LEN; i++) {
		ipad[i] ^= key[i];
		opad[i] ^= key[i];
	}
	st = xmalloc(sizeof(*st));
	ok = SHA256_Init(&st->inner) == 1 &&
	    SHA256_Update(&st->inner, ipad, sizeof(ipad)) == 1 &&
	    SHA256_Init(&st->outer) == 1 &&
	    SHA256_Update(&st->outer, opad, sizeof(opad)) == 1;
	OPENSSL_cleanse(ipad, sizeof(ipad));
	OPENSSL_cleanse(opad, sizeof(opad));
	if (!ok) {
		OPENSSL_cleanse(st, sizeof(*st));
		free(st);
		return -1;
	}
	m->ctx = st;
	return 0;
}

void
linkkey_mac_free(struct linkkey_mac *m)
{
	if (m->ctx != NULL) {
		OPENSSL_cleanse(m->ctx, sizeof(struct linkkey_states));
		free(m->ctx);
	}
	m->ctx = NULL;
}

int
linkkey_mac(const struct linkkey_mac *m, const void *msg, size_t len,
    uint8_t out[LINKKEY_MAC_LEN])
{
	const struct linkkey_states *st = m->ctx;
	uint8_t ih[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;
	int ok;

	if (st == NULL)
		return -1;
	c = st->inner;
	ok = SHA256_Update(&c, msg, len) == 1 && SHA256_Final(ih, &c) == 1;
	c = st->outer;
	ok = ok && SHA256_Update(&c, ih, sizeof(ih)) == 1 &&
	    SHA256_Final(out, &c) == 1;
	OPENSSL_cleanse(&c, sizeof(c));
	OPENSSL_cleanse(ih, sizeof(ih));
	return ok ? 0 : -1;
}

int
linkkey_mac_check(const struct linkkey_mac *m, const void *msg, size_t len,
    const uint8_t mac[LINKKEY_MAC_LEN])
{
	uint8_t want[LINKKEY_MAC_LEN];
	int rc;

	if (linkkey_mac(m, msg, len, want) == -1)
		return -1;
	rc = CRYPTO_memcmp(want, mac, LINKKEY_MAC_LEN) == 0 ? 0 : -1;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

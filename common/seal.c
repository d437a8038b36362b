/*
 * seal.c: AES-256-GCM seal and open under a counted group key (see
 * seal.h), on OpenSSL 3 EVP.  Lengths cross into OpenSSL as int, so the
 * inputs are bounded by INT_MAX here before any call.
 *
 * Each key keeps two EVP_CIPHER_CTX keyed at seal_key_init; a call re-arms
 * one with Init(ctx, NULL, NULL, NULL, nonce), which keeps the cipher and
 * the key schedule and resets the GCM state.  A context is never pointed at
 * another key (identity.c's note: OpenSSL 3.0 may keep the old key when an
 * Init call passes a different one), so none is re-keyed here: a new key
 * gets new contexts.  Without contexts (a key made by hand, or an
 * allocation failure) a call builds a fresh one, as before.
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "log.h"
#include "seal.h"

/* A new context keyed with key for encrypting (enc 1) or decrypting. */
static EVP_CIPHER_CTX *
ctx_keyed(const uint8_t *key, int enc)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (ctx == NULL)
		return NULL;
	if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL,
	    enc) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		ERR_clear_error();
		return NULL;
	}
	return ctx;
}

void
seal_key_init(struct seal_key *k, const uint8_t key[SEAL_KEY_LEN])
{
	memset(k, 0, sizeof(*k));
	memcpy(k->key, key, SEAL_KEY_LEN);
	k->ectx = ctx_keyed(k->key, 1);
	k->dctx = ctx_keyed(k->key, 0);
}

void
seal_key_clear(struct seal_key *k)
{
	/* Freeing a context cleanses its key schedule. */
	EVP_CIPHER_CTX_free(k->ectx);
	EVP_CIPHER_CTX_free(k->dctx);
	OPENSSL_cleanse(k, sizeof(*k));
}

/* The next random nonce; 0, or -1 when RAND_bytes fails. */
static int
nonce_next(struct seal_key *k, uint8_t out[SEAL_NONCE_LEN])
{
	long pid = (long)getpid();
	uint8_t *p;

	if (k->pool_left == 0 || k->pool_left > SEAL_NONCE_POOL ||
	    k->pool_pid != pid) {
		OPENSSL_cleanse(k->pool, sizeof(k->pool));
		k->pool_left = 0;
		if (RAND_bytes(k->pool, sizeof(k->pool)) != 1) {
			ERR_clear_error();
			return -1;
		}
		k->pool_left = SEAL_NONCE_POOL;
		k->pool_pid = pid;
	}
	p = k->pool + (SEAL_NONCE_POOL - k->pool_left) * SEAL_NONCE_LEN;
	memcpy(out, p, SEAL_NONCE_LEN);
	OPENSSL_cleanse(p, SEAL_NONCE_LEN);
	k->pool_left--;
	return 0;
}

/*
 * Arm a context for one message under nonce: k's own (only the nonce is
 * set) or, failing that, a fresh one (*fresh set: the caller frees it).
 */
static EVP_CIPHER_CTX *
ctx_arm(EVP_CIPHER_CTX *own, const uint8_t *key, const uint8_t *nonce,
    int enc, bool *fresh)
{
	EVP_CIPHER_CTX *ctx = own;

	*fresh = false;
	if (ctx != NULL) {
		if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, enc) == 1)
			return ctx;
		ERR_clear_error();
		/* Leave k's context alone and go the slow way this once. */
	}
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return NULL;
	*fresh = true;
	if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce,
	    enc) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		ERR_clear_error();
		return NULL;
	}
	return ctx;
}

static void
ctx_done(EVP_CIPHER_CTX *ctx, bool fresh)
{
	if (fresh)
		EVP_CIPHER_CTX_free(ctx);
}

size_t
seal_ad(uint8_t *out, size_t outlen, const char *space,
    const uint8_t *entry_id, size_t id_len, const uint64_t *epoch)
{
	size_t slen = strlen(space), need = slen + id_len;

	if (epoch != NULL)
		need += 8;
	if (need > outlen)
		return need;
	memcpy(out, space, slen);
	if (id_len > 0)
		memcpy(out + slen, entry_id, id_len);
	if (epoch != NULL)
		for (int i = 0; i < 8; i++)
			out[slen + id_len + (size_t)i] =
			    (uint8_t)(*epoch >> (56 - 8 * i));
	return need;
}

int
seal_seal(struct seal_key *k, const uint8_t *ad, size_t adlen,
    const uint8_t *pt, size_t n, uint8_t *out, size_t outlen, size_t *outn)
{
	EVP_CIPHER_CTX *ctx;
	uint8_t *ct = out + SEAL_NONCE_LEN;
	int adl, len, fin;
	bool fresh;

	*outn = 0;
	if (n > INT_MAX - SEAL_OVERHEAD || adlen > INT_MAX ||
	    outlen < n + SEAL_OVERHEAD)
		return -1;
	if (k->seals >= SEAL_LIMIT) {
		log_warnx("seal: group key has made %llu seals; rotate it",
		    (unsigned long long)k->seals);
		return -1;
	}
	if (nonce_next(k, out) == -1)
		return -1;
	/* The nonce is spent from here on, whatever happens next. */
	if (++k->seals >= SEAL_WARN_AT && !k->warned) {
		k->warned = true;
		log_warnx("seal: group key has made %llu seals, refused at %llu",
		    (unsigned long long)k->seals,
		    (unsigned long long)SEAL_LIMIT);
	}
	if ((ctx = ctx_arm(k->ectx, k->key, out, 1, &fresh)) == NULL) {
		OPENSSL_cleanse(out, SEAL_NONCE_LEN);
		return -1;
	}
	if ((adlen > 0 && EVP_EncryptUpdate(ctx, NULL, &adl, ad,
	    (int)adlen) != 1) ||
	    EVP_EncryptUpdate(ctx, ct, &len, n > 0 ? pt : ct, (int)n) != 1 ||
	    EVP_EncryptFinal_ex(ctx, ct + len, &fin) != 1 ||
	    (size_t)len + (size_t)fin != n ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, SEAL_TAG_LEN,
	    ct + n) != 1) {
		ctx_done(ctx, fresh);
		ERR_clear_error();
		OPENSSL_cleanse(out, n + SEAL_OVERHEAD);
		return -1;
	}
	ctx_done(ctx, fresh);
	*outn = n + SEAL_OVERHEAD;
	return 0;
}

int
seal_open(const struct seal_key *k, const uint8_t *ad, size_t adlen,
    const uint8_t *in, size_t n, uint8_t *out, size_t outlen, size_t *outn)
{
	EVP_CIPHER_CTX *ctx;
	uint8_t tag[SEAL_TAG_LEN], empty[SEAL_TAG_LEN], *o;
	size_t ctlen;
	int adl, len = 0, fin;
	bool fresh;

	*outn = 0;
	if (n < SEAL_OVERHEAD || n > INT_MAX || adlen > INT_MAX)
		return -1;
	ctlen = n - SEAL_OVERHEAD;
	if (outlen < ctlen)
		return -1;
	/* An empty message may come with no buffer at all. */
	o = ctlen > 0 ? out : empty;
	memcpy(tag, in + n - SEAL_TAG_LEN, SEAL_TAG_LEN);
	if ((ctx = ctx_arm(k->dctx, k->key, in, 0, &fresh)) == NULL)
		return -1;
	if ((adlen > 0 && EVP_DecryptUpdate(ctx, NULL, &adl, ad,
	    (int)adlen) != 1) ||
	    (ctlen > 0 && EVP_DecryptUpdate(ctx, o, &len,
	    in + SEAL_NONCE_LEN, (int)ctlen) != 1) ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, SEAL_TAG_LEN,
	    tag) != 1 ||
	    EVP_DecryptFinal_ex(ctx, o + len, &fin) != 1 ||
	    (size_t)len + (size_t)fin != ctlen) {
		ctx_done(ctx, fresh);
		ERR_clear_error();
		OPENSSL_cleanse(o, ctlen);
		return -1;
	}
	ctx_done(ctx, fresh);
	*outn = ctlen;
	return 0;
}

/*
 * seal.c: AES-256-GCM seal and open under a counted group key (see
 * seal.h), on OpenSSL 3 EVP.  Lengths cross into OpenSSL as int, so the
 * inputs are bounded by INT_MAX here before any call.
 */
#include <limits.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "log.h"
#include "seal.h"

void
seal_key_init(struct seal_key *k, const uint8_t key[SEAL_KEY_LEN])
{
	memset(k, 0, sizeof(*k));
	memcpy(k->key, key, SEAL_KEY_LEN);
}

void
seal_key_clear(struct seal_key *k)
{
	OPENSSL_cleanse(k, sizeof(*k));
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

	*outn = 0;
	if (n > INT_MAX - SEAL_OVERHEAD || adlen > INT_MAX ||
	    outlen < n + SEAL_OVERHEAD)
		return -1;
	if (k->seals >= SEAL_LIMIT) {
		log_warnx("seal: group key has made %llu seals; rotate it",
		    (unsigned long long)k->seals);
		return -1;
	}
	if (RAND_bytes(out, SEAL_NONCE_LEN) != 1) {
		ERR_clear_error();
		return -1;
	}
	/* The nonce is spent from here on, whatever happens next. */
	if (++k->seals >= SEAL_WARN_AT && !k->warned) {
		k->warned = true;
		log_warnx("seal: group key has made %llu seals, refused at %llu",
		    (unsigned long long)k->seals,
		    (unsigned long long)SEAL_LIMIT);
	}
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, k->key,
	    out) != 1 ||
	    (adlen > 0 && EVP_EncryptUpdate(ctx, NULL, &adl, ad,
	    (int)adlen) != 1) ||
	    EVP_EncryptUpdate(ctx, ct, &len, n > 0 ? pt : ct, (int)n) != 1 ||
	    EVP_EncryptFinal_ex(ctx, ct + len, &fin) != 1 ||
	    (size_t)len + (size_t)fin != n ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, SEAL_TAG_LEN,
	    ct + n) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		ERR_clear_error();
		OPENSSL_cleanse(out, n + SEAL_OVERHEAD);
		return -1;
	}
	EVP_CIPHER_CTX_free(ctx);
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

	*outn = 0;
	if (n < SEAL_OVERHEAD || n > INT_MAX || adlen > INT_MAX)
		return -1;
	ctlen = n - SEAL_OVERHEAD;
	if (outlen < ctlen)
		return -1;
	/* An empty message may come with no buffer at all. */
	o = ctlen > 0 ? out : empty;
	memcpy(tag, in + n - SEAL_TAG_LEN, SEAL_TAG_LEN);
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, k->key,
	    in) != 1 ||
	    (adlen > 0 && EVP_DecryptUpdate(ctx, NULL, &adl, ad,
	    (int)adlen) != 1) ||
	    (ctlen > 0 && EVP_DecryptUpdate(ctx, o, &len,
	    in + SEAL_NONCE_LEN, (int)ctlen) != 1) ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, SEAL_TAG_LEN,
	    tag) != 1 ||
	    EVP_DecryptFinal_ex(ctx, o + len, &fin) != 1 ||
	    (size_t)len + (size_t)fin != ctlen) {
		EVP_CIPHER_CTX_free(ctx);
		ERR_clear_error();
		OPENSSL_cleanse(o, ctlen);
		return -1;
	}
	EVP_CIPHER_CTX_free(ctx);
	*outn = ctlen;
	return 0;
}

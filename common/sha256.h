/*
 * sha256.h: SHA-256 with the digest fetched once and one context kept.
 */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#define SHA256_LEN	32

/* out = SHA-256(p[0..n)).  Aborts only on a broken libcrypto. */
void		 sha256_digest(const void *p, size_t n, uint8_t out[SHA256_LEN]);

/* The fetched SHA-256, for callers that hash in several parts. */
const EVP_MD	*sha256_md(void);

/* Drop the fetched digest and the kept context (tests, exit). */
void		 sha256_free(void);

#endif

/*
 * sha256.c: SHA-256 of a byte range, for entry ids and peer ids (see
 * sha256.h).
 *
 * Why not EVP_Digest(..., EVP_sha256(), ...): under OpenSSL 3 the legacy
 * EVP_sha256() is a placeholder that every EVP_Digest resolves again
 * through the provider store (a lock, a name lookup, a method table), and
 * EVP_Digest allocates and frees a context each call.  At 256 peers the
 * entry id's hash cost a receiving peer about 4% of its CPU in the write
 * window, a tenth of the Ed25519 verify beside it, mostly in that lookup
 * (perf, BENCHMARKS.md "The CPU a write costs beyond its verifies").  Here
 * the digest is fetched once and one context is re-armed per hash.
 *
 * Per process and not locked: a peer runs one event loop.
 */
#include <stdlib.h>

#include "sha256.h"

static EVP_MD		*md;
static EVP_MD_CTX	*ctx;

const EVP_MD *
sha256_md(void)
{
	if (md == NULL && (md = EVP_MD_fetch(NULL, "SHA2-256", NULL)) == NULL)
		abort();	/* no SHA-256: a broken libcrypto */
	return md;
}

void
sha256_digest(const void *p, size_t n, uint8_t out[SHA256_LEN])
{
	unsigned int len = 0;

	if (ctx == NULL && (ctx = EVP_MD_CTX_new()) == NULL)
		abort();
	if (EVP_DigestInit_ex2(ctx, sha256_md(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, p, n) != 1 ||
	    EVP_DigestFinal_ex(ctx, out, &len) != 1 || len != SHA256_LEN)
		abort();	/* SHA-256 cannot fail: broken libcrypto */
}

void
sha256_free(void)
{
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(md);
	ctx = NULL;
	md = NULL;
}

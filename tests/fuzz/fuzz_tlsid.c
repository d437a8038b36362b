/*
 * fuzz_tlsid.c: libFuzzer target for what the TLS binding parses from a
 * peer beyond the TLS library itself.
 *
 * The first input byte picks the mode:
 *   even: the rest is a DER certificate, as a peer presents it; whatever
 *         tlsid_cert_key accepts must be an Ed25519 key that verifies the
 *         certificate's own signature;
 *   odd:  the next 32 bytes are the channel's peer id and the rest one
 *         frame for frame_open_channel: an accepted frame is from that
 *         peer, and a bare one is accepted only there.
 * Seeds: tests/fuzz/seeds/fuzz_tlsid/ (an identity certificate, a bare and
 * a signed frame).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "frame.h"
#include "identity.h"
#include "tlsid.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_cert(const uint8_t *p, size_t n)
{
	uint8_t pub[IDENTITY_PUB_LEN], raw[IDENTITY_PUB_LEN];
	size_t rlen = sizeof(raw);
	X509 *x = d2i_X509(NULL, &p, (long)n);
	EVP_PKEY *k;

	if (x == NULL) {
		ERR_clear_error();
		return;
	}
	if (tlsid_cert_key(x, pub) == 0) {
		k = X509_get0_pubkey(x);
		if (k == NULL || EVP_PKEY_get_id(k) != EVP_PKEY_ED25519 ||
		    X509_verify(x, k) != 1 ||
		    EVP_PKEY_get_raw_public_key(k, raw, &rlen) != 1 ||
		    memcmp(raw, pub, sizeof(pub)) != 0)
			abort();
	}
	X509_free(x);
	ERR_clear_error();
}

static void
fuzz_channel(const uint8_t *p, size_t n)
{
	struct frame f;
	int rc;

	if (n < IDENTITY_ID_LEN)
		return;
	rc = frame_open_channel(p + IDENTITY_ID_LEN, n - IDENTITY_ID_LEN, &f,
	    p);
	if (rc == FRAME_OK && memcmp(f.from, p, IDENTITY_ID_LEN) != 0)
		abort();
	/* Without a channel a bare frame never opens. */
	rc = frame_open_channel(p + IDENTITY_ID_LEN, n - IDENTITY_ID_LEN, &f,
	    NULL);
	if (rc == FRAME_OK && f.bare)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] % 2 == 0)
		fuzz_cert(data + 1, size - 1);
	else
		fuzz_channel(data + 1, size - 1);
	return 0;
}

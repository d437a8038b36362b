/*
 * dtlsid.c: the DTLS binding's channel key, its context and the Ed25519
 * endorsement that ties the channel key to a peer's identity (see
 * dtlsid.h).  The verify callback stands in for path validation, as
 * tlsid.c's does: the chain must be the leaf alone, an ECDSA P-256 key
 * that verifies its own certificate.  Who the peer is comes afterwards,
 * from the endorsement (dtlsid_check), not from the certificate.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "dtlsid.h"
#include "identity.h"
#include "tlsid.h"

#define DTLSID_CIPHERS	"ECDHE-ECDSA-AES128-GCM-SHA256:" \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305"

static int	dtlsid_slot = -1;	/* SSL ex_data: the check refused it */

/* The encoded point of a P-256 key: 0, or -1 (another key or curve). */
static int
p256_pub(EVP_PKEY *k, uint8_t pub[DTLSID_CHAN_PUB_LEN])
{
	char group[32];
	size_t len = 0;

	if (k == NULL || !EVP_PKEY_is_a(k, "EC") ||
	    EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME,
	    group, sizeof(group), NULL) != 1 ||
	    strcmp(group, "prime256v1") != 0 ||
	    EVP_PKEY_get_octet_string_param(k,
	    OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pub, DTLSID_CHAN_PUB_LEN,
	    &len) != 1 || len != DTLSID_CHAN_PUB_LEN || pub[0] != 0x04)
		return -1;
	return 0;
}

int
dtlsid_new(struct dtlsid *d, const char *cn)
{
	memset(d, 0, sizeof(*d));
	if ((d->key = EVP_EC_gen("P-256")) == NULL ||
	    p256_pub(d->key, d->pub) == -1 ||
	    (d->cert = tlsid_cert_of(d->key, cn)) == NULL) {
		dtlsid_free(d);
		return -1;
	}
	return 0;
}

void
dtlsid_free(struct dtlsid *d)
{
	EVP_PKEY_free(d->key);
	X509_free(d->cert);
	memset(d, 0, sizeof(*d));
}

/* The leaf's key is P-256 and verifies the leaf's own signature. */
static int
dtlsid_leaf_ok(X509 *cert)
{
	uint8_t pub[DTLSID_CHAN_PUB_LEN];
	int ok = p256_pub(X509_get0_pubkey(cert), pub) == 0 &&
	    X509_verify(cert, X509_get0_pubkey(cert)) == 1;

	ERR_clear_error();
	return ok;
}

static int
dtlsid_verify_cb(int preverify_ok, X509_STORE_CTX *sctx)
{
	(void)preverify_ok;
	return tlsid_verify_leaf(sctx, dtlsid_leaf_ok, dtlsid_slot);
}

bool
dtlsid_verify_failed(SSL *ssl)
{
	return dtlsid_slot >= 0 && SSL_get_ex_data(ssl, dtlsid_slot) != NULL;
}

SSL_CTX *
dtlsid_ctx_new(const struct dtlsid *d)
{
	SSL_CTX *ctx;

	if (dtlsid_slot < 0 && (dtlsid_slot = SSL_get_ex_new_index(0, NULL,
	    NULL, NULL, NULL)) < 0)
		return NULL;
	if ((ctx = SSL_CTX_new(DTLS_method())) == NULL)
		return NULL;
	if (SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate(ctx, d->cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, d->key) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, DTLSID_CIPHERS) != 1 ||
	    SSL_CTX_set1_sigalgs_list(ctx, "ECDSA+SHA256") != 1 ||
	    SSL_CTX_set1_client_sigalgs_list(ctx, "ECDSA+SHA256") != 1 ||
	    SSL_CTX_set1_groups_list(ctx, "X25519:P-256") != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* the acceptor's cipher order (AES-128-GCM first), as on TLS */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_QUERY_MTU | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, dtlsid_verify_cb);
	SSL_CTX_set_read_ahead(ctx, 1);
	/* a datagram of several records (peerd packs them on loopback) */
	SSL_CTX_set_default_read_buffer_len(ctx, DTLSID_READ_BUF);
	return ctx;
}

int
dtlsid_peer_chan(SSL *ssl, uint8_t pub[DTLSID_CHAN_PUB_LEN])
{
	X509 *cert = SSL_get0_peer_certificate(ssl);

	if (cert == NULL || SSL_get_verify_result(ssl) != X509_V_OK)
		return -1;
	return p256_pub(X509_get0_pubkey(cert), pub);
}

int
dtlsid_ekm(SSL *ssl, uint8_t ekm[DTLSID_EKM_LEN])
{
	return SSL_export_keying_material(ssl, ekm, DTLSID_EKM_LEN,
	    DTLSID_LABEL, strlen(DTLSID_LABEL), NULL, 0, 0) == 1 ? 0 : -1;
}

void
dtlsid_msg(const uint8_t chan[DTLSID_CHAN_PUB_LEN],
    const uint8_t id[IDENTITY_ID_LEN], const uint8_t ekm[DTLSID_EKM_LEN],
    uint8_t msg[DTLSID_MSG_LEN])
{
	memcpy(msg, DTLSID_CONTEXT, DTLSID_CONTEXT_LEN);
	memcpy(msg + DTLSID_CONTEXT_LEN, chan, DTLSID_CHAN_PUB_LEN);
	memcpy(msg + DTLSID_CONTEXT_LEN + DTLSID_CHAN_PUB_LEN, id,
	    IDENTITY_ID_LEN);
	memcpy(msg + DTLSID_CONTEXT_LEN + DTLSID_CHAN_PUB_LEN +
	    IDENTITY_ID_LEN, ekm, DTLSID_EKM_LEN);
}

int
dtlsid_endorse(const struct identity *ident,
    const uint8_t chan[DTLSID_CHAN_PUB_LEN], const uint8_t ekm[DTLSID_EKM_LEN],
    uint8_t out[DTLSID_ENDORSE_LEN])
{
	uint8_t msg[DTLSID_MSG_LEN];

	dtlsid_msg(chan, ident->id, ekm, msg);
	memcpy(out, ident->pub, IDENTITY_PUB_LEN);
	return identity_sign(ident, msg, sizeof(msg), out + IDENTITY_PUB_LEN);
}

int
dtlsid_check(const uint8_t e[DTLSID_ENDORSE_LEN],
    const uint8_t chan[DTLSID_CHAN_PUB_LEN], const uint8_t ekm[DTLSID_EKM_LEN],
    uint8_t pub[IDENTITY_PUB_LEN], uint8_t id[IDENTITY_ID_LEN])
{
	uint8_t msg[DTLSID_MSG_LEN];

	memcpy(pub, e, IDENTITY_PUB_LEN);
	identity_id_of(pub, id);
	dtlsid_msg(chan, id, ekm, msg);
	return identity_verify(pub, msg, sizeof(msg), e + IDENTITY_PUB_LEN) ==
	    0 ? 0 : -1;
}

/*
 * tlsid.c: self-signed Ed25519 identity certificates and the TLS 1.3
 * context of the TLS binding (see tlsid.h).
 *
 * The certificate is only a carrier for the key: its subject is the
 * PeerId (for logs and openssl s_client), its validity is wide and not
 * checked, because what a peer trusts is the key and the key alone (the
 * hello that follows names the PeerId it must hash to).  The verify
 * callback replaces X.509 path validation: the chain must be exactly the
 * leaf, and the leaf must verify under its own Ed25519 key.  Anything
 * else fails the handshake, and the connection's ex_data slot remembers
 * that it was the certificate, so the caller can count it apart from a
 * protocol error.
 */
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "identity.h"
#include "tlsid.h"

#define TLSID_DAYS	36500L
/*
 * TLS 1.3's three suites, AES-128-GCM first: OpenSSL's default order puts
 * AES-256-GCM first, which on the development host's CPU (AES-NI, VAES)
 * runs about 7% slower at 16 KiB records (`openssl speed -evp`,
 * BENCHMARKS.md), and every byte of a piece goes through it twice.  Both
 * ends offer the same list, and an acceptor chooses by its own order (so a
 * client that prefers AES-256-GCM still gets AES-128-GCM); any of the
 * three interoperates.
 */
#define TLSID_CIPHERSUITES	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:" \
	"TLS_CHACHA20_POLY1305_SHA256"

static int	tlsid_slot = -1;	/* SSL ex_data: the check refused it */

X509 *
tlsid_cert_new(const struct identity *ident)
{
	X509 *x;
	X509_NAME *name;

	if (ident == NULL || ident->pkey == NULL || (x = X509_new()) == NULL)
		return NULL;
	if (X509_set_version(x, 2) != 1 ||
	    ASN1_INTEGER_set(X509_get_serialNumber(x), 1) != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -86400L) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), 86400L * TLSID_DAYS) ==
	    NULL ||
	    X509_set_pubkey(x, ident->pkey) != 1)
		goto bad;
	name = X509_get_subject_name(x);
	if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)ident->peer_id, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, name) != 1)
		goto bad;
	/* Ed25519 signs the message itself: no digest (NULL md). */
	if (X509_sign(x, ident->pkey, NULL) <= 0)
		goto bad;
	return x;
bad:
	X509_free(x);
	return NULL;
}

int
tlsid_cert_key(X509 *cert, uint8_t pub[IDENTITY_PUB_LEN])
{
	EVP_PKEY *k;
	size_t len = IDENTITY_PUB_LEN;

	if (cert == NULL || (k = X509_get0_pubkey(cert)) == NULL ||
	    EVP_PKEY_get_id(k) != EVP_PKEY_ED25519)
		return -1;
	if (X509_verify(cert, k) != 1) {
		ERR_clear_error();
		return -1;
	}
	if (EVP_PKEY_get_raw_public_key(k, pub, &len) != 1 ||
	    len != IDENTITY_PUB_LEN)
		return -1;
	return 0;
}

/*
 * Replaces path validation (see the top of the file).  Called for each
 * certificate of the peer's chain, leaf last; a chain longer than the leaf
 * is refused.
 */
static int
tlsid_verify_cb(int preverify_ok, X509_STORE_CTX *sctx)
{
	uint8_t pub[IDENTITY_PUB_LEN];
	SSL *ssl;
	STACK_OF(X509) *chain;
	int ok;

	(void)preverify_ok;
	ssl = X509_STORE_CTX_get_ex_data(sctx,
	    SSL_get_ex_data_X509_STORE_CTX_idx());
	chain = X509_STORE_CTX_get0_untrusted(sctx);
	ok = X509_STORE_CTX_get_error_depth(sctx) == 0 &&
	    (chain == NULL || sk_X509_num(chain) <= 1) &&
	    tlsid_cert_key(X509_STORE_CTX_get_current_cert(sctx), pub) == 0;
	if (ok) {
		X509_STORE_CTX_set_error(sctx, X509_V_OK);
		return 1;
	}
	if (ssl != NULL && tlsid_slot >= 0)
		SSL_set_ex_data(ssl, tlsid_slot, (void *)1);
	X509_STORE_CTX_set_error(sctx, X509_V_ERR_CERT_REJECTED);
	return 0;
}

bool
tlsid_verify_failed(SSL *ssl)
{
	return tlsid_slot >= 0 && SSL_get_ex_data(ssl, tlsid_slot) != NULL;
}

SSL_CTX *
tlsid_ctx_new(const struct identity *ident)
{
	SSL_CTX *ctx;
	X509 *cert;

	if (tlsid_slot < 0 &&
	    (tlsid_slot = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL)) < 0)
		return NULL;
	if ((cert = tlsid_cert_new(ident)) == NULL)
		return NULL;
	if ((ctx = SSL_CTX_new(TLS_method())) == NULL) {
		X509_free(cert);
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_use_certificate(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ident->pkey) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1 ||
	    SSL_CTX_set1_sigalgs_list(ctx, "ed25519") != 1 ||
	    SSL_CTX_set1_client_sigalgs_list(ctx, "ed25519") != 1 ||
	    SSL_CTX_set_num_tickets(ctx, 0) != 1 ||
	    SSL_CTX_set_ciphersuites(ctx, TLSID_CIPHERSUITES) != 1) {
		X509_free(cert);
		SSL_CTX_free(ctx);
		return NULL;
	}
	X509_free(cert);	/* the context holds its own reference */
	/*
	 * Our order wins on a connection we accept too (OpenSSL's default
	 * follows the client's): AES-128-GCM whenever the client offers it.
	 */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_ENABLE_KTLS |
	    SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, tlsid_verify_cb);
	/*
	 * libevent retries a blocked write from wherever its buffer then is
	 * (moving buffers).  Never partial writes: libevent 2.1 goes on to the
	 * next chunk after a short SSL_write and drains as if the chunks were
	 * contiguous, which corrupts the stream (test_peerd_tls found it).
	 */
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_clear_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
	/*
	 * Room for several records a read when read-ahead is on (peerd turns
	 * it on only while it reads a large frame itself, transport.c).
	 */
	SSL_CTX_set_default_read_buffer_len(ctx, TLSID_READ_BUF);
	return ctx;
}

int
tlsid_peer(SSL *ssl, uint8_t pub[IDENTITY_PUB_LEN],
    uint8_t id[IDENTITY_ID_LEN])
{
	X509 *cert = SSL_get0_peer_certificate(ssl);

	if (cert == NULL || SSL_get_verify_result(ssl) != X509_V_OK ||
	    tlsid_cert_key(cert, pub) == -1)
		return -1;
	identity_id_of(pub, id);
	return 0;
}

bool
tlsid_ktls(SSL *ssl, bool send)
{
	BIO *b = send ? SSL_get_wbio(ssl) : SSL_get_rbio(ssl);

	if (b == NULL)
		return false;
	return send ? BIO_get_ktls_send(b) > 0 : BIO_get_ktls_recv(b) > 0;
}

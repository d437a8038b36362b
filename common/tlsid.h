/*
 * tlsid.h: the TLS binding's identity (docs/protocol.md "TLS binding").
 *
 * Each peer presents a self-signed X.509 certificate that carries its
 * Ed25519 identity key, made from that key at start-up (nothing is stored).
 * No CA: a peer accepts any certificate that is self-signed by an Ed25519
 * key, and the channel's peer id is SHA-256 of that key, the same PeerId
 * frames carry in "from".  TLS 1.3 only, both sides present a certificate,
 * and the only signature scheme offered or accepted is ed25519.  kTLS is
 * asked for (SSL_OP_ENABLE_KTLS; peerd's transport.c clears it when its
 * start-up probe finds the kernel offers no "tls" ULP): OpenSSL moves
 * record encryption into the kernel when it can and keeps it in user space
 * otherwise; tlsid_ktls says which a connection got.
 */
#ifndef TLSID_H
#define TLSID_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "identity.h"

/* A self-signed certificate carrying ident's key, signed by it. NULL on failure. */
X509	*tlsid_cert_new(const struct identity *ident);
/*
 * A self-signed certificate for key with subject CN cn (SHA-256 for a
 * key that is not Ed25519: the DTLS binding's ECDSA channel key). NULL on
 * failure.
 */
X509	*tlsid_cert_of(EVP_PKEY *key, const char *cn);
/*
 * The raw Ed25519 key of a certificate that is self-signed by an Ed25519
 * key (its signature verifies under its own key): 0 with pub set, or -1
 * (another key type, a signature by another key, no key).
 */
int	 tlsid_cert_key(X509 *cert, uint8_t pub[IDENTITY_PUB_LEN]);
/*
 * A context for ident's end of TLS 1.3 channels, either role: the
 * certificate and key set, the peer's certificate required and checked by
 * tlsid_cert_key, no session tickets (every channel runs the full
 * handshake and so presents a certificate).  NULL on failure.
 */
SSL_CTX	*tlsid_ctx_new(const struct identity *ident);
/* A TLS record on the wire at most: 16 KiB and its header, tag, padding. */
#define TLSID_RECORD_RAW	(16384 + 256)
/* Each channel's read buffer: four full records. */
#define TLSID_READ_BUF		(4 * TLSID_RECORD_RAW)
/*
 * After a completed handshake: the peer's key and id (SHA-256 of the key).
 * 0, or -1 if the peer presented no acceptable certificate.
 */
int	 tlsid_peer(SSL *ssl, uint8_t pub[IDENTITY_PUB_LEN],
	    uint8_t id[IDENTITY_ID_LEN]);
/* Whether the kernel encrypts this connection's sends (1) or receives. */
bool	 tlsid_ktls(SSL *ssl, bool send);
/* The certificate check refused this connection's peer. */
bool	 tlsid_verify_failed(SSL *ssl);
/*
 * The verify callback's rule, for this binding and the DTLS one
 * (dtlsid.c): the chain is the leaf alone and leaf_ok accepts it; else
 * the connection's ex_data slot is marked (the certificate's fault) and
 * the handshake fails.  1 or 0, as a verify callback returns.
 */
int	 tlsid_verify_leaf(X509_STORE_CTX *sctx, int (*leaf_ok)(X509 *),
	    int slot);

#endif

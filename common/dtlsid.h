/*
 * dtlsid.h: the DTLS binding's identity (docs/protocol.md "The DTLS
 * binding").
 *
 * OpenSSL 3.0's DTLS 1.2 cannot use an Ed25519 certificate (the handshake
 * finds "no shared cipher"), so a peer's DTLS certificate carries an ECDSA
 * P-256 *channel key*, made fresh each run and self-signed, and the peer's
 * Ed25519 identity *endorses* it: an Ed25519 signature over a context
 * string, the channel key, the peer's id and 32 bytes exported from the
 * DTLS session's keys (RFC 5705).  Each end sends its endorsement first on
 * the channel; the other end checks that it names the key the handshake
 * proved and that it was made for this session, so an endorsement copied
 * from another session (other exported bytes) or made for another channel
 * key fails.
 */
#ifndef DTLSID_H
#define DTLSID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "identity.h"

#define DTLSID_CHAN_PUB_LEN	65	/* SEC1 uncompressed P-256 point */
#define DTLSID_EKM_LEN		32
#define DTLSID_ENDORSE_LEN	(IDENTITY_PUB_LEN + IDENTITY_SIG_LEN)
#define DTLSID_CONTEXT		"fleetlab dtls endorse v1"
#define DTLSID_CONTEXT_LEN	24
#define DTLSID_LABEL		"EXPORTER-fleetlab-dtls-endorse"
#define DTLSID_READ_BUF		(65536 + 512)	/* a whole datagram */
#define DTLSID_MSG_LEN		(DTLSID_CONTEXT_LEN + DTLSID_CHAN_PUB_LEN + \
	IDENTITY_ID_LEN + DTLSID_EKM_LEN)

/* The channel key of one run and its certificate. */
struct dtlsid {
	EVP_PKEY	*key;
	X509		*cert;
	uint8_t		 pub[DTLSID_CHAN_PUB_LEN];
};

/* A fresh channel key and its self-signed certificate (CN cn). 0 or -1. */
int	 dtlsid_new(struct dtlsid *d, const char *cn);
void	 dtlsid_free(struct dtlsid *d);
/*
 * A DTLS 1.2 context for d, either role: ECDHE-ECDSA with AES-GCM, the
 * peer's certificate required (one self-signed ECDSA P-256 certificate,
 * checked in the verify callback), no tickets, no renegotiation, no MTU
 * queries (the caller sets the link MTU).  NULL on failure.
 */
SSL_CTX	*dtlsid_ctx_new(const struct dtlsid *d);
/* The certificate check refused this connection's peer. */
bool	 dtlsid_verify_failed(SSL *ssl);
/* After the handshake: the peer's channel key (0) or -1. */
int	 dtlsid_peer_chan(SSL *ssl, uint8_t pub[DTLSID_CHAN_PUB_LEN]);
/* The session's exported bytes (label DTLSID_LABEL, no context). 0 or -1. */
int	 dtlsid_ekm(SSL *ssl, uint8_t ekm[DTLSID_EKM_LEN]);
/* The bytes an endorsement signs: context || chan || id || ekm. */
void	 dtlsid_msg(const uint8_t chan[DTLSID_CHAN_PUB_LEN],
	    const uint8_t id[IDENTITY_ID_LEN], const uint8_t ekm[DTLSID_EKM_LEN],
	    uint8_t msg[DTLSID_MSG_LEN]);
/* ident's endorsement of chan for the session ekm: pub || sig. 0 or -1. */
int	 dtlsid_endorse(const struct identity *ident,
	    const uint8_t chan[DTLSID_CHAN_PUB_LEN],
	    const uint8_t ekm[DTLSID_EKM_LEN], uint8_t out[DTLSID_ENDORSE_LEN]);
/*
 * Check an endorsement e against the channel key the handshake proved and
 * this session's ekm: 0 with the endorser's key and id, or -1.
 */
int	 dtlsid_check(const uint8_t e[DTLSID_ENDORSE_LEN],
	    const uint8_t chan[DTLSID_CHAN_PUB_LEN],
	    const uint8_t ekm[DTLSID_EKM_LEN], uint8_t pub[IDENTITY_PUB_LEN],
	    uint8_t id[IDENTITY_ID_LEN]);

#endif

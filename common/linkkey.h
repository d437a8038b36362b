/*
 * linkkey.h: the per-link MAC keys of a TCP link (docs/protocol.md
 * sections 2 and 3).
 *
 * Each end of a TCP link offers a fresh X25519 public key ("kx") in its
 * CHANNEL_HELLO; its signed proof repeats it, so the key is bound live to
 * the sender's identity.  At UP both ends derive two 32-byte keys with
 * HKDF-SHA256 from the X25519 shared secret, one per direction, and every
 * later frame carries HMAC-SHA256 of its envelope under the sender's
 * direction key instead of an Ed25519 signature.  This file holds the
 * ephemeral key, the derivation and the MAC; frame.c puts the MAC on the
 * wire and the link layer decides when a link is keyed.
 */
#ifndef LINKKEY_H
#define LINKKEY_H

#include <stddef.h>
#include <stdint.h>

#define LINKKEY_PUB_LEN		32	/* an X25519 public key */
#define LINKKEY_PRIV_LEN	32
#define LINKKEY_LEN		32	/* one direction's HMAC key */
#define LINKKEY_MAC_LEN		32	/* HMAC-SHA256 */
#define LINKKEY_NONCE_LEN	16	/* a hello's nonce */
#define LINKKEY_ID_LEN		32	/* a peer id */
/* The HKDF info's fixed label (then the two ids, lower first). */
#define LINKKEY_LABEL		"fleetlab link mac v1"

/* One connection's ephemeral X25519 key; pkey NULL when there is none. */
struct linkkey_eph {
	void		*pkey;			/* EVP_PKEY * */
	uint8_t		 pub[LINKKEY_PUB_LEN];
};

/* A keyed HMAC-SHA256; ctx NULL when unkeyed. */
struct linkkey_mac {
	void		*ctx;	/* the key's HMAC states (linkkey.c) */
};

/* A fresh random X25519 key. 0 or -1. */
int	linkkey_eph_new(struct linkkey_eph *e);
/* The X25519 key with this raw private key (fixed test vectors). 0 or -1. */
int	linkkey_eph_from_private(struct linkkey_eph *e,
	    const uint8_t priv[LINKKEY_PRIV_LEN]);
/* Free and wipe e (safe on an empty one). */
void	linkkey_eph_free(struct linkkey_eph *e);

/*
 * The two direction keys of a link, from our ephemeral key and theirs:
 * ikm = X25519(mine, theirs), salt = the two nonces, info = LINKKEY_LABEL
 * then the two ids, both in the order of the ids (the lower id's first);
 * 64 bytes of HKDF-SHA256 output, the first 32 keying frames sent by the
 * lower id, the last 32 those sent by the higher.  tx gets the key of the
 * frames we send, rx of those we receive.  The shared secret and the
 * output are wiped before returning.  -1 (tx and rx zeroed) if their key
 * is not a usable X25519 key (the secret would be all zero) or the ids
 * are equal.
 */
int	linkkey_derive(const struct linkkey_eph *mine,
	    const uint8_t their_pub[LINKKEY_PUB_LEN],
	    const uint8_t my_id[LINKKEY_ID_LEN],
	    const uint8_t my_nonce[LINKKEY_NONCE_LEN],
	    const uint8_t their_id[LINKKEY_ID_LEN],
	    const uint8_t their_nonce[LINKKEY_NONCE_LEN],
	    uint8_t tx[LINKKEY_LEN], uint8_t rx[LINKKEY_LEN]);

/* Key m with key (HMAC-SHA256). 0 or -1. */
int	linkkey_mac_init(struct linkkey_mac *m, const uint8_t key[LINKKEY_LEN]);
/* Free m (safe on an unkeyed one). */
void	linkkey_mac_free(struct linkkey_mac *m);
/* out = HMAC-SHA256(m's key, msg). 0 or -1. */
int	linkkey_mac(const struct linkkey_mac *m, const void *msg, size_t len,
	    uint8_t out[LINKKEY_MAC_LEN]);
/* 0 when mac is HMAC-SHA256(m's key, msg) (compared in constant time). */
int	linkkey_mac_check(const struct linkkey_mac *m, const void *msg,
	    size_t len, const uint8_t mac[LINKKEY_MAC_LEN]);

#endif

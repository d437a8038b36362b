/*
 * identity.h: a peer's Ed25519 identity (OpenSSL 3 EVP).
 *
 * PeerId = multibase base58btc ("z" prefix) of SHA-256 of the raw 32-byte
 * public key (docs/protocol.md section 2).  The 32-byte digest is the binary id
 * used in frames; its first 8 bytes (big-endian) are the HLC node.
 * Keys are stored in DIR/identity.key (PKCS#8 PEM, mode 0600).
 * Signing and verifying keep per-process OpenSSL state (a verify cache of
 * recent senders): one thread, the event loop, calls them.
 */
#ifndef IDENTITY_H
#define IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDENTITY_PUB_LEN	32
#define IDENTITY_SEED_LEN	32
#define IDENTITY_SIG_LEN	64
#define IDENTITY_ID_LEN		32
#define IDENTITY_PEERID_MAX	64	/* "z" + base58 of 32 bytes + NUL */
#define IDENTITY_KEY_FILE	"identity.key"

struct identity {
	void		*pkey;			/* EVP_PKEY * */
	uint8_t		 pub[IDENTITY_PUB_LEN];
	uint8_t		 id[IDENTITY_ID_LEN];	/* SHA-256(pub) */
	char		 peer_id[IDENTITY_PEERID_MAX];
	uint64_t	 node;			/* HLC node */
};

/* A new random key. 0 or -1. */
int	identity_generate(struct identity *ident);
/* The key whose RFC 8032 private seed is given. 0 or -1. */
int	identity_from_seed(struct identity *ident,
	    const uint8_t seed[IDENTITY_SEED_LEN]);
/* Write the private key to path with mode 0600. 0 or -1 (errno set). */
int	identity_save(const struct identity *ident, const char *path);
/* Read a key written by identity_save. 0 or -1. */
int	identity_load(struct identity *ident, const char *path);
/*
 * Load DIR/identity.key, or create and save it; *created says which.
 * Never replaces an existing file: if another process creates it first,
 * its key is loaded.  A file that exists but does not parse is an error.
 */
int	identity_load_or_create(struct identity *ident, const char *dir,
	    bool *created);
void	identity_free(struct identity *ident);

/* Ed25519 signature of msg. 0 or -1. */
int	identity_sign(const struct identity *ident, const void *msg,
	    size_t len, uint8_t sig[IDENTITY_SIG_LEN]);
/*
 * Verify sig over msg under the raw public key. 0 good, -1 bad.
 * Parsed public keys are cached, so repeated senders cost one verify.
 */
int	identity_verify(const uint8_t pub[IDENTITY_PUB_LEN], const void *msg,
	    size_t len, const uint8_t sig[IDENTITY_SIG_LEN]);
/*
 * The verifications this process made (of every purpose), and the CPU
 * time of the sampled ones: mean cost = timed_ns / timed.
 */
struct identity_cost {
	uint64_t	verifies;
	uint64_t	timed;		/* one in eight, timed */
	uint64_t	timed_ns;	/* their thread CPU time */
};
void	identity_verify_cost(struct identity_cost *out);
/* Drop the verify cache and the reused OpenSSL contexts (tests, exit). */
void	identity_cache_clear(void);

/* id = SHA-256(pub). */
void	identity_id_of(const uint8_t pub[IDENTITY_PUB_LEN],
	    uint8_t id[IDENTITY_ID_LEN]);
/* Text PeerId of a binary id. */
void	identity_peer_id_of(const uint8_t id[IDENTITY_ID_LEN],
	    char out[IDENTITY_PEERID_MAX]);
/* Binary id of a text PeerId. 0 or -1. */
int	identity_peer_id_parse(const char *text, uint8_t id[IDENTITY_ID_LEN]);
/* HLC node of a binary id: its first 8 bytes, big-endian. */
uint64_t identity_node_of(const uint8_t id[IDENTITY_ID_LEN]);

#endif

/*
 * seal.h: AES-256-GCM under a group key: sealed = nonce || ciphertext || tag
 * (described below).
 *
 *   sealed = nonce(12, random) || ciphertext || tag(16)
 *   associated data = space id | entry id [| epoch, 8 bytes big-endian]
 *
 * Random 96-bit nonces stay safe for about 2^32 messages under one key, so
 * a key counts its seals: a warning is logged once at 2^31 and sealing is
 * refused once 2^32 have been made; the group must rotate the key.
 * Signatures over entries cover the sealed bytes, not the plaintext.
 *
 * A key keeps one OpenSSL context for sealing and one for opening, keyed
 * once by seal_key_init, so a call re-arms a context with its nonce
 * instead of building a cipher context and a key schedule (5-7 raw seals
 * at 256 B).  A context only ever holds its own key: seal_key_clear frees
 * them, and must come before a key is initialised again; a struct
 * seal_key must not be copied (the copy would share the contexts).  A key
 * that is all zero but for its bytes (no contexts, e.g. made by hand, or
 * when a context cannot be made) still works, the slow way.
 *
 * Nonces are drawn from RAND_bytes SEAL_NONCE_POOL at a time (one draw
 * per nonce cost more than the cipher at 256 B); each is wiped from the
 * pool as it is used, and a pool drawn by another process (a fork) is
 * thrown away, so parent and child never share one.
 */
#ifndef SEAL_H
#define SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evp_cipher_ctx_st;	/* OpenSSL's EVP_CIPHER_CTX */

#define SEAL_KEY_LEN	32
#define SEAL_NONCE_LEN	12
#define SEAL_TAG_LEN	16
#define SEAL_OVERHEAD	(SEAL_NONCE_LEN + SEAL_TAG_LEN)
#define SEAL_WARN_AT	(UINT64_C(1) << 31)
#define SEAL_LIMIT	(UINT64_C(1) << 32)
#define SEAL_NONCE_POOL	32

struct seal_key {
	uint8_t		key[SEAL_KEY_LEN];
	uint64_t	seals;		/* made under this key so far */
	bool		warned;		/* the SEAL_WARN_AT warning is out */
	struct evp_cipher_ctx_st *ectx;	/* AES-256-GCM keyed with key, or NULL */
	struct evp_cipher_ctx_st *dctx;
	uint8_t		pool[SEAL_NONCE_POOL * SEAL_NONCE_LEN]; /* unused nonces */
	uint32_t	pool_left;
	long		pool_pid;	/* the process that drew them */
};

/*
 * Copy a 32-byte group key into k, with no seals counted yet, and key its
 * two cipher contexts (seal_key_clear frees them).
 */
void	seal_key_init(struct seal_key *k, const uint8_t key[SEAL_KEY_LEN]);
/* Free k's contexts (their key schedules are wiped) and wipe k. */
void	seal_key_clear(struct seal_key *k);
/*
 * Build the associated data space | entry_id [| epoch BE64] in out.
 * Returns its length; bytes are written only when it fits in outlen.
 */
size_t	seal_ad(uint8_t *out, size_t outlen, const char *space,
	    const uint8_t *entry_id, size_t id_len, const uint64_t *epoch);
/*
 * Seal n bytes of pt under k with associated data ad: out gets
 * n + SEAL_OVERHEAD bytes (*outn).  0, or -1 if outlen is too small, the
 * key has made SEAL_LIMIT seals, or OpenSSL fails.  out must not overlap pt.
 */
int	seal_seal(struct seal_key *k, const uint8_t *ad, size_t adlen,
	    const uint8_t *pt, size_t n, uint8_t *out, size_t outlen,
	    size_t *outn);
/*
 * Open n sealed bytes: out gets n - SEAL_OVERHEAD bytes (*outn).  0, or -1
 * if the input is short, was changed, the AD differs or outlen is too small.
 * Nothing of the plaintext is left in out on failure.
 */
int	seal_open(const struct seal_key *k, const uint8_t *ad, size_t adlen,
	    const uint8_t *in, size_t n, uint8_t *out, size_t outlen,
	    size_t *outn);

#endif

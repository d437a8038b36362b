/*
 * manifest.h: the description of a blob in the content swarm
 * (docs/protocol.md "Content swarm").
 *
 * A blob is cut into pieces of piece_size bytes (the last one may be
 * shorter); the manifest lists the size, the piece size and the SHA-256 of
 * every piece, in canonical CBOR:
 *
 *   manifest = { "v": 1, "size": uint, "piece": uint,
 *                "hashes": bstr(32 * npieces) }
 *
 * (keys in canonical order).  The content id (cid) is the SHA-256 of those
 * exact bytes, so a manifest fetched from anyone is checked against the
 * cid, and every piece against its hash, before it is believed.  Pure: no
 * I/O, no libevent.
 */
#ifndef MANIFEST_H
#define MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_buf;

#define MANIFEST_VERSION	1
#define MANIFEST_HASH_LEN	32
#define MANIFEST_CID_HEX	(2 * MANIFEST_HASH_LEN + 1)
#define MANIFEST_PIECE_MIN	(1u << 10)	/* 1 KiB */
#define MANIFEST_PIECE_MAX	(4u << 20)	/* a piece fits one frame */
#define MANIFEST_PIECE_DEFAULT	(1u << 20)
/* The manifest itself must fit a frame: 65,536 hashes are 2 MiB. */
#define MANIFEST_PIECES_MAX	65536u

struct manifest {
	uint64_t	 size;
	uint32_t	 piece_size;
	uint32_t	 npieces;
	uint8_t		*hashes;	/* npieces * MANIFEST_HASH_LEN */
};

/* SHA-256 of n bytes at p. */
void	 manifest_sha256(const void *p, size_t n,
	    uint8_t out[MANIFEST_HASH_LEN]);
/*
 * Prepare m for a blob of size bytes in pieces of piece_size: sets the
 * counts and allocates zeroed hashes.  0, or -1 if size is 0, the piece
 * size is out of range or there would be too many pieces.
 */
int	 manifest_init(struct manifest *m, uint64_t size, uint32_t piece_size);
void	 manifest_free(struct manifest *m);
/* Length of piece i (the last may be short). */
uint32_t manifest_piece_len(const struct manifest *m, uint32_t i);
/* Offset of piece i in the blob. */
uint64_t manifest_piece_off(const struct manifest *m, uint32_t i);
/* The hash slot of piece i. */
uint8_t	*manifest_hash(const struct manifest *m, uint32_t i);
/* True if len bytes at p are piece i (right length, right hash). */
bool	 manifest_piece_ok(const struct manifest *m, uint32_t i,
	    const uint8_t *p, size_t len);
/* Append the canonical encoding of m to b. */
void	 manifest_encode(const struct manifest *m, struct dcbor_buf *b);
/*
 * Parse an encoded manifest (untrusted bytes): canonical CBOR, exactly the
 * four keys, a supported version, sizes in range and hashes of the right
 * length.  0 with m filled (free it with manifest_free), or -1.
 */
int	 manifest_decode(const uint8_t *p, size_t len, struct manifest *m);
/* The cid of an encoded manifest: SHA-256 of its bytes. */
void	 manifest_cid(const uint8_t *enc, size_t len,
	    uint8_t cid[MANIFEST_HASH_LEN]);

#endif

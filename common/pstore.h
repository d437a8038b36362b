/*
 * pstore.h: the file-backed piece store of one blob (docs/protocol.md
 * section 9, the seed's
 * ContentSwarmStress).
 *
 * A store is a directory holding three files:
 *
 *   manifest   the encoded manifest (common/manifest.h), written once
 *   data       the blob, a sparse file of its full size; each verified
 *              piece is written in place with pwrite and served from the
 *              file (pread, or sendfile by peerd's links), so a blob is
 *              never held in memory
 *   have       the map of verified pieces: "PSTM", version 1, three zero
 *              bytes, npieces and count (u32 big-endian), the bitmap (bit i
 *              is bit 7 - i % 8 of byte i / 8), then XXH64 (seed 0,
 *              big-endian) of everything before it
 *
 * A piece is verified against its hash before it is written or counted.
 * The map is rewritten atomically (a temporary file renamed over it) by
 * pstore_flush, so a peer killed at any moment reopens with what it had
 * flushed.  If the map is missing, corrupt or for another manifest while
 * the data file exists, the store is rebuilt by hashing every piece of the
 * data file (holes are skipped), so nothing verified is lost and nothing
 * unverified is believed.  Data is not fsynced: the store survives the
 * death of the process, not of the host.
 */
#ifndef PSTORE_H
#define PSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

#define PSTORE_MANIFEST		"manifest"
#define PSTORE_DATA		"data"
#define PSTORE_HAVE		"have"

enum pstore_put_res {
	PSTORE_OK = 0,		/* verified and stored */
	PSTORE_DUP = 1,		/* already held; nothing written */
	PSTORE_EBAD = -1,	/* wrong index, length or hash: discarded */
	PSTORE_EIO = -2,	/* the write failed */
};

struct pstore;

/*
 * Open the store in dir.  With menc (an encoded manifest), create it if
 * needed: the directory, the manifest file and a sparse data file of the
 * blob's size; an existing store must hold the same manifest.  Without
 * menc, open an existing store.  NULL on error, with a message in err.
 */
struct pstore	*pstore_open(const char *dir, const uint8_t *menc, size_t mlen,
		    char *err, size_t errlen);
/*
 * Make the store in dir from a data file written elsewhere (a publisher's
 * staging copy): the file is renamed into the store and every piece is
 * verified.  If dir already holds this blob, the staging file is removed.
 * NULL on error, with a message in err.
 */
struct pstore	*pstore_adopt(const char *dir, const uint8_t *menc, size_t mlen,
		    const char *datapath, char *err, size_t errlen);
/* Flush the map and free the store. */
void		 pstore_close(struct pstore *ps);
const struct manifest *pstore_manifest(const struct pstore *ps);
/* The encoded manifest (the store's copy). */
const uint8_t	*pstore_manifest_enc(const struct pstore *ps, size_t *len);
bool		 pstore_has(const struct pstore *ps, uint32_t i);
/* Pieces verified. */
uint32_t	 pstore_count(const struct pstore *ps);
bool		 pstore_complete(const struct pstore *ps);
/* The bitmap, (npieces + 7) / 8 bytes, in the map file's bit order. */
const uint8_t	*pstore_bits(const struct pstore *ps, size_t *len);
/* True if the last open rebuilt the map by hashing the data file. */
bool		 pstore_rebuilt(const struct pstore *ps);
/* Verify piece i and write it in place (enum pstore_put_res). */
int		 pstore_put(struct pstore *ps, uint32_t i, const uint8_t *p,
		    size_t len);
/*
 * Where verified piece i lies: the data file's descriptor (the store's own:
 * dup it to keep it past pstore_close) and the offset.  0, or -1 if not
 * held.  Its length is manifest_piece_len().
 */
int		 pstore_piece_at(const struct pstore *ps, uint32_t i, int *fd,
		    uint64_t *off);
/* Read verified piece i into buf (its length). 0, or -1 if not held. */
int		 pstore_get(struct pstore *ps, uint32_t i, uint8_t *buf);
/* Write the map atomically if it changed since the last flush. 0 or -1. */
int		 pstore_flush(struct pstore *ps);
/* SHA-256 of the whole blob, read back from the data file. 0 or -1. */
int		 pstore_sha256(struct pstore *ps,
		    uint8_t out[MANIFEST_HASH_LEN]);

#define PSTORE_DIRECT_ALIGN	4096

/*
 * From now on write pieces with O_DIRECT, past the page cache, and keep
 * the last ones written (at most cache_bytes, at least one piece) in
 * memory, where pstore_cached finds them to be served.  A fetcher's
 * pieces are mostly asked for by other fetchers soon after it announces
 * them, so they are served from memory and the blob never fills the page
 * cache (on a VM, fresh page-cache pages can cost more than the network;
 * BENCHMARKS.md).  A piece whose offset or length is not a multiple of
 * PSTORE_DIRECT_ALIGN (the last one, or every one if the piece size is
 * not) is written through the page cache as before.  0, or -1 with errno
 * if the file system refuses O_DIRECT, or EINVAL if the piece size is not
 * a multiple of PSTORE_DIRECT_ALIGN (no piece could be written so) or
 * direct writes were already turned off: the store stays as it was.
 */
int		 pstore_direct(struct pstore *ps, size_t cache_bytes);
/* True once pstore_direct succeeded. */
bool		 pstore_is_direct(const struct pstore *ps);
/*
 * Verified piece i if it is in the write cache (its length is the
 * manifest's), else NULL.  The bytes are held for the caller, who passes
 * them on (an output buffer refers to them) and calls
 * pstore_cache_release(p, len, *token) once done with them, even after
 * pstore_close; until then the slot is not reused.
 */
const uint8_t	*pstore_cache_hold(struct pstore *ps, uint32_t i,
		    void **token);
void		 pstore_cache_release(const void *p, size_t len, void *token);

#endif

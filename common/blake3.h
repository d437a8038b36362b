/*
 * blake3.h: BLAKE3 (the BLAKE3 paper, BLAKE3-team/BLAKE3-specs): hash,
 * keyed hash, derive-key and extended output, one shot and incremental,
 * plus the tree primitives (chaining values of subtrees and parents) that
 * common/bao.c builds its outboards and slices from.
 *
 * Many full chunks are hashed at once by a SIMD kernel chosen at run time
 * from the CPU (AVX-512 16 lanes, AVX2 8, SSE4.1 4, else portable C);
 * blake3_use() caps the choice so tests run every path on one machine.
 */
#ifndef BLAKE3_H
#define BLAKE3_H

#include <stddef.h>
#include <stdint.h>

#define BLAKE3_OUT_LEN		32
#define BLAKE3_KEY_LEN		32
#define BLAKE3_BLOCK_LEN	64
#define BLAKE3_CHUNK_LEN	1024
/* 2^54 chunks of 2^10 bytes: the whole 64-bit length. */
#define BLAKE3_MAX_DEPTH	54

/* An incremental hasher: a public struct, no allocation, copyable. */
struct blake3 {
	uint32_t	key[8];
	uint32_t	cv[8];		/* the current chunk's chaining value */
	uint64_t	chunk_counter;	/* chunks completed before this one */
	uint8_t		buf[BLAKE3_BLOCK_LEN];
	uint8_t		buf_len;
	uint8_t		blocks_compressed;
	uint8_t		flags;		/* KEYED_HASH, DERIVE_KEY_* or 0 */
	uint8_t		stack_len;
	uint8_t		stack[BLAKE3_MAX_DEPTH + 1][BLAKE3_OUT_LEN];
};

/* Start a plain hash. */
void	 blake3_init(struct blake3 *h);
/* Start a keyed hash (a MAC or PRF) under a 32-byte key. */
void	 blake3_init_keyed(struct blake3 *h, const uint8_t key[BLAKE3_KEY_LEN]);
/* Start a key derivation under a context string (hard-coded, unique). */
void	 blake3_init_derive_key(struct blake3 *h, const char *context);
/* Absorb len bytes. Large chunk-aligned runs go to the SIMD kernel. */
void	 blake3_update(struct blake3 *h, const void *data, size_t len);
/* Any output length (XOF); h stays usable (final does not change it). */
void	 blake3_final(const struct blake3 *h, uint8_t *out, size_t outlen);
/* One shot: the 32-byte hash of data. */
void	 blake3_hash(const void *data, size_t len, uint8_t out[BLAKE3_OUT_LEN]);

/* Which code path runs: "avx512", "avx2", "sse41" or "portable". */
const char *blake3_impl(void);
/* Cap the path at impl (one of the names above; NULL: the best the CPU
 * has). 0, or -1 when the CPU lacks it or the name is unknown. */
int	 blake3_use(const char *impl);

/*
 * Tree primitives, plain-hash mode (no key), for Bao. A subtree starts at
 * chunk number counter; is_root asks for the root hash instead of the
 * chaining value (only a subtree holding the whole input may be the root).
 */
/* The CV (or root hash) of the subtree of data[0..len) starting at chunk
 * counter: len <= 1024 is one chunk, else the BLAKE3 tree shape (left
 * side the largest power of two of chunks that leaves a byte over). */
void	 blake3_subtree(const uint8_t *data, uint64_t len, uint64_t counter,
	    int is_root, uint8_t out[BLAKE3_OUT_LEN]);
/* CVs of the consecutive complete subtrees of 2^level full chunks in
 * data[0 .. nchunks * 1024) (nchunks a multiple of 2^level), 32 bytes
 * each into cvs. The SIMD path: many chunks and parents at once. */
void	 blake3_subtree_cvs(const uint8_t *data, uint64_t nchunks,
	    uint64_t counter, unsigned level, uint8_t *cvs);
/* The CV (or root hash) of a parent node: left CV || right CV. */
void	 blake3_parent(const uint8_t left[BLAKE3_OUT_LEN],
	    const uint8_t right[BLAKE3_OUT_LEN], int is_root,
	    uint8_t out[BLAKE3_OUT_LEN]);
/* Bytes in the left subtree of a subtree of len > 1024 bytes. */
uint64_t blake3_left_len(uint64_t len);

#endif

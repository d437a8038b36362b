/*
 * blake3_int.h: what blake3.c shares with its SIMD kernels (blake3_sse41.c,
 * blake3_avx2.c, blake3_avx512.c) and nothing else includes: the constants
 * of the compression function and the kernels' one signature.
 *
 * A kernel hashes exactly its lane count of inputs, each `blocks` full
 * 64-byte blocks, all under one key: lane i's counter is counter + i when
 * inc (chunks) else counter (parents); flags_start is or-ed into the first
 * block's flags and flags_end into the last's. Lane i's chaining value
 * goes to out + 32 i. Kernels read every input before writing any output.
 */
#ifndef BLAKE3_INT_H
#define BLAKE3_INT_H

#include <stddef.h>
#include <stdint.h>

enum {
	BLAKE3_CHUNK_START	= 1 << 0,
	BLAKE3_CHUNK_END	= 1 << 1,
	BLAKE3_PARENT		= 1 << 2,
	BLAKE3_ROOT		= 1 << 3,
	BLAKE3_KEYED_HASH	= 1 << 4,
	BLAKE3_DERIVE_KEY_CONTEXT = 1 << 5,
	BLAKE3_DERIVE_KEY_MATERIAL = 1 << 6,
};

/* The IV (SHA-256's). */
extern const uint32_t	blake3_iv[8];

/* The message word order of each of the 7 rounds: static, so a kernel's
 * unrolled rounds index their message registers by constants. */
static const uint8_t blake3_schedule[7][16] = {
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
	{ 2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8 },
	{ 3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1 },
	{ 10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6 },
	{ 12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4 },
	{ 9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7 },
	{ 11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13 },
};

/* x86 kernels; each is built with its own target attribute, so the file
 * compiles on any x86-64 compiler and runs only where the CPU has it. */
void	blake3_sse41_hash4(const uint8_t *const *in, size_t blocks,
	    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
	    uint8_t flags_start, uint8_t flags_end, uint8_t *out);
void	blake3_avx2_hash8(const uint8_t *const *in, size_t blocks,
	    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
	    uint8_t flags_start, uint8_t flags_end, uint8_t *out);
void	blake3_avx512_hash16(const uint8_t *const *in, size_t blocks,
	    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
	    uint8_t flags_start, uint8_t flags_end, uint8_t *out);

#endif

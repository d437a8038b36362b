/*
 * blake3_avx2.c: the 8-lane BLAKE3 kernel (AVX2): eight inputs hashed at
 * once, one 32-bit word of each in the eight lanes of a 256-bit register
 * (blake3_int.h has the contract; blake3.c calls it when the CPU has it).
 * The target attribute lets any x86-64 compiler build it without flags.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "blake3_int.h"

#define TGT	__attribute__((target("avx2")))
#define INL	static inline __attribute__((always_inline, target("avx2")))

typedef __m256i	vec;

INL vec add(vec a, vec b) { return _mm256_add_epi32(a, b); }
INL vec xor(vec a, vec b) { return _mm256_xor_si256(a, b); }
INL vec set1(uint32_t x) { return _mm256_set1_epi32((int)x); }

INL vec
rot16(vec x)
{
	return _mm256_shuffle_epi8(x, _mm256_set_epi8(
	    13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2,
	    13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2));
}

INL vec
rot12(vec x)
{
	return _mm256_or_si256(_mm256_srli_epi32(x, 12),
	    _mm256_slli_epi32(x, 20));
}

INL vec
rot8(vec x)
{
	return _mm256_shuffle_epi8(x, _mm256_set_epi8(
	    12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1,
	    12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1));
}

INL vec
rot7(vec x)
{
	return _mm256_or_si256(_mm256_srli_epi32(x, 7),
	    _mm256_slli_epi32(x, 25));
}

#include "blake3_round.h"

/* Rows r[0..8) (eight words each) become columns, in place: its own
 * inverse, so it serves the message (in) and the chaining values (out). */
INL void
transpose8(vec *r)
{
	vec t[8], u[8];

	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	for (int i = 0; i < 2; i++) {
		u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1],
		    t[4 * i + 3]);
		u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1],
		    t[4 * i + 3]);
	}
	for (int k = 0; k < 4; k++) {
		r[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
		r[4 + k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
	}
}

TGT void
blake3_avx2_hash8(const uint8_t *const *in, size_t blocks,
    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	vec h[8], v[16], m[16], clo, chi;
	uint32_t lo[8], hi[8];

	for (int i = 0; i < 8; i++) {
		uint64_t c = counter + (inc ? (uint64_t)i : 0);

		lo[i] = (uint32_t)c;
		hi[i] = (uint32_t)(c >> 32);
	}
	clo = _mm256_loadu_si256((const vec *)(const void *)lo);
	chi = _mm256_loadu_si256((const vec *)(const void *)hi);
	for (int i = 0; i < 8; i++)
		h[i] = set1(key[i]);
	for (size_t b = 0; b < blocks; b++) {
		uint8_t f = flags | (b == 0 ? flags_start : 0) |
		    (b + 1 == blocks ? flags_end : 0);

		for (int i = 0; i < 8; i++) {
			m[i] = _mm256_loadu_si256((const vec *)(const void *)
			    (in[i] + 64 * b));
			m[8 + i] = _mm256_loadu_si256((const vec *)
			    (const void *)(in[i] + 64 * b + 32));
		}
		transpose8(m);
		transpose8(m + 8);
		compress(h, v, m, clo, chi, f);
	}
	transpose8(h);
	for (int i = 0; i < 8; i++)
		_mm256_storeu_si256((vec *)(void *)(out + 32 * i), h[i]);
}
#endif

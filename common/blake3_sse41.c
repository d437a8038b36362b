/*
 * blake3_sse41.c: the 4-lane BLAKE3 kernel (SSE4.1): four inputs hashed at
 * once, one 32-bit word of each in the four lanes of a 128-bit register
 * (blake3_int.h has the contract; blake3.c calls it when the CPU has it).
 * The target attribute lets any x86-64 compiler build it without flags.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "blake3_int.h"

#define TGT	__attribute__((target("sse4.1")))
#define INL	static inline __attribute__((always_inline, target("sse4.1")))

typedef __m128i	vec;

INL vec add(vec a, vec b) { return _mm_add_epi32(a, b); }
INL vec xor(vec a, vec b) { return _mm_xor_si128(a, b); }
INL vec set1(uint32_t x) { return _mm_set1_epi32((int)x); }

INL vec
rot16(vec x)
{
	return _mm_shuffle_epi8(x, _mm_set_epi8(13, 12, 15, 14, 9, 8, 11, 10,
	    5, 4, 7, 6, 1, 0, 3, 2));
}

INL vec
rot12(vec x)
{
	return _mm_or_si128(_mm_srli_epi32(x, 12), _mm_slli_epi32(x, 20));
}

INL vec
rot8(vec x)
{
	return _mm_shuffle_epi8(x, _mm_set_epi8(12, 15, 14, 13, 8, 11, 10, 9,
	    4, 7, 6, 5, 0, 3, 2, 1));
}

INL vec
rot7(vec x)
{
	return _mm_or_si128(_mm_srli_epi32(x, 7), _mm_slli_epi32(x, 25));
}

#include "blake3_round.h"

/* Rows a..d (one per input, four words each) become columns. */
INL void
transpose4(vec *a, vec *b, vec *c, vec *d)
{
	vec t0 = _mm_unpacklo_epi32(*a, *b), t1 = _mm_unpacklo_epi32(*c, *d);
	vec t2 = _mm_unpackhi_epi32(*a, *b), t3 = _mm_unpackhi_epi32(*c, *d);

	*a = _mm_unpacklo_epi64(t0, t1);
	*b = _mm_unpackhi_epi64(t0, t1);
	*c = _mm_unpacklo_epi64(t2, t3);
	*d = _mm_unpackhi_epi64(t2, t3);
}

/* Block b of each input: m[w] holds word w of inputs 0..3. */
INL void
load_msg(const uint8_t *const *in, size_t b, vec m[16])
{
	for (int j = 0; j < 4; j++) {
		for (int i = 0; i < 4; i++)
			m[4 * j + i] = _mm_loadu_si128((const vec *)(const void *)
			    (in[i] + 64 * b + 16 * j));
		transpose4(&m[4 * j], &m[4 * j + 1], &m[4 * j + 2],
		    &m[4 * j + 3]);
	}
}

TGT void
blake3_sse41_hash4(const uint8_t *const *in, size_t blocks,
    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	vec h[8], v[16], m[16], clo, chi;
	uint32_t lo[4], hi[4];

	for (int i = 0; i < 4; i++) {
		uint64_t c = counter + (inc ? (uint64_t)i : 0);

		lo[i] = (uint32_t)c;
		hi[i] = (uint32_t)(c >> 32);
	}
	clo = _mm_loadu_si128((const vec *)(const void *)lo);
	chi = _mm_loadu_si128((const vec *)(const void *)hi);
	for (int i = 0; i < 8; i++)
		h[i] = set1(key[i]);
	for (size_t b = 0; b < blocks; b++) {
		uint8_t f = flags | (b == 0 ? flags_start : 0) |
		    (b + 1 == blocks ? flags_end : 0);

		load_msg(in, b, m);
		compress(h, v, m, clo, chi, f);
	}
	transpose4(&h[0], &h[1], &h[2], &h[3]);
	transpose4(&h[4], &h[5], &h[6], &h[7]);
	for (int i = 0; i < 4; i++) {
		_mm_storeu_si128((vec *)(void *)(out + 32 * i), h[i]);
		_mm_storeu_si128((vec *)(void *)(out + 32 * i + 16), h[4 + i]);
	}
}
#endif

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

#define LOADU(p)	_mm_loadu_si128((const vec *)(const void *)(p))
#define STOREU(p, x)	_mm_storeu_si128((vec *)(void *)(p), (x))

/* Rows a..d (one per input, four words each) become columns, in place. */
#define TRANSPOSE4(a, b, c, d) do {					\
	vec t0_ = _mm_unpacklo_epi32(a, b), t1_ = _mm_unpacklo_epi32(c, d); \
	vec t2_ = _mm_unpackhi_epi32(a, b), t3_ = _mm_unpackhi_epi32(c, d); \
	a = _mm_unpacklo_epi64(t0_, t1_);				\
	b = _mm_unpackhi_epi64(t0_, t1_);				\
	c = _mm_unpacklo_epi64(t2_, t3_);				\
	d = _mm_unpackhi_epi64(t2_, t3_);				\
} while (0)

TGT void
blake3_sse41_hash4(const uint8_t *const *in, size_t blocks,
    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	const uint8_t *p0 = in[0], *p1 = in[1], *p2 = in[2], *p3 = in[3];
	B3_LANES(4);

	for (size_t b = 0; b < blocks; b++) {
		uint8_t f = B3_FLAGS(b);
		size_t o = 64 * b;

		B3_PREFETCH(4, o);
		vec m0 = LOADU(p0 + o), m1 = LOADU(p1 + o), m2 = LOADU(p2 + o),
		    m3 = LOADU(p3 + o);
		vec m4 = LOADU(p0 + o + 16), m5 = LOADU(p1 + o + 16),
		    m6 = LOADU(p2 + o + 16), m7 = LOADU(p3 + o + 16);
		vec m8 = LOADU(p0 + o + 32), m9 = LOADU(p1 + o + 32),
		    m10 = LOADU(p2 + o + 32), m11 = LOADU(p3 + o + 32);
		vec m12 = LOADU(p0 + o + 48), m13 = LOADU(p1 + o + 48),
		    m14 = LOADU(p2 + o + 48), m15 = LOADU(p3 + o + 48);

		TRANSPOSE4(m0, m1, m2, m3);
		TRANSPOSE4(m4, m5, m6, m7);
		TRANSPOSE4(m8, m9, m10, m11);
		TRANSPOSE4(m12, m13, m14, m15);
		B3_COMPRESS(f);
	}
	TRANSPOSE4(h0, h1, h2, h3);
	TRANSPOSE4(h4, h5, h6, h7);
	STOREU(out, h0);
	STOREU(out + 16, h4);
	STOREU(out + 32, h1);
	STOREU(out + 48, h5);
	STOREU(out + 64, h2);
	STOREU(out + 80, h6);
	STOREU(out + 96, h3);
	STOREU(out + 112, h7);
}
#endif

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

#define LOADU(p)	_mm256_loadu_si256((const vec *)(const void *)(p))
#define STOREU(p, x)	_mm256_storeu_si256((vec *)(void *)(p), (x))

/* Rows r0..r7 (eight words each) become columns, in place: its own
 * inverse, so it serves the message (in) and the chaining values (out). */
#define TRANSPOSE8(r0, r1, r2, r3, r4, r5, r6, r7) do {			\
	vec a0_ = _mm256_unpacklo_epi32(r0, r1), a1_ = _mm256_unpackhi_epi32(r0, r1); \
	vec a2_ = _mm256_unpacklo_epi32(r2, r3), a3_ = _mm256_unpackhi_epi32(r2, r3); \
	vec a4_ = _mm256_unpacklo_epi32(r4, r5), a5_ = _mm256_unpackhi_epi32(r4, r5); \
	vec a6_ = _mm256_unpacklo_epi32(r6, r7), a7_ = _mm256_unpackhi_epi32(r6, r7); \
	vec b0_ = _mm256_unpacklo_epi64(a0_, a2_), b1_ = _mm256_unpackhi_epi64(a0_, a2_); \
	vec b2_ = _mm256_unpacklo_epi64(a1_, a3_), b3_ = _mm256_unpackhi_epi64(a1_, a3_); \
	vec b4_ = _mm256_unpacklo_epi64(a4_, a6_), b5_ = _mm256_unpackhi_epi64(a4_, a6_); \
	vec b6_ = _mm256_unpacklo_epi64(a5_, a7_), b7_ = _mm256_unpackhi_epi64(a5_, a7_); \
	r0 = _mm256_permute2x128_si256(b0_, b4_, 0x20);			\
	r1 = _mm256_permute2x128_si256(b1_, b5_, 0x20);			\
	r2 = _mm256_permute2x128_si256(b2_, b6_, 0x20);			\
	r3 = _mm256_permute2x128_si256(b3_, b7_, 0x20);			\
	r4 = _mm256_permute2x128_si256(b0_, b4_, 0x31);			\
	r5 = _mm256_permute2x128_si256(b1_, b5_, 0x31);			\
	r6 = _mm256_permute2x128_si256(b2_, b6_, 0x31);			\
	r7 = _mm256_permute2x128_si256(b3_, b7_, 0x31);			\
} while (0)

TGT void
blake3_avx2_hash8(const uint8_t *const *in, size_t blocks,
    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	const uint8_t *p0 = in[0], *p1 = in[1], *p2 = in[2], *p3 = in[3],
	    *p4 = in[4], *p5 = in[5], *p6 = in[6], *p7 = in[7];
	B3_LANES(8);

	for (size_t b = 0; b < blocks; b++) {
		uint8_t f = B3_FLAGS(b);
		size_t o = 64 * b;

		B3_PREFETCH(8, o);
		vec m0 = LOADU(p0 + o), m1 = LOADU(p1 + o), m2 = LOADU(p2 + o),
		    m3 = LOADU(p3 + o), m4 = LOADU(p4 + o), m5 = LOADU(p5 + o),
		    m6 = LOADU(p6 + o), m7 = LOADU(p7 + o);
		vec m8 = LOADU(p0 + o + 32), m9 = LOADU(p1 + o + 32),
		    m10 = LOADU(p2 + o + 32), m11 = LOADU(p3 + o + 32),
		    m12 = LOADU(p4 + o + 32), m13 = LOADU(p5 + o + 32),
		    m14 = LOADU(p6 + o + 32), m15 = LOADU(p7 + o + 32);

		TRANSPOSE8(m0, m1, m2, m3, m4, m5, m6, m7);
		TRANSPOSE8(m8, m9, m10, m11, m12, m13, m14, m15);
		B3_COMPRESS(f);
	}
	TRANSPOSE8(h0, h1, h2, h3, h4, h5, h6, h7);
	STOREU(out, h0);
	STOREU(out + 32, h1);
	STOREU(out + 64, h2);
	STOREU(out + 96, h3);
	STOREU(out + 128, h4);
	STOREU(out + 160, h5);
	STOREU(out + 192, h6);
	STOREU(out + 224, h7);
}
#endif

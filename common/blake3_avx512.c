/*
 * blake3_avx512.c: the 16-lane BLAKE3 kernel (AVX-512F): sixteen inputs
 * hashed at once, one 32-bit word of each in the sixteen lanes of a
 * 512-bit register, with the native rotate (blake3_int.h has the contract;
 * blake3.c calls it when the CPU has it). The target attribute lets any
 * x86-64 compiler build it without flags.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "blake3_int.h"

#define TGT	__attribute__((target("avx512f")))
#define INL	static inline __attribute__((always_inline, target("avx512f")))

typedef __m512i	vec;

INL vec add(vec a, vec b) { return _mm512_add_epi32(a, b); }
INL vec xor(vec a, vec b) { return _mm512_xor_si512(a, b); }
INL vec set1(uint32_t x) { return _mm512_set1_epi32((int)x); }
INL vec rot16(vec x) { return _mm512_ror_epi32(x, 16); }
INL vec rot12(vec x) { return _mm512_ror_epi32(x, 12); }
INL vec rot8(vec x) { return _mm512_ror_epi32(x, 8); }
INL vec rot7(vec x) { return _mm512_ror_epi32(x, 7); }

#include "blake3_round.h"

#define LOADU(p)	_mm512_loadu_si512((const void *)(p))

/* Rows r0..r15 (sixteen words each) become columns, in place. Within each
 * 128-bit lane, 4x4 blocks transpose by unpacks; then two rounds of
 * 128-bit lane shuffles (0x88: lanes 0 and 2 of each source, 0xdd: lanes
 * 1 and 3) move every block to its place. */
#define UNPACK4(r0, r1, r2, r3) do {					\
	vec t0_ = _mm512_unpacklo_epi32(r0, r1), t1_ = _mm512_unpackhi_epi32(r0, r1); \
	vec t2_ = _mm512_unpacklo_epi32(r2, r3), t3_ = _mm512_unpackhi_epi32(r2, r3); \
	r0 = _mm512_unpacklo_epi64(t0_, t2_);				\
	r1 = _mm512_unpackhi_epi64(t0_, t2_);				\
	r2 = _mm512_unpacklo_epi64(t1_, t3_);				\
	r3 = _mm512_unpackhi_epi64(t1_, t3_);				\
} while (0)
/* a, b, c, d: word k of lane L (= 4 L + k) of groups 0..3, in lane L;
 * out: a = words k, b = 4 + k, c = 8 + k, d = 12 + k, lanes = rows. */
#define LANES4(a, b, c, d) do {						\
	vec s0_ = _mm512_shuffle_i32x4(a, b, 0x88);			\
	vec s1_ = _mm512_shuffle_i32x4(a, b, 0xdd);			\
	vec s2_ = _mm512_shuffle_i32x4(c, d, 0x88);			\
	vec s3_ = _mm512_shuffle_i32x4(c, d, 0xdd);			\
	a = _mm512_shuffle_i32x4(s0_, s2_, 0x88);			\
	c = _mm512_shuffle_i32x4(s0_, s2_, 0xdd);			\
	b = _mm512_shuffle_i32x4(s1_, s3_, 0x88);			\
	d = _mm512_shuffle_i32x4(s1_, s3_, 0xdd);			\
} while (0)
#define TRANSPOSE16(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11,	\
    r12, r13, r14, r15) do {						\
	UNPACK4(r0, r1, r2, r3);					\
	UNPACK4(r4, r5, r6, r7);					\
	UNPACK4(r8, r9, r10, r11);					\
	UNPACK4(r12, r13, r14, r15);					\
	LANES4(r0, r4, r8, r12);					\
	LANES4(r1, r5, r9, r13);					\
	LANES4(r2, r6, r10, r14);					\
	LANES4(r3, r7, r11, r15);					\
} while (0)

TGT void
blake3_avx512_hash16(const uint8_t *const *in, size_t blocks,
    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	B3_LANES(16);

	for (size_t b = 0; b < blocks; b++) {
		uint8_t f = B3_FLAGS(b);
		size_t o = 64 * b;

		B3_PREFETCH(16, o);
		vec m0 = LOADU(in[0] + o), m1 = LOADU(in[1] + o),
		    m2 = LOADU(in[2] + o), m3 = LOADU(in[3] + o),
		    m4 = LOADU(in[4] + o), m5 = LOADU(in[5] + o),
		    m6 = LOADU(in[6] + o), m7 = LOADU(in[7] + o),
		    m8 = LOADU(in[8] + o), m9 = LOADU(in[9] + o),
		    m10 = LOADU(in[10] + o), m11 = LOADU(in[11] + o),
		    m12 = LOADU(in[12] + o), m13 = LOADU(in[13] + o),
		    m14 = LOADU(in[14] + o), m15 = LOADU(in[15] + o);

		TRANSPOSE16(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11,
		    m12, m13, m14, m15);
		B3_COMPRESS(f);
	}
	{
		/* Rows 8..15 repeat 0..7: column i's low half is lane i's CV. */
		vec g0 = h0, g1 = h1, g2 = h2, g3 = h3, g4 = h4, g5 = h5,
		    g6 = h6, g7 = h7;
		__m256i *o = (__m256i *)(void *)out;

		TRANSPOSE16(h0, h1, h2, h3, h4, h5, h6, h7, g0, g1, g2, g3,
		    g4, g5, g6, g7);
		_mm256_storeu_si256(o + 0, _mm512_castsi512_si256(h0));
		_mm256_storeu_si256(o + 1, _mm512_castsi512_si256(h1));
		_mm256_storeu_si256(o + 2, _mm512_castsi512_si256(h2));
		_mm256_storeu_si256(o + 3, _mm512_castsi512_si256(h3));
		_mm256_storeu_si256(o + 4, _mm512_castsi512_si256(h4));
		_mm256_storeu_si256(o + 5, _mm512_castsi512_si256(h5));
		_mm256_storeu_si256(o + 6, _mm512_castsi512_si256(h6));
		_mm256_storeu_si256(o + 7, _mm512_castsi512_si256(h7));
		_mm256_storeu_si256(o + 8, _mm512_castsi512_si256(g0));
		_mm256_storeu_si256(o + 9, _mm512_castsi512_si256(g1));
		_mm256_storeu_si256(o + 10, _mm512_castsi512_si256(g2));
		_mm256_storeu_si256(o + 11, _mm512_castsi512_si256(g3));
		_mm256_storeu_si256(o + 12, _mm512_castsi512_si256(g4));
		_mm256_storeu_si256(o + 13, _mm512_castsi512_si256(g5));
		_mm256_storeu_si256(o + 14, _mm512_castsi512_si256(g6));
		_mm256_storeu_si256(o + 15, _mm512_castsi512_si256(g7));
	}
}
#endif

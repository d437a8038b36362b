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

/* Rows r[0..16) (sixteen words each) become columns, in place. Within
 * each 128-bit lane, 4x4 blocks transpose by unpacks; the lanes then move
 * to their places by two rounds of 128-bit shuffles. */
INL void
transpose16(vec *r)
{
	vec t[16], u[16], s[16];

	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	/* u[4 q + k]: word 4 L + k of rows 4 q .. 4 q + 3 in lane L. */
	for (int q = 0; q < 4; q++) {
		u[4 * q] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
		u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
		u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1],
		    t[4 * q + 3]);
		u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1],
		    t[4 * q + 3]);
	}
	for (int k = 0; k < 4; k++) {
		/* s[4 k + 0]: lanes 0, 2 of groups 0 and 1; + 1: lanes 1, 3;
		 * + 2, + 3: the same of groups 2 and 3. */
		s[4 * k] = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x88);
		s[4 * k + 1] = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xdd);
		s[4 * k + 2] = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x88);
		s[4 * k + 3] = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xdd);
		r[k] = _mm512_shuffle_i32x4(s[4 * k], s[4 * k + 2], 0x88);
		r[8 + k] = _mm512_shuffle_i32x4(s[4 * k], s[4 * k + 2], 0xdd);
		r[4 + k] = _mm512_shuffle_i32x4(s[4 * k + 1], s[4 * k + 3],
		    0x88);
		r[12 + k] = _mm512_shuffle_i32x4(s[4 * k + 1], s[4 * k + 3],
		    0xdd);
	}
}

TGT void
blake3_avx512_hash16(const uint8_t *const *in, size_t blocks,
    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	vec h[16], v[16], m[16], clo, chi;
	uint32_t lo[16], hi[16];

	for (int i = 0; i < 16; i++) {
		uint64_t c = counter + (inc ? (uint64_t)i : 0);

		lo[i] = (uint32_t)c;
		hi[i] = (uint32_t)(c >> 32);
	}
	clo = _mm512_loadu_si512(lo);
	chi = _mm512_loadu_si512(hi);
	for (int i = 0; i < 8; i++)
		h[i] = set1(key[i]);
	for (size_t b = 0; b < blocks; b++) {
		uint8_t f = flags | (b == 0 ? flags_start : 0) |
		    (b + 1 == blocks ? flags_end : 0);

		for (int i = 0; i < 16; i++)
			m[i] = _mm512_loadu_si512(in[i] + 64 * b);
		transpose16(m);
		compress(h, v, m, clo, chi, f);
	}
	/* Rows 8..15 repeat 0..7, so column i's low half is lane i's CV. */
	for (int i = 0; i < 8; i++)
		h[8 + i] = h[i];
	transpose16(h);
	for (int i = 0; i < 16; i++)
		_mm256_storeu_si256((__m256i *)(void *)(out + 32 * i),
		    _mm512_castsi512_si256(h[i]));
}
#endif

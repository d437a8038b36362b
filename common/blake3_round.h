/*
 * blake3_round.h: the rounds of the BLAKE3 compression function over lane
 * vectors, included by each SIMD kernel (blake3_sse41.c, blake3_avx2.c,
 * blake3_avx512.c) after it defines its vector type `vec`, the inline
 * attribute INL (always_inline plus its target) and add, xor, set1, rot16,
 * rot12, rot8 and rot7 for that width. Lane i of every vector belongs to
 * input i; the code is the same at every width.
 */
#ifndef BLAKE3_ROUND_H
#define BLAKE3_ROUND_H

INL void
g(vec *v, int a, int b, int c, int d, vec x, vec y)
{
	v[a] = add(add(v[a], v[b]), x);
	v[d] = rot16(xor(v[d], v[a]));
	v[c] = add(v[c], v[d]);
	v[b] = rot12(xor(v[b], v[c]));
	v[a] = add(add(v[a], v[b]), y);
	v[d] = rot8(xor(v[d], v[a]));
	v[c] = add(v[c], v[d]);
	v[b] = rot7(xor(v[b], v[c]));
}

INL void
round_r(vec *v, const vec *m, int r)
{
	const uint8_t *s = blake3_schedule[r];

	g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
	g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
	g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
	g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
	g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
	g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
	g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
	g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
}

/* One full 64-byte block in every lane: h = the new chaining values. */
INL void
compress(vec *h, vec *v, const vec *m, vec clo, vec chi, uint8_t flags)
{
	for (int i = 0; i < 8; i++)
		v[i] = h[i];
	v[8] = set1(blake3_iv[0]);
	v[9] = set1(blake3_iv[1]);
	v[10] = set1(blake3_iv[2]);
	v[11] = set1(blake3_iv[3]);
	v[12] = clo;
	v[13] = chi;
	v[14] = set1(64);
	v[15] = set1(flags);
	round_r(v, m, 0);
	round_r(v, m, 1);
	round_r(v, m, 2);
	round_r(v, m, 3);
	round_r(v, m, 4);
	round_r(v, m, 5);
	round_r(v, m, 6);
	for (int i = 0; i < 8; i++)
		h[i] = xor(v[i], v[i + 8]);
}

#endif

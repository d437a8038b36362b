/*
 * blake3_round.h: the BLAKE3 compression function written once for every
 * width, included by blake3.c (one 32-bit word) and each SIMD kernel
 * (blake3_sse41.c, blake3_avx2.c, blake3_avx512.c: one word per lane).
 * The includer defines its type `vec` and the operations add, xor, set1,
 * rot16, rot12, rot8 and rot7 on it (a kernel also LOADU, an unaligned
 * load of a vector from memory); B3_COMPRESS then works on variables
 * it finds in scope: chaining values h0..h7, message words m0..m15, the
 * counter halves clo, chi and the block length blen. Named variables,
 * not arrays, so the compiler keeps the state in registers, and the
 * message schedule is spelled out so every index is a constant.
 */
#ifndef BLAKE3_ROUND_H
#define BLAKE3_ROUND_H

#define B3_G(a, b, c, d, x, y) do {					\
	a = add(add(a, b), x);						\
	d = rot16(xor(d, a));						\
	c = add(c, d);							\
	b = rot12(xor(b, c));						\
	a = add(add(a, b), y);						\
	d = rot8(xor(d, a));						\
	c = add(c, d);							\
	b = rot7(xor(b, c));						\
} while (0)

/* One round: columns, then diagonals, the message words in order s. */
#define B3_ROUND(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12,	\
    s13, s14, s15) do {							\
	B3_G(v0, v4, v8, v12, m##s0, m##s1);				\
	B3_G(v1, v5, v9, v13, m##s2, m##s3);				\
	B3_G(v2, v6, v10, v14, m##s4, m##s5);				\
	B3_G(v3, v7, v11, v15, m##s6, m##s7);				\
	B3_G(v0, v5, v10, v15, m##s8, m##s9);				\
	B3_G(v1, v6, v11, v12, m##s10, m##s11);				\
	B3_G(v2, v7, v8, v13, m##s12, m##s13);				\
	B3_G(v3, v4, v9, v14, m##s14, m##s15);				\
} while (0)

/* The 7 rounds on v0..v15 (the schedule of the paper, round by round). */
#define B3_ROUNDS() do {						\
	B3_ROUND(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);	\
	B3_ROUND(2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8);	\
	B3_ROUND(3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1);	\
	B3_ROUND(10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6);	\
	B3_ROUND(12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4);	\
	B3_ROUND(9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7);	\
	B3_ROUND(11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13);	\
} while (0)

/* Declare and fill the state v0..v15 for one block with these flags. */
#define B3_STATE(flags)							\
	vec v0 = h0, v1 = h1, v2 = h2, v3 = h3, v4 = h4, v5 = h5,	\
	    v6 = h6, v7 = h7, v8 = set1(blake3_iv[0]),			\
	    v9 = set1(blake3_iv[1]), v10 = set1(blake3_iv[2]),		\
	    v11 = set1(blake3_iv[3]), v12 = clo, v13 = chi,		\
	    v14 = set1(blen), v15 = set1(flags)

/* One block: h0..h7 become the new chaining values. */
#define B3_COMPRESS(flags) do {						\
	B3_STATE(flags);						\
	B3_ROUNDS();							\
	h0 = xor(v0, v8); h1 = xor(v1, v9); h2 = xor(v2, v10);		\
	h3 = xor(v3, v11); h4 = xor(v4, v12); h5 = xor(v5, v13);	\
	h6 = xor(v6, v14); h7 = xor(v7, v15);				\
} while (0)

/*
 * A kernel's frame (blake3_int.h's contract; its arguments in scope):
 * h0..h7 = the key in every lane, clo and chi = lane i's counter (counter +
 * i for chunks, counter for parents), blen = 64.
 */
#define B3_LANES(lanes)							\
	vec h0 = set1(key[0]), h1 = set1(key[1]), h2 = set1(key[2]),	\
	    h3 = set1(key[3]), h4 = set1(key[4]), h5 = set1(key[5]),	\
	    h6 = set1(key[6]), h7 = set1(key[7]);			\
	uint32_t lo_[lanes], hi_[lanes];				\
	for (int i_ = 0; i_ < (lanes); i_++) {				\
		uint64_t c_ = counter + (inc ? (uint64_t)i_ : 0);	\
									\
		lo_[i_] = (uint32_t)c_;					\
		hi_[i_] = (uint32_t)(c_ >> 32);				\
	}								\
	vec clo = LOADU(lo_), chi = LOADU(hi_);				\
	const uint32_t blen = 64

/* Block b's flags: flags_start on the first, flags_end on the last. */
#define B3_FLAGS(b)							\
	(uint8_t)(flags | ((b) == 0 ? flags_start : 0) |		\
	    ((b) + 1 == blocks ? flags_end : 0))

/* Prefetch each lane's input 256 bytes past offset o: sixteen streams
 * 1 KiB apart are more than the hardware prefetcher follows well
 * (measured on an AMD EPYC: a 64 MiB input went from memory-bound to
 * near the in-cache rate; 128 and 512 were slower). */
#define B3_PREFETCH(lanes, o) do {					\
	for (int i_ = 0; i_ < (lanes); i_++)				\
		_mm_prefetch((const char *)in[i_] + (o) + 256,		\
		    _MM_HINT_T0);					\
} while (0)

#endif

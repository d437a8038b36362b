/*
 * blake3.c: BLAKE3 from its paper (BLAKE3-team/BLAKE3-specs): the portable
 * compression function, the chunk state, the incremental hasher with its
 * stack of subtree chaining values, the whole-buffer tree, and the choice
 * of SIMD kernel (blake3_sse41.c, blake3_avx2.c, blake3_avx512.c) by CPU.
 *
 * The speed comes from one idea of the paper: full chunks at the same tree
 * level are independent, so a kernel hashes 4, 8 or 16 of them in lanes,
 * and the parents above them likewise, level by level (subtree_batch).
 * Everything else (partial chunks, the tree's right edge, the root and its
 * extended output) is portable C, a small share of the work on big inputs.
 */
#include <stdatomic.h>
#include <string.h>

#include "blake3.h"
#include "blake3_int.h"

const uint32_t blake3_iv[8] = {
	0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
	0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
};

/* Chunks hashed per kernel batch before the parents above them: a power of
 * two, so a batch is a complete subtree; its CVs live on the stack. */
#define BATCH_CHUNKS	512

/* ---- paths ---------------------------------------------------------- */

enum level { LVL_PORTABLE, LVL_SSE41, LVL_AVX2, LVL_AVX512 };

static const char *const level_names[] = {
	[LVL_PORTABLE] = "portable", [LVL_SSE41] = "sse41",
	[LVL_AVX2] = "avx2", [LVL_AVX512] = "avx512",
};

static _Atomic int active = -1;		/* the level in use, -1 until chosen */

/* The best level this CPU (and its OS: libgcc checks XCR0) runs. */
static int
level_detect(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2"))
		return LVL_AVX512;
	if (__builtin_cpu_supports("avx2"))
		return LVL_AVX2;
	if (__builtin_cpu_supports("sse4.1"))
		return LVL_SSE41;
#endif
	return LVL_PORTABLE;
}

static int
level_get(void)
{
	int l = atomic_load_explicit(&active, memory_order_relaxed);

	if (l < 0) {
		l = level_detect();
		atomic_store_explicit(&active, l, memory_order_relaxed);
	}
	return l;
}

const char *
blake3_impl(void)
{
	return level_names[level_get()];
}

int
blake3_use(const char *impl)
{
	int best = level_detect();

	if (impl == NULL) {
		atomic_store_explicit(&active, best, memory_order_relaxed);
		return 0;
	}
	for (int l = 0; l <= LVL_AVX512; l++) {
		if (strcmp(impl, level_names[l]) != 0)
			continue;
		if (l > best)
			return -1;
		atomic_store_explicit(&active, l, memory_order_relaxed);
		return 0;
	}
	return -1;
}

/* ---- the compression function (portable) ---------------------------- */

static inline uint32_t
load32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static inline void
store32(uint8_t *p, uint32_t w)
{
	p[0] = (uint8_t)w;
	p[1] = (uint8_t)(w >> 8);
	p[2] = (uint8_t)(w >> 16);
	p[3] = (uint8_t)(w >> 24);
}

static inline uint32_t
rotr32(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

/* The portable width of blake3_round.h: one 32-bit word. */
typedef uint32_t vec;

static inline vec add(vec a, vec b) { return a + b; }
static inline vec xor(vec a, vec b) { return a ^ b; }
static inline vec set1(uint32_t x) { return x; }
static inline vec rot16(vec x) { return rotr32(x, 16); }
static inline vec rot12(vec x) { return rotr32(x, 12); }
static inline vec rot8(vec x) { return rotr32(x, 8); }
static inline vec rot7(vec x) { return rotr32(x, 7); }

#include "blake3_round.h"

/* The 16-word state after the 7 rounds (not yet fed forward). */
static void
compress_state(uint32_t v[16], const uint32_t cv[8], const uint8_t block[64],
    uint8_t block_len, uint64_t counter, uint8_t flags)
{
	vec h0 = cv[0], h1 = cv[1], h2 = cv[2], h3 = cv[3], h4 = cv[4],
	    h5 = cv[5], h6 = cv[6], h7 = cv[7];
	vec clo = (uint32_t)counter, chi = (uint32_t)(counter >> 32);
	vec blen = block_len;
	vec m0 = load32(block), m1 = load32(block + 4),
	    m2 = load32(block + 8), m3 = load32(block + 12),
	    m4 = load32(block + 16), m5 = load32(block + 20),
	    m6 = load32(block + 24), m7 = load32(block + 28),
	    m8 = load32(block + 32), m9 = load32(block + 36),
	    m10 = load32(block + 40), m11 = load32(block + 44),
	    m12 = load32(block + 48), m13 = load32(block + 52),
	    m14 = load32(block + 56), m15 = load32(block + 60);
	B3_STATE(flags);

	B3_ROUNDS();
	v[0] = v0; v[1] = v1; v[2] = v2; v[3] = v3;
	v[4] = v4; v[5] = v5; v[6] = v6; v[7] = v7;
	v[8] = v8; v[9] = v9; v[10] = v10; v[11] = v11;
	v[12] = v12; v[13] = v13; v[14] = v14; v[15] = v15;
}

/* cv = the first 8 output words of compressing block under cv. */
static void
compress_cv(uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
    uint64_t counter, uint8_t flags)
{
	uint32_t v[16];

	compress_state(v, cv, block, block_len, counter, flags);
	for (int i = 0; i < 8; i++)
		cv[i] = v[i] ^ v[i + 8];
}

static void
words_to_bytes(const uint32_t w[8], uint8_t out[32])
{
	for (int i = 0; i < 8; i++)
		store32(out + 4 * i, w[i]);
}

static void
bytes_to_words(const uint8_t in[32], uint32_t w[8])
{
	for (int i = 0; i < 8; i++)
		w[i] = load32(in + 4 * i);
}

/* ---- many inputs at once -------------------------------------------- */

/* One input on the portable path: the kernels' contract for one lane. */
static void
hash_one(const uint8_t *in, size_t blocks, const uint32_t key[8],
    uint64_t counter, uint8_t flags, uint8_t flags_start, uint8_t flags_end,
    uint8_t out[32])
{
	uint32_t cv[8];

	memcpy(cv, key, 32);
	for (size_t b = 0; b < blocks; b++) {
		uint8_t f = flags;

		if (b == 0)
			f |= flags_start;
		if (b + 1 == blocks)
			f |= flags_end;
		compress_cv(cv, in + 64 * b, 64, counter, f);
	}
	words_to_bytes(cv, out);
}

typedef void kernel_fn(const uint8_t *const *, size_t, const uint32_t *,
    uint64_t, int, uint8_t, uint8_t, uint8_t, uint8_t *);

/* Fewer than a kernel's lanes: the last input repeated in the spare lanes,
 * their outputs dropped (one wide call beats narrow ones and portable). */
static void
hash_padded(kernel_fn *fn, size_t lanes, const uint8_t *const *in, size_t n,
    size_t blocks, const uint32_t key[8], uint64_t counter, int inc,
    uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	const uint8_t *ptr[16];
	uint8_t tmp[16 * 32];

	for (size_t i = 0; i < lanes; i++)
		ptr[i] = in[i < n ? i : n - 1];
	fn(ptr, blocks, key, counter, inc, flags, flags_start, flags_end, tmp);
	memcpy(out, tmp, 32 * n);
}

/* n inputs of `blocks` full blocks each: the widest kernel the level
 * allows, a padded call for a tail that fills over a quarter of its
 * lanes, narrower kernels, then portable (blake3_int.h's contract). */
static void
hash_many(const uint8_t *const *in, size_t n, size_t blocks,
    const uint32_t key[8], uint64_t counter, int inc, uint8_t flags,
    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
	int lvl = level_get();

#if defined(__x86_64__) || defined(__i386__)
	static const struct {
		int		 lvl;
		size_t		 lanes;
		kernel_fn	*fn;
	} kernels[] = {
		{ LVL_AVX512, 16, blake3_avx512_hash16 },
		{ LVL_AVX2, 8, blake3_avx2_hash8 },
		{ LVL_SSE41, 4, blake3_sse41_hash4 },
	};

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		size_t w = kernels[k].lanes;

		if (lvl < kernels[k].lvl)
			continue;
		for (; n >= w; n -= w, in += w, out += 32 * w) {
			kernels[k].fn(in, blocks, key, counter, inc, flags,
			    flags_start, flags_end, out);
			counter += inc ? w : 0;
		}
		if (n > w / 4) {
			hash_padded(kernels[k].fn, w, in, n, blocks, key,
			    counter, inc, flags, flags_start, flags_end, out);
			return;
		}
	}
#else
	(void)lvl;
#endif
	for (; n > 0; n--, in++, out += 32) {
		hash_one(*in, blocks, key, counter, flags, flags_start,
		    flags_end, out);
		counter += inc ? 1 : 0;
	}
}

/* ---- outputs: what the last compression of a node needs -------------- */

struct output {
	uint32_t	cv[8];
	uint8_t		block[64];
	uint64_t	counter;
	uint8_t		block_len;
	uint8_t		flags;
};

static void
output_cv(const struct output *o, uint8_t out[32])
{
	uint32_t cv[8];

	memcpy(cv, o->cv, 32);
	compress_cv(cv, o->block, o->block_len, o->counter, o->flags);
	words_to_bytes(cv, out);
}

/* The root's extended output: block t of 64 bytes uses counter t. */
static void
output_root(const struct output *o, uint8_t *out, size_t outlen)
{
	for (uint64_t t = 0; outlen > 0; t++) {
		uint32_t v[16];
		uint8_t blk[64];
		size_t take = outlen < 64 ? outlen : 64;

		compress_state(v, o->cv, o->block, o->block_len, t,
		    o->flags | BLAKE3_ROOT);
		for (int i = 0; i < 8; i++) {
			store32(blk + 4 * i, v[i] ^ v[i + 8]);
			store32(blk + 32 + 4 * i, v[i + 8] ^ o->cv[i]);
		}
		memcpy(out, blk, take);
		out += take;
		outlen -= take;
	}
}

static void
parent_output(struct output *o, const uint8_t left[32], const uint8_t right[32],
    const uint32_t key[8], uint8_t flags)
{
	memcpy(o->cv, key, 32);
	memcpy(o->block, left, 32);
	memcpy(o->block + 32, right, 32);
	o->counter = 0;
	o->block_len = 64;
	o->flags = flags | BLAKE3_PARENT;
}

/* One chunk of len <= 1024 bytes (0 only for the empty input). */
static void
chunk_output(struct output *o, const uint8_t *in, size_t len,
    const uint32_t key[8], uint64_t counter, uint8_t flags)
{
	uint8_t start = BLAKE3_CHUNK_START;

	memcpy(o->cv, key, 32);
	for (; len > 64; in += 64, len -= 64) {
		compress_cv(o->cv, in, 64, counter, flags | start);
		start = 0;
	}
	memset(o->block, 0, 64);
	if (len > 0)	/* the empty input may come as NULL */
		memcpy(o->block, in, len);
	o->counter = counter;
	o->block_len = (uint8_t)len;
	o->flags = flags | start | BLAKE3_CHUNK_END;
}

/* ---- whole subtrees ------------------------------------------------- */

static void subtree_pow2(const uint8_t *in, uint64_t nchunks, uint64_t counter,
    const uint32_t key[8], uint8_t flags, uint8_t out[32]);

/* CVs of the complete subtrees of 2^level chunks in in[0..nchunks), with
 * nchunks <= BATCH_CHUNKS and a multiple of 2^level: the chunks in kernel
 * lanes, then each level of parents in lanes. */
static void
subtree_batch(const uint8_t *in, size_t nchunks, uint64_t counter,
    unsigned level, const uint32_t key[8], uint8_t flags, uint8_t *out)
{
	const uint8_t *ptr[BATCH_CHUNKS];
	uint8_t cvs[2][BATCH_CHUNKS * 32];
	size_t n = nchunks;
	int cur = 0;

	for (size_t i = 0; i < n; i++)
		ptr[i] = in + (size_t)i * BLAKE3_CHUNK_LEN;
	hash_many(ptr, n, BLAKE3_CHUNK_LEN / 64, key, counter, 1, flags,
	    BLAKE3_CHUNK_START, BLAKE3_CHUNK_END, level ? cvs[0] : out);
	for (unsigned l = 0; l < level; l++) {
		uint8_t *dst = l + 1 == level ? out : cvs[cur ^ 1];

		n /= 2;
		for (size_t i = 0; i < n; i++)
			ptr[i] = cvs[cur] + 64 * i;
		hash_many(ptr, n, 1, key, 0, 0, flags | BLAKE3_PARENT, 0, 0,
		    dst);
		cur ^= 1;
	}
}

/* CVs of consecutive complete subtrees of 2^level chunks each. */
static void
subtrees_at(const uint8_t *in, uint64_t nchunks, uint64_t counter,
    unsigned level, const uint32_t key[8], uint8_t flags, uint8_t *out)
{
	uint64_t per = (uint64_t)1 << level;

	if (per > BATCH_CHUNKS) {
		for (uint64_t i = 0; i < nchunks / per; i++)
			subtree_pow2(in + i * per * BLAKE3_CHUNK_LEN, per,
			    counter + i * per, key, flags, out + 32 * i);
		return;
	}
	while (nchunks > 0) {
		size_t n = nchunks < BATCH_CHUNKS ? (size_t)nchunks :
		    BATCH_CHUNKS;

		subtree_batch(in, n, counter, level, key, flags, out);
		in += (uint64_t)n * BLAKE3_CHUNK_LEN;
		counter += n;
		nchunks -= n;
		out += 32 * (n / per);
	}
}

static unsigned
log2_u64(uint64_t x)
{
	return 63 - (unsigned)__builtin_clzll(x);
}

/* The CV of a complete subtree of nchunks (a power of two) full chunks:
 * never the root (the caller leaves a byte to its right). */
static void
subtree_pow2(const uint8_t *in, uint64_t nchunks, uint64_t counter,
    const uint32_t key[8], uint8_t flags, uint8_t out[32])
{
	uint8_t pair[64];
	struct output o;

	if (nchunks <= BATCH_CHUNKS) {
		subtree_batch(in, (size_t)nchunks, counter, log2_u64(nchunks),
		    key, flags, out);
		return;
	}
	subtree_pow2(in, nchunks / 2, counter, key, flags, pair);
	subtree_pow2(in + nchunks / 2 * BLAKE3_CHUNK_LEN, nchunks / 2,
	    counter + nchunks / 2, key, flags, pair + 32);
	parent_output(&o, pair, pair + 32, key, flags);
	output_cv(&o, out);
}

uint64_t
blake3_left_len(uint64_t len)
{
	uint64_t full = (len - 1) / BLAKE3_CHUNK_LEN;

	return ((uint64_t)1 << log2_u64(full)) * BLAKE3_CHUNK_LEN;
}

/* The top node of a subtree of at most BATCH_CHUNKS chunks, any shape:
 * its full chunks but the last in kernel lanes, the last (maybe partial)
 * one portable, then the levels of parents in lanes, pairing from the
 * left and lifting an odd last node a level: the BLAKE3 tree (left side
 * the largest power of two), built breadth first. */
static void
subtree_small(struct output *o, const uint8_t *in, uint64_t len,
    uint64_t counter, const uint32_t key[8], uint8_t flags)
{
	const uint8_t *ptr[BATCH_CHUNKS];
	uint8_t cvs[2][BATCH_CHUNKS * 32];
	size_t full = (size_t)((len - 1) / BLAKE3_CHUNK_LEN), n = full + 1;
	int cur = 0;

	ptr[0] = in;
	for (size_t i = 0; i < full; i++)
		ptr[i] = in + i * BLAKE3_CHUNK_LEN;
	hash_many(ptr, full, BLAKE3_CHUNK_LEN / 64, key, counter, 1, flags,
	    BLAKE3_CHUNK_START, BLAKE3_CHUNK_END, cvs[0]);
	chunk_output(o, in + full * BLAKE3_CHUNK_LEN,
	    (size_t)(len - full * BLAKE3_CHUNK_LEN), key, counter + full, flags);
	output_cv(o, cvs[0] + 32 * full);
	while (n > 2) {
		size_t pairs = n / 2;

		for (size_t i = 0; i < pairs; i++)
			ptr[i] = cvs[cur] + 64 * i;
		hash_many(ptr, pairs, 1, key, 0, 0, flags | BLAKE3_PARENT, 0,
		    0, cvs[cur ^ 1]);
		if (n & 1)
			memcpy(cvs[cur ^ 1] + 32 * pairs, cvs[cur] + 32 * (n - 1),
			    32);
		n = pairs + (n & 1);
		cur ^= 1;
	}
	parent_output(o, cvs[cur], cvs[cur] + 32, key, flags);
}

/* The top node of in[0..len) at chunk counter, any len: a chunk, a small
 * tree, or left the largest complete subtree and right the rest. */
static void
subtree_output(struct output *o, const uint8_t *in, uint64_t len,
    uint64_t counter, const uint32_t key[8], uint8_t flags)
{
	uint8_t pair[64];
	uint64_t left;

	if (len <= BLAKE3_CHUNK_LEN) {
		chunk_output(o, in, (size_t)len, key, counter, flags);
		return;
	}
	if (len <= (uint64_t)BATCH_CHUNKS * BLAKE3_CHUNK_LEN) {
		subtree_small(o, in, len, counter, key, flags);
		return;
	}
	left = blake3_left_len(len);
	subtree_pow2(in, left / BLAKE3_CHUNK_LEN, counter, key, flags, pair);
	subtree_output(o, in + left, len - left,
	    counter + left / BLAKE3_CHUNK_LEN, key, flags);
	output_cv(o, pair + 32);
	parent_output(o, pair, pair + 32, key, flags);
}

void
blake3_subtree(const uint8_t *data, uint64_t len, uint64_t counter,
    int is_root, uint8_t out[BLAKE3_OUT_LEN])
{
	struct output o;

	subtree_output(&o, data, len, counter, blake3_iv, 0);
	if (is_root)
		output_root(&o, out, BLAKE3_OUT_LEN);
	else
		output_cv(&o, out);
}

void
blake3_subtree_cvs(const uint8_t *data, uint64_t nchunks, uint64_t counter,
    unsigned level, uint8_t *cvs)
{
	subtrees_at(data, nchunks, counter, level, blake3_iv, 0, cvs);
}

void
blake3_parent(const uint8_t left[BLAKE3_OUT_LEN],
    const uint8_t right[BLAKE3_OUT_LEN], int is_root,
    uint8_t out[BLAKE3_OUT_LEN])
{
	struct output o;

	parent_output(&o, left, right, blake3_iv, 0);
	if (is_root)
		output_root(&o, out, BLAKE3_OUT_LEN);
	else
		output_cv(&o, out);
}

void
blake3_hash(const void *data, size_t len, uint8_t out[BLAKE3_OUT_LEN])
{
	struct output o;

	subtree_output(&o, data, len, 0, blake3_iv, 0);
	output_root(&o, out, BLAKE3_OUT_LEN);
}

/* ---- the incremental hasher ----------------------------------------- */

static size_t
chunk_len(const struct blake3 *h)
{
	return (size_t)h->blocks_compressed * 64 + h->buf_len;
}

static void
chunk_reset(struct blake3 *h, uint64_t counter)
{
	memcpy(h->cv, h->key, 32);
	h->chunk_counter = counter;
	h->buf_len = 0;
	h->blocks_compressed = 0;
}

/* Add bytes to the current chunk (never past 1024); the last block stays
 * buffered, since only the end of input tells whether it ends the chunk. */
static void
chunk_update(struct blake3 *h, const uint8_t *p, size_t n)
{
	while (n > 0) {
		size_t take;

		if (h->buf_len == 64) {
			compress_cv(h->cv, h->buf, 64, h->chunk_counter,
			    h->flags | (h->blocks_compressed == 0 ?
			    BLAKE3_CHUNK_START : 0));
			h->blocks_compressed++;
			h->buf_len = 0;
		}
		take = 64 - (size_t)h->buf_len;
		if (take > n)
			take = n;
		memcpy(h->buf + h->buf_len, p, take);
		h->buf_len += (uint8_t)take;
		p += take;
		n -= take;
	}
}

static void
chunk_state_output(const struct blake3 *h, struct output *o)
{
	memcpy(o->cv, h->cv, 32);
	memset(o->block, 0, 64);
	memcpy(o->block, h->buf, h->buf_len);
	o->counter = h->chunk_counter;
	o->block_len = h->buf_len;
	o->flags = h->flags | BLAKE3_CHUNK_END |
	    (h->blocks_compressed == 0 ? BLAKE3_CHUNK_START : 0);
}

/* Merge the stack down to the complete subtrees of `total` chunks (one per
 * set bit). Called only when more input is known to follow those chunks,
 * so no merged parent can be the root. */
static void
stack_merge(struct blake3 *h, uint64_t total)
{
	while (h->stack_len > __builtin_popcountll(total)) {
		struct output o;
		uint8_t *l = h->stack[h->stack_len - 2];

		parent_output(&o, l, h->stack[h->stack_len - 1], h->key,
		    h->flags);
		output_cv(&o, l);
		h->stack_len--;
	}
}

/* Push the CV of the subtree starting at chunk `counter`. */
static void
stack_push(struct blake3 *h, const uint8_t cv[32], uint64_t counter)
{
	stack_merge(h, counter);
	memcpy(h->stack[h->stack_len++], cv, 32);
}

/* n <= BATCH_CHUNKS full chunks at the hasher's counter, more input after
 * them: cut into the complete subtrees the stack takes (each aligned to
 * its size, largest first), but hash all their chunks in one kernel run
 * and their parents level by level across subtrees, so the lanes stay
 * full when updates come in small, unaligned pieces. */
static void
update_run(struct blake3 *h, const uint8_t *p, size_t n)
{
	const uint8_t *ptr[BATCH_CHUNKS];
	uint8_t cvs[BATCH_CHUNKS * 32], tmp[BATCH_CHUNKS / 2 * 32];
	size_t at[BLAKE3_MAX_DEPTH], size[BLAKE3_MAX_DEPTH], nsub = 0;
	uint64_t c = h->chunk_counter;

	for (size_t i = 0; i < n; i++)
		ptr[i] = p + i * BLAKE3_CHUNK_LEN;
	hash_many(ptr, n, BLAKE3_CHUNK_LEN / 64, h->key, c, 1, h->flags,
	    BLAKE3_CHUNK_START, BLAKE3_CHUNK_END, cvs);
	for (size_t i = 0; i < n; ) {
		size_t m = (size_t)1 << log2_u64(n - i);

		while ((c + i) & (m - 1))
			m >>= 1;
		at[nsub] = i;
		size[nsub++] = m;
		i += m;
	}
	for (;;) {
		size_t pairs = 0, k = 0;

		for (size_t s = 0; s < nsub; s++)
			for (size_t j = 0; j < size[s] / 2; j++)
				ptr[pairs++] = cvs + 32 * (at[s] + 2 * j);
		if (pairs == 0)
			break;
		hash_many(ptr, pairs, 1, h->key, 0, 0, h->flags | BLAKE3_PARENT,
		    0, 0, tmp);
		for (size_t s = 0; s < nsub; s++) {
			if (size[s] < 2)
				continue;
			size[s] /= 2;
			memcpy(cvs + 32 * at[s], tmp + 32 * k, 32 * size[s]);
			k += size[s];
		}
	}
	for (size_t s = 0; s < nsub; s++)
		stack_push(h, cvs + 32 * at[s], c + at[s]);
	chunk_reset(h, c + n);
}

static void
hasher_init(struct blake3 *h, const uint32_t key[8], uint8_t flags)
{
	memcpy(h->key, key, 32);
	h->flags = flags;
	h->stack_len = 0;
	chunk_reset(h, 0);
}

void
blake3_init(struct blake3 *h)
{
	hasher_init(h, blake3_iv, 0);
}

void
blake3_init_keyed(struct blake3 *h, const uint8_t key[BLAKE3_KEY_LEN])
{
	uint32_t w[8];

	bytes_to_words(key, w);
	hasher_init(h, w, BLAKE3_KEYED_HASH);
}

void
blake3_init_derive_key(struct blake3 *h, const char *context)
{
	struct blake3 ctx;
	uint8_t key[32];
	uint32_t w[8];

	hasher_init(&ctx, blake3_iv, BLAKE3_DERIVE_KEY_CONTEXT);
	blake3_update(&ctx, context, strlen(context));
	blake3_final(&ctx, key, sizeof(key));
	bytes_to_words(key, w);
	hasher_init(h, w, BLAKE3_DERIVE_KEY_MATERIAL);
}

void
blake3_update(struct blake3 *h, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint8_t cv[32];

	if (len == 0)
		return;
	if (chunk_len(h) > 0) {
		size_t take = BLAKE3_CHUNK_LEN - chunk_len(h);

		if (take > len)
			take = len;
		chunk_update(h, p, take);
		p += take;
		len -= take;
		if (len == 0)
			goto out;
		/* The chunk is full and more follows: it is not the root. */
		{
			struct output o;

			chunk_state_output(h, &o);
			output_cv(&o, cv);
		}
		stack_push(h, cv, h->chunk_counter);
		chunk_reset(h, h->chunk_counter + 1);
	}
	while (len > BLAKE3_CHUNK_LEN) {
		/* Full chunks that leave at least one byte over, and the
		 * largest complete subtree of them that starts here (aligned
		 * to its size). */
		uint64_t avail = (len - 1) / BLAKE3_CHUNK_LEN;
		uint64_t n = (uint64_t)1 << log2_u64(avail);

		while (h->chunk_counter & (n - 1))
			n >>= 1;
		if (n <= BATCH_CHUNKS) {
			n = avail < BATCH_CHUNKS ? avail : BATCH_CHUNKS;
			update_run(h, p, (size_t)n);
		} else {
			subtree_pow2(p, n, h->chunk_counter, h->key, h->flags,
			    cv);
			stack_push(h, cv, h->chunk_counter);
			chunk_reset(h, h->chunk_counter + n);
		}
		p += n * BLAKE3_CHUNK_LEN;
		len -= n * BLAKE3_CHUNK_LEN;
	}
	chunk_update(h, p, len);
out:
	stack_merge(h, h->chunk_counter);
}

void
blake3_final(const struct blake3 *h, uint8_t *out, size_t outlen)
{
	struct output o;

	chunk_state_output(h, &o);
	for (int i = h->stack_len - 1; i >= 0; i--) {
		uint8_t right[32];

		output_cv(&o, right);
		parent_output(&o, h->stack[i], right, h->key, h->flags);
	}
	output_root(&o, out, outlen);
}

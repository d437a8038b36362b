/*
 * test_fastcdc.c: FastCDC cut points.
 *
 * The gear table is rebuilt from MD5 and compared entry by entry; the cut
 * lengths of the public implementations' fixture (SekienAkashita.jpg, read
 * from ../shared/data/ when it exists, skipped with a message when not);
 * facts computed by an independent byte-at-a-time reference (Python, from
 * the rule in docs/pdt.md) on splitmix64 inputs, so a clone without the
 * data still checks the main cases; fastcdc_next against a one-byte-a-step
 * reference written here; all-zero input; and streaming against whole
 * buffer with random split points.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fastcdc.h"

#define FIXTURE	"../shared/data/fastcdc/SekienAkashita.jpg"

/*
 * For the inner loops: Check's ck_assert writes to a pipe on every call,
 * which costs more than the chunker itself.
 */
#define REQUIRE(c, ...)	do { if (!(c)) ck_abort_msg(__VA_ARGS__); } while (0)

static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* n bytes of splitmix64 from seed, each output little-endian. */
static uint8_t *
splitmix_bytes(size_t n, uint64_t seed)
{
	uint8_t *b = malloc(n + 8);

	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i += 8) {
		uint64_t z = splitmix(&seed);

		for (int k = 0; k < 8; k++)
			b[i + (size_t)k] = (uint8_t)(z >> (8 * k));
	}
	return b;
}

/* All chunk lengths of d[0..n) by fastcdc_next; returns the count. */
static size_t
cuts_whole(const struct fastcdc_params *p, const uint8_t *d, size_t n,
    size_t *out, size_t cap)
{
	size_t k = 0;

	for (size_t off = 0; off < n; ) {
		size_t len = fastcdc_next(p, d + off, n - off);

		REQUIRE(len > 0 && len <= p->max && k < cap, "chunk %zu: %zu",
		    k, len);
		out[k++] = len;
		off += len;
	}
	return k;
}

static void
check_lengths(const struct fastcdc_params *p, const uint8_t *d, size_t n,
    const size_t *want, size_t nwant)
{
	size_t got[64];
	size_t k = cuts_whole(p, d, n, got, 64);

	ck_assert_uint_eq(k, nwant);
	for (size_t i = 0; i < k; i++)
		ck_assert_msg(got[i] == want[i], "chunk %zu: %zu, want %zu",
		    i, got[i], want[i]);
}

START_TEST(test_gear_from_md5)
{
	EVP_MD *md5 = EVP_MD_fetch(NULL, "MD5", NULL);

	ck_assert_ptr_nonnull(md5);
	for (unsigned i = 0; i < 256; i++) {
		uint8_t in[64], dg[EVP_MAX_MD_SIZE];
		unsigned dlen;
		uint64_t v = 0;

		memset(in, (int)i, sizeof(in));
		ck_assert(EVP_Digest(in, sizeof(in), dg, &dlen, md5, NULL));
		for (int k = 0; k < 8; k++)
			v = v << 8 | dg[k];
		ck_assert_msg(fastcdc_gear(i) == v, "G[%u]", i);
	}
	EVP_MD_free(md5);
	ck_assert(fastcdc_gear(0) == UINT64_C(0x3b5d3c7d207e37dc));
	ck_assert(fastcdc_gear(1) == UINT64_C(0x784d68ba91123086));
	ck_assert(fastcdc_gear(255) == UINT64_C(0xaabd2b2a451504e1));
}
END_TEST

/* The default's masks: 18 bits before avg, 14 after (level 2 at 64 KiB). */
START_TEST(test_default_masks)
{
	struct fastcdc_params p = FASTCDC_PARAMS_DEFAULT;
	struct fastcdc c;

	fastcdc_init(&c, &p);
	ck_assert(c.mask_s == UINT64_C(0x0000d90707537000));
	ck_assert(c.mask_l == UINT64_C(0x0000d90313530000));
	ck_assert_int_eq(__builtin_popcountll(c.mask_s), 18);
	ck_assert_int_eq(__builtin_popcountll(c.mask_l), 14);
	for (unsigned lv = 0; lv <= 3; lv++) {
		for (uint32_t avg = 256; avg <= (4u << 20); avg <<= 1) {
			struct fastcdc_params q = { 64, avg, 16u << 20, lv };
			int bits = __builtin_ctz(avg);

			ck_assert_int_eq(fastcdc_params_check(&q, NULL, 0), 0);
			fastcdc_init(&c, &q);
			ck_assert_int_eq(__builtin_popcountll(c.mask_s),
			    bits + (int)lv);
			ck_assert_int_eq(__builtin_popcountll(c.mask_l),
			    bits - (int)lv);
			/* Never a top bit: rolling two bytes shifts the mask. */
			ck_assert(c.mask_s >> 48 == 0 && c.mask_l >> 48 == 0);
		}
	}
}
END_TEST

START_TEST(test_params_check)
{
	static const struct {
		struct fastcdc_params p;
		int ok;
	} cases[] = {
		{ { 16384, 65536, 262144, 2 }, 0 },
		{ { 64, 256, 1024, 0 }, 0 },
		{ { 1u << 20, 4u << 20, 16u << 20, 3 }, 0 },
		{ { 4096, 16384, 65535, 1 }, 0 },	/* odd max is fine */
		{ { 16384, 65536, 16384, 2 }, -1 },	/* max < avg */
		{ { 65537, 65536, 262144, 2 }, -1 },	/* min > avg */
		{ { 16384, 65535, 262144, 2 }, -1 },	/* not a power of 2 */
		{ { 16384, 65536, 262144, 4 }, -1 },
		{ { 63, 256, 1024, 1 }, -1 },
		{ { 64, 128, 1024, 1 }, -1 },
		{ { 64, 256, 1023, 1 }, -1 },
		{ { 64, 8u << 20, 16u << 20, 1 }, -1 },
		{ { 64, 256, (16u << 20) + 1, 1 }, -1 },
		{ { 0, 0, 0, 0 }, -1 },
	};
	char err[80];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(fastcdc_params_check(&cases[i].p, err,
		    sizeof(err)), cases[i].ok);
		ck_assert(cases[i].ok == 0 ? err[0] == '\0' : err[0] != '\0');
	}
}
END_TEST

START_TEST(test_sekien_akashita)
{
	static const size_t l1a[] = { 21325, 17140, 28084, 18217, 24700 };
	static const size_t l1b[] = { 66549, 42917 };
	static const size_t l1c[] = { 109466 };
	static const size_t l0[] = { 6634, 59915, 25597, 5237, 12083 };
	static const size_t l3[] = { 17350, 19911, 17426, 17519, 19940, 17320 };
	static const size_t l2[] = { 66549, 42917 };	/* the default */
	static const struct {
		struct fastcdc_params p;
		const size_t *len;
		size_t n;
	} v[] = {
		{ { 4096, 16384, 65535, 1 }, l1a, 5 },
		{ { 8192, 32768, 131072, 1 }, l1b, 2 },
		{ { 16384, 65536, 262144, 1 }, l1c, 1 },
		{ { 4096, 16384, 65535, 0 }, l0, 5 },
		{ { 8192, 16384, 32768, 3 }, l3, 6 },
		{ { 16384, 65536, 262144, 2 }, l2, 2 },
	};
	FILE *f = fopen(FIXTURE, "rb");
	uint8_t *d;
	size_t n;

	if (f == NULL) {
		printf("test_fastcdc: %s not found: SekienAkashita vectors "
		    "skipped\n", FIXTURE);
		return;
	}
	d = malloc(200000);
	ck_assert_ptr_nonnull(d);
	n = fread(d, 1, 200000, f);
	fclose(f);
	ck_assert_uint_eq(n, 109466);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check_lengths(&v[i].p, d, n, v[i].len, v[i].n);
	free(d);
}
END_TEST

/* Facts from an independent reference (see the top of this file). */
START_TEST(test_facts)
{
	static const size_t def[] = { 39097, 76844, 80007, 53183, 50900,
	    81078, 27131, 85546, 79716, 78319, 112610, 66798, 69911, 26076,
	    75421, 45939 };
	static const size_t small[] = { 1644, 775, 536, 737, 573, 391, 2117,
	    1076, 1240, 476, 640, 598, 1270, 936, 998, 1339, 691, 425, 1082,
	    1204, 1039, 269, 971, 1315, 2672, 1533, 2338, 1037, 1592, 323,
	    1167, 1232, 1237, 1945, 1172, 859, 1207, 288, 2312, 1593, 1163,
	    1563, 653, 1143, 542, 1190, 1094, 1062, 1029, 524, 1091, 564, 776,
	    1378, 1897, 1444, 499, 285, 1944, 846 };
	static const size_t low[] = { 266, 316, 298, 266, 265, 279, 285, 76,
	    281, 282, 273, 295 };
	struct fastcdc_params pd = FASTCDC_PARAMS_DEFAULT;
	struct fastcdc_params ps = { 256, 1024, 4096, 1 };
	struct fastcdc_params pl = { 64, 256, 1024, 3 };
	uint8_t *d = splitmix_bytes(1u << 20, 27);
	size_t got[300], k;

	check_lengths(&pd, d, 1u << 20, def, sizeof(def) / sizeof(def[0]));
	free(d);
	d = splitmix_bytes(65536, 28);
	check_lengths(&ps, d, 65536, small, sizeof(small) / sizeof(small[0]));
	free(d);
	/* Four symbols only: long runs of low-entropy hashing. */
	d = splitmix_bytes(65536, 29);
	for (size_t i = 0; i < 65536; i++)
		d[i] &= 3;
	k = cuts_whole(&pl, d, 65536, got, 300);
	ck_assert_uint_eq(k, 239);
	for (size_t i = 0; i < sizeof(low) / sizeof(low[0]); i++)
		ck_assert_uint_eq(got[i], low[i]);
	ck_assert_uint_eq(got[k - 1], 41);
	free(d);
}
END_TEST

/* The rule one byte a step, as docs/pdt.md states it. */
static size_t
ref_next(const struct fastcdc_params *p, const uint8_t *d, size_t n)
{
	struct fastcdc c;
	size_t lim, ctr;
	uint64_t h = 0;

	fastcdc_init(&c, p);	/* for the masks only */
	if (n <= p->min)
		return n;
	lim = n < p->max ? n : p->max;
	ctr = p->avg < lim ? p->avg : lim;
	for (size_t i = p->min; i < lim; i++) {
		h = (h << 1) + fastcdc_gear(d[i]);
		if ((h & (i < ctr ? c.mask_s : c.mask_l)) == 0)
			return i;
	}
	return lim;
}

static const struct fastcdc_params mixed[] = {
	{ 64, 256, 1024, 0 },
	{ 64, 256, 1025, 1 },
	{ 65, 512, 1025, 2 },
	{ 100, 256, 4097, 3 },
	{ 256, 256, 256 + 1024, 2 },	/* min = avg */
	{ 128, 1024, 1024, 1 },		/* avg = max */
	{ 1024, 1024, 1024, 0 },	/* every chunk exactly 1 KiB */
	{ 4096, 16384, 65535, 1 },
	{ 16384, 65536, 262144, 2 },
};
#define NMIXED	(sizeof(mixed) / sizeof(mixed[0]))

START_TEST(test_against_byte_reference)
{
	uint64_t s = 42;

	for (size_t pi = 0; pi < NMIXED; pi++) {
		const struct fastcdc_params *p = &mixed[pi];
		size_t n = (size_t)p->max * 24 + 7;
		uint8_t *d = splitmix_bytes(n, 100 + pi);

		ck_assert_int_eq(fastcdc_params_check(p, NULL, 0), 0);
		/* Half the runs on low-entropy bytes. */
		if (splitmix(&s) & 1)
			for (size_t i = 0; i < n; i++)
				d[i] &= 7;
		for (size_t off = 0; off < n; ) {
			size_t a = fastcdc_next(p, d + off, n - off);
			size_t b = ref_next(p, d + off, n - off);

			REQUIRE(a == b, "params %zu at %zu: %zu vs %zu",
			    pi, off, a, b);
			off += a;
		}
		free(d);
	}
}
END_TEST

/*
 * All-zero input never meets the masks of these (the default and the
 * fixture's): every chunk is exactly max.  (Not a law: a mask of few bits
 * can meet the zero run's hash.)
 */
static const struct fastcdc_params zero_params[] = {
	{ 16384, 65536, 262144, 2 },
	{ 4096, 16384, 65535, 1 },
	{ 8192, 32768, 131072, 1 },
	{ 16384, 65536, 262144, 1 },
	{ 4096, 16384, 65535, 0 },
	{ 8192, 16384, 32768, 3 },
};

START_TEST(test_all_zero_is_max)
{
	for (size_t pi = 0; pi < sizeof(zero_params) / sizeof(zero_params[0]);
	    pi++) {
		const struct fastcdc_params *p = &zero_params[pi];
		size_t n = (size_t)p->max * 3 + 100;
		uint8_t *d = calloc(1, n);
		struct fastcdc c;
		size_t off = 0, len;

		ck_assert_ptr_nonnull(d);
		for (int k = 0; k < 3; k++) {
			ck_assert_uint_eq(fastcdc_next(p, d + off, n - off),
			    p->max);
			off += p->max;
		}
		ck_assert_uint_eq(fastcdc_next(p, d + off, n - off), 100);
		/* The stream too, fed the whole buffer at once. */
		fastcdc_init(&c, p);
		off = 0;
		for (int k = 0; k < 3; k++) {
			off += fastcdc_update(&c, d + off, n - off, &len);
			ck_assert_uint_eq(len, p->max);
			ck_assert_uint_eq(off, (size_t)(k + 1) * p->max);
		}
		ck_assert_uint_eq(fastcdc_update(&c, d + off, n - off, &len),
		    100);
		ck_assert_uint_eq(len, 0);
		ck_assert_uint_eq(fastcdc_final(&c), 100);
		free(d);
	}
}
END_TEST

/* Feed d in pieces cut at random places; record the chunk lengths. */
static size_t
cuts_stream(const struct fastcdc_params *p, const uint8_t *d, size_t n,
    uint64_t *rng, size_t maxpiece, size_t *out, size_t cap)
{
	struct fastcdc c;
	size_t k = 0, off = 0, len, last;

	fastcdc_init(&c, p);
	while (off < n) {
		size_t piece = (size_t)(splitmix(rng) % (maxpiece + 1));
		size_t used = 0;

		if (piece > n - off)
			piece = n - off;
		/* Zero-length feeds are legal and change nothing. */
		do {
			size_t t = fastcdc_update(&c, d + off + used,
			    piece - used, &len);

			REQUIRE(t <= piece - used, "took %zu of %zu", t,
			    piece - used);
			used += t;
			if (len > 0) {
				REQUIRE(k < cap, "too many chunks");
				out[k++] = len;
			} else {
				REQUIRE(used == piece, "no cut, %zu of %zu",
				    used, piece);
			}
		} while (used < piece);
		off += piece;
	}
	if ((last = fastcdc_final(&c)) > 0) {
		ck_assert_uint_lt(k, cap);
		out[k++] = last;
	}
	ck_assert_uint_eq(fastcdc_final(&c), 0);
	return k;
}

START_TEST(test_stream_equals_whole)
{
	uint64_t rng = 7;
	size_t *a = malloc(20000 * sizeof(*a)), *b = malloc(20000 * sizeof(*b));

	ck_assert(a != NULL && b != NULL);
	for (int round = 0; round < 60; round++) {
		const struct fastcdc_params *p = &mixed[round % NMIXED];
		size_t n = (size_t)(splitmix(&rng) % ((size_t)p->max * 12 + 1));
		uint8_t *d = splitmix_bytes(n, 500 + (uint64_t)round);
		static const size_t pieces[] = { 1, 7, 100, 4096, 1u << 20 };
		size_t na, nb;

		if (round % 3 == 0)
			for (size_t i = 0; i < n; i++)
				d[i] &= 1;
		na = cuts_whole(p, d, n, a, 20000);
		nb = cuts_stream(p, d, n, &rng, pieces[round % 5], b, 20000);
		ck_assert_uint_eq(na, nb);
		for (size_t i = 0; i < na; i++)
			REQUIRE(a[i] == b[i], "round %d chunk %zu: %zu "
			    "vs %zu", round, i, a[i], b[i]);
		free(d);
	}
	free(a);
	free(b);
}
END_TEST

START_TEST(test_empty_and_short)
{
	struct fastcdc_params p = FASTCDC_PARAMS_DEFAULT;
	struct fastcdc c;
	uint8_t d[16] = { 0 };
	size_t len;

	fastcdc_init(&c, &p);
	ck_assert_uint_eq(fastcdc_final(&c), 0);
	ck_assert_uint_eq(fastcdc_update(&c, d, 0, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(fastcdc_update(&c, d, 16, &len), 16);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(fastcdc_final(&c), 16);
	ck_assert_uint_eq(fastcdc_next(&p, d, 1), 1);
	ck_assert_uint_eq(fastcdc_next(&p, d, 16), 16);
}
END_TEST

static Suite *
fastcdc_suite(void)
{
	Suite *s = suite_create("fastcdc");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_gear_from_md5);
	tcase_add_test(tc, test_default_masks);
	tcase_add_test(tc, test_params_check);
	tcase_add_test(tc, test_sekien_akashita);
	tcase_add_test(tc, test_facts);
	tcase_add_test(tc, test_against_byte_reference);
	tcase_add_test(tc, test_all_zero_is_max);
	tcase_add_test(tc, test_stream_equals_whole);
	tcase_add_test(tc, test_empty_and_short);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(fastcdc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

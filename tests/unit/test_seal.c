/*
 * test_seal.c: AES-256-GCM group-key sealing: round trips at several
 * sizes, any changed bit or different associated data refused, the
 * associated-data layout, and the per-key seal counter's warn and refusal.
 */
#include <sys/wait.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seal.h"

static const uint8_t key_bytes[SEAL_KEY_LEN] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
};

static size_t
make_ad(uint8_t *ad, size_t cap, uint64_t epoch)
{
	uint8_t id[32];

	memset(id, 0xe1, sizeof(id));
	return seal_ad(ad, cap, "space-7", id, sizeof(id), &epoch);
}

static void
fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rand_r(&seed);
}

static const size_t sizes[] = { 0, 1, 256, 4096, 65536 };

START_TEST(test_round_trip)
{
	size_t n = sizes[_i], sn, on, adlen;
	uint8_t *pt, *sealed, *back, ad[64];
	struct seal_key k;

	pt = malloc(n + 1);
	sealed = malloc(n + SEAL_OVERHEAD);
	back = malloc(n + 1);
	ck_assert(pt != NULL && sealed != NULL && back != NULL);
	fill(pt, n, (unsigned int)n);
	adlen = make_ad(ad, sizeof(ad), 3);
	seal_key_init(&k, key_bytes);
	ck_assert_int_eq(seal_seal(&k, ad, adlen, pt, n, sealed,
	    n + SEAL_OVERHEAD, &sn), 0);
	ck_assert_uint_eq(sn, n + SEAL_OVERHEAD);
	ck_assert_uint_eq(k.seals, 1);
	ck_assert_int_eq(seal_open(&k, ad, adlen, sealed, sn, back, n, &on),
	    0);
	ck_assert_uint_eq(on, n);
	if (n > 0) {
		ck_assert_mem_eq(back, pt, n);
		/* The ciphertext is not the plaintext. */
		ck_assert(memcmp(sealed + SEAL_NONCE_LEN, pt, n) != 0 ||
		    n < 4);
	}
	/* No associated data at all is a different AD, and works too. */
	ck_assert_int_eq(seal_open(&k, NULL, 0, sealed, sn, back, n, &on), -1);
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, n, sealed,
	    n + SEAL_OVERHEAD, &sn), 0);
	ck_assert_int_eq(seal_open(&k, NULL, 0, sealed, sn, back, n, &on), 0);
	ck_assert_uint_eq(on, n);
	seal_key_clear(&k);
	free(pt);
	free(sealed);
	free(back);
}
END_TEST

START_TEST(test_fresh_nonces)
{
	uint8_t pt[32], a[32 + SEAL_OVERHEAD], b[32 + SEAL_OVERHEAD];
	struct seal_key k;
	size_t an, bn;

	memset(pt, 0, sizeof(pt));
	seal_key_init(&k, key_bytes);
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, sizeof(pt), a, sizeof(a),
	    &an), 0);
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, sizeof(pt), b, sizeof(b),
	    &bn), 0);
	ck_assert_mem_ne(a, b, SEAL_NONCE_LEN);
	ck_assert_mem_ne(a + SEAL_NONCE_LEN, b + SEAL_NONCE_LEN, sizeof(pt));
	ck_assert_uint_eq(k.seals, 2);
	seal_key_clear(&k);
}
END_TEST

/* Every bit of a 256-byte message's sealed form, one at a time. */
START_TEST(test_flipped_bit_fails)
{
	uint8_t pt[256], sealed[256 + SEAL_OVERHEAD], back[256], ad[64];
	struct seal_key k;
	size_t sn, on, adlen;

	fill(pt, sizeof(pt), 9);
	adlen = make_ad(ad, sizeof(ad), 1);
	seal_key_init(&k, key_bytes);
	ck_assert_int_eq(seal_seal(&k, ad, adlen, pt, sizeof(pt), sealed,
	    sizeof(sealed), &sn), 0);
	for (size_t bit = 0; bit < sn * 8; bit++) {
		sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		memset(back, 0x77, sizeof(back));
		ck_assert_int_eq(seal_open(&k, ad, adlen, sealed, sn, back,
		    sizeof(back), &on), -1);
		ck_assert_uint_eq(on, 0);
		sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	ck_assert_int_eq(seal_open(&k, ad, adlen, sealed, sn, back,
	    sizeof(back), &on), 0);
	ck_assert_mem_eq(back, pt, sizeof(pt));
	seal_key_clear(&k);
}
END_TEST

START_TEST(test_flipped_bit_large)
{
	const size_t n = 65536;
	uint8_t *pt = malloc(n), *sealed = malloc(n + SEAL_OVERHEAD);
	uint8_t *back = malloc(n);
	struct seal_key k;
	unsigned int seed = 77;
	size_t sn, on;

	ck_assert(pt != NULL && sealed != NULL && back != NULL);
	fill(pt, n, 5);
	seal_key_init(&k, key_bytes);
	ck_assert_int_eq(seal_seal(&k, (const uint8_t *)"ad", 2, pt, n,
	    sealed, n + SEAL_OVERHEAD, &sn), 0);
	for (int i = 0; i < 200; i++) {
		size_t bit = (size_t)rand_r(&seed) % (sn * 8);

		if (i < 3)	/* first bit of nonce, ciphertext and tag */
			bit = (size_t)(i == 0 ? 0 : i == 1 ?
			    SEAL_NONCE_LEN * 8 : (sn - SEAL_TAG_LEN) * 8);
		sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(seal_open(&k, (const uint8_t *)"ad", 2,
		    sealed, sn, back, n, &on), -1);
		sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	ck_assert_int_eq(seal_open(&k, (const uint8_t *)"ad", 2, sealed, sn,
	    back, n, &on), 0);
	ck_assert_mem_eq(back, pt, n);
	seal_key_clear(&k);
	free(pt);
	free(sealed);
	free(back);
}
END_TEST

START_TEST(test_wrong_ad_or_key_fails)
{
	uint8_t pt[100], sealed[100 + SEAL_OVERHEAD], back[100];
	uint8_t ad[64], ad2[64], id[32], otherkey[SEAL_KEY_LEN];
	struct seal_key k, k2;
	uint64_t epoch = 5, epoch2 = 6;
	size_t sn, on, adlen, ad2len;

	fill(pt, sizeof(pt), 1);
	memset(id, 0xe1, sizeof(id));
	seal_key_init(&k, key_bytes);
	adlen = seal_ad(ad, sizeof(ad), "space-7", id, sizeof(id), &epoch);
	ck_assert_int_eq(seal_seal(&k, ad, adlen, pt, sizeof(pt), sealed,
	    sizeof(sealed), &sn), 0);

	/* Another epoch, no epoch, another entry, another space. */
	ad2len = seal_ad(ad2, sizeof(ad2), "space-7", id, sizeof(id), &epoch2);
	ck_assert_int_eq(seal_open(&k, ad2, ad2len, sealed, sn, back,
	    sizeof(back), &on), -1);
	ad2len = seal_ad(ad2, sizeof(ad2), "space-7", id, sizeof(id), NULL);
	ck_assert_int_eq(seal_open(&k, ad2, ad2len, sealed, sn, back,
	    sizeof(back), &on), -1);
	id[31] ^= 1;
	ad2len = seal_ad(ad2, sizeof(ad2), "space-7", id, sizeof(id), &epoch);
	ck_assert_int_eq(seal_open(&k, ad2, ad2len, sealed, sn, back,
	    sizeof(back), &on), -1);
	id[31] ^= 1;
	ad2len = seal_ad(ad2, sizeof(ad2), "space-8", id, sizeof(id), &epoch);
	ck_assert_int_eq(seal_open(&k, ad2, ad2len, sealed, sn, back,
	    sizeof(back), &on), -1);
	/* Each bit of the AD. */
	for (size_t bit = 0; bit < adlen * 8; bit++) {
		memcpy(ad2, ad, adlen);
		ad2[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(seal_open(&k, ad2, adlen, sealed, sn, back,
		    sizeof(back), &on), -1);
	}
	ck_assert_int_eq(seal_open(&k, ad, adlen - 1, sealed, sn, back,
	    sizeof(back), &on), -1);
	/* Another key. */
	memcpy(otherkey, key_bytes, sizeof(otherkey));
	otherkey[0] ^= 0x80;
	seal_key_init(&k2, otherkey);
	ck_assert_int_eq(seal_open(&k2, ad, adlen, sealed, sn, back,
	    sizeof(back), &on), -1);
	/* Short input, short output buffer. */
	ck_assert_int_eq(seal_open(&k, ad, adlen, sealed, SEAL_OVERHEAD - 1,
	    back, sizeof(back), &on), -1);
	ck_assert_int_eq(seal_open(&k, ad, adlen, sealed, sn, back,
	    sizeof(back) - 1, &on), -1);
	ck_assert_int_eq(seal_open(&k, ad, adlen, sealed, sn - 1, back,
	    sizeof(back), &on), -1);
	ck_assert_int_eq(seal_open(&k, ad, adlen, sealed, sn, back,
	    sizeof(back), &on), 0);
	ck_assert_mem_eq(back, pt, sizeof(pt));
	seal_key_clear(&k);
	seal_key_clear(&k2);
}
END_TEST

START_TEST(test_seal_refuses_small_output)
{
	uint8_t pt[10], out[10 + SEAL_OVERHEAD];
	struct seal_key k;
	size_t on;

	memset(pt, 1, sizeof(pt));
	seal_key_init(&k, key_bytes);
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, sizeof(pt), out,
	    sizeof(out) - 1, &on), -1);
	ck_assert_uint_eq(k.seals, 0);
	seal_key_clear(&k);
}
END_TEST

START_TEST(test_ad_layout)
{
	const uint8_t id[3] = { 0xaa, 0xbb, 0xcc };
	const uint8_t want[] = { 's', 'p', 0xaa, 0xbb, 0xcc,
	    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	uint64_t epoch = 0x0102030405060708ull;
	uint8_t ad[32];

	memset(ad, 0, sizeof(ad));
	ck_assert_uint_eq(seal_ad(ad, sizeof(ad), "sp", id, 3, &epoch), 13);
	ck_assert_mem_eq(ad, want, 13);
	ck_assert_uint_eq(seal_ad(ad, sizeof(ad), "sp", id, 3, NULL), 5);
	ck_assert_mem_eq(ad, want, 5);
	ck_assert_uint_eq(seal_ad(ad, sizeof(ad), "", NULL, 0, NULL), 0);
	/* Too small: the length needed, nothing written. */
	memset(ad, 0xee, sizeof(ad));
	ck_assert_uint_eq(seal_ad(ad, 12, "sp", id, 3, &epoch), 13);
	ck_assert_uint_eq(ad[0], 0xee);
	ck_assert_uint_eq(seal_ad(NULL, 0, "sp", id, 3, &epoch), 13);
}
END_TEST

START_TEST(test_counter_warns_then_refuses)
{
	uint8_t pt[4] = { 1, 2, 3, 4 }, out[4 + SEAL_OVERHEAD], back[4];
	struct seal_key k;
	size_t on, bn;

	seal_key_init(&k, key_bytes);
	k.seals = SEAL_WARN_AT - 2;
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, 4, out, sizeof(out), &on),
	    0);
	ck_assert(!k.warned);
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, 4, out, sizeof(out), &on),
	    0);
	ck_assert(k.warned);
	ck_assert_uint_eq(k.seals, SEAL_WARN_AT);

	k.seals = SEAL_LIMIT - 1;
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, 4, out, sizeof(out), &on),
	    0);
	ck_assert_uint_eq(k.seals, SEAL_LIMIT);
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, 4, out, sizeof(out), &on),
	    -1);
	ck_assert_uint_eq(on, 0);
	ck_assert_uint_eq(k.seals, SEAL_LIMIT);
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, 4, out, sizeof(out), &on),
	    -1);
	/* Opening is not counted and still works. */
	ck_assert_int_eq(seal_seal(&(struct seal_key){ .seals = 0 }, NULL, 0,
	    pt, 4, out, sizeof(out), &on), 0);
	seal_key_clear(&k);
	seal_key_init(&k, (const uint8_t[SEAL_KEY_LEN]){ 0 });
	k.seals = SEAL_LIMIT;
	ck_assert_int_eq(seal_open(&k, NULL, 0, out, on, back, sizeof(back),
	    &bn), 0);
	ck_assert_mem_eq(back, pt, 4);
	seal_key_clear(&k);
}

/*
 * Two keys used in turn keep to their own keys (each has its own
 * contexts: OpenSSL 3.0 can keep an old key when a context is re-keyed),
 * and a key made by hand (no contexts, the fresh-context path) interworks
 * with one made by seal_key_init, both ways, after failed opens too.
 */
START_TEST(test_keys_in_turn)
{
	uint8_t pt[300], s1[300 + SEAL_OVERHEAD], s2[300 + SEAL_OVERHEAD];
	uint8_t back[300], key2[SEAL_KEY_LEN];
	struct seal_key k1, k2, bare;
	size_t n1, n2, on;

	memcpy(key2, key_bytes, sizeof(key2));
	key2[31] ^= 1;
	seal_key_init(&k1, key_bytes);
	seal_key_init(&k2, key2);
	memset(&bare, 0, sizeof(bare));
	memcpy(bare.key, key_bytes, SEAL_KEY_LEN);
	for (int round = 0; round < 20; round++) {
		fill(pt, sizeof(pt), (unsigned int)round);
		ck_assert_int_eq(seal_seal(&k1, (const uint8_t *)"a", 1, pt,
		    sizeof(pt), s1, sizeof(s1), &n1), 0);
		ck_assert_int_eq(seal_seal(&k2, (const uint8_t *)"a", 1, pt,
		    sizeof(pt), s2, sizeof(s2), &n2), 0);
		ck_assert_int_eq(seal_open(&k2, (const uint8_t *)"a", 1, s1, n1,
		    back, sizeof(back), &on), -1);
		ck_assert_int_eq(seal_open(&k1, (const uint8_t *)"a", 1, s2, n2,
		    back, sizeof(back), &on), -1);
		ck_assert_int_eq(seal_open(&k1, (const uint8_t *)"a", 1, s1, n1,
		    back, sizeof(back), &on), 0);
		ck_assert_mem_eq(back, pt, sizeof(pt));
		ck_assert_int_eq(seal_open(&bare, (const uint8_t *)"a", 1, s1,
		    n1, back, sizeof(back), &on), 0);
		ck_assert_mem_eq(back, pt, sizeof(pt));
		ck_assert_int_eq(seal_open(&k2, (const uint8_t *)"a", 1, s2, n2,
		    back, sizeof(back), &on), 0);
		ck_assert_mem_eq(back, pt, sizeof(pt));
		ck_assert_int_eq(seal_seal(&bare, (const uint8_t *)"b", 1, pt,
		    sizeof(pt), s1, sizeof(s1), &n1), 0);
		ck_assert_int_eq(seal_open(&k1, (const uint8_t *)"b", 1, s1, n1,
		    back, sizeof(back), &on), 0);
		ck_assert_mem_eq(back, pt, sizeof(pt));
	}
	ck_assert_uint_eq(k1.seals, 20);
	ck_assert_uint_eq(k2.seals, 20);
	seal_key_clear(&k1);
	seal_key_clear(&k2);
	seal_key_clear(&bare);
}
END_TEST

/* Nonces come from a pool: never repeated across refills, nor by a fork. */
START_TEST(test_nonce_pool)
{
	enum { N = 3 * SEAL_NONCE_POOL + 5 };
	static uint8_t nonces[N][SEAL_NONCE_LEN];
	uint8_t pt[8] = { 0 }, out[8 + SEAL_OVERHEAD], child[SEAL_NONCE_LEN];
	struct seal_key k;
	size_t on;
	int fds[2], status;
	pid_t pid;

	seal_key_init(&k, key_bytes);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, sizeof(pt), out,
		    sizeof(out), &on), 0);
		memcpy(nonces[i], out, SEAL_NONCE_LEN);
		for (int j = 0; j < i; j++)
			ck_assert_mem_ne(nonces[i], nonces[j], SEAL_NONCE_LEN);
	}
	/* Parent and child both seal next, from the same pool state. */
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		if (seal_seal(&k, NULL, 0, pt, sizeof(pt), out, sizeof(out),
		    &on) != 0 || write(fds[1], out, SEAL_NONCE_LEN) !=
		    SEAL_NONCE_LEN)
			_exit(1);
		_exit(0);
	}
	ck_assert_int_eq(seal_seal(&k, NULL, 0, pt, sizeof(pt), out,
	    sizeof(out), &on), 0);
	ck_assert_int_eq(read(fds[0], child, sizeof(child)), SEAL_NONCE_LEN);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_mem_ne(child, out, SEAL_NONCE_LEN);
	close(fds[0]);
	close(fds[1]);
	seal_key_clear(&k);
}
END_TEST

static Suite *
seal_suite(void)
{
	Suite *s = suite_create("seal");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_round_trip, 0,
	    (int)(sizeof(sizes) / sizeof(sizes[0])));
	tcase_add_test(tc, test_fresh_nonces);
	tcase_add_test(tc, test_flipped_bit_fails);
	tcase_add_test(tc, test_flipped_bit_large);
	tcase_add_test(tc, test_wrong_ad_or_key_fails);
	tcase_add_test(tc, test_seal_refuses_small_output);
	tcase_add_test(tc, test_ad_layout);
	tcase_add_test(tc, test_counter_warns_then_refuses);
	tcase_add_test(tc, test_keys_in_turn);
	tcase_add_test(tc, test_nonce_pool);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(seal_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_identity.c: Ed25519 identities against RFC 8032 section 7.1, the key
 * file (mode, reload, load_or_create), PeerId text and the verify cache.
 */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base58.h"
#include "identity.h"
#include "sha256.h"

struct rfc_vec {
	const char	*seed;
	const char	*pub;
	const char	*msg;
	const char	*sig;
};

/* RFC 8032 section 7.1, TEST 1, TEST 2, TEST 3. */
static const struct rfc_vec rfc8032[] = {
	{ "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
	  "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
	  "",
	  "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
	  "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b" },
	{ "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
	  "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
	  "72",
	  "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
	  "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00" },
	{ "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
	  "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
	  "af82",
	  "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
	  "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a" },
};

static char tmpdir[256];

static size_t
unhex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		ck_assert(sscanf(hex + 2 * i, "%2x", &v) == 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void
setup_dir(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_identity.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
teardown_dir(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, IDENTITY_KEY_FILE);
	unlink(path);
	snprintf(path, sizeof(path), "%s/saved.key", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	identity_cache_clear();
}

START_TEST(test_rfc8032)
{
	const struct rfc_vec *v = &rfc8032[_i];
	struct identity id;
	uint8_t seed[32], pub[32], msg[8], sig[64], want[64];
	size_t mlen;

	unhex(v->seed, seed);
	unhex(v->pub, pub);
	mlen = unhex(v->msg, msg);
	unhex(v->sig, want);
	ck_assert_int_eq(identity_from_seed(&id, seed), 0);
	ck_assert_mem_eq(id.pub, pub, 32);
	ck_assert_int_eq(identity_sign(&id, msg, mlen, sig), 0);
	ck_assert_mem_eq(sig, want, 64);
	ck_assert_int_eq(identity_verify(pub, msg, mlen, want), 0);
	/* The second verify of the same sender comes from the cache. */
	ck_assert_int_eq(identity_verify(pub, msg, mlen, want), 0);
	identity_free(&id);
	identity_cache_clear();
}
END_TEST

/*
 * OpenSSL 3.0 keeps the first key of a re-initialised context: signing
 * with two identities in turn must still give each one's own signature.
 */
START_TEST(test_sign_alternating_keys)
{
	struct identity id[3];
	uint8_t seed[32], want[3][64], sig[64], msg[3][8];
	size_t mlen[3];

	for (int k = 0; k < 3; k++) {
		unhex(rfc8032[k].seed, seed);
		unhex(rfc8032[k].sig, want[k]);
		mlen[k] = unhex(rfc8032[k].msg, msg[k]);
		ck_assert_int_eq(identity_from_seed(&id[k], seed), 0);
	}
	for (int round = 0; round < 9; round++) {
		int k = (round * 2) % 3;

		ck_assert_int_eq(identity_sign(&id[k], msg[k], mlen[k], sig),
		    0);
		ck_assert_mem_eq(sig, want[k], 64);
		ck_assert_int_eq(identity_verify(id[k].pub, msg[k], mlen[k],
		    want[k]), 0);
		ck_assert_int_eq(identity_verify(id[(k + 1) % 3].pub, msg[k],
		    mlen[k], want[k]), -1);
	}
	/* A freed identity's successor must not inherit its context. */
	identity_free(&id[0]);
	unhex(rfc8032[1].seed, seed);
	ck_assert_int_eq(identity_from_seed(&id[0], seed), 0);
	ck_assert_int_eq(identity_sign(&id[0], msg[1], mlen[1], sig), 0);
	ck_assert_mem_eq(sig, want[1], 64);
	for (int k = 0; k < 3; k++)
		identity_free(&id[k]);
	identity_cache_clear();
}
END_TEST

START_TEST(test_sign_verify)
{
	struct identity a, b;
	uint8_t msg[256], sig[64];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	ck_assert_int_eq(identity_generate(&a), 0);
	ck_assert_int_eq(identity_generate(&b), 0);
	ck_assert_mem_ne(a.pub, b.pub, 32);
	ck_assert_int_eq(identity_sign(&a, msg, sizeof(msg), sig), 0);
	ck_assert_int_eq(identity_verify(a.pub, msg, sizeof(msg), sig), 0);
	ck_assert_int_eq(identity_verify(b.pub, msg, sizeof(msg), sig), -1);
	ck_assert_int_eq(identity_verify(a.pub, msg, sizeof(msg) - 1, sig),
	    -1);
	identity_free(&a);
	identity_free(&b);
	identity_cache_clear();
}
END_TEST

/*
 * Every verification is counted, good or bad, and one in eight is timed:
 * 64 more verifications are exactly 8 more timed ones, with CPU time.
 */
START_TEST(test_verify_cost_counts_and_times)
{
	struct identity a;
	struct identity_cost c0, c1;
	uint8_t msg[64], sig[64];

	memset(msg, 0x3c, sizeof(msg));
	ck_assert_int_eq(identity_generate(&a), 0);
	ck_assert_int_eq(identity_sign(&a, msg, sizeof(msg), sig), 0);
	identity_verify_cost(&c0);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(identity_verify(a.pub, msg, sizeof(msg) -
		    (size_t)(i % 2), sig), i % 2 ? -1 : 0);
	identity_verify_cost(&c1);
	ck_assert_uint_eq(c1.verifies - c0.verifies, 64);
	ck_assert_uint_eq(c1.timed - c0.timed, 8);
	ck_assert_uint_gt(c1.timed_ns, c0.timed_ns);
	identity_free(&a);
	identity_cache_clear();
}
END_TEST

START_TEST(test_flipped_bit_fails)
{
	struct identity a;
	uint8_t msg[64], sig[64], pub[32];

	memset(msg, 0x5a, sizeof(msg));
	ck_assert_int_eq(identity_generate(&a), 0);
	ck_assert_int_eq(identity_sign(&a, msg, sizeof(msg), sig), 0);
	for (size_t bit = 0; bit < sizeof(msg) * 8; bit++) {
		msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(identity_verify(a.pub, msg, sizeof(msg), sig),
		    -1);
		msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	for (size_t bit = 0; bit < sizeof(sig) * 8; bit++) {
		sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(identity_verify(a.pub, msg, sizeof(msg), sig),
		    -1);
		sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	for (size_t bit = 0; bit < sizeof(pub) * 8; bit += 5) {
		memcpy(pub, a.pub, sizeof(pub));
		pub[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_int_eq(identity_verify(pub, msg, sizeof(msg), sig),
		    -1);
	}
	ck_assert_int_eq(identity_verify(a.pub, msg, sizeof(msg), sig), 0);
	identity_free(&a);
	identity_cache_clear();
}
END_TEST

/* More senders than cache slots: replacement must never mix keys up. */
START_TEST(test_verify_cache_replacement)
{
	enum { N = 700 };
	static uint8_t pubs[N][32], sigs[N][64];
	const char msg[] = "cache";

	for (int i = 0; i < N; i++) {
		struct identity id;

		ck_assert_int_eq(identity_generate(&id), 0);
		memcpy(pubs[i], id.pub, 32);
		ck_assert_int_eq(identity_sign(&id, msg, sizeof(msg), sigs[i]),
		    0);
		identity_free(&id);
	}
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < N; i++) {
			ck_assert_int_eq(identity_verify(pubs[i], msg,
			    sizeof(msg), sigs[i]), 0);
			ck_assert_int_eq(identity_verify(pubs[i], msg,
			    sizeof(msg), sigs[(i + 1) % N]), -1);
		}
	identity_cache_clear();
}
END_TEST

START_TEST(test_save_load)
{
	struct identity a, b;
	struct stat st;
	char path[512];
	uint8_t sig[64];
	mode_t old;

	snprintf(path, sizeof(path), "%s/saved.key", tmpdir);
	ck_assert_int_eq(identity_generate(&a), 0);
	old = umask(0);		/* the mode must not depend on the umask */
	ck_assert_int_eq(identity_save(&a, path), 0);
	umask(old);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(identity_load(&b, path), 0);
	ck_assert_str_eq(a.peer_id, b.peer_id);
	ck_assert_mem_eq(a.pub, b.pub, 32);
	ck_assert_mem_eq(a.id, b.id, 32);
	ck_assert_uint_eq(a.node, b.node);
	ck_assert_int_eq(identity_sign(&b, "x", 1, sig), 0);
	ck_assert_int_eq(identity_verify(a.pub, "x", 1, sig), 0);
	/* Saving again replaces the file atomically. */
	ck_assert_int_eq(identity_save(&b, path), 0);
	identity_free(&b);
	ck_assert_int_eq(identity_load(&b, path), 0);
	ck_assert_str_eq(a.peer_id, b.peer_id);
	identity_free(&a);
	identity_free(&b);
}
END_TEST

START_TEST(test_load_bad_file)
{
	struct identity a;
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, IDENTITY_KEY_FILE);
	errno = 0;
	ck_assert_int_eq(identity_load(&a, path), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fputs("-----BEGIN PRIVATE KEY-----\nnot a key\n"
	    "-----END PRIVATE KEY-----\n", fp);
	fclose(fp);
	chmod(path, 0600);
	ck_assert_int_eq(identity_load(&a, path), -1);
	/* A corrupt key file is an error, never silently replaced. */
	ck_assert_int_eq(identity_load_or_create(&a, tmpdir, NULL), -1);
}
END_TEST

START_TEST(test_load_or_create)
{
	struct identity a, b;
	struct stat st;
	char path[512];
	bool created;

	ck_assert_int_eq(identity_load_or_create(&a, tmpdir, &created), 0);
	ck_assert(created);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, IDENTITY_KEY_FILE);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(identity_load_or_create(&b, tmpdir, &created), 0);
	ck_assert(!created);
	ck_assert_str_eq(a.peer_id, b.peer_id);
	identity_free(&a);
	identity_free(&b);
}
END_TEST

START_TEST(test_peer_id)
{
	struct identity a;
	uint8_t id[32], zero[32];
	char text[IDENTITY_PEERID_MAX];

	ck_assert_int_eq(identity_generate(&a), 0);
	ck_assert_int_eq(a.peer_id[0], 'z');
	ck_assert_int_eq(identity_peer_id_parse(a.peer_id, id), 0);
	ck_assert_mem_eq(id, a.id, 32);
	ck_assert_uint_eq(a.node, identity_node_of(a.id));
	ck_assert_uint_eq(a.node >> 56, a.id[0]);
	ck_assert_uint_eq(a.node & 0xff, a.id[7]);

	memset(zero, 0, sizeof(zero));
	identity_peer_id_of(zero, text);
	ck_assert_str_eq(text, "z11111111111111111111111111111111");
	ck_assert_int_eq(identity_peer_id_parse(text, id), 0);
	ck_assert_mem_eq(id, zero, 32);
	identity_free(&a);
}
END_TEST

START_TEST(test_peer_id_round_trip_random)
{
	unsigned int seed = 1234;

	for (int i = 0; i < 1000; i++) {
		uint8_t id[32], back[32];
		char text[IDENTITY_PEERID_MAX];

		for (int j = 0; j < 32; j++)
			id[j] = j < i % 5 ? 0 : (uint8_t)rand_r(&seed);
		identity_peer_id_of(id, text);
		ck_assert_int_eq(identity_peer_id_parse(text, back), 0);
		ck_assert_mem_eq(back, id, 32);
	}
}
END_TEST

START_TEST(test_peer_id_parse_rejects)
{
	struct identity a;
	uint8_t id[32];
	char text[2 * IDENTITY_PEERID_MAX], junk[256];
	const char *bad[] = {
		"", "z", "Q", "1111", "zz", "z0", "zO", "zI", "zl",
		"z 2NEpo7TZRRrLZSi2U",
		"z2NEpo7TZRRrLZSi2U",		/* 12 bytes */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(identity_peer_id_parse(bad[i], id), -1);

	ck_assert_int_eq(identity_generate(&a), 0);
	/* Without the multibase prefix, or with another one. */
	ck_assert_int_eq(identity_peer_id_parse(a.peer_id + 1, id), -1);
	snprintf(text, sizeof(text), "f%s", a.peer_id + 1);
	ck_assert_int_eq(identity_peer_id_parse(text, id), -1);
	/* A character changed into one outside the alphabet. */
	snprintf(text, sizeof(text), "%s", a.peer_id);
	text[10] = '0';
	ck_assert_int_eq(identity_peer_id_parse(text, id), -1);
	/* Valid base58 of 31 and of 33 bytes. */
	for (size_t n = 31; n <= 33; n += 2) {
		uint8_t raw[33];

		memset(raw, 0xab, sizeof(raw));
		text[0] = 'z';
		ck_assert_uint_gt(base58_encode(raw, n, text + 1,
		    sizeof(text) - 1), 0);
		ck_assert_int_eq(identity_peer_id_parse(text, id), -1);
	}
	/* 33 zero bytes, then far too long. */
	junk[0] = 'z';
	memset(junk + 1, '1', 33);
	junk[34] = '\0';
	ck_assert_int_eq(identity_peer_id_parse(junk, id), -1);
	junk[33] = '\0';
	ck_assert_int_eq(identity_peer_id_parse(junk, id), 0);
	memset(junk + 1, '2', sizeof(junk) - 2);
	junk[sizeof(junk) - 1] = '\0';
	ck_assert_int_eq(identity_peer_id_parse(junk, id), -1);
	identity_free(&a);
}
END_TEST

/*
 * sha256_digest (peer ids, entry ids) is SHA-256: FIPS 180-2's vectors,
 * on a kept context called again and again, and again after it is freed.
 */
START_TEST(test_sha256_digest)
{
	static const uint8_t abc[SHA256_LEN] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41,
		0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3,
		0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
		0x15, 0xad };
	static const uint8_t empty[SHA256_LEN] = {
		0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb,
		0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4,
		0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52,
		0xb8, 0x55 };
	uint8_t md[SHA256_LEN];

	for (int i = 0; i < 3; i++) {
		sha256_digest("abc", 3, md);
		ck_assert_mem_eq(md, abc, SHA256_LEN);
		sha256_digest("", 0, md);
		ck_assert_mem_eq(md, empty, SHA256_LEN);
		if (i == 1)
			sha256_free();
	}
	ck_assert_ptr_nonnull(sha256_md());
	sha256_free();
}
END_TEST

static Suite *
identity_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("core");
	TCase *tf = tcase_create("files");

	tcase_add_loop_test(tc, test_rfc8032, 0,
	    (int)(sizeof(rfc8032) / sizeof(rfc8032[0])));
	tcase_add_test(tc, test_sign_alternating_keys);
	tcase_add_test(tc, test_sign_verify);
	tcase_add_test(tc, test_flipped_bit_fails);
	tcase_add_test(tc, test_verify_cost_counts_and_times);
	tcase_add_test(tc, test_verify_cache_replacement);
	tcase_add_test(tc, test_peer_id);
	tcase_add_test(tc, test_sha256_digest);
	tcase_add_test(tc, test_peer_id_round_trip_random);
	tcase_add_test(tc, test_peer_id_parse_rejects);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(tf, setup_dir, teardown_dir);
	tcase_add_test(tf, test_save_load);
	tcase_add_test(tf, test_load_bad_file);
	tcase_add_test(tf, test_load_or_create);
	suite_add_tcase(s, tf);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(identity_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

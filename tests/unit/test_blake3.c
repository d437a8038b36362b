/*
 * test_blake3.c: BLAKE3 against the official vectors
 * (../shared/data/blake3/test_vectors.json: hash, keyed hash, derive-key,
 * 131 bytes of extended output), with every code path this CPU has forced
 * in turn, one shot and incremental in uneven pieces; a few vectors written
 * here as facts for a clone without the data; and the b3sum command (Debian
 * package b3sum) as an oracle on random inputs of random lengths and on
 * every length around 1 KiB, the SIMD widths, the batch and 64 KiB.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blake3.h"
#include "hex.h"
#include "random_bytes.h"

#define VECTORS	"../shared/data/blake3/test_vectors.json"
#define KEY	"whats the Elvish word for friend"
#define CONTEXT	"BLAKE3 2019-12-27 16:29:52 test vectors context"

static const char *const paths[] = { "portable", "sse41", "avx2", "avx512" };
#define NPATHS	(sizeof(paths) / sizeof(paths[0]))

static uint8_t *
pattern(size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i % 251);
	return p;
}

/* Feed data in pieces of uneven sizes (seeded), so every chunk and block
 * boundary case of the incremental hasher is met. */
static void
update_pieces(struct blake3 *h, const uint8_t *p, size_t len, unsigned seed)
{
	static const size_t sizes[] = { 1, 63, 64, 65, 1023, 1024, 1025,
	    3000, 4096, 17000, 70000 };

	while (len > 0) {
		size_t n = sizes[seed++ % (sizeof(sizes) / sizeof(sizes[0]))];

		if (n > len)
			n = len;
		blake3_update(h, p, n);
		p += n;
		len -= n;
	}
}

/* Each way of hashing (one shot, one update, pieces) gives want (hex,
 * extended output of any length). mode: 0 hash, 1 keyed, 2 derive. */
static void
check_all_ways(int mode, const uint8_t *in, size_t len, const char *want)
{
	size_t outlen = strlen(want) / 2;
	uint8_t *exp = malloc(outlen), *got = malloc(outlen);
	struct blake3 h;

	ck_assert(hex_decode(want, exp, outlen) == 0);
	for (int way = 0; way < 3; way++) {
		if (mode == 0)
			blake3_init(&h);
		else if (mode == 1)
			blake3_init_keyed(&h, (const uint8_t *)KEY);
		else
			blake3_init_derive_key(&h, CONTEXT);
		if (way == 0)
			blake3_update(&h, in, len);
		else
			update_pieces(&h, in, len, (unsigned)way * 7 +
			    (unsigned)len);
		memset(got, 0, outlen);
		blake3_final(&h, got, outlen);
		ck_assert_msg(memcmp(got, exp, outlen) == 0,
		    "mode %d way %d len %zu on %s", mode, way, len,
		    blake3_impl());
		/* final leaves h usable: a second call says the same. */
		blake3_final(&h, got, 32);
		ck_assert(memcmp(got, exp, 32) == 0);
	}
	if (mode == 0) {
		blake3_hash(in, len, got);
		ck_assert_msg(memcmp(got, exp, 32) == 0, "one shot len %zu on %s",
		    len, blake3_impl());
	}
	free(exp);
	free(got);
}

START_TEST(test_paths_named)
{
	ck_assert_int_eq(blake3_use("portable"), 0);
	ck_assert_str_eq(blake3_impl(), "portable");
	ck_assert_int_eq(blake3_use("mmx"), -1);
	ck_assert_int_eq(blake3_use(NULL), 0);
	printf("blake3: this CPU runs %s\n", blake3_impl());
}
END_TEST

START_TEST(test_vectors_file)
{
	json_error_t err;
	json_t *root = json_load_file(VECTORS, 0, &err), *cases;
	size_t ran = 0;

	if (root == NULL) {
		printf("test_blake3: skipped the vector file (%s: %s)\n",
		    VECTORS, err.text);
		return;
	}
	ck_assert_str_eq(json_string_value(json_object_get(root, "key")), KEY);
	ck_assert_str_eq(json_string_value(json_object_get(root,
	    "context_string")), CONTEXT);
	cases = json_object_get(root, "cases");
	ck_assert(json_array_size(cases) >= 20);
	for (size_t p = 0; p < NPATHS; p++) {
		if (blake3_use(paths[p]) != 0) {
			printf("test_blake3: this CPU lacks %s\n", paths[p]);
			continue;
		}
		for (size_t i = 0; i < json_array_size(cases); i++) {
			json_t *c = json_array_get(cases, i);
			size_t len = (size_t)json_integer_value(
			    json_object_get(c, "input_len"));
			uint8_t *in = pattern(len);

			check_all_ways(0, in, len, json_string_value(
			    json_object_get(c, "hash")));
			check_all_ways(1, in, len, json_string_value(
			    json_object_get(c, "keyed_hash")));
			check_all_ways(2, in, len, json_string_value(
			    json_object_get(c, "derive_key")));
			free(in);
			ran++;
		}
	}
	blake3_use(NULL);
	ck_assert(ran > 0);
	json_decref(root);
}
END_TEST

/* A few of the official vectors (first 32 bytes), kept as facts. */
static const struct {
	size_t		 len;
	const char	*hash, *keyed, *derive;
} facts[] = {
	{ 0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
	  "92b2b75604ed3c761f9d6f62392c8a9227ad0ea3f09573e783f1498a4ed60d26",
	  "2cc39783c223154fea8dfb7c1b1660f2ac2dcbd1c1de8277b0b0dd39b7e50d7d" },
	{ 1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213",
	  "6d7878dfff2f485635d39013278ae14f1454b8c0a3a2d34bc1ab38228a80c95b",
	  "b3e2e340a117a499c6cf2398a19ee0d29cca2bb7404c73063382693bf66cb06c" },
	{ 1024,
	  "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7",
	  "75c46f6f3d9eb4f55ecaaee480db732e6c2105546f1e675003687c31719c7ba4",
	  "7356cd7720d5b66b6d0697eb3177d9f8d73a4a5c5e968896eb6a689684302706" },
	{ 1025,
	  "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444",
	  "357dc55de0c7e382c900fd6e320acc04146be01db6a8ce7210b7189bd664ea69",
	  "effaa245f065fbf82ac186839a249707c3bddf6d3fdda22d1b95a3c970379bcb" },
	{ 31744,
	  "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47",
	  "efa53b389ab67c593dba624d898d0f7353ab99e4ac9d42302ee64cbf9939a419",
	  "39772aef80e0ebe60596361e45b061e8f417429d529171b6764468c22928e28e" },
	{ 102400,
	  "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085",
	  "1c35d1a5811083fd7119f5d5d1ba027b4d01c0c6c49fb6ff2cf75393ea5db4a7",
	  "4652cff7a3f385a6103b5c260fc1593e13c778dbe608efb092fe7ee69df6e9c6" },
};

START_TEST(test_vector_facts)
{
	for (size_t p = 0; p < NPATHS; p++) {
		if (blake3_use(paths[p]) != 0)
			continue;
		for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
			uint8_t *in = pattern(facts[i].len);

			check_all_ways(0, in, facts[i].len, facts[i].hash);
			check_all_ways(1, in, facts[i].len, facts[i].keyed);
			check_all_ways(2, in, facts[i].len, facts[i].derive);
			free(in);
		}
	}
	blake3_use(NULL);
}
END_TEST

/* The tree primitives rebuild the hash: 2^level-chunk subtree CVs folded
 * by blake3_parent give blake3_hash (equal-sized halves all the way). */
START_TEST(test_tree_primitives)
{
	size_t nchunks = 2048, len = nchunks * BLAKE3_CHUNK_LEN;
	uint8_t *in = random_bytes(len), want[32], got[32];
	uint8_t *cvs = malloc(32 * nchunks);

	blake3_hash(in, len, want);
	blake3_subtree(in, len, 0, 1, got);
	ck_assert(memcmp(got, want, 32) == 0);
	for (unsigned level = 0; level <= 11; level++) {
		size_t n = nchunks >> level;

		blake3_subtree_cvs(in, nchunks, 0, level, cvs);
		if (level == 11) {
			/* One CV: the whole tree's, not finalized as root. */
			blake3_subtree(in, len, 0, 0, got);
			ck_assert(memcmp(cvs, got, 32) == 0);
			continue;
		}
		for (; n > 1; n /= 2)
			for (size_t i = 0; i < n / 2; i++)
				blake3_parent(cvs + 64 * i, cvs + 64 * i + 32,
				    n == 2, cvs + 32 * i);
		ck_assert_msg(memcmp(cvs, want, 32) == 0, "level %u", level);
	}
	ck_assert_uint_eq(blake3_left_len(1025), 1024);
	ck_assert_uint_eq(blake3_left_len(4096), 2048);
	ck_assert_uint_eq(blake3_left_len(4097), 4096);
	free(cvs);
	free(in);
}
END_TEST

/* Lengths worth checking: around 1 KiB, the lane widths (4, 8, 16 chunks),
 * the batch (512 chunks), 64 KiB, and random lengths up to 2 MiB. */
static size_t
oracle_lengths(size_t *lens, size_t max)
{
	static const size_t bases[] = { 0, 1024, 2048, 4096, 8192, 16384,
	    32768, 65536, 131072, 512 * 1024, 1024 * 1024 };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
		for (int d = -2; d <= 2; d++)
			if ((ssize_t)bases[i] + d >= 0 && n < max)
				lens[n++] = bases[i] + (size_t)d;
	for (size_t i = 1; i < 64 && n < max; i++)
		lens[n++] = (size_t)1 << (random() % 21) | (size_t)random() %
		    (1 << 12);
	while (n < max)
		lens[n++] = (size_t)random() % (2 << 20);
	return n;
}

START_TEST(test_b3sum_oracle)
{
	char dir[] = "/tmp/test_blake3.XXXXXX", cmd[256], line[512];
	size_t lens[96], n;
	uint8_t *data[96];
	FILE *f;
	size_t seen = 0;

	if (system("b3sum --version >/dev/null 2>&1") != 0) {
		printf("test_blake3: skipped the b3sum oracle (no b3sum: "
		    "apt-get install b3sum)\n");
		return;
	}
	srandom(27);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	n = oracle_lengths(lens, 96);
	for (size_t i = 0; i < n; i++) {
		char name[64];

		data[i] = random_bytes(lens[i]);
		snprintf(name, sizeof(name), "%s/%03zu", dir, i);
		f = fopen(name, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(data[i], 1, lens[i], f), lens[i]);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "cd %s && b3sum --num-threads 1 [0-9]*", dir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t i = strtoul(line + 66, NULL, 10);
		char hex[65];

		ck_assert_uint_lt(i, n);
		for (size_t p = 0; p < NPATHS; p++) {
			uint8_t out[32];
			struct blake3 h;

			if (blake3_use(paths[p]) != 0)
				continue;
			blake3_hash(data[i], lens[i], out);
			hex_encode(out, 32, hex);
			ck_assert_msg(strncmp(hex, line, 64) == 0,
			    "len %zu on %s", lens[i], paths[p]);
			blake3_init(&h);
			update_pieces(&h, data[i], lens[i], (unsigned)i);
			blake3_final(&h, out, 32);
			hex_encode(out, 32, hex);
			ck_assert_msg(strncmp(hex, line, 64) == 0,
			    "pieces len %zu on %s", lens[i], paths[p]);
		}
		seen++;
	}
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_uint_eq(seen, n);
	blake3_use(NULL);

	/* Extended output and keyed mode, on the 1 MiB + 1 input. */
	for (size_t i = 0; i < n; i++) {
		uint8_t out[300], key[32];
		char hex[601];
		struct blake3 h;

		if (lens[i] != 1024 * 1024 + 1)
			continue;
		snprintf(cmd, sizeof(cmd), "b3sum --no-names -l 300 %s/%03zu",
		    dir, i);
		f = popen(cmd, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(hex, sizeof(hex), f));
		ck_assert_int_eq(pclose(f), 0);
		blake3_init(&h);
		blake3_update(&h, data[i], lens[i]);
		blake3_final(&h, out, sizeof(out));
		{
			uint8_t want[300];

			ck_assert(hex_decode(hex, want, 300) == 0);
			ck_assert(memcmp(out, want, 300) == 0);
		}
		memcpy(key, "0123456789abcdef0123456789abcdef", 32);
		snprintf(cmd, sizeof(cmd), "printf %%s "
		    "0123456789abcdef0123456789abcdef | b3sum --no-names "
		    "--keyed %s/%03zu", dir, i);
		f = popen(cmd, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(hex, sizeof(hex), f));
		ck_assert_int_eq(pclose(f), 0);
		blake3_init_keyed(&h, key);
		update_pieces(&h, data[i], lens[i], 3);
		blake3_final(&h, out, 32);
		{
			uint8_t want[32];

			hex[strcspn(hex, "\n")] = '\0';
			ck_assert(hex_decode(hex, want, 32) == 0);
			ck_assert(memcmp(out, want, 32) == 0);
		}
	}
	for (size_t i = 0; i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s/%03zu", dir, i);
		unlink(name);
		free(data[i]);
	}
	rmdir(dir);
}
END_TEST

static Suite *
blake3_suite(void)
{
	Suite *s = suite_create("blake3");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_paths_named);
	tcase_add_test(tc, test_vectors_file);
	tcase_add_test(tc, test_vector_facts);
	tcase_add_test(tc, test_tree_primitives);
	tcase_add_test(tc, test_b3sum_oracle);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(blake3_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

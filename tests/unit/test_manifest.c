/*
 * test_manifest.c: unit tests for common/manifest.c: piece arithmetic,
 * the encoding round trip and its canonical form, the cid, piece checks,
 * and refusal of every malformed or out-of-range manifest.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "manifest.h"

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 12) * 13);
}

/* A manifest of size bytes in pieces of ps, hashes over generated data. */
static uint8_t *
make(struct manifest *m, uint64_t size, uint32_t ps)
{
	uint8_t *data = malloc(size);

	fill(data, size, 3);
	ck_assert_int_eq(manifest_init(m, size, ps), 0);
	for (uint32_t i = 0; i < m->npieces; i++)
		manifest_sha256(data + manifest_piece_off(m, i),
		    manifest_piece_len(m, i), manifest_hash(m, i));
	return data;
}

START_TEST(piece_arithmetic)
{
	struct manifest m;

	ck_assert_int_eq(manifest_init(&m, 10000, 4096), 0);
	ck_assert_uint_eq(m.npieces, 3);
	ck_assert_uint_eq(manifest_piece_len(&m, 0), 4096);
	ck_assert_uint_eq(manifest_piece_len(&m, 2), 10000 - 8192);
	ck_assert_uint_eq(manifest_piece_len(&m, 3), 0);
	ck_assert_uint_eq(manifest_piece_off(&m, 2), 8192);
	manifest_free(&m);

	ck_assert_int_eq(manifest_init(&m, 8192, 4096), 0);
	ck_assert_uint_eq(m.npieces, 2);
	ck_assert_uint_eq(manifest_piece_len(&m, 1), 4096);
	manifest_free(&m);
}
END_TEST

START_TEST(init_refuses_out_of_range)
{
	struct manifest m;

	ck_assert_int_eq(manifest_init(&m, 0, 4096), -1);
	ck_assert_int_eq(manifest_init(&m, 100, MANIFEST_PIECE_MIN - 1), -1);
	ck_assert_int_eq(manifest_init(&m, 100, MANIFEST_PIECE_MAX + 1), -1);
	ck_assert_int_eq(manifest_init(&m, (uint64_t)MANIFEST_PIECES_MAX *
	    1024 + 1, 1024), -1);
	ck_assert_int_eq(manifest_init(&m, (uint64_t)MANIFEST_PIECES_MAX *
	    1024, 1024), 0);
	manifest_free(&m);
}
END_TEST

START_TEST(round_trip_and_cid)
{
	struct manifest m, d;
	struct dcbor_buf b, b2;
	uint8_t cid[MANIFEST_HASH_LEN], cid2[MANIFEST_HASH_LEN];
	uint8_t *data = make(&m, 100000, 4096);

	dcbor_buf_init(&b);
	manifest_encode(&m, &b);
	ck_assert_int_eq(dcbor_check(b.data, b.len, 4, true, NULL), DCBOR_OK);
	ck_assert_int_eq(manifest_decode(b.data, b.len, &d), 0);
	ck_assert_uint_eq(d.size, 100000);
	ck_assert_uint_eq(d.piece_size, 4096);
	ck_assert_uint_eq(d.npieces, 25);
	ck_assert_mem_eq(d.hashes, m.hashes, 25 * MANIFEST_HASH_LEN);
	dcbor_buf_init(&b2);
	manifest_encode(&d, &b2);
	ck_assert_uint_eq(b.len, b2.len);
	ck_assert_mem_eq(b.data, b2.data, b.len);
	manifest_cid(b.data, b.len, cid);
	manifest_sha256(b2.data, b2.len, cid2);
	ck_assert_mem_eq(cid, cid2, sizeof(cid));

	/* Pieces check by length and hash. */
	ck_assert(manifest_piece_ok(&d, 0, data, 4096));
	ck_assert(manifest_piece_ok(&d, 24, data + 24 * 4096, 100000 - 24 *
	    4096));
	ck_assert(!manifest_piece_ok(&d, 0, data, 4095));
	ck_assert(!manifest_piece_ok(&d, 1, data, 4096));
	ck_assert(!manifest_piece_ok(&d, 25, data, 4096));
	data[5] ^= 1;
	ck_assert(!manifest_piece_ok(&d, 0, data, 4096));

	/* A change to any field changes the cid. */
	d.size = 99999;
	dcbor_buf_reset(&b2);
	manifest_encode(&d, &b2);
	manifest_cid(b2.data, b2.len, cid2);
	ck_assert(memcmp(cid, cid2, sizeof(cid)) != 0);

	free(data);
	manifest_free(&m);
	manifest_free(&d);
	dcbor_buf_free(&b);
	dcbor_buf_free(&b2);
}
END_TEST

static int
decode_map(uint64_t v, uint64_t size, uint64_t piece, size_t nhash)
{
	struct dcbor_buf b;
	struct manifest d;
	uint8_t *h = calloc(nhash ? nhash : 1, MANIFEST_HASH_LEN);
	int rc;

	dcbor_buf_init(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "v");
	dcbor_put_uint(&b, v);
	dcbor_put_cstr(&b, "size");
	dcbor_put_uint(&b, size);
	dcbor_put_cstr(&b, "piece");
	dcbor_put_uint(&b, piece);
	dcbor_put_cstr(&b, "hashes");
	dcbor_put_bytes(&b, h, nhash * MANIFEST_HASH_LEN);
	rc = manifest_decode(b.data, b.len, &d);
	if (rc == 0)
		manifest_free(&d);
	dcbor_buf_free(&b);
	free(h);
	return rc;
}

START_TEST(decode_refuses_malformed)
{
	struct dcbor_buf b;
	struct manifest d;

	ck_assert_int_eq(decode_map(1, 5000, 4096, 2), 0);
	ck_assert_int_eq(decode_map(2, 5000, 4096, 2), -1);	/* version */
	ck_assert_int_eq(decode_map(1, 5000, 4096, 1), -1);	/* too few */
	ck_assert_int_eq(decode_map(1, 5000, 4096, 3), -1);	/* too many */
	ck_assert_int_eq(decode_map(1, 0, 4096, 0), -1);	/* empty */
	ck_assert_int_eq(decode_map(1, 5000, 512, 10), -1);	/* small */
	ck_assert_int_eq(decode_map(1, 5000, (8u << 20), 1), -1); /* big */
	ck_assert_int_eq(decode_map(1, 5000, (1ull << 33), 1), -1);

	/* Keys out of canonical order. */
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "size");
	dcbor_put_uint(&b, 5000);
	dcbor_put_cstr(&b, "v");
	dcbor_put_uint(&b, 1);
	dcbor_put_cstr(&b, "piece");
	dcbor_put_uint(&b, 4096);
	dcbor_put_cstr(&b, "hashes");
	dcbor_put_bytes(&b, "", 0);
	ck_assert_int_eq(manifest_decode(b.data, b.len, &d), -1);

	/* Not a map; truncated; trailing bytes. */
	ck_assert_int_eq(manifest_decode((const uint8_t *)"\x01", 1, &d), -1);
	ck_assert_int_eq(manifest_decode(b.data, b.len - 1, &d), -1);
	dcbor_buf_free(&b);
	ck_assert_int_eq(manifest_decode(NULL, 0, &d), -1);
}
END_TEST

START_TEST(decode_trailing_refused)
{
	struct manifest m, d;
	struct dcbor_buf b;
	uint8_t *data = make(&m, 3000, 1024);

	dcbor_buf_init(&b);
	manifest_encode(&m, &b);
	dcbor_put_uint(&b, 0);
	ck_assert_int_eq(manifest_decode(b.data, b.len, &d), -1);
	ck_assert_int_eq(manifest_decode(b.data, b.len - 1, &d), 0);
	manifest_free(&d);
	manifest_free(&m);
	dcbor_buf_free(&b);
	free(data);
}
END_TEST

static Suite *
manifest_suite(void)
{
	Suite *s = suite_create("manifest");
	TCase *tc = tcase_create("manifest");

	tcase_add_test(tc, piece_arithmetic);
	tcase_add_test(tc, init_refuses_out_of_range);
	tcase_add_test(tc, round_trip_and_cid);
	tcase_add_test(tc, decode_refuses_malformed);
	tcase_add_test(tc, decode_trailing_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(manifest_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

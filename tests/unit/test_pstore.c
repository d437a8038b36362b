/*
 * test_pstore.c: unit tests for common/pstore.c in a private temporary
 * directory: pieces verified before they are stored, the map flushed and
 * reopened (resume after a restart), a corrupt, missing or foreign map
 * rebuilt from the data file, adoption of a publisher's staging file, and
 * the whole-blob hash.
 */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcbor.h"
#include "manifest.h"
#include "pstore.h"

#define SIZE	(10 * 4096 + 100)
#define PIECE	4096

static char tmpdir[64];
static char store[128];
static uint8_t *blob;
static struct manifest man;
static struct dcbor_buf menc;

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_pstore.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(store, sizeof(store), "%s/blob", tmpdir);
	blob = malloc(SIZE);
	for (size_t i = 0; i < SIZE; i++)
		blob[i] = (uint8_t)(i * 31 + (i >> 8));
	ck_assert_int_eq(manifest_init(&man, SIZE, PIECE), 0);
	for (uint32_t i = 0; i < man.npieces; i++)
		manifest_sha256(blob + manifest_piece_off(&man, i),
		    manifest_piece_len(&man, i), manifest_hash(&man, i));
	dcbor_buf_init(&menc);
	manifest_encode(&man, &menc);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	free(blob);
	manifest_free(&man);
	dcbor_buf_free(&menc);
}

static const uint8_t *
piece(uint32_t i, size_t *len)
{
	*len = manifest_piece_len(&man, i);
	return blob + manifest_piece_off(&man, i);
}

static struct pstore *
open_store(void)
{
	char err[256];
	struct pstore *ps = pstore_open(store, menc.data, menc.len, err,
	    sizeof(err));

	ck_assert_msg(ps != NULL, "open: %s", err);
	return ps;
}

static void
put_pieces(struct pstore *ps, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {
		size_t len;
		const uint8_t *p = piece(i, &len);

		ck_assert_int_eq(pstore_put(ps, i, p, len), PSTORE_OK);
	}
}

static void
store_file(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", store, name);
}

START_TEST(put_verifies_and_get_reads_back)
{
	struct pstore *ps = open_store();
	uint8_t buf[PIECE], bad[PIECE];
	struct stat st;
	char path[256];
	size_t len;
	const uint8_t *p;

	ck_assert_uint_eq(pstore_count(ps), 0);
	ck_assert(!pstore_complete(ps));
	ck_assert(!pstore_rebuilt(ps));
	store_file(PSTORE_DATA, path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, SIZE);	/* sparse, full size */

	p = piece(3, &len);
	memcpy(bad, p, len);
	bad[17] ^= 0x40;
	ck_assert_int_eq(pstore_put(ps, 3, bad, len), PSTORE_EBAD);
	ck_assert_int_eq(pstore_put(ps, 3, p, len - 1), PSTORE_EBAD);
	ck_assert_int_eq(pstore_put(ps, 4, p, len), PSTORE_EBAD);
	ck_assert_int_eq(pstore_put(ps, man.npieces, p, len), PSTORE_EBAD);
	ck_assert(!pstore_has(ps, 3));
	ck_assert_int_eq(pstore_get(ps, 3, buf), -1);

	ck_assert_int_eq(pstore_put(ps, 3, p, len), PSTORE_OK);
	ck_assert_int_eq(pstore_put(ps, 3, p, len), PSTORE_DUP);
	ck_assert(pstore_has(ps, 3));
	ck_assert_uint_eq(pstore_count(ps), 1);
	ck_assert_int_eq(pstore_get(ps, 3, buf), 0);
	ck_assert_mem_eq(buf, p, len);

	/* The short last piece. */
	p = piece(man.npieces - 1, &len);
	ck_assert_uint_eq(len, 100);
	ck_assert_int_eq(pstore_put(ps, man.npieces - 1, p, len), PSTORE_OK);
	ck_assert_int_eq(pstore_get(ps, man.npieces - 1, buf), 0);
	ck_assert_mem_eq(buf, p, len);
	pstore_close(ps);
}
END_TEST

START_TEST(reopen_resumes_from_the_map)
{
	struct pstore *ps = open_store();
	size_t blen;
	const uint8_t *bits;

	put_pieces(ps, 0, 5);
	ck_assert_int_eq(pstore_flush(ps), 0);
	pstore_close(ps);

	ps = open_store();
	ck_assert(!pstore_rebuilt(ps));
	ck_assert_uint_eq(pstore_count(ps), 5);
	for (uint32_t i = 0; i < man.npieces; i++)
		ck_assert(pstore_has(ps, i) == (i < 5));
	bits = pstore_bits(ps, &blen);
	ck_assert_uint_eq(blen, (man.npieces + 7) / 8);
	ck_assert_uint_eq(bits[0], 0xf8);
	put_pieces(ps, 5, man.npieces);
	ck_assert(pstore_complete(ps));
	pstore_close(ps);

	/* Opened by directory alone, as a restarted peer does. */
	{
		char err[256];

		ps = pstore_open(store, NULL, 0, err, sizeof(err));
		ck_assert_msg(ps != NULL, "%s", err);
		ck_assert(pstore_complete(ps));
		pstore_close(ps);
	}
}
END_TEST

START_TEST(corrupt_map_is_rebuilt)
{
	struct pstore *ps = open_store();
	char path[256];
	uint8_t b;
	int fd;

	put_pieces(ps, 2, 7);
	pstore_close(ps);
	store_file(PSTORE_HAVE, path, sizeof(path));
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, 16), 1);
	b ^= 0xff;		/* claims pieces it does not hold */
	ck_assert_int_eq(pwrite(fd, &b, 1, 16), 1);
	close(fd);

	ps = open_store();
	ck_assert(pstore_rebuilt(ps));
	ck_assert_uint_eq(pstore_count(ps), 5);
	for (uint32_t i = 0; i < man.npieces; i++)
		ck_assert(pstore_has(ps, i) == (i >= 2 && i < 7));
	pstore_close(ps);

	/* The rebuilt map was flushed: the next open trusts it. */
	ps = open_store();
	ck_assert(!pstore_rebuilt(ps));
	ck_assert_uint_eq(pstore_count(ps), 5);
	pstore_close(ps);
}
END_TEST

START_TEST(missing_or_short_map_is_rebuilt)
{
	struct pstore *ps = open_store();
	char path[256];
	size_t len;
	const uint8_t *p;
	uint8_t bad[PIECE];
	int fd;

	put_pieces(ps, 0, 3);
	pstore_close(ps);
	/* A piece written but never verified (garbage) must not count. */
	store_file(PSTORE_DATA, path, sizeof(path));
	p = piece(8, &len);
	memcpy(bad, p, len);
	bad[0] ^= 1;
	fd = open(path, O_RDWR);
	ck_assert_int_eq(pwrite(fd, bad, len, manifest_piece_off(&man, 8)),
	    (ssize_t)len);
	close(fd);
	store_file(PSTORE_HAVE, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);

	ps = open_store();
	ck_assert(pstore_rebuilt(ps));
	ck_assert_uint_eq(pstore_count(ps), 3);
	ck_assert(!pstore_has(ps, 8));
	pstore_close(ps);

	ck_assert_int_eq(truncate(path, 10), 0);
	ps = open_store();
	ck_assert(pstore_rebuilt(ps));
	ck_assert_uint_eq(pstore_count(ps), 3);
	pstore_close(ps);
}
END_TEST

START_TEST(another_manifest_is_refused)
{
	struct pstore *ps = open_store();
	struct manifest m2;
	struct dcbor_buf e2;
	char err[256], path[256];

	pstore_close(ps);
	ck_assert_int_eq(manifest_init(&m2, SIZE, 2 * PIECE), 0);
	dcbor_buf_init(&e2);
	manifest_encode(&m2, &e2);
	ck_assert_ptr_null(pstore_open(store, e2.data, e2.len, err,
	    sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "another manifest"));
	manifest_free(&m2);
	dcbor_buf_free(&e2);

	snprintf(path, sizeof(path), "%s/nothing", tmpdir);
	ck_assert_ptr_null(pstore_open(path, NULL, 0, err, sizeof(err)));
}
END_TEST

START_TEST(adopt_and_hash)
{
	char stage[256], err[256];
	uint8_t h[MANIFEST_HASH_LEN], want[MANIFEST_HASH_LEN];
	struct pstore *ps;
	FILE *fp;

	snprintf(stage, sizeof(stage), "%s/stage", tmpdir);
	fp = fopen(stage, "w");
	ck_assert_uint_eq(fwrite(blob, 1, SIZE, fp), SIZE);
	fclose(fp);
	ps = pstore_adopt(store, menc.data, menc.len, stage, err, sizeof(err));
	ck_assert_msg(ps != NULL, "%s", err);
	ck_assert(pstore_complete(ps));
	ck_assert_int_ne(access(stage, F_OK), 0);
	ck_assert_int_eq(pstore_sha256(ps, h), 0);
	manifest_sha256(blob, SIZE, want);
	ck_assert_mem_eq(h, want, sizeof(h));
	pstore_close(ps);

	/* Publishing the same blob again keeps the store and drops the copy. */
	fp = fopen(stage, "w");
	ck_assert_uint_eq(fwrite(blob, 1, SIZE, fp), SIZE);
	fclose(fp);
	ps = pstore_adopt(store, menc.data, menc.len, stage, err, sizeof(err));
	ck_assert_msg(ps != NULL, "%s", err);
	ck_assert(pstore_complete(ps));
	ck_assert(!pstore_rebuilt(ps));
	ck_assert_int_ne(access(stage, F_OK), 0);
	pstore_close(ps);
}
END_TEST

/*
 * --direct-io: pieces written with O_DIRECT from a write cache that keeps
 * the last few for serving; a held slot is never reused and outlives its
 * store; an unaligned piece, or one arriving while every slot is held,
 * is written through the page cache.  Every piece reads back, after a
 * reopen too.
 */
START_TEST(direct_writes_and_cache)
{
	struct pstore *ps = open_store();
	uint8_t buf[PIECE], h[MANIFEST_HASH_LEN], want[MANIFEST_HASH_LEN];
	const uint8_t *c3, *c[3], *p;
	void *t3, *t[3];
	uint32_t last = man.npieces - 1;
	size_t len;

	ck_assert(!pstore_is_direct(ps));
	ck_assert_ptr_null(pstore_cache_hold(ps, 0, &t3));
	if (pstore_direct(ps, 3 * PIECE) == -1) {
		/* This file system refuses O_DIRECT: the store stays usable. */
		ck_assert_int_eq(errno, EINVAL);
		ck_assert(!pstore_is_direct(ps));
		put_pieces(ps, 0, man.npieces);
		ck_assert(pstore_complete(ps));
		pstore_close(ps);
		return;
	}
	ck_assert(pstore_is_direct(ps));
	put_pieces(ps, 0, 5);
	/* Three slots: pieces 2, 3 and 4 are kept, 0 and 1 gone. */
	ck_assert_ptr_null(pstore_cache_hold(ps, 0, &t3));
	ck_assert_ptr_null(pstore_cache_hold(ps, 1, &t3));
	c3 = pstore_cache_hold(ps, 3, &t3);
	ck_assert_ptr_nonnull(c3);
	ck_assert_mem_eq(c3, piece(3, &len), PIECE);
	/* While piece 3 is held, newer pieces evict around it. */
	put_pieces(ps, 5, 8);
	ck_assert_ptr_null(pstore_cache_hold(ps, 4, &t[0]));
	ck_assert_mem_eq(c3, piece(3, &len), PIECE);
	c[0] = pstore_cache_hold(ps, 7, &t[0]);
	c[1] = pstore_cache_hold(ps, 6, &t[1]);
	ck_assert_ptr_nonnull(c[0]);
	ck_assert_ptr_nonnull(c[1]);
	ck_assert_mem_eq(c[0], piece(7, &len), PIECE);
	/* Every slot held: piece 8 goes through the page cache, uncached. */
	put_pieces(ps, 8, 9);
	ck_assert_ptr_null(pstore_cache_hold(ps, 8, &t[2]));
	pstore_cache_release(c[1], PIECE, t[1]);
	/* The short last piece is not aligned: written buffered. */
	p = piece(last, &len);
	ck_assert_int_eq(pstore_put(ps, last, p, len), PSTORE_OK);
	ck_assert_ptr_null(pstore_cache_hold(ps, last, &t[2]));
	put_pieces(ps, 9, last);
	ck_assert(pstore_complete(ps));
	for (uint32_t i = 0; i < man.npieces; i++) {
		ck_assert_int_eq(pstore_get(ps, i, buf), 0);
		p = piece(i, &len);
		ck_assert_mem_eq(buf, p, len);
	}
	/* Held bytes outlive the store; the last release frees them. */
	pstore_close(ps);
	ck_assert_mem_eq(c3, piece(3, &len), PIECE);
	ck_assert_mem_eq(c[0], piece(7, &len), PIECE);
	pstore_cache_release(c3, PIECE, t3);
	pstore_cache_release(c[0], PIECE, t[0]);

	ps = open_store();
	ck_assert(pstore_complete(ps));
	ck_assert(!pstore_rebuilt(ps));
	ck_assert_int_eq(pstore_sha256(ps, h), 0);
	manifest_sha256(blob, SIZE, want);
	ck_assert_mem_eq(h, want, sizeof(h));
	pstore_close(ps);
}
END_TEST

static Suite *
pstore_suite(void)
{
	Suite *s = suite_create("pstore");
	TCase *tc = tcase_create("pstore");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, put_verifies_and_get_reads_back);
	tcase_add_test(tc, reopen_resumes_from_the_map);
	tcase_add_test(tc, corrupt_map_is_rebuilt);
	tcase_add_test(tc, missing_or_short_map_is_rebuilt);
	tcase_add_test(tc, another_manifest_is_refused);
	tcase_add_test(tc, adopt_and_hash);
	tcase_add_test(tc, direct_writes_and_cache);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pstore_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_nodestore.c: unit tests for common/nodestore.c in a private
 * temporary directory: nodes survive a reopen, a torn pack tail is cut
 * and the index rebuilt, a lost or damaged index is rebuilt from the
 * packs, a corrupted byte is caught on read (and by the verify pass),
 * counts by kind, and the store that keeps nothing.
 */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcbor.h"
#include "nodestore.h"
#include "pnode.h"

#define NNODES	20

static char dir[64];
static char path[128];
static uint8_t ids[NNODES][PNODE_ID_LEN];
static uint8_t bodies[NNODES][3000];
static size_t lens[NNODES];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_nodestore.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (size_t i = 0; i < NNODES; i++) {
		lens[i] = 100 + 137 * i;
		for (size_t k = 0; k < lens[i]; k++)
			bodies[i][k] = (uint8_t)(i * 7 + k * 13 + (k >> 5));
		pnode_id(bodies[i], lens[i], ids[i]);
	}
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static struct nodestore *
open_store(void)
{
	char err[256] = "";
	struct nodestore *s = nodestore_open(dir, err, sizeof(err));

	ck_assert_msg(s != NULL, "open: %s", err);
	return s;
}

/* Put nodes [from, to) as chunks. */
static void
put_range(struct nodestore *s, size_t from, size_t to)
{
	uint8_t id[PNODE_ID_LEN];

	for (size_t i = from; i < to; i++) {
		ck_assert_int_eq(nodestore_put(s, PNODE_C, bodies[i], lens[i],
		    id), 1);
		ck_assert_mem_eq(id, ids[i], PNODE_ID_LEN);
	}
}

static void
check_held(struct nodestore *s, size_t from, size_t to)
{
	struct dcbor_buf b;
	int kind;

	dcbor_buf_init(&b);
	for (size_t i = from; i < to; i++) {
		ck_assert_int_eq(nodestore_get(s, ids[i], &b, &kind), 0);
		ck_assert_int_eq(kind, PNODE_C);
		ck_assert_uint_eq(b.len, lens[i]);
		ck_assert_mem_eq(b.data, bodies[i], lens[i]);
	}
	dcbor_buf_free(&b);
}

static off_t
file_size(const char *name)
{
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

START_TEST(put_get_reopen)
{
	struct nodestore *s = open_store();
	struct nodestore_counts c;
	struct dcbor_buf b;
	uint8_t id[PNODE_ID_LEN];
	uint64_t bytes = 0;

	put_range(s, 0, NNODES);
	/* A second put of the same node writes nothing. */
	ck_assert_int_eq(nodestore_put(s, PNODE_C, bodies[3], lens[3], id), 0);
	check_held(s, 0, NNODES);
	nodestore_close(s);

	s = open_store();
	check_held(s, 0, NNODES);
	nodestore_counts(s, &c);
	for (size_t i = 0; i < NNODES; i++)
		bytes += lens[i];
	ck_assert_uint_eq(c.nodes[PNODE_C], NNODES);
	ck_assert_uint_eq(c.bytes[PNODE_C], bytes);
	ck_assert_uint_eq(c.nodes_total, NNODES);
	ck_assert_uint_eq(c.cut_bytes, 0);
	ck_assert_uint_eq(c.reindexed, 0);	/* the index was believed */
	memset(id, 0xee, sizeof(id));
	dcbor_buf_init(&b);
	ck_assert_int_eq(nodestore_get(s, id, &b, NULL), 1);
	ck_assert(!nodestore_has(s, id));
	ck_assert(nodestore_has(s, ids[0]));
	ck_assert_uint_eq(nodestore_verify(s, NULL, NULL), 0);
	dcbor_buf_free(&b);
	nodestore_close(s);
}
END_TEST

START_TEST(torn_tail_is_cut)
{
	struct nodestore *s = open_store();
	struct nodestore_counts c;
	off_t full;
	int fd;

	put_range(s, 0, NNODES);
	nodestore_close(s);
	/* Cut the pack inside the last record, as a crash mid-write would. */
	full = file_size("pack-00000000");
	ck_assert_int_eq(truncate(path, full - (off_t)lens[NNODES - 1] / 2),
	    0);
	s = open_store();
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.nodes_total, NNODES - 1);
	ck_assert_uint_eq(c.cut_bytes, NODESTORE_REC_HDR +
	    lens[NNODES - 1] - lens[NNODES - 1] / 2);
	ck_assert(!nodestore_has(s, ids[NNODES - 1]));
	check_held(s, 0, NNODES - 1);
	ck_assert_int_eq(file_size("pack-00000000"),
	    full - NODESTORE_REC_HDR - (off_t)lens[NNODES - 1]);
	/* The store goes on: the lost node can be put again. */
	put_range(s, NNODES - 1, NNODES);
	nodestore_close(s);
	s = open_store();
	check_held(s, 0, NNODES);
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.cut_bytes, 0);
	nodestore_close(s);

	/* A tail torn inside a record header too. */
	full = file_size("pack-00000000");
	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "\0\0\x01", 3), 3);
	close(fd);
	s = open_store();
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.cut_bytes, 3);
	ck_assert_uint_eq(c.nodes_total, NNODES);
	nodestore_close(s);
}
END_TEST

START_TEST(index_rebuilt_from_pack)
{
	struct nodestore *s = open_store();
	struct nodestore_counts c;
	off_t isz;

	put_range(s, 0, NNODES);
	nodestore_close(s);
	/* Lose the index's tail: those records are found in the pack. */
	isz = file_size("index");
	ck_assert_int_eq(isz, NODESTORE_IDX_HDR + NNODES * NODESTORE_IDX_REC);
	ck_assert_int_eq(truncate(path, isz - 5 * NODESTORE_IDX_REC - 7), 0);
	s = open_store();
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.reindexed, 6);
	ck_assert_uint_eq(c.nodes_total, NNODES);
	check_held(s, 0, NNODES);
	nodestore_close(s);
	ck_assert_int_eq(file_size("index"), isz);

	/* A damaged record in the middle: rebuilt from there. */
	{
		int fd = open(path, O_RDWR);
		uint8_t x;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pread(fd, &x, 1, NODESTORE_IDX_HDR +
		    3 * NODESTORE_IDX_REC + 40), 1);
		x ^= 1;
		ck_assert_int_eq(pwrite(fd, &x, 1, NODESTORE_IDX_HDR +
		    3 * NODESTORE_IDX_REC + 40), 1);
		close(fd);
	}
	s = open_store();
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.reindexed, NNODES - 3);
	check_held(s, 0, NNODES);
	nodestore_close(s);

	/* No index at all. */
	snprintf(path, sizeof(path), "%s/index", dir);
	ck_assert_int_eq(unlink(path), 0);
	s = open_store();
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.reindexed, NNODES);
	check_held(s, 0, NNODES);
	nodestore_close(s);
}
END_TEST

static void
on_bad(void *arg, const uint8_t *id, int kind, const char *why)
{
	(void)why;
	(void)kind;
	memcpy(arg, id, PNODE_ID_LEN);
}

START_TEST(corrupt_byte_caught_on_read)
{
	struct nodestore *s = open_store();
	struct dcbor_buf b;
	uint8_t bad[PNODE_ID_LEN];
	off_t at = NODESTORE_PACK_HDR;
	int fd;
	uint8_t x;

	put_range(s, 0, NNODES);
	/* Flip a byte in the body of node 5, behind the store's back. */
	for (size_t i = 0; i < 5; i++)
		at += NODESTORE_REC_HDR + (off_t)lens[i];
	at += NODESTORE_REC_HDR + 10;
	snprintf(path, sizeof(path), "%s/pack-00000000", dir);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &x, 1, at), 1);
	x ^= 0x40;
	ck_assert_int_eq(pwrite(fd, &x, 1, at), 1);
	close(fd);
	dcbor_buf_init(&b);
	errno = 0;
	ck_assert_int_eq(nodestore_get(s, ids[5], &b, NULL), -1);
	ck_assert_int_eq(errno, EIO);
	ck_assert_int_eq(nodestore_get(s, ids[4], &b, NULL), 0);
	ck_assert_int_eq(nodestore_get(s, ids[6], &b, NULL), 0);
	ck_assert_uint_eq(nodestore_verify(s, on_bad, bad), 1);
	ck_assert_mem_eq(bad, ids[5], PNODE_ID_LEN);
	nodestore_close(s);
	/* Still caught after a reopen that believed the index. */
	s = open_store();
	ck_assert_int_eq(nodestore_get(s, ids[5], &b, NULL), -1);
	dcbor_buf_free(&b);
	nodestore_close(s);
}
END_TEST

START_TEST(kinds_are_counted)
{
	struct nodestore *s = open_store();
	struct nodestore_counts c;
	struct pnode_child kid = { ids[0], lens[0] };
	struct dcbor_buf b;
	uint8_t id[PNODE_ID_LEN];
	int kind;

	put_range(s, 0, 2);
	dcbor_buf_init(&b);
	pnode_b_encode(&b, 1, &kid, 1);
	ck_assert_int_eq(nodestore_put(s, PNODE_B, b.data, b.len, id), 1);
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.nodes[PNODE_C], 2);
	ck_assert_uint_eq(c.nodes[PNODE_B], 1);
	ck_assert_uint_eq(c.bytes[PNODE_B], b.len);
	ck_assert_int_eq(nodestore_get(s, id, &b, &kind), 0);
	ck_assert_int_eq(kind, PNODE_B);
	/* Refused: no kind, an empty node, one above the limit. */
	ck_assert_int_eq(nodestore_put(s, PNODE_NONE, b.data, b.len, id), -1);
	ck_assert_int_eq(nodestore_put(s, PNODE_C, b.data, 0, id), -1);
	ck_assert_int_eq(nodestore_put_id(s, PNODE_C, id, b.data,
	    PNODE_MAX_LEN + 1), -1);
	dcbor_buf_free(&b);
	nodestore_close(s);
}
END_TEST

START_TEST(not_a_pack_is_refused)
{
	char err[256] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/pack-00000000", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "NOTAPACKFILE", 12), 12);
	close(fd);
	ck_assert_ptr_null(nodestore_open(dir, err, sizeof(err)));
	ck_assert_msg(strstr(err, "not a pack file") != NULL, "%s", err);
}
END_TEST

START_TEST(one_process_a_store)
{
	struct nodestore *s = open_store();
	char err[256] = "";

	ck_assert_ptr_null(nodestore_open(dir, err, sizeof(err)));
	ck_assert_msg(strstr(err, "in use") != NULL, "%s", err);
	nodestore_close(s);
	s = open_store();
	nodestore_close(s);
}
END_TEST

START_TEST(null_store_keeps_nothing)
{
	struct nodestore *s = nodestore_null();
	struct nodestore_counts c;
	struct dcbor_buf b;
	uint8_t id[PNODE_ID_LEN];

	put_range(s, 0, NNODES);
	ck_assert_int_eq(nodestore_put(s, PNODE_C, bodies[0], lens[0], id), 1);
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.puts, NNODES + 1);
	ck_assert_uint_eq(c.nodes[PNODE_C], NNODES + 1);
	dcbor_buf_init(&b);
	ck_assert_int_eq(nodestore_get(s, ids[0], &b, NULL), 1);
	ck_assert(!nodestore_has(s, ids[0]));
	dcbor_buf_free(&b);
	nodestore_close(s);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("nodestore");
	TCase *tc = tcase_create("store");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, put_get_reopen);
	tcase_add_test(tc, torn_tail_is_cut);
	tcase_add_test(tc, index_rebuilt_from_pack);
	tcase_add_test(tc, corrupt_byte_caught_on_read);
	tcase_add_test(tc, kinds_are_counted);
	tcase_add_test(tc, not_a_pack_is_refused);
	tcase_add_test(tc, one_process_a_store);
	tcase_add_test(tc, null_store_keeps_nothing);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}

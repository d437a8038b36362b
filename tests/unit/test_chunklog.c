/*
 * test_chunklog.c: the append-only chunked log (common/chunklog.c) behind
 * take.c's log of won takes and load.c's id log: records keep their index
 * and their address as the log grows (a doubling array moves them); the
 * oldest chunk goes only when full and not the newest, indexes before it
 * then answer NULL while later ones keep theirs; the log holds its
 * records' bytes plus at most one chunk (no doubling slack).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "chunklog.h"

struct rec {
	uint64_t	i;
	uint64_t	sq;
	uint8_t		pad[8];
};

static void
put(struct chunklog *l, uint64_t i)
{
	struct rec *r = chunklog_append(l);

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->i, 0);		/* zeroed */
	r->i = i;
	r->sq = i * i;
}

START_TEST(records_keep_index_and_address)
{
	struct chunklog l;
	struct rec *first, *r;
	const size_t per = 7;

	chunklog_init(&l, sizeof(struct rec), per);
	ck_assert_ptr_null(chunklog_at(&l, 0));
	put(&l, 0);
	first = chunklog_at(&l, 0);
	for (uint64_t i = 1; i < 1000; i++)
		put(&l, i);
	ck_assert_uint_eq(chunklog_count(&l), 1000);
	ck_assert_uint_eq(chunklog_first(&l), 0);
	/* Appending 999 more moved no record. */
	ck_assert_ptr_eq(chunklog_at(&l, 0), first);
	for (uint64_t i = 0; i < 1000; i++) {
		r = chunklog_at(&l, i);
		ck_assert_ptr_nonnull(r);
		ck_assert_uint_eq(r->i, i);
		ck_assert_uint_eq(r->sq, i * i);
	}
	ck_assert_ptr_null(chunklog_at(&l, 1000));
	/* 143 chunks of 7 records, and a table of 256 pointers. */
	ck_assert_uint_eq(chunklog_bytes(&l),
	    143 * per * sizeof(struct rec) + 256 * sizeof(void *));
	chunklog_free(&l);
	ck_assert_uint_eq(chunklog_count(&l), 0);
	ck_assert_ptr_null(chunklog_at(&l, 0));
	put(&l, 5);				/* usable again after free */
	ck_assert_uint_eq(((struct rec *)chunklog_at(&l, 0))->i, 5);
	chunklog_free(&l);
}
END_TEST

START_TEST(drop_first_keeps_later_indexes)
{
	struct chunklog l;
	struct rec *keep;

	chunklog_init(&l, sizeof(struct rec), 4);
	ck_assert_int_eq(chunklog_drop_first(&l), 0);	/* empty */
	for (uint64_t i = 0; i < 4; i++)
		put(&l, i);
	/* One full chunk, the newest: stays. */
	ck_assert_int_eq(chunklog_drop_first(&l), 0);
	ck_assert_uint_eq(chunklog_first(&l), 0);
	for (uint64_t i = 4; i < 10; i++)
		put(&l, i);
	keep = chunklog_at(&l, 9);
	ck_assert_int_eq(chunklog_drop_first(&l), 1);
	ck_assert_uint_eq(chunklog_first(&l), 4);
	ck_assert_uint_eq(chunklog_count(&l), 10);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_ptr_null(chunklog_at(&l, i));
	for (uint64_t i = 4; i < 10; i++)
		ck_assert_uint_eq(((struct rec *)chunklog_at(&l, i))->i, i);
	ck_assert_ptr_eq(chunklog_at(&l, 9), keep);
	ck_assert_int_eq(chunklog_drop_first(&l), 1);	/* 4..7 */
	ck_assert_int_eq(chunklog_drop_first(&l), 0);	/* 8, 9: the newest */
	ck_assert_uint_eq(chunklog_first(&l), 8);
	/* Appends go on at index 10, into the partly filled chunk. */
	put(&l, 10);
	put(&l, 11);
	put(&l, 12);
	ck_assert_uint_eq(((struct rec *)chunklog_at(&l, 12))->i, 12);
	ck_assert_ptr_eq(chunklog_at(&l, 9), keep);
	ck_assert_int_eq(chunklog_drop_first(&l), 1);
	ck_assert_uint_eq(chunklog_first(&l), 12);
	ck_assert_uint_eq(((struct rec *)chunklog_at(&l, 12))->i, 12);
	chunklog_free(&l);
}
END_TEST

static Suite *
chunklog_suite(void)
{
	Suite *s = suite_create("chunklog");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, records_keep_index_and_address);
	tcase_add_test(tc, drop_first_keeps_later_indexes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(chunklog_suite());
	int nfail;

	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

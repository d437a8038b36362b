/*
 * test_xmalloc.c: the heap's figures and trim (common/xmalloc.c).  Free
 * chunks left among live blocks stay resident (glibc returns only the top
 * of the heap when a block is freed); xmalloc_trim gives their whole pages
 * back, and the figures say what is in use and what is free.  glibc's
 * allocator only: under AddressSanitizer malloc is not glibc's, and the
 * test says so and checks nothing else.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "xmalloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define GLIBC_MALLOC	0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLIBC_MALLOC	0
#endif
#endif
#ifndef GLIBC_MALLOC
#define GLIBC_MALLOC	1
#endif

#define NBLK		2048
#define BLK		(8u << 10)	/* under the mmap threshold: in the arena */

/* This process's resident bytes (/proc/self/statm). */
static size_t
resident(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, res;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%lu %lu", &size, &res), 2);
	fclose(f);
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

START_TEST(trim_gives_back_free_pages_among_live_blocks)
{
	static void *big[NBLK], *pin[NBLK];
	size_t in0, free0, in1, free1, in2, free2, rss_full, rss_freed;
	size_t rss_trimmed;

	if (!GLIBC_MALLOC) {
		fprintf(stderr, "test_xmalloc: not glibc's malloc (sanitizer "
		    "build): nothing checked\n");
		return;
	}
	xmalloc_heap(&in0, &free0);
	/* 16 MiB of touched blocks, each followed by a small live one. */
	for (size_t i = 0; i < NBLK; i++) {
		big[i] = xmalloc(BLK);
		memset(big[i], 0x5a, BLK);
		pin[i] = xmalloc(16);
	}
	xmalloc_heap(&in1, &free1);
	ck_assert_uint_ge(in1 - in0, (size_t)NBLK * BLK);
	rss_full = resident();
	for (size_t i = 0; i < NBLK; i++)
		free(big[i]);
	xmalloc_heap(&in2, &free2);
	ck_assert_uint_ge(free2, (size_t)NBLK * BLK);
	ck_assert_uint_lt(in2 - in0, (size_t)NBLK * BLK / 8);
	/* The small blocks hold the heap's top: free gave back little. */
	rss_freed = resident();
	ck_assert_uint_gt(rss_freed + (size_t)NBLK * BLK / 8, rss_full);
	xmalloc_trim();
	rss_trimmed = resident();
	/* A freed 8 KiB chunk holds one or two whole pages: most go back,
	 * and the chunks stay free. */
	ck_assert_uint_ge(rss_freed - rss_trimmed, (size_t)NBLK * BLK / 4);
	xmalloc_heap(&in1, &free1);
	ck_assert_uint_ge(free1, (size_t)NBLK * BLK);
	for (size_t i = 0; i < NBLK; i++)
		free(pin[i]);
}
END_TEST

static Suite *
xmalloc_suite(void)
{
	Suite *s = suite_create("xmalloc");
	TCase *tc = tcase_create("heap");

	tcase_add_test(tc, trim_gives_back_free_pages_among_live_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(xmalloc_suite());
	int nf;

	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

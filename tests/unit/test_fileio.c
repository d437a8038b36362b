/*
 * test_fileio.c: common/fileio.c's one write loop, both ways (write at the
 * file's position, pwrite at an offset), through a pipe whose reader takes
 * a little at a time (short writes) and into a file (an offset past the
 * end leaves a hole); and the whole read.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "fileio.h"

#define BIG	(1u << 20)	/* more than a pipe holds: short writes */

START_TEST(write_all_survives_short_writes)
{
	uint8_t *out = malloc(BIG), *in = calloc(1, BIG);
	int fds[2];
	pid_t pid;

	for (size_t i = 0; i < BIG; i++)
		out[i] = (uint8_t)(i * 7);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(fileio_write_all(fds[1], out, BIG) == 0 ? 0 : 1);
	}
	close(fds[1]);
	ck_assert_int_eq(fileio_read_all(fds[0], in, BIG), 0);
	ck_assert_mem_eq(in, out, BIG);
	/* The writer is done: the next read finds the end. */
	ck_assert_int_eq(fileio_read_all(fds[0], in, 1), -1);
	close(fds[0]);
	free(out);
	free(in);
}
END_TEST

START_TEST(pwrite_all_at_an_offset)
{
	char path[] = "/tmp/test_fileio.XXXXXX";
	uint8_t got[12];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(fileio_pwrite_all(fd, "world", 5, 7), 0);
	ck_assert_int_eq(fileio_pwrite_all(fd, "hello", 5, 0), 0);
	/* pwrite leaves the position: a write lands at 0. */
	ck_assert_int_eq(fileio_write_all(fd, "J", 1), 0);
	ck_assert_int_eq(pread(fd, got, sizeof(got), 0), 12);
	ck_assert_mem_eq(got, "Jello\0\0world", 12);
	close(fd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("fileio");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, write_all_survives_short_writes);
	tcase_add_test(tc, pwrite_all_at_an_offset);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

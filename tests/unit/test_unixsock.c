/*
 * test_unixsock.c: common/unixsock.c, the one Unix-socket connect of the
 * control clients (orchestrator/ctl.c, fleet.c, peerctl).  A connection
 * reaches the listener and carries bytes both ways; its descriptor is
 * close-on-exec, and non-blocking when asked; a path sun_path cannot hold
 * is refused (ENAMETOOLONG), never cut short; a missing socket and one
 * nobody listens on fail with connect's errno and leave no descriptor open.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unixsock.h"

static char dir[64];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/unixsock.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/s", dir);
	unlink(path);
	rmdir(dir);
}

/* A listener at dir/s: its descriptor. */
static int
listener(char *path, size_t len)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(path, len, "%s/s", dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	return fd;
}

/* The lowest free descriptor: equal before and after means none leaked. */
static int
next_fd(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

START_TEST(test_connects_and_carries_bytes)
{
	char path[128], buf[8];
	int l = listener(path, sizeof(path)), c, a;

	c = unixsock_connect(path, 0);
	ck_assert_int_ge(c, 0);
	ck_assert(fcntl(c, F_GETFD) & FD_CLOEXEC);
	ck_assert(!(fcntl(c, F_GETFL) & O_NONBLOCK));
	a = accept(l, NULL, NULL);
	ck_assert_int_ge(a, 0);
	ck_assert_int_eq(write(c, "ping\n", 5), 5);
	ck_assert_int_eq(read(a, buf, sizeof(buf)), 5);
	ck_assert_int_eq(memcmp(buf, "ping\n", 5), 0);
	ck_assert_int_eq(write(a, "ok\n", 3), 3);
	ck_assert_int_eq(read(c, buf, sizeof(buf)), 3);
	close(a);
	close(c);

	c = unixsock_connect(path, SOCK_NONBLOCK);
	ck_assert_int_ge(c, 0);
	ck_assert(fcntl(c, F_GETFL) & O_NONBLOCK);
	ck_assert(fcntl(c, F_GETFD) & FD_CLOEXEC);
	close(c);
	close(l);
}
END_TEST

START_TEST(test_long_path_refused_not_cut)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
	int before = next_fd();

	/* sun_path's size exactly: no room for the NUL. */
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[sizeof(((struct sockaddr_un *)0)->sun_path)] = '\0';
	errno = 0;
	ck_assert_int_eq(unixsock_connect(path, 0), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_int_eq(next_fd(), before);
}
END_TEST

START_TEST(test_no_listener_fails_with_connects_errno)
{
	char path[128];
	int before = next_fd(), l;

	snprintf(path, sizeof(path), "%s/none", dir);
	errno = 0;
	ck_assert_int_eq(unixsock_connect(path, 0), -1);
	ck_assert_int_eq(errno, ENOENT);
	l = listener(path, sizeof(path));
	close(l);		/* the file stays, nobody listens */
	errno = 0;
	ck_assert_int_eq(unixsock_connect(path, SOCK_NONBLOCK), -1);
	ck_assert_int_eq(errno, ECONNREFUSED);
	ck_assert_int_eq(next_fd(), before);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("unixsock");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_connects_and_carries_bytes);
	tcase_add_test(tc, test_long_path_refused_not_cut);
	tcase_add_test(tc, test_no_listener_fails_with_connects_errno);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

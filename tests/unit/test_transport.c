/*
 * test_transport.c: transport_read, the one read of a TCP link's or a
 * control client's socket (peerd/transport.c): one call takes what the
 * socket holds up to TRANSPORT_READ_MAX, appends it after what the buffer
 * held, says 0 at the end of the stream and EAGAIN when there is nothing.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/buffer.h>

#include "transport.h"

#include "peerd_stub.h"

static int	 sv[2];
static struct evbuffer *in;

static void
setup(void)
{
	int sz = 1 << 20;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	in = evbuffer_new();
}

static void
teardown(void)
{
	evbuffer_free(in);
	close(sv[0]);
	close(sv[1]);
}

/* Write len bytes of a pattern starting at off to the writing end. */
static void
put(size_t off, size_t len)
{
	uint8_t *p = malloc(len);

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((off + i) * 7 + 3);
	ck_assert_int_eq(write(sv[0], p, len), (ssize_t)len);
	free(p);
}

static void
check_pattern(size_t len)
{
	const uint8_t *p = evbuffer_pullup(in, -1);

	ck_assert_uint_eq(evbuffer_get_length(in), len);
	for (size_t i = 0; i < len; i++)
		ck_assert_uint_eq(p[i], (uint8_t)(i * 7 + 3));
}

START_TEST(small_writes_read_in_one_call)
{
	/* Many small writes that have all arrived: one read takes them. */
	for (size_t i = 0; i < 300; i++)
		put(i * 5, 5);
	ck_assert_int_eq(transport_read(sv[1], in), 1500);
	check_pattern(1500);
	ck_assert_int_eq(transport_read(sv[1], in), -1);
	ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

START_TEST(burst_read_in_full_reads_then_a_short_one)
{
	size_t len = 3 * TRANSPORT_READ_MAX + 1234;
	int calls = 0;
	ssize_t n;

	put(0, len);
	/* Full reads while more waits, then the short one that drains it. */
	while ((n = transport_read(sv[1], in)) > 0) {
		calls++;
		if ((size_t)n < TRANSPORT_READ_MAX)
			break;
		ck_assert_uint_eq((size_t)n, TRANSPORT_READ_MAX);
	}
	ck_assert_int_eq(calls, 4);
	check_pattern(len);
}
END_TEST

START_TEST(appends_after_what_is_held)
{
	put(0, 10);
	ck_assert_int_eq(transport_read(sv[1], in), 10);
	put(10, 20);
	ck_assert_int_eq(transport_read(sv[1], in), 20);
	check_pattern(30);
}
END_TEST

START_TEST(end_of_stream_after_the_bytes)
{
	put(0, 100);
	shutdown(sv[0], SHUT_WR);
	ck_assert_int_eq(transport_read(sv[1], in), 100);
	ck_assert_int_eq(transport_read(sv[1], in), 0);
	check_pattern(100);
}
END_TEST

static Suite *
transport_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("read");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, small_writes_read_in_one_call);
	tcase_add_test(tc, burst_read_in_full_reads_then_a_short_one);
	tcase_add_test(tc, appends_after_what_is_held);
	tcase_add_test(tc, end_of_stream_after_the_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(transport_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

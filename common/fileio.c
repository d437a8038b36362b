/*
 * fileio.c: whole writes and reads (see fileio.h).
 */
#include <errno.h>
#include <unistd.h>

#include "fileio.h"

/* The one write loop: write(2) when off is -1, else pwrite(2) at off. */
static int
write_loop(int fd, const void *buf, size_t n, int64_t off)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = off < 0 ? write(fd, p, n) :
		    pwrite(fd, p, n, (off_t)off);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return 0;
}

int
fileio_write_all(int fd, const void *buf, size_t n)
{
	return write_loop(fd, buf, n, -1);
}

int
fileio_pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	return write_loop(fd, buf, n, (int64_t)off);
}

int
fileio_read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

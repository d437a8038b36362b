/*
 * fileio.c: whole writes (see fileio.h).
 */
#include <errno.h>
#include <unistd.h>

#include "fileio.h"

int
fileio_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

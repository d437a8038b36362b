/*
 * unixsock.c: a stream connection to a Unix socket (unixsock.h).  The
 * address is built whole or not at all: a path sun_path cannot hold with
 * its terminating NUL is refused, never cut short onto another socket.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "unixsock.h"

int
unixsock_connect(const char *path, int flags)
{
	struct sockaddr_un sun;
	size_t len = strlen(path);
	int fd, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (len >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, len);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/*
 * loopback.c: the two-process TCP pair of the same-run baselines (see
 * loopback.h).
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "loopback.h"

int
loopback_connect(uint16_t port)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int
loopback_pair(const char *prog, int (*child)(uint16_t, void *), void *arg,
    pid_t *pid)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	int lfd, fd, one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 1) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen) == -1) {
		fprintf(stderr, "%s: listen: ", prog);
		perror(NULL);
		return -1;
	}
	if ((*pid = fork()) == -1) {
		fprintf(stderr, "%s: fork: ", prog);
		perror(NULL);
		close(lfd);
		return -1;
	}
	if (*pid == 0) {
		close(lfd);
		_exit(child(ntohs(sin.sin_port), arg));
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd == -1) {
		fprintf(stderr, "%s: accept: ", prog);
		perror(NULL);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

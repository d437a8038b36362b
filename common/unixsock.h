/*
 * unixsock.h: a stream connection to a Unix socket, the one way every
 * control client here opens one (the orchestrator's asynchronous client
 * orchestrator/ctl.c, its blocking one in fleet.c, and peerctl).
 */
#ifndef UNIXSOCK_H
#define UNIXSOCK_H

/*
 * Connect to the Unix stream socket at path, the descriptor close-on-exec
 * and with flags (0, or SOCK_NONBLOCK: a Unix connect never waits, it
 * succeeds or fails at once): the descriptor, or -1 with errno
 * (ENAMETOOLONG when path does not fit sun_path, else socket's or
 * connect's).
 */
int	unixsock_connect(const char *path, int flags);

#endif

/*
 * loopback.h: the two-process TCP pair of the same-run baselines
 * (bench/tcpstream, bench/wakeup): a listener on 127.0.0.1 port 0, a
 * forked child that connects to it, the accepted socket in the parent.
 */
#ifndef LOOPBACK_H
#define LOOPBACK_H

#include <sys/types.h>
#include <stdint.h>

/*
 * Listen on 127.0.0.1 port 0, fork a child that runs child(port, arg) and
 * exits with its value, accept its connection.  The accepted socket (with
 * TCP_NODELAY) and *pid, or -1 with the failing step said on stderr under
 * prog's name.
 */
int	loopback_pair(const char *prog, int (*child)(uint16_t, void *),
	    void *arg, pid_t *pid);
/* A TCP_NODELAY connection to 127.0.0.1:port, or -1 (errno set). */
int	loopback_connect(uint16_t port);

#endif

/*
 * tcpstream.c: the same-run baseline for the content swarm (BENCHMARKS.md):
 * one plain TCP stream between two processes on 127.0.0.1, no framing, no
 * signatures, no hashing.  The parent listens on port 0 and reads; a
 * forked child connects and writes the bytes.  The clock runs from the
 * accepted connection to the last byte read.  One JSON line on stdout:
 *
 *   {"bytes":N,"seconds":S,"mib_s":X}
 *
 * usage: tcpstream [-n BYTES[K|M|G]] [-b BUFFER[K|M]]   (256M, 256K)
 *        tcpstream --help | --version
 *
 * Exit 0, 1 on a failure (said on stderr), 2 on a usage error.  It lives
 * apart from build/bench because it is a program of its own, called by
 * the orchestrator beside a swarm run so the ratio holds when the machine
 * drifts.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../loopback/loopback.h"
#include "version.h"

static const struct option longopts[] = {
	{ "bytes", required_argument, NULL, 'n' },
	{ "buffer", required_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void
help(FILE *fp)
{
	fprintf(fp, "usage: tcpstream [-n BYTES[K|M|G]] [-b BUFFER[K|M]]\n"
	    "\n"
	    "  -n, --bytes N    bytes to move (default 256M)\n"
	    "  -b, --buffer N   write and read size (default 256K, at most 64M)\n"
	    "  --help, --version\n"
	    "\n"
	    "Moves the bytes over one TCP stream between two processes on\n"
	    "127.0.0.1 and prints {\"bytes\":N,\"seconds\":S,\"mib_s\":X}.\n"
	    "Exit 0, 1 on a failure, 2 on a usage error.\n");
}

static void
usage(void)
{
	help(stderr);
	exit(2);
}

static uint64_t
parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		usage();
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (*end != '\0' || v == 0)
		usage();
	return v;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the child writes: n bytes, bufsz at a time. */
struct job {
	uint64_t	 n;
	size_t		 bufsz;
};

static int
writer(uint16_t port, void *arg)
{
	const struct job *job = arg;
	uint64_t n = job->n;
	char *buf = malloc(job->bufsz);
	int fd;

	if (buf == NULL)
		return 1;
	memset(buf, 0xa5, job->bufsz);
	if ((fd = loopback_connect(port)) == -1) {
		perror("tcpstream: connect");
		return 1;
	}
	while (n > 0) {
		size_t k = n < job->bufsz ? (size_t)n : job->bufsz;
		ssize_t w = write(fd, buf, k);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror("tcpstream: write");
			return 1;
		}
		n -= (uint64_t)w;
	}
	close(fd);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t n = 256ull << 20, got = 0;
	size_t bufsz = 256u << 10;
	struct job job;
	double t0, t1;
	char *buf;
	int ch, fd, status;
	pid_t pid;

	while ((ch = getopt_long(argc, argv, "n:b:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n': n = parse_size(optarg); break;
		case 'b': bufsz = (size_t)parse_size(optarg); break;
		case 'h': help(stdout); return 0;
		case 'V': VERSION_PRINT("tcpstream"); return 0;
		default: usage();
		}
	}
	if (optind != argc || bufsz > (64u << 20))
		usage();
	if ((buf = malloc(bufsz)) == NULL)
		return 1;
	job.n = n;
	job.bufsz = bufsz;
	if ((fd = loopback_pair("tcpstream", writer, &job, &pid)) == -1)
		return 1;
	t0 = now_s();
	while (got < n) {
		ssize_t r = read(fd, buf, bufsz);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "tcpstream: read: %s after %llu bytes\n",
			    r == 0 ? "end of stream" : strerror(errno),
			    (unsigned long long)got);
			return 1;
		}
		got += (uint64_t)r;
	}
	t1 = now_s();
	close(fd);
	free(buf);
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "tcpstream: the writer failed\n");
		return 1;
	}
	printf("{\"bytes\":%llu,\"seconds\":%.6f,\"mib_s\":%.1f}\n",
	    (unsigned long long)n, t1 - t0,
	    (double)n / (1 << 20) / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
	return 0;
}

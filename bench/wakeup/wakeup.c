/*
 * wakeup.c: what one wake-up costs on this host (BENCHMARKS.md): the CPU a
 * process spends to be woken by one small loopback TCP message, answer it
 * and sleep again, when the messages come apart (it sleeps between them:
 * a peer of a quiet fleet) beside the same exchange back to back (its
 * caches stay warm: the baseline, taken in the same run).
 *
 * The parent listens on port 0 and drives; a forked child is the process
 * measured: one epoll loop that echoes each byte it reads.  The driver
 * sends a byte, waits for the echo and, in the idle phase, sleeps --gap-ms
 * before the next one.  After each phase it sends 'p' and the child
 * answers with its own getrusage figures for the phase (CPU seconds and
 * voluntary context switches), so nothing of the driver is counted.  One
 * JSON line on stdout:
 *
 *   {"idle_rounds":N,"gap_ms":G,"idle_cpu_us":X,"idle_sleeps":S,
 *    "hot_rounds":M,"hot_cpu_us":Y,"hot_sleeps":T,"idle_over_hot":X/Y}
 *
 * (cpu_us per message; sleeps per message: 1.0 means every message found
 * the child asleep in epoll_wait).
 *
 * usage: wakeup [-n ROUNDS] [-g GAP_MS] [-m HOT_ROUNDS]   (300, 10, 20000)
 *        wakeup --help | --version
 *
 * Exit 0, 1 on a failure (said on stderr), 2 on a usage error.
 */
#include <sys/epoll.h>
#include <sys/resource.h>
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
	{ "rounds", required_argument, NULL, 'n' },
	{ "gap-ms", required_argument, NULL, 'g' },
	{ "hot-rounds", required_argument, NULL, 'm' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void
help(FILE *fp)
{
	fprintf(fp, "usage: wakeup [-n ROUNDS] [-g GAP_MS] [-m HOT_ROUNDS]\n"
	    "\n"
	    "  -n, --rounds N      messages that find the process asleep "
	    "(default 300)\n"
	    "  -g, --gap-ms N      the driver's pause between them, 1 to 1000 "
	    "(default 10)\n"
	    "  -m, --hot-rounds N  messages back to back, the baseline "
	    "(default 20000)\n"
	    "  --help, --version\n"
	    "\n"
	    "Prints the CPU a process spends per small loopback TCP message it\n"
	    "is woken by, answers and sleeps after, beside the same exchange\n"
	    "back to back, as one JSON line.  Exit 0, 1 on a failure, 2 on a\n"
	    "usage error.\n");
}

static void
usage(void)
{
	help(stderr);
	exit(2);
}

static long
parse_num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		usage();
	return v;
}

/* This process's CPU seconds and voluntary context switches so far. */
static void
self_usage(double *cpu_s, long *sleeps)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	*sleeps = ru.ru_nvcsw;
}

/*
 * The process measured: echo every byte but 'p', which ends a phase and is
 * answered with "CPU_S SLEEPS\n" for it.  Returns at the end of the stream.
 */
static int
echoer(uint16_t port, void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	double c0, c1;
	long s0, s1;
	char buf[256], line[64];
	int fd, ep;

	(void)arg;
	if ((fd = loopback_connect(port)) == -1 ||
	    (ep = epoll_create1(0)) == -1 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1) {
		perror("wakeup: child");
		return 1;
	}
	self_usage(&c0, &s0);
	for (;;) {
		ssize_t r;

		if (epoll_wait(ep, &ev, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			perror("wakeup: epoll_wait");
			return 1;
		}
		if ((r = read(fd, buf, sizeof(buf))) == 0)
			return 0;
		if (r == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			perror("wakeup: read");
			return 1;
		}
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != 'p') {
				if (write(fd, "x", 1) != 1)
					return 1;
				continue;
			}
			self_usage(&c1, &s1);
			int n = snprintf(line, sizeof(line), "%.9f %ld\n",
			    c1 - c0, s1 - s0);
			if (write(fd, line, (size_t)n) != n)
				return 1;
			self_usage(&c0, &s0);
		}
	}
}

/* Read exactly len bytes. 0, or -1. */
static int
read_full(int fd, char *buf, size_t len)
{
	while (len > 0) {
		ssize_t r = read(fd, buf, len);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		len -= (size_t)r;
	}
	return 0;
}

/*
 * n messages, each answered before the next, with gap_ms between them;
 * then the child's figures for the phase.  0, or -1.
 */
static int
phase(int fd, long n, long gap_ms, double *cpu_s, long *sleeps)
{
	const struct timespec gap = { gap_ms / 1000,
	    (gap_ms % 1000) * 1000000L };
	struct timespec left;
	char c, line[64];
	size_t k = 0;

	for (long i = 0; i < n; i++) {
		if (write(fd, "x", 1) != 1 || read_full(fd, &c, 1) == -1)
			return -1;
		for (left = gap; gap_ms > 0 && nanosleep(&left, &left) == -1 &&
		    errno == EINTR; )
			;
	}
	if (write(fd, "p", 1) != 1)
		return -1;
	while (k + 1 < sizeof(line)) {
		if (read_full(fd, &line[k], 1) == -1)
			return -1;
		if (line[k++] == '\n')
			break;
	}
	line[k] = '\0';
	return sscanf(line, "%lf %ld", cpu_s, sleeps) == 2 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	long rounds = 300, gap_ms = 10, hot = 20000, s_idle, s_hot, s_warm;
	double c_idle, c_hot, c_warm;
	int ch, fd, status;
	pid_t pid;

	while ((ch = getopt_long(argc, argv, "n:g:m:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n': rounds = parse_num(optarg, 1, 1000000); break;
		case 'g': gap_ms = parse_num(optarg, 1, 1000); break;
		case 'm': hot = parse_num(optarg, 1, 100000000); break;
		case 'h': help(stdout); return 0;
		case 'V': VERSION_PRINT("wakeup"); return 0;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if ((fd = loopback_pair("wakeup", echoer, NULL, &pid)) == -1)
		return 1;
	/* A warm-up phase first (start-up costs), then the two measured. */
	if (phase(fd, 100, 0, &c_warm, &s_warm) == -1 ||
	    phase(fd, rounds, gap_ms, &c_idle, &s_idle) == -1 ||
	    phase(fd, hot, 0, &c_hot, &s_hot) == -1) {
		fprintf(stderr, "wakeup: the exchange with the child failed\n");
		return 1;
	}
	close(fd);
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "wakeup: the child failed\n");
		return 1;
	}
	printf("{\"idle_rounds\":%ld,\"gap_ms\":%ld,\"idle_cpu_us\":%.2f,"
	    "\"idle_sleeps\":%.3f,\"hot_rounds\":%ld,\"hot_cpu_us\":%.2f,"
	    "\"hot_sleeps\":%.3f,\"idle_over_hot\":%.2f}\n", rounds, gap_ms,
	    c_idle / (double)rounds * 1e6, (double)s_idle / (double)rounds,
	    hot, c_hot / (double)hot * 1e6, (double)s_hot / (double)hot,
	    c_hot > 0 ? (c_idle / (double)rounds) / (c_hot / (double)hot) :
	    0.0);
	return 0;
}

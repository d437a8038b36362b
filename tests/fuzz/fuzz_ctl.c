/*
 * fuzz_ctl.c: libFuzzer target for the orchestrator's asynchronous control
 * client (orchestrator/ctl.c), which reads whatever a peer's control
 * socket sends back.
 *
 * Each input: three calls in flight to a fake peer behind a Unix socket in
 * /tmp; the input is what "the peer" answers, then it closes.  Every call
 * must complete exactly once (a reply, an error or the close), whatever the
 * bytes, and nothing may crash or leak.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "ctl.h"
#include "fleet.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)
#define CALLS	3

static struct event_base *base;
static int listener = -1;
static char path[108];

static void
done_cb(struct peer *p, enum ctl_status st, json_t *res, const char *err,
    void *arg)
{
	int *n = arg;

	(void)p;
	REQUIRE(err != NULL);
	REQUIRE(st != CTL_OK || res != NULL);
	(*n)++;
}

static void
setup(void)
{
	struct sockaddr_un sun;

	base = event_base_new();
	snprintf(path, sizeof(path), "/tmp/fuzz_ctl.%d.sock", (int)getpid());
	unlink(path);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	listener = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(listener != -1);
	REQUIRE(bind(listener, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	REQUIRE(listen(listener, 8) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer p;
	int done = 0, fd;
	size_t off = 0;

	if (base == NULL)
		setup();
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "p0");
	snprintf(p.control, sizeof(p.control), "%s", path);
	p.state = PEER_RUNNING;
	p.ctl_fd = -1;
	for (int i = 0; i < CALLS; i++)
		ctl_call(base, &p, "hello", NULL, 60000, done_cb, &done);
	REQUIRE((fd = accept(listener, NULL, NULL)) != -1);
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);

		if (w <= 0)
			break;
		off += (size_t)w;
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	close(fd);
	/* The close completes whatever the bytes left in flight. */
	for (int spins = 0; done < CALLS && spins < 100000; spins++)
		event_base_loop(base, EVLOOP_ONCE);
	REQUIRE(done == CALLS);
	ctl_free(&p);
	return 0;
}

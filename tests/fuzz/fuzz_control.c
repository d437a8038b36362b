/*
 * fuzz_control.c: libFuzzer target for the control-line path (docs/control.md):
 * line splitting and the line cap (control.c), JSON parsing, the command
 * table's lookup and argument checks (cmd.c) and every handler behind it.
 *
 * The input is what a client would write on the control socket.  It goes
 * through one end of a socketpair whose other end is attached as a
 * control client (control_attach), so the real socket read (one recv a
 * readiness) and line splitting take it, and the replies leave by the real
 * next-pass write; they come back on the pair, are checked and thrown
 * away.  Behind it is
 * a real daemon state: a fixed identity, the clock, the replica, the TCP
 * listener on 127.0.0.1:0 and the control socket in a temporary directory.
 *
 * What the fuzzer cannot survive is neutered here, not in the daemon:
 * "shutdown" only marks the daemon stopping (peerd_shutdown below);
 * "connect" parses and records its seed, but max_links is 0 so nothing is
 * dialed.  settle_ms is 0, so a take settles within the few non-blocking
 * loop turns each input gets; what is still in flight is cancelled.  Every
 * input starts from the same state (replica, faults, links and seeds are
 * rebuilt), so a crash replays from its file alone.
 *
 * Beyond not crashing, each input checks the contract of control.h: every
 * line the client gets is one JSON object, a reply or an event, and every
 * request line gets exactly one reply (takes still in flight are cancelled,
 * and so answered, before the client hangs up).
 *
 * Seeds: tests/fuzz/seeds/fuzz_control/, request lines for every command.
 * FUZZ_ECHO=1 shows the replies on stderr (to read what a crash file did).
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "cmd.h"
#include "control.h"
#include "fault.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "peerd.h"
#include "replica.h"
#include "stats.h"
#include "take.h"
#include "trace.h"

#include "fuzz_daemon.h"
#include "../unit/wire_stub.h"

#define FUZZ_MAX_LINE	2048	/* small, so the too_large path is reached */
#define FUZZ_LOOP_TURNS	4

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct peerd		*pd;
static struct peerd	 fz_peerd;
static char		 fz_dir[] = "/tmp/fuzz_control.XXXXXX";
static char		 fz_sock[sizeof(fz_dir) + 16];
static int		 fz_echo;
static struct evbuffer	*fz_out;	/* what the client received */

/* As main.c's, but the process must go on: only mark the daemon stopping. */
static void
fz_conf(struct peerd_conf *c)
{
	/* The daemon's defaults, then what this harness needs. */
	conf_defaults(c);
	c->name = "fuzz";
	c->dir = fz_dir;
	c->control = fz_sock;
	c->log_level = "error";
	c->settle_ms = 0;
	c->take_retry_ms = 1;
	c->max_links = 0;		/* never dial */
	c->max_line = FUZZ_MAX_LINE;
	c->max_entries = 4096;
	c->trace_events = 1024;
}

static void
fz_links_start(void)
{
	if (link_init(pd->conf.listen, pd->listen_addr,
	    sizeof(pd->listen_addr)) == -1)
		fatalx("fuzz_control: link_init failed");
}

static void
fz_cleanup(void)
{
	control_free(pd->control);
	unlink(fz_sock);
	rmdir(fz_dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	(void)argc;
	(void)argv;
	pd = &fz_peerd;
	fz_echo = getenv("FUZZ_ECHO") != NULL;
	if (mkdtemp(fz_dir) == NULL)
		fatal("fuzz_control: mkdtemp");
	snprintf(fz_sock, sizeof(fz_sock), "%s/control.sock", fz_dir);
	fz_conf(&pd->conf);
	log_init("fuzz_control", LOG_LVL_ERROR, NULL);
	memset(seed, 0x42, sizeof(seed));
	if (identity_from_seed(&pd->ident, seed) == -1)
		fatalx("fuzz_control: identity");
	pd->start_us = clock_mono_us();
	if ((pd->base = event_base_new()) == NULL)
		fatalx("fuzz_control: event_base_new");
	trace_init(pd->conf.trace_events);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	stub_replication();
	fz_links_start();
	pd->control = control_new(pd->base, pd->conf.control,
	    pd->conf.max_clients, pd->conf.max_line, cmd_dispatch);
	if (pd->control == NULL)
		fatalx("fuzz_control: control_new");
	fz_out = evbuffer_new();
	atexit(fz_cleanup);
	return 0;
}

/* The client's replies so far: kept for fz_check (FUZZ_ECHO=1 shows them). */
static void
fz_sink(int fd)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		evbuffer_add(fz_out, buf, (size_t)n);
}

static void
fz_turns(int n)
{
	for (int i = 0; i < n; i++)
		event_base_loop(pd->base, EVLOOP_NONBLOCK);
}

/*
 * The request lines in the input, split as a client would mean them (not
 * by asking control.c); *too_large when a line passes the cap, which ends
 * the connection.
 */
static uint64_t
fz_requests(const uint8_t *p, size_t n, bool *too_large)
{
	uint64_t req = 0;

	*too_large = false;
	while (n > 0) {
		const uint8_t *eol = memchr(p, '\n', n);
		size_t len;

		if (eol == NULL) {
			*too_large = n > FUZZ_MAX_LINE;
			break;
		}
		len = (size_t)(eol - p);
		if (len > FUZZ_MAX_LINE) {
			*too_large = true;
			break;
		}
		if (len > 0 && !(len == 1 && p[0] == '\r'))
			req++;
		p += len + 1;
		n -= len + 1;
	}
	return req;
}

/*
 * Every line out is one JSON object, a reply (with "id") or an event; and
 * every request line got exactly one reply (control.h), the line cap's
 * own answer aside, after which the connection closes.
 */
static void
fz_check(int client, const uint8_t *data, size_t size)
{
	uint64_t replies = 0, requests;
	bool too_large;
	size_t n, before;
	char *line;

	/* Until a turn brings nothing more (big replies fill the socket). */
	do {
		before = evbuffer_get_length(fz_out);
		fz_turns(1);
		fz_sink(client);
	} while (evbuffer_get_length(fz_out) != before);
	while ((line = evbuffer_readln(fz_out, &n, EVBUFFER_EOL_LF)) != NULL) {
		json_t *j = json_loadb(line, n, 0, NULL);

		if (fz_echo)
			fprintf(stderr, "%s\n", line);

		if (!json_is_object(j))
			abort();
		if (json_object_get(j, "id") != NULL)
			replies++;
		else if (!json_is_string(json_object_get(j, "event")))
			abort();
		json_decref(j);
		free(line);
	}
	if (evbuffer_get_length(fz_out) != 0)
		abort();
	requests = fz_requests(data, size, &too_large);
	if (fz_echo)
		fprintf(stderr, "%llu requests, %llu replies%s\n",
		    (unsigned long long)requests, (unsigned long long)replies,
		    too_large ? ", a line too large" : "");
	if (too_large ? replies > requests + 1 : replies != requests)
		abort();
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bufferevent *bev;
	size_t off = 0;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) == -1)
		abort();
	if ((bev = bufferevent_socket_new(pd->base, sv[0],
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		abort();
	if (control_attach(pd->control, bev) == NULL)
		abort();

	/* Written as the socket takes it, the loop turning meanwhile. */
	while (off < size) {
		ssize_t n = send(sv[1], data + off, size - off, MSG_NOSIGNAL);

		if (n > 0)
			off += (size_t)n;
		else if (errno != EAGAIN && errno != EWOULDBLOCK)
			break;		/* closed for a line over the cap */
		fz_turns(1);
		fz_sink(sv[1]);
	}
	fz_turns(FUZZ_LOOP_TURNS);
	take_cancel();		/* answered while the client is here */
	fz_turns(2);		/* the answers leave on the next pass */
	fz_check(sv[1], data, size);

	/* The client hangs up; its end of stream, then the reaper, free it. */
	close(sv[1]);
	fz_turns(2);
	if (control_clients() != 0)
		abort();

	/* Back to the starting state. */
	stub_replication_free();
	stub_replication();
	fault_clear();
	link_shutdown();
	fz_links_start();
	pd->stopping = false;
	return 0;
}

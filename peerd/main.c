/*
 * main.c: peerd's start-up and shutdown.
 *
 * Parse the command line (every knob has a flag), take the identity from
 * DIR, bind the TCP listener and the control socket, print the one ready
 * line on stdout (DESIGN 3), optionally stop itself for a debugger
 * (--hold), dial the seeds and run the loop.  TERM/INT shut down cleanly;
 * USR1 writes the trace to DIR/trace.ndjson.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "control.h"
#include "fault.h"
#include "link.h"
#include "load.h"
#include "log.h"
#include "stats.h"
#include "peerd.h"
#include "replica.h"
#include "swarm.h"
#include "trace.h"
#include "xmalloc.h"

struct peerd *pd;

static struct peerd	 peerd_storage;
static struct event	*ev_sigterm, *ev_sigint, *ev_sigusr1;

enum {
	OPT_SETTLE = 256, OPT_TAKE_RETRY, OPT_TAKE_LEASE, OPT_GOSSIP, OPT_TICK,
	OPT_SILENCE, OPT_PING_TIMEOUT, OPT_FANOUT, OPT_HOPS, OPT_MAX_AGE,
	OPT_MAX_FUTURE, OPT_RATE_BURST, OPT_RATE, OPT_STRIKES, OPT_QUARANTINE,
	OPT_MAX_LINKS, OPT_MAX_CLIENTS, OPT_MAX_FRAME, OPT_MAX_LINE,
	OPT_MAX_ENTRIES, OPT_TRACE_EVENTS, OPT_LOG_LEVEL, OPT_LOG_FILE,
	OPT_GROUP, OPT_HOLD, OPT_TEST_HOOKS, OPT_FAULT_SEED, OPT_DIRECT_IO,
	OPT_TAKE_MODE,
};

static const struct option longopts[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "dir", required_argument, NULL, 'd' },
	{ "listen", required_argument, NULL, 'l' },
	{ "control", required_argument, NULL, 'c' },
	{ "seed", required_argument, NULL, 's' },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "hold", no_argument, NULL, OPT_HOLD },
	{ "test-hooks", no_argument, NULL, OPT_TEST_HOOKS },
	{ "fault-seed", required_argument, NULL, OPT_FAULT_SEED },
	{ "direct-io", no_argument, NULL, OPT_DIRECT_IO },
	{ "help", no_argument, NULL, 'h' },
	{ "settle-ms", required_argument, NULL, OPT_SETTLE },
	{ "take-retry-ms", required_argument, NULL, OPT_TAKE_RETRY },
	{ "take-lease-ms", required_argument, NULL, OPT_TAKE_LEASE },
	{ "take-mode", required_argument, NULL, OPT_TAKE_MODE },
	{ "gossip-ms", required_argument, NULL, OPT_GOSSIP },
	{ "tick-ms", required_argument, NULL, OPT_TICK },
	{ "silence-ms", required_argument, NULL, OPT_SILENCE },
	{ "ping-timeout-ms", required_argument, NULL, OPT_PING_TIMEOUT },
	{ "fanout", required_argument, NULL, OPT_FANOUT },
	{ "hops", required_argument, NULL, OPT_HOPS },
	{ "max-age-s", required_argument, NULL, OPT_MAX_AGE },
	{ "max-future-s", required_argument, NULL, OPT_MAX_FUTURE },
	{ "rate-burst", required_argument, NULL, OPT_RATE_BURST },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "strikes", required_argument, NULL, OPT_STRIKES },
	{ "quarantine-s", required_argument, NULL, OPT_QUARANTINE },
	{ "max-links", required_argument, NULL, OPT_MAX_LINKS },
	{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
	{ "max-frame", required_argument, NULL, OPT_MAX_FRAME },
	{ "max-line", required_argument, NULL, OPT_MAX_LINE },
	{ "max-entries", required_argument, NULL, OPT_MAX_ENTRIES },
	{ "trace-events", required_argument, NULL, OPT_TRACE_EVENTS },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ NULL, 0, NULL, 0 }
};

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: peerd --name NAME --dir DIR --control PATH [--listen 127.0.0.1:PORT]\n"
"             [--seed HOST:PORT]... [options]\n"
"\n"
"  --name NAME            this peer's name (in logs, hello, the ready line)\n"
"  --dir DIR              its directory: identity.key, peerd.log, trace.ndjson\n"
"  --listen ADDR          TCP listen address (default 127.0.0.1:0, a free port)\n"
"  --control PATH         the JSON control socket (mode 0600)\n"
"  --seed HOST:PORT       a peer to dial at start (repeatable)\n"
"  --group NAME           the fabric group (default \"fleet\")\n"
"  --hold                 stop (SIGSTOP) after the ready line, before the loop\n"
"  --log-level LEVEL      error, warn, info (default) or debug\n"
"  --log-file PATH        default DIR/peerd.log; \"-\" for stderr\n"
"  --fault-seed N         seed of the fault filter's drop/jitter draws\n"
"  --direct-io            write fetched pieces with O_DIRECT and serve the\n"
"                         last 8 MiB of them from memory (docs/protocol.md)\n"
"  --test-hooks           enable the \"debug\" command (tests only: it can hang\n"
"                         the peer on purpose)\n"
"timing (REFERENCE.md defaults):\n"
"  --settle-ms N (200)  --take-retry-ms N (20)  --take-lease-ms N (30000)\n"
"  --gossip-ms N (1000)  --tick-ms N (250)  --silence-ms N (30000)\n"
"  --ping-timeout-ms N (2000)  --fanout N (3)  --hops N (6)\n"
"  --take-mode lease|quorum (lease): quorum wins a take only when a majority\n"
"                         of the membership acknowledged the claim\n"
"receiver checks:\n"
"  --max-age-s N (300)  --max-future-s N (600)  --rate-burst N (50000)\n"
"  --rate N (10000 frames/s)  --strikes N (16)  --quarantine-s N (600)\n"
"limits (each hit is counted):\n"
"  --max-links N (256)  --max-clients N (64)  --max-frame BYTES (8388608)\n"
"  --max-line BYTES (1048576)  --max-entries N (1000000)  --trace-events N (8192)\n");
}

static uint32_t
opt_u32(const char *name, const char *arg, uint32_t min, uint32_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < min || v > max)
		fatalx("--%s: expected an integer from %u to %u, got \"%s\"",
		    name, min, max, arg);
	return (uint32_t)v;
}

static void
conf_parse(struct peerd_conf *c, int argc, char **argv)
{
	int ch;

	while ((ch = getopt_long(argc, argv, "n:d:l:c:s:h", longopts,
	    NULL)) != -1) {
		const char *nm = NULL;

		for (const struct option *o = longopts; o->name; o++)
			if (o->val == ch)
				nm = o->name;
		switch (ch) {
		case 'n': c->name = optarg; break;
		case 'd': c->dir = optarg; break;
		case 'l': c->listen = optarg; break;
		case 'c': c->control = optarg; break;
		case 's':
			c->seeds = xreallocarray(c->seeds, (size_t)c->nseeds + 1,
			    sizeof(*c->seeds));
			c->seeds[c->nseeds++] = optarg;
			break;
		case OPT_GROUP: c->group = optarg; break;
		case OPT_HOLD: c->hold = true; break;
		case OPT_TEST_HOOKS: c->test_hooks = true; break;
		case OPT_DIRECT_IO: c->direct_io = true; break;
		case OPT_FAULT_SEED:
			fault_seed(strtoull(optarg, NULL, 10));
			break;
		case 'h': usage(stdout); exit(0);
		case OPT_SETTLE: c->settle_ms = opt_u32(nm, optarg, 0, 600000); break;
		case OPT_TAKE_RETRY: c->take_retry_ms = opt_u32(nm, optarg, 1, 60000); break;
		case OPT_TAKE_LEASE: c->take_lease_ms = opt_u32(nm, optarg, 1, 86400000); break;
		case OPT_GOSSIP: c->gossip_ms = opt_u32(nm, optarg, 10, 3600000); break;
		case OPT_TICK: c->tick_ms = opt_u32(nm, optarg, 10, 3600000); break;
		case OPT_SILENCE: c->silence_ms = opt_u32(nm, optarg, 100, 86400000); break;
		case OPT_PING_TIMEOUT: c->ping_timeout_ms = opt_u32(nm, optarg, 10, 3600000); break;
		case OPT_FANOUT: c->fanout = opt_u32(nm, optarg, 1, 1024); break;
		case OPT_HOPS: c->hops = opt_u32(nm, optarg, 1, 64); break;
		case OPT_MAX_AGE: c->max_age_s = opt_u32(nm, optarg, 1, 86400); break;
		case OPT_MAX_FUTURE: c->max_future_s = opt_u32(nm, optarg, 1, 86400); break;
		case OPT_RATE_BURST: c->rate_burst = opt_u32(nm, optarg, 1, UINT32_MAX); break;
		case OPT_RATE: c->rate_per_s = opt_u32(nm, optarg, 1, UINT32_MAX); break;
		case OPT_STRIKES: c->strikes = opt_u32(nm, optarg, 1, 1000000); break;
		case OPT_QUARANTINE: c->quarantine_s = opt_u32(nm, optarg, 1, 86400); break;
		case OPT_MAX_LINKS: c->max_links = opt_u32(nm, optarg, 1, 65536); break;
		case OPT_MAX_CLIENTS: c->max_clients = opt_u32(nm, optarg, 1, 65536); break;
		case OPT_MAX_FRAME: c->max_frame = opt_u32(nm, optarg, 1024, 64u << 20); break;
		case OPT_MAX_LINE: c->max_line = opt_u32(nm, optarg, 256, 64u << 20); break;
		case OPT_MAX_ENTRIES: c->max_entries = opt_u32(nm, optarg, 1, UINT32_MAX); break;
		case OPT_TRACE_EVENTS: c->trace_events = opt_u32(nm, optarg, 16, 1u << 24); break;
		case OPT_LOG_LEVEL: c->log_level = optarg; break;
		case OPT_TAKE_MODE:
			if (strcmp(optarg, "lease") == 0)
				c->take_mode = TAKE_LEASE;
			else if (strcmp(optarg, "quorum") == 0)
				c->take_mode = TAKE_QUORUM;
			else
				fatalx("--take-mode: expected lease or quorum, "
				    "got \"%s\"", optarg);
			break;
		case OPT_LOG_FILE: c->log_file = optarg; break;
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "peerd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
	if (c->name == NULL || c->dir == NULL || c->control == NULL) {
		fprintf(stderr, "peerd: --name, --dir and --control are required\n");
		usage(stderr);
		exit(2);
	}
	if (log_level_parse(c->log_level) == -1) {
		fprintf(stderr, "peerd: --log-level: expected error, warn, info "
		    "or debug, got \"%s\"\n", c->log_level);
		exit(2);
	}
}

uint64_t
peerd_uptime_us(void)
{
	return clock_mono_us() - pd->start_us;
}

void
peerd_shutdown(const char *why)
{
	if (pd->stopping)
		return;
	pd->stopping = true;
	log_info("shutting down: %s", why);
	trace_add("peer", "shutdown: %s", why);
	event_base_loopexit(pd->base, NULL);
}

static void
peerd_write_trace(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/trace.ndjson", pd->conf.dir);
	if (trace_write(path) == -1)
		log_warn("trace: write %s", path);
}

static void
sig_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	(void)arg;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		peerd_shutdown(sig == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	case SIGUSR1:
		peerd_write_trace();
		log_info("trace written on SIGUSR1");
		break;
	}
}

static void
ensure_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		fatal("mkdir %s", dir);
	if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode))
		fatalx("%s is not a directory", dir);
}

int
main(int argc, char **argv)
{
	char logpath[PATH_MAX];
	const char *logfile;
	bool created;
	json_t *ready;
	char *line;

	pd = &peerd_storage;
	conf_defaults(&pd->conf);
	conf_parse(&pd->conf, argc, argv);
	pd->start_us = clock_mono_us();
	signal(SIGPIPE, SIG_IGN);

	ensure_dir(pd->conf.dir);
	logfile = pd->conf.log_file;
	if (logfile == NULL) {
		snprintf(logpath, sizeof(logpath), "%s/peerd.log", pd->conf.dir);
		logfile = logpath;
	} else if (strcmp(logfile, "-") == 0)
		logfile = NULL;
	if (log_init(pd->conf.name,
	    (enum log_level)log_level_parse(pd->conf.log_level), logfile) == -1)
		fatal("log file %s", logfile);
	if (identity_load_or_create(&pd->ident, pd->conf.dir, &created) == -1)
		fatalx("identity in %s: cannot load or create", pd->conf.dir);
	log_info("peerd %s starting as %s (%s identity %s)", PEERD_VERSION,
	    pd->conf.name, created ? "new" : "kept", pd->ident.peer_id);

	if ((pd->base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	trace_init(pd->conf.trace_events);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	replica_init();
	swarm_init();
	if (link_init(pd->conf.listen, pd->listen_addr,
	    sizeof(pd->listen_addr)) == -1)
		fatalx("cannot listen on %s", pd->conf.listen);
	if ((pd->control = control_new(pd->base, pd->conf.control,
	    pd->conf.max_clients, pd->conf.max_line)) == NULL)
		fatalx("cannot open the control socket %s", pd->conf.control);

	ev_sigterm = evsignal_new(pd->base, SIGTERM, sig_cb, NULL);
	ev_sigint = evsignal_new(pd->base, SIGINT, sig_cb, NULL);
	ev_sigusr1 = evsignal_new(pd->base, SIGUSR1, sig_cb, NULL);
	evsignal_add(ev_sigterm, NULL);
	evsignal_add(ev_sigint, NULL);
	evsignal_add(ev_sigusr1, NULL);

	ready = json_pack("{s:b, s:s, s:I, s:s, s:s, s:s}", "ready", 1,
	    "name", pd->conf.name, "pid", (json_int_t)getpid(),
	    "peer_id", pd->ident.peer_id, "listen", pd->listen_addr,
	    "control", pd->conf.control);
	line = json_dumps(ready, JSON_COMPACT);
	printf("%s\n", line);
	fflush(stdout);
	free(line);
	json_decref(ready);
	trace_add("peer", "ready on %s as %s", pd->listen_addr,
	    pd->ident.peer_id);

	if (pd->conf.hold) {
		log_info("held before the loop (pid %d): attach with "
		    "gdb -p %d, then continue with kill -CONT %d",
		    (int)getpid(), (int)getpid(), (int)getpid());
		raise(SIGSTOP);
	}
	for (int i = 0; i < pd->conf.nseeds; i++)
		link_add_seed(pd->conf.seeds[i]);

	event_base_dispatch(pd->base);

	peerd_write_trace();
	swarm_free();
	link_shutdown();
	control_free(pd->control);
	replica_free();
	load_free_all();
	event_free(ev_sigterm);
	event_free(ev_sigint);
	event_free(ev_sigusr1);
	event_base_free(pd->base);
	identity_free(&pd->ident);
	trace_free();
	free(pd->conf.seeds);
	log_info("stopped");
	return 0;
}

/*
 * main.c: peerd's start-up and shutdown.
 *
 * Parse the command line (every knob has a flag), take the identity from
 * DIR, bind the TCP listener and the control socket, print the one ready
 * line on stdout (docs/control.md), optionally stop itself for a debugger
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
#include "cmd.h"
#include "control.h"
#include "digest.h"
#include "fault.h"
#include "knob.h"
#include "link.h"
#include "load.h"
#include "log.h"
#include "heap.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "plumtree.h"
#include "recon.h"
#include "replica.h"
#include "swarm.h"
#include "swim.h"
#include "take.h"
#include "trace.h"
#include "urgent.h"
#include "version.h"
#include "view.h"
#include "vote.h"
#include "wake.h"
#include "xmalloc.h"

struct peerd *pd;

static struct peerd	 peerd_storage;
static struct event	*ev_sigterm, *ev_sigint, *ev_sigusr1;
static struct wake	*tick_wk;

enum {
	OPT_LOG_FILE = 256, OPT_GROUP, OPT_HOLD, OPT_FAULT_SEED, OPT_VERSION,
	OPT_BINDING, OPT_ADVERTISE,
	OPT_KNOB	/* OPT_KNOB + i: row i of KNOBS() */
};

#define KNOB_HAS_ARG_U32	required_argument
#define KNOB_HAS_ARG_LEVEL	required_argument
#define KNOB_HAS_ARG_METHOD	required_argument
#define KNOB_HAS_ARG_TAKEMODE	required_argument
#define KNOB_HAS_ARG_LINKAUTH	required_argument
#define KNOB_HAS_ARG_SWITCH	no_argument
#define KNOB_OPTION(flag, field, type, min, max, def, help) \
	{ flag, KNOB_HAS_ARG_##type, NULL, 0 },

static const struct option longopts[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "dir", required_argument, NULL, 'd' },
	{ "listen", required_argument, NULL, 'l' },
	{ "advertise", required_argument, NULL, OPT_ADVERTISE },
	{ "control", required_argument, NULL, 'c' },
	{ "seed", required_argument, NULL, 's' },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "binding", required_argument, NULL, OPT_BINDING },
	{ "hold", no_argument, NULL, OPT_HOLD },
	{ "fault-seed", required_argument, NULL, OPT_FAULT_SEED },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	KNOBS(KNOB_OPTION)
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
"  --listen HOST:PORT     TCP listen address, HOST a name or an IPv4 address\n"
"                         (default 127.0.0.1:0, a free port)\n"
"  --advertise HOST:PORT  the address told to other peers (port 0: the bound\n"
"                         one); needed when listening on 0.0.0.0\n"
"  --control PATH         the JSON control socket (mode 0600)\n"
"  --seed HOST:PORT       a peer to dial at start (repeatable; HOST a name\n"
"                         or an IPv4 address, resolved once at start)\n"
"  --group NAME           the fabric group (default \"fleet\")\n"
"  --binding tcp|tls|dtls links over plain TCP (default), TLS 1.3 with\n"
"                         Ed25519 identity certificates, or DTLS 1.2 over\n"
"                         UDP with endorsed channel keys (docs/protocol.md)\n"
"  --hold                 stop (SIGSTOP) after the ready line, before the loop\n"
"  --log-file PATH        default DIR/peerd.log; \"-\" for stderr\n"
"  --fault-seed N         seed of the fault filter's drop/jitter draws\n"
"  --help, --version\n"
"The wire protocol and the control socket: docs/protocol.md, docs/control.md.\n"
"knobs (common/knob.h):\n");
	for (size_t i = 0; i < knob_count; i++) {
		const struct knob *k = &knob_table[i];
		char flag[64];

		if (k->type == KNOB_SWITCH)
			snprintf(flag, sizeof(flag), "--%s", k->name);
		else
			snprintf(flag, sizeof(flag), "--%s %s", k->name,
			    k->type == KNOB_LEVEL ? "LEVEL" :
			    k->type == KNOB_METHOD ? "METHOD" :
			    k->type == KNOB_TAKEMODE ? "MODE" :
			    k->type == KNOB_LINKAUTH ? "AUTH" : "N");
		fprintf(fp, "  %-22s %s", flag, k->help);
		if (k->type == KNOB_U32)
			fprintf(fp, " (%llu; %llu..%llu)", k->def, k->min,
			    k->max);
		else if (knob_words(k) != NULL)
			fprintf(fp, " (%s)", knob_words(k)[k->def]);
		fputc('\n', fp);
	}
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

/* The index of arg among a word knob's values; fatal if it is none. */
static int
opt_word(const struct knob *k, const char *arg)
{
	const char *const *words = knob_words(k);
	int w = knob_word(k, arg);
	char list[256];
	size_t len = 0;

	if (w != -1)
		return w;
	list[0] = '\0';
	for (int i = 0; words[i] != NULL && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
		    i > 0 ? ", " : "", words[i]);
	fatalx("--%s: expected one of %s, got \"%s\"", k->name, list, arg);
}

/* Lay one knob's flag over c (its row in KNOBS() found by name). */
static void
knob_set(struct peerd_conf *c, const char *name, const char *arg)
{
	const struct knob *k = knob_find(name);
	size_t i = (size_t)(k - knob_table), n = 0;

#define KNOB_PARSE_U32(f)	c->f = opt_u32(k->name, arg, \
				    (uint32_t)k->min, (uint32_t)k->max)
#define KNOB_PARSE_SWITCH(f)	c->f = true
#define KNOB_PARSE_LEVEL(f)	c->f = knob_levels[opt_word(k, arg)]
#define KNOB_PARSE_METHOD(f)	c->f = (uint32_t)opt_word(k, arg)
#define KNOB_PARSE_TAKEMODE(f)	c->f = (uint32_t)opt_word(k, arg)
#define KNOB_PARSE_LINKAUTH(f)	c->f = (uint32_t)opt_word(k, arg)
#define KNOB_APPLY(flag, field, type, min, max, def, help) \
	if (i == n++) {						\
		KNOB_PARSE_##type(field);			\
		return;						\
	}
	KNOBS(KNOB_APPLY)
#undef KNOB_APPLY
}

static void
conf_parse(struct peerd_conf *c, int argc, char **argv)
{
	int ch, li;

	while ((ch = getopt_long(argc, argv, "n:d:l:c:s:h", longopts,
	    &li)) != -1) {
		switch (ch) {
		case 'n': c->name = optarg; break;
		case 'd': c->dir = optarg; break;
		case 'l': c->listen = optarg; break;
		case OPT_ADVERTISE: c->advertise = optarg; break;
		case 'c': c->control = optarg; break;
		case 's':
			c->seeds = xreallocarray(c->seeds, (size_t)c->nseeds + 1,
			    sizeof(*c->seeds));
			c->seeds[c->nseeds++] = optarg;
			break;
		case OPT_GROUP: c->group = optarg; break;
		case OPT_BINDING: c->binding = optarg; break;
		case OPT_HOLD: c->hold = true; break;
		case OPT_FAULT_SEED:
			fault_seed(strtoull(optarg, NULL, 10));
			break;
		case 'h': usage(stdout); exit(0);
		case OPT_VERSION: VERSION_PRINT("peerd"); exit(0);
		case OPT_LOG_FILE: c->log_file = optarg; break;
		case 0:
			knob_set(c, longopts[li].name, optarg);
			break;
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
	if (strcmp(c->binding, "tcp") != 0 && strcmp(c->binding, "tls") != 0 &&
	    strcmp(c->binding, "dtls") != 0) {
		fprintf(stderr, "peerd: --binding: expected tcp, tls or dtls, got "
		    "\"%s\"\n", c->binding);
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

/*
 * The daemon's tick: links, then the view, then anti-entropy, then the
 * heap.  It sleeps until the earliest work one of them has due (each
 * returns when), but never less than --tick-ms.  A link born (link.c) or
 * one that comes up or goes down (tick_link) wakes it sooner.  An idle
 * peer with a full view so wakes for its pings, its shuffle and swap and
 * its periodic repair (every --gossip-ms, backing off to --repair-max-ms),
 * where it woke every --tick-ms whatever was due; the heap's trim rides
 * on those runs (heap.c).  The tick may run up to a quarter of --tick-ms
 * late (wake.c): in a wake-up that happens in that time anyway (a frame,
 * an IHAVE flush), so it seldom wakes the peer alone while frames flow.
 * docs/protocol.md, "What runs when".
 */
#define TICK_LATE_MS()	(pd->conf.tick_ms / 4)

/* Run the tick by at_ms (monotonic) if it is not due sooner. */
static void
tick_wake(uint64_t at_ms)
{
	uint64_t armed;

	if (tick_wk == NULL || (wake_armed(tick_wk, &armed) && armed <= at_ms))
		return;
	wake_at(tick_wk, at_ms, 0, TICK_LATE_MS());
}

static void
tick_cb(void *arg)
{
	uint64_t now = clock_mono_ms(), next, due;

	(void)arg;
	pd_count(tick_runs);
	next = link_tick();
	due = view_tick();
	next = due < next ? due : next;
	due = recon_tick();
	next = due < next ? due : next;
	due = heap_tick();
	next = due < next ? due : next;
	due = now + pd->conf.tick_ms;
	tick_wake(next < due ? due : next);
}

/* A link up or down: the view has dials, fills or pings to time. */
static void
tick_link(struct member *m, bool up)
{
	(void)m;
	(void)up;
	tick_wake(clock_mono_ms() + pd->conf.tick_ms);
}

/*
 * The daemon's wiring, in one place and one order (docs/hacking.md):
 * every module's _init, and each callback one module gives another, so
 * that no module calls up into the ones above it.  The order is the order
 * of the link observers (a link that comes up is told to the broadcast,
 * then anti-entropy, the swarm, the view and the tick) and of the
 * replica's (the broadcast, the urgent lane, the take).
 */
static void
peerd_wire(void)
{
	trace_init(pd->conf.trace_events);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	replica_init();			/* the store */
	swim_init();			/* PING, PING_REQ, ACK */
	plumtree_init();		/* RUMOR, IHAVE, GRAFT, PRUNE */
	recon_init();			/* RECON_*, the periodic repair */
	digest_init();			/* DIGEST, PULL_RESP */
	urgent_init(plumtree_send_urgent, take_turn_sent);
	vote_init(take_answered, urgent_soon);	/* CLAIM_ACK* */
	take_init(urgent_add);
	swarm_init();			/* the content swarm's kinds */
	heap_init();
	if (link_init(pd->conf.listen, pd->listen_addr,
	    sizeof(pd->listen_addr)) == -1)
		fatalx("cannot listen on %s", pd->conf.listen);
	view_init();			/* JOIN ... GROUP_AD */
	view_set_drop_cost(plumtree_link_cost);
	if ((tick_wk = wake_new("tick", tick_cb, NULL)) == NULL)
		fatalx("no timer for the tick");
	tick_wake(clock_mono_ms() + pd->conf.tick_ms);
	link_observe(tick_link);
	link_tick_wake(tick_wake);
	if ((pd->control = control_new(pd->base, pd->conf.control,
	    pd->conf.max_clients, pd->conf.max_line, cmd_dispatch)) == NULL)
		fatalx("cannot open the control socket %s", pd->conf.control);
}

/* The wiring undone, at shutdown. */
static void
peerd_unwire(void)
{
	swarm_free();
	wake_free(tick_wk);
	tick_wk = NULL;
	link_shutdown();
	/*
	 * One turn without waiting: a dtls link's bufferevent pair is freed
	 * with its deferred callbacks still queued, and libevent drops their
	 * reference only when they run (event_base_free cancels them, and the
	 * pair leaks).  Every other module is still whole here, so whatever
	 * else is due runs as in any turn.
	 */
	event_base_loop(pd->base, EVLOOP_NONBLOCK);
	view_free();
	member_free_all();
	control_free(pd->control);
	take_free();
	vote_free();
	urgent_free();
	recon_free();
	plumtree_free();
	replica_free();
	load_free_all();
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
	struct event_config *cfg;
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

	/*
	 * A precise timer: libevent otherwise reads CLOCK_MONOTONIC_COARSE,
	 * up to a jiffy (4 ms here) behind, so a timer's wait came out short
	 * and the loop woke, found the timer not yet due by the coarse clock
	 * and slept again for the rest: two wake-ups for one timer (strace:
	 * a third of an idle peer's timer wake-ups were that first, empty one).
	 */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == -1 ||
	    (pd->base = event_base_new_with_config(cfg)) == NULL)
		fatalx("event_base_new failed");
	event_config_free(cfg);
	peerd_wire();

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
	for (int i = 0; i < pd->conf.nseeds; i++) {
		char seed[64];
		const char *why;

		/* A name is resolved once, here: the view keeps literals. */
		if (link_resolve(pd->conf.seeds[i], seed, sizeof(seed),
		    &why) == -1 || view_add_seed(seed) == -1)
			log_warnx("seed \"%s\": %s", 
			    pd->conf.seeds[i], why);
	}

	/*
	 * One loop turn at a time: after each, the timers whose slack lets
	 * them run now do, in this wake-up (wake.c), not in one of their own.
	 */
	while (event_base_loop(pd->base, EVLOOP_ONCE) == 0 &&
	    !event_base_got_exit(pd->base) && !event_base_got_break(pd->base))
		wake_serve();

	peerd_write_trace();
	peerd_unwire();
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

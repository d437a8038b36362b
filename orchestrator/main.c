/*
 * main.c: orchestrate, the program its users run every day.
 *
 *   orchestrate SCENARIO.json [--peers N] [--set KEY=VALUE]... [--seed N]
 *               [--out DIR] [--dry-run] [--timeout S] [--keep]
 *               [--hold K] [--wrap K=PREFIX]... [--stall-s S] [--watch-ms MS]
 *               [--quiet|--verbose] [--peerd PATH]
 *   orchestrate down RUN_DIR      stop a fleet left up by --keep
 *   orchestrate replay RUN_DIR    run again with the same resolved
 *                                 scenario and seed; report the first step
 *                                 whose outcome differs
 *   orchestrate compare RUN_A RUN_B [--fail-above PCT]    (compare.c)
 *   orchestrate sweep SCENARIO --set KEY=V1,V2 [--repeat K] (sweep.c)
 *   orchestrate report RUN_DIR    draw a bundle's report.html again
 *   orchestrate --version | --help
 *
 * SCENARIO is a file, or the name of an installed scenario ("churn":
 * PREFIX/share/fleet-lab/scenarios/churn.json beside the binary's
 * PREFIX/bin, or scenarios/churn.json beside a build/ tree).
 *
 * Exit status: 0 every check passed, 1 a check failed (or could not be
 * measured), 2 the run could not complete.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "compare.h"
#include "debug.h"
#include "fleet.h"
#include "html.h"
#include "log.h"
#include "measures.h"
#include "num.h"
#include "replay.h"
#include "report.h"
#include "run.h"
#include "scenario.h"
#include "sweep.h"
#include "version.h"
#include "xmalloc.h"

static const struct option longopts[] = {
	{ "peers", required_argument, NULL, 'n' },
	{ "set", required_argument, NULL, 's' },
	{ "seed", required_argument, NULL, 'S' },
	{ "out", required_argument, NULL, 'o' },
	{ "dry-run", no_argument, NULL, 'd' },
	{ "timeout", required_argument, NULL, 't' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "keep", no_argument, NULL, 'k' },
	{ "keep-content", no_argument, NULL, 'K' },
	{ "peerd", required_argument, NULL, 'p' },
	{ "hold", required_argument, NULL, 'H' },
	{ "hold-timeout", required_argument, NULL, 'T' },
	{ "wrap", required_argument, NULL, 'w' },
	{ "stall-s", required_argument, NULL, 'W' },
	{ "watch-ms", required_argument, NULL, 'J' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: orchestrate SCENARIO [options]\n"
"\n"
"  SCENARIO           a scenario file, or an installed scenario's name\n"
"                     (churn, gossip, swarm, throughput)\n"
"  --peers N          the fleet size (the same as --set peers=N)\n"
"  --set KEY=VALUE    override a scenario parameter (repeatable)\n"
"  --seed N           the run's seed (default: random, printed)\n"
"  --out DIR          where run directories are made (default results;\n"
"                     made with its parents)\n"
"  --dry-run          print the resolved scenario and exit\n"
"  --timeout S        bound on the whole run (default: the scenario's)\n"
"  --keep             leave the fleet running at the end (see: down)\n"
"  --keep-content     keep every peer's copy of a swarm blob after a PASS\n"
"                     (by default they are removed once verified)\n"
"  --hold K           start peer K (a list like 1,3, or all) stopped before\n"
"                     its loop; print its gdb line; wait until continued\n"
"  --hold-timeout S   how long to wait for a held peer (default 600)\n"
"  --wrap K=PREFIX    run PREFIX in front of peer K's command, e.g.\n"
"                     --wrap 1='perf record -g -o {dir}/perf.data'\n"
"                     ({dir} and {name} are substituted; repeatable)\n"
"  --stall-s S        the watchdog: no progress for S seconds, or a peer\n"
"                     missing a call's or a hello's bound, captures hang/\n"
"                     and ends the run (default 30; 0: no stall check)\n"
"  --watch-ms MS      the watchdog's round: each peer gets one call (a\n"
"                     sample or a hello) a round (default 1000, and 5 ms\n"
"                     a peer in fleets beyond 200 peers)\n"
"  --quiet, --verbose less or more progress on stderr\n"
"  --peerd PATH       the peerd binary (default: beside orchestrate)\n"
"\n"
"\n"
"       orchestrate down RUN_DIR      stop a fleet left up by --keep\n"
"       orchestrate replay RUN_DIR    run a bundle's scenario and seed again\n"
"       orchestrate compare RUN_A RUN_B [--fail-above PCT]  (--help: more)\n"
"       orchestrate sweep SCENARIO --set KEY=V1,V2,... [--repeat K]\n"
"       orchestrate report RUN_DIR    draw a bundle's report.html again\n"
"       orchestrate --version\n"
"\n"
"exit status: 0 every check passed, 1 a check failed or could not be\n"
"measured, 2 the run could not complete.  The bundle is in\n"
"OUT/<scenario>-<UTC stamp>/ and OUT/latest links to it; see\n"
"docs/scenarios.md and docs/report.md.\n");
}

/* --set strings: freed at exit whichever way main returns. */
static char	**sets;
static size_t	  nsets;

static void
free_sets(void)
{
	for (size_t i = 0; i < nsets; i++)
		free(sets[i]);
	free(sets);
	sets = NULL;
	nsets = 0;
}

static void
on_signal(int sig)
{
	(void)sig;
	engine_interrupted = 1;
	fleet_wake();		/* a sleeping step looks at once */
}

static void
default_peerd(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		snprintf(out, len, "%s/peerd", dirname(self));
		if (access(out, X_OK) == 0)
			return;
	}
	snprintf(out, len, "peerd");
}

/*
 * The path of SCENARIO: itself when it is a file; otherwise, for a bare
 * name, NAME.json in the installed share/fleet-lab/scenarios/ or in the
 * source tree's scenarios/ beside the build directory.
 */
static const char *
find_scenario(const char *arg, char *out, size_t len)
{
	static const char *const places[] = {
		"%s/../share/fleet-lab/scenarios/%s%s",
		"%s/../scenarios/%s%s",
		"%s/../../scenarios/%s%s",
	};
	char self[PATH_MAX];
	const char *ext;
	struct stat st;
	ssize_t n;

	if ((stat(arg, &st) == 0 && S_ISREG(st.st_mode)) ||
	    strchr(arg, '/') != NULL ||
	    (n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return arg;
	self[n] = '\0';
	ext = strlen(arg) > 5 && strcmp(arg + strlen(arg) - 5, ".json") == 0 ?
	    "" : ".json";
	dirname(self);
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		snprintf(out, len, places[i], self, arg, ext);
		if (access(out, R_OK) == 0)
			return out;
	}
	return arg;
}

/* The summary on stderr: every check, and for each that did not pass its
 * value and bound, in the measure's unit. */
static void
print_summary(const struct run *run, const json_t *scn,
    const struct run_opts *opts)
{
	json_t *c;
	size_t i;

	fprintf(stderr, "%s: %s in %.1f s (seed %llu)\n",
	    json_string_value(json_object_get(scn, "name")),
	    run->status == RUN_PASS ? "PASS" : run->status == RUN_FAIL ?
	    "FAIL" : "ERROR", (double)(run->end_ms - run->t0_ms) / 1000.0,
	    (unsigned long long)opts->seed);
	if (run->status == RUN_ERROR)
		fprintf(stderr, "  error: %s\n", run->error);
	json_array_foreach(run->checks, i, c) {
		const char *res = json_string_value(json_object_get(c, "result"));
		const char *unit = measures_check_unit(run->measures, c);
		const char *stat = json_string_value(json_object_get(c, "stat"));
		char v[NUM_BUF], b[NUM_BUF];

		fprintf(stderr, "  %-7s %s", res, json_string_value(
		    json_object_get(c, "name")));
		if (res != NULL && strcmp(res, "PASS") != 0)
			fprintf(stderr, ": %s%s%s = %s, bound %s %s",
			    json_string_value(json_object_get(c, "metric")),
			    stat ? " " : "", stat ? stat : "",
			    json_is_number(json_object_get(c, "value")) ?
			    num_human(json_number_value(json_object_get(c,
			    "value")), unit, v, sizeof(v)) : "not measured",
			    json_string_value(json_object_get(c, "op")),
			    num_human(json_number_value(json_object_get(c,
			    "bound")), unit, b, sizeof(b)));
		fputc('\n', stderr);
	}
	if (run->dir[0] != '\0')
		fprintf(stderr, "  report: %s/report.md (and report.html)\n",
		    run->dir);
}

int
main(int argc, char **argv)
{
	struct run_opts opts;
	struct run run;
	struct sigaction sa;
	char *peersset = NULL, err[1024], peerd[PATH_MAX], path[PATH_MAX];
	bool dry = false, seed_given = false;
	const char *replay_dir = NULL;
	json_t *scn;
	int ch;

	memset(&opts, 0, sizeof(opts));
	opts.out = "results";
	opts.hold_timeout_s = 600;
	opts.stall_s = 30;
	opts.argv = argv;
	opts.argc = argc;
	log_init("orchestrate", LOG_LVL_WARN, NULL);
	/* Subcommands with options of their own, before getopt sees them. */
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return compare_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "sweep") == 0)
		return sweep_main(argc - 1, argv + 1);
	atexit(free_sets);
	while ((ch = getopt_long(argc, argv, "hqv", longopts, NULL)) != -1) {
		char *end;

		switch (ch) {
		case 'n':
			xasprintf(&peersset, "peers=%s", optarg);
			sets = xreallocarray(sets, nsets + 1, sizeof(*sets));
			sets[nsets++] = peersset;
			break;
		case 's':
			sets = xreallocarray(sets, nsets + 1, sizeof(*sets));
			sets[nsets++] = xstrdup(optarg);
			break;
		case 'S':
			errno = 0;
			opts.seed = strtoull(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg) {
				fprintf(stderr, "orchestrate: --seed: expected "
				    "an unsigned integer, got \"%s\"\n", optarg);
				return 2;
			}
			seed_given = true;
			break;
		case 'o':
			opts.out = optarg;
			break;
		case 'd':
			dry = true;
			break;
		case 't':
			opts.timeout_s = atoi(optarg);
			if (opts.timeout_s <= 0) {
				fprintf(stderr, "orchestrate: --timeout: expected "
				    "seconds > 0, got \"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'q':
			opts.verbose = -1;
			break;
		case 'v':
			opts.verbose = 1;
			break;
		case 'k':
			opts.keep = true;
			break;
		case 'K':
			opts.keep_content = true;
			break;
		case 'p':
			opts.peerd = optarg;
			break;
		case 'H':
			opts.hold = optarg;
			break;
		case 'T':
			opts.hold_timeout_s = atoi(optarg);
			break;
		case 'w':
			if (strchr(optarg, '=') == NULL) {
				fprintf(stderr, "orchestrate: --wrap: expected "
				    "K=PREFIX, got \"%s\"\n", optarg);
				return 2;
			}
			opts.wraps = xreallocarray(opts.wraps,
			    (size_t)opts.nwraps + 1, sizeof(*opts.wraps));
			opts.wraps[opts.nwraps++] = optarg;
			break;
		case 'J':
			opts.watch_ms = atoi(optarg);
			if (opts.watch_ms < 100 || opts.watch_ms > 600000) {
				fprintf(stderr, "orchestrate: --watch-ms: "
				    "expected 100 to 600000 ms\n");
				return 2;
			}
			break;
		case 'W':
			opts.stall_s = atoi(optarg);
			if (opts.stall_s < 0) {
				fprintf(stderr, "orchestrate: --stall-s: expected "
				    "seconds >= 0\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			VERSION_PRINT("orchestrate");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc && strcmp(argv[optind], "down") == 0) {
		if (optind != argc - 2) {
			usage(stderr);
			return 2;
		}
		return debug_down(argv[optind + 1]);
	}
	if (optind < argc && strcmp(argv[optind], "report") == 0) {
		if (optind != argc - 2) {
			usage(stderr);
			return 2;
		}
		return html_write(argv[optind + 1]) == 0 ? 0 : 2;
	}
	if (optind < argc && strcmp(argv[optind], "replay") == 0) {
		if (optind != argc - 2) {
			usage(stderr);
			return 2;
		}
		replay_dir = argv[optind + 1];
		if ((scn = replay_load(replay_dir, &opts.seed, err,
		    sizeof(err))) == NULL) {
			fprintf(stderr, "orchestrate replay: %s\n", err);
			return 2;
		}
		seed_given = true;
	} else if (optind != argc - 1) {
		usage(stderr);
		return 2;
	} else {
		scn = scenario_load(find_scenario(argv[optind], path,
		    sizeof(path)), sets, nsets, err, sizeof(err));
		if (scn == NULL)
			fprintf(stderr, "orchestrate: %s\n", err);
	}
	if (scn == NULL)
		return 2;
	if (!seed_given)
		RAND_bytes((unsigned char *)&opts.seed, sizeof(opts.seed));
	opts.seed &= 0x7fffffffffffffffull;	/* fits a JSON integer */
	json_object_set_new(scn, "seed", json_integer((json_int_t)opts.seed));
	if (dry) {
		json_dumpf(scn, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(scn);
		return 0;
	}
	if (opts.peerd == NULL) {
		default_peerd(peerd, sizeof(peerd));
		opts.peerd = peerd;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	run_scenario(&run, scn, &opts);
	if (run.dir[0] != '\0' && access(run.dir, F_OK) == 0)
		report_write(&run);
	if (opts.verbose >= 0)
		print_summary(&run, scn, &opts);
	ch = (int)run.status;
	if (opts.keep && run.status != RUN_ERROR)
		debug_print_kept(&run);
	if (replay_dir != NULL)
		ch = replay_compare(replay_dir, &run);
	run_free(&run);
	free(opts.wraps);
	json_decref(scn);
	return ch;
}

/*
 * main.c: orchestrate, the program its users run every day.
 *
 *   orchestrate SCENARIO.json [--peers N] [--set KEY=VALUE]... [--seed N]
 *               [--out DIR] [--dry-run] [--timeout S] [--keep]
 *               [--hold K] [--wrap K=PREFIX]... [--stall-s S] [--watch-ms MS]
 *               [--sample-ms MS] [--quiet|--verbose] [--peerd PATH]
 *               [--launcher NAME]
 *   orchestrate list              every scenario a bare name can run
 *   orchestrate describe NAME     its parameters, steps and checks
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

#include "catalog.h"
#include "compare.h"
#include "debug.h"
#include "fleet.h"
#include "html.h"
#include "launch.h"
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
	{ "sample-ms", required_argument, NULL, 'M' },
	{ "launcher", required_argument, NULL, 'L' },
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
"                     (orchestrate list names them)\n"
"  --peers N          the fleet size (the same as --set peers=N)\n"
"  --set KEY=VALUE    override a scenario parameter (repeatable)\n"
"  --seed N           the run's seed (default: random, printed)\n"
"  --out DIR          where run directories are made (default results;\n"
"                     made with its parents)\n"
"  --dry-run          print the resolved scenario (JSON, stdout) and its\n"
"                     parameters (stderr), and exit\n"
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
"  --sample-ms MS     the samples' period (0: none; default: the\n"
"                     scenario's sample_ms, else 100 ms for the first\n"
"                     minute of the run and 1 s after it)\n"
"  -q, --quiet        only the verdict line on stderr\n"
"  -v, --verbose      every note of the engine on stderr as it comes\n"
"  --peerd PATH       the peerd binary (default: beside orchestrate)\n"
"  --launcher NAME    how peers are started (docs/launchers.md):\n"
"                     local (default) or netns\n"
"\n"
"\n"
"       orchestrate list              every scenario a bare name runs\n"
"       orchestrate describe NAME     its parameters, steps and checks\n"
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

/* The measures a summary shows after the checks, when the run has them. */
static const char *const headline[] = {
	"throughput.takes_per_s", "throughput.write_to_take",
	"gossip.write_to_visible", "swarm.aggregate_mib_s",
	"swarm.ratio_to_raw", "fleet.start_ms",
};

/* One figure of the summary: "  NAME  VALUE" in the measure's unit. */
static void
summary_figure(const char *name, const json_t *m)
{
	char a[NUM_BUF], b[NUM_BUF], c[NUM_BUF], d[NUM_BUF];

	if (json_object_get(m, "p50") != NULL)
		fprintf(stderr, "    %-30s p50 %s  p99 %s  max %s  (%s values)\n",
		    name, num_human(json_number_value(json_object_get(m, "p50")),
		    "us", a, sizeof(a)), num_human(json_number_value(
		    json_object_get(m, "p99")), "us", b, sizeof(b)),
		    num_human(json_number_value(json_object_get(m, "max")), "us",
		    c, sizeof(c)), num_human(json_number_value(json_object_get(m,
		    "count")), "count", d, sizeof(d)));
	else if (json_is_number(json_object_get(m, "value")))
		fprintf(stderr, "    %-30s %s\n", name, num_human(
		    json_number_value(json_object_get(m, "value")), json_string_value(
		    json_object_get(m, "unit")), a, sizeof(a)));
}

/*
 * The summary on stderr, after the manner of k6 and hyperfine: the
 * verdict line (the only one with -q); each check with its value and
 * bound; the headline figures (the table above, and every wait step's
 * measure); each write step's asked and achieved rate; where the report
 * is.  The engine's notes are in the report, not here.
 */
static void
print_summary(const struct run *run, const json_t *scn,
    const struct run_opts *opts)
{
	json_t *c, *st;
	size_t i;
	int w = 4;

	fprintf(stderr, "%s: %s in %.1f s (seed %llu)\n",
	    json_string_value(json_object_get(scn, "name")),
	    run->status == RUN_PASS ? "PASS" : run->status == RUN_FAIL ?
	    "FAIL" : "ERROR", (double)(run->end_ms - run->t0_ms) / 1000.0,
	    (unsigned long long)opts->seed);
	if (opts->verbose < 0)
		return;
	if (run->status == RUN_ERROR)
		fprintf(stderr, "  error: %s\n", run->error);
	json_array_foreach(run->checks, i, c)
		if ((int)strlen(json_string_value(json_object_get(c, "name"))) >
		    w)
			w = (int)strlen(json_string_value(json_object_get(c,
			    "name")));
	if (json_array_size(run->checks) > 0)
		fprintf(stderr, "  checks\n");
	json_array_foreach(run->checks, i, c) {
		const char *res = json_string_value(json_object_get(c, "result"));
		const char *unit = measures_check_unit(run->measures, c);
		const char *stat = json_string_value(json_object_get(c, "stat"));
		char v[NUM_BUF], b[NUM_BUF];

		fprintf(stderr, "    %-7s %-*s  %s%s%s = %s, bound %s %s\n", res,
		    w, json_string_value(json_object_get(c, "name")),
		    json_string_value(json_object_get(c, "metric")),
		    stat ? " " : "", stat ? stat : "",
		    json_is_number(json_object_get(c, "value")) ?
		    num_human(json_number_value(json_object_get(c, "value")),
		    unit, v, sizeof(v)) : "not measured",
		    json_string_value(json_object_get(c, "op")),
		    num_human(json_number_value(json_object_get(c, "bound")),
		    unit, b, sizeof(b)));
	}
	fprintf(stderr, "  figures\n");
	for (i = 0; i < sizeof(headline) / sizeof(headline[0]); i++)
		summary_figure(headline[i], json_object_get(run->measures,
		    headline[i]));
	json_array_foreach(json_object_get(scn, "steps"), i, st)
		if (json_is_string(json_object_get(st, "measure")))
			summary_figure(json_string_value(json_object_get(st,
			    "measure")), json_object_get(run->measures,
			    json_string_value(json_object_get(st, "measure"))));
	json_array_foreach(run->rates, i, c) {
		char label[120];

		snprintf(label, sizeof(label), "write rate (%s)",
		    json_string_value(json_object_get(c, "step")));
		if (json_number_value(json_object_get(c, "rate_asked")) > 0)
			fprintf(stderr, "    %-30s asked %g/s, achieved "
			    "%.1f/s a writer\n", label,
			    json_number_value(json_object_get(c, "rate_asked")),
			    json_number_value(json_object_get(c,
			    "rate_achieved")));
		else
			fprintf(stderr, "    %-30s as fast as it can: %.1f/s a "
			    "writer\n", label, json_number_value(
			    json_object_get(c, "rate_achieved")));
	}
	if (run->dir[0] != '\0')
		fprintf(stderr, "  report: %s/report.html (and report.md, %zu "
		    "notes)\n", run->dir, json_array_size(run->notes));
}

/*
 * A numeric flag, strictly: the whole of arg an integer in lo..hi, else a
 * message and false.
 */
static bool
int_flag(const char *flag, const char *arg, long long lo, long long hi,
    int *out)
{
	long long v;
	char msg[200];

	if (num_parse_int(arg, lo, hi, &v) == 0) {
		*out = (int)v;
		return true;
	}
	fprintf(stderr, "orchestrate: --%s: %s\n", flag, num_expected_int(arg,
	    lo, hi, msg, sizeof(msg)));
	return false;
}

/* A copy of v without its null members (the defaults nothing set). */
static json_t *
strip_nulls(const json_t *v)
{
	json_t *out, *x;
	const char *k;
	size_t i;

	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach((json_t *)v, k, x)
			if (!json_is_null(x))
				json_object_set_new(out, k, strip_nulls(x));
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, x)
			json_array_append_new(out, strip_nulls(x));
		return out;
	}
	return json_deep_copy(v);
}

/* --dry-run: the resolved scenario in its own order, without nulls, on
 * stdout; its parameters' values and help on stderr. */
static void
dry_run(const json_t *scn, const char *path)
{
	json_t *clean = strip_nulls(scn), *decl, *raw, *v;
	const char *k;

	json_dumpf(clean, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(clean);
	raw = path != NULL ? json_load_file(path, 0, NULL) : NULL;
	json_object_foreach(json_object_get(scn, "params"), k, v) {
		char *s = json_dumps(v, JSON_ENCODE_ANY);

		decl = json_object_get(json_object_get(raw, "params"), k);
		fprintf(stderr, "# %s = %s   %s\n", k, s ? s : "",
		    json_string_value(json_object_get(decl, "help")) ?
		    json_string_value(json_object_get(decl, "help")) : "");
		free(s);
	}
	json_decref(raw);
}

int
main(int argc, char **argv)
{
	struct run_opts opts;
	struct run run;
	struct sigaction sa;
	char *peersset = NULL, err[1024], peerd[PATH_MAX], path[PATH_MAX];
	bool dry = false, seed_given = false;
	const char *replay_dir = NULL, *scn_path = NULL;
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
		switch (ch) {
		case 'n': {
			int n;

			if (!int_flag("peers", optarg, 1, FLEET_MAX_PEERS, &n))
				return 2;
			xasprintf(&peersset, "peers=%d", n);
			sets = xreallocarray(sets, nsets + 1, sizeof(*sets));
			sets[nsets++] = peersset;
			break;
		}
		case 's':
			sets = xreallocarray(sets, nsets + 1, sizeof(*sets));
			sets[nsets++] = xstrdup(optarg);
			break;
		case 'S': {
			unsigned long long seed;

			if (num_parse_u64(optarg, &seed) == -1) {
				fprintf(stderr, "orchestrate: --seed: expected "
				    "an unsigned integer, got \"%s\"\n", optarg);
				return 2;
			}
			opts.seed = seed;
			seed_given = true;
			break;
		}
		case 'o':
			opts.out = optarg;
			break;
		case 'd':
			dry = true;
			break;
		case 't':
			if (!int_flag("timeout", optarg, 1, 604800,
			    &opts.timeout_s))
				return 2;
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
			if (!int_flag("hold-timeout", optarg, 1, 604800,
			    &opts.hold_timeout_s))
				return 2;
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
			if (!int_flag("watch-ms", optarg, 100, 600000,
			    &opts.watch_ms))
				return 2;
			break;
		case 'M':
			if (!int_flag("sample-ms", optarg, 0, 3600000,
			    &opts.sample_ms))
				return 2;
			if (opts.sample_ms == 0)
				opts.sample_ms = -1;	/* off */
			break;
		case 'W':
			if (!int_flag("stall-s", optarg, 0, 86400,
			    &opts.stall_s))
				return 2;
			break;
		case 'L':
			if ((opts.launch = launch_find(optarg)) == NULL) {
				fprintf(stderr, "orchestrate: --launcher: no "
				    "launcher \"%s\"; there are:\n", optarg);
				launch_list(stderr);
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
	if (optind < argc && strcmp(argv[optind], "list") == 0) {
		if (optind != argc - 1) {
			usage(stderr);
			return 2;
		}
		return catalog_list();
	}
	if (optind < argc && strcmp(argv[optind], "describe") == 0) {
		if (optind != argc - 2) {
			fprintf(stderr, "usage: orchestrate describe NAME\n");
			return 2;
		}
		return catalog_describe(argv[optind + 1]);
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
		scn_path = catalog_find(argv[optind], path, sizeof(path), err,
		    sizeof(err));
		scn = scn_path != NULL ? scenario_load(scn_path, sets, nsets,
		    err, sizeof(err)) : NULL;
		if (scn == NULL)
			fprintf(stderr, "orchestrate: %s\n", err);
	}
	if (scn == NULL)
		return 2;
	if (launch_check(opts.launch ? opts.launch : launch_default(), scn,
	    opts.keep, opts.nwraps > 0 || opts.hold != NULL, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "orchestrate: %s\n", err);
		json_decref(scn);
		return 2;
	}
	if (!seed_given)
		RAND_bytes((unsigned char *)&opts.seed, sizeof(opts.seed));
	opts.seed &= 0x7fffffffffffffffull;	/* fits a JSON integer */
	json_object_set_new(scn, "seed", json_integer((json_int_t)opts.seed));
	if (dry) {
		dry_run(scn, scn_path);
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
	print_summary(&run, scn, &opts);	/* -q: the verdict line */
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

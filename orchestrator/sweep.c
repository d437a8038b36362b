/*
 * sweep.c: one scenario across a parameter list with repeats (see
 * sweep.h).  Each run is `orchestrate SCENARIO --set KEY=V --out
 * SWEEP/runs/KEY=V/rN -q` started from this process with fork and exec of
 * /proc/self/exe, waited for, and read back from rN/latest/report.json.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "compare.h"
#include "jdump.h"
#include "measures.h"
#include "num.h"
#include "page.h"
#include "sweep.h"
#include "xmalloc.h"

/* The statistics of a latency measure a sweep summarises and charts. */
static const char *const lat_stats[] = { "p50", "p99", NULL };

/* The (measure, stat) rows of every report of every value, in name
 * order: {"name stat": [name, stat, unit]}. */
static json_t *
row_names(const json_t *runs)
{
	json_t *names = json_object(), *pt, *r, *m;
	size_t i, j;
	const char *k;

	json_array_foreach(runs, i, pt)
		json_array_foreach(json_object_get(pt, "reports"), j, r)
			json_object_foreach(json_object_get(r, "measures"), k, m) {
				const char *unit = json_string_value(
				    json_object_get(m, "unit"));
				char key[300];

				unit = unit != NULL ? unit : measures_shown(k)->unit;
				if (json_object_get(m, "p50") == NULL) {
					json_object_set_new(names, k, json_pack(
					    "[s, s, s]", k, "value", unit));
					continue;
				}
				for (size_t s = 0; lat_stats[s] != NULL; s++) {
					snprintf(key, sizeof(key), "%s %s", k,
					    lat_stats[s]);
					json_object_set_new(names, key, json_pack(
					    "[s, s, s]", k, lat_stats[s], unit));
				}
			}
	return names;
}

json_t *
sweep_build(const char *scenario, const char *key, const json_t *runs,
    int repeat)
{
	json_t *names = row_names(runs), *points = json_array(), *pt, *n, *r;
	size_t i, j;
	const char *k;

	json_array_foreach(runs, i, pt) {
		const json_t *reps = json_object_get(pt, "reports");
		json_t *ms = json_object(), *p;
		size_t passed = 0, nruns = json_array_size(json_object_get(pt,
		    "runs"));

		json_array_foreach(reps, j, r)
			if (strcmp(json_string_value(json_object_get(r, "status")) ?
			    json_string_value(json_object_get(r, "status")) : "",
			    "pass") == 0)
				passed++;
		json_object_foreach(names, k, n) {
			double med, lo, hi;
			size_t cnt;

			if (!compare_stat(reps, json_string_value(json_array_get(
			    n, 0)), json_string_value(json_array_get(n, 1)), &med,
			    &lo, &hi, &cnt))
				continue;
			json_object_set_new(ms, k, json_pack("{s:O, s:O, s:O, "
			    "s:f, s:f, s:f, s:I}", "measure", json_array_get(n, 0),
			    "stat", json_array_get(n, 1), "unit",
			    json_array_get(n, 2), "median", med, "min", lo, "max",
			    hi, "runs", (json_int_t)cnt));
		}
		p = json_pack("{s:O, s:O, s:I, s:I, s:f, s:o}", "value",
		    json_object_get(pt, "value"), "runs", json_object_get(pt,
		    "runs"), "passed", (json_int_t)passed, "count",
		    (json_int_t)nruns, "success_rate", nruns ? (double)passed /
		    (double)nruns : 0.0, "measures", ms);
		json_array_append_new(points, p);
	}
	json_decref(names);
	return json_pack("{s:s, s:s, s:i, s:o}", "scenario", scenario, "key",
	    key, "repeat", repeat, "points", points);
}

/* Every value a number: the x axis is numeric (log when they span a
 * decade or more); otherwise the values are categories. */
static bool
numeric_values(const json_t *points, bool *xlog)
{
	double lo = INFINITY, hi = -INFINITY;
	json_t *p;
	size_t i;

	json_array_foreach(points, i, p) {
		json_t *v = json_object_get(p, "value");

		if (!json_is_number(v))
			return false;
		lo = fmin(lo, json_number_value(v));
		hi = fmax(hi, json_number_value(v));
	}
	*xlog = lo > 0 && hi / lo >= 10;
	return json_array_size(points) > 0;
}

static void
value_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_number(v))
		num_exact_json(v, buf, len);
	else {
		char *s = json_dumps(v, JSON_ENCODE_ANY);

		snprintf(buf, len, "%s", s != NULL ? s : "?");
		free(s);
	}
}

static json_t *
all_rows(const json_t *sw)
{
	json_t *rows = json_object(), *p, *m;
	size_t i;
	const char *k;

	json_array_foreach(json_object_get(sw, "points"), i, p)
		json_object_foreach(json_object_get(p, "measures"), k, m)
			json_object_set(rows, k, m);
	return rows;
}

static void
write_md(FILE *fp, const json_t *sw)
{
	const json_t *points = json_object_get(sw, "points");
	const char *key = json_string_value(json_object_get(sw, "key"));
	json_t *rows = all_rows(sw), *p, *m;
	char buf[NUM_BUF], a[NUM_BUF], b[NUM_BUF];
	const char *k;
	size_t i;

	fprintf(fp, "# sweep of %s over %s (%d runs per value)\n\n| %s |",
	    json_string_value(json_object_get(sw, "scenario")), key,
	    (int)json_integer_value(json_object_get(sw, "repeat")), key);
	json_array_foreach(points, i, p) {
		value_text(json_object_get(p, "value"), buf, sizeof(buf));
		fprintf(fp, " %s |", buf);
	}
	fprintf(fp, "\n|---|");
	json_array_foreach(points, i, p)
		fprintf(fp, "--:|");
	fprintf(fp, "\n| **passed** |");
	json_array_foreach(points, i, p)
		fprintf(fp, " %lld/%lld |", (long long)json_integer_value(
		    json_object_get(p, "passed")), (long long)json_integer_value(
		    json_object_get(p, "count")));
	fprintf(fp, "\n");
	json_object_foreach(rows, k, m) {
		const char *unit = json_string_value(json_object_get(m, "unit"));

		fprintf(fp, "| %s |", k);
		json_array_foreach(points, i, p) {
			json_t *x = json_object_get(json_object_get(p, "measures"),
			    k);
			double lo = json_number_value(json_object_get(x, "min"));
			double hi = json_number_value(json_object_get(x, "max"));

			if (x == NULL) {
				fprintf(fp, " — |");
				continue;
			}
			fprintf(fp, " %s", num_human(json_number_value(
			    json_object_get(x, "median")), unit, buf,
			    sizeof(buf)));
			if (lo != hi)
				fprintf(fp, " (%s – %s)", num_human(lo, unit, a,
				    sizeof(a)), num_human(hi, unit, b, sizeof(b)));
			fprintf(fp, " |");
		}
		fprintf(fp, "\n");
	}
	fprintf(fp, "\nEach cell is the median over the value's runs (min – "
	    "max when they differ); passed is the runs that passed out of "
	    "those made.  Every run's own bundle is under `runs/`; "
	    "docs/report.md says what each measure means.  Charts: "
	    "[sweep.html](sweep.html).\n");
	json_decref(rows);
}

static void
write_csv(FILE *fp, const json_t *sw)
{
	const char *key = json_string_value(json_object_get(sw, "key"));
	json_t *p, *m;
	size_t i;
	const char *k;
	char v[NUM_BUF], a[NUM_BUF], b[NUM_BUF], c[NUM_BUF];

	fprintf(fp, "param,value,passed,runs,measure,stat,median,min,max,unit"
	    "\r\n");
	json_array_foreach(json_object_get(sw, "points"), i, p) {
		value_text(json_object_get(p, "value"), v, sizeof(v));
		json_object_foreach(json_object_get(p, "measures"), k, m)
			fprintf(fp, "%s,%s,%lld,%lld,%s,%s,%s,%s,%s,%s\r\n", key,
			    v, (long long)json_integer_value(json_object_get(p,
			    "passed")), (long long)json_integer_value(
			    json_object_get(p, "count")), json_string_value(
			    json_object_get(m, "measure")), json_string_value(
			    json_object_get(m, "stat")), num_exact_json(
			    json_object_get(m, "median"), a, sizeof(a)),
			    num_exact_json(json_object_get(m, "min"), b,
			    sizeof(b)), num_exact_json(json_object_get(m, "max"),
			    c, sizeof(c)), json_string_value(json_object_get(m,
			    "unit")));
	}
}

static void
write_html(FILE *fp, const json_t *sw)
{
	const json_t *points = json_object_get(sw, "points");
	const char *key = json_string_value(json_object_get(sw, "key"));
	size_t np = json_array_size(points), i;
	double *x = xcalloc(np + 1, sizeof(*x)), *y = xcalloc(np + 1,
	    sizeof(*y)), *lo = xcalloc(np + 1, sizeof(*lo)), *hi = xcalloc(np +
	    1, sizeof(*hi));
	char (*cat)[NUM_BUF] = xcalloc(np + 1, sizeof(*cat));
	const char **cats = xcalloc(np + 1, sizeof(*cats));
	json_t *rows = all_rows(sw), *p, *m;
	char title[400];
	const char *k;
	bool xlog = false, num = numeric_values(points, &xlog);

	snprintf(title, sizeof(title), "sweep of %s over %s", json_string_value(
	    json_object_get(sw, "scenario")), key);
	page_start(fp, title);
	fputs("<h1>", fp);
	page_esc(fp, title);
	fprintf(fp, "</h1>\n<p>%d runs per value; each point is the median of "
	    "a value's runs, its bar their min-max.  Every run's own bundle "
	    "(report.html) is under runs/.</p>\n", (int)json_integer_value(
	    json_object_get(sw, "repeat")));
	json_array_foreach(points, i, p) {
		value_text(json_object_get(p, "value"), cat[i], sizeof(cat[i]));
		cats[i] = cat[i];
		x[i] = num ? json_number_value(json_object_get(p, "value")) :
		    (double)i;
		y[i] = 100 * json_number_value(json_object_get(p,
		    "success_rate"));
	}
	{
		struct page_series s = { .label = "passed %", .x = x, .y = y,
		    .n = np };
		struct page_chart c = { .id = "sweep:success_rate", .title =
		    "success rate (runs that passed)", .xlabel = key, .xlog =
		    xlog, .ylabel = "% of runs", .yunit = "count", .yzero = true,
		    .xcats = num ? NULL : cats, .ncats = np, .series = &s,
		    .nseries = 1 };

		page_chart(fp, &c);
	}
	json_object_foreach(rows, k, m) {
		const char *unit = json_string_value(json_object_get(m, "unit"));
		size_t n = 0;
		char id[400];

		json_array_foreach(points, i, p) {
			json_t *v = json_object_get(json_object_get(p,
			    "measures"), k);

			if (v == NULL)
				continue;
			x[n] = num ? json_number_value(json_object_get(p,
			    "value")) : (double)i;
			y[n] = json_number_value(json_object_get(v, "median"));
			lo[n] = json_number_value(json_object_get(v, "min"));
			hi[n] = json_number_value(json_object_get(v, "max"));
			n++;
		}
		{
			struct page_series s = { .label = "median", .x = x,
			    .y = y, .n = n, .ylo = lo, .yhi = hi };
			struct page_chart c = { .id = id, .title = k,
			    .xlabel = key, .xlog = xlog, .ylabel = k,
			    .yunit = unit, .yzero = true, .xcats = num ? NULL :
			    cats, .ncats = np, .series = &s, .nseries = 1 };

			snprintf(id, sizeof(id), "sweep:%s", k);
			page_chart(fp, &c);
		}
	}
	page_end(fp);
	json_decref(rows);
	free(x);
	free(y);
	free(lo);
	free(hi);
	free(cat);
	free(cats);
}

int
sweep_write(const json_t *sw, const char *dir)
{
	static const struct {
		const char *name;
		void (*fn)(FILE *, const json_t *);
	} files[] = {
		{ "sweep.md", write_md },
		{ "sweep.csv", write_csv },
		{ "sweep.html", write_html },
	};
	char path[1100];
	int rc = 0;

	snprintf(path, sizeof(path), "%s/sweep.json", dir);
	if (jdump_file(sw, path) != 0)
		rc = -1;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *fp;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if ((fp = fopen(path, "w")) == NULL)
			return -1;
		files[i].fn(fp, sw);
		if (fclose(fp) != 0)
			rc = -1;
	}
	return rc;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: orchestrate sweep SCENARIO --set KEY=V1,V2,... [--repeat K]\n"
"                   [--set KEY=VALUE]... [--seed N] [--out DIR]\n"
"                   [--timeout S] [--peerd PATH]\n"
"\n"
"  --set KEY=V1,V2    the parameter swept (exactly one --set has a list);\n"
"                     --peers V1,V2 is --set peers=V1,V2\n"
"  --set KEY=VALUE    a parameter fixed for every run\n"
"  --repeat K         runs per value (default 1)\n"
"  --seed N           run r of every value gets seed N+r (default: each\n"
"                     run its own random seed)\n"
"  --out DIR          where sweep-<scenario>-<UTC stamp>/ is made\n"
"                     (default results)\n"
"\n"
"Writes sweep.md, sweep.json, sweep.csv and sweep.html, and every run's\n"
"bundle under runs/KEY=V/rN/; see docs/report.md.\n"
"exit status: 0 every run passed, 1 a run failed, 2 a run could not\n"
"complete or a usage error.\n");
}

/* One child run; its exit status (2 when it could not be started). */
static int
run_child(char **args)
{
	pid_t pid = fork();
	int st;

	if (pid == -1)
		return 2;
	if (pid == 0) {
		execv("/proc/self/exe", args);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* "peers=4,8,16" into "peers" and ["4", "8", "16"] (strings: the child
 * parses them as the scenario's parameter types). */
static bool
split_list(const char *set, char *key, size_t klen, json_t *vals)
{
	const char *eq = strchr(set, '=');
	char *list, *save = NULL;

	if (eq == NULL || eq == set || (size_t)(eq - set) >= klen)
		return false;
	snprintf(key, klen, "%.*s", (int)(eq - set), set);
	list = xstrdup(eq + 1);
	for (char *t = strtok_r(list, ",", &save); t != NULL;
	    t = strtok_r(NULL, ",", &save))
		json_array_append_new(vals, json_string(t));
	free(list);
	return json_array_size(vals) > 0;
}

/* A value for the summary: a number when it reads as one. */
static json_t *
value_json(const char *s)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno == 0 && end != s && *end == '\0' && isfinite(d)) {
		if (d == floor(d) && fabs(d) < 9e15)
			return json_integer((json_int_t)d);
		return json_real(d);
	}
	return json_string(s);
}

int
sweep_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "set", required_argument, NULL, 's' },
		{ "peers", required_argument, NULL, 'n' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 'S' },
		{ "out", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "peerd", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = "results", *seed = NULL, *scn;
	char key[128] = "", dir[1100], stamp[32], *sweep_set = NULL;
	char **pass = NULL;
	size_t npass = 0;
	json_t *vals = json_array(), *runs = json_array(), *sw;
	int ch, repeat = 1, rc = 0;
	struct sigaction sa;
	struct tm tm;
	time_t now;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *tmp = NULL;

		switch (ch) {
		case 'n':
			xasprintf(&tmp, "peers=%s", optarg);
			/* FALLTHROUGH */
		case 's':
			if (tmp == NULL)
				tmp = xstrdup(optarg);
			if (strchr(tmp, ',') != NULL) {
				if (sweep_set != NULL) {
					fprintf(stderr, "orchestrate sweep: one "
					    "parameter at a time (%s and %s)\n",
					    sweep_set, tmp);
					free(tmp);
					rc = 2;
					goto done;
				}
				sweep_set = tmp;
				break;
			}
			pass = xreallocarray(pass, npass + 2, sizeof(*pass));
			pass[npass++] = xstrdup("--set");
			pass[npass++] = tmp;
			break;
		case 'r':
			repeat = atoi(optarg);
			if (repeat < 1 || repeat > 1000) {
				fprintf(stderr, "orchestrate sweep: --repeat: "
				    "expected 1 to 1000, got \"%s\"\n", optarg);
				rc = 2;
				goto done;
			}
			break;
		case 'S': seed = optarg; break;
		case 'o': out = optarg; break;
		case 't':
		case 'p':
			pass = xreallocarray(pass, npass + 2, sizeof(*pass));
			pass[npass++] = xstrdup(ch == 't' ? "--timeout" :
			    "--peerd");
			pass[npass++] = xstrdup(optarg);
			break;
		case 'h':
			usage(stdout);
			goto done;
		default:
			usage(stderr);
			rc = 2;
			goto done;
		}
	}
	if (optind != argc - 1 || sweep_set == NULL) {
		if (optind == argc - 1)
			fprintf(stderr, "orchestrate sweep: no --set KEY=V1,V2,... "
			    "(the parameter to sweep)\n");
		usage(stderr);
		rc = 2;
		goto done;
	}
	if (!split_list(sweep_set, key, sizeof(key), vals)) {
		fprintf(stderr, "orchestrate sweep: --set: expected "
		    "KEY=V1,V2,..., got \"%s\"\n", sweep_set);
		rc = 2;
		goto done;
	}
	if (seed != NULL) {
		char *end;

		errno = 0;
		(void)strtoull(seed, &end, 10);
		if (errno != 0 || *end != '\0' || end == seed) {
			fprintf(stderr, "orchestrate sweep: --seed: expected an "
			    "unsigned integer, got \"%s\"\n", seed);
			rc = 2;
			goto done;
		}
	}
	scn = argv[optind];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	mkdir(out, 0755);
	{
		const char *base = strrchr(scn, '/') ? strrchr(scn, '/') + 1 : scn;
		size_t bl = strcspn(base, ".");
		char first[1000];

		snprintf(first, sizeof(first), "%s/sweep-%.*s-%s", out, (int)bl,
		    base, stamp);
		snprintf(dir, sizeof(dir), "%s", first);
		for (int n = 2; mkdir(dir, 0755) == -1; n++) {
			if (errno != EEXIST || n > 99) {
				fprintf(stderr, "orchestrate sweep: %s: %s\n", dir,
				    strerror(errno));
				rc = 2;
				goto done;
			}
			snprintf(dir, sizeof(dir), "%s-%d", first, n);
		}
	}
	{
		json_t *v;
		size_t vi;
		char runs_dir[1200];

		snprintf(runs_dir, sizeof(runs_dir), "%s/runs", dir);
		mkdir(runs_dir, 0755);
		json_array_foreach(vals, vi, v) {
			json_t *reps = json_array(), *rows = json_array();

			for (int r = 0; r < repeat && !interrupted; r++) {
				char vdir[1300], rdir[1400], ldir[1500],
				    setarg[400], sd[32], err[1700];
				char **args = xcalloc(npass + 16, sizeof(*args));
				size_t na = 0;
				json_t *rep;
				int ex;

				snprintf(vdir, sizeof(vdir), "%s/%s=%s", runs_dir,
				    key, json_string_value(v));
				mkdir(vdir, 0755);
				snprintf(rdir, sizeof(rdir), "%s/r%d", vdir, r + 1);
				snprintf(setarg, sizeof(setarg), "%s=%s", key,
				    json_string_value(v));
				args[na++] = (char *)"orchestrate";
				args[na++] = (char *)scn;
				args[na++] = (char *)"--set";
				args[na++] = setarg;
				for (size_t i = 0; i < npass; i++)
					args[na++] = pass[i];
				if (seed != NULL) {
					snprintf(sd, sizeof(sd), "%llu",
					    strtoull(seed, NULL, 10) +
					    (unsigned long long)r);
					args[na++] = (char *)"--seed";
					args[na++] = sd;
				}
				args[na++] = (char *)"--out";
				args[na++] = rdir;
				args[na++] = (char *)"-q";
				args[na] = NULL;
				fprintf(stderr, "sweep: %s=%s run %d/%d\n", key,
				    json_string_value(v), r + 1, repeat);
				ex = run_child(args);
				free(args);
				snprintf(ldir, sizeof(ldir), "%s/latest", rdir);
				rep = bundle_report(ldir, err, sizeof(err));
				json_array_append_new(rows, json_pack("{s:s, s:i, "
				    "s:s}", "dir", rdir, "exit", ex, "status",
				    rep != NULL && json_is_string(json_object_get(
				    rep, "status")) ? json_string_value(
				    json_object_get(rep, "status")) : "error"));
				if (rep != NULL)
					json_array_append_new(reps, rep);
				else
					fprintf(stderr, "sweep: %s\n", err);
				if (ex > rc)
					rc = ex > 2 ? 2 : ex;
			}
			json_array_append_new(runs, json_pack("{s:o, s:o, s:o}",
			    "value", value_json(json_string_value(v)), "reports",
			    reps, "runs", rows));
		}
	}
	if (interrupted)
		rc = 2;
	sw = sweep_build(scn, key, runs, repeat);
	if (sweep_write(sw, dir) != 0) {
		fprintf(stderr, "orchestrate sweep: cannot write into %s\n", dir);
		rc = 2;
	} else {
		json_t *p;
		size_t i;

		json_array_foreach(json_object_get(sw, "points"), i, p) {
			char b[NUM_BUF];

			value_text(json_object_get(p, "value"), b, sizeof(b));
			fprintf(stderr, "  %s=%s: %lld/%lld passed\n", key, b,
			    (long long)json_integer_value(json_object_get(p,
			    "passed")), (long long)json_integer_value(
			    json_object_get(p, "count")));
		}
		fprintf(stderr, "  report: %s/sweep.md\n", dir);
	}
	json_decref(sw);
done:
	for (size_t i = 0; i < npass; i++)
		free(pass[i]);
	free(pass);
	free(sweep_set);
	json_decref(vals);
	json_decref(runs);
	return rc;
}

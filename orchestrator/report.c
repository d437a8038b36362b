/*
 * report.c: writes the bundle's report files from a finished run (see
 * report.h).  report.md reads well on its own: scenario and host first,
 * a table per latency measure, the other measures (human units, what each
 * means and which way is better, from measures.h), the step table, the
 * per-peer table, the checks with bounds, then notes on faults, stalls
 * and crashes.  report.json and report.csv carry the exact values
 * (jdump.c, num.c); report.html is html.c's.
 */
#include <sys/utsname.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <event2/event.h>
#include <cbor/configuration.h>
#include <xxhash.h>

#include "bundle.h"
#include "fleet.h"
#include "html.h"
#include "jdump.h"
#include "log.h"
#include "measures.h"
#include "num.h"
#include "report.h"
#include "run.h"
#include "version.h"
#include "xmalloc.h"

/* libcbor has no run-time version call: the headers' version. */
#define STR_(x)	#x
#define STR(x)	STR_(x)
#define CBOR_MAJOR_VERSION_TEXT STR(CBOR_MAJOR_VERSION) "." \
	STR(CBOR_MINOR_VERSION) "." STR(CBOR_PATCH_VERSION) " (headers)"

static const char *
status_name(enum run_status s)
{
	return s == RUN_PASS ? "pass" : s == RUN_FAIL ? "fail" : "error";
}

static json_t *
host_json(void)
{
	struct utsname u;
	char host[256] = "", cpu[256] = "unknown";
	FILE *fp;
	char line[512];

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	if ((fp = fopen("/proc/cpuinfo", "r")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL)
			if (strncmp(line, "model name", 10) == 0) {
				char *c = strchr(line, ':');

				if (c != NULL) {
					snprintf(cpu, sizeof(cpu), "%s", c + 2);
					cpu[strcspn(cpu, "\n")] = '\0';
				}
				break;
			}
		fclose(fp);
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "hostname", host,
	    "kernel", u.release, "machine", u.machine, "os", u.sysname,
	    "cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "cpu", cpu);
}

json_t *
report_build_json(void)
{
	char xxh[32];
	unsigned x = XXH_versionNumber();

	snprintf(xxh, sizeof(xxh), "%u.%u.%u", x / 10000, x / 100 % 100,
	    x % 100);
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}",
	    "version", VERSION, "git", version_sha, "libraries",
	    "openssl", OpenSSL_version(OPENSSL_VERSION),
	    "libevent", event_get_version(),
	    "jansson", jansson_version_str(),
	    "libcbor", CBOR_MAJOR_VERSION_TEXT,
	    "xxhash", xxh);
}

json_t *
report_json(const struct run *r)
{
	json_t *peers = json_deep_copy(r->peer_rows), *j;

	j = json_pack("{s:O, s:O, s:I, s:s, s:s, s:O, s:O, s:o, s:O, s:O, "
	    "s:o, s:s, s:I}",
	    "scenario", json_object_get(r->scn, "name"),
	    "params", json_object_get(r->scn, "params"),
	    "seed", (json_int_t)r->opts.seed,
	    "status", status_name(r->status),
	    "error", r->error,
	    "measures", r->measures,
	    "checks", r->checks,
	    "peers", peers,
	    "notes", r->notes,
	    "description", json_object_get(r->scn, "description"),
	    "host", host_json(),
	    "run_dir", r->dir,
	    "wall_ms", (json_int_t)(r->end_ms - r->t0_ms));
	json_object_set_new(j, "build", report_build_json());
	if (r->swarm_cid[0] != '\0')
		json_object_set_new(j, "swarm", json_pack("{s:s, s:s, s:f, s:s, "
		    "s:O}", "cid", r->swarm_cid, "sha256", r->swarm_sha,
		    "size", r->swarm_size, "publisher",
		    r->fleet.peers[r->swarm_publisher]->name, "fetchers",
		    r->swarm_rows));
	return j;
}

static void
write_run_json(const struct run *r)
{
	char path[700], *line;
	json_t *cmds = json_array(), *argv = json_array(), *j;

	for (int i = 0; i < r->fleet.npeers; i++) {
		const struct peer *p = r->fleet.peers[i];

		line = fleet_cmdline(p);
		json_array_append_new(cmds, json_pack(
		    "{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s}",
		    "name", p->name, "dir", p->dir, "control", p->control,
		    "peer_id", p->peer_id, "cmdline", line,
		    "pid", (json_int_t)p->pid,
		    "peerd_pid", (json_int_t)p->peerd_pid,
		    "state", fleet_state_name(p->state)));
		free(line);
	}
	for (int i = 0; i < r->opts.argc; i++)
		json_array_append_new(argv, json_string(r->opts.argv[i]));
	j = json_pack("{s:o, s:o, s:s, s:I, s:o, s:o}",
	    "host", host_json(), "orchestrate_argv", argv,
	    "peerd", r->opts.peerd, "seed", (json_int_t)r->opts.seed,
	    "peers", cmds, "build", report_build_json());
	snprintf(path, sizeof(path), "%s/run.json", r->dir);
	if (jdump_file(j, path) != 0)
		log_warnx("cannot write %s", path);
	json_decref(j);
}

/* A number for people in unit (num_human); "—" when there is none. */
static void
md_human(FILE *fp, const json_t *v, const char *unit)
{
	char buf[NUM_BUF];

	if (json_is_number(v))
		fputs(num_human(json_number_value(v), unit, buf, sizeof(buf)), fp);
	else
		fputs("—", fp);
}

/* The step table: what ran when, for how long, and how it ended. */
static void
md_steps(FILE *fp, const char *dir)
{
	json_t *tl = bundle_ndjson(dir, "timeline.ndjson");
	json_t *steps = bundle_steps(tl), *st;
	size_t i;

	fprintf(fp, "## Steps\n\n");
	if (json_array_size(steps) == 0)
		fprintf(fp, "No step started.\n\n");
	else
		fprintf(fp, "| # | step | action | start | duration | outcome |\n"
		    "|--:|---|---|--:|--:|---|\n");
	json_array_foreach(steps, i, st) {
		json_t *end = json_object_get(st, "end_ms");
		double t0 = json_number_value(json_object_get(st, "start_ms"));
		char a[NUM_BUF], d[NUM_BUF];

		num_human(t0, "ms", a, sizeof(a));
		if (json_is_number(end))
			num_human(json_number_value(end) - t0, "ms", d, sizeof(d));
		fprintf(fp, "| %zu | %s | %s | %s | %s | %s |\n", i,
		    json_string_value(json_object_get(st, "name")),
		    json_string_value(json_object_get(st, "action")), a,
		    json_is_number(end) ? d : "—", !json_is_number(end) ?
		    "**did not end**" : json_is_true(json_object_get(st, "ok")) ?
		    "ok" : "**failed**");
	}
	fprintf(fp, "\n");
	json_decref(steps);
	json_decref(tl);
}

static void
write_md(const struct run *r)
{
	char path[700], buf[NUM_BUF];
	static const char *const lat_keys[] = { "count", "p50", "p90", "p99",
	    "p999", "max", NULL };
	static const char *const peer_keys[] = { "frames_in", "frames_out",
	    NULL };
	static const char *const bytes_keys[] = { "bytes_in", "bytes_out",
	    NULL };
	FILE *fp;
	json_t *v, *host = host_json();
	const char *k;
	size_t i;
	bool any;

	snprintf(path, sizeof(path), "%s/report.md", r->dir);
	if ((fp = fopen(path, "w")) == NULL)
		return;
	fprintf(fp, "# %s — %s\n\n",
	    json_string_value(json_object_get(r->scn, "name")),
	    r->status == RUN_PASS ? "PASS" : r->status == RUN_FAIL ? "FAIL" :
	    "ERROR");
	fprintf(fp, "%s\n\n", json_string_value(json_object_get(r->scn,
	    "description")));
	if (r->status == RUN_ERROR)
		fprintf(fp, "**The run could not complete:** %s\n\n", r->error);
	fprintf(fp, "| | |\n|---|---|\n");
	fprintf(fp, "| host | %s, %s %s, %lld CPUs (%s) |\n",
	    json_string_value(json_object_get(host, "hostname")),
	    json_string_value(json_object_get(host, "os")),
	    json_string_value(json_object_get(host, "kernel")),
	    (long long)json_integer_value(json_object_get(host, "cpus")),
	    json_string_value(json_object_get(host, "cpu")));
	fprintf(fp, "| build | %s %s (git %s) |\n", "orchestrate", VERSION,
	    version_sha);
	fprintf(fp, "| seed | %llu |\n", (unsigned long long)r->opts.seed);
	fprintf(fp, "| wall time | %s |\n", num_human((double)(r->end_ms -
	    r->t0_ms), "ms", buf, sizeof(buf)));
	fprintf(fp, "| params |");
	json_object_foreach(json_object_get(r->scn, "params"), k, v) {
		char *s = json_dumps(v, JSON_ENCODE_ANY);

		fprintf(fp, " %s=%s", k, s);
		free(s);
	}
	fprintf(fp, " |\n\nThe raw values are in `report.json` and "
	    "`report.csv`; charts of every sample are in "
	    "[report.html](report.html).  Every file and measure of this "
	    "bundle is described in `docs/report.md` of the source tree "
	    "(installed as `share/doc/fleet-lab/report.md`).\n\n");
	json_decref(host);

	fprintf(fp, "## Latency\n\n");
	any = false;
	json_object_foreach(r->measures, k, v) {
		const struct measure_info *mi = measures_shown(k);

		if (json_object_get(v, "p50") == NULL)
			continue;
		if (!any)
			fprintf(fp, "| measure | count | p50 | p90 | p99 | p99.9 "
			    "| max | what (lower is better) |\n"
			    "|---|--:|--:|--:|--:|--:|--:|---|\n");
		any = true;
		fprintf(fp, "| %s | ", k);
		for (const char *const *kk = lat_keys; *kk != NULL; kk++) {
			md_human(fp, json_object_get(v, *kk), strcmp(*kk,
			    "count") == 0 ? "count" : "us");
			fputs(" | ", fp);
		}
		fprintf(fp, "%s |\n", mi->meaning);
	}
	if (!any)
		fprintf(fp, "No latency was recorded.\n");
	fprintf(fp, "\nPercentiles come from the histograms of every peer "
	    "merged (at most 1%% relative error), never from averaged "
	    "per-peer percentiles.\n\n## Measures\n\n| measure | value | better "
	    "| what |\n|---|--:|---|---|\n");
	json_object_foreach(r->measures, k, v) {
		const struct measure_info *mi = measures_shown(k);

		if (json_object_get(v, "p50") != NULL)
			continue;
		fprintf(fp, "| %s | ", k);
		md_human(fp, json_object_get(v, "value"), json_string_value(
		    json_object_get(v, "unit")));
		fprintf(fp, " | %s | %s |\n", mi->better == MEASURE_LOWER ?
		    "lower" : mi->better == MEASURE_HIGHER ? "higher" : "—",
		    mi->meaning);
	}
	fprintf(fp, "\n");
	md_steps(fp, r->dir);
	if (r->swarm_cid[0] != '\0') {
		fprintf(fp, "## Content swarm\n\n%s published by %s "
		    "(cid `%.16s...`, SHA-256 `%.16s...`).\n\n| fetcher | "
		    "verified | from the seeder | from the others | time | bad "
		    "pieces |\n|---|---|--:|--:|--:|--:|\n", num_human(
		    r->swarm_size, "bytes", buf, sizeof(buf)),
		    r->fleet.peers[r->swarm_publisher]->name, r->swarm_cid,
		    r->swarm_sha);
		json_array_foreach(r->swarm_rows, i, v) {
			fprintf(fp, "| %s | %s | ", json_string_value(
			    json_object_get(v, "name")), json_is_true(
			    json_object_get(v, "verified")) ? "yes" : "**no**");
			md_human(fp, json_object_get(v, "bytes_from_seeder"),
			    "bytes");
			fputs(" | ", fp);
			md_human(fp, json_object_get(v, "bytes_from_others"),
			    "bytes");
			fputs(" | ", fp);
			md_human(fp, json_is_number(json_object_get(v, "seconds")) ?
			    json_object_get(v, "seconds") : NULL, "s");
			fputs(" | ", fp);
			md_human(fp, json_object_get(v, "bad_pieces"), "count");
			fputs(" |\n", fp);
		}
		fprintf(fp, "\n");
	}
	fprintf(fp, "## Peers\n\n| peer | pid | state | frames in | frames "
	    "out | bytes in | bytes out | CPU s | max RSS |\n"
	    "|---|--:|---|--:|--:|--:|--:|--:|--:|\n");
	json_array_foreach(r->peer_rows, i, v) {
		fprintf(fp, "| %s | ", json_string_value(json_object_get(v,
		    "name")));
		md_human(fp, json_object_get(v, "pid"), "count");
		fprintf(fp, " | %s | ", json_string_value(json_object_get(v,
		    "state")));
		for (const char *const *kk = peer_keys; *kk != NULL; kk++) {
			md_human(fp, json_object_get(v, *kk), "count");
			fputs(" | ", fp);
		}
		for (const char *const *kk = bytes_keys; *kk != NULL; kk++) {
			md_human(fp, json_object_get(v, *kk), "bytes");
			fputs(" | ", fp);
		}
		md_human(fp, json_object_get(v, "cpu_s"), "s");
		fputs(" | ", fp);
		md_human(fp, json_object_get(v, "max_rss_kib"), "KiB");
		fputs(" |\n", fp);
	}
	fprintf(fp, "\nA peer that was killed or crashed has no figures: its "
	    "counters died with it.\n\n## Checks\n\n");
	if (json_array_size(r->checks) == 0)
		fprintf(fp, "The scenario has no checks.\n");
	else
		fprintf(fp, "| check | measure | value | bound | result |\n"
		    "|---|---|--:|---|---|\n");
	json_array_foreach(r->checks, i, v) {
		const char *stat = json_string_value(json_object_get(v, "stat"));
		const char *metric = json_string_value(json_object_get(v,
		    "metric"));
		const char *unit = measures_check_unit(r->measures, v);

		fprintf(fp, "| %s | %s%s%s | ", json_string_value(
		    json_object_get(v, "name")), metric, stat ? " " : "",
		    stat ? stat : "");
		md_human(fp, json_object_get(v, "value"), unit);
		fprintf(fp, " | %s ", json_string_value(json_object_get(v,
		    "op")));
		md_human(fp, json_object_get(v, "bound"), unit);
		fprintf(fp, " | **%s** |\n", json_string_value(
		    json_object_get(v, "result")));
	}
	fprintf(fp, "\nUNKNOWN means the measure could not be taken; it is "
	    "never a pass.\n\n## Notes\n\n");
	if (json_array_size(r->notes) == 0 && r->status != RUN_ERROR)
		fprintf(fp, "No faults, stalls or crashes were noted.\n");
	json_array_foreach(r->notes, i, v)
		fprintf(fp, "- %s\n", json_string_value(v));
	fprintf(fp, "\nEvery action, fault, write acknowledged and take won is "
	    "in `timeline.ndjson`; each peer's command line is in `run.json`, "
	    "so any one of them can be started again by hand (see "
	    "docs/debugging.md).\n");
	fclose(fp);
}

/* One CSV field, quoted when RFC 4180 asks (a comma, a quote, a line
 * break), quotes doubled. */
static void
csv_field(FILE *fp, const char *s, bool last)
{
	if (strpbrk(s, ",\"\r\n") != NULL) {
		fputc('"', fp);
		for (; *s != '\0'; s++) {
			if (*s == '"')
				fputc('"', fp);
			fputc(*s, fp);
		}
		fputc('"', fp);
	} else
		fputs(s, fp);
	fputs(last ? "\r\n" : ",", fp);
}

/* report.csv's header line. */
static void
csv_header(FILE *fp)
{
	static const char *const cols[] = { "run", "scenario", "seed",
	    "status", "measure", "stat", "value", "unit", NULL };

	for (size_t i = 0; cols[i] != NULL; i++)
		csv_field(fp, cols[i], cols[i + 1] == NULL);
}

/* The rows of one report.json object: one per measure and stat. */
static void
csv_rows(FILE *fp, const json_t *report)
{
	static const char *const lat_keys[] = { "count", "p50", "p90", "p99",
	    "p999", "max", NULL };
	const char *run = json_string_value(json_object_get(report, "run_dir"));
	const char *scn = json_string_value(json_object_get(report, "scenario"));
	const char *status = json_string_value(json_object_get(report,
	    "status"));
	const char *k, *base;
	char seed[NUM_BUF], val[NUM_BUF];
	json_t *v;

	run = run != NULL ? run : "";
	base = strrchr(run, '/') != NULL ? strrchr(run, '/') + 1 : run;
	num_exact_json(json_object_get(report, "seed"), seed, sizeof(seed));
	json_object_foreach(json_object_get(report, "measures"), k, v) {
		const char *unit = json_string_value(json_object_get(v, "unit"));
		bool lat = json_object_get(v, "p50") != NULL;

		for (const char *const *s = lat ? lat_keys : NULL; ; s++) {
			const char *stat = lat ? *s : "value";

			if (stat == NULL)
				break;
			csv_field(fp, base, false);
			csv_field(fp, scn != NULL ? scn : "", false);
			csv_field(fp, seed, false);
			csv_field(fp, status != NULL ? status : "", false);
			csv_field(fp, k, false);
			csv_field(fp, stat, false);
			csv_field(fp, num_exact_json(json_object_get(v, stat),
			    val, sizeof(val)), false);
			csv_field(fp, strcmp(stat, "count") == 0 ? "count" :
			    unit != NULL ? unit : "", true);
			if (!lat)
				break;
		}
	}
}

static void
write_csv(const char *dir, const json_t *report)
{
	char path[700];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/report.csv", dir);
	if ((fp = fopen(path, "w")) == NULL)
		return;
	csv_header(fp);
	csv_rows(fp, report);
	fclose(fp);
}

int
report_write(const struct run *r)
{
	char path[700];
	json_t *j = report_json(r);
	int rc;

	snprintf(path, sizeof(path), "%s/report.json", r->dir);
	rc = jdump_file(j, path);
	write_run_json(r);
	write_md(r);
	write_csv(r->dir, j);
	json_decref(j);
	if (html_write(r->dir) == -1)
		rc = -1;
	return rc == 0 ? 0 : -1;
}

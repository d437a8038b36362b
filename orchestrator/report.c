/*
 * report.c: writes the bundle's report files from a finished run (see
 * report.h).  report.md reads well on its own: scenario and host first,
 * a table per latency measure, the other measures, the per-peer table, the
 * checks with bounds, then notes on faults, stalls and crashes.
 */
#include <sys/utsname.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/opensslv.h>
#include <event2/event.h>
#include <cbor/configuration.h>

#include "fleet.h"
#include "log.h"
#include "report.h"
#include "run.h"
#include "xmalloc.h"

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
	j = json_pack("{s:o, s:o, s:s, s:I, s:o, s:{s:s, s:s, s:s, s:s}}",
	    "host", host_json(), "orchestrate_argv", argv,
	    "peerd", r->opts.peerd, "seed", (json_int_t)r->opts.seed,
	    "peers", cmds, "versions", "openssl", OPENSSL_VERSION_TEXT,
	    "libevent", event_get_version(), "jansson", JANSSON_VERSION,
	    "libcbor", "0.8");
	snprintf(path, sizeof(path), "%s/run.json", r->dir);
	json_dump_file(j, path, JSON_INDENT(2));
	json_decref(j);
}

static void
md_num(FILE *fp, json_t *v)
{
	if (json_is_integer(v))
		fprintf(fp, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v)) {
		double d = json_real_value(v);

		if (d == (double)(long long)d && d < 1e15 && d > -1e15)
			fprintf(fp, "%lld", (long long)d);
		else
			fprintf(fp, "%.3f", d);
	} else
		fputs("—", fp);
}

/* The numbers of obj under keys, as the rest of a table row: "a | b |\n". */
static void
md_cells(FILE *fp, json_t *obj, const char *const *keys)
{
	for (; *keys != NULL; keys++) {
		md_num(fp, json_object_get(obj, *keys));
		fputs(keys[1] != NULL ? " | " : " |\n", fp);
	}
}

static void
write_md(const struct run *r)
{
	char path[700];
	static const char *const lat_keys[] = { "count", "p50", "p90", "p99",
	    "p999", "max", NULL };
	static const char *const swarm_keys[] = { "bytes_from_seeder",
	    "bytes_from_others", "seconds", "bad_pieces", NULL };
	static const char *const peer_keys[] = { "frames_in", "frames_out",
	    "bytes_in", "bytes_out", "cpu_s", "max_rss_kib", NULL };
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
	fprintf(fp, "| seed | %llu |\n", (unsigned long long)r->opts.seed);
	fprintf(fp, "| wall time | %.1f s |\n",
	    (double)(r->end_ms - r->t0_ms) / 1000.0);
	fprintf(fp, "| params |");
	json_object_foreach(json_object_get(r->scn, "params"), k, v) {
		char *s = json_dumps(v, JSON_ENCODE_ANY);

		fprintf(fp, " %s=%s", k, s);
		free(s);
	}
	fprintf(fp, " |\n\n");
	json_decref(host);

	fprintf(fp, "## Latency\n\n");
	any = false;
	json_object_foreach(r->measures, k, v) {
		if (json_object_get(v, "p50") == NULL)
			continue;
		if (!any)
			fprintf(fp, "| measure | count | p50 | p90 | p99 | p99.9 "
			    "| max |\n|---|--:|--:|--:|--:|--:|--:|\n");
		any = true;
		fprintf(fp, "| %s (us) | ", k);
		md_cells(fp, v, lat_keys);
	}
	if (!any)
		fprintf(fp, "No latency was recorded.\n");
	fprintf(fp, "\nPercentiles come from the histograms of every peer "
	    "merged (at most 1%% relative error), never from averaged "
	    "per-peer percentiles.\n\n## Measures\n\n| measure | value | unit "
	    "|\n|---|--:|---|\n");
	json_object_foreach(r->measures, k, v) {
		if (json_object_get(v, "p50") != NULL)
			continue;
		fprintf(fp, "| %s | ", k);
		md_num(fp, json_object_get(v, "value"));
		fprintf(fp, " | %s |\n", json_string_value(json_object_get(v,
		    "unit")));
	}
	if (r->swarm_cid[0] != '\0') {
		fprintf(fp, "\n## Content swarm\n\n%.0f bytes published by %s "
		    "(cid `%.16s...`, SHA-256 `%.16s...`).\n\n| fetcher | "
		    "verified | from the seeder | from the others | seconds | bad "
		    "pieces |\n|---|---|--:|--:|--:|--:|\n", r->swarm_size,
		    r->fleet.peers[r->swarm_publisher]->name, r->swarm_cid,
		    r->swarm_sha);
		json_array_foreach(r->swarm_rows, i, v) {
			fprintf(fp, "| %s | %s | ", json_string_value(
			    json_object_get(v, "name")), json_is_true(
			    json_object_get(v, "verified")) ? "yes" : "**no**");
			md_cells(fp, v, swarm_keys);
		}
	}
	fprintf(fp, "\n## Peers\n\n| peer | pid | state | frames in | frames "
	    "out | bytes in | bytes out | CPU s | max RSS KiB |\n"
	    "|---|--:|---|--:|--:|--:|--:|--:|--:|\n");
	json_array_foreach(r->peer_rows, i, v) {
		fprintf(fp, "| %s | ", json_string_value(json_object_get(v,
		    "name")));
		md_num(fp, json_object_get(v, "pid"));
		fprintf(fp, " | %s | ", json_string_value(json_object_get(v,
		    "state")));
		md_cells(fp, v, peer_keys);
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

		fprintf(fp, "| %s | %s%s%s | ", json_string_value(
		    json_object_get(v, "name")), json_string_value(
		    json_object_get(v, "metric")), stat ? " " : "",
		    stat ? stat : "");
		md_num(fp, json_object_get(v, "value"));
		fprintf(fp, " | %s ", json_string_value(json_object_get(v,
		    "op")));
		md_num(fp, json_object_get(v, "bound"));
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

static void
write_csv(const struct run *r)
{
	char path[700];
	FILE *fp;
	json_t *v;
	const char *k;
	size_t i;

	snprintf(path, sizeof(path), "%s/report.csv", r->dir);
	if ((fp = fopen(path, "w")) == NULL)
		return;
	fprintf(fp, "kind,name,unit,value,count,p50,p90,p99,p999,max,op,bound,"
	    "result\n");
	json_object_foreach(r->measures, k, v) {
		if (json_object_get(v, "p50") != NULL)
			fprintf(fp, "latency,%s,us,,%lld,%lld,%lld,%lld,%lld,%lld"
			    ",,,\n", k,
			    (long long)json_integer_value(json_object_get(v, "count")),
			    (long long)json_integer_value(json_object_get(v, "p50")),
			    (long long)json_integer_value(json_object_get(v, "p90")),
			    (long long)json_integer_value(json_object_get(v, "p99")),
			    (long long)json_integer_value(json_object_get(v, "p999")),
			    (long long)json_integer_value(json_object_get(v, "max")));
		else
			fprintf(fp, "measure,%s,%s,%.6g,,,,,,,,,\n", k,
			    json_string_value(json_object_get(v, "unit")),
			    json_number_value(json_object_get(v, "value")));
	}
	json_array_foreach(r->checks, i, v) {
		json_t *val = json_object_get(v, "value");
		char vs[64] = "";

		if (json_is_number(val))
			snprintf(vs, sizeof(vs), "%.6g", json_number_value(val));
		fprintf(fp, "check,\"%s\",,%s,,,,,,,%s,%.6g,%s\n",
		    json_string_value(json_object_get(v, "name")), vs,
		    json_string_value(json_object_get(v, "op")),
		    json_number_value(json_object_get(v, "bound")),
		    json_string_value(json_object_get(v, "result")));
	}
	fclose(fp);
}

int
report_write(const struct run *r)
{
	char path[700];
	json_t *j = report_json(r);
	int rc;

	snprintf(path, sizeof(path), "%s/report.json", r->dir);
	rc = json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
	write_run_json(r);
	write_md(r);
	write_csv(r);
	return rc == 0 ? 0 : -1;
}

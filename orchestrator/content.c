/*
 * content.c: the content swarm as the engine sees it: waiting until every
 * fetcher is complete (lines every 10 s, a stall after 30 s quiet), the
 * raw-stream baseline (build/tcpstream) and the per-fetcher rows and
 * measures of the report.
 */
#include <sys/wait.h>

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "fleet.h"
#include "xmalloc.h"

#define RAW_RUNS	3	/* tcpstream runs; the median is kept */
#define RAW_BOUND_MS	120000	/* on each run */

/*
 * The content of a fetcher.  While others still fetch, without the whole
 * blob's SHA-256: hashing a complete copy would take CPU from the fetch
 * being timed.
 */
static json_t *
content_of(struct run *r, struct peer *p, bool sha, char *err, size_t errlen)
{
	json_t *args = json_pack("{s:s, s:b}", "cid", r->swarm_cid, "sha256",
	    sha), *res;

	res = engine_call(r, p, "content", args, CALL_MS, err, errlen);
	json_decref(args);
	return res;
}

/* Every fetcher complete; lines every 10 s, a stall after 30 s quiet. */
int
content_wait_fetched(struct run *r, uint64_t deadline)
{
	size_t n = json_array_size(r->swarm_fetchers);
	uint64_t *last_gain = xcalloc(n ? n : 1, sizeof(*last_gain));
	json_int_t *last_v = xcalloc(n ? n : 1, sizeof(*last_v));
	bool *stalled = xcalloc(n ? n : 1, sizeof(*stalled));
	uint64_t next_line = clock_mono_ms() + PROGRESS_MS;
	int rc = 0;
	char err[256];

	for (size_t i = 0; i < n; i++)
		last_gain[i] = clock_mono_ms();
	for (;;) {
		size_t done = 0;
		char line[1024] = "";
		bool print = clock_mono_ms() >= next_line;

		for (size_t i = 0; i < n; i++) {
			struct peer *p = r->fleet.peers[json_integer_value(
			    json_array_get(r->swarm_fetchers, i))];
			json_t *c;
			json_int_t v;

			if (!fleet_live(p) || (c = content_of(r, p, false, err,
			    sizeof(err))) == NULL)
				continue;
			v = json_integer_value(json_object_get(c, "verified"));
			if (json_is_true(json_object_get(c, "complete")))
				done++;
			else if (v != last_v[i]) {
				last_v[i] = v;
				last_gain[i] = clock_mono_ms();
				stalled[i] = false;
			} else if (!stalled[i] && clock_mono_ms() -
			    last_gain[i] >= 30000) {
				json_t *args = json_pack("{s:i}", "n", 20), *t;

				stalled[i] = true;
				r->swarm_stalls++;
				engine_note(r,
				    "stall: %s gained no piece for 30 s "
				    "(%lld of %lld verified)", p->name,
				    (long long)v, (long long)json_integer_value(
				    json_object_get(c, "pieces")));
				engine_timeline(r, "stall", json_pack("{s:i, s:I}",
				    "peer", p->index, "verified", v));
				t = engine_call(r, p, "trace", args, CALL_MS, err,
				    sizeof(err));
				if (t != NULL && r->opts.verbose >= 0) {
					size_t k;
					json_t *e;

					fprintf(stderr, "%s trace tail:\n", p->name);
					json_array_foreach(json_object_get(t,
					    "events"), k, e)
						fprintf(stderr, "  %s %s\n",
						    json_string_value(
						    json_object_get(e, "cat")),
						    json_string_value(
						    json_object_get(e, "detail")));
				}
				json_decref(t);
				json_decref(args);
			}
			if (print) {
				size_t used = strlen(line);

				snprintf(line + used, sizeof(line) - used,
				    " %s %lld/%lld", p->name, (long long)
				    json_integer_value(json_object_get(c,
				    "verified")), (long long)json_integer_value(
				    json_object_get(c, "pieces")));
			}
			json_decref(c);
		}
		if (print) {
			next_line = clock_mono_ms() + PROGRESS_MS;
			if (r->opts.verbose >= 0)
				fprintf(stderr, "%sswarm: pieces verified:%s\n",
				    r->tty ? "\r\033[K" : "", line);
		}
		if (done == n)
			break;
		if (clock_mono_ms() >= deadline) {
			rc = engine_fail(r,
			    "fetch: %zu of %zu fetchers complete within "
			    "the bound", done, n);
			break;
		}
		if (engine_housekeep(r) == -1) {
			rc = -1;
			break;
		}
		engine_nap(r);
	}
	free(last_gain);
	free(last_v);
	free(stalled);
	return rc;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * tcpstream's one line from fd, within RAW_BOUND_MS: its length, 0 or -1
 * when it ended without one, -2 when the bound ran out.
 */
static ssize_t
raw_read(int fd, char *line, size_t size)
{
	uint64_t deadline = clock_mono_ms() + RAW_BOUND_MS;
	size_t have = 0;

	while (have < size - 1 && memchr(line, '\n', have) == NULL) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = clock_mono_ms();
		ssize_t n;

		if (now >= deadline)
			return -2;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		if ((n = read(fd, line + have, size - 1 - have)) <= 0)
			break;
		have += (size_t)n;
	}
	line[have] = '\0';
	return (ssize_t)have;
}

/*
 * The same bytes over one plain TCP stream, now, for the ratio: the median
 * of RAW_RUNS runs, since one loopback stream on two shared cores varies
 * by half from run to run (BENCHMARKS.md); each run is noted.
 */
static void
raw_stream(struct run *r, double bytes)
{
	char tool[700], arg[64], line[512], runs[256] = "";
	double v[RAW_RUNS];
	int out[2], status, got = 0;
	ssize_t n;
	pid_t pid;
	json_t *j;

	snprintf(tool, sizeof(tool), "%s", r->opts.peerd);
	if (strrchr(tool, '/') != NULL)
		snprintf(strrchr(tool, '/') + 1, sizeof(tool) - (size_t)(
		    strrchr(tool, '/') + 1 - tool), "tcpstream");
	else
		snprintf(tool, sizeof(tool), "tcpstream");
	if (access(tool, X_OK) != 0) {
		engine_note(r, "no %s: swarm.raw_stream_mib_s not measured", tool);
		return;
	}
	snprintf(arg, sizeof(arg), "%.0f", bytes);
	for (int k = 0; k < RAW_RUNS; k++) {
		if (pipe(out) == -1)
			break;
		if ((pid = fork()) == 0) {
			dup2(out[1], STDOUT_FILENO);
			close(out[0]);
			execl(tool, tool, "-n", arg, (char *)NULL);
			_exit(127);
		}
		close(out[1]);
		if (pid == -1) {
			close(out[0]);
			break;
		}
		n = raw_read(out[0], line, sizeof(line));
		close(out[0]);
		if (n == -2) {
			kill(pid, SIGKILL);
			engine_note(r, "tcpstream gave no result within %d s: killed",
			    RAW_BOUND_MS / 1000);
		}
		waitpid(pid, &status, 0);
		if (n <= 0)
			break;
		if ((j = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL)) ==
		    NULL)
			break;
		v[got] = json_number_value(json_object_get(j, "mib_s"));
		json_decref(j);
		if (v[got] <= 0)
			break;
		snprintf(runs + strlen(runs), sizeof(runs) - strlen(runs),
		    "%s%.0f", got ? ", " : "", v[got]);
		got++;
	}
	if (got < RAW_RUNS) {
		engine_note(r,
		    "tcpstream failed: swarm.raw_stream_mib_s not measured");
		return;
	}
	qsort(v, (size_t)got, sizeof(v[0]), cmp_double);
	engine_note(r, "raw stream: %s MiB/s; the median is used", runs);
	engine_measure(r, M_SWARM_RAW_STREAM_MIB_S, v[got / 2]);
}

/* Per fetcher: verified, bytes from the seeder and from the others. */
void
content_gather(struct run *r)
{
	const char *pub;
	double total = 0, from_seeder = 0, first_us = 0, last_us = 0;
	size_t i, verified = 0, n = json_array_size(r->swarm_fetchers);
	json_t *ix;
	char err[256];

	if (r->swarm_cid[0] == '\0' || n == 0)
		return;
	pub = r->fleet.peers[r->swarm_publisher]->name;
	json_array_foreach(r->swarm_fetchers, i, ix) {
		struct peer *p = r->fleet.peers[json_integer_value(ix)];
		json_t *c = fleet_live(p) ? content_of(r, p, true, err,
		    sizeof(err)) : NULL, *from, *v;
		double mine = 0, seeder = 0, s_us, e_us;
		const char *k, *sha;
		bool ok;

		if (c == NULL) {
			json_array_append_new(r->swarm_rows, json_pack(
			    "{s:s, s:b}", "name", p->name, "verified", 0));
			continue;
		}
		from = json_object_get(c, "from");
		json_object_foreach(from, k, v) {
			mine += json_number_value(v);
			if (strcmp(k, pub) == 0)
				seeder += json_number_value(v);
		}
		sha = json_string_value(json_object_get(c, "sha256"));
		ok = json_is_true(json_object_get(c, "complete")) && sha != NULL &&
		    strcmp(sha, r->swarm_sha) == 0;
		verified += ok;
		total += mine;
		from_seeder += seeder;
		s_us = json_number_value(json_object_get(c, "start_us"));
		e_us = json_number_value(json_object_get(c, "end_us"));
		if (first_us == 0 || s_us < first_us)
			first_us = s_us;
		if (e_us > last_us)
			last_us = e_us;
		json_array_append_new(r->swarm_rows, json_pack(
		    "{s:s, s:b, s:f, s:f, s:O, s:O}", "name", p->name,
		    "verified", ok, "bytes_from_seeder", seeder,
		    "bytes_from_others", mine - seeder, "seconds",
		    json_object_get(c, "seconds"), "bad_pieces",
		    json_object_get(c, "bad_pieces")));
		json_decref(c);
	}
	engine_measure(r, M_SWARM_VERIFIED, (double)verified);
	engine_measure(r, M_SWARM_UNVERIFIED, (double)(n - verified));
	engine_measure(r, M_SWARM_STALLS, (double)r->swarm_stalls);
	if (verified == n && last_us > first_us) {
		double secs = (last_us - first_us) / 1e6;
		json_t *raw;

		engine_measure(r, M_SWARM_WALL_MS, secs * 1000.0);
		engine_measure(r, M_SWARM_AGGREGATE_MIB_S, r->swarm_size *
		    (double)n / 1048576.0 / secs);
		if (total > 0)
			engine_measure(r, M_SWARM_SEEDER_SHARE,
			    from_seeder / total);
		raw_stream(r, r->swarm_size * (double)n);
		raw = json_object_get(json_object_get(r->measures,
		    "swarm.raw_stream_mib_s"), "value");
		if (json_number_value(raw) > 0)
			engine_measure(r, M_SWARM_RATIO_TO_RAW, r->swarm_size *
			    (double)n / 1048576.0 / secs / json_number_value(raw));
	}
}

/*
 * html.c: report.html (see html.h).  One self-contained page: the header
 * and checks; the measures and steps; a time-series chart per sampled
 * measure with a line per peer and every kill, stop, pause, crash, fault
 * and partition window (bundle_windows) shaded and labelled; a histogram
 * and CDF per latency measure, from the peers' histograms merged, with
 * p50 and p99 marked; the swarm's progress per fetcher; per-peer CPU,
 * CPU/wall and max RSS.  The charts are page.c's inline SVG.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "hist.h"
#include "html.h"
#include "measures.h"
#include "num.h"
#include "page.h"
#include "xmalloc.h"

/* The charts drawn from samples.ndjson: one row per sampled measure. */
static const struct sampled {
	const char	*key;		/* in a sample line; "gauges.x" */
	const char	*title;
	const char	*unit;		/* of the y axis */
	bool		 rate;		/* a counter drawn as its rate per s */
} sampled[] = {
	{ "gauges.records", "entries held", "count", false },
	{ "gauges.links", "links", "count", false },
	{ "frames.out", "frames out per second", "count", true },
	{ "bytes.out", "bytes out per second", "bytes", true },
	{ "space.writes", "writes (cumulative)", "count", false },
	{ "takes.won", "takes won (cumulative)", "count", false },
};

/* A growing array of doubles. */
struct dv {
	double	*v;
	size_t	 n, cap;
};

static void
dv_push(struct dv *d, double x)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->v = xreallocarray(d->v, d->cap, sizeof(*d->v));
	}
	d->v[d->n++] = x;
}

static const json_t *
sample_get(const json_t *line, const char *key)
{
	if (strncmp(key, "gauges.", 7) == 0)
		return json_object_get(json_object_get(line, "gauges"), key + 7);
	return json_object_get(line, key);
}

static const char *
str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

static void
cell_human(FILE *fp, const json_t *v, const char *unit)
{
	char buf[NUM_BUF];

	fputs("<td class=\"n\">", fp);
	if (json_is_number(v))
		page_esc(fp, num_human(json_number_value(v), unit, buf,
		    sizeof(buf)));
	else
		fputs("—", fp);
	fputs("</td>", fp);
}

static void
header(FILE *fp, const json_t *rep, const json_t *run)
{
	const json_t *host = json_object_get(rep, "host");
	const json_t *build = json_object_get(run, "build");
	const char *k;
	json_t *v;
	char buf[NUM_BUF];

	fputs("<h1>", fp);
	page_esc(fp, str(rep, "scenario"));
	fprintf(fp, " — <span class=\"%s\">", str(rep, "status"));
	page_esc(fp, str(rep, "status"));
	fputs("</span></h1>\n<p>", fp);
	page_esc(fp, str(rep, "description"));
	fputs("</p>\n", fp);
	if (*str(rep, "error") != '\0') {
		fputs("<p class=\"error\">The run could not complete: ", fp);
		page_esc(fp, str(rep, "error"));
		fputs("</p>\n", fp);
	}
	fputs("<table>\n<tr><th>seed</th><td>", fp);
	page_esc(fp, num_exact_json(json_object_get(rep, "seed"), buf,
	    sizeof(buf)));
	fputs("</td></tr>\n<tr><th>wall time</th><td>", fp);
	page_esc(fp, num_human(json_number_value(json_object_get(rep,
	    "wall_ms")), "ms", buf, sizeof(buf)));
	fputs("</td></tr>\n<tr><th>params</th><td>", fp);
	json_object_foreach(json_object_get(rep, "params"), k, v) {
		char *s = json_dumps(v, JSON_ENCODE_ANY);

		page_esc(fp, k);
		fputc('=', fp);
		page_esc(fp, s);
		fputc(' ', fp);
		free(s);
	}
	fputs("</td></tr>\n<tr><th>host</th><td>", fp);
	page_esc(fp, str(host, "hostname"));
	fputs(", ", fp);
	page_esc(fp, str(host, "os"));
	fputc(' ', fp);
	page_esc(fp, str(host, "kernel"));
	fprintf(fp, ", %lld CPUs (", (long long)json_integer_value(
	    json_object_get(host, "cpus")));
	page_esc(fp, str(host, "cpu"));
	fputs(")</td></tr>\n<tr><th>build</th><td>", fp);
	page_esc(fp, str(build, "version"));
	fputs(" (git ", fp);
	page_esc(fp, str(build, "git"));
	fputs(")</td></tr>\n<tr><th>run</th><td>", fp);
	page_esc(fp, str(rep, "run_dir"));
	fputs("</td></tr>\n</table>\n", fp);
}

static void
checks(FILE *fp, const json_t *rep)
{
	const json_t *ms = json_object_get(rep, "measures");
	json_t *c;
	size_t i;

	fputs("<h2>Checks</h2>\n", fp);
	if (json_array_size(json_object_get(rep, "checks")) == 0) {
		fputs("<p>The scenario has no checks.</p>\n", fp);
		return;
	}
	fputs("<table class=\"checks\"><tr><th>check</th><th>measure</th>"
	    "<th class=\"n\">value</th><th>bound</th><th>result</th></tr>\n",
	    fp);
	json_array_foreach(json_object_get(rep, "checks"), i, c) {
		const char *unit = measures_check_unit(ms, c);
		char buf[NUM_BUF];

		fputs("<tr><td>", fp);
		page_esc(fp, str(c, "name"));
		fputs("</td><td>", fp);
		page_esc(fp, str(c, "metric"));
		if (*str(c, "stat") != '\0') {
			fputc(' ', fp);
			page_esc(fp, str(c, "stat"));
		}
		fputs("</td>", fp);
		cell_human(fp, json_object_get(c, "value"), unit);
		fputs("<td>", fp);
		page_esc(fp, str(c, "op"));
		fputc(' ', fp);
		if (json_is_number(json_object_get(c, "bound")))
			page_esc(fp, num_human(json_number_value(json_object_get(
			    c, "bound")), unit, buf, sizeof(buf)));
		fprintf(fp, "</td><td class=\"%s\">", str(c, "result"));
		page_esc(fp, str(c, "result"));
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n<p class=\"muted\">UNKNOWN means the measure could "
	    "not be taken; it is never a pass.</p>\n", fp);
}

static void
measures(FILE *fp, const json_t *rep)
{
	static const char *const lat[] = { "count", "p50", "p90", "p99",
	    "p999", "max", NULL };
	const char *k;
	json_t *v;

	fputs("<h2>Measures</h2>\n<table><tr><th>measure</th><th class=\"n\">"
	    "value</th><th>better</th><th>what</th></tr>\n", fp);
	json_object_foreach(json_object_get(rep, "measures"), k, v) {
		const struct measure_info *mi = measures_shown(k);

		fputs("<tr><td>", fp);
		page_esc(fp, k);
		fputs("</td>", fp);
		if (json_object_get(v, "p50") != NULL) {
			char buf[NUM_BUF];

			fputs("<td class=\"n\">", fp);
			for (size_t i = 0; lat[i] != NULL; i++) {
				json_t *x = json_object_get(v, lat[i]);

				fprintf(fp, "%s%s ", i ? " · " : "", lat[i]);
				if (json_is_number(x))
					page_esc(fp, num_human(json_number_value(
					    x), i ? "us" : "count", buf,
					    sizeof(buf)));
			}
			fputs("</td>", fp);
		} else
			cell_human(fp, json_object_get(v, "value"), str(v,
			    "unit"));
		fprintf(fp, "<td>%s</td><td>", mi->better == MEASURE_LOWER ?
		    "lower" : mi->better == MEASURE_HIGHER ? "higher" : "—");
		page_esc(fp, mi->meaning);
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

static void
steps(FILE *fp, const json_t *tl)
{
	json_t *st = bundle_steps(tl), *s;
	size_t i;

	fputs("<h2>Steps</h2>\n<table><tr><th>#</th><th>step</th><th>action"
	    "</th><th class=\"n\">start</th><th class=\"n\">duration</th><th>"
	    "outcome</th></tr>\n", fp);
	json_array_foreach(st, i, s) {
		json_t *end = json_object_get(s, "end_ms");
		double t0 = json_number_value(json_object_get(s, "start_ms"));
		char buf[NUM_BUF];

		fprintf(fp, "<tr><td>%zu</td><td>", i);
		page_esc(fp, str(s, "name"));
		fputs("</td><td>", fp);
		page_esc(fp, str(s, "action"));
		fprintf(fp, "</td><td class=\"n\">%s</td><td class=\"n\">",
		    num_human(t0, "ms", buf, sizeof(buf)));
		if (json_is_number(end))
			fputs(num_human(json_number_value(end) - t0, "ms", buf,
			    sizeof(buf)), fp);
		else
			fputs("—", fp);
		fprintf(fp, "</td><td class=\"%s\">%s</td></tr>\n",
		    !json_is_number(end) ? "FAIL" : json_is_true(
		    json_object_get(s, "ok")) ? "" : "FAIL", !json_is_number(
		    end) ? "did not end" : json_is_true(json_object_get(s,
		    "ok")) ? "ok" : "failed");
	}
	fputs("</table>\n", fp);
	json_decref(st);
}

/* The name of peer index k, from report.json's rows. */
static void
peer_name(const json_t *rep, json_int_t k, char *buf, size_t len)
{
	json_t *row;
	size_t i;

	json_array_foreach(json_object_get(rep, "peers"), i, row)
		if (json_integer_value(json_object_get(row, "index")) == k &&
		    *str(row, "name") != '\0') {
			snprintf(buf, len, "%s", str(row, "name"));
			return;
		}
	snprintf(buf, len, "p%lld", (long long)k);
}

static json_int_t
max_peer(const json_t *samples)
{
	json_int_t m = -1;
	json_t *l;
	size_t i;

	json_array_foreach(samples, i, l) {
		json_int_t p = json_integer_value(json_object_get(l, "peer"));

		if (json_is_integer(json_object_get(l, "peer")) && p > m &&
		    p < 4096)
			m = p;
	}
	return m;
}

/*
 * One time-series chart: a line per peer of key over t_ms (its rate per
 * second when rate); scale divides the values (a share of the blob).
 * only, when not NULL, says which peers are drawn.
 */
static void
series_chart(FILE *fp, const json_t *rep, const json_t *samples,
    const json_t *wins, const char *id, const char *title, const char *key,
    const char *unit, bool rate, double scale, const json_t *only)
{
	json_int_t np = max_peer(samples) + 1;
	struct dv *xs = xcalloc((size_t)np + 1, sizeof(*xs));
	struct dv *ys = xcalloc((size_t)np + 1, sizeof(*ys));
	double *lastt = xcalloc((size_t)np + 1, sizeof(*lastt));
	double *lastv = xcalloc((size_t)np + 1, sizeof(*lastv));
	bool *seen = xcalloc((size_t)np + 1, sizeof(*seen));
	struct page_series *se = xcalloc((size_t)np + 1, sizeof(*se));
	struct page_window *pw = xcalloc(json_array_size(wins) + 1,
	    sizeof(*pw));
	char (*names)[64] = xcalloc((size_t)np + 1, sizeof(*names));
	size_t ns = 0, i;
	json_t *l, *w;
	bool nonzero = false;

	json_array_foreach(samples, i, l) {
		const json_t *v = sample_get(l, key);
		json_int_t p = json_integer_value(json_object_get(l, "peer"));
		double t = json_number_value(json_object_get(l, "t_ms"));
		double x;

		if (!json_is_integer(json_object_get(l, "peer")) || p < 0 ||
		    p >= np || !json_is_number(v))
			continue;
		x = json_number_value(v);
		nonzero |= x != 0;
		if (!rate)
			dv_push(&xs[p], t), dv_push(&ys[p], x / scale);
		else if (seen[p] && t > lastt[p]) {
			/* a restarted peer counts from 0 again */
			double d = x >= lastv[p] ? x - lastv[p] : x;

			dv_push(&xs[p], t);
			dv_push(&ys[p], d / ((t - lastt[p]) / 1000.0) / scale);
		}
		seen[p] = true;
		lastt[p] = t;
		lastv[p] = x;
	}
	for (json_int_t p = 0; p < np; p++) {
		bool want = only == NULL;
		json_t *o;
		size_t k;

		json_array_foreach(only, k, o)
			want |= json_integer_value(o) == p;
		if (!seen[p] || !want)
			continue;
		peer_name(rep, p, names[ns], sizeof(names[ns]));
		se[ns].label = names[ns];
		se[ns].x = xs[p].v;
		se[ns].y = ys[p].v;
		se[ns].n = xs[p].n;
		se[ns].hue = (int)p + 1;
		ns++;
	}
	json_array_foreach(wins, i, w) {
		pw[i].x0 = json_number_value(json_object_get(w, "start_ms"));
		pw[i].x1 = json_number_value(json_object_get(w, "end_ms"));
		pw[i].label = str(w, "label");
	}
	if (ns > 0 && !nonzero) {
		fputs("<p class=\"muted flat\" data-chart=\"", fp);
		page_esc(fp, id);
		fputs("\">", fp);
		page_esc(fp, title);
		fputs(": 0 on every peer in every sample.</p>\n", fp);
	} else if (ns > 0) {
		struct page_chart c = { .id = id, .title = title,
		    .xlabel = "time since the start", .xunit = "ms",
		    .ylabel = title, .yunit = unit, .yzero = true,
		    .series = se, .nseries = ns, .windows = pw,
		    .nwindows = json_array_size(wins) };

		page_chart(fp, &c);
	}
	for (json_int_t p = 0; p <= np; p++) {
		free(xs[p].v);
		free(ys[p].v);
	}
	free(xs);
	free(ys);
	free(lastt);
	free(lastv);
	free(seen);
	free(se);
	free(pw);
	free(names);
}

/* The merged histogram of latency measure name from every peer's
 * metrics.json ("gossip.write_to_visible" is "write_to_visible" there,
 * "control.rtt" is "control_rtt").  false when no peer has it. */
static bool
merged_hist(const char *dir, const json_t *rep, const char *name,
    struct hist *all)
{
	const char *dot = strchr(name, '.');
	char under[128], path[1100];
	json_t *row;
	size_t i;
	bool any = false;

	snprintf(under, sizeof(under), "%s", name);
	for (char *c = under; *c != '\0'; c++)
		if (*c == '.')
			*c = '_';
	hist_init(all);
	json_array_foreach(json_object_get(rep, "peers"), i, row) {
		struct hist *one = hist_new();
		json_t *m, *lat, *h;

		snprintf(path, sizeof(path), "%s/peers/%lld/metrics.json", dir,
		    (long long)json_integer_value(json_object_get(row,
		    "index")));
		m = json_load_file(path, 0, NULL);
		lat = json_object_get(m, "latency");
		if ((h = json_object_get(lat, dot ? dot + 1 : name)) == NULL)
			h = json_object_get(lat, under);
		if (h != NULL && hist_from_json(one, h) == 0) {
			hist_merge(all, one);
			any = true;
		}
		hist_free(one);
		json_decref(m);
	}
	return any && hist_count(all) > 0;
}

#define QUANTILES	1000	/* CDF points: every 0.1% */
#define BINS		30

static void
latency_chart(FILE *fp, const char *dir, const json_t *rep, const char *name,
    const json_t *m)
{
	struct hist *h = hist_new();
	struct dv cx = { 0 }, cy = { 0 }, bx = { 0 }, by = { 0 };
	double q[QUANTILES + 1], lo, hi;
	struct page_mark mk[2];
	char l50[NUM_BUF + 8], l99[NUM_BUF + 8], buf[NUM_BUF], id[160],
	    title[200];
	bool xlog;

	if (!merged_hist(dir, rep, name, h)) {
		hist_free(h);
		return;
	}
	for (int i = 0; i <= QUANTILES; i++)
		q[i] = (double)hist_percentile(h, 100.0 * i / QUANTILES);
	lo = fmax(q[0], 1);
	hi = fmax(q[QUANTILES], lo + 1);
	xlog = hi / lo >= 100;
	/* the CDF: the last rank of each distinct value */
	for (int i = 0; i <= QUANTILES; i++)
		if (i == QUANTILES || q[i + 1] != q[i]) {
			dv_push(&cx, q[i]);
			dv_push(&cy, 100.0 * i / QUANTILES);
		}
	/* the histogram: the share of quantile steps in each bin */
	for (int b = 0; b < BINS; b++) {
		double a = xlog ? lo * pow(hi / lo, (double)b / BINS) :
		    lo + (hi - lo) * b / BINS;
		double z = xlog ? lo * pow(hi / lo, (double)(b + 1) / BINS) :
		    lo + (hi - lo) * (b + 1) / BINS;
		int k = 0;

		for (int i = 1; i <= QUANTILES; i++)
			if (q[i] >= a && (q[i] < z || (b == BINS - 1 &&
			    q[i] <= z)))
				k++;
		dv_push(&bx, xlog ? sqrt(a * z) : (a + z) / 2);
		dv_push(&by, 100.0 * k / QUANTILES);
	}
	snprintf(l50, sizeof(l50), "p50 %s", num_human(json_number_value(
	    json_object_get(m, "p50")), "us", buf, sizeof(buf)));
	snprintf(l99, sizeof(l99), "p99 %s", num_human(json_number_value(
	    json_object_get(m, "p99")), "us", buf, sizeof(buf)));
	mk[0] = (struct page_mark){ json_number_value(json_object_get(m,
	    "p50")), l50 };
	mk[1] = (struct page_mark){ json_number_value(json_object_get(m,
	    "p99")), l99 };
	{
		struct page_series se[2] = {
			{ .label = "histogram %", .x = bx.v, .y = by.v,
			    .n = bx.n, .bars = true },
			{ .label = "CDF %", .x = cx.v, .y = cy.v, .n = cx.n,
			    .steps = true },
		};
		struct page_chart c = { .id = id, .title = title,
		    .xlabel = "latency", .xunit = "us", .xlog = xlog,
		    .ylabel = "% of values", .yunit = "count", .yzero = true,
		    .series = se, .nseries = 2, .marks = mk, .nmarks = 2 };

		snprintf(id, sizeof(id), "latency:%s", name);
		snprintf(title, sizeof(title), "%s: %llu values", name,
		    (unsigned long long)hist_count(h));
		page_chart(fp, &c);
	}
	free(cx.v);
	free(cy.v);
	free(bx.v);
	free(by.v);
	hist_free(h);
}

/* Per peer: CPU seconds, CPU / its uptime, max RSS; a table and bars. */
static void
peers(FILE *fp, const char *dir, const json_t *rep)
{
	const json_t *rows = json_object_get(rep, "peers");
	size_t n = json_array_size(rows), i, k = 0;
	double *x = xcalloc(n + 1, sizeof(*x)), *cpu = xcalloc(n + 1,
	    sizeof(*cpu)), *rss = xcalloc(n + 1, sizeof(*rss));
	const char **cats = xcalloc(n + 1, sizeof(*cats));
	json_t *row;

	fputs("<h2>Peers</h2>\n<table><tr><th>peer</th><th>state</th>"
	    "<th class=\"n\">CPU</th><th class=\"n\">CPU / wall</th>"
	    "<th class=\"n\">max RSS</th><th class=\"n\">frames out</th>"
	    "<th class=\"n\">bytes out</th></tr>\n", fp);
	json_array_foreach(rows, i, row) {
		char path[1100];
		json_t *m, *up, *c = json_object_get(row, "cpu_s");
		double wall;

		snprintf(path, sizeof(path), "%s/peers/%lld/metrics.json", dir,
		    (long long)json_integer_value(json_object_get(row,
		    "index")));
		m = json_load_file(path, 0, NULL);
		up = json_object_get(json_object_get(m, "gauges"), "uptime_s");
		wall = json_is_number(up) ? json_number_value(up) :
		    json_number_value(json_object_get(rep, "wall_ms")) / 1000;
		fputs("<tr><td>", fp);
		page_esc(fp, str(row, "name"));
		fputs("</td><td>", fp);
		page_esc(fp, str(row, "state"));
		fputs("</td>", fp);
		cell_human(fp, c, "s");
		fputs("<td class=\"n\">", fp);
		if (json_is_number(c) && wall > 0)
			fprintf(fp, "%.1f%%", 100 * json_number_value(c) / wall);
		else
			fputs("—", fp);
		fputs("</td>", fp);
		cell_human(fp, json_object_get(row, "max_rss_kib"), "KiB");
		cell_human(fp, json_object_get(row, "frames_out"), "count");
		cell_human(fp, json_object_get(row, "bytes_out"), "bytes");
		fputs("</tr>\n", fp);
		if (json_is_number(c)) {
			cats[k] = str(row, "name");
			x[k] = (double)k;
			cpu[k] = json_number_value(c);
			rss[k] = json_number_value(json_object_get(row,
			    "max_rss_kib")) * 1024;
			k++;
		}
		json_decref(m);
	}
	fputs("</table>\n<p class=\"muted\">A peer that was killed or crashed "
	    "has no figures: its counters died with it.</p>\n", fp);
	if (k > 0) {
		struct page_series s1 = { .label = "CPU s", .x = x, .y = cpu,
		    .n = k, .bars = true };
		struct page_series s2 = { .label = "max RSS", .x = x, .y = rss,
		    .n = k, .bars = true };
		struct page_chart c1 = { .id = "peers:cpu_s", .title =
		    "CPU seconds per peer", .ylabel = "CPU", .yunit = "s",
		    .yzero = true, .xcats = cats, .ncats = k, .series = &s1,
		    .nseries = 1 };
		struct page_chart c2 = { .id = "peers:max_rss", .title =
		    "max RSS per peer", .ylabel = "RSS", .yunit = "bytes",
		    .yzero = true, .xcats = cats, .ncats = k, .series = &s2,
		    .nseries = 1 };

		page_chart(fp, &c1);
		page_chart(fp, &c2);
	}
	free(x);
	free(cpu);
	free(rss);
	free(cats);
}

int
html_write(const char *dir)
{
	char path[1100], err[1200];
	json_t *rep, *run, *tl, *samples, *wins, *m;
	const char *k;
	FILE *fp;

	if ((rep = bundle_report(dir, err, sizeof(err))) == NULL) {
		fprintf(stderr, "orchestrate: report.html: %s\n", err);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/run.json", dir);
	run = json_load_file(path, 0, NULL);
	tl = bundle_ndjson(dir, "timeline.ndjson");
	samples = bundle_ndjson(dir, "samples.ndjson");
	wins = bundle_windows(tl, json_number_value(json_object_get(rep,
	    "wall_ms")));
	snprintf(path, sizeof(path), "%s/report.html", dir);
	if ((fp = fopen(path, "w")) == NULL) {
		fprintf(stderr, "orchestrate: %s: cannot write\n", path);
		json_decref(rep);
		json_decref(run);
		json_decref(tl);
		json_decref(samples);
		json_decref(wins);
		return -1;
	}
	snprintf(err, sizeof(err), "%s — %s", str(rep, "scenario"),
	    str(rep, "status"));
	page_start(fp, err);
	header(fp, rep, run);
	checks(fp, rep);

	fprintf(fp, "<h2>Over time</h2>\n<p class=\"muted\">%zu samples "
	    "(samples.ndjson); shaded: every kill, stop, pause, crash, fault and "
	    "partition window (timeline.ndjson).</p>\n",
	    json_array_size(samples));
	for (size_t i = 0; i < sizeof(sampled) / sizeof(sampled[0]); i++) {
		char id[80];

		snprintf(id, sizeof(id), "samples:%s", sampled[i].key);
		series_chart(fp, rep, samples, wins, id, sampled[i].title,
		    sampled[i].key, sampled[i].unit, sampled[i].rate, 1, NULL);
	}
	if (json_is_object(json_object_get(rep, "swarm"))) {
		json_t *sw = json_object_get(rep, "swarm"), *fi = json_array(),
		    *f, *row;
		size_t i, j;

		json_array_foreach(json_object_get(sw, "fetchers"), i, f)
			json_array_foreach(json_object_get(rep, "peers"), j, row)
				if (strcmp(str(row, "name"), str(f, "name")) == 0)
					json_array_append(fi, json_object_get(row,
					    "index"));
		fputs("<h2>Content swarm</h2>\n", fp);
		series_chart(fp, rep, samples, wins, "swarm:progress",
		    "swarm progress per fetcher (% of the blob received)",
		    "swarm.bytes_received", "count", false,
		    json_number_value(json_object_get(sw, "size")) / 100, fi);
		json_decref(fi);
	}
	fputs("<h2>Latency</h2>\n", fp);
	json_object_foreach(json_object_get(rep, "measures"), k, m)
		if (json_object_get(m, "p50") != NULL)
			latency_chart(fp, dir, rep, k, m);
	fputs("<p class=\"muted\">From the histograms of every peer merged (at "
	    "most 1% relative error); the histogram shows the share of 1,000 "
	    "evenly spaced quantiles in each bin.</p>\n", fp);
	measures(fp, rep);
	steps(fp, tl);
	peers(fp, dir, rep);
	fputs("<h2>Notes</h2>\n<ul>\n", fp);
	{
		json_t *n;
		size_t i;

		json_array_foreach(json_object_get(rep, "notes"), i, n) {
			fputs("<li>", fp);
			page_esc(fp, json_string_value(n));
			fputs("</li>\n", fp);
		}
	}
	fputs("</ul>\n<p class=\"muted\">Every file of the bundle is described "
	    "in docs/report.md.</p>\n", fp);
	page_end(fp);
	fclose(fp);
	json_decref(rep);
	json_decref(run);
	json_decref(tl);
	json_decref(samples);
	json_decref(wins);
	return 0;
}

/*
 * compare.c: two runs (or two sets of repeats) side by side (see
 * compare.h).  Everything comes from the report.json files; a measure's
 * unit and better direction come from the one table in measures.h.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bundle.h"
#include "compare.h"
#include "jdump.h"
#include "measures.h"
#include "num.h"
#include "page.h"
#include "xmalloc.h"

static const char *const lat_stats[] = { "count", "p50", "p90", "p99",
    "p999", "max", NULL };

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

bool
compare_stat(const json_t *reps, const char *measure, const char *stat,
    double *med, double *lo, double *hi, size_t *n)
{
	size_t cap = json_array_size(reps), k = 0, i;
	double *v = xcalloc(cap + 1, sizeof(*v));
	json_t *r;

	json_array_foreach(reps, i, r) {
		json_t *x = json_object_get(json_object_get(json_object_get(r,
		    "measures"), measure), stat);

		if (json_is_number(x) && isfinite(json_number_value(x)))
			v[k++] = json_number_value(x);
	}
	if (k == 0) {
		free(v);
		return false;
	}
	qsort(v, k, sizeof(*v), cmp_double);
	*med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	*lo = v[0];
	*hi = v[k - 1];
	*n = k;
	free(v);
	return true;
}

/* The union of the measure names of a side's reports. */
static json_t *
side_names(const json_t *reps)
{
	json_t *names = json_object(), *r, *v;
	const char *k;
	size_t i;

	json_array_foreach(reps, i, r)
		json_object_foreach(json_object_get(r, "measures"), k, v)
			json_object_set_new(names, k, json_boolean(
			    json_object_get(v, "p50") != NULL));
	return names;
}

static json_t *
side_info(const json_t *reps)
{
	json_t *runs = json_array(), *r, *first = json_array_get(reps, 0);
	size_t i;

	json_array_foreach(reps, i, r)
		json_array_append_new(runs, json_pack("{s:O*, s:O*, s:O*}",
		    "run_dir", json_object_get(r, "run_dir"), "status",
		    json_object_get(r, "status"), "seed",
		    json_object_get(r, "seed")));
	return json_pack("{s:O*, s:O*, s:o}", "scenario", json_object_get(first,
	    "scenario"), "params", json_object_get(first, "params"), "runs",
	    runs);
}

/* {"check name": "PASS" | "FAIL" | "UNKNOWN" | "mixed"} over a side. */
static json_t *
side_checks(const json_t *reps)
{
	json_t *out = json_object(), *r, *c;
	size_t i, j;

	json_array_foreach(reps, i, r)
		json_array_foreach(json_object_get(r, "checks"), j, c) {
			const char *n = json_string_value(json_object_get(c,
			    "name"));
			const char *res = json_string_value(json_object_get(c,
			    "result"));
			const char *had;

			if (n == NULL || res == NULL)
				continue;
			had = json_string_value(json_object_get(out, n));
			json_object_set_new(out, n, json_string(had == NULL ||
			    strcmp(had, res) == 0 ? res : "mixed"));
		}
	return out;
}

static json_t *
row(const json_t *a, const json_t *b, const char *name, const char *stat,
    const char *unit, enum measure_better better, double threshold,
    double *worst)
{
	double am, alo, ahi, bm, blo, bhi, spread = 0, ratio = NAN, delta = NAN;
	size_t an, bn;
	json_t *j;
	const char *flag = "";

	if (!compare_stat(a, name, stat, &am, &alo, &ahi, &an) ||
	    !compare_stat(b, name, stat, &bm, &blo, &bhi, &bn))
		return NULL;
	if (an > 1 && am != 0)
		spread = fmax(spread, (ahi - alo) / fabs(am) * 100);
	if (bn > 1 && bm != 0)
		spread = fmax(spread, (bhi - blo) / fabs(bm) * 100);
	if (am != 0) {
		ratio = bm / am;
		delta = (bm - am) / fabs(am) * 100;
	} else if (bm == 0) {
		ratio = 1;
		delta = 0;
	}
	if (isfinite(delta) && fabs(delta) > fmax(threshold, spread)) {
		double worse = better == MEASURE_LOWER ? delta :
		    better == MEASURE_HIGHER ? -delta : 0;

		flag = better == MEASURE_NONE ? "changed" : worse > 0 ?
		    "regression" : "improvement";
	} else if (!isfinite(delta) && bm != am)
		flag = "changed";	/* from 0 to something */
	if (isfinite(delta) && better != MEASURE_NONE) {
		double worse = better == MEASURE_LOWER ? delta : -delta;

		if (worse > *worst)
			*worst = worse;
	}
	j = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, "
	    "s:f, s:s, s:I, s:I}", "measure", name, "stat", stat, "unit", unit,
	    "better", better == MEASURE_LOWER ? "lower" : better ==
	    MEASURE_HIGHER ? "higher" : "none", "a", am, "b", bm, "a_min", alo,
	    "a_max", ahi, "b_min", blo, "b_max", bhi, "spread_pct", spread,
	    "flag", flag, "a_runs", (json_int_t)an, "b_runs", (json_int_t)bn);
	json_object_set_new(j, "ratio", isfinite(ratio) ? json_real(ratio) :
	    json_null());
	json_object_set_new(j, "delta_pct", isfinite(delta) ? json_real(delta) :
	    json_null());
	return j;
}

json_t *
compare_build(const json_t *a, const json_t *b, double threshold)
{
	json_t *an = side_names(a), *bn = side_names(b), *rows = json_array();
	json_t *only_a = json_array(), *only_b = json_array(), *flips =
	    json_array(), *ac = side_checks(a), *bc = side_checks(b), *v, *r;
	double lsum = 0, hsum = 0, worst = -INFINITY;
	size_t ln = 0, hn = 0, i;
	const char *k;
	json_t *out;

	json_object_foreach(an, k, v) {
		const struct measure_info *mi = measures_shown(k);
		json_t *first = NULL;
		const char *unit;

		if (json_object_get(bn, k) == NULL) {
			json_array_append_new(only_a, json_string(k));
			continue;
		}
		json_array_foreach(a, i, r)
			if ((first = json_object_get(json_object_get(r,
			    "measures"), k)) != NULL)
				break;
		unit = json_string_value(json_object_get(first, "unit"));
		unit = unit != NULL ? unit : mi->unit;
		for (const char *const *s = json_is_true(v) ? lat_stats : NULL;
		    ; s++) {
			const char *stat = json_is_true(v) ? *s : "value";
			bool cnt;
			json_t *rw;

			if (stat == NULL)
				break;
			cnt = strcmp(stat, "count") == 0;
			rw = row(a, b, k, stat, cnt ? "count" : unit, cnt ?
			    MEASURE_NONE : mi->better, threshold, &worst);
			if (rw != NULL) {
				double ratio = json_number_value(json_object_get(
				    rw, "ratio"));

				if (json_is_number(json_object_get(rw, "ratio")) &&
				    ratio > 0 && !cnt) {
					if (mi->better == MEASURE_LOWER)
						lsum += log(ratio), ln++;
					else if (mi->better == MEASURE_HIGHER)
						hsum += log(ratio), hn++;
				}
				json_array_append_new(rows, rw);
			}
			if (!json_is_true(v))
				break;
		}
	}
	json_object_foreach(bn, k, v)
		if (json_object_get(an, k) == NULL)
			json_array_append_new(only_b, json_string(k));
	json_object_foreach(ac, k, v) {
		json_t *bv = json_object_get(bc, k);

		if (bv != NULL && !json_equal(v, bv))
			json_array_append_new(flips, json_pack("{s:s, s:O, s:O}",
			    "name", k, "a", v, "b", bv));
	}
	out = json_pack("{s:f, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "threshold_pct", threshold, "a", side_info(a), "b", side_info(b),
	    "rows", rows, "only_a", only_a, "only_b", only_b,
	    "checks_flipped", flips);
	json_object_set_new(out, "geomean", json_pack("{s:o, s:o}",
	    "lower_is_better", json_pack("{s:o, s:I}", "ratio", ln ?
	    json_real(exp(lsum / (double)ln)) : json_null(), "measures",
	    (json_int_t)ln), "higher_is_better", json_pack("{s:o, s:I}",
	    "ratio", hn ? json_real(exp(hsum / (double)hn)) : json_null(),
	    "measures", (json_int_t)hn)));
	json_object_set_new(out, "worst_regression_pct", isfinite(worst) ?
	    json_real(worst) : json_null());
	json_decref(an);
	json_decref(bn);
	json_decref(ac);
	json_decref(bc);
	return out;
}

static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

json_t *
compare_load(const char *path, char *err, size_t errlen)
{
	char sub[1100], **names = NULL;
	size_t n = 0;
	json_t *reps = json_array(), *r;
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(sub, sizeof(sub), "%s/report.json", path);
	if (stat(sub, &st) == 0) {
		if ((r = bundle_report(path, err, errlen)) == NULL) {
			json_decref(reps);
			return NULL;
		}
		json_array_append_new(reps, r);
		return reps;
	}
	if ((d = opendir(path)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		json_decref(reps);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "latest") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s/report.json", path, de->d_name);
		if (stat(sub, &st) != 0)
			continue;
		names = xreallocarray(names, n + 1, sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, names[i]);
		if (reps != NULL && (r = bundle_report(sub, err, errlen)) != NULL)
			json_array_append_new(reps, r);
		else if (reps != NULL) {
			json_decref(reps);
			reps = NULL;
		}
		free(names[i]);
	}
	free(names);
	if (reps != NULL && json_array_size(reps) == 0) {
		snprintf(err, errlen, "%s: no report.json in it or in any "
		    "directory under it", path);
		json_decref(reps);
		return NULL;
	}
	return reps;
}

static const char *
side_label(const json_t *cmp, const char *side, char *buf, size_t len)
{
	const json_t *runs = json_object_get(json_object_get(cmp, side), "runs");
	const char *d = json_string_value(json_object_get(json_array_get(runs,
	    0), "run_dir"));

	d = d != NULL ? d : "?";
	if (json_array_size(runs) > 1)
		snprintf(buf, len, "%s (+%zu more: median)", d,
		    json_array_size(runs) - 1);
	else
		snprintf(buf, len, "%s", d);
	return buf;
}

static void
write_md(FILE *fp, const json_t *cmp)
{
	char a[NUM_BUF], b[NUM_BUF], buf[1200];
	const json_t *g = json_object_get(cmp, "geomean");
	json_t *r, *v;
	size_t i;

	fprintf(fp, "# compare\n\n| | |\n|---|---|\n| A | %s |\n",
	    side_label(cmp, "a", buf, sizeof(buf)));
	fprintf(fp, "| B | %s |\n", side_label(cmp, "b", buf, sizeof(buf)));
	fprintf(fp, "| flagged beyond | ±%s%% or the runs' own spread |\n",
	    num_exact(json_number_value(json_object_get(cmp, "threshold_pct")),
	    a, sizeof(a)));
	for (int d = 0; d < 2; d++) {
		const json_t *x = json_object_get(g, d ? "higher_is_better" :
		    "lower_is_better");

		fprintf(fp, "| geomean B/A, %s is better | ", d ? "higher" :
		    "lower");
		if (json_is_number(json_object_get(x, "ratio")))
			fprintf(fp, "%.4f over %lld measures |\n",
			    json_number_value(json_object_get(x, "ratio")),
			    (long long)json_integer_value(json_object_get(x,
			    "measures")));
		else
			fprintf(fp, "— |\n");
	}
	fprintf(fp, "\n## Measures\n\n| measure | stat | better | A | B | B/A | "
	    "delta | spread | flag |\n|---|---|---|--:|--:|--:|--:|--:|---|\n");
	json_array_foreach(json_object_get(cmp, "rows"), i, r) {
		const char *unit = json_string_value(json_object_get(r, "unit"));
		const char *flag = json_string_value(json_object_get(r, "flag"));

		fprintf(fp, "| %s | %s | %s | %s | %s | ",
		    json_string_value(json_object_get(r, "measure")),
		    json_string_value(json_object_get(r, "stat")),
		    json_string_value(json_object_get(r, "better")),
		    num_human(json_number_value(json_object_get(r, "a")), unit,
		    a, sizeof(a)), num_human(json_number_value(json_object_get(r,
		    "b")), unit, b, sizeof(b)));
		if (json_is_number(json_object_get(r, "ratio")))
			fprintf(fp, "%.3f | %+.1f%% | ", json_number_value(
			    json_object_get(r, "ratio")), json_number_value(
			    json_object_get(r, "delta_pct")));
		else
			fprintf(fp, "— | — | ");
		fprintf(fp, "%.1f%% | %s%s%s |\n", json_number_value(
		    json_object_get(r, "spread_pct")), *flag ? "**" : "", flag,
		    *flag ? "**" : "");
	}
	for (int s = 0; s < 2; s++) {
		const json_t *only = json_object_get(cmp, s ? "only_b" : "only_a");

		if (json_array_size(only) == 0)
			continue;
		fprintf(fp, "\nOnly in %s:", s ? "B" : "A");
		json_array_foreach(only, i, v)
			fprintf(fp, " `%s`", json_string_value(v));
		fprintf(fp, "\n");
	}
	fprintf(fp, "\n## Checks that flipped\n\n");
	if (json_array_size(json_object_get(cmp, "checks_flipped")) == 0)
		fprintf(fp, "None.\n");
	json_array_foreach(json_object_get(cmp, "checks_flipped"), i, r)
		fprintf(fp, "- %s: %s → %s\n", json_string_value(json_object_get(
		    r, "name")), json_string_value(json_object_get(r, "a")),
		    json_string_value(json_object_get(r, "b")));
	fprintf(fp, "\nThe delta is (B - A) / A.  A row is flagged when the "
	    "delta is beyond the threshold or beyond the runs' own spread "
	    "(max - min over a side's repeats / its median), whichever is "
	    "larger; docs/report.md lists each measure's unit and direction.\n");
}

/* A bar from the middle: the delta, clamped to ±100%. */
static void
delta_bar(FILE *fp, double delta, const char *flag)
{
	double w = fmin(fabs(delta), 100) * 0.6;

	fprintf(fp, "<svg class=\"delta\" width=\"122\" height=\"12\">"
	    "<line x1=\"61\" x2=\"61\" y1=\"0\" y2=\"12\" stroke=\"#888\"/>"
	    "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"8\" fill=\"%s\"/>"
	    "</svg>", delta < 0 ? 61 - w : 61, w, strcmp(flag, "regression") ==
	    0 ? "#c62828" : strcmp(flag, "improvement") == 0 ? "#1a7f37" :
	    "#888");
}

static void
write_html(FILE *fp, const json_t *cmp)
{
	char a[NUM_BUF], b[NUM_BUF], buf[1200];
	json_t *r;
	size_t i;

	page_start(fp, "compare");
	fputs("<h1>compare</h1>\n<table><tr><th>A</th><td>", fp);
	page_esc(fp, side_label(cmp, "a", buf, sizeof(buf)));
	fputs("</td></tr><tr><th>B</th><td>", fp);
	page_esc(fp, side_label(cmp, "b", buf, sizeof(buf)));
	fputs("</td></tr>\n", fp);
	for (int d = 0; d < 2; d++) {
		const json_t *x = json_object_get(json_object_get(cmp, "geomean"),
		    d ? "higher_is_better" : "lower_is_better");

		fprintf(fp, "<tr><th>geomean B/A, %s is better</th><td>",
		    d ? "higher" : "lower");
		if (json_is_number(json_object_get(x, "ratio")))
			fprintf(fp, "%.4f over %lld measures", json_number_value(
			    json_object_get(x, "ratio")), (long long)
			    json_integer_value(json_object_get(x, "measures")));
		else
			fputs("—", fp);
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n<h2>Measures</h2>\n<table><tr><th>measure</th><th>"
	    "stat</th><th>better</th><th class=\"n\">A</th><th class=\"n\">B"
	    "</th><th class=\"n\">B/A</th><th class=\"n\">delta</th><th></th>"
	    "<th>flag</th></tr>\n", fp);
	json_array_foreach(json_object_get(cmp, "rows"), i, r) {
		const char *unit = json_string_value(json_object_get(r, "unit"));
		const char *flag = json_string_value(json_object_get(r, "flag"));

		fprintf(fp, "<tr%s><td>", *flag ? " class=\"flag\"" : "");
		page_esc(fp, json_string_value(json_object_get(r, "measure")));
		fputs("</td><td>", fp);
		page_esc(fp, json_string_value(json_object_get(r, "stat")));
		fputs("</td><td>", fp);
		page_esc(fp, json_string_value(json_object_get(r, "better")));
		fputs("</td><td class=\"n\">", fp);
		page_esc(fp, num_human(json_number_value(json_object_get(r, "a")),
		    unit, a, sizeof(a)));
		fputs("</td><td class=\"n\">", fp);
		page_esc(fp, num_human(json_number_value(json_object_get(r, "b")),
		    unit, b, sizeof(b)));
		fputs("</td>", fp);
		if (json_is_number(json_object_get(r, "ratio"))) {
			fprintf(fp, "<td class=\"n\">%.3f</td><td class=\"n\">"
			    "%+.1f%%</td><td>", json_number_value(json_object_get(
			    r, "ratio")), json_number_value(json_object_get(r,
			    "delta_pct")));
			delta_bar(fp, json_number_value(json_object_get(r,
			    "delta_pct")), flag);
			fputs("</td>", fp);
		} else
			fputs("<td>—</td><td>—</td><td></td>", fp);
		fprintf(fp, "<td class=\"%s\">%s</td></tr>\n", strcmp(flag,
		    "regression") == 0 ? "FAIL" : "", flag);
	}
	fputs("</table>\n<h2>Checks that flipped</h2>\n<ul>\n", fp);
	json_array_foreach(json_object_get(cmp, "checks_flipped"), i, r) {
		fputs("<li>", fp);
		page_esc(fp, json_string_value(json_object_get(r, "name")));
		fputs(": ", fp);
		page_esc(fp, json_string_value(json_object_get(r, "a")));
		fputs(" → ", fp);
		page_esc(fp, json_string_value(json_object_get(r, "b")));
		fputs("</li>\n", fp);
	}
	fputs("</ul>\n", fp);
	page_end(fp);
}

int
compare_write(const json_t *cmp, const char *dir)
{
	char path[1100];
	FILE *fp;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/compare.json", dir);
	if (jdump_file(cmp, path) != 0)
		rc = -1;
	snprintf(path, sizeof(path), "%s/compare.md", dir);
	if ((fp = fopen(path, "w")) == NULL)
		return -1;
	write_md(fp, cmp);
	if (fclose(fp) != 0)
		rc = -1;
	snprintf(path, sizeof(path), "%s/compare.html", dir);
	if ((fp = fopen(path, "w")) == NULL)
		return -1;
	write_html(fp, cmp);
	if (fclose(fp) != 0)
		rc = -1;
	return rc;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: orchestrate compare RUN_A RUN_B [--out DIR] [--threshold PCT]\n"
"                   [--fail-above PCT]\n"
"\n"
"  RUN_A, RUN_B       a run bundle, or a directory of run bundles (repeats:\n"
"                     their median is compared, their min-max is the spread)\n"
"  --out DIR          where compare-<UTC stamp>/ is made (default results)\n"
"  --threshold PCT    flag a delta beyond PCT%% or the spread (default 20)\n"
"  --fail-above PCT   exit 1 when a measure got worse by more than PCT%%\n"
"\n"
"Writes compare.md, compare.json and compare.html; see docs/report.md.\n"
"exit status: 0, 1 a regression beyond --fail-above, 2 a usage or input\n"
"error.\n");
}

static bool
parse_pct(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && isfinite(*out) &&
	    *out >= 0;
}

int
compare_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "threshold", required_argument, NULL, 't' },
		{ "fail-above", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = "results";
	double threshold = COMPARE_THRESHOLD_PCT, fail_above = -1, worst;
	char err[1200], dir[1100], stamp[32];
	json_t *a, *b, *cmp;
	struct tm tm;
	time_t now;
	int ch, rc = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		switch (ch) {
		case 'o': out = optarg; break;
		case 't':
			if (!parse_pct(optarg, &threshold)) {
				fprintf(stderr, "orchestrate compare: --threshold: "
				    "expected a percentage >= 0, got \"%s\"\n",
				    optarg);
				return 2;
			}
			break;
		case 'f':
			if (!parse_pct(optarg, &fail_above)) {
				fprintf(stderr, "orchestrate compare: --fail-above: "
				    "expected a percentage >= 0, got \"%s\"\n",
				    optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	if (optind != argc - 2) {
		usage(stderr);
		return 2;
	}
	if ((a = compare_load(argv[optind], err, sizeof(err))) == NULL ||
	    (b = compare_load(argv[optind + 1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "orchestrate compare: %s\n", err);
		json_decref(a);
		return 2;
	}
	cmp = compare_build(a, b, threshold);
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	mkdir(out, 0755);
	snprintf(dir, sizeof(dir), "%s/compare-%s", out, stamp);
	for (int n = 2; mkdir(dir, 0755) == -1; n++) {
		if (errno != EEXIST || n > 99) {
			fprintf(stderr, "orchestrate compare: %s: %s\n", dir,
			    strerror(errno));
			rc = 2;
			goto done;
		}
		snprintf(dir, sizeof(dir), "%s/compare-%s-%d", out, stamp, n);
	}
	if (compare_write(cmp, dir) != 0) {
		fprintf(stderr, "orchestrate compare: cannot write into %s\n",
		    dir);
		rc = 2;
		goto done;
	}
	worst = json_number_value(json_object_get(cmp, "worst_regression_pct"));
	{
		json_t *r;
		size_t i, flagged = 0;

		json_array_foreach(json_object_get(cmp, "rows"), i, r)
			if (*json_string_value(json_object_get(r, "flag")) != '\0')
				flagged++;
		fprintf(stderr, "compare: %zu measures, %zu flagged, %zu checks "
		    "flipped; worst regression %+.1f%%\n  report: %s/compare.md\n",
		    json_array_size(json_object_get(cmp, "rows")), flagged,
		    json_array_size(json_object_get(cmp, "checks_flipped")),
		    worst, dir);
		if (fail_above >= 0 && json_is_number(json_object_get(cmp,
		    "worst_regression_pct")) && worst > fail_above) {
			json_array_foreach(json_object_get(cmp, "rows"), i, r) {
				double d = json_number_value(json_object_get(r,
				    "delta_pct"));
				const char *bt = json_string_value(
				    json_object_get(r, "better"));
				double w = strcmp(bt, "lower") == 0 ? d : strcmp(bt,
				    "higher") == 0 ? -d : 0;

				if (json_is_number(json_object_get(r,
				    "delta_pct")) && w > fail_above)
					fprintf(stderr, "  REGRESSION %s %s: "
					    "%+.1f%% (%s is better; above "
					    "%g%%)\n", json_string_value(
					    json_object_get(r, "measure")),
					    json_string_value(json_object_get(r,
					    "stat")), d, bt, fail_above);
			}
			rc = 1;
		}
	}
done:
	json_decref(a);
	json_decref(b);
	json_decref(cmp);
	return rc;
}

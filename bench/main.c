/*
 * main.c: build/bench, a small JMH-like harness over the families listed in
 * bench.h (BENCHMARKS.md has the figures and how to read them).
 *
 *   build/bench [-l] [--json] [--quick] [--samples N] [FILTER...]
 *
 * For each selected row: a time-boxed warm-up that also finds the batch
 * size n for which one batch takes about the target sample time, then S
 * samples, each the wall time of one batch of n ops divided by n.  The
 * figures are the median and the p99 (nearest rank) of those per-sample
 * means; ops/s is 1e9 / median.  A row with a baseline has its samples
 * interleaved with fresh samples of the baseline (alternating which goes
 * first), and its ratio is its median over the baseline's median from those
 * interleaved samples, so both sides see the same drift.  The baseline also
 * gets its own row, measured alone.  Timing uses CLOCK_MONOTONIC.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "bench.h"
#include "version.h"

volatile uint64_t bench_sink;

#define BENCH_FAMILY_PTR(f) &bench_family_##f,
static const struct bench_family *const bench_families[] = {
	BENCH_FAMILIES(BENCH_FAMILY_PTR)
};
#undef BENCH_FAMILY_PTR
#define NFAMILIES BENCH_NROWS(bench_families)

#define SAMPLES_MAX	10000
#define NS_PER_S	1000000000.0

struct opts {
	bool		 list;
	bool		 json;
	bool		 quick;
	int		 samples;
	uint64_t	 warm_ns;	/* warm-up time box per measured row */
	uint64_t	 target_ns;	/* aimed-for time of one sample */
};

struct result {
	bool		 ok;
	const char	*error;		/* why not ok */
	double		 median_ns;
	double		 p99_ns;
	uint64_t	 batch;		/* ops per sample */
	bool		 has_ratio;
	double		 base_median_ns; /* the baseline, interleaved */
	double		 ratio;
};

struct slot {
	const struct bench_row	*row;
	int			 base;	/* index of the baseline slot or -1 */
	bool			 selected;
	bool			 needed;	/* selected, or a selected row's baseline */
	bool			 done;
	struct result		 res;
};

/* One row being measured: its state, its batch size, its samples. */
struct meas {
	const struct bench_row	*row;
	void			*state;
	bool			 open;
	uint64_t		 n;
	double			*ns;	/* per-op ns of each sample */
};

static struct slot	*slots;
static size_t		 nslots;
static size_t		 name_width = 4;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: bench [-l] [--json] [--quick] [--samples N] [FILTER...]\n"
	    "  FILTER     case-insensitive substring of a row name (any matches)\n"
	    "  -l         list the selected rows and exit\n"
	    "  --json     print a JSON array of results instead of a table\n"
	    "  --quick    short warm-up and samples (a smoke test, not figures)\n"
	    "  --samples  samples per row (default 20, 5 with --quick)\n"
	    "  --help, --version\n");
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median and nearest-rank p99 of v[0..n) (sorts v). */
static void
stats(double *v, size_t n, double *median, double *p99)
{
	size_t k;

	qsort(v, n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	k = (size_t)ceil(0.99 * (double)n);
	*p99 = v[k > 0 ? k - 1 : 0];
}

static int
slot_find(const char *name)
{
	for (size_t i = 0; i < nslots; i++)
		if (strcmp(slots[i].row->name, name) == 0)
			return (int)i;
	return -1;
}

/*
 * Flatten the families into slots and check what a new family could get
 * wrong: names prefixed by the family, unique, baselines that exist and do
 * not themselves have a baseline.
 */
static int
slots_build(void)
{
	size_t n = 0, k = 0;

	for (size_t f = 0; f < NFAMILIES; f++)
		n += bench_families[f]->nrows;
	slots = calloc(n ? n : 1, sizeof(*slots));
	if (slots == NULL)
		return -1;
	for (size_t f = 0; f < NFAMILIES; f++) {
		const struct bench_family *fam = bench_families[f];
		size_t plen = strlen(fam->name);

		for (size_t r = 0; r < fam->nrows; r++) {
			const struct bench_row *row = &fam->rows[r];

			if (strncmp(row->name, fam->name, plen) != 0 ||
			    row->name[plen] != '.' || row->run == NULL) {
				fprintf(stderr, "bench: row %s: not %s.<op> "
				    "or no run()\n", row->name, fam->name);
				return -1;
			}
			slots[k].row = row;
			slots[k].base = -1;
			nslots = ++k;
			if (slot_find(row->name) != (int)k - 1) {
				fprintf(stderr, "bench: row %s twice\n",
				    row->name);
				return -1;
			}
		}
	}
	for (size_t i = 0; i < nslots; i++) {
		const char *b = slots[i].row->baseline;

		if (b == NULL)
			continue;
		slots[i].base = slot_find(b);
		if (slots[i].base == -1 || (size_t)slots[i].base == i ||
		    slots[slots[i].base].row->baseline != NULL) {
			fprintf(stderr, "bench: row %s: baseline %s is not a "
			    "row without a baseline\n", slots[i].row->name, b);
			return -1;
		}
	}
	return 0;
}

static void
slots_select(char **filters, int nfilters)
{
	for (size_t i = 0; i < nslots; i++) {
		bool sel = nfilters == 0;

		for (int f = 0; f < nfilters && !sel; f++)
			sel = strcasestr(slots[i].row->name, filters[f]) != NULL;
		slots[i].selected = sel;
	}
	for (size_t i = 0; i < nslots; i++) {
		if (!slots[i].selected)
			continue;
		slots[i].needed = true;
		if (slots[i].base != -1)
			slots[slots[i].base].needed = true;
	}
	for (size_t i = 0; i < nslots; i++) {
		size_t len = strlen(slots[i].row->name);

		if (slots[i].needed && len > name_width)
			name_width = len;
	}
}

static int
meas_open(struct meas *m, const struct bench_row *row, int samples)
{
	memset(m, 0, sizeof(*m));
	m->row = row;
	m->ns = calloc((size_t)samples, sizeof(*m->ns));
	if (m->ns == NULL)
		return -1;
	m->open = true;	/* teardown runs even after a failed setup */
	if (row->setup != NULL && row->setup(&m->state, row->param) == -1)
		return -1;
	return 0;
}

static void
meas_close(struct meas *m)
{
	if (m->open && m->state != NULL && m->row->teardown != NULL)
		m->row->teardown(m->state);
	free(m->ns);
	memset(m, 0, sizeof(*m));
}

/* Run one batch of n ops; its wall time in ns, or UINT64_MAX on failure. */
static uint64_t
batch(struct meas *m, uint64_t n)
{
	uint64_t t0, t1;
	int rc;

	if (m->row->prepare != NULL && m->row->prepare(m->state, n) == -1)
		return UINT64_MAX;
	t0 = now_ns();
	rc = m->row->run(m->state, n);
	t1 = now_ns();
	if (rc == -1)
		return UINT64_MAX;
	return t1 > t0 ? t1 - t0 : 1;
}

/*
 * Warm up for warm_ns (at least one batch): double the batch until it
 * takes 1 ms, then keep running batches of that size; the last one's
 * per-op time sets n for the target sample time.
 */
static int
calibrate(struct meas *m, const struct opts *o)
{
	uint64_t n = 1, end = now_ns() + o->warm_ns, t;
	double per_op;

	for (;;) {
		if ((t = batch(m, n)) == UINT64_MAX)
			return -1;
		per_op = (double)t / (double)n;
		if (now_ns() >= end)
			break;
		if (t < 1000000u && n < (UINT64_C(1) << 40))
			n *= 2;
	}
	per_op = per_op > 0.01 ? per_op : 0.01;
	m->n = (uint64_t)((double)o->target_ns / per_op);
	if (m->n < 1)
		m->n = 1;
	return 0;
}

static int
sample(struct meas *m, int i)
{
	uint64_t t = batch(m, m->n);

	if (t == UINT64_MAX)
		return -1;
	m->ns[i] = (double)t / (double)m->n;
	return 0;
}

static void print_row(const struct slot *, const struct opts *);

/* Measure slot i (after its baseline, if any, has had its own row). */
static void
run_slot(size_t i, const struct opts *o)
{
	struct slot *s = &slots[i];
	struct meas m, mb;
	bool with_base = s->base != -1;
	double pm;
	int k;

	if (s->done)
		return;
	if (with_base)
		run_slot((size_t)s->base, o);
	s->done = true;
	memset(&mb, 0, sizeof(mb));
	s->res.error = "setup failed";
	if (meas_open(&m, s->row, o->samples) == -1 || (with_base &&
	    meas_open(&mb, slots[s->base].row, o->samples) == -1))
		goto out;
	s->res.error = "operation failed";
	if (calibrate(&m, o) == -1 || (with_base && calibrate(&mb, o) == -1))
		goto out;
	for (k = 0; k < o->samples; k++) {
		if (with_base && k % 2 == 1 && sample(&mb, k) == -1)
			goto out;
		if (sample(&m, k) == -1)
			goto out;
		if (with_base && k % 2 == 0 && sample(&mb, k) == -1)
			goto out;
	}
	stats(m.ns, (size_t)o->samples, &s->res.median_ns, &s->res.p99_ns);
	s->res.batch = m.n;
	if (with_base) {
		stats(mb.ns, (size_t)o->samples, &s->res.base_median_ns, &pm);
		s->res.has_ratio = true;
		s->res.ratio = s->res.median_ns / s->res.base_median_ns;
	}
	s->res.ok = true;
	s->res.error = NULL;
out:
	meas_close(&m);
	meas_close(&mb);
	if (!o->json)
		print_row(s, o);
}

static void
fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 100)
		snprintf(buf, len, "%.2f", ns);
	else if (ns < 10000)
		snprintf(buf, len, "%.1f", ns);
	else
		snprintf(buf, len, "%.0f", ns);
}

static void
fmt_rate(char *buf, size_t len, double per_s)
{
	if (per_s >= 1e6)
		snprintf(buf, len, "%.2f M", per_s / 1e6);
	else if (per_s >= 1e3)
		snprintf(buf, len, "%.1f k", per_s / 1e3);
	else
		snprintf(buf, len, "%.1f  ", per_s);
}

static void
print_header(const struct opts *o)
{
	struct utsname u;
	char when[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (uname(&u) == -1)
		memset(&u, 0, sizeof(u));
	printf("# %s %s %s, %ld cpus online, %s%s\n", u.sysname, u.release,
	    u.machine, sysconf(_SC_NPROCESSORS_ONLN), when,
	    o->quick ? " (--quick: a smoke run, not figures)" : "");
	printf("# %d samples per row of ~%.0f ms each after %.2f s warm-up; "
	    "per-op ns over samples\n", o->samples,
	    (double)o->target_ns / 1e6, (double)o->warm_ns / 1e9);
	printf("%-*s  %12s  %12s  %10s  %s\n", (int)name_width, "row",
	    "median ns", "p99 ns", "ops/s", "vs baseline (interleaved)");
}

static void
print_row(const struct slot *s, const struct opts *o)
{
	char med[32], p99[32], rate[32];

	(void)o;
	if (!s->res.ok) {
		printf("%-*s  FAILED: %s\n", (int)name_width, s->row->name,
		    s->res.error);
		fflush(stdout);
		return;
	}
	fmt_ns(med, sizeof(med), s->res.median_ns);
	fmt_ns(p99, sizeof(p99), s->res.p99_ns);
	fmt_rate(rate, sizeof(rate), NS_PER_S / s->res.median_ns);
	printf("%-*s  %12s  %12s  %10s", (int)name_width, s->row->name, med,
	    p99, rate);
	if (s->res.has_ratio)
		printf("  x%.2f of %s", s->res.ratio, s->row->baseline);
	printf("\n");
	fflush(stdout);
}

/* Row names are plain ASCII, but escape anyway so the output always parses. */
static void
json_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void
print_json(void)
{
	bool first = true;

	printf("[");
	for (size_t i = 0; i < nslots; i++) {
		const struct slot *s = &slots[i];

		if (!s->done)
			continue;
		printf("%s\n  {\"name\": ", first ? "" : ",");
		first = false;
		json_str(s->row->name);
		if (!s->res.ok) {
			printf(", \"error\": ");
			json_str(s->res.error);
			printf("}");
			continue;
		}
		printf(", \"median_ns\": %.3f, \"p99_ns\": %.3f, "
		    "\"ops_per_s\": %.1f, \"ops_per_sample\": %llu",
		    s->res.median_ns, s->res.p99_ns,
		    NS_PER_S / s->res.median_ns,
		    (unsigned long long)s->res.batch);
		if (s->res.has_ratio) {
			printf(", \"baseline\": ");
			json_str(s->row->baseline);
			printf(", \"baseline_median_ns\": %.3f, \"ratio\": %.4f",
			    s->res.base_median_ns, s->res.ratio);
		}
		printf("}");
	}
	printf("\n]\n");
}

int
main(int argc, char **argv)
{
	struct opts o = { .samples = 0 };
	char **filters;
	int nfilters = 0, rc = 0;
	bool only_args = false, any = false;

	filters = calloc((size_t)argc + 1, sizeof(*filters));
	if (filters == NULL)
		return 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (only_args || a[0] != '-') {
			filters[nfilters++] = argv[i];
			continue;
		}
		if (strcmp(a, "--") == 0)
			only_args = true;
		else if (strcmp(a, "-l") == 0 || strcmp(a, "--list") == 0)
			o.list = true;
		else if (strcmp(a, "--json") == 0)
			o.json = true;
		else if (strcmp(a, "--quick") == 0)
			o.quick = true;
		else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			free(filters);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			VERSION_PRINT("bench");
			free(filters);
			return 0;
		} else if (strcmp(a, "--samples") == 0 ||
		    strncmp(a, "--samples=", 10) == 0) {
			char *end;
			long n;

			v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] :
			    "");
			n = strtol(v, &end, 10);
			if (*v == '\0' || *end != '\0' || n < 1 ||
			    n > SAMPLES_MAX) {
				fprintf(stderr, "bench: --samples wants 1..%d\n",
				    SAMPLES_MAX);
				free(filters);
				return 2;
			}
			o.samples = (int)n;
		} else {
			fprintf(stderr, "bench: unknown option %s\n", a);
			usage(stderr);
			free(filters);
			return 2;
		}
	}
	if (o.samples == 0)
		o.samples = o.quick ? 5 : 20;
	o.warm_ns = o.quick ? 10000000u : 200000000u;
	o.target_ns = o.quick ? 2000000u : 20000000u;

	if (slots_build() == -1) {
		free(slots);
		free(filters);
		return 1;
	}
	slots_select(filters, nfilters);
	for (size_t i = 0; i < nslots; i++)
		any = any || slots[i].needed;
	if (!any) {
		fprintf(stderr, "bench: no row matches\n");
		rc = 1;
	} else if (o.list) {
		for (size_t i = 0; i < nslots; i++) {
			if (!slots[i].needed)
				continue;
			printf("%s", slots[i].row->name);
			if (slots[i].row->baseline != NULL)
				printf("  (baseline %s)",
				    slots[i].row->baseline);
			else if (!slots[i].selected)
				printf("  (runs as a baseline)");
			printf("\n");
		}
	} else {
		if (!o.json)
			print_header(&o);
		for (size_t i = 0; i < nslots; i++)
			if (slots[i].needed)
				run_slot(i, &o);
		if (o.json)
			print_json();
		for (size_t i = 0; i < nslots; i++)
			if (slots[i].done && !slots[i].res.ok)
				rc = 1;
	}
	free(slots);
	free(filters);
	return rc;
}

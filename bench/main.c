/*
 * main.c: build/bench, a small JMH-like harness over the families listed in
 * bench.h (BENCHMARKS.md has the figures and how to read them).
 *
 *   build/bench [-l] [--json] [--quick] [--samples N]
 *               [--mebibytes N | --file PATH] [--passes K] [FILTER...]
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
 *
 * Throughput rows (bench.h) skip calibration: every pass over the input is
 * one timed op, the passes of a family's rows are interleaved, and the
 * figure is the best pass in MiB/s; a baseline's ratio is taken between
 * the two best passes.
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
struct bench_input bench_input;

#define BENCH_FAMILY_PTR(f) &bench_family_##f,
static const struct bench_family *const bench_families[] = {
	BENCH_FAMILIES(BENCH_FAMILY_PTR)
};
#undef BENCH_FAMILY_PTR
#define NFAMILIES BENCH_NROWS(bench_families)

#define SAMPLES_MAX	10000
#define PASSES_MAX	1000
#define MEBIBYTES_MAX	16384
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
	/* A throughput row: */
	bool		 throughput;
	int		 passes;
	double		 best_ns;	/* the fastest pass */
	uint64_t	 bytes;		/* one pass */
	double		 mib_s;		/* bytes / best, in MiB/s */
	double		 cpu_mib_s;	/* bytes / best thread CPU time */
	double		 base_mib_s;
	char		 note[sizeof(((struct bench_pass *)0)->note)];
};

struct slot {
	const struct bench_row	*row;
	size_t			 fam;	/* index in bench_families */
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
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: bench [-l] [--json] [--quick] [--samples N]\n"
	    "             [--mebibytes N | --file PATH] [--passes K] [FILTER...]\n"
	    "  FILTER       case-insensitive substring of a row name (any matches)\n"
	    "  -l           list the selected rows and exit\n"
	    "  --json       print a JSON array of results instead of a table\n"
	    "  --quick      short warm-up and samples (a smoke test, not figures)\n"
	    "  --samples    samples per row (default 20, 5 with --quick)\n"
	    "  throughput rows (FastCdc): one op is one pass over an input of\n"
	    "  --mebibytes  N MiB of seeded random bytes (default 64, 4 with\n"
	    "               --quick; 1..%d)\n"
	    "  --file       PATH's bytes instead\n"
	    "  --passes     best of K passes (default 3, 1 with --quick)\n"
	    "  --help, --version\n", MEBIBYTES_MAX);
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
			slots[k].fam = f;
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
static void run_pass_group(size_t, const struct opts *);

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
	if (s->row->param == BENCH_PASS) {
		run_pass_group(i, o);
		return;
	}
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

/*
 * Every needed throughput row of slot first's family, together: pass k of
 * each row in turn, then pass k + 1, so drift hits them alike.  Each pass
 * is one op timed alone; the figure is the best pass.  The thread's CPU
 * time of each pass is taken too: on a loaded shared box the time this
 * process waited for a core drops out of it.
 */
static void
run_pass_group(size_t first, const struct opts *o)
{
	size_t fam = slots[first].fam, ng = 0, *idx;
	int passes = bench_input.passes;
	struct meas *m;
	double *best_cpu;
	bool *ok;

	idx = calloc(nslots, sizeof(*idx));
	m = calloc(nslots, sizeof(*m));
	ok = calloc(nslots, sizeof(*ok));
	best_cpu = calloc(nslots, sizeof(*best_cpu));
	if (idx == NULL || m == NULL || ok == NULL || best_cpu == NULL) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < nslots; i++)
		if (slots[i].needed && !slots[i].done && slots[i].fam == fam &&
		    slots[i].row->param == BENCH_PASS)
			idx[ng++] = i;
	for (size_t g = 0; g < ng; g++) {
		struct slot *s = &slots[idx[g]];

		s->done = true;
		s->res.throughput = true;
		s->res.passes = passes;
		s->res.error = "setup failed";
		ok[g] = meas_open(&m[g], s->row, passes) == 0;
		if (ok[g])
			s->res.error = NULL;
	}
	for (int k = 0; k < passes; k++) {
		for (size_t g = 0; g < ng; g++) {
			uint64_t t, c0;

			if (!ok[g])
				continue;
			c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			if ((t = batch(&m[g], 1)) == UINT64_MAX) {
				ok[g] = false;
				slots[idx[g]].res.error = "operation failed";
				continue;
			}
			c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			m[g].ns[k] = (double)t;
			if (k == 0 || (double)c0 < best_cpu[g])
				best_cpu[g] = c0 > 0 ? (double)c0 : 1;
		}
	}
	for (size_t g = 0; g < ng; g++) {
		struct result *r = &slots[idx[g]].res;
		const struct bench_pass *bp = m[g].state;

		if (!ok[g])
			continue;
		stats(m[g].ns, (size_t)passes, &r->median_ns, &r->p99_ns);
		r->best_ns = m[g].ns[0];	/* sorted */
		r->batch = 1;
		if (bp == NULL || bp->bytes == 0) {
			slots[idx[g]].res.error = "no bytes (a state without "
			    "a struct bench_pass)";
			continue;
		}
		r->bytes = bp->bytes;
		r->mib_s = (double)r->bytes / (1 << 20) / (r->best_ns / NS_PER_S);
		r->cpu_mib_s = (double)r->bytes / (1 << 20) /
		    (best_cpu[g] / NS_PER_S);
		memcpy(r->note, bp->note, sizeof(r->note));
		r->note[sizeof(r->note) - 1] = '\0';
		r->ok = true;
	}
	for (size_t g = 0; g < ng; g++) {
		struct slot *s = &slots[idx[g]];

		if (s->res.ok && s->base != -1 && slots[s->base].res.ok &&
		    slots[s->base].res.throughput) {
			s->res.has_ratio = true;
			s->res.base_median_ns = slots[s->base].res.best_ns;
			s->res.ratio = s->res.best_ns / s->res.base_median_ns;
			s->res.base_mib_s = slots[s->base].res.mib_s;
		}
		meas_close(&m[g]);
	}
	if (!o->json && ng > 0) {
		printf("# %s: %llu bytes (%.1f MiB) of %s, best of %d pass%s; "
		    "one op = one pass\n", bench_families[fam]->name,
		    (unsigned long long)slots[idx[0]].res.bytes,
		    (double)slots[idx[0]].res.bytes / (1 << 20),
		    bench_input.file != NULL ? bench_input.file :
		    "seeded random bytes", passes, passes == 1 ? "" : "es");
		for (size_t g = 0; g < ng; g++)
			print_row(&slots[idx[g]], o);
	}
	free(idx);
	free(m);
	free(ok);
	free(best_cpu);
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
	size_t i;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (uname(&u) == -1)
		memset(&u, 0, sizeof(u));
	printf("# %s %s %s, %ld cpus online, %s%s\n", u.sysname, u.release,
	    u.machine, sysconf(_SC_NPROCESSORS_ONLN), when,
	    o->quick ? " (--quick: a smoke run, not figures)" : "");
	for (i = 0; i < nslots; i++)
		if (slots[i].needed && slots[i].row->param != BENCH_PASS)
			break;
	if (i == nslots)
		return;		/* throughput rows only: they say their own */
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
	if (s->res.throughput) {
		printf("%-*s  %9.1f MiB/s  best %9.2f ms  median %9.2f ms  "
		    "cpu %9.1f MiB/s", (int)name_width, s->row->name,
		    s->res.mib_s, s->res.best_ns / 1e6, s->res.median_ns / 1e6,
		    s->res.cpu_mib_s);
		if (s->res.has_ratio)
			printf("  x%.2f the MiB/s of %s",
			    s->res.mib_s / s->res.base_mib_s, s->row->baseline);
		if (s->res.note[0] != '\0')
			printf("  (%s)", s->res.note);
		printf("\n");
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
		if (s->res.throughput) {
			printf(", \"mib_s\": %.1f, \"cpu_mib_s\": %.1f, "
			    "\"best_ns\": %.0f, \"bytes\": %llu, "
			    "\"passes\": %d", s->res.mib_s, s->res.cpu_mib_s,
			    s->res.best_ns, (unsigned long long)s->res.bytes,
			    s->res.passes);
			if (s->res.has_ratio)
				printf(", \"baseline_mib_s\": %.1f",
				    s->res.base_mib_s);
			if (s->res.note[0] != '\0') {
				printf(", \"note\": ");
				json_str(s->res.note);
			}
		}
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

/*
 * a is "--name" (value in the next argument) or "--name=VALUE": true, with
 * *v the value ("" when missing), else false.
 */
static bool
opt_value(const char *a, const char *name, int argc, char **argv, int *i,
    const char **v)
{
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return false;
	if (a[n] == '=')
		*v = a + n + 1;
	else
		*v = *i + 1 < argc ? argv[++*i] : "";
	return true;
}

/* A decimal 1..max, digits only; 0 when it is not one. */
static uint64_t
num_arg(const char *v, uint64_t max)
{
	uint64_t n = 0;

	if (*v == '\0')
		return 0;
	for (; *v != '\0'; v++) {
		if (*v < '0' || *v > '9')
			return 0;
		n = n * 10 + (uint64_t)(*v - '0');
		if (n > max)
			return 0;
	}
	return n;
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
		} else if (opt_value(a, "--samples", argc, argv, &i, &v)) {
			if ((o.samples = (int)num_arg(v, SAMPLES_MAX)) == 0) {
				fprintf(stderr, "bench: --samples wants 1..%d\n",
				    SAMPLES_MAX);
				free(filters);
				return 2;
			}
		} else if (opt_value(a, "--passes", argc, argv, &i, &v)) {
			if ((bench_input.passes = (int)num_arg(v,
			    PASSES_MAX)) == 0) {
				fprintf(stderr, "bench: --passes wants 1..%d\n",
				    PASSES_MAX);
				free(filters);
				return 2;
			}
		} else if (opt_value(a, "--mebibytes", argc, argv, &i, &v)) {
			if ((bench_input.mebibytes = num_arg(v,
			    MEBIBYTES_MAX)) == 0) {
				fprintf(stderr, "bench: --mebibytes wants "
				    "1..%d\n", MEBIBYTES_MAX);
				free(filters);
				return 2;
			}
		} else if (opt_value(a, "--file", argc, argv, &i, &v)) {
			if (*v == '\0') {
				fprintf(stderr, "bench: --file wants a path\n");
				free(filters);
				return 2;
			}
			bench_input.file = v;
		} else {
			fprintf(stderr, "bench: unknown option %s\n", a);
			usage(stderr);
			free(filters);
			return 2;
		}
	}
	if (o.samples == 0)
		o.samples = o.quick ? 5 : 20;
	if (bench_input.file != NULL && bench_input.mebibytes != 0) {
		fprintf(stderr, "bench: --file or --mebibytes, not both\n");
		free(filters);
		return 2;
	}
	if (bench_input.file == NULL && bench_input.mebibytes == 0)
		bench_input.mebibytes = o.quick ? 4 : 64;
	if (bench_input.passes == 0)
		bench_input.passes = o.quick ? 1 : 3;
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

/*
 * b3speed.c: BLAKE3 and the Bao outboard pass, per code path, beside one
 * raw SHA-256 pass over the same bytes in the same run (the baseline issue
 * 27's bar is stated against), on one core. The bench family FastCdc in
 * build/bench has the rows of record for the best path; this program shows
 * what each path (portable, SSE4.1, AVX2, AVX-512) gives on this host.
 *
 * A seeded random array of --mebibytes N (64); every pass hashes it with
 * SHA-256 (OpenSSL), then, for each path the CPU has, BLAKE3 one shot,
 * BLAKE3 fed 1 MiB at a time, and the outboard at g = 4 (identity and
 * outboard in one pass); --passes K (3) interleaved, best of K. Rates by
 * the wall clock (mib_s) and by this thread's CPU time (cpu_mib_s: on a
 * shared, loaded box the time this process was not running drops out).
 * One JSON line per row on stdout:
 *
 *   {"row":"blake3","path":"avx512","mib_s":X,"cpu_mib_s":Y,
 *    "over_sha256":R,"over_blake3":B}
 *
 * (the ratios by CPU time, against the same run's SHA-256 and one-shot
 * BLAKE3 on the same path).
 *
 * usage: b3speed [--mebibytes N] [--passes K]    (taskset -c 1 for one core)
 *        b3speed --help | --version
 *
 * Exit 0, 2 on a usage error.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bao.h"
#include "blake3.h"
#include "sha256.h"
#include "version.h"

static const char *const paths[] = { "portable", "sse41", "avx2", "avx512" };
#define NPATHS	(sizeof(paths) / sizeof(paths[0]))

enum { ROW_ONESHOT, ROW_STREAM, ROW_OUTBOARD, NROWS };
static const char *const rows[NROWS] = { "blake3", "blake3_1mib_updates",
    "outboard_g4" };

/* Wall and CPU seconds now. */
struct stamp {
	double	wall, cpu;
};

static struct stamp
now(void)
{
	struct timespec w, c;

	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	return (struct stamp){ (double)w.tv_sec + (double)w.tv_nsec * 1e-9,
	    (double)c.tv_sec + (double)c.tv_nsec * 1e-9 };
}

/* Keep the best rates (bytes a second) of a run of n bytes since t. */
static void
best_of(double best[2], size_t n, struct stamp t)
{
	struct stamp e = now();

	if (n / (e.wall - t.wall) > best[0])
		best[0] = n / (e.wall - t.wall);
	if (n / (e.cpu - t.cpu) > best[1])
		best[1] = n / (e.cpu - t.cpu);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: b3speed [--mebibytes N] [--passes K]\n"
	    "  BLAKE3 and the Bao outboard pass per code path beside one raw\n"
	    "  SHA-256 pass, best of K (64 MiB, 3 passes)\n"
	    "  --help, --version\n");
}

/* One timed run of row on the active path. */
static void
run_row(int row, const uint8_t *p, size_t n, uint8_t *ob, double best[2])
{
	uint8_t out[32];
	struct stamp t = now();

	if (row == ROW_ONESHOT) {
		blake3_hash(p, n, out);
	} else if (row == ROW_STREAM) {
		struct blake3 h;

		blake3_init(&h);
		for (size_t i = 0; i < n; i += 1 << 20)
			blake3_update(&h, p + i, n - i < (1 << 20) ? n - i :
			    1 << 20);
		blake3_final(&h, out, sizeof(out));
	} else {
		bao_outboard(p, n, BAO_GROUP_LOG_DEFAULT, out, ob);
	}
	best_of(best, n, t);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mebibytes", required_argument, NULL, 'm' },
		{ "passes", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	double best[NPATHS][NROWS][2] = { { { 0 } } }, sha[2] = { 0 };
	unsigned long mib = 64, passes = 3;
	uint8_t *p, *ob, dig[32];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t n;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'm':
		case 'k': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end != '\0' || v == 0 || v > 65536) {
				fprintf(stderr, "b3speed: bad number: %s\n",
				    optarg);
				return 2;
			}
			*(c == 'm' ? &mib : &passes) = v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("b3speed %s\n", version_sha);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	n = (size_t)mib << 20;
	p = malloc(n);
	ob = malloc(bao_outboard_len(n, BAO_GROUP_LOG_DEFAULT));
	if (p == NULL || ob == NULL) {
		fprintf(stderr, "b3speed: out of memory for %lu MiB\n", mib);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
	for (unsigned long k = 0; k < passes; k++) {
		struct stamp t = now();

		sha256_digest(p, n, dig);
		best_of(sha, n, t);
		for (size_t q = 0; q < NPATHS; q++) {
			if (blake3_use(paths[q]) != 0)
				continue;
			for (int r = 0; r < NROWS; r++)
				run_row(r, p, n, ob, best[q][r]);
		}
	}
	blake3_use(NULL);
	printf("{\"row\":\"sha256\",\"path\":\"openssl\",\"mib_s\":%.0f,"
	    "\"cpu_mib_s\":%.0f,\"mebibytes\":%lu,\"passes\":%lu}\n",
	    sha[0] / 1048576, sha[1] / 1048576, mib, passes);
	for (size_t q = 0; q < NPATHS; q++)
		for (int r = 0; r < NROWS; r++)
			if (best[q][r][0] > 0)
				printf("{\"row\":\"%s\",\"path\":\"%s\","
				    "\"mib_s\":%.0f,\"cpu_mib_s\":%.0f,"
				    "\"over_sha256\":%.2f,"
				    "\"over_blake3\":%.2f}\n", rows[r],
				    paths[q], best[q][r][0] / 1048576,
				    best[q][r][1] / 1048576,
				    best[q][r][1] / sha[1],
				    best[q][r][1] / best[q][ROW_ONESHOT][1]);
	free(ob);
	free(p);
	sha256_free();
	return 0;
}

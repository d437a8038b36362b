/*
 * bench_fastcdc.c: the FastCdc family, after seed 000's FastCdcBench
 * (PD-Q-PRF-07, P2-B-05): throughput rows over one large input, best of
 * --passes (bench.h says how throughput rows run).
 *
 *   FastCdc.memcpy       memcpy of the input (same-run baseline)
 *   FastCdc.sha256       one SHA-256 over the whole input (same-run baseline)
 *   FastCdc.cuts         FastCDC cut points only (16/64/256 KiB, level 2)
 *   FastCdc.cuts_sha256  cut points plus a SHA-256 per chunk (chunk ids)
 *   FastCdc.blake3       BLAKE3 over the whole input (a blob's identity)
 *   FastCdc.outboard     identity plus Bao outboard (16 KiB groups), one pass
 *
 * The input is --mebibytes N of splitmix64 bytes from a fixed seed (64 by
 * default, 4 with --quick) or --file PATH, read once and shared by every
 * row.  The cut rows note the chunk count and mean chunk size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bao.h"
#include "bench.h"
#include "blake3.h"
#include "fastcdc.h"
#include "fileio.h"
#include "sha256.h"

#define INPUT_SEED	27

/* The input, made on first use and kept for the process. */
static uint8_t	*input;
static size_t	 input_len;

struct cdc_state {
	struct bench_pass pass;		/* first: the harness reads it */
	uint8_t		*dst;		/* memcpy's destination */
	uint8_t		*outboard;
};

static int
input_load(void)
{
	struct stat st;
	uint64_t s = INPUT_SEED;
	int fd;

	if (input != NULL)
		return 0;
	if (bench_input.file != NULL) {
		if ((fd = open(bench_input.file, O_RDONLY)) == -1 ||
		    fstat(fd, &st) == -1) {
			fprintf(stderr, "bench: %s: %s\n", bench_input.file,
			    strerror(errno));
			if (fd != -1)
				close(fd);
			return -1;
		}
		input_len = (size_t)st.st_size;
		if (input_len == 0 || (input = malloc(input_len)) == NULL ||
		    fileio_read_all(fd, input, input_len) == -1) {
			fprintf(stderr, "bench: %s: empty, too large or "
			    "unreadable\n", bench_input.file);
			close(fd);
			free(input);
			input = NULL;
			return -1;
		}
		close(fd);
		return 0;
	}
	input_len = (size_t)bench_input.mebibytes << 20;
	if ((input = malloc(input_len)) == NULL) {
		fprintf(stderr, "bench: no memory for %zu bytes\n", input_len);
		return -1;
	}
	for (size_t i = 0; i < input_len; i += 8) {
		uint64_t z = rng_splitmix64(&s);

		memcpy(input + i, &z, 8);	/* input_len is 8-aligned */
	}
	return 0;
}

static int
cdc_setup(void **state, size_t param)
{
	struct cdc_state *st;

	uint8_t md[SHA256_LEN];

	(void)param;
	if (input_load() == -1 || (st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	/* Fetch the digest and pick the BLAKE3 path outside the timing. */
	sha256_digest(input, 1, md);
	blake3_hash(input, 1, md);
	st->pass.bytes = input_len;
	*state = st;
	return 0;
}

static int
memcpy_setup(void **state, size_t param)
{
	struct cdc_state *st;

	if (cdc_setup(state, param) == -1)
		return -1;
	st = *state;
	if ((st->dst = malloc(input_len)) == NULL)
		return -1;
	memset(st->dst, 1, input_len);	/* fault the pages in now */
	return 0;
}

static int
outboard_setup(void **state, size_t param)
{
	struct cdc_state *st;
	size_t len;

	if (cdc_setup(state, param) == -1)
		return -1;
	st = *state;
	len = (size_t)bao_outboard_len(input_len, BAO_GROUP_LOG_DEFAULT);
	if ((st->outboard = malloc(len)) == NULL)
		return -1;
	memset(st->outboard, 1, len);
	return 0;
}

static void
cdc_teardown(void *state)
{
	struct cdc_state *st = state;

	free(st->dst);
	free(st->outboard);
	free(st);
}

/* The cut rows' note: the chunk count and mean chunk size. */
static void
cdc_note(struct cdc_state *st, uint64_t chunks)
{
	snprintf(st->pass.note, sizeof(st->pass.note),
	    "%llu chunks, mean %.0f B", (unsigned long long)chunks,
	    chunks ? (double)input_len / (double)chunks : 0.0);
}

static int
run_memcpy(void *state, uint64_t n)
{
	struct cdc_state *st = state;

	for (uint64_t i = 0; i < n; i++) {
		memcpy(st->dst, input, input_len);
		bench_escape(st->dst);
	}
	return 0;
}

static int
run_sha256(void *state, uint64_t n)
{
	uint8_t md[SHA256_LEN];

	(void)state;
	for (uint64_t i = 0; i < n; i++) {
		sha256_digest(input, input_len, md);
		bench_consume(md[0]);
	}
	return 0;
}

static int
run_cuts(void *state, uint64_t n)
{
	static const struct fastcdc_params p = FASTCDC_PARAMS_DEFAULT;
	struct cdc_state *st = state;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t chunks = 0;

		for (size_t off = 0; off < input_len; chunks++)
			off += fastcdc_next(&p, input + off, input_len - off);
		cdc_note(st, chunks);
		bench_consume(chunks);
	}
	return 0;
}

static int
run_cuts_sha256(void *state, uint64_t n)
{
	static const struct fastcdc_params p = FASTCDC_PARAMS_DEFAULT;
	struct cdc_state *st = state;
	uint8_t md[SHA256_LEN];

	for (uint64_t i = 0; i < n; i++) {
		uint64_t chunks = 0;

		for (size_t off = 0, len; off < input_len; off += len) {
			len = fastcdc_next(&p, input + off, input_len - off);
			sha256_digest(input + off, len, md);
			bench_consume(md[0]);
			chunks++;
		}
		cdc_note(st, chunks);
	}
	return 0;
}

static int
run_blake3(void *state, uint64_t n)
{
	uint8_t out[BLAKE3_OUT_LEN];

	(void)state;
	for (uint64_t i = 0; i < n; i++) {
		blake3_hash(input, input_len, out);
		bench_consume(out[0]);
	}
	return 0;
}

static int
run_outboard(void *state, uint64_t n)
{
	struct cdc_state *st = state;
	uint8_t root[BLAKE3_OUT_LEN];

	for (uint64_t i = 0; i < n; i++) {
		bao_outboard(input, input_len, BAO_GROUP_LOG_DEFAULT, root,
		    st->outboard);
		bench_escape(st->outboard);
		bench_consume(root[0]);
	}
	return 0;
}

#define ROW(name, base, setup, fn) \
	{ "FastCdc." name, base, BENCH_PASS, setup, fn, cdc_teardown, NULL }

static const struct bench_row fastcdc_rows[] = {
	ROW("memcpy", NULL, memcpy_setup, run_memcpy),
	ROW("sha256", NULL, cdc_setup, run_sha256),
	ROW("cuts", "FastCdc.memcpy", cdc_setup, run_cuts),
	ROW("cuts_sha256", "FastCdc.sha256", cdc_setup, run_cuts_sha256),
	ROW("blake3", "FastCdc.sha256", cdc_setup, run_blake3),
	ROW("outboard", "FastCdc.sha256", outboard_setup, run_outboard),
};

const struct bench_family bench_family_fastcdc = {
	"FastCdc", fastcdc_rows, BENCH_NROWS(fastcdc_rows)
};

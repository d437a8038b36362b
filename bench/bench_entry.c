/*
 * bench_entry.c: the Entry family: building, encoding and decoding the
 * typical entry of fixture.h (eight fields; about 300 bytes encoded).
 *
 *   new     fixture_entry (encode the fields map, sort it, entry_new:
 *           encode the body, parse it back, SHA-256 for the id), then
 *           entry_signing_bytes and entry_free: what a writer does before
 *           it signs (the signature itself is Crypto.ed25519_sign_raw_256)
 *   encode  entry_encode of a built, signed entry into a reused buffer
 *   decode  entry_decode of those bytes (shape, bounds, id recomputed),
 *           then entry_free
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dcbor.h"
#include "entry.h"
#include "fixture.h"

struct entry_bstate {
	struct entry		*e;
	struct dcbor_buf	 buf;
	struct dcbor_buf	 wire;	/* e encoded */
};

static void
entry_teardown(void *state)
{
	struct entry_bstate *st = state;

	entry_free(st->e);
	dcbor_buf_free(&st->buf);
	dcbor_buf_free(&st->wire);
	free(st);
}

static int
entry_setup(void **state, size_t param)
{
	struct entry_bstate *st;
	uint8_t sig[IDENTITY_SIG_LEN];

	(void)param;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	dcbor_buf_init(&st->buf);
	dcbor_buf_init(&st->wire);
	if ((st->e = fixture_entry(7, 1764480000000ull, 60000,
	    FIXTURE_KIND_ALT)) == NULL)
		return -1;
	bench_fill(sig, sizeof(sig), 41);
	entry_set_sig(st->e, sig);
	entry_encode(&st->wire, st->e);
	return 0;
}

static int
run_new(void *state, uint64_t n)
{
	uint64_t acc = 0;

	(void)state;
	for (uint64_t i = 0; i < n; i++) {
		struct entry *e = fixture_entry(i, 1764480000000ull + i, 60000,
		    FIXTURE_KIND_ALT);
		const uint8_t *p;
		size_t len;

		if (e == NULL)
			return -1;
		entry_signing_bytes(e, &p, &len);
		acc += len + p[0];
		entry_free(e);
	}
	bench_consume(acc);
	return 0;
}

static int
run_encode(void *state, uint64_t n)
{
	struct entry_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->buf);
		entry_encode(&st->buf, st->e);
		acc += st->buf.data[st->buf.len - 1];
	}
	bench_consume(acc);
	return 0;
}

static int
run_decode(void *state, uint64_t n)
{
	struct entry_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct dcbor_rd rd;
		struct entry *e;

		bench_escape(st->wire.data);
		dcbor_rd_init(&rd, st->wire.data, st->wire.len);
		if (entry_decode(&rd, &e) != ENTRY_OK)
			return -1;
		acc += e->nfields;
		entry_free(e);
	}
	bench_consume(acc);
	return 0;
}

#define ROW(name, fn) \
	{ "Entry." name, NULL, 0, entry_setup, fn, entry_teardown, NULL }

static const struct bench_row entry_rows[] = {
	ROW("new", run_new),
	ROW("encode", run_encode),
	ROW("decode", run_decode),
};

const struct bench_family bench_family_entry = {
	"Entry", entry_rows, BENCH_NROWS(entry_rows)
};

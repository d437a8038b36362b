/*
 * bench_hlc.c: the Hlc family (the seed's HlcBenchmark): a local stamp, a
 * remote merge, and the stamp's CBOR and text forms.
 *
 * now and update read the wall clock as peerd does on every send and
 * receive, so Hlc.wall_ms (clock_gettime(CLOCK_REALTIME) alone) is their
 * baseline: the ratio is what the clock logic adds to the clock read.
 * parse is hlc_parse on bytes already through dcbor_check (a frame is
 * checked once, whole, before its stamp is read).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dcbor.h"
#include "hlc.h"

#define NSTAMPS	256	/* a power of two */

struct hlc_state {
	struct hlc		 clock;
	struct hlc_stamp	 stamps[NSTAMPS];
	int64_t			 skew[NSTAMPS];	/* remote phys - wall, ms */
	struct dcbor_buf	 buf;
	size_t			 off[NSTAMPS + 1]; /* stamps[i] in buf */
	char			 text[NSTAMPS][HLC_TEXT_MAX];
};

static int
hlc_setup(void **state, size_t param)
{
	struct hlc_state *st;
	uint64_t seed = 0x41c, wall = hlc_wall_ms();

	(void)param;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	hlc_init(&st->clock, rng_splitmix64(&seed));
	dcbor_buf_init(&st->buf);
	for (size_t i = 0; i < NSTAMPS; i++) {
		struct hlc_stamp *s = &st->stamps[i];

		s->phys = wall - 1000 + rng_splitmix64(&seed) % 2000;
		s->logical = (uint32_t)(rng_splitmix64(&seed) % 16);
		s->node = rng_splitmix64(&seed);
		st->skew[i] = (int64_t)(rng_splitmix64(&seed) % 11) - 5;
		st->off[i] = st->buf.len;
		hlc_encode(&st->buf, s);
		hlc_format(s, st->text[i], sizeof(st->text[i]));
	}
	st->off[NSTAMPS] = st->buf.len;
	*state = st;
	return 0;
}

static void
hlc_teardown(void *state)
{
	struct hlc_state *st = state;

	dcbor_buf_free(&st->buf);
	free(st);
}

static int
run_wall_ms(void *state, uint64_t n)
{
	uint64_t acc = 0;

	(void)state;
	for (uint64_t i = 0; i < n; i++)
		acc += hlc_wall_ms();
	bench_consume(acc);
	return 0;
}

static int
run_now(void *state, uint64_t n)
{
	struct hlc_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct hlc_stamp s = hlc_now(&st->clock, hlc_wall_ms());

		acc += s.logical;
	}
	bench_consume(acc);
	return 0;
}

/* A remote stamp a few ms either side of our wall clock, then the merge. */
static int
run_update(void *state, uint64_t n)
{
	struct hlc_state *st = state;
	struct hlc_stamp out, r;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t wall = hlc_wall_ms();

		r = st->stamps[i % NSTAMPS];
		r.phys = (uint64_t)((int64_t)wall + st->skew[i % NSTAMPS]);
		acc += hlc_update(&st->clock, &r, wall, &out);
		acc += out.logical;
	}
	bench_consume(acc);
	return 0;
}

static int
run_encode(void *state, uint64_t n)
{
	struct hlc_state *st = state;
	struct dcbor_buf b;
	uint64_t acc = 0;

	dcbor_buf_init(&b);
	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&b);
		hlc_encode(&b, &st->stamps[i % NSTAMPS]);
		bench_escape(b.data);
		acc += b.len;
	}
	dcbor_buf_free(&b);
	bench_consume(acc);
	return 0;
}

static int
run_parse(void *state, uint64_t n)
{
	struct hlc_state *st = state;
	struct dcbor_rd rd;
	struct hlc_stamp s;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t k = i % NSTAMPS;

		dcbor_rd_init(&rd, st->buf.data + st->off[k],
		    st->off[k + 1] - st->off[k]);
		if (hlc_parse(&rd, &s) == -1)
			return -1;
		acc += s.phys ^ s.node;
	}
	bench_consume(acc);
	return 0;
}

static int
run_format_text(void *state, uint64_t n)
{
	struct hlc_state *st = state;
	char text[HLC_TEXT_MAX];
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		hlc_format(&st->stamps[i % NSTAMPS], text, sizeof(text));
		bench_escape(text);
		acc += (uint8_t)text[0];
	}
	bench_consume(acc);
	return 0;
}

static int
run_parse_text(void *state, uint64_t n)
{
	struct hlc_state *st = state;
	struct hlc_stamp s;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (hlc_parse_text(st->text[i % NSTAMPS], &s) == -1)
			return -1;
		acc += s.phys ^ s.node;
	}
	bench_consume(acc);
	return 0;
}

#define ROW(name, base, setup, fn, teardown) \
	{ "Hlc." name, base, 0, setup, fn, teardown, NULL }

static const struct bench_row hlc_rows[] = {
	ROW("wall_ms", NULL, NULL, run_wall_ms, NULL),
	ROW("now", "Hlc.wall_ms", hlc_setup, run_now, hlc_teardown),
	ROW("update", "Hlc.wall_ms", hlc_setup, run_update, hlc_teardown),
	ROW("encode", NULL, hlc_setup, run_encode, hlc_teardown),
	ROW("parse", NULL, hlc_setup, run_parse, hlc_teardown),
	ROW("format_text", NULL, hlc_setup, run_format_text, hlc_teardown),
	ROW("parse_text", NULL, hlc_setup, run_parse_text, hlc_teardown),
};

const struct bench_family bench_family_hlc = {
	"Hlc", hlc_rows, BENCH_NROWS(hlc_rows)
};

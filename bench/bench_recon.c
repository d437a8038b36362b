/*
 * bench_recon.c: the Recon family (the seed's PushReconcileStress
 * "reconcile" at the protocol level): two sets of 100,000 items that
 * differ by 1,000 (500 on each side) reconciled in memory, one op being a
 * whole reconciliation from the sorted snapshot to both sides knowing the
 * difference.  Recon.sort_100k (sorting one side's items, which every
 * method starts with) is the baseline.  Rounds and exchanged bytes do not
 * depend on the clock: setup prints them once on stderr, e.g.
 *   Recon.negentropy_100k_1k: rounds 5, bytes 330127
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dcbor.h"
#include "neg.h"
#include "riblt.h"
#include "u64.h"

#define N_COMMON	99500
#define N_ONLY		500
#define N_SIDE		(N_COMMON + N_ONLY)
#define RIBLT_BATCH	128

struct recon_state {
	uint64_t	a[N_SIDE], b[N_SIDE], tmp[N_SIDE];
};

static int
recon_setup(void **state, size_t param)
{
	struct recon_state *st = calloc(1, sizeof(*st));
	uint64_t seed = 0x15;

	(void)param;
	if (st == NULL)
		return -1;
	for (size_t i = 0; i < N_COMMON; i++)
		st->a[i] = st->b[i] = rng_splitmix64(&seed);
	for (size_t i = N_COMMON; i < N_SIDE; i++) {
		st->a[i] = rng_splitmix64(&seed);
		st->b[i] = rng_splitmix64(&seed);
	}
	*state = st;
	return 0;
}

static void
recon_teardown(void *state)
{
	free(state);
}

/* One negentropy run; the difference found, rounds and bytes. */
static size_t
neg_once(const struct recon_state *st, int *rounds, size_t *bytes)
{
	struct neg *na = neg_new(st->a, N_SIDE), *nb = neg_new(st->b, N_SIDE);
	struct neg_ids h = { 0 }, nd = { 0 };
	struct dcbor_buf msg, rep;
	bool a_turn = false;
	size_t found;

	dcbor_buf_init(&msg);
	dcbor_buf_init(&rep);
	neg_initiate(na, &msg);
	*rounds = 1;
	*bytes = msg.len;
	while (msg.len > 0 && *rounds < 64) {
		dcbor_buf_reset(&rep);
		if (neg_reply(a_turn ? na : nb, msg.data, msg.len, &rep, &h,
		    &nd) == -1 || rep.len == 0)
			break;
		++*rounds;
		*bytes += rep.len;
		dcbor_buf_reset(&msg);
		dcbor_put_raw(&msg, rep.data, rep.len);
		a_turn = !a_turn;
	}
	found = h.n + nd.n;
	neg_ids_free(&h);
	neg_ids_free(&nd);
	dcbor_buf_free(&msg);
	dcbor_buf_free(&rep);
	neg_free(na);
	neg_free(nb);
	return found;
}

/* One RIBLT run (symbols packed as on the wire); the difference found. */
static size_t
riblt_once(const struct recon_state *st, size_t *syms, size_t *bytes)
{
	struct riblt_enc *e = riblt_enc_new(st->a, N_SIDE, 1u << 20);
	struct riblt_dec *d = riblt_dec_new(st->b, N_SIDE, 1u << 20);
	struct riblt_sym s[RIBLT_BATCH], back[RIBLT_BATCH];
	struct dcbor_buf b;
	size_t nr, nl, k;

	dcbor_buf_init(&b);
	*bytes = 0;
	while (!riblt_dec_done(d)) {
		struct dcbor_rd rd;
		const uint8_t *p;
		size_t len;

		riblt_enc_next(e, s, RIBLT_BATCH);
		dcbor_buf_reset(&b);
		riblt_put_syms(&b, s, RIBLT_BATCH);
		*bytes += b.len;
		dcbor_rd_init(&rd, b.data, b.len);
		if (dcbor_get_bytes(&rd, &p, &len) == -1 ||
		    riblt_get_syms(p, len, back, RIBLT_BATCH, &k) == -1 ||
		    riblt_dec_add(d, back, k) == -1)
			break;
	}
	*syms = riblt_dec_pos(d);
	riblt_dec_remote(d, &nr);
	riblt_dec_local(d, &nl);
	dcbor_buf_free(&b);
	riblt_enc_free(e);
	riblt_dec_free(d);
	return nr + nl;
}

static int
run_sort(void *state, uint64_t n)
{
	struct recon_state *st = state;

	for (uint64_t i = 0; i < n; i++) {
		memcpy(st->tmp, st->a, sizeof(st->tmp));
		qsort(st->tmp, N_SIDE, sizeof(uint64_t), u64_cmp);
		bench_escape(st->tmp);
	}
	bench_consume(st->tmp[0]);
	return 0;
}

static int
run_neg(void *state, uint64_t n)
{
	static bool told;
	int rounds = 0;
	size_t bytes = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (neg_once(state, &rounds, &bytes) != 2 * N_ONLY)
			return -1;
		if (!told) {
			fprintf(stderr, "Recon.negentropy_100k_1k: rounds %d, "
			    "bytes %zu\n", rounds, bytes);
			told = true;
		}
	}
	bench_consume(bytes);
	return 0;
}

static int
run_riblt(void *state, uint64_t n)
{
	static bool told;
	size_t syms = 0, bytes = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (riblt_once(state, &syms, &bytes) != 2 * N_ONLY)
			return -1;
		if (!told) {
			fprintf(stderr, "Recon.riblt_100k_1k: symbols %zu, "
			    "bytes %zu (one stream, then the answer)\n",
			    syms, bytes);
			told = true;
		}
	}
	bench_consume(bytes);
	return 0;
}

#define ROW(name, base, fn) \
	{ "Recon." name, base, 0, recon_setup, fn, recon_teardown, NULL }

static const struct bench_row recon_rows[] = {
	ROW("sort_100k", NULL, run_sort),
	ROW("negentropy_100k_1k", "Recon.sort_100k", run_neg),
	ROW("riblt_100k_1k", "Recon.sort_100k", run_riblt),
};

const struct bench_family bench_family_recon = {
	"Recon", recon_rows, BENCH_NROWS(recon_rows)
};

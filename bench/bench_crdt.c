/*
 * bench_crdt.c: the Crdt family (the seed's CrdtBenchmark): full-state,
 * per-entry and take-claim merges, and the anti-entropy delta.
 *
 * Two replicas' maps of N records (N = 100, 1,000, 10,000) over the same
 * ids: a, where each record has one add dot, a lease and (one in four) a
 * claim; and b, equal to a in half the records and ahead in the other half
 * (a second add dot from another node, a later lease, a claim of a higher
 * epoch).  merge_N merges b into a copy of a; a merge mutates its
 * destination, so every op first copies a (each record and its dot sets,
 * as crdt_map_merge_rec copies a new record) and frees the result after,
 * and copy_N, that copy and free alone, is the baseline: merge - copy is
 * the merge.  merge_newids_N is the same with 10% more ids in b, spread
 * among a's, so the merge inserts.  delta_N is crdt_map_delta(b, a): the
 * N/2 records of b that would change a, into a reused output map.
 *
 * Per entry: state_merge and rec_merge (claim, then state) of one record
 * of b into a copy of its a version (the copy into reused storage is
 * state_copy, their baseline); claim_merge picks the winner of two claims
 * from 256 pairs that differ at each rule in turn (epoch, bid, stamp,
 * holder, expiry).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "crdt.h"

#define NODE_A		0xa11ceull
#define NODE_B		0xb0bull
#define NPAIRS		256	/* a power of two */

enum ccase { C_MAP, C_MAP_NEWIDS, C_REC, C_CLAIM, C_NCASES };

struct crdt_bstate {
	struct crdt_map	 a, b, out;
	struct crdt_rec	 tmp;		/* reused per-entry destination */
	struct crdt_claim ca[NPAIRS], cb[NPAIRS];
};

static void
make_rec(struct crdt_rec *r, uint64_t *seed, uint64_t i, bool ahead)
{
	uint8_t id[ENTRY_ID_LEN];
	struct hlc_stamp s = { 1764480000000ull + i, 0, NODE_A };
	uint64_t s2 = i;

	for (size_t k = 0; k < sizeof(id); k += 8) {
		uint64_t v = rng_splitmix64(&s2) ^ *seed;

		memcpy(id + k, &v, 8);
	}
	crdt_rec_init(r, id);
	(void)crdt_state_add(&r->st, NODE_A, i + 1);
	crdt_state_lease(&r->st, &s, s.phys + 3600000);
	if (i % 4 == 0) {
		r->claim.epoch = 1;
		r->claim.stamp = s;
		r->claim.holder[0] = 0xa1;
		r->claim.expiry_ms = s.phys + 30000;
	}
	if (ahead) {
		s.phys += 500;
		s.node = NODE_B;
		(void)crdt_state_add(&r->st, NODE_B, i + 1);
		crdt_state_lease(&r->st, &s, s.phys + 7200000);
		if (i % 4 == 0) {
			r->claim.epoch = 2;
			r->claim.stamp = s;
			r->claim.holder[0] = 0xb0;
			r->claim.expiry_ms = s.phys + 30000;
		}
	}
}

static void
crdt_teardown(void *state)
{
	struct crdt_bstate *st = state;

	crdt_map_free(&st->a);
	crdt_map_free(&st->b);
	crdt_map_free(&st->out);
	crdt_rec_free(&st->tmp);
	free(st);
}

static int
crdt_setup(void **state, size_t param)
{
	struct crdt_bstate *st;
	enum ccase c = (enum ccase)(param % C_NCASES);
	size_t n = param / C_NCASES;
	uint64_t seed = 0xc0de;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	crdt_map_init(&st->a);
	crdt_map_init(&st->b);
	crdt_map_init(&st->out);
	crdt_rec_init(&st->tmp, (const uint8_t[ENTRY_ID_LEN]){ 0 });
	if (n == 0)
		n = 1;
	for (uint64_t i = 0; i < n; i++) {
		struct crdt_rec ra, rb;

		make_rec(&ra, &seed, i, false);
		make_rec(&rb, &seed, i, i % 2 == 0);
		if (crdt_map_merge_rec(&st->a, &ra) != CRDT_OK ||
		    crdt_map_merge_rec(&st->b, &rb) != CRDT_OK)
			return -1;
		crdt_rec_free(&ra);
		crdt_rec_free(&rb);
	}
	if (c == C_MAP_NEWIDS) {
		uint64_t seed2 = 0xfeed;

		for (uint64_t i = 0; i < n / 10; i++) {
			struct crdt_rec r;

			make_rec(&r, &seed2, n + i, true);
			if (crdt_map_merge_rec(&st->b, &r) != CRDT_OK)
				return -1;
			crdt_rec_free(&r);
		}
	}
	if (c == C_CLAIM) {
		for (size_t i = 0; i < NPAIRS; i++) {
			struct crdt_claim *x = &st->ca[i], *y = &st->cb[i];

			memset(x, 0, sizeof(*x));
			x->epoch = 3;
			x->bid = 1;
			x->stamp.phys = 1764480000000ull + i;
			x->stamp.node = NODE_A;
			x->holder[0] = 0xa1;
			x->expiry_ms = x->stamp.phys + 30000;
			bench_fill(x->sig, sizeof(x->sig), i);
			*y = *x;
			switch (i % 5) {
			case 0:
				y->epoch = 4;
				break;
			case 1:
				y->bid = 0;
				break;
			case 2:
				y->stamp.phys--;
				break;
			case 3:
				y->holder[0] = 0x0b;
				break;
			case 4:
				y->expiry_ms += 1000;
				break;
			}
		}
	}
	return 0;
}

/* dst (empty) = a deep copy of src. */
static void
map_copy(struct crdt_map *dst, const struct crdt_map *src)
{
	dst->r = malloc((src->n ? src->n : 1) * sizeof(*dst->r));
	if (dst->r == NULL)
		abort();
	for (size_t i = 0; i < src->n; i++) {
		crdt_rec_init(&dst->r[i], src->r[i].id);
		dst->r[i].claim = src->r[i].claim;
		crdt_state_copy(&dst->r[i].st, &src->r[i].st);
	}
	dst->n = dst->cap = src->n;
}

static int
run_copy(void *state, uint64_t n)
{
	struct crdt_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct crdt_map m;

		crdt_map_init(&m);
		map_copy(&m, &st->a);
		bench_escape(m.r);
		acc += m.n;
		crdt_map_free(&m);
	}
	bench_consume(acc);
	return 0;
}

static int
run_merge(void *state, uint64_t n)
{
	struct crdt_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct crdt_map m;

		crdt_map_init(&m);
		map_copy(&m, &st->a);
		if (crdt_map_merge(&m, &st->b) != CRDT_OK)
			return -1;
		bench_escape(m.r);
		acc += m.n;
		crdt_map_free(&m);
	}
	bench_consume(acc);
	return 0;
}

static int
run_delta(void *state, uint64_t n)
{
	struct crdt_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		crdt_map_delta(&st->b, &st->a, &st->out);
		acc += st->out.n;
	}
	if (st->out.n != (st->a.n + 1) / 2)
		return -1;
	bench_consume(acc);
	return 0;
}

/* Record j's a version into the reused tmp. */
static void
tmp_load(struct crdt_bstate *st, size_t j)
{
	memcpy(st->tmp.id, st->a.r[j].id, ENTRY_ID_LEN);
	st->tmp.claim = st->a.r[j].claim;
	crdt_state_copy(&st->tmp.st, &st->a.r[j].st);
}

static int
run_state_copy(void *state, uint64_t n)
{
	struct crdt_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t j = (size_t)(i % st->a.n);

		tmp_load(st, j);
		bench_escape(&st->tmp);
		acc += st->tmp.st.adds.n;
	}
	bench_consume(acc);
	return 0;
}

static int
run_state_merge(void *state, uint64_t n)
{
	struct crdt_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t j = (size_t)(i % st->a.n);

		tmp_load(st, j);
		if (crdt_state_merge(&st->tmp.st, &st->b.r[j].st) != CRDT_OK)
			return -1;
		bench_escape(&st->tmp);
		acc += st->tmp.st.adds.n;
	}
	bench_consume(acc);
	return 0;
}

static int
run_rec_merge(void *state, uint64_t n)
{
	struct crdt_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t j = (size_t)(i % st->a.n);

		tmp_load(st, j);
		if (crdt_rec_merge(&st->tmp, &st->b.r[j]) != CRDT_OK)
			return -1;
		bench_escape(&st->tmp);
		acc += st->tmp.st.adds.n + st->tmp.claim.epoch;
	}
	bench_consume(acc);
	return 0;
}

static int
run_claim_merge(void *state, uint64_t n)
{
	struct crdt_bstate *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t j = (size_t)(i & (NPAIRS - 1));

		bench_escape(st->ca);
		acc += crdt_claim_merge(&st->ca[j], &st->cb[j])->epoch;
	}
	bench_consume(acc);
	return 0;
}

#define P(nrec, c)	((nrec) * C_NCASES + (c))
#define ROW(name, base, nrec, c, fn) \
	{ "Crdt." name, base, P(nrec, c), crdt_setup, fn, crdt_teardown, \
	    NULL }

static const struct bench_row crdt_rows[] = {
	ROW("copy_100", NULL, 100, C_MAP, run_copy),
	ROW("merge_100", "Crdt.copy_100", 100, C_MAP, run_merge),
	ROW("merge_newids_100", "Crdt.copy_100", 100, C_MAP_NEWIDS,
	    run_merge),
	ROW("delta_100", NULL, 100, C_MAP, run_delta),
	ROW("copy_1k", NULL, 1000, C_MAP, run_copy),
	ROW("merge_1k", "Crdt.copy_1k", 1000, C_MAP, run_merge),
	ROW("merge_newids_1k", "Crdt.copy_1k", 1000, C_MAP_NEWIDS,
	    run_merge),
	ROW("delta_1k", NULL, 1000, C_MAP, run_delta),
	ROW("copy_10k", NULL, 10000, C_MAP, run_copy),
	ROW("merge_10k", "Crdt.copy_10k", 10000, C_MAP, run_merge),
	ROW("merge_newids_10k", "Crdt.copy_10k", 10000, C_MAP_NEWIDS,
	    run_merge),
	ROW("delta_10k", NULL, 10000, C_MAP, run_delta),
	ROW("state_copy", NULL, 1000, C_REC, run_state_copy),
	ROW("state_merge", "Crdt.state_copy", 1000, C_REC, run_state_merge),
	ROW("rec_merge", "Crdt.state_copy", 1000, C_REC, run_rec_merge),
	ROW("claim_merge", NULL, 0, C_CLAIM, run_claim_merge),
};

const struct bench_family bench_family_crdt = {
	"Crdt", crdt_rows, BENCH_NROWS(crdt_rows)
};

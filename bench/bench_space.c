/*
 * bench_space.c: the LocalSpace family (the seed's LocalSpaceBenchmark):
 * the space verbs on one replica at populations of 100, 1,000 and 10,000
 * visible entries of one type (fixture.h entries, 1 h leases, a fixed
 * now_ms so nothing expires and nothing is collected during a batch).
 *
 *   write_P       space_write of a new entry, then space_remove of it, so
 *                 the population stays P (the remove is of the newest
 *                 record: the tail of the FIFO index)
 *   read_P        space_read, type-only template: the first match
 *   take_P        space_take_local (type only) + space_complete + the
 *                 space_write of a replacement entry, newer than all
 *   take_where_P  the same with where kind == "build": half the entries
 *                 ("test") fail it.  They are never taken, so they are
 *                 the oldest: a scan from the FIFO head passes P/2 of them
 *                 on every take.  That is the steady state of any mix once
 *                 P/2 takes have run.  The space's template cursor (fifo.c)
 *                 remembers where the last scan stopped; prepare warms it
 *                 with one untimed read, as a daemon's long-lived space has
 *                 seen a worker's template before (otherwise the first take
 *                 of every batch, a full scan, would dominate a batch of a
 *                 few ops)
 *   read_where_cold_P  space_read with where kind == "build" and
 *                 prio != 100 + j, j cycling through 64 values, on the
 *                 take_where layout: more templates than a type keeps
 *                 cursors for, so every read is a template's first scan
 *                 past P/2 failing entries (the cost the cursor does not
 *                 remove: an ad-hoc query).  Since the field index
 *                 (fidx.c) the eq condition on kind goes to the "build"
 *                 records directly (the first read, in the warm-up,
 *                 builds the index: a read batch keeps its space)
 *
 * The entries a batch writes are built before it, untimed (the prepare
 * hook), as the daemon builds and signs an entry before space_write; and
 * every mutating batch starts from a freshly built space of P entries, so
 * the tombstones that take and remove leave (collected only hours later in
 * space time) never exceed one batch's worth.  The _1k and _10k rows name
 * the _100 row as baseline: the printed ratio is "a take among 10,000
 * costs x times a take among 100", measured interleaved.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dcbor.h"
#include "fixture.h"
#include "space.h"
#include "template.h"

#define BASE_MS		1764480000000ull
#define LEASE_MS	(3600ull * 1000)
#define TAKE_MS		30000

enum scase { S_WRITE, S_READ, S_TAKE, S_TAKE_WHERE, S_READ_COLD, S_NCASES };

#define NCOLD		64	/* templates read_where_cold cycles through */

struct space_state {
	enum scase	 c;
	size_t		 pop;
	struct space	*sp;
	struct template	*t;
	struct template	*cold[NCOLD];
	uint64_t	 ncold;		/* reads made: the next template */
	uint64_t	 now;
	uint64_t	 next_i;	/* number of the next entry built */
	struct entry	**pool;		/* the next batch's new entries */
	size_t		 npool;
	size_t		 pool_at;
	size_t		 pool_cap;
};

static void
pool_drop(struct space_state *st)
{
	for (size_t i = st->pool_at; i < st->npool; i++)
		entry_free(st->pool[i]);
	st->npool = st->pool_at = 0;
}

static void
space_teardown(void *state)
{
	struct space_state *st = state;

	pool_drop(st);
	free(st->pool);
	if (st->sp != NULL)
		space_free(st->sp);
	if (st->t != NULL)
		template_free(st->t);
	for (size_t i = 0; i < NCOLD; i++)
		template_free(st->cold[i]);
	free(st);
}

/* The kind of entry number i of the population. */
static int
pop_kind(const struct space_state *st, size_t i)
{
	if (st->c != S_TAKE_WHERE && st->c != S_READ_COLD)
		return FIXTURE_KIND_ALT;
	return i < st->pop / 2 ? 1 : 0;	/* the failing half first */
}

static struct entry *
new_entry(struct space_state *st, int kind)
{
	uint64_t i = st->next_i++;

	return fixture_entry(i, BASE_MS + i, LEASE_MS, kind);
}

/* A fresh space holding pop visible entries. */
static int
rebuild(struct space_state *st)
{
	static const uint8_t self[IDENTITY_ID_LEN] = { 0x5e, 0x1f };

	if (st->sp != NULL)
		space_free(st->sp);
	st->sp = space_new(0x5e1f, self, SIZE_MAX);
	for (size_t i = 0; i < st->pop; i++) {
		struct entry *e = new_entry(st, pop_kind(st, i));

		if (e == NULL || space_write(st->sp, e, st->now) != SPACE_OK)
			return -1;
	}
	if (space_visible_count(st->sp) != st->pop)
		return -1;
	return 0;
}

static int
space_prepare(void *state, uint64_t n)
{
	struct space_state *st = state;
	int kind = st->c == S_TAKE_WHERE ? 0 : FIXTURE_KIND_ALT;

	if (st->c == S_READ || st->c == S_READ_COLD)
		return 0;
	pool_drop(st);
	if (rebuild(st) == -1)
		return -1;
	/*
	 * A daemon's space outlives its templates' first use; a fresh one per
	 * batch must not make every batch pay the first scan (see the top).
	 */
	if (st->c == S_TAKE_WHERE && space_read(st->sp, st->t, st->now) == NULL)
		return -1;
	if (n > st->pool_cap) {
		struct entry **p = realloc(st->pool, n * sizeof(*p));

		if (p == NULL)
			return -1;
		st->pool = p;
		st->pool_cap = n;
	}
	for (; st->npool < n; st->npool++)
		if ((st->pool[st->npool] = new_entry(st, kind)) == NULL)
			return -1;
	return 0;
}

static int
space_setup(void **state, size_t param)
{
	struct space_state *st;
	struct dcbor_buf b;
	char err[128];
	int rc;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	st->c = (enum scase)(param % S_NCASES);
	st->pop = param / S_NCASES;
	st->now = BASE_MS + 1;
	if ((st->t = template_new(FIXTURE_TYPE)) == NULL)
		return -1;
	if (st->c == S_TAKE_WHERE) {
		dcbor_buf_init(&b);
		dcbor_put_cstr(&b, "build");
		rc = template_add(st->t, "kind", TEMPLATE_EQ, b.data, b.len,
		    err, sizeof(err));
		dcbor_buf_free(&b);
		if (rc == -1)
			return -1;
	}
	for (size_t i = 0; st->c == S_READ_COLD && i < NCOLD; i++) {
		if ((st->cold[i] = template_new(FIXTURE_TYPE)) == NULL)
			return -1;
		dcbor_buf_init(&b);
		dcbor_put_cstr(&b, "build");
		rc = template_add(st->cold[i], "kind", TEMPLATE_EQ, b.data,
		    b.len, err, sizeof(err));
		dcbor_buf_reset(&b);
		dcbor_put_uint(&b, 100 + i);
		if (rc == 0)
			rc = template_add(st->cold[i], "prio", TEMPLATE_NE,
			    b.data, b.len, err, sizeof(err));
		dcbor_buf_free(&b);
		if (rc == -1)
			return -1;
	}
	return rebuild(st);
}

/* The next prepared entry. */
static struct entry *
pool_next(struct space_state *st)
{
	if (st->pool_at >= st->npool)
		return NULL;
	return st->pool[st->pool_at++];
}

static int
run_write(void *state, uint64_t n)
{
	struct space_state *st = state;

	for (uint64_t i = 0; i < n; i++) {
		struct entry *e = pool_next(st);
		uint8_t id[ENTRY_ID_LEN];

		if (e == NULL)
			return -1;
		memcpy(id, e->id, sizeof(id));
		if (space_write(st->sp, e, st->now) != SPACE_OK ||
		    space_remove(st->sp, id, st->now) != SPACE_OK)
			return -1;
	}
	bench_consume(space_visible_count(st->sp));
	return 0;
}

static int
run_read(void *state, uint64_t n)
{
	struct space_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct space_rec *r = space_read(st->sp, st->t, st->now);

		if (r == NULL)
			return -1;
		acc += space_rec_entry(r)->mono_us;
	}
	bench_consume(acc);
	return 0;
}

static int
run_read_cold(void *state, uint64_t n)
{
	struct space_state *st = state;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		const struct template *t = st->cold[st->ncold++ % NCOLD];
		struct space_rec *r = space_read(st->sp, t, st->now);

		if (r == NULL)
			return -1;
		acc += space_rec_entry(r)->mono_us;
	}
	bench_consume(acc);
	return 0;
}

static int
run_take(void *state, uint64_t n)
{
	struct space_state *st = state;
	struct hlc_stamp stamp = { st->now, 0, 0x5e1f };
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct space_rec *r;
		struct entry *e = pool_next(st);
		uint8_t id[ENTRY_ID_LEN];

		r = space_take_local(st->sp, st->t, &stamp, st->now, TAKE_MS);
		if (r == NULL || e == NULL)
			return -1;
		memcpy(id, space_rec_entry(r)->id, sizeof(id));
		acc += space_rec_entry(r)->mono_us;
		if (space_complete(st->sp, id, st->now) != SPACE_OK ||
		    space_write(st->sp, e, st->now) != SPACE_OK)
			return -1;
	}
	if (space_visible_count(st->sp) != st->pop)
		return -1;
	bench_consume(acc);
	return 0;
}

#define P(pop, c)	((pop) * S_NCASES + (c))
#define ROW(name, base, pop, c, fn) \
	{ "LocalSpace." name, base, P(pop, c), space_setup, fn, \
	    space_teardown, space_prepare }

static const struct bench_row space_rows[] = {
	ROW("write_100", NULL, 100, S_WRITE, run_write),
	ROW("write_1k", "LocalSpace.write_100", 1000, S_WRITE, run_write),
	ROW("write_10k", "LocalSpace.write_100", 10000, S_WRITE, run_write),
	ROW("read_100", NULL, 100, S_READ, run_read),
	ROW("read_1k", "LocalSpace.read_100", 1000, S_READ, run_read),
	ROW("read_10k", "LocalSpace.read_100", 10000, S_READ, run_read),
	ROW("take_100", NULL, 100, S_TAKE, run_take),
	ROW("take_1k", "LocalSpace.take_100", 1000, S_TAKE, run_take),
	ROW("take_10k", "LocalSpace.take_100", 10000, S_TAKE, run_take),
	ROW("take_where_100", NULL, 100, S_TAKE_WHERE, run_take),
	ROW("take_where_1k", "LocalSpace.take_where_100", 1000, S_TAKE_WHERE,
	    run_take),
	ROW("take_where_10k", "LocalSpace.take_where_100", 10000,
	    S_TAKE_WHERE, run_take),
	ROW("read_where_cold_100", NULL, 100, S_READ_COLD, run_read_cold),
	ROW("read_where_cold_1k", "LocalSpace.read_where_cold_100", 1000,
	    S_READ_COLD, run_read_cold),
	ROW("read_where_cold_10k", "LocalSpace.read_where_cold_100", 10000,
	    S_READ_COLD, run_read_cold),
};

const struct bench_family bench_family_localspace = {
	"LocalSpace", space_rows, BENCH_NROWS(space_rows)
};

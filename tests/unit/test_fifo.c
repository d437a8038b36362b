/*
 * test_fifo.c: the indexes a space keeps per type (fifo.c, fidx.c): many
 * records through table growth and index compaction, the template cursors
 * under out-of-order inserts, lapsing claims and more templates than
 * cursors, and a seeded random walk of writes, takes, completions and
 * expiries whose every answer is checked against a brute-force scan of
 * all records (field indexes included).  Time is driven by the test.
 */
#include "space_util.h"

/* ---- tests ---- */

START_TEST(many_entries_index)
{
	/* Enough records to grow the table, compact the index and rebuild. */
	struct space *sp = space_new(1, self_a, 100000);
	struct template *t = tmpl("{\"type\":\"task#v1\",\"where\":[{\"field\":"
	    "\"n\",\"op\":\"gte\",\"value\":0}]}");
	struct hlc_stamp st = { T0, 0, 1 };
	char f[32];
	int i;

	for (i = 0; i < 3000; i++) {
		snprintf(f, sizeof(f), "{\"n\":%d}", i);
		ck_assert_int_eq(space_write(sp, mk("task#v1", f, T0 + (uint64_t)i,
		    0, 60000), T0), SPACE_OK);
	}
	/* Take 2000 (claims of 100 ms); they leave the index at once. */
	for (i = 0; i < 2000; i++)
		ck_assert_int_eq(field_n(space_take_local(sp, t, &st, T0 + 10,
		    100)), i);
	ck_assert_uint_eq(space_visible_count(sp), 1000);
	/* Complete the even ones; the odd ones reappear, in FIFO order. */
	{
		struct wire w;
		struct dcbor_rd rd;
		int done = 0;

		dcbor_buf_init(&w.b);
		w.n = 0;
		space_foreach(sp, wire_add, &w);
		dcbor_rd_init(&rd, w.b.data, w.b.len);
		while (dcbor_left(&rd) > 0) {
			struct entry *e;
			struct crdt_rec cr;
			struct val v;

			memset(&cr, 0, sizeof(cr));
			ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), 0);
			ck_assert_int_eq(entry_field(e, "n", 1, &v), 1);
			if (v.i < 2000 && v.i % 2 == 0) {
				ck_assert_int_eq(space_complete(sp, e->id,
				    T0 + 20), SPACE_OK);
				done++;
			}
			entry_free(e);
			crdt_rec_free(&cr);
		}
		ck_assert_int_eq(done, 1000);
		dcbor_buf_free(&w.b);
	}
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 110)), 1);
	ck_assert_uint_eq(space_visible_count(sp), 2000);
	for (i = 1; i < 2000; i += 2)
		ck_assert_int_eq(field_n(space_take_local(sp, t, &st, T0 + 120,
		    100000)), i);
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 120)), 2000);
	template_free(t);
	space_free(sp);
}
END_TEST

/* ---- template cursors (selective takes) ---- */

#define WHERE_K(v) "{\"type\":\"job#v1\",\"where\":[{\"field\":\"k\"," \
	"\"op\":\"eq\",\"value\":\"" v "\"}]}"

static void
put_job(struct space *sp, int n, const char *k, uint64_t phys, uint64_t now)
{
	char f[64];

	snprintf(f, sizeof(f), "{\"n\":%d,\"k\":\"%s\"}", n, k);
	ck_assert_int_eq(space_write(sp, mk("job#v1", f, phys, 0, 60000), now),
	    SPACE_OK);
}

START_TEST(cursor_out_of_order_insert)
{
	struct space *sp = space_new(1, self_a, 1000);
	struct template *tb = tmpl(WHERE_K("b"));
	struct template *ta = tmpl(WHERE_K("a"));
	struct hlc_stamp st = { T0, 0, 1 };
	int i;

	/* Many "a" first (what a selective take leaves behind), then "b". */
	for (i = 0; i < 50; i++)
		put_job(sp, i, "a", T0 + 100 + 2 * (uint64_t)i, T0);
	put_job(sp, 100, "b", T0 + 300, T0);
	put_job(sp, 101, "b", T0 + 310, T0);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 100);
	/* The cursor of tb now sits at 100; a "b" older than all arrives. */
	put_job(sp, 102, "b", T0 + 1, T0);
	ck_assert_int_eq(field_n(space_read(sp, tb, T0)), 102);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 102);
	/* One "b" between the "a"s, with "a" slots on both sides of it. */
	put_job(sp, 103, "b", T0 + 151, T0);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 103);
	/*
	 * More inserts before the cursor than it notes one by one: ten "a"
	 * and then two "b" among the old "a"s; the oldest "b" comes first.
	 */
	for (i = 0; i < 10; i++)
		put_job(sp, 200 + i, "a", T0 + 101 + 4 * (uint64_t)i, T0);
	put_job(sp, 211, "b", T0 + 171, T0);
	put_job(sp, 210, "b", T0 + 161, T0);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 210);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 211);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 101);
	ck_assert_ptr_null(space_take_local(sp, tb, &st, T0, 60000));
	/* A cursor at the end: a new append, then an older insert. */
	put_job(sp, 300, "b", T0 + 1000, T0);
	put_job(sp, 301, "b", T0 + 2, T0);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 301);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 60000)), 300);
	ck_assert_ptr_null(space_read(sp, tb, T0));
	/* The other template's view was never disturbed. */
	ck_assert_int_eq(field_n(space_read(sp, ta, T0)), 0);
	template_free(ta);
	template_free(tb);
	space_free(sp);
}
END_TEST

START_TEST(cursor_claims_lapse)
{
	struct space *sp = space_new(1, self_a, 1000);
	struct template *tb = tmpl(WHERE_K("b"));
	struct template *ta = tmpl(WHERE_K("a"));
	struct template *any = tmpl("{\"type\":\"job#v1\"}");
	struct hlc_stamp st = { T0, 0, 1 };
	struct space_rec *r;
	uint8_t id[ENTRY_ID_LEN];

	put_job(sp, 1, "a", T0 + 1, T0);
	put_job(sp, 2, "b", T0 + 2, T0);
	put_job(sp, 3, "a", T0 + 3, T0);
	put_job(sp, 4, "b", T0 + 4, T0);
	put_job(sp, 5, "b", T0 + 5, T0);
	/* Take 2 and 4 with 50 ms claims: tb's cursor moves past both. */
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 50)), 2);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0, 50)), 4);
	ck_assert_int_eq(field_n(space_read(sp, tb, T0 + 10)), 5);
	/* The claims lapse: 2 and 4 are visible again, before the cursor. */
	ck_assert_int_eq(field_n(space_read(sp, tb, T0 + 50)), 2);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0 + 50,
	    60000)), 2);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0 + 50,
	    60000)), 4);
	ck_assert_int_eq(field_n(space_take_local(sp, tb, &st, T0 + 50,
	    60000)), 5);
	ck_assert_ptr_null(space_take_local(sp, tb, &st, T0 + 50, 60000));
	/*
	 * A record that fails tb reappearing before tb's cursor does not
	 * fool it, and the template it does match sees it again.
	 */
	r = space_take_local(sp, any, &st, T0 + 60, 50);
	ck_assert_int_eq(field_n(r), 1);
	memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	ck_assert_int_eq(field_n(space_read(sp, ta, T0 + 60)), 3);
	ck_assert_int_eq(field_n(space_read(sp, ta, T0 + 110)), 1);
	ck_assert_ptr_null(space_read(sp, tb, T0 + 110));
	/* A completed record never comes back; a cancelled lease neither. */
	ck_assert_int_eq(space_complete(sp, id, T0 + 120), SPACE_OK);
	ck_assert_int_eq(field_n(space_read(sp, ta, T0 + 120)), 3);
	put_job(sp, 6, "b", T0 + 6, T0 + 120);
	ck_assert_int_eq(field_n(space_read(sp, tb, T0 + 120)), 6);
	template_free(any);
	template_free(ta);
	template_free(tb);
	space_free(sp);
}
END_TEST

START_TEST(cursor_lru_many_templates)
{
	/* More templates than a type keeps cursors for: evicted ones rebuild. */
	struct space *sp = space_new(1, self_a, 1000);
	struct hlc_stamp st = { T0, 0, 1 };
	struct template *t[80];
	char buf[160];
	int i, round;

	for (i = 0; i < 80; i++) {
		snprintf(buf, sizeof(buf), "{\"type\":\"job#v1\",\"where\":[{"
		    "\"field\":\"n\",\"op\":\"eq\",\"value\":%d}]}", i);
		t[i] = tmpl(buf);
	}
	for (i = 0; i < 80; i++)
		put_job(sp, i, "a", T0 + 1 + (uint64_t)(80 - i), T0);
	for (round = 0; round < 2; round++)
		for (i = 0; i < 80; i++)
			ck_assert_int_eq(field_n(space_read(sp, t[i], T0)), i);
	for (i = 79; i >= 0; i--) {
		ck_assert_int_eq(field_n(space_take_local(sp, t[i], &st, T0,
		    60000)), i);
		ck_assert_ptr_null(space_read(sp, t[i], T0));
	}
	for (i = 0; i < 80; i++)
		template_free(t[i]);
	space_free(sp);
}
END_TEST

/* ---- randomized: the index against a brute-force scan ---- */

static uint64_t
rnd_below(uint64_t *s, uint64_t n)
{
	return rnd(s) % n;
}

struct brute {
	const struct template	*t;
	uint64_t		 now;
	const struct space_rec	*best;
	const struct space_rec	*all[4096];
	size_t			 n;
};

static bool
rec_visible(const struct space_rec *r, uint64_t now)
{
	const struct crdt_state *st = space_rec_state(r);

	return crdt_state_present(st) && now < st->lease.expires_ms &&
	    !crdt_claim_active(space_rec_claim(r), now);
}

static bool
brute_visit(void *arg, const struct space_rec *r)
{
	struct brute *b = arg;

	if (!rec_visible(r, b->now) || !template_match(b->t, space_rec_entry(r)))
		return true;
	ck_assert_uint_lt(b->n, sizeof(b->all) / sizeof(b->all[0]));
	b->all[b->n++] = r;
	if (b->best == NULL || entry_cmp_fifo(space_rec_entry(r),
	    space_rec_entry(b->best)) < 0)
		b->best = r;
	return true;
}

static int
cmp_rec_fifo(const void *a, const void *b)
{
	return entry_cmp_fifo(space_rec_entry(*(const struct space_rec *const *)a),
	    space_rec_entry(*(const struct space_rec *const *)b));
}

/* Every visible match of t at now, FIFO-sorted, by scanning all records. */
static void
brute_scan(struct space *sp, const struct template *t, uint64_t now,
    struct brute *b)
{
	memset(b, 0, sizeof(*b));
	b->t = t;
	b->now = now;
	space_foreach(sp, brute_visit, b);
	qsort(b->all, b->n, sizeof(b->all[0]), cmp_rec_fifo);
}

struct collect {
	const struct space_rec	*r[4096];
	size_t			 n;
	size_t			 stop;	/* stop after this many; 0: never */
};

static bool
collect_one(void *arg, const struct space_rec *r)
{
	struct collect *c = arg;

	ck_assert_uint_lt(c->n, sizeof(c->r) / sizeof(c->r[0]));
	c->r[c->n++] = r;
	return c->stop == 0 || c->n < c->stop;
}

static const char *const fuzz_fixed[] = {
	"{\"type\":\"r#v1\"}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"k\",\"op\":\"eq\","
	    "\"value\":\"b\"}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"k\",\"op\":\"eq\","
	    "\"value\":\"a\"}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"k\",\"op\":\"in\","
	    "\"value\":[\"a\",\"c\"]}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"p\",\"op\":\"gt\","
	    "\"value\":6}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"k\",\"op\":\"eq\","
	    "\"value\":\"b\"},{\"field\":\"p\",\"op\":\"lt\",\"value\":5}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"p\",\"op\":\"lt\","
	    "\"value\":5},{\"field\":\"k\",\"op\":\"eq\",\"value\":\"b\"}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"k\",\"op\":\"eq\","
	    "\"value\":\"zzz\"}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"q\",\"op\":\"null\"}]}",
	"{\"type\":\"s#v1\",\"where\":[{\"field\":\"k\",\"op\":\"ne\","
	    "\"value\":\"a\"}]}",
	"{\"type\":\"s#v1\"}",
	/* Field indexes: numbers of mixed types, other types, misses. */
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":1}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":1.0}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":0}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":-0.0}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":1.5}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":\"1\"}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":null}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":true}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":[1]}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":1e300}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":7}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"in\","
	    "\"value\":[2.0,\"1\",1.5,2]}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"in\","
	    "\"value\":[9,8]}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":2},{\"field\":\"p\",\"op\":\"lt\",\"value\":4}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"p\",\"op\":\"gte\","
	    "\"value\":3},{\"field\":\"k\",\"op\":\"in\","
	    "\"value\":[\"c\",\"a\"]}]}",
	"{\"type\":\"s#v1\",\"where\":[{\"field\":\"x\",\"op\":\"eq\","
	    "\"value\":2.0}]}",
	"{\"type\":\"r#v1\",\"where\":[{\"field\":\"nope\",\"op\":\"eq\","
	    "\"value\":1}]}",
};
#define FUZZ_NFIXED	(sizeof(fuzz_fixed) / sizeof(fuzz_fixed[0]))
#define FUZZ_NDYN	40	/* "p eq i": more templates than cursors */
#define FUZZ_NY		12	/* "y<i> eq ...": more fields than indexes */

/* The x values written: numbers of every type, and other types. */
static const char *const fuzz_x[] = {
	"0", "1", "2", "0.0", "-0.0", "1.0", "2.0", "1.5", "1e300", "\"1\"",
	"null", "true", "false", "[1]", "[1.0]", "\"\"",
};

static void
fuzz_one(uint64_t seed, int nops)
{
	struct space *sp = space_new(1, self_a, 600);
	struct template *ts[FUZZ_NFIXED + FUZZ_NDYN + FUZZ_NY];
	uint8_t ids[2048][ENTRY_ID_LEN];
	size_t nids = 0;
	uint64_t s = seed | 1, now = T0;
	static struct brute b;
	static struct collect c;
	char f[160];

	for (size_t i = 0; i < FUZZ_NFIXED; i++)
		ts[i] = tmpl(fuzz_fixed[i]);
	for (int i = 0; i < FUZZ_NDYN; i++) {
		snprintf(f, sizeof(f), "{\"type\":\"r#v1\",\"where\":[{\"field\":"
		    "\"p\",\"op\":\"eq\",\"value\":%d}]}", i % 10);
		/* Ten distinct conditions, each under four spellings. */
		if (i >= 10)
			snprintf(f, sizeof(f), "{\"type\":\"r#v1\",\"where\":["
			    "{\"field\":\"p\",\"op\":\"eq\",\"value\":%d},"
			    "{\"field\":\"n\",\"op\":\"gte\",\"value\":%d}]}",
			    i % 10, i / 10 - 1);
		ts[FUZZ_NFIXED + (size_t)i] = tmpl(f);
	}
	for (int i = 0; i < FUZZ_NY; i++) {
		snprintf(f, sizeof(f), "{\"type\":\"r#v1\",\"where\":[{\"field\":"
		    "\"y%d\",\"op\":\"eq\",\"value\":%s}]}", i,
		    i % 2 ? "1" : "1.0");
		ts[FUZZ_NFIXED + FUZZ_NDYN + (size_t)i] = tmpl(f);
	}
	for (int op = 0; op < nops; op++) {
		uint64_t what = rnd_below(&s, 100);
		const struct template *t = ts[rnd_below(&s,
		    FUZZ_NFIXED + FUZZ_NDYN + FUZZ_NY)];

		if (what < 30) {
			/* A write, stamped anywhere around now: out of order. */
			static const char *const ks[] = { "a", "b", "c" };
			uint64_t phys = now - 400 + rnd_below(&s, 600);
			struct entry *e;

			int nf = snprintf(f, sizeof(f),
			    "{\"n\":%d,\"k\":\"%s\",\"p\":%d",
			    op, ks[rnd_below(&s, 3)], (int)rnd_below(&s, 10));

			/* Sometimes an x, sometimes a y<i> (keys unsorted). */
			if (rnd_below(&s, 4) != 0)
				nf += snprintf(f + nf, sizeof(f) - (size_t)nf,
				    ",\"x\":%s", fuzz_x[rnd_below(&s,
				    sizeof(fuzz_x) / sizeof(fuzz_x[0]))]);
			if (rnd_below(&s, 2) != 0)
				nf += snprintf(f + nf, sizeof(f) - (size_t)nf,
				    ",\"y%d\":%s", (int)rnd_below(&s, FUZZ_NY),
				    rnd_below(&s, 2) ? "1.0" : "1");
			snprintf(f + nf, sizeof(f) - (size_t)nf, "}");
			e = mk(rnd_below(&s, 4) == 0 ? "s#v1" : "r#v1", f, phys,
			    (uint32_t)rnd_below(&s, 3), 200 + rnd_below(&s, 3000));
			if (nids < sizeof(ids) / sizeof(ids[0]))
				memcpy(ids[nids++], e->id, ENTRY_ID_LEN);
			(void)space_write(sp, e, now);
		} else if (what < 55) {
			/* A take: the same record as the brute force's first. */
			struct hlc_stamp hs = { now, 0, 1 };
			struct space_rec *r;
			const struct space_rec *want;

			space_sweep(sp, now);
			brute_scan(sp, t, now, &b);
			want = b.best;
			r = space_take_local(sp, t, &hs, now,
			    1 + rnd_below(&s, 300));
			ck_assert_msg(r == want, "seed %llu op %d: take got %p, "
			    "brute force %p", (unsigned long long)seed, op,
			    (void *)r, (const void *)want);
		} else if (what < 70) {
			struct space_rec *r = space_read(sp, t, now);

			brute_scan(sp, t, now, &b);
			ck_assert_msg(r == b.best, "seed %llu op %d: read got %p, "
			    "brute force %p", (unsigned long long)seed, op,
			    (void *)r, (const void *)b.best);
		} else if (what < 76) {
			size_t n;

			memset(&c, 0, sizeof(c));
			c.stop = rnd_below(&s, 2) ? 0 : 1 + rnd_below(&s, 5);
			n = space_read_all(sp, t, now, collect_one, &c);
			brute_scan(sp, t, now, &b);
			ck_assert_msg(n == c.n, "seed %llu op %d",
			    (unsigned long long)seed, op);
			if (c.stop == 0)
				ck_assert_msg(c.n == b.n, "seed %llu op %d: "
				    "read_all %zu, brute force %zu",
				    (unsigned long long)seed, op, c.n, b.n);
			for (size_t i = 0; i < c.n; i++)
				ck_assert_msg(i < b.n && c.r[i] == b.all[i],
				    "seed %llu op %d: read_all differs at %zu",
				    (unsigned long long)seed, op, i);
		} else if (what < 82 && nids > 0) {
			(void)space_complete(sp, ids[rnd_below(&s, nids)], now);
		} else if (what < 85 && nids > 0) {
			(void)space_remove(sp, ids[rnd_below(&s, nids)], now);
		} else if (what < 90 && nids > 0) {
			/* A lease write: renew (maybe back to life) or cancel. */
			struct hlc_stamp hs = { now + 1000, 0, 1 };

			(void)space_lease(sp, ids[rnd_below(&s, nids)], &hs,
			    now + rnd_below(&s, 2000), now);
		} else if (what < 94 && nids > 0) {
			/* Another peer's claim, short or already over. */
			const uint8_t *id = ids[rnd_below(&s, nids)];
			const struct crdt_claim *w = space_winner(sp, id);
			struct crdt_claim cl;

			if (w != NULL) {
				memset(&cl, 0, sizeof(cl));
				cl.epoch = w->epoch + 1;
				cl.stamp.phys = now;
				memcpy(cl.holder, self_b, IDENTITY_ID_LEN);
				cl.expiry_ms = now + rnd_below(&s, 200);
				(void)space_claim(sp, id, &cl, now);
			}
		} else
			now += rnd_below(&s, 60);
	}
	for (size_t i = 0; i < FUZZ_NFIXED + FUZZ_NDYN + FUZZ_NY; i++)
		template_free(ts[i]);
	space_free(sp);
}

START_TEST(index_matches_brute_force)
{
	const char *env = getenv("SPACE_FUZZ_SEED");
	uint64_t seed = env != NULL ? strtoull(env, NULL, 0) :
	    0x5eed0000ull + (uint64_t)_i;

	fuzz_one(seed, 1500);
}
END_TEST

/*
 * A completed record keeps only what the CRDT needs: after the next call it
 * has no entry and no claim, is still a tombstone (a stale full copy with
 * its claim does not bring it back or change its digest), travels as
 * {"rec", "entry": null}, and such a record makes the same tombstone, with
 * the same digest, on a peer that never saw the entry.
 */

static Suite *
fifo_suite(void)
{
	Suite *s = suite_create("fifo");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, many_entries_index);
	tcase_add_test(tc, cursor_out_of_order_insert);
	tcase_add_test(tc, cursor_claims_lapse);
	tcase_add_test(tc, cursor_lru_many_templates);
	/* Seeds 0x5eed0000.., or SPACE_FUZZ_SEED for one chosen seed. */
	tcase_add_loop_test(tc, index_matches_brute_force, 0,
	    getenv("SPACE_FUZZ_SEED") != NULL ? 1 : 24);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(fifo_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

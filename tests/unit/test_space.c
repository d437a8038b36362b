/*
 * test_space.c: behaviour of the local replica (space.c) with the template
 * matchers it runs: FIFO order, every template op (wrong types included),
 * leases, take / reappear / complete, events, the record limit, digests
 * and repair by exchanging the records of differing buckets, compaction
 * of completed records.  The type indexes (fifo.c, fidx.c) have their own
 * test_fifo.c.  Time is driven by the test; nothing here reads a clock.
 */
#include "space_util.h"

/* ---- event log ---- */

struct evlog {
	int	 n;
	int	 ev[64];
	int64_t	 which[64];
};

static void
ev_record(void *arg, enum space_event ev, const struct space_rec *r)
{
	struct evlog *l = arg;
	struct val v;

	ck_assert_int_lt(l->n, 64);
	l->ev[l->n] = ev;
	l->which[l->n] = entry_field(space_rec_entry(r), "n", 1, &v) == 1 ?
	    v.i : -1;
	l->n++;
}

static int
ev_count(const struct evlog *l, enum space_event ev)
{
	int c = 0;

	for (int i = 0; i < l->n; i++)
		c += l->ev[i] == (int)ev;
	return c;
}

/* ---- tests ---- */

START_TEST(fifo_order)
{
	struct space *sp = space_new(1, self_a, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp st = { T0, 0, 1 };
	struct entry *e1, *e2;

	/* Inserted out of order: stamps decide, not arrival. */
	ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":3}", T0 + 30, 0,
	    60000), T0), SPACE_OK);
	ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":1}", T0 + 10, 0,
	    60000), T0), SPACE_OK);
	ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":2}", T0 + 10, 1,
	    60000), T0), SPACE_OK);
	ck_assert_int_eq(space_write(sp, mk("other#v1", "{\"n\":0}", T0, 0,
	    60000), T0), SPACE_OK);
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 100)), 1);
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 100)), 1);
	for (int64_t want = 1; want <= 3; want++)
		ck_assert_int_eq(field_n(space_take_local(sp, t, &st, T0 + 100,
		    60000)), want);
	ck_assert_ptr_null(space_take_local(sp, t, &st, T0 + 100, 60000));
	ck_assert_ptr_null(space_read(sp, t, T0 + 100));

	/* Same stamp: the id breaks the tie. */
	e1 = mk("tie#v1", "{\"n\":10}", T0, 0, 60000);
	e2 = mk("tie#v1", "{\"n\":11}", T0, 0, 60000);
	{
		struct template *tt = tmpl("{\"type\":\"tie#v1\"}");
		int64_t first = memcmp(e1->id, e2->id, ENTRY_ID_LEN) < 0 ? 10 :
		    11;

		ck_assert_int_eq(space_write(sp, e2, T0), SPACE_OK);
		ck_assert_int_eq(space_write(sp, e1, T0), SPACE_OK);
		ck_assert_int_eq(field_n(space_read(sp, tt, T0)), first);
		template_free(tt);
	}
	template_free(t);
	space_free(sp);
}
END_TEST

static bool
matches(struct entry *e, const char *where)
{
	char buf[4096];
	struct template *t;
	bool m;

	snprintf(buf, sizeof(buf), "{\"type\":\"t#v1\",\"where\":[%s]}", where);
	t = tmpl(buf);
	m = template_match(t, e);
	template_free(t);
	return m;
}

START_TEST(template_ops)
{
	struct entry *e = mk("t#v1", "{\"n\":5,\"f\":2.5,\"s\":\"hello world\","
	    "\"b\":true,\"z\":null,\"arr\":[1,\"x\",3.0],"
	    "\"big\":9223372036854775807,\"neg\":-7,"
	    "\"raw\":{\"$bytes\":\"AQI=\"},\"m\":{\"k\":1}}", T0, 0, 1000);
	struct {
		const char	*where;
		bool		 want;
	} cases[] = {
		/* eq / ne */
		{ "{\"field\":\"n\",\"op\":\"eq\",\"value\":5}", true },
		{ "{\"field\":\"n\",\"op\":\"eq\",\"value\":5.0}", true },
		{ "{\"field\":\"n\",\"op\":\"eq\",\"value\":6}", false },
		{ "{\"field\":\"n\",\"op\":\"eq\",\"value\":\"5\"}", false },
		{ "{\"field\":\"n\",\"op\":\"ne\",\"value\":6}", true },
		{ "{\"field\":\"n\",\"op\":\"ne\",\"value\":5}", false },
		{ "{\"field\":\"n\",\"op\":\"ne\",\"value\":\"5\"}", false },
		{ "{\"field\":\"s\",\"op\":\"eq\",\"value\":\"hello world\"}",
		    true },
		{ "{\"field\":\"b\",\"op\":\"eq\",\"value\":true}", true },
		{ "{\"field\":\"b\",\"op\":\"eq\",\"value\":1}", false },
		{ "{\"field\":\"b\",\"op\":\"ne\",\"value\":false}", true },
		{ "{\"field\":\"z\",\"op\":\"eq\",\"value\":null}", true },
		{ "{\"field\":\"raw\",\"op\":\"eq\","
		    "\"value\":{\"$bytes\":\"AQI=\"}}", true },
		{ "{\"field\":\"m\",\"op\":\"eq\",\"value\":{\"k\":1}}", true },
		{ "{\"field\":\"arr\",\"op\":\"eq\",\"value\":[1,\"x\",3.0]}",
		    true },
		{ "{\"field\":\"missing\",\"op\":\"eq\",\"value\":5}", false },
		{ "{\"field\":\"missing\",\"op\":\"ne\",\"value\":5}", false },
		/* ordered */
		{ "{\"field\":\"n\",\"op\":\"gt\",\"value\":4}", true },
		{ "{\"field\":\"n\",\"op\":\"gt\",\"value\":5}", false },
		{ "{\"field\":\"n\",\"op\":\"gte\",\"value\":5}", true },
		{ "{\"field\":\"n\",\"op\":\"lt\",\"value\":5.5}", true },
		{ "{\"field\":\"n\",\"op\":\"lte\",\"value\":4.99}", false },
		{ "{\"field\":\"f\",\"op\":\"gt\",\"value\":2}", true },
		{ "{\"field\":\"f\",\"op\":\"lt\",\"value\":3}", true },
		{ "{\"field\":\"neg\",\"op\":\"lt\",\"value\":-6.5}", true },
		{ "{\"field\":\"big\",\"op\":\"gt\",\"value\":"
		    "9223372036854775806}", true },
		{ "{\"field\":\"big\",\"op\":\"lt\",\"value\":1e19}", true },
		{ "{\"field\":\"s\",\"op\":\"gt\",\"value\":\"hello\"}", true },
		{ "{\"field\":\"s\",\"op\":\"lt\",\"value\":\"help\"}", true },
		{ "{\"field\":\"s\",\"op\":\"gt\",\"value\":3}", false },
		{ "{\"field\":\"s\",\"op\":\"lt\",\"value\":3}", false },
		{ "{\"field\":\"n\",\"op\":\"lt\",\"value\":\"9\"}", false },
		{ "{\"field\":\"b\",\"op\":\"lt\",\"value\":true}", false },
		{ "{\"field\":\"b\",\"op\":\"gte\",\"value\":true}", false },
		{ "{\"field\":\"z\",\"op\":\"lte\",\"value\":null}", false },
		{ "{\"field\":\"missing\",\"op\":\"lt\",\"value\":5}", false },
		/* in */
		{ "{\"field\":\"n\",\"op\":\"in\",\"value\":[1,5,9]}", true },
		{ "{\"field\":\"n\",\"op\":\"in\",\"value\":[\"5\",5.0]}",
		    true },
		{ "{\"field\":\"n\",\"op\":\"in\",\"value\":[\"5\",true]}",
		    false },
		{ "{\"field\":\"n\",\"op\":\"in\",\"value\":[]}", false },
		{ "{\"field\":\"s\",\"op\":\"in\",\"value\":[\"hello world\"]}",
		    true },
		/* contains */
		{ "{\"field\":\"s\",\"op\":\"contains\",\"value\":\"lo wo\"}",
		    true },
		{ "{\"field\":\"s\",\"op\":\"contains\",\"value\":\"xyz\"}",
		    false },
		{ "{\"field\":\"s\",\"op\":\"contains\",\"value\":5}", false },
		{ "{\"field\":\"arr\",\"op\":\"contains\",\"value\":\"x\"}",
		    true },
		{ "{\"field\":\"arr\",\"op\":\"contains\",\"value\":3}", true },
		{ "{\"field\":\"arr\",\"op\":\"contains\",\"value\":2}", false },
		{ "{\"field\":\"n\",\"op\":\"contains\",\"value\":5}", false },
		/* null / notnull */
		{ "{\"field\":\"z\",\"op\":\"null\"}", true },
		{ "{\"field\":\"missing\",\"op\":\"null\"}", true },
		{ "{\"field\":\"n\",\"op\":\"null\"}", false },
		{ "{\"field\":\"n\",\"op\":\"notnull\"}", true },
		{ "{\"field\":\"z\",\"op\":\"notnull\"}", false },
		{ "{\"field\":\"missing\",\"op\":\"notNull\"}", false },
		/* conjunction */
		{ "{\"field\":\"n\",\"op\":\"gt\",\"value\":1},"
		    "{\"field\":\"s\",\"op\":\"contains\",\"value\":\"world\"}",
		    true },
		{ "{\"field\":\"n\",\"op\":\"gt\",\"value\":1},"
		    "{\"field\":\"s\",\"op\":\"contains\",\"value\":\"mars\"}",
		    false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(matches(e, cases[i].where) == cases[i].want,
		    "case %zu: %s should %smatch", i, cases[i].where,
		    cases[i].want ? "" : "not ");
	/*
	 * Conjunctions of those cases, in any order, fields repeated or
	 * absent: the one-walk matcher of several conditions must agree
	 * with each condition's own answer.
	 */
	{
		const size_t nc = sizeof(cases) / sizeof(cases[0]);
		uint64_t seed = 0xc0ffee;
		char w[2048];

		for (int round = 0; round < 3000; round++) {
			size_t k = 2 + (size_t)(rnd(&seed) % 6), len = 0;
			bool want = true;

			for (size_t j = 0; j < k; j++) {
				size_t c = (size_t)(rnd(&seed) % nc);

				len += (size_t)snprintf(w + len, sizeof(w) - len,
				    "%s%s", j > 0 ? "," : "", cases[c].where);
				want = want && cases[c].want;
			}
			ck_assert_uint_lt(len, sizeof(w));
			ck_assert_msg(matches(e, w) == want, "%s should %smatch",
			    w, want ? "" : "not ");
		}
	}
	{
		struct template *t = tmpl("{\"type\":\"other#v1\"}");

		ck_assert(!template_match(t, e));
		template_free(t);
	}
	entry_free(e);
}
END_TEST

START_TEST(template_errors)
{
	const struct {
		const char *json, *needle;
	} bad[] = {
		{ "[]", "not an object" },
		{ "{}", "\"type\" missing" },
		{ "{\"type\":\"task\"}", "bad type" },
		{ "{\"type\":\"t#v1\",\"x\":1}", "unknown key \"x\"" },
		{ "{\"type\":\"t#v1\",\"where\":{}}", "not an array" },
		{ "{\"type\":\"t#v1\",\"where\":[{\"field\":\"a\",\"op\":\"gt\"}]}",
		    "where[0]: gt: \"value\" missing" },
		{ "{\"type\":\"t#v1\",\"where\":[{\"field\":\"a\",\"op\":\"zz\","
		    "\"value\":1}]}", "unknown op \"zz\"" },
		{ "{\"type\":\"t#v1\",\"where\":[{\"op\":\"eq\",\"value\":1}]}",
		    "\"field\" missing" },
		{ "{\"type\":\"t#v1\",\"where\":[{\"field\":\"a\",\"op\":\"in\","
		    "\"value\":3}]}", "needs an array" },
		{ "{\"type\":\"t#v1\",\"where\":[{\"field\":\"a\",\"op\":\"null\","
		    "\"value\":3}]}", "takes no \"value\"" },
		{ "{\"type\":\"t#v1\",\"where\":[{\"field\":\"a\",\"op\":\"eq\","
		    "\"value\":1},5]}", "where[1]: not an object" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = json_loads(bad[i].json, JSON_DECODE_ANY, NULL);
		char err[160] = "";
		struct template *t;

		ck_assert_ptr_nonnull(j);
		t = template_from_json(j, err, sizeof(err));
		ck_assert_msg(t == NULL, "case %zu accepted", i);
		ck_assert_msg(strstr(err, bad[i].needle) != NULL,
		    "case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].needle);
		json_decref(j);
	}
}
END_TEST

START_TEST(lease_expiry)
{
	struct space *sp = space_new(1, self_a, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct evlog log = { 0 };

	space_set_event_cb(sp, ev_record, &log);
	ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":1}", T0, 0, 100),
	    T0), SPACE_OK);
	ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":2}", T0, 1, 500),
	    T0), SPACE_OK);
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 99)), 1);
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 100)), 2);
	ck_assert_int_eq(ev_count(&log, SPACE_EV_EXPIRED), 1);
	ck_assert_int_eq(log.which[log.n - 1], 1);
	ck_assert_uint_eq(space_count(sp), 2);		/* a tombstone */
	ck_assert_uint_eq(space_visible_count(sp), 1);
	/* An expired write is refused. */
	ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":3}", T0, 2, 50),
	    T0 + 100), SPACE_EEXPIRED);
	/* Renew 2, then cancel it. */
	{
		struct space_rec *r = space_read(sp, t, T0 + 200);
		uint8_t id[ENTRY_ID_LEN];
		struct hlc_stamp s1 = { T0 + 200, 0, 1 }, s2 = { T0 + 300, 0, 1 };

		memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
		ck_assert_int_eq(space_lease(sp, id, &s1, T0 + 2000, T0 + 200),
		    SPACE_OK);
		/* 1's tombstone goes at lease end + 2 x 500 (largest lease). */
		space_sweep(sp, T0 + 100 + 999);
		ck_assert_uint_eq(space_count(sp), 2);
		space_sweep(sp, T0 + 100 + 1000);
		ck_assert_uint_eq(space_count(sp), 1);
		ck_assert_int_eq(field_n(space_read(sp, t, T0 + 1500)), 2);
		ck_assert_int_eq(space_lease(sp, id, &s2, T0 + 1500, T0 + 1500),
		    SPACE_OK);
		ck_assert_ptr_null(space_read(sp, t, T0 + 1500));
		ck_assert_int_eq(ev_count(&log, SPACE_EV_EXPIRED), 2);
	}
	/* 2 was cancelled at T0 + 1500: its tombstone goes at T0 + 2500. */
	ck_assert_uint_eq(space_count(sp), 1);
	space_sweep(sp, T0 + 1500 + 999);
	ck_assert_uint_eq(space_count(sp), 1);
	space_sweep(sp, T0 + 1500 + 1000);
	ck_assert_uint_eq(space_count(sp), 0);
	ck_assert_int_eq(ev_count(&log, SPACE_EV_WRITTEN), 2);
	template_free(t);
	space_free(sp);
}
END_TEST

START_TEST(take_reappear)
{
	struct space *sp = space_new(1, self_a, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp st = { T0, 0, 1 };
	struct space_rec *r;
	struct evlog log = { 0 };
	uint8_t id[ENTRY_ID_LEN];

	space_set_event_cb(sp, ev_record, &log);
	space_write(sp, mk("task#v1", "{\"n\":1}", T0, 0, 60000), T0);
	space_write(sp, mk("task#v1", "{\"n\":2}", T0, 1, 60000), T0);
	r = space_take_local(sp, t, &st, T0, 50);
	ck_assert_int_eq(field_n(r), 1);
	memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	ck_assert_uint_eq(space_winner(sp, id)->epoch, 1);
	ck_assert(space_won(sp, id, 1, T0 + 49));
	ck_assert(!space_won(sp, id, 1, T0 + 50));
	/* While claimed, 1 is invisible to read and take. */
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 49)), 2);
	ck_assert_int_eq(field_n(space_take_candidate(sp, t, T0 + 49)), 2);
	ck_assert_int_eq(ev_count(&log, SPACE_EV_REAPPEARED), 0);
	/* The claim lapses without completion: 1 is back, first again. */
	ck_assert_int_eq(field_n(space_read(sp, t, T0 + 50)), 1);
	ck_assert_int_eq(ev_count(&log, SPACE_EV_REAPPEARED), 1);
	r = space_take_local(sp, t, &st, T0 + 60, 50);
	ck_assert_int_eq(field_n(r), 1);
	ck_assert_uint_eq(space_winner(sp, id)->epoch, 2);
	ck_assert_int_eq(ev_count(&log, SPACE_EV_TAKEN), 2);
	template_free(t);
	space_free(sp);
}
END_TEST

START_TEST(complete_set_once)
{
	struct space *sp = space_new(1, self_a, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp st = { T0, 0, 1 };
	struct space_rec *r;
	struct evlog log = { 0 };
	uint8_t id[ENTRY_ID_LEN];

	space_set_event_cb(sp, ev_record, &log);
	space_write(sp, mk("task#v1", "{\"n\":1}", T0, 0, 60000), T0);
	r = space_take_local(sp, t, &st, T0, 50);
	memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	ck_assert_int_eq(space_complete(sp, id, T0 + 10), SPACE_OK);
	ck_assert_int_eq(space_complete(sp, id, T0 + 11), SPACE_EALREADY);
	ck_assert_ptr_null(space_read(sp, t, T0 + 100));	/* no reappear */
	ck_assert_ptr_null(space_take_local(sp, t, &st, T0 + 100, 50));
	ck_assert_uint_eq(space_visible_count(sp), 0);
	ck_assert_int_eq(space_complete(sp, (uint8_t[ENTRY_ID_LEN]){ 0 },
	    T0), SPACE_ENOENT);
	/* WRITTEN, TAKEN, COMPLETED, nothing more (not EXPIRED later). */
	space_sweep(sp, T0 + 70000);
	ck_assert_int_eq(log.n, 3);
	ck_assert_int_eq(log.ev[0], SPACE_EV_WRITTEN);
	ck_assert_int_eq(log.ev[1], SPACE_EV_TAKEN);
	ck_assert_int_eq(log.ev[2], SPACE_EV_COMPLETED);
	template_free(t);
	space_free(sp);
}
END_TEST

START_TEST(limit)
{
	struct space *sp = space_new(1, self_a, 3);
	struct space *other = space_new(2, self_b, 3);
	struct entry *e = mk("task#v1", "{\"n\":9}", T0, 9, 1000);
	struct crdt_rec cr;

	for (uint32_t i = 0; i < 3; i++)
		ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":1}", T0,
		    i, 1000), T0), SPACE_OK);
	ck_assert_int_eq(space_write(sp, mk("task#v1", "{\"n\":1}", T0, 7,
	    1000), T0), SPACE_EFULL);
	ck_assert_int_eq(space_write(other, entry_dup(e), T0), SPACE_OK);
	crdt_rec_init(&cr, e->id);
	crdt_state_copy(&cr.st, space_rec_state(space_get(other, e->id)));
	ck_assert_int_eq(space_merge(sp, e, &cr, T0), SPACE_EFULL);
	ck_assert_uint_eq(space_count(sp), 3);
	crdt_rec_free(&cr);
	space_free(sp);
	space_free(other);
}
END_TEST

/* Decode every record in w and merge it into sp; returns how many. */
static size_t
wire_merge(struct space *sp, const struct wire *w, uint64_t now)
{
	struct dcbor_rd rd;
	size_t n = 0;

	dcbor_rd_init(&rd, w->b.data, w->b.len);
	while (dcbor_left(&rd) > 0) {
		struct entry *e;
		struct crdt_rec cr;

		memset(&cr, 0, sizeof(cr));
		ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), 0);
		ck_assert_int_eq(space_merge(sp, e, &cr, now), SPACE_OK);
		crdt_rec_free(&cr);
		n++;
	}
	return n;
}

#define NB	16

static bool
digests_equal(const struct space *a, const struct space *b)
{
	uint64_t da[NB], db[NB];

	space_digest(a, NB, da);
	space_digest(b, NB, db);
	return memcmp(da, db, sizeof(da)) == 0;
}

START_TEST(digest_order_independent)
{
	struct space *src = space_new(1, self_a, 1000);
	struct space *x = space_new(2, self_b, 1000);
	struct space *y = space_new(3, self_b, 1000);
	struct wire w[40];
	struct hlc_stamp st = { T0, 0, 1 };
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	char f[32];

	for (int i = 0; i < 40; i++) {
		snprintf(f, sizeof(f), "{\"n\":%d}", i);
		ck_assert_int_eq(space_write(src, mk("task#v1", f, T0, (uint32_t)i,
		    60000), T0), SPACE_OK);
	}
	(void)space_take_local(src, t, &st, T0, 5000);	/* a claim too */
	/* One record per wire, so the order of merging can be chosen. */
	{
		struct wire all;
		struct dcbor_rd rd;
		int i = 0;

		dcbor_buf_init(&all.b);
		all.n = 0;
		space_foreach(src, wire_add, &all);
		ck_assert_uint_eq(all.n, 40);
		dcbor_rd_init(&rd, all.b.data, all.b.len);
		while (dcbor_left(&rd) > 0) {
			const uint8_t *p;
			size_t len;

			ck_assert_int_eq(dcbor_get_raw(&rd, &p, &len), 0);
			dcbor_buf_init(&w[i].b);
			dcbor_put_raw(&w[i].b, p, len);
			w[i++].n = 1;
		}
		dcbor_buf_free(&all.b);
	}
	for (int i = 0; i < 40; i++)
		wire_merge(x, &w[i], T0 + 1);
	for (int i = 39; i >= 0; i--) {
		wire_merge(y, &w[i], T0 + 1);
		wire_merge(y, &w[i], T0 + 1);		/* idempotent */
	}
	ck_assert_uint_eq(space_count(x), 40);
	ck_assert(digests_equal(x, y));
	ck_assert(digests_equal(src, x));
	ck_assert_uint_eq(space_visible_count(y), 39);	/* claim came along */
	for (int i = 0; i < 40; i++)
		dcbor_buf_free(&w[i].b);
	template_free(t);
	space_free(src);
	space_free(x);
	space_free(y);
}
END_TEST

static size_t
repair(struct space *a, struct space *b, uint64_t now, size_t *nbuckets)
{
	uint64_t da[NB], db[NB];
	uint32_t diff[NB];
	size_t nd = 0, moved;
	struct wire wa, wb;

	space_digest(a, NB, da);
	space_digest(b, NB, db);
	for (uint32_t i = 0; i < NB; i++)
		if (da[i] != db[i])
			diff[nd++] = i;
	*nbuckets = nd;
	dcbor_buf_init(&wa.b);
	dcbor_buf_init(&wb.b);
	wa.n = wb.n = 0;
	space_foreach_bucket(a, NB, diff, nd, wire_add, &wa);
	space_foreach_bucket(b, NB, diff, nd, wire_add, &wb);
	moved = wire_merge(b, &wa, now) + wire_merge(a, &wb, now);
	dcbor_buf_free(&wa.b);
	dcbor_buf_free(&wb.b);
	return moved;
}

START_TEST(digest_repair)
{
	struct space *a = space_new(1, self_a, 1000);
	struct space *b = space_new(2, self_b, 1000);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp st = { T0, 0, 1 };
	struct space_rec *r;
	size_t nd, moved;
	char f[32];
	uint8_t id[ENTRY_ID_LEN];

	for (int i = 0; i < 64; i++) {
		snprintf(f, sizeof(f), "{\"n\":%d}", i);
		space_write(i % 2 ? a : b, mk("task#v1", f, T0, (uint32_t)i,
		    60000), T0);
	}
	ck_assert(!digests_equal(a, b));
	moved = repair(a, b, T0 + 1, &nd);
	ck_assert_uint_eq(moved, 64);
	ck_assert(digests_equal(a, b));
	ck_assert_uint_eq(space_count(a), 64);
	ck_assert_uint_eq(space_count(b), 64);
	/* One change on a: a take then completion, one bucket differs. */
	r = space_take_local(a, t, &st, T0 + 2, 5000);
	memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	ck_assert_int_eq(space_complete(a, id, T0 + 3), SPACE_OK);
	ck_assert(!digests_equal(a, b));
	moved = repair(a, b, T0 + 4, &nd);
	ck_assert_uint_eq(nd, 1);
	ck_assert_uint_lt(moved, 64);
	ck_assert(digests_equal(a, b));
	ck_assert(space_rec_state(space_get(b, id))->completed);
	ck_assert_uint_eq(space_visible_count(b), 63);
	/* In sync: nothing to exchange. */
	moved = repair(a, b, T0 + 5, &nd);
	ck_assert_uint_eq(nd, 0);
	ck_assert_uint_eq(moved, 0);
	template_free(t);
	space_free(a);
	space_free(b);
}
END_TEST

START_TEST(lease_race_claims_converge)
{
	struct space *a = space_new(1, self_a, 100);
	struct space *b = space_new(2, self_b, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp sa = { T0 + 1, 0, 1 }, sb = { T0 + 1, 0, 2 };
	struct crdt_claim ca, cb;
	struct space_rec *r;
	struct wire w;
	uint8_t id[ENTRY_ID_LEN];

	space_write(a, mk("task#v1", "{\"n\":1}", T0, 0, 60000), T0);
	dcbor_buf_init(&w.b);
	w.n = 0;
	space_foreach(a, wire_add, &w);
	wire_merge(b, &w, T0);
	dcbor_buf_free(&w.b);
	/* Both pick the same candidate and claim it concurrently. */
	r = space_take_candidate(a, t, T0 + 1);
	memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	space_claim_make(a, r, &sa, T0 + 1, 5000, &ca);
	space_claim_make(b, space_take_candidate(b, t, T0 + 1), &sb, T0 + 1,
	    5000, &cb);
	ck_assert_uint_eq(ca.epoch, 1);
	ck_assert_uint_eq(cb.epoch, 1);
	ck_assert_int_eq(crdt_claim_check_remote(&cb, 0,
	    &space_rec_entry(r)->stamp, T0 + 1), CRDT_OK);
	space_claim(a, id, &ca, T0 + 1);
	space_claim(b, id, &cb, T0 + 1);
	space_claim(a, id, &cb, T0 + 2);
	space_claim(b, id, &ca, T0 + 2);
	/* Lower stamp wins (rule 3: node 1 < node 2): a, on both sides. */
	ck_assert(space_won(a, id, 1, T0 + 100));
	ck_assert(!space_won(b, id, 1, T0 + 100));
	ck_assert(crdt_claim_equal(space_winner(a, id), space_winner(b, id)));
	ck_assert_ptr_null(space_read(b, t, T0 + 100));
	ck_assert_int_eq(space_claim(a, (uint8_t[ENTRY_ID_LEN]){ 0 }, &ca,
	    T0), SPACE_ENOENT);
	template_free(t);
	space_free(a);
	space_free(b);
}
END_TEST

START_TEST(remote_tombstone_not_resurrected)
{
	struct space *a = space_new(1, self_a, 100);
	struct space *b = space_new(2, self_b, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp st = { T0, 0, 1 };
	struct space_rec *r;
	struct wire stale, w;
	uint8_t id[ENTRY_ID_LEN];
	struct evlog log = { 0 };

	space_write(a, mk("task#v1", "{\"n\":1}", T0, 0, 1000), T0);
	dcbor_buf_init(&stale.b);
	stale.n = 0;
	space_foreach(a, wire_add, &stale);	/* the uncompleted copy */
	r = space_take_local(a, t, &st, T0, 100);
	memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	space_complete(a, id, T0 + 1);
	/* b learns the completion first, then the stale copy. */
	space_set_event_cb(b, ev_record, &log);
	dcbor_buf_init(&w.b);
	w.n = 0;
	space_foreach(a, wire_add, &w);
	wire_merge(b, &w, T0 + 2);
	wire_merge(b, &stale, T0 + 3);
	ck_assert_ptr_null(space_read(b, t, T0 + 4));
	ck_assert_int_eq(ev_count(&log, SPACE_EV_WRITTEN), 0);
	/* After lease end + retention, the record is refused, not stored. */
	space_sweep(a, T0 + 1000 + 2000);
	ck_assert_uint_eq(space_count(a), 0);
	{
		struct dcbor_rd rd;
		struct entry *e;
		struct crdt_rec cr;

		memset(&cr, 0, sizeof(cr));
		dcbor_rd_init(&rd, stale.b.data, stale.b.len);
		ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), 0);
		ck_assert_int_eq(space_merge(a, e, &cr, T0 + 3000),
		    SPACE_EEXPIRED);
		crdt_rec_free(&cr);
	}
	ck_assert_uint_eq(space_count(a), 0);
	dcbor_buf_free(&stale.b);
	dcbor_buf_free(&w.b);
	template_free(t);
	space_free(a);
	space_free(b);
}
END_TEST

/*
 * A wire record whose state is under another entry's id is refused: else
 * the state (and a claim signed for the carried entry) would be merged
 * into that other record on the strength of the carried entry alone.
 */
START_TEST(record_ids_must_agree)
{
	struct space *a = space_new(1, self_a, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp st = { T0, 0, 1 };
	struct space_rec *rx, *ry;
	struct crdt_rec cr, got;
	struct dcbor_buf b;
	struct dcbor_rd rd;
	struct entry *e = NULL;

	space_write(a, mk("task#v1", "{\"n\":1}", T0, 0, 100000), T0);
	space_write(a, mk("task#v1", "{\"n\":2}", T0, 1, 100000), T0);
	ry = space_take_local(a, t, &st, T0, 1000);	/* n 1, claimed */
	ck_assert_ptr_nonnull(ry);
	rx = space_read(a, t, T0);			/* n 2 */
	ck_assert_ptr_nonnull(rx);
	ck_assert_int_eq(field_n(rx), 2);
	/* {"rec": x's id with y's state and claim, "entry": y} */
	crdt_rec_init(&cr, space_rec_entry(rx)->id);
	crdt_state_copy(&cr.st, space_rec_state(ry));
	cr.claim = *space_rec_claim(ry);
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 2);
	dcbor_put_cstr(&b, "rec");
	crdt_rec_encode(&b, &cr);
	dcbor_put_cstr(&b, "entry");
	entry_encode(&b, space_rec_entry(ry));
	memset(&got, 0, sizeof(got));
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(space_rec_decode(&rd, &e, &got), -1);
	ck_assert_ptr_null(e);
	crdt_rec_free(&got);
	crdt_rec_free(&cr);
	dcbor_buf_free(&b);
	template_free(t);
	space_free(a);
}
END_TEST

/*
 * Every completed record leaves stale due times behind (its lease end, its
 * claim's expiry): they are pruned, so the queue stays within 1.5 x the
 * records + 1024, and pruning loses no due time that counts: the live
 * entries still expire at their lease end (issue stamp + lease) and every
 * tombstone is still collected.
 */
static void
ev_count_expired(void *arg, enum space_event ev, const struct space_rec *r)
{
	(void)r;
	if (ev == SPACE_EV_EXPIRED)
		(*(int *)arg)++;
}

START_TEST(due_times_pruned)
{
	struct space *sp = space_new(1, self_a, 100000);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	int n = 6000, open_n = 0, expired = 0;

	for (int i = 0; i < n; i++) {
		char f[32];
		struct hlc_stamp st = { T0 + (uint64_t)i, 0, 1 };
		struct space_rec *r;
		uint8_t id[ENTRY_ID_LEN];

		snprintf(f, sizeof(f), "{\"n\":%d}", i);
		ck_assert_int_eq(space_write(sp, mk("task#v1", f, T0 + (uint64_t)i,
		    0, 100000), T0), SPACE_OK);
		if (i % 3 == 2) {
			open_n++;
			continue;	/* left open: expires at its lease end */
		}
		r = space_take_local(sp, t, &st, T0, 1000);
		ck_assert_ptr_nonnull(r);
		memcpy(id, space_rec_id(r), ENTRY_ID_LEN);
		ck_assert_int_eq(space_complete(sp, id, T0), SPACE_OK);
		ck_assert_uint_le(space_due_count(sp),
		    space_count(sp) + space_count(sp) / 2 + 1024);
	}
	space_sweep(sp, T0 + 1);
	ck_assert_uint_eq(space_count(sp), (size_t)n);
	ck_assert_uint_le(space_due_count(sp), n + n / 2 + 1024);
	ck_assert_uint_eq(space_visible_count(sp), (size_t)open_n);
	/* The open ones all expire at their lease end, none before. */
	space_set_event_cb(sp, ev_count_expired, &expired);
	space_sweep(sp, T0 + 99999);
	ck_assert_uint_eq(space_visible_count(sp), (size_t)open_n);
	space_sweep(sp, T0 + (uint64_t)n + 100000);
	ck_assert_uint_eq(space_visible_count(sp), 0);
	ck_assert_int_eq(expired, open_n);
	/* And every tombstone is collected after 2 x the lease. */
	space_sweep(sp, T0 + (uint64_t)n + 100000 + 200000);
	ck_assert_uint_eq(space_count(sp), 0);
	ck_assert_uint_eq(space_due_count(sp), 0);
	template_free(t);
	space_free(sp);
}
END_TEST

START_TEST(completed_record_compacted)
{
	struct space *a = space_new(1, self_a, 16), *b = space_new(2, self_b, 16);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct hlc_stamp st = { T0, 5, 1 };
	struct space_rec *r;
	struct dcbor_buf full, compact;
	struct dcbor_rd rd;
	struct crdt_rec cr;
	struct entry *e;
	uint8_t id[ENTRY_ID_LEN];
	uint64_t da[4], db[4], d2[4];

	space_write(a, mk("task#v1", "{\"n\":1}", T0, 0, 100000), T0);
	r = space_take_local(a, t, &st, T0, 1000);
	ck_assert_ptr_nonnull(r);
	memcpy(id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	dcbor_buf_init(&full);
	space_rec_encode(&full, r);		/* the full record, with claim */
	ck_assert_int_eq(space_complete(a, id, T0 + 1), SPACE_OK);
	ck_assert_ptr_nonnull(r = space_get(a, id));
	ck_assert_ptr_nonnull(space_rec_entry(r));	/* until the next call */

	space_sweep(a, T0 + 2);
	ck_assert_ptr_nonnull(r = space_get(a, id));
	ck_assert_ptr_null(space_rec_entry(r));
	ck_assert_uint_eq(space_rec_claim(r)->epoch, 0);
	ck_assert(space_rec_state(r)->completed);
	ck_assert_mem_eq(space_rec_id(r), id, ENTRY_ID_LEN);
	ck_assert_uint_eq(space_count(a), 1);
	space_digest(a, 4, da);

	/* The stale full copy, claim and all, changes nothing. */
	crdt_rec_init(&cr, id);
	dcbor_rd_init(&rd, full.data, full.len);
	ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), 0);
	ck_assert_int_eq(space_merge(a, e, &cr, T0 + 3), SPACE_OK);
	crdt_rec_free(&cr);
	ck_assert_ptr_null(space_read(a, t, T0 + 3));
	space_digest(a, 4, d2);
	ck_assert_mem_eq(da, d2, sizeof(da));

	/* On the wire: entry null; on b, the same tombstone. */
	dcbor_buf_init(&compact);
	space_rec_encode(&compact, space_get(a, id));
	ck_assert_uint_eq(compact.data[compact.len - 1], 0xf6);
	crdt_rec_init(&cr, id);
	dcbor_rd_init(&rd, compact.data, compact.len);
	ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), 0);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(space_merge(b, NULL, &cr, T0 + 3), SPACE_OK);
	crdt_rec_free(&cr);
	ck_assert_ptr_nonnull(r = space_get(b, id));
	ck_assert_ptr_null(space_rec_entry(r));
	space_digest(b, 4, db);
	ck_assert_mem_eq(da, db, sizeof(da));

	/* A record without its entry that is not completed is refused. */
	compact.data[compact.len - 1] = 0xf6;
	{
		struct crdt_rec live;
		struct dcbor_buf bad;

		crdt_rec_init(&live, id);
		(void)crdt_state_add(&live.st, 9, 1);
		dcbor_buf_init(&bad);
		dcbor_put_map(&bad, 2);
		dcbor_put_cstr(&bad, "rec");
		crdt_rec_encode(&bad, &live);
		dcbor_put_cstr(&bad, "entry");
		dcbor_put_null(&bad);
		crdt_rec_free(&live);
		crdt_rec_init(&cr, id);
		dcbor_rd_init(&rd, bad.data, bad.len);
		ck_assert_int_eq(space_rec_decode(&rd, &e, &cr), -1);
		crdt_rec_free(&cr);
		dcbor_buf_free(&bad);
	}
	dcbor_buf_free(&full);
	dcbor_buf_free(&compact);
	template_free(t);
	space_free(a);
	space_free(b);
}
END_TEST


/*
 * A copy of a record the space holds with its entry is stepped over
 * unparsed (1, no entry made); any other entry bytes under a held id are
 * decoded, and refused, exactly as space_rec_decode does.
 */
START_TEST(a_held_copy_is_not_parsed)
{
	struct space *a = space_new(1, self_a, 100), *b = space_new(2, self_b, 100);
	struct template *t = tmpl("{\"type\":\"task#v1\"}");
	struct space_rec *rx, *ry;
	const struct entry *he;
	struct crdt_rec cr;
	struct dcbor_buf w, bad;
	struct dcbor_rd rd;
	struct entry *e;
	uint8_t *p;

	space_write(a, mk("task#v1", "{\"n\":1}", T0, 0, 100000), T0);
	space_write(a, mk("task#v1", "{\"n\":2}", T0, 1, 100000), T0);
	ck_assert_ptr_nonnull(rx = space_read(a, t, T0));	/* n 1 */
	he = space_rec_entry(rx);
	dcbor_buf_init(&w);
	space_rec_encode(&w, rx);

	/* Held by a: stepped over, the state read, no entry. */
	crdt_rec_init(&cr, he->id);
	dcbor_rd_init(&rd, w.data, w.len);
	e = (struct entry *)1;
	ck_assert_int_eq(space_rec_decode_known(a, &rd, &e, &cr), 1);
	ck_assert_ptr_null(e);
	ck_assert_uint_eq(dcbor_left(&rd), 0);
	ck_assert_mem_eq(cr.id, he->id, ENTRY_ID_LEN);
	ck_assert(crdt_state_equal(&cr.st, space_rec_state(rx)));
	crdt_rec_free(&cr);

	/* Not held by b (nor with no space): decoded in full. */
	crdt_rec_init(&cr, he->id);
	dcbor_rd_init(&rd, w.data, w.len);
	ck_assert_int_eq(space_rec_decode_known(b, &rd, &e, &cr), 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_mem_eq(e->id, he->id, ENTRY_ID_LEN);
	entry_free(e);
	crdt_rec_free(&cr);

	/* Another signature under a held id: decoded, as before. */
	dcbor_buf_init(&bad);
	dcbor_put_raw(&bad, w.data, w.len);
	ck_assert_ptr_nonnull(p = memmem(bad.data, bad.len, he->sig,
	    IDENTITY_SIG_LEN));
	p[0] ^= 1;
	crdt_rec_init(&cr, he->id);
	dcbor_rd_init(&rd, bad.data, bad.len);
	ck_assert_int_eq(space_rec_decode_known(a, &rd, &e, &cr), 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->sig[0], he->sig[0] ^ 1);
	entry_free(e);
	crdt_rec_free(&cr);

	/* A body that does not hash to its id, under a held id: refused. */
	p[0] ^= 1;
	ck_assert_ptr_nonnull(p = memmem(bad.data, bad.len, he->body,
	    he->body_len));
	p[he->body_len - 1] ^= 1;	/* the issuer's last byte */
	crdt_rec_init(&cr, he->id);
	dcbor_rd_init(&rd, bad.data, bad.len);
	ck_assert_int_eq(space_rec_decode_known(a, &rd, &e, &cr), -1);
	ck_assert_ptr_null(e);
	crdt_rec_free(&cr);

	/* A held id's state with another held entry: refused, as before. */
	ck_assert_ptr_nonnull(ry = space_take_local(a, t, &(struct hlc_stamp){
	    T0, 0, 1 }, T0, 1000));		/* n 1 is claimed: n 2 is read */
	ck_assert_ptr_nonnull(rx = space_read(a, t, T0));
	ck_assert_ptr_ne(rx, ry);
	crdt_rec_init(&cr, space_rec_entry(rx)->id);
	crdt_state_copy(&cr.st, space_rec_state(ry));
	dcbor_buf_reset(&bad);
	dcbor_put_map(&bad, 2);
	dcbor_put_cstr(&bad, "rec");
	crdt_rec_encode(&bad, &cr);
	dcbor_put_cstr(&bad, "entry");
	entry_encode(&bad, space_rec_entry(ry));
	crdt_rec_free(&cr);
	crdt_rec_init(&cr, space_rec_entry(rx)->id);
	dcbor_rd_init(&rd, bad.data, bad.len);
	ck_assert_int_eq(space_rec_decode_known(a, &rd, &e, &cr), -1);
	ck_assert_ptr_null(e);
	crdt_rec_free(&cr);

	dcbor_buf_free(&bad);
	dcbor_buf_free(&w);
	template_free(t);
	space_free(a);
	space_free(b);
}
END_TEST

static Suite *
space_suite(void)
{
	Suite *s = suite_create("space");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fifo_order);
	tcase_add_test(tc, template_ops);
	tcase_add_test(tc, template_errors);
	tcase_add_test(tc, lease_expiry);
	tcase_add_test(tc, take_reappear);
	tcase_add_test(tc, complete_set_once);
	tcase_add_test(tc, limit);
	tcase_add_test(tc, digest_order_independent);
	tcase_add_test(tc, digest_repair);
	tcase_add_test(tc, lease_race_claims_converge);
	tcase_add_test(tc, remote_tombstone_not_resurrected);
	tcase_add_test(tc, record_ids_must_agree);
	tcase_add_test(tc, a_held_copy_is_not_parsed);
	tcase_add_test(tc, completed_record_compacted);
	tcase_add_test(tc, due_times_pruned);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(space_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

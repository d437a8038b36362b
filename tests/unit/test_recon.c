/*
 * test_recon.c: unit tests for common/neg.c and common/riblt.c.
 *
 * The property: two random sets with a random difference (either side
 * may be empty, the difference may be all of it) always reconcile to the
 * union, by either protocol, in a bounded number of rounds.  Plus the
 * wire edges: malformed messages are refused, symbols survive packing,
 * a decoder stops at its cap.  The seed is RECON_TEST_SEED from the
 * environment or a fixed default; failure messages name it.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "neg.h"
#include "riblt.h"
#include "rng.h"
#include "u64.h"

static uint64_t seed = 15;
static uint64_t rng;

static uint64_t
rnd(void)
{
	return rng_splitmix64(&rng);
}

struct pair {
	uint64_t	*a, *b, *u;	/* A, B and the union */
	size_t		 na, nb, nu;
};

/* common items shared, only_a and only_b items on one side each. */
static void
pair_make(struct pair *p, size_t common, size_t only_a, size_t only_b)
{
	p->a = calloc(common + only_a + 1, sizeof(uint64_t));
	p->b = calloc(common + only_b + 1, sizeof(uint64_t));
	p->u = calloc(common + only_a + only_b + 1, sizeof(uint64_t));
	p->na = p->nb = p->nu = 0;
	for (size_t i = 0; i < common; i++) {
		uint64_t x = rnd();

		p->a[p->na++] = x;
		p->b[p->nb++] = x;
		p->u[p->nu++] = x;
	}
	for (size_t i = 0; i < only_a; i++)
		p->u[p->nu++] = p->a[p->na++] = rnd();
	for (size_t i = 0; i < only_b; i++)
		p->u[p->nu++] = p->b[p->nb++] = rnd();
	qsort(p->u, p->nu, sizeof(uint64_t), u64_cmp);
}

static void
pair_free(struct pair *p)
{
	free(p->a);
	free(p->b);
	free(p->u);
}

/* side ∪ got, sorted and deduplicated, equals the union. */
static void
check_union(const struct pair *p, const uint64_t *side, size_t n,
    const struct neg_ids *got1, const struct neg_ids *got2, const char *who)
{
	size_t m = n + got1->n + got2->n, k = 0;
	uint64_t *v = calloc(m + 1, sizeof(uint64_t));

	if (n > 0)
		memcpy(v, side, n * sizeof(uint64_t));
	if (got1->n > 0)
		memcpy(v + n, got1->v, got1->n * sizeof(uint64_t));
	if (got2->n > 0)
		memcpy(v + n + got1->n, got2->v, got2->n * sizeof(uint64_t));
	qsort(v, m, sizeof(uint64_t), u64_cmp);
	for (size_t i = 0; i < m; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	ck_assert_msg(k == p->nu, "seed %" PRIu64 ": %s holds %zu, union %zu",
	    seed, who, k, p->nu);
	ck_assert_msg(memcmp(v, p->u, k * sizeof(uint64_t)) == 0,
	    "seed %" PRIu64 ": %s is not the union", seed, who);
	free(v);
}

/* Run negentropy between A (initiator) and B; returns the rounds. */
static int
neg_run(const struct pair *p, size_t *bytes)
{
	struct neg *na = neg_new(p->a, p->na), *nb = neg_new(p->b, p->nb);
	struct neg_ids ha = { 0 }, nda = { 0 }, hb = { 0 }, ndb = { 0 };
	struct dcbor_buf msg, rep;
	int rounds = 1;
	bool a_turn = false;	/* B answers first */

	dcbor_buf_init(&msg);
	dcbor_buf_init(&rep);
	neg_initiate(na, &msg);
	*bytes = msg.len;
	while (msg.len > 0) {
		dcbor_buf_reset(&rep);
		ck_assert_int_eq(neg_reply(a_turn ? na : nb, msg.data, msg.len,
		    &rep, a_turn ? &ha : &hb, a_turn ? &nda : &ndb), 0);
		ck_assert_msg(rounds < 40, "seed %" PRIu64 ": no end", seed);
		if (rep.len == 0)
			break;
		rounds++;
		*bytes += rep.len;
		dcbor_buf_reset(&msg);
		dcbor_put_raw(&msg, rep.data, rep.len);
		a_turn = !a_turn;
	}
	/* A gets what B has and A lacks: B's have plus A's need. */
	check_union(p, p->a, p->na, &hb, &nda, "A");
	check_union(p, p->b, p->nb, &ha, &ndb, "B");
	/* exactly the difference, each item once */
	ck_assert_msg(hb.n + nda.n == p->nu - p->na && ha.n + ndb.n ==
	    p->nu - p->nb, "seed %" PRIu64 ": %zu+%zu and %zu+%zu items for "
	    "a difference of %zu and %zu", seed, hb.n, nda.n, ha.n, ndb.n,
	    p->nu - p->na, p->nu - p->nb);
	neg_ids_free(&ha);
	neg_ids_free(&hb);
	neg_ids_free(&nda);
	neg_ids_free(&ndb);
	dcbor_buf_free(&msg);
	dcbor_buf_free(&rep);
	neg_free(na);
	neg_free(nb);
	return rounds;
}

/* Stream A's symbols to B in batches of 64 until B decodes. */
static size_t
riblt_run(const struct pair *p)
{
	struct riblt_enc *e = riblt_enc_new(p->a, p->na, 1u << 20);
	struct riblt_dec *d = riblt_dec_new(p->b, p->nb, 1u << 20);
	struct riblt_sym s[64];
	struct neg_ids got_a = { 0 }, got_b = { 0 }, none = { 0 };
	const uint64_t *v;
	size_t n, syms;

	while (!riblt_dec_done(d)) {
		riblt_enc_next(e, s, 64);
		ck_assert_int_eq(riblt_dec_add(d, s, 64), 0);
	}
	v = riblt_dec_remote(d, &n);	/* only A holds them */
	for (size_t i = 0; i < n; i++)
		neg_ids_push(&got_b, v[i]);
	v = riblt_dec_local(d, &n);	/* only B holds them */
	for (size_t i = 0; i < n; i++)
		neg_ids_push(&got_a, v[i]);
	check_union(p, p->a, p->na, &got_a, &none, "A");
	check_union(p, p->b, p->nb, &got_b, &none, "B");
	ck_assert_uint_eq(got_a.n + got_b.n, p->nu * 2 - p->na - p->nb);
	syms = riblt_dec_pos(d);
	neg_ids_free(&got_a);
	neg_ids_free(&got_b);
	riblt_enc_free(e);
	riblt_dec_free(d);
	return syms;
}

static void
random_shape(size_t *common, size_t *oa, size_t *ob)
{
	switch (rnd() % 5) {
	case 0:
		*common = 0;
		break;
	case 1:
		*common = rnd() % 40;
		break;
	default:
		*common = rnd() % 5000;
	}
	*oa = rnd() % 4 == 0 ? 0 : rnd() % 300;
	*ob = rnd() % 4 == 0 ? 0 : rnd() % 300;
}

START_TEST(neg_random_sets_reconcile)
{
	for (int t = 0; t < 60; t++) {
		struct pair p;
		size_t c, oa, ob, bytes;

		random_shape(&c, &oa, &ob);
		pair_make(&p, c, oa, ob);
		neg_run(&p, &bytes);
		pair_free(&p);
	}
}
END_TEST

START_TEST(riblt_random_sets_reconcile)
{
	for (int t = 0; t < 60; t++) {
		struct pair p;
		size_t c, oa, ob;

		random_shape(&c, &oa, &ob);
		pair_make(&p, c, oa, ob);
		riblt_run(&p);
		pair_free(&p);
	}
}
END_TEST

/* The shape at a tenth: 10,000 items, 100 differences. */
START_TEST(scale_shape)
{
	struct pair p;
	size_t bytes, syms;
	int rounds;

	pair_make(&p, 10000, 50, 50);
	rounds = neg_run(&p, &bytes);
	ck_assert_int_le(rounds, 12);
	syms = riblt_run(&p);
	/* about 1.35 d, a little more at this d; never near the cap */
	ck_assert_uint_le(syms, 400);
	pair_free(&p);
}
END_TEST

START_TEST(neg_refuses_malformed)
{
	static const uint64_t items[] = { 5, 9, 12 };
	struct neg *ng = neg_new(items, 3);
	struct neg_ids h = { 0 }, n = { 0 };
	struct dcbor_buf b, out;

	dcbor_buf_init(&b);
	dcbor_buf_init(&out);
	/* empty array */
	dcbor_put_array(&b, 0);
	ck_assert_int_eq(neg_reply(ng, b.data, b.len, &out, &h, &n), -1);
	/* a last range that does not run to the end */
	dcbor_buf_reset(&b);
	dcbor_put_array(&b, 1);
	dcbor_put_array(&b, 2);
	dcbor_put_uint(&b, 100);
	dcbor_put_uint(&b, 0);
	ck_assert_int_eq(neg_reply(ng, b.data, b.len, &out, &h, &n), -1);
	/* bounds out of order */
	dcbor_buf_reset(&b);
	dcbor_put_array(&b, 2);
	dcbor_put_array(&b, 2);
	dcbor_put_uint(&b, 100);
	dcbor_put_uint(&b, 0);
	dcbor_put_array(&b, 2);
	dcbor_put_uint(&b, 50);
	dcbor_put_uint(&b, 0);
	ck_assert_int_eq(neg_reply(ng, b.data, b.len, &out, &h, &n), -1);
	/* an item list out of order */
	dcbor_buf_reset(&b);
	dcbor_put_array(&b, 1);
	dcbor_put_array(&b, 3);
	dcbor_put_null(&b);
	dcbor_put_uint(&b, 2);
	dcbor_put_bytes(&b, (const uint8_t[16]){ 0, 0, 0, 0, 0, 0, 0, 9,
	    0, 0, 0, 0, 0, 0, 0, 5 }, 16);
	ck_assert_int_eq(neg_reply(ng, b.data, b.len, &out, &h, &n), -1);
	/* an unknown mode */
	dcbor_buf_reset(&b);
	dcbor_put_array(&b, 1);
	dcbor_put_array(&b, 2);
	dcbor_put_null(&b);
	dcbor_put_uint(&b, 7);
	ck_assert_int_eq(neg_reply(ng, b.data, b.len, &out, &h, &n), -1);
	/* all skip: over, nothing to send */
	dcbor_buf_reset(&b);
	dcbor_buf_reset(&out);
	dcbor_put_array(&b, 1);
	dcbor_put_array(&b, 2);
	dcbor_put_null(&b);
	dcbor_put_uint(&b, 0);
	ck_assert_int_eq(neg_reply(ng, b.data, b.len, &out, &h, &n), 0);
	ck_assert_uint_eq(out.len, 0);
	neg_ids_free(&h);
	neg_ids_free(&n);
	dcbor_buf_free(&b);
	dcbor_buf_free(&out);
	neg_free(ng);
}
END_TEST

START_TEST(riblt_pack_round_trip_and_cap)
{
	struct riblt_sym s[4] = { { 1, 2, 0 }, { UINT64_MAX, 7, -1 },
	    { 3, 4, 100000 }, { 0, 0, INT64_MIN } }, back[4];
	struct dcbor_buf b;
	struct dcbor_rd rd;
	const uint8_t *p;
	size_t len, k;
	struct riblt_dec *d;
	static const uint64_t one = 42;

	dcbor_buf_init(&b);
	riblt_put_syms(&b, s, 4);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(dcbor_get_bytes(&rd, &p, &len), 0);
	ck_assert_int_eq(riblt_get_syms(p, len, back, 4, &k), 0);
	ck_assert_uint_eq(k, 4);
	ck_assert_mem_eq(s, back, sizeof(s));
	ck_assert_int_eq(riblt_get_syms(p, len, back, 3, &k), -1);
	ck_assert_int_eq(riblt_get_syms(p, len - 1, back, 4, &k), -1);
	dcbor_buf_free(&b);

	d = riblt_dec_new(&one, 1, 8);
	ck_assert_int_eq(riblt_dec_add(d, s, 4), 0);
	ck_assert_int_eq(riblt_dec_add(d, s, 4), 0);
	ck_assert_int_eq(riblt_dec_add(d, s, 1), -1);
	riblt_dec_free(d);
}
END_TEST

/*
 * Made-up symbols: cell 0 holds x alone, every other cell nothing.  Peeling
 * x from cell 0 leaves -x in the next cell x maps to, which peels back
 * into cell 0, and so on: the decoder must refuse, not loop.
 */
START_TEST(riblt_refuses_endless_peeling)
{
	struct riblt_sym s[64];
	struct riblt_dec *d = riblt_dec_new(NULL, 0, 64);
	uint64_t x = 0x1234567890abcdefull;

	memset(s, 0, sizeof(s));
	s[0].sum = x;
	s[0].chk = riblt_checksum(x);
	s[0].count = 1;
	ck_assert_int_eq(riblt_dec_add(d, s, 64), -1);
	ck_assert(!riblt_dec_done(d));
	riblt_dec_free(d);
}
END_TEST

/*
 * A remote symbol's count is the peer's to choose: INT64_MIN, less a local
 * item, overflowed a signed add (UBSan, fuzz_recon).  Refused or not, the
 * stream must decode to nothing and stop nobody (SANITIZE builds abort on
 * the old code).
 */
START_TEST(riblt_extreme_counts)
{
	struct riblt_sym s[4];
	uint64_t local = 0x0fedcba987654321ull;
	const int64_t counts[2] = { INT64_MIN, INT64_MAX };

	for (int k = 0; k < 2; k++) {
		struct riblt_dec *d = riblt_dec_new(&local, 1, 64);

		memset(s, 0, sizeof(s));
		for (int i = 0; i < 4; i++)
			s[i].count = counts[k];
		(void)riblt_dec_add(d, s, 4);
		ck_assert(!riblt_dec_done(d));
		riblt_dec_free(d);
	}
}
END_TEST

static Suite *
recon_suite(void)
{
	Suite *s = suite_create("recon");
	TCase *tc = tcase_create("union");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, neg_random_sets_reconcile);
	tcase_add_test(tc, riblt_random_sets_reconcile);
	tcase_add_test(tc, scale_shape);
	suite_add_tcase(s, tc);
	tc = tcase_create("wire");
	tcase_add_test(tc, neg_refuses_malformed);
	tcase_add_test(tc, riblt_pack_round_trip_and_cap);
	tcase_add_test(tc, riblt_refuses_endless_peeling);
	tcase_add_test(tc, riblt_extreme_counts);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(recon_suite());
	const char *env = getenv("RECON_TEST_SEED");
	int failed;

	if (env != NULL)
		seed = strtoull(env, NULL, 10);
	rng = seed;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

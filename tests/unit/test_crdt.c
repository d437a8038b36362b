/*
 * test_crdt.c: the algebra of crdt.c on random inputs.  Claim merge, state
 * merge, record and whole-state merge must be commutative, associative and
 * idempotent; delta(a, b) merged into b must equal merge(a, b); dot sets
 * refuse growth past 1024; encodings round-trip.  Inputs come from small
 * domains so that every rule of the claim order sees ties.  The PRNG seed
 * comes from CRDT_TEST_SEED when set and is printed on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "crdt.h"
#include "rng.h"
#include "dcbor.h"

#define ROUNDS	4000

static uint64_t seed, rng;

static uint64_t
rnd(void)
{
	return rng_splitmix64(&rng);
}

static uint64_t
rn(uint64_t n)
{
	return rnd() % n;
}

static void
seed_setup(void)
{
	const char *s = getenv("CRDT_TEST_SEED");

	seed = s != NULL ? strtoull(s, NULL, 0) : 0x5eed1234abcdull;
	rng = seed;
}

#define SEEDED(cond) ck_assert_msg((cond), "failed: %s (CRDT_TEST_SEED=%llu)", \
	#cond, (unsigned long long)seed)

static void
rand_claim(struct crdt_claim *c)
{
	memset(c, 0, sizeof(*c));
	c->epoch = rn(3);
	c->bid = rn(2);
	c->stamp.phys = 100 + rn(2);
	c->stamp.logical = (uint32_t)rn(2);
	c->stamp.node = 1 + rn(2);
	c->holder[0] = (uint8_t)rn(2);
	c->expiry_ms = 1000 * (1 + rn(2));
	c->sig[5] = (uint8_t)rn(2);
	if (c->epoch == 0)		/* "no claim" is all zero */
		memset(c, 0, sizeof(*c));
}

static void
rand_state(struct crdt_state *st)
{
	crdt_state_init(st);
	for (uint64_t i = rn(4); i > 0; i--)
		(void)crdt_state_add(st, 1 + rn(3), 1 + rn(4));
	for (uint64_t i = rn(3); i > 0; i--) {
		struct crdt_state tmp;

		crdt_state_init(&tmp);
		(void)crdt_state_add(&tmp, 1 + rn(3), 1 + rn(4));
		(void)crdt_state_remove(&tmp);
		tmp.adds.n = 0;
		(void)crdt_state_merge(st, &tmp);
		crdt_state_free(&tmp);
	}
	if (rn(4) != 0) {
		struct hlc_stamp s = { 10 + rn(2), (uint32_t)rn(2), rn(2) };

		crdt_state_lease(st, &s, 5000 + 1000 * rn(2));
	}
	if (rn(3) == 0)
		crdt_state_complete(st);
}

static void
rand_map(struct crdt_map *m)
{
	crdt_map_init(m);
	for (uint64_t i = rn(6); i > 0; i--) {
		struct crdt_rec r;
		uint8_t id[ENTRY_ID_LEN] = { 0 };

		id[0] = (uint8_t)rn(8);
		crdt_rec_init(&r, id);
		rand_state(&r.st);
		rand_claim(&r.claim);
		(void)crdt_map_merge_rec(m, &r);
		crdt_rec_free(&r);
	}
}

static void
map_copy(struct crdt_map *dst, const struct crdt_map *src)
{
	crdt_map_init(dst);
	(void)crdt_map_merge(dst, src);
}

START_TEST(claim_merge_laws)
{
	struct crdt_claim a, b, c;
	const struct crdt_claim *ab, *ba, *l, *r;

	seed_setup();
	for (int i = 0; i < ROUNDS * 4; i++) {
		rand_claim(&a);
		rand_claim(&b);
		rand_claim(&c);
		ab = crdt_claim_merge(&a, &b);
		ba = crdt_claim_merge(&b, &a);
		SEEDED(crdt_claim_equal(ab, ba));
		SEEDED(ab == &a || ab == &b);
		SEEDED(crdt_claim_equal(crdt_claim_merge(&a, &a), &a));
		l = crdt_claim_merge(crdt_claim_merge(&a, &b), &c);
		r = crdt_claim_merge(&a, crdt_claim_merge(&b, &c));
		SEEDED(crdt_claim_equal(l, r));
	}
}
END_TEST

START_TEST(claim_rules_in_order)
{
	struct crdt_claim a, b;

	memset(&a, 0, sizeof(a));
	a.epoch = 2; a.bid = 5; a.stamp.phys = 50; a.expiry_ms = 10;
	b = a;
	b.epoch = 3; b.bid = 9; b.stamp.phys = 90;	/* 1 higher epoch */
	ck_assert_ptr_eq(crdt_claim_merge(&a, &b), &b);
	b = a;
	b.bid = 4; b.stamp.phys = 90;			/* 2 lower bid */
	ck_assert_ptr_eq(crdt_claim_merge(&a, &b), &b);
	b = a;
	b.stamp.logical = 1; b.holder[0] = 0;		/* 3 lower stamp */
	a.holder[0] = 1;
	ck_assert_ptr_eq(crdt_claim_merge(&a, &b), &a);
	b = a;
	b.stamp.node = 7;				/* node is in the stamp */
	ck_assert_ptr_eq(crdt_claim_merge(&a, &b), &a);
	b = a;
	b.holder[0] = 0; b.expiry_ms = 1;		/* 4 lower holder */
	ck_assert_ptr_eq(crdt_claim_merge(&a, &b), &b);
	b = a;
	b.expiry_ms = 99;				/* 5 renewal */
	ck_assert_ptr_eq(crdt_claim_merge(&a, &b), &b);
	ck_assert_ptr_eq(crdt_claim_merge(&b, &a), &b);
}
END_TEST

START_TEST(claim_remote_bounds)
{
	struct crdt_claim c;
	struct hlc_stamp es = { 1000000, 0, 1 };

	memset(&c, 0, sizeof(c));
	c.epoch = 5;
	c.stamp.phys = 1000000;
	c.expiry_ms = 2000000;
	ck_assert_int_eq(crdt_claim_check_remote(&c, 4, &es, 1000000), CRDT_OK);
	c.epoch = 4 + CRDT_EPOCH_JUMP_MAX;
	ck_assert_int_eq(crdt_claim_check_remote(&c, 4, &es, 1000000), CRDT_OK);
	c.epoch++;
	ck_assert_int_eq(crdt_claim_check_remote(&c, 4, &es, 1000000),
	    CRDT_EEPOCH);
	c.epoch = 0;
	ck_assert_int_eq(crdt_claim_check_remote(&c, 0, &es, 1000000),
	    CRDT_EEPOCH);
	c.epoch = 5;
	c.expiry_ms = 1000000 + CRDT_HOLD_MAX_MS + 1;
	ck_assert_int_eq(crdt_claim_check_remote(&c, 4, &es, 1000000),
	    CRDT_EHOLD);
	c.expiry_ms = 2000000;
	c.stamp.phys = 1000000 - CRDT_STAMP_BEFORE_MS;
	ck_assert_int_eq(crdt_claim_check_remote(&c, 4, &es, 1000000), CRDT_OK);
	c.stamp.phys--;
	ck_assert_int_eq(crdt_claim_check_remote(&c, 4, &es, 1000000),
	    CRDT_ESTAMP);
}
END_TEST

START_TEST(state_merge_laws)
{
	seed_setup();
	for (int i = 0; i < ROUNDS; i++) {
		struct crdt_state a, b, c, ab, ba, l, r, aa;

		rand_state(&a);
		rand_state(&b);
		rand_state(&c);
		crdt_state_init(&ab); crdt_state_copy(&ab, &a);
		ck_assert_int_eq(crdt_state_merge(&ab, &b), CRDT_OK);
		crdt_state_init(&ba); crdt_state_copy(&ba, &b);
		ck_assert_int_eq(crdt_state_merge(&ba, &a), CRDT_OK);
		SEEDED(crdt_state_equal(&ab, &ba));
		/* (a b) c == a (b c) */
		crdt_state_init(&l); crdt_state_copy(&l, &ab);
		(void)crdt_state_merge(&l, &c);
		crdt_state_init(&r); crdt_state_copy(&r, &b);
		(void)crdt_state_merge(&r, &c);
		crdt_state_init(&aa); crdt_state_copy(&aa, &a);
		(void)crdt_state_merge(&aa, &r);
		SEEDED(crdt_state_equal(&l, &aa));
		/* idempotent */
		crdt_state_copy(&aa, &a);
		(void)crdt_state_merge(&aa, &a);
		SEEDED(crdt_state_equal(&aa, &a));
		SEEDED(!crdt_state_would_change(&ab, &a));
		SEEDED(crdt_state_would_change(&a, &b) ==
		    !crdt_state_equal(&ab, &a));
		crdt_state_free(&a); crdt_state_free(&b); crdt_state_free(&c);
		crdt_state_free(&ab); crdt_state_free(&ba);
		crdt_state_free(&l); crdt_state_free(&r); crdt_state_free(&aa);
	}
}
END_TEST

START_TEST(state_presence)
{
	struct crdt_state st, other;

	crdt_state_init(&st);
	crdt_state_init(&other);
	ck_assert(!crdt_state_present(&st));
	crdt_state_add(&st, 1, 1);
	ck_assert(crdt_state_present(&st));
	crdt_state_copy(&other, &st);
	crdt_state_remove(&other);
	crdt_state_add(&st, 2, 1);		/* concurrent add survives */
	crdt_state_merge(&st, &other);
	ck_assert(crdt_state_present(&st));
	crdt_state_remove(&st);
	ck_assert(!crdt_state_present(&st));
	crdt_state_free(&st);
	crdt_state_add(&st, 1, 1);
	crdt_state_complete(&st);
	ck_assert(!crdt_state_present(&st));
	crdt_state_free(&st);
	crdt_state_free(&other);
}
END_TEST

START_TEST(dot_cap)
{
	struct crdt_state a, b;
	uint64_t i;

	crdt_state_init(&a);
	crdt_state_init(&b);
	for (i = 0; i < CRDT_MAX_DOTS; i++)
		ck_assert_int_eq(crdt_state_add(&a, 1, i), CRDT_OK);
	ck_assert_int_eq(crdt_state_add(&a, 1, 0), CRDT_OK);	/* dup */
	ck_assert_int_eq(crdt_state_add(&a, 2, 0), CRDT_EFULL);
	ck_assert_uint_eq(a.adds.n, CRDT_MAX_DOTS);
	ck_assert_int_eq(crdt_state_add(&b, 3, 0), CRDT_OK);
	b.completed = true;
	ck_assert_int_eq(crdt_state_merge(&a, &b), CRDT_EFULL);
	ck_assert(!a.completed);		/* refused merge changed nothing */
	ck_assert_uint_eq(a.adds.n, CRDT_MAX_DOTS);
	ck_assert_int_eq(crdt_state_remove(&a), CRDT_OK);
	ck_assert_uint_eq(a.rems.n, CRDT_MAX_DOTS);
	crdt_state_free(&a);
	crdt_state_free(&b);
}
END_TEST

START_TEST(map_merge_laws)
{
	seed_setup();
	for (int i = 0; i < ROUNDS; i++) {
		struct crdt_map a, b, c, ab, ba, l, bc, r, aa, d, bd;

		rand_map(&a);
		rand_map(&b);
		rand_map(&c);
		map_copy(&ab, &a);
		crdt_map_merge(&ab, &b);
		map_copy(&ba, &b);
		crdt_map_merge(&ba, &a);
		SEEDED(crdt_map_equal(&ab, &ba));
		map_copy(&l, &ab);
		crdt_map_merge(&l, &c);
		map_copy(&bc, &b);
		crdt_map_merge(&bc, &c);
		map_copy(&r, &a);
		crdt_map_merge(&r, &bc);
		SEEDED(crdt_map_equal(&l, &r));
		map_copy(&aa, &a);
		crdt_map_merge(&aa, &a);
		SEEDED(crdt_map_equal(&aa, &a));
		/* delta(a, b) merged into b == merge(a, b), and it is minimal */
		crdt_map_init(&d);
		crdt_map_delta(&a, &b, &d);
		map_copy(&bd, &b);
		crdt_map_merge(&bd, &d);
		SEEDED(crdt_map_equal(&bd, &ba));
		SEEDED(d.n <= a.n);
		crdt_map_delta(&a, &ab, &d);
		SEEDED(d.n == 0);
		crdt_map_free(&a); crdt_map_free(&b); crdt_map_free(&c);
		crdt_map_free(&ab); crdt_map_free(&ba); crdt_map_free(&l);
		crdt_map_free(&bc); crdt_map_free(&r); crdt_map_free(&aa);
		crdt_map_free(&d); crdt_map_free(&bd);
	}
}
END_TEST

START_TEST(map_merge_as_per_record)
{
	/*
	 * The whole-map merge (one pass over two sorted arrays) gives what
	 * merging each record in turn gives, refusals included: maps of up
	 * to 200 ids among 256, some records near the dot cap.
	 */
	seed_setup();
	for (int i = 0; i < ROUNDS / 8; i++) {
		struct crdt_map a, b, want, got;
		int rc_want = CRDT_OK, rc_got;

		crdt_map_init(&a);
		crdt_map_init(&b);
		for (int k = 0; k < 2; k++) {
			struct crdt_map *m = k == 0 ? &a : &b;

			for (uint64_t n = rn(200); n > 0; n--) {
				struct crdt_rec r;
				uint8_t id[ENTRY_ID_LEN] = { 0 };

				id[0] = (uint8_t)rn(256);
				id[1] = (uint8_t)rn(2);
				crdt_rec_init(&r, id);
				rand_state(&r.st);
				rand_claim(&r.claim);
				if (rn(16) == 0)	/* near the cap */
					for (uint64_t d = 0; d < 600; d++)
						(void)crdt_state_add(&r.st,
						    10 + (uint64_t)k, d);
				(void)crdt_map_merge_rec(m, &r);
				crdt_rec_free(&r);
			}
		}
		map_copy(&want, &a);
		for (size_t k = 0; k < b.n; k++)
			if (crdt_map_merge_rec(&want, &b.r[k]) != CRDT_OK)
				rc_want = CRDT_EFULL;
		map_copy(&got, &a);
		rc_got = crdt_map_merge(&got, &b);
		SEEDED(rc_got == rc_want);
		SEEDED(crdt_map_equal(&got, &want));
		for (size_t k = 1; k < got.n; k++)
			SEEDED(memcmp(got.r[k - 1].id, got.r[k].id,
			    ENTRY_ID_LEN) < 0);
		/* Into an empty map, and a map into itself. */
		crdt_map_free(&got);
		crdt_map_init(&got);
		SEEDED(crdt_map_merge(&got, &b) == CRDT_OK);
		SEEDED(crdt_map_equal(&got, &b));
		SEEDED(crdt_map_merge(&got, &got) == CRDT_OK);
		SEEDED(crdt_map_equal(&got, &b));
		crdt_map_free(&a);
		crdt_map_free(&b);
		crdt_map_free(&want);
		crdt_map_free(&got);
	}
}
END_TEST

START_TEST(map_encode_roundtrip)
{
	seed_setup();
	for (int i = 0; i < ROUNDS / 4; i++) {
		struct crdt_map a, b;
		struct dcbor_buf buf;
		struct dcbor_rd rd;

		rand_map(&a);
		crdt_map_init(&b);
		dcbor_buf_init(&buf);
		crdt_map_encode(&buf, &a);
		SEEDED(dcbor_check(buf.data, buf.len, DCBOR_MAX_DEPTH, true,
		    NULL) == DCBOR_OK);
		dcbor_rd_init(&rd, buf.data, buf.len);
		SEEDED(crdt_map_decode(&rd, &b, 1000) == 0);
		SEEDED(dcbor_left(&rd) == 0);
		SEEDED(crdt_map_equal(&a, &b));
		/* every truncation is refused without a crash */
		for (size_t cut = 0; cut < buf.len; cut++) {
			struct crdt_map t;

			crdt_map_init(&t);
			dcbor_rd_init(&rd, buf.data, cut);
			(void)crdt_map_decode(&rd, &t, 1000);
			crdt_map_free(&t);
		}
		dcbor_buf_free(&buf);
		crdt_map_free(&a);
		crdt_map_free(&b);
	}
}
END_TEST

START_TEST(decode_refuses_unsorted_dots)
{
	struct dcbor_buf b;
	struct dcbor_rd rd;
	struct crdt_state st;
	struct hlc_stamp z = { 0, 0, 0 };

	dcbor_buf_init(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "add");
	dcbor_put_array(&b, 4);
	dcbor_put_uint(&b, 2); dcbor_put_uint(&b, 1);
	dcbor_put_uint(&b, 1); dcbor_put_uint(&b, 1);
	dcbor_put_cstr(&b, "rem");
	dcbor_put_array(&b, 0);
	dcbor_put_cstr(&b, "done");
	dcbor_put_bool(&b, false);
	dcbor_put_cstr(&b, "lease");
	dcbor_put_array(&b, 2);
	hlc_encode(&b, &z);
	dcbor_put_uint(&b, 0);
	crdt_state_init(&st);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(crdt_state_decode(&rd, &st), -1);
	crdt_state_free(&st);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(claim_roundtrip_and_signing)
{
	struct crdt_claim c, d;
	struct dcbor_buf b, s1, s2;
	struct dcbor_rd rd;
	uint8_t id[ENTRY_ID_LEN] = { 1 }, id2[ENTRY_ID_LEN] = { 2 };

	seed_setup();
	rand_claim(&c);
	c.epoch = 7;
	dcbor_buf_init(&b);
	crdt_claim_encode(&b, &c);
	ck_assert_int_eq(dcbor_check(b.data, b.len, 8, true, NULL), DCBOR_OK);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(crdt_claim_decode(&rd, &d), 0);
	ck_assert(crdt_claim_equal(&c, &d));
	dcbor_buf_init(&s1);
	dcbor_buf_init(&s2);
	crdt_claim_signing_bytes(&s1, &c, id);
	crdt_claim_signing_bytes(&s2, &c, id2);
	ck_assert_int_eq(dcbor_check(s1.data, s1.len, 8, true, NULL),
	    DCBOR_OK);
	ck_assert(s1.len == s2.len && memcmp(s1.data, s2.data, s1.len) != 0);
	dcbor_buf_free(&b);
	dcbor_buf_free(&s1);
	dcbor_buf_free(&s2);
}
END_TEST

static Suite *
crdt_suite(void)
{
	Suite *s = suite_create("crdt");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, claim_merge_laws);
	tcase_add_test(tc, claim_rules_in_order);
	tcase_add_test(tc, claim_remote_bounds);
	tcase_add_test(tc, state_merge_laws);
	tcase_add_test(tc, state_presence);
	tcase_add_test(tc, dot_cap);
	tcase_add_test(tc, map_merge_laws);
	tcase_add_test(tc, map_merge_as_per_record);
	tcase_add_test(tc, map_encode_roundtrip);
	tcase_add_test(tc, decode_refuses_unsorted_dots);
	tcase_add_test(tc, claim_roundtrip_and_signing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(crdt_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (nf != 0)
		fprintf(stderr, "CRDT_TEST_SEED=%llu\n",
		    (unsigned long long)(getenv("CRDT_TEST_SEED") ?
		    strtoull(getenv("CRDT_TEST_SEED"), NULL, 0) :
		    0x5eed1234abcdull));
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * test_pmap.c: unit tests for common/pmap.c and common/pwalk.c on maps:
 * a build of 10,000 entries (about 220 bytes each, as the seed's map)
 * looks up and iterates in order; one changed value rewrites exactly one
 * node a level and its delta is that path; puts and deletes give exactly
 * the map a build of the edited entries gives (history independence);
 * unsorted input is refused.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "nodestore.h"
#include "pmap.h"
#include "pnode.h"
#include "pwalk.h"

#define N	10000
#define KLEN	16
#define VLEN	200

static char dir[64];
static struct nodestore *st;
static uint8_t keys[N + 1][KLEN];
static uint8_t vals[N + 1][VLEN];
static struct pmap_kv kv[N + 1];

static void
make_key(uint8_t *k, size_t i)
{
	snprintf((char *)k, KLEN, "key-%010zu", i * 7);
}

static void
setup(void)
{
	char err[256];

	snprintf(dir, sizeof(dir), "/tmp/test_pmap.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = nodestore_open(dir, err, sizeof(err));
	ck_assert_msg(st != NULL, "%s", err);
	for (size_t i = 0; i < N; i++) {
		make_key(keys[i], i);
		for (size_t k = 0; k < VLEN; k++)
			vals[i][k] = (uint8_t)(i * 31 + k);
		kv[i] = (struct pmap_kv){ keys[i], KLEN, vals[i], VLEN };
	}
}

static void
teardown(void)
{
	char cmd[128];

	nodestore_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void
build(struct nodestore *s, const struct pmap_kv *e, size_t n,
    struct pmap_info *info)
{
	char err[256];

	ck_assert_msg(pmap_build(s, e, n, info, err, sizeof(err)) == 0, "%s",
	    err);
}

struct it {
	size_t	n;
	bool	ok;
};

static int
iter_fn(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
    size_t vlen)
{
	struct it *it = arg;

	if (it->n >= N || klen != KLEN || vlen != VLEN ||
	    memcmp(key, keys[it->n], KLEN) != 0 ||
	    memcmp(val, vals[it->n], VLEN) != 0)
		it->ok = false;
	it->n++;
	return 0;
}

START_TEST(build_get_iter)
{
	struct pnode_src src = nodestore_src(st);
	struct pmap_info a;
	struct dcbor_buf v;
	struct it it = { 0, true };
	uint8_t k[KLEN];

	build(st, kv, N, &a);
	ck_assert_uint_eq(a.count, N);
	ck_assert_uint_ge(a.height, 2);
	ck_assert_uint_eq(a.new_nodes, a.nodes);
	/* Leaves near 2 KiB: about 2.2 MB of entries in 700..2,000 leaves. */
	ck_assert_uint_gt(a.nodes, 700);
	ck_assert_uint_lt(a.nodes, 2200);
	dcbor_buf_init(&v);
	for (size_t i = 0; i < N; i += 97) {
		ck_assert_int_eq(pmap_get(&src, a.root, keys[i], KLEN, &v), 0);
		ck_assert_uint_eq(v.len, VLEN);
		ck_assert_mem_eq(v.data, vals[i], VLEN);
	}
	memcpy(k, keys[5], KLEN);
	k[KLEN - 2] = '1';	/* key-...36: between two keys */
	ck_assert_int_eq(pmap_get(&src, a.root, k, KLEN, &v), 1);
	ck_assert_int_eq(pmap_get(&src, a.root, (const uint8_t *)"zzz", 3, &v),
	    1);
	ck_assert_int_eq(pmap_iter(&src, a.root, iter_fn, &it), 0);
	ck_assert_uint_eq(it.n, N);
	ck_assert(it.ok);
	dcbor_buf_free(&v);
}
END_TEST

struct collect {
	uint64_t	n, bytes;
};

static int
collect(void *arg, const struct pwalk_node *n)
{
	struct collect *c = arg;

	ck_assert_int_eq(n->kind, PNODE_M);
	c->n++;
	c->bytes += n->len;
	return 0;
}

START_TEST(one_value_one_node_a_level)
{
	struct pnode_src src = nodestore_src(st);
	struct pmap_info a, e, f;
	struct nodestore *fresh = nodestore_null();
	struct collect c = { 0, 0 };
	struct pwalk_stat ws;
	uint8_t nv[VLEN];
	char err[256];

	build(st, kv, N, &a);
	for (size_t t = 0; t < 20; t++) {
		size_t i = (t * 7919) % N;

		memset(nv, (int)(t + 1), sizeof(nv));
		ck_assert_int_eq(pmap_put(st, a.root, keys[i], KLEN, nv, VLEN,
		    &e, err, sizeof(err)), 0);
		ck_assert_uint_eq(e.new_nodes, e.height + 1);
		ck_assert_uint_eq(e.count, N);
		ck_assert_uint_eq(e.height, a.height);
		kv[i].val = nv;
		build(fresh, kv, N, &f);
		kv[i].val = vals[i];
		ck_assert_mem_eq(e.root, f.root, PNODE_ID_LEN);
	}
	/* The delta of the last one: its path, under 8 KiB. */
	ck_assert_int_eq(pwalk_delta(&src, e.root, a.root, 1, 2, collect, &c,
	    &ws), 0);
	ck_assert_uint_eq(c.n, e.height + 1);
	ck_assert_uint_lt(c.bytes, 8192);
	/* The whole map with no base. */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(pwalk_delta(&src, a.root, NULL, 0, 2, collect, &c,
	    &ws), 0);
	ck_assert_uint_eq(c.n, a.nodes);
	nodestore_close(fresh);
}
END_TEST

START_TEST(puts_and_deletes_match_a_build)
{
	struct pnode_src src = nodestore_src(st);
	struct pmap_info a, f;
	struct nodestore *fresh = nodestore_null();
	struct dcbor_buf v;
	static struct pmap_kv edited[N + 1];
	uint8_t nk[KLEN], big[1000];
	char err[256];

	build(st, kv, N, &a);
	/* Delete 50 keys, one by one, each checked against a build. */
	memcpy(edited, kv, sizeof(kv[0]) * N);
	for (size_t t = 0, n = N; t < 50; t++) {
		size_t i = (t * 4099 + 13) % n;

		ck_assert_int_eq(pmap_delete(st, a.root, edited[i].key, KLEN,
		    &a, err, sizeof(err)), 0);
		memmove(&edited[i], &edited[i + 1],
		    (n - i - 1) * sizeof(edited[0]));
		n--;
		build(fresh, edited, n, &f);
		ck_assert_mem_eq(a.root, f.root, PNODE_ID_LEN);
		ck_assert_uint_eq(a.count, n);
	}
	/* Insert new keys between others, and a bigger value. */
	memset(big, 'b', sizeof(big));
	make_key(nk, 123);
	nk[KLEN - 2] = '3';
	ck_assert_int_eq(pmap_put(st, a.root, nk, KLEN, big, sizeof(big), &a,
	    err, sizeof(err)), 0);
	dcbor_buf_init(&v);
	ck_assert_int_eq(pmap_get(&src, a.root, nk, KLEN, &v), 0);
	ck_assert_uint_eq(v.len, sizeof(big));
	/* A key after every other. */
	ck_assert_int_eq(pmap_put(st, a.root, (const uint8_t *)"zzz", 3, big,
	    10, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(pmap_get(&src, a.root, (const uint8_t *)"zzz", 3, &v),
	    0);
	/* Deleting an absent key changes nothing. */
	memcpy(f.root, a.root, PNODE_ID_LEN);
	ck_assert_int_eq(pmap_delete(st, a.root, (const uint8_t *)"aaa", 3, &a,
	    err, sizeof(err)), 0);
	ck_assert_mem_eq(f.root, a.root, PNODE_ID_LEN);
	dcbor_buf_free(&v);
	nodestore_close(fresh);
}
END_TEST

START_TEST(small_maps)
{
	struct pnode_src src = nodestore_src(st);
	struct pmap_info a, f;
	struct dcbor_buf v;
	char err[256];

	build(st, kv, 0, &a);
	ck_assert_uint_eq(a.count, 0);
	ck_assert_uint_eq(a.height, 0);
	ck_assert_int_eq(pmap_put(st, a.root, keys[0], KLEN, vals[0], VLEN, &a,
	    err, sizeof(err)), 0);
	build(st, kv, 1, &f);
	ck_assert_mem_eq(a.root, f.root, PNODE_ID_LEN);
	ck_assert_int_eq(pmap_delete(st, a.root, keys[0], KLEN, &a, err,
	    sizeof(err)), 0);
	build(st, kv, 0, &f);
	ck_assert_mem_eq(a.root, f.root, PNODE_ID_LEN);
	dcbor_buf_init(&v);
	ck_assert_int_eq(pmap_get(&src, a.root, keys[0], KLEN, &v), 1);
	dcbor_buf_free(&v);
	/* Grow one key at a time to 300 entries: always the built map. */
	for (size_t i = 0; i < 300; i++) {
		ck_assert_int_eq(pmap_put(st, a.root, keys[i], KLEN, vals[i],
		    VLEN, &a, err, sizeof(err)), 0);
	}
	build(st, kv, 300, &f);
	ck_assert_mem_eq(a.root, f.root, PNODE_ID_LEN);
}
END_TEST

START_TEST(unsorted_is_refused)
{
	struct pmap_info a;
	struct pmap_kv two[2] = { kv[1], kv[0] };
	char err[256] = "";

	ck_assert_int_eq(pmap_build(st, two, 2, &a, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "sorted") != NULL, "%s", err);
	two[0] = kv[0];
	two[1] = kv[0];
	ck_assert_int_eq(pmap_build(st, two, 2, &a, err, sizeof(err)), -1);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("pmap");
	TCase *tc = tcase_create("pmap");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, build_get_iter);
	tcase_add_test(tc, one_value_one_node_a_level);
	tcase_add_test(tc, puts_and_deletes_match_a_build);
	tcase_add_test(tc, small_maps);
	tcase_add_test(tc, unsorted_is_refused);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}

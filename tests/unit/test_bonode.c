/*
 * test_bonode.c: unit tests for common/bonode.c: an outboard split into
 * bo nodes joins back byte for byte; every leaf holds exactly the pairs of
 * the tree nodes inside its span and the top exactly those above (checked
 * on an outboard whose pairs are labelled with the node they belong to,
 * made by an explicit-stack walk written here); the counts and sizes the
 * design states (a 64 MiB blob at 16 KiB groups: 4 leaves of 1,023 pairs,
 * a top of 3); the spans a window needs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bao.h"
#include "bonode.h"
#include "dcbor.h"
#include "nodestore.h"
#include "pnode.h"
#include "pwalk.h"

#define MIB	(1024ull * 1024)

/*
 * An outboard of n groups whose pair for a node covering groups
 * [a, a + size) holds a and size (then filler): pre-order with a stack.
 */
static uint8_t *
labelled(uint64_t clen, unsigned g, size_t *len)
{
	uint64_t n = bao_groups(clen, g), sa[128], ss[128];
	size_t sp = 0, at = 8;
	uint8_t *ob;

	*len = (size_t)bao_outboard_len(clen, g);
	ob = calloc(1, *len);
	for (int i = 0; i < 8; i++)
		ob[i] = (uint8_t)(clen >> (8 * i));
	sa[sp] = 0;
	ss[sp++] = n;
	while (sp > 0) {
		uint64_t a = sa[--sp], size = ss[sp], l = 1;

		if (size == 1)
			continue;
		while (2 * l < size)
			l *= 2;
		memcpy(ob + at, &a, 8);
		memcpy(ob + at + 8, &size, 8);
		memset(ob + at + 16, 0x5a, 48);
		at += 64;
		/* Right pushed first, so the left comes out next. */
		sa[sp] = a + l;
		ss[sp++] = size - l;
		sa[sp] = a;
		ss[sp++] = l;
	}
	ck_assert_uint_eq(at, *len);
	return ob;
}

static void
check_split(uint64_t clen, unsigned g, unsigned span_log)
{
	struct nodestore *s;
	struct pnode_src src;
	struct dcbor_buf b, out;
	struct pnode_bo top, leaf;
	uint8_t id[PNODE_ID_LEN];
	uint64_t span = 1ull << span_log;
	size_t oblen;
	uint8_t *ob = labelled(clen, g, &oblen);
	char dir[64], err[256];
	int kind;

	snprintf(dir, sizeof(dir), "/tmp/test_bonode.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	s = nodestore_open(dir, err, sizeof(err));
	ck_assert_ptr_nonnull(s);
	src = nodestore_src(s);
	ck_assert_msg(bonode_split(s, ob, oblen, g, span_log, id, err,
	    sizeof(err)) == 0, "%s", err);
	dcbor_buf_init(&b);
	dcbor_buf_init(&out);
	ck_assert_int_eq(bonode_join(&src, id, &out), 0);
	ck_assert_uint_eq(out.len, oblen);
	ck_assert_mem_eq(out.data, ob, oblen);
	/* The top: pairs of nodes wider than a span; one leaf a span. */
	ck_assert_int_eq(nodestore_get(s, id, &b, &kind), 0);
	ck_assert_int_eq(pnode_bo_decode(b.data, b.len, &top), 0);
	ck_assert_uint_eq(top.nleaves, pnode_bo_spans(clen, g, span_log));
	ck_assert_uint_eq(top.npairs, top.nleaves - 1);
	for (size_t i = 0; i < top.npairs; i++) {
		uint64_t size;

		memcpy(&size, top.pairs + 64 * i + 8, 8);
		ck_assert_uint_gt(size, span);
	}
	for (size_t k = 0; k < top.nleaves; k++) {
		struct dcbor_buf lb;

		dcbor_buf_init(&lb);
		ck_assert_int_eq(nodestore_get(s, pnode_bo_leaf_id(&top, k),
		    &lb, &kind), 0);
		ck_assert_int_eq(pnode_bo_decode(lb.data, lb.len, &leaf), 0);
		for (size_t i = 0; i < leaf.npairs; i++) {
			uint64_t a, size;

			memcpy(&a, leaf.pairs + 64 * i, 8);
			memcpy(&size, leaf.pairs + 64 * i + 8, 8);
			ck_assert_uint_ge(a, k * span);
			ck_assert_uint_le(a + size, (k + 1) * span);
		}
		dcbor_buf_free(&lb);
	}
	/* A truncated outboard is refused. */
	ck_assert_int_eq(bonode_split(s, ob, oblen - 1, g, span_log, id, err,
	    sizeof(err)), -1);
	nodestore_close(s);
	snprintf(err, sizeof(err), "rm -rf %s", dir);
	ck_assert_int_eq(system(err), 0);
	dcbor_buf_free(&b);
	dcbor_buf_free(&out);
	free(ob);
}

START_TEST(split_and_join)
{
	uint64_t lens[] = { 0, 1, 1024, 1025, 5000, 37 * 1024 + 1,
	    100 * 1024 };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (unsigned sl = 0; sl <= 3; sl++)
			check_split(lens[i], 0, sl);
	check_split(16 * MIB, 4, 10);
	check_split(16 * MIB + 1, 4, 10);
	check_split(64 * MIB - 5, 4, 10);
	check_split(64 * MIB, 4, 10);
	check_split(50 * MIB + 12345, 4, 10);
}
END_TEST

START_TEST(sizes_at_64_mib)
{
	struct nodestore *s = nodestore_null();
	struct nodestore_counts c;
	uint8_t id[PNODE_ID_LEN];
	size_t oblen;
	uint8_t *ob = labelled(64 * MIB, 4, &oblen);
	char err[256];

	ck_assert_uint_eq(oblen, 8 + 64 * 4095);
	ck_assert_int_eq(bonode_split(s, ob, oblen, 4, 10, id, err,
	    sizeof(err)), 0);
	nodestore_counts(s, &c);
	ck_assert_uint_eq(c.nodes[PNODE_BO], 5);
	/* Four leaves of 1,023 pairs (65,472 bytes and 8 of CBOR), a top. */
	ck_assert_uint_eq(c.bytes[PNODE_BO], 4 * (65472 + 8) +
	    (1 + 2 + 1 + 5 + 1 + 1 + 3 + 192 + 1 + 4 * 34));
	nodestore_close(s);
	free(ob);
}
END_TEST

static void
emit_count(void *arg, uint64_t off, const uint8_t *p, size_t n)
{
	(void)off;
	(void)p;
	*(uint64_t *)arg += n;
}

static int
count_node(void *arg, const struct pwalk_node *n)
{
	(void)arg;
	ck_assert_int_eq(n->kind, PNODE_BO);
	return 0;
}

/* A real outboard: split, joined back, and a window sliced from it verifies. */
START_TEST(real_outboard)
{
	uint64_t clen = 40 * MIB + 777, got = 0, x = 1;
	uint8_t *data = malloc(clen), root[32], id[PNODE_ID_LEN];
	size_t oblen = (size_t)bao_outboard_len(clen, 4);
	uint8_t *ob = malloc(oblen), *slice;
	struct nodestore *s;
	struct pnode_src src;
	struct dcbor_buf out;
	struct bao_verify *v;
	char dir[64], err[256];

	for (uint64_t i = 0; i < clen; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		data[i] = (uint8_t)(x >> 56);
	}
	bao_outboard(data, clen, 4, root, ob);
	snprintf(dir, sizeof(dir), "/tmp/test_bonode.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	s = nodestore_open(dir, err, sizeof(err));
	ck_assert_ptr_nonnull(s);
	src = nodestore_src(s);
	ck_assert_int_eq(bonode_split(s, ob, oblen, 4, 10, id, err,
	    sizeof(err)), 0);
	dcbor_buf_init(&out);
	ck_assert_int_eq(bonode_join(&src, id, &out), 0);
	ck_assert_uint_eq(out.len, oblen);
	ck_assert_mem_eq(out.data, ob, oblen);
	slice = malloc((size_t)bao_slice_len(clen, 4, 20 * MIB, 2 * MIB));
	ck_assert_int_eq(bao_slice(data, clen, out.data, 4, 20 * MIB, 2 * MIB,
	    slice), 0);
	v = bao_verify_new(root, 4, 20 * MIB, 2 * MIB, emit_count, &got);
	ck_assert_int_eq(bao_verify_feed(v, slice,
	    (size_t)bao_slice_len(clen, 4, 20 * MIB, 2 * MIB)), 0);
	ck_assert_int_eq(bao_verify_finish(v), 0);
	ck_assert_uint_eq(got, 2 * MIB);
	bao_verify_free(v);
	/* The bo nodes travel as a tree: the top, then its 3 leaves. */
	{
		struct pwalk_stat ws;

		ck_assert_int_eq(pwalk_delta(&src, id, NULL, 0, 2, count_node,
		    NULL, &ws), 0);
		ck_assert_uint_eq(ws.nodes[PNODE_BO], 4);
		/* Every pair once, 8 bytes of CBOR a leaf, the top's own. */
		ck_assert_uint_eq(ws.bytes[PNODE_BO], oblen - 8 +
		    3 * 8 + (1 + 3 + 1 + 5 + 1 + 1 + 2 + 1 + 3 * 34));
	}
	nodestore_close(s);
	snprintf(err, sizeof(err), "rm -rf %s", dir);
	ck_assert_int_eq(system(err), 0);
	dcbor_buf_free(&out);
	free(slice);
	free(ob);
	free(data);
}
END_TEST

START_TEST(window_spans)
{
	uint64_t f, l;

	bonode_window(64 * MIB, 4, 10, 32 * MIB, 2 * MIB, &f, &l);
	ck_assert_uint_eq(f, 2);
	ck_assert_uint_eq(l, 2);
	bonode_window(64 * MIB, 4, 10, 15 * MIB, 2 * MIB, &f, &l);
	ck_assert_uint_eq(f, 0);
	ck_assert_uint_eq(l, 1);
	bonode_window(64 * MIB, 4, 10, 70 * MIB, 0, &f, &l);
	ck_assert_uint_eq(f, 3);
	ck_assert_uint_eq(l, 3);
	bonode_window(0, 4, 10, 0, 0, &f, &l);
	ck_assert_uint_eq(f, 0);
	ck_assert_uint_eq(l, 0);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("bonode");
	TCase *tc = tcase_create("bonode");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, split_and_join);
	tcase_add_test(tc, sizes_at_64_mib);
	tcase_add_test(tc, real_outboard);
	tcase_add_test(tc, window_spans);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}

/*
 * test_pnode.c: unit tests for the node codecs of common/pnode.c: each
 * kind round-trips, and the strict decoders refuse what the rules forbid
 * (non-canonical CBOR, the wrong name, counts and lengths that do not add
 * up, unsorted keys, ...).  With PNODE_SEED_DIR set it writes the valid
 * nodes there as seeds for fuzz_pnode (first byte: the kind's mode).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "pnode.h"

static uint8_t ida[PNODE_ID_LEN], idb[PNODE_ID_LEN];

static void
seed(int mode, const struct dcbor_buf *b, const char *name)
{
	const char *dir = getenv("PNODE_SEED_DIR");
	char path[512];
	FILE *fp;

	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	ck_assert_ptr_nonnull(fp);
	fputc(mode, fp);
	fwrite(b->data, 1, b->len, fp);
	fclose(fp);
}

static void
setup(void)
{
	memset(ida, 0xaa, sizeof(ida));
	memset(idb, 0xbb, sizeof(idb));
}

/* Decode with a byte changed at i (to v): must fail. */
#define REFUSED(dec, b, out) ck_assert_int_eq(dec((b).data, (b).len, out), -1)

START_TEST(b_nodes)
{
	struct pnode_child kids[2] = { { ida, 70000 }, { idb, 5 } };
	struct dcbor_buf b;
	struct pnode_b nb;

	dcbor_buf_init(&b);
	pnode_b_encode(&b, 1, kids, 2);
	seed(0, &b, "b1");
	ck_assert_int_eq(pnode_b_decode(b.data, b.len, &nb), 0);
	ck_assert_uint_eq(nb.level, 1);
	ck_assert_uint_eq(nb.total, 70005);
	ck_assert_uint_eq(nb.n, 2);
	ck_assert_mem_eq(nb.kids[1].id, idb, PNODE_ID_LEN);
	ck_assert_int_eq(pnode_kind_of(b.data, b.len), PNODE_B);
	/* total that does not add up */
	b.data[8] ^= 1;
	REFUSED(pnode_b_decode, b, &nb);
	/* trailing byte */
	b.data[8] ^= 1;
	dcbor_put_uint(&b, 0);
	REFUSED(pnode_b_decode, b, &nb);
	/* level 0, a child of length 0, an empty node above level 1 */
	dcbor_buf_reset(&b);
	pnode_b_encode(&b, 0, kids, 2);
	REFUSED(pnode_b_decode, b, &nb);
	kids[1].len = 0;
	dcbor_buf_reset(&b);
	pnode_b_encode(&b, 1, kids, 2);
	REFUSED(pnode_b_decode, b, &nb);
	dcbor_buf_reset(&b);
	pnode_b_encode(&b, 2, kids, 0);
	REFUSED(pnode_b_decode, b, &nb);
	dcbor_buf_reset(&b);
	pnode_b_encode(&b, 1, kids, 0);
	ck_assert_int_eq(pnode_b_decode(b.data, b.len, &nb), 0);
	/* not canonical: the level as a two-byte uint */
	dcbor_buf_reset(&b);
	dcbor_put_raw(&b, "\x84\x61\x62\x18\x01\x00\x80", 7);
	REFUSED(pnode_b_decode, b, &nb);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(z_frames)
{
	struct pnode_zop ops[3] = {
		{ .off = 0, .len = 100 },
		{ .add = true, .len = 3, .bytes = (const uint8_t *)"abc" },
		{ .off = 103, .len = 50 },
	};
	struct dcbor_buf b;
	struct pnode_z z;

	dcbor_buf_init(&b);
	pnode_z_encode(&b, ida, 153, ops, 3);
	seed(1, &b, "z1");
	ck_assert_int_eq(pnode_z_decode(b.data, b.len, &z), 0);
	ck_assert_uint_eq(z.nops, 3);
	ck_assert(z.ops[1].add);
	ck_assert_uint_eq(z.ops[2].off, 103);
	pnode_z_free(&z);
	dcbor_buf_reset(&b);
	pnode_z_encode(&b, ida, 154, ops, 3);	/* lengths do not add up */
	REFUSED(pnode_z_decode, b, &z);
	dcbor_buf_reset(&b);
	pnode_z_encode(&b, ida, 0, ops, 0);	/* empty */
	REFUSED(pnode_z_decode, b, &z);
	ops[1].len = 0;
	dcbor_buf_reset(&b);
	pnode_z_encode(&b, ida, 150, ops, 3);	/* an empty ADD */
	REFUSED(pnode_z_decode, b, &z);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(bo_nodes)
{
	uint8_t pairs[64 * 3], ids[2 * PNODE_ID_LEN];
	struct dcbor_buf b;
	struct pnode_bo bo;

	memset(pairs, 7, sizeof(pairs));
	memcpy(ids, ida, PNODE_ID_LEN);
	memcpy(ids + PNODE_ID_LEN, idb, PNODE_ID_LEN);
	dcbor_buf_init(&b);
	pnode_bo_leaf_encode(&b, pairs, 3);
	seed(2, &b, "bo_leaf");
	ck_assert_int_eq(pnode_bo_decode(b.data, b.len, &bo), 0);
	ck_assert_uint_eq(bo.level, 0);
	ck_assert_uint_eq(bo.npairs, 3);
	/* A top of 20 MiB at 16 KiB groups: 2 spans, 1 pair, 2 leaves. */
	dcbor_buf_reset(&b);
	pnode_bo_top_encode(&b, 20 << 20, 4, 10, pairs, 1, ids, 2);
	seed(2, &b, "bo_top");
	ck_assert_int_eq(pnode_bo_decode(b.data, b.len, &bo), 0);
	ck_assert_uint_eq(bo.nleaves, 2);
	ck_assert_mem_eq(pnode_bo_leaf_id(&bo, 1), idb, PNODE_ID_LEN);
	/* Pair or leaf counts that are not the content's. */
	dcbor_buf_reset(&b);
	pnode_bo_top_encode(&b, 20 << 20, 4, 10, pairs, 2, ids, 2);
	REFUSED(pnode_bo_decode, b, &bo);
	dcbor_buf_reset(&b);
	pnode_bo_top_encode(&b, 10 << 20, 4, 10, pairs, 1, ids, 2);
	REFUSED(pnode_bo_decode, b, &bo);
	/* A leaf of half a pair. */
	dcbor_buf_reset(&b);
	dcbor_put_array(&b, 3);
	dcbor_put_cstr(&b, "bo");
	dcbor_put_uint(&b, 0);
	dcbor_put_bytes(&b, pairs, 32);
	REFUSED(pnode_bo_decode, b, &bo);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(m_nodes)
{
	struct pnode_mentry e[2] = {
		{ .key = (const uint8_t *)"a", .klen = 1,
		  .val = (const uint8_t *)"one", .vlen = 3, .id = ida,
		  .count = 3 },
		{ .key = (const uint8_t *)"ab", .klen = 2,
		  .val = (const uint8_t *)"", .vlen = 0, .id = idb,
		  .count = 9 },
	};
	struct dcbor_buf b;
	struct pnode_m m;

	dcbor_buf_init(&b);
	pnode_m_encode(&b, 0, e, 2);
	seed(3, &b, "m_leaf");
	ck_assert_uint_eq(b.len, 5 + pnode_m_entry_len(0, &e[0]) +
	    pnode_m_entry_len(0, &e[1]));
	ck_assert_int_eq(pnode_m_decode(b.data, b.len, &m), 0);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_uint_eq(m.e[0].vlen, 3);
	pnode_m_free(&m);
	dcbor_buf_reset(&b);
	pnode_m_encode(&b, 2, e, 2);
	seed(3, &b, "m_node");
	ck_assert_uint_eq(b.len, 5 + pnode_m_entry_len(2, &e[0]) +
	    pnode_m_entry_len(2, &e[1]));
	ck_assert_int_eq(pnode_m_decode(b.data, b.len, &m), 0);
	ck_assert_uint_eq(m.e[1].count, 9);
	pnode_m_free(&m);
	/* Keys out of order, a key twice, a count of 0, an empty inner node. */
	{
		struct pnode_mentry r[2] = { e[1], e[0] };

		dcbor_buf_reset(&b);
		pnode_m_encode(&b, 0, r, 2);
		REFUSED(pnode_m_decode, b, &m);
		r[0] = e[0];
		dcbor_buf_reset(&b);
		pnode_m_encode(&b, 0, r, 2);
		REFUSED(pnode_m_decode, b, &m);
		r[1] = e[1];
		r[1].count = 0;
		dcbor_buf_reset(&b);
		pnode_m_encode(&b, 1, r, 2);
		REFUSED(pnode_m_decode, b, &m);
	}
	dcbor_buf_reset(&b);
	pnode_m_encode(&b, 1, e, 0);
	REFUSED(pnode_m_decode, b, &m);
	dcbor_buf_reset(&b);
	pnode_m_encode(&b, 0, e, 0);
	ck_assert_int_eq(pnode_m_decode(b.data, b.len, &m), 0);
	pnode_m_free(&m);
	/* A b node is not a map node. */
	ck_assert_int_eq(pnode_check(PNODE_M, (const uint8_t *)"\x84\x61\x62",
	    3), -1);
	ck_assert_int_eq(pnode_kind_from_name("bo"), PNODE_BO);
	ck_assert_str_eq(pnode_kind_name(PNODE_M), "m");
	dcbor_buf_free(&b);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("pnode");
	TCase *tc = tcase_create("codecs");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, b_nodes);
	tcase_add_test(tc, z_frames);
	tcase_add_test(tc, bo_nodes);
	tcase_add_test(tc, m_nodes);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}

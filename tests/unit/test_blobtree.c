/*
 * test_blobtree.c: unit tests for common/blobtree.c, common/pwalk.c on
 * blobs and common/zdelta.c: a build is history independent (an edit in
 * place, an insert and an append give exactly the tree a build of the
 * edited bytes gives) and writes few new nodes; a value above 64 MiB is
 * refused; the delta of a one-byte edit is the changed path plus one
 * chunk, or one z frame at level 2; the level walk of a reader without
 * the base takes depth + 1 rounds.
 */
#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blake3.h"
#include "blobtree.h"
#include "dcbor.h"
#include "nodestore.h"
#include "pnode.h"
#include "pwalk.h"
#include "zdelta.h"

#define MIB	(1024 * 1024)

static char dir[64];
static struct nodestore *st;
static uint8_t *data;
static size_t dlen;

static uint64_t
rnd(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
fill(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = rnd(&seed);

		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

static struct nodestore *
open_sub(const char *name)
{
	char path[128], err[256];
	struct nodestore *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = nodestore_open(path, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	return s;
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_blobtree.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = open_sub("a");
	dlen = 8 * MIB + 12345;
	data = malloc(dlen + MIB);
	fill(data, dlen, 42);
}

static void
teardown(void)
{
	char cmd[128];

	nodestore_close(st);
	free(data);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void
build(struct nodestore *s, const uint8_t *p, size_t n,
    struct blobtree_info *info)
{
	char err[256];

	ck_assert_msg(blobtree_build(s, NULL, p, n, info, err, sizeof(err)) ==
	    0, "%s", err);
}

START_TEST(build_reads_back)
{
	struct blobtree_info a, b;
	uint8_t *back = malloc(dlen), b3[32];
	char err[256];

	build(st, data, dlen, &a);
	ck_assert_uint_eq(a.len, dlen);
	ck_assert(a.chunks > 8 * MIB / (256 * 1024));
	ck_assert(a.chunks < 8 * MIB / (16 * 1024));
	ck_assert_uint_ge(a.height, 1);
	ck_assert_uint_eq(a.new_nodes, a.chunks + a.bnodes);
	ck_assert(a.has_blake3);
	blake3_hash(data, dlen, b3);
	ck_assert_mem_eq(a.blake3, b3, 32);
	ck_assert_int_eq(blobtree_read(st, a.root, 0, dlen, back, err,
	    sizeof(err)), 0);
	ck_assert_mem_eq(back, data, dlen);
	ck_assert_int_eq(blobtree_read(st, a.root, 1000000, 300000, back, err,
	    sizeof(err)), 0);
	ck_assert_mem_eq(back, data + 1000000, 300000);
	ck_assert_int_eq(blobtree_identity(st, a.root, b3, err, sizeof(err)),
	    0);
	ck_assert_mem_eq(a.blake3, b3, 32);
	/* The same bytes again: the same root, nothing new. */
	build(st, data, dlen, &b);
	ck_assert_mem_eq(a.root, b.root, PNODE_ID_LEN);
	ck_assert_uint_eq(b.new_nodes, 0);
	free(back);
}
END_TEST

START_TEST(small_and_empty_blobs)
{
	struct blobtree_info a;
	struct pnode_b nb;
	struct dcbor_buf b;
	uint8_t out[5000];
	char err[256];

	build(st, data, 0, &a);
	ck_assert_uint_eq(a.len, 0);
	ck_assert_uint_eq(a.height, 1);
	ck_assert_uint_eq(a.chunks, 0);
	dcbor_buf_init(&b);
	ck_assert_int_eq(nodestore_get(st, a.root, &b, NULL), 0);
	ck_assert_int_eq(pnode_b_decode(b.data, b.len, &nb), 0);
	ck_assert_uint_eq(nb.n, 0);
	build(st, data, 100, &a);
	ck_assert_uint_eq(a.height, 1);
	ck_assert_uint_eq(a.chunks, 1);
	ck_assert_int_eq(blobtree_read(st, a.root, 0, 100, out, err,
	    sizeof(err)), 0);
	ck_assert_mem_eq(out, data, 100);
	/* An append to the empty blob is a build. */
	build(st, data, 0, &a);
	ck_assert_int_eq(blobtree_edit(st, NULL, a.root, 0, 0, data, 5000, &a,
	    err, sizeof(err)), 0);
	ck_assert_int_eq(blobtree_read(st, a.root, 0, 5000, out, err, 100),
	    0);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(above_64_mib_is_refused)
{
	struct blobtree_info a;
	char err[256] = "";
	struct nodestore *n = nodestore_null();

	ck_assert_int_eq(blobtree_build(n, NULL, data, PNODE_BLOB_MAX + 1, &a,
	    err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "64 MiB") != NULL, "%s", err);
	build(st, data, dlen, &a);
	ck_assert_int_eq(blobtree_edit(st, NULL, a.root, dlen, 0, data,
	    PNODE_BLOB_MAX - dlen + 1, &a, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "64 MiB") != NULL, "%s", err);
	ck_assert_int_eq(blobtree_edit(st, NULL, a.root, dlen + 1, 0, data, 1,
	    &a, err, sizeof(err)), -1);
	nodestore_close(n);
}
END_TEST

/*
 * Edit the blob with (off, del, ins): the edited tree must equal a fresh
 * build of the edited bytes (in another store), and be small in new nodes.
 */
static void
edit_matches_build(uint64_t off, uint64_t del, const uint8_t *ins,
    size_t ins_len, uint64_t max_new_chunks)
{
	struct blobtree_info a, e, f;
	struct nodestore *fresh = nodestore_null();
	uint8_t *edited = malloc(dlen + ins_len + 1);
	size_t elen = dlen - del + ins_len;
	char err[256];

	build(st, data, dlen, &a);
	memcpy(edited, data, off);
	if (ins_len > 0)
		memcpy(edited + off, ins, ins_len);
	memcpy(edited + off + ins_len, data + off + del, dlen - off - del);
	ck_assert_msg(blobtree_edit(st, NULL, a.root, off, del, ins, ins_len,
	    &e, err, sizeof(err)) == 0, "%s", err);
	build(fresh, edited, elen, &f);
	ck_assert_mem_eq(e.root, f.root, PNODE_ID_LEN);
	ck_assert_uint_eq(e.len, elen);
	ck_assert_uint_eq(e.height, f.height);
	ck_assert_uint_eq(e.chunks, f.chunks);
	/* New: a few chunks and one b node a level. */
	ck_assert_uint_le(e.new_nodes, max_new_chunks + e.height);
	ck_assert_uint_ge(e.new_nodes, 1 + e.height);
	ck_assert_uint_lt(e.rechunked, ins_len + 3 * 256 * 1024);
	nodestore_close(fresh);
	free(edited);
}

START_TEST(edits_match_a_build)
{
	uint8_t one = (uint8_t)~data[4 * MIB], hundred[100], *mib;

	edit_matches_build(4 * MIB, 1, &one, 1, 2);
	fill(hundred, sizeof(hundred), 7);
	edit_matches_build(3 * MIB + 77, 0, hundred, sizeof(hundred), 3);
	mib = malloc(MIB);
	fill(mib, MIB, 9);
	edit_matches_build(dlen, 0, mib, MIB, MIB / (16 * 1024) + 2);
	/* At the very start, and a delete. */
	edit_matches_build(0, 1, &one, 1, 2);
	edit_matches_build(5 * MIB, 1000, NULL, 0, 3);
	free(mib);
}
END_TEST

START_TEST(every_offset_of_a_region)
{
	struct blobtree_info a, e, f;
	struct nodestore *fresh = nodestore_null();
	uint8_t *edited = malloc(dlen);
	char err[256];

	build(st, data, dlen, &a);
	/* Edits next to cut points too: the cut's own byte moves it. */
	for (size_t k = 0; k < 40; k++) {
		size_t off = (k * 2654435761u) % dlen;
		uint8_t b = (uint8_t)(data[off] + 1);

		memcpy(edited, data, dlen);
		edited[off] = b;
		ck_assert_int_eq(blobtree_edit(st, NULL, a.root, off, 1, &b, 1,
		    &e, err, sizeof(err)), 0);
		build(fresh, edited, dlen, &f);
		ck_assert_mem_eq(e.root, f.root, PNODE_ID_LEN);
	}
	nodestore_close(fresh);
	free(edited);
}
END_TEST

START_TEST(edits_at_cut_points)
{
	struct blobtree_kid *kids;
	struct blobtree_info a, e, f;
	struct nodestore *fresh = nodestore_null();
	uint8_t *edited = malloc(dlen + 1);
	uint64_t len, pos = 0;
	unsigned height;
	size_t n;
	char err[256];

	build(st, data, dlen, &a);
	ck_assert_int_eq(blobtree_chunks(st, a.root, &kids, &n, &len, &height,
	    err, sizeof(err)), 0);
	for (size_t i = 0; i + 1 < n && i < 12; i++) {
		uint8_t b = 0x5a;

		pos += kids[i].len;
		/* Insert one byte right at the cut, and just before it. */
		for (int d = 0; d < 2; d++) {
			uint64_t off = pos - (uint64_t)d;

			memcpy(edited, data, off);
			edited[off] = b;
			memcpy(edited + off + 1, data + off, dlen - off);
			ck_assert_int_eq(blobtree_edit(st, NULL, a.root, off,
			    0, &b, 1, &e, err, sizeof(err)), 0);
			build(fresh, edited, dlen + 1, &f);
			ck_assert_mem_eq(e.root, f.root, PNODE_ID_LEN);
		}
	}
	free(kids);
	nodestore_close(fresh);
	free(edited);
}
END_TEST

struct collect {
	uint64_t	n[PNODE_NKINDS];
	uint64_t	bytes;
	struct nodestore *to;		/* a reader's store, or NULL */
	int		last_level;
	bool		ordered;
};

static int
collect(void *arg, const struct pwalk_node *n)
{
	struct collect *c = arg;

	c->n[n->kind]++;
	c->bytes += n->len;
	if ((int)n->level > c->last_level && c->last_level >= 0)
		c->ordered = false;
	c->last_level = (int)n->level;
	return 0;
}

static void
collect_reset(struct collect *c)
{
	memset(c, 0, sizeof(*c));
	c->last_level = -1;
	c->ordered = true;
}

START_TEST(delta_of_one_byte_edit)
{
	struct blobtree_info a, e;
	struct pnode_src src = nodestore_src(st);
	struct collect c;
	struct pwalk_stat ws;
	uint8_t one = (uint8_t)~data[2 * MIB + 5];
	char err[256];

	build(st, data, dlen, &a);
	ck_assert_int_eq(blobtree_edit(st, NULL, a.root, 2 * MIB + 5, 1, &one,
	    1, &e, err, sizeof(err)), 0);
	/* Level 1: the changed path and the one new chunk. */
	collect_reset(&c);
	ck_assert_int_eq(pwalk_delta(&src, e.root, a.root, 1, 1, collect, &c,
	    &ws), 0);
	ck_assert_uint_eq(c.n[PNODE_B], e.height);
	ck_assert_uint_eq(c.n[PNODE_C], 1);
	ck_assert_uint_eq(c.n[PNODE_Z], 0);
	ck_assert(c.ordered);
	ck_assert_uint_eq(ws.bytes_total, c.bytes);
	/* Level 2: the path and one z frame, COPY + ADD + COPY. */
	collect_reset(&c);
	ck_assert_int_eq(pwalk_delta(&src, e.root, a.root, 1, 2, collect, &c,
	    &ws), 0);
	ck_assert_uint_eq(c.n[PNODE_B], e.height);
	ck_assert_uint_eq(c.n[PNODE_C], 0);
	ck_assert_uint_eq(c.n[PNODE_Z], 1);
	ck_assert_uint_lt(ws.bytes[PNODE_Z], 80);
	ck_assert_uint_lt(c.bytes, 16384);
	/* No base: the whole tree. */
	collect_reset(&c);
	ck_assert_int_eq(pwalk_delta(&src, e.root, NULL, 0, 2, collect, &c,
	    &ws), 0);
	ck_assert_uint_eq(c.n[PNODE_C], e.chunks);
	ck_assert_uint_eq(c.n[PNODE_B], e.bnodes);
	ck_assert(c.ordered);
	/* A base the holder lacks: an error (the base is unknown). */
	{
		uint8_t unknown[PNODE_ID_LEN];

		memset(unknown, 0x77, sizeof(unknown));
		ck_assert_int_eq(pwalk_delta(&src, e.root, unknown, 1, 2,
		    collect, &c, &ws), -1);
	}
	/* The same root: nothing. */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(pwalk_delta(&src, e.root, e.root, 1, 2, collect, &c,
	    &ws), 0);
	ck_assert_uint_eq(ws.nodes_total, 0);
}
END_TEST

/* A reader's store takes what the walk sends, z frames applied. */
struct reader {
	struct nodestore	*rs;
	struct dcbor_buf	 base, out;
};

static int
receive(void *arg, const struct pwalk_node *n)
{
	struct reader *r = arg;
	const char *why = "";
	int kind = n->kind;

	if (n->kind == PNODE_Z) {
		ck_assert_int_eq(nodestore_get(r->rs, n->base, &r->base, NULL),
		    0);
		ck_assert_msg(zdelta_apply(n->bytes, n->len, r->base.data,
		    r->base.len, n->id, &r->out, &why) == 0, "%s", why);
		kind = PNODE_C;
		ck_assert_int_ge(nodestore_put_id(r->rs, kind, n->id,
		    r->out.data, r->out.len), 0);
		return 0;
	}
	ck_assert_int_ge(nodestore_put_id(r->rs, kind, n->id, n->bytes,
	    n->len), 0);
	return 0;
}

START_TEST(reader_rebuilds_from_deltas)
{
	struct blobtree_info a, e;
	struct pnode_src src = nodestore_src(st);
	struct reader r = { open_sub("r"), { 0 }, { 0 } };
	uint8_t *back = malloc(dlen + 200), ins[200], b3[32];
	char err[256];

	build(st, data, dlen, &a);
	ck_assert_int_eq(pwalk_delta(&src, a.root, NULL, 0, 2, receive, &r,
	    NULL), 0);
	fill(ins, sizeof(ins), 3);
	ck_assert_int_eq(blobtree_edit(st, NULL, a.root, 1 * MIB + 99, 0, ins,
	    sizeof(ins), &e, err, sizeof(err)), 0);
	ck_assert_int_eq(pwalk_delta(&src, e.root, a.root, 1, 2, receive, &r,
	    NULL), 0);
	ck_assert_int_eq(blobtree_read(r.rs, e.root, 0, dlen + sizeof(ins),
	    back, err, sizeof(err)), 0);
	ck_assert_mem_eq(back, data, 1 * MIB + 99);
	ck_assert_mem_eq(back + 1 * MIB + 99, ins, sizeof(ins));
	ck_assert_mem_eq(back + 1 * MIB + 99 + sizeof(ins), data + 1 * MIB + 99,
	    dlen - 1 * MIB - 99);
	ck_assert_int_eq(blobtree_identity(r.rs, e.root, b3, err, sizeof(err)),
	    0);
	ck_assert_uint_eq(nodestore_verify(r.rs, NULL, NULL), 0);
	nodestore_close(r.rs);
	dcbor_buf_free(&r.base);
	dcbor_buf_free(&r.out);
	free(back);
}
END_TEST

START_TEST(level_walk_takes_depth_plus_one)
{
	struct blobtree_info a;
	struct nodestore *rs = open_sub("r2");
	struct pnode_src lsrc = nodestore_src(rs);
	struct pwalk_levels *w;
	struct dcbor_buf b;
	const uint8_t *ids;
	size_t n, total = 0;
	int kind, k2;

	build(st, data, dlen, &a);
	dcbor_buf_init(&b);
	w = pwalk_levels_new(a.root);
	for (;;) {
		ck_assert_int_eq(pwalk_levels_next(w, &lsrc, &ids, &n, &kind),
		    0);
		if (n == 0)
			break;
		/* One round: fetch every id of the level from the holder. */
		for (size_t i = 0; i < n; i++) {
			ck_assert_int_eq(nodestore_get(st, ids + 32 * i, &b,
			    &k2), 0);
			ck_assert_int_ge(nodestore_put(rs, k2, b.data, b.len,
			    (uint8_t[32]){ 0 }), 0);
		}
		total += n;
	}
	ck_assert_uint_eq(pwalk_levels_depth(w), a.height);
	ck_assert_uint_eq(pwalk_levels_rounds(w), a.height + 1);
	ck_assert_uint_eq(total, a.chunks + a.bnodes);
	pwalk_levels_free(w);
	/* A reader restarted with part of it asks only for the rest. */
	{
		struct nodestore *half = open_sub("r3");
		struct pnode_src hsrc = nodestore_src(half);
		struct blobtree_kid *kids;
		size_t nk, asked = 0, held = 0;
		uint64_t len;
		unsigned h;
		char err[256];

		ck_assert_int_eq(blobtree_chunks(st, a.root, &kids, &nk, &len,
		    &h, err, sizeof(err)), 0);
		for (size_t i = 0; i < nk; i += 3) {
			ck_assert_int_eq(nodestore_get(st, kids[i].id, &b, &k2),
			    0);
			ck_assert_int_ge(nodestore_put(half, k2, b.data, b.len,
			    (uint8_t[32]){ 0 }), 0);
			held++;
		}
		w = pwalk_levels_new(a.root);
		for (;;) {
			ck_assert_int_eq(pwalk_levels_next(w, &hsrc, &ids, &n,
			    &kind), 0);
			if (n == 0)
				break;
			for (size_t i = 0; i < n; i++) {
				ck_assert(!nodestore_has(half, ids + 32 * i));
				ck_assert_int_eq(nodestore_get(st, ids + 32 * i,
				    &b, &k2), 0);
				ck_assert_int_ge(nodestore_put(half, k2, b.data,
				    b.len, (uint8_t[32]){ 0 }), 0);
			}
			asked += n;
		}
		ck_assert_uint_eq(asked + held, a.chunks + a.bnodes);
		pwalk_levels_free(w);
		free(kids);
		nodestore_close(half);
	}
	/* A reader that holds it all needs no round. */
	w = pwalk_levels_new(a.root);
	ck_assert_int_eq(pwalk_levels_next(w, &lsrc, &ids, &n, &kind), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(pwalk_levels_rounds(w), 0);
	pwalk_levels_free(w);
	dcbor_buf_free(&b);
	nodestore_close(rs);
}
END_TEST

START_TEST(zdelta_frames)
{
	uint8_t base[65536], nw[65536], id[32], bid[32];
	struct dcbor_buf f, out;
	const char *why = "";
	size_t len;

	fill(base, sizeof(base), 5);
	memcpy(nw, base, sizeof(nw));
	nw[30000] ^= 1;
	pnode_id(base, sizeof(base), bid);
	pnode_id(nw, sizeof(nw), id);
	dcbor_buf_init(&f);
	dcbor_buf_init(&out);
	len = zdelta_make(&f, bid, base, sizeof(base), nw, sizeof(nw));
	ck_assert_uint_eq(len, f.len);
	ck_assert_uint_lt(len, 70);
	ck_assert_int_eq(zdelta_apply(f.data, f.len, base, sizeof(base), id,
	    &out, &why), 0);
	ck_assert_uint_eq(out.len, sizeof(nw));
	ck_assert_mem_eq(out.data, nw, sizeof(nw));
	/* A wrong expected id, a wrong base: refused. */
	ck_assert_int_eq(zdelta_apply(f.data, f.len, base, sizeof(base), bid,
	    &out, &why), -1);
	ck_assert_int_eq(zdelta_apply(f.data, f.len, nw, sizeof(nw), id, &out,
	    &why), -1);
	ck_assert_str_eq(why, "the frame names another base");
	dcbor_buf_free(&f);
	dcbor_buf_free(&out);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("blobtree");
	TCase *tc = tcase_create("blobtree");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, build_reads_back);
	tcase_add_test(tc, small_and_empty_blobs);
	tcase_add_test(tc, above_64_mib_is_refused);
	tcase_add_test(tc, edits_match_a_build);
	tcase_add_test(tc, every_offset_of_a_region);
	tcase_add_test(tc, edits_at_cut_points);
	tcase_add_test(tc, delta_of_one_byte_edit);
	tcase_add_test(tc, reader_rebuilds_from_deltas);
	tcase_add_test(tc, level_walk_takes_depth_plus_one);
	tcase_add_test(tc, zdelta_frames);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}

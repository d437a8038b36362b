/*
 * pnode.c: encode and strictly decode the nodes of persistent data trees
 * (see pnode.h; the bytes are described in docs/content.md).
 *
 * Every decoder runs dcbor_check in canonical mode first, so there is one
 * spelling of every node and its id is well defined; then it reads the
 * array item by item with the cursor and checks the node's own rules.
 */
#include <stdlib.h>
#include <string.h>

#include "bao.h"
#include "dcbor.h"
#include "pnode.h"
#include "sha256.h"
#include "xmalloc.h"

_Static_assert(PNODE_ID_LEN == SHA256_LEN, "a node id is a SHA-256");

static const char *const kind_names[PNODE_NKINDS] = {
	[PNODE_NONE] = "?", [PNODE_C] = "c", [PNODE_B] = "b",
	[PNODE_Z] = "z", [PNODE_BO] = "bo", [PNODE_M] = "m",
};

const char *
pnode_kind_name(int kind)
{
	if (kind <= PNODE_NONE || kind >= PNODE_NKINDS)
		return "?";
	return kind_names[kind];
}

int
pnode_kind_from_name(const char *s)
{
	for (int k = PNODE_C; k < PNODE_NKINDS; k++)
		if (strcmp(s, kind_names[k]) == 0)
			return k;
	return PNODE_NONE;
}

void
pnode_id(const void *p, size_t n, uint8_t id[PNODE_ID_LEN])
{
	sha256_digest(p, n, id);
}

/* The canonical check and the head: an array of n items led by name. */
static int
open_node(struct dcbor_rd *rd, const uint8_t *p, size_t n, int depth,
    const char *name, uint64_t *items)
{
	const char *s;
	size_t sl;

	if (n > PNODE_MAX_LEN || dcbor_check(p, n, depth, true, NULL) !=
	    DCBOR_OK)
		return -1;
	dcbor_rd_init(rd, p, n);
	if (dcbor_get_array(rd, items) == -1 ||
	    dcbor_get_text(rd, &s, &sl) == -1 || !dcbor_text_is(s, sl, name))
		return -1;
	return 0;
}

/* ---- b ---- */

void
pnode_b_encode(struct dcbor_buf *out, uint64_t level,
    const struct pnode_child *kids, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += kids[i].len;
	dcbor_put_array(out, 4);
	dcbor_put_cstr(out, "b");
	dcbor_put_uint(out, level);
	dcbor_put_uint(out, total);
	dcbor_put_array(out, n);
	for (size_t i = 0; i < n; i++) {
		dcbor_put_array(out, 2);
		dcbor_put_bytes(out, kids[i].id, PNODE_ID_LEN);
		dcbor_put_uint(out, kids[i].len);
	}
}

int
pnode_b_decode(const uint8_t *p, size_t n, struct pnode_b *b)
{
	struct dcbor_rd rd;
	uint64_t items, nk, two, sum = 0;
	size_t idl;

	memset(b, 0, sizeof(*b));
	if (open_node(&rd, p, n, 3, "b", &items) == -1 || items != 4 ||
	    dcbor_get_uint(&rd, &b->level) == -1 ||
	    dcbor_get_uint(&rd, &b->total) == -1 ||
	    dcbor_get_array(&rd, &nk) == -1)
		return -1;
	if (b->level < 1 || b->level > PNODE_MAX_LEVEL ||
	    nk > PNODE_B_MAX_KIDS || b->total > PNODE_BLOB_MAX)
		return -1;
	if (nk == 0 && (b->level != 1 || b->total != 0))
		return -1;
	for (uint64_t i = 0; i < nk; i++) {
		struct pnode_child *c = &b->kids[i];

		if (dcbor_get_array(&rd, &two) == -1 || two != 2 ||
		    dcbor_get_bytes(&rd, &c->id, &idl) == -1 ||
		    idl != PNODE_ID_LEN || dcbor_get_uint(&rd, &c->len) == -1)
			return -1;
		if (c->len == 0 || c->len > PNODE_BLOB_MAX)
			return -1;
		sum += c->len;
	}
	if (sum != b->total || dcbor_left(&rd) != 0)
		return -1;
	b->n = (size_t)nk;
	return 0;
}

/* ---- z ---- */

void
pnode_z_encode(struct dcbor_buf *out, const uint8_t base[PNODE_ID_LEN],
    uint64_t new_len, const struct pnode_zop *ops, size_t nops)
{
	dcbor_put_array(out, 4);
	dcbor_put_cstr(out, "z");
	dcbor_put_bytes(out, base, PNODE_ID_LEN);
	dcbor_put_uint(out, new_len);
	dcbor_put_array(out, nops);
	for (size_t i = 0; i < nops; i++) {
		if (ops[i].add) {
			dcbor_put_bytes(out, ops[i].bytes, ops[i].len);
			continue;
		}
		dcbor_put_array(out, 2);
		dcbor_put_uint(out, ops[i].off);
		dcbor_put_uint(out, ops[i].len);
	}
}

void
pnode_z_free(struct pnode_z *z)
{
	free(z->ops);
	memset(z, 0, sizeof(*z));
}

int
pnode_z_decode(const uint8_t *p, size_t n, struct pnode_z *z)
{
	struct dcbor_rd rd;
	struct dcbor_item it;
	uint64_t items, nops, sum = 0;
	size_t idl;

	memset(z, 0, sizeof(*z));
	if (open_node(&rd, p, n, 3, "z", &items) == -1 || items != 4 ||
	    dcbor_get_bytes(&rd, &z->base, &idl) == -1 ||
	    idl != PNODE_ID_LEN || dcbor_get_uint(&rd, &z->new_len) == -1 ||
	    dcbor_get_array(&rd, &nops) == -1)
		return -1;
	if (z->new_len == 0 || z->new_len > PNODE_MAX_LEN || nops == 0 ||
	    nops > PNODE_Z_MAX_OPS)
		return -1;
	z->ops = xcalloc((size_t)nops, sizeof(*z->ops));
	for (uint64_t i = 0; i < nops; i++) {
		struct pnode_zop *op = &z->ops[i];

		if (dcbor_next(&rd, &it) == -1)
			goto bad;
		if (it.type == DCBOR_BYTES) {
			op->add = true;
			op->bytes = it.ptr;
			op->len = it.len;
		} else if (it.type != DCBOR_ARRAY || it.u != 2 ||
		    dcbor_get_uint(&rd, &op->off) == -1 ||
		    dcbor_get_uint(&rd, &op->len) == -1)
			goto bad;
		if (op->len == 0 || op->len > PNODE_MAX_LEN ||
		    op->off > PNODE_MAX_LEN)
			goto bad;
		sum += op->len;
		if (sum > z->new_len)
			goto bad;
	}
	if (sum != z->new_len || dcbor_left(&rd) != 0)
		goto bad;
	z->nops = (size_t)nops;
	return 0;
bad:
	pnode_z_free(z);
	return -1;
}

/* ---- bo ---- */

uint64_t
pnode_bo_spans(uint64_t content_len, unsigned group_log, unsigned span_log)
{
	uint64_t groups = bao_groups(content_len, group_log);
	uint64_t s = 1ull << span_log;

	return (groups + s - 1) / s;
}

void
pnode_bo_leaf_encode(struct dcbor_buf *out, const uint8_t *pairs,
    size_t npairs)
{
	dcbor_put_array(out, 3);
	dcbor_put_cstr(out, "bo");
	dcbor_put_uint(out, 0);
	dcbor_put_bytes(out, pairs, npairs * PNODE_BO_PAIR_LEN);
}

void
pnode_bo_top_encode(struct dcbor_buf *out, uint64_t content_len,
    unsigned group_log, unsigned span_log, const uint8_t *pairs,
    size_t npairs, const uint8_t *leaf_ids, size_t nleaves)
{
	dcbor_put_array(out, 7);
	dcbor_put_cstr(out, "bo");
	dcbor_put_uint(out, 1);
	dcbor_put_uint(out, content_len);
	dcbor_put_uint(out, group_log);
	dcbor_put_uint(out, span_log);
	dcbor_put_bytes(out, pairs, npairs * PNODE_BO_PAIR_LEN);
	dcbor_put_array(out, nleaves);
	for (size_t i = 0; i < nleaves; i++)
		dcbor_put_bytes(out, leaf_ids + i * PNODE_ID_LEN,
		    PNODE_ID_LEN);
}

int
pnode_bo_decode(const uint8_t *p, size_t n, struct pnode_bo *bo)
{
	struct dcbor_rd rd;
	uint64_t items, g, s, nl;
	size_t pl, idl;
	const uint8_t *id;

	memset(bo, 0, sizeof(*bo));
	if (open_node(&rd, p, n, 2, "bo", &items) == -1 ||
	    dcbor_get_uint(&rd, &bo->level) == -1)
		return -1;
	if (bo->level == 0) {
		if (items != 3 || dcbor_get_bytes(&rd, &bo->pairs, &pl) == -1 ||
		    pl % PNODE_BO_PAIR_LEN != 0 ||
		    pl / PNODE_BO_PAIR_LEN >= (1u << PNODE_BO_MAX_SPAN_LOG) ||
		    dcbor_left(&rd) != 0)
			return -1;
		bo->npairs = pl / PNODE_BO_PAIR_LEN;
		return 0;
	}
	if (bo->level != 1 || items != 7 ||
	    dcbor_get_uint(&rd, &bo->content_len) == -1 ||
	    dcbor_get_uint(&rd, &g) == -1 || dcbor_get_uint(&rd, &s) == -1 ||
	    dcbor_get_bytes(&rd, &bo->pairs, &pl) == -1 ||
	    dcbor_get_array(&rd, &nl) == -1)
		return -1;
	if (bo->content_len > PNODE_BLOB_MAX || g > BAO_GROUP_LOG_MAX ||
	    s > PNODE_BO_MAX_SPAN_LOG || pl % PNODE_BO_PAIR_LEN != 0)
		return -1;
	bo->group_log = (unsigned)g;
	bo->span_log = (unsigned)s;
	bo->npairs = pl / PNODE_BO_PAIR_LEN;
	if (nl != pnode_bo_spans(bo->content_len, bo->group_log,
	    bo->span_log) || bo->npairs != nl - 1)
		return -1;
	bo->leaf_items = rd.p;
	for (uint64_t i = 0; i < nl; i++)
		if (dcbor_get_bytes(&rd, &id, &idl) == -1 ||
		    idl != PNODE_ID_LEN)
			return -1;
	if (dcbor_left(&rd) != 0)
		return -1;
	bo->nleaves = (size_t)nl;
	return 0;
}

const uint8_t *
pnode_bo_leaf_id(const struct pnode_bo *bo, size_t i)
{
	/* Each id is a byte string of 32: head 0x58 0x20, then the bytes. */
	return bo->leaf_items + i * (2 + PNODE_ID_LEN) + 2;
}

/* ---- m ---- */

int
pnode_key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c != 0)
		return c;
	return an < bn ? -1 : an > bn;
}

static void
m_entry_put(struct dcbor_buf *out, uint64_t level,
    const struct pnode_mentry *e)
{
	if (level == 0) {
		dcbor_put_array(out, 2);
		dcbor_put_bytes(out, e->key, e->klen);
		dcbor_put_bytes(out, e->val, e->vlen);
		return;
	}
	dcbor_put_array(out, 3);
	dcbor_put_bytes(out, e->key, e->klen);
	dcbor_put_bytes(out, e->id, PNODE_ID_LEN);
	dcbor_put_uint(out, e->count);
}

void
pnode_m_encode(struct dcbor_buf *out, uint64_t level,
    const struct pnode_mentry *e, size_t n)
{
	dcbor_put_array(out, 3);
	dcbor_put_cstr(out, "m");
	dcbor_put_uint(out, level);
	dcbor_put_array(out, n);
	for (size_t i = 0; i < n; i++)
		m_entry_put(out, level, &e[i]);
}

/* The bytes of a CBOR head for an argument v. */
static size_t
head_len(uint64_t v)
{
	return v < 24 ? 1 : v <= 0xff ? 2 : v <= 0xffff ? 3 :
	    v <= 0xffffffffull ? 5 : 9;
}

size_t
pnode_m_entry_len(uint64_t level, const struct pnode_mentry *e)
{
	if (level == 0)
		return 1 + head_len(e->klen) + e->klen + head_len(e->vlen) +
		    e->vlen;
	return 1 + head_len(e->klen) + e->klen + 2 + PNODE_ID_LEN +
	    head_len(e->count);
}

void
pnode_m_free(struct pnode_m *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

int
pnode_m_decode(const uint8_t *p, size_t n, struct pnode_m *m)
{
	struct dcbor_rd rd;
	uint64_t items, ne, k;
	size_t idl;

	memset(m, 0, sizeof(*m));
	if (open_node(&rd, p, n, 3, "m", &items) == -1 || items != 3 ||
	    dcbor_get_uint(&rd, &m->level) == -1 ||
	    dcbor_get_array(&rd, &ne) == -1)
		return -1;
	if (m->level > PNODE_MAX_LEVEL || ne > PNODE_M_MAX_ENTRIES ||
	    (ne == 0 && m->level != 0))
		return -1;
	m->e = xcalloc(ne ? (size_t)ne : 1, sizeof(*m->e));
	for (uint64_t i = 0; i < ne; i++) {
		struct pnode_mentry *e = &m->e[i];

		if (dcbor_get_array(&rd, &k) == -1 ||
		    k != (m->level == 0 ? 2 : 3) ||
		    dcbor_get_bytes(&rd, &e->key, &e->klen) == -1 ||
		    e->klen > PNODE_M_MAX_KEY)
			goto bad;
		if (m->level == 0) {
			if (dcbor_get_bytes(&rd, &e->val, &e->vlen) == -1 ||
			    e->vlen > PNODE_M_MAX_VALUE)
				goto bad;
		} else if (dcbor_get_bytes(&rd, &e->id, &idl) == -1 ||
		    idl != PNODE_ID_LEN ||
		    dcbor_get_uint(&rd, &e->count) == -1 || e->count == 0)
			goto bad;
		if (i > 0 && pnode_key_cmp(e[-1].key, e[-1].klen, e->key,
		    e->klen) >= 0)
			goto bad;
	}
	if (dcbor_left(&rd) != 0)
		goto bad;
	m->n = (size_t)ne;
	return 0;
bad:
	pnode_m_free(m);
	return -1;
}

/* ---- any kind ---- */

int
pnode_kind_of(const uint8_t *p, size_t n)
{
	for (int k = PNODE_B; k < PNODE_NKINDS; k++)
		if (pnode_check(k, p, n) == 0)
			return k;
	return PNODE_NONE;
}

int
pnode_check(int kind, const uint8_t *p, size_t n)
{
	union {
		struct pnode_b b;
		struct pnode_z z;
		struct pnode_bo bo;
		struct pnode_m m;
	} u;

	switch (kind) {
	case PNODE_C:
		return n >= 1 && n <= PNODE_MAX_LEN ? 0 : -1;
	case PNODE_B:
		return pnode_b_decode(p, n, &u.b);
	case PNODE_Z:
		if (pnode_z_decode(p, n, &u.z) == -1)
			return -1;
		pnode_z_free(&u.z);
		return 0;
	case PNODE_BO:
		return pnode_bo_decode(p, n, &u.bo);
	case PNODE_M:
		if (pnode_m_decode(p, n, &u.m) == -1)
			return -1;
		pnode_m_free(&u.m);
		return 0;
	default:
		return -1;
	}
}

int
pnode_children(int kind, const uint8_t *p, size_t n,
    int (*fn)(void *arg, int kind, const uint8_t *id, uint64_t level,
    uint64_t len), void *arg)
{
	struct pnode_b b;
	struct pnode_bo bo;
	struct pnode_m m;
	int rc = 0;

	switch (kind) {
	case PNODE_C:
	case PNODE_Z:
		return 0;
	case PNODE_B:
		if (pnode_b_decode(p, n, &b) == -1)
			return -1;
		for (size_t i = 0; i < b.n && rc == 0; i++)
			rc = fn(arg, b.level == 1 ? PNODE_C : PNODE_B,
			    b.kids[i].id, b.level - 1, b.kids[i].len);
		return rc ? -1 : 0;
	case PNODE_BO:
		if (pnode_bo_decode(p, n, &bo) == -1)
			return -1;
		for (size_t i = 0; bo.level == 1 && i < bo.nleaves && rc == 0;
		    i++)
			rc = fn(arg, PNODE_BO, pnode_bo_leaf_id(&bo, i), 0, 0);
		return rc ? -1 : 0;
	case PNODE_M:
		if (pnode_m_decode(p, n, &m) == -1)
			return -1;
		for (size_t i = 0; m.level > 0 && i < m.n && rc == 0; i++)
			rc = fn(arg, PNODE_M, m.e[i].id, m.level - 1,
			    m.e[i].count);
		pnode_m_free(&m);
		return rc ? -1 : 0;
	default:
		return -1;
	}
}

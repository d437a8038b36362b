/*
 * pmap.c: build, edit, look up and walk persistent maps (see pmap.h).
 *
 * One grouper cuts every level: entries go in one by one, and it closes a
 * node by the size-aware rule (m_closes).  A build feeds it every entry;
 * a put lists the leaves from the nodes above them (no leaf is read for
 * that), feeds it from the leaf holding the key, edited, until a leaf
 * ends exactly where a node closed (the grouper starts afresh at every
 * old leaf boundary, so from there on the old leaves stand), and then
 * groups the leaf list upwards as a build does; the store skips the
 * upper nodes it holds, so only the changed path is written.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "dcbor.h"
#include "nodestore.h"
#include "pmap.h"
#include "pnode.h"
#include "xmalloc.h"

/* The size-aware rule's constants (pmap.h). */
#define LEAF_MIN	512
#define LEAF_MAX	4096
#define LEAF_K		1430
#define NODE_MIN	256
#define NODE_MAX	2048
#define NODE_K		5719

/* An entry of a level above the leaves: it owns its key. */
struct lent {
	uint8_t		*key;
	size_t		 klen;
	uint8_t		 id[PNODE_ID_LEN];
	uint64_t	 count;
};

struct lvec {
	struct lent	*v;
	size_t		 n, cap;
};

static void
lv_push(struct lvec *lv, const uint8_t *key, size_t klen, const uint8_t *id,
    uint64_t count)
{
	if (lv->n == lv->cap) {
		lv->cap = lv->cap ? 2 * lv->cap : 64;
		lv->v = xreallocarray(lv->v, lv->cap, sizeof(*lv->v));
	}
	lv->v[lv->n].key = xmemdup(key, klen ? klen : 1);
	lv->v[lv->n].klen = klen;
	memcpy(lv->v[lv->n].id, id, PNODE_ID_LEN);
	lv->v[lv->n++].count = count;
}

static void
lv_free(struct lvec *lv)
{
	for (size_t i = 0; i < lv->n; i++)
		free(lv->v[i].key);
	free(lv->v);
	memset(lv, 0, sizeof(*lv));
}

static bool
m_closes(uint64_t level, const uint8_t *key, size_t klen, size_t s0,
    size_t s1)
{
	size_t min = level ? NODE_MIN : LEAF_MIN;
	size_t max = level ? NODE_MAX : LEAF_MAX;
	uint64_t k = level ? NODE_K : LEAF_K, x0, x1, thr;

	if (s1 >= max)
		return true;
	if (s1 < min)
		return false;
	x0 = s0 > min ? s0 - min : 0;
	x1 = s1 - min;
	thr = (x1 * x1 - x0 * x0) * k;
	return thr >= (1ull << 32) ||
	    (uint32_t)XXH3_64bits_withSeed(key, klen, level) < thr;
}

/* A pending entry: offsets into the grouper's arena. */
struct pend {
	size_t		 koff, klen, voff, vlen;
	uint8_t		 id[PNODE_ID_LEN];
	uint64_t	 count;
};

struct grouper {
	struct nodestore	*s;
	uint64_t		 level;
	struct pmap_info	*info;
	struct lvec		*out;
	struct pend		*p;
	size_t			 n, cap, size;
	struct dcbor_buf	 arena, node;
	struct pnode_mentry	*me;
	size_t			 mecap;
};

static void
g_init(struct grouper *g, struct nodestore *s, uint64_t level,
    struct pmap_info *info, struct lvec *out)
{
	memset(g, 0, sizeof(*g));
	g->s = s;
	g->level = level;
	g->info = info;
	g->out = out;
	dcbor_buf_init(&g->arena);
	dcbor_buf_init(&g->node);
}

static void
g_free(struct grouper *g)
{
	free(g->p);
	free(g->me);
	dcbor_buf_free(&g->arena);
	dcbor_buf_free(&g->node);
}

/* Write the pending entries as one node; its entry goes to out. */
static int
g_emit(struct grouper *g)
{
	uint8_t id[PNODE_ID_LEN];
	uint64_t count = 0;
	int rc;

	if (g->n + 1 > g->mecap) {
		g->mecap = g->n + 1;
		g->me = xreallocarray(g->me, g->mecap, sizeof(*g->me));
	}
	for (size_t i = 0; i < g->n; i++) {
		struct pend *p = &g->p[i];

		g->me[i] = (struct pnode_mentry){
			.key = g->arena.data + p->koff, .klen = p->klen,
			.val = g->arena.data + p->voff, .vlen = p->vlen,
			.id = p->id, .count = p->count,
		};
		count += g->level == 0 ? 1 : p->count;
	}
	dcbor_buf_reset(&g->node);
	pnode_m_encode(&g->node, g->level, g->me, g->n);
	if ((rc = nodestore_put(g->s, PNODE_M, g->node.data, g->node.len,
	    id)) == -1)
		return -1;
	g->info->nodes++;
	if (rc == 1) {
		g->info->new_nodes++;
		g->info->new_bytes += g->node.len;
	}
	if (g->n > 0)
		lv_push(g->out, g->me[g->n - 1].key, g->me[g->n - 1].klen, id,
		    count);
	else
		lv_push(g->out, (const uint8_t *)"", 0, id, 0);
	g->n = 0;
	g->size = 0;
	dcbor_buf_reset(&g->arena);
	return 0;
}

/* Add one entry; 1 if a node closed after it, 0 if not, -1 on a write. */
static int
g_add(struct grouper *g, const uint8_t *key, size_t klen, const uint8_t *val,
    size_t vlen, const uint8_t *id, uint64_t count)
{
	struct pnode_mentry e = { .key = key, .klen = klen, .val = val,
	    .vlen = vlen, .id = id, .count = count };
	size_t s0 = g->size;
	struct pend *p;

	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->p = xreallocarray(g->p, g->cap, sizeof(*g->p));
	}
	p = &g->p[g->n++];
	memset(p, 0, sizeof(*p));
	p->koff = g->arena.len;
	p->klen = klen;
	dcbor_put_raw(&g->arena, key, klen);
	if (g->level == 0) {
		p->voff = g->arena.len;
		p->vlen = vlen;
		dcbor_put_raw(&g->arena, val, vlen);
	} else {
		memcpy(p->id, id, PNODE_ID_LEN);
		p->count = count;
	}
	g->size += pnode_m_entry_len(g->level, &e);
	if (!m_closes(g->level, key, klen, s0, g->size))
		return 0;
	return g_emit(g) == -1 ? -1 : 1;
}

/* Close the level: the last node, or the empty leaf of an empty map. */
static int
g_finish(struct grouper *g)
{
	if (g->n > 0 || (g->level == 0 && g->out->n == 0))
		return g_emit(g);
	return 0;
}

static void
seterr(char *err, size_t errlen, const char *what)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s%s%s", what, errno ? ": " : "",
		    errno ? strerror(errno) : "");
}

/* Group the leaf list upwards to one root; fills info. */
static int
tree_up(struct nodestore *s, struct lvec *cur, struct pmap_info *info,
    char *err, size_t errlen)
{
	uint64_t level = 0;

	while (cur->n > 1) {
		struct lvec next = { 0 };
		struct grouper g;
		int rc = 0;

		level++;
		g_init(&g, s, level, info, &next);
		for (size_t i = 0; i < cur->n && rc != -1; i++)
			rc = g_add(&g, cur->v[i].key, cur->v[i].klen, NULL, 0,
			    cur->v[i].id, cur->v[i].count);
		if (rc != -1)
			rc = g_finish(&g);
		g_free(&g);
		lv_free(cur);
		*cur = next;
		if (rc == -1) {
			seterr(err, errlen, "store a map node");
			return -1;
		}
	}
	memcpy(info->root, cur->v[0].id, PNODE_ID_LEN);
	info->height = (unsigned)level;
	info->count = cur->v[0].count;
	return 0;
}

static int
kv_ok(const uint8_t *key, size_t klen, size_t vlen, char *err, size_t errlen)
{
	(void)key;
	errno = 0;
	if (klen > PNODE_M_MAX_KEY || vlen > PNODE_M_MAX_VALUE) {
		seterr(err, errlen, "a map key above 1024 bytes or a value "
		    "above 65536 bytes");
		return -1;
	}
	return 0;
}

int
pmap_build(struct nodestore *s, const struct pmap_kv *kv, size_t n,
    struct pmap_info *info, char *err, size_t errlen)
{
	struct lvec leaves = { 0 };
	struct grouper g;
	int rc = 0;

	memset(info, 0, sizeof(*info));
	for (size_t i = 0; i < n; i++) {
		if (kv_ok(kv[i].key, kv[i].klen, kv[i].vlen, err, errlen) == -1)
			return -1;
		if (i > 0 && pnode_key_cmp(kv[i - 1].key, kv[i - 1].klen,
		    kv[i].key, kv[i].klen) >= 0) {
			seterr(err, errlen, "map entries not sorted by key or "
			    "a key twice");
			return -1;
		}
	}
	g_init(&g, s, 0, info, &leaves);
	for (size_t i = 0; i < n && rc != -1; i++)
		rc = g_add(&g, kv[i].key, kv[i].klen, kv[i].val, kv[i].vlen,
		    NULL, 0);
	if (rc != -1)
		rc = g_finish(&g);
	g_free(&g);
	if (rc == -1) {
		seterr(err, errlen, "store a map leaf");
		lv_free(&leaves);
		return -1;
	}
	rc = tree_up(s, &leaves, info, err, errlen);
	lv_free(&leaves);
	return rc;
}

/* Node id of map level (or any level if level < 0) into m, or -1. */
static int
m_read(struct pnode_src *src, const uint8_t *id, int64_t level,
    struct dcbor_buf *b, struct pnode_m *m)
{
	int kind = PNODE_NONE;

	if (src->get(src->arg, id, b, &kind) != 0 ||
	    (kind != PNODE_M && kind != PNODE_NONE) ||
	    pnode_m_decode(b->data, b->len, m) == -1)
		return -1;
	if (level >= 0 && m->level != (uint64_t)level) {
		pnode_m_free(m);
		return -1;
	}
	return 0;
}

/* The leaves of map root, from the nodes above them; *height too. */
static int
list_leaves(struct nodestore *s, const uint8_t *root, struct lvec *out,
    unsigned *height)
{
	struct pnode_src src = nodestore_src(s);
	struct lvec cur = { 0 };
	struct dcbor_buf b;
	struct pnode_m m;
	int64_t level = -1;
	int rc = -1;

	dcbor_buf_init(&b);
	lv_push(&cur, (const uint8_t *)"", 0, root, 0);
	for (;;) {
		struct lvec next = { 0 };

		for (size_t i = 0; i < cur.n; i++) {
			if (m_read(&src, cur.v[i].id, level, &b, &m) == -1) {
				lv_free(&next);
				goto out;
			}
			if (level == -1) {
				*height = (unsigned)m.level;
				level = (int64_t)m.level;
			}
			if (m.level == 0) {
				/* The root is the one leaf. */
				lv_push(&next, (const uint8_t *)"", 0, root,
				    m.n);
			}
			for (size_t k = 0; m.level > 0 && k < m.n; k++)
				lv_push(&next, m.e[k].key, m.e[k].klen,
				    m.e[k].id, m.e[k].count);
			pnode_m_free(&m);
		}
		lv_free(&cur);
		cur = next;
		if (level <= 1)
			break;
		level--;
	}
	*out = cur;
	memset(&cur, 0, sizeof(cur));
	rc = 0;
out:
	lv_free(&cur);
	dcbor_buf_free(&b);
	return rc;
}

int
pmap_put(struct nodestore *s, const uint8_t root_[PNODE_ID_LEN],
    const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
    struct pmap_info *info, char *err, size_t errlen)
{
	uint8_t root[PNODE_ID_LEN];	/* root_ may lie in *info */
	struct pnode_src src = nodestore_src(s);
	struct lvec leaves = { 0 }, out = { 0 };
	struct dcbor_buf b;
	struct grouper g;
	struct pnode_m m;
	size_t lo = 0, hi, i;
	unsigned height;
	bool placed = false;
	int rc = 0;

	memcpy(root, root_, PNODE_ID_LEN);
	memset(info, 0, sizeof(*info));
	if (kv_ok(key, klen, vlen, err, errlen) == -1)
		return -1;
	if (list_leaves(s, root, &leaves, &height) == -1) {
		errno = 0;
		seterr(err, errlen, "a map node missing or corrupt");
		return -1;
	}
	/* The first leaf whose last key is not below key (or the last). */
	hi = leaves.n - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pnode_key_cmp(leaves.v[mid].key, leaves.v[mid].klen, key,
		    klen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; i < lo; i++)
		lv_push(&out, leaves.v[i].key, leaves.v[i].klen,
		    leaves.v[i].id, leaves.v[i].count);
	dcbor_buf_init(&b);
	g_init(&g, s, 0, info, &out);
	for (i = lo; i < leaves.n && rc != -1; i++) {
		if (m_read(&src, leaves.v[i].id, 0, &b, &m) == -1) {
			errno = 0;
			seterr(err, errlen, "a map leaf missing or corrupt");
			rc = -1;
			break;
		}
		for (size_t k = 0; k <= m.n && rc != -1; k++) {
			int c = k < m.n ? pnode_key_cmp(m.e[k].key,
			    m.e[k].klen, key, klen) : 1;

			if (i == lo && !placed && c >= 0 &&
			    (k < m.n || i + 1 == leaves.n)) {
				placed = true;
				if (val != NULL)
					rc = g_add(&g, key, klen, val, vlen,
					    NULL, 0);
				if (c == 0)
					continue;	/* replaced or deleted */
			}
			if (k < m.n && rc != -1)
				rc = g_add(&g, m.e[k].key, m.e[k].klen,
				    m.e[k].val, m.e[k].vlen, NULL, 0);
		}
		pnode_m_free(&m);
		if (rc != -1 && g.n == 0) {
			/* A cut on an old leaf boundary: the rest stands. */
			for (i++; i < leaves.n; i++)
				lv_push(&out, leaves.v[i].key, leaves.v[i].klen,
				    leaves.v[i].id, leaves.v[i].count);
			break;
		}
	}
	if (rc != -1)
		rc = g_finish(&g);
	g_free(&g);
	dcbor_buf_free(&b);
	lv_free(&leaves);
	if (rc != -1)
		rc = tree_up(s, &out, info, err, errlen);
	else if (errno != 0)
		seterr(err, errlen, "store a map leaf");
	lv_free(&out);
	return rc == -1 ? -1 : 0;
}

int
pmap_delete(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
    const uint8_t *key, size_t klen, struct pmap_info *info, char *err,
    size_t errlen)
{
	return pmap_put(s, root, key, klen, NULL, 0, info, err, errlen);
}

int
pmap_get(struct pnode_src *src, const uint8_t root[PNODE_ID_LEN],
    const uint8_t *key, size_t klen, struct dcbor_buf *val)
{
	uint8_t id[PNODE_ID_LEN];
	struct dcbor_buf b;
	struct pnode_m m;
	int64_t level = -1;
	int rc = 1;

	dcbor_buf_init(&b);
	dcbor_buf_reset(val);
	memcpy(id, root, PNODE_ID_LEN);
	for (;;) {
		size_t k;

		if (m_read(src, id, level, &b, &m) == -1) {
			rc = -1;
			break;
		}
		for (k = 0; k < m.n; k++)
			if (pnode_key_cmp(m.e[k].key, m.e[k].klen, key,
			    klen) >= 0)
				break;
		if (m.level == 0) {
			if (k < m.n && pnode_key_cmp(m.e[k].key, m.e[k].klen,
			    key, klen) == 0) {
				dcbor_put_raw(val, m.e[k].val, m.e[k].vlen);
				rc = 0;
			}
			pnode_m_free(&m);
			break;
		}
		if (k == m.n) {
			pnode_m_free(&m);
			break;
		}
		memcpy(id, m.e[k].id, PNODE_ID_LEN);
		level = (int64_t)m.level - 1;
		pnode_m_free(&m);
	}
	dcbor_buf_free(&b);
	return rc;
}

static int
iter_node(struct pnode_src *src, const uint8_t *id, int64_t level,
    int (*fn)(void *, const uint8_t *, size_t, const uint8_t *, size_t),
    void *arg)
{
	struct dcbor_buf b;
	struct pnode_m m;
	int rc = 0;

	dcbor_buf_init(&b);
	if (m_read(src, id, level, &b, &m) == -1) {
		dcbor_buf_free(&b);
		return -1;
	}
	for (size_t k = 0; k < m.n && rc == 0; k++)
		rc = m.level == 0 ? fn(arg, m.e[k].key, m.e[k].klen,
		    m.e[k].val, m.e[k].vlen) : iter_node(src, m.e[k].id,
		    (int64_t)m.level - 1, fn, arg);
	pnode_m_free(&m);
	dcbor_buf_free(&b);
	return rc;
}

int
pmap_iter(struct pnode_src *src, const uint8_t root[PNODE_ID_LEN],
    int (*fn)(void *arg, const uint8_t *key, size_t klen,
    const uint8_t *val, size_t vlen), void *arg)
{
	return iter_node(src, root, -1, fn, arg);
}

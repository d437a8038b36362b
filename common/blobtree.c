/*
 * blobtree.c: build, edit and read blob trees (see blobtree.h).
 *
 * Both build and edit end in tree_up(), which groups a level's entries
 * into b nodes level after level; the store skips the nodes it already
 * holds, so an edit writes only its changed path although the few dozen
 * small nodes above the chunks (a 64 MiB blob has about 30) are encoded
 * again.  The chunks, the costly part, are cut again only around the
 * change (edit_rechunk).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blake3.h"
#include "blobtree.h"
#include "dcbor.h"
#include "fastcdc.h"
#include "nodestore.h"
#include "pnode.h"
#include "xmalloc.h"

struct kidvec {
	struct blobtree_kid	*v;
	size_t			 n, cap;
};

static void
kv_push(struct kidvec *kv, const uint8_t *id, uint64_t len)
{
	if (kv->n == kv->cap) {
		kv->cap = kv->cap ? 2 * kv->cap : 64;
		kv->v = xreallocarray(kv->v, kv->cap, sizeof(*kv->v));
	}
	memcpy(kv->v[kv->n].id, id, PNODE_ID_LEN);
	kv->v[kv->n++].len = len;
}

static const struct fastcdc_params default_params = FASTCDC_PARAMS_DEFAULT;

static void
seterr(char *err, size_t errlen, const char *fmt, const char *what,
    unsigned long long v)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, fmt, what, v);
}

/* Put one node, counting it in info if the store did not hold it. */
static int
put(struct nodestore *s, int kind, const uint8_t *p, size_t n,
    uint8_t id[PNODE_ID_LEN], struct blobtree_info *info)
{
	int rc = nodestore_put(s, kind, p, n, id);

	if (rc == 1) {
		info->new_nodes++;
		info->new_bytes += n;
	}
	return rc == -1 ? -1 : 0;
}

/* Whether a node of level-1 entries closes after child id, having n. */
static bool
closes(const uint8_t *id, size_t n)
{
	if (n >= PNODE_B_MAX_KIDS)
		return true;
	return n >= BLOBTREE_MIN_KIDS &&
	    (id[3] & BLOBTREE_FANOUT_MASK) == BLOBTREE_FANOUT_MASK;
}

/* Write the node of in[0..n) at level; its entry goes to out. */
static int
emit_node(struct nodestore *s, uint64_t level, const struct blobtree_kid *in,
    size_t n, struct kidvec *out, struct dcbor_buf *b,
    struct blobtree_info *info)
{
	struct pnode_child kids[PNODE_B_MAX_KIDS];
	uint8_t id[PNODE_ID_LEN];
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		kids[i].id = in[i].id;
		kids[i].len = in[i].len;
		total += in[i].len;
	}
	dcbor_buf_reset(b);
	pnode_b_encode(b, level, kids, n);
	if (put(s, PNODE_B, b->data, b->len, id, info) == -1)
		return -1;
	info->bnodes++;
	kv_push(out, id, total);
	return 0;
}

/* Group the chunk list lvl into levels until one root; fills info. */
static int
tree_up(struct nodestore *s, struct kidvec *lvl, struct blobtree_info *info,
    char *err, size_t errlen)
{
	struct kidvec next = { 0 };
	struct dcbor_buf b;
	uint64_t level = 1;
	int rc = 0;

	dcbor_buf_init(&b);
	info->chunks = lvl->n;
	info->bnodes = 0;
	for (;;) {
		size_t start = 0;

		next.n = 0;
		for (size_t i = 0; i < lvl->n && rc == 0; i++)
			if (closes(lvl->v[i].id, i + 1 - start) ||
			    i + 1 == lvl->n) {
				rc = emit_node(s, level, lvl->v + start,
				    i + 1 - start, &next, &b, info);
				start = i + 1;
			}
		if (lvl->n == 0 && rc == 0)	/* the empty blob */
			rc = emit_node(s, level, NULL, 0, &next, &b, info);
		if (rc == -1) {
			seterr(err, errlen, "store a %s node: errno %llu", "b",
			    (unsigned long long)errno);
			break;
		}
		{
			struct kidvec t = *lvl;

			*lvl = next;
			next = t;
		}
		if (lvl->n == 1)
			break;
		level++;
	}
	if (rc == 0) {
		memcpy(info->root, lvl->v[0].id, PNODE_ID_LEN);
		info->len = lvl->v[0].len;
		info->height = (unsigned)level;
	}
	free(next.v);
	dcbor_buf_free(&b);
	return rc;
}

static int
too_big(uint64_t len, char *err, size_t errlen)
{
	if (len <= PNODE_BLOB_MAX)
		return 0;
	seterr(err, errlen, "%s of %llu bytes is above the 64 MiB limit "
	    "(67108864 bytes): refused", "a value", (unsigned long long)len);
	return -1;
}

int
blobtree_build(struct nodestore *s, const struct fastcdc_params *p,
    const uint8_t *data, uint64_t len, struct blobtree_info *info,
    char *err, size_t errlen)
{
	struct kidvec lvl = { 0 };
	uint8_t id[PNODE_ID_LEN];
	uint64_t off = 0;
	int rc;

	memset(info, 0, sizeof(*info));
	if (too_big(len, err, errlen) == -1)
		return -1;
	if (p == NULL)
		p = &default_params;
	else if (fastcdc_params_check(p, err, errlen) == -1)
		return -1;
	while (off < len) {
		size_t c = fastcdc_next(p, data + off, (size_t)(len - off));

		if (put(s, PNODE_C, data + off, c, id, info) == -1) {
			seterr(err, errlen, "store a %s: errno %llu", "chunk",
			    (unsigned long long)errno);
			free(lvl.v);
			return -1;
		}
		kv_push(&lvl, id, c);
		off += c;
	}
	blake3_hash(data, (size_t)len, info->blake3);
	info->has_blake3 = true;
	rc = tree_up(s, &lvl, info, err, errlen);
	free(lvl.v);
	return rc;
}

/* ---- reading a tree ---- */

int
blobtree_chunks(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
    struct blobtree_kid **kids, size_t *n, uint64_t *len, unsigned *height,
    char *err, size_t errlen)
{
	struct kidvec cur = { 0 }, next = { 0 };
	struct dcbor_buf b;
	struct pnode_b node;
	uint64_t level = 0;
	int kind, rc = -1;

	dcbor_buf_init(&b);
	kv_push(&cur, root, 0);
	for (;;) {
		next.n = 0;
		for (size_t i = 0; i < cur.n; i++) {
			if (nodestore_get(s, cur.v[i].id, &b, &kind) != 0 ||
			    kind != PNODE_B ||
			    pnode_b_decode(b.data, b.len, &node) == -1) {
				seterr(err, errlen, "%s node missing or "
				    "corrupt at level %llu", "b",
				    (unsigned long long)level);
				goto out;
			}
			if ((level != 0 && node.level != level) ||
			    (cur.v[i].len != 0 && node.total != cur.v[i].len) ||
			    (level == 0 && node.level > PNODE_MAX_LEVEL)) {
				seterr(err, errlen, "%s node out of place at "
				    "level %llu", "b", (unsigned long long)level);
				goto out;
			}
			if (level == 0) {
				*height = (unsigned)node.level;
				*len = node.total;
			}
			for (size_t k = 0; k < node.n; k++)
				kv_push(&next, node.kids[k].id,
				    node.kids[k].len);
		}
		level = level == 0 ? *height - 1 : level - 1;
		{
			struct kidvec t = cur;

			cur = next;
			next = t;
		}
		if (level == 0)
			break;
	}
	*kids = cur.v;
	*n = cur.n;
	cur.v = NULL;
	rc = 0;
out:
	free(cur.v);
	free(next.v);
	dcbor_buf_free(&b);
	return rc;
}

/* Chunk k's bytes into b, or -1 with err. */
static int
chunk_get(struct nodestore *s, const struct blobtree_kid *k,
    struct dcbor_buf *b, char *err, size_t errlen)
{
	int kind;

	if (nodestore_get(s, k->id, b, &kind) != 0 || kind != PNODE_C ||
	    b->len != k->len) {
		seterr(err, errlen, "%s missing or corrupt (errno %llu)",
		    "chunk", (unsigned long long)errno);
		return -1;
	}
	return 0;
}

int
blobtree_read(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
    uint64_t off, uint64_t len, uint8_t *out, char *err, size_t errlen)
{
	struct blobtree_kid *kids;
	struct dcbor_buf b;
	size_t n;
	uint64_t total, pos = 0;
	unsigned height;
	int rc = 0;

	if (blobtree_chunks(s, root, &kids, &n, &total, &height, err,
	    errlen) == -1)
		return -1;
	if (off > total || len > total - off) {
		free(kids);
		seterr(err, errlen, "%s past the end (%llu bytes)", "read",
		    (unsigned long long)total);
		return -1;
	}
	dcbor_buf_init(&b);
	for (size_t i = 0; i < n && len > 0 && rc == 0; i++) {
		uint64_t end = pos + kids[i].len;

		if (end > off) {
			uint64_t from = off - pos;
			uint64_t take = kids[i].len - from < len ?
			    kids[i].len - from : len;

			if ((rc = chunk_get(s, &kids[i], &b, err, errlen)) ==
			    0) {
				memcpy(out, b.data + from, (size_t)take);
				out += take;
				off += take;
				len -= take;
			}
		}
		pos = end;
	}
	dcbor_buf_free(&b);
	free(kids);
	return rc;
}

int
blobtree_identity(struct nodestore *s, const uint8_t root[PNODE_ID_LEN],
    uint8_t out[32], char *err, size_t errlen)
{
	struct blobtree_kid *kids;
	struct dcbor_buf b;
	struct blake3 h;
	size_t n;
	uint64_t total;
	unsigned height;
	int rc = 0;

	if (blobtree_chunks(s, root, &kids, &n, &total, &height, err,
	    errlen) == -1)
		return -1;
	dcbor_buf_init(&b);
	blake3_init(&h);
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = chunk_get(s, &kids[i], &b, err, errlen)) == 0)
			blake3_update(&h, b.data, b.len);
	if (rc == 0)
		blake3_final(&h, out, 32);
	dcbor_buf_free(&b);
	free(kids);
	return rc;
}

/* ---- edits ---- */

/*
 * The edited content read front to back from position 'pos' of the new
 * blob: old bytes before off, the inserted bytes, the old bytes after
 * off + del.  It reads old chunks from the store as it goes.
 */
struct newstream {
	struct nodestore	*s;
	const struct blobtree_kid *old;
	const uint64_t		*start;	/* start[i]: chunk i's old offset */
	size_t			 nold;
	uint64_t		 off, del;
	const uint8_t		*ins;
	uint64_t		 ins_len;
	size_t			 ci;	/* the old chunk held in cb */
	bool			 have;
	struct dcbor_buf	 cb;
};

/* The old chunk holding old offset o (o < total). */
static size_t
chunk_at(const uint64_t *start, size_t n, uint64_t o)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (start[mid] <= o)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Copy old bytes [o, o+n) to out. */
static int
old_copy(struct newstream *ns, uint64_t o, uint64_t n, uint8_t *out,
    char *err, size_t errlen)
{
	while (n > 0) {
		size_t i = chunk_at(ns->start, ns->nold, o);
		uint64_t from = o - ns->start[i];
		uint64_t take = ns->old[i].len - from < n ?
		    ns->old[i].len - from : n;

		if (!ns->have || ns->ci != i) {
			ns->have = false;
			if (chunk_get(ns->s, &ns->old[i], &ns->cb, err,
			    errlen) == -1)
				return -1;
			ns->ci = i;
			ns->have = true;
		}
		memcpy(out, ns->cb.data + from, (size_t)take);
		out += take;
		o += take;
		n -= take;
	}
	return 0;
}

/* New bytes [q, q+n) to out. */
static int
new_copy(struct newstream *ns, uint64_t q, uint64_t n, uint8_t *out,
    char *err, size_t errlen)
{
	uint64_t ins_end = ns->off + ns->ins_len;

	if (q < ns->off) {
		uint64_t take = ns->off - q < n ? ns->off - q : n;

		if (old_copy(ns, q, take, out, err, errlen) == -1)
			return -1;
		q += take;
		out += take;
		n -= take;
	}
	if (n > 0 && q < ins_end) {
		uint64_t take = ins_end - q < n ? ins_end - q : n;

		memcpy(out, ns->ins + (q - ns->off), (size_t)take);
		q += take;
		out += take;
		n -= take;
	}
	if (n > 0)
		return old_copy(ns, q - ns->ins_len + ns->del, n, out, err,
		    errlen);
	return 0;
}

int
blobtree_edit(struct nodestore *s, const struct fastcdc_params *p,
    const uint8_t root_[PNODE_ID_LEN], uint64_t off, uint64_t del,
    const uint8_t *ins, uint64_t ins_len, struct blobtree_info *info,
    char *err, size_t errlen)
{
	uint8_t root[PNODE_ID_LEN];	/* root_ may lie in *info */
	struct newstream ns;
	struct kidvec lvl = { 0 };
	struct blobtree_kid *old;
	uint64_t *start, total, new_total, q, oldq;
	uint8_t *win, id[PNODE_ID_LEN];
	size_t nold, first, j;
	unsigned height;
	int rc = -1;

	memcpy(root, root_, PNODE_ID_LEN);
	memset(info, 0, sizeof(*info));
	if (p == NULL)
		p = &default_params;
	else if (fastcdc_params_check(p, err, errlen) == -1)
		return -1;
	if (blobtree_chunks(s, root, &old, &nold, &total, &height, err,
	    errlen) == -1)
		return -1;
	if (off > total || del > total - off) {
		seterr(err, errlen, "%s outside the blob (%llu bytes)",
		    "edit", (unsigned long long)total);
		free(old);
		return -1;
	}
	new_total = total - del + ins_len;
	if (too_big(new_total, err, errlen) == -1) {
		free(old);
		return -1;
	}
	start = xcalloc(nold + 1, sizeof(*start));
	for (size_t i = 0; i < nold; i++)
		start[i + 1] = start[i] + old[i].len;
	/*
	 * A cut is decided by the byte at the cut, so the chunk that ends at
	 * off (holding byte off - 1) may move: start there.
	 */
	first = nold == 0 || off == 0 ? 0 : chunk_at(start, nold, off - 1);
	memset(&ns, 0, sizeof(ns));
	ns.s = s;
	ns.old = old;
	ns.start = start;
	ns.nold = nold;
	ns.off = off;
	ns.del = del;
	ns.ins = ins;
	ns.ins_len = ins_len;
	dcbor_buf_init(&ns.cb);
	win = xmalloc(p->max);
	for (size_t i = 0; i < first; i++)
		kv_push(&lvl, old[i].id, old[i].len);
	q = nold == 0 ? 0 : start[first];
	j = nold;
	while (q < new_total) {
		uint64_t fill = new_total - q < p->max ? new_total - q : p->max;
		size_t c, k;

		if (new_copy(&ns, q, fill, win, err, errlen) == -1)
			goto out;
		c = fastcdc_next(p, win, (size_t)fill);
		if (put(s, PNODE_C, win, c, id, info) == -1) {
			seterr(err, errlen, "store a %s: errno %llu", "chunk",
			    (unsigned long long)errno);
			goto out;
		}
		kv_push(&lvl, id, c);
		info->rechunked += c;
		q += c;
		if (q < off + ins_len || q == new_total)
			continue;
		/* Past the change: an old cut here means the rest is old. */
		oldq = q - ins_len + del;
		k = chunk_at(start, nold, oldq);
		if (k < nold && start[k] == oldq) {
			j = k;
			break;
		}
	}
	for (; j < nold; j++)
		kv_push(&lvl, old[j].id, old[j].len);
	rc = tree_up(s, &lvl, info, err, errlen);
out:
	free(win);
	free(start);
	free(old);
	free(lvl.v);
	dcbor_buf_free(&ns.cb);
	return rc;
}

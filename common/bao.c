/*
 * bao.c: Bao outboards, slices and slice verification over BLAKE3 trees
 * with chunk groups (bao.h). The tree over groups is BLAKE3's own tree
 * with its lowest g levels folded into the groups, so every node here is a
 * BLAKE3 node: a group's CV is the CV of the subtree of its chunks
 * (blake3_subtree), a parent's is blake3_parent, and the root is the
 * BLAKE3 hash whatever g is.
 *
 * The outboard is built in one pass: complete runs of groups get their CVs
 * from blake3_subtree_cvs (the SIMD path: many chunks and parents at once)
 * and the parents above groups, one per group, are written in pre-order
 * as the recursion returns. Slices and the verifier walk the same shape:
 * a subtree of n > group bytes splits at blake3_left_len(n).
 */
#include <stdlib.h>
#include <string.h>

#include "bao.h"
#include "blake3.h"
#include "xmalloc.h"

/* Group CVs computed per call when building an outboard (stack space). */
#define BUILD_GROUPS	256

uint64_t
bao_groups(uint64_t content_len, unsigned g)
{
	uint64_t group = (uint64_t)BLAKE3_CHUNK_LEN << g;

	if (content_len == 0)
		return 1;
	return content_len / group + (content_len % group != 0);
}

uint64_t
bao_outboard_len(uint64_t content_len, unsigned g)
{
	return BAO_HEADER_LEN + BAO_PAIR_LEN * (bao_groups(content_len, g) - 1);
}

static void
put_le64(uint8_t *p, uint64_t x)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(x >> (8 * i));
}

static uint64_t
get_le64(const uint8_t *p)
{
	uint64_t x = 0;

	for (int i = 7; i >= 0; i--)
		x = x << 8 | p[i];
	return x;
}

uint64_t
bao_header_content_len(const uint8_t hdr[BAO_HEADER_LEN])
{
	return get_le64(hdr);
}

/* ---- the outboard --------------------------------------------------- */

/* The pairs of a complete subtree of count (a power of two) group CVs,
 * written in pre-order at pos; cv = its CV (never the root). */
static void
build_cvs(const uint8_t *cvs, uint64_t count, uint8_t *pos, uint8_t cv[32])
{
	uint64_t half = count / 2;

	if (count == 1) {
		memcpy(cv, cvs, 32);
		return;
	}
	build_cvs(cvs, half, pos + BAO_PAIR_LEN, pos);
	build_cvs(cvs + 32 * half, half, pos + BAO_PAIR_LEN * half, pos + 32);
	blake3_parent(pos, pos + 32, 0, cv);
}

/* The subtree of data[start .. start + n): its pairs in pre-order at pos,
 * its CV (or the root hash) into cv. */
static void
build(const uint8_t *data, uint64_t start, uint64_t n, unsigned g,
    int is_root, uint8_t *pos, uint8_t cv[32])
{
	uint64_t group = (uint64_t)BLAKE3_CHUNK_LEN << g, groups, left;

	if (n <= group) {
		/* (data may be NULL for the empty content) */
		blake3_subtree(n > 0 ? data + start : data, n,
		    start / BLAKE3_CHUNK_LEN, is_root, cv);
		return;
	}
	groups = n / group;
	if (!is_root && n % group == 0 && (groups & (groups - 1)) == 0 &&
	    groups <= BUILD_GROUPS) {
		uint8_t cvs[BUILD_GROUPS * 32];

		blake3_subtree_cvs(data + start, n / BLAKE3_CHUNK_LEN,
		    start / BLAKE3_CHUNK_LEN, g, cvs);
		build_cvs(cvs, groups, pos, cv);
		return;
	}
	left = blake3_left_len(n);
	build(data, start, left, g, 0, pos + BAO_PAIR_LEN, pos);
	build(data, start + left, n - left, g, 0,
	    pos + BAO_PAIR_LEN * bao_groups(left, g), pos + 32);
	blake3_parent(pos, pos + 32, is_root, cv);
}

void
bao_outboard(const uint8_t *data, uint64_t len, unsigned g, uint8_t root[32],
    uint8_t *outboard)
{
	put_le64(outboard, len);
	build(data, 0, len, g, 1, outboard + BAO_HEADER_LEN, root);
}

/* ---- slices --------------------------------------------------------- */

/* Bao's rules for the range a slice proves: len 0 reads one byte, an
 * offset at or past the end reads the last byte (the final group proves
 * the length); emit says whether the caller asked for any bytes. */
struct range {
	uint64_t	start, end;	/* the nodes to include */
	uint64_t	emit_start, emit_end;	/* the bytes to hand on */
};

static struct range
range_of(uint64_t content_len, uint64_t off, uint64_t len)
{
	struct range r;

	r.emit_start = off < content_len ? off : content_len;
	r.emit_end = len > content_len - r.emit_start ? content_len :
	    r.emit_start + len;
	if (len == 0)
		len = 1;
	r.end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	r.start = off;
	if (off >= content_len)
		r.start = content_len > 0 ? content_len - 1 : 0;
	return r;
}

struct walk {
	const uint8_t	*data;
	const uint8_t	*ob;		/* the outboard (NULL: count only) */
	uint64_t	 obpos;		/* where its next pair is */
	uint8_t		*out;		/* NULL: count only */
	uint64_t	 len;		/* bytes of slice so far */
	struct range	 r;
	unsigned	 g;
};

static void
walk_put(struct walk *w, const uint8_t *p, uint64_t n)
{
	if (w->out != NULL && n > 0)
		memcpy(w->out + w->len, p, n);
	w->len += n;
}

/* One subtree in pre-order: skipped (its pairs too), a group, or a pair
 * and both sides. */
static void
walk(struct walk *w, uint64_t start, uint64_t n)
{
	uint64_t group = (uint64_t)BLAKE3_CHUNK_LEN << w->g, left;

	if (start + n <= w->r.start) {
		w->obpos += BAO_PAIR_LEN * (bao_groups(n, w->g) - 1);
		return;
	}
	if (w->r.end <= start)
		return;
	if (n <= group) {
		walk_put(w, w->data != NULL && n > 0 ? w->data + start : NULL,
		    n);
		return;
	}
	walk_put(w, w->ob != NULL ? w->ob + w->obpos : NULL, BAO_PAIR_LEN);
	w->obpos += BAO_PAIR_LEN;
	left = blake3_left_len(n);
	walk(w, start, left);
	walk(w, start + left, n - left);
}

static uint64_t
slice_walk(const uint8_t *data, uint64_t content_len, const uint8_t *ob,
    unsigned g, uint64_t off, uint64_t len, uint8_t *out)
{
	struct walk w = { .data = data, .ob = ob, .obpos = BAO_HEADER_LEN,
	    .out = out, .r = range_of(content_len, off, len), .g = g };
	uint8_t hdr[BAO_HEADER_LEN];

	put_le64(hdr, content_len);
	walk_put(&w, hdr, sizeof(hdr));
	walk(&w, 0, content_len);
	return w.len;
}

uint64_t
bao_slice_len(uint64_t content_len, unsigned g, uint64_t off, uint64_t len)
{
	return slice_walk(NULL, content_len, NULL, g, off, len, NULL);
}

int
bao_slice(const uint8_t *data, uint64_t content_len, const uint8_t *outboard,
    unsigned g, uint64_t off, uint64_t len, uint8_t *out)
{
	if (g > BAO_GROUP_LOG_MAX || get_le64(outboard) != content_len)
		return -1;
	slice_walk(data, content_len, outboard, g, off, len, out);
	return 0;
}

/* ---- verification --------------------------------------------------- */

enum verify_state {
	V_HEADER,	/* reading the 8-byte content length */
	V_NEXT,		/* choosing the next node of the slice */
	V_NODE,		/* reading a pair or a group */
	V_DONE,		/* every node arrived and verified */
	V_FAILED,	/* refused: err and the bad range say why */
};

struct vnode {
	uint64_t	start, len;
	uint8_t		cv[32];
	uint8_t		is_root;
};

struct bao_verify {
	enum verify_state state;
	uint8_t		 root[32];
	unsigned	 g;
	uint64_t	 off, len;	/* as asked */
	bao_emit_fn	*emit;
	void		*arg;

	uint8_t		 hdr[BAO_HEADER_LEN];
	uint64_t	 content_len;
	struct range	 r;
	/* Nodes still to come, the next on top: a right side waits under
	 * its left. Depth <= 54 levels of chunks, so 64 + 1 is room. */
	struct vnode	 stack[65];
	int		 depth;
	struct vnode	 cur;		/* the node being read */
	uint8_t		*buf;		/* its bytes: a group at most */
	size_t		 have, need;

	const char	*err;
	uint64_t	 bad_off, bad_len;
};

struct bao_verify *
bao_verify_new(const uint8_t root[32], unsigned g, uint64_t off, uint64_t len,
    bao_emit_fn *emit, void *arg)
{
	struct bao_verify *v;

	if (g > BAO_GROUP_LOG_MAX)
		return NULL;
	v = xcalloc(1, sizeof(*v));
	memcpy(v->root, root, 32);
	v->g = g;
	v->off = off;
	v->len = len;
	v->emit = emit;
	v->arg = arg;
	v->buf = xmalloc((size_t)BLAKE3_CHUNK_LEN << g);
	v->state = V_HEADER;
	return v;
}

void
bao_verify_free(struct bao_verify *v)
{
	if (v == NULL)
		return;
	free(v->buf);
	free(v);
}

/* Check the node just read against its expected CV; hand on the asked
 * bytes of a group, queue the two sides of a pair. 0, or -1. */
static int
verify_node(struct bao_verify *v)
{
	struct vnode *n = &v->cur;
	uint64_t group = (uint64_t)BLAKE3_CHUNK_LEN << v->g;
	uint8_t cv[32];

	if (n->len <= group) {
		uint64_t a, b;

		blake3_subtree(v->buf, n->len, n->start / BLAKE3_CHUNK_LEN,
		    n->is_root, cv);
		if (memcmp(cv, n->cv, 32) != 0)
			return -1;
		a = n->start > v->r.emit_start ? n->start : v->r.emit_start;
		b = n->start + n->len < v->r.emit_end ? n->start + n->len :
		    v->r.emit_end;
		if (a < b && v->emit != NULL)
			v->emit(v->arg, a, v->buf + (a - n->start),
			    (size_t)(b - a));
		return 0;
	}
	blake3_parent(v->buf, v->buf + 32, n->is_root, cv);
	if (memcmp(cv, n->cv, 32) != 0)
		return -1;
	{
		uint64_t left = blake3_left_len(n->len);
		struct vnode *l, *r;

		r = &v->stack[v->depth++];
		r->start = n->start + left;
		r->len = n->len - left;
		memcpy(r->cv, v->buf + 32, 32);
		r->is_root = 0;
		l = &v->stack[v->depth++];
		l->start = n->start;
		l->len = left;
		memcpy(l->cv, v->buf, 32);
		l->is_root = 0;
	}
	return 0;
}

static void
verify_fail(struct bao_verify *v, const char *err, uint64_t off, uint64_t len)
{
	v->state = V_FAILED;
	v->err = err;
	v->bad_off = off;
	v->bad_len = len;
}

/* Move what fits of *p[0..*n) into buf[*have .. need): 1 once it is full. */
static int
gather(uint8_t *buf, size_t *have, size_t need, const uint8_t **p, size_t *n)
{
	size_t take = need - *have < *n ? need - *have : *n;

	if (take > 0) {		/* (p may be NULL when n is 0) */
		memcpy(buf + *have, *p, take);
		*have += take;
		*p += take;
		*n -= take;
	}
	return *have == need;
}

/* Every transition of the verifier: consume p[0..n) as far as it goes. */
int
bao_verify_feed(struct bao_verify *v, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t group = (uint64_t)BLAKE3_CHUNK_LEN << v->g;

	for (;;) {
		switch (v->state) {
		case V_HEADER:
			if (!gather(v->hdr, &v->have, BAO_HEADER_LEN, &p, &n))
				return 0;
			v->have = 0;
			v->content_len = get_le64(v->hdr);
			v->r = range_of(v->content_len, v->off, v->len);
			v->stack[0].start = 0;
			v->stack[0].len = v->content_len;
			memcpy(v->stack[0].cv, v->root, 32);
			v->stack[0].is_root = 1;
			v->depth = 1;
			v->state = V_NEXT;
			break;
		case V_NEXT:
			v->state = V_DONE;
			while (v->depth > 0) {
				struct vnode *c = &v->stack[--v->depth];

				/* Outside the range: not in the slice (the
				 * root always is: it proves the length). */
				if (!c->is_root && (c->start + c->len <=
				    v->r.start || v->r.end <= c->start))
					continue;
				v->cur = *c;
				v->need = c->len <= group ? (size_t)c->len :
				    BAO_PAIR_LEN;
				v->have = 0;
				v->state = V_NODE;
				break;
			}
			break;
		case V_NODE:
			if (!gather(v->buf, &v->have, v->need, &p, &n))
				return 0;
			if (verify_node(v) != 0) {
				verify_fail(v, v->cur.len <= group ?
				    "group does not match its hash" :
				    "parent pair does not match its hash",
				    v->cur.start, v->cur.len);
				return -1;
			}
			v->state = V_NEXT;
			break;
		case V_DONE:
			if (n == 0)
				return 0;
			verify_fail(v, "bytes past the end of the slice",
			    v->r.emit_end, 0);
			return -1;
		case V_FAILED:
			return -1;
		}
	}
}

int
bao_verify_finish(struct bao_verify *v)
{
	switch (v->state) {
	case V_DONE:
		return 0;
	case V_FAILED:
		return -1;
	case V_HEADER:
		verify_fail(v, "slice truncated in its header", v->off,
		    v->len);
		return -1;
	case V_NEXT:
	case V_NODE:
		verify_fail(v, "slice truncated", v->cur.start, v->cur.len);
		return -1;
	}
	return -1;
}

const char *
bao_verify_error(const struct bao_verify *v, uint64_t *bad_off,
    uint64_t *bad_len)
{
	if (v->state != V_FAILED)
		return NULL;
	if (bad_off != NULL)
		*bad_off = v->bad_off;
	if (bad_len != NULL)
		*bad_len = v->bad_len;
	return v->err;
}

/*
 * pwalk.c: the holder's delta walk and the reader's level walk (see
 * pwalk.h).
 *
 * Both keep frontiers: the nodes of one level still to look at, each with
 * its kind, level and (for blobs) the content offset it starts at, which
 * is how a new chunk finds the old chunk a z frame is made against.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "idset.h"
#include "pnode.h"
#include "pwalk.h"
#include "xmalloc.h"
#include "zdelta.h"

struct fent {
	uint8_t		id[PNODE_ID_LEN];
	int		kind;
	uint64_t	level;
	uint64_t	off;
	uint64_t	len;
};

struct fvec {
	struct fent	*v;
	size_t		 n, cap;
};

static struct fent *
fv_push(struct fvec *f, const uint8_t *id, int kind, uint64_t level,
    uint64_t off, uint64_t len)
{
	struct fent *e;

	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 64;
		f->v = xreallocarray(f->v, f->cap, sizeof(*f->v));
	}
	e = &f->v[f->n++];
	memcpy(e->id, id, PNODE_ID_LEN);
	e->kind = kind;
	e->level = level;
	e->off = off;
	e->len = len;
	return e;
}

/* Read node e into b; learn its kind and level if the source knows them. */
static int
node_read(struct pnode_src *src, struct fent *e, struct dcbor_buf *b)
{
	int kind = PNODE_NONE;
	struct pnode_b nb;
	struct pnode_bo bo;
	struct pnode_m m;

	if (src->get(src->arg, e->id, b, &kind) != 0)
		return -1;
	if (e->kind == PNODE_NONE)
		e->kind = kind != PNODE_NONE ? kind :
		    pnode_kind_of(b->data, b->len);
	if (kind != PNODE_NONE && kind != e->kind)
		return -1;
	switch (e->kind) {
	case PNODE_B:
		if (pnode_b_decode(b->data, b->len, &nb) == -1)
			return -1;
		e->level = nb.level;
		e->len = nb.total;
		return 0;
	case PNODE_M:
		if (pnode_m_decode(b->data, b->len, &m) == -1)
			return -1;
		e->level = m.level;
		pnode_m_free(&m);
		return 0;
	case PNODE_BO:
		if (pnode_bo_decode(b->data, b->len, &bo) == -1)
			return -1;
		e->level = bo.level;
		return 0;
	case PNODE_C:
		e->level = 0;
		e->len = b->len;
		return 0;
	default:
		return -1;
	}
}

struct expand {
	struct fvec	*out;
	uint64_t	 off;
	struct idset	*ids;	/* the have side's ids, or NULL */
};

static int
expand_kid(void *arg, int kind, const uint8_t *id, uint64_t level,
    uint64_t len)
{
	struct expand *x = arg;

	fv_push(x->out, id, kind, level, x->off, len);
	if (kind == PNODE_C)
		x->off += len;
	else if (kind == PNODE_B)
		x->off += len;
	if (x->ids != NULL)
		idset_add(x->ids, id, 0);
	return 0;
}

/* The children of node e (bytes in b) onto out; their ids into ids. */
static int
expand(const struct fent *e, const struct dcbor_buf *b, struct fvec *out,
    struct idset *ids)
{
	struct expand x = { out, e->off, ids };

	return pnode_children(e->kind, b->data, b->len, expand_kid, &x);
}

static void
stat_add(struct pwalk_stat *st, int kind, size_t len)
{
	st->nodes[kind]++;
	st->bytes[kind] += len;
	st->nodes_total++;
	st->bytes_total += len;
}

static int
cmp_off(const void *a, const void *b)
{
	const struct fent *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The have chunk starting at off, from hc[0..n) sorted by offset. */
static const struct fent *
base_at(const struct fent *hc, size_t n, uint64_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (hc[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && hc[lo].off == off && hc[lo].kind == PNODE_C ?
	    &hc[lo] : NULL;
}

struct dwalk {
	struct pnode_src	*src;
	int			 level;
	int			(*fn)(void *, const struct pwalk_node *);
	void			*arg;
	struct pwalk_stat	*st;
	struct dcbor_buf	 b, base, frame;
};

/* Send chunk e (bytes in d->b), as a z frame against hc when smaller. */
static int
send_leaf(struct dwalk *d, const struct fent *e, const struct fent *hc,
    size_t nhc)
{
	struct pwalk_node n = { .kind = e->kind, .id = e->id,
	    .level = e->level, .bytes = d->b.data, .len = d->b.len };
	const struct fent *base;
	int kind;

	if (e->kind == PNODE_C && d->level >= 2 &&
	    (base = base_at(hc, nhc, e->off)) != NULL &&
	    d->src->get(d->src->arg, base->id, &d->base, &kind) == 0) {
		dcbor_buf_reset(&d->frame);
		if (zdelta_make(&d->frame, base->id, d->base.data,
		    d->base.len, d->b.data, d->b.len) < d->b.len) {
			n.kind = PNODE_Z;
			n.base = base->id;
			n.bytes = d->frame.data;
			n.len = d->frame.len;
		}
	}
	stat_add(d->st, n.kind, n.len);
	return d->fn(d->arg, &n);
}

int
pwalk_delta(struct pnode_src *src, const uint8_t want[PNODE_ID_LEN],
    const uint8_t *have, size_t nhave, int level,
    int (*fn)(void *arg, const struct pwalk_node *n), void *arg,
    struct pwalk_stat *st)
{
	struct pwalk_stat dummy;
	struct dwalk d = { src, level, fn, arg, st ? st : &dummy, { 0 },
	    { 0 }, { 0 } };
	struct fvec w = { 0 }, h = { 0 }, nw = { 0 }, nh = { 0 };
	struct idset haveids, sent, wl;
	int rc = 0;

	memset(d.st, 0, sizeof(*d.st));
	idset_init(&haveids);
	idset_init(&sent);
	idset_init(&wl);
	fv_push(&w, want, PNODE_NONE, 0, 0, 0);
	for (size_t i = 0; i < nhave; i++) {
		fv_push(&h, have + i * PNODE_ID_LEN, PNODE_NONE, 0, 0, 0);
		idset_add(&haveids, have + i * PNODE_ID_LEN, 0);
	}
	/* The roots' levels: read each once. */
	for (size_t i = 0; i < w.n + h.n && rc == 0; i++)
		if (node_read(src, i < w.n ? &w.v[i] : &h.v[i - w.n], &d.b) ==
		    -1)
			rc = -1;
	while (rc == 0 && w.n > 0) {
		uint64_t lvl = 0;

		for (size_t i = 0; i < w.n; i++)
			lvl = w.v[i].level > lvl ? w.v[i].level : lvl;
		for (size_t i = 0; i < h.n; i++)
			lvl = h.v[i].level > lvl ? h.v[i].level : lvl;
		nw.n = nh.n = 0;
		idset_free(&wl);
		for (size_t i = 0; i < w.n; i++)
			if (w.v[i].level == lvl)
				idset_add(&wl, w.v[i].id, 0);
		/* The have side first: its ids at the next level down. */
		if (lvl == 0 && h.n > 0)
			qsort(h.v, h.n, sizeof(*h.v), cmp_off);
		for (size_t i = 0; i < h.n && rc == 0; i++) {
			struct fent *e = &h.v[i];

			if (e->level != lvl || lvl == 0) {
				fv_push(&nh, e->id, e->kind, e->level, e->off,
				    e->len);
				continue;
			}
			if (idset_get(&wl, e->id, NULL))
				continue;	/* shared with want: skip */
			d.st->have_read++;
			if (node_read(src, e, &d.b) == -1 ||
			    expand(e, &d.b, &nh, &haveids) == -1)
				rc = -1;
		}
		for (size_t i = 0; i < w.n && rc == 0; i++) {
			struct fent *e = &w.v[i];

			if (e->level != lvl) {
				fv_push(&nw, e->id, e->kind, e->level, e->off,
				    e->len);
				continue;
			}
			if (idset_get(&haveids, e->id, NULL) ||
			    !idset_add(&sent, e->id, 0))
				continue;
			if (node_read(src, e, &d.b) == -1) {
				rc = -1;
				break;
			}
			if (lvl == 0) {
				rc = send_leaf(&d, e, h.v, h.n);
				continue;
			}
			{
				struct pwalk_node n = { .kind = e->kind,
				    .id = e->id, .level = e->level,
				    .bytes = d.b.data, .len = d.b.len };

				stat_add(d.st, e->kind, d.b.len);
				if ((rc = fn(arg, &n)) != 0)
					break;
			}
			if (expand(e, &d.b, &nw, NULL) == -1)
				rc = -1;
		}
		if (lvl == 0)
			break;
		{
			struct fvec t = w;

			w = nw;
			nw = t;
			t = h;
			h = nh;
			nh = t;
		}
	}
	free(w.v);
	free(h.v);
	free(nw.v);
	free(nh.v);
	idset_free(&haveids);
	idset_free(&sent);
	idset_free(&wl);
	dcbor_buf_free(&d.b);
	dcbor_buf_free(&d.base);
	dcbor_buf_free(&d.frame);
	return rc;
}

/* ---- the reader's level walk ---- */

struct pwalk_levels {
	struct fvec		 cur;	/* the level handed out last */
	struct fvec		 next;
	struct dcbor_buf	 ids;
	struct dcbor_buf	 b;
	bool			 started;
	bool			 root_done;
	unsigned		 rounds, depth;
};

struct pwalk_levels *
pwalk_levels_new(const uint8_t root[PNODE_ID_LEN])
{
	struct pwalk_levels *w = xcalloc(1, sizeof(*w));

	fv_push(&w->cur, root, PNODE_NONE, 0, 0, 0);
	dcbor_buf_init(&w->ids);
	dcbor_buf_init(&w->b);
	return w;
}

void
pwalk_levels_free(struct pwalk_levels *w)
{
	if (w == NULL)
		return;
	free(w->cur.v);
	free(w->next.v);
	dcbor_buf_free(&w->ids);
	dcbor_buf_free(&w->b);
	free(w);
}

/* The ids of cur that local lacks into w->ids; how many. */
static size_t
missing(struct pwalk_levels *w, struct pnode_src *local)
{
	struct idset seen;
	size_t n = 0;

	idset_init(&seen);
	dcbor_buf_reset(&w->ids);
	for (size_t i = 0; i < w->cur.n; i++) {
		int kind;

		if (!idset_add(&seen, w->cur.v[i].id, 0) ||
		    local->get(local->arg, w->cur.v[i].id, &w->b, &kind) == 0)
			continue;
		dcbor_put_raw(&w->ids, w->cur.v[i].id, PNODE_ID_LEN);
		n++;
	}
	idset_free(&seen);
	return n;
}

int
pwalk_levels_next(struct pwalk_levels *w, struct pnode_src *local,
    const uint8_t **ids, size_t *n, int *kind)
{
	*n = 0;
	*ids = NULL;
	*kind = PNODE_NONE;
	for (;;) {
		if (!w->started) {
			w->started = true;
		} else {
			w->next.n = 0;
			for (size_t i = 0; i < w->cur.n; i++) {
				struct fent *e = &w->cur.v[i];

				if (node_read(local, e, &w->b) == -1 ||
				    expand(e, &w->b, &w->next, NULL) == -1)
					return -1;
				if (!w->root_done)
					w->depth = (unsigned)e->level;
				w->root_done = true;
			}
			{
				struct fvec t = w->cur;

				w->cur = w->next;
				w->next = t;
			}
			if (w->cur.n == 0)
				return 0;
		}
		if ((*n = missing(w, local)) > 0) {
			w->rounds++;
			*ids = w->ids.data;
			*kind = w->cur.v[0].kind;
			return 0;
		}
	}
}

unsigned
pwalk_levels_rounds(const struct pwalk_levels *w)
{
	return w->rounds;
}

unsigned
pwalk_levels_depth(const struct pwalk_levels *w)
{
	return w->depth;
}

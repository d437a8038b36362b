/*
 * riblt.c: rateless IBLT encoder and decoder (see riblt.h).  Both keep
 * their items in a min-heap keyed by each item's next symbol index, so
 * producing symbol i touches only the items mapped to it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "dcbor.h"
#include "riblt.h"
#include "xmalloc.h"

#define RIBLT_SEED	0x52494240u	/* the checksum's XXH3 seed */

/* An item's place in the mapping: its next index and generator state. */
struct rmap {
	uint64_t	idx;
	uint64_t	x;
	uint64_t	chk;
	uint64_t	st;
	int64_t		delta;	/* added to a symbol's count */
};

struct rheap {
	struct rmap	*m;
	size_t		 n, cap;
};

struct riblt_enc {
	struct rheap	 h;
	size_t		 pos;
};

struct riblt_dec {
	struct rheap	 h;		/* local and recovered items */
	struct riblt_sym *cell;
	size_t		 pos, cap, max;
	size_t		*queue;		/* cells that may be pure */
	size_t		 nq, qcap;
	uint64_t	*remote, *local;
	size_t		 nremote, nlocal, remcap, loccap;
};

uint64_t
riblt_checksum(uint64_t x)
{
	uint8_t b[8];

	for (int k = 0; k < 8; k++)
		b[k] = (uint8_t)(x >> (56 - 8 * k));
	return XXH3_64bits_withSeed(b, sizeof(b), RIBLT_SEED);
}

static uint64_t
splitmix(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Move m to its next index: a gap drawn so that P(index i) ~ 1/(1+i/2). */
static void
rmap_next(struct rmap *m)
{
	double u, g;

	if (m->idx == UINT64_MAX)
		return;
	u = (double)((splitmix(&m->st) >> 11) + 1) * 0x1p-53;
	g = ceil(((double)m->idx + 1.5) * (1.0 / sqrt(u) - 1.0));
	if (g < 1)
		g = 1;
	if (g >= 0x1p62 || (double)m->idx + g >= 0x1p62)
		m->idx = UINT64_MAX;
	else
		m->idx += (uint64_t)g;
}

static void
rmap_init(struct rmap *m, uint64_t x, int64_t delta)
{
	m->idx = 0;
	m->x = x;
	m->chk = riblt_checksum(x);
	m->st = m->chk;
	m->delta = delta;
}

static void
sym_apply(struct riblt_sym *s, const struct rmap *m)
{
	s->sum ^= m->x;
	s->chk ^= m->chk;
	s->count += m->delta;
}

static void
heap_down(struct rheap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;
		struct rmap t;

		if (l < h->n && h->m[l].idx < h->m[s].idx)
			s = l;
		if (r < h->n && h->m[r].idx < h->m[s].idx)
			s = r;
		if (s == i)
			return;
		t = h->m[i];
		h->m[i] = h->m[s];
		h->m[s] = t;
		i = s;
	}
}

static void
heap_push(struct rheap *h, const struct rmap *m)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->m = xreallocarray(h->m, h->cap, sizeof(*h->m));
	}
	i = h->n++;
	h->m[i] = *m;
	while (i > 0 && h->m[(i - 1) / 2].idx > h->m[i].idx) {
		struct rmap t = h->m[i];

		h->m[i] = h->m[(i - 1) / 2];
		h->m[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* Apply every heap item mapped to index i to s, moving each on. */
static void
heap_apply(struct rheap *h, uint64_t i, struct riblt_sym *s)
{
	while (h->n > 0 && h->m[0].idx == i) {
		sym_apply(s, &h->m[0]);
		rmap_next(&h->m[0]);
		heap_down(h, 0);
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A heap of the distinct items, each with delta. */
static void
heap_fill(struct rheap *h, const uint64_t *items, size_t n, int64_t delta)
{
	uint64_t *v = xcalloc(n ? n : 1, sizeof(*v));

	if (n > 0)
		memcpy(v, items, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u64);
	h->cap = n ? n : 1;
	h->m = xcalloc(h->cap, sizeof(*h->m));
	h->n = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i] != v[i - 1])
			rmap_init(&h->m[h->n++], v[i], delta);
	free(v);
	/* Every index starts at 0: the array is already a heap. */
}

struct riblt_enc *
riblt_enc_new(const uint64_t *items, size_t n)
{
	struct riblt_enc *e = xcalloc(1, sizeof(*e));

	heap_fill(&e->h, items, n, 1);
	return e;
}

void
riblt_enc_free(struct riblt_enc *e)
{
	if (e == NULL)
		return;
	free(e->h.m);
	free(e);
}

void
riblt_enc_next(struct riblt_enc *e, struct riblt_sym *out, size_t k)
{
	for (size_t j = 0; j < k; j++) {
		memset(&out[j], 0, sizeof(out[j]));
		heap_apply(&e->h, e->pos++, &out[j]);
	}
}

size_t
riblt_enc_pos(const struct riblt_enc *e)
{
	return e->pos;
}

struct riblt_dec *
riblt_dec_new(const uint64_t *local, size_t n, size_t max_syms)
{
	struct riblt_dec *d = xcalloc(1, sizeof(*d));

	heap_fill(&d->h, local, n, -1);
	d->max = max_syms;
	return d;
}

void
riblt_dec_free(struct riblt_dec *d)
{
	if (d == NULL)
		return;
	free(d->h.m);
	free(d->cell);
	free(d->queue);
	free(d->remote);
	free(d->local);
	free(d);
}

static void
queue_push(struct riblt_dec *d, size_t i)
{
	if (d->nq == d->qcap) {
		d->qcap = d->qcap ? 2 * d->qcap : 64;
		d->queue = xreallocarray(d->queue, d->qcap, sizeof(*d->queue));
	}
	d->queue[d->nq++] = i;
}

static bool
pure(const struct riblt_sym *s)
{
	return (s->count == 1 || s->count == -1) &&
	    riblt_checksum(s->sum) == s->chk;
}

static void
list_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = xreallocarray(*v, *cap, sizeof(**v));
	}
	(*v)[(*n)++] = x;
}

/* Peel every pure cell, and the cells that become pure on the way. */
static void
peel(struct riblt_dec *d)
{
	while (d->nq > 0) {
		struct riblt_sym c = d->cell[d->queue[--d->nq]];
		struct rmap m;

		if (!pure(&c))
			continue;
		if (c.count == 1)
			list_push(&d->remote, &d->nremote, &d->remcap, c.sum);
		else
			list_push(&d->local, &d->nlocal, &d->loccap, c.sum);
		rmap_init(&m, c.sum, -c.count);
		while (m.idx < d->pos) {
			sym_apply(&d->cell[m.idx], &m);
			if (pure(&d->cell[m.idx]))
				queue_push(d, m.idx);
			rmap_next(&m);
		}
		heap_push(&d->h, &m);
	}
}

int
riblt_dec_add(struct riblt_dec *d, const struct riblt_sym *s, size_t k)
{
	if (k > d->max || d->pos > d->max - k)
		return -1;
	if (d->pos + k > d->cap) {
		size_t cap = d->cap ? d->cap : 256;

		while (cap < d->pos + k)
			cap *= 2;
		if (cap > d->max)
			cap = d->max;
		d->cell = xreallocarray(d->cell, cap, sizeof(*d->cell));
		d->cap = cap;
	}
	for (size_t j = 0; j < k; j++) {
		struct riblt_sym c = s[j];

		heap_apply(&d->h, d->pos, &c);
		d->cell[d->pos] = c;
		if (pure(&c))
			queue_push(d, d->pos);
		d->pos++;
	}
	peel(d);
	return 0;
}

bool
riblt_dec_done(const struct riblt_dec *d)
{
	return d->pos > 0 && d->cell[0].sum == 0 && d->cell[0].chk == 0 &&
	    d->cell[0].count == 0;
}

size_t
riblt_dec_pos(const struct riblt_dec *d)
{
	return d->pos;
}

const uint64_t *
riblt_dec_remote(const struct riblt_dec *d, size_t *n)
{
	*n = d->nremote;
	return d->remote;
}

const uint64_t *
riblt_dec_local(const struct riblt_dec *d, size_t *n)
{
	*n = d->nlocal;
	return d->local;
}

static size_t
put_be64(uint8_t *p, uint64_t v)
{
	for (int k = 0; k < 8; k++)
		p[k] = (uint8_t)(v >> (56 - 8 * k));
	return 8;
}

static uint64_t
get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int k = 0; k < 8; k++)
		v = v << 8 | p[k];
	return v;
}

void
riblt_put_syms(struct dcbor_buf *b, const struct riblt_sym *s, size_t k)
{
	uint8_t *tmp = xmalloc(k ? k * RIBLT_SYM_MAX : 1), *p = tmp;

	for (size_t j = 0; j < k; j++) {
		/* zigzag, then LEB128 */
		uint64_t z = ((uint64_t)s[j].count << 1) ^
		    (uint64_t)(s[j].count >> 63);

		p += put_be64(p, s[j].sum);
		p += put_be64(p, s[j].chk);
		do {
			*p++ = (uint8_t)((z & 0x7f) | (z > 0x7f ? 0x80 : 0));
			z >>= 7;
		} while (z != 0);
	}
	dcbor_put_bytes(b, tmp, (size_t)(p - tmp));
	free(tmp);
}

int
riblt_get_syms(const uint8_t *p, size_t len, struct riblt_sym *out,
    size_t max, size_t *k)
{
	const uint8_t *end = p + len;
	size_t n = 0;

	while (p < end) {
		uint64_t z = 0;
		int shift = 0;

		if (n == max || end - p < 17)
			return -1;
		out[n].sum = get_be64(p);
		out[n].chk = get_be64(p + 8);
		p += 16;
		for (;;) {
			if (p == end || shift > 63)
				return -1;
			z |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
			if (!(*p++ & 0x80))
				break;
		}
		out[n].count = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
		n++;
	}
	*k = n;
	return 0;
}

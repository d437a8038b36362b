/*
 * riblt.c: rateless IBLT encoder and decoder (see riblt.h).  Producing
 * or taking symbol i touches only the items mapped to it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "be.h"
#include "dcbor.h"
#include "riblt.h"
#include "rng.h"
#include "u64.h"
#include "xmalloc.h"

#define RIBLT_SEED	0x52494240u	/* the checksum's XXH3 seed */

/*
 * The items of a side and where each maps next.  Symbols are produced in
 * order, so the items wait in one list per symbol
 * index (head[i] .. next[]): producing symbol i walks list i and moves
 * each item to the list of its next index.  Indexes at or past max are
 * never reached: such items leave the lists.
 */
#define NONE	UINT32_MAX

struct rset {
	uint64_t	*x, *chk, *st;
	uint32_t	*idx, *next;
	int8_t		*delta;		/* added to a symbol's count */
	size_t		 n, cap;
	uint32_t	*head;		/* max lists */
	size_t		 max;
};

struct riblt_enc {
	struct rset	 s;
	size_t		 pos;
};

struct riblt_dec {
	struct rset	 s;		/* local and recovered items */
	struct riblt_sym *cell;
	size_t		 pos, cap;
	size_t		*queue;		/* cells that may be pure */
	size_t		 nq, qcap;
	uint64_t	*remote, *local;
	size_t		 nremote, nlocal, remcap, loccap;
	bool		 failed;	/* symbols no set difference makes */
};

uint64_t
riblt_checksum(uint64_t x)
{
	uint8_t b[8];

	be_put64(b, x);
	return XXH3_64bits_withSeed(b, sizeof(b), RIBLT_SEED);
}

/* The index after idx: a gap drawn so that P(index i) ~ 1/(1 + i/2). */
static uint64_t
next_index(uint64_t idx, uint64_t *st)
{
	double u = (double)((rng_splitmix64(st) >> 11) + 1) * 0x1p-53;
	double g = ceil(((double)idx + 1.5) * (1.0 / sqrt(u) - 1.0));

	if (g < 1)
		g = 1;
	if (g >= 0x1p62 || (double)idx + g >= 0x1p62)
		return UINT64_MAX;
	return idx + (uint64_t)g;
}

static void
rset_init(struct rset *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->head = xmalloc((max ? max : 1) * sizeof(*s->head));
	memset(s->head, 0xff, (max ? max : 1) * sizeof(*s->head));
}

static void
rset_free(struct rset *s)
{
	free(s->x);
	free(s->chk);
	free(s->st);
	free(s->idx);
	free(s->next);
	free(s->delta);
	free(s->head);
}

/* Put item j on the list of index i (or nowhere past max). */
static void
rset_link(struct rset *s, uint32_t j, uint64_t i)
{
	if (i >= s->max)
		return;
	s->idx[j] = (uint32_t)i;
	s->next[j] = s->head[i];
	s->head[i] = (uint32_t)j;
}

/* Add x, mapped from index 0; its index after 'from' goes to a list. */
static uint32_t
rset_add(struct rset *s, uint64_t x, int delta)
{
	uint32_t j;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->x = xreallocarray(s->x, s->cap, sizeof(*s->x));
		s->chk = xreallocarray(s->chk, s->cap, sizeof(*s->chk));
		s->st = xreallocarray(s->st, s->cap, sizeof(*s->st));
		s->idx = xreallocarray(s->idx, s->cap, sizeof(*s->idx));
		s->next = xreallocarray(s->next, s->cap, sizeof(*s->next));
		s->delta = xreallocarray(s->delta, s->cap, sizeof(*s->delta));
	}
	j = (uint32_t)s->n++;
	s->x[j] = x;
	s->chk[j] = riblt_checksum(x);
	s->st[j] = s->chk[j];
	s->delta[j] = (int8_t)delta;
	return j;
}

static void
sym_apply(struct riblt_sym *c, const struct rset *s, uint32_t j)
{
	c->sum ^= s->x[j];
	c->chk ^= s->chk[j];
	/* A remote count may be anything (INT64_MIN: found by fuzz_recon):
	 * add modulo 2^64, where signed overflow would be undefined. */
	c->count = (int64_t)((uint64_t)c->count +
	    (uint64_t)(int64_t)s->delta[j]);
}

/* Apply every item mapped to index i to c, moving each on. */
static void
rset_apply(struct rset *s, uint64_t i, struct riblt_sym *c)
{
	uint32_t j, nx;

	if (i >= s->max)
		return;
	for (j = s->head[i], s->head[i] = NONE; j != NONE; j = nx) {
		nx = s->next[j];
		sym_apply(c, s, j);
		rset_link(s, j, next_index(i, &s->st[j]));
	}
}

/* The distinct items, each with delta, all waiting for symbol 0. */
static void
rset_fill(struct rset *s, const uint64_t *items, size_t n, int delta)
{
	uint64_t *v = xcalloc(n ? n : 1, sizeof(*v));

	if (n > 0)
		memcpy(v, items, n * sizeof(*v));
	qsort(v, n, sizeof(*v), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i] != v[i - 1])
			rset_link(s, rset_add(s, v[i], delta), 0);
	free(v);
}

struct riblt_enc *
riblt_enc_new(const uint64_t *items, size_t n, size_t max_syms)
{
	struct riblt_enc *e = xcalloc(1, sizeof(*e));

	rset_init(&e->s, max_syms);
	rset_fill(&e->s, items, n, 1);
	return e;
}

void
riblt_enc_free(struct riblt_enc *e)
{
	if (e == NULL)
		return;
	rset_free(&e->s);
	free(e);
}

size_t
riblt_enc_next(struct riblt_enc *e, struct riblt_sym *out, size_t k)
{
	size_t j;

	for (j = 0; j < k && e->pos < e->s.max; j++) {
		memset(&out[j], 0, sizeof(out[j]));
		rset_apply(&e->s, e->pos++, &out[j]);
	}
	return j;
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

	rset_init(&d->s, max_syms);
	rset_fill(&d->s, local, n, -1);
	return d;
}

void
riblt_dec_free(struct riblt_dec *d)
{
	if (d == NULL)
		return;
	rset_free(&d->s);
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
		uint64_t i = 0;
		uint32_t j;

		if (!pure(&c))
			continue;
		/*
		 * A real difference never peels more items than there are
		 * symbols, and made-up symbols can peel the same item back
		 * and forth for ever: past max the stream is refused.
		 */
		if (d->nremote + d->nlocal >= d->s.max) {
			d->failed = true;
			d->nq = 0;
			return;
		}
		if (c.count == 1)
			list_push(&d->remote, &d->nremote, &d->remcap, c.sum);
		else
			list_push(&d->local, &d->nlocal, &d->loccap, c.sum);
		/* Take it out of every cell so far; later ones as they come. */
		j = rset_add(&d->s, c.sum, (int)-c.count);
		while (i < d->pos) {
			sym_apply(&d->cell[i], &d->s, j);
			if (pure(&d->cell[i]))
				queue_push(d, i);
			i = next_index(i, &d->s.st[j]);
		}
		rset_link(&d->s, j, i);
	}
}

int
riblt_dec_add(struct riblt_dec *d, const struct riblt_sym *s, size_t k)
{
	if (d->failed || k > d->s.max || d->pos > d->s.max - k)
		return -1;
	if (d->pos + k > d->cap) {
		size_t cap = d->cap ? d->cap : 256;

		while (cap < d->pos + k)
			cap *= 2;
		if (cap > d->s.max)
			cap = d->s.max;
		d->cell = xreallocarray(d->cell, cap, sizeof(*d->cell));
		d->cap = cap;
	}
	for (size_t j = 0; j < k; j++) {
		struct riblt_sym c = s[j];

		rset_apply(&d->s, d->pos, &c);
		d->cell[d->pos] = c;
		if (pure(&c))
			queue_push(d, d->pos);
		d->pos++;
	}
	peel(d);
	return d->failed ? -1 : 0;
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

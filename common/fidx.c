/*
 * fidx.c: the field indexes of a space's types (space_int.h), so a
 * template with an eq condition (or a short "in" list) on a field never
 * walks the records of its type that fail it.  fifo.c keeps them in line
 * with the type's FIFO index (fidx_note) and asks them first (fidx_scan).
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "space_int.h"
#include "xmalloc.h"

#define FIDX_MAX	8	/* field indexes per type (LRU) */
#define FB_MIN		16	/* buckets of a new field index */

/*
 * ---- field indexes ----
 *
 * A template with an eq condition on field F (or a short "in" list) need
 * not walk the records of its type that fail F: a field index maps the
 * hash of each visible record's F value to that value's records, kept in
 * FIFO order, so the first visible match is the first record of the
 * operand's bucket that meets the whole template.  The hash follows
 * val_eq: numbers hash by mathematical value (1, 1.0 and a uint alike),
 * other values by type and canonical bytes; a NaN has no hash (it equals
 * nothing).  Hashes may collide, which only adds candidates: each is
 * checked against the whole template.  A record whose F is absent or NaN
 * is in no bucket, and no eq or "in" condition on F matches it.
 *
 * An index is made the first time a template asks for its (type, field)
 * and filled from the type's FIFO index, so a type never queried by
 * field pays nothing on writes; after that fifo_add / fifo_del keep it
 * exact (insert, claim, lapse, expiry, removal, collection all pass
 * there).  A type keeps at most FIDX_MAX of them (LRU); a bucket that
 * empties frees its array, and empty buckets are dropped on a rehash.
 */

static uint64_t
num_hash(uint64_t u)
{
	return XXH3_64bits_withSeed(&u, sizeof(u), 'N');
}

/* The index hash of v; false for a value no eq can match (NaN). */
static bool
val_hash(const struct val *v, uint64_t *h)
{
	double d;
	uint8_t b;

	switch (v->type) {
	case VAL_INT:
		*h = num_hash((uint64_t)v->i);
		return true;
	case VAL_UINT:
		*h = num_hash(v->u);
		return true;
	case VAL_DOUBLE:
		d = v->d;
		if (d != d)
			return false;
		if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
		    (double)(int64_t)d == d)
			*h = num_hash((uint64_t)(int64_t)d);
		else if (d >= 9223372036854775808.0 &&
		    d < 18446744073709551616.0 && (double)(uint64_t)d == d)
			*h = num_hash((uint64_t)d);
		else
			*h = XXH3_64bits_withSeed(&d, sizeof(d), 'D');
		return true;
	case VAL_NULL:
		*h = XXH3_64bits_withSeed("", 0, 'Z');
		return true;
	case VAL_BOOL:
		b = v->b ? 1 : 0;
		*h = XXH3_64bits_withSeed(&b, 1, 'b');
		return true;
	default:
		/* text, bytes, array, map: canonical bytes per type. */
		*h = XXH3_64bits_withSeed(v->ptr, v->len, 'a' + (int)v->type);
		return true;
	}
}

static int
ent_cmp(const struct entry *a, const struct entry *b)
{
	int c = hlc_cmp(&a->stamp, &b->stamp);

	if (c != 0)
		return c;
	return memcmp(a->id, b->id, ENTRY_ID_LEN);
}

/* First position in fb->r[lo..n) not before e. */
static size_t
bucket_lower(const struct fbucket *fb, const struct entry *e)
{
	size_t lo = fb->lo, hi = fb->n;

	if (fb->n > fb->lo && ent_cmp(fb->r[fb->n - 1]->e, e) < 0)
		return fb->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ent_cmp(fb->r[mid]->e, e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
bucket_add(struct fbucket *fb, struct space_rec *r)
{
	size_t i = bucket_lower(fb, r->e);

	if (i == fb->lo && fb->lo > 0) {
		fb->r[--fb->lo] = r;
		return;
	}
	if (fb->n == fb->cap) {
		if (fb->lo > 0) {
			memmove(fb->r, fb->r + fb->lo,
			    (fb->n - fb->lo) * sizeof(*fb->r));
			fb->n -= fb->lo;
			i -= fb->lo;
			fb->lo = 0;
		} else {
			fb->cap = fb->cap ? fb->cap * 2 : 4;
			fb->r = xreallocarray(fb->r, fb->cap, sizeof(*fb->r));
		}
	}
	memmove(&fb->r[i + 1], &fb->r[i], (fb->n - i) * sizeof(*fb->r));
	fb->r[i] = r;
	fb->n++;
}

/* Remove r; true when the bucket is empty after. */
static bool
bucket_del(struct fbucket *fb, const struct space_rec *r)
{
	size_t i = bucket_lower(fb, r->e);

	if (i >= fb->n || fb->r[i] != r)
		return fb->n == fb->lo;
	if (i == fb->lo)
		fb->lo++;
	else {
		memmove(&fb->r[i], &fb->r[i + 1],
		    (fb->n - i - 1) * sizeof(*fb->r));
		fb->n--;
	}
	if (fb->lo < fb->n)
		return false;
	free(fb->r);
	fb->r = NULL;
	fb->lo = fb->n = fb->cap = 0;
	return true;
}

/* The bucket of hash h: found, or (create) a new one, or NULL. */
static struct fbucket *
fidx_find(struct fidx *fx, uint64_t h, bool create)
{
	size_t mask = fx->nb - 1, i = (size_t)h & mask;

	while (fx->b[i].used) {
		if (fx->b[i].h == h)
			return &fx->b[i];
		i = (i + 1) & mask;
	}
	if (!create)
		return NULL;
	fx->b[i].used = true;
	fx->b[i].h = h;
	fx->nused++;
	fx->nempty++;
	return &fx->b[i];
}

/* Rebuild with nb buckets, dropping the empty ones. */
static void
fidx_rehash(struct fidx *fx, size_t nb)
{
	struct fbucket *old = fx->b;
	size_t oldnb = fx->nb;

	fx->b = xcalloc(nb, sizeof(*fx->b));
	fx->nb = nb;
	fx->nused = fx->nempty = 0;
	for (size_t i = 0; i < oldnb; i++) {
		struct fbucket *fb;

		if (!old[i].used || old[i].n == old[i].lo) {
			free(old[i].r);
			continue;
		}
		fb = fidx_find(fx, old[i].h, true);
		*fb = old[i];
		fx->nempty--;
	}
	free(old);
}

/* r's hash under fx; false when r is in no bucket. */
static bool
fidx_hash_of(const struct fidx *fx, const struct space_rec *r, uint64_t *h)
{
	struct val v;

	return entry_field(r->e, fx->field, fx->field_len, &v) == 1 &&
	    val_hash(&v, h);
}

static void
fidx_add(struct fidx *fx, struct space_rec *r)
{
	struct fbucket *fb;
	uint64_t h;

	if (!fidx_hash_of(fx, r, &h))
		return;
	if ((fx->nused + 1) * 2 > fx->nb)
		fidx_rehash(fx, fx->nempty * 2 > fx->nused ? fx->nb :
		    fx->nb * 2);
	fb = fidx_find(fx, h, true);
	if (fb->n == fb->lo)
		fx->nempty--;
	bucket_add(fb, r);
}

static void
fidx_del(struct fidx *fx, const struct space_rec *r)
{
	struct fbucket *fb;
	uint64_t h;

	if (!fidx_hash_of(fx, r, &h) || (fb = fidx_find(fx, h, false)) ==
	    NULL || fb->n == fb->lo)
		return;
	if (bucket_del(fb, r))
		fx->nempty++;
}

static void
fidx_clear(struct fidx *fx)
{
	for (size_t i = 0; fx->b != NULL && i < fx->nb; i++)
		free(fx->b[i].r);
	free(fx->b);
	free(fx->field);
	memset(fx, 0, sizeof(*fx));
}

/* The field index of (ty, field), made and filled (LRU slot) if new. */
static struct fidx *
fidx_get(struct space_type *ty, const char *field, size_t len)
{
	struct fidx *fx, *victim = NULL;

	if (ty->fx == NULL)
		ty->fx = xcalloc(FIDX_MAX, sizeof(*ty->fx));
	ty->tick++;
	for (size_t c = 0; c < FIDX_MAX; c++) {
		fx = &ty->fx[c];
		if (fx->field == NULL) {
			if (victim == NULL || victim->field != NULL)
				victim = fx;
			continue;
		}
		if (fx->field_len == len && memcmp(fx->field, field, len) == 0) {
			fx->used = ty->tick;
			return fx;
		}
		if (victim == NULL ||
		    (victim->field != NULL && fx->used < victim->used))
			victim = fx;
	}
	fidx_clear(victim);
	victim->field = xmemdup(field, len);
	victim->field_len = len;
	victim->used = ty->tick;
	victim->nb = FB_MIN;
	while (victim->nb < 2 * ty->live)
		victim->nb *= 2;
	victim->b = xcalloc(victim->nb, sizeof(*victim->b));
	/* FIFO order: every bucket fills by appends. */
	for (size_t i = ty->head; i < ty->n; i++)
		if (ty->s[i].rec != NULL)
			fidx_add(victim, ty->s[i].rec);
	return victim;
}

/* Keep every field index of ty in line with r entering or leaving its FIFO. */
void
fidx_note(struct space_type *ty, struct space_rec *r, bool add)
{
	for (size_t c = 0; ty->fx != NULL && c < FIDX_MAX; c++) {
		if (ty->fx[c].field == NULL)
			continue;
		if (add)
			fidx_add(&ty->fx[c], r);
		else
			fidx_del(&ty->fx[c], r);
	}
}

void
fidx_free(struct space_type *ty)
{
	for (size_t c = 0; ty->fx != NULL && c < FIDX_MAX; c++)
		fidx_clear(&ty->fx[c]);
	free(ty->fx);
	ty->fx = NULL;
}

#define FIDX_IN_MAX	16	/* "in" lists looked up per element */

/*
 * Answer t from a field index when it has an eq condition (or, for a
 * first match, a short "in" list): *out the first visible match (or the
 * one cb stopped at), *count the matches visited.  False: no condition
 * an index serves, scan instead.
 */
bool
fidx_scan(struct space_type *ty, const struct template *t,
    space_rec_cb cb, void *arg, size_t *count, struct space_rec **out)
{
	const struct template_cond *eq = NULL, *in = NULL;
	struct fidx *fx;
	struct fbucket *fb;
	uint64_t h = 0;

	*out = NULL;
	for (size_t i = 0; i < t->nconds && eq == NULL; i++) {
		const struct template_cond *c = &t->conds[i];

		if (c->op == TEMPLATE_EQ && val_hash(&c->v, &h))
			eq = c;
		else if (c->op == TEMPLATE_IN && in == NULL && cb == NULL &&
		    c->nitems <= FIDX_IN_MAX)
			in = c;
	}
	if (eq != NULL) {
		fx = fidx_get(ty, eq->field, eq->field_len);
		if ((fb = fidx_find(fx, h, false)) == NULL)
			return true;
		for (size_t i = fb->lo; i < fb->n; i++) {
			struct space_rec *r = fb->r[i];

			if (!template_match_fields(t, r->e))
				continue;
			if (count != NULL)
				(*count)++;
			if (cb == NULL || !cb(arg, r)) {
				*out = r;
				return true;
			}
		}
		return true;
	}
	if (in == NULL)
		return false;
	/* The FIFO-first of each element's first match. */
	fx = fidx_get(ty, in->field, in->field_len);
	for (size_t k = 0; k < in->nitems; k++) {
		if (!val_hash(&in->items[k], &h) ||
		    (fb = fidx_find(fx, h, false)) == NULL)
			continue;
		for (size_t i = fb->lo; i < fb->n; i++) {
			struct space_rec *r = fb->r[i];

			if (*out != NULL && ent_cmp(r->e, (*out)->e) >= 0)
				break;
			if (template_match_fields(t, r->e)) {
				*out = r;
				break;
			}
		}
	}
	return true;
}

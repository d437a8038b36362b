/*
 * space.c: the local replica of a tuple space (space.h), built on entry.c,
 * crdt.c and template.c.
 *
 * The structures:
 *  - a hash table (open addressing, linear probing) of records by id;
 *  - per type, a FIFO index: an array of slots sorted by (issue stamp,
 *    id) holding only visible records.  A record leaving the index leaves
 *    its key behind as a dead slot, so coming back (a lapsed claim) is a
 *    binary search, and `head` skips the dead prefix that taken entries
 *    leave at the front; the array is compacted when dead slots dominate;
 *  - per type, template cursors: for each of the last CUR_MAX templates
 *    with conditions scanned on that type (keyed by their canonical form,
 *    LRU), a FIFO key x such that every visible record before x fails the
 *    template (see "template cursors" below), so a selective take starts
 *    where the last one stopped instead of rescanning the records that
 *    fail it;
 *  - per type, up to FIDX_MAX field indexes, made on first use by a
 *    template with an eq (or short "in") condition on that field: value
 *    hash -> that value's visible records in FIFO order (see "field
 *    indexes" below), so such a template never walks the rest;
 *  - a min-heap of due times (lease end, claim expiry, tombstone
 *    collection) keyed by id, with stale entries skipped on pop, so
 *    expiry costs O(log n) per event rather than a scan per call.
 * rec_refresh() is the one place that turns a record's CRDT state and the
 * time into flags, index membership, events and its next due time.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "dcbor.h"
#include "space.h"
#include "xmalloc.h"

#define F_LIVE		0x01	/* present and lease running */
#define F_CLAIMED	0x02	/* live with an active claim */
#define F_DONE		0x04	/* completion seen */
#define F_INDEXED	0x08	/* in its type's FIFO index */
#define F_COMPACT	0x10	/* completed: no entry, no claim (below) */

#define TAB_MIN		64
#define COMPACT_MIN	64
#define CUR_MAX		32	/* template cursors per type */
#define CUR_PEND	8	/* records noted before a cursor, checked lazily */
#define FIDX_MAX	8	/* field indexes per type (LRU) */
#define FB_MIN		16	/* buckets of a new field index */

struct space_type;

/*
 * A completed record keeps only what the CRDT needs until its tombstone is
 * collected: its id, its dots, its lease (for the collection time) and the
 * completion.  It is then *compact*: its entry is freed and it is
 * reallocated without its claim, which is the last member of cr, itself
 * the last member here (REC_COMPACT_SIZE bytes).  So a compact record's
 * cr.claim does not exist: every reader of a claim goes through rec_claim
 * or rec_view, which give a compact record the empty claim.
 */
struct space_rec {
	struct entry		*e;		/* NULL when compact */
	struct space_type	*type;
	uint64_t		 hash;		/* digest contribution */
	uint64_t		 sched;		/* earliest due time queued */
	uint64_t		 gc_at;		/* tombstone collection time */
	unsigned		 flags;
	struct crdt_rec		 cr;		/* last: see above */
};

#define REC_COMPACT_SIZE \
	(offsetof(struct space_rec, cr) + offsetof(struct crdt_rec, claim))

static const struct crdt_claim	 no_claim;

/* r's claim, the empty one for a compact record. */
static const struct crdt_claim *
rec_claim(const struct space_rec *r)
{
	return (r->flags & F_COMPACT) ? &no_claim : &r->cr.claim;
}

/* r's CRDT record whole: itself, or for a compact one a copy (sharing its
 * dots) with the empty claim, in tmp. */
static const struct crdt_rec *
rec_view(const struct space_rec *r, struct crdt_rec *tmp)
{
	if (!(r->flags & F_COMPACT))
		return &r->cr;
	memcpy(tmp->id, r->cr.id, ENTRY_ID_LEN);
	tmp->st = r->cr.st;
	memset(&tmp->claim, 0, sizeof(tmp->claim));
	return tmp;
}

/* A position in FIFO order: (issue stamp, id). */
struct fifo_key {
	struct hlc_stamp	 stamp;
	uint8_t			 id[ENTRY_ID_LEN];
};

struct fifo_slot {
	struct fifo_key		 k;
	struct space_rec	*rec;		/* NULL: dead slot */
};

enum cur_state {
	CUR_NONE = 0,		/* nothing known yet: scan from the head */
	CUR_KEY,		/* visible records before x fail */
	CUR_END,		/* every visible record fails */
};

/* See "template cursors" below. */
struct tcursor {
	uint8_t			*canon;		/* NULL: unused */
	size_t			 canon_len;
	uint64_t		 hash;		/* XXH3-64 of canon */
	uint64_t		 used;		/* LRU tick */
	enum cur_state		 state;
	struct fifo_key		 x;
	unsigned		 npend;
	struct fifo_key		 pend[CUR_PEND];
};

/* One value hash's visible records, in FIFO order in r[lo..n). */
struct fbucket {
	uint64_t		 h;
	struct space_rec	**r;
	size_t			 lo;
	size_t			 n;
	size_t			 cap;
	bool			 used;		/* h set (maybe empty now) */
};

/* See "field indexes" below. */
struct fidx {
	char			*field;		/* NULL: unused */
	size_t			 field_len;
	uint64_t		 used;		/* LRU tick */
	struct fbucket		*b;
	size_t			 nb;		/* a power of two */
	size_t			 nused;		/* buckets with h set */
	size_t			 nempty;	/* of those, holding nothing */
};

struct space_type {
	char			 name[ENTRY_TYPE_MAX + 1];
	struct fidx		*fx;		/* FIDX_MAX, made on first use */
	struct fifo_slot	*s;
	size_t			 n;
	size_t			 cap;
	size_t			 head;		/* slots before it are dead */
	size_t			 live;
	struct tcursor		*cur;		/* CUR_MAX, made on first use */
	uint64_t		 tick;
};

struct due {
	uint64_t		 at;
	uint8_t			 id[ENTRY_ID_LEN];
};

struct space {
	uint64_t		 node;
	uint64_t		 counter;	/* of this peer's add dots */
	uint8_t			 self[IDENTITY_ID_LEN];
	size_t			 max;
	struct space_rec	**tab;
	size_t			 tabsz;		/* a power of two */
	size_t			 nrec;
	struct space_type	**types;
	size_t			 ntypes;
	struct due		*heap;
	size_t			 nheap;
	size_t			 capheap;
	uint64_t		 max_lease_ms;
	size_t			 visible;
	space_event_cb		 cb;
	void			*cbarg;
	struct dcbor_buf	 scratch;
	struct dcbor_buf	 tkey;		/* a template's canonical form */
};

static const char *const space_errnames[] = {
	"ok", "full", "exists", "noent", "expired", "dots", "already",
	"inval",
};

static const char *const space_evnames[] = {
	"written", "taken", "completed", "expired", "reappeared",
};

const char *
space_strerror(int err)
{
	if (err < 0 || (size_t)err >= sizeof(space_errnames) /
	    sizeof(space_errnames[0]))
		return "unknown";
	return space_errnames[err];
}

const char *
space_event_name(enum space_event ev)
{
	if ((size_t)ev >= sizeof(space_evnames) / sizeof(space_evnames[0]))
		return "unknown";
	return space_evnames[ev];
}

/* ---- records by id ----------------------------------------------------- */

static size_t
id_home(const uint8_t *id, size_t mask)
{
	uint64_t h;

	/* Ids are SHA-256 prefixes: their bytes are already uniform. */
	memcpy(&h, id, sizeof(h));
	return (size_t)h & mask;
}

static size_t
tab_slot(const struct space *sp, const uint8_t *id, bool *found)
{
	size_t mask = sp->tabsz - 1, i = id_home(id, mask);

	while (sp->tab[i] != NULL) {
		if (memcmp(sp->tab[i]->cr.id, id, ENTRY_ID_LEN) == 0) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
	*found = false;
	return i;
}

static void
tab_grow(struct space *sp)
{
	struct space_rec **old = sp->tab;
	size_t oldsz = sp->tabsz;
	bool found;

	sp->tabsz = oldsz * 2;
	sp->tab = xcalloc(sp->tabsz, sizeof(*sp->tab));
	for (size_t i = 0; i < oldsz; i++)
		if (old[i] != NULL)
			sp->tab[tab_slot(sp, old[i]->cr.id, &found)] = old[i];
	free(old);
}

static void
tab_insert(struct space *sp, struct space_rec *r)
{
	bool found;

	if ((sp->nrec + 1) * 2 > sp->tabsz)
		tab_grow(sp);
	sp->tab[tab_slot(sp, r->cr.id, &found)] = r;
	sp->nrec++;
}

/* Backward-shift deletion keeps probe chains whole without tombstones. */
static void
tab_delete(struct space *sp, const struct space_rec *r)
{
	size_t mask = sp->tabsz - 1, i, j, k;
	bool found;

	i = tab_slot(sp, r->cr.id, &found);
	if (!found)
		return;
	sp->tab[i] = NULL;
	sp->nrec--;
	for (j = (i + 1) & mask; sp->tab[j] != NULL; j = (j + 1) & mask) {
		k = id_home(sp->tab[j]->cr.id, mask);
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (k > i && k <= j) : (k > i || k <= j))
			continue;
		sp->tab[i] = sp->tab[j];
		sp->tab[j] = NULL;
		i = j;
	}
}

struct space_rec *
space_get(const struct space *sp, const uint8_t id[ENTRY_ID_LEN])
{
	bool found;
	size_t i = tab_slot(sp, id, &found);

	return found ? sp->tab[i] : NULL;
}

/* ---- FIFO index by type ------------------------------------------------ */

static struct space_type *
type_get(struct space *sp, const char *name, bool create)
{
	struct space_type *t;

	for (size_t i = 0; i < sp->ntypes; i++)
		if (strcmp(sp->types[i]->name, name) == 0)
			return sp->types[i];
	if (!create)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	memcpy(t->name, name, strlen(name) + 1);	/* checked by entry.c */
	sp->types = xreallocarray(sp->types, sp->ntypes + 1,
	    sizeof(*sp->types));
	sp->types[sp->ntypes++] = t;
	return t;
}

static int
key_cmp(const struct fifo_key *a, const struct fifo_key *b)
{
	int c = hlc_cmp(&a->stamp, &b->stamp);

	if (c != 0)
		return c;
	return memcmp(a->id, b->id, ENTRY_ID_LEN);
}

static void
key_of(struct fifo_key *k, const struct entry *e)
{
	k->stamp = e->stamp;
	memcpy(k->id, e->id, ENTRY_ID_LEN);
}

/* First slot not before k. */
static size_t
fifo_lower(const struct space_type *t, const struct fifo_key *k)
{
	size_t lo = 0, hi = t->n;

	/* Appends are the common case: check the end first. */
	if (t->n > 0 && key_cmp(&t->s[t->n - 1].k, k) < 0)
		return t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (key_cmp(&t->s[mid].k, k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
fifo_compact(struct space_type *t)
{
	size_t w = 0;

	for (size_t i = t->head; i < t->n; i++)
		if (t->s[i].rec != NULL)
			t->s[w++] = t->s[i];
	t->n = w;
	t->head = 0;
}

/*
 * ---- template cursors ----
 *
 * A take whose template has conditions would otherwise scan past every
 * visible record that fails them, from the oldest, on every call: the
 * records a selective take never takes pile up at the FIFO head.  A
 * cursor remembers, for one template on one type, a FIFO key x with
 *
 *   I: every visible record of the type before x fails the template
 *      (but for those noted in pend[], which are checked first).
 *
 * Fields are immutable, so a record that failed once fails for ever; what
 * changes is visibility.  A record leaving the index (claimed, completed,
 * expired) keeps I.  A record entering it before x (a remote entry older
 * than x, a lapsed claim, a renewed lease) has not been checked: fifo_add
 * notes it in pend[], or simply moves x back to it when no slot lies
 * between them, or, when pend[] is full, moves x back to the oldest noted
 * key (a rescan from there, correct by construction).  A first-match scan
 * checks the noted records, then scans from x; the first match becomes
 * the new x (it is not itself known to fail, so a read finds it again at
 * once), and no match at all makes the cursor CUR_END.  Keys, not slot
 * numbers, so compaction and inserts never move a cursor.
 */

/* The first slot a scan under cu needs to look at. */
static size_t
cursor_start(const struct space_type *t, const struct tcursor *cu)
{
	size_t i;

	switch (cu->state) {
	case CUR_END:
		return t->n;
	case CUR_KEY:
		i = fifo_lower(t, &cu->x);
		return i > t->head ? i : t->head;
	default:
		return t->head;
	}
}

/* Slot i just became visible: keep I of every cursor of t. */
static void
cursor_note(struct space_type *t, size_t i)
{
	const struct fifo_key *k = &t->s[i].k;

	if (t->cur == NULL)
		return;
	for (size_t c = 0; c < CUR_MAX; c++) {
		struct tcursor *cu = &t->cur[c];

		if (cu->canon == NULL || cu->state == CUR_NONE ||
		    (cu->state == CUR_KEY && key_cmp(k, &cu->x) >= 0))
			continue;
		if (i + 1 == t->n || (cu->state == CUR_KEY &&
		    key_cmp(&t->s[i + 1].k, &cu->x) >= 0)) {
			/* Nothing lies between: x moves back for free. */
			cu->x = *k;
			cu->state = CUR_KEY;
		} else if (cu->npend < CUR_PEND)
			cu->pend[cu->npend++] = *k;
		else {
			if (cu->state == CUR_END || key_cmp(k, &cu->x) < 0)
				cu->x = *k;
			for (unsigned p = 0; p < cu->npend; p++)
				if (key_cmp(&cu->pend[p], &cu->x) < 0)
					cu->x = cu->pend[p];
			cu->state = CUR_KEY;
			cu->npend = 0;
		}
	}
}

/* The canonical form of t's conditions (its type is the type's). */
static void
tmpl_canon(struct dcbor_buf *b, const struct template *t)
{
	dcbor_buf_reset(b);
	dcbor_put_array(b, t->nconds * 3);
	for (size_t i = 0; i < t->nconds; i++) {
		const struct template_cond *c = &t->conds[i];

		dcbor_put_uint(b, (uint64_t)c->op);
		dcbor_put_text(b, c->field, c->field_len);
		dcbor_put_bytes(b, c->operand != NULL ? c->operand :
		    (const uint8_t *)"", c->operand_len);
	}
}

/* The cursor of t on type ty, made (in the LRU slot) if new. */
static struct tcursor *
cursor_get(struct space *sp, struct space_type *ty, const struct template *t)
{
	struct tcursor *cu, *victim = NULL;
	uint64_t h;

	tmpl_canon(&sp->tkey, t);
	h = XXH3_64bits(sp->tkey.data, sp->tkey.len);
	if (ty->cur == NULL)
		ty->cur = xcalloc(CUR_MAX, sizeof(*ty->cur));
	ty->tick++;
	for (size_t c = 0; c < CUR_MAX; c++) {
		cu = &ty->cur[c];
		if (cu->canon == NULL) {
			if (victim == NULL || victim->canon != NULL)
				victim = cu;
			continue;
		}
		if (cu->hash == h && cu->canon_len == sp->tkey.len &&
		    memcmp(cu->canon, sp->tkey.data, sp->tkey.len) == 0) {
			cu->used = ty->tick;
			return cu;
		}
		if (victim == NULL ||
		    (victim->canon != NULL && cu->used < victim->used))
			victim = cu;
	}
	free(victim->canon);
	memset(victim, 0, sizeof(*victim));
	victim->canon = xmemdup(sp->tkey.data, sp->tkey.len);
	victim->canon_len = sp->tkey.len;
	victim->hash = h;
	victim->used = ty->tick;
	victim->state = CUR_NONE;
	return victim;
}

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

/* Keep every field index of r's type in line with r entering the FIFO. */
static void
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

static void
fifo_add(struct space *sp, struct space_rec *r)
{
	struct space_type *t = r->type;
	struct fifo_key k;
	size_t i;

	key_of(&k, r->e);
	i = fifo_lower(t, &k);
	if (i < t->n && key_cmp(&t->s[i].k, &k) == 0)
		t->s[i].rec = r;		/* its dead slot is still there */
	else {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 16;
			t->s = xreallocarray(t->s, t->cap, sizeof(*t->s));
		}
		memmove(&t->s[i + 1], &t->s[i], (t->n - i) * sizeof(*t->s));
		t->s[i].k = k;
		t->s[i].rec = r;
		t->n++;
	}
	if (i < t->head)
		t->head = i;
	t->live++;
	sp->visible++;
	r->flags |= F_INDEXED;
	cursor_note(t, i);
	fidx_note(t, r, true);
}

static void
fifo_del(struct space *sp, struct space_rec *r)
{
	struct space_type *t = r->type;
	struct fifo_key k;
	size_t i;

	key_of(&k, r->e);
	i = fifo_lower(t, &k);
	if (i >= t->n || t->s[i].rec != r)
		return;
	t->s[i].rec = NULL;
	t->live--;
	sp->visible--;
	r->flags &= ~F_INDEXED;
	fidx_note(t, r, false);
	while (t->head < t->n && t->s[t->head].rec == NULL)
		t->head++;
	if (t->n - t->live > COMPACT_MIN && t->n - t->live > t->live)
		fifo_compact(t);
}

/* ---- due times --------------------------------------------------------- */

static void
heap_push(struct space *sp, uint64_t at, const uint8_t *id)
{
	size_t i;

	if (sp->nheap == sp->capheap) {
		sp->capheap = sp->capheap ? sp->capheap * 2 : 64;
		sp->heap = xreallocarray(sp->heap, sp->capheap,
		    sizeof(*sp->heap));
	}
	i = sp->nheap++;
	while (i > 0 && sp->heap[(i - 1) / 2].at > at) {
		sp->heap[i] = sp->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	sp->heap[i].at = at;
	memcpy(sp->heap[i].id, id, ENTRY_ID_LEN);
}

static struct due
heap_pop(struct space *sp)
{
	struct due top = sp->heap[0], last = sp->heap[--sp->nheap];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < sp->nheap) {
		if (c + 1 < sp->nheap && sp->heap[c + 1].at < sp->heap[c].at)
			c++;
		if (sp->heap[c].at >= last.at)
			break;
		sp->heap[i] = sp->heap[c];
		i = c;
	}
	if (sp->nheap > 0)
		sp->heap[i] = last;
	return top;
}

static void
schedule(struct space *sp, struct space_rec *r, uint64_t at)
{
	if (at == 0 || at == UINT64_MAX)
		return;
	if (r->sched != 0 && r->sched <= at)
		return;		/* an earlier wake-up will look again */
	r->sched = at;
	heap_push(sp, at, r->cr.id);
}

/* ---- record life ------------------------------------------------------- */

static uint64_t
retention_ms(uint64_t max_lease)
{
	if (max_lease > SPACE_RETENTION_MAX_MS / 2)
		return SPACE_RETENTION_MAX_MS;
	return 2 * max_lease;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void
emit(struct space *sp, enum space_event ev, const struct space_rec *r)
{
	if (sp->cb != NULL)
		sp->cb(sp->cbarg, ev, r);
}

static void
rec_rehash(struct space *sp, struct space_rec *r)
{
	struct crdt_rec tmp;

	dcbor_buf_reset(&sp->scratch);
	crdt_rec_encode(&sp->scratch, rec_view(r, &tmp));
	r->hash = XXH3_64bits(sp->scratch.data, sp->scratch.len);
}

/*
 * Bring flags, index membership, events and the next due time of r in
 * line with its state at now.  dirty: the CRDT record changed.
 */
static void
rec_refresh(struct space *sp, struct space_rec *r, uint64_t now,
    bool dirty)
{
	const struct crdt_state *st = &r->cr.st;
	bool done = st->completed;
	bool live = crdt_state_present(st) && now < st->lease.expires_ms;
	bool claimed = live && crdt_claim_active(rec_claim(r), now);
	bool want = live && !claimed;
	uint64_t next;

	if (dirty)
		rec_rehash(sp, r);
	if (want && !(r->flags & F_INDEXED))
		fifo_add(sp, r);
	else if (!want && (r->flags & F_INDEXED))
		fifo_del(sp, r);

	if (live && !(r->flags & F_LIVE))
		emit(sp, SPACE_EV_WRITTEN, r);
	if (claimed && !(r->flags & F_CLAIMED))
		emit(sp, SPACE_EV_TAKEN, r);
	if (!claimed && (r->flags & F_CLAIMED) && live)
		emit(sp, SPACE_EV_REAPPEARED, r);
	if (done && !(r->flags & F_DONE))
		emit(sp, SPACE_EV_COMPLETED, r);
	if (!live && (r->flags & F_LIVE) && !done)
		emit(sp, SPACE_EV_EXPIRED, r);
	r->flags = (r->flags & (F_INDEXED | F_COMPACT)) | (live ? F_LIVE : 0) |
	    (claimed ? F_CLAIMED : 0) | (done ? F_DONE : 0);

	if (live) {
		r->gc_at = 0;
		next = st->lease.expires_ms;
		if (claimed && r->cr.claim.expiry_ms < next)
			next = r->cr.claim.expiry_ms;
	} else {
		/* Outlive the lease, so no stale copy can bring it back. */
		r->gc_at = sat_add(st->lease.expires_ms,
		    retention_ms(sp->max_lease_ms));
		if (r->gc_at <= now)
			r->gc_at = now + 1;
		next = r->gc_at;
		/* Compacted at the next call (pointers stay valid till then). */
		if (done && !(r->flags & F_COMPACT))
			next = now;
	}
	schedule(sp, r, next);
}

/*
 * r, completed, as a compact record (see struct space_rec): a new, smaller
 * allocation in r's table slot; r is freed.  Returns the new record.
 */
static struct space_rec *
rec_compact(struct space *sp, struct space_rec *r)
{
	struct space_rec *c = xcalloc(1, REC_COMPACT_SIZE);
	bool found;
	size_t slot = tab_slot(sp, r->cr.id, &found);

	c->type = r->type;
	c->gc_at = r->gc_at;
	c->flags = (r->flags & ~(unsigned)(F_INDEXED | F_CLAIMED)) | F_COMPACT;
	memcpy(c->cr.id, r->cr.id, ENTRY_ID_LEN);
	c->cr.st = r->cr.st;		/* the dots move over */
	sp->tab[slot] = c;
	entry_free(r->e);
	free(r);
	rec_rehash(sp, c);
	return c;
}

static void
rec_destroy(struct space_rec *r)
{
	entry_free(r->e);
	crdt_state_free(&r->cr.st);	/* all a record owns (crdt_rec_free) */
	free(r);
}

static void
rec_collect(struct space *sp, struct space_rec *r)
{
	if (r->flags & F_INDEXED)
		fifo_del(sp, r);
	tab_delete(sp, r);
	rec_destroy(r);
}

/* Run everything due by now. */
static void
advance(struct space *sp, uint64_t now)
{
	while (sp->nheap > 0 && sp->heap[0].at <= now) {
		struct due d = heap_pop(sp);
		struct space_rec *r = space_get(sp, d.id);

		if (r == NULL || r->sched != d.at)
			continue;		/* stale */
		r->sched = 0;
		if (!(r->flags & F_LIVE) && r->gc_at != 0 && r->gc_at <= now)
			rec_collect(sp, r);
		else if ((r->flags & F_DONE) && !(r->flags & F_COMPACT))
			rec_refresh(sp, rec_compact(sp, r), now, false);
		else
			rec_refresh(sp, r, now, false);
	}
	/* Stale entries pile up under heavy renewal: rebuild when they rule. */
	if (sp->nheap > 4 * sp->nrec + 1024) {
		size_t n = 0;

		for (size_t i = 0; i < sp->nheap; i++) {
			struct space_rec *r = space_get(sp, sp->heap[i].id);

			if (r != NULL && r->sched == sp->heap[i].at)
				sp->heap[n++] = sp->heap[i];
		}
		sp->nheap = 0;
		for (size_t i = 0; i < n; i++) {
			struct due d = sp->heap[i];

			heap_push(sp, d.at, d.id);
		}
	}
}

/* Insert a new record built around e and run its first refresh. */
static void
rec_insert(struct space *sp, struct space_rec *r, uint64_t now)
{
	r->type = type_get(sp, r->e->type, true);
	if (r->e->lease_ms > sp->max_lease_ms)
		sp->max_lease_ms = r->e->lease_ms;
	tab_insert(sp, r);
	rec_refresh(sp, r, now, true);
}

/*
 * A completed record known only as such (a peer sent it compact): held as
 * a compact tombstone, with no entry, no event and no claim.
 */
static int
rec_insert_compact(struct space *sp, const struct crdt_rec *cr, uint64_t now)
{
	struct space_rec *r;

	if (sp->nrec >= sp->max)
		return SPACE_EFULL;
	if (now >= sat_add(cr->st.lease.expires_ms,
	    retention_ms(sp->max_lease_ms)))
		return SPACE_EEXPIRED;
	r = xcalloc(1, REC_COMPACT_SIZE);
	memcpy(r->cr.id, cr->id, ENTRY_ID_LEN);
	crdt_state_init(&r->cr.st);
	crdt_state_copy(&r->cr.st, &cr->st);
	r->flags = F_COMPACT | F_DONE;	/* never seen live: no COMPLETED */
	tab_insert(sp, r);
	rec_refresh(sp, r, now, true);
	return SPACE_OK;
}

/* ---- public ------------------------------------------------------------ */

struct space *
space_new(uint64_t node, const uint8_t self[IDENTITY_ID_LEN],
    size_t max_entries)
{
	struct space *sp = xcalloc(1, sizeof(*sp));

	sp->node = node;
	memcpy(sp->self, self, IDENTITY_ID_LEN);
	sp->max = max_entries;
	sp->tabsz = TAB_MIN;
	sp->tab = xcalloc(sp->tabsz, sizeof(*sp->tab));
	dcbor_buf_init(&sp->scratch);
	dcbor_buf_init(&sp->tkey);
	return sp;
}

void
space_free(struct space *sp)
{
	if (sp == NULL)
		return;
	for (size_t i = 0; i < sp->tabsz; i++)
		if (sp->tab[i] != NULL)
			rec_destroy(sp->tab[i]);
	free(sp->tab);
	for (size_t i = 0; i < sp->ntypes; i++) {
		struct space_type *t = sp->types[i];

		for (size_t c = 0; t->cur != NULL && c < CUR_MAX; c++)
			free(t->cur[c].canon);
		free(t->cur);
		for (size_t c = 0; t->fx != NULL && c < FIDX_MAX; c++)
			fidx_clear(&t->fx[c]);
		free(t->fx);
		free(t->s);
		free(t);
	}
	free(sp->types);
	free(sp->heap);
	dcbor_buf_free(&sp->scratch);
	dcbor_buf_free(&sp->tkey);
	free(sp);
}

void
space_set_event_cb(struct space *sp, space_event_cb cb, void *arg)
{
	sp->cb = cb;
	sp->cbarg = arg;
}

int
space_write(struct space *sp, struct entry *e, uint64_t now_ms)
{
	struct space_rec *r;
	uint64_t expires = entry_expires_ms(e);

	advance(sp, now_ms);
	if (space_get(sp, e->id) != NULL) {
		entry_free(e);
		return SPACE_EEXISTS;
	}
	if (sp->nrec >= sp->max) {
		entry_free(e);
		return SPACE_EFULL;
	}
	if (expires <= now_ms) {
		entry_free(e);
		return SPACE_EEXPIRED;
	}
	r = xcalloc(1, sizeof(*r));
	r->e = e;
	crdt_rec_init(&r->cr, e->id);
	(void)crdt_state_add(&r->cr.st, sp->node, ++sp->counter);
	crdt_state_lease(&r->cr.st, &e->stamp, expires);
	rec_insert(sp, r, now_ms);
	return SPACE_OK;
}

int
space_merge(struct space *sp, struct entry *e, const struct crdt_rec *cr,
    uint64_t now_ms)
{
	struct space_rec *r;
	uint64_t maxl;

	advance(sp, now_ms);
	if ((r = space_get(sp, cr->id)) != NULL) {
		entry_free(e);
		if (r->flags & F_COMPACT) {
			/* Completed: a claim no longer matters. */
			if (!crdt_state_would_change(&r->cr.st, &cr->st))
				return SPACE_OK;
			if (crdt_state_merge(&r->cr.st, &cr->st) != CRDT_OK)
				return SPACE_EDOTS;
		} else {
			if (!crdt_rec_would_change(&r->cr, cr))
				return SPACE_OK;
			if (crdt_rec_merge(&r->cr, cr) != CRDT_OK)
				return SPACE_EDOTS;
		}
		rec_refresh(sp, r, now_ms, true);
		return SPACE_OK;
	}
	if (e == NULL && cr->st.completed)
		return rec_insert_compact(sp, cr, now_ms);
	if (e == NULL)
		return SPACE_ENOENT;
	if (memcmp(e->id, cr->id, ENTRY_ID_LEN) != 0) {
		entry_free(e);
		return SPACE_EINVAL;
	}
	if (sp->nrec >= sp->max) {
		entry_free(e);
		return SPACE_EFULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->e = e;
	crdt_rec_init(&r->cr, e->id);
	r->cr.claim = cr->claim;
	crdt_state_copy(&r->cr.st, &cr->st);
	/* The entry's own lease is the register's first write everywhere. */
	crdt_state_lease(&r->cr.st, &e->stamp, entry_expires_ms(e));
	maxl = e->lease_ms > sp->max_lease_ms ? e->lease_ms : sp->max_lease_ms;
	if (now_ms >= sat_add(r->cr.st.lease.expires_ms,
	    retention_ms(maxl))) {
		rec_destroy(r);
		return SPACE_EEXPIRED;
	}
	rec_insert(sp, r, now_ms);
	return SPACE_OK;
}

size_t
space_count(const struct space *sp)
{
	return sp->nrec;
}

size_t
space_visible_count(const struct space *sp)
{
	return sp->visible;
}

void
space_foreach(const struct space *sp, space_rec_cb cb, void *arg)
{
	for (size_t i = 0; i < sp->tabsz; i++)
		if (sp->tab[i] != NULL && !cb(arg, sp->tab[i]))
			return;
}

void
space_sweep(struct space *sp, uint64_t now_ms)
{
	advance(sp, now_ms);
}

#define FIDX_IN_MAX	16	/* "in" lists looked up per element */

/*
 * Answer t from a field index when it has an eq condition (or, for a
 * first match, a short "in" list): *out the first visible match (or the
 * one cb stopped at), *count the matches visited.  False: no condition
 * an index serves, scan instead.
 */
static bool
scan_indexed(struct space_type *ty, const struct template *t,
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

/* The first visible match of t (with conditions) under cursor cu. */
static struct space_rec *
scan_first(struct space_type *ty, const struct template *t,
    struct tcursor *cu)
{
	struct space_rec *best = NULL;
	struct fifo_key bk;
	size_t i;

	/* Records that became visible before x since it was set. */
	for (unsigned p = 0; p < cu->npend; p++) {
		const struct fifo_key *k = &cu->pend[p];

		if ((cu->state == CUR_KEY && key_cmp(k, &cu->x) >= 0) ||
		    (best != NULL && key_cmp(k, &bk) >= 0))
			continue;
		i = fifo_lower(ty, k);
		if (i >= ty->n || ty->s[i].rec == NULL ||
		    key_cmp(&ty->s[i].k, k) != 0 ||
		    !template_match_fields(t, ty->s[i].rec->e))
			continue;
		best = ty->s[i].rec;
		bk = *k;
	}
	cu->npend = 0;
	if (best != NULL) {
		cu->x = bk;
		cu->state = CUR_KEY;
		return best;
	}
	for (i = cursor_start(ty, cu); i < ty->n; i++) {
		struct space_rec *r = ty->s[i].rec;

		if (r != NULL && template_match_fields(t, r->e)) {
			cu->x = ty->s[i].k;
			cu->state = CUR_KEY;
			return r;
		}
	}
	cu->state = CUR_END;
	return NULL;
}

/* Visit visible matches of t in FIFO order until cb says stop. */
static struct space_rec *
scan(struct space *sp, const struct template *t, uint64_t now,
    space_rec_cb cb, void *arg, size_t *count)
{
	struct space_type *ty;
	struct tcursor *cu = NULL;
	bool first = true;
	size_t i = 0;

	advance(sp, now);
	if ((ty = type_get(sp, t->type, false)) == NULL)
		return NULL;
	if (t->nconds > 0) {
		struct space_rec *r;

		if (scan_indexed(ty, t, cb, arg, count, &r))
			return r;
		cu = cursor_get(sp, ty, t);
		if (cb == NULL)
			return scan_first(ty, t, cu);
		/* Every match is wanted: fold the noted records into x. */
		for (unsigned p = 0; p < cu->npend; p++)
			if (cu->state == CUR_END ||
			    key_cmp(&cu->pend[p], &cu->x) < 0) {
				cu->x = cu->pend[p];
				cu->state = CUR_KEY;
			}
		cu->npend = 0;
		i = cursor_start(ty, cu);
	} else
		i = ty->head;
	for (; i < ty->n; i++) {
		struct space_rec *r = ty->s[i].rec;

		if (r == NULL || !template_match_fields(t, r->e))
			continue;
		if (cu != NULL && first) {
			cu->x = ty->s[i].k;
			cu->state = CUR_KEY;
		}
		first = false;
		if (count != NULL)
			(*count)++;
		if (cb == NULL || !cb(arg, r))
			return r;
	}
	if (cu != NULL && first)
		cu->state = CUR_END;
	return NULL;
}

struct space_rec *
space_read(struct space *sp, const struct template *t, uint64_t now_ms)
{
	return scan(sp, t, now_ms, NULL, NULL, NULL);
}

size_t
space_read_all(struct space *sp, const struct template *t, uint64_t now_ms,
    space_rec_cb cb, void *arg)
{
	size_t n = 0;

	(void)scan(sp, t, now_ms, cb, arg, &n);
	return n;
}

struct space_rec *
space_take_candidate(struct space *sp, const struct template *t,
    uint64_t now_ms)
{
	/* The index holds no claimed record: visible is claimable. */
	return scan(sp, t, now_ms, NULL, NULL, NULL);
}

void
space_claim_make(const struct space *sp, const struct space_rec *r,
    const struct hlc_stamp *stamp, uint64_t now_ms, uint64_t take_ms,
    struct crdt_claim *out)
{
	memset(out, 0, sizeof(*out));
	out->epoch = r->cr.claim.epoch + 1;
	out->bid = 0;
	out->stamp = *stamp;
	memcpy(out->holder, sp->self, IDENTITY_ID_LEN);
	out->expiry_ms = sat_add(now_ms, take_ms);
}

int
space_claim(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
    const struct crdt_claim *c, uint64_t now_ms)
{
	struct space_rec *r;

	advance(sp, now_ms);
	if ((r = space_get(sp, id)) == NULL)
		return SPACE_ENOENT;
	if (r->flags & F_COMPACT)
		return SPACE_EALREADY;		/* completed: nothing to claim */
	if (crdt_claim_merge(&r->cr.claim, c) == &r->cr.claim)
		return SPACE_OK;
	r->cr.claim = *c;
	rec_refresh(sp, r, now_ms, true);
	return SPACE_OK;
}

const struct crdt_claim *
space_winner(const struct space *sp, const uint8_t id[ENTRY_ID_LEN])
{
	const struct space_rec *r = space_get(sp, id);

	return r != NULL ? rec_claim(r) : NULL;
}

bool
space_won(const struct space *sp, const uint8_t id[ENTRY_ID_LEN],
    uint64_t epoch, uint64_t now_ms)
{
	const struct crdt_claim *c = space_winner(sp, id);

	return c != NULL && c->epoch == epoch &&
	    memcmp(c->holder, sp->self, IDENTITY_ID_LEN) == 0 &&
	    crdt_claim_active(c, now_ms);
}

struct space_rec *
space_take_local(struct space *sp, const struct template *t,
    const struct hlc_stamp *stamp, uint64_t now_ms, uint64_t take_ms)
{
	struct space_rec *r;
	struct crdt_claim c;

	if ((r = space_take_candidate(sp, t, now_ms)) == NULL)
		return NULL;
	space_claim_make(sp, r, stamp, now_ms, take_ms, &c);
	r->cr.claim = *crdt_claim_merge(&r->cr.claim, &c);
	rec_refresh(sp, r, now_ms, true);
	return r;
}

int
space_complete(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
    uint64_t now_ms)
{
	struct space_rec *r;

	advance(sp, now_ms);
	if ((r = space_get(sp, id)) == NULL)
		return SPACE_ENOENT;
	if (r->cr.st.completed)
		return SPACE_EALREADY;
	crdt_state_complete(&r->cr.st);
	rec_refresh(sp, r, now_ms, true);
	return SPACE_OK;
}

int
space_lease(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
    const struct hlc_stamp *stamp, uint64_t expires_ms, uint64_t now_ms)
{
	struct space_rec *r;
	struct crdt_lease old;

	advance(sp, now_ms);
	if ((r = space_get(sp, id)) == NULL)
		return SPACE_ENOENT;
	old = r->cr.st.lease;
	crdt_state_lease(&r->cr.st, stamp, expires_ms);
	/* Field by field: a stamp has padding, which memcmp would read. */
	if (hlc_cmp(&old.stamp, &r->cr.st.lease.stamp) != 0 ||
	    old.expires_ms != r->cr.st.lease.expires_ms)
		rec_refresh(sp, r, now_ms, true);
	return SPACE_OK;
}

int
space_remove(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
    uint64_t now_ms)
{
	struct space_rec *r;

	advance(sp, now_ms);
	if ((r = space_get(sp, id)) == NULL)
		return SPACE_ENOENT;
	if (crdt_state_remove(&r->cr.st) != CRDT_OK)
		return SPACE_EDOTS;
	rec_refresh(sp, r, now_ms, true);
	return SPACE_OK;
}

/* ---- anti-entropy ------------------------------------------------------ */

uint32_t
space_bucket_of(const uint8_t id[ENTRY_ID_LEN], uint32_t nbuckets)
{
	uint32_t h = (uint32_t)id[0] << 24 | (uint32_t)id[1] << 16 |
	    (uint32_t)id[2] << 8 | id[3];

	return nbuckets > 0 ? h % nbuckets : 0;
}

void
space_digest(const struct space *sp, uint32_t nbuckets, uint64_t *out)
{
	memset(out, 0, nbuckets * sizeof(*out));
	if (nbuckets == 0)
		return;
	for (size_t i = 0; i < sp->tabsz; i++) {
		const struct space_rec *r = sp->tab[i];

		if (r != NULL)
			out[space_bucket_of(r->cr.id, nbuckets)] += r->hash;
	}
}

void
space_foreach_bucket(const struct space *sp, uint32_t nbuckets,
    const uint32_t *buckets, size_t nb, space_rec_cb cb, void *arg)
{
	uint8_t *want;

	if (nbuckets == 0 || nb == 0)
		return;
	want = xcalloc(nbuckets, 1);
	for (size_t i = 0; i < nb; i++)
		if (buckets[i] < nbuckets)
			want[buckets[i]] = 1;
	for (size_t i = 0; i < sp->tabsz; i++) {
		const struct space_rec *r = sp->tab[i];

		if (r != NULL && want[space_bucket_of(r->cr.id, nbuckets)] &&
		    !cb(arg, r))
			break;
	}
	free(want);
}

void
space_rec_encode(struct dcbor_buf *b, const struct space_rec *r)
{
	struct crdt_rec tmp;

	/* Canonical order: "rec" < "entry". */
	dcbor_put_map(b, 2);
	dcbor_put_cstr(b, "rec");
	crdt_rec_encode(b, rec_view(r, &tmp));
	dcbor_put_cstr(b, "entry");
	if (r->e != NULL)
		entry_encode(b, r->e);
	else
		dcbor_put_null(b);	/* compact: completed, entry dropped */
}

int
space_rec_decode(struct dcbor_rd *rd, struct entry **e, struct crdt_rec *cr)
{
	uint64_t n;

	*e = NULL;
	if (dcbor_get_map(rd, &n) == -1 || n != 2 ||
	    dcbor_get_key(rd, "rec") == -1 || crdt_rec_decode(rd, cr) == -1 ||
	    dcbor_get_key(rd, "entry") == -1)
		return -1;
	/* A completed record may come without its entry (a tombstone). */
	if (dcbor_take_null(rd)) {
		if (!cr->st.completed) {
			rd->err = DCBOR_ETYPE;
			return -1;
		}
		return 0;
	}
	if (entry_decode(rd, e) != ENTRY_OK)
		return -1;
	/*
	 * One record is one entry with its state.  A state under another id
	 * would be merged into that id's record on the strength of this
	 * entry's signature (and a claim signed for this entry with it).
	 */
	if (memcmp((*e)->id, cr->id, ENTRY_ID_LEN) != 0) {
		entry_free(*e);
		*e = NULL;
		rd->err = DCBOR_ETYPE;
		return -1;
	}
	return 0;
}

const struct entry *
space_rec_entry(const struct space_rec *r)
{
	return r->e;
}

const struct crdt_state *
space_rec_state(const struct space_rec *r)
{
	return &r->cr.st;
}

const struct crdt_claim *
space_rec_claim(const struct space_rec *r)
{
	return rec_claim(r);
}

const uint8_t *
space_rec_id(const struct space_rec *r)
{
	return r->cr.id;
}

uint64_t
space_rec_hash(const struct space_rec *r)
{
	return r->hash;
}

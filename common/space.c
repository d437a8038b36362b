/*
 * space.c: the local replica of a tuple space (space.h), built on entry.c,
 * crdt.c and template.c.
 *
 * The structures (space_int.h):
 *  - a hash table (open addressing, linear probing) of records by id
 *    (here);
 *  - per type, a FIFO index of the visible records and its template
 *    cursors (fifo.c), and up to 8 field indexes (fidx.c);
 *  - a min-heap of due times (lease end, claim expiry, tombstone
 *    collection) keyed by id, with stale entries skipped on pop, so
 *    expiry costs O(log n) per event rather than a scan per call (here);
 *  - packed compact records (struct space_crec) in slabs, and their
 *    collection heap by lease end, apart from the due times (here).
 * rec_refresh() is the one place that turns a record's CRDT state and the
 * time into flags, index membership, events and its next due time; a
 * packed record has no flags to turn, and changes form only in
 * rec_compact() (to packed) and rec_widen() (back to a struct space_rec).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "space_int.h"
#include "u64.h"
#include "xmalloc.h"

#define TAB_MIN		64

_Static_assert(offsetof(struct space_rec, flags) == 0 &&
    offsetof(struct space_crec, flags) == 0 &&
    sizeof(((struct space_rec *)0)->flags) == sizeof(uint32_t),
    "a record's form is told by its first word");
_Static_assert(sizeof(struct space_crec) == 64, "a packed record is 64 B");

static const struct crdt_claim	 no_claim;

/* A packed record's CRDT record, built on demand: the dot lives here. */
struct rec_tmp {
	struct crdt_rec		 cr;
	struct crdt_dot		 dot;
};

/*
 * The flags of r in either form.  Read as bytes: a packed record is not a
 * struct space_rec, so its first word must not be read through one.
 */
static unsigned
rec_flags(const struct space_rec *r)
{
	uint32_t f;

	memcpy(&f, r, sizeof(f));
	return f;
}

static bool
rec_packed(const struct space_rec *r)
{
	return (rec_flags(r) & F_PACKED) != 0;
}

static struct space_crec *
crec(const struct space_rec *r)
{
	return (struct space_crec *)(uintptr_t)r;
}

static const uint8_t *
rec_id(const struct space_rec *r)
{
	return rec_packed(r) ? crec(r)->id : r->cr.id;
}

/* r's claim, the empty one for a compact record. */
static const struct crdt_claim *
rec_claim(const struct space_rec *r)
{
	return (rec_flags(r) & F_COMPACT) ? &no_claim : &r->cr.claim;
}

/* r's CRDT record whole: itself (a compact one's claim is all zero), or a
 * packed one's, unpacked into tmp (valid while tmp is). */
static const struct crdt_rec *
rec_view(const struct space_rec *r, struct rec_tmp *tmp)
{
	const struct space_crec *c = crec(r);
	struct crdt_state *st = &tmp->cr.st;

	if (!rec_packed(r))
		return &r->cr;
	memset(tmp, 0, sizeof(*tmp));
	memcpy(tmp->cr.id, c->id, ENTRY_ID_LEN);
	tmp->dot.node = c->node;
	tmp->dot.counter = c->add;
	st->adds.d = &tmp->dot;
	st->adds.n = st->adds.cap = 1;
	st->lease.stamp.phys = c->phys;
	st->lease.stamp.logical = c->logical;
	st->lease.stamp.node = c->node;
	st->lease.expires_ms = c->expires_ms;
	st->completed = true;
	return &tmp->cr;
}

/* st is what a packed record holds, exactly (rec_view gives it back). */
static bool
state_packs(const struct crdt_state *st)
{
	return st->completed && st->adds.n == 1 && st->rems.n == 0 &&
	    st->adds.d[0].counter <= UINT32_MAX &&
	    st->lease.stamp.node == st->adds.d[0].node;
}

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
		if (memcmp(rec_id(sp->tab[i]), id, ENTRY_ID_LEN) == 0) {
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
			sp->tab[tab_slot(sp, rec_id(old[i]), &found)] = old[i];
	free(old);
}

static void
tab_insert(struct space *sp, struct space_rec *r)
{
	bool found;

	if ((sp->nrec + 1) * 2 > sp->tabsz)
		tab_grow(sp);
	sp->tab[tab_slot(sp, rec_id(r), &found)] = r;
	sp->nrec++;
}

/* Backward-shift deletion keeps probe chains whole without tombstones. */
static void
tab_delete(struct space *sp, const struct space_rec *r)
{
	size_t mask = sp->tabsz - 1, i, j, k;
	bool found;

	i = tab_slot(sp, rec_id(r), &found);
	if (!found)
		return;
	sp->tab[i] = NULL;
	sp->nrec--;
	for (j = (i + 1) & mask; sp->tab[j] != NULL; j = (j + 1) & mask) {
		k = id_home(rec_id(sp->tab[j]), mask);
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


/* ---- due times --------------------------------------------------------- */

static void
heap_push(struct space *sp, uint64_t at, const uint8_t *id)
{
	size_t i;

	if (sp->nheap == sp->capheap) {
		sp->capheap += sp->capheap / 2 + 64;
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

/* The record that due time d is for, or NULL when d is stale. */
static struct space_rec *
due_rec(const struct space *sp, const struct due *d)
{
	struct space_rec *r = space_get(sp, d->id);

	return r != NULL && !rec_packed(r) && r->sched == d->at ? r : NULL;
}

/*
 * Drop the stale entries once they are a third of the heap.  A completed
 * record leaves two behind (its lease end, its claim's expiry) and, once
 * packed, its collection moves to the collection heap, so without this
 * the heap held three entries a record for as long as the record lives (a
 * 10-minute soak: 105 of the 295 bytes a completed entry cost).  Counted
 * against the records not packed, the only ones with a due time here.
 * Amortised O(log n) a push: a rebuild keeps at most that many entries and
 * runs again only after half as many + 1024 more.  The array shrinks with
 * it.
 */
static void
heap_prune(struct space *sp)
{
	size_t n = 0, cap, nfull = sp->nrec - sp->ngc;

	if (sp->nheap <= nfull + nfull / 2 + 1024)
		return;
	for (size_t i = 0; i < sp->nheap; i++) {
		if (due_rec(sp, &sp->heap[i]) != NULL)
			sp->heap[n++] = sp->heap[i];
	}
	sp->nheap = 0;
	for (size_t i = 0; i < n; i++) {
		struct due d = sp->heap[i];

		heap_push(sp, d.at, d.id);
	}
	cap = n + n / 2 + 64;
	if (cap < sp->capheap) {
		sp->heap = xreallocarray(sp->heap, cap, sizeof(*sp->heap));
		sp->capheap = cap;
	}
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
	heap_prune(sp);
}

/* ---- record life ------------------------------------------------------- */

static uint64_t
retention_ms(uint64_t max_lease)
{
	if (max_lease > SPACE_RETENTION_MAX_MS / 2)
		return SPACE_RETENTION_MAX_MS;
	return 2 * max_lease;
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
	struct rec_tmp tmp;
	uint64_t h;

	dcbor_buf_reset(&sp->scratch);
	crdt_rec_encode(&sp->scratch, rec_view(r, &tmp));
	h = XXH3_64bits(sp->scratch.data, sp->scratch.len);
	if (rec_packed(r))
		crec(r)->hash = h;
	else
		r->hash = h;
}

static uint64_t
rec_hash(const struct space_rec *r)
{
	return rec_packed(r) ? crec(r)->hash : r->hash;
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
		r->gc_at = u64_sat_add(st->lease.expires_ms,
		    retention_ms(sp->max_lease_ms));
		if (r->gc_at <= now)
			r->gc_at = now + 1;
		next = r->gc_at;
		/* Compacted or packed at the next call (pointers stay valid
		 * till then). */
		if (done && (!(r->flags & F_COMPACT) || state_packs(st)))
			next = now;
	}
	schedule(sp, r, next);
}

/*
 * Packed records live in slabs of SLAB_RECS slots, apart from the heap
 * that every frame, entry and full record churns through: a completed
 * record outlives thousands of those, and in the general heap each would
 * pin the page its short-lived neighbours freed (a 10-minute soak's RSS
 * grew by twice its live heap that way).  A freed slot goes on a list
 * that the next packed record takes; slabs go with the space.
 */
#define SLAB_RECS	1024
#define SLOT_SIZE	sizeof(struct space_crec)

static struct space_crec *
compact_alloc(struct space *sp)
{
	uint8_t *p;

	if (sp->cfree != NULL) {
		p = sp->cfree;
		memcpy(&sp->cfree, p, sizeof(sp->cfree));
	} else {
		if (sp->nslabs == 0 || sp->slab_used == SLAB_RECS) {
			sp->slabs = xreallocarray(sp->slabs, sp->nslabs + 1,
			    sizeof(*sp->slabs));
			sp->slabs[sp->nslabs++] = xmalloc(SLAB_RECS * SLOT_SIZE);
			sp->slab_used = 0;
		}
		p = sp->slabs[sp->nslabs - 1] + sp->slab_used++ * SLOT_SIZE;
	}
	memset(p, 0, SLOT_SIZE);
	return (struct space_crec *)(void *)p;
}

static void
compact_free(struct space *sp, struct space_crec *c)
{
	memcpy(c, &sp->cfree, sizeof(sp->cfree));
	sp->cfree = c;
}

/* ---- the collection heap: packed records by lease end ------------------ */

static void
gc_set(struct space *sp, size_t i, struct space_crec *c)
{
	sp->gc[i] = c;
	c->gcpos = (uint32_t)i;
}

static void
gc_up(struct space *sp, size_t i)
{
	struct space_crec *c = sp->gc[i];

	while (i > 0 && sp->gc[(i - 1) / 2]->expires_ms > c->expires_ms) {
		gc_set(sp, i, sp->gc[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	gc_set(sp, i, c);
}

static void
gc_down(struct space *sp, size_t i)
{
	struct space_crec *c = sp->gc[i];
	size_t k;

	while ((k = 2 * i + 1) < sp->ngc) {
		if (k + 1 < sp->ngc &&
		    sp->gc[k + 1]->expires_ms < sp->gc[k]->expires_ms)
			k++;
		if (sp->gc[k]->expires_ms >= c->expires_ms)
			break;
		gc_set(sp, i, sp->gc[k]);
		i = k;
	}
	gc_set(sp, i, c);
}

static void
gc_push(struct space *sp, struct space_crec *c)
{
	if (sp->ngc == sp->capgc) {
		sp->capgc += sp->capgc / 4 + 256;
		sp->gc = xreallocarray(sp->gc, sp->capgc, sizeof(*sp->gc));
	}
	sp->gc[sp->ngc] = c;
	gc_up(sp, sp->ngc++);
}

static void
gc_remove(struct space *sp, struct space_crec *c)
{
	size_t i = c->gcpos;
	struct space_crec *last = sp->gc[--sp->ngc];

	if (i < sp->ngc) {
		gc_set(sp, i, last);
		gc_up(sp, i);
		gc_down(sp, last->gcpos);
	}
	if (sp->capgc > 4096 && sp->ngc < sp->capgc / 4) {
		sp->capgc /= 2;
		sp->gc = xreallocarray(sp->gc, sp->capgc, sizeof(*sp->gc));
	}
}

/* A new packed record holding id and st (state_packs(st)), queued. */
static struct space_crec *
crec_new(struct space *sp, const uint8_t *id, const struct crdt_state *st)
{
	struct space_crec *c = compact_alloc(sp);

	c->flags = F_COMPACT | F_PACKED | F_DONE;
	memcpy(c->id, id, ENTRY_ID_LEN);
	c->node = st->adds.d[0].node;
	c->add = (uint32_t)st->adds.d[0].counter;
	c->phys = st->lease.stamp.phys;
	c->logical = st->lease.stamp.logical;
	c->expires_ms = st->lease.expires_ms;
	rec_rehash(sp, (struct space_rec *)(void *)c);
	gc_push(sp, c);
	return c;
}

/* The id table's slot holding the record with this id. */
static struct space_rec **
tab_ref(struct space *sp, const uint8_t *id)
{
	bool found;

	return &sp->tab[tab_slot(sp, id, &found)];
}

/*
 * r, completed, made compact: packed when its state allows (a new record
 * in a slab takes r's table slot and r is freed), else r itself without
 * its entry and claim.  Returns what holds the record now.
 */
static struct space_rec *
rec_compact(struct space *sp, struct space_rec *r)
{
	struct space_rec **ref = tab_ref(sp, rec_id(r));

	if (state_packs(&r->cr.st)) {
		struct space_crec *c = crec_new(sp, r->cr.id, &r->cr.st);

		*ref = (struct space_rec *)(void *)c;
		entry_free(r->e);
		crdt_state_free(&r->cr.st);
		free(r);
		return *ref;
	}
	entry_free(r->e);
	r->e = NULL;
	memset(&r->cr.claim, 0, sizeof(r->cr.claim));
	r->flags = (r->flags & ~(unsigned)(F_INDEXED | F_CLAIMED)) | F_COMPACT;
	rec_rehash(sp, r);
	return r;
}

/*
 * r as a struct space_rec, for a change to its state: a packed record is
 * unpacked into a new compact one in its table slot (freed from its slab
 * and the collection heap); the caller refreshes it, which packs it again
 * at the next call if it still fits.  Other records are returned as they
 * are.
 */
static struct space_rec *
rec_widen(struct space *sp, struct space_rec *r)
{
	struct space_crec *c = crec(r);
	struct space_rec *w;
	struct rec_tmp tmp;

	if (!rec_packed(r))
		return r;
	w = xcalloc(1, sizeof(*w));
	w->flags = F_COMPACT | F_DONE;
	crdt_rec_init(&w->cr, c->id);
	crdt_state_copy(&w->cr.st, &rec_view(r, &tmp)->st);
	w->hash = c->hash;
	*tab_ref(sp, c->id) = w;
	gc_remove(sp, c);
	compact_free(sp, c);
	return w;
}

static void
rec_destroy(struct space *sp, struct space_rec *r)
{
	if (rec_packed(r)) {
		gc_remove(sp, crec(r));
		compact_free(sp, crec(r));
		return;
	}
	entry_free(r->e);
	crdt_state_free(&r->cr.st);	/* all a record owns (crdt_rec_free) */
	free(r);
}

static void
rec_collect(struct space *sp, struct space_rec *r)
{
	if (!rec_packed(r) && (r->flags & F_INDEXED))
		fifo_del(sp, r);
	tab_delete(sp, r);
	rec_destroy(sp, r);
}

/*
 * Run everything due by now: first the packed tombstones past their
 * retention (each outlives its lease end by the same time, so they come
 * off the collection heap in order; a record packed in this call waits
 * for the next), then the due times.
 */
static void
advance(struct space *sp, uint64_t now)
{
	uint64_t keep = retention_ms(sp->max_lease_ms);

	while (sp->ngc > 0 && u64_sat_add(sp->gc[0]->expires_ms, keep) <= now)
		rec_collect(sp, (struct space_rec *)(void *)sp->gc[0]);
	while (sp->nheap > 0 && sp->heap[0].at <= now) {
		struct due d = heap_pop(sp);
		struct space_rec *r = due_rec(sp, &d);

		if (r == NULL)
			continue;		/* stale */
		r->sched = 0;
		if (!(r->flags & F_LIVE) && r->gc_at != 0 && r->gc_at <= now)
			rec_collect(sp, r);
		else if ((r->flags & F_DONE) && (!(r->flags & F_COMPACT) ||
		    state_packs(&r->cr.st))) {
			r = rec_compact(sp, r);
			if (!rec_packed(r))
				rec_refresh(sp, r, now, false);
		} else
			rec_refresh(sp, r, now, false);
	}
}

/* Insert a new record built around e and run its first refresh. */
static void
rec_insert(struct space *sp, struct space_rec *r, uint64_t now)
{
	r->type = fifo_type(sp, r->e->type, true);
	if (r->e->lease_ms > sp->max_lease_ms)
		sp->max_lease_ms = r->e->lease_ms;
	tab_insert(sp, r);
	rec_refresh(sp, r, now, true);
}

/*
 * A completed record known only as such (a peer sent it compact): held as
 * a compact tombstone, packed if it fits, with no entry, no event and no
 * claim.
 */
static int
rec_insert_compact(struct space *sp, const struct crdt_rec *cr, uint64_t now)
{
	struct space_rec *r;

	if (sp->nrec >= sp->max)
		return SPACE_EFULL;
	if (now >= u64_sat_add(cr->st.lease.expires_ms,
	    retention_ms(sp->max_lease_ms)))
		return SPACE_EEXPIRED;
	if (state_packs(&cr->st)) {
		tab_insert(sp, (struct space_rec *)(void *)crec_new(sp, cr->id,
		    &cr->st));
		return SPACE_OK;
	}
	r = xcalloc(1, sizeof(*r));
	crdt_rec_init(&r->cr, cr->id);
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
		if (sp->tab[i] != NULL && !rec_packed(sp->tab[i]))
			rec_destroy(sp, sp->tab[i]);
	free(sp->tab);
	for (size_t i = 0; i < sp->nslabs; i++)	/* the packed records */
		free(sp->slabs[i]);
	free(sp->slabs);
	free(sp->gc);
	for (size_t i = 0; i < sp->ntypes; i++)
		fifo_type_free(sp->types[i]);
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
		if (rec_flags(r) & F_COMPACT) {
			struct rec_tmp tmp;

			/* Completed: a claim no longer matters. */
			if (!crdt_state_would_change(&rec_view(r, &tmp)->st,
			    &cr->st))
				return SPACE_OK;
			r = rec_widen(sp, r);
			if (crdt_state_merge(&r->cr.st, &cr->st) != CRDT_OK) {
				rec_refresh(sp, r, now_ms, false);
				return SPACE_EDOTS;
			}
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
	if (now_ms >= u64_sat_add(r->cr.st.lease.expires_ms,
	    retention_ms(maxl))) {
		rec_destroy(sp, r);
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

size_t
space_due_count(const struct space *sp)
{
	return sp->nheap + sp->ngc;
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

/* Visit visible matches of t in FIFO order until cb says stop. */
static struct space_rec *
scan(struct space *sp, const struct template *t, uint64_t now,
    space_rec_cb cb, void *arg, size_t *count)
{
	struct space_type *ty;

	advance(sp, now);
	if ((ty = fifo_type(sp, t->type, false)) == NULL)
		return NULL;
	return fifo_scan(sp, ty, t, cb, arg, count);
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
	out->epoch = rec_claim(r)->epoch + 1;
	out->bid = 0;
	out->stamp = *stamp;
	memcpy(out->holder, sp->self, IDENTITY_ID_LEN);
	out->expiry_ms = u64_sat_add(now_ms, take_ms);
}

int
space_claim(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
    const struct crdt_claim *c, uint64_t now_ms)
{
	struct space_rec *r;

	advance(sp, now_ms);
	if ((r = space_get(sp, id)) == NULL)
		return SPACE_ENOENT;
	if (rec_flags(r) & F_COMPACT)
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
	if ((rec_flags(r) & F_COMPACT) || r->cr.st.completed)
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
	bool widened;

	advance(sp, now_ms);
	if ((r = space_get(sp, id)) == NULL)
		return SPACE_ENOENT;
	widened = rec_packed(r);
	r = rec_widen(sp, r);
	old = r->cr.st.lease;
	crdt_state_lease(&r->cr.st, stamp, expires_ms);
	/* Field by field: a stamp has padding, which memcmp would read. */
	if (widened || hlc_cmp(&old.stamp, &r->cr.st.lease.stamp) != 0 ||
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
	r = rec_widen(sp, r);
	if (crdt_state_remove(&r->cr.st) != CRDT_OK) {
		rec_refresh(sp, r, now_ms, false);
		return SPACE_EDOTS;
	}
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
			out[space_bucket_of(rec_id(r), nbuckets)] +=
			    rec_hash(r);
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

		if (r != NULL && want[space_bucket_of(rec_id(r), nbuckets)] &&
		    !cb(arg, r))
			break;
	}
	free(want);
}

void
space_rec_encode(struct dcbor_buf *b, const struct space_rec *r)
{
	struct rec_tmp tmp;
	const struct entry *e = space_rec_entry(r);

	/* Canonical order: "rec" < "entry". */
	dcbor_put_map(b, 2);
	dcbor_put_cstr(b, "rec");
	crdt_rec_encode(b, rec_view(r, &tmp));
	dcbor_put_cstr(b, "entry");
	if (e != NULL)
		entry_encode(b, e);
	else
		dcbor_put_null(b);	/* compact: completed, entry dropped */
}

int
space_rec_decode(struct dcbor_rd *rd, struct entry **e, struct crdt_rec *cr)
{
	return space_rec_decode_known(NULL, rd, e, cr);
}

/*
 * Whether the entry at rd is the encoding of the one sp holds for id: then
 * entry_decode would accept it and give that entry again (every held entry
 * was made by entry_new or taken by entry_decode, and encodes canonically),
 * so there is nothing to learn from it.  The bounds entry_decode applies
 * are kept, so no copy is taken here that it would refuse.
 */
static bool
held_copy(const struct space *sp, const struct dcbor_rd *rd,
    const uint8_t id[ENTRY_ID_LEN], size_t *len)
{
	static struct dcbor_buf enc;	/* reused: grows to the largest entry */
	const struct space_rec *r;
	const struct entry *he;

	if (sp == NULL || rd->err != DCBOR_OK ||
	    (r = space_get(sp, id)) == NULL ||
	    (he = space_rec_entry(r)) == NULL || he->body_len > ENTRY_BODY_MAX)
		return false;
	dcbor_buf_reset(&enc);
	entry_encode(&enc, he);
	if (enc.len > ENTRY_ENCODED_MAX || dcbor_left(rd) < enc.len ||
	    memcmp(rd->p, enc.data, enc.len) != 0)
		return false;
	*len = enc.len;
	return true;
}

int
space_rec_decode_known(const struct space *sp, struct dcbor_rd *rd,
    struct entry **e, struct crdt_rec *cr)
{
	uint64_t n;
	size_t len;

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
	if (held_copy(sp, rd, cr->id, &len)) {
		rd->p += len;
		return 1;
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
	return rec_packed(r) ? NULL : r->e;
}

const struct crdt_state *
space_rec_state(const struct space_rec *r)
{
	static struct rec_tmp view;	/* a packed record's: see space.h */

	return &rec_view(r, &view)->st;
}

const struct crdt_claim *
space_rec_claim(const struct space_rec *r)
{
	return rec_claim(r);
}

const uint8_t *
space_rec_id(const struct space_rec *r)
{
	return rec_id(r);
}

uint64_t
space_rec_hash(const struct space_rec *r)
{
	return rec_hash(r);
}

/*
 * fifo.c: each type's FIFO index of a space (space_int.h): an array of
 * slots sorted by (issue stamp, id) holding only visible records.  A
 * record leaving the index leaves its key behind as a dead slot, so
 * coming back (a lapsed claim) is a binary search, and `head` skips the
 * dead prefix that taken entries leave at the front; the array is
 * compacted when dead slots dominate.  Per type also the template
 * cursors: for each of the last CUR_MAX templates with conditions scanned
 * on that type (keyed by their canonical form, LRU), a FIFO key x such
 * that every visible record before x fails the template (see "template
 * cursors" below), so a selective take resumes where the last one
 * stopped.  space.c's rec_refresh calls fifo_add / fifo_del as a
 * record's visibility changes; the verbs' scans run here (fifo_scan),
 * asking the field indexes (fidx.c) first.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "space_int.h"
#include "xmalloc.h"

#define COMPACT_MIN	64
#define CUR_MAX		32	/* template cursors per type */

/* The type called name, made if create. */
struct space_type *
fifo_type(struct space *sp, const char *name, bool create)
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

void
fifo_type_free(struct space_type *t)
{
	for (size_t c = 0; t->cur != NULL && c < CUR_MAX; c++)
		free(t->cur[c].canon);
	free(t->cur);
	fidx_free(t);
	free(t->s);
	free(t);
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

void
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

void
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

/* Visit ty's visible matches of t in FIFO order until cb says stop. */
struct space_rec *
fifo_scan(struct space *sp, struct space_type *ty, const struct template *t,
    space_rec_cb cb, void *arg, size_t *count)
{
	struct tcursor *cu = NULL;
	bool first = true;
	size_t i = 0;

	if (t->nconds > 0) {
		struct space_rec *r;

		if (fidx_scan(ty, t, cb, arg, count, &r))
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

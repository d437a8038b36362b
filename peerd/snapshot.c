/*
 * snapshot.c: a reconciliation session's view of the replica (snapshot.h).
 * Taken once a session, so it is built in one pass over the replica's
 * items and sorted by an LSD radix sort, then read by binary search.
 */
#include <stdlib.h>
#include <string.h>

#include "hlc.h"
#include "peerd.h"
#include "replica.h"
#include "snapshot.h"
#include "stats.h"
#include "xmalloc.h"

struct snap_arg {
	struct snapshot_item	*it;
	size_t			 n, cap;
	uint64_t		 cut;
};

static void
snap_one(void *argp, uint64_t h, const uint8_t id[ENTRY_ID_LEN])
{
	struct snap_arg *a = argp;
	struct hlc_stamp st;

	/* Inside the horizon: an entry issued at or after the cut. */
	if (a->cut != 0 && replica_entry_stamp(id, &st) == 0 &&
	    st.phys >= a->cut) {
		pd_count(recon_horizon_items);
		return;
	}
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->it = xreallocarray(a->it, a->cap, sizeof(*a->it));
	}
	a->it[a->n].h = h;
	memcpy(a->it[a->n].id, id, ENTRY_ID_LEN);
	a->n++;
}

static int
item_cmp(const void *x, const void *y)
{
	const struct snapshot_item *a = x, *b = y;

	return a->h < b->h ? -1 : a->h > b->h;
}

/* Sort by h: an LSD radix sort (qsort moves 24-byte items by memmove). */
static void
items_sort(struct snapshot_item *it, size_t n)
{
	struct snapshot_item *tmp = xcalloc(n ? n : 1, sizeof(*tmp)),
	    *src = it, *dst = tmp, *sw;

	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, pos = 0;

		for (size_t i = 0; i < n; i++)
			count[(src[i].h >> shift) & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].h >> shift) & 0xff]++] = src[i];
		sw = src;
		src = dst;
		dst = sw;
	}
	/* eight passes: the sorted items are back in it */
	free(tmp);
}

void
snapshot_take(struct snapshot *s, uint64_t cut)
{
	struct snap_arg a = { NULL, 0, 0, cut };
	size_t k = 0;

	snapshot_free(s);
	replica_foreach_item(snap_one, &a);
	items_sort(a.it, a.n);
	for (size_t i = 0; i < a.n; i++)
		if (k == 0 || a.it[k - 1].h != a.it[i].h)
			a.it[k++] = a.it[i];
	/* A session lives for seconds: keep no doubling slack that long. */
	s->it = k < a.cap ? xreallocarray(a.it, k ? k : 1, sizeof(*a.it)) :
	    a.it;
	s->n = k;
}

uint64_t *
snapshot_hashes(const struct snapshot *s)
{
	uint64_t *v = xcalloc(s->n ? s->n : 1, sizeof(*v));

	for (size_t i = 0; i < s->n; i++)
		v[i] = s->it[i].h;
	return v;
}

const uint8_t *
snapshot_id(const struct snapshot *s, uint64_t h)
{
	struct snapshot_item key = { .h = h }, *it;

	it = s->n ? bsearch(&key, s->it, s->n, sizeof(*s->it), item_cmp) :
	    NULL;
	return it ? it->id : NULL;
}

void
snapshot_free(struct snapshot *s)
{
	free(s->it);
	s->it = NULL;
	s->n = 0;
}

/*
 * crdt.c: the per-entry CRDT, claim merge and whole-state maps (crdt.h).
 * Dot sets are sorted arrays so union, subset and equality are linear
 * merges and the encoding is canonical without a sort.  Everything decoded
 * here is bounded before memory is reserved for it.
 */
#include <stdlib.h>
#include <string.h>

#include "crdt.h"
#include "dcbor.h"
#include "xmalloc.h"

static const char *const crdt_errnames[] = {
	"ok", "full", "decode", "epoch", "hold", "stamp",
};

const char *
crdt_strerror(int err)
{
	if (err < 0 || (size_t)err >= sizeof(crdt_errnames) /
	    sizeof(crdt_errnames[0]))
		return "unknown";
	return crdt_errnames[err];
}

/* ---- dot sets ---------------------------------------------------------- */

static int
dot_cmp(const struct crdt_dot *a, const struct crdt_dot *b)
{
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	if (a->counter != b->counter)
		return a->counter < b->counter ? -1 : 1;
	return 0;
}

static void
dots_reserve(struct crdt_dotset *s, uint32_t n)
{
	if (s->cap >= n)
		return;
	s->d = xreallocarray(s->d, n, sizeof(*s->d));
	s->cap = n;
}

static bool
dots_has(const struct crdt_dotset *s, const struct crdt_dot *x)
{
	uint32_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = dot_cmp(&s->d[mid], x);

		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Size of a union b, without building it. */
static uint32_t
dots_union_size(const struct crdt_dotset *a, const struct crdt_dotset *b)
{
	uint32_t i = 0, j = 0, n = 0;

	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 :
		    dot_cmp(&a->d[i], &b->d[j]);

		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
		n++;
	}
	return n;
}

static bool
dots_subset(const struct crdt_dotset *a, const struct crdt_dotset *b)
{
	return dots_union_size(a, b) == b->n;
}

/* dst = dst union src (caller checked the size). */
static void
dots_union(struct crdt_dotset *dst, const struct crdt_dotset *src)
{
	uint32_t n = dots_union_size(dst, src), i, j, k;
	struct crdt_dot *out;

	if (n == dst->n)
		return;
	out = xreallocarray(NULL, n, sizeof(*out));
	for (i = j = k = 0; i < dst->n || j < src->n; k++) {
		int c = i == dst->n ? 1 : j == src->n ? -1 :
		    dot_cmp(&dst->d[i], &src->d[j]);

		out[k] = c <= 0 ? dst->d[i] : src->d[j];
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	free(dst->d);
	dst->d = out;
	dst->n = dst->cap = n;
}

static int
dots_insert(struct crdt_dotset *s, const struct crdt_dot *x)
{
	uint32_t i;

	if (dots_has(s, x))
		return CRDT_OK;
	if (s->n >= CRDT_MAX_DOTS)
		return CRDT_EFULL;
	dots_reserve(s, s->n + 1);
	for (i = s->n; i > 0 && dot_cmp(&s->d[i - 1], x) > 0; i--)
		s->d[i] = s->d[i - 1];
	s->d[i] = *x;
	s->n++;
	return CRDT_OK;
}

static bool
dots_equal(const struct crdt_dotset *a, const struct crdt_dotset *b)
{
	return a->n == b->n && (a->n == 0 ||
	    memcmp(a->d, b->d, a->n * sizeof(*a->d)) == 0);
}

static void
dots_encode(struct dcbor_buf *b, const struct crdt_dotset *s)
{
	dcbor_put_array(b, (size_t)s->n * 2);
	for (uint32_t i = 0; i < s->n; i++) {
		dcbor_put_uint(b, s->d[i].node);
		dcbor_put_uint(b, s->d[i].counter);
	}
}

static int
dots_decode(struct dcbor_rd *rd, struct crdt_dotset *s)
{
	uint64_t n;

	s->n = 0;
	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	if (n % 2 != 0 || n / 2 > CRDT_MAX_DOTS) {
		rd->err = DCBOR_ERANGE;
		return -1;
	}
	dots_reserve(s, (uint32_t)(n / 2));
	for (uint64_t i = 0; i < n / 2; i++) {
		struct crdt_dot d;

		if (dcbor_get_uint(rd, &d.node) == -1 ||
		    dcbor_get_uint(rd, &d.counter) == -1)
			return -1;
		if (s->n > 0 && dot_cmp(&s->d[s->n - 1], &d) >= 0) {
			rd->err = DCBOR_ENONCANON;
			return -1;
		}
		s->d[s->n++] = d;
	}
	return 0;
}

/* ---- per-entry state --------------------------------------------------- */

void
crdt_state_init(struct crdt_state *st)
{
	memset(st, 0, sizeof(*st));
}

void
crdt_state_free(struct crdt_state *st)
{
	free(st->adds.d);
	free(st->rems.d);
	crdt_state_init(st);
}

static void
dots_copy(struct crdt_dotset *dst, const struct crdt_dotset *src)
{
	dst->n = 0;
	if (src->n == 0)
		return;
	dots_reserve(dst, src->n);
	memcpy(dst->d, src->d, src->n * sizeof(*src->d));
	dst->n = src->n;
}

void
crdt_state_copy(struct crdt_state *dst, const struct crdt_state *src)
{
	dots_copy(&dst->adds, &src->adds);
	dots_copy(&dst->rems, &src->rems);
	dst->lease = src->lease;
	dst->completed = src->completed;
}

int
crdt_state_add(struct crdt_state *st, uint64_t node, uint64_t counter)
{
	struct crdt_dot d = { node, counter };

	return dots_insert(&st->adds, &d);
}

int
crdt_state_remove(struct crdt_state *st)
{
	if (dots_union_size(&st->rems, &st->adds) > CRDT_MAX_DOTS)
		return CRDT_EFULL;
	dots_union(&st->rems, &st->adds);
	return CRDT_OK;
}

/* The LWW order of lease writes: stamp, then the later expiry. */
static int
lease_cmp(const struct crdt_lease *a, const struct crdt_lease *b)
{
	int c = hlc_cmp(&a->stamp, &b->stamp);

	if (c != 0)
		return c;
	if (a->expires_ms != b->expires_ms)
		return a->expires_ms < b->expires_ms ? -1 : 1;
	return 0;
}

void
crdt_state_lease(struct crdt_state *st, const struct hlc_stamp *stamp,
    uint64_t expires_ms)
{
	struct crdt_lease l = { *stamp, expires_ms };

	if (lease_cmp(&l, &st->lease) > 0)
		st->lease = l;
}

void
crdt_state_complete(struct crdt_state *st)
{
	st->completed = true;
}

bool
crdt_state_present(const struct crdt_state *st)
{
	if (st->completed)
		return false;
	for (uint32_t i = 0; i < st->adds.n; i++)
		if (!dots_has(&st->rems, &st->adds.d[i]))
			return true;
	return false;
}

int
crdt_state_merge(struct crdt_state *dst, const struct crdt_state *src)
{
	if (dots_union_size(&dst->adds, &src->adds) > CRDT_MAX_DOTS ||
	    dots_union_size(&dst->rems, &src->rems) > CRDT_MAX_DOTS)
		return CRDT_EFULL;
	dots_union(&dst->adds, &src->adds);
	dots_union(&dst->rems, &src->rems);
	if (lease_cmp(&src->lease, &dst->lease) > 0)
		dst->lease = src->lease;
	dst->completed = dst->completed || src->completed;
	return CRDT_OK;
}

bool
crdt_state_would_change(const struct crdt_state *dst,
    const struct crdt_state *src)
{
	return !dots_subset(&src->adds, &dst->adds) ||
	    !dots_subset(&src->rems, &dst->rems) ||
	    lease_cmp(&src->lease, &dst->lease) > 0 ||
	    (src->completed && !dst->completed);
}

bool
crdt_state_equal(const struct crdt_state *a, const struct crdt_state *b)
{
	return dots_equal(&a->adds, &b->adds) &&
	    dots_equal(&a->rems, &b->rems) &&
	    lease_cmp(&a->lease, &b->lease) == 0 &&
	    a->completed == b->completed;
}

void
crdt_state_encode(struct dcbor_buf *b, const struct crdt_state *st)
{
	/* Canonical order: "add" < "rem" < "done" < "lease". */
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "add");
	dots_encode(b, &st->adds);
	dcbor_put_cstr(b, "rem");
	dots_encode(b, &st->rems);
	dcbor_put_cstr(b, "done");
	dcbor_put_bool(b, st->completed);
	dcbor_put_cstr(b, "lease");
	dcbor_put_array(b, 2);
	hlc_encode(b, &st->lease.stamp);
	dcbor_put_uint(b, st->lease.expires_ms);
}

static int
expect_key(struct dcbor_rd *rd, const char *name)
{
	const char *k;
	size_t klen;

	if (dcbor_get_text(rd, &k, &klen) == -1)
		return -1;
	if (!dcbor_text_is(k, klen, name)) {
		rd->err = DCBOR_ETYPE;
		return -1;
	}
	return 0;
}

int
crdt_state_decode(struct dcbor_rd *rd, struct crdt_state *st)
{
	uint64_t n;

	st->lease.stamp = (struct hlc_stamp){ 0, 0, 0 };
	st->lease.expires_ms = 0;
	st->completed = false;
	if (dcbor_get_map(rd, &n) == -1)
		return -1;
	if (n != 4) {
		rd->err = DCBOR_ETYPE;
		return -1;
	}
	if (expect_key(rd, "add") == -1 || dots_decode(rd, &st->adds) == -1 ||
	    expect_key(rd, "rem") == -1 || dots_decode(rd, &st->rems) == -1 ||
	    expect_key(rd, "done") == -1 ||
	    dcbor_get_bool(rd, &st->completed) == -1 ||
	    expect_key(rd, "lease") == -1 ||
	    dcbor_get_array(rd, &n) == -1)
		return -1;
	if (n != 2) {
		rd->err = DCBOR_ETYPE;
		return -1;
	}
	if (hlc_parse(rd, &st->lease.stamp) == -1 ||
	    dcbor_get_uint(rd, &st->lease.expires_ms) == -1)
		return -1;
	return 0;
}

/* ---- claims ------------------------------------------------------------ */

/* <0 when a loses to b, >0 when a wins, 0 when identical. */
static int
claim_rank(const struct crdt_claim *a, const struct crdt_claim *b)
{
	int c;

	if (a->epoch != b->epoch)			/* 1 higher epoch */
		return a->epoch > b->epoch ? 1 : -1;
	if (a->bid != b->bid)				/* 2 lower bid */
		return a->bid < b->bid ? 1 : -1;
	if ((c = hlc_cmp(&a->stamp, &b->stamp)) != 0)	/* 3 lower stamp */
		return -c;
	if ((c = memcmp(a->holder, b->holder, sizeof(a->holder))) != 0)
		return c < 0 ? 1 : -1;			/* 4 lower holder */
	if (a->expiry_ms != b->expiry_ms)		/* 5 later expiry */
		return a->expiry_ms > b->expiry_ms ? 1 : -1;
	if ((c = memcmp(a->sig, b->sig, sizeof(a->sig))) != 0)
		return c < 0 ? 1 : -1;			/* determinism only */
	return 0;
}

const struct crdt_claim *
crdt_claim_merge(const struct crdt_claim *a, const struct crdt_claim *b)
{
	return claim_rank(a, b) >= 0 ? a : b;
}

bool
crdt_claim_equal(const struct crdt_claim *a, const struct crdt_claim *b)
{
	return claim_rank(a, b) == 0;
}

bool
crdt_claim_active(const struct crdt_claim *c, uint64_t now_ms)
{
	return c->epoch > 0 && now_ms < c->expiry_ms;
}

static void
claim_put(struct dcbor_buf *b, const struct crdt_claim *c,
    const uint8_t *id, bool with_sig)
{
	size_t start = b->len;

	dcbor_put_map(b, with_sig ? 8 : 6);
	dcbor_put_cstr(b, "bid");
	dcbor_put_uint(b, c->bid);
	if (with_sig) {
		/* The key is bound to holder by its hash, not by the signature. */
		dcbor_put_cstr(b, "key");
		dcbor_put_bytes(b, c->key, sizeof(c->key));
		dcbor_put_cstr(b, "sig");
		dcbor_put_bytes(b, c->sig, sizeof(c->sig));
		dcbor_put_cstr(b, "mono");
		dcbor_put_uint(b, c->mono_us);
	} else {
		dcbor_put_cstr(b, "entry");
		dcbor_put_bytes(b, id, ENTRY_ID_LEN);
	}
	dcbor_put_cstr(b, "epoch");
	dcbor_put_uint(b, c->epoch);
	dcbor_put_cstr(b, "stamp");
	hlc_encode(b, &c->stamp);
	dcbor_put_cstr(b, "expiry");
	dcbor_put_uint(b, c->expiry_ms);
	dcbor_put_cstr(b, "holder");
	dcbor_put_bytes(b, c->holder, sizeof(c->holder));
	(void)dcbor_sort_map(b, start);
}

void
crdt_claim_signing_bytes(struct dcbor_buf *b, const struct crdt_claim *c,
    const uint8_t id[ENTRY_ID_LEN])
{
	claim_put(b, c, id, false);
}

void
crdt_claim_encode(struct dcbor_buf *b, const struct crdt_claim *c)
{
	claim_put(b, c, NULL, true);
}

int
crdt_claim_decode(struct dcbor_rd *rd, struct crdt_claim *c)
{
	uint64_t n;

	memset(c, 0, sizeof(*c));
	if (dcbor_get_map(rd, &n) == -1)
		return -1;
	if (n != 8) {
		rd->err = DCBOR_ETYPE;
		return -1;
	}
	/* Keys in canonical order, as claim_put writes them. */
	if (expect_key(rd, "bid") == -1 || dcbor_get_uint(rd, &c->bid) == -1 ||
	    expect_key(rd, "key") == -1 ||
	    dcbor_get_fixed(rd, c->key, sizeof(c->key)) == -1 ||
	    expect_key(rd, "sig") == -1 ||
	    dcbor_get_fixed(rd, c->sig, sizeof(c->sig)) == -1 ||
	    expect_key(rd, "mono") == -1 ||
	    dcbor_get_uint(rd, &c->mono_us) == -1 ||
	    expect_key(rd, "epoch") == -1 ||
	    dcbor_get_uint(rd, &c->epoch) == -1 ||
	    expect_key(rd, "stamp") == -1 || hlc_parse(rd, &c->stamp) == -1 ||
	    expect_key(rd, "expiry") == -1 ||
	    dcbor_get_uint(rd, &c->expiry_ms) == -1 ||
	    expect_key(rd, "holder") == -1 ||
	    dcbor_get_fixed(rd, c->holder, sizeof(c->holder)) == -1)
		return -1;
	if (c->epoch == 0)
		memset(c, 0, sizeof(*c));
	return 0;
}

int
crdt_claim_check_remote(const struct crdt_claim *c, uint64_t cur_epoch,
    const struct hlc_stamp *entry_stamp, uint64_t now_ms)
{
	if (c->epoch == 0 || (c->epoch > cur_epoch &&
	    c->epoch - cur_epoch > CRDT_EPOCH_JUMP_MAX))
		return CRDT_EEPOCH;
	if (c->expiry_ms > now_ms && c->expiry_ms - now_ms > CRDT_HOLD_MAX_MS)
		return CRDT_EHOLD;
	if (c->stamp.phys < entry_stamp->phys &&
	    entry_stamp->phys - c->stamp.phys > CRDT_STAMP_BEFORE_MS)
		return CRDT_ESTAMP;
	return CRDT_OK;
}

/* ---- records ----------------------------------------------------------- */

void
crdt_rec_init(struct crdt_rec *r, const uint8_t id[ENTRY_ID_LEN])
{
	memset(r, 0, sizeof(*r));
	memcpy(r->id, id, ENTRY_ID_LEN);
	crdt_state_init(&r->st);
}

void
crdt_rec_free(struct crdt_rec *r)
{
	crdt_state_free(&r->st);
}

int
crdt_rec_merge(struct crdt_rec *dst, const struct crdt_rec *src)
{
	if (dots_union_size(&dst->st.adds, &src->st.adds) > CRDT_MAX_DOTS ||
	    dots_union_size(&dst->st.rems, &src->st.rems) > CRDT_MAX_DOTS)
		return CRDT_EFULL;
	dst->claim = *crdt_claim_merge(&dst->claim, &src->claim);
	return crdt_state_merge(&dst->st, &src->st);
}

bool
crdt_rec_would_change(const struct crdt_rec *dst, const struct crdt_rec *src)
{
	return claim_rank(&src->claim, &dst->claim) > 0 ||
	    crdt_state_would_change(&dst->st, &src->st);
}

void
crdt_rec_encode(struct dcbor_buf *b, const struct crdt_rec *r)
{
	/* Canonical order: "id" < "st" < "claim". */
	dcbor_put_map(b, r->claim.epoch > 0 ? 3 : 2);
	dcbor_put_cstr(b, "id");
	dcbor_put_bytes(b, r->id, ENTRY_ID_LEN);
	dcbor_put_cstr(b, "st");
	crdt_state_encode(b, &r->st);
	if (r->claim.epoch > 0) {
		dcbor_put_cstr(b, "claim");
		crdt_claim_encode(b, &r->claim);
	}
}

int
crdt_rec_decode(struct dcbor_rd *rd, struct crdt_rec *r)
{
	uint64_t n;

	memset(&r->claim, 0, sizeof(r->claim));
	if (dcbor_get_map(rd, &n) == -1)
		return -1;
	if (n != 2 && n != 3) {
		rd->err = DCBOR_ETYPE;
		return -1;
	}
	if (expect_key(rd, "id") == -1 ||
	    dcbor_get_fixed(rd, r->id, ENTRY_ID_LEN) == -1 ||
	    expect_key(rd, "st") == -1 || crdt_state_decode(rd, &r->st) == -1)
		return -1;
	if (n == 3) {
		if (expect_key(rd, "claim") == -1 ||
		    crdt_claim_decode(rd, &r->claim) == -1)
			return -1;
		if (r->claim.epoch == 0) {	/* "no claim" is written absent */
			rd->err = DCBOR_ENONCANON;
			return -1;
		}
	}
	return 0;
}

/* ---- whole-state maps -------------------------------------------------- */

void
crdt_map_init(struct crdt_map *m)
{
	memset(m, 0, sizeof(*m));
}

void
crdt_map_free(struct crdt_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		crdt_rec_free(&m->r[i]);
	free(m->r);
	crdt_map_init(m);
}

/* A record whose dot sets a map refuses to take in as a new id. */
static bool
rec_too_big(const struct crdt_rec *r)
{
	return r->st.adds.n > CRDT_MAX_DOTS || r->st.rems.n > CRDT_MAX_DOTS;
}

/* Index of id, or where it would go (with *found false). */
static size_t
map_find(const struct crdt_map *m, const uint8_t *id, bool *found)
{
	size_t lo = 0, hi = m->n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(m->r[mid].id, id, ENTRY_ID_LEN);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct crdt_rec *
crdt_map_get(const struct crdt_map *m, const uint8_t id[ENTRY_ID_LEN])
{
	bool found;
	size_t i = map_find(m, id, &found);

	return found ? &m->r[i] : NULL;
}

int
crdt_map_merge_rec(struct crdt_map *m, const struct crdt_rec *r)
{
	struct crdt_rec *nr;
	bool found;
	size_t i = map_find(m, r->id, &found);

	if (found)
		return crdt_rec_merge(&m->r[i], r);
	if (rec_too_big(r))
		return CRDT_EFULL;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->r = xreallocarray(m->r, m->cap, sizeof(*m->r));
	}
	memmove(&m->r[i + 1], &m->r[i], (m->n - i) * sizeof(*m->r));
	m->n++;
	nr = &m->r[i];
	crdt_rec_init(nr, r->id);
	nr->claim = r->claim;
	crdt_state_copy(&nr->st, &r->st);
	return CRDT_OK;
}

/*
 * One merge of two sorted arrays, so n new ids cost O(dst + src) and not
 * O(n x dst) of memmoves: count the ids to insert, make room once, then
 * fill from the back (records of dst move up to their final slot, new ones
 * are copied in, shared ids merge in place).  The result is the same as
 * crdt_map_merge_rec of each record of src in turn.
 */
int
crdt_map_merge(struct crdt_map *dst, const struct crdt_map *src)
{
	size_t i, j, w, add = 0;
	int c, rc = CRDT_OK;

	for (i = 0, j = 0; j < src->n; ) {
		/* Not sorted and unique: the record-at-a-time way. */
		if (dst == src || (j > 0 && memcmp(src->r[j - 1].id,
		    src->r[j].id, ENTRY_ID_LEN) >= 0))
			goto slow;
		c = i < dst->n ? memcmp(dst->r[i].id, src->r[j].id,
		    ENTRY_ID_LEN) : 1;
		if (c <= 0)
			i++;
		if (c >= 0) {
			if (c > 0 && !rec_too_big(&src->r[j]))
				add++;
			j++;
		}
	}
	if (dst->n + add > dst->cap) {
		dst->cap = dst->n + add;
		dst->r = xreallocarray(dst->r, dst->cap, sizeof(*dst->r));
	}
	i = dst->n;
	w = dst->n + add;
	for (j = src->n; j > 0; j--) {
		const struct crdt_rec *sr = &src->r[j - 1];
		struct crdt_rec *nr;

		while (i > 0 && (c = memcmp(dst->r[i - 1].id, sr->id,
		    ENTRY_ID_LEN)) > 0)
			dst->r[--w] = dst->r[--i];
		if (i > 0 && c == 0) {
			dst->r[--w] = dst->r[--i];
			if (crdt_rec_merge(&dst->r[w], sr) != CRDT_OK)
				rc = CRDT_EFULL;
			continue;
		}
		if (rec_too_big(sr)) {
			rc = CRDT_EFULL;
			continue;
		}
		nr = &dst->r[--w];
		crdt_rec_init(nr, sr->id);
		nr->claim = sr->claim;
		crdt_state_copy(&nr->st, &sr->st);
	}
	/* Records of dst before src's first id stay where they are: w == i. */
	dst->n += add;
	return rc;
slow:
	for (j = 0; j < src->n; j++)
		if (crdt_map_merge_rec(dst, &src->r[j]) != CRDT_OK)
			rc = CRDT_EFULL;
	return rc;
}

void
crdt_map_delta(const struct crdt_map *a, const struct crdt_map *b,
    struct crdt_map *out)
{
	for (size_t i = 0; i < out->n; i++)
		crdt_rec_free(&out->r[i]);
	out->n = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct crdt_rec *rb = crdt_map_get(b, a->r[i].id);

		if (rb == NULL || crdt_rec_would_change(rb, &a->r[i]))
			(void)crdt_map_merge_rec(out, &a->r[i]);
	}
}

bool
crdt_map_equal(const struct crdt_map *a, const struct crdt_map *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (memcmp(a->r[i].id, b->r[i].id, ENTRY_ID_LEN) != 0 ||
		    !crdt_claim_equal(&a->r[i].claim, &b->r[i].claim) ||
		    !crdt_state_equal(&a->r[i].st, &b->r[i].st))
			return false;
	return true;
}

void
crdt_map_encode(struct dcbor_buf *b, const struct crdt_map *m)
{
	dcbor_put_array(b, m->n);
	for (size_t i = 0; i < m->n; i++)
		crdt_rec_encode(b, &m->r[i]);
}

int
crdt_map_decode(struct dcbor_rd *rd, struct crdt_map *m, size_t max_recs)
{
	struct crdt_rec r;
	uint64_t n;
	int rc = 0;

	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	if (n > max_recs) {
		rd->err = DCBOR_ERANGE;
		return -1;
	}
	memset(&r, 0, sizeof(r));
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		if (crdt_rec_decode(rd, &r) == -1 ||
		    crdt_map_merge_rec(m, &r) != CRDT_OK)
			rc = -1;
	}
	crdt_rec_free(&r);
	return rc;
}

/*
 * neg.c: range-based set reconciliation (see neg.h).  Each side keeps its
 * items sorted with prefix sums, so the fingerprint of any range costs two
 * binary searches whatever its size.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "be.h"
#include "dcbor.h"
#include "neg.h"
#include "u64.h"
#include "xmalloc.h"

enum neg_mode { NEG_SKIP = 0, NEG_FP = 1, NEG_IDS = 2 };

struct neg {
	uint64_t	*v;	/* sorted, unique */
	uint64_t	*ps;	/* ps[i] = v[0] + ... + v[i-1] (mod 2^64) */
	size_t		 n;
};

/* The reply being built: ranges in tmp, adjacent skips merged. */
struct out {
	struct dcbor_buf	 tmp;
	size_t			 nranges;	/* emitted, skips included */
	size_t			 nitems;	/* items listed */
	bool			 live;		/* a range other than skip */
	bool			 skip;		/* a skip is pending */
	bool			 skip_inf;
	uint64_t		 skip_upper;
};


struct neg *
neg_new(const uint64_t *items, size_t n)
{
	struct neg *ng = xcalloc(1, sizeof(*ng));
	size_t k = 0;

	ng->v = xcalloc(n ? n : 1, sizeof(*ng->v));
	if (n > 0)
		memcpy(ng->v, items, n * sizeof(*items));
	qsort(ng->v, n, sizeof(*ng->v), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || ng->v[k - 1] != ng->v[i])
			ng->v[k++] = ng->v[i];
	ng->n = k;
	ng->ps = xcalloc(k + 1, sizeof(*ng->ps));
	for (size_t i = 0; i < k; i++)
		ng->ps[i + 1] = ng->ps[i] + ng->v[i];
	return ng;
}

void
neg_free(struct neg *ng)
{
	if (ng == NULL)
		return;
	free(ng->v);
	free(ng->ps);
	free(ng);
}

size_t
neg_size(const struct neg *ng)
{
	return ng->n;
}

uint64_t
neg_fingerprint(uint64_t sum, uint64_t count)
{
	uint8_t b[16];

	for (int i = 0; i < 8; i++) {
		b[i] = (uint8_t)(sum >> (56 - 8 * i));
		b[8 + i] = (uint8_t)(count >> (56 - 8 * i));
	}
	return XXH3_64bits(b, sizeof(b));
}

void
neg_ids_push(struct neg_ids *l, uint64_t v)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = xreallocarray(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = v;
}

void
neg_ids_free(struct neg_ids *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The first index whose item is >= x. */
static size_t
lower(const struct neg *ng, uint64_t x)
{
	size_t lo = 0, hi = ng->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ng->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t
fp_of(const struct neg *ng, size_t a, size_t b)
{
	return neg_fingerprint(ng->ps[b] - ng->ps[a], b - a);
}

static void
put_upper(struct dcbor_buf *b, bool inf, uint64_t upper)
{
	if (inf)
		dcbor_put_null(b);
	else
		dcbor_put_uint(b, upper);
}

static void
out_skip(struct out *o, bool inf, uint64_t upper)
{
	o->skip = true;
	o->skip_inf = inf;
	o->skip_upper = upper;
}

/* Start a range other than skip: flush a pending skip first. */
static void
out_head(struct out *o, bool inf, uint64_t upper, enum neg_mode mode,
    size_t nfields)
{
	if (o->skip) {
		dcbor_put_array(&o->tmp, 2);
		put_upper(&o->tmp, o->skip_inf, o->skip_upper);
		dcbor_put_uint(&o->tmp, NEG_SKIP);
		o->nranges++;
		o->skip = false;
	}
	dcbor_put_array(&o->tmp, nfields);
	put_upper(&o->tmp, inf, upper);
	dcbor_put_uint(&o->tmp, mode);
	o->nranges++;
	o->live = true;
}

static void
out_fp(struct out *o, const struct neg *ng, size_t a, size_t b, bool inf,
    uint64_t upper)
{
	out_head(o, inf, upper, NEG_FP, 3);
	dcbor_put_uint(&o->tmp, fp_of(ng, a, b));
}

static void
out_ids(struct out *o, const struct neg *ng, size_t a, size_t b, bool inf,
    uint64_t upper)
{
	uint8_t *p;

	out_head(o, inf, upper, NEG_IDS, 3);
	dcbor_put_bytes_head(&o->tmp, (b - a) * 8);
	p = dcbor_buf_reserve(&o->tmp, (b - a) * 8);
	for (size_t i = a; i < b; i++)
		for (int k = 0; k < 8; k++)
			*p++ = (uint8_t)(ng->v[i] >> (56 - 8 * k));
	o->tmp.len += (b - a) * 8;
	o->nitems += b - a;
}

/* NEG_BRANCH ranges of equal item counts over [a, b), ending at upper. */
static void
out_split(struct out *o, const struct neg *ng, size_t a, size_t b, bool inf,
    uint64_t upper)
{
	size_t cnt = b - a;

	for (size_t k = 0; k < NEG_BRANCH; k++) {
		size_t sa = a + k * cnt / NEG_BRANCH;
		size_t sb = a + (k + 1) * cnt / NEG_BRANCH;

		if (k == NEG_BRANCH - 1)
			out_fp(o, ng, sa, sb, inf, upper);
		else
			out_fp(o, ng, sa, sb, false, ng->v[sb]);
	}
}

/* Close the reply: the last range always runs to the end. */
static void
out_end(struct out *o, struct dcbor_buf *dst)
{
	if (!o->live)
		return;
	if (o->skip) {
		dcbor_put_array(&o->tmp, 2);
		dcbor_put_null(&o->tmp);
		dcbor_put_uint(&o->tmp, NEG_SKIP);
		o->nranges++;
	}
	dcbor_put_array(dst, o->nranges);
	dcbor_put_raw(dst, o->tmp.data, o->tmp.len);
}

void
neg_initiate(struct neg *ng, struct dcbor_buf *dst)
{
	struct out o;

	memset(&o, 0, sizeof(o));
	dcbor_buf_init(&o.tmp);
	if (ng->n <= NEG_IDLIST_MAX)
		out_ids(&o, ng, 0, ng->n, true, 0);
	else
		out_split(&o, ng, 0, ng->n, true, 0);
	out_end(&o, dst);
	dcbor_buf_free(&o.tmp);
}

/* Both sides of the difference in [a, b) against the sender's list. */
static int
diff_ids(const struct neg *ng, size_t a, size_t b, const uint8_t *p,
    size_t len, uint64_t lo, bool inf, uint64_t hi, struct neg_ids *have,
    struct neg_ids *need)
{
	size_t m = len / 8, j = 0;
	uint64_t prev = 0;

	if (len % 8 != 0)
		return -1;
	for (size_t i = 0; i < m; i++) {
		uint64_t x = be_get64(p + 8 * i);

		if ((i > 0 && x <= prev) || x < lo || (!inf && x >= hi))
			return -1;
		prev = x;
		while (a < b && ng->v[a] < x)
			neg_ids_push(have, ng->v[a++]);
		if (a < b && ng->v[a] == x)
			a++;
		else
			neg_ids_push(need, x);
		j++;
	}
	while (a < b)
		neg_ids_push(have, ng->v[a++]);
	return j == m ? 0 : -1;
}

int
neg_reply(struct neg *ng, const uint8_t *msg, size_t len,
    struct dcbor_buf *dst, struct neg_ids *have, struct neg_ids *need)
{
	struct dcbor_rd rd;
	struct out o;
	uint64_t n, lo = 0;
	bool done = false;
	int rc = -1;

	memset(&o, 0, sizeof(o));
	dcbor_buf_init(&o.tmp);
	dcbor_rd_init(&rd, msg, len);
	if (dcbor_get_array(&rd, &n) == -1 || n == 0 || n > NEG_IN_RANGES)
		goto out;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k, upper = 0, mode, fp;
		bool inf;
		size_t a, b;

		if (done || dcbor_get_array(&rd, &k) == -1 || k < 2 || k > 3)
			goto out;
		inf = dcbor_take_null(&rd);
		if (!inf && (dcbor_get_uint(&rd, &upper) == -1 ||
		    upper <= lo))
			goto out;
		if (dcbor_get_uint(&rd, &mode) == -1)
			goto out;
		a = lower(ng, lo);
		b = inf ? ng->n : lower(ng, upper);
		if (mode == NEG_SKIP && k == 2) {
			out_skip(&o, inf, upper);
		} else if (mode == NEG_FP && k == 3) {
			if (dcbor_get_uint(&rd, &fp) == -1)
				goto out;
			if (fp == fp_of(ng, a, b))
				out_skip(&o, inf, upper);
			else if (b - a <= NEG_IDLIST_MAX &&
			    o.nitems + (b - a) <= NEG_OUT_ITEMS &&
			    o.nranges + 2 <= NEG_OUT_RANGES)
				out_ids(&o, ng, a, b, inf, upper);
			else if (b - a > NEG_IDLIST_MAX &&
			    o.nranges + NEG_BRANCH + 1 <= NEG_OUT_RANGES)
				out_split(&o, ng, a, b, inf, upper);
			else
				out_fp(&o, ng, a, b, inf, upper);
		} else if (mode == NEG_IDS && k == 3) {
			const uint8_t *p;
			size_t plen;

			if (dcbor_get_bytes(&rd, &p, &plen) == -1 ||
			    diff_ids(ng, a, b, p, plen, lo, inf, upper, have,
			    need) == -1)
				goto out;
			out_skip(&o, inf, upper);
		} else
			goto out;
		if (inf)
			done = true;
		else
			lo = upper;
	}
	if (!done || dcbor_left(&rd) != 0)
		goto out;
	out_end(&o, dst);
	rc = 0;
out:
	dcbor_buf_free(&o.tmp);
	return rc;
}

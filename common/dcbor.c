/*
 * dcbor.c: deterministic CBOR writer, bounded checker and zero-copy reader
 * (see dcbor.h).  Heads are encoded by libcbor's cbor_encode_* (which pick
 * the shortest form) and decoded here, one head per call, straight from
 * the initial byte (rd_token): every byte a peer receives passes through
 * that decoder several times (the check, the frame's walk, the body's), and
 * libcbor's cbor_stream_decode, with a callback per head, cost about three
 * times a plain decode.  tests/fuzz/fuzz_dcbor.c holds libcbor's decoder
 * beside it and aborts on any head the two read differently.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cbor.h>

#include "dcbor.h"
#include "utf8.h"
#include "xmalloc.h"

static const char *const dcbor_errnames[] = {
	"ok", "trunc", "malformed", "depth", "length", "indefinite",
	"noncanonical", "dupkey", "type", "range", "trailing", "utf8",
};

const char *
dcbor_strerror(int err)
{
	if (err < 0 || (size_t)err >= sizeof(dcbor_errnames) /
	    sizeof(dcbor_errnames[0]))
		return "unknown";
	return dcbor_errnames[err];
}

/* ---- writer ------------------------------------------------------------ */

void
dcbor_buf_init(struct dcbor_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void
dcbor_buf_free(struct dcbor_buf *b)
{
	free(b->data);
	dcbor_buf_init(b);
}

void
dcbor_buf_reset(struct dcbor_buf *b)
{
	b->len = 0;
}

uint8_t *
dcbor_buf_reserve(struct dcbor_buf *b, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap - b->len < n)
			cap *= 2;
		b->data = xreallocarray(b->data, cap, 1);
		b->cap = cap;
	}
	return b->data + b->len;
}

uint8_t *
dcbor_buf_steal(struct dcbor_buf *b, size_t *len)
{
	uint8_t *p = b->data;

	if (p == NULL)
		p = xmalloc(1);
	*len = b->len;
	dcbor_buf_init(b);
	return p;
}

#define HEAD_MAX 9

void
dcbor_put_uint(struct dcbor_buf *b, uint64_t v)
{
	b->len += cbor_encode_uint(v, dcbor_buf_reserve(b, HEAD_MAX), HEAD_MAX);
}

void
dcbor_put_negint(struct dcbor_buf *b, uint64_t n)
{
	b->len += cbor_encode_negint(n, dcbor_buf_reserve(b, HEAD_MAX),
	    HEAD_MAX);
}

void
dcbor_put_int(struct dcbor_buf *b, int64_t v)
{
	if (v >= 0)
		dcbor_put_uint(b, (uint64_t)v);
	else
		dcbor_put_negint(b, (uint64_t)(-(v + 1)));
}

void
dcbor_put_raw(struct dcbor_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	memcpy(dcbor_buf_reserve(b, n), p, n);
	b->len += n;
}

void
dcbor_put_bytes(struct dcbor_buf *b, const void *p, size_t n)
{
	b->len += cbor_encode_bytestring_start(n, dcbor_buf_reserve(b,
	    HEAD_MAX), HEAD_MAX);
	dcbor_put_raw(b, p, n);
}

void
dcbor_put_bytes_head(struct dcbor_buf *b, size_t n)
{
	b->len += cbor_encode_bytestring_start(n, dcbor_buf_reserve(b,
	    HEAD_MAX), HEAD_MAX);
}

void
dcbor_put_text(struct dcbor_buf *b, const char *s, size_t n)
{
	b->len += cbor_encode_string_start(n, dcbor_buf_reserve(b, HEAD_MAX),
	    HEAD_MAX);
	dcbor_put_raw(b, s, n);
}

void
dcbor_put_cstr(struct dcbor_buf *b, const char *s)
{
	dcbor_put_text(b, s, strlen(s));
}

void
dcbor_put_array(struct dcbor_buf *b, size_t n)
{
	b->len += cbor_encode_array_start(n, dcbor_buf_reserve(b, HEAD_MAX),
	    HEAD_MAX);
}

void
dcbor_put_map(struct dcbor_buf *b, size_t npairs)
{
	b->len += cbor_encode_map_start(npairs, dcbor_buf_reserve(b, HEAD_MAX),
	    HEAD_MAX);
}

void
dcbor_put_tag(struct dcbor_buf *b, uint64_t tag)
{
	b->len += cbor_encode_tag(tag, dcbor_buf_reserve(b, HEAD_MAX),
	    HEAD_MAX);
}

void
dcbor_put_bool(struct dcbor_buf *b, bool v)
{
	uint8_t c = v ? 0xf5 : 0xf4;

	dcbor_put_raw(b, &c, 1);
}

void
dcbor_put_null(struct dcbor_buf *b)
{
	uint8_t c = 0xf6;

	dcbor_put_raw(b, &c, 1);
}

/* If f is exactly a half-precision value, store its bits and return 1. */
static int
half_exact(float f, uint16_t *out)
{
	uint32_t x, mant, full;
	uint16_t sign;
	int e, shift;

	memcpy(&x, &f, sizeof(x));
	sign = (uint16_t)((x >> 16) & 0x8000);
	e = (int)((x >> 23) & 0xff);
	mant = x & 0x7fffff;
	if (e == 0xff) {
		*out = mant ? 0x7e00 : (uint16_t)(sign | 0x7c00);
		return 1;
	}
	if (e == 0) {
		if (mant != 0)
			return 0;
		*out = sign;
		return 1;
	}
	e -= 127;
	if (e > 15)
		return 0;
	if (e >= -14) {
		if (mant & 0x1fff)
			return 0;
		*out = (uint16_t)(sign | (uint16_t)((e + 15) << 10) |
		    (uint16_t)(mant >> 13));
		return 1;
	}
	if (e < -24)
		return 0;
	full = 0x800000u | mant;
	shift = -e - 1;
	if (full & ((1u << shift) - 1))
		return 0;
	*out = (uint16_t)(sign | (full >> shift));
	return 1;
}

void
dcbor_put_float(struct dcbor_buf *b, double v)
{
	uint8_t *p = dcbor_buf_reserve(b, 9);
	uint16_t h;
	float f;

	if (isnan(v)) {
		p[0] = 0xf9; p[1] = 0x7e; p[2] = 0x00;
		b->len += 3;
		return;
	}
	f = (float)v;
	if ((double)f == v || isinf(v)) {
		if (half_exact(f, &h)) {
			p[0] = 0xf9;
			p[1] = (uint8_t)(h >> 8);
			p[2] = (uint8_t)h;
			b->len += 3;
		} else
			b->len += cbor_encode_single(f, p, 9);
		return;
	}
	b->len += cbor_encode_double(v, p, 9);
}

/* ---- reader ------------------------------------------------------------ */

static size_t
head_size(uint64_t v)
{
	if (v < 24)
		return 1;
	if (v <= 0xff)
		return 2;
	if (v <= 0xffff)
		return 3;
	if (v <= 0xffffffffu)
		return 5;
	return 9;
}

static int
rd_fail(struct dcbor_rd *rd, int err)
{
	if (rd->err == DCBOR_OK)
		rd->err = err;
	return -1;
}

/* A half-precision float's value (RFC 8949 appendix D). */
static float
half_value(const uint8_t *p)
{
	unsigned int half = (unsigned int)p[0] << 8 | p[1];
	unsigned int e = (half >> 10) & 0x1f, mant = half & 0x3ff;
	double v;

	if (e == 0)
		v = ldexp(mant, -24);
	else if (e != 31)
		v = ldexp(mant + 1024, (int)e - 25);
	else
		v = mant == 0 ? INFINITY : NAN;
	return (float)((half & 0x8000) ? -v : v);
}

/* The big-endian argument of w bytes at p. */
static uint64_t
be_arg(const uint8_t *p, size_t w)
{
	uint64_t v = 0;

	for (size_t i = 0; i < w; i++)
		v = v << 8 | p[i];
	return v;
}

static const enum dcbor_type major_type[8] = {
	DCBOR_UINT, DCBOR_NEGINT, DCBOR_BYTES, DCBOR_TEXT, DCBOR_ARRAY,
	DCBOR_MAP, DCBOR_TAG, DCBOR_FLOAT,
};

/*
 * Decode one head; canon_err gets DCBOR_ENONCANON if not shortest form.
 * Every input is decided here, from the initial byte's major type (high 3
 * bits) and additional information (low 5): AI 0..23 is the argument, 24..27
 * say it follows in 1, 2, 4 or 8 bytes, 28..30 are reserved (malformed),
 * 31 is indefinite length (refused: EINDEF for strings, arrays and maps;
 * malformed for integers and tags, and 0xff, a break, outside anything).
 * Of the simple values only false, true, null and undefined are accepted.
 */
static int
rd_token(struct dcbor_rd *rd, struct dcbor_item *it, int *canon_err)
{
	static const uint8_t argw[4] = { 1, 2, 4, 8 };
	size_t left = (size_t)(rd->end - rd->p), w;
	const uint8_t *p = rd->p;
	unsigned int major, ai;
	uint64_t arg;
	uint16_t h;

	if (rd->err != DCBOR_OK)
		return -1;
	if (left == 0)
		return rd_fail(rd, DCBOR_ETRUNC);
	memset(it, 0, sizeof(*it));
	it->type = DCBOR_UNDEF;
	it->start = p;
	major = p[0] >> 5;
	ai = p[0] & 0x1f;
	if (ai >= 28 && ai <= 30)
		return rd_fail(rd, DCBOR_EMALFORMED);
	if (ai == 31) {
		if (major >= 2 && major <= 5)
			return rd_fail(rd, DCBOR_EINDEF);
		return rd_fail(rd, DCBOR_EMALFORMED);
	}
	if (major == 7) {
		switch (p[0]) {
		case 0xf4:
		case 0xf5:
			it->type = DCBOR_BOOL;
			it->b = p[0] == 0xf5;
			break;
		case 0xf6:
			it->type = DCBOR_NULL;
			break;
		case 0xf7:
			break;
		case 0xf9:
		case 0xfa:
		case 0xfb:
			w = argw[ai - 24];
			if (left < 1 + w)
				return rd_fail(rd, DCBOR_ETRUNC);
			it->type = DCBOR_FLOAT;
			if (w == 2)
				it->f = half_value(p + 1);
			else if (w == 4) {
				uint32_t x = (uint32_t)be_arg(p + 1, 4);
				float f;

				memcpy(&f, &x, sizeof(f));
				it->f = f;
			} else {
				uint64_t x = be_arg(p + 1, 8);

				memcpy(&it->f, &x, sizeof(it->f));
			}
			it->head = 1 + w;
			rd->p += 1 + w;
			*canon_err = DCBOR_OK;
			if (w == 2) {
				if (isnan(it->f) && !(p[1] == 0x7e &&
				    p[2] == 0x00))
					*canon_err = DCBOR_ENONCANON;
			} else if (w == 4) {
				if (half_exact((float)it->f, &h))
					*canon_err = DCBOR_ENONCANON;
			} else if (isnan(it->f) ||
			    (double)(float)it->f == it->f || isinf(it->f))
				*canon_err = DCBOR_ENONCANON;
			return 0;
		default:
			/* Unassigned simple values, and 0xf8 (one-byte). */
			return rd_fail(rd, DCBOR_EMALFORMED);
		}
		it->head = 1;
		rd->p++;
		*canon_err = DCBOR_OK;
		return 0;
	}
	w = ai < 24 ? 0 : argw[ai - 24];
	if (left < 1 + w)
		return rd_fail(rd, DCBOR_ETRUNC);
	arg = w == 0 ? ai : be_arg(p + 1, w);
	it->type = major_type[major];
	it->u = arg;
	it->head = 1 + w;
	*canon_err = head_size(arg) != 1 + w ? DCBOR_ENONCANON : DCBOR_OK;
	if (major == 2 || major == 3) {
		/* A string whose declared length runs past the input lies. */
		if (arg > left - 1 - w)
			return rd_fail(rd, DCBOR_ELENGTH);
		it->ptr = p + 1 + w;
		it->len = (size_t)arg;
	}
	rd->p += 1 + w + it->len;
	/* Each item takes at least one byte: a count beyond the input lies. */
	if (it->type == DCBOR_ARRAY && it->u > dcbor_left(rd))
		return rd_fail(rd, DCBOR_ELENGTH);
	if (it->type == DCBOR_MAP && it->u > dcbor_left(rd) / 2)
		return rd_fail(rd, DCBOR_ELENGTH);
	return 0;
}

void
dcbor_rd_init(struct dcbor_rd *rd, const void *buf, size_t len)
{
	rd->p = buf;
	rd->end = rd->p + len;
	rd->err = DCBOR_OK;
}

size_t
dcbor_left(const struct dcbor_rd *rd)
{
	return (size_t)(rd->end - rd->p);
}

int
dcbor_next(struct dcbor_rd *rd, struct dcbor_item *it)
{
	int canon;

	return rd_token(rd, it, &canon);
}

int
dcbor_skip(struct dcbor_rd *rd)
{
	struct dcbor_item it;
	uint64_t need = 1;

	while (need > 0) {
		if (dcbor_next(rd, &it) == -1)
			return -1;
		need--;
		if (it.type == DCBOR_ARRAY)
			need += it.u;
		else if (it.type == DCBOR_MAP)
			need += 2 * it.u;
		else if (it.type == DCBOR_TAG)
			need += 1;
		if (need > dcbor_left(rd))
			return rd_fail(rd, DCBOR_ELENGTH);
	}
	return 0;
}

static int
rd_expect(struct dcbor_rd *rd, struct dcbor_item *it, enum dcbor_type type)
{
	const uint8_t *save = rd->p;

	if (dcbor_next(rd, it) == -1)
		return -1;
	if (it->type != type) {
		rd->p = save;
		return rd_fail(rd, DCBOR_ETYPE);
	}
	return 0;
}

int
dcbor_get_uint(struct dcbor_rd *rd, uint64_t *v)
{
	struct dcbor_item it;

	if (rd_expect(rd, &it, DCBOR_UINT) == -1)
		return -1;
	*v = it.u;
	return 0;
}

int
dcbor_get_int(struct dcbor_rd *rd, int64_t *v)
{
	const uint8_t *save = rd->p;
	struct dcbor_item it;

	if (dcbor_next(rd, &it) == -1)
		return -1;
	/* Like rd_expect: a refused item stays unread. */
	if (it.type != DCBOR_UINT && it.type != DCBOR_NEGINT) {
		rd->p = save;
		return rd_fail(rd, DCBOR_ETYPE);
	}
	if (it.u > INT64_MAX) {
		rd->p = save;
		return rd_fail(rd, DCBOR_ERANGE);
	}
	*v = it.type == DCBOR_UINT ? (int64_t)it.u : -1 - (int64_t)it.u;
	return 0;
}

int
dcbor_get_bool(struct dcbor_rd *rd, bool *v)
{
	struct dcbor_item it;

	if (rd_expect(rd, &it, DCBOR_BOOL) == -1)
		return -1;
	*v = it.b;
	return 0;
}

int
dcbor_get_bytes(struct dcbor_rd *rd, const uint8_t **p, size_t *n)
{
	struct dcbor_item it;

	if (rd_expect(rd, &it, DCBOR_BYTES) == -1)
		return -1;
	*p = it.ptr;
	*n = it.len;
	return 0;
}

int
dcbor_get_fixed(struct dcbor_rd *rd, void *out, size_t n)
{
	const uint8_t *p;
	size_t len;

	if (dcbor_get_bytes(rd, &p, &len) == -1)
		return -1;
	if (len != n)
		return rd_fail(rd, DCBOR_ERANGE);
	memcpy(out, p, n);
	return 0;
}

bool
dcbor_text_is(const char *s, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(s, want, n) == 0;
}

int
dcbor_get_key(struct dcbor_rd *rd, const char *want)
{
	const char *s;
	size_t n;

	if (dcbor_get_text(rd, &s, &n) == -1 || !dcbor_text_is(s, n, want))
		return -1;
	return 0;
}

int
dcbor_get_text(struct dcbor_rd *rd, const char **s, size_t *n)
{
	struct dcbor_item it;

	if (rd_expect(rd, &it, DCBOR_TEXT) == -1)
		return -1;
	*s = (const char *)it.ptr;
	*n = it.len;
	return 0;
}

int
dcbor_get_cstr(struct dcbor_rd *rd, char *out, size_t outlen)
{
	const char *s;
	size_t n;

	if (dcbor_get_text(rd, &s, &n) == -1)
		return -1;
	if (n >= outlen || memchr(s, '\0', n) != NULL)
		return rd_fail(rd, DCBOR_ERANGE);
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int
dcbor_get_array(struct dcbor_rd *rd, uint64_t *n)
{
	struct dcbor_item it;

	if (rd_expect(rd, &it, DCBOR_ARRAY) == -1)
		return -1;
	*n = it.u;
	return 0;
}

int
dcbor_get_map(struct dcbor_rd *rd, uint64_t *n)
{
	struct dcbor_item it;

	if (rd_expect(rd, &it, DCBOR_MAP) == -1)
		return -1;
	*n = it.u;
	return 0;
}

int
dcbor_get_raw(struct dcbor_rd *rd, const uint8_t **p, size_t *n)
{
	const uint8_t *start = rd->p;

	if (dcbor_skip(rd) == -1)
		return -1;
	*p = start;
	*n = (size_t)(rd->p - start);
	return 0;
}

bool
dcbor_take_null(struct dcbor_rd *rd)
{
	if (rd->err == DCBOR_OK && rd->p < rd->end && rd->p[0] == 0xf6) {
		rd->p++;
		return true;
	}
	return false;
}

/* ---- checker ----------------------------------------------------------- */

struct chk_level {
	uint64_t	 left;		/* items still to read at this level */
	bool		 map;
	const uint8_t	*kstart;	/* current key's first byte */
	const uint8_t	*prevk;		/* previous key span */
	size_t		 prevlen;
};

/* Bytewise lexicographic order of encoded keys (RFC 8949 4.2.1). */
static int
key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen;
}

int
dcbor_check(const void *buf, size_t len, int maxdepth, bool canonical,
    size_t *used)
{
	struct chk_level st[DCBOR_MAX_DEPTH + 2];
	struct dcbor_rd rd;
	struct dcbor_item it;
	int depth = 0, canon;

	if (maxdepth > DCBOR_MAX_DEPTH)
		maxdepth = DCBOR_MAX_DEPTH;
	dcbor_rd_init(&rd, buf, len);
	memset(&st[0], 0, sizeof(st[0]));
	st[0].left = 1;
	while (depth > 0 || st[0].left > 0) {
		struct chk_level *l = &st[depth];
		const uint8_t *pos = rd.p;

		if (l->map) {
			/* 'left' counts down keys and values alternately. */
			if (l->left % 2 == 0)
				l->kstart = pos;
			else if (canonical) {
				size_t klen = (size_t)(pos - l->kstart);

				if (l->prevk != NULL) {
					int c = key_cmp(l->prevk, l->prevlen,
					    l->kstart, klen);

					if (c == 0)
						return DCBOR_EDUPKEY;
					if (c > 0)
						return DCBOR_ENONCANON;
				}
				l->prevk = l->kstart;
				l->prevlen = klen;
			}
		}
		if (rd_token(&rd, &it, &canon) == -1)
			return rd.err;
		if (canonical && canon != DCBOR_OK)
			return canon;
		if (canonical && it.type == DCBOR_TEXT &&
		    !utf8_valid(it.ptr, it.len))
			return DCBOR_EUTF8;
		l->left--;
		if (it.type == DCBOR_ARRAY || it.type == DCBOR_MAP ||
		    it.type == DCBOR_TAG) {
			uint64_t n = it.type == DCBOR_MAP ? 2 * it.u :
			    it.type == DCBOR_ARRAY ? it.u : 1;

			/*
			 * Every container counts, empty or not: the depth of
			 * [[...[]...]] must not depend on whether the
			 * innermost array happens to hold something.
			 */
			if (depth + 1 > maxdepth)
				return DCBOR_EDEPTH;
			if (n > 0) {
				depth++;
				memset(&st[depth], 0, sizeof(st[depth]));
				st[depth].left = n;
				st[depth].map = it.type == DCBOR_MAP;
			}
		}
		while (depth > 0 && st[depth].left == 0)
			depth--;
	}
	if (used != NULL)
		*used = (size_t)(rd.p - (const uint8_t *)buf);
	else if (rd.p != rd.end)
		return DCBOR_ETRAILING;
	return DCBOR_OK;
}

/* ---- canonical map order ----------------------------------------------- */

struct pair_span {
	const uint8_t	*k;
	size_t		 klen;
	size_t		 len;	/* key and value */
};

static int
pair_cmp(const void *a, const void *b)
{
	const struct pair_span *x = a, *y = b;

	return key_cmp(x->k, x->klen, y->k, y->klen);
}

int
dcbor_sort_map(struct dcbor_buf *b, size_t start)
{
	struct dcbor_rd rd;
	struct dcbor_item it;
	struct pair_span *ps;
	uint8_t *tmp, *w;
	size_t body;
	int rc = DCBOR_OK;

	dcbor_rd_init(&rd, b->data + start, b->len - start);
	if (dcbor_next(&rd, &it) == -1)
		return rd.err;
	if (it.type != DCBOR_MAP)
		return DCBOR_ETYPE;
	if (it.u < 2)
		return DCBOR_OK;
	body = (size_t)(rd.p - b->data);
	ps = xreallocarray(NULL, it.u, sizeof(*ps));
	for (uint64_t i = 0; i < it.u; i++) {
		const uint8_t *k = rd.p;

		if (dcbor_skip(&rd) == -1)
			break;
		ps[i].k = k;
		ps[i].klen = (size_t)(rd.p - k);
		if (dcbor_skip(&rd) == -1)
			break;
		ps[i].len = (size_t)(rd.p - k);
	}
	if (rd.err != DCBOR_OK) {
		free(ps);
		return rd.err;
	}
	qsort(ps, it.u, sizeof(*ps), pair_cmp);
	tmp = w = xmalloc(b->len - body);
	for (uint64_t i = 0; i < it.u; i++) {
		if (i > 0 && pair_cmp(&ps[i - 1], &ps[i]) == 0)
			rc = DCBOR_EDUPKEY;
		memcpy(w, ps[i].k, ps[i].len);
		w += ps[i].len;
	}
	memcpy(b->data + body, tmp, (size_t)(w - tmp));
	free(tmp);
	free(ps);
	return rc;
}

/*
 * jpos.c: a strict JSON reader that remembers positions (see jpos.h).
 *
 * A recursive descent over the bytes, building jansson values as it goes
 * and recording each member's and element's line and column in an open
 * addressing hash table.  Recursion is bounded by JPOS_MAX_DEPTH, so a
 * hostile file cannot exhaust the stack; the table holds one slot per
 * value, so its size is bounded by the input's.  On an error the reader
 * keeps a stack of the keys and indexes it is inside, to name the path.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hex.h"
#include "jpos.h"
#include "xmalloc.h"

struct jpos_slot {
	const json_t	*parent;	/* NULL: the root or an empty slot */
	char		*key;		/* NULL: an element (or the root) */
	size_t		 index;
	uint64_t	 hash;
	int		 line;		/* 0: the slot is empty */
	int		 col;
};

struct jpos {
	struct jpos_slot *slots;
	size_t		  cap;		/* a power of two */
	size_t		  n;
};

struct frame {
	const char	*key;		/* NULL: an element */
	size_t		 index;
};

struct reader {
	const char		*p;
	const char		*end;
	const char		*bol;	/* first byte of the current line */
	int			 line;
	int			 depth;
	struct jpos		*pos;
	struct jpos_error	*err;
	bool			 failed;
	struct frame		 stack[JPOS_MAX_DEPTH + 1];
};

/* ---- the position table -------------------------------------------- */

static uint64_t
slot_hash(const json_t *parent, const char *key, size_t index)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uintptr_t v = (uintptr_t)parent;
	size_t i;

	for (i = 0; i < sizeof(v); i++) {
		h = (h ^ (v & 0xff)) * 0x100000001b3ull;
		v >>= 8;
	}
	if (key != NULL) {
		for (; *key != '\0'; key++)
			h = (h ^ (unsigned char)*key) * 0x100000001b3ull;
		h = (h ^ 0xff) * 0x100000001b3ull;
	} else {
		for (i = 0; i < sizeof(index); i++) {
			h = (h ^ (index & 0xff)) * 0x100000001b3ull;
			index >>= 8;
		}
	}
	/* FNV only carries changes upward; the table masks low bits. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static bool
slot_match(const struct jpos_slot *s, uint64_t h, const json_t *parent,
    const char *key, size_t index)
{
	if (s->hash != h || s->parent != parent)
		return false;
	if (key == NULL)
		return s->key == NULL && s->index == index;
	return s->key != NULL && strcmp(s->key, key) == 0;
}

static void
table_put(struct jpos *pos, struct jpos_slot *slot)
{
	size_t i = (size_t)slot->hash & (pos->cap - 1);

	while (pos->slots[i].line != 0)
		i = (i + 1) & (pos->cap - 1);
	pos->slots[i] = *slot;
}

static void
table_add(struct jpos *pos, const json_t *parent, const char *key,
    size_t index, int line, int col)
{
	struct jpos_slot s, *old;
	size_t i, oldcap;

	if (2 * (pos->n + 1) > pos->cap) {
		old = pos->slots;
		oldcap = pos->cap;
		pos->cap = oldcap ? oldcap * 2 : 64;
		pos->slots = xcalloc(pos->cap, sizeof(*pos->slots));
		for (i = 0; i < oldcap; i++)
			if (old[i].line != 0)
				table_put(pos, &old[i]);
		free(old);
	}
	s.parent = parent;
	s.key = key != NULL ? xstrdup(key) : NULL;
	s.index = index;
	s.hash = slot_hash(parent, key, index);
	s.line = line;
	s.col = col;
	table_put(pos, &s);
	pos->n++;
}

int
jpos_lookup(const struct jpos *pos, const json_t *parent, const char *key,
    size_t index, int *line, int *col)
{
	uint64_t h;
	size_t i;

	if (pos == NULL || pos->cap == 0)
		return -1;
	h = slot_hash(parent, key, index);
	for (i = (size_t)h & (pos->cap - 1); pos->slots[i].line != 0;
	    i = (i + 1) & (pos->cap - 1)) {
		if (slot_match(&pos->slots[i], h, parent, key, index)) {
			if (line != NULL)
				*line = pos->slots[i].line;
			if (col != NULL)
				*col = pos->slots[i].col;
			return 0;
		}
	}
	return -1;
}

void
jpos_free(struct jpos *pos)
{
	size_t i;

	if (pos == NULL)
		return;
	for (i = 0; i < pos->cap; i++)
		free(pos->slots[i].key);
	free(pos->slots);
	free(pos);
}

/* ---- paths --------------------------------------------------------- */

static bool
key_plain(const char *key)
{
	if (*key == '\0')
		return false;
	for (; *key != '\0'; key++)
		if (!((*key >= 'a' && *key <= 'z') || (*key >= 'A' &&
		    *key <= 'Z') || (*key >= '0' && *key <= '9') ||
		    *key == '_' || *key == '-'))
			return false;
	return true;
}

void
jpos_path_push(char *path, size_t size, const char *key, size_t index)
{
	size_t n = strnlen(path, size);
	char tmp[80];
	size_t i, k;

	if (size == 0 || n >= size - 1)
		return;
	if (key == NULL)
		snprintf(path + n, size - n, "[%zu]", index);
	else if (key_plain(key))
		snprintf(path + n, size - n, "%s%s", n ? "." : "", key);
	else {
		/*
		 * A quoted key, escaped and cut short: only for messages.
		 * Room after the loop: one escape (6), "..." (3), '"', NUL.
		 */
		k = 0;
		tmp[k++] = '"';
		for (i = 0; key[i] != '\0' && k < sizeof(tmp) - 12; i++) {
			unsigned char c = (unsigned char)key[i];

			if (c == '"' || c == '\\') {
				tmp[k++] = '\\';
				tmp[k++] = (char)c;
			} else if (c < 0x20 || c == 0x7f) {
				k += (size_t)snprintf(tmp + k, sizeof(tmp) - k,
				    "\\u%04x", c);
			} else
				tmp[k++] = (char)c;
		}
		if (key[i] != '\0') {
			memcpy(tmp + k, "...", 3);
			k += 3;
		}
		tmp[k++] = '"';
		tmp[k] = '\0';
		snprintf(path + n, size - n, "[%s]", tmp);
	}
}

/* ---- errors -------------------------------------------------------- */

static void
describe_byte(const struct reader *r, char *buf, size_t size)
{
	unsigned char c;

	if (r->p >= r->end)
		snprintf(buf, size, "end of input");
	else if ((c = (unsigned char)*r->p) >= 0x20 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else if (c == '\n')
		snprintf(buf, size, "end of line");
	else
		snprintf(buf, size, "byte 0x%02x", c);
}

static void __attribute__((format(printf, 2, 3)))
fail(struct reader *r, const char *fmt, ...)
{
	struct jpos_error *e = r->err;
	va_list ap;
	int i;

	if (r->failed)
		return;
	r->failed = true;
	e->line = r->line;
	e->col = (int)(r->p - r->bol) + 1;
	e->path[0] = '\0';
	for (i = 1; i <= r->depth && i <= JPOS_MAX_DEPTH; i++)
		if (r->stack[i].key != NULL || r->stack[i].index != SIZE_MAX)
			jpos_path_push(e->path, sizeof(e->path),
			    r->stack[i].key, r->stack[i].index);
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

/* "syntax error at column C: expected WHAT, got <the byte at p>" */
static void
fail_expected(struct reader *r, const char *what)
{
	char got[32];

	describe_byte(r, got, sizeof(got));
	fail(r, "syntax error at column %d: expected %s, got %s",
	    (int)(r->p - r->bol) + 1, what, got);
}

/* ---- the reader ---------------------------------------------------- */

static void
skip_ws(struct reader *r)
{
	while (r->p < r->end) {
		switch (*r->p) {
		case '\n':
			r->line++;
			r->bol = r->p + 1;
			/* FALLTHROUGH */
		case ' ':
		case '\t':
		case '\r':
			r->p++;
			break;
		default:
			return;
		}
	}
}

static json_t	*read_value(struct reader *);

/* Four hex digits at p (bounded by the caller), or -1. */
static long
read_hex4(const char *p)
{
	long v = 0;
	int i, d;

	for (i = 0; i < 4; i++) {
		if ((d = hex_digit(p[i])) < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static void
buf_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*cap - *len < n + 1) {
		while (*cap - *len < n + 1)
			*cap = *cap ? *cap * 2 : 32;
		*buf = xreallocarray(*buf, *cap, 1);
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

static size_t
utf8_put(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629), or 0. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n, i;
	unsigned long cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* A string at r->p (on its '"'); a NUL-free copy, or NULL after fail(). */
static char *
read_string(struct reader *r, size_t *lenp)
{
	char *buf = NULL, u[4];
	size_t len = 0, cap = 0, n;
	long cp, lo;
	const char *run;

	r->p++;
	buf_put(&buf, &len, &cap, "", 0);
	for (;;) {
		run = r->p;
		while (r->p < r->end && *r->p != '"' && *r->p != '\\' &&
		    (unsigned char)*r->p >= 0x20 &&
		    (unsigned char)*r->p < 0x80)
			r->p++;
		buf_put(&buf, &len, &cap, run, (size_t)(r->p - run));
		if (r->p >= r->end) {
			fail(r, "syntax error at column %d: expected '\"' to "
			    "end the string, got end of input",
			    (int)(r->p - r->bol) + 1);
			goto bad;
		}
		if (*r->p == '"') {
			r->p++;
			break;
		}
		if ((unsigned char)*r->p >= 0x80) {
			n = utf8_len((const unsigned char *)r->p,
			    (const unsigned char *)r->end);
			if (n == 0) {
				fail(r, "syntax error at column %d: invalid "
				    "UTF-8 in a string", (int)(r->p - r->bol) + 1);
				goto bad;
			}
			buf_put(&buf, &len, &cap, r->p, n);
			r->p += n;
			continue;
		}
		if ((unsigned char)*r->p < 0x20) {
			fail_expected(r, "'\"' to end the string (control "
			    "characters must be escaped)");
			goto bad;
		}
		/* A backslash. */
		if (r->end - r->p < 2) {
			r->p++;
			fail_expected(r, "an escape after '\\'");
			goto bad;
		}
		r->p++;
		switch (*r->p) {
		case '"': case '\\': case '/':
			buf_put(&buf, &len, &cap, r->p, 1);
			break;
		case 'b': buf_put(&buf, &len, &cap, "\b", 1); break;
		case 'f': buf_put(&buf, &len, &cap, "\f", 1); break;
		case 'n': buf_put(&buf, &len, &cap, "\n", 1); break;
		case 'r': buf_put(&buf, &len, &cap, "\r", 1); break;
		case 't': buf_put(&buf, &len, &cap, "\t", 1); break;
		case 'u':
			if (r->end - r->p < 5 ||
			    (cp = read_hex4(r->p + 1)) < 0) {
				r->p++;
				fail_expected(r, "four hex digits after \\u");
				goto bad;
			}
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				fail(r, "syntax error at column %d: a lone "
				    "low surrogate \\u%04lx", (int)(r->p -
				    r->bol), cp);
				goto bad;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (r->end - r->p < 11 || r->p[5] != '\\' ||
				    r->p[6] != 'u' ||
				    (lo = read_hex4(r->p + 7)) < 0xdc00 ||
				    lo > 0xdfff) {
					fail(r, "syntax error at column %d: "
					    "a high surrogate \\u%04lx without "
					    "its low half", (int)(r->p -
					    r->bol), cp);
					goto bad;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
				r->p += 6;
			}
			if (cp == 0) {
				fail(r, "syntax error at column %d: \\u0000 "
				    "is not allowed", (int)(r->p - r->bol));
				goto bad;
			}
			n = utf8_put(u, (unsigned long)cp);
			buf_put(&buf, &len, &cap, u, n);
			r->p += 4;
			break;
		default:
			fail_expected(r, "one of \" \\ / b f n r t u after "
			    "'\\'");
			goto bad;
		}
		r->p++;
	}
	*lenp = len;
	return buf;
bad:
	free(buf);
	return NULL;
}

static json_t *
read_number(struct reader *r)
{
	const char *start = r->p;
	bool integer = true;
	char *copy, *end;
	json_t *v = NULL;
	long long ll;
	double d;

	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p < r->end && *r->p == '0')
		r->p++;
	else if (r->p < r->end && *r->p >= '1' && *r->p <= '9') {
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	} else {
		fail_expected(r, "a digit");
		return NULL;
	}
	if (r->p < r->end && *r->p == '.') {
		integer = false;
		r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9') {
			fail_expected(r, "a digit after '.'");
			return NULL;
		}
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		integer = false;
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9') {
			fail_expected(r, "a digit in the exponent");
			return NULL;
		}
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	copy = xstrndup(start, (size_t)(r->p - start));
	errno = 0;
	if (integer) {
		ll = strtoll(copy, &end, 10);
		if (errno == ERANGE) {
			r->p = start;
			fail(r, "syntax error at column %d: integer %.40s%s "
			    "out of range", (int)(r->p - r->bol) + 1, copy,
			    strlen(copy) > 40 ? "..." : "");
		} else
			v = json_integer((json_int_t)ll);
	} else {
		d = strtod(copy, &end);
		if (!isfinite(d)) {
			r->p = start;
			fail(r, "syntax error at column %d: number %.40s%s "
			    "out of range", (int)(r->p - r->bol) + 1, copy,
			    strlen(copy) > 40 ? "..." : "");
		} else
			v = json_real(d);
	}
	free(copy);
	return v;
}

static json_t *
read_literal(struct reader *r, const char *word, json_t *v)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) {
		fail_expected(r, "a JSON value");
		return NULL;
	}
	r->p += n;
	return v;
}

static json_t *
read_object(struct reader *r)
{
	json_t *obj = json_object(), *v;
	char *key;
	size_t keylen;
	int line, col, first;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return obj;
	}
	for (;;) {
		if (r->p >= r->end || *r->p != '"') {
			fail_expected(r, "'\"' to begin a key");
			goto bad;
		}
		line = r->line;
		col = (int)(r->p - r->bol) + 1;
		if ((key = read_string(r, &keylen)) == NULL)
			goto bad;
		r->stack[r->depth].key = key;
		if (jpos_lookup(r->pos, obj, key, 0, &first, NULL) == 0) {
			r->p = r->bol + col - 1;
			fail(r, "duplicate key (first at line %d)", first);
			free(key);
			goto bad;
		}
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':') {
			fail_expected(r, "':' after a key");
			free(key);
			goto bad;
		}
		r->p++;
		if ((v = read_value(r)) == NULL) {
			free(key);
			goto bad;
		}
		/* Keys are NUL-free and valid UTF-8: set cannot fail. */
		json_object_set_new_nocheck(obj, key, v);
		table_add(r->pos, obj, key, 0, line, col);
		r->stack[r->depth].key = NULL;
		free(key);
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			skip_ws(r);
			continue;
		}
		if (r->p < r->end && *r->p == '}') {
			r->p++;
			return obj;
		}
		fail_expected(r, "',' or '}' after a member");
		goto bad;
	}
bad:
	r->stack[r->depth].key = NULL;
	json_decref(obj);
	return NULL;
}

static json_t *
read_array(struct reader *r)
{
	json_t *arr = json_array(), *v;
	size_t i = 0;
	int line, col;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return arr;
	}
	for (;; i++) {
		skip_ws(r);
		line = r->line;
		col = (int)(r->p - r->bol) + 1;
		r->stack[r->depth].index = i;
		if ((v = read_value(r)) == NULL)
			goto bad;
		json_array_append_new(arr, v);
		table_add(r->pos, arr, NULL, i, line, col);
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == ']') {
			r->p++;
			r->stack[r->depth].index = SIZE_MAX;
			return arr;
		}
		r->stack[r->depth].index = SIZE_MAX;
		fail_expected(r, "',' or ']' after an element");
		goto bad;
	}
bad:
	r->stack[r->depth].index = SIZE_MAX;
	json_decref(arr);
	return NULL;
}

static json_t *
read_value(struct reader *r)
{
	json_t *v;
	char *s;
	size_t len;

	skip_ws(r);
	if (r->p >= r->end) {
		fail_expected(r, "a JSON value");
		return NULL;
	}
	switch (*r->p) {
	case '{':
	case '[':
		if (r->depth >= JPOS_MAX_DEPTH) {
			fail(r, "syntax error at column %d: nesting deeper "
			    "than %d", (int)(r->p - r->bol) + 1,
			    JPOS_MAX_DEPTH);
			return NULL;
		}
		r->depth++;
		r->stack[r->depth].key = NULL;
		r->stack[r->depth].index = SIZE_MAX;
		v = *r->p == '{' ? read_object(r) : read_array(r);
		r->depth--;
		return v;
	case '"':
		if ((s = read_string(r, &len)) == NULL)
			return NULL;
		v = json_stringn_nocheck(s, len);
		free(s);
		return v;
	case 't':
		return read_literal(r, "true", json_true());
	case 'f':
		return read_literal(r, "false", json_false());
	case 'n':
		return read_literal(r, "null", json_null());
	default:
		if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
			return read_number(r);
		fail_expected(r, "a JSON value");
		return NULL;
	}
}

json_t *
jpos_parse(const char *text, size_t len, struct jpos **posp,
    struct jpos_error *err)
{
	struct reader r;
	json_t *v;
	int line, col;

	memset(&r, 0, sizeof(r));
	r.p = r.bol = text;
	r.end = text + len;
	r.line = 1;
	r.err = err;
	r.pos = xcalloc(1, sizeof(*r.pos));
	r.stack[0].key = NULL;
	r.stack[0].index = SIZE_MAX;
	*posp = NULL;
	if (len > JPOS_MAX_SIZE) {
		fail(&r, "the input is larger than %u bytes (%zu)",
		    JPOS_MAX_SIZE, len);
		jpos_free(r.pos);
		return NULL;
	}
	skip_ws(&r);
	line = r.line;
	col = (int)(r.p - r.bol) + 1;
	if ((v = read_value(&r)) == NULL) {
		jpos_free(r.pos);
		return NULL;
	}
	skip_ws(&r);
	if (r.p < r.end) {
		fail_expected(&r, "end of input after the value");
		json_decref(v);
		jpos_free(r.pos);
		return NULL;
	}
	table_add(r.pos, NULL, NULL, 0, line, col);
	*posp = r.pos;
	return v;
}

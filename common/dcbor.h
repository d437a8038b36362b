/*
 * dcbor.h: deterministic CBOR (RFC 8949 section 4.2.1) on top of libcbor.
 *
 * The writer appends shortest-form heads (libcbor's cbor_encode_*) to a
 * growable buffer; dcbor_sort_map() puts a map's pairs in the canonical
 * order (bytewise order of the encoded keys), so callers may emit pairs in
 * any order.  The reader is a zero-copy pull cursor that decodes each head
 * itself (read as libcbor's streaming decoder reads it: fuzz_dcbor holds
 * the two side by side): no allocation, string items point into the input.
 *
 * dcbor_check() is the gate for untrusted bytes: one well-formed item,
 * definite lengths only, nesting at most maxdepth, every declared count and
 * length checked against the bytes that remain before anyone allocates for
 * it, and (optionally) canonical form.  After it passes, the cursor
 * functions cannot run off the end.
 */
#ifndef DCBOR_H
#define DCBOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DCBOR_MAX_DEPTH	64

enum dcbor_err {
	DCBOR_OK = 0,
	DCBOR_ETRUNC,		/* input ends inside an item */
	DCBOR_EMALFORMED,	/* reserved or invalid initial byte */
	DCBOR_EDEPTH,		/* nesting deeper than allowed */
	DCBOR_ELENGTH,		/* a count or length exceeds the input */
	DCBOR_EINDEF,		/* indefinite length (not deterministic) */
	DCBOR_ENONCANON,	/* not the shortest form, or keys out of order */
	DCBOR_EDUPKEY,		/* the same map key twice */
	DCBOR_ETYPE,		/* an item of another type than expected */
	DCBOR_ERANGE,		/* an integer out of the expected range */
	DCBOR_ETRAILING,	/* bytes after the item */
	DCBOR_EUTF8,		/* a text string that is not UTF-8 */
};

/* A static name for an error code, e.g. "trunc". */
const char	*dcbor_strerror(int err);

/* ---- writer ---- */

struct dcbor_buf {
	uint8_t	*data;
	size_t	 len;
	size_t	 cap;
};

void	 dcbor_buf_init(struct dcbor_buf *b);
void	 dcbor_buf_free(struct dcbor_buf *b);
/* Forget the contents but keep the memory. */
void	 dcbor_buf_reset(struct dcbor_buf *b);
/* Make room for n more bytes and return where they go (len not advanced). */
uint8_t	*dcbor_buf_reserve(struct dcbor_buf *b, size_t n);
/* Hand the bytes to the caller (who frees them); the buffer is empty after. */
uint8_t	*dcbor_buf_steal(struct dcbor_buf *b, size_t *len);

void	dcbor_put_uint(struct dcbor_buf *b, uint64_t v);
void	dcbor_put_int(struct dcbor_buf *b, int64_t v);
/* Negative integer -1 - n (the full CBOR range). */
void	dcbor_put_negint(struct dcbor_buf *b, uint64_t n);
void	dcbor_put_bytes(struct dcbor_buf *b, const void *p, size_t n);
/* The head of a byte string of n bytes that the caller appends itself. */
void	dcbor_put_bytes_head(struct dcbor_buf *b, size_t n);
void	dcbor_put_text(struct dcbor_buf *b, const char *s, size_t n);
void	dcbor_put_cstr(struct dcbor_buf *b, const char *s);
void	dcbor_put_array(struct dcbor_buf *b, size_t n);
void	dcbor_put_map(struct dcbor_buf *b, size_t npairs);
void	dcbor_put_tag(struct dcbor_buf *b, uint64_t tag);
void	dcbor_put_bool(struct dcbor_buf *b, bool v);
void	dcbor_put_null(struct dcbor_buf *b);
/* The shortest of half, single, double that keeps the value exactly. */
void	dcbor_put_float(struct dcbor_buf *b, double v);
/* Append bytes that already hold encoded CBOR. */
void	dcbor_put_raw(struct dcbor_buf *b, const void *p, size_t n);
/*
 * Reorder the pairs of the map whose head starts at offset 'start' (the map
 * must run to the end of the buffer) into canonical key order.
 * Returns DCBOR_OK or DCBOR_EDUPKEY.
 */
int	dcbor_sort_map(struct dcbor_buf *b, size_t start);

/* ---- reader ---- */

enum dcbor_type {
	DCBOR_UINT = 0,
	DCBOR_NEGINT,		/* value is -1 - u */
	DCBOR_BYTES,
	DCBOR_TEXT,
	DCBOR_ARRAY,		/* u = number of items */
	DCBOR_MAP,		/* u = number of pairs */
	DCBOR_TAG,		/* u = tag number; the tagged item follows */
	DCBOR_BOOL,
	DCBOR_NULL,
	DCBOR_UNDEF,
	DCBOR_FLOAT,
};

struct dcbor_item {
	enum dcbor_type	 type;
	uint64_t	 u;	/* integer, count, tag, or string length */
	double		 f;	/* float value */
	bool		 b;	/* bool value */
	const uint8_t	*ptr;	/* string data (bytes, text) */
	size_t		 len;	/* string length */
	const uint8_t	*start;	/* the item's first byte */
	size_t		 head;	/* bytes of the head (before string data) */
};

struct dcbor_rd {
	const uint8_t	*p;
	const uint8_t	*end;
	int		 err;	/* sticky: the first error seen */
};

void	dcbor_rd_init(struct dcbor_rd *rd, const void *buf, size_t len);
/* Read one head (and a string's data). 0 on success, -1 with rd->err set. */
int	dcbor_next(struct dcbor_rd *rd, struct dcbor_item *it);
/* Skip one whole item, nested items included. 0 or -1. */
int	dcbor_skip(struct dcbor_rd *rd);
/* Bytes left; true when the reader has consumed everything. */
size_t	dcbor_left(const struct dcbor_rd *rd);

/* Typed reads: 0 on success, -1 (rd->err = DCBOR_ETYPE, ...) otherwise. */
int	dcbor_get_uint(struct dcbor_rd *rd, uint64_t *v);
int	dcbor_get_int(struct dcbor_rd *rd, int64_t *v);
int	dcbor_get_bool(struct dcbor_rd *rd, bool *v);
int	dcbor_get_bytes(struct dcbor_rd *rd, const uint8_t **p, size_t *n);
/* Bytes of exactly n bytes. */
int	dcbor_get_fixed(struct dcbor_rd *rd, void *out, size_t n);
int	dcbor_get_text(struct dcbor_rd *rd, const char **s, size_t *n);
/* A text from dcbor_get_text (s, n) is the C string want: a map key. */
bool	dcbor_text_is(const char *s, size_t n, const char *want);
/* The next item is the text want (a map key read in canonical order). */
int	dcbor_get_key(struct dcbor_rd *rd, const char *want);
/* Text copied NUL-terminated into out; -1 if it does not fit outlen. */
int	dcbor_get_cstr(struct dcbor_rd *rd, char *out, size_t outlen);
int	dcbor_get_array(struct dcbor_rd *rd, uint64_t *n);
int	dcbor_get_map(struct dcbor_rd *rd, uint64_t *n);
/* Read one whole item and return its encoded span. */
int	dcbor_get_raw(struct dcbor_rd *rd, const uint8_t **p, size_t *n);
/* True when the next item is null (and consume it). */
bool	dcbor_take_null(struct dcbor_rd *rd);

/*
 * In canonical mode text strings must also be valid UTF-8 (RFC 8949
 * 3.1: a text string is UTF-8), so anything that passes can become JSON.
 * Check that buf holds exactly one well-formed item (or, with used != NULL,
 * one item followed by anything; *used gets its length). At most maxdepth
 * containers (arrays, maps, tags; empty ones count) enclose one another.
 * With canonical true, also shortest heads and floats, NaN as f97e00, map
 * keys in bytewise order and no duplicate key (DCBOR_EDUPKEY).  With
 * canonical false only well-formedness is checked: duplicate keys pass,
 * since finding them in unsorted maps needs memory or quadratic time; a
 * reader that cares about duplicates must ask for canonical form.
 * Returns DCBOR_OK or an error code.
 */
int	dcbor_check(const void *buf, size_t len, int maxdepth, bool canonical,
	    size_t *used);

#endif

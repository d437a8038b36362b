/*
 * jcbor.c: the JSON <-> canonical CBOR bridge (see jcbor.h).  Used where
 * the control socket hands the space a payload or a template operand, and
 * where the space shows an entry back as JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dcbor.h"
#include "jcbor.h"
#include "xmalloc.h"

#define BYTES_KEY	"$bytes"

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *
b64_encode(const uint8_t *p, size_t n)
{
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *w = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t x = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
		    p[i + 2];

		*w++ = b64chars[x >> 18];
		*w++ = b64chars[(x >> 12) & 63];
		*w++ = b64chars[(x >> 6) & 63];
		*w++ = b64chars[x & 63];
	}
	if (i < n) {
		uint32_t x = (uint32_t)p[i] << 16;

		if (i + 1 < n)
			x |= (uint32_t)p[i + 1] << 8;
		*w++ = b64chars[x >> 18];
		*w++ = b64chars[(x >> 12) & 63];
		*w++ = i + 1 < n ? b64chars[(x >> 6) & 63] : '=';
		*w++ = '=';
	}
	*w = '\0';
	return out;
}

static int
b64_val(char c)
{
	const char *p;

	if (c == '\0' || (p = strchr(b64chars, c)) == NULL)
		return -1;
	return (int)(p - b64chars);
}

/* Strict padded base64; returns the decoded length or -1. */
static long
b64_decode(const char *s, size_t n, uint8_t *out)
{
	size_t i, o = 0;

	if (n % 4 != 0)
		return -1;
	for (i = 0; i < n; i += 4) {
		int v[4], pad = 0;
		uint32_t x = 0;

		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad > 0 || (v[k] = b64_val(s[i + k])) < 0)
				return -1;
			x = x << 6 | (uint32_t)v[k];
		}
		out[o++] = (uint8_t)(x >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(x >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)x;
	}
	return (long)o;
}

static int
from_json(struct dcbor_buf *b, const json_t *v, int depth, char *err,
    size_t errlen)
{
	void *iter;
	json_t *m;
	size_t i, start;
	double d;

	if (depth > JCBOR_MAX_DEPTH) {
		snprintf(err, errlen, "nesting deeper than %d", JCBOR_MAX_DEPTH);
		return -1;
	}
	switch (json_typeof(v)) {
	case JSON_NULL:
		dcbor_put_null(b);
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
		dcbor_put_bool(b, json_is_true(v));
		return 0;
	case JSON_INTEGER:
		dcbor_put_int(b, (int64_t)json_integer_value(v));
		return 0;
	case JSON_REAL:
		d = json_real_value(v);
		if (!isfinite(d)) {
			snprintf(err, errlen, "non-finite number");
			return -1;
		}
		dcbor_put_float(b, d);
		return 0;
	case JSON_STRING:
		dcbor_put_text(b, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_ARRAY:
		dcbor_put_array(b, json_array_size(v));
		for (i = 0; i < json_array_size(v); i++)
			if (from_json(b, json_array_get(v, i), depth + 1, err,
			    errlen) == -1)
				return -1;
		return 0;
	case JSON_OBJECT:
		m = json_object_get(v, BYTES_KEY);
		if (json_object_size(v) == 1 && json_is_string(m)) {
			uint8_t *tmp = xmalloc(json_string_length(m) / 4 * 3 +
			    1);
			long n = b64_decode(json_string_value(m),
			    json_string_length(m), tmp);

			if (n < 0) {
				free(tmp);
				snprintf(err, errlen, "bad base64 in \"%s\"",
				    BYTES_KEY);
				return -1;
			}
			dcbor_put_bytes(b, tmp, (size_t)n);
			free(tmp);
			return 0;
		}
		start = b->len;
		dcbor_put_map(b, json_object_size(v));
		for (iter = json_object_iter((json_t *)v); iter != NULL;
		    iter = json_object_iter_next((json_t *)v, iter)) {
			dcbor_put_text(b, json_object_iter_key(iter),
			    json_object_iter_key_len(iter));
			if (from_json(b, json_object_iter_value(iter),
			    depth + 1, err, errlen) == -1)
				return -1;
		}
		if (dcbor_sort_map(b, start) != DCBOR_OK) {
			snprintf(err, errlen, "duplicate key");
			return -1;
		}
		return 0;
	default:
		snprintf(err, errlen, "unsupported JSON type");
		return -1;
	}
}

int
jcbor_from_json(struct dcbor_buf *b, const json_t *v, char *err,
    size_t errlen)
{
	size_t len = b->len;

	if (v == NULL) {
		snprintf(err, errlen, "no value");
		return -1;
	}
	if (from_json(b, v, 1, err, errlen) == -1) {
		b->len = len;
		return -1;
	}
	return 0;
}

static json_t *
to_fail(struct dcbor_rd *rd, int e, json_t *partial)
{
	if (rd->err == DCBOR_OK)
		rd->err = e;
	json_decref(partial);
	return NULL;
}

static json_t *
to_json(struct dcbor_rd *rd, int depth)
{
	struct dcbor_item it;
	json_t *j, *c;
	char *s;

	if (depth > JCBOR_MAX_DEPTH)
		return to_fail(rd, DCBOR_EDEPTH, NULL);
	if (dcbor_next(rd, &it) == -1)
		return NULL;
	switch (it.type) {
	case DCBOR_UINT:
		if (it.u > INT64_MAX)
			return json_real((double)it.u);
		return json_integer((json_int_t)it.u);
	case DCBOR_NEGINT:
		if (it.u > INT64_MAX)
			return json_real(-1.0 - (double)it.u);
		return json_integer(-1 - (json_int_t)it.u);
	case DCBOR_FLOAT:
		if (!isfinite(it.f))
			return to_fail(rd, DCBOR_ETYPE, NULL);
		return json_real(it.f);
	case DCBOR_BOOL:
		return json_boolean(it.b);
	case DCBOR_NULL:
		return json_null();
	case DCBOR_TEXT:
		if ((j = json_stringn((const char *)it.ptr, it.len)) == NULL)
			return to_fail(rd, DCBOR_ETYPE, NULL);
		return j;
	case DCBOR_BYTES:
		s = b64_encode(it.ptr, it.len);
		j = json_pack("{s:s}", BYTES_KEY, s);
		free(s);
		return j;
	case DCBOR_ARRAY:
		j = json_array();
		for (uint64_t i = 0; i < it.u; i++) {
			if ((c = to_json(rd, depth + 1)) == NULL)
				return to_fail(rd, DCBOR_ETYPE, j);
			json_array_append_new(j, c);
		}
		return j;
	case DCBOR_MAP:
		j = json_object();
		for (uint64_t i = 0; i < it.u; i++) {
			const char *k;
			size_t klen;

			if (dcbor_get_text(rd, &k, &klen) == -1)
				return to_fail(rd, DCBOR_ETYPE, j);
			if (json_object_getn(j, k, klen) != NULL)
				return to_fail(rd, DCBOR_EDUPKEY, j);
			if ((c = to_json(rd, depth + 1)) == NULL)
				return to_fail(rd, DCBOR_ETYPE, j);
			if (json_object_setn_new(j, k, klen, c) == -1)
				return to_fail(rd, DCBOR_ETYPE, j);
		}
		return j;
	default:
		return to_fail(rd, DCBOR_ETYPE, NULL);
	}
}

json_t *
jcbor_to_json(struct dcbor_rd *rd)
{
	return to_json(rd, 1);
}

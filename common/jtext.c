/*
 * jtext.c: the JSON writer with shortest round-trip reals (see jtext.h).
 * It builds the text in one growing buffer, no allocation per value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtext.h"
#include "xmalloc.h"

struct sbuf {
	char	*s;
	size_t	 len, cap;
};

static void
put(struct sbuf *b, const char *s, size_t n)
{
	if (b->cap - b->len < n + 1) {
		while (b->cap - b->len < n + 1)
			b->cap = b->cap ? b->cap * 2 : 256;
		b->s = xreallocarray(b->s, b->cap, 1);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
puts_(struct sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

char *
jtext_real(double d, char *buf, size_t len)
{
	if (!isfinite(d)) {
		snprintf(buf, len, "null");
		return buf;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, d);
		if (strtod(buf, NULL) != d)
			continue;
		/* %g writes 240 at 2 digits as 2.4e+02: between 1e-4 and 1e16
		 * the same digits go out without an exponent */
		if (strchr(buf, 'e') != NULL && fabs(d) >= 1e-4 &&
		    fabs(d) < 1e16) {
			int k = p - 1 - (int)floor(log10(fabs(d)));

			snprintf(buf, len, "%.*f", k > 0 ? k : 0, d);
		}
		break;
	}
	return buf;
}

static void
put_string(struct sbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': puts_(b, "\\\""); break;
		case '\\': puts_(b, "\\\\"); break;
		case '\n': puts_(b, "\\n"); break;
		case '\r': puts_(b, "\\r"); break;
		case '\t': puts_(b, "\\t"); break;
		case '\b': puts_(b, "\\b"); break;
		case '\f': puts_(b, "\\f"); break;
		default:
			snprintf(esc, sizeof(esc), "\\u00%c%c", hex[c >> 4],
			    hex[c & 15]);
			puts_(b, esc);
		}
	}
	put(b, s + run, n - run);
	put(b, "\"", 1);
}

static void
newline(struct sbuf *b, int indent, int depth)
{
	if (indent <= 0)
		return;
	put(b, "\n", 1);
	for (int i = 0; i < indent * depth; i++)
		put(b, " ", 1);
}

static void
dump(struct sbuf *b, const json_t *j, int indent, int depth)
{
	char num[64];
	const char *k;
	json_t *v;
	size_t i, n;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		n = 0;
		put(b, "{", 1);
		json_object_foreach((json_t *)j, k, v) {
			if (n++ > 0)
				put(b, ",", 1);
			newline(b, indent, depth + 1);
			put_string(b, k, strlen(k));
			puts_(b, indent > 0 ? ": " : ":");
			dump(b, v, indent, depth + 1);
		}
		if (n > 0)
			newline(b, indent, depth);
		put(b, "}", 1);
		break;
	case JSON_ARRAY:
		put(b, "[", 1);
		json_array_foreach((json_t *)j, i, v) {
			if (i > 0)
				put(b, ",", 1);
			newline(b, indent, depth + 1);
			dump(b, v, indent, depth + 1);
		}
		if (json_array_size(j) > 0)
			newline(b, indent, depth);
		put(b, "]", 1);
		break;
	case JSON_STRING:
		put_string(b, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(j));
		puts_(b, num);
		break;
	case JSON_REAL:
		jtext_real(json_real_value(j), num, sizeof(num));
		puts_(b, num);
		/* stays a real when read back: "60" would be an integer */
		if (strcmp(num, "null") != 0 && strpbrk(num, ".eEn") == NULL)
			puts_(b, ".0");
		break;
	case JSON_TRUE:
		puts_(b, "true");
		break;
	case JSON_FALSE:
		puts_(b, "false");
		break;
	default:
		puts_(b, "null");
		break;
	}
}

char *
jtext_dumps(const json_t *j, int indent)
{
	struct sbuf b = { NULL, 0, 0 };

	dump(&b, j, indent, 0);
	if (b.s == NULL)
		b.s = xstrdup("");
	return b.s;
}

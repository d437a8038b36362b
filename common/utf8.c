/*
 * utf8.c: UTF-8 validation and scrubbing (see utf8.h).
 */
#include <stdint.h>

#include "utf8.h"

/* Length of the valid character at p (at most left bytes), or 0. */
static size_t
utf8_char(const unsigned char *p, size_t left)
{
	size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 :
	    (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t cp = n == 2 ? *p & 0x1fu : n == 3 ? *p & 0x0fu : *p & 0x07u;
	size_t i;

	if (n == 0 || n > left)
		return 0;
	if (n == 1)
		return 1;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3fu);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff)
		return 0;
	return n;
}

bool
utf8_valid(const void *buf, size_t n)
{
	const unsigned char *p = buf;

	while (n > 0) {
		size_t k;

		/* ASCII, the common case (keys, names), a byte per test. */
		if (*p < 0x80) {
			p++;
			n--;
			continue;
		}
		k = utf8_char(p, n);

		if (k == 0)
			return false;
		p += k;
		n -= k;
	}
	return true;
}

void
utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t left = 0;

	while (p[left] != '\0')
		left++;
	while (*p != '\0') {
		size_t k = utf8_char(p, left);

		if (k == 0) {
			*p++ = '?';
			left--;
			continue;
		}
		p += k;
		left -= k;
	}
}

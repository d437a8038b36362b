/*
 * xmalloc.c: allocation wrappers that call fatalx on failure, and the
 * heap's figures and trim (see xmalloc.h).
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

void *
xmalloc(size_t size)
{
	void *p;

	if (size == 0)
		size = 1;
	if ((p = malloc(size)) == NULL)
		fatalx("xmalloc: out of memory allocating %zu bytes", size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if ((p = calloc(nmemb, size)) == NULL)
		fatalx("xcalloc: out of memory allocating %zu x %zu", nmemb, size);
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		fatalx("xreallocarray: %zu x %zu overflows", nmemb, size);
	if ((p = realloc(ptr, nmemb * size == 0 ? 1 : nmemb * size)) == NULL)
		fatalx("xreallocarray: out of memory allocating %zu x %zu",
		    nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	return xmemdup(s, strlen(s) + 1);
}

char *
xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void *
xmemdup(const void *src, size_t n)
{
	void *p = xmalloc(n);

	if (n != 0)
		memcpy(p, src, n);
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("xasprintf: out of memory");
	return n;
}

void
xmalloc_heap(size_t *in_use, size_t *free_bytes)
{
	struct mallinfo2 mi = mallinfo2();

	*in_use = mi.uordblks + mi.hblkhd;
	*free_bytes = mi.fordblks;
}

void
xmalloc_trim(void)
{
	/*
	 * glibc's malloc_trim(0) returns the top of the heap and, since 2.8,
	 * every whole page inside a free chunk (madvise MADV_DONTNEED): the
	 * chunks stay free, their pages fault in again when reused.
	 */
	(void)malloc_trim(0);
}

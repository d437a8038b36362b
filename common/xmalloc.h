/*
 * xmalloc.h: allocation that cannot fail (it calls fatal on exhaustion).
 * Out of memory is a broken invariant for this program, not an event.
 * Sizes that come from the network are checked by the caller first.
 */
#ifndef XMALLOC_H
#define XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t size);
void	*xcalloc(size_t nmemb, size_t size);
void	*xreallocarray(void *ptr, size_t nmemb, size_t size);
char	*xstrdup(const char *s);
char	*xstrndup(const char *s, size_t n);
void	*xmemdup(const void *p, size_t n);
int	 xasprintf(char **ret, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif

/*
 * xmalloc.h: allocation that cannot fail (it calls fatal on exhaustion).
 * Out of memory is a broken invariant for this program, not an event.
 * Sizes that come from the network are checked by the caller first.
 * Beside it, the heap's own figures and its trim (glibc's malloc): what a
 * long-running peer reports and how it gives back the free pages a burst
 * of short-lived blocks leaves inside the heap.
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

/* The heap now: bytes in blocks in use (mmapped ones too), and bytes free
 * inside it (which the process may still hold as resident pages). */
void	 xmalloc_heap(size_t *in_use, size_t *free_bytes);
/* Give every whole free page inside the heap back to the system. */
void	 xmalloc_trim(void);

#endif

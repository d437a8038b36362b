/*
 * utf8.h: UTF-8 validity.  JSON (jansson) refuses text that is not UTF-8,
 * so anything a peer or a client sent must be checked or scrubbed before
 * it is quoted into a reply, a trace event or an entry's JSON form.
 */
#ifndef UTF8_H
#define UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when the n bytes at p are well-formed UTF-8 (no surrogates, no
 * overlong forms, nothing above U+10FFFF). */
bool	utf8_valid(const void *p, size_t n);
/* Replace each byte that does not start a valid character with '?'. */
void	utf8_scrub(char *s);

#endif

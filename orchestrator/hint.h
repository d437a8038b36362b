/*
 * hint.h: "did you mean" for a mistyped name (a scenario, a parameter, a
 * measure, a subcommand): the closest candidate by edit distance, when it
 * is close enough to be the likely intent.
 */
#ifndef HINT_H
#define HINT_H

#include <stddef.h>

#include <jansson.h>

/* The candidate closest to word (adjacent swaps count one edit), or NULL
 * when none is within max(1, strlen(word) / 3) edits. */
const char	*hint_closest(const char *word, const char *const *cands,
		    size_t n);
/* The same among obj's keys. */
const char	*hint_closest_key(const char *word, const json_t *obj);
/* " (did you mean \"X\"?)" for the closest of cands, or "", into buf. */
char		*hint_text(const char *word, const char *const *cands, size_t n,
		    char *buf, size_t len);

#endif

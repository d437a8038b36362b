/*
 * jpos.h: a strict JSON reader that remembers where each value came from.
 *
 * jansson reports positions only for syntax errors, but a broken scenario
 * file must name the field and its line after it parsed fine (a wrong type,
 * an unknown key).  jpos_parse() reads RFC 8259 JSON into ordinary jansson
 * values and fills a side table keyed by (container, member key) or
 * (container, element index) -- not by json_t *, because jansson shares one
 * true, false and null among every use.  A member's position is its key's;
 * an element's is its first byte; the root is (NULL, NULL, 0).
 *
 * Stricter than jansson: duplicate keys, "\u0000", invalid UTF-8, integers
 * outside json_int_t, numbers that overflow a double, nesting deeper than
 * JPOS_MAX_DEPTH and inputs over JPOS_MAX_SIZE are refused.
 */
#ifndef JPOS_H
#define JPOS_H

#include <stddef.h>

#include <jansson.h>

#define JPOS_MAX_DEPTH	64
#define JPOS_MAX_SIZE	(1u << 20)
#define JPOS_PATH_MAX	256
#define JPOS_TEXT_MAX	256

struct jpos;

struct jpos_error {
	int	line;			/* 1-based */
	int	col;			/* 1-based, in bytes */
	char	path[JPOS_PATH_MAX];	/* e.g. "steps[3].peer"; "" at the top */
	char	text[JPOS_TEXT_MAX];	/* what was expected, what was found */
};

/* Parse len bytes; the value and *posp, or NULL with *err filled. */
json_t	*jpos_parse(const char *text, size_t len, struct jpos **posp,
	    struct jpos_error *err);
/* Position of parent[key] (key != NULL) or parent[index]; 0 or -1. */
int	 jpos_lookup(const struct jpos *pos, const json_t *parent,
	    const char *key, size_t index, int *line, int *col);
void	 jpos_free(struct jpos *pos);
/* Append ".key" (or ["key"] if not [A-Za-z0-9_-]+) or "[index]" to path. */
void	 jpos_path_push(char *path, size_t size, const char *key,
	    size_t index);

#endif

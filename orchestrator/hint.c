/*
 * hint.c: "did you mean" (see hint.h).  The distance is the optimal string
 * alignment one: insertions, deletions, substitutions and the swap of two
 * adjacent characters each cost one, so "churnn", "chrun" and "chur" are
 * all one edit from "churn".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "xmalloc.h"

#define HINT_MAX_LEN	128	/* longer words are not compared */

static size_t
distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d;
	size_t *m;

	if (la > HINT_MAX_LEN || lb > HINT_MAX_LEN)
		return (size_t)-1;
	m = xcalloc((la + 1) * (lb + 1), sizeof(*m));
#define M(i, j)	m[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		M(i, 0) = i;
	for (size_t j = 0; j <= lb; j++)
		M(0, j) = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t c = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = M(i - 1, j) + 1;

			if (M(i, j - 1) + 1 < v)
				v = M(i, j - 1) + 1;
			if (M(i - 1, j - 1) + c < v)
				v = M(i - 1, j - 1) + c;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && M(i - 2, j - 2) + 1 < v)
				v = M(i - 2, j - 2) + 1;
			M(i, j) = v;
		}
	d = M(la, lb);
#undef M
	free(m);
	return d;
}

const char *
hint_closest(const char *word, const char *const *cands, size_t n)
{
	size_t best = (size_t)-1, limit = strlen(word) / 3;
	const char *pick = NULL;

	if (limit < 1)
		limit = 1;
	for (size_t i = 0; i < n; i++) {
		size_t d;

		if (cands[i] == NULL || strcmp(cands[i], word) == 0)
			continue;
		d = distance(word, cands[i]);
		if (d <= limit && d < best) {
			best = d;
			pick = cands[i];
		}
	}
	return pick;
}

const char *
hint_closest_key(const char *word, const json_t *obj)
{
	const char **keys = xcalloc(json_object_size(obj) + 1,
	    sizeof(*keys)), *pick;
	const char *k;
	json_t *v;
	size_t n = 0;

	json_object_foreach((json_t *)obj, k, v)
		keys[n++] = k;
	pick = hint_closest(word, keys, n);
	free(keys);
	return pick;
}

char *
hint_text(const char *word, const char *const *cands, size_t n, char *buf,
    size_t len)
{
	const char *pick = hint_closest(word, cands, n);

	if (pick != NULL)
		snprintf(buf, len, " (did you mean \"%s\"?)", pick);
	else if (len > 0)
		buf[0] = '\0';
	return buf;
}

/*
 * chunklog.c: an append-only log of fixed-size records in fixed chunks
 * (see chunklog.h).  The chunk table is the only array that grows by
 * doubling, one pointer a chunk; a dropped chunk's pointer leaves the
 * front of the table by one memmove of the pointers left.
 */
#include <stdlib.h>
#include <string.h>

#include "chunklog.h"
#include "xmalloc.h"

void
chunklog_init(struct chunklog *l, size_t recsz, size_t per)
{
	memset(l, 0, sizeof(*l));
	l->recsz = recsz ? recsz : 1;
	l->per = per ? per : 1;
}

void
chunklog_free(struct chunklog *l)
{
	size_t recsz = l->recsz, per = l->per;

	for (size_t i = 0; i < l->nchunk; i++)
		free(l->chunk[i]);
	free(l->chunk);
	chunklog_init(l, recsz, per);
}

void *
chunklog_append(struct chunklog *l)
{
	uint64_t off = l->n - l->first;
	size_t c = (size_t)(off / l->per), k = (size_t)(off % l->per);
	uint8_t *p;

	if (c == l->nchunk) {
		if (l->nchunk == l->capchunk) {
			l->capchunk = l->capchunk ? l->capchunk * 2 : 4;
			l->chunk = xreallocarray(l->chunk, l->capchunk,
			    sizeof(*l->chunk));
		}
		l->chunk[l->nchunk++] = xreallocarray(NULL, l->per, l->recsz);
	}
	p = l->chunk[c] + k * l->recsz;
	memset(p, 0, l->recsz);
	l->n++;
	return p;
}

void *
chunklog_at(const struct chunklog *l, uint64_t i)
{
	uint64_t off;

	if (i < l->first || i >= l->n)
		return NULL;
	off = i - l->first;
	return l->chunk[off / l->per] + (size_t)(off % l->per) * l->recsz;
}

uint64_t
chunklog_count(const struct chunklog *l)
{
	return l->n;
}

uint64_t
chunklog_first(const struct chunklog *l)
{
	return l->first;
}

int
chunklog_drop_first(struct chunklog *l)
{
	/* The oldest chunk is full exactly when a later one exists. */
	if (l->nchunk < 2)
		return 0;
	free(l->chunk[0]);
	memmove(&l->chunk[0], &l->chunk[1],
	    (l->nchunk - 1) * sizeof(*l->chunk));
	l->nchunk--;
	l->first += l->per;
	return 1;
}

size_t
chunklog_bytes(const struct chunklog *l)
{
	return l->nchunk * l->per * l->recsz + l->capchunk * sizeof(*l->chunk);
}

/*
 * idset.c: the id table (see idset.h): linear probing, grown to keep at
 * most half of the slots used.
 */
#include <stdlib.h>
#include <string.h>

#include "idset.h"
#include "xmalloc.h"

void
idset_init(struct idset *s)
{
	memset(s, 0, sizeof(*s));
}

void
idset_free(struct idset *s)
{
	free(s->ids);
	free(s->val);
	free(s->used);
	memset(s, 0, sizeof(*s));
}

static size_t
slot0(const struct idset *s, const uint8_t *id)
{
	uint64_t k;

	memcpy(&k, id, sizeof(k));
	return (size_t)k & (s->cap - 1);
}

/* The slot holding id, or the empty slot where it would go. */
static size_t
find(const struct idset *s, const uint8_t *id)
{
	size_t i = slot0(s, id);

	while (s->used[i] &&
	    memcmp(s->ids + i * IDSET_ID_LEN, id, IDSET_ID_LEN) != 0)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static void
grow(struct idset *s)
{
	struct idset old = *s;

	s->cap = old.cap ? 2 * old.cap : 64;
	s->ids = xcalloc(s->cap, IDSET_ID_LEN);
	s->val = xcalloc(s->cap, sizeof(*s->val));
	s->used = xcalloc(s->cap, 1);
	for (size_t i = 0; i < old.cap; i++) {
		size_t j;

		if (!old.used[i])
			continue;
		j = find(s, old.ids + i * IDSET_ID_LEN);
		memcpy(s->ids + j * IDSET_ID_LEN, old.ids + i * IDSET_ID_LEN,
		    IDSET_ID_LEN);
		s->val[j] = old.val[i];
		s->used[j] = 1;
	}
	free(old.ids);
	free(old.val);
	free(old.used);
}

int
idset_add(struct idset *s, const uint8_t *id, uint32_t v)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap)
		grow(s);
	i = find(s, id);
	if (s->used[i])
		return 0;
	memcpy(s->ids + i * IDSET_ID_LEN, id, IDSET_ID_LEN);
	s->val[i] = v;
	s->used[i] = 1;
	s->n++;
	return 1;
}

bool
idset_get(const struct idset *s, const uint8_t *id, uint32_t *v)
{
	size_t i;

	if (s->cap == 0)
		return false;
	i = find(s, id);
	if (!s->used[i])
		return false;
	if (v != NULL)
		*v = s->val[i];
	return true;
}

size_t
idset_count(const struct idset *s)
{
	return s->n;
}

/*
 * idset.h: a table from 32-byte ids (SHA-256, so already well spread) to
 * a 32-bit value, by open addressing on the id's first eight bytes.  The
 * node store keeps its index in one (value: the entry's place), the walks
 * their sets of ids seen (value unused).  The ids are copied in.
 */
#ifndef IDSET_H
#define IDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDSET_ID_LEN	32

struct idset {
	uint8_t		*ids;		/* cap ids */
	uint32_t	*val;
	uint8_t		*used;
	size_t		 n, cap;	/* cap: a power of two, or 0 */
};

void	idset_init(struct idset *s);
void	idset_free(struct idset *s);
/* Add id with v; 1 if added, 0 if it was there (its value is kept). */
int	idset_add(struct idset *s, const uint8_t *id, uint32_t v);
/* Whether id is in the set; its value into *v when v is not NULL. */
bool	idset_get(const struct idset *s, const uint8_t *id, uint32_t *v);
size_t	idset_count(const struct idset *s);

#endif

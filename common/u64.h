/*
 * u64.h: small helpers on uint64_t, each written once: the qsort
 * comparator and the saturating sum.
 */
#ifndef U64_H
#define U64_H

#include <stdint.h>

/* qsort's comparator for uint64_t: -1, 0 or 1. */
int	u64_cmp(const void *a, const void *b);

/* a + b, or UINT64_MAX where the sum would wrap. */
static inline uint64_t
u64_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

#endif

/*
 * u64.c: the uint64_t comparator (see u64.h); a function, since qsort
 * takes its address.
 */
#include "u64.h"

int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

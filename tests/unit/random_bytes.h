/*
 * random_bytes.h: a malloc'ed buffer of len bytes from random() (seed it
 * with srandom for a repeatable test), for the BLAKE3 and Bao tests.
 */
#ifndef RANDOM_BYTES_H
#define RANDOM_BYTES_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

static uint8_t *
random_bytes(size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)random();
	return p;
}

#endif

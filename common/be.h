/*
 * be.h: big-endian integers in byte arrays (pstore's index file, neg's
 * fingerprints, RIBLT's checksum input).  Inline and alignment-free.
 */
#ifndef BE_H
#define BE_H

#include <stdint.h>

static inline void
be_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t
be_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static inline void
be_put64(uint8_t *p, uint64_t v)
{
	be_put32(p, (uint32_t)(v >> 32));
	be_put32(p + 4, (uint32_t)v);
}

static inline uint64_t
be_get64(const uint8_t *p)
{
	return (uint64_t)be_get32(p) << 32 | be_get32(p + 4);
}

#endif

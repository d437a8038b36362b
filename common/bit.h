/*
 * bit.h: bit i of a bitfield, the most significant bit of byte 0 first
 * (the order of a piece bitfield on the wire and on disk: docs/protocol.md,
 * common/pstore.c).  Inline: the swarm's scheduler tests bits in loops.
 */
#ifndef BIT_H
#define BIT_H

#include <stdbool.h>
#include <stdint.h>

static inline bool
bit_get(const uint8_t *bits, uint32_t i)
{
	return (bits[i / 8] & (0x80u >> (i % 8))) != 0;
}

static inline void
bit_set(uint8_t *bits, uint32_t i)
{
	bits[i / 8] |= (uint8_t)(0x80u >> (i % 8));
}

static inline void
bit_clear(uint8_t *bits, uint32_t i)
{
	bits[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
}

#endif

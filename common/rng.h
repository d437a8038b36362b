/*
 * rng.h: the two small deterministic generators the programs draw from,
 * each written once: splitmix64 (fillers, the RIBLT index walk, the
 * swarm's piece choices, generated content) and xorshift64 (13, 7, 17:
 * the fault filter's and the scenario engine's seeded draws, so a seed
 * replays).  Not for keys: identities and nonces come from OpenSSL.
 * Inline: they sit in hot loops (riblt.c).
 */
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

/* splitmix64: advance *state by the golden gamma and mix it. */
static inline uint64_t
rng_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xorshift64 (13, 7, 17): the next state, stored and returned (never 0 from non-0). */
static inline uint64_t
rng_xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif

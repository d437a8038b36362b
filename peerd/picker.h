/*
 * picker.h: the content swarm's piece scheduler (picker.c).
 */
#ifndef PICKER_H
#define PICKER_H

#include <stdbool.h>
#include <stdint.h>

struct content;
struct source;

/* Ask s for piece i of c: true if sent (and counted in flight). */
typedef bool	(*picker_want_fn)(struct content *c, struct source *s,
		    uint32_t i, uint64_t now);

/* Seed the scheduler's random choices; its requests go out through want. */
void		 picker_init(picker_want_fn want);
/* A pseudo-random number below n (0 if n is 0). */
uint32_t	 picker_rand(uint32_t n);
/*
 * Ask sources for c's missing pieces while they have free slots; in the
 * endgame, a second holder for pieces with one request.
 */
void		 picker_pump(struct content *c);

#endif

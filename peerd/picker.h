/*
 * picker.h: the content swarm's piece scheduler (picker.c).
 */
#ifndef PICKER_H
#define PICKER_H

#include <stdint.h>

struct content;

/* Seed the scheduler's random choices. */
void		 picker_init(void);
/* A pseudo-random number below n (0 if n is 0). */
uint32_t	 picker_rand(uint32_t n);
/*
 * Ask sources for c's missing pieces while they have free slots; in the
 * endgame, a second holder for pieces with one request.
 */
void		 picker_pump(struct content *c);

#endif

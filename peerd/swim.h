/*
 * swim.h: the failure detector of the links (docs/protocol.md section 4,
 * "What was kept of SWIM"): PING, PING_REQ and ACK, and the prober that
 * pings an idle link, closes a silent one and lets a linkless member fade
 * to suspect and dead.  It knows members and links only; view.c runs the
 * prober from its tick, where the views' fills and trims are decided.
 */
#ifndef SWIM_H
#define SWIM_H

#include <stddef.h>
#include <stdint.h>

struct member;

/* Register PING, PING_REQ and ACK with link.c. */
void	 swim_init(void);
/* A PING, PING_REQ or ACK body from m. 0, or -1 if it is malformed. */
int	 swim_recv(struct member *from, uint32_t kind, const uint8_t *body,
	    size_t len);
/*
 * Ping every idle link, close every silent one, fade every linkless
 * member (member_fade), now.
 */
void	 swim_probe(void);
/*
 * When the prober next has work (monotonic ms; UINT64_MAX: none): the
 * first ping or silence among the linked members.
 */
uint64_t swim_next(void);

#endif

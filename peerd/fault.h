/*
 * fault.h: injected faults, applied in peerd's own send and receive paths
 * so that no root and no netem are needed.  Per remote peer: a drop
 * probability and an added delay with jitter (on send), and partition
 * membership (neither sent to nor accepted from).  Every change is traced.
 */
#ifndef FAULT_H
#define FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "identity.h"

struct fault_rule {
	bool		 any;		/* applies to every peer */
	uint8_t		 id[IDENTITY_ID_LEN];
	double		 drop;		/* 0..1 */
	uint32_t	 delay_ms;
	uint32_t	 jitter_ms;
	bool		 partitioned;
};

/* Apply a fault request (see docs/control.md "fault"). 0, or -1 with msg. */
int	fault_apply(json_t *args, char *msg, size_t msglen);
/* Drop everything. */
void	fault_clear(void);
/* On send to id: -1 drop it; else 0 with *delay_us to add. */
int	fault_on_send(const uint8_t id[IDENTITY_ID_LEN], uint64_t *delay_us);
/* On receive from id: true to drop (partitioned). */
bool	fault_on_recv(const uint8_t id[IDENTITY_ID_LEN]);
/* The rules in force, as JSON. */
json_t	*fault_json(void);
/* Seed the drop/jitter PRNG (for reproducible runs). */
void	fault_seed(uint64_t seed);

#endif

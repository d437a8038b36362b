/*
 * urgent.h: the urgent lane's turn (docs/protocol.md section 6.3): the
 * records to send at the end of this loop turn on every link's urgent
 * lane, each once, as one rumor, as they stand then (this turn's claims
 * and completions: they never wait behind a bulk batch); then the turn's
 * hook (take.c's answers and marks).  It reads the records from the
 * replica and hands them to the broadcast through the send function main.c
 * gives it: it knows neither.
 */
#ifndef URGENT_H
#define URGENT_H

#include <stddef.h>
#include <stdint.h>

#include "entry.h"

/* n encoded records (concatenated) to send now, as one urgent rumor. */
typedef void (*urgent_send_fn)(const uint8_t *recs, size_t len, size_t n);
/* The turn's rumor has been queued on every link. */
typedef void (*urgent_turn_fn)(void);

/*
 * Make the turn's event; send rumors with send, then call turn.  It
 * observes the replica: a record this peer completed joins the turn.
 */
void	urgent_init(urgent_send_fn send, urgent_turn_fn turn);
void	urgent_free(void);
/* Send id's record at the end of this turn (once, as it stands then). */
void	urgent_add(const uint8_t id[ENTRY_ID_LEN]);
/* End the turn at the end of this loop turn even with no record queued. */
void	urgent_soon(void);

#endif

/*
 * inbox.h: recon's queue of frames waiting behind records still being
 * applied (docs/protocol.md section 8.1).  Records are verified (an
 * Ed25519 check for every entry new to the replica), so a large frame of
 * them is applied INBOX_SLICE per loop turn; every recon frame that
 * arrives meanwhile waits behind them, so frames are still handled in the
 * order they came.  The inbox knows sessions only as opaque pointers,
 * through the callbacks recon.c gives it.
 */
#ifndef INBOX_H
#define INBOX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct member;

#define INBOX_SLICE	64		/* records applied per loop turn */
#define INBOX_MAX	(256u << 20)	/* bytes of frames held */

struct inbox_ops {
	/* A frame's turn came: handle it (-1: malformed). */
	int	(*dispatch)(struct member *, uint32_t kind, const uint8_t *,
		    size_t);
	/* The session a RECS frame names, or NULL. */
	void	*(*session)(struct member *, uint64_t sid);
	/* One record of that session applied, of bytes encoded. */
	void	 (*applied)(void *session, uint64_t bytes);
};

void	 inbox_init(const struct inbox_ops *ops);
void	 inbox_free(void);
bool	 inbox_empty(void);
/* Whether a frame from that member waits. */
bool	 inbox_has(const struct member *from);
/*
 * Queue a copy of a frame's body (over INBOX_MAX: dropped and counted).
 * A RECON_RECS frame comes with its n records at recs inside body and the
 * session they belong to (NULL: looked up when its turn comes).
 */
void	 inbox_push(struct member *from, uint32_t kind, const uint8_t *body,
	    size_t len, void *session, const uint8_t *recs, uint64_t n);
/* That session ended: its queued records are applied without it. */
void	 inbox_forget(const void *session);
#endif

/*
 * heap.h: when the daemon's tick gives the heap's free pages back
 * (--trim-ms; heap.c).
 */
#ifndef HEAP_H
#define HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_TRIM_MIN	(1u << 20)	/* fresh free bytes worth a trim */
#define HEAP_PUT_OFF	8	/* periods a trim waits for quiet input */

/* The trim's state between two ticks (one per process; tests make more). */
struct heap_trim {
	uint64_t	 last_ms;	/* the last look at the heap */
	uint64_t	 frames_seen;	/* frames in at the previous tick */
	bool		 quiet;		/* none came in since that tick */
	size_t		 low;		/* least free seen since the last trim */
	bool		 have_low;
};

/*
 * At a tick, frames_in the frames received so far: is a look at the heap
 * due (a period since the last, and no frame since the previous tick, or
 * HEAP_PUT_OFF periods whatever comes in)?
 */
bool	 heap_look_due(struct heap_trim *h, uint64_t now_ms,
	    uint32_t period_ms, uint64_t frames_in);
/* After a look, free_bytes free inside the heap: would a trim pay? */
bool	 heap_trim_pays(struct heap_trim *h, size_t free_bytes);
/* Register the heap's gauges (heap.in_use, heap.free). */
void	 heap_init(void);
/*
 * The tick's heap work.  It rides on ticks that run for other work, so it
 * returns UINT64_MAX: never a reason to wake.
 */
uint64_t heap_tick(void);

#endif

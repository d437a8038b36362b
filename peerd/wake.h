/*
 * wake.h: the daemon's timers with slack (wake.c).  A timer is due at a
 * time and may run early or late by a slack of its own; every timer whose
 * window has opened runs in the wake-up that happens anyway (one timer
 * firing, or a loop turn that handled a frame), so timers due close
 * together cost the process one wake-up, not one each.
 */
#ifndef WAKE_H
#define WAKE_H

#include <stdbool.h>
#include <stdint.h>

#define WAKE_MAX	16	/* timers at once (one per timer class) */

struct wake;
typedef void (*wake_fn)(void *arg);

/* A timer that runs fn(arg) when served; not armed.  NULL: table full. */
struct wake	*wake_new(const char *name, wake_fn fn, void *arg);
/* Disarm and forget w (NULL is fine); never from w's own fn. */
void		 wake_free(struct wake *w);
/*
 * Arm (or re-arm) w for due_ms (monotonic): it runs at the first wake-up
 * from due_ms on, by due_ms + late_ms at the latest, and as early as
 * due_ms - early_ms in a wake-up that the timers themselves caused.
 */
void		 wake_at(struct wake *w, uint64_t due_ms, uint32_t early_ms,
		    uint32_t late_ms);
/* Disarm w. */
void		 wake_stop(struct wake *w);
/* Whether w is armed; if so *due_ms is its due time (may be NULL). */
bool		 wake_armed(const struct wake *w, uint64_t *due_ms);
/* Whether the serve under way is the shared timer's own wake-up. */
bool		 wake_fired(void);
/*
 * Run every armed timer whose window has opened (each once, disarmed
 * before its fn runs).  The loop calls it after every turn; the timers'
 * own event calls it when the earliest window closes.
 */
void		 wake_serve(void);

#endif

/*
 * wake.c: the daemon's timers with slack, as Linux's timer slack does for
 * a process's sleeps.  On this host a process woken from sleep costs
 * ~20-40 us of CPU bare and ~75-160 us for a peer with the work around
 * it (build/wakeup; BENCHMARKS.md, "Wake-ups, ninth session"), and a
 * peer's timers (the IHAVE flush, the eager batch, the GRAFT wait, the
 * daemon's tick) each woke it on their own, for work that could have gone
 * in a wake-up that was happening anyway.
 *
 * Each timer has a due time, an early and a late slack.  One libevent
 * timer is armed for the earliest due + late.  After every loop turn
 * (main.c: a frame, a control line or a signal woke the loop) the timers
 * that are due run; when the shared timer fires (the peer would have
 * slept on), those due within their early slack run too.  Early work is
 * pulled only into a wake-up of the timers' own: a loop woken by frames
 * is woken again soon, and work pulled early there would only shorten its
 * period (an IHAVE's window: more IHAVE frames).  A timer with no slack
 * runs at its due time as a plain event would.  Which slack each class
 * may take is the module's, written where its rule is (docs/protocol.md
 * sections 4 and 7).
 */
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "peerd.h"
#include "stats.h"
#include "wake.h"

struct wake {
	const char	*name;
	wake_fn		 fn;
	void		*arg;
	bool		 armed;
	uint64_t	 due_ms;
	uint64_t	 lo_ms;		/* runs from then on ... */
	uint64_t	 hi_ms;		/* ... and by then */
};

static struct wake	 wakes[WAKE_MAX];
static bool		 used[WAKE_MAX];
static size_t		 nused;
static struct event	*wake_ev;
static uint64_t		 wake_ev_ms;	/* wake_ev fires then; 0: not armed */
static bool		 serving;
static bool		 fired;		/* this serve is the timer's own */

static void
wake_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	wake_ev_ms = 0;
	pd_count(wake_timer_runs);
	fired = true;
	wake_serve();
	fired = false;
}

/* wake_ev for the earliest window's end (none armed: not at all). */
static void
wake_sched(void)
{
	uint64_t hi = 0;
	struct timeval tv;

	if (serving || wake_ev == NULL)
		return;
	for (size_t i = 0; i < WAKE_MAX; i++)
		if (used[i] && wakes[i].armed &&
		    (hi == 0 || wakes[i].hi_ms < hi))
			hi = wakes[i].hi_ms;
	if (hi == wake_ev_ms)
		return;
	wake_ev_ms = hi;
	if (hi == 0) {
		event_del(wake_ev);
		return;
	}
	tv = clock_tv_until_ms(hi);
	event_add(wake_ev, &tv);
}

struct wake *
wake_new(const char *name, wake_fn fn, void *arg)
{
	for (size_t i = 0; i < WAKE_MAX; i++) {
		if (used[i])
			continue;
		if (wake_ev == NULL) {
			wake_ev = event_new(pd->base, -1, 0, wake_cb, NULL);
			if (wake_ev == NULL)
				return NULL;
			wake_ev_ms = 0;
		}
		memset(&wakes[i], 0, sizeof(wakes[i]));
		wakes[i].name = name;
		wakes[i].fn = fn;
		wakes[i].arg = arg;
		used[i] = true;
		nused++;
		return &wakes[i];
	}
	log_warnx("wake: no room for timer %s", name);
	return NULL;
}

void
wake_free(struct wake *w)
{
	size_t i;

	if (w == NULL)
		return;
	i = (size_t)(w - wakes);
	if (!used[i])
		return;
	w->armed = false;
	used[i] = false;
	if (--nused == 0 && wake_ev != NULL) {
		/* The last one: the base may go next (tests make a new one). */
		event_free(wake_ev);
		wake_ev = NULL;
		wake_ev_ms = 0;
		return;
	}
	wake_sched();
}

void
wake_at(struct wake *w, uint64_t due_ms, uint32_t early_ms, uint32_t late_ms)
{
	if (w == NULL)
		return;
	w->armed = true;
	w->due_ms = due_ms;
	w->lo_ms = due_ms > early_ms ? due_ms - early_ms : 0;
	w->hi_ms = due_ms + late_ms < due_ms ? UINT64_MAX : due_ms + late_ms;
	if (w->hi_ms == 0)
		w->hi_ms = 1;	/* 0 means "not armed" to wake_sched */
	wake_sched();
}

void
wake_stop(struct wake *w)
{
	if (w == NULL || !w->armed)
		return;
	w->armed = false;
	wake_sched();
}

bool
wake_fired(void)
{
	return fired;
}

bool
wake_armed(const struct wake *w, uint64_t *due_ms)
{
	if (w == NULL || !w->armed)
		return false;
	if (due_ms != NULL)
		*due_ms = w->due_ms;
	return true;
}

void
wake_serve(void)
{
	bool again[WAKE_MAX] = { false };
	uint64_t now;
	bool ran;

	if (serving || nused == 0)
		return;
	serving = true;
	/*
	 * A fn may arm another timer whose window is already open (the
	 * eager batch at the end of this turn): served in the same pass or
	 * the next, each pass running only timers armed and open.  A timer
	 * re-armed by its own fn for a window still open waits for the next
	 * turn (so a fn that keeps itself due cannot spin here).
	 */
	for (;;) {
		now = clock_mono_ms();
		ran = false;
		for (size_t i = 0; i < WAKE_MAX; i++) {
			struct wake *w = &wakes[i];

			if (!used[i] || !w->armed || again[i] ||
			    (fired ? w->lo_ms : w->due_ms) > now)
				continue;
			w->armed = false;
			again[i] = true;
			ran = true;
			pd_count(wake_runs);
			if (now < w->due_ms)
				pd_count(wake_early);
			else if (now > w->due_ms)
				pd_count(wake_late);
			w->fn(w->arg);
		}
		if (!ran)
			break;
	}
	serving = false;
	wake_sched();
}

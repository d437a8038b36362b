/*
 * floor.c: what one Ed25519 sign and one verify cost on this host, timed
 * by the engine all through the run, for the floors of a write's and a
 * take's cost (gossip.cpu_floor_ms_per_write, take.cpu_floor_ms_per_take).
 *
 * A shared VM's speed moves by a third within a minute (one verify read
 * 102 to 146 us in 12 timings two seconds apart), so a floor timed once at
 * the end measures that moment, not the window whose CPU it is set
 * beside.  Instead a batch of FLOOR_BATCH signs and as many verifies is
 * timed (process CPU time, hot caches) every FLOOR_EVERY_MS while the run
 * lasts, and a window's floor is the median batch of those taken inside
 * it.  It costs the engine about 2 ms of CPU a second.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "engine.h"
#include "identity.h"
#include "xmalloc.h"

#define FLOOR_EVERY_MS	1000
#define FLOOR_BATCH	10
#define FLOOR_MIN	5	/* batches a window's median needs */
#define FLOOR_MAX	16384	/* batches kept (4.5 hours) */

struct floor_batch {
	uint64_t	 t_us;
	double		 sign_s, verify_s;
};

struct floor {
	struct identity		 id;
	bool			 have_id;
	uint8_t			 msg[128], sig[IDENTITY_SIG_LEN];
	struct floor_batch	*b;
	size_t			 n;
	struct event		*ev;
};

static double
cpu_lap(struct timespec *t)
{
	struct timespec b;
	double d;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	d = (double)(b.tv_sec - t->tv_sec) +
	    (double)(b.tv_nsec - t->tv_nsec) / 1e9;
	*t = b;
	return d;
}

/* Time one batch now; -1 if no key could be made. */
static int
floor_batch(struct floor *f)
{
	struct floor_batch *b;
	struct timespec t;

	if (!f->have_id) {
		if (identity_generate(&f->id) == -1)
			return -1;
		f->have_id = true;
		memset(f->msg, 0x5c, sizeof(f->msg));
	}
	if (f->n == FLOOR_MAX) {	/* the oldest half goes */
		memmove(f->b, f->b + FLOOR_MAX / 2, (FLOOR_MAX / 2) *
		    sizeof(*f->b));
		f->n = FLOOR_MAX / 2;
	}
	b = &f->b[f->n];
	cpu_lap(&t);
	for (int i = 0; i < FLOOR_BATCH; i++)
		if (identity_sign(&f->id, f->msg, sizeof(f->msg), f->sig) == -1)
			return -1;
	b->sign_s = cpu_lap(&t) / FLOOR_BATCH;
	for (int i = 0; i < FLOOR_BATCH; i++)
		if (identity_verify(f->id.pub, f->msg, sizeof(f->msg),
		    f->sig) == -1)
			return -1;
	b->verify_s = cpu_lap(&t) / FLOOR_BATCH;
	b->t_us = clock_mono_us();
	f->n++;
	return 0;
}

static void
floor_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	floor_batch(arg);
}

/* r's timings, made on first use. */
static struct floor *
floor_get(struct run *r)
{
	if (r->floor == NULL) {
		r->floor = xcalloc(1, sizeof(*r->floor));
		r->floor->b = xcalloc(FLOOR_MAX, sizeof(*r->floor->b));
	}
	return r->floor;
}

void
floor_start(struct run *r)
{
	struct timeval tv = { FLOOR_EVERY_MS / 1000,
	    (FLOOR_EVERY_MS % 1000) * 1000 };
	struct floor *f = floor_get(r);

	floor_batch(f);
	if (f->ev == NULL) {
		f->ev = event_new(r->base, -1, EV_PERSIST, floor_tick, f);
		event_add(f->ev, &tv);
	}
}

void
floor_stop(struct run *r)
{
	if (r->floor != NULL && r->floor->ev != NULL) {
		event_free(r->floor->ev);
		r->floor->ev = NULL;
	}
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
floor_cost(struct run *r, uint64_t since_us, struct floor_cost *out)
{
	struct floor *f = floor_get(r);
	double *s, *v;
	size_t k = 0, first;

	for (first = f->n; first > 0 && f->b[first - 1].t_us >= since_us;
	    first--)
		;
	out->late = 0;
	while (f->n - first < FLOOR_MIN) {	/* a short window: time now */
		if (floor_batch(f) == -1)
			return -1;
		out->late++;
	}
	s = xcalloc(f->n - first, sizeof(*s));
	v = xcalloc(f->n - first, sizeof(*v));
	for (size_t i = first; i < f->n; i++, k++) {
		s[k] = f->b[i].sign_s;
		v[k] = f->b[i].verify_s;
	}
	qsort(s, k, sizeof(*s), dbl_cmp);
	qsort(v, k, sizeof(*v), dbl_cmp);
	out->batches = k;
	out->sign_s = s[k / 2];
	out->verify_s = v[k / 2];
	out->verify_lo_s = v[0];
	out->verify_hi_s = v[k - 1];
	free(s);
	free(v);
	return 0;
}

void
floor_free(struct run *r)
{
	if (r->floor == NULL)
		return;
	floor_stop(r);
	if (r->floor->have_id)
		identity_free(&r->floor->id);
	free(r->floor->b);
	free(r->floor);
	r->floor = NULL;
}

/*
 * urgent.c: the urgent lane's turn (see urgent.h).  The flush runs from
 * the active queue after what is already active in it (a worker's next
 * take after its completion, the other frames of a read), requeued behind
 * them at most URGENT_DEFER times, so it never waits for a poll.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "dcbor.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "urgent.h"
#include "xmalloc.h"

#define URGENT_DEFER	4

static uint8_t			(*urg_ids)[ENTRY_ID_LEN];
static size_t			 nurg, urgsz;
static struct event		*urg_ev;
static unsigned			 urg_deferred;
static struct dcbor_buf		 recbuf, one;	/* the rumor, a record */
static urgent_send_fn		 send_fn;
static urgent_turn_fn		 turn_fn;

static void
urgent_flush(evutil_socket_t fd, short ev, void *arg)
{
	size_t n = 0;

	(void)fd;
	(void)ev;
	(void)arg;
	if (urg_deferred < URGENT_DEFER &&
	    event_base_get_num_events(pd->base, EVENT_BASE_COUNT_ACTIVE) > 0) {
		urg_deferred++;
		event_active(urg_ev, EV_TIMEOUT, 0);
		return;
	}
	urg_deferred = 0;
	dcbor_buf_reset(&recbuf);
	for (size_t i = 0; i < nurg; i++) {
		dcbor_buf_reset(&one);
		if (replica_put_record(&one, urg_ids[i]) == 0)
			continue;
		if (n > 0 && recbuf.len > pd->conf.max_frame / 4) {
			/* A rumor stays well under the frame cap. */
			send_fn(recbuf.data, recbuf.len, n);
			dcbor_buf_reset(&recbuf);
			n = 0;
		}
		dcbor_put_raw(&recbuf, one.data, one.len);
		n++;
	}
	nurg = 0;
	if (n > 0)
		send_fn(recbuf.data, recbuf.len, n);
	turn_fn();
}

void
urgent_soon(void)
{
	if (urg_ev != NULL)
		event_active(urg_ev, EV_TIMEOUT, 0);
}

void
urgent_add(const uint8_t id[ENTRY_ID_LEN])
{
	for (size_t i = 0; i < nurg; i++)
		if (memcmp(urg_ids[i], id, ENTRY_ID_LEN) == 0)
			return;		/* sent as it stands at the flush */
	if (nurg == urgsz) {
		urgsz = urgsz ? urgsz * 2 : 16;
		urg_ids = xreallocarray(urg_ids, urgsz, sizeof(*urg_ids));
	}
	memcpy(urg_ids[nurg++], id, ENTRY_ID_LEN);
	urgent_soon();
}

/* A record this peer completed leaves in the turn. */
static void
urgent_observe(void *arg, const struct replica_event *e)
{
	(void)arg;
	if (e->ev == REPLICA_EV_LOCAL && e->urgent)
		urgent_add(space_rec_id(e->rec));
}

void
urgent_init(urgent_send_fn send, urgent_turn_fn turn)
{
	send_fn = send;
	turn_fn = turn;
	dcbor_buf_init(&recbuf);
	dcbor_buf_init(&one);
	urg_ev = event_new(pd->base, -1, 0, urgent_flush, NULL);
	replica_observe(urgent_observe, NULL);
}

void
urgent_free(void)
{
	if (urg_ev != NULL)
		event_free(urg_ev);
	urg_ev = NULL;
	free(urg_ids);
	urg_ids = NULL;
	nurg = urgsz = 0;
	urg_deferred = 0;
	dcbor_buf_free(&recbuf);
	dcbor_buf_free(&one);
}

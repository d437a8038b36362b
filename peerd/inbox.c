/*
 * inbox.c: recon's frames in arrival order behind records still being
 * applied (see inbox.h).  A RECON_RECS frame is applied INBOX_SLICE
 * records per loop turn from a zero timer (it runs after the loop has
 * polled its sockets, so links, the control socket and timers are served
 * between slices); a protocol frame waiting behind it is handed to recon
 * when its turn comes, so a session still reads every record the other
 * side sent before its next protocol frame.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "dcbor.h"
#include "frame.h"
#include "inbox.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "stats.h"
#include "trace.h"
#include "xmalloc.h"

/* A frame waiting for its turn. */
struct inframe {
	TAILQ_ENTRY(inframe)	 entry;
	struct member		*from;	/* members live until shutdown */
	uint32_t		 kind;
	uint8_t			*body;
	size_t			 len;
	bool			 started;	/* RECS: session looked up */
	void			*s;		/* RECS: NULL once it ended */
	struct dcbor_rd		 rd;		/* RECS: at the next record */
	uint64_t		 left;		/* RECS: records to apply */
};

static TAILQ_HEAD(, inframe) inbox = TAILQ_HEAD_INITIALIZER(inbox);
static size_t inbox_bytes, inbox_frames;
static struct event *inbox_ev;
static const struct inbox_ops *ops;

bool
inbox_has(const struct member *from)
{
	const struct inframe *f;

	TAILQ_FOREACH(f, &inbox, entry)
		if (f->from == from)
			return true;
	return false;
}

static void
inbox_arm(void)
{
	static const struct timeval zero = { 0, 0 };

	/* A zero timer runs after the loop has polled its sockets. */
	if (inbox_ev != NULL && !TAILQ_EMPTY(&inbox) &&
	    !evtimer_pending(inbox_ev, NULL))
		evtimer_add(inbox_ev, &zero);
}

static void
inframe_free(struct inframe *f)
{
	TAILQ_REMOVE(&inbox, f, entry);
	inbox_bytes -= f->len;
	inbox_frames--;
	free(f->body);
	free(f);
}

void
inbox_push(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len, void *s, const uint8_t *recs, uint64_t n)
{
	struct inframe *f;

	if (inbox_bytes + len > INBOX_MAX) {
		pd_count_limit(RECON_INBOX);
		trace_add("recon", "inbox full (%zu bytes): a frame from %s "
		    "dropped", inbox_bytes, from->name);
		return;
	}
	f = xcalloc(1, sizeof(*f));
	f->from = from;
	f->kind = kind;
	f->body = xmalloc(len ? len : 1);
	memcpy(f->body, body, len);
	f->len = len;
	if (recs != NULL) {
		dcbor_rd_init(&f->rd, f->body + (recs - body),
		    len - (size_t)(recs - body));
		f->left = n;
		f->s = s;
		f->started = s != NULL;
		pd_count_add(recon_records_deferred, n);
	}
	TAILQ_INSERT_TAIL(&inbox, f, entry);
	inbox_bytes += len;
	inbox_frames++;
	inbox_arm();
}

/* Apply a RECS frame's records, at most *budget of them. */
static void
inbox_recs(struct inframe *f, unsigned *budget)
{
	uint64_t sid, n;

	if (!f->started) {
		/* Its session began in a frame that waited before it. */
		f->started = true;
		dcbor_rd_init(&f->rd, f->body, f->len);
		(void)dcbor_get_map(&f->rd, &n);
		(void)dcbor_get_key(&f->rd, "sid");
		(void)dcbor_get_uint(&f->rd, &sid);
		(void)dcbor_get_key(&f->rd, "recs");
		(void)dcbor_get_array(&f->rd, &f->left);
		if ((f->s = ops->session(f->from, sid)) == NULL) {
			pd_count_reject(UNASKED_DELTA);
			f->left = 0;
			return;
		}
	}
	while (f->left > 0 && *budget > 0) {
		const uint8_t *p = f->rd.p;

		if (replica_apply_record(f->from, &f->rd) == -1) {
			pd_count(bad_body);
			trace_add("recon", "a malformed record from %s: the "
			    "rest of its frame dropped", f->from->name);
			f->left = 0;
			return;
		}
		f->left--;
		(*budget)--;
		if (f->s != NULL)
			ops->applied(f->s, (uint64_t)(f->rd.p - p));
	}
}

/* One turn: INBOX_SLICE records, and the frames queued among them. */
static void
inbox_cb(evutil_socket_t fd, short what, void *arg)
{
	struct inframe *f;
	unsigned budget = INBOX_SLICE;

	(void)fd;
	(void)what;
	(void)arg;
	while (budget > 0 && (f = TAILQ_FIRST(&inbox)) != NULL) {
		if (f->kind == FRAME_RECON_RECS) {
			inbox_recs(f, &budget);
			if (f->left == 0)
				inframe_free(f);
			continue;
		}
		/* Out of the queue first: the handler may look at it. */
		TAILQ_REMOVE(&inbox, f, entry);
		inbox_bytes -= f->len;
		inbox_frames--;
		/* A protocol frame from a link since gone starts nothing. */
		if (f->from->link != NULL && ops->dispatch(f->from, f->kind,
		    f->body, f->len) == -1) {
			pd_count(bad_body);
			trace_add("recon", "a malformed frame (kind %u) from %s "
			    "after waiting in the inbox", f->kind,
			    f->from->name);
		}
		free(f->body);
		free(f);
		budget--;
	}
	inbox_arm();
}

bool
inbox_empty(void)
{
	return TAILQ_EMPTY(&inbox);
}

void
inbox_forget(const void *s)
{
	struct inframe *f;

	TAILQ_FOREACH(f, &inbox, entry)
		if (f->s == s)
			f->s = NULL;
}

void
inbox_init(const struct inbox_ops *o)
{
	ops = o;
	TAILQ_INIT(&inbox);
	inbox_bytes = inbox_frames = 0;
	inbox_ev = evtimer_new(pd->base, inbox_cb, NULL);
}

void
inbox_free(void)
{
	while (!TAILQ_EMPTY(&inbox))
		inframe_free(TAILQ_FIRST(&inbox));
	if (inbox_ev != NULL)
		event_free(inbox_ev);
	inbox_ev = NULL;
}

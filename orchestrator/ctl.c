/*
 * ctl.c: the asynchronous control client (see ctl.h).
 *
 * A peer's struct ctl holds its bufferevent and the calls in flight.  A
 * connection that fails is not freed in its own callback: it is marked
 * dead, its calls are completed from a zero timer, and the bufferevent is
 * freed there.  A call's completion (reply, timeout, failure) is one
 * function, call_finish(), which unlinks it, stops its timer and runs the
 * callback.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "ctl.h"
#include "fleet.h"
#include "unixsock.h"
#include "xmalloc.h"

/* A call whose answer is late by our own fault gets this much more, so often. */
#define CTL_GRACE_MS	500
#define CTL_GRACES	20
/*
 * A call whose peer is alive but short of CPU (runnable, or its CPU time
 * or its wait for a CPU moved between two looks) gets CTL_GRACE_MS more at a time, up to this
 * much in all: a thousand peers on two cores wait their turn, and waiting
 * is not hanging.  A peer asleep without CPU is blamed after one look (500
 * ms); one that
 * spins (always runnable) is blamed once this is spent.
 */
#define CTL_STARVED_MS	30000

struct ctl_call {
	struct ctl_call	*next;
	struct ctl	*c;
	int		 id;
	char		 cmd[32];
	int		 timeout_ms;
	struct event	*timer;
	ctl_cb		 cb;
	void		*arg;
	enum ctl_status	 st;		/* for a deferred completion */
	int		 graces;	/* re-arms while the delay was ours */
	int		 starved_ms;	/* grace given while the peer starved */
	bool		 starved;	/* it was short of CPU at some look */
	long long	 ticks;		/* the peer's CPU time (and run-queue wait,
					   in ns where schedstat is kept) at the
					   last look */
	char		 err[512];
};

struct ctl {
	struct peer		*p;
	struct event_base	*base;
	struct bufferevent	*bev;
	struct ctl_call		*calls;	/* in flight */
	struct ctl_call		*failed;	/* to complete from the timer */
	struct event		*flush;	/* zero timer: completes failed */
	size_t			 n;
	int			 next_id;
};

static void
call_finish(struct ctl_call *k, enum ctl_status st, json_t *res,
    const char *err)
{
	struct ctl *c = k->c;
	struct ctl_call **pp;

	for (pp = &c->calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			c->n--;
			break;
		}
	event_free(k->timer);
	k->cb(c->p, st, res, err, k->arg);
	free(k);
}

/* Complete the calls queued on c->failed (from the zero timer). */
static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctl *c = arg;
	struct ctl_call *k;

	(void)fd;
	(void)what;
	while ((k = c->failed) != NULL) {
		c->failed = k->next;
		event_free(k->timer);
		k->cb(c->p, k->st, NULL, k->err, k->arg);
		free(k);
	}
}

/* Move every call in flight to the failed queue; free the connection. */
static void
ctl_fail_all(struct ctl *c, const char *why)
{
	struct ctl_call *k;

	while ((k = c->calls) != NULL) {
		c->calls = k->next;
		c->n--;
		evtimer_del(k->timer);
		k->st = CTL_ERROR;
		snprintf(k->err, sizeof(k->err), "%s: %s (%s)", c->p->name, why,
		    k->cmd);
		k->next = c->failed;
		c->failed = k;
	}
	if (c->bev != NULL) {
		bufferevent_free(c->bev);
		c->bev = NULL;
	}
	if (c->failed != NULL)
		event_active(c->flush, EV_TIMEOUT, 0);
}

/*
 * The delay is on this side, not the peer's: the request still sits in
 * our output buffer, or an answer waits unread in our input buffer or the
 * socket.  On a saturated host the orchestrator itself is the process that
 * did not get the CPU, and a peer must not be called hung for that.
 */
static bool
ctl_our_delay(const struct ctl *c)
{
	int pending = 0;

	if (c->bev == NULL)
		return false;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) > 0 ||
	    evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		return true;
	return ioctl(bufferevent_getfd(c->bev), FIONREAD, &pending) == 0 &&
	    pending > 0;
}

/*
 * The peer is alive and short of CPU, or waiting in the kernel for the
 * disk (state D), not asleep (see CTL_STARVED_MS): 1
 * it is, 0 it is not, 2 look again (the first look of a peer not runnable
 * has no CPU time to compare with).
 */
static int
ctl_peer_starved(struct ctl_call *k)
{
	struct peer *p = k->c->p;
	pid_t pid = p->peerd_pid > 0 ? p->peerd_pid : p->pid;
	long long t, before = k->ticks;
	char st;

	if ((t = fleet_progress(pid, &st)) < 0)
		return 0;
	k->ticks = t;
	if (st == 'R' || st == 'D' || (before >= 0 && t > before))
		return 1;
	return before < 0 ? 2 : 0;
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctl_call *k = arg;
	struct timeval grace = { 0, CTL_GRACE_MS * 1000 };
	char err[256];
	int starved;

	(void)fd;
	(void)what;
	if (k->graces < CTL_GRACES && ctl_our_delay(k->c)) {
		k->graces++;
		evtimer_add(k->timer, &grace);
		return;
	}
	if (k->starved_ms < CTL_STARVED_MS && (starved = ctl_peer_starved(k))) {
		k->starved_ms += CTL_GRACE_MS;
		if (starved == 1) {
			k->starved = true;
			k->c->p->starved_graces++;
			if ((uint64_t)k->starved_ms > k->c->p->starved_max_ms)
				k->c->p->starved_max_ms = (uint64_t)k->starved_ms;
		}
		evtimer_add(k->timer, &grace);
		return;
	}
	snprintf(err, sizeof(err), "timeout: %s did not answer %s within %d ms"
	    "%s", k->c->p->name, k->cmd, k->timeout_ms, k->starved ?
	    " (and the grace of a peer short of CPU)" : "");
	call_finish(k, CTL_TIMEOUT, NULL, err);
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct ctl *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	char *line;
	size_t n;

	while (c->bev == bev && (line = evbuffer_readln(in, &n,
	    EVBUFFER_EOL_LF)) != NULL) {
		json_t *rep = json_loadb(line, n, 0, NULL), *e;
		struct ctl_call *k;
		char err[256];
		int id;

		free(line);
		if (rep == NULL) {
			ctl_fail_all(c, "bad reply");
			return;
		}
		id = (int)json_integer_value(json_object_get(rep, "id"));
		for (k = c->calls; k != NULL && k->id != id; k = k->next)
			;
		if (json_object_get(rep, "event") != NULL || k == NULL) {
			json_decref(rep);	/* an event, or a late answer */
			continue;
		}
		if (json_is_true(json_object_get(rep, "ok"))) {
			json_t *res = json_object_get(rep, "result");

			/* No result is a null one: CTL_OK always has one. */
			call_finish(k, CTL_OK, res != NULL ? res : json_null(),
			    "");
		}
		else {
			e = json_object_get(rep, "error");
			snprintf(err, sizeof(err), "%s: %s: %s", c->p->name,
			    json_string_value(json_object_get(e, "code")),
			    json_string_value(json_object_get(e, "message")));
			call_finish(k, CTL_ERROR, NULL, err);
		}
		json_decref(rep);
	}
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ctl *c = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		ctl_fail_all(c, what & BEV_EVENT_EOF ?
		    "control connection closed" : "control connection failed");
}

static struct ctl *
ctl_of(struct event_base *base, struct peer *p)
{
	struct ctl *c = p->ctl;

	if (c == NULL) {
		c = xcalloc(1, sizeof(*c));
		c->p = p;
		c->base = base;
		c->next_id = 1;
		c->flush = evtimer_new(base, flush_cb, c);
		p->ctl = c;
	}
	return c;
}

static int
ctl_open(struct ctl *c, char *err, size_t len)
{
	int fd;

	if ((fd = unixsock_connect(c->p->control, SOCK_NONBLOCK)) == -1) {
		if (errno == ENAMETOOLONG)
			snprintf(err, len, "%s: control path too long",
			    c->p->name);
		else
			snprintf(err, len, "%s: connect %s: %s", c->p->name,
			    c->p->control, strerror(errno));
		return -1;
	}
	if ((c->bev = bufferevent_socket_new(c->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		snprintf(err, len, "%s: connect %s: out of memory", c->p->name,
		    c->p->control);
		close(fd);
		return -1;
	}
	bufferevent_setcb(c->bev, read_cb, NULL, event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return 0;
}

void
ctl_call(struct event_base *base, struct peer *p, const char *cmd,
    json_t *args, int timeout_ms, ctl_cb cb, void *arg)
{
	struct ctl *c = ctl_of(base, p);
	struct ctl_call *k = xcalloc(1, sizeof(*k));
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	json_t *req;
	char *line;

	k->c = c;
	k->id = c->next_id++;
	snprintf(k->cmd, sizeof(k->cmd), "%s", cmd);
	k->timeout_ms = timeout_ms;
	k->ticks = -1;		/* first looked at on a timeout */
	k->cb = cb;
	k->arg = arg;
	k->timer = evtimer_new(base, timeout_cb, k);
	if (!fleet_live(p) || (c->bev == NULL && ctl_open(c, k->err,
	    sizeof(k->err)) == -1)) {
		if (!fleet_live(p))
			snprintf(k->err, sizeof(k->err), "%s is %s", p->name,
			    fleet_state_name(p->state));
		k->st = CTL_ERROR;
		k->next = c->failed;
		c->failed = k;
		event_active(c->flush, EV_TIMEOUT, 0);
		return;
	}
	req = json_pack("{s:i, s:s}", "id", k->id, "cmd", cmd);
	if (args != NULL)
		json_object_set(req, "args", args);
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	bufferevent_write(c->bev, line, strlen(line));
	bufferevent_write(c->bev, "\n", 1);
	free(line);
	k->next = c->calls;
	c->calls = k;
	c->n++;
	evtimer_add(k->timer, &tv);
}

void
ctl_close(struct peer *p)
{
	struct ctl *c = p->ctl;

	if (c != NULL)
		ctl_fail_all(c, "disconnected");
}

size_t
ctl_pending(const struct peer *p)
{
	return p->ctl != NULL ? p->ctl->n : 0;
}

/* Free p's client after the loop: calls in flight complete, CTL_ERROR. */
void
ctl_free(struct peer *p)
{
	struct ctl *c = p->ctl;

	if (c == NULL)
		return;
	/* Every call still owed an answer completes, so nothing leaks. */
	ctl_fail_all(c, "freed");
	flush_cb(-1, 0, c);
	event_free(c->flush);
	free(c);
	p->ctl = NULL;
}

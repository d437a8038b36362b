/*
 * ctl.h: the orchestrator's asynchronous control client, on libevent.
 *
 * One connection per peer (opened on the first call), any number of calls
 * in flight on it, replies matched by id.  Every call has its own bound: a
 * timer that completes it with CTL_TIMEOUT.  Every completion, including
 * a failure to connect and the calls a ctl_close() cuts short, reaches its
 * callback from the event loop, never from inside ctl_call()/ctl_close().
 */
#ifndef CTL_H
#define CTL_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>
#include <jansson.h>

struct peer;

enum ctl_status {
	CTL_OK = 0,		/* res is the "result" */
	CTL_ERROR,		/* err: the peer's error, or the connection's */
	CTL_TIMEOUT,		/* no answer within the call's bound */
};

/* res is borrowed (incref to keep it), never NULL on CTL_OK; err is "". */
typedef void	(*ctl_cb)(struct peer *p, enum ctl_status st, json_t *res,
		    const char *err, void *arg);

/* Send cmd with args (may be NULL) to p; cb gets the answer. */
void	ctl_call(struct event_base *base, struct peer *p, const char *cmd,
	    json_t *args, int timeout_ms, ctl_cb cb, void *arg);
/* Close p's connection: its calls in flight complete with CTL_ERROR. */
void	ctl_close(struct peer *p);
/* Calls in flight to p. */
size_t	ctl_pending(const struct peer *p);
/* Free p's client after the loop: calls in flight complete, CTL_ERROR. */
void	ctl_free(struct peer *p);

#endif

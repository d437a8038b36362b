/*
 * control.h: the JSON control socket (docs/control.md).
 *
 * A Unix stream socket, mode 0600.  Newline-delimited JSON, one object a
 * line: {"id": .., "cmd": "..", "args": {..}}.  Each request becomes a
 * struct ctl_req that the command's handler answers exactly once with
 * ctl_ok or ctl_fail, at once or later (take waits out its settle window);
 * if the client has gone by then, the answer is dropped.  Clients are never
 * freed inside their own callbacks: they are marked dead and reaped from a
 * deferred event.
 */
#ifndef CONTROL_H
#define CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct bufferevent;
struct event_base;
struct ctl_client;

/* The closed list of error codes: X(ENUM, "name"). */
#define CTL_ERRORS(X)					\
	X(BAD_JSON, "bad_json")				\
	X(UNKNOWN_CMD, "unknown_cmd")			\
	X(BAD_ARGS, "bad_args")				\
	X(NOT_FOUND, "not_found")			\
	X(TIMEOUT, "timeout")				\
	X(BUSY, "busy")					\
	X(TOO_LARGE, "too_large")			\
	X(INTERNAL, "internal")

enum ctl_err {
#define CTL_ERR_ENUM(e, n) CTL_##e,
	CTL_ERRORS(CTL_ERR_ENUM)
#undef CTL_ERR_ENUM
	CTL_ERR_MAX
};

struct ctl_req {
	struct ctl_client	*client;	/* NULL once the client is gone */
	json_t			*id;		/* echoed; may be NULL */
	const char		*cmd;		/* static name from the table */
	uint64_t		 start_us;
	struct ctl_req		*next;		/* the client's pending list */
};

struct control;

/* A request's handler (cmd.c's cmd_dispatch): answers req, now or later. */
typedef void	(*control_dispatch_fn)(struct ctl_req *req,
		    struct ctl_client *c, const char *name, json_t *args);

/*
 * Listen on path (removing a stale socket); requests go to dispatch.
 * NULL on error, logged.  Registers the control_clients gauge.
 */
struct control	*control_new(struct event_base *base, const char *path,
		    uint32_t max_clients, uint32_t max_line,
		    control_dispatch_fn dispatch);
/* Close every client and the socket, and unlink it. */
void		 control_free(struct control *ctl);
/*
 * Make a client of a connected bufferevent, which ctl owns from then on
 * (what an accept does; tests attach one end of a bufferevent_pair).
 */
struct ctl_client *control_attach(struct control *ctl,
		    struct bufferevent *bev);
const char	*control_err_name(enum ctl_err err);

/* Answer req with a result (a new reference is stolen); frees req. */
void	ctl_ok(struct ctl_req *req, json_t *result);
/* Answer req with an error; frees req. */
void	ctl_fail(struct ctl_req *req, enum ctl_err err, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Send an event line ({"event": .., ...}, stolen) to one client. */
void	ctl_event(struct ctl_client *c, json_t *event);
/* Attach a subscription to the client; sub_free runs when it goes. */
void	ctl_subscribe(struct ctl_client *c, void *sub, void (*sub_free)(void *));
/* Call fn for every live client with a subscription. */
void	ctl_foreach_sub(void (*fn)(struct ctl_client *, void *, void *),
	    void *arg);
/* Number of connected clients. */
uint32_t control_clients(void);

#endif

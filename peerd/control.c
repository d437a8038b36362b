/*
 * control.c: the control socket's transport (see control.h).  It reads
 * lines, enforces the line cap, parses JSON and hands each request to
 * the dispatch function control_new was given (cmd_dispatch); answers
 * and events go back as single lines.  A client on
 * a socket is read with one recv a readiness (transport_read: no FIONREAD
 * before it), and the lines made for it in one loop turn leave together on
 * the loop's next pass (a zero timer) with one write, not through the
 * bufferevent's write interest (added, woken for, taken off again: two
 * epoll_ctl an answer); only what the socket does not take waits in the
 * bufferevent.  The next pass, not the turn's end: frames a request set
 * going by a zero timer (a rumor's eager batch) then leave in the same
 * pass as its answer, before the client can have sent what it does next
 * (a test that faults a link around one write relies on it).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "clock.h"
#include "jtext.h"
#include "control.h"
#include "log.h"
#include "stats.h"
#include "peerd.h"
#include "trace.h"
#include "transport.h"
#include "utf8.h"
#include "xmalloc.h"

/* A client whose unread output passes this is too slow: drop it. */
#define CTL_OUTPUT_MAX	(64u << 20)

struct ctl_client {
	TAILQ_ENTRY(ctl_client)	 entry;
	struct bufferevent	*bev;
	struct event		*rd_ev;		/* reads the socket; NULL: bev */
	struct evbuffer		*stage;		/* this turn's lines (a socket) */
	uint64_t		 serial;
	bool			 dead;		/* reap at the deferred point */
	bool			 closing;	/* close once output drains */
	struct ctl_req		*pending;	/* requests not yet answered */
	void			*sub;
	void			(*sub_free)(void *);
};

struct control {
	struct event_base	*base;
	struct evconnlistener	*listener;
	char			*path;
	uint32_t		 max_clients;
	uint32_t		 max_line;
	uint32_t		 nclients;
	uint64_t		 serial;
	struct event		*reaper;
	struct event		*flush;		/* the next pass: ctl_flush */
	bool			 flush_armed;
	control_dispatch_fn	 dispatch;
	TAILQ_HEAD(, ctl_client) clients;
};

static struct control *ctl_global;

static const char *const ctl_err_names[] = {
#define CTL_ERR_NAME(e, n) n,
	CTL_ERRORS(CTL_ERR_NAME)
#undef CTL_ERR_NAME
};

const char *
control_err_name(enum ctl_err err)
{
	return (unsigned)err < CTL_ERR_MAX ? ctl_err_names[err] : "internal";
}

uint32_t
control_clients(void)
{
	return ctl_global ? ctl_global->nclients : 0;
}

static void
ctl_kill(struct ctl_client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	if (c->rd_ev != NULL)
		event_del(c->rd_ev);
	event_active(ctl_global->reaper, EV_TIMEOUT, 0);
}

static void
ctl_client_free(struct ctl_client *c)
{
	struct ctl_req *r;

	for (r = c->pending; r != NULL; r = r->next)
		r->client = NULL;
	if (c->sub != NULL && c->sub_free != NULL)
		c->sub_free(c->sub);
	TAILQ_REMOVE(&ctl_global->clients, c, entry);
	ctl_global->nclients--;
	if (c->rd_ev != NULL)
		event_free(c->rd_ev);
	if (c->stage != NULL)
		evbuffer_free(c->stage);
	bufferevent_free(c->bev);
	free(c);
}

static void
ctl_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct control *ctl = arg;
	struct ctl_client *c, *next;

	(void)fd;
	(void)ev;
	for (c = TAILQ_FIRST(&ctl->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->dead)
			ctl_client_free(c);
	}
}

/* Bytes queued to c: the bufferevent's and this turn's. */
static size_t
ctl_queued(struct ctl_client *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev)) +
	    (c->stage != NULL ? evbuffer_get_length(c->stage) : 0);
}

/*
 * c's lines of this turn to its socket, in one write, when nothing older
 * waits in the bufferevent (else behind it: the order is kept); the rest
 * the bufferevent writes when the socket can take it.  A write error is
 * left for the bufferevent's own write to find, as on a link.
 */
static void
ctl_flush_client(struct ctl_client *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	if (evbuffer_get_length(out) == 0)
		evbuffer_write(c->stage, bufferevent_getfd(c->bev));
	if (evbuffer_get_length(c->stage) > 0)
		evbuffer_add_buffer(out, c->stage);
	else if (c->closing && evbuffer_get_length(out) == 0)
		ctl_kill(c);
}

/* The loop's next pass: every client's lines of the turn leave (ctl_send). */
static void
ctl_flush(evutil_socket_t fd, short ev, void *arg)
{
	struct control *ctl = arg;
	struct ctl_client *c;

	(void)fd;
	(void)ev;
	ctl->flush_armed = false;
	TAILQ_FOREACH(c, &ctl->clients, entry)
		if (!c->dead && c->stage != NULL &&
		    evbuffer_get_length(c->stage) > 0)
			ctl_flush_client(c);
}

static void
ctl_send(struct ctl_client *c, json_t *msg)
{
	struct evbuffer *out;
	char *s;

	if (c == NULL || c->dead) {
		json_decref(msg);
		return;
	}
	s = jtext_dumps(msg, 0);	/* reals in their shortest form */
	json_decref(msg);
	if (s == NULL)
		return;
	out = bufferevent_get_output(c->bev);
	if (c->stage != NULL && evbuffer_get_length(out) == 0) {
		out = c->stage;
		if (!ctl_global->flush_armed) {
			static const struct timeval now = { 0, 0 };

			ctl_global->flush_armed = true;
			evtimer_add(ctl_global->flush, &now);
		}
	}
	evbuffer_add(out, s, strlen(s));
	evbuffer_add(out, "\n", 1);
	free(s);
	if (ctl_queued(c) > CTL_OUTPUT_MAX) {
		log_warnx("control: client %llu too slow, dropped",
		    (unsigned long long)c->serial);
		pd_count_limit(CONTROL_OUTPUT);
		ctl_kill(c);
	}
}

static void
ctl_req_unlink(struct ctl_req *req)
{
	struct ctl_req **rp;

	if (req->client == NULL)
		return;
	for (rp = &req->client->pending; *rp != NULL; rp = &(*rp)->next)
		if (*rp == req) {
			*rp = req->next;
			break;
		}
}

static void
ctl_req_free(struct ctl_req *req)
{
	ctl_req_unlink(req);
	json_decref(req->id);
	free(req);
}

static json_t *
ctl_id(const struct ctl_req *req)
{
	return req->id ? json_incref(req->id) : json_null();
}

void
ctl_ok(struct ctl_req *req, json_t *result)
{
	json_t *msg;

	if (result == NULL)
		result = json_object();
	msg = json_pack("{s:o, s:b, s:o}", "id", ctl_id(req), "ok", 1,
	    "result", result);
	pd_hist(control_rtt, clock_mono_us() - req->start_us);
	ctl_send(req->client, msg);
	ctl_req_free(req);
}

static void
ctl_fail_v(struct ctl_client *c, json_t *id, enum ctl_err err,
    const char *fmt, va_list ap)
{
	char msgtext[512];
	json_t *msg;

	/*
	 * Messages quote what the client sent, cut to a length, and a cut can
	 * split a character; jansson would refuse the reply.
	 */
	vsnprintf(msgtext, sizeof(msgtext), fmt, ap);
	utf8_scrub(msgtext);
	pd_count(control_errors);
	msg = json_pack("{s:o, s:b, s:{s:s, s:s}}", "id",
	    id ? json_incref(id) : json_null(), "ok", 0, "error", "code",
	    control_err_name(err), "message", msgtext);
	ctl_send(c, msg);
}

void
ctl_fail(struct ctl_req *req, enum ctl_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_fail_v(req->client, req->id, err, fmt, ap);
	va_end(ap);
	ctl_req_free(req);
}

static void
ctl_fail_now(struct ctl_client *c, json_t *id, enum ctl_err err,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_fail_v(c, id, err, fmt, ap);
	va_end(ap);
}

void
ctl_event(struct ctl_client *c, json_t *event)
{
	ctl_send(c, event);
}

void
ctl_subscribe(struct ctl_client *c, void *sub, void (*sub_free)(void *))
{
	if (c->sub != NULL && c->sub_free != NULL)
		c->sub_free(c->sub);
	c->sub = sub;
	c->sub_free = sub_free;
}

void
ctl_foreach_sub(void (*fn)(struct ctl_client *, void *, void *), void *arg)
{
	struct ctl_client *c;

	if (ctl_global == NULL)
		return;
	TAILQ_FOREACH(c, &ctl_global->clients, entry)
		if (!c->dead && c->sub != NULL)
			fn(c, c->sub, arg);
}

/* One request line: parse, then the command table takes over. */
static void
ctl_line(struct ctl_client *c, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg, *id, *cmdv, *args;
	struct ctl_req *req;

	pd_count(control_requests);
	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (msg == NULL) {
		ctl_fail_now(c, NULL, CTL_BAD_JSON, "column %d: %s",
		    jerr.column, jerr.text);
		return;
	}
	if (!json_is_object(msg)) {
		ctl_fail_now(c, NULL, CTL_BAD_JSON,
		    "a request is a JSON object");
		json_decref(msg);
		return;
	}
	id = json_object_get(msg, "id");
	if (id != NULL && !json_is_integer(id) && !json_is_string(id) &&
	    !json_is_null(id)) {
		ctl_fail_now(c, NULL, CTL_BAD_ARGS,
		    "\"id\" must be an integer or a string");
		json_decref(msg);
		return;
	}
	cmdv = json_object_get(msg, "cmd");
	if (!json_is_string(cmdv)) {
		ctl_fail_now(c, id, CTL_BAD_ARGS,
		    "\"cmd\" must be a string naming a command");
		json_decref(msg);
		return;
	}
	args = json_object_get(msg, "args");
	req = xcalloc(1, sizeof(*req));
	req->client = c;
	req->id = id ? json_incref(id) : NULL;
	req->start_us = clock_mono_us();
	req->next = c->pending;
	c->pending = req;
	ctl_global->dispatch(req, c, json_string_value(cmdv), args);
	json_decref(msg);
}

static void
ctl_read_cb(struct bufferevent *bev, void *arg)
{
	struct ctl_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr eol;
	size_t n, eol_len;
	char *line;

	while (!c->dead && !c->closing) {
		eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		if (eol.pos < 0) {
			if (evbuffer_get_length(in) > ctl_global->max_line)
				goto too_large;
			return;
		}
		n = (size_t)eol.pos;
		if (n > ctl_global->max_line)
			goto too_large;
		line = (char *)evbuffer_pullup(in, (ssize_t)(n + 1));
		if (n > 0 && !(n == 1 && line[0] == '\r'))
			ctl_line(c, line, n);
		evbuffer_drain(in, n + 1);
	}
	return;
too_large:
	pd_count_limit(CONTROL_LINE);
	trace_add("control", "client %llu: line over %u bytes, closed",
	    (unsigned long long)c->serial, ctl_global->max_line);
	ctl_fail_now(c, NULL, CTL_TOO_LARGE, "line longer than %u bytes",
	    ctl_global->max_line);
	evbuffer_drain(in, evbuffer_get_length(in));
	c->closing = true;
	bufferevent_disable(bev, EV_READ);
	if (c->rd_ev != NULL)
		event_del(c->rd_ev);
	if (ctl_queued(c) == 0)
		ctl_kill(c);
}

/*
 * A client's socket is readable: one recv into its input, its whole lines
 * run, and another recv only if that one filled TRANSPORT_READ_MAX (a
 * shorter read emptied the socket).  End of stream or an error ends the
 * client, as the bufferevent's event did.
 */
static void
ctl_sock_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ctl_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(c->bev);

	(void)ev;
	for (int pass = 0; pass < 16 && !c->dead && !c->closing; pass++) {
		ssize_t n = transport_read(fd, in);

		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			return;
		if (n <= 0) {
			ctl_kill(c);
			return;
		}
		pd_count(control_reads);
		ctl_read_cb(c->bev, c);
		if ((size_t)n < TRANSPORT_READ_MAX)
			return;
	}
}

static void
ctl_write_cb(struct bufferevent *bev, void *arg)
{
	struct ctl_client *c = arg;

	(void)bev;
	if (c->closing && ctl_queued(c) == 0)
		ctl_kill(c);
}

static void
ctl_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ctl_client *c = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		ctl_kill(c);
}

static void
ctl_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct control *ctl = arg;
	struct bufferevent *bev;

	(void)l;
	(void)sa;
	(void)salen;
	bev = bufferevent_socket_new(ctl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		close(fd);
		return;
	}
	control_attach(ctl, bev);
}

struct ctl_client *
control_attach(struct control *ctl, struct bufferevent *bev)
{
	struct ctl_client *c;
	evutil_socket_t fd = bufferevent_getfd(bev);

	c = xcalloc(1, sizeof(*c));
	c->serial = ++ctl->serial;
	c->bev = bev;
	TAILQ_INSERT_TAIL(&ctl->clients, c, entry);
	ctl->nclients++;
	bufferevent_setcb(c->bev, ctl_read_cb, ctl_write_cb, ctl_event_cb, c);
	/* A socket is read and written here (a pair, as fuzz_control's, not). */
	if (fd != -1 && (c->rd_ev = event_new(ctl->base, fd,
	    EV_READ | EV_PERSIST, ctl_sock_cb, c)) != NULL) {
		c->stage = evbuffer_new();
		/* A bufferevent freezes its input's end for its own reads. */
		evbuffer_unfreeze(bufferevent_get_input(bev), 0);
	}
	if (ctl->nclients > ctl->max_clients) {
		pd_count_limit(CONTROL_CLIENTS);
		ctl_fail_now(c, NULL, CTL_BUSY, "too many control clients (%u)",
		    ctl->max_clients);
		c->closing = true;
		bufferevent_enable(c->bev, EV_WRITE);
		return c;
	}
	if (c->rd_ev != NULL && event_add(c->rd_ev, NULL) == 0)
		bufferevent_enable(c->bev, EV_WRITE);
	else
		bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return c;
}

static uint64_t
gauge_clients(void)
{
	return control_clients();
}

struct control *
control_new(struct event_base *base, const char *path, uint32_t max_clients,
    uint32_t max_line, control_dispatch_fn dispatch)
{
	struct control *ctl;
	struct sockaddr_un sun;
	mode_t old;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("control: socket path too long (%zu bytes, max %zu): %s",
		    strlen(path), sizeof(sun.sun_path) - 1, path);
		return NULL;
	}
	strncpy(sun.sun_path, path, sizeof(sun.sun_path) - 1);
	if (unlink(path) == -1 && errno != ENOENT) {
		log_warn("control: unlink %s", path);
		return NULL;
	}
	ctl = xcalloc(1, sizeof(*ctl));
	ctl->base = base;
	ctl->path = xstrdup(path);
	ctl->max_clients = max_clients;
	ctl->max_line = max_line;
	ctl->dispatch = dispatch;
	TAILQ_INIT(&ctl->clients);
	old = umask(0177);
	ctl->listener = evconnlistener_new_bind(base, ctl_accept_cb, ctl,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64,
	    (struct sockaddr *)&sun, (int)sizeof(sun));
	umask(old);
	if (ctl->listener == NULL) {
		log_warn("control: bind %s", path);
		free(ctl->path);
		free(ctl);
		return NULL;
	}
	chmod(path, 0600);
	ctl->reaper = event_new(base, -1, 0, ctl_reap, ctl);
	ctl->flush = event_new(base, -1, 0, ctl_flush, ctl);
	ctl_global = ctl;
	stats_gauge("control_clients", gauge_clients);
	return ctl;
}

void
control_free(struct control *ctl)
{
	struct ctl_client *c;

	if (ctl == NULL)
		return;
	/* Last words (the answer to "shutdown") go out before the close. */
	while ((c = TAILQ_FIRST(&ctl->clients)) != NULL) {
		struct evbuffer *out = bufferevent_get_output(c->bev);

		/* bufferevents freeze their output's front; thaw to write. */
		evbuffer_unfreeze(out, 1);
		if (c->stage != NULL)
			evbuffer_add_buffer(out, c->stage);
		evbuffer_write(out, bufferevent_getfd(c->bev));
		ctl_client_free(c);
	}
	evconnlistener_free(ctl->listener);
	event_free(ctl->reaper);
	event_free(ctl->flush);
	unlink(ctl->path);
	free(ctl->path);
	free(ctl);
	ctl_global = NULL;
}

/*
 * link.c: links, their state machine and the send path
 * (see link.h).  Sockets are libevent bufferevents; a link is never freed
 * inside its own callback: link_close marks it DEAD and the reaper event
 * frees it, clearing the member's back-pointer.  What carries the bytes
 * (TCP or TLS) is transport.c's: on a channel the transport authenticated
 * (TLS), frames from its peer go bare both ways and any other "from" closes
 * the link (frame_open_channel); on a TCP link whose handshake agreed
 * keys (handshake.c) frames after UP carry a MAC (frame_open_keyed).  The link layer knows no
 * consumer: modules register handlers for their frame kinds
 * (link_register) and observe links going up and down (link_observe);
 * it calls nothing above it.  The handshake is handshake.c's, the receive
 * path (two-stage reads, receiver checks) rx.c's; link_int.h is what the
 * three share.
 */
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/rand.h>

#include "clock.h"
#include "dcbor.h"
#include "fault.h"
#include "frame.h"
#include "handshake.h"
#include "link.h"
#include "link_int.h"
#include "linkkey.h"
#include "knob.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "rx.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"
#include "xmalloc.h"

#define LINK_IO_CHUNK		(1u << 20)	/* bytes a wakeup, each way */
#define LINK_OBSERVERS_MAX	8
#define LINK_BULK_LOWAT		(64u << 10)	/* bulk waits above this */

static TAILQ_HEAD(, link)	 links = TAILQ_HEAD_INITIALIZER(links);
static struct evconnlistener	*listener;
static struct event		*reaper_ev;
static uint64_t			 link_serial;
static struct dcbor_buf		 sendbuf;
static link_handler_fn		 handlers[FRAME_KIND_MAX];
static link_observer_fn		 observers[LINK_OBSERVERS_MAX];
static size_t			 nobservers;

static const char *const link_state_names[] = {
#define LINK_STATE_NAME(e, n) n,
	LINK_STATES(LINK_STATE_NAME)
#undef LINK_STATE_NAME
};

static void	link_event_cb(struct bufferevent *, short, void *);

void
link_register(uint32_t kind, link_handler_fn fn)
{
	if (kind < FRAME_KIND_MAX && kind != FRAME_CHANNEL_HELLO &&
	    kind != FRAME_BYE)
		handlers[kind] = fn;
}

void
link_observe(link_observer_fn fn)
{
	for (size_t i = 0; i < nobservers; i++)
		if (observers[i] == fn)
			return;
	if (nobservers == LINK_OBSERVERS_MAX)
		fatalx("link_observe: more than %d observers",
		    LINK_OBSERVERS_MAX);
	observers[nobservers++] = fn;
}

void
link_notify(struct member *m, bool up)
{
	for (size_t i = 0; i < nobservers; i++)
		observers[i](m, up);
}

const char *
link_state_name(enum link_state s)
{
	return (unsigned)s <= LINK_DEAD ? link_state_names[s] : "unknown";
}

int
link_fsm_next(enum link_state state, enum link_event ev)
{
	if (ev == LINK_EV_CLOSE)
		return LINK_DEAD;
	switch (state) {
	case LINK_CONNECTING:
		return ev == LINK_EV_CONNECTED ? LINK_HELLO_SENT : -1;
	case LINK_HELLO_SENT:
		return ev == LINK_EV_HELLO ? LINK_PROOF_SENT : -1;
	case LINK_PROOF_SENT:
		return ev == LINK_EV_PROOF ? LINK_UP : -1;
	default:
		return -1;
	}
}

uint32_t
link_count(void)
{
	struct link *l;
	uint32_t n = 0;

	TAILQ_FOREACH(l, &links, entry)
		if (l->state != LINK_DEAD)
			n++;
	return n;
}

/* Links that count against --max-links: proven ones and our own dials. */
uint32_t
link_count_budget(const struct link *except)
{
	struct link *l;
	uint32_t n = 0;

	TAILQ_FOREACH(l, &links, entry)
		if (l != except && l->state != LINK_DEAD &&
		    (l->state == LINK_UP || l->outbound))
			n++;
	return n;
}

/*
 * Accepted links that have not proven a key yet, all of them (ip 0) or
 * those from one address.  *victim gets the one to close for room: the
 * oldest that has not even sent a valid hello, else the oldest.
 */
static uint32_t
link_count_unproven(uint32_t ip, struct link **victim)
{
	struct link *l, *oldest = NULL, *silent = NULL;
	uint32_t n = 0;

	TAILQ_FOREACH(l, &links, entry) {
		if (l->state == LINK_DEAD || l->state == LINK_UP ||
		    l->outbound || (ip != 0 && l->ip != ip))
			continue;
		/* The list is in accept order: the first found is the oldest. */
		if (oldest == NULL)
			oldest = l;
		if (silent == NULL && l->member == NULL)
			silent = l;
		n++;
	}
	*victim = silent != NULL ? silent : oldest;
	return n;
}


static void
link_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct link *l, *next;

	(void)fd;
	(void)ev;
	(void)arg;
	for (l = TAILQ_FIRST(&links); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (l->state != LINK_DEAD)
			continue;
		TAILQ_REMOVE(&links, l, entry);
		if (l->member != NULL && l->member->link == l)
			l->member->link = NULL;
		if (l->rx_ev != NULL)
			event_free(l->rx_ev);
		rx_put(l->rx, l->rx_cap);
		linkkey_eph_free(&l->eph);
		linkkey_mac_free(&l->mac_tx);
		linkkey_mac_free(&l->mac_rx);
		evbuffer_remove_cb_entry(bufferevent_get_output(l->bev),
		    l->out_cb);
		evbuffer_free(l->bulk);
		transport_free(l->bev);
		free(l);
	}
}

/* Write what the socket takes of l's output now (it does not block). */
static void
link_write_now(struct link *l)
{
	transport_flush_now(l->bev);
}

void
link_close_flush(struct link *l, const char *why)
{
	if (l->state == LINK_UP)
		link_write_now(l);
	link_close(l, why);
}

void
link_close(struct link *l, const char *why)
{
	if (l->state == LINK_DEAD)
		return;
	snprintf(l->close_why, sizeof(l->close_why), "%s", why);
	if (l->state == LINK_UP)
		pd_count(links_down);
	trace_add("link", "#%llu %s %s closed in %s: %s",
	    (unsigned long long)l->serial, l->remote,
	    l->member ? l->member->name : "?", link_state_name(l->state), why);
	log_info("link #%llu to %s (%s) closed: %s",
	    (unsigned long long)l->serial, l->remote,
	    l->member ? l->member->name : "?", why);
	if (l->member != NULL && l->member->link == l) {
		l->member->link = NULL;
		link_notify(l->member, false);
	}
	l->state = LINK_DEAD;
	bufferevent_disable(l->bev, EV_READ | EV_WRITE);
	if (l->rx_ev != NULL)
		event_del(l->rx_ev);
	event_active(reaper_ev, EV_TIMEOUT, 0);
}

void
link_set_state(struct link *l, enum link_event ev)
{
	int next = link_fsm_next(l->state, ev);

	if (next == -1) {
		link_close(l, "protocol: event not allowed in this state");
		return;
	}
	trace_add("link", "#%llu %s -> %s", (unsigned long long)l->serial,
	    link_state_name(l->state), link_state_name((enum link_state)next));
	l->state = (enum link_state)next;
}

/* Hand a checked frame on an UP link to the handler of its kind. */
void
link_dispatch(struct link *l, const struct frame *f)
{
	const char *why = "malformed frame body";

	if (f->kind == FRAME_BYE) {
		link_close(l, "peer said bye");
		return;
	}
	if (f->kind >= FRAME_KIND_MAX || handlers[f->kind] == NULL ||
	    f->kind == FRAME_CHANNEL_HELLO) {
		pd_count(unhandled_kind);
		trace_add("frame", "#%llu unhandled kind %s",
		    (unsigned long long)l->serial, frame_kind_name(f->kind));
		return;
	}
	if (handlers[f->kind](l->member, f, &why) == -1)
		link_close(l, why);
}

/* ---- sending ----------------------------------------------------------- */

struct delayed {
	TAILQ_ENTRY(delayed)	 entry;
	uint64_t	 serial;		/* the link, checked on fire */
	struct event	*ev;
	uint8_t		*data;
	size_t		 len;
};

static struct link *
link_by_serial(uint64_t serial)
{
	struct link *l;

	TAILQ_FOREACH(l, &links, entry)
		if (l->serial == serial && l->state != LINK_DEAD)
			return l;
	return NULL;
}

static TAILQ_HEAD(, delayed) delayed_q = TAILQ_HEAD_INITIALIZER(delayed_q);

static void
delayed_free(struct delayed *d)
{
	TAILQ_REMOVE(&delayed_q, d, entry);
	event_free(d->ev);
	free(d->data);
	free(d);
}

static void
link_delayed_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct delayed *d = arg, *e, *next;
	struct link *l = link_by_serial(d->serial);

	(void)fd;
	(void)ev;
	/*
	 * Frames delayed on one link are due in the order they were queued
	 * (delay_until_us), but two with the same expiry may fire in either
	 * order: libevent's timer heap does not keep insertion order.  So
	 * whichever fires first sends every frame queued before it on its
	 * link, in order, then itself.
	 */
	for (e = TAILQ_FIRST(&delayed_q); e != NULL; e = next) {
		bool last = e == d;

		next = TAILQ_NEXT(e, entry);
		if (e->serial != d->serial)
			continue;
		if (l != NULL) {
			l->q_delayed -= e->len;
			l->q_added += e->len;
			bufferevent_write(l->bev, e->data, e->len);
		}
		delayed_free(e);
		if (last)
			break;
	}
}


/*
 * A file range as a sendfile segment of the output buffer, on a descriptor
 * of its own (closed when the segment is sent or the link freed), so the
 * store may close its file meanwhile.  NULL on failure.
 */
static struct evbuffer_file_segment *
payload_segment(const struct link_payload *pl)
{
	struct evbuffer_file_segment *seg;
	int fd;

	if ((fd = fcntl(pl->fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return NULL;
	seg = evbuffer_file_segment_new(fd, (ev_off_t)pl->off,
	    (ev_off_t)pl->len, EVBUF_FS_CLOSE_ON_FREE | EVBUF_FS_DISABLE_LOCKING);
	if (seg == NULL)
		close(fd);
	return seg;
}

/* Lend pl's memory to out (struct link_payload).  0 or -1. */
static int
payload_lend(struct evbuffer *out, struct link_payload *pl)
{
	if (evbuffer_add_reference(out, pl->mem, pl->len, pl->release,
	    pl->arg) == -1)
		return -1;
	pl->release = NULL;	/* out releases it now */
	return 0;
}

/* pl's file range into p. 0 or -1. */
static int
payload_pread(const struct link_payload *pl, uint8_t *p)
{
	size_t done = 0;

	while (done < pl->len) {
		ssize_t r = pread(pl->fd, p + done, pl->len - done,
		    (off_t)(pl->off + done));

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/* The payload's bytes appended to b (for a delayed frame). 0 or -1. */
static int
payload_copy(struct dcbor_buf *b, const struct link_payload *pl)
{
	uint8_t *p = dcbor_buf_reserve(b, pl->len);

	if (pl->mem != NULL)
		memcpy(p, pl->mem, pl->len);
	else if (payload_pread(pl, p) == -1)
		return -1;
	b->len += pl->len;
	return 0;
}

static void
payload_pool_release(const void *p, size_t len, void *arg)
{
	(void)len;
	rx_put((uint8_t *)(uintptr_t)p, (size_t)(uintptr_t)arg);
}

/*
 * pl's file range read into a pooled frame buffer that pl then lends (the
 * output buffer returns it to the pool once written): no sendfile through
 * user-space TLS, but no second copy into the output buffer either, nor a
 * fresh MiB to fault in per piece.  0 or -1.
 */
static int
payload_read(struct link_payload *pl)
{
	size_t cap;
	uint8_t *p = rx_get(pl->len, &cap);

	if (payload_pread(pl, p) == -1) {
		rx_put(p, cap);
		return -1;
	}
	pl->mem = p;
	pl->release = payload_pool_release;
	pl->arg = (void *)(uintptr_t)cap;
	return 0;
}

/*
 * A frame bound for an empty output buffer on a plain TCP link goes to
 * the kernel at once, not on the loop's next turn: queueing it would have
 * libevent add the socket's write interest, wake for it and take it off
 * again (two epoll_ctl and a loop turn a frame, most of a small frame's
 * system calls).  What the socket does not take is queued behind, in
 * order.  The bytes count as added and as handed over (q_added, q_left),
 * so a mark (link_mark_all) sees them leave.  Returns the bytes written.
 */
static size_t
link_send_now(struct link *l, const uint8_t *p, size_t len)
{
	size_t n = transport_send_now(l->bev, p, len);

	l->q_added += n;
	l->q_left += n;
	return n;
}

/*
 * Move whole bulk frames into the output buffer while it holds less than
 * LINK_BULK_LOWAT bytes (frames stay whole so that an urgent frame never
 * lands inside one).
 */
static void
link_bulk_refill(struct link *l)
{
	struct evbuffer *out = bufferevent_get_output(l->bev);
	uint8_t hdr[FRAME_LEN_PREFIX];
	size_t have, n;

	while ((have = evbuffer_get_length(l->bulk)) > 0 &&
	    evbuffer_get_length(out) < LINK_BULK_LOWAT) {
		evbuffer_copyout(l->bulk, hdr, sizeof(hdr));
		n = FRAME_LEN_PREFIX + ((size_t)hdr[0] << 24 |
		    (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3]);
		if (n > have)
			n = have;	/* cannot happen: frames are queued whole */
		if (evbuffer_remove_buffer(l->bulk, out, n) != (int)n) {
			link_close(l, "out of memory moving bulk frames");
			return;
		}
		l->q_added += n;
	}
}

static void
link_write_cb(struct bufferevent *bev, void *arg)
{
	struct link *l = arg;

	(void)bev;
	if (l->state != LINK_DEAD)
		link_bulk_refill(l);
}

static void
link_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct link *l = arg;

	(void)buf;
	l->q_left += info->n_deleted;
}

/*
 * Sign and queue one frame on l: an urgent one (and the handshake) straight
 * into the output buffer, a bulk one behind whatever bulk still waits.
 */
int
link_send_to(struct link *l, uint32_t kind, const uint8_t *to,
    const uint8_t *body, size_t body_len, struct link_payload *pl,
    bool urgent)
{
	struct evbuffer_file_segment *seg = NULL;
	struct evbuffer *out, *wire;
	struct hlc_stamp st;
	uint64_t delay_us = 0;
	size_t plen = pl != NULL ? pl->len : 0, total, sent;

	if (l->state == LINK_DEAD || l->state == LINK_CONNECTING)
		return -1;
	/* On DTLS the fault filter acts per datagram (dtls.c). */
	if (l->member != NULL && kind != FRAME_CHANNEL_HELLO &&
	    !transport_datagram() &&
	    fault_on_send(l->member->id, &delay_us) == -1) {
		pd_count(fault_dropped_out);
		return 0;
	}
	st = hlc_now(&pd->hlc, hlc_wall_ms());
	dcbor_buf_reset(&sendbuf);
	/* Bare on TLS, MAC'd on a keyed TCP link (UP), else signed. */
	if ((l->keyed ? frame_encode_mac(&sendbuf, &pd->ident, &l->mac_tx,
	    kind, pd->conf.group, to, &st, body, body_len, plen,
	    pd->conf.max_frame) : (l->authed ? frame_encode_bare :
	    frame_encode_head)(&sendbuf, &pd->ident, kind, pd->conf.group, to,
	    &st, body, body_len, plen, pd->conf.max_frame)) == -1) {
		pd_count_limit(FRAME_SIZE);
		log_warnx("link #%llu: %s frame of %zu bytes over the cap",
		    (unsigned long long)l->serial, frame_kind_name(kind),
		    body_len + plen);
		return -1;
	}
	total = sendbuf.len + plen;
	/*
	 * No sendfile through user-space TLS: the encryption needs the bytes,
	 * so a file range is read into memory (one copy) and goes as memory.
	 * (With kTLS the kernel could encrypt a sendfile, but libevent's
	 * OpenSSL bufferevent has no path for it; docs/protocol.md.)
	 */
	if (pl != NULL && pl->mem == NULL && !transport_raw() &&
	    payload_read(pl) == -1) {
		log_warn("link #%llu: read payload",
		    (unsigned long long)l->serial);
		return -1;
	}
	if (delay_us > 0 || l->delay_until_us > clock_mono_us()) {
		struct delayed *d;
		uint64_t now = clock_mono_us(), at = now + delay_us;
		struct timeval tv;

		/* A delayed frame is rare (a fault): copy it whole. */
		if (pl != NULL && payload_copy(&sendbuf, pl) == -1) {
			log_warn("link #%llu: read payload",
			    (unsigned long long)l->serial);
			return -1;
		}
		d = xcalloc(1, sizeof(*d));
		if (at < l->delay_until_us)
			at = l->delay_until_us;	/* keep the order */
		l->delay_until_us = at;
		d->serial = l->serial;
		d->data = xmemdup(sendbuf.data, sendbuf.len);
		d->len = sendbuf.len;
		l->q_delayed += d->len;
		d->ev = evtimer_new(pd->base, link_delayed_cb, d);
		TAILQ_INSERT_TAIL(&delayed_q, d, entry);
		tv.tv_sec = (time_t)((at - now) / 1000000u);
		tv.tv_usec = (suseconds_t)((at - now) % 1000000u);
		evtimer_add(d->ev, &tv);
	} else {
		/* Everything that can fail before the first byte is queued. */
		if (pl != NULL && pl->mem == NULL &&
		    (seg = payload_segment(pl)) == NULL) {
			log_warn("link #%llu: payload segment",
			    (unsigned long long)l->serial);
			return -1;
		}
		wire = bufferevent_get_output(l->bev);
		out = urgent || kind == FRAME_CHANNEL_HELLO ||
		    (evbuffer_get_length(l->bulk) == 0 &&
		    evbuffer_get_length(wire) < LINK_BULK_LOWAT) ? wire :
		    l->bulk;
		sent = out == wire && pl == NULL ?
		    link_send_now(l, sendbuf.data, sendbuf.len) : 0;
		if ((sent < sendbuf.len && evbuffer_add(out, sendbuf.data +
		    sent, sendbuf.len - sent) == -1) ||
		    (pl != NULL && (seg != NULL ?
		    evbuffer_add_file_segment(out, seg, 0,
		    (ev_off_t)pl->len) : pl->release != NULL ?
		    payload_lend(out, pl) : evbuffer_add(out, pl->mem,
		    pl->len)) == -1)) {
			/* Part of a frame may be queued: the stream is lost. */
			if (seg != NULL)
				evbuffer_file_segment_free(seg);
			link_close(l, "out of memory queueing a frame");
			return -1;
		}
		if (seg != NULL)
			evbuffer_file_segment_free(seg);	/* out holds it */
		if (out == wire)
			l->q_added += total - sent;
	}
	l->frames_out++;
	l->bytes_out += total;
	if (l->member != NULL)
		l->member->frames_out++;
	pd_count_kind_out(kind, total);
	return 0;
}

static int
link_send(struct link *l, uint32_t kind, const uint8_t *body, size_t body_len)
{
	if (l->state != LINK_UP || l->member == NULL)
		return -1;
	return link_send_to(l, kind, l->member->id, body, body_len, NULL,
	    false);
}

int
link_send_member(struct member *m, uint32_t kind, const uint8_t *body,
    size_t body_len)
{
	if (m->link == NULL)
		return -1;
	return link_send(m->link, kind, body, body_len);
}

int
link_send_member_urgent(struct member *m, uint32_t kind, const uint8_t *body,
    size_t body_len)
{
	struct link *l = m->link;

	if (l == NULL || l->state != LINK_UP || l->member == NULL)
		return -1;
	return link_send_to(l, kind, m->id, body, body_len, NULL, true);
}

size_t
link_mark_all(struct link_mark *out, size_t max)
{
	struct link *l;
	size_t n = 0;

	TAILQ_FOREACH(l, &links, entry) {
		if (n == max)
			break;
		if (l->state != LINK_UP || l->member == NULL ||
		    l->member->link != l)
			continue;
		out[n].serial = l->serial;
		out[n].at = l->q_added + l->q_delayed;
		n++;
	}
	return n;
}

bool
link_mark_left(const struct link_mark *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct link *l = link_by_serial(m[i].serial);

		if (l != NULL && l->q_left < m[i].at)
			return false;
	}
	return true;
}

int
link_send_member_data(struct member *m, uint32_t kind, const uint8_t *body,
    size_t body_len, const struct link_payload *pl)
{
	struct link *l = m->link;
	struct link_payload lp;
	int rc = -1;

	if (pl == NULL)
		return -1;
	lp = *pl;
	if (l != NULL && l->state == LINK_UP && lp.len > 0)
		rc = link_send_to(l, kind, m->id, body, body_len, &lp, false);
	if (lp.release != NULL)		/* not lent to an output buffer */
		lp.release(lp.mem, lp.len, lp.arg);
	return rc;
}


static void
link_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct link *l = arg;
	const char *why;
	int rc;

	if (what & BEV_EVENT_CONNECTED) {
		int one = 1;

		/* As on accept: small requests must not wait for Nagle. */
		setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY,
		    &one, sizeof(one));
		if ((rc = transport_peer(bev, l->chan_pub, l->chan_id)) == -1) {
			link_close(l, "tls: no acceptable peer certificate");
			return;
		}
		l->authed = rc == 1;
		rx_attach(l);
		link_set_state(l, LINK_EV_CONNECTED);
		if (l->state == LINK_HELLO_SENT)
			handshake_send(l, NULL, 0);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		rx_end(l);
	} else if (what & BEV_EVENT_ERROR) {
		why = transport_failure(bev, l->state != LINK_CONNECTING);
		link_close(l, why != NULL ? why : evutil_socket_error_to_string(
		    EVUTIL_SOCKET_ERROR()));
	}
}

static void	(*link_wake)(uint64_t at_ms);	/* link_tick_wake */

static struct link *
link_new(struct bufferevent *bev, bool outbound, const char *remote)
{
	struct link *l = xcalloc(1, sizeof(*l));

	l->serial = ++link_serial;
	l->born_ms = clock_mono_ms();
	if (link_wake != NULL)		/* link_tick has a timeout to time */
		link_wake(l->born_ms + pd->conf.preauth_ms + 1);
	l->bev = bev;
	l->outbound = outbound;
	snprintf(l->remote, sizeof(l->remote), "%s", remote);
	RAND_bytes(l->nonce, sizeof(l->nonce));
	/* A key to agree on, TCP only: TLS frames go bare already. */
	if (pd->conf.link_auth == LINK_AUTH_MAC && transport_raw() &&
	    linkkey_eph_new(&l->eph) == -1)
		log_warnx("link #%llu: no X25519 key: signed frames",
		    (unsigned long long)l->serial);
	TAILQ_INSERT_TAIL(&links, l, entry);
	bufferevent_setcb(bev, rx_read_cb, link_write_cb, link_event_cb, l);
	bufferevent_setwatermark(bev, EV_WRITE, LINK_BULK_LOWAT / 2, 0);
	l->bulk = evbuffer_new();
	l->out_cb = evbuffer_add_cb(bufferevent_get_output(bev), link_out_cb, l);
	bufferevent_setwatermark(bev, EV_READ, 0,
	    (size_t)pd->conf.max_frame + FRAME_LEN_PREFIX + 65536);
	/* libevent moves 16 KiB a wakeup by default: too little for pieces. */
	bufferevent_set_max_single_read(bev, LINK_IO_CHUNK);
	bufferevent_set_max_single_write(bev, LINK_IO_CHUNK);
	/* TCP: the link reads its socket itself once it is connected. */
	bufferevent_enable(bev, transport_raw() ? EV_WRITE : EV_READ | EV_WRITE);
	return l;
}

static int
parse_hostport(const char *hostport, struct sockaddr_in *sin)
{
	char host[64];
	const char *colon = strrchr(hostport, ':');
	char *end;
	unsigned long port;

	if (colon == NULL || (size_t)(colon - hostport) >= sizeof(host))
		return -1;
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || end == colon + 1 || port > 65535)
		return -1;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return -1;
	return 0;
}

bool
link_addr_ok(const char *hostport)
{
	struct sockaddr_in sin;

	return parse_hostport(hostport, &sin) == 0;
}

struct link *
link_dial(const char *hostport)
{
	struct sockaddr_in sin;
	struct bufferevent *bev;
	struct link *l;

	if (parse_hostport(hostport, &sin) == -1) {
		log_warnx("dial: bad address \"%s\"", hostport);
		return NULL;
	}
	if (link_count_budget(NULL) >= pd->conf.max_links) {
		pd_count_limit(LINKS);
		return NULL;
	}
	bev = transport_bev(pd->base, -1, true);
	if (bev == NULL)
		return NULL;
	l = link_new(bev, true, hostport);
	snprintf(l->dialed, sizeof(l->dialed), "%s", hostport);
	l->state = LINK_CONNECTING;
	trace_add("link", "#%llu dialing %s", (unsigned long long)l->serial,
	    hostport);
	if (transport_connect(bev, &sin) == -1) {
		link_close(l, "connect failed");
		return NULL;
	}
	return l;
}

/*
 * Make room for one more accepted connection that has yet to prove a key.
 * Those get a budget of their own (--max-preauth, and half of it for one
 * address), apart from --max-links, so sockets that never finish a
 * handshake cannot keep a real peer out: when the budget is full the
 * oldest unproven connection is closed, one that has not sent a valid
 * hello first.  A real peer proves its key within
 * a round trip of connecting, so it is never the oldest for long; idle
 * sockets go in turn, and every one of them at --preauth-ms anyway.
 */
static void
link_preauth_room(uint32_t ip)
{
	uint32_t per_addr = pd->conf.max_preauth / 2;
	struct link *victim;

	if (per_addr == 0)
		per_addr = 1;
	if (link_count_unproven(ip, &victim) >= per_addr && victim != NULL) {
		pd_count_limit(PREAUTH_ADDR);
		link_close(victim, "pre-authentication limit for one address");
	}
	if (link_count_unproven(0, &victim) >= pd->conf.max_preauth &&
	    victim != NULL) {
		pd_count_limit(PREAUTH);
		link_close(victim, "pre-authentication budget full");
	}
}

/*
 * A new accepted link on bev (its room already made): TCP and TLS from
 * the listener, DTLS from dtls.c once a ClientHello came back with its
 * cookie.
 */
static void
link_accepted(struct bufferevent *bev, const struct sockaddr_in *sin)
{
	struct link *l;
	char remote[64], ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	snprintf(remote, sizeof(remote), "%s:%u", ip, ntohs(sin->sin_port));
	l = link_new(bev, false, remote);
	l->ip = sin->sin_addr.s_addr;
	rx_attach(l);
	trace_add("link", "#%llu accepted from %s",
	    (unsigned long long)l->serial, remote);
	/* On TLS the hello waits for the handshake (link_event_cb). */
	if (!transport_raw()) {
		l->state = LINK_CONNECTING;
		return;
	}
	l->state = LINK_HELLO_SENT;
	handshake_send(l, NULL, 0);
}

static void
link_accept_cb(struct evconnlistener *lis, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)(void *)sa;
	struct bufferevent *bev;
	int one = 1;

	(void)lis;
	(void)salen;
	(void)arg;
	link_preauth_room(sin->sin_addr.s_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((bev = transport_bev(pd->base, fd, false)) != NULL)
		link_accepted(bev, sin);
}

static void
link_dtls_accept(struct bufferevent *bev, const struct sockaddr_in *sin)
{
	link_preauth_room(sin->sin_addr.s_addr);
	link_accepted(bev, sin);
}

bool
link_to_addr(const char *addr)
{
	struct link *l;

	TAILQ_FOREACH(l, &links, entry)
		if (l->state != LINK_DEAD && strcmp(l->dialed, addr) == 0)
			return true;
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link != NULL && strcmp(m->addr, addr) == 0)
			return true;
	}
	return false;
}

void
link_tick_wake(void (*fn)(uint64_t at_ms))
{
	link_wake = fn;
}

uint64_t
link_tick(void)
{
	uint64_t now = clock_mono_ms(), next = UINT64_MAX;
	struct link *l;

	/* A link that does not finish its handshake in time is dropped. */
	TAILQ_FOREACH(l, &links, entry) {
		if (l->state == LINK_UP || l->state == LINK_DEAD)
			continue;
		if (now - l->born_ms > pd->conf.preauth_ms) {
			if (l->state == LINK_CONNECTING && !transport_raw())
				transport_timeout();
			else
				pd_count_handshake(TIMEOUT);
			link_close(l, "handshake timeout");
		} else if (l->born_ms + pd->conf.preauth_ms + 1 < next)
			next = l->born_ms + pd->conf.preauth_ms + 1;
	}
	return next;
}

static uint64_t
gauge_links(void)
{
	return link_count();
}

/*
 * HOST:PORT with HOST a name or an IPv4 literal, resolved once (at start:
 * getaddrinfo may block) to the first IPv4 address as "a.b.c.d:PORT" in
 * out.  0, or -1 with why (a short reason) when it does not parse or
 * resolve.
 */
int
link_resolve(const char *hostport, char *out, size_t len, const char **why)
{
	struct addrinfo hints, *res = NULL;
	char host[256], ip[INET_ADDRSTRLEN];
	const char *colon = strrchr(hostport, ':');
	char *end;
	unsigned long port;
	int rc;

	*why = "not HOST:PORT";
	if (colon == NULL || colon == hostport ||
	    (size_t)(colon - hostport) >= sizeof(host))
		return -1;
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || end == colon + 1 || port > 65535)
		return -1;
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0 || res == NULL) {
		*why = rc != 0 ? gai_strerror(rc) : "no IPv4 address";
		return -1;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)res->ai_addr)->
	    sin_addr, ip, sizeof(ip));
	freeaddrinfo(res);
	snprintf(out, len, "%s:%lu", ip, port);
	return 0;
}

/*
 * Bind the listener on listen (a name or an IPv4 literal, resolved once);
 * the address peers are told to dial goes to addr: --advertise when given
 * (its port 0: the bound port), else the bound address.  A wildcard bind
 * (0.0.0.0) without advertise is refused: the peers would be told
 * 0.0.0.0:PORT and each would dial itself.
 */
int
link_init(const char *listen, char *addr, size_t len)
{
	const char *advertise = pd->conf.advertise;
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	char ip[INET_ADDRSTRLEN], lit[64], adv[64];
	const char *why;

	stats_gauge("links", gauge_links);
	if (link_resolve(listen, lit, sizeof(lit), &why) == -1 ||
	    parse_hostport(lit, &sin) == -1) {
		log_warnx("listen: bad address \"%s\" (%s; want HOST:PORT, "
		    "HOST an IPv4 address or a name)", listen, why);
		return -1;
	}
	if (advertise != NULL && (link_resolve(advertise, adv, sizeof(adv),
	    &why) == -1 || !link_addr_ok(adv))) {
		log_warnx("advertise: bad address \"%s\" (%s)", advertise, why);
		return -1;
	}
	if (sin.sin_addr.s_addr == htonl(INADDR_ANY) && advertise == NULL) {
		log_warnx("listen %s: a wildcard address needs --advertise "
		    "HOST:PORT (the address the other peers dial)", listen);
		return -1;
	}
	if (transport_init(pd->conf.binding) == -1)
		return -1;
	if (transport_datagram()) {
		if (transport_listen(&sin, link_dtls_accept) == -1) {
			log_warn("listen %s (udp)", listen);
			return -1;
		}
	} else {
		listener = evconnlistener_new_bind(pd->base, link_accept_cb,
		    NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
		    LEV_OPT_CLOSE_ON_EXEC, 128, (struct sockaddr *)&sin,
		    (int)sizeof(sin));
		if (listener == NULL) {
			log_warn("listen %s", listen);
			return -1;
		}
		if (getsockname(evconnlistener_get_fd(listener),
		    (struct sockaddr *)&sin, &slen) == -1)
			return -1;
	}
	inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip));
	snprintf(addr, len, "%s:%u", ip, ntohs(sin.sin_port));
	if (advertise != NULL) {
		char *colon = strrchr(adv, ':');

		if (strcmp(colon, ":0") == 0)
			snprintf(colon, sizeof(adv) - (size_t)(colon - adv),
			    ":%u", ntohs(sin.sin_port));
		snprintf(addr, len, "%s", adv);
	}
	reaper_ev = event_new(pd->base, -1, 0, link_reap, NULL);
	dcbor_buf_init(&sendbuf);
	return 0;
}

void
link_shutdown(void)
{
	struct link *l;

	TAILQ_FOREACH(l, &links, entry)
		if (l->state == LINK_UP) {
			link_send(l, FRAME_BYE, (const uint8_t *)"\xf6", 1);
			transport_flush_now(l->bev);
		}
	TAILQ_FOREACH(l, &links, entry)
		if (l->state != LINK_DEAD)
			link_close(l, "shutdown");
	link_reap(-1, 0, NULL);
	while (!TAILQ_EMPTY(&delayed_q))
		delayed_free(TAILQ_FIRST(&delayed_q));
	if (listener != NULL)
		evconnlistener_free(listener);
	listener = NULL;
	if (reaper_ev != NULL)
		event_free(reaper_ev);
	reaper_ev = NULL;
	dcbor_buf_free(&sendbuf);
	transport_shutdown();
}

/* Bytes waiting to leave on l, both lanes. */
static size_t
link_queued(const struct link *l)
{
	return evbuffer_get_length(bufferevent_get_output(l->bev)) +
	    evbuffer_get_length(l->bulk);
}

bool
link_rx_backlog(void)
{
	struct link *l;
	int n;

	TAILQ_FOREACH(l, &links, entry) {
		if (l->bev == NULL)
			continue;
		if (evbuffer_get_length(bufferevent_get_input(l->bev)) > 0)
			return true;
		if (ioctl(bufferevent_getfd(l->bev), FIONREAD, &n) == 0 && n > 0)
			return true;
	}
	return false;
}

size_t
link_outq(const struct member *m)
{
	if (m->link == NULL || m->link->state != LINK_UP)
		return SIZE_MAX;
	return link_queued(m->link);
}

json_t *
link_list_json(void)
{
	json_t *arr = json_array();
	struct link *l;
	uint64_t now = clock_mono_ms();

	TAILQ_FOREACH(l, &links, entry)
		json_array_append_new(arr, json_pack(
		    "{s:I, s:s, s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I}",
		    "serial", (json_int_t)l->serial,
		    "state", link_state_name(l->state),
		    "remote", l->remote, "outbound", l->outbound,
		    "peer", l->member ? l->member->name : "",
		    "up_ms", (json_int_t)(l->up_ms ? now - l->up_ms : 0),
		    "frames_in", (json_int_t)l->frames_in,
		    "frames_out", (json_int_t)l->frames_out,
		    "bytes_in", (json_int_t)l->bytes_in,
		    "bytes_out", (json_int_t)l->bytes_out,
		    "queued", (json_int_t)link_queued(l)));
	return arr;
}

/*
 * link.c: links, their state machine, framing and receiver checks
 * (see link.h).  Sockets are libevent bufferevents; a link is never freed
 * inside its own callback: link_close marks it DEAD and the reaper event
 * frees it, clearing the member's back-pointer.  What carries the bytes
 * (TCP or TLS) is transport.c's: on a channel the transport authenticated
 * (TLS), frames from its peer go bare both ways and any other "from" closes
 * the link (frame_open_channel).  The link layer knows no
 * consumer: modules register handlers for their frame kinds
 * (link_register) and observe links going up and down (link_observe);
 * it calls nothing above it.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
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
#include "link.h"
#include "log.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "trace.h"
#include "transport.h"
#include "xmalloc.h"

#define LINK_NONCE_LEN		LINK_HELLO_NONCE
#define LINK_IO_CHUNK		(1u << 20)	/* bytes a wakeup, each way */
#define LINK_DIRECT_MIN		(64u << 10)	/* a frame's rest read directly */
#define LINK_LOWAT_MAX		(256u << 10)	/* bytes a wakeup in a frame */
#define LINK_RX_POOL		8		/* idle frame buffers kept */
#define LINK_RX_POOL_MAX	((4u << 20) + (64u << 10)) /* a piece's frame */
#define LINK_OBSERVERS_MAX	8
#define LINK_BULK_LOWAT		(64u << 10)	/* bulk waits above this */

struct link {
	TAILQ_ENTRY(link)	 entry;
	uint64_t		 serial;
	enum link_state		 state;
	bool			 outbound;
	struct bufferevent	*bev;
	char			 remote[64];	/* address:port of the socket */
	uint32_t		 ip;		/* its IPv4 address (accepted) */
	char			 dialed[64];	/* what we dialed, if outbound */
	struct member		*member;	/* known after their hello */
	bool			 authed;	/* the transport proved chan_id */
	uint8_t			 chan_pub[IDENTITY_PUB_LEN];
	uint8_t			 chan_id[IDENTITY_ID_LEN];
	uint8_t			 nonce[LINK_NONCE_LEN];
	bool			 have_len;	/* two-stage read */
	uint32_t		 need;
	uint32_t		 lowat;		/* SO_RCVLOWAT set; 0: default */
	struct event		*rx_ev;		/* reading a large frame directly */
	uint8_t			*rx;		/* its buffer (need bytes) */
	size_t			 rx_cap, rx_got;
	uint64_t		 up_ms;
	uint64_t		 born_ms;	/* for the handshake timeout */
	uint64_t		 frames_in, frames_out, bytes_in, bytes_out;
	uint64_t		 delay_until_us; /* keeps delayed frames ordered */
	/*
	 * The send path has two lanes.  Urgent frames go straight into the
	 * output buffer; bulk frames wait whole in 'bulk' while the output
	 * holds LINK_BULK_LOWAT bytes or more, so an urgent frame waits
	 * behind at most that much.  q_added counts the bytes put into the
	 * output buffer (plus delayed frames still pending), q_left the
	 * bytes the output buffer has handed to the kernel.
	 */
	struct evbuffer		*bulk;
	struct evbuffer_cb_entry *out_cb;
	uint64_t		 q_added, q_left, q_delayed;
	char			 close_why[96];
};

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

static void	link_read_cb(struct bufferevent *, void *);
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

static void
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
static uint32_t
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

/*
 * Buffers for large frames read directly (link_rx_cb), kept for reuse so
 * that a stream of pieces does not allocate (and fault in) a fresh MiB
 * each.
 */
static struct rxbuf {
	uint8_t	*p;
	size_t	 cap;
} rx_pool[LINK_RX_POOL];
static size_t	 rx_npool;

static uint8_t *
rx_get(size_t need, size_t *cap)
{
	uint8_t *p;

	if (rx_npool == 0) {
		*cap = need;
		return xmalloc(need);
	}
	p = rx_pool[--rx_npool].p;
	*cap = rx_pool[rx_npool].cap;
	if (*cap < need) {
		p = xreallocarray(p, need, 1);
		*cap = need;
	}
	return p;
}

static void
rx_put(uint8_t *p, size_t cap)
{
	if (p == NULL)
		return;
	if (rx_npool == LINK_RX_POOL || cap > LINK_RX_POOL_MAX) {
		free(p);
		return;
	}
	rx_pool[rx_npool].p = p;
	rx_pool[rx_npool++].cap = cap;
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
		evbuffer_remove_cb_entry(bufferevent_get_output(l->bev),
		    l->out_cb);
		evbuffer_free(l->bulk);
		bufferevent_free(l->bev);
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

static void
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
static int
link_send_to(struct link *l, uint32_t kind, const uint8_t *to,
    const uint8_t *body, size_t body_len, struct link_payload *pl,
    bool urgent)
{
	struct evbuffer_file_segment *seg = NULL;
	struct evbuffer *out, *wire;
	struct hlc_stamp st;
	uint64_t delay_us = 0;
	size_t plen = pl != NULL ? pl->len : 0, total;

	if (l->state == LINK_DEAD || l->state == LINK_CONNECTING)
		return -1;
	if (l->member != NULL && kind != FRAME_CHANNEL_HELLO &&
	    fault_on_send(l->member->id, &delay_us) == -1) {
		pd_count(fault_dropped_out);
		return 0;
	}
	st = hlc_now(&pd->hlc, hlc_wall_ms());
	dcbor_buf_reset(&sendbuf);
	if ((l->authed ? frame_encode_bare : frame_encode_head)(&sendbuf,
	    &pd->ident, kind, pd->conf.group, to, &st, body, body_len, plen,
	    pd->conf.max_frame) == -1) {
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
		if (evbuffer_add(out, sendbuf.data, sendbuf.len) == -1 ||
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
			l->q_added += total;
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

/* ---- the handshake ----------------------------------------------------- */

void
link_hello_encode(struct dcbor_buf *b, const struct link_hello *h)
{
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "addr");
	dcbor_put_cstr(b, h->addr);
	dcbor_put_cstr(b, "echo");
	dcbor_put_bytes(b, h->echo, h->echo_len);
	dcbor_put_cstr(b, "name");
	dcbor_put_cstr(b, h->name);
	dcbor_put_cstr(b, "nonce");
	dcbor_put_bytes(b, h->nonce, h->nonce_len);
}

static void
link_send_hello(struct link *l, const uint8_t *echo, size_t echo_len)
{
	struct link_hello h;
	struct dcbor_buf b;

	memset(&h, 0, sizeof(h));
	snprintf(h.addr, sizeof(h.addr), "%s", pd->listen_addr);
	snprintf(h.name, sizeof(h.name), "%s", pd->conf.name);
	h.echo = echo;
	h.echo_len = echo_len;
	h.nonce = l->nonce;
	h.nonce_len = LINK_NONCE_LEN;
	dcbor_buf_init(&b);
	link_hello_encode(&b, &h);
	link_send_to(l, FRAME_CHANNEL_HELLO, NULL, b.data, b.len, NULL, true);
	dcbor_buf_free(&b);
}

int
link_hello_parse(const uint8_t *p, size_t len, struct link_hello *h)
{
	struct dcbor_rd rd;
	uint64_t n;

	memset(h, 0, sizeof(*h));
	dcbor_rd_init(&rd, p, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 4)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *k;
		size_t klen;

		if (dcbor_get_text(&rd, &k, &klen) == -1)
			return -1;
		if (dcbor_text_is(k, klen, "addr")) {
			if (dcbor_get_cstr(&rd, h->addr, sizeof(h->addr)) == -1)
				return -1;
		} else if (dcbor_text_is(k, klen, "name")) {
			if (dcbor_get_cstr(&rd, h->name, sizeof(h->name)) == -1)
				return -1;
		} else if (dcbor_text_is(k, klen, "echo")) {
			if (dcbor_get_bytes(&rd, &h->echo, &h->echo_len) == -1)
				return -1;
		} else if (dcbor_text_is(k, klen, "nonce")) {
			if (dcbor_get_bytes(&rd, &h->nonce, &h->nonce_len) == -1)
				return -1;
		} else
			return -1;
	}
	if (h->nonce_len != LINK_HELLO_NONCE ||
	    (h->echo_len != 0 && h->echo_len != LINK_HELLO_NONCE))
		return -1;
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

/* Keep one link per peer: the one dialed by the lower id wins. */
static bool
link_keep_over(const struct link *a, const struct link *b)
{
	const uint8_t *a_dialer = a->outbound ? pd->ident.id : a->member->id;
	const uint8_t *b_dialer = b->outbound ? pd->ident.id : b->member->id;
	int c = memcmp(a_dialer, b_dialer, IDENTITY_ID_LEN);

	return c != 0 ? c < 0 : a->serial < b->serial;
}

static void
link_up(struct link *l)
{
	struct member *m = l->member;

	if (m->link != NULL && m->link != l) {
		if (link_keep_over(m->link, l)) {
			pd_count(links_duplicate);
			link_close(l, "duplicate link to the same peer");
			return;
		}
		pd_count(links_duplicate);
		link_close(m->link, "duplicate link to the same peer");
	}
	if (link_count_budget(l) >= pd->conf.max_links) {
		pd_count_limit(LINKS);
		link_close(l, "link limit reached");
		return;
	}
	m->link = l;
	m->dial = true;
	m->backoff_ms = 0;
	l->up_ms = clock_mono_ms();
	pd_count(links_up);
	member_heard(m);
	log_info("link #%llu up with %s (%s) at %s",
	    (unsigned long long)l->serial, m->name, m->peer_id, m->addr);
	link_notify(m, true);
}

static void
link_hello(struct link *l, const struct frame *f)
{
	struct link_hello h;
	struct member *m;

	if (link_hello_parse(f->body, f->body_len, &h) == -1) {
		pd_count(bad_body);
		pd_count_handshake(BAD_HELLO);
		link_close(l, "malformed channel_hello body");
		return;
	}
	if (memcmp(f->from, pd->ident.id, IDENTITY_ID_LEN) == 0) {
		pd_count_handshake(SELF);
		link_close(l, "connected to ourselves");
		return;
	}
	if (l->state == LINK_HELLO_SENT) {
		if (h.echo_len != 0) {
			pd_count_handshake(PROOF_BEFORE_HELLO);
			link_close(l, "protocol: proof before hello");
			return;
		}
		m = member_get(f->from, h.name, h.addr);
		/* On an authenticated channel from is its peer (link_frame). */
		memcpy(m->pub, l->authed ? l->chan_pub : f->key,
		    IDENTITY_PUB_LEN);
		m->have_pub = true;
		l->member = m;
		m->last_stamp = f->stamp;
		link_set_state(l, LINK_EV_HELLO);
		link_send_hello(l, h.nonce, h.nonce_len);
		return;
	}
	/* PROOF_SENT: this must be their proof, echoing our nonce. */
	if (h.echo_len != LINK_NONCE_LEN ||
	    memcmp(h.echo, l->nonce, LINK_NONCE_LEN) != 0) {
		pd_count_handshake(WRONG_ECHO);
		link_close(l, "handshake: proof does not echo our nonce");
		return;
	}
	if (memcmp(f->from, l->member->id, IDENTITY_ID_LEN) != 0) {
		pd_count_handshake(WRONG_KEY);
		link_close(l, "handshake: proof signed by another key");
		return;
	}
	l->member->last_stamp = f->stamp;
	link_set_state(l, LINK_EV_PROOF);
	if (l->state == LINK_UP)
		link_up(l);
}

/* ---- receiving --------------------------------------------------------- */

/* The receiver checks once the link is up (docs/protocol.md 5). true: accept. */
static bool
link_check(struct link *l, const struct frame *f)
{
	struct member *m = l->member;
	uint64_t wall = hlc_wall_ms(), now = clock_mono_ms();
	enum metrics_reject why;

	if (memcmp(f->from, m->id, IDENTITY_ID_LEN) != 0) {
		pd_count_reject(NOT_MEMBER);
		link_close(l, "frame from a peer other than the link's");
		return false;
	}
	if (f->to_any || memcmp(f->to, pd->ident.id, IDENTITY_ID_LEN) != 0) {
		pd_count_reject(WRONG_TO);
		return false;
	}
	if (fault_on_recv(m->id)) {
		pd_count(fault_dropped_in);
		return false;
	}
	if (!member_admit(m, &f->stamp, wall, now, &why)) {
		pd_metrics.rejected[why]++;
		return false;
	}
	hlc_update(&pd->hlc, &f->stamp, wall, NULL);
	member_heard(m);
	return true;
}

static void
link_frame(struct link *l, const uint8_t *buf, size_t len)
{
	struct frame f;
	const char *why = "malformed frame body";
	int rc;

	l->frames_in++;
	l->bytes_in += len + FRAME_LEN_PREFIX;
	if ((rc = frame_open_channel(buf, len, &f, l->authed ? l->chan_id :
	    NULL)) != FRAME_OK) {
		pd_count_bad(rc);
		trace_add("frame", "#%llu bad frame from %s: %s",
		    (unsigned long long)l->serial, l->remote,
		    frame_strerror(rc));
		link_close(l, frame_strerror(rc));
		return;
	}
	pd_count_kind_in(f.kind, len + FRAME_LEN_PREFIX);
	if (l->state != LINK_UP) {
		if (f.kind != FRAME_CHANNEL_HELLO) {
			if (l->state == LINK_PROOF_SENT)
				pd_count_handshake(FRAME_BEFORE_PROOF);
			else
				pd_count_handshake(FRAME_BEFORE_HELLO);
			link_close(l, "protocol: frame before the handshake");
			return;
		}
		link_hello(l, &f);
		return;
	}
	if (!link_check(l, &f))
		return;
	l->member->frames_in++;
	if (f.kind == FRAME_BYE) {
		link_close(l, "peer said bye");
		return;
	}
	if (f.kind >= FRAME_KIND_MAX || handlers[f.kind] == NULL ||
	    f.kind == FRAME_CHANNEL_HELLO) {
		pd_count(unhandled_kind);
		trace_add("frame", "#%llu unhandled kind %s",
		    (unsigned long long)l->serial, frame_kind_name(f.kind));
		return;
	}
	if (handlers[f.kind](l->member, &f, &why) == -1)
		link_close(l, why);
}

/* The stream ended inside a frame (its length or its body). */
static void
link_truncated(struct link *l)
{
	pd_count(truncated);
	trace_add("frame", "#%llu truncated frame from %s, then end of stream",
	    (unsigned long long)l->serial, l->remote);
	link_close(l, "truncated frame: end of stream inside a frame");
}

/*
 * While the rest of a large frame is on its way, have the socket wake us
 * only when a good part of it can be read (SO_RCVLOWAT) rather than on
 * each segment.  The mark never exceeds what the frame still lacks, or
 * we could wait for bytes the sender does not have; the kernel also
 * wakes us on EOF or an error, and caps the mark at half its receive
 * buffer.  0 restores the default (a wakeup per byte available).
 */
static void
link_lowat(struct link *l, size_t rest)
{
	uint32_t want = rest > LINK_LOWAT_MAX ? LINK_LOWAT_MAX :
	    (uint32_t)rest;
	int v = want ? (int)want : 1;

	if (want == l->lowat || (want > 0 && want > l->lowat && l->lowat > 0))
		return;		/* lowering is needed; raising can wait */
	if (setsockopt(bufferevent_getfd(l->bev), SOL_SOCKET, SO_RCVLOWAT,
	    &v, sizeof(v)) == 0)
		l->lowat = want;
}

/*
 * The rest of a large frame, read straight from the socket into one
 * buffer: libevent 2.1's evbuffer reads at most 4 KiB a wakeup, which for
 * a 1 MiB piece meant 256 wakeups of three system calls each, then a copy
 * to make the frame contiguous.  On TLS transport_recv decrypts the
 * records into the buffer (the OpenSSL bufferevent would read one record
 * a wakeup into 4 KiB pieces of its input, and the frame would then be
 * copied whole into a freshly allocated MiB).  The bufferevent's reading
 * is off meanwhile (its input buffer is empty: every byte it held went
 * into the frame), and is back on once the frame is dispatched.
 */
static void
link_rx_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct link *l = arg;
	uint8_t *buf;
	size_t cap;
	ssize_t n;

	(void)ev;
	(void)fd;
	n = transport_recv(l->bev, l->rx + l->rx_got, l->need - l->rx_got);
	if (n == 0) {
		event_del(l->rx_ev);
		link_truncated(l);	/* EOF inside a frame, by construction */
		return;
	}
	if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR) {
		event_del(l->rx_ev);
		link_close(l, strerror(errno));
		return;
	}
	if (n == -1)
		return;
	l->rx_got += (size_t)n;
	if (l->rx_got < l->need) {
		link_lowat(l, transport_lowat(l->need - l->rx_got));
		return;
	}
	event_del(l->rx_ev);
	link_lowat(l, 0);
	buf = l->rx;
	cap = l->rx_cap;
	l->rx = NULL;
	l->have_len = false;
	link_frame(l, buf, l->need);
	rx_put(buf, cap);
	if (l->state != LINK_DEAD)
		transport_resume(l->bev);
}

static void
link_rx_start(struct link *l, struct evbuffer *in, size_t avail)
{
	int fd = bufferevent_getfd(l->bev);

	if (l->rx_ev == NULL)
		l->rx_ev = event_new(pd->base, fd, EV_READ | EV_PERSIST,
		    link_rx_cb, l);
	if (l->rx_ev == NULL)
		return;		/* read it through the bufferevent */
	l->rx = rx_get(l->need, &l->rx_cap);
	l->rx_got = (size_t)evbuffer_remove(in, l->rx, avail);
	bufferevent_disable(l->bev, EV_READ);
	event_add(l->rx_ev, NULL);
	link_lowat(l, transport_lowat(l->need - l->rx_got));
	if (transport_pending(l->bev))	/* no readiness will announce it */
		event_active(l->rx_ev, EV_READ, 1);
}

static void
link_read_cb(struct bufferevent *bev, void *arg)
{
	struct link *l = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[FRAME_LEN_PREFIX];
	int rc;

	while (l->state != LINK_DEAD) {
		size_t avail = evbuffer_get_length(in);

		if (!l->have_len) {
			if (avail < FRAME_LEN_PREFIX)
				return;
			evbuffer_copyout(in, hdr, sizeof(hdr));
			rc = frame_read_len(hdr, sizeof(hdr), pd->conf.max_frame,
			    &l->need);
			if (rc != FRAME_OK) {
				pd_count_bad(rc);
				if (rc == FRAME_ETOOBIG)
					pd_count_limit(FRAME_SIZE);
				trace_add("frame", "#%llu bad length from %s: %s",
				    (unsigned long long)l->serial, l->remote,
				    frame_strerror(rc));
				link_close(l, frame_strerror(rc));
				return;
			}
			evbuffer_drain(in, FRAME_LEN_PREFIX);
			l->have_len = true;
			avail -= FRAME_LEN_PREFIX;
		}
		if (avail < l->need) {
			/* Only a proven peer gets a buffer before its bytes. */
			if (l->state == LINK_UP &&
			    l->need - avail >= LINK_DIRECT_MIN)
				link_rx_start(l, in, avail);
			return;
		}
		link_frame(l, evbuffer_pullup(in, l->need), l->need);
		evbuffer_drain(in, l->need);
		l->have_len = false;
	}
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
		link_set_state(l, LINK_EV_CONNECTED);
		if (l->state == LINK_HELLO_SENT)
			link_send_hello(l, NULL, 0);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		if (l->have_len ||
		    evbuffer_get_length(bufferevent_get_input(bev)) > 0)
			link_truncated(l);
		else
			link_close(l, "end of stream");
	} else if (what & BEV_EVENT_ERROR) {
		why = transport_failure(bev, l->state != LINK_CONNECTING);
		link_close(l, why != NULL ? why : evutil_socket_error_to_string(
		    EVUTIL_SOCKET_ERROR()));
	}
}

static struct link *
link_new(struct bufferevent *bev, bool outbound, const char *remote)
{
	struct link *l = xcalloc(1, sizeof(*l));

	l->serial = ++link_serial;
	l->born_ms = clock_mono_ms();
	l->bev = bev;
	l->outbound = outbound;
	snprintf(l->remote, sizeof(l->remote), "%s", remote);
	RAND_bytes(l->nonce, sizeof(l->nonce));
	TAILQ_INSERT_TAIL(&links, l, entry);
	bufferevent_setcb(bev, link_read_cb, link_write_cb, link_event_cb, l);
	bufferevent_setwatermark(bev, EV_WRITE, LINK_BULK_LOWAT / 2, 0);
	l->bulk = evbuffer_new();
	l->out_cb = evbuffer_add_cb(bufferevent_get_output(bev), link_out_cb, l);
	bufferevent_setwatermark(bev, EV_READ, 0,
	    (size_t)pd->conf.max_frame + FRAME_LEN_PREFIX + 65536);
	/* libevent moves 16 KiB a wakeup by default: too little for pieces. */
	bufferevent_set_max_single_read(bev, LINK_IO_CHUNK);
	bufferevent_set_max_single_write(bev, LINK_IO_CHUNK);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
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
	if (bufferevent_socket_connect(bev, (struct sockaddr *)&sin,
	    (int)sizeof(sin)) == -1) {
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

static void
link_accept_cb(struct evconnlistener *lis, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)(void *)sa;
	struct bufferevent *bev;
	struct link *l;
	char remote[64], ip[INET_ADDRSTRLEN];
	int one = 1;

	(void)lis;
	(void)salen;
	(void)arg;
	link_preauth_room(sin->sin_addr.s_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	snprintf(remote, sizeof(remote), "%s:%u", ip, ntohs(sin->sin_port));
	if ((bev = transport_bev(pd->base, fd, false)) == NULL)
		return;
	l = link_new(bev, false, remote);
	l->ip = sin->sin_addr.s_addr;
	trace_add("link", "#%llu accepted from %s",
	    (unsigned long long)l->serial, remote);
	/* On TLS the hello waits for the handshake (link_event_cb). */
	if (!transport_raw()) {
		l->state = LINK_CONNECTING;
		return;
	}
	l->state = LINK_HELLO_SENT;
	link_send_hello(l, NULL, 0);
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
link_tick(void)
{
	uint64_t now = clock_mono_ms();
	struct link *l;

	/* A link that does not finish its handshake in time is dropped. */
	TAILQ_FOREACH(l, &links, entry)
		if (l->state != LINK_UP && l->state != LINK_DEAD &&
		    now - l->born_ms > pd->conf.preauth_ms) {
			if (l->state == LINK_CONNECTING && !transport_raw())
				transport_timeout();
			else
				pd_count_handshake(TIMEOUT);
			link_close(l, "handshake timeout");
		}

}

int
link_init(const char *listen, char *addr, size_t len)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	char ip[INET_ADDRSTRLEN];

	if (parse_hostport(listen, &sin) == -1) {
		log_warnx("listen: bad address \"%s\" (want 127.0.0.1:PORT)",
		    listen);
		return -1;
	}
	listener = evconnlistener_new_bind(pd->base, link_accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
	    128, (struct sockaddr *)&sin, (int)sizeof(sin));
	if (listener == NULL) {
		log_warn("listen %s", listen);
		return -1;
	}
	if (getsockname(evconnlistener_get_fd(listener),
	    (struct sockaddr *)&sin, &slen) == -1)
		return -1;
	inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip));
	snprintf(addr, len, "%s:%u", ip, ntohs(sin.sin_port));
	reaper_ev = event_new(pd->base, -1, 0, link_reap, NULL);
	dcbor_buf_init(&sendbuf);
	return transport_init(pd->conf.binding);
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

size_t
link_outq(const struct member *m)
{
	if (m->link == NULL || m->link->state != LINK_UP)
		return SIZE_MAX;
	return evbuffer_get_length(bufferevent_get_output(m->link->bev)) +
	    evbuffer_get_length(m->link->bulk);
}

json_t *
link_list_json(void)
{
	json_t *arr = json_array();
	struct link *l;
	uint64_t now = clock_mono_ms();

	TAILQ_FOREACH(l, &links, entry)
		json_array_append_new(arr, json_pack(
		    "{s:I, s:s, s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I}",
		    "serial", (json_int_t)l->serial,
		    "state", link_state_name(l->state),
		    "remote", l->remote, "outbound", l->outbound,
		    "peer", l->member ? l->member->name : "",
		    "up_ms", (json_int_t)(l->up_ms ? now - l->up_ms : 0),
		    "frames_in", (json_int_t)l->frames_in,
		    "frames_out", (json_int_t)l->frames_out,
		    "bytes_in", (json_int_t)l->bytes_in,
		    "bytes_out", (json_int_t)l->bytes_out));
	return arr;
}

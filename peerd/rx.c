/*
 * rx.c: the receive path of a link.  On TCP the link reads its socket
 * itself (rx_attach: one recv a readiness into the input buffer, no
 * FIONREAD, repeated only while a read comes back full); on TLS the
 * OpenSSL bufferevent reads.  A frame is read in two stages (its
 * length, checked against the cap before anything is allocated, then the
 * body); a large body of a proven peer is read straight from the socket
 * into a pooled buffer.  Each frame is opened and verified (its MAC
 * checked on a keyed link, its signature otherwise), put through
 * the receiver checks (docs/protocol.md 5) and handed to link_dispatch;
 * before the link is UP only CHANNEL_HELLO goes anywhere (handshake.c).
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "fault.h"
#include "frame.h"
#include "handshake.h"
#include "hlc.h"
#include "link.h"
#include "link_int.h"
#include "member.h"
#include "peerd.h"
#include "rx.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"
#include "xmalloc.h"

#define LINK_DIRECT_MIN		(64u << 10)	/* a frame's rest read directly */
#define LINK_LOWAT_MAX		(256u << 10)	/* bytes a wakeup in a frame */
#define LINK_RX_POOL		8		/* idle frame buffers kept */
#define LINK_RX_POOL_MAX	((4u << 20) + (64u << 10)) /* a piece's frame */
/* What an unproven link may send in one frame: a hello or a proof is a
 * few hundred bytes, so no stranger makes the peer buffer --max-frame. */
#define LINK_PREAUTH_FRAME	(4u << 10)
#define LINK_READ_PASSES	16	/* full reads a wake-up: 1 MiB */

/*
 * Buffers for large frames read directly (rx_cb), kept for reuse so
 * that a stream of pieces does not allocate (and fault in) a fresh MiB
 * each.
 */
static struct rxbuf {
	uint8_t	*p;
	size_t	 cap;
} rx_pool[LINK_RX_POOL];
static size_t	 rx_npool;

uint8_t *
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

void
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

/* The receiver checks once the link is up (docs/protocol.md 5). true: accept. */
static bool
rx_check(struct link *l, const struct frame *f)
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
rx_frame(struct link *l, const uint8_t *buf, size_t len)
{
	struct frame f;
	int rc;

	l->frames_in++;
	l->bytes_in += len + FRAME_LEN_PREFIX;
	/* TLS: bare frames of its peer; keyed TCP: MACs; else signatures. */
	rc = l->keyed ? frame_open_keyed(buf, len, &f, l->member->id,
	    &l->mac_rx) : frame_open_channel(buf, len, &f, l->authed ?
	    l->chan_id : NULL);
	if (rc != FRAME_OK) {
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
		handshake_recv(l, &f);
		return;
	}
	if (!rx_check(l, &f))
		return;
	l->member->frames_in++;
	link_dispatch(l, &f);
}

/* The stream ended inside a frame (its length or its body). */
void
rx_truncated(struct link *l)
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
rx_lowat(struct link *l, size_t rest)
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
 * copied whole into a freshly allocated MiB).  The stream's own reading
 * is off meanwhile (its input buffer is empty: every byte it held went
 * into the frame): on TCP the link's read event comes here while l->rx is
 * set, on TLS the bufferevent's reading is off and is back on once the
 * frame is dispatched.
 */
static void
rx_cb(struct link *l)
{
	uint8_t *buf;
	size_t cap;
	ssize_t n;

	n = transport_recv(l->bev, l->rx + l->rx_got, l->need - l->rx_got);
	if (n == 0) {
		rx_truncated(l);	/* EOF inside a frame, by construction */
		return;
	}
	if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR) {
		link_close(l, strerror(errno));
		return;
	}
	if (n == -1)
		return;
	pd_count(link_reads);
	l->rx_got += (size_t)n;
	if (l->rx_got < l->need) {
		rx_lowat(l, transport_lowat(l->need - l->rx_got));
		return;
	}
	if (!l->sockread)
		event_del(l->rx_ev);
	rx_lowat(l, 0);
	buf = l->rx;
	cap = l->rx_cap;
	l->rx = NULL;
	l->have_len = false;
	rx_frame(l, buf, l->need);
	rx_put(buf, cap);
	if (l->state != LINK_DEAD && !l->sockread)
		transport_resume(l->bev);
}

/*
 * The stream of a TCP link, read by the link (rx_attach): each recv's
 * bytes go into the input buffer and rx_read_cb takes every whole frame
 * out of it before the next recv, so the input holds at most one partial
 * frame.  A read shorter than TRANSPORT_READ_MAX emptied the socket: one
 * system call a wake-up however many frames came.  A full read reads on,
 * up to LINK_READ_PASSES, then the loop's next turn (other sockets wait
 * meanwhile).  A large frame's rest is read into its own buffer (rx_cb).
 */
static void
rx_stream(struct link *l)
{
	struct evbuffer *in = bufferevent_get_input(l->bev);
	int fd = bufferevent_getfd(l->bev);

	for (int pass = 0; pass < LINK_READ_PASSES; pass++) {
		ssize_t n = transport_read(fd, in);

		if (n == 0) {
			rx_end(l);
			return;
		}
		if (n == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				link_close(l, strerror(errno));
			return;
		}
		pd_count(link_reads);
		rx_read_cb(l->bev, l);
		if (l->state == LINK_DEAD || l->rx != NULL ||
		    (size_t)n < TRANSPORT_READ_MAX)
			return;
	}
}

/* The read event of a link: its stream (TCP), or a large frame's rest. */
static void
rx_ev_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct link *l = arg;

	(void)fd;
	(void)ev;
	if (l->state == LINK_DEAD)
		return;
	if (l->rx != NULL)
		rx_cb(l);
	else if (l->sockread)
		rx_stream(l);
}

void
rx_attach(struct link *l)
{
	int fd = bufferevent_getfd(l->bev);

	if (transport_raw() && fd != -1 && l->rx_ev == NULL &&
	    (l->rx_ev = event_new(pd->base, fd, EV_READ | EV_PERSIST,
	    rx_ev_cb, l)) != NULL && event_add(l->rx_ev, NULL) == 0) {
		/* A bufferevent freezes its input's end for its own reads. */
		evbuffer_unfreeze(bufferevent_get_input(l->bev), 0);
		l->sockread = true;
		return;
	}
	bufferevent_enable(l->bev, EV_READ);	/* TLS: its bufferevent */
}

void
rx_end(struct link *l)
{
	if (l->have_len ||
	    evbuffer_get_length(bufferevent_get_input(l->bev)) > 0)
		rx_truncated(l);
	else
		link_close(l, "end of stream");
}

static void
rx_start(struct link *l, struct evbuffer *in, size_t avail)
{
	int fd = bufferevent_getfd(l->bev);

	if (l->rx_ev == NULL)
		l->rx_ev = event_new(pd->base, fd, EV_READ | EV_PERSIST,
		    rx_ev_cb, l);
	if (l->rx_ev == NULL)
		return;		/* read it through the bufferevent */
	l->rx = rx_get(l->need, &l->rx_cap);
	l->rx_got = (size_t)evbuffer_remove(in, l->rx, avail);
	if (!l->sockread) {	/* TLS: the bufferevent stops reading */
		bufferevent_disable(l->bev, EV_READ);
		event_add(l->rx_ev, NULL);
	}
	rx_lowat(l, transport_lowat(l->need - l->rx_got));
	if (transport_pending(l->bev))	/* no readiness will announce it */
		event_active(l->rx_ev, EV_READ, 1);
}

/* The largest frame l may send us now: --max-frame once it is UP. */
static uint32_t
rx_frame_cap(const struct link *l)
{
	if (l->state == LINK_UP || pd->conf.max_frame < LINK_PREAUTH_FRAME)
		return (uint32_t)pd->conf.max_frame;
	return LINK_PREAUTH_FRAME;
}

void
rx_read_cb(struct bufferevent *bev, void *arg)
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
			rc = frame_read_len(hdr, sizeof(hdr), rx_frame_cap(l),
			    &l->need);
			if (rc != FRAME_OK) {
				pd_count_bad(rc);
				if (rc == FRAME_ETOOBIG && l->state != LINK_UP)
					pd_count_limit(PREAUTH_FRAME);
				else if (rc == FRAME_ETOOBIG)
					pd_count_limit(FRAME_SIZE);
				trace_add("frame", "#%llu bad length from %s: %s",
				    (unsigned long long)l->serial, l->remote,
				    frame_strerror(rc));
				link_close(l, frame_strerror(rc));
				return;
			}
			if (avail - FRAME_LEN_PREFIX >= l->need) {
				/* The whole frame is here: one pullup, one drain. */
				rx_frame(l, evbuffer_pullup(in, FRAME_LEN_PREFIX +
				    l->need) + FRAME_LEN_PREFIX, l->need);
				evbuffer_drain(in, FRAME_LEN_PREFIX + l->need);
				continue;
			}
			evbuffer_drain(in, FRAME_LEN_PREFIX);
			l->have_len = true;
			avail -= FRAME_LEN_PREFIX;
		}
		if (avail < l->need) {
			/* Only a proven peer gets a buffer before its bytes. */
			if (l->state == LINK_UP && !transport_datagram() &&
			    l->need - avail >= LINK_DIRECT_MIN)
				rx_start(l, in, avail);
			return;
		}
		rx_frame(l, evbuffer_pullup(in, l->need), l->need);
		evbuffer_drain(in, l->need);
		l->have_len = false;
	}
}

/*
 * dtls.c: DTLS 1.2 channels carrying the reliable frame stream (see
 * dtls.h and docs/protocol.md "The DTLS binding").
 *
 * An association (struct sess) runs this state machine, every transition
 * in sess_set:
 *
 *   HANDSHAKE --DTLS done--> ENDORSE --their endorsement good--> UP
 *   any --failure, close_notify or free--> DEAD
 *
 * OpenSSL reads and writes through a BIO of this file's (dbio_*): a read
 * returns the one datagram being handled, a write is one sendto, through
 * the fault filter (drop, delay) once the peer's id is known, queued
 * and sent DTLS_TXQ a system call (tx_flush).  Reading the
 * socket takes up to DTLS_BATCH datagrams a system call; each
 * association they touched then sends what it owes once (one
 * acknowledgement for the batch).  Each association has one timer: the
 * DTLS handshake's retransmission (DTLSv1_get_timeout, then
 * DTLSv1_handle_timeout) or the stream's (rstream_poll).
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "dtls.h"
#include "dtlsid.h"
#include "fault.h"
#include "log.h"
#include "peerd.h"
#include "rstream.h"
#include "stats.h"
#include "xmalloc.h"

#define DTLS_BATCH		32		/* datagrams a recvmmsg */
#define DTLS_DGRAM_MAX		65536		/* a datagram read or sent */
#define DTLS_COALESCE_LO	65000		/* records a datagram, loopback */
#define DTLS_LOOPBACK_MTU	(16384 + 128)	/* a full record a datagram */
#define DTLS_PATH_MTU		1500		/* elsewhere */
#define DTLS_SOCKBUF		(4 << 20)
#define DTLS_PUMP_MAX		(1u << 20)	/* unsent bytes the stream takes */
#define DTLS_PAIR_HIGH		(256u << 10)	/* then the link's output holds */
#define DTLS_COOKIE_LEN		16
#define DTLS_TXQ		32		/* datagrams a sendmmsg */
#define DTLS_PASSES		2		/* recvmmsg calls a wake-up */

enum sess_state { S_HANDSHAKE, S_ENDORSE, S_UP, S_DEAD };

/* A datagram the fault filter holds back. */
struct delayed {
	TAILQ_ENTRY(delayed)	 entry;
	struct sess		*sess;
	struct event		*ev;
	size_t			 len;
	uint8_t			 data[];
};

/* What the BIO of one association (or of the listener) reads and writes. */
struct dbio {
	int			 fd;
	struct sockaddr_in	 peer;
	const uint8_t		*in;		/* the datagram being read */
	size_t			 in_len;
	struct sess		*sess;		/* NULL: the listener */
};

struct sess {
	TAILQ_ENTRY(sess)	 entry;
	enum sess_state		 state;
	bool			 outbound, dirty;
	struct dbio		 bd;
	SSL			*ssl;
	struct bufferevent	*pair[2];	/* [0] the link's, [1] ours */
	struct event		*timer, *rd_ev;	/* rd_ev: a dialed socket's */
	struct rstream		*rs;
	struct rstream_stats	 seen;		/* counted into pd_metrics */
	uint8_t			 chan[DTLSID_CHAN_PUB_LEN];	/* theirs */
	uint8_t			 ekm[DTLSID_EKM_LEN];
	uint8_t			 endorse[DTLSID_ENDORSE_LEN];	/* theirs */
	size_t			 endorse_got;
	uint8_t			 pub[IDENTITY_PUB_LEN], id[IDENTITY_ID_LEN];
	const char		*why;		/* the failure, for the link */
	TAILQ_HEAD(, delayed)	 delayed;
};

static TAILQ_HEAD(, sess) sessions = TAILQ_HEAD_INITIALIZER(sessions);
static struct dtlsid	 chan;
static SSL_CTX		*ctx;
static int		 lfd = -1;
static struct event	*lev;
static SSL		*listen_ssl;
static struct dbio	 listen_bd;
static dtls_accept_fn	 accept_fn;
static BIO_METHOD	*dbio_method;
static uint8_t		 cookie_key[32];
static uint8_t		 rbufs[DTLS_BATCH][DTLS_DGRAM_MAX];
static uint8_t		 record[DTLS_DGRAM_MAX];
/*
 * A test hook (docs/debugging.md): FLEETLAB_DTLS_ENDORSE=forge sends
 * endorsements with a flipped signature bit, =replay sends every channel
 * the endorsement of this peer's first session (made with that session's
 * exported bytes), so the far end's check can be seen refusing both.
 */
static enum { ENDORSE_TRUE, ENDORSE_FORGE, ENDORSE_REPLAY } endorse_test;
static uint8_t		 first_ekm[DTLSID_EKM_LEN];
static bool		 have_first_ekm;

static void	sess_service(struct sess *);
static void	sess_fail(struct sess *, enum metrics_dtls_fail);

static const char *const fail_text[METRICS_DTLS_FAIL_MAX] = {
	[METRICS_DTLS_HANDSHAKE] = "dtls: handshake failed",
	[METRICS_DTLS_CERT] = "dtls: channel certificate refused or absent",
	[METRICS_DTLS_ENDORSE] = "dtls: endorsement refused (forged, or "
	    "made for another session or key)",
	[METRICS_DTLS_TIMEOUT] = "dtls: handshake timeout",
	[METRICS_DTLS_ALERT] = "dtls: fatal alert on an open channel",
};

/* ---- the datagram BIO ---- */

static bool
loopback(const struct sockaddr_in *sin)
{
	return (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
}

/*
 * Datagrams wait here and leave DTLS_TXQ at a time (sendmmsg): a sender's
 * system calls are a 32nd of one a datagram.  Every entry point from the
 * loop that can send ends with tx_flush (sess_service, dtls_read_cb,
 * delayed_cb, dtls_free), so nothing waits past the callback that made it.
 */
static struct {
	int			 fd;
	unsigned		 n;
	struct mmsghdr		 msg[DTLS_TXQ];
	struct iovec		 iov[DTLS_TXQ];
	struct sockaddr_in	 to[DTLS_TXQ];
	uint8_t			 buf[DTLS_TXQ][DTLS_DGRAM_MAX];
} txq = { .fd = -1 };

static void
tx_flush(void)
{
	unsigned off = 0;
	int n;

	pd_count_add(dtls_datagrams_out, txq.n);
	while (off < txq.n) {
		n = sendmmsg(txq.fd, txq.msg + off, txq.n - off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			n = 1;	/* that one is lost: the stream recovers it */
		off += (unsigned)n;
	}
	txq.n = 0;
}

static void
dgram_send(struct sess *s, int fd, const struct sockaddr_in *to,
    const void *p, size_t len)
{
	unsigned i;

	(void)s;
	if (len > DTLS_DGRAM_MAX)
		return;		/* cannot happen: records fit the MTU */
	/*
	 * Toward a loopback address, whole records bound for the same place
	 * share a datagram up to 64 KiB (DTLS allows several records a
	 * datagram): three 16 KiB records cost the kernel one datagram.
	 */
	if (txq.n > 0 && txq.fd == fd && loopback(to) &&
	    txq.to[txq.n - 1].sin_port == to->sin_port &&
	    txq.to[txq.n - 1].sin_addr.s_addr == to->sin_addr.s_addr &&
	    txq.iov[txq.n - 1].iov_len + len <= DTLS_COALESCE_LO) {
		i = txq.n - 1;
		memcpy(txq.buf[i] + txq.iov[i].iov_len, p, len);
		txq.iov[i].iov_len += len;
		return;
	}
	if (txq.n == DTLS_TXQ || (txq.n > 0 && txq.fd != fd))
		tx_flush();
	i = txq.n++;
	txq.fd = fd;
	memcpy(txq.buf[i], p, len);
	txq.to[i] = *to;
	txq.iov[i].iov_base = txq.buf[i];
	txq.iov[i].iov_len = len;
	memset(&txq.msg[i], 0, sizeof(txq.msg[i]));
	txq.msg[i].msg_hdr.msg_name = &txq.to[i];
	txq.msg[i].msg_hdr.msg_namelen = sizeof(txq.to[i]);
	txq.msg[i].msg_hdr.msg_iov = &txq.iov[i];
	txq.msg[i].msg_hdr.msg_iovlen = 1;
}

static void
delayed_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct delayed *d = arg;
	struct sess *s = d->sess;

	(void)fd;
	(void)ev;
	TAILQ_REMOVE(&s->delayed, d, entry);
	dgram_send(s, s->bd.fd, &s->bd.peer, d->data, d->len);
	tx_flush();
	event_free(d->ev);
	free(d);
}

static int
dbio_write(BIO *b, const char *data, int len)
{
	struct dbio *d = BIO_get_data(b);
	struct sess *s = d->sess;
	uint64_t delay_us = 0;

	if (len <= 0)
		return 0;
	/* The fault filter, once the peer is known: per datagram. */
	if (s != NULL && s->state == S_UP &&
	    fault_on_send(s->id, &delay_us) == -1) {
		pd_count(dtls_fault_dropped);
		return len;
	}
	if (delay_us > 0 || (s != NULL && !TAILQ_EMPTY(&s->delayed))) {
		struct delayed *dl = xmalloc(sizeof(*dl) + (size_t)len);
		struct timeval tv = { (time_t)(delay_us / 1000000u),
		    (suseconds_t)(delay_us % 1000000u) };

		dl->sess = s;
		dl->len = (size_t)len;
		memcpy(dl->data, data, (size_t)len);
		dl->ev = evtimer_new(pd->base, delayed_cb, dl);
		TAILQ_INSERT_TAIL(&s->delayed, dl, entry);
		evtimer_add(dl->ev, &tv);
		pd_count(dtls_fault_delayed);
		return len;
	}
	dgram_send(s, d->fd, &d->peer, data, (size_t)len);
	return len;
}

static int
dbio_read(BIO *b, char *buf, int len)
{
	struct dbio *d = BIO_get_data(b);
	size_t n;

	BIO_clear_retry_flags(b);
	if (d->in == NULL) {
		BIO_set_retry_read(b);
		return -1;
	}
	n = d->in_len < (size_t)len ? d->in_len : (size_t)len;
	memcpy(buf, d->in, n);
	d->in = NULL;
	return (int)n;
}

static long
dbio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct dbio *d = BIO_get_data(b);

	(void)num;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_DGRAM_GET_PEER:
		if (d == NULL || ptr == NULL)
			return 0;
		return BIO_ADDR_rawmake(ptr, AF_INET, &d->peer.sin_addr,
		    sizeof(d->peer.sin_addr), d->peer.sin_port) ?
		    (long)sizeof(d->peer) : 0;
	case BIO_CTRL_DGRAM_SET_PEER:
		return 1;	/* each BIO has its one peer */
	case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD:
		return 28;	/* IPv4 and UDP headers */
	default:
		return 0;
	}
}

static int
dbio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static BIO *
dbio_new(struct dbio *d)
{
	BIO *b = BIO_new(dbio_method);

	if (b != NULL)
		BIO_set_data(b, d);
	return b;
}

/* ---- cookies: HMAC-SHA256 of the source address, a key per run ---- */

static void
cookie_of(const struct sockaddr_in *sin, uint8_t out[32])
{
	uint8_t msg[6];
	unsigned int len = 32;

	memcpy(msg, &sin->sin_addr, 4);
	memcpy(msg + 4, &sin->sin_port, 2);
	HMAC(EVP_sha256(), cookie_key, sizeof(cookie_key), msg, sizeof(msg),
	    out, &len);
}

static int
cookie_gen_cb(SSL *ssl, unsigned char *cookie, unsigned int *len)
{
	struct dbio *d = BIO_get_data(SSL_get_rbio(ssl));
	uint8_t mac[32];

	cookie_of(&d->peer, mac);
	memcpy(cookie, mac, DTLS_COOKIE_LEN);
	*len = DTLS_COOKIE_LEN;
	pd_count(dtls_cookies_sent);
	return 1;
}

static int
cookie_verify_cb(SSL *ssl, const unsigned char *cookie, unsigned int len)
{
	struct dbio *d = BIO_get_data(SSL_get_rbio(ssl));
	uint8_t mac[32];

	cookie_of(&d->peer, mac);
	return len == DTLS_COOKIE_LEN &&
	    CRYPTO_memcmp(cookie, mac, DTLS_COOKIE_LEN) == 0;
}

/* ---- associations ---- */

static void
sess_set(struct sess *s, enum sess_state next)
{
	static const bool ok[4][4] = {
		/* to:  HANDSHAKE ENDORSE UP    DEAD */
		[S_HANDSHAKE] = { false, true, false, true },
		[S_ENDORSE] = { false, false, true, true },
		[S_UP] = { false, false, false, true },
		[S_DEAD] = { false, false, false, true },
	};

	if (!ok[s->state][next]) {
		log_warnx("dtls: %d -> %d not allowed", s->state, next);
		next = S_DEAD;
	}
	s->state = next;
}

static void
sess_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct sess *s = arg;

	(void)fd;
	(void)ev;
	if (s->state == S_DEAD)
		return;
	if (s->state == S_HANDSHAKE) {
		if (DTLSv1_handle_timeout(s->ssl) < 0) {
			sess_fail(s, METRICS_DTLS_TIMEOUT);
			return;
		}
	}
	sess_service(s);
}

static void sess_pair_read_cb(struct bufferevent *, void *);

static struct sess *
sess_new(struct event_base *base)
{
	struct sess *s = xcalloc(1, sizeof(*s));

	s->bd.fd = -1;
	s->bd.sess = s;
	TAILQ_INIT(&s->delayed);
	if (bufferevent_pair_new(base, BEV_OPT_DEFER_CALLBACKS, s->pair) ==
	    -1) {
		free(s);
		return NULL;
	}
	s->timer = evtimer_new(base, sess_timer_cb, s);
	bufferevent_setcb(s->pair[1], sess_pair_read_cb, NULL, NULL, s);
	bufferevent_setwatermark(s->pair[1], EV_READ, 0, DTLS_PAIR_HIGH);
	bufferevent_enable(s->pair[1], EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	return s;
}

static struct sess *
sess_of(struct bufferevent *bev)
{
	struct bufferevent *ours = bufferevent_pair_get_partner(bev);
	void *arg = NULL;

	if (ours == NULL)
		return NULL;
	bufferevent_getcb(ours, NULL, NULL, NULL, &arg);
	return arg;
}

static void
sess_fail(struct sess *s, enum metrics_dtls_fail why)
{
	if (s->state == S_DEAD)
		return;
	pd_metrics.dtls_failures[why]++;
	s->why = fail_text[why];
	log_debug("dtls: %s", s->why);
	sess_set(s, S_DEAD);
	bufferevent_trigger_event(s->pair[0], BEV_EVENT_ERROR,
	    BEV_TRIG_DEFER_CALLBACKS);
}

/* The endorsement is the stream's first bytes; the rest is the link's. */
static void
sess_deliver(void *arg, const uint8_t *p, size_t len)
{
	struct sess *s = arg;
	size_t take;

	if (s->state == S_ENDORSE) {
		take = DTLSID_ENDORSE_LEN - s->endorse_got;
		if (take > len)
			take = len;
		memcpy(s->endorse + s->endorse_got, p, take);
		s->endorse_got += take;
		p += take;
		len -= take;
		if (s->endorse_got < DTLSID_ENDORSE_LEN)
			return;
		if (dtlsid_check(s->endorse, s->chan, s->ekm, s->pub,
		    s->id) == -1) {
			sess_fail(s, METRICS_DTLS_ENDORSE);
			return;
		}
		sess_set(s, S_UP);
		pd_count(dtls_handshakes);
		bufferevent_trigger_event(s->pair[0], BEV_EVENT_CONNECTED,
		    BEV_TRIG_DEFER_CALLBACKS);
	}
	if (s->state == S_UP && len > 0 &&
	    bufferevent_write(s->pair[1], p, len) == -1)
		sess_fail(s, METRICS_DTLS_ALERT);
}

static int
sess_send_record(void *arg, const uint8_t *p, size_t len)
{
	struct sess *s = arg;

	ERR_clear_error();
	if (SSL_write(s->ssl, p, (int)len) <= 0) {
		ERR_clear_error();
		return -1;
	}
	return 0;
}

/* The DTLS handshake is done: send our endorsement, await theirs. */
static void
sess_handshaken(struct sess *s)
{
	struct rstream_io io = { sess_send_record, sess_deliver, s };
	uint8_t mine[DTLSID_ENDORSE_LEN];
	size_t mss = DTLS_get_data_mtu(s->ssl);

	if (dtlsid_peer_chan(s->ssl, s->chan) == -1) {
		sess_fail(s, METRICS_DTLS_CERT);
		return;
	}
	if (dtlsid_ekm(s->ssl, s->ekm) == -1) {
		sess_fail(s, METRICS_DTLS_HANDSHAKE);
		return;
	}
	if (!have_first_ekm) {
		memcpy(first_ekm, s->ekm, sizeof(first_ekm));
		have_first_ekm = true;
	}
	if (dtlsid_endorse(&pd->ident, chan.pub, endorse_test ==
	    ENDORSE_REPLAY ? first_ekm : s->ekm, mine) == -1) {
		sess_fail(s, METRICS_DTLS_HANDSHAKE);
		return;
	}
	if (endorse_test == ENDORSE_FORGE)
		mine[DTLSID_ENDORSE_LEN - 1] ^= 0x01;
	if (mss > 16384)
		mss = 16384;
	if (mss < 256 + RSTREAM_DATA_HDR)
		mss = 256 + RSTREAM_DATA_HDR;
	s->rs = rstream_new(mss - RSTREAM_DATA_HDR, &io, clock_mono_us());
	rstream_write(s->rs, mine, sizeof(mine));
	sess_set(s, S_ENDORSE);
}

static void
sess_handshake(struct sess *s)
{
	int r;

	ERR_clear_error();
	if ((r = SSL_do_handshake(s->ssl)) == 1) {
		sess_handshaken(s);
		return;
	}
	switch (SSL_get_error(s->ssl, r)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return;
	default:
		log_debug("dtls: handshake: %s",
		    ERR_error_string(ERR_peek_error(), NULL));
		ERR_clear_error();
		sess_fail(s, dtlsid_verify_failed(s->ssl) ?
		    METRICS_DTLS_CERT : METRICS_DTLS_HANDSHAKE);
	}
}

/* Count the stream's own numbers into the daemon's. */
static void
sess_count(struct sess *s)
{
	const struct rstream_stats *st = rstream_stats(s->rs);

	pd_metrics.dtls_retransmits += st->retx - s->seen.retx;
	pd_metrics.dtls_lost += st->lost - s->seen.lost;
	pd_metrics.dtls_rto += st->rto - s->seen.rto;
	pd_metrics.dtls_cuts_undone += st->undone - s->seen.undone;
	pd_metrics.dtls_stream_dup += st->dup_in - s->seen.dup_in;
	pd_metrics.dtls_stream_bad += st->bad - s->seen.bad;
	s->seen = *st;
}

/* Move the link's bytes into the stream, send what is due, set the timer. */
static void
sess_service(struct sess *s)
{
	struct evbuffer *in = bufferevent_get_input(s->pair[1]);
	uint64_t now = clock_mono_us(), at = UINT64_MAX;
	struct timeval tv;

	s->dirty = false;
	if (s->state == S_DEAD) {
		tx_flush();
		return;
	}
	if (s->rs != NULL) {
		if (s->state == S_UP)
			while (evbuffer_get_length(in) > 0 &&
			    rstream_unsent(s->rs) < DTLS_PUMP_MAX) {
				size_t n = evbuffer_get_contiguous_space(in);

				if (n > DTLS_PUMP_MAX)
					n = DTLS_PUMP_MAX;
				rstream_write(s->rs, evbuffer_pullup(in,
				    (ev_ssize_t)n), n);
				evbuffer_drain(in, n);
			}
		at = rstream_poll(s->rs, now);
		sess_count(s);
	}
	if (s->state == S_HANDSHAKE && DTLSv1_get_timeout(s->ssl, &tv) == 1) {
		uint64_t t = now + (uint64_t)tv.tv_sec * 1000000u +
		    (uint64_t)tv.tv_usec;

		if (t < at)
			at = t;
	}
	tx_flush();
	if (at == UINT64_MAX) {
		evtimer_del(s->timer);
		return;
	}
	at = at > now ? at - now : 0;
	tv.tv_sec = (time_t)(at / 1000000u);
	tv.tv_usec = (suseconds_t)(at % 1000000u);
	evtimer_add(s->timer, &tv);
}

static void
sess_pair_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	sess_service(arg);
}

/* One datagram for s. */
static void
sess_input(struct sess *s, const uint8_t *p, size_t len)
{
	bool was_open = s->state == S_ENDORSE || s->state == S_UP;
	bool got = false;
	int n;

	pd_count(dtls_datagrams_in);
	if (s->state == S_DEAD)
		return;
	s->dirty = true;
	s->bd.in = p;
	s->bd.in_len = len;
	if (s->state == S_HANDSHAKE) {
		sess_handshake(s);
		if (s->state != S_ENDORSE) {
			s->bd.in = NULL;
			return;
		}
	}
	for (;;) {
		ERR_clear_error();
		n = SSL_read(s->ssl, record, sizeof(record));
		if (n > 0) {
			got = true;
			rstream_input(s->rs, record, (size_t)n, clock_mono_us());
			if (s->state == S_DEAD)
				break;
			continue;
		}
		switch (SSL_get_error(s->ssl, n)) {
		case SSL_ERROR_WANT_READ:
		case SSL_ERROR_WANT_WRITE:
			break;
		case SSL_ERROR_ZERO_RETURN:	/* close_notify */
			sess_set(s, S_DEAD);
			s->why = "dtls: closed by the peer";
			bufferevent_trigger_event(s->pair[0], BEV_EVENT_EOF,
			    BEV_TRIG_DEFER_CALLBACKS);
			break;
		default:
			ERR_clear_error();
			sess_fail(s, METRICS_DTLS_ALERT);
			break;
		}
		break;
	}
	s->bd.in = NULL;
	/* Replayed, unauthentic or garbled: DTLS drops it silently. */
	if (was_open && !got && s->state != S_DEAD)
		pd_count(dtls_records_dropped);
}

/* A datagram from an address with no association: DTLSv1_listen's. */
static void
listen_input(const struct sockaddr_in *from, const uint8_t *p, size_t len)
{
	BIO_ADDR *client;
	struct sess *s;
	BIO *b;
	int r;

	pd_count(dtls_datagrams_in);
	listen_bd.peer = *from;
	listen_bd.in = p;
	listen_bd.in_len = len;
	if ((client = BIO_ADDR_new()) == NULL)
		return;
	ERR_clear_error();
	r = DTLSv1_listen(listen_ssl, client);
	BIO_ADDR_free(client);
	ERR_clear_error();
	listen_bd.in = NULL;
	if (r != 1)
		return;		/* a cookie sent, or nothing: no state kept */
	if ((s = sess_new(pd->base)) == NULL)
		return;
	s->bd.fd = lfd;
	s->bd.peer = *from;
	if ((b = dbio_new(&s->bd)) == NULL) {
		dtls_free(s->pair[0]);
		return;
	}
	s->ssl = listen_ssl;
	SSL_set_bio(s->ssl, b, b);	/* frees the listener's BIO */
	SSL_set_app_data(s->ssl, s);
	listen_ssl = NULL;
	if ((listen_ssl = SSL_new(ctx)) == NULL ||
	    (b = dbio_new(&listen_bd)) == NULL)
		fatalx("dtls: cannot make the listener");
	SSL_set_bio(listen_ssl, b, b);
	SSL_set_accept_state(listen_ssl);
	DTLS_set_link_mtu(listen_ssl, DTLS_LOOPBACK_MTU);
	DTLS_set_link_mtu(s->ssl, loopback(from) ? DTLS_LOOPBACK_MTU :
	    DTLS_PATH_MTU);
	accept_fn(s->pair[0], from);
	sess_handshake(s);
	sess_service(s);
}

static struct sess *
sess_by_addr(const struct sockaddr_in *from)
{
	struct sess *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (!s->outbound && s->bd.peer.sin_port == from->sin_port &&
		    s->bd.peer.sin_addr.s_addr == from->sin_addr.s_addr)
			return s;
	return NULL;
}

/*
 * Read a socket's datagrams, DTLS_BATCH a system call: the listener's
 * (s NULL: by source address) or a dialed association's.
 */
static void
dtls_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct mmsghdr msgs[DTLS_BATCH];
	struct iovec iov[DTLS_BATCH];
	struct sockaddr_in from[DTLS_BATCH];
	struct sess *dialed = arg, *s, *next;
	int n;

	(void)ev;
	for (int pass = 0; pass < DTLS_PASSES; pass++) {
		memset(msgs, 0, sizeof(msgs));
		for (int i = 0; i < DTLS_BATCH; i++) {
			iov[i].iov_base = rbufs[i];
			iov[i].iov_len = sizeof(rbufs[i]);
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &from[i];
			msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		if ((n = recvmmsg(fd, msgs, DTLS_BATCH, MSG_DONTWAIT, NULL)) <= 0)
			break;
		for (int i = 0; i < n; i++) {
			size_t len = msgs[i].msg_len;

			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				pd_count(dtls_records_dropped);
				continue;
			}
			if (dialed != NULL)
				sess_input(dialed, rbufs[i], len);
			else if ((s = sess_by_addr(&from[i])) != NULL)
				sess_input(s, rbufs[i], len);
			else
				listen_input(&from[i], rbufs[i], len);
		}
		for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
			next = TAILQ_NEXT(s, entry);
			if (s->dirty)
				sess_service(s);
		}
		if (n < DTLS_BATCH)
			break;
	}
	tx_flush();	/* cookie requests */
}

static int
udp_socket(void)
{
	int fd, sz = DTLS_SOCKBUF;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

/* ---- the API ---- */

int
dtls_init(void)
{
	const char *t = getenv("FLEETLAB_DTLS_ENDORSE");

	endorse_test = t == NULL ? ENDORSE_TRUE : strcmp(t, "forge") == 0 ?
	    ENDORSE_FORGE : strcmp(t, "replay") == 0 ? ENDORSE_REPLAY :
	    ENDORSE_TRUE;
	if (endorse_test != ENDORSE_TRUE)
		log_warnx("dtls: test hook: %s endorsements", t);
	if (dbio_method == NULL) {
		if ((dbio_method = BIO_meth_new(BIO_get_new_index() |
		    BIO_TYPE_SOURCE_SINK, "fleetlab datagram")) == NULL ||
		    BIO_meth_set_write(dbio_method, dbio_write) != 1 ||
		    BIO_meth_set_read(dbio_method, dbio_read) != 1 ||
		    BIO_meth_set_ctrl(dbio_method, dbio_ctrl) != 1 ||
		    BIO_meth_set_create(dbio_method, dbio_create) != 1)
			return -1;
	}
	if (dtlsid_new(&chan, pd->ident.peer_id) == -1 ||
	    (ctx = dtlsid_ctx_new(&chan)) == NULL)
		return -1;
	SSL_CTX_set_cookie_generate_cb(ctx, cookie_gen_cb);
	SSL_CTX_set_cookie_verify_cb(ctx, cookie_verify_cb);
	RAND_bytes(cookie_key, sizeof(cookie_key));
	return 0;
}

int
dtls_listen(struct sockaddr_in *sin, dtls_accept_fn fn)
{
	socklen_t slen = sizeof(*sin);
	int one = 1;
	BIO *b;

	accept_fn = fn;
	if ((lfd = udp_socket()) == -1)
		return -1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)sin, sizeof(*sin)) == -1 ||
	    getsockname(lfd, (struct sockaddr *)sin, &slen) == -1)
		return -1;
	listen_bd.fd = lfd;
	if ((listen_ssl = SSL_new(ctx)) == NULL ||
	    (b = dbio_new(&listen_bd)) == NULL)
		return -1;
	SSL_set_bio(listen_ssl, b, b);
	SSL_set_accept_state(listen_ssl);
	DTLS_set_link_mtu(listen_ssl, DTLS_LOOPBACK_MTU);
	lev = event_new(pd->base, lfd, EV_READ | EV_PERSIST, dtls_read_cb,
	    NULL);
	if (lev == NULL || event_add(lev, NULL) == -1)
		return -1;
	return 0;
}

void
dtls_shutdown(void)
{
	while (!TAILQ_EMPTY(&sessions))
		dtls_free(TAILQ_FIRST(&sessions)->pair[0]);
	if (lev != NULL)
		event_free(lev);
	lev = NULL;
	SSL_free(listen_ssl);
	listen_ssl = NULL;
	if (lfd != -1)
		close(lfd);
	lfd = -1;
	SSL_CTX_free(ctx);
	ctx = NULL;
	dtlsid_free(&chan);
}

struct bufferevent *
dtls_bev_new(struct event_base *base)
{
	struct sess *s = sess_new(base);

	if (s == NULL)
		return NULL;
	s->outbound = true;
	return s->pair[0];
}

int
dtls_connect(struct bufferevent *bev, const struct sockaddr_in *sin)
{
	struct sess *s = sess_of(bev);
	BIO *b;

	if (s == NULL || (s->bd.fd = udp_socket()) == -1)
		return -1;
	s->bd.peer = *sin;
	if (connect(s->bd.fd, (const struct sockaddr *)sin, sizeof(*sin)) ==
	    -1 || (s->ssl = SSL_new(ctx)) == NULL ||
	    (b = dbio_new(&s->bd)) == NULL)
		return -1;
	SSL_set_bio(s->ssl, b, b);
	SSL_set_app_data(s->ssl, s);
	SSL_set_connect_state(s->ssl);
	DTLS_set_link_mtu(s->ssl, loopback(sin) ? DTLS_LOOPBACK_MTU :
	    DTLS_PATH_MTU);
	s->rd_ev = event_new(pd->base, s->bd.fd, EV_READ | EV_PERSIST,
	    dtls_read_cb, s);
	if (s->rd_ev == NULL || event_add(s->rd_ev, NULL) == -1)
		return -1;
	sess_handshake(s);	/* the ClientHello */
	sess_service(s);
	return 0;
}

int
dtls_peer(struct bufferevent *bev, uint8_t pub[IDENTITY_PUB_LEN],
    uint8_t id[IDENTITY_ID_LEN])
{
	struct sess *s = sess_of(bev);

	if (s == NULL || s->state != S_UP)
		return -1;
	memcpy(pub, s->pub, IDENTITY_PUB_LEN);
	memcpy(id, s->id, IDENTITY_ID_LEN);
	return 1;
}

const char *
dtls_failure(struct bufferevent *bev)
{
	struct sess *s = sess_of(bev);

	return s != NULL ? s->why : NULL;
}

void
dtls_flush(struct bufferevent *bev)
{
	struct sess *s = sess_of(bev);

	if (s != NULL)
		sess_service(s);
}

void
dtls_free(struct bufferevent *bev)
{
	struct sess *s = sess_of(bev);
	struct delayed *d;

	if (s == NULL) {
		bufferevent_free(bev);
		return;
	}
	TAILQ_REMOVE(&sessions, s, entry);
	if (s->ssl != NULL) {
		if (s->state == S_UP || s->state == S_ENDORSE) {
			SSL_shutdown(s->ssl);	/* a close_notify */
			tx_flush();
		}
		ERR_clear_error();
		SSL_free(s->ssl);
	}
	while ((d = TAILQ_FIRST(&s->delayed)) != NULL) {
		TAILQ_REMOVE(&s->delayed, d, entry);
		event_free(d->ev);
		free(d);
	}
	rstream_free(s->rs);
	if (s->rd_ev != NULL)
		event_free(s->rd_ev);
	if (s->outbound && s->bd.fd != -1)
		close(s->bd.fd);
	event_free(s->timer);
	bufferevent_free(s->pair[0]);
	bufferevent_free(s->pair[1]);
	free(s);
}

size_t
dtls_sessions(void)
{
	struct sess *s;
	size_t n = 0;

	TAILQ_FOREACH(s, &sessions, entry)
		n++;
	return n;
}

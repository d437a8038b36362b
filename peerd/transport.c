/*
 * transport.c: TCP or TLS 1.3 bufferevents for link.c (see transport.h).
 *
 * TLS goes through libevent's OpenSSL bufferevents, one SSL_CTX for the
 * process (tlsid_ctx_new: TLS 1.3 only, mutual, Ed25519 only).  kTLS is
 * asked of OpenSSL only when a probe at start-up finds it can be had
 * (transport_ktls); otherwise OpenSSL encrypts in user space.  A dirty shutdown (EOF without close_notify) is an ordinary end of
 * stream: a killed peer sends none.  Failures are sorted for the
 * tls.failures counters by OpenSSL's reason code: no TLS at all, another
 * version, the certificate, or a bad record once the channel is up.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "dtls.h"
#include "log.h"
#include "peerd.h"
#include "stats.h"
#include "tlsid.h"
#include "transport.h"

#define TRANSPORT_RECORD_MAX	16384	/* a TLS record's plaintext at most */

static uint8_t	 read_buf[TRANSPORT_READ_MAX];	/* transport_read's */

#ifndef TCP_ULP
#define TCP_ULP		31	/* linux/tcp.h; older libc headers lack it */
#endif

static SSL_CTX	*tls_ctx;	/* NULL: TCP or DTLS */
static bool	 dtls_on;	/* --binding dtls (dtls.c) */
static const char *tls_ktls = "tcp";	/* what ktls_probe found */

/*
 * Whether kernel TLS can be had: OpenSSL built with it, and a kernel whose
 * TCP offers the "tls" upper-layer protocol.  A fresh, unconnected socket
 * asks the kernel: ENOENT means no such ULP (not built, no module); the
 * "tls" ULP itself refuses an unconnected socket (ENOTCONN), which is the
 * answer that it exists.  One socket at start-up instead of a failing
 * setsockopt per handshake.
 */
static const char *
ktls_probe(void)
{
#ifdef OPENSSL_NO_KTLS
	return "no_openssl";
#else
	int fd, r, err;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return "no_ulp";
	r = setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls"));
	err = errno;
	close(fd);
	return r == 0 || err == ENOTCONN ? "kernel" : "no_ulp";
#endif
}

int
transport_init(const char *binding)
{
	if (binding == NULL || strcmp(binding, "tcp") == 0)
		return 0;
	if (strcmp(binding, "dtls") == 0) {
		if (dtls_init() == -1) {
			log_warnx("dtls: cannot make the channel key or the "
			    "context: %s", ERR_error_string(ERR_get_error(),
			    NULL));
			return -1;
		}
		dtls_on = true;
		tls_ktls = "dtls";
		return 0;
	}
	if (strcmp(binding, "tls") != 0) {
		log_warnx("binding: expected tcp, tls or dtls, got \"%s\"",
		    binding);
		return -1;
	}
	if ((tls_ctx = tlsid_ctx_new(&pd->ident)) == NULL) {
		log_warnx("tls: cannot make the context: %s",
		    ERR_error_string(ERR_get_error(), NULL));
		return -1;
	}
	tls_ktls = ktls_probe();
	if (strcmp(tls_ktls, "kernel") != 0)
		SSL_CTX_clear_options(tls_ctx, SSL_OP_ENABLE_KTLS);
	log_info("tls: kTLS %s", strcmp(tls_ktls, "kernel") == 0 ?
	    "asked for (the kernel offers the tls ULP)" :
	    strcmp(tls_ktls, "no_ulp") == 0 ? "not available (the kernel "
	    "offers no tls ULP): records encrypted in user space" :
	    "not available (OpenSSL built without it): records encrypted "
	    "in user space");
	return 0;
}

const char *
transport_ktls(void)
{
	return tls_ktls;
}

void
transport_shutdown(void)
{
	if (dtls_on)
		dtls_shutdown();
	dtls_on = false;
	SSL_CTX_free(tls_ctx);
	tls_ctx = NULL;
	tls_ktls = "tcp";
}

bool
transport_raw(void)
{
	return tls_ctx == NULL && !dtls_on;
}

bool
transport_datagram(void)
{
	return dtls_on;
}

int
transport_listen(struct sockaddr_in *sin,
    void (*fn)(struct bufferevent *, const struct sockaddr_in *))
{
	return dtls_on ? dtls_listen(sin, fn) : -1;
}

int
transport_connect(struct bufferevent *bev, const struct sockaddr_in *sin)
{
	if (dtls_on)
		return dtls_connect(bev, sin);
	return bufferevent_socket_connect(bev, (const struct sockaddr *)sin,
	    (int)sizeof(*sin));
}

void
transport_free(struct bufferevent *bev)
{
	if (dtls_on)
		dtls_free(bev);
	else
		bufferevent_free(bev);
}

struct bufferevent *
transport_bev(struct event_base *base, evutil_socket_t fd, bool outbound)
{
	struct bufferevent *bev;
	SSL *ssl;

	if (dtls_on) {		/* dialed only: dtls.c makes accepted ones */
		if (fd != -1)
			evutil_closesocket(fd);
		return outbound ? dtls_bev_new(base) : NULL;
	}
	if (tls_ctx == NULL) {
		bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (bev == NULL && fd != -1)
			evutil_closesocket(fd);
		return bev;
	}
	if ((ssl = SSL_new(tls_ctx)) == NULL) {
		if (fd != -1)
			evutil_closesocket(fd);
		return NULL;
	}
	bev = bufferevent_openssl_socket_new(base, fd, ssl, outbound ?
	    BUFFEREVENT_SSL_CONNECTING : BUFFEREVENT_SSL_ACCEPTING,
	    BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		SSL_free(ssl);
		if (fd != -1)
			evutil_closesocket(fd);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

int
transport_peer(struct bufferevent *bev, uint8_t pub[IDENTITY_PUB_LEN],
    uint8_t id[IDENTITY_ID_LEN])
{
	SSL *ssl;

	if (dtls_on)
		return dtls_peer(bev, pub, id);
	if (tls_ctx == NULL)
		return 0;
	if ((ssl = bufferevent_openssl_get_ssl(bev)) == NULL ||
	    tlsid_peer(ssl, pub, id) == -1) {
		pd_count_tls(CERT);
		return -1;
	}
	pd_count(tls_handshakes);
	if (tlsid_ktls(ssl, true))
		pd_count(tls_ktls_send);
	return 1;
}

/* The counter for OpenSSL's reason for a failed handshake. */
static enum metrics_tls_fail
tls_reason(unsigned long err)
{
	if (ERR_GET_LIB(err) != ERR_LIB_SSL)
		return METRICS_TLS_OTHER;
	switch (ERR_GET_REASON(err)) {
	case SSL_R_WRONG_VERSION_NUMBER:
	case SSL_R_HTTP_REQUEST:
	case SSL_R_HTTPS_PROXY_REQUEST:
	case SSL_R_PACKET_LENGTH_TOO_LONG:
	case SSL_R_RECORD_LENGTH_MISMATCH:
	case SSL_R_WRONG_SSL_VERSION:
		return METRICS_TLS_NOT_TLS;
	case SSL_R_UNSUPPORTED_PROTOCOL:
	case SSL_R_NO_PROTOCOLS_AVAILABLE:
	case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
	case SSL_R_VERSION_TOO_LOW:
		return METRICS_TLS_VERSION;
	case SSL_R_CERTIFICATE_VERIFY_FAILED:
	case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
	case SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS:
	case SSL_R_WRONG_SIGNATURE_TYPE:
	case SSL_R_BAD_SIGNATURE:
	case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
	case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
	case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
		return METRICS_TLS_CERT;
	default:
		return METRICS_TLS_OTHER;
	}
}

static const char *const tls_fail_text[METRICS_TLS_FAIL_MAX] = {
	[METRICS_TLS_NOT_TLS] = "tls: not a TLS handshake",
	[METRICS_TLS_VERSION] = "tls: not TLS 1.3",
	[METRICS_TLS_CERT] = "tls: certificate refused or absent",
	[METRICS_TLS_TIMEOUT] = "tls: handshake timeout",
	[METRICS_TLS_RECORD] = "tls: bad record on an open channel",
	[METRICS_TLS_OTHER] = "tls: handshake failed",
};

const char *
transport_failure(struct bufferevent *bev, bool handshaken)
{
	enum metrics_tls_fail why;
	unsigned long err, first = 0;
	SSL *ssl;

	if (dtls_on)
		return dtls_failure(bev);
	if (tls_ctx == NULL)
		return NULL;
	while ((err = bufferevent_get_openssl_error(bev)) != 0)
		if (first == 0)
			first = err;
	ssl = bufferevent_openssl_get_ssl(bev);
	if (first == 0)
		return NULL;	/* a socket error, not TLS's */
	if (handshaken)
		why = METRICS_TLS_RECORD;
	else if (ssl != NULL && tlsid_verify_failed(ssl))
		why = METRICS_TLS_CERT;
	else
		why = tls_reason(first);
	pd_metrics.tls_failures[why]++;
	log_debug("tls: %s", ERR_error_string(first, NULL));
	return tls_fail_text[why];
}

void
transport_timeout(void)
{
	if (tls_ctx != NULL)
		pd_count_tls(TIMEOUT);
	else if (dtls_on)
		pd_count_dtls(TIMEOUT);
}

/*
 * With read-ahead on, OpenSSL reads as much as its read buffer holds
 * (TLSID_READ_BUF: several records a system call instead of two calls a
 * record) and SSL_read decrypts one record a call: read them until len
 * bytes or nothing more can be read now.  transport_resume turns
 * read-ahead off again before the bufferevent reads (it would not see
 * whole records read ahead).
 */
ssize_t
transport_recv(struct bufferevent *bev, void *buf, size_t len)
{
	SSL *ssl;
	size_t got = 0;
	int n;

	if (dtls_on) {		/* never: the frames come through the pair */
		errno = EAGAIN;
		return -1;
	}
	if (tls_ctx == NULL)
		return recv(bufferevent_getfd(bev), buf, len, 0);
	if ((ssl = bufferevent_openssl_get_ssl(bev)) == NULL) {
		errno = EBADF;
		return -1;
	}
	SSL_set_read_ahead(ssl, 1);
	while (got < len) {
		size_t want = len - got;

		ERR_clear_error();
		n = SSL_read(ssl, (uint8_t *)buf + got, want > INT_MAX ?
		    INT_MAX : (int)want);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (got > 0)
			return (ssize_t)got;	/* the error again next call */
		switch (SSL_get_error(ssl, n)) {
		case SSL_ERROR_WANT_READ:
		case SSL_ERROR_WANT_WRITE:
			errno = EAGAIN;
			return -1;
		case SSL_ERROR_ZERO_RETURN:
			return 0;
		case SSL_ERROR_SYSCALL:
			if (ERR_peek_error() == 0) {
				/* a dirty shutdown: an ordinary end */
				if (n == 0 || errno == 0)
					return 0;
				return -1;
			}
			/* FALLTHROUGH */
		case SSL_ERROR_SSL:
			/* OpenSSL 3's name for the same dirty shutdown */
			if (ERR_GET_REASON(ERR_peek_error()) ==
			    SSL_R_UNEXPECTED_EOF_WHILE_READING) {
				ERR_clear_error();
				return 0;
			}
			/* FALLTHROUGH */
		default:
			pd_count_tls(RECORD);
			log_debug("tls: %s", ERR_error_string(ERR_get_error(),
			    NULL));
			ERR_clear_error();
			errno = EPROTO;
			return -1;
		}
	}
	return (ssize_t)got;
}

/*
 * None on TLS: waking once 256 KiB have come would leave the receiver idle
 * while they arrive and then decrypt them in one burst after the last
 * byte, where a wakeup per segment decrypts each record as it lands,
 * beside the sender's encryption on the other core (probe runs: the
 * swarm's tls MiB/s fell with the mark and rose without it; BENCHMARKS.md).
 * Read-ahead still takes every record that has arrived in a few reads.
 */
size_t
transport_lowat(size_t rest)
{
	return transport_raw() ? rest : 0;
}

bool
transport_pending(struct bufferevent *bev)
{
	SSL *ssl;

	return tls_ctx != NULL &&
	    (ssl = bufferevent_openssl_get_ssl(bev)) != NULL &&
	    SSL_has_pending(ssl);
}

/*
 * Read-ahead off first: then each SSL_read takes one record from what
 * OpenSSL holds and reads the socket only to complete the last one, so
 * the loop ends with OpenSSL holding at most part of a record, whose rest
 * the socket's readiness announces.
 */
void
transport_resume(struct bufferevent *bev)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_iovec v;
	bool moved = false;
	SSL *ssl;
	int n;

	bufferevent_enable(bev, EV_READ);
	if (tls_ctx == NULL || (ssl = bufferevent_openssl_get_ssl(bev)) == NULL)
		return;
	SSL_set_read_ahead(ssl, 0);
	while (SSL_has_pending(ssl)) {
		if (evbuffer_reserve_space(in, TRANSPORT_RECORD_MAX, &v, 1) != 1)
			break;
		ERR_clear_error();
		if ((n = SSL_read(ssl, v.iov_base, (int)v.iov_len)) <= 0) {
			/* a partial record, or an error the bufferevent meets */
			ERR_clear_error();
			break;
		}
		v.iov_len = (size_t)n;
		evbuffer_commit_space(in, &v, 1);
		moved = true;
	}
	if (moved)
		bufferevent_trigger(bev, EV_READ, BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * One recv(2) into a scratch buffer, its bytes appended to in.  libevent
 * 2.1's evbuffer_read asks FIONREAD before every readv and reads at most
 * 4 KiB, so a frame cost two system calls and a burst of them a wake-up a
 * 4 KiB; this is one call for up to TRANSPORT_READ_MAX bytes.  The copy
 * into in is a memcpy of what came (the input holds only what is not yet a
 * whole frame or line, so it is sized by the data, not by the read).
 */
ssize_t
transport_read(evutil_socket_t fd, struct evbuffer *in)
{
	ssize_t n = recv(fd, read_buf, sizeof(read_buf), 0);

	if (n > 0 && evbuffer_add(in, read_buf, (size_t)n) == -1) {
		errno = ENOMEM;
		return -1;
	}
	return n;
}

size_t
transport_send_now(struct bufferevent *bev, const void *p, size_t len)
{
	ssize_t n;

	if (!transport_raw() || evbuffer_get_length(bufferevent_get_output(bev))
	    != 0)
		return 0;
	n = send(bufferevent_getfd(bev), p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	return n > 0 ? (size_t)n : 0;
}

void
transport_flush_now(struct bufferevent *bev)
{
	struct evbuffer *out = bufferevent_get_output(bev);
	size_t len = evbuffer_get_length(out);
	SSL *ssl;

	if (dtls_on) {
		dtls_flush(bev);
		return;
	}
	evbuffer_unfreeze(out, 1);
	if (tls_ctx == NULL) {
		evbuffer_write(out, bufferevent_getfd(bev));
		return;
	}
	/*
	 * libevent drains only what SSL_write took whole, so the head of out
	 * is any write it left pending: writing it all here continues that
	 * write (moving buffers allowed, the same bytes first).
	 */
	if ((ssl = bufferevent_openssl_get_ssl(bev)) == NULL || len == 0 ||
	    len > INT32_MAX || !SSL_is_init_finished(ssl))
		return;
	if (SSL_write(ssl, evbuffer_pullup(out, -1), (int)len) > 0)
		SSL_shutdown(ssl);
	ERR_clear_error();
}

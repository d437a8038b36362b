/*
 * transport.h: what carries a link's bytes, under link.c: plain TCP or
 * TLS 1.3 over TCP (--binding; docs/protocol.md "TLS binding").
 *
 * The transport makes each link's bufferevent and, once it is connected,
 * says who is at the far end: nobody on TCP (the hello's signature proves
 * the key), the certificate's Ed25519 key on TLS (common/tlsid.c).  On TLS
 * "connected" means the handshake completed, for the acceptor too, so an
 * accepted TLS link starts CONNECTING like a dialed one.  link.c reads the
 * rest of a large frame past the bufferevent, straight into the frame's
 * buffer, with transport_recv: on TCP from the socket, on TLS through
 * SSL_read, which decrypts the records into it.
 */
#ifndef TRANSPORT_H
#define TRANSPORT_H

#include <sys/types.h>

#include <netinet/in.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "identity.h"
#include "metrics.h"

struct bufferevent;
struct event_base;
struct evbuffer;

/* What one transport_read takes at most: a shorter read drained the socket. */
#define TRANSPORT_READ_MAX	(64u << 10)

/* "tcp", "tls" or "dtls": set up the binding (the contexts). 0 or -1. */
int	 transport_init(const char *binding);
void	 transport_shutdown(void);
/*
 * What the start-up probe found of kernel TLS: "kernel" (OpenSSL built
 * with kTLS and the kernel offers the tls ULP: asked for, and each link's
 * sends go to the kernel where OpenSSL can hand over its cipher),
 * "no_ulp" (the kernel offers none), "no_openssl" (OpenSSL built without
 * it); the last two are the user-space fallback.  "tcp" on TCP, "dtls"
 * on DTLS.
 */
const char *transport_ktls(void);
/* True on TCP: the socket's bytes are the frames'. */
bool	 transport_raw(void);
/*
 * True on DTLS: links ride datagrams (dtls.c) through a bufferevent pair,
 * the listening socket is UDP (transport_listen), a large frame's rest is
 * read through the bufferevent like the rest, and the fault filter acts
 * per datagram there, not per frame in link.c.
 */
bool	 transport_datagram(void);
/*
 * DTLS: bind the UDP socket at *sin (set to the address bound) and call
 * fn with each new channel's bufferevent and source.  0 or -1.
 */
int	 transport_listen(struct sockaddr_in *sin,
	    void (*fn)(struct bufferevent *, const struct sockaddr_in *));
/* Connect a bufferevent from transport_bev(-1, outbound) to sin. 0 or -1. */
int	 transport_connect(struct bufferevent *bev,
	    const struct sockaddr_in *sin);
/* Free a link's bufferevent and whatever the transport holds for it. */
void	 transport_free(struct bufferevent *bev);
/*
 * A bufferevent for fd (-1: to be connected by the caller), dialing or
 * accepting; it owns fd.  NULL on failure (fd is then closed).
 */
struct bufferevent *transport_bev(struct event_base *base, evutil_socket_t fd,
	    bool outbound);
/*
 * Called when bev is connected (on TLS, handshaken): 1 with the far end's
 * key and id when the transport authenticated one, 0 when it does not
 * (TCP), -1 when it should have and did not (counted).
 */
int	 transport_peer(struct bufferevent *bev, uint8_t pub[IDENTITY_PUB_LEN],
	    uint8_t id[IDENTITY_ID_LEN]);
/*
 * After an error event on bev: count the TLS failure, if it is one
 * (handshaken says whether it came after the handshake), and return a
 * static description for the close reason, or NULL (not a TLS failure).
 */
const char *transport_failure(struct bufferevent *bev, bool handshaken);
/* A TLS handshake that never completed was dropped (counted). */
void	 transport_timeout(void);
/*
 * Read up to len bytes of bev's stream into buf past the bufferevent
 * (whose reading is off meanwhile), as recv(2) does: the count, 0 at the
 * end of the stream, -1 with EAGAIN when nothing can be read now, or -1
 * with errno (EPROTO: a bad TLS record, counted).
 */
ssize_t	 transport_recv(struct bufferevent *bev, void *buf, size_t len);
/*
 * True if the transport holds plaintext that the socket's readiness will
 * not announce (TLS: the rest of a record already decrypted).
 */
bool	 transport_pending(struct bufferevent *bev);
/*
 * The socket low-water mark (SO_RCVLOWAT) for rest bytes of a frame still
 * to come: on TCP rest; on TLS none (0).
 */
size_t	 transport_lowat(size_t rest);
/*
 * Turn bev's reading back on after transport_recv; plaintext the TLS layer
 * still holds goes into its input buffer and the read callback is run for
 * it from the loop (deferred), since the socket may never be readable
 * for it.
 */
void	 transport_resume(struct bufferevent *bev);
/*
 * Write what bev has queued straight to the socket, now (shutdown, from
 * outside any callback); best effort.
 */
void	 transport_flush_now(struct bufferevent *bev);
/*
 * Read what the socket fd holds (TCP links, the control socket) into in,
 * with one system call: the bytes read (at most TRANSPORT_READ_MAX), 0 at
 * the end of the stream, -1 with errno (EAGAIN: nothing to read now).  A
 * bufferevent's input must be unfrozen first (evbuffer_unfreeze(in, 0)).
 */
ssize_t	 transport_read(evutil_socket_t fd, struct evbuffer *in);
/*
 * Hand p to the kernel at once when bev's output is empty, on the raw
 * binding only (TLS records are the bufferevent's): the bytes the socket
 * took (0 when it took none or the output holds bytes, which go first).
 * An error is left for the bufferevent's own write to find.
 */
size_t	 transport_send_now(struct bufferevent *bev, const void *p,
	    size_t len);

#endif

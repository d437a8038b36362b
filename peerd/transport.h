/*
 * transport.h: what carries a link's bytes, under link.c: plain TCP or
 * TLS 1.3 over TCP (--binding; docs/protocol.md "TLS binding").
 *
 * The transport makes each link's bufferevent and, once it is connected,
 * says who is at the far end: nobody on TCP (the hello's signature proves
 * the key), the certificate's Ed25519 key on TLS (common/tlsid.c).  On TLS
 * "connected" means the handshake completed, for the acceptor too, so an
 * accepted TLS link starts CONNECTING like a dialed one.  link.c reads the
 * socket directly only when transport_raw() says its bytes are the
 * frames' own (TCP): on TLS they are records.
 */
#ifndef TRANSPORT_H
#define TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "identity.h"
#include "metrics.h"

struct bufferevent;
struct event_base;

/* "tcp" or "tls": set up the binding (TLS: the context). 0 or -1. */
int	 transport_init(const char *binding);
void	 transport_shutdown(void);
/* True on TCP: the socket's bytes are the frames'. */
bool	 transport_raw(void);
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
 * Write what bev has queued straight to the socket, now (shutdown, from
 * outside any callback); best effort.
 */
void	 transport_flush_now(struct bufferevent *bev);

#endif

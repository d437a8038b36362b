/*
 * dtls.h: the DTLS 1.2 binding under transport.c (docs/protocol.md "The
 * DTLS binding").
 *
 * Each channel is a DTLS association over UDP whose records carry the
 * reliable frame stream of common/rstream.c; link.c sees the same frame
 * stream it sees on TCP or TLS, through one end of a bufferevent pair
 * (the other end is this file's).  Accepted associations share the
 * listening socket and are told apart by the source address; a dialed one
 * has a socket of its own, as a TCP connection would.  A ClientHello
 * without a valid cookie gets a HelloVerifyRequest from DTLSv1_listen and
 * leaves no state behind.  After the DTLS handshake each end sends its
 * identity's endorsement of its channel key (common/dtlsid.c) as the
 * stream's first bytes; the link hears "connected" once the other's has
 * been checked.  The fault filter acts here, per datagram.
 */
#ifndef DTLS_H
#define DTLS_H

#include <netinet/in.h>

#include <stdbool.h>
#include <stdint.h>

#include "identity.h"

struct bufferevent;
struct event_base;

/* What to do with an association whose cookie came back: a new link. */
typedef void (*dtls_accept_fn)(struct bufferevent *bev,
    const struct sockaddr_in *from);

/* The channel key, its endorsement context and the DTLS context. 0 or -1. */
int	 dtls_init(void);
/*
 * Bind the UDP socket at *sin (port 0: any) and serve it; *sin is set to
 * the address bound.  0 or -1 (errno).
 */
int	 dtls_listen(struct sockaddr_in *sin, dtls_accept_fn fn);
void	 dtls_shutdown(void);
/* A bufferevent for a channel to be dialed by dtls_connect. NULL on failure. */
struct bufferevent *dtls_bev_new(struct event_base *base);
/* Start the handshake of bev's channel to sin. 0 or -1. */
int	 dtls_connect(struct bufferevent *bev, const struct sockaddr_in *sin);
/* The endorsed key and id of bev's channel (once connected). 1, or -1. */
int	 dtls_peer(struct bufferevent *bev, uint8_t pub[IDENTITY_PUB_LEN],
	    uint8_t id[IDENTITY_ID_LEN]);
/* Why bev's channel failed, for the close reason (counted already). */
const char *dtls_failure(struct bufferevent *bev);
/* Send what the window allows of bev's stream now (shutdown). */
void	 dtls_flush(struct bufferevent *bev);
/* Close bev's channel (a close_notify) and free it with bev. */
void	 dtls_free(struct bufferevent *bev);
/* Associations alive (accepted and dialed), for the tests. */
size_t	 dtls_sessions(void);

#endif

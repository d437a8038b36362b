/*
 * handshake.h: the CHANNEL_HELLO exchange that proves each side's key
 * before a link is UP (handshake.c; docs/protocol.md section 3).
 */
#ifndef HANDSHAKE_H
#define HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#include "link.h"

struct dcbor_buf;
struct frame;

/* Parse a hello body; echo and nonce point into p. 0 or -1 (refused). */
int		 handshake_parse(const uint8_t *p, size_t len,
		    struct link_hello *h);
/* Append h as a hello body (canonical CBOR) to b. */
void		 handshake_encode(struct dcbor_buf *b, const struct link_hello *h);
/* Send our hello on l (echo NULL) or our proof (echo: their nonce). */
void		 handshake_send(struct link *l, const uint8_t *echo,
		    size_t echo_len);
/* A CHANNEL_HELLO on a link not yet UP: advance the handshake. */
void		 handshake_recv(struct link *l, const struct frame *f);

#endif

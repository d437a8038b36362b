/*
 * rx.h: the receive path of a link (rx.c): two-stage frame reads, the
 * receiver checks, and large frames read straight into a pooled buffer.
 */
#ifndef RX_H
#define RX_H

#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct link;

/* Take every whole frame out of l's input buffer (arg: the link l). */
void		 rx_read_cb(struct bufferevent *bev, void *arg);
/*
 * Start reading l once its socket is connected: on TCP the link reads the
 * socket itself (one recv a readiness, no FIONREAD); on TLS its
 * bufferevent reads.
 */
void		 rx_attach(struct link *l);
/* The stream ended: inside a frame (counted truncated) or between two. */
void		 rx_end(struct link *l);
/* The stream ended inside a frame: count it and close l. */
void		 rx_truncated(struct link *l);
/* A frame buffer of at least need bytes from the pool; *cap its size. */
uint8_t		*rx_get(size_t need, size_t *cap);
/* Return a frame buffer to the pool (p may be NULL). */
void		 rx_put(uint8_t *p, size_t cap);

#endif

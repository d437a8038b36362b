/*
 * view.h: membership policy, above the link layer.  Which members this
 * peer keeps links to, the seeds it dials until one answers, and failure
 * detection (SWIM-like: each tick one linked member is pinged; without an
 * ACK within the ping timeout two others probe it with PING_REQ; still
 * silent, it is suspect; silent for the silence window, it is dead and is
 * not redialed).  Dials back off exponentially with jitter.
 */
#ifndef VIEW_H
#define VIEW_H

/* Dial host:port now and keep redialing with backoff while down. 0 or -1. */
int	view_add_seed(const char *hostport);
/* Redial, probe and age members (called every tick by main.c). */
void	view_tick(void);
/* Forget the seeds (at shutdown). */
void	view_free(void);

#endif

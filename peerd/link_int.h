/*
 * link_int.h: what the three files of the link layer share and nobody
 * else sees: the link itself and the few steps of its life that the
 * handshake (handshake.c) and the receive path (rx.c) take on link.c.
 * Modules above the link layer include link.h only.
 */
#ifndef LINK_INT_H
#define LINK_INT_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "identity.h"
#include "link.h"
#include "linkkey.h"

struct bufferevent;
struct evbuffer;
struct evbuffer_cb_entry;
struct event;
struct frame;
struct member;

#define LINK_NONCE_LEN		LINK_HELLO_NONCE

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
	/*
	 * Key agreement (TCP, --link-auth mac): eph is our offer, wiped at
	 * UP; peer_kx and peer_nonce what their hello said, for the proof's
	 * check and the derivation; keyed once both offered and the keys
	 * are derived: frames after UP are MAC'd with tx, checked with rx.
	 */
	struct linkkey_eph	 eph;
	bool			 peer_offered;
	uint8_t			 peer_kx[LINKKEY_PUB_LEN];
	uint8_t			 peer_nonce[LINK_NONCE_LEN];
	bool			 keyed;
	struct linkkey_mac	 mac_tx, mac_rx;
	bool			 have_len;	/* two-stage read */
	uint32_t		 need;
	uint32_t		 lowat;		/* SO_RCVLOWAT set; 0: default */
	struct event		*rx_ev;		/* TCP: reads it; else a large frame */
	bool			 sockread;	/* rx_ev reads the stream (TCP) */
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

/* Apply ev to l's state machine (link_fsm_next); a refused event closes l. */
void		 link_set_state(struct link *l, enum link_event ev);
/* Tell every observer that the link to m came up or went down. */
void		 link_notify(struct member *m, bool up);
/* Links that count against --max-links (proven ones and our dials). */
uint32_t	 link_count_budget(const struct link *except);
/* Sign and queue one frame on l (urgent: straight to the output). */
int		 link_send_to(struct link *l, uint32_t kind, const uint8_t *to,
		    const uint8_t *body, size_t body_len,
		    struct link_payload *pl, bool urgent);
/* Hand a checked frame on an UP link to its kind's handler (or drop it). */
void		 link_dispatch(struct link *l, const struct frame *f);

#endif

/*
 * link.h: links between peers, over TCP or TLS (transport.h), each an
 * explicit state machine (after bgpd's session.c):
 *
 *   CONNECTING --connected--> HELLO_SENT      (dialer; TLS acceptor too:
 *                                              connected = handshaken)
 *   (accepted, TCP) -------> HELLO_SENT       (acceptor)
 *   HELLO_SENT --their hello--> PROOF_SENT    (we echo their nonce, signed)
 *   PROOF_SENT --their proof (our nonce)--> UP
 *   any --error, bad frame, EOF, close--> DEAD (freed at the deferred point)
 *
 * Frames are read in two stages: the 4-byte length, checked against the
 * cap before anything is allocated, then the body (docs/protocol.md 1).
 * Every frame is decoded, verified and put through the receiver checks
 * (docs/protocol.md 5) before dispatch.  A malformed or badly signed frame
 * closes the link and is counted by reason; a frame that fails a receiver
 * check (too old, replay, rate, quarantine) is dropped and counted.
 * Accepted links that have not proven a key have a budget of their own
 * (--max-preauth) apart from --max-links (docs/protocol.md 3).
 *
 * The link layer knows no consumer: a module registers a handler for each
 * frame kind it takes (link_register) and observes links to members going
 * up and down (link_observe).  A kind nobody registered is counted
 * (frames.unhandled_kind) and dropped.  Which members to keep links to is
 * decided above (view.c), which dials through link_dial.
 */
#ifndef LINK_H
#define LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "identity.h"

struct member;
struct dcbor_buf;
struct frame;

#define LINK_STATES(X)			\
	X(CONNECTING, "connecting")	\
	X(HELLO_SENT, "hello_sent")	\
	X(PROOF_SENT, "proof_sent")	\
	X(UP, "up")			\
	X(DEAD, "dead")

enum link_state {
#define LINK_STATE_ENUM(e, n) LINK_##e,
	LINK_STATES(LINK_STATE_ENUM)
#undef LINK_STATE_ENUM
};

enum link_event {
	LINK_EV_CONNECTED,	/* the dial completed */
	LINK_EV_HELLO,		/* their hello (nonce) arrived */
	LINK_EV_PROOF,		/* their proof (echo of our nonce) arrived */
	LINK_EV_CLOSE,		/* error, EOF, bad frame, or a local close */
};

struct link;

/*
 * A handler for one frame kind, called for a frame that passed every
 * receiver check on an UP link: 0, or -1 with *why (static text) to close
 * the link (a malformed body).
 */
typedef int	(*link_handler_fn)(struct member *from, const struct frame *f,
		    const char **why);
/* A link to m came up (up) or went down (!up). */
typedef void	(*link_observer_fn)(struct member *m, bool up);

/* Take frames of kind with fn (a later call replaces it). */
void		 link_register(uint32_t kind, link_handler_fn fn);
/* Call fn on every link up/down (at most 8 observers; once per fn). */
void		 link_observe(link_observer_fn fn);
/* A CHANNEL_HELLO body (docs/protocol.md section 3). */
#define LINK_HELLO_NONCE	16
struct link_hello {
	char		 addr[64];	/* the sender's listen address */
	char		 name[64];
	const uint8_t	*echo;		/* empty in a hello, their nonce in a proof */
	size_t		 echo_len;
	const uint8_t	*nonce;
	size_t		 nonce_len;
	const uint8_t	*kx;		/* X25519 public key offered, or NULL */
	size_t		 kx_len;	/* 32, or 0 when absent */
};
/* Parsed and encoded by handshake.c (handshake.h). */

/*
 * Bind the listener on listen (HOST:PORT, HOST a name or an IPv4 literal);
 * the address advertised to peers goes to addr: pd->conf.advertise (port
 * 0: the bound one) when set, else the bound address.  A wildcard bind
 * without an advertised address is refused.  0 or -1.
 */
int		 link_init(const char *listen, char *addr, size_t len);
/*
 * HOST:PORT (a name or an IPv4 literal) resolved once to "a.b.c.d:PORT"
 * in out (getaddrinfo: may block, so at start only).  0, or -1 with why.
 */
int		 link_resolve(const char *hostport, char *out, size_t len,
		    const char **why);
/* Close every link and the listener. */
void		 link_shutdown(void);
/*
 * The state machine: the next state for (state, event), or -1 if the event
 * is not allowed in that state (a protocol error: the link closes).
 */
int		 link_fsm_next(enum link_state state, enum link_event ev);
const char	*link_state_name(enum link_state s);
/*
 * Sign (bare on a TLS channel) and queue one frame (body: one CBOR item)
 * to a member's UP link; -1 if none.
 */
int		 link_send_member(struct member *m, uint32_t kind,
		    const uint8_t *body, size_t body_len);
/*
 * The same on the urgent lane: ahead of every bulk frame not yet handed to
 * the output buffer (claims, completions, their acks).
 */
int		 link_send_member_urgent(struct member *m, uint32_t kind,
		    const uint8_t *body, size_t body_len);
/* A point in one UP link's send stream: every byte queued so far. */
struct link_mark {
	uint64_t	serial;
	uint64_t	at;
};
/* Mark every UP link (at most max); returns how many. */
size_t		 link_mark_all(struct link_mark *out, size_t max);
/* True when each marked link still up has handed its bytes to the kernel. */
bool		 link_mark_left(const struct link_mark *m, size_t n);
/*
 * A detached payload (frame.h), len >= 1 bytes: at mem, or, with mem NULL,
 * at offset off of the open file fd.  A file range goes from the page
 * cache to the socket (sendfile) and is never read into memory here; the
 * link keeps a descriptor of its own for it until the bytes are sent, and
 * they are read then, so the range must not change meanwhile.
 */
struct link_payload {
	const uint8_t	*mem;
	int		 fd;
	uint64_t	 off;
	size_t		 len;
	/*
	 * With release, mem is lent, not copied: the output buffer refers to
	 * it until the bytes are written, then calls release(mem, len, arg).
	 * It is called exactly once, at once if the frame is not queued.
	 */
	void		(*release)(const void *, size_t, void *);
	void		*arg;
};
/* link_send_member with a payload after the signed frame (BLOCK). */
int		 link_send_member_data(struct member *m, uint32_t kind,
		    const uint8_t *body, size_t body_len,
		    const struct link_payload *pl);
/* Close a link (it is freed later, never inside its own callback). */
void		 link_close(struct link *l, const char *why);
/* link_close after writing what the socket takes of the queued frames. */
void		 link_close_flush(struct link *l, const char *why);
/* Bytes queued to send to m (SIZE_MAX without an UP link): backpressure. */
size_t		 link_outq(const struct member *m);
/*
 * Whether any link holds bytes received but not handled yet (in its input
 * buffer or its socket): this peer is behind its own input.
 */
bool		 link_rx_backlog(void);
/* Links as JSON (for "peers" and "dump"). */
json_t		*link_list_json(void);
/* Number of links in any state but DEAD. */
uint32_t	 link_count(void);
/* hostport is an IPv4 host:port (or localhost:port) link_dial takes. */
bool		 link_addr_ok(const char *hostport);
/* Dial host:port now; the link starts CONNECTING. NULL if it cannot start. */
struct link	*link_dial(const char *hostport);
/* Some live link was dialed to addr, or a member at addr has an UP link. */
bool		 link_to_addr(const char *addr);
/*
 * Handshake timeouts (called by main.c's tick); returns the earliest time
 * one falls due (monotonic ms), UINT64_MAX when every link is UP.
 */
uint64_t	 link_tick(void);
/* fn(at_ms) is asked to run link_tick by at_ms when a link is born. */
void		 link_tick_wake(void (*fn)(uint64_t at_ms));

#endif

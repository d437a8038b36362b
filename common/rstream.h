/*
 * rstream.h: a reliable, ordered byte stream over unreliable datagrams
 * (docs/protocol.md "The DTLS binding", "The frame stream").  Pure: no
 * sockets, no clock of its own; the caller passes the time in
 * microseconds, hands it each datagram's plaintext (rstream_input), and
 * sends what it asks for through its send callback, one packet per
 * datagram.  So the unit tests drive loss, reordering, duplication, the
 * window and the backoff with a fake clock (tests/unit/test_rstream.c).
 *
 * The sender cuts the stream into segments of at most mss bytes, each
 * with a sequence number (a segment keeps its number when it is sent
 * again).  The receiver delivers segments in order and acknowledges
 * with the next number it expects and up to RSTREAM_ACK_RANGES ranges it
 * holds beyond it (as SCTP's gap blocks and QUIC's ACK ranges).  A
 * segment is lost when three later ones are acknowledged (first sends),
 * when one sent later is acknowledged and it is older than 9/8 of a
 * round trip, or when the retransmission timer has run out three times
 * (the first two send the oldest segment again as a probe; the timer
 * doubles on each expiry, as TCP's).  The window is NewReno's: slow start, then
 * one segment a round trip, halved once a round trip on loss, two
 * segments after a timeout; a cut is undone when a segment it counted
 * lost is acknowledged before it went again (the loss was not one).
 */
#ifndef RSTREAM_H
#define RSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RSTREAM_DATA		0x01	/* type, seq u64, bytes */
#define RSTREAM_ACK		0x02	/* type, cum u64, wnd u32, n u8, n x (lo u32, hi u32) */
#define RSTREAM_DATA_HDR	9
#define RSTREAM_ACK_RANGES	32
#define RSTREAM_ACK_MAX		(14 + 8 * RSTREAM_ACK_RANGES)
#define RSTREAM_RWND		1024	/* segments a receiver holds past cum */
#define RSTREAM_INIT_CWND	32	/* segments */
#define RSTREAM_MIN_CWND	2
#define RSTREAM_RTO_MIN_US	25000u
#define RSTREAM_PROBES		2	/* probes before a timeout proper */
#define RSTREAM_RTO_MAX_US	2000000u
#define RSTREAM_RTO_INIT_US	200000u

/* Parse results. */
enum rstream_err {
	RSTREAM_OK = 0,
	RSTREAM_ESHORT = -1,	/* shorter than its header or its ranges */
	RSTREAM_ETYPE = -2,	/* an unknown type */
	RSTREAM_ERANGE = -3,	/* ranges out of order, empty, past the window */
	RSTREAM_EEMPTY = -4,	/* DATA with no bytes */
	RSTREAM_ELONG = -5,	/* bytes after an ACK's last range */
};

struct rstream_range {
	uint32_t	lo, hi;		/* seqs cum+lo .. cum+hi-1 held */
};

/* One parsed packet (points into the input). */
struct rstream_pkt {
	uint8_t			 type;
	uint64_t		 seq;		/* DATA */
	const uint8_t		*data;		/* DATA */
	size_t			 len;		/* DATA */
	uint64_t		 cum;		/* ACK */
	uint32_t		 wnd;		/* ACK */
	uint8_t			 nranges;	/* ACK */
	struct rstream_range	 ranges[RSTREAM_ACK_RANGES];
};

struct rstream_stats {
	uint64_t	data_out;	/* DATA packets sent, first sends */
	uint64_t	retx;		/* DATA packets sent again */
	uint64_t	lost;		/* segments declared lost */
	uint64_t	rto;		/* retransmission timeouts */
	uint64_t	undone;		/* cuts undone: the "lost" one arrived */
	uint64_t	probes;		/* the oldest sent again on the timer */
	uint64_t	acks_out, acks_in;
	uint64_t	dup_in;		/* DATA already held or delivered */
	uint64_t	out_of_window;	/* DATA past the receive window */
	uint64_t	bad;		/* packets that did not parse */
};

struct rstream_io {
	/* Send one packet as one datagram; -1 if it could not (try later). */
	int	(*send)(void *arg, const uint8_t *pkt, size_t len);
	/* In-order stream bytes. */
	void	(*deliver)(void *arg, const uint8_t *p, size_t len);
	void	*arg;
};

struct rstream;

/* A stream whose segments carry at most mss bytes (>= 64). */
struct rstream *rstream_new(size_t mss, const struct rstream_io *io,
	    uint64_t now_us);
void	 rstream_free(struct rstream *rs);
/* Parse one packet: RSTREAM_OK with *out set, or an rstream_err. */
int	 rstream_parse(const uint8_t *p, size_t len, struct rstream_pkt *out);
/* Append bytes to the outgoing stream (sent by rstream_poll). */
void	 rstream_write(struct rstream *rs, const void *p, size_t len);
/* Bytes written and not yet acknowledged (sent or waiting). */
size_t	 rstream_queued(const struct rstream *rs);
/* Bytes written and never sent yet. */
size_t	 rstream_unsent(const struct rstream *rs);
/* Take one received packet; 0, or an rstream_err (counted as bad). */
int	 rstream_input(struct rstream *rs, const uint8_t *p, size_t len,
	    uint64_t now_us);
/*
 * Do what is due at now_us: an acknowledgement owed, lost segments again,
 * new segments the window allows, the timeout.  Returns the time it wants
 * to be called again at the latest (UINT64_MAX: only on input or write).
 */
uint64_t rstream_poll(struct rstream *rs, uint64_t now_us);
/* Congestion window (bytes), bytes in flight, smoothed RTT (us). */
size_t	 rstream_cwnd(const struct rstream *rs);
size_t	 rstream_inflight(const struct rstream *rs);
uint64_t rstream_srtt(const struct rstream *rs);
const struct rstream_stats *rstream_stats(const struct rstream *rs);

#endif

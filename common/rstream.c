/*
 * rstream.c: the reliable frame stream of the DTLS binding (see rstream.h).
 *
 * Sender: the bytes written and not yet acknowledged sit in one buffer
 * (sbuf, stream offset sbase at sbuf[shead], with at least a header's room
 * before shead); a ring of RSTREAM_RWND
 * segment records, indexed by seq, says which bytes each sent segment
 * holds, when it last went, how often, and whether it is acknowledged,
 * lost or in flight.  Receiver: a ring of RSTREAM_RWND slots holds the
 * segments that came ahead of the next expected one (copied); the one
 * expected is delivered straight from the packet, then every held one
 * that follows it.  An acknowledgement is owed after any DATA and leaves
 * on the next poll, so a batch of datagrams read at once is answered
 * once.
 */
#include <stdlib.h>
#include <string.h>

#include "rstream.h"
#include "xmalloc.h"

#define RSTREAM_KEEP_BUF	(8u << 20)	/* kept when all is acked */

struct seg {
	uint64_t	off;		/* stream offset of its first byte */
	uint64_t	sent_us;	/* its last send */
	uint32_t	len;
	uint32_t	txc;		/* times sent */
	bool		acked, lost, inflight;
};

struct slot {
	uint8_t		*data;
	uint32_t	 len;
};

struct rstream {
	struct rstream_io	 io;
	size_t			 mss;
	uint8_t			*pkt;		/* an acknowledgement being built */
	struct rstream_stats	 st;

	/* sender */
	uint8_t			*sbuf;
	size_t			 scap, shead, slen;	/* bytes at sbuf[shead] */
	uint64_t		 sbase;		/* stream offset of sbuf[shead] */
	uint64_t		 snd_off;	/* first byte never sent */
	struct seg		 segs[RSTREAM_RWND];
	uint64_t		 una, nxt;	/* oldest unacked seq, next new */
	uint64_t		 largest_acked;	/* +1; 0: none yet */
	uint64_t		 largest_sent_us;	/* of the largest acked */
	uint32_t		 peer_wnd;
	size_t			 inflight, cwnd, ssthresh;
	uint64_t		 recovery_us;	/* losses of older sends: same event */
	size_t			 undo_cwnd, undo_ssthresh;	/* before the cut */
	bool			 undo_ok;	/* the cut may prove spurious */
	uint64_t		 undo_nxt;	/* nxt at the cut */
	unsigned		 probes;	/* since the last acknowledgement */
	uint64_t		 srtt, rttvar, latest_rtt, rto;
	unsigned		 backoff;
	uint64_t		 rto_at;	/* 0: not armed */

	/* receiver */
	struct slot		 slots[RSTREAM_RWND];
	uint64_t		 rcv_nxt;
	uint64_t		 rcv_top;	/* highest held seq + 1 */
	bool			 ack_owed;
};

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

int
rstream_parse(const uint8_t *p, size_t len, struct rstream_pkt *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 1)
		return RSTREAM_ESHORT;
	out->type = p[0];
	switch (p[0]) {
	case RSTREAM_DATA:
		if (len < RSTREAM_DATA_HDR)
			return RSTREAM_ESHORT;
		if (len == RSTREAM_DATA_HDR)
			return RSTREAM_EEMPTY;
		out->seq = get64(p + 1);
		out->data = p + RSTREAM_DATA_HDR;
		out->len = len - RSTREAM_DATA_HDR;
		return RSTREAM_OK;
	case RSTREAM_ACK: {
		uint32_t prev = 0;

		if (len < 14)
			return RSTREAM_ESHORT;
		out->cum = get64(p + 1);
		out->wnd = get32(p + 9);
		out->nranges = p[13];
		if (out->nranges > RSTREAM_ACK_RANGES)
			return RSTREAM_ERANGE;
		if (len < 14 + 8 * (size_t)out->nranges)
			return RSTREAM_ESHORT;
		if (len > 14 + 8 * (size_t)out->nranges)
			return RSTREAM_ELONG;
		for (uint8_t i = 0; i < out->nranges; i++) {
			struct rstream_range *r = &out->ranges[i];

			r->lo = get32(p + 14 + 8 * i);
			r->hi = get32(p + 18 + 8 * i);
			/* above cum, ascending, apart, inside the window */
			if (r->lo <= prev || r->hi <= r->lo ||
			    r->hi > RSTREAM_RWND)
				return RSTREAM_ERANGE;
			prev = r->hi;
		}
		return RSTREAM_OK;
	}
	default:
		return RSTREAM_ETYPE;
	}
}

struct rstream *
rstream_new(size_t mss, const struct rstream_io *io, uint64_t now_us)
{
	struct rstream *rs = xcalloc(1, sizeof(*rs));

	(void)now_us;
	if (mss < 64)
		mss = 64;
	rs->mss = mss;
	rs->io = *io;
	rs->pkt = xmalloc(RSTREAM_ACK_MAX);	/* acknowledgements only */
	rs->peer_wnd = RSTREAM_RWND;
	rs->cwnd = RSTREAM_INIT_CWND * mss;
	rs->ssthresh = SIZE_MAX;
	rs->rto = RSTREAM_RTO_INIT_US;
	rs->shead = RSTREAM_DATA_HDR;	/* room for a header before any byte */
	return rs;
}

void
rstream_free(struct rstream *rs)
{
	if (rs == NULL)
		return;
	for (size_t i = 0; i < RSTREAM_RWND; i++)
		free(rs->slots[i].data);
	free(rs->sbuf);
	free(rs->pkt);
	free(rs);
}

void
rstream_write(struct rstream *rs, const void *p, size_t len)
{
	if (len == 0)
		return;
	if (rs->shead + rs->slen + len > rs->scap) {
		/*
		 * Move the unacknowledged bytes down only when they are no
		 * more than the room it frees (so each byte moves O(1) times
		 * on average); otherwise grow.
		 */
		if (rs->shead > RSTREAM_DATA_HDR && rs->shead >= rs->slen) {
			memmove(rs->sbuf + RSTREAM_DATA_HDR, rs->sbuf +
			    rs->shead, rs->slen);
			rs->shead = RSTREAM_DATA_HDR;
		}
		if (rs->shead + rs->slen + len > rs->scap) {
			size_t cap = rs->scap ? rs->scap : 65536;

			while (cap < rs->shead + rs->slen + len)
				cap *= 2;
			rs->sbuf = xreallocarray(rs->sbuf, 1, cap);
			rs->scap = cap;
		}
	}
	memcpy(rs->sbuf + rs->shead + rs->slen, p, len);
	rs->slen += len;
}

size_t
rstream_queued(const struct rstream *rs)
{
	return rs->slen;
}

size_t
rstream_unsent(const struct rstream *rs)
{
	return (size_t)(rs->sbase + rs->slen - rs->snd_off);
}

size_t
rstream_cwnd(const struct rstream *rs)
{
	return rs->cwnd;
}

size_t
rstream_inflight(const struct rstream *rs)
{
	return rs->inflight;
}

uint64_t
rstream_srtt(const struct rstream *rs)
{
	return rs->srtt;
}

const struct rstream_stats *
rstream_stats(const struct rstream *rs)
{
	return &rs->st;
}

static struct seg *
seg_at(struct rstream *rs, uint64_t seq)
{
	return &rs->segs[seq % RSTREAM_RWND];
}

static struct slot *
slot_at(struct rstream *rs, uint64_t seq)
{
	return &rs->slots[seq % RSTREAM_RWND];
}

/* ---- receiver ---- */

static void
rx_data(struct rstream *rs, const struct rstream_pkt *pk)
{
	struct slot *s;

	rs->ack_owed = true;
	if (pk->seq < rs->rcv_nxt) {
		rs->st.dup_in++;
		return;
	}
	if (pk->seq >= rs->rcv_nxt + RSTREAM_RWND) {
		rs->st.out_of_window++;
		return;
	}
	if (pk->seq > rs->rcv_nxt) {
		s = slot_at(rs, pk->seq);
		if (s->data != NULL) {
			rs->st.dup_in++;
			return;
		}
		s->data = xmemdup(pk->data, pk->len);
		s->len = (uint32_t)pk->len;
		if (pk->seq + 1 > rs->rcv_top)
			rs->rcv_top = pk->seq + 1;
		return;
	}
	rs->rcv_nxt++;
	rs->io.deliver(rs->io.arg, pk->data, pk->len);
	while ((s = slot_at(rs, rs->rcv_nxt))->data != NULL) {
		uint8_t *d = s->data;

		s->data = NULL;
		rs->rcv_nxt++;
		rs->io.deliver(rs->io.arg, d, s->len);
		free(d);
	}
	if (rs->rcv_top < rs->rcv_nxt)
		rs->rcv_top = rs->rcv_nxt;
}

static void
send_ack(struct rstream *rs)
{
	uint8_t *p = rs->pkt;
	uint8_t n = 0;
	uint64_t seq = rs->rcv_nxt + 1;

	p[0] = RSTREAM_ACK;
	put64(p + 1, rs->rcv_nxt);
	put32(p + 9, RSTREAM_RWND);
	while (seq < rs->rcv_top && n < RSTREAM_ACK_RANGES) {
		uint64_t lo;

		while (seq < rs->rcv_top && slot_at(rs, seq)->data == NULL)
			seq++;
		if (seq >= rs->rcv_top)
			break;
		lo = seq;
		while (seq < rs->rcv_top && slot_at(rs, seq)->data != NULL)
			seq++;
		put32(p + 14 + 8 * n, (uint32_t)(lo - rs->rcv_nxt));
		put32(p + 18 + 8 * n, (uint32_t)(seq - rs->rcv_nxt));
		n++;
	}
	p[13] = n;
	rs->ack_owed = false;
	rs->st.acks_out++;
	rs->io.send(rs->io.arg, p, 14 + 8 * (size_t)n);
}

/* ---- sender ---- */

static void
rtt_sample(struct rstream *rs, uint64_t sample)
{
	uint64_t d;

	rs->latest_rtt = sample;
	if (rs->srtt == 0) {
		rs->srtt = sample ? sample : 1;
		rs->rttvar = sample / 2;
	} else {
		d = rs->srtt > sample ? rs->srtt - sample : sample - rs->srtt;
		rs->rttvar = (3 * rs->rttvar + d) / 4;
		rs->srtt = (7 * rs->srtt + sample) / 8;
	}
	rs->rto = rs->srtt + 4 * rs->rttvar;
	if (rs->rto < RSTREAM_RTO_MIN_US)
		rs->rto = RSTREAM_RTO_MIN_US;
	if (rs->rto > RSTREAM_RTO_MAX_US)
		rs->rto = RSTREAM_RTO_MAX_US;
}

static uint64_t
rto_now(const struct rstream *rs)
{
	uint64_t r = rs->rto << (rs->backoff > 6 ? 6 : rs->backoff);

	return r > RSTREAM_RTO_MAX_US ? RSTREAM_RTO_MAX_US : r;
}

/* Remember the window before a cut, the first of a run of cuts. */
static void
save_undo(struct rstream *rs)
{
	if (rs->undo_ok)
		return;
	rs->undo_ok = true;
	rs->undo_nxt = rs->nxt;
	rs->undo_cwnd = rs->cwnd;
	rs->undo_ssthresh = rs->ssthresh;
}

/* A loss among sends after the current recovery began: halve, once. */
static void
congestion_event(struct rstream *rs, uint64_t sent_us, uint64_t now_us)
{
	if (sent_us <= rs->recovery_us && rs->recovery_us != 0)
		return;
	rs->recovery_us = now_us;
	save_undo(rs);
	rs->ssthresh = rs->cwnd / 2;
	if (rs->ssthresh < RSTREAM_MIN_CWND * rs->mss)
		rs->ssthresh = RSTREAM_MIN_CWND * rs->mss;
	rs->cwnd = rs->ssthresh;
}

static void
mark_acked(struct rstream *rs, uint64_t seq, uint64_t now_us,
    uint64_t *newest_seq, struct seg **newest)
{
	struct seg *s = seg_at(rs, seq);

	if (s->acked)
		return;
	/*
	 * Declared lost and acknowledged before it went again: the send that
	 * was thought lost arrived (a late acknowledgement, a descheduled
	 * receiver), so the cut was spurious and is undone (as TCP's Eifel
	 * and F-RTO do).
	 */
	if (s->lost && rs->undo_ok) {
		if (rs->cwnd < rs->undo_cwnd)
			rs->cwnd = rs->undo_cwnd;
		rs->ssthresh = rs->undo_ssthresh;
		rs->undo_ok = false;
		rs->backoff = 0;
		rs->st.undone++;
	}
	s->acked = true;
	if (s->inflight) {
		s->inflight = false;
		rs->inflight -= s->len;
	}
	s->lost = false;
	/* grow: slow start, then one segment a round trip */
	if (rs->recovery_us == 0 || s->sent_us > rs->recovery_us) {
		if (rs->cwnd < rs->ssthresh)
			rs->cwnd += s->len;
		else
			rs->cwnd += rs->mss * s->len / rs->cwnd + 1;
	}
	(void)now_us;
	if (*newest == NULL || seq > *newest_seq) {
		*newest_seq = seq;
		*newest = s;
	}
}

static void
rx_ack(struct rstream *rs, const struct rstream_pkt *pk, uint64_t now_us)
{
	struct seg *newest = NULL;
	uint64_t newest_seq = 0, seq, una0 = rs->una, thresh;

	if (pk->cum > rs->nxt) {
		rs->st.bad++;	/* acknowledges what was never sent */
		return;
	}
	rs->st.acks_in++;
	rs->peer_wnd = pk->wnd > RSTREAM_RWND ? RSTREAM_RWND : pk->wnd;
	for (seq = rs->una; seq < pk->cum; seq++)
		mark_acked(rs, seq, now_us, &newest_seq, &newest);
	for (uint8_t i = 0; i < pk->nranges; i++)
		for (seq = pk->cum + pk->ranges[i].lo;
		    seq < pk->cum + pk->ranges[i].hi && seq < rs->nxt; seq++)
			if (seq >= rs->una)
				mark_acked(rs, seq, now_us, &newest_seq,
				    &newest);
	if (newest != NULL) {
		if (newest->txc == 1 && now_us >= newest->sent_us)
			rtt_sample(rs, now_us - newest->sent_us);
		if (newest_seq + 1 > rs->largest_acked) {
			rs->largest_acked = newest_seq + 1;
			rs->largest_sent_us = newest->sent_us;
		}
		rs->backoff = 0;
		rs->probes = 0;
	}
	/* drop what is acknowledged in order */
	while (rs->una < rs->nxt && seg_at(rs, rs->una)->acked)
		rs->una++;
	if (rs->una > una0) {
		uint64_t off = rs->una < rs->nxt ? seg_at(rs, rs->una)->off :
		    rs->snd_off;
		size_t drop = (size_t)(off - rs->sbase);

		rs->shead += drop;
		rs->slen -= drop;
		rs->sbase = off;
		if (rs->slen == 0) {
			rs->shead = RSTREAM_DATA_HDR;
			if (rs->scap > RSTREAM_KEEP_BUF) {
				/* an idle stream keeps no burst's buffer */
				free(rs->sbuf);
				rs->sbuf = NULL;
				rs->scap = 0;
			}
		}
		rs->rto_at = rs->inflight > 0 ? now_us + rto_now(rs) : 0;
		if (rs->una >= rs->undo_nxt)
			rs->undo_ok = false;	/* all sent before the cut came */
	}
	/* losses: three later ones acknowledged, or older than 9/8 rtt */
	thresh = (rs->srtt > rs->latest_rtt ? rs->srtt : rs->latest_rtt) *
	    9 / 8;
	for (seq = rs->una; rs->largest_acked > 0 &&
	    seq + 1 < rs->largest_acked; seq++) {
		struct seg *s = seg_at(rs, seq);

		if (s->acked || !s->inflight)
			continue;
		if ((s->txc == 1 && seq + 3 < rs->largest_acked) ||
		    (s->sent_us < rs->largest_sent_us &&
		    now_us - s->sent_us > thresh)) {
			s->inflight = false;
			s->lost = true;
			rs->inflight -= s->len;
			rs->st.lost++;
			congestion_event(rs, s->sent_us, now_us);
		}
	}
	if (rs->inflight == 0)
		rs->rto_at = 0;
}

int
rstream_input(struct rstream *rs, const uint8_t *p, size_t len,
    uint64_t now_us)
{
	struct rstream_pkt pk;
	int rc;

	if ((rc = rstream_parse(p, len, &pk)) != RSTREAM_OK) {
		rs->st.bad++;
		return rc;
	}
	if (pk.type == RSTREAM_DATA)
		rx_data(rs, &pk);
	else
		rx_ack(rs, &pk, now_us);
	return RSTREAM_OK;
}

/*
 * Send segment seq.  Its header goes in the 9 bytes just before its data
 * in the send buffer (the previous segment's tail, or the room kept at the
 * front), which are put back after the send: no copy of the data.
 */
static void
xmit(struct rstream *rs, struct seg *s, uint64_t seq, uint64_t now_us)
{
	uint8_t save[RSTREAM_DATA_HDR];
	uint8_t *d = rs->sbuf + rs->shead + (size_t)(s->off - rs->sbase) -
	    RSTREAM_DATA_HDR;

	memcpy(save, d, sizeof(save));
	d[0] = RSTREAM_DATA;
	put64(d + 1, seq);
	s->sent_us = now_us;
	s->txc++;
	/* a datagram the socket refused is a loss the stream recovers */
	rs->io.send(rs->io.arg, d, RSTREAM_DATA_HDR + s->len);
	memcpy(d, save, sizeof(save));
}

static void
send_seg(struct rstream *rs, struct seg *s, uint64_t seq, uint64_t now_us)
{
	xmit(rs, s, seq, now_us);
	s->inflight = true;
	s->lost = false;
	rs->inflight += s->len;
	if (rs->rto_at == 0)
		rs->rto_at = now_us + rto_now(rs);
}

/*
 * The timer ran out with nothing acknowledged.  The first RSTREAM_PROBES
 * times, send the oldest segment in flight again as a probe, the window
 * untouched: its acknowledgement (with the ranges held) says what is
 * missing, and a receiver that was only slow to answer (descheduled on
 * a busy host) costs one datagram.  After that, a timeout proper: all in
 * flight counts as lost and the window drops to RSTREAM_MIN_CWND.  The
 * timer doubles each time either way.
 */
static void
expire(struct rstream *rs, uint64_t now_us)
{
	uint64_t seq;

	rs->rto_at = 0;
	rs->backoff++;
	if (rs->probes < RSTREAM_PROBES) {
		rs->probes++;
		for (seq = rs->una; seq < rs->nxt; seq++) {
			struct seg *s = seg_at(rs, seq);

			if (s->inflight) {
				rs->st.probes++;
				xmit(rs, s, seq, now_us);
				break;
			}
		}
		rs->rto_at = now_us + rto_now(rs);
		return;
	}
	rs->st.rto++;
	for (seq = rs->una; seq < rs->nxt; seq++) {
		struct seg *s = seg_at(rs, seq);

		if (s->inflight) {
			s->inflight = false;
			s->lost = true;
			rs->inflight -= s->len;
			rs->st.lost++;
		}
	}
	save_undo(rs);
	rs->ssthresh = rs->cwnd / 2;
	if (rs->ssthresh < RSTREAM_MIN_CWND * rs->mss)
		rs->ssthresh = RSTREAM_MIN_CWND * rs->mss;
	rs->cwnd = RSTREAM_MIN_CWND * rs->mss;
	rs->recovery_us = now_us;
}

uint64_t
rstream_poll(struct rstream *rs, uint64_t now_us)
{
	uint64_t seq;

	if (rs->ack_owed)
		send_ack(rs);
	if (rs->rto_at != 0 && now_us >= rs->rto_at)
		expire(rs, now_us);
	/* lost segments first, oldest first */
	for (seq = rs->una; seq < rs->nxt; seq++) {
		struct seg *s = seg_at(rs, seq);

		if (!s->lost)
			continue;
		if (rs->inflight + s->len > rs->cwnd && rs->inflight > 0)
			break;
		rs->st.retx++;
		send_seg(rs, s, seq, now_us);
	}
	/* then new ones, as the window and the receiver allow */
	while (rstream_unsent(rs) > 0 && rs->nxt < rs->una + rs->peer_wnd) {
		size_t n = rstream_unsent(rs);
		struct seg *s = seg_at(rs, rs->nxt);

		if (n > rs->mss)
			n = rs->mss;
		if (rs->inflight + n > rs->cwnd && rs->inflight > 0)
			break;
		memset(s, 0, sizeof(*s));
		s->off = rs->snd_off;
		s->len = (uint32_t)n;
		rs->snd_off += n;
		rs->st.data_out++;
		send_seg(rs, s, rs->nxt++, now_us);
	}
	return rs->rto_at != 0 ? rs->rto_at : UINT64_MAX;
}

/*
 * recon.c: anti-entropy sessions by negentropy or RIBLT, and the digest
 * measured the same way (see recon.h; the wire is docs/protocol.md
 * sections 8.1 to 8.3).
 *
 * A session is one reconciliation with one member, named by the
 * initiator's random sid.  Each side takes a snapshot of its items (state
 * hash, id) when the session starts and answers from it; the records
 * that move are read from the replica when they leave, so they are
 * current.  Records a side learns the other lacks leave (RECON_RECS)
 * before its next protocol frame, and the link keeps order, so a side
 * that reads a protocol frame has every record the sender owed it by
 * then.  The end: the side with nothing more to ask sends END 1 (with
 * what it still wants); the other answers with those records and END 2;
 * a responder answers END 2 with END 3.  The initiator is done at END 2
 * or END 3, when both replicas hold the union.
 *
 * One session at a time: a peer starts a repair only when it takes part
 * in no other session and has applied every record it received, and a
 * peer in a session with another member answers a new one with END 0
 * (busy; the asker tries again at its next period).  A newcomer linked to
 * two peers would otherwise run two sessions at once and receive every
 * record twice; one after the other, the second finds the difference the
 * first already closed.  A session that heard nothing for a gossip period
 * (at least 500 ms) and has nothing waiting in the inbox is stale and
 * gives way.
 *
 * The inbox: records are verified (an Ed25519 check, about 85 us, for
 * every entry new to the replica), so a frame of them is applied in
 * slices of INBOX_SLICE per loop turn (inbox.c), not in one callback.  Every
 * recon frame that arrives while records wait is queued behind them, so
 * frames are still handled in the order they came and a session still
 * sees every record the other side sent before its next protocol frame.
 *
 * The horizon (docs/protocol.md section 8.4): a periodic repair names a
 * cut, the initiator's wall clock less --repair-horizon-ms, and both
 * sides leave out of their snapshots every record whose entry was issued
 * at or after it.  During a write burst the records still in flight on
 * the broadcast tree are then no difference: the repair finds the
 * replicas equal and the period stays backed off, and a record lost on
 * its way is repaired by the first periodic repair after it is older
 * than the horizon.  A repair at link up and a reconcile command name no
 * cut: a newcomer needs everything, a command is asked for exactly.  Off
 * by default (--repair-horizon-ms 0): docs/protocol.md 8.4 says why.
 *
 * Bounds: at most RECON_SESSIONS sessions, one initiated and one answered
 * per member; RECON_ROUNDS protocol frames each; a responder takes at
 * most RECON_SYMS_MAX symbols (fewer for small sets); an idle session
 * ends after RECON_IDLE_MS; the inbox holds at most INBOX_MAX bytes
 * of frames (over it, a frame is dropped and counted, and the next
 * repair fetches what it held).
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/rand.h>

#include "clock.h"
#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "gossip.h"
#include "hlc.h"
#include "inbox.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "neg.h"
#include "peerd.h"
#include "recon.h"
#include "replica.h"
#include "riblt.h"
#include "snapshot.h"
#include "stats.h"
#include "trace.h"
#include "xmalloc.h"

#define RECON_SESSIONS		8
#define RECON_ROUNDS		64
#define RECON_IDLE_MS		30000
#define RECON_SYMS_FRAME	128
#define RECON_WINDOW		4	/* frames of symbols ahead of acks */
/*
 * A repair between replicas at rest finds nothing, so a session the peer
 * starts itself (periodic or at link up; a newcomer's empty set is told
 * by "size" in the first frame) opens with a small first frame: twice the
 * last periodic difference plus RECON_SYMS_FIRST symbols, and the full
 * window only after the first ack.  A reconcile command opens with the
 * full window: it is asked for where a difference is known.
 */
#define RECON_SYMS_FIRST	16
#define RECON_SYMS_MAX		(1u << 18)
#define DIGEST_POLL_MS		1
/*
 * Records a RECON_RECS frame: the receiver verifies each new entry (about
 * 85 us) inside one callback, so smaller frames keep its loop answering.
 */
#define RECON_RECS_MAX		(512u << 10)

static const char *const method_names[] = { "digest", "negentropy",
    "riblt" };

enum sstate {
	S_RUN,		/* the protocol runs */
	S_END1,		/* sent END 1: waits for END 2 */
	S_END2,		/* initiator, sent END 2: waits for END 3 */
	S_DIGEST,	/* initiator of a digest round: polls its end */
};

struct sess {
	TAILQ_ENTRY(sess)	 entry;
	struct member		*m;
	uint64_t		 sid;
	enum recon_method	 method;
	bool			 initiator;
	bool			 periodic;	/* gossip's repair, not link up */
	bool			 probe;		/* not a command: open small */
	bool			 asked;		/* our END 1 wanted records */
	uint64_t		 cut;		/* horizon, wall ms; 0: none */
	enum sstate		 state;
	struct snapshot		 snap;		/* taken at its start */
	struct neg		*neg;
	struct riblt_enc	*enc;
	struct riblt_dec	*dec;
	uint64_t		 acked;		/* symbols the responder took */
	uint64_t		 opening;	/* symbols before the first ack */
	uint64_t		 last_ms, deadline_ms, start_us;
	uint64_t		 rounds, records, payload;
	uint64_t		 bytes0, recbytes0, frames0, records0;
	struct event		*ev;
	recon_done_cb		 done;
	void			*arg;
};

static TAILQ_HEAD(, sess) sessions = TAILQ_HEAD_INITIALIZER(sessions);
static size_t nsessions;
static uint64_t last_diff;	/* records the last periodic repair moved */
static unsigned quiet;		/* periodic repairs in a row that found none */


int
recon_method_parse(const char *name, enum recon_method *m)
{
	for (size_t i = 0; i < sizeof(method_names) / sizeof(*method_names);
	    i++)
		if (strcmp(name, method_names[i]) == 0) {
			*m = (enum recon_method)i;
			return 0;
		}
	return -1;
}

const char *
recon_method_name(enum recon_method m)
{
	return (unsigned)m <= RECON_RIBLT ? method_names[m] : "?";
}

/* ---- bytes on the wire, from the per-kind counters --------------------- */

static uint64_t
kind_bytes(uint32_t kind)
{
	return pd_metrics.bytes_in_kind[kind] + pd_metrics.bytes_out_kind[kind];
}

static uint64_t
kind_frames(uint32_t kind)
{
	return pd_metrics.frames_in_kind[kind] +
	    pd_metrics.frames_out_kind[kind];
}

static uint64_t
exchange_bytes(void)
{
	return kind_bytes(FRAME_RECON_NEG) + kind_bytes(FRAME_RECON_SYMS) +
	    kind_bytes(FRAME_RECON_ACK) + kind_bytes(FRAME_RECON_END) +
	    kind_bytes(FRAME_DIGEST);
}

static uint64_t
record_bytes(void)
{
	return kind_bytes(FRAME_RECON_RECS) + kind_bytes(FRAME_PULL_RESP);
}

/* ---- sessions ---------------------------------------------------------- */

static void	sess_timer(evutil_socket_t, short, void *);

static struct sess *
sess_find(const struct member *m, uint64_t sid)
{
	struct sess *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->m == m && s->sid == sid)
			return s;
	return NULL;
}

static struct sess *
sess_find_role(const struct member *m, bool initiator)
{
	struct sess *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->m == m && s->initiator == initiator)
			return s;
	return NULL;
}

static void
sess_arm(struct sess *s, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000),
	    .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	evtimer_add(s->ev, &tv);
}

static struct sess *
sess_new(struct member *m, uint64_t sid, enum recon_method method,
    bool initiator)
{
	struct sess *s = xcalloc(1, sizeof(*s));

	s->m = m;
	s->sid = sid;
	s->method = method;
	s->initiator = initiator;
	s->state = S_RUN;
	s->last_ms = clock_mono_ms();
	s->start_us = clock_mono_us();
	s->bytes0 = exchange_bytes();
	s->recbytes0 = record_bytes();
	s->frames0 = kind_frames(FRAME_DIGEST) + kind_frames(FRAME_PULL_RESP);
	s->records0 = pd_metrics.delta_entries + pd_metrics.records_received;
	s->ev = evtimer_new(pd->base, sess_timer, s);
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	nsessions++;
	sess_arm(s, 1000);
	return s;
}

/*
 * What a periodic repair found, for the next one's opening and for
 * gossip's period (recon_quiet): equal sets lengthen the quiet streak;
 * a difference, or a failure other than a busy answer, ends it.
 */
static void
repair_outcome(const struct sess *s, const char *error)
{
	if (error == NULL && s->records == 0) {
		pd_count(recon_repairs_equal);
		quiet++;
		last_diff = 0;
	} else if (error == NULL) {
		pd_count(recon_repairs_moved);
		quiet = 0;
		last_diff = s->records;
	} else if (strcmp(error, "the other side gave up") != 0) {
		pd_count(recon_repairs_failed);
		quiet = 0;
	}
}

unsigned
recon_quiet(void)
{
	return quiet;
}

/* End s: report to its caller (if any) and free it. */
static void
sess_end(struct sess *s, const char *error)
{
	struct recon_result r;

	memset(&r, 0, sizeof(r));
	r.ok = error == NULL;
	r.error = error;
	r.method = s->method;
	r.rounds = s->method == RECON_DIGEST ? kind_frames(FRAME_DIGEST) +
	    kind_frames(FRAME_PULL_RESP) - s->frames0 : s->rounds;
	r.bytes = exchange_bytes() - s->bytes0;
	r.record_bytes = record_bytes() - s->recbytes0;
	/* The digest's records: those it sent and those it received. */
	r.records = s->method == RECON_DIGEST ? pd_metrics.delta_entries +
	    pd_metrics.records_received - s->records0 : s->records;
	r.payload = s->payload;
	r.items = s->snap.n;
	r.ms = (double)(clock_mono_us() - s->start_us) / 1000.0;
	if (s->periodic)
		repair_outcome(s, error);
	if (error != NULL)
		trace_add("recon", "%s with %s (sid %llx) ended: %s",
		    recon_method_name(s->method), s->m ? s->m->name : "?",
		    (unsigned long long)s->sid, error);
	TAILQ_REMOVE(&sessions, s, entry);
	nsessions--;
	inbox_forget(s);
	if (s->done != NULL)
		s->done(s->arg, &r);
	event_free(s->ev);
	neg_free(s->neg);
	riblt_enc_free(s->enc);
	riblt_dec_free(s->dec);
	snapshot_free(&s->snap);
	free(s);
}

/* ---- frames ------------------------------------------------------------ */

static void
put_hashes(struct dcbor_buf *b, const uint64_t *v, size_t k)
{
	uint8_t *p;

	dcbor_put_bytes_head(b, k * 8);
	p = dcbor_buf_reserve(b, k * 8);
	for (size_t i = 0; i < k; i++)
		for (int j = 0; j < 8; j++)
			*p++ = (uint8_t)(v[i] >> (56 - 8 * j));
	b->len += k * 8;
}

static int
get_hashes(const uint8_t *p, size_t len, struct neg_ids *out)
{
	if (len % 8 != 0)
		return -1;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = 0;

		for (int j = 0; j < 8; j++)
			v = v << 8 | p[i + j];
		neg_ids_push(out, v);
	}
	return 0;
}

static void
send_body(struct sess *s, uint32_t kind, struct dcbor_buf *b)
{
	if (s->m->link != NULL)
		link_send_member(s->m, kind, b->data, b->len);
	dcbor_buf_free(b);
}

static void
flush_recs(struct sess *s, struct dcbor_buf *recs, size_t *n)
{
	struct dcbor_buf b;

	if (*n == 0)
		return;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 2);
	dcbor_put_cstr(&b, "sid");
	dcbor_put_uint(&b, s->sid);
	dcbor_put_cstr(&b, "recs");
	dcbor_put_array(&b, *n);
	dcbor_put_raw(&b, recs->data, recs->len);
	send_body(s, FRAME_RECON_RECS, &b);
	dcbor_buf_reset(recs);
	*n = 0;
}

/* A record to send, in the receiver's FIFO order: (issue stamp, id). */
struct outrec {
	struct hlc_stamp	 stamp;		/* zero: held without its entry */
	const uint8_t		*id;
};

static int
outrec_cmp(const void *x, const void *y)
{
	const struct outrec *a = x, *b = y;
	int c = hlc_cmp(&a->stamp, &b->stamp);

	return c != 0 ? c : memcmp(a->id, b->id, ENTRY_ID_LEN);
}

/*
 * Send the records of the k items v, or of the whole snapshot (all), in
 * the order of their entries' stamps: the receiver's FIFO index is a
 * sorted array, so records in hash order made each insertion move half
 * of it (at 200,000 records, more CPU than verifying them), and in stamp
 * order a newcomer's inserts append.
 */
static void
send_recs(struct sess *s, bool all, const uint64_t *v, size_t k)
{
	struct dcbor_buf recs;
	struct outrec *out;
	size_t n = 0, no = 0, sz;

	if (all)
		k = s->snap.n;
	out = xcalloc(k ? k : 1, sizeof(*out));
	for (size_t i = 0; i < k; i++) {
		const uint8_t *id = all ? s->snap.it[i].id :
		    snapshot_id(&s->snap, v[i]);

		if (id == NULL)
			continue;
		if (replica_entry_stamp(id, &out[no].stamp) == -1)
			memset(&out[no].stamp, 0, sizeof(out[no].stamp));
		out[no++].id = id;
	}
	qsort(out, no, sizeof(*out), outrec_cmp);
	dcbor_buf_init(&recs);
	for (size_t i = 0; i < no; i++) {
		size_t before = recs.len;

		if ((sz = replica_put_record(&recs, out[i].id)) == 0)
			continue;
		if (recs.len > RECON_RECS_MAX && n > 0) {
			/* this one starts the next frame */
			struct dcbor_buf one;

			dcbor_buf_init(&one);
			dcbor_put_raw(&one, recs.data + before, sz);
			recs.len = before;
			flush_recs(s, &recs, &n);
			dcbor_put_raw(&recs, one.data, one.len);
			dcbor_buf_free(&one);
		}
		n++;
		s->records++;
		s->payload += sz;
	}
	flush_recs(s, &recs, &n);
	dcbor_buf_free(&recs);
	free(out);
}

/* A RECON_END body { "all", "sid", "step", "want" }, appended to b. */
void
recon_end_put(struct dcbor_buf *b, uint64_t sid, uint64_t step, bool all,
    const uint64_t *want, size_t k)
{
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "all");
	dcbor_put_bool(b, all);
	dcbor_put_cstr(b, "sid");
	dcbor_put_uint(b, sid);
	dcbor_put_cstr(b, "step");
	dcbor_put_uint(b, step);
	dcbor_put_cstr(b, "want");
	put_hashes(b, want, k);
}

static void
send_end(struct member *m, uint64_t sid, uint64_t step, bool all,
    const uint64_t *want, size_t k)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	recon_end_put(&b, sid, step, all, want, k);
	if (m->link != NULL)
		link_send_member(m, FRAME_RECON_END, b.data, b.len);
	dcbor_buf_free(&b);
}

/* A RECON_NEG body { "cut"? (0: none), "msg", "sid", "want" }, to b. */
void
recon_neg_put(struct dcbor_buf *b, uint64_t cut, uint64_t sid,
    const uint8_t *msg, size_t len, const uint64_t *want, size_t k)
{
	dcbor_put_map(b, cut != 0 ? 4 : 3);
	if (cut != 0) {
		dcbor_put_cstr(b, "cut");
		dcbor_put_uint(b, cut);
	}
	dcbor_put_cstr(b, "msg");
	dcbor_put_raw(b, msg, len);
	dcbor_put_cstr(b, "sid");
	dcbor_put_uint(b, sid);
	dcbor_put_cstr(b, "want");
	put_hashes(b, want, k);
}

static void
send_neg(struct sess *s, const struct dcbor_buf *msg,
    const struct neg_ids *want)
{
	struct dcbor_buf b;

	bool cut = s->initiator && s->rounds == 0 && s->cut != 0;

	dcbor_buf_init(&b);
	recon_neg_put(&b, cut ? s->cut : 0, s->sid, msg->data, msg->len,
	    want->v, want->n);
	send_body(s, FRAME_RECON_NEG, &b);
	s->rounds++;
}

/* A RECON_SYMS body { "n", "cut"? (0: none), "sid", "size", "syms" }. */
void
recon_syms_put(struct dcbor_buf *b, uint64_t at, uint64_t cut, uint64_t sid,
    uint64_t size, const struct riblt_sym *sym, size_t k)
{
	dcbor_put_map(b, cut != 0 ? 5 : 4);
	dcbor_put_cstr(b, "n");
	dcbor_put_uint(b, at);
	if (cut != 0) {
		dcbor_put_cstr(b, "cut");
		dcbor_put_uint(b, cut);
	}
	dcbor_put_cstr(b, "sid");
	dcbor_put_uint(b, sid);
	dcbor_put_cstr(b, "size");
	dcbor_put_uint(b, size);
	dcbor_put_cstr(b, "syms");
	riblt_put_syms(b, sym, k);
}

/* Symbols while the responder is less than a window behind. */
static void
pump(struct sess *s)
{
	struct riblt_sym sym[RECON_SYMS_FRAME];

	uint64_t ahead = s->acked == 0 && s->opening > 0 ? s->opening :
	    RECON_WINDOW * RECON_SYMS_FRAME;

	while (s->state == S_RUN && riblt_enc_pos(s->enc) < s->acked + ahead &&
	    riblt_enc_pos(s->enc) < RECON_SYMS_MAX) {
		struct dcbor_buf b;
		uint64_t at = riblt_enc_pos(s->enc);
		uint64_t room = s->acked + ahead - at;
		size_t k = riblt_enc_next(s->enc, sym, room < RECON_SYMS_FRAME ?
		    (size_t)room : RECON_SYMS_FRAME);
		bool cut = at == 0 && s->cut != 0;

		dcbor_buf_init(&b);
		recon_syms_put(&b, at, cut ? s->cut : 0, s->sid, s->snap.n,
		    sym, k);
		send_body(s, FRAME_RECON_SYMS, &b);
	}
}

/* The END 1 of the side that has nothing more to ask. */
static void
end_talking(struct sess *s, bool all, const uint64_t *want, size_t k)
{
	send_end(s->m, s->sid, 1, all, want, k);
	s->rounds++;
	s->asked = all || k > 0;
	s->state = S_END1;
}

/* ---- starting ---------------------------------------------------------- */

static uint64_t
new_sid(void)
{
	uint64_t sid = 0;

	while (sid == 0)
		if (RAND_bytes((unsigned char *)&sid, sizeof(sid)) != 1)
			sid = ((uint64_t)clock_mono_us() << 1) | 1;
	return sid;
}

/* The cut of a periodic repair started at wall time now (never 0). */
static uint64_t
horizon_cut(uint64_t now)
{
	uint64_t h = pd->conf.repair_horizon_ms;

	return now > h ? now - h : 1;
}

static void
start_proto(struct sess *s)
{
	uint64_t *v;

	if (s->method == RECON_DIGEST) {
		s->state = S_DIGEST;
		gossip_digest(s->m);
		sess_arm(s, DIGEST_POLL_MS);
		return;
	}
	if (s->periodic && pd->conf.repair_horizon_ms > 0)
		s->cut = horizon_cut(hlc_wall_ms());
	snapshot_take(&s->snap, s->cut);
	v = snapshot_hashes(&s->snap);
	if (s->method == RECON_NEGENTROPY) {
		struct dcbor_buf msg;
		struct neg_ids none = { 0 };

		s->neg = neg_new(v, s->snap.n);
		dcbor_buf_init(&msg);
		neg_initiate(s->neg, &msg);
		send_neg(s, &msg, &none);
		dcbor_buf_free(&msg);
	} else {
		s->enc = riblt_enc_new(v, s->snap.n, RECON_SYMS_MAX);
		s->rounds = 1;		/* the symbol stream */
		if (s->probe)
			s->opening = 2 * last_diff + RECON_SYMS_FIRST <
			    RECON_WINDOW * RECON_SYMS_FRAME ? 2 * last_diff +
			    RECON_SYMS_FIRST : RECON_WINDOW * RECON_SYMS_FRAME;
		pump(s);
	}
	free(v);
}

/* A period of silence (at least 500 ms): see sess_stale(). */
static uint64_t
stale_ms(void)
{
	return pd->conf.gossip_ms > 500 ? pd->conf.gossip_ms : 500;
}

/*
 * A session that has heard nothing for a period and has no frame waiting
 * in the inbox: its frames were dropped by a partition or a fault, or the
 * other side went away.  It gives way to a new one.
 */
static bool
sess_stale(const struct sess *s, uint64_t now)
{
	return now - s->last_ms >= stale_ms() && !inbox_has(s->m);
}

/*
 * Whether this peer is in a session, after ending the stale ones (but
 * not one a caller waits on: that one has its deadline).
 */
static bool
sess_busy(void)
{
	struct sess *s, *next;
	uint64_t now = clock_mono_ms();
	bool busy = false;

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->done == NULL && sess_stale(s, now))
			sess_end(s, "stale, gave way to the next repair");
		else
			busy = true;
	}
	return busy;
}

int
recon_start(struct member *m, bool link_up)
{
	struct sess *s;

	if (pd->conf.reconcile == RECON_DIGEST)
		return -1;
	if (link_up && memcmp(pd->ident.id, m->id, IDENTITY_ID_LEN) > 0)
		return 0;	/* the other end starts this one */
	/*
	 * One session at a time, and none while records wait in the inbox:
	 * its snapshot would lack them and fetch them again.
	 */
	if (m->link == NULL || sess_busy() || !inbox_empty())
		return 0;	/* the next tick */
	s = sess_new(m, new_sid(), (enum recon_method)pd->conf.reconcile,
	    true);
	s->periodic = !link_up;
	s->probe = true;
	start_proto(s);
	return 0;
}

void
recon_run(struct member *m, enum recon_method method, uint32_t timeout_ms,
    recon_done_cb done, void *arg)
{
	struct recon_result r;
	struct sess *s;

	memset(&r, 0, sizeof(r));
	r.method = method;
	if (m->link == NULL)
		r.error = "no link to that member";
	else if (sess_find_role(m, true) != NULL)
		r.error = "a reconciliation with that member is running";
	else if (nsessions >= RECON_SESSIONS)
		r.error = "too many reconciliations at once";
	if (r.error != NULL) {
		done(arg, &r);
		return;
	}
	s = sess_new(m, new_sid(), method, true);
	s->done = done;
	s->arg = arg;
	s->deadline_ms = clock_mono_ms() + timeout_ms;
	start_proto(s);
}

static void
sess_timer(evutil_socket_t fd, short what, void *arg)
{
	struct sess *s = arg;
	uint64_t now = clock_mono_ms();

	(void)fd;
	(void)what;
	if (s->deadline_ms != 0 && now >= s->deadline_ms) {
		sess_end(s, "timeout");
		return;
	}
	if (s->state == S_DIGEST) {
		/* The asker's round is over once it sent its final delta. */
		if (s->m->ae_asked_ms == 0) {
			send_end(s->m, s->sid, 2, false, NULL, 0);
			s->state = S_END2;
			s->last_ms = now;
		}
		sess_arm(s, s->state == S_DIGEST ? DIGEST_POLL_MS : 1000);
		return;
	}
	if (now - s->last_ms >= RECON_IDLE_MS) {
		sess_end(s, "idle");
		return;
	}
	sess_arm(s, 1000);
}

/* A responder session for a first frame, or NULL (refused or busy). */
static struct sess *
responder(struct member *from, uint64_t sid, enum recon_method method)
{
	struct sess *old = sess_find_role(from, false);

	if (old != NULL)
		sess_end(old, "replaced by a new session");
	if (nsessions >= RECON_SESSIONS || sess_busy()) {
		pd_count(recon_refused_busy);
		send_end(from, sid, 0, false, NULL, 0);
		return NULL;
	}
	return sess_new(from, sid, method, false);
}

/* ---- receiving --------------------------------------------------------- */

/*
 * The optional "cut" that may open a first frame's map (it sorts first
 * of RECON_NEG's keys and after RECON_SYMS' "n"): read when the map has
 * one key more than without it.  0 when absent; a cut of 0 is malformed.
 */
static int
get_cut(struct dcbor_rd *rd, bool present, uint64_t *cut)
{
	*cut = 0;
	if (!present)
		return 0;
	if (dcbor_get_key(rd, "cut") == -1 || dcbor_get_uint(rd, cut) == -1 ||
	    *cut == 0)
		return -1;
	return 0;
}

static int
recv_neg(struct member *from, struct dcbor_rd *rd, uint64_t nkeys)
{
	const uint8_t *msg, *wp;
	size_t mlen, wlen;
	uint64_t sid, cut;
	struct sess *s;
	struct neg_ids want = { 0 }, have = { 0 }, need = { 0 };
	struct dcbor_buf out;
	int rc = -1;

	if (get_cut(rd, nkeys == 4, &cut) == -1 ||
	    dcbor_get_key(rd, "msg") == -1 ||
	    dcbor_get_raw(rd, &msg, &mlen) == -1 ||
	    dcbor_get_key(rd, "sid") == -1 || dcbor_get_uint(rd, &sid) == -1 ||
	    dcbor_get_key(rd, "want") == -1 ||
	    dcbor_get_bytes(rd, &wp, &wlen) == -1 || dcbor_left(rd) != 0 ||
	    wlen % 8 != 0)
		return -1;
	if ((s = sess_find(from, sid)) == NULL) {
		uint64_t *v;

		if ((s = responder(from, sid, RECON_NEGENTROPY)) == NULL)
			return 0;
		s->cut = cut;
		snapshot_take(&s->snap, s->cut);
		v = snapshot_hashes(&s->snap);
		s->neg = neg_new(v, s->snap.n);
		free(v);
	}
	if (s->method != RECON_NEGENTROPY || s->state != S_RUN)
		return 0;
	s->last_ms = clock_mono_ms();
	if (++s->rounds > RECON_ROUNDS) {
		send_end(from, sid, 0, false, NULL, 0);
		sess_end(s, "too many rounds");
		return 0;
	}
	dcbor_buf_init(&out);
	if (get_hashes(wp, wlen, &want) == -1 ||
	    neg_reply(s->neg, msg, mlen, &out, &have, &need) == -1) {
		sess_end(s, "malformed negentropy message");
		goto done;
	}
	send_recs(s, false, want.v, want.n);
	send_recs(s, false, have.v, have.n);
	if (out.len == 0)
		end_talking(s, false, need.v, need.n);
	else
		send_neg(s, &out, &need);
	rc = 0;
done:
	dcbor_buf_free(&out);
	neg_ids_free(&want);
	neg_ids_free(&have);
	neg_ids_free(&need);
	return rc;
}

static int
recv_syms(struct member *from, struct dcbor_rd *rd, uint64_t nkeys)
{
	const uint8_t *p;
	size_t len, k;
	uint64_t at, sid, size, cut;
	struct sess *s;
	struct riblt_sym *sym;
	struct dcbor_buf b;

	if (dcbor_get_key(rd, "n") == -1 || dcbor_get_uint(rd, &at) == -1 ||
	    get_cut(rd, nkeys == 5, &cut) == -1 ||
	    dcbor_get_key(rd, "sid") == -1 || dcbor_get_uint(rd, &sid) == -1 ||
	    dcbor_get_key(rd, "size") == -1 ||
	    dcbor_get_uint(rd, &size) == -1 ||
	    dcbor_get_key(rd, "syms") == -1 ||
	    dcbor_get_bytes(rd, &p, &len) == -1 || dcbor_left(rd) != 0)
		return -1;
	if ((s = sess_find(from, sid)) == NULL) {
		uint64_t *v, max;

		if (at != 0)
			return 0;	/* the rest of a session we ended */
		if ((s = responder(from, sid, RECON_RIBLT)) == NULL)
			return 0;
		s->cut = cut;
		snapshot_take(&s->snap, s->cut);
		s->rounds = 1;
		if (size == 0) {
			/* The other side holds nothing: it gets everything. */
			send_recs(s, true, NULL, 0);
			end_talking(s, false, NULL, 0);
			return 0;
		}
		if (s->snap.n == 0) {
			end_talking(s, true, NULL, 0);
			return 0;
		}
		max = 2 * ((uint64_t)s->snap.n + (size < pd->conf.max_entries ?
		    size : pd->conf.max_entries)) + 1024;
		v = snapshot_hashes(&s->snap);
		s->dec = riblt_dec_new(v, s->snap.n, max < RECON_SYMS_MAX ? max :
		    RECON_SYMS_MAX);
		free(v);
	}
	if (s->method != RECON_RIBLT || s->initiator)
		return 0;
	if (s->state != S_RUN)
		return 0;	/* sent before our END 1 reached it */
	if (at != riblt_dec_pos(s->dec))
		return -1;
	s->last_ms = clock_mono_ms();
	sym = xcalloc(len / 17 + 1, sizeof(*sym));
	if (riblt_get_syms(p, len, sym, len / 17 + 1, &k) == -1) {
		free(sym);
		return -1;
	}
	if (riblt_dec_add(s->dec, sym, k) == -1) {
		free(sym);
		send_end(from, sid, 0, false, NULL, 0);
		sess_end(s, "difference too large for the symbol cap");
		return 0;
	}
	free(sym);
	if (riblt_dec_done(s->dec)) {
		const uint64_t *mine, *theirs;
		size_t nm, nt;

		mine = riblt_dec_local(s->dec, &nm);
		theirs = riblt_dec_remote(s->dec, &nt);
		send_recs(s, false, mine, nm);
		end_talking(s, false, theirs, nt);
		return 0;
	}
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 2);
	dcbor_put_cstr(&b, "n");
	dcbor_put_uint(&b, riblt_dec_pos(s->dec));
	dcbor_put_cstr(&b, "sid");
	dcbor_put_uint(&b, sid);
	send_body(s, FRAME_RECON_ACK, &b);
	return 0;
}

static int
recv_ack(struct member *from, struct dcbor_rd *rd)
{
	uint64_t at, sid;
	struct sess *s;

	if (dcbor_get_key(rd, "n") == -1 || dcbor_get_uint(rd, &at) == -1 ||
	    dcbor_get_key(rd, "sid") == -1 || dcbor_get_uint(rd, &sid) == -1 ||
	    dcbor_left(rd) != 0)
		return -1;
	if ((s = sess_find(from, sid)) == NULL || s->state != S_RUN)
		return 0;
	if (!s->initiator || s->method != RECON_RIBLT ||
	    at > riblt_enc_pos(s->enc))
		return -1;
	s->last_ms = clock_mono_ms();
	if (at > s->acked)
		s->acked = at;
	pump(s);
	return 0;
}

static int
recv_recs(struct member *from, struct dcbor_rd *rd)
{
	uint64_t sid, n;
	struct sess *s;

	if (dcbor_get_key(rd, "sid") == -1 || dcbor_get_uint(rd, &sid) == -1 ||
	    dcbor_get_key(rd, "recs") == -1)
		return -1;
	/* Records only from a member this peer is reconciling with. */
	if ((s = sess_find(from, sid)) == NULL) {
		pd_count_reject(UNASKED_DELTA);
		return 0;
	}
	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	s->last_ms = clock_mono_ms();
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *p = rd->p;

		if (replica_apply_record(from, rd) == -1)
			return -1;
		s->records++;
		s->payload += (uint64_t)(rd->p - p);
	}
	return dcbor_left(rd) == 0 ? 0 : -1;
}

static int
recv_end(struct member *from, struct dcbor_rd *rd)
{
	const uint8_t *wp;
	size_t wlen;
	uint64_t sid, step;
	bool all;
	struct sess *s;
	struct neg_ids want = { 0 };

	if (dcbor_get_key(rd, "all") == -1 || dcbor_get_bool(rd, &all) == -1 ||
	    dcbor_get_key(rd, "sid") == -1 || dcbor_get_uint(rd, &sid) == -1 ||
	    dcbor_get_key(rd, "step") == -1 ||
	    dcbor_get_uint(rd, &step) == -1 ||
	    dcbor_get_key(rd, "want") == -1 ||
	    dcbor_get_bytes(rd, &wp, &wlen) == -1 || dcbor_left(rd) != 0 ||
	    step > 3 || get_hashes(wp, wlen, &want) == -1) {
		neg_ids_free(&want);
		return -1;
	}
	s = sess_find(from, sid);
	switch (step) {
	case 0:
		if (s != NULL)
			sess_end(s, "the other side gave up");
		break;
	case 1:
		if (s == NULL || s->state != S_RUN)
			break;
		s->rounds++;
		s->last_ms = clock_mono_ms();
		send_recs(s, all, want.v, want.n);
		send_end(from, sid, 2, false, NULL, 0);
		/*
		 * An initiator asked for nothing is done: it holds what the
		 * responder sent before step 1, and the responder lacks none
		 * of its items.
		 */
		if (s->initiator && (all || want.n > 0))
			s->state = S_END2;
		else
			sess_end(s, NULL);
		break;
	case 2:
		/* Step 3 says "applied": owed only for records asked for. */
		if (s == NULL || (!s->initiator && s->asked))
			send_end(from, sid, 3, false, NULL, 0);
		if (s != NULL && s->state == S_END1)
			sess_end(s, NULL);
		break;
	case 3:
		if (s != NULL && s->initiator && s->state == S_END2)
			sess_end(s, NULL);
		break;
	}
	neg_ids_free(&want);
	return 0;
}

static int
recon_dispatch(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	struct dcbor_rd rd;
	uint64_t n;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1)
		return -1;
	switch (kind) {
	case FRAME_RECON_NEG:
		return n == 3 || n == 4 ? recv_neg(from, &rd, n) : -1;
	case FRAME_RECON_SYMS:
		return n == 4 || n == 5 ? recv_syms(from, &rd, n) : -1;
	case FRAME_RECON_ACK:
		return n == 2 ? recv_ack(from, &rd) : -1;
	case FRAME_RECON_RECS:
		return n == 2 ? recv_recs(from, &rd) : -1;
	case FRAME_RECON_END:
		return n == 4 ? recv_end(from, &rd) : -1;
	default:
		return 0;
	}
}

/* ---- records and the inbox ------------------------------------------ */

/*
 * A RECON_RECS frame: its shape checked at once (a malformed one closes
 * the link, as any bad body does), its records applied now when few and
 * nothing waits, else queued.  Records only from a member this peer is
 * reconciling with, or one whose earlier frames still wait.
 */
static int
recs_arrive(struct member *from, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	const uint8_t *recs;
	uint64_t n, sid;
	struct sess *s;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 2 ||
	    dcbor_get_key(&rd, "sid") == -1 || dcbor_get_uint(&rd, &sid) == -1 ||
	    dcbor_get_key(&rd, "recs") == -1 || dcbor_get_array(&rd, &n) == -1)
		return -1;
	recs = rd.p;
	for (uint64_t i = 0; i < n; i++)
		if (dcbor_skip(&rd) == -1)
			return -1;
	if (dcbor_left(&rd) != 0)
		return -1;
	if ((s = sess_find(from, sid)) == NULL && !inbox_has(from)) {
		pd_count_reject(UNASKED_DELTA);
		return 0;
	}
	if (s != NULL)
		s->last_ms = clock_mono_ms();
	if (inbox_empty() && n <= INBOX_SLICE)
		return recon_dispatch(from, FRAME_RECON_RECS, body, len);
	inbox_push(from, FRAME_RECON_RECS, body, len, s, recs, n);
	return 0;
}

/* The inbox's view of a session: found by sid, and a record applied. */
static void *
inbox_session(struct member *from, uint64_t sid)
{
	return sess_find(from, sid);
}

static void
inbox_applied(void *arg, uint64_t bytes)
{
	struct sess *s = arg;

	s->records++;
	s->payload += bytes;
	s->last_ms = clock_mono_ms();
}

int
recon_recv(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	if (kind == FRAME_RECON_RECS)
		return recs_arrive(from, body, len);
	if (inbox_empty())
		return recon_dispatch(from, kind, body, len);
	inbox_push(from, kind, body, len, NULL, NULL, 0);
	return 0;
}

void
recon_link_down(struct member *m)
{
	struct sess *s, *next;

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->m == m)
			sess_end(s, "link down");
	}
}

void
recon_init(void)
{
	static const struct inbox_ops ops = { recon_dispatch, inbox_session,
	    inbox_applied };

	TAILQ_INIT(&sessions);
	nsessions = 0;
	inbox_init(&ops);
}

void
recon_free(void)
{
	while (!TAILQ_EMPTY(&sessions))
		sess_end(TAILQ_FIRST(&sessions), "shutdown");
	inbox_free();
}

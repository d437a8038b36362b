/*
 * take.c: the take verb of this peer (see take.h): the lease race, the
 * trust rule "left, answered, settled", quorum promises and the CLAIM_ACK
 * answers (docs/protocol.md section 6).
 *
 * A take picks the first visible candidate with no active claim, makes a
 * claim (epoch + 1, fresh stamp, bid 0, expiry now + take lease), signs it,
 * merges it locally and spreads it on the urgent lane; it trusts the claim
 * once the claim has left every link, every live member has answered it
 * and the settle window has passed, and has won only if the merged winner
 * is still its own claim and unexpired (in quorum mode: and a majority
 * vouched for it); otherwise it retries every take_retry_ms until the
 * request's deadline.  Partitions can make two lease-mode takers both win:
 * every win is remembered (take_won_json) so a harness counts them.
 * replica.c tells this file of every verified remote claim it merges
 * (take_remote_claim); this file never decodes records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "hex.h"
#include "link.h"
#include "frame.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "take.h"
#include "template.h"
#include "trace.h"
#include "xmalloc.h"

struct claim_wait;

struct take_op {
	TAILQ_ENTRY(take_op)	 entry;
	take_done_cb		 done;		/* called once, then freed */
	void			*arg;
	struct template		*t;
	uint64_t		 deadline_ms;
	bool			 claimed;	/* w holds our claim */
	bool			 untrusted;	/* counted once a claim */
	struct claim_wait	*w;
	uint8_t			 id[ENTRY_ID_LEN];
	uint64_t		 epoch;
	struct event		*ev;
	uint32_t		 attempts;
};

struct take_won {
	uint8_t		id[ENTRY_ID_LEN];
	uint64_t	epoch;
	uint64_t	mono_us;
	uint64_t	wall_ms;
};

static struct space		*sp;
static TAILQ_HEAD(, take_op)	 takes = TAILQ_HEAD_INITIALIZER(takes);
static struct take_won		*won;
static size_t			 nwon, wonsz;

static void	take_try(struct take_op *);
static void	take_beaten(const uint8_t id[ENTRY_ID_LEN], uint64_t now);

static uint64_t
now_ms(void)
{
	return hlc_wall_ms();
}

/* ---- quorum: promises and acks ----------------------------------------- */

/*
 * A promise: this peer vouched for holder's claim on entry id and vouches
 * for no other holder's claim on it until expiry (docs/protocol.md 6.2).
 */
struct promise {
	struct promise	*next;
	uint8_t		 id[ENTRY_ID_LEN];
	uint8_t		 holder[IDENTITY_ID_LEN];
	uint64_t	 expiry_ms;
};

#define PROMISE_SLOTS	4096

static struct promise	*promises[PROMISE_SLOTS];
static uint32_t		 members_hw;	/* most proven members ever seen */

/*
 * Vouch for claim c on id now: true (and the promise made or renewed)
 * unless an unexpired promise to another holder stands.
 */
static struct promise **
promise_slot(const uint8_t id[ENTRY_ID_LEN])
{
	uint64_t h;

	memcpy(&h, id, sizeof(h));	/* ids are hash output: uniform */
	return &promises[h % PROMISE_SLOTS];
}

/* The unexpired promise on id, or NULL (expired ones are dropped). */
static struct promise *
promise_find(const uint8_t id[ENTRY_ID_LEN], uint64_t now)
{
	struct promise **pp = promise_slot(id), *p;

	while ((p = *pp) != NULL) {
		if (p->expiry_ms <= now) {
			*pp = p->next;
			free(p);
			continue;
		}
		if (memcmp(p->id, id, ENTRY_ID_LEN) == 0)
			return p;
		pp = &p->next;
	}
	return NULL;
}

static bool
promise_make(const uint8_t id[ENTRY_ID_LEN], const struct crdt_claim *c,
    uint64_t now)
{
	struct promise **pp, *p;

	if ((p = promise_find(id, now)) != NULL) {
		if (memcmp(p->holder, c->holder, IDENTITY_ID_LEN) != 0)
			return false;
		if (c->expiry_ms > p->expiry_ms)
			p->expiry_ms = c->expiry_ms;
		return true;
	}
	pp = promise_slot(id);
	p = xcalloc(1, sizeof(*p));
	memcpy(p->id, id, ENTRY_ID_LEN);
	memcpy(p->holder, c->holder, IDENTITY_ID_LEN);
	p->expiry_ms = c->expiry_ms;
	p->next = *pp;
	*pp = p;
	return true;
}

static void
promises_free(void)
{
	for (size_t i = 0; i < PROMISE_SLOTS; i++)
		while (promises[i] != NULL) {
			struct promise *p = promises[i];

			promises[i] = p->next;
			free(p);
		}
}

/*
 * The membership a quorum is a majority of: this peer and every member it
 * has proven (a handshake gave its key), as the most ever seen at once, or
 * --fleet-size when that is larger (with partial views a peer need not have
 * met every other).  It never shrinks with silence: a view that shrank
 * is exactly how a minority would come to believe it is a majority.
 */
static uint32_t
quorum_members(void)
{
	uint32_t n = 1;

	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->have_pub)
			n++;
	if (n > members_hw)
		members_hw = n;
	return members_hw > pd->conf.fleet_size ? members_hw :
	    pd->conf.fleet_size;
}

/*
 * Routes toward claim holders that are not direct neighbours: for each
 * holder, its latest claims seen here, the neighbour that first delivered
 * each, and our signed answer to it.  First deliveries are ordered in
 * time, so following them leads back to the holder without a loop (the
 * hop limit bounds a route gone stale).
 */
#define ROUTE_SEEN	16

struct route_claim {
	uint8_t		 entry[ENTRY_ID_LEN];
	uint64_t	 epoch;
	uint8_t		 via[IDENTITY_ID_LEN];	/* its first deliverer */
	bool		 signed_ok;		/* sig is over this ok */
	bool		 have_sig;
	uint8_t		 sig[IDENTITY_SIG_LEN];	/* our vote, signed */
};

struct route {
	uint8_t			 holder[IDENTITY_ID_LEN];
	uint8_t			 via[IDENTITY_ID_LEN];	/* latest deliverer */
	struct route_claim	 seen[ROUTE_SEEN];
	unsigned		 next;
};

static struct route	*routes;
static size_t		 nroutes, routesz;

static struct route *
route_find(const uint8_t holder[IDENTITY_ID_LEN])
{
	for (size_t i = 0; i < nroutes; i++)
		if (memcmp(routes[i].holder, holder, IDENTITY_ID_LEN) == 0)
			return &routes[i];
	return NULL;
}

static struct route_claim *
route_claim_find(struct route *rt, const uint8_t id[ENTRY_ID_LEN],
    uint64_t epoch)
{
	for (unsigned i = 0; rt != NULL && i < ROUTE_SEEN; i++)
		if (rt->seen[i].epoch == epoch &&
		    memcmp(rt->seen[i].entry, id, ENTRY_ID_LEN) == 0)
			return &rt->seen[i];
	return NULL;
}

/*
 * Claim c on id arrived from neighbour from: its slot, made the first time
 * (and then from is the way back to its holder).
 */
static struct route_claim *
route_learn(const uint8_t id[ENTRY_ID_LEN], const struct crdt_claim *c,
    const struct member *from)
{
	struct route *rt = route_find(c->holder);
	struct route_claim *rc;

	if (rt == NULL) {
		if (nroutes == routesz) {
			routesz = routesz ? routesz * 2 : 16;
			routes = xreallocarray(routes, routesz,
			    sizeof(*routes));
		}
		rt = &routes[nroutes++];
		memset(rt, 0, sizeof(*rt));
		memcpy(rt->holder, c->holder, IDENTITY_ID_LEN);
	}
	if ((rc = route_claim_find(rt, id, c->epoch)) != NULL)
		return rc;
	rc = &rt->seen[rt->next];
	rt->next = (rt->next + 1) % ROUTE_SEEN;
	memset(rc, 0, sizeof(*rc));
	memcpy(rc->entry, id, ENTRY_ID_LEN);
	rc->epoch = c->epoch;
	if (from != NULL) {
		memcpy(rc->via, from->id, IDENTITY_ID_LEN);
		memcpy(rt->via, from->id, IDENTITY_ID_LEN);
	}
	return rc;
}

static struct member *
linked(const uint8_t id[IDENTITY_ID_LEN], const struct member *not)
{
	struct member *m = member_find(id);

	return m != NULL && m->link != NULL && m != not ? m : NULL;
}

/*
 * The next hop toward holder for its claim (id, epoch), not back to 'not':
 * the holder itself, else the claim's first deliverer, else the holder's
 * latest deliverer; NULL if none is linked.
 */
static struct member *
route_next(const uint8_t holder[IDENTITY_ID_LEN],
    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch, const struct member *not)
{
	struct route *rt = route_find(holder);
	struct route_claim *rc = route_claim_find(rt, id, epoch);
	struct member *m;

	if ((m = linked(holder, NULL)) != NULL)
		return m;
	if (rc != NULL && (m = linked(rc->via, not)) != NULL)
		return m;
	return rt != NULL ? linked(rt->via, not) : NULL;
}

/* What a relayed answer's voter signs: {ok, entry, epoch, holder}. */
static void
vote_signing_bytes(struct dcbor_buf *b, bool ok,
    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
    const uint8_t holder[IDENTITY_ID_LEN])
{
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "ok");
	dcbor_put_bool(b, ok);
	dcbor_put_cstr(b, "entry");
	dcbor_put_bytes(b, id, ENTRY_ID_LEN);
	dcbor_put_cstr(b, "epoch");
	dcbor_put_uint(b, epoch);
	dcbor_put_cstr(b, "holder");
	dcbor_put_bytes(b, holder, IDENTITY_ID_LEN);
}

/*
 * A CLAIM_ACK_RELAY body: { "ok", "key", "sig", "hops", "entry", "epoch",
 * "holder" } (canonical order); sig is the voter's (key's) over
 * vote_signing_bytes, so a relay cannot forge or flip a vote.
 */
static void
relay_put(struct dcbor_buf *b, bool ok, const uint8_t key[IDENTITY_PUB_LEN],
    const uint8_t sig[IDENTITY_SIG_LEN], uint64_t hops,
    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
    const uint8_t holder[IDENTITY_ID_LEN])
{
	dcbor_put_map(b, 7);
	dcbor_put_cstr(b, "ok");
	dcbor_put_bool(b, ok);
	dcbor_put_cstr(b, "key");
	dcbor_put_bytes(b, key, IDENTITY_PUB_LEN);
	dcbor_put_cstr(b, "sig");
	dcbor_put_bytes(b, sig, IDENTITY_SIG_LEN);
	dcbor_put_cstr(b, "hops");
	dcbor_put_uint(b, hops);
	dcbor_put_cstr(b, "entry");
	dcbor_put_bytes(b, id, ENTRY_ID_LEN);
	dcbor_put_cstr(b, "epoch");
	dcbor_put_uint(b, epoch);
	dcbor_put_cstr(b, "holder");
	dcbor_put_bytes(b, holder, IDENTITY_ID_LEN);
}

static void
ack_counted(bool ok)
{
	if (ok)
		pd_count(claim_acks_sent);
	else
		pd_count(claim_acks_refused);
}

/*
 * The answers of this loop turn, by neighbour: they leave at the turn's
 * end (take_turn_sent, after the turn's claims), all of one neighbour's in
 * one frame: a CLAIM_ACKS list when there are several, else the answer's
 * own kind (docs/protocol.md 6.3).  An answer identical to one already
 * queued for the same neighbour (two copies of a claim in one turn) goes
 * once.
 */
#define TAKE_ACKS_MAX	4096		/* answers in one CLAIM_ACKS */

struct ack_out {
	uint8_t		 to[IDENTITY_ID_LEN];
	bool		 relay;		/* a CLAIM_ACK_RELAY body */
	bool		 own;		/* our answer, not one passed on */
	bool		 ok;
	bool		 done;		/* sent with an earlier one */
	size_t		 off, len;	/* the body, in acks_buf */
};

static struct ack_out	*acks_out;
static size_t		 nacks_out, acks_outsz;
static struct dcbor_buf	 acks_buf, acks_frame;

static void	acks_flush(void);

static void
ack_queue(const struct member *to, bool relay, bool own, bool ok,
    const struct dcbor_buf *body)
{
	struct ack_out *a;

	for (size_t i = 0; i < nacks_out; i++) {
		a = &acks_out[i];
		if (a->relay == relay && a->len == body->len &&
		    memcmp(a->to, to->id, IDENTITY_ID_LEN) == 0 &&
		    memcmp(acks_buf.data + a->off, body->data, a->len) == 0)
			return;
	}
	if (acks_buf.len + body->len > pd->conf.max_frame / 4 ||
	    nacks_out == TAKE_ACKS_MAX)
		acks_flush();		/* a list stays well under the cap */
	if (nacks_out == acks_outsz) {
		acks_outsz = acks_outsz ? acks_outsz * 2 : 16;
		acks_out = xreallocarray(acks_out, acks_outsz,
		    sizeof(*acks_out));
	}
	a = &acks_out[nacks_out++];
	memcpy(a->to, to->id, IDENTITY_ID_LEN);
	a->relay = relay;
	a->own = own;
	a->ok = ok;
	a->done = false;
	a->off = acks_buf.len;
	a->len = body->len;
	dcbor_put_raw(&acks_buf, body->data, body->len);
	replica_urgent_soon();
}

static void
ack_sent(const struct ack_out *a)
{
	if (a->own)
		ack_counted(a->ok);
	if (a->relay)
		pd_count(claim_acks_relayed);
}

/* Send the queued answers: one frame per neighbour still linked. */
static void
acks_flush(void)
{
	struct member *m;
	size_t n;

	for (size_t i = 0; i < nacks_out; i++) {
		struct ack_out *a = &acks_out[i];

		if (a->done)
			continue;
		n = 1;
		for (size_t j = i + 1; j < nacks_out; j++)
			if (memcmp(acks_out[j].to, a->to,
			    IDENTITY_ID_LEN) == 0)
				n++;
		if ((m = member_find(a->to)) == NULL || m->link == NULL)
			;	/* gone this turn: as if the send failed */
		else if (n == 1) {
			if (link_send_member_urgent(m, a->relay ?
			    FRAME_CLAIM_ACK_RELAY : FRAME_CLAIM_ACK,
			    acks_buf.data + a->off, a->len) == 0)
				ack_sent(a);
		} else {
			dcbor_buf_reset(&acks_frame);
			dcbor_put_array(&acks_frame, n);
			for (size_t j = i; j < nacks_out; j++)
				if (memcmp(acks_out[j].to, a->to,
				    IDENTITY_ID_LEN) == 0)
					dcbor_put_raw(&acks_frame, acks_buf.data +
					    acks_out[j].off, acks_out[j].len);
			if (link_send_member_urgent(m, FRAME_CLAIM_ACKS,
			    acks_frame.data, acks_frame.len) == 0)
				for (size_t j = i; j < nacks_out; j++)
					if (memcmp(acks_out[j].to, a->to,
					    IDENTITY_ID_LEN) == 0)
						ack_sent(&acks_out[j]);
		}
		for (size_t j = i; j < nacks_out; j++)
			if (memcmp(acks_out[j].to, a->to, IDENTITY_ID_LEN) == 0)
				acks_out[j].done = true;
	}
	nacks_out = 0;
	dcbor_buf_reset(&acks_buf);
}

/*
 * Answer holder's claim (epoch) on id (queued for the turn's end): a
 * CLAIM_ACK { "ok", "entry", "epoch" } on the urgent lane of a direct
 * link, which the link's frame signature authenticates; with no direct
 * link, a CLAIM_ACK_RELAY signed
 * by this peer (once per claim and answer: rc caches it) toward the
 * holder, by the neighbour that delivered this copy of the claim (it
 * holds the claim, so it knows the way), else along the claim's route.
 */
static void
ack_send(const uint8_t id[ENTRY_ID_LEN], const struct crdt_claim *c, bool ok,
    const struct member *from, struct route_claim *rc)
{
	struct member *m, *next;
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	if ((m = linked(c->holder, NULL)) != NULL) {
		dcbor_put_map(&b, 3);
		dcbor_put_cstr(&b, "ok");
		dcbor_put_bool(&b, ok);
		dcbor_put_cstr(&b, "entry");
		dcbor_put_bytes(&b, id, ENTRY_ID_LEN);
		dcbor_put_cstr(&b, "epoch");
		dcbor_put_uint(&b, c->epoch);
		ack_queue(m, false, true, ok, &b);
	} else if ((next = from != NULL ? linked(from->id, NULL) : NULL) ==
	    NULL && (next = route_next(c->holder, id, c->epoch, NULL)) == NULL)
		pd_count(claim_acks_unroutable);
	else {
		if (!rc->have_sig || rc->signed_ok != ok) {
			vote_signing_bytes(&b, ok, id, c->epoch, c->holder);
			identity_sign(&pd->ident, b.data, b.len, rc->sig);
			rc->have_sig = true;
			rc->signed_ok = ok;
			dcbor_buf_reset(&b);
		}
		relay_put(&b, ok, pd->ident.pub, rc->sig, pd->conf.hops, id,
		    c->epoch, c->holder);
		ack_queue(next, true, true, ok, &b);
	}
	dcbor_buf_free(&b);
}

/*
 * Answer a verified remote claim c on r, at every copy that reaches this
 * peer (a copy can be lost with a link; the holder counts each voter
 * once): in lease mode a
 * refusal only from a rival, when a claim of this peer still leads here
 * (it beat c) or this peer won the entry with a claim still unexpired, so
 * a taker this peer beat learns it from the answer, whatever way the two
 * claims travelled; in quorum mode a vote: ok only if we vouch for it
 * (promise_make).  Without --fleet-size a lease take waits only for its
 * direct neighbours, so only refusals are relayed; otherwise every answer.
 */
static void
claim_answer(const struct space_rec *r, const struct crdt_claim *c,
    const struct member *from, uint64_t now)
{
	const uint8_t *id = space_rec_id(r);
	const struct crdt_claim *win = space_rec_claim(r);
	struct route_claim *rc;
	struct promise *p;
	struct member *m;
	bool ok;

	if (!crdt_claim_active(c, now))
		return;
	rc = route_learn(id, c, from);
	if (pd->conf.take_mode == TAKE_QUORUM)
		ok = !space_rec_state(r)->completed && promise_make(id, c, now);
	else {
		/* Refused only by a rival: our own claim leads, or we won. */
		p = promise_find(id, now);
		ok = !space_rec_state(r)->completed &&
		    (win == NULL || memcmp(win->holder, pd->ident.id,
		    IDENTITY_ID_LEN) != 0 || !crdt_claim_active(win, now)) &&
		    (p == NULL || memcmp(p->holder, c->holder,
		    IDENTITY_ID_LEN) == 0);
		if (ok && pd->conf.fleet_size == 0 &&
		    ((m = member_find(c->holder)) == NULL || m->link == NULL))
			return;		/* nobody waits for it */
	}
	ack_send(id, c, ok, from, rc);
}

void
take_remote_claim(const struct space_rec *r, const struct crdt_claim *c,
    const struct member *from, bool fresh, uint64_t now)
{
	claim_answer(r, c, from, now);
	if (fresh)
		take_beaten(space_rec_id(r), now);
}

/* ---- take -------------------------------------------------------------- */

/*
 * One claim this peer made and has not yet trusted: where it stood in each
 * link's send stream, when it was seen to have left them all, and who has
 * answered it (quorum mode).  A quorum claim outlives a take that timed
 * out ("pending"): the next take adopts it rather than claim anew, so a
 * claim made in a minority can still win once the partition heals.
 */
struct claim_wait {
	TAILQ_ENTRY(claim_wait)	 entry;
	struct take_op		*op;		/* NULL: pending */
	uint8_t			 id[ENTRY_ID_LEN];
	uint64_t		 epoch;
	uint64_t		 made_ms;
	uint64_t		 expiry_ms;
	struct link_mark	*marks;
	size_t			 nmarks;
	bool			 sent;		/* marks taken: queued on links */
	uint64_t		 left_ms;	/* 0: not yet left every link */
	uint8_t			(*voters)[IDENTITY_ID_LEN];
	size_t			 nvoters, votersz;
	uint32_t		 acks, nacks;	/* acks include our own */
};

static TAILQ_HEAD(, claim_wait)	 waits = TAILQ_HEAD_INITIALIZER(waits);

static void
wait_free(struct claim_wait *w)
{
	TAILQ_REMOVE(&waits, w, entry);
	if (w->op != NULL)
		w->op->w = NULL;
	free(w->marks);
	free(w->voters);
	free(w);
}

static void
op_free(struct take_op *op)
{
	TAILQ_REMOVE(&takes, op, entry);
	if (op->w != NULL) {
		op->w->op = NULL;
		/* Only a quorum claim still in the running stays pending. */
		if (pd->conf.take_mode != TAKE_QUORUM ||
		    !space_won(sp, op->w->id, op->w->epoch, now_ms()))
			wait_free(op->w);
	}
	event_free(op->ev);
	template_free(op->t);
	free(op);
}

static void
op_done(struct take_op *op, const struct space_rec *r)
{
	op->done(op->arg, r, op->attempts);
	op_free(op);
}

static void
take_schedule(struct take_op *op, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000),
	    .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	event_add(op->ev, &tv);
}

static void
take_record_win(const struct space_rec *r, uint64_t epoch)
{
	const struct entry *e = space_rec_entry(r);
	uint64_t now = clock_mono_us();

	if (nwon == wonsz) {
		wonsz = wonsz ? wonsz * 2 : 64;
		won = xreallocarray(won, wonsz, sizeof(*won));
	}
	memcpy(won[nwon].id, e->id, ENTRY_ID_LEN);
	won[nwon].epoch = epoch;
	won[nwon].mono_us = now;
	won[nwon].wall_ms = hlc_wall_ms();
	nwon++;
	if (e->mono_us != 0 && now >= e->mono_us)
		pd_hist(write_to_take, now - e->mono_us);
}

static void
take_lost(struct take_op *op, uint64_t now)
{
	if (op->w != NULL)
		wait_free(op->w);
	pd_count(takes_lost);
	trace_add("claim", "lost take of %02x%02x%02x%02x epoch %llu",
	    op->id[0], op->id[1], op->id[2], op->id[3],
	    (unsigned long long)op->epoch);
	if (now >= op->deadline_ms) {
		op_done(op, NULL);
		return;
	}
	pd_count(takes_retried);
	op->claimed = false;
	take_schedule(op, pd->conf.take_retry_ms);
}

static bool
wait_answered_by(const struct claim_wait *w, const struct member *m)
{
	for (size_t i = 0; i < w->nvoters; i++)
		if (memcmp(w->voters[i], m->id, IDENTITY_ID_LEN) == 0)
			return true;
	return false;
}

/* Every live member (alive, with an UP link) has answered w; see below. */
static bool
wait_answered_all(const struct claim_wait *w, uint64_t now)
{
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link != NULL && m->state == MEMBER_ALIVE &&
		    !wait_answered_by(w, m))
			return false;
	}
	/*
	 * With the fleet's size known, every other member, linked or not, for
	 * at most --answer-wait-ms past the settle window: an answer from
	 * beyond the direct links can be lost with a link that closes, and
	 * nothing asks for it again.
	 */
	return pd->conf.fleet_size <= 1 ||
	    w->nvoters + 1 >= pd->conf.fleet_size ||
	    now >= w->left_ms + pd->conf.settle_ms + pd->conf.answer_wait_ms;
}

/*
 * The trust rule (docs/protocol.md 6.1, "left, answered, settled"): a
 * claim is trusted once it has left every link that was up when it was
 * made (or that link is gone), every live member has answered it, the
 * settle window has passed since it left, it is still the merged winner
 * and, in quorum mode, a majority of the membership vouched for it.
 */
static void
take_check(struct take_op *op)
{
	struct claim_wait *w = op->w;
	uint64_t now = now_ms(), due;
	uint32_t members, need;
	struct space_rec *r;

	if (w == NULL || !space_won(sp, w->id, w->epoch, now) ||
	    (pd->conf.take_mode != TAKE_QUORUM && w->nacks > 0)) {
		/* Lease mode: a refusal means a claim here beat ours. */
		take_lost(op, now);
		return;
	}
	if (w->left_ms == 0) {
		if (!w->sent) {
			/* Queued for the turn's end: take_turn_sent wakes us. */
			if (now >= w->expiry_ms)
				take_lost(op, now);
			return;
		}
		if (!link_mark_left(w->marks, w->nmarks)) {
			if (now >= w->expiry_ms) {
				take_lost(op, now);
				return;
			}
			take_schedule(op, 1);
			return;
		}
		w->left_ms = now;
	}
	if (now < w->left_ms + pd->conf.settle_ms) {
		take_schedule(op, w->left_ms + pd->conf.settle_ms - now);
		return;
	}
	if (pd->conf.take_mode != TAKE_QUORUM && !wait_answered_all(w, now)) {
		if (now >= w->expiry_ms) {
			take_lost(op, now);
			return;
		}
		/* Settled but not answered by all: what the rule guards. */
		if (!op->untrusted) {
			pd_count(takes_untrusted);
			trace_add("claim", "untrusted %02x%02x%02x%02x epoch "
			    "%llu: %zu answers", op->id[0], op->id[1],
			    op->id[2], op->id[3],
			    (unsigned long long)op->epoch, w->nvoters);
		}
		op->untrusted = true;
		/* An answer calls take_check; a member going quiet, this. */
		due = w->left_ms + pd->conf.settle_ms + pd->conf.answer_wait_ms;
		take_schedule(op, due > now && due - now < pd->conf.tick_ms ?
		    due - now : pd->conf.tick_ms);
		return;
	}
	if (pd->conf.take_mode == TAKE_QUORUM) {
		members = quorum_members();
		need = members / 2 + 1;
		if (w->acks < need) {
			if (w->nacks > members - need) {	/* hopeless */
				take_lost(op, now);
				return;
			}
			if (now >= op->deadline_ms) {
				pd_count(takes_no_quorum);
				op_done(op, NULL);	/* the claim waits on */
				return;
			}
			/* An answer calls take_check; this bounds the wait. */
			due = op->deadline_ms - now;
			take_schedule(op, due < pd->conf.settle_ms ? due :
			    pd->conf.settle_ms);
			return;
		}
	}
	if ((r = space_get(sp, w->id)) == NULL) {
		take_lost(op, now);
		return;
	}
	pd_count(takes_won);
	take_record_win(r, w->epoch);
	if (pd->conf.take_mode != TAKE_QUORUM) {
		/* Won here: refuse every other holder while our claim holds. */
		struct crdt_claim self = { .expiry_ms = w->expiry_ms };

		memcpy(self.holder, pd->ident.id, IDENTITY_ID_LEN);
		(void)promise_make(w->id, &self, now);
	}
	trace_add("claim", "won take of %02x%02x%02x%02x epoch %llu",
	    op->id[0], op->id[1], op->id[2], op->id[3],
	    (unsigned long long)op->epoch);
	wait_free(w);
	op_done(op, r);
}

static void
wait_attach(struct take_op *op, struct claim_wait *w)
{
	op->w = w;
	w->op = op;
	memcpy(op->id, w->id, ENTRY_ID_LEN);
	op->epoch = w->epoch;
	op->claimed = true;
	op->untrusted = false;
}

/* A pending quorum claim still in the running, for a new take on t. */
static struct claim_wait *
wait_adoptable(const struct template *t, uint64_t now)
{
	struct claim_wait *w, *next;
	struct space_rec *r;

	for (w = TAILQ_FIRST(&waits); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->op != NULL)
			continue;
		if (!space_won(sp, w->id, w->epoch, now)) {
			wait_free(w);
			continue;
		}
		if ((r = space_get(sp, w->id)) != NULL &&
		    space_rec_entry(r) != NULL &&
		    template_match(t, space_rec_entry(r)))
			return w;
	}
	return NULL;
}

/*
 * The candidate of a take: the first claimable match (FIFO), or with
 * --take-window N > 1 one of the first N, chosen by this peer's id and
 * the take's attempt, so takers on different peers that start at once
 * race for different entries rather than all for the head of the queue.
 * Safety does not depend on it (the trust rule decides every race).
 */
#define TAKE_WINDOW_MAX	1024

struct window {
	const struct space_rec	**recs;
	size_t			  n, max;
};

static bool
window_add(void *arg, const struct space_rec *r)
{
	struct window *w = arg;

	w->recs[w->n++] = r;
	return w->n < w->max;
}

static const struct space_rec *
take_candidate(const struct take_op *op, uint64_t now)
{
	static const struct space_rec *recs[TAKE_WINDOW_MAX];
	struct window w = { recs, 0, pd->conf.take_window };
	uint64_t h;

	if (w.max <= 1 || w.max > TAKE_WINDOW_MAX)
		return space_take_candidate(sp, op->t, now);
	space_read_all(sp, op->t, now, window_add, &w);
	if (w.n == 0)
		return NULL;
	memcpy(&h, pd->ident.id, sizeof(h));	/* a hash: uniform */
	return recs[(h + op->attempts) % w.n];
}

static void
take_try(struct take_op *op)
{
	uint64_t now = now_ms();
	struct claim_wait *w;
	const struct space_rec *r;
	struct crdt_claim c;
	struct hlc_stamp st;
	struct dcbor_buf b;

	if (pd->conf.take_mode == TAKE_QUORUM &&
	    (w = wait_adoptable(op->t, now)) != NULL) {
		wait_attach(op, w);
		op->attempts++;
		take_check(op);
		return;
	}
	r = take_candidate(op, now);
	if (r == NULL) {
		if (now >= op->deadline_ms) {
			op_done(op, NULL);
			return;
		}
		take_schedule(op, pd->conf.take_retry_ms);
		return;
	}
	op->attempts++;
	st = hlc_now(&pd->hlc, hlc_wall_ms());
	space_claim_make(sp, r, &st, now, pd->conf.take_lease_ms, &c);
	memcpy(c.key, pd->ident.pub, IDENTITY_PUB_LEN);
	c.mono_us = clock_mono_us();
	w = xcalloc(1, sizeof(*w));
	memcpy(w->id, space_rec_id(r), ENTRY_ID_LEN);
	dcbor_buf_init(&b);
	crdt_claim_signing_bytes(&b, &c, w->id);
	identity_sign(&pd->ident, b.data, b.len, c.sig);
	dcbor_buf_free(&b);
	w->epoch = c.epoch;
	w->made_ms = now;
	w->expiry_ms = c.expiry_ms;
	/* Our own vote, unless we vouched for another holder's claim. */
	if (pd->conf.take_mode == TAKE_QUORUM && promise_make(w->id, &c, now))
		w->acks = 1;
	TAILQ_INSERT_TAIL(&waits, w, entry);
	wait_attach(op, w);
	space_claim(sp, w->id, &c, now);
	/* It leaves at the turn's end, with the turn's others: then marked. */
	replica_spread_urgent(w->id);
}

void
take_turn_sent(void)
{
	struct claim_wait *w;
	size_t nl;

	acks_flush();
	TAILQ_FOREACH(w, &waits, entry) {
		if (w->sent)
			continue;
		nl = link_count();
		w->marks = xcalloc(nl ? nl : 1, sizeof(*w->marks));
		w->nmarks = link_mark_all(w->marks, nl);
		w->sent = true;
		/* The settle window runs from the moment the claim has left. */
		if (w->op != NULL)
			take_schedule(w->op, 0);
	}
}

/*
 * A remote claim on id was merged: a take of ours whose claim it beat
 * learns it now, not at its next check, and moves on (from the loop, not
 * from inside the merge).
 */
static void
take_beaten(const uint8_t id[ENTRY_ID_LEN], uint64_t now)
{
	struct claim_wait *w;

	TAILQ_FOREACH(w, &waits, entry)
		if (w->op != NULL && memcmp(w->id, id, ENTRY_ID_LEN) == 0 &&
		    !space_won(sp, w->id, w->epoch, now))
			take_schedule(w->op, 0);
}

static void
take_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct take_op *op = arg;

	(void)fd;
	(void)ev;
	if (op->claimed)
		take_check(op);
	else
		take_try(op);
}

void
take_start(struct template *t, uint32_t timeout_ms, take_done_cb done,
    void *arg)
{
	struct take_op *op = xcalloc(1, sizeof(*op));

	op->done = done;
	op->arg = arg;
	op->t = t;
	op->deadline_ms = now_ms() + timeout_ms;
	op->ev = evtimer_new(pd->base, take_cb, op);
	TAILQ_INSERT_TAIL(&takes, op, entry);
	take_try(op);
}

void
take_cancel(void)
{
	struct take_op *op;
	struct claim_wait *w;

	while ((op = TAILQ_FIRST(&takes)) != NULL)
		op_done(op, NULL);
	while ((w = TAILQ_FIRST(&waits)) != NULL)
		wait_free(w);
}

/*
 * Count voter's answer (ok or a refusal) to our claim (id, epoch), once
 * per voter, and let its take decide: a refusal can end it at once.
 */
static void
ack_count(const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
    const uint8_t voter[IDENTITY_ID_LEN], bool ok)
{
	struct claim_wait *w;

	pd_count(claim_acks_received);
	TAILQ_FOREACH(w, &waits, entry)
		if (w->epoch == epoch && memcmp(w->id, id, ENTRY_ID_LEN) == 0)
			break;
	if (w == NULL)
		return;			/* decided already, or never ours */
	for (size_t i = 0; i < w->nvoters; i++)
		if (memcmp(w->voters[i], voter, IDENTITY_ID_LEN) == 0)
			return;		/* each member answers once */
	if (w->nvoters == w->votersz) {
		/* Room for every member at once: one allocation per claim. */
		w->votersz = w->votersz ? w->votersz * 2 : member_count() +
		    pd->conf.fleet_size + 1;
		w->voters = xreallocarray(w->voters, w->votersz,
		    sizeof(*w->voters));
	}
	memcpy(w->voters[w->nvoters++], voter, IDENTITY_ID_LEN);
	if (ok)
		w->acks++;
	else
		w->nacks++;
	if (w->op != NULL && (!ok || (w->left_ms != 0 &&
	    now_ms() >= w->left_ms + pd->conf.settle_ms)))
		take_check(w->op);
}

/* One answer as received: a CLAIM_ACK body, or a CLAIM_ACK_RELAY one. */
struct answer {
	bool		relay;
	bool		ok;
	uint8_t		id[ENTRY_ID_LEN];
	uint64_t	epoch;
	uint64_t	hops;				/* relay only */
	uint8_t		key[IDENTITY_PUB_LEN];		/* relay only */
	uint8_t		sig[IDENTITY_SIG_LEN];		/* relay only */
	uint8_t		holder[IDENTITY_ID_LEN];	/* relay only */
};

/* Parse one answer body of the given kind into *a. 0, or -1 malformed. */
static int
answer_parse(struct answer *a, bool relay, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n;

	a->relay = relay;
	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != (relay ? 7 : 3) ||
	    dcbor_get_key(&rd, "ok") == -1 || dcbor_get_bool(&rd, &a->ok) == -1)
		return -1;
	if (relay && (dcbor_get_key(&rd, "key") == -1 ||
	    dcbor_get_fixed(&rd, a->key, sizeof(a->key)) == -1 ||
	    dcbor_get_key(&rd, "sig") == -1 ||
	    dcbor_get_fixed(&rd, a->sig, sizeof(a->sig)) == -1 ||
	    dcbor_get_key(&rd, "hops") == -1 ||
	    dcbor_get_uint(&rd, &a->hops) == -1))
		return -1;
	if (dcbor_get_key(&rd, "entry") == -1 ||
	    dcbor_get_fixed(&rd, a->id, sizeof(a->id)) == -1 ||
	    dcbor_get_key(&rd, "epoch") == -1 ||
	    dcbor_get_uint(&rd, &a->epoch) == -1)
		return -1;
	if (relay && (dcbor_get_key(&rd, "holder") == -1 ||
	    dcbor_get_fixed(&rd, a->holder, sizeof(a->holder)) == -1))
		return -1;
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

/*
 * Act on a parsed answer from neighbour from: a direct one counts for
 * from; a relayed one counts for its voter if it is to us and signed, else
 * goes one hop on toward its holder.
 */
static void
answer_take(struct member *from, const struct answer *a)
{
	struct dcbor_buf b;
	struct member *next;
	uint8_t voter[IDENTITY_ID_LEN];
	int rc;

	if (!a->relay) {
		ack_count(a->id, a->epoch, from->id, a->ok);
		return;
	}
	dcbor_buf_init(&b);
	if (memcmp(a->holder, pd->ident.id, IDENTITY_ID_LEN) != 0) {
		/* Not ours: one hop on toward the holder, if any is left. */
		if (a->hops <= 1 || (next = route_next(a->holder, a->id,
		    a->epoch, from)) == NULL)
			pd_count(claim_acks_unroutable);
		else {
			relay_put(&b, a->ok, a->key, a->sig, a->hops - 1, a->id,
			    a->epoch, a->holder);
			ack_queue(next, true, false, a->ok, &b);
		}
		dcbor_buf_free(&b);
		return;
	}
	/* Ours: the vote counts only if its voter signed it. */
	identity_id_of(a->key, voter);
	vote_signing_bytes(&b, a->ok, a->id, a->epoch, a->holder);
	rc = identity_verify(a->key, b.data, b.len, a->sig);
	dcbor_buf_free(&b);
	if (rc != 0 || memcmp(voter, pd->ident.id, IDENTITY_ID_LEN) == 0) {
		pd_count(claim_acks_forged);
		return;
	}
	ack_count(a->id, a->epoch, voter, a->ok);
}

int
take_recv_ack(struct member *from, const uint8_t *body, size_t len)
{
	struct answer a;

	if (answer_parse(&a, false, body, len) == -1)
		return -1;
	answer_take(from, &a);
	return 0;
}

int
take_recv_relay(struct member *from, const uint8_t *body, size_t len)
{
	struct answer a;

	if (answer_parse(&a, true, body, len) == -1)
		return -1;
	answer_take(from, &a);
	return 0;
}

/*
 * A CLAIM_ACKS list: an array of 2 to TAKE_ACKS_MAX answer bodies, each a
 * CLAIM_ACK map (3 keys) or a CLAIM_ACK_RELAY map (7 keys).  The whole
 * list is parsed before any answer is acted on, so a malformed list
 * changes nothing.
 */
int
take_recv_acks(struct member *from, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	struct answer *as;
	const uint8_t *p;
	uint64_t n;
	size_t plen, i;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_array(&rd, &n) == -1 || n < 2 || n > TAKE_ACKS_MAX ||
	    n > len)
		return -1;
	as = xcalloc((size_t)n, sizeof(*as));
	for (i = 0; i < n; i++)
		if (dcbor_get_raw(&rd, &p, &plen) == -1 || plen == 0 ||
		    (p[0] != 0xa3 && p[0] != 0xa7) ||
		    answer_parse(&as[i], p[0] == 0xa7, p, plen) == -1)
			break;
	if (i < n || dcbor_left(&rd) != 0) {
		free(as);
		return -1;
	}
	for (i = 0; i < n; i++)
		answer_take(from, &as[i]);
	free(as);
	return 0;
}

json_t *
take_won_json(size_t since)
{
	json_t *arr = json_array();
	char id[2 * ENTRY_ID_LEN + 1];

	for (size_t i = since; i < nwon; i++) {
		hex_encode(won[i].id, ENTRY_ID_LEN, id);
		json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:I}",
		    "id", id, "epoch", (json_int_t)won[i].epoch,
		    "mono_us", (json_int_t)won[i].mono_us,
		    "wall_ms", (json_int_t)won[i].wall_ms));
	}
	return json_pack("{s:I, s:o}", "total", (json_int_t)nwon, "takes", arr);
}

size_t
take_in_flight(void)
{
	struct take_op *op;
	size_t n = 0;

	TAILQ_FOREACH(op, &takes, entry)
		n++;
	return n;
}

size_t
take_won_count(void)
{
	return nwon;
}

void
take_init(struct space *space)
{
	sp = space;
	dcbor_buf_init(&acks_buf);
	dcbor_buf_init(&acks_frame);
}

void
take_free(void)
{
	take_cancel();
	promises_free();
	members_hw = 0;
	free(routes);
	routes = NULL;
	nroutes = routesz = 0;
	free(won);
	won = NULL;
	nwon = wonsz = 0;
	free(acks_out);
	acks_out = NULL;
	nacks_out = acks_outsz = 0;
	dcbor_buf_free(&acks_buf);
	dcbor_buf_free(&acks_frame);
	sp = NULL;
}

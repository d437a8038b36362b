/*
 * vote.c: the answers this peer gives to other peers' claims (see vote.h,
 * docs/protocol.md section 6): its promises (quorum votes, and in lease
 * mode the refusals of a rival), the CLAIM_ACK, CLAIM_ACK_RELAY and
 * CLAIM_ACKS bodies, the relay routes toward claim holders that are not
 * direct neighbours, and the per-turn batch the answers leave in.
 *
 * take.c calls this file: it hands it every verified remote claim to
 * answer (vote_claim_answer), flushes the turn's answers
 * (vote_acks_flush) and asks for its own vote (vote_promise_make).  This
 * file never calls take.c: an answer to one of this peer's own claims
 * goes back through the vote_count_cb that take.c gave vote_init.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "link.h"
#include "frame.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "vote.h"
#include "xmalloc.h"

static vote_count_cb	 count_cb;	/* answers to our own claims */

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

/*
 * Vouch for claim c on id now: true (and the promise made or renewed)
 * unless an unexpired promise to another holder stands.
 */
bool
vote_promise_make(const uint8_t id[ENTRY_ID_LEN], const struct crdt_claim *c,
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

/*
 * The claim a vote answers, the last three keys of both maps below in
 * canonical order: "entry", "epoch", "holder".
 */
static void
vote_put_claim(struct dcbor_buf *b, const uint8_t id[ENTRY_ID_LEN],
    uint64_t epoch, const uint8_t holder[IDENTITY_ID_LEN])
{
	dcbor_put_cstr(b, "entry");
	dcbor_put_bytes(b, id, ENTRY_ID_LEN);
	dcbor_put_cstr(b, "epoch");
	dcbor_put_uint(b, epoch);
	dcbor_put_cstr(b, "holder");
	dcbor_put_bytes(b, holder, IDENTITY_ID_LEN);
}

/* What a relayed answer's voter signs: {ok, entry, epoch, holder}. */
void
vote_signing_bytes(struct dcbor_buf *b, bool ok,
    const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
    const uint8_t holder[IDENTITY_ID_LEN])
{
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "ok");
	dcbor_put_bool(b, ok);
	vote_put_claim(b, id, epoch, holder);
}

/* A CLAIM_ACK body: { "ok", "entry", "epoch" } (canonical order). */
void
vote_ack_put(struct dcbor_buf *b, bool ok, const uint8_t id[ENTRY_ID_LEN],
    uint64_t epoch)
{
	dcbor_put_map(b, 3);
	dcbor_put_cstr(b, "ok");
	dcbor_put_bool(b, ok);
	dcbor_put_cstr(b, "entry");
	dcbor_put_bytes(b, id, ENTRY_ID_LEN);
	dcbor_put_cstr(b, "epoch");
	dcbor_put_uint(b, epoch);
}

/*
 * A CLAIM_ACK_RELAY body: { "ok", "key", "sig", "hops", "entry", "epoch",
 * "holder" } (canonical order); sig is the voter's (key's) over
 * vote_signing_bytes, so a relay cannot forge or flip a vote.
 */
void
vote_relay_put(struct dcbor_buf *b, bool ok,
    const uint8_t key[IDENTITY_PUB_LEN],
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
	vote_put_claim(b, id, epoch, holder);
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
 * end (vote_acks_flush from take_turn_sent, after the turn's claims), all of one neighbour's in
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
		vote_acks_flush();		/* a list stays well under the cap */
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
void
vote_acks_flush(void)
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
		vote_ack_put(&b, ok, id, c->epoch);
		ack_queue(m, false, true, ok, &b);
	} else if ((next = from != NULL ? linked(from->id, NULL) : NULL) ==
	    NULL && (next = route_next(c->holder, id, c->epoch, NULL)) == NULL)
		pd_count(claim_acks_unroutable);
	else {
		if (!rc->have_sig || rc->signed_ok != ok) {
			vote_signing_bytes(&b, ok, id, c->epoch, c->holder);
			identity_sign(&pd->ident, b.data, b.len, rc->sig);
			pd_count(signs_vote);
			rc->have_sig = true;
			rc->signed_ok = ok;
			dcbor_buf_reset(&b);
		}
		vote_relay_put(&b, ok, pd->ident.pub, rc->sig, pd->conf.hops,
		    id, c->epoch, c->holder);
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
void
vote_claim_answer(const struct space_rec *r, const struct crdt_claim *c,
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
		ok = !space_rec_state(r)->completed && vote_promise_make(id, c, now);
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
		count_cb(a->id, a->epoch, from->id, a->ok);
		return;
	}
	dcbor_buf_init(&b);
	if (memcmp(a->holder, pd->ident.id, IDENTITY_ID_LEN) != 0) {
		/* Not ours: one hop on toward the holder, if any is left. */
		if (a->hops <= 1 || (next = route_next(a->holder, a->id,
		    a->epoch, from)) == NULL)
			pd_count(claim_acks_unroutable);
		else {
			vote_relay_put(&b, a->ok, a->key, a->sig, a->hops - 1,
			    a->id, a->epoch, a->holder);
			ack_queue(next, true, false, a->ok, &b);
		}
		dcbor_buf_free(&b);
		return;
	}
	/* Ours: the vote counts only if its voter signed it. */
	identity_id_of(a->key, voter);
	vote_signing_bytes(&b, a->ok, a->id, a->epoch, a->holder);
	rc = identity_verify(a->key, b.data, b.len, a->sig);
	pd_count(verifies_vote);
	dcbor_buf_free(&b);
	if (rc != 0 || memcmp(voter, pd->ident.id, IDENTITY_ID_LEN) == 0) {
		pd_count(claim_acks_forged);
		return;
	}
	count_cb(a->id, a->epoch, voter, a->ok);
}

int
vote_recv_ack(struct member *from, const uint8_t *body, size_t len)
{
	struct answer a;

	if (answer_parse(&a, false, body, len) == -1)
		return -1;
	answer_take(from, &a);
	return 0;
}

int
vote_recv_relay(struct member *from, const uint8_t *body, size_t len)
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
vote_recv_acks(struct member *from, const uint8_t *body, size_t len)
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

void
vote_init(vote_count_cb cb)
{
	count_cb = cb;
	dcbor_buf_init(&acks_buf);
	dcbor_buf_init(&acks_frame);
}

void
vote_free(void)
{
	promises_free();
	free(routes);
	routes = NULL;
	nroutes = routesz = 0;
	free(acks_out);
	acks_out = NULL;
	nacks_out = acks_outsz = 0;
	dcbor_buf_free(&acks_buf);
	dcbor_buf_free(&acks_frame);
	count_cb = NULL;
}

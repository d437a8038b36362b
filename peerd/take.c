/*
 * take.c: the take verb of this peer (see take.h): the lease race, the
 * trust rule "left, answered, settled", quorum wins and take waits
 * (docs/protocol.md section 6).  The answers this peer gives to others'
 * claims (promises, CLAIM_ACK bodies, relay routes, the turn's answer
 * batch) are vote.c's: this file calls it, and it hands answers to our own
 * claims back through ack_count, the vote_count_cb given to vote_init.
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

#include "chunklog.h"
#include "clock.h"
#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "hex.h"
#include "link.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "take.h"
#include "template.h"
#include "trace.h"
#include "vote.h"
#include "xmalloc.h"

struct claim_wait;

struct take_op {
	TAILQ_ENTRY(take_op)	 entry;
	take_done_cb		 done;		/* called once, then freed */
	void			*arg;
	struct template		*t;
	uint64_t		 deadline_ms;
	bool			 once;		/* timeout 0 */
	bool			 claimed;	/* w holds our claim */
	bool			 untrusted;	/* counted once a claim */
	struct claim_wait	*w;
	uint8_t			 id[ENTRY_ID_LEN];
	uint64_t		 epoch;
	struct event		*ev;
	uint32_t		 attempts;
};

/*
 * The log of won takes: 40 bytes a win, in chunks of TAKE_LOG_CHUNK wins
 * (chunklog.h), so it grows without copies.  A chunk goes once the space
 * has collected the tombstone of every entry it names (checked as each new
 * chunk starts: one lookup a win): a reader who asks within the tombstone
 * horizon (lease end + min(2 x the largest lease, 24 h)) sees every win.
 */
struct take_won {
	uint8_t		id[ENTRY_ID_LEN];
	uint64_t	epoch;
	uint64_t	mono_us;
	uint64_t	wall_ms;
};

static struct space		*sp;
static TAILQ_HEAD(, take_op)	 takes = TAILQ_HEAD_INITIALIZER(takes);
static struct chunklog		 won = { .recsz = sizeof(struct take_won),
				    .per = TAKE_LOG_CHUNK };

static void	take_try(struct take_op *);
static void	take_beaten(const uint8_t id[ENTRY_ID_LEN], uint64_t now);
static void	take_align(uint64_t mono_us);

static uint64_t
now_ms(void)
{
	return hlc_wall_ms();
}

static uint32_t		 members_hw;	/* most proven members ever seen */

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

void
take_remote_claim(const struct space_rec *r, const struct crdt_claim *c,
    const struct member *from, bool fresh, uint64_t now)
{
	vote_claim_answer(r, c, from, now);
	if (fresh) {
		take_beaten(space_rec_id(r), now);
		take_align(c->mono_us);
	}
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
	uint64_t		 due_us;	/* settle end, monotonic, on the grid */
	uint64_t		 own_us;	/* due_us before any take_align */
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
	struct take_end end = { op->attempts, NULL, 0 };

	op->done(op->arg, r, &end);
	op_free(op);
}

static void
take_schedule(struct take_op *op, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000),
	    .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	event_add(op->ev, &tv);
}

/* Wake op in us microseconds, counted from now, not the turn's start. */
static void
take_schedule_us(struct take_op *op, uint64_t us)
{
	struct timeval tv = { .tv_sec = (time_t)(us / 1000000),
	    .tv_usec = (suseconds_t)(us % 1000000) };

	/* The loop's cached time is the poll's: it would wake us early. */
	event_base_update_cache_time(pd->base);
	event_add(op->ev, &tv);
}

/*
 * The end of a settle window that starts at left_us (monotonic): settle_ms
 * on, rounded up to the next multiple of --settle-grid-ms.  Every process
 * on a host reads the same monotonic clock, so the takers whose claims
 * left within one grid step of each other wake at the same instant, make
 * their next claims together and read each other's rumors and answers in
 * the wake-ups they already have, rather than each waking the others
 * apart (docs/protocol.md 6, "The settle grid").  A window only grows:
 * the rule's settle_ms is its least length.
 */
static uint64_t
settle_due_us(uint64_t left_us)
{
	uint64_t due = left_us + (uint64_t)pd->conf.settle_ms * 1000;
	uint64_t g = (uint64_t)pd->conf.settle_grid_ms * 1000;

	return g > 0 ? (due + g - 1) / g * g : due;
}

/* A timer may fire this much before its instant (the poll's ms rounding). */
#define GRID_SLACK_US	250

/* Drop the log's oldest chunks while the space holds none of their ids. */
static void
won_collect(void)
{
	while (won.nchunk > 1) {
		for (size_t i = 0; i < TAKE_LOG_CHUNK; i++) {
			const struct take_won *tw = chunklog_at(&won,
			    chunklog_first(&won) + i);

			if (space_get(sp, tw->id) != NULL)
				return;
		}
		(void)chunklog_drop_first(&won);
	}
}

static void
take_record_win(const struct space_rec *r, uint64_t epoch)
{
	const struct entry *e = space_rec_entry(r);
	uint64_t now = clock_mono_us();
	struct take_won *tw;

	if (chunklog_count(&won) % TAKE_LOG_CHUNK == 0)
		won_collect();
	tw = chunklog_append(&won);
	memcpy(tw->id, e->id, ENTRY_ID_LEN);
	tw->epoch = epoch;
	tw->mono_us = now;
	tw->wall_ms = hlc_wall_ms();
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
 * The deadline cut the wait for answers to w: end op with no entry, naming
 * the live members that never answered w (takes.unanswered if any).
 */
static void
op_unanswered(struct take_op *op, const struct claim_wait *w)
{
	uint8_t (*silent)[IDENTITY_ID_LEN];
	struct take_end end = { op->attempts, NULL, 0 };

	silent = xcalloc(member_count() + 1, sizeof(*silent));
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link != NULL && m->state == MEMBER_ALIVE &&
		    !wait_answered_by(w, m))
			memcpy(silent[end.nsilent++], m->id, IDENTITY_ID_LEN);
	}
	if (end.nsilent > 0)
		pd_count(takes_unanswered);
	trace_add("claim", "take of %02x%02x%02x%02x epoch %llu ended at its "
	    "deadline: %zu answers, %zu live members silent", op->id[0],
	    op->id[1], op->id[2], op->id[3], (unsigned long long)op->epoch,
	    w->nvoters, end.nsilent);
	end.silent = (const uint8_t (*)[IDENTITY_ID_LEN])silent;
	op->done(op->arg, NULL, &end);
	free(silent);
	op_free(op);
}

/*
 * When a take stops waiting for answers to its claim: its deadline, or
 * with timeout 0 (one claim) --answer-wait-ms past the settle window.
 */
static uint64_t
answer_end_ms(const struct take_op *op, const struct claim_wait *w)
{
	return op->once ? w->left_ms + pd->conf.settle_ms +
	    pd->conf.answer_wait_ms : op->deadline_ms;
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
	uint64_t now = now_ms(), due, us, end;
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
		w->due_us = w->own_us = settle_due_us(clock_mono_us());
	}
	us = clock_mono_us();
	if (now < w->left_ms + pd->conf.settle_ms ||
	    us + GRID_SLACK_US < w->due_us) {
		/* The later of the rule's window and the grid's instant. */
		due = now < w->left_ms + pd->conf.settle_ms ?
		    (w->left_ms + pd->conf.settle_ms - now) * 1000 : 0;
		if (w->due_us > us && w->due_us - us > due)
			due = w->due_us - us;
		take_schedule_us(op, due);
		return;
	}
	if (pd->conf.take_mode != TAKE_QUORUM && !wait_answered_all(w, now)) {
		if (now >= w->expiry_ms) {
			take_lost(op, now);
			return;
		}
		/* A silent member holds the take to its deadline only. */
		end = answer_end_ms(op, w);
		if (now >= end) {
			op_unanswered(op, w);
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
		if (due <= now || end < due)
			due = end;
		take_schedule(op, due - now < pd->conf.tick_ms ?
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
				/* The claim waits on. */
				op_unanswered(op, w);
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
		(void)vote_promise_make(w->id, &self, now);
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
 * --take-window N > 1 one of the first N: the first whose home is this
 * peer, else the one at this peer's offset (its id, plus the take's
 * attempt).  An entry's home is its id's first 8 bytes modulo n, the
 * number of live members known here with this peer, and this peer's
 * place among them is its rank by id, so peers that know the same
 * membership have distinct ranks and race for different entries however
 * their windows shift as claims arrive: a taker loses a race only at the
 * tail, when its window holds no entry of its own.  Safety does not depend
 * on it (the trust rule decides every race).
 */
#define TAKE_WINDOW_MAX	1024

struct window {
	const struct space_rec	**recs;
	size_t			  n, max;
	uint64_t		  nmembers, rank;
	const struct space_rec	 *home;		/* the first of ours */
};

static uint64_t
entry_home(const uint8_t id[ENTRY_ID_LEN], uint64_t n)
{
	uint64_t h = 0;

	for (int i = 7; i >= 0; i--)	/* little-endian, on any host */
		h = h << 8 | id[i];
	return h % n;			/* ids are hash output: uniform */
}

static bool
window_add(void *arg, const struct space_rec *r)
{
	struct window *w = arg;

	if (entry_home(space_rec_id(r), w->nmembers) == w->rank) {
		w->home = r;
		return false;
	}
	w->recs[w->n++] = r;
	return w->n < w->max;
}

/* This peer's rank by id among the live members it knows, and their count. */
static void
take_rank(uint64_t *rank, uint64_t *n)
{
	*rank = 0;
	*n = 1;
	for (size_t i = 0; i < member_count(); i++) {
		const struct member *m = member_at(i);

		if (!m->have_pub || m->state != MEMBER_ALIVE)
			continue;
		(*n)++;
		if (memcmp(m->id, pd->ident.id, IDENTITY_ID_LEN) < 0)
			(*rank)++;
	}
}

static const struct space_rec *
take_candidate(const struct take_op *op, uint64_t now)
{
	static const struct space_rec *recs[TAKE_WINDOW_MAX];
	struct window w = { recs, 0, pd->conf.take_window, 1, 0, NULL };
	uint64_t h;

	if (w.max <= 1 || w.max > TAKE_WINDOW_MAX)
		return space_take_candidate(sp, op->t, now);
	take_rank(&w.rank, &w.nmembers);
	space_read_all(sp, op->t, now, window_add, &w);
	if (w.home != NULL)
		return w.home;
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
	pd_count(signs_claim);
	dcbor_buf_free(&b);
	w->epoch = c.epoch;
	w->made_ms = now;
	w->expiry_ms = c.expiry_ms;
	/* Our own vote, unless we vouched for another holder's claim. */
	if (pd->conf.take_mode == TAKE_QUORUM && vote_promise_make(w->id, &c, now))
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
	uint64_t now = now_ms(), us;
	size_t nl;

	vote_acks_flush();
	TAILQ_FOREACH(w, &waits, entry) {
		if (w->sent)
			continue;
		nl = link_count();
		w->marks = xcalloc(nl ? nl : 1, sizeof(*w->marks));
		w->nmarks = link_mark_all(w->marks, nl);
		w->sent = true;
		if (w->op == NULL)
			continue;
		/*
		 * The settle window runs from the moment the claim has left.
		 * A frame for an empty output buffer went to the kernel as it
		 * was sent, so the claim has usually left by now: its window
		 * starts here, and its one timer is the settle's (a take of the
		 * same turn gets the same deadline, so a group of claims wakes
		 * once).  Else take_check polls the marks.
		 */
		if (link_mark_left(w->marks, w->nmarks)) {
			us = clock_mono_us();
			w->left_ms = now;
			w->due_us = w->own_us = settle_due_us(us);
			take_schedule_us(w->op, w->due_us - us);
		} else
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

/*
 * A fresh remote claim made at mono_us (its holder's monotonic stamp) ends
 * its settle window on the grid instant settle_due_us(mono_us): a claim of
 * ours still settling whose window ends before that instant, by at most
 * TAKE_ALIGN_STEPS grid steps past its own end, waits for it, so the
 * takers of a host that are nearly in phase fall into one phase and wake
 * together.  Only a wait grows, each claim's by at most those steps,
 * whatever the stamps say (mono_us is not signed), and a stamp not of this
 * host's last settle window is ignored.  The bound is small on purpose:
 * a fleet whose turn after a wake-up takes longer than it (16 peers on two
 * cores: tens of ms) would otherwise make every taker wait for the last
 * one, every cycle (BENCHMARKS.md, ninth session: 0.69-0.74 of the settle
 * bound with half a window).  With no grid this is off.
 */
#define TAKE_ALIGN_STEPS	2

static void
take_align(uint64_t mono_us)
{
	struct claim_wait *w;
	uint64_t us, due, cap = (uint64_t)pd->conf.settle_grid_ms * 1000 *
	    TAKE_ALIGN_STEPS;

	if (pd->conf.settle_grid_ms == 0 || mono_us == 0)
		return;
	us = clock_mono_us();
	if (mono_us > us || us - mono_us > (uint64_t)pd->conf.settle_ms * 1000)
		return;
	due = settle_due_us(mono_us);
	TAILQ_FOREACH(w, &waits, entry) {
		if (w->op == NULL || w->left_ms == 0 || w->due_us <= us ||
		    due <= w->due_us || due > w->own_us + cap)
			continue;
		w->due_us = due;
		pd_count(takes_aligned);
		take_schedule_us(w->op, due - us);
	}
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
	op->once = timeout_ms == 0;
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
 * per voter, and let its take decide: a refusal can end it at once
 * (vote.c's vote_count_cb).
 */
static void
ack_count(const uint8_t id[ENTRY_ID_LEN], uint64_t epoch,
    const uint8_t voter[IDENTITY_ID_LEN], bool ok)
{
	struct claim_wait *w;

	TAILQ_FOREACH(w, &waits, entry)
		if (w->epoch == epoch && memcmp(w->id, id, ENTRY_ID_LEN) == 0)
			break;
	if (w == NULL) {
		/* Decided already, or never ours. */
		pd_count(claim_acks_unmatched);
		return;
	}
	pd_count(claim_acks_received);
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

json_t *
take_won_json(size_t since)
{
	json_t *arr = json_array();
	char id[2 * ENTRY_ID_LEN + 1];
	uint64_t i = since > chunklog_first(&won) ? since :
	    chunklog_first(&won);

	for (; i < chunklog_count(&won); i++) {
		const struct take_won *tw = chunklog_at(&won, i);

		hex_encode(tw->id, ENTRY_ID_LEN, id);
		json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:I}",
		    "id", id, "epoch", (json_int_t)tw->epoch,
		    "mono_us", (json_int_t)tw->mono_us,
		    "wall_ms", (json_int_t)tw->wall_ms));
	}
	return json_pack("{s:I, s:o}", "total",
	    (json_int_t)chunklog_count(&won), "takes", arr);
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
	return (size_t)chunklog_count(&won);
}

void
take_init(struct space *space)
{
	sp = space;
	vote_init(ack_count);
}

void
take_free(void)
{
	take_cancel();
	vote_free();
	members_hw = 0;
	chunklog_free(&won);
	sp = NULL;
}

/*
 * replica.c: the replicated space of this peer (see replica.h).
 *
 * The lease-race take (docs/protocol.md section 6): pick the first visible candidate
 * with no active claim, make a claim (epoch + 1, fresh stamp, bid 0,
 * expiry now + take lease), sign it, merge it locally and spread it; after
 * the settle window the taker has won only if the merged winner is still
 * its own claim and unexpired; otherwise it retries every take_retry_ms
 * until the request's deadline.  Partitions can make two takers both win:
 * every win is remembered (replica_takes_json) so a harness counts them.
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
#include "jcbor.h"
#include "link.h"
#include "frame.h"
#include "log.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "template.h"
#include "trace.h"
#include "xmalloc.h"

#define DEFAULT_SPACE	"default"
#define DEFAULT_LEASE_MS (3600u * 1000u)

struct claim_wait;

struct take_op {
	TAILQ_ENTRY(take_op)	 entry;
	replica_take_cb		 done;		/* called once, then freed */
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
static struct dcbor_buf		 recbuf;
static size_t			 put_rot;	/* replica_put_records */
static replica_event_cb		 observer;
static void			*observer_arg;

static void	take_try(struct take_op *);

static uint64_t
now_ms(void)
{
	return hlc_wall_ms();
}

/* ---- events: latency, and the observer ------------------------------- */

static void
replica_event(void *arg, enum space_event ev, const struct space_rec *r)
{
	const struct entry *e = space_rec_entry(r);

	(void)arg;
	if (ev == SPACE_EV_WRITTEN && e != NULL &&
	    memcmp(e->issuer, pd->ident.pub, IDENTITY_PUB_LEN) != 0) {
		uint64_t now = clock_mono_us();

		if (e->mono_us != 0 && now >= e->mono_us)
			pd_hist(write_to_visible, now - e->mono_us);
	}
	if (ev == SPACE_EV_EXPIRED)
		pd_count(entries_expired);
	if (observer != NULL)
		observer(observer_arg, ev, r);
}

void
replica_on_event(replica_event_cb cb, void *arg)
{
	observer = cb;
	observer_arg = arg;
}

/* ---- JSON forms -------------------------------------------------------- */

json_t *
replica_entry_json(const void *recp)
{
	const struct space_rec *r = recp;
	const struct entry *e = space_rec_entry(r);
	const struct crdt_claim *c = space_rec_claim(r);
	uint8_t issuer_id[IDENTITY_ID_LEN];
	char id[2 * ENTRY_ID_LEN + 1], issuer[IDENTITY_PEERID_MAX];
	char stamp[HLC_TEXT_MAX];
	struct dcbor_rd rd;
	json_t *fields, *j, *tags;

	if (e == NULL) {	/* completed and compacted: only its CRDT left */
		hex_encode(space_rec_id(r), ENTRY_ID_LEN, id);
		return json_pack("{s:s, s:b, s:b}", "id", id, "completed",
		    space_rec_state(r)->completed, "compact", 1);
	}
	hex_encode(e->id, ENTRY_ID_LEN, id);
	identity_id_of(e->issuer, issuer_id);
	identity_peer_id_of(issuer_id, issuer);
	hlc_format(&e->stamp, stamp, sizeof(stamp));
	dcbor_rd_init(&rd, e->fields, e->fields_len);
	if ((fields = jcbor_to_json(&rd)) == NULL)
		fields = json_null();
	j = json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:I, s:I}",
	    "id", id, "space", e->space, "type", e->type, "fields", fields,
	    "issuer", issuer, "stamp", stamp,
	    "lease_ms", (json_int_t)e->lease_ms,
	    "mono_us", (json_int_t)e->mono_us);
	if (e->ntags > 0) {
		tags = json_array();
		for (size_t i = 0; i < e->ntags; i++) {
			const char *s;
			size_t n;

			if (entry_tag(e, i, &s, &n) == 0)
				json_array_append_new(tags,
				    json_stringn(s, n));
		}
		json_object_set_new(j, "tags", tags);
	}
	if (c != NULL && c->epoch != 0) {
		char holder[IDENTITY_PEERID_MAX];

		identity_peer_id_of(c->holder, holder);
		json_object_set_new(j, "claim", json_pack("{s:I, s:s, s:I}",
		    "epoch", (json_int_t)c->epoch, "holder", holder,
		    "expiry_ms", (json_int_t)c->expiry_ms));
	}
	json_object_set_new(j, "completed",
	    json_boolean(space_rec_state(r)->completed));
	return j;
}

/* ---- spreading --------------------------------------------------------- */

static void
spread(const uint8_t id[ENTRY_ID_LEN])
{
	struct space_rec *r = space_get(sp, id);

	if (r == NULL)
		return;
	dcbor_buf_reset(&recbuf);
	space_rec_encode(&recbuf, r);
	gossip_queue(recbuf.data, recbuf.len);
}

/* Claims and completions: on the urgent lane, not in the next batch. */
static void
spread_urgent(const uint8_t id[ENTRY_ID_LEN])
{
	struct space_rec *r = space_get(sp, id);

	if (r == NULL)
		return;
	dcbor_buf_reset(&recbuf);
	space_rec_encode(&recbuf, r);
	gossip_send_urgent(recbuf.data, recbuf.len);
}

static void	claim_answer(const struct space_rec *, const struct crdt_claim *,
		    uint64_t);
static void	take_beaten(const uint8_t id[ENTRY_ID_LEN], uint64_t now);

/* ---- remote records ---------------------------------------------------- */

/*
 * A claim is believed only when its signature verifies under the key it
 * carries and that key is the holder's (holder = SHA-256(key)): a claim
 * that cannot be verified never reaches the space, so it cannot hide an
 * entry from read, take or the history.
 */
static bool
claim_verify(const struct crdt_claim *c, const uint8_t id[ENTRY_ID_LEN])
{
	uint8_t kid[IDENTITY_ID_LEN];
	struct dcbor_buf b;
	int rc;

	identity_id_of(c->key, kid);
	if (memcmp(kid, c->holder, IDENTITY_ID_LEN) != 0)
		return false;
	dcbor_buf_init(&b);
	crdt_claim_signing_bytes(&b, c, id);
	rc = identity_verify(c->key, b.data, b.len, c->sig);
	dcbor_buf_free(&b);
	return rc == 0;
}

int
replica_apply_record(struct member *from, struct dcbor_rd *rd)
{
	struct entry *e = NULL;
	struct crdt_rec cr;
	struct crdt_claim claim;
	struct space_rec *have;
	const struct crdt_claim *cur;
	uint8_t id[ENTRY_ID_LEN];
	const struct hlc_stamp *stamp;
	uint64_t now = now_ms();
	bool fresh;
	int rc;

	(void)from;
	crdt_rec_init(&cr, (const uint8_t[ENTRY_ID_LEN]){ 0 });
	if (space_rec_decode(rd, &e, &cr) == -1) {
		crdt_rec_free(&cr);
		return -1;
	}
	pd_count(records_received);
	have = space_get(sp, cr.id);
	if (cr.st.completed)	/* a claim no longer matters (space.h) */
		memset(&cr.claim, 0, sizeof(cr.claim));
	if (have == NULL && e != NULL) {
		const uint8_t *body;
		size_t blen;

		entry_signing_bytes(e, &body, &blen);
		if (identity_verify(e->issuer, body, blen, e->sig) == -1) {
			pd_count(entries_bad_signature);
			trace_add("replica", "entry with a bad signature from %s",
			    from ? from->name : "?");
			goto drop;
		}
	}
	memcpy(id, cr.id, ENTRY_ID_LEN);
	/*
	 * A compact record (entry null) carries no entry: a claim is checked
	 * against the entry this replica holds, and one with no entry to check
	 * it against is refused.
	 */
	stamp = e != NULL ? &e->stamp : have != NULL &&
	    space_rec_entry(have) != NULL ? &space_rec_entry(have)->stamp : NULL;
	cur = have ? space_rec_claim(have) : NULL;
	fresh = cr.claim.epoch != 0 && (cur == NULL ||
	    !crdt_claim_equal(cur, &cr.claim));
	if (fresh && (stamp == NULL || crdt_claim_check_remote(&cr.claim,
	    cur ? cur->epoch : 0, stamp, now) != CRDT_OK ||
	    !claim_verify(&cr.claim, id))) {
		pd_count(claims_rejected);
		memset(&cr.claim, 0, sizeof(cr.claim));
		fresh = false;
	}
	claim = cr.claim;
	if (have != NULL) {
		entry_free(e);
		e = NULL;
		rc = space_merge(sp, NULL, &cr, now);
	} else {
		rc = space_merge(sp, e, &cr, now);
		e = NULL;	/* consumed */
	}
	if (claim.epoch != 0 && memcmp(claim.holder, pd->ident.id,
	    IDENTITY_ID_LEN) != 0 && (have != NULL ||
	    (have = space_get(sp, id)) != NULL)) {
		uint64_t us = clock_mono_us();

		if (fresh && claim.mono_us != 0 && us >= claim.mono_us)
			pd_hist(claim_to_visible, us - claim.mono_us);
		claim_answer(have, &claim, now);
		if (fresh)
			take_beaten(id, now);
	}
	if (rc == SPACE_EFULL)
		pd_count_limit(ENTRIES);
	else if (rc != SPACE_OK && rc != SPACE_EEXPIRED)
		pd_count(records_refused);
drop:
	if (e != NULL)
		entry_free(e);
	crdt_rec_free(&cr);
	return 0;
}

void
replica_digest(uint64_t out[GOSSIP_BUCKETS])
{
	space_sweep(sp, now_ms());
	space_digest(sp, GOSSIP_BUCKETS, out);
}

struct put_arg {
	struct dcbor_buf	*tmp;
	size_t			 max;
	size_t			 n;
	bool			 more;
	size_t			 skip, seen;	/* the rotation, see below */
	bool			 wrapped;
};

static bool
put_one(void *argp, const struct space_rec *r)
{
	struct put_arg *a = argp;
	size_t before = a->tmp->len, idx = a->seen++;

	if (!a->wrapped && idx < a->skip)
		return true;
	if (a->wrapped && idx >= a->skip)
		return false;

	space_rec_encode(a->tmp, r);
	if (a->tmp->len > a->max && a->n > 0) {
		a->tmp->len = before;
		a->more = true;
		return false;
	}
	a->n++;
	return true;
}

size_t
replica_put_records(struct dcbor_buf *b, const bool diff[GOSSIP_BUCKETS],
    size_t max_bytes, bool *more)
{
	uint32_t list[GOSSIP_BUCKETS];
	size_t nb = 0;
	struct dcbor_buf tmp;
	struct put_arg a;

	for (uint32_t i = 0; i < GOSSIP_BUCKETS; i++)
		if (diff[i])
			list[nb++] = i;
	dcbor_buf_init(&tmp);
	a.tmp = &tmp;
	a.max = max_bytes;
	a.n = 0;
	a.more = false;
	/*
	 * A reply holds at most max_bytes: each one starts where the last
	 * stopped (wrapping around), or a space of more than max_bytes whose
	 * buckets all differ would get the same first records every round
	 * and never converge.
	 */
	a.skip = put_rot;
	a.seen = 0;
	a.wrapped = false;
	if (nb > 0)
		space_foreach_bucket(sp, GOSSIP_BUCKETS, list, nb, put_one, &a);
	if (nb > 0 && !a.more && a.skip > 0) {
		size_t total = a.seen;

		a.seen = 0;
		a.wrapped = true;
		space_foreach_bucket(sp, GOSSIP_BUCKETS, list, nb, put_one, &a);
		put_rot = total > 0 ? (a.skip + a.n) % total : 0;
	} else
		put_rot = a.more ? a.skip + a.n : 0;
	dcbor_put_array(b, a.n);
	dcbor_put_raw(b, tmp.data, tmp.len);
	dcbor_buf_free(&tmp);
	*more = a.more;
	return a.n;
}

struct item_arg {
	void	(*cb)(void *, uint64_t, const uint8_t *);
	void	*arg;
};

static bool
item_one(void *argp, const struct space_rec *r)
{
	struct item_arg *a = argp;

	a->cb(a->arg, space_rec_hash(r), space_rec_id(r));
	return true;
}

void
replica_foreach_item(void (*cb)(void *, uint64_t, const uint8_t *),
    void *arg)
{
	struct item_arg a = { cb, arg };

	space_sweep(sp, now_ms());
	space_foreach(sp, item_one, &a);
}

size_t
replica_put_record(struct dcbor_buf *b, const uint8_t *id)
{
	struct space_rec *r = space_get(sp, id);
	size_t before = b->len;

	if (r == NULL)
		return 0;
	space_rec_encode(b, r);
	return b->len - before;
}

int
replica_entry_stamp(const uint8_t *id, struct hlc_stamp *out)
{
	struct space_rec *r = space_get(sp, id);
	const struct entry *e = r != NULL ? space_rec_entry(r) : NULL;

	if (e == NULL)
		return -1;
	*out = e->stamp;
	return 0;
}

int
replica_generate(const struct identity *gen, uint64_t seq, uint64_t stamp_ms,
    uint64_t lease_ms, const char *type, const char *pad, uint8_t *id,
    char *err, size_t errlen)
{
	struct dcbor_buf fb;
	struct entry_spec spec;
	struct entry *e;
	struct crdt_rec cr;
	uint8_t sig[IDENTITY_SIG_LEN];
	const uint8_t *body;
	size_t blen;
	int rc;

	dcbor_buf_init(&fb);
	dcbor_put_map(&fb, 2);
	dcbor_put_cstr(&fb, "pad");
	dcbor_put_cstr(&fb, pad);
	dcbor_put_cstr(&fb, "seq");
	dcbor_put_uint(&fb, seq);
	memset(&spec, 0, sizeof(spec));
	spec.space = DEFAULT_SPACE;
	spec.type = type;
	spec.fields = fb.data;
	spec.fields_len = fb.len;
	spec.issuer = gen->pub;
	spec.stamp.phys = stamp_ms;
	spec.stamp.logical = (uint32_t)seq;
	spec.stamp.node = gen->node;
	spec.lease_ms = lease_ms;
	rc = entry_new(&spec, &e);
	dcbor_buf_free(&fb);
	if (rc != ENTRY_OK) {
		snprintf(err, errlen, "bulk: bad entry (%s)", entry_strerror(rc));
		return -1;
	}
	entry_signing_bytes(e, &body, &blen);
	if (identity_sign(gen, body, blen, sig) == -1) {
		entry_free(e);
		snprintf(err, errlen, "bulk: signing failed");
		return -1;
	}
	entry_set_sig(e, sig);
	memcpy(id, e->id, ENTRY_ID_LEN);
	crdt_rec_init(&cr, e->id);
	(void)crdt_state_add(&cr.st, gen->node, seq + 1);
	rc = space_merge(sp, e, &cr, now_ms());
	crdt_rec_free(&cr);
	if (rc != SPACE_OK) {
		if (rc == SPACE_EFULL)
			pd_count_limit(ENTRIES);
		snprintf(err, errlen, "bulk: %s", space_strerror(rc));
		return -1;
	}
	pd_count(writes);
	return 0;
}

/* ---- write, read ------------------------------------------------------- */

json_t *
replica_write(json_t *args, char *err, size_t errlen)
{
	struct dcbor_buf fb;
	struct entry_spec spec;
	struct entry *e;
	const char *tags[ENTRY_TAGS_MAX];
	json_t *jf = json_object_get(args, "fields"), *jt, *v;
	json_int_t lease = json_integer_value(json_object_get(args,
	    "lease_ms"));
	uint8_t sig[IDENTITY_SIG_LEN], id[ENTRY_ID_LEN];
	char idhex[2 * ENTRY_ID_LEN + 1], stamp[HLC_TEXT_MAX];
	const uint8_t *body;
	size_t blen, i;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.space = json_string_value(json_object_get(args, "space"));
	if (spec.space == NULL)
		spec.space = DEFAULT_SPACE;
	spec.type = json_string_value(json_object_get(args, "type"));
	if (json_object_get(args, "lease_ms") == NULL)
		lease = DEFAULT_LEASE_MS;
	if (lease <= 0) {
		snprintf(err, errlen, "write: \"lease_ms\" must be > 0");
		return NULL;
	}
	jt = json_object_get(args, "tags");
	if (jt != NULL) {
		if (json_array_size(jt) > ENTRY_TAGS_MAX) {
			snprintf(err, errlen, "write: at most %d tags",
			    ENTRY_TAGS_MAX);
			return NULL;
		}
		json_array_foreach(jt, i, v) {
			if (!json_is_string(v)) {
				snprintf(err, errlen, "write: tags[%zu] must be "
				    "a string", i);
				return NULL;
			}
			tags[i] = json_string_value(v);
		}
		spec.tags = tags;
		spec.ntags = json_array_size(jt);
	}
	dcbor_buf_init(&fb);
	if (jf == NULL)
		dcbor_put_map(&fb, 0);
	else if (!json_is_object(jf)) {
		snprintf(err, errlen, "write: \"fields\" must be an object");
		return NULL;
	} else if (jcbor_from_json(&fb, jf, err, errlen) == -1) {
		dcbor_buf_free(&fb);
		return NULL;
	}
	spec.fields = fb.data;
	spec.fields_len = fb.len;
	spec.issuer = pd->ident.pub;
	spec.stamp = hlc_now(&pd->hlc, hlc_wall_ms());
	spec.lease_ms = (uint64_t)lease;
	spec.mono_us = clock_mono_us();
	rc = entry_new(&spec, &e);
	dcbor_buf_free(&fb);
	if (rc != ENTRY_OK) {
		snprintf(err, errlen, "write: bad entry (%s)",
		    entry_strerror(rc));
		return NULL;
	}
	entry_signing_bytes(e, &body, &blen);
	if (identity_sign(&pd->ident, body, blen, sig) == -1) {
		entry_free(e);
		snprintf(err, errlen, "write: signing failed");
		return NULL;
	}
	entry_set_sig(e, sig);
	memcpy(id, e->id, sizeof(id));
	hlc_format(&e->stamp, stamp, sizeof(stamp));
	if ((rc = space_write(sp, e, now_ms())) != SPACE_OK) {
		if (rc == SPACE_EFULL)
			pd_count_limit(ENTRIES);
		snprintf(err, errlen, "write: %s", space_strerror(rc));
		return NULL;
	}
	pd_count(writes);
	spread(id);
	hex_encode(id, ENTRY_ID_LEN, idhex);
	return json_pack("{s:s, s:s}", "id", idhex, "stamp", stamp);
}

struct read_arg {
	json_t	*arr;
	size_t	 limit;
};

static bool
read_one(void *argp, const struct space_rec *r)
{
	struct read_arg *a = argp;

	json_array_append_new(a->arr, replica_entry_json(r));
	return json_array_size(a->arr) < a->limit;
}

json_t *
replica_read(const struct template *t, bool all, size_t limit)
{
	struct space_rec *r;
	struct read_arg a;

	pd_count(reads);
	if (!all) {
		r = space_read(sp, t, now_ms());
		return json_pack("{s:o}", "entry",
		    r ? replica_entry_json(r) : json_null());
	}
	a.arr = json_array();
	a.limit = limit ? limit : 1;
	space_read_all(sp, t, now_ms(), read_one, &a);
	return json_pack("{s:o}", "entries", a.arr);
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
static bool
promise_make(const uint8_t id[ENTRY_ID_LEN], const struct crdt_claim *c,
    uint64_t now)
{
	uint64_t h;
	struct promise **pp, *p;

	memcpy(&h, id, sizeof(h));	/* ids are hash output: uniform */
	pp = &promises[h % PROMISE_SLOTS];
	while ((p = *pp) != NULL) {
		if (p->expiry_ms <= now) {
			*pp = p->next;
			free(p);
			continue;
		}
		if (memcmp(p->id, id, ENTRY_ID_LEN) == 0) {
			if (memcmp(p->holder, c->holder, IDENTITY_ID_LEN) != 0)
				return false;
			if (c->expiry_ms > p->expiry_ms)
				p->expiry_ms = c->expiry_ms;
			return true;
		}
		pp = &p->next;
	}
	p = xcalloc(1, sizeof(*p));
	memcpy(p->id, id, ENTRY_ID_LEN);
	memcpy(p->holder, c->holder, IDENTITY_ID_LEN);
	p->expiry_ms = c->expiry_ms;
	p->next = promises[h % PROMISE_SLOTS];
	promises[h % PROMISE_SLOTS] = p;
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
 * has proven (a handshake gave its key), as the most ever seen at once.  It
 * never shrinks with silence: a view that shrank is exactly how a minority
 * would come to believe it is a majority.
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
	return members_hw;
}

/* A CLAIM_ACK body: { "ok": bool, "entry": bstr(16), "epoch": uint }. */
static void
ack_send(const uint8_t id[ENTRY_ID_LEN], const struct crdt_claim *c, bool ok)
{
	struct member *m = member_find(c->holder);
	struct dcbor_buf b;

	if (m == NULL)
		return;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 3);
	dcbor_put_cstr(&b, "ok");
	dcbor_put_bool(&b, ok);
	dcbor_put_cstr(&b, "entry");
	dcbor_put_bytes(&b, id, ENTRY_ID_LEN);
	dcbor_put_cstr(&b, "epoch");
	dcbor_put_uint(&b, c->epoch);
	if (link_send_member_urgent(m, FRAME_CLAIM_ACK, b.data, b.len) == 0) {
		if (ok)
			pd_count(claim_acks_sent);
		else
			pd_count(claim_acks_refused);
	}
	dcbor_buf_free(&b);
}

/*
 * Answer a verified remote claim on r: in lease mode "merged" (ok, always),
 * in quorum mode a vote: ok only if we vouch for it (promise_make).  The
 * answer follows, on the same link, every claim we made before we merged
 * this one, which is what makes the lease-mode trust rule exact.
 */
static void
claim_answer(const struct space_rec *r, const struct crdt_claim *c,
    uint64_t now)
{
	const uint8_t *id = space_rec_id(r);

	if (!crdt_claim_active(c, now))
		return;
	if (pd->conf.take_mode != TAKE_QUORUM)
		ack_send(id, c, true);
	else
		ack_send(id, c, !space_rec_state(r)->completed &&
		    promise_make(id, c, now));
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
	uint64_t		 left_ms;	/* 0: not yet left every link */
	uint8_t			(*voters)[IDENTITY_ID_LEN];
	size_t			 nvoters;
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
take_free(struct take_op *op)
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
take_done(struct take_op *op, const struct space_rec *r)
{
	op->done(op->arg, r, op->attempts);
	take_free(op);
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
		take_done(op, NULL);
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

/* Every live member (alive, with an UP link) has answered w. */
static bool
wait_answered_all(const struct claim_wait *w)
{
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link != NULL && m->state == MEMBER_ALIVE &&
		    !wait_answered_by(w, m))
			return false;
	}
	return true;
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

	if (w == NULL || !space_won(sp, w->id, w->epoch, now)) {
		take_lost(op, now);
		return;
	}
	if (w->left_ms == 0) {
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
	if (pd->conf.take_mode != TAKE_QUORUM && !wait_answered_all(w)) {
		if (now >= w->expiry_ms) {
			take_lost(op, now);
			return;
		}
		/* Settled but not answered by all: what the rule guards. */
		if (!op->untrusted)
			pd_count(takes_untrusted);
		op->untrusted = true;
		/* An answer calls take_check; a member going quiet, this. */
		take_schedule(op, pd->conf.tick_ms);
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
				take_done(op, NULL);	/* the claim waits on */
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
	trace_add("claim", "won take of %02x%02x%02x%02x epoch %llu",
	    op->id[0], op->id[1], op->id[2], op->id[3],
	    (unsigned long long)op->epoch);
	wait_free(w);
	take_done(op, r);
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

static void
take_try(struct take_op *op)
{
	uint64_t now = now_ms();
	struct claim_wait *w;
	struct space_rec *r;
	struct crdt_claim c;
	struct hlc_stamp st;
	struct dcbor_buf b;
	size_t nl;

	if (pd->conf.take_mode == TAKE_QUORUM &&
	    (w = wait_adoptable(op->t, now)) != NULL) {
		wait_attach(op, w);
		op->attempts++;
		take_check(op);
		return;
	}
	r = space_take_candidate(sp, op->t, now);
	if (r == NULL) {
		if (now >= op->deadline_ms) {
			take_done(op, NULL);
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
	spread_urgent(w->id);
	nl = link_count();
	w->marks = xcalloc(nl ? nl : 1, sizeof(*w->marks));
	w->nmarks = link_mark_all(w->marks, nl);
	/* Soon: the settle window runs from the moment the claim has left. */
	take_schedule(op, 0);
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
replica_take(struct template *t, uint32_t timeout_ms, replica_take_cb done,
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
replica_cancel_takes(void)
{
	struct take_op *op;
	struct claim_wait *w;

	while ((op = TAILQ_FIRST(&takes)) != NULL)
		take_done(op, NULL);
	while ((w = TAILQ_FIRST(&waits)) != NULL)
		wait_free(w);
}

int
replica_recv_ack(struct member *from, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	struct claim_wait *w;
	uint8_t id[ENTRY_ID_LEN];
	uint64_t n, epoch;
	bool ok;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 3 ||
	    dcbor_get_key(&rd, "ok") == -1 || dcbor_get_bool(&rd, &ok) == -1 ||
	    dcbor_get_key(&rd, "entry") == -1 ||
	    dcbor_get_fixed(&rd, id, sizeof(id)) == -1 ||
	    dcbor_get_key(&rd, "epoch") == -1 ||
	    dcbor_get_uint(&rd, &epoch) == -1 || dcbor_left(&rd) != 0)
		return -1;
	pd_count(claim_acks_received);
	TAILQ_FOREACH(w, &waits, entry)
		if (w->epoch == epoch && memcmp(w->id, id, sizeof(id)) == 0)
			break;
	if (w == NULL)
		return 0;		/* decided already, or never ours */
	for (size_t i = 0; i < w->nvoters; i++)
		if (memcmp(w->voters[i], from->id, IDENTITY_ID_LEN) == 0)
			return 0;	/* each member answers once */
	w->voters = xreallocarray(w->voters, w->nvoters + 1,
	    sizeof(*w->voters));
	memcpy(w->voters[w->nvoters++], from->id, IDENTITY_ID_LEN);
	if (ok)
		w->acks++;
	else
		w->nacks++;
	if (w->op != NULL && w->left_ms != 0 &&
	    now_ms() >= w->left_ms + pd->conf.settle_ms)
		take_check(w->op);
	return 0;
}

json_t *
replica_takes_json(size_t since)
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

/* ---- complete ---------------------------------------------------------- */

int
replica_complete(const uint8_t id[ENTRY_ID_LEN])
{
	int rc = space_complete(sp, id, now_ms());

	if (rc == SPACE_OK) {
		pd_count(completes);
		spread_urgent(id);
	}
	return rc;
}

/* ---- dump, lifecycle --------------------------------------------------- */

size_t
replica_count(void)
{
	return space_count(sp);
}

size_t
replica_visible(void)
{
	space_sweep(sp, now_ms());
	return space_visible_count(sp);
}

static bool
ids_one(void *arg, const struct space_rec *r)
{
	const struct crdt_claim *c = space_rec_claim(r);
	char id[2 * ENTRY_ID_LEN + 1];

	hex_encode(space_rec_id(r), ENTRY_ID_LEN, id);
	json_array_append_new(arg, json_pack("[s, b, b, b]", id,
	    crdt_state_present(space_rec_state(r)),
	    space_rec_state(r)->completed,
	    c != NULL && crdt_claim_active(c, now_ms())));
	return true;
}

json_t *
replica_ids_json(void)
{
	json_t *arr = json_array();

	space_sweep(sp, now_ms());
	space_foreach(sp, ids_one, arr);
	return json_pack("{s:o}", "ids", arr);
}

struct dump_arg {
	json_t	*arr;
	size_t	 limit;
};

static bool
dump_one(void *argp, const struct space_rec *r)
{
	struct dump_arg *a = argp;

	if (json_array_size(a->arr) >= a->limit)
		return false;
	json_array_append_new(a->arr, replica_entry_json(r));
	return true;
}

json_t *
replica_dump_json(size_t limit)
{
	struct dump_arg a = { json_array(), limit };
	uint64_t dig[GOSSIP_BUCKETS];
	uint64_t sum = 0;
	size_t inflight = 0;
	struct take_op *op;

	replica_digest(dig);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		sum = sum * 1099511628211ull + dig[i];
	TAILQ_FOREACH(op, &takes, entry)
		inflight++;
	space_foreach(sp, dump_one, &a);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}",
	    "records", (json_int_t)space_count(sp),
	    "visible", (json_int_t)space_visible_count(sp),
	    "digest", (json_int_t)(sum & 0x7fffffffffffffffull),
	    "takes_in_flight", (json_int_t)inflight,
	    "takes_won", (json_int_t)nwon, "sample", a.arr);
}

void
replica_init(void)
{
	sp = space_new(pd->ident.node, pd->ident.id, pd->conf.max_entries);
	space_set_event_cb(sp, replica_event, NULL);
	dcbor_buf_init(&recbuf);
	gossip_init();
}

void
replica_free(void)
{
	replica_cancel_takes();
	gossip_free();
	space_free(sp);
	sp = NULL;
	promises_free();
	members_hw = 0;
	free(won);
	won = NULL;
	nwon = wonsz = 0;
	dcbor_buf_free(&recbuf);
	observer = NULL;
	observer_arg = NULL;
}

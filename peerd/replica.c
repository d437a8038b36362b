/*
 * replica.c: the replicated space of this peer (see replica.h).
 *
 * The lease-race take (REFERENCE.md): pick the first visible candidate
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
#include "control.h"
#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "hex.h"
#include "jcbor.h"
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

struct take_op {
	TAILQ_ENTRY(take_op)	 entry;
	replica_take_cb		 done;		/* called once, then freed */
	void			*arg;
	struct template		*t;
	uint64_t		 deadline_ms;
	bool			 settling;
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

struct notify_sub {
	struct ctl_client	*client;
	struct template		*t;
	unsigned		 mask;
	uint64_t		 expires_ms;	/* monotonic; 0 never */
};

static struct space		*sp;
static TAILQ_HEAD(, take_op)	 takes = TAILQ_HEAD_INITIALIZER(takes);
static struct take_won		*won;
static size_t			 nwon, wonsz;
static struct dcbor_buf		 recbuf;

static void	take_try(struct take_op *);

static uint64_t
now_ms(void)
{
	return hlc_wall_ms();
}

/* ---- events: latency and notify ---------------------------------------- */

static const char *const replica_event_names[] = { "WRITTEN", "TAKEN",
    "COMPLETED", "EXPIRED", "REAPPEARED" };

/* REFERENCE.md's upper-case event names. */
static const char *
replica_event_name(enum space_event ev)
{
	return (unsigned)ev <= SPACE_EV_REAPPEARED ? replica_event_names[ev] :
	    "UNKNOWN";
}

struct notify_arg {
	enum space_event	 ev;
	const struct space_rec	*r;
};

static void
notify_one(struct ctl_client *c, void *subp, void *argp)
{
	struct notify_sub *sub = subp;
	struct notify_arg *a = argp;
	const struct entry *e = space_rec_entry(a->r);

	if (!(sub->mask & REPLICA_EV_BIT(a->ev)))
		return;
	if (sub->expires_ms != 0 && clock_mono_ms() >= sub->expires_ms)
		return;
	if (sub->t != NULL && !template_match(sub->t, e))
		return;
	pd_count(notify_sent);
	ctl_event(c, json_pack("{s:s, s:s, s:o}", "event", "notify",
	    "kind", replica_event_name(a->ev), "entry",
	    replica_entry_json(a->r)));
}

static void
replica_event(void *arg, enum space_event ev, const struct space_rec *r)
{
	const struct entry *e = space_rec_entry(r);
	struct notify_arg na = { ev, r };

	(void)arg;
	if (ev == SPACE_EV_WRITTEN &&
	    memcmp(e->issuer, pd->ident.pub, IDENTITY_PUB_LEN) != 0) {
		uint64_t now = clock_mono_us();

		if (e->mono_us != 0 && now >= e->mono_us)
			pd_hist(write_to_visible, now - e->mono_us);
	}
	if (ev == SPACE_EV_EXPIRED)
		pd_count(entries_expired);
	ctl_foreach_sub(notify_one, &na);
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

/* ---- remote records ---------------------------------------------------- */

static bool
claim_verify(const struct crdt_claim *c, const uint8_t id[ENTRY_ID_LEN])
{
	struct dcbor_buf b;
	struct member *m;
	const uint8_t *pub;
	int rc;

	if (memcmp(c->holder, pd->ident.id, IDENTITY_ID_LEN) == 0)
		pub = pd->ident.pub;
	else if ((m = member_find(c->holder)) != NULL && m->have_pub)
		pub = m->pub;
	else {
		/* Relayed by an authenticated member; we cannot check it. */
		pd_count(claims_unverified);
		return true;
	}
	dcbor_buf_init(&b);
	crdt_claim_signing_bytes(&b, c, id);
	rc = identity_verify(pub, b.data, b.len, c->sig);
	dcbor_buf_free(&b);
	return rc == 0;
}

int
replica_apply_record(struct member *from, struct dcbor_rd *rd)
{
	struct entry *e = NULL;
	struct crdt_rec cr;
	struct space_rec *have;
	const struct crdt_claim *cur;
	uint64_t now = now_ms();
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
	cur = have ? space_rec_claim(have) : NULL;
	if (cr.claim.epoch != 0 && (cur == NULL ||
	    !crdt_claim_equal(cur, &cr.claim))) {
		if (crdt_claim_check_remote(&cr.claim, cur ? cur->epoch : 0,
		    &e->stamp, now) != CRDT_OK || !claim_verify(&cr.claim,
		    e->id)) {
			pd_count(claims_rejected);
			memset(&cr.claim, 0, sizeof(cr.claim));
		}
	}
	if (have != NULL) {
		entry_free(e);
		e = NULL;
		rc = space_merge(sp, NULL, &cr, now);
	} else {
		rc = space_merge(sp, e, &cr, now);
		e = NULL;	/* consumed */
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
};

static bool
put_one(void *argp, const struct space_rec *r)
{
	struct put_arg *a = argp;
	size_t before = a->tmp->len;

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
	if (nb > 0)
		space_foreach_bucket(sp, GOSSIP_BUCKETS, list, nb, put_one, &a);
	dcbor_put_array(b, a.n);
	dcbor_put_raw(b, tmp.data, tmp.len);
	dcbor_buf_free(&tmp);
	*more = a.more;
	return a.n;
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

/* ---- take -------------------------------------------------------------- */

static void
take_free(struct take_op *op)
{
	TAILQ_REMOVE(&takes, op, entry);
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
take_schedule(struct take_op *op, uint32_t ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
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
take_settled(struct take_op *op)
{
	uint64_t now = now_ms();
	struct space_rec *r;

	op->settling = false;
	if (space_won(sp, op->id, op->epoch, now) &&
	    (r = space_get(sp, op->id)) != NULL) {
		pd_count(takes_won);
		take_record_win(r, op->epoch);
		trace_add("claim", "won take of %02x%02x%02x%02x epoch %llu",
		    op->id[0], op->id[1], op->id[2], op->id[3],
		    (unsigned long long)op->epoch);
		take_done(op, r);
		return;
	}
	pd_count(takes_lost);
	trace_add("claim", "lost take of %02x%02x%02x%02x epoch %llu",
	    op->id[0], op->id[1], op->id[2], op->id[3],
	    (unsigned long long)op->epoch);
	if (now >= op->deadline_ms) {
		take_done(op, NULL);
		return;
	}
	pd_count(takes_retried);
	take_schedule(op, pd->conf.take_retry_ms);
}

static void
take_try(struct take_op *op)
{
	uint64_t now = now_ms();
	struct space_rec *r;
	struct crdt_claim c;
	struct hlc_stamp st;
	struct dcbor_buf b;

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
	memcpy(op->id, space_rec_entry(r)->id, ENTRY_ID_LEN);
	dcbor_buf_init(&b);
	crdt_claim_signing_bytes(&b, &c, op->id);
	identity_sign(&pd->ident, b.data, b.len, c.sig);
	dcbor_buf_free(&b);
	op->epoch = c.epoch;
	space_claim(sp, op->id, &c, now);
	spread(op->id);
	op->settling = true;
	take_schedule(op, pd->conf.settle_ms);
}

static void
take_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct take_op *op = arg;

	(void)fd;
	(void)ev;
	if (op->settling)
		take_settled(op);
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

	while ((op = TAILQ_FIRST(&takes)) != NULL)
		take_done(op, NULL);
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

/* ---- complete, notify -------------------------------------------------- */

int
replica_complete(const char *idhex, json_t **result, int *code, char *err,
    size_t errlen)
{
	uint8_t id[ENTRY_ID_LEN];
	int rc;

	if (hex_decode(idhex, id, sizeof(id)) == -1) {
		*code = CTL_BAD_ARGS;
		snprintf(err, errlen, "complete: \"id\" must be %d hex digits",
		    2 * ENTRY_ID_LEN);
		return -1;
	}
	rc = space_complete(sp, id, now_ms());
	if (rc == SPACE_ENOENT) {
		*code = CTL_NOT_FOUND;
		snprintf(err, errlen, "complete: no entry %s", idhex);
		return -1;
	}
	if (rc != SPACE_OK && rc != SPACE_EALREADY) {
		*code = CTL_INTERNAL;
		snprintf(err, errlen, "complete: %s", space_strerror(rc));
		return -1;
	}
	if (rc == SPACE_OK) {
		pd_count(completes);
		spread(id);
	}
	*result = json_pack("{s:b}", "already", rc == SPACE_EALREADY);
	return 0;
}

static void
notify_sub_free(void *p)
{
	struct notify_sub *sub = p;

	template_free(sub->t);
	free(sub);
}

void
replica_notify(struct ctl_client *c, struct template *t, unsigned mask,
    uint64_t lease_ms)
{
	struct notify_sub *sub = xcalloc(1, sizeof(*sub));

	sub->client = c;
	sub->t = t;
	sub->mask = mask;
	sub->expires_ms = lease_ms ? clock_mono_ms() + lease_ms : 0;
	ctl_subscribe(c, sub, notify_sub_free);
}

int
replica_event_mask(json_t *arr, unsigned *mask)
{
	size_t i;
	json_t *v;

	*mask = 0;
	if (arr == NULL) {
		*mask = 0x1f;
		return 0;
	}
	json_array_foreach(arr, i, v) {
		int ev;

		if (!json_is_string(v))
			return -1;
		for (ev = SPACE_EV_WRITTEN; ev <= SPACE_EV_REAPPEARED; ev++)
			if (strcasecmp(json_string_value(v),
			    replica_event_name((enum space_event)ev)) == 0)
				break;
		if (ev > SPACE_EV_REAPPEARED)
			return -1;
		*mask |= REPLICA_EV_BIT(ev);
	}
	return 0;
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
	free(won);
	won = NULL;
	nwon = wonsz = 0;
	dcbor_buf_free(&recbuf);
}

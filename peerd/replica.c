/*
 * replica.c: the replicated space of this peer (see replica.h).
 *
 * It verifies and merges remote records, writes, reads and completes; the
 * take (the lease race, the trust rule, quorum promises and CLAIM_ACKs) is
 * take.c's, which this file tells of every verified remote claim it merges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

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
#include "sha256.h"
#include "space.h"
#include "take.h"
#include "template.h"
#include "trace.h"
#include "xmalloc.h"

#define DEFAULT_SPACE	"default"
#define DEFAULT_LEASE_MS (3600u * 1000u)


static struct space		*sp;
static struct dcbor_buf		 recbuf;
static size_t			 put_rot;	/* replica_put_records */
static replica_event_cb		 observer;
static void			*observer_arg;


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

		if (e->mono_us != 0 && now >= e->mono_us) {
			pd_hist(write_to_visible, now - e->mono_us);
			stats_visible(e->mono_us, now - e->mono_us);
		}
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

/*
 * The urgent lane's turn: the ids of the records (claims, completions) to
 * send at the end of this loop turn, each once, as one rumor; then take.c
 * sends the turn's answers (docs/protocol.md 6.3).  The flush runs from
 * the active queue after what is already active in it (a worker's next
 * take after its completion, the other frames of a read), requeued behind
 * them at most URGENT_DEFER times, so it never waits for a poll.
 */
#define URGENT_DEFER	4

static uint8_t			(*urg_ids)[ENTRY_ID_LEN];
static size_t			 nurg, urgsz;
static struct event		*urg_ev;
static unsigned			 urg_deferred;

static void
urgent_flush(evutil_socket_t fd, short ev, void *arg)
{
	struct space_rec *r;
	size_t n = 0;

	(void)fd;
	(void)ev;
	(void)arg;
	if (urg_deferred < URGENT_DEFER &&
	    event_base_get_num_events(pd->base, EVENT_BASE_COUNT_ACTIVE) > 0) {
		urg_deferred++;
		event_active(urg_ev, EV_TIMEOUT, 0);
		return;
	}
	urg_deferred = 0;
	dcbor_buf_reset(&recbuf);
	for (size_t i = 0; i < nurg; i++) {
		if ((r = space_get(sp, urg_ids[i])) == NULL)
			continue;
		if (n > 0 && recbuf.len > pd->conf.max_frame / 4) {
			/* A rumor stays well under the frame cap. */
			gossip_send_urgent(recbuf.data, recbuf.len, n);
			dcbor_buf_reset(&recbuf);
			n = 0;
		}
		space_rec_encode(&recbuf, r);
		n++;
	}
	nurg = 0;
	if (n > 0)
		gossip_send_urgent(recbuf.data, recbuf.len, n);
	take_turn_sent();
}

void
replica_urgent_soon(void)
{
	if (urg_ev != NULL)
		event_active(urg_ev, EV_TIMEOUT, 0);
}

void
replica_spread_urgent(const uint8_t id[ENTRY_ID_LEN])
{
	for (size_t i = 0; i < nurg; i++)
		if (memcmp(urg_ids[i], id, ENTRY_ID_LEN) == 0)
			return;		/* sent as it stands at the flush */
	if (nurg == urgsz) {
		urgsz = urgsz ? urgsz * 2 : 16;
		urg_ids = xreallocarray(urg_ids, urgsz, sizeof(*urg_ids));
	}
	memcpy(urg_ids[nurg++], id, ENTRY_ID_LEN);
	replica_urgent_soon();
}

/* ---- remote records ---------------------------------------------------- */

/*
 * The claims this peer has verified, each by the SHA-256 of exactly what
 * its verification covered: the key, the signed claim bytes and the
 * signature.  A claim that loses the merge here is not the record's claim,
 * so every later copy of it (another path, a repair) would otherwise be
 * verified again.  Only a claim whose key, signed bytes and signature are
 * all the ones verified finds its digest, so a claim that differs from a
 * verified one in any signed byte or in its signature is verified as if
 * never seen (docs/protocol.md section 6).  Direct-mapped and bounded: a
 * later claim takes the slot, and a claim pushed out is verified again.
 */
#define CLAIM_SEEN_SLOTS	4096

static uint8_t		 claim_seen[CLAIM_SEEN_SLOTS][SHA256_DIGEST_LENGTH];
static EVP_MD_CTX	*claim_md;

static bool
claim_digest(const struct crdt_claim *c, const struct dcbor_buf *signed_bytes,
    uint8_t out[SHA256_DIGEST_LENGTH])
{
	if (claim_md == NULL && (claim_md = EVP_MD_CTX_new()) == NULL)
		return false;
	return EVP_DigestInit_ex(claim_md, sha256_md(), NULL) == 1 &&
	    EVP_DigestUpdate(claim_md, c->key, IDENTITY_PUB_LEN) == 1 &&
	    EVP_DigestUpdate(claim_md, signed_bytes->data,
	    signed_bytes->len) == 1 &&
	    EVP_DigestUpdate(claim_md, c->sig, IDENTITY_SIG_LEN) == 1 &&
	    EVP_DigestFinal_ex(claim_md, out, NULL) == 1;
}

/*
 * A claim is believed only when its signature verifies under the key it
 * carries and that key is the holder's (holder = SHA-256(key)): a claim
 * that cannot be verified never reaches the space, so it cannot hide an
 * entry from read, take or the history.  A claim verified before (the
 * digest above) is believed without a second verification.
 */
static bool
claim_verify(const struct crdt_claim *c, const uint8_t id[ENTRY_ID_LEN])
{
	uint8_t kid[IDENTITY_ID_LEN], md[SHA256_DIGEST_LENGTH];
	uint8_t *slot = NULL;
	struct dcbor_buf b;
	uint64_t h;
	int rc;

	identity_id_of(c->key, kid);
	if (memcmp(kid, c->holder, IDENTITY_ID_LEN) != 0)
		return false;
	dcbor_buf_init(&b);
	crdt_claim_signing_bytes(&b, c, id);
	if (claim_digest(c, &b, md)) {
		memcpy(&h, md, sizeof(h));	/* a hash: uniform */
		slot = claim_seen[h % CLAIM_SEEN_SLOTS];
		if (memcmp(slot, md, sizeof(md)) == 0) {
			pd_count(verifies_claim_cached);
			dcbor_buf_free(&b);
			return true;
		}
	}
	rc = identity_verify(c->key, b.data, b.len, c->sig);
	pd_count(verifies_claim);
	dcbor_buf_free(&b);
	if (rc == 0 && slot != NULL)
		memcpy(slot, md, sizeof(md));
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
	/* A copy of a held entry is stepped over unparsed (e stays NULL). */
	if ((rc = space_rec_decode_known(sp, rd, &e, &cr)) == -1) {
		crdt_rec_free(&cr);
		return -1;
	}
	pd_count(records_received);
	if (rc == 1)
		pd_count(records_held_skipped);
	have = space_get(sp, cr.id);
	if (cr.st.completed)	/* a claim no longer matters (space.h) */
		memset(&cr.claim, 0, sizeof(cr.claim));
	if (have == NULL && e != NULL) {
		const uint8_t *body;
		size_t blen;

		entry_signing_bytes(e, &body, &blen);
		pd_count(verifies_entry);
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
	/* The merge may have compacted (freed and replaced) the record. */
	if (claim.epoch != 0 && memcmp(claim.holder, pd->ident.id,
	    IDENTITY_ID_LEN) != 0 && (have = space_get(sp, id)) != NULL) {
		uint64_t us = clock_mono_us();

		if (fresh && claim.mono_us != 0 && us >= claim.mono_us)
			pd_hist(claim_to_visible, us - claim.mono_us);
		take_remote_claim(have, &claim, from, fresh, now);
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
	pd_count(signs_entry);
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
	pd_count(signs_entry);
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


/* ---- complete ---------------------------------------------------------- */

int
replica_complete(const uint8_t id[ENTRY_ID_LEN])
{
	int rc = space_complete(sp, id, now_ms());

	if (rc == SPACE_OK) {
		pd_count(completes);
		replica_spread_urgent(id);
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

	replica_digest(dig);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		sum = sum * 1099511628211ull + dig[i];
	space_foreach(sp, dump_one, &a);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}",
	    "records", (json_int_t)space_count(sp),
	    "visible", (json_int_t)space_visible_count(sp),
	    "digest", (json_int_t)(sum & 0x7fffffffffffffffull),
	    "takes_in_flight", (json_int_t)take_in_flight(),
	    "takes_won", (json_int_t)take_won_count(), "sample", a.arr);
}

void
replica_init(void)
{
	sp = space_new(pd->ident.node, pd->ident.id, pd->conf.max_entries);
	space_set_event_cb(sp, replica_event, NULL);
	dcbor_buf_init(&recbuf);
	urg_ev = event_new(pd->base, -1, 0, urgent_flush, NULL);
	gossip_init();
	take_init(sp);
}

void
replica_free(void)
{
	take_free();
	if (urg_ev != NULL)
		event_free(urg_ev);
	urg_ev = NULL;
	free(urg_ids);
	urg_ids = NULL;
	nurg = urgsz = 0;
	urg_deferred = 0;
	memset(claim_seen, 0, sizeof(claim_seen));
	EVP_MD_CTX_free(claim_md);
	claim_md = NULL;
	gossip_free();
	space_free(sp);
	sp = NULL;
	dcbor_buf_free(&recbuf);
	observer = NULL;
	observer_arg = NULL;
}

/*
 * replica.c: the replicated space of this peer, the store (see replica.h).
 *
 * It verifies and merges remote records, writes, reads and completes, and
 * tells its observers what changed: the take (the lease race, the trust
 * rule, quorum promises and CLAIM_ACKs) hears of every verified remote
 * claim merged, the broadcast of every record this peer changed.  It calls
 * no protocol: they call it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "clock.h"
#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "log.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "replica.h"
#include "sha256.h"
#include "space.h"
#include "template.h"
#include "trace.h"
#include "xmalloc.h"

#define REPLICA_OBSERVERS	8

static struct space		*sp;
static size_t			 put_rot;	/* replica_put_records */
static struct {
	replica_observer_fn	 fn;
	void			*arg;
}				 observers[REPLICA_OBSERVERS];
static size_t			 nobservers;


/* ---- events: latency, and the observers ------------------------------ */

static void
replica_tell(const struct replica_event *e)
{
	for (size_t i = 0; i < nobservers; i++)
		observers[i].fn(observers[i].arg, e);
}

void
replica_observe(replica_observer_fn fn, void *arg)
{
	for (size_t i = 0; i < nobservers; i++)
		if (observers[i].fn == fn)
			return;
	if (nobservers == REPLICA_OBSERVERS)
		fatalx("replica_observe: more than %d observers",
		    REPLICA_OBSERVERS);
	observers[nobservers].fn = fn;
	observers[nobservers++].arg = arg;
}

struct space *
replica_space(void)
{
	return sp;
}

/* This peer changed id's record: the observers spread it. */
static void
replica_changed(const uint8_t id[ENTRY_ID_LEN], bool urgent)
{
	struct replica_event e = { .ev = REPLICA_EV_LOCAL, .urgent = urgent };

	if ((e.rec = space_get(sp, id)) != NULL)
		replica_tell(&e);
}

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
	if (nobservers > 0) {
		struct replica_event re = { .ev = REPLICA_EV_SPACE, .rec = r,
		    .space = ev };

		replica_tell(&re);
	}
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
	uint64_t now = hlc_wall_ms();
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
		struct replica_event re = { .ev = REPLICA_EV_CLAIM,
		    .rec = have, .claim = &claim, .from = from,
		    .fresh = fresh, .now = now };

		if (fresh && claim.mono_us != 0 && us >= claim.mono_us)
			pd_hist(claim_to_visible, us - claim.mono_us);
		replica_tell(&re);
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

int
replica_apply_items(struct member *from, struct dcbor_rd *rd)
{
	uint64_t n;

	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (replica_apply_record(from, rd) == -1)
			return -1;
	return 0;
}

void
replica_digest(uint64_t *out, size_t nbuckets)
{
	space_sweep(sp, hlc_wall_ms());
	space_digest(sp, nbuckets, out);
}

uint64_t
replica_digest_sum(size_t nbuckets)
{
	uint64_t *dig = xcalloc(nbuckets, sizeof(*dig)), sum = 0;

	replica_digest(dig, nbuckets);
	for (size_t i = 0; i < nbuckets; i++)
		sum = sum * 1099511628211ull + dig[i];
	free(dig);
	return sum & 0x7fffffffffffffffull;
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
replica_put_records(struct dcbor_buf *b, const bool *diff, size_t nbuckets,
    size_t max_bytes, bool *more)
{
	uint32_t *list = xcalloc(nbuckets ? nbuckets : 1, sizeof(*list));
	size_t nb = 0;
	struct dcbor_buf tmp;
	struct put_arg a;

	for (uint32_t i = 0; i < nbuckets; i++)
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
		space_foreach_bucket(sp, nbuckets, list, nb, put_one, &a);
	if (nb > 0 && !a.more && a.skip > 0) {
		size_t total = a.seen;

		a.seen = 0;
		a.wrapped = true;
		space_foreach_bucket(sp, nbuckets, list, nb, put_one, &a);
		put_rot = total > 0 ? (a.skip + a.n) % total : 0;
	} else
		put_rot = a.more ? a.skip + a.n : 0;
	dcbor_put_array(b, a.n);
	dcbor_put_raw(b, tmp.data, tmp.len);
	dcbor_buf_free(&tmp);
	free(list);
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

	space_sweep(sp, hlc_wall_ms());
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
	spec.space = REPLICA_SPACE;
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
	rc = space_merge(sp, e, &cr, hlc_wall_ms());
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

int
replica_write(const struct replica_write *w, uint8_t id[ENTRY_ID_LEN],
    struct hlc_stamp *stamp, char *err, size_t errlen)
{
	struct entry_spec spec;
	struct entry *e;
	uint8_t sig[IDENTITY_SIG_LEN];
	const uint8_t *body;
	size_t blen;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.space = w->space != NULL ? w->space : REPLICA_SPACE;
	spec.type = w->type;
	spec.tags = w->tags;
	spec.ntags = w->ntags;
	spec.fields = w->fields;
	spec.fields_len = w->fields_len;
	spec.issuer = pd->ident.pub;
	spec.stamp = hlc_now(&pd->hlc, hlc_wall_ms());
	spec.lease_ms = w->lease_ms;
	spec.mono_us = clock_mono_us();
	rc = entry_new(&spec, &e);
	if (rc != ENTRY_OK) {
		snprintf(err, errlen, "write: bad entry (%s)",
		    entry_strerror(rc));
		return -1;
	}
	entry_signing_bytes(e, &body, &blen);
	pd_count(signs_entry);
	if (identity_sign(&pd->ident, body, blen, sig) == -1) {
		entry_free(e);
		snprintf(err, errlen, "write: signing failed");
		return -1;
	}
	entry_set_sig(e, sig);
	memcpy(id, e->id, ENTRY_ID_LEN);
	*stamp = e->stamp;
	if ((rc = space_write(sp, e, hlc_wall_ms())) != SPACE_OK) {
		if (rc == SPACE_EFULL)
			pd_count_limit(ENTRIES);
		snprintf(err, errlen, "write: %s", space_strerror(rc));
		return -1;
	}
	pd_count(writes);
	replica_changed(id, false);
	return 0;
}

const struct space_rec *
replica_read(const struct template *t)
{
	pd_count(reads);
	return space_read(sp, t, hlc_wall_ms());
}

void
replica_read_all(const struct template *t,
    bool (*fn)(void *, const struct space_rec *), void *arg)
{
	pd_count(reads);
	space_read_all(sp, t, hlc_wall_ms(), fn, arg);
}

/* ---- complete ---------------------------------------------------------- */

int
replica_complete(const uint8_t id[ENTRY_ID_LEN])
{
	int rc = space_complete(sp, id, hlc_wall_ms());

	if (rc == SPACE_OK) {
		pd_count(completes);
		replica_changed(id, true);
	}
	return rc;
}

/* ---- counts, lifecycle ------------------------------------------------- */

size_t
replica_count(void)
{
	return space_count(sp);
}

size_t
replica_visible(void)
{
	space_sweep(sp, hlc_wall_ms());
	return space_visible_count(sp);
}

void
replica_foreach(bool (*fn)(void *, const struct space_rec *), void *arg)
{
	space_sweep(sp, hlc_wall_ms());
	space_foreach(sp, fn, arg);
}

static uint64_t
gauge_records(void)
{
	return replica_count();
}

static uint64_t
gauge_visible(void)
{
	return replica_visible();
}

void
replica_init(void)
{
	sp = space_new(pd->ident.node, pd->ident.id, pd->conf.max_entries);
	space_set_event_cb(sp, replica_event, NULL);
	stats_gauge("records", gauge_records);
	stats_gauge("visible", gauge_visible);
}

void
replica_free(void)
{
	memset(claim_seen, 0, sizeof(claim_seen));
	EVP_MD_CTX_free(claim_md);
	claim_md = NULL;
	space_free(sp);
	sp = NULL;
	nobservers = 0;
}

/*
 * fake_store.h: one stand-in for peerd/replica.c, for the unit tests of a
 * protocol on the store (plumtree, recon, take) without the real one:
 * include it once, from the test's own .c file; it defines replica_* but
 * replica_init (so the archive's replica.o is not pulled in: the test
 * starts it with fake_store_init), as fake_link.h and fake_clock.h stand
 * in for link.c and clock.c.
 *
 * Records live in a common/space of its own and are merged as they come:
 * no signature is verified, no claim checked, and the store's counters
 * but records.received are left alone.  Every record applied is counted
 * (fake_applied) and its id remembered (fake_applied_id, the first
 * FAKE_APPLIED_MAX); fake_store_local tells the observers that this peer
 * changed a record, as a write or a completion does.  What a test cannot
 * do through it (write, generate) fails with "fake store".
 */
#ifndef FAKE_STORE_H
#define FAKE_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "hlc.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "stats.h"

#define FAKE_APPLIED_MAX	256
#define FAKE_OBSERVERS		8

static struct space		*fake_sp;
static size_t			 fake_applied;
static uint8_t			 fake_applied_id[FAKE_APPLIED_MAX][ENTRY_ID_LEN];
static replica_observer_fn	 fake_obs[FAKE_OBSERVERS];
static void			*fake_obs_arg[FAKE_OBSERVERS];
static size_t			 fake_nobs;

static void
fake_store_tell(const struct replica_event *e)
{
	for (size_t i = 0; i < fake_nobs; i++)
		fake_obs[i](fake_obs_arg[i], e);
}

/* Tell the observers this peer changed id (urgent: a completion). */
static void
fake_store_local(const uint8_t id[ENTRY_ID_LEN], bool urgent)
{
	struct replica_event e = { .ev = REPLICA_EV_LOCAL, .urgent = urgent };

	if ((e.rec = space_get(fake_sp, id)) != NULL)
		fake_store_tell(&e);
}

/*
 * The fake's start, in place of replica_init (which it does not define:
 * a test that called it would link the real replica and fail to link).
 */
static void
fake_store_init(void)
{
	fake_sp = space_new(pd->ident.node, pd->ident.id, 100000);
	fake_applied = 0;
	fake_nobs = 0;
}

void
replica_free(void)
{
	space_free(fake_sp);
	fake_sp = NULL;
	fake_nobs = 0;
}

void
replica_observe(replica_observer_fn fn, void *arg)
{
	for (size_t i = 0; i < fake_nobs; i++)
		if (fake_obs[i] == fn)
			return;
	if (fake_nobs < FAKE_OBSERVERS) {
		fake_obs[fake_nobs] = fn;
		fake_obs_arg[fake_nobs++] = arg;
	}
}

struct space *
replica_space(void)
{
	return fake_sp;
}

int
replica_apply_record(struct member *from, struct dcbor_rd *rd)
{
	struct entry *e = NULL;
	struct crdt_rec cr;
	int rc;

	(void)from;
	crdt_rec_init(&cr, (const uint8_t[ENTRY_ID_LEN]){ 0 });
	if ((rc = space_rec_decode_known(fake_sp, rd, &e, &cr)) == -1) {
		crdt_rec_free(&cr);
		return -1;
	}
	pd_count(records_received);
	if (fake_applied < FAKE_APPLIED_MAX)
		memcpy(fake_applied_id[fake_applied], cr.id, ENTRY_ID_LEN);
	fake_applied++;
	if (space_get(fake_sp, cr.id) != NULL) {
		entry_free(e);
		e = NULL;
	}
	(void)space_merge(fake_sp, e, &cr, hlc_wall_ms());
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
	space_digest(fake_sp, (uint32_t)nbuckets, out);
}

struct fake_put {
	struct dcbor_buf	*tmp;
	size_t			 max, n;
	bool			 more;
};

static bool
fake_put_one(void *argp, const struct space_rec *r)
{
	struct fake_put *a = argp;
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
replica_put_records(struct dcbor_buf *b, const bool *diff, size_t nbuckets,
    size_t max_bytes, bool *more)
{
	uint32_t list[256];
	struct dcbor_buf tmp;
	struct fake_put a = { &tmp, max_bytes, 0, false };
	size_t nb = 0;

	for (uint32_t i = 0; i < nbuckets && nb < 256; i++)
		if (diff[i])
			list[nb++] = i;
	dcbor_buf_init(&tmp);
	if (nb > 0)
		space_foreach_bucket(fake_sp, (uint32_t)nbuckets, list, nb,
		    fake_put_one, &a);
	dcbor_put_array(b, a.n);
	dcbor_put_raw(b, tmp.data, tmp.len);
	dcbor_buf_free(&tmp);
	*more = a.more;
	return a.n;
}

struct fake_item {
	void	(*cb)(void *, uint64_t, const uint8_t *);
	void	*arg;
};

static bool
fake_item_one(void *argp, const struct space_rec *r)
{
	struct fake_item *a = argp;

	a->cb(a->arg, space_rec_hash(r), space_rec_id(r));
	return true;
}

void
replica_foreach_item(void (*cb)(void *, uint64_t, const uint8_t *),
    void *arg)
{
	struct fake_item a = { cb, arg };

	space_foreach(fake_sp, fake_item_one, &a);
}

void
replica_foreach(bool (*fn)(void *, const struct space_rec *), void *arg)
{
	space_foreach(fake_sp, fn, arg);
}

size_t
replica_put_record(struct dcbor_buf *b, const uint8_t *id)
{
	struct space_rec *r = space_get(fake_sp, id);
	size_t before = b->len;

	if (r == NULL)
		return 0;
	space_rec_encode(b, r);
	return b->len - before;
}

int
replica_entry_stamp(const uint8_t *id, struct hlc_stamp *out)
{
	struct space_rec *r = space_get(fake_sp, id);
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
	(void)gen; (void)seq; (void)stamp_ms; (void)lease_ms; (void)type;
	(void)pad; (void)id;
	snprintf(err, errlen, "fake store");
	return -1;
}

int
replica_write(const struct replica_write *w, uint8_t id[ENTRY_ID_LEN],
    struct hlc_stamp *stamp, char *err, size_t errlen)
{
	(void)w; (void)id; (void)stamp;
	snprintf(err, errlen, "fake store");
	return -1;
}

const struct space_rec *
replica_read(const struct template *t)
{
	return space_read(fake_sp, t, hlc_wall_ms());
}

void
replica_read_all(const struct template *t,
    bool (*fn)(void *, const struct space_rec *), void *arg)
{
	space_read_all(fake_sp, t, hlc_wall_ms(), fn, arg);
}

int
replica_complete(const uint8_t id[ENTRY_ID_LEN])
{
	int rc = space_complete(fake_sp, id, hlc_wall_ms());

	if (rc == SPACE_OK)
		fake_store_local(id, true);
	return rc;
}

size_t
replica_count(void)
{
	return space_count(fake_sp);
}

size_t
replica_visible(void)
{
	return space_visible_count(fake_sp);
}

uint64_t
replica_digest_sum(size_t nbuckets)
{
	(void)nbuckets;
	return 0;
}

#endif

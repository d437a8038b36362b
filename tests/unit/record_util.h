/*
 * record_util.h: a rumor's items as the broadcast tests and the replica's
 * tests make them (test_plumtree.c, test_replica.c).
 *
 * A rumor's rid must be rumor_rid() of its items (plumtree.c refuses any
 * other), so distinct rumors need distinct items.  The tests name a rumor
 * by a small number n; its items are one record, an entry by a fixed
 * "remote" identity with the field {"n": n} and stamp logical n, signed
 * and at a fixed stamp so the same n gives the same bytes (and rid) on
 * every call.
 */
#ifndef RECORD_UTIL_H
#define RECORD_UTIL_H

#include <check.h>
#include <string.h>

#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "identity.h"

#define REC_PHYS	1700000000000ull	/* a fixed issue time (2023) */
#define REC_LEASE	(100ull * 365 * 24 * 3600 * 1000)	/* 100 years */

static inline void
items_for(struct dcbor_buf *items, uint32_t n)
{
	static const uint8_t rseed[IDENTITY_SEED_LEN] = { 9 };
	struct identity issuer;
	struct entry_spec spec;
	struct dcbor_buf f;
	struct crdt_rec cr;
	struct entry *e;
	const uint8_t *body;
	size_t blen;
	uint8_t sig[IDENTITY_SIG_LEN];

	ck_assert_int_eq(identity_from_seed(&issuer, rseed), 0);
	dcbor_buf_init(&f);
	dcbor_put_map(&f, 1);
	dcbor_put_cstr(&f, "n");
	dcbor_put_uint(&f, n);
	memset(&spec, 0, sizeof(spec));
	spec.space = "default";
	spec.type = "task#v1";
	spec.fields = f.data;
	spec.fields_len = f.len;
	spec.issuer = issuer.pub;
	spec.stamp.phys = REC_PHYS;
	spec.stamp.logical = n;
	spec.stamp.node = issuer.node;
	spec.lease_ms = REC_LEASE;
	spec.mono_us = 1000000u + n;
	ck_assert_int_eq(entry_new(&spec, &e), ENTRY_OK);
	dcbor_buf_free(&f);
	entry_signing_bytes(e, &body, &blen);
	ck_assert_int_eq(identity_sign(&issuer, body, blen, sig), 0);
	entry_set_sig(e, sig);
	/* The record as space_write makes it (one add dot, the lease). */
	crdt_rec_init(&cr, e->id);
	ck_assert_int_eq(crdt_state_add(&cr.st, issuer.node, 1), CRDT_OK);
	crdt_state_lease(&cr.st, &e->stamp, entry_expires_ms(e));
	dcbor_buf_init(items);
	dcbor_put_array(items, 1);
	/* space_rec_encode's shape; canonical order: "rec" < "entry". */
	dcbor_put_map(items, 2);
	dcbor_put_cstr(items, "rec");
	crdt_rec_encode(items, &cr);
	dcbor_put_cstr(items, "entry");
	entry_encode(items, e);
	crdt_rec_free(&cr);
	entry_free(e);
	identity_free(&issuer);
}

#endif

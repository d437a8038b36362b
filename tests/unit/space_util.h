/*
 * space_util.h: the helpers test_space.c and test_fifo.c share: an entry
 * from JSON fields at a chosen stamp, a template from JSON, a record's
 * integer field "n", a seeded xorshift, records encoded as on the wire.
 * Header-only and static inline (a test that uses some of them is warned
 * of none of the others) because it is test code, not part of libcommon.
 * test_compact.c uses it too.
 */
#ifndef SPACE_UTIL_H
#define SPACE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "dcbor.h"
#include "jcbor.h"
#include "space.h"
#include "template.h"

#define T0	1000000ull	/* a wall time the tests start from */

static const uint8_t issuer[IDENTITY_PUB_LEN] = { 0xaa };
static const uint8_t self_a[IDENTITY_ID_LEN] = { 0x0a };
static const uint8_t self_b[IDENTITY_ID_LEN] = { 0x0b };

static inline struct entry *
mk(const char *type, const char *fields_json, uint64_t phys, uint32_t logical,
    uint64_t lease_ms)
{
	struct entry_spec spec;
	struct dcbor_buf b;
	struct entry *e;
	json_error_t jerr;
	json_t *j = json_loads(fields_json, 0, &jerr);
	char err[128];

	ck_assert_msg(j != NULL, "bad JSON in test: %s", jerr.text);
	dcbor_buf_init(&b);
	ck_assert_int_eq(jcbor_from_json(&b, j, err, sizeof(err)), 0);
	json_decref(j);
	memset(&spec, 0, sizeof(spec));
	spec.space = "test";
	spec.type = type;
	spec.fields = b.data;
	spec.fields_len = b.len;
	spec.issuer = issuer;
	spec.stamp.phys = phys;
	spec.stamp.logical = logical;
	spec.stamp.node = 1;
	spec.lease_ms = lease_ms;
	spec.mono_us = 42;
	ck_assert_int_eq(entry_new(&spec, &e), ENTRY_OK);
	dcbor_buf_free(&b);
	return e;
}

static inline struct template *
tmpl(const char *json)
{
	json_error_t jerr;
	json_t *j = json_loads(json, 0, &jerr);
	struct template *t;
	char err[160];

	ck_assert_msg(j != NULL, "bad JSON in test: %s", jerr.text);
	t = template_from_json(j, err, sizeof(err));
	ck_assert_msg(t != NULL, "template %s: %s", json, err);
	json_decref(j);
	return t;
}

/* Integer field "n" of a record. */
static inline int64_t
field_n(const struct space_rec *r)
{
	struct val v;

	ck_assert(r != NULL);
	ck_assert_int_eq(entry_field(space_rec_entry(r), "n", 1, &v), 1);
	ck_assert_int_eq(v.type, VAL_INT);
	return v.i;
}

static inline uint64_t
rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

/* ---- replication helpers ---- */

struct wire {
	struct dcbor_buf	b;
	size_t			n;
};

static inline bool
wire_add(void *arg, const struct space_rec *r)
{
	struct wire *w = arg;

	space_rec_encode(&w->b, r);
	w->n++;
	return true;
}

#endif

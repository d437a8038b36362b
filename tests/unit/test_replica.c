/*
 * test_replica.c: remote records through replica_apply_record, with a
 * daemon state but no sockets.  A claim whose signature cannot be
 * verified must never change what read, take or the history see, whether
 * or not this peer has met its holder; a claim that verifies hides the
 * entry (the control that shows the test can fail).  And a record held
 * already, in a rumor plumtree.c has not seen, is stepped over unparsed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>

#include "clock.h"
#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "hlc.h"
#include "identity.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "stats.h"
#include "trace.h"

#include "plumtree.h"
#include "rumor.h"

#include "peerd_stub.h"
#include "record_util.h"

static struct member	*from;
static struct identity	 writer, holder;

static void
setup(void)
{
	uint8_t seed[IDENTITY_SEED_LEN], id[IDENTITY_ID_LEN];

	stub_conf();
	pd->conf.max_entries = 100;
	log_init("test_replica", LOG_LVL_ERROR, NULL);
	memset(seed, 7, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&pd->ident, seed), 0);
	memset(seed, 8, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&writer, seed), 0);
	memset(seed, 9, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(&holder, seed), 0);
	pd->base = event_base_new();
	ck_assert_ptr_nonnull(pd->base);
	trace_init(64);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	replica_init();
	/* The relay is a member; the holder never is. */
	memcpy(id, writer.id, sizeof(id));
	from = member_get(id, "relay", "127.0.0.1:1");
}

static void
teardown(void)
{
	stub_free();
	identity_free(&writer);
	identity_free(&holder);
}

enum forge { CLAIM_GOOD, CLAIM_GARBAGE_SIG, CLAIM_WRONG_KEY, CLAIM_NO_KEY };

/*
 * One record as a relay sends it: an entry by the writer, signed, with a
 * claim by the holder made as 'how' says.
 */
static void
make_record(struct dcbor_buf *out, enum forge how)
{
	uint64_t now = hlc_wall_ms();
	struct entry_spec spec;
	struct entry *e;
	struct space *other;
	struct crdt_claim c;
	struct dcbor_buf b;
	const uint8_t *body;
	size_t blen;
	uint8_t sig[IDENTITY_SIG_LEN], id[ENTRY_ID_LEN];

	memset(&spec, 0, sizeof(spec));
	spec.space = "default";
	spec.type = "task#v1";
	spec.fields = (const uint8_t *)"\xa0";	/* {} */
	spec.fields_len = 1;
	spec.issuer = writer.pub;
	spec.stamp = (struct hlc_stamp){ now, 0, writer.node };
	spec.lease_ms = 3600000;
	ck_assert_int_eq(entry_new(&spec, &e), ENTRY_OK);
	entry_signing_bytes(e, &body, &blen);
	ck_assert_int_eq(identity_sign(&writer, body, blen, sig), 0);
	entry_set_sig(e, sig);
	memcpy(id, e->id, sizeof(id));
	other = space_new(holder.node, holder.id, 10);
	ck_assert_int_eq(space_write(other, e, now), SPACE_OK);
	space_claim_make(other, space_get(other, id), &(struct hlc_stamp){
	    now, 1, holder.node }, now, 30000, &c);
	memcpy(c.key, holder.pub, IDENTITY_PUB_LEN);
	dcbor_buf_init(&b);
	crdt_claim_signing_bytes(&b, &c, id);
	ck_assert_int_eq(identity_sign(&holder, b.data, b.len, c.sig), 0);
	dcbor_buf_free(&b);
	switch (how) {
	case CLAIM_GOOD:
		break;
	case CLAIM_GARBAGE_SIG:
		memset(c.sig, 0x41, sizeof(c.sig));
		break;
	case CLAIM_WRONG_KEY:	/* a real signature, by a key not the holder's */
		memcpy(c.key, writer.pub, IDENTITY_PUB_LEN);
		dcbor_buf_init(&b);
		crdt_claim_signing_bytes(&b, &c, id);
		ck_assert_int_eq(identity_sign(&writer, b.data, b.len, c.sig),
		    0);
		dcbor_buf_free(&b);
		break;
	case CLAIM_NO_KEY:
		memset(c.key, 0, sizeof(c.key));
		break;
	}
	ck_assert_int_eq(space_claim(other, id, &c, now), SPACE_OK);
	space_rec_encode(out, space_get(other, id));
	space_free(other);
}

/* Apply the record; true when read still sees the entry afterwards. */
static bool
applied_visible(enum forge how)
{
	struct dcbor_buf b;
	struct dcbor_rd rd;
	struct template *t;
	bool seen;

	dcbor_buf_init(&b);
	make_record(&b, how);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(replica_apply_record(from, &rd), 0);
	dcbor_buf_free(&b);
	ck_assert_uint_eq(replica_count(), 1);
	t = template_new("task#v1");
	seen = replica_read(t) != NULL;
	template_free(t);
	ck_assert(seen == (replica_visible() == 1));
	return seen;
}

START_TEST(good_claim_hides_the_entry)
{
	ck_assert(!applied_visible(CLAIM_GOOD));
	ck_assert_uint_eq(pd_metrics.claims_rejected, 0);
}
END_TEST

START_TEST(garbage_signed_claim_has_no_effect)
{
	/* The holder is no member here: the claim's own key must verify it. */
	ck_assert_ptr_null(member_find(holder.id));
	ck_assert(applied_visible(CLAIM_GARBAGE_SIG));
	ck_assert_uint_eq(pd_metrics.claims_rejected, 1);
}
END_TEST

START_TEST(claim_under_another_key_has_no_effect)
{
	ck_assert(applied_visible(CLAIM_WRONG_KEY));
	ck_assert_uint_eq(pd_metrics.claims_rejected, 1);
}
END_TEST

START_TEST(claim_without_key_has_no_effect)
{
	ck_assert(applied_visible(CLAIM_NO_KEY));
	ck_assert_uint_eq(pd_metrics.claims_rejected, 1);
}
END_TEST

/* ---- records in rumors (plumtree.c on the real store) ------------------ */

#define ORIGIN_X	0x1111111111111111ull
#define ORIGIN_Y	0x2222222222222222ull

static struct member	*b, *c;

static void
setup_rumors(void)
{
	uint8_t id[IDENTITY_ID_LEN];

	setup();
	plumtree_init();
	memset(id, 0xbb, sizeof(id));
	b = member_get(id, "b", "127.0.0.1:1");
	memset(id, 0xcc, sizeof(id));
	c = member_get(id, "c", "127.0.0.1:1");
}

static void
teardown_rumors(void)
{
	plumtree_free();
	teardown();
}

/* A RUMOR body: rumor n alone (record_util.h's items), from ORIGIN_X. */
static void
rumor(struct dcbor_buf *buf, uint32_t n)
{
	struct dcbor_buf items;

	items_for(&items, n);
	dcbor_buf_init(buf);
	rumor_map_put(buf, rumor_rid(items.data, items.len), 8, ORIGIN_X,
	    items.data, items.len);
	dcbor_buf_free(&items);
}

static void
recv_rumor(struct member *m, struct dcbor_buf *buf)
{
	ck_assert_int_eq(plumtree_recv(m, FRAME_RUMOR, buf->data, buf->len),
	    0);
	dcbor_buf_free(buf);
}

/*
 * A record this peer holds, in a rumor whose rid it has not seen (a
 * repair brought the record first, and the tree's copy came after), is
 * stepped over unparsed and not verified again; the rumor's other record
 * is taken as ever.
 */
START_TEST(a_held_record_in_a_new_rumor_is_not_parsed)
{
	struct dcbor_buf buf, r1, r2, items;

	rumor(&buf, 0x3001);
	recv_rumor(b, &buf);
	ck_assert_uint_eq(pd_metrics.records_received, 1);
	ck_assert_uint_eq(pd_metrics.verifies_entry, 1);
	ck_assert_uint_eq(pd_metrics.records_held_skipped, 0);

	/* items [record 0x3001, record 0x3002]: a rid not seen yet. */
	items_for(&r1, 0x3001);
	items_for(&r2, 0x3002);
	dcbor_buf_init(&items);
	dcbor_put_array(&items, 2);
	dcbor_put_raw(&items, r1.data + 1, r1.len - 1);	/* past [1 */
	dcbor_put_raw(&items, r2.data + 1, r2.len - 1);
	dcbor_buf_init(&buf);
	dcbor_put_map(&buf, 4);
	dcbor_put_cstr(&buf, "rid");
	dcbor_put_uint(&buf, rumor_rid(items.data, items.len));
	dcbor_put_cstr(&buf, "hops");
	dcbor_put_uint(&buf, 8);
	dcbor_put_cstr(&buf, "items");
	dcbor_put_raw(&buf, items.data, items.len);
	dcbor_put_cstr(&buf, "origin");
	dcbor_put_uint(&buf, ORIGIN_Y);
	recv_rumor(c, &buf);
	ck_assert_uint_eq(pd_metrics.duplicates_dropped, 0);
	ck_assert_uint_eq(pd_metrics.records_received, 3);
	ck_assert_uint_eq(pd_metrics.records_held_skipped, 1);
	ck_assert_uint_eq(pd_metrics.verifies_entry, 2);
	ck_assert_uint_eq(pd_metrics.records_refused, 0);
	ck_assert_uint_eq(pd_metrics.entries_bad_signature, 0);
	ck_assert_uint_eq(replica_count(), 2);
	dcbor_buf_free(&r1);
	dcbor_buf_free(&r2);
	dcbor_buf_free(&items);
}
END_TEST

static Suite *
replica_suite(void)
{
	Suite *s = suite_create("replica");
	TCase *tc = tcase_create("claims");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, good_claim_hides_the_entry);
	tcase_add_test(tc, garbage_signed_claim_has_no_effect);
	tcase_add_test(tc, claim_under_another_key_has_no_effect);
	tcase_add_test(tc, claim_without_key_has_no_effect);
	suite_add_tcase(s, tc);
	tc = tcase_create("rumors");
	tcase_add_checked_fixture(tc, setup_rumors, teardown_rumors);
	tcase_add_test(tc, a_held_record_in_a_new_rumor_is_not_parsed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(replica_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

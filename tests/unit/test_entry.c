/*
 * test_entry.c: entries and the JSON bridge.  Round trips, the id check,
 * the payload cap, refusal of bad shapes, and that no truncation or byte
 * flip of an encoded entry crashes the decoder.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "dcbor.h"
#include "entry.h"
#include "jcbor.h"
#include "xmalloc.h"

static const uint8_t issuer[IDENTITY_PUB_LEN] = { 7 };

static void
fields_of(struct dcbor_buf *b, const char *json)
{
	json_t *j = json_loads(json, 0, NULL);
	char err[128];

	ck_assert_ptr_nonnull(j);
	dcbor_buf_init(b);
	ck_assert_int_eq(jcbor_from_json(b, j, err, sizeof(err)), 0);
	json_decref(j);
}

static int
mk(const char *json, const char *type, const char *const *tags, size_t ntags,
    struct entry **e)
{
	struct entry_spec s;
	struct dcbor_buf b;
	int rc;

	fields_of(&b, json);
	memset(&s, 0, sizeof(s));
	s.space = "sp";
	s.type = type;
	s.fields = b.data;
	s.fields_len = b.len;
	s.issuer = issuer;
	s.stamp = (struct hlc_stamp){ 1000, 2, 3 };
	s.lease_ms = 5000;
	s.mono_us = 99;
	s.tags = tags;
	s.ntags = ntags;
	rc = entry_new(&s, e);
	dcbor_buf_free(&b);
	return rc;
}

START_TEST(roundtrip)
{
	const char *tags[] = { "red", "blue" };
	struct entry *e, *d;
	struct dcbor_buf b;
	struct dcbor_rd rd;
	uint8_t sig[IDENTITY_SIG_LEN];
	const char *s;
	size_t n;
	struct val v;

	ck_assert_int_eq(mk("{\"b\":1,\"a\":\"x\"}", "job#v2", tags, 2, &e),
	    ENTRY_OK);
	memset(sig, 0x5a, sizeof(sig));
	entry_set_sig(e, sig);
	dcbor_buf_init(&b);
	entry_encode(&b, e);
	ck_assert_int_eq(dcbor_check(b.data, b.len, 64, true, NULL), DCBOR_OK);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_int_eq(entry_decode(&rd, &d), ENTRY_OK);
	ck_assert_uint_eq(dcbor_left(&rd), 0);
	ck_assert_mem_eq(d->id, e->id, ENTRY_ID_LEN);
	ck_assert_mem_eq(d->sig, sig, sizeof(sig));
	ck_assert_str_eq(d->type, "job#v2");
	ck_assert_str_eq(d->space, "sp");
	ck_assert_uint_eq(d->lease_ms, 5000);
	ck_assert_uint_eq(d->mono_us, 99);
	ck_assert_uint_eq(d->stamp.logical, 2);
	ck_assert_uint_eq(entry_expires_ms(d), 6000);
	ck_assert_int_eq(entry_tag(d, 1, &s, &n), 0);
	ck_assert(n == 4 && memcmp(s, "blue", 4) == 0);
	ck_assert_int_eq(entry_tag(d, 2, &s, &n), -1);
	ck_assert_int_eq(entry_field(d, "a", 1, &v), 1);
	ck_assert(v.type == VAL_TEXT && v.len == 1);
	ck_assert_int_eq(entry_field(d, "c", 1, &v), 0);
	{
		struct entry *c = entry_dup(d);

		ck_assert_int_eq(entry_field(c, "b", 1, &v), 1);
		ck_assert_int_eq(v.i, 1);
		ck_assert_int_eq(entry_cmp_fifo(c, d), 0);
		entry_free(c);
	}
	/* Every truncation and every single byte flip: an error, no crash. */
	for (size_t cut = 0; cut < b.len; cut++) {
		struct entry *x;

		dcbor_rd_init(&rd, b.data, cut);
		ck_assert_int_ne(entry_decode(&rd, &x), ENTRY_OK);
		ck_assert_ptr_null(x);
	}
	for (size_t i = 0; i < b.len; i++) {
		struct entry *x;
		uint8_t *copy = xmemdup(b.data, b.len);

		copy[i] ^= 0x21;
		dcbor_rd_init(&rd, copy, b.len);
		if (entry_decode(&rd, &x) == ENTRY_OK) {
			/* Only the signature bytes are free to change. */
			ck_assert_mem_eq(x->id, e->id, ENTRY_ID_LEN);
			entry_free(x);
		}
		free(copy);
	}
	entry_free(e);
	entry_free(d);
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(refusals)
{
	struct entry *e;
	const char *bad_tags[] = { "" };
	struct dcbor_buf b;
	struct dcbor_rd rd;
	char *big;

	ck_assert_int_eq(mk("{}", "job", NULL, 0, &e), ENTRY_ETYPE);
	ck_assert_int_eq(mk("{}", "job#1", NULL, 0, &e), ENTRY_ETYPE);
	ck_assert_int_eq(mk("{}", "j b#v1", NULL, 0, &e), ENTRY_ETYPE);
	ck_assert_int_eq(mk("[1]", "job#v1", NULL, 0, &e), ENTRY_EFIELDS);
	ck_assert_int_eq(mk("{}", "job#v1", bad_tags, 1, &e), ENTRY_ETAGS);
	/* Payload cap: 64 KiB of encoded fields. */
	big = malloc(ENTRY_PAYLOAD_MAX + 64);
	memset(big, 'x', ENTRY_PAYLOAD_MAX + 63);
	big[ENTRY_PAYLOAD_MAX + 63] = '\0';
	memcpy(big, "{\"k\":\"", 6);
	memcpy(big + ENTRY_PAYLOAD_MAX + 61, "\"}", 2);
	ck_assert_int_eq(mk(big, "job#v1", NULL, 0, &e), ENTRY_ETOOBIG);
	free(big);
	/* A wrong id. */
	ck_assert_int_eq(mk("{\"a\":1}", "job#v1", NULL, 0, &e), ENTRY_OK);
	e->id[0] ^= 1;
	dcbor_buf_init(&b);
	entry_encode(&b, e);
	dcbor_rd_init(&rd, b.data, b.len);
	entry_free(e);
	ck_assert_int_eq(entry_decode(&rd, &e), ENTRY_EID);
	ck_assert_str_eq(entry_strerror(ENTRY_EID), "id");
	dcbor_buf_free(&b);
}
END_TEST

START_TEST(json_bridge)
{
	const char *in = "{\"z\":[1,-2,2.5,true,null,\"s\"],\"a\":"
	    "{\"$bytes\":\"AAEC/w==\"},\"m\":{\"y\":{},\"x\":[]}}";
	json_t *j = json_loads(in, 0, NULL), *back;
	struct dcbor_buf b;
	struct dcbor_rd rd;
	char err[128];

	dcbor_buf_init(&b);
	ck_assert_int_eq(jcbor_from_json(&b, j, err, sizeof(err)), 0);
	ck_assert_int_eq(dcbor_check(b.data, b.len, 64, true, NULL), DCBOR_OK);
	dcbor_rd_init(&rd, b.data, b.len);
	back = jcbor_to_json(&rd);
	ck_assert_ptr_nonnull(back);
	ck_assert(json_equal(j, back));
	json_decref(back);
	json_decref(j);
	/* Bad base64, and too deep. */
	j = json_loads("{\"$bytes\":\"abc\"}", 0, NULL);
	ck_assert_int_eq(jcbor_from_json(&b, j, err, sizeof(err)), -1);
	json_decref(j);
	{
		char deep[200];
		int i;

		for (i = 0; i < 70; i++)
			deep[i] = '[';
		for (; i < 140; i++)
			deep[i] = ']';
		deep[i] = '\0';
		j = json_loads(deep, 0, NULL);
		ck_assert_int_eq(jcbor_from_json(&b, j, err, sizeof(err)), -1);
		json_decref(j);
	}
	/* CBOR that JSON cannot hold. */
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_uint(&b, 1);
	dcbor_put_uint(&b, 2);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_ptr_null(jcbor_to_json(&rd));
	dcbor_buf_reset(&b);
	dcbor_put_tag(&b, 1);
	dcbor_put_uint(&b, 2);
	dcbor_rd_init(&rd, b.data, b.len);
	ck_assert_ptr_null(jcbor_to_json(&rd));
	dcbor_buf_free(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("entry");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, roundtrip);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, json_bridge);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

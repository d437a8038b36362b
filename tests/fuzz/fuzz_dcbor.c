/*
 * fuzz_dcbor.c: libFuzzer target for common/dcbor.c, the gate every byte
 * from the network passes first.
 *
 * For any input: dcbor_check must not crash or read out of bounds, in
 * either mode.  When it passes, the cursor functions must walk the item to
 * exactly the length the checker reported (dcbor_next item by item,
 * dcbor_skip and dcbor_get_raw in one go), and reading then writing the
 * item (tests/unit/dcbor_walk.h) must give the input back byte for byte
 * when it was canonical; and every head of the input must decode exactly
 * as libcbor's cbor_stream_decode reads it (check_heads, the reference
 * dcbor.c used before it decoded heads itself).  Broken invariants abort, which libFuzzer saves
 * as a crash file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "dcbor.h"
#include "../unit/dcbor_ref.h"
#include "../unit/dcbor_walk.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

/* Every head in turn, by both decoders, until one fails: they must agree. */
static void
check_heads(const uint8_t *data, size_t size)
{
	struct dcbor_rd rd;
	const uint8_t *p = data;

	dcbor_rd_init(&rd, data, size);
	for (;;) {
		struct dcbor_item a, b;
		int rc_ref = dcbor_ref_head(&p, (size_t)(data + size - p), &b);
		int rc = dcbor_next(&rd, &a) == 0 ? DCBOR_OK : rd.err;

		REQUIRE(rc == rc_ref);
		if (rc != DCBOR_OK)
			return;
		REQUIRE(dcbor_ref_same(&a, &b) && rd.p == p);
	}
}

/* Count the items of one item by dcbor_next alone; -1 on a reader error. */
static long
walk_count(struct dcbor_rd *rd)
{
	struct dcbor_item it;
	uint64_t need = 1;
	long n = 0;

	while (need > 0) {
		if (dcbor_next(rd, &it) == -1)
			return -1;
		n++;
		need--;
		if (it.type == DCBOR_ARRAY)
			need += it.u;
		else if (it.type == DCBOR_MAP)
			need += 2 * it.u;
		else if (it.type == DCBOR_TAG)
			need++;
		if (it.type == DCBOR_BYTES || it.type == DCBOR_TEXT)
			REQUIRE(it.ptr + it.len <= rd->end &&
			    it.start + it.head + it.len == rd->p);
	}
	return n;
}

static void
check_item(const uint8_t *data, size_t used, bool canonical)
{
	struct dcbor_buf out, again;
	struct dcbor_rd rd;
	const uint8_t *raw;
	size_t rawlen;

	/* dcbor_next item by item. */
	dcbor_rd_init(&rd, data, used);
	REQUIRE(walk_count(&rd) > 0);
	REQUIRE(dcbor_left(&rd) == 0);

	/* dcbor_skip and dcbor_get_raw agree on the span. */
	dcbor_rd_init(&rd, data, used);
	REQUIRE(dcbor_skip(&rd) == 0 && dcbor_left(&rd) == 0);
	dcbor_rd_init(&rd, data, used);
	REQUIRE(dcbor_get_raw(&rd, &raw, &rawlen) == 0);
	REQUIRE(raw == data && rawlen == used);

	/* Read, write: the same bytes when canonical; stable either way. */
	dcbor_buf_init(&out);
	dcbor_buf_init(&again);
	dcbor_rd_init(&rd, data, used);
	REQUIRE(dcbor_walk_copy(&rd, &out) == 0);
	REQUIRE(dcbor_left(&rd) == 0);
	if (canonical) {
		REQUIRE(out.len == used && memcmp(out.data, data, used) == 0);
	} else {
		/* Shortest heads and floats now; map order is untouched. */
		int rc = dcbor_check(out.data, out.len, DCBOR_MAX_DEPTH, true,
		    NULL);

		REQUIRE(rc == DCBOR_OK || rc == DCBOR_ENONCANON ||
		    rc == DCBOR_EDUPKEY || rc == DCBOR_EUTF8);
		REQUIRE(out.len <= used);
		dcbor_rd_init(&rd, out.data, out.len);
		REQUIRE(dcbor_walk_copy(&rd, &again) == 0);
		REQUIRE(again.len == out.len &&
		    memcmp(again.data, out.data, out.len) == 0);
	}

	/* Sorting a canonical map must not move a byte. */
	if (canonical && (data[0] >> 5) == 5) {
		dcbor_buf_reset(&again);
		dcbor_put_raw(&again, data, used);
		REQUIRE(dcbor_sort_map(&again, 0) == DCBOR_OK);
		REQUIRE(memcmp(again.data, data, used) == 0);
	}
	dcbor_buf_free(&out);
	dcbor_buf_free(&again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used_c = 0, used_n = 0;
	int whole_c, whole_n, pre_c, pre_n;

	whole_n = dcbor_check(data, size, DCBOR_MAX_DEPTH, false, NULL);
	whole_c = dcbor_check(data, size, DCBOR_MAX_DEPTH, true, NULL);
	pre_n = dcbor_check(data, size, DCBOR_MAX_DEPTH, false, &used_n);
	pre_c = dcbor_check(data, size, DCBOR_MAX_DEPTH, true, &used_c);

	/* Canonical is a subset of well-formed. */
	if (whole_c == DCBOR_OK)
		REQUIRE(whole_n == DCBOR_OK);
	if (pre_c == DCBOR_OK)
		REQUIRE(pre_n == DCBOR_OK && used_n == used_c);
	/* One item with nothing after it, or an item and trailing bytes. */
	if (whole_n == DCBOR_OK)
		REQUIRE(pre_n == DCBOR_OK && used_n == size);
	if (pre_n == DCBOR_OK && used_n < size)
		REQUIRE(whole_n == DCBOR_ETRAILING);
	if (pre_n == DCBOR_OK)
		REQUIRE(used_n > 0 && used_n <= size);

	if (pre_n == DCBOR_OK)
		check_item(data, used_n, pre_c == DCBOR_OK);
	check_heads(data, size);
	return 0;
}

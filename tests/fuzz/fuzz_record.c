/*
 * fuzz_record.c: libFuzzer target for the wire record's two decoders,
 * space_rec_decode and space_rec_decode_known (common/space.c), and
 * entry_decode under them.
 *
 * The input is wire records one after another.  A first pass decodes them
 * with space_rec_decode and merges every entry it gives into a space, so
 * a later record may be a copy of one the space holds.  A second pass
 * decodes the input again, record by record, with both decoders side by
 * side, the known one against that space.  They must agree on every
 * record: the same refusal at the same record, or the same state and the
 * same entry, ending at the same byte; and where the known decoder steps
 * over a held copy (1), the plain one must give an entry that encodes
 * byte for byte as the held one.  So the shortcut never takes a record the
 * full decoder refuses, nor reads one differently.  Broken invariants
 * abort, which libFuzzer saves as a crash file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "space.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)
#define NOW_MS		1700000000000ull
#define MAX_RECORDS	64

static const uint8_t	 self[IDENTITY_ID_LEN] = { 0x5e };
static const uint8_t	 zero_id[ENTRY_ID_LEN];

/* a and b encode the same (either may be NULL: then both must be). */
static void
same_entry(const struct entry *a, const struct entry *b)
{
	struct dcbor_buf x, y;

	REQUIRE((a == NULL) == (b == NULL));
	if (a == NULL)
		return;
	dcbor_buf_init(&x);
	dcbor_buf_init(&y);
	entry_encode(&x, a);
	entry_encode(&y, b);
	REQUIRE(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
	dcbor_buf_free(&x);
	dcbor_buf_free(&y);
}

static void
same_rec(const struct crdt_rec *a, const struct crdt_rec *b)
{
	struct dcbor_buf x, y;

	dcbor_buf_init(&x);
	dcbor_buf_init(&y);
	crdt_rec_encode(&x, a);
	crdt_rec_encode(&y, b);
	REQUIRE(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
	dcbor_buf_free(&x);
	dcbor_buf_free(&y);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct space *sp = space_new(1, self, 100);
	struct dcbor_rd rd, r1, r2;
	struct crdt_rec cr, c1, c2;
	struct entry *e, *e1, *e2;

	REQUIRE(sp != NULL);
	dcbor_rd_init(&rd, data, size);
	for (int i = 0; i < MAX_RECORDS && dcbor_left(&rd) > 0; i++) {
		crdt_rec_init(&cr, zero_id);
		if (space_rec_decode(&rd, &e, &cr) == -1) {
			REQUIRE(e == NULL);
			crdt_rec_free(&cr);
			break;
		}
		(void)space_merge(sp, e, &cr, NOW_MS);	/* e consumed */
		crdt_rec_free(&cr);
	}

	dcbor_rd_init(&r1, data, size);
	dcbor_rd_init(&r2, data, size);
	for (int i = 0; i < MAX_RECORDS && dcbor_left(&r1) > 0; i++) {
		int rc1, rc2;

		crdt_rec_init(&c1, zero_id);
		crdt_rec_init(&c2, zero_id);
		rc1 = space_rec_decode(&r1, &e1, &c1);
		rc2 = space_rec_decode_known(sp, &r2, &e2, &c2);
		if (rc2 == 1) {
			const struct space_rec *h = space_get(sp, c2.id);

			REQUIRE(rc1 == 0 && e1 != NULL && e2 == NULL);
			REQUIRE(h != NULL && space_rec_entry(h) != NULL);
			same_entry(e1, space_rec_entry(h));
		} else {
			REQUIRE(rc1 == rc2);
			if (rc1 == 0)
				same_entry(e1, e2);
			else
				REQUIRE(e1 == NULL && e2 == NULL);
		}
		entry_free(e1);
		entry_free(e2);
		if (rc1 == -1) {
			crdt_rec_free(&c1);
			crdt_rec_free(&c2);
			break;
		}
		same_rec(&c1, &c2);
		REQUIRE(r1.p == r2.p);
		crdt_rec_free(&c1);
		crdt_rec_free(&c2);
	}
	space_free(sp);
	return 0;
}

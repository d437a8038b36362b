/*
 * dcbor_walk.h: a test helper shared by tests/unit/test_dcbor.c and
 * tests/fuzz/fuzz_dcbor.c.  It walks one item with the pull reader and
 * writes it again with the dcbor_put_* writer, so that for canonical input
 * "read then write" must give back the very same bytes: a round trip
 * through both halves of dcbor.c.  Header-only and static because it is
 * test code, not part of libcommon.
 */
#ifndef DCBOR_WALK_H
#define DCBOR_WALK_H

#include "dcbor.h"

/*
 * Copy one item from rd to out, nested items included.  The caller has
 * passed the input through dcbor_check, which bounds the recursion.
 * 0, or -1 with rd->err set.
 */
static int
dcbor_walk_copy(struct dcbor_rd *rd, struct dcbor_buf *out)
{
	struct dcbor_item it;
	uint64_t n = 0;
	uint8_t undef = 0xf7;

	if (dcbor_next(rd, &it) == -1)
		return -1;
	switch (it.type) {
	case DCBOR_UINT:
		dcbor_put_uint(out, it.u);
		break;
	case DCBOR_NEGINT:
		dcbor_put_negint(out, it.u);
		break;
	case DCBOR_BYTES:
		dcbor_put_bytes(out, it.ptr, it.len);
		break;
	case DCBOR_TEXT:
		dcbor_put_text(out, (const char *)it.ptr, it.len);
		break;
	case DCBOR_ARRAY:
		dcbor_put_array(out, (size_t)it.u);
		n = it.u;
		break;
	case DCBOR_MAP:
		dcbor_put_map(out, (size_t)it.u);
		n = 2 * it.u;
		break;
	case DCBOR_TAG:
		dcbor_put_tag(out, it.u);
		n = 1;
		break;
	case DCBOR_BOOL:
		dcbor_put_bool(out, it.b);
		break;
	case DCBOR_NULL:
		dcbor_put_null(out);
		break;
	case DCBOR_UNDEF:
		dcbor_put_raw(out, &undef, 1);
		break;
	case DCBOR_FLOAT:
		dcbor_put_float(out, it.f);
		break;
	}
	while (n-- > 0)
		if (dcbor_walk_copy(rd, out) == -1)
			return -1;
	return 0;
}

#endif

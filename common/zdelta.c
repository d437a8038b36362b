/*
 * zdelta.c: make and apply level-2 delta frames (see zdelta.h).
 */
#include <string.h>

#include "dcbor.h"
#include "pnode.h"
#include "zdelta.h"

size_t
zdelta_make(struct dcbor_buf *out, const uint8_t base_id[PNODE_ID_LEN],
    const uint8_t *base, size_t bn, const uint8_t *new, size_t nn)
{
	struct pnode_zop ops[3];
	size_t pre = 0, suf = 0, nops = 0, start = out->len;

	while (pre < bn && pre < nn && base[pre] == new[pre])
		pre++;
	while (suf < bn - pre && suf < nn - pre &&
	    base[bn - 1 - suf] == new[nn - 1 - suf])
		suf++;
	if (pre > 0)
		ops[nops++] = (struct pnode_zop){ .off = 0, .len = pre };
	if (nn - pre - suf > 0)
		ops[nops++] = (struct pnode_zop){ .add = true,
		    .len = nn - pre - suf, .bytes = new + pre };
	if (suf > 0)
		ops[nops++] = (struct pnode_zop){ .off = bn - suf,
		    .len = suf };
	pnode_z_encode(out, base_id, nn, ops, nops);
	return out->len - start;
}

int
zdelta_apply(const uint8_t *f, size_t fn, const uint8_t *base, size_t bn,
    const uint8_t want_id[PNODE_ID_LEN], struct dcbor_buf *out,
    const char **why)
{
	struct pnode_z z;
	uint8_t id[PNODE_ID_LEN], *dst;

	dcbor_buf_reset(out);
	if (pnode_z_decode(f, fn, &z) == -1) {
		*why = "not a z frame";
		return -1;
	}
	pnode_id(base, bn, id);
	if (memcmp(id, z.base, PNODE_ID_LEN) != 0) {
		*why = "the frame names another base";
		goto bad;
	}
	dst = dcbor_buf_reserve(out, (size_t)z.new_len);
	for (size_t i = 0; i < z.nops; i++) {
		const struct pnode_zop *op = &z.ops[i];

		if (op->add)
			memcpy(dst, op->bytes, (size_t)op->len);
		else if (op->off > bn || op->len > bn - op->off) {
			*why = "a COPY outside the base";
			goto bad;
		} else
			memcpy(dst, base + op->off, (size_t)op->len);
		dst += op->len;
	}
	pnode_id(out->data, (size_t)z.new_len, id);
	if (memcmp(id, want_id, PNODE_ID_LEN) != 0) {
		*why = "the result does not hash to the expected chunk";
		goto bad;
	}
	out->len = (size_t)z.new_len;
	pnode_z_free(&z);
	return 0;
bad:
	pnode_z_free(&z);
	return -1;
}

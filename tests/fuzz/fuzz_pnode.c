/*
 * fuzz_pnode.c: libFuzzer target for the node decoders of common/pnode.c
 * (b, z, bo and m bodies) and for zdelta_apply.
 *
 * The first input byte picks the kind (b, z, bo, m; its two low bits);
 * the rest is the node.  Whatever decodes must be exactly what the
 * encoder makes of the decoded fields (one spelling of every node, so an
 * id names one thing), its children must walk without error, and a z
 * frame applied to a fixed base must either fail or give new_len bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "pnode.h"
#include "zdelta.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static int
kid(void *arg, int kind, const uint8_t *id, uint64_t level, uint64_t len)
{
	(void)arg;
	(void)level;
	(void)len;
	REQUIRE(kind > PNODE_NONE && kind < PNODE_NKINDS && id != NULL);
	return 0;
}

static void
same(struct dcbor_buf *b, const uint8_t *p, size_t n)
{
	REQUIRE(b->len == n && memcmp(b->data, p, n) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int kinds[4] = { PNODE_B, PNODE_Z, PNODE_BO, PNODE_M };
	struct dcbor_buf b;
	const uint8_t *p;
	size_t n;
	int kind;

	if (size < 1)
		return 0;
	kind = kinds[data[0] & 3];
	p = data + 1;
	n = size - 1;
	dcbor_buf_init(&b);
	if (kind == PNODE_B) {
		struct pnode_b nb;

		if (pnode_b_decode(p, n, &nb) == 0) {
			pnode_b_encode(&b, nb.level, nb.kids, nb.n);
			same(&b, p, n);
		}
	} else if (kind == PNODE_Z) {
		struct pnode_z z;
		static uint8_t base[300];
		uint8_t want[PNODE_ID_LEN] = { 0 };
		const char *why;

		if (pnode_z_decode(p, n, &z) == 0) {
			struct dcbor_buf out;

			pnode_z_encode(&b, z.base, z.new_len, z.ops, z.nops);
			same(&b, p, n);
			dcbor_buf_init(&out);
			for (size_t i = 0; i < sizeof(base); i++)
				base[i] = (uint8_t)i;
			if (zdelta_apply(p, n, base, sizeof(base), want, &out,
			    &why) == 0)
				REQUIRE(out.len == z.new_len);
			dcbor_buf_free(&out);
			pnode_z_free(&z);
		}
	} else if (kind == PNODE_BO) {
		struct pnode_bo bo;

		if (pnode_bo_decode(p, n, &bo) == 0) {
			if (bo.level == 0)
				pnode_bo_leaf_encode(&b, bo.pairs, bo.npairs);
			else {
				struct dcbor_buf ids;

				dcbor_buf_init(&ids);
				for (size_t i = 0; i < bo.nleaves; i++)
					dcbor_put_raw(&ids,
					    pnode_bo_leaf_id(&bo, i),
					    PNODE_ID_LEN);
				pnode_bo_top_encode(&b, bo.content_len,
				    bo.group_log, bo.span_log, bo.pairs,
				    bo.npairs, ids.data, bo.nleaves);
				dcbor_buf_free(&ids);
			}
			same(&b, p, n);
		}
	} else {
		struct pnode_m m;

		if (pnode_m_decode(p, n, &m) == 0) {
			pnode_m_encode(&b, m.level, m.e, m.n);
			same(&b, p, n);
			pnode_m_free(&m);
		}
	}
	if (pnode_check(kind, p, n) == 0) {
		REQUIRE(pnode_kind_of(p, n) == kind);
		REQUIRE(pnode_children(kind, p, n, kid, NULL) == 0);
	}
	dcbor_buf_free(&b);
	return 0;
}

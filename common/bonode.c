/*
 * bonode.c: split a Bao outboard into bo nodes and join it back (see
 * bonode.h).  Both walk the tree's shape, which depends only on the number
 * of groups, in pre-order with a cursor in the outboard.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bao.h"
#include "bonode.h"
#include "dcbor.h"
#include "nodestore.h"
#include "pnode.h"

static uint64_t
left_groups(uint64_t n)
{
	uint64_t l = 1;

	while (2 * l < n)
		l *= 2;
	return l;
}

/*
 * The pre-order walk of n groups: pairs above the spans go to top, each
 * span's run of pairs to fn (split) or from it (join, swapping roles).
 */
struct shape {
	uint64_t	 span;		/* groups a span */
	uint64_t	 cur;		/* the cursor, in pairs */
	int		(*span_fn)(void *arg, uint64_t first_pair,
			    uint64_t npairs);
	int		(*top_fn)(void *arg, uint64_t pair);
	void		*arg;
};

static int
walk(struct shape *sh, uint64_t n)
{
	uint64_t l;

	if (n <= sh->span) {
		uint64_t first = sh->cur;

		sh->cur += n - 1;
		return sh->span_fn(sh->arg, first, n - 1);
	}
	if (sh->top_fn(sh->arg, sh->cur++) == -1)
		return -1;
	l = left_groups(n);
	if (walk(sh, l) == -1)
		return -1;
	return walk(sh, n - l);
}

struct split {
	struct nodestore	*s;
	const uint8_t		*pairs;
	struct dcbor_buf	 top, ids, node;
};

static int
split_span(void *arg, uint64_t first, uint64_t npairs)
{
	struct split *x = arg;
	uint8_t id[PNODE_ID_LEN];

	dcbor_buf_reset(&x->node);
	pnode_bo_leaf_encode(&x->node, x->pairs + first * PNODE_BO_PAIR_LEN,
	    (size_t)npairs);
	if (nodestore_put(x->s, PNODE_BO, x->node.data, x->node.len, id) == -1)
		return -1;
	dcbor_put_raw(&x->ids, id, PNODE_ID_LEN);
	return 0;
}

static int
split_top(void *arg, uint64_t pair)
{
	struct split *x = arg;

	dcbor_put_raw(&x->top, x->pairs + pair * PNODE_BO_PAIR_LEN,
	    PNODE_BO_PAIR_LEN);
	return 0;
}

int
bonode_split(struct nodestore *s, const uint8_t *ob, size_t oblen,
    unsigned g, unsigned span_log, uint8_t top[PNODE_ID_LEN], char *err,
    size_t errlen)
{
	struct split x = { s, ob + 8, { 0 }, { 0 }, { 0 } };
	struct shape sh = { 1ull << span_log, 0, split_span, split_top, &x };
	uint64_t clen;
	int rc = -1;

	if (oblen < 8 || g > BAO_GROUP_LOG_MAX || span_log > PNODE_BO_MAX_SPAN_LOG ||
	    (clen = bao_header_content_len(ob)) > PNODE_BLOB_MAX ||
	    oblen != bao_outboard_len(clen, g)) {
		snprintf(err, errlen, "not an outboard of group log %u", g);
		return -1;
	}
	if (walk(&sh, bao_groups(clen, g)) == 0) {
		dcbor_buf_reset(&x.node);
		pnode_bo_top_encode(&x.node, clen, g, span_log, x.top.data,
		    x.top.len / PNODE_BO_PAIR_LEN, x.ids.data,
		    x.ids.len / PNODE_ID_LEN);
		rc = nodestore_put(s, PNODE_BO, x.node.data, x.node.len, top);
	}
	if (rc == -1)
		snprintf(err, errlen, "store a bo node");
	dcbor_buf_free(&x.top);
	dcbor_buf_free(&x.ids);
	dcbor_buf_free(&x.node);
	return rc == -1 ? -1 : 0;
}

struct join {
	struct pnode_src	*src;
	struct pnode_bo		 top;
	size_t			 leaf;	/* the next leaf */
	struct dcbor_buf	*out;
	struct dcbor_buf	 b;
};

static int
join_span(void *arg, uint64_t first, uint64_t npairs)
{
	struct join *x = arg;
	struct pnode_bo leaf;
	int kind;

	(void)first;
	if (x->leaf >= x->top.nleaves ||
	    x->src->get(x->src->arg, pnode_bo_leaf_id(&x->top, x->leaf++),
	    &x->b, &kind) != 0 ||
	    pnode_bo_decode(x->b.data, x->b.len, &leaf) == -1 ||
	    leaf.level != 0 || leaf.npairs != npairs)
		return -1;
	dcbor_put_raw(x->out, leaf.pairs, leaf.npairs * PNODE_BO_PAIR_LEN);
	return 0;
}

static int
join_top(void *arg, uint64_t pair)
{
	struct join *x = arg;

	(void)pair;
	/* The top's pairs come in the walk's order, one by one. */
	if (x->top.npairs == 0)
		return -1;
	dcbor_put_raw(x->out, x->top.pairs, PNODE_BO_PAIR_LEN);
	x->top.pairs += PNODE_BO_PAIR_LEN;
	x->top.npairs--;
	return 0;
}

int
bonode_join(struct pnode_src *src, const uint8_t top[PNODE_ID_LEN],
    struct dcbor_buf *out)
{
	struct dcbor_buf tb;
	struct join x;
	struct shape sh;
	uint8_t hdr[8];
	int kind, rc = -1;

	dcbor_buf_init(&tb);
	memset(&x, 0, sizeof(x));
	dcbor_buf_reset(out);
	if (src->get(src->arg, top, &tb, &kind) != 0 ||
	    pnode_bo_decode(tb.data, tb.len, &x.top) == -1 ||
	    x.top.level != 1)
		goto out;
	for (int i = 0; i < 8; i++)
		hdr[i] = (uint8_t)(x.top.content_len >> (8 * i));
	dcbor_put_raw(out, hdr, sizeof(hdr));
	x.src = src;
	x.out = out;
	sh = (struct shape){ 1ull << x.top.span_log, 0, join_span, join_top,
	    &x };
	if (walk(&sh, bao_groups(x.top.content_len, x.top.group_log)) ==
	    0 && x.leaf == x.top.nleaves && x.top.npairs == 0)
		rc = 0;
out:
	dcbor_buf_free(&x.b);
	dcbor_buf_free(&tb);
	return rc;
}

void
bonode_window(uint64_t content_len, unsigned g, unsigned span_log,
    uint64_t off, uint64_t len, uint64_t *first, uint64_t *last)
{
	uint64_t gsz = 1024ull << g, groups = bao_groups(content_len, g);
	uint64_t end;

	if (len == 0)
		len = 1;
	end = off + len - 1;
	if (off / gsz >= groups)
		off = (groups - 1) * gsz;
	if (end / gsz >= groups)
		end = (groups - 1) * gsz;
	*first = (off / gsz) >> span_log;
	*last = (end / gsz) >> span_log;
}

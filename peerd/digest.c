/*
 * digest.c: anti-entropy by digest and delta (see digest.h): DIGEST
 * {"b": [DIGEST_BUCKETS hashes]} is answered by PULL_RESP {"diff",
 * "more", "recs", "final"} with the records of the buckets that differ,
 * and the asker sends its own back (final).  A delta is taken only from
 * a member this peer asked or answered within the window.  The records
 * are the replica's; this file moves them.
 */
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "dcbor.h"
#include "digest.h"
#include "frame.h"
#include "link.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "stats.h"

void
digest_send(struct member *m)
{
	uint64_t dig[DIGEST_BUCKETS];
	struct dcbor_buf b;

	replica_digest(dig, DIGEST_BUCKETS);
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "b");
	dcbor_put_array(&b, DIGEST_BUCKETS);
	for (size_t i = 0; i < DIGEST_BUCKETS; i++)
		dcbor_put_uint(&b, dig[i]);
	if (link_send_member(m, FRAME_DIGEST, b.data, b.len) == 0) {
		m->ae_asked_ms = clock_mono_ms();
		pd_count(digests_sent);
	}
	dcbor_buf_free(&b);
}

static void
send_pull(struct member *m, const bool diff[DIGEST_BUCKETS], bool final)
{
	struct dcbor_buf b;
	size_t ndiff = 0, nrec;
	bool more = false;

	for (size_t i = 0; i < DIGEST_BUCKETS; i++)
		ndiff += diff[i];
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "diff");
	dcbor_put_array(&b, ndiff);
	for (size_t i = 0; i < DIGEST_BUCKETS; i++)
		if (diff[i])
			dcbor_put_uint(&b, i);
	dcbor_put_cstr(&b, "more");
	{
		size_t at = b.len;

		dcbor_put_bool(&b, false);
		dcbor_put_cstr(&b, "recs");
		nrec = replica_put_records(&b, diff, DIGEST_BUCKETS,
		    DIGEST_PULL_MAX, &more);
		if (more)
			b.data[at] = 0xf5;	/* true, same length */
	}
	dcbor_put_cstr(&b, "final");
	dcbor_put_bool(&b, final);
	if (link_send_member(m, FRAME_PULL_RESP, b.data, b.len) == 0) {
		pd_count(deltas_sent);
		pd_count_add(delta_entries, nrec);
	}
	dcbor_buf_free(&b);
}

static int
recv_digest(struct member *from, const uint8_t *body, size_t len)
{
	uint64_t mine[DIGEST_BUCKETS], n, v;
	bool diff[DIGEST_BUCKETS];
	struct dcbor_rd rd;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 1 ||
	    dcbor_get_key(&rd, "b") == -1 ||
	    dcbor_get_array(&rd, &n) == -1 || n != DIGEST_BUCKETS)
		return -1;
	pd_count(digests_received);
	replica_digest(mine, DIGEST_BUCKETS);
	for (size_t i = 0; i < DIGEST_BUCKETS; i++) {
		if (dcbor_get_uint(&rd, &v) == -1)
			return -1;
		diff[i] = v != mine[i];
	}
	from->ae_answered_ms = clock_mono_ms();
	send_pull(from, diff, false);
	return 0;
}

static int
recv_pull(struct member *from, const uint8_t *body, size_t len)
{
	bool diff[DIGEST_BUCKETS] = { false };
	bool final = false, more = false;
	struct dcbor_rd rd;
	uint64_t n, cnt, idx;
	uint64_t now = clock_mono_ms(), window = 10u * pd->conf.gossip_ms +
	    10000u;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 4)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *k;
		size_t kl;

		if (dcbor_get_text(&rd, &k, &kl) == -1)
			return -1;
		if (dcbor_text_is(k, kl, "diff")) {
			if (dcbor_get_array(&rd, &cnt) == -1 ||
			    cnt > DIGEST_BUCKETS)
				return -1;
			for (uint64_t j = 0; j < cnt; j++) {
				if (dcbor_get_uint(&rd, &idx) == -1 ||
				    idx >= DIGEST_BUCKETS)
					return -1;
				diff[idx] = true;
			}
		} else if (dcbor_text_is(k, kl, "more")) {
			if (dcbor_get_bool(&rd, &more) == -1)
				return -1;
		} else if (dcbor_text_is(k, kl, "recs")) {
			/* Accept deltas only from a peer we are talking to. */
			bool asked = from->ae_asked_ms != 0 &&
			    now - from->ae_asked_ms < window;
			bool answered = from->ae_answered_ms != 0 &&
			    now - from->ae_answered_ms < window;

			if (!asked && !answered) {
				pd_count_reject(UNASKED_DELTA);
				return 0;
			}
			pd_count(deltas_received);
			if (replica_apply_items(from, &rd) == -1)
				return -1;
		} else if (dcbor_text_is(k, kl, "final")) {
			if (dcbor_get_bool(&rd, &final) == -1)
				return -1;
		} else
			return -1;
	}
	if (dcbor_left(&rd) != 0)
		return -1;
	if (final) {
		from->ae_answered_ms = 0;
		return 0;
	}
	from->ae_asked_ms = 0;
	send_pull(from, diff, true);
	if (more)
		digest_send(from);	/* there is more: go on at once */
	return 0;
}

int
digest_recv(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	return kind == FRAME_DIGEST ? recv_digest(from, body, len) :
	    recv_pull(from, body, len);
}

/* The link-layer handler for DIGEST and PULL_RESP. */
static int
digest_frame(struct member *from, const struct frame *f, const char **why)
{
	if (digest_recv(from, f->kind, f->body, f->body_len) == -1) {
		pd_count(bad_body);
		*why = "malformed frame body";
		return -1;
	}
	return 0;
}

/* A link went down: what it asked or answered is over. */
static void
digest_link(struct member *m, bool up)
{
	if (up)
		return;
	m->ae_asked_ms = 0;
	m->ae_answered_ms = 0;
}

void
digest_init(void)
{
	link_register(FRAME_DIGEST, digest_frame);
	link_register(FRAME_PULL_RESP, digest_frame);
	link_observe(digest_link);
}

/*
 * gossip.c: the gossip kinds' dispatch, anti-entropy by digest and delta,
 * PING/ACK/PING_REQ (see gossip.h and docs/protocol.md); the broadcast
 * itself (Plumtree, one tree per origin) is plumtree.c's.  The records
 * themselves are the replica's business: this file moves them.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <xxhash.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "gossip.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "plumtree.h"
#include "recon.h"
#include "replica.h"
#include "take.h"
#include "trace.h"
#include "vote.h"
#include "xmalloc.h"

static uint64_t		 last_ae_ms;

int
gossip_apply_items(struct member *from, struct dcbor_rd *rd)
{
	uint64_t n;

	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (replica_apply_record(from, rd) == -1)
			return -1;
	return 0;
}

uint64_t
gossip_rid(const uint8_t *items, size_t len)
{
	return XXH3_64bits(items, len) | 1;
}

void
gossip_queue(const uint8_t *rec, size_t len)
{
	plumtree_queue(rec, len);
}

void
gossip_send_urgent(const uint8_t *recs, size_t len, size_t n)
{
	plumtree_send_urgent(recs, len, n);
}

double
gossip_tree_degree(void)
{
	return plumtree_tree_degree();
}

/* ---- anti-entropy ------------------------------------------------------ */

static void
send_digest(struct member *m)
{
	uint64_t dig[GOSSIP_BUCKETS];
	struct dcbor_buf b;

	replica_digest(dig);
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "b");
	dcbor_put_array(&b, GOSSIP_BUCKETS);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		dcbor_put_uint(&b, dig[i]);
	if (link_send_member(m, FRAME_DIGEST, b.data, b.len) == 0) {
		m->ae_asked_ms = clock_mono_ms();
		pd_count(digests_sent);
	}
	dcbor_buf_free(&b);
}

void
gossip_digest(struct member *m)
{
	send_digest(m);
}

/* Anti-entropy by --reconcile; the digest unless recon.c takes it. */
static void
ae_start(struct member *m, bool link_up)
{
	if (recon_start(m, link_up) == -1)
		send_digest(m);
}

static void
send_pull(struct member *m, const bool diff[GOSSIP_BUCKETS], bool final)
{
	struct dcbor_buf b;
	size_t ndiff = 0, nrec;
	bool more = false;

	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		ndiff += diff[i];
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "diff");
	dcbor_put_array(&b, ndiff);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		if (diff[i])
			dcbor_put_uint(&b, i);
	dcbor_put_cstr(&b, "more");
	{
		size_t at = b.len;

		dcbor_put_bool(&b, false);
		dcbor_put_cstr(&b, "recs");
		nrec = replica_put_records(&b, diff, GOSSIP_PULL_MAX, &more);
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
	uint64_t mine[GOSSIP_BUCKETS], n, v;
	bool diff[GOSSIP_BUCKETS];
	struct dcbor_rd rd;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 1 ||
	    dcbor_get_key(&rd, "b") == -1 ||
	    dcbor_get_array(&rd, &n) == -1 || n != GOSSIP_BUCKETS)
		return -1;
	pd_count(digests_received);
	replica_digest(mine);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++) {
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
	bool diff[GOSSIP_BUCKETS] = { false };
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
			    cnt > GOSSIP_BUCKETS)
				return -1;
			for (uint64_t j = 0; j < cnt; j++) {
				if (dcbor_get_uint(&rd, &idx) == -1 ||
				    idx >= GOSSIP_BUCKETS)
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
			if (gossip_apply_items(from, &rd) == -1)
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
		send_digest(from);	/* there is more: go on at once */
	return 0;
}

/* ---- PING and ACK (view.c sends the pings) ------------------------------ */

static int
recv_ping(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	struct dcbor_rd rd;
	uint64_t n, seq = 0;
	uint8_t target[IDENTITY_ID_LEN];
	bool have_target = false;
	struct dcbor_buf b;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n < 1 || n > 2)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		char key[8];

		if (dcbor_get_cstr(&rd, key, sizeof(key)) == -1)
			return -1;
		if (strcmp(key, "seq") == 0) {
			if (dcbor_get_uint(&rd, &seq) == -1)
				return -1;
		} else if (strcmp(key, "target") == 0) {
			if (dcbor_get_fixed(&rd, target, sizeof(target)) == -1)
				return -1;
			have_target = true;
		} else
			return -1;
	}
	if (kind == FRAME_ACK) {
		struct member *t;

		if (have_target && (t = member_find(target)) != NULL)
			member_heard(t);
		else
			member_ack(from, seq);
		return 0;
	}
	if (kind == FRAME_PING_REQ) {
		struct member *t;

		if (!have_target)
			return -1;
		/* Vouch for the target only if we heard it recently. */
		t = member_find(target);
		if (t == NULL || t->last_heard_ms == 0 || clock_mono_ms() -
		    t->last_heard_ms >= pd->conf.ping_timeout_ms)
			return 0;
	}
	dcbor_buf_init(&b);
	dcbor_put_map(&b, have_target ? 2 : 1);
	dcbor_put_cstr(&b, "seq");
	dcbor_put_uint(&b, seq);
	if (have_target) {
		dcbor_put_cstr(&b, "target");
		dcbor_put_bytes(&b, target, sizeof(target));
	}
	link_send_member(from, FRAME_ACK, b.data, b.len);
	dcbor_buf_free(&b);
	return 0;
}

int
gossip_recv(struct member *from, uint32_t kind, const uint8_t *body,
    size_t len)
{
	switch (kind) {
	case FRAME_PING:
	case FRAME_PING_REQ:
	case FRAME_ACK:
		return recv_ping(from, kind, body, len);
	case FRAME_RUMOR:
	case FRAME_IHAVE:
	case FRAME_GRAFT:
	case FRAME_PRUNE:
		return plumtree_recv(from, kind, body, len);
	case FRAME_DIGEST:
		return recv_digest(from, body, len);
	case FRAME_PULL_RESP:
		return recv_pull(from, body, len);
	case FRAME_CLAIM_ACK:
		return vote_recv_ack(from, body, len);
	case FRAME_CLAIM_ACK_RELAY:
		return vote_recv_relay(from, body, len);
	case FRAME_CLAIM_ACKS:
		return vote_recv_acks(from, body, len);
	case FRAME_RECON_NEG:
	case FRAME_RECON_SYMS:
	case FRAME_RECON_ACK:
	case FRAME_RECON_RECS:
	case FRAME_RECON_END:
		return recon_recv(from, kind, body, len);
	default:
		return 0;
	}
}

/* A link came up: advertise ourselves and catch up at once; went down. */
static void
gossip_link(struct member *m, bool up)
{
	plumtree_link(m, up);
	if (up) {
		ae_start(m, true);	/* catch up at once */
		return;
	}
	m->ae_asked_ms = 0;
	m->ae_answered_ms = 0;
	recon_link_down(m);
}

/* The link-layer handler for every gossip kind. */
static int
gossip_frame(struct member *from, const struct frame *f, const char **why)
{
	if (gossip_recv(from, f->kind, f->body, f->body_len) == -1) {
		pd_count(bad_body);
		*why = "malformed frame body";
		return -1;
	}
	return 0;
}

/*
 * The repair period: --gossip-ms, doubled for every periodic repair in a
 * row that found the replicas equal (recon_quiet), up to --repair-max-ms;
 * one that moves a record or fails brings it back at once.
 */
uint64_t
gossip_repair_period_ms(void)
{
	uint64_t ms = pd->conf.gossip_ms;
	unsigned q = recon_quiet();

	for (unsigned i = 0; i < q && ms < pd->conf.repair_max_ms; i++)
		ms *= 2;
	if (ms > pd->conf.repair_max_ms)
		ms = pd->conf.repair_max_ms > pd->conf.gossip_ms ?
		    pd->conf.repair_max_ms : pd->conf.gossip_ms;
	return ms;
}

uint64_t
gossip_tick(void)
{
	uint64_t now = clock_mono_ms();
	struct member *m;

	if (now - last_ae_ms < gossip_repair_period_ms())
		return last_ae_ms + gossip_repair_period_ms();
	last_ae_ms = now;
	if (member_pick_up(&m, 1, NULL) == 1)
		ae_start(m, false);
	return last_ae_ms + gossip_repair_period_ms();
}

void
gossip_init(void)
{
	plumtree_init();
	last_ae_ms = clock_mono_ms();
	link_register(FRAME_PING, gossip_frame);
	link_register(FRAME_PING_REQ, gossip_frame);
	link_register(FRAME_ACK, gossip_frame);
	link_register(FRAME_RUMOR, gossip_frame);
	link_register(FRAME_DIGEST, gossip_frame);
	link_register(FRAME_PULL_RESP, gossip_frame);
	link_register(FRAME_IHAVE, gossip_frame);
	link_register(FRAME_GRAFT, gossip_frame);
	link_register(FRAME_PRUNE, gossip_frame);
	link_register(FRAME_CLAIM_ACK, gossip_frame);
	link_register(FRAME_CLAIM_ACK_RELAY, gossip_frame);
	link_register(FRAME_CLAIM_ACKS, gossip_frame);
	link_observe(gossip_link);
	link_register(FRAME_RECON_NEG, gossip_frame);
	link_register(FRAME_RECON_SYMS, gossip_frame);
	link_register(FRAME_RECON_ACK, gossip_frame);
	link_register(FRAME_RECON_RECS, gossip_frame);
	link_register(FRAME_RECON_END, gossip_frame);
	recon_init();
}

void
gossip_free(void)
{
	recon_free();
	plumtree_free();
}

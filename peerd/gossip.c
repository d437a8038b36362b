/*
 * gossip.c: rumors with fanout, hop limit and deduplication; anti-entropy
 * by digest and delta; PING/ACK/PING_REQ and GROUP_AD (see gossip.h and
 * docs/protocol.md).  The records themselves are the replica's business:
 * this file moves them.
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
#include "replica.h"
#include "trace.h"
#include "xmalloc.h"

/* Seen rumor ids: a FIFO ring for eviction plus an open-addressing set. */
#define SEEN_SLOTS	(GOSSIP_SEEN * 4)

static uint64_t		 seen_ring[GOSSIP_SEEN];
static size_t		 seen_next;
static uint64_t		 seen_set[SEEN_SLOTS];	/* 0 = empty */

static struct dcbor_buf	 batch;		/* queued records, concatenated */
static size_t		 batch_n;
static struct event	*flush_ev;
static uint64_t		 last_ae_ms;

static bool
seen_has(uint64_t rid)
{
	for (size_t i = rid % SEEN_SLOTS, n = 0; n < SEEN_SLOTS;
	    i = (i + 1) % SEEN_SLOTS, n++) {
		if (seen_set[i] == 0)
			return false;
		if (seen_set[i] == rid)
			return true;
	}
	return false;
}

static void
seen_del(uint64_t rid)
{
	size_t i = rid % SEEN_SLOTS, j;

	while (seen_set[i] != rid) {
		if (seen_set[i] == 0)
			return;
		i = (i + 1) % SEEN_SLOTS;
	}
	/* Backward-shift deletion keeps the probe chains whole. */
	seen_set[i] = 0;
	for (j = (i + 1) % SEEN_SLOTS; seen_set[j] != 0;
	    j = (j + 1) % SEEN_SLOTS) {
		uint64_t v = seen_set[j];
		size_t home = v % SEEN_SLOTS;
		bool move = i <= j ? (home <= i || home > j) :
		    (home <= i && home > j);

		if (move) {
			seen_set[i] = v;
			seen_set[j] = 0;
			i = j;
		}
	}
}

static void
seen_add(uint64_t rid)
{
	size_t i;

	if (seen_ring[seen_next] != 0)
		seen_del(seen_ring[seen_next]);
	seen_ring[seen_next] = rid;
	seen_next = (seen_next + 1) % GOSSIP_SEEN;
	for (i = rid % SEEN_SLOTS; seen_set[i] != 0; i = (i + 1) % SEEN_SLOTS)
		;
	seen_set[i] = rid;
}

/* A rumor body (docs/protocol.md section 7) in a fresh buffer. */
static void
rumor_body(struct dcbor_buf *b, uint64_t rid, uint64_t hops,
    const uint8_t *items, size_t len)
{
	dcbor_buf_init(b);
	dcbor_put_map(b, 3);
	dcbor_put_cstr(b, "rid");
	dcbor_put_uint(b, rid);
	dcbor_put_cstr(b, "hops");
	dcbor_put_uint(b, hops);
	dcbor_put_cstr(b, "items");
	dcbor_put_raw(b, items, len);
}

static int
lane_send(struct member *m, bool urgent, const uint8_t *body, size_t len)
{
	return urgent ? link_send_member_urgent(m, FRAME_RUMOR, body, len) :
	    link_send_member(m, FRAME_RUMOR, body, len);
}

/* Send a rumor body to up to fanout members other than 'except'. */
static void
rumor_send(uint64_t hops, uint64_t rid, const uint8_t *items, size_t len,
    const struct member *except, bool urgent)
{
	struct member *to[64];
	struct dcbor_buf b;
	size_t n, fan = pd->conf.fanout < 64 ? pd->conf.fanout : 64;

	rumor_body(&b, rid, hops, items, len);
	n = member_pick_up(to, fan, except);
	for (size_t i = 0; i < n; i++) {
		if (lane_send(to[i], urgent, b.data, b.len) == 0)
			pd_count(rumors_sent);
	}
	dcbor_buf_free(&b);
}

/* True when this peer has an UP link to every member not known dead. */
static bool
linked_to_all(void)
{
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->state != MEMBER_DEAD && m->link == NULL)
			return false;
	}
	return true;
}

/*
 * The writer's own rumor in a full mesh: one frame to every member, with a
 * hop limit of 1.  n - 1 frames is the fewest that reach everyone, and no
 * one misses it (random fanout leaves about e^-fanout of the fleet to
 * anti-entropy).  Without a full mesh the classic fanout and hops apply.
 */
static void
rumor_send_all(uint64_t rid, const uint8_t *items, size_t len, bool urgent)
{
	struct dcbor_buf b;

	rumor_body(&b, rid, 1, items, len);
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link != NULL && lane_send(m, urgent, b.data, b.len) == 0)
			pd_count(rumors_sent);
	}
	dcbor_buf_free(&b);
}

/* One rumor of n records (concatenated in recs) to the fleet. */
static void
rumor_start(const uint8_t *recs, size_t len, size_t n, bool urgent)
{
	struct dcbor_buf items;
	uint64_t rid;

	dcbor_buf_init(&items);
	dcbor_put_array(&items, n);
	dcbor_put_raw(&items, recs, len);
	rid = XXH3_64bits(items.data, items.len) | 1;
	seen_add(rid);
	if (linked_to_all())
		rumor_send_all(rid, items.data, items.len, urgent);
	else
		rumor_send(pd->conf.hops, rid, items.data, items.len, NULL,
		    urgent);
	pd_count_add(records_batched, n);
	dcbor_buf_free(&items);
}

static void
gossip_flush(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (batch_n == 0)
		return;
	rumor_start(batch.data, batch.len, batch_n, false);
	dcbor_buf_reset(&batch);
	batch_n = 0;
}

void
gossip_send_urgent(const uint8_t *rec, size_t len)
{
	rumor_start(rec, len, 1, true);
}

void
gossip_queue(const uint8_t *rec, size_t len)
{
	/* A batch stays well under the frame cap. */
	if (batch.len + len > pd->conf.max_frame / 2)
		gossip_flush(-1, 0, NULL);
	dcbor_put_raw(&batch, rec, len);
	batch_n++;
	event_active(flush_ev, EV_TIMEOUT, 0);
}

static int
apply_items(struct member *from, struct dcbor_rd *rd)
{
	uint64_t n;

	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (replica_apply_record(from, rd) == -1)
			return -1;
	return 0;
}

static int
recv_rumor(struct member *from, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n, rid = 0, hops = 0;
	const uint8_t *items = NULL;
	size_t items_len = 0;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 3)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *k;
		size_t kl;

		if (dcbor_get_text(&rd, &k, &kl) == -1)
			return -1;
		if (dcbor_text_is(k, kl, "rid")) {
			if (dcbor_get_uint(&rd, &rid) == -1)
				return -1;
		} else if (dcbor_text_is(k, kl, "hops")) {
			if (dcbor_get_uint(&rd, &hops) == -1)
				return -1;
		} else if (dcbor_text_is(k, kl, "items")) {
			if (dcbor_get_raw(&rd, &items, &items_len) == -1)
				return -1;
		} else
			return -1;
	}
	if (items == NULL || rid == 0)
		return -1;
	pd_count(rumors_received);
	if (seen_has(rid)) {
		pd_count(duplicates_dropped);
		return 0;
	}
	seen_add(rid);
	dcbor_rd_init(&rd, items, items_len);
	if (apply_items(from, &rd) == -1)
		return -1;
	if (hops > 1)
		rumor_send(hops - 1, rid, items, items_len, from, false);
	return 0;
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
			if (apply_items(from, &rd) == -1)
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

/* ---- membership messages ----------------------------------------------- */

static void
send_group_ad(struct member *to)
{
	struct dcbor_buf b;
	size_t n = 1;

	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->link != NULL && member_at(i) != to)
			n++;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "members");
	dcbor_put_array(&b, n);
	for (size_t i = 0; i <= member_count(); i++) {
		const uint8_t *id;
		const char *addr, *name;

		if (i == member_count()) {
			id = pd->ident.id;
			addr = pd->listen_addr;
			name = pd->conf.name;
		} else {
			struct member *m = member_at(i);

			if (m->link == NULL || m == to)
				continue;
			id = m->id;
			addr = m->addr;
			name = m->name;
		}
		dcbor_put_map(&b, 3);
		dcbor_put_cstr(&b, "id");
		dcbor_put_bytes(&b, id, IDENTITY_ID_LEN);
		dcbor_put_cstr(&b, "addr");
		dcbor_put_cstr(&b, addr);
		dcbor_put_cstr(&b, "name");
		dcbor_put_cstr(&b, name);
	}
	link_send_member(to, FRAME_GROUP_AD, b.data, b.len);
	dcbor_buf_free(&b);
}

static int
recv_group_ad(struct member *from, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n, cnt, fields;

	(void)from;
	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 1 || dcbor_skip(&rd) == -1 ||
	    dcbor_get_array(&rd, &cnt) == -1)
		return -1;
	for (uint64_t i = 0; i < cnt; i++) {
		uint8_t id[IDENTITY_ID_LEN];
		char addr[64], name[64], key[8];

		if (dcbor_get_map(&rd, &fields) == -1 || fields != 3 ||
		    dcbor_get_cstr(&rd, key, sizeof(key)) == -1 ||
		    strcmp(key, "id") != 0 ||
		    dcbor_get_fixed(&rd, id, sizeof(id)) == -1 ||
		    dcbor_get_cstr(&rd, key, sizeof(key)) == -1 ||
		    strcmp(key, "addr") != 0 ||
		    dcbor_get_cstr(&rd, addr, sizeof(addr)) == -1 ||
		    dcbor_get_cstr(&rd, key, sizeof(key)) == -1 ||
		    strcmp(key, "name") != 0 ||
		    dcbor_get_cstr(&rd, name, sizeof(name)) == -1)
			return -1;
		if (memcmp(id, pd->ident.id, IDENTITY_ID_LEN) == 0 ||
		    member_find(id) != NULL)
			continue;
		/*
		 * An advertisement is only a hint, and one frame can carry
		 * a hundred thousand made-up members: it never grows the
		 * table past what --max-links could ever link to.
		 */
		if (member_count() >= pd->conf.max_links) {
			pd_count_limit(LINKS);
			continue;
		}
		member_get(id, name, addr);
	}
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

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
	case FRAME_GROUP_AD:
		return recv_group_ad(from, body, len);
	case FRAME_RUMOR:
		return recv_rumor(from, body, len);
	case FRAME_DIGEST:
		return recv_digest(from, body, len);
	case FRAME_PULL_RESP:
		return recv_pull(from, body, len);
	case FRAME_CLAIM_ACK:
		return replica_recv_ack(from, body, len);
	default:
		return 0;
	}
}

void
gossip_link_up(struct member *m)
{
	send_group_ad(m);
	send_digest(m);		/* catch up at once */
}

void
gossip_link_down(struct member *m)
{
	m->ae_asked_ms = 0;
	m->ae_answered_ms = 0;
}

void
gossip_tick(void)
{
	uint64_t now = clock_mono_ms();
	struct member *m;

	if (now - last_ae_ms < pd->conf.gossip_ms)
		return;
	last_ae_ms = now;
	if (member_pick_up(&m, 1, NULL) == 1)
		send_digest(m);
}

void
gossip_init(void)
{
	/* A fresh start forgets the rumors of a previous one (tests re-init). */
	memset(seen_ring, 0, sizeof(seen_ring));
	memset(seen_set, 0, sizeof(seen_set));
	seen_next = 0;
	dcbor_buf_init(&batch);
	batch_n = 0;
	flush_ev = event_new(pd->base, -1, 0, gossip_flush, NULL);
	last_ae_ms = clock_mono_ms();
}

void
gossip_free(void)
{
	dcbor_buf_free(&batch);
	if (flush_ev != NULL)
		event_free(flush_ev);
	flush_ev = NULL;
}

/*
 * view.c: HyParView-style membership (see view.h).  The active view is
 * the members with an UP link; the passive view is an array of addresses
 * here; dials in flight remember why they were made, so the link-up
 * observer knows whether to send JOIN or NEIGHBOR.  Everything is bounded
 * by the knobs and the VIEW_* limits, whatever peers send.  The failure
 * detector (PING, ACK, closing a silent link) is swim.c's: the tick runs
 * its prober where it ran when it lived here, between the fill and the
 * shuffle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "stats.h"
#include "swim.h"
#include "trace.h"
#include "view.h"
#include "xmalloc.h"

enum dial_why { DIAL_JOIN, DIAL_NEIGHBOR, DIAL_FORWARD, DIAL_SWAP };

struct vaddr {				/* a passive-view entry */
	uint8_t		 id[IDENTITY_ID_LEN];
	bool		 have_id;
	char		 addr[64];
	char		 name[64];
	uint8_t		 src[IDENTITY_ID_LEN];	/* who told us (quota) */
	uint32_t	 fails;		/* dials in a row that failed */
	uint64_t	 next_ms;	/* not dialed before this */
};

struct vdial {				/* a dial in flight */
	char		 addr[64];
	enum dial_why	 why;
	uint64_t	 since_ms;
};

struct seed {
	char		 addr[64];
	uint32_t	 backoff_ms;
	uint64_t	 next_ms;
};

static struct {				/* forgotten addresses, for a while */
	char		 addr[64];
	uint64_t	 until_ms;
} forgotten[VIEW_FORGOTTEN];
static size_t		 forgotten_next;
static struct vaddr	*passive;
static size_t		 npassive;
static struct vdial	 dials[VIEW_DIALS];
static size_t		 ndials;
static struct seed	*seeds;
static size_t		 nseeds;
static bool		 joined;	/* a link came up since the last join */
static bool		 dirty;		/* the passive view changed: save it */
static bool		 saved;		/* saved once since the start */
static uint64_t		 last_shuffle_ms, last_swap_ms, last_save_ms;
static uint64_t		 swap_look_ms;	/* a waiting swap looks again then */
static bool		 swap_waited;	/* the due swap was counted waiting */
static view_cost_fn	 drop_cost;	/* what a link is worth above */

#define VIEW_SAVE_MS	30000	/* view.addrs rewritten at most this often */
#define VIEW_SWAP_LOOK_MS 1000	/* a waiting swap looks again this often */

static uint32_t
rnd(uint32_t n)
{
	/*
	 * OpenSSL's generator, drawn a pool at a time: one RAND_bytes a draw
	 * (a lock, a fork check) was 5% of an idle peer's CPU, most of it in
	 * the passive picks' draw per candidate.
	 */
	static uint32_t pool[64];
	static size_t left;
	uint32_t r;

	if (left == 0) {
		RAND_bytes((unsigned char *)pool, sizeof(pool));
		left = sizeof(pool) / sizeof(pool[0]);
	}
	r = pool[--left];
	return n ? r % n : 0;
}

static uint64_t
with_jitter(uint32_t ms)
{
	return ms / 2 + (ms ? rnd(ms / 2 + 1) : 0);
}

size_t
view_active_count(void)
{
	size_t n = 0;

	for (size_t i = 0; i < member_count(); i++)
		n += member_at(i)->link != NULL;
	return n;
}

size_t
view_passive_count(void)
{
	return npassive;
}

size_t
view_dials_count(void)
{
	return ndials;
}

/*
 * A random active member other than the two given (NULL if none), among
 * those that cost least by cost (view_set_drop_cost; NULL: all the same).
 */
static struct member *
active_pick(const struct member *not1, const uint8_t *not_id,
    view_cost_fn cost)
{
	struct member *pick = NULL;
	unsigned best = 0, c;
	uint32_t seen = 0;

	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link == NULL || m == not1 || (not_id != NULL &&
		    memcmp(m->id, not_id, IDENTITY_ID_LEN) == 0))
			continue;
		c = cost != NULL ? cost(m) : 0;
		if (pick == NULL || c < best) {
			pick = m;
			best = c;
			seen = 1;
		} else if (c == best && rnd(++seen) == 0)
			pick = m;
	}
	return pick;
}

/*
 * A link heard from not at all for half the silence window (its idle PING
 * went out a quarter window ago and has no answer), or that has heard
 * nothing since its handshake for an eighth of it (both ends send a
 * GROUP_AD at once): across a partition, or to a peer gone, or stopped.
 * It is closed only at the end of the window, but a quiet
 * link is dropped before any other, gives way to a new neighbour in a full
 * view, and counts neither toward --active when the view fills nor against
 * a NEIGHBOR's priority: a peer whose links all cross a partition would
 * otherwise dial nobody until they close, and be refused by its own side's
 * full views (full of links that cross the partition too), while random
 * drops cut the few links it had on its side.
 */
static bool
quiet(const struct member *m, uint64_t now)
{
	if (m->link == NULL || m->last_heard_ms == 0)
		return false;
	if (m->last_heard_ms <= m->view_up_ms)
		return now - m->view_up_ms >= pd->conf.silence_ms / 8;
	return now - m->last_heard_ms >= pd->conf.silence_ms / 2;
}

/* Links that are not quiet. */
static size_t
live_count(void)
{
	uint64_t now = clock_mono_ms();
	size_t n = 0;

	for (size_t i = 0; i < member_count(); i++)
		n += member_at(i)->link != NULL && !quiet(member_at(i), now);
	return n;
}

/* The quietest quiet link other than not1, or NULL. */
static struct member *
quiet_pick(const struct member *not1)
{
	uint64_t now = clock_mono_ms();
	struct member *pick = NULL;

	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m != not1 && quiet(m, now) && (pick == NULL ||
		    m->last_heard_ms < pick->last_heard_ms))
			pick = m;
	}
	return pick;
}

/*
 * The link to drop: the quietest quiet one, else the oldest that has
 * heard nothing since its handshake yet (it may be about to go quiet; a
 * link that carried frames is known to work), else a random one of those
 * that cost least to lose (a link in no broadcast tree before a tree edge:
 * dropping an edge cuts the subtree below it until a GRAFT mends it).
 */
static struct member *
drop_pick(const struct member *not1)
{
	struct member *m = quiet_pick(not1);

	if (m != NULL)
		return m;
	for (size_t i = 0; i < member_count(); i++) {
		struct member *o = member_at(i);

		if (o != not1 && o->link != NULL &&
		    o->last_heard_ms <= o->view_up_ms && (m == NULL ||
		    o->view_up_ms < m->view_up_ms))
			m = o;
	}
	return m != NULL ? m : active_pick(not1, NULL, drop_cost);
}

void
view_set_drop_cost(view_cost_fn fn)
{
	drop_cost = fn;
}

/* ---- the passive view -------------------------------------------------- */

static struct vaddr *
passive_find(const char *addr)
{
	for (size_t i = 0; i < npassive; i++)
		if (strcmp(passive[i].addr, addr) == 0)
			return &passive[i];
	return NULL;
}

static void
passive_del(struct vaddr *v)
{
	*v = passive[--npassive];
	dirty = true;
}

/* An address is linked (or being dialed, or is ours). */
static bool
addr_busy(const char *addr)
{
	if (strcmp(addr, pd->listen_addr) == 0 || link_to_addr(addr))
		return true;
	for (size_t i = 0; i < ndials; i++)
		if (strcmp(dials[i].addr, addr) == 0)
			return true;
	return false;
}

/*
 * Remember an address in the passive view, told by src (NULL: ourselves).
 * A full view replaces a random entry; one source owns at most a quarter
 * of the view, so one member cannot fill it with made-up peers.
 */
static void
passive_learn(const uint8_t *id, const char *addr, const char *name,
    const struct member *src)
{
	size_t quota = pd->conf.passive / 4 > 2 ? pd->conf.passive / 4 : 2;
	struct vaddr *v;
	size_t owned = 0;

	if (addr[0] == '\0' || !link_addr_ok(addr) ||
	    strcmp(addr, pd->listen_addr) == 0 ||
	    (id != NULL && memcmp(id, pd->ident.id, IDENTITY_ID_LEN) == 0))
		return;
	/* Forgotten after failing: not learnt again for a while. */
	for (size_t i = 0; i < VIEW_FORGOTTEN; i++)
		if (forgotten[i].until_ms > clock_mono_ms() &&
		    strcmp(forgotten[i].addr, addr) == 0) {
			pd_count(view_refused);
			return;
		}
	if ((v = passive_find(addr)) != NULL) {
		if (id != NULL && !v->have_id) {
			memcpy(v->id, id, IDENTITY_ID_LEN);
			v->have_id = true;
		}
		return;
	}
	if (src != NULL)
		for (size_t i = 0; i < npassive; i++)
			owned += memcmp(passive[i].src, src->id,
			    IDENTITY_ID_LEN) == 0;
	if (owned >= quota) {
		pd_count(view_refused);
		return;
	}
	if (npassive < pd->conf.passive)
		v = &passive[npassive++];
	else {
		v = &passive[rnd((uint32_t)npassive)];
		pd_count(view_passive_replaced);
	}
	memset(v, 0, sizeof(*v));
	if (id != NULL) {
		memcpy(v->id, id, IDENTITY_ID_LEN);
		v->have_id = true;
	}
	snprintf(v->addr, sizeof(v->addr), "%s", addr);
	snprintf(v->name, sizeof(v->name), "%s", name ? name : "");
	if (src != NULL)
		memcpy(v->src, src->id, IDENTITY_ID_LEN);
	dirty = true;
}

/* The passive view survives a restart: a peer rejoins through it. */
static void
passive_save(void)
{
	char path[4200], tmp[4210];
	FILE *fp;

	dirty = false;
	if (pd->conf.dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/view.addrs", pd->conf.dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return;
	for (size_t i = 0; i < npassive; i++)
		fprintf(fp, "%s\n", passive[i].addr);
	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->link != NULL && member_at(i)->addr[0])
			fprintf(fp, "%s\n", member_at(i)->addr);
	if (fclose(fp) == 0)
		rename(tmp, path);
}

static void
passive_load(void)
{
	char path[4200], line[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/view.addrs", pd->conf.dir);
	if ((fp = fopen(path, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		passive_learn(NULL, line, "", NULL);
	}
	fclose(fp);
}

/* ---- sending ------------------------------------------------------------ */

static void
put_peer(struct dcbor_buf *b, const uint8_t *id, const char *addr,
    const char *name)
{
	dcbor_put_map(b, 3);
	dcbor_put_cstr(b, "id");
	dcbor_put_bytes(b, id, IDENTITY_ID_LEN);
	dcbor_put_cstr(b, "addr");
	dcbor_put_cstr(b, addr);
	dcbor_put_cstr(b, "name");
	dcbor_put_cstr(b, name);
}

static int
get_peer(struct dcbor_rd *rd, uint8_t *id, char *addr, size_t alen,
    char *name, size_t nlen)
{
	uint64_t fields;

	if (dcbor_get_map(rd, &fields) == -1 || fields != 3 ||
	    dcbor_get_key(rd, "id") == -1 ||
	    dcbor_get_fixed(rd, id, IDENTITY_ID_LEN) == -1 ||
	    dcbor_get_key(rd, "addr") == -1 ||
	    dcbor_get_cstr(rd, addr, alen) == -1 ||
	    dcbor_get_key(rd, "name") == -1 ||
	    dcbor_get_cstr(rd, name, nlen) == -1)
		return -1;
	return 0;
}

static void
send_empty(struct member *m, uint32_t kind)
{
	static const uint8_t empty_map = 0xa0;

	link_send_member(m, kind, &empty_map, 1);
}

static void
send_neighbor(struct member *m, bool prio)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "prio");
	dcbor_put_bool(&b, prio);
	link_send_member(m, FRAME_NEIGHBOR, b.data, b.len);
	dcbor_buf_free(&b);
	pd_count(view_neighbor_sent);
}

static void
send_forward_join(struct member *to, const struct member *who, uint64_t ttl)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	dcbor_put_map(&b, 2);
	dcbor_put_cstr(&b, "ttl");
	dcbor_put_uint(&b, ttl);
	dcbor_put_cstr(&b, "peer");
	put_peer(&b, who->id, who->addr, who->name);
	link_send_member(to, FRAME_FORWARD_JOIN, b.data, b.len);
	dcbor_buf_free(&b);
	pd_count(view_forward_join_sent);
}

/* Close m's link without calling it a failure; the address stays known. */
static void
view_drop(struct member *m, const char *why)
{
	if (m->link == NULL)
		return;
	send_empty(m, FRAME_DISCONNECT);
	m->view_disc = true;
	pd_count(view_disconnect_sent);
	link_close_flush(m->link, why);
}

/*
 * Drop links (never keep) while the view is over --active + VIEW_MARGIN:
 * the bound, whatever peers send (counted view.trims).
 */
static void
view_trim(struct member *keep, const char *why)
{
	struct member *o;

	while (view_active_count() > pd->conf.active + VIEW_MARGIN &&
	    (o = drop_pick(keep)) != NULL) {
		pd_count(view_trims);
		view_drop(o, why);
	}
}

/* Our advertisement: ourselves and the active view (GROUP_AD). */
static void
send_group_ad(struct member *to)
{
	struct dcbor_buf b;
	size_t n = 1;

	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->link != NULL && member_at(i) != to &&
		    n < VIEW_FRAME_ADDS)
			n++;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "members");
	dcbor_put_array(&b, n);
	put_peer(&b, pd->ident.id, pd->listen_addr, pd->conf.name);
	for (size_t i = 0, k = 1; i < member_count() && k < n; i++) {
		struct member *m = member_at(i);

		if (m->link == NULL || m == to)
			continue;
		put_peer(&b, m->id, m->addr, m->name);
		k++;
	}
	link_send_member(to, FRAME_GROUP_AD, b.data, b.len);
	dcbor_buf_free(&b);
}

/* A SHUFFLE (or its reply): ourselves, some active, some passive. */
static void
send_shuffle(struct member *to, bool reply)
{
	const struct vaddr *pick[VIEW_SHUFFLE_LEN];
	struct member *act[VIEW_SHUFFLE_LEN / 2];
	size_t np = 0, na, n;
	struct dcbor_buf b;

	na = member_pick_up(act, VIEW_SHUFFLE_LEN / 2 - 1, to);
	for (size_t i = 0; i < npassive; i++) {
		/* Reservoir sampling over the passive view. */
		size_t room = VIEW_SHUFFLE_LEN - 1 - na;

		if (np < room)
			pick[np++] = &passive[i];
		else if (room > 0) {
			uint32_t r = rnd((uint32_t)i + 1);

			if (r < room)
				pick[r] = &passive[i];
		}
	}
	n = 1 + na + np;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 2);
	dcbor_put_cstr(&b, "peers");
	dcbor_put_array(&b, n);
	put_peer(&b, pd->ident.id, pd->listen_addr, pd->conf.name);
	for (size_t i = 0; i < na; i++)
		put_peer(&b, act[i]->id, act[i]->addr, act[i]->name);
	for (size_t i = 0; i < np; i++)
		put_peer(&b, pick[i]->id, pick[i]->addr, pick[i]->name);
	dcbor_put_cstr(&b, "reply");
	dcbor_put_bool(&b, reply);
	link_send_member(to, FRAME_SHUFFLE, b.data, b.len);
	dcbor_buf_free(&b);
	pd_count(view_shuffle_sent);
}

/* ---- dialing ------------------------------------------------------------ */

static void
dial(const char *addr, enum dial_why why)
{
	if (ndials == VIEW_DIALS || addr_busy(addr))
		return;
	if (link_dial(addr) == NULL)
		return;
	pd_count(view_dials);
	snprintf(dials[ndials].addr, sizeof(dials[ndials].addr), "%s", addr);
	dials[ndials].why = why;
	dials[ndials].since_ms = clock_mono_ms();
	ndials++;
}

/* A dial that did not come up: back the address off, then forget it. */
static void
dial_failed(size_t i)
{
	struct vaddr *v = passive_find(dials[i].addr);
	uint64_t now = clock_mono_ms();

	pd_count(view_dials_failed);
	if (v != NULL) {
		uint32_t b = VIEW_BACKOFF_MIN_MS;

		for (uint32_t k = 0; k < v->fails && b < VIEW_BACKOFF_MAX_MS;
		    k++)
			b *= 2;
		if (b > VIEW_BACKOFF_MAX_MS)
			b = VIEW_BACKOFF_MAX_MS;
		v->next_ms = now + with_jitter(b);
		if (++v->fails >= VIEW_FAILS_MAX) {
			trace_add("view", "forgot %s after %u failed dials",
			    v->addr, v->fails);
			pd_count(view_forgotten);
			snprintf(forgotten[forgotten_next].addr,
			    sizeof(forgotten[0].addr), "%s", v->addr);
			forgotten[forgotten_next].until_ms = now +
			    VIEW_FORGET_MS;
			forgotten_next = (forgotten_next + 1) % VIEW_FORGOTTEN;
			passive_del(v);
		}
	}
	dials[i] = dials[--ndials];
}

/* Find (and take) the dial to addr; -1 when the link was not ours. */
static int
dial_take(const char *addr)
{
	for (size_t i = 0; i < ndials; i++)
		if (strcmp(dials[i].addr, addr) == 0) {
			int why = (int)dials[i].why;

			dials[i] = dials[--ndials];
			return why;
		}
	return -1;
}

/* A random passive entry that may be dialed now, or NULL. */
static struct vaddr *
passive_pick(uint64_t now)
{
	struct vaddr *pick = NULL;
	uint32_t seen = 0;

	for (size_t i = 0; i < npassive; i++) {
		struct vaddr *v = &passive[i];

		if (v->next_ms > now || addr_busy(v->addr))
			continue;
		if (rnd(++seen) == 0)
			pick = v;
	}
	return pick;
}

/* Dial passive entries until the active view (with dials) is full. */
static void
view_fill(void)
{
	uint64_t now = clock_mono_ms();
	size_t active = live_count();	/* quiet links are being replaced */
	struct vaddr *pick;

	while (active + ndials < pd->conf.active && ndials < VIEW_DIALS) {
		if ((pick = passive_pick(now)) == NULL)
			return;
		pick->next_ms = now + VIEW_BACKOFF_MIN_MS;
		dial(pick->addr, DIAL_NEIGHBOR);
		if (!addr_busy(pick->addr))	/* could not even start */
			return;
	}
}

/*
 * Once a --swap-ms with a full view, the view changes by one link: a view
 * of exactly --active links one passive peer and keeps it (it is then one
 * over, within its bound); a view over --active sheds one link (the one
 * drop_pick names) and dials nobody.  The overlay keeps mixing, so two
 * halves whose views filled up apart (a partition) join again.  A swap
 * used to link a passive peer and drop another link at once: the drop
 * left a peer at exactly --active one short, its fill pushed a full peer
 * over its bound, whose drop left another short, and so on: 2.6 dials a
 * swap at 256 peers.  Now a view at --active never drops for its swap,
 * and a shed lands on a peer over --active about as often as a drop did.
 */
static void
view_swap(void)
{
	struct vaddr *pick;
	struct member *o;

	if (ndials > 0 || view_active_count() < pd->conf.active)
		return;
	if (view_active_count() > pd->conf.active) {
		if ((o = drop_pick(NULL)) != NULL) {
			pd_count(view_swaps);
			view_drop(o, "shed at a swap: the view is over --active");
		}
		return;
	}
	if ((pick = passive_pick(clock_mono_ms())) == NULL)
		return;
	pick->next_ms = clock_mono_ms() + VIEW_BACKOFF_MIN_MS;
	pd_count(view_swaps);
	dial(pick->addr, DIAL_SWAP);
}

/*
 * A due swap waits while every link it could drop carries a broadcast tree
 * in use (drop_cost above 0 for each): a swap's drop cuts a tree, and
 * inside a burst of rumors every rumor after the cut waits for the IHAVE
 * and the GRAFT that mend it.  It waits at most one more --swap-ms, so
 * the view still mixes (and two halves still meet) under steady traffic.
 */
static bool
swap_waits(uint64_t now)
{
	bool waits;

	if (drop_cost == NULL || now - last_swap_ms >= 2 * (uint64_t)
	    pd->conf.swap_ms || view_active_count() < pd->conf.active) {
		swap_waited = false;
		return false;
	}
	waits = true;
	for (size_t i = 0; i < member_count() && waits; i++) {
		struct member *m = member_at(i);

		if (m->link != NULL && drop_cost(m) == 0)
			waits = false;
	}
	if (waits && !swap_waited)
		pd_count(view_swaps_waited);	/* once a swap */
	swap_waited = waits;
	return waits;
}

/* ---- the link observer -------------------------------------------------- */

static void
view_link(struct member *m, bool up)
{
	struct vaddr *v;
	int why;

	if (!up) {
		/* Failed or dropped: the address goes back to the passive. */
		if (m->addr[0] != '\0') {
			passive_learn(m->id, m->addr, m->name, NULL);
			if (!m->view_disc && (v = passive_find(m->addr)) != NULL)
				v->next_ms = clock_mono_ms() +
				    with_jitter(VIEW_BACKOFF_MIN_MS * 4);
			else if ((v = passive_find(m->addr)) != NULL)
				v->next_ms = clock_mono_ms() + 2000;
		}
		m->view_disc = false;
		m->view_joined = false;
		if (!pd->stopping)
			view_fill();
		return;
	}
	m->view_disc = false;
	m->view_up_ms = clock_mono_ms();
	if ((v = passive_find(m->addr)) != NULL)
		passive_del(v);
	why = dial_take(m->addr);
	for (size_t i = 0; i < nseeds; i++)
		if (strcmp(seeds[i].addr, m->addr) == 0 && why == -1)
			why = DIAL_JOIN;
	if (why == DIAL_JOIN && !joined) {
		joined = true;
		send_empty(m, FRAME_JOIN);
		pd_count(view_join_sent);
	} else if (why == DIAL_NEIGHBOR || why == DIAL_JOIN)
		send_neighbor(m, live_count() == 1);
	else if (why == DIAL_FORWARD)
		send_neighbor(m, true);
	else if (why == DIAL_SWAP)
		send_neighbor(m, false);	/* kept: view_swap */
	joined = true;
	send_group_ad(m);
	/* Never more than the margin over --active, whoever dialed. */
	view_trim(m, "active view over its bound");
}

/* ---- receiving ---------------------------------------------------------- */

static int
recv_join(struct member *m)
{
	if (m->view_joined) {
		pd_count(view_refused);	/* one JOIN per link */
		return 0;
	}
	m->view_joined = true;
	pd_count(view_join_received);
	view_trim(m, "making room for a joining peer");
	for (size_t i = 0; i < member_count(); i++) {
		struct member *o = member_at(i);

		if (o->link != NULL && o != m)
			send_forward_join(o, m, VIEW_ARWL);
	}
	return 0;
}

static int
recv_forward_join(struct member *m, const uint8_t *body, size_t len)
{
	uint8_t id[IDENTITY_ID_LEN];
	char addr[64], name[64];
	struct dcbor_rd rd;
	struct member *k, *next;
	uint64_t n, ttl;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 2 ||
	    dcbor_get_key(&rd, "ttl") == -1 || dcbor_get_uint(&rd, &ttl) == -1 ||
	    dcbor_get_key(&rd, "peer") == -1 ||
	    get_peer(&rd, id, addr, sizeof(addr), name, sizeof(name)) == -1 ||
	    dcbor_left(&rd) != 0)
		return -1;
	pd_count(view_forward_join_received);
	if (ttl > VIEW_ARWL)
		ttl = VIEW_ARWL;
	if (memcmp(id, pd->ident.id, IDENTITY_ID_LEN) == 0 ||
	    !link_addr_ok(addr))
		return 0;
	k = member_find(id);
	if (k != NULL && k->link != NULL)
		return 0;		/* already a neighbour */
	if (ttl == 0 || view_active_count() <= 1) {
		passive_learn(id, addr, name, m);
		if (ndials < VIEW_DIALS)
			dial(addr, DIAL_FORWARD);
		return 0;
	}
	if (ttl == VIEW_PRWL)
		passive_learn(id, addr, name, m);
	if ((next = active_pick(m, id, NULL)) == NULL) {
		passive_learn(id, addr, name, m);
		if (ndials < VIEW_DIALS)
			dial(addr, DIAL_FORWARD);
		return 0;
	}
	{
		struct dcbor_buf b;

		dcbor_buf_init(&b);
		dcbor_put_map(&b, 2);
		dcbor_put_cstr(&b, "ttl");
		dcbor_put_uint(&b, ttl - 1);
		dcbor_put_cstr(&b, "peer");
		put_peer(&b, id, addr, name);
		link_send_member(next, FRAME_FORWARD_JOIN, b.data, b.len);
		dcbor_buf_free(&b);
		pd_count(view_forward_join_sent);
	}
	return 0;
}

static int
recv_neighbor(struct member *m, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n;
	bool prio;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 1 ||
	    dcbor_get_key(&rd, "prio") == -1 ||
	    dcbor_get_bool(&rd, &prio) == -1 || dcbor_left(&rd) != 0)
		return -1;
	pd_count(view_neighbor_received);
	/* A full view refuses, unless a quiet link can give way. */
	if (!prio && view_active_count() > pd->conf.active + VIEW_MARGIN &&
	    quiet_pick(m) == NULL) {
		pd_count(view_neighbor_refused);
		view_drop(m, "neighbor refused: active view full");
		return 0;
	}
	view_trim(m, "making room for a priority neighbor");
	return 0;
}

static int
recv_peers(struct member *m, struct dcbor_rd *rd, uint64_t cnt)
{
	for (uint64_t i = 0; i < cnt; i++) {
		uint8_t id[IDENTITY_ID_LEN];
		char addr[64], name[64];

		if (get_peer(rd, id, addr, sizeof(addr), name,
		    sizeof(name)) == -1)
			return -1;
		if (i >= VIEW_FRAME_ADDS) {
			pd_count(view_refused);
			continue;
		}
		if (member_find(id) != NULL && member_find(id)->link != NULL)
			continue;
		passive_learn(id, addr, name, m);
	}
	return 0;
}

static int
recv_shuffle(struct member *m, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n, cnt;
	uint64_t now = clock_mono_ms();
	bool reply;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 2 ||
	    dcbor_get_key(&rd, "peers") == -1 ||
	    dcbor_get_array(&rd, &cnt) == -1 ||
	    recv_peers(m, &rd, cnt) == -1 ||
	    dcbor_get_key(&rd, "reply") == -1 ||
	    dcbor_get_bool(&rd, &reply) == -1 || dcbor_left(&rd) != 0)
		return -1;
	pd_count(view_shuffle_received);
	/* Answer at most one SHUFFLE per member per half period. */
	if (!reply && (m->view_shuffle_ms == 0 ||
	    now - m->view_shuffle_ms >= pd->conf.shuffle_ms / 2)) {
		m->view_shuffle_ms = now;
		send_shuffle(m, true);
	}
	return 0;
}

static int
recv_group_ad(struct member *m, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n, cnt;

	dcbor_rd_init(&rd, body, len);
	if (dcbor_get_map(&rd, &n) == -1 || n != 1 ||
	    dcbor_get_key(&rd, "members") == -1 ||
	    dcbor_get_array(&rd, &cnt) == -1 ||
	    recv_peers(m, &rd, cnt) == -1)
		return -1;
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

int
view_recv(struct member *m, uint32_t kind, const uint8_t *body, size_t len)
{
	struct dcbor_rd rd;
	uint64_t n;

	switch (kind) {
	case FRAME_JOIN:
	case FRAME_DISCONNECT:
		dcbor_rd_init(&rd, body, len);
		if (dcbor_get_map(&rd, &n) == -1 || n != 0 ||
		    dcbor_left(&rd) != 0)
			return -1;
		if (kind == FRAME_JOIN)
			return recv_join(m);
		pd_count(view_disconnect_received);
		m->view_disc = true;
		if (m->link != NULL)
			link_close(m->link, "peer said disconnect");
		return 0;
	case FRAME_FORWARD_JOIN:
		return recv_forward_join(m, body, len);
	case FRAME_NEIGHBOR:
		return recv_neighbor(m, body, len);
	case FRAME_SHUFFLE:
		return recv_shuffle(m, body, len);
	case FRAME_GROUP_AD:
		return recv_group_ad(m, body, len);
	default:
		return 0;
	}
}

static int
view_frame(struct member *m, const struct frame *f, const char **why)
{
	if (view_recv(m, f->kind, f->body, f->body_len) == -1) {
		pd_count(bad_body);
		*why = "malformed frame body";
		return -1;
	}
	return 0;
}

/* ---- seeds and the tick ------------------------------------------------- */

int
view_add_seed(const char *hostport)
{
	if (!link_addr_ok(hostport))
		return -1;
	for (size_t i = 0; i < nseeds; i++)
		if (strcmp(seeds[i].addr, hostport) == 0)
			return 0;
	seeds = xreallocarray(seeds, nseeds + 1, sizeof(*seeds));
	memset(&seeds[nseeds], 0, sizeof(seeds[nseeds]));
	snprintf(seeds[nseeds].addr, sizeof(seeds[nseeds].addr), "%s",
	    hostport);
	nseeds++;
	joined = false;
	dial(hostport, DIAL_JOIN);
	return 0;
}

/* The earlier of a and b, b ignored when 0 (not set). */
static uint64_t
earlier(uint64_t a, uint64_t b)
{
	return b != 0 && b < a ? b : a;
}

/*
 * When view_tick next has work, found as it is done: now while a dial, a
 * join, a fill or a trim is pending; else the first ping, quiet link or
 * silence among the members (swim_next, quiet()), shuffle, swap or save.
 * A link that comes up or goes down (the observers) or is born (link.c)
 * wakes the tick sooner.
 */
static uint64_t
view_next(uint64_t now)
{
	uint64_t next = earlier(last_shuffle_ms + pd->conf.shuffle_ms,
	    last_swap_ms + pd->conf.swap_ms > swap_look_ms ?
	    last_swap_ms + pd->conf.swap_ms : swap_look_ms);
	bool fill;

	if (ndials > 0 || (!joined && nseeds > 0) ||
	    view_active_count() > pd->conf.active + VIEW_MARGIN)
		return now;
	/* A fill waits for the first passive entry out of its backoff. */
	fill = live_count() < pd->conf.active;
	for (size_t i = 0; i < npassive && fill; i++)
		if (!addr_busy(passive[i].addr))
			next = earlier(next, passive[i].next_ms > now ?
			    passive[i].next_ms : now);
	if (dirty)
		next = earlier(next, last_save_ms + (saved ? VIEW_SAVE_MS :
		    1000));
	/* The first ping or silence: the prober's (swim.c). */
	next = earlier(next, swim_next());
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);
		uint64_t h = m->last_heard_ms, q;

		if (h == 0 || m->link == NULL)
			continue;
		/* The link turns quiet (quiet()): a fill may be due then. */
		q = h <= m->view_up_ms ? m->view_up_ms + pd->conf.silence_ms /
		    8 : h + pd->conf.silence_ms / 2;
		if (q > now)
			next = earlier(next, q);
	}
	return next;
}

uint64_t
view_tick(void)
{
	uint64_t now = clock_mono_ms();
	struct member *m;

	/* Dials that died before their link came up. */
	for (size_t i = 0; i < ndials; )
		if (!link_to_addr(dials[i].addr) ||
		    now - dials[i].since_ms > 15000)
			dial_failed(i);
		else
			i++;
	/* No link at all: join again through the seeds, with backoff. */
	if (view_active_count() == 0 && npassive == 0)
		joined = false;
	for (size_t i = 0; i < nseeds && !joined; i++) {
		struct seed *s = &seeds[i];

		if (addr_busy(s->addr) || now < s->next_ms)
			continue;
		s->backoff_ms = s->backoff_ms == 0 ? 100 : s->backoff_ms * 2;
		if (s->backoff_ms > 5000)
			s->backoff_ms = 5000;
		s->next_ms = now + with_jitter(s->backoff_ms);
		dial(s->addr, DIAL_JOIN);
	}
	/* Trim back to the bound, then fill from the passive view. */
	view_trim(NULL, "active view over its bound");
	view_fill();
	swim_probe();
	if (now - last_shuffle_ms >= pd->conf.shuffle_ms) {
		last_shuffle_ms = now;
		if ((m = active_pick(NULL, NULL, NULL)) != NULL)
			send_shuffle(m, false);
	}
	if (now - last_swap_ms >= pd->conf.swap_ms && now >= swap_look_ms) {
		if (swap_waits(now)) {
			swap_look_ms = now + VIEW_SWAP_LOOK_MS;
		} else {
			last_swap_ms = now;
			view_swap();
		}
	}
	/* The first save soon, then at most every VIEW_SAVE_MS: each save is
	 * a rename over the old file, which ext4 makes write back at once, and
	 * a thousand peers saving once a second held the disk and left
	 * hundreds of them in uninterruptible sleep. */
	if (dirty && now - last_save_ms >= (saved ? VIEW_SAVE_MS : 1000)) {
		last_save_ms = now;
		saved = true;
		passive_save();
	}
	return view_next(now);
}

json_t *
view_json(void)
{
	json_t *act = json_array(), *pas = json_array();

	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->link != NULL)
			json_array_append_new(act,
			    json_string(member_at(i)->name));
	for (size_t i = 0; i < npassive; i++)
		json_array_append_new(pas, json_pack("{s:s, s:s, s:i}",
		    "addr", passive[i].addr, "name", passive[i].name,
		    "fails", (int)passive[i].fails));
	return json_pack("{s:o, s:o, s:i, s:i, s:i}", "active", act,
	    "passive", pas, "dials", (int)ndials,
	    "active_max", (int)pd->conf.active,
	    "passive_max", (int)pd->conf.passive);
}

static uint64_t
gauge_active(void)
{
	return view_active_count();
}

static uint64_t
gauge_passive(void)
{
	return view_passive_count();
}

void
view_init(void)
{
	free(passive);
	passive = xcalloc(pd->conf.passive ? pd->conf.passive : 1,
	    sizeof(*passive));
	npassive = 0;
	ndials = 0;
	joined = false;
	dirty = false;
	memset(forgotten, 0, sizeof(forgotten));
	forgotten_next = 0;
	last_shuffle_ms = last_swap_ms = last_save_ms = clock_mono_ms();
	/* A random phase: a fleet started together must not swap together. */
	last_swap_ms -= rnd(pd->conf.swap_ms) % (last_swap_ms + 1);
	saved = false;
	if (pd->conf.dir != NULL)
		passive_load();
	link_register(FRAME_JOIN, view_frame);
	link_register(FRAME_FORWARD_JOIN, view_frame);
	link_register(FRAME_NEIGHBOR, view_frame);
	link_register(FRAME_DISCONNECT, view_frame);
	link_register(FRAME_SHUFFLE, view_frame);
	link_register(FRAME_GROUP_AD, view_frame);
	link_observe(view_link);
	stats_gauge("view.active", gauge_active);
	stats_gauge("view.passive", gauge_passive);
}

void
view_free(void)
{
	if (passive != NULL)
		passive_save();
	free(passive);
	passive = NULL;
	npassive = 0;
	free(seeds);
	seeds = NULL;
	nseeds = 0;
	ndials = 0;
}

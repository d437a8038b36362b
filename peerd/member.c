/*
 * member.c: the membership table (see member.h).  It sits below link.c and
 * calls nothing but the clock and the trace; failure detection and which
 * members to keep links to are view.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "log.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "trace.h"
#include "xmalloc.h"

static struct member	**members;
static size_t		  nmembers;

static const char *const member_state_names[] = { "alive", "suspect",
    "dead" };

const char *
member_state_name(enum member_state s)
{
	return (unsigned)s <= MEMBER_DEAD ? member_state_names[s] : "unknown";
}

void
member_init(void)
{
	members = NULL;
	nmembers = 0;
}

void
member_free_all(void)
{
	for (size_t i = 0; i < nmembers; i++) {
		dcbor_buf_free(&members[i]->pt_out);
		free(members[i]->pt_ihave);
		free(members[i]);
	}
	free(members);
	members = NULL;
	nmembers = 0;
}

size_t
member_count(void)
{
	return nmembers;
}

struct member *
member_at(size_t i)
{
	return i < nmembers ? members[i] : NULL;
}

struct member *
member_find(const uint8_t id[IDENTITY_ID_LEN])
{
	for (size_t i = 0; i < nmembers; i++)
		if (memcmp(members[i]->id, id, IDENTITY_ID_LEN) == 0)
			return members[i];
	return NULL;
}

struct member *
member_named(const char *who)
{
	uint8_t id[IDENTITY_ID_LEN];

	if (identity_peer_id_parse(who, id) == 0)
		return member_find(id);
	for (size_t i = 0; i < member_count(); i++)
		if (strcmp(member_at(i)->name, who) == 0)
			return member_at(i);
	return NULL;
}

struct member *
member_get(const uint8_t id[IDENTITY_ID_LEN], const char *name,
    const char *addr)
{
	struct member *m = member_find(id);

	if (m == NULL) {
		m = xcalloc(1, sizeof(*m));
		memcpy(m->id, id, IDENTITY_ID_LEN);
		identity_peer_id_of(id, m->peer_id);
		snprintf(m->name, sizeof(m->name), "%.12s", m->peer_id);
		m->state = MEMBER_ALIVE;
		m->tokens = pd->conf.rate_burst;
		m->tokens_ms = clock_mono_ms();
		dcbor_buf_init(&m->pt_out);
		members = xreallocarray(members, nmembers + 1,
		    sizeof(*members));
		members[nmembers++] = m;
		trace_add("member", "new member %s", m->peer_id);
	}
	if (name != NULL && name[0] != '\0')
		snprintf(m->name, sizeof(m->name), "%s", name);
	if (addr != NULL && addr[0] != '\0')
		snprintf(m->addr, sizeof(m->addr), "%s", addr);
	return m;
}

void
member_set_state(struct member *m, enum member_state s, const char *why)
{
	if (m->state == s)
		return;
	trace_add("member", "%s %s -> %s: %s", m->name,
	    member_state_name(m->state), member_state_name(s), why);
	/*
	 * A member without a link fades by itself (suspect, then dead after
	 * the silence window): at 256 peers that was a log line a second a
	 * peer, 6% of an idle peer's CPU.  The trace keeps every change; the
	 * log only those of a linked member.
	 */
	if (m->link != NULL)
		log_info("member %s is %s: %s", m->name, member_state_name(s),
		    why);
	else
		log_debug("member %s is %s: %s", m->name,
		    member_state_name(s), why);
	m->state = s;
}

void
member_fade(struct member *m, uint64_t now)
{
	uint64_t silent;

	if (m->link != NULL || m->last_heard_ms == 0)
		return;
	silent = now - m->last_heard_ms;
	if (m->state == MEMBER_ALIVE && silent >= pd->conf.ping_timeout_ms)
		member_set_state(m, MEMBER_SUSPECT, "no link");
	if (m->state != MEMBER_DEAD && silent >= pd->conf.silence_ms) {
		member_set_state(m, MEMBER_DEAD, "silent too long");
		pd_count(members_dead);
	}
}

void
member_heard(struct member *m)
{
	m->last_heard_ms = clock_mono_ms();
	m->ping_sent_ms = 0;
	m->ping_req_sent = false;
	if (m->state != MEMBER_ALIVE) {
		trace_add("member", "%s %s -> alive", m->name,
		    member_state_name(m->state));
		log_info("member %s is alive again", m->name);
		m->state = MEMBER_ALIVE;
	}
}

bool
member_admit(struct member *m, const struct hlc_stamp *stamp,
    uint64_t wall_ms, uint64_t now_ms, enum metrics_reject *why)
{
	const struct peerd_conf *c = &pd->conf;

	if (m->quarantine_until_ms > now_ms) {
		*why = METRICS_REJECT_QUARANTINED;
		return false;
	}
	if (stamp->phys + (uint64_t)c->max_age_s * 1000u < wall_ms) {
		*why = METRICS_REJECT_TOO_OLD;
		return false;
	}
	if (stamp->phys > wall_ms + (uint64_t)c->max_future_s * 1000u) {
		*why = METRICS_REJECT_FUTURE_STRIKE;
		if (++m->strikes >= c->strikes) {
			m->quarantine_until_ms = now_ms +
			    (uint64_t)c->quarantine_s * 1000u;
			trace_add("member", "%s quarantined after %u strikes",
			    m->name, m->strikes);
			log_warnx("%s quarantined for %u s after %u strikes",
			    m->name, c->quarantine_s, m->strikes);
		}
		return false;
	}
	if (hlc_cmp(stamp, &m->last_stamp) <= 0) {
		*why = METRICS_REJECT_REPLAY;
		return false;
	}
	m->tokens += (double)(now_ms - m->tokens_ms) * c->rate_per_s / 1000.0;
	if (m->tokens > c->rate_burst)
		m->tokens = c->rate_burst;
	m->tokens_ms = now_ms;
	if (m->tokens < 1.0) {
		*why = METRICS_REJECT_RATE_LIMITED;
		return false;
	}
	m->tokens -= 1.0;
	m->last_stamp = *stamp;
	return true;
}

void
member_ack(struct member *m, uint64_t seq)
{
	(void)seq;
	member_heard(m);
}

size_t
member_pick_up(struct member **out, size_t max, const struct member *except)
{
	size_t n = 0;

	for (size_t i = 0; i < nmembers; i++) {
		struct member *m = members[i];

		if (m->link == NULL || m == except || m->state == MEMBER_DEAD)
			continue;
		if (n < max)
			out[n++] = m;
		else {
			/* Reservoir sampling keeps the pick uniform. */
			uint32_t r;

			RAND_bytes((unsigned char *)&r, sizeof(r));
			r %= (uint32_t)(i + 1);
			if (r < max)
				out[r] = m;
		}
	}
	/* Shuffle so the order is not the table's. */
	for (size_t i = n; i > 1; i--) {
		uint32_t r;
		struct member *t;

		RAND_bytes((unsigned char *)&r, sizeof(r));
		r %= (uint32_t)i;
		t = out[i - 1];
		out[i - 1] = out[r];
		out[r] = t;
	}
	return n;
}

json_t *
member_list_json(void)
{
	json_t *arr = json_array();
	uint64_t now = clock_mono_ms();

	for (size_t i = 0; i < nmembers; i++) {
		struct member *m = members[i];

		member_fade(m, now);
		json_array_append_new(arr, json_pack(
		    "{s:s, s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:b}",
		    "name", m->name, "peer_id", m->peer_id, "addr", m->addr,
		    "state", member_state_name(m->state),
		    "link", m->link != NULL,
		    "last_heard_ms_ago", m->last_heard_ms ?
		    (json_int_t)(now - m->last_heard_ms) : (json_int_t)-1,
		    "frames_in", (json_int_t)m->frames_in,
		    "frames_out", (json_int_t)m->frames_out,
		    "quarantined", m->quarantine_until_ms > now));
	}
	return arr;
}

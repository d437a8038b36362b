/*
 * view.c: which members to keep links to, seeds, and failure detection
 * (see view.h).  Today every live member is kept linked (a full mesh);
 * the lower id dials so two peers do not race each other.
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
#include "trace.h"
#include "view.h"
#include "xmalloc.h"

struct seed {
	char		 addr[64];
	uint32_t	 backoff_ms;
	uint64_t	 next_ms;
};

static struct seed	*seeds;
static size_t		 nseeds;
static size_t		 ping_cursor;

static uint32_t
backoff_next(uint32_t cur)
{
	uint32_t next = cur == 0 ? 100 : cur * 2;

	if (next > 5000)
		next = 5000;
	return next;
}

static uint64_t
with_jitter(uint32_t ms)
{
	uint32_t r;

	RAND_bytes((unsigned char *)&r, sizeof(r));
	return ms / 2 + (ms ? r % (ms / 2 + 1) : 0);
}

int
view_add_seed(const char *hostport)
{
	for (size_t i = 0; i < nseeds; i++)
		if (strcmp(seeds[i].addr, hostport) == 0)
			return 0;
	if (!link_addr_ok(hostport))
		return -1;
	link_dial(hostport);
	seeds = xreallocarray(seeds, nseeds + 1, sizeof(*seeds));
	memset(&seeds[nseeds], 0, sizeof(seeds[nseeds]));
	snprintf(seeds[nseeds].addr, sizeof(seeds[nseeds].addr), "%s",
	    hostport);
	nseeds++;
	return 0;
}

void
view_free(void)
{
	free(seeds);
	seeds = NULL;
	nseeds = 0;
}

static void
member_send_ping(struct member *m, uint32_t kind, const uint8_t *target)
{
	struct dcbor_buf b;

	dcbor_buf_init(&b);
	if (target == NULL) {
		dcbor_put_map(&b, 1);
		dcbor_put_cstr(&b, "seq");
		dcbor_put_uint(&b, ++m->ping_seq);
	} else {
		dcbor_put_map(&b, 2);
		dcbor_put_cstr(&b, "seq");
		dcbor_put_uint(&b, ++m->ping_seq);
		dcbor_put_cstr(&b, "target");
		dcbor_put_bytes(&b, target, IDENTITY_ID_LEN);
	}
	link_send_member(m, kind, b.data, b.len);
	dcbor_buf_free(&b);
}

/*
 * One failure-detection round: ping the next member in turn; a ping unanswered for the ping
 * timeout asks two others to probe (PING_REQ); still nothing after twice
 * the timeout: suspect; nothing heard for the silence window: dead.
 */
static void
view_probe(void)
{
	uint64_t now = clock_mono_ms();
	size_t nmembers = member_count();
	struct member *helpers[2];

	for (size_t i = 0; i < nmembers; i++) {
		struct member *m = member_at(i);
		uint64_t silent = m->last_heard_ms ? now - m->last_heard_ms :
		    0;

		if (m->state != MEMBER_DEAD && m->last_heard_ms != 0 &&
		    silent >= pd->conf.silence_ms) {
			member_set_state(m, MEMBER_DEAD, "silent too long");
			pd_count(members_dead);
			continue;
		}
		if (m->ping_sent_ms == 0)
			continue;
		if (!m->ping_req_sent &&
		    now - m->ping_sent_ms >= pd->conf.ping_timeout_ms) {
			size_t n = member_pick_up(helpers, 2, m);

			for (size_t k = 0; k < n; k++)
				member_send_ping(helpers[k], FRAME_PING_REQ,
				    m->id);
			m->ping_req_sent = true;
		} else if (m->ping_req_sent && m->state == MEMBER_ALIVE &&
		    now - m->ping_sent_ms >= 2u * pd->conf.ping_timeout_ms)
			member_set_state(m, MEMBER_SUSPECT, "no ack, direct "
			    "or indirect");
	}
	if (nmembers == 0)
		return;
	/* Round-robin over members with a link. */
	for (size_t tries = 0; tries < nmembers; tries++) {
		struct member *m = member_at(ping_cursor++ % nmembers);

		if (m->link == NULL || m->ping_sent_ms != 0)
			continue;
		m->ping_sent_ms = now;
		member_send_ping(m, FRAME_PING, NULL);
		break;
	}
	/* A member whose link dropped and who stays silent is suspect. */
	for (size_t i = 0; i < nmembers; i++) {
		struct member *m = member_at(i);

		if (m->link == NULL && m->state == MEMBER_ALIVE &&
		    m->last_heard_ms != 0 &&
		    now - m->last_heard_ms >= pd->conf.ping_timeout_ms)
			member_set_state(m, MEMBER_SUSPECT, "no link");
	}
}


/* Seeds until some link reaches them; members we keep links to. */
static void
view_dial(void)
{
	uint64_t now = clock_mono_ms();

	for (size_t i = 0; i < nseeds; i++) {
		struct seed *s = &seeds[i];

		if (link_to_addr(s->addr) || now < s->next_ms)
			continue;
		s->backoff_ms = backoff_next(s->backoff_ms);
		s->next_ms = now + with_jitter(s->backoff_ms);
		link_dial(s->addr);
	}
	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);

		if (m->link != NULL || m->addr[0] == '\0' ||
		    m->state == MEMBER_DEAD || now < m->next_dial_ms ||
		    link_to_addr(m->addr))
			continue;
		/* The lower id dials, so two peers do not race each other. */
		if (memcmp(pd->ident.id, m->id, IDENTITY_ID_LEN) > 0 &&
		    now - m->last_heard_ms < 2u * pd->conf.tick_ms + 1000u &&
		    m->last_heard_ms != 0)
			continue;
		m->backoff_ms = backoff_next(m->backoff_ms);
		m->next_dial_ms = now + with_jitter(m->backoff_ms);
		link_dial(m->addr);
	}
}

void
view_tick(void)
{
	view_dial();
	view_probe();
}

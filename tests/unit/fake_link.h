/*
 * fake_link.h: one stand-in for peerd/link.c, for the unit tests and fuzz
 * targets that drive a module above the link layer (gossip, replica,
 * swarm) without sockets.  Include it once, from the test's own .c file:
 * it defines link_* (so the archive's link.o is not pulled in).
 *
 * A member has an UP link when its link pointer is set (fake_link_up
 * sets it and tells the observers), or, with fake_link_all_up, always.
 * Every frame sent "leaves" at once: it is counted, and recorded in
 * fake_sent (the first FAKE_SENT_MAX, bodies up to FAKE_BODY_MAX bytes;
 * the rest only counted in fake_overflow).  The urgent lane is recorded
 * like the bulk one, marked urgent: order is what a test can see.  A
 * lent payload is released exactly once, sent or not, as link.c does.
 * fake_links_down makes every send fail; fake_outq is what link_outq
 * answers for an UP link; fake_held keeps every frame sent from having
 * "left" (link_mark_left answers false) until it is cleared.  With
 * fake_dial_ok a dial "starts": link_dial records the address (fake_dialed)
 * and link_to_addr answers true for it until fake_link_reset.
 */
#ifndef FAKE_LINK_H
#define FAKE_LINK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "frame.h"
#include "link.h"
#include "member.h"

#define FAKE_SENT_MAX	256
#define FAKE_BODY_MAX	4096
#define FAKE_LINKS_MAX	16

struct fake_sent {
	struct member	*to;
	uint32_t	 kind;
	bool		 urgent;
	uint8_t		 body[FAKE_BODY_MAX];
	size_t		 len;
};

static struct fake_sent	 fake_sent[FAKE_SENT_MAX];
static size_t		 fake_nsent, fake_overflow;
static uint64_t		 fake_frames, fake_payload;
static bool		 fake_link_all_up, fake_links_down, fake_held;
static bool		 fake_backlog;	/* link_rx_backlog()'s answer */
static size_t		 fake_outq;
static uint32_t		 fake_data_kind;	/* 0: any kind may carry data */
static link_observer_fn	 fake_observers[8];
static size_t		 fake_nobservers;
static link_handler_fn	 fake_handlers[FRAME_KIND_MAX];
static char		 fake_links[FAKE_LINKS_MAX];
static bool		 fake_dial_ok;
static char		 fake_dialed[FAKE_LINKS_MAX][64];
static size_t		 fake_ndialed;

static bool
fake_is_up(const struct member *m)
{
	return fake_link_all_up || m->link != NULL;
}

/* Forget what was sent (the observers and handlers stay). */
static void
fake_link_clear(void)
{
	fake_nsent = fake_overflow = 0;
	fake_frames = fake_payload = 0;
}

/* Forget everything: a fresh daemon in the next test. */
static void
fake_link_reset(void)
{
	fake_link_clear();
	fake_nobservers = 0;
	memset(fake_handlers, 0, sizeof(fake_handlers));
	fake_link_all_up = fake_links_down = fake_backlog = false;
	fake_outq = 0;
	fake_data_kind = 0;
	fake_dial_ok = false;
	fake_ndialed = 0;
}

/* Give m an UP link (slot: which fake link) and tell the observers. */
static void
fake_link_up(struct member *m, size_t slot)
{
	m->link = (struct link *)&fake_links[slot % FAKE_LINKS_MAX];
	for (size_t k = 0; k < fake_nobservers; k++)
		fake_observers[k](m, true);
}

/* m's link goes down (link_close does the same for its link). */
static void
fake_link_down(struct member *m)
{
	if (m->link == NULL)
		return;
	m->link = NULL;
	for (size_t k = 0; k < fake_nobservers; k++)
		fake_observers[k](m, false);
}

static int
fake_send(struct member *m, uint32_t kind, const uint8_t *body, size_t len,
    bool urgent)
{
	struct fake_sent *s;

	if (!fake_is_up(m) || fake_links_down)
		return -1;
	fake_frames++;
	if (fake_nsent == FAKE_SENT_MAX || len > FAKE_BODY_MAX) {
		fake_overflow++;
		return 0;
	}
	s = &fake_sent[fake_nsent++];
	s->to = m;
	s->kind = kind;
	s->urgent = urgent;
	memcpy(s->body, body, len);
	s->len = len;
	return 0;
}

void
link_register(uint32_t kind, link_handler_fn fn)
{
	if (kind < FRAME_KIND_MAX)
		fake_handlers[kind] = fn;
}

void
link_observe(link_observer_fn fn)
{
	for (size_t i = 0; i < fake_nobservers; i++)
		if (fake_observers[i] == fn)
			return;
	if (fake_nobservers < sizeof(fake_observers) / sizeof(fake_observers[0]))
		fake_observers[fake_nobservers++] = fn;
}

int
link_send_member(struct member *m, uint32_t kind, const uint8_t *body,
    size_t len)
{
	return fake_send(m, kind, body, len, false);
}

int
link_send_member_urgent(struct member *m, uint32_t kind, const uint8_t *body,
    size_t len)
{
	return fake_send(m, kind, body, len, true);
}

/* Nothing is queued here: every frame has "left", unless fake_held. */
size_t
link_mark_all(struct link_mark *out, size_t max)
{
	(void)out;
	(void)max;
	return 0;
}

bool
link_mark_left(const struct link_mark *m, size_t n)
{
	(void)m;
	(void)n;
	return !fake_held;
}

int
link_send_member_data(struct member *m, uint32_t kind, const uint8_t *body,
    size_t len, const struct link_payload *pl)
{
	volatile uint8_t sum = 0;
	int rc;

	if (pl == NULL)
		return -1;
	if (pl->len == 0 || (fake_data_kind != 0 && kind != fake_data_kind))
		abort();		/* link.h's contract, broken */
	if (pl->mem != NULL)		/* the bytes must be readable */
		for (size_t i = 0; i < pl->len; i += 512)
			sum ^= pl->mem[i];
	else if (pl->fd < 0)
		abort();
	if (pl->release != NULL)
		pl->release(pl->mem, pl->len, pl->arg);
	if ((rc = fake_send(m, kind, body, len, false)) == 0)
		fake_payload += pl->len;
	return rc;
}

bool
link_rx_backlog(void)
{
	return fake_backlog;
}

size_t
link_outq(const struct member *m)
{
	return fake_is_up(m) ? fake_outq : SIZE_MAX;
}

uint32_t
link_count(void)
{
	uint32_t n = 0;

	for (size_t i = 0; i < member_count(); i++)
		n += fake_is_up(member_at(i));
	return n;
}

json_t *
link_list_json(void)
{
	return json_array();
}

struct link *
link_dial(const char *hostport)
{
	if (!fake_dial_ok || fake_ndialed == FAKE_LINKS_MAX)
		return NULL;
	snprintf(fake_dialed[fake_ndialed], sizeof(fake_dialed[0]), "%s",
	    hostport);
	return (struct link *)&fake_links[fake_ndialed++];
}

bool
link_to_addr(const char *addr)
{
	for (size_t i = 0; i < fake_ndialed; i++)
		if (strcmp(fake_dialed[i], addr) == 0)
			return true;
	return false;
}

bool
link_addr_ok(const char *hostport)
{
	return strchr(hostport, ':') != NULL;
}

void
link_close(struct link *l, const char *why)
{
	(void)why;
	for (size_t i = 0; i < member_count(); i++)
		if (member_at(i)->link == l)
			fake_link_down(member_at(i));
}

void
link_close_flush(struct link *l, const char *why)
{
	link_close(l, why);
}

#endif

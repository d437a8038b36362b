/*
 * swim.c: PING, PING_REQ and ACK, and the prober (see swim.h and
 * docs/protocol.md section 4).  A PING is answered with an ACK of its
 * seq; a PING_REQ names a target and is answered with an ACK only when
 * this peer heard the target within --ping-timeout-ms; an ACK with a
 * target vouches for it.  The link is the failure detector: an idle
 * active link is pinged after a quarter (or three eighths: ping_idle_ms)
 * of the silence window and closed once the window passes in silence.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "identity.h"
#include "link.h"
#include "member.h"
#include "peerd.h"
#include "stats.h"
#include "swim.h"

int
swim_recv(struct member *from, uint32_t kind, const uint8_t *body,
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

/* The link-layer handler for PING, PING_REQ and ACK. */
static int
swim_frame(struct member *from, const struct frame *f, const char **why)
{
	if (swim_recv(from, f->kind, f->body, f->body_len) == -1) {
		pd_count(bad_body);
		*why = "malformed frame body";
		return -1;
	}
	return 0;
}

/*
 * How long m's link may be idle before we ping it: a quarter of the
 * silence window at the end with the lower id, three eighths at the
 * other.  Both ends used to ping after a quarter; having heard the last
 * exchange a moment apart, the end whose turn it was not had its tick
 * armed for the same moment, and woke for nothing just after the other's
 * PING came in: about one wasted wake-up per link per exchange (a tick
 * of 0.9 a peer a second at rest at 256 peers).  Now the lower end pings
 * an idle link, the other's deadline lies an eighth of the window after
 * each PING it hears, and it still pings when the traffic runs one way
 * only (it hears nothing while its frames refresh the other end).
 */
static uint64_t
ping_idle_ms(const struct member *m)
{
	return memcmp(pd->ident.id, m->id, IDENTITY_ID_LEN) < 0 ?
	    pd->conf.silence_ms / 4 : pd->conf.silence_ms / 8 * 3;
}

/*
 * A member without a link is suspect after the ping timeout and dead
 * after the silence window (states describe direct contact only;
 * member_fade, here and wherever else a member is looked at).
 */
void
swim_probe(void)
{
	uint64_t now = clock_mono_ms(), idle;
	struct dcbor_buf b;

	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);
		uint64_t silent = m->last_heard_ms ? now - m->last_heard_ms :
		    0;

		if (m->link == NULL) {
			member_fade(m, now);
			continue;
		}
		if (silent >= pd->conf.silence_ms) {
			member_set_state(m, MEMBER_SUSPECT, "link silent");
			link_close(m->link, "silent for the silence window");
			continue;
		}
		idle = ping_idle_ms(m);
		if (silent < idle || (m->ping_sent_ms != 0 &&
		    now - m->ping_sent_ms < idle))
			continue;
		m->ping_sent_ms = now;
		dcbor_buf_init(&b);
		dcbor_put_map(&b, 1);
		dcbor_put_cstr(&b, "seq");
		dcbor_put_uint(&b, ++m->ping_seq);
		link_send_member(m, FRAME_PING, b.data, b.len);
		dcbor_buf_free(&b);
	}
}

/*
 * A linkless member's label is no reason to wake (member_fade applies it
 * when the member is looked at): at 256 peers the members that swaps and
 * trims left without a link turned suspect or dead 0.2 to 0.6 times a
 * peer a second, each a wake-up of its own.
 */
uint64_t
swim_next(void)
{
	uint64_t next = UINT64_MAX, idle, due;

	for (size_t i = 0; i < member_count(); i++) {
		struct member *m = member_at(i);
		uint64_t h = m->last_heard_ms;

		if (h == 0 || m->link == NULL)
			continue;
		if (h + pd->conf.silence_ms < next)
			next = h + pd->conf.silence_ms;
		idle = ping_idle_ms(m);
		due = m->ping_sent_ms != 0 && m->ping_sent_ms > h ?
		    m->ping_sent_ms + idle : h + idle;
		if (due < next)
			next = due;
	}
	return next;
}

void
swim_init(void)
{
	link_register(FRAME_PING, swim_frame);
	link_register(FRAME_PING_REQ, swim_frame);
	link_register(FRAME_ACK, swim_frame);
}

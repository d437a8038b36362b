/*
 * handshake.c: the CHANNEL_HELLO exchange (docs/protocol.md section 3).
 * Each side sends a hello with a fresh nonce and answers the other's with
 * a proof that echoes it, signed; the link is UP once both proofs are in.
 * Two links to one peer (both dialed at once) keep the one dialed by the
 * lower id.  On TCP with --link-auth mac each hello (and so each signed
 * proof) offers a fresh X25519 key, "kx"; when both did, the link's MAC
 * keys are derived as it comes UP (linkkey.h) and its frames carry a MAC
 * from then on.  The link's state moves only through link_set_state.
 */
#include <stdio.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <openssl/crypto.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "handshake.h"
#include "link.h"
#include "link_int.h"
#include "linkkey.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "stats.h"

void
handshake_encode(struct dcbor_buf *b, const struct link_hello *h)
{
	dcbor_put_map(b, h->kx_len > 0 ? 5 : 4);
	if (h->kx_len > 0) {		/* "kx" sorts first (shortest key) */
		dcbor_put_cstr(b, "kx");
		dcbor_put_bytes(b, h->kx, h->kx_len);
	}
	dcbor_put_cstr(b, "addr");
	dcbor_put_cstr(b, h->addr);
	dcbor_put_cstr(b, "echo");
	dcbor_put_bytes(b, h->echo, h->echo_len);
	dcbor_put_cstr(b, "name");
	dcbor_put_cstr(b, h->name);
	dcbor_put_cstr(b, "nonce");
	dcbor_put_bytes(b, h->nonce, h->nonce_len);
}

void
handshake_send(struct link *l, const uint8_t *echo, size_t echo_len)
{
	struct link_hello h;
	struct dcbor_buf b;

	memset(&h, 0, sizeof(h));
	snprintf(h.addr, sizeof(h.addr), "%s", pd->listen_addr);
	snprintf(h.name, sizeof(h.name), "%s", pd->conf.name);
	h.echo = echo;
	h.echo_len = echo_len;
	h.nonce = l->nonce;
	h.nonce_len = LINK_NONCE_LEN;
	if (l->eph.pkey != NULL) {
		h.kx = l->eph.pub;
		h.kx_len = LINKKEY_PUB_LEN;
	}
	dcbor_buf_init(&b);
	handshake_encode(&b, &h);
	link_send_to(l, FRAME_CHANNEL_HELLO, NULL, b.data, b.len, NULL, true);
	dcbor_buf_free(&b);
}

/* A hello's keys, in canonical order ("kx" is the optional one). */
static const char *const hello_keys[] = { "kx", "addr", "echo", "name",
    "nonce" };
#define HELLO_KX	0
#define HELLO_NKEYS	5

int
handshake_parse(const uint8_t *p, size_t len, struct link_hello *h)
{
	struct dcbor_rd rd;
	uint64_t n;
	unsigned int seen = 0;

	memset(h, 0, sizeof(*h));
	dcbor_rd_init(&rd, p, len);
	if (dcbor_get_map(&rd, &n) == -1 || n < HELLO_NKEYS - 1 ||
	    n > HELLO_NKEYS)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *k;
		size_t klen;
		int key = -1, rc;

		if (dcbor_get_text(&rd, &k, &klen) == -1)
			return -1;
		for (int j = 0; j < HELLO_NKEYS; j++)
			if (dcbor_text_is(k, klen, hello_keys[j]))
				key = j;
		/* Every key once: a missing one is not a default. */
		if (key == -1 || (seen & (1u << key)) != 0)
			return -1;
		seen |= 1u << key;
		switch (key) {
		case HELLO_KX:
			rc = dcbor_get_bytes(&rd, &h->kx, &h->kx_len);
			if (rc == 0 && h->kx_len != LINKKEY_PUB_LEN)
				rc = -1;
			break;
		case 1:
			rc = dcbor_get_cstr(&rd, h->addr, sizeof(h->addr));
			break;
		case 2:
			rc = dcbor_get_bytes(&rd, &h->echo, &h->echo_len);
			break;
		case 3:
			rc = dcbor_get_cstr(&rd, h->name, sizeof(h->name));
			break;
		default:
			rc = dcbor_get_bytes(&rd, &h->nonce, &h->nonce_len);
			break;
		}
		if (rc == -1)
			return -1;
	}
	if ((seen | 1u << HELLO_KX) != (1u << HELLO_NKEYS) - 1 ||
	    h->nonce_len != LINK_HELLO_NONCE ||
	    (h->echo_len != 0 && h->echo_len != LINK_HELLO_NONCE))
		return -1;
	return dcbor_left(&rd) == 0 ? 0 : -1;
}

/* Keep one link per peer: the one dialed by the lower id wins. */
static bool
keep_over(const struct link *a, const struct link *b)
{
	const uint8_t *a_dialer = a->outbound ? pd->ident.id : a->member->id;
	const uint8_t *b_dialer = b->outbound ? pd->ident.id : b->member->id;
	int c = memcmp(a_dialer, b_dialer, IDENTITY_ID_LEN);

	return c != 0 ? c < 0 : a->serial < b->serial;
}

/*
 * Both hellos offered a key: derive the link's two MAC keys (linkkey.h)
 * and wipe our ephemeral key.  0, or -1 if their key is unusable.
 */
static int
handshake_key(struct link *l)
{
	uint8_t tx[LINKKEY_LEN], rx[LINKKEY_LEN];
	int rc = -1;

	if (l->eph.pkey == NULL || !l->peer_offered) {
		linkkey_eph_free(&l->eph);
		return 0;		/* an unkeyed link: signed frames */
	}
	if (linkkey_derive(&l->eph, l->peer_kx, pd->ident.id, l->nonce,
	    l->member->id, l->peer_nonce, tx, rx) == 0 &&
	    linkkey_mac_init(&l->mac_tx, tx) == 0 &&
	    linkkey_mac_init(&l->mac_rx, rx) == 0) {
		l->keyed = true;
		rc = 0;
	}
	OPENSSL_cleanse(tx, sizeof(tx));
	OPENSSL_cleanse(rx, sizeof(rx));
	linkkey_eph_free(&l->eph);
	return rc;
}

static void
handshake_up(struct link *l)
{
	struct member *m = l->member;

	if (m->link != NULL && m->link != l) {
		if (keep_over(m->link, l)) {
			pd_count(links_duplicate);
			link_close(l, "duplicate link to the same peer");
			return;
		}
		pd_count(links_duplicate);
		link_close(m->link, "duplicate link to the same peer");
	}
	if (link_count_budget(l) >= pd->conf.max_links) {
		pd_count_limit(LINKS);
		link_close(l, "link limit reached");
		return;
	}
	m->link = l;
	m->dial = true;
	m->backoff_ms = 0;
	l->up_ms = clock_mono_ms();
	pd_count(links_up);
	if (l->keyed)
		pd_count(links_keyed);
	member_heard(m);
	log_info("link #%llu up with %s (%s) at %s",
	    (unsigned long long)l->serial, m->name, m->peer_id, m->addr);
	link_notify(m, true);
}

void
handshake_recv(struct link *l, const struct frame *f)
{
	struct link_hello h;
	struct member *m;

	if (handshake_parse(f->body, f->body_len, &h) == -1) {
		pd_count(bad_body);
		pd_count_handshake(BAD_HELLO);
		link_close(l, "malformed channel_hello body");
		return;
	}
	if (memcmp(f->from, pd->ident.id, IDENTITY_ID_LEN) == 0) {
		pd_count_handshake(SELF);
		link_close(l, "connected to ourselves");
		return;
	}
	if (l->state == LINK_HELLO_SENT) {
		if (h.echo_len != 0) {
			pd_count_handshake(PROOF_BEFORE_HELLO);
			link_close(l, "protocol: proof before hello");
			return;
		}
		m = member_get(f->from, h.name, h.addr);
		/* On an authenticated channel from is its peer (link_frame). */
		memcpy(m->pub, l->authed ? l->chan_pub : f->key,
		    IDENTITY_PUB_LEN);
		m->have_pub = true;
		l->member = m;
		m->last_stamp = f->stamp;
		memcpy(l->peer_nonce, h.nonce, LINK_NONCE_LEN);
		if ((l->peer_offered = h.kx_len > 0))
			memcpy(l->peer_kx, h.kx, LINKKEY_PUB_LEN);
		link_set_state(l, LINK_EV_HELLO);
		handshake_send(l, h.nonce, h.nonce_len);
		return;
	}
	/* PROOF_SENT: this must be their proof, echoing our nonce. */
	if (h.echo_len != LINK_NONCE_LEN ||
	    memcmp(h.echo, l->nonce, LINK_NONCE_LEN) != 0) {
		pd_count_handshake(WRONG_ECHO);
		link_close(l, "handshake: proof does not echo our nonce");
		return;
	}
	if (memcmp(f->from, l->member->id, IDENTITY_ID_LEN) != 0) {
		pd_count_handshake(WRONG_KEY);
		link_close(l, "handshake: proof signed by another key");
		return;
	}
	/*
	 * The proof repeats its hello's key: it is the proof, signed and
	 * echoing our nonce, that binds the key to its id live.
	 */
	if ((h.kx_len > 0) != l->peer_offered || (h.kx_len > 0 &&
	    memcmp(h.kx, l->peer_kx, LINKKEY_PUB_LEN) != 0)) {
		pd_count_handshake(BAD_HELLO);
		link_close(l, "handshake: proof's kx is not its hello's");
		return;
	}
	if (handshake_key(l) == -1) {
		pd_count_handshake(BAD_HELLO);
		link_close(l, "handshake: unusable kx");
		return;
	}
	l->member->last_stamp = f->stamp;
	link_set_state(l, LINK_EV_PROOF);
	if (l->state == LINK_UP)
		handshake_up(l);
}

/*
 * test_linkkey.c: a TCP link's MAC keys (common/linkkey.c) and the MAC'd
 * frame (frame_encode_mac, frame_open_keyed; docs/protocol.md sections 2,
 * 3 and 5).  Both ends of a link derive the same two keys, one per
 * direction; a man in the middle who swaps an offered key, or a peer that
 * offered none, leaves the ends with keys that do not match, so no frame
 * opens; a flipped byte anywhere in a MAC'd frame is refused; a frame
 * MAC'd by a third party, or one replayed from another link, is refused;
 * a MAC frame on a link without keys is refused with its own code.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "dcbor.h"
#include "frame.h"
#include "hlc.h"
#include "identity.h"
#include "linkkey.h"

/* One end of a link: its identity, nonce, ephemeral key and MAC keys. */
struct end {
	struct identity		 id;
	uint8_t			 nonce[LINKKEY_NONCE_LEN];
	struct linkkey_eph	 eph;
	uint8_t			 tx[LINKKEY_LEN], rx[LINKKEY_LEN];
	struct linkkey_mac	 mac_tx, mac_rx;
};

static void
end_new(struct end *e, uint8_t seed0)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)(seed0 + i);
	ck_assert_int_eq(identity_from_seed(&e->id, seed), 0);
	ck_assert_int_eq(RAND_bytes(e->nonce, sizeof(e->nonce)), 1);
	ck_assert_int_eq(linkkey_eph_new(&e->eph), 0);
}

static void
end_free(struct end *e)
{
	linkkey_eph_free(&e->eph);
	linkkey_mac_free(&e->mac_tx);
	linkkey_mac_free(&e->mac_rx);
	identity_free(&e->id);
}

/* e's keys toward peer, given the X25519 key e saw in peer's hello. */
static int
end_derive(struct end *e, const struct end *peer, const uint8_t *their_kx)
{
	if (linkkey_derive(&e->eph, their_kx, e->id.id, e->nonce, peer->id.id,
	    peer->nonce, e->tx, e->rx) == -1)
		return -1;
	ck_assert_int_eq(linkkey_mac_init(&e->mac_tx, e->tx), 0);
	ck_assert_int_eq(linkkey_mac_init(&e->mac_rx, e->rx), 0);
	return 0;
}

/* A (seed 00 ..) and B (seed 20 ..) with a keyed link between them. */
static void
pair_new(struct end *a, struct end *b)
{
	end_new(a, 0x00);
	end_new(b, 0x20);
	ck_assert_int_eq(end_derive(a, b, b->eph.pub), 0);
	ck_assert_int_eq(end_derive(b, a, a->eph.pub), 0);
}

/* A MAC'd PING from 'from' to 'to' (length prefix included) into out. */
static void
mac_ping(struct dcbor_buf *out, const struct end *from, const struct end *to,
    uint64_t phys)
{
	struct hlc_stamp st = { phys, 0, from->id.node };
	static const uint8_t body[] = { 0xa1, 0x63, 's', 'e', 'q', 0x01 };

	dcbor_buf_reset(out);
	ck_assert_int_eq(frame_encode_mac(out, &from->id, &from->mac_tx,
	    FRAME_PING, "fleet", to->id.id, &st, body, sizeof(body), 0,
	    FRAME_MAX_DEFAULT), 0);
}

static int
open_at(const struct dcbor_buf *b, const struct end *rcv,
    const struct end *peer, struct frame *f)
{
	return frame_open_keyed(b->data + FRAME_LEN_PREFIX,
	    b->len - FRAME_LEN_PREFIX, f, peer->id.id, &rcv->mac_rx);
}

START_TEST(both_ends_agree)
{
	struct end a, b;
	struct dcbor_buf out;
	struct frame f;

	pair_new(&a, &b);
	/* One key per direction: A's sending key is B's receiving key. */
	ck_assert_mem_eq(a.tx, b.rx, LINKKEY_LEN);
	ck_assert_mem_eq(a.rx, b.tx, LINKKEY_LEN);
	ck_assert(memcmp(a.tx, a.rx, LINKKEY_LEN) != 0);

	dcbor_buf_init(&out);
	mac_ping(&out, &a, &b, 1796000000000ull);
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_OK);
	ck_assert(f.has_mac && !f.bare);
	ck_assert_uint_eq(f.kind, FRAME_PING);
	ck_assert_mem_eq(f.from, a.id.id, IDENTITY_ID_LEN);
	/* Its own MAC does not open it at the sender: directions differ. */
	ck_assert_int_eq(frame_open_keyed(out.data + FRAME_LEN_PREFIX,
	    out.len - FRAME_LEN_PREFIX, &f, a.id.id, &a.mac_rx), FRAME_EMAC);
	mac_ping(&out, &b, &a, 1796000000001ull);
	ck_assert_int_eq(open_at(&out, &a, &b, &f), FRAME_OK);
	/* The encoding is {"env", "mac"}, the MAC the envelope's HMAC. */
	{
		uint8_t want[LINKKEY_MAC_LEN];

		ck_assert_int_eq(linkkey_mac(&b.mac_tx, f.env, f.env_len, want),
		    0);
		ck_assert_mem_eq(want, f.mac, LINKKEY_MAC_LEN);
		ck_assert_uint_eq(out.data[FRAME_LEN_PREFIX], 0xa2);
		ck_assert_mem_eq(out.data + out.len - LINKKEY_MAC_LEN - 6,
		    "\x63mac\x58\x20", 6);
	}
	dcbor_buf_free(&out);
	end_free(&a);
	end_free(&b);
}
END_TEST

/*
 * A man in the middle swaps the key in A's hello for its own (the proof
 * is signed, so in peerd the swap shows at once; here the ends simply go
 * on): the ends derive different keys and nothing opens.  A peer that
 * offered no key leaves nothing to derive from.
 */
START_TEST(swapped_or_absent_kx)
{
	struct end a, b, m;
	struct dcbor_buf out;
	struct frame f;
	static const uint8_t zero[LINKKEY_PUB_LEN];
	struct linkkey_eph none = { NULL, { 0 } };
	uint8_t tx[LINKKEY_LEN], rx[LINKKEY_LEN];

	end_new(&a, 0x00);
	end_new(&b, 0x20);
	end_new(&m, 0x40);
	ck_assert_int_eq(end_derive(&a, &b, b.eph.pub), 0);
	ck_assert_int_eq(end_derive(&b, &a, m.eph.pub), 0);	/* swapped */
	ck_assert(memcmp(a.tx, b.rx, LINKKEY_LEN) != 0);
	ck_assert(memcmp(a.rx, b.tx, LINKKEY_LEN) != 0);
	dcbor_buf_init(&out);
	mac_ping(&out, &a, &b, 1796000000000ull);
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_EMAC);
	mac_ping(&out, &b, &a, 1796000000000ull);
	ck_assert_int_eq(open_at(&out, &a, &b, &f), FRAME_EMAC);

	/* No ephemeral key of ours, an all-zero (low-order) one of theirs,
	 * or equal ids: no keys, and the outputs are zeroed. */
	memset(tx, 0xff, sizeof(tx));
	ck_assert_int_eq(linkkey_derive(&none, b.eph.pub, a.id.id, a.nonce,
	    b.id.id, b.nonce, tx, rx), -1);
	ck_assert_mem_eq(tx, zero, LINKKEY_LEN);
	ck_assert_int_eq(linkkey_derive(&a.eph, zero, a.id.id, a.nonce,
	    b.id.id, b.nonce, tx, rx), -1);
	ck_assert_int_eq(linkkey_derive(&a.eph, b.eph.pub, a.id.id, a.nonce,
	    a.id.id, b.nonce, tx, rx), -1);
	/* Other nonces (another connection between the same two) give other
	 * keys even from the same X25519 keys. */
	b.nonce[0] ^= 1;
	ck_assert_int_eq(linkkey_derive(&a.eph, b.eph.pub, a.id.id, a.nonce,
	    b.id.id, b.nonce, tx, rx), 0);
	ck_assert(memcmp(tx, a.tx, LINKKEY_LEN) != 0);
	dcbor_buf_free(&out);
	end_free(&a);
	end_free(&b);
	end_free(&m);
}
END_TEST

/* Every single flipped bit of a MAC'd frame is refused, never opened. */
START_TEST(flipped_bits_refused)
{
	struct end a, b;
	struct dcbor_buf out;
	struct frame f;
	size_t n;

	pair_new(&a, &b);
	dcbor_buf_init(&out);
	mac_ping(&out, &a, &b, 1796000000000ull);
	n = out.len - FRAME_LEN_PREFIX;
	for (size_t i = 0; i < n * 8; i++) {
		uint8_t *p = out.data + FRAME_LEN_PREFIX + i / 8;
		int rc;

		*p ^= (uint8_t)(1u << (i % 8));
		rc = open_at(&out, &b, &a, &f);
		ck_assert_msg(rc != FRAME_OK, "bit %zu flipped opened", i);
		/* A flip inside the MAC itself is exactly a MAC failure. */
		if (i / 8 >= n - LINKKEY_MAC_LEN)
			ck_assert_int_eq(rc, FRAME_EMAC);
		*p ^= (uint8_t)(1u << (i % 8));
	}
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_OK);
	dcbor_buf_free(&out);
	end_free(&a);
	end_free(&b);
}
END_TEST

/*
 * C has a keyed link of its own with B.  A frame C MAC'd on that link and
 * sent on A's link is refused (its key is not A's); a frame on A's link,
 * MAC'd with A's key but "from" C, is refused too (the link's peer is A);
 * and a frame of A's replayed onto C's link fails C's key.
 */
START_TEST(third_party_and_replay_refused)
{
	struct end a, b, b2, c;
	struct dcbor_buf out;
	struct frame f;
	struct hlc_stamp st = { 1796000000000ull, 0, 0 };
	static const uint8_t body[] = { 0xf6 };

	pair_new(&a, &b);
	end_new(&c, 0x40);
	/* B's second connection (to C): same identity, its own ephemeral. */
	end_new(&b2, 0x20);
	ck_assert_int_eq(end_derive(&c, &b2, b2.eph.pub), 0);
	ck_assert_int_eq(end_derive(&b2, &c, c.eph.pub), 0);
	dcbor_buf_init(&out);

	mac_ping(&out, &c, &b, 1796000000000ull);	/* C's key */
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_EMAC);
	ck_assert_int_eq(open_at(&out, &b2, &c, &f), FRAME_OK);

	/* A's key, C's id as "from": the MAC holds, the peer does not. */
	st.node = c.id.node;
	dcbor_buf_reset(&out);
	ck_assert_int_eq(frame_encode_mac(&out, &c.id, &a.mac_tx, FRAME_PING,
	    "fleet", b.id.id, &st, body, sizeof(body), 0, FRAME_MAX_DEFAULT),
	    0);
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_ECHANNEL);

	/* A's frame to B, replayed by someone onto the C-B link. */
	mac_ping(&out, &a, &b, 1796000000000ull);
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_OK);
	ck_assert_int_eq(open_at(&out, &b2, &c, &f), FRAME_EMAC);
	ck_assert_int_eq(frame_open_keyed(out.data + FRAME_LEN_PREFIX,
	    out.len - FRAME_LEN_PREFIX, &f, a.id.id, &b2.mac_rx), FRAME_EMAC);
	dcbor_buf_free(&out);
	end_free(&a);
	end_free(&b);
	end_free(&b2);
	end_free(&c);
}
END_TEST

/*
 * A MAC frame where no key was agreed (frame_open, a TLS channel, a keyed
 * open without keys) is unkeyed_mac; a signed frame still opens on a
 * keyed link (a peer may send either there); mac beside key and sig, or
 * of the wrong length, is refused; an unkeyed encoder refuses to encode.
 */
START_TEST(unkeyed_and_shapes)
{
	struct end a, b;
	struct dcbor_buf out;
	struct frame f;
	struct linkkey_mac none = { NULL };
	struct hlc_stamp st = { 1796000000000ull, 0, 0 };
	static const uint8_t body[] = { 0xf6 };
	const uint8_t *p;
	size_t n;

	pair_new(&a, &b);
	dcbor_buf_init(&out);
	mac_ping(&out, &a, &b, 1796000000000ull);
	p = out.data + FRAME_LEN_PREFIX;
	n = out.len - FRAME_LEN_PREFIX;
	ck_assert_int_eq(frame_open(p, n, &f), FRAME_EUNKEYED);
	ck_assert_int_eq(frame_open_channel(p, n, &f, a.id.id), FRAME_EUNKEYED);
	ck_assert_int_eq(frame_open_keyed(p, n, &f, a.id.id, &none),
	    FRAME_EUNKEYED);
	ck_assert_int_eq(frame_open_keyed(p, n, &f, a.id.id, NULL),
	    FRAME_EUNKEYED);
	ck_assert_str_eq(frame_strerror(FRAME_EUNKEYED), "unkeyed_mac");
	ck_assert_str_eq(frame_strerror(FRAME_EMAC), "bad_mac");
	ck_assert_str_eq(frame_strerror(FRAME_EMACLEN), "mac_len");

	/* Signed on a keyed link: verified as on any TCP link. */
	st.node = a.id.node;
	dcbor_buf_reset(&out);
	ck_assert_int_eq(frame_encode_head(&out, &a.id, FRAME_PING, "fleet",
	    b.id.id, &st, body, sizeof(body), 0, FRAME_MAX_DEFAULT), 0);
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_OK);
	ck_assert(!f.has_mac);
	/* Bare on a keyed link: refused. */
	dcbor_buf_reset(&out);
	ck_assert_int_eq(frame_encode_bare(&out, &a.id, FRAME_PING, "fleet",
	    b.id.id, &st, body, sizeof(body), 0, FRAME_MAX_DEFAULT), 0);
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_EBARE);
	/* The encoder needs a key. */
	ck_assert_int_eq(frame_encode_mac(&out, &a.id, &none, FRAME_PING,
	    "fleet", b.id.id, &st, body, sizeof(body), 0, FRAME_MAX_DEFAULT),
	    -1);

	/* A BLOCK's detached payload: outside the MAC, as outside a sig. */
	dcbor_buf_reset(&out);
	ck_assert_int_eq(frame_encode_mac(&out, &a.id, &a.mac_tx, FRAME_BLOCK,
	    "fleet", b.id.id, &st, body, sizeof(body), 3, FRAME_MAX_DEFAULT),
	    0);
	dcbor_put_raw(&out, (const uint8_t *)"abc", 3);
	ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_OK);
	ck_assert_uint_eq(f.data_len, 3);
	ck_assert_mem_eq(f.data, "abc", 3);
	/* ... and on any other kind refused. */
	ck_assert_int_eq(frame_encode_mac(&out, &a.id, &a.mac_tx, FRAME_PING,
	    "fleet", b.id.id, &st, body, sizeof(body), 3, FRAME_MAX_DEFAULT),
	    -1);

	/* Hand-made shapes: mac beside key and sig; a 31-byte mac. */
	{
		struct dcbor_buf h;
		uint8_t zeros[64] = { 0 };

		mac_ping(&out, &a, &b, 1796000000000ull);
		ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_OK);
		dcbor_buf_init(&h);
		dcbor_put_map(&h, 4);
		dcbor_put_cstr(&h, "env");
		dcbor_put_raw(&h, f.env, f.env_len);
		dcbor_put_cstr(&h, "key");
		dcbor_put_bytes(&h, a.id.pub, IDENTITY_PUB_LEN);
		dcbor_put_cstr(&h, "mac");
		dcbor_put_bytes(&h, f.mac, LINKKEY_MAC_LEN);
		dcbor_put_cstr(&h, "sig");
		dcbor_put_bytes(&h, zeros, IDENTITY_SIG_LEN);
		ck_assert_int_eq(frame_open_keyed(h.data, h.len, &f, a.id.id,
		    &b.mac_rx), FRAME_ESHAPE);
		dcbor_buf_reset(&h);
		mac_ping(&out, &a, &b, 1796000000000ull);
		ck_assert_int_eq(open_at(&out, &b, &a, &f), FRAME_OK);
		dcbor_put_map(&h, 2);
		dcbor_put_cstr(&h, "env");
		dcbor_put_raw(&h, f.env, f.env_len);
		dcbor_put_cstr(&h, "mac");
		dcbor_put_bytes(&h, f.mac, LINKKEY_MAC_LEN - 1);
		ck_assert_int_eq(frame_open_keyed(h.data, h.len, &f, a.id.id,
		    &b.mac_rx), FRAME_EMACLEN);
		dcbor_buf_free(&h);
	}
	dcbor_buf_free(&out);
	end_free(&a);
	end_free(&b);
}
END_TEST

/*
 * linkkey_mac is HMAC-SHA256 (RFC 2104) under the 32-byte direction key:
 * the same tag as OpenSSL's one-shot HMAC() for every length around the
 * block boundaries and beyond, for several keys, the key's states reused
 * frame after frame; the check refuses any one flipped bit of the tag.
 */
START_TEST(mac_is_hmac_sha256)
{
	uint8_t key[LINKKEY_LEN], msg[700], tag[LINKKEY_MAC_LEN];
	uint8_t want[EVP_MAX_MD_SIZE];
	unsigned int wlen;
	struct linkkey_mac m;

	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(RAND_bytes(key, sizeof(key)), 1);
		if (k == 0)
			memset(key, 0xff, sizeof(key));
		ck_assert_int_eq(linkkey_mac_init(&m, key), 0);
		ck_assert_ptr_nonnull(m.ctx);
		for (size_t len = 0; len <= sizeof(msg); len += len < 130 ?
		    1 : 37) {
			ck_assert_int_eq(RAND_bytes(msg, sizeof(msg)), 1);
			ck_assert_int_eq(linkkey_mac(&m, msg, len, tag), 0);
			ck_assert_ptr_nonnull(HMAC(EVP_sha256(), key,
			    sizeof(key), msg, len, want, &wlen));
			ck_assert_uint_eq(wlen, LINKKEY_MAC_LEN);
			ck_assert_mem_eq(tag, want, LINKKEY_MAC_LEN);
			ck_assert_int_eq(linkkey_mac_check(&m, msg, len, want),
			    0);
			want[len % LINKKEY_MAC_LEN] ^= (uint8_t)(1u << (len % 8));
			ck_assert_int_eq(linkkey_mac_check(&m, msg, len, want),
			    -1);
		}
		linkkey_mac_free(&m);
		ck_assert_ptr_null(m.ctx);
		linkkey_mac_free(&m);	/* twice: harmless */
		ck_assert_int_eq(linkkey_mac(&m, msg, 1, tag), -1);
	}
}
END_TEST

static Suite *
linkkey_suite(void)
{
	Suite *s = suite_create("linkkey");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, both_ends_agree);
	tcase_add_test(tc, swapped_or_absent_kx);
	tcase_add_test(tc, flipped_bits_refused);
	tcase_add_test(tc, third_party_and_replay_refused);
	tcase_add_test(tc, unkeyed_and_shapes);
	tcase_add_test(tc, mac_is_hmac_sha256);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(linkkey_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * fuzz_frame.c: libFuzzer target for the wire frame parser.
 *
 * The first input byte picks the mode (its two low bits):
 *   0: the rest is a byte stream read as a link would read it, length
 *      prefix first (frame_read_len), then frame_open on each frame;
 *   1: the rest is one frame body for frame_decode with bare frames
 *      allowed, then frame_verify;
 *   2: as 0 on a keyed link (frame_open_keyed under the fixed fuzz key,
 *      32 bytes of 0x42, the link's peer the id of identity seed
 *      00 01 .. 1f);
 *   3: one frame for frame_open_keyed, as a keyed link opens it.
 * A MAC'd frame opens only in the keyed modes, and there only with the
 * fuzz key's MAC of its envelope and "from" the link's peer.
 * Whatever decodes must satisfy the codec's promises: results point into
 * the input, the envelope is exactly the canonical encoding of the fields
 * decoded from it, and so is the whole frame, detached payload included
 * (so no second spelling of a frame is accepted); a payload is never
 * accepted on a kind that does not allow one, nor empty.
 * Seeds: tests/fuzz/seeds/fuzz_frame/, written by test_frame (modes 0
 * and 1) and test_linkkey (2 and 3) when FRAME_SEED_DIR is set.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "frame.h"
#include "hlc.h"
#include "identity.h"
#include "linkkey.h"

#define FUZZ_CAP	(1u << 20)

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct linkkey_mac	 fz_mac;
static uint8_t			 fz_peer[IDENTITY_ID_LEN];

/* The keyed modes' key and peer, made once. */
static void
fz_keyed_init(void)
{
	struct identity id;
	uint8_t seed[IDENTITY_SEED_LEN], key[LINKKEY_LEN];

	if (fz_mac.ctx != NULL)
		return;
	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)i;
	memset(key, 0x42, sizeof(key));
	if (identity_from_seed(&id, seed) == -1 ||
	    linkkey_mac_init(&fz_mac, key) == -1)
		abort();
	memcpy(fz_peer, id.id, sizeof(fz_peer));
	identity_free(&id);
}

/* Open one frame in mode: frame_open, or frame_open_keyed (keyed). */
static int
fz_open(const uint8_t *p, size_t n, struct frame *f, bool keyed)
{
	int rc;

	if (!keyed) {
		rc = frame_open(p, n, f);
		if (rc == FRAME_OK && (f->bare || f->has_mac))
			abort();
		return rc;
	}
	rc = frame_open_keyed(p, n, f, fz_peer, &fz_mac);
	if (rc == FRAME_OK && f->bare)
		abort();
	if (rc == FRAME_OK && f->has_mac) {
		if (memcmp(f->from, fz_peer, sizeof(fz_peer)) != 0 ||
		    linkkey_mac_check(&fz_mac, f->env, f->env_len, f->mac) != 0)
			abort();
	}
	return rc;
}

static void
put_key(struct dcbor_buf *b, const char *k)
{
	dcbor_put_text(b, k, strlen(k));
}

/* Abort unless f's envelope is the canonical encoding of its fields. */
static void
check_frame(const struct frame *f, const uint8_t *buf, size_t len)
{
	struct dcbor_buf b;

	if (f->env < buf || f->env + f->env_len > buf + len ||
	    f->body < f->env || f->body + f->body_len > f->env + f->env_len ||
	    f->group_len > 255 || f->ver != FRAME_VERSION || f->kind == 0 ||
	    f->kind >= FRAME_KIND_MAX)
		abort();
	if (f->group_len > 0 && ((const uint8_t *)f->group < f->env ||
	    (const uint8_t *)f->group + f->group_len > f->env + f->env_len))
		abort();
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 7);
	put_key(&b, "to");
	dcbor_put_bytes(&b, f->to, f->to_any ? 0 : sizeof(f->to));
	put_key(&b, "ver");
	dcbor_put_uint(&b, f->ver);
	put_key(&b, "body");
	dcbor_put_raw(&b, f->body, f->body_len);
	put_key(&b, "from");
	dcbor_put_bytes(&b, f->from, sizeof(f->from));
	put_key(&b, "kind");
	dcbor_put_uint(&b, f->kind);
	put_key(&b, "group");
	dcbor_put_text(&b, f->group, f->group_len);
	put_key(&b, "stamp");
	hlc_encode(&b, &f->stamp);
	if (b.len != f->env_len || memcmp(b.data, f->env, b.len) != 0)
		abort();
	/* The whole frame: env, then key and sig unless bare, then data. */
	if (f->data != NULL && (f->data_len == 0 ||
	    !frame_kind_allows_data(f->kind) || f->data < f->env + f->env_len ||
	    f->data + f->data_len != buf + len))
		abort();
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, (f->bare ? 1 : f->has_mac ? 2 : 3) +
	    (f->data != NULL));
	put_key(&b, "env");
	dcbor_put_raw(&b, f->env, f->env_len);
	if (f->has_mac) {
		put_key(&b, "mac");
		dcbor_put_bytes(&b, f->mac, sizeof(f->mac));
	} else if (!f->bare) {
		put_key(&b, "key");
		dcbor_put_bytes(&b, f->key, sizeof(f->key));
		put_key(&b, "sig");
		dcbor_put_bytes(&b, f->sig, sizeof(f->sig));
	}
	if (f->data != NULL) {
		put_key(&b, "data");
		dcbor_put_bytes(&b, f->data, f->data_len);
	}
	if (b.len != len || memcmp(b.data, buf, len) != 0)
		abort();
	dcbor_buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame f;
	uint32_t len;
	int rc;

	bool keyed;

	if (size < 1)
		return 0;
	keyed = (data[0] & 2) != 0;
	if (keyed)
		fz_keyed_init();
	if ((data[0] & 3) == 1) {
		rc = frame_decode(data + 1, size - 1, &f, true);
		if (rc == FRAME_OK) {
			check_frame(&f, data + 1, size - 1);
			rc = frame_verify(&f);
			if (f.has_mac && rc != FRAME_EUNKEYED)
				abort();
		}
		if (frame_strerror(rc) == NULL)
			abort();
		return 0;
	}
	if ((data[0] & 3) == 3) {
		if ((rc = fz_open(data + 1, size - 1, &f, true)) == FRAME_OK)
			check_frame(&f, data + 1, size - 1);
		return 0;
	}
	data++;
	size--;
	while (frame_read_len(data, size, FUZZ_CAP, &len) == FRAME_OK &&
	    len <= size - FRAME_LEN_PREFIX) {
		rc = fz_open(data + FRAME_LEN_PREFIX, len, &f, keyed);
		if (rc == FRAME_OK)
			check_frame(&f, data + FRAME_LEN_PREFIX, len);
		data += FRAME_LEN_PREFIX + len;
		size -= FRAME_LEN_PREFIX + len;
	}
	return 0;
}

/*
 * frame.h: the signed wire frame (docs/protocol.md sections 1 and 2).
 *
 * On the wire: a 4-byte big-endian length L (1 <= L <= cap), then L bytes
 * of canonical CBOR:
 *
 *   frame    = { "env": envelope, "key": bstr(32), "sig": bstr(64),
 *                ? "data": bstr(1..) }
 *   envelope = { "to": bstr(32) or bstr(0) (anyone), "ver": 1,
 *                "body": any, "from": bstr(32), "kind": uint,
 *                "group": tstr, "stamp": [phys, logical, node] }
 *
 * (keys listed in canonical order).  sig is Ed25519 by key over the exact
 * bytes of the envelope map; from must equal SHA-256(key).  Nesting at
 * most 64.  "data" is a detached payload: bulk bytes outside the envelope,
 * so not signed, allowed only for the kinds frame_kind_allows_data() names
 * (BLOCK), whose own rules authenticate it (a piece's SHA-256 is in the
 * manifest that the signed body names by cid).  On a channel that TLS has
 * authenticated (docs/protocol.md "TLS binding") a frame whose "from" is
 * the channel's peer may be bare: no "key", no "sig", the channel standing
 * for both.  On a TCP link whose handshake agreed a key (linkkey.h) the
 * frames after UP carry "mac" in place of "key" and "sig":
 *
 *   frame    = { "env": envelope, "mac": bstr(32), ? "data": bstr(1..) }
 *
 * mac = HMAC-SHA256 of the exact envelope bytes under the sender's
 * direction key; such a frame opens only with that link's key
 * (frame_open_keyed).  Signing and verifying a
 * frame then cost the same whatever the size of its payload.  Decoding
 * never allocates: the result points into the input.  Every way a frame
 * can be wrong has its own code, whose name is the counter key of peerd's
 * bad-frame metrics.
 */
#ifndef FRAME_H
#define FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlc.h"
#include "identity.h"
#include "linkkey.h"

struct dcbor_buf;

#define FRAME_VERSION		1
#define FRAME_MAX_DEFAULT	(8u << 20)
#define FRAME_LEN_PREFIX	4
#define FRAME_MAX_DEPTH		64

/* Kinds: X(ENUM, value, "name"). Values are wire values; never reuse. */
#define FRAME_KINDS(X)						\
	X(CHANNEL_HELLO, 1, "channel_hello")			\
	X(PING, 2, "ping")					\
	X(PING_REQ, 3, "ping_req")				\
	X(ACK, 4, "ack")					\
	X(RUMOR, 5, "rumor")					\
	X(DIGEST, 6, "digest")					\
	X(PULL_RESP, 7, "pull_resp")				\
	X(QUERY, 8, "query")					\
	X(QUERY_HIT, 9, "query_hit")				\
	X(BLOCK_WANT, 10, "block_want")				\
	X(BLOCK, 11, "block")					\
	X(GROUP_AD_WANT, 12, "group_ad_want")			\
	X(GROUP_AD, 13, "group_ad")				\
	X(HAVE, 14, "have")					\
	X(BYE, 15, "bye")					\
	X(JOIN, 16, "join")					\
	X(FORWARD_JOIN, 17, "forward_join")			\
	X(NEIGHBOR, 18, "neighbor")				\
	X(DISCONNECT, 19, "disconnect")				\
	X(SHUFFLE, 20, "shuffle")				\
	X(IHAVE, 21, "ihave")					\
	X(GRAFT, 22, "graft")					\
	X(PRUNE, 23, "prune")				\
	X(RECON_NEG, 24, "recon_neg")				\
	X(RECON_SYMS, 25, "recon_syms")				\
	X(RECON_ACK, 26, "recon_ack")				\
	X(RECON_RECS, 27, "recon_recs")				\
	X(RECON_END, 28, "recon_end")				\
	X(CLAIM_ACK, 29, "claim_ack")				\
	X(CLAIM_ACK_RELAY, 30, "claim_ack_relay")			\
	X(CLAIM_ACKS, 31, "claim_acks")

enum frame_kind {
#define FRAME_KIND_ENUM(e, v, n) FRAME_##e = v,
	FRAME_KINDS(FRAME_KIND_ENUM)
#undef FRAME_KIND_ENUM
	FRAME_KIND_MAX
};

/* Errors: X(ENUM, "name"). */
#define FRAME_ERRORS(X)						\
	X(OK, "ok")						\
	X(ESHORT, "short")		/* need more bytes */	\
	X(EZERO, "zero_length")					\
	X(ETOOBIG, "too_big")		/* length over the cap */ \
	X(ECBOR, "cbor")		/* malformed or truncated */ \
	X(EDEPTH, "depth")					\
	X(ENONCANON, "noncanonical")				\
	X(ESHAPE, "shape")		/* field missing, extra, mistyped */ \
	X(EVERSION, "version")					\
	X(EKIND, "kind")					\
	X(EKEY, "key")			/* key not 32 bytes */	\
	X(ESIGLEN, "sig_len")					\
	X(EFROM, "from_mismatch")	/* from != SHA-256(key) */ \
	X(ESIG, "bad_signature")				\
	X(ETRAILING, "trailing")				\
	X(EBARE, "bare")		/* no key/sig where required */	\
	X(EDETACHED, "detached")	/* data on a kind without it */	\
	X(ECHANNEL, "channel_mismatch")	/* from != the channel's peer */ \
	X(EMACLEN, "mac_len")		/* mac not 32 bytes */	\
	X(EUNKEYED, "unkeyed_mac")	/* mac where no key was agreed */ \
	X(EMAC, "bad_mac")		/* the MAC does not match */

enum frame_err {
#define FRAME_ERR_ENUM(e, n) FRAME_##e,
	FRAME_ERRORS(FRAME_ERR_ENUM)
#undef FRAME_ERR_ENUM
	FRAME_ERR_MAX
};

struct frame {
	uint32_t		 ver;
	uint32_t		 kind;
	const char		*group;		/* not NUL-terminated */
	size_t			 group_len;
	uint8_t			 from[IDENTITY_ID_LEN];
	uint8_t			 to[IDENTITY_ID_LEN];
	bool			 to_any;	/* "to" was empty */
	struct hlc_stamp	 stamp;
	const uint8_t		*body;		/* one encoded CBOR item */
	size_t			 body_len;
	const uint8_t		*env;		/* the signed bytes */
	size_t			 env_len;
	uint8_t			 key[IDENTITY_PUB_LEN];
	uint8_t			 sig[IDENTITY_SIG_LEN];
	bool			 bare;		/* no key and sig, no mac */
	bool			 has_mac;	/* "mac" in place of key and sig */
	uint8_t			 mac[LINKKEY_MAC_LEN];
	const uint8_t		*data;		/* detached payload, unsigned; */
	size_t			 data_len;	/* NULL and 0 when absent */
};

const char	*frame_strerror(int err);
/* "rumor" for FRAME_RUMOR; "unknown" otherwise. */
const char	*frame_kind_name(uint32_t kind);

/* True for the kinds whose frames may carry a detached payload (BLOCK). */
bool	frame_kind_allows_data(uint32_t kind);

/*
 * Append one complete wire frame (length prefix included) to out:
 * body_len bytes of one encoded CBOR item signed by ident for 'to'
 * (NULL: anyone).  0, or -1 (out->len unchanged) if the frame would exceed
 * cap, the kind is unknown, the group is over 255 bytes or the body is
 * not one canonical CBOR item that fits the nesting limit.
 */
int	frame_encode(struct dcbor_buf *out, const struct identity *ident,
	    uint32_t kind, const char *group, const uint8_t *to,
	    const struct hlc_stamp *stamp, const uint8_t *body,
	    size_t body_len, size_t cap);
/*
 * frame_encode with a detached payload of data_len >= 1 bytes (for a kind
 * that allows one; data_len 0 is frame_encode): appends all of the frame
 * but those bytes, which the caller sends right after (from a file, say),
 * and counts them in the length prefix and against cap.  The signature
 * does not cover them.  0 or -1 as frame_encode, and -1 for data on a
 * kind that does not allow it.
 */
int	frame_encode_head(struct dcbor_buf *out, const struct identity *ident,
	    uint32_t kind, const char *group, const uint8_t *to,
	    const struct hlc_stamp *stamp, const uint8_t *body,
	    size_t body_len, size_t data_len, size_t cap);
/*
 * frame_encode_head without "key" and "sig": a bare frame, for a channel
 * whose far end has authenticated ident (TLS).  Nothing is signed.
 */
int	frame_encode_bare(struct dcbor_buf *out, const struct identity *ident,
	    uint32_t kind, const char *group, const uint8_t *to,
	    const struct hlc_stamp *stamp, const uint8_t *body,
	    size_t body_len, size_t data_len, size_t cap);
/*
 * frame_encode_head with "mac" in place of "key" and "sig": HMAC-SHA256
 * of the envelope under mac, the sending direction's key of a keyed link.
 * 0 or -1 as frame_encode_head, and -1 if mac is unkeyed.
 */
int	frame_encode_mac(struct dcbor_buf *out, const struct identity *ident,
	    const struct linkkey_mac *mac, uint32_t kind, const char *group,
	    const uint8_t *to, const struct hlc_stamp *stamp,
	    const uint8_t *body, size_t body_len, size_t data_len, size_t cap);
/*
 * Read the length prefix of the next frame from the first avail bytes.
 * FRAME_OK with *len set, FRAME_ESHORT, FRAME_EZERO or FRAME_ETOOBIG.
 * Call it before allocating anything for the frame.
 */
int	frame_read_len(const uint8_t *p, size_t avail, size_t cap,
	    uint32_t *len);
/*
 * Parse frame bytes (no prefix); no signature check. FRAME_OK or error.
 * A detached payload on a kind that does not allow it is FRAME_EDETACHED.
 */
int	frame_decode(const uint8_t *buf, size_t len, struct frame *f,
	    bool allow_bare);
/*
 * Check from == SHA-256(key) and the signature. FRAME_OK or error; a mac
 * frame is FRAME_EUNKEYED (no key to check it with), a bare one FRAME_EBARE.
 */
int	frame_verify(const struct frame *f);
/* frame_decode then frame_verify. */
int	frame_open(const uint8_t *buf, size_t len, struct frame *f);
/*
 * The receiver's rule for a channel: with peer_id NULL (nothing
 * authenticated it) frame_open; otherwise "from" must be peer_id
 * (FRAME_ECHANNEL if not), and then a bare frame is accepted as it is and
 * a signed one is verified.
 */
int	frame_open_channel(const uint8_t *buf, size_t len, struct frame *f,
	    const uint8_t *peer_id);
/*
 * The receiver's rule on a keyed TCP link: a mac frame is accepted only
 * if its MAC is HMAC-SHA256(mac, env) (FRAME_EMAC if not) and its "from"
 * is peer_id (FRAME_ECHANNEL if not); a signed frame is verified as by
 * frame_open; a bare one is FRAME_EBARE.
 */
int	frame_open_keyed(const uint8_t *buf, size_t len, struct frame *f,
	    const uint8_t *peer_id, const struct linkkey_mac *mac);

#endif

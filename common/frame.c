/*
 * frame.c: the signed wire frame codec (see frame.h for the layout).
 *
 * Encoding writes the canonical maps directly, keys already in RFC 8949
 * order, and signs the envelope bytes where they lie in the output buffer:
 * no intermediate copy and no sort.  A detached payload ("data", the last
 * key) is left to the caller: the encoder writes its key and head and
 * counts its bytes, so a piece can go from a file to the socket without
 * passing through this buffer, and is never hashed for a signature.  Decoding is two passes over the input,
 * neither of which allocates: dcbor_check() proves the bytes are one
 * canonical, bounded CBOR item (so the cursor below cannot run off the
 * end), then a cursor walk checks the exact shape and points the struct
 * frame into the input; the envelope is walked where it lies (its span is
 * where the walk ends), not skipped first and walked again.  The first
 * fault found decides the error code.
 */
#include <string.h>

#include "dcbor.h"
#include "frame.h"
#include "utf8.h"
#include "hlc.h"
#include "identity.h"
#include "linkkey.h"

#define FRAME_GROUP_MAX		255
/* "key" h(32) 32 "sig" h(64) 64: what follows the envelope. */
#define FRAME_TAIL_LEN		(4 + 2 + IDENTITY_PUB_LEN + 4 + 2 + \
				    IDENTITY_SIG_LEN)
/* "mac" h(32) 32: what follows the envelope of a mac frame. */
#define FRAME_MAC_TAIL_LEN	(4 + 2 + LINKKEY_MAC_LEN)
/* "data": the key of the detached payload, after the signature. */
#define FRAME_DATA_KEY_LEN	5

static const char *const frame_errnames[] = {
#define FRAME_ERR_NAME(e, n) n,
	FRAME_ERRORS(FRAME_ERR_NAME)
#undef FRAME_ERR_NAME
};

const char *
frame_strerror(int err)
{
	if (err < 0 || err >= FRAME_ERR_MAX)
		return "unknown";
	return frame_errnames[err];
}

const char *
frame_kind_name(uint32_t kind)
{
	switch (kind) {
#define FRAME_KIND_CASE(e, v, n) case v: return n;
	FRAME_KINDS(FRAME_KIND_CASE)
#undef FRAME_KIND_CASE
	default:
		return "unknown";
	}
}

bool
frame_kind_allows_data(uint32_t kind)
{
	return kind == FRAME_BLOCK;
}

/* ---- encode ------------------------------------------------------------ */

/* Bytes of the CBOR head of a byte string of n bytes. */
static size_t
bstr_head_len(size_t n)
{
	if (n < 24)
		return 1;
	if (n <= 0xff)
		return 2;
	if (n <= 0xffff)
		return 3;
	if (n <= 0xffffffffu)
		return 5;
	return 9;
}

static void
put_key(struct dcbor_buf *b, const char *k)
{
	dcbor_put_text(b, k, strlen(k));
}

/* How a frame authenticates its envelope. */
enum frame_auth { AUTH_SIG, AUTH_BARE, AUTH_MAC };

static int	frame_build(struct dcbor_buf *, const struct identity *,
		    enum frame_auth, const struct linkkey_mac *, uint32_t, const char *, const uint8_t *,
		    const struct hlc_stamp *, const uint8_t *, size_t, size_t,
		    size_t);

int
frame_encode(struct dcbor_buf *out, const struct identity *ident,
    uint32_t kind, const char *group, const uint8_t *to,
    const struct hlc_stamp *stamp, const uint8_t *body, size_t body_len,
    size_t cap)
{
	return frame_build(out, ident, AUTH_SIG, NULL, kind, group, to, stamp, body,
	    body_len, 0, cap);
}

int
frame_encode_head(struct dcbor_buf *out, const struct identity *ident,
    uint32_t kind, const char *group, const uint8_t *to,
    const struct hlc_stamp *stamp, const uint8_t *body, size_t body_len,
    size_t data_len, size_t cap)
{
	return frame_build(out, ident, AUTH_SIG, NULL, kind, group, to, stamp, body,
	    body_len, data_len, cap);
}

int
frame_encode_bare(struct dcbor_buf *out, const struct identity *ident,
    uint32_t kind, const char *group, const uint8_t *to,
    const struct hlc_stamp *stamp, const uint8_t *body, size_t body_len,
    size_t data_len, size_t cap)
{
	return frame_build(out, ident, AUTH_BARE, NULL, kind, group, to, stamp, body,
	    body_len, data_len, cap);
}

int
frame_encode_mac(struct dcbor_buf *out, const struct identity *ident,
    const struct linkkey_mac *mac, uint32_t kind, const char *group,
    const uint8_t *to, const struct hlc_stamp *stamp, const uint8_t *body,
    size_t body_len, size_t data_len, size_t cap)
{
	if (mac == NULL || mac->ctx == NULL)
		return -1;
	return frame_build(out, ident, AUTH_MAC, mac, kind, group, to, stamp,
	    body, body_len, data_len, cap);
}

/*
 * Every encoder: signed (key and sig after the envelope), bare, or MAC'd
 * (mac after the envelope).
 */
static int
frame_build(struct dcbor_buf *out, const struct identity *ident,
    enum frame_auth auth, const struct linkkey_mac *mac, uint32_t kind, const char *group, const uint8_t *to,
    const struct hlc_stamp *stamp, const uint8_t *body, size_t body_len,
    size_t data_len, size_t cap)
{
	static const uint8_t zero_prefix[FRAME_LEN_PREFIX];
	static const size_t tail[] = { FRAME_TAIL_LEN, 0, FRAME_MAC_TAIL_LEN };
	static const uint64_t nkeys[] = { 3, 1, 2 };
	uint8_t sig[IDENTITY_SIG_LEN], tag[LINKKEY_MAC_LEN], *p;
	size_t start = out->len, env, glen, flen, dlen = 0;
	int rc = 0;

	if (ident == NULL || ident->pkey == NULL || kind == 0 ||
	    kind >= FRAME_KIND_MAX || stamp == NULL || body == NULL)
		return -1;
	if (data_len > 0) {
		/* Bounded first, so the sums below cannot wrap. */
		if (!frame_kind_allows_data(kind) || data_len >= cap ||
		    data_len > UINT32_MAX - 64)
			return -1;
		dlen = FRAME_DATA_KEY_LEN + bstr_head_len(data_len) + data_len;
	}
	glen = group != NULL ? strlen(group) : 0;
	if (glen > FRAME_GROUP_MAX)
		return -1;
	/* A body the receiver would refuse is the caller's bug: say so now. */
	if (dcbor_check(body, body_len, FRAME_MAX_DEPTH - 2, true, NULL) !=
	    DCBOR_OK)
		return -1;

	dcbor_put_raw(out, zero_prefix, sizeof(zero_prefix));
	dcbor_put_map(out, nkeys[auth] + (data_len > 0));
	put_key(out, "env");
	env = out->len;
	dcbor_put_map(out, 7);
	put_key(out, "to");
	dcbor_put_bytes(out, to, to != NULL ? IDENTITY_ID_LEN : 0);
	put_key(out, "ver");
	dcbor_put_uint(out, FRAME_VERSION);
	put_key(out, "body");
	dcbor_put_raw(out, body, body_len);
	put_key(out, "from");
	dcbor_put_bytes(out, ident->id, IDENTITY_ID_LEN);
	put_key(out, "kind");
	dcbor_put_uint(out, kind);
	put_key(out, "group");
	dcbor_put_text(out, group != NULL ? group : "", glen);
	put_key(out, "stamp");
	hlc_encode(out, stamp);

	flen = out->len - start - FRAME_LEN_PREFIX + tail[auth] + dlen;
	if (flen <= cap && flen <= UINT32_MAX) {
		if (auth == AUTH_SIG)
			rc = identity_sign(ident, out->data + env,
			    out->len - env, sig);
		else if (auth == AUTH_MAC)
			rc = linkkey_mac(mac, out->data + env, out->len - env,
			    tag);
	}
	if (flen > cap || flen > UINT32_MAX || rc == -1) {
		out->len = start;
		return -1;
	}
	if (auth == AUTH_SIG) {
		put_key(out, "key");
		dcbor_put_bytes(out, ident->pub, IDENTITY_PUB_LEN);
		put_key(out, "sig");
		dcbor_put_bytes(out, sig, IDENTITY_SIG_LEN);
	} else if (auth == AUTH_MAC) {
		put_key(out, "mac");
		dcbor_put_bytes(out, tag, LINKKEY_MAC_LEN);
	}
	if (data_len > 0) {
		put_key(out, "data");
		dcbor_put_bytes_head(out, data_len);
	}

	p = out->data + start;
	p[0] = (uint8_t)(flen >> 24);
	p[1] = (uint8_t)(flen >> 16);
	p[2] = (uint8_t)(flen >> 8);
	p[3] = (uint8_t)flen;
	return 0;
}

int
frame_read_len(const uint8_t *p, size_t avail, size_t cap, uint32_t *len)
{
	uint32_t v;

	if (avail < FRAME_LEN_PREFIX)
		return FRAME_ESHORT;
	v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
	if (v == 0)
		return FRAME_EZERO;
	if (v > cap)
		return FRAME_ETOOBIG;
	*len = v;
	return FRAME_OK;
}

/* ---- decode ------------------------------------------------------------ */

static int
frame_cbor_err(int err)
{
	switch (err) {
	case DCBOR_EDEPTH:
		return FRAME_EDEPTH;
	case DCBOR_ENONCANON:
	case DCBOR_EDUPKEY:
		return FRAME_ENONCANON;
	case DCBOR_ETRAILING:
		return FRAME_ETRAILING;
	default:
		return FRAME_ECBOR;
	}
}

/* Index of the text key at the cursor in names[], or -1. */
static int
read_key(struct dcbor_rd *rd, const char *const *names, int n)
{
	const char *k;
	size_t klen;

	if (dcbor_get_text(rd, &k, &klen) == -1)
		return -1;
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) == klen && memcmp(names[i], k, klen) == 0)
			return i;
	return -1;
}

enum { ENV_TO, ENV_VER, ENV_BODY, ENV_FROM, ENV_KIND, ENV_GROUP, ENV_STAMP,
    ENV_NKEYS };
static const char *const env_keys[ENV_NKEYS] = {
	"to", "ver", "body", "from", "kind", "group", "stamp",
};

/*
 * The envelope at the cursor, walked where it lies (the input has passed
 * dcbor_check, so the walk cannot run off it): its fields into f, and its
 * span, which the signature or MAC covers, into f->env and f->env_len.
 */
static int
frame_decode_env(struct dcbor_rd *rdp, struct frame *f)
{
	struct dcbor_rd rd = *rdp;
	const uint8_t *p;
	const char *s;
	uint64_t n, v;
	size_t len;
	unsigned int seen = 0;

	f->env = rd.p;
	if (dcbor_get_map(&rd, &n) == -1 || n != ENV_NKEYS)
		return FRAME_ESHAPE;
	for (uint64_t i = 0; i < n; i++) {
		int k = read_key(&rd, env_keys, ENV_NKEYS);

		if (k == -1 || (seen & (1u << k)) != 0)
			return FRAME_ESHAPE;
		seen |= 1u << k;
		switch (k) {
		case ENV_TO:
			if (dcbor_get_bytes(&rd, &p, &len) == -1)
				return FRAME_ESHAPE;
			if (len == IDENTITY_ID_LEN)
				memcpy(f->to, p, IDENTITY_ID_LEN);
			else if (len == 0)
				f->to_any = true;
			else
				return FRAME_ESHAPE;
			break;
		case ENV_VER:
			if (dcbor_get_uint(&rd, &v) == -1)
				return FRAME_ESHAPE;
			if (v != FRAME_VERSION)
				return FRAME_EVERSION;
			f->ver = (uint32_t)v;
			break;
		case ENV_BODY:
			if (dcbor_get_raw(&rd, &f->body, &f->body_len) == -1)
				return FRAME_ESHAPE;
			break;
		case ENV_FROM:
			if (dcbor_get_bytes(&rd, &p, &len) == -1 ||
			    len != IDENTITY_ID_LEN)
				return FRAME_ESHAPE;
			memcpy(f->from, p, IDENTITY_ID_LEN);
			break;
		case ENV_KIND:
			if (dcbor_get_uint(&rd, &v) == -1)
				return FRAME_ESHAPE;
			if (v == 0 || v >= FRAME_KIND_MAX)
				return FRAME_EKIND;
			f->kind = (uint32_t)v;
			break;
		case ENV_GROUP:
			if (dcbor_get_text(&rd, &s, &len) == -1 ||
			    len > FRAME_GROUP_MAX ||
			    !utf8_valid(s, len))
				return FRAME_ESHAPE;
			f->group = s;
			f->group_len = len;
			break;
		case ENV_STAMP:
			if (hlc_parse(&rd, &f->stamp) == -1)
				return FRAME_ESHAPE;
			break;
		}
	}
	f->env_len = (size_t)(rd.p - f->env);
	*rdp = rd;
	return FRAME_OK;
}

enum { FR_ENV, FR_KEY, FR_MAC, FR_SIG, FR_DATA, FR_NKEYS };
static const char *const frame_keys[FR_NKEYS] = { "env", "key", "mac",
    "sig", "data" };

int
frame_decode(const uint8_t *buf, size_t len, struct frame *f, bool allow_bare)
{
	struct dcbor_rd rd;
	const uint8_t *p;
	uint64_t n;
	size_t plen;
	unsigned int seen = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = dcbor_check(buf, len, FRAME_MAX_DEPTH, true, NULL)) !=
	    DCBOR_OK)
		return frame_cbor_err(rc);
	dcbor_rd_init(&rd, buf, len);
	if (dcbor_get_map(&rd, &n) == -1 || n < 1 || n > FR_NKEYS - 1)
		return FRAME_ESHAPE;
	for (uint64_t i = 0; i < n; i++) {
		int k = read_key(&rd, frame_keys, FR_NKEYS);

		if (k == -1 || (seen & (1u << k)) != 0)
			return FRAME_ESHAPE;
		seen |= 1u << k;
		switch (k) {
		case FR_ENV:
			if ((rc = frame_decode_env(&rd, f)) != FRAME_OK)
				return rc;
			break;
		case FR_KEY:
			if (dcbor_get_bytes(&rd, &p, &plen) == -1)
				return FRAME_ESHAPE;
			if (plen != IDENTITY_PUB_LEN)
				return FRAME_EKEY;
			memcpy(f->key, p, IDENTITY_PUB_LEN);
			break;
		case FR_SIG:
			if (dcbor_get_bytes(&rd, &p, &plen) == -1)
				return FRAME_ESHAPE;
			if (plen != IDENTITY_SIG_LEN)
				return FRAME_ESIGLEN;
			memcpy(f->sig, p, IDENTITY_SIG_LEN);
			break;
		case FR_MAC:
			if (dcbor_get_bytes(&rd, &p, &plen) == -1)
				return FRAME_ESHAPE;
			if (plen != LINKKEY_MAC_LEN)
				return FRAME_EMACLEN;
			memcpy(f->mac, p, LINKKEY_MAC_LEN);
			f->has_mac = true;
			break;
		case FR_DATA:
			/* Absent and empty would be two spellings of "none". */
			if (dcbor_get_bytes(&rd, &f->data, &f->data_len) == -1 ||
			    f->data_len == 0)
				return FRAME_ESHAPE;
			break;
		}
	}
	/*
	 * The envelope, the key and the signature both or neither, and a
	 * MAC only in place of both.
	 */
	if ((seen & (1u << FR_ENV)) == 0 ||
	    ((seen >> FR_KEY) & 1) != ((seen >> FR_SIG) & 1) ||
	    (f->has_mac && (seen & (1u << FR_KEY)) != 0))
		return FRAME_ESHAPE;
	if (f->data != NULL && !frame_kind_allows_data(f->kind))
		return FRAME_EDETACHED;
	if ((seen & (1u << FR_KEY)) == 0 && !f->has_mac) {
		f->bare = true;
		if (!allow_bare)
			return FRAME_EBARE;
	}
	return FRAME_OK;
}

int
frame_verify(const struct frame *f)
{
	uint8_t id[IDENTITY_ID_LEN];

	if (f->bare)
		return FRAME_EBARE;
	if (f->has_mac)
		return FRAME_EUNKEYED;
	identity_id_of(f->key, id);
	if (memcmp(id, f->from, IDENTITY_ID_LEN) != 0)
		return FRAME_EFROM;
	if (identity_verify(f->key, f->env, f->env_len, f->sig) == -1)
		return FRAME_ESIG;
	return FRAME_OK;
}

int
frame_open(const uint8_t *buf, size_t len, struct frame *f)
{
	int rc;

	if ((rc = frame_decode(buf, len, f, false)) != FRAME_OK)
		return rc;
	return frame_verify(f);
}

int
frame_open_channel(const uint8_t *buf, size_t len, struct frame *f,
    const uint8_t *peer_id)
{
	int rc;

	if (peer_id == NULL)
		return frame_open(buf, len, f);
	if ((rc = frame_decode(buf, len, f, true)) != FRAME_OK)
		return rc;
	if (memcmp(f->from, peer_id, IDENTITY_ID_LEN) != 0)
		return FRAME_ECHANNEL;
	return f->bare ? FRAME_OK : frame_verify(f);
}

int
frame_open_keyed(const uint8_t *buf, size_t len, struct frame *f,
    const uint8_t *peer_id, const struct linkkey_mac *mac)
{
	int rc;

	if ((rc = frame_decode(buf, len, f, false)) != FRAME_OK)
		return rc;
	if (!f->has_mac)
		return frame_verify(f);
	if (mac == NULL || mac->ctx == NULL)
		return FRAME_EUNKEYED;
	if (linkkey_mac_check(mac, f->env, f->env_len, f->mac) == -1)
		return FRAME_EMAC;
	if (memcmp(f->from, peer_id, IDENTITY_ID_LEN) != 0)
		return FRAME_ECHANNEL;
	return FRAME_OK;
}

/*
 * entry.h: one tuple-space entry (docs/protocol.md section 6).
 *
 * An entry is immutable once built: its signed part (the "body") is kept
 * as the exact canonical CBOR bytes that were hashed and signed, and the
 * accessors point into them, so relaying an entry never re-encodes it and
 * field lookups never allocate.
 *
 *   entry = { "id": bstr(16), "sig": bstr(64), "body": body }
 *   body  = { "mono": uint, "tags": [+ tstr] (absent when none),
 *             "type": tstr, "lease": uint, "space": tstr, "stamp":
 *             [phys, logical, node], "fields": { * tstr => any },
 *             "issuer": bstr(32) }          (keys in canonical order)
 *
 * id = the first 16 bytes of SHA-256(body).  The issuer signs the body
 * (Ed25519, by the daemon; this module only holds the 64 bytes).  lease is
 * the time to live in ms from stamp.phys; mono is the writer's
 * CLOCK_MONOTONIC in us, metadata for latency measured on one host.
 * Everything is canonical (RFC 8949 4.2.1); decoding refuses anything
 * else, so one entry has exactly one encoding and one id.
 */
#ifndef ENTRY_H
#define ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlc.h"
#include "identity.h"
#include "val.h"

struct dcbor_buf;
struct dcbor_rd;

#define ENTRY_ID_LEN		16
#define ENTRY_PAYLOAD_MAX	(64u * 1024u)	/* encoded fields map */
#define ENTRY_SPACE_MAX		64
#define ENTRY_TYPE_MAX		64
#define ENTRY_TAGS_MAX		16
#define ENTRY_TAG_MAX		64
#define ENTRY_BODY_MAX		(ENTRY_PAYLOAD_MAX + 4096)
#define ENTRY_ENCODED_MAX	(ENTRY_BODY_MAX + 128)

/* X(ENUM, "name"): every way an entry can be refused. */
#define ENTRY_ERRORS(X)						\
	X(ENTRY_OK, "ok")					\
	X(ENTRY_ECBOR, "cbor")		/* not canonical CBOR */	\
	X(ENTRY_ESHAPE, "shape")	/* missing/unknown/mistyped key */ \
	X(ENTRY_ESPACE, "space")	/* space name empty or too long */ \
	X(ENTRY_ETYPE, "type")		/* type not "name#vN" */	\
	X(ENTRY_EFIELDS, "fields")	/* not a map of text keys */	\
	X(ENTRY_ETOOBIG, "too_big")	/* payload over 64 KiB */	\
	X(ENTRY_ETAGS, "tags")		/* too many, empty or long tags */ \
	X(ENTRY_EID, "id")		/* id is not SHA-256(body)[0..16] */

#define ENTRY_ENUM(e, s) e,
enum entry_err { ENTRY_ERRORS(ENTRY_ENUM) ENTRY_NERR };
#undef ENTRY_ENUM

struct entry {
	uint8_t			 id[ENTRY_ID_LEN];
	char			 space[ENTRY_SPACE_MAX + 1];
	char			 type[ENTRY_TYPE_MAX + 1];
	uint8_t			 issuer[IDENTITY_PUB_LEN];
	struct hlc_stamp	 stamp;
	uint64_t		 lease_ms;
	uint64_t		 mono_us;
	const uint8_t		*fields;	/* canonical map, in body */
	size_t			 fields_len;
	uint64_t		 nfields;
	const uint8_t		*tags;		/* array item, in body; or NULL */
	size_t			 tags_len;
	uint64_t		 ntags;
	uint8_t			 sig[IDENTITY_SIG_LEN];	/* zero until set */
	uint8_t			*body;		/* owned: the signed bytes */
	size_t			 body_len;
};

/* What the writer supplies; fields is one canonical CBOR map. */
struct entry_spec {
	const char		*space;
	const char		*type;
	const uint8_t		*fields;
	size_t			 fields_len;
	const uint8_t		*issuer;	/* IDENTITY_PUB_LEN bytes */
	struct hlc_stamp	 stamp;
	uint64_t		 lease_ms;
	uint64_t		 mono_us;
	const char *const	*tags;
	size_t			 ntags;
};

/* A static name for an error, e.g. "too_big" (a metrics key). */
const char	*entry_strerror(int err);
/* True when s is a valid type name "name#vN" (name: [A-Za-z0-9_.-]+). */
bool		 entry_type_valid(const char *s, size_t n);
/* Build an unsigned entry from spec into *out. ENTRY_OK or an error. */
int		 entry_new(const struct entry_spec *spec, struct entry **out);
void		 entry_free(struct entry *e);
/* A deep copy. */
struct entry	*entry_dup(const struct entry *e);
/* The bytes the issuer signs: the canonical body (points into e). */
void		 entry_signing_bytes(const struct entry *e, const uint8_t **p,
		    size_t *len);
void		 entry_set_sig(struct entry *e,
		    const uint8_t sig[IDENTITY_SIG_LEN]);
/* Append the whole entry (id, signature, body). */
void		 entry_encode(struct dcbor_buf *b, const struct entry *e);
/*
 * Read one entry from rd (which advances past it) into a new *out: the
 * shape, every bound and the id are checked; the signature is not (the
 * daemon verifies it once per id).  ENTRY_OK or an error; never crashes
 * on any input.
 */
int		 entry_decode(struct dcbor_rd *rd, struct entry **out);
/* Look up field name: 1 with *v set (pointing into e), 0 if absent. */
int		 entry_field(const struct entry *e, const char *name,
		    size_t namelen, struct val *v);
/* The i-th tag (pointing into e); 0, or -1 when out of range. */
int		 entry_tag(const struct entry *e, size_t i, const char **s,
		    size_t *n);
/* When the entry's own lease ends: stamp.phys + lease_ms (saturating). */
uint64_t	 entry_expires_ms(const struct entry *e);
/* FIFO order: issue stamp, then id.  <0, 0, >0. */
int		 entry_cmp_fifo(const struct entry *a, const struct entry *b);

#endif

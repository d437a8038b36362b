/*
 * entry.c: building, encoding and bounded decoding of entries (entry.h).
 * The body bytes are the single source of truth: entry_new encodes them
 * once, entry_decode copies them from the wire, and both then fill the
 * struct by parsing those bytes with the same parse_body().
 */
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "entry.h"
#include "sha256.h"
#include "xmalloc.h"

#define ENTRY_NAME(e, s) s,
static const char *const entry_errnames[] = { ENTRY_ERRORS(ENTRY_NAME) };
#undef ENTRY_NAME

const char *
entry_strerror(int err)
{
	if (err < 0 || err >= ENTRY_NERR)
		return "unknown";
	return entry_errnames[err];
}

bool
entry_type_valid(const char *s, size_t n)
{
	const char *hash = memchr(s, '#', n);
	size_t i, nlen;

	if (n == 0 || n > ENTRY_TYPE_MAX || hash == NULL)
		return false;
	nlen = (size_t)(hash - s);
	if (nlen == 0)
		return false;
	for (i = 0; i < nlen; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	/* "#v" then at least one digit, nothing else. */
	if (n - nlen < 3 || hash[1] != 'v')
		return false;
	for (i = nlen + 2; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static void
sha256_16(const uint8_t *p, size_t n, uint8_t out[ENTRY_ID_LEN])
{
	uint8_t md[SHA256_LEN];

	sha256_digest(p, n, md);
	memcpy(out, md, ENTRY_ID_LEN);
}

/*
 * Check that [p, p+n) is one map of text keys whose values hold no tags
 * and no undefined (they are not field values).  Assumes well-formed CBOR.
 */
static int
check_fields(const uint8_t *p, size_t n, uint64_t *npairs)
{
	struct dcbor_rd rd;
	struct dcbor_item it;
	uint64_t need;

	if (n > ENTRY_PAYLOAD_MAX)
		return ENTRY_ETOOBIG;
	dcbor_rd_init(&rd, p, n);
	if (dcbor_get_map(&rd, npairs) == -1)
		return ENTRY_EFIELDS;
	for (uint64_t i = 0; i < *npairs; i++) {
		const char *k;
		size_t klen;

		if (dcbor_get_text(&rd, &k, &klen) == -1 || klen == 0)
			return ENTRY_EFIELDS;
		for (need = 1; need > 0; need--) {
			if (dcbor_next(&rd, &it) == -1 ||
			    it.type == DCBOR_TAG || it.type == DCBOR_UNDEF)
				return ENTRY_EFIELDS;
			if (it.type == DCBOR_ARRAY)
				need += it.u;
			else if (it.type == DCBOR_MAP)
				need += 2 * it.u;
		}
	}
	return dcbor_left(&rd) == 0 ? ENTRY_OK : ENTRY_EFIELDS;
}

static int
check_tags(struct dcbor_rd *rd, uint64_t *ntags)
{
	const char *s;
	size_t n;

	if (dcbor_get_array(rd, ntags) == -1)
		return ENTRY_ESHAPE;
	if (*ntags == 0 || *ntags > ENTRY_TAGS_MAX)
		return ENTRY_ETAGS;
	for (uint64_t i = 0; i < *ntags; i++) {
		if (dcbor_get_text(rd, &s, &n) == -1)
			return ENTRY_ESHAPE;
		if (n == 0 || n > ENTRY_TAG_MAX || memchr(s, '\0', n) != NULL)
			return ENTRY_ETAGS;
	}
	return ENTRY_OK;
}

enum {
	K_MONO = 1 << 0, K_TAGS = 1 << 1, K_TYPE = 1 << 2, K_LEASE = 1 << 3,
	K_SPACE = 1 << 4, K_STAMP = 1 << 5, K_FIELDS = 1 << 6,
	K_ISSUER = 1 << 7,
	K_REQUIRED = K_MONO | K_TYPE | K_LEASE | K_SPACE | K_STAMP |
	    K_FIELDS | K_ISSUER,
};

/* Fill e's parsed members from e->body (already canonical CBOR). */
static int
parse_body(struct entry *e)
{
	struct dcbor_rd rd;
	uint64_t npairs;
	unsigned seen = 0;
	int rc;

	dcbor_rd_init(&rd, e->body, e->body_len);
	if (dcbor_get_map(&rd, &npairs) == -1)
		return ENTRY_ESHAPE;
	for (uint64_t i = 0; i < npairs; i++) {
		const char *k, *s;
		const uint8_t *p;
		size_t klen, n;
		unsigned bit;

		if (dcbor_get_text(&rd, &k, &klen) == -1)
			return ENTRY_ESHAPE;
		if (dcbor_text_is(k, klen, "mono")) {
			bit = K_MONO;
			if (dcbor_get_uint(&rd, &e->mono_us) == -1)
				return ENTRY_ESHAPE;
		} else if (dcbor_text_is(k, klen, "tags")) {
			bit = K_TAGS;
			p = rd.p;
			if ((rc = check_tags(&rd, &e->ntags)) != ENTRY_OK)
				return rc;
			e->tags = p;
			e->tags_len = (size_t)(rd.p - p);
		} else if (dcbor_text_is(k, klen, "type")) {
			bit = K_TYPE;
			if (dcbor_get_text(&rd, &s, &n) == -1)
				return ENTRY_ESHAPE;
			if (!entry_type_valid(s, n))
				return ENTRY_ETYPE;
			memcpy(e->type, s, n);
			e->type[n] = '\0';
		} else if (dcbor_text_is(k, klen, "lease")) {
			bit = K_LEASE;
			if (dcbor_get_uint(&rd, &e->lease_ms) == -1)
				return ENTRY_ESHAPE;
		} else if (dcbor_text_is(k, klen, "space")) {
			bit = K_SPACE;
			if (dcbor_get_text(&rd, &s, &n) == -1)
				return ENTRY_ESHAPE;
			if (n == 0 || n > ENTRY_SPACE_MAX ||
			    memchr(s, '\0', n) != NULL)
				return ENTRY_ESPACE;
			memcpy(e->space, s, n);
			e->space[n] = '\0';
		} else if (dcbor_text_is(k, klen, "stamp")) {
			bit = K_STAMP;
			if (hlc_parse(&rd, &e->stamp) == -1)
				return ENTRY_ESHAPE;
		} else if (dcbor_text_is(k, klen, "fields")) {
			bit = K_FIELDS;
			if (dcbor_get_raw(&rd, &p, &n) == -1)
				return ENTRY_ESHAPE;
			if ((rc = check_fields(p, n, &e->nfields)) != ENTRY_OK)
				return rc;
			e->fields = p;
			e->fields_len = n;
		} else if (dcbor_text_is(k, klen, "issuer")) {
			bit = K_ISSUER;
			if (dcbor_get_fixed(&rd, e->issuer,
			    sizeof(e->issuer)) == -1)
				return ENTRY_ESHAPE;
		} else
			return ENTRY_ESHAPE;
		if (seen & bit)
			return ENTRY_ESHAPE;
		seen |= bit;
	}
	if ((seen & K_REQUIRED) != K_REQUIRED || dcbor_left(&rd) != 0)
		return ENTRY_ESHAPE;
	return ENTRY_OK;
}

/* Take ownership of body, parse it and set the id. */
static int
entry_from_body(uint8_t *body, size_t len, struct entry **out)
{
	struct entry *e = xcalloc(1, sizeof(*e));
	int rc;

	e->body = body;
	e->body_len = len;
	if ((rc = parse_body(e)) != ENTRY_OK) {
		entry_free(e);
		return rc;
	}
	sha256_16(e->body, e->body_len, e->id);
	*out = e;
	return ENTRY_OK;
}

int
entry_new(const struct entry_spec *spec, struct entry **out)
{
	struct dcbor_buf b;
	uint8_t *body;
	size_t len, slen;

	*out = NULL;
	slen = spec->space != NULL ? strlen(spec->space) : 0;
	if (slen == 0 || slen > ENTRY_SPACE_MAX)
		return ENTRY_ESPACE;
	if (spec->type == NULL || !entry_type_valid(spec->type,
	    strlen(spec->type)))
		return ENTRY_ETYPE;
	if (spec->fields_len > ENTRY_PAYLOAD_MAX)
		return ENTRY_ETOOBIG;
	if (spec->fields == NULL || dcbor_check(spec->fields,
	    spec->fields_len, DCBOR_MAX_DEPTH - 2, true, NULL) != DCBOR_OK)
		return ENTRY_EFIELDS;
	if (spec->ntags > ENTRY_TAGS_MAX)
		return ENTRY_ETAGS;
	dcbor_buf_init(&b);
	dcbor_put_map(&b, spec->ntags > 0 ? 8 : 7);
	dcbor_put_cstr(&b, "mono");
	dcbor_put_uint(&b, spec->mono_us);
	if (spec->ntags > 0) {
		dcbor_put_cstr(&b, "tags");
		dcbor_put_array(&b, spec->ntags);
		for (size_t i = 0; i < spec->ntags; i++)
			dcbor_put_cstr(&b, spec->tags[i]);
	}
	dcbor_put_cstr(&b, "type");
	dcbor_put_cstr(&b, spec->type);
	dcbor_put_cstr(&b, "lease");
	dcbor_put_uint(&b, spec->lease_ms);
	dcbor_put_cstr(&b, "space");
	dcbor_put_cstr(&b, spec->space);
	dcbor_put_cstr(&b, "stamp");
	hlc_encode(&b, &spec->stamp);
	dcbor_put_cstr(&b, "fields");
	dcbor_put_raw(&b, spec->fields, spec->fields_len);
	dcbor_put_cstr(&b, "issuer");
	dcbor_put_bytes(&b, spec->issuer, IDENTITY_PUB_LEN);
	(void)dcbor_sort_map(&b, 0);	/* keys above are already in order */
	body = dcbor_buf_steal(&b, &len);
	return entry_from_body(body, len, out);
}

void
entry_free(struct entry *e)
{
	if (e == NULL)
		return;
	free(e->body);
	free(e);
}

struct entry *
entry_dup(const struct entry *e)
{
	struct entry *d = xmalloc(sizeof(*d));

	*d = *e;
	d->body = xmemdup(e->body, e->body_len);
	d->fields = d->body + (e->fields - e->body);
	if (e->tags != NULL)
		d->tags = d->body + (e->tags - e->body);
	return d;
}

void
entry_signing_bytes(const struct entry *e, const uint8_t **p, size_t *len)
{
	*p = e->body;
	*len = e->body_len;
}

void
entry_set_sig(struct entry *e, const uint8_t sig[IDENTITY_SIG_LEN])
{
	memcpy(e->sig, sig, IDENTITY_SIG_LEN);
}

void
entry_encode(struct dcbor_buf *b, const struct entry *e)
{
	/* Canonical order: "id" < "sig" < "body" (shorter keys first). */
	dcbor_put_map(b, 3);
	dcbor_put_cstr(b, "id");
	dcbor_put_bytes(b, e->id, ENTRY_ID_LEN);
	dcbor_put_cstr(b, "sig");
	dcbor_put_bytes(b, e->sig, IDENTITY_SIG_LEN);
	dcbor_put_cstr(b, "body");
	dcbor_put_raw(b, e->body, e->body_len);
}

int
entry_decode(struct dcbor_rd *rd, struct entry **out)
{
	struct dcbor_rd in;
	uint8_t id[ENTRY_ID_LEN], sig[IDENTITY_SIG_LEN];
	const uint8_t *body = NULL;
	const char *k;
	size_t used, klen, blen = 0;
	uint64_t npairs;
	unsigned seen = 0;
	struct entry *e;
	int rc;

	*out = NULL;
	if (rd->err != DCBOR_OK)
		return ENTRY_ECBOR;
	if (dcbor_check(rd->p, dcbor_left(rd), DCBOR_MAX_DEPTH, true,
	    &used) != DCBOR_OK)
		return ENTRY_ECBOR;
	if (used > ENTRY_ENCODED_MAX)
		return ENTRY_ETOOBIG;
	dcbor_rd_init(&in, rd->p, used);
	rd->p += used;
	if (dcbor_get_map(&in, &npairs) == -1 || npairs != 3)
		return ENTRY_ESHAPE;
	for (int i = 0; i < 3; i++) {
		if (dcbor_get_text(&in, &k, &klen) == -1)
			return ENTRY_ESHAPE;
		if (dcbor_text_is(k, klen, "id")) {
			if (dcbor_get_fixed(&in, id, sizeof(id)) == -1)
				return ENTRY_ESHAPE;
			seen |= 1;
		} else if (dcbor_text_is(k, klen, "sig")) {
			if (dcbor_get_fixed(&in, sig, sizeof(sig)) == -1)
				return ENTRY_ESHAPE;
			seen |= 2;
		} else if (dcbor_text_is(k, klen, "body")) {
			if (dcbor_get_raw(&in, &body, &blen) == -1)
				return ENTRY_ESHAPE;
			seen |= 4;
		} else
			return ENTRY_ESHAPE;
	}
	if (seen != 7)
		return ENTRY_ESHAPE;
	if (blen > ENTRY_BODY_MAX)
		return ENTRY_ETOOBIG;
	if ((rc = entry_from_body(xmemdup(body, blen), blen, &e)) != ENTRY_OK)
		return rc;
	if (memcmp(e->id, id, ENTRY_ID_LEN) != 0) {
		entry_free(e);
		return ENTRY_EID;
	}
	memcpy(e->sig, sig, sizeof(sig));
	*out = e;
	return ENTRY_OK;
}

int
entry_field(const struct entry *e, const char *name, size_t namelen,
    struct val *v)
{
	struct dcbor_rd rd;
	uint64_t n;

	dcbor_rd_init(&rd, e->fields, e->fields_len);
	if (dcbor_get_map(&rd, &n) == -1)
		return 0;
	for (uint64_t i = 0; i < n; i++) {
		const char *k;
		size_t klen;

		if (dcbor_get_text(&rd, &k, &klen) == -1)
			return 0;
		if (klen == namelen && memcmp(k, name, klen) == 0)
			return val_read(&rd, v) == 0;
		if (dcbor_skip(&rd) == -1)
			return 0;
	}
	return 0;
}

int
entry_tag(const struct entry *e, size_t i, const char **s, size_t *n)
{
	struct dcbor_rd rd;
	uint64_t cnt;

	if (e->tags == NULL || i >= e->ntags)
		return -1;
	dcbor_rd_init(&rd, e->tags, e->tags_len);
	if (dcbor_get_array(&rd, &cnt) == -1)
		return -1;
	for (size_t k = 0; k < i; k++)
		if (dcbor_skip(&rd) == -1)
			return -1;
	return dcbor_get_text(&rd, s, n);
}

uint64_t
entry_expires_ms(const struct entry *e)
{
	if (e->lease_ms > UINT64_MAX - e->stamp.phys)
		return UINT64_MAX;
	return e->stamp.phys + e->lease_ms;
}

int
entry_cmp_fifo(const struct entry *a, const struct entry *b)
{
	int c = hlc_cmp(&a->stamp, &b->stamp);

	if (c != 0)
		return c;
	return memcmp(a->id, b->id, ENTRY_ID_LEN);
}

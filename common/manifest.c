/*
 * manifest.c: encode, decode and check content manifests (see manifest.h).
 */
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "manifest.h"
#include "sha256.h"
#include "xmalloc.h"

_Static_assert(MANIFEST_HASH_LEN == SHA256_LEN, "a cid is a SHA-256");

void
manifest_sha256(const void *p, size_t n, uint8_t out[MANIFEST_HASH_LEN])
{
	sha256_digest(p, n, out);	/* the entry ids' SHA-256, one fetch */
}

static int
manifest_counts(uint64_t size, uint32_t piece_size, uint32_t *npieces)
{
	uint64_t n;

	if (size == 0 || piece_size < MANIFEST_PIECE_MIN ||
	    piece_size > MANIFEST_PIECE_MAX)
		return -1;
	n = size / piece_size + (size % piece_size != 0);
	if (n > MANIFEST_PIECES_MAX)
		return -1;
	*npieces = (uint32_t)n;
	return 0;
}

int
manifest_init(struct manifest *m, uint64_t size, uint32_t piece_size)
{
	uint32_t n;

	memset(m, 0, sizeof(*m));
	if (manifest_counts(size, piece_size, &n) == -1)
		return -1;
	m->size = size;
	m->piece_size = piece_size;
	m->npieces = n;
	m->hashes = xcalloc(n, MANIFEST_HASH_LEN);
	return 0;
}

void
manifest_free(struct manifest *m)
{
	free(m->hashes);
	memset(m, 0, sizeof(*m));
}

uint32_t
manifest_piece_len(const struct manifest *m, uint32_t i)
{
	uint64_t off = (uint64_t)i * m->piece_size;

	if (i >= m->npieces)
		return 0;
	return m->size - off < m->piece_size ? (uint32_t)(m->size - off) :
	    m->piece_size;
}

uint64_t
manifest_piece_off(const struct manifest *m, uint32_t i)
{
	return (uint64_t)i * m->piece_size;
}

uint8_t *
manifest_hash(const struct manifest *m, uint32_t i)
{
	return m->hashes + (size_t)i * MANIFEST_HASH_LEN;
}

bool
manifest_piece_ok(const struct manifest *m, uint32_t i, const uint8_t *p,
    size_t len)
{
	uint8_t h[MANIFEST_HASH_LEN];

	if (i >= m->npieces || len != manifest_piece_len(m, i))
		return false;
	manifest_sha256(p, len, h);
	return memcmp(h, manifest_hash(m, i), MANIFEST_HASH_LEN) == 0;
}

void
manifest_encode(const struct manifest *m, struct dcbor_buf *b)
{
	/* Canonical order: shorter keys first, then bytewise. */
	dcbor_put_map(b, 4);
	dcbor_put_cstr(b, "v");
	dcbor_put_uint(b, MANIFEST_VERSION);
	dcbor_put_cstr(b, "size");
	dcbor_put_uint(b, m->size);
	dcbor_put_cstr(b, "piece");
	dcbor_put_uint(b, m->piece_size);
	dcbor_put_cstr(b, "hashes");
	dcbor_put_bytes(b, m->hashes, (size_t)m->npieces * MANIFEST_HASH_LEN);
}

int
manifest_decode(const uint8_t *p, size_t len, struct manifest *m)
{
	struct dcbor_rd rd;
	uint64_t n, v = 0, size = 0, piece = 0;
	const uint8_t *hashes = NULL;
	size_t hlen = 0;
	uint32_t npieces;

	memset(m, 0, sizeof(*m));
	if (dcbor_check(p, len, 4, true, NULL) != DCBOR_OK)
		return -1;
	dcbor_rd_init(&rd, p, len);
	/* Canonical form fixes the order, so read the keys in it. */
	if (dcbor_get_map(&rd, &n) == -1 || n != 4 ||
	    dcbor_get_key(&rd, "v") == -1 ||
	    dcbor_get_uint(&rd, &v) == -1 ||
	    dcbor_get_key(&rd, "size") == -1 ||
	    dcbor_get_uint(&rd, &size) == -1 ||
	    dcbor_get_key(&rd, "piece") == -1 ||
	    dcbor_get_uint(&rd, &piece) == -1 ||
	    dcbor_get_key(&rd, "hashes") == -1 ||
	    dcbor_get_bytes(&rd, &hashes, &hlen) == -1 ||
	    dcbor_left(&rd) != 0)
		return -1;
	if (v != MANIFEST_VERSION || piece > MANIFEST_PIECE_MAX ||
	    manifest_counts(size, (uint32_t)piece, &npieces) == -1 ||
	    hlen != (size_t)npieces * MANIFEST_HASH_LEN)
		return -1;
	m->size = size;
	m->piece_size = (uint32_t)piece;
	m->npieces = npieces;
	m->hashes = xmemdup(hashes, hlen);
	return 0;
}

void
manifest_cid(const uint8_t *enc, size_t len, uint8_t cid[MANIFEST_HASH_LEN])
{
	manifest_sha256(enc, len, cid);
}

/*
 * fuzz_bao_slice.c: libFuzzer target for bao_verify_* (common/bao.c), the
 * streaming check of a Bao slice against a root: the parser of what a
 * peer sends when asked for a byte range of a blob.
 *
 * The input picks a content (length, group size, seed), a range and a feed
 * size, then a way to break the honest slice: flip bytes at chosen
 * places, cut it, extend it, or replace it by the input's own bytes. It
 * must never crash, never hand on a byte that is not the content's at
 * that offset, accept the honest slice with exactly the asked bytes, and
 * refuse any slice changed past its 8-byte header, cut or extended (a
 * changed length alone may pass when the slice leaves out the last group:
 * Bao proves the length only there; the bytes handed on stay right).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bao.h"
#include "blake3.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

struct seen {
	const uint8_t	*content;
	uint64_t	 content_len;
	uint64_t	 next;		/* where the next handed-on byte goes */
	uint64_t	 n;
};

static void
check_emit(void *arg, uint64_t off, const uint8_t *p, size_t n)
{
	struct seen *s = arg;

	REQUIRE(off <= s->content_len && n <= s->content_len - off);
	REQUIRE(memcmp(p, s->content + off, n) == 0);
	REQUIRE(s->n == 0 || off == s->next);
	s->next = off + n;
	s->n += n;
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Feed in pieces; 0 when accepted. */
static int
run(const uint8_t root[32], unsigned g, uint64_t off, uint64_t len,
    const uint8_t *slice, size_t slen, size_t piece, struct seen *s)
{
	struct bao_verify *v = bao_verify_new(root, g, off, len, check_emit, s);
	int rc = 0;

	REQUIRE(v != NULL);
	for (size_t i = 0; i < slen && rc == 0; i += piece)
		rc = bao_verify_feed(v, slice + i,
		    piece < slen - i ? piece : slen - i);
	if (rc == 0)
		rc = bao_verify_finish(v);
	REQUIRE((rc != 0) == (bao_verify_error(v, NULL, NULL) != NULL));
	bao_verify_free(v);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t root[32], *content, *ob, *slice, *bad;
	uint64_t clen, off, len, want_a, want_n;
	size_t slen, blen, piece;
	unsigned g, mode;
	uint32_t x;
	struct seen s;

	if (size < 16)
		return 0;
	g = data[0] % 5;
	clen = (rd32(data + 1) & 0xffffff) % (g == 4 ? 300000 : 70000);
	off = rd32(data + 4) % (clen + 3);
	len = rd32(data + 8);
	if (data[12] & 1)
		len %= 5000;
	if (data[12] & 2)
		len = UINT64_MAX;
	piece = data[13] ? data[13] : 1 << 20;
	mode = data[14] % 4;
	x = data[15] * 2654435761u + 1;
	data += 16;
	size -= 16;

	content = malloc(clen + 1);
	for (uint64_t i = 0; i < clen; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		content[i] = (uint8_t)x;
	}
	ob = malloc(bao_outboard_len(clen, g));
	bao_outboard(content, clen, g, root, ob);
	slen = (size_t)bao_slice_len(clen, g, off, len);
	slice = malloc(slen);
	REQUIRE(bao_slice(content, clen, ob, g, off, len, slice) == 0);

	/* The honest slice: accepted, exactly the asked bytes. */
	memset(&s, 0, sizeof(s));
	s.content = content;
	s.content_len = clen;
	REQUIRE(run(root, g, off, len, slice, slen, piece, &s) == 0);
	want_a = off < clen ? off : clen;
	want_n = len < clen - want_a ? len : clen - want_a;
	REQUIRE(s.n == want_n);
	REQUIRE(want_n == 0 || s.next == want_a + want_n);

	/* The broken one. */
	blen = mode == 3 ? size : slen + (mode == 2 ? 1 + size % 64 : 0);
	bad = malloc(blen + 1);
	if (mode == 3)
		memcpy(bad, data, size);
	else
		memcpy(bad, slice, slen);
	if (mode == 0) {
		for (size_t i = 0; i + 5 <= size; i += 5)
			bad[rd32(data + i) % slen] ^= data[i + 4];
	} else if (mode == 1 && size >= 4) {
		blen = rd32(data) % slen;	/* a cut */
	} else if (mode == 2) {
		for (size_t i = slen; i < blen; i++)
			bad[i] = size ? data[i % size] : 0;
	}
	memset(&s, 0, sizeof(s));
	s.content = content;
	s.content_len = clen;
	if (run(root, g, off, len, bad, blen, piece, &s) == 0) {
		/* Accepted: the same slice, or only its length changed. */
		REQUIRE(blen == slen);
		REQUIRE(memcmp(bad + 8, slice + 8, slen - 8) == 0);
	}
	free(bad);
	free(slice);
	free(ob);
	free(content);
	return 0;
}

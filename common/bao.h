/*
 * bao.h: Bao (oconnor663/bao docs/spec.md) over BLAKE3 with chunk groups:
 * the outboard (the content length, 8 bytes little-endian, then every
 * parent node of the tree, left CV || right CV, in pre-order), slices of a
 * byte range, and streaming verification of a slice against the root.
 *
 * A group is 1024 << g bytes: g = 0 is Bao's 1 KiB chunks (its test
 * vectors), g = 4 is 16 KiB (the default). Groups drop the tree's lowest g
 * levels from the outboard; the root never depends on g: it is the BLAKE3
 * hash of the content.
 */
#ifndef BAO_H
#define BAO_H

#include <stddef.h>
#include <stdint.h>

#define BAO_GROUP_LOG_DEFAULT	4
#define BAO_GROUP_LOG_MAX	16	/* 64 MiB groups */
#define BAO_HEADER_LEN		8
#define BAO_PAIR_LEN		64

/* Groups in content_len bytes (1 for the empty content). */
uint64_t bao_groups(uint64_t content_len, unsigned g);
/* 8 + 64 x (groups - 1) (8 when the content fits one group). */
uint64_t bao_outboard_len(uint64_t content_len, unsigned g);
/* The content length an outboard's or slice's 8-byte header states
 * (unproven until a slice verifies). */
uint64_t bao_header_content_len(const uint8_t hdr[BAO_HEADER_LEN]);
/* One pass over data: root (= blake3_hash(data)) and the outboard
 * (bao_outboard_len bytes); g <= BAO_GROUP_LOG_MAX. */
void	 bao_outboard(const uint8_t *data, uint64_t len, unsigned g,
	    uint8_t root[32], uint8_t *outboard);

/*
 * A slice of [off, off + len) at group size g: the header, then in
 * pre-order the parent pairs and whole groups a reader meets going to
 * those bytes (Bao's slice format; g = 0 is byte for byte Bao's). len 0
 * counts as 1, and an offset at or past the end takes the last group, so
 * every slice proves the content length.
 */
uint64_t bao_slice_len(uint64_t content_len, unsigned g, uint64_t off,
	    uint64_t len);
/* Write the slice (bao_slice_len bytes) from data and its outboard.
 * 0, or -1 when g is too large or the outboard's length is not
 * content_len. */
int	 bao_slice(const uint8_t *data, uint64_t content_len,
	    const uint8_t *outboard, unsigned g, uint64_t off, uint64_t len,
	    uint8_t *out);

/*
 * Streaming verification of a slice of [off, off + len) against root: feed
 * the slice in pieces of any size; each parent and group is checked as it
 * completes, and only then are the requested bytes in it handed to emit,
 * in order (content offset, bytes). A corrupt byte stops it for good.
 */
typedef void bao_emit_fn(void *arg, uint64_t content_off, const uint8_t *p,
	    size_t n);
struct bao_verify;

/* A verifier (NULL when g is too large). */
struct bao_verify *bao_verify_new(const uint8_t root[32], unsigned g,
	    uint64_t off, uint64_t len, bao_emit_fn *emit, void *arg);
void	 bao_verify_free(struct bao_verify *v);
/* Feed n bytes of the slice: 0, or -1 once the slice is refused. */
int	 bao_verify_feed(struct bao_verify *v, const void *p, size_t n);
/* The slice has ended: 0 when all of it arrived and verified, else -1
 * (truncated, or refused before). */
int	 bao_verify_finish(struct bao_verify *v);
/* After -1: what was wrong, and the content range [*bad_off, *bad_off +
 * *bad_len) of the first node that failed or never arrived (empty for
 * bytes past the slice's end). NULL while nothing is wrong. */
const char *bao_verify_error(const struct bao_verify *v, uint64_t *bad_off,
	    uint64_t *bad_len);

#endif

/*
 * riblt.h: rateless invertible Bloom lookup tables after RIBLT (Yang,
 * Gilad, Alizadeh, "Practical Rateless Set Reconciliation", SIGCOMM 2024),
 * written for this project.
 *
 * Items are 64-bit values.  An encoder turns its set into an endless
 * stream of coded symbols; symbol i is (XOR of the items mapped to it, XOR
 * of their checksums, their count).  Item x maps to symbol 0 and then to
 * a sparser and sparser pseudo-random sequence of indexes (probability
 * about 1/(1 + i/2) for index i), drawn from a generator seeded by its
 * checksum, so both sides compute the same mapping.  A decoder that holds
 * the other set subtracts its own symbols from those it receives and
 * peels: a cell whose count is +1 or -1 and whose checksum is the
 * checksum of its sum holds one item of the difference.  About 1.35 d
 * symbols (more for small d) recover a difference of d items, whatever
 * the size of the sets.  docs/protocol.md has the mapping and the wire
 * form exactly, for another implementation.
 *
 * Bounded: an encoder or decoder handles at most the max_syms symbols it
 * was made with (its memory is about 4 bytes a symbol plus 37 an item),
 * and the work per symbol is bounded by its own set and what it
 * recovered.
 */
#ifndef RIBLT_H
#define RIBLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_buf;

/* One coded symbol. */
struct riblt_sym {
	uint64_t	sum;	/* XOR of items */
	uint64_t	chk;	/* XOR of their checksums */
	int64_t		count;
};

/* Bytes of a packed symbol at most (8 + 8 + a 10-byte varint). */
#define RIBLT_SYM_MAX	26

struct riblt_enc;
struct riblt_dec;

/* An item's checksum (docs/protocol.md). */
uint64_t	 riblt_checksum(uint64_t x);

/* An encoder over a copy of items (deduplicated), for max_syms symbols. */
struct riblt_enc *riblt_enc_new(const uint64_t *items, size_t n,
		    size_t max_syms);
void		 riblt_enc_free(struct riblt_enc *e);
/* The next k symbols of the stream into out: how many (fewer past max). */
size_t		 riblt_enc_next(struct riblt_enc *e, struct riblt_sym *out,
		    size_t k);
/* Symbols produced so far. */
size_t		 riblt_enc_pos(const struct riblt_enc *e);

/* A decoder against the local items, taking at most max_syms symbols. */
struct riblt_dec *riblt_dec_new(const uint64_t *local, size_t n,
		    size_t max_syms);
void		 riblt_dec_free(struct riblt_dec *d);
/* Add the next k symbols of the remote stream. 0, or -1 past max_syms. */
int		 riblt_dec_add(struct riblt_dec *d, const struct riblt_sym *s,
		    size_t k);
/* True once the whole difference is recovered. */
bool		 riblt_dec_done(const struct riblt_dec *d);
/* Symbols taken so far. */
size_t		 riblt_dec_pos(const struct riblt_dec *d);
/* The items only the remote side holds, and those only the local holds. */
const uint64_t	*riblt_dec_remote(const struct riblt_dec *d, size_t *n);
const uint64_t	*riblt_dec_local(const struct riblt_dec *d, size_t *n);

/* Append k symbols packed into one byte string. */
void		 riblt_put_syms(struct dcbor_buf *b, const struct riblt_sym *s,
		    size_t k);
/* Unpack up to max symbols from p; *k how many. 0, or -1 if malformed. */
int		 riblt_get_syms(const uint8_t *p, size_t len,
		    struct riblt_sym *out, size_t max, size_t *k);

#endif

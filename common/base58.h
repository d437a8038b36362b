/*
 * base58.h: base58btc (the Bitcoin alphabet), as used by multibase "z"
 * PeerIds (docs/protocol.md section 2).  Each leading zero byte is one
 * leading '1'.
 * No allocation: both directions work in the caller's output buffer.
 * Quadratic in the input length, meant for ids and keys, not for bulk data.
 */
#ifndef BASE58_H
#define BASE58_H

#include <stddef.h>
#include <stdint.h>

/* Room for the text of n bytes, NUL included (log(256)/log(58) < 1.37). */
#define BASE58_ENCODED_MAX(n)	((n) * 137 / 100 + 2)

/*
 * Write the NUL-terminated base58 text of in[0..n) to out.  Returns its
 * length, or 0 (out = "" if outlen > 0) when outlen is too small; the empty
 * input encodes as "" and returns 0 too.
 */
size_t	base58_encode(const uint8_t *in, size_t n, char *out, size_t outlen);
/*
 * Decode the NUL-terminated text in into out, *n = bytes written.
 * 0, or -1 on a character outside the alphabet or if outlen is too small.
 */
int	base58_decode(const char *in, uint8_t *out, size_t outlen, size_t *n);

#endif

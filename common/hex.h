/*
 * hex.h: lower-case hexadecimal, for ids in JSON and logs.
 */
#ifndef HEX_H
#define HEX_H

#include <stddef.h>
#include <stdint.h>

/* Write 2n hex digits and a NUL to out (2n + 1 bytes). */
void	hex_encode(const uint8_t *in, size_t n, char *out);
/* The value of one hex digit (either case), or -1. */
int	hex_digit(char c);
/* Decode exactly n bytes from 2n hex digits (either case). 0 or -1. */
int	hex_decode(const char *in, uint8_t *out, size_t n);

#endif

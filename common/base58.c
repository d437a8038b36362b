/*
 * base58.c: base58btc encode and decode (see base58.h).
 *
 * Both directions are the schoolbook base conversion, carried out in place
 * in the output buffer (digits little-endian while converting, reversed at
 * the end), so the only bound is the one the caller passes.
 */
#include <string.h>

#include "base58.h"

static const char b58_alphabet[] =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/* Value + 1 of each character; 0 means "not in the alphabet". */
static const int8_t b58_value[256] = {
	['1'] = 1, ['2'] = 2, ['3'] = 3, ['4'] = 4, ['5'] = 5, ['6'] = 6,
	['7'] = 7, ['8'] = 8, ['9'] = 9,
	['A'] = 10, ['B'] = 11, ['C'] = 12, ['D'] = 13, ['E'] = 14,
	['F'] = 15, ['G'] = 16, ['H'] = 17, ['J'] = 18, ['K'] = 19,
	['L'] = 20, ['M'] = 21, ['N'] = 22, ['P'] = 23, ['Q'] = 24,
	['R'] = 25, ['S'] = 26, ['T'] = 27, ['U'] = 28, ['V'] = 29,
	['W'] = 30, ['X'] = 31, ['Y'] = 32, ['Z'] = 33,
	['a'] = 34, ['b'] = 35, ['c'] = 36, ['d'] = 37, ['e'] = 38,
	['f'] = 39, ['g'] = 40, ['h'] = 41, ['i'] = 42, ['j'] = 43,
	['k'] = 44, ['m'] = 45, ['n'] = 46, ['o'] = 47, ['p'] = 48,
	['q'] = 49, ['r'] = 50, ['s'] = 51, ['t'] = 52, ['u'] = 53,
	['v'] = 54, ['w'] = 55, ['x'] = 56, ['y'] = 57, ['z'] = 58,
};

static void
b58_reverse(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		uint8_t t = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
}

size_t
base58_encode(const uint8_t *in, size_t n, char *out, size_t outlen)
{
	uint8_t *dig = (uint8_t *)out;
	size_t zeros = 0, len = 0, i, j;

	if (outlen == 0)
		return 0;
	while (zeros < n && in[zeros] == 0)
		zeros++;
	if (zeros + 1 > outlen)
		goto toosmall;
	for (i = zeros; i < n; i++) {
		unsigned int carry = in[i];

		for (j = 0; j < len; j++) {
			carry += (unsigned int)dig[j] << 8;
			dig[j] = (uint8_t)(carry % 58);
			carry /= 58;
		}
		while (carry > 0) {
			if (zeros + len + 1 >= outlen)
				goto toosmall;
			dig[len++] = (uint8_t)(carry % 58);
			carry /= 58;
		}
	}
	b58_reverse(dig, len);
	memmove(out + zeros, dig, len);
	for (i = 0; i < len; i++)
		out[zeros + i] = b58_alphabet[(uint8_t)out[zeros + i]];
	memset(out, '1', zeros);
	out[zeros + len] = '\0';
	return zeros + len;
toosmall:
	out[0] = '\0';
	return 0;
}

int
base58_decode(const char *in, uint8_t *out, size_t outlen, size_t *n)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t zeros = 0, len = 0, j;

	*n = 0;
	while (s[zeros] == '1')
		zeros++;
	if (zeros > outlen)
		return -1;
	for (s += zeros; *s != '\0'; s++) {
		unsigned int carry = (unsigned int)b58_value[*s];

		if (carry == 0)
			return -1;
		carry--;
		for (j = 0; j < len; j++) {
			carry += (unsigned int)out[j] * 58;
			out[j] = (uint8_t)carry;
			carry >>= 8;
		}
		while (carry > 0) {
			if (zeros + len >= outlen)
				return -1;
			out[len++] = (uint8_t)carry;
			carry >>= 8;
		}
	}
	b58_reverse(out, len);
	memmove(out + zeros, out, len);
	memset(out, 0, zeros);
	*n = zeros + len;
	return 0;
}

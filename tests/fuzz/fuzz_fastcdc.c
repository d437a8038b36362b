/*
 * fuzz_fastcdc.c: libFuzzer target for the chunker's streaming interface
 * (fastcdc_update / fastcdc_final) against fastcdc_next.
 *
 * Input: 17 header bytes, then the data.  Header byte 0 picks how the next
 * bytes become parameters: raw 32-bit min, avg, max (bytes 1-12, little-
 * endian) and a level (whatever
 * fastcdc_params_check accepts is run, so odd and extreme values get
 * through) or small ones (min 64-319, avg 256-1024, max up to 4 KiB) so
 * the fuzzer's short inputs hold many cuts.  Bytes 13-16 seed
 * the places where the data is split into feeds.  The stream must give
 * the same chunks as the whole buffer; every chunk is within max and at
 * least min (but the last); the lengths sum to the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastcdc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)
#define HDR	17

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
next_rand(uint64_t *s)
{
	*s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return *s >> 33;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fastcdc_params p;
	struct fastcdc c;
	const uint8_t *d;
	size_t n, off, woff, len, last;
	uint64_t rng;
	char err[80];

	if (size < HDR)
		return 0;
	if (data[0] & 1) {
		p.min = rd32(data + 1);
		p.avg = rd32(data + 5);
		p.max = rd32(data + 9);
		p.level = data[0] >> 1 & 7;
	} else {
		p.min = 64 + data[1];
		p.avg = 256u << (data[2] % 3);
		p.max = p.avg + (uint32_t)data[3] * 12;
		p.level = data[0] >> 1 & 3;
	}
	if (fastcdc_params_check(&p, err, sizeof(err)) == -1) {
		REQUIRE(err[0] != '\0');
		return 0;
	}
	rng = rd32(data + 13);
	d = data + HDR;
	n = size - HDR;

	fastcdc_init(&c, &p);
	off = 0;	/* fed so far */
	woff = 0;	/* where the whole-buffer walk has got to */
	while (off < n) {
		size_t piece = (size_t)(next_rand(&rng) % (n - off + 1));
		size_t used = 0;

		do {
			size_t t = fastcdc_update(&c, d + off + used,
			    piece - used, &len);

			REQUIRE(t <= piece - used);
			used += t;
			if (len == 0) {
				REQUIRE(used == piece);
				continue;
			}
			/* A cut: the same chunk as the whole buffer's. */
			REQUIRE(woff < n);
			REQUIRE(len == fastcdc_next(&p, d + woff, n - woff));
			REQUIRE(len >= p.min && len <= p.max);
			REQUIRE(woff + len == off + used);
			woff += len;
		} while (used < piece);
		off += piece;
	}
	last = fastcdc_final(&c);
	if (last > 0) {
		REQUIRE(last == fastcdc_next(&p, d + woff, n - woff));
		REQUIRE(last <= p.max);
		woff += last;
	}
	REQUIRE(woff == n);
	REQUIRE(fastcdc_final(&c) == 0);
	return 0;
}

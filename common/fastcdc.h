/*
 * fastcdc.h: content-defined chunk boundaries (FastCDC, Xia et al. 2016,
 * with normalized chunking; scanned two bytes a step as in the 2020 paper,
 * which gives the same cuts).
 *
 * A chunk's length depends only on its own bytes: bytes before min are
 * never hashed, a gear hash (h = (h << 1) + G[byte]) runs from min, and
 * the first byte whose hash has no bit of the mask set starts the next
 * chunk; before avg the mask has level more bits than log2(avg) (a cut is
 * rarer), from avg on level fewer; a chunk that reaches max ends there.
 * docs/pdt.md states the rule, the tables and the vectors.
 *
 * Two ways in, with the same cuts: fastcdc_next on a buffer holding the
 * rest of the input, or a struct fastcdc fed buffers of any size (a file
 * never has to be in memory).  Pure C: no allocation, no libraries.
 */
#ifndef FASTCDC_H
#define FASTCDC_H

#include <stddef.h>
#include <stdint.h>

struct fastcdc_params {
	uint32_t	 min, avg, max;	/* bytes */
	unsigned	 level;		/* normalization, 0..3 */
};

#define FASTCDC_PARAMS_DEFAULT	{ 16384, 65536, 262144, 2 }

/* The accepted ranges (those of the public implementations). */
#define FASTCDC_MIN_LO		64u
#define FASTCDC_MIN_HI		(1u << 20)
#define FASTCDC_AVG_LO		256u
#define FASTCDC_AVG_HI		(4u << 20)
#define FASTCDC_MAX_LO		1024u
#define FASTCDC_MAX_HI		(16u << 20)
#define FASTCDC_LEVEL_HI	3u

/*
 * 0, or -1 with a one-line reason in err: min, avg, max within the ranges
 * above, avg a power of two, min <= avg <= max, level 0..3.
 */
int	 fastcdc_params_check(const struct fastcdc_params *p, char *err,
	    size_t errlen);

/*
 * The length of the next chunk of data[0..n), n > 0 the whole rest of
 * the input (a final chunk may be shorter than min).  p must pass
 * fastcdc_params_check.
 */
size_t	 fastcdc_next(const struct fastcdc_params *p, const uint8_t *data,
	    size_t n);

/* Streaming: a public struct, no allocation; fields are private. */
struct fastcdc {
	uint32_t	 min, avg, max;
	uint64_t	 mask_s, mask_l;
	uint64_t	 h;		/* gear hash of the chunk so far */
	uint32_t	 pos;		/* bytes of the current chunk seen */
};

/* Start a stream; p must pass fastcdc_params_check. */
void	 fastcdc_init(struct fastcdc *c, const struct fastcdc_params *p);

/*
 * Feed the next n bytes of the stream.  Returns how many of them belong
 * to the current chunk; when the chunk ends inside data (or exactly at its
 * end), *chunk_len is its length and the next call starts the next chunk
 * at data + the return value; otherwise *chunk_len is 0 and all n bytes
 * were taken.  Loop until the buffer is used up.
 */
size_t	 fastcdc_update(struct fastcdc *c, const uint8_t *data, size_t n,
	    size_t *chunk_len);

/*
 * End of stream: the length of the last chunk (0 when the stream was
 * empty or ended on a cut).  c starts a new stream afterwards.
 */
size_t	 fastcdc_final(struct fastcdc *c);

/* G[i] of the gear table (first 8 bytes of MD5 of 64 bytes i, big-endian). */
uint64_t fastcdc_gear(unsigned i);

#endif

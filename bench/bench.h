/*
 * bench.h: the microbenchmark harness (build/bench, BENCHMARKS.md).
 *
 * A family is one file, bench/bench_<family>.c, that defines
 * 'const struct bench_family bench_family_<family>' holding a table of rows.
 * main.c knows the families only through BENCH_FAMILIES below, so adding a
 * family is: write the file, add its name to that list.
 *
 * A row measures one operation.  Its run() performs n operations in a loop
 * (the harness picks n so one batch takes ~20 ms); keeping the loop inside
 * the row means no indirect call per operation, which matters for ops that
 * cost a few nanoseconds.  Results must reach bench_consume() or
 * bench_escape() so the compiler cannot drop the work.
 *
 * A row may name a baseline row (raw OpenSSL beside a signed frame, memcpy
 * beside a CBOR blob).  The baseline always runs when the row runs, and its
 * samples are interleaved with the row's, so the ratio holds when the
 * machine drifts; the ratio is the figure to read on a shared host.
 *
 * A throughput row (param BENCH_PASS) is the other shape, after seed
 * 000's FastCdcBench: one op is one pass over a large input (--mebibytes N
 * of seeded random bytes, or --file PATH, read by the family from
 * bench_input), each pass timed alone, best of --passes, reported in MiB/s.
 * Its state starts with a struct bench_pass that setup or run fills.  A
 * family's throughput rows run as one group whose passes are interleaved
 * (pass k of every row, then pass k + 1), so they share the drift too.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>

struct bench_row {
	const char	*name;		/* "Family.op_size", unique */
	const char	*baseline;	/* another row's name, or NULL */
	size_t		 param;		/* handed to setup (a size, a count) */
	/*
	 * Make the state for param; NULL setup means no state.  0 or -1;
	 * teardown is called on a non-NULL *state even after a failure.
	 */
	int		(*setup)(void **state, size_t param);
	/* Do the operation n times. 0, or -1 when it failed (a bad verify). */
	int		(*run)(void *state, uint64_t n);
	/* Free what setup made (never called with NULL); may be NULL. */
	void		(*teardown)(void *state);
	/*
	 * May be NULL.  Called before every batch, outside the timed span,
	 * with the batch's n: for work a batch needs that is not the
	 * operation (building the entries a space row will write, putting a
	 * mutated structure back).  0 or -1.
	 */
	int		(*prepare)(void *state, uint64_t n);
};

struct bench_family {
	const char		*name;	/* the row-name prefix before the dot */
	const struct bench_row	*rows;
	size_t			 nrows;
};

#define BENCH_NROWS(a)	(sizeof(a) / sizeof((a)[0]))

/* param of a throughput row. */
#define BENCH_PASS	((size_t)-1)

/* The head of a throughput row's state. */
struct bench_pass {
	uint64_t	 bytes;		/* one op (one pass) covers */
	char		 note[96];	/* "" or a word on the last op */
};

/* The throughput rows' input, from the command line (main.c fills it). */
struct bench_input {
	uint64_t	 mebibytes;	/* seeded random bytes, or 0 with file */
	const char	*file;		/* --file, or NULL */
	int		 passes;	/* best of */
};
extern struct bench_input bench_input;

/* Every family, in the order they run. One word per family. */
#define BENCH_FAMILIES(X)	\
	X(cbor)			\
	X(crypto)		\
	X(hlc)			\
	X(frame)		\
	X(seal)			\
	X(template)		\
	X(localspace)		\
	X(crdt)			\
	X(entry)		\
	X(channel)		\
	X(recon)			\
	X(wire)			\
	X(fastcdc)

#define BENCH_FAMILY_DECL(f) extern const struct bench_family bench_family_##f;
BENCH_FAMILIES(BENCH_FAMILY_DECL)
#undef BENCH_FAMILY_DECL

/* Written by rows so their results count as used; defined in main.c. */
extern volatile uint64_t bench_sink;

/* Fold a result into the sink (one volatile store; call once per batch). */
static inline void
bench_consume(uint64_t v)
{
	bench_sink += v;
}

/*
 * Tell the compiler the memory at p may be read and written here, so
 * stores into it are not dead and loads from it are not hoisted.
 */
static inline void
bench_escape(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
	__asm__ volatile("" : : "g"(p) : "memory");
#else
	bench_sink += (uint64_t)(uintptr_t)p;
#endif
}

/* splitmix64: deterministic filler for inputs (not for keys that matter). */
static inline uint64_t
bench_rng(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Fill p[0..n) with bench_rng bytes from seed. */
static inline void
bench_fill(void *p, size_t n, uint64_t seed)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)bench_rng(&seed);
}

#endif

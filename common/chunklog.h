/*
 * chunklog.h: an append-only log of fixed-size records, kept in chunks of
 * a fixed number of records.  A record, once appended, never moves: the
 * log grows a chunk at a time, never by copying (a doubling array leaves
 * the old copies behind as free heap that the process keeps), and its
 * oldest chunks can be dropped whole once a reader no longer needs them
 * (take.c's log of won takes drops a chunk once every record it names is
 * collected).  Records keep their index for good: index i is the i-th
 * record ever appended, whether or not the chunks before it are dropped.
 * Used by peerd's take.c (won takes) and load.c (a write load's ids).
 */
#ifndef CHUNKLOG_H
#define CHUNKLOG_H

#include <stddef.h>
#include <stdint.h>

struct chunklog {
	size_t		  recsz;	/* bytes a record */
	size_t		  per;		/* records a chunk */
	uint8_t		**chunk;	/* chunk[0] holds records from first */
	size_t		  nchunk, capchunk;
	uint64_t	  first;	/* records before it are dropped */
	uint64_t	  n;		/* records ever appended */
};

/* An empty log of recsz-byte records, per records a chunk (both >= 1). */
void	 chunklog_init(struct chunklog *l, size_t recsz, size_t per);
/* Free every chunk; l is empty (and initialised) again. */
void	 chunklog_free(struct chunklog *l);
/* A new record at index l->n, zeroed, for the caller to fill. */
void	*chunklog_append(struct chunklog *l);
/* Record i, or NULL when i was dropped or not yet appended. */
void	*chunklog_at(const struct chunklog *l, uint64_t i);
/* Records ever appended (the next index). */
uint64_t chunklog_count(const struct chunklog *l);
/* The first record still held (0 until a chunk is dropped). */
uint64_t chunklog_first(const struct chunklog *l);
/* Drop the oldest chunk if it is full and not the newest; 1 if dropped. */
int	 chunklog_drop_first(struct chunklog *l);
/* Bytes the log holds: its chunks and its chunk table. */
size_t	 chunklog_bytes(const struct chunklog *l);

#endif

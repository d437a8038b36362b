/*
 * nodestore.h: a node store on disk, the home of persistent data trees'
 * nodes (pnode.h), or a store that keeps nothing (for the bench).
 *
 * A store is a directory (docs/content.md, "The node store"):
 *
 *   pack-00000000, pack-00000001, ...
 *       append-only pack files: an 8-byte header "PDTPACK1", then records
 *       [u32 BE length][u8 kind][32-byte id][the node's bytes]; a pack is
 *       closed once it passes NODESTORE_PACK_ROLL bytes
 *   index
 *       "PDTIDX01", then one 56-byte record per node in pack order:
 *       [id 32][kind 1][0 0 0][pack u32 BE][offset u64 BE][length u32 BE]
 *       [XXH32 (seed 0) of the 52 bytes before it, u32 BE]
 *
 * Opening reads the index and believes each record only if its check
 * holds and it names the next record of its pack (records are contiguous)
 * inside the pack's size; the first record that fails and everything
 * after it are dropped, and the packs are scanned from there: each record
 * found must be whole and hash to its id, or the pack is cut at its start
 * (a torn tail after a crash) and the index rebuilt from the records found.
 * A node read back is checked against its id every time.  One process
 * opens a store at a time (an flock on the directory).  Nothing is
 * fsynced: the store survives the death of the process, not of the host.
 * (Pinned roots, the next issue's, will be a file "roots" beside these.)
 */
#ifndef NODESTORE_H
#define NODESTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcbor.h"
#include "pnode.h"

#define NODESTORE_PACK_ROLL	(1ull << 30)
#define NODESTORE_PACK_HDR	8
#define NODESTORE_REC_HDR	37
#define NODESTORE_IDX_HDR	8
#define NODESTORE_IDX_REC	56

struct nodestore;

struct nodestore_counts {
	uint64_t	nodes[PNODE_NKINDS];
	uint64_t	bytes[PNODE_NKINDS];	/* the nodes' own bytes */
	uint64_t	nodes_total;
	uint64_t	bytes_total;
	uint64_t	cut_bytes;	/* torn tail cut when it opened */
	uint64_t	reindexed;	/* records indexed from a pack scan */
	uint64_t	puts;		/* puts since open (new or not) */
	uint64_t	put_bytes;
};

/*
 * Open (creating it if needed) the store in dir; NULL with err on failure
 * (another process holds it open, a file that is not a pack, I/O).
 */
struct nodestore *nodestore_open(const char *dir, char *err, size_t errlen);
/* A store that keeps nothing: puts are counted, gets miss. */
struct nodestore *nodestore_null(void);
void	nodestore_close(struct nodestore *s);

/*
 * Store node p[0..n) of kind under id (its SHA-256, computed by the caller:
 * pnode_id).  1 stored, 0 already held (nothing written), -1 with errno on
 * a failed write (nothing indexed) or EINVAL (a kind or length out of
 * range).  The null store returns 1 and counts.
 */
int	nodestore_put_id(struct nodestore *s, int kind,
	    const uint8_t id[PNODE_ID_LEN], const uint8_t *p, size_t n);
/* As nodestore_put_id, computing the id into id. */
int	nodestore_put(struct nodestore *s, int kind, const uint8_t *p,
	    size_t n, uint8_t id[PNODE_ID_LEN]);
/*
 * Node id's bytes into out (reset first): 0, 1 if not held, -1 if the
 * stored bytes do not hash to id or cannot be read (errno EIO: the node is
 * corrupt; it stays indexed so the caller can report it).
 */
int	nodestore_get(struct nodestore *s, const uint8_t id[PNODE_ID_LEN],
	    struct dcbor_buf *out, int *kind);
bool	nodestore_has(const struct nodestore *s,
	    const uint8_t id[PNODE_ID_LEN]);
/* The kind and length of a held node: 0, or 1 if not held. */
int	nodestore_stat(const struct nodestore *s,
	    const uint8_t id[PNODE_ID_LEN], int *kind, uint32_t *len);
void	nodestore_counts(const struct nodestore *s,
	    struct nodestore_counts *c);
/* The store as a node source (pnode_src) for the walks. */
struct pnode_src nodestore_src(struct nodestore *s);
/*
 * Read and check every node (its id, and its body for its kind), like
 * fsck; fn (may be NULL) hears of each bad one.  The number of bad nodes.
 */
uint64_t nodestore_verify(struct nodestore *s,
	    void (*fn)(void *arg, const uint8_t *id, int kind, const char *why),
	    void *arg);

#endif

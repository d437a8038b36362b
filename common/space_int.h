/*
 * space_int.h: the structures of a space (space.h) shared by the three
 * files that build it: space.c (records by id, record life, due times,
 * the verbs and anti-entropy), fifo.c (each type's FIFO index of visible
 * records and its template cursors) and fidx.c (each type's field
 * indexes).  Included by those three only; nothing else sees inside.
 */
#ifndef SPACE_INT_H
#define SPACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcbor.h"
#include "space.h"

#define F_LIVE		0x01	/* present and lease running */
#define F_CLAIMED	0x02	/* live with an active claim */
#define F_DONE		0x04	/* completion seen */
#define F_INDEXED	0x08	/* in its type's FIFO index */
#define F_COMPACT	0x10	/* completed: no entry, no claim (below) */
#define F_PACKED	0x20	/* compact, as a struct space_crec */

#define CUR_PEND	8	/* records noted before a cursor, checked lazily */

struct space_type;

/*
 * A record.  flags comes first here and in struct space_crec, so a pointer
 * from the id table tells its form by its first word.
 *
 * A completed record keeps only what the CRDT needs until its tombstone is
 * collected: it is then *compact* (F_COMPACT), its entry and claim
 * dropped.  Its usual state (one add dot, no remove dot, a lease stamped by
 * the dot's node) fits a struct space_crec, F_PACKED; any other state
 * keeps this struct with e NULL and the claim all zero.  Every reader goes
 * through rec_id, rec_claim or rec_view (space.c), which know both forms.
 */
struct space_rec {
	unsigned		 flags;		/* first: see above */
	struct entry		*e;		/* NULL when compact */
	struct space_type	*type;
	uint64_t		 hash;		/* digest contribution */
	uint64_t		 sched;		/* earliest due time queued */
	uint64_t		 gc_at;		/* tombstone collection time */
	struct crdt_rec		 cr;
};

/*
 * A packed compact record, 64 bytes in a slab (space.c): the state of a
 * completed entry, add dot {node, add}, lease {stamp {phys, logical, node},
 * expires}, and the digest hash.  It is queued for collection in the
 * space's collection heap (at gcpos), keyed by its lease end: every
 * tombstone outlives its lease by the same retention, so that order is
 * the collection order.
 */
struct space_crec {
	uint32_t		 flags;		/* F_COMPACT | F_PACKED | F_DONE */
	uint32_t		 gcpos;		/* index in the collection heap */
	uint8_t			 id[ENTRY_ID_LEN];
	uint64_t		 hash;
	uint64_t		 node;		/* of the add dot and the stamp */
	uint64_t		 phys;		/* lease stamp */
	uint64_t		 expires_ms;	/* lease end */
	uint32_t		 logical;	/* lease stamp */
	uint32_t		 add;		/* add dot counter */
};

/* A position in FIFO order: (issue stamp, id). */
struct fifo_key {
	struct hlc_stamp	 stamp;
	uint8_t			 id[ENTRY_ID_LEN];
};

struct fifo_slot {
	struct fifo_key		 k;
	struct space_rec	*rec;		/* NULL: dead slot */
};

enum cur_state {
	CUR_NONE = 0,		/* nothing known yet: scan from the head */
	CUR_KEY,		/* visible records before x fail */
	CUR_END,		/* every visible record fails */
};

/* See "template cursors" below. */
struct tcursor {
	uint8_t			*canon;		/* NULL: unused */
	size_t			 canon_len;
	uint64_t		 hash;		/* XXH3-64 of canon */
	uint64_t		 used;		/* LRU tick */
	enum cur_state		 state;
	struct fifo_key		 x;
	unsigned		 npend;
	struct fifo_key		 pend[CUR_PEND];
};

/* One value hash's visible records, in FIFO order in r[lo..n). */
struct fbucket {
	uint64_t		 h;
	struct space_rec	**r;
	size_t			 lo;
	size_t			 n;
	size_t			 cap;
	bool			 used;		/* h set (maybe empty now) */
};

/* See "field indexes" below. */
struct fidx {
	char			*field;		/* NULL: unused */
	size_t			 field_len;
	uint64_t		 used;		/* LRU tick */
	struct fbucket		*b;
	size_t			 nb;		/* a power of two */
	size_t			 nused;		/* buckets with h set */
	size_t			 nempty;	/* of those, holding nothing */
};

struct space_type {
	char			 name[ENTRY_TYPE_MAX + 1];
	struct fidx		*fx;		/* FIDX_MAX, made on first use */
	struct fifo_slot	*s;
	size_t			 n;
	size_t			 cap;
	size_t			 head;		/* slots before it are dead */
	size_t			 live;
	struct tcursor		*cur;		/* CUR_MAX, made on first use */
	uint64_t		 tick;
};

struct due {
	uint64_t		 at;
	uint8_t			 id[ENTRY_ID_LEN];
};

struct space {
	uint64_t		 node;
	uint64_t		 counter;	/* of this peer's add dots */
	uint8_t			 self[IDENTITY_ID_LEN];
	size_t			 max;
	struct space_rec	**tab;
	size_t			 tabsz;		/* a power of two */
	size_t			 nrec;
	struct space_type	**types;
	size_t			 ntypes;
	struct due		*heap;
	size_t			 nheap;
	size_t			 capheap;
	uint64_t		 max_lease_ms;
	size_t			 visible;
	space_event_cb		 cb;
	void			*cbarg;
	struct dcbor_buf	 scratch;
	struct dcbor_buf	 tkey;		/* a template's canonical form */
	void			*cfree;		/* free packed slots, a list */
	uint8_t			**slabs;	/* of packed records */
	size_t			 nslabs;
	size_t			 slab_used;	/* slots carved from the last */
	struct space_crec	**gc;		/* collection heap, by lease end */
	size_t			 ngc;		/* packed records: all in gc */
	size_t			 capgc;
};

/* The type called name, made if create (else NULL when unknown). */
struct space_type	*fifo_type(struct space *, const char *name, bool create);
/* Free t and everything its indexes hold (not its records). */
void			 fifo_type_free(struct space_type *t);
/* r became visible: into its type's FIFO index, cursors, field indexes. */
void			 fifo_add(struct space *, struct space_rec *r);
/* r stopped being visible: out of them all. */
void			 fifo_del(struct space *, struct space_rec *r);
/* Visit ty's visible matches of t in FIFO order until cb says stop (cb
 * NULL: the first); *count (if not NULL) counts the visited matches. */
struct space_rec	*fifo_scan(struct space *, struct space_type *ty,
			    const struct template *t, space_rec_cb cb, void *arg,
			    size_t *count);

/* Keep ty's field indexes in line with r entering (add) or leaving it. */
void			 fidx_note(struct space_type *ty, struct space_rec *r,
			    bool add);
/* Free every field index of ty. */
void			 fidx_free(struct space_type *ty);
/* Answer t from a field index (see fidx.c): false when none serves it. */
bool			 fidx_scan(struct space_type *ty, const struct template *t,
			    space_rec_cb cb, void *arg, size_t *count,
			    struct space_rec **out);

#endif

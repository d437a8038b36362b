/*
 * recon.h: set reconciliation for anti-entropy (docs/protocol.md section
 * 6.2): every anti-entropy path (the periodic repair, a newcomer's
 * catch-up when its link comes up, a restarted peer) reconciles by the
 * method of --reconcile: the 64-bucket digest of gossip.c, negentropy
 * (common/neg.c) or RIBLT (common/riblt.c).
 *
 * An item is a record's state hash (space_rec_hash: XXH3-64 of its id,
 * dot sets, lease, completion and claim), so a changed state reconciles,
 * not only presence.  Once the difference is known only those records
 * move (RECON_RECS), both ways.  A four-step end (RECON_END) makes the
 * initiator's "done" mean that both replicas applied everything.
 */
#ifndef RECON_H
#define RECON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_buf;
struct member;
struct riblt_sym;

enum recon_method {
	RECON_DIGEST = 0,
	RECON_NEGENTROPY,
	RECON_RIBLT,
};

/* What one reconciliation cost, seen from its initiator. */
struct recon_result {
	bool			 ok;
	const char		*error;		/* when not ok */
	enum recon_method	 method;
	uint64_t		 rounds;	/* legs until both know the diff */
	uint64_t		 bytes;		/* exchange frames, both ways */
	uint64_t		 record_bytes;	/* record frames, both ways */
	uint64_t		 records;	/* records sent and received */
	uint64_t		 payload;	/* their encoded size */
	uint64_t		 items;		/* this side's items */
	double			 ms;
};

typedef void	(*recon_done_cb)(void *arg, const struct recon_result *r);

/* "digest", "negentropy", "riblt": 0, or -1 if the name is unknown. */
int		 recon_method_parse(const char *name, enum recon_method *m);
const char	*recon_method_name(enum recon_method m);

void		 recon_init(void);
void		 recon_free(void);
/*
 * Anti-entropy with m by --reconcile: 0 when a session started (or need
 * not), -1 when the method is the digest (the caller sends it).  When a
 * link comes up both ends call it; only the end with the lower id starts,
 * so a newcomer's catch-up moves each record once.
 */
int		 recon_start(struct member *m, bool link_up);
/* One reconciliation with m by method; done is called exactly once. */
void		 recon_run(struct member *m, enum recon_method method,
		    uint32_t timeout_ms, recon_done_cb done, void *arg);
/* A RECON_* frame from a member. 0, or -1 if it is malformed. */
int		 recon_recv(struct member *from, uint32_t kind,
		    const uint8_t *body, size_t len);
/*
 * Periodic repairs in a row that found the replicas equal (0 after one
 * that moved a record or failed; always 0 with the digest): gossip.c
 * lengthens its repair period by it.
 */
unsigned	 recon_quiet(void);
/* The link to m went down: its sessions end. */
void		 recon_link_down(struct member *m);

/*
 * The bodies, appended to b (docs/protocol.md 8; cut 0: none): a
 * RECON_NEG around the negentropy message msg, a RECON_SYMS of k symbols
 * from index at, a RECON_END; want: items, sent 8 bytes big-endian each.
 */
void		 recon_neg_put(struct dcbor_buf *b, uint64_t cut,
		    uint64_t sid, const uint8_t *msg, size_t len,
		    const uint64_t *want, size_t k);
void		 recon_syms_put(struct dcbor_buf *b, uint64_t at,
		    uint64_t cut, uint64_t sid, uint64_t size,
		    const struct riblt_sym *sym, size_t k);
void		 recon_end_put(struct dcbor_buf *b, uint64_t sid,
		    uint64_t step, bool all, const uint64_t *want, size_t k);

#endif

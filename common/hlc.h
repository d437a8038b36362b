/*
 * hlc.h: hybrid logical clock (Kulkarni et al.), as docs/protocol.md
 * section 2 gives it.
 *
 * A stamp is (physical ms, logical counter, node); order is physical, then
 * logical, then node.  The logical counter saturates and never wraps.
 * Wall time is passed in by the caller so tests can drive it.
 */
#ifndef HLC_H
#define HLC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcbor_buf;
struct dcbor_rd;

#define HLC_MAX_AHEAD_MS	(600u * 1000u)	/* cap on a remote's physical */
#define HLC_TEXT_MAX		64	/* 20 + 1 + 10 + 1 + 16 digits and a NUL */

struct hlc_stamp {
	uint64_t	phys;		/* milliseconds since the epoch */
	uint32_t	logical;
	uint64_t	node;
};

struct hlc {
	struct hlc_stamp	last;
	uint64_t		node;
};

/* Wall clock in milliseconds (CLOCK_REALTIME). */
uint64_t	hlc_wall_ms(void);
void		hlc_init(struct hlc *c, uint64_t node);
/* A fresh local stamp, strictly greater than every stamp seen so far. */
struct hlc_stamp hlc_now(struct hlc *c, uint64_t wall_ms);
/*
 * Fold in a remote stamp (its physical part capped at wall + 600 s) and
 * return a stamp greater than both the last local one and the remote.
 * Returns true when the remote was more than 600 s ahead (a strike).
 */
bool		hlc_update(struct hlc *c, const struct hlc_stamp *remote,
		    uint64_t wall_ms, struct hlc_stamp *out);
/* <0, 0, >0 as a is before, equal to or after b. */
int		hlc_cmp(const struct hlc_stamp *a, const struct hlc_stamp *b);
/* CBOR: [phys, logical, node]. */
void		hlc_encode(struct dcbor_buf *b, const struct hlc_stamp *s);
int		hlc_parse(struct dcbor_rd *rd, struct hlc_stamp *s);
/* Text: "phys.logical.node" with node in 16 hex digits. */
void		hlc_format(const struct hlc_stamp *s, char *buf, size_t len);
int		hlc_parse_text(const char *text, struct hlc_stamp *s);

#endif

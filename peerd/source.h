/*
 * source.h: a linked peer as a source of one blob (source.c; the structs
 * are content.h's).
 */
#ifndef SOURCE_H
#define SOURCE_H

#include <stdbool.h>
#include <stdint.h>

struct content;
struct member;
struct source;

struct source	*source_find(struct content *c, const struct member *m);
void		 source_alloc(const struct content *c, struct source *s);
struct source	*source_get(struct content *c, struct member *m);
/* Forget the requests in flight to s (its link went down, or timeouts). */
void		 source_cancel(struct content *c, struct source *s);
bool		 source_take_req(struct content *c, struct source *s,
		    uint32_t piece);
bool		 source_has_req(const struct source *s, uint32_t piece);
/* Replace what s is known to hold, keeping the availability counts. */
void		 source_set_bits(struct content *c, struct source *s,
		    const uint8_t *bits);
void		 source_add_piece(struct content *c, struct source *s,
		    uint32_t i);
void		 source_drop_piece(struct content *c, struct source *s,
		    uint32_t i);
/* True if s holds a needed piece that no other known source holds. */
bool		 source_is_sole(const struct content *c,
		    const struct source *s);
const char	*source_name(const struct source *s);

#endif

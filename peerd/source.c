/*
 * source.c: the content swarm's sources (content.h): a linked peer as the
 * holder of a blob's pieces (its bitfield, the holder counts per piece)
 * and as the target of our requests in flight.
 */
#include <stdlib.h>
#include <string.h>

#include "content.h"
#include "member.h"
#include "pstore.h"
#include "source.h"
#include "xmalloc.h"

/* The source for m in c, or NULL. */
struct source *
source_find(struct content *c, const struct member *m)
{
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->src[i]->m == m)
			return c->src[i];
	return NULL;
}

/* Size s's bitfields for c's manifest. */
void
source_alloc(const struct content *c, struct source *s)
{
	s->bits = xcalloc(1, nbytes_of(c));
	s->no_defl = xcalloc(1, nbytes_of(c));
	s->defl_from = xcalloc(1, nbytes_of(c));
}

/* The source for m in c, made if new. */
struct source *
source_get(struct content *c, struct member *m)
{
	struct source *s = source_find(c, m);

	if (s != NULL)
		return s;
	s = xcalloc(1, sizeof(*s));
	s->m = m;
	if (c->m != NULL)
		source_alloc(c, s);
	c->src = xreallocarray(c->src, c->nsrc + 1, sizeof(*c->src));
	c->src[c->nsrc++] = s;
	return s;
}

/* Forget the requests in flight to s (its link went down, or timeouts). */
void
source_cancel(struct content *c, struct source *s)
{
	for (uint32_t i = 0; i < s->inflight; i++)
		if (c->pin != NULL && c->pin[s->reqs[i].piece] > 0)
			c->pin[s->reqs[i].piece]--;
	s->inflight = 0;
}

/* Forget s's request for piece: true if there was one. */
bool
source_take_req(struct content *c, struct source *s, uint32_t piece)
{
	for (uint32_t i = 0; i < s->inflight; i++)
		if (s->reqs[i].piece == piece) {
			s->reqs[i] = s->reqs[--s->inflight];
			if (c->pin[piece] > 0)
				c->pin[piece]--;
			return true;
		}
	return false;
}

/* True if piece is in flight to s. */
bool
source_has_req(const struct source *s, uint32_t piece)
{
	for (uint32_t i = 0; i < s->inflight; i++)
		if (s->reqs[i].piece == piece)
			return true;
	return false;
}

/* Replace what s is known to hold, keeping the availability counts. */
void
source_set_bits(struct content *c, struct source *s, const uint8_t *bits)
{
	s->nhave = 0;
	for (uint32_t i = 0; i < c->m->npieces; i++) {
		bool was = bit_get(s->bits, i), now = bit_get(bits, i);

		if (was && !now)
			c->avail[i]--;
		else if (!was && now)
			c->avail[i]++;
		s->nhave += now;
	}
	memcpy(s->bits, bits, nbytes_of(c));
}

/* s holds piece i now. */
void
source_add_piece(struct content *c, struct source *s, uint32_t i)
{
	if (bit_get(s->bits, i))
		return;
	bit_set(s->bits, i);
	s->nhave++;
	c->avail[i]++;
}

/* s no longer holds piece i. */
void
source_drop_piece(struct content *c, struct source *s, uint32_t i)
{
	if (!bit_get(s->bits, i))
		return;
	bit_clear(s->bits, i);
	s->nhave--;
	c->avail[i]--;
}

/* True if s holds a needed piece that no other known source holds. */
bool
source_is_sole(const struct content *c, const struct source *s)
{
	if (c->state != CS_FETCHING || s->bits == NULL)
		return false;
	for (uint32_t i = 0; i < c->m->npieces; i++)
		if (c->avail[i] == 1 && bit_get(s->bits, i) &&
		    !pstore_has(c->ps, i))
			return true;
	return false;
}

/* s's name for logs and reports (its peer id if it has none). */
const char *
source_name(const struct source *s)
{
	return s->m->name[0] ? s->m->name : s->m->peer_id;
}

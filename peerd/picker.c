/*
 * picker.c: the content swarm's piece scheduler (docs/protocol.md "The
 * fetch algorithm", "The source policy"): which missing piece to ask for
 * next, rarest first or at random, from which source, within each
 * source's slots; the endgame's second requests.  Its one output is the
 * want function picker_init was given (swarm.c's swarm_want sends the
 * BLOCK_WANT).
 */
#include <stdlib.h>

#include <openssl/rand.h>

#include "clock.h"
#include "content.h"
#include "member.h"
#include "pstore.h"
#include "rng.h"
#include "picker.h"
#include "source.h"
#include "xmalloc.h"

static uint64_t		 rng_state;
static picker_want_fn	 want_fn;

void
picker_init(picker_want_fn want)
{
	want_fn = want;
	RAND_bytes((unsigned char *)&rng_state, sizeof(rng_state));
}

/* A pseudo-random number below n (0 if n is 0). */
uint32_t
picker_rand(uint32_t n)
{
	return n ? (uint32_t)(rng_splitmix64(&rng_state) % n) : 0;
}

/* Slots for s: a seed gets half while other fetchers can serve too. */
static uint32_t
slots_of(const struct content *c, const struct source *s)
{
	if (s->nhave == c->m->npieces && c->peers_serving)
		return c->limit > 3 ? c->limit / 4 : 1;
	return c->limit;
}

static bool
usable(const struct content *c, const struct source *s, uint64_t now)
{
	return s->bits != NULL && s->m->link != NULL &&
	    now >= s->backoff_until && s->inflight < slots_of(c, s);
}

/*
 * The source to ask for piece p: among holders with a free slot, those
 * that never sent a bad piece (a bad one only if no good holder is
 * linked), then not seeds (holders of everything) before seeds, so the
 * seeder's share falls as fetchers serve each other, then the fewest in
 * flight, then at random.  In the endgame, skip holders already asked.
 */
static struct source *
pick(struct content *c, uint32_t p, uint64_t now, bool endgame)
{
	struct source *best = NULL;
	uint32_t best_rank = UINT32_MAX, ties = 0;
	bool good = false;

	for (size_t i = 0; i < c->nsrc; i++) {
		const struct source *s = c->src[i];

		if (s->bits != NULL && s->bad == 0 && s->m->link != NULL &&
		    bit_get(s->bits, p)) {
			good = true;
			break;
		}
	}
	for (size_t i = 0; i < c->nsrc; i++) {
		struct source *s = c->src[i];
		uint32_t rank;

		if (!usable(c, s, now) || !bit_get(s->bits, p) ||
		    (s->bad > 0 && good) ||
		    (bit_get(s->defl_from, p) && now < c->defer_until[p]) ||
		    (endgame && source_has_req(s, p)))
			continue;
		rank = (s->nhave == c->m->npieces ? 1u << 16 : 0) + s->inflight;
		if (rank < best_rank) {
			best = s;
			best_rank = rank;
			ties = 1;
		} else if (rank == best_rank && picker_rand(++ties) == 0)
			best = s;
	}
	return best;
}

/*
 * The missing pieces nobody is asked for, rarest first (counting sort by
 * holders, from a random rotation so fetchers spread over equally rare
 * pieces), or in random order.  Returns how many; *unasked counts those
 * with no holder too.
 */
static uint32_t
missing_order(struct content *c, uint32_t *unasked)
{
	uint32_t n = c->m->npieces, k = 0, maxa = 0, rot = picker_rand(n);
	uint32_t *cnt;

	*unasked = 0;
	for (uint32_t j = 0; j < n; j++) {
		if (pstore_has(c->ps, j) || c->pin[j] > 0)
			continue;
		(*unasked)++;
		if (c->avail[j] > maxa)
			maxa = c->avail[j];
	}
	if (c->random_order) {
		for (uint32_t j = 0; j < n; j++)
			if (!pstore_has(c->ps, j) && c->pin[j] == 0 &&
			    c->avail[j] > 0)
				c->order[k++] = j;
		for (uint32_t j = k; j > 1; j--) {
			uint32_t r = picker_rand(j), t = c->order[j - 1];

			c->order[j - 1] = c->order[r];
			c->order[r] = t;
		}
		return k;
	}
	cnt = xcalloc(maxa + 2, sizeof(*cnt));
	for (uint32_t j = 0; j < n; j++)
		if (!pstore_has(c->ps, j) && c->pin[j] == 0 && c->avail[j] > 0)
			cnt[c->avail[j] + 1]++;
	for (uint32_t a = 1; a <= maxa + 1; a++)
		cnt[a] += cnt[a - 1];
	for (uint32_t t = 0; t < n; t++) {
		uint32_t j = (rot + t) % n;

		if (!pstore_has(c->ps, j) && c->pin[j] == 0 && c->avail[j] > 0)
			c->order[cnt[c->avail[j]]++] = j;
	}
	k = cnt[maxa];
	free(cnt);
	return k;
}

/* Ask sources for missing pieces while c has free slots. */
void
picker_pump(struct content *c)
{
	uint64_t now = clock_mono_ms();
	uint32_t slots = 0, n, unasked, rot;

	if (c->state != CS_FETCHING)
		return;
	c->peers_serving = false;
	for (size_t i = 0; i < c->nsrc; i++) {
		const struct source *s = c->src[i];

		if (s->bits != NULL && s->m->link != NULL && s->nhave > 0 &&
		    s->nhave < c->m->npieces && s->bad == 0)
			c->peers_serving = true;
	}
	for (size_t i = 0; i < c->nsrc; i++)
		if (usable(c, c->src[i], now))
			slots += slots_of(c, c->src[i]) - c->src[i]->inflight;
	if (slots == 0)
		return;
	n = missing_order(c, &unasked);
	for (uint32_t k = 0; k < n && slots > 0; k++) {
		struct source *s = pick(c, c->order[k], now, false);

		if (s != NULL && want_fn(c, s, c->order[k], now))
			slots--;
	}
	if (unasked > 0 || slots == 0)
		return;
	/*
	 * Endgame: every missing piece is asked for; ask a second holder for
	 * those with one request, so one slow source cannot hold the tail.
	 */
	rot = picker_rand(c->m->npieces);
	for (uint32_t t = 0; t < c->m->npieces && slots > 0; t++) {
		uint32_t j = (rot + t) % c->m->npieces;
		struct source *s;

		if (pstore_has(c->ps, j) || c->pin[j] != 1)
			continue;
		if ((s = pick(c, j, now, true)) != NULL &&
		    want_fn(c, s, j, now))
			slots--;
	}
}

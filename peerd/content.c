/*
 * content.c: the content swarm's blobs (content.h): the list of them, each
 * one's life from manifest to complete, the control requests waiting on
 * it, and its report.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "content.h"
#include "hex.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "pstore.h"
#include "source.h"
#include "trace.h"
#include "xmalloc.h"

static const char *const cstate_names[] = { "manifest", "fetching",
    "complete" };

static TAILQ_HEAD(, content) contents = TAILQ_HEAD_INITIALIZER(contents);
static char		 content_dir[PATH_MAX];

void
content_init(void)
{
	snprintf(content_dir, sizeof(content_dir), "%s/content", pd->conf.dir);
	if (mkdir(content_dir, 0700) == -1 && errno != EEXIST)
		log_warn("swarm: mkdir %s", content_dir);
}

const char *
content_root(void)
{
	return content_dir;
}

struct content *
content_first(void)
{
	return TAILQ_FIRST(&contents);
}

/* The blob with this cid, or NULL. */
struct content *
content_find(const uint8_t cid[CID_LEN])
{
	struct content *c;

	CONTENT_FOREACH(c)
		if (memcmp(c->cid, cid, CID_LEN) == 0)
			return c;
	return NULL;
}

/* A new blob waiting for its manifest, at the tail of the list. */
struct content *
content_new(const uint8_t cid[CID_LEN])
{
	struct content *c = xcalloc(1, sizeof(*c));

	memcpy(c->cid, cid, CID_LEN);
	hex_encode(cid, CID_LEN, c->hex);
	c->state = CS_MANIFEST;
	c->limit = SWARM_INFLIGHT_DEFAULT;
	c->timeout_ms = SWARM_TIMEOUT_MS;
	c->stall_ms = SWARM_STALL_MS;
	c->start_us = clock_mono_us();
	c->last_progress_ms = c->last_log_ms = c->last_flush_ms =
	    clock_mono_ms();
	TAILQ_INSERT_TAIL(&contents, c, entry);
	return c;
}

/* Wait for c's manifest (complete: the whole blob), answered by done. */
void
content_wait(struct content *c, swarm_done_fn done, void *arg, bool complete,
    uint64_t timeout_ms)
{
	struct waiter *w = xcalloc(1, sizeof(*w));

	w->done = done;
	w->arg = arg;
	w->complete = complete;
	w->deadline_ms = clock_mono_ms() + timeout_ms;
	w->next = c->waiters;
	c->waiters = w;
	if (c->state == CS_MANIFEST && w->deadline_ms > c->manifest_deadline_ms)
		c->manifest_deadline_ms = w->deadline_ms;
}

/* Answer the waiters that are satisfied now (all of them with err). */
void
content_answer(struct content *c, enum swarm_err err, const char *msg)
{
	struct waiter **wp = &c->waiters, *w;
	uint64_t now = clock_mono_ms();
	char late[160];

	while ((w = *wp) != NULL) {
		bool done = c->state == CS_COMPLETE ||
		    (c->state == CS_FETCHING && !w->complete);

		if (msg != NULL)
			w->done(w->arg, err, msg, NULL);
		else if (done)
			w->done(w->arg, SWARM_OK, NULL, content_json(c, true));
		else if (now >= w->deadline_ms) {
			snprintf(late, sizeof(late), "fetch %.12s: %s after "
			    "the deadline (%u of %u pieces)", c->hex,
			    c->state == CS_MANIFEST ? "no manifest" :
			    "not complete", c->ps ? pstore_count(c->ps) : 0,
			    c->m ? c->m->npieces : 0);
			w->done(w->arg, SWARM_ETIMEOUT, late, NULL);
		} else {
			wp = &w->next;
			continue;
		}
		*wp = w->next;
		free(w);
	}
}

/* Answer c's waiters (shutting down), close its store and free it. */
void
content_free(struct content *c)
{
	TAILQ_REMOVE(&contents, c, entry);
	content_answer(c, SWARM_EINTERNAL, "the peer is shutting down");
	for (size_t i = 0; i < c->nsrc; i++) {
		free(c->src[i]->bits);
		free(c->src[i]->no_defl);
		free(c->src[i]->defl_from);
		free(c->src[i]);
	}
	free(c->src);
	pstore_close(c->ps);
	free(c->avail);
	free(c->pin);
	free(c->served);
	free(c->defer_until);
	free(c->order);
	free(c->adds);
	free(c);
}

/* c's store directory. */
void
content_dir_of(const struct content *c, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", content_dir, c->hex);
}

/* c is complete: flush, cancel requests, answer waiters. */
void
content_done(struct content *c)
{
	c->state = CS_COMPLETE;
	c->end_us = clock_mono_us();
	if (pstore_flush(c->ps) == -1)
		log_warn("swarm %.12s: flush the piece map", c->hex);
	/*
	 * The whole blob's SHA-256 is not needed to trust it (every piece
	 * was checked against the manifest): it is computed when a report
	 * first asks (content_json), off the transfer's clock.
	 */
	for (size_t i = 0; i < c->nsrc; i++)
		source_cancel(c, c->src[i]);
	log_info("swarm %.12s: complete, %u pieces (%llu fetched this run) in "
	    "%.3f s", c->hex, c->m->npieces,
	    (unsigned long long)c->pieces_fetched,
	    (double)(c->end_us - c->start_us) / 1e6);
	trace_add("swarm", "%.12s complete: %u pieces, %llu fetched", c->hex,
	    c->m->npieces, (unsigned long long)c->pieces_fetched);
	content_answer(c, SWARM_EINTERNAL, NULL);
}

/* The store is open: size the scheduler's tables. */
void
content_attach(struct content *c, struct pstore *ps)
{
	c->ps = ps;
	c->m = pstore_manifest(ps);
	c->avail = xcalloc(c->m->npieces, sizeof(*c->avail));
	c->pin = xcalloc(c->m->npieces, sizeof(*c->pin));
	c->order = xcalloc(c->m->npieces, sizeof(*c->order));
	c->served = xcalloc(1, nbytes_of(c));
	c->defer_until = xcalloc(c->m->npieces, sizeof(*c->defer_until));
	for (size_t i = 0; i < c->nsrc; i++)
		source_alloc(c, c->src[i]);
	c->at_start = pstore_count(ps);
	c->state = pstore_complete(ps) ? CS_COMPLETE : CS_FETCHING;
	if (c->state == CS_FETCHING && pd->conf.direct_io &&
	    pstore_direct(ps, SWARM_CACHE_BYTES) == -1)
		log_warn("swarm %.12s: --direct-io refused here; the store "
		    "writes through the page cache", c->hex);
	c->last_progress_ms = clock_mono_ms();
}

/*
 * c as the content command reports it; want_sha hashes a complete blob
 * whose SHA-256 is not known yet.
 */
json_t *
content_json(struct content *c, bool want_sha)
{
	json_t *j, *from = json_object(), *served = json_object();
	json_t *bad = json_object(), *srcs = json_object();
	char sha[2 * MANIFEST_HASH_LEN + 1];
	uint64_t end = c->end_us ? c->end_us : clock_mono_us();
	uint64_t bytes_served = 0, deflected = 0;

	for (size_t i = 0; i < c->nsrc; i++) {
		struct source *s = c->src[i];
		const char *nm = source_name(s);

		bytes_served += s->bytes_to;
		deflected += s->deflected;
		json_object_set_new(from, nm, json_integer((json_int_t)
		    s->bytes_from));
		json_object_set_new(served, nm, json_integer((json_int_t)
		    s->bytes_to));
		json_object_set_new(bad, nm, json_integer((json_int_t)s->bad));
		json_object_set_new(srcs, nm, json_pack("{s:I, s:I, s:I, s:I, "
		    "s:I, s:I, s:I, s:I, s:I, s:b, s:I}",
		    "bytes_from", (json_int_t)s->bytes_from,
		    "pieces_from", (json_int_t)s->pieces_from,
		    "bytes_to", (json_int_t)s->bytes_to,
		    "pieces_to", (json_int_t)s->pieces_to,
		    "bad", (json_int_t)s->bad,
		    "timeouts", (json_int_t)s->timeouts,
		    "refused", (json_int_t)s->refused,
		    "deflected", (json_int_t)s->deflected,
		    "holds", (json_int_t)s->nhave,
		    "linked", s->m->link != NULL,
		    "in_flight", (json_int_t)s->inflight));
	}
	j = json_pack("{s:s, s:s, s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:I}",
	    "cid", c->hex, "state", cstate_names[c->state],
	    "role", c->publisher ? "publisher" : "fetcher",
	    "complete", c->state == CS_COMPLETE, "resumed", c->resumed,
	    "size", (json_int_t)(c->m ? c->m->size : 0),
	    "piece_size", (json_int_t)(c->m ? c->m->piece_size : 0),
	    "pieces", (json_int_t)(c->m ? c->m->npieces : 0),
	    "verified", (json_int_t)(c->ps ? pstore_count(c->ps) : 0),
	    "pieces_at_start", (json_int_t)c->at_start);
	json_object_set_new(j, "direct_io", json_boolean(c->ps != NULL &&
	    pstore_is_direct(c->ps)));
	json_object_set_new(j, "pieces_fetched",
	    json_integer((json_int_t)c->pieces_fetched));
	json_object_set_new(j, "bytes_fetched",
	    json_integer((json_int_t)c->bytes_fetched));
	json_object_set_new(j, "bytes_served",
	    json_integer((json_int_t)bytes_served));
	json_object_set_new(j, "duplicates", json_integer((json_int_t)c->dups));
	json_object_set_new(j, "bad_pieces", json_integer((json_int_t)c->bad));
	json_object_set_new(j, "truncated",
	    json_integer((json_int_t)c->truncated));
	json_object_set_new(j, "timeouts",
	    json_integer((json_int_t)c->timeouts));
	json_object_set_new(j, "refused", json_integer((json_int_t)c->refused));
	json_object_set_new(j, "deflected", json_integer((json_int_t)deflected));
	json_object_set_new(j, "deflections",
	    json_integer((json_int_t)c->deflections));
	json_object_set_new(j, "stalls", json_integer((json_int_t)c->stalls));
	json_object_set_new(j, "start_us", json_integer((json_int_t)c->start_us));
	json_object_set_new(j, "end_us", c->end_us ?
	    json_integer((json_int_t)c->end_us) : json_null());
	json_object_set_new(j, "seconds", json_real((double)(end -
	    c->start_us) / 1e6));
	if (want_sha && !c->have_sha && c->state == CS_COMPLETE &&
	    pstore_sha256(c->ps, c->sha) == 0)
		c->have_sha = true;
	if (c->have_sha) {
		hex_encode(c->sha, sizeof(c->sha), sha);
		json_object_set_new(j, "sha256", json_string(sha));
	} else
		json_object_set_new(j, "sha256", json_null());
	json_object_set_new(j, "from", from);
	json_object_set_new(j, "served", served);
	json_object_set_new(j, "bad", bad);
	json_object_set_new(j, "sources", srcs);
	return j;
}

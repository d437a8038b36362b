/*
 * fuzz_swarm.c: libFuzzer target for the content swarm's wire bodies
 * (swarm_recv: QUERY, QUERY_HIT, HAVE, BLOCK_WANT and BLOCK, the last with
 * its detached payload) and what they drive behind the parser: the
 * scheduler, serving from the store or the --direct-io cache, refusals and
 * deflections, piece verification and the store's writes.
 *
 * Behind it are two blobs in a temporary peer directory, opened by
 * swarm_init as a restarted peer would: blob A complete (this peer serves
 * it), blob B with its first piece only (this peer is fetching it, and the
 * sender is a source).  The senders are two members whose links are
 * stood in for (below), so what the peer answers is built and dropped.
 * Each input starts from that state: the swarm is torn down and B's piece
 * map put back after every input.
 *
 * Input: byte 0: bit 0 runs the fetch under --direct-io; bit 1 makes every
 * link's output queue look full (wants are refused busy); bit 2 makes every
 * send fail (a link that goes down as the answer is queued).  Then frames, each a header byte (bits
 * 0-2: 0 QUERY, 1 QUERY_HIT, 2 HAVE, 3 BLOCK_WANT, 4 BLOCK; bit 3: a
 * payload follows; bit 4: from the second member), the body's length (u16
 * big-endian), the payload's length if any (u16), the body, the payload.
 * A frame the peer refuses (-1: the link would close) ends the input.
 *
 * Seeds: FUZZ_SEED_DIR=tests/fuzz/seeds/fuzz_swarm build/fuzz/fuzz_swarm
 * writes bodies for every kind about both blobs (right and wrong pieces,
 * refusals) with the real blobs' cids and hashes.  FUZZ_ECHO=1 prints what
 * each frame did.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "hex.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "manifest.h"
#include "member.h"
#include "peerd.h"
#include "pstore.h"
#include "stats.h"
#include "swarm.h"
#include "trace.h"
#include "view.h"

#include "fuzz_daemon.h"
#include "../unit/fake_link.h"

#define PIECE		4096
#define A_SIZE		(3 * PIECE + 1000)
#define B_SIZE		(4 * PIECE + 77)
#define F_DIRECT	0x01
#define F_BUSY		0x02
#define F_DOWN		0x04
#define H_DATA		0x08
#define H_OTHER		0x10

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct peerd		*pd;
static struct peerd	 fz_peerd;
static struct identity	 remote, other;
static char		 fz_dir[] = "/tmp/fuzz_swarm.XXXXXX";
static char		 b_map[512];		/* blob B's piece map */
static uint8_t		*b_map_saved;
static size_t		 b_map_len;
static int		 fz_echo;

static const uint32_t	 kinds[5] = { FRAME_QUERY, FRAME_QUERY_HIT,
    FRAME_HAVE, FRAME_BLOCK_WANT, FRAME_BLOCK };

struct blob {
	uint8_t		*bytes;
	size_t		 size;
	struct manifest	 m;
	struct dcbor_buf enc;
	uint8_t		 cid[MANIFEST_HASH_LEN];
};
static struct blob	 blob_a, blob_b;

/*
 * The link layer is tests/unit/fake_link.h's, with every member UP: the
 * output is counted and dropped, so wants are served (from the store's
 * file or the --direct-io cache), unless the input says the queues are
 * full (fake_outq) or the links down; only BLOCK may carry a payload.
 * Below, the view, which the swarm's modules reference.
 */
int
view_add_seed(const char *hostport)
{
	(void)hostport;
	return -1;
}

size_t
view_active_count(void)
{
	return 1;
}

size_t
view_passive_count(void)
{
	return 0;
}

json_t *
view_json(void)
{
	return json_object();
}

void
view_set_drop_cost(view_cost_fn fn)
{
	(void)fn;
}

static void
blob_make(struct blob *b, size_t size, uint8_t salt)
{
	b->size = size;
	b->bytes = malloc(size);
	for (size_t i = 0; i < size; i++)
		b->bytes[i] = (uint8_t)(i * 131 + salt + (i >> 9));
	if (manifest_init(&b->m, size, PIECE) == -1)
		fatalx("fuzz_swarm: manifest");
	for (uint32_t i = 0; i < b->m.npieces; i++)
		manifest_sha256(b->bytes + manifest_piece_off(&b->m, i),
		    manifest_piece_len(&b->m, i), manifest_hash(&b->m, i));
	dcbor_buf_init(&b->enc);
	manifest_encode(&b->m, &b->enc);
	manifest_cid(b->enc.data, b->enc.len, b->cid);
}

/* The store of b under the peer's content directory, with pieces [0, n). */
static void
blob_store(const struct blob *b, uint32_t n, char *map, size_t maplen)
{
	char dir[512], hexid[MANIFEST_CID_HEX], err[256];
	struct pstore *ps;

	hex_encode(b->cid, MANIFEST_HASH_LEN, hexid);
	snprintf(dir, sizeof(dir), "%s/content/%s", fz_dir, hexid);
	if ((ps = pstore_open(dir, b->enc.data, b->enc.len, err,
	    sizeof(err))) == NULL)
		fatalx("fuzz_swarm: %s", err);
	for (uint32_t i = 0; i < n; i++)
		if (pstore_put(ps, i, b->bytes + manifest_piece_off(&b->m, i),
		    manifest_piece_len(&b->m, i)) != PSTORE_OK)
			fatalx("fuzz_swarm: put %u", i);
	pstore_close(ps);
	if (map != NULL)
		snprintf(map, maplen, "%s/%s", dir, PSTORE_HAVE);
}

/* ---- seeds ---------------------------------------------------------------- */

static void
put_cid(struct dcbor_buf *w, const struct blob *b)
{
	dcbor_put_cstr(w, "cid");
	dcbor_put_bytes(w, b->cid, MANIFEST_HASH_LEN);
}

/* Append one frame record (header, lengths, body, payload) to out. */
static void
rec(struct dcbor_buf *out, unsigned kind, const struct dcbor_buf *body,
    const uint8_t *data, size_t dlen)
{
	uint8_t h[5];
	size_t n = 0;

	h[n++] = (uint8_t)(kind | (data != NULL ? H_DATA : 0));
	h[n++] = (uint8_t)(body->len >> 8);
	h[n++] = (uint8_t)body->len;
	if (data != NULL) {
		h[n++] = (uint8_t)(dlen >> 8);
		h[n++] = (uint8_t)dlen;
	}
	dcbor_put_raw(out, h, n);
	dcbor_put_raw(out, body->data, body->len);
	if (data != NULL)
		dcbor_put_raw(out, data, dlen);
}

static void
body_piece(struct dcbor_buf *w, const struct blob *b, uint32_t i,
    const char *reason)
{
	dcbor_buf_reset(w);
	dcbor_put_map(w, reason != NULL || b == &blob_b ? 3 : 2);
	put_cid(w, b);
	if (reason == NULL && b == &blob_b) {
		dcbor_put_cstr(w, "len");
		dcbor_put_uint(w, manifest_piece_len(&b->m, i));
	}
	dcbor_put_cstr(w, "piece");
	dcbor_put_uint(w, i);
	if (reason != NULL) {
		dcbor_put_cstr(w, "reason");
		dcbor_put_cstr(w, reason);
	}
}

static void
gen_seeds(const char *dir)
{
	struct dcbor_buf w, r;
	const struct blob *both[2] = { &blob_a, &blob_b };
	uint8_t bits[1], bad[PIECE];
	uint32_t last = blob_b.m.npieces - 1;

	dcbor_buf_init(&w);
	dcbor_buf_init(&r);
	for (int k = 0; k < 2; k++) {
		const struct blob *b = both[k];
		char nm[64];

		/* QUERY, and a QUERY_HIT with the manifest and without. */
		dcbor_buf_reset(&w);
		dcbor_put_map(&w, 1);
		put_cid(&w, b);
		dcbor_buf_reset(&r);
		rec(&r, 0, &w, NULL, 0);
		snprintf(nm, sizeof(nm), "query_%c", "ab"[k]);
		fuzz_seed_write(dir, nm, 0, &r);
		dcbor_buf_reset(&w);
		dcbor_put_map(&w, 2);
		put_cid(&w, b);
		dcbor_put_cstr(&w, "manifest");
		dcbor_put_bytes(&w, b->enc.data, b->enc.len);
		dcbor_buf_reset(&r);
		rec(&r, 1, &w, NULL, 0);
		snprintf(nm, sizeof(nm), "hit_%c", "ab"[k]);
		fuzz_seed_write(dir, nm, 0, &r);

		/* HAVE: the whole bitfield with a reply asked, then adds. */
		bits[0] = 0xf0 & (uint8_t)(0xff << (8 - b->m.npieces));
		dcbor_buf_reset(&w);
		dcbor_put_map(&w, 3);
		dcbor_put_cstr(&w, "bits");
		dcbor_put_bytes(&w, bits, 1);
		put_cid(&w, b);
		dcbor_put_cstr(&w, "reply");
		dcbor_put_bool(&w, true);
		dcbor_buf_reset(&r);
		rec(&r, 2, &w, NULL, 0);
		dcbor_buf_reset(&w);
		dcbor_put_map(&w, 2);
		dcbor_put_cstr(&w, "add");
		dcbor_put_array(&w, 2);
		dcbor_put_uint(&w, 0);
		dcbor_put_uint(&w, b->m.npieces - 1);
		put_cid(&w, b);
		rec(&r, 2, &w, NULL, 0);
		snprintf(nm, sizeof(nm), "have_%c", "ab"[k]);
		fuzz_seed_write(dir, nm, 0, &r);

		/* Wants: held, then not held, twice (a seed deflects). */
		dcbor_buf_reset(&r);
		for (uint32_t i = 0; i < 3; i++) {
			dcbor_buf_reset(&w);
			dcbor_put_map(&w, 2);
			put_cid(&w, b);
			dcbor_put_cstr(&w, "piece");
			dcbor_put_uint(&w, i % 2);
			rec(&r, 3, &w, NULL, 0);
		}
		snprintf(nm, sizeof(nm), "want_%c", "ab"[k]);
		fuzz_seed_write(dir, nm, 0, &r);
	}

	/*
	 * Blob B, being fetched: the sender's bits (so it is a source), a
	 * right piece, a wrong one, the short last piece, then a want for
	 * the piece just stored (served from the cache under --direct-io).
	 */
	dcbor_buf_reset(&r);
	dcbor_buf_reset(&w);
	dcbor_put_map(&w, 2);
	dcbor_put_cstr(&w, "bits");
	bits[0] = 0xf8;
	dcbor_put_bytes(&w, bits, 1);
	put_cid(&w, &blob_b);
	rec(&r, 2, &w, NULL, 0);
	body_piece(&w, &blob_b, 1, NULL);
	rec(&r, 4, &w, blob_b.bytes + PIECE, PIECE);
	memcpy(bad, blob_b.bytes + 2 * PIECE, PIECE);
	bad[100] ^= 1;
	body_piece(&w, &blob_b, 2, NULL);
	rec(&r, 4, &w, bad, PIECE);
	body_piece(&w, &blob_b, last, NULL);
	rec(&r, 4, &w, blob_b.bytes + manifest_piece_off(&blob_b.m, last),
	    manifest_piece_len(&blob_b.m, last));
	dcbor_buf_reset(&w);
	dcbor_put_map(&w, 2);
	put_cid(&w, &blob_b);
	dcbor_put_cstr(&w, "piece");
	dcbor_put_uint(&w, 1);
	rec(&r, 3, &w, NULL, 0);
	fuzz_seed_write(dir, "blocks_b", 0, &r);
	fuzz_seed_write(dir, "blocks_b_direct", F_DIRECT, &r);
	fuzz_seed_write(dir, "blocks_b_direct_down", F_DIRECT | F_DOWN, &r);

	/* A seed deflects a piece it sent to the other member, once. */
	dcbor_buf_reset(&r);
	dcbor_buf_reset(&w);
	dcbor_put_map(&w, 2);
	put_cid(&w, &blob_a);
	dcbor_put_cstr(&w, "piece");
	dcbor_put_uint(&w, 2);
	rec(&r, 3 | H_OTHER, &w, NULL, 0);
	rec(&r, 3, &w, NULL, 0);
	rec(&r, 3, &w, NULL, 0);
	fuzz_seed_write(dir, "deflect_a", 0, &r);
	fuzz_seed_write(dir, "want_a_busy", F_BUSY, &r);
	fuzz_seed_write(dir, "want_a_down", F_DOWN | F_DIRECT, &r);

	/* Refusals of each reason, and a piece one byte short. */
	dcbor_buf_reset(&r);
	dcbor_buf_reset(&w);
	dcbor_put_map(&w, 2);
	dcbor_put_cstr(&w, "bits");
	dcbor_put_bytes(&w, bits, 1);
	put_cid(&w, &blob_b);
	rec(&r, 2, &w, NULL, 0);
	body_piece(&w, &blob_b, 3, "busy");
	rec(&r, 4, &w, NULL, 0);
	body_piece(&w, &blob_b, 3, "elsewhere");
	rec(&r, 4, &w, NULL, 0);
	body_piece(&w, &blob_b, 3, "missing");
	rec(&r, 4, &w, NULL, 0);
	body_piece(&w, &blob_b, 3, NULL);
	rec(&r, 4, &w, blob_b.bytes + 3 * PIECE, PIECE - 1);
	fuzz_seed_write(dir, "refusals_b", 0, &r);
	dcbor_buf_free(&w);
	dcbor_buf_free(&r);
}

static uint8_t *
file_read(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *p = malloc(1 << 16);

	if (fp == NULL)
		fatal("fuzz_swarm: %s", path);
	*len = fread(p, 1, 1 << 16, fp);
	fclose(fp);
	return p;
}

static void
file_write(const char *path, const uint8_t *p, size_t len)
{
	FILE *fp = fopen(path, "wb");

	if (fp == NULL || fwrite(p, 1, len, fp) != len || fclose(fp) != 0)
		fatal("fuzz_swarm: %s", path);
}

/* ---- the target ----------------------------------------------------------- */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t idseed[IDENTITY_SEED_LEN];
	char path[512];
	const char *dir;

	(void)argc;
	(void)argv;
	pd = &fz_peerd;
	conf_defaults(&pd->conf);
	fake_link_all_up = true;
	fake_data_kind = FRAME_BLOCK;
	if (mkdtemp(fz_dir) == NULL)
		fatal("fuzz_swarm: mkdtemp");
	pd->conf.name = "fuzz";
	pd->conf.dir = fz_dir;
	pd->conf.control = "/nonexistent/control.sock";
	pd->conf.log_level = "error";
	pd->conf.trace_events = 1024;
	log_init("fuzz_swarm", LOG_LVL_ERROR, NULL);
	memset(idseed, 0x42, sizeof(idseed));
	if (identity_from_seed(&pd->ident, idseed) == -1)
		fatalx("fuzz_swarm: identity");
	memset(idseed, 0x52, sizeof(idseed));
	if (identity_from_seed(&remote, idseed) == -1)
		fatalx("fuzz_swarm: remote identity");
	memset(idseed, 0x62, sizeof(idseed));
	if (identity_from_seed(&other, idseed) == -1)
		fatalx("fuzz_swarm: other identity");
	pd->start_us = clock_mono_us();
	if ((pd->base = event_base_new()) == NULL)
		fatalx("fuzz_swarm: event_base_new");
	trace_init(pd->conf.trace_events);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	fz_echo = getenv("FUZZ_ECHO") != NULL;

	blob_make(&blob_a, A_SIZE, 1);
	blob_make(&blob_b, B_SIZE, 2);
	snprintf(path, sizeof(path), "%s/content", fz_dir);
	if (mkdir(path, 0700) == -1)
		fatal("fuzz_swarm: %s", path);
	blob_store(&blob_a, blob_a.m.npieces, NULL, 0);
	blob_store(&blob_b, 1, b_map, sizeof(b_map));
	b_map_saved = file_read(b_map, &b_map_len);
	if ((dir = getenv("FUZZ_SEED_DIR")) != NULL) {
		gen_seeds(dir);
		exit(0);
	}
	return 0;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct member *from[2];
	const char *why;
	int rc = 0;

	if (size < 1)
		return 0;
	pd->conf.direct_io = (data[0] & F_DIRECT) != 0;
	fake_outq = (data[0] & F_BUSY) != 0 ? SWARM_OUTQ_MAX + 1 : 0;
	fake_links_down = (data[0] & F_DOWN) != 0;
	data++;
	size--;
	stats_reset();
	from[0] = member_get(remote.id, "remote", "127.0.0.1:1");
	from[1] = member_get(other.id, "other", "127.0.0.1:2");
	swarm_init();
	while (size >= 3 && rc == 0) {
		unsigned h = data[0], kind = h & 7;
		size_t blen = be16(data + 1), dlen = 0, hl = 3;
		const uint8_t *payload = NULL;

		if (h & H_DATA) {
			if (size < 5)
				break;
			dlen = be16(data + 3);
			hl = 5;
		}
		if (kind >= 5 || size - hl < blen + dlen)
			break;
		if (h & H_DATA)
			payload = data + hl + blen;
		why = NULL;
		rc = swarm_recv(from[(h & H_OTHER) != 0], kinds[kind],
		    data + hl, blen, payload, dlen, &why);
		if (rc != 0 && (rc != -1 || why == NULL))
			abort();	/* -1 always says why the link closes */
		if (fz_echo)
			fprintf(stderr, "kind %u body %zu data %zu: rc %d%s%s; "
			    "received %llu bad %llu dup %llu served %llu "
			    "(cached %llu) deflected %llu refused %llu\n", kind,
			    blen, dlen, rc, rc ? ": " : "", rc ? why : "",
			    (unsigned long long)pd_metrics.swarm_pieces_received,
			    (unsigned long long)pd_metrics.swarm_pieces_bad,
			    (unsigned long long)pd_metrics.swarm_pieces_duplicate,
			    (unsigned long long)pd_metrics.swarm_pieces_served,
			    (unsigned long long)
			    pd_metrics.swarm_pieces_served_cached,
			    (unsigned long long)pd_metrics.swarm_deflected,
			    (unsigned long long)pd_metrics.swarm_refused);
		data += hl + blen + dlen;
		size -= hl + blen + dlen;
		/* Timers due now: the HAVE announcements of stored pieces. */
		event_base_loop(pd->base, EVLOOP_NONBLOCK);
	}

	/* Back to the starting state: nothing carries over. */
	swarm_free();
	file_write(b_map, b_map_saved, b_map_len);
	member_free_all();
	member_init();
	return 0;
}

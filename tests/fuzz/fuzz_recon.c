/*
 * fuzz_recon.c: libFuzzer target for set reconciliation's wire bodies:
 * the negentropy message (neg_reply), packed RIBLT symbols
 * (riblt_get_syms, riblt_dec_add) and the RECON_* frames as peerd's
 * recon_recv takes them, in sequences so sessions start, go on and end.
 *
 * The first input byte chooses:
 *   bits 0-1  0: the rest is a negentropy message, answered against a
 *                local set of byte 1 * 3 items drawn from byte 2;
 *             1: the rest is packed symbols, decoded against 40 local
 *                items, at most 512 symbols;
 *             2, 3: the rest is frames: [kind 0..4: NEG, SYMS, ACK,
 *                RECS, END][length, 2 bytes big-endian][body] ...
 *   bit 2     frames: the replica starts with 24 bulk entries (so
 *             snapshots, item lists and records to send are not empty)
 * Nothing may crash, leak or grow without bound; every input starts from
 * an empty replica, no session and an empty inbox (the records queued for
 * later loop turns are applied by running the loop after the frames).
 * With FUZZ_SEED_DIR=DIR the target writes seeds made by the real
 * encoders into DIR and exits:
 *   FUZZ_SEED_DIR=tests/fuzz/seeds/fuzz_recon build/fuzz/fuzz_recon
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "identity.h"
#include "log.h"
#include "member.h"
#include "neg.h"
#include "peerd.h"
#include "recon.h"
#include "replica.h"
#include "riblt.h"
#include "rng.h"
#include "stats.h"
#include "trace.h"

#include "fuzz_daemon.h"
#include "../unit/wire_stub.h"

#define F_PRELOAD	0x04
#define NPRELOAD	24
#define SEED_STAMP	1790000000000ull

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct peerd		*pd;
static struct peerd	 fz_peerd;
static struct identity	 remote, gen;

static const uint32_t	 kinds[5] = { FRAME_RECON_NEG, FRAME_RECON_SYMS,
    FRAME_RECON_ACK, FRAME_RECON_RECS, FRAME_RECON_END };

static uint64_t
mix(uint64_t *s)
{
	return rng_splitmix64(s);
}

static void
items(uint64_t *v, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		v[i] = mix(&seed);
}

static void
preload(void)
{
	char err[128];
	uint8_t id[ENTRY_ID_LEN];

	for (uint64_t i = 0; i < NPRELOAD; i++)
		if (replica_generate(&gen, i, SEED_STAMP, 100ull * 365 * 86400000,
		    "task#v1", "pad", id, err, sizeof(err)) == -1)
			fatalx("fuzz_recon: %s", err);
}

static void
frames(struct member *from, const uint8_t *p, size_t n)
{
	while (n >= 3) {
		size_t len = (size_t)p[1] << 8 | p[2];
		uint32_t kind = kinds[p[0] % 5];

		p += 3;
		n -= 3;
		if (len > n)
			len = n;
		if (recon_recv(from, kind, p, len) == -1)
			return;		/* the link would close here */
		p += len;
		n -= len;
	}
}

/* ---- seeds --------------------------------------------------------------- */

static void
put_frame(struct dcbor_buf *out, int k, const struct dcbor_buf *body)
{
	uint8_t h[3] = { (uint8_t)k, (uint8_t)(body->len >> 8),
	    (uint8_t)body->len };

	dcbor_put_raw(out, h, 3);
	dcbor_put_raw(out, body->data, body->len);
}

static void
gen_seeds(const char *dir)
{
	uint64_t v[120];
	struct neg *ng;
	struct riblt_enc *e;
	struct riblt_sym s[64];
	struct dcbor_buf b, f, msg;

	dcbor_buf_init(&b);
	dcbor_buf_init(&f);
	dcbor_buf_init(&msg);
	items(v, 120, 7);
	ng = neg_new(v, 120);
	neg_initiate(ng, &msg);
	neg_free(ng);
	fuzz_seed_write(dir, "neg_initiate", 0, &msg);
	e = riblt_enc_new(v, 40, 512);
	riblt_enc_next(e, s, 64);
	riblt_enc_free(e);
	riblt_put_syms(&b, s, 64);
	{
		struct dcbor_rd rd;
		const uint8_t *p;
		size_t len;
		struct dcbor_buf raw;

		dcbor_rd_init(&rd, b.data, b.len);
		(void)dcbor_get_bytes(&rd, &p, &len);
		dcbor_buf_init(&raw);
		dcbor_put_raw(&raw, p, len);
		fuzz_seed_write(dir, "riblt_syms", 1, &raw);
		dcbor_buf_free(&raw);
	}
	/* A NEG frame, then an END 1 and an END 2 of that session. */
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 3);
	dcbor_put_cstr(&b, "msg");
	dcbor_put_raw(&b, msg.data, msg.len);
	dcbor_put_cstr(&b, "sid");
	dcbor_put_uint(&b, 5);
	dcbor_put_cstr(&b, "want");
	dcbor_put_bytes(&b, v, 16);
	put_frame(&f, 0, &b);
	for (int step = 1; step <= 2; step++) {
		dcbor_buf_reset(&b);
		dcbor_put_map(&b, 4);
		dcbor_put_cstr(&b, "all");
		dcbor_put_bool(&b, step == 1);
		dcbor_put_cstr(&b, "sid");
		dcbor_put_uint(&b, 5);
		dcbor_put_cstr(&b, "step");
		dcbor_put_uint(&b, (uint64_t)step);
		dcbor_put_cstr(&b, "want");
		dcbor_put_bytes(&b, v, 8);
		put_frame(&f, 4, &b);
	}
	fuzz_seed_write(dir, "frames_neg", 2 | F_PRELOAD, &f);
	/* SYMS from 0, an ACK, RECS with nothing, SYMS going on. */
	dcbor_buf_reset(&f);
	for (int k = 0; k < 2; k++) {
		dcbor_buf_reset(&b);
		dcbor_put_map(&b, 4);
		dcbor_put_cstr(&b, "n");
		dcbor_put_uint(&b, (uint64_t)(k * 64));
		dcbor_put_cstr(&b, "sid");
		dcbor_put_uint(&b, 9);
		dcbor_put_cstr(&b, "size");
		dcbor_put_uint(&b, 40);
		dcbor_put_cstr(&b, "syms");
		riblt_put_syms(&b, s, 64);
		put_frame(&f, 1, &b);
		dcbor_buf_reset(&b);
		dcbor_put_map(&b, 2);
		dcbor_put_cstr(&b, "n");
		dcbor_put_uint(&b, 64);
		dcbor_put_cstr(&b, "sid");
		dcbor_put_uint(&b, 9);
		put_frame(&f, 2, &b);
		dcbor_buf_reset(&b);
		dcbor_put_map(&b, 2);
		dcbor_put_cstr(&b, "sid");
		dcbor_put_uint(&b, 9);
		dcbor_put_cstr(&b, "recs");
		dcbor_put_array(&b, 0);
		put_frame(&f, 3, &b);
	}
	fuzz_seed_write(dir, "frames_riblt", 2 | F_PRELOAD, &f);
	fuzz_seed_write(dir, "frames_riblt_empty", 2, &f);
	/*
	 * First frames that name a repair horizon (docs/protocol.md 8.4): a
	 * SYMS whose cut leaves the preloaded entries in (issued before
	 * it), a NEG whose cut leaves out all of them.
	 */
	dcbor_buf_reset(&f);
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 5);
	dcbor_put_cstr(&b, "n");
	dcbor_put_uint(&b, 0);
	dcbor_put_cstr(&b, "cut");
	dcbor_put_uint(&b, SEED_STAMP + 1);
	dcbor_put_cstr(&b, "sid");
	dcbor_put_uint(&b, 11);
	dcbor_put_cstr(&b, "size");
	dcbor_put_uint(&b, 12);
	dcbor_put_cstr(&b, "syms");
	riblt_put_syms(&b, s, 64);
	put_frame(&f, 1, &b);
	fuzz_seed_write(dir, "frames_riblt_cut", 2 | F_PRELOAD, &f);
	dcbor_buf_reset(&f);
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "cut");
	dcbor_put_uint(&b, 1);
	dcbor_put_cstr(&b, "msg");
	dcbor_put_raw(&b, msg.data, msg.len);
	dcbor_put_cstr(&b, "sid");
	dcbor_put_uint(&b, 13);
	dcbor_put_cstr(&b, "want");
	dcbor_put_bytes(&b, v, 0);
	put_frame(&f, 0, &b);
	fuzz_seed_write(dir, "frames_neg_cut", 2 | F_PRELOAD, &f);
	/*
	 * A NEG frame, then RECS of 80 records (more than a slice: queued and
	 * applied on later loop turns) and an END 1 queued behind them.
	 */
	dcbor_buf_reset(&f);
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 3);
	dcbor_put_cstr(&b, "msg");
	dcbor_put_raw(&b, msg.data, msg.len);
	dcbor_put_cstr(&b, "sid");
	dcbor_put_uint(&b, 5);
	dcbor_put_cstr(&b, "want");
	dcbor_put_bytes(&b, v, 0);
	put_frame(&f, 0, &b);
	{
		struct dcbor_buf recs;
		char err[128];
		uint8_t id[ENTRY_ID_LEN];

		dcbor_buf_init(&recs);
		for (uint64_t i = 0; i < 80; i++)
			if (replica_generate(&gen, 1000 + i, SEED_STAMP,
			    100ull * 365 * 86400000, "task#v1", "pad", id, err,
			    sizeof(err)) == -1 ||
			    replica_put_record(&recs, id) == 0)
				fatalx("fuzz_recon: seed records: %s", err);
		dcbor_buf_reset(&b);
		dcbor_put_map(&b, 2);
		dcbor_put_cstr(&b, "sid");
		dcbor_put_uint(&b, 5);
		dcbor_put_cstr(&b, "recs");
		dcbor_put_array(&b, 80);
		dcbor_put_raw(&b, recs.data, recs.len);
		put_frame(&f, 3, &b);
		dcbor_buf_free(&recs);
	}
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "all");
	dcbor_put_bool(&b, false);
	dcbor_put_cstr(&b, "sid");
	dcbor_put_uint(&b, 5);
	dcbor_put_cstr(&b, "step");
	dcbor_put_uint(&b, 1);
	dcbor_put_cstr(&b, "want");
	dcbor_put_bytes(&b, v, 8);
	put_frame(&f, 4, &b);
	fuzz_seed_write(dir, "frames_recs_slices", 2, &f);
	dcbor_buf_free(&b);
	dcbor_buf_free(&f);
	dcbor_buf_free(&msg);
}

/* ---- the target ---------------------------------------------------------- */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t seed[IDENTITY_SEED_LEN];
	const char *dir;

	(void)argc;
	(void)argv;
	pd = &fz_peerd;
	conf_defaults(&pd->conf);
	pd->conf.name = "fuzz";
	pd->conf.dir = "/nonexistent";
	pd->conf.control = "/nonexistent/control.sock";
	pd->conf.log_level = "error";
	pd->conf.max_entries = 4096;
	pd->conf.trace_events = 1024;
	log_init("fuzz_recon", LOG_LVL_ERROR, NULL);
	memset(seed, 0x42, sizeof(seed));
	if (identity_from_seed(&pd->ident, seed) == -1)
		fatalx("fuzz_recon: identity");
	memset(seed, 0x52, sizeof(seed));
	if (identity_from_seed(&remote, seed) == -1)
		fatalx("fuzz_recon: remote identity");
	memset(seed, 0x62, sizeof(seed));
	if (identity_from_seed(&gen, seed) == -1)
		fatalx("fuzz_recon: generator identity");
	pd->start_us = clock_mono_us();
	if ((pd->base = event_base_new()) == NULL)
		fatalx("fuzz_recon: event_base_new");
	trace_init(pd->conf.trace_events);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	stub_replication();
	if ((dir = getenv("FUZZ_SEED_DIR")) != NULL) {
		gen_seeds(dir);
		exit(0);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t local[765];
	unsigned mode;

	if (size < 1)
		return 0;
	mode = data[0] & 3;
	if (mode == 0 && size >= 3) {
		size_t n = (size_t)data[1] * 3;
		struct neg_ids have = { 0 }, need = { 0 };
		struct dcbor_buf out;
		struct neg *ng;

		items(local, n, data[2]);
		ng = neg_new(local, n);
		dcbor_buf_init(&out);
		(void)neg_reply(ng, data + 3, size - 3, &out, &have, &need);
		/* An answer never lists more than it holds, nor grows unbounded. */
		if (have.n > n || out.len > (size_t)NEG_OUT_RANGES * 32 +
		    (size_t)NEG_OUT_ITEMS * 8 + 64)
			abort();
		dcbor_buf_free(&out);
		neg_ids_free(&have);
		neg_ids_free(&need);
		neg_free(ng);
	} else if (mode == 1) {
		struct riblt_sym *s = calloc(size / 17 + 1, sizeof(*s));
		struct riblt_dec *d;
		size_t k;

		items(local, 40, 7);
		d = riblt_dec_new(local, 40, 512);
		if (riblt_get_syms(data + 1, size - 1, s, size / 17 + 1,
		    &k) == 0)
			(void)riblt_dec_add(d, s, k);
		if (riblt_dec_pos(d) > 512)
			abort();
		riblt_dec_free(d);
		free(s);
	} else if (mode >= 2) {
		struct member *from = member_get(remote.id, "remote",
		    "127.0.0.1:1");

		if (data[0] & F_PRELOAD)
			preload();
		frames(from, data + 1, size - 1);
		/* Records queued for later turns: apply them as the loop would. */
		for (int turn = 0; turn < 64; turn++)
			event_base_loop(pd->base, EVLOOP_NONBLOCK);
		if (replica_count() > pd->conf.max_entries)
			abort();
		/* Back to the starting state: no session carries over. */
		stub_replication_free();
		member_free_all();
		member_init();
		stub_replication();
	}
	return 0;
}

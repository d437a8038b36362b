/*
 * fuzz_dispatch.c: libFuzzer target for what a peer does with a frame body
 * once the handshake is over and the receiver checks have passed:
 * gossip_recv (PING, PING_REQ, ACK, RUMOR, DIGEST, PULL_RESP, CLAIM_ACK,
 * CLAIM_ACK_RELAY, CLAIM_ACKS),
 * view_recv (GROUP_AD; fuzz_view takes the other membership kinds) and,
 * under RUMOR and PULL_RESP, replica_apply_record on each record.
 *
 * The first input byte chooses what the rest is and the sender's standing:
 *   bits 0-2  0 PING, 1 PING_REQ, 2 ACK, 3 GROUP_AD, 4 RUMOR, 5 DIGEST,
 *             6 PULL_RESP: the rest is that kind's body for gossip_recv
 *             (view_recv for GROUP_AD);
 *             7: the rest is records, replica_apply_record until one fails
 *   bit 3     we asked the sender for deltas (a PULL_RESP's records count)
 *   bit 4     the sender's key is known (claims carry their own key)
 *   bit 5     the sender was heard just now (PING_REQ for it is vouched for)
 *   bit 6     the replica starts with the records of the seed generator
 *             (so merges into existing records are reached)
 *   bit 7     the rest is a CLAIM_ACK body instead (bit 0 set: a
 *             CLAIM_ACK_RELAY body; else bit 1 set: a CLAIM_ACKS list;
 *             bit 2 unused), with take-mode
 *             quorum and, with bit 6, a take of ours in flight on the first
 *             task (its claim waits for votes the ack may give)
 * The body is handed over as is, without the canonical check frame_open
 * would have made: a reader must refuse what it does not expect anyway.
 * A body may be refused (-1) but nothing may crash, leak or grow without
 * bound; each input starts from an empty replica and membership.
 *
 * The sender is a fixed "remote" identity; the daemon's own is fixed too.
 * Entries are signed, so mutated entries mostly fail their id or signature;
 * the seeds carry real signed entries and claims, and the fuzzer mutates
 * their states and claims around them.  With FUZZ_SEED_DIR=DIR the target
 * writes those seeds with the real encoders (entry_new, identity_sign,
 * space_rec_encode) into DIR and exits:
 *   FUZZ_SEED_DIR=tests/fuzz/seeds/fuzz_dispatch build/fuzz/fuzz_dispatch
 * Their stamps are fixed, so the seeds are the same bytes on every run.
 * FUZZ_ECHO=1 prints what each input did (records taken, refused, held).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "crdt.h"
#include "dcbor.h"
#include "entry.h"
#include "frame.h"
#include "gossip.h"
#include "identity.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "stats.h"
#include "take.h"
#include "template.h"
#include "trace.h"
#include "view.h"

#include "fuzz_daemon.h"

#define SEED_PHYS	1790000000000ull	/* a fixed issue time (2026) */
#define SEED_LEASE	(100ull * 365 * 24 * 3600 * 1000)	/* 100 years */

#define MODE_RECORDS	7
#define F_ASKED		0x08
#define F_HAVE_PUB	0x10
#define F_HEARD		0x20
#define F_PRELOAD	0x40
#define F_CLAIM_ACK	0x80
#define F_RELAY		0x01	/* with F_CLAIM_ACK */
#define F_ACKS		0x02	/* with F_CLAIM_ACK, without F_RELAY */

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct peerd		*pd;
static struct peerd	 fz_peerd;
static struct identity	 remote;		/* the sender */
static struct dcbor_buf	 preload;		/* concatenated records */
static size_t		 npreload;
static int		 fz_echo;
static uint8_t		 claimed_id[ENTRY_ID_LEN];	/* the first task */

static const uint32_t	 mode_kind[7] = { FRAME_PING, FRAME_PING_REQ,
    FRAME_ACK, FRAME_GROUP_AD, FRAME_RUMOR, FRAME_DIGEST, FRAME_PULL_RESP };

static void
fz_conf(struct peerd_conf *c)
{
	/* The daemon's defaults; no links are ever made (no link_init). */
	conf_defaults(c);		/* max_links caps members from a GROUP_AD */
	c->name = "fuzz";
	c->dir = "/nonexistent";
	c->control = "/nonexistent/control.sock";
	c->log_level = "error";
	c->max_entries = 4096;
	c->trace_events = 1024;
}

/* ---- seed generation ---------------------------------------------------- */

static void
put_key(struct dcbor_buf *b, const char *k)
{
	dcbor_put_cstr(b, k);
}

/* A signed entry by the remote identity, at a fixed stamp. */
static struct entry *
gen_entry(const char *type, uint32_t logical, const char *const *tags,
    size_t ntags, bool rich)
{
	struct entry_spec spec;
	struct dcbor_buf f;
	struct entry *e;
	const uint8_t *body;
	size_t blen;
	uint8_t sig[IDENTITY_SIG_LEN];

	dcbor_buf_init(&f);
	if (rich) {
		/* Keys in canonical order: shorter first, then bytewise. */
		dcbor_put_map(&f, 6);
		put_key(&f, "b");
		dcbor_put_bool(&f, true);
		put_key(&f, "f");
		dcbor_put_float(&f, 1.5);
		put_key(&f, "n");
		dcbor_put_int(&f, -7);
		put_key(&f, "s");
		dcbor_put_cstr(&f, "alpha");
		put_key(&f, "z");
		dcbor_put_null(&f);
		put_key(&f, "arr");
		dcbor_put_array(&f, 2);
		dcbor_put_uint(&f, 1);
		dcbor_put_bytes(&f, "\x00\x01", 2);
	} else {
		dcbor_put_map(&f, 1);
		put_key(&f, "n");
		dcbor_put_uint(&f, logical);
	}
	memset(&spec, 0, sizeof(spec));
	spec.space = "default";
	spec.type = type;
	spec.fields = f.data;
	spec.fields_len = f.len;
	spec.issuer = remote.pub;
	spec.stamp.phys = SEED_PHYS;
	spec.stamp.logical = logical;
	spec.stamp.node = remote.node;
	spec.lease_ms = SEED_LEASE;
	spec.mono_us = 1000000u + logical;
	spec.tags = tags;
	spec.ntags = ntags;
	if (entry_new(&spec, &e) != ENTRY_OK)
		fatalx("fuzz_dispatch: entry_new");
	dcbor_buf_free(&f);
	entry_signing_bytes(e, &body, &blen);
	if (identity_sign(&remote, body, blen, sig) == -1)
		fatalx("fuzz_dispatch: sign");
	entry_set_sig(e, sig);
	return e;
}

/* Claim record id in sp for holder, signed by signer. */
static void
gen_claim(struct space *sp, const uint8_t id[ENTRY_ID_LEN],
    const struct identity *signer, uint64_t expiry_ms)
{
	struct space_rec *r = space_get(sp, id);
	struct hlc_stamp st = { SEED_PHYS + 10, 0, signer->node };
	struct crdt_claim c;
	struct dcbor_buf b;

	space_claim_make(sp, r, &st, SEED_PHYS + 10, 30000, &c);
	memcpy(c.holder, signer->id, IDENTITY_ID_LEN);
	memcpy(c.key, signer->pub, IDENTITY_PUB_LEN);
	c.expiry_ms = expiry_ms;
	dcbor_buf_init(&b);
	crdt_claim_signing_bytes(&b, &c, id);
	if (identity_sign(signer, b.data, b.len, c.sig) == -1)
		fatalx("fuzz_dispatch: sign claim");
	dcbor_buf_free(&b);
	if (space_claim(sp, id, &c, SEED_PHYS + 10) != SPACE_OK)
		fatalx("fuzz_dispatch: space_claim");
}

struct gen_arg {
	struct dcbor_buf	*b;
	size_t			 n;
};

static bool
gen_put(void *argp, const struct space_rec *r)
{
	struct gen_arg *a = argp;

	space_rec_encode(a->b, r);
	a->n++;
	return true;
}

/*
 * Six records by the remote: plain, rich fields and tags, claimed by the
 * remote, claimed by us, completed (so compact: entry null), removed.
 * Into out, concatenated.
 */
static size_t
gen_records(struct dcbor_buf *out, uint64_t digest[GOSSIP_BUCKETS])
{
	static const char *const tags[] = { "red", "blue" };
	struct space *sp = space_new(remote.node, remote.id, 64);
	struct entry *e[6];
	uint8_t id[6][ENTRY_ID_LEN];
	struct gen_arg a = { out, 0 };

	e[0] = gen_entry("task#v1", 0, NULL, 0, false);
	e[1] = gen_entry("job#v2", 1, tags, 2, true);
	e[2] = gen_entry("task#v1", 2, NULL, 0, false);
	e[3] = gen_entry("task#v1", 3, NULL, 0, false);
	e[4] = gen_entry("task#v1", 4, NULL, 0, false);
	e[5] = gen_entry("task#v1", 5, NULL, 0, false);
	memcpy(claimed_id, e[0]->id, ENTRY_ID_LEN);
	for (size_t i = 0; i < 6; i++) {
		memcpy(id[i], e[i]->id, ENTRY_ID_LEN);
		if (space_write(sp, e[i], SEED_PHYS) != SPACE_OK)
			fatalx("fuzz_dispatch: space_write");
	}
	gen_claim(sp, id[2], &remote, SEED_PHYS + 30000);
	gen_claim(sp, id[3], &pd->ident, SEED_PHYS + 30000);
	if (space_complete(sp, id[4], SEED_PHYS + 20) != SPACE_OK ||
	    space_remove(sp, id[5], SEED_PHYS + 20) != SPACE_OK)
		fatalx("fuzz_dispatch: complete/remove");
	space_sweep(sp, SEED_PHYS + 21);	/* the completed one: compact */
	space_foreach(sp, gen_put, &a);
	space_digest(sp, GOSSIP_BUCKETS, digest);
	space_free(sp);
	return a.n;
}

static void
gen_ping(struct dcbor_buf *b, bool target)
{
	dcbor_buf_reset(b);
	dcbor_put_map(b, target ? 2 : 1);
	put_key(b, "seq");
	dcbor_put_uint(b, 7);
	if (target) {
		put_key(b, "target");
		dcbor_put_bytes(b, remote.id, IDENTITY_ID_LEN);
	}
}

static void
gen_pull(struct dcbor_buf *b, const struct dcbor_buf *recs, size_t n,
    bool more, bool final)
{
	dcbor_buf_reset(b);
	dcbor_put_map(b, 4);
	put_key(b, "diff");
	dcbor_put_array(b, 3);
	dcbor_put_uint(b, 0);
	dcbor_put_uint(b, 17);
	dcbor_put_uint(b, 63);
	put_key(b, "more");
	dcbor_put_bool(b, more);
	put_key(b, "recs");
	dcbor_put_array(b, n);
	dcbor_put_raw(b, recs->data, recs->len);
	put_key(b, "final");
	dcbor_put_bool(b, final);
}

static void
gen_seeds(const char *dir)
{
	struct dcbor_buf b, recs, acks;
	uint64_t dig[GOSSIP_BUCKETS], rid;
	size_t n;
	uint8_t other[IDENTITY_ID_LEN];

	dcbor_buf_init(&b);
	dcbor_buf_init(&recs);
	n = gen_records(&recs, dig);

	gen_ping(&b, false);
	fuzz_seed_write(dir, "ping", 0, &b);
	gen_ping(&b, true);
	fuzz_seed_write(dir, "ping_req", 1 | F_HEARD, &b);
	fuzz_seed_write(dir, "ping_req_unheard", 1, &b);
	gen_ping(&b, false);
	fuzz_seed_write(dir, "ack", 2, &b);
	gen_ping(&b, true);
	fuzz_seed_write(dir, "ack_target", 2, &b);

	memset(other, 0xab, sizeof(other));
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 1);
	put_key(&b, "members");
	dcbor_put_array(&b, 3);
	for (int i = 0; i < 3; i++) {
		const uint8_t *id = i == 0 ? remote.id : i == 1 ? other :
		    pd->ident.id;

		dcbor_put_map(&b, 3);
		put_key(&b, "id");
		dcbor_put_bytes(&b, id, IDENTITY_ID_LEN);
		put_key(&b, "addr");
		dcbor_put_cstr(&b, "127.0.0.1:4000");
		put_key(&b, "name");
		dcbor_put_cstr(&b, i == 0 ? "remote" : "p1");
	}
	fuzz_seed_write(dir, "group_ad", 3, &b);

	/* The rid is the hash of the items, or the rumor is refused. */
	dcbor_buf_reset(&b);
	dcbor_put_array(&b, n);
	dcbor_put_raw(&b, recs.data, recs.len);
	rid = gossip_rid(b.data, b.len);
	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 4);
	put_key(&b, "rid");
	dcbor_put_uint(&b, rid);
	put_key(&b, "hops");
	dcbor_put_uint(&b, 3);
	put_key(&b, "items");
	dcbor_put_array(&b, n);
	dcbor_put_raw(&b, recs.data, recs.len);
	put_key(&b, "origin");
	dcbor_put_uint(&b, 0x1234);
	fuzz_seed_write(dir, "rumor", 4 | F_HAVE_PUB, &b);
	fuzz_seed_write(dir, "rumor_unknown_key", 4, &b);
	fuzz_seed_write(dir, "rumor_preloaded", 4 | F_HAVE_PUB | F_PRELOAD, &b);

	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 1);
	put_key(&b, "b");
	dcbor_put_array(&b, GOSSIP_BUCKETS);
	for (size_t i = 0; i < GOSSIP_BUCKETS; i++)
		dcbor_put_uint(&b, dig[i]);
	fuzz_seed_write(dir, "digest", 5, &b);
	fuzz_seed_write(dir, "digest_preloaded", 5 | F_PRELOAD, &b);

	gen_pull(&b, &recs, n, false, false);
	fuzz_seed_write(dir, "pull", 6 | F_ASKED | F_HAVE_PUB, &b);
	fuzz_seed_write(dir, "pull_unasked", 6, &b);
	gen_pull(&b, &recs, n, true, false);
	fuzz_seed_write(dir, "pull_more_preloaded", 6 | F_ASKED | F_PRELOAD, &b);
	gen_pull(&b, &recs, n, false, true);
	fuzz_seed_write(dir, "pull_final", 6 | F_ASKED | F_HAVE_PUB, &b);

	dcbor_buf_reset(&b);
	dcbor_put_map(&b, 3);
	put_key(&b, "ok");
	dcbor_put_bool(&b, true);
	put_key(&b, "entry");
	dcbor_put_bytes(&b, claimed_id, ENTRY_ID_LEN);
	put_key(&b, "epoch");
	dcbor_put_uint(&b, 1);
	fuzz_seed_write(dir, "claim_ack", F_CLAIM_ACK | F_PRELOAD, &b);
	dcbor_buf_init(&acks);
	dcbor_put_array(&acks, 3);	/* the ack, then both relays below */
	dcbor_put_raw(&acks, b.data, b.len);

	/* Relayed votes by the remote: to us (counted), to another (passed on). */
	for (int i = 0; i < 2; i++) {
		struct dcbor_buf v;
		uint8_t sig[IDENTITY_SIG_LEN];
		const uint8_t *holder = i == 0 ? pd->ident.id : other;

		dcbor_buf_init(&v);
		dcbor_put_map(&v, 4);
		put_key(&v, "ok");
		dcbor_put_bool(&v, true);
		put_key(&v, "entry");
		dcbor_put_bytes(&v, claimed_id, ENTRY_ID_LEN);
		put_key(&v, "epoch");
		dcbor_put_uint(&v, 1);
		put_key(&v, "holder");
		dcbor_put_bytes(&v, holder, IDENTITY_ID_LEN);
		if (identity_sign(&remote, v.data, v.len, sig) == -1)
			fatalx("fuzz_dispatch: sign a vote");
		dcbor_buf_free(&v);
		dcbor_buf_reset(&b);
		dcbor_put_map(&b, 7);
		put_key(&b, "ok");
		dcbor_put_bool(&b, true);
		put_key(&b, "key");
		dcbor_put_bytes(&b, remote.pub, IDENTITY_PUB_LEN);
		put_key(&b, "sig");
		dcbor_put_bytes(&b, sig, IDENTITY_SIG_LEN);
		put_key(&b, "hops");
		dcbor_put_uint(&b, 6);
		put_key(&b, "entry");
		dcbor_put_bytes(&b, claimed_id, ENTRY_ID_LEN);
		put_key(&b, "epoch");
		dcbor_put_uint(&b, 1);
		put_key(&b, "holder");
		dcbor_put_bytes(&b, holder, IDENTITY_ID_LEN);
		fuzz_seed_write(dir, i == 0 ? "claim_ack_relay" :
		    "claim_ack_relay_on", F_CLAIM_ACK | F_RELAY | F_PRELOAD |
		    F_HAVE_PUB, &b);
		dcbor_put_raw(&acks, b.data, b.len);
	}
	fuzz_seed_write(dir, "claim_acks", F_CLAIM_ACK | F_ACKS | F_PRELOAD |
	    F_HAVE_PUB, &acks);
	dcbor_buf_free(&acks);

	fuzz_seed_write(dir, "records", MODE_RECORDS | F_HAVE_PUB, &recs);
	fuzz_seed_write(dir, "records_preloaded", MODE_RECORDS | F_HAVE_PUB |
	    F_PRELOAD, &recs);
	dcbor_buf_free(&b);
	dcbor_buf_free(&recs);
}

/* ---- the target ---------------------------------------------------------- */

static void
fz_take_done(void *arg, const struct space_rec *won,
    const struct take_end *end)
{
	(void)arg;
	(void)won;
	(void)end;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t seed[IDENTITY_SEED_LEN];
	uint64_t dig[GOSSIP_BUCKETS];
	const char *dir;

	(void)argc;
	(void)argv;
	pd = &fz_peerd;
	fz_conf(&pd->conf);
	log_init("fuzz_dispatch", LOG_LVL_ERROR, NULL);
	memset(seed, 0x42, sizeof(seed));
	if (identity_from_seed(&pd->ident, seed) == -1)
		fatalx("fuzz_dispatch: identity");
	memset(seed, 0x52, sizeof(seed));
	if (identity_from_seed(&remote, seed) == -1)
		fatalx("fuzz_dispatch: remote identity");
	pd->start_us = clock_mono_us();
	if ((pd->base = event_base_new()) == NULL)
		fatalx("fuzz_dispatch: event_base_new");
	trace_init(pd->conf.trace_events);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	replica_init();
	view_init();
	fz_echo = getenv("FUZZ_ECHO") != NULL;
	if ((dir = getenv("FUZZ_SEED_DIR")) != NULL) {
		gen_seeds(dir);
		exit(0);
	}
	dcbor_buf_init(&preload);
	npreload = gen_records(&preload, dig);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct member *from;
	struct dcbor_rd rd;
	unsigned mode;
	int rc = 0;

	if (size < 1)
		return 0;
	mode = data[0] & 7;
	stats_reset();
	from = member_get(remote.id, "remote", "127.0.0.1:1");
	if (data[0] & F_ASKED)
		from->ae_asked_ms = clock_mono_ms();
	if (data[0] & F_HAVE_PUB) {
		memcpy(from->pub, remote.pub, IDENTITY_PUB_LEN);
		from->have_pub = true;
	}
	if (data[0] & F_HEARD)
		member_heard(from);
	if (data[0] & F_PRELOAD) {
		dcbor_rd_init(&rd, preload.data, preload.len);
		for (size_t i = 0; i < npreload; i++)
			if (replica_apply_record(from, &rd) == -1)
				abort();
	}
	data++;
	size--;

	if (data[-1] & F_CLAIM_ACK) {
		pd->conf.take_mode = TAKE_QUORUM;
		if (data[-1] & F_PRELOAD)
			take_start(template_new("task#v1"), 0, fz_take_done,
			    NULL);
		rc = gossip_recv(from, data[-1] & F_RELAY ?
		    FRAME_CLAIM_ACK_RELAY : data[-1] & F_ACKS ?
		    FRAME_CLAIM_ACKS : FRAME_CLAIM_ACK, data, size);
		pd->conf.take_mode = TAKE_LEASE;
		if (rc != 0 && rc != -1)
			abort();
	} else if (mode == MODE_RECORDS) {
		dcbor_rd_init(&rd, data, size);
		while (dcbor_left(&rd) > 0) {
			rc = replica_apply_record(from, &rd);
			if (rc == -1)
				break;
			if (rc != 0)
				abort();
		}
	} else {
		rc = mode_kind[mode] == FRAME_GROUP_AD ?
		    view_recv(from, FRAME_GROUP_AD, data, size) :
		    gossip_recv(from, mode_kind[mode], data, size);
		if (rc != 0 && rc != -1)
			abort();
	}

	/* What a body can make this peer hold is bounded. */
	if (member_count() > pd->conf.max_links ||
	    replica_count() > pd->conf.max_entries)
		abort();
	if (fz_echo)
		fprintf(stderr, "mode %u rc %d: records %llu (refused %llu, "
		    "bad signature %llu), claims rejected %llu; held %zu, visible %zu, members %zu\n", mode, rc,
		    (unsigned long long)pd_metrics.records_received,
		    (unsigned long long)pd_metrics.records_refused,
		    (unsigned long long)pd_metrics.entries_bad_signature,
		    (unsigned long long)pd_metrics.claims_rejected,
		    replica_count(), replica_visible(), member_count());

	/* Back to the starting state: nothing carries over. */
	replica_free();
	member_free_all();
	member_init();
	replica_init();
	return 0;
}

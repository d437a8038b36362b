/*
 * fuzz_view.c: libFuzzer target for the membership and broadcast bodies a
 * peer takes once the handshake is over: view_recv (JOIN, FORWARD_JOIN,
 * NEIGHBOR, DISCONNECT, SHUFFLE, GROUP_AD) and plumtree_recv's
 * kinds (RUMOR as one map or a batch, which may end with an ihave map,
 * IHAVE, GRAFT, PRUNE).
 *
 * The first input byte chooses the kind (bits 0-3, modulo 10); the rest is
 * its body, handed over without the canonical check frame_open would make.
 * Several bodies may follow one another: byte 1 is the length of the
 * first (0: the whole rest), so a sequence (SHUFFLE then GROUP_AD, IHAVE
 * then RUMOR) is reachable.  --max-links is 0 here, so a FORWARD_JOIN's
 * dial is refused before any socket exists.  Whatever is sent, the views
 * stay within their bounds and the member table never grows.
 * With FUZZ_SEED_DIR=DIR the target writes one well-formed body of each
 * kind into DIR and exits:
 *   FUZZ_SEED_DIR=tests/fuzz/seeds/fuzz_view build/fuzz/fuzz_view
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "dcbor.h"
#include "frame.h"
#include "plumtree.h"
#include "rumor.h"
#include "identity.h"
#include "link.h"
#include "log.h"
#include "member.h"
#include "peerd.h"
#include "replica.h"
#include "stats.h"
#include "trace.h"
#include "view.h"

#include "fuzz_daemon.h"
#include "../unit/wire_stub.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct peerd		*pd;
static struct peerd	 fz_peerd;
static struct identity	 remote;

static const uint32_t	 kinds[10] = { FRAME_JOIN, FRAME_FORWARD_JOIN,
    FRAME_NEIGHBOR, FRAME_DISCONNECT, FRAME_SHUFFLE, FRAME_GROUP_AD,
    FRAME_RUMOR, FRAME_IHAVE, FRAME_GRAFT, FRAME_PRUNE };

static void
put_peer(struct dcbor_buf *b, uint8_t idb, const char *addr)
{
	uint8_t id[IDENTITY_ID_LEN];

	memset(id, idb, sizeof(id));
	dcbor_put_map(b, 3);
	dcbor_put_cstr(b, "id");
	dcbor_put_bytes(b, id, sizeof(id));
	dcbor_put_cstr(b, "addr");
	dcbor_put_cstr(b, addr);
	dcbor_put_cstr(b, "name");
	dcbor_put_cstr(b, "p");
}

static void
gen_seeds(const char *dir)
{
	struct dcbor_buf b;
	char name[32];

	for (uint8_t k = 0; k < 10; k++) {
		dcbor_buf_init(&b);
		switch (kinds[k]) {
		case FRAME_FORWARD_JOIN:
			dcbor_put_map(&b, 2);
			dcbor_put_cstr(&b, "ttl");
			dcbor_put_uint(&b, 3);
			dcbor_put_cstr(&b, "peer");
			put_peer(&b, 0x61, "127.0.0.1:4001");
			break;
		case FRAME_NEIGHBOR:
			dcbor_put_map(&b, 1);
			dcbor_put_cstr(&b, "prio");
			dcbor_put_bool(&b, true);
			break;
		case FRAME_SHUFFLE:
		case FRAME_GROUP_AD:
			dcbor_put_map(&b, kinds[k] == FRAME_SHUFFLE ? 2 : 1);
			dcbor_put_cstr(&b, kinds[k] == FRAME_SHUFFLE ? "peers" :
			    "members");
			dcbor_put_array(&b, 2);
			put_peer(&b, 0x62, "127.0.0.1:4002");
			put_peer(&b, 0x63, "127.0.0.1:4003");
			if (kinds[k] == FRAME_SHUFFLE) {
				dcbor_put_cstr(&b, "reply");
				dcbor_put_bool(&b, false);
			}
			break;
		case FRAME_RUMOR:
			dcbor_put_array(&b, 2);
			for (int i = 0; i < 2; i++) {
				dcbor_put_map(&b, 4);
				dcbor_put_cstr(&b, "rid");
				dcbor_put_uint(&b, 0x1001 + 2 * (uint64_t)i);
				dcbor_put_cstr(&b, "hops");
				dcbor_put_uint(&b, 4);
				dcbor_put_cstr(&b, "items");
				dcbor_put_array(&b, 0);
				dcbor_put_cstr(&b, "origin");
				dcbor_put_uint(&b, 0x63 + (uint64_t)i);
			}
			break;
		case FRAME_IHAVE:
		case FRAME_GRAFT:
			dcbor_put_map(&b, 1);
			dcbor_put_cstr(&b, "ids");
			dcbor_put_array(&b, 2);
			dcbor_put_uint(&b, 0x1001);
			dcbor_put_uint(&b, 0x2003);
			break;
		case FRAME_PRUNE:
			dcbor_put_map(&b, 1);
			dcbor_put_cstr(&b, "origins");
			dcbor_put_array(&b, 2);
			dcbor_put_uint(&b, 0x63);
			dcbor_put_uint(&b, 0x64);
			break;
		default:			/* JOIN, DISCONNECT */
			dcbor_put_map(&b, 0);
			break;
		}
		snprintf(name, sizeof(name), "kind_%s", frame_kind_name(
		    kinds[k]));
		{
			/* byte 0 the kind, byte 1 0: the whole rest. */
			struct dcbor_buf body;

			dcbor_buf_init(&body);
			dcbor_put_raw(&body, (const uint8_t *)"\0", 1);
			dcbor_put_raw(&body, b.data, b.len);
			fuzz_seed_write(dir, name, k, &body);
			dcbor_buf_free(&body);
		}
		dcbor_buf_free(&b);
	}
	/* A batch ending with the ids announced on the way (an ihave map). */
	dcbor_buf_init(&b);
	dcbor_put_raw(&b, (const uint8_t *)"\0", 1);
	dcbor_put_array(&b, 2);
	dcbor_put_map(&b, 4);
	dcbor_put_cstr(&b, "rid");
	dcbor_put_uint(&b, rumor_rid((const uint8_t *)"\x80", 1));
	dcbor_put_cstr(&b, "hops");
	dcbor_put_uint(&b, 4);
	dcbor_put_cstr(&b, "items");
	dcbor_put_array(&b, 0);
	dcbor_put_cstr(&b, "origin");
	dcbor_put_uint(&b, 0x63);
	dcbor_put_map(&b, 1);
	dcbor_put_cstr(&b, "ids");
	dcbor_put_array(&b, 2);
	dcbor_put_uint(&b, 0x1001);
	dcbor_put_uint(&b, 0x2003);
	fuzz_seed_write(dir, "kind_rumor_ihave", 6, &b);
	dcbor_buf_free(&b);
}

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
	pd->conf.max_links = 0;		/* never dial */
	pd->conf.passive = 12;
	log_init("fuzz_view", LOG_LVL_ERROR, NULL);
	memset(seed, 0x42, sizeof(seed));
	if (identity_from_seed(&pd->ident, seed) == -1)
		fatalx("fuzz_view: identity");
	memset(seed, 0x52, sizeof(seed));
	if (identity_from_seed(&remote, seed) == -1)
		fatalx("fuzz_view: remote identity");
	snprintf(pd->listen_addr, sizeof(pd->listen_addr), "127.0.0.1:4000");
	pd->start_us = clock_mono_us();
	if ((pd->base = event_base_new()) == NULL)
		fatalx("fuzz_view: event_base_new");
	trace_init(pd->conf.trace_events);
	hlc_init(&pd->hlc, pd->ident.node);
	stats_init();
	member_init();
	stub_replication();
	view_init();
	if ((dir = getenv("FUZZ_SEED_DIR")) != NULL) {
		gen_seeds(dir);
		exit(0);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct member *from;

	if (size < 2)
		return 0;
	stats_reset();
	from = member_get(remote.id, "remote", "127.0.0.1:1");
	while (size >= 2) {
		uint32_t kind = kinds[(data[0] & 15) % 10];
		size_t n = data[1] == 0 || data[1] > size - 2 ? size - 2 :
		    data[1];
		int rc;

		data += 2;
		size -= 2;
		if (kind == FRAME_RUMOR || kind == FRAME_IHAVE ||
		    kind == FRAME_GRAFT || kind == FRAME_PRUNE)
			rc = plumtree_recv(from, kind, data, n);
		else
			rc = view_recv(from, kind, data, n);
		if (rc != 0 && rc != -1)
			abort();
		data += n;
		size -= n;
		view_tick();
	}
	/* The views are bounded, and only a handshake adds a member. */
	if (member_count() != 1 || view_passive_count() > pd->conf.passive ||
	    view_dials_count() > VIEW_DIALS ||
	    view_active_count() > pd->conf.active + VIEW_MARGIN)
		abort();

	/* Back to the starting state: nothing carries over. */
	view_free();
	stub_replication_free();
	member_free_all();
	member_init();
	stub_replication();
	view_init();
	return 0;
}

/*
 * wire_stub.h: the store and the protocols on it, wired as main.c's
 * peerd_wire does (after stats_init and member_init), for the unit tests
 * and fuzz targets that drive them on the real replica: the replica, the
 * broadcast, anti-entropy (sessions and the digest), the urgent lane,
 * votes and takes.  Header-only, static inline: a test that uses neither
 * function links none of them.  Keep it in step with peerd_wire.
 */
#ifndef WIRE_STUB_H
#define WIRE_STUB_H

#include "digest.h"
#include "plumtree.h"
#include "recon.h"
#include "replica.h"
#include "take.h"
#include "urgent.h"
#include "vote.h"

static inline void
stub_replication(void)
{
	replica_init();
	plumtree_init();
	recon_init();
	digest_init();
	urgent_init(plumtree_send_urgent, take_turn_sent);
	vote_init(take_answered, urgent_soon);
	take_init(urgent_add);
}

/* stub_replication undone, the replica last. */
static inline void
stub_replication_free(void)
{
	take_free();
	vote_free();
	urgent_free();
	recon_free();
	plumtree_free();
	replica_free();
}

#endif

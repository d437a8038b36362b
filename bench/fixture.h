/*
 * fixture.h: inputs shared by the Template, LocalSpace and Entry families
 * (not a family itself): a typical task entry of eight fields.
 *
 *   fields = { "id": uint, "done": false, "kind": "build" or "test",
 *              "prio": 0..9, "owner": "agent-N", "score": float,
 *              "title": about 40 bytes of text, "labels": ["ci", "linux"] }
 *
 * kind is "build" for even i and "test" for odd i unless the caller forces
 * it, which is how the space rows make half the entries fail a where.
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdint.h>

#include "entry.h"

#define FIXTURE_SPACE	"bench"
#define FIXTURE_TYPE	"task#v1"
#define FIXTURE_KIND_ALT	(-1)	/* kind by parity of i */

/*
 * A new unsigned entry of type FIXTURE_TYPE, number i, issued at phys ms
 * (logical 0), lease lease_ms; kind 0 "build", 1 "test", or
 * FIXTURE_KIND_ALT.  NULL on failure (never expected).
 */
struct entry	*fixture_entry(uint64_t i, uint64_t phys, uint64_t lease_ms,
		    int kind);

#endif

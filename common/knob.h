/*
 * knob.h: peerd's knobs, one list.  Each row of KNOBS() is one flag:
 *
 *   X(FLAG, FIELD, TYPE, MIN, MAX, DEFAULT, HELP)
 *
 * FLAG is the command-line name without "--"; FIELD the member of struct
 * peerd_conf (peerd/peerd.h); TYPE one of
 *   U32     an integer MIN..MAX (uint32_t FIELD)
 *   SWITCH  a flag without a value (bool FIELD; 1 in a scenario passes it)
 *   LEVEL   a log level, an index MIN..MAX into knob_levels[] (const char *
 *           FIELD; a scenario gives the name)
 *   METHOD  an anti-entropy method, an index MIN..MAX into knob_methods[]
 *           (uint32_t FIELD, enum recon_method; a scenario gives the name)
 *   TAKEMODE a take mode, an index into knob_take_modes[] (uint32_t FIELD,
 *           TAKE_LEASE or TAKE_QUORUM)
 *   LINKAUTH how frames on a TCP link are authenticated after the
 *           handshake, an index into knob_link_auths[] (uint32_t FIELD,
 *           LINK_AUTH_SIG or LINK_AUTH_MAC)
 * A word type is one enum value, one word list and one KNOB_WORDS_ line in
 * knob.c; knob_words() gives a row's list.
 * DEFAULT is the value peerd starts with.  From this list come peerd's
 * defaults (conf.c), its long options and --help (main.c), the scenario
 * parser's knob checks (orchestrator/sc.c), the fleet's command lines
 * (orchestrator/fleet.c) and the knob table of docs/scenarios.md (checked
 * by tests/unit/test_knob.c).  A new knob is one row here plus its field.
 */
#ifndef KNOB_H
#define KNOB_H

#include <stddef.h>

#define KNOBS(X) \
	X("settle-ms", settle_ms, U32, 0, 600000, 200, \
	    "ms a take waits after its claim before it keeps it") \
	X("take-retry-ms", take_retry_ms, U32, 1, 60000, 20, \
	    "ms between two attempts of a blocked take") \
	X("take-window", take_window, U32, 1, 1024, 1, \
	    "a take picks among the first N claimable matches by this peer's id (1: the first, FIFO)") \
	X("take-lease-ms", take_lease_ms, U32, 1, 86400000, 30000, \
	    "ms a taken task stays leased before it returns") \
	X("gossip-ms", gossip_ms, U32, 10, 3600000, 1000, \
	    "ms between two repairs with a random member") \
	X("repair-max-ms", repair_max_ms, U32, 10, 3600000, 16000, \
	    "longest repair period, reached while repairs find nothing") \
	X("repair-horizon-ms", repair_horizon_ms, U32, 0, 3600000, 0, \
	    "a periodic repair leaves out records issued in the last N ms (still in flight; 0: none)") \
	X("tick-ms", tick_ms, U32, 10, 3600000, 250, \
	    "least ms between two runs of the tick (it sleeps until work is due)") \
	X("silence-ms", silence_ms, U32, 100, 86400000, 30000, \
	    "ms of silence after which a member is dead") \
	X("ping-timeout-ms", ping_timeout_ms, U32, 10, 3600000, 2000, \
	    "ms a ping waits for its ACK") \
	X("hops", hops, U32, 1, 64, 32, \
	    "times a rumor is forwarded at most (a safety TTL of the tree)") \
	X("active", active, U32, 1, 64, 5, \
	    "links of the active view (HyParView); n-1 or fewer is a full mesh") \
	X("passive", passive, U32, 1, 1024, 30, \
	    "addresses of the passive view") \
	X("shuffle-ms", shuffle_ms, U32, 100, 3600000, 10000, \
	    "ms between two SHUFFLEs of the passive view") \
	X("swap-ms", swap_ms, U32, 100, 3600000, 60000, \
	    "ms between two swaps of an active link for a passive peer") \
	X("lazy-ms", lazy_ms, U32, 1, 60000, 250, \
	    "ms an id waits for its IHAVE on a lazy link, +-25%") \
	X("batch-ms", batch_ms, U32, 0, 10000, 0, \
	    "ms rumors for one link may wait to share a frame") \
	X("graft-ms", graft_ms, U32, 10, 60000, 500, \
	    "ms a missing announced id waits before a GRAFT") \
	X("max-age-s", max_age_s, U32, 1, 86400, 300, \
	    "s in the past a received frame may be stamped") \
	X("max-future-s", max_future_s, U32, 1, 86400, 600, \
	    "s in the future a received frame may be stamped") \
	X("rate-burst", rate_burst, U32, 1, 4294967295u, 50000, \
	    "frames a sender may send in a burst") \
	X("rate", rate_per_s, U32, 1, 4294967295u, 10000, \
	    "frames per second a sender may send") \
	X("strikes", strikes, U32, 1, 1000000, 16, \
	    "future-stamped frames before a sender is quarantined") \
	X("quarantine-s", quarantine_s, U32, 1, 86400, 600, \
	    "s a quarantined sender stays refused") \
	X("max-links", max_links, U32, 1, 65536, 256, \
	    "peer links at most") \
	X("max-preauth", max_preauth, U32, 1, 65536, 32, \
	    "accepted links still in their handshake at most (half from one address)") \
	X("preauth-ms", preauth_ms, U32, 100, 600000, 3000, \
	    "ms an accepted link has to prove its key") \
	X("max-clients", max_clients, U32, 1, 65536, 64, \
	    "control clients at most") \
	X("max-frame", max_frame, U32, 1024, 67108864, 8388608, \
	    "bytes of one frame at most") \
	X("max-line", max_line, U32, 256, 67108864, 1048576, \
	    "bytes of one control line at most") \
	X("max-entries", max_entries, U32, 1, 4294967295u, 1000000, \
	    "entries of the space at most (then busy)") \
	X("trace-events", trace_events, U32, 16, 16777216, 8192, \
	    "events the trace ring holds") \
	X("trim-ms", trim_ms, U32, 0, 3600000, 1000, \
	    "ms between two looks at the heap: over 1 MiB free inside it, its free pages go back to the system, when no input waits (0: never)") \
	X("log-level", log_level, LEVEL, 0, 3, 2, \
	    "error, warn, info or debug") \
	X("test-hooks", test_hooks, SWITCH, 0, 1, 0, \
	    "enable the \"debug\" command (tests only: it can hang the peer)") \
	X("direct-io", direct_io, SWITCH, 0, 1, 0, \
	    "write fetched pieces with O_DIRECT, serve the last 8 MiB from memory") \
	X("reconcile", reconcile, METHOD, 0, 2, 2, \
	    "anti-entropy method: digest, negentropy or riblt") \
	X("take-mode", take_mode, TAKEMODE, 0, 1, 0, \
	    "how a take wins: lease (the settle race) or quorum (a majority acked)") \
	X("link-auth", link_auth, LINKAUTH, 0, 1, 1, \
	    "frames on a TCP link after the handshake: sig (Ed25519 each) or mac (HMAC under keys the handshake agreed)") \
	X("fleet-size", fleet_size, U32, 0, 65536, 0, \
	    "the fleet's size N: quorum needs a majority of N, a lease take N - 1 answers (0: unknown)") \
	X("answer-wait-ms", answer_wait_ms, U32, 0, 600000, 2000, \
	    "with fleet-size, how long past its settle window a lease take waits for the last answers; and how long a lease take with timeout_ms 0 waits for a live member's answer") \
	X("settle-grid-ms", settle_grid_ms, U32, 0, 1000, 2, \
	    "a settle window ends on a multiple of N ms of the host's monotonic clock, and waits up to 2 N ms more for a nearly simultaneous remote claim, so a host's takers wake together (0: off)")

enum knob_type { KNOB_U32, KNOB_SWITCH, KNOB_LEVEL, KNOB_METHOD,
    KNOB_TAKEMODE, KNOB_LINKAUTH };

/* The LINKAUTH values, in knob_link_auths[] order. */
enum { LINK_AUTH_SIG, LINK_AUTH_MAC };

struct knob {
	const char	*name;
	enum knob_type	 type;
	unsigned long long min, max, def;
	const char	*help;
};

/* The rows of KNOBS() in order, and how many. */
extern const struct knob	 knob_table[];
extern const size_t		 knob_count;
/* "error", "warn", "info", "debug", NULL: the LEVEL values. */
extern const char *const	 knob_levels[];
/* "digest", "negentropy", "riblt", NULL: the METHOD values (recon.h order). */
extern const char *const	 knob_methods[];
/* "lease", "quorum", NULL: the TAKEMODE values (TAKE_LEASE, TAKE_QUORUM). */
extern const char *const	 knob_take_modes[];
/* "sig", "mac", NULL: the LINKAUTH values (LINK_AUTH_SIG, LINK_AUTH_MAC). */
extern const char *const	 knob_link_auths[];

/* The row named name (without "--"), or NULL. */
const struct knob	*knob_find(const char *name);
/* A word type's values (NULL-terminated), or NULL for U32 and SWITCH. */
const char *const	*knob_words(const struct knob *k);
/* The index of word in k's values, or -1. */
int			 knob_word(const struct knob *k, const char *word);

#endif

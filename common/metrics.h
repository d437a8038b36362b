/*
 * metrics.h: peerd's counters and latency histograms (docs/report.md).
 *
 * Every counter is declared once, in the X-macro lists below, and those
 * lists produce the struct, the reset, the sum and the JSON, so a counter
 * cannot be added to one and forgotten in another.  Names in the JSON are
 * "<family>.<name>" and are a contract (docs/report.md): never rename one
 * silently.
 *
 * A peer keeps one struct metrics (plain uint64_t fields, bumped in place
 * with ++ or +=) and one struct metrics_hists; it answers the control
 * socket's "metrics" with metrics_snapshot_json().  The orchestrator reads
 * the counters back with metrics_from_json and sums the fleet with
 * metrics_add; histograms merge with metrics_hists_merge.
 *
 * JSON choice: every counter and every array slot is always present, zeros
 * included.  The set of keys is then the same for every peer and every
 * run, and a missing key means "not measured", never "zero".
 */
#ifndef METRICS_H
#define METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "frame.h"
#include "hist.h"

struct rusage;

/* Scalar counters: X(field, "json name"). */
#define METRICS_COUNTERS(X)						\
	X(frames_in,		"frames.in")				\
	X(frames_out,		"frames.out")				\
	X(bytes_in,		"bytes.in")				\
	X(bytes_out,		"bytes.out")				\
	X(rumors_sent,		"rumors.sent")				\
	X(rumors_received,	"rumors.received")			\
	X(duplicates_dropped,	"rumors.duplicates_dropped")		\
	X(digests_sent,		"digests.sent")				\
	X(digests_received,	"digests.received")			\
	X(deltas_sent,		"deltas.sent")				\
	X(deltas_received,	"deltas.received")			\
	X(delta_entries,	"deltas.entries")			\
	X(takes_won,		"takes.won")				\
	X(takes_lost,		"takes.lost")				\
	X(takes_retried,	"takes.retried")			\
	X(takes_untrusted,	"takes.untrusted")			\
	X(takes_no_quorum,	"takes.no_quorum")			\
	X(takes_unanswered,	"takes.unanswered")			\
	X(takes_aligned,	"takes.aligned")			\
	X(claim_acks_sent,	"claims.acks_sent")			\
	X(claim_acks_received,	"claims.acks_received")			\
	X(claim_acks_unmatched,	"claims.acks_unmatched")		\
	X(claim_acks_refused,	"claims.acks_refused")			\
	X(claim_acks_relayed,	"claims.acks_relayed")			\
	X(claim_acks_unroutable, "claims.acks_unroutable")		\
	X(claim_acks_forged,	"claims.acks_forged")			\
	X(signs_claim,		"crypto.signs_claim")			\
	X(signs_vote,		"crypto.signs_vote")			\
	X(signs_entry,		"crypto.signs_entry")			\
	X(verifies_claim,	"crypto.verifies_claim")		\
	X(verifies_vote,	"crypto.verifies_vote")			\
	X(verifies_entry,	"crypto.verifies_entry")		\
	X(verifies_claim_cached, "crypto.verifies_claim_cached")	\
	X(verifies,		"crypto.verifies")			\
	X(verify_timed,		"crypto.verify_timed")			\
	X(verify_timed_us,	"crypto.verify_timed_us")		\
	X(sig_failures,		"frames.signature_failures")		\
	X(mac_failures,		"frames.mac_failures")			\
	X(links_up,		"links.up")				\
	X(links_keyed,		"links.keyed")				\
	X(links_down,		"links.down")				\
	X(control_requests,	"control.requests")			\
	X(control_errors,	"control.errors")			\
	X(writes,		"space.writes")				\
	X(reads,		"space.reads")				\
	X(entries_expired,	"space.entries_expired")		\
	X(notify_sent,		"notify.sent")				\
	X(completes,		"space.completes")			\
	X(heap_trims,		"heap.trims")				\
	X(tick_runs,		"tick.runs")				\
	X(wake_runs,		"wake.runs")				\
	X(wake_early,		"wake.early")				\
	X(wake_late,		"wake.late")				\
	X(wake_timer_runs,	"wake.timer_runs")			\
	X(heap_trim_us,		"heap.trim_us")				\
	X(records_received,	"records.received")			\
	X(records_held_skipped,	"records.held_skipped")		\
	X(records_batched,	"records.batched")			\
	X(records_refused,	"records.refused")			\
	X(recon_records_deferred, "recon.records_deferred")		\
	X(recon_refused_busy,	"recon.refused_busy")			\
	X(recon_repairs_equal,	"recon.repairs_equal")			\
	X(recon_repairs_moved,	"recon.repairs_moved")			\
	X(recon_repairs_failed,	"recon.repairs_failed")			\
	X(recon_horizon_items,	"recon.horizon_items")			\
	X(entries_bad_signature, "records.entry_bad_signature")		\
	X(claims_rejected,	"records.claims_rejected")		\
	X(bad_body,		"frames.bad_body")			\
	X(unhandled_kind,	"frames.unhandled_kind")		\
	X(truncated,		"frames.truncated")			\
	X(rumors_bad_rid,	"rumors.bad_rid")			\
	X(links_duplicate,	"links.duplicate")			\
	X(members_dead,		"members.dead")				\
	X(fault_dropped_out,	"faults.dropped_out")			\
	X(fault_dropped_in,	"faults.dropped_in")			\
	X(swarm_pieces_served,	"swarm.pieces_served")			\
	X(swarm_bytes_served,	"swarm.bytes_served")			\
	X(swarm_pieces_served_cached, "swarm.pieces_served_cached")	\
	X(swarm_pieces_received, "swarm.pieces_received")		\
	X(swarm_bytes_received,	"swarm.bytes_received")			\
	X(swarm_pieces_bad,	"swarm.pieces_bad")			\
	X(swarm_pieces_duplicate, "swarm.pieces_duplicate")		\
	X(swarm_pieces_truncated, "swarm.pieces_truncated")		\
	X(swarm_have_pieces,	"swarm.have_pieces")			\
	X(swarm_refused,	"swarm.refused")			\
	X(swarm_deflected,	"swarm.deflected")			\
	X(swarm_timeouts,	"swarm.timeouts")			\
	X(swarm_stalls,		"swarm.stalls")				\
	X(view_join_sent,	"view.join_sent")			\
	X(view_join_received,	"view.join_received")			\
	X(view_forward_join_sent, "view.forward_join_sent")		\
	X(view_forward_join_received, "view.forward_join_received")	\
	X(view_neighbor_sent,	"view.neighbor_sent")			\
	X(view_neighbor_received, "view.neighbor_received")		\
	X(view_neighbor_refused, "view.neighbor_refused")		\
	X(view_disconnect_sent,	"view.disconnect_sent")			\
	X(view_disconnect_received, "view.disconnect_received")		\
	X(view_shuffle_sent,	"view.shuffle_sent")			\
	X(view_shuffle_received, "view.shuffle_received")		\
	X(view_refused,		"view.refused")				\
	X(view_passive_replaced, "view.passive_replaced")		\
	X(view_dials_failed,	"view.dials_failed")			\
	X(view_forgotten,	"view.forgotten")			\
	X(view_swaps_waited,	"view.swaps_waited")			\
	X(view_dials,		"view.dials")				\
	X(view_swaps,		"view.swaps")				\
	X(view_trims,		"view.trims")				\
	X(push_eager,		"push.eager_copies")			\
	X(push_ihave_frames,	"push.ihave_frames")			\
	X(push_ihave_ids,	"push.ihave_ids")			\
	X(push_ihave_piggybacked, "push.ihave_piggybacked")		\
	X(push_ihave_unsent,	"push.ihave_unsent")			\
	X(push_grafts_sent,	"push.grafts_sent")			\
	X(push_grafts_put_off,	"push.grafts_put_off")			\
	X(push_grafts_late,	"push.grafts_late")			\
	X(push_graft_ids,	"push.graft_ids")			\
	X(push_grafts_answered,	"push.grafts_answered")			\
	X(push_prunes_sent,	"push.prunes_sent")			\
	X(push_prunes_received,	"push.prunes_received")			\
	X(push_duplicate_records, "push.duplicate_records")		\
	X(push_missing_dropped,	"push.missing_dropped")			\
	X(push_origins_replaced, "push.origins_replaced")		\
	X(tls_handshakes,	"tls.handshakes")			\
	X(tls_ktls_send,	"tls.ktls_send")				\
	X(link_reads,		"io.link_reads")			\
	X(control_reads,	"io.control_reads")

/* Why a well-formed frame was refused by the receiver: X(ENUM, "name"). */
#define METRICS_REJECTS(X)						\
	X(NOT_MEMBER,		"not_member")				\
	X(WRONG_TO,		"wrong_to")				\
	X(TOO_OLD,		"too_old")				\
	X(REPLAY,		"replay")				\
	X(RATE_LIMITED,		"rate_limited")				\
	X(FUTURE_STRIKE,	"future_strike")			\
	X(QUARANTINED,		"quarantined")				\
	X(UNASKED_DELTA,	"unasked_delta")

enum metrics_reject {
#define METRICS_REJECT_ENUM(e, n) METRICS_REJECT_##e,
	METRICS_REJECTS(METRICS_REJECT_ENUM)
#undef METRICS_REJECT_ENUM
	METRICS_REJECT_MAX
};

/* Which configured limit was hit: X(ENUM, "name"). */
#define METRICS_LIMITS(X)						\
	X(LINKS,		"links")				\
	X(CONTROL_CLIENTS,	"control_clients")			\
	X(FRAME_SIZE,		"frame_size")				\
	X(CONTROL_LINE,		"control_line")				\
	X(CONTROL_OUTPUT,	"control_output")			\
	X(ENTRIES,		"entries")				\
	X(RECON_INBOX,		"recon_inbox")				\
	X(PREAUTH,		"preauth")				\
	X(PREAUTH_ADDR,		"preauth_per_addr")			\
	X(PREAUTH_FRAME,	"preauth_frame")

enum metrics_limit {
#define METRICS_LIMIT_ENUM(e, n) METRICS_LIMIT_##e,
	METRICS_LIMITS(METRICS_LIMIT_ENUM)
#undef METRICS_LIMIT_ENUM
	METRICS_LIMIT_MAX
};

/* Why a TLS channel failed (docs/protocol.md "TLS binding"): X(ENUM, "name"). */
#define METRICS_TLS_FAILS(X)						\
	X(NOT_TLS,		"not_tls")	/* no TLS record at all */ \
	X(VERSION,		"version")	/* not TLS 1.3 */	\
	X(CERT,			"cert")		/* refused or absent */	\
	X(TIMEOUT,		"timeout")	/* never completed */	\
	X(RECORD,		"record")	/* bad record after it */ \
	X(OTHER,		"other")

enum metrics_tls_fail {
#define METRICS_TLS_FAIL_ENUM(e, n) METRICS_TLS_##e,
	METRICS_TLS_FAILS(METRICS_TLS_FAIL_ENUM)
#undef METRICS_TLS_FAIL_ENUM
	METRICS_TLS_FAIL_MAX
};

/* Why a handshake failed (docs/protocol.md section 3): X(ENUM, "name"). */
#define METRICS_HANDSHAKES(X)						\
	X(FRAME_BEFORE_HELLO,	"frame_before_hello")			\
	X(FRAME_BEFORE_PROOF,	"frame_before_proof")			\
	X(PROOF_BEFORE_HELLO,	"proof_before_hello")			\
	X(WRONG_ECHO,		"wrong_echo")				\
	X(WRONG_KEY,		"wrong_key")				\
	X(SELF,			"self")					\
	X(BAD_HELLO,		"bad_hello")				\
	X(TIMEOUT,		"timeout")

enum metrics_handshake {
#define METRICS_HANDSHAKE_ENUM(e, n) METRICS_HANDSHAKE_##e,
	METRICS_HANDSHAKES(METRICS_HANDSHAKE_ENUM)
#undef METRICS_HANDSHAKE_ENUM
	METRICS_HANDSHAKE_MAX
};

/*
 * Counter arrays: X(field, "json name", size, names), where names is the
 * list whose entries label the slots (a JSON object per array).  Frame
 * kinds are indexed by wire value and frame errors by enum frame_err;
 * slots without a name (kind 0, FRAME_OK) are never counted.
 */
#define METRICS_ARRAYS(X)						\
	X(frames_in_kind,	"frames.in_by_kind",	FRAME_KIND_MAX, kind) \
	X(frames_out_kind,	"frames.out_by_kind",	FRAME_KIND_MAX, kind) \
	X(bytes_in_kind,	"bytes.in_by_kind",	FRAME_KIND_MAX, kind) \
	X(bytes_out_kind,	"bytes.out_by_kind",	FRAME_KIND_MAX, kind) \
	X(bad_frames,		"frames.bad",		FRAME_ERR_MAX, ferr) \
	X(rejected,		"frames.rejected",	METRICS_REJECT_MAX, \
	    reject)							\
	X(limits_hit,		"limits.hit",		METRICS_LIMIT_MAX, limit) \
	X(tls_failures,		"tls.failures",		METRICS_TLS_FAIL_MAX, \
	    tlsfail) \
	X(handshake_failed,	"handshake.failed",	METRICS_HANDSHAKE_MAX, \
	    handshake)

struct metrics {
#define METRICS_FIELD(f, n) uint64_t f;
	METRICS_COUNTERS(METRICS_FIELD)
#undef METRICS_FIELD
#define METRICS_ARRAY_FIELD(f, n, size, names) uint64_t f[size];
	METRICS_ARRAYS(METRICS_ARRAY_FIELD)
#undef METRICS_ARRAY_FIELD
};

/* Latency histograms: X(field, "json name"). */
#define METRICS_HISTS(X)						\
	X(write_to_visible,	"write_to_visible")			\
	X(write_to_take,	"write_to_take")			\
	X(claim_to_visible,	"claim_to_visible")			\
	X(control_rtt,		"control_rtt")

struct metrics_hists {
#define METRICS_HIST_FIELD(f, n) struct hist f;
	METRICS_HISTS(METRICS_HIST_FIELD)
#undef METRICS_HIST_FIELD
};

/* Zero every counter. */
void	 metrics_reset(struct metrics *m);
/* dst += src, counter by counter (summing a fleet). */
void	 metrics_add(struct metrics *dst, const struct metrics *src);
/*
 * The counters as one flat object: {"frames.in": n, ...,
 * "frames.in_by_kind": {"rumor": n, ...}, "frames.bad": {"cbor": n, ...},
 * ...}.  A new reference.
 */
json_t	*metrics_to_json(const struct metrics *m);
/*
 * Read metrics_to_json's form back: every declared name must be there as
 * a non-negative integer; unknown keys are ignored.  0, or -1 with m
 * untouched.
 */
int	 metrics_from_json(struct metrics *m, const json_t *j);

/* Empty every histogram. */
void	 metrics_hists_init(struct metrics_hists *h);
/* dst += src, histogram by histogram. */
void	 metrics_hists_merge(struct metrics_hists *dst,
	    const struct metrics_hists *src);
/* {"write_to_visible": hist_to_json, ...}; a new reference. */
json_t	*metrics_hists_to_json(const struct metrics_hists *h);
/* Every histogram through hist_from_json. 0, or -1 with h untouched. */
int	 metrics_hists_from_json(struct metrics_hists *h, const json_t *j);

/*
 * {"cpu_s", "cpu_user_s", "cpu_sys_s" (seconds, reals), "max_rss_kib",
 * "wakeups", "preemptions"} from ru (Linux reports ru_maxrss in KiB).
 * "wakeups" is ru_nvcsw, the times the process gave up the CPU to wait
 * (for a one-loop peer, each one an epoll_wait that slept and was woken);
 * "preemptions" is ru_nivcsw, the times the scheduler took the CPU away.
 * A new reference.
 */
json_t	*metrics_rusage_to_json(const struct rusage *ru);
/* The same for this process, from getrusage(RUSAGE_SELF). */
json_t	*metrics_rusage_json(void);
/*
 * Whether only (an array of dotted names; NULL: everything) names the
 * figure key of section sec: the section itself ("gauges"), the figure
 * ("counters.frames.in", not frames.in_by_kind), a dotted prefix of it
 * ("counters.frames") or a name inside it ("counters.limits.hit.links"
 * names limits.hit).  Entries that are not strings name nothing.
 */
bool	 metrics_wants(const json_t *only, const char *sec, const char *key);
/*
 * A section's keys compiled against an only: want[i] is metrics_wants(only,
 * sec, keys[i]).  A peer is asked the same only every second (the engine's
 * sample), so the mask is kept and rebuilt only when only changes
 * (builds counts the rebuilds): checking ~200 names against every entry
 * of only on each answer was a tenth of an idle peer's CPU.
 */
struct metrics_mask {
	json_t			*only;	/* a copy of what want was built for */
	const char		*sec;
	const char *const	*keys;
	size_t			 n;
	uint8_t			*want;
	uint64_t		 builds;
};
/* mk's want[] for only; NULL when only is NULL (every key wanted). */
const uint8_t	*metrics_mask(struct metrics_mask *mk, const json_t *only);
/* The counters section's mask (tests read its builds). */
extern struct metrics_mask metrics_counters_mask;
/* Delete from the section object o every figure only does not name. */
void	 metrics_keep(json_t *o, const json_t *only, const char *sec);
/*
 * Set o[sec] = v (stealing v) with only's figures kept; with only given,
 * a section left empty is dropped (v freed).
 */
void	 metrics_set_section(json_t *o, const char *sec, json_t *v,
	    const json_t *only);
/* Set o[sec] = v (stealing v), v already holding only what only names. */
void	 metrics_put_section(json_t *o, const char *sec, json_t *v,
	    const json_t *only);
/*
 * What a peer answers "metrics" with, and writes to metrics.json:
 * {"counters": metrics_to_json, "latency": metrics_hists_to_json,
 *  "process": metrics_rusage_json}, each holding only what only names
 * (NULL: everything), built only where named.  hists may be NULL.
 */
json_t	*metrics_snapshot_json(const struct metrics *m,
	    const struct metrics_hists *hists, const json_t *only);

#endif

/*
 * measures.h: the one table of the measures a run can report (their names
 * are a contract: docs/report.md lists this table; never rename one
 * silently).  The scenario parser checks check and wait names against it;
 * the engine produces the measures; the report, compare and sweep take
 * each one's unit, better direction and meaning from here.
 *
 *   X(name, is_latency, unit, better, meaning)
 *
 * better: MEASURE_LOWER (lower is better), MEASURE_HIGHER, or MEASURE_NONE
 * (a count or a share that says what happened, not how well).
 */
#ifndef MEASURES_H
#define MEASURES_H

enum measure_better { MEASURE_NONE = 0, MEASURE_LOWER = -1, MEASURE_HIGHER = 1 };

#define MEASURES(X)							\
	X("run.wall_ms", 0, "ms", MEASURE_LOWER,			\
	    "the run from start to the last step")			\
	X("throughput.takes_per_s", 0, "ops/s", MEASURE_HIGHER,		\
	    "tasks taken / time from the start of the take step until all were taken") \
	X("throughput.write_to_take", 1, "us", MEASURE_LOWER,		\
	    "from the writer's stamp to the moment a taker knew it won") \
	X("gossip.write_to_visible", 1, "us", MEASURE_LOWER,		\
	    "from the writer's stamp to a peer first holding the entry live") \
	X("gossip.frames_per_write", 0, "ratio", MEASURE_LOWER,		\
	    "every frame the fleet sent in the write window / entries written")		\
	X("gossip.rumor_frames_per_write", 0, "ratio", MEASURE_LOWER,	\
	    "RUMOR frames the fleet sent in the write window / entries written")		\
	X("gossip.ihave_frames_per_write", 0, "ratio", MEASURE_LOWER,	\
	    "IHAVE frames the fleet sent in the write window / entries written")		\
	X("push.eager_edges", 0, "count", MEASURE_NONE,			\
	    "directed eager (tree) edges at the end: the sum of the push.tree_degree gauges") \
	X("push.grafts", 0, "count", MEASURE_LOWER,			\
	    "GRAFTs sent by the fleet in the write window")		\
	X("push.redundant_copies", 0, "count", MEASURE_LOWER,		\
	    "records received again, in the write window: copies beyond each peer's first") \
	X("gossip.cpu_ms_per_write", 0, "ms", MEASURE_LOWER,		\
	    "fleet CPU in the write window (background included) / entries written") \
	X("gossip.wakeups_per_write", 0, "ratio", MEASURE_LOWER,	\
	    "the fleet's loop wake-ups (voluntary context switches) in the write window / entries written") \
	X("gossip.cpu_floor_ms_per_write", 0, "ms", MEASURE_NONE,	\
	    "one Ed25519 verify per peer but the writer, timed on this host") \
	X("gossip.cpu_over_floor", 0, "ratio", MEASURE_LOWER,		\
	    "gossip.cpu_ms_per_write / gossip.cpu_floor_ms_per_write")	\
	X("gossip.verify_us_in_peers", 0, "us", MEASURE_NONE,		\
	    "CPU of one Ed25519 verify inside the peers in the write window (one in eight timed)") \
	X("gossip.verify_cpu_ms_per_write", 0, "ms", MEASURE_NONE,	\
	    "fleet CPU in Ed25519 verifies of every purpose in the write window / entries written") \
	X("control.rtt", 1, "us", MEASURE_LOWER,			\
	    "a control request inside a peer, line read to reply queued") \
	X("history.writes", 0, "count", MEASURE_NONE,			\
	    "writes acknowledged by the in-peer write loads, waited for or not")		\
	X("history.takes", 0, "count", MEASURE_NONE,			\
	    "distinct ids taken")					\
	X("history.duplicates", 0, "count", MEASURE_LOWER,		\
	    "takes beyond the first of each id")			\
	X("history.never_taken", 0, "count", MEASURE_LOWER,		\
	    "written ids nobody took")					\
	X("history.lost", 0, "count", MEASURE_LOWER,			\
	    "acknowledged writes neither held by a live peer nor taken") \
	X("take.claim_to_visible", 1, "us", MEASURE_LOWER,		\
	    "a claim's monotonic stamp to each other peer holding it") \
	X("take.retries", 0, "count", MEASURE_LOWER,			\
	    "take retry rounds, summed over the fleet")		\
	X("take.cpu_ms_per_take", 0, "ms", MEASURE_LOWER,		\
	    "fleet CPU from the take step's start to the end of the run, per take") \
	X("take.cpu_floor_ms_per_take", 0, "ms", MEASURE_NONE,		\
	    "one claim sign plus one verify per other peer, timed on this host") \
	X("take.cpu_over_floor", 0, "ratio", MEASURE_LOWER,		\
	    "take.cpu_ms_per_take / take.cpu_floor_ms_per_take")	\
	X("take.wakeups_per_take", 0, "ratio", MEASURE_LOWER,		\
	    "the fleet's loop wake-ups (voluntary context switches) in the take window, per take") \
	X("take.no_quorum", 0, "count", MEASURE_NONE,			\
	    "takes that ended without a majority (quorum mode: the minority side)") \
	X("fleet.frames_out", 0, "count", MEASURE_LOWER,		\
	    "frames sent, summed over the live peers at the end")	\
	X("fleet.bytes_out", 0, "bytes", MEASURE_LOWER,			\
	    "bytes sent, summed over the live peers at the end")	\
	X("fleet.bad_frames", 0, "count", MEASURE_LOWER,		\
	    "frames refused by the codec, summed")			\
	X("fleet.rest_frames_per_peer_s", 0, "frames/s", MEASURE_LOWER,	\
	    "frames sent per live peer per second during the last rest step") \
	X("fleet.rest_bytes_per_peer_s", 0, "bytes/s", MEASURE_LOWER,	\
	    "bytes sent per live peer per second during the last rest step") \
	X("fleet.rest_cpu_ms_per_peer_s", 0, "ms", MEASURE_LOWER,	\
	    "CPU ms per live peer per second during the last rest step") \
	X("fleet.rest_wakeups_per_peer_s", 0, "wakeups/s", MEASURE_LOWER,	\
	    "loop wake-ups (voluntary context switches) per live peer per second during the last rest step") \
	X("fleet.start_ms", 0, "ms", MEASURE_LOWER,			\
	    "wall time of the last start step: every peer forked and its ready line read") \
	X("engine.sample_round_ms", 0, "ms", MEASURE_LOWER,		\
	    "the slowest complete sample round: one metrics call to every running peer at once") \
	X("swarm.wall_ms", 0, "ms", MEASURE_LOWER,			\
	    "the content swarm, first fetcher's start to last one's completion") \
	X("swarm.aggregate_mib_s", 0, "MiB/s", MEASURE_HIGHER,		\
	    "blob size x fetchers / swarm.wall_ms")			\
	X("swarm.seeder_share", 0, "ratio", MEASURE_NONE,		\
	    "bytes the fetchers took from the publisher / all they took") \
	X("swarm.raw_stream_mib_s", 0, "MiB/s", MEASURE_NONE,		\
	    "the same bytes over one plain TCP stream on this host (the baseline)") \
	X("swarm.ratio_to_raw", 0, "ratio", MEASURE_HIGHER,		\
	    "swarm.aggregate_mib_s / swarm.raw_stream_mib_s")		\
	X("swarm.verified", 0, "count", MEASURE_HIGHER,			\
	    "fetchers whose blob has the publisher's SHA-256")		\
	X("swarm.unverified", 0, "count", MEASURE_LOWER,		\
	    "fetchers whose blob does not have the publisher's SHA-256") \
	X("swarm.stalls", 0, "count", MEASURE_LOWER,			\
	    "fetchers that gained no piece for 30 s")			\
	X("reconcile.digest.rounds", 0, "count", MEASURE_LOWER,	\
	    "legs of the exchange until both sides know the difference") \
	X("reconcile.digest.bytes", 0, "bytes", MEASURE_LOWER,	\
	    "the reconciliation exchange alone, whole frames both ways") \
	X("reconcile.digest.record_bytes", 0, "bytes", MEASURE_LOWER,	\
	    "frames carrying the records that moved, both ways") \
	X("reconcile.digest.record_ratio", 0, "ratio", MEASURE_LOWER,	\
	    "record_bytes / the moved records' own encoded size") \
	X("reconcile.digest.records", 0, "count", MEASURE_NONE,	\
	    "records sent and received") \
	X("reconcile.digest.ms", 0, "ms", MEASURE_LOWER,	\
	    "the reconcile command, start to both replicas applied") \
	X("reconcile.digest.equal", 0, "count", MEASURE_HIGHER,	\
	    "1 when both replicas end with the same digest and record count") \
	X("reconcile.negentropy.rounds", 0, "count", MEASURE_LOWER,	\
	    "legs of the exchange until both sides know the difference") \
	X("reconcile.negentropy.bytes", 0, "bytes", MEASURE_LOWER,	\
	    "the reconciliation exchange alone, whole frames both ways") \
	X("reconcile.negentropy.record_bytes", 0, "bytes", MEASURE_LOWER,	\
	    "frames carrying the records that moved, both ways") \
	X("reconcile.negentropy.record_ratio", 0, "ratio", MEASURE_LOWER,	\
	    "record_bytes / the moved records' own encoded size") \
	X("reconcile.negentropy.records", 0, "count", MEASURE_NONE,	\
	    "records sent and received") \
	X("reconcile.negentropy.ms", 0, "ms", MEASURE_LOWER,	\
	    "the reconcile command, start to both replicas applied") \
	X("reconcile.negentropy.equal", 0, "count", MEASURE_HIGHER,	\
	    "1 when both replicas end with the same digest and record count") \
	X("reconcile.riblt.rounds", 0, "count", MEASURE_LOWER,	\
	    "legs of the exchange until both sides know the difference") \
	X("reconcile.riblt.bytes", 0, "bytes", MEASURE_LOWER,	\
	    "the reconciliation exchange alone, whole frames both ways") \
	X("reconcile.riblt.record_bytes", 0, "bytes", MEASURE_LOWER,	\
	    "frames carrying the records that moved, both ways") \
	X("reconcile.riblt.record_ratio", 0, "ratio", MEASURE_LOWER,	\
	    "record_bytes / the moved records' own encoded size") \
	X("reconcile.riblt.records", 0, "count", MEASURE_NONE,	\
	    "records sent and received") \
	X("reconcile.riblt.ms", 0, "ms", MEASURE_LOWER,	\
	    "the reconcile command, start to both replicas applied") \
	X("reconcile.riblt.equal", 0, "count", MEASURE_HIGHER,	\
	    "1 when both replicas end with the same digest and record count")

#define MEASURES_NAME_TEXT(n, lat, unit, better, meaning) n ", "
/* "run.wall_ms, throughput.takes_per_s, ..., " for messages. */
#define MEASURES_TEXT MEASURES(MEASURES_NAME_TEXT)

/* What the table says of one measure. */
struct measure_info {
	const char		*name;
	int			 latency;
	const char		*unit;
	enum measure_better	 better;
	const char		*meaning;
};

/*
 * The row of name; a name not in the table (a wait step's measure, whose
 * unit is ms) gets a row of its own: lower is better.  Never NULL.
 */
const struct measure_info *measures_find(const char *name);
/* The unit of a check's value and bound (report.json's "checks" row
 * against its "measures"): the measure's, or "count" for a count stat. */
struct json_t;
const char	*measures_check_unit(const struct json_t *measures,
		    const struct json_t *check);

#endif

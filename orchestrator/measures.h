/*
 * measures.h: the one table of the measures a run can report (their names
 * are a contract: docs/report.md lists this table; never rename one
 * silently).  The scenario parser checks check and wait names against it;
 * the engine produces the measures; the report, compare and sweep take
 * each one's unit, better direction and meaning from here.
 *
 *   X(ID, name, is_latency, unit, better, meaning)
 *
 * ID is the name in capitals with '_' for '.': the engine stores a measure
 * by its enum measure_id M_ID (engine_measure), so a name the table does
 * not list fails the build, and the unit is the row's alone.
 * better: MEASURE_LOWER (lower is better), MEASURE_HIGHER, or MEASURE_NONE
 * (a count or a share that says what happened, not how well).
 */
#ifndef MEASURES_H
#define MEASURES_H

enum measure_better { MEASURE_NONE = 0, MEASURE_LOWER = -1, MEASURE_HIGHER = 1 };

#define MEASURES(X)							\
	X(RUN_WALL_MS,							\
	    "run.wall_ms", 0, "ms", MEASURE_LOWER,			\
	    "the run from start to the last step")			\
	X(THROUGHPUT_TAKES_PER_S,					\
	    "throughput.takes_per_s", 0, "ops/s", MEASURE_HIGHER,	\
	    "tasks taken / time from the start of the take step until all were taken") \
	X(THROUGHPUT_WRITE_TO_TAKE,					\
	    "throughput.write_to_take", 1, "us", MEASURE_LOWER,		\
	    "from the writer's stamp to the moment a taker knew it won") \
	X(GOSSIP_WRITE_TO_VISIBLE,					\
	    "gossip.write_to_visible", 1, "us", MEASURE_LOWER,		\
	    "from the writer's stamp to a peer first holding the entry live") \
	X(GOSSIP_FRAMES_PER_WRITE,					\
	    "gossip.frames_per_write", 0, "ratio", MEASURE_LOWER,	\
	    "every frame the fleet sent in the write window / entries written") \
	X(GOSSIP_RUMOR_FRAMES_PER_WRITE,				\
	    "gossip.rumor_frames_per_write", 0, "ratio", MEASURE_LOWER,	\
	    "RUMOR frames the fleet sent in the write window / entries written") \
	X(GOSSIP_IHAVE_FRAMES_PER_WRITE,				\
	    "gossip.ihave_frames_per_write", 0, "ratio", MEASURE_LOWER,	\
	    "IHAVE frames the fleet sent in the write window / entries written") \
	X(PUSH_EAGER_EDGES,						\
	    "push.eager_edges", 0, "count", MEASURE_NONE,		\
	    "directed eager (tree) edges at the end: the sum of the push.tree_degree gauges") \
	X(PUSH_GRAFTS,							\
	    "push.grafts", 0, "count", MEASURE_LOWER,			\
	    "GRAFTs sent by the fleet in the write window")		\
	X(PUSH_REDUNDANT_COPIES,					\
	    "push.redundant_copies", 0, "count", MEASURE_LOWER,		\
	    "records received again, in the write window: copies beyond each peer's first") \
	X(GOSSIP_CPU_MS_PER_WRITE,					\
	    "gossip.cpu_ms_per_write", 0, "ms", MEASURE_LOWER,		\
	    "fleet CPU in the write window (background included) / entries written") \
	X(GOSSIP_WAKEUPS_PER_WRITE,					\
	    "gossip.wakeups_per_write", 0, "ratio", MEASURE_LOWER,	\
	    "the fleet's loop wake-ups (voluntary context switches) in the write window / entries written") \
	X(GOSSIP_CPU_FLOOR_MS_PER_WRITE,				\
	    "gossip.cpu_floor_ms_per_write", 0, "ms", MEASURE_NONE,	\
	    "one Ed25519 verify per peer but the writer, timed on this host") \
	X(GOSSIP_CPU_OVER_FLOOR,					\
	    "gossip.cpu_over_floor", 0, "ratio", MEASURE_LOWER,		\
	    "gossip.cpu_ms_per_write / gossip.cpu_floor_ms_per_write")	\
	X(GOSSIP_VERIFY_US_IN_PEERS,					\
	    "gossip.verify_us_in_peers", 0, "us", MEASURE_NONE,		\
	    "CPU of one Ed25519 verify inside the peers in the write window (one in eight timed)") \
	X(GOSSIP_VERIFY_CPU_MS_PER_WRITE,				\
	    "gossip.verify_cpu_ms_per_write", 0, "ms", MEASURE_NONE,	\
	    "fleet CPU in Ed25519 verifies of every purpose in the write window / entries written") \
	X(CONTROL_RTT,							\
	    "control.rtt", 1, "us", MEASURE_LOWER,			\
	    "a control request inside a peer, line read to reply queued") \
	X(HISTORY_WRITES,						\
	    "history.writes", 0, "count", MEASURE_NONE,			\
	    "writes acknowledged by the in-peer write loads, waited for or not") \
	X(HISTORY_TAKES,						\
	    "history.takes", 0, "count", MEASURE_NONE,			\
	    "distinct ids taken")					\
	X(HISTORY_DUPLICATES,						\
	    "history.duplicates", 0, "count", MEASURE_LOWER,		\
	    "takes beyond the first of each id")			\
	X(HISTORY_NEVER_TAKEN,						\
	    "history.never_taken", 0, "count", MEASURE_LOWER,		\
	    "written ids nobody took")					\
	X(HISTORY_LOST,							\
	    "history.lost", 0, "count", MEASURE_LOWER,			\
	    "acknowledged writes neither held by a live peer nor taken") \
	X(TAKE_CLAIM_TO_VISIBLE,					\
	    "take.claim_to_visible", 1, "us", MEASURE_LOWER,		\
	    "a claim's monotonic stamp to each other peer holding it")	\
	X(TAKE_RETRIES,							\
	    "take.retries", 0, "count", MEASURE_LOWER,			\
	    "take retry rounds, summed over the fleet")			\
	X(TAKE_CPU_MS_PER_TAKE,						\
	    "take.cpu_ms_per_take", 0, "ms", MEASURE_LOWER,		\
	    "fleet CPU from the take step's start to the end of the run, per take") \
	X(TAKE_CPU_FLOOR_MS_PER_TAKE,					\
	    "take.cpu_floor_ms_per_take", 0, "ms", MEASURE_NONE,	\
	    "one claim sign plus one verify per other peer, timed on this host") \
	X(TAKE_CPU_OVER_FLOOR,						\
	    "take.cpu_over_floor", 0, "ratio", MEASURE_LOWER,		\
	    "take.cpu_ms_per_take / take.cpu_floor_ms_per_take")	\
	X(TAKE_WAKEUPS_PER_TAKE,					\
	    "take.wakeups_per_take", 0, "ratio", MEASURE_LOWER,		\
	    "the fleet's loop wake-ups (voluntary context switches) in the take window, per take") \
	X(TAKE_NO_QUORUM,						\
	    "take.no_quorum", 0, "count", MEASURE_NONE,			\
	    "takes that ended without a majority (quorum mode: the minority side)") \
	X(FLEET_FRAMES_OUT,						\
	    "fleet.frames_out", 0, "count", MEASURE_LOWER,		\
	    "frames sent, summed over the live peers at the end")	\
	X(FLEET_BYTES_OUT,						\
	    "fleet.bytes_out", 0, "bytes", MEASURE_LOWER,		\
	    "bytes sent, summed over the live peers at the end")	\
	X(FLEET_BAD_FRAMES,						\
	    "fleet.bad_frames", 0, "count", MEASURE_LOWER,		\
	    "frames refused by the codec, summed")			\
	X(FLEET_REST_FRAMES_PER_PEER_S,					\
	    "fleet.rest_frames_per_peer_s", 0, "frames/s", MEASURE_LOWER, \
	    "frames sent per live peer per second during the last rest step") \
	X(FLEET_REST_BYTES_PER_PEER_S,					\
	    "fleet.rest_bytes_per_peer_s", 0, "bytes/s", MEASURE_LOWER,	\
	    "bytes sent per live peer per second during the last rest step") \
	X(FLEET_REST_CPU_MS_PER_PEER_S,					\
	    "fleet.rest_cpu_ms_per_peer_s", 0, "ms", MEASURE_LOWER,	\
	    "CPU ms per live peer per second during the last rest step") \
	X(FLEET_REST_WAKEUPS_PER_PEER_S,				\
	    "fleet.rest_wakeups_per_peer_s", 0, "wakeups/s", MEASURE_LOWER, \
	    "loop wake-ups (voluntary context switches) per live peer per second during the last rest step") \
	X(FLEET_START_MS,						\
	    "fleet.start_ms", 0, "ms", MEASURE_LOWER,			\
	    "wall time of the last start step: every peer forked and its ready line read") \
	X(ENGINE_SAMPLE_ROUND_MS,					\
	    "engine.sample_round_ms", 0, "ms", MEASURE_LOWER,		\
	    "the slowest complete sample round: one metrics call to every running peer at once") \
	X(SWARM_WALL_MS,						\
	    "swarm.wall_ms", 0, "ms", MEASURE_LOWER,			\
	    "the content swarm, first fetcher's start to last one's completion") \
	X(SWARM_AGGREGATE_MIB_S,					\
	    "swarm.aggregate_mib_s", 0, "MiB/s", MEASURE_HIGHER,	\
	    "blob size x fetchers / swarm.wall_ms")			\
	X(SWARM_SEEDER_SHARE,						\
	    "swarm.seeder_share", 0, "ratio", MEASURE_NONE,		\
	    "bytes the fetchers took from the publisher / all they took") \
	X(SWARM_RAW_STREAM_MIB_S,					\
	    "swarm.raw_stream_mib_s", 0, "MiB/s", MEASURE_NONE,		\
	    "the same bytes over one plain TCP stream on this host (the baseline)") \
	X(SWARM_RATIO_TO_RAW,						\
	    "swarm.ratio_to_raw", 0, "ratio", MEASURE_HIGHER,		\
	    "swarm.aggregate_mib_s / swarm.raw_stream_mib_s")		\
	X(SWARM_VERIFIED,						\
	    "swarm.verified", 0, "count", MEASURE_HIGHER,		\
	    "fetchers whose blob has the publisher's SHA-256")		\
	X(SWARM_UNVERIFIED,						\
	    "swarm.unverified", 0, "count", MEASURE_LOWER,		\
	    "fetchers whose blob does not have the publisher's SHA-256") \
	X(SWARM_STALLS,							\
	    "swarm.stalls", 0, "count", MEASURE_LOWER,			\
	    "fetchers that gained no piece for 30 s")			\
	X(RECONCILE_DIGEST_ROUNDS,					\
	    "reconcile.digest.rounds", 0, "count", MEASURE_LOWER,	\
	    "legs of the exchange until both sides know the difference") \
	X(RECONCILE_DIGEST_BYTES,					\
	    "reconcile.digest.bytes", 0, "bytes", MEASURE_LOWER,	\
	    "the reconciliation exchange alone, whole frames both ways") \
	X(RECONCILE_DIGEST_RECORD_BYTES,				\
	    "reconcile.digest.record_bytes", 0, "bytes", MEASURE_LOWER,	\
	    "frames carrying the records that moved, both ways")	\
	X(RECONCILE_DIGEST_RECORD_RATIO,				\
	    "reconcile.digest.record_ratio", 0, "ratio", MEASURE_LOWER,	\
	    "record_bytes / the moved records' own encoded size")	\
	X(RECONCILE_DIGEST_RECORDS,					\
	    "reconcile.digest.records", 0, "count", MEASURE_NONE,	\
	    "records sent and received")				\
	X(RECONCILE_DIGEST_MS,						\
	    "reconcile.digest.ms", 0, "ms", MEASURE_LOWER,		\
	    "the reconcile command, start to both replicas applied")	\
	X(RECONCILE_DIGEST_EQUAL,					\
	    "reconcile.digest.equal", 0, "count", MEASURE_HIGHER,	\
	    "1 when both replicas end with the same digest and record count") \
	X(RECONCILE_NEGENTROPY_ROUNDS,					\
	    "reconcile.negentropy.rounds", 0, "count", MEASURE_LOWER,	\
	    "legs of the exchange until both sides know the difference") \
	X(RECONCILE_NEGENTROPY_BYTES,					\
	    "reconcile.negentropy.bytes", 0, "bytes", MEASURE_LOWER,	\
	    "the reconciliation exchange alone, whole frames both ways") \
	X(RECONCILE_NEGENTROPY_RECORD_BYTES,				\
	    "reconcile.negentropy.record_bytes", 0, "bytes", MEASURE_LOWER, \
	    "frames carrying the records that moved, both ways")	\
	X(RECONCILE_NEGENTROPY_RECORD_RATIO,				\
	    "reconcile.negentropy.record_ratio", 0, "ratio", MEASURE_LOWER, \
	    "record_bytes / the moved records' own encoded size")	\
	X(RECONCILE_NEGENTROPY_RECORDS,					\
	    "reconcile.negentropy.records", 0, "count", MEASURE_NONE,	\
	    "records sent and received")				\
	X(RECONCILE_NEGENTROPY_MS,					\
	    "reconcile.negentropy.ms", 0, "ms", MEASURE_LOWER,		\
	    "the reconcile command, start to both replicas applied")	\
	X(RECONCILE_NEGENTROPY_EQUAL,					\
	    "reconcile.negentropy.equal", 0, "count", MEASURE_HIGHER,	\
	    "1 when both replicas end with the same digest and record count") \
	X(RECONCILE_RIBLT_ROUNDS,					\
	    "reconcile.riblt.rounds", 0, "count", MEASURE_LOWER,	\
	    "legs of the exchange until both sides know the difference") \
	X(RECONCILE_RIBLT_BYTES,					\
	    "reconcile.riblt.bytes", 0, "bytes", MEASURE_LOWER,		\
	    "the reconciliation exchange alone, whole frames both ways") \
	X(RECONCILE_RIBLT_RECORD_BYTES,					\
	    "reconcile.riblt.record_bytes", 0, "bytes", MEASURE_LOWER,	\
	    "frames carrying the records that moved, both ways")	\
	X(RECONCILE_RIBLT_RECORD_RATIO,					\
	    "reconcile.riblt.record_ratio", 0, "ratio", MEASURE_LOWER,	\
	    "record_bytes / the moved records' own encoded size")	\
	X(RECONCILE_RIBLT_RECORDS,					\
	    "reconcile.riblt.records", 0, "count", MEASURE_NONE,	\
	    "records sent and received")				\
	X(RECONCILE_RIBLT_MS,						\
	    "reconcile.riblt.ms", 0, "ms", MEASURE_LOWER,		\
	    "the reconcile command, start to both replicas applied")	\
	X(RECONCILE_RIBLT_EQUAL,					\
	    "reconcile.riblt.equal", 0, "count", MEASURE_HIGHER,	\
	    "1 when both replicas end with the same digest and record count")

#define MEASURES_ID(id, ...) M_##id,
enum measure_id { MEASURES(MEASURES_ID) M_COUNT };
#undef MEASURES_ID

#define MEASURES_NAME_TEXT(id, n, lat, unit, better, meaning) n ", "
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

/* The row of name in MEASURES(), or NULL: never another row. */
const struct measure_info *measures_find(const char *name);
/* The row of id (M_RUN_WALL_MS, ...). */
const struct measure_info *measures_row(enum measure_id id);
/* The row of a name a wait step gave its measure (the engine stores it in ms). */
const struct measure_info *measures_wait(void);
/* The row of a counters.NAME measure: a peerd counter summed over the fleet. */
const struct measure_info *measures_counter(void);
/*
 * For the report's readers, which meet every name a run stored: the row
 * of name; a name MEASURES() does not list is one a wait step gave its
 * measure, or counters.NAME, and gets measures_wait()'s row (the unit the
 * report shows is the one stored beside the value).
 */
const struct measure_info *measures_shown(const char *name);
/* The unit of a check's value and bound (report.json's "checks" row
 * against its "measures"): the measure's, or "count" for a count stat. */
struct json_t;
const char	*measures_check_unit(const struct json_t *measures,
		    const struct json_t *check);

#endif

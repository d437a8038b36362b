/*
 * measures.h: the one list of the measures a run can report (their names
 * are a contract: docs/report.md; never rename one silently).  The scenario
 * parser checks check and wait names against it; the engine and the
 * report produce them.  X(name, is_latency)
 */
#ifndef MEASURES_H
#define MEASURES_H

#define MEASURES(X)					\
	X("run.wall_ms", 0)				\
	X("throughput.takes_per_s", 0)			\
	X("throughput.write_to_take", 1)		\
	X("gossip.write_to_visible", 1)			\
	X("gossip.frames_per_write", 0)			\
	X("gossip.rumor_frames_per_write", 0)		\
	X("control.rtt", 1)				\
	X("history.writes", 0)				\
	X("history.takes", 0)				\
	X("history.duplicates", 0)			\
	X("history.never_taken", 0)			\
	X("history.lost", 0)				\
	X("take.claim_to_visible", 1)			\
	X("take.retries", 0)				\
	X("take.cpu_ms_per_take", 0)			\
	X("take.cpu_floor_ms_per_take", 0)		\
	X("take.cpu_over_floor", 0)			\
	X("take.no_quorum", 0)				\
	X("fleet.frames_out", 0)			\
	X("fleet.bytes_out", 0)				\
	X("fleet.bad_frames", 0)			\
	X("swarm.wall_ms", 0)				\
	X("swarm.aggregate_mib_s", 0)			\
	X("swarm.seeder_share", 0)			\
	X("swarm.raw_stream_mib_s", 0)			\
	X("swarm.ratio_to_raw", 0)			\
	X("swarm.verified", 0)				\
	X("swarm.unverified", 0)			\
	X("swarm.stalls", 0)

#define MEASURES_NAME_TEXT(n, lat) n ", "
/* "run.wall_ms, throughput.takes_per_s, ..., " for messages. */
#define MEASURES_TEXT MEASURES(MEASURES_NAME_TEXT)

#endif

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
	X("swarm.stalls", 0)				\
	RECON_MEASURES(X, "digest")			\
	RECON_MEASURES(X, "negentropy")			\
	RECON_MEASURES(X, "riblt")

/* One reconcile step's figures (orchestrator/run.c act_reconcile). */
#define RECON_MEASURES(X, m)				\
	X("reconcile." m ".rounds", 0)			\
	X("reconcile." m ".bytes", 0)			\
	X("reconcile." m ".record_bytes", 0)		\
	X("reconcile." m ".record_ratio", 0)		\
	X("reconcile." m ".records", 0)			\
	X("reconcile." m ".ms", 0)			\
	X("reconcile." m ".equal", 0)

#define MEASURES_NAME_TEXT(n, lat) n ", "
/* "run.wall_ms, throughput.takes_per_s, ..., " for messages. */
#define MEASURES_TEXT MEASURES(MEASURES_NAME_TEXT)

#endif

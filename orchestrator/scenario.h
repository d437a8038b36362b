/*
 * scenario.h: the scenario file parser of orchestrate (docs/scenarios.md).
 *
 * scenario_load()/scenario_parse() read a scenario file, check all of it
 * (unknown keys, types, ranges, parameters and --set, "$name"
 * substitution, peer selectors, actions, checks, at_ms order), fill every
 * default and return the RESOLVED scenario: one JSON object the engine can
 * trust without checking again.  A refused file yields NULL and one line:
 *
 *   FILE:LINE: PATH: MESSAGE     e.g.
 *   scenarios/churn.json:14: steps[3].peer: expected a peer index, a list
 *       of them or "all", got "x"
 *   --set peers=abc: expected an int
 *
 * The resolved form ("int" is a JSON integer, "real" a JSON real even when
 * it is whole, e.g. 300.0; keys appear in this order):
 *
 * {
 *   "name":        string, [a-z0-9_-]{1,64}
 *   "description": string
 *   "params":      {NAME: value} every declared parameter in file order,
 *                  --set applied: int -> int, number -> real, bool,
 *                  string (at most 256 bytes)
 *   "timeout_s":   real in (0, 604800]         (default 300)
 *   "sample_ms":   int 0..3600000, 0 = off     (default 1000)
 *   "fleet": {
 *     "peers":     int 1..1024
 *     "binding":   "tcp" | "tls"  (peerd --binding)
 *     "topology":  "mesh" | "ring" | "star" | "none" |
 *                  {"random": int 1..1024}
 *     "knobs":     {FLAG: value} peerd flags without "--", in file order;
 *                  every value is an int within that flag's range in
 *                  common/knob.h, except "log-level": "error"|"warn"|
 *                  "info"|"debug"
 *   },
 *   "steps": [ at least one STEP ],
 *   "checks": [ zero or more CHECK ]
 * }
 *
 * Every STEP has "action", "name" (unique; default "<action>#<index>"),
 * "at_ms" (int 0..604800000, or null; the non-null ones never decrease
 * along the array) and "timeout_s" (real in (0, 604800], default 60), then
 * exactly the keys of its action.  SEL below is "all" or a non-empty array
 * of distinct ints, each below fleet.peers plus the number of join steps
 * before this step; INDEX is one such int.
 *
 *   start    "peers": array of distinct ints < fleet.peers ("all" and the
 *            default are expanded to 0..fleet.peers-1)
 *   stop, kill, pause, resume, restart    "peer": SEL
 *   join     "knobs": the newcomer's complete flags (fleet.knobs with the
 *            step's knobs laid over them), "index": the index it gets
 *   connect  "from": INDEX, "to": INDEX (different)
 *   write    "peer": SEL, "count": int 0..1000000000 (per peer),
 *            "rate": real 0..1e9 (per second per peer, 0 = flat out),
 *            "type": string "name#vN" (default "task#v1"),
 *            "payload_bytes": int 0..65536 (64), "lease_ms": int
 *            1..2147483647 (3600000), "wait": bool (true),
 *            "bulk_above": int 0..1000000000 or null (null: never; a
 *            larger count is bulk-loaded by every live peer)
 *   take     "peer": SEL, "workers": int 1..1024 (1), "type" (as write),
 *            "complete": bool (true), "count": int 0..1000000000 or null
 *            (null: every task written so far), "timeout_ms": int
 *            0..3600000 (1000), "wait": bool (true)
 *   fault    one of three shapes:
 *            {"peer": SEL, "drop": real 0..1, "delay_ms": int 0..3600000,
 *             "jitter_ms": int 0..3600000, "target": INDEX or "*"}
 *              (defaults: peer "all", 0.0, 0, 0, "*")
 *            {"partition": [[INDEX...], [INDEX...]...]} at least two
 *              non-empty groups, no index twice; no "peer" key
 *            {"peer": SEL, "clear": true}
 *   wait     "until": a row of CONDITIONS() (action.h),
 *            "measure": a measure name or null (record the wait in ms);
 *            with "metric" only: "metric": a non-latency measure name,
 *            "op": OP, "value": real
 *   sleep, rest    "ms": int 0..604800000
 *   mark     "label": string
 *   publish, fetch, reconcile: their field tables in action.h
 *
 * The field tables of action.h (FIELDS_*) are the whole contract: keys,
 * kinds, ranges and defaults of every action; the list above reads them.
 *
 * Every CHECK is {"name": string (unique; default "METRIC OP BOUND"),
 * "metric": a measure name, "op": OP, "bound": real, "stat": "p50"|"p90"|
 * "p99"|"p999"|"max"|"count" for a latency measure (default "p99"), null
 * for any other}.  OP is one of "<" "<=" "==" "!=" ">=" ">".
 *
 * Measure names: a row of MEASURES() (measures.h: the latencies in us);
 * "counters.NAME" (a peer counter summed over the fleet); and a wait
 * step's "measure" (ms, named "family.name", [a-z0-9_], not one of the
 * above).  A wait's metric
 * may name only a wait measure from an earlier step.
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stddef.h>

#include <jansson.h>

/* Read and resolve the file at path; NULL with a one-line err on refusal. */
json_t	*scenario_load(const char *path, char *const *sets, size_t nsets,
	    char *err, size_t errlen);
/* Resolve len bytes of text named filename in messages; as scenario_load. */
json_t	*scenario_parse(const char *text, size_t len, const char *filename,
	    char *const *sets, size_t nsets, char *err, size_t errlen);

#endif

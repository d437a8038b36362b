#!/usr/bin/env python3
"""take_perf.py SCRIPT T0_S T1_S: where one peer's CPU went during the takes.

SCRIPT is `perf script -F time,ip,sym --no-inline` of a `perf record -g
--call-graph dwarf` of one peer (orchestrate --wrap K='perf record ...').
Only samples between T0_S and T1_S seconds after the first sample count
(the take step's start and end in timeline.ndjson, less the peer's start).
Each sample goes to the first rule whose functions are on its stack, so
the rules' order is their priority: the floor's Ed25519 first, then the
control calls, the take's own work, the frames, the loop.
"""
import collections
import sys


def has(*names):
    return lambda st, kern: any(n in st for n in names)


def kernel(*names):
    return lambda st, kern: kern and any(n in st for n in names)


SEND = ("urgent_flush", "link_send_to", "evbuffer_write_atmost",
        "pt_lazy_cb", "take_turn_sent", "vote_acks_flush")
RULES = [
    ("claim sign (floor)",
     lambda st, k: "identity_sign" in st and "take_try" in st),
    ("claim verify (floor)",
     lambda st, k: "identity_verify" in st and "replica_apply_record" in st),
    ("history polls (takes)", has("cmd_takes")),
    ("metrics samples", has("cmd_metrics")),
    ("other control calls", has("ctl_read_cb", "ctl_write_cb",
                                "cmd_dispatch")),
    ("take scan (candidate)", has("take_candidate", "space_read_all",
                                  "space_take_candidate")),
    ("claim make (CBOR, merge, queue)", has("take_try")),
    ("completion (merge, queue)", has("worker_done", "replica_complete")),
    ("take checks and timers", has("take_cb", "take_check")),
    ("frames in: kernel (read)", kernel("rx_read_cb")),
    ("frames in: MAC check, CBOR, apply", has("rx_read_cb")),
    ("frames out: kernel (writev)", kernel(*SEND)),
    ("frames out: encode, MAC", has(*SEND)),
    ("wake-ups (epoll_wait, scheduling)",
     lambda st, k: "epoll_wait" in st or ("event_base_loop" in st and k)),
    ("ticks (gossip, recon, view, trim)",
     has("tick_cb", "gossip_tick", "recon_start", "view_tick",
         "member_tick", "trim_cb")),
    ("libevent loop itself", has("event_base_loop")),
]


def samples(path):
    cur = None
    for ln in open(path):
        ln = ln.rstrip("\n")
        if not ln:
            continue
        if not ln.startswith("\t") and ln.strip().endswith(":"):
            if cur:
                yield cur
            cur = (float(ln.strip()[:-1]), [])
            continue
        parts = ln.split(None, 1)
        if cur is not None and len(parts) == 2:
            cur[1].append((parts[0], parts[1]))
    if cur:
        yield cur


def main(path, t0, t1):
    cnt, tot, first = collections.Counter(), 0, None
    for t, frames in samples(path):
        if first is None:
            first = t
        if not t0 <= t - first <= t1:
            continue
        st = set(s for _, s in frames)
        kern = bool(frames) and frames[0][0].startswith("ffff")
        cnt[next((n for n, f in RULES if f(st, kern)), "other")] += 1
        tot += 1
    print("samples in window: %d" % tot)
    for name, n in cnt.most_common():
        print("| %s | %.1f%% |" % (name, 100.0 * n / max(tot, 1)))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]))

#!/usr/bin/env python3
"""take_row.py LABEL BUNDLE LOAD START: one markdown row of a throughput run.

Reads BUNDLE/report.json and each peers/<k>/metrics.json (and, when the
peerd wrote one, metrics.take_start.json, so the frames are the take
window's; else the whole run's, marked so) and prints: label, P x W, start,
load, status, takes/s, the settle bound (P x W x 1000 / settle_ms), their
ratio, duplicates, CPU ms a take, the floor, CPU over the floor, frames out
a take and the five commonest kinds, and retries.  LOAD and START are
printed as given (the 1-minute load average and the UTC time at the start).
"""
import json
import os
import sys


def main(label, d, load, start):
    rep = json.load(open(os.path.join(d, "report.json")))
    m, p = rep["measures"], rep["params"]
    P, W, S = int(p["peers"]), int(p["workers"]), int(p["settle_ms"])
    takes = m["history.takes"]["value"]

    def v(k):
        x = m.get(k)
        return x["value"] if x else float("nan")

    bound = P * W * 1000.0 / S
    kinds, fo, window = {}, 0, True
    for k in os.listdir(os.path.join(d, "peers")):
        pd = os.path.join(d, "peers", k)
        e = json.load(open(os.path.join(pd, "metrics.json")))["counters"]
        sp = os.path.join(pd, "metrics.take_start.json")
        s = {"frames.out": 0, "frames.out_by_kind": {}}
        if os.path.exists(sp):
            s = json.load(open(sp))["counters"]
        else:
            window = False
        fo += e["frames.out"] - s.get("frames.out", 0)
        for kk, n in e["frames.out_by_kind"].items():
            kinds[kk] = kinds.get(kk, 0) + n - \
                s.get("frames.out_by_kind", {}).get(kk, 0)
    top = sorted(((n / takes, kk) for kk, n in kinds.items() if n),
                 reverse=True)[:5]
    print("| %s | %dx%d | %s | %s | %s | %.1f | %.0f | %.2f | %d | %.2f | "
          "%.3f | **%.2f** | %.2f | %s | %d |" % (
              label, P, W, start, load, rep["status"],
              v("throughput.takes_per_s"), bound,
              v("throughput.takes_per_s") / bound, v("history.duplicates"),
              v("take.cpu_ms_per_take"), v("take.cpu_floor_ms_per_take"),
              v("take.cpu_over_floor"), fo / takes,
              ", ".join("%s %.2f" % (kk, x) for x, kk in top) +
              ("" if window else " (whole run)"), v("take.retries")))


if __name__ == "__main__":
    main(*sys.argv[1:5])

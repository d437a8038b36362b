#!/usr/bin/env python3
"""take_crypto.py BUNDLE...: the Ed25519 operations of a take run, per take.

Reads each bundle's peers/<k>/metrics.take_start.json (the counters when the
last take step began) and peers/<k>/metrics.json (at the end), sums the fleet
and prints, per distinct task taken (history.takes), the signatures and
verifications by purpose over the take window and over the whole run.
Frames are counted from frames.out / frames.in: on the tcp binding every
frame is signed and verified, on tls none is (bare frames), so the frame
columns are Ed25519 operations only on tcp.
"""
import json
import os
import sys

ROWS = [
    ("claim sign", "crypto.signs_claim"),
    ("claim verify", "crypto.verifies_claim"),
    ("vote sign (relayed answers)", "crypto.signs_vote"),
    ("vote verify (relayed answers)", "crypto.verifies_vote"),
    ("entry sign (writes)", "crypto.signs_entry"),
    ("entry verify", "crypto.verifies_entry"),
    ("claim verify skipped (cache)", "crypto.verifies_claim_cached"),
    ("frames out (signed on tcp)", "frames.out"),
    ("frames in (verified on tcp)", "frames.in"),
]


def counters(path):
    with open(path) as fh:
        return json.load(fh)["counters"]


def bundle(d):
    with open(os.path.join(d, "report.json")) as fh:
        rep = json.load(fh)
    takes = rep["measures"]["history.takes"]["value"]
    start, end = {}, {}
    peers = sorted(os.listdir(os.path.join(d, "peers")), key=int)
    for k in peers:
        pd = os.path.join(d, "peers", k)
        e = counters(os.path.join(pd, "metrics.json"))
        s = counters(os.path.join(pd, "metrics.take_start.json"))
        for _, key in ROWS:
            if key in e:	# a peerd without the counter: no figure
                end[key] = end.get(key, 0) + e[key]
                start[key] = start.get(key, 0) + s.get(key, 0)
    return rep, takes, start, end, len(peers)


def main(argv):
    for d in argv:
        rep, takes, start, end, n = bundle(d)
        binding = rep["params"].get("binding", "tcp")
        print("%s: %d peers, binding %s, %d takes, %.2f x floor" % (
            d, n, binding, takes,
            rep["measures"].get("take.cpu_over_floor", {}).get("value", 0)))
        print("| purpose | per take, take window | per take, whole run |")
        print("|---|--:|--:|")
        for name, key in ROWS:
            if key not in end:
                print("| %s | — | — |" % name)
                continue
            print("| %s | %.2f | %.2f |" % (name,
                  (end[key] - start[key]) / takes, end[key] / takes))


if __name__ == "__main__":
    main(sys.argv[1:])

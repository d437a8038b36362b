#!/usr/bin/env python3
"""take-mode quorum on a fleet of three real peers: a claim wins only when
a majority of the membership vouched for it, so the minority side of a
partition cannot take, and a claim it made there wins once the partition
heals if no other holder's claim stands."""
from fleet import Fleet, pause, run, wait_until

FAST = ["--gossip-ms", "200", "--tick-ms", "50", "--ping-timeout-ms", "300",
        "--silence-ms", "1500", "--settle-ms", "50", "--take-mode", "quorum"]


def read_on(p, type_):
    return p.call("read", type=type_)["entry"]


def split(a, b, c):
    a.call("fault", partition=[c.name])
    b.call("fault", partition=[c.name])
    c.call("fault", partition=[a.name, b.name])


def heal(peers):
    for p in peers:
        p.call("fault", clear=True)


def test_quorum_majority_takes_minority_never_wins():
    with Fleet(extra=FAST) as f:
        peers = f.start(3)
        a, b, c = peers
        x = a.call("write", type="q#v1", fields={"k": 1})["id"]
        for p in peers:
            wait_until(lambda: read_on(p, "q#v1"), 10, "the task")
        split(a, b, c)
        # The minority sees the task and claims it, but one vote of three
        # is no majority: however long it waits, it never wins.
        got = c.call("take", type="q#v1", timeout_ms=1500)["entry"]
        assert got is None, got
        assert c.counter("takes.won") == 0
        assert c.counter("takes.no_quorum") >= 1
        # The majority side may take it: two votes of three.
        got = a.call("take", type="q#v1", timeout_ms=3000)["entry"]
        assert got is not None and got["id"] == x, got
        heal(peers)
        # After the heal the minority's claim cannot win either: the
        # majority vouched for a's claim.
        got = c.call("take", type="q#v1", timeout_ms=1500)["entry"]
        assert got is None, got
        total = sum(p.call("takes")["total"] for p in peers)
        assert total == 1, total


def test_quorum_minority_claim_wins_after_the_heal():
    with Fleet(extra=FAST) as f:
        peers = f.start(3)
        a, b, c = peers
        f.wait_mesh()
        split(a, b, c)
        y = c.call("write", type="m#v1", fields={"side": "c"})["id"]
        got = c.call("take", type="m#v1", timeout_ms=800)["entry"]
        assert got is None, got
        pause(0.3)
        assert read_on(a, "m#v1") is None  # a never saw y
        heal(peers)
        # The claim made in the minority waits; the next take adopts it
        # and wins once a and b vouch for it.
        got = wait_until(lambda: c.call("take", type="m#v1",
                                        timeout_ms=500)["entry"], 20,
                         "c's take after the heal")
        assert got["id"] == y, got
        total = sum(p.call("takes")["total"] for p in peers)
        assert total == 1, total
        for p in (a, b):
            wait_until(lambda: p.call("read", type="m#v1")["entry"] is None
                       and p.call("ids")["ids"], 10, "y claimed on " + p.name)


if __name__ == "__main__":
    run([test_quorum_majority_takes_minority_never_wins,
         test_quorum_minority_claim_wins_after_the_heal])

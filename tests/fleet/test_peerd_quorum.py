#!/usr/bin/env python3
"""take-mode quorum on a fleet of three real peers: a claim wins only when
a majority of the membership vouched for it, so the minority side of a
partition cannot take, and a claim it made there wins once the partition
heals if no other holder's claim stands; and on eight peers with partial
views (--active 3), where most answers reach their holder only relayed
(CLAIM_ACK_RELAY), every task is taken exactly once and a minority never
wins."""
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


def linked_ids(p):
    return {m["peer_id"] for m in p.call("peers")["members"] if m["link"]}


def wait_connected(peers, timeout=20.0):
    """Every peer linked, and the overlay one connected graph."""
    by_id = {p.peer_id: p for p in peers}

    def connected():
        adj = {p.peer_id: linked_ids(p) for p in peers}
        if any(not a for a in adj.values()):
            return False
        seen, todo = set(), [peers[0].peer_id]
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            seen.add(x)
            todo += [y for y in adj[x] if y in by_id]
        return len(seen) == len(peers)
    wait_until(connected, timeout, "a connected overlay")


def takes_of(peers):
    ids = []
    for p in peers:
        ids += [t["id"] for t in p.call("takes")["takes"]]
    return ids


def partial_views_every_task_once(mode):
    n, tasks = 8, 40
    # Sixteen workers on one queue split quorum votes often; a split claim
    # holds its task until it expires, so leases are short here.
    extra = FAST[:-1] + [mode, "--active", "3", "--fleet-size", str(n),
                         "--take-lease-ms", "2000"]
    with Fleet(extra=extra) as f:
        first = f.add().start()
        peers = [first] + [f.add().start(seeds=[first.addr])
                           for _ in range(n - 1)]
        wait_connected(peers)
        # Partial views: some peer lacks a direct link to some other, so
        # its answers can reach that holder only relayed.
        assert any(len(linked_ids(p)) < n - 1 for p in peers)
        ids = [first.call("write", type="pq#v1", fields={"i": i})["id"]
               for i in range(tasks)]
        for p in peers:
            wait_until(lambda: len(p.call("read", type="pq#v1", all=True,
                                          limit=100)["entries"]) == tasks,
                       20, "every task on " + p.name)
        # Every peer races for every task with two workers at once.
        for p in peers:
            p.call("load", op="take", name="t", workers=2, type="pq#v1",
                   complete=True, timeout_ms=500)
        wait_until(lambda: len(set(takes_of(peers))) == tasks, 60,
                   "every task taken")
        for p in peers:
            p.call("load", op="stop", name="t")
        got = takes_of(peers)
        assert sorted(got) == sorted(ids), (len(got), len(set(got)))
        relayed = sum(p.counter("claims.acks_relayed") for p in peers)
        assert relayed > 0, relayed


def test_quorum_partial_views_every_task_once():
    partial_views_every_task_once("quorum")


def test_lease_partial_views_fleet_size_every_task_once():
    # Lease mode told the fleet's size waits for every other peer's
    # answer, relayed or direct, so no two takers win beyond direct links.
    partial_views_every_task_once("lease")


def test_quorum_partial_views_minority_never_wins():
    n = 8
    extra = FAST + ["--active", "3", "--fleet-size", str(n)]
    with Fleet(extra=extra) as f:
        first = f.add().start()
        peers = [first] + [f.add().start(seeds=[first.addr])
                           for _ in range(n - 1)]
        wait_connected(peers)
        minority, majority = peers[:3], peers[3:]
        for p in minority:
            p.call("fault", partition=[q.peer_id for q in majority])
        for p in majority:
            p.call("fault", partition=[q.peer_id for q in minority])
        x = minority[0].call("write", type="mq#v1", fields={"k": 1})["id"]
        for p in minority:
            wait_until(lambda: p.call("read", type="mq#v1")["entry"], 10,
                       "the task on " + p.name)
        # Three of eight, relays or not, are no majority.
        for p in minority:
            got = p.call("take", type="mq#v1", timeout_ms=1000)["entry"]
            assert got is None, got
        assert sum(p.counter("takes.won") for p in minority) == 0
        assert sum(p.counter("takes.no_quorum") for p in minority) >= 1
        for p in peers:
            p.call("fault", clear=True)
        # After the heal the task is taken, once.
        wait_until(lambda: any(p.call("take", type="mq#v1",
                                      timeout_ms=500)["entry"]
                               for p in peers), 30, "the take after the heal")
        got = takes_of(peers)
        assert got == [x], got


if __name__ == "__main__":
    run([test_quorum_majority_takes_minority_never_wins,
         test_quorum_minority_claim_wins_after_the_heal,
         test_quorum_partial_views_every_task_once,
         test_lease_partial_views_fleet_size_every_task_once,
         test_quorum_partial_views_minority_never_wins])

#!/usr/bin/env python3
"""Set reconciliation between real peers: every method (digest, negentropy,
riblt) ends with both replicas equal after a difference both ways; a
changed state (a completion one side missed) reconciles, not only
presence; a newcomer catches up by the configured method when its link
comes up, and fetches each record once when it links to several peers at
once (one session at a time per peer); the bulk loader gives two peers
the very same common records."""
import time

from fleet import Fleet, run, wait_until

# No periodic anti-entropy: only the calls under test reconcile.
QUIET = ["--gossip-ms", "3600000"]
STAMP = int(time.time() * 1000)


def bulk(p, name, seed, count, start=0, stamp_ms=STAMP):
    p.call("load", op="bulk", name=name, seed=seed, count=count,
           stamp_ms=stamp_ms, payload_bytes=32, **{"from": start})
    wait_until(lambda: not p.call("load", op="status", name=name)
               ["loads"][0]["running"], 60, "bulk load %s" % name)
    st = p.call("load", op="status", name=name)["loads"][0]
    assert st["written"] == count and st["errors"] == 0, st


def space(p):
    return p.call("dump", limit=0)["space"]


def test_bulk_loads_are_identical():
    with Fleet(extra=QUIET) as f:
        a, b = f.start(2)
        bulk(a, "c", 7, 500)
        bulk(b, "c", 7, 500)
        assert space(a)["records"] == 500
        assert space(a)["digest"] == space(b)["digest"]
        bulk(b, "d", 8, 1)
        assert space(a)["digest"] != space(b)["digest"]


def test_every_method_reconciles_both_ways():
    with Fleet(extra=QUIET) as f:
        a, b = f.start(2)
        bulk(a, "c", 1, 3000)
        bulk(b, "c", 1, 3000)
        total = 3000
        for k, method in enumerate(["digest", "negentropy", "riblt"]):
            bulk(a, "a%d" % k, 100 + k, 20)
            bulk(b, "b%d" % k, 200 + k, 25)
            total += 45
            assert space(a)["digest"] != space(b)["digest"]
            r = a.call("reconcile", peer=b.name, method=method)
            assert r["method"] == method, r
            sa, sb = space(a), space(b)
            assert sa["records"] == sb["records"] == total, (method, sa, sb)
            assert sa["digest"] == sb["digest"], method
            assert r["rounds"] >= 1 and r["bytes"] > 0, r
            if method != "digest":
                # only the difference moves: 20 one way, 25 the other
                assert r["records"] == 45, r
        # Nothing differs: nothing moves.
        r = a.call("reconcile", peer=b.name, method="riblt")
        assert r["records"] == 0 and r["rounds"] <= 2, r
        r = b.call("reconcile", peer=a.name, method="negentropy")
        assert r["records"] == 0, r


def test_changed_state_reconciles():
    with Fleet(extra=QUIET) as f:
        a, b = f.start(2)
        bulk(a, "c", 3, 200)
        bulk(b, "c", 3, 200)
        # Take on a (a take is trusted only once b has answered its claim:
        # docs/protocol.md section 6), then cut b off and complete it: b
        # misses the change of state.
        got = a.call("take", type="task#v1")["entry"]
        a.call("fault", peer=b.name, drop=1.0)
        a.call("complete", id=got["id"])
        a.call("fault", clear=True)
        assert space(a)["digest"] != space(b)["digest"]
        for method in ["negentropy", "riblt"]:
            r = a.call("reconcile", peer=b.name, method=method)
            assert space(a)["digest"] == space(b)["digest"], method
            # the one changed record moves, in at least one direction
            assert 1 <= r["records"] <= 2, r
            got = a.call("take", type="task#v1")["entry"]
            a.call("fault", peer=b.name, drop=1.0)
            a.call("complete", id=got["id"])
            a.call("fault", clear=True)


def test_newcomer_catches_up_by_each_method():
    for method in ["negentropy", "riblt"]:
        with Fleet(extra=QUIET + ["--reconcile", method]) as f:
            a = f.add().start()
            bulk(a, "c", 5, 2500)
            b = f.add().start(seeds=[a.addr])
            wait_until(lambda: space(b)["records"] == 2500, 60,
                       "%s catch-up" % method)
            assert space(a)["digest"] == space(b)["digest"], method


def test_newcomer_fetches_each_record_once():
    # Two peers hold the same 3,000 records; a newcomer seeded with both
    # links to both at once.  One session at a time: the first closes the
    # difference, the second finds none, so each record arrives once.
    # (Two sessions at once delivered every record twice: 6,000.)  Frames
    # of more than 64 records are applied in slices on later loop turns.
    n = 3000
    for method in ["negentropy", "riblt"]:
        with Fleet(extra=QUIET + ["--reconcile", method]) as f:
            a = f.add().start()
            b = f.add().start()
            bulk(a, "c", 9, n)
            bulk(b, "c", 9, n)
            c = f.add().start(seeds=[a.addr, b.addr])
            wait_until(lambda: space(c)["records"] == n, 60,
                       "%s catch-up" % method)
            assert space(c)["digest"] == space(a)["digest"], method
            # Whatever a session of the link-up still had on its way has
            # reached c once a reconcile with each peer is over (links
            # keep order); those reconciles find nothing to move.
            for x in (a, b):
                r = wait_until(lambda: c.call("reconcile", peer=x.name),
                               60, "reconcile with %s" % x.name)
                assert r["records"] == 0, (method, r)
            got = c.counter("records.received")
            assert got == n, (method, got)
            assert c.counter("recon.records_deferred") > 0, method


def repairs(p):
    c = p.metrics()["counters"]
    return (c["recon.repairs_equal"], c["recon.repairs_moved"],
            c["recon.repairs_failed"])


def period(p):
    return p.metrics()["gauges"]["recon.repair_period_ms"]


def test_repair_between_equal_replicas_is_cheap_and_backs_off():
    # Repairs every 100 ms at first, at most every 800 ms once they find
    # nothing.
    with Fleet(extra=["--gossip-ms", "100", "--repair-max-ms", "800"]) as f:
        a, b = f.start(2)
        bulk(a, "c", 5, 300)
        bulk(b, "c", 5, 300)
        # Repairs that find nothing double the period up to the cap.
        wait_until(lambda: period(a) == 800 and period(b) == 800, 60,
                   "both repair periods backed off to --repair-max-ms")
        ma, mb = a.metrics()["counters"], b.metrics()["counters"]
        eq, moved, _ = map(sum, zip(repairs(a), repairs(b)))
        wait_until(lambda: repairs(a)[0] + repairs(b)[0] >= eq + 4,
                   60, "four more repairs that found the replicas equal")
        na, nb = a.metrics()["counters"], b.metrics()["counters"]
        n = repairs(a)[0] + repairs(b)[0] - eq
        assert repairs(a)[1] + repairs(b)[1] == moved, "nothing to move"

        def sent(kind, what="frames.out_by_kind"):
            return (na[what][kind] - ma[what][kind] +
                    nb[what][kind] - mb[what][kind])
        # Each equal repair: one small symbol frame, END 1, END 2 (no
        # END 3, no acks): three frames, a few hundred bytes.  Sessions in
        # flight at either edge of the window: allow one each.
        assert sent("recon_syms") <= n + 2, (sent("recon_syms"), n)
        assert sent("recon_ack") <= 2, sent("recon_ack")
        assert sent("recon_end") <= 2 * n + 4, (sent("recon_end"), n)
        per = (sent("recon_syms", "bytes.out_by_kind") +
               sent("recon_end", "bytes.out_by_kind")) / n
        assert per < 1500, per
        # A record one side missed: the next repair moves it.
        a.call("fault", peer=b.name, drop=1.0)
        a.call("write", type="task#v1", fields={"n": 1})
        a.call("fault", clear=True)
        wait_until(lambda: space(b)["records"] == 301, 30,
                   "the repair of the missed record")
        assert repairs(a)[1] + repairs(b)[1] > moved
        assert space(a)["digest"] == space(b)["digest"]


def horizon_items(p):
    return p.metrics()["counters"]["recon.horizon_items"]


def test_a_repair_inside_the_horizon_moves_nothing():
    # Records issued in the last --repair-horizon-ms are still on their
    # way on the broadcast tree: a periodic repair leaves them out on both
    # sides, finds the replicas equal and stays backed off.  A reconcile
    # command names no cut and moves them.
    old = STAMP - 600000
    with Fleet(extra=["--gossip-ms", "100", "--repair-max-ms", "800",
                      "--repair-horizon-ms", "60000"]) as f:
        a, b = f.start(2)
        bulk(a, "c", 5, 300, stamp_ms=old)
        bulk(b, "c", 5, 300, stamp_ms=old)
        wait_until(lambda: period(a) == 800 and period(b) == 800, 60,
                   "both repair periods backed off to --repair-max-ms")
        eq, moved, _ = map(sum, zip(repairs(a), repairs(b)))
        # Five records only a holds, issued now: inside the horizon.
        bulk(a, "d", 5, 5, start=300, stamp_ms=int(time.time() * 1000))
        wait_until(lambda: repairs(a)[0] + repairs(b)[0] >= eq + 4 and
                   horizon_items(a) >= 10, 60,
                   "four more repairs that found the replicas equal")
        assert repairs(a)[1] + repairs(b)[1] == moved, "nothing moved"
        assert period(a) == 800 and period(b) == 800
        assert space(b)["records"] == 300
        r = a.call("reconcile", peer=b.name, method="riblt")
        assert r["records"] == 5, r
        assert space(a)["digest"] == space(b)["digest"]


def test_a_record_lost_on_its_way_is_repaired_after_the_horizon():
    # A record dropped on its way to b is a difference once it is older
    # than the horizon, by every session method: the first periodic repair
    # after that moves it.
    old = STAMP - 600000
    for method in ["riblt", "negentropy"]:
        with Fleet(extra=["--gossip-ms", "100", "--repair-max-ms", "800",
                          "--repair-horizon-ms", "1500",
                          "--reconcile", method]) as f:
            a, b = f.start(2)
            bulk(a, "c", 5, 300, stamp_ms=old)
            bulk(b, "c", 5, 300, stamp_ms=old)
            wait_until(lambda: period(a) == 800 and period(b) == 800, 60,
                       "both repair periods backed off")
            moved = repairs(a)[1] + repairs(b)[1]
            t0 = time.monotonic()
            a.call("fault", peer=b.name, drop=1.0)
            a.call("write", type="task#v1", fields={"n": 1})
            a.call("fault", clear=True)
            wait_until(lambda: space(b)["records"] == 301, 30,
                       "%s: the repair of the lost record" % method)
            # Not before the horizon: the record was inside it until then
            # (a lower bound, which a slow box cannot break).
            assert time.monotonic() - t0 >= 1.5, method
            assert repairs(a)[1] + repairs(b)[1] > moved, method
            assert horizon_items(a) + horizon_items(b) > 0, method
            assert space(a)["digest"] == space(b)["digest"], method


def test_bad_arguments():
    with Fleet(extra=QUIET) as f:
        a, b = f.start(2)
        for args, code in [({"peer": "nobody"}, "not_found"),
                           ({"peer": b.name, "method": "x"}, "bad_args"),
                           ({"peer": b.name, "timeout_ms": 0}, "bad_args")]:
            try:
                a.call("reconcile", **args)
            except Exception as e:  # noqa: BLE001
                assert code in str(e), (args, e)
            else:
                raise AssertionError("accepted %r" % args)


if __name__ == "__main__":
    run([test_repair_between_equal_replicas_is_cheap_and_backs_off,
         test_bulk_loads_are_identical, test_every_method_reconciles_both_ways,
         test_changed_state_reconciles, test_newcomer_catches_up_by_each_method,
         test_newcomer_fetches_each_record_once,
         test_a_repair_inside_the_horizon_moves_nothing,
         test_a_record_lost_on_its_way_is_repaired_after_the_horizon,
         test_bad_arguments])

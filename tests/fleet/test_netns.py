#!/usr/bin/env python3
"""The netns launcher (docs/launchers.md), as root: churn and the partition
scenario pass at toy size with every peer in its own network namespace and
the partition made by nft in the kernel (its rule is read from a peer's
namespace while the split lasts); a peer SIGSTOPped from outside is caught
by the watchdog with its stack in hang/; nothing of a run is left after
it.  Skipped with a message when not root or without ip netns and nft."""
import os
import signal
import subprocess

from fleet import run, wait_until
from netns_util import (assert_nothing_left, purge, root_view, run_dir,
                        run_id, skip_unless_usable, timeline)
from test_orchestrate import (ORCH, Tmp, assert_all_gone, latest,
                              orchestrate, peer_pids, scenario_file)

NETNS = ["--launcher", "netns"]


def test_churn_on_netns():
    before = root_view()
    rid = None
    with Tmp() as out:
        try:
            p = orchestrate(NETNS + ["scenarios/churn.json", "--set",
                                     "entries=20"], out)
            d, rep = latest(out)
            rid = run_id(d)
            assert p.returncode == 0, p.stderr.decode()[-2000:]
            assert rep["status"] == "pass"
            assert rep["measures"]["history.lost"]["value"] == 0
            listens = [e["listen"] for e in timeline(d)
                       if e["event"] == "peer_started"]
            assert listens and all(a.startswith("10.77.") for a in listens), \
                listens
            assert_all_gone(peer_pids(d))
            assert_nothing_left(rid, before)
        finally:
            purge(rid)


def test_partition_by_the_kernel():
    before = root_view()
    rid = None
    with Tmp() as out:
        proc = subprocess.Popen(
            [ORCH] + NETNS + ["scenarios/partition_takes.json", "--set",
                              "tasks=20", "--set", "split_ms=3000",
                              # lease mode takes twice across a split by
                              # design (the scenario's description), on
                              # either launcher: quorum's checks must hold
                              "--set", "take_mode=quorum",
                              "--out", out, "-q"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            d = wait_until(lambda: run_dir(out), 30, "the run directory")
            rid = wait_until(lambda: run_id(d), 30, "the launcher's id")
            # The timeline's event comes just before the rule is set.
            wait_until(lambda: any(e["event"] == "fault" and
                                   e.get("layer") == "net" and
                                   e.get("peer") == 4
                                   for e in timeline(d)), 120,
                       "the split at the net layer")
            # While split: peer 3's namespace drops peers 0-2 (10.77.0.2-4).
            rules = subprocess.run(
                ["ip", "netns", "exec", "%s-3" % rid, "nft", "list", "table",
                 "inet", "fleetlab"], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
            rules = rules.stdout.decode() + rules.stderr.decode()
            assert "10.77.0.2" in rules and "drop" in rules, rules
            assert "10.77.0.6" not in rules, rules
            _, err = proc.communicate(timeout=200)
            assert proc.returncode == 0, err.decode()[-2000:]
            d, rep = latest(out)
            m = rep["measures"]
            assert m["history.lost"]["value"] == 0
            assert m["history.never_taken"]["value"] == 0
            notes = rep.get("notes", [])
            assert any("partition [[0,1,2],[3,4]] at layer net" in n
                       for n in notes), notes
            assert any("faults cleared" in n and "layer net" in n
                       for n in notes), notes
            assert_all_gone(peer_pids(d))
            assert_nothing_left(rid, before)
        finally:
            purge(rid, proc)


def test_a_stopped_peer_is_caught_on_netns():
    before = root_view()
    rid = None
    with Tmp() as out:
        steps = [{"action": "start"}, {"action": "wait", "until": "connected"},
                 {"action": "write", "name": "flood", "peer": 0,
                  "count": 1000000, "rate": 2000, "timeout_s": 300}]
        s = scenario_file(out, "stopped", steps, fleet={"peers": 3})
        proc = subprocess.Popen([ORCH] + NETNS + [s, "--out", out, "-q",
                                                  "--stall-s", "5"],
                                stderr=subprocess.PIPE)
        try:
            d = wait_until(lambda: run_dir(out), 30, "the run directory")
            wait_until(lambda: any(e["event"] == "step_start" and
                                   e.get("name") == "flood"
                                   for e in timeline(d)), 120, "the flood")
            rid = run_id(d)
            pids = peer_pids(d)
            os.kill(pids[1], signal.SIGSTOP)
            rc = proc.wait(100)
            err = proc.stderr.read().decode()
            assert rc == 2, err
            _, rep = latest(out)
            assert "p1 stuck" in rep["error"], rep["error"]
            with open(os.path.join(d, "hang", "1.stack.txt")) as fh:
                text = fh.read()
            assert "State:\tT" in text, text[-2000:]
            for k in range(3):
                assert os.path.exists(os.path.join(d, "hang",
                                                   "%d.stack.txt" % k))
            assert_all_gone(pids)
            assert_nothing_left(rid, before)
        finally:
            purge(rid, proc)


if __name__ == "__main__":
    skip_unless_usable("test_netns.py")
    run([test_churn_on_netns, test_partition_by_the_kernel,
         test_a_stopped_peer_is_caught_on_netns])

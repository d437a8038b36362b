#!/usr/bin/env python3
"""The netns launcher leaves nothing behind (docs/launchers.md): no
namespace, veth, nft table or state file after a failed run, after an
orchestrator stopped by SIGINT, or after one killed by SIGKILL (the next
netns run removes what it left, by its id).  Skipped with a message when
not root or without ip netns and nft."""
import os
import signal
import subprocess

from fleet import run, wait_until
from netns_util import (STATE_DIR, assert_nothing_left, left, purge,
                        root_view, run_dir, run_id, skip_unless_usable,
                        timeline)
from test_orchestrate import (ORCH, Tmp, alive, assert_all_gone, latest,
                              orchestrate, peer_pids, scenario_file)

NETNS = ["--launcher", "netns"]


def sleeping(out, name="sleeper"):
    """A run whose fleet is up and sleeping: the Popen, its run dir, id."""
    s = scenario_file(out, name, [
        {"action": "start"}, {"action": "wait", "until": "connected"},
        {"action": "sleep", "name": "nap", "ms": 120000}],
        fleet={"peers": 3})
    proc = subprocess.Popen([ORCH] + NETNS + [s, "--out", out, "-q"],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        d = wait_until(lambda: run_dir(out), 30, "the run directory")
        wait_until(lambda: any(e.get("name") == "nap" for e in timeline(d)),
                   120, "the fleet up")
    except Exception:
        purge(run_id(run_dir(out)) if run_dir(out) else None, proc)
        raise
    return proc, d, run_id(d)


def test_a_failed_run_leaves_nothing():
    before = root_view()
    rid = None
    with Tmp() as out:
        try:
            # A step that errs (a peer killed by the scenario, then
            # asked to write): the run ends in its error path.
            s = scenario_file(out, "failing", [
                {"action": "start"}, {"action": "wait", "until": "connected"},
                {"action": "kill", "peer": 1},
                {"action": "write", "peer": 1, "count": 1}])
            p = orchestrate(NETNS + [s], out)
            d, rep = latest(out)
            rid = run_id(d)
            assert p.returncode == 2 and rep["status"] == "error", \
                p.stderr.decode()[-2000:]
            assert_all_gone(peer_pids(d))
            assert_nothing_left(rid, before)
        finally:
            purge(rid)


def test_sigint_leaves_nothing():
    before = root_view()
    rid = None
    with Tmp() as out:
        proc = None
        try:
            proc, d, rid = sleeping(out)
            assert rid and left(rid), "the run made nothing?"
            proc.send_signal(signal.SIGINT)
            assert proc.wait(60) == 2
            assert_all_gone(peer_pids(d))
            assert_nothing_left(rid, before)
        finally:
            purge(rid, proc)


def test_sigkill_is_cleaned_by_the_next_run():
    before = root_view()
    rid = rid2 = None
    with Tmp() as out:
        proc = None
        try:
            proc, d, rid = sleeping(out)
            pids = peer_pids(d)
            proc.kill()
            proc.wait()
            # Its peers die with it (PDEATHSIG); its namespaces stay ...
            wait_until(lambda: not any(alive(p) for p in pids), 10,
                       "the killed run's peers gone")
            assert any(n.endswith("-sw") for n in left(rid)), left(rid)
            assert os.path.exists(os.path.join(STATE_DIR, rid + ".json"))
            # ... until the next netns run, which removes them by its id.
            s = scenario_file(out, "next", [
                {"action": "start"},
                {"action": "wait", "until": "connected"}])
            p = orchestrate(NETNS + [s], out)
            d2, _ = latest(out)
            rid2 = run_id(d2)
            assert p.returncode == 0, p.stderr.decode()[-2000:]
            assert left(rid) == [], left(rid)
            assert_nothing_left(rid2, before)
        finally:
            purge(rid, proc)
            purge(rid2)


if __name__ == "__main__":
    skip_unless_usable("test_netns_clean.py")
    run([test_a_failed_run_leaves_nothing, test_sigint_leaves_nothing,
         test_sigkill_is_cleaned_by_the_next_run])

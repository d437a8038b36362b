#!/usr/bin/env python3
"""The engine (docs/scenarios.md "The engine"): the watchdog watches during
every step — a peer stopped from outside during a write, a `wait visible`
and a fetch ends the run with exit 2, every peer's stack in hang/ and the
stopped peer named as stuck — and the history sees every write, waited for
or not."""
import json
import os
import signal
import subprocess
import time

from fleet import run, wait_until
from test_orchestrate import (ORCH, Tmp, assert_all_gone, latest,
                              peer_pids, scenario_file)

STALL_S = 5
STEP_S = 300        # every step's own bound: far beyond the watchdog's


def step_started(d, name):
    path = os.path.join(d, "timeline.ndjson")
    if not os.path.exists(path):
        return False
    with open(path) as fh:
        for ln in fh:
            ev = json.loads(ln)
            if ev.get("event") == "step_start" and ev.get("name") == name:
                return True
    return False


def stop_during(out, steps, step, victim, peers=3, stall_s=STALL_S):
    """Run steps; SIGSTOP peer victim once step has started.  Returns the
    exit status, stderr, the run directory and the seconds from the stop
    to the end of the run."""
    for st in steps:
        st.setdefault("timeout_s", STEP_S)
    s = scenario_file(out, "stopped", steps, fleet={"peers": peers})
    proc = subprocess.Popen([ORCH, s, "--out", out, "-q", "--stall-s",
                             str(stall_s)], stderr=subprocess.PIPE)
    try:
        d = wait_until(lambda: os.path.realpath(os.path.join(out, "latest"))
                       if os.path.exists(os.path.join(out, "latest"))
                       else None, 30, "the run directory")
        wait_until(lambda: step_started(d, step), 120, "step " + step)
        pids = peer_pids(d)
        os.kill(pids[victim], signal.SIGSTOP)
        t0 = time.monotonic()
        # Far less than the step's own bound: the watchdog ends it.
        rc = proc.wait(STEP_S / 3)
        took = time.monotonic() - t0
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return rc, err, d, took, pids


def assert_captured(rc, err, d, pids, victim, step):
    assert rc == 2, err
    _, rep = latest(os.path.dirname(d))
    e = rep["error"]
    assert "watchdog" in e and "p%d" % victim in e, e
    assert "p%d stuck" % victim in e, e
    assert step in e, e
    hang = os.path.join(d, "hang")
    for k in range(len(pids)):
        assert os.path.exists(os.path.join(hang, "%d.stack.txt" % k)), k
    with open(os.path.join(hang, "%d.stack.txt" % victim)) as fh:
        text = fh.read()
    assert "stopped" in text and "State:\tT" in text, text[-2000:]
    with open(os.path.join(hang, "README.txt")) as fh:
        readme = fh.read()
    for k in range(len(pids)):
        assert "p%d " % k in readme, readme
    assert any("watchdog: p%d is stuck" % victim in n
               for n in rep.get("notes", [])), rep.get("notes")
    assert_all_gone(pids)


def test_stop_during_a_write_step():
    with Tmp() as out:
        steps = [{"action": "start"}, {"action": "wait", "until": "connected"},
                 {"action": "write", "name": "flood", "peer": 0,
                  "count": 1000000, "rate": 2000}]
        rc, err, d, took, pids = stop_during(out, steps, "flood", 0)
        assert_captured(rc, err, d, pids, 0, "flood")


def unseen_steps():
    """p2 is cut off, so "visible" cannot hold and the step keeps asking."""
    return [{"action": "start"}, {"action": "wait", "until": "connected"},
            {"action": "fault", "partition": [[0, 1], [2]]},
            {"action": "write", "peer": 0, "count": 5},
            {"action": "wait", "name": "seen", "until": "visible"}]


def test_stop_during_a_wait_visible_step():
    with Tmp() as out:
        rc, err, d, took, pids = stop_during(out, unseen_steps(), "seen", 1)
        assert_captured(rc, err, d, pids, 1, "seen")


def test_a_stall_before_the_hello_bound_still_names_the_stopped_peer():
    with Tmp() as out:
        # A stall of 2 s mostly trips before a hello's 5 s bound (the CI
        # failure of 5a8cf19's parent: the error then named nobody), so the
        # stopped peer must be found by its state.  Whether the fleet is
        # quiet for 2 s is not ours to fix (p0 keeps repairing with p1 or
        # pinging it), so when the hello's bound comes first the peer is
        # named that way; either way it must be named.
        rc, err, d, took, pids = stop_during(out, unseen_steps(), "seen", 1,
                                             stall_s=2)
        assert_captured(rc, err, d, pids, 1, "seen")
        _, rep = latest(os.path.dirname(d))
        assert ("no activity for 2 s" in rep["error"] or
                "missed a bound" in rep["error"]), rep["error"]


def test_stop_during_a_fetch_step():
    with Tmp() as out:
        # The publisher's frames are slowed so the fetch lasts.
        steps = [{"action": "start"}, {"action": "wait", "until": "connected"},
                 {"action": "publish", "peer": 0, "mebibytes": 16,
                  "piece_kib": 256},
                 {"action": "fault", "peer": 0, "delay_ms": 3000},
                 {"action": "fetch", "name": "get", "peer": [1, 2]}]
        rc, err, d, took, pids = stop_during(out, steps, "get", 1)
        assert_captured(rc, err, d, pids, 1, "get")


def test_a_pause_by_the_scenario_is_not_a_hang():
    with Tmp() as out:
        # Longer than a hello's bound: a hello in flight at the pause gets
        # no answer, and that is not the peer's fault.
        s = scenario_file(out, "paused", [
            {"action": "start"}, {"action": "wait", "until": "connected"},
            {"action": "pause", "peer": 1}, {"action": "sleep", "ms": 7000},
            {"action": "resume", "peer": 1},
            {"action": "wait", "until": "connected"}], fleet={"peers": 3})
        p = subprocess.run([ORCH, s, "--out", out, "-q"],
                           stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0, p.stderr.decode()
        _, rep = latest(out)
        assert any("pause p1 (SIGSTOP" in n for n in rep["notes"]), rep
        assert any("resume p1 (SIGCONT" in n for n in rep["notes"]), rep


def history_run(out, steps, checks):
    s = scenario_file(out, "hist", steps, checks=checks,
                      fleet={"peers": 3})
    p = subprocess.run([ORCH, s, "--out", out, "-q"], stderr=subprocess.PIPE,
                       timeout=240)
    _, rep = latest(out)
    return p.returncode, p.stderr.decode(), rep


def measure(rep, name):
    m = rep["measures"].get(name)
    return None if m is None else m.get("value")


def test_unwaited_writes_lost_on_purpose_are_reported_lost():
    with Tmp() as out:
        # The writer is cut off, writes without waiting, and is killed
        # before its entries can spread.
        steps = [{"action": "start"}, {"action": "wait", "until": "connected"},
                 {"action": "fault", "partition": [[0], [1, 2]]},
                 {"action": "write", "peer": 0, "count": 40, "wait": False},
                 {"action": "wait", "until": "metric",
                  "metric": "counters.space.writes", "op": ">=", "value": 40},
                 {"action": "kill", "peer": 0}]
        rc, err, rep = history_run(out, steps, [
            {"name": "all lost", "metric": "history.lost", "op": "==",
             "bound": 40}])
        assert rc == 0, (err, rep.get("checks"))
        assert measure(rep, "history.writes") == 40, rep["measures"]
        assert measure(rep, "history.lost") == 40, rep["measures"]
        # The report's notes list the partition and the kill, with the
        # time and the step of each.
        notes = rep["notes"]
        assert any(", step fault#2: partition [[0],[1,2]]" in n
                   for n in notes), notes
        assert any(", step kill#5: kill p0 (SIGKILL" in n
                   for n in notes), notes


def test_unwaited_writes_that_arrive_are_counted_and_none_lost():
    with Tmp() as out:
        steps = [{"action": "start"}, {"action": "wait", "until": "connected"},
                 {"action": "write", "peer": 0, "count": 60, "wait": False},
                 {"action": "wait", "until": "visible"}]
        rc, err, rep = history_run(out, steps, [
            {"name": "nothing lost", "metric": "history.lost", "op": "==",
             "bound": 0},
            {"name": "every write seen", "metric": "history.writes",
             "op": "==", "bound": 60}])
        assert rc == 0, (err, rep.get("checks"))
        assert measure(rep, "history.writes") == 60, rep["measures"]
        assert measure(rep, "history.lost") == 0, rep["measures"]


def run_builtin(out, name, *sets):
    """Run scenarios/NAME.json with --set each of sets; its report."""
    args = [ORCH, "scenarios/%s.json" % name]
    for kv in sets:
        args += ["--set", kv]
    p = subprocess.run(args + ["--out", out, "-q"], stderr=subprocess.PIPE,
                       timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    return latest(out)[1]


def test_scale_scenario_measures_the_start_and_a_sample_round():
    with Tmp() as out:
        rep = run_builtin(out, "scale", "peers=20", "sample_ms=2500")
        assert measure(rep, "fleet.start_ms") > 0, rep["measures"]
        assert measure(rep, "engine.sample_round_ms") is not None
        d = os.path.join(out, "latest")
        with open(os.path.join(d, "samples.ndjson")) as fh:
            peers = {json.loads(ln)["peer"] for ln in fh}
        assert peers == set(range(20)), peers


def test_rest_measures_the_background_per_peer():
    with Tmp() as out:
        rep = run_builtin(out, "rest", "peers=4", "rest_ms=2000")
        m = rep["measures"]
        for k in ("fleet.rest_frames_per_peer_s", "fleet.rest_bytes_per_peer_s",
                  "fleet.rest_cpu_ms_per_peer_s",
                  "fleet.rest_wakeups_per_peer_s"):
            assert k in m and m[k]["value"] >= 0, (k, m.get(k))
        # A peer at rest still wakes for its tick and its repairs.
        assert m["fleet.rest_wakeups_per_peer_s"]["value"] > 0, m
        # Four peers at rest still repair: some frames, and the note names
        # the kinds they were.
        assert m["fleet.rest_frames_per_peer_s"]["value"] > 0, m
        notes = [n for n in rep["notes"] if n.startswith("rest: 4 peers")]
        assert notes and "recon_" in notes[0], rep["notes"]


def test_a_crash_or_an_interrupt_ends_a_long_sleep_at_once():
    """A sleep step waits for its end, a child's exit or an interrupt, not
    in polls: each of the last two still ends a 200 s sleep long before
    its end (the run fails naming the crash, or says it was
    interrupted)."""
    for how in ("crash", "interrupt"):
        with Tmp() as out:
            s = scenario_file(out, "sleepy", [
                {"action": "start"},
                {"action": "sleep", "name": "long", "ms": 200000,
                 "timeout_s": STEP_S}])
            proc = subprocess.Popen([ORCH, s, "--out", out, "-q"],
                                    stderr=subprocess.PIPE)
            try:
                d = wait_until(lambda: os.path.realpath(
                    os.path.join(out, "latest"))
                    if os.path.exists(os.path.join(out, "latest"))
                    else None, 30, "the run directory")
                wait_until(lambda: step_started(d, "long"), 60,
                           "the sleep step")
                pids = peer_pids(d)
                if how == "crash":
                    os.kill(pids[1], signal.SIGKILL)
                else:
                    os.kill(proc.pid, signal.SIGINT)
                rc = proc.wait(100)     # half the sleep: it did not wait
                err = proc.stderr.read().decode()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            assert rc != 0, err
            _, rep = latest(out)
            want = "p1 crashed" if how == "crash" else "interrupted"
            assert want in rep["error"], (how, rep["error"])
            assert_all_gone(pids)


if __name__ == "__main__":
    run([test_stop_during_a_write_step, test_stop_during_a_wait_visible_step,
         test_a_stall_before_the_hello_bound_still_names_the_stopped_peer,
         test_stop_during_a_fetch_step,
         test_a_pause_by_the_scenario_is_not_a_hang,
         test_unwaited_writes_lost_on_purpose_are_reported_lost,
         test_unwaited_writes_that_arrive_are_counted_and_none_lost,
         test_scale_scenario_measures_the_start_and_a_sample_round,
         test_rest_measures_the_background_per_peer,
         test_a_crash_or_an_interrupt_ends_a_long_sleep_at_once])

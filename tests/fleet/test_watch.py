#!/usr/bin/env python3
"""The watchdog's own call (docs/scenarios.md "The engine"): each running peer
gets one call a tick, the sample's `metrics` when a sample round is due, else
a `hello`.  A peer stopped from outside during a plain sleep (no step calls
it, the stall check off) must still be found stuck by the watchdog, long
before the sleep would end, whether the samples carry the watchdog
(sample_ms 1000), come between hellos (sample_ms 3000) or are off (hellos
only).  The test asserts what ended the run and in which order, not how
many seconds it took."""
import json
import os
import signal
import subprocess

from fleet import run, wait_until
from test_engine import step_started
from test_orchestrate import ORCH, Tmp, assert_all_gone, latest, peer_pids

SLEEP_MS = 60000        # far beyond the watchdog's bound (tick + 5 s call
                        # + graces): only the watchdog ends it


def timeline(d):
    with open(os.path.join(d, "timeline.ndjson")) as fh:
        return [json.loads(ln) for ln in fh]


def stopped_in_a_sleep(sample_ms, extra=()):
    with Tmp() as out:
        s = os.path.join(out, "sleep.json")
        with open(s, "w") as fh:
            json.dump({"name": "sleep", "description": "test scenario",
                       "sample_ms": sample_ms, "fleet": {"peers": 3},
                       "steps": [{"action": "start"},
                                 {"action": "wait", "until": "connected"},
                                 {"action": "sleep", "name": "nap",
                                  "ms": SLEEP_MS, "timeout_s": 300}],
                       "checks": []}, fh)
        proc = subprocess.Popen([ORCH, s, "--out", out, "-q", "--stall-s",
                                 "0", *extra], stderr=subprocess.PIPE)
        try:
            d = wait_until(lambda: os.path.realpath(os.path.join(
                out, "latest")) if os.path.exists(os.path.join(
                    out, "latest")) else None, 30, "the run directory")
            wait_until(lambda: step_started(d, "nap"), 120, "step nap")
            pids = peer_pids(d)
            os.kill(pids[1], signal.SIGSTOP)
            rc = proc.wait(SLEEP_MS / 1000 * 2)
            err = proc.stderr.read().decode()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert rc == 2, (rc, err)
        _, rep = latest(out)
        assert "p1 stuck" in rep["error"], rep["error"]
        ev = timeline(d)
        nap = [e["t_ms"] for e in ev if e.get("event") == "step_start" and
               e.get("name") == "nap"][0]
        trip = [e for e in ev if e.get("event") == "watchdog"][0]
        assert trip["peer"] == "p1" and "timeout" in trip["why"], trip
        # The watchdog ended the nap: its trip came before the nap's end.
        assert nap < trip["t_ms"] < nap + SLEEP_MS, (nap, trip)
        assert_all_gone(pids)


def test_a_stopped_peer_is_found_when_the_samples_carry_the_watchdog():
    stopped_in_a_sleep(1000)


def test_a_stopped_peer_is_found_between_samples():
    stopped_in_a_sleep(3000)


def test_a_stopped_peer_is_found_with_the_samples_off():
    stopped_in_a_sleep(0)


def test_a_stopped_peer_is_found_with_a_longer_round():
    """--watch-ms 4000 (the round a fleet of 800 peers gets by its size):
    the stopped peer is still found, and within the sleep."""
    stopped_in_a_sleep(1000, ("--watch-ms", "4000"))


def control_requests_in_a_sleep(extra):
    """Each peer's control.requests at the end of a run whose only step
    after connecting is a 6 s sleep with the samples off: the watchdog's
    hellos, and the engine's fixed calls around them (the same in every
    run)."""
    with Tmp() as out:
        s = os.path.join(out, "sleep.json")
        with open(s, "w") as fh:
            json.dump({"name": "sleep", "description": "test scenario",
                       "sample_ms": 0, "fleet": {"peers": 3},
                       "steps": [{"action": "start"},
                                 {"action": "wait", "until": "connected"},
                                 {"action": "sleep", "name": "nap",
                                  "ms": 6000}],
                       "checks": []}, fh)
        subprocess.run([ORCH, s, "--out", out, "-q", *extra], check=True,
                       timeout=120)
        d, _ = latest(out)
        got = []
        for k in range(3):
            with open(os.path.join(d, "peers", str(k), "metrics.json")) as fh:
                got.append(json.load(fh)["counters"]["control.requests"])
        return got


def test_the_round_sets_how_often_a_peer_is_called():
    """One call a round to each peer: with a 3 s round a 6 s sleep brings
    each peer about two hellos, with the default 1 s round about six."""
    short = control_requests_in_a_sleep(())
    long = control_requests_in_a_sleep(("--watch-ms", "3000"))
    for k in range(3):
        assert long[k] + 2 <= short[k], (k, short, long)


if __name__ == "__main__":
    run([test_a_stopped_peer_is_found_when_the_samples_carry_the_watchdog,
         test_a_stopped_peer_is_found_with_a_longer_round,
         test_the_round_sets_how_often_a_peer_is_called,
         test_a_stopped_peer_is_found_between_samples,
         test_a_stopped_peer_is_found_with_the_samples_off])

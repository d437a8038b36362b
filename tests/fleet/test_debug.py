#!/usr/bin/env python3
"""Debugging a fleet process by process (docs/debugging.md): hold then
continue, a wrapper in front of a peer, keep then down, the watchdog on a
real hang and on a peer stopped from outside, and replay."""
import json
import os
import shutil
import signal
import subprocess
import tempfile

from fleet import BUILD, Control, run, wait_until
from test_orchestrate import (ORCH, alive, assert_all_gone, latest,
                              peer_pids, scenario_file)

HAVE_GDB = shutil.which("gdb") is not None


class Tmp:
    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="dbg-", dir="/tmp")
        return self.dir

    def __exit__(self, *exc):
        if exc[0] is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def toy(out, name="toy", fleet=None, tail=()):
    return scenario_file(out, name, [
        {"action": "start"}, {"action": "wait", "until": "connected"},
        {"action": "write", "peer": 0, "count": 5},
        {"action": "wait", "until": "visible"}] + list(tail),
        checks=[{"name": "nothing lost", "metric": "history.lost",
                 "op": "==", "bound": 0}], fleet=fleet)


def running_dir(out, n):
    return wait_until(lambda: os.path.realpath(os.path.join(out, "latest"))
                      if len(peer_pids(os.path.join(out, "latest"))) >= n
                      else None, 30, "%d peers started" % n)


def test_hold_then_continue():
    with Tmp() as out:
        proc = subprocess.Popen([ORCH, toy(out), "--out", out, "--hold", "1"],
                                stderr=subprocess.PIPE)
        pid = None
        while pid is None:
            line = proc.stderr.readline().decode()
            assert line, "orchestrate ended without a hold line"
            if "gdb -p" in line:
                pid = int(line.split("gdb -p")[1].split()[0])
        with open("/proc/%d/stat" % pid) as fh:
            state = fh.read().split(")")[1].split()[0]
        assert state in ("T", "t"), state
        os.kill(pid, signal.SIGCONT)
        proc.stderr.read()
        assert proc.wait(120) == 0


def test_wrap_with_a_harmless_wrapper():
    with Tmp() as out:
        p = subprocess.run([ORCH, toy(out), "--out", out, "-q", "--wrap",
                            "0=env FLEET_WRAPPED={name} FLEET_DIR={dir}"],
                           stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0, p.stderr.decode()
        d, _ = latest(out)
        with open(os.path.join(d, "run.json")) as fh:
            peers = json.load(fh)["peers"]
        assert peers[0]["cmdline"].startswith("env FLEET_WRAPPED=p0 "
                                              "FLEET_DIR="), peers[0]
        assert "/peers/0 " in peers[0]["cmdline"]
        assert not peers[1]["cmdline"].startswith("env")


def test_keep_then_down():
    with Tmp() as out:
        p = subprocess.run([ORCH, toy(out), "--out", out, "-q", "--keep"],
                           stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0, p.stderr.decode()
        d, _ = latest(out)
        with open(os.path.join(d, "run.json")) as fh:
            peers = json.load(fh)["peers"]
        pids = [q["peerd_pid"] for q in peers]
        try:
            assert all(alive(q) for q in pids)
            ctl = Control(peers[1]["control"])
            assert ctl.call("hello")["name"] == "p1"
            assert len(ctl.call("read", type="task#v1", all=True)[
                "entries"]) == 5
            ctl.close()
            peerctl = subprocess.run([os.path.join(BUILD, "peerctl"),
                                      peers[0]["control"], "hello"],
                                     stdout=subprocess.PIPE, timeout=10)
            assert peerctl.returncode == 0
            assert json.loads(peerctl.stdout)["name"] == "p0"
            down = subprocess.run([ORCH, "down", d], stdout=subprocess.PIPE,
                                  timeout=30)
            assert down.returncode == 0
            assert_all_gone(pids)
        finally:
            for q in pids:
                if alive(q):
                    os.kill(q, signal.SIGKILL)


def hang_run(out, provoke, stall_s=30):
    s = scenario_file(out, "hang", [
        {"action": "start"}, {"action": "wait", "until": "connected"},
        {"action": "mark", "label": "ready"},
        {"action": "sleep", "ms": 100000, "timeout_s": 200}],
        fleet={"peers": 3, "knobs": {"test-hooks": 1}})
    proc = subprocess.Popen([ORCH, s, "--out", out, "-q", "--stall-s",
                             str(stall_s)], stderr=subprocess.PIPE)
    d = running_dir(out, 3)

    def marked():
        with open(os.path.join(d, "timeline.ndjson")) as fh:
            return any('"step_start"' in ln and '"mark' in ln for ln in fh)
    wait_until(marked, 30, "the mark step")
    provoke(d)
    rc = proc.wait(120)
    err = proc.stderr.read().decode()
    return rc, err, d


def test_watchdog_captures_a_real_hang():
    with Tmp() as out:
        def hang_peer_1(d):
            ctl = Control(os.path.join(d, "peers", "1", "control.sock"))
            ctl.send_raw(b'{"id": 1, "cmd": "debug", "args": {"hang": true}}\n')
        rc, err, d = hang_run(out, hang_peer_1)
        assert rc == 2, err
        _, rep = latest(out)
        assert "p1" in rep["error"] and "stuck" in rep["error"], rep["error"]
        stack = os.path.join(d, "hang", "1.stack.txt")
        assert os.path.exists(stack)
        with open(stack) as fh:
            text = fh.read()
        if HAVE_GDB:
            assert "debug_block_forever" in text, text[-3000:]
        assert os.path.exists(os.path.join(d, "hang", "0.dump.json"))
        assert os.path.exists(os.path.join(d, "hang", "README.txt"))
        assert_all_gone(peer_pids(d))


def test_watchdog_reports_a_peer_stopped_from_outside():
    with Tmp() as out:
        def stop_peer_2(d):
            os.kill(peer_pids(d)[2], signal.SIGSTOP)
        rc, err, d = hang_run(out, stop_peer_2)
        assert rc == 2, err
        _, rep = latest(out)
        assert "p2" in rep["error"], rep["error"]
        assert os.path.exists(os.path.join(d, "hang", "2.stack.txt"))
        assert_all_gone(peer_pids(d))


def test_watchdog_waits_for_a_peer_short_of_cpu():
    """A peer whose loop is busy for 8 s (burning CPU, as on a host with a
    thousand peers on two cores) misses the 5 s hello bound but is not
    hung: the run waits for it, passes, and its notes say it waited."""
    with Tmp() as out:
        s = scenario_file(out, "spin", [
            {"action": "start"}, {"action": "wait", "until": "connected"},
            {"action": "mark", "label": "ready"},
            {"action": "sleep", "ms": 12000},
            {"action": "write", "peer": 0, "count": 5},
            {"action": "wait", "until": "visible"}],
            checks=[{"name": "nothing lost", "metric": "history.lost",
                     "op": "==", "bound": 0}],
            fleet={"peers": 3, "knobs": {"test-hooks": 1}})
        proc = subprocess.Popen([ORCH, s, "--out", out, "-q"],
                                stderr=subprocess.PIPE)
        d = running_dir(out, 3)
        wait_until(lambda: any('"step_start"' in ln and '"mark' in ln
                               for ln in open(os.path.join(
                                   d, "timeline.ndjson"))),
                   30, "the mark step")
        ctl = Control(os.path.join(d, "peers", "1", "control.sock"))
        ctl.send_raw(b'{"id": 1, "cmd": "debug", "args": {"spin_ms": 8000}}\n')
        rc = proc.wait(120)
        err = proc.stderr.read().decode()
        assert rc == 0, err
        _, rep = latest(out)
        notes = " ".join(str(n) for n in rep.get("notes", []))
        assert "were waited for" in notes and "p1" in notes, notes
        assert not os.path.exists(os.path.join(d, "hang"))
        assert_all_gone(peer_pids(d))


def test_replay_of_a_toy_run_reports_no_divergence():
    with Tmp() as out:
        p = subprocess.run([ORCH, toy(out), "--out", out, "-q", "--seed",
                            "42"], stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0, p.stderr.decode()
        first = os.path.realpath(os.path.join(out, "latest"))
        r = subprocess.run([ORCH, "replay", first, "--out", out, "-q"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        assert r.returncode == 0, (r.stdout.decode(), r.stderr.decode())
        assert b"no divergence" in r.stdout
        second = os.path.realpath(os.path.join(out, "latest"))
        assert second != first
        with open(os.path.join(second, "scenario.json")) as fh:
            assert json.load(fh)["seed"] == 42


if __name__ == "__main__":
    run([test_hold_then_continue, test_wrap_with_a_harmless_wrapper,
         test_keep_then_down, test_watchdog_captures_a_real_hang,
         test_watchdog_reports_a_peer_stopped_from_outside,
         test_watchdog_waits_for_a_peer_short_of_cpu,
         test_replay_of_a_toy_run_reports_no_divergence])

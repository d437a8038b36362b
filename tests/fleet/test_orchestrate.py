#!/usr/bin/env python3
"""orchestrate end to end at toy scale: every built-in scenario through the
real binaries, the bundle it writes, the exit codes (0 pass, 1 a failing
check, 2 a run that could not complete), and teardown on every path: no
peerd outlives a run, even when the orchestrator is interrupted or killed."""
import json
import os
import shutil
import signal
import subprocess
import tempfile

from fleet import BUILD, pause, run, wait_until

ORCH = os.path.join(BUILD, "orchestrate")


def orchestrate(args, out, timeout=240):
    return subprocess.run([ORCH] + args + ["--out", out, "-q"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def latest(out):
    d = os.path.join(out, "latest")
    with open(os.path.join(d, "report.json")) as fh:
        return d, json.load(fh)


def peer_pids(run_dir):
    """Every pid the run started, in peer index order (a start step forks
    a peer once its seeds are ready, so the timeline's order is not the
    index order); a restarted peer's pids stand together."""
    started = []
    path = os.path.join(run_dir, "timeline.ndjson")
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        for line in fh:
            ev = json.loads(line)
            if ev["event"] == "peer_started":
                started.append((ev.get("peer", 0), ev["pid"]))
    return [pid for _, pid in sorted(started, key=lambda e: e[0])]


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().split(")")[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def assert_all_gone(pids):
    wait_until(lambda: not any(alive(p) for p in pids), 2.0,
               "every peerd to be gone: %s" % pids)


def scenario_file(tmp, name, steps, checks=(), fleet=None):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as fh:
        json.dump({"name": name, "description": "test scenario",
                   "fleet": fleet or {"peers": 2},
                   "steps": steps, "checks": list(checks)}, fh)
    return path


class Tmp:
    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="orch-", dir="/tmp")
        return self.dir

    def __exit__(self, *exc):
        if exc[0] is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def test_builtin_scenarios_pass_and_write_the_bundle():
    toy = {"churn": ["--set", "entries=20"],
           "throughput": ["--set", "tasks=30"],
           "gossip": ["--set", "entries=20"],
           "swarm": ["--set", "peers=3", "--set", "mebibytes=2",
                     "--set", "piece_kib=64"],
           "reconcile": ["--set", "entries=1500", "--set", "diff=60"]}
    with Tmp() as out:
        for name, sets in toy.items():
            p = orchestrate(["scenarios/%s.json" % name] + sets, out)
            assert p.returncode == 0, (name, p.stderr.decode()[-2000:])
            d, rep = latest(out)
            assert rep["scenario"] == name and rep["status"] == "pass"
            for f in ("scenario.json", "run.json", "timeline.ndjson",
                      "report.md", "report.csv", "report.json"):
                assert os.path.exists(os.path.join(d, f)), f
            assert all(c["result"] == "PASS" for c in rep["checks"])
            for peer in rep["peers"]:
                k = peer["index"]
                assert os.path.exists(os.path.join(
                    d, "peers", str(k), "peerd.log"))
            assert_all_gone(peer_pids(d))
            m = rep["measures"]
            if name == "churn":
                assert m["history.lost"]["value"] == 0
                assert "churn.catch_up_ms" in m
            if name == "throughput":
                assert m["history.duplicates"]["value"] == 0
                assert m["throughput.takes_per_s"]["value"] > 0
                assert m["throughput.write_to_take"]["count"] > 0
            if name == "gossip":
                assert m["gossip.write_to_visible"]["count"] > 0
            if name == "reconcile":
                for meth in ("digest", "negentropy", "riblt"):
                    assert m["reconcile.%s.equal" % meth]["value"] == 1
                    assert m["reconcile.%s.bytes" % meth]["value"] > 0
                for meth in ("negentropy", "riblt"):
                    assert m["reconcile.%s.records" % meth]["value"] == 60
            if name == "swarm":
                assert m["swarm.verified"]["value"] == 2
                assert 0 < m["swarm.seeder_share"]["value"] <= 1
                assert m["swarm.raw_stream_mib_s"]["value"] > 0
                assert m["swarm.ratio_to_raw"]["value"] > 0
                assert all(f["verified"] for f in rep["swarm"]["fetchers"])
                # Verified copies are removed after a PASS; the store's
                # manifest and map stay.
                cid = rep["swarm"]["cid"]
                for k in range(3):
                    store = os.path.join(d, "peers", str(k), "content", cid)
                    assert not os.path.exists(os.path.join(store, "data"))
                    assert os.path.exists(os.path.join(store, "manifest"))
                assert any("removed 3 verified copies" in n
                           for n in rep["notes"]), rep["notes"]
                p = orchestrate(["scenarios/swarm.json", "--keep-content"] +
                                sets, out)
                assert p.returncode == 0, p.stderr.decode()[-2000:]
                d, rep = latest(out)
                for k in range(3):
                    assert os.path.getsize(os.path.join(
                        d, "peers", str(k), "content", cid, "data")) == \
                        2 << 20
            with open(os.path.join(d, "run.json")) as fh:
                rj = json.load(fh)
            assert all("cmdline" in p for p in rj["peers"])


def test_failing_check_exits_1_unknown_is_not_pass():
    with Tmp() as out:
        s = scenario_file(out, "failing", [
            {"action": "start"}, {"action": "wait", "until": "connected"},
            {"action": "write", "peer": 0, "count": 5}],
            checks=[{"name": "impossible", "metric": "history.writes",
                     "op": ">", "bound": 1000},
                    {"name": "no takes ran", "metric": "history.duplicates",
                     "op": "==", "bound": 0}])
        p = orchestrate([s], out)
        assert p.returncode == 1, p.stderr.decode()
        _, rep = latest(out)
        res = {c["name"]: c["result"] for c in rep["checks"]}
        assert res == {"impossible": "FAIL", "no takes ran": "UNKNOWN"}, res
        assert rep["status"] == "fail"


def test_broken_scenario_exits_2_naming_field_and_line():
    with Tmp() as out:
        path = os.path.join(out, "broken.json")
        with open(path, "w") as fh:
            fh.write('{"name": "broken", "description": "x",\n'
                     ' "fleet": {"peers": 2},\n'
                     ' "steps": [{"action": "start"},\n'
                     '           {"action": "kill", "peer": "x"}]}\n')
        p = orchestrate([path], out)
        assert p.returncode == 2
        err = p.stderr.decode()
        assert "broken.json:4:" in err and "steps[1].peer" in err, err
        assert not os.path.exists(os.path.join(out, "latest"))


def test_peer_crash_exits_2_with_the_crash_in_the_report():
    with Tmp() as out:
        s = scenario_file(out, "crash", [
            {"action": "start"}, {"action": "wait", "until": "connected"},
            {"action": "sleep", "ms": 20000}])
        # Under AddressSanitizer a SIGSEGV would be caught and turned into
        # an exit status; let it kill the process as it would in the wild.
        env = dict(os.environ, ASAN_OPTIONS="handle_segv=0")
        proc = subprocess.Popen([ORCH, s, "--out", out, "-q"],
                                stderr=subprocess.PIPE, env=env)
        run_dir = wait_until(lambda: os.path.realpath(
            os.path.join(out, "latest")) if len(peer_pids(os.path.join(
                out, "latest"))) == 2 else None, 20, "two peers started")
        pause(0.2)
        os.kill(peer_pids(run_dir)[1], signal.SIGSEGV)
        rc = proc.wait(60)
        assert rc == 2, (rc, proc.stderr.read().decode())
        _, rep = latest(out)
        assert rep["status"] == "error"
        assert "crashed" in rep["error"], rep["error"]
        assert any("crashed" in n and "signal 11" in n for n in rep["notes"])
        assert_all_gone(peer_pids(run_dir))


def test_sigint_and_sigkill_leave_no_peerd():
    with Tmp() as out:
        s = scenario_file(out, "interrupt", [
            {"action": "start"}, {"action": "wait", "until": "connected"},
            {"action": "sleep", "ms": 30000}], fleet={"peers": 3})
        for sig in (signal.SIGINT, signal.SIGKILL):
            proc = subprocess.Popen([ORCH, s, "--out", out, "-q"],
                                    stderr=subprocess.DEVNULL)
            run_dir = wait_until(lambda: os.path.realpath(
                os.path.join(out, "latest")) if len(peer_pids(os.path.join(
                    out, "latest"))) == 3 else None, 20, "three peers")
            pids = peer_pids(run_dir)
            proc.send_signal(sig)
            rc = proc.wait(30)
            if sig == signal.SIGINT:
                assert rc == 2, rc
                _, rep = latest(out)
                assert "interrupted" in rep["error"]
            assert_all_gone(pids)
            os.unlink(os.path.join(out, "latest"))


def test_dry_run_prints_resolved_scenario():
    p = subprocess.run([ORCH, "scenarios/throughput.json", "--dry-run",
                        "--peers", "5", "--seed", "7"],
                       stdout=subprocess.PIPE, timeout=30)
    assert p.returncode == 0
    scn = json.loads(p.stdout)
    assert scn["params"]["peers"] == 5 and scn["fleet"]["peers"] == 5
    assert scn["seed"] == 7
    bad = subprocess.run([ORCH, "scenarios/throughput.json", "--dry-run",
                          "--set", "peers=abc"], stderr=subprocess.PIPE,
                         timeout=30)
    assert bad.returncode == 2 and b"peers=abc" in bad.stderr


def test_out_is_made_with_its_parents_or_refused_plainly():
    """--out DIR is made with its parents (as mkdir -p); one that cannot be
    made is an error that says why, with a sane elapsed time and no report
    line naming a bundle that was never written."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "a", "b", "c")
        p = orchestrate(["scenarios/gossip.json", "--set", "entries=5",
                         "--seed", "3"], out)
        assert p.returncode == 0, p.stderr
        latest(out)
        blocker = os.path.join(tmp, "file")
        open(blocker, "w").close()
        p = subprocess.run([ORCH, "scenarios/gossip.json", "--out",
                            os.path.join(blocker, "x")],
                           stderr=subprocess.PIPE, timeout=60)
        err = p.stderr.decode()
        assert p.returncode == 2, err
        assert "cannot make a run directory" in err and \
            "Not a directory" in err, err
        assert "report:" not in err, err
        secs = float(err.split(" in ", 1)[1].split(" s", 1)[0])
        assert 0 <= secs < 60, err


if __name__ == "__main__":
    run([test_builtin_scenarios_pass_and_write_the_bundle,
         test_failing_check_exits_1_unknown_is_not_pass,
         test_broken_scenario_exits_2_naming_field_and_line,
         test_peer_crash_exits_2_with_the_crash_in_the_report,
         test_sigint_and_sigkill_leave_no_peerd,
         test_dry_run_prints_resolved_scenario,
         test_out_is_made_with_its_parents_or_refused_plainly])

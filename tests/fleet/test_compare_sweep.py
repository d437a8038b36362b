#!/usr/bin/env python3
"""orchestrate compare and sweep on real runs at toy size: a run compared
with itself has every shared measure at B/A = 1 and nothing flagged; a run
slowed on purpose (every peer delays its sends) is flagged as a regression
of write-to-visible and fails --fail-above; a sweep of gossip over
peers=4,8,16 with --repeat 2 makes six child runs and summarises them
(success rate, median and min-max, charts); `make install` puts
tcpstream, the scenarios and the docs in place and the installed
orchestrate finds a scenario by name."""
import csv
import json
import os
import shutil
import statistics
import subprocess
import tempfile

from fleet import BUILD, make_install, run

ORCH = os.path.join(BUILD, "orchestrate")


def gossip_scenario(tmp, name, delay_ms):
    steps = [{"action": "start"}, {"action": "wait", "until": "connected"}]
    if delay_ms:
        steps.append({"action": "fault", "delay_ms": delay_ms})
    steps += [{"action": "write", "peer": 0, "count": 20, "rate": 200,
               "type": "rumor#v1"},
              {"action": "wait", "until": "visible"}]
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as fh:
        json.dump({"name": "slowed", "description": "gossip, maybe slowed",
                   "fleet": {"peers": 3}, "steps": steps,
                   "checks": [{"name": "nothing lost",
                               "metric": "history.lost", "op": "==",
                               "bound": 0}]}, fh)
    return path


def one(tmp, scenario, out):
    p = subprocess.run([ORCH, scenario, "--out", out, "--seed", "3", "-q"],
                       stderr=subprocess.PIPE, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return os.path.realpath(os.path.join(out, "latest"))


def compare(a, b, out, *extra):
    p = subprocess.run([ORCH, "compare", a, b, "--out", out] + list(extra),
                       stderr=subprocess.PIPE, timeout=60)
    dirs = sorted(d for d in os.listdir(out) if d.startswith("compare-"))
    with open(os.path.join(out, dirs[-1], "compare.json")) as fh:
        return p.returncode, json.load(fh), p.stderr.decode(), \
            os.path.join(out, dirs[-1])


def test_compare_flags_a_slowed_run_and_not_itself():
    tmp = tempfile.mkdtemp(prefix="cmp-", dir="/tmp")
    try:
        a = one(tmp, gossip_scenario(tmp, "plain", 0), os.path.join(tmp, "a"))
        b = one(tmp, gossip_scenario(tmp, "slow", 60), os.path.join(tmp, "b"))
        with open(os.path.join(a, "report.json")) as fh:
            ra = json.load(fh)
        rc, same, _, _ = compare(a, a, os.path.join(tmp, "c1"),
                                 "--fail-above", "0")
        assert rc == 0
        names = {(r["measure"], r["stat"]) for r in same["rows"]}
        for name, m in ra["measures"].items():
            for s in (["count", "p50", "p90", "p99", "p999", "max"]
                      if "p50" in m else ["value"]):
                assert (name, s) in names, (name, s)
        assert all(r["ratio"] == 1 and r["flag"] == "" for r in same["rows"])
        assert same["geomean"]["lower_is_better"]["ratio"] == 1
        rc, cmp, err, d = compare(a, b, os.path.join(tmp, "c2"),
                                  "--fail-above", "20")
        assert rc == 1, err
        rows = {(r["measure"], r["stat"]): r for r in cmp["rows"]}
        p50 = rows[("gossip.write_to_visible", "p50")]
        assert p50["flag"] == "regression" and p50["delta_pct"] > 20, p50
        assert p50["ratio"] == p50["b"] / p50["a"]
        assert "REGRESSION gossip.write_to_visible p50" in err
        assert cmp["geomean"]["lower_is_better"]["ratio"] > 1
        for f in ("compare.md", "compare.html"):
            assert os.path.getsize(os.path.join(d, f)) > 0
        # without --fail-above a regression is reported, not fatal
        rc, _, _, _ = compare(a, b, os.path.join(tmp, "c3"))
        assert rc == 0
        bad = subprocess.run([ORCH, "compare", a, os.path.join(tmp, "nope"),
                              "--out", tmp], stderr=subprocess.PIPE,
                             timeout=30)
        assert bad.returncode == 2 and b"nope" in bad.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sweep_side(tmp, name, seed, *sets):
    out = os.path.join(tmp, name)
    p = subprocess.run([ORCH, "sweep", "gossip", "--set", "peers=3",
                        "--repeat", "5", "--seed", str(seed), "--out", out] +
                       [x for kv in sets for x in ("--set", kv)],
                       stderr=subprocess.PIPE, timeout=400)
    # a p99 bound may fail on a loaded box; the runs are what count
    assert p.returncode in (0, 1), p.stderr.decode()[-3000:]
    return [os.path.join(out, d) for d in os.listdir(out)
            if d.startswith("sweep-")][0]


def test_compare_repeats_flags_only_what_the_test_supports():
    """Two sides of 5 runs of the same scenario, seeds 1.. and 101..: the
    comparison says n per side and Welch's test with Holm's correction;
    every row it flags is one the test found significant and above its
    unit's floor (with the old 20%-or-spread rule, single runs of these
    flagged a third of the rows).  A single run a side is steered to
    --repeat.  Another scenario is refused (exit 2); other parameters are
    warned of on stderr and in compare.md."""
    tmp = tempfile.mkdtemp(prefix="cmprep-", dir="/tmp")
    try:
        a = sweep_side(tmp, "a", 1, "entries=20")
        b = sweep_side(tmp, "b", 101, "entries=20")
        rc, cmp, err, d = compare(a, b, os.path.join(tmp, "c"))
        assert rc == 0, err
        assert cmp["n_a"] == 5 and cmp["n_b"] == 5, (cmp["n_a"], cmp["n_b"])
        assert cmp["test"] == "welch-holm"
        assert "A 5 runs, B 5 runs" in err and "Welch" in err, err
        assert cmp["mismatch"] == []
        flagged = [r for r in cmp["rows"] if r["flag"]]
        for r in flagged:
            assert r["significant"] is True, r
            assert abs(r["b"] - r["a"]) > r["floor"], r
        for r in cmp["rows"]:
            if r["p_value"] is not None and not r.get("significant"):
                assert r["flag"] == "", r
        # one run a side: the threshold, and a steer to --repeat
        one_a = os.path.join(a, "runs", "peers=3", "r1")
        one_b = os.path.join(b, "runs", "peers=3", "r1")
        rc, cmp1, err, d = compare(one_a, one_b, os.path.join(tmp, "c1"))
        assert rc == 0 and cmp1["test"] == "threshold", err
        assert "--repeat 5" in err, err
        with open(os.path.join(d, "compare.md")) as fh:
            assert "--repeat 5" in fh.read()
        # other parameters: warned, loudly
        c = sweep_side(tmp, "c", 1, "entries=30")
        rc, cmpc, err, d = compare(a, c, os.path.join(tmp, "c2"))
        assert rc == 0, err
        assert "WARNING" in err and "parameter entries: 20 in A, 30" in err, \
            err
        assert [m["name"] for m in cmpc["mismatch"]] == ["entries"]
        with open(os.path.join(d, "compare.md")) as fh:
            assert "**WARNING**" in fh.read()
        # another scenario: refused, unless asked for
        churn = os.path.join(tmp, "churn")
        p = subprocess.run([ORCH, "churn", "--set", "entries=5", "--out",
                            churn, "-q"], stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        p = subprocess.run([ORCH, "compare", one_a, churn, "--out",
                            os.path.join(tmp, "c3")], stderr=subprocess.PIPE,
                           timeout=60)
        assert p.returncode == 2 and b"refused" in p.stderr and \
            b"different scenarios" in p.stderr, p.stderr
        assert not os.path.exists(os.path.join(tmp, "c3"))
        p = subprocess.run([ORCH, "compare", one_a, churn, "--out",
                            os.path.join(tmp, "c4"), "--allow-different"],
                           stderr=subprocess.PIPE, timeout=60)
        assert p.returncode == 0 and b"WARNING" in p.stderr, p.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_sweep_gossip_over_peers_with_repeats():
    tmp = tempfile.mkdtemp(prefix="sweep-", dir="/tmp")
    try:
        p = subprocess.run([ORCH, "sweep", "scenarios/gossip.json", "--set",
                            "peers=4,8,16", "--repeat", "2", "--set",
                            "entries=5", "--out", tmp],
                           stderr=subprocess.PIPE, timeout=200)
        assert p.returncode == 0, p.stderr.decode()[-3000:]
        d = [os.path.join(tmp, x) for x in os.listdir(tmp)
             if x.startswith("sweep-gossip-")][0]
        with open(os.path.join(d, "sweep.json")) as fh:
            sw = json.load(fh)
        assert sw["key"] == "peers" and sw["repeat"] == 2
        assert [pt["value"] for pt in sw["points"]] == [4, 8, 16]
        for pt in sw["points"]:
            assert pt["count"] == 2 and pt["passed"] == 2
            assert pt["success_rate"] == 1
            vals = []
            for r in pt["runs"]:
                with open(os.path.join(r["dir"], "latest",
                                       "report.json")) as fh:
                    rep = json.load(fh)
                assert rep["params"]["peers"] == pt["value"]
                vals.append(rep["measures"]["gossip.write_to_visible"]["p99"])
            m = pt["measures"]["gossip.write_to_visible p99"]
            assert m["median"] == statistics.median(vals)
            assert m["min"] == min(vals) and m["max"] == max(vals)
        with open(os.path.join(d, "sweep.csv"), newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert {r["value"] for r in rows} == {"4", "8", "16"}
        with open(os.path.join(d, "sweep.html")) as fh:
            page = fh.read()
        assert 'data-chart="sweep:gossip.write_to_visible p99"' in page
        assert 'data-chart="sweep:success_rate"' in page
        assert os.path.getsize(os.path.join(d, "sweep.md")) > 0
        bad = subprocess.run([ORCH, "sweep", "scenarios/gossip.json",
                              "--out", tmp], stderr=subprocess.PIPE,
                             timeout=30)
        assert bad.returncode == 2 and b"--set" in bad.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_make_install_and_a_scenario_by_name():
    tmp = tempfile.mkdtemp(prefix="install-", dir="/tmp")
    try:
        usr = make_install(tmp)
        for f in ("bin/orchestrate", "bin/peerd", "bin/peerctl",
                  "bin/tcpstream", "share/fleet-lab/scenarios/churn.json",
                  "share/doc/fleet-lab/report.md",
                  "share/doc/fleet-lab/README.md"):
            assert os.path.exists(os.path.join(tmp, "usr", f)), f
        orch = os.path.join(tmp, "usr", "bin", "orchestrate")
        d = subprocess.run([orch, "churn", "--dry-run", "--seed", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=tmp, timeout=30)
        assert d.returncode == 0, d.stderr.decode()
        assert json.loads(d.stdout)["name"] == "churn"
        missing = subprocess.run([orch, "no-such-scenario", "--dry-run"],
                                 stderr=subprocess.PIPE, cwd=tmp, timeout=30)
        assert missing.returncode == 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    run([test_compare_flags_a_slowed_run_and_not_itself,
         test_compare_repeats_flags_only_what_the_test_supports,
         test_sweep_gossip_over_peers_with_repeats,
         test_make_install_and_a_scenario_by_name])

#!/usr/bin/env python3
"""The launcher interface (docs/launchers.md): --launcher picks a backend,
local by default; a scenario that asks a backend for what it lacks is
refused before anything starts (exit 2, the step and the want named), as
unknown keys are: a fault at layer "net" on local, network delay on netns
(no netem: never faked), --keep on netns; an unknown launcher lists the
known ones.  A fault's layer is written in the report's notes."""
import os
import subprocess

from fleet import run
from test_orchestrate import ORCH, Tmp, latest, orchestrate, scenario_file


def refused(args, out):
    p = subprocess.run([ORCH] + args + ["--out", out, "--dry-run"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    assert p.returncode == 2, p
    assert not os.path.exists(os.path.join(out, "latest"))
    return p.stderr.decode()


def test_what_a_backend_lacks_is_refused_before_the_run():
    with Tmp() as out:
        net = scenario_file(out, "net", [
            {"action": "start"},
            {"action": "fault", "name": "cut", "layer": "net",
             "partition": [[0], [1]]}])
        err = refused([net], out)
        assert 'steps[1] (cut)' in err and 'layer "net"' in err, err
        assert "local launcher" in err and '"layer": "peer"' in err, err
        delay = scenario_file(out, "delay", [
            {"action": "start"},
            {"action": "fault", "name": "slow", "peer": 0, "delay_ms": 50}])
        err = refused(["--launcher", "netns", delay], out)
        assert "steps[1] (slow)" in err and "netem" in err, err
        assert "never faked" in err, err
        # The same step at peerd's own layer is fine on netns.
        peer = scenario_file(out, "peerlayer", [
            {"action": "start"},
            {"action": "fault", "peer": 0, "delay_ms": 50,
             "layer": "peer"}])
        p = subprocess.run([ORCH, "--launcher", "netns", peer, "--dry-run"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.returncode == 0, p.stderr
        err = refused(["--launcher", "netns", "--keep", peer], out)
        assert "--keep" in err and "netns" in err, err
        err = refused(["--launcher", "nosuch", peer], out)
        assert 'no launcher "nosuch"' in err, err
        assert "local" in err and "netns" in err, err
        bad = scenario_file(out, "badlayer", [
            {"action": "start"},
            {"action": "fault", "peer": 0, "drop": 0.5, "layer": "disk"}])
        err = refused([bad], out)
        assert "layer" in err, err


def test_local_says_which_layer_a_fault_used():
    with Tmp() as out:
        s = scenario_file(out, "layered", [
            {"action": "start"}, {"action": "wait", "until": "connected"},
            {"action": "fault", "partition": [[0], [1]]},
            {"action": "fault", "peer": "all", "clear": True}])
        p = orchestrate(["--launcher", "local", s], out)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        _, rep = latest(out)
        notes = rep.get("notes", [])
        assert any("partition [[0],[1]] at layer peer" in n
                   for n in notes), notes


if __name__ == "__main__":
    run([test_what_a_backend_lacks_is_refused_before_the_run,
         test_local_says_which_layer_a_fault_used])

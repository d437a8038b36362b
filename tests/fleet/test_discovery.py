#!/usr/bin/env python3
"""What a new user finds without reading the source: `orchestrate list`
names every scenario with a line each; `describe` gives parameters (type,
default, range, help), steps and checks; a mistyped scenario, --set
parameter, $parameter or check measure gets "did you mean"; --dry-run is
in the scenario's own order with no nulls; every numeric flag is parsed
whole (--timeout 5x and --seed -1 were accepted); peerctl help is a table
(--json the raw answer) and the control socket's reals are shortest
round-trip; `make install` installs man pages made from --help and bash
completion that completes scenarios, --set parameters and peer commands;
the --keep hints paste as they are."""
import glob
import json
import os
import shutil
import subprocess
import tempfile

from fleet import BUILD, make_install, run

ORCH = os.path.join(BUILD, "orchestrate")
PEERCTL = os.path.join(BUILD, "peerctl")


def orch(*args, **kw):
    return subprocess.run([ORCH] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60, **kw)


def test_list_and_describe():
    p = orch("list")
    assert p.returncode == 0, p.stderr
    names = [l.split()[0] for l in p.stdout.decode().splitlines()
             if l and not l.startswith("`")]
    want = sorted(os.path.basename(f)[:-5]
                  for f in glob.glob("scenarios/*.json"))
    assert names == want, (names, want)
    for line in p.stdout.decode().splitlines()[:len(want)]:
        assert len(line.split(None, 1)[1]) > 10 and len(line) <= 120, line
    d = orch("describe", "churn")
    assert d.returncode == 0, d.stderr
    out = d.stdout.decode()
    with open("scenarios/churn.json") as fh:
        raw = json.load(fh)
    for name, decl in raw["params"].items():
        line = [l for l in out.splitlines() if l.startswith("  " + name + " ")]
        assert line, name
        assert decl["type"] in line[0] and "default" in line[0], line
        if "min" in decl:
            assert "%s..%s" % (decl["min"], decl["max"]) in line[0], line
    assert "steps" in out and "kill the victim" in out and "catch up" in out
    assert "nothing lost: history.lost == 0" in out
    assert orch("describe", "nosuch").returncode == 2


def test_did_you_mean():
    p = orch("churnn")
    assert p.returncode == 2
    assert b'did you mean "churn"' in p.stderr, p.stderr
    p = orch("describe", "gosip")
    assert p.returncode == 2 and b'did you mean "gossip"' in p.stderr
    p = orch("churn", "--set", "entrie=5", "--dry-run")
    assert p.returncode == 2 and b'did you mean "entries"' in p.stderr, \
        p.stderr
    tmp = tempfile.mkdtemp(prefix="dym-", dir="/tmp")
    try:
        path = os.path.join(tmp, "s.json")
        with open(path, "w") as fh:
            json.dump({"name": "s", "description": "d",
                       "params": {"peers": {"type": "int", "default": 2}},
                       "fleet": {"peers": "$peer"},
                       "steps": [{"action": "start"}]}, fh)
        p = orch(path, "--dry-run")
        assert p.returncode == 2 and b"did you mean $peers" in p.stderr, \
            p.stderr
        with open(path, "w") as fh:
            json.dump({"name": "s", "description": "d",
                       "fleet": {"peers": 2},
                       "steps": [{"action": "start"}],
                       "checks": [{"metric": "history.lots", "op": "==",
                                   "bound": 0}]}, fh)
        p = orch(path, "--dry-run")
        assert p.returncode == 2 and b'did you mean "history.lost"' in \
            p.stderr, p.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_dry_run_order_without_nulls():
    p = orch("churn", "--dry-run", "--seed", "1")
    assert p.returncode == 0, p.stderr
    text = p.stdout.decode()
    assert "null" not in text
    d = json.loads(text)
    assert list(d)[:4] == ["name", "description", "params", "timeout_s"], \
        list(d)
    with open("scenarios/churn.json") as fh:
        assert list(d["params"]) == list(json.load(fh)["params"])
    # each parameter's help, on stderr
    assert b"# entries = 100   entries written before the kill" in p.stderr


def test_numeric_flags_are_strict():
    for flag, bad in (("--timeout", "5x"), ("--timeout", "0"),
                      ("--seed", "-1"), ("--seed", "12a"),
                      ("--peers", "3.5"), ("--stall-s", "-2"),
                      ("--watch-ms", "99"), ("--sample-ms", "1e3"),
                      ("--hold-timeout", ""), ("--timeout", " 5")):
        p = orch("churn", flag, bad, "--dry-run")
        assert p.returncode == 2, (flag, bad)
        assert flag.encode() in p.stderr and b"expected" in p.stderr, \
            (flag, bad, p.stderr)
    assert orch("churn", "--timeout", "5", "--sample-ms", "0", "--seed",
                "18446744073709551615", "--dry-run").returncode == 0
    p = subprocess.run([ORCH, "sweep", "gossip", "--set", "peers=2",
                        "--repeat", "2x"], stderr=subprocess.PIPE, timeout=30)
    assert p.returncode == 2 and b"--repeat" in p.stderr


def test_peerctl_help_table_and_shortest_reals():
    tmp = tempfile.mkdtemp(prefix="pctl-", dir="/tmp")
    peer = None
    try:
        sock = os.path.join(tmp, "c.sock")
        peer = subprocess.Popen([os.path.join(BUILD, "peerd"), "--name", "x",
                                 "--dir", tmp, "--listen", "127.0.0.1:0",
                                 "--control", sock],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        assert peer.stdout.readline()      # the ready line
        t = subprocess.run([PEERCTL, sock, "help"], stdout=subprocess.PIPE,
                           timeout=30)
        assert t.returncode == 0
        lines = t.stdout.decode().splitlines()
        assert lines[0].split()[0] == "hello" and not lines[0].startswith("{")
        raw = subprocess.run([PEERCTL, "--json", sock, "help"],
                             stdout=subprocess.PIPE, timeout=30)
        cmds = [c["name"] for c in json.loads(raw.stdout)["commands"]]
        assert [l.split()[0] for l in lines[:len(cmds)]] == cmds
        w = subprocess.run([PEERCTL, sock, "help", "write"],
                           stdout=subprocess.PIPE, timeout=30)
        assert b"type" in w.stdout and b"required" in w.stdout
        # every real on the wire and out of peerctl in its shortest form
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.sendall(b'{"id":1,"cmd":"metrics"}\n')
        buf = b""
        while not buf.endswith(b"\n"):
            buf += s.recv(65536)
        s.close()
        m = subprocess.run([PEERCTL, sock, "metrics"], stdout=subprocess.PIPE,
                           timeout=30)
        for text in (buf.decode(), m.stdout.decode()):
            nums = [t for t in text.replace(",", " ").replace(":", " ")
                    .replace("}", " ").replace("]", " ").split()
                    if t[:1].isdigit() and "." in t]
            assert nums, text[:300]
            for tok in nums:
                assert repr(float(tok)) == tok, tok
    finally:
        if peer is not None:
            peer.kill()
            peer.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def test_man_pages_and_completion_installed():
    tmp = tempfile.mkdtemp(prefix="inst-", dir="/tmp")
    try:
        usr = make_install(tmp)
        for prog in ("orchestrate", "peerd", "peerctl", "tcpstream"):
            page = os.path.join(usr, "share/man/man1", prog + ".1")
            with open(page) as fh:
                roff = fh.read()
            assert roff.startswith(".\\\" DO NOT MODIFY") or ".TH" in roff
            assert ".TH " + prog.upper() in roff, prog
            h = subprocess.run([os.path.join(BUILD, prog), "--help"],
                               stdout=subprocess.PIPE, timeout=10)
            # the options of --help are in the page
            for word in h.stdout.decode().split():
                if word.startswith("--") and word[2:3].isalpha():
                    flag = word.rstrip(",.;:)").split("=")[0]
                    assert flag.replace("-", "\\-") in roff, (prog, flag)
        comp = os.path.join(usr, "share/bash-completion/completions")
        orch_bin = os.path.join(usr, "bin", "orchestrate")

        def complete(script, words):
            line = " ".join(words)
            sh = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; '
                  '_%s; printf "%%s\\n" "${COMPREPLY[@]}"' %
                  (script, line, len(words) - 1,
                   os.path.basename(script)))
            r = subprocess.run(["bash", "-c", sh], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=tmp, timeout=30)
            return r.stdout.decode().split()
        got = complete(os.path.join(comp, "orchestrate"), [orch_bin, "chu"])
        assert "churn" in got, got
        got = complete(os.path.join(comp, "orchestrate"),
                       [orch_bin, "churn", "--set", "ent"])
        assert got == ["entries="], got
        got = complete(os.path.join(comp, "orchestrate"),
                       [orch_bin, "churn", "--sam"])
        assert got == ["--sample-ms"], got
        got = complete(os.path.join(comp, "orchestrate"),
                       [orch_bin, "des"])
        assert got == ["describe"], got
        assert os.path.exists(os.path.join(comp, "peerctl"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_keep_hints_paste():
    tmp = tempfile.mkdtemp(prefix="keep-", dir="/tmp")
    try:
        scn = os.path.join(tmp, "k.json")
        with open(scn, "w") as fh:
            json.dump({"name": "k", "description": "kept",
                       "fleet": {"peers": 2},
                       "steps": [{"action": "start"},
                                 {"action": "wait", "until": "connected"}]},
                      fh)
        p = orch(scn, "--out", os.path.join(tmp, "r"), "--keep")
        assert p.returncode == 0, p.stderr
        err = p.stderr.decode()
        down = [l.strip() for l in err.splitlines()
                if " down " in l and l.startswith("  ")][0]
        hello = [l.split("e.g.", 1)[1].strip() for l in err.splitlines()
                 if "e.g." in l][0]
        # pasted into a shell in the same directory, each works
        h = subprocess.run(hello, shell=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=30)
        assert h.returncode == 0 and b"peer_id" in h.stdout, (hello, h)
        d = subprocess.run(down, shell=True, stderr=subprocess.PIPE,
                           timeout=60)
        assert d.returncode == 0, (down, d.stderr)
        assert down.startswith(ORCH + " down") or \
            down.startswith(os.path.relpath(ORCH) + " down"), down
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    run([test_list_and_describe, test_did_you_mean,
         test_dry_run_order_without_nulls, test_numeric_flags_are_strict,
         test_peerctl_help_table_and_shortest_reals,
         test_man_pages_and_completion_installed, test_keep_hints_paste])

#!/usr/bin/env python3
"""peerd's addresses (docs/control.md "Addresses"): a wildcard --listen
without --advertise is refused (peerd used to advertise 0.0.0.0:PORT, so a
peer that dialed it reached itself); with --advertise the ready line and
the hello carry the advertised address (port 0: the bound port) and peers
seeded with it link up; host names work in --listen and --seed."""
import os
import subprocess

from fleet import PEERD, Fleet, run, wait_until


def linked(a, b):
    return any(m["link"] and m["peer_id"] == b.peer_id
               for m in a.call("peers")["members"])


def test_wildcard_without_advertise_is_refused():
    with Fleet() as f:
        p = f.add()
        os.makedirs(p.dir, mode=0o700, exist_ok=True)
        proc = subprocess.run(
            [PEERD, "--name", "w", "--dir", p.dir, "--control", p.ctl_path,
             "--listen", "0.0.0.0:0", "--log-file", "-"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        assert proc.returncode != 0
        assert b'"ready"' not in proc.stdout
        assert b"needs --advertise" in proc.stderr, proc.stderr


def test_advertise_is_what_peers_learn():
    with Fleet() as f:
        a = f.add(extra=["--listen", "0.0.0.0:0",
                         "--advertise", "127.0.0.1:0"]).start()
        host, port = a.addr.rsplit(":", 1)
        # Port 0: the bound port; never the wildcard.
        assert host == "127.0.0.1" and int(port) > 0, a.addr
        assert a.call("hello")["listen"] == a.addr
        b = f.add().start(seeds=[a.addr])
        wait_until(lambda: linked(a, b) and linked(b, a), 15, "a link")
        # b learned a's advertised address, not 0.0.0.0.
        addrs = {m["peer_id"]: m.get("addr")
                 for m in b.call("peers")["members"]}
        assert addrs[a.peer_id] == a.addr, addrs


def test_host_names_in_listen_and_seed():
    with Fleet() as f:
        a = f.add(extra=["--listen", "localhost:0"]).start()
        assert a.addr.startswith("127.0.0.1:"), a.addr
        port = a.addr.rsplit(":", 1)[1]
        b = f.add().start(seeds=["localhost:" + port])
        wait_until(lambda: linked(b, a), 15, "a link to a seed by name")


def test_bad_names_are_refused_clearly():
    with Fleet() as f:
        p = f.add()
        os.makedirs(p.dir, mode=0o700, exist_ok=True)
        for flag, val in (("--listen", "no-such-host.invalid:0"),
                          ("--advertise", "no-such-host.invalid:1"),
                          ("--advertise", "127.0.0.1"),
                          ("--listen", "127.0.0.1:99999")):
            argv = [PEERD, "--name", "x", "--dir", p.dir, "--control",
                    p.ctl_path, "--log-file", "-", flag, val]
            proc = subprocess.run(argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=30)
            assert proc.returncode != 0, (flag, val)
            assert b"bad address" in proc.stderr, (flag, val, proc.stderr)


if __name__ == "__main__":
    run([test_wildcard_without_advertise_is_refused,
         test_advertise_is_what_peers_learn,
         test_host_names_in_listen_and_seed,
         test_bad_names_are_refused_clearly])

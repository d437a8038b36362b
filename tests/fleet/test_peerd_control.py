#!/usr/bin/env python3
"""The control socket contract (docs/control.md) against one real peerd:
every error code for bad input, the line cap, the peer surviving it all,
--hold, and a clean TERM that removes the socket."""
import os
import signal
import socket

from fleet import Control, CtlError, Fleet, run, wait_until


def expect_error(ctl, line, code):
    ctl.send_raw(line)
    rep = ctl.read_reply()
    assert rep is not None, "connection closed on %r" % line[:40]
    assert rep["ok"] is False, rep
    assert rep["error"]["code"] == code, (line[:60], rep)
    assert "id" in rep
    return rep


def test_errors_and_survival():
    with Fleet() as f:
        p = f.add().start()
        ctl = Control(p.ctl_path)
        hello = ctl.call("hello")
        for k in ("name", "peer_id", "pid", "listen", "binding", "version",
                  "uptime_s"):
            assert k in hello, k
        assert hello["pid"] == p.proc.pid
        assert hello["listen"] == p.addr
        expect_error(ctl, b"not json\n", "bad_json")
        expect_error(ctl, b"[1,2,3]\n", "bad_json")
        expect_error(ctl, b'{"id": 1}\n', "bad_args")
        expect_error(ctl, b'{"id": 2, "cmd": 7}\n', "bad_args")
        rep = expect_error(ctl, b'{"id": 3, "cmd": "nope"}\n', "unknown_cmd")
        assert rep["id"] == 3
        expect_error(ctl, b'{"id": 4, "cmd": "trace", "args": []}\n',
                     "bad_args")
        expect_error(ctl, b'{"id": 5, "cmd": "trace", "args": {"n": "x"}}\n',
                     "bad_args")
        expect_error(ctl, b'{"id": 6, "cmd": "trace", "args": {"zz": 1}}\n',
                     "bad_args")
        expect_error(ctl, b'{"id": 7, "cmd": "write", "args": {}}\n',
                     "bad_args")
        expect_error(ctl, b'{"id": 8, "cmd": "read", "args": '
                     b'{"type": "bad type"}}\n', "bad_args")
        expect_error(ctl, b'{"id": 9, "cmd": "complete", "args": '
                     b'{"id": "00"}}\n', "bad_args")
        expect_error(ctl, b'{"id": 10, "cmd": "complete", "args": '
                     b'{"id": "' + b"ab" * 16 + b'"}}\n', "not_found")
        expect_error(ctl, b'{"id": 11, "cmd": "hello"} trailing\n',
                     "bad_json")
        expect_error(ctl, b'{"id": 12, "cmd": "hello", "id": 13}\n',
                     "bad_json")
        expect_error(ctl, b"\xff\xfe\x00garbage\n", "bad_json")
        # Messages quote the request cut to a length; a cut inside a
        # multibyte character once left the request with no answer.
        name = ("a" * 63 + "\u00e9").encode()
        rep = expect_error(ctl, b'{"id": 14, "cmd": "' + name + b'"}\n',
                           "unknown_cmd")
        assert rep["id"] == 14
        expect_error(ctl, b'{"id": 15, "cmd": "connect", "args": {"addr": "'
                     + ("\u20ac" * 40).encode() + b'"}}\n', "bad_args")
        # The same connection still works after all of that.
        assert ctl.call("hello")["name"] == p.name
        assert "commands" in ctl.call("help")
        # A line over 1 MiB: too_large, then the connection closes.
        big = Control(p.ctl_path)
        big.send_raw(b'{"id": 1, "cmd": "hello", "x": "' +
                     b"a" * (1 << 20) + b'"}\n')
        rep = big.read_reply()
        assert rep["error"]["code"] == "too_large", rep
        assert big.read_reply() is None
        # The peer is fine and counted all of it.
        m = ctl.call("metrics")
        assert m["counters"]["limits.hit"]["control_line"] == 1, m
        assert m["counters"]["control.errors"] >= 16
        assert ctl.call("hello")["name"] == p.name
        ctl.close()


def test_term_exits_zero_and_removes_socket():
    with Fleet() as f:
        p = f.add().start()
        assert os.path.exists(p.ctl_path)
        assert oct(os.stat(p.ctl_path).st_mode & 0o777) == oct(0o600)
        p.call("hello")
        assert p.stop() == 0
        assert not os.path.exists(p.ctl_path)
        assert os.path.exists(os.path.join(p.dir, "trace.ndjson"))


def test_shutdown_command():
    with Fleet() as f:
        p = f.add().start()
        assert p.call("shutdown")["stopping"] is True
        assert p.proc.wait(10) == 0


def test_hold_then_continue():
    with Fleet() as f:
        p = f.add()
        p.start(hold=True)

        def stopped():
            with open("/proc/%d/stat" % p.proc.pid) as fh:
                return fh.read().split(")")[1].split()[0] == "T"
        wait_until(stopped, 10, "the held peer to stop itself")
        p.signal(signal.SIGCONT)
        assert p.call("hello")["pid"] == p.proc.pid


def test_identity_kept_across_restart():
    with Fleet() as f:
        p = f.add().start()
        first = p.peer_id
        assert p.stop() == 0
        p.start()
        assert p.peer_id == first
        st = os.stat(os.path.join(p.dir, "identity.key"))
        assert st.st_mode & 0o777 == 0o600


def test_usr1_writes_trace():
    with Fleet() as f:
        p = f.add().start()
        path = os.path.join(p.dir, "trace.ndjson")
        assert not os.path.exists(path)
        p.signal(signal.SIGUSR1)
        wait_until(lambda: os.path.exists(path), 10, "trace.ndjson")


def test_client_limit():
    with Fleet(extra=["--max-clients", "2"]) as f:
        p = f.add().start()
        a, b = Control(p.ctl_path), Control(p.ctl_path)
        a.call("hello")
        b.call("hello")
        c = Control(p.ctl_path)
        rep = c.read_reply()
        assert rep["error"]["code"] == "busy", rep
        assert c.read_reply() is None
        assert a.call("metrics")["counters"]["limits.hit"][
            "control_clients"] == 1


def test_metrics_only():
    """metrics answers only the sections, figures and prefixes `only` names,
    and refuses a name that is not a string."""
    with Fleet() as f:
        p = f.add().start()
        ctl = Control(p.ctl_path)
        full = ctl.call("metrics")
        m = ctl.call("metrics", only=["counters.frames.in", "gauges",
                                       "counters.limits.hit.links"])
        assert set(m) == {"counters", "gauges", "name", "peer_id"}, m.keys()
        # frames.in alone, not frames.in_by_kind; the whole limits.hit.
        assert set(m["counters"]) == {"frames.in", "limits.hit"}, m["counters"]
        assert m["counters"]["limits.hit"].keys() == \
            full["counters"]["limits.hit"].keys()
        assert m["gauges"].keys() == full["gauges"].keys()
        m = ctl.call("metrics", only=["counters.frames", "process"])
        assert set(m) == {"counters", "process", "name", "peer_id"}, m.keys()
        assert "frames.in_by_kind" in m["counters"]
        assert all(k.startswith("frames.") for k in m["counters"])
        assert m["process"].keys() == full["process"].keys()
        assert set(ctl.call("metrics", only=[])) == {"name", "peer_id"}
        expect_error(ctl, b'{"id": 9, "cmd": "metrics", "args": '
                     b'{"only": [1]}}\n', "bad_args")
        expect_error(ctl, b'{"id": 10, "cmd": "metrics", "args": '
                     b'{"only": "gauges"}}\n', "bad_args")


if __name__ == "__main__":
    run([test_errors_and_survival, test_term_exits_zero_and_removes_socket,
         test_shutdown_command, test_hold_then_continue,
         test_identity_kept_across_restart, test_usr1_writes_trace,
         test_client_limit, test_metrics_only])

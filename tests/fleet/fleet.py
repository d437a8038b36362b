"""fleet.py: start real peerd processes at toy scale for the fleet tests.

Every peer runs in a private temporary directory, listens on 127.0.0.1 port
0 and is awaited through its ready line with a bound.  Waits are on
conditions with deadlines, never fixed sleeps, and nothing here asserts
wall-clock time.  Every process started is ended by pid at teardown.
"""
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.environ.get("O", "build")
PEERD = os.path.join(BUILD, "peerd")
READY_TIMEOUT = 10.0


class CtlError(Exception):
    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


def pause(seconds):
    """Let the peers work between two polls of a condition."""
    threading.Event().wait(seconds)


def wait_until(fn, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except (CtlError, OSError) as e:
            last = e
        pause(0.02)
    raise AssertionError("timed out after %.1fs waiting for %s (last: %r)"
                         % (timeout, what, last))


class Control:
    """One connection to a peer's control socket."""

    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 1
        self.events = []

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def read_line(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def read_reply(self):
        while True:
            msg = self.read_line()
            if msg is None:
                return None
            if "event" in msg:
                self.events.append(msg)
                continue
            return msg

    def call(self, cmd, **args):
        rid = self.next_id
        self.next_id += 1
        req = {"id": rid, "cmd": cmd}
        if args:
            req["args"] = args
        self.send_raw((json.dumps(req) + "\n").encode())
        rep = self.read_reply()
        if rep is None:
            raise CtlError("closed", "connection closed")
        assert rep.get("id") == rid, rep
        if not rep["ok"]:
            raise CtlError(rep["error"]["code"], rep["error"]["message"])
        return rep["result"]


class Peer:
    def __init__(self, fleet, name, extra):
        self.fleet = fleet
        self.name = name
        self.dir = os.path.join(fleet.tmp, name)
        self.ctl_path = os.path.join(self.dir, "control.sock")
        self.extra = list(extra)
        self.proc = None
        self.ready = None
        self._ctl = None

    def argv(self):
        return [PEERD, "--name", self.name, "--dir", self.dir,
                "--control", self.ctl_path, "--listen", "127.0.0.1:0"] + \
            self.extra

    def start(self, seeds=(), hold=False):
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        argv = self.argv()
        for s in seeds:
            argv += ["--seed", s]
        if hold:
            argv.append("--hold")
        self.stderr_path = os.path.join(self.dir, "stderr.log")
        with open(self.stderr_path, "ab") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                         stderr=err)
        self.fleet.procs.append(self.proc)
        deadline = time.monotonic() + READY_TIMEOUT
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("%s: no ready line in %.0fs"
                                     % (self.name, READY_TIMEOUT))
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                ch = os.read(self.proc.stdout.fileno(), 4096)
                if not ch:
                    raise AssertionError("%s: exited before ready (rc %s)"
                                         % (self.name, self.proc.wait()))
                line += ch
        self.ready = json.loads(line)
        assert self.ready["ready"] is True
        self._ctl = None
        return self

    @property
    def addr(self):
        return self.ready["listen"]

    @property
    def peer_id(self):
        return self.ready["peer_id"]

    def ctl(self):
        if self._ctl is None:
            self._ctl = Control(self.ctl_path)
        return self._ctl

    def call(self, cmd, **args):
        return self.ctl().call(cmd, **args)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self._ctl = None

    def stop(self, timeout=10.0):
        """TERM and wait; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self._ctl = None
        return rc

    def metrics(self):
        return self.call("metrics")

    def counter(self, name):
        return self.metrics()["counters"][name]


class Fleet:
    """with Fleet() as f: f.start(3) -> peers seeded to peer 0."""

    def __init__(self, extra=()):
        self.extra = list(extra)
        self.procs = []
        self.peers = []
        self.tmp = None

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="fleet-", dir="/tmp")
        return self

    def __exit__(self, *exc):
        # TERM first so sanitizers get to report leaks at exit, then KILL.
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        reports = self.sanitizer_reports()
        if reports and exc[0] is None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise AssertionError("sanitizer reports from peers:\n" +
                                 "\n".join(reports))
        if exc[0] is None or os.environ.get("FLEET_KEEP") is None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            sys.stderr.write("fleet kept in %s\n" % self.tmp)
        return False

    def sanitizer_reports(self):
        out = []
        for p in self.peers:
            path = os.path.join(p.dir, "stderr.log")
            if not os.path.exists(path):
                continue
            with open(path, errors="replace") as fh:
                text = fh.read()
            for mark in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                         "runtime error:"):
                if mark in text:
                    out.append("%s: %s" % (p.name, text[-4000:]))
                    break
        return out

    def add(self, name=None, extra=()):
        p = Peer(self, name or "p%d" % len(self.peers),
                 self.extra + list(extra))
        self.peers.append(p)
        return p

    def start(self, n, extra=()):
        first = self.add(extra=extra).start()
        for _ in range(n - 1):
            self.add(extra=extra).start(seeds=[first.addr])
        self.wait_mesh()
        return self.peers

    def wait_mesh(self, peers=None, timeout=15.0):
        peers = peers or self.peers

        def linked():
            for p in peers:
                up = {m["peer_id"] for m in p.call("peers")["members"]
                      if m["link"]}
                want = {q.peer_id for q in peers if q is not p}
                if not want <= up:
                    return False
            return True
        wait_until(linked, timeout, "a full mesh")


# ---- a tiny deterministic CBOR encoder, for hand-made wire frames ----

def _head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for ai, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < (1 << (8 * struct.calcsize(fmt))):
            return bytes([major << 5 | ai]) + struct.pack(fmt, n)
    raise ValueError(n)


class Raw(bytes):
    """Bytes that are already one encoded CBOR item (cbor() copies them)."""


def cbor(v):
    if isinstance(v, Raw):
        return bytes(v)
    if v is None:
        return b"\xf6"
    if v is True:
        return b"\xf5"
    if v is False:
        return b"\xf4"
    if isinstance(v, int):
        return _head(0, v) if v >= 0 else _head(1, -1 - v)
    if isinstance(v, bytes):
        return _head(2, len(v)) + v
    if isinstance(v, str):
        b = v.encode()
        return _head(3, len(b)) + b
    if isinstance(v, (list, tuple)):
        return _head(4, len(v)) + b"".join(cbor(x) for x in v)
    if isinstance(v, dict):
        items = sorted((cbor(k), cbor(x)) for k, x in v.items())
        return _head(5, len(items)) + b"".join(k + x for k, x in items)
    raise TypeError(type(v))


def forged_frame(kind=1, body=None):
    """A well-formed frame whose signature is random bytes."""
    key = os.urandom(32)
    env = {"to": b"", "ver": 1, "body": body, "from":
           hashlib.sha256(key).digest(), "kind": kind, "group": "fleet",
           "stamp": [int(time.time() * 1000), 0, 1]}
    f = cbor({"env": env, "key": key, "sig": os.urandom(64)})
    return struct.pack(">I", len(f)) + f


def make_install(destdir):
    """`make install` of this build into destdir with PREFIX=/usr; the
    prefix's path under destdir."""
    p = subprocess.run(["make", "--no-print-directory", "install",
                        "O=" + BUILD, "DESTDIR=" + destdir, "PREFIX=/usr"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return os.path.join(destdir, "usr")


def run(tests):
    """Run test functions; print a line each and exit non-zero on failure."""
    failed = 0
    for t in tests:
        try:
            t()
            print("ok   %s" % t.__name__)
        except Exception as e:  # noqa: BLE001 - report every failure
            failed += 1
            print("FAIL %s: %s" % (t.__name__, e))
            import traceback
            traceback.print_exc()
    print("%d passed, %d failed" % (len(tests) - failed, failed))
    sys.exit(1 if failed else 0)

#!/usr/bin/env python3
"""The wire's hardening (docs/protocol.md sections 1, 3, 7): connections
that never finish a handshake cannot keep a real peer out; every handshake
violation, truncated frame and wrong rumor id is refused and counted by its
own name; the peer goes on serving."""
import os
import socket
import struct
import threading

from fleet import Fleet, Raw, cbor, pause, run, wait_until
from wire import PING, RUMOR, Key, Wire, decode


def counters(p):
    return p.metrics()["counters"]


def linked(p, q):
    return any(m["peer_id"] == q.peer_id and m["link"]
               for m in p.call("peers")["members"])


class Squatters:
    """n sockets to addr that never finish a handshake (each sends prefix,
    then nothing).  A thread reopens any the peer closes, so the budget
    stays full however the peer sheds them: a real attacker repeats."""

    def __init__(self, addr, n, prefix=b""):
        host, port = addr.rsplit(":", 1)
        self.target = (host, int(port))
        self.prefix = prefix
        self.socks = [self._open() for _ in range(n)]
        self.reopened = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._keep, daemon=True)
        self.thread.start()

    def _open(self):
        s = socket.create_connection(self.target, 5)
        if self.prefix:
            s.sendall(self.prefix)
        s.setblocking(False)
        return s

    def _keep(self):
        while not self.stop.wait(0.02):
            for i, s in enumerate(self.socks):
                try:
                    while True:
                        if not s.recv(65536):   # the peer closed it
                            raise ConnectionResetError
                except BlockingIOError:
                    continue
                except OSError:
                    s.close()
                    try:
                        self.socks[i] = self._open()
                        self.reopened += 1
                    except OSError:
                        pass

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for s in self.socks:
            s.close()


def joins_despite(n, prefix=b""):
    """A peer capped at 4 proven links takes a real peer while n
    squatters hold their connections open."""
    with Fleet() as f:
        a = f.add(extra=["--max-links", "4"]).start()
        sq = Squatters(a.addr, n, prefix)
        try:
            pause(0.3)      # every squatter accepted before the real peer
            b = f.add().start(seeds=[a.addr])
            wait_until(lambda: linked(a, b) and linked(b, a), 20,
                       "the real peer's link with %d squatters" % n)
            # Proven, it works like any link.
            w = b.call("write", type="h#v1", fields={"n": n})["id"]
            wait_until(lambda: (a.call("read", type="h#v1")["entry"] or {})
                       .get("id") == w, 10, "a write across the link")
        finally:
            sq.close()
        c = counters(a)
        if n > 32:      # over the default --max-preauth budget
            hit = c["limits.hit"]
            assert hit["preauth"] + hit["preauth_per_addr"] >= 1, hit
        return c


def test_join_with_4_idle_sockets():
    joins_despite(4)


def test_join_with_64_idle_sockets():
    joins_despite(64)


def test_join_with_64_stalled_length_prefixes():
    joins_despite(64, prefix=struct.pack(">I", 200))


def test_preauth_timeout():
    """An idle socket is closed at --preauth-ms and counted."""
    with Fleet() as f:
        a = f.add(extra=["--preauth-ms", "500"]).start()
        host, port = a.addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), 5)
        s.settimeout(10)
        while s.recv(65536):    # their hello, then the close
            pass
        s.close()
        assert counters(a)["handshake.failed"]["timeout"] == 1


def test_preauth_frame_cap():
    """An unproven connection may not announce a frame over the small
    pre-authentication cap (4 KiB): before its hello and between hello
    and proof, a length prefix over it closes the socket and counts
    limits.hit.preauth_frame; once proven, the link's cap is --max-frame
    again; and a real peer still joins."""
    with Fleet() as f:
        p = f.add().start()
        for hello in (False, True):
            w = Wire(p.addr)
            w.read_hello()
            if hello:
                w.hello()
            w.send_raw(struct.pack(">I", 4097))
            assert w.closed()
            w.close()
        wait_until(lambda: counters(p)["limits.hit"]["preauth_frame"] == 2,
                   10, "limits.hit.preauth_frame")
        c = counters(p)
        assert c["frames.bad"]["too_big"] == 2, c["frames.bad"]
        assert c["limits.hit"]["frame_size"] == 0
        # A proven link may announce a frame over it (the stream then ends
        # inside it: counted truncated, not refused).
        w = Wire(p.addr).handshake()
        w.send_raw(struct.pack(">I", 1 << 16) + b"z" * 100)
        w.sock.shutdown(socket.SHUT_WR)
        assert w.closed()
        w.close()
        wait_until(lambda: counters(p)["frames.truncated"] == 1, 10,
                   "the proven link's large frame")
        assert counters(p)["limits.hit"]["preauth_frame"] == 2
        q = f.add().start(seeds=[p.addr])
        wait_until(lambda: linked(p, q) and linked(q, p), 20,
                   "a real peer's link")


def violation(p, steps, reason):
    before = counters(p)["handshake.failed"][reason]
    w = Wire(p.addr)
    steps(w)
    assert w.closed(), reason
    w.close()
    wait_until(lambda: counters(p)["handshake.failed"][reason] == before + 1,
               10, "handshake.failed.%s" % reason)


def test_handshake_violations_counted():
    with Fleet() as f:
        p = f.add().start()

        def ping_before_hello(w):
            w.read_hello()
            w.send(PING, {"seq": 1}, to=b"")

        def ping_before_proof(w):
            w.read_hello()
            w.hello()
            w.send(PING, {"seq": 1}, to=b"")

        def proof_before_hello(w):
            w.read_hello()
            w.hello(echo=w.peer["body"]["nonce"])

        def wrong_echo(w):
            w.read_hello()
            w.hello()
            w.hello(echo=os.urandom(16))

        def proof_by_another_key(w):
            w.read_hello()
            w.hello()
            other = Key()
            w.key, real = other, w.key
            w.hello(echo=w.peer["body"]["nonce"])
            w.key = real

        violation(p, ping_before_hello, "frame_before_hello")
        violation(p, ping_before_proof, "frame_before_proof")
        violation(p, proof_before_hello, "proof_before_hello")
        violation(p, wrong_echo, "wrong_echo")
        violation(p, proof_by_another_key, "wrong_key")
        # A real handshake still succeeds and moves no counter.
        failed = dict(counters(p)["handshake.failed"])
        Wire(p.addr).handshake().close()
        assert counters(p)["handshake.failed"] == failed
        assert p.call("hello")["name"] == p.name


def test_truncated_frames_counted():
    """A stream that ends inside a frame is counted frames.truncated every
    time: inside the length, inside a small body (the buffered path), and
    inside a large frame from a proven peer (read straight from the
    socket)."""
    with Fleet() as f:
        p = f.add().start()
        for cut in (b"\x00\x00", struct.pack(">I", 100) + b"x" * 50):
            w = Wire(p.addr)
            w.read_hello()
            w.send_raw(cut)
            w.sock.shutdown(socket.SHUT_WR)
            assert w.closed()
            w.close()
        wait_until(lambda: counters(p)["frames.truncated"] == 2, 10,
                   "two truncated frames on the buffered path")
        w = Wire(p.addr).handshake()
        w.send_raw(struct.pack(">I", 1 << 20) + b"y" * 300000)
        w.sock.shutdown(socket.SHUT_WR)
        assert w.closed()
        w.close()
        wait_until(lambda: counters(p)["frames.truncated"] == 3, 10,
                   "a truncated large frame on the direct path")
        assert sum(counters(p)["frames.bad"].values()) == 0
        assert p.call("hello")["name"] == p.name


def test_wrong_rid_refused():
    """A rumor whose rid is not the hash of its items is refused and
    counted; the same items with the right rid are applied."""
    with Fleet() as f:
        p, q = f.add().start(), f.add().start()
        # A real record, as p gossips it to a linked member.
        w = Wire(p.addr).handshake()
        pause(0.2)
        eid = p.call("write", type="r#v1", fields={"x": 1})["id"]
        rumor = w.recv_kind(RUMOR)
        assert rumor is not None
        # Canonical CBOR decodes and re-encodes to the same bytes.
        items = Raw(cbor(rumor["body"]["items"]))
        rid = rumor["body"]["rid"]
        origin = rumor["body"]["origin"]
        w.close()
        # To q, first with an odd but wrong rid.
        v = Wire(q.addr).handshake()
        pause(0.2)
        v.send(RUMOR, {"rid": rid ^ 2, "hops": 1, "items": items,
                       "origin": origin})
        wait_until(lambda: counters(q)["rumors.bad_rid"] == 1, 10,
                   "rumors.bad_rid")
        assert q.call("read", type="r#v1")["entry"] is None
        v.send(RUMOR, {"rid": rid, "hops": 1, "items": items,
                       "origin": origin})
        wait_until(lambda: (q.call("read", type="r#v1")["entry"] or {})
                   .get("id") == eid, 10, "the rumor with its right rid")
        assert counters(q)["rumors.bad_rid"] == 1
        v.close()


def test_doc_frame_example_checks_out():
    """The worked frame of docs/protocol.md section 10, read with this
    client's own decoder and Ed25519: from is SHA-256 of key, and sig
    verifies over the env bytes (test_docs checks the bytes against the
    C encoders; this checks the doc against itself, as a reader would)."""
    import hashlib
    import re
    with open("docs/protocol.md") as fh:
        doc = fh.read()
    blocks = {m.group(1): bytes.fromhex("".join(m.group(2).split()))
              for m in re.finditer(r"```hex (\S+)\n(.*?)```", doc, re.S)}
    a = Key(bytes(range(32)))
    assert a.pub == blocks["key_a_public"]
    assert a.id == hashlib.sha256(a.pub).digest() == blocks["key_a_id"]
    f = blocks["frame_ping"]
    assert struct.unpack(">I", f[:4])[0] == len(f) - 4
    m, _ = decode(f[4:])
    assert m["env"]["from"] == a.id and m["key"] == a.pub
    assert cbor(m["env"]) == blocks["frame_ping_env"]
    a.sk.public_key().verify(m["sig"], blocks["frame_ping_env"])
    assert m["sig"] == blocks["frame_ping_sig"]


def test_control_doc_lists_every_counter():
    """docs/control.md names every counter the peer reports, and every slot
    of every counter object."""
    with open("docs/control.md") as fh:
        doc = fh.read()
    with Fleet() as f:
        c = counters(f.add().start())
    missing = [k for k in c if "`%s`" % k not in doc]
    for k, v in c.items():
        if isinstance(v, dict):
            missing += ["%s.%s" % (k, slot) for slot in v
                        if "`%s`" % slot not in doc]
    assert not missing, "docs/control.md does not name %s" % missing


def test_control_doc_lists_every_gauge():
    """docs/control.md's gauge table names exactly the gauges the peer
    reports (each registered by the module that owns it)."""
    import re
    with open("docs/control.md") as fh:
        doc = fh.read()
    table = doc.split("| gauge | what it is |", 1)[1].split("\n\n", 1)[0]
    documented = set()
    for row in table.splitlines()[2:]:
        documented.update(re.findall(r"`([^`]+)`", row.split("|")[1]))
    with Fleet() as f:
        gauges = set(f.add().start().metrics()["gauges"])
    assert gauges == documented, ("reported, not documented: %s; "
                                  "documented, not reported: %s" %
                                  (sorted(gauges - documented),
                                   sorted(documented - gauges)))


if __name__ == "__main__":
    run([test_join_with_4_idle_sockets, test_join_with_64_idle_sockets,
         test_join_with_64_stalled_length_prefixes, test_preauth_timeout,
         test_preauth_frame_cap,
         test_handshake_violations_counted, test_truncated_frames_counted,
         test_wrong_rid_refused, test_doc_frame_example_checks_out,
         test_control_doc_lists_every_counter,
         test_control_doc_lists_every_gauge])

#!/usr/bin/env python3
"""Nothing a peer receives can crash it: junk on the TCP port closes that
link, is counted by reason, and the peer goes on serving (docs/protocol.md
section 5)."""
import errno
import os
import random
import socket
import struct

from fleet import Fleet, forged_frame, run, wait_until
from wire import Wire

SEED = int(os.environ.get("JUNK_SEED", random.randrange(1 << 30)))


def send_and_wait_close(addr, data, timeout=10.0):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=timeout)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except (BrokenPipeError, ConnectionResetError, OSError) as e:
        # The peer may close on the first bad frame while we still send.
        if isinstance(e, OSError) and e.errno not in (errno.EPIPE,
                                                      errno.ECONNRESET,
                                                      errno.ENOTCONN):
            raise
    # The peer answers with its own hello first, then closes on our junk.
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
    s.close()


def bad(p):
    return p.metrics()["counters"]["frames.bad"]


def test_junk_closes_link_and_is_counted():
    rng = random.Random(SEED)
    with Fleet() as f:
        p, q = f.start(2)
        # A length over the cap (from a connection not yet UP, whose cap
        # is the 4 KiB pre-authentication one: docs/protocol.md section 1).
        send_and_wait_close(p.addr, struct.pack(">I", 64 << 20) + b"x" * 16)
        assert bad(p)["too_big"] == 1, bad(p)
        assert p.metrics()["counters"]["limits.hit"]["preauth_frame"] == 1
        # A zero length.
        send_and_wait_close(p.addr, b"\x00\x00\x00\x00")
        assert bad(p)["zero_length"] == 1
        # A well-formed frame whose signature is random.
        send_and_wait_close(p.addr, forged_frame())
        assert bad(p)["bad_signature"] == 1, bad(p)
        assert p.counter("frames.signature_failures") >= 1
        # Random bytes, prefixed with a plausible length.
        for _ in range(20):
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(
                1, 300)))
            send_and_wait_close(p.addr, struct.pack(">I", len(body)) + body)
        total = sum(bad(p).values())
        assert total >= 23, (SEED, bad(p))
        # Still serving: hello answers and the real link still works.
        assert p.call("hello")["name"] == p.name
        w = q.call("write", type="j#v1", fields={"ok": True})["id"]
        wait_until(lambda: (p.call("read", type="j#v1")["entry"] or {}).get(
            "id") == w, 10, "a write across the surviving link")


def test_truncated_frame_then_eof():
    with Fleet() as f:
        p = f.add().start()
        frame = forged_frame()
        send_and_wait_close(p.addr, frame[:len(frame) // 2])
        assert p.call("hello")["name"] == p.name


def test_large_frames_refused_before_proof_read_after():
    """A connection that has not proven its key may not announce a large
    frame: refused at its length, whether or not the body follows, and the
    body is never read; a large junk frame behind a small one is never
    reached.  A proven peer's large frame is read (straight from the
    socket, link.c) and, junk, counted like any other.  The peer goes on
    serving."""
    rng = random.Random(SEED)
    with Fleet() as f:
        p = f.add().start()

        def preauth():
            return p.metrics()["counters"]["limits.hit"]["preauth_frame"]
        junk = bytes(rng.randrange(256) for _ in range(1 << 20))
        send_and_wait_close(p.addr, struct.pack(">I", 1 << 20) +
                            junk[:200000])
        assert bad(p)["too_big"] == 1 and preauth() == 1, bad(p)
        assert p.call("hello")["name"] == p.name
        small = bytes(rng.randrange(256) for _ in range(40))
        send_and_wait_close(p.addr, struct.pack(">I", len(small)) + small +
                            struct.pack(">I", 1 << 20) + junk)
        assert sum(bad(p).values()) == 2 and preauth() == 1, bad(p)
        w = Wire(p.addr).handshake()
        w.send_raw(struct.pack(">I", 1 << 20) + junk)
        assert w.closed()
        w.close()
        wait_until(lambda: sum(bad(p).values()) == 3, 10,
                   "the proven peer's junk frame counted")
        assert preauth() == 1
        assert p.call("hello")["name"] == p.name


if __name__ == "__main__":
    print("JUNK_SEED=%d" % SEED)
    run([test_junk_closes_link_and_is_counted, test_truncated_frame_then_eof,
         test_large_frames_refused_before_proof_read_after])

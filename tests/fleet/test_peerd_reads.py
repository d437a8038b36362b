#!/usr/bin/env python3
"""How a peer reads its sockets (docs/protocol.md section 1, "Reading a
link"; docs/control.md, io.link_reads and io.control_reads): a TCP link
and a control client are read with one recv of up to 64 KiB a readiness,
so a burst that has arrived whole is read in one pass and every frame or
line in it is handled in order; a frame or a line split over many small
writes is still read whole; a stream that ends inside a frame is counted
truncated and the peer goes on serving.

The burst tests stop the peer (SIGSTOP) while the burst is written, so
the whole burst waits in its socket when it wakes: libevent 2.1's own
read (FIONREAD, then at most 4 KiB) took one system call pair a 4 KiB of
it, which is what the io.*_reads bound below refuses."""
import json
import signal
import socket
import struct

from fleet import Fleet, pause, run, wait_until
from wire import PING, Wire, frame

ACK = 4
READ_MAX = 64 << 10     # transport.h TRANSPORT_READ_MAX


def counters(p):
    return p.metrics()["counters"]


def pings_in(p):
    return counters(p)["frames.in_by_kind"]["ping"]


def stopped(p, fn):
    """Run fn while p is stopped, so what fn writes waits in p's socket."""
    p.signal(signal.SIGSTOP)
    try:
        fn()
        pause(0.3)      # loopback: the bytes are in p's receive queue
    finally:
        p.signal(signal.SIGCONT)


def acks(w, n):
    """The seqs of the next n ACKs w receives (other kinds skipped)."""
    out = []
    while len(out) < n:
        env = w.recv_kind(ACK)
        assert env is not None, "the link closed after %d acks" % len(out)
        out.append(env["body"]["seq"])
    return out


def test_link_burst_read_in_one_pass():
    """A burst of PINGs that arrived whole is read in at most one recv a
    64 KiB (plus the one that finds the socket empty when the last read was
    exactly full) and each is answered, in order."""
    with Fleet() as f:
        p = f.add().start()
        w = Wire(p.addr).handshake()
        one = len(frame(w.key, PING, {"seq": 1000}, w.peer["from"],
                        w.stamp()))
        n = 48000 // one        # under a loopback socket's first window
        data = b"".join(frame(w.key, PING, {"seq": 1000 + i},
                              w.peer["from"], w.stamp()) for i in range(n))
        reads0, pings0 = counters(p)["io.link_reads"], pings_in(p)
        stopped(p, lambda: w.send_raw(data))
        wait_until(lambda: pings_in(p) == pings0 + n, 10, "every ping read")
        reads = counters(p)["io.link_reads"] - reads0
        assert reads <= len(data) // READ_MAX + 1, \
            "%d reads for a burst of %d bytes" % (reads, len(data))
        assert acks(w, n) == [1000 + i for i in range(n)]
        assert sum(counters(p)["frames.bad"].values()) == 0
        w.close()


def test_link_frame_split_into_bytes():
    """A frame written a byte at a time is read whole, once."""
    with Fleet() as f:
        p = f.add().start()
        w = Wire(p.addr).handshake()
        data = frame(w.key, PING, {"seq": 7}, w.peer["from"], w.stamp())
        pings0 = pings_in(p)
        w.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(data)):
            w.send_raw(data[i:i + 1])
            if i % 16 == 0:
                pause(0.001)
        assert acks(w, 1) == [7]
        assert pings_in(p) == pings0 + 1
        c = counters(p)
        assert sum(c["frames.bad"].values()) == 0
        assert c["frames.truncated"] == 0
        w.close()


def test_link_closed_inside_a_frame():
    """Whole frames then half of one, in one burst, then the end of the
    stream: the whole ones are handled, the stream is counted truncated,
    and the peer goes on serving."""
    with Fleet() as f:
        p = f.add().start()
        w = Wire(p.addr).handshake()
        whole = b"".join(frame(w.key, PING, {"seq": i}, w.peer["from"],
                               w.stamp()) for i in range(1, 6))
        last = frame(w.key, PING, {"seq": 6}, w.peer["from"], w.stamp())
        pings0 = pings_in(p)

        def burst():
            w.send_raw(whole + last[:len(last) // 2])
            w.sock.shutdown(socket.SHUT_WR)
        stopped(p, burst)
        wait_until(lambda: counters(p)["frames.truncated"] == 1, 10,
                   "the truncated stream counted")
        assert pings_in(p) == pings0 + 5
        assert acks(w, 5) == [1, 2, 3, 4, 5]
        assert w.closed()
        w.close()
        assert sum(counters(p)["frames.bad"].values()) == 0
        assert p.call("hello")["name"] == p.name


def ctl_socket(p):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(p.ctl_path)
    return s


def ctl_replies(s, n):
    buf, out = b"", []
    while len(out) < n:
        chunk = s.recv(65536)
        assert chunk, "the control socket closed after %d replies" % len(out)
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            out.append(json.loads(line))
    return out


def test_control_burst_answered_in_order():
    """Requests written in one burst are read in one pass and answered
    once each, in order; a request written a byte at a time is answered
    once."""
    with Fleet() as f:
        p = f.add().start()
        n = 200
        lines = b"".join(b'{"id": %d, "cmd": "hello"}\n' % i
                         for i in range(n))
        reads0 = counters(p)["io.control_reads"]
        s = ctl_socket(p)
        stopped(p, lambda: s.sendall(lines))
        got = ctl_replies(s, n)
        assert [r["id"] for r in got] == list(range(n))
        assert all(r["ok"] for r in got)
        # The metrics call's own request is one read more.
        reads = counters(p)["io.control_reads"] - reads0 - 1
        assert 1 <= reads <= len(lines) // READ_MAX + 1, \
            "%d reads for %d bytes of requests" % (reads, len(lines))
        req = b'{"id": "split", "cmd": "hello"}\n'
        for i in range(len(req)):
            s.sendall(req[i:i + 1])
            if i % 8 == 0:
                pause(0.001)
        got = ctl_replies(s, 1)
        assert got[0]["id"] == "split" and got[0]["ok"]
        s.close()


def test_control_line_cap_still_closes():
    """A line over the cap is answered with its error and the client is
    closed, as before (the error leaves at the turn's end)."""
    with Fleet(extra=["--max-line", "1024"]) as f:
        p = f.add().start()
        s = ctl_socket(p)
        s.sendall(b'{"cmd": "hello", "pad": "' + b"x" * 4096)
        got = ctl_replies(s, 1)
        assert got[0]["ok"] is False
        assert got[0]["error"]["code"] == "too_large"
        s.settimeout(10)
        assert s.recv(65536) == b""     # closed
        s.close()
        assert p.call("hello")["name"] == p.name


if __name__ == "__main__":
    run([test_link_burst_read_in_one_pass, test_link_frame_split_into_bytes,
         test_link_closed_inside_a_frame, test_control_burst_answered_in_order,
         test_control_line_cap_still_closes])

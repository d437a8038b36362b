#!/usr/bin/env python3
"""The TLS binding (peerd --binding tls, docs/protocol.md "TLS binding").

A toy fleet on TLS meshes, replicates a write and moves content, and its
frames go bare: the hello a peer sends on a channel carries neither key nor
signature.  Then each bad input closes its connection, is counted by reason
(tls.failures, frames.bad) and leaves the peer serving: plaintext on the TLS
port; TLS 1.2 offered; a certificate whose key is not Ed25519, or none; a
hello whose "from" is not the certificate's key; a handshake that never
completes (dropped by the handshake timeout, its link slot freed); garbage
after the handshake, inside TLS and as raw bytes on the socket; and, on an
UP link, a bad record or the end of the stream inside a large frame, which
peerd reads past the bufferevent straight into the frame's buffer.  Client
certificates are made with the openssl command line."""
import errno
import hashlib
import json
import os
import socket
import ssl
import struct
import subprocess
import tempfile
import time

from fleet import BUILD, Fleet, cbor, forged_frame, run, wait_until
from wire import decode

TLS = ["--binding", "tls"]
FAST = ["--gossip-ms", "200", "--tick-ms", "50", "--ping-timeout-ms", "300",
        "--silence-ms", "3000"]


def make_cert(d, name, newkey):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".crt")
    subprocess.run(["openssl", "req", "-x509", "-nodes", "-days", "1",
                    "-subj", "/CN=" + name, "-keyout", key, "-out", crt] +
                   newkey, check=True, capture_output=True)
    return crt, key


def raw_pub(key):
    der = subprocess.run(["openssl", "pkey", "-in", key, "-pubout",
                          "-outform", "DER"], check=True,
                         capture_output=True).stdout
    return der[-32:]        # SubjectPublicKeyInfo ends with the raw key


def client_ctx(cert=None, max_version=ssl.TLSVersion.TLSv1_3):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE    # the peer's cert is self-signed
    ctx.maximum_version = max_version
    if max_version < ssl.TLSVersion.TLSv1_3:
        ctx.minimum_version = max_version
    if cert is not None:
        ctx.load_cert_chain(*cert)
    return ctx


def hostport(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def read_frame(s):
    def need(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                raise EOFError("closed after %d of %d bytes" % (len(b), n))
            b += c
        return b
    n = struct.unpack(">I", need(4))[0]
    return need(n)


def cbor_map_keys(b):
    """The text keys of the top-level CBOR map b (small maps of text keys)."""
    assert b[0] >> 5 == 5 and (b[0] & 31) < 24, b[:1]
    n, i, keys = b[0] & 31, 1, []

    def skip(i):
        major, ai = b[i] >> 5, b[i] & 31
        i += 1
        if ai < 24:
            val = ai
        else:
            w = 1 << (ai - 24)
            val = int.from_bytes(b[i:i + w], "big")
            i += w
        if major in (2, 3):
            return i + val
        if major == 4:
            for _ in range(val):
                i = skip(i)
            return i
        if major == 5:
            for _ in range(2 * val):
                i = skip(i)
        return i
    for _ in range(n):
        j = skip(i)
        keys.append(b[i + 1:j].decode())
        i = skip(j)
    return keys


def wait_closed(s, timeout=20.0):
    """Read until the peer closes; True if it did within timeout."""
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, ssl.SSLError, OSError):
        return True
    except socket.timeout:
        return False


def peer_read_all(s):
    """True once the peer has read every byte we sent on s: its end of the
    connection (local port = the peer's, remote = ours) has an empty
    receive queue in /proc/net/tcp."""
    mine, theirs = s.getsockname()[1], s.getpeername()[1]
    with open("/proc/net/tcp") as fh:
        for line in fh.readlines()[1:]:
            f = line.split()
            if (int(f[1].split(":")[1], 16) == theirs and
                    int(f[2].split(":")[1], 16) == mine):
                return int(f[4].split(":")[1], 16) == 0
    return False


def tls_fail(p):
    return p.metrics()["counters"]["tls.failures"]


def bad(p):
    return p.metrics()["counters"]["frames.bad"]


def alive(p):
    assert p.call("hello")["name"] == p.name


def handshake(p, cert, max_version=ssl.TLSVersion.TLSv1_3):
    """A TLS socket to p, handshaken, and p's first frame (its hello)."""
    raw = socket.create_connection(hostport(p.addr), timeout=10)
    s = client_ctx(cert, max_version).wrap_socket(raw)
    return s, read_frame(s)


def test_tls_fleet():
    with Fleet(extra=TLS + FAST) as f:
        p, q, r = f.start(3)
        assert p.call("hello")["binding"] == "tls"
        w = q.call("write", type="t#v1", fields={"n": 1})["id"]
        for x in (p, r):
            wait_until(lambda: (x.call("read", type="t#v1")["entry"] or
                                {}).get("id") == w, 10, "the write on TLS")
        pub = p.call("publish", size=3 * 65536 + 17, seed=5, piece_kib=64)
        for x in (q, r):
            x.call("fetch", cid=pub["cid"])
        for x in (q, r):
            c = wait_until(lambda: (lambda c: c if c["complete"] else None)(
                x.call("content", cid=pub["cid"])), 60, "the fetch on TLS")
            assert c["sha256"] == pub["sha256"], c
        for x in (p, q, r):
            c = x.metrics()["counters"]
            assert c["tls.handshakes"] >= 2, c["tls.handshakes"]
            assert sum(c["frames.bad"].values()) == 0, c["frames.bad"]
            assert sum(c["tls.failures"].values()) == 0, c["tls.failures"]
            assert c["frames.signature_failures"] == 0


def test_frames_are_bare_and_plaintext_refused():
    with tempfile.TemporaryDirectory() as d, Fleet(extra=TLS) as f:
        good = make_cert(d, "good", ["-newkey", "ed25519"])
        p = f.add().start()
        s, hello = handshake(p, good)
        assert s.version() == "TLSv1.3", s.version()
        keys = cbor_map_keys(hello)
        assert keys == ["env"], keys       # no "key", no "sig"
        peer_der = s.getpeercert(binary_form=True)
        assert hashlib.sha256(peer_der).digest()  # a certificate was sent
        s.close()
        # Plaintext frames on the TLS port.
        raw = socket.create_connection(hostport(p.addr), timeout=10)
        raw.sendall(forged_frame())
        assert wait_closed(raw)
        raw.close()
        wait_until(lambda: tls_fail(p)["not_tls"] == 1, 10, "not_tls")
        assert sum(bad(p).values()) == 0, bad(p)
        alive(p)


def test_tls12_and_bad_certs_refused():
    with tempfile.TemporaryDirectory() as d, Fleet(extra=TLS) as f:
        good = make_cert(d, "good", ["-newkey", "ed25519"])
        ec = make_cert(d, "ec", ["-newkey", "ec", "-pkeyopt",
                                 "ec_paramgen_curve:P-256"])
        rsa = make_cert(d, "rsa", ["-newkey", "rsa:2048"])
        p = f.add().start()
        try:
            handshake(p, good, ssl.TLSVersion.TLSv1_2)
            raise AssertionError("TLS 1.2 accepted")
        except (ssl.SSLError, OSError, EOFError):
            pass
        wait_until(lambda: tls_fail(p)["version"] == 1, 10, "version")
        alive(p)
        for n, cert in enumerate((ec, rsa, None), 1):
            try:
                handshake(p, cert)
                raise AssertionError("certificate %r accepted" % (cert,))
            except (ssl.SSLError, OSError, EOFError):
                pass
            wait_until(lambda: tls_fail(p)["cert"] == n, 10, "cert %d" % n)
            alive(p)
        assert p.counter("tls.handshakes") == 0


def test_hello_from_another_id():
    with tempfile.TemporaryDirectory() as d, Fleet(extra=TLS) as f:
        good = make_cert(d, "good", ["-newkey", "ed25519"])
        p = f.add().start()
        s, _ = handshake(p, good)
        other = hashlib.sha256(os.urandom(32)).digest()
        env = {"to": b"", "ver": 1, "from": other, "kind": 1,
               "group": "fleet", "stamp": [int(time.time() * 1000), 0, 1],
               "body": {"addr": "127.0.0.1:1", "echo": b"", "name": "x",
                        "nonce": os.urandom(16)}}
        fr = cbor({"env": env})
        s.sendall(struct.pack(">I", len(fr)) + fr)
        assert wait_closed(s)
        s.close()
        wait_until(lambda: bad(p)["channel_mismatch"] == 1, 10,
                   "channel_mismatch")
        # The same hello from the certificate's own key is accepted.
        env["from"] = hashlib.sha256(raw_pub(good[1])).digest()
        fr = cbor({"env": env})
        s, _ = handshake(p, good)
        s.sendall(struct.pack(">I", len(fr)) + fr)
        proof = read_frame(s)       # p answers with its proof
        assert cbor_map_keys(proof) == ["env"]
        s.close()
        assert bad(p)["channel_mismatch"] == 1, bad(p)
        alive(p)


def test_stalled_handshakes_time_out_and_free_slots():
    # Unproven connections have a budget of their own (--max-preauth, half
    # of it for one address: docs/protocol.md section 3).  A TLS handshake
    # that never completes is such a connection.
    with Fleet(extra=TLS + ["--max-preauth", "4"]) as f:
        p = f.add().start()
        stalled = []
        for _ in range(2):
            s = socket.create_connection(hostport(p.addr), timeout=30)
            s.sendall(b"\x16\x03\x01\x00\x50")     # a record header, no more
            stalled.append(s)
        wait_until(lambda: p.call("peers")["links"] and
                   len(p.call("peers")["links"]) == 2, 10, "two links")
        # This address's half of the budget is full: a third connection
        # sheds the oldest unproven one, counted.
        s = socket.create_connection(hostport(p.addr), timeout=30)
        s.sendall(b"\x16\x03\x01\x00\x50")
        assert wait_closed(stalled[0], 10)
        stalled[0].close()
        stalled[0] = s
        assert p.metrics()["counters"]["limits.hit"]["preauth_per_addr"] >= 1
        for s in stalled:
            assert wait_closed(s, 30)
            s.close()
        wait_until(lambda: tls_fail(p)["timeout"] == 2, 10, "timeouts")
        # The budget is free again: a real peer links.
        q = f.add(extra=TLS).start(seeds=[p.addr])
        f.wait_mesh([p, q])
        alive(p)


def test_garbage_after_handshake():
    with tempfile.TemporaryDirectory() as d, Fleet(extra=TLS) as f:
        good = make_cert(d, "good", ["-newkey", "ed25519"])
        p = f.add().start()
        # Inside TLS: a frame length of zero, then junk.
        s, _ = handshake(p, good)
        s.sendall(b"\x00\x00\x00\x00" + os.urandom(100))
        assert wait_closed(s)
        s.close()
        wait_until(lambda: bad(p)["zero_length"] == 1, 10, "zero_length")
        # Under TLS: raw bytes on the socket once the handshake is done.
        raw = socket.create_connection(hostport(p.addr), timeout=10)
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        obj = client_ctx(good).wrap_bio(inc, out)
        while True:
            try:
                obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                raw.sendall(out.read())
                data = raw.recv(65536)
                assert data, "closed during the handshake"
                inc.write(data)
        raw.sendall(out.read())
        # Wait for p's hello: p is past the handshake.
        got = b""
        while True:
            try:
                got += obj.read(65536)
                if len(got) >= 4 and len(got) >= 4 + struct.unpack(
                        ">I", got[:4])[0]:
                    break
            except ssl.SSLWantReadError:
                data = raw.recv(65536)
                assert data, "closed before the hello"
                inc.write(data)
        raw.sendall(b"\x17\x03\x03\x00\x20" + os.urandom(32))
        assert wait_closed(raw)
        raw.close()
        wait_until(lambda: tls_fail(p)["record"] == 1, 10, "record")
        alive(p)


def test_orchestrated_scenarios_on_tls():
    """fleet.binding through orchestrate: --set binding=tls reaches every
    peer's command line, and the swarm and gossip pass on TLS."""
    with tempfile.TemporaryDirectory(prefix="orch-tls-", dir="/tmp") as out:
        for sc, sets in (("swarm", ["peers=3", "mebibytes=2",
                                    "piece_kib=64"]),
                         ("gossip", ["peers=3", "entries=20"])):
            argv = [os.path.join(BUILD, "orchestrate"),
                    "scenarios/%s.json" % sc, "--set", "binding=tls",
                    "--out", out, "-q"]
            for kv in sets:
                argv += ["--set", kv]
            p = subprocess.run(argv, capture_output=True, timeout=200)
            assert p.returncode == 0, (sc, p.stderr.decode()[-2000:])
            d = os.path.join(out, "latest")
            with open(os.path.join(d, "report.json")) as fh:
                rep = json.load(fh)
            assert rep["status"] == "pass", rep["checks"]
            assert rep["params"]["binding"] == "tls"
            with open(os.path.join(d, "run.json")) as fh:
                rj = json.load(fh)
            for peer in rj["peers"]:
                cmd = peer["cmdline"]
                cmd = cmd if isinstance(cmd, str) else " ".join(cmd)
                assert "--binding tls" in cmd, cmd
            for k in range(3):
                with open(os.path.join(d, "peers", str(k),
                                       "metrics.json")) as fh:
                    c = json.load(fh)["counters"]
                assert c["tls.handshakes"] >= 2, (sc, k, c["tls.handshakes"])
                assert sum(c["frames.bad"].values()) == 0, c["frames.bad"]
            if sc == "swarm":
                assert rep["measures"]["swarm.verified"]["value"] == 2


def kernel_offers_tls_ulp():
    """The kernel's answer, asked as peerd asks it: an unconnected TCP
    socket and TCP_ULP "tls" (31, linux/tcp.h): ENOENT is no such ULP,
    while the ULP itself refuses an unconnected socket (ENOTCONN)."""
    s = socket.socket()
    try:
        s.setsockopt(socket.IPPROTO_TCP, 31, b"tls\0")
        return True
    except OSError as e:
        return e.errno == errno.ENOTCONN
    finally:
        s.close()


def openssl_has_ktls():
    """Whether the OpenSSL headers peerd was built with leave kTLS in."""
    cflags = subprocess.run(["pkg-config", "--cflags", "openssl"],
                            capture_output=True, text=True).stdout.split()
    out = subprocess.run(["cc", "-E", "-dM", "-x", "c", "-"] + cflags,
                         input="#include <openssl/opensslconf.h>\n",
                         capture_output=True, text=True, check=True).stdout
    return "OPENSSL_NO_KTLS" not in out


def test_ktls_probe_and_fallback():
    """peerd asks once at start-up whether kTLS can be had and says so in
    hello; where it cannot (this development host: no tls ULP), OpenSSL
    encrypts in user space, no link counts as kTLS, and content moves and
    verifies.  Where it can, every handshaken link's sends are the
    kernel's."""
    want = ("no_openssl" if not openssl_has_ktls() else
            "kernel" if kernel_offers_tls_ulp() else "no_ulp")
    with Fleet(extra=FAST) as f:
        assert f.add().start().call("hello")["ktls"] == "tcp"
    with Fleet(extra=TLS + FAST) as f:
        p, q = f.start(2)
        for x in (p, q):
            assert x.call("hello")["ktls"] == want, (x.name, want)
        pub = p.call("publish", size=5 * 65536 + 3, seed=9, piece_kib=64)
        q.call("fetch", cid=pub["cid"])
        c = wait_until(lambda: (lambda c: c if c["complete"] else None)(
            q.call("content", cid=pub["cid"])), 60, "the fetch on TLS")
        assert c["sha256"] == pub["sha256"], c
        for x in (p, q):
            m = x.metrics()["counters"]
            assert m["tls.handshakes"] >= 1, m["tls.handshakes"]
            assert m["tls.ktls_send"] == (m["tls.handshakes"]
                                          if want == "kernel" else 0), m


def up_link(p, cert):
    """A TLS socket to p whose link p holds UP: p's hello, ours, p's proof,
    ours (bare frames from the certificate's key)."""
    s, first = handshake(p, cert)
    theirs = decode(first)[0]["env"]
    me = hashlib.sha256(raw_pub(cert[1])).digest()
    nonce = os.urandom(16)
    body = {"addr": "127.0.0.1:1", "echo": b"", "name": "x", "nonce": nonce}

    def hello(echo, ms):
        env = {"to": b"", "ver": 1, "from": me, "kind": 1, "group": "fleet",
               "stamp": [ms, 0, 1], "body": dict(body, echo=echo)}
        fr = cbor({"env": env})
        s.sendall(struct.pack(">I", len(fr)) + fr)
    now = int(time.time() * 1000)
    hello(b"", now)
    proof = decode(read_frame(s))[0]["env"]
    assert proof["body"]["echo"] == nonce, proof
    hello(theirs["body"]["nonce"], now + 1)
    return s


def test_bad_record_inside_a_large_frame():
    with tempfile.TemporaryDirectory() as d, Fleet(extra=TLS) as f:
        good = make_cert(d, "good", ["-newkey", "ed25519"])
        p = f.add().start()
        # A 1 MiB frame's first KiB inside TLS, then records TLS did not
        # make, raw on the socket: the direct read meets them.
        s = up_link(p, good)
        s.sendall(struct.pack(">I", 1 << 20) + os.urandom(1024))
        # the length and the KiB are read on their own
        wait_until(lambda: peer_read_all(s), 10, "the first KiB read")
        junk = b"".join(b"\x17\x03\x03\x40\x00" + os.urandom(16384)
                        for _ in range(20))
        try:
            s.setblocking(True)
            os.write(s.fileno(), junk)
        except OSError:
            pass            # closed while we wrote: what we wait for
        assert wait_closed(s)
        s.close()
        wait_until(lambda: tls_fail(p)["record"] == 1, 10, "record")
        alive(p)
        # The end of the stream inside a large frame: counted truncated.
        # (A FIN, not a close: with p's frames unread, close sends a RST.)
        s = up_link(p, good)
        s.sendall(struct.pack(">I", 1 << 20) + os.urandom(200 << 10))
        wait_until(lambda: peer_read_all(s), 10, "the 200 KiB read")
        socket.socket.shutdown(s, socket.SHUT_WR)
        assert wait_closed(s)
        s.close()
        wait_until(lambda: p.metrics()["counters"]["frames.truncated"] == 1,
                   10, "truncated")
        assert tls_fail(p)["record"] == 1, tls_fail(p)
        alive(p)


if __name__ == "__main__":
    run([test_tls_fleet, test_orchestrated_scenarios_on_tls, test_frames_are_bare_and_plaintext_refused,
         test_tls12_and_bad_certs_refused, test_hello_from_another_id,
         test_stalled_handshakes_time_out_and_free_slots,
         test_garbage_after_handshake, test_bad_record_inside_a_large_frame,
         test_ktls_probe_and_fallback])

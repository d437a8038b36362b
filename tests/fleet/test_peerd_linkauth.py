#!/usr/bin/env python3
"""Frames on a proven TCP link carry a MAC (--link-auth mac,
docs/protocol.md sections 2, 3 and 5).

Peers with --link-auth mac and --link-auth sig link and replicate both
ways, and only links where both ends offered a key are keyed.  A client
that offers no key (an older or other implementation) gets signed frames
from a mac peer.  A client written here from docs/protocol.md alone (X25519
from python3-cryptography, HKDF-SHA256 and HMAC-SHA256 by the standard
library) agrees keys with a peer, sends MAC'd frames it answers, and reads
MAC'd answers that check under its own derivation.  Then each bad input
closes the link and is counted: a flipped MAC (frames.bad.bad_mac and
frames.mac_failures), a MAC frame before UP or on a link without keys
(frames.bad.unkeyed_mac), a malformed kx, a hello missing a key, or a
proof whose kx is not its hello's (handshake.failed.bad_hello).  TLS and
DTLS links offer no key."""
import hashlib
import hmac
import os
import struct

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey, X25519PublicKey)

from fleet import Fleet, cbor, run, wait_until
from wire import HELLO, PING, Wire, decode

ACK = 4
MAC = ["--link-auth", "mac"]
SIG = ["--link-auth", "sig"]
FAST = ["--gossip-ms", "200", "--tick-ms", "50", "--ping-timeout-ms", "300",
        "--silence-ms", "3000"]
LABEL = b"fleetlab link mac v1"


def hkdf_sha256(ikm, salt, info, n):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, t, i = b"", b"", 1
    while len(out) < n:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:n]


def frame_keys(raw):
    """The keys of a decoded frame map, in wire order."""
    return list(raw.keys())


class KxWire(Wire):
    """A Wire that offers an X25519 key and MACs frames once keyed."""

    def __init__(self, addr, kx=True):
        super().__init__(addr)
        self.eph = X25519PrivateKey.generate()
        self.kx = self.eph.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.offer = self.kx if kx is True else kx   # bytes: what to offer
        self.tx = self.rx = None

    def hello(self, echo=b"", signer=None, kx=None):
        body = {"addr": "127.0.0.1:1", "echo": echo, "name": "wire",
                "nonce": self.nonce}
        kx = self.offer if kx is None else kx
        if kx:
            body["kx"] = kx
        self.send(HELLO, body, signer=signer)

    def handshake(self, proof_kx=None):
        self.read_hello()
        self.hello()
        self.hello(echo=self.peer["body"]["nonce"], kx=proof_kx)
        proof = self.recv_kind(HELLO)
        assert proof is not None and proof["body"]["echo"] == self.nonce, \
            "no proof from the peer"
        their = self.peer["body"].get("kx")
        assert proof["body"].get("kx") == their, "proof's kx is not hello's"
        if their is not None and self.offer:
            self.derive(their)
        return self

    def derive(self, their_kx):
        ikm = self.eph.exchange(X25519PublicKey.from_public_bytes(their_kx))
        mine, theirs = self.key.id, self.peer["from"]
        lower = mine < theirs
        n_lo, n_hi = ((self.nonce, self.peer["body"]["nonce"]) if lower else
                      (self.peer["body"]["nonce"], self.nonce))
        id_lo, id_hi = (mine, theirs) if lower else (theirs, mine)
        okm = hkdf_sha256(ikm, n_lo + n_hi, LABEL + id_lo + id_hi, 64)
        k_lo, k_hi = okm[:32], okm[32:]
        self.tx, self.rx = (k_lo, k_hi) if lower else (k_hi, k_lo)

    def send_mac(self, kind, body, flip=None, key=None):
        env = cbor({"to": self.peer["from"], "ver": 1, "body": body,
                    "from": self.key.id, "kind": kind, "group": "fleet",
                    "stamp": self.stamp()})
        tag = bytearray(hmac.new(key or self.tx, env, hashlib.sha256).digest())
        if flip is not None:
            tag[flip] ^= 1
        f = b"\xa2" + cbor("env") + env + cbor("mac") + cbor(bytes(tag))
        self.send_raw(struct.pack(">I", len(f)) + f)

    def recv_frame(self, kind):
        """The next frame of kind as (env dict, frame dict, env bytes)."""
        while True:
            while True:
                if len(self.buf) >= 4:
                    n = struct.unpack(">I", self.buf[:4])[0]
                    if len(self.buf) >= 4 + n:
                        break
                chunk = self.sock.recv(65536)
                assert chunk, "closed while waiting for kind %d" % kind
                self.buf += chunk
            f, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
            m, _ = decode(f)
            if m["env"]["kind"] != kind:
                continue
            # The envelope's bytes: the map after "env" (\x63env) at the
            # frame's start, up to the next frame key.
            start = 1 + 4
            end = start + len(cbor(m["env"]))
            return m["env"], m, f[start:end]


def bad(p, name):
    return p.metrics()["counters"]["frames.bad"][name]


def counters(p):
    return p.metrics()["counters"]


def test_mac_and_sig_peers_interoperate():
    with Fleet(extra=FAST) as f:
        a = f.add(extra=MAC).start()
        b = f.add(extra=SIG).start(seeds=[a.addr])
        f.wait_mesh([a, b])
        wa = a.call("write", type="x#v1", fields={"from": "a"})["id"]
        wb = b.call("write", type="x#v1", fields={"from": "b"})["id"]
        for p in (a, b):
            wait_until(lambda p=p: {e["id"] for e in p.call(
                "read", type="x#v1", all=True)["entries"]} == {wa, wb}, 10,
                "both writes on %s" % p.name)
        assert counters(a)["links.keyed"] == 0
        assert counters(b)["links.keyed"] == 0
        # A second mac peer: its link to a is keyed, to b is not.
        c = f.add(extra=MAC).start(seeds=[a.addr])
        f.wait_mesh([a, b, c])
        wait_until(lambda: counters(c)["links.keyed"] >= 1, 10,
                   "a keyed link on c")
        assert counters(a)["links.keyed"] >= 1
        assert counters(b)["links.keyed"] == 0
        wc = c.call("write", type="x#v1", fields={"from": "c"})["id"]
        wd = b.call("write", type="x#v1", fields={"from": "b2"})["id"]
        for p in (a, b, c):
            wait_until(lambda p=p: {e["id"] for e in p.call(
                "read", type="x#v1", all=True)["entries"]} ==
                {wa, wb, wc, wd}, 10, "every write on %s" % p.name)
        for p in (a, b, c):
            k = counters(p)
            assert k["frames.mac_failures"] == 0, p.name
            assert k["frames.signature_failures"] == 0, p.name
            assert sum(k["frames.bad"].values()) == 0, (p.name,
                                                        k["frames.bad"])


def test_client_without_kx_gets_signed_frames():
    with Fleet(extra=FAST) as f:
        a = f.add(extra=MAC).start()
        w = Wire(a.addr).handshake()
        assert len(w.peer["body"]["kx"]) == 32, w.peer["body"]
        w.send(PING, {"seq": 7})
        while True:
            env, raw = w.recv()
            if env["kind"] == ACK:
                break
        assert env["body"]["seq"] == 7
        assert frame_keys(raw) == ["env", "key", "sig"], frame_keys(raw)
        assert counters(a)["links.keyed"] == 0
        w.close()


def test_keyed_client_from_the_docs():
    with Fleet(extra=FAST) as f:
        a = f.add(extra=MAC).start()
        w = KxWire(a.addr).handshake()
        assert w.tx is not None
        w.send_mac(PING, {"seq": 9})
        env, raw, env_bytes = w.recv_frame(ACK)
        assert env["body"]["seq"] == 9
        assert frame_keys(raw) == ["env", "mac"], frame_keys(raw)
        want = hmac.new(w.rx, env_bytes, hashlib.sha256).digest()
        assert raw["mac"] == want, "the ACK's MAC does not check"
        assert counters(a)["links.keyed"] == 1
        # A signed frame on the keyed link is accepted too.
        w.send(PING, {"seq": 10})
        env, raw, _ = w.recv_frame(ACK)
        assert env["body"]["seq"] == 10 and "mac" in raw
        # One flipped MAC bit: the link closes, counted.
        w.send_mac(PING, {"seq": 11}, flip=5)
        assert w.closed()
        wait_until(lambda: counters(a)["frames.mac_failures"] == 1, 10,
                   "the MAC failure counted")
        assert bad(a, "bad_mac") == 1
        # A frame MAC'd with the key of another link (replayed or a third
        # party's) fails the same way.
        w2 = KxWire(a.addr).handshake()
        w2.send_mac(PING, {"seq": 12}, key=w.tx)
        assert w2.closed()
        wait_until(lambda: counters(a)["frames.mac_failures"] == 2, 10,
                   "the second MAC failure counted")


def test_refusals():
    with Fleet(extra=FAST) as f:
        a = f.add(extra=MAC).start()
        s = f.add(extra=SIG).start()
        # A MAC frame before UP: in place of the hello.
        w = KxWire(a.addr)
        w.read_hello()
        w.tx = os.urandom(32)
        w.send_mac(HELLO, {"addr": "127.0.0.1:1", "echo": b"",
                           "name": "wire", "nonce": w.nonce})
        assert w.closed()
        wait_until(lambda: bad(a, "unkeyed_mac") == 1, 10,
                   "unkeyed_mac before UP")
        # A sig peer offers no key; a MAC frame on its link is refused.
        w = KxWire(s.addr).handshake()
        assert "kx" not in w.peer["body"] and w.tx is None
        w.tx = os.urandom(32)
        w.send_mac(PING, {"seq": 1})
        assert w.closed()
        wait_until(lambda: bad(s, "unkeyed_mac") == 1, 10,
                   "unkeyed_mac on an unkeyed link")
        # A kx of 31 bytes is a malformed hello.
        w = KxWire(a.addr, kx=os.urandom(31))
        w.read_hello()
        w.hello()
        assert w.closed()
        wait_until(lambda: counters(a)["handshake.failed"]["bad_hello"] == 1,
                   10, "bad_hello for a 31-byte kx")
        # A hello with kx but without name (four keys, one missing: found
        # by fuzz_hello; a missing key is never a default).
        w = KxWire(a.addr)
        w.read_hello()
        w.send(HELLO, {"kx": w.kx, "addr": "127.0.0.1:1", "echo": b"",
                       "nonce": w.nonce})
        assert w.closed()
        wait_until(lambda: counters(a)["handshake.failed"]["bad_hello"] == 2,
                   10, "bad_hello for a hello without name")
        # A proof whose kx is not its hello's.
        w = KxWire(a.addr)
        w.read_hello()
        w.hello()
        w.hello(echo=w.peer["body"]["nonce"], kx=os.urandom(32))
        assert w.closed()
        wait_until(lambda: counters(a)["handshake.failed"]["bad_hello"] == 3,
                   10, "bad_hello for a proof with another kx")
        assert counters(a)["links.keyed"] == 0


def test_tls_offers_no_key():
    with Fleet(extra=FAST + ["--binding", "tls"] + MAC) as f:
        peers = f.start(2)
        for p in peers:
            assert counters(p)["links.keyed"] == 0
            assert counters(p)["links.up"] >= 1


def test_dtls_offers_no_key():
    with Fleet(extra=FAST + ["--binding", "dtls"] + MAC) as f:
        peers = f.start(2)
        for p in peers:
            assert counters(p)["links.keyed"] == 0
            assert counters(p)["links.up"] >= 1


if __name__ == "__main__":
    run([test_mac_and_sig_peers_interoperate,
         test_client_without_kx_gets_signed_frames,
         test_keyed_client_from_the_docs, test_refusals,
         test_tls_offers_no_key, test_dtls_offers_no_key])

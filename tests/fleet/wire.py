"""wire.py: a small client of the peer protocol written from docs/protocol.md,
for fleet tests that must speak the wire themselves (handshake violations,
rumors with a chosen rid, floods).  Ed25519 from python3-cryptography, the
deterministic CBOR encoder of fleet.py, and a decoder for what peerd sends.
"""
import hashlib
import os
import socket
import struct
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey)
from cryptography.hazmat.primitives import serialization

from fleet import cbor

HELLO, PING, RUMOR, BYE = 1, 2, 5, 15


def decode(b, i=0):
    """One CBOR item of b at i: (value, next index).  Only what peerd
    sends: ints, strings, arrays, maps, false/true/null."""
    ib = b[i]
    major, ai = ib >> 5, ib & 31
    i += 1
    if ai < 24:
        n = ai
    elif ai in (24, 25, 26, 27):
        size = 1 << (ai - 24)
        n = int.from_bytes(b[i:i + size], "big")
        i += size
    else:
        raise ValueError("unsupported CBOR head %#x" % ib)
    if major == 0:
        return n, i
    if major == 1:
        return -1 - n, i
    if major == 2:
        return bytes(b[i:i + n]), i + n
    if major == 3:
        return bytes(b[i:i + n]).decode(), i + n
    if major == 4:
        out = []
        for _ in range(n):
            v, i = decode(b, i)
            out.append(v)
        return out, i
    if major == 5:
        out = {}
        for _ in range(n):
            k, i = decode(b, i)
            v, i = decode(b, i)
            out[k] = v
        return out, i
    if major == 7:
        return {20: False, 21: True, 22: None}[ai], i
    raise ValueError("unsupported CBOR major %d" % major)


class Key:
    """An Ed25519 identity: id = SHA-256(public key)."""

    def __init__(self, seed=None):
        self.sk = (Ed25519PrivateKey.from_private_bytes(seed) if seed
                   else Ed25519PrivateKey.generate())
        self.pub = self.sk.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.id = hashlib.sha256(self.pub).digest()
        self.node = int.from_bytes(self.id[:8], "big")

    def sign(self, msg):
        return self.sk.sign(msg)


def frame(key, kind, body, to=b"", stamp=None, group="fleet", signer=None):
    """A complete frame on the wire (length prefix included).  signer, if
    given, signs in key's name (a proof signed by another key)."""
    env = cbor({"to": to, "ver": 1, "body": body, "from": key.id,
                "kind": kind, "group": group, "stamp": stamp})
    # cbor() of a dict re-encodes; build the frame map by hand so the
    # signed envelope bytes are exactly the ones sent.
    sig = (signer or key).sign(env)
    f = b"\xa3" + cbor("env") + env + cbor("key") + cbor(key.pub) + \
        cbor("sig") + cbor(sig)
    return struct.pack(">I", len(f)) + f


class Wire:
    """One TCP connection to a peer, with a key of its own."""

    def __init__(self, addr, key=None, timeout=10.0):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout)
        self.key = key or Key()
        self.nonce = os.urandom(16)
        self.buf = b""
        self.phys = int(time.time() * 1000)
        self.logical = 0
        self.peer = None        # their hello's envelope, once read

    def stamp(self):
        now = int(time.time() * 1000)
        if now > self.phys:
            self.phys, self.logical = now, 0
        else:
            self.logical += 1
        return [self.phys, self.logical, self.key.node]

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, kind, body, to=None, signer=None):
        if to is None:
            to = self.peer["from"] if (self.peer and kind != HELLO) else b""
        self.send_raw(frame(self.key, kind, body, to, self.stamp(),
                            signer=signer))

    def recv(self):
        """The next frame as (envelope dict, raw env bytes), or None at
        EOF."""
        while True:
            if len(self.buf) >= 4:
                n = struct.unpack(">I", self.buf[:4])[0]
                if len(self.buf) >= 4 + n:
                    f, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    m, _ = decode(f)
                    return m["env"], m
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                return None
            if not chunk:
                return None
            self.buf += chunk

    def recv_kind(self, kind):
        while True:
            got = self.recv()
            if got is None:
                return None
            if got[0]["kind"] == kind:
                return got[0]

    def hello(self, echo=b"", signer=None):
        self.send(HELLO, {"addr": "127.0.0.1:1", "echo": echo,
                          "name": "wire", "nonce": self.nonce},
                  signer=signer)

    def read_hello(self):
        self.peer = self.recv_kind(HELLO)
        assert self.peer is not None, "no hello from the peer"
        return self.peer

    def handshake(self):
        """Their hello, our hello and proof, their proof: the link is UP."""
        self.read_hello()
        self.hello()
        self.hello(echo=self.peer["body"]["nonce"])
        proof = self.recv_kind(HELLO)
        assert proof is not None and proof["body"]["echo"] == self.nonce, \
            "no proof from the peer"
        return self

    def closed(self, timeout=10.0):
        """True once the peer closes (whatever it sent before)."""
        self.sock.settimeout(timeout)
        try:
            while self.sock.recv(65536):
                pass
        except (ConnectionResetError, socket.timeout):
            pass
        return True

    def close(self):
        self.sock.close()

#!/usr/bin/env python3
"""A take's deadline holds with a silent member (docs/control.md, take;
docs/protocol.md section 6, rule (b)): one linked member that keeps its
link alive (it answers every PING with an ACK) but never answers a claim
holds a take only until the take's deadline, not for the claim's whole
--take-lease-ms; the reply has no entry and names the member
("unanswered"), and takes.unanswered counts it.  In lease mode and in
quorum mode, and for a take with timeout_ms 0 (one claim: waited for
--answer-wait-ms past its settle window).

The member is played with wire.py: it authenticates and then only reads,
answering PINGs.  The lease is 20 s and the control socket waits 10 s
for each reply, so on a peer that waits out the lease (main at eb69bdb)
the take's reply never comes in time and the test fails, bounded."""
import socket
import threading

from fleet import Fleet, run, wait_until
from wire import PING, Wire

ACK = 4
LEASE = ["--take-lease-ms", "20000", "--silence-ms", "1500",
         "--settle-ms", "50", "--answer-wait-ms", "300"]
REPLY_WAIT = 10.0       # half the lease: a reply after the lease is late


class PingOnly:
    """A member that authenticates, then answers PINGs and nothing else
    (every other frame, the claims among them, is read and ignored)."""

    def __init__(self, addr):
        self.w = Wire(addr).handshake()
        self.pings = 0
        self.t = threading.Thread(target=self.serve, daemon=True)
        self.t.start()

    def serve(self):
        self.w.sock.settimeout(None)
        while True:
            try:
                got = self.w.recv()
            except OSError:
                return
            if got is None:
                return
            env = got[0]
            if env["kind"] == PING:
                self.pings += 1
                try:
                    self.w.send(ACK, {"seq": env["body"]["seq"]})
                except OSError:
                    return

    def close(self):
        try:
            self.w.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.t.join(5)
        self.w.close()


def silent_take(extra, timeout_ms, check):
    with Fleet(extra=LEASE + extra) as f:
        p = f.add().start()
        m = PingOnly(p.addr)
        try:
            wait_until(lambda: [x for x in p.call("peers")["members"]
                                if x["link"]], 10, "the member linked")
            mid = [x["peer_id"] for x in p.call("peers")["members"]
                   if x["link"]][0]
            # Its link lives on PINGs it answers (a quarter to 3/8 of the
            # 1.5 s silence window apart).
            wait_until(lambda: m.pings >= 1, 10, "a PING answered")
            p.call("write", type="t#v1", fields={"k": 1})
            p.ctl().sock.settimeout(REPLY_WAIT)
            r = p.call("take", type="t#v1", timeout_ms=timeout_ms)
            assert r["entry"] is None, r
            assert r["attempts"] == 1, r
            assert r.get("unanswered") == [mid], (r, mid)
            c = p.metrics()["counters"]
            assert c["takes.unanswered"] == 1, c["takes.unanswered"]
            assert c["takes.won"] == 0
            check(c)
            # The member was live throughout: still linked, still pinged.
            assert [x for x in p.call("peers")["members"] if x["link"]]
        finally:
            m.close()


def test_lease_take_ends_at_its_deadline():
    def check(c):
        assert c["takes.untrusted"] == 1, c["takes.untrusted"]
        assert c["claims.acks_received"] == 0
    silent_take([], 500, check)


def test_lease_take_of_one_claim_waits_answer_wait_ms():
    silent_take([], 0, lambda c: None)


def test_quorum_take_ends_at_its_deadline():
    def check(c):
        assert c["takes.no_quorum"] == 1, c["takes.no_quorum"]
    silent_take(["--take-mode", "quorum"], 500, check)


if __name__ == "__main__":
    run([test_lease_take_ends_at_its_deadline,
         test_lease_take_of_one_claim_waits_answer_wait_ms,
         test_quorum_take_ends_at_its_deadline])

#!/usr/bin/env python3
"""The content swarm at toy scale: one publisher and three fetchers moving a
few MiB in 64 KiB pieces (every fetcher ends with the publisher's SHA-256,
and fetchers serve each other); a peer serving corrupt pieces (the test-only
fault) and a fetch that still completes with the right hash, the bad pieces
counted against that peer (a piece travels outside the frame's signature, so
this is the swarm layer catching a payload that does not match its manifest);
a peer whose payloads are shorter than the length its signed body says, whose
links close on each such piece while the fetch completes from the others; a
fetcher killed mid-fetch and restarted with the
same directory, resuming from its persisted pieces; and the refusals
(unknown cid, a piece over 4 MiB).  Waits are bounded conditions; nothing
asserts a time."""
import hashlib
import os
import signal

from fleet import CtlError, Fleet, run, wait_until

FAST = ["--gossip-ms", "200", "--tick-ms", "50", "--ping-timeout-ms", "300",
        "--silence-ms", "3000"]
MIB = 1 << 20


def splitmix_blob(size, seed):
    """The generated content of publish {"size", "seed"} (docs/control.md)."""
    out = bytearray()
    st = seed
    mask = (1 << 64) - 1
    while len(out) < size:
        st = (st + 0x9e3779b97f4a7c15) & mask
        z = st
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & mask
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & mask
        z ^= z >> 31
        out += z.to_bytes(8, "little")
    return bytes(out[:size])


def content(p, cid):
    return p.call("content", cid=cid)


def complete(p, cid):
    c = content(p, cid)
    return c if c["complete"] else None


def test_publish_generated_and_file():
    with Fleet(extra=FAST) as f:
        (p,) = f.start(1)
        size = 100000
        pub = p.call("publish", size=size, seed=7, piece_kib=16)
        blob = splitmix_blob(size, 7)
        assert pub["sha256"] == hashlib.sha256(blob).hexdigest(), pub
        assert pub["pieces"] == 7 and pub["piece_size"] == 16384, pub
        assert pub["complete"] and pub["role"] == "publisher"
        # The same bytes from a file make the same manifest, the same cid.
        path = os.path.join(f.tmp, "blob.bin")
        with open(path, "wb") as fh:
            fh.write(blob)
        again = p.call("publish", path=path, piece_kib=16)
        assert again["cid"] == pub["cid"], (again, pub)
        other = p.call("publish", path=path, piece_kib=32)
        assert other["cid"] != pub["cid"]
        assert other["sha256"] == pub["sha256"]
        listed = {c["cid"] for c in p.call("content")["contents"]}
        assert listed == {pub["cid"], other["cid"]}, listed


def test_refusals():
    with Fleet(extra=FAST) as f:
        a, b = f.start(2)
        for bad in ({"size": 1000, "seed": 1, "piece_kib": 8192},
                    {"size": 1000, "seed": 1, "piece_kib": 0},
                    {"seed": 1},
                    {"size": 0, "seed": 1},
                    {"path": "/nonexistent/file", "size": 5}):
            try:
                a.call("publish", **bad)
                raise AssertionError("publish %r accepted" % bad)
            except CtlError as e:
                assert e.code == "bad_args", (bad, e)
        try:
            a.call("publish", size=1000, piece_kib=8192)
        except CtlError as e:
            assert "4 MiB" in e.message, e
        unknown = "ab" * 32
        for call in (lambda: b.call("fetch", cid=unknown),
                     lambda: b.call("content", cid=unknown)):
            try:
                call()
                raise AssertionError("unknown cid accepted")
            except CtlError as e:
                assert e.code == "not_found", e
        try:
            b.call("fetch", cid="xyz")
            raise AssertionError("bad cid accepted")
        except CtlError as e:
            assert e.code == "bad_args", e


def test_swarm_four_peers():
    with Fleet(extra=FAST) as f:
        peers = f.start(4)
        seeder, fetchers = peers[0], peers[1:]
        size = 6 * MIB + 12345
        pub = seeder.call("publish", size=size, seed=42, piece_kib=64)
        cid = pub["cid"]
        for p in fetchers:
            r = p.call("fetch", cid=cid)
            assert r["pieces"] == pub["pieces"] and r["role"] == "fetcher"
        done = {}
        for p in fetchers:
            done[p.name] = wait_until(lambda: complete(p, cid), 120,
                                      "%s to complete" % p.name)
        for name, c in done.items():
            assert c["sha256"] == pub["sha256"], (name, c)
            assert c["verified"] == pub["pieces"]
            assert c["bad_pieces"] == 0, c
            assert sum(c["from"].values()) >= size, c
        # Fetchers served each other: the seeder is not the only server.
        from_fetchers = sum(v for c in done.values()
                            for k, v in c["from"].items() if k != seeder.name)
        assert from_fetchers > 0, done
        served = content(seeder, cid)["bytes_served"]
        assert 0 < served <= 3 * size + 3 * 65536 * 4, served
        for p in fetchers:
            cnt = p.metrics()["counters"]
            assert cnt["swarm.pieces_received"] == pub["pieces"], cnt
            assert cnt["swarm.bytes_received"] == size
        # A late fetch of a complete blob answers at once, complete.
        assert fetchers[0].call("fetch", cid=cid, wait=True)["complete"]


def test_seed_deflects_a_piece_it_has_sent():
    """A seed sends each piece out once: a later asker is told to get it
    elsewhere (once per piece), and gets it from a fetcher that has it."""
    with Fleet(extra=FAST) as f:
        seeder, first, late = f.start(3)
        # Pieces of 256 KiB: read straight from the socket (link.c).
        pub = seeder.call("publish", size=4 * MIB, seed=8, piece_kib=256)
        cid, total = pub["cid"], pub["pieces"]
        first.call("fetch", cid=cid)
        got = wait_until(lambda: complete(first, cid), 120, "the first copy")
        # All of it from the seeder (the late peer may be listed, with 0).
        assert got["from"][seeder.name] == 4 * MIB, got
        assert sum(got["from"].values()) == 4 * MIB, got
        assert content(seeder, cid)["deflected"] == 0
        late.call("fetch", cid=cid)
        c = wait_until(lambda: complete(late, cid), 120, "the late copy")
        assert c["sha256"] == pub["sha256"], c
        s = content(seeder, cid)
        # Every piece had left the seeder once: each one the late fetcher
        # asked of it was deflected first, and it is told so only once.
        assert 1 <= s["deflected"] <= total, s
        assert s["sources"][late.name]["deflected"] == s["deflected"], s
        assert c["deflections"] == s["deflected"], (c, s)
        assert c["from"].get(first.name, 0) > 0, c
        assert seeder.counter("swarm.deflected") == s["deflected"]
        assert seeder.counter("swarm.refused") == 0


def test_deflected_fetch_completes_when_the_other_holder_is_gone():
    """The seed deflects a piece it has sent, but the fetcher it went to is
    gone: the asker waits out the deflection, asks again and is served, so
    a deflection never stalls a fetch."""
    with Fleet(extra=FAST) as f:
        seeder, first, late = f.start(3)
        pub = seeder.call("publish", size=1 * MIB, seed=12, piece_kib=256)
        cid, total = pub["cid"], pub["pieces"]
        first.call("fetch", cid=cid)
        wait_until(lambda: complete(first, cid), 120, "the first copy")
        first.stop()
        late.call("fetch", cid=cid)
        c = wait_until(lambda: complete(late, cid), 120, "the late copy")
        assert c["sha256"] == pub["sha256"], c
        assert c["from"][seeder.name] == 1 * MIB, c
        # Every piece was deflected once, then served on the second ask.
        assert c["deflections"] == total, c
        s = content(seeder, cid)
        assert s["sources"][late.name]["deflected"] == total, s
        assert s["sources"][late.name]["pieces_to"] == total, s
        assert c["stalls"] == 0


def test_direct_io_serves_recent_pieces_from_memory():
    """peerd --direct-io: a fetcher writes its pieces past the page cache
    and serves the ones it still caches from memory; the copies are
    right, and a restarted peer reads its store back."""
    with Fleet(extra=FAST + ["--direct-io"]) as f:
        seeder, first, late = f.start(3)
        # 3 MiB in 256 KiB pieces: all fit the 8 MiB cache.
        pub = seeder.call("publish", size=3 * MIB, seed=11, piece_kib=256)
        cid = pub["cid"]
        assert pub["direct_io"] is False     # a publisher serves its file
        first.call("fetch", cid=cid)
        got = wait_until(lambda: complete(first, cid), 120, "the first copy")
        assert got["sha256"] == pub["sha256"], got
        assert got["direct_io"] is True, got
        late.call("fetch", cid=cid)
        c = wait_until(lambda: complete(late, cid), 120, "the late copy")
        assert c["sha256"] == pub["sha256"], c
        # The seeder deflects every piece it already sent, so the late
        # fetcher takes most from the first, which serves them cached.
        sent = content(first, cid)["sources"][late.name]["pieces_to"]
        assert sent > 0, content(first, cid)
        assert first.counter("swarm.pieces_served_cached") == sent
        # The store is on disk, not only in the cache.
        first.stop()
        first.start(seeds=[seeder.addr])
        again = content(first, cid)
        assert again["complete"] and again["sha256"] == pub["sha256"], again


def test_corrupt_server_does_not_spoil_the_fetch():
    with Fleet(extra=FAST) as f:
        seeder, liar, fetcher = f.start(3)
        pub = seeder.call("publish", size=3 * MIB, seed=5, piece_kib=64)
        cid = pub["cid"]
        # Poll rather than wait=True: a control call has a 10 s socket
        # timeout, and a loaded host may take longer than that.
        liar.call("fetch", cid=cid)
        got = wait_until(lambda: complete(liar, cid), 120, "the liar's copy")
        assert got["sha256"] == pub["sha256"]
        assert liar.call("swarm_fault", corrupt_pieces=True)[
            "corrupt_pieces"] is True
        fetcher.call("fetch", cid=cid)
        c = wait_until(lambda: complete(fetcher, cid), 120, "the fetch")
        assert c["sha256"] == pub["sha256"], c
        assert c["bad"][liar.name] >= 1, c
        assert c["bad"][seeder.name] == 0, c
        assert c["bad_pieces"] >= 1
        assert fetcher.counter("swarm.pieces_bad") >= 1


def test_short_payload_closes_the_link():
    with Fleet(extra=FAST) as f:
        seeder, liar, fetcher = f.start(3)
        pub = seeder.call("publish", size=2 * MIB, seed=6, piece_kib=64)
        cid = pub["cid"]
        liar.call("fetch", cid=cid)
        wait_until(lambda: complete(liar, cid), 120, "the liar's copy")
        r = liar.call("swarm_fault", short_pieces=True)
        assert r["short_pieces"] is True and r["corrupt_pieces"] is False, r
        fetcher.call("fetch", cid=cid)
        c = wait_until(lambda: complete(fetcher, cid), 120, "the fetch")
        assert c["sha256"] == pub["sha256"], c
        # Each short piece closed the liar's link and counted against it;
        # nothing short was stored.
        assert c["truncated"] >= 1, c
        assert c["bad"][liar.name] >= 1 and c["bad"][seeder.name] == 0, c
        assert fetcher.counter("swarm.pieces_truncated") >= 1
        assert c["from"].get(liar.name, 0) == 0, c


def test_delayed_frames_keep_their_order():
    """The delay fault keeps a link's frames in order even when several are
    queued in one turn of the loop (same expiry): wants answered together
    arrive in order, none is taken for a replay."""
    with Fleet(extra=FAST) as f:
        seeder, fetcher = f.start(2)
        pub = seeder.call("publish", size=2 * MIB, seed=13, piece_kib=64)
        cid = pub["cid"]
        seeder.call("fault", peer="*", delay_ms=30)
        fetcher.call("fetch", cid=cid, inflight=8)
        c = wait_until(lambda: complete(fetcher, cid), 120, "the fetch")
        assert c["sha256"] == pub["sha256"], c
        rejected = fetcher.metrics()["counters"]["frames.rejected"]
        assert rejected.get("replay", 0) == 0, rejected
        assert c["timeouts"] == 0, c


def test_killed_fetcher_resumes_from_its_pieces():
    with Fleet(extra=FAST) as f:
        seeder, fetcher = f.start(2)
        pub = seeder.call("publish", size=4 * MIB, seed=9, piece_kib=64)
        cid, total = pub["cid"], pub["pieces"]
        # Slow the seeder down so the kill lands mid-fetch.
        seeder.call("fault", peer="*", delay_ms=40)
        fetcher.call("fetch", cid=cid, inflight=1, timeout_ms=30000)
        wait_until(lambda: content(fetcher, cid)["verified"] >= total // 4,
                   60, "a quarter of the pieces")
        fetcher.signal(signal.SIGKILL)
        fetcher.proc.wait()
        seeder.call("fault", clear=True)
        fetcher.start(seeds=[seeder.addr])
        c = content(fetcher, cid)
        assert c["resumed"] is True, c
        start = c["pieces_at_start"]
        assert 0 < start < total, c
        c = wait_until(lambda: complete(fetcher, cid), 120, "the resumed "
                       "fetch")
        assert c["sha256"] == pub["sha256"], c
        assert c["pieces_fetched"] == total - start, c
        assert c["pieces_fetched"] < total


if __name__ == "__main__":
    run([test_publish_generated_and_file, test_refusals,
         test_swarm_four_peers, test_seed_deflects_a_piece_it_has_sent,
         test_deflected_fetch_completes_when_the_other_holder_is_gone,
         test_direct_io_serves_recent_pieces_from_memory,
         test_corrupt_server_does_not_spoil_the_fetch,
         test_short_payload_closes_the_link, test_delayed_frames_keep_their_order,
         test_killed_fetcher_resumes_from_its_pieces])

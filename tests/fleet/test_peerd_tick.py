#!/usr/bin/env python3
"""The daemon's tick sleeps until its earliest due work (docs/protocol.md,
"What runs when"): an idle peer, alone or with a full view, runs it about
once per --gossip-ms, not every --tick-ms; while a link is being made it
runs every --tick-ms again; and the work it times is still done on time:
a silent link is still pinged, and a stopped neighbour's link still closed
after the silence window."""
import signal
import time

from fleet import Fleet, pause, run, wait_until

TICK_MS = 50
GOSSIP_MS = 1000
EXTRA = ["--tick-ms", str(TICK_MS), "--gossip-ms", str(GOSSIP_MS)]
SILENCE_MS = 12000      # pings after 3 s of silence


# An upper bound on a rate only: a loaded box ticks less, never more.
def tick_rate(p, seconds):
    t0, n0 = time.monotonic(), p.counter("tick.runs")
    pause(seconds)
    return (p.counter("tick.runs") - n0) / (time.monotonic() - t0)


def test_an_idle_peer_ticks_once_a_repair_period():
    with Fleet() as f:
        a, = f.start(1, extra=EXTRA)
        # Every --tick-ms would be 20 a second; the cap is one a second.
        r = tick_rate(a, 3.0)
        assert r <= 1000.0 / GOSSIP_MS + 0.7, r


def test_a_full_view_at_rest_ticks_seldom_and_still_pings():
    with Fleet() as f:
        ps = f.start(3, extra=EXTRA + ["--silence-ms", str(SILENCE_MS)])
        f.wait_mesh()
        pause(1.0)
        pings = sum(p.counter("frames.out_by_kind")["ping"] for p in ps)
        rates = [tick_rate(p, 4.0) for p in ps]
        assert all(r <= 1000.0 / GOSSIP_MS + 1.0 for r in rates), rates
        # Silent links are pinged after a quarter of the silence window
        # (3 s here): 5 s on, some were.
        after = sum(p.counter("frames.out_by_kind")["ping"] for p in ps)
        assert after > pings, (pings, after)


def test_a_stopped_neighbour_is_still_dropped_after_the_silence_window():
    with Fleet() as f:
        a, b = f.start(2, extra=EXTRA + ["--silence-ms", "4000"])
        f.wait_mesh()
        b.signal(signal.SIGSTOP)
        try:
            def gone():
                return not any(m["link"] for m in a.call("peers")["members"])
            # The wait's bound, not a figure asserted: the window is 4 s.
            wait_until(gone, 15.0, "a to drop its link to the stopped b")
        finally:
            b.signal(signal.SIGCONT)


if __name__ == "__main__":
    run([test_an_idle_peer_ticks_once_a_repair_period,
         test_a_full_view_at_rest_ticks_seldom_and_still_pings,
         test_a_stopped_neighbour_is_still_dropped_after_the_silence_window])

#!/usr/bin/env python3
"""syscall_row.py PEERDIR: one peer's system calls per take it won.

PEERDIR is results/.../peers/<k> of a throughput run whose peer k ran under
`--wrap k='strace -c -f -o {dir}/strace.txt'` (a summary) or
`--wrap k='strace -f -yy -o {dir}/strace.out'` (every call, its descriptor
named).  Divides by that peer's takes.won (metrics.json).  For a summary
it prints each call's count a take; for a full trace the reads, writes
and sends are split by what their descriptor is (TCP: the links; UNIX:
the control socket), so the control socket's share a take can be read.
"""
import collections
import json
import os
import re
import sys

IO = {"read", "readv", "recvfrom", "recvmsg", "write", "writev", "sendto",
      "sendmsg", "ioctl", "epoll_ctl"}


def summary(path):
    calls = {}
    for ln in open(path):
        f = ln.split()
        if len(f) >= 5 and f[0][0].isdigit() and not f[-1].startswith("-"):
            try:
                calls[f[-1]] = int(f[3])
            except ValueError:
                pass
    return calls


def full(path):
    calls = collections.Counter()
    call = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\((.*)")
    for ln in open(path):
        m = call.match(ln)
        if not m or "resumed>" in ln:
            continue
        name, rest = m.group(1), m.group(2)
        if name in IO:
            # epoll_ctl(epfd, op, fd<...>): the watched descriptor's kind.
            arg = rest.split(",", 3)[2] if name == "epoll_ctl" else rest
            kind = ("control" if "UNIX" in arg[:200] else
                    "link" if "TCP" in arg[:200] else "other")
            calls["%s %s" % (name, kind)] += 1
        else:
            calls[name] += 1
    return calls


def main(d):
    won = json.load(open(os.path.join(d, "metrics.json")))["counters"][
        "takes.won"]
    if os.path.exists(os.path.join(d, "strace.txt")):
        calls = summary(os.path.join(d, "strace.txt"))
    else:
        calls = full(os.path.join(d, "strace.out"))
    calls.pop("total", None)
    tot = sum(calls.values())
    print("takes won %d, system calls %d, %.2f a take" % (won, tot,
                                                         tot / won))
    for name, n in sorted(calls.items(), key=lambda x: -x[1])[:20]:
        if n / won >= 0.01:
            print("| %s | %.2f |" % (name, n / won))


if __name__ == "__main__":
    main(sys.argv[1])

"""Helpers of the netns launcher's tests (test_netns*.py): whether this box
can run them, what a run made (its id, from the timeline), and removing
it when a test failed half-way (the test's own, by the run's id)."""
import json
import os
import shutil
import subprocess
import sys

NETNS_DIR = "/run/netns"
STATE_DIR = "/run/fleet-lab"


def usable():
    """None when the netns launcher can run here, else why not."""
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("ip") is None or shutil.which("nft") is None:
        return "ip (iproute2) or nft (nftables) is missing"
    p = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        return "ip netns is unavailable: %s" % p.stderr.decode().strip()
    return None


def skip_unless_usable(name):
    why = usable()
    if why is not None:
        print("%s: skipped: the netns launcher cannot run here (%s)"
              % (name, why))
        sys.exit(0)


def run_id(d):
    """The launcher's id for the run (the timeline's "launcher" event)."""
    for ev in timeline(d):
        if ev.get("event") == "launcher" and ev.get("id"):
            return ev["id"]
    return None


def left(rid):
    """What of run rid is still there: its namespaces and state file."""
    out = []
    if os.path.isdir(NETNS_DIR):
        out += [n for n in os.listdir(NETNS_DIR) if n.startswith(rid + "-")]
    if os.path.exists(os.path.join(STATE_DIR, rid + ".json")):
        out.append(rid + ".json")
    return out


def root_view():
    """The root namespace's veths and nft tables: none are ever ours."""
    links = subprocess.run(["ip", "-o", "link", "show", "type", "veth"],
                           stdout=subprocess.PIPE).stdout.decode()
    tables = subprocess.run(["nft", "list", "tables"],
                            stdout=subprocess.PIPE).stdout.decode()
    return ([ln.split(":")[1].strip() for ln in links.splitlines()],
            [t for t in tables.splitlines() if "fleetlab" in t])


def purge(rid, proc=None):
    """A failed test's cleanup: kill its orchestrator proc if it still
    runs, and remove what run rid left."""
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()
    if not rid:
        return
    for n in left(rid):
        if n.endswith(".json"):
            os.unlink(os.path.join(STATE_DIR, n))
        else:
            subprocess.run(["ip", "netns", "del", n],
                           stderr=subprocess.DEVNULL)


def timeline(d):
    path = os.path.join(d, "timeline.ndjson")
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(ln) for ln in fh if ln.endswith("\n")]


def run_dir(out):
    link = os.path.join(out, "latest")
    return os.path.realpath(link) if os.path.exists(link) else None


def assert_nothing_left(rid, before):
    """Nothing of run rid left, and no veth or fleetlab table in the root
    namespace beyond before (root_view() taken before the run)."""
    assert rid, "no launcher id in the timeline"
    assert left(rid) == [], left(rid)
    links, tables = root_view()
    assert tables == [], tables
    assert set(links) <= set(before[0]), (links, before[0])

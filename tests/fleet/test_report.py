#!/usr/bin/env python3
"""The bundle a person reads: report.html rendered in headless Chromium
(Debian's chromium; it must be installed: the test fails, never skips,
without it) from a real run with a kill and a restart, asserting every
chart is there and drawn at a non-zero size, that its data points match
samples.ndjson, that the fault window is shaded, and that the page made no
network request (Chromium's net log; a control page that fetches proves
the detection sees a request).  Also report.csv's exact RFC 4180 form,
report.json without float noise, run.json's build, the stderr summary of a
failed check, and --help/--version on every program."""
import csv
import glob
import json
import os
import shutil
import subprocess
import tempfile

from fleet import BUILD, run

ORCH = os.path.join(BUILD, "orchestrate")
# sampled key: drawn as a rate per second
SAMPLED = {"gauges.records": False, "gauges.links": False,
           "frames.out": True, "bytes.out": True, "space.writes": False,
           "takes.won": False}
PROGRAMS = ["orchestrate", "peerd", "peerctl", "tcpstream", "bench"]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-quic", "--no-first-run",
                  "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("chromium is not installed: run scripts/deps as "
                         "root (Debian package chromium)")


def render(tmp, url, netlog, extra=()):
    """The DOM of url after its scripts ran, with a fresh profile; the
    browser's net log goes to netlog."""
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp)
    p = subprocess.run(["timeout", "60", chromium()] + CHROMIUM_FLAGS +
                       ["--user-data-dir=" + profile,
                        "--log-net-log=" + netlog,
                        "--virtual-time-budget=5000"] + list(extra) +
                       ["--dump-dom", url],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=90)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return p.stdout.decode()


def page_requests(netlog):
    """URLs the page asked the network for.  The browser's own requests
    (update checks and the like, which the flags do not all silence) have
    no origin; a page's have the page's origin ("null" or file://)."""
    with open(netlog) as fh:
        d = json.load(fh)
    names = {v: k for k, v in d["constants"]["logEventTypes"].items()}
    urls = []
    for ev in d["events"]:
        p = ev.get("params", {})
        if names.get(ev["type"]) != "URL_REQUEST_START_JOB" or "url" not in p:
            continue
        if p.get("initiator") != "not an origin" or \
                "file://" in p.get("network_isolation_key", ""):
            urls.append(p.get("url"))
    return urls


HARNESS = """<!doctype html><html><body><pre id="probe">pending</pre>
<iframe id="f" src="%s" width="1200" height="900"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var out = {charts: []};
  try {
    var d = this.contentDocument;
    d.querySelectorAll('figure.chart').forEach(function (f) {
      var r = f.querySelector('svg').getBoundingClientRect(), series = {};
      f.querySelectorAll('polyline.series').forEach(function (p) {
        var b = p.getBBox();
        series[p.getAttribute('data-series')] = {
          points: p.points.numberOfItems, n: +p.getAttribute('data-n'),
          w: b.width, h: b.height};
      });
      out.charts.push({id: f.getAttribute('data-chart'), w: r.width,
        h: r.height, series: series,
        windows: Array.from(f.querySelectorAll('rect.window')).map(
          function (w) { return {label: w.getAttribute('data-label'),
                                 w: w.getBoundingClientRect().width}; })});
    });
  } catch (e) { out.error = String(e); }
  document.getElementById('probe').textContent =
    'RESULT:' + JSON.stringify(out);
});
</script></body></html>
"""

SCENARIO = {
    "name": "charts",
    "description": "gossip with a kill and a restart, sampled every 100 ms",
    "sample_ms": 100,
    "fleet": {"peers": 3, "topology": "mesh"},
    "steps": [
        {"action": "start"},
        {"action": "wait", "until": "connected"},
        {"action": "write", "peer": 0, "count": 60, "rate": 200,
         "type": "rumor#v1"},
        {"action": "kill", "peer": 2},
        {"action": "sleep", "ms": 300},
        {"action": "restart", "peer": 2},
        {"action": "wait", "until": "visible"},
        {"action": "wait", "until": "converged"},
    ],
    "checks": [{"name": "nothing lost", "metric": "history.lost",
                "op": "==", "bound": 0},
               {"name": "impossible", "metric": "gossip.write_to_visible",
                "stat": "p50", "op": "<=", "bound": 0}],
}


def one_run(tmp):
    path = os.path.join(tmp, "charts.json")
    with open(path, "w") as fh:
        json.dump(SCENARIO, fh)
    p = subprocess.run([ORCH, path, "--out", tmp, "--seed", "11"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    assert p.returncode == 1, p.stderr.decode()[-2000:]
    return os.path.realpath(os.path.join(tmp, "latest")), p.stderr.decode()


def sample_value(s, key):
    if key.startswith("gauges."):
        return s["gauges"][key[7:]]
    return s[key]


def expected_points(run_dir):
    """Per peer name: sample lines (a value chart draws one point each; a
    rate chart one fewer: it needs two samples); and the sampled keys that
    are not 0 throughout (those get a chart)."""
    with open(os.path.join(run_dir, "report.json")) as fh:
        rep = json.load(fh)
    names = {r["index"]: r["name"] for r in rep["peers"]}
    per, nonzero = {}, set()
    with open(os.path.join(run_dir, "samples.ndjson")) as fh:
        for line in fh:
            s = json.loads(line)
            per[names[s["peer"]]] = per.get(names[s["peer"]], 0) + 1
            for k in SAMPLED:
                if sample_value(s, k) != 0:
                    nonzero.add(k)
    return per, rep, nonzero


def test_report_html_draws_every_chart_and_fetches_nothing():
    tmp = tempfile.mkdtemp(prefix="report-", dir="/tmp")
    try:
        run_dir, _ = one_run(tmp)
        html = os.path.join(run_dir, "report.html")
        assert os.path.exists(html)
        per, rep, nonzero = expected_points(run_dir)
        assert sum(per.values()) > 6, per
        harness = os.path.join(tmp, "harness.html")
        with open(harness, "w") as fh:
            fh.write(HARNESS % ("file://" + html))
        dom = render(tmp, "file://" + harness, os.path.join(tmp, "net.json"),
                     ["--allow-file-access-from-files"])
        assert "RESULT:" in dom, dom[-2000:]
        out = json.loads(dom.split("RESULT:", 1)[1].split("</pre>", 1)[0])
        assert "error" not in out, out
        charts = {c["id"]: c for c in out["charts"]}
        for c in out["charts"]:
            assert c["w"] > 100 and c["h"] > 100, c
        with open(html) as fh:
            page = fh.read()
        # a gossip run takes nothing: that measure is a line of text
        assert "takes.won" not in nonzero and "gauges.records" in nonzero
        for key, rate in SAMPLED.items():
            if key not in nonzero:
                assert "samples:" + key not in charts
                assert 'data-chart="samples:%s">' % key in page
                continue
            c = charts["samples:" + key]
            got = {k: v["points"] for k, v in c["series"].items()}
            want = {k: n - 1 if rate else n for k, n in per.items()}
            assert got == want, (key, got, want)
            for s in c["series"].values():
                assert s["points"] == s["n"]
                assert s["w"] > 0, (key, s)
            labels = [w["label"] for w in c["windows"]]
            assert any(l.startswith("kill") and "p2" in l for l in labels), \
                labels
            assert all(w["w"] > 0 for w in c["windows"])
        lat = charts["latency:gossip.write_to_visible"]
        assert lat["series"]["CDF %"]["points"] > 1
        assert lat["series"]["CDF %"]["w"] > 0
        assert "p50 " in page and "p99 " in page
        assert charts["peers:cpu_s"]["series"]["CPU s"]["points"] == \
            len([r for r in rep["peers"] if "cpu_s" in r])
        assert "CPU / wall" in page and "max RSS" in page
        # nothing fetched: neither by report.html nor by the harness
        assert page_requests(os.path.join(tmp, "net.json")) == []
        assert "<script" not in page and "<link" not in page
        # drawn again from the files alone, the same page
        os.unlink(html)
        r = subprocess.run([ORCH, "report", run_dir], timeout=60)
        assert r.returncode == 0
        with open(html) as fh:
            assert fh.read() == page
        # the detection works: a page that fetches is seen
        control = os.path.join(tmp, "control.html")
        with open(control, "w") as fh:
            fh.write('<!doctype html><img src="http://127.0.0.1:9/x.png">')
        render(tmp, "file://" + control, os.path.join(tmp, "net2.json"))
        assert "http://127.0.0.1:9/x.png" in \
            page_requests(os.path.join(tmp, "net2.json"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_csv_exact_json_clean_build_recorded_failed_check_explained():
    tmp = tempfile.mkdtemp(prefix="report-", dir="/tmp")
    try:
        run_dir, err = one_run(tmp)
        # the failed check: its value and bound on stderr
        line = [l for l in err.splitlines() if "impossible" in l][0]
        assert "FAIL" in line and "gossip.write_to_visible p50 =" in line \
            and "bound <= 0 us" in line, line
        with open(os.path.join(run_dir, "report.json")) as fh:
            text = fh.read()
        rep = json.loads(text)
        # no float noise: every number in the file is its shortest form
        for tok in text.replace(",", " ").replace(":", " ").split():
            tok = tok.strip("[]{}")
            try:
                f = float(tok)
            except ValueError:
                continue
            if "." in tok or "e" in tok:
                assert repr(f) == tok or str(f) == tok, tok
        with open(os.path.join(run_dir, "report.csv"), newline="") as fh:
            raw = fh.read()
        assert raw.startswith("run,scenario,seed,status,measure,stat,"
                              "value,unit\r\n")
        rows = list(csv.DictReader(raw.splitlines()))
        base = os.path.basename(run_dir)
        byname = {}
        for r in rows:
            assert r["run"] == base and r["scenario"] == "charts"
            assert r["seed"] == "11" and r["status"] == "fail"
            byname[(r["measure"], r["stat"])] = r["value"]
        for name, m in rep["measures"].items():
            stats = ["count", "p50", "p90", "p99", "p999", "max"] \
                if "p50" in m else ["value"]
            for s in stats:
                v = byname[(name, s)]
                want = m[s]
                if isinstance(want, int):
                    assert v == str(want), (name, s, v, want)
                else:
                    assert float(v) == want and repr(want) in (v, v + ".0") \
                        or v == repr(want), (name, s, v, want)
        with open(os.path.join(run_dir, "run.json")) as fh:
            build = json.load(fh)["build"]
        assert build["version"] and build["git"]
        for lib in ("openssl", "libevent", "jansson", "libcbor", "xxhash"):
            assert build["libraries"][lib], lib
        with open(os.path.join(run_dir, "report.md")) as fh:
            md = fh.read()
        assert "## Steps" in md and "| kill" in md and "docs/report.md" in md
        assert "lower" in md and " ms |" in md
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


FAULTS = {
    "name": "faults", "description": "every kind of window", "sample_ms": 100,
    "fleet": {"peers": 3},
    "steps": [
        {"action": "start"}, {"action": "wait", "until": "connected"},
        {"action": "pause", "peer": 1}, {"action": "sleep", "ms": 300},
        {"action": "resume", "peer": 1},
        {"action": "fault", "partition": [[0], [1, 2]]},
        {"action": "sleep", "ms": 300},
        {"action": "fault", "peer": "all", "clear": True},
        {"action": "fault", "peer": 2, "delay_ms": 20},
        {"action": "sleep", "ms": 200},
        {"action": "stop", "peer": 2}, {"action": "sleep", "ms": 200}]}


def test_every_fault_window_is_shaded_and_labelled():
    tmp = tempfile.mkdtemp(prefix="report-", dir="/tmp")
    try:
        path = os.path.join(tmp, "faults.json")
        with open(path, "w") as fh:
            json.dump(FAULTS, fh)
        p = subprocess.run([ORCH, path, "--out", tmp, "--seed", "1", "-q"],
                           stderr=subprocess.PIPE, timeout=120)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        run_dir = os.path.join(tmp, "latest")
        with open(os.path.join(run_dir, "report.html")) as fh:
            page = fh.read()
        chart = page.split('data-chart="samples:gauges.links"', 1)[1]
        chart = chart.split("</figure>", 1)[0]
        labels = [x.split('"', 1)[0] for x in chart.split('data-label="')[1:]]
        assert sorted(labels) == ["fault p2", "partition p0,p1,p2",
                                  "pause p1", "stop p2"], labels
        # each window spans its steps: pause from the pause to the resume
        with open(os.path.join(run_dir, "timeline.ndjson")) as fh:
            ev = [json.loads(l) for l in fh]
        sig = [e for e in ev if e["event"] == "signal" and e["peer"] == 1]
        assert [e["signal"] for e in sig] == ["STOP", "CONT"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_every_program_has_help_on_stdout_and_version():
    for prog in PROGRAMS:
        path = os.path.join(BUILD, prog)
        h = subprocess.run([path, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=10)
        assert h.returncode == 0 and b"usage" in h.stdout and \
            h.stderr == b"", (prog, h)
        v = subprocess.run([path, "--version"], stdout=subprocess.PIPE,
                           timeout=10)
        words = v.stdout.decode().split()
        assert v.returncode == 0 and words[0] == prog and \
            words[1][0].isdigit() and "git" in v.stdout.decode(), (prog, v)


def test_docs_list_the_one_measure_table():
    """docs/report.md's measure table is orchestrator/measures.h's."""
    import re
    with open("orchestrator/measures.h") as fh:
        src = fh.read()
    rows = re.findall(r'X\(\w+,\s*\\?\s*"([^"]+)", (\d), "([^"]+)", '
                      r'MEASURE_(\w+),'
                      r'\s*\\?\s*"([^"]+)"\)', src)
    assert len(rows) > 20, rows
    with open("docs/report.md") as fh:
        doc = fh.read()
    better = {"LOWER": "lower", "HIGHER": "higher", "NONE": "—"}
    for name, lat, unit, b, meaning in rows:
        line = "| `%s` | %s%s | %s | %s |" % (
            name, unit, " (latency)" if lat == "1" else "", better[b],
            meaning)
        assert line in doc, line


if __name__ == "__main__":
    run([test_docs_list_the_one_measure_table,
         test_report_html_draws_every_chart_and_fetches_nothing,
         test_csv_exact_json_clean_build_recorded_failed_check_explained,
         test_every_fault_window_is_shaded_and_labelled,
         test_every_program_has_help_on_stdout_and_version])

#!/usr/bin/env python3
"""build/pdt, the content layer's debugging tool (docs/pdt.md): every
subcommand on real files in a private temp dir, `pdt b3sum` diffed against
the b3sum package, chunk lists against the fixture's known cuts and
hashlib, outboards, slices and verify-slice (good, corrupted, truncated,
wrong root), and bad usage (exit 2, one line on stderr)."""
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import BUILD, run  # noqa: E402

PDT = os.path.join(BUILD, "pdt")
FIXTURE = "../shared/data/fastcdc/SekienAkashita.jpg"


class Tmp:
    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="pdt-", dir="/tmp")
        return self.dir

    def __exit__(self, *exc):
        if exc[0] is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def pdt(*args, stdin=None, rc=0):
    p = subprocess.run([PDT] + [str(a) for a in args], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    assert p.returncode == rc, (args, p.returncode, p.stderr.decode())
    return p


def write(path, data):
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def b3(data):
    """The BLAKE3 root by the b3sum package."""
    p = subprocess.run(["b3sum", "--no-names"], input=data,
                       stdout=subprocess.PIPE, check=True, timeout=60)
    return p.stdout.decode().strip()


def test_help_and_version():
    out = pdt("--help").stdout.decode()
    for cmd in ("b3sum", "chunks", "outboard", "slice", "verify-slice"):
        assert "pdt %s " % cmd in out, (cmd, out)
        sub = pdt(cmd, "--help").stdout.decode()
        assert sub.startswith("usage: pdt %s" % cmd), sub
    assert pdt("--version").stdout.decode().startswith("pdt 0.")
    p = pdt(rc=2)
    assert b"usage: pdt" in p.stderr


def test_b3sum_matches_the_b3sum_package():
    if shutil.which("b3sum") is None:
        print("no b3sum command (Debian package b3sum): skipped")
        return
    rng = random.Random(27)
    lengths = [0, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 4097, 16384,
               65535, 65536, 65537, (1 << 20) + 7]
    lengths += [rng.randrange(1, 3 << 20) for _ in range(6)]
    with Tmp() as d:
        names = []
        for i, n in enumerate(lengths):
            names.append(write(os.path.join(d, "f%d" % i), rng.randbytes(n)))
        # Names b3sum escapes (backslash, newline) and one with a space.
        for odd in ("back\\slash", "new\nline", "sp ace"):
            names.append(write(os.path.join(d, odd), rng.randbytes(100)))
        mine = pdt("b3sum", *names).stdout
        theirs = subprocess.run(["b3sum"] + names, stdout=subprocess.PIPE,
                                check=True, timeout=120).stdout
        assert mine == theirs, (mine, theirs)
        data = rng.randbytes(300000)
        want = ("%s  -\n" % b3(data)).encode()
        assert pdt("b3sum", stdin=data).stdout == want
        assert pdt("b3sum", "-", stdin=data).stdout == want
        # A missing file: a line on stderr, the others still summed, exit 2.
        p = pdt("b3sum", os.path.join(d, "nope"), names[0], rc=2)
        assert p.stdout == subprocess.run(
            ["b3sum", names[0]], stdout=subprocess.PIPE, check=True).stdout
        assert p.stderr.decode().count("\n") == 1, p.stderr


def chunk_lines(out):
    rows = []
    for line in out.decode().splitlines():
        off, length, hexd = line.split(" ")
        rows.append((int(off), int(length), hexd))
    return rows


def check_chunks(rows, data):
    off = 0
    for o, n, h in rows:
        assert o == off, (o, off)
        assert h == hashlib.sha256(data[o:o + n]).hexdigest()
        off += n
    assert off == len(data)


def test_chunks():
    rng = random.Random(28)
    with Tmp() as d:
        data = rng.randbytes(3 << 20)
        f = write(os.path.join(d, "r"), data)
        rows = chunk_lines(pdt("chunks", f).stdout)
        check_chunks(rows, data)
        assert all(16384 <= n <= 262144 for _, n, _ in rows[:-1]), rows
        # Standard input gives the same chunks as the file.
        assert chunk_lines(pdt("chunks", "-", stdin=data).stdout) == rows
        small = chunk_lines(pdt("chunks", "--min", "256", "--avg=1024",
                                "--max", "4096", "--level", "3", f).stdout)
        check_chunks(small, data)
        assert len(small) > 1000 and max(n for _, n, _ in small) <= 4096
        # All zero: chunks of exactly max.
        z = write(os.path.join(d, "z"), bytes(3 * 262144 + 5))
        assert [n for _, n, _ in chunk_lines(pdt("chunks", z).stdout)] == \
            [262144, 262144, 262144, 5]
        assert pdt("chunks", write(os.path.join(d, "e"), b"")).stdout == b""
    if not os.path.exists(FIXTURE):
        print("%s not found: fixture cuts skipped" % FIXTURE)
        return
    with open(FIXTURE, "rb") as fh:
        jpg = fh.read()
    for args, want in (
            ((), [66549, 42917]),
            (("--min", 4096, "--avg", 16384, "--max", 65535, "--level", 1),
             [21325, 17140, 28084, 18217, 24700]),
            (("--min", 4096, "--avg", 16384, "--max", 65535, "--level", 0),
             [6634, 59915, 25597, 5237, 12083]),
            (("--min", 8192, "--avg", 16384, "--max", 32768, "--level", 3),
             [17350, 19911, 17426, 17519, 19940, 17320])):
        rows = chunk_lines(pdt("chunks", *args, FIXTURE).stdout)
        assert [n for _, n, _ in rows] == want, (args, rows)
        check_chunks(rows, jpg)


def test_outboard_slice_verify():
    rng = random.Random(29)
    with Tmp() as d:
        data = rng.randbytes(1234567)
        f = write(os.path.join(d, "blob"), data)
        root = b3(data)
        for kib, groups in ((16, 76), (1, 1206), (1024, 2)):
            ob = os.path.join(d, "blob.%d.obao" % kib)
            out = pdt("outboard", "--group-kib", kib, f, ob).stdout.decode()
            assert out == "%s  %s\n" % (root, f), out
            assert os.path.getsize(ob) == 8 + 64 * (groups - 1)
            with open(ob, "rb") as fh:
                assert int.from_bytes(fh.read(8), "little") == len(data)
            for off, n in ((0, 1), (500000, 70000), (1234000, 10000),
                           (0, len(data))):
                sl = os.path.join(d, "s")
                got = os.path.join(d, "got")
                pdt("slice", f, ob, off, n, sl)
                # The group size is inferred from the slice, or given.
                pdt("verify-slice", root, off, n, sl, got)
                with open(got, "rb") as fh:
                    assert fh.read() == data[off:off + n], (kib, off, n)
                assert pdt("verify-slice", "--group-kib", kib, root, off, n,
                           sl, "-").stdout == data[off:off + n]
        ob = os.path.join(d, "blob.16.obao")
        sl = os.path.join(d, "s")
        pdt("slice", f, ob, 600000, 40000, sl)
        with open(sl, "rb") as fh:
            good = fh.read()
        bad_out = os.path.join(d, "bad")
        # A flipped content byte: exit 1, the bad range named, no OUT.
        flipped = bytearray(good)
        flipped[len(good) - 100] ^= 1
        p = pdt("verify-slice", root, 600000, 40000,
                write(os.path.join(d, "s1"), bytes(flipped)), bad_out, rc=1)
        err = p.stderr.decode()
        assert err.count("\n") == 1 and "first bad bytes [" in err, err
        assert not os.path.exists(bad_out)
        # Cut short, or against another root: refused the same way.
        pdt("verify-slice", root, 600000, 40000,
            write(os.path.join(d, "s2"), good[:-1]), bad_out, rc=1)
        pdt("verify-slice", "0" * 64, 600000, 40000, sl, bad_out, rc=1)
        assert not os.path.exists(bad_out)
        # An outboard of other content.
        other = write(os.path.join(d, "other"), data[:-1])
        p = pdt("slice", other, ob, 0, 10, sl, rc=2)
        assert b"not the outboard" in p.stderr, p.stderr
        # The empty file.
        e = write(os.path.join(d, "empty"), b"")
        out = pdt("outboard", e, os.path.join(d, "e.obao")).stdout.decode()
        assert out.startswith(b3(b"") + "  ")
        pdt("slice", e, os.path.join(d, "e.obao"), 0, 0, sl)
        assert pdt("verify-slice", b3(b""), 0, 0, sl, "-").stdout == b""


def test_bad_usage():
    with Tmp() as d:
        f = write(os.path.join(d, "f"), b"x" * 100000)
        sl = os.path.join(d, "s")
        ob = os.path.join(d, "o")
        pdt("outboard", f, ob)
        pdt("slice", f, ob, 0, 10, sl)
        root = b3(b"x" * 100000) if shutil.which("b3sum") else "0" * 64
        for args in (
                ("nosuch",),
                ("chunks",),
                ("chunks", f, f),
                ("chunks", "--min", "12x", f),
                ("chunks", "--min", "-1", f),
                ("chunks", "--min", " 1", f),
                ("chunks", "--min", f),
                ("chunks", "--min", "4096", "--min", "4096", f),
                ("chunks", "--avg", "65535", f),
                ("chunks", "--min", "99999999999999999999999", f),
                ("chunks", "--level", "4", f),
                ("chunks", "--bogus", "1", f),
                ("chunks", os.path.join(d, "missing")),
                ("outboard", "--group-kib", "3", f, ob),
                ("outboard", "--group-kib", "0", f, ob),
                ("outboard", f),
                ("slice", f, ob, "1e3", "10", sl),
                ("slice", f, ob, "0", "0x10", sl),
                ("slice", f, f, "0", "10", sl),
                ("verify-slice", "xyz", "0", "10", sl, "-"),
                ("verify-slice", "g" * 64, "0", "10", sl, "-"),
                ("verify-slice", root, "0", "+10", sl, "-"),
                ("verify-slice", root, "0", "10", sl),
                ("b3sum", "--no-names", f)):
            p = pdt(*args, rc=2)
            err = p.stderr.decode()
            assert err.startswith("pdt: ") and err.count("\n") == 1, \
                (args, err)
            assert p.stdout == b"", (args, p.stdout)


if __name__ == "__main__":
    run([test_help_and_version, test_b3sum_matches_the_b3sum_package,
         test_chunks, test_outboard_slice_verify, test_bad_usage])

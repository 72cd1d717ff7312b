"""robust_manifest.py — hostile OUTDIR/.imgpu-batch files (issue 25; src/batch/batch_manifest.h):
  1. a manifest grown by 200 MB of empty lines, a 40 MB line and 40 MB of binary garbage
     (it was read whole: 1 GiB of empty lines took 1.05 GB and ended the batch with "out of
     memory"): the batch completes, skips what the intact records describe, says once how
     many lines it ignored ("imgpu: OUTDIR/.imgpu-batch: ..."), and peaks under 100 MB of RSS;
     the manifest still works after it (an --overwrite appends, the next run skips);
  2. a hard link planted as the manifest (it was written through: a file elsewhere gained a
     record): the batch refuses it, says why, writes no output, and the linked file is
     unchanged; the same for a symbolic link, and for a link planted in an OUTDIR that already
     has outputs;
  3. a torn last line (a kill or a full disk mid-write) followed by a later run's appends: the
     new records are read (the torn line used to swallow the first of them, and the re-run
     called that output stale).

Usage: robust_manifest.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

MANIFEST = cc.BATCH_MANIFEST
NAMES = ["camera.png", "coffee.png", "chelsea.png"]
RSS_LIMIT_KB = 100 * 1024


def run(binary, args, timeout=120):
    """(exit status, stdout, stderr, seconds, peak RSS in KiB)."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary] + args, stdout=fo, stderr=fe)
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                p.kill()
            time.sleep(0.005)
        el = time.monotonic() - t0
        fo.seek(0)
        fe.seek(0)
        return (os.waitstatus_to_exitcode(status), fo.read().decode(errors="replace"),
                fe.read().decode(errors="replace"), el, ru.ru_maxrss)


def outputs(d):
    return sorted(n for n in os.listdir(d) if n != MANIFEST) if os.path.isdir(d) else []


def main():
    binary, tmp, assets = cc.setup("robust_manifest")
    C = cc.Checker("robust_manifest")
    src = os.path.join(tmp, "in")
    os.makedirs(src)
    for n in NAMES:
        shutil.copy(os.path.join(assets, n), os.path.join(src, n))
    eq = ["batch", "--equalize", "--device", "cpu", "--jobs", "2"]

    # ---- 1. a manifest of 280 MB, nearly all of it not records -------------------------------
    out = os.path.join(tmp, "out")
    rc, o, e, el, kb = run(binary, eq + ["-o", out, src])
    C.check(rc == 0 and outputs(out) == sorted(NAMES), "first run: every output", e)
    path = os.path.join(out, MANIFEST)
    with open(path, "ab") as f:
        block = b"\n" * (1 << 20)
        for _ in range(200):
            f.write(block)
        f.write(b"R ")                                        # one line of 40 MB
        for _ in range(40):
            f.write(b"x" * (1 << 20))
        f.write(b"\n")
        rnd = random.Random(25)
        garbage = bytes(rnd.getrandbits(8) for _ in range(1 << 16))
        for _ in range(640):                                  # 40 MB of binary garbage
            f.write(garbage)
        f.write(b"\n")
    size_mb = os.path.getsize(path) / 1e6
    # (not cc.snapshot: reading the manifest here would swell this process, and a child's
    # peak RSS counts its parent's size at the fork)
    snap = {n: cc.read(os.path.join(out, n)) for n in outputs(out)}
    mst = os.stat(path)
    own_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rc, o, e, el, kb = run(binary, eq + ["-o", out, src])
    print(f"{size_mb:.0f} MB manifest: exit {rc}, {el:.2f} s, peak RSS {kb / 1024:.1f} MiB")
    C.check(rc == 0 and re.search(rf"0 done, {len(NAMES)} skipped, 0 failed in", e) is not None,
            "damaged manifest: the batch completes and skips the recorded outputs", e)
    notice = re.search(rf"imgpu: {re.escape(path)}: (\d+) lines ignored \(1 longer than 65536 "
                       r"bytes\): not records that imgpu wrote", e)
    C.check(notice is not None and int(notice.group(1)) > 200 * (1 << 20),
            "damaged manifest: one notice naming the file and counting the ignored lines", e)
    C.check(len(re.findall("lines ignored", e)) == 1, "damaged manifest: the notice once", e)
    C.check(kb < RSS_LIMIT_KB, f"damaged manifest: peak RSS {kb} KiB under {RSS_LIMIT_KB} KiB "
            f"(the file is {size_mb:.0f} MB; this script's own peak: {own_kb} KiB)")
    m2 = os.stat(path)
    C.check({n: cc.read(os.path.join(out, n)) for n in outputs(out)} == snap and
            (m2.st_size, m2.st_mtime_ns) == (mst.st_size, mst.st_mtime_ns),
            "damaged manifest: outputs and manifest untouched")
    # still a working journal: --overwrite appends records, the next run skips by them
    rc, o, e, el, kb = run(binary, eq + ["-o", out, src, "--overwrite"])
    C.check(rc == 0 and f"{len(NAMES)} done" in e, "damaged manifest: --overwrite remakes", e)
    rc, o, e, el, kb = run(binary, eq + ["-o", out, src])
    C.check(rc == 0 and f"0 done, {len(NAMES)} skipped" in e,
            "damaged manifest: the records appended after it are read", e)
    # --quiet silences the notice, not the run
    rc, o, e, el, kb = run(binary, eq + ["-o", out, src, "--quiet"])
    C.check(rc == 0 and "lines ignored" not in e, "--quiet: no notice", e)
    shutil.rmtree(out)

    # ---- 2. links planted as the manifest ------------------------------------------------------
    keep = b"a file outside OUTDIR: not imgpu's to write\n"
    for kind in ("hard", "symbolic"):
        for existing in (False, True):
            o2 = os.path.join(tmp, f"out_{kind}_{int(existing)}")
            outside = os.path.join(tmp, f"outside_{kind}_{int(existing)}.txt")
            cc.write(outside, keep)
            if existing:   # an OUTDIR with outputs and a manifest, which the link replaces
                run(binary, eq + ["-o", o2, src])
                os.unlink(os.path.join(o2, MANIFEST))
            else:
                os.makedirs(o2)
            before = outputs(o2)
            mpath = os.path.join(o2, MANIFEST)
            (os.link if kind == "hard" else os.symlink)(outside, mpath)
            what = f"{kind} link as the manifest{' of a used OUTDIR' if existing else ''}"
            for extra in ([], ["--overwrite"]):
                rc, o, e, el, kb = run(binary, eq + ["-o", o2, src] + extra)
                C.check(rc == 1, f"{what} {' '.join(extra)}: refused, exit 1", e)
                C.check(cc.read(outside) == keep, f"{what} {' '.join(extra)}: the linked file unchanged",
                        cc.read(outside))
                C.check(outputs(o2) == before, f"{what} {' '.join(extra)}: no output written",
                        str(outputs(o2)))
                if kind == "hard":
                    C.check(f"imgpu: '{mpath}' has 2 hard links: refusing to use it" in e,
                            f"{what}: the message says why", e)
                else:
                    C.check(f"imgpu: '{mpath}' is a symbolic link: refusing to use it" in e,
                            f"{what}: the message says why", e)
            # the way out the message gives: remove it; the batch then starts a new manifest
            os.unlink(mpath)
            rc, o, e, el, kb = run(binary, eq + ["-o", o2, src])
            C.check(rc == 0 and outputs(o2) == sorted(NAMES) and os.path.isfile(mpath)
                    and os.stat(mpath).st_nlink == 1 and cc.read(outside) == keep,
                    f"{what}: removed, the batch runs and starts its own manifest", e)

    # ---- 3. a torn last line, then appends -----------------------------------------------------
    o3 = os.path.join(tmp, "out_torn")
    run(binary, eq + ["-o", o3, src])
    with open(os.path.join(o3, MANIFEST), "ab") as f:
        f.write(b"R 0123456789abcdef\tcamera.png\t1")   # no '\n': a write cut short
    rc, o, e, el, kb = run(binary, eq + ["-o", o3, src, "--overwrite"])
    C.check(rc == 0, "torn line: --overwrite remakes", e)
    rc, o, e, el, kb = run(binary, eq + ["-o", o3, src])
    C.check(rc == 0 and f"0 done, {len(NAMES)} skipped, 0 failed" in e,
            "torn line: every output appended after it is recorded (none stale)", e)
    C.check("1 line ignored" in e, "torn line: counted once as an ignored line", e)

    cc.cleanup(tmp, C.failures > 0)
    return C.end()


if __name__ == "__main__":
    sys.exit(main())

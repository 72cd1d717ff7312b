"""batch_manifest.py — `imgpu batch` resume knows its settings (issue 15): OUTDIR/.imgpu-batch
records what made each output (the op chain with every parameter, the save options, the
input's size and mtime), so a re-run skips only outputs made with its own settings from the
same input. An output made otherwise (other ops, a changed input, a file the manifest does not
describe) is reported as stale, kept unchanged, and the batch exits 1; --overwrite replaces it
and records the new settings; --dry-run lists it. Outputs of a folder that has no manifest
(written before the feature) are skipped as before, with one notice. A batch killed with
SIGKILL leaves a readable manifest that describes every output in OUTDIR; the re-run
finishes the rest. The manifest (a hidden file) is never taken as an input.

Usage: batch_manifest.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

MANIFEST = ".imgpu-batch"
NAMES = ["camera.png", "coffee.png", "chelsea.png"]   # + sub/brick.png


def outputs(d):
    """Non-hidden files under d, relative (what batch wrote)."""
    res = set()
    for root, dirs, files in os.walk(d):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for f in files:
            if not f.startswith("."):
                res.add(os.path.relpath(os.path.join(root, f), d))
    return res


def manifest_lines(out):
    """(header, records, bad): records as dicts; bad = lines that are neither."""
    path = os.path.join(out, MANIFEST)
    if not os.path.isfile(path):
        return None, [], ["(no manifest)"]
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8")
    lines = text.split("\n")
    tail = lines.pop()   # "" when the file ends with a newline
    header, recs, bad = None, [], []
    if tail:
        bad.append(tail)
    for ln in lines:
        if ln.startswith("#"):
            header = ln
            continue
        f = ln.split("\t")
        if len(f) == 7 and re.fullmatch(r"R [0-9a-f]{16}", f[0]):
            recs.append({"out": f[1], "out_size": int(f[2]), "out_mtime": int(f[3]),
                         "in_size": int(f[4]), "in_mtime": int(f[5]), "settings": f[6]})
        else:
            bad.append(ln)
    return header, recs, bad


def described(out, rel, recs):
    """The latest record describing the file OUTDIR/rel as it is now (size and mtime)."""
    st = os.stat(os.path.join(out, rel))
    hit = None
    for r in recs:
        if r["out"] == rel and r["out_size"] == st.st_size and r["out_mtime"] == st.st_mtime_ns:
            hit = r
    return hit


def main():
    binary, tmp, assets = cc.setup("batch_manifest")
    C = cc.Checker("batch_manifest")

    def imgpu(*args, timeout=60):
        return cc.run(binary, args, timeout=timeout)

    src = os.path.join(tmp, "in")
    os.makedirs(os.path.join(src, "sub"))
    for n in NAMES:
        shutil.copy(os.path.join(assets, n), os.path.join(src, n))
    shutil.copy(os.path.join(assets, "brick.png"), os.path.join(src, "sub", "brick.png"))
    rels = set(NAMES) | {os.path.join("sub", "brick.png")}
    nfiles = len(rels)
    # OUTDIR inside the input folder: the walk skips it, and its manifest, on every run
    out = os.path.join(src, "out")
    base = ["batch", "--device", "cpu", "--jobs", "2", "-o", out, src]
    eq = ["--equalize", "--mode", "per-channel"]
    cl = ["--clahe", "--clip", "3", "--tiles", "4x4"]

    # 1. equalize: every output written and recorded
    r = imgpu(*(base[:1] + eq + base[1:]))
    C.check(r.rc == 0, "equalize run: exit 0", str(r))
    C.check(outputs(out) == rels, "equalize run: every output", str(outputs(out)))
    C.check(os.path.isfile(os.path.join(out, MANIFEST)), "a manifest in OUTDIR")
    header, recs, bad = manifest_lines(out)
    C.check(header is not None and not bad, "manifest: a header and intact lines", str(bad))
    for rel in sorted(rels):
        d = described(out, rel, recs)
        C.check(d is not None and d["settings"].startswith("equalize mode=per-channel formula=opencv")
                and "format=png" in d["settings"],
                f"manifest describes {rel} with its settings", str(d))
        st = os.stat(os.path.join(src, rel))
        C.check(d is not None and d["in_size"] == st.st_size and d["in_mtime"] == st.st_mtime_ns,
                f"manifest records the input of {rel} (size, mtime)", str(d))
    eq_snap = cc.snapshot(out)

    # 2. clahe into the same OUTDIR: every output reported as made otherwise (each named with
    # --verbose; without it one line sums them up: batch_ux.py), kept, exit 1
    r = imgpu(*(base[:1] + cl + base[1:] + ["--verbose"]))
    C.check(r.rc == 1, "clahe over equalize outputs: exit 1", str(r))
    for rel in sorted(rels):
        shown = os.path.join(out, rel)
        C.check(re.search(re.escape(f"imgpu: '{shown}' was made with other settings (equalize mode=per-channel")
                          + r".*\); use --overwrite to replace it", r.err) is not None,
                f"clahe run: {rel} reported as made with other settings", r.err)
    C.check(re.search(rf"0 done, 0 skipped, 0 failed, {nfiles} stale", r.err) is not None,
            "clahe run: summary counts them as stale", r.err)
    C.check("failed '" not in r.err, "clahe run: no input reported as failed (the manifest is "
            "not an input)", r.err)
    C.check(cc.snapshot(out) == eq_snap, "clahe run: outputs and manifest unchanged")

    # 3. --dry-run shows which would be stale
    r = imgpu(*(base[:1] + cl + base[1:] + ["--dry-run"]))
    C.check(r.rc == 1, "dry run: exit 1 with stale outputs", str(r))
    stale_lines = [ln for ln in r.out.splitlines() if ln.startswith("stale ")]
    C.check(len(stale_lines) == nfiles and all(ln.endswith("(other settings)") for ln in stale_lines),
            "dry run: a 'stale IN -> OUT (other settings)' line per output", r.out)
    C.check(f"{nfiles} stale" in r.err, "dry run: summary counts the stale outputs", r.err)
    C.check(cc.snapshot(out) == eq_snap, "dry run: nothing written")

    # 4. the same settings again: skipped, as before
    r = imgpu(*(base[:1] + eq + base[1:]))
    C.check(r.rc == 0 and re.search(rf"0 done, {nfiles} skipped, 0 failed in", r.err) is not None,
            "same settings: every output skipped, exit 0", str(r))
    C.check(cc.snapshot(out) == eq_snap, "same settings: nothing rewritten")
    # ... and other save options that do not touch PNG bytes (JPEG quality) still match
    r = imgpu(*(base[:1] + eq + base[1:] + ["--quality", "80"]))
    C.check(r.rc == 0 and f"{nfiles} skipped" in r.err, "--quality does not make PNG outputs stale",
            str(r))
    r = imgpu(*(base[:1] + eq + base[1:] + ["--png-level", "6"]))
    C.check(r.rc == 1 and f"{nfiles} stale" in r.err, "--png-level makes PNG outputs stale", str(r))

    # 5. --overwrite: replaced by the CLAHE result, the manifest updated, a third run skips
    r = imgpu(*(base[:1] + cl + base[1:] + ["--overwrite"]))
    C.check(r.rc == 0 and re.search(rf"{nfiles} done, 0 skipped, 0 failed in", r.err) is not None,
            "clahe --overwrite: every output replaced, exit 0", str(r))
    single = os.path.join(tmp, "single")
    os.makedirs(single)
    for rel in sorted(rels):
        ref = os.path.join(single, rel.replace("/", "_"))
        r1 = imgpu("clahe", os.path.join(src, rel), ref, "--clip", "3", "--tiles", "4x4")
        r2 = imgpu("compare", ref, os.path.join(out, rel), "--max-abs", "0")
        C.check(r1.rc == 0 and r2.rc == 0, f"clahe --overwrite: {rel} equals `imgpu clahe`",
                f"{r1}\n{r2}")
    header, recs, bad = manifest_lines(out)
    C.check(not bad, "manifest still intact after --overwrite", str(bad))
    for rel in sorted(rels):
        d = described(out, rel, recs)
        C.check(d is not None and d["settings"].startswith("clahe clip=3 tiles=4x4 mode=luminance"),
                f"manifest now records {rel} as clahe", str(d))
    r = imgpu(*(base[:1] + cl + base[1:]))
    C.check(r.rc == 0 and re.search(rf"0 done, {nfiles} skipped, 0 failed in", r.err) is not None,
            "third clahe run: every output skipped", str(r))
    r = imgpu(*(base[:1] + eq + base[1:]))
    C.check(r.rc == 1 and f"{nfiles} stale" in r.err and "(clahe clip=3 tiles=4x4" in r.err,
            "equalize after clahe: stale, and the message names the recorded clahe", str(r))
    cl_snap = cc.snapshot(out)

    # 6. a changed input (new content, new mtime): its output is stale, the others skipped
    changed = os.path.join(src, "coffee.png")
    shutil.copy(os.path.join(assets, "horse.png"), changed)
    later = time.time() + 5
    os.utime(changed, (later, later))
    r = imgpu(*(base[:1] + cl + base[1:]))
    C.check(r.rc == 1, "changed input: exit 1", str(r))
    C.check(f"imgpu: '{os.path.join(out, 'coffee.png')}' was made from an earlier version of "
            f"'{changed}'" in r.err, "changed input: reported with both names", r.err)
    C.check(re.search(rf"0 done, {nfiles - 1} skipped, 0 failed, 1 stale", r.err) is not None,
            "changed input: 1 stale, the others skipped", r.err)
    C.check(cc.snapshot(out) == cl_snap, "changed input: the old output kept")
    # only the mtime changed (touch): stale too
    os.utime(os.path.join(src, "camera.png"), (later, later))
    r = imgpu(*(base[:1] + cl + base[1:] + ["--dry-run"]))
    C.check(r.rc == 1 and len([ln for ln in r.out.splitlines()
                               if ln.startswith("stale ") and ln.endswith("(input changed)")]) == 2,
            "touched input: stale as well (dry run lists both)", str(r))
    r = imgpu(*(base[:1] + cl + base[1:] + ["--overwrite"]))
    C.check(r.rc == 0, "changed inputs: --overwrite remakes", str(r))
    r = imgpu(*(base[:1] + cl + base[1:]))
    C.check(r.rc == 0 and f"{nfiles} skipped" in r.err, "changed inputs: then skipped", str(r))

    # 7. an output the manifest does not describe (replaced by another program): unknown origin
    foreign = os.path.join(out, "chelsea.png")
    shutil.copy(os.path.join(assets, "camera.png"), foreign)
    snap = cc.snapshot(out)
    r = imgpu(*(base[:1] + cl + base[1:]))
    C.check(r.rc == 1 and f"imgpu: '{foreign}' has no record of what made it" in r.err
            and "use --overwrite to replace it" in r.err and "1 stale" in r.err,
            "a replaced output: reported as of unknown origin, exit 1", str(r))
    C.check(cc.snapshot(out) == snap, "a replaced output: kept")

    # 8. an OUTDIR from before the manifest: skipped as before, with one notice
    old = os.path.join(tmp, "old")
    n_old = len(outputs(src))   # here OUTDIR is elsewhere: src/out/ is walked as inputs too
    r = imgpu("batch", "--device", "cpu", "--equalize", "-o", old, src)
    if os.path.exists(os.path.join(old, MANIFEST)):
        os.unlink(os.path.join(old, MANIFEST))
    old_snap = cc.snapshot(old)
    r = imgpu("batch", "--device", "cpu", *cl, "-o", old, src)
    C.check(r.rc == 0 and f"0 done, {n_old} skipped, 0 failed in" in r.err,
            "no manifest: existing outputs skipped as before, exit 0", str(r))
    C.check(len(re.findall(r"made before imgpu recorded", r.err)) == 1,
            "no manifest: one notice that their settings are unknown", r.err)
    r = imgpu("batch", "--device", "cpu", *eq, "-o", old, src)
    C.check(r.rc == 0 and f"{n_old} skipped" in r.err and "made before imgpu recorded" in r.err,
            "no manifest: a later run still treats them so (not as unknown origin)", str(r))
    C.check({k: v for k, v in cc.snapshot(old).items() if k != MANIFEST} == old_snap,
            "no manifest: outputs untouched")
    r = imgpu("batch", "--device", "cpu", *cl, "-o", old, src, "--overwrite")
    r = imgpu("batch", "--device", "cpu", *cl, "-o", old, src)
    C.check(r.rc == 0 and f"{n_old} skipped" in r.err and "made before" not in r.err,
            "no manifest: --overwrite remakes and records them", str(r))

    # 9. the manifest is never an input: OUTDIR given as the input folder
    r = imgpu("batch", "--device", "cpu", "--equalize", "-o", os.path.join(tmp, "again"), out)
    C.check(r.rc == 0 and f"{nfiles} done, 0 skipped, 0 failed" in r.err and MANIFEST not in r.err,
            "an OUTDIR as input: its outputs taken, its manifest not", str(r))

    # 10. two shards at once into one OUTDIR: every output recorded (appends do not collide)
    many = os.path.join(tmp, "many")
    os.makedirs(many)
    for i in range(24):
        shutil.copy(os.path.join(assets, "camera.png"), os.path.join(many, f"m{i:02d}.png"))
    sh = os.path.join(tmp, "sharded")
    procs = [subprocess.Popen([binary, "batch", "--equalize", "--device", "cpu", "--jobs", "2",
                               "-o", sh, many, "--shard", f"{k}/2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for k in (1, 2)]
    rcs = [p.wait(timeout=60) for p in procs]
    for p in procs:
        p.stderr.close()
    C.check(rcs == [0, 0], "shards: both exit 0", str(rcs))
    r = imgpu("batch", "--equalize", "--device", "cpu", "-o", sh, many)
    C.check(r.rc == 0 and "0 done, 24 skipped, 0 failed in" in r.err,
            "shards: a full re-run skips all 24", str(r))

    # 11. SIGKILL mid-run: no corrupt manifest, every output in OUTDIR described by it; the
    #     re-run finishes the rest, skips what was done, and every output decodes
    n_kill = 40
    kin = os.path.join(tmp, "kin")
    os.makedirs(kin)
    for i in range(n_kill):
        shutil.copy(os.path.join(assets, "coffee.png"), os.path.join(kin, f"k{i:03d}.png"))
    for attempt, wait_for in enumerate((1, 5, 12)):
        kout = os.path.join(tmp, f"kout{attempt}")
        cmd = [binary, "batch", "--equalize", "--device", "cpu", "--jobs", "3", "-o", kout, kin]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30 and p.poll() is None and not (
                os.path.isdir(kout) and len(outputs(kout)) >= wait_for):
            time.sleep(0.002)
        p.send_signal(signal.SIGKILL)
        p.wait()
        made = outputs(kout) if os.path.isdir(kout) else set()
        print(f"SIGKILL {attempt}: killed with {len(made)} of {n_kill} outputs written")
        if made:
            _, recs, bad = manifest_lines(kout)
            C.check(not bad, f"SIGKILL {attempt}: manifest intact", str(bad))
            undescribed = [m for m in made if described(kout, m, recs) is None]
            C.check(not undescribed, f"SIGKILL {attempt}: every output in OUTDIR has its line "
                    f"({len(made)} written)", str(undescribed))
        r = imgpu(*cmd[1:], timeout=120)
        C.check(r.rc == 0, f"SIGKILL {attempt}: the re-run exits 0", str(r))
        m = re.search(r"(\d+) done, (\d+) skipped, 0 failed in", r.err)
        C.check(m is not None and int(m.group(2)) == len(made) and
                int(m.group(1)) + int(m.group(2)) == n_kill,
                f"SIGKILL {attempt}: the re-run skips the {len(made)} written and does the rest",
                r.err)
        C.check(outputs(kout) == {f"k{i:03d}.png" for i in range(n_kill)},
                f"SIGKILL {attempt}: every output there after the re-run")
        ref = os.path.join(single, "coffee_eq.png")
        if attempt == 0:
            imgpu("equalize", os.path.join(kin, "k000.png"), ref)
        bad_out = [f for f in sorted(outputs(kout))
                   if imgpu("compare", ref, os.path.join(kout, f), "--max-abs", "0").rc != 0]
        C.check(not bad_out, f"SIGKILL {attempt}: every output whole and right", str(bad_out))

    # issue 30: the manifest records the quality a WebP output was encoded at (75 by default,
    # not JPEG's 92), so a re-run at 75 skips it and one at 92 calls it stale
    wsrc = os.path.join(tmp, "win")
    wout = os.path.join(tmp, "wout")
    os.makedirs(wsrc)
    r = imgpu("equalize", os.path.join(assets, "coffee.png"), os.path.join(wsrc, "c.webp"))
    C.check(r.rc == 0, "a WebP input made", str(r))
    r = imgpu("batch", "--equalize", "--device", "cpu", "-o", wout, wsrc)
    C.check(r.rc == 0, "WebP batch: exit 0", str(r))
    with open(os.path.join(wout, MANIFEST), encoding="utf-8", errors="replace") as f:
        text = f.read()
    C.check(" quality=75" in text and " quality=92" not in text,
            "WebP batch: the manifest records quality=75, the quality used", text[-300:])
    single = os.path.join(tmp, "c75.webp")
    imgpu("equalize", os.path.join(wsrc, "c.webp"), single)
    with open(single, "rb") as a, open(os.path.join(wout, "c.webp"), "rb") as b:
        C.check(a.read() == b.read(), "WebP batch: the output is the single command's (quality 75)")
    r = imgpu("batch", "--equalize", "--device", "cpu", "--quality", "75", "-o", wout, wsrc)
    C.check(r.rc == 0 and "1 skipped" in r.err, "WebP re-run at --quality 75: skipped as done", str(r))
    r = imgpu("batch", "--equalize", "--device", "cpu", "--quality", "92", "-o", wout, wsrc)
    C.check("0 skipped" in r.err and "1 stale" in r.err,
            "WebP re-run at --quality 92: not skipped, called stale (it was made at 75)", str(r))

    failed = C.failures > 0
    cc.cleanup(tmp, failed)
    return C.end()


if __name__ == "__main__":
    sys.exit(main())

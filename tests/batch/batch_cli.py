"""batch_cli.py — `imgpu batch` end to end on the CPU backend (label cli):
outputs equal the single-image commands' pixel for pixel (ops alone and chained), a corrupt
file in the middle fails alone, resume / --overwrite, the path rules (no way out of OUTDIR,
inputs never overwritten, duplicate outputs), folders recursed with their subfolders kept,
globs, shards that cover every input exactly once, --dry-run, --format/--name, progress lines
and --quiet, and PNGs from the parallel strip encoder decoded by OpenCV.

usage: batch_cli.py IMGPU_BINARY TMP_ROOT ASSETS_DIR   (Debian's /usr/bin/python3)
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:  # pixel checks need them
    print("skip: batch_cli needs cv2 and numpy (/usr/bin/python3 with python3-opencv)")
    sys.exit(77)

binary, tmp, assets = cc.setup("batch_cli")
C = cc.Checker("batch_cli")
ASSETS = ["astronaut.png", "brick.png", "camera.png", "chelsea.png", "clock_motion.png",
          "coffee.png", "horse.png"]


def imgpu(*args, **kw):
    return cc.run(binary, [str(a) for a in args], **kw)


def pixels(path):
    """Decoded by OpenCV, unchanged channels (alpha kept), BGR order as stored."""
    return cv2.imread(path, cv2.IMREAD_UNCHANGED)


def same_pixels(a, b):
    pa, pb = pixels(a), pixels(b)
    return pa is not None and pb is not None and pa.shape == pb.shape and np.array_equal(pa, pb)


def mk(path):
    os.makedirs(path, exist_ok=True)
    return path


def mtimes(d):
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            if f == cc.BATCH_MANIFEST:
                continue
            p = os.path.join(root, f)
            out[os.path.relpath(p, d)] = os.stat(p).st_mtime_ns
    return out


def files_under(d):
    out = set()
    for root, _, files in os.walk(d):
        for f in files:
            if f == cc.BATCH_MANIFEST:
                continue
            out.add(os.path.relpath(os.path.join(root, f), d))
    return out


# ---- inputs: the assets, a subfolder, a hidden file -----------------------------------------
src = mk(os.path.join(tmp, "src"))
for a in ASSETS:
    shutil.copy(os.path.join(assets, a), src)
mk(os.path.join(src, "sub", "deeper"))
shutil.copy(os.path.join(assets, "camera.png"), os.path.join(src, "sub", "cam2.png"))
shutil.copy(os.path.join(assets, "horse.png"), os.path.join(src, "sub", "deeper", "h.png"))
shutil.copy(os.path.join(assets, "horse.png"), os.path.join(src, ".hidden.png"))
with open(os.path.join(src, "notes.txt"), "w") as f:
    f.write("not an image\n")
ALL = sorted(ASSETS + ["sub/cam2.png", "sub/deeper/h.png"])

# ---- 1. outputs equal the single-image commands, op by op and chained ------------------------
cases = [
    ("eq", ["--equalize"], [["equalize"]]),
    ("eqpc", ["--equalize", "--mode", "per-channel"], [["equalize", "--mode", "per-channel"]]),
    ("rot", ["--rotate", "30"], [["rotate", "--angle", "30"]]),
    ("rotbc", ["--rotate", "-17.5", "--filter", "bicubic", "--background", "#3080c0"],
     [["rotate", "--angle", "-17.5", "--filter", "bicubic", "--background", "#3080c0"]]),
    ("rot90", ["--rotate", "90", "--crop"], [["rotate", "--angle", "90", "--crop"]]),
    ("clahe", ["--clahe", "--clip", "3", "--tiles", "4x6", "--mode", "per-channel"],
     [["clahe", "--clip", "3", "--tiles", "4x6", "--mode", "per-channel"]]),
    ("chain", ["--equalize", "--mode", "luminance", "--rotate", "15", "--filter", "bicubic"],
     [["equalize", "--mode", "luminance"], ["rotate", "--angle", "15", "--filter", "bicubic"]]),
]
for tag, ops, singles in cases:
    out = os.path.join(tmp, "out_" + tag)
    r = imgpu("batch", *ops, "--device", "cpu", "-o", out, src, "--jobs", "3")
    C.check(r.rc == 0, f"batch {tag}: exit 0", str(r))
    C.check(files_under(out) == set(ALL), f"batch {tag}: one output per image, subfolders kept",
            f"{sorted(files_under(out))}")
    for rel in ALL:
        cur = os.path.join(src, rel)
        for k, cmd in enumerate(singles):
            nxt = os.path.join(tmp, f"single_{tag}_{k}_" + rel.replace("/", "_"))
            r1 = imgpu(cmd[0], cur, nxt, *cmd[1:], "--device", "cpu", "--quiet")
            C.check(r1.rc == 0, f"single {tag} {rel}", str(r1))
            cur = nxt
        C.check(same_pixels(cur, os.path.join(out, rel)),
                f"batch {tag}: {rel} equals the single-image command(s) pixel for pixel")

# --jobs 1 gives the same pixels (one thread per stage, one PNG strip thread)
out_j1 = os.path.join(tmp, "out_j1")
r = imgpu("batch", "--equalize", "--device", "cpu", "--jobs", "1", "-o", out_j1, src, "--quiet")
C.check(r.rc == 0 and r.err == "", "batch --jobs 1 --quiet: exit 0, silent", str(r))
for rel in ALL:
    C.check(same_pixels(os.path.join(out_j1, rel), os.path.join(tmp, "out_eq", rel)),
            f"--jobs 1 equals --jobs 3: {rel}")

# ---- 2. the parallel PNG encoder's output is a standard PNG (OpenCV) of imgpu's pixels -----
out_copy = os.path.join(tmp, "out_copy")
r = imgpu("batch", "--stage-copy", "-o", out_copy, src, "--quiet", "--format", "png")
C.check(r.rc == 0, "batch --stage-copy: exit 0", str(r))
for rel in ALL:
    C.check(same_pixels(os.path.join(src, rel), os.path.join(out_copy, rel)),
            f"stage-copy PNG decodes (OpenCV) to the input's pixels: {rel}")
    with open(os.path.join(out_copy, rel), "rb") as f:
        data = f.read()
    C.check(data.count(b"IDAT") >= 1 and data.endswith(b"IEND\xaeB`\x82"),
            f"{rel}: IDAT chunks and a closing IEND")

# ---- 3. a corrupt file in the middle fails alone --------------------------------------------
bad = mk(os.path.join(tmp, "bad"))
for a in ["brick.png", "camera.png", "horse.png"]:
    shutil.copy(os.path.join(assets, a), bad)
with open(os.path.join(assets, "chelsea.png"), "rb") as f:
    data = f.read()
with open(os.path.join(bad, "c_corrupt.png"), "wb") as f:   # sorts between brick and camera
    f.write(data[: len(data) // 2])
with open(os.path.join(bad, "d_garbage.jpg"), "wb") as f:
    f.write(b"\xff\xd8\xff" + b"\x00" * 50)
out_bad = os.path.join(tmp, "out_bad")
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_bad, bad)
C.check(r.rc == 1, "corrupt inputs: exit 1", str(r))
C.check(files_under(out_bad) == {"brick.png", "camera.png", "horse.png"},
        "corrupt inputs: every good file written, nothing for the bad ones", str(files_under(out_bad)))
C.check("c_corrupt.png" in r.err and "d_garbage.jpg" in r.err,
        "each failure is reported with its file", r.err)
C.check(re.search(r"3 done, 0 skipped, 2 failed", r.err) is not None, "summary counts", r.err)
C.check(not any(n.startswith(".") for n in cc.listdir_outputs(out_bad)), "no temp files left behind")

# --device cuda where there is no usable GPU: the decode threads start before CUDA's start-up
# answers (batch.c, stage_decide), yet the batch stops with the reason alone: nothing written,
# no file reported as failed. Where there is a GPU the same command must succeed on it.
out_nogpu = os.path.join(tmp, "out_nogpu")
r = imgpu("batch", "--equalize", "--device", "cuda", "--jobs", "3", "-o", out_nogpu, bad)
if "ops on the GPU" in r.err:
    C.check(r.rc == 1 and files_under(out_nogpu) == {"brick.png", "camera.png", "horse.png"},
            "--device cuda with a GPU: the good files written, exit 1 for the bad ones", str(r))
else:
    C.check(r.rc == 1, "--device cuda without a GPU: exit 1", str(r))
    C.check(re.search(r"GPU|CUDA", r.err) is not None and "failed '" not in r.err,
            "--device cuda without a GPU: the reason, and no file reported as failed", r.err)
    C.check(files_under(out_nogpu) == set(), "--device cuda without a GPU: nothing written",
            str(files_under(out_nogpu)))

# ---- 4. resume and --overwrite ----------------------------------------------------------------
out_r = os.path.join(tmp, "out_resume")
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_r, src)
C.check(r.rc == 0 and "9 done, 0 skipped" in r.err, "first run writes all", str(r))
before = mtimes(out_r)
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_r, src)
C.check(r.rc == 0 and "0 done, 9 skipped" in r.err, "second run skips all", str(r))
C.check("nothing to run" in r.err, "a run with nothing to do names no backend", r.err)
C.check(mtimes(out_r) == before, "second run touches nothing")
os.remove(os.path.join(out_r, "coffee.png"))
os.remove(os.path.join(out_r, "sub", "deeper", "h.png"))
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_r, src)
C.check(r.rc == 0 and "2 done, 7 skipped" in r.err, "an interrupted run resumes: only the missing", str(r))
after = mtimes(out_r)
C.check(all(after[k] == before[k] for k in before if k not in ("coffee.png", "sub/deeper/h.png")),
        "resume leaves finished outputs alone")
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_r, src, "--overwrite")
C.check(r.rc == 0 and "9 done, 0 skipped" in r.err, "--overwrite redoes all", str(r))
# a leftover temp file of a killed run is neither an input nor in the way
with open(os.path.join(src, ".coffee.png.AbC123"), "wb") as f:
    f.write(b"partial")
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_r, src, "--dry-run")
C.check(".coffee.png.AbC123" not in r.out, "hidden temp files are not inputs", r.out)
os.remove(os.path.join(src, ".coffee.png.AbC123"))

# ---- 5. path rules ---------------------------------------------------------------------------
for tmpl in ["../{stem}.{ext}", "/tmp/{stem}.png", "a/../../{stem}.png", "{stem}.{bogus}", ""]:
    r = imgpu("batch", "--equalize", "-o", os.path.join(tmp, "out_p"), src, "--name", tmpl)
    C.check(r.rc == 2, f"--name {tmpl!r} is a usage error", str(r))
C.check(not os.path.exists(os.path.join(tmp, "out_p")), "usage errors create nothing")
# a stem of ".." (file "...png") used as a folder would climb out: refused for that file only
dots = mk(os.path.join(tmp, "dots"))
shutil.copy(os.path.join(assets, "horse.png"), os.path.join(dots, "...png"))
shutil.copy(os.path.join(assets, "camera.png"), os.path.join(dots, "cam.png"))
out_d = mk(os.path.join(tmp, "out_dots", "inner"))
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_d, os.path.join(dots, "...png"),
          os.path.join(dots, "cam.png"), "--name", "{stem}/x.png")
C.check(r.rc == 1 and "...png" in r.err and "'..'" in r.err, "stem '..' as a folder is refused", str(r))
C.check(files_under(os.path.join(tmp, "out_dots")) == {"inner/cam/x.png"},
        "nothing lands outside OUTDIR", str(files_under(os.path.join(tmp, "out_dots"))))
# a symbolic link inside OUTDIR pointing elsewhere does not carry outputs out
outside = mk(os.path.join(tmp, "outside"))
out_l = mk(os.path.join(tmp, "out_link"))
os.symlink(outside, os.path.join(out_l, "sub"))
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_l, src)
C.check(r.rc == 1 and "outside the output folder" in r.err, "symlink escape refused", str(r))
C.check(os.listdir(outside) == [], "nothing written through the link", str(os.listdir(outside)))
# OUTDIR == the input folder: same names would overwrite the inputs: refused even with --overwrite
inplace = mk(os.path.join(tmp, "inplace"))
shutil.copy(os.path.join(assets, "camera.png"), inplace)
snap = cc.snapshot(inplace)
for extra in ([], ["--overwrite"]):
    r = imgpu("batch", "--equalize", "--device", "cpu", "-o", inplace, inplace, *extra)
    C.check(r.rc == 1 and "overwrite an input" in r.err, f"output == input refused {extra}", str(r))
C.check(cc.snapshot(inplace) == snap, "the input is untouched")
# ... a different name in the same folder is fine, and the next run does not take the output
# for a new input (OUTDIR inside the input folder is not walked)
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", os.path.join(inplace, "eq"), inplace)
C.check(r.rc == 0 and files_under(inplace) == {"camera.png", "eq/camera.png"}, "OUTDIR inside the input", str(r))
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", os.path.join(inplace, "eq"), inplace, "--overwrite")
C.check(r.rc == 0 and "1 done" in r.err, "OUTDIR inside the input folder is not an input", str(r))
# two inputs, one output name: the first wins, the second fails
dup = mk(os.path.join(tmp, "dup"))
shutil.copy(os.path.join(assets, "camera.png"), os.path.join(dup, "a.png"))
shutil.copy(os.path.join(assets, "horse.png"), os.path.join(dup, "a.tga.png"))
r = imgpu("rotate", os.path.join(assets, "horse.png"), os.path.join(dup, "a.bmp"), "--angle", "90", "--device", "cpu")
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", os.path.join(tmp, "out_dup"), dup, "--format", "png")
C.check(r.rc == 1 and f"failed '{os.path.join(dup, 'a.png')}'" in r.err and "also the output of" in r.err
        and "a.bmp" in r.err, "duplicate output refused", str(r))
single = os.path.join(tmp, "dup_single.png")
imgpu("equalize", os.path.join(dup, "a.bmp"), single, "--device", "cpu")
C.check(same_pixels(os.path.join(tmp, "out_dup", "a.png"), single), "the first input (sorted: a.bmp) keeps the output")
C.check(files_under(os.path.join(tmp, "out_dup")) == {"a.png", "a.tga.png"}, "the others are written")

# ---- 6. --format / --name / globs / explicit files -------------------------------------------
out_f = os.path.join(tmp, "out_fmt")
r = imgpu("batch", "--equalize", "--device", "cpu", "-o", out_f, os.path.join(src, "c*.png"),
          os.path.join(assets, "rocket.jpg"), "--format", "jpg", "--name", "{stem}_eq.{ext}")
C.check(r.rc == 0 and files_under(out_f) == {"camera_eq.jpg", "chelsea_eq.jpg", "clock_motion_eq.jpg",
                                            "coffee_eq.jpg", "rocket_eq.jpg"},
        "quoted glob + file, --format jpg, --name", str(r) + str(files_under(out_f)))
r = imgpu("batch", "--equalize", "-o", out_f, os.path.join(src, "zz*.png"))
C.check(r.rc == 1 and "no file matches" in r.err, "a glob matching nothing is reported", str(r))

# ---- 7. --dry-run and shards ----------------------------------------------------------------
out_n = os.path.join(tmp, "out_dry")
r = imgpu("batch", "--equalize", "-o", out_n, src, "--dry-run")
listed = [ln.split(" -> ")[0] for ln in r.out.splitlines() if " -> " in ln]
C.check(r.rc == 0 and len(listed) == 9 and not os.path.exists(out_n), "--dry-run lists 9, writes nothing", str(r))
C.check(listed == sorted(listed), "inputs in sorted order")
allset = set(listed)
for n in (1, 2, 3, 4, 9, 13):
    seen = []
    for k in range(1, n + 1):
        r = imgpu("batch", "--equalize", "-o", out_n, src, "--dry-run", "--shard", f"{k}/{n}")
        part = [ln.split(" -> ")[0] for ln in r.out.splitlines() if " -> " in ln]
        C.check(r.rc == 0, f"shard {k}/{n}", str(r))
        C.check(abs(len(part) - 9 / n) < 1, f"shard {k}/{n} takes its share ({len(part)})")
        seen += part
    C.check(sorted(seen) == sorted(allset) and len(seen) == len(allset),
            f"shards 1/{n}..{n}/{n} cover every input exactly once")
for bad_shard in ["0/3", "4/3", "1/0", "x/2", "1/"]:
    r = imgpu("batch", "--equalize", "-o", out_n, src, "--shard", bad_shard)
    C.check(r.rc == 2, f"--shard {bad_shard} is a usage error", str(r))

# ---- 8. usage --------------------------------------------------------------------------------
# (no op at all is no longer a usage error: batch without an op converts, issue 28: geom_ops.py)
for args in (["--equalize", src], ["--equalize", "-o", out_n],
             ["--mode", "luminance", "--equalize", "-o", out_n, src],
             ["--equalize", "--filter", "bicubic", "-o", out_n, src], ["--equalize", "--jobs", "0", "-o", out_n, src],
             ["--equalize", "--devices", "a", "-o", out_n, src], ["--equalize", "--bogus", "-o", out_n, src]):
    r = imgpu("batch", *args)
    C.check(r.rc == 2 and "try 'imgpu batch --help'" in r.err, f"usage error: {args}", str(r))
r = imgpu("batch", "--help")
C.check(r.rc == 0 and "--shard K/N" in r.out, "batch --help", str(r))

# ---- 9. progress lines when stderr is not a terminal; --quiet silences them -------------------
env_run = cc.run
import subprocess  # noqa: E402
p = subprocess.run([binary, "batch", "--equalize", "--device", "cpu", "-o", os.path.join(tmp, "out_prog"), src,
                    "--jobs", "2"], capture_output=True, env=dict(os.environ, IMGPU_PROGRESS_INTERVAL="0"))
err = p.stderr.decode()
C.check(p.returncode == 0 and len(re.findall(r"imgpu batch: \d+/9 files, [\d.]+ images/s, ETA", err)) >= 3,
        "plain progress lines on a non-terminal", err)
C.check("\r" not in err, "no carriage returns when stderr is not a terminal", repr(err[:300]))
p = subprocess.run([binary, "batch", "--equalize", "--device", "cpu", "-o", os.path.join(tmp, "out_prog2"), src,
                    "--quiet"], capture_output=True, env=dict(os.environ, IMGPU_PROGRESS_INTERVAL="0"))
C.check(p.returncode == 0 and p.stderr == b"", "--quiet: no progress, no summary", p.stderr.decode())

rc = C.end()
cc.cleanup(tmp, rc != 0)
sys.exit(rc)

"""batch_options.py — every single-image option works in `imgpu batch` (issue 15, one option
table): for --formula, --depth 8, --max-file-size and --max-decode-time, batch's output equals
the single command's with the same option pixel for pixel (and in bit depth), a limit refuses
in batch what it refuses in the single command, and a bad value is the same usage error
(exit 2, one wording) in both. Runs on the CPU backend (label cli).

usage: batch_options.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

binary, tmp, assets = cc.setup("batch_options")
C = cc.Checker("batch_options")


def imgpu(*args):
    return cc.run(binary, [str(a) for a in args])


def depth(path):
    r = imgpu("info", path)
    for line in r.out.splitlines():
        if line.startswith("bit depth:"):
            return int(line.split()[-1])
    return None


def equal(a, b):
    """Same pixels and the same bit depth (compare scales 8 against 16 bits and says so)."""
    if not (os.path.exists(a) and os.path.exists(b)):
        return False, f"missing {a if not os.path.exists(a) else b}"
    r = imgpu("compare", a, b, "--max-abs", "0")
    return r.rc == 0 and "note:" not in r.out and depth(a) == depth(b), str(r)


n = 0


def same_as_single(batch_ops, single_cmd, single_opts, src, extra=()):
    """batch BATCH_OPS -o D SRC EXTRA  ==  imgpu SINGLE_CMD SRC OUT SINGLE_OPTS EXTRA."""
    global n
    n += 1
    d = os.path.join(tmp, f"out{n}")
    single = os.path.join(tmp, f"single{n}.png")
    what = f"batch {' '.join(batch_ops + list(extra))} == {single_cmd} {' '.join(single_opts + list(extra))}"
    rb = imgpu("batch", *batch_ops, "--device", "cpu", "--quiet", "-o", d, src, *extra)
    rs = imgpu(single_cmd, src, single, *single_opts, "--device", "cpu", *extra)
    out = os.path.join(d, os.path.basename(src))
    ok, detail = equal(out, single) if rb.rc == 0 and rs.rc == 0 else (False, f"{rb}\n{rs}")
    C.check(ok, what, detail)
    return out


cam = os.path.join(assets, "camera.png")
coffee = os.path.join(assets, "coffee.png")
cam16 = os.path.join(assets, "camera16.png")
chel16 = os.path.join(assets, "chelsea16.png")

# ---- --formula: the equalize LUT, per op --------------------------------------------------------
for f in ("opencv", "pil", "imagemagick"):
    same_as_single(["--equalize", "--formula", f], "equalize", ["--formula", f], cam)
    same_as_single(["--equalize", "--mode", "per-channel", f"--formula={f}"], "equalize",
                   ["--mode", "per-channel", "--formula", f], coffee)
    same_as_single(["--equalize", "--formula", f], "equalize", ["--formula", f], cam16)
r = imgpu("batch", "--formula", "pil", "--equalize", "-o", os.path.join(tmp, "x"), cam)
C.check(r.rc == 2 and "--formula must follow --equalize" in r.err, "batch: --formula before --equalize: usage error", str(r))
r = imgpu("batch", "--clahe", "--formula", "pil", "-o", os.path.join(tmp, "x"), cam)
C.check(r.rc == 2, "batch: --formula after --clahe only: usage error", str(r))
# --expand and --crop on one rotation contradict each other there as in `imgpu rotate`; on two
# rotations they are two settings
r = imgpu("batch", "--rotate", "30", "--expand", "--crop", "-o", os.path.join(tmp, "canvas"), cam)
C.check(r.rc == 2 and "contradict" in r.err and not os.path.exists(os.path.join(tmp, "canvas")),
        "batch: --expand --crop on one rotation: usage error, nothing written", str(r))
r = imgpu("batch", "--rotate", "30", "--crop", "--rotate", "10", "--expand", "--dry-run",
          "-o", os.path.join(tmp, "canvas2"), cam)
C.check(r.rc == 0, "batch: --crop and --expand on two rotations: accepted", str(r))

# ---- --depth 8: 16-bit results written as 8 bits, as the single commands do --------------------
for src in (cam16, chel16):
    o = same_as_single(["--equalize"], "equalize", [], src, extra=["--depth", "8"])
    C.check(depth(o) == 8, f"batch --depth 8 writes 8 bits ({os.path.basename(src)})", str(depth(o)))
    same_as_single(["--clahe", "--clip", "3"], "clahe", ["--clip", "3"], src, extra=["--depth", "8"])
    same_as_single(["--rotate", "30"], "rotate", ["--angle", "30"], src, extra=["--depth=8"])
    o = same_as_single(["--equalize"], "equalize", [], src, extra=["--depth", "16"])
    C.check(depth(o) == 16, "batch --depth 16 keeps 16 bits", str(depth(o)))
same_as_single(["--equalize"], "equalize", [], cam, extra=["--depth", "8"])   # 8-bit input: unchanged

# ---- --max-file-size, --max-decode-time: accepted, and refusing what the single command refuses --
same_as_single(["--equalize"], "equalize", [], cam, extra=["--max-file-size", "10M"])
same_as_single(["--equalize"], "equalize", [], cam, extra=["--max-decode-time", "20"])
rb = imgpu("batch", "--equalize", "--device", "cpu", "-o", os.path.join(tmp, "small"), cam, "--max-file-size", "1K")
rs = imgpu("equalize", cam, os.path.join(tmp, "small.png"), "--device", "cpu", "--max-file-size", "1K")
C.check(rb.rc == 1 and rs.rc == 1 and "--max-file-size" in rb.err and "--max-file-size" in rs.err
        and not os.path.exists(os.path.join(tmp, "small", "camera.png")),
        "--max-file-size 1K refuses camera.png in batch as in equalize", f"{rb}\n{rs}")

# ---- normalize / autolevel (issue 28, op-norm): batch == the single commands; the clips are
# --black-clip / --white-clip, never CLAHE's --clip, so a chain with both reads unambiguously ----
same_as_single(["--normalize"], "normalize", [], coffee)
same_as_single(["--normalize", "--black-clip", "2", "--white-clip", "1", "--mode", "per-channel"], "normalize",
               ["--black-clip", "2", "--white-clip", "1", "--mode", "per-channel"], chel16)
same_as_single(["--autolevel", "--mode", "per-channel"], "autolevel", ["--mode", "per-channel"], chel16,
               extra=["--depth", "8"])
step = os.path.join(tmp, "norm_step.png")
imgpu("normalize", coffee, step, "--black-clip", "1", "--device", "cpu")
r = imgpu("batch", "--normalize", "--black-clip", "1", "--clahe", "--clip", "2", "--mode", "per-channel",
          "--device", "cpu", "--quiet", "-o", os.path.join(tmp, "chain"), coffee)
imgpu("clahe", step, os.path.join(tmp, "chain_ref.png"), "--clip", "2", "--mode", "per-channel", "--device", "cpu")
ok, detail = equal(os.path.join(tmp, "chain", "coffee.png"), os.path.join(tmp, "chain_ref.png"))
C.check(r.rc == 0 and ok, "batch --normalize --black-clip 1 --clahe --clip 2 --mode M == normalize, then clahe",
        f"{r}\n{detail}")
r = imgpu("batch", "--normalize", "--clip", "2", "-o", os.path.join(tmp, "x"), cam)
C.check(r.rc == 2 and "--clip must follow --clahe" in r.err, "batch: --clip after --normalize only: usage error",
        str(r))
r = imgpu("batch", "--clahe", "--black-clip", "2", "-o", os.path.join(tmp, "x"), cam)
C.check(r.rc == 2 and "--black-clip must follow --normalize" in r.err,
        "batch: --black-clip after --clahe only: usage error", str(r))

# ---- one wording for a bad value in every front end ------------------------------------------
for opt, val in (("--formula", "gimp"), ("--depth", "12"), ("--max-file-size", "-1"),
                 ("--max-decode-time", "soon"), ("--max-pixels", "0"), ("--max-memory", "junk"),
                 ("--clip", "nan"), ("--tiles", "0x8"), ("--mode", "hsv"), ("--black-clip", "101"),
                 ("--white-clip", "-1")):
    op = {"--clip": "--clahe", "--tiles": "--clahe", "--mode": "--clahe", "--black-clip": "--normalize",
          "--white-clip": "--normalize"}.get(opt, "--equalize")
    cmd = op[2:]
    rb = imgpu("batch", op, opt, val, "-o", os.path.join(tmp, "bad"), cam)
    rs = imgpu(cmd, cam, os.path.join(tmp, "bad.png"), opt, val)
    eb = rb.err.splitlines()[0] if rb.err else ""
    es = rs.err.splitlines()[0] if rs.err else ""
    C.check(rb.rc == 2 and rs.rc == 2 and eb == es and f"invalid {opt} '{val}'" in eb,
            f"{opt} {val}: the same usage error in batch and {cmd}", f"{rb}\n{rs}")
C.check(not os.path.exists(os.path.join(tmp, "bad")), "usage errors create nothing")

rc = C.end()
cc.cleanup(tmp, rc != 0)
sys.exit(rc)

"""cli_rotate_sense.py — issue 30's rotation rough edges:
- `--clockwise`: positive angles turn counterclockwise (OpenCV, Pillow, torchvision); with
  --clockwise they turn clockwise (ImageMagick, vips). `--angle A --clockwise` writes the bytes
  of `--angle -A` (either order), a marked corner lands where a clockwise quarter turn puts it,
  batch's `--rotate A --clockwise` and the Python module's clockwise=True do the same, and the
  first lines of `rotate --help` say which way a positive angle turns;
- no help lists an option name twice (rotate's listed --background twice: its fill and the
  JPEG flatten colour, now --flatten), for every command, batch and the viewer;
- --background is rotate's fill only, --flatten what JPEG flattens alpha onto; elsewhere
  --background is still --flatten.
usage: cli_rotate_sense.py IMGPU TMP_ROOT ASSETS (needs /usr/bin/python3 with numpy and cv2, else 77).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:
    print("SKIP: needs numpy and cv2 (/usr/bin/python3)")
    sys.exit(77)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def option_names(text):
    """The options a help lists as entries: '  --name' or '  -x, --name' at a line's start."""
    return re.findall(r"^  (?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*)", text, re.M)


def main():
    binary, tmp, assets = cc.setup("cli_rotate_sense")
    ck = cc.Checker("cli_rotate_sense")
    src = os.path.join(assets, "chelsea.png")

    # ---- --clockwise ------------------------------------------------------------------------
    r = cc.run(binary, ["rotate", "--help"])
    head = "\n".join(r.out.splitlines()[:6])
    ck.check(r.rc == 0 and "counterclockwise" in head and "--clockwise" in head,
             "the first lines of rotate --help say positive is counterclockwise and name --clockwise", head)

    def rot(name, args, inp=src):
        out = os.path.join(tmp, name)
        r = cc.run(binary, ["rotate", inp, out, "--device", "cpu"] + args)
        ck.check(r.rc == 0, f"rotate {args} exits 0", str(r))
        return read(out) if r.rc == 0 else b""

    for filt in ("bilinear", "bicubic", "nearest"):
        ccw = rot(f"m30_{filt}.png", ["--angle", "-30", "--filter", filt])
        cw1 = rot(f"cw30a_{filt}.png", ["--angle", "30", "--clockwise", "--filter", filt])
        cw2 = rot(f"cw30b_{filt}.png", ["--clockwise", "--filter", filt, "--angle", "30"])
        p30 = rot(f"p30_{filt}.png", ["--angle", "30", "--filter", filt])
        ck.check(ccw and cw1 == ccw, f"{filt}: --angle 30 --clockwise writes --angle -30's bytes")
        ck.check(ccw and cw2 == ccw, f"{filt}: --clockwise before --angle: the same")
        ck.check(p30 and p30 != cw1, f"{filt}: --angle 30 alone turns the other way")
    # which way: a 40x20 image, a white 2x2 mark at the top left corner; turned 90 degrees
    # clockwise (20x40) the mark is at the top right; counterclockwise, at the bottom left
    mark = np.zeros((20, 40, 3), np.uint8)
    mark[0:2, 0:2] = 255
    mpath = os.path.join(tmp, "mark.png")
    cv2.imwrite(mpath, mark)
    for args, corner in ((["--angle", "90", "--clockwise"], "top right"),
                         (["--angle", "90"], "bottom left"),
                         (["--angle", "-90", "--clockwise"], "bottom left")):
        out = os.path.join(tmp, "mark_out.png")
        r = cc.run(binary, ["rotate", mpath, out] + args)
        im = cv2.imread(out, cv2.IMREAD_UNCHANGED) if r.rc == 0 else None
        ok = im is not None and im.shape[:2] == (40, 20)
        if ok:
            want = {"top right": (slice(0, 2), slice(18, 20)), "bottom left": (slice(38, 40), slice(0, 2))}[corner]
            ok = (im[want] == 255).all() and int(im.sum()) == 255 * 12
        ck.check(ok, f"rotate {args}: the top-left mark lands at the {corner}", str(r))
    # batch: --rotate 30 --clockwise as the single command's --angle -30
    bdir = os.path.join(tmp, "bin")
    os.makedirs(bdir)
    cv2.imwrite(os.path.join(bdir, "c.png"), cv2.imread(src, cv2.IMREAD_UNCHANGED))
    bout = os.path.join(tmp, "bout")
    r = cc.run(binary, ["batch", "--rotate", "30", "--clockwise", "--device", "cpu", "--quiet",
                        "-o", bout, bdir])
    single = rot("single_m30.png", ["--angle", "-30"], os.path.join(bdir, "c.png"))
    ck.check(r.rc == 0 and os.path.exists(os.path.join(bout, "c.png")) and
             read(os.path.join(bout, "c.png")) == single,
             "batch --rotate 30 --clockwise writes rotate --angle -30's bytes", str(r))
    # the Python module, where built (IMGPU_PYTHONPATH, as the python tests)
    pyp = os.environ.get("IMGPU_PYTHONPATH")
    if pyp:
        code = ("import sys, numpy as np, imgpu\n"
                "a = np.random.default_rng(1).integers(0, 256, (37, 53, 3), dtype=np.uint8)\n"
                "x = imgpu.rotate(a, 30, clockwise=True, device='cpu')\n"
                "y = imgpu.rotate(a, -30, device='cpu')\n"
                "z = imgpu.rotate(a, 30, device='cpu')\n"
                "sys.exit(0 if np.array_equal(np.asarray(x), np.asarray(y)) and not np.array_equal(np.asarray(x), np.asarray(z)) else 1)\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=pyp))
        ck.check(p.returncode == 0, "imgpu.rotate(a, 30, clockwise=True) == imgpu.rotate(a, -30)",
                 p.stderr.decode(errors="replace")[-600:])

    # ---- no help lists an option twice ------------------------------------------------------
    r = cc.run(binary, ["--help"])
    cmds = re.findall(r"^  ([a-z]+) ", r.out, re.M)
    ck.check(len(cmds) >= 10 and "rotate" in cmds, "imgpu --help lists the commands", r.out)
    helps = {c: cc.run(binary, [c, "--help"]) for c in cmds if c not in ("view", "bench")}
    view = os.path.join(os.path.dirname(binary), "imgpu-view")
    if os.path.exists(view):
        p = subprocess.run([view, "--help"], capture_output=True, timeout=60)
        helps["view"] = cc.Result(["view", "--help"], p.returncode, p.stdout.decode(errors="replace"), "", False)
    for c, hr in helps.items():
        names = option_names(hr.out)
        dup = sorted({n for n in names if names.count(n) > 1})
        ck.check(hr.rc == 0 and len(names) >= 3 and not dup,
                 f"imgpu {c} --help lists each option once", f"twice: {dup}")

    # ---- --background (rotate's fill) and --flatten (JPEG) ------------------------------------
    # a 16x16 RGBA image, transparent everywhere; a quarter turn has nothing to fill, so the
    # JPEG shows only what alpha was flattened onto
    clear = np.zeros((16, 16, 4), np.uint8)
    cpath = os.path.join(tmp, "clear.png")
    cv2.imwrite(cpath, clear)

    def jpeg_mean(cmd, args):
        out = os.path.join(tmp, "flat.jpg")
        if os.path.exists(out):
            os.remove(out)
        r = cc.run(binary, [cmd, cpath, out, "--quiet"] + args)
        if not ck.check(r.rc == 0, f"{cmd} {args} exits 0", str(r)):
            return None
        return cv2.imread(out, cv2.IMREAD_COLOR).reshape(-1, 3).mean(axis=0)   # B, G, R

    def near(m, bgr):
        return m is not None and np.abs(m - np.array(bgr)).max() <= 3

    m = jpeg_mean("rotate", ["--angle", "90", "--background", "#0000ff"])
    ck.check(near(m, (255, 255, 255)), "rotate --background is the fill only: JPEG flattens onto white", m)
    m = jpeg_mean("rotate", ["--angle", "90", "--flatten", "#ff0000"])
    ck.check(near(m, (0, 0, 255)), "rotate --flatten red: the JPEG is red", m)
    m = jpeg_mean("rotate", ["--angle", "90", "--flatten", "#ff0000", "--background", "#0000ff"])
    ck.check(near(m, (0, 0, 255)), "rotate --flatten red --background blue: flattened onto red", m)
    m = jpeg_mean("equalize", ["--background", "#00ff00"])
    ck.check(near(m, (0, 255, 0)), "equalize --background (no fill of its own) is --flatten", m)
    m = jpeg_mean("equalize", ["--flatten", "#00ff00"])
    ck.check(near(m, (0, 255, 0)), "equalize --flatten green", m)
    # the fill: rotated by 45 degrees onto an opaque blue background, the corners are blue
    out = os.path.join(tmp, "fill.png")
    r = cc.run(binary, ["rotate", cpath, out, "--angle", "45", "--background", "#0000ff", "--flatten", "#ff0000"])
    im = cv2.imread(out, cv2.IMREAD_UNCHANGED) if r.rc == 0 else None
    ck.check(im is not None and tuple(im[0, 0]) == (255, 0, 0, 255),
             "rotate --background blue still fills the corners (PNG keeps alpha)", str(r))
    # batch: --background after a rotation fills it; without a rotation it is --flatten
    os.makedirs(os.path.join(tmp, "bclear"))
    cv2.imwrite(os.path.join(tmp, "bclear", "c.png"), clear)
    for args, bgr, what in (
            (["--rotate", "90", "--background", "#0000ff"], (255, 255, 255), "fills the rotation"),
            (["--rotate", "90", "--flatten", "#ff0000"], (0, 0, 255), "--flatten"),
            (["--equalize", "--background", "#00ff00"], (0, 255, 0), "without a rotation is --flatten")):
        bo = os.path.join(tmp, "bo_" + str(abs(hash(tuple(args)))))
        r = cc.run(binary, ["batch"] + args + ["--format", "jpg", "--quiet", "-o", bo, os.path.join(tmp, "bclear")])
        f = os.path.join(bo, "c.jpg")
        m = cv2.imread(f, cv2.IMREAD_COLOR).reshape(-1, 3).mean(axis=0) if r.rc == 0 and os.path.exists(f) else None
        ck.check(near(m, bgr), f"batch {args}: --background {what}", f"{m} {r}")

    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

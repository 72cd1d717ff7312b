"""viewer_16bit.py — 16-bit images in imgpu-view (#18 item 3), headless through EGL.

usage: viewer_16bit.py IMGPU IMGPU_VIEW TMP_ROOT ASSETS
  - a 16-bit gray image of levels 3160..10760 is shown with full contrast by default (the auto
    window min..max): the 1:1 view snapshot is round((v - 3160) / 7600 * 255), 0..255;
  - the equalized / CLAHE + rotated 16-bit views are the CLI's 16-bit outputs shown through the
    same window (their own min..max), and the 1:1 raw snapshots (--snapshot without --size)
    are the CLI's 16-bit files exactly;
  - the window keys (= narrower, Up higher, A auto) move the window as documented;
  - S saves the 16-bit result and Ctrl+C prints a command line that makes the same file.
The shader maps the window in float, so a view sample may be 1 level off the numpy rounding
(at exact halves): the view checks allow 1, and at most 1% of samples may differ at all.
/usr/bin/python3 with numpy and cv2, else skipped (77).
"""
import os
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


def run(args, env=None):
    p = subprocess.run(args, capture_output=True, timeout=120, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def read(path):
    im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if im is not None and im.ndim == 3:
        im = im[:, :, ::-1]  # cv2 gives BGR; imgpu's files are RGB
    return im


def windowed(img16, lo, hi):
    """What the view shows: (v - lo) / (hi - lo) clamped to 0..1, as 8 bits, gray as RGB."""
    x = np.clip((img16.astype(np.float64) - lo) / max(hi - lo, 1), 0, 1)
    x = np.floor(x * 255 + 0.5).astype(np.int64)
    if x.ndim == 2:
        x = np.repeat(x[:, :, None], 3, axis=2)
    return x[:, :, :3]


def same16(a, b):
    """`imgpu compare A B --max-abs 0` on two 16-bit files, in numpy (no imgpu process): both
    16-bit, same shape, every sample equal. Returns (equal, detail)."""
    pa, pb = read(a), read(b)
    if pa is None or pb is None or pa.dtype != np.uint16 or pb.dtype != np.uint16 or pa.shape != pb.shape:
        return False, (f"{a}: {None if pa is None else (pa.shape, pa.dtype)}, "
                       f"{b}: {None if pb is None else (pb.shape, pb.dtype)} (two 16-bit images of one shape wanted)")
    d = np.abs(pa.astype(np.int64) - pb.astype(np.int64))
    return bool(d.max() == 0), f"{int(np.count_nonzero(d))} samples differ, max |diff| {int(d.max())} (16-bit levels)"


def close_view(ck, snap, want, what):
    got = read(snap)
    if not ck.check(got is not None and got.shape == want.shape, f"{what}: a {want.shape} view",
                    f"got {None if got is None else got.shape}"):
        return None
    d = np.abs(got.astype(np.int64) - want)
    ck.check(d.max() <= 1 and (d != 0).mean() <= 0.01, f"{what}: view == numpy window/level (within 1)",
             f"max diff {d.max()}, {(d != 0).mean() * 100:.3f}% differ")
    return got


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    imgpu, view, tmp_root, assets = (os.path.abspath(a) for a in sys.argv[1:5])
    os.makedirs(tmp_root, exist_ok=True)
    import tempfile
    tmp = tempfile.mkdtemp(prefix="viewer_16bit.", dir=tmp_root)
    ck = cc.Checker("viewer_16bit")
    rng = np.random.default_rng(3160)
    h, w = 90, 120
    y, x = np.mgrid[0:h, 0:w]
    g = (3160 + (x * 7600 // (w - 1) * 3 + rng.integers(0, 7601, (h, w))) // 4).astype(np.uint16)
    g[0, 0], g[-1, -1] = 3160, 10760
    rgb = np.dstack([g, (g // 2 + 1000), 65535 - g]).astype(np.uint16)
    gp, cp = os.path.join(tmp, "g16.png"), os.path.join(tmp, "c16.png")
    cv2.imwrite(gp, g)
    cv2.imwrite(cp, rgb[:, :, ::-1])
    ctx = ["--context", "egl", "--quiet"]
    size = ["--size", f"{w}x{h}"]  # the fit zoom is 1: texel for pixel

    # default window: the image's min..max, full contrast
    snap = os.path.join(tmp, "g_view.png")
    rc, o, e = run([view, gp, "--snapshot", snap, "--stats"] + size + ctx)
    if ck.check(rc == 0, "16-bit gray view: exits 0", o + e):
        ck.check("window: 3160..10760 (auto)" in o, "--stats prints the auto window 3160..10760", o)
        got = close_view(ck, snap, windowed(g, 3160, 10760), "16-bit gray, auto window")
        if got is not None:
            ck.check(got.min() == 0 and got.max() == 255, "full contrast: the view spans 0..255",
                     f"{got.min()}..{got.max()}")

    # processed views: the CLI's 16-bit output, raw (exact) and through its own min..max
    cases = [(gp, ["--equalize"], [["equalize"]]),
             (cp, ["--equalize", "--mode", "per-channel"], [["equalize", "--mode", "per-channel"]]),
             (cp, ["--clahe", "--rotate", "30"], [["clahe"], ["rotate", "--angle", "30", "--force"]]),
             (gp, ["--rotate", "-12.5", "--filter", "bicubic", "--crop"],
              [["rotate", "--angle", "-12.5", "--filter", "bicubic", "--crop"]])]
    for inp, vopts, steps in cases:
        what = f"{os.path.basename(inp)} {' '.join(vopts)}"
        ref = os.path.join(tmp, "ref.png")
        src = inp
        for s in steps:
            # the CPU backend is the reference (and starts no CUDA on a GPU machine)
            rc, o, e = run([imgpu, s[0], src, ref] + s[1:] + ["--device", "cpu", "--quiet"])
            ck.check(rc == 0, f"{what}: CLI {s}", e)
            src = ref
        out = read(ref)
        ck.check(out is not None and out.dtype == np.uint16, f"{what}: the CLI writes 16 bits")
        raw = os.path.join(tmp, "raw.png")
        rc, o, e = run([view, inp, "--snapshot", raw] + vopts + ctx)
        if ck.check(rc == 0, f"{what}: raw snapshot exits 0", o + e):
            ok, detail = same16(raw, ref)
            ck.check(ok, f"{what}: raw snapshot == the CLI's 16-bit output", detail)
        snap = os.path.join(tmp, "view.png")
        oh, ow = out.shape[:2]
        rc, o, e = run([view, inp, "--snapshot", snap, "--size", f"{ow}x{oh}", "--stats"] + vopts + ctx)
        if ck.check(rc == 0, f"{what}: view snapshot exits 0", o + e):
            colors = out if out.ndim == 2 else out[:, :, :3]
            lo, hi = int(colors.min()), int(colors.max())
            ck.check(f"window: {lo}..{hi} (auto)" in o, f"{what}: auto window is the result's {lo}..{hi}", o)
            close_view(ck, snap, windowed(out, lo, hi), f"{what}: view")

    # the window keys: = narrows 7600 -> 6080 about 6960: 3920..10000; Up moves it by 608:
    # 4528..10608; A: back to auto; - widens to 9500 (2210..11710), Shift+Down lowers it by 95
    ev = os.path.join(tmp, "ev.txt")
    for script, lo, hi, tag in (("key =\n", 3920, 10000, ""), ("key =\nkey up\n", 4528, 10608, ""),
                                ("key =\nkey up\nkey a\n", 3160, 10760, " (auto)"),
                                ("key -\nkey shift+down\n", 2115, 11615, "")):
        cc.write(ev, script.encode())
        snap = os.path.join(tmp, "keys.png")
        rc, o, e = run([view, gp, "--events", ev, "--snapshot", snap, "--stats"] + size + ctx)
        what = "keys " + script.strip().replace("\n", ", ")
        if ck.check(rc == 0, f"{what}: exits 0", o + e):
            ck.check(f"window: {lo}..{hi}{tag}\n" in o, f"{what}: window {lo}..{hi}{tag}", o)
            close_view(ck, snap, windowed(g, lo, hi), what)

    # S saves 16 bits; Ctrl+C's command line makes the same file
    cc.write(ev, b"key e\nkey 0\nkey =\nkey ctrl+c\nkey s\n")
    snap = os.path.join(tmp, "ev_raw.png")
    rc, o, e = run([view, gp, "--events", ev, "--snapshot", snap, "--save-dir", tmp] + ctx)
    saved = os.path.join(tmp, "g16.view.png")
    lines = [l for l in o.splitlines() if l.startswith("imgpu ")]
    if ck.check(rc == 0 and len(lines) == 1 and os.path.isfile(saved), "16-bit events: S saves, Ctrl+C prints",
                o + e):
        sv = read(saved)
        ck.check(sv.dtype == np.uint16, "S saves a 16-bit file", str(sv.dtype))
        moved = os.path.join(tmp, "saved.png")
        os.rename(saved, moved)
        env = dict(os.environ, PATH=os.path.dirname(imgpu) + os.pathsep + os.environ.get("PATH", ""))
        rc, o2, e2 = run(["sh", "-c", lines[0]], env=env)
        if ck.check(rc == 0, "the printed command line runs", lines[0] + "\n" + o2 + e2):
            for f, n in ((moved, "S's file"), (snap, "the raw snapshot")):
                ok, detail = same16(f, saved)
                ck.check(ok, f"{n} == the printed command's 16-bit output", detail)
    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

"""review.py — the pixel review of regenerated goldens (docs/testing.md, "Regenerating goldens").

    /usr/bin/python3 tests/golden/review.py [REV]

Compares every tests/golden/*.png of the working tree whose bytes differ from git revision REV
(default HEAD) by its decoded pixels (cv2, IMREAD_UNCHANGED): pixels and samples changed, the
largest and mean |difference| over changed samples; for an image with alpha, the output alpha
of the changed pixels (partly transparent, 0, opaque) and whether alpha itself changed; for a
rotation case with alpha (cases.txt), which changed pixels have taps of different alphas:
src/cpu/rotate.c's source point replayed in float32, then the bilinear 2 x 2 or bicubic 4 x 4
taps, the background's alpha outside the image. A file whose bytes differ but whose pixels do
not (metadata) is listed as such. Never run by the tests; needs numpy and cv2."""
import math
import os
import subprocess
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def cases():
    out = {}
    for line in open(os.path.join(HERE, "cases.txt")):
        f = line.split()
        if f and not f[0].startswith("#"):
            out[f[0]] = (f[3], f[4], f[5:])
    return out


def old_bytes(rev, name):
    r = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:tests/golden/{name}"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def rotate_taps(asset, args, shape):
    """Per output pixel: 1 where the taps' alphas differ (None if not a rotation we replay)."""
    opt = {args[k]: args[k + 1] for k in range(0, len(args) - 1) if args[k].startswith("--")}
    filt = opt.get("--filter", "bilinear")
    if filt == "nearest" or "--angle" not in opt:
        return None
    src = cv2.imread(os.path.join(ROOT, "assets", asset), cv2.IMREAD_UNCHANGED)
    if src is None or src.ndim != 3 or src.shape[2] != 4:
        return None
    bg = opt.get("--background")
    bg_a = 0 if bg is None else (int(bg[7:9], 16) if len(bg) == 9 else 255)
    h, w = src.shape[:2]
    H, W = shape[:2]
    f = np.float32
    a = math.fmod(float(opt["--angle"]), 360.0)
    a = a + 360.0 if a < 0 else a
    c, s = f(math.cos(a * math.pi / 180)), f(math.sin(a * math.pi / 180))
    v, u = np.mgrid[0:H, 0:W]
    dx = (u.astype(f) + f(0.5)) - f(0.5) * f(W)
    dy = (v.astype(f) + f(0.5)) - f(0.5) * f(H)
    sx = (c * dx - s * dy) + f(0.5) * f(w)
    sy = (s * dx + c * dy) + f(0.5) * f(h)
    i = np.floor(sx - f(0.5)).astype(int)
    j = np.floor(sy - f(0.5)).astype(int)
    alpha = src[..., 3].astype(int)

    def tap(ii, jj):
        inside = (ii >= 0) & (jj >= 0) & (ii < w) & (jj < h)
        return np.where(inside, alpha[np.clip(jj, 0, h - 1), np.clip(ii, 0, w - 1)], bg_a)
    offs = [0, 1] if filt == "bilinear" else [-1, 0, 1, 2]
    taps = np.stack([tap(i + di, j + dj) for dj in offs for di in offs])
    return (taps != taps[0]).any(axis=0), len(offs)


def main(argv):
    rev = argv[1] if len(argv) > 1 else "HEAD"
    known = cases()
    changed_files = 0
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".png"):
            continue
        new_path = os.path.join(HERE, name)
        old = old_bytes(rev, name)
        new = open(new_path, "rb").read()
        if old == new:
            continue
        changed_files += 1
        if old is None:
            print(f"{name}: new file")
            continue
        a = cv2.imdecode(np.frombuffer(old, np.uint8), cv2.IMREAD_UNCHANGED)
        b = cv2.imdecode(np.frombuffer(new, np.uint8), cv2.IMREAD_UNCHANGED)
        if a.shape != b.shape or a.dtype != b.dtype:
            print(f"{name}: shape {a.shape} {a.dtype} -> {b.shape} {b.dtype}")
            continue
        d = np.abs(a.astype(np.int64) - b.astype(np.int64))
        if d.max() == 0:
            print(f"{name}: bytes differ, pixels identical")
            continue
        d3 = d.reshape(a.shape[0], a.shape[1], -1)
        px = d3.max(axis=2) > 0
        chans = 1 if a.ndim == 2 else a.shape[2]
        print(f"{name}: {a.shape[1]}x{a.shape[0]}x{chans}, {int(px.sum())} pixels changed ({int((d > 0).sum())} "
              f"samples), max |diff| {int(d.max())}, mean |diff| over changed samples {d[d > 0].mean():.2f}")
        if chans not in (2, 4):
            continue
        top = 65535 if a.dtype == np.uint16 else 255
        al = b[..., -1]
        part = (al > 0) & (al < top)
        print(f"    output alpha of the changed pixels: {int((px & part).sum())} partly transparent, "
              f"{int((px & (al == 0)).sum())} transparent, {int((px & (al == top)).sum())} opaque; "
              f"alpha itself changed in {int((d3[..., -1] > 0).sum())} pixels")
        case = known.get(name[:-4])
        mixed = rotate_taps(case[0], case[2], a.shape) if case and case[1] == "rotate" else None
        if mixed is not None:
            m, n = mixed
            print(f"    {int(m.sum())} pixels have {n}x{n} taps of different alphas; {int((px & ~m).sum())} changed "
                  f"pixels have not; of the {int((px & (al == top)).sum())} opaque changed pixels "
                  f"{int((px & (al == top) & m).sum())} have")
    print(f"{changed_files} golden file(s) differ from {rev}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

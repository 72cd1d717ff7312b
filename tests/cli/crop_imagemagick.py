"""crop_imagemagick.py — imgpu crop against ImageMagick 6 itself (convert-im6.q16), the reference
its rules name (src/op/crop.c): `crop --size WxH --gravity G` against `convert IN -gravity G
-crop WxH+0+0 +repage OUT`, `crop --trim` against `convert IN -trim +repage OUT` (images whose
border is one colour, the case where ImageMagick's three corner colours agree), at 8 and 16
bits, gray, gray+alpha, RGB and RGBA, odd and even sizes, 1x1 and 1xN. Every sample equal.

    crop_imagemagick.py IMGPU CONVERT TMP

Skipped (77) without CONVERT, numpy or cv2. geom_ops.py's numpy transliteration of the same
rules is the CI oracle; this one adds no coverage of imgpu's code (label oracle-only)."""
import os
import shutil
import subprocess
import sys
import tempfile

if len(sys.argv) != 4:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
imgpu, convert, tmp_root = sys.argv[1:4]
if not os.access(convert, os.X_OK):
    print(f"SKIP: no ImageMagick ({convert})")
    sys.exit(77)
try:
    import cv2
    import numpy as np
except ImportError:
    print("SKIP: this python3 has no numpy / cv2")
    sys.exit(77)

os.makedirs(tmp_root, exist_ok=True)
tmp = tempfile.mkdtemp(prefix="crop_im.", dir=tmp_root)
checks = failures = 0
GRAVITIES = ["northwest", "north", "northeast", "west", "center", "east", "southwest", "south", "southeast"]
IM_GRAVITY = {"northwest": "NorthWest", "north": "North", "northeast": "NorthEast", "west": "West",
              "center": "Center", "east": "East", "southwest": "SouthWest", "south": "South",
              "southeast": "SouthEast"}


def check(cond, what, detail=""):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}" + (f"\n      {detail}" if detail else ""), flush=True)


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


def read(path):
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    return a if a is None or a.ndim == 3 else a[:, :, None]


def compare(a, im_args, imgpu_args, what):
    """a (h x w x c, cv2's channel order) through ImageMagick and imgpu: the same samples."""
    src = os.path.join(tmp, "in.png")
    cv2.imwrite(src, a if a.shape[2] != 1 else a[:, :, 0])
    mine, theirs = os.path.join(tmp, "imgpu.png"), os.path.join(tmp, "im.png")
    for p in (mine, theirs):
        if os.path.exists(p):
            os.remove(p)
    rc1, e1 = run([imgpu, "crop", src, mine, *imgpu_args, "--quiet"])
    # PNG48/PNG64/... keep the depth and the channels as given (ImageMagick would otherwise
    # write a gray-looking crop as gray)
    fmt = {(1, 8): "PNG8", (3, 8): "PNG24", (4, 8): "PNG32", (3, 16): "PNG48", (4, 16): "PNG64"}
    depth = 16 if a.dtype == np.uint16 else 8
    out = f"{fmt[(a.shape[2], depth)]}:{theirs}" if (a.shape[2], depth) in fmt and a.shape[2] != 1 else theirs
    rc2, e2 = run([convert, src, *im_args, "+repage", out])
    got, want = read(mine) if rc1 == 0 else None, read(theirs) if rc2 == 0 else None
    if want is not None and got is not None and want.shape[2] < got.shape[2]:
        want = np.repeat(want, got.shape[2], axis=2)   # ImageMagick wrote gray for gray samples
    if want is not None and got is not None and want.dtype == np.uint8 and got.dtype == np.uint16:
        want = want.astype(np.uint16) * 257   # it wrote 8 bits where that loses nothing (v * 257)
    ok = got is not None and want is not None and got.shape == want.shape and got.dtype == want.dtype and \
        np.array_equal(got, want)
    detail = f"imgpu rc={rc1} {e1.strip()} | convert rc={rc2} {e2.strip()}"
    if got is not None and want is not None and not ok:
        detail += f" | imgpu {got.shape} {got.dtype}, ImageMagick {want.shape} {want.dtype}"
    check(ok, what, detail)


rng = np.random.default_rng(28)
for depth in (8, 16):
    dt = np.uint16 if depth == 16 else np.uint8
    hi = 65535 if depth == 16 else 255
    for c in (1, 3, 4):
        for (h, w) in ((1, 1), (1, 6), (13, 10), (12, 9)) if depth == 8 else ((1, 1), (13, 10)):
            a = rng.integers(0, hi + 1, size=(h, w, c), dtype=np.uint32).astype(dt)
            if c == 4:
                a[:, :, 3] = hi   # opaque: ImageMagick's crop of transparent pixels may zero their colour
            tag = f"{w}x{h} c={c} {depth}-bit"
            sizes = {(1, 1), (w, h), (max(1, w - 3), max(1, h - 4)), (max(1, w // 2), max(1, h - 1))}
            for g in GRAVITIES:
                for (bw, bh) in sorted(sizes):
                    compare(a, ["-gravity", IM_GRAVITY[g], "-crop", f"{bw}x{bh}+0+0"],
                            ["--size", f"{bw}x{bh}", "--gravity", g],
                            f"crop --size {bw}x{bh} --gravity {g} == -gravity {IM_GRAVITY[g]} -crop, {tag}")
            # -trim: noise inside a border of one colour no noise pixel has
            framed = np.empty((h + 6, w + 5, c), dt)
            framed[:] = hi // 3
            if c == 4:
                framed[:, :, 3] = hi
            inner = a.copy()
            inner[:, :, 0][inner[:, :, 0] == hi // 3] = hi // 3 + 1
            framed[4:4 + h, 1:1 + w] = inner
            compare(framed, ["-trim"], ["--trim"], f"crop --trim == -trim, {tag}")
            # a lone pixel unlike the border, off the first row and column (ImageMagick's right
            # and bottom bounds start at 0: a box touching only column 0 is its corner case)
            one = np.empty((h + 4, w + 4, c), dt)
            one[:] = hi // 2
            if c == 4:
                one[:, :, 3] = hi
            one[h // 2 + 2, w // 2 + 1, 0] = hi
            compare(one, ["-trim"], ["--trim"], f"crop --trim of one pixel == -trim, {tag}")

shutil.rmtree(tmp, ignore_errors=True)
print(f"crop_imagemagick: {checks} checks, {failures} failed")
sys.exit(1 if failures else 0)

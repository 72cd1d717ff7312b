"""equalize_formula.py — `imgpu equalize --formula pil|imagemagick` against independent Python
transliterations of PIL's ImageOps.equalize and ImageMagick 6 (Q16) EqualizeImage.

    /usr/bin/python3 tests/cli/equalize_formula.py IMGPU ASSETS WORKDIR [cpu|cuda]

Gray assets and synthetic images, per-channel on color assets; any differing sample fails.
Needs numpy and cv2 (for reading/writing PNGs); exits 77 without them.
"""
import os
import subprocess
import sys

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

IMGPU, ASSETS, WORK = sys.argv[1:4]
DEV = sys.argv[4] if len(sys.argv) > 4 else "cpu"
os.makedirs(WORK, exist_ok=True)


def pil_lut(h):
    # PIL ImageOps.equalize, one 256-entry band (values > 255 are clipped by Image.point)
    histo = [x for x in h if x]
    if len(histo) <= 1:
        return list(range(256))
    step = (sum(histo) - histo[-1]) // 255
    if not step:
        return list(range(256))
    lut, n = [], step // 2
    for i in range(256):
        lut.append(min(255, n // step))
        n += h[i]
    return lut


def im_lut(h):
    # ImageMagick 6 Q16 EqualizeImageChannel on 8-bit data: quanta 257*v, map over 65536
    # entries (only multiples of 257 are populated), ScaleMapToQuantum, ScaleQuantumToChar
    n = sum(h)
    black, white = h[0], n
    if black == white:
        return list(range(256))
    lut, cum = [], 0
    for v in range(256):
        cum += h[v]
        q = (65535.0 * (cum - black)) / (white - black)
        Q = 0 if q <= 0 else 65535 if q >= 65535 else int(q + 0.5)
        lut.append(((Q + 128) - ((Q + 128) >> 8)) >> 8)
    return lut


def ref(img, formula):
    planes = [img] if img.ndim == 2 else [img[:, :, k] for k in range(3)]
    out = []
    for p in planes:
        h = np.bincount(p.ravel(), minlength=256).tolist()
        lut = np.array(pil_lut(h) if formula == "pil" else im_lut(h), np.uint8)
        out.append(lut[p])
    return out[0] if img.ndim == 2 else np.dstack(out)


rng = np.random.default_rng(66)
imgs = {a[:-4]: cv2.imread(os.path.join(ASSETS, a), cv2.IMREAD_UNCHANGED)
        for a in ["camera.png", "clock_motion.png", "brick.png", "chelsea.png", "coffee.png"]}
imgs["noise"] = rng.integers(0, 256, (71, 93), dtype=np.uint8)
imgs["narrow"] = rng.integers(100, 104, (40, 50), dtype=np.uint8)
imgs["few_pixels"] = np.array([[3, 9, 9, 200]], np.uint8)
imgs["constant"] = np.full((9, 9), 77, np.uint8)
imgs["with_black"] = np.where(rng.random((30, 30)) < 0.4, 0, rng.integers(1, 256, (30, 30))).astype(np.uint8)
fails = 0
for name, img in imgs.items():
    for formula in ["pil", "imagemagick"]:
        src = os.path.join(WORK, f"{name}.png")
        dst = os.path.join(WORK, f"{name}.{formula}.png")
        cv2.imwrite(src, img)
        p = subprocess.run([IMGPU, "equalize", src, dst, "--formula", formula, "--mode", "per-channel",
                            "--device", DEV, "--quiet"], capture_output=True, text=True)
        if p.returncode and DEV == "cuda" and "no usable GPU" in p.stderr:
            print("SKIP:", p.stderr.strip())
            sys.exit(77)
        got = cv2.imread(dst, cv2.IMREAD_UNCHANGED)
        want = ref(img, formula)
        ok = p.returncode == 0 and got is not None and np.array_equal(got, want)
        print(f"{'ok  ' if ok else 'FAIL'} {name} --formula {formula} {p.stderr.strip()}")
        fails += not ok
print(f"{fails} failure(s)")
sys.exit(1 if fails else 0)

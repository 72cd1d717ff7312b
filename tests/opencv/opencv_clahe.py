"""opencv_clahe.py — `imgpu clahe` against OpenCV's createCLAHE, and 16-bit PNG I/O against cv2.

    /usr/bin/python3 tests/opencv/opencv_clahe.py IMGPU ASSETS WORKDIR [cpu|cuda]

8-bit gray assets and synthetic images (noise, sizes that are and are not multiples of the
grid — reflect-101 padding —, odd grids, tiny images, constant images, clip 0/1/2/40) against
cv2.createCLAHE(clip, (tx, ty)).apply: every sample within 1 level (OpenCV's 8-bit SIMD
interpolation may round the last bit differently), and at most 1% of the samples off by one.
16-bit gray images (65536 bins) against cv2 on CV_16U, within 1 level. Color: luminance mode
against cvtColor(RGB2YCrCb) -> CLAHE(Y) -> cvtColor(YCrCb2RGB), per-channel against CLAHE of
each channel, within 1 level (Y may differ by 1 and the inverse conversion amplifies it up to
2 in R/B: see the tolerance below). 16-bit PNG and PNM written by imgpu are decoded by
cv2.IMREAD_UNCHANGED and must equal the pixels. Exits 77 without cv2, or for cuda when imgpu
reports no usable GPU.
"""
import os
import subprocess
import sys

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e} (needs Debian's /usr/bin/python3 with python3-opencv, python3-numpy)")
    sys.exit(77)

IMGPU, ASSETS, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
DEV = sys.argv[4] if len(sys.argv) > 4 else "cpu"
os.makedirs(WORK, exist_ok=True)
failures = 0


def run(*args):
    p = subprocess.run([IMGPU, *args, "--device", DEV, "--quiet"], capture_output=True, text=True)
    if p.returncode != 0 and DEV == "cuda" and "no usable GPU" in p.stderr:
        print("SKIP:", p.stderr.strip())
        sys.exit(77)
    return p


def imgpu_clahe(img, name, clip, tiles, mode=None, ext="png"):
    src = os.path.join(WORK, f"{name}.in.{ext}")
    dst = os.path.join(WORK, f"{name}.out.{ext}")
    if not cv2.imwrite(src, img):
        raise SystemExit(f"cv2 cannot write {src}")
    args = ["clahe", src, dst, "--clip", str(clip), "--tiles", f"{tiles[0]}x{tiles[1]}"]
    if mode:
        args += ["--mode", mode]
    p = run(*args)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return cv2.imread(dst, cv2.IMREAD_UNCHANGED), ""


def compare(name, got, want, tol, max_share_off=0.01):
    global failures
    if got is None or got.shape != want.shape or got.dtype != want.dtype:
        print(f"FAIL {name}: shape/dtype {None if got is None else (got.shape, got.dtype)} vs {want.shape, want.dtype}")
        failures += 1
        return
    d = np.abs(got.astype(np.int64) - want.astype(np.int64))
    share = float(np.count_nonzero(d)) / d.size
    ok = d.max() <= tol and share <= max_share_off
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |diff| {d.max()}, {100 * share:.3f}% differ")
    if not ok:
        failures += 1


def cv_clahe(img, clip, tiles):
    return cv2.createCLAHE(clipLimit=clip, tileGridSize=tiles).apply(img)


rng = np.random.default_rng(6)
gray = {}
for a in ["camera.png", "clock_motion.png", "brick.png"]:
    gray[a[:-4]] = cv2.imread(os.path.join(ASSETS, a), cv2.IMREAD_GRAYSCALE)
gray["noise_257x131"] = rng.integers(0, 256, (131, 257), dtype=np.uint8)
gray["dark_noise_96x64"] = rng.integers(10, 40, (64, 96), dtype=np.uint8)
gray["tiny_5x3"] = rng.integers(0, 256, (3, 5), dtype=np.uint8)
gray["constant_90"] = np.full((48, 40), 90, np.uint8)
gray["gradient_1x300"] = np.tile(np.arange(300) % 256, (1, 1)).astype(np.uint8)

cases = [(40, (8, 8)), (2.0, (8, 8)), (1.0, (3, 5)), (0, (4, 4)), (3.5, (7, 2)), (40, (1, 1))]
for name, img in gray.items():
    for clip, tiles in cases:
        if name.startswith("tiny") and tiles[0] > 5:
            continue
        got, err = imgpu_clahe(img, f"{name}_{clip}_{tiles[0]}x{tiles[1]}", clip, tiles)
        if got is None:
            print(f"FAIL {name} clip {clip} tiles {tiles}: {err}")
            failures += 1
            continue
        compare(f"{name} clip {clip} tiles {tiles[0]}x{tiles[1]}", got, cv_clahe(img, clip, tiles), 1)

# 16-bit gray: 65536 bins
g16 = {
    "noise16_200x120": rng.integers(0, 65536, (120, 200), dtype=np.uint16),
    "camera16": (cv2.imread(os.path.join(ASSETS, "camera.png"), cv2.IMREAD_GRAYSCALE).astype(np.uint16) * 257
                 + rng.integers(0, 257, (512, 512))).astype(np.uint16),
    "narrow16_77x53": rng.integers(30000, 30500, (53, 77), dtype=np.uint16),
}
for name, img in g16.items():
    for clip, tiles in [(40, (8, 8)), (2.0, (5, 3)), (0, (2, 2))]:
        got, err = imgpu_clahe(img, f"{name}_{clip}", clip, tiles)
        if got is None:
            print(f"FAIL {name}: {err}")
            failures += 1
            continue
        compare(f"{name} clip {clip} tiles {tiles}", got, cv_clahe(img, clip, tiles), 1)

# color, 8-bit: cv2 works in BGR; imgpu's files are RGB on disk, cv2 reads/writes BGR
for a in ["chelsea.png", "coffee.png"]:
    bgr = cv2.imread(os.path.join(ASSETS, a), cv2.IMREAD_COLOR)
    for clip, tiles in [(40, (8, 8)), (2.0, (6, 4))]:
        got, err = imgpu_clahe(bgr, f"{a}_lum_{clip}", clip, tiles, "luminance")
        ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
        ycc[:, :, 0] = cv_clahe(np.ascontiguousarray(ycc[:, :, 0]), clip, tiles)
        want = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)
        # a 1-level difference in Y moves R and B by up to 1 (Y is added back unscaled)
        compare(f"{a} luminance clip {clip} tiles {tiles}", got, want, 1)
        got, err = imgpu_clahe(bgr, f"{a}_pc_{clip}", clip, tiles, "per-channel")
        want = np.dstack([cv_clahe(np.ascontiguousarray(bgr[:, :, k]), clip, tiles) for k in range(3)])
        compare(f"{a} per-channel clip {clip} tiles {tiles}", got, want, 1)

# 16-bit equalize (the OpenCV formula with 65535 for 255), written as 16-bit PNG / PNM by
# imgpu and decoded by cv2.IMREAD_UNCHANGED: checks the 16-bit loader, the equalization and
# imgpu's own 16-bit PNG encoder (CRCs, deflate, big-endian samples) at once.
def eq16_ref(img):
    out = img.copy()
    planes = [img] if img.ndim == 2 else [img[:, :, k] for k in range(img.shape[2])]
    res = []
    for p in planes:
        h = np.bincount(p.ravel(), minlength=65536).astype(np.int64)
        i0 = int(np.nonzero(h)[0][0])
        n = p.size
        if h[i0] == n:
            res.append(p.copy())
            continue
        cum = np.cumsum(h) - h[i0]
        scale = np.float32(65535.0) / np.float32(n - h[i0])
        lut = np.rint(cum.astype(np.float32) * scale).clip(0, 65535).astype(np.uint16)
        lut[: i0 + 1] = 0
        res.append(lut[p])
    return res[0] if img.ndim == 2 else np.dstack(res)


for ext, chans in [("png", 1), ("png", 3), ("pgm", 1), ("ppm", 3)]:
    shape = (37, 53) if chans == 1 else (37, 53, chans)
    img = (rng.integers(0, 4096, shape) * 16 + 7).astype(np.uint16)  # 12-bit data in 16 bits
    src = os.path.join(WORK, f"io16_{chans}.in.{ext}")
    dst = os.path.join(WORK, f"io16_{chans}.out.{ext}")
    cv2.imwrite(src, img)
    p = run("equalize", src, dst, "--mode", "per-channel")
    back = cv2.imread(dst, cv2.IMREAD_UNCHANGED)
    ok = p.returncode == 0 and back is not None and back.dtype == np.uint16 and np.array_equal(back, eq16_ref(img))
    print(f"{'ok  ' if ok else 'FAIL'} 16-bit equalize, {ext} {chans} channel(s) written by imgpu, read by cv2 {p.stderr.strip()}")
    failures += not ok

print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)

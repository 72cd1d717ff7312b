#!/usr/bin/env python3
"""jpeg_inputs.py — 4K JPEG inputs for the end-to-end benchmarks, made fast, and a check of outputs.

    jpeg_inputs.py make N OUTDIR      N different 3840x2160 q92 4:2:0 JPEGs, photo_0000.jpg ...
    jpeg_inputs.py check DIR N W H    DIR holds exactly N .jpg files, each W x H (from the headers)

make: each file is one of the bundled photos (cropped to 16:9, upscaled to 4K with
cv2.resize(INTER_CUBIC), once per process), mirrored for odd numbers, with a brightness shift
of -25..+25 and a +-3 grain (a row-rolled noise field made once per process), so no two files
are alike; encoded by cv2 at quality 92 (4:2:0: libjpeg's default). One process per core;
files that exist are kept (made once, outside git). About 60 ms a file on one core.
check: reads only each file's SOF marker; exit 1 and a reason on the first mismatch."""
import os
import struct
import sys
from multiprocessing import Pool

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets")
SOURCES = ["coffee.png", "chelsea.png", "astronaut.png", "rocket.jpg", "brick.png", "camera.png"]
_base, _noise = {}, None


def _photo(j):
    import cv2
    if j not in _base:
        src = cv2.imread(os.path.join(ASSETS, SOURCES[j]), cv2.IMREAD_COLOR)
        h, w = src.shape[:2]
        ch = min(h, w * 9 // 16)
        y0 = (h - ch) // 2
        _base[j] = cv2.resize(src[y0:y0 + ch], (3840, 2160), interpolation=cv2.INTER_CUBIC)
    return _base[j]


def _make(args):
    global _noise
    import cv2
    import numpy as np
    i, out = args
    path = os.path.join(out, f"photo_{i:04d}.jpg")
    if os.path.exists(path):
        return
    cv2.setNumThreads(1)
    im = _photo(i % len(SOURCES))
    if i % 2:
        im = cv2.flip(im, 1)
    rng = np.random.default_rng(i)
    if _noise is None:
        _noise = np.random.default_rng(12345).integers(0, 7, im.shape, dtype=np.uint8)
    noise = np.roll(_noise, int(rng.integers(0, im.shape[0])), axis=0)
    im = cv2.subtract(cv2.add(im, noise), (3, 3, 3, 0))   # +-3 grain, saturated
    shift = int(rng.integers(-25, 26))                  # (a bare number would shift channel 0 only)
    sc = (abs(shift),) * 3 + (0,)
    im = cv2.add(im, sc) if shift >= 0 else cv2.subtract(im, sc)
    ok, b = cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 92])
    if not ok:
        raise SystemExit(f"jpeg_inputs: cannot encode {path}")
    with open(path + ".tmp", "wb") as f:
        f.write(b.tobytes())
    os.replace(path + ".tmp", path)


def jpeg_size(path):
    """(width, height) from the first SOF marker."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG")
    p = 2
    while p + 4 <= len(data):
        if data[p] != 0xFF:
            raise ValueError("bad marker")
        m = data[p + 1]
        if m == 0xFF:
            p += 1
            continue
        n = struct.unpack(">H", data[p + 2:p + 4])[0]
        if m in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            h, w = struct.unpack(">HH", data[p + 5:p + 9])
            return w, h
        p += 2 + n
    raise ValueError("no SOF marker in the first 64 KiB")


def check(d, n, w, h):
    files = sorted(f for f in os.listdir(d) if f.lower().endswith(".jpg"))
    if len(files) != n:
        return f"{d}: {len(files)} .jpg files, expected {n}"
    for f in files:
        try:
            size = jpeg_size(os.path.join(d, f))
        except (OSError, ValueError) as e:
            return f"{d}/{f}: {e}"
        if size != (w, h):
            return f"{d}/{f}: {size[0]}x{size[1]}, expected {w}x{h}"
    return None


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        n, out = int(sys.argv[2]), sys.argv[3]
        os.makedirs(out, exist_ok=True)
        with Pool(os.cpu_count()) as p:
            p.map(_make, [(i, out) for i in range(n)], chunksize=4)
    elif len(sys.argv) == 6 and sys.argv[1] == "check":
        why = check(sys.argv[2], *map(int, sys.argv[3:6]))
        if why:
            print(f"jpeg_inputs: check failed: {why}", file=sys.stderr)
            sys.exit(1)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)

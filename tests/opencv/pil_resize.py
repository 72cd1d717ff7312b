"""pil_resize.py — imgpu resize --antialias against Pillow's Image.resize (oracle-only).

    pil_resize.py IMGPU ASSETS WORKDIR cpu|cuda

--antialias is Pillow's ImagingResample: bilinear, bicubic (a = -0.5), lanczos (a = 3) and box
(imgpu's area), support widened by the scale. Photos without alpha, 8-bit gray and RGB, down
and up, odd sizes and ratios, one side kept, 1xN / Nx1, and random crops at random sizes:
within 1 level of Pillow with the same filter (the bound the issue sets; the counts of exact
samples are printed; on Debian 12's Pillow 9.4 every 8-bit sample is equal). 16 bits: Pillow 9
resizes 16-bit images only as mode "I" (int32 with double weights, each pass rounded half away
from 0); imgpu keeps its 22-bit weights: bilinear and box within 1, bicubic and lanczos within
2 (a 1-level difference of the intermediate meets the negative lobes: 9 of ~1.3 M samples of
camera16 at 2, 2026-11-27).
Exits 77 for cuda when imgpu reports no usable GPU, and without PIL.
"""
import os
import random
import sys

import numpy as np

try:
    from PIL import Image
except ImportError:
    print("SKIP: /usr/bin/python3 without PIL (apt-get install python3-pil)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import opencv_ref  # noqa: E402

PIL_FILTER = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS, "area": Image.BOX}
TOL8 = 1
TOL16 = {"bilinear": 1, "area": 1, "bicubic": 2, "lanczos": 2}


def load(path, mode):
    im = Image.open(path)
    if mode == "L16":
        a = np.asarray(im)
        if a.dtype != np.uint16:
            a = a.astype(np.uint16) * 257
        if a.ndim == 3:
            a = a[..., 0]
        return a
    return np.asarray(im.convert(mode))


def pil_resize(a, size, f):
    if a.dtype == np.uint16:
        im = Image.fromarray(a.astype(np.int32), "I")
        r = np.asarray(im.resize(size, PIL_FILTER[f]))
        return np.clip(r, 0, 65535).astype(np.uint16)
    return np.asarray(Image.fromarray(a).resize(size, PIL_FILTER[f]))


def main():
    imgpu, assets, work, dev = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    fails = checks = 0
    exact = {}

    def run(a, args):
        src = os.path.join(work, "in.png")
        out = os.path.join(work, "out.png")
        Image.fromarray(a).save(src)  # uint16: an I;16 PNG
        try:
            opencv_ref.run_imgpu(imgpu, ["resize", src, out, "--antialias"] + args, dev)
        except opencv_ref.NoGPU as e:
            print(f"SKIP: {e}")
            sys.exit(77)
        got = np.asarray(Image.open(out))
        if a.dtype == np.uint16:
            got = got.astype(np.uint16)
        return got

    def case(label, a, size, f):
        nonlocal fails, checks
        checks += 1
        got = run(a, ["--size", f"{size[0]}x{size[1]}", "--filter", f])
        ref = pil_resize(a, size, f)
        if got.shape != ref.shape:
            print(f"FAIL {label}: shape {got.shape} != Pillow {ref.shape}")
            fails += 1
            return
        d = np.abs(got.astype(np.int64) - ref.astype(np.int64))
        key = (f, a.dtype.itemsize * 8)
        e = exact.setdefault(key, [0, 0])
        e[0] += int((d == 0).sum())
        e[1] += d.size
        tol = TOL16[f] if a.dtype == np.uint16 else TOL8
        if d.max() > tol:
            print(f"FAIL {label}: max diff {d.max()} (> {tol}), {(d > tol).sum()} samples")
            fails += 1

    photos = [("chelsea.png", "RGB"), ("camera.png", "L"), ("coffee.png", "RGB"), ("camera16.png", "L16")]
    rng = random.Random(28)
    for name, mode in photos:
        a = load(os.path.join(assets, name), mode)
        h, w = a.shape[:2]
        sizes = [(w // 2, h // 2), (w // 3 + 1, h // 5 + 2), (int(w * 0.37), int(h * 0.41)), (w * 2 + 1, h * 3 // 2),
                 (w + 7, h - 3), (w, h // 4), (w // 4, h), (1, 1), (1, h // 3), (w // 3, 1), (17, 13)]
        for f in PIL_FILTER:
            for size in sizes:
                case(f"{name} {mode} {w}x{h}->{size[0]}x{size[1]} {f}", a, size, f)
        # random crops at random sizes (odd ratios, up and down)
        for k in range(6):
            cw, ch = rng.randint(1, min(w, 160)), rng.randint(1, min(h, 160))
            x0, y0 = rng.randint(0, w - cw), rng.randint(0, h - ch)
            crop = np.ascontiguousarray(a[y0:y0 + ch, x0:x0 + cw])
            size = (rng.randint(1, 2 * cw + 3), rng.randint(1, 2 * ch + 3))
            f = rng.choice(list(PIL_FILTER))
            case(f"{name} crop {cw}x{ch}+{x0}+{y0} ->{size[0]}x{size[1]} {f}", crop, size, f)
    for (f, bits), (n0, n) in sorted(exact.items()):
        print(f"{f} {bits}-bit: {n0}/{n} samples equal to Pillow ({100.0 * n0 / max(n, 1):.3f}%)")
    print(f"{checks} comparisons, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

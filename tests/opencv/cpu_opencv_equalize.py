#!/usr/bin/python3
"""cpu_opencv_equalize.py — the CPU equalize against OpenCV, bit for bit:
  - gray: cv2.equalizeHist on random images (full range, narrow range, two-level, tiny and
    odd shapes, constant) and on the gray assets;
  - per-channel mode: cv2.equalizeHist on each of R, G, B;
  - luminance mode: cv2.cvtColor(RGB2YCrCb) -> equalizeHist(Y) -> cvtColor(YCrCb2RGB), on
    random and asset color images; RGBA and gray+alpha keep alpha untouched;
  - a color image of constant Y comes back unchanged (the documented exception: OpenCV's
    pipeline would still apply its lossy YCrCb round trip).
Drives imgpu_cpu_equalize through test_cpu_driver. Exits 77 (skipped) without cv2.

usage: cpu_opencv_equalize.py TEST_CPU_DRIVER ASSETS_DIR
"""
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

DRIVER = None
TMP = None
failures = 0
checks = 0


def run_equalize(img, mode):
    """img: HxW or HxWxC uint8 in imgpu channel order; returns the driver's output."""
    h, w = img.shape[:2]
    c = 1 if img.ndim == 2 else img.shape[2]
    src, dst = os.path.join(TMP, "in.raw"), os.path.join(TMP, "out.raw")
    np.ascontiguousarray(img).tofile(src)
    subprocess.run([DRIVER, "equalize", str(w), str(h), str(c), mode, src, dst], check=True)
    return np.fromfile(dst, dtype=np.uint8).reshape(img.shape)


def check(name, ours, ref):
    global failures, checks
    checks += 1
    if ours.shape != ref.shape or not np.array_equal(ours, ref):
        failures += 1
        diff = np.argwhere(ours != ref) if ours.shape == ref.shape else []
        print(f"FAIL {name}: {len(diff)} samples differ; first {[tuple(d) for d in diff[:3]]}")
    else:
        print(f"ok   {name}")


def cv_luminance(rgb):
    ycc = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)
    ycc[:, :, 0] = cv2.equalizeHist(np.ascontiguousarray(ycc[:, :, 0]))
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)


def cv_per_channel(rgb):
    return np.stack([cv2.equalizeHist(np.ascontiguousarray(rgb[:, :, k])) for k in range(3)],
                    axis=-1)


def load_rgb(path):
    im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if im.ndim == 3 and im.shape[2] == 3:
        return cv2.cvtColor(im, cv2.COLOR_BGR2RGB)
    if im.ndim == 3 and im.shape[2] == 4:
        return cv2.cvtColor(im, cv2.COLOR_BGRA2RGBA)
    return im


def gray_cases(rng):
    yield "random 64x48", rng.integers(0, 256, (48, 64), dtype=np.uint8)
    yield "narrow 90..140 odd 451x37", rng.integers(90, 141, (37, 451), dtype=np.uint8)
    yield "two-level", np.where(rng.random((20, 30)) < 0.3, 40, 200).astype(np.uint8)
    yield "1x1", np.array([[17]], dtype=np.uint8)
    yield "1xN", rng.integers(0, 256, (1, 257), dtype=np.uint8)
    yield "Nx1", rng.integers(0, 256, (301, 1), dtype=np.uint8)
    yield "constant", np.full((9, 7), 123, dtype=np.uint8)
    yield "all-255", np.full((4, 4), 255, dtype=np.uint8)
    yield "ramp", np.tile(np.arange(256, dtype=np.uint8), (3, 1))
    # skewed counts: many exact half-way products (scale = 255 / 510 = 0.5)
    yield "half-way", np.concatenate([[0], np.full(253, 1), np.full(257, 2)]).astype(np.uint8)[None, :]
    yield "large skewed 640x480", (rng.random((480, 640)) ** 3 * 255).astype(np.uint8)


def main():
    global DRIVER, TMP
    DRIVER, assets = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(601)
    with tempfile.TemporaryDirectory() as tmp:
        TMP = tmp
        # gray
        for name, g in gray_cases(rng):
            ref = cv2.equalizeHist(g)
            check(f"gray {name}", run_equalize(g, "luminance"), ref)
            check(f"gray {name} (per-channel)", run_equalize(g, "per-channel"), ref)
        gray_assets = ["camera.png", "clock_motion.png", "brick.png"]
        for f in gray_assets:
            g = load_rgb(os.path.join(assets, f))
            out = run_equalize(g, "luminance")
            check(f"gray asset {f}", out, cv2.equalizeHist(g))
        # invariant: equalization raises contrast on the low-contrast photo
        g = load_rgb(os.path.join(assets, "clock_motion.png"))
        global checks, failures
        checks += 1
        s0, s1 = float(g.std()), float(run_equalize(g, "luminance").std())
        if s1 < s0:
            failures += 1
            print(f"FAIL clock_motion contrast: std {s0:.2f} -> {s1:.2f}")
        else:
            print(f"ok   clock_motion contrast: std {s0:.2f} -> {s1:.2f}")

        # color
        color = [("random 65x33", rng.integers(0, 256, (33, 65, 3), dtype=np.uint8)),
                 ("low-contrast 200x150",
                  (rng.integers(100, 140, (150, 200, 1)) + rng.integers(-8, 9, (150, 200, 3)))
                  .astype(np.uint8)),
                 ("1xN", rng.integers(0, 256, (1, 97, 3), dtype=np.uint8)),
                 ("Nx1", rng.integers(0, 256, (97, 1, 3), dtype=np.uint8))]
        for f in ["astronaut.png", "coffee.png", "chelsea.png", "rocket.jpg"]:
            color.append((f, load_rgb(os.path.join(assets, f))))
        for name, rgb in color:
            check(f"luminance {name}", run_equalize(rgb, "luminance"), cv_luminance(rgb))
            check(f"per-channel {name}", run_equalize(rgb, "per-channel"), cv_per_channel(rgb))
        a = load_rgb(os.path.join(assets, "astronaut.png"))
        checks += 1
        if np.array_equal(run_equalize(a, "luminance"), run_equalize(a, "per-channel")):
            failures += 1
            print("FAIL luminance and per-channel agree on a color photo")

        # alpha passes through; color equals the RGB result
        horse = load_rgb(os.path.join(assets, "horse.png"))
        assert horse.shape[2] == 4
        for mode, ref in [("luminance", cv_luminance), ("per-channel", cv_per_channel)]:
            out = run_equalize(horse, mode)
            check(f"RGBA horse {mode}: alpha", out[:, :, 3], horse[:, :, 3])
            check(f"RGBA horse {mode}: color", out[:, :, :3],
                  ref(np.ascontiguousarray(horse[:, :, :3])))
        ga = np.stack([rng.integers(30, 90, (40, 50)), rng.integers(0, 256, (40, 50))],
                      axis=-1).astype(np.uint8)
        out = run_equalize(ga, "luminance")
        check("gray+alpha: alpha", out[:, :, 1], ga[:, :, 1])
        check("gray+alpha: gray", out[:, :, 0], cv2.equalizeHist(np.ascontiguousarray(ga[:, :, 0])))

        # constant Y: unchanged (OpenCV's round trip would alter some pixels)
        k = np.arange(1 << 24, dtype=np.uint32)
        trip = np.stack([k >> 16, (k >> 8) & 255, k & 255], -1).astype(np.uint8).reshape(4096, 4096, 3)
        ycc = cv2.cvtColor(trip, cv2.COLOR_RGB2YCrCb)
        sel = trip[(ycc[:, :, 0] == 100)][:4000]  # colors that all have Y = 100
        img = np.ascontiguousarray(sel.reshape(40, 100, 3))
        check("constant Y returned unchanged", run_equalize(img, "luminance"), img)
        lossy = int(np.any(cv_luminance(img) != img, axis=-1).sum())
        print(f"     (OpenCV's pipeline would change {lossy} of {img.shape[0] * img.shape[1]} of those pixels)")
    print(f"{checks} checks, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""opencv_equalize.py — `imgpu equalize` against OpenCV, bit for bit.

    /usr/bin/python3 tests/opencv/opencv_equalize.py IMGPU ASSETS WORKDIR [cpu|cuda]

Gray assets and synthetic gray images (noise, narrow and skewed histograms, constant images,
two-level images, 1x1 and one-row images) against cv2.equalizeHist; color assets and synthetic
RGB / RGBA images against the YCrCb pipeline (luminance) and equalizeHist per channel
(per-channel). Any differing sample fails. Exits 77 when cv2 is missing or, for cuda, when
imgpu reports that no usable GPU is present.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))  # opencv_ref
try:
    import numpy as np
    import opencv_ref as ref
except ImportError as e:  # cv2 or numpy missing: skipped, never silently passed
    if e.name not in ("cv2", "numpy"):   # a missing opencv_ref is a broken test, not a skip
        raise
    print(f"SKIP: {e} (needs Debian's /usr/bin/python3 with python3-opencv, python3-numpy)")
    sys.exit(77)


def synthetic():
    rng = np.random.default_rng(20261122)
    g = {}
    g["noise_257x131"] = rng.integers(0, 256, (131, 257), dtype=np.uint8)
    g["narrow_100_110"] = rng.integers(100, 111, (64, 97), dtype=np.uint8)
    g["skewed"] = np.where(rng.random((80, 80)) < 0.9, 200, rng.integers(0, 256, (80, 80))).astype(np.uint8)
    g["constant_0"] = np.zeros((33, 47), np.uint8)
    g["constant_77"] = np.full((33, 47), 77, np.uint8)
    g["constant_255"] = np.full((33, 47), 255, np.uint8)
    g["two_level_0_255"] = np.where(rng.random((50, 61)) < 0.3, 0, 255).astype(np.uint8)
    g["two_level_50_51"] = np.where(rng.random((50, 61)) < 0.7, 50, 51).astype(np.uint8)
    g["one_outlier"] = np.full((40, 40), 10, np.uint8)
    g["one_outlier"][17, 23] = 200
    g["gradient_256x3"] = np.tile(np.arange(256, dtype=np.uint8), (3, 1))
    g["single_pixel"] = np.array([[123]], np.uint8)
    g["one_row_1000"] = rng.integers(0, 256, (1, 1000), dtype=np.uint8)
    c = {}
    c["noise_rgb_129x67"] = rng.integers(0, 256, (67, 129, 3), dtype=np.uint8)
    c["dark_rgb"] = rng.integers(0, 60, (45, 70, 3), dtype=np.uint8)
    c["constant_rgb"] = np.full((20, 30, 3), (10, 200, 90), np.uint8)
    # Constant Y, varying chroma, colors the YCrCb round trip does not preserve: luminance
    # mode must return it unchanged (the documented constant-Y exception).
    c["constant_y_lossy"] = np.array([[[160, 47, 212], [35, 148, 23], [100, 73, 235]] * 5] * 7, np.uint8)
    rgba = rng.integers(0, 256, (59, 83, 4), dtype=np.uint8)
    c["noise_rgba_83x59"] = rgba
    return g, c


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    imgpu, assets, work = argv[1:4]
    device = argv[4] if len(argv) == 5 else "cpu"
    os.makedirs(work, exist_ok=True)
    gray, color = synthetic()
    cases = []  # (name, input path, mode or None)
    for a in ("camera", "clock_motion", "brick"):
        cases.append((a, os.path.join(assets, a + ".png"), None))
    for a in ("astronaut", "coffee", "chelsea", "horse"):
        for mode in ("luminance", "per-channel"):
            cases.append((a, os.path.join(assets, a + ".png"), mode))
    for name, im in gray.items():
        p = os.path.join(work, f"in_{name}.png")
        ref.write(p, im, level=1)
        cases.append((name, p, None))
    for name, im in color.items():
        p = os.path.join(work, f"in_{name}.png")
        ref.write(p, im, level=1)
        for mode in ("luminance", "per-channel"):
            cases.append((name, p, mode))

    # Which process computes each case. cpu: one `imgpu equalize` per case. cuda: one CUDA
    # context per process is most of the cost on a GPU machine, so every case of one mode runs
    # in ONE `imgpu batch --device cuda --equalize [--mode M]` (the same ops, pixel for pixel:
    # tests/batch/batch_gpu.py), except SINGLE, which keep `imgpu equalize --device cuda` covered.
    SINGLE = {("camera", None), ("noise_rgba_83x59", "per-channel")}
    produced = {}  # (path, mode) -> (output path, why missing)
    try:
        if device == "cuda":
            for mode in sorted({m for _, _, m in cases}, key=str):
                todo = [p for n, p, m in cases if m == mode and (n, m) not in SINGLE]
                ops = ["--equalize"] + (["--mode", mode] if mode else [])
                outs, bp = ref.run_batch(imgpu, os.path.join(work, f"batch.{mode or 'gray'}.{device}"),
                                         todo, ops, device)
                for p, o in outs.items():
                    produced[(p, mode)] = (o, bp.stderr.strip())
        for name, path, mode in cases:
            if (path, mode) in produced:
                continue
            out = os.path.join(work, f"{name}.{mode or 'gray'}.{device}.png")
            args = ["equalize", path, out] + (["--mode", mode] if mode else [])
            try:
                ref.run_imgpu(imgpu, args, device)
                produced[(path, mode)] = (out, "")
            except RuntimeError as e:
                produced[(path, mode)] = (None, str(e))
    except ref.NoGPU as e:
        print(f"SKIP: no usable GPU: {e}")
        return ref.SKIP

    failures = 0
    for name, path, mode in cases:
        tag = name + (f" --mode {mode}" if mode else "")
        out, why = produced[(path, mode)]
        if out is None or not os.path.exists(out):
            print(f"FAIL {tag}: no output ({out}): {why}")
            failures += 1
            continue
        src = ref.read(path)
        want = ref.equalize(src, mode or "luminance")
        got = ref.read(out)
        if got.shape != want.shape:
            print(f"FAIL {tag}: shape {got.shape}, OpenCV {want.shape}")
            failures += 1
            continue
        d = np.abs(got.astype(int) - want.astype(int))
        if d.max() == 0:
            print(f"ok   {tag}: identical to OpenCV ({src.shape})")
            os.remove(out)
            continue
        failures += 1
        bad = np.argwhere(d.reshape(d.shape[0], d.shape[1], -1).max(axis=2) > 0)
        print(f"FAIL {tag}: {len(bad)} pixels differ from OpenCV, max |diff| {d.max()}; "
              f"imgpu output kept at {out}")
        for y, x in bad[:5]:
            print(f"       at (x={x}, y={y}): input {src[y, x]}, imgpu {got[y, x]}, OpenCV {want[y, x]}")
    print(f"{len(cases)} cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

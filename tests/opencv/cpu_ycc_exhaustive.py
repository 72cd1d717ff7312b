#!/usr/bin/python3
"""cpu_ycc_exhaustive.py — proves imgpu_cpu_rgb_to_ycbcr / imgpu_cpu_ycbcr_to_rgb equal OpenCV's
8-bit cvtColor(COLOR_RGB2YCrCb) / cvtColor(COLOR_YCrCb2RGB) on every one of the 2^24 inputs in
each direction. Run with Debian's /usr/bin/python3 (it has cv2); exits 77 (skipped) without cv2.

usage: cpu_ycc_exhaustive.py TEST_CPU_DRIVER
"""
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
except ImportError as e:  # skipped, not passed
    print(f"skip: {e}")
    sys.exit(77)


def all_triples():
    """4096x4096x3 image whose pixel k = (k >> 16, (k >> 8) & 255, k & 255)."""
    k = np.arange(1 << 24, dtype=np.uint32)
    t = np.stack([(k >> 16) & 255, (k >> 8) & 255, k & 255], axis=-1).astype(np.uint8)
    return t.reshape(4096, 4096, 3)


def report(name, ours, ref, inputs):
    bad = np.any(ours != ref, axis=-1)
    n = int(bad.sum())
    if n:
        idx = np.argwhere(bad)[:5]
        for y, x in idx:
            print(f"{name}: input {inputs[y, x].tolist()}: imgpu {ours[y, x].tolist()} "
                  f"opencv {ref[y, x].tolist()}")
        print(f"{name}: {n} of {bad.size} inputs differ")
    else:
        print(f"{name}: all {bad.size} inputs equal")
    return n


def main():
    driver = sys.argv[1]
    cv2.setNumThreads(2)
    with tempfile.TemporaryDirectory() as tmp:
        fwd, inv = os.path.join(tmp, "fwd.raw"), os.path.join(tmp, "inv.raw")
        subprocess.run([driver, "ycc", fwd, inv], check=True)
        ours_fwd = np.fromfile(fwd, dtype=np.uint8).reshape(4096, 4096, 3)
        ours_inv = np.fromfile(inv, dtype=np.uint8).reshape(4096, 4096, 3)
    src = all_triples()
    # Forward: input channels R, G, B (imgpu's order, what COLOR_RGB2YCrCb reads);
    # output Y, Cr, Cb.
    bad = report("RGB -> YCrCb", ours_fwd, cv2.cvtColor(src, cv2.COLOR_RGB2YCrCb), src)
    # Inverse: input Y, Cr, Cb; output R, G, B.
    bad += report("YCrCb -> RGB", ours_inv, cv2.cvtColor(src, cv2.COLOR_YCrCb2RGB), src)
    # The Y used for the histogram and the luma bins is the Y of the forward conversion; the
    # gray conversion in OpenCV (COLOR_RGB2GRAY) is a different rounding and must not be used.
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""opencv_clahe.py — OpenCV's CPU CLAHE as a peer row of `imgpu bench` (bench_full.c runs it).

usage: opencv_clahe.py IMAGE.png SIZE CONTENT CHANNELS DEPTH [--csv]
Times cv2.createCLAHE(clipLimit=40, tileGridSize=(8, 8)).apply on IMAGE (gray; for RGB the
luminance pipeline cvtColor -> CLAHE on Y -> cvtColor, what `imgpu clahe` does), with
time.perf_counter: 3 warm-up calls, then the median of 15 (throughput: batches of 10 calls / 10,
latency: single calls). cv2's own thread pool (all cores) as OpenCV ships it. Prints one row
in bench.c's table format."""
import statistics
import sys
import time

import cv2
import numpy as np


def main():
    path, size, content, ch, depth = sys.argv[1:6]
    csv = "--csv" in sys.argv
    img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if img is None:
        print(f"opencv_clahe.py: cannot read {path}", file=sys.stderr)
        return 1
    clahe = cv2.createCLAHE(clipLimit=40.0, tileGridSize=(8, 8))
    color = img.ndim == 3

    def op():
        if not color:
            return clahe.apply(img)
        ycc = cv2.cvtColor(img, cv2.COLOR_BGR2YCrCb)
        ycc[:, :, 0] = clahe.apply(np.ascontiguousarray(ycc[:, :, 0]))
        return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)

    for _ in range(3):
        op()
    thr, lat = [], []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(10):
            op()
        thr.append((time.perf_counter() - t0) / 10 * 1e6)
    for _ in range(15):
        t0 = time.perf_counter()
        op()
        lat.append((time.perf_counter() - t0) * 1e6)
    t, l = statistics.median(thr), statistics.median(lat)
    nbytes = img.nbytes
    gbs = 2 * nbytes / (t * 1e-6) / 1e9
    image = f"{'gray' if not color else 'RGB'} {depth}-bit"
    variant = f"OpenCV {cv2.__version__} createCLAHE.apply (CPU, {cv2.getNumThreads()} threads, perf_counter)"
    if csv:
        print(f"{size},{image},{content},clahe 40 8x8,{variant},{t:.2f},{l:.2f},{gbs:.1f},")
    else:
        print(f"| {size} | {image} | {content} | clahe 40 8x8 | {variant} | {t:.2f} | {l:.2f} | {gbs:.0f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

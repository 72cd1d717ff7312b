#!/usr/bin/env python3
"""cpu_opencv.py — OpenCV's CPU functions on the same inputs as bench/cpu_ops.c, timed alone
with time.perf_counter: cv2.equalizeHist, cv2.createCLAHE(40, (8, 8)).apply and
cv2.warpAffine by 30 degrees about ((w-1)/2, (h-1)/2), same size (imgpu's --crop),
INTER_LINEAR / INTER_CUBIC, BORDER_CONSTANT; cv2.calcHist per channel; cv2.rotate by 90
degrees (imgpu bench's CPU table, bench/bench_cpu.c, also runs this script). RGB rows equalize / CLAHE the luminance as imgpu
does: cvtColor(BGR2YCrCb) -> op on Y -> cvtColor(YCrCb2BGR). cv2.setNumThreads(THREADS),
default os.cpu_count() (all cores). Trap: setNumThreads(0) does NOT mean all cores — OpenCV
documents 0 as "run sequentially", and OpenCV 4.6 here times the same at 0 as at 1.
One warm-up, median of N.

    /usr/bin/python3 bench/cpu_opencv.py GRAY.png RGB.png N [THREADS]
Prints "op<TAB>median seconds<TAB>min seconds" lines, as cpu_ops does; '-' for GRAY.png or
RGB.png leaves that kind out."""
import os
import statistics
import sys
import time

import cv2
import numpy as np


def main():
    gray_path, rgb_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cv2.setNumThreads(int(sys.argv[4]) if len(sys.argv) > 4 else os.cpu_count())
    clahe = cv2.createCLAHE(clipLimit=40.0, tileGridSize=(8, 8))
    for path, kind in ((gray_path, "gray"), (rgb_path, "rgb")):
        if path == "-":   # that kind is not timed
            continue
        img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        h, w = img.shape[:2]
        m = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), 30, 1.0)

        def lum(f):
            if img.ndim == 2:
                return f(img)
            ycc = cv2.cvtColor(img, cv2.COLOR_BGR2YCrCb)
            ycc[:, :, 0] = f(np.ascontiguousarray(ycc[:, :, 0]))
            return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)

        ops = [("equalize", lambda: lum(cv2.equalizeHist)),
               ("clahe", lambda: lum(clahe.apply)),
               ("rotate30_bilinear", lambda: cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR,
                                                            borderMode=cv2.BORDER_CONSTANT)),
               ("rotate30_bicubic", lambda: cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_CUBIC,
                                                           borderMode=cv2.BORDER_CONSTANT)),
               ("histogram", lambda: [cv2.calcHist([img], [ch], None, [256], [0, 256])
                                      for ch in range(1 if img.ndim == 2 else img.shape[2])]),
               ("rotate90", lambda: cv2.rotate(img, cv2.ROTATE_90_COUNTERCLOCKWISE))]
        for name, op in ops:
            op()
            t = []
            for _ in range(n):
                t0 = time.perf_counter()
                op()
                t.append(time.perf_counter() - t0)
            print(f"{kind}_{name}\t{statistics.median(t):.6f}\t{min(t):.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

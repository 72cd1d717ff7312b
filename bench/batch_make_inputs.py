#!/usr/bin/env python3
"""batch_make_inputs.py N OUTDIR — N different 3840x2160 photos as PNG for the batch benchmark:
each a bundled asset (cropped to 16:9) upscaled with cv2.resize(INTER_CUBIC), then varied (flip,
brightness shift, +-3 noise) so no two files are alike; OpenCV's default PNG settings. Uses every
core; skips files that already exist (made once, outside git: under a build folder)."""
import os
import sys
from multiprocessing import Pool

import cv2
import numpy as np

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets")
SOURCES = ["coffee.png", "chelsea.png", "astronaut.png", "rocket.jpg", "brick.png", "camera.png"]


def make(args):
    i, out = args
    path = os.path.join(out, f"photo_{i:04d}.png")
    if os.path.exists(path):
        return
    src = cv2.imread(os.path.join(ASSETS, SOURCES[i % len(SOURCES)]), cv2.IMREAD_COLOR)
    h, w = src.shape[:2]
    ch = min(h, w * 9 // 16)
    y0 = (h - ch) // 2
    im = cv2.resize(src[y0:y0 + ch], (3840, 2160), interpolation=cv2.INTER_CUBIC)
    rng = np.random.default_rng(i)
    if i % 2:
        im = im[:, ::-1]
    im = im.astype(np.int16) + int(rng.integers(-25, 26)) + rng.integers(-3, 4, im.shape)
    cv2.imwrite(path + ".tmp.png", np.clip(im, 0, 255).astype(np.uint8))
    os.replace(path + ".tmp.png", path)


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with Pool(os.cpu_count()) as p:
        p.map(make, [(i, out) for i in range(n)])

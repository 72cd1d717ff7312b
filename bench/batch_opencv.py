#!/usr/bin/env python3
"""batch_opencv.py INDIR OUTDIR [PROCS] [--jpg] [--op equalize|clahe|eqrot|resize] — the peer: a Python/OpenCV loop on every core doing
what `imgpu batch --equalize` does (luminance mode: YCrCb, equalizeHist on Y, back), reading and
writing PNG with OpenCV's default (zlib level 1, run-length strategy: imgpu's default too), one
process per core (cv2.setNumThreads(1) in each, so the cores are not oversubscribed). --op resize:
`imgpu batch --resize --fit 1920x1080 --filter area`'s peer, cv2.resize(INTER_AREA) to the largest
size within 1920x1080 that keeps the aspect ratio (sides rounded), no colour conversion. With --jpg:
the .jpg files of INDIR to JPEG at quality 92, 4:2:0 (libjpeg-turbo, as imgpu's defaults).
Prints images/s."""
import os
import sys
import time
from multiprocessing import Pool

import cv2


def init():
    cv2.setNumThreads(1)


JPG = [cv2.IMWRITE_JPEG_QUALITY, 92]  # 4:2:0: libjpeg's default (Debian's cv2 4.6 has no sampling flag)


OP = "equalize"   # --op equalize | clahe | eqrot (equalize, then rotate 15 degrees, bilinear, expand) | resize
FIT = (1920, 1080)


def fit(w, h):
    s = min(FIT[0] / w, FIT[1] / h)
    return max(1, round(w * s)), max(1, round(h * s))


def one(args):
    src, dst = args
    im = cv2.imread(src, cv2.IMREAD_UNCHANGED)
    if OP == "resize":
        im = cv2.resize(im, fit(im.shape[1], im.shape[0]), interpolation=cv2.INTER_AREA)
        cv2.imwrite(dst, im, JPG if dst.endswith(".jpg") else [])
        return
    ycc = cv2.cvtColor(im, cv2.COLOR_BGR2YCrCb)
    if OP == "clahe":   # imgpu's defaults: clip 40, 8x8 tiles, on luma
        ycc[:, :, 0] = cv2.createCLAHE(40.0, (8, 8)).apply(ycc[:, :, 0])
    else:
        ycc[:, :, 0] = cv2.equalizeHist(ycc[:, :, 0])
    im = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)
    if OP == "eqrot":
        h, w = im.shape[:2]
        m = cv2.getRotationMatrix2D((w / 2, h / 2), 15, 1.0)
        c, s = abs(m[0, 0]), abs(m[0, 1])
        nw, nh = int(h * s + w * c + 0.5), int(h * c + w * s + 0.5)
        m[0, 2] += nw / 2 - w / 2
        m[1, 2] += nh / 2 - h / 2
        im = cv2.warpAffine(im, m, (nw, nh), flags=cv2.INTER_LINEAR)
    cv2.imwrite(dst, im, JPG if dst.endswith(".jpg") else [])


if __name__ == "__main__":
    jpg = "--jpg" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--jpg"]
    if "--op" in args:
        k = args.index("--op")
        OP = args[k + 1]
        del args[k:k + 2]
    src, out = args[0], args[1]
    procs = int(args[2]) if len(args) > 2 else os.cpu_count()
    os.makedirs(out, exist_ok=True)
    files = sorted(f for f in os.listdir(src) if f.endswith(".jpg" if jpg else ".png"))
    t0 = time.perf_counter()
    with Pool(procs, initializer=init) as p:
        p.map(one, [(os.path.join(src, f), os.path.join(out, f)) for f in files], chunksize=1)
    el = time.perf_counter() - t0
    print(f"opencv_loop: {len(files)} images in {el:.2f} s: {len(files) / el:.3f} images/s ({procs} processes)")

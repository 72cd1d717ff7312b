#!/usr/bin/env python3
"""resize_cpu.py — resize on the CPU (issue 28, "Speed"): imgpu's module (device="cpu", all
cores) against cv2.resize on the same numpy arrays, 4K -> 1080p and 1080p -> 4K, RGB 8-bit,
bilinear / bicubic / area (+ imgpu --antialias and Pillow's Image.resize, the same filter), the
median of N runs (in-memory, no I/O; imgpu and cv2 run alternately, so that on a shared machine
both see the same load). vips is timed as a command (`vips resize`, `vips
thumbnail`) on a PNG-free .v file, so its times include vips's start-up and its .v read/write:
they are an end-to-end bound, not a kernel time (stated in each row).

    PYTHONPATH=build/python /usr/bin/python3 bench/resize_cpu.py [--n 7] [--no-vips] [--threads N]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import cv2
import numpy as np

import imgpu

HERE = os.path.dirname(os.path.abspath(__file__))


def photo(w, h):
    src = cv2.imread(os.path.join(HERE, "..", "assets", "coffee.png"), cv2.IMREAD_COLOR)
    im = cv2.resize(src, (w, h), interpolation=cv2.INTER_CUBIC).astype(np.int16)
    rng = np.random.default_rng(1)
    return np.clip(im + rng.integers(-2, 3, im.shape), 0, 255).astype(np.uint8)


def med_pair(fa, fb, n):
    """Medians of fa and fb run alternately (a, b, a, b, ...): on a shared machine both see
    the same load."""
    fa()
    fb()
    ta, tb = [], []
    for _ in range(n):
        for fn, ts in ((fa, ta), (fb, tb)):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return statistics.median(ta) * 1e3, statistics.median(tb) * 1e3


def med(fn, n):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=7)
    ap.add_argument("--no-vips", action="store_true", help="skip the vips commands")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads for imgpu (IMGPU_CPU_THREADS) and cv2 (setNumThreads); 0: all cores")
    a = ap.parse_args()
    if a.threads > 0:  # read by imgpu's first CPU op
        os.environ["IMGPU_CPU_THREADS"] = str(a.threads)
        cv2.setNumThreads(a.threads)
    inter = {"bilinear": cv2.INTER_LINEAR, "bicubic": cv2.INTER_CUBIC, "area": cv2.INTER_AREA}
    print(f"cv2 {cv2.__version__}, cv2 threads {cv2.getNumThreads()}, imgpu threads "
          f"{os.environ.get('IMGPU_CPU_THREADS', 'all')}, cores {os.cpu_count()}")
    print("| case | filter | imgpu ms | cv2.resize ms | imgpu / cv2 | imgpu --antialias ms | Pillow ms |")
    print("|---|---|---|---|---|---|---|")
    try:
        from PIL import Image
    except ImportError:
        Image = None
    pil = {"bilinear": 2, "bicubic": 3, "area": 4}  # Image.BILINEAR, BICUBIC, BOX
    for name, (sw, sh), (dw, dh) in [("4K->1080p", (3840, 2160), (1920, 1080)), ("1080p->4K", (1920, 1080), (3840, 2160))]:
        src = photo(sw, sh)
        for f in ("bilinear", "bicubic", "area"):
            t_i, t_c = med_pair(lambda: imgpu.resize(src, size=(dw, dh), filter=f, device="cpu"),
                                lambda: cv2.resize(src, (dw, dh), interpolation=inter[f]), a.n)
            t_a = med(lambda: imgpu.resize(src, size=(dw, dh), filter=f, antialias=True, device="cpu"), a.n)
            t_p = float("nan")
            if Image is not None:
                pim = Image.fromarray(src)
                t_p = med(lambda: pim.resize((dw, dh), pil[f]), a.n)
            print(f"| {name} RGB8 | {f} | {t_i:.1f} | {t_c:.1f} | {t_i / t_c:.2f}x | {t_a:.1f} | {t_p:.1f} |", flush=True)
    vips = None if a.no_vips else shutil.which("vips")
    if not vips:
        if not a.no_vips:
            print("vips: not installed (apt-get install libvips-tools)")
        return
    ver = subprocess.run([vips, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"\n{ver} (a command per run: start-up and the .v file read/write included)")
    print("| case | vips command | ms |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for name, (sw, sh), (dw, dh) in [("4K->1080p", (3840, 2160), (1920, 1080)), ("1080p->4K", (1920, 1080), (3840, 2160))]:
            src = os.path.join(d, f"in{sw}.png")
            cv2.imwrite(src, photo(sw, sh), [cv2.IMWRITE_PNG_COMPRESSION, 0])
            v = os.path.join(d, f"in{sw}.v")
            subprocess.run([vips, "copy", src, v], check=True)
            out = os.path.join(d, "out.v")
            sc = dw / sw
            for label, cmd in [
                ("resize linear", [vips, "resize", v, out, str(sc), "--kernel", "linear"]),
                ("resize cubic", [vips, "resize", v, out, str(sc), "--kernel", "cubic"]),
                ("resize lanczos3 (default)", [vips, "resize", v, out, str(sc)]),
                ("thumbnail", [vips, "thumbnail", v, out, str(dw), "--height", str(dh), "--size", "force"]),
                ("copy (start-up + .v I/O alone)", [vips, "copy", v, out]),
            ]:
                t = med(lambda: subprocess.run(cmd, check=True, capture_output=True), a.n)
                print(f"| {name} | {label} | {t:.1f} |", flush=True)


if __name__ == "__main__":
    main()

"""bench/encode_slots.py — encode_batch of CUDA arrays on nvJPEG with 1..8 encodes in flight
(IMGPU_JPEG_ENC_SLOTS, read when a context first encodes: one process per setting), 4K RGB
photos already on the GPU, after a warm-up pass; also one item per call; with glibc's defaults
and with imgpu.tune_allocator(). Run on the GPU machine:
    PYTHONPATH=build-gpu/python python3 bench/encode_slots.py [--n 64]"""
import argparse
import os
import subprocess
import sys
import time

CHILD = r'''
import sys, time, numpy as np, imgpu, cv2
n = int(sys.argv[1])
if sys.argv[3] == "1":
    imgpu.tune_allocator()
src = cv2.resize(cv2.imread(sys.argv[2])[:, :, ::-1], (3840, 2160), interpolation=cv2.INTER_CUBIC)
ctx = imgpu.Context("cuda")
a = imgpu.encode_batch([src], "jpg", device=ctx)                     # nvJPEG's set-up, apart
arr = imgpu.decode_batch(a * n, device=ctx)
imgpu.encode_batch(arr[:8], "jpg", quality=92, device=ctx)            # warm-up: the slots' buffers
ts = []
for _ in range(3):
    t0 = time.perf_counter(); imgpu.encode_batch(arr, "jpg", quality=92, device=ctx); ts.append(time.perf_counter() - t0)
one = time.perf_counter()
for x in arr:
    imgpu.encode_batch([x], "jpg", quality=92, device=ctx)
one = time.perf_counter() - one
print("%.1f %.1f" % (n / sorted(ts)[1], n / one))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="arrays a call (default 64)")
    args = ap.parse_args()
    photo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "coffee.png")
    print("slots  tune_allocator  encode_batch img/s (median of 3 calls of %d)  one a call img/s" % args.n)
    for tune in (0, 1):
        for k in (1, 2, 4, 8):
            env = dict(os.environ, IMGPU_JPEG_ENC_SLOTS=str(k))
            r = subprocess.run([sys.executable, "-c", CHILD, str(args.n), photo, str(tune)], env=env,
                               capture_output=True, text=True)
            print("%5d  %14s  %s" % (k, "yes" if tune else "no", r.stdout.strip() or r.stderr.strip()[-300:]),
                  flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""resize_torch.py — torchvision's resize against imgpu's on the same GPU tensors (issue 28,
"Speed"; the GPU machine's python3 with torch, torchvision and the built module).

    PYTHONPATH=build/python python3 bench/resize_torch.py [--n 50]

4K -> 1080p and 1080p -> 4K, RGB uint8, bilinear / bicubic / area: torchvision.transforms.v2.
functional.resize with antialias=False and True (area: F.interpolate(mode="area"), torchvision
has none) on a CHW uint8 CUDA tensor, and imgpu.resize on the same tensor as HWC (a permuted
view made contiguous once, outside the timing), imgpu's --antialias beside torchvision's
antialias=True. CUDA events around each call, synchronized, the median of N, in microseconds.
Includes each library's per-call overhead (Python, allocation of the result; imgpu's table
build and upload), which the kernel-only bench (build/imgpu-bench-resize) leaves out."""
import argparse
import statistics

import torch
import torch.nn.functional as TF
from torchvision.transforms.v2 import functional as F
from torchvision.transforms import InterpolationMode as IM

import imgpu


def timed(fn, n):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    n = ap.parse_args().n
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}")
    print("| case | filter | imgpu us | imgpu --antialias us | torchvision us | torchvision antialias us |")
    print("|---|---|---|---|---|---|")
    g = torch.Generator(device="cuda").manual_seed(1)
    for name, (sw, sh), (dw, dh) in [("4K->1080p", (3840, 2160), (1920, 1080)), ("1080p->4K", (1920, 1080), (3840, 2160))]:
        chw = torch.randint(0, 256, (3, sh, sw), dtype=torch.uint8, device="cuda", generator=g)
        hwc = chw.permute(1, 2, 0).contiguous()
        for f, mode in [("bilinear", IM.BILINEAR), ("bicubic", IM.BICUBIC), ("area", None)]:
            def im(aa):
                try:
                    return timed(lambda: imgpu.resize(hwc, size=(dw, dh), filter=f, antialias=aa, device="cuda"), n)
                except Exception as e:  # noqa: BLE001 (report, keep measuring the others)
                    print(f"imgpu {f}: {e}")
                    return float("nan")
            t_i, t_ia = im(False), im(True)
            if mode is None:
                x = chw.unsqueeze(0).float()
                t_t = timed(lambda: TF.interpolate(x, size=(dh, dw), mode="area"), n)
                t_ta = float("nan")
            else:
                t_t = timed(lambda: F.resize(chw, [dh, dw], interpolation=mode, antialias=False), n)
                t_ta = timed(lambda: F.resize(chw, [dh, dw], interpolation=mode, antialias=True), n)
            print(f"| {name} | {f} | {t_i:.0f} | {t_ia:.0f} | {t_t:.0f}{' (float32 interpolate)' if mode is None else ''} "
                  f"| {t_ta:.0f} |", flush=True)


if __name__ == "__main__":
    main()

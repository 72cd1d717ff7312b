#!/usr/bin/env python3
"""resize_torch.py — torchvision's resize against imgpu's on the same GPU tensors (issue 28,
"Speed"; the GPU machine's python3 with torch, torchvision and the built module).

    PYTHONPATH=build-gpu/python python3 bench/resize_torch.py [--reps 15] [--batch 40]

4K -> 1080p and 1080p -> 4K, RGB uint8, bilinear / bicubic / area. The inputs are K HWC uint8
CUDA tensors (together more than 4x the L2, so that no input is hot in it). Every peer reads
the same memory: imgpu.resize takes each HWC tensor; torchvision.transforms.v2.functional.resize
takes the CHW view of the same tensor (x.permute(2, 0, 1), channels-last memory), with
antialias=False and True. torchvision's own layout, contiguous CHW copies of the same pixels,
is timed too ("CHW" columns), so that neither layout is held against it. Area: torchvision has
none; torch's F.interpolate(mode="area") (adaptive average pooling, float32 only) stands in,
timed with the uint8 -> float32 -> round -> uint8 casts that torchvision's resize makes for
its float paths (enlarging, area pooling repeats pixels: it is not cv2's INTER_AREA). Lanczos:
torchvision has none for tensors (imgpu-bench-resize has NPP's).

Timing (../shared/GPU.md's throughput time): every call on torch's current stream (imgpu's
through stream=), CUDA events around BATCH back-to-back calls rotating over the K inputs,
divided by BATCH, the median of REPS such batches, after a warm-up over all K; in
microseconds per image. Each library's per-call costs are included (Python, the result's
allocation; imgpu's table build and upload), which the kernel-only bench (imgpu-bench-resize)
leaves out. "max diff": the largest |imgpu - torchvision| on the first input, without and (in
brackets) with antialias (area: against torch's area both times).
torchvision resizes uint8 CUDA tensors in float32 (cast, interpolate, round, cast back)."""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as TF
from torchvision.transforms.v2 import functional as F
from torchvision.transforms import InterpolationMode as IM

import imgpu


def timed(fn, k, reps, batch):
    for i in range(k):  # warm-up over every input
        fn(i)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts, idx = [], 0
    for _ in range(reps):
        a.record()
        for _ in range(batch):
            fn(idx % k)
            idx += 1
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000 / batch)
    return statistics.median(ts)


def area_torch(x, dh, dw):
    y = TF.interpolate(x.unsqueeze(0).float(), size=(dh, dw), mode="area")
    return y.round_().clamp_(0, 255).to(torch.uint8)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)  # the old option: ignored
    args = ap.parse_args()
    dev = torch.cuda.current_device()
    l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 60 << 20)
    stream = torch.cuda.current_stream()
    print(f"resize_torch: {torch.cuda.get_device_name()}, L2 {l2 >> 20} MiB, torch {torch.__version__}; RGB uint8; "
          f"throughput time: events around {args.batch} calls / {args.batch}, median of {args.reps}; us per image\n")
    print("| case | filter | imgpu | tv HWC-view | tv CHW | imgpu / tv | imgpu --antialias | tv aa HWC-view | tv aa CHW "
          "| aa: imgpu / tv | max diff (aa) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    g = torch.Generator(device="cuda").manual_seed(1)
    for name, (sw, sh), (dw, dh) in [("4K->1080p", (3840, 2160), (1920, 1080)), ("1080p->4K", (1920, 1080), (3840, 2160))]:
        k = int(4 * l2 / (sw * sh * 3)) + 2                 # the inputs together > 4x the L2
        noise = torch.randint(0, 32, (sh, sw, 3), dtype=torch.int16, device="cuda", generator=g)
        # photo-like content: a ramp plus grain, so that the filters' differences stay readable
        ramp = torch.arange(sw, device="cuda", dtype=torch.int16).view(1, sw, 1) * 200 // sw
        hwc = [(noise + ramp + i).clamp_(0, 255).to(torch.uint8) for i in range(k)]
        view = [x.permute(2, 0, 1) for x in hwc]            # same memory, channels-last CHW view
        chw = [v.contiguous() for v in view]                 # torchvision's own layout: copies
        for f, mode in [("bilinear", IM.BILINEAR), ("bicubic", IM.BICUBIC), ("area", None)]:
            def im(aa):
                try:
                    return timed(lambda i: imgpu.resize(hwc[i], size=(dw, dh), filter=f, antialias=aa, device="cuda",
                                                        stream=stream), k, args.reps, args.batch)
                except Exception as e:  # noqa: BLE001 (report, keep measuring the others)
                    print(f"imgpu {f}: {e}", file=sys.stderr)
                    return float("nan")

            def tv(xs, aa):
                if mode is None:
                    return timed(lambda i: area_torch(xs[i], dh, dw), k, args.reps, args.batch) if not aa else float("nan")
                return timed(lambda i: F.resize(xs[i], [dh, dw], interpolation=mode, antialias=aa), k, args.reps,
                             args.batch)

            t = [im(False), tv(view, False), tv(chw, False), im(True), tv(view, True), tv(chw, True)]

            def ratio(x, ys):
                ys = [y for y in ys if y == y]
                return "%.2f" % (x / min(ys)) if ys and x == x else "-"

            diffs = []
            for aa in (False, True):
                try:
                    a = torch.from_dlpack(imgpu.resize(hwc[0], size=(dw, dh), filter=f, antialias=aa, device="cuda"))
                    b = area_torch(view[0], dh, dw) if mode is None else F.resize(view[0], [dh, dw], interpolation=mode,
                                                                                   antialias=aa)
                    diffs.append(str(int((a.int() - b.permute(1, 2, 0).int()).abs().max())))
                except Exception as e:  # noqa: BLE001
                    diffs.append(f"({type(e).__name__})")
            c = ["%.0f" % x if x == x else "-" for x in t]
            print(f"| {name} | {f}{' (torch float32 area)' if mode is None else ''} | {c[0]} | {c[1]} | {c[2]} "
                  f"| {ratio(t[0], t[1:3])} | {c[3]} | {c[4]} | {c[5]} | {ratio(t[3], t[4:6])} | {diffs[0]} ({diffs[1]}) |",
                  flush=True)
        del hwc, view, chw
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""op_latency.py — issue 27's "op on a 4K tensor already on the GPU, called from Python,
synchronized" target taken apart: where the time of one synchronized call goes, as medians (and
90th percentiles) of N calls each (default 500), in microseconds.

    PYTHONPATH=build-gpu/python python3 bench/op_latency.py [--n 500] [--ops equalize,rotate,clahe]

Parts (each row one thing timed, the rest of its loop untimed):
  protocol  torch.cuda.synchronize() alone (nothing queued); reading t.__cuda_array_interface__,
            t.__dlpack_device__(), t.__dlpack__() and t.__dlpack__(stream=<another stream>)
            (the capsule dropped); CuPy's __cuda_array_interface__
  fixed     the op on a 16x16 tensor, synchronized: the per-call cost without GPU work to speak of
  per op    equalize / rotate 15 (bilinear, expand) / rotate30 (30 degrees, bilinear, the same
            size: imgpu-bench's "rotate 30 bilinear" row) / clahe on a 4K RGB uint8 tensor:
              torch      imgpu.<op>(t) + torch.cuda.synchronize() (every "+ sync" row times
                         the synchronize with the call)
              enqueue    imgpu.<op>(t) alone (the GPU drained, untimed, before each call)
              r.sync     imgpu.<op>(t) then r.synchronize() (an event wait, not a device sync)
              stream=    imgpu.<op>(t, stream=torch.cuda.current_stream()) + sync
              cupy       imgpu.<op>(c) on a CuPy array of the same pixels + sync
              dlpack     imgpu.<op>(d), d a wrapper that shows t through __dlpack__ and
                         __dlpack_device__ only (torch's DLPack export, ordered after torch's
                         current stream, instead of its __cuda_array_interface__) + sync
              Array      imgpu.<op>(a) on an imgpu.Array (the module's own result: no protocol) + sync
              out=       imgpu.<op>(t, out=o) into a preallocated tensor (waits inside) + sync
              out=,str=  the same with stream= given (no wait inside) + sync
              tv         torchvision's v2 equalize / rotate on the same pixels (C x H x W) + sync
              GPU time   CUDA events on torch's current stream around imgpu.<op>(t, stream=cur):
                         the op's own GPU time in this process (the "C latency" of ops that
                         imgpu-bench has no row for, e.g. the 15-degree expanding rotate)
Compare with the C single-call CUDA-event latency of the same op (`imgpu-bench --sizes 4k
--channels 3 --contents photo --ops equalize,rotate,clahe`, bench/gpu_round.sh part latency):
the target is at most that + 20 us. Missing CuPy or torchvision leaves their rows out."""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.join(HERE, "..", "assets")


def source_4k():
    """The 4K RGB photo bench/python_bench.py uses (coffee.png scaled by cv2), or, without cv2, a
    gradient with noise of the same size (the ops' latency barely depends on the content)."""
    try:
        import cv2
        im = cv2.imread(os.path.join(ASSETS, "coffee.png"), cv2.IMREAD_COLOR)
        if im is not None:
            return np.ascontiguousarray(cv2.resize(im, (3840, 2160))[:, :, ::-1])
    except ImportError:
        pass
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:2160, 0:3840]
    base = ((x // 16 + y // 9) % 256).astype(np.int16)
    im = np.stack([base, (base * 3) % 256, 255 - base], axis=2) + rng.integers(-8, 9, (2160, 3840, 3))
    return np.clip(im, 0, 255).astype(np.uint8)


def timed(fn, n, before=None, after=None, sync=None, warm=20):
    """Medians and 90th percentiles (us) of fn() over n calls; before/after run untimed around
    each call (after gets fn's result); sync, when given, runs after fn inside the timed span."""
    for _ in range(warm):
        if before:
            before()
        r = fn()
        if sync:
            sync()
        if after:
            after(r)
    ts = []
    clock = time.perf_counter_ns
    for _ in range(n):
        if before:
            before()
        t0 = clock()
        r = fn()
        if sync:
            sync()
        t1 = clock()
        if after:
            after(r)
        del r
        ts.append((t1 - t0) / 1e3)
    ts.sort()
    return statistics.median(ts), ts[min(len(ts) - 1, int(len(ts) * 0.9))]


class DLPackOnly:
    """A tensor seen through DLPack only (imgpu takes __cuda_array_interface__ first)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


class Table:
    def __init__(self):
        self.rows = []
        print("%-52s %10s %10s" % ("what (4K RGB uint8 unless said)", "median us", "p90 us"))
        sys.stdout.flush()

    def gpu(self, name, fn, stream, n):
        """The GPU time of one call: CUDA events recorded on `stream` before and after fn(), which
        enqueues its work there (stream=); medians of n, synchronized each. The in-process
        counterpart of imgpu-bench's C latency, for ops it has no row for."""
        import torch
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for i in range(n + 20):
            a.record(stream)
            r = fn()
            b.record(stream)
            b.synchronize()
            del r
            if i >= 20:
                ts.append(a.elapsed_time(b) * 1e3)
        ts.sort()
        med, p90 = statistics.median(ts), ts[min(len(ts) - 1, int(len(ts) * 0.9))]
        print("%-52s %10.1f %10.1f" % (name, med, p90))
        sys.stdout.flush()

    def add(self, name, fn, n, **kw):
        try:
            med, p90 = timed(fn, n, **kw)
        except Exception as e:   # noqa: BLE001 - one row failing must not stop the table
            print("%-52s %s" % (name, "failed: %s" % (str(e).splitlines() or ["?"])[0][:60]))
            return None
        print("%-52s %10.1f %10.1f" % (name, med, p90))
        sys.stdout.flush()
        return med


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500, help="calls per row (default 500)")
    ap.add_argument("--ops", default="equalize,rotate,rotate30,clahe")
    args = ap.parse_args()
    n = max(args.n, 10)
    try:
        import torch
    except ImportError:
        print("op_latency: no torch here: nothing to measure")
        return 0
    if not torch.cuda.is_available():
        print("op_latency: torch sees no GPU: nothing to measure")
        return 0
    import imgpu
    if not imgpu.built_with_cuda:
        print("op_latency: imgpu was built without CUDA: nothing to measure")
        return 0
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception:   # noqa: BLE001 - no CuPy (or no driver for it): its rows are left out
        cupy = None
    try:
        from torchvision.transforms.v2 import functional as F
    except Exception:   # noqa: BLE001
        F = None

    src = source_4k()
    t = torch.from_numpy(src).cuda()
    chw = t.permute(2, 0, 1).contiguous()
    tiny = t[:16, :16].contiguous()
    c = cupy.asarray(src) if cupy is not None else None
    sync = torch.cuda.synchronize
    side = torch.cuda.Stream()
    sync()
    print("op_latency: %s, torch %s, CuPy %s, torchvision %s, %d calls a row" % (
        torch.cuda.get_device_name(0), torch.__version__, cupy.__version__ if cupy is not None else "absent",
        "present" if F is not None else "absent", n))
    T = Table()

    def then_sync(_r):
        sync()

    # ---- the protocols alone ----
    T.add("torch.cuda.synchronize() alone", sync, n)
    T.add("t.__cuda_array_interface__", lambda: t.__cuda_array_interface__, n)
    T.add("t.__dlpack_device__()", lambda: t.__dlpack_device__(), n)
    T.add("t.__dlpack__() (capsule dropped)", lambda: t.__dlpack__(), n)
    T.add("t.__dlpack__(stream=side) (event + wait)", lambda: t.__dlpack__(stream=side.cuda_stream), n)
    if c is not None:
        T.add("cupy c.__cuda_array_interface__", lambda: c.__cuda_array_interface__, n)

    # ---- the fixed per-call cost ----
    T.add("imgpu.equalize 16x16 tensor + sync", lambda: imgpu.equalize(tiny), n, sync=sync)
    T.add("imgpu.equalize 16x16 tensor, enqueue only", lambda: imgpu.equalize(tiny), n, before=sync,
          after=then_sync)

    ops = {
        "equalize": (lambda x, **k: imgpu.equalize(x, **k),
                     (lambda: F.equalize(chw)) if F is not None else None),
        "rotate": (lambda x, **k: imgpu.rotate(x, 15, **k),
                   (lambda: F.rotate(chw, 15, interpolation=F.InterpolationMode.BILINEAR, expand=True))
                   if F is not None else None),
        "rotate30": (lambda x, **k: imgpu.rotate(x, 30, expand=False, **k),
                     (lambda: F.rotate(chw, 30, interpolation=F.InterpolationMode.BILINEAR))
                     if F is not None else None),
        "clahe": (lambda x, **k: imgpu.clahe(x, **k), None),
    }
    for name in [s.strip() for s in args.ops.split(",") if s.strip()]:
        if name not in ops:
            print("op_latency: unknown op %r (%s)" % (name, ", ".join(ops)))
            continue
        op, tv = ops[name]
        first = op(t)
        first.synchronize()
        a = op(t)   # an imgpu.Array input (the module's own result)
        a.synchronize()
        out = torch.empty(first.shape, dtype=torch.uint8, device="cuda")
        del first
        sync()
        cur = torch.cuda.current_stream()
        T.add("%s torch + sync" % name, lambda: op(t), n, sync=sync)
        T.gpu("%s GPU time on the stream (events around the call)" % name, lambda: op(t, stream=cur), cur, n)
        T.add("%s torch, enqueue only" % name, lambda: op(t), n, before=sync, after=then_sync)
        T.add("%s torch + r.synchronize()" % name, lambda: op(t).synchronize(), n)
        T.add("%s torch, stream=current + sync" % name, lambda: op(t, stream=cur), n, sync=sync)
        if c is not None:
            T.add("%s cupy + sync" % name, lambda: op(c), n, sync=sync)
        T.add("%s torch via DLPack only + sync" % name, lambda: op(DLPackOnly(t)), n, sync=sync)
        T.add("%s imgpu.Array + sync" % name, lambda: op(a), n, sync=sync)
        T.add("%s torch, out= + sync" % name, lambda: op(t, out=out), n, sync=sync)
        T.add("%s torch, out=, stream=current + sync" % name, lambda: op(t, out=out, stream=cur), n,
              sync=sync)
        if tv is not None:
            T.add("%s torchvision + sync" % name, tv, n, sync=sync)
        del a
    sync()
    print("compare: imgpu-bench's CUDA-event latency of the same op (bench/gpu_round.sh part latency); "
          "issue 27's target is that + 20 us for 'torch + sync'")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""dask_bench.py — issue 29's targets: imgpu.dask on one machine against imgpu.batch in one process.

    PYTHONPATH=build/python[:DASK_DIR] python3 bench/dask_bench.py [--n 500] [--workers 1,2]
        [--ops equalize] [--device auto] [--work build-bench/dask] [--repeat 2]

N 4K (3840x2160) q92 JPEGs (made once under --work from assets/, as bench/batch_make_inputs.py
makes its PNGs: an asset cropped to 16:9, upscaled with cv2.resize(INTER_CUBIC), flipped, shifted
and noised so no two are alike) go through:
  batch      imgpu.batch(inputs, out, ops, device, jobs=cores) in this process, --repeat times
             (the first run pays imgpu's start-up: CUDA, nvJPEG; the others do not);
  dask W     imgpu.dask.batch on a LocalCluster of W worker processes (one thread each, jobs =
             cores / W each: the workers share the machine's cores; on a machine of G GPUs,
             worker k uses GPU k mod G), --repeat times on the same cluster. The cluster's
             start-up (LocalCluster, Client, the worker plugin) is timed apart and not counted.
Every run writes a fresh output folder; the outputs of each dask run are checked equal to the
first batch run's, byte for byte. Prints one table (seconds, images/s, ratio to batch's run of
the same rank) and one JSON line with every figure.
Target: with one worker per GPU (or per core group), within 10% of imgpu.batch (run 2 against
run 2: both warm); 2 GPUs: 2 workers at >= 1.8x the throughput of 1."""
import argparse
import filecmp
import json
import os
import shutil
import sys
import time
from multiprocessing import Pool

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.join(HERE, "..", "assets")
SOURCES = ["coffee.png", "chelsea.png", "astronaut.png", "rocket.jpg", "brick.png", "camera.png"]


def make(args):
    i, out, w, h = args
    import cv2
    import numpy as np
    path = os.path.join(out, "photo_%04d.jpg" % i)
    if os.path.exists(path):
        return
    src = cv2.imread(os.path.join(ASSETS, SOURCES[i % len(SOURCES)]), cv2.IMREAD_COLOR)
    sh, sw = src.shape[:2]
    ch = min(sh, sw * h // w)
    y0 = (sh - ch) // 2
    im = cv2.resize(src[y0:y0 + ch], (w, h), interpolation=cv2.INTER_CUBIC)
    rng = np.random.default_rng(i)
    if i % 2:
        im = im[:, ::-1]
    im = im.astype(np.int16) + int(rng.integers(-25, 26)) + rng.integers(-3, 4, im.shape)
    cv2.imwrite(path + ".tmp.jpg", np.clip(im, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 92])
    os.replace(path + ".tmp.jpg", path)


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cpu_seconds():
    """This process's user + system CPU seconds so far (all its threads)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def same_tree(a, b):
    names = sorted(n for n in os.listdir(b) if n != ".imgpu-batch")
    if sorted(n for n in os.listdir(a) if n != ".imgpu-batch") != names:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return not mismatch and not errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--size", default="3840x2160")
    ap.add_argument("--workers", default="1,2", help="worker counts to run, e.g. 1,2")
    ap.add_argument("--ops", default="equalize", help="comma-separated op names")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--work", default="build-bench/dask")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    import imgpu
    import imgpu.dask
    from dask.distributed import Client, LocalCluster

    inputs = os.path.join(a.work, "in_%d_%s" % (a.n, a.size))
    os.makedirs(inputs, exist_ok=True)
    t = time.perf_counter()
    with Pool(cores()) as p:
        p.map(make, [(i, inputs, w, h) for i in range(a.n)])
    print("inputs: %d %s q92 JPEGs in %s (%.1f s to make or find)" % (a.n, a.size, inputs, time.perf_counter() - t),
          file=sys.stderr)
    ops = a.ops.split(",")
    ncores = cores()
    # On a GPU the first 4 x --jobs JPEGs of a plan are libjpeg-turbo's (docs/gpu.md's set-up
    # rule): imgpu.batch runs with every core and each worker with its share, so the count is
    # fixed here for both (the client's, the workers' inherit it), the one of a whole-machine run,
    # and their bytes can be compared.
    os.environ.setdefault("IMGPU_NVJPEG_CPU_FIRST", str(4 * ncores))
    print("IMGPU_NVJPEG_CPU_FIRST=%s" % os.environ["IMGPU_NVJPEG_CPU_FIRST"], file=sys.stderr)
    rows, fig = [], {"n": a.n, "size": a.size, "ops": ops, "device": a.device, "cores": ncores,
                     "gpus": imgpu.dask._visible_gpus(), "batch": [], "dask": {}}

    def fresh(name):
        d = os.path.join(a.work, name)
        shutil.rmtree(d, ignore_errors=True)
        return d

    clusters = {}
    for nw in [int(x) for x in a.workers.split(",")]:
        t = time.perf_counter()
        cluster = LocalCluster(n_workers=nw, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=40)
        client = Client(cluster)
        client.wait_for_workers(nw)
        client.register_worker_plugin(imgpu.dask.ImgpuWorker("auto", a.device), name=imgpu.dask.PLUGIN_NAME)
        start = time.perf_counter() - t
        jobs = max(1, ncores // nw)
        clusters[nw] = (cluster, client, jobs)
        fig["dask"][nw] = {"start": start, "runs": [], "cpu": [], "jobs": jobs,
                           "task_size": imgpu.dask.task_size(a.n, nw, jobs)}
        print("cluster of %d: start-up %.2f s (not counted), task size %d" % (nw, start, fig["dask"][nw]["task_size"]),
              file=sys.stderr)
    # the runs interleaved (batch, dask 1, dask 2, batch, ...): a machine's load drifts over time
    ref = None
    for r in range(a.repeat):
        out = fresh("out_batch_%d" % r)
        t, c = time.perf_counter(), cpu_seconds()
        s = imgpu.batch([inputs], out, ops=ops, device=a.device, jobs=ncores)
        el, cpu = time.perf_counter() - t, cpu_seconds() - c
        assert s["done"] == a.n and not s["failed"], s
        ref = ref or out
        fig["batch"].append(el)
        fig.setdefault("batch_cpu", []).append(cpu)
        rows.append(("imgpu.batch, 1 process, jobs %d" % ncores, r + 1, el, None, cpu))
        for nw, (cluster, client, jobs) in clusters.items():
            out = fresh("out_dask%d_%d" % (nw, r))
            t, c, wc = time.perf_counter(), cpu_seconds(), sum(client.run(cpu_seconds).values())
            s = imgpu.dask.batch(client, [inputs], out, ops=ops, device=a.device, jobs=jobs)
            el = time.perf_counter() - t
            cpu = cpu_seconds() - c + sum(client.run(cpu_seconds).values()) - wc
            assert s["done"] == a.n and not s["failed"], s
            assert same_tree(out, ref), "dask's outputs differ from imgpu.batch's"
            fig["dask"][nw]["runs"].append(el)
            fig["dask"][nw]["cpu"].append(cpu)
            rows.append(("imgpu.dask, %d worker%s, jobs %d each" % (nw, "s" if nw > 1 else "", jobs), r + 1, el,
                         fig["batch"][r] / el, cpu))
    for cluster, client, _ in clusters.values():
        client.close()
        cluster.close()
    rows.sort(key=lambda row: (not row[0].startswith("imgpu.batch"), row[0], row[1]))
    print("| run | # | s | images/s | speed vs imgpu.batch (same #) | CPU s (client + workers) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r, el, ratio, cpu in rows:
        print("| %s | %d | %.2f | %.1f | %s | %.2f |" % (name, r, el, a.n / el, "%.2fx" % ratio if ratio else "1.00x",
                                                          cpu))
    print(json.dumps(fig))


if __name__ == "__main__":
    main()

"""batch_gpu.py — the GPU stage of `imgpu batch` (label gpu; exit 77 where there is no usable
GPU or no CUDA build). Checks, on many images of several sizes (so that the two sessions
alternate and their buffers grow and are reused):
  - batch --device cuda equals the single-image commands with --device cuda pixel for pixel
    (equalize both modes, rotations of every filter, chains), and equals the CPU batch for the
    exact operations (equalize, quarter turns, nearest) and within 1 level for bilinear/bicubic;
  - --devices 0,0 (two GPU workers on one GPU) gives the same files; --devices 0,1 where the
    machine has two GPUs (reported as skipped otherwise), 8-bit and 16-bit (equalize, CLAHE);
  - out of device memory (IMGPU_CUDA_MEM_LIMIT): --device auto finishes every file on the CPU
    with the CPU's pixels, --device cuda fails every file, each with its reason;
  - a corrupt file among GPU-processed ones fails alone.

usage: batch_gpu.py IMGPU_BINARY TMP_ROOT ASSETS_DIR   (Debian's /usr/bin/python3, or any with cv2)
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:
    print("skip: batch_gpu needs cv2 and numpy")
    sys.exit(77)

binary, tmp, assets = cc.setup("batch_gpu")
# Single-command CUDA references (one process, one CUDA context, per file and step: the cost of
# this test on a GPU machine). By default a few files per case, chosen to cover each kind of
# input (below); BATCH_GPU_FULL=1 runs them on the 10 assets and 10 generated files per case as
# before #18; BATCH_GPU_QUICK=1 on three files.
QUICK = os.environ.get("BATCH_GPU_QUICK") == "1"
FULL = os.environ.get("BATCH_GPU_FULL") == "1"


def imgpu(*args, env=None):
    import subprocess
    p = subprocess.run([binary] + [str(a) for a in args], capture_output=True, timeout=600,
                       env=dict(os.environ, **(env or {})))
    return cc.Result([str(a) for a in args], p.returncode, p.stdout.decode(errors="replace"),
                     p.stderr.decode(errors="replace"), False)


# the single commands (~40) through one cli_inproc where CTest sets IMGPU_INPROC (each op's first
# an imgpu process of its own): one CUDA start-up for them, not one each (cli_common.Runner)
RUN = cc.Runner(binary, timeout=600)


def single(*args):
    return RUN.run(args)


probe_out = os.path.join(tmp, "probe")
r = imgpu("batch", "--equalize", "--device", "cuda", "-o", probe_out, os.path.join(assets, "camera.png"))
if r.rc != 0 and ("no usable GPU" in r.err or "without CUDA support" in r.err):
    print("skip: " + r.err.strip().splitlines()[-1])
    cc.cleanup(tmp, False)
    sys.exit(77)

C = cc.Checker("batch_gpu")
C.check(r.rc == 0, "probe batch on the GPU", str(r))

# inputs: the assets and 12 generated images of three sizes, gray / RGB / RGBA: image i has
# size i % 3 and kind i % 4, so the 12 cover every (size, kind) pair, in an order that makes
# each session's buffers grow and shrink (24 before #18: the second dozen repeated the pairs)
src = os.path.join(tmp, "src")
os.makedirs(os.path.join(src, "gen"))
for a in os.listdir(assets):
    if a.endswith(".png") or a.endswith(".jpg"):
        shutil.copy(os.path.join(assets, a), src)
base = cv2.imread(os.path.join(assets, "coffee.png"), cv2.IMREAD_COLOR)
rng = np.random.default_rng(5)
sizes = [(1280, 720), (333, 517), (1920, 1080)]
for i in range(12):
    w, h = sizes[i % 3]
    im = cv2.resize(base, (w, h), interpolation=cv2.INTER_CUBIC).astype(np.int16)
    im = np.clip(im + rng.integers(-8, 9, im.shape) + (i * 7) % 40 - 20, 0, 255).astype(np.uint8)
    if i % 4 == 1:
        im = cv2.cvtColor(im, cv2.COLOR_BGR2GRAY)
    elif i % 4 == 2:
        im = np.dstack([im, np.full(im.shape[:2], 200 + i, np.uint8)])
    cv2.imwrite(os.path.join(src, "gen", f"g{i:02d}.png"), im)


def rels(d):
    out = []
    for root, _, files in os.walk(d):
        out += [os.path.relpath(os.path.join(root, f), d) for f in files
                if f != cc.BATCH_MANIFEST]
    return sorted(out)


ALL = rels(src)
ALL_PNG = sorted(os.path.splitext(r)[0] + ".png" for r in ALL)


def px(p):
    return cv2.imread(p, cv2.IMREAD_UNCHANGED)


def maxdiff(a, b):
    pa, pb = px(a), px(b)
    if pa is None or pb is None or pa.shape != pb.shape:
        return 999
    return int(np.abs(pa.astype(np.int32) - pb.astype(np.int32)).max())


# Files compared with the single commands. Exact ops (tolerance 0): the GPU batch already
# equals the CPU batch on every file, so three files (gray asset, JPEG, the largest RGBA) keep
# "batch == single command" checked. Bilinear / bicubic (tolerance 1 against the CPU): the
# single commands are the only exact check, so one file of each kind: 8-bit gray and RGB assets,
# 16-bit gray, JPEG, and the generated 333x517 gray and 1920x1080 RGBA.
SINGLES_EXACT = ("camera.png", "rocket.jpg", "gen/g02.png")
SINGLES_FILTERED = ("camera.png", "coffee.png", "camera16.png", "rocket.jpg", "gen/g01.png", "gen/g02.png")


def single_subset(rel, tol):
    if QUICK:
        return rel in ("camera.png", "coffee.png", "gen/g01.png")
    if FULL:
        return rel.startswith("gen/g0") or not rel.startswith("gen")
    return rel in (SINGLES_FILTERED if tol else SINGLES_EXACT)


cases = [
    ("eq", ["--equalize"], [["equalize"]], 0),
    ("eqpc", ["--equalize", "--mode", "per-channel"], [["equalize", "--mode", "per-channel"]], 0),
    ("rot30", ["--rotate", "30"], [["rotate", "--angle", "30"]], 1),
    ("rot45n", ["--rotate", "45", "--filter", "nearest", "--crop"],
     [["rotate", "--angle", "45", "--filter", "nearest", "--crop"]], 0),
    ("rot90", ["--rotate", "90"], [["rotate", "--angle", "90"]], 0),
    ("clahe", ["--clahe", "--clip", "3", "--tiles", "6x4"], [["clahe", "--clip", "3", "--tiles", "6x4"]], 0),
    ("chain", ["--equalize", "--rotate", "-17.5", "--filter", "bicubic", "--background", "#3080c0"],
     [["equalize"], ["rotate", "--angle", "-17.5", "--filter", "bicubic", "--background", "#3080c0"]], 1),
]
for tag, ops, singles, tol in cases:
    out_g = os.path.join(tmp, "gpu_" + tag)
    out_c = os.path.join(tmp, "cpu_" + tag)
    # --format png: the JPEG input (rocket.jpg) must not be compared through a lossy re-encode
    r = imgpu("batch", *ops, "--device", "cuda", "-o", out_g, src, "--jobs", "4", "--format", "png")
    C.check(r.rc == 0 and "ops on the GPU" in r.err, f"{tag}: batch on the GPU", str(r))
    r = imgpu("batch", *ops, "--device", "cpu", "-o", out_c, src, "--quiet", "--format", "png")
    C.check(r.rc == 0, f"{tag}: batch on the CPU", str(r))
    C.check(rels(out_g) == ALL_PNG, f"{tag}: every file written")
    checked = 0
    for rel in ALL:
        g = os.path.join(out_g, os.path.splitext(rel)[0] + ".png")
        d = maxdiff(g, os.path.join(out_c, os.path.splitext(rel)[0] + ".png"))
        C.check(d <= tol, f"{tag}: {rel}: GPU batch vs CPU batch max diff {d} > {tol}")
        if single_subset(rel, tol):
            cur = os.path.join(src, rel)
            for k, cmd in enumerate(singles):
                nxt = os.path.join(tmp, f"s_{tag}_{k}_" + rel.replace("/", "_") + ".png")
                r1 = single(cmd[0], cur, nxt, *cmd[1:], "--device", "cuda", "--quiet")
                C.check(r1.rc == 0, f"single {tag} {rel}", str(r1))
                cur = nxt
            C.check(maxdiff(cur, g) == 0, f"{tag}: {rel}: batch --device cuda equals the single command(s)")
            checked += 1
    want = sum(single_subset(rel, tol) for rel in ALL)
    C.check(checked == want and checked >= 3, f"{tag}: compared {checked} files with the single commands")

# two GPU workers on one GPU; two GPUs where there are two
out2 = os.path.join(tmp, "gpu_two_workers")
r = imgpu("batch", "--equalize", "--rotate", "30", "--devices", "0,0", "-o", out2, src, "--format", "png")
C.check(r.rc == 0 and "ops on the GPU" in r.err, "--devices 0,0", str(r))
out1 = os.path.join(tmp, "gpu_one_worker")
r = imgpu("batch", "--equalize", "--rotate", "30", "--device", "cuda", "-o", out1, src, "--quiet", "--format", "png")
for rel in ALL_PNG:
    C.check(maxdiff(os.path.join(out2, rel), os.path.join(out1, rel)) == 0, f"--devices 0,0 equals one worker: {rel}")
out01 = os.path.join(tmp, "gpu_two_gpus")
r = imgpu("batch", "--equalize", "--rotate", "30", "--devices", "0,1", "-o", out01, src, "--format", "png")
if r.rc == 1 and "there is no GPU 1" in r.err:
    print("two GPUs: SKIPPED (this machine has one GPU): " + r.err.strip().splitlines()[-1])
else:
    C.check(r.rc == 0 and "ops on the GPU" in r.err, "--devices 0,1 (two GPUs)", str(r))
    for rel in ALL_PNG:
        C.check(maxdiff(os.path.join(out01, rel), os.path.join(out1, rel)) == 0, f"--devices 0,1 equals one GPU: {rel}")
    print("two GPUs: tested (--devices 0,1)")

# out of device memory: auto falls back per file, cuda fails per file
out_oom = os.path.join(tmp, "gpu_oom")
# (IMGPU_NVJPEG_CPU_FIRST=0: this small batch would otherwise run on the CPU alone, never
# starting CUDA: the set-up rule, checked below and in auto_start.sh)
r = imgpu("batch", "--equalize", "-o", out_oom, src, "--format", "png",
          env={"IMGPU_CUDA_MEM_LIMIT": "1M", "IMGPU_NVJPEG_CPU_FIRST": "0"})
C.check(r.rc == 0 and "ops on the GPU" in r.err, "OOM with --device auto: the GPU stage ran, the batch "
        "completes on the CPU", str(r))
for rel in ALL_PNG:
    C.check(maxdiff(os.path.join(out_oom, rel), os.path.join(tmp, "cpu_eq", rel)) == 0, f"OOM fallback: {rel}")
out_oom2 = os.path.join(tmp, "gpu_oom2")
r = imgpu("batch", "--equalize", "--device", "cuda", "-o", out_oom2, src, env={"IMGPU_CUDA_MEM_LIMIT": "1M"})
C.check(r.rc == 1 and "out of device memory" in r.err, "OOM with --device cuda: files fail", str(r))

# the set-up rule: with --device auto a batch of no more images than 8 per decode thread runs on
# the CPU alone (the CPU batch's bytes); IMGPU_NVJPEG_CPU_FIRST=0 puts it on the GPU
out_small = os.path.join(tmp, "auto_small")
jobs_small = str((len(ALL) + 3) // 4)   # len(ALL) <= 4 x jobs, within the 8 per thread
r = imgpu("batch", "--equalize", "--jobs", jobs_small, "-o", out_small, src, "--format", "png")
C.check(r.rc == 0 and "too few images for a GPU's start-up" in r.err and "ops on the GPU" not in r.err,
        f"set-up rule: {len(ALL)} images with --jobs {jobs_small} run on the CPU", str(r))
for rel in ALL_PNG:
    C.check(maxdiff(os.path.join(out_small, rel), os.path.join(tmp, "cpu_eq", rel)) == 0, f"set-up rule: {rel}")
r = imgpu("batch", "--equalize", "--jobs", "1", "-o", out_small + "1", src, "--format", "png")
C.check(r.rc == 0 and "ops on the GPU" in r.err, f"set-up rule: {len(ALL)} images with --jobs 1 (> 8) "
        "use the GPU", str(r))
r = imgpu("batch", "--equalize", "--jobs", jobs_small, "-o", out_small + "z", src, "--format", "png",
          env={"IMGPU_NVJPEG_CPU_FIRST": "0"})
C.check(r.rc == 0 and "ops on the GPU" in r.err, "IMGPU_NVJPEG_CPU_FIRST=0: ops on the GPU", str(r))

# a sticky fault (IMGPU_FAULT_INJECT=trap: the first GPU run of the process faults) fails the
# file it happened on, and only that one; the rest is finished on the CPU with the CPU's pixels
out_f = os.path.join(tmp, "gpu_fault")
r = imgpu("batch", "--equalize", "--jobs", "4", "-o", out_f, src, "--format", "png",
          env={"IMGPU_FAULT_INJECT": "trap", "IMGPU_NVJPEG_CPU_FIRST": "0"})
C.check(r.rc == 1 and r.err.count("failed '") == 1 and "IMGPU_FAULT_INJECT" in r.err
        and f"{len(ALL) - 1} done, 0 skipped, 1 failed" in r.err, "sticky fault: one file fails", str(r))
written = rels(out_f)
C.check(len(written) == len(ALL) - 1, f"sticky fault: {len(written)} of {len(ALL)} written")
for rel in written:
    C.check(maxdiff(os.path.join(out_f, rel), os.path.join(tmp, "cpu_eq", rel)) == 0, f"after the fault: {rel}")

# 16-bit images: equalize and rotation on the GPU stage equal the single commands, and the
# rotation equals the CPU batch bit for bit (the GPU uses the CPU's arithmetic at 16 bits)
src16 = os.path.join(tmp, "src16")
os.makedirs(src16)
for a in os.listdir(assets):
    if "16" in a and a.endswith(".png"):
        shutil.copy(os.path.join(assets, a), src16)
if os.listdir(src16):
    out16 = os.path.join(tmp, "gpu16")
    r = imgpu("batch", "--equalize", "--device", "cuda", "-o", out16, src16)
    C.check(r.rc == 0, "16-bit equalize on the GPU stage", str(r))
    for a in os.listdir(src16):
        s16 = os.path.join(tmp, "s16_" + a)
        single("equalize", os.path.join(src16, a), s16, "--device", "cuda", "--quiet")
        C.check(maxdiff(os.path.join(out16, a), s16) == 0, f"16-bit {a}: batch equals the single command")
    for dev in ("cuda", "cpu"):
        r = imgpu("batch", "--rotate", "30", "--filter", "bicubic", "--device", dev, "-o",
                  os.path.join(tmp, "rot16_" + dev), src16)
        C.check(r.rc == 0, f"16-bit rotation, batch --device {dev}", str(r))
    for a in os.listdir(src16):
        s16 = os.path.join(tmp, "r16_" + a)
        single("rotate", os.path.join(src16, a), s16, "--angle", "30", "--filter", "bicubic", "--device", "cuda",
               "--quiet")
        g = os.path.join(tmp, "rot16_cuda", a)
        C.check(px(g) is not None and px(g).dtype == np.uint16, f"16-bit rotation {a}: the output is 16-bit")
        C.check(maxdiff(g, os.path.join(tmp, "rot16_cpu", a)) == 0, f"16-bit rotation {a}: GPU batch equals CPU batch")
        C.check(maxdiff(g, s16) == 0, f"16-bit rotation {a}: batch equals the single command")
    # two GPUs: the 16-bit kernels that opt in to 128 KiB of shared memory and run as thread
    # block clusters are set up per device (kernels/per_device.cuh), so GPU 1 must work too
    src16x = os.path.join(tmp, "src16x")  # eight copies of each, so that both GPUs get some
    os.makedirs(src16x)
    for a in os.listdir(src16):
        for k in range(8):
            shutil.copy(os.path.join(src16, a), os.path.join(src16x, f"{k}_{a}"))
    for op in (["--equalize"], ["--clahe"]):
        tag = op[0][2:]
        # two GPUs first: on a one-GPU machine the one-GPU reference batch is not needed
        two = os.path.join(tmp, "g16two_" + tag)
        r = imgpu("batch", *op, "--devices", "0,1", "-o", two, src16x)
        if r.rc == 1 and "there is no GPU 1" in r.err:
            print(f"two GPUs, 16-bit {tag}: SKIPPED (this machine has one GPU)")
            continue
        C.check(r.rc == 0 and "ops on the GPU" in r.err, f"16-bit {tag}, --devices 0,1", str(r))
        one = os.path.join(tmp, "g16one_" + tag)
        r = imgpu("batch", *op, "--device", "cuda", "-o", one, src16x, "--quiet")
        C.check(r.rc == 0, f"16-bit {tag}, one GPU", str(r))
        for a in os.listdir(src16x):
            C.check(maxdiff(os.path.join(two, a), os.path.join(one, a)) == 0,
                    f"16-bit {tag} {a}: --devices 0,1 equals one GPU")
        print(f"two GPUs, 16-bit {tag}: tested (--devices 0,1)")

# a corrupt file among GPU ones fails alone
with open(os.path.join(assets, "chelsea.png"), "rb") as f:
    data = f.read()
with open(os.path.join(src, "gen", "g05x.png"), "wb") as f:
    f.write(data[: len(data) // 3])
out_bad = os.path.join(tmp, "gpu_bad")
r = imgpu("batch", "--equalize", "--device", "cuda", "-o", out_bad, src)
C.check(r.rc == 1 and "g05x.png" in r.err and f"{len(ALL)} done, 0 skipped, 1 failed" in r.err,
        "a corrupt file fails alone on the GPU path", str(r))

RUN.close()
rc = C.end()
cc.cleanup(tmp, rc != 0)
sys.exit(rc)

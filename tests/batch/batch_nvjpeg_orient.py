"""batch_nvjpeg_orient.py — JPEGs with an EXIF orientation in a GPU batch (issue 30; label gpu):
nvJPEG decodes them and the GPU turns them upright (the flip op, imgpu_op_flip_for_orientation)
before the batch's ops, instead of sending them to libjpeg-turbo. Photos (RGB, 4:2:0, odd and
even sizes) and a gray one, each saved 8 times with the same pixels and quality (so the same
coded data) and EXIF orientation 1..8:
  - first, everywhere, on the CPU batch: each orientation's output is the orientation-1 output
    turned as the EXIF definition says (numpy below), exactly, for --rotate 0 (the decode alone)
    and --equalize (which commutes with any pixel permutation): this holds the transforms of
    this script to the CPU load's, before they judge the GPU;
  - then on the GPU (--device cuda, IMGPU_NVJPEG_CPU_FIRST=0; exit 77 without a usable GPU or
    without nvJPEG in the build): every file decoded by nvJPEG (none on the CPU), the summary
    counting those turned upright; the same exact rule (each output the orientation-1 output
    turned, so the turn adds no error of its own); the decode alone within docs/gpu.md's bound
    of libjpeg-turbo's upright decode (cv2.imread, which applies the EXIF orientation: the
    CPU-oriented decode), as batch_nvjpeg.py holds upright files; equalized and GPU-encoded
    JPEGs within its bound of the CPU batch's, with EXIF Orientation 1 and the upright size;
    --no-auto-orient: the stored pixels and the tag kept.

usage: batch_nvjpeg_orient.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
    from PIL import Image
except ImportError:
    print("skip: batch_nvjpeg_orient needs cv2, numpy and PIL")
    sys.exit(77)

# batch_nvjpeg.py's bounds (docs/gpu.md, "Agreement"): nvJPEG's decode against libjpeg-turbo's,
# and equalize + encode at quality 92 against the CPU batch.
DECODE_MAX_DIFF = 4
DECODE_MIN_PSNR = 60.0
DECODE_MAX_MEAN = 0.05
EQ_MIN_PSNR = 45.0

binary, tmp, assets = cc.setup("batch_nvjpeg_orient")
C = cc.Checker("batch_nvjpeg_orient")


def imgpu(*args, env=None):
    e = dict(os.environ, IMGPU_NVJPEG_CPU_FIRST="0")
    e.update(env or {})
    p = subprocess.run([binary] + [str(a) for a in args], capture_output=True, timeout=600, env=e)
    return cc.Result([str(a) for a in args], p.returncode, p.stdout.decode(errors="replace"),
                     p.stderr.decode(errors="replace"), False)


def psnr(a, b):
    d = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if d == 0 else 10 * np.log10(255.0 ** 2 / d)


def shown(a, o):
    """What EXIF orientation o shows of stored pixels a (TIFF/EXIF: where the stored 0th row
    and 0th column go): 2 mirrored left-right, 3 turned 180, 4 mirrored top-bottom, 5
    transposed, 6 turned 90 clockwise, 7 transverse, 8 turned 90 counterclockwise."""
    return {1: lambda x: x,
            2: lambda x: x[:, ::-1],
            3: lambda x: x[::-1, ::-1],
            4: lambda x: x[::-1, :],
            5: lambda x: np.swapaxes(x, 0, 1),
            6: lambda x: np.rot90(x, -1),
            7: lambda x: np.swapaxes(x, 0, 1)[::-1, ::-1],
            8: lambda x: np.rot90(x, 1)}[o](a)


# ---- the files: each photo 8 times, the same coded data, orientation 1..8 ---------------------
src = os.path.join(tmp, "src")
os.makedirs(src)
chelsea = cv2.cvtColor(cv2.imread(os.path.join(assets, "chelsea.png"), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
coffee = cv2.cvtColor(cv2.imread(os.path.join(assets, "coffee.png"), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
photos = {
    "chelsea": Image.fromarray(chelsea),                                      # 451 x 300
    "coffee": Image.fromarray(coffee[:333, :517].copy()),                    # odd: 517 x 333
    "gray": Image.fromarray(cv2.imread(os.path.join(assets, "camera.png"), cv2.IMREAD_GRAYSCALE)),
}
names = []
for p, im in photos.items():
    for o in range(1, 9):
        ex = Image.Exif()
        ex[0x0112] = o
        ex[0x010F] = "imgpu-orient"
        f = f"{p}_o{o}.jpg"
        im.save(os.path.join(src, f), quality=92, exif=ex.tobytes())
        names.append(f)
# the same coded data in all 8: only the EXIF differs (else the exact checks below mean nothing)
for p in photos:
    def scan(f):
        b = open(os.path.join(src, f), "rb").read()
        return b[b.find(b"\xff\xda"):]
    C.check(all(scan(f"{p}_o{o}.jpg") == scan(f"{p}_o1.jpg") for o in range(2, 9)),
            f"{p}: the 8 files share their coded data")


def load(path):
    return cv2.imread(path, cv2.IMREAD_UNCHANGED)


def exact_rule(out, what):
    """Each orientation's output is the orientation-1 output turned as the EXIF says."""
    for p in photos:
        base = load(os.path.join(out, f"{p}_o1.png"))
        for o in range(2, 9):
            a = load(os.path.join(out, f"{p}_o{o}.png"))
            want = None if base is None else shown(base, o)
            C.check(a is not None and want is not None and a.shape == want.shape and np.array_equal(a, want),
                    f"{what}: {p} orientation {o} is orientation 1's output turned, exactly",
                    f"shapes {None if a is None else a.shape} {None if want is None else want.shape}")


# ---- the CPU batch: this script's transforms against the CPU load's turn -------------------------
out_c0, out_ce, out_cj = (os.path.join(tmp, d) for d in ("cpu_dec", "cpu_eq", "cpu_eqj"))
for out, op in ((out_c0, ["--rotate", "0"]), (out_ce, ["--equalize"])):
    r = imgpu("batch", *op, "--device", "cpu", "--format", "png", "--quiet", "-o", out, src)
    C.check(r.rc == 0, f"CPU batch {op[0]}", str(r))
    exact_rule(out, f"CPU {op[0]}")
r = imgpu("batch", "--equalize", "--device", "cpu", "--quiet", "-o", out_cj, src)
C.check(r.rc == 0, "CPU batch --equalize to JPEG", str(r))

# ---- the GPU: skipped (77) where there is none, or no nvJPEG --------------------------------
if "nvJPEG: yes" not in imgpu("--version").out:
    print("skip: imgpu was built without nvJPEG (the CPU half passed)" if C.failures == 0 else "")
    rc = C.end()
    cc.cleanup(tmp, rc != 0)
    sys.exit(rc or 77)
r = imgpu("batch", "--equalize", "--device", "cuda", "-o", os.path.join(tmp, "probe"),
          os.path.join(assets, "camera.png"))
if r.rc != 0 and ("no usable GPU" in r.err or "without CUDA support" in r.err):
    print("skip: " + r.err.strip().splitlines()[-1])
    rc = C.end()
    cc.cleanup(tmp, rc != 0)
    sys.exit(rc or 77)

SUMMARY = (r"JPEG \(nvJPEG\): (\d+) decoded by the GPU's hardware engines, (\d+) by its CUDA decoder, "
           r"(\d+) on the CPU; (\d+) encoded on the GPU(?:; (\d+) turned upright on the GPU)?")
n_turned = sum(1 for f in names if not f.endswith("_o1.jpg"))

# the decode alone (--rotate 0, PNG): nvJPEG, then the turn on the GPU
out_g0 = os.path.join(tmp, "gpu_dec")
r = imgpu("batch", "--rotate", "0", "--device", "cuda", "--format", "png", "-o", out_g0, src)
m = re.search(SUMMARY, r.err)
C.check(r.rc == 0 and m is not None, "GPU batch --rotate 0: the summary says where the JPEGs went", str(r))
if m:
    hw, cu, cp = int(m.group(1)), int(m.group(2)), int(m.group(3))
    C.check(hw + cu == len(names) and cp == 0, f"all {len(names)} decoded by nvJPEG, none on the CPU",
            m.group(0))
    C.check(int(m.group(5) or 0) == n_turned, f"{n_turned} turned upright on the GPU", m.group(0))
exact_rule(out_g0, "GPU --rotate 0")
for f in names:
    a = load(os.path.join(out_g0, f[:-4] + ".png"))
    # libjpeg-turbo's decode turned upright by OpenCV (imread applies the EXIF orientation)
    b = cv2.imread(os.path.join(src, f), cv2.IMREAD_GRAYSCALE if f.startswith("gray") else cv2.IMREAD_COLOR)
    if not C.check(a is not None and b is not None and a.shape == b.shape, f"{f}: decoded upright, its shape",
                   f"{None if a is None else a.shape} {None if b is None else b.shape}"):
        continue
    d = np.abs(a.astype(np.int32) - b.astype(np.int32))
    C.check(psnr(a, b) >= DECODE_MIN_PSNR and d.mean() <= DECODE_MAX_MEAN and d.max() <= DECODE_MAX_DIFF,
            f"{f}: nvJPEG + the GPU's turn within the stated bound of libjpeg-turbo's upright decode",
            f"PSNR {psnr(a, b):.2f} max {d.max()} mean {d.mean():.3f}")

# equalized (PNG: exact rule; JPEG encoded on the GPU: the CPU batch's bound, EXIF upright)
out_ge, out_gj = os.path.join(tmp, "gpu_eq"), os.path.join(tmp, "gpu_eqj")
r = imgpu("batch", "--equalize", "--device", "cuda", "--format", "png", "--quiet", "-o", out_ge, src)
C.check(r.rc == 0, "GPU batch --equalize to PNG", str(r))
exact_rule(out_ge, "GPU --equalize")
r = imgpu("batch", "--equalize", "--device", "cuda", "-o", out_gj, src)
m = re.search(SUMMARY, r.err)
C.check(r.rc == 0 and m is not None and int(m.group(4)) == len(names),
        f"GPU batch --equalize to JPEG: all {len(names)} encoded on the GPU", str(r))
for f in names:
    a, b = load(os.path.join(out_gj, f)), load(os.path.join(out_cj, f))
    ok = a is not None and b is not None and a.shape == b.shape
    C.check(ok and psnr(a, b) >= EQ_MIN_PSNR, f"{f}: equalized on the GPU within {EQ_MIN_PSNR} dB of the CPU batch",
            f"PSNR {psnr(a, b) if ok else 0:.2f}")
    im = Image.open(os.path.join(out_gj, f))
    w0, h0 = photos[f.split("_o")[0]].size
    o = int(f[-5])
    want = (h0, w0) if o >= 5 else (w0, h0)
    ex = im.getexif()
    C.check(im.size == want and ex.get(0x0112, 1) == 1 and ex.get(0x010F) == "imgpu-orient",
            f"{f}: the output is {want[0]}x{want[1]}, EXIF Orientation 1, the rest of the EXIF kept",
            f"{im.size} orientation {ex.get(0x0112)} make {ex.get(0x010F)}")

# --no-auto-orient: nothing turned, the tag kept
out_gn = os.path.join(tmp, "gpu_noauto")
r = imgpu("batch", "--rotate", "0", "--device", "cuda", "--no-auto-orient", "-o", out_gn, src)
m = re.search(SUMMARY, r.err)
C.check(r.rc == 0 and m is not None and int(m.group(5) or 0) == 0, "--no-auto-orient: nothing turned", str(r))
for p, im0 in photos.items():
    for o in (1, 6):
        out = Image.open(os.path.join(out_gn, f"{p}_o{o}.jpg"))
        C.check(out.size == im0.size and out.getexif().get(0x0112, 1) == o,
                f"--no-auto-orient {p} orientation {o}: the stored size, the tag kept",
                f"{out.size} {out.getexif().get(0x0112)}")

rc = C.end()
cc.cleanup(tmp, rc != 0)
sys.exit(rc)

"""opencv_ref.py — OpenCV reference implementations of imgpu's operations, shared by the
OpenCV cross-checks (tests/opencv/opencv_*.py, tests/io/io_jpeg_cv2.py) and the golden generator
(tests/golden/make_golden.py).

Runs under Debian's /usr/bin/python3 (python3-opencv, python3-numpy); the `python3` on PATH
may lack both. Images here are numpy arrays in imgpu's channel order (gray, gray+alpha, RGB,
RGBA), not OpenCV's BGR: read() and write() convert at the boundary.
"""
import subprocess
import tempfile
import os
import shutil

import cv2
import numpy as np


def read(path, depth=8):
    """Read an image as imgpu would see it: gray, gray+alpha, RGB or RGBA, with `depth` bits
    per sample (8: uint8; 16: uint16, as a 16-bit PNG holds them). Any other depth is an error."""
    im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if im is None:
        raise RuntimeError(f"cv2.imread could not read {path}")
    want = {8: np.uint8, 16: np.uint16}[depth]
    if im.dtype != want:
        raise RuntimeError(f"{path}: expected {depth}-bit samples, got {im.dtype}")
    if im.ndim == 3 and im.shape[2] == 3:
        im = cv2.cvtColor(im, cv2.COLOR_BGR2RGB)
    elif im.ndim == 3 and im.shape[2] == 4:
        im = cv2.cvtColor(im, cv2.COLOR_BGRA2RGBA)
    return im


def read_stb(path, stb_decode):
    """Read through stb_image (the decoder imgpu uses for PNG, BMP, TGA, PNM) via the small
    tests/golden/stb_decode.c helper. (JPEG is decoded by libjpeg-turbo in imgpu as in
    OpenCV, so read() serves it; stb's JPEG decoder differed from libjpeg by a level or two.)"""
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "decoded.png")
        subprocess.run([stb_decode, path, png], check=True)
        return read(png)


def write(path, im, level=9):
    """Write an image given in imgpu's channel order (PNG, zlib level `level`)."""
    if im.ndim == 3 and im.shape[2] == 3:
        im = cv2.cvtColor(im, cv2.COLOR_RGB2BGR)
    elif im.ndim == 3 and im.shape[2] == 4:
        im = cv2.cvtColor(im, cv2.COLOR_RGBA2BGRA)
    if not cv2.imwrite(path, im, [cv2.IMWRITE_PNG_COMPRESSION, level]):
        raise RuntimeError(f"cv2.imwrite could not write {path}")


def channels(im):
    return 1 if im.ndim == 2 else im.shape[2]


def equalize(im, mode="luminance"):
    """imgpu equalize, as OpenCV computes it.

    gray (and gray+alpha): cv2.equalizeHist on the gray channel.
    color, luminance: RGB -> YCrCb (cv2.cvtColor, BT.601 full range in OpenCV's 14-bit fixed
        point), cv2.equalizeHist on Y, YCrCb -> RGB.
    color, per-channel: cv2.equalizeHist on R, G and B independently.
    Alpha, where present, passes through untouched; every pixel counts in the histogram.
    Exception (imgpu's documented convention): color luminance mode with a constant Y returns
    the image unchanged.
    """
    c = channels(im)
    if c == 1:
        return cv2.equalizeHist(im)
    out = im.copy()
    if c == 2:
        out[..., 0] = cv2.equalizeHist(np.ascontiguousarray(im[..., 0]))
        return out
    rgb = np.ascontiguousarray(im[..., :3])
    if mode == "luminance":
        ycc = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)
        if ycc[..., 0].min() == ycc[..., 0].max():
            # imgpu's one documented departure (ops.h, src/cpu/equalize.c): a constant Y
            # equalizes to itself, so the image comes back unchanged, without the lossy
            # RGB -> YCrCb -> RGB round trip OpenCV would still apply.
            return out
        ycc[..., 0] = cv2.equalizeHist(np.ascontiguousarray(ycc[..., 0]))
        out[..., :3] = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)
    elif mode == "per-channel":
        for k in range(3):
            out[..., k] = cv2.equalizeHist(np.ascontiguousarray(rgb[..., k]))
    else:
        raise ValueError(f"unknown equalize mode {mode!r}")
    return out


def rotate_crop_linear(im, angle):
    """cv2.warpAffine about ((w-1)/2, (h-1)/2) — imgpu's centre (w/2, h/2) with pixel centres
    at (x + 0.5, y + 0.5) — counterclockwise positive, same size, bilinear, zero border.
    uint8 and uint16 images alike (the result has the input's dtype)."""
    h, w = im.shape[:2]
    m = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), angle, 1.0)
    return cv2.warpAffine(im, m, (w, h), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0), m


def interior_mask(shape, m, margin):
    """Output pixels whose source point (inverse of the 2x3 forward matrix m) lies at least
    `margin` pixels inside the source image and which are at least `margin` pixels from the
    output border: away from the rotated corners and edges, where border handling differs."""
    h, w = shape[:2]
    inv = cv2.invertAffineTransform(m)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    sx = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    sy = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    inside = (sx >= margin) & (sx <= w - 1 - margin) & (sy >= margin) & (sy <= h - 1 - margin)
    border = (xs >= margin) & (xs <= w - 1 - margin) & (ys >= margin) & (ys <= h - 1 - margin)
    return inside & border


def psnr(a, b, mask=None, peak=255.0):
    """PSNR in dB against `peak` (255 for 8-bit samples, 65535 for 16-bit)."""
    d = a.astype(np.float64) - b.astype(np.float64)
    if mask is not None:
        d = d[mask]
    mse = float(np.mean(d * d)) if d.size else 0.0
    return float("inf") if mse == 0 else 10.0 * np.log10(peak * peak / mse)


# The reasons for "there is no GPU to run on" (src/backend/ops.c, src/cuda/device.c after "no usable
# GPU: ", the CUDA runtime's strings): only these turn a --device cuda failure into a skip.
# "no usable GPU" alone is not enough: device.c also prefixes real failures (a failing probe
# kernel, a build for the wrong architecture) with it, and those must fail. Same list as
# tests/golden/run_case.sh.
NO_GPU = ("built without CUDA support", "driver version is insufficient", "no NVIDIA GPU or driver was found",
          "no NVIDIA driver is loaded", "no CUDA-capable device", "older than this imgpu's runtime")
SKIP = 77


class NoGPU(Exception):
    pass


_RUNNERS = {}


def run_imgpu(imgpu, args, device):
    """Run `imgpu ARGS --device DEVICE`; raise NoGPU when DEVICE is cuda and imgpu says that no
    usable GPU is there, RuntimeError on any other failure."""
    cmd = [imgpu] + list(args) + ["--device", device]
    if os.environ.get("IMGPU_INPROC"):
        # the .cuda variants: hundreds of commands through one cli_inproc (cli_common.Runner)
        import cli_common
        if imgpu not in _RUNNERS:
            _RUNNERS[imgpu] = cli_common.Runner(imgpu, timeout=120)
        r = _RUNNERS[imgpu]
        res = r.run(cmd[1:])
        p = subprocess.CompletedProcess(cmd, -1 if res.rc is None else res.rc, res.out, res.err)
        if res.rc is None:
            p.stderr += f" (cli_inproc: {'timed out' if res.timed_out else 'died'})"
    else:
        p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stdout + p.stderr).strip()
        if device == "cuda" and p.returncode == 1 and any(s in msg for s in NO_GPU):
            raise NoGPU(msg)
        raise RuntimeError(f"{' '.join(cmd)} exited with {p.returncode}: {msg}")
    return p


def run_batch(imgpu, outdir, inputs, ops, device):
    """Run `imgpu batch OPS --device DEVICE -o OUTDIR --overwrite INPUTS...` (one process, so
    one CUDA context, for many cases) into a fresh OUTDIR, and return {input: expected output
    path} (the default naming, {stem}.png: every input here is a PNG with its own stem).
    Raises NoGPU as run_imgpu does, RuntimeError when the batch as a whole failed or its
    summary does not say that the ops ran on the requested backend. A single file that failed
    is no error here: its output is missing and the caller fails that case (the reason is in
    the returned process's stderr)."""
    stems = [os.path.splitext(os.path.basename(p))[0] for p in inputs]
    if len(set(stems)) != len(stems):
        raise ValueError("batch inputs must have distinct names")
    shutil.rmtree(outdir, ignore_errors=True)  # no stale output may pass for a new one
    os.makedirs(os.path.dirname(os.path.abspath(outdir)), exist_ok=True)
    cmd = [imgpu, "batch"] + list(ops) + ["--device", device, "-o", outdir, "--overwrite",
                                          "--format", "png"] + list(inputs)
    p = subprocess.run(cmd, capture_output=True, text=True)
    msg = (p.stdout + p.stderr).strip()
    if p.returncode != 0 and device == "cuda" and p.returncode == 1 and any(s in msg for s in NO_GPU):
        raise NoGPU(msg)
    where = "ops on the GPU" if device == "cuda" else "ops on the CPU"
    if p.returncode not in (0, 1) or where not in p.stderr:
        raise RuntimeError(f"{' '.join(cmd)} exited with {p.returncode} without '{where}': {msg}")
    outs = {path: os.path.join(outdir, stem + ".png") for path, stem in zip(inputs, stems)}
    return outs, p

"""geom_ops.py — the geometry ops of issue 28 (flip, crop, convert) through the CLI and batch,
against numpy transliterations of their stated rules (src/op/flip.c, src/op/crop.c), at 8 and
16 bits, gray, gray+alpha, RGB and RGBA, at edge sizes (1x1, 1xN, Nx1, odd); OpenCV's
cv2.flip / cv2.transpose on a photo where cv2 is installed.

    geom_ops.py IMGPU TMP_ROOT ASSETS [cpu|cuda]

The cuda run exits 77 (skipped) when imgpu says there is no usable GPU. Images travel as PNG
written and read here (a small codec: every filter type on reading), so 16-bit gray+alpha
needs no third-party reader."""
import json
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as C  # noqa: E402
import exif_blob  # noqa: E402

try:
    import numpy as np  # noqa: E402
except ImportError:
    print("SKIP: this python3 has no numpy")
    sys.exit(77)

DEVICE = sys.argv.pop(4) if len(sys.argv) == 5 else "cpu"
binary, tmp, assets = C.setup("geom_ops")
K = C.Checker("geom_ops." + DEVICE)
NO_GPU = ("built without CUDA support", "no NVIDIA GPU or driver was found", "driver version is insufficient",
          "no NVIDIA driver is loaded", "no CUDA-capable device", "older than this imgpu")


# ---- PNG, 8 or 16 bits, 1..4 channels ----------------------------------------------------------
def png_write(path, a, exif=None):
    a = np.asarray(a)
    if a.ndim == 2:
        a = a[:, :, None]
    h, w, c = a.shape
    depth = 16 if a.dtype == np.uint16 else 8
    ihdr = struct.pack(">IIBBBBB", w, h, depth, {1: 0, 2: 4, 3: 2, 4: 6}[c], 0, 0, 0)
    rows = a.astype(">u2" if depth == 16 else np.uint8).reshape(h, -1).tobytes()
    stride = w * c * depth // 8
    raw = b"".join(b"\x00" + rows[y * stride:(y + 1) * stride] for y in range(h))
    body = C._chunk(b"IHDR", ihdr) + (C._chunk(b"eXIf", exif) if exif else b"")
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + body + C._chunk(b"IDAT", zlib.compress(raw)) + C._chunk(b"IEND", b""))


def png_read(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ct, _, _, interlace = ihdr
    assert interlace == 0 and ct in (0, 2, 4, 6), ihdr
    c = {0: 1, 4: 2, 2: 3, 6: 4}[ct]
    bpp = c * depth // 8
    stride = w * bpp
    raw = zlib.decompress(idat)
    out = bytearray(h * stride)
    prev = bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            cc = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - cc
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - cc)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else cc)) & 255
        out[y * stride:(y + 1) * stride] = line
        prev = line
    arr = np.frombuffer(bytes(out), dtype=">u2" if depth == 16 else np.uint8).astype(
        np.uint16 if depth == 16 else np.uint8)
    return arr.reshape(h, w, c)


def imgpu(*args):
    return C.run(binary, [str(a) for a in args])


def skip_if_no_gpu(r):
    if DEVICE == "cuda" and r.rc != 0 and any(s in r.err for s in NO_GPU):
        print("SKIP: no usable GPU:", r.err.strip())
        C.cleanup(tmp, False)
        sys.exit(77)


def noise(h, w, c, depth, seed):
    rng = np.random.default_rng(seed)
    hi = 65536 if depth == 16 else 256
    return rng.integers(0, hi, size=(h, w, c), dtype=np.uint32).astype(np.uint16 if depth == 16 else np.uint8)


def run_op(op, a, *opts, name="x"):
    """imgpu OP on array a; (result array or None, Result)."""
    src, dst = os.path.join(tmp, name + ".in.png"), os.path.join(tmp, name + ".out.png")
    png_write(src, a)
    if os.path.exists(dst):
        os.remove(dst)
    r = imgpu(op, src, dst, *opts, "--device", DEVICE)
    skip_if_no_gpu(r)
    return (png_read(dst) if r.rc == 0 and os.path.exists(dst) else None), r


def same(got, want, what, r=None):
    ok = got is not None and got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    detail = str(r) if r is not None else ""
    if got is not None and not ok:
        detail += f"\n got {got.shape} {got.dtype}, want {want.shape} {want.dtype}"
    return K.check(ok, what, detail)


# ---- flip ---------------------------------------------------------------------------------------
def flip_ref(a, h, v, t):
    """src/op/flip.c: the mirrors, then the transpose."""
    if h:
        a = a[:, ::-1]
    if v:
        a = a[::-1]
    if t:
        a = a.transpose(1, 0, 2)
    return np.ascontiguousarray(a)


COMBOS = [(h, v, t) for h in (0, 1) for v in (0, 1) for t in (0, 1) if h or v or t]


def flags(h, v, t):
    return [f for f, on in (("--horizontal", h), ("--vertical", v), ("--transpose", t)) if on]


def test_flip():
    seed = 1
    for depth in (8, 16):
        for c in (1, 2, 3, 4):
            for (hh, ww) in ((1, 1), (1, 7), (6, 1), (13, 6)):
                a = noise(hh, ww, c, depth, seed)
                seed += 1
                # every combination on the odd size, two on the edge sizes (the rule is one formula)
                combos = COMBOS if (hh, ww) == (13, 6) else [(1, 0, 0), (1, 1, 1)]
                for (h, v, t) in combos:
                    got, r = run_op("flip", a, *flags(h, v, t))
                    same(got, flip_ref(a, h, v, t), f"flip {flags(h, v, t)} {ww}x{hh} c={c} {depth}-bit", r)
    # nothing asked: a copy, with a notice
    a = noise(3, 4, 3, 8, 9)
    got, r = run_op("flip", a, name="none")
    same(got, a, "flip without a direction copies", r)
    K.check("no --horizontal, --vertical or --transpose" in r.err, "flip without a direction says so", str(r))


def test_flip_cv2():
    try:
        import cv2
    except ImportError:
        print("note: no cv2: the cv2.flip / cv2.transpose cross-check is skipped")
        return
    for asset in ("chelsea.png", "horse.png", "camera16.png"):
        a = cv2.imread(os.path.join(assets, asset), cv2.IMREAD_UNCHANGED)
        for opts, want in ((["--horizontal"], cv2.flip(a, 1)), (["--vertical"], cv2.flip(a, 0)),
                           (["--horizontal", "--vertical"], cv2.flip(a, -1)), (["--transpose"], cv2.transpose(a)),
                           (["--horizontal", "--transpose"], cv2.transpose(cv2.flip(a, 1)))):
            out = os.path.join(tmp, "cv2." + asset)
            r = imgpu("flip", os.path.join(assets, asset), out, *opts, "--device", DEVICE)
            skip_if_no_gpu(r)
            got = cv2.imread(out, cv2.IMREAD_UNCHANGED) if r.rc == 0 else None
            K.check(got is not None and np.array_equal(got, want), f"flip {opts} {asset} == cv2", str(r))


def test_flip_batch_and_orientation():
    a = noise(5, 9, 3, 8, 77)
    src = os.path.join(tmp, "b.png")
    png_write(src, a)
    out = os.path.join(tmp, "batch_flip")
    r = imgpu("batch", "--flip", "--horizontal", "--vertical", "-o", out, src, "--device", DEVICE)
    skip_if_no_gpu(r)
    got = png_read(os.path.join(out, "b.png")) if r.rc == 0 else None
    same(got, a[::-1, ::-1], "batch --flip --horizontal --vertical: the 180-degree turn", r)
    r = imgpu("batch", "--horizontal", "-o", out + "2", src)
    K.check(r.rc == 2 and "--horizontal must follow --flip" in r.err, "batch: --horizontal needs a --flip first",
            str(r))
    # Orientation 6 (turned 90 clockwise on display): load applies it, the output says 1 and its
    # pixels are the upright image flipped.
    stored = noise(4, 7, 3, 8, 78)
    upright = np.ascontiguousarray(np.rot90(stored, -1))   # orientation 6: 90 degrees clockwise
    o6 = os.path.join(tmp, "o6.png")
    png_write(o6, stored, exif=exif_blob.tiff([(0x0112, exif_blob.SHORT, 6)]))
    res = os.path.join(tmp, "o6.flip.png")
    r = imgpu("flip", o6, res, "--horizontal", "--device", DEVICE)
    skip_if_no_gpu(r)
    same(png_read(res) if r.rc == 0 else None, upright[:, ::-1], "flip of an orientation-6 PNG: the upright pixels", r)
    info = imgpu("info", "--json", res)
    try:
        o = json.loads(info.out)
        o = (o[0] if isinstance(o, list) else o).get("orientation")
    except ValueError:
        o = None
    K.check(o == 1, "flip's output of an orientation-6 PNG says orientation 1", str(info))


# ---- convert ------------------------------------------------------------------------------------
def test_convert():
    """imgpu convert: pixels unchanged through a format round trip (PNG -> TIFF -> PNG) at each
    depth and layout; batch without an op converts (before issue 28 it was a usage error)."""
    seed = 500
    for depth in (8, 16):
        for c in (1, 2, 3, 4):
            for (hh, ww) in ((1, 1), (1, 5), (11, 7)):
                a = noise(hh, ww, c, depth, seed)
                seed += 1
                src = os.path.join(tmp, "cv.png")
                tif, back = os.path.join(tmp, "cv.tif"), os.path.join(tmp, "cv.back.png")
                png_write(src, a)
                r1 = imgpu("convert", src, tif, "--device", DEVICE)
                skip_if_no_gpu(r1)
                r2 = imgpu("convert", tif, back, "--device", DEVICE)
                same(png_read(back) if r1.rc == 0 and r2.rc == 0 else None, a,
                     f"convert png -> tif -> png {ww}x{hh} c={c} {depth}-bit", str(r1) + str(r2))
    a = noise(6, 5, 4, 16, 600)
    src = os.path.join(tmp, "bc.png")
    png_write(src, a)
    out = os.path.join(tmp, "batch_convert")
    r = imgpu("batch", "-o", out, src, "--format", "tif", "--device", DEVICE)
    skip_if_no_gpu(r)
    ok = r.rc == 0 and os.path.exists(os.path.join(out, "bc.tif"))
    K.check(ok, "batch without an op converts (writes --format)", str(r))
    if ok:
        back = os.path.join(tmp, "bc.back.png")
        r2 = imgpu("convert", os.path.join(out, "bc.tif"), back)
        same(png_read(back) if r2.rc == 0 else None, a, "batch without an op: pixels unchanged", r2)
    r = imgpu("batch", "--convert", "-o", out + "2", src, "--device", DEVICE)
    got = png_read(os.path.join(out + "2", "bc.png")) if r.rc == 0 else None
    same(got, a, "batch --convert: pixels unchanged", r)


test_flip()
test_flip_cv2()
test_convert()
test_flip_batch_and_orientation()
rc = K.end()
C.cleanup(tmp, rc != 0)
sys.exit(rc)

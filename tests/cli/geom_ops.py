"""geom_ops.py — the geometry ops of issue 28 (flip, crop, convert) through the CLI and batch,
against numpy transliterations of their stated rules (src/op/flip.c, src/op/crop.c), at 8 and
16 bits, gray, gray+alpha, RGB and RGBA, at edge sizes (1x1, 1xN, Nx1, odd); OpenCV's
cv2.flip / cv2.transpose on a photo where cv2 is installed.

    geom_ops.py IMGPU TMP_ROOT ASSETS [cpu|cuda [TEST,...]]

The cuda run exits 77 (skipped) when imgpu says there is no usable GPU; with IMGPU_INPROC (the
.cuda test) its commands run through cli_inproc, one process (cli_common.Runner). Images travel as PNG
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

# an optional 6th argument: the test functions to run (comma-separated; default every one), so
# that the slow CUDA variant runs as several CTest entries side by side
ONLY = sys.argv.pop(5).split(",") if len(sys.argv) == 6 else None
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


# the .cuda variant (IMGPU_INPROC set): every command after the first of its name in one
# cli_inproc process, so CUDA starts once, not ~800 times (cli_common.Runner)
RUNNER = C.Runner(binary)


def imgpu(*args):
    return RUNNER.run(args)


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


# ---- crop ---------------------------------------------------------------------------------------
GRAVITIES = ["northwest", "north", "northeast", "west", "center", "east", "southwest", "south", "southeast"]


def gravity_ref(a, g, bw, bh):
    """src/op/crop.c: ImageMagick's placement, integer arithmetic (floor(iw/2) - floor(W/2))."""
    ih, iw = a.shape[:2]
    col, row = GRAVITIES.index(g) % 3, GRAVITIES.index(g) // 3
    x = 0 if col == 0 else iw // 2 - bw // 2 if col == 1 else iw - bw
    y = 0 if row == 0 else ih // 2 - bh // 2 if row == 1 else ih - bh
    return a[y:y + bh, x:x + bw]


def trim_ref(a):
    """src/op/crop.c: the bounding box of the pixels unlike the top-left one (all channels);
    one colour: the 1x1 top-left pixel."""
    diff = np.any(a != a[0, 0], axis=2)
    ys, xs = np.nonzero(diff)
    if len(xs) == 0:
        return a[:1, :1]
    return a[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def test_crop():
    seed = 900
    for depth in (8, 16):
        for c in (1, 2, 3, 4):
            for (hh, ww) in ((1, 1), (1, 7), (6, 1), (13, 10)):
                a = noise(hh, ww, c, depth, seed)
                seed += 1
                tag = f"{ww}x{hh} c={c} {depth}-bit"
                # --rect: numpy's slice; the whole image and the last pixel are boxes too
                for (x, y, w, h) in {(0, 0, ww, hh), (ww - 1, hh - 1, 1, 1), (ww // 3, hh // 4, ww - ww // 3, 1),
                                     (0, hh // 2, max(1, ww // 2), hh - hh // 2)}:
                    got, r = run_op("crop", a, "--rect", f"{x},{y},{w},{h}")
                    same(got, np.ascontiguousarray(a[y:y + h, x:x + w]), f"crop --rect {x},{y},{w},{h} {tag}", r)
                # --size with every gravity (odd and even sizes: ImageMagick's rounding)
                for g in (GRAVITIES if (hh, ww) == (13, 10) else ["center", "southeast"]):
                    for (bw, bh) in {(max(1, ww - 3), max(1, hh - 2)), (1, 1), (ww, hh)}:
                        got, r = run_op("crop", a, "--size", f"{bw}x{bh}", "--gravity", g)
                        same(got, np.ascontiguousarray(gravity_ref(a, g, bw, bh)),
                             f"crop --size {bw}x{bh} --gravity {g} {tag}", r)
                # --trim: a border of one colour around the noise, and an image of one colour
                hi = 65535 if depth == 16 else 255
                framed = np.zeros((hh + 5, ww + 4, c), a.dtype)
                framed[:] = hi // 3
                framed[2:2 + hh, 1:1 + ww] = a
                framed[2:2 + hh, 1:1 + ww][a == hi // 3] = hi   # no noise pixel equals the border
                got, r = run_op("crop", framed, "--trim")
                same(got, np.ascontiguousarray(trim_ref(framed)), f"crop --trim {tag}", r)
                K.check(got is None or got.shape[:2] == (hh, ww), f"crop --trim {tag}: the framed noise", str(r))
                flat = np.full((hh, ww, c), hi // 5, a.dtype)
                got, r = run_op("crop", flat, "--trim")
                same(got, flat[:1, :1], f"crop --trim of one colour {tag}: its 1x1 top-left pixel", r)
    # a lone pixel unlike the border, on each edge (the box's sides come from different rows)
    for (py, px) in ((0, 3), (4, 0), (6, 3), (4, 8), (0, 0)):
        a = np.full((7, 9, 3), 40, np.uint8)
        a[py, px] = (40, 40, 41)   # one channel, one level
        a[3, 4] = 200
        got, r = run_op("crop", a, "--trim", name="edge")
        same(got, np.ascontiguousarray(trim_ref(a)), f"crop --trim with a pixel at ({px}, {py})", r)
    # alpha counts: a transparent border around opaque pixels of the same colour
    a = np.zeros((5, 6, 4), np.uint8)
    a[1:4, 2:5] = (0, 0, 0, 255)
    got, r = run_op("crop", a, "--trim", name="alpha")
    same(got, a[1:4, 2:5], "crop --trim: alpha is a channel like the others", r)
    # nothing asked: a copy, with a notice
    a = noise(3, 4, 3, 8, 9)
    got, r = run_op("crop", a, name="none")
    same(got, a, "crop without a box copies", r)
    K.check("no --rect, --size, --trim or --inner" in r.err, "crop without a box says so", str(r))


def test_crop_refusals():
    """Out-of-range boxes are errors naming the file (exit 1, nothing written); sizes of 0 and
    two ways at once are refused; --inner needs a rotation before it."""
    a = noise(30, 40, 3, 8, 31)
    src = os.path.join(tmp, "ref.png")
    png_write(src, a)
    dst = os.path.join(tmp, "ref.out.png")
    cases = [
        (["--rect", "35,3,10,5"], 1, f"imgpu: cannot crop '{src}': the box 35,3,10,5 is outside the 40x30 image"),
        (["--rect", "0,0,41,1"], 1, f"imgpu: cannot crop '{src}': the box 0,0,41,1 is outside the 40x30 image"),
        (["--rect", "0,30,1,1"], 1, f"imgpu: cannot crop '{src}': the box 0,30,1,1 is outside the 40x30 image"),
        (["--rect", "2147483647,0,2147483647,1"], 1, "is outside the 40x30 image"),
        (["--size", "41x30"], 1, f"imgpu: cannot crop '{src}': the 41x30 box is larger than the 40x30 image"),
        (["--size", "40x31", "--gravity", "north"], 1, "the 40x31 box is larger than the 40x30 image"),
        (["--rect", "1,1,0,5"], 2, "imgpu: invalid --rect '1,1,0,5' (X,Y,W,H: X, Y 0 or more, W, H 1 or more)"),
        (["--rect", "1,1,5"], 2, "invalid --rect '1,1,5'"),
        (["--rect", "-1,1,5,5"], 2, "invalid --rect '-1,1,5,5'"),
        (["--size", "0x5"], 1, "crop: a size of 0x5 pixels"),
        (["--size", "10x10", "--rect", "0,0,1,1"], 1, "crop: give one of --rect, --size, --trim or --inner"),
        (["--trim", "--inner"], 1, "crop: give one of"),
        (["--inner"], 1, "crop: --inner must follow an expanding rotation"),
        (["--gravity", "middle", "--size", "1x1"], 2, "invalid --gravity 'middle'"),
    ]
    for opts, rc, msg in cases:
        with open(dst, "wb") as f:
            f.write(b"keep me")
        r = imgpu("crop", src, dst, *opts, "--device", DEVICE)
        skip_if_no_gpu(r)
        K.check(r.rc == rc and msg in r.err, f"crop {opts}: exit {rc}, '{msg}'", str(r))
        K.check(open(dst, "rb").read() == b"keep me", f"crop {opts}: the existing output is untouched")
    # in a batch the file whose box does not fit fails, the others are cropped
    small, big = noise(4, 5, 3, 8, 32), noise(9, 12, 3, 8, 33)
    ind = os.path.join(tmp, "crop_in")
    os.makedirs(ind, exist_ok=True)
    png_write(os.path.join(ind, "small.png"), small)
    png_write(os.path.join(ind, "big.png"), big)
    out = os.path.join(tmp, "crop_batch")
    r = imgpu("batch", "--crop", "--rect", "2,3,6,5", "-o", out, ind, "--device", DEVICE)
    skip_if_no_gpu(r)
    K.check(r.rc == 1 and "the box 2,3,6,5 is outside the 5x4 image" in r.err, "batch: the small file fails", str(r))
    got = png_read(os.path.join(out, "big.png")) if os.path.exists(os.path.join(out, "big.png")) else None
    same(got, big[3:8, 2:8], "batch: the big file is cropped", r)
    K.check(not os.path.exists(os.path.join(out, "small.png")), "batch: nothing written for the small file")


def test_crop_names():
    """Issue 28's names: rotate's --crop keeps the size (also --keep-size); in batch, --crop
    after a rotation is that flag unless a crop option follows; --size after --crop is the
    crop's, after --resize the resize's."""
    a = noise(30, 40, 3, 8, 41)
    src = os.path.join(tmp, "names.png")
    png_write(src, a)

    def batch(*ops):
        out = os.path.join(tmp, "names_out")
        if os.path.exists(os.path.join(out, "names.png")):
            os.remove(os.path.join(out, "names.png"))
        r = imgpu("batch", *ops, "-o", out, src, "--device", DEVICE, "--overwrite")
        skip_if_no_gpu(r)
        p = os.path.join(out, "names.png")
        return (png_read(p) if r.rc == 0 and os.path.exists(p) else None), r

    def single(*args):
        out = os.path.join(tmp, "names_single.png")
        r = imgpu(*args[:1], src, out, *args[1:], "--device", DEVICE)
        skip_if_no_gpu(r)
        return (png_read(out) if r.rc == 0 else None), r

    keep, r0 = single("rotate", "--angle", "30", "--crop")
    K.check(keep is not None and keep.shape == a.shape, "rotate --crop keeps the size", str(r0))
    got, r = single("rotate", "--angle", "30", "--keep-size")
    same(got, keep, "rotate --keep-size is rotate --crop", r)
    got, r = batch("--rotate", "30", "--crop")
    same(got, keep, "batch --rotate 30 --crop: the rotation keeps its size (no crop op)", r)
    got, r = batch("--rotate", "30", "--keep-size")
    same(got, keep, "batch --rotate 30 --keep-size", r)
    got, r = batch("--rotate", "30", "--crop", "--filter", "nearest")
    want, r2 = single("rotate", "--angle", "30", "--crop", "--filter", "nearest")
    same(got, want, "batch --rotate 30 --crop --filter nearest: all the rotation's", r)
    got, r = batch("--rotate", "30", "--keep-size", "--crop", "--rect", "1,2,3,4")
    same(got, None if keep is None else keep[2:6, 1:4], "batch --rotate 30 --keep-size --crop --rect: a crop op", r)
    got, r = batch("--crop", "--rect", "1,2,3,4", "--rotate", "90")
    same(got, np.ascontiguousarray(np.rot90(a[2:6, 1:4])), "batch --crop --rect then --rotate 90", r)
    got, r = batch("--crop", "--size", "10x6", "--gravity", "east", "--resize", "--size", "5x3", "--filter", "nearest")
    K.check(got is not None and got.shape == (3, 5, 3), "batch: --size after --crop is the crop's, after --resize "
            "the resize's", str(r))
    got, r = batch("--resize", "--size", "20x15", "--crop", "--size", "4x4")
    K.check(got is not None and got.shape == (4, 4, 3), "batch --resize --size --crop --size", str(r))
    r = imgpu("batch", "--rect", "1,1,1,1", "-o", os.path.join(tmp, "n2"), src)
    K.check(r.rc == 2 and "--rect must follow --crop" in r.err, "batch: --rect needs a --crop first", str(r))
    r = imgpu("crop", src, os.path.join(tmp, "n3.png"), "--crop")
    K.check(r.rc == 2 and "does not apply to 'crop'" in r.err, "imgpu crop --crop is refused", str(r))
    h = imgpu("crop", "--help")
    K.check(h.rc == 0 and "keep-size" in h.out and "snapshot" in h.out, "imgpu crop --help states the names' rule",
            str(h))


def test_crop_inner():
    """--inner after an expanding rotation: the expanded rotation cut symmetrically; no pixel
    touches the background (an opaque image on a transparent background keeps alpha 255
    everywhere); refused after a keep-size rotation."""
    for (hh, ww, c, depth) in ((30, 40, 4, 8), (41, 23, 4, 16), (17, 17, 2, 8), (60, 9, 4, 8)):
        a = noise(hh, ww, c, depth, hh * ww)
        hi = 65535 if depth == 16 else 255
        a[:, :, -1] = hi
        src = os.path.join(tmp, "inner.png")
        png_write(src, a)
        for angle in ("30", "-12.5", "45", "90", "181.5"):
            for flt in ("nearest", "bilinear", "bicubic"):
                tag = f"{ww}x{hh} c={c} {depth}-bit angle {angle} {flt}"
                outd = os.path.join(tmp, "inner_out")
                r = imgpu("batch", "--rotate", angle, "--filter", flt, "--crop", "--inner", "-o", outd, src,
                          "--device", DEVICE, "--overwrite")
                skip_if_no_gpu(r)
                got = png_read(os.path.join(outd, "inner.png")) if r.rc == 0 else None
                ex = os.path.join(tmp, "inner.expand.png")
                r2 = imgpu("rotate", src, ex, "--angle", angle, "--filter", flt, "--device", DEVICE)
                full = png_read(ex) if r2.rc == 0 else None
                if not K.check(got is not None and full is not None, f"crop --inner {tag} runs", str(r) + str(r2)):
                    continue
                (H, W), (h2, w2) = full.shape[:2], got.shape[:2]
                K.check((W - w2) % 2 == 0 and (H - h2) % 2 == 0 and w2 >= 1 and h2 >= 1,
                        f"crop --inner {tag}: {w2}x{h2} centred in {W}x{H}")
                y0, x0 = (H - h2) // 2, (W - w2) // 2
                same(got, full[y0:y0 + h2, x0:x0 + w2], f"crop --inner {tag}: the expanded rotation, cut", r)
                K.check(bool(np.all(got[:, :, -1] == hi)), f"crop --inner {tag}: no background in it")
                if angle in ("90",):
                    K.check((w2, h2) == (hh, ww), f"crop --inner {tag}: a quarter turn keeps everything")
                if angle == "45" and flt == "bilinear" and (hh, ww) == (30, 40):
                    # the largest: the inscribed square of a 28x38 source at 45 degrees is
                    # 28/sqrt(2) ~ 19.8 wide, so 19 or 20 pixels
                    K.check(min(w2, h2) >= 18, f"crop --inner {tag}: {w2}x{h2} is not much smaller than it can be")
    r = imgpu("batch", "--rotate", "30", "--keep-size", "--crop", "--inner", "-o", os.path.join(tmp, "ik"), src)
    K.check(r.rc == 1 and "--inner must follow an expanding rotation" in r.err,
            "crop --inner after a keep-size rotation is refused", str(r))
    r = imgpu("batch", "--equalize", "--crop", "--inner", "-o", os.path.join(tmp, "ie"), src)
    K.check(r.rc == 1 and "--inner must follow an expanding rotation" in r.err,
            "crop --inner after another op is refused", str(r))


def test_crop_chain_after_trim():
    """A chain after --trim goes on from the smaller image: a --rect inside it works, one
    inside the input but not the trimmed image fails with the crop's message."""
    a = np.full((20, 30, 3), 7, np.uint8)
    a[5:15, 4:24] = noise(10, 20, 3, 8, 51)
    a[5:15, 4:24][a[5:15, 4:24] == 7] = 8
    src = os.path.join(tmp, "tt.png")
    png_write(src, a)
    out = os.path.join(tmp, "tt_out")
    r = imgpu("batch", "--crop", "--trim", "--crop", "--rect", "1,2,5,4", "--flip", "--horizontal", "-o", out, src,
              "--device", DEVICE)
    skip_if_no_gpu(r)
    got = png_read(os.path.join(out, "tt.png")) if r.rc == 0 else None
    same(got, np.ascontiguousarray(a[7:11, 5:10][:, ::-1]), "batch --crop --trim --crop --rect --flip", r)
    r = imgpu("batch", "--crop", "--trim", "--crop", "--rect", "18,0,5,4", "-o", out + "2", src, "--device", DEVICE)
    K.check(r.rc == 1 and "crop: the box 18,0,5,4 is outside the 20x10 image" in r.err,
            "a box outside the trimmed image fails", str(r))


TESTS = [test_flip, test_flip_cv2, test_convert, test_flip_batch_and_orientation, test_crop, test_crop_refusals,
         test_crop_names, test_crop_inner, test_crop_chain_after_trim]
unknown = set(ONLY or []) - {t.__name__ for t in TESTS}
K.check(not unknown, "the tests asked for exist", " ".join(sorted(unknown)))
for t in TESTS:
    if ONLY is None or t.__name__ in ONLY:
        t()
RUNNER.close()
rc = K.end()
C.cleanup(tmp, rc != 0)
sys.exit(rc)

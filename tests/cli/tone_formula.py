"""tone_formula.py — the tone LUT ops (issue 28: levels, gamma, normalize, autolevel) against
independent Python transliterations of ImageMagick 6 (Q16, non-HDRI) magick/enhance.c, and,
with --imagemagick, the transliterations against ImageMagick itself (convert-im6.q16).

    /usr/bin/python3 tests/cli/tone_formula.py IMGPU ASSETS WORKDIR [cpu|cuda] [OP...]
    /usr/bin/python3 tests/cli/tone_formula.py --imagemagick CONVERT WORKDIR [OP...]

The first form runs `imgpu OP` on assets and synthetic images (8 and 16 bits; gray, gray+alpha,
RGB, RGBA; 1x1, 1xN, Nx1) and requires every sample to equal the transliteration (alpha
untouched). The second form is the oracle check of the transliteration itself: IM's results are
read through PNM (8 bits: IM's PNM writer stores ScaleQuantumToChar, its PNG writer floor(Q/257))
and 16-bit PNG. Needs numpy and cv2; exits 77 without them (and the second form without IM).

IM6 Q16 arithmetic (enhance.c, quantum.h): an 8-bit level v is the quantum 257 v; everything is
computed in double; ClampToQuantum(x) = 0 (x <= 0), 65535 (x >= 65535), else int(x + 0.5);
8-bit output ScaleQuantumToChar(Q) = ((Q + 128) - ((Q + 128) >> 8)) >> 8.
"""
import math
import os
import re
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

ALL_OPS = ["levels", "gamma", "normalize", "autolevel"]
# what imgpu says when --device cuda cannot run here (tests/golden/run_case.sh's list): a skip
NO_GPU = ("built without CUDA support|no NVIDIA GPU or driver was found|driver version is insufficient|"
          "no NVIDIA driver is loaded|no CUDA-capable device|older than this imgpu.s runtime")


# ---- ImageMagick 6 Q16, transliterated ------------------------------------------------------

def clamp_q(x):
    return 0 if x <= 0.0 else 65535 if x >= 65535.0 else int(x + 0.5)


def q_to_char(q):
    return ((q + 128) - ((q + 128) >> 8)) >> 8


def quanta(depth):
    """the quantum of each level of the depth"""
    return [257 * v for v in range(256)] if depth == 8 else list(range(65536))


def to_depth(qs, depth):
    return np.array([q_to_char(q) for q in qs] if depth == 8 else qs, np.uint8 if depth == 8 else np.uint16)


def level_value(text, depth):
    """--black / --white as IM's quantum: 'P%' -> P * (65535 / 100.0), else a level of the depth"""
    if text.endswith("%"):
        return float(text[:-1]) * (65535 / 100.0)
    return float(text) * (257.0 if depth == 8 else 1.0)


def perceptible_reciprocal(x):
    # 1 / x, or +-1 / MagickEpsilon (1e-12) when |x| < MagickEpsilon
    sign = -1.0 if x < 0.0 else 1.0
    return 1.0 / x if sign * x >= 1e-12 else sign / 1e-12


def level_pixel(q, b, w, gamma):
    # LevelPixel (IM 6.9.11): QuantumRange * gamma_pow(scale * (pixel - black), 1 / gamma) with
    # scale = PerceptibleReciprocal(w - b), gamma_pow(v, g) = v when v < 0, else v^g. black ==
    # white thresholds: pixel <= black -> 0, above -> 65535.
    t = perceptible_reciprocal(w - b) * (q - b)
    return 65535.0 * (t if t < 0.0 else math.pow(t, 1.0 / gamma))


def levels_lut(depth, black="0", white="100%", gamma="1"):
    b, w, g = level_value(black, depth), level_value(white, depth), float(gamma)
    return to_depth([clamp_q(level_pixel(q, b, w, g)) for q in quanta(depth)], depth)


def apply_same(img, lut):
    """every colour channel through one LUT, alpha kept"""
    out = img.copy()
    color = 1 if img.ndim == 2 else (1 if img.shape[2] <= 2 else 3)
    if img.ndim == 2:
        return lut[img]
    for k in range(color):
        out[:, :, k] = lut[img[:, :, k]]
    return out


def ref_levels(img, depth, args):
    kw = dict(zip(args[0::2], args[1::2]))
    return apply_same(img, levels_lut(depth, kw.get("--black", "0"), kw.get("--white", "100%"),
                                      kw.get("--gamma", "1")))


def gamma_lut(depth, gamma):
    # GammaImageChannel: gamma == 1 -> nothing; else gamma_map[i] = ScaleMapToQuantum(MaxMap *
    # pow(i / MaxMap, 1 / gamma)) over the 65536 quanta (MaxMap = 65535), read at each quantum
    g = float(gamma)
    if g == 1.0:
        return to_depth(quanta(depth), depth)
    return to_depth([clamp_q(65535.0 * math.pow(q / 65535.0, 1.0 / g)) for q in quanta(depth)], depth)


def ref_gamma(img, depth, args):
    kw = dict(zip(args[0::2], args[1::2]))
    return apply_same(img, gamma_lut(depth, kw.get("--gamma", "1")))


def is_gray(img):
    """IM's SetImageGray: every pixel has R == G == B (the image is then GRAY and its intensity
    is the red channel)"""
    return img.ndim == 2 or img.shape[2] <= 2 or (np.array_equal(img[:, :, 0], img[:, :, 1]) and
                                                  np.array_equal(img[:, :, 1], img[:, :, 2]))


def quantum_planes(img, depth):
    """the colour channels as IM's quanta (float64), a list of 1 or 3 planes"""
    s = 257.0 if depth == 8 else 1.0
    if img.ndim == 2:
        return [img.astype(np.float64) * s]
    return [img[:, :, k].astype(np.float64) * s for k in range(1 if img.shape[2] <= 2 else 3)]


def im_histogram(values):
    """histogram[ScaleQuantumToMap(q)]++ over the 65536 quanta (values: integer quanta)"""
    return np.bincount(values.astype(np.int64).ravel(), minlength=65536)


def contrast_stretch_map(hist, n, black_point, white_point):
    """ContrastStretchImageChannel (IM 6.9.11) for one histogram: the black and white quanta
    and the stretch map, or None when black == white (the channel is left alone)"""
    intensity, i = 0.0, 0
    while i <= 65535:
        intensity += float(hist[i])
        if intensity > black_point:
            break
        i += 1
    black = i
    intensity, i = 0.0, 65535
    while i != 0:
        intensity += float(hist[i])
        if intensity > float(n) - white_point:
            break
        i -= 1
    white = i
    if black == white:
        return None
    m = []
    for q in range(65536):
        if q < black:
            m.append(0)
        elif q > white:
            m.append(65535)
        else:
            m.append(clamp_q(65535.0 * (q - black) / (white - black)))
    return m


def ref_normalize(img, depth, args):
    kw = dict(zip(args[0::2], args[1::2]))
    b_pct, w_pct = float(kw.get("--black-clip", "0.15")), float(kw.get("--white-clip", "0.05"))
    per_channel = kw.get("--mode", "luminance") == "per-channel"
    n = img.shape[0] * img.shape[1]
    # NormalizeImageChannel: N * 0.0015 and N * 0.9995; as percentages N * (B / 100), N * (1 - W / 100)
    black_point, white_point = n * (b_pct / 100.0), n * (1.0 - w_pct / 100.0)
    planes = quantum_planes(img, depth)
    if per_channel:
        hists = [im_histogram(p) for p in planes]
    elif is_gray(img):
        hists = [im_histogram(planes[0])] * len(planes)
    else:
        r, g, b = planes   # GetPixelIntensity (Rec709Luma, the default): on the stored values
        x = (0.212656 * r + 0.715158 * g) + 0.072186 * b
        q = np.where(x <= 0.0, 0, np.where(x >= 65535.0, 65535, np.floor(x + 0.5)))
        hists = [im_histogram(q)] * 3
    out = img.copy()
    for k, h in enumerate(hists):
        m = contrast_stretch_map(h, n, black_point, white_point)
        lut = to_depth(quanta(depth), depth) if m is None else to_depth([m[q] for q in quanta(depth)], depth)
        if img.ndim == 2:
            out = lut[img]
        else:
            out[:, :, k] = lut[img[:, :, k]]
    return out


def ref_autolevel(img, depth, args):
    # AutoLevelImageChannel = MinMaxStretchImage(0, 0): GetImageChannelRange (over R, G, B
    # together by default, each alone with -channel RGB), then, when |max - min| >=
    # MagickEpsilon, LevelImageChannel(min, max, 1.0): the levels formula (level_pixel)
    kw = dict(zip(args[0::2], args[1::2]))
    per_channel = kw.get("--mode", "linked") == "per-channel"
    planes = quantum_planes(img, depth)
    ranges = [(p.min(), p.max()) for p in planes]
    if not per_channel:
        ranges = [(min(r[0] for r in ranges), max(r[1] for r in ranges))] * len(planes)
    out = img.copy()
    for k, (lo, hi) in enumerate(ranges):
        if abs(lo - hi) < 1e-12:
            continue
        lut = to_depth([clamp_q(level_pixel(q, lo, hi, 1.0)) for q in quanta(depth)], depth)
        if img.ndim == 2:
            out = lut[img]
        else:
            out[:, :, k] = lut[img[:, :, k]]
    return out


REFS = {"levels": ref_levels, "gamma": ref_gamma, "normalize": ref_normalize, "autolevel": ref_autolevel}
CASES = {
    "levels": {8: [[], ["--black", "10", "--white", "240"], ["--black", "10", "--white", "240", "--gamma", "0.7"],
                   ["--black", "5%", "--white", "95%", "--gamma", "1.8"], ["--black", "200", "--white", "30",
                                                                           "--gamma", "1.3"],
                   ["--black", "50", "--white", "50"], ["--gamma", "2.2"], ["--black", "3.5", "--white", "250.25",
                                                                            "--gamma", "1.7"]],
               16: [["--black", "2570", "--white", "61680"], ["--black", "1000", "--white", "60000", "--gamma", "0.6"],
                    ["--black", "10%", "--white", "90%", "--gamma", "2.2"], ["--white", "0%", "--black", "100%"]]},
    "gamma": {8: [[], ["--gamma", "2.2"], ["--gamma", "0.45"], ["--gamma", "1.7"], ["--gamma", "0.01"],
                  ["--gamma", "100"]],
              16: [["--gamma", "2.2"], ["--gamma", "0.6"], ["--gamma", "1"]]},
    "normalize": {8: [[], ["--mode", "per-channel"], ["--black-clip", "2", "--white-clip", "1"],
                      ["--black-clip", "10", "--white-clip", "25", "--mode", "per-channel"],
                      ["--black-clip", "0", "--white-clip", "0"], ["--black-clip", "60", "--white-clip", "50"]],
                  16: [[], ["--mode", "per-channel"], ["--black-clip", "2", "--white-clip", "1"],
                       ["--black-clip", "0", "--white-clip", "0", "--mode", "per-channel"]]},
    "autolevel": {8: [[], ["--mode", "per-channel"]], 16: [[], ["--mode", "per-channel"]]},
}
def im_level_args(a, d):
    """imgpu levels' arguments as IM's -level: black and white as quanta (IM reads -level's
    numbers as quanta, or percentages of QuantumRange when they carry a '%')"""
    kw = dict(zip(a[0::2], a[1::2]))
    b, w = level_value(kw.get("--black", "0"), d), level_value(kw.get("--white", "100%"), d)
    return ["-level", f"{b!r},{w!r},{kw.get('--gamma', '1')}"]


def im_normalize_args(a, d):
    """imgpu normalize's arguments as IM's: -normalize at the default clips, else
    -contrast-stretch B%xW% (IM: black_point = B * N / 100, white_point = N - W * N / 100, the
    same thresholds as N * (B / 100) and N * (1 - W / 100) unless one lands within a rounding of
    an integer: the images here have none); -channel RGB for per-channel"""
    kw = dict(zip(a[0::2], a[1::2]))
    b, w = kw.get("--black-clip", "0.15"), kw.get("--white-clip", "0.05")
    ch = ["-channel", "RGB"] if kw.get("--mode") == "per-channel" else []
    if float(b) == 0.15 and float(w) == 0.05:
        return ch + ["-normalize"]
    return ch + ["-contrast-stretch", f"{b}%x{w}%"]


IM_ARGS = {"levels": im_level_args,
           "normalize": im_normalize_args,
           "autolevel": lambda a, d: (["-channel", "RGB"] if "per-channel" in a else []) + ["-auto-level"],
           "gamma": lambda a, d: ["-gamma", dict(zip(a[0::2], a[1::2])).get("--gamma", "1")]}


# ---- images ---------------------------------------------------------------------------------

def png_write(path, img):
    """8- or 16-bit PNG of a gray / gray+alpha / RGB / RGBA array in imgpu's channel order
    (cv2 cannot write gray+alpha)"""
    h, w = img.shape[:2]
    c = 1 if img.ndim == 2 else img.shape[2]
    depth = 16 if img.dtype == np.uint16 else 8
    ihdr = struct.pack(">IIBBBBB", w, h, depth, {1: 0, 2: 4, 3: 2, 4: 6}[c], 0, 0, 0)
    data = img.astype(">u2" if depth == 16 else np.uint8).reshape(h, -1).tobytes()
    stride = w * c * depth // 8
    raw = b"".join(b"\x00" + data[y * stride:(y + 1) * stride] for y in range(h))

    def chunk(k, b):
        return struct.pack(">I", len(b)) + k + b + struct.pack(">I", zlib.crc32(k + b) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png_read(path, channels):
    """an image written by imgpu, in imgpu's channel order (cv2 reads gray+alpha as BGRA)"""
    im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if im is None:
        return None
    if channels == 2:
        return np.dstack([im[:, :, 0], im[:, :, 3]]) if im.ndim == 3 else None
    if channels == 3:
        return cv2.cvtColor(im, cv2.COLOR_BGR2RGB)
    if channels == 4:
        return cv2.cvtColor(im, cv2.COLOR_BGRA2RGBA)
    return im


def images(assets):
    rng = np.random.default_rng(28)
    out = {}
    for a in ["camera.png", "chelsea.png", "coffee.png", "camera16.png", "chelsea16.png"]:
        im = cv2.imread(os.path.join(assets, a), cv2.IMREAD_UNCHANGED)
        out[a[:-4]] = cv2.cvtColor(im, cv2.COLOR_BGR2RGB) if im.ndim == 3 else im
    for d, t, m in [(8, np.uint8, 256), (16, np.uint16, 65536)]:
        # noise in a middle band (normalize and autolevel have something to stretch)
        out[f"ga{d}"] = np.dstack([rng.integers(m // 5, m * 3 // 4, (33, 47)), rng.integers(0, m, (33, 47))]).astype(t)
        out[f"rgba{d}"] = np.dstack([rng.integers(m // 8 * k + m // 10, m // 2 + m // 8 * k, (29, 31))
                                     for k in range(3)] + [rng.integers(0, m, (29, 31))]).astype(t)
        out[f"one{d}"] = np.array([[m // 3]], t)
        out[f"row{d}"] = rng.integers(0, m, (1, 13, 3)).astype(t)
        out[f"col{d}"] = rng.integers(0, m, (11, 1)).astype(t)
        out[f"constant{d}"] = np.full((5, 6, 3), m // 3, t)
    return out


def depth_of(img):
    return 16 if img.dtype == np.uint16 else 8


def channels_of(img):
    return 1 if img.ndim == 2 else img.shape[2]


# ---- the two forms --------------------------------------------------------------------------

def run_imgpu(imgpu, work, dev, ops):
    """every case through `imgpu OP`; the .cuda variants (IMGPU_INPROC set) run all but each
    op's first command in one cli_inproc process (cli_common.Runner: one CUDA start-up)"""
    fails = runs = 0
    runner = cli_common.Runner(imgpu, timeout=120)
    for name, img in images(ASSETS).items():
        d = depth_of(img)
        src = os.path.join(work, f"{name}.png")
        png_write(src, img)
        for op in ops:
            for i, args in enumerate(CASES[op][d]):
                dst = os.path.join(work, f"{name}.{op}{i}.png")
                if os.path.exists(dst):
                    os.remove(dst)   # no earlier run's output may pass for this one's
                p = runner.run([op, src, dst, *args, "--device", dev, "--quiet"])
                if p.rc and dev == "cuda" and re.search(NO_GPU, p.err):
                    print("SKIP:", p.err.strip())
                    sys.exit(77)
                got = png_read(dst, channels_of(img)) if p.rc == 0 else None
                want = REFS[op](img, d, args)
                ok = got is not None and got.shape == want.shape and np.array_equal(got, want)
                runs += 1
                if not ok:
                    nd = int((got != want).sum()) if got is not None and got.shape == want.shape else -1
                    print(f"FAIL {name} {op} {' '.join(args)}: {nd} samples differ (rc {p.rc}) {p.err.strip()}")
                fails += not ok
    runner.close()
    print(f"{runs} runs, {fails} failure(s)")
    return fails


def run_imagemagick(convert, work, ops):
    fails = runs = 0
    imgs = images(ASSETS)
    for name, img in imgs.items():
        d, c = depth_of(img), channels_of(img)
        if c in (2, 4):   # PNM holds no alpha; alpha passing through is the first form's check
            continue
        src = os.path.join(work, f"{name}.png")
        png_write(src, img)
        for op in ops:
            for i, args in enumerate(CASES[op][d]):
                dst = os.path.join(work, f"{name}.{op}{i}.im." + ("png" if d == 16 else "pnm"))
                # -depth: IM would store a 16-bit result whose levels are all multiples of 257 at 8 bits
                subprocess.run([convert, src, *IM_ARGS[op](args, d), *(["-depth", "16"] if d == 16 else []), dst], check=True)
                got = cv2.imread(dst, cv2.IMREAD_UNCHANGED)
                if got is not None and d == 16 and got.dtype == np.uint8:
                    got = got.astype(np.uint16) * 257   # IM stores 16-bit levels that are all k * 257 at 8 bits
                if got is not None and got.ndim == 3:
                    got = cv2.cvtColor(got, cv2.COLOR_BGR2RGB)
                if got is not None and got.ndim == 2 and c == 3:   # IM writes an all-gray result gray
                    got = np.dstack([got] * 3)
                want = REFS[op](img, d, args)
                ok = got is not None and got.shape == want.shape and np.array_equal(got, want)
                runs += 1
                if not ok:
                    nd = int((got != want).sum()) if got is not None and got.shape == want.shape else -1
                    print(f"FAIL {name} {op} {' '.join(args)} (IM {' '.join(IM_ARGS[op](args, d))}): {nd} differ")
                fails += not ok
    print(f"{runs} ImageMagick comparisons, {fails} failure(s)")
    return fails


if sys.argv[1] == "--imagemagick":
    CONVERT, WORK = sys.argv[2:4]
    OPS = sys.argv[4:] or ALL_OPS
    ASSETS = os.environ.get("IMGPU_ASSETS", os.path.join(os.path.dirname(__file__), "..", "..", "assets"))
    if not os.access(CONVERT, os.X_OK):
        print(f"SKIP: no {CONVERT}")
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    sys.exit(1 if run_imagemagick(CONVERT, WORK, [o for o in OPS if o in REFS]) else 0)
IMGPU, ASSETS, WORK = sys.argv[1:4]
DEV = sys.argv[4] if len(sys.argv) > 4 else "cpu"
OPS = sys.argv[5:] or [o for o in ALL_OPS if o in REFS]
os.makedirs(WORK, exist_ok=True)
sys.exit(1 if run_imgpu(IMGPU, WORK, DEV, OPS) else 0)

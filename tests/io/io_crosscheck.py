#!/usr/bin/python3
"""io_crosscheck.py — decodes variants of the supported formats with imgpu (through the
io_dump helper) and compares them with an independent decoder: OpenCV for files OpenCV
writes (progressive, restart-marker and 1-component JPEG; paletted 8-bit BMP; PGM/PPM), and
pixels known by construction for PNGs encoded here by hand (palette with and without tRNS,
gray with tRNS, 1- and 4-bit gray, Adam7 interlacing), which OpenCV cannot write.
Usage: io_crosscheck.py IO_DUMP ASSETS_DIR. Exits 77 (skip) without cv2."""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    import cv2
    import numpy as np
except ImportError:
    print("numpy/cv2 not available: skipping")
    sys.exit(77)

DUMP, ASSETS = sys.argv[1], sys.argv[2]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


def load(path):
    r = subprocess.run([DUMP, path], capture_output=True)
    if r.returncode != 0:
        return None, r.stderr.decode().strip()
    head, _, raw = r.stdout.partition(b"\n")
    w, h, c = map(int, head.split())
    return np.frombuffer(raw, np.uint8).reshape(h, w, c), None


def cv_rgb(path):
    im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if im.ndim == 2:
        return im[:, :, None]
    return cv2.cvtColor(im, cv2.COLOR_BGR2RGB if im.shape[2] == 3 else cv2.COLOR_BGRA2RGBA)


def compare(name, path, want, mean_tol=0.0, max_tol=0):
    got, err = load(path)
    if got is None:
        return fail(f"{name}: {err}")
    if got.shape != want.shape:
        return fail(f"{name}: shape {got.shape}, expected {want.shape}")
    e = np.abs(got.astype(int) - want.astype(int))
    if e.mean() > mean_tol or e.max() > max_tol:
        return fail(f"{name}: mean error {e.mean():.3f} (tol {mean_tol}), max {e.max()} (tol {max_tol})")
    print(f"ok   {name}: {got.shape}, mean error {e.mean():.3f}, max {e.max()}")


def png(path, w, h, depth, color, rows_raw, extra=b"", interlace=0):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, interlace))
    data += extra + chunk(b"IDAT", zlib.compress(rows_raw)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def pack_rows(idx, depth):
    """Rows of small integers packed at `depth` bits, each with filter byte 0."""
    out = b""
    for row in idx:
        bits = "".join(format(int(v), f"0{depth}b") for v in row)
        bits += "0" * (-len(bits) % 8)
        out += b"\0" + bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    return out


with tempfile.TemporaryDirectory(prefix="imgpu_io_cross.") as d:
    chelsea = cv2.imread(os.path.join(ASSETS, "chelsea.png"))
    camera = cv2.imread(os.path.join(ASSETS, "camera.png"), cv2.IMREAD_GRAYSCALE)

    # JPEG variants, against OpenCV's (libjpeg's) decoding of the same file. stb's IDCT and
    # chroma upsampling differ from libjpeg's (measured: mean 0.07, max 3): mean at most 0.5,
    # max at most 8.
    jpegs = {
        "baseline 4:2:0": [cv2.IMWRITE_JPEG_QUALITY, 90],
        "progressive": [cv2.IMWRITE_JPEG_PROGRESSIVE, 1],
        "restart markers": [cv2.IMWRITE_JPEG_RST_INTERVAL, 3],
        "optimized huffman": [cv2.IMWRITE_JPEG_OPTIMIZE, 1],
    }
    for name, params in jpegs.items():
        p = os.path.join(d, name.replace(" ", "_") + ".jpg")
        cv2.imwrite(p, chelsea, params)
        compare("JPEG " + name, p, cv_rgb(p), 0.5, 8)
    p = os.path.join(d, "gray.jpg")
    cv2.imwrite(p, camera)
    compare("JPEG 1-component gray", p, cv_rgb(p), 0.5, 8)
    p = os.path.join(d, "gray_prog.jpg")
    cv2.imwrite(p, camera[:77, :131], [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    compare("JPEG gray progressive odd size", p, cv_rgb(p), 0.5, 8)

    # BMP as OpenCV writes it: 24-bit, and 8-bit paletted for gray (stb gives 3 channels).
    p = os.path.join(d, "c.bmp")
    cv2.imwrite(p, chelsea)
    compare("BMP 24-bit", p, cv_rgb(p))
    p = os.path.join(d, "g.bmp")
    cv2.imwrite(p, camera[:, :333])
    compare("BMP 8-bit paletted gray", p, np.repeat(camera[:, :333, None], 3, axis=2))
    for ext, im in (("pgm", camera), ("ppm", chelsea)):
        p = os.path.join(d, "x." + ext)
        cv2.imwrite(p, im)
        compare(ext.upper(), p, cv_rgb(p))

    # Hand-made PNGs, checked against the pixels they were made from and against OpenCV.
    rng = np.random.default_rng(7)
    w, h = 13, 7
    pal = rng.integers(0, 256, (16, 3), dtype=np.uint8)
    alpha = rng.integers(0, 256, 16, dtype=np.uint8)
    idx = rng.integers(0, 16, (h, w))
    p = os.path.join(d, "pal.png")
    plte = struct.pack(">I", 48) + b"PLTE" + pal.tobytes()
    plte += struct.pack(">I", zlib.crc32(b"PLTE" + pal.tobytes()))
    png(p, w, h, 4, 3, pack_rows(idx, 4), plte)
    compare("PNG 4-bit palette", p, pal[idx])
    trns = struct.pack(">I", 16) + b"tRNS" + alpha.tobytes() + struct.pack(">I", zlib.crc32(b"tRNS" + alpha.tobytes()))
    p = os.path.join(d, "pal_trns.png")
    png(p, w, h, 8, 3, pack_rows(idx, 8), plte + trns)
    compare("PNG palette + tRNS", p, np.dstack([pal[idx], alpha[idx]]))
    compare("PNG palette + tRNS vs OpenCV", p, cv_rgb(p))
    bits = rng.integers(0, 2, (h, w))
    p = os.path.join(d, "bit.png")
    png(p, w, h, 1, 0, pack_rows(bits, 1))
    compare("PNG 1-bit gray", p, (bits * 255).astype(np.uint8)[:, :, None])
    g4 = rng.integers(0, 16, (h, w))
    p = os.path.join(d, "g4.png")
    png(p, w, h, 4, 0, pack_rows(g4, 4))
    compare("PNG 4-bit gray", p, (g4 * 17).astype(np.uint8)[:, :, None])
    gray = rng.integers(0, 256, (h, w)).astype(np.uint8)
    gray[2, 3] = 77
    t = b"\0\x4d"   # gray value 77 is transparent
    p = os.path.join(d, "gray_trns.png")
    png(p, w, h, 8, 0, pack_rows(gray, 8), struct.pack(">I", 2) + b"tRNS" + t + struct.pack(">I", zlib.crc32(b"tRNS" + t)))
    compare("PNG gray + tRNS", p, np.dstack([gray, np.where(gray == 77, 0, 255).astype(np.uint8)]))

    # Adam7: pass k holds pixels (y0 + i*dy, x0 + j*dx).
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    raw = b""
    for x0, y0, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)):
        sub = rgb[y0::dy, x0::dx]
        if sub.size:
            raw += b"".join(b"\0" + r.tobytes() for r in sub)
    p = os.path.join(d, "adam7.png")
    png(p, w, h, 8, 2, raw, interlace=1)
    compare("PNG Adam7 interlaced", p, rgb)
    compare("PNG Adam7 interlaced vs OpenCV", p, cv_rgb(p))

print(f"{failures} failures")
sys.exit(1 if failures else 0)

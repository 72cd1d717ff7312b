"""pnm_check.py — PNM (issue 16): every Netpbm kind imgpu reads (P1..P6: ASCII and binary,
bitmaps, graymaps, pixmaps, maxval 1..65535, comments anywhere in the header) decodes to the
samples the file holds scaled to the full range (round(v * top / maxval), computed here in
Python from the samples written; PIL as a second oracle where it reads the kind), and the kind
each extension writes: .pgm is a graymap (an RGB image becomes cv2.cvtColor's RGB2GRAY luma,
8 and 16 bits, with a notice), .ppm a pixmap (gray repeated), .pnm follows the image, .pbm is
refused. Bad ASCII data (a sample above maxval, a word, too few samples) fails with
`imgpu: ...` and exit 1, leaving no output.

usage: pnm_check.py IMGPU_BINARY TMP_ROOT ASSETS_DIR   (skipped, 77, without cv2/numpy/PIL)
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
    from PIL import Image
except ImportError:
    print("skip: pnm_check needs cv2, numpy and PIL")
    sys.exit(77)

binary, tmp, assets = cc.setup("pnm_check")
C = cc.Checker("pnm_check")
rnd = random.Random(18)


def imgpu(*args):
    return cc.run(binary, [str(a) for a in args])


def pnm_file(kind, w, h, mv, samples, comments=False):
    """The bytes of a P<kind> file holding `samples` (a flat list, rows top to bottom)."""
    c = 3 if kind in (3, 6) else 1
    head = f"P{kind}\n" + ("# made by pnm_check\n" if comments else "") + f"{w} {h}\n"
    if kind not in (1, 4):
        head += ("# maxval next\n" if comments else "") + f"{mv}\n"
    body = b""
    if kind in (1, 2, 3):
        per_line = max(1, w * c)
        words = [str(v) for v in samples]
        sep = "" if kind == 1 and w % 2 else " "  # bitmap digits may touch
        body = "\n".join(sep.join(words[i:i + per_line]) for i in range(0, len(words), per_line)).encode() + b"\n"
    elif kind == 4:
        stride = (w + 7) // 8
        rows = bytearray(stride * h)
        for y in range(h):
            for x in range(w):
                if samples[y * w + x]:
                    rows[y * stride + x // 8] |= 0x80 >> (x % 8)
        body = bytes(rows)
    else:
        body = b"".join(v.to_bytes(2 if mv > 255 else 1, "big") for v in samples)
    return head.encode() + body


def expected(kind, w, h, mv, samples):
    c = 3 if kind in (3, 6) else 1
    if kind in (1, 4):
        a = np.array([0 if v else 255 for v in samples], np.uint8)
    else:
        top = 65535 if mv > 255 else 255
        a = np.array([top if v >= mv else (v * top + mv // 2) // mv for v in samples],
                     np.uint16 if mv > 255 else np.uint8)
    return a.reshape(h, w, c) if c == 3 else a.reshape(h, w)


def load(path):
    """imgpu's decode of PATH, through a lossless PNG written by the CLI (a 0-degree rotation
    is a copy), as RGB/gray samples."""
    out = path + ".png"
    r = imgpu("rotate", path, out, "--angle", "0", "--device", "cpu", "--quiet")
    if r.rc != 0:
        return None, r.err
    a = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    if a.ndim == 3:
        a = cv2.cvtColor(a, cv2.COLOR_BGR2RGB)
    return a, ""


n = 0
for kind in (1, 2, 3, 4, 5, 6):
    for (w, h) in ((1, 1), (17, 9), (64, 3)):
        for mv in ((1,) if kind in (1, 4) else (1, 15, 255, 1023, 65535)):
            c = 3 if kind in (3, 6) else 1
            samples = [rnd.randint(0, mv) for _ in range(w * h * c)]
            if kind in (5, 6):  # binary samples above maxval clamp to it
                samples[0] = min(samples[0] + (mv < 255), 255 if mv < 255 else mv)
            comments = (w + mv) % 2 == 0
            p = os.path.join(tmp, f"k{kind}_{w}x{h}_{mv}.{'pbm' if kind in (1, 4) else 'pnm'}")
            cc.write(p, pnm_file(kind, w, h, mv, samples, comments))
            got, err = load(p)
            want = expected(kind, w, h, mv, samples)
            what = f"P{kind} {w}x{h} maxval {mv}{' with comments' if comments else ''}"
            if C.check(got is not None, f"{what}: loads", err):
                C.check(got.dtype == want.dtype and got.shape == want.shape and (got == want).all(),
                        f"{what}: the samples scaled to the full range",
                        f"got {got.dtype} {got.shape}, want {want.dtype} {want.shape}")
                # PIL reads these kinds the same way (it scales too; bitmaps as mode 1)
                if mv <= 255 or kind in (2, 5):  # PIL reads 16-bit pixmaps as 8 bits
                    pil = np.array(Image.open(p))
                    if pil.dtype == bool:
                        pil = pil.astype(np.uint8) * 255
                    if mv > 255:
                        pil = pil.astype(np.uint16)
                    C.check(pil.shape == got.shape and (pil == got).all(), f"{what}: equals PIL's decode")
            n += 1
C.check(n == 3 * (2 + 4 * 5), f"decoded {n} files")

# writing: the extension picks the kind
rgb = np.array([[rnd.randint(0, 255) for _ in range(3)] for _ in range(23 * 11)], np.uint8).reshape(11, 23, 3)
src = os.path.join(tmp, "rgb.png")
cv2.imwrite(src, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
rgb16 = np.minimum(rgb.astype(np.uint32) * 257 + np.arange(23)[:, None], 65535).astype(np.uint16)
src16 = os.path.join(tmp, "rgb16.png")
cv2.imwrite(src16, cv2.cvtColor(rgb16, cv2.COLOR_RGB2BGR))
for s, a, bits in ((src, rgb, 8), (src16, rgb16, 16)):
    out = os.path.join(tmp, f"gray{bits}.pgm")
    r = imgpu("rotate", s, out, "--angle", "0", "--device", "cpu")
    C.check(r.rc == 0 and "graymap" in r.err, f"{bits}-bit RGB -> .pgm: written with a notice", str(r))
    head = cc.read(out)[:2] if os.path.exists(out) else b""
    C.check(head == b"P5", f"{bits}-bit RGB -> .pgm: a P5 graymap", repr(head))
    got = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    want = cv2.cvtColor(a, cv2.COLOR_RGB2GRAY)
    C.check(got is not None and got.dtype == want.dtype and (got == want).all(),
            f"{bits}-bit RGB -> .pgm: OpenCV's cvtColor RGB2GRAY exactly")
gsrc = os.path.join(tmp, "g.png")
g = rgb[:, :, 1].copy()
cv2.imwrite(gsrc, g)
out = os.path.join(tmp, "g.ppm")
r = imgpu("rotate", gsrc, out, "--angle", "0")
got = cv2.imread(out, cv2.IMREAD_UNCHANGED)
C.check(r.rc == 0 and cc.read(out)[:2] == b"P6" and got is not None and got.ndim == 3
        and all((got[:, :, k] == g).all() for k in range(3)), "gray -> .ppm: a P6 pixmap, gray repeated", str(r))
out = os.path.join(tmp, "g.pnm")
r = imgpu("rotate", gsrc, out, "--angle", "0")
C.check(r.rc == 0 and cc.read(out)[:2] == b"P5", "gray -> .pnm: P5", str(r))
out = os.path.join(tmp, "c.pnm")
r = imgpu("rotate", src, out, "--angle", "0")
C.check(r.rc == 0 and cc.read(out)[:2] == b"P6", "RGB -> .pnm: P6", str(r))
out = os.path.join(tmp, "x.pbm")
r = imgpu("rotate", gsrc, out, "--angle", "0")
C.check(r.rc == 1 and r.err.startswith("imgpu: ") and ".pbm" in r.err and not os.path.exists(out),
        ".pbm output: refused clearly, nothing written", str(r))

# bad ASCII data: exit 1, a reason, and an existing output untouched
bad = [("above.pgm", b"P2\n2 1\n15\n3 16\n", "above the maximum value"),
       ("word.pgm", b"P2\n2 1\n255\n3 x\n", "not a number"),
       ("short.ppm", b"P3\n2 2\n255\n1 2 3 4 5 6 7 8 9 10\n", "truncated"),
       ("bits.pbm", b"P1\n2 1\n1 2\n", "not 0 or 1"),
       ("short.pgm", b"P5\n4 4\n255\n\x01\x02", "truncated")]
keep = os.path.join(tmp, "keep.png")
for name, data, reason in bad:
    p = os.path.join(tmp, name)
    cc.write(p, data)
    cc.write(keep, b"old")
    r = imgpu("equalize", p, keep)
    C.check(r.rc == 1 and r.err.startswith("imgpu: ") and reason in r.err and cc.read(keep) == b"old",
            f"{name}: fails with '{reason}', the output untouched", str(r))

failed = C.end()
cc.cleanup(tmp, failed)
sys.exit(failed)

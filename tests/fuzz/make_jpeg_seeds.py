#!/usr/bin/python3
"""make_jpeg_seeds.py — writes the seed corpus of fuzz_jpeg, tests/fuzz/seeds/jpeg/: small
JPEGs made with OpenCV (cv2.imwrite: baseline, progressive, optimized, restart intervals,
gray) and PIL (4:4:4 / 4:2:2, CMYK, progressive gray), odd sizes (1x1, 17x9), files carrying
metadata (an EXIF blob from tests/common/exif_blob.py with an orientation, an XMP packet, an ICC
profile split into three APP2 chunks, and one whose ICC chunks are out of order and one with a
chunk missing), the arithmetic-coded and jpegtran seeds of the decode corpus, and a few damaged
files (truncated, a flipped byte in the entropy data, a bad restart marker), and CMYK and YCCK
files carrying a CMYK ICC profile (lcms_*.jpg: made by tests/io/make_cmyk.c --small, whose
profile lcms2 builds; kept as they are unless its path is given). The outputs are committed;
rerun after changing this script:
    /usr/bin/python3 tests/fuzz/make_jpeg_seeds.py [build/tests/make_cmyk]
Deterministic (fixed random seed; the same libjpeg gives the same bytes)."""
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import cv2
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))
sys.dont_write_bytecode = True
from exif_blob import app1, camera  # noqa: E402

OUT = os.path.join(HERE, "seeds", "jpeg")
DECODE = os.path.join(HERE, "seeds", "decode")


def picture(w, h, c, seed=1):
    """A smooth gradient with a little noise: compresses small, exercises every coefficient."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    planes = [(x * 255 // max(w - 1, 1) + k * 40 + y * 3) % 256 for k in range(c)]
    img = np.stack(planes, axis=-1).astype(np.int32) + rng.integers(-8, 9, (h, w, c))
    return np.clip(img, 0, 255).astype(np.uint8)


def cv2_jpeg(img, *params):
    ok, buf = cv2.imencode(".jpg", img, list(params))
    assert ok
    return buf.tobytes()


def pil_jpeg(img, **kw):
    b = io.BytesIO()
    img.save(b, "JPEG", **kw)
    return b.getvalue()


def segment(marker, payload):
    return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload


def insert_after_soi(jpeg, *segments):
    return jpeg[:2] + b"".join(segments) + jpeg[2:]


def fake_icc(n):
    """An ICC-shaped blob of n bytes: a header with its size and 'acsp', then filler."""
    head = struct.pack(">I", n) + b"none" + b"\x02\x10\x00\x00" + b"mntrRGB XYZ " + b"\0" * 12
    head += b"acsp" + b"\0" * (128 - len(head) - 4)
    return (head + bytes(range(256)) * (n // 256 + 1))[:n]


def icc_chunks(icc, parts, order=None, count=None):
    size = -(-len(icc) // parts)
    chunks = [icc[i * size:(i + 1) * size] for i in range(parts)]
    idx = order or list(range(parts))
    return [segment(0xE2, b"ICC_PROFILE\0" + bytes([i + 1, count or parts]) + chunks[i])
            for i in idx]


XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
       b'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4"/></rdf:RDF></x:xmpmeta>'
       b'<?xpacket end="w"?>')


def main():
    s = {}
    rgb = picture(48, 32, 3)
    s["cv2_420.jpg"] = cv2_jpeg(rgb, cv2.IMWRITE_JPEG_QUALITY, 92)
    s["cv2_progressive.jpg"] = cv2_jpeg(rgb, cv2.IMWRITE_JPEG_PROGRESSIVE, 1)
    s["cv2_optimized.jpg"] = cv2_jpeg(rgb, cv2.IMWRITE_JPEG_OPTIMIZE, 1)
    s["cv2_restart.jpg"] = cv2_jpeg(rgb, cv2.IMWRITE_JPEG_RST_INTERVAL, 1)
    s["cv2_gray.jpg"] = cv2_jpeg(picture(40, 24, 1)[:, :, 0], cv2.IMWRITE_JPEG_QUALITY, 80)
    s["cv2_1x1.jpg"] = cv2_jpeg(picture(1, 1, 3))
    s["cv2_17x9_q10.jpg"] = cv2_jpeg(picture(17, 9, 3), cv2.IMWRITE_JPEG_QUALITY, 10)
    pil = Image.fromarray(rgb)
    s["pil_444.jpg"] = pil_jpeg(pil, quality=90, subsampling=0)
    s["pil_422.jpg"] = pil_jpeg(pil, quality=90, subsampling=1)
    s["pil_cmyk.jpg"] = pil_jpeg(pil.convert("CMYK"), quality=85)
    s["pil_progressive_gray.jpg"] = pil_jpeg(pil.convert("L"), progressive=True)
    base = s["cv2_420.jpg"]
    s["meta_all.jpg"] = insert_after_soi(
        base, segment(0xE1, app1(camera(6))),
        segment(0xE1, b"http://ns.adobe.com/xap/1.0/\0" + XMP), *icc_chunks(fake_icc(600), 3))
    s["meta_icc_unordered.jpg"] = insert_after_soi(base, *icc_chunks(fake_icc(400), 3, [2, 0, 1]))
    s["meta_icc_missing.jpg"] = insert_after_soi(base, *icc_chunks(fake_icc(400), 3, [0, 2]))
    # damaged
    s["bad_truncated.jpg"] = base[: len(base) * 2 // 3]
    flipped = bytearray(base)
    sos = base.index(b"\xff\xda")
    flipped[sos + 20] ^= 0x5A
    s["bad_flipped.jpg"] = bytes(flipped)
    rst = bytearray(s["cv2_restart.jpg"])
    i = rst.index(b"\xff\xd1")
    rst[i + 1] = 0xD5   # a restart marker out of sequence
    s["bad_restart.jpg"] = bytes(rst)
    keep = {}
    if len(sys.argv) > 1:   # the lcms2-made CMYK seeds, afresh
        tmp = tempfile.mkdtemp()
        subprocess.run([sys.argv[1], tmp, "--small"], check=True)
        for src, name in (("cmyk.jpg", "lcms_cmyk_icc.jpg"), ("ycck.jpg", "lcms_ycck_icc.jpg")):
            with open(os.path.join(tmp, src), "rb") as f:
                keep[name] = f.read()
        shutil.rmtree(tmp)
    elif os.path.isdir(OUT):
        for name in os.listdir(OUT):
            if name.startswith("lcms_"):
                with open(os.path.join(OUT, name), "rb") as f:
                    keep[name] = f.read()
    s.update(keep)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for name, data in sorted(s.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    for name in ("jpeg_arithmetic.jpg", "jpeg_jpegtran_prog_rst.jpg", "jpeg_restart_prog.jpg",
                 "jpeg_many_scans.jpg"):
        shutil.copy(os.path.join(DECODE, name), os.path.join(OUT, "decode_" + name))
    print(f"{len(os.listdir(OUT))} seeds in {OUT}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""make_webp_seeds.py — writes the seed corpus of fuzz_webp, tests/fuzz/seeds/webp/: small
WebP files made with PIL (Debian's python3-pil, libwebp 1.2.4) covering the container's
shapes: simple lossy (VP8) and lossless (VP8L), 1x1 and odd sizes, lossy and lossless with
alpha (VP8X + ALPH + VP8, VP8X + VP8L), an animation whose later frames are smaller than the
canvas (ANIM + ANMF at offsets), one with ICCP + EXIF (Orientation 6) + XMP, and a few broken
ones (truncated, a RIFF size past the end, a chunk size past the RIFF size). Every file stays
under 2 KiB so libFuzzer's default input length covers them. The outputs are committed; rerun
after changing this script:
    /usr/bin/python3 tests/fuzz/make_webp_seeds.py
Deterministic for one libwebp version."""
import io
import os
import shutil
import struct

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "seeds", "webp")


def gradient(w, h, c, seed=0):
    y, x = np.mgrid[0:h, 0:w]
    planes = [(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), ((x + y + seed) * 37) % 256,
              np.where((x + y) % 3 == 0, 0, 255 - x * 8 % 256)]
    return Image.fromarray(np.dstack(planes[:c]).astype(np.uint8), "RGBA" if c == 4 else "RGB")


def save(im, **kw):
    b = io.BytesIO()
    im.save(b, "WEBP", **kw)
    return b.getvalue()


def exif_o6():
    e = Image.Exif()
    e[0x0112] = 6
    e[0x010F] = "imgpu"
    return e.tobytes()


def main():
    seeds = {}
    seeds["lossy_16x16.webp"] = save(gradient(16, 16, 3), quality=50)
    seeds["lossless_16x16.webp"] = save(gradient(16, 16, 3), lossless=True)
    seeds["lossy_1x1.webp"] = save(gradient(1, 1, 3), quality=80)
    seeds["lossless_1x1_alpha.webp"] = save(gradient(1, 1, 4), lossless=True)
    seeds["lossy_17x9.webp"] = save(gradient(17, 9, 3), quality=30)
    seeds["lossy_alpha_12x10.webp"] = save(gradient(12, 10, 4), quality=60)
    seeds["lossless_alpha_12x10.webp"] = save(gradient(12, 10, 4), lossless=True, exact=True)
    frames = [gradient(20, 16, 4, s) for s in range(3)]
    for i, f in enumerate(frames[1:], 1):   # later frames change a corner only: sub-frames
        base = np.array(frames[0])
        base[2:6, 3:9] = np.array(f)[2:6, 3:9]
        frames[i] = Image.fromarray(base, "RGBA")
    seeds["anim_3_frames.webp"] = save(frames[0], save_all=True, append_images=frames[1:],
                                       duration=[50, 60, 70], loop=0, lossless=True)
    icc = b"\0\0\0\x80" + b"imgp" + b"\x02\x10\0\0" + b"mntrRGB XYZ " + bytes(128 - 24)
    xmp = (b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/'
           b'02/22-rdf-syntax-ns#"/></x:xmpmeta>')
    seeds["meta_icc_exif_xmp.webp"] = save(gradient(8, 6, 3), quality=50, icc_profile=icc,
                                           exif=exif_o6(), xmp=xmp)
    good = seeds["lossy_17x9.webp"]
    seeds["broken_truncated.webp"] = good[:len(good) * 2 // 3]
    seeds["broken_riff_past_end.webp"] = good[:4] + struct.pack("<I", len(good) + 100) + good[8:]
    seeds["broken_chunk_past_riff.webp"] = good[:16] + struct.pack("<I", len(good)) + good[20:]
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for name, data in sorted(seeds.items()):
        assert len(data) < 2048, (name, len(data))
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()

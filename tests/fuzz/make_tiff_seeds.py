"""make_tiff_seeds.py — writes the seed corpus of the TIFF fuzz target (tests/fuzz/seeds/tiff/):
small TIFFs of every kind the codec reads (8/16-bit gray, gray+alpha, RGB, RGBA, palette,
MinIsWhite, associated alpha), every compression (none, LZW, deflate, PackBits, JPEG, zstd,
LZMA, WebP), strips and tiles, separate planes, big-endian, predictors, two pages, ICC + XMP +
Orientation, BigTIFF, and a few that must be refused (float, 1-bit, CMYK). Made by PIL and then
rewritten by tiffcp (libtiff-tools). Deterministic; the files are committed, so this is only
rerun to change them.

usage: make_tiff_seeds.py [OUTDIR]   (default: the seeds/tiff folder next to this script)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, TiffImagePlugin

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "seeds", "tiff")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(16)
W, H = 13, 9   # odd sizes: partial tiles and strips


def arr(c, dtype):
    hi = 255 if dtype == np.uint8 else 65535
    a = rng.integers(0, hi + 1, (H, W, c) if c > 1 else (H, W), dtype=np.int64)
    return a.astype(dtype)


def tiffcp(src, dst, *args):
    subprocess.run(["tiffcp", *args, src, dst], check=True, capture_output=True)


tmp = tempfile.mkdtemp()
base = {}
base["g8"] = Image.fromarray(arr(1, np.uint8))
base["ga8"] = Image.fromarray(arr(2, np.uint8), "LA")
base["rgb8"] = Image.fromarray(arr(3, np.uint8))
base["rgba8"] = Image.fromarray(arr(4, np.uint8), "RGBA")
base["g16"] = Image.fromarray(arr(1, np.uint16))
base["p8"] = Image.fromarray(arr(1, np.uint8)).convert("P")
for name, im in base.items():
    p = os.path.join(tmp, name + ".tif")
    im.save(p)
    base[name] = p

# 16-bit RGB(A) has no PIL mode: written by tiffcp from raw data through a tiny TIFF writer
def raw_tiff(path, a, spp, extra=None, big_endian=False, photometric=2):
    """An uncompressed single-strip TIFF of the samples in a (uint8 or uint16)."""
    e = ">" if big_endian else "<"
    bps = a.dtype.itemsize * 8
    data = a.astype(a.dtype.newbyteorder(e)).tobytes()
    tags = [(256, 4, [W]), (257, 4, [H]), (258, 3, [bps] * spp), (259, 3, [1]),
            (262, 3, [photometric]), (273, 4, [0]), (277, 3, [spp]), (278, 4, [H]),
            (279, 4, [len(data)])]
    if extra is not None:
        tags.append((338, 3, [extra]))
    tags.sort()
    import struct
    n = len(tags)
    ifd_off = 8
    blob_off = ifd_off + 2 + 12 * n + 4
    blobs = b""
    ents = b""
    fmt = {3: "H", 4: "I"}
    for tag, typ, vals in tags:
        raw = b"".join(struct.pack(e + fmt[typ], v) for v in vals)
        if len(raw) <= 4:
            ents += struct.pack(e + "HHI", tag, typ, len(vals)) + raw.ljust(4, b"\0")
        else:
            ents += struct.pack(e + "HHII", tag, typ, len(vals), blob_off + len(blobs))
            blobs += raw
    data_off = blob_off + len(blobs)
    # patch StripOffsets
    out_ents = b""
    for i, (tag, typ, vals) in enumerate(tags):
        ent = ents[12 * i:12 * i + 12]
        if tag == 273:
            ent = struct.pack(e + "HHII", 273, 4, 1, data_off)
        out_ents += ent
    head = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", ifd_off)
    with open(path, "wb") as f:
        f.write(head + struct.pack(e + "H", n) + out_ents + struct.pack(e + "I", 0) + blobs + data)


raw_tiff(os.path.join(tmp, "rgb16.tif"), arr(3, np.uint16), 3)
raw_tiff(os.path.join(tmp, "rgba16.tif"), arr(4, np.uint16), 4, extra=2)
raw_tiff(os.path.join(tmp, "rgba8pm.tif"), arr(4, np.uint8), 4, extra=1)
raw_tiff(os.path.join(out, "ga16_be.tif"), arr(2, np.uint16), 2, extra=2, big_endian=True,
         photometric=1)
raw_tiff(os.path.join(out, "g8_miniswhite.tif"), arr(1, np.uint8), 1, photometric=0)
raw_tiff(os.path.join(out, "cmyk8.tif"), arr(4, np.uint8), 4, photometric=5)
for n in ("rgb16", "rgba16", "rgba8pm"):
    base[n] = os.path.join(tmp, n + ".tif")

variants = [
    ("none", ["-c", "none"]), ("lzw", ["-c", "lzw"]), ("lzw_p2", ["-c", "lzw:2"]),
    ("zip_p2", ["-c", "zip:2"]), ("packbits", ["-c", "packbits"]), ("zstd_p2", ["-c", "zstd:2"]),
    ("lzma", ["-c", "lzma"]), ("tile_zip", ["-t", "-w", "16", "-l", "16", "-c", "zip"]),
    ("sep_lzw", ["-p", "separate", "-c", "lzw"]), ("be_zip", ["-B", "-c", "zip"]),
    ("strip3_packbits", ["-r", "3", "-c", "packbits"]),
]
for name, src in base.items():
    for vname, args in variants:
        if vname in ("lzma", "sep_lzw", "be_zip", "strip3_packbits") and name not in ("rgb8", "g16", "rgba16", "ga8"):
            continue
        if vname == "sep_lzw" and "16" in name:   # tiffcp splits planes of 8-bit samples only
            continue
        tiffcp(src, os.path.join(out, f"{name}_{vname}.tif"), *args)
tiffcp(base["rgb8"], os.path.join(out, "rgb8_jpeg_ycbcr.tif"), "-c", "jpeg", "-r", "16")
tiffcp(base["g8"], os.path.join(out, "g8_jpeg.tif"), "-c", "jpeg", "-r", "16")
tiffcp(base["rgba8"], os.path.join(out, "rgba8_webp.tif"), "-c", "webp")
tiffcp(base["rgb8"], os.path.join(out, "rgb8_tile_jpeg.tif"), "-t", "-w", "16", "-l", "16",
       "-c", "jpeg")
tiffcp(base["rgba8pm"], os.path.join(out, "rgba8_premultiplied.tif"), "-c", "zip")
tiffcp(base["rgb8"], os.path.join(out, "bigtiff_rgb8.tif"), "-8", "-c", "zip")
subprocess.run(["tiffcp", "-c", "lzw", base["rgb8"], base["g16"], base["ga8"],
                os.path.join(out, "multipage3.tif")], check=True)

# metadata: ICC, XMP, Orientation 6
icc = bytes(128) + b"\0\0\0\0"
icc = (len(icc)).to_bytes(4, "big") + icc[4:]
info = TiffImagePlugin.ImageFileDirectory_v2()
info[274] = 6
info[700] = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"/>'
Image.open(base["rgb8"]).save(os.path.join(out, "rgb8_meta_orient6.tif"), tiffinfo=info,
                              icc_profile=icc, compression="tiff_deflate")

# EXIF in an Exif IFD (exiftool)
ex = os.path.join(out, "rgb8_exif.tif")
tiffcp(base["rgb8"], ex, "-c", "lzw")
subprocess.run(["exiftool", "-q", "-overwrite_original", "-Make=Canon", "-Model=EOS 5D",
                "-DateTimeOriginal=2024:01:02 03:04:05", "-ExposureTime=1/125",
                "-UserComment=a comment", "-Orientation#=8", ex], check=True)

# refused kinds
Image.fromarray(rng.random((H, W), dtype=np.float32)).save(os.path.join(out, "f32.tif"))
Image.fromarray(arr(1, np.uint8) > 128).save(os.path.join(out, "bilevel.tif"))

# a truncated file
with open(os.path.join(out, "rgb8_lzw.tif"), "rb") as f:
    b = f.read()
with open(os.path.join(out, "truncated.tif"), "wb") as f:
    f.write(b[: len(b) // 2])
print(len(os.listdir(out)), "seeds in", out)

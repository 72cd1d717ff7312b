"""cli_info_header.py — `imgpu info` reads headers, not pixels (issue 30: it decoded every pixel,
0.96 s on 12 photos of 12 MP against vipsheader's 0.12 s; bench/info_header.sh measures it):
- a PNG whose deflate data is corrupt (its CRC made right, so only a decode can tell) is
  reported from its header, exit 0; `info --decode` decodes and reports the corruption, exit 1;
- what a load's checks catch from the structure is still caught: a truncated PNG and JPEG fail;
- every field is the same with and without --decode (text and JSON) on every asset, on JPEGs
  with each EXIF orientation 1..8 (dimensions as loaded: upright), with --no-auto-orient, on a
  16-bit PNG and a multi-page TIFF.
usage: cli_info_header.py IMGPU TMP_ROOT ASSETS (needs /usr/bin/python3 with numpy, cv2, PIL, else 77).
"""
import glob
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
    from PIL import Image
except ImportError:
    print("SKIP: needs numpy, cv2 and PIL (/usr/bin/python3)")
    sys.exit(77)


def main():
    binary, tmp, assets = cc.setup("cli_info_header")
    ck = cc.Checker("cli_info_header")

    # a PNG with corrupt deflate data and a right CRC
    b = bytearray(open(os.path.join(assets, "camera.png"), "rb").read())
    i = b.find(b"IDAT")
    n = struct.unpack(">I", b[i - 4:i])[0]
    for k in range(i + 4 + n // 2, i + 4 + n // 2 + 64):
        b[k] ^= 0x5A
    b[i + 4 + n:i + 8 + n] = struct.pack(">I", zlib.crc32(bytes(b[i:i + 4 + n])) & 0xFFFFFFFF)
    bad = os.path.join(tmp, "bad_data.png")
    open(bad, "wb").write(b)
    r = cc.run(binary, ["info", bad])
    ck.check(r.rc == 0 and "dimensions:  512 x 512" in r.out,
             "info reads the header of a PNG whose pixel data is corrupt (no decode)", str(r))
    r = cc.run(binary, ["info", "--decode", bad])
    ck.check(r.rc == 1 and "corrupt PNG data" in r.err and "imgpu: " in r.err,
             "info --decode decodes it and reports the corruption", str(r))

    # truncated files: the structure scan still catches them
    for name in ("camera.png", "rocket.jpg"):
        data = open(os.path.join(assets, name), "rb").read()
        cut = os.path.join(tmp, "cut_" + name)
        open(cut, "wb").write(data[: len(data) * 2 // 3])
        r = cc.run(binary, ["info", cut])
        ck.check(r.rc == 1 and "cannot read" in r.err, f"info reports a truncated {name}", str(r))

    # every field the same as with --decode
    files = sorted(glob.glob(os.path.join(assets, "*.png")) + glob.glob(os.path.join(assets, "*.jpg")))
    rgb = cv2.imread(os.path.join(assets, "chelsea.png"), cv2.IMREAD_COLOR)[:, :301]   # 301 x 300
    pil = Image.fromarray(cv2.cvtColor(rgb, cv2.COLOR_BGR2RGB))
    for o in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = o
        f = os.path.join(tmp, f"orient{o}.jpg")
        pil.save(f, quality=90, exif=exif.tobytes())
        files.append(f)
    deep = os.path.join(tmp, "deep.png")
    cv2.imwrite(deep, (np.arange(64 * 48 * 3, dtype=np.uint16).reshape(48, 64, 3) * 7))
    files.append(deep)
    tif = os.path.join(tmp, "pages.tif")
    pil.save(tif, save_all=True, append_images=[pil.rotate(90, expand=True), pil.convert("L")])
    files.append(tif)
    for extra in ([], ["--no-auto-orient"]):
        for form in ([], ["--json"]):
            a = cc.run(binary, ["info"] + form + extra + files)
            d = cc.run(binary, ["info", "--decode"] + form + extra + files)
            ck.check(a.rc == 0 and d.rc == 0 and a.out == d.out and a.out.count("orient") >= 8,
                     f"info {' '.join(form + extra)} prints what --decode prints, on {len(files)} files",
                     "\n".join(x for x in a.out.splitlines() if x not in d.out.splitlines())[:600] + str(a))
    r = cc.run(binary, ["info", os.path.join(tmp, "orient6.jpg")])
    ck.check("dimensions:  300 x 301" in r.out, "orientation 6: the dimensions as loaded (upright)", r.out)
    r = cc.run(binary, ["info", "--no-auto-orient", os.path.join(tmp, "orient6.jpg")])
    ck.check("dimensions:  301 x 300" in r.out, "--no-auto-orient: the stored dimensions", r.out)

    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

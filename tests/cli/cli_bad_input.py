"""cli_bad_input.py — hostile and broken inputs through every command of the CLI.

Each bad input (missing, empty, truncated PNG/JPEG/BMP/TGA at several offsets, a directory,
GIF and HDR files named .png, a PNG header claiming 100000x100000) must give: exit 1 (not a
crash: no signal, exit < 128; not a hang: 20 s timeout), "imgpu: " + a message that names
the file and says why, nothing new in the output directory (no temp files either), and a
pre-existing output file left byte-identical. Files with the wrong extension (a JPEG named
.png, a PNG named .jpg) must be read by their content.

Usage: cli_bad_input.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402


def png_chunks(data):
    """(offset, type, length) of each chunk."""
    out, i = [], 8
    while i + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[i:i + 8])
        out.append((i, kind, length))
        i += 12 + length
    return out


def make_cases(tmp, assets):
    """(label, path) of every bad input, written under tmp/in."""
    d = os.path.join(tmp, "in")
    os.makedirs(d)
    cases = []

    def add(label, name, data):
        p = os.path.join(d, name)
        cc.write(p, data)
        cases.append((label, p))

    cases.append(("nonexistent file", os.path.join(d, "does-not-exist.png")))
    add("empty file", "empty.png", b"")
    add("empty .jpg", "empty.jpg", b"")

    png = cc.read(os.path.join(assets, "camera.png"))
    chunks = png_chunks(png)
    idats = [c for c in chunks if c[1] == b"IDAT"]
    first, last = idats[0], idats[-1]
    png_cuts = sorted({
        4,                               # inside the signature
        8,                               # signature only
        20,                              # inside IHDR
        33,                              # IHDR complete, nothing else
        first[0] + 4,                    # inside the first IDAT's header
        first[0] + 8 + 100,              # inside the first IDAT's data
        len(png) // 2,                   # middle of the pixel data
        last[0] + 8 + last[2] // 2,      # inside the last IDAT's data
        last[0] + 8 + last[2] - 1,       # the last IDAT short by one byte
    })
    for cut in png_cuts:
        add(f"PNG truncated at {cut}/{len(png)}", f"trunc_png_{cut}.png", png[:cut])

    jpg = cc.read(os.path.join(assets, "rocket.jpg"))
    for cut in (2, 3, 100, 600, len(jpg) // 4, len(jpg) // 2, len(jpg) - 1000):
        add(f"JPEG truncated at {cut}/{len(jpg)}", f"trunc_jpg_{cut}.jpg", jpg[:cut])

    w, h = 17, 9  # odd width: BMP rows are padded to 4 bytes
    rgb = bytes((x * 13 + y * 7 + c * 50) % 256 for y in range(h) for x in range(w) for c in range(3))
    bmp = cc.bmp_bytes(w, h, rgb)
    # Not len - 1: that only drops the last row's padding byte, which readers may forgive.
    for cut in (2, 10, 30, 54, 54 + (len(bmp) - 54) // 2, len(bmp) - 2):
        add(f"BMP truncated at {cut}/{len(bmp)}", f"trunc_bmp_{cut}.bmp", bmp[:cut])

    tga = cc.tga_bytes(w, h, rgb)
    for cut in (5, 12, 18, 18 + (len(tga) - 18) // 2, len(tga) - 1):
        add(f"TGA truncated at {cut}/{len(tga)}", f"trunc_tga_{cut}.tga", tga[:cut])

    os.makedirs(os.path.join(d, "a_directory.png"))
    cases.append(("a directory", os.path.join(d, "a_directory.png")))
    add("GIF named .png", "gif.png", cc.GIF_1x1)
    add("HDR named .png", "hdr.png", cc.HDR_2x1)
    add("PNG header claiming 100000x100000", "huge.png",
        cc.png_bytes(4, 4, 3, bytes(48), declared=(100000, 100000)))
    add("PNG header claiming 0x0", "zero.png", cc.png_bytes(4, 4, 3, bytes(48), declared=(0, 0)))
    add("PNG with a corrupt IDAT", "bad_idat.png", corrupt_idat(cc.png_bytes(8, 8, 1, bytes(range(64)))))
    return cases, png, jpg


def corrupt_idat(data):
    """Flip bytes in the deflate stream and fix the chunk CRC, so only zlib can notice."""
    out = bytearray(data)
    for off, kind, length in png_chunks(data):
        if kind == b"IDAT":
            for k in range(2, length):
                out[off + 8 + k] ^= 0xA5
            body = bytes(out[off + 4:off + 8 + length])
            out[off + 8 + length:off + 12 + length] = struct.pack(">I", cc.zlib.crc32(body) & 0xFFFFFFFF)
    return bytes(out)


def main():
    binary, tmp, assets = cc.setup("cli_bad_input")
    t = cc.Checker("cli_bad_input")
    cases, png, jpg = make_cases(tmp, assets)

    outdir = os.path.join(tmp, "out")
    os.makedirs(outdir)
    existing = os.path.join(outdir, "existing.png")
    precious = b"precious bytes: not an image, must survive a failed run\n"
    cc.write(existing, precious)
    good = os.path.join(assets, "camera.png")

    for label, path in cases:
        runs = [
            ["equalize", path, existing],
            ["equalize", path, os.path.join(outdir, "new.png"), "--device", "cpu"],
            ["rotate", path, os.path.join(outdir, "rot.jpg"), "--angle", "30"],
            ["histogram", path, "--plot", os.path.join(outdir, "plot.png")],
            ["histogram", path, "--csv"],
            ["info", "--decode", path],   # plain info reads headers only: checked below
            ["compare", good, path, "--diff", os.path.join(outdir, "diff.png")],
        ]
        for args in runs:
            before = cc.snapshot(outdir)
            r = cc.run(binary, args)
            what = f"{label}: imgpu {args[0]}"
            if not t.check(not r.timed_out, f"{what}: no hang", str(r)):
                continue
            t.check(0 <= r.rc < 128, f"{what}: no crash (exit {r.rc})", str(r))
            t.check(r.rc == 1, f"{what}: exit 1", str(r))
            line = r.err.strip().splitlines()[-1] if r.err.strip() else ""
            t.check(line.startswith("imgpu: "), f"{what}: message starts with 'imgpu: '", str(r))
            # The message names the file and then says why: some words after the name.
            m = re.search(re.escape(path) + r"['\"]?(.*)$", line)
            t.check(m is not None, f"{what}: message names {path}", str(r))
            if m:
                t.check(re.search(r"[A-Za-z]{3,}", m.group(1)) is not None,
                        f"{what}: message gives a reason after the file name", str(r))
            if args[0] == "histogram" and "--csv" in args:
                t.check(r.out == "", f"{what}: nothing on stdout", str(r))
            after = cc.snapshot(outdir)
            t.check(after == before, f"{what}: output directory unchanged",
                    f"before {sorted(before)}\nafter  {sorted(after)}")
            t.check(cc.read(existing) == precious, f"{what}: existing output byte-identical")
            # Put things back, so one failure does not cascade into every later case.
            for name in set(after) - set(before):
                p = os.path.join(outdir, name)
                if os.path.isfile(p):
                    os.unlink(p)
            cc.write(existing, precious)
        # plain info reads the header and structure only: a fault in the pixel data alone may
        # pass (exit 0, a report); anything else is exit 1 with the usual message
        r = cc.run(binary, ["info", path])
        what = f"{label}: imgpu info (header only)"
        if t.check(not r.timed_out and r.rc in (0, 1), f"{what}: no hang or crash, exit 0 or 1", str(r)):
            if r.rc == 1:
                t.check(r.err.strip().splitlines()[-1].startswith("imgpu: ") and path in r.err,
                        f"{what}: a failure names the file", str(r))
            else:
                t.check("dimensions:" in r.out, f"{what}: a report", str(r))

    # Wrong extensions: read by content.
    d = os.path.join(tmp, "in")
    jpg_as_png = os.path.join(d, "really_a_jpeg.png")
    png_as_jpg = os.path.join(d, "really_a_png.jpg")
    cc.write(jpg_as_png, jpg)
    cc.write(png_as_jpg, png)
    for path, fmt, size in ((jpg_as_png, "JPEG", "640 x 427"), (png_as_jpg, "PNG", "512 x 512")):
        r = cc.run(binary, ["info", path])
        t.check(r.rc == 0, f"{os.path.basename(path)}: info exit 0", str(r))
        t.check(re.search(r"format:\s+" + fmt, r.out) is not None,
                f"{os.path.basename(path)}: info says {fmt}", str(r))
        t.check(size in r.out, f"{os.path.basename(path)}: info says {size}", str(r))
        out = os.path.join(outdir, "from_" + os.path.basename(path) + ".png")
        r = cc.run(binary, ["equalize", path, out, "--device", "cpu"])
        t.check(r.rc == 0 and os.path.isfile(out), f"{os.path.basename(path)}: equalize works", str(r))

    # --max-pixels below the image size is refused before decoding; at the size it passes.
    r = cc.run(binary, ["info", good, "--max-pixels", str(512 * 512 - 1)])
    t.check(r.rc == 1 and good in r.err, "--max-pixels 512*512-1 refuses camera.png", str(r))
    r = cc.run(binary, ["info", good, "--max-pixels", str(512 * 512)])
    t.check(r.rc == 0, "--max-pixels 512*512 accepts camera.png", str(r))

    rc = t.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

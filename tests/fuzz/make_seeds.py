#!/usr/bin/python3
"""make_seeds.py — writes the hand-made seed and edge-case files of the fuzz corpora:
    tests/fuzz/seeds/decode/   small valid images of every format and layout, and broken ones
                               (PNG with bad CRCs, huge IHDR, zero-length and over-long IDAT,
                               bad palettes; progressive, restart-interval and arithmetic JPEGs
                               from Debian's libjpeg-turbo-progs (cjpeg, jpegtran); BMP/TGA
                               with RLE overruns and bad palettes; 16-bit and low-maxval PNM)
    tests/fuzz/seeds/ops/      the valid small images (what the ops target can get past decode)
    tests/fuzz/seeds/cli/      command lines, NUL-separated
(tests/fuzz/seeds/exif/ is tests/fuzz/make_exif_seeds.py's.)
The outputs are committed; rerun after changing this script:
    /usr/bin/python3 tests/fuzz/make_seeds.py        (cjpeg/jpegtran: apt-get install libjpeg-turbo-progs)
Deterministic: fixed pixel patterns, no randomness. tests/robust/robust_matrix.py uses the same
files as its crafted cases.
"""
import os, shutil, struct, subprocess, sys, tempfile, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "seeds")


def chunk(t, data, crc=None):
    c = zlib.crc32(t + data) & 0xffffffff if crc is None else crc
    return struct.pack(">I", len(data)) + t + data + struct.pack(">I", c)


def png(w, h, ctype, depth, raw_rows, plte=None, trns=None, interlace=0, idat_split=None,
        ihdr_w=None, ihdr_h=None):
    sig = b"\x89PNG\r\n\x1a\n"
    ihdr = struct.pack(">IIBBBBB", ihdr_w or w, ihdr_h or h, depth, ctype, 0, 0, interlace)
    z = zlib.compress(raw_rows, 9)
    out = sig + chunk(b"IHDR", ihdr)
    if plte is not None:
        out += chunk(b"PLTE", plte)
    if trns is not None:
        out += chunk(b"tRNS", trns)
    if idat_split:
        for i in range(0, len(z), idat_split):
            out += chunk(b"IDAT", z[i:i + idat_split])
    else:
        out += chunk(b"IDAT", z)
    return out + chunk(b"IEND", b"")


def pattern(w, h, c, depth=8):
    rows = b""
    for y in range(h):
        row = bytearray([y % 5])  # filter type cycles None/Sub/Up/Average/Paeth
        for x in range(w):
            for k in range(c):
                v = (x * 37 + y * 11 + k * 73) & 0xff
                row += bytes([v]) if depth == 8 else bytes([v, (v * 3) & 0xff])
        rows += bytes(row)
    return rows


def adam7(w, h, c):
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
              (0, 1, 1, 2)]
    out = b""
    for x0, y0, dx, dy in passes:
        xs = range(x0, w, dx)
        ys = range(y0, h, dy)
        if not xs or not ys:
            continue
        for y in ys:
            out += b"\x00" + bytes((x * 37 + y * 11 + k * 73) & 0xff for x in xs for k in range(c))
    return out


def bmp(w, h, bpp, pixels, palette=b"", compression=0, clr_used=0, top_down=False):
    hdr_size = 14 + 40 + len(palette)
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, bpp, compression,
                       len(pixels), 2835, 2835, clr_used, 0)
    fh = b"BM" + struct.pack("<IHHI", hdr_size + len(pixels), 0, 0, hdr_size)
    return fh + info + palette + pixels


def bmp_rows(w, h, bpp):
    out = b""
    for y in range(h):
        if bpp == 24:
            row = bytes((x * 7 + y * 13 + k * 50) & 0xff for x in range(w) for k in range(3))
        elif bpp == 32:
            row = bytes((x * 7 + y * 13 + k * 50) & 0xff for x in range(w) for k in range(4))
        else:  # 8-bit indices
            row = bytes((x + y) & 0x0f for x in range(w))
        out += row + b"\0" * ((4 - len(row) % 4) % 4)
    return out


def tga(w, h, itype, bpp, data, cmap=b"", cmap_len=0, cmap_bits=0, desc=0):
    hdr = struct.pack("<BBBHHBHHHHBB", 0, 1 if cmap_len else 0, itype, 0, cmap_len, cmap_bits,
                      0, 0, w, h, bpp, desc)
    return hdr + cmap + data


def write(d, name, data):
    os.makedirs(os.path.join(OUT, d), exist_ok=True)
    with open(os.path.join(OUT, d, name), "wb") as f:
        f.write(data)


def main():
    # only the corpora written here: seeds/exif/ is make_exif_seeds.py's
    for d in ("decode", "ops", "cli"):
        shutil.rmtree(os.path.join(OUT, d), ignore_errors=True)
    os.makedirs(OUT, exist_ok=True)
    valid = {}
    bad = {}
    # ---- PNG ----
    for c, ct in ((1, 0), (2, 4), (3, 2), (4, 6)):
        valid[f"png_c{c}.png"] = png(13, 9, ct, 8, pattern(13, 9, c))
    valid["png_interlaced_rgb.png"] = png(11, 10, 2, 8, adam7(11, 10, 3), interlace=1)
    pal = bytes(i * 16 % 256 for i in range(48))
    valid["png_palette.png"] = png(8, 8, 3, 8, b"".join(b"\0" + bytes((x + y) % 16 for x in range(8)) for y in range(8)), plte=pal)
    valid["png_palette_trns.png"] = png(8, 8, 3, 8, b"".join(b"\0" + bytes((x + y) % 16 for x in range(8)) for y in range(8)), plte=pal, trns=b"\0\x80")
    valid["png_gray_4bit.png"] = png(8, 4, 0, 4, b"".join(b"\0" + bytes([0x12, 0x34, 0x56, 0x78]) for _ in range(4)))
    valid["png_split_idat.png"] = png(16, 16, 2, 8, pattern(16, 16, 3), idat_split=7)
    good = valid["png_c3.png"]
    b = bytearray(good); b[8 + 8 + 13] ^= 1; bad["png_bad_ihdr_crc.png"] = bytes(b)
    b = bytearray(good); b[-13] ^= 0x40; bad["png_bad_idat_crc.png"] = bytes(b)
    bad["png_huge_ihdr.png"] = png(1, 1, 0, 8, b"\0\0", ihdr_w=0x7fffffff, ihdr_h=0x7fffffff)
    bad["png_huge_ihdr_65535.png"] = png(1, 1, 2, 8, b"\0\0\0\0", ihdr_w=65535, ihdr_h=65535)
    bad["png_zero_size.png"] = png(1, 1, 0, 8, b"\0\0", ihdr_w=0)
    # zero-length IDAT before the real one, and an IDAT whose length claims more than exists
    sig_ihdr = good[:8 + 25]
    rest = good[8 + 25:]
    bad["png_zero_idat.png"] = sig_ihdr + chunk(b"IDAT", b"") + rest
    z = zlib.compress(pattern(13, 9, 3))
    bad["png_overlong_idat.png"] = sig_ihdr + struct.pack(">I", 0x7ffffff0) + b"IDAT" + z + b"\0\0\0\0"
    bad["png_short_idat.png"] = png(13, 9, 2, 8, pattern(13, 5, 3))  # inflates to 5 of 9 rows
    # palette index beyond a 2-entry PLTE; PLTE longer than 256 entries
    bad["png_palette_oob.png"] = png(8, 8, 3, 8, b"".join(b"\0" + bytes([200] * 8) for _ in range(8)), plte=b"\xff\0\0\0\xff\0")
    bad["png_palette_toolong.png"] = png(4, 4, 3, 8, b"".join(b"\0" + bytes(4) for _ in range(4)), plte=bytes(3 * 300))
    bad["png_bad_filter.png"] = png(4, 4, 0, 8, b"".join(b"\x09" + bytes(4) for _ in range(4)))
    bad["png_16bit.png"] = png(5, 5, 2, 16, pattern(5, 5, 3, 16))
    # decompression bomb within and beyond the default limit: 16384 x 16384 and 20000 x 20000 zeros
    bomb_rows = zlib.compressobj(9)
    zb = b""
    row = b"\0" * (16384 + 1)
    for _ in range(16384):
        zb += bomb_rows.compress(row)
    zb += bomb_rows.flush()
    ihdr = struct.pack(">IIBBBBB", 16384, 16384, 8, 0, 0, 0, 0)
    bad["png_bomb_16k.png"] = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zb) + chunk(b"IEND", b"")
    bad["png_bomb_20k_header.png"] = png(1, 1, 0, 8, b"\0\0", ihdr_w=20000, ihdr_h=20000)
    bad["png_no_iend.png"] = good[:-12]
    bad["png_truncated.png"] = good[:len(good) // 2]

    # ---- JPEG (cjpeg / jpegtran) ----
    tmp = tempfile.mkdtemp()
    try:
        ppm = os.path.join(tmp, "in.ppm")
        pgm = os.path.join(tmp, "in.pgm")
        w, h = 37, 29
        with open(ppm, "wb") as f:
            f.write(b"P6\n%d %d\n255\n" % (w, h) + bytes((x * 7 + y * 9 + k * 60) & 0xff for y in range(h) for x in range(w) for k in range(3)))
        with open(pgm, "wb") as f:
            f.write(b"P5\n%d %d\n255\n" % (w, h) + bytes((x * 7 + y * 9) & 0xff for y in range(h) for x in range(w)))
        if shutil.which("cjpeg"):
            jobs = {
                "jpeg_baseline.jpg": ["cjpeg", "-quality", "80", ppm],
                "jpeg_gray.jpg": ["cjpeg", "-grayscale", pgm],
                "jpeg_444.jpg": ["cjpeg", "-sample", "1x1", ppm],
                "jpeg_422.jpg": ["cjpeg", "-sample", "2x1", ppm],
                "jpeg_progressive.jpg": ["cjpeg", "-progressive", ppm],
                "jpeg_progressive_gray.jpg": ["cjpeg", "-progressive", "-grayscale", pgm],
                "jpeg_restart1.jpg": ["cjpeg", "-restart", "1B", ppm],
                "jpeg_restart_prog.jpg": ["cjpeg", "-progressive", "-restart", "2", ppm],
                "jpeg_optimized.jpg": ["cjpeg", "-optimize", ppm],
                "jpeg_arithmetic.jpg": ["cjpeg", "-arithmetic", ppm],
            }
            for name, cmd in jobs.items():
                r = subprocess.run(cmd, capture_output=True)
                if r.returncode == 0 and r.stdout:
                    (bad if "arith" in name else valid)[name] = r.stdout
            base = valid.get("jpeg_baseline.jpg")
            if base and shutil.which("jpegtran"):
                p = os.path.join(tmp, "b.jpg")
                open(p, "wb").write(base)
                r = subprocess.run(["jpegtran", "-progressive", "-restart", "1", p], capture_output=True)
                if r.returncode == 0:
                    valid["jpeg_jpegtran_prog_rst.jpg"] = r.stdout
            if base:
                # SOF claiming 65535 x 65535; the data cut in the middle of the scan
                i = base.index(b"\xff\xc0")
                b = bytearray(base); b[i + 5:i + 9] = b"\xff\xff\xff\xff"; bad["jpeg_huge_sof.jpg"] = bytes(b)
                bad["jpeg_truncated.jpg"] = base[:len(base) * 2 // 3]
                i = base.index(b"\xff\xc4")
                b = bytearray(base); b[i + 5:i + 21] = b"\xff" * 16; bad["jpeg_bad_huffman.jpg"] = bytes(b)
                i = base.index(b"\xff\xda")
                # many empty scans: a scan-count bomb (stb re-walks the image per scan)
                sos = base[i:i + 2 + struct.unpack(">H", base[i + 2:i + 4])[0]]
                bad["jpeg_many_scans.jpg"] = base[:i] + (sos + b"\x00") * 3000 + base[i:]
        else:
            print("make_seeds: cjpeg not found (apt-get install libjpeg-turbo-progs): no JPEG seeds", file=sys.stderr)
    finally:
        shutil.rmtree(tmp)

    # ---- BMP ----
    valid["bmp_24.bmp"] = bmp(7, 5, 24, bmp_rows(7, 5, 24))
    valid["bmp_32.bmp"] = bmp(7, 5, 32, bmp_rows(7, 5, 32))
    valid["bmp_8_palette.bmp"] = bmp(7, 5, 8, bmp_rows(7, 5, 8), palette=bytes(i * 15 % 256 for i in range(64)), clr_used=16)
    valid["bmp_topdown.bmp"] = bmp(7, 5, 24, bmp_rows(7, 5, 24), top_down=True)
    # RLE8: a run that writes past the row / past the image; palette claiming 1000 colors
    rle = b"\x20\x01" * 5 + b"\x00\x00" + b"\xff\x02" * 40 + b"\x00\x01"
    bad["bmp_rle8_overrun.bmp"] = bmp(8, 4, 8, rle, palette=bytes(4 * 16), compression=1, clr_used=16)
    bad["bmp_bad_palette.bmp"] = bmp(7, 5, 8, bmp_rows(7, 5, 8), palette=bytes(64), clr_used=1000)
    bad["bmp_truncated.bmp"] = valid["bmp_24.bmp"][:80]
    bad["bmp_huge.bmp"] = bmp(0x7fffffff, 0x7fffffff, 24, b"\0" * 16)

    # ---- TGA ----
    px = bytes((i * 29) & 0xff for i in range(6 * 4 * 3))
    valid["tga_rgb.tga"] = tga(6, 4, 2, 24, px)
    valid["tga_gray.tga"] = tga(6, 4, 3, 8, bytes(range(24)))
    valid["tga_rgba_topdown.tga"] = tga(6, 4, 2, 32, bytes((i * 13) & 0xff for i in range(96)), desc=0x28)
    # RLE: one packet of 128 repeats for a 24-pixel image, then a raw packet running off the end
    valid["tga_rle.tga"] = tga(6, 4, 10, 24, b"\x97\x10\x20\x30")
    bad["tga_rle_overrun.tga"] = tga(6, 4, 10, 24, b"\xff\x10\x20\x30" + b"\x7f" + b"\x01" * 10)
    cmap = bytes((i * 7) & 0xff for i in range(4 * 3))
    valid["tga_colormap.tga"] = tga(4, 4, 1, 8, bytes(i % 4 for i in range(16)), cmap=cmap, cmap_len=4, cmap_bits=24)
    bad["tga_colormap_oob.tga"] = tga(4, 4, 1, 8, bytes([250] * 16), cmap=cmap, cmap_len=4, cmap_bits=24)
    bad["tga_truncated.tga"] = valid["tga_rgb.tga"][:40]

    # ---- PNM ----
    valid["pnm_p5.pgm"] = b"P5\n# comment\n5 4\n255\n" + bytes(range(0, 200, 10))
    valid["pnm_p6.ppm"] = b"P6 3 2 255\n" + bytes(range(18))
    valid["pnm_maxval15.pgm"] = b"P5\n4 2\n15\n" + bytes([0, 5, 10, 15, 15, 10, 5, 0])
    bad["pnm_16bit.pgm"] = b"P5\n4 2\n65535\n" + bytes(range(16))
    bad["pnm_16bit_rgb.ppm"] = b"P6\n2 2\n65535\n" + bytes(range(24))
    bad["pnm_huge.pgm"] = b"P5\n99999999 99999999\n255\n\0"
    bad["pnm_truncated.ppm"] = b"P6 3 2 255\n" + bytes(10)
    bad["pnm_maxval0.pgm"] = b"P5 2 2 0\n\0\0\0\0"
    # imgpu's own PNM reader: ASCII kinds and bitmaps
    valid["pnm_p1.pbm"] = b"P1\n# bits\n5 2\n1 0 1 0 1\n01010\n"
    valid["pnm_p2.pgm"] = b"P2\n4 2\n15\n0 5 10 15\n15 10 5 0\n"
    valid["pnm_p2_16.pgm"] = b"P2 3 1 1023 0 512 1023\n"
    valid["pnm_p3.ppm"] = b"P3\n2 2\n255\n255 0 0  0 255 0\n0 0 255  255 255 255\n"
    valid["pnm_p4.pbm"] = b"P4\n10 2\n" + bytes([0xa5, 0x40, 0x5a, 0x80])
    bad["pnm_p2_above.pgm"] = b"P2\n2 1\n15\n3 16\n"
    bad["pnm_p3_word.ppm"] = b"P3\n1 1\n255\n1 two 3\n"

    with open(os.path.join(OUT, "valid.txt"), "w") as f:  # robust_matrix: these must decode
        f.write("".join(n + "\n" for n in sorted(valid)))
    for name, data in valid.items():
        write("decode", name, data)
        write("ops", name, data)
    for name, data in bad.items():
        write("decode", name, data)
        if len(data) < 4096:
            write("ops", name, data)

    # ---- command lines ----
    cli = [
        ["equalize", "in.png", "out.png"],
        ["equalize", "in.png", "out.jpg", "--mode", "per-channel", "--device=cpu", "--quality", "90"],
        ["rotate", "a.png", "b.png", "--angle", "-12.5", "--filter", "bicubic", "--crop"],
        ["rotate", "a.png", "b.tga", "--angle=30", "--background", "#3080c0", "--expand"],
        ["rotate", "a.png", "b.png", "--angle", "90", "--background", "10,20,30,40"],
        ["histogram", "x.jpg", "--csv", "--plot", "h.png", "--max-pixels", "1000"],
        ["info", "x.png", "--quiet"],
        ["compare", "a.png", "b.png", "--diff", "d.png", "--max-abs", "3"],
        ["equalize", "--", "-in.png", "out.png", "--force", "--png-level", "9"],
        ["help", "rotate"], ["--version"], ["rotate", "--help"],
        ["equalize", "in.png", "out.png", "--max-file-size", "1000", "--max-decode-time", "2.5"],
    ]
    for i, args in enumerate(cli):
        write("cli", "cmd%02d" % i, b"\0".join(a.encode() for a in args))
    print(f"make_seeds: {len(valid)} valid and {len(bad)} broken image files, {len(cli)} command lines -> {OUT}")


if __name__ == "__main__":
    main()

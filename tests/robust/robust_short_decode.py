"""robust_short_decode.py — issue 25: a decode that comes out short is corrupt data, in every
codec, and whatever the heap held before never reaches an output.

The defect: libtiff decodes a JPEG strip or tile whose frame (SOF) is smaller than the strip or
tile with only a warning and still returns the full length, so the rows and columns it never
wrote were whatever malloc handed back, and `imgpu rotate` wrote them into its output (exit 0).
libjpeg's padding of a strip whose data ends early passed the same way. Each such file must now
end in exit 1 with "imgpu: cannot read 'NAME': corrupt TIFF data (...)" and no output.

How "no uninitialised byte reaches the output" is checked: every run is made twice, with
MALLOC_PERTURB_=85 and =170 (glibc then fills each malloc'ed block with 85 ^ 255 or 170 ^ 255),
so heap bytes that reach an output make the two outputs differ. A refused file must fail both
times and write nothing (an existing output stays as it was); a file that decodes must give the
same bytes both times. The inputs are made here: imgpu's own JPEG and JPEG-in-TIFF writers for
the coded data, a small TIFF writer below for strips, tiles, pages and sizes the writers do not
make, then byte edits (the SOF's size, a cut in the data).

JPEG had one short decode left: a frame component that no scan codes (libjpeg decodes it from
zeroed coefficients, silently); its structure scan now refuses it. The other codecs held before
this issue (their structure scans prove the data is all there, and every decoder's short or
early-ending result is an error: codec_jpeg.c's warnings, the PNG paths' zlib and row checks,
libwebp's incremental status); their short decodes are kept here as guards of that rule
(docs/reliability.md, "A short decode is corrupt data", has the audit).

Usage: robust_short_decode.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import random
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

PERTURB = ("85", "170")


# ---- inputs ----------------------------------------------------------------------------------

def noise(n, seed):
    r = random.Random(seed)
    return bytes(r.randrange(256) for _ in range(n))


def set_sof(jpeg, w=None, h=None):
    """The first baseline frame header (FF C0, 3 components) of jpeg says w x h (None: keeps).
    FF C0 cannot occur inside entropy-coded data (FF is stuffed there)."""
    i = jpeg.find(b"\xff\xc0\x00\x11\x08")
    assert i >= 0, "no baseline SOF"
    oh, ow = struct.unpack_from(">HH", jpeg, i + 5)
    out = bytearray(jpeg)
    struct.pack_into(">HH", out, i + 5, oh if h is None else h, ow if w is None else w)
    return bytes(out)


def cut_scan(jpeg, frac, eoi):
    """jpeg with its (last) scan's data cut to frac, an EOI marker after it when eoi."""
    sos = jpeg.rfind(b"\xff\xda")
    cut = sos + int((len(jpeg) - 2 - sos) * frac)
    return jpeg[:cut] + (b"\xff\xd9" if eoi else b"")


def jpeg_scans(scans, progressive, w=16, h=16):
    """A 3-component JPEG (1x1 sampling) of all-zero blocks whose scans code the components
    listed in `scans` (one list per scan): sequential scans code every coefficient, progressive
    ones the DC only. One 1-bit Huffman code per table: DC difference 0, end of block."""
    def seg(marker, body):
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body
    out = b"\xff\xd8" + seg(0xDB, b"\x00" + bytes([1] * 64))
    out += seg(0xC2 if progressive else 0xC0, struct.pack(">BHHB", 8, h, w, 3)
               + b"\x01\x11\x00\x02\x11\x00\x03\x11\x00")
    out += seg(0xC4, b"\x00" + bytes([1] + [0] * 15) + b"\x00"
               + b"\x10" + bytes([1] + [0] * 15) + b"\x00")
    blocks = (w // 8) * (h // 8)
    for comps in scans:
        bits = blocks * len(comps) * (1 if progressive else 2)   # '0' codes, padded with 1s
        data = bytes(bits // 8) + (bytes([0xFF >> bits % 8]) if bits % 8 else b"")
        out += seg(0xDA, bytes([len(comps)]) + b"".join(bytes([c, 0]) for c in comps)
                   + (bytes([0, 0, 0]) if progressive else bytes([0, 63, 0]))) + data
    return out + b"\xff\xd9"


def tiff_pages(pages):
    """A little-endian classic TIFF of one or more pages. Each page: dict with w, h, spp, bps,
    comp, photo, blocks (the coded strips or tiles, in order), rps or tile=(tw, th), and extra
    [(tag, type, values)]. Types: 3 SHORT, 4 LONG."""
    out = bytearray(b"II*\0\0\0\0\0")
    link = 4   # where the offset of the next IFD goes
    for p in pages:
        tags = {256: (4, [p["w"]]), 257: (4, [p["h"]]), 258: (3, [p["bps"]] * p["spp"]),
                259: (3, [p["comp"]]), 262: (3, [p["photo"]]), 277: (3, [p["spp"]]),
                284: (3, [1])}
        blocks = p["blocks"]
        if "tile" in p:
            tags[322], tags[323] = (3, [p["tile"][0]]), (3, [p["tile"][1]])
            offk, cntk = 324, 325
        else:
            tags[278] = (4, [p.get("rps", p["h"])])
            offk, cntk = 273, 279
        tags[offk] = (4, [0] * len(blocks))
        tags[cntk] = (4, [len(b) for b in blocks])
        for t, typ, vals in p.get("extra", ()):
            tags[t] = (typ, list(vals))
        ifd = len(out) + (len(out) & 1)
        out += b"\0" * (ifd - len(out))
        struct.pack_into("<I", out, link, ifd)
        n = len(tags)
        values = ifd + 2 + 12 * n + 4       # out-of-line values follow the IFD
        big = sum((2 if typ == 3 else 4) * len(v) for typ, v in tags.values()
                  if (2 if typ == 3 else 4) * len(v) > 4)
        data = values + big + 8             # then the coded blocks
        offs, pos = [], data
        for b in blocks:
            offs.append(pos)
            pos += len(b)
        tags[offk] = (4, offs)
        entries, tail = bytearray(struct.pack("<H", n)), bytearray()
        for t in sorted(tags):
            typ, vals = tags[t]
            raw = struct.pack("<%d%s" % (len(vals), "H" if typ == 3 else "I"), *vals)
            if len(raw) <= 4:
                entries += struct.pack("<HHI", t, typ, len(vals)) + raw.ljust(4, b"\0")
            else:
                entries += struct.pack("<HHII", t, typ, len(vals), values + len(tail))
                tail += raw
        link = ifd + len(entries)
        entries += b"\0\0\0\0"
        out += entries + tail
        out += b"\0" * (data - len(out))
        out += b"".join(blocks)
    return bytes(out)


def jpeg_page(w, h, blocks, **kw):
    """A YCbCr 4:2:0 JPEG-in-TIFF page (libtiff converts to RGB), as imgpu's JPEG writer codes."""
    p = dict(w=w, h=h, spp=3, bps=8, comp=7, photo=6, blocks=blocks,
             extra=[(530, 3, [2, 2])])
    p.update(kw)
    return p


# ---- runs ------------------------------------------------------------------------------------

def run_twice(binary, args, out, cwd):
    """args with MALLOC_PERTURB_ 85 and 170; out: the output path in args or None. Returns
    [(Result, output bytes or None)] for the two runs; each run's output is removed after it."""
    res = []
    for v in PERTURB:
        env = dict(os.environ, MALLOC_PERTURB_=v)
        r = cc.run(binary, args, cwd=cwd, env=env)
        data = None
        if out and os.path.exists(os.path.join(cwd, out)):
            data = cc.read(os.path.join(cwd, out))
            os.remove(os.path.join(cwd, out))
        res.append((r, data))
    return res


def main():
    binary, tmp, assets = cc.setup("robust_short_decode")
    ck = cc.Checker("robust_short_decode")
    d = tmp

    def make(name, data):
        cc.write(os.path.join(d, name), data)

    def imgpu_write(src, dst, *opts):
        r = cc.run(binary, ["rotate", "--angle", "0", src, dst, "--device", "cpu"] + list(opts),
                   cwd=d)
        if not ck.check(r.rc == 0, f"making {dst} with imgpu", str(r)):
            sys.exit(ck.end())
        return cc.read(os.path.join(d, dst))

    def refused(name, reason, extra=(), cmd="rotate"):
        """name must fail cleanly under both perturbations: exit 1, one message naming it and
        saying why, no output."""
        out = "out_" + os.path.splitext(name)[0] + ".png"
        args = ([cmd, name, out, "--angle", "90", "--device", "cpu"] if cmd == "rotate"
                else [cmd, "--decode", name] if cmd == "info"   # info reads headers unless --decode
                else [cmd, name]) + list(extra)
        runs = run_twice(binary, args, out if cmd == "rotate" else None, d)
        for (r, data), v in zip(runs, PERTURB):
            label = f"{name} (MALLOC_PERTURB_={v})"
            ck.check(not r.timed_out and r.rc == 1, f"{label}: exit 1", str(r))
            ck.check(r.err.startswith(f"imgpu: cannot read '{name}': ") and reason in r.err,
                     f"{label}: 'imgpu: cannot read '{name}': ...{reason}...'", str(r))
            ck.check("runtime error" not in r.err and "Sanitizer" not in r.err,
                     f"{label}: no sanitizer report", str(r))
            ck.check(data is None, f"{label}: no output written")
        (_, a), (_, b) = runs
        if a is not None and b is not None:   # (a failure above already) which outputs differ
            ck.check(a == b, f"{name}: the outputs of the two runs are the same (they differ: "
                             "heap bytes reached them)")

    def decodes(name, extra=()):
        """name decodes, and to the same output under both perturbations."""
        out = "out_" + os.path.splitext(name)[0] + ".png"
        (r1, a), (r2, b) = run_twice(binary, ["rotate", name, out, "--angle", "90", "--device",
                                              "cpu"] + list(extra), out, d)
        ok = ck.check(r1.rc == 0 and r2.rc == 0 and a and b, f"{name}: decodes", f"{r1}\n{r2}")
        if ok:
            ck.check(a == b, f"{name}: the same output under MALLOC_PERTURB_ 85 and 170 "
                             "(no heap bytes in it)")

    # coded data from imgpu's own writers: an 80x64 RGB noise image as a JPEG and as a
    # JPEG-in-TIFF (one strip: rows per strip are whole 16-row bands), a 16x16 one as a JPEG
    cc.write(os.path.join(d, "src.png"), cc.png_bytes(80, 64, 3, noise(80 * 64 * 3, 1)))
    cc.write(os.path.join(d, "tile.png"), cc.png_bytes(16, 16, 3, noise(16 * 16 * 3, 2)))
    tif = imgpu_write("src.png", "src.tif", "--compression", "jpeg")
    jpg = imgpu_write("src.png", "src.jpg")
    tile = imgpu_write("tile.png", "tile.jpg")

    # ---- TIFF: the reproducers (each exited 0 with heap bytes in its output) ----
    # 1. the JPEG-in-TIFF strip's frame says 8x8 (libtiff: "Improper JPEG strip/tile size")
    make("sof_small.tif", set_sof(tif, 8, 8))
    refused("sof_small.tif", "corrupt TIFF data (strip 0: Improper JPEG strip/tile size")
    refused("sof_small.tif", "corrupt TIFF data", cmd="info")
    # a failed run leaves an existing output as it was
    cc.write(os.path.join(d, "keep.png"), b"old output")
    r = cc.run(binary, ["rotate", "sof_small.tif", "keep.png", "--angle", "90", "--device", "cpu"],
               cwd=d)
    ck.check(r.rc == 1 and cc.read(os.path.join(d, "keep.png")) == b"old output",
             "sof_small.tif: an existing output is left as it was", str(r))
    # the same strip, only narrower or only shorter than the TIFF says
    make("sof_narrow.tif", set_sof(tif, w=16))
    refused("sof_narrow.tif", "Improper JPEG strip/tile size")
    make("sof_short.tif", set_sof(tif, h=16))
    refused("sof_short.tif", "Improper JPEG strip/tile size")
    # 2. tiled: 80x64 in 16x16 tiles, tile 0's frame says 8x8
    tiles = [tile] * 20
    make("tiled.tif", tiff_pages([jpeg_page(80, 64, tiles, tile=(16, 16))]))
    decodes("tiled.tif")
    make("tiled_sof.tif", tiff_pages([jpeg_page(80, 64, [set_sof(tile, 8, 8)] + tiles[1:],
                                                tile=(16, 16))]))
    refused("tiled_sof.tif", "corrupt TIFF data (tile 0: Improper JPEG strip/tile size")
    # 3. a TIFF wider than its JPEG: 400x64 whose one strip is the 80x64 JPEG
    make("wider.tif", tiff_pages([jpeg_page(400, 64, [jpg])]))
    refused("wider.tif", "Improper JPEG strip/tile size, expected 400x64, got 80x64")
    make("same_width.tif", tiff_pages([jpeg_page(80, 64, [jpg])]))
    decodes("same_width.tif")
    # 4. the strip's data ends early: libjpeg pads it (made-up pixels, exit 0 before)
    make("strip_cut.tif", tiff_pages([jpeg_page(80, 64, [cut_scan(jpg, 0.5, False)])]))
    refused("strip_cut.tif", "strip 0: Premature end of JPEG file")
    make("strip_cut_eoi.tif", tiff_pages([jpeg_page(80, 64, [cut_scan(jpg, 0.5, True)])]))
    refused("strip_cut_eoi.tif", "premature end of data segment")
    #    libjpeg tells libtiff its first warning only: junk before a marker must not hide the
    #    early end after it
    k = jpg.find(b"\xff\xdb")
    make("junk_then_cut.tif", tiff_pages([jpeg_page(80, 64, [cut_scan(jpg[:k] + b"\0\0" + jpg[k:],
                                                                    0.5, True)])]))
    refused("junk_then_cut.tif", "extraneous bytes")
    # 5. a page: page 0 is whole, page 1's frame is smaller than its strip
    make("pages.tif", tiff_pages([jpeg_page(80, 64, [jpg]), jpeg_page(80, 64, [set_sof(jpg, 8, 8)])]))
    decodes("pages.tif")
    refused("pages.tif", "Improper JPEG strip/tile size", extra=["--page", "1"])
    # 6. what libtiff warns about but decodes whole still loads: a last strip whose JPEG is
    #    coded taller than the rows left (80x56 in 16-row strips, the last one coded 16 rows)
    cc.write(os.path.join(d, "band.png"), cc.png_bytes(80, 16, 3, noise(80 * 16 * 3, 3)))
    strips = [imgpu_write("band.png", "band.jpg")] * 4
    make("taller_last.tif", tiff_pages([jpeg_page(80, 56, strips, rps=16)]))
    decodes("taller_last.tif")
    decodes("src.tif")

    # ---- JPEG: a frame component that no scan codes came out of libjpeg's zeroed
    #      coefficients without a warning (exit 0 before) ----
    make("all_scans.jpg", jpeg_scans([[1], [2], [3]], False))
    decodes("all_scans.jpg")
    make("no_scan_3.jpg", jpeg_scans([[1], [2]], False))
    refused("no_scan_3.jpg", "corrupt JPEG data (component 3 of 3 is in no scan)")
    make("prog_dc_all.jpg", jpeg_scans([[1, 2, 3]], True))
    decodes("prog_dc_all.jpg")
    make("prog_no_dc_3.jpg", jpeg_scans([[1, 2]], True))
    refused("prog_no_dc_3.jpg", "corrupt JPEG data (component 3 of 3 is in no DC scan)")

    # ---- guards: the other codecs refused their short decodes before this issue ----
    # TIFF deflate, 16-bit gray: the strip's byte count halved (zlib: "Not enough data")
    z = zlib.compress(noise(80 * 64 * 2, 4))
    make("g16_deflate_ok.tif", tiff_pages([dict(w=80, h=64, spp=1, bps=16, comp=8, photo=1,
                                                blocks=[z])]))
    decodes("g16_deflate_ok.tif")
    make("g16_deflate_cut.tif", tiff_pages([dict(w=80, h=64, spp=1, bps=16, comp=8, photo=1,
                                                 blocks=[z[:len(z) // 2]])]))
    refused("g16_deflate_cut.tif", "corrupt TIFF data")
    # JPEG: the scan cut, EOI after it; a frame taller than its data
    make("scan_cut.jpg", cut_scan(jpg, 0.5, True))
    refused("scan_cut.jpg", "corrupt JPEG data (premature end of data segment)")
    make("taller.jpg", set_sof(jpg, h=128))
    refused("taller.jpg", "corrupt JPEG data")
    # PNG: a zlib stream cut short in a chunk whose CRC is right (the 8-bit fast path and stb's
    # 16-bit one), and a whole stream of fewer rows than the header says
    def png_idat(w, h, c, depth, rows_raw):
        ct = {1: 0, 2: 4, 3: 2, 4: 6}[c]
        ihdr = struct.pack(">IIBBBBB", w, h, depth, ct, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + cc._chunk(b"IHDR", ihdr) + cc._chunk(b"IDAT", rows_raw)
                + cc._chunk(b"IEND", b""))
    rows8 = b"".join(b"\0" + noise(80 * 3, 10 + y) for y in range(64))
    rows16 = b"".join(b"\0" + noise(80 * 2, 100 + y) for y in range(64))
    for name, w, c, depth, rows in (("png8", 80, 3, 8, rows8), ("png16", 80, 1, 16, rows16)):
        zz = zlib.compress(rows)
        make(f"{name}_ok.png", png_idat(w, 64, c, depth, zz))
        decodes(f"{name}_ok.png")
        make(f"{name}_zcut.png", png_idat(w, 64, c, depth, zz[:len(zz) // 2]))
        refused(f"{name}_zcut.png", "corrupt PNG data")
        make(f"{name}_rows.png", png_idat(w, 64, c, depth, zlib.compress(rows[:len(rows) // 2])))
        refused(f"{name}_rows.png", "corrupt PNG data")
    # WebP: lossy and lossless, the image chunk cut with the RIFF and chunk sizes made to agree
    for name, opts in (("lossy", []), ("lossless", ["--lossless"])):
        wp = imgpu_write("src.png", f"{name}.webp", *opts)
        ck.check(wp[12:15] == b"VP8", f"{name}.webp: a simple-format WebP", repr(wp[:16]))
        body = wp[20:20 + struct.unpack_from("<I", wp, 16)[0]]
        cut = body[:len(body) // 2]
        chunk = wp[12:16] + struct.pack("<I", len(cut)) + cut + b"\0" * (len(cut) & 1)
        make(f"{name}_cut.webp", b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk)
        refused(f"{name}_cut.webp", "corrupt WebP data")
    # BMP, TGA, PNM: the file cut (their scans measure the pixel data)
    for ext, what in (("bmp", "truncated BMP data"), ("tga", "truncated TGA data"),
                      ("ppm", "truncated PNM data")):
        whole = imgpu_write("src.png", f"whole.{ext}")
        make(f"cut.{ext}", whole[:len(whole) // 2])
        refused(f"cut.{ext}", what)

    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

"""robust_hostile.py — the attacks of issue 14 that went through the decoder and the writer:
repeated PNG chunks (a heap overflow once), a batch output symlink leading out of OUTDIR (a
write outside it once), a progressive JPEG that keeps the decoder busy without allocating
(the decode-time limit did not hold), and the stb paths UBSan flagged (a 16-bit PNG whose
first IDAT is empty; JPEG DC values that overflow int). Each must end in exit 0 with an image
or exit 1 with "imgpu: ..." naming the file, never a signal, within its time bound.

Usage: robust_hostile.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import shutil
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402


def chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def png(ihdr, middle, idat_rows):
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + b"".join(middle)
            + chunk(b"IDAT", zlib.compress(idat_rows)) + chunk(b"IEND", b""))


def ihdr(w, h, depth, color):
    return struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, 0)


def seg(marker, body):
    return b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body


def prog_jpeg_many_scans(w, h, nscans):
    """Progressive gray JPEG, valid (libjpeg decodes it without a warning) and slow: a DC scan
    coding every block's DC as 0, then AC scans over the whole band 1..63, the first at
    successive approximation Al=13 and each next one refining a bit (at most 14 scans: a
    bit per scan is all JPEG allows), all coded as runs of empty blocks (EOBRUN, 32767 blocks
    a symbol). Each scan walks all (w/8)*(h/8) blocks (a refinement scan every coefficient of
    each), and the output pass the whole frame; none allocates. nscans counts the AC scans."""
    blocks = ((w + 7) // 8) * ((h + 7) // 8)
    nscans = min(nscans, 14)
    out = b"\xff\xd8" + seg(0xDB, b"\x00" + bytes([1] * 64))
    out += seg(0xC2, struct.pack(">BHHB", 8, h, w, 1) + b"\x01\x11\x00")
    # DC: one 1-bit code for category 0; AC: two 2-bit codes, EOB runs of 2^14+ and 2^7+
    dc = b"\x00" + bytes([1] + [0] * 15) + b"\x00"
    ac = b"\x10" + bytes([0, 2] + [0] * 14) + b"\xe0\x70"
    out += seg(0xC4, dc + ac)
    out += seg(0xDA, b"\x01\x01\x00" + bytes([0, 0, 0x00])) + bytes(-(-blocks // 8)) 
    for i in range(nscans):
        ah, al = (0, 13) if i == 0 else (14 - i, 13 - i)
        bits, left = Bits(), blocks
        while left:
            run = min(left, 32767)
            r = run.bit_length() - 1     # EOBn: 2^r blocks + r extra bits
            if r == 14:
                bits.put(0b00, 2)
            elif r == 7 and run == 128:
                bits.put(0b01, 2)
            else:
                raise ValueError("the block count must be a multiple of 32767 plus 0 or 128")
            bits.put(run - (1 << r), r)
            left -= run
        out += seg(0xDA, b"\x01\x01\x00" + bytes([1, 63, ah << 4 | al])) + bits.flush()
    return out + b"\xff\xd9"


class Bits:
    """MSB-first bit writer with JPEG byte stuffing (FF -> FF 00); pads with 1 bits."""

    def __init__(self):
        self.acc, self.n, self.out = 0, 0, bytearray()

    def put(self, v, n):
        for i in range(n - 1, -1, -1):
            self.acc = (self.acc << 1) | ((v >> i) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc, self.n = 0, 0

    def flush(self):
        while self.n:
            self.put(1, 1)
        return bytes(self.out)


def jpeg_dc_overflow(blocks, progressive, quant, rows=1):
    """Gray JPEG whose every block adds +32767 to the DC predictor: int overflow in stb's
    dequantization (quant 65535, 4 blocks), its progressive DC scale (Al=13, 16 blocks) or the
    predictor itself (quant 1, over 65536 blocks)."""
    w = 8 * blocks // rows
    out = b"\xff\xd8" + seg(0xDB, b"\x10" + struct.pack(">64H", *([quant] * 64)))
    out += seg(0xC2 if progressive else 0xC0,
               struct.pack(">BHHB", 8, 8 * rows, w, 1) + b"\x01\x11\x00")
    dc = bytes([0x00]) + bytes([1] + [0] * 15) + bytes([15])   # '0' -> DC size 15
    ac = bytes([0x10]) + bytes([1] + [0] * 15) + bytes([0])    # '0' -> EOB
    out += seg(0xC4, dc + ac)
    b = Bits()
    for _ in range(blocks):
        b.put(0, 1)
        b.put(0x7FFF, 15)
        if not progressive:
            b.put(0, 1)
    out += seg(0xDA, b"\x01\x01\x00" + (bytes([0, 0, 0x0D]) if progressive else bytes([0, 63, 0])))
    return out + b.flush() + b"\xff\xd9"


def main():
    binary, tmp, assets = cc.setup("robust_hostile")
    ck = cc.Checker("robust_hostile")

    def bad_read(label, r, name, reason=None):
        ck.check(not r.timed_out and r.rc == 1, f"{label}: exit 1 (no crash, no hang)", str(r))
        ck.check(f"'{name}'" in r.err or name in r.err, f"{label}: message names the file", str(r))
        if reason:
            ck.check(reason in r.err, f"{label}: reason says '{reason}'", str(r))

    # ---- 1. repeated PNG chunks: refused, not decoded (the 1000-PLTE file overflowed) ----
    d = os.path.join(tmp, "png")
    os.makedirs(d)
    gray1 = ihdr(1, 1, 8, 0)
    cases = {
        "plte1000.png": png(gray1, [chunk(b"PLTE", b"")] * 1000, b"\0\0"),
        "plte2_gray.png": png(gray1, [chunk(b"PLTE", b"\0\0\0")] * 2, b"\0\0"),
        "plte2_palette.png": png(ihdr(2, 1, 8, 3), [chunk(b"PLTE", bytes(range(6)))] * 2,
                                 b"\0\0\1"),
        "trns2.png": png(ihdr(2, 1, 8, 3), [chunk(b"PLTE", bytes(range(6))),
                                             chunk(b"tRNS", b"\x80"), chunk(b"tRNS", b"\x80")],
                         b"\0\0\1"),
        "gama2.png": png(gray1, [chunk(b"gAMA", struct.pack(">I", 45455))] * 2, b"\0\0"),
    }
    for name, data in cases.items():
        cc.write(os.path.join(d, name), data)
        for cmd in (["info"], ["equalize"]):
            out = os.path.join(d, "out_" + name)
            r = cc.run(binary, cmd + [name] + ([out] if cmd == ["equalize"] else []), cwd=d)
            bad_read(f"{cmd[0]} {name}", r, name,
                     "bad PLTE length" if name == "plte1000.png" else "more than one")
            ck.check(not os.path.exists(out), f"{cmd[0]} {name}: no output")
    # one PLTE of fewer than 256 entries is still fine (padded for stb, as before)
    one = png(ihdr(2, 1, 8, 3), [chunk(b"PLTE", bytes(range(6)))], b"\0\0\1")
    cc.write(os.path.join(d, "plte1.png"), one)
    r = cc.run(binary, ["info", "plte1.png"], cwd=d)
    ck.check(r.rc == 0 and "2 x 1" in r.out, "a single short PLTE still decodes", str(r))
    # a batch over a folder holding the overflow file processes the rest of the folder
    bd, bo = os.path.join(tmp, "pngbatch"), os.path.join(tmp, "pngbatch_out")
    os.makedirs(bd)
    shutil.copy(os.path.join(d, "plte1000.png"), os.path.join(bd, "a_bad.png"))
    shutil.copy(os.path.join(assets, "clock_motion.png"), os.path.join(bd, "b_good.png"))
    r = cc.run(binary, ["batch", "--equalize", "--device", "cpu", "-o", bo, bd])
    ck.check(r.rc == 1 and not r.timed_out, "batch with a 1000-PLTE file: exit 1, no crash", str(r))
    ck.check(os.path.isfile(os.path.join(bo, "b_good.png")), "batch: the good file is written", str(r))
    ck.check("a_bad.png" in r.err, "batch: the bad file is named", str(r))

    # ---- 2. batch --overwrite must not write through a symlink planted in OUTDIR ----
    src, outd, elsewhere = (os.path.join(tmp, n) for n in ("in", "out", "elsewhere"))
    for p in (src, outd, elsewhere):
        os.makedirs(p)
    shutil.copy(os.path.join(assets, "clock_motion.png"), os.path.join(src, "a.png"))
    shutil.copy(os.path.join(assets, "clock_motion.png"), os.path.join(src, "b.png"))
    victim = os.path.join(elsewhere, "victim.png")
    shutil.copy(os.path.join(assets, "camera.png"), victim)
    before = cc.read(victim)
    os.symlink(victim, os.path.join(outd, "a.png"))               # absolute link out
    os.symlink("../elsewhere/victim.png", os.path.join(outd, "b.png"))  # relative link out
    r = cc.run(binary, ["batch", "--equalize", "--device", "cpu", "-o", outd, src, "--overwrite"])
    ck.check(r.rc == 0, "batch --overwrite over planted links: succeeds", str(r))
    ck.check(cc.read(victim) == before, "the file the links point to is untouched")
    for n in ("a.png", "b.png"):
        p = os.path.join(outd, n)
        ck.check(os.path.isfile(p) and not os.path.islink(p),
                 f"OUTDIR/{n} is now a regular file (the link itself was replaced)")
    ck.check(sorted(os.listdir(elsewhere)) == ["victim.png"], "nothing new outside OUTDIR",
             str(os.listdir(elsewhere)))
    # a single-image command whose output the user names as a link still writes through it
    # (docs/reliability.md: the link stays and its target is replaced)
    link = os.path.join(tmp, "named_link.png")
    target = os.path.join(elsewhere, "named_target.png")
    shutil.copy(os.path.join(assets, "camera.png"), target)
    os.symlink(target, link)
    r = cc.run(binary, ["equalize", os.path.join(src, "a.png"), link, "--device", "cpu"])
    ck.check(r.rc == 0 and os.path.islink(link) and cc.read(target) != before,
             "a link the user named as output is followed (its target replaced)", str(r))

    # ---- 4. the decode-time limit holds for a decoder busy without allocating (libjpeg: its
    #      progress monitor polls the limit) ----
    j = os.path.join(tmp, "jpeg")
    os.makedirs(j)
    cc.write(os.path.join(j, "scans.jpg"), prog_jpeg_many_scans(16384, 16384, 14))
    for limit in (1, 2):
        t0 = time.monotonic()
        r = cc.run(binary, ["info", "--decode", "scans.jpg", "--max-decode-time", str(limit)], cwd=j,
                   timeout=limit * 3 + 10)
        took = time.monotonic() - t0
        bad_read(f"15-scan progressive JPEG (11 s to decode), limit {limit} s", r, "scans.jpg",
                 "longer than")
        ck.check(took < limit * 3 + 1, f"... stopped within 3x the limit ({took:.1f} s)")
    # the same file in a batch with -j2: the limit stops it there too, the other file is done
    bd2, bo2 = os.path.join(tmp, "jbatch"), os.path.join(tmp, "jbatch_out")
    os.makedirs(bd2)
    shutil.copy(os.path.join(j, "scans.jpg"), os.path.join(bd2, "a_scans.jpg"))
    shutil.copy(os.path.join(assets, "clock_motion.png"), os.path.join(bd2, "b_good.png"))
    t0 = time.monotonic()
    os.environ["IMGPU_MAX_DECODE_TIME"] = "1"   # batch takes the limit from the environment
    r = cc.run(binary, ["batch", "--equalize", "--device", "cpu", "--jobs", "2", "-o", bo2, bd2],
               timeout=15)
    del os.environ["IMGPU_MAX_DECODE_TIME"]
    took = time.monotonic() - t0
    ck.check(r.rc == 1 and "a_scans.jpg" in r.err and took < 5,
             f"batch: the slow JPEG fails alone within the limit ({took:.1f} s)", str(r))
    ck.check(os.path.isfile(os.path.join(bo2, "b_good.png")), "batch: the other file is written")
    # an ordinary decode under a generous limit is unaffected
    r = cc.run(binary, ["info", os.path.join(assets, "coffee.png"), "--max-decode-time", "5"])
    ck.check(r.rc == 0, "a normal file decodes under the limit", str(r))

    # ---- 6. the stb paths UBSan flagged still give a clean result here ----
    g16 = png(ihdr(1, 1, 16, 0), [chunk(b"IDAT", b"")], b"\0\x12\x34")
    cc.write(os.path.join(d, "g16_empty_idat.png"), g16)
    r = cc.run(binary, ["info", "g16_empty_idat.png"], cwd=d)
    ck.check(r.rc == 0 and "bit depth:   16" in r.out,
             "16-bit PNG whose first IDAT is empty decodes", str(r))

    # JPEG DC arithmetic past int: defined (-fwrapv) now, so under UBSan (the ASan build of
    # CI runs this test too) these decode instead of aborting on "signed integer overflow"
    for name, data in (("dc_dequant.jpg", jpeg_dc_overflow(4, False, 65535)),
                       ("dc_prog_scale.jpg", jpeg_dc_overflow(16, True, 65535)),
                       ("dc_predictor.jpg", jpeg_dc_overflow(66048, False, 1, 256))):
        cc.write(os.path.join(j, name), data)
        r = cc.run(binary, ["info", name], cwd=j)
        ck.check(r.rc == 0 and "runtime error" not in r.err, f"{name}: decodes, no UB", str(r))

    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

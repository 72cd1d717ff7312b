"""robust_meta.py — issue 25's metadata defects, through the CLI: what the outputs carry must be
valid, and what they cannot carry must be named.

  1. ICC profiles of every size: JPEG carries up to 255 APP2 segments of 65519 bytes (the
     boundary profile in exactly 255, read back whole by imgpu and exiftool; one byte more is
     left out with a notice, as EXIF and XMP are); PNG's iCCP carries up to the 64 MiB imgpu
     reads back (a 17 MB profile travels and reads back; 64 MiB + 1 gets the notice); TIFF and
     WebP carry the 16.7 MB profile; the JPEG reader puts out-of-order chunks in sequence order and
     refuses inconsistent ones (no profile, no error); a PNG iCCP that inflates past 64 MiB is
     skipped within bounded memory.
  2. EXIF: a 4-byte block ("II*\\0", which imgpu's parser refuses) is not copied; Orientation 9
     or 65535 comes out as 1 (the parser reads it as none: the pixels as stored), also with
     --no-auto-orient; a TIFF's Exif IFD holding an Exif pointer of its own comes out without
     it (no "Bad ExifOffset SubDirectory start"). Every output passes `exiftool -validate`
     with no warning but the input's own missing required tags.

Oracles: our own segment and chunk walkers and zlib, exiftool (-b for the bytes, -validate),
PIL (a TIFF output's profile; the plain files the crafted inputs start from). Needs Debian's
/usr/bin/python3 with PIL and exiftool; skipped (77) without them.

usage: robust_meta.py IMGPU TMP_ROOT ASSETS
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402
import exif_blob as eb  # noqa: E402

try:
    import numpy as np
    from PIL import Image
except ImportError:
    print("skip: needs numpy and PIL (Debian's /usr/bin/python3)")
    sys.exit(77)
if not shutil.which("exiftool"):
    print("skip: needs exiftool (libimage-exiftool-perl)")
    sys.exit(77)

binary, TMP, ASSETS = cc.setup("robust_meta")
T = cc.Checker("robust_meta")
check = T.check

JPEG_ICC_CHUNK = 65519
JPEG_MAX_ICC = 255 * JPEG_ICC_CHUNK      # 16,707,345
PNG_MAX_ICC = 64 << 20                   # what imgpu reads back from an iCCP chunk


def run(*args, timeout=120):
    return cc.run_argv([binary, *args], timeout=timeout)


def path(name):
    return os.path.join(TMP, name)


def icc_sized(desc, size):
    """A v2 ICC profile of exactly `size` bytes: the header (size field, class, colour space,
    'acsp' is not required by imgpu's readers: they take any profile of 128 bytes or more),
    a 'desc' tag and one big padding tag of patterned bytes (zlib shrinks it, so the PNG and
    its bomb stay small on disk)."""
    text = desc.encode() + b"\0"
    tag = b"desc" + b"\0" * 4 + struct.pack(">I", len(text)) + text + b"\0" * 12
    tag += b"\0" * ((4 - len(tag) % 4) % 4)
    off_desc = 128 + 4 + 2 * 12
    off_pad = off_desc + len(tag)
    head = struct.pack(">I", size) + b"none" + bytes([2, 0x10, 0, 0]) + b"mntrRGB XYZ "
    head += b"\0" * (128 - len(head))
    table = struct.pack(">I", 2) + b"desc" + struct.pack(">II", off_desc, len(tag))
    table += b"zpad" + struct.pack(">II", off_pad, size - off_pad)
    pattern = bytes(range(256))
    pad = b"data\0\0\0\0" + pattern * ((size - off_pad) // 256 + 1)
    out = head + table + tag + pad[:size - off_pad]
    assert len(out) == size
    return out


PIXELS = (np.arange(24 * 32 * 3) % 251).astype(np.uint8).reshape(24, 32, 3)


def tiff_file(w, h, ifd0_extra=(), exif=None, nested=False, be=False):
    """An 8-bit RGB uncompressed TIFF built here (exif_blob's IFD writer, the pixels after
    it): IFD0's own tags plus ifd0_extra; an Exif IFD holding `exif` where given and, with
    nested, an Exif pointer of its own aimed back at the Exif IFD."""
    e = ">" if be else "<"
    px = bytes((i * 7) % 256 for i in range(w * h * 3))

    def build(strip_at, nested_at):
        ifd0 = [(256, eb.LONG, w), (257, eb.LONG, h), (258, eb.SHORT, [8, 8, 8]),
                (259, eb.SHORT, 1), (262, eb.SHORT, 2), (273, eb.LONG, strip_at),
                (277, eb.SHORT, 3), (278, eb.LONG, h), (279, eb.LONG, len(px))]
        ex = None if exif is None else \
            list(exif) + ([(0x8769, eb.LONG, nested_at)] if nested else [])
        return eb.tiff(ifd0 + list(ifd0_extra), exif=ex, big_endian=be)
    b = build(0, 0)
    exif_at = 0
    if nested:
        n = struct.unpack(e + "H", b[8:10])[0]
        exif_at = next(struct.unpack(e + "I", b[18 + 12 * i:22 + 12 * i])[0] for i in range(n)
                       if struct.unpack(e + "H", b[10 + 12 * i:12 + 12 * i])[0] == 0x8769)
    return build(len(b), exif_at) + px


def tiff_with_icc(name, icc):
    p = path(name)
    cc.write(p, tiff_file(32, 24, [(34675, eb.UNDEFINED, icc)]))
    return p


def segments(jpg):
    """[(marker, payload)] of a JPEG up to its first scan, walked here."""
    out, pos = [], 2
    while pos + 4 <= len(jpg) and jpg[pos] == 0xFF:
        m = jpg[pos + 1]
        n = struct.unpack(">H", jpg[pos + 2:pos + 4])[0]
        out.append((m, jpg[pos + 4:pos + 2 + n]))
        if m == 0xDA:
            break
        pos += 2 + n
    return out


def icc_chunks(jpg):
    return [p for m, p in segments(jpg) if m == 0xE2 and p[:12] == b"ICC_PROFILE\0"]


def png_chunks(png):
    out, pos = [], 8
    while pos + 12 <= len(png):
        n = struct.unpack(">I", png[pos:pos + 4])[0]
        out.append((png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def riff_chunks(webp):
    out, pos = [], 12
    while pos + 8 <= len(webp):
        n = struct.unpack("<I", webp[pos + 4:pos + 8])[0]
        out.append((webp[pos:pos + 4], webp[pos + 8:pos + 8 + n]))
        pos += 8 + n + (n & 1)
    return out


def png_icc(png):
    for t, d in png_chunks(png):
        if t == b"iCCP":
            z = d.index(b"\0")
            return zlib.decompress(d[z + 2:])
    return None


def png_chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))


def exiftool(paths, *tags):
    """{path: {tag: value}} from one exiftool run over paths (-n: numbers; binary tags as
    bytes), with "Warning": every warning of -validate (family 4 groups tell the copies apart)
    less the input's own missing required tags."""
    r = subprocess.run(["exiftool", "-j", "-a", "-G4", "-n", "-b", "-validate", "-warning",
                        *[f"-{t}" for t in tags], *paths], capture_output=True, text=True)
    out = {p: {"Warning": ["exiftool read nothing"]} for p in paths}
    for d in json.loads(r.stdout) if r.stdout.strip() else []:
        e = {"Warning": []}
        for k, v in d.items():
            k = k.split(":")[-1]
            if k == "Warning":
                if not v.startswith("Missing required"):
                    e["Warning"].append(v)
            elif k not in e:
                e[k] = b64(v) if isinstance(v, str) and v.startswith("base64:") else v
        out[d["SourceFile"]] = e
    return out


def b64(v):
    import base64
    return base64.b64decode(v[7:])


def info_json(p):
    rc, out, err = run("info", "--json", p)
    try:
        d = json.loads(out) if rc == 0 else None
    except ValueError:
        return None
    return d[0] if isinstance(d, list) else d   # one file: one object


# ---- 1. ICC profiles ----------------------------------------------------------------------

# first, while this script is small (a child's peak RSS counts the Python it was forked from):
# a PNG whose iCCP inflates to 256 MiB is skipped in bounded memory (the buffer grows as zlib
# delivers and stops at 64 MiB; under ASan the blocks realloc leaves behind wait in its
# quarantine, so the bound allows 96 MiB over the cap: still well under the bomb's size)
plain = path("plain.png")
Image.fromarray(PIXELS).save(plain)
png = cc.read(plain)
z = zlib.compressobj(1)
zeros = bytes(1 << 20)
iccp = b"bomb\0\0" + b"".join(z.compress(zeros) for _ in range(256)) + z.flush()
bomb = path("iccp_bomb.png")
cc.write(bomb, png[:33] + png_chunk(b"iCCP", iccp) + png[33:])


def measured(args):
    """(status, stdout, stderr, seconds, peak RSS in KiB) of one imgpu run."""
    with open(path("m.out"), "w+b") as fo, open(path("m.err"), "w+b") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary, *args], stdout=fo, stderr=fe)
        _, status, ru = os.wait4(p.pid, 0)
        el = time.monotonic() - t0
        fo.seek(0)
        fe.seek(0)
        return (os.waitstatus_to_exitcode(status), fo.read(), fe.read().decode(errors="replace"),
                el, ru.ru_maxrss)


rc, o, e, el, kb = measured(["info", "--json", bomb])
_, _, _, _, kb0 = measured(["info", "--json", plain])
j = json.loads(o) if rc == 0 else None
check(rc == 0 and isinstance(j, dict) and j.get("icc") is None and el < 10,
      f"an iCCP bomb ({os.path.getsize(bomb)} bytes, 256 MiB inflated) is skipped in {el:.2f} s", e)
check(kb < kb0 + ((64 + 96) << 10), f"... within 64 MiB (+ slack) more than a plain PNG's load "
      f"(peak RSS {kb >> 10} MiB, {kb0 >> 10} MiB without the chunk)", (kb, kb0))

# the largest profile JPEG can carry: exactly 255 segments, read back whole
icc = icc_sized("Boundary RGB", JPEG_MAX_ICC)
src = tiff_with_icc("icc_jpeg_max.tif", icc)
out_max = path("icc_jpeg_max.jpg")
rc, _, err = run("equalize", src, out_max)
jpg = cc.read(out_max) if rc == 0 else b""
ch = icc_chunks(jpg)
check(rc == 0 and len(ch) == 255 and all(len(c) - 14 <= JPEG_ICC_CHUNK for c in ch) and
      [c[12] for c in ch] == list(range(1, 256)) and all(c[13] == 255 for c in ch) and
      b"".join(c[14:] for c in ch) == icc and "ICC" not in err,
      f"a {len(icc)}-byte profile goes into exactly 255 APP2 segments, numbered 1..255 of 255",
      f"rc={rc} segments={len(ch)} {err}")
j = info_json(out_max)
check(j is not None and (j.get("icc") or {}).get("bytes") == len(icc) and
      (j.get("icc") or {}).get("description") == "Boundary RGB",
      "imgpu reads the 255-segment profile back whole", j)

# one byte more: JPEG cannot carry it, and says so (fails before issue 25: left out silently)
icc1 = icc_sized("Too big RGB", JPEG_MAX_ICC + 1)
src1 = tiff_with_icc("icc_jpeg_over.tif", icc1)
out = path("icc_jpeg_over.jpg")
rc, _, err = run("equalize", src1, out)
check(rc == 0 and not icc_chunks(cc.read(out)) and
      f"'{out}': the ICC profile ({len(icc1)} bytes) does not fit 255 JPEG APP2 segments "
      f"({JPEG_MAX_ICC} bytes at most): left out" in err,
      "a profile over 255 x 65519 bytes: no APP2 segment, and a notice that names it", err)
rc, _, err2 = run("equalize", "--strip", src1, path("icc_jpeg_strip.jpg"))
check(rc == 0 and "ICC" not in err2, "--strip: no notice about the profile left out", err2)

# PNG carries it (fails before issue 25: anything over 16 MiB was left out silently); so do
# TIFF and WebP
outs = {ext: path(f"icc_17m.{ext}") for ext in ("png", "tif", "webp")}
for ext, out in outs.items():
    rc, _, err = run("equalize", src1, out)
    check(rc == 0 and "ICC" not in err, f"{ext}: the {len(icc1)}-byte profile, no notice", err)
check(png_icc(cc.read(outs["png"])) == icc1, "PNG: the 16.7 MB profile travels in iCCP whole")
j = info_json(outs["png"])
check(j is not None and (j.get("icc") or {}).get("bytes") == len(icc1),
      "PNG: imgpu reads the 16.7 MB profile back", j)
check([d for t, d in riff_chunks(cc.read(outs["webp"])) if t == b"ICCP"] == [icc1],
      "WebP: the 16.7 MB profile travels in its ICCP chunk whole")
with Image.open(outs["tif"]) as im:
    check(im.info.get("icc_profile") == icc1, "TIFF: PIL reads the 16.7 MB profile whole")
for out, want in ((out_max, icc), (outs["png"], icc1)):
    got = subprocess.run(["exiftool", "-b", "-ICC_Profile", out], capture_output=True).stdout
    check(got == want,
          f"exiftool reads the {len(want)}-byte profile of {os.path.basename(out)} whole")
del icc, icc1, jpg, ch

# PNG's own bound: exactly 64 MiB travels and reads back, one byte more gets the notice
for size in (PNG_MAX_ICC, PNG_MAX_ICC + 1):
    src = tiff_with_icc("icc_png_bound.tif", icc_sized("PNG bound", size))
    out = path(f"icc_png_{size}.png")
    rc, _, err = run("equalize", src, out)
    if size == PNG_MAX_ICC:
        j = info_json(out) if rc == 0 else None
        check(rc == 0 and "ICC" not in err and j is not None and
              (j.get("icc") or {}).get("bytes") == PNG_MAX_ICC,
              "PNG: a profile of exactly 64 MiB is written and read back", (rc, err, j))
    else:
        check(rc == 0 and png_icc(cc.read(out)) is None and
              f"'{out}': the ICC profile ({size} bytes) does not fit a PNG iCCP chunk "
              f"(imgpu reads {PNG_MAX_ICC} bytes at most): left out" in err,
              "PNG: 64 MiB + 1 is left out with a notice", err)
    os.remove(src)
    os.remove(out)

# the JPEG reader: chunks in sequence order whatever the file's order; inconsistent ones refused
small = icc_sized("Chunked RGB", 3 * 1000 + 17)
Image.fromarray(PIXELS).save(path("plain.jpg"))
base = cc.read(path("plain.jpg"))


def with_icc_chunks(parts):
    """base JPEG with APP2 ICC chunks (seq, count, data) right after SOI."""
    segs = b""
    for seq, count, data in parts:
        pl = b"ICC_PROFILE\0" + bytes([seq, count]) + data
        segs += b"\xFF\xE2" + struct.pack(">H", len(pl) + 2) + pl
    return base[:2] + segs + base[2:]


parts = [small[0:1000], small[1000:2000], small[2000:]]
cases = {
    "out_of_order": ([(2, 3, parts[1]), (3, 3, parts[2]), (1, 3, parts[0])], small),
    "duplicate_seq": ([(1, 3, parts[0]), (1, 3, parts[1]), (3, 3, parts[2])], None),
    "count_mismatch": ([(1, 3, parts[0]), (2, 4, parts[1]), (3, 3, parts[2])], None),
    "seq_zero": ([(0, 3, parts[0]), (2, 3, parts[1]), (3, 3, parts[2])], None),
    "seq_over_count": ([(1, 2, parts[0]), (3, 2, parts[1])], None),
}
for name, (chunks, want) in cases.items():
    src = path(f"chunks_{name}.jpg")
    cc.write(src, with_icc_chunks(chunks))
    out = path(f"chunks_{name}_out.jpg")
    rc, _, err = run("equalize", src, out)
    got = b"".join(c[14:] for c in icc_chunks(cc.read(out))) if rc == 0 else b"?"
    check(rc == 0 and got == (want or b""),
          f"JPEG ICC chunks {name}: " +
          ("put in sequence order" if want else "no profile, no error"),
          f"rc={rc} got {len(got)} bytes {err}")

# ---- 2. EXIF -------------------------------------------------------------------------------

def app1(payload):
    return b"\xFF\xE1" + struct.pack(">H", len(payload) + 2) + payload


def carried_exif(out):
    """The EXIF blocks of a JPEG, PNG or WebP output, found by our own walkers."""
    data = cc.read(out)
    if out.endswith(".jpg"):
        return [p[6:] for m, p in segments(data) if m == 0xE1 and p[:6] == b"Exif\0\0"]
    if out.endswith(".png"):
        return [d for t, d in png_chunks(data) if t == b"eXIf"]
    return [d for t, d in riff_chunks(data) if t == b"EXIF"]


checks = []   # (output, what, test(exiftool's view)), judged after one exiftool run

# (a) a 4-byte block imgpu's parser refuses: not copied (fails before issue 25)
src = path("exif_4_bytes.jpg")
cc.write(src, base[:2] + app1(b"Exif\0\0II*\0") + base[2:])
for ext in ("jpg", "png", "webp"):
    out = path(f"exif_4_bytes_out.{ext}")
    rc, _, err = run("equalize", src, out)
    check(rc == 0 and not carried_exif(out),
          f"a 4-byte EXIF block is not copied into the .{ext} output", (rc, err))
    checks.append((out, f"4-byte EXIF -> .{ext}: no exiftool warning", lambda d: True))

# (b) an Orientation out of 1..8: written back as 1, also with --no-auto-orient (fails before)
for o, typ, be in ((9, eb.SHORT, False), (65535, eb.SHORT, True), (9, eb.LONG, False)):
    blob = eb.tiff([(0x010F, eb.ASCII, "Canon"), (0x0112, typ, o)], big_endian=be)
    src = path(f"orient_{o}_{typ}.jpg")
    cc.write(src, base[:2] + app1(eb.app1(blob)) + base[2:])
    j = info_json(src)
    check(j is not None and j.get("orientation") == 0,
          f"info: Orientation {o} reads as none on the input", j)
    for flags in ([], ["--no-auto-orient"]):
        for ext in ("jpg", "png", "webp"):
            out = path(f"orient_{o}_{typ}_{len(flags)}.{ext}")
            rc, _, err = run("equalize", *flags, src, out)
            check(rc == 0, f"equalize {' '.join(flags)} {src} {out}", err)
            what = (f"Orientation {o} ({'LONG' if typ == eb.LONG else 'SHORT'}) {' '.join(flags)}"
                    f" -> .{ext}: Orientation 1, Make kept, no exiftool warning")
            checks.append((out, what,
                           lambda d: d.get("Orientation") == 1 and d.get("Make") == "Canon",
                           "Non-standard format (int32u)" if typ == eb.LONG else None))


# (c) a TIFF whose Exif IFD holds an Exif pointer of its own (fails before: the pointer kept
# its file offset in the blob, "Bad ExifOffset SubDirectory start")
EXIF_TAGS = [(0x9000, eb.UNDEFINED, b"0230"), (0x9003, eb.ASCII, "2020:01:02 03:04:05"),
             (0x829A, eb.RATIONAL, [(1, 125)])]
for be in (False, True):
    order = "big" if be else "little"
    src = path(f"nested_{order}.tif")
    cc.write(src, tiff_file(16, 12, [(0x010F, eb.ASCII, "Canon")], EXIF_TAGS, nested=True, be=be))
    for ext in ("jpg", "png", "webp", "tif"):
        out = path(f"nested_{order}_out.{ext}")
        rc, _, err = run("equalize", src, out)
        check(rc == 0, f"equalize {src} {out}", err)
        checks.append((out, f"TIFF with a nested Exif pointer ({order}-endian) -> .{ext}: the "
                       "EXIF carried, no exiftool warning",
                       lambda d: d.get("Make") == "Canon" and d.get("ExposureTime") == 0.008 and
                       d.get("DateTimeOriginal") == "2020:01:02 03:04:05",
                       # exiftool's TIFF rules: PixelX/YDimension and deflate are not baseline
                       "not allowed in TIFF|Compression" if ext == "tif" else None))

# a TIFF whose IFD0 Orientation is 9, with an Exif IFD: the rebuilt EXIF holds no Orientation
src = path("tiff_orient9.tif")
cc.write(src, tiff_file(8, 4, [(0x0112, eb.SHORT, 9)], EXIF_TAGS))
out = path("tiff_orient9.jpg")
rc, _, err = run("equalize", src, out)
check(rc == 0, f"equalize {src} {out}", err)
checks.append((out, "TIFF Orientation 9 -> JPEG: no Orientation in the EXIF, no exiftool warning",
               lambda d: d.get("Orientation") is None and d.get("DateTimeOriginal") is not None))

et = exiftool([c[0] for c in checks], "Orientation", "Make", "DateTimeOriginal", "ExposureTime")
for c in checks:
    out, what, test = c[0], c[1], c[2]
    allowed = c[3] if len(c) > 3 else None
    d = et.get(out, {})
    w = [x for x in d.get("Warning", [])
         if not (allowed and any(a in x for a in allowed.split("|")))]
    check(test(d) and not w, what, d)

cc.cleanup(TMP, T.failures)
sys.exit(T.end())

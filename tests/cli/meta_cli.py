"""meta_cli.py — issue 16's photo fidelity through the CLI, on PNG (the other formats'
metadata paths have their own tests): EXIF orientation applied on load (and kept with
--no-auto-orient), ICC / EXIF / XMP / text carried to the output unchanged (EXIF with
Orientation 1 and the pixel size of the turned image), --strip, `imgpu info` on many files and
--json, '-' as input and output, and batch naming files that are not images.

Oracles: the chunk bytes we put in (read back by our own small PNG walker here, not by imgpu),
cv2 for pixels (cv2.rotate of imgpu's unturned result), exiftool for what another reader sees.

usage: meta_cli.py IMGPU TMPDIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402
import exif_blob  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

T = cc.Checker("meta_cli")
check = T.check  # counts, prints "FAIL: ..." and returns cond (cli_common.Checker)


def run(argv, stdin=None):
    return cc.run_argv(argv, stdin, timeout=120)


def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))


def chunks(png):
    """[(type, data)] of a PNG, walked here."""
    out, pos = [], 8
    while pos + 12 <= len(png):
        n = struct.unpack(">I", png[pos:pos + 4])[0]
        out.append((png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def with_chunks(png, extra):
    """png with the chunks `extra` inserted after IHDR."""
    return png[:33] + b"".join(chunk(t, d) for t, d in extra) + png[33:]


icc_profile = cc.icc_profile


XMP = b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">' \
      b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description ' \
      b'xmlns:dc="http://purl.org/dc/elements/1.1/" dc:format="image/png"/></rdf:RDF>' \
      b'</x:xmpmeta><?xpacket end="w"?>'


def exif(orientation, w, h):
    return exif_blob.tiff(
        [(0x010F, exif_blob.ASCII, "Canon"), (0x0110, exif_blob.ASCII, "EOS 5D"),
         (0x0112, exif_blob.SHORT, orientation)],
        exif=[(0x9003, exif_blob.ASCII, "2024:05:06 07:08:09"),
              (0xA002, exif_blob.LONG, w), (0xA003, exif_blob.LONG, h)])


def exiftool(path, *tags):
    p = subprocess.run(["exiftool", "-s", "-s", "-s", "-n"] + [f"-{t}" for t in tags] + [path],
                       capture_output=True, timeout=60)
    return p.stdout.decode(errors="replace").splitlines()


def main():
    imgpu, tmp = sys.argv[1], sys.argv[2]
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    have_exiftool = shutil.which("exiftool") is not None
    rng = np.random.default_rng(16)
    w, h = 40, 24
    img = (rng.integers(40, 120, (h, w, 3))).astype(np.uint8)
    ok, enc = cv2.imencode(".png", img)
    icc = icc_profile("Test RGB (imgpu)")
    text = b"Comment\0made by meta_cli.py"
    src = with_chunks(enc.tobytes(), [(b"iCCP", b"ICC\0\0" + zlib.compress(icc)),
                                      (b"eXIf", exif(6, w, h)),
                                      (b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + XMP),
                                      (b"tEXt", text)])
    inp = os.path.join(tmp, "in.png")
    open(inp, "wb").write(src)
    plain = os.path.join(tmp, "plain.png")
    open(plain, "wb").write(enc.tobytes())

    # 1. orientation 6 applied on load; metadata carried
    out = os.path.join(tmp, "out.png")
    rc, _, err = run([imgpu, "equalize", inp, out, "--device", "cpu"])
    check(rc == 0, "equalize of a PNG with metadata", err)
    ref = os.path.join(tmp, "ref.png")   # the same op on the bare pixels, turned by cv2
    rc, _, err = run([imgpu, "equalize", plain, ref, "--device", "cpu"])
    got, want = cv2.imread(out), cv2.rotate(cv2.imread(ref), cv2.ROTATE_90_CLOCKWISE)
    check(got is not None and got.shape == want.shape and np.array_equal(got, want),
          "Orientation 6: the output is the result turned 90 degrees clockwise",
          f"{None if got is None else got.shape} vs {want.shape}")
    cs = dict(chunks(open(out, "rb").read())) if os.path.exists(out) else {}
    iccp = cs.get(b"iCCP", b"")
    z = iccp.find(b"\0")
    check(z > 0 and zlib.decompress(iccp[z + 2:]) == icc, "the ICC profile travels byte for byte")
    ex = cs.get(b"eXIf")
    check(ex is not None and len(ex) == len(exif(6, w, h)), "EXIF travels (same size)")
    if ex is not None:
        check(ex == exif(1, h, w), "EXIF: Orientation 1 and the turned pixel size, all else equal")
    check(cs.get(b"iTXt", b"").endswith(XMP), "XMP travels")
    check(cs.get(b"tEXt") == text, "a text chunk travels")
    if have_exiftool:
        t = exiftool(out, "Orientation", "Make", "Model", "ProfileDescription", "Comment")
        check(t == ["1", "Canon", "EOS 5D", "Test RGB (imgpu)", "made by meta_cli.py"],
              "exiftool reads the output's metadata", t)

    # 2. --no-auto-orient keeps pixels and tag
    out2 = os.path.join(tmp, "keep.png")
    rc, _, err = run([imgpu, "equalize", inp, out2, "--device", "cpu", "--no-auto-orient"])
    got = cv2.imread(out2, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)  # the stored pixels
    check(rc == 0 and got is not None and np.array_equal(got, cv2.imread(ref)),
          "--no-auto-orient: stored pixels", err)
    cs2 = dict(chunks(open(out2, "rb").read())) if rc == 0 else {}
    check(cs2.get(b"eXIf") == exif(6, w, h), "--no-auto-orient: EXIF unchanged")

    # 3. --strip
    out3 = os.path.join(tmp, "strip.png")
    rc, _, err = run([imgpu, "equalize", inp, out3, "--device", "cpu", "--strip"])
    types = [t for t, _ in chunks(open(out3, "rb").read())] if rc == 0 else [b"?"]
    check(rc == 0 and not {b"iCCP", b"eXIf", b"iTXt", b"tEXt", b"zTXt"} & set(types),
          "--strip writes no metadata", types)
    got = cv2.imread(out3)
    check(got is not None and got.shape[:2] == (w, h), "--strip still turns the image upright")

    # 4. info: blocks, --json, a failing file among good ones
    bad = os.path.join(tmp, "bad.png")
    open(bad, "wb").write(src[:60])
    rc, o, err = run([imgpu, "info", inp, bad, plain])
    o = o.decode()
    check(rc == 1, "info: exit 1 when one of the files fails", rc)
    check("orientation: 6 (rotated 90 clockwise)" in o and "ICC profile: Test RGB (imgpu)" in o
          and "camera:      Canon EOS 5D" in o and "date:        2024:05:06 07:08:09" in o,
          "info shows orientation, ICC, camera and date", o)
    check(sum(x.startswith("file:") for x in o.splitlines()) == 2 and "dimensions:  24 x 40" in o and "dimensions:  40 x 24" in o,
          "info: the good files are printed (upright dimensions)", o)
    check("bad.png" in err, "info: the failing file is named on stderr", err)
    rc, o, err = run([imgpu, "info", "--json", inp, bad, plain])
    lines = o.decode().splitlines()
    try:
        objs = [json.loads(x) for x in lines]
    except ValueError as e:
        objs = []
        check(False, "info --json: every line is JSON", f"{e}: {o!r}")
    check(rc == 1 and len(objs) == 3, "info --json: one object per file, exit 1", lines)
    if len(objs) == 3:
        a, b, c = objs
        check(a.get("width") == h and a.get("height") == w and a.get("orientation") == 6
              and a.get("oriented") is True and a.get("icc", {}).get("description") == "Test RGB (imgpu)"
              and a.get("icc", {}).get("bytes") == len(icc) and a.get("pages") == 1
              and a.get("file_size") == len(src) and a.get("format") == "PNG"
              and a.get("camera") == "Canon EOS 5D" and a.get("channels") == 3 and a.get("depth") == 8,
              "info --json: the fields of the photo", a)
        check("error" in b and b.get("path") == bad, "info --json: the failing file's object", b)
        check(c.get("icc") is None and c.get("orientation") == 0, "info --json: a plain file", c)

    # 5. pipes
    rc, o, err = run([imgpu, "equalize", "-", "-", "--format", "png", "--device", "cpu"],
                     stdin=open(plain, "rb").read())
    check(rc == 0 and o == open(ref, "rb").read(), "'-' in and out: the same bytes as files", err)
    rc, o, err = run([imgpu, "equalize", "-", "-", "--format", "png"], stdin=b"garbage" * 100)
    check(rc == 1 and o == b"" and "imgpu: " in err, "'-' with bad input: exit 1, nothing on stdout", err)
    rc, o, err = run([imgpu, "equalize", plain, "-"])
    check(rc == 2 and o == b"" and "--format" in err, "'-' output without --format is a usage error", err)
    rc, o, err = run([imgpu, "info", "-"], stdin=src)
    check(rc == 0 and b"PNG" in o, "info reads standard input", err)

    # 6. batch: files that are not images are counted and named
    d = os.path.join(tmp, "mixed")
    os.makedirs(d)
    shutil.copy(plain, d)
    open(os.path.join(d, "notes.txt"), "w").write("x")
    open(os.path.join(d, "data.csv"), "w").write("x")
    rc, o, err = run([imgpu, "batch", "--equalize", "-o", os.path.join(tmp, "bout"), d,
                      "--device", "cpu"])
    check(rc == 0 and os.path.exists(os.path.join(tmp, "bout", "plain.png")), "batch over a mixed folder", err)
    check("2 files in the input folders are not images" in err and "notes.txt" in err,
          "batch names the files that are not images in its summary", err)

    # --page on a format without pages: only page 0 exists (it was ignored silently)
    rc, o, err = run([imgpu, "info", plain, "--page", "1"])
    check(rc == 1 and "--page 1: a PNG file has one image (page 0)" in err, "--page 1 on a PNG: refused", err)
    rc, o, err = run([imgpu, "info", plain, "--page", "0"])
    check(rc == 0, "--page 0 on a PNG: the image", err)

    # an XMP packet past one JPEG segment (64 KiB): left out of a JPEG output, with a notice
    # that names the output; the image itself is written
    big_xmp = XMP.replace(b"</x:xmpmeta>", b"<!-- " + b"x" * 70000 + b" --></x:xmpmeta>")
    bigp = os.path.join(tmp, "bigxmp.png")
    open(bigp, "wb").write(with_chunks(enc.tobytes(), [(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + big_xmp)]))
    bigj = os.path.join(tmp, "bigxmp.jpg")
    rc, _, err = run([imgpu, "equalize", bigp, bigj, "--device", "cpu"])
    check(rc == 0 and f"imgpu: '{bigj}': the XMP packet ({len(big_xmp)} bytes) does not fit one JPEG APP1 "
          "segment: left out" in err and os.path.getsize(bigj) > 0,
          "a 70 KB XMP packet to JPEG: left out, the notice names the output", err)
    if rc == 0:
        check(b"http://ns.adobe.com/xap/1.0/" not in open(bigj, "rb").read(), "... and no XMP segment written")

    return T.end()


if __name__ == "__main__":
    sys.exit(main())

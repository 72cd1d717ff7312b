"""viewer_walk_meta.py — a scripted snapshot shows what the window would, and the viewer's
files keep the input's metadata as the CLI's do (issue 30), headless through EGL.

usage: viewer_walk_meta.py IMGPU IMGPU_VIEW TMP_ROOT ASSETS
  - `imgpu view a.png --events FILE --snapshot OUT` with `key n` in FILE walks a.png's folder
    as a window does: it skips the corrupt b.jpg and snapshots c.png (it captured a.png again),
    and Ctrl+C names c.png; `key n` twice wraps round to a.png;
  - --snapshot (1:1) and S carry the shown image's ICC profile, EXIF, XMP and PNG text as
    `imgpu equalize` does: its PNG chunks, byte for byte (c.png's after the walk, not
    a.png's); a --size snapshot (a picture of the window) carries the ICC profile alone.
/usr/bin/python3 with numpy and cv2, else skipped (77).
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402
import exif_blob  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:
    print("SKIP: needs numpy and cv2 (/usr/bin/python3)")
    sys.exit(77)

META = (b"iCCP", b"eXIf", b"iTXt", b"tEXt", b"zTXt")
XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
       b'xmlns:dc="http://purl.org/dc/elements/1.1/" dc:format="image/png"/></rdf:RDF>'
       b'</x:xmpmeta><?xpacket end="w"?>')


def run(args):
    p = subprocess.run(args, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))


def chunks(path):
    png = cc.read(path)
    out, pos = [], 8
    while pos + 12 <= len(png):
        n = struct.unpack(">I", png[pos:pos + 4])[0]
        out.append((png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def meta_chunks(path):
    return sorted((t, d) for t, d in chunks(path) if t in META)


def png_with(img, extra):
    ok, enc = cv2.imencode(".png", img)
    b = enc.tobytes()
    return b[:33] + b"".join(chunk(t, d) for t, d in extra) + b[33:]


def pixels(path):
    return cv2.imread(path, cv2.IMREAD_UNCHANGED)


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    imgpu, view, tmp_root, assets = (os.path.abspath(a) for a in sys.argv[1:5])
    os.makedirs(tmp_root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="viewer_walk_meta.", dir=tmp_root)
    ck = cc.Checker("viewer_walk_meta")
    ctx = ["--context", "egl", "--quiet"]

    # the folder: a.png (its own profile), b.jpg (corrupt), c.png (profile, EXIF turned 90
    # degrees, XMP, text), all alike in size so that a wrong file is told by its pixels
    d = os.path.join(tmp, "walk")
    os.makedirs(d)
    rng = np.random.default_rng(30)
    h, w = 48, 64
    a_img = rng.integers(0, 120, (h, w, 3)).astype(np.uint8)
    c_img = rng.integers(100, 256, (h, w, 3)).astype(np.uint8)
    a, b, c = (os.path.join(d, n) for n in ("a.png", "b.jpg", "c.png"))
    cc.write(a, png_with(a_img, [(b"iCCP", b"A\0\0" + zlib.compress(cc.icc_profile("Profile A")))]))
    cc.write(b, b"\xff\xd8\xff\xe0 not a JPEG after all" + bytes(range(256)) * 4)
    exif = exif_blob.tiff([(0x010F, exif_blob.ASCII, "Canon"), (0x0112, exif_blob.SHORT, 6)],
                          exif=[(0xA002, exif_blob.LONG, w), (0xA003, exif_blob.LONG, h)])
    cc.write(c, png_with(c_img, [(b"iCCP", b"C\0\0" + zlib.compress(cc.icc_profile("Profile C"))),
                                 (b"eXIf", exif), (b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + XMP),
                                 (b"tEXt", b"Comment\0viewer_walk_meta.py")]))
    refs = {}
    for name, p in (("a", a), ("c", c)):
        refs[name] = os.path.join(tmp, f"ref_{name}.png")
        rc, o, e = run([imgpu, "equalize", p, refs[name], "--device", "cpu", "--quiet"])
        ck.check(rc == 0, f"CLI equalize {name}.png", e)
    want_c = meta_chunks(refs["c"])
    ck.check({t for t, _ in want_c} >= {b"iCCP", b"eXIf", b"iTXt", b"tEXt"},
             "the CLI's output keeps ICC, EXIF, XMP and text (test self-check)", str(want_c)[:300])

    # 1. key n from a.png: c.png (b.jpg skipped), as a window shows it
    ev = os.path.join(tmp, "n.events")
    cc.write(ev, b"key n\nkey ctrl+c\n")
    snap = os.path.join(tmp, "snap_n.png")
    rc, o, e = run([view, a, "--equalize", "--events", ev, "--snapshot", snap] + ctx)
    if ck.check(rc == 0, "view a.png --events (key n) --snapshot: exits 0", o + e):
        names = [os.path.basename(l.split()[2]) for l in o.splitlines() if l.startswith("imgpu ")]
        ck.check(names == ["c.png"], "key n moved to c.png, past the corrupt b.jpg (Ctrl+C names it)", o + e)
        got, want = pixels(snap), pixels(refs["c"])
        ck.check(got is not None and want is not None and got.shape == want.shape and np.array_equal(got, want),
                 "the snapshot after key n is c.png equalized, as the window shows (not a.png)")
        got_meta = meta_chunks(snap)
        ck.check(got_meta == want_c, "the snapshot carries c.png's ICC, EXIF, XMP and text, as the CLI's output",
                 f"got {[(t, len(x)) for t, x in got_meta]}, want {[(t, len(x)) for t, x in want_c]}")
    # key n twice: round to a.png
    cc.write(ev, b"key n\nkey n\n")
    snap2 = os.path.join(tmp, "snap_nn.png")
    rc, o, e = run([view, a, "--equalize", "--events", ev, "--snapshot", snap2] + ctx)
    if ck.check(rc == 0, "key n twice: exits 0", o + e):
        got, want = pixels(snap2), pixels(refs["a"])
        ck.check(got is not None and want is not None and got.shape == want.shape and np.array_equal(got, want),
                 "key n twice wraps round to a.png")
        ck.check(meta_chunks(snap2) == meta_chunks(refs["a"]), "... with a.png's profile")

    # 2. S (save) keeps the metadata too
    save_dir = os.path.join(tmp, "saved")
    os.makedirs(save_dir)
    cc.write(ev, b"key n\nkey s\n")
    rc, o, e = run([view, a, "--equalize", "--events", ev, "--snapshot", os.path.join(tmp, "snap_s.png"),
                    "--save-dir", save_dir] + ctx)
    saved = os.path.join(save_dir, "c.view.png")
    if ck.check(rc == 0 and os.path.isfile(saved), "key s saves c.view.png", f"{o}{e}{os.listdir(save_dir)}"):
        ck.check(meta_chunks(saved) == want_c, "S keeps c.png's ICC, EXIF, XMP and text, as the CLI",
                 str([(t, len(x)) for t, x in meta_chunks(saved)]))
        got, want = pixels(saved), pixels(refs["c"])
        ck.check(got is not None and want is not None and got.shape == want.shape and np.array_equal(got, want),
                 "S saved c.png equalized")

    # 3. a --size snapshot: the ICC profile alone
    snap3 = os.path.join(tmp, "snap_size.png")
    rc, o, e = run([view, c, "--equalize", "--snapshot", snap3, "--size", "200x150"] + ctx)
    if ck.check(rc == 0, "--size snapshot: exits 0", o + e):
        got = meta_chunks(snap3)
        ck.check(got == [t for t in want_c if t[0] == b"iCCP"],
                 "a --size snapshot carries the ICC profile, not EXIF, XMP or text",
                 str([(t, len(x)) for t, x in got]))
    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

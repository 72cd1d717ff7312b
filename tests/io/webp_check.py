"""webp_check.py — the WebP codec (src/io/codec_webp.c) through imgpu's load path and CLI,
against outside oracles: PIL (Debian's python3-pil on the same libwebp 1.2.4) for pixels and
for the bytes of a lossy write, cwebp / dwebp / webpmux / img2webp (Debian's webp package)
for files PIL does not make and for the container's chunks, exiftool for metadata.

What is checked:
  1. decode: lossy, lossless, with alpha (VP8X + ALPH, VP8L), odd sizes (1x1, 17x9, 333x257),
     animated (the first frame on its canvas) — made by PIL and by cwebp / img2webp — equal to
     PIL's decode exactly (io_dump gives imgpu's pixels; lossy decoding is deterministic);
  2. write: lossless round trip exact for gray, gray+alpha, RGB, RGBA (read back by PIL and
     dwebp); lossy bytes equal to PIL's im.save(quality=q, method=4), default quality 75;
     16-bit input converted with the notice; a side over 16383 refused;
  3. metadata: ICC / EXIF / XMP through `imgpu equalize` webp->webp and webp->png and
     png->webp (exiftool reads them back, webpmux sees the VP8X flags), --strip,
     Orientation 6 applied (upright pixels, Orientation 1), --no-auto-orient, `imgpu info`;
  4. the animation notice (and --quiet), batch picking up .webp files;
  5. bad input: truncated at many points, corrupt, hostile headers — `imgpu: cannot read
     '<file>': <reason>` alone on stderr, exit 1, no output, an existing output untouched;
     --max-pixels before any decode, --max-decode-time with io.c's wording.
Every check can fail: the expected values come from the oracles, not from imgpu.

usage: webp_check.py IMGPU IO_DUMP TMPDIR      (exit 77 when PIL lacks WebP or a tool is missing)
"""
import io
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

import numpy as np
from PIL import Image, features

T = cc.Checker("webp_check")
check = T.check  # counts, prints "FAIL: ..." and returns cond (cli_common.Checker)


def run(argv, stdin=None):
    return cc.run_argv(argv, stdin, timeout=300)


IMGPU = IO_DUMP = TMP = None


def path(name):
    return os.path.join(TMP, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def dump(p):
    """imgpu's decode of p: (array HxWxC, stderr) or (None, stderr)."""
    rc, out, err = run([IO_DUMP, p])
    if rc != 0:
        return None, err
    nl = out.index(b"\n")
    w, h, c = map(int, out[:nl].split())
    return np.frombuffer(out[nl + 1:], np.uint8).reshape(h, w, c), err


def pil_pixels(p_or_bytes):
    im = Image.open(io.BytesIO(p_or_bytes) if isinstance(p_or_bytes, bytes) else p_or_bytes)
    im.seek(0)
    im.load()
    a = np.array(im)
    return a if a.ndim == 3 else a[:, :, None]


def pil_webp(a, **kw):
    b = io.BytesIO()
    Image.fromarray(a if a.shape[2] != 1 else a[:, :, 0]).save(b, "WEBP", **kw)
    return b.getvalue()


def picture(w, h, c, seed):
    """a smooth picture with noise (so lossy coding has work to do) and, for 4 channels,
    an alpha ramp with fully transparent and fully opaque areas"""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = [x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x * 7 + y * 3) % 256]
    a = np.dstack(base).astype(np.int32) + rng.integers(-24, 25, (h, w, 3))
    a = np.clip(a, 0, 255).astype(np.uint8)
    if c == 4:
        alpha = np.clip((x - w // 4) * 512 // max(w, 1), 0, 255).astype(np.uint8)
        a = np.dstack([a, alpha])
    return a


def riff_chunks(data):
    """[(fourcc, payload)] of a WebP file, walked here."""
    out, pos = [], 12
    while pos + 8 <= len(data):
        n = struct.unpack("<I", data[pos + 4:pos + 8])[0]
        out.append((data[pos:pos + 4], data[pos + 8:pos + 8 + n]))
        pos += 8 + n + (n & 1)
    return out


def with_riff(chunks):
    body = b"WEBP" + b"".join(t + struct.pack("<I", len(d)) + d + (b"\0" if len(d) & 1 else b"")
                              for t, d in chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


icc_profile = cc.icc_profile


XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
       b'xmlns:dc="http://purl.org/dc/elements/1.1/" dc:format="image/webp"/></rdf:RDF>'
       b'</x:xmpmeta><?xpacket end="w"?>')


def exif(orientation):
    e = Image.Exif()
    e[0x010F] = "Canon"
    e[0x0110] = "EOS 5D"
    e[0x0112] = orientation
    return e.tobytes()


def exiftool(p, *tags):
    r = subprocess.run(["exiftool", "-s", "-s", "-s", "-n"] + [f"-{t}" for t in tags] + [p],
                       capture_output=True, timeout=60)
    return r.stdout.decode(errors="replace").splitlines()


def webpmux_info(p):
    return run(["webpmux", "-info", p])[1].decode(errors="replace")


# ---- 1. decode ------------------------------------------------------------------------------

def check_decode():
    files = {}
    for w, h in [(1, 1), (17, 9), (333, 257)]:
        for c in (3, 4):
            a = picture(w, h, c, w * h + c)
            files[f"pil_lossy_{w}x{h}_{c}.webp"] = pil_webp(a, quality=80)
            files[f"pil_lossless_{w}x{h}_{c}.webp"] = pil_webp(a, lossless=True, exact=True)
    files["pil_lossy_q5_alpha_q20.webp"] = pil_webp(picture(64, 48, 4, 5), quality=5,
                                                   alpha_quality=20)
    # an animation whose later frames are sub-frames at offsets; the first is the canvas
    frames = [picture(60, 40, 4, 100 + i) for i in range(3)]
    frames[1][:] = frames[0]
    frames[1][10:20, 6:30] = 0
    frames[2][:] = frames[0]
    frames[2][22:30, 40:58] = 255
    b = io.BytesIO()
    Image.fromarray(frames[0]).save(b, "WEBP", save_all=True, duration=80, quality=70,
                                    append_images=[Image.fromarray(f) for f in frames[1:]])
    files["pil_anim_3.webp"] = b.getvalue()
    for name, data in files.items():
        write(name, data)

    # cwebp / img2webp from PNGs, including an animation whose first frame is smaller than
    # the canvas (img2webp makes frames the canvas size; webpmux can place a frame: -frame)
    rgb, rgba = picture(333, 257, 3, 7), picture(333, 257, 4, 8)
    Image.fromarray(rgb).save(path("c_rgb.png"))
    Image.fromarray(rgba).save(path("c_rgba.png"))
    tools = [
        (["cwebp", "-quiet", "-q", "60", path("c_rgb.png"), "-o", path("cwebp_lossy.webp")]),
        (["cwebp", "-quiet", "-lossless", path("c_rgb.png"), "-o", path("cwebp_ll.webp")]),
        (["cwebp", "-quiet", "-q", "60", "-alpha_filter", "best", path("c_rgba.png"), "-o",
          path("cwebp_alpha.webp")]),
        (["cwebp", "-quiet", "-lossless", "-exact", path("c_rgba.png"), "-o",
          path("cwebp_ll_alpha.webp")]),
        (["cwebp", "-quiet", "-q", "60", "-sharp_yuv", "-sns", "0", "-f", "0", "-sharpness", "7",
          path("c_rgb.png"), "-o", path("cwebp_options.webp")]),
        (["img2webp", "-q", "50", "-lossy", path("c_rgba.png"), "-lossless", path("c_rgb.png"),
          "-o", path("img2webp_anim.webp")]),
    ]
    for argv in tools:
        rc, _, err = run(argv)
        check(rc == 0, f"oracle tool: {' '.join(argv[:3])}", err)
        files[os.path.basename(argv[-1])] = open(argv[-1], "rb").read() if rc == 0 else b""
    # a frame of 20x10 at (8, 6) on a 40x30 canvas, built from a cwebp still
    small = picture(20, 10, 4, 9)
    Image.fromarray(small).save(path("small.png"))
    run(["cwebp", "-quiet", "-lossless", "-exact", path("small.png"), "-o", path("small.webp")])
    rc, _, err = run(["webpmux", "-frame", path("small.webp"), "+100+8+6", "-frame",
                      path("small.webp"), "+100+0+0", "-loop", "0", "-bgcolor", "255,255,255,255",
                      "-o", path("webpmux_anim.webp")])
    check(rc == 0, "oracle tool: webpmux -frame", err)
    if rc == 0:
        data = bytearray(open(path("webpmux_anim.webp"), "rb").read())
        # webpmux sizes the canvas to the frames (28x16); widen it to 40x30 in the VP8X chunk
        assert data[12:16] == b"VP8X"
        data[24:30] = struct.pack("<I", 39)[:3] + struct.pack("<I", 29)[:3]
        files["webpmux_anim.webp"] = bytes(data)
        write("webpmux_anim.webp", bytes(data))

    for name, data in sorted(files.items()):
        if not data:
            continue
        got, err = dump(path(name))
        want = pil_pixels(path(name))
        check(got is not None and got.shape == want.shape and np.array_equal(got, want),
              f"decode {name} == PIL's decode exactly",
              f"{err} {None if got is None else got.shape} vs {want.shape}; max diff "
              f"{'' if got is None or got.shape != want.shape else np.abs(got.astype(int) - want).max()}")
    # the offset frame really lies at (8, 6) on a transparent canvas (PIL agrees above)
    if "webpmux_anim.webp" in files:
        got, _ = dump(path("webpmux_anim.webp"))
        ok = got is not None and got.shape == (30, 40, 4)
        check(ok and np.array_equal(got[6:16, 8:28], small) and not got[:6].any() and
              not got[16:].any() and not got[:, :8].any() and not got[:, 28:].any(),
              "animated: the first frame at its offset, the canvas around it transparent black")

    # the notice: one line naming the file and the frame count; --quiet silences it
    rc, _, err = run([IMGPU, "equalize", path("pil_anim_3.webp"), path("anim_eq.png"),
                      "--device", "cpu"])
    check(rc == 0 and err == f"imgpu: '{path('pil_anim_3.webp')}': animated WebP: only the first "
          "of its 3 frames is used\n", "animated: the first-frame notice", err)
    rc, _, err = run([IMGPU, "equalize", path("pil_anim_3.webp"), path("anim_eq.png"),
                      "--device", "cpu", "--quiet"])
    check(rc == 0 and err == "", "animated: --quiet silences the notice", err)
    rc, _, err = run([IMGPU, "equalize", path("pil_lossy_17x9_3.webp"), path("x.png"),
                      "--device", "cpu"])
    check(rc == 0 and err == "", "a still WebP: nothing on stderr", err)

    # info: channels from the header (3, or 4 with alpha)
    rc, o, err = run([IMGPU, "info", path("pil_lossless_333x257_4.webp"),
                      path("pil_lossy_333x257_3.webp")])
    o = o.decode()
    check(rc == 0 and "format:      WebP" in o and "channels:    4 (RGBA)" in o and
          "channels:    3 (RGB)" in o and "dimensions:  333 x 257" in o, "info on WebP files", o)


# ---- 2. write -------------------------------------------------------------------------------

def check_write():
    rng = np.random.default_rng(16)
    srcs = {"gray": picture(97, 61, 3, 1)[:, :, :1], "rgb": picture(97, 61, 3, 2),
            "rgba": picture(97, 61, 4, 3)}
    srcs["gray_alpha"] = np.dstack([srcs["gray"], picture(97, 61, 4, 4)[:, :, 3:]])
    # transparent pixels with colour under them: --lossless keeps it (exact)
    srcs["rgba"][:5, :5, 3] = 0
    for name, a in srcs.items():
        png = path(f"w_{name}.png")
        Image.fromarray(a if a.shape[2] != 1 else a[:, :, 0]).save(png)
        ref = path(f"w_{name}_ref.png")   # imgpu's equalize, losslessly
        rc, _, err = run([IMGPU, "equalize", png, ref, "--device", "cpu"])
        check(rc == 0, f"equalize {name} to PNG", err)
        want = pil_pixels(ref)
        if want.shape[2] == 1:
            want = np.repeat(want, 3, axis=2)            # WebP has no gray: RGB
        elif want.shape[2] == 2:
            want = np.dstack([np.repeat(want[:, :, :1], 3, axis=2), want[:, :, 1:]])
        out = path(f"w_{name}_ll.webp")
        rc, _, err = run([IMGPU, "equalize", png, out, "--device", "cpu", "--lossless"])
        check(rc == 0 and err == "", f"--lossless write of {name}", err)
        if rc != 0:
            continue
        got = pil_pixels(out)
        check(got.shape == want.shape and np.array_equal(got, want),
              f"--lossless {name}: PIL reads back exactly the pixels", f"{got.shape} {want.shape}")
        pam = path(f"w_{name}_ll.pam")
        rc, _, err = run(["dwebp", "-quiet", "-pam", out, "-o", pam])
        d = open(pam, "rb").read() if rc == 0 else b""
        hdr_end = d.find(b"ENDHDR\n") + 7
        dw = np.frombuffer(d[hdr_end:], np.uint8).reshape(want.shape[0], want.shape[1], 4) \
            if rc == 0 else None
        check(dw is not None and np.array_equal(dw[:, :, :want.shape[2]], want),
              f"--lossless {name}: dwebp reads back exactly the pixels", err)
        check(b"VP8L" in open(out, "rb").read(40), f"--lossless {name}: a VP8L bitstream")
        got2, _ = dump(out)
        check(got2 is not None and np.array_equal(got2, want),
              f"--lossless {name}: imgpu reads back exactly the pixels")

        # lossy: the bytes PIL writes for the same pixels at the same settings
        refim = Image.open(ref)
        refim.load()
        for q in (1, 50, 80, 100, None):
            out = path(f"w_{name}_q{q}.webp")
            argv = [IMGPU, "equalize", png, out, "--device", "cpu"]
            argv += ["--quality", str(q)] if q else []
            rc, _, err = run(argv)
            b = io.BytesIO()
            refim.save(b, "WEBP", quality=q or 75, method=4)
            mine = open(out, "rb").read() if rc == 0 else b""
            what = f"lossy {name} at quality {q or 'default (75)'}"
            if SAME_LIBWEBP:
                check(rc == 0 and mine == b.getvalue(),
                      f"{what}: the bytes of PIL's save(quality={q or 75}, method=4)",
                      f"{err} {len(mine)} vs {len(b.getvalue())}")
            else:
                # another libwebp in PIL (pip's wheels): its container and alpha bytes may
                # differ, the decoded pixels may not
                mine_px = np.asarray(Image.open(io.BytesIO(mine))) if rc == 0 else None
                check(mine_px is not None and np.array_equal(
                          mine_px, np.asarray(Image.open(io.BytesIO(b.getvalue())))),
                      f"{what}: the pixels of PIL's save(quality={q or 75}, method=4) "
                      f"(libwebp {LIBWEBP[0]} here, {LIBWEBP[1]} in PIL: bytes not compared)", err)
    # lossy at the default quality is not lossy at 92 (JPEG's default) or PIL's 80
    sizes = {q: len(open(path(f"w_rgb_q{q}.webp"), "rb").read()) for q in (80, None)}
    check(sizes[None] != sizes[80], "the default WebP quality is not 80", sizes)

    # an opaque RGBA image: libwebp stores no alpha, so it loads back as RGB (documented)
    opaque = picture(31, 17, 4, 11)
    opaque[:, :, 3] = 255
    Image.fromarray(opaque).save(path("opaque.png"))
    rc, _, err = run([IMGPU, "rotate", path("opaque.png"), path("opaque.webp"), "--angle", "90",
                      "--lossless", "--device", "cpu"])
    got, _ = dump(path("opaque.webp"))
    check(rc == 0 and got is not None and got.shape == (31, 17, 3) and
          np.array_equal(got, np.rot90(opaque[:, :, :3], 1)),
          "an opaque RGBA image: rotate 90 (counter-clockwise) to lossless WebP gives the RGB "
          "pixels turned", err)

    # 16-bit input: 8 bits with io.c's notice, rounded v * 255 / 65535
    a16 = (rng.integers(0, 65536, (13, 21, 3))).astype(np.uint16)
    import cv2
    cv2.imwrite(path("deep.png"), a16[:, :, ::-1])
    rc, _, err = run([IMGPU, "rotate", path("deep.png"), path("deep.webp"), "--angle", "0",
                      "--lossless", "--device", "cpu"])
    got, _ = dump(path("deep.webp"))
    want = ((a16.astype(np.uint64) * 255 + 32767) // 65535).astype(np.uint8)
    check(rc == 0 and "WebP stores 8 bits per sample: converting the 16-bit image" in err,
          "16-bit input: the conversion notice", err)
    check(got is not None and np.array_equal(got, want), "16-bit input: rounded to 8 bits exactly")

    # sides: 16383 is written, 16384 refused before encoding, no file left
    Image.fromarray(np.full((1, 16383, 3), 77, np.uint8)).save(path("wide_ok.png"))
    Image.fromarray(np.full((2, 16384, 3), 77, np.uint8)).save(path("wide.png"))
    rc, _, err = run([IMGPU, "equalize", path("wide_ok.png"), path("wide_ok.webp"),
                      "--device", "cpu"])
    check(rc == 0 and os.path.exists(path("wide_ok.webp")), "a 16383-pixel side is written", err)
    rc, _, err = run([IMGPU, "equalize", path("wide.png"), path("wide.webp"), "--device", "cpu"])
    check(rc == 1 and err == f"imgpu: cannot write '{path('wide.webp')}': WebP cannot store "
          "images wider or taller than 16383 pixels (this one is 16384x2)\n" and
          not os.path.exists(path("wide.webp")), "a 16384-pixel side is refused", err)
    # ... but VP8L codes sides up to 16384 and libwebp decodes them: read like PIL does (a
    # 34-byte lossless file of 16384x4 transparent pixels, found by fuzz_webp)
    p = write("vp8l_16384.webp", bytes.fromhex("524946461a00000057454250565038")
              + bytes.fromhex("4c0d0000002fffff0010071011118888fe0700"))
    got, err = dump(p)
    want = pil_pixels(p)
    check(got is not None and got.shape == (4, 16384, 4) and np.array_equal(got, want),
          "a 16384-pixel VP8L side is read, as PIL reads it", err)


# ---- 3. metadata ----------------------------------------------------------------------------

def check_meta():
    w, h = 40, 24
    pix = picture(w, h, 3, 21)
    icc = icc_profile("Test RGB (imgpu webp)")
    Image.fromarray(pix).save(path("m_plain.png"))
    src = pil_webp(pix, lossless=True, icc_profile=icc, exif=exif(6), xmp=XMP)
    inp = write("m_in.webp", src)
    info = webpmux_info(inp)
    check("ICC profile" in info and "EXIF metadata" in info and "XMP metadata" in info,
          "oracle: PIL wrote ICCP, EXIF and XMP", info)

    rc, o, err = run([IMGPU, "info", inp])
    o = o.decode()
    check(rc == 0 and "ICC profile: Test RGB (imgpu webp)" in o and
          "orientation: 6 (rotated 90 clockwise)" in o and "camera:      Canon EOS 5D" in o and
          "dimensions:  24 x 40" in o, "info: ICC description, orientation, camera", o)

    ref = path("m_ref.png")   # equalize of the bare pixels; turning commutes with equalize
    run([IMGPU, "equalize", path("m_plain.png"), ref, "--device", "cpu"])
    want = np.rot90(pil_pixels(ref), -1)
    for out in ("m_out.webp", "m_out.png"):
        o = path(out)
        argv = [IMGPU, "equalize", inp, o, "--device", "cpu"]
        argv += ["--lossless"] if out.endswith(".webp") else []
        rc, _, err = run(argv)
        check(rc == 0, f"equalize webp -> {out}", err)
        got = pil_pixels(o)
        check(got.shape == want.shape and np.array_equal(got, want),
              f"{out}: Orientation 6 applied (upright pixels)", f"{got.shape} vs {want.shape}")
        t = exiftool(o, "Orientation", "Make", "Model", "ProfileDescription", "Format")
        check(t == ["1", "Canon", "EOS 5D", "Test RGB (imgpu webp)", "image/webp"],
              f"{out}: exiftool reads Orientation 1, camera, ICC, XMP", t)
        if out.endswith(".webp"):
            info = webpmux_info(o)
            check("ICC profile" in info and "EXIF metadata" in info and "XMP metadata" in info,
                  "webp output: VP8X flags for ICC, EXIF, XMP", info)
            cs = dict(riff_chunks(open(o, "rb").read()))
            check(cs.get(b"ICCP") == icc, "webp output: the ICC profile byte for byte")
            check(cs.get(b"XMP ") == XMP, "webp output: the XMP packet byte for byte")
            ex = cs.get(b"EXIF", b"")
            check(ex[:4] in (b"II*\0", b"MM\0*"), "webp output: EXIF stored bare (TIFF header)",
                  ex[:8])

    # png -> webp: the metadata of a PNG goes into the WebP
    rc, _, err = run([IMGPU, "equalize", path("m_out.png"), path("m_from_png.webp"),
                      "--device", "cpu"])
    t = exiftool(path("m_from_png.webp"), "Orientation", "Make", "ProfileDescription", "Format")
    check(rc == 0 and t == ["1", "Canon", "Test RGB (imgpu webp)", "image/webp"],
          "png -> webp: ICC, EXIF, XMP travel", f"{err} {t}")

    # an EXIF chunk written by exiftool (no PIL involved), Orientation 8, lossy file
    lossy = write("m_lossy.webp", pil_webp(pix, quality=90))
    rc, _, err = run(["exiftool", "-q", "-overwrite_original", "-Orientation#=8",
                      "-Make=Nikon", lossy])
    check(rc == 0, "oracle: exiftool writes an EXIF chunk into a WebP", err)
    got, _ = dump(lossy)
    want = np.rot90(pil_pixels(lossy), 1)
    check(got is not None and np.array_equal(got, want),
          "Orientation 8 (exiftool's EXIF): the decode turned 90 counter-clockwise")
    # a leading "Exif\0\0" in the chunk (some writers): skipped
    cs = riff_chunks(src)
    cs = [(t, b"Exif\0\0" + d if t == b"EXIF" else d) for t, d in cs]
    write("m_exif_header.webp", with_riff(cs))
    rc, o, err = run([IMGPU, "info", path("m_exif_header.webp")])
    check(rc == 0 and b"orientation: 6" in o and b"Canon EOS 5D" in o,
          "an EXIF chunk with a leading Exif\\0\\0 is read", o.decode() + err)

    # --no-auto-orient keeps pixels and tag; --strip drops every chunk and still turns
    rc, _, err = run([IMGPU, "equalize", inp, path("m_keep.webp"), "--device", "cpu",
                      "--lossless", "--no-auto-orient"])
    got = pil_pixels(path("m_keep.webp"))
    check(rc == 0 and np.array_equal(got, pil_pixels(ref)) and
          exiftool(path("m_keep.webp"), "Orientation") == ["6"],
          "--no-auto-orient: stored pixels, Orientation 6 kept", err)
    rc, _, err = run([IMGPU, "equalize", inp, path("m_strip.webp"), "--device", "cpu",
                      "--lossless", "--strip"])
    data = open(path("m_strip.webp"), "rb").read() if rc == 0 else b"?"
    kinds = {t for t, _ in riff_chunks(data)}
    check(rc == 0 and not kinds & {b"ICCP", b"EXIF", b"XMP ", b"VP8X"},
          "--strip: no ICCP, EXIF, XMP (and no VP8X) in the output", kinds)
    check(rc == 0 and np.array_equal(pil_pixels(path("m_strip.webp")), want_rot(ref)),
          "--strip: the image still turned upright")


def want_rot(ref):
    return np.rot90(pil_pixels(ref), -1)


# ---- 4. batch -------------------------------------------------------------------------------

def check_batch():
    d = path("batch_in")
    os.makedirs(d, exist_ok=True)
    shutil.copy(path("pil_lossy_333x257_3.webp"), os.path.join(d, "a.webp"))
    shutil.copy(path("pil_lossless_17x9_4.webp"), os.path.join(d, "B.WEBP"))
    shutil.copy(path("m_plain.png"), os.path.join(d, "c.png"))
    out = path("batch_out")
    rc, o, err = run([IMGPU, "batch", "--equalize", "-o", out, d, "--device", "cpu"])
    names = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(rc == 0 and {"a.webp", "B.WEBP", "c.png"} <= set(names),
          "batch picks up .webp files (any case) and writes WebP outputs", f"{names} {err}")
    if rc == 0:
        got, _ = dump(os.path.join(out, "B.WEBP"))
        check(got is not None and got.shape == (9, 17, 4), "batch: the WebP output keeps alpha")


# ---- 5. bad input ---------------------------------------------------------------------------

def bad(name, data, reason, extra=()):
    """data must fail with `reason` (a substring, or the whole reason when it ends in '$'),
    exit 1, nothing else on stderr, no output, an existing output untouched."""
    p = write(name, data)
    out = path("bad_out.png")
    for existing in (False, True):
        if existing:
            write("bad_out.png", b"keep me")
        elif os.path.exists(out):
            os.remove(out)
        rc, so, err = run([IMGPU, "equalize", p, out, "--device", "cpu"] + list(extra))
        head = f"imgpu: cannot read '{p}': "
        lines = err.splitlines()
        msg = lines[0][len(head):] if lines and lines[0].startswith(head) else None
        ok = msg is not None and (msg == reason[:-1] if reason.endswith("$") else reason in msg)
        check(rc == 1 and so == b"" and len(lines) == 1 and ok,
              f"{name}: exit 1 and only 'imgpu: cannot read ...: {reason}'", f"rc={rc} {err!r}")
        if existing:
            check(open(out, "rb").read() == b"keep me", f"{name}: the existing output untouched")
        else:
            check(not os.path.exists(out), f"{name}: no output written")
    # info reads headers only: --decode (a short bitstream inside whole chunks needs a decode)
    rc, _, err = run([IMGPU, "info", "--decode", p] + list(extra))
    check(rc == 1 and err.startswith(f"imgpu: cannot read '{p}'"), f"{name}: info --decode fails too", err)


def check_bad():
    good = {n: open(path(n), "rb").read() for n in
            ("pil_lossy_333x257_3.webp", "pil_lossless_333x257_4.webp",
             "pil_lossy_333x257_4.webp", "pil_anim_3.webp")}
    # truncated at many points: every cut is refused, and past the headers as truncated
    for n, data in good.items():
        for frac in (0.05, 0.2, 0.5, 0.9, 0.999):
            cut = max(int(len(data) * frac), 13)
            bad(f"cut{cut}_{n}", data[:cut], "truncated WebP")
    # header-level damage
    g = good["pil_lossy_333x257_3.webp"]
    bad("hdr_riff_small.webp", g[:4] + struct.pack("<I", 4) + g[8:],
        "corrupt WebP header (bad RIFF size)$")
    bad("hdr_unknown_first.webp", g[:12] + b"JUNK" + g[16:],
        "corrupt WebP header (unknown first chunk 'JUNK')$")
    bad("hdr_vp8_not_key.webp", g[:20] + bytes([g[20] | 1]) + g[21:],
        "corrupt WebP header (bad VP8 frame header)$")
    bad("hdr_vp8_startcode.webp", g[:23] + b"\0\0\0" + g[26:],
        "corrupt WebP header (bad VP8 frame header)$")
    ll = good["pil_lossless_333x257_4.webp"]
    bad("hdr_vp8l_signature.webp", ll[:20] + b"\x2e" + ll[21:],
        "corrupt WebP header (bad VP8L header)$")
    bad("hdr_vp8l_version.webp", ll[:24] + bytes([ll[24] | 0x20]) + ll[25:],
        "corrupt WebP header (bad VP8L header)$")
    bad("hdr_vp8x_size.webp", with_riff([(b"VP8X", bytes(9))]),
        "corrupt WebP header (bad VP8X chunk size)$")
    # chunk-level damage
    bad("chunk_past_riff.webp", g[:16] + struct.pack("<I", len(g)) + g[20:],
        "corrupt WebP data (the image chunk runs past the RIFF size)$")
    bad("riff_past_end.webp", g[:4] + struct.pack("<I", len(g) + 100) + g[8:],
        "truncated WebP data$")
    vp8 = dict(riff_chunks(g))[b"VP8 "]
    vp8x = lambda w, h, flags=0: (b"VP8X", bytes([flags, 0, 0, 0]) +
                                  struct.pack("<I", w - 1)[:3] + struct.pack("<I", h - 1)[:3])
    bad("vp8x_no_image.webp", with_riff([vp8x(333, 257)]), "corrupt WebP data (no image chunk)$")
    bad("vp8x_size_mismatch.webp", with_riff([vp8x(334, 257), (b"VP8 ", vp8)]),
        "corrupt WebP data (the image size is not the canvas size)$")
    bad("vp8x_two_images.webp", with_riff([vp8x(333, 257), (b"VP8 ", vp8), (b"VP8 ", vp8)]),
        "corrupt WebP data (unexpected image chunk)$")
    bad("anim_no_frames.webp", with_riff([vp8x(10, 10, 0x02), (b"ANIM", bytes(6))]),
        "corrupt WebP data (an animation without frames)$")
    anmf = struct.pack("<I", 0)[:3] * 2 + struct.pack("<I", 332)[:3] + \
        struct.pack("<I", 256)[:3] + bytes(4) + b"VP8 " + struct.pack("<I", len(vp8)) + vp8
    bad("anim_frame_outside.webp", with_riff([vp8x(100, 100, 0x02), (b"ANIM", bytes(6)),
                                              (b"ANMF", anmf)]),
        "corrupt WebP data (an animation frame lies outside the canvas)$")
    bad("anmf_before_anim.webp", with_riff([vp8x(333, 257, 0x02), (b"ANMF", anmf)]),
        "corrupt WebP data (bad ANMF chunk)$")
    # the bitstream itself damaged: libwebp's status, mapped
    for i, off in enumerate((40, 200, 2000)):
        d = bytearray(g)
        d[off:off + 64] = bytes(64)
        p = write(f"zeroed{i}.webp", bytes(d))
        rc, so, err = run([IMGPU, "equalize", p, path("z.png"), "--device", "cpu"])
        # VP8 data with zeros may still decode (it is not checksummed): then PIL must agree
        if rc == 0:
            got, _ = dump(p)
            check(got is not None and np.array_equal(got, pil_pixels(p)),
                  f"zeroed{i}: decodes, and as PIL does")
        else:
            check(rc == 1 and err.startswith(f"imgpu: cannot read '{p}': corrupt WebP data (")
                  and len(err.splitlines()) == 1, f"zeroed{i}: a corrupt-data message", err)
    d = bytearray(ll)
    d[60:200] = b"\xff" * 140
    bad("vp8l_garbage.webp", bytes(d), "corrupt WebP data (invalid or truncated bitstream)$")
    # VP8L and VP8 chunks whose sizes are honest but whose bitstreams stop (dwebp: status 3,
    # BITSTREAM_ERROR, for VP8L; 7, NOT_ENOUGH_DATA, for VP8), and a VP8 first partition
    # larger than its chunk
    for n in (300, 100000):
        bad(f"vp8l_short{n}.webp", with_riff([(b"VP8L", dict(riff_chunks(ll))[b"VP8L"][:n])]),
            "corrupt WebP data (invalid or truncated bitstream)$")
    bad("vp8_short.webp", with_riff([(b"VP8 ", vp8[:len(vp8) // 2])]),
        "corrupt WebP data (the image data ends early)$")
    bad("vp8_partition.webp", with_riff([(b"VP8 ", vp8[:300])]),
        "corrupt WebP data (the VP8 first partition runs past its chunk)$")
    bad("vp8x_partition.webp", with_riff([vp8x(333, 257), (b"VP8 ", vp8[:300])]),
        "corrupt WebP data (the VP8 first partition runs past its chunk)$")

    # hostile: a huge canvas from a few bytes is refused by --max-pixels before decoding
    bad("huge_canvas.webp", with_riff([vp8x(16385, 16385), (b"VP8 ", vp8)]),
        "image is 16385x16385 = 268468225 pixels, more than the limit of 268435456 (raise it "
        "with --max-pixels)$")
    bad("huge_canvas_24bit.webp", with_riff([vp8x(1 << 24, 1 << 24), (b"VP8 ", vp8)]),
        "image is 16777216x16777216 = 281474976710656 pixels, more than the limit")
    bad("max_pixels.webp", g, "image is 333x257 = 85581 pixels, more than the limit of 1000",
        ["--max-pixels", "1000"])
    bad("huge_chunk.webp", g[:16] + b"\xff\xff\xff\xff" + g[20:],
        "corrupt WebP data (the image chunk runs past the RIFF size)$")
    bad("riff_huge.webp", g[:4] + b"\xff\xff\xff\xff" + g[8:],
        "corrupt WebP header (bad RIFF size)$")

    # --max-decode-time: io.c's wording, from the incremental decoder's poll
    big = picture(2000, 1500, 3, 31)
    write("big.webp", pil_webp(big, quality=90))
    rc, so, err = run([IMGPU, "equalize", path("big.webp"), path("big.png"), "--device", "cpu",
                       "--max-decode-time", "0.001"])
    check(rc == 1 and err == f"imgpu: cannot read '{path('big.webp')}': decoding took longer "
          "than the limit of 0.001 s (raise it with --max-decode-time or IMGPU_MAX_DECODE_TIME)\n"
          and not os.path.exists(path("big.png")), "--max-decode-time: io.c's message", err)


SAME_LIBWEBP, LIBWEBP = True, ("?", "?")


def webp_anim_ok():
    try:
        buf = io.BytesIO()
        frames = [Image.new("RGB", (4, 4), c) for c in ("red", "blue")]
        frames[0].save(buf, "WEBP", save_all=True, append_images=frames[1:], lossless=True)
        return Image.open(io.BytesIO(buf.getvalue())).n_frames == 2
    except Exception:
        return False


def main():
    global IMGPU, IO_DUMP, TMP
    IMGPU, IO_DUMP, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
    # Pillow >= 11 folds animation into "webp" ("webp_anim" is deprecated, then unknown):
    # ask for WebP, and for animation by writing a two-frame file
    if not features.check("webp") or not webp_anim_ok():
        print("SKIP: PIL without WebP (or without animated WebP)")
        return 77
    for tool in ("cwebp", "dwebp", "webpmux", "img2webp", "exiftool"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not found (Debian: webp, libimage-exiftool-perl)")
            return 77
    global SAME_LIBWEBP, LIBWEBP
    ver = subprocess.run([IMGPU, "--version"], capture_output=True, text=True).stdout
    mine = ver.split("libwebp ")[1].split()[0].rstrip(",") if "libwebp " in ver else "?"
    LIBWEBP = (mine, features.version("webp") or "?")
    SAME_LIBWEBP = LIBWEBP[0] == LIBWEBP[1]
    print(f"libwebp: {LIBWEBP[0]} in imgpu, {LIBWEBP[1]} in PIL", flush=True)
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    check_decode()
    check_write()
    check_meta()
    check_batch()
    check_bad()
    return T.end()


if __name__ == "__main__":
    sys.exit(main())

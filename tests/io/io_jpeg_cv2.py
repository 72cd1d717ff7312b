"""io_jpeg_cv2.py — imgpu's JPEG codec (src/io/codec_jpeg.c, libjpeg-turbo) against OpenCV and
exiftool, through the built tools:
  1. decode: io_dump's pixels == cv2.imread(path, cv2.IMREAD_UNCHANGED) (BGR turned to RGB)
     exactly, for JPEGs made here with cv2 and PIL: baseline 4:2:0 / 4:2:2 / 4:4:4,
     progressive, optimized, restart intervals, gray, CMYK (PIL, Adobe inverted), odd sizes
     (1x1, 17x9, 333x257), YCCK (PIL's CMYK with the Adobe transform set to 2), and the
     arithmetic-coded and jpegtran files of the fuzz seeds;
  2. `imgpu equalize x.jpg out.png` == cv2.equalizeHist on cv2's decode (gray), and the
     luminance mode == tests/common/opencv_ref.py's OpenCV pipeline on cv2's decode (colour);
  3. encode: `imgpu equalize in.png out.jpg [options]` is byte for byte cv2.imwrite of the
     same pixels (read from imgpu's PNG output) at the same quality / progressive / optimize,
     4:2:0 (OpenCV 4.6 has no sampling option): default quality 92, 75, 100, 10,
     progressive, optimized, both, gray; 4:4:4, 4:2:2 and 4:2:0 byte for byte PIL's
     `subsampling=` files (PIL drives the same libjpeg); alpha flattened onto white /
     --background; 16-bit to 8 bits;
  4. metadata: ICC (one chunk and a 150 KB profile in 3 chunks), EXIF (Make, Model,
     DateTimeOriginal, GPS) and XMP survive `imgpu equalize` (read by exiftool and by this
     script's own APP walker), `--strip` drops them, `imgpu info` shows them;
  5. orientation 1..8: the PNG output == cv2.imread(path, IMREAD_COLOR) (which applies the
     EXIF orientation); a 400x200 Orientation=6 JPEG comes out 200x400 with Orientation=1,
     `--no-auto-orient` keeps the pixels and the tag;
  6. truncated / corrupt files: `imgpu: cannot read 'FILE': REASON`, exit 1, no output, an
     existing output untouched.
Oracles: cv2, PIL, exiftool and the bytes built here; never imgpu's own decoder.

usage: io_jpeg_cv2.py IMGPU IO_DUMP TMPDIR   (exit 77: no cv2/numpy)
"""
import io
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
sys.dont_write_bytecode = True
import cli_common as cc  # noqa: E402
try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)
from PIL import Image  # noqa: E402  (python3-pil: README's install line; missing is a failure)
import exif_blob  # noqa: E402
import opencv_ref  # noqa: E402

T = cc.Checker("io_jpeg_cv2")
check = T.check  # counts, prints "FAIL: ..." and returns cond (cli_common.Checker)


def run(argv):
    return cc.run_argv(argv, timeout=120)


def picture(w, h, c, seed):
    """Photo-like: smooth gradients, an edge, and noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    planes = [(x * 200 // max(w - 1, 1) + k * 30 + y * 100 // max(h - 1, 1)) for k in range(c)]
    img = np.stack(planes, axis=-1).astype(np.int32)
    img[(x + y) % 97 < 20] += 60
    img += rng.integers(-12, 13, img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    return img[:, :, 0] if c == 1 else img


def pil_jpeg(arr_rgb_or_gray, mode=None, **kw):
    b = io.BytesIO()
    im = Image.fromarray(arr_rgb_or_gray)
    (im.convert(mode) if mode else im).save(b, "JPEG", **kw)
    return b.getvalue()


def cv2_jpeg(arr_bgr_or_gray, *params):
    ok, buf = cv2.imencode(".jpg", arr_bgr_or_gray, list(params))
    assert ok
    return buf.tobytes()


def cv2_rgb(path, flags=cv2.IMREAD_UNCHANGED):
    im = cv2.imread(path, flags)
    if im is not None and im.ndim == 3:
        im = cv2.cvtColor(im, cv2.COLOR_BGR2RGB)
    return im


def png_rgb(path):
    return cv2_rgb(path)


def dump(io_dump, path):
    rc, out, err = run([io_dump, path])
    if rc:
        return None, err
    head, rest = out.split(b"\n", 1)
    w, h, c = map(int, head.split())
    a = np.frombuffer(rest, np.uint8).reshape(h, w, c)
    return (a[:, :, 0] if c == 1 else a), ""


def segments(jpeg):
    """[(marker, payload)] of the segments before the first SOS, walked here."""
    out, pos = [], 2
    while pos + 4 <= len(jpeg) and jpeg[pos] == 0xFF:
        m = jpeg[pos + 1]
        n = struct.unpack(">H", jpeg[pos + 2:pos + 4])[0]
        out.append((m, jpeg[pos + 4:pos + 2 + n]))
        if m == 0xDA:
            break
        pos += 2 + n
    return out


def sof_sampling(jpeg):
    for m, p in segments(jpeg):
        if 0xC0 <= m <= 0xC2:
            n = p[5]
            factors = [(p[7 + 3 * i] >> 4, p[7 + 3 * i] & 15) for i in range(n)]
            return p[0], struct.unpack(">HH", p[1:5]), factors
    return None


def as_ycck(cmyk_jpeg):
    """A YCCK JPEG: PIL's CMYK file with its Adobe marker's transform set to 2, so decoders
    take the four planes as Y, Cb, Cr, K (libjpeg converts YCCK to CMYK, then OpenCV's formula
    applies). No encoder at hand writes YCCK; the planes' content does not matter here."""
    pos = cmyk_jpeg.index(b"Adobe") - 4  # APP14: Adobe, version, flags0, flags1, transform
    assert cmyk_jpeg[pos:pos + 2] == b"\xff\xee" and cmyk_jpeg[pos + 4 + 11] == 0
    return cmyk_jpeg[:pos + 4 + 11] + b"\x02" + cmyk_jpeg[pos + 4 + 12:]


def insert_after_soi(jpeg, *segs):
    segs = b"".join(struct.pack(">BBH", 0xFF, m, len(p) + 2) + p for m, p in segs)
    return jpeg[:2] + segs + jpeg[2:]


def icc_profile(desc, pad=0):
    """An ICC v2 profile with a 'desc' tag (textDescriptionType), padded to grow it."""
    text = desc.encode() + b"\0"
    tag = b"desc" + b"\0" * 4 + struct.pack(">I", len(text)) + text + b"\0" * 12
    tag += b"\0" * ((4 - len(tag) % 4) % 4)
    size = 128 + 4 + 12 + len(tag) + pad
    head = struct.pack(">I", size) + b"none" + bytes([2, 0x10, 0, 0]) + b"mntrRGB XYZ "
    head += b"\0" * (128 - len(head))
    return (head + struct.pack(">I", 1) + b"desc" + struct.pack(">II", 144, len(tag)) + tag +
            bytes(i % 251 for i in range(pad)))


def icc_segments(icc, chunk=65519):
    parts = [icc[i:i + chunk] for i in range(0, len(icc), chunk)]
    return [(0xE2, b"ICC_PROFILE\0" + bytes([i + 1, len(parts)]) + p) for i, p in enumerate(parts)]


def icc_of(jpeg):
    """The ICC profile of a JPEG, put together here from its APP2 chunks (sequence order)."""
    ch = {p[12]: p[14:] for m, p in segments(jpeg) if m == 0xE2 and p[:12] == b"ICC_PROFILE\0"}
    return b"".join(ch[k] for k in sorted(ch))


XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
       b'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4"/></rdf:RDF></x:xmpmeta>'
       b'<?xpacket end="w"?>')
XMP_ID = b"http://ns.adobe.com/xap/1.0/\0"


def exiftool(path, *tags):
    p = subprocess.run(["exiftool", "-s", "-s", "-s", "-n"] + [f"-{t}" for t in tags] + [path],
                       capture_output=True, timeout=60)
    return p.stdout.decode(errors="replace").splitlines()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_decode(io_dump, tmp):
    files = {}
    for (w, h) in ((1, 1), (17, 9), (333, 257), (64, 48)):
        rgb = picture(w, h, 3, w * 7 + h)
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        gray = picture(w, h, 1, w + h)
        tag = f"{w}x{h}"
        files[f"cv2_420_{tag}"] = cv2_jpeg(bgr)
        files[f"cv2_prog_{tag}"] = cv2_jpeg(bgr, cv2.IMWRITE_JPEG_PROGRESSIVE, 1)
        files[f"cv2_opt_{tag}"] = cv2_jpeg(bgr, cv2.IMWRITE_JPEG_OPTIMIZE, 1,
                                           cv2.IMWRITE_JPEG_QUALITY, 60)
        files[f"cv2_rst_{tag}"] = cv2_jpeg(bgr, cv2.IMWRITE_JPEG_RST_INTERVAL, 2)
        files[f"cv2_gray_{tag}"] = cv2_jpeg(gray, cv2.IMWRITE_JPEG_QUALITY, 85)
        files[f"pil_444_{tag}"] = pil_jpeg(rgb, quality=90, subsampling=0)
        files[f"pil_422_{tag}"] = pil_jpeg(rgb, quality=90, subsampling=1)
        files[f"pil_420_prog_{tag}"] = pil_jpeg(rgb, quality=70, subsampling=2, progressive=True)
        files[f"pil_cmyk_{tag}"] = pil_jpeg(rgb, mode="CMYK", quality=88)
        files[f"pil_gray_prog_{tag}"] = pil_jpeg(gray, progressive=True)
        files[f"pil_ycck_{tag}"] = as_ycck(files[f"pil_cmyk_{tag}"])
    for name in ("jpeg_arithmetic.jpg", "jpeg_jpegtran_prog_rst.jpg", "jpeg_restart_prog.jpg",
                 "jpeg_restart1.jpg", "jpeg_progressive_gray.jpg"):
        files["seed_" + name[:-4]] = read(os.path.join(HERE, "..", "fuzz", "seeds", "decode", name))
    n_cmyk = 0
    for name, data in sorted(files.items()):
        path = os.path.join(tmp, name + ".jpg")
        write(path, data)
        ref = cv2_rgb(path)
        got, err = dump(io_dump, path)
        check(ref is not None, f"decode {name}: cv2 reads it")
        if ref is None:
            continue
        check(got is not None and got.shape == ref.shape and (got == ref).all(),
              f"decode {name}: imgpu == cv2.imread exactly",
              err if got is None else f"shapes {got.shape} {ref.shape}" if got.shape != ref.shape
              else f"max diff {np.abs(got.astype(int) - ref).max()}")
        n_cmyk += "cmyk" in name
    adobe = [p for m, p in segments(files["pil_cmyk_17x9"]) if m == 0xEE and p[:5] == b"Adobe"]
    check(n_cmyk == 4 and sum("ycck" in k for k in files) == 4 and adobe,
          "the CMYK files carry an Adobe marker (inverted CMYK, as Photoshop writes)")
    print(f"decode: {len(files)} files compared with cv2.imread")
    return files


def test_equalize(imgpu, tmp, files):
    for name in ("cv2_gray_333x257", "pil_gray_prog_64x48", "cv2_420_333x257", "pil_cmyk_333x257",
                 "pil_444_64x48"):
        path = os.path.join(tmp, name + ".jpg")
        out = os.path.join(tmp, name + "_eq.png")
        rc, _, err = run([imgpu, "equalize", path, out, "--device", "cpu"])
        check(rc == 0, f"equalize {name}", err)
        if rc:
            continue
        src = cv2_rgb(path)
        want = cv2.equalizeHist(src) if src.ndim == 2 else opencv_ref.equalize(src, "luminance")
        got = png_rgb(out)
        check(got.shape == want.shape and (got == want).all(),
              f"equalize {name} == OpenCV on cv2's decode",
              f"max diff {np.abs(got.astype(int) - want).max()}" if got.shape == want.shape else "")


def test_encode(imgpu, tmp):
    rgb = picture(333, 257, 3, 5)
    src = os.path.join(tmp, "enc_src.png")
    cv2.imwrite(src, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    gsrc = os.path.join(tmp, "enc_gray.png")
    cv2.imwrite(gsrc, picture(333, 257, 1, 6))
    cases = [("default", [], [cv2.IMWRITE_JPEG_QUALITY, 92]),
             ("q75", ["--quality", "75"], [cv2.IMWRITE_JPEG_QUALITY, 75]),
             ("q100", ["--quality", "100"], [cv2.IMWRITE_JPEG_QUALITY, 100]),
             ("q10", ["--quality", "10"], [cv2.IMWRITE_JPEG_QUALITY, 10]),
             ("progressive", ["--progressive"], [cv2.IMWRITE_JPEG_QUALITY, 92,
                                                  cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
             ("optimize", ["--optimize", "--quality", "80"], [cv2.IMWRITE_JPEG_QUALITY, 80,
                                                                cv2.IMWRITE_JPEG_OPTIMIZE, 1]),
             ("prog_opt", ["--progressive", "--optimize"],
              [cv2.IMWRITE_JPEG_QUALITY, 92, cv2.IMWRITE_JPEG_PROGRESSIVE, 1,
               cv2.IMWRITE_JPEG_OPTIMIZE, 1]),
             ("420", ["--subsampling", "420"], [cv2.IMWRITE_JPEG_QUALITY, 92])]
    for s, label in ((src, "rgb"), (gsrc, "gray")):
        for name, opts, params in cases:
            out_png = os.path.join(tmp, f"enc_{label}_{name}.png")
            out_jpg = os.path.join(tmp, f"enc_{label}_{name}.jpg")
            rc1, _, e1 = run([imgpu, "equalize", s, out_png, "--device", "cpu"])
            rc2, _, e2 = run([imgpu, "equalize", s, out_jpg, "--device", "cpu"] + opts)
            check(rc1 == 0 and rc2 == 0, f"encode {label} {name}: imgpu ran", e1 + e2)
            if rc1 or rc2:
                continue
            pix = cv2.imread(out_png, cv2.IMREAD_UNCHANGED)
            want = cv2_jpeg(pix, *params)
            got = read(out_jpg)
            check(got == want, f"encode {label} {name}: byte for byte cv2.imwrite",
                  f"{len(got)} vs {len(want)} bytes")
            if label == "gray":
                check(sof_sampling(got)[2] == [(1, 1)], f"encode gray {name}: 1 component")
    # 4:4:4 and 4:2:2: Debian's OpenCV 4.6 has no sampling option, PIL (libjpeg too) has; an
    # OpenCV that has it (4.7 on, e.g. the GPU machine's) is compared with as well
    cv_sampling = getattr(cv2, "IMWRITE_JPEG_SAMPLING_FACTOR", None)
    pix = cv2_rgb(os.path.join(tmp, "enc_rgb_default.png"))
    for sub, pil_sub, factors in (("444", 0, (1, 1)), ("422", 1, (2, 1)), ("420", 2, (2, 2))):
        out = os.path.join(tmp, f"enc_sub{sub}.jpg")
        rc, _, err = run([imgpu, "equalize", src, out, "--device", "cpu", "--subsampling", sub,
                          "--quality", "90"])
        check(rc == 0, f"--subsampling {sub}", err)
        if rc:
            continue
        got, want = read(out), pil_jpeg(pix, quality=90, subsampling=pil_sub)
        sg, sw = sof_sampling(got), sof_sampling(want)
        check(sg == sw and sg[2][0] == factors and sg[2][1:] == [(1, 1), (1, 1)],
              f"--subsampling {sub}: PIL's sampling factors {factors}", f"{sg} vs {sw}")
        write(os.path.join(tmp, f"pil_sub{sub}.jpg"), want)
        a = cv2_rgb(out)
        b = cv2_rgb(os.path.join(tmp, f"pil_sub{sub}.jpg"))
        # PIL writes the same JFIF header and tables through the same libjpeg
        check(got == want, f"--subsampling {sub}: byte for byte PIL's file",
              f"{len(got)} vs {len(want)} bytes; pixels max diff "
              f"{np.abs(a.astype(int) - b).max() if a.shape == b.shape else 'shape'}")
        if cv_sampling is not None:
            flag = getattr(cv2, f"IMWRITE_JPEG_SAMPLING_FACTOR_{sub}")
            ok, enc = cv2.imencode(".jpg", cv2.cvtColor(pix, cv2.COLOR_RGB2BGR),
                                   [cv2.IMWRITE_JPEG_QUALITY, 90, cv_sampling, flag])
            check(ok and got == enc.tobytes(), f"--subsampling {sub}: byte for byte cv2's file",
                  f"{len(got)} vs {len(enc) if ok else 0} bytes")
    # alpha: flattened onto white, or --flatten (rotate's --background is its fill only), then
    # encoded as cv2 encodes that
    rgba = np.dstack([rgb, picture(333, 257, 1, 9)])
    asrc = os.path.join(tmp, "enc_rgba.png")
    cv2.imwrite(asrc, cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGRA))
    for bg, color in ((None, (255, 255, 255)), ("#3080c0", (0x30, 0x80, 0xC0))):
        out = os.path.join(tmp, "enc_rgba.jpg")
        rc, _, err = run([imgpu, "rotate", asrc, out, "--angle", "0", "--device", "cpu"] +
                         (["--flatten", bg] if bg else []))
        check(rc == 0 and "flattening" in err, f"RGBA to JPEG ({bg or 'white'}): notice", err)
        a = rgba[:, :, 3:4].astype(np.int64)
        flat = (rgba[:, :, :3] * a + np.array(color, np.int64) * (255 - a) + 127) // 255
        want = cv2_jpeg(cv2.cvtColor(flat.astype(np.uint8), cv2.COLOR_RGB2BGR),
                        cv2.IMWRITE_JPEG_QUALITY, 92)
        check(rc == 0 and read(out) == want,
              f"RGBA to JPEG ({bg or 'white'}): cv2.imwrite of the flattened pixels")
    ga = np.dstack([picture(64, 48, 1, 3), picture(64, 48, 1, 4)])
    gsrc2 = os.path.join(tmp, "enc_ga.png")
    Image.fromarray(ga, "LA").save(gsrc2)
    out = os.path.join(tmp, "enc_ga.jpg")
    rc, _, err = run([imgpu, "rotate", gsrc2, out, "--angle", "0", "--device", "cpu"])
    a = ga[:, :, 1].astype(np.int64)
    flat = ((ga[:, :, 0] * a + 255 * (255 - a) + 127) // 255).astype(np.uint8)
    check(rc == 0 and read(out) == cv2_jpeg(flat, cv2.IMWRITE_JPEG_QUALITY, 92),
          "gray+alpha to JPEG: a 1-channel JPEG of the gray flattened onto white", err)
    # 16 bits: converted to 8 (v * 255 / 65535, rounded) with a notice
    g16 = (np.arange(64 * 48, dtype=np.uint32).reshape(48, 64) * 21).astype(np.uint16)
    s16 = os.path.join(tmp, "enc16.png")
    cv2.imwrite(s16, g16)
    out = os.path.join(tmp, "enc16.jpg")
    rc, _, err = run([imgpu, "rotate", s16, out, "--angle", "0", "--device", "cpu"])
    g8 = ((g16.astype(np.uint64) * 255 + 32767) // 65535).astype(np.uint8)
    check(rc == 0 and "8 bits" in err and read(out) == cv2_jpeg(g8, cv2.IMWRITE_JPEG_QUALITY, 92),
          "16-bit to JPEG: cv2.imwrite of the 8-bit conversion", err)


def test_metadata(imgpu, tmp):
    have_exiftool = shutil.which("exiftool") is not None
    base = cv2_jpeg(cv2.cvtColor(picture(96, 64, 3, 11), cv2.COLOR_RGB2BGR))
    small_icc = icc_profile("Test RGB (imgpu)")
    big_icc = icc_profile("Big RGB (imgpu)", pad=150000)
    ex = exif_blob.camera(1, width=96, height=64)
    for label, icc in (("small", small_icc), ("big", big_icc)):
        src = os.path.join(tmp, f"meta_{label}.jpg")
        write(src, insert_after_soi(base, (0xE1, b"Exif\0\0" + ex), (0xE1, XMP_ID + XMP),
                                    *icc_segments(icc)))
        out = os.path.join(tmp, f"meta_{label}_eq.jpg")
        rc, _, err = run([imgpu, "equalize", src, out, "--device", "cpu"])
        check(rc == 0, f"metadata {label}: equalize", err)
        if rc:
            continue
        o = read(out)
        segs = segments(o)
        check(icc_of(o) == icc, f"metadata {label}: the ICC profile travels byte for byte "
              f"({len(icc)} bytes, {len(icc_segments(icc))} chunks)")
        check(all(len(p) - 14 <= 65519 for m, p in segs if m == 0xE2),
              f"metadata {label}: ICC chunks of at most 65519 bytes")
        check([p for m, p in segs if m == 0xE1 and p[:6] == b"Exif\0\0"] == [b"Exif\0\0" + ex],
              f"metadata {label}: the EXIF block travels (Orientation 1 already)")
        check([p for m, p in segs if m == 0xE1 and p.startswith(XMP_ID)] == [XMP_ID + XMP],
              f"metadata {label}: the XMP packet travels")
        if have_exiftool:
            t = exiftool(out, "Make", "Model", "DateTimeOriginal", "GPSLatitudeRef",
                         "ProfileDescription", "Rating", "Warning")
            check(t[:6] == ["Canon", "Canon EOS 5D Mark IV", "2020:01:02 03:04:05", "N",
                            "Test RGB (imgpu)" if label == "small" else "Big RGB (imgpu)", "4"]
                  and len(t) == 6, f"metadata {label}: exiftool reads camera, date, GPS, ICC, "
                  "XMP and no warning", t)
            icc_x = subprocess.run(["exiftool", "-b", "-ICC_Profile", out], capture_output=True,
                                   timeout=60).stdout
            check(icc_x == icc, f"metadata {label}: exiftool's ICC profile is ours")
        rc, info, err = run([imgpu, "info", src])
        info = info.decode(errors="replace")
        check(rc == 0 and ("Test RGB (imgpu)" if label == "small" else "Big RGB (imgpu)") in info
              and "Canon EOS 5D Mark IV" in info and "2020:01:02 03:04:05" in info,
              f"metadata {label}: imgpu info shows ICC, camera, date", info + err)
        out2 = os.path.join(tmp, f"meta_{label}_strip.jpg")
        rc, _, err = run([imgpu, "equalize", src, out2, "--device", "cpu", "--strip"])
        s2 = segments(read(out2)) if rc == 0 else []
        check(rc == 0 and not [m for m, p in s2 if m in (0xE1, 0xE2)],
              f"metadata {label}: --strip writes no APP1/APP2", err)
    # damaged ICC chunks: skipped, never an error
    src = os.path.join(tmp, "meta_bad_icc.jpg")
    segs = icc_segments(big_icc)
    write(src, insert_after_soi(base, segs[0], segs[2]))
    out = os.path.join(tmp, "meta_bad_icc_eq.jpg")
    rc, _, err = run([imgpu, "equalize", src, out, "--device", "cpu"])
    check(rc == 0 and not icc_of(read(out)), "a missing ICC chunk: no profile, no error", err)


def test_orientation(imgpu, tmp):
    rgb = picture(400, 200, 3, 21)
    base = cv2_jpeg(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), cv2.IMWRITE_JPEG_QUALITY, 95)
    for o in range(1, 9):
        src = os.path.join(tmp, f"orient{o}.jpg")
        write(src, insert_after_soi(base, (0xE1, b"Exif\0\0" + exif_blob.camera(o, width=400,
                                                                               height=200))))
        out = os.path.join(tmp, f"orient{o}.png")
        rc, _, err = run([imgpu, "rotate", src, out, "--angle", "0", "--device", "cpu"])
        want = cv2_rgb(src, cv2.IMREAD_COLOR)   # IMREAD_COLOR applies the orientation
        got = png_rgb(out) if rc == 0 else None
        check(got is not None and got.shape == want.shape and (got == want).all(),
              f"orientation {o}: imgpu's upright pixels == cv2.imread(IMREAD_COLOR)", err)
    src = os.path.join(tmp, "orient6.jpg")
    out = os.path.join(tmp, "orient6_out.jpg")
    rc, _, err = run([imgpu, "equalize", src, out, "--device", "cpu"])
    ok = rc == 0
    if ok:
        s = sof_sampling(read(out))
        check(s[1] == (400, 200), "Orientation=6 400x200: output is 200 wide, 400 high",
              s[1])   # SOF holds (height, width)
    check(ok, "Orientation=6: equalize", err)
    if ok and shutil.which("exiftool"):
        t = exiftool(out, "Orientation", "ExifImageWidth", "ExifImageHeight")
        check(t == ["1", "200", "400"], "Orientation=6: the output's EXIF says 1, 200x400", t)
    out = os.path.join(tmp, "orient6_keep.jpg")
    rc, _, err = run([imgpu, "equalize", src, out, "--device", "cpu", "--no-auto-orient"])
    check(rc == 0 and sof_sampling(read(out))[1] == (200, 400),
          "--no-auto-orient: 400x200 stays", err)
    if rc == 0 and shutil.which("exiftool"):
        check(exiftool(out, "Orientation") == ["6"], "--no-auto-orient: the tag stays 6")


def test_bad(imgpu, tmp):
    good = cv2_jpeg(cv2.cvtColor(picture(96, 64, 3, 31), cv2.COLOR_RGB2BGR),
                    cv2.IMWRITE_JPEG_RST_INTERVAL, 1)
    sos = good.index(b"\xff\xda")
    rst = good.index(b"\xff\xd1", sos)
    early_eoi = bytearray(good)
    early_eoi[sos + 40:sos + 42] = b"\xff\xd9"
    wrong_rst = bytearray(good)
    wrong_rst[rst + 1] = 0xD5
    bad_dqt = bytearray(good)
    dqt = good.index(b"\xff\xdb")
    bad_dqt[dqt + 4] = 0x35          # table id 5, precision 3: refused by libjpeg
    cases = {
        "truncated_half": (good[:len(good) // 2], "truncated JPEG data"),
        "truncated_header": (good[:30], "truncated JPEG header"),
        "no_eoi": (good[:-2], "truncated JPEG data"),
        "early_eoi": (bytes(early_eoi), "corrupt JPEG data (premature end of data segment)"),
        "wrong_restart": (bytes(wrong_rst),
                          "corrupt JPEG data (found marker 0xd5 instead of RST1)"),
        "bad_dqt": (bytes(bad_dqt), "corrupt JPEG data ("),
    }
    for name, (data, reason) in cases.items():
        src = os.path.join(tmp, f"bad_{name}.jpg")
        write(src, data)
        out = os.path.join(tmp, f"bad_{name}_out.png")
        rc, so, err = run([imgpu, "equalize", src, out, "--device", "cpu"])
        check(rc == 1 and err.startswith(f"imgpu: cannot read '{src}': {reason}") and
              err.count("\n") == 1 and not so and not os.path.exists(out),
              f"bad input {name}: one message with the reason, exit 1, no output", f"rc={rc} {err}")
        existing = os.path.join(tmp, f"bad_{name}_existing.jpg")
        write(existing, b"keep me")
        rc, _, err = run([imgpu, "equalize", src, existing, "--device", "cpu"])
        check(rc == 1 and read(existing) == b"keep me", f"bad input {name}: existing output kept")
    print(f"bad input: {len(cases)} files")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    imgpu, io_dump, tmp = sys.argv[1:4]
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    files = test_decode(io_dump, tmp)
    test_equalize(imgpu, tmp, files)
    test_encode(imgpu, tmp)
    test_metadata(imgpu, tmp)
    test_orientation(imgpu, tmp)
    test_bad(imgpu, tmp)
    sys.exit(T.end())


if __name__ == "__main__":
    main()

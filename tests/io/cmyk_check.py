"""cmyk_check.py — CMYK and YCCK JPEGs (issue 30): converted to sRGB through their ICC profile.

Inputs are made here: make_cmyk (tests/io/make_cmyk.c, lcms2) writes a CMYK output profile of
a made-up press and CMYK, YCCK, marker-less CMYK and profile-less CMYK JPEGs of a test picture
and of assets/coffee.png converted through it; ImageMagick, where installed, writes one more
the way the issue reproduced it (`convert coffee.png -profile srgb.icc -profile cmyk.icc`).

Checked, for a build with lcms2 (`imgpu --version` names it):
  1. the decoded pixels (io_dump) are within a mean of 3 levels of `vips icc_transform IN OUT
     srgb` where libvips' tools are installed, and of PIL's ImageCms (relative colorimetric,
     the file's profile to sRGB) always: the references are outside imgpu;
  2. the outputs carry sRGB's profile (an RGB profile that PIL's ImageCms builds a transform
     from), in PNG, JPEG and TIFF, and none with --strip; no notice is printed;
  3. a CMYK JPEG without a profile keeps today's conversion (OpenCV's formula on PIL's
     samples, computed here) with a notice saying so, and its output has no profile;
  4. `imgpu info` and `--json` report the colour space (CMYK, YCCK; RGB and Gray for others)
     and the file's own profile;
  5. a damaged CMYK profile falls back to the formula with a notice, never failing the load.
A build without lcms2 gets the formula with a notice for every CMYK file (checked instead of
1 and 2). Skipped (77) without Debian's python3 + numpy + PIL with ImageCms.
usage: cmyk_check.py IMGPU IO_DUMP MAKE_CMYK TMP ASSETS
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import numpy as np
    from PIL import Image, ImageCms
except Exception as e:  # noqa: BLE001
    print(f"skip: needs numpy and PIL with ImageCms ({e})")
    sys.exit(77)

K = cc.Checker("cmyk_check")
check = K.check


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, timeout=120, **kw)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def dump(io_dump, path):
    """imgpu's decode of path as an H x W x C array, and its stderr."""
    rc, out, err = run([io_dump, path])
    if rc != 0:
        return None, err
    head, _, raw = out.partition(b"\n")
    w, h, c = (int(v) for v in head.split()[:3])
    return np.frombuffer(raw, np.uint8).reshape(h, w, c), err


def pil_reference(path):
    """PIL's ImageCms: the file's CMYK samples through its embedded profile to sRGB, relative
    colorimetric (what vips icc_transform does by default)."""
    im = Image.open(path)
    src = ImageCms.ImageCmsProfile(io.BytesIO(im.info["icc_profile"]))
    out = ImageCms.profileToProfile(im, src, ImageCms.createProfile("sRGB"),
                                    renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC,
                                    outputMode="RGB")
    return np.asarray(out)


def vips_reference(path, tmp):
    vips = shutil.which("vips")
    if not vips:
        return None
    out = os.path.join(tmp, os.path.basename(path) + ".vips.png")
    rc, _, err = run([vips, "icc_transform", path, out, "srgb"])
    if not check(rc == 0, f"vips icc_transform {os.path.basename(path)}", err):
        return None
    return np.asarray(Image.open(out).convert("RGB"))


def formula(path):
    """OpenCV's CMYK->RGB (icvCvt_CMYK2BGR_8u_C4C3R) on the samples as stored (255 - ink):
    each colour k - (255 - v) * k >> 8; PIL hands the ink, so v = 255 - ink."""
    ink = np.asarray(Image.open(path)).astype(np.int32)
    v = 255 - ink
    k = v[..., 3:4]
    return (k - ((255 - v[..., :3]) * k >> 8)).astype(np.uint8)


def icc_of(path):
    return Image.open(path).info.get("icc_profile")


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    imgpu, io_dump, make_cmyk, tmp_root, assets = sys.argv[1:6]
    os.makedirs(tmp_root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="cmyk.", dir=tmp_root)
    lcms = "lcms2" in run([imgpu, "--version"])[1].decode()
    print(f"imgpu built {'with' if lcms else 'without'} lcms2; vips: "
          f"{shutil.which('vips') or 'not installed'}")

    # ---- inputs ----
    synth, photo = os.path.join(tmp, "synth"), os.path.join(tmp, "photo")
    os.makedirs(synth)
    os.makedirs(photo)
    rc, _, err = run([make_cmyk, synth])
    if not check(rc == 0, "make_cmyk (synthetic picture)", err):
        return 1
    coffee = np.asarray(Image.open(os.path.join(assets, "coffee.png")).convert("RGB"))
    raw = os.path.join(tmp, "coffee.rgb")
    with open(raw, "wb") as f:
        f.write(coffee.tobytes())
    rc, _, err = run([make_cmyk, photo, raw, str(coffee.shape[1]), str(coffee.shape[0])])
    if not check(rc == 0, "make_cmyk (coffee)", err):
        return 1
    managed = [os.path.join(d, n) for d in (synth, photo)
               for n in ("cmyk.jpg", "ycck.jpg", "plain_cmyk.jpg")]
    convert = shutil.which("convert-im6.q16")
    if convert:   # the reproduction
        im_jpg = os.path.join(photo, "cmyk_im.jpg")
        rc, _, err = run([convert, os.path.join(assets, "coffee.png"), "-profile",
                          os.path.join(photo, "srgb.icc"), "-profile",
                          os.path.join(photo, "cmyk.icc"), im_jpg])
        if check(rc == 0 and Image.open(im_jpg).mode == "CMYK", "ImageMagick writes a CMYK JPEG",
                 err):
            managed.append(im_jpg)
    else:
        print("note: no ImageMagick (convert-im6.q16): its CMYK JPEG is not checked")

    # ---- 1. pixels against the references ----
    for path in managed:
        name = os.path.relpath(path, tmp)
        got, err = dump(io_dump, path)
        if not check(got is not None and got.shape[2] == 3, f"{name}: loads as RGB", err):
            continue
        if not lcms:
            check("built without lcms2" in err and np.array_equal(got, formula(path)),
                  f"{name}: without lcms2, the formula and a notice saying why", err)
            continue
        check(err == "", f"{name}: no notice when the profile is used", err)
        ref = pil_reference(path)
        d = np.abs(got.astype(int) - ref.astype(int))
        print(f"{name}: vs PIL ImageCms mean {d.mean():.3f} max {d.max()}")
        check(d.mean() <= 3, f"{name}: within a mean of 3 levels of PIL's ImageCms",
              f"mean {d.mean():.3f}")
        vref = vips_reference(path, tmp)
        if vref is not None:
            d = np.abs(got.astype(int) - vref.astype(int))
            print(f"{name}: vs vips icc_transform mean {d.mean():.3f} max {d.max()}")
            check(d.mean() <= 3, f"{name}: within a mean of 3 levels of vips icc_transform",
                  f"mean {d.mean():.3f}")
        # the old formula is far from it: the test can tell the two apart
        d = np.abs(formula(path).astype(int) - ref.astype(int))
        check(d.mean() > 10, f"{name}: the formula would be far from the reference",
              f"mean {d.mean():.3f}")

    # ---- 2. the profile written with the pixels ----
    src = os.path.join(synth, "cmyk.jpg")
    for ext in ("png", "jpg", "tif"):
        out = os.path.join(tmp, "out." + ext)
        rc, _, err = run([imgpu, "rotate", src, out, "--angle", "90"])
        if not check(rc == 0, f"rotate cmyk.jpg out.{ext}", err):
            continue
        icc = icc_of(out)
        if lcms:
            ok = icc is not None
            if ok:
                p = ImageCms.ImageCmsProfile(io.BytesIO(icc))
                ok = p.profile.xcolor_space.strip() == "RGB"
                try:   # what PIL could not do with the CMYK profile on RGB pixels
                    ImageCms.buildTransform(p, ImageCms.createProfile("sRGB"), "RGB", "RGB")
                except Exception as e:  # noqa: BLE001
                    ok = False
                    err += f" buildTransform: {e}"
            check(ok and err == "", f"out.{ext}: carries an RGB (sRGB) profile, no notice",
                  err)
        else:
            check(icc is None, f"out.{ext}: without lcms2, no profile (not the CMYK one)")
        out2 = os.path.join(tmp, "strip." + ext)
        rc, _, err = run([imgpu, "rotate", src, out2, "--angle", "90", "--strip"])
        check(rc == 0 and icc_of(out2) is None, f"--strip out.{ext}: no profile", err)

    # ---- 3. no profile: today's formula, with a notice ----
    noicc = os.path.join(synth, "cmyk_noicc.jpg")
    got, err = dump(io_dump, noicc)
    check(got is not None and np.array_equal(got, formula(noicc)),
          "cmyk_noicc.jpg: OpenCV's formula, as before")
    check("CMYK JPEG without an ICC profile" in err and "no colour management" in err,
          "cmyk_noicc.jpg: a notice says it is not colour-managed", err)
    out = os.path.join(tmp, "noicc.png")
    rc, _, err = run([imgpu, "rotate", noicc, out, "--angle", "0"])
    check(rc == 0 and icc_of(out) is None, "cmyk_noicc.jpg -> PNG: no profile", err)
    rc, _, err = run([imgpu, "rotate", noicc, out, "--angle", "0", "--quiet"])
    check(rc == 0 and err == "", "--quiet silences the notice", err)

    # ---- 4. info ----
    gray = os.path.join(tmp, "gray.jpg")
    Image.fromarray(coffee[..., 0]).save(gray, quality=90)
    ycc = os.path.join(tmp, "ycc.jpg")
    Image.fromarray(coffee).save(ycc, quality=90)
    cases = [(src, "CMYK", lcms), (os.path.join(synth, "ycck.jpg"), "YCCK", lcms),
             (noicc, "CMYK", False), (ycc, "RGB", False), (gray, "Gray", False),
             (os.path.join(assets, "coffee.png"), "RGB", False)]
    for path, space, conv in cases:
        name = os.path.relpath(path, tmp) if path.startswith(tmp) else os.path.basename(path)
        rc, out, err = run([imgpu, "info", "--json", "--quiet", path])
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        check(rc == 0 and j.get("colour_space") == space and j.get("colour_converted") == conv,
              f"info --json {name}: colour_space {space}, colour_converted {conv}", out)
        rc, out, err = run([imgpu, "info", "--quiet", path])
        line = [ln for ln in out.decode().splitlines() if ln.startswith("colour:")]
        check(rc == 0 and len(line) == 1 and line[0].split()[1] == space,
              f"info {name}: 'colour: {space}'", out)
        if space in ("CMYK", "YCCK") and conv:
            check("converted to sRGB through its ICC profile" in line[0],
                  f"info {name}: says it was converted through the profile", line)
            check(j.get("icc", {}) and j["icc"].get("description") == "imgpu test CMYK",
                  f"info --json {name}: icc describes the file's own profile", j.get("icc"))

    # ---- 5. a damaged profile: the formula, a notice, no failure ----
    data = bytearray(open(src, "rb").read())
    at = data.find(b"ICC_PROFILE\0")
    prof = at + 14   # after the id, the sequence number and the count
    data[prof + 36:prof + 40] = b"XXXX"   # 'acsp', the signature every profile has
    bad = os.path.join(tmp, "bad_icc.jpg")
    with open(bad, "wb") as f:
        f.write(data)
    got, err = dump(io_dump, bad)
    check(got is not None and np.array_equal(got, formula(bad)),
          "damaged profile: loads with the formula")
    check("cannot be used" in err or "built without lcms2" in err,
          "damaged profile: a notice says the profile cannot be used", err)

    if K.failures:
        print(f"cmyk_check: {K.failures} failed; files kept in {tmp}")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("cmyk_check: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""tiff_pages_check.py — multi-page TIFFs (issue 30): page 0 alone is never used silently, and
`--pages all` processes every page into a multi-page TIFF, as ImageMagick does.

  1. loading page 0 of a multi-page TIFF prints a notice naming the page count (once; --quiet
     silences it); a single-page TIFF, --page N and `info` (which lists the pages) print none;
  2. `rotate --angle 90 --pages all` of a 3-page TIFF (RGB, gray, RGBA of different sizes, made
     by PIL) writes a 3-page TIFF whose pages, read by PIL, are numpy's rot90 of the input's
     pages (quarter turns are exact), each marked a page (PageNumber N of 3); `equalize --pages
     all` gives on page N what `equalize --page N` gives alone; 16-bit pages stay 16-bit;
     standard input is read once; a one-image input gives a one-page TIFF;
  3. usage errors (exit 2, nothing written): an output that cannot hold pages (.png), --pages
     with --page, --pages with another value, --pages on `info`;
  4. a page that cannot be read fails the run (exit 1) and leaves no output, an existing one
     untouched.
Skipped (77) without Debian's python3 + numpy + PIL.
usage: tiff_pages_check.py IMGPU TMP ASSETS
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import numpy as np
    from PIL import Image
except Exception as e:  # noqa: BLE001
    print(f"skip: needs numpy and PIL ({e})")
    sys.exit(77)

K = cc.Checker("tiff_pages_check")
check = K.check


def run(argv, stdin=None):
    p = subprocess.run(argv, capture_output=True, timeout=120, input=stdin)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def pages_of(path):
    """every page of a TIFF as PIL reads it: (array, mode, PageNumber tag or None)"""
    out = []
    with Image.open(path) as im:
        for i in range(getattr(im, "n_frames", 1)):
            im.seek(i)
            out.append((np.array(im), im.mode, im.tag_v2.get(297)))
    return out


def break_page(data, index):
    """data with the StripOffsets of IFD `index` (0-based) pointing past the end of the file"""
    data = bytearray(data)
    le = data[:2] == b"II"
    u16 = "<H" if le else ">H"
    u32 = "<I" if le else ">I"
    off = struct.unpack_from(u32, data, 4)[0]
    for _ in range(index):
        n = struct.unpack_from(u16, data, off)[0]
        off = struct.unpack_from(u32, data, off + 2 + 12 * n)[0]
    n = struct.unpack_from(u16, data, off)[0]
    for k in range(n):
        e = off + 2 + 12 * k
        tag, typ, count = struct.unpack_from(u16 + u16[1] + u32[1], data, e)
        if tag == 273:
            at = e + 8 if count * (4 if typ == 4 else 2) <= 4 else struct.unpack_from(u32, data, e + 8)[0]
            if typ == 4:
                struct.pack_into(u32, data, at, len(data) + 4096)
            else:
                struct.pack_into(u16, data, at, 0xFFF0)
            return bytes(data)
    raise ValueError("no StripOffsets")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    imgpu, tmp_root, assets = sys.argv[1:4]
    os.makedirs(tmp_root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tiff_pages.", dir=tmp_root)
    P = lambda n: os.path.join(tmp, n)  # noqa: E731

    rgb = Image.open(os.path.join(assets, "coffee.png")).convert("RGB")
    gray = Image.open(os.path.join(assets, "camera.png")).convert("L")
    rgba = Image.open(os.path.join(assets, "horse.png")).convert("RGBA")
    src = [np.array(rgb), np.array(gray), np.array(rgba)]
    multi = P("multi.tif")
    rgb.save(multi, save_all=True, append_images=[gray, rgba], compression="tiff_lzw")
    single = P("single.tif")
    rgb.save(single)

    # ---- 1. the notice ----
    rc, _, err = run([imgpu, "equalize", multi, P("e0.png")])
    want = (f"imgpu: '{multi}': TIFF of 3 pages: only page 0 is used (--page N picks another; "
            "the op commands take --pages all)\n")
    check(rc == 0 and err == want, "page 0 of a 3-page TIFF: the notice, once", err)
    rc, _, err = run([imgpu, "equalize", multi, P("e0.png"), "--quiet"])
    check(rc == 0 and err == "", "--quiet silences it", err)
    rc, _, err = run([imgpu, "equalize", multi, P("e1.png"), "--page", "1"])
    check(rc == 0 and err == "", "--page 1: no notice", err)
    rc, _, err = run([imgpu, "equalize", single, P("s.png")])
    check(rc == 0 and err == "", "a single-page TIFF: no notice", err)
    rc, out, err = run([imgpu, "info", multi])
    check(rc == 0 and err == "" and b"pages:       3" in out, "info: the pages listed, no notice",
          err)

    # ---- 2. --pages all ----
    out = P("rot.tif")
    rc, _, err = run([imgpu, "rotate", multi, out, "--angle", "90", "--pages", "all"])
    if check(rc == 0 and err == "", "rotate --pages all: runs without a notice", err):
        pages = pages_of(out)
        check(len(pages) == 3, "rotate --pages all: 3 pages", len(pages))
        for i, (a, mode, pn) in enumerate(pages[:3]):
            check(np.array_equal(a, np.rot90(src[i], 1)),
                  f"page {i}: numpy's rot90 of input page {i} ({mode})",
                  f"{a.shape} vs {np.rot90(src[i], 1).shape}")
            check(pn == (i, 3), f"page {i}: PageNumber {i} of 3", pn)
    out = P("eq.tif")
    rc, _, err = run([imgpu, "equalize", multi, out, "--pages", "all", "--compression", "lzw"])
    if check(rc == 0, "equalize --pages all", err):
        pages = pages_of(out)
        check(len(pages) == 3, "equalize --pages all: 3 pages", len(pages))
        for i in range(3):
            one = P(f"eq{i}.tif")
            rc, _, err = run([imgpu, "equalize", multi, one, "--page", str(i)])
            check(rc == 0 and i < len(pages) and np.array_equal(pages[i][0], pages_of(one)[0][0]),
                  f"equalize --pages all: page {i} is what --page {i} gives", err)
    # 16 bits stay 16 bits
    g16 = Image.open(os.path.join(assets, "camera16.png"))
    a16 = np.array(g16).astype(np.uint16)
    m16 = P("m16.tif")
    Image.fromarray(a16).save(m16, save_all=True, append_images=[Image.fromarray(a16[::2, ::2].copy())])
    out = P("rot16.tif")
    rc, _, err = run([imgpu, "rotate", m16, out, "--angle", "-90", "--pages", "all"])
    if check(rc == 0, "16-bit pages: rotate --pages all", err):
        pages = pages_of(out)
        check(len(pages) == 2 and np.array_equal(pages[0][0], np.rot90(a16, -1))
              and np.array_equal(pages[1][0], np.rot90(a16[::2, ::2], -1)),
              "16-bit pages: rot90 of each, 16 bits kept",
              [(p[1], p[0].dtype, p[0].shape) for p in pages])
    # standard input, read once
    out = P("stdin.tif")
    rc, _, err = run([imgpu, "rotate", "-", out, "--angle", "90", "--pages", "all"],
                     stdin=open(multi, "rb").read())
    check(rc == 0 and len(pages_of(out)) == 3, "--pages all from standard input: 3 pages", err)
    # a one-image input: a one-page TIFF
    out = P("one.tif")
    rc, _, err = run([imgpu, "rotate", os.path.join(assets, "coffee.png"), out, "--angle", "90",
                      "--pages", "all"])
    check(rc == 0 and len(pages_of(out)) == 1, "--pages all of a PNG: a one-page TIFF", err)

    # ---- 3. usage errors ----
    for args, what in (([multi, P("x.png"), "--pages", "all"], "cannot hold pages"),
                       ([multi, P("x.tif"), "--pages", "all", "--page", "1"], "contradict"),
                       ([multi, P("x.tif"), "--pages", "2"], "invalid --pages '2'")):
        rc, _, err = run([imgpu, "equalize"] + args)
        check(rc == 2 and what in err and not os.path.exists(args[1]),
              f"equalize {' '.join(args[2:])} -> {os.path.basename(args[1])}: usage error", err)
    rc, _, err = run([imgpu, "info", multi, "--pages", "all"])
    check(rc == 2 and "does not apply" in err, "info --pages all: usage error", err)

    # ---- 4. a page that cannot be read ----
    bad = P("bad.tif")
    with open(bad, "wb") as f:
        f.write(break_page(open(multi, "rb").read(), 2))
    out = P("bad_out.tif")
    rc, _, err = run([imgpu, "equalize", bad, out, "--pages", "all"])
    check(rc == 1 and "cannot read" in err and not os.path.exists(out),
          "a broken page 2: exit 1, no output", err)
    with open(out, "wb") as f:
        f.write(b"keep me")
    rc, _, err = run([imgpu, "equalize", bad, out, "--pages", "all"])
    check(rc == 1 and open(out, "rb").read() == b"keep me", "a broken page 2: the old output kept",
          err)

    if K.failures:
        print(f"tiff_pages_check: {K.failures} failed; files kept in {tmp}")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("tiff_pages_check: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

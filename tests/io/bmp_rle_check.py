"""bmp_rle_check.py — BMP's RLE8 and RLE4 (issue 30: imgpu refused both).

  1. files of every kind of code (runs, absolute runs with their padding, end of line, end of
     bitmap, delta), bottom-up and top-down, odd widths, RLE8 and RLE4, decode to the pixels of
     tests/common/bmp_rle.py's reference decoder (written from Microsoft's description, no
     imgpu code): skipped pixels are the palette's first colour;
  2. the same files, where PIL 9.4 reads them right (no delta, no odd RLE4 absolute run: its
     decoder misreads both), equal PIL's decode;
  3. ImageMagick's BMP of a gray image (RLE8) equals the gray pixels, where ImageMagick is
     installed;
  4. streams that leave the image (a run or absolute run past its row, a delta past the right
     edge or the last row, pixels after the last row), an index past the palette, a stream cut
     short and an RLE8 header with 4 bits are refused: exit 1, "cannot read", nothing written;
  5. a header far over --max-pixels is refused before any pixel memory, and a big image the
     stream skips with deltas loads in well under a second.
Skipped (77) without Debian's python3 + numpy + PIL.
usage: bmp_rle_check.py IMGPU IO_DUMP TMP ASSETS
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bmp_rle  # noqa: E402
import cli_common as cc  # noqa: E402

try:
    import numpy as np
    from PIL import Image
except Exception as e:  # noqa: BLE001
    print(f"skip: needs numpy and PIL ({e})")
    sys.exit(77)

K = cc.Checker("bmp_rle_check")
check = K.check


def run(argv):
    p = subprocess.run(argv, capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def dump(io_dump, path):
    rc, out, err = run([io_dump, path])
    if rc != 0:
        return None, err
    head, _, raw = out.partition(b"\n")
    w, h, c = (int(v) for v in head.split()[:3])
    return np.frombuffer(raw, np.uint8).reshape(h, w, c), err


def palette(n, seed):
    r = random.Random(seed)
    return [(r.randrange(256), r.randrange(256), r.randrange(256)) for _ in range(n)]


def expected(data, pal):
    w, h, rows = bmp_rle.decode(data)
    return np.array([[pal[v] for v in row] for row in rows], np.uint8).reshape(h, w, 3)


def picture(w, h, ncol, seed):
    """rows of indices with runs and noise, in drawing order"""
    r = random.Random(seed)
    rows = []
    for y in range(h):
        row = []
        while len(row) < w:
            if r.random() < 0.5:
                row += [r.randrange(ncol)] * r.randint(1, 12)
            else:
                row += [r.randrange(ncol) for _ in range(r.randint(1, 9))]
        rows.append(row[:w])
    return rows


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    imgpu, io_dump, tmp_root, assets = sys.argv[1:5]
    os.makedirs(tmp_root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="bmp_rle.", dir=tmp_root)
    E = bmp_rle

    # ---- 1 and 2: natural encodes, hand-made streams ----
    cases = []   # (name, bytes, palette, pil_reads_it)
    for rle4 in (False, True):
        ncol = 16 if rle4 else 256
        kind = "rle4" if rle4 else "rle8"
        for (w, h) in ((1, 1), (7, 5), (33, 17), (300, 4)):
            for top_down in (False, True):
                for even in (False, True):
                    pal = palette(ncol, w * h)
                    rows = picture(w, h, ncol, w + 7 * h + rle4)
                    stream = E.encode(rows, rle4, even_absolute=even)
                    name = f"{kind}_{w}x{h}{'_td' if top_down else ''}{'_even' if even else ''}"
                    cases.append((name, E.bmp(w, h, rle4, stream, pal, top_down), pal,
                                  even or not rle4))
        run_ = E.run4 if rle4 else E.run
        pal = palette(ncol, 99)
        # every escape: delta right and on, an early end of line, an odd absolute run (its pad
        # byte), a delta to the end of a row, an early end of bitmap leaving lines undrawn
        s = (run_(3, 5) + E.delta(2, 1) + run_(2, 7) + E.EOL + E.absolute([1, 2, 3], rle4)
             + E.delta(5, 0) + E.EOL + E.absolute([9, 8, 7, 6, 5], rle4) + E.EOL + E.EOB)
        cases.append((f"{kind}_escapes", E.bmp(8, 6, rle4, s, pal), pal, False))
        cases.append((f"{kind}_escapes_td", E.bmp(8, 6, rle4, s, pal, top_down=True), pal, False))
        # a delta straight past the last line's start, then the end of bitmap
        s = run_(4, 1) + E.EOL + E.delta(0, 2) + E.EOB
        cases.append((f"{kind}_delta_to_end", E.bmp(4, 3, rle4, s, pal), pal, False))
        # no end-of-bitmap code once every line is drawn (some writers stop there)
        s = run_(4, 1) + E.EOL + run_(4, 2) + E.EOL
        cases.append((f"{kind}_no_eob", E.bmp(4, 2, rle4, s, pal), pal, False))
        # a smaller palette (biClrUsed) than the bits allow
        s = run_(3, 1) + E.EOL + E.EOB
        small = palette(2, 5)
        cases.append((f"{kind}_small_palette", E.bmp(3, 1, rle4, s, small), small, True))
    if True:   # RLE4's alternating runs: the two nibbles of the code
        pal = palette(16, 3)
        s = E.run4(5, 1, 2) + E.EOL + E.EOB
        cases.append(("rle4_alternating", E.bmp(5, 1, True, s, pal), pal, True))

    for name, data, pal, pil_ok in cases:
        path = os.path.join(tmp, name + ".bmp")
        with open(path, "wb") as f:
            f.write(data)
        got, err = dump(io_dump, path)
        want = expected(data, pal)
        if not check(got is not None, f"{name}: loads", err):
            continue
        check(got.shape == want.shape and np.array_equal(got, want),
              f"{name}: the reference decoder's pixels",
              f"got {got.shape}, want {want.shape}")
        if pil_ok:
            ref = np.asarray(Image.open(path).convert("RGB"))
            check(np.array_equal(got, ref), f"{name}: PIL's pixels")

    # ---- 3. ImageMagick's gray BMP ----
    convert = shutil.which("convert-im6.q16")
    if convert:
        path = os.path.join(tmp, "im_gray.bmp")
        rc, _, err = run([convert, os.path.join(assets, "camera.png"), "-type", "Grayscale",
                          path])
        data = open(path, "rb").read() if rc == 0 else b""
        comp = int.from_bytes(data[30:34], "little") if len(data) > 34 else -1
        if check(rc == 0 and comp == 1, "ImageMagick writes the gray image as RLE8", err):
            got, err = dump(io_dump, path)
            gray = np.asarray(Image.open(os.path.join(assets, "camera.png")).convert("L"))
            check(got is not None and np.array_equal(got, np.stack([gray] * 3, axis=2)),
                  "ImageMagick's RLE8 BMP: the gray pixels, in 3 equal channels", err)
            check(got is not None and np.array_equal(got, np.asarray(Image.open(path).convert("RGB"))),
                  "ImageMagick's RLE8 BMP: PIL's pixels")
    else:
        print("note: no ImageMagick (convert-im6.q16): its RLE8 BMP is not checked")

    # ---- 4. refused ----
    pal = palette(256, 1)
    bad = {
        "run_past_row": E.bmp(4, 2, False, E.run(5, 1) + E.EOL + E.EOB, pal),
        "run_past_row_after_pixels": E.bmp(4, 1, False, E.run(3, 1) + E.run(2, 1) + E.EOB, pal),
        "absolute_past_row": E.bmp(4, 1, False, E.absolute([1, 2, 3, 4, 5], False) + E.EOB, pal),
        "rle4_absolute_past_row": E.bmp(4, 1, True, E.absolute([1, 2, 3, 4, 5], True) + E.EOB,
                                        palette(16, 1)),
        "delta_past_right": E.bmp(4, 2, False, E.delta(5, 0) + E.EOB, pal),
        "delta_past_last_row": E.bmp(4, 2, False, E.delta(0, 3) + E.EOB, pal),
        "delta_below_last_row_mid": E.bmp(4, 2, False, E.delta(1, 2) + E.EOB, pal),
        "pixels_after_last_row": E.bmp(4, 1, False, E.run(4, 1) + E.EOL + E.run(1, 1) + E.EOB,
                                       pal),
        "index_past_palette": E.bmp(4, 1, False, E.run(4, 3) + E.EOB, palette(2, 1)),
        "absolute_index_past_palette": E.bmp(4, 1, False, E.absolute([0, 1, 2], False) + E.EOB,
                                             palette(2, 1)),
        "rle4_index_past_palette": E.bmp(4, 1, True, E.run4(2, 0, 5) + E.EOB, palette(4, 1)),
        "cut_short": E.bmp(4, 3, False, E.run(4, 1) + E.EOL + E.run(4, 2), pal),
        "cut_in_absolute": E.bmp(8, 1, False, E.absolute([1, 2, 3, 4, 5, 6], False)[:5], pal),
        "cut_in_delta": E.bmp(8, 2, False, b"\x00\x02\x01", pal),
        "rle8_with_4_bits": E.bmp(4, 1, False, E.run(4, 1) + E.EOB, pal, bpp=4),
        "rle4_with_8_bits": E.bmp(4, 1, True, E.run4(4, 1) + E.EOB, palette(16, 1), bpp=8),
    }
    for name, data in bad.items():
        path = os.path.join(tmp, name + ".bmp")
        with open(path, "wb") as f:
            f.write(data)
        try:
            bmp_rle.decode(data)
            ref_ok = True
        except ValueError:
            ref_ok = False
        out = os.path.join(tmp, name + ".out.png")
        rc, _, err = run([imgpu, "rotate", path, out, "--angle", "90"])
        check(rc == 1 and err.startswith(f"imgpu: cannot read '{path}': ")
              and ("corrupt BMP" in err or "truncated BMP" in err) and not os.path.exists(out),
              f"{name}: refused as corrupt or truncated BMP data, nothing written", err)
        if name not in ("rle8_with_4_bits", "rle4_with_8_bits"):
            check(not ref_ok, f"{name}: the reference decoder refuses it too")

    # ---- 5. limits ----
    path = os.path.join(tmp, "huge.bmp")
    with open(path, "wb") as f:
        f.write(E.bmp(60000, 60000, False, E.EOB, pal))
    rc, _, err = run([imgpu, "info", path])
    check(rc == 1 and "more than the limit" in err, "a 60000x60000 RLE header: --max-pixels", err)
    path = os.path.join(tmp, "skipped.bmp")
    with open(path, "wb") as f:   # 4000 x 4000, drawn in one corner, the rest skipped
        f.write(E.bmp(4000, 4000, False, E.run(9, 3) + E.EOL + E.delta(0, 250) * 15 + E.EOB, pal))
    t = time.time()
    got, err = dump(io_dump, path)
    dt = time.time() - t
    check(got is not None and got.shape == (4000, 4000, 3) and (got[-1, :9] == pal[3]).all()
          and (got[:-1] == pal[0]).all(), "a 4000x4000 image of deltas: drawn where the stream says",
          err)
    check(dt < 5, f"a 4000x4000 image of deltas loads quickly ({dt:.2f} s)")

    if K.failures:
        print(f"bmp_rle_check: {K.failures} failed; files kept in {tmp}")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"bmp_rle_check: all passed ({len(cases)} decodes, {len(bad)} refusals)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

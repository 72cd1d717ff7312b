"""viewer_overlay.py — the viewer's histogram overlay (issue #18): labels and where H puts it.

usage: viewer_overlay.py IMGPU IMGPU_VIEW TMP_ROOT ASSETS
Headless --size snapshots through EGL (on the GPU machine the interop path draws them, here
Mesa and the glTexSubImage2D upload path), each compared with the same view without the
overlay: the pixels that differ are the overlay, their bounding box its place.
  - --histogram shows it at the lower right; each `key h` steps it: lower left, top right,
    top left, off (the view without it, exactly), lower right again (the --histogram view,
    exactly); H without --histogram starts at the lower right;
  - in every corner it keeps a 10-pixel margin, is at most half the window each way, and leaves
    the other three corners as they were (the lower right one included, away from it);
  - its two panels are labelled BEFORE and AFTER: the white pixels at each panel's top left are
    those strings in the bitmap font of src/core/font.c, exactly; the colour legend after BEFORE is
    "R G B" in the channel curves' colours (a colour image) or "CDF" in the gray curve's yellow;
  - a 16-bit image's panels span its data's range (the auto window), not 0..65535, and their
    labels say which: "BEFORE 3160..10760";
  - `imgpu view --help` says what H does.
/usr/bin/python3 with numpy and cv2, else skipped (77).
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:
    print("SKIP: needs numpy and cv2 (/usr/bin/python3)")
    sys.exit(77)

FONT_C = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "core", "font.c")
W, H, MARGIN = 640, 480, 10
# the label inks: white, and the overlay shader's curve colours as bytes (RGB)
WHITE = (255, 255, 255)
INK = {"r": (255, 89, 89), "g": (89, 255, 89), "b": (115, 140, 255), "y": (255, 230, 51)}
CORNERS = ("lower right", "lower left", "top right", "top left")


def run(args, env=None):
    p = subprocess.run(args, capture_output=True, timeout=120, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def read_rgb(path):
    im = cv2.imread(path, cv2.IMREAD_COLOR)
    return None if im is None else im[:, :, ::-1].astype(np.int64)


def font_glyphs():
    """The 3x5 glyphs of src/core/font.c: letters and digits, rows as octal-ish digits (bit 4 = left)."""
    src = open(FONT_C).read()
    az = re.search(r"az\[26\]\s*=\s*\{(.*?)\};", src, re.S).group(1)
    digits = re.search(r"digits\[10\]\s*=\s*\{(.*?)\};", src, re.S).group(1)
    az, digits = re.findall(r'"(\d{5})"', az), re.findall(r'"(\d{5})"', digits)
    assert len(az) == 26 and len(digits) == 10, "src/core/font.c's tables moved"
    g = {chr(ord("A") + i): s for i, s in enumerate(az)}
    g.update({chr(ord("0") + i): s for i, s in enumerate(digits)})
    g[" "] = "00000"
    for ch, rows in re.findall(r"\{'(.)', \"(\d{5})\"\}", src):  # the punctuation a label uses
        g[ch] = rows
    return g


def text_mask(glyphs, text, scale):
    """The ink of `text` at `scale` (4-pixel advance per glyph, as the viewer draws it), trimmed."""
    m = np.zeros((5 * scale, len(text) * 4 * scale), bool)
    for i, ch in enumerate(text):
        for r, row in enumerate(glyphs[ch]):
            for c in range(3):
                if int(row) & (4 >> c):
                    m[r * scale:(r + 1) * scale, (i * 4 + c) * scale:(i * 4 + c + 1) * scale] = True
    return trim(m)


def trim(m):
    ys, xs = np.nonzero(m)
    if len(ys) == 0:
        return m[:0, :0]
    return m[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def bbox(mask):
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1  # x0 y0 x1 y1


def is_color(img, rgb):
    return np.all(img == np.array(rgb), axis=2)


def snapshot(ck, view, tmp, inp, extra, keys, tag):
    snap = os.path.join(tmp, f"{tag}.png")
    args = [view, inp, "--snapshot", snap, "--size", f"{W}x{H}", "--context", "egl", "--quiet"] + extra
    if keys:
        ev = os.path.join(tmp, f"{tag}.events")
        cc.write(ev, ("key h\n" * keys).encode())
        args += ["--events", ev]
    rc, o, e = run(args)
    if not ck.check(rc == 0, f"{tag}: imgpu-view exits 0", " ".join(args) + "\n" + o + e):
        return None
    img = read_rgb(snap)
    ck.check(img is not None and img.shape == (H, W, 3), f"{tag}: a {W}x{H} snapshot")
    return img


def find_text(ck, glyphs, region, mask, text, what):
    """mask's pixels in region, trimmed, must be `text` in the font at scale 1 or 2."""
    got = trim(mask)
    ok = any(got.shape == text_mask(glyphs, text, s).shape and np.array_equal(got, text_mask(glyphs, text, s))
             for s in (1, 2))
    rows = "\n".join("".join("#" if v else "." for v in r) for r in got[:12, :80])
    return ck.check(ok, f"{what}: the label reads {text!r} (the font of src/core/font.c)",
                    f"ink found in {region} ({got.shape[1]}x{got.shape[0]}):\n{rows}")


def check_labels(ck, glyphs, img, box, legend, legend_ink, what, labels=("BEFORE", "AFTER")):
    x0, y0, x1, y1 = box
    ph = (y1 - y0) // 2
    for panel, label in enumerate(labels):
        # the panel's top-left quarter: the label's place
        ry0, rx0 = y0 + panel * ph, x0
        sub = img[ry0:ry0 + ph // 2, rx0:rx0 + (x1 - x0) // 2]
        white = is_color(sub, WHITE)
        if not ck.check(white.any(), f"{what}: panel {panel + 1} has white label text at its top left",
                        f"no pure white pixel in x {rx0}..{rx0 + (x1 - x0) // 2}, y {ry0}..{ry0 + ph // 2}"):
            continue
        find_text(ck, glyphs, f"panel {panel + 1}'s top left", white, label, f"{what}, panel {panel + 1}")
        if panel == 0:
            # the legend: on the label's rows, right of it, in the curve colours
            b = bbox(white)
            rows = sub[b[1]:b[3], b[2]:]
            ink = np.zeros(rows.shape[:2], bool)
            for code in set(legend_ink) - {" "}:
                ink |= is_color(rows, INK[code])
            if ck.check(ink.any(), f"{what}: a colour legend right of BEFORE", ""):
                # somewhere on those rows, exactly (curves may cross the rows outside its box)
                want = text_mask(glyphs, legend, (b[3] - b[1]) // 5)
                hits = [dx for dx in range(ink.shape[1] - want.shape[1] + 1)
                        if want.shape[0] == ink.shape[0] and np.array_equal(ink[:, dx:dx + want.shape[1]], want)]
                pic = "\n".join("".join("#" if v else "." for v in r) for r in ink[:, :80])
                if ck.check(len(hits) == 1, f"{what}: the legend reads {legend!r} (the font of src/core/font.c)",
                            f"ink on the label's rows:\n{pic}"):
                    sc = (b[3] - b[1]) // 5  # each glyph's pixels in its own colour
                    for i, (ch, code) in enumerate(zip(legend, legend_ink)):
                        if ch == " ":
                            continue
                        cols = slice(hits[0] + i * 4 * sc, hits[0] + (i * 4 + 3) * sc)
                        gm = want[:, i * 4 * sc:(i * 4 + 3) * sc]
                        ck.check(gm.any() and np.all(is_color(rows[:, cols], INK[code])[gm]),
                                 f"{what}: legend {ch!r} in {INK[code]}")


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    imgpu, view, tmp_root, assets = (os.path.abspath(a) for a in sys.argv[1:5])
    os.makedirs(tmp_root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="viewer_overlay.", dir=tmp_root)
    ck = cc.Checker("viewer_overlay")
    glyphs = font_glyphs()

    rc, o, e = run([imgpu, "view", "--help"])
    ck.check(rc == 0 and "lower right, lower left, top right, top left, off" in " ".join(o.split()),
             "imgpu view --help: H steps the overlay lower right, lower left, top right, top left, off", o + e)

    for name, extra, legend, legend_ink in (("coffee.png", ["--equalize"], "R G B", "r g b"),
                                            ("camera.png", ["--clahe"], "CDF", "yyy")):
        inp = os.path.join(assets, name)
        base = snapshot(ck, view, tmp, inp, extra, 0, f"{name}_none")
        first = snapshot(ck, view, tmp, inp, extra + ["--histogram"], 0, f"{name}_histogram")
        if base is None or first is None:
            continue
        # H from off: the lower right, as --histogram
        h1 = snapshot(ck, view, tmp, inp, extra, 1, f"{name}_h")
        if h1 is not None:
            ck.check(np.array_equal(h1, first), f"{name}: H from off == --histogram (lower right)")
        for presses in range(6):
            img = first if presses == 0 else snapshot(ck, view, tmp, inp, extra + ["--histogram"], presses,
                                                        f"{name}_histogram_h{presses}")
            if img is None:
                continue
            state = presses % 5
            what = f"{name} --histogram + {presses} x H"
            if state == 4:
                ck.check(np.array_equal(img, base), f"{what}: off, the view without the overlay exactly")
                continue
            if presses == 5:
                ck.check(np.array_equal(img, first), f"{what}: back at the lower right, as --histogram exactly")
            corner = CORNERS[state]
            what += f" ({corner})"
            box = bbox(np.any(img != base, axis=2))
            if not ck.check(box is not None, f"{what}: the overlay is drawn"):
                continue
            x0, y0, x1, y1 = box
            right, top = "right" in corner, "top" in corner
            want_x = (W - MARGIN - x1) if right else (x0 - MARGIN)
            want_y = (y0 - MARGIN) if top else (H - MARGIN - y1)
            ck.check(want_x == 0 and want_y == 0, f"{what}: in the {corner} corner, {MARGIN} pixels in",
                     f"overlay at x {x0}..{x1}, y {y0}..{y1} of {W}x{H}")
            ck.check(100 <= x1 - x0 <= W // 2 and 50 <= y1 - y0 <= H // 2,
                     f"{what}: at most half the window each way (and not tiny)", f"{x1 - x0}x{y1 - y0}")
            for cx, cy, cname in ((W - 40, H - 40, "lower right"), (0, H - 40, "lower left"),
                                  (W - 40, 0, "top right"), (0, 0, "top left")):
                if cname != corner:
                    ck.check(np.array_equal(img[cy:cy + 40, cx:cx + 40], base[cy:cy + 40, cx:cx + 40]),
                             f"{what}: the {cname} corner is not covered")
            check_labels(ck, glyphs, img, box, legend, legend_ink, what)
    check_16bit(ck, glyphs, view, tmp)
    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


def bar_columns(img, base, box, panel):
    """Columns of a panel with a gray bar pixel in its lowest rows (bars are light gray over the
    image; the CDF curve is coloured, the background dark)."""
    x0, y0, x1, y1 = box
    ph = (y1 - y0) // 2
    rows = img[y0 + panel * ph + ph - 16:y0 + panel * ph + ph - 6, x0:x1]
    spread = rows.max(axis=2) - rows.min(axis=2)
    bar = (rows.min(axis=2) > 110) & (spread < 40)
    return bar.any(axis=0)


def check_16bit(ck, glyphs, view, tmp):
    """A 16-bit image whose data lies in 3160..10760: each panel spans the data's range, not
    0..65535 (where the bars were a spike at the left), and its label says so."""
    rng = np.random.default_rng(30)
    g16 = np.clip(np.round(rng.normal(6960, 1500, (240, 320))), 3160, 10760).astype(np.uint16)
    g16[0, 0], g16[0, 1] = 3160, 10760
    inp = os.path.join(tmp, "g16.png")
    cv2.imwrite(inp, g16)
    lo, hi = int(g16.min()), int(g16.max())
    base = snapshot(ck, view, tmp, inp, [], 0, "g16_none")
    img = snapshot(ck, view, tmp, inp, ["--histogram"], 0, "g16_histogram")
    if base is None or img is None:
        return
    box = bbox(np.any(img != base, axis=2))
    if not ck.check(box is not None, "16-bit: the overlay is drawn"):
        return
    for panel in (0, 1):
        cols = bar_columns(img, base, box, panel)
        ck.check(cols.mean() > 0.8, f"16-bit, panel {panel + 1}: bars across the panel (the data's range), "
                 "not a spike at the left", f"{cols.sum()} of {len(cols)} columns hold a bar")
    check_labels(ck, glyphs, img, box, "CDF", "yyy", "16-bit --histogram",
                 labels=(f"BEFORE {lo}..{hi}", f"AFTER {lo}..{hi}"))


if __name__ == "__main__":
    sys.exit(main())

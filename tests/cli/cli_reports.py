"""cli_reports.py — the report commands: histogram (table, --csv, --plot), info and compare
(metrics, --diff, --max-abs), checked against numbers known from images crafted here, and
against the assets for real files.

Usage: cli_reports.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402


def parse_csv(text):
    lines = text.splitlines()
    header = lines[0].split(",") if lines else []
    rows = [[int(v) for v in line.split(",")] for line in lines[1:] if line]
    return lines, header, rows


def decode(binary, path):
    """(width, height, pixels as a list of tuples) via cv2 (RGB order), or None."""
    cv2 = cc.try_cv2()
    if cv2 is None:
        return None
    im = cv2.imread(path, cv2.IMREAD_COLOR)
    if im is None:
        return None
    h, w = im.shape[:2]
    rgb = im[:, :, ::-1].reshape(-1, 3)
    return w, h, [tuple(int(v) for v in p) for p in rgb]


def main():
    binary, tmp, assets = cc.setup("cli_reports")
    t = cc.Checker("cli_reports")
    asset = lambda name: os.path.join(assets, name)  # noqa: E731

    # ---- crafted images with known histograms ---------------------------------------------
    gray_vals = [0, 0, 10, 10, 10, 200, 255, 255, 255, 255, 7, 7]  # 4x3
    gray = os.path.join(tmp, "gray.png")
    cc.write(gray, cc.png_bytes(4, 3, 1, bytes(gray_vals)))
    # RGBA whose color is gray, so Y is exactly that gray whatever the rounding.
    rgba_px = [(v, v, v, a) for v, a in ((5, 255), (5, 0), (90, 128), (250, 255), (250, 255), (5, 7))]
    rgba = os.path.join(tmp, "rgba.png")
    cc.write(rgba, cc.png_bytes(3, 2, 4, bytes(s for p in rgba_px for s in p)))
    ga = os.path.join(tmp, "ga.png")
    cc.write(ga, cc.png_bytes(2, 2, 2, bytes((1, 2, 3, 4, 5, 6, 7, 8))))

    # ---- histogram --csv ------------------------------------------------------------------------
    r = cc.run(binary, ["histogram", gray, "--csv", "--device", "cpu"])
    t.check(r.rc == 0, "histogram --csv gray: exit 0", str(r))
    lines, header, rows = parse_csv(r.out)
    t.check(len(lines) == 257, "histogram --csv: 257 lines", f"{len(lines)} lines")
    t.check(header == ["value", "gray"], "histogram --csv gray: header value,gray", str(header))
    if len(rows) == 256:
        t.check([row[0] for row in rows] == list(range(256)), "csv: value column 0..255")
        want = [gray_vals.count(v) for v in range(256)]
        t.check([row[1] for row in rows] == want, "csv gray: exact counts")

    r = cc.run(binary, ["histogram", rgba, "--csv", "--device=cpu"])
    lines, header, rows = parse_csv(r.out)
    t.check(r.rc == 0 and header == ["value", "R", "G", "B", "alpha", "Y"],
            "histogram --csv RGBA: header value,R,G,B,alpha,Y", str(r))
    if len(rows) == 256 and len(header) == 6:
        for k, name in enumerate(("R", "G", "B")):
            want = [sum(1 for p in rgba_px if p[k] == v) for v in range(256)]
            t.check([row[1 + k] for row in rows] == want, f"csv RGBA: {name} counts")
        want_a = [sum(1 for p in rgba_px if p[3] == v) for v in range(256)]
        t.check([row[4] for row in rows] == want_a, "csv RGBA: alpha counts")
        want_y = [sum(1 for p in rgba_px if p[0] == v) for v in range(256)]
        t.check([row[5] for row in rows] == want_y, "csv RGBA: Y counts (gray colors: Y = value)")

    r = cc.run(binary, ["histogram", ga, "--csv", "--device", "cpu"])
    t.check(r.rc == 0 and r.out.splitlines()[:1] == ["value,gray,alpha"],
            "histogram --csv gray+alpha: header value,gray,alpha", str(r))

    for name, w, h, want_header in (("camera.png", 512, 512, "value,gray"),
                                    ("astronaut.png", 512, 512, "value,R,G,B,Y"),
                                    ("horse.png", 400, 328, "value,R,G,B,alpha,Y"),
                                    ("rocket.jpg", 640, 427, "value,R,G,B,Y")):
        r = cc.run(binary, ["histogram", asset(name), "--csv", "--device", "cpu"])
        lines, header, rows = parse_csv(r.out)
        t.check(r.rc == 0 and len(lines) == 257, f"histogram --csv {name}: exit 0, 257 lines", str(r))
        t.check(",".join(header) == want_header, f"histogram --csv {name}: header {want_header}",
                ",".join(header))
        if len(rows) == 256:
            sums = [sum(row[k] for row in rows) for k in range(1, len(header))]
            t.check(all(s == w * h for s in sums), f"histogram --csv {name}: every column sums to {w * h}",
                    str(sums))

    # ---- histogram table --------------------------------------------------------------------------
    r = cc.run(binary, ["histogram", gray, "--device", "cpu"])
    t.check(r.rc == 0 and "mean" in r.out, "histogram table: exit 0, has a mean column", str(r))
    m = re.search(r"^gray\s+(\d+)\s+(\d+)\s+([\d.]+)", r.out, re.M)
    t.check(m is not None and m.group(1) == "0" and m.group(2) == "255"
            and abs(float(m.group(3)) - sum(gray_vals) / len(gray_vals)) < 0.01,
            "histogram table: gray min 0, max 255, exact mean", str(r))
    r = cc.run(binary, ["histogram", asset("astronaut.png"), "--device", "cpu"])
    t.check(r.rc == 0 and all(re.search(rf"^{c}\s+\d+\s+\d+", r.out, re.M) for c in ("R", "G", "B", "Y")),
            "histogram table RGB: rows R, G, B, Y", str(r))

    # ---- histogram --plot -------------------------------------------------------------------------
    plots = {}
    for name, panels in (("camera.png", 1), ("astronaut.png", 4), ("horse.png", 5)):
        out = os.path.join(tmp, f"plot_{name}.png")
        r = cc.run(binary, ["histogram", asset(name), "--plot", out, "--device", "cpu"])
        t.check(r.rc == 0 and os.path.isfile(out), f"histogram --plot {name}: exit 0, file written", str(r))
        r2 = cc.run(binary, ["info", out])
        t.check(r2.rc == 0 and re.search(r"format:\s+PNG", r2.out) is not None,
                f"histogram --plot {name}: a decodable PNG (imgpu info)", str(r2))
        plots[name] = (panels, decode(binary, out))
    if all(p[1] is not None for p in plots.values()):
        # A title strip, then one panel per channel: the height grows by one panel a channel.
        base_w, base_h = plots["camera.png"][1][:2]
        panel_h = (plots["astronaut.png"][1][1] - base_h) / 3
        t.check(0 < panel_h < base_h, "--plot: a title above the panels", f"panel {panel_h}, gray plot {base_h}")
        for name, (panels, (w, h, px)) in plots.items():
            t.check(w == base_w and h == base_h + (panels - 1) * panel_h,
                    f"--plot {name}: {panels} panel(s) of equal size", f"{w}x{h}, gray plot {base_w}x{base_h}")
        px = plots["astronaut.png"][1][2]
        for label, test in (("red", lambda p: p[0] > 150 and p[1] < 90 and p[2] < 90),
                            ("green", lambda p: p[1] > 120 and p[0] < 90 and p[2] < 90),
                            ("blue", lambda p: p[2] > 150 and p[0] < 90 and p[1] < 120)):
            t.check(sum(1 for p in px if test(p)) > 500, f"--plot RGB: has {label} bars")
        gpx = plots["camera.png"][1][2]
        t.check(all(max(p) - min(p) < 40 for p in gpx), "--plot gray: no colored bars")
    elif cc.try_cv2() is None:
        print("note: no cv2; plot pixels checked only through imgpu info")

    # ---- info ----------------------------------------------------------------------------------
    bmp = os.path.join(tmp, "x.bmp")
    cc.write(bmp, cc.bmp_bytes(3, 2, bytes(range(18))))
    tga = os.path.join(tmp, "x.tga")
    cc.write(tga, cc.tga_bytes(3, 2, bytes(range(18))))
    for path, fmt, dims, chans in ((asset("camera.png"), "PNG", "512 x 512", "1 (gray)"),
                                   (asset("horse.png"), "PNG", "400 x 328", "4 (RGBA)"),
                                   (asset("rocket.jpg"), "JPEG", "640 x 427", "3 (RGB)"),
                                   (ga, "PNG", "2 x 2", "2 (gray+alpha)"),
                                   (bmp, "BMP", "3 x 2", "3 (RGB)"),
                                   (tga, "TGA", "3 x 2", "3 (RGB)")):
        r = cc.run(binary, ["info", path])
        what = f"info {os.path.basename(path)}"
        t.check(r.rc == 0, f"{what}: exit 0", str(r))
        t.check(re.search(r"format:\s+" + fmt + r"\b", r.out) is not None, f"{what}: format {fmt}", str(r))
        t.check(dims in r.out, f"{what}: {dims}", str(r))
        t.check(re.search(r"channels:\s+" + re.escape(chans), r.out) is not None, f"{what}: channels {chans}", str(r))
        t.check(re.search(r"bit depth:\s+8\b", r.out) is not None, f"{what}: bit depth 8", str(r))
        t.check(re.search(r"file size:\s+%d bytes" % os.path.getsize(path), r.out) is not None,
                f"{what}: file size", str(r))

    # ---- compare --------------------------------------------------------------------------------
    r = cc.run(binary, ["compare", asset("camera.png"), asset("camera.png")])
    t.check(r.rc == 0, "compare self: exit 0", str(r))
    t.check(re.search(r"max abs difference:\s*0\n", r.out) is not None, "compare self: max 0", str(r))
    t.check(re.search(r"PSNR:\s*inf\b", r.out) is not None, "compare self: PSNR inf", str(r))
    r = cc.run(binary, ["compare", asset("camera.png"), asset("camera.png"), "--max-abs", "0"])
    t.check(r.rc == 0, "compare self --max-abs 0: exit 0", str(r))

    px = bytes((x * 16 + y * 3 + c * 40) % 256 for y in range(4) for x in range(4) for c in range(3))
    a = os.path.join(tmp, "a.png")
    b = os.path.join(tmp, "b.png")
    cc.write(a, cc.png_bytes(4, 4, 3, px))
    changed = bytearray(px)
    i = (2 * 4 + 1) * 3 + 1  # pixel (1, 2), green
    changed[i] = (changed[i] + 3) % 256 if changed[i] < 253 else changed[i] - 3
    cc.write(b, cc.png_bytes(4, 4, 3, bytes(changed)))
    r = cc.run(binary, ["compare", a, b])
    t.check(r.rc == 0, "compare different, no --max-abs: exit 0", str(r))
    t.check(re.search(r"max abs difference:\s*3\n", r.out) is not None, "compare: max 3", str(r))
    m = re.search(r"mean abs difference:\s*([\d.]+)", r.out)
    t.check(m is not None and abs(float(m.group(1)) - 3 / 48) < 1e-4, "compare: mean 3/48", str(r))
    m = re.search(r"PSNR:\s*([\d.]+)", r.out)
    want_psnr = 10 * math.log10(255 ** 2 / (9 / 48))
    t.check(m is not None and abs(float(m.group(1)) - want_psnr) < 0.01,
            f"compare: PSNR {want_psnr:.2f}", str(r))
    for n, want in (("0", 1), ("2", 1), ("3", 0), ("255", 0)):
        r = cc.run(binary, ["compare", a, b, f"--max-abs={n}"])
        t.check(r.rc == want, f"compare --max-abs {n} (max 3): exit {want}", str(r))
        if want == 1:
            t.check(r.err.startswith("imgpu: ") and "max-abs" in r.err, f"compare --max-abs {n}: says why", str(r))

    diff = os.path.join(tmp, "diff.png")
    r = cc.run(binary, ["compare", a, b, "--diff", diff, "--max-abs", "0"])
    t.check(r.rc == 1 and os.path.isfile(diff), "compare --diff --max-abs 0: exit 1, diff still written", str(r))
    dec = decode(binary, diff)
    if dec is not None:
        w, h, dpx = dec
        t.check((w, h) == (4, 4), "diff image: 4x4", f"{w}x{h}")
        nonzero = [(k, p) for k, p in enumerate(dpx) if p != (0, 0, 0)]
        t.check(nonzero == [(9, (0, 255, 0))], "diff image: one pixel, green, amplified 3 -> 255", str(nonzero))

    # Alpha-only difference: visible in the (opaque) diff image.
    a4 = os.path.join(tmp, "a4.png")
    b4 = os.path.join(tmp, "b4.png")
    cc.write(a4, cc.png_bytes(2, 1, 4, bytes((10, 20, 30, 255, 10, 20, 30, 255))))
    cc.write(b4, cc.png_bytes(2, 1, 4, bytes((10, 20, 30, 255, 10, 20, 30, 250))))
    diff4 = os.path.join(tmp, "diff4.png")
    r = cc.run(binary, ["compare", a4, b4, "--diff", diff4])
    t.check(r.rc == 0 and re.search(r"max abs difference:\s*5\n", r.out) is not None,
            "compare RGBA alpha-only: max 5", str(r))
    dec = decode(binary, diff4)
    if dec is not None:
        t.check(dec[2] == [(0, 0, 0), (255, 255, 255)], "diff of an alpha-only change is visible", str(dec))

    # Mismatches are errors, not metrics.
    for x, y, why in ((asset("camera.png"), asset("astronaut.png"), "gray vs RGB"),
                      (asset("camera.png"), asset("clock_motion.png"), "different sizes")):
        r = cc.run(binary, ["compare", x, y, "--diff", os.path.join(tmp, "nodiff.png")])
        t.check(r.rc == 1 and r.out == "", f"compare {why}: exit 1, no report", str(r))
        t.check(r.err.startswith("imgpu: ") and os.path.basename(x) in r.err and os.path.basename(y) in r.err,
                f"compare {why}: message names both files", str(r))
        t.check(not os.path.exists(os.path.join(tmp, "nodiff.png")), f"compare {why}: no diff written")

    rc = t.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

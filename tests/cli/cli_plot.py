"""cli_plot.py — `imgpu histogram --plot` read back as pixels: the chart must show the bins
and the range asked for, in the image's units. No OCR: the structure is measured instead.
The x axis is the longest horizontal run of the axis color in a panel, the y axis the
vertical run at its left end; bars are the colored pixels standing on the x axis; the CDF is
the orange curve. Expected bins, maxima and cumulative shares are computed here with numpy
from the pixels written, by the rule `histogram --help` states (level v of LO..HI goes to
bin (v - LO) * N // (HI - LO + 1)).

Usage: cli_plot.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import math
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

AXIS = (64, 64, 64)


def is_cdf(p):
    return p[0] > 200 and 100 < p[1] < 160 and p[2] < 60


def is_bar(p):
    """Bars: not the light grays behind them (background, grid lines), not the CDF curve."""
    return min(p) < 200 and not is_cdf(p)


def binned(values, lo, hi, nb):
    import numpy as np
    v = values.ravel().astype(np.int64)
    v = v[(v >= lo) & (v <= hi)]
    return np.bincount((v - lo) * nb // (hi - lo + 1), minlength=nb)


class Panel:
    """One panel of a plot: x0 (first plot column), w, base (the x axis row), h (plot rows)."""

    def __init__(self, img, base, x0, w, h):
        self.img, self.base, self.x0, self.w, self.h = img, base, x0, w, h

    def bar_heights(self):
        """Bar pixels stacked on the x axis, per plot column."""
        img = self.img
        out = []
        for x in range(self.x0, self.x0 + self.w):
            n = 0
            y = self.base - 1
            while n < self.h and is_bar(img[y, x]):
                n += 1
                y -= 1
            out.append(n)
        return out

    def curve_tops(self):
        """Row of the topmost CDF-orange pixel in each plot column (None if none)."""
        img = self.img
        out = []
        for x in range(self.x0, self.x0 + self.w):
            col = img[self.base - self.h:self.base, x].astype(int)
            hit = [i for i, p in enumerate(col) if is_cdf(p)]
            out.append(self.base - self.h + hit[0] if hit else None)
        return out

    def x_ticks(self):
        """Columns of the tick marks under the x axis."""
        return [x for x in range(self.x0 - 1, self.img.shape[1])
                if tuple(self.img[self.base + 2, x]) == AXIS]

    def y_ticks(self):
        """Rows of the tick marks left of the y axis."""
        return [y for y in range(self.base - self.h, self.base)
                if all(tuple(self.img[y, self.x0 - 1 - d]) == AXIS for d in range(1, 5))]


def panels(img):
    """Every panel: rows holding a run of the axis color at least 300 pixels long."""
    import numpy as np
    is_axis = np.all(img == np.array(AXIS, dtype=img.dtype), axis=2)
    found = []
    for y in range(img.shape[0]):
        row = is_axis[y]
        best, start, run_start = 0, 0, None
        for x in range(img.shape[1] + 1):
            if x < img.shape[1] and row[x]:
                if run_start is None:
                    run_start = x
            elif run_start is not None:
                if x - run_start > best:
                    best, start = x - run_start, run_start
                run_start = None
        if best >= 300:
            # y axis: the vertical run of the axis color at the x axis' left end
            h = 0
            while y - h - 1 >= 0 and is_axis[y - h - 1, start]:
                h += 1
            found.append(Panel(img, y, start + 1, best - 1, h))
    return found


def plot(binary, t, tmp, name, args):
    cv2 = cc.try_cv2()
    out = os.path.join(tmp, "plot_" + "".join(ch if ch.isalnum() else "_" for ch in name) + ".png")
    r = cc.run(binary, ["histogram"] + args + ["--plot", out, "--device", "cpu"])
    if not t.check(r.rc == 0 and os.path.isfile(out), f"{name}: exit 0, plot written", str(r)):
        return None, []
    img = cv2.imread(out, cv2.IMREAD_COLOR)[:, :, ::-1]
    ps = panels(img)
    t.check(len(ps) >= 1 and all(p.h > 50 and p.w >= 300 for p in ps), f"{name}: panels with axes found",
            str([(p.base, p.x0, p.w, p.h) for p in ps]))
    return img, ps


def check_bars(t, name, p, counts, log=False, group=1):
    """Bars are exactly the bins: equal whole widths, no gaps, heights by the counts."""
    import numpy as np
    nb = len(counts)
    if group > 1:  # one column per `group` bins: the tallest of them
        cols = math.ceil(nb / group)
        counts = np.array([counts[j * group:(j + 1) * group].max() for j in range(cols)])
        nb = cols
    hs = p.bar_heights()
    nz = [k for k in range(nb) if counts[k]]
    if nz and all(counts[k] for k in range(nz[0], nz[-1] + 1)):  # no empty bin inside the data
        cols = [x for x in range(p.w) if hs[x]]
        t.check(bool(cols) and all(hs[x] for x in range(cols[0], cols[-1] + 1)),
                f"{name}: no empty column inside the data span (no comb)",
                f"empty columns {[x for x in range(cols[0], cols[-1]) if not hs[x]][:10] if cols else 'all'}")
    if not t.check(p.w % nb == 0, f"{name}: the plot width is a whole number of columns per bar",
                   f"width {p.w}, {nb} bars"):
        return
    bw = p.w // nb
    per_bar = [hs[k * bw:(k + 1) * bw] for k in range(nb)]
    t.check(all(len(set(b)) == 1 for b in per_bar), f"{name}: each bar is flat across its {bw} column(s)",
            str([b for b in per_bar if len(set(b)) != 1][:5]))
    h = np.array([b[0] for b in per_bar])
    c = np.asarray(counts, dtype=float)
    t.check(list(h > 0) == list(c > 0), f"{name}: a bar exactly where a bin holds pixels (no comb, no phantom)",
            f"empty bars at {[k for k in range(nb) if c[k] and not h[k]][:10]}, "
            f"phantom at {[k for k in range(nb) if h[k] and not c[k]][:10]}")
    k_max = int(np.argmax(c))
    t.check(h[k_max] > p.h // 2, f"{name}: the tallest bin fills most of the plot", f"{h[k_max]} of {p.h}")
    if log:
        ok = c > 1
        want = h[k_max] * np.log10(np.where(ok, c, 1)) / math.log10(c[k_max])
        bad = [(k, int(h[k]), round(float(want[k]), 1)) for k in range(nb) if ok[k] and abs(h[k] - want[k]) > 1.5]
        t.check(not bad, f"{name}: bar heights are log10 of the counts", str(bad[:8]))
        t.check(all(h[k] == 1 for k in range(nb) if c[k] == 1), f"{name}: a bin of 1 pixel is 1 pixel high (log)")
    else:
        want = h[k_max] * c / c[k_max]
        bad = [(k, int(h[k]), round(float(want[k]), 1)) for k in range(nb) if c[k] and abs(h[k] - want[k]) > 1.01]
        t.check(not bad, f"{name}: bar heights proportional to the counts", str(bad[:8]))


def check_x_ticks(t, name, p, lo, hi):
    """Ticks evenly spaced at multiples of a 1/2/5 x 10^k step, in the image's levels."""
    ticks = p.x_ticks()
    if not t.check(len(ticks) >= 2, f"{name}: x tick marks", str(ticks)):
        return
    lpp = (hi - lo + 1) / p.w  # levels per pixel
    levels = [lo + (x - p.x0 + 0.5) * lpp for x in ticks]
    step = (levels[-1] - levels[0]) / (len(levels) - 1)
    nice = [m * 10 ** e for e in range(0, 6) for m in (1, 2, 5)]
    s = min(nice, key=lambda n: abs(n - step))
    tol = max(1.0, 1.01 * lpp)
    t.check(abs(s - step) <= tol and all(abs(v - round(v / s) * s) <= tol for v in levels)
            and all(lo - tol <= v <= hi + tol for v in levels),
            f"{name}: x ticks at multiples of a round step within {lo}..{hi}",
            f"levels {[round(v, 1) for v in levels]}, step {step:.1f} ~ {s}")


def main():
    cv2 = cc.try_cv2()
    try:
        import numpy as np
    except Exception:
        np = None
    if cv2 is None or np is None:
        print("skip: cli_plot needs cv2 and numpy (/usr/bin/python3 on Debian)")
        return 77
    binary, tmp, assets = cc.setup("cli_plot")
    t = cc.Checker("cli_plot")

    # A 16-bit image with values 3160..10760, every level's neighbourhood populated.
    rng = np.random.default_rng(18)
    g16 = np.clip(np.round(rng.normal(6960, 1500, (240, 320))), 3160, 10760).astype(np.uint16)
    g16[0, 0], g16[0, 1] = 3160, 10760
    g16_path = os.path.join(tmp, "g16.png")
    cv2.imwrite(g16_path, g16)

    # ---- default: 256 bins over the data's range (3160..10760), x in 16-bit units (issue 30:
    # over 0..65535 the data was a spike at the left) -----------------------------------------------
    img, ps = plot(binary, t, tmp, "g16 default", [g16_path])
    if ps:
        p = ps[0]
        check_bars(t, "g16 default: the data's range", p, binned(g16, 3160, 10760, 256))
        check_x_ticks(t, "g16 default: the data's range", p, 3160, 10760)
        ys = p.y_ticks()
        t.check(len(ys) >= 3 and ys[-1] == p.base - 1 and len({b - a for a, b in zip(ys, ys[1:])}) <= 2,
                "g16 default: evenly spaced y ticks from 0 at the x axis", str(ys))
        top = p.base - p.h
        t.check(np.any(img[:top - 1].max(axis=2) < 100), "g16 default: text (title, heading) above the plot")

    # the whole 16-bit range, asked for
    img, ps = plot(binary, t, tmp, "g16 --range 0:65535", [g16_path, "--range", "0:65535"])
    if ps:
        check_bars(t, "g16 --range 0:65535", ps[0], binned(g16, 0, 65535, 256))
        check_x_ticks(t, "g16 --range 0:65535", ps[0], 0, 65535)

    # ---- the table: 16 rows of % for 8 and 16 bits alike; 16-bit over the data's range -------------
    for name, path, lo, hi, data in (("8-bit", None, 0, 255, None), ("16-bit", g16_path, 3160, 10760, g16)):
        if path is None:
            data = cv2.imread(os.path.join(assets, "camera.png"), cv2.IMREAD_UNCHANGED)
            path = os.path.join(assets, "camera.png")
        r = cc.run(binary, ["histogram", path, "--device", "cpu"])
        lines = r.out.splitlines()
        head = [i for i, l in enumerate(lines) if l.startswith("% of pixels in")]
        rows = [l.split() for l in lines[head[0] + 2:]] if head else []
        t.check(r.rc == 0 and len(head) == 1 and len(rows) == 16,
                f"histogram table {name}: 16 rows of '% of pixels'", r.out[-1500:])
        if name == "16-bit":
            t.check(bool(head) and f"over levels {lo}..{hi} (the data's range)" in lines[head[0]],
                    "histogram table 16-bit: says it spans the data's range", r.out[:800])
        if len(rows) == 16:
            want = 100.0 * binned(data, lo, hi, 16) / data.size
            got = [float(row[-1]) for row in rows]
            t.check(all(abs(g - w) <= 0.005 + 1e-9 for g, w in zip(got, want)),
                    f"histogram table {name}: each row's % is its bin's share", f"{got}\n{list(want)}")
    r = cc.run(binary, ["histogram", g16_path, "--device", "cpu", "--csv"])
    lines = r.out.splitlines()
    t.check(r.rc == 0 and len(lines) == 257 and lines[1].startswith("0,") and lines[-1].startswith("65280,"),
            "histogram --csv 16-bit: still 256 bins over 0..65535", r.out[:300])

    # ---- --range and --bins: exactly those bins, axes over the range ---------------------------
    for lo, hi, nb in ((3160, 10760, 50), (3160, 10760, 256), (3000, 3099, None), (6000, 6009, 10)):
        name = f"g16 --range {lo}:{hi}" + (f" --bins {nb}" if nb else "")
        args = [g16_path, "--range", f"{lo}:{hi}"] + (["--bins", str(nb)] if nb else [])
        src = g16
        if hi - lo < 200:  # a narrow range: a flat image across it, so every bin holds pixels
            src = (lo + np.arange(240 * 320) % (hi - lo + 1)).reshape(240, 320).astype(np.uint16)
            src[0, :7] = 65535  # outside the range: not counted
            args[0] = os.path.join(tmp, f"flat{lo}.png")
            cv2.imwrite(args[0], src)
        img, ps = plot(binary, t, tmp, name, args)
        if ps:
            counts = binned(src, lo, hi, nb or min(256, hi - lo + 1))
            check_bars(t, name, ps[0], counts)
            check_x_ticks(t, name, ps[0], lo, hi)

    # ---- more bins than columns: each column the tallest of its group -------------------------------
    spike = np.clip(np.round(rng.normal(2000, 600, (200, 200))), 0, 3999).astype(np.uint16)
    spike[:40, :] = 1234  # one bin far taller than the rest
    spike[40, :3] = 3001  # and a lone bin of 3 pixels must still show
    spike_path = os.path.join(tmp, "spike.png")
    cv2.imwrite(spike_path, spike)
    img, ps = plot(binary, t, tmp, "--bins 2000", [spike_path, "--range", "0:3999", "--bins", "2000"])
    if ps:
        check_bars(t, "--bins 2000 (4 bins a column)", ps[0], binned(spike, 0, 3999, 2000), group=4)

    # ---- --log: heights are log10 of the counts; 1 and 0 handled ------------------------------------
    want = [1, 3, 10, 0, 100, 2000, 0, 40, 7, 1, 500, 25000, 2, 0, 60, 1] * 2 + [9] * 8  # 40 bins
    lo, hi, nb = 3160, 10759, 40  # 190 levels a bin
    vals = np.concatenate([np.full(n, lo + 190 * k + 77, dtype=np.int64) for k, n in enumerate(want)])
    size = 200 * ((len(vals) + 199) // 200)
    vals = np.concatenate([vals, np.full(size - len(vals), 50000)])  # padding outside the range
    log_img = vals.reshape(-1, 200).astype(np.uint16)
    log_path = os.path.join(tmp, "log.png")
    cv2.imwrite(log_path, log_img)
    counts = binned(log_img, lo, hi, nb)
    t.check(list(counts) == want, "--log: the crafted image has the intended bins (test self-check)")
    img, ps = plot(binary, t, tmp, "--log", [log_path, "--range", f"{lo}:{hi}", "--bins", str(nb), "--log"])
    if ps:
        check_bars(t, "--log", ps[0], counts, log=True)
        ys = ps[0].y_ticks()
        t.check(len(ys) == 6, "--log: a y tick per decade, 1 to 100000", str(ys))

    # ---- --cdf: a monotone curve following the cumulative share ------------------------------------
    lo, hi, nb = 3160, 10760, 50
    img, ps = plot(binary, t, tmp, "--cdf", [g16_path, "--range", f"{lo}:{hi}", "--bins", str(nb), "--cdf"])
    if ps:
        p = ps[0]
        tops = p.curve_tops()
        if t.check(all(v is not None for v in tops), "--cdf: a curve point in every plot column",
                   f"missing at {[i for i, v in enumerate(tops) if v is None][:10]}"):
            t.check(all(b <= a for a, b in zip(tops, tops[1:])), "--cdf: the curve never falls")
            cdf = np.cumsum(binned(g16, lo, hi, nb)) / np.count_nonzero((g16 >= lo) & (g16 <= hi))
            bw = p.w // nb
            exp = [p.base - 1 - round(cdf[k] * (p.h - 1)) for k in range(nb)]
            got = [tops[(k + 1) * bw - 1] for k in range(nb)]
            bad = [(k, g, e) for k, (g, e) in enumerate(zip(got, exp)) if abs(g - e) > 1]
            t.check(not bad, "--cdf: at each bar's right edge the curve is at the cumulative share", str(bad[:8]))
            t.check(got[-1] == p.base - p.h, "--cdf: 100% at the top of the plot", f"{got[-1]} vs {p.base - p.h}")
        right = img[p.base - p.h:p.base, p.x0 + p.w].astype(int)
        t.check(all(is_cdf(q) for q in right),
                "--cdf: its own axis along the right edge of the plot")

    # ---- title: the file's name -----------------------------------------------------------------
    other = os.path.join(tmp, "a_much_longer_name.png")
    shutil.copyfile(g16_path, other)
    a, pa = plot(binary, t, tmp, "title a", [g16_path])
    b, pb = plot(binary, t, tmp, "title b", [other])
    if pa and pb:
        top = pa[0].base - pa[0].h
        t.check(a.shape == b.shape and np.array_equal(a[top:], b[top:]) and not np.array_equal(a[:top], b[:top]),
                "title: another file name changes the title, not the plot")

    # ---- color: one panel per channel, each its own bars ---------------------------------------------
    rgb16 = np.stack([g16, g16 // 2 + 100, np.full_like(g16, 9000)], axis=2)  # cv2: B, G, R
    rgb_path = os.path.join(tmp, "rgb16.png")
    cv2.imwrite(rgb_path, rgb16)
    img, ps = plot(binary, t, tmp, "rgb16", [rgb_path, "--range", "0:12000", "--bins", "120"])
    if t.check(len(ps) == 4, "rgb16: panels R, G, B, Y", str(len(ps))):
        check_bars(t, "rgb16 R", ps[0], binned(rgb16[:, :, 2], 0, 12000, 120))
        check_bars(t, "rgb16 B", ps[2], binned(rgb16[:, :, 0], 0, 12000, 120))

    # ---- options ---------------------------------------------------------------------------------
    for opt in ("--log", "--cdf"):
        r = cc.run(binary, ["histogram", g16_path, opt])
        t.check(r.rc == 2 and "--plot" in r.err, f"{opt} without --plot: usage error naming --plot", str(r))
    r = cc.run(binary, ["histogram", "--help"])
    t.check(r.rc == 0 and all(o in r.out for o in ("--log", "--cdf", "--bins", "--range", "--force")),
            "histogram --help lists --log, --cdf, --bins, --range, --force", str(r))
    # --force applies to histogram: it is what lets --plot replace the input file.
    same = os.path.join(tmp, "same.png")
    shutil.copyfile(g16_path, same)
    r = cc.run(binary, ["histogram", same, "--plot", same])
    t.check(r.rc == 2 and open(same, "rb").read() == open(g16_path, "rb").read(),
            "--plot onto the input without --force: usage error, input kept", str(r))
    r = cc.run(binary, ["histogram", same, "--plot", same, "--force", "--device", "cpu"])
    t.check(r.rc == 0 and open(same, "rb").read() != open(g16_path, "rb").read(),
            "--plot onto the input with --force: replaced", str(r))

    rc = t.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

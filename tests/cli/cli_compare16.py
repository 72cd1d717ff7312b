"""cli_compare16.py — `imgpu compare` on 16-bit images (#18 item 3): metrics in 16-bit levels
(max and mean |A-B|, PSNR against 65535) checked against numpy computed here; an 8-bit image
against a 16-bit one is scaled by 257 with a note; --diff writes a 16-bit image; --max-abs takes
16-bit levels. usage: cli_compare16.py IMGPU TMP_ROOT ASSETS (needs /usr/bin/python3 with numpy
and cv2, else skipped: 77).
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:
    print("SKIP: needs numpy and cv2 (/usr/bin/python3)")
    sys.exit(77)


def metrics(out):
    m = {}
    for line in out.splitlines():
        k, _, v = line.partition(":")
        m[k.strip()] = v.strip()
    return m


def expect(ck, binary, a, b, pa, pb, what, note=None):
    r = cc.run(binary, ["compare", pa, pb])
    if not ck.check(r.rc == 0, f"{what}: compare exits 0", str(r)):
        return
    m = metrics(r.out)
    d = np.abs(a.astype(np.int64) - b.astype(np.int64))
    mse = float((d * d).mean())
    want_max, want_mean = int(d.max()), float(d.mean())
    ck.check(m.get("max abs difference") == f"{want_max} (16-bit levels)", f"{what}: max {want_max}", r.out)
    ck.check(m.get("mean abs difference") == f"{want_mean:.6f}", f"{what}: mean {want_mean:.6f}", r.out)
    psnr = m.get("PSNR", "")
    if mse == 0:
        ck.check(psnr == "inf", f"{what}: PSNR inf", r.out)
    else:
        want = 10 * math.log10(65535.0 ** 2 / mse)
        ck.check(psnr == f"{want:.2f} dB (peak 65535)", f"{what}: PSNR {want:.2f} dB against 65535", r.out)
    differing = int(np.any(d.reshape(d.shape[0], d.shape[1], -1) != 0, axis=2).sum())
    ck.check(m.get("differing pixels", "").startswith(f"{differing} of "), f"{what}: {differing} pixels differ",
             r.out)
    if note:
        ck.check(note in m.get("note", ""), f"{what}: the note says the 8-bit image was scaled", r.out)
    else:
        ck.check("note" not in m, f"{what}: no note", r.out)


def main():
    binary, tmp, assets = cc.setup("cli_compare16")
    ck = cc.Checker("cli_compare16")
    rng = np.random.default_rng(18)
    h, w = 37, 53
    g1 = rng.integers(3160, 10761, (h, w), dtype=np.uint16)
    g2 = np.clip(g1.astype(np.int64) + rng.integers(-900, 901, (h, w)), 0, 65535).astype(np.uint16)
    c1 = rng.integers(0, 65536, (h, w, 3), dtype=np.uint16)
    c2 = c1.copy()
    c2[5:9, 7:30, 1] ^= 0x5A5A
    p = {n: os.path.join(tmp, n + ".png") for n in ("g1", "g2", "c1", "c2", "g8")}
    cv2.imwrite(p["g1"], g1)
    cv2.imwrite(p["g2"], g2)
    cv2.imwrite(p["c1"], c1[:, :, ::-1])  # cv2 writes BGR; imgpu's files are RGB
    cv2.imwrite(p["c2"], c2[:, :, ::-1])
    g8 = (g2 >> 8).astype(np.uint8)
    cv2.imwrite(p["g8"], g8)

    expect(ck, binary, g1, g2, p["g1"], p["g2"], "16-bit gray pair")
    expect(ck, binary, c1, c2, p["c1"], p["c2"], "16-bit RGB pair")
    expect(ck, binary, g1, g1, p["g1"], p["g1"], "16-bit identical")
    # 8 against 16: the 8-bit samples times 257, either order
    expect(ck, binary, g8.astype(np.uint32) * 257, g1, p["g8"], p["g1"], "8-bit vs 16-bit", "scaled by 257")
    expect(ck, binary, g1, g8.astype(np.uint32) * 257, p["g1"], p["g8"], "16-bit vs 8-bit", "scaled by 257")

    # --diff: 16-bit |A-B| times 65535 // max
    diff = os.path.join(tmp, "diff.png")
    r = cc.run(binary, ["compare", p["g1"], p["g2"], "--diff", diff])
    d = np.abs(g1.astype(np.int64) - g2.astype(np.int64))
    gain = 65535 // int(d.max())
    got = cv2.imread(diff, cv2.IMREAD_UNCHANGED)
    ck.check(r.rc == 0 and got is not None and got.dtype == np.uint16 and
             np.array_equal(got.astype(np.int64), np.minimum(d * gain, 65535)),
             f"--diff of 16-bit images: 16-bit |A-B| x {gain}", str(r))
    ck.check(f"x {gain})" in r.out, "--diff prints the 16-bit gain", r.out)
    # --max-abs in 16-bit levels
    m = int(d.max())
    for n, want in ((m, 0), (m - 1, 1), (65535, 0)):
        r = cc.run(binary, ["compare", p["g1"], p["g2"], "--max-abs", str(n)])
        ck.check(r.rc == want, f"--max-abs {n} (max {m}): exit {want}", str(r))
    r = cc.run(binary, ["compare", p["g1"], p["g2"], "--max-abs", "65536"])
    ck.check(r.rc == 2, "--max-abs 65536: usage error", str(r))
    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())

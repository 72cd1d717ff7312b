"""robust_nvjpeg_short.py — issue 25 on the GPU: a JPEG whose entropy-coded scan is cut short (an
EOI after it) in `imgpu batch --device cuda`, where nvJPEG decodes (label gpu robust; exit 77
without a usable GPU or without nvJPEG in the build). The CPU refuses such a file ("corrupt JPEG
data (premature end of data segment)"); nvJPEG's engines write into a pool of buffers that the
previous batch's images used, so a decode that reports success without writing every MCU would
pass on another file's pixels.

The folder: 24 valid 4:2:0 JPEGs of 512x384 (different content each, noise over an asset, so a
leak shows) and, after them in the sorted list, cut-scan JPEGs of the same size: plain (no
restart markers) and with a restart interval (DRI). Every JPEG goes to nvJPEG
(IMGPU_NVJPEG_CPU_FIRST=0). Two runs over the same files under other names, so the sorted
order (and what each buffer held before) differs:
  - strict rule (the default): each cut file fails, named with a reason, and has no output;
    every valid file's output is the same in both runs;
  - IMGPU_NVJPEG_STRICT=0 (nvJPEG's own leniency, the buffers still zeroed first): a cut file
    is refused, or its output is the same in both runs and none of its rows equals a row of
    another file's output (the earlier image's pixels never reach it). What nvJPEG did is
    printed either way.

usage: robust_nvjpeg_short.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:
    print("skip: robust_nvjpeg_short needs cv2 and numpy")
    sys.exit(77)

binary, tmp, assets = cc.setup("robust_nvjpeg_short")


def imgpu(*args, env=None):
    e = dict(os.environ, IMGPU_NVJPEG_CPU_FIRST="0")
    e.update(env or {})
    p = subprocess.run([binary] + [str(a) for a in args], capture_output=True, timeout=600, env=e)
    return cc.Result([str(a) for a in args], p.returncode, p.stdout.decode(errors="replace"),
                     p.stderr.decode(errors="replace"), False)


# ---- skip where nvJPEG cannot run (batch_nvjpeg's rule) ------------------------------------
if "nvJPEG: yes" not in imgpu("--version").out:
    print("skip: imgpu was built without nvJPEG")
    cc.cleanup(tmp, False)
    sys.exit(77)
r = imgpu("batch", "--equalize", "--device", "cuda", "-o", os.path.join(tmp, "probe"),
          os.path.join(assets, "camera.png"))
if r.rc != 0 and ("no usable GPU" in r.err or "without CUDA support" in r.err):
    print("skip: " + r.err.strip().splitlines()[-1])
    cc.cleanup(tmp, False)
    sys.exit(77)

C = cc.Checker("robust_nvjpeg_short")
W, H, NVALID = 512, 384, 24
rng = np.random.default_rng(25)
photos = ["astronaut", "chelsea", "coffee", "horse", "brick", "clock_motion"]
base = [cv2.resize(cv2.imread(os.path.join(assets, p + ".png"), cv2.IMREAD_COLOR), (W, H),
                   interpolation=cv2.INTER_AREA) for p in photos]
q92 = [cv2.IMWRITE_JPEG_QUALITY, 92]


def cut_scan(jpeg, frac):
    """The scan's entropy-coded data cut to frac, an EOI after it (robust_short_decode's cut)."""
    sos = jpeg.rfind(b"\xff\xda")
    return jpeg[:sos + int((len(jpeg) - 2 - sos) * frac)] + b"\xff\xd9"


def enc(img, extra=()):
    ok, b = cv2.imencode(".jpg", img, q92 + list(extra))
    assert ok
    return b.tobytes()


files = {}   # name -> bytes; valid ones "v.."; cut ones "x.."
for k in range(NVALID):
    noise = rng.integers(-40, 41, size=(H, W, 3))
    img = np.clip(base[k % len(base)].astype(np.int32) + noise, 0, 255).astype(np.uint8)
    files[f"v{k:02d}"] = enc(img)
cut = {}
for k, frac in enumerate((0.3, 0.5, 0.8)):
    img = np.clip(base[(k + 2) % len(base)].astype(np.int32) + rng.integers(-40, 41, size=(H, W, 3)),
                  0, 255).astype(np.uint8)
    cut[f"xplain{k}"] = cut_scan(enc(img), frac)
    cut[f"xrst{k}"] = cut_scan(enc(img, [cv2.IMWRITE_JPEG_RST_INTERVAL, 4]), frac)
files.update(cut)
for n in cut:   # the CPU's rule, which the GPU batch must keep
    p = os.path.join(tmp, n + ".jpg")
    cc.write(p, cut[n])
    rc = imgpu("rotate", p, os.path.join(tmp, n + "_cpu.png"), "--angle", "0", "--device", "cpu")
    C.check(rc.rc == 1 and "premature end of data segment" in rc.err,
            f"{n}: the CPU refuses it (premature end of data segment)", str(rc))

# Two folders, the same files under other names: in A the cut files come last, in B they are
# spread among the valid ones (so each lands on buffers other images used before).
names = sorted(files)
valid = [n for n in names if n.startswith("v")]
order_a = valid + sorted(cut)
order_b = list(valid)
for i, n in enumerate(sorted(cut)):
    order_b.insert(4 + 4 * i, n)
srcs = {}
for tag, order in (("a", order_a), ("b", order_b)):
    d = os.path.join(tmp, "src_" + tag)
    os.makedirs(d)
    for i, n in enumerate(order):
        cc.write(os.path.join(d, f"{i:03d}_{n}.jpg"), files[n])
    srcs[tag] = (d, {n: f"{i:03d}_{n}" for i, n in enumerate(order)})


def run(tag, env):
    d, stem = srcs[tag]
    out = os.path.join(tmp, f"out_{tag}_{env.get('IMGPU_NVJPEG_STRICT', 'strict')}")
    r = imgpu("batch", "--device", "cuda", "--rotate", "0", "--format", "png", "-o", out, d, env=env)
    res = {}
    for n, s in stem.items():
        p = os.path.join(out, s + ".png")
        res[n] = cv2.imread(p, cv2.IMREAD_UNCHANGED) if os.path.exists(p) else None
    return r, res, stem


for mode, env in (("strict (default)", {}), ("IMGPU_NVJPEG_STRICT=0", {"IMGPU_NVJPEG_STRICT": "0"})):
    ra, outa, stema = run("a", env)
    rb, outb, stemb = run("b", env)
    print(f"--- {mode}\n{ra.err.strip()}\n{rb.err.strip()}")
    for r in (ra, rb):
        m = re.search(r"JPEG \(nvJPEG\): (\d+) decoded by the GPU's hardware engines, (\d+) by its CUDA "
                      r"decoder", r.err)
        C.check(m is not None and int(m.group(1)) + int(m.group(2)) >= NVALID,
                f"{mode}: nvJPEG decoded every valid file (the summary)", r.err)
    for n in valid:
        a, b = outa[n], outb[n]
        C.check(a is not None and b is not None and a.shape == (H, W, 3) and np.array_equal(a, b),
                f"{mode}: {n}: decoded, the same pixels in both orders")
    for n in sorted(cut):
        a, b = outa[n], outb[n]
        refused = all(o is None and (stem[n] + ".jpg") in r.err
                      for o, stem, r in ((a, stema, ra), (b, stemb, rb)))
        if a is None and b is None:
            print(f"{mode}: {n}: refused in both runs")
        else:
            # what came out: rows equal to a row of another file's output betray a leak
            leaked = 0
            rows = {bytes(o[y]) for m in valid for o in (outa[m], outb[m]) if o is not None
                    for y in range(H)}
            for o in (a, b):
                if o is not None:
                    leaked += sum(bytes(o[y]) in rows for y in range(H))
            zero = sum(int(not o[y].any()) for o in (a, b) if o is not None for y in range(H))
            print(f"{mode}: {n}: DECODED (a: {a is not None}, b: {b is not None}); rows equal to "
                  f"another file's: {leaked}; all-zero rows: {zero}")
            C.check(leaked == 0, f"{mode}: {n}: no row of another file's pixels in its output")
            C.check(a is not None and b is not None and np.array_equal(a, b),
                    f"{mode}: {n}: if decoded, the same output in both orders")
        if mode.startswith("strict"):
            C.check(refused, f"{mode}: {n}: the cut file fails, named with a reason, no output "
                    f"(the CPU's rule)", f"{ra.err}\n{rb.err}")
            for r, stem in ((ra, stema), (rb, stemb)):
                line = [ln for ln in r.err.splitlines() if stem[n] + ".jpg" in ln]
                C.check(line and ("corrupt" in line[0] or "premature" in line[0]),
                        f"{mode}: {n}: the reason says corrupt data", "\n".join(line) or r.err)
    for r, out in ((ra, outa), (rb, outb)):
        want = 1 if any(o is None for o in out.values()) else 0
        C.check(r.rc == want, f"{mode}: the batch exits {want} ({'a file failed' if want else 'none failed'})",
                str(r))

cc.cleanup(tmp, C.failures > 0)
sys.exit(C.end())

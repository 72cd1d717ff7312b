"""opencv_rotate.py — `imgpu rotate --crop --filter bilinear` against cv2.warpAffine.

    /usr/bin/python3 tests/opencv/opencv_rotate.py IMGPU ASSETS WORKDIR [cpu|cuda]

Reference: cv2.warpAffine(im, cv2.getRotationMatrix2D(((w-1)/2, (h-1)/2), angle, 1), (w, h),
INTER_LINEAR, BORDER_CONSTANT) — the same centre as imgpu's (w/2, h/2) with pixel centres at
(x + 0.5, y + 0.5), counterclockwise positive. OpenCV interpolates with 5-bit fixed-point
weights, so the two agree closely but not exactly: the test asks PSNR >= 35 dB over the
interior (output pixels whose source point lies MARGIN pixels inside the source, and MARGIN
pixels away from the output border), where border handling plays no part.
16-bit PNGs (CASES16): the output must stay a 16-bit PNG, and the PSNR is taken against 65535
instead of 255 (the same relative error). The 35 dB bar would not notice a result computed
at 8-bit precision (8-bit rounding noise, 257 / sqrt(12) rms, alone scores ~59 dB; imgpu's
16-bit results score 70-74 dB here), so 16-bit cases must reach MIN_PSNR16 = 65 dB.
With cpu (the reference backend, which the GPU is held to bit for bit elsewhere) also the
reference's filters and geometry against cv2.warpAffine (`reference_checks`): every filter at
seven angles on four images with stricter bars (bilinear and bicubic 50 dB, nearest 45 dB;
they reach ~58: a half-pixel centre error still scores 38-43 dB at small angles), the
clockwise rotation below 25 dB (the sign), exact multiples of 90 degrees bit for bit on a
square image, and --expand's canvas (the bounding box, whose middle equals the crop).
Exits 77 when cv2 is missing or, for cuda, when imgpu reports no usable GPU.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))  # opencv_ref
try:
    import opencv_ref as ref
except ImportError as e:
    if e.name not in ("cv2", "numpy"):   # a missing opencv_ref is a broken test, not a skip
        raise
    print(f"SKIP: {e} (needs Debian's /usr/bin/python3 with python3-opencv, python3-numpy)")
    sys.exit(77)

MIN_PSNR = 35.0
MIN_PSNR16 = 65.0
MARGIN = 2
CASES = [("camera", 30), ("camera", -17.5), ("clock_motion", 45), ("brick", 123.4),
         ("astronaut", 30), ("coffee", -60), ("chelsea", 10), ("camera", 90), ("coffee", -90)]
# Quarter turns only where w - h is even: imgpu makes every multiple of 90 degrees an exact
# pixel permutation, so when w - h is odd (chelsea, 451x300) a cropped quarter turn lands half
# a pixel off the geometric centre (src/cpu/rotate.c), where warpAffine averages neighbours.
CASES16 = [("camera16", 30), ("camera16", -17.5), ("camera16", 90), ("chelsea16", 10),
           ("chelsea16", 123.4)]


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    imgpu, assets, work = argv[1:4]
    device = argv[4] if len(argv) == 5 else "cpu"
    os.makedirs(work, exist_ok=True)
    failures = 0
    cases = [(a, angle, 8) for a, angle in CASES] + [(a, angle, 16) for a, angle in CASES16]
    # Which process computes each case. cpu: one `imgpu rotate` per case. cuda: one CUDA
    # context per process is most of the cost on a GPU machine, so the cases of one angle run
    # in ONE `imgpu batch --device cuda --rotate ANGLE --filter bilinear --crop` (the same op,
    # pixel for pixel: tests/batch/batch_gpu.py), except SINGLE, which keep `imgpu rotate --device
    # cuda` covered.
    SINGLE = {("clock_motion", 45), ("coffee", -60)}
    ops = ["--filter", "bilinear", "--crop"]
    produced = {}  # (asset, angle) -> (output path or None, why missing)
    try:
        if device == "cuda":
            for angle in sorted({a for _, a, _ in cases}):
                todo = [os.path.join(assets, n + ".png") for n, a, _ in cases
                        if a == angle and (n, a) not in SINGLE]
                if not todo:
                    continue
                outs, bp = ref.run_batch(imgpu, os.path.join(work, f"batch_{angle}.{device}"), todo,
                                         ["--rotate", str(angle)] + ops, device)
                for n, a, _ in cases:
                    p = os.path.join(assets, n + ".png")
                    if a == angle and p in outs:
                        produced[(n, a)] = (outs[p], bp.stderr.strip())
        for asset, angle, depth in cases:
            if (asset, angle) in produced:
                continue
            path = os.path.join(assets, asset + ".png")
            out = os.path.join(work, f"rot_{asset}_{angle}.{device}.png")
            try:
                ref.run_imgpu(imgpu, ["rotate", path, out, "--angle", str(angle)] + ops, device)
                produced[(asset, angle)] = (out, "")
            except RuntimeError as e:
                produced[(asset, angle)] = (None, str(e))
    except ref.NoGPU as e:
        print(f"SKIP: no usable GPU: {e}")
        return ref.SKIP

    for asset, angle, depth in cases:
        path = os.path.join(assets, asset + ".png")
        tag = f"{asset} --angle {angle}"
        peak, need = (255.0, MIN_PSNR) if depth == 8 else (65535.0, MIN_PSNR16)
        out, why = produced[(asset, angle)]
        if out is None or not os.path.exists(out):
            print(f"FAIL {tag}: no output ({out}): {why}")
            failures += 1
            continue
        src = ref.read(path, depth)
        try:
            got = ref.read(out, depth)
        except RuntimeError as e:
            print(f"FAIL {tag}: {e} (the output must keep the input's depth)")
            failures += 1
            continue
        want, m = ref.rotate_crop_linear(src, angle)
        if got.shape != want.shape:
            print(f"FAIL {tag}: shape {got.shape}, expected {want.shape} (--crop keeps the size)")
            failures += 1
            continue
        mask = ref.interior_mask(src.shape, m, MARGIN)
        p = ref.psnr(got, want, mask, peak)
        full = ref.psnr(got, want, None, peak)
        ok = p >= need
        print(f"{'ok  ' if ok else 'FAIL'} {tag} ({depth}-bit): interior PSNR {p:.2f} dB over "
              f"{int(mask.sum())} pixels (whole image {full:.2f} dB), need >= {need}")
        if ok:
            os.remove(out)
        else:
            failures += 1
            print(f"       imgpu output kept at {out}")
    print(f"{len(cases)} cases, {failures} failed")
    if device == "cpu":
        failures += reference_checks(imgpu, assets, work)
    return 1 if failures else 0


REF_BAR = {"bilinear": 50.0, "bicubic": 50.0, "nearest": 45.0}


def reference_checks(imgpu, assets, work):
    """The CPU backend's rotation, every filter, against cv2.warpAffine (the top of the file).
    Returns the number of failed checks."""
    cv2, np = ref.cv2, ref.np
    flag = {"nearest": cv2.INTER_NEAREST, "bilinear": cv2.INTER_LINEAR, "bicubic": cv2.INTER_CUBIC}
    failed = checks = 0

    def expect(name, ok, detail=""):
        nonlocal failed, checks
        checks += 1
        failed += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} reference: {name} {detail}")

    def rot(path, angle, filt, canvas):
        out = os.path.join(work, "ref_out.png")
        ref.run_imgpu(imgpu, ["rotate", path, out, "--angle", repr(angle), "--filter", filt, "--" + canvas,
                              "--quiet"], "cpu")
        return cv2.imread(out, cv2.IMREAD_UNCHANGED)

    rng = np.random.default_rng(90)
    noise = os.path.join(work, "ref_noise.png")
    cv2.imwrite(noise, cv2.GaussianBlur(rng.integers(0, 256, (61, 97, 3), dtype=np.uint8), (0, 0), 1.5))
    images = [("astronaut", os.path.join(assets, "astronaut.png")), ("camera", os.path.join(assets, "camera.png")),
              ("chelsea 451x300", os.path.join(assets, "chelsea.png")), ("smooth noise 97x61", noise)]
    for name, path in images:
        img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        h, w = img.shape[:2]
        for angle in [17.0, 30.0, 45.0, -33.3, 123.4, 200.0, 271.5]:
            m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), angle, 1)
            mask = ref.interior_mask(img.shape, m, MARGIN)
            for filt in ["bilinear", "bicubic", "nearest"]:
                want = cv2.warpAffine(img, m, (w, h), flags=flag[filt], borderMode=cv2.BORDER_CONSTANT,
                                      borderValue=0)
                p = ref.psnr(rot(path, angle, filt, "crop"), want, mask)
                expect(f"{name} {angle} {filt}", p >= REF_BAR[filt], f"PSNR {p:.1f} dB")
            # the opposite direction must fail the bar: the test sees the sign
            wrong = cv2.warpAffine(img, cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -angle, 1), (w, h))
            p = ref.psnr(rot(path, angle, "bilinear", "crop"), wrong, mask)
            expect(f"{name} {angle} clockwise is not ours", p < 25, f"PSNR {p:.1f} dB")
    # exact quarter turns of a square image equal warpAffine bit for bit
    sq = os.path.join(work, "ref_square.png")
    sq_img = rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)
    cv2.imwrite(sq, sq_img)
    for angle in [90.0, 180.0, 270.0, -90.0, 450.0]:
        want = cv2.warpAffine(sq_img, cv2.getRotationMatrix2D((19.5, 19.5), angle, 1), (40, 40),
                              flags=cv2.INTER_NEAREST)
        for filt in ["nearest", "bilinear", "bicubic"]:
            got = rot(sq, angle, filt, "crop")
            expect(f"square {angle} {filt} exact", got is not None and np.array_equal(got, want))
    # --expand: the canvas is the bounding box; its middle w x h equals the crop (same centre)
    path = images[0][1]
    img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    h, w = img.shape[:2]
    for angle in [30.0, 123.4]:
        out = rot(path, angle, "bilinear", "expand")
        t = math.radians(angle)
        bw = w * abs(math.cos(t)) + h * abs(math.sin(t))
        bh = w * abs(math.sin(t)) + h * abs(math.cos(t))
        expect(f"expand {angle} size", out.shape[:2] == (math.ceil(bh - 1e-6), math.ceil(bw - 1e-6)),
               f"{out.shape[1]}x{out.shape[0]}")
        oh, ow = out.shape[:2]
        if (ow - w) % 2 == 0 and (oh - h) % 2 == 0:
            x0, y0 = (ow - w) // 2, (oh - h) // 2
            m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), angle, 1)
            p = ref.psnr(out[y0:y0 + h, x0:x0 + w], rot(path, angle, "bilinear", "crop"),
                         ref.interior_mask(img.shape, m, MARGIN))
            expect(f"expand {angle} centre = crop", p >= 45, f"PSNR {p:.1f} dB")
    print(f"reference: {checks} checks, {failed} failed")
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))

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
Exits 77 when cv2 is missing or, for cuda, when imgpu reports no usable GPU.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))  # opencv_ref
try:
    import opencv_ref as ref
except ImportError as e:
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""cli_resize.py — `imgpu resize` and `imgpu batch --resize` (issue 28): the sizing rules
(--size, --width, --height, both, --scale half to even, --fit), computed here from the rules
stated in src/backend/cpu/resize.c; edge sizes (1x1, 1xN, Nx1, a huge upscale bounded by
--max-pixels without touching an existing output, a size with a side of 0 refused, negative
values refused with exit 2, two ways of sizing refused; 0 alone, or nothing, is "not given":
the input's size); the premultiplied alpha rule (no dark fringe where an opaque white
half meets a transparent black one); in a batch chain, --filter sets the latest op that has it.
usage: cli_resize.py IMGPU TMP_ROOT ASSETS (needs /usr/bin/python3 with numpy and cv2, else 77).
"""
import glob
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


def main():
    binary, tmp, assets = cc.setup("cli_resize")
    ck = cc.Checker("cli_resize")
    src = os.path.join(assets, "chelsea.png")  # 451 x 300
    w, h = 451, 300
    out = os.path.join(tmp, "o.png")

    def size_of(args, inp=src):
        if os.path.exists(out):
            os.remove(out)
        r = cc.run(binary, ["resize", inp, out, "--device", "cpu"] + args)
        if not ck.check(r.rc == 0, f"resize {args} exits 0", str(r)):
            return None
        im = cv2.imread(out, cv2.IMREAD_UNCHANGED)
        return (im.shape[1], im.shape[0])

    def half_up(x):
        return max(1, int(np.floor(x + 0.5)))

    cases = [
        (["--size", "640x480"], (640, 480)),
        (["--width", "200"], (200, half_up(h * 200 / w))),
        (["--height", "77"], (half_up(w * 77 / h), 77)),
        (["--width", "50", "--height", "60"], (50, 60)),
        (["--scale", "0.5"], (int(np.rint(w * 0.5)), int(np.rint(h * 0.5)))),   # 225.5 -> 226 (half even)
        (["--scale", "1.5"], (int(np.rint(w * 1.5)), int(np.rint(h * 1.5)))),
        (["--fit", "100x100"], (100, half_up(h * 100 / w))),
        (["--fit", "1000x150"], (half_up(w * 150 / h), 150)),
        (["--size", "1x1", "--filter", "lanczos"], (1, 1)),
        (["--size", "1x97", "--filter", "bicubic"], (1, 97)),
        (["--size", "333x1", "--filter", "area"], (333, 1)),
        (["--scale", "0.0001"], (1, 1)),
        ([], (w, h)),                      # nothing given (0 is "not given"): the input's size
        (["--width", "0"], (w, h)),
    ]
    for args, want in cases:
        got = size_of(args)
        ck.check(got == want, f"resize {args}: {want}", f"got {got}")
    # a 1x1 and a 1xN input, enlarged: every output sample is the one input sample
    one = os.path.join(tmp, "one.png")
    cv2.imwrite(one, np.full((1, 1, 3), (10, 20, 30), np.uint8))
    for f in ("nearest", "bilinear", "bicubic", "area", "lanczos"):
        if size_of(["--size", "7x5", "--filter", f], one) == (7, 5):
            im = cv2.imread(out, cv2.IMREAD_UNCHANGED)
            ck.check((im == np.array([10, 20, 30], np.uint8)).all(), f"1x1 -> 7x5 {f}: constant", str(im[0, :2]))

    # refusals: exit 2 for bad values, 1 for a plan over the limits; an existing output survives
    keep = os.path.join(tmp, "keep.png")
    cc.write(keep, cc.read(one))
    before = cc.read(keep)
    for args, rc in [(["--size", "0x5"], 1), (["--fit", "9x0"], 1), (["--width", "-3"], 2), (["--scale", "-1"], 2),
                     (["--fit", "10x"], 2), (["--size", "10x10", "--scale", "2"], 1),
                     (["--scale", "40", "--max-pixels", "1000000"], 1)]:
        r = cc.run(binary, ["resize", src, keep, "--device", "cpu"] + args)
        ck.check(r.rc == rc, f"resize {args} exits {rc}", str(r))
        ck.check(r.err.startswith("imgpu"), f"resize {args}: one message", r.err)
        ck.check(cc.read(keep) == before, f"resize {args}: the existing output is untouched")

    # alpha: left half opaque white, right half transparent black -> no grey fringe
    rgba = np.zeros((20, 40, 4), np.uint8)
    rgba[:, :20] = (255, 255, 255, 255)
    a_in = os.path.join(tmp, "alpha.png")
    cv2.imwrite(a_in, rgba)
    for f in ("bilinear", "bicubic", "area", "lanczos"):
        if size_of(["--size", "27x13", "--filter", f], a_in) == (27, 13):
            im = cv2.imread(out, cv2.IMREAD_UNCHANGED)
            vis = im[..., 3] > 0
            ck.check(vis.any() and (im[..., :3][vis] == 255).all(),
                     f"alpha {f}: every visible pixel stays white", str(im[6, 10:18]))
            ck.check((im[..., 3] > 0).sum() < im.shape[0] * im.shape[1] and (im[..., 3] < 255).any(),
                     f"alpha {f}: the edge is partly transparent", str(im[6, 10:18, 3]))

    # --antialias (Pillow's filters): the alpha rule holds too; a 1x1 stays constant; refused
    # with nearest (exit 1, the existing output untouched); batch == single command
    for f in ("bilinear", "bicubic", "area", "lanczos"):
        if size_of(["--size", "13x7", "--filter", f, "--antialias"], a_in) == (13, 7):
            im = cv2.imread(out, cv2.IMREAD_UNCHANGED)
            vis = im[..., 3] > 0
            ck.check(vis.any() and (im[..., :3][vis] == 255).all(),
                     f"alpha {f} --antialias: every visible pixel stays white", str(im[3, 4:10]))
        if size_of(["--size", "7x5", "--filter", f, "--antialias"], one) == (7, 5):
            im = cv2.imread(out, cv2.IMREAD_UNCHANGED)
            ck.check((im == np.array([10, 20, 30], np.uint8)).all(), f"1x1 -> 7x5 {f} --antialias: constant")
    r = cc.run(binary, ["resize", src, keep, "--device", "cpu", "--width", "9", "--filter", "nearest", "--antialias"])
    ck.check(r.rc == 1 and "antialias" in r.err, "resize --filter nearest --antialias refused", str(r))
    ck.check(cc.read(keep) == before, "resize --filter nearest --antialias: the existing output is untouched")
    single = size_of(["--fit", "100x100", "--filter", "lanczos", "--antialias"]) and cc.read(out)
    aout = os.path.join(tmp, "aa")
    r = cc.run(binary, ["batch", "-o", aout, "--device", "cpu", src, "--resize", "--fit", "100x100", "--filter",
                        "lanczos", "--antialias"])
    ck.check(r.rc == 0, "batch --resize --antialias", str(r))
    got = [p for p in glob.glob(os.path.join(aout, "*.png"))]
    ck.check(len(got) == 1 and cc.read(got[0]) == single, "batch --resize --antialias == imgpu resize --antialias")
    plain = size_of(["--fit", "100x100", "--filter", "lanczos"]) and cc.read(out)
    ck.check(plain != single, "--antialias changes the result (Pillow's filter, not cv2's)")

    # batch: --filter sets the latest op that has it
    bout = os.path.join(tmp, "b")
    r = cc.run(binary, ["batch", "-o", bout, "--device", "cpu", "--manifest", "m.json", src, "--rotate", "10",
                        "--filter", "bicubic", "--resize", "--fit", "64x64", "--filter", "nearest"])
    if r.rc != 0:  # no --manifest option on this build: plain run
        r = cc.run(binary, ["batch", "-o", bout, "--device", "cpu", src, "--rotate", "10", "--filter", "bicubic",
                            "--resize", "--fit", "64x64", "--filter", "nearest"])
    ck.check(r.rc == 0, "batch --rotate 10 --filter bicubic --resize --fit 64x64 --filter nearest", str(r))
    outs = [p for p in glob.glob(os.path.join(bout, "*")) if p.endswith(".png")]
    ck.check(len(outs) == 1, "batch wrote one image", str(outs))
    text = "".join(open(p, errors="replace").read() for p in glob.glob(os.path.join(bout, "*")) if not p.endswith(".png"))
    if text:
        ck.check("filter=bicubic" in text and "filter=nearest" in text, "manifest: rotate bicubic, resize nearest", text[:400])
    r = cc.run(binary, ["batch", "-o", bout, "--device", "cpu", src, "--filter", "nearest", "--resize", "--scale", "2"])
    ck.check(r.rc == 2 and "must follow" in r.err, "batch --filter before any op: usage error", str(r))

    cc.cleanup(tmp, ck.failures)
    sys.exit(ck.end())


if __name__ == "__main__":
    main()

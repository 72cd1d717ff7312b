"""make_golden.py — write one OpenCV-made golden image (called by regenerate.sh).

    /usr/bin/python3 make_golden.py STB_DECODE INPUT OUTPUT equalize [--mode MODE]
    /usr/bin/python3 make_golden.py STB_DECODE INPUT OUTPUT flip [--horizontal] [--vertical] [--transpose]
    /usr/bin/python3 make_golden.py STB_DECODE INPUT OUTPUT crop --rect X,Y,W,H
    /usr/bin/python3 make_golden.py STB_DECODE INPUT OUTPUT crop --size WxH [--gravity G]
    /usr/bin/python3 make_golden.py STB_DECODE INPUT OUTPUT convert

The input is decoded as imgpu decodes it: a JPEG by OpenCV's imread (libjpeg-turbo, which
imgpu's JPEG codec matches bit for bit, tests/io/io_jpeg_cv2.py), any other format by stb_image
(through the STB_DECODE helper, the decoder imgpu uses for them), then equalized by OpenCV
(tests/common/opencv_ref.py), and written as PNG at zlib level 9. The geometry ops (issue 28)
read a PNG with cv2.imread at its own depth (a lossless decode: any decoder gives its samples)
and apply cv2.flip / cv2.transpose (the mirrors first, then the transpose: src/op/flip.c) or
a numpy ROI (crop --rect; crop --size placed by --gravity with ImageMagick's integer
arithmetic, src/op/crop.c); convert writes the decoded input as it is.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import opencv_ref  # noqa: E402


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    stb_decode, inp, out, op = argv[1:5]
    args = argv[5:]
    if op in ("flip", "crop", "convert"):
        return geometry(inp, out, op, args)
    if op == "resize":
        return resize(inp, out, args, stb_decode)
    if op != "equalize":
        sys.exit(f"make_golden.py: no OpenCV reference for operation {op!r}")
    mode = "luminance"
    if args[:1] == ["--mode"] and len(args) == 2:
        mode = args[1]
    elif args:
        sys.exit(f"make_golden.py: unexpected arguments {args}")
    with open(inp, "rb") as f:
        is_jpeg = f.read(3) == b"\xff\xd8\xff"
    im = opencv_ref.read(inp) if is_jpeg else opencv_ref.read_stb(inp, stb_decode)
    opencv_ref.write(out, opencv_ref.equalize(im, mode))


def geometry(inp, out, op, args):
    import cv2
    im = cv2.imread(inp, cv2.IMREAD_UNCHANGED)
    if im is None:
        sys.exit(f"make_golden.py: cv2.imread could not read {inp}")
    if op == "convert":
        if args:
            sys.exit(f"make_golden.py: unexpected convert arguments {args}")
    elif op == "flip":
        if not args or set(args) - {"--horizontal", "--vertical", "--transpose"}:
            sys.exit(f"make_golden.py: unexpected flip arguments {args}")
        if "--horizontal" in args:
            im = cv2.flip(im, 1)
        if "--vertical" in args:
            im = cv2.flip(im, 0)
        if "--transpose" in args:
            im = cv2.transpose(im)
    else:
        opts = dict(zip(args[::2], args[1::2]))
        if len(args) % 2 or not (set(opts) == {"--rect"} or "--size" in opts and set(opts) <= {"--size", "--gravity"}):
            sys.exit(f"make_golden.py: unexpected crop arguments {args}")
        if "--rect" in opts:
            x, y, w, h = (int(v) for v in opts["--rect"].split(","))
        else:
            gravities = ["northwest", "north", "northeast", "west", "center", "east", "southwest", "south",
                         "southeast"]
            g = gravities.index(opts.get("--gravity", "center"))
            w, h = (int(v) for v in opts["--size"].lower().split("x"))
            ih, iw = im.shape[:2]
            x = (0, iw // 2 - w // 2, iw - w)[g % 3]
            y = (0, ih // 2 - h // 2, ih - h)[g // 3]
        im = im[y:y + h, x:x + w]
    # cv2's channel order both ways: no conversion needed for a pure geometry op
    if not cv2.imwrite(out, im, [cv2.IMWRITE_PNG_COMPRESSION, 9]):
        sys.exit(f"make_golden.py: cv2.imwrite could not write {out}")
def resize(inp, out, args, stb_decode):
    """cv2.resize: --size WxH or --scale F, --filter NAME (imgpu resize's semantics are cv2's)."""
    import cv2
    inter = {"nearest": cv2.INTER_NEAREST_EXACT, "bilinear": cv2.INTER_LINEAR, "bicubic": cv2.INTER_CUBIC,
             "area": cv2.INTER_AREA, "lanczos": cv2.INTER_LANCZOS4}
    opts = dict(zip(args[::2], args[1::2]))
    with open(inp, "rb") as f:
        is_jpeg = f.read(3) == b"\xff\xd8\xff"
    im = opencv_ref.read(inp) if is_jpeg else opencv_ref.read_stb(inp, stb_decode)
    flt = inter[opts.get("--filter", "bilinear")]
    if "--size" in opts:
        w, h = (int(v) for v in opts["--size"].lower().split("x"))
        res = cv2.resize(im, (w, h), interpolation=flt)
    else:
        f = float(opts["--scale"])
        res = cv2.resize(im, None, fx=f, fy=f, interpolation=flt)
    opencv_ref.write(out, res)


if __name__ == "__main__":
    main(sys.argv)

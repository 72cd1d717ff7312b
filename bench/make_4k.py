"""make_4k.py — the benchmark's 4K photo: assets/coffee.png (600x400), cropped to 16:9
(600x338, rows 31..368) and upscaled to 3840x2160 with cv2.resize(INTER_CUBIC), saved as an
RGB PNG with OpenCV's default settings. Run by bench/im_equalize.sh when the file is missing:

    /usr/bin/python3 bench/make_4k.py ASSETS_DIR OUT.png
"""
import sys

import cv2

assets, out = sys.argv[1:3]
im = cv2.imread(f"{assets}/coffee.png", cv2.IMREAD_COLOR)
im = im[31:31 + 338, :, :]
big = cv2.resize(im, (3840, 2160), interpolation=cv2.INTER_CUBIC)
if not cv2.imwrite(out, big):
    sys.exit(f"cannot write {out}")
print(f"wrote {out}: 3840x2160 RGB, from coffee.png cropped to 600x338, INTER_CUBIC")

#!/usr/bin/python3
"""opencv_exif_orient.py — what a viewer shows, checked against OpenCV. For each EXIF
orientation 1..8, in both byte orders, gray and colour: a JPEG (OpenCV's encoder) gets an APP1
segment with our EXIF blob; cv2.imread with IMREAD_IGNORE_ORIENTATION gives the stored pixels,
plain cv2.imread the pixels OpenCV shows. exif_dump then parses the same APP1 payload with
imgpu_exif_parse and turns the stored pixels with imgpu_image_orient: the result must equal
OpenCV's exactly (both reads decode the same JPEG with the same libjpeg-turbo, so no
tolerance), and the parsed Make/Model/date/pixel size the values written.
Usage: opencv_exif_orient.py EXIF_DUMP. Exits 77 (skip) without cv2."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import exif_blob  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError:
    print("numpy/cv2 not available: skipping")
    sys.exit(77)

DUMP = sys.argv[1]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


def with_app1(jpeg, payload):
    assert jpeg[:2] == b"\xff\xd8"
    seg = b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload
    return jpeg[:2] + seg + jpeg[2:]


rng = np.random.default_rng(16)
W, H = 40, 24   # not square, whole 8x8 and 16x16 blocks
with tempfile.TemporaryDirectory() as tmp:
    for channels, flag in ((3, cv2.IMREAD_COLOR), (1, cv2.IMREAD_GRAYSCALE)):
        shape = (H, W, 3) if channels == 3 else (H, W)
        img = rng.integers(0, 256, size=shape, dtype=np.uint8)
        ok, enc = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        for big_endian in (False, True):
            for o in range(1, 9):
                what = f"{'MM' if big_endian else 'II'} orientation {o}, {channels} channel(s)"
                payload = exif_blob.app1(exif_blob.camera(o, big_endian, width=W, height=H))
                jpg = os.path.join(tmp, "o.jpg")
                with open(jpg, "wb") as f:
                    f.write(with_app1(enc.tobytes(), payload))
                stored = cv2.imread(jpg, flag | cv2.IMREAD_IGNORE_ORIENTATION)
                shown = cv2.imread(jpg, flag)
                # the oracle must have done something: a noise image changes under 2..8
                if o != 1 and shown.shape == stored.shape and np.array_equal(shown, stored):
                    fail(f"{what}: OpenCV did not apply the orientation")
                    continue
                blob, raw_in, raw_out = (os.path.join(tmp, n) for n in ("b", "in.raw", "out.raw"))
                with open(blob, "wb") as f:
                    f.write(payload)
                stored.tofile(raw_in)
                r = subprocess.run([DUMP, blob, str(W), str(H), str(channels), "8", raw_in,
                                    raw_out], capture_output=True, text=True)
                if r.returncode != 0:
                    fail(f"{what}: exif_dump: {r.stderr.strip()}")
                    continue
                got = dict(line.split("=", 1) for line in r.stdout.splitlines())
                want = {"orientation": str(o), "make": "Canon", "model": "Canon EOS 5D Mark IV",
                        "datetime_original": "2020:01:02 03:04:05", "pixel_x": str(W),
                        "pixel_y": str(H), "has_gps": "1"}
                for k, v in want.items():
                    if got.get(k) != v:
                        fail(f"{what}: {k} = {got.get(k)!r}, want {v!r}")
                ow, oh = map(int, got["size"].split())
                if (ow, oh) != (shown.shape[1], shown.shape[0]):
                    fail(f"{what}: size {ow}x{oh}, OpenCV {shown.shape[1]}x{shown.shape[0]}")
                    continue
                out = np.fromfile(raw_out, np.uint8).reshape(shown.shape)
                if not np.array_equal(out, shown):
                    fail(f"{what}: {int((out != shown).sum())} samples differ from OpenCV's")
print(f"{failures} failures" if failures else "all orientations match OpenCV")
sys.exit(1 if failures else 0)

"""Shared fixtures of the Python module's tests (tests/python/python.cmake runs them under pytest
with the built module on PYTHONPATH): the built CLI to compare against, the assets, and small test
images of every layout (gray, gray+alpha, RGB, RGBA at 8 and 16 bits), cut from the assets so the
whole suite runs in seconds."""
import os
import subprocess

import numpy as np
import pytest

import imgpu

CLI = os.environ.get("IMGPU_CLI")
ASSETS = os.environ.get("IMGPU_ASSETS", os.path.join(os.path.dirname(__file__), "..", "..", "assets"))


def run_cli(*args, check=True):
    """`imgpu ARGS --quiet`; returns the CompletedProcess."""
    if not CLI:
        pytest.skip("IMGPU_CLI not set (run through ctest)")
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError("imgpu %s: exit %d: %s" % (" ".join(map(str, args)), r.returncode, r.stderr))
    return r


def asset(name):
    return os.path.join(ASSETS, name)


def _layouts():
    """name -> array: crops of the assets (odd sizes, not multiples of the CLAHE grid)."""
    rgb8 = imgpu.read(asset("chelsea.png"))[40:137, 60:203]          # 97 x 143 x 3
    gray8 = imgpu.read(asset("camera.png"))[100:171, 50:165]         # 71 x 115
    rgb16 = imgpu.read(asset("chelsea16.png"))[30:113, 70:171]       # 83 x 101 x 3, uint16
    gray16 = imgpu.read(asset("camera16.png"))[200:261, 10:99]       # 61 x 89, uint16
    assert rgb16.dtype == np.uint16 and gray16.dtype == np.uint16
    yy, xx = np.mgrid[0:rgb8.shape[0], 0:rgb8.shape[1]]
    alpha8 = ((xx * 255) // (rgb8.shape[1] - 1)).astype(np.uint8)
    yy, xx = np.mgrid[0:rgb16.shape[0], 0:rgb16.shape[1]]
    alpha16 = ((yy * 65535) // (rgb16.shape[0] - 1)).astype(np.uint16)
    yy, xx = np.mgrid[0:gray8.shape[0], 0:gray8.shape[1]]
    galpha8 = (255 - (yy * 255) // (gray8.shape[0] - 1)).astype(np.uint8)
    return {
        "gray8": np.ascontiguousarray(gray8),
        "gray_alpha8": np.dstack([gray8, galpha8]),
        "rgb8": np.ascontiguousarray(rgb8),
        "rgba8": np.dstack([rgb8, alpha8]),
        "gray16": np.ascontiguousarray(gray16),
        "rgb16": np.ascontiguousarray(rgb16),
        "rgba16": np.dstack([rgb16, alpha16]),
    }


LAYOUTS = _layouts()


@pytest.fixture(params=sorted(LAYOUTS))
def layout(request, tmp_path):
    """(name, array, path of the same pixels as a PNG the CLI reads)."""
    a = LAYOUTS[request.param]
    p = tmp_path / ("%s.png" % request.param)
    imgpu.write(p, a)
    assert np.array_equal(imgpu.read(p), a)
    return request.param, a, str(p)

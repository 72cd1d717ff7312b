"""Every op, through the module, gives the bytes the imgpu command gives for the same pixels and
options (CPU here; CUDA on the GPU machine: IMGPU_PYTEST_DEVICE=cuda), on gray, gray+alpha, RGB
and RGBA images at 8 and 16 bits; encode/write give the CLI's file bytes; histogram gives
`imgpu histogram --csv`'s counts; info gives `imgpu info --json`'s fields."""
import csv
import io
import json
import os

import numpy as np
import pytest

import imgpu
from conftest import LAYOUTS, asset, run_cli

DEVICE = os.environ.get("IMGPU_PYTEST_DEVICE", "cpu")

# (CLI command + options, the same op in Python)
CASES = [
    (["equalize"], lambda a: imgpu.equalize(a, device=DEVICE)),
    (["equalize", "--mode", "per-channel", "--formula", "pil"],
     lambda a: imgpu.equalize(a, mode="per-channel", formula="pil", device=DEVICE)),
    (["equalize", "--formula", "imagemagick"], lambda a: imgpu.equalize(a, formula="imagemagick", device=DEVICE)),
    (["clahe"], lambda a: imgpu.clahe(a, device=DEVICE)),
    (["clahe", "--clip", "2.5", "--tiles", "4x3", "--mode", "per-channel"],
     lambda a: imgpu.clahe(a, clip=2.5, tiles=(4, 3), mode="per-channel", device=DEVICE)),
    (["clahe", "--clip", "0", "--tiles", "5x5"], lambda a: imgpu.clahe(a, clip=0, tiles=5, device=DEVICE)),
    (["rotate", "--angle", "30"], lambda a: imgpu.rotate(a, 30, device=DEVICE)),
    (["rotate", "--angle", "-17.5", "--filter", "bicubic", "--crop", "--background", "#336699"],
     lambda a: imgpu.rotate(a, -17.5, filter="bicubic", expand=False, background="#336699", device=DEVICE)),
    (["rotate", "--angle", "45", "--filter", "nearest", "--background", "255,128,0,200"],
     lambda a: imgpu.rotate(a, 45, filter="nearest", background=(255, 128, 0, 200), device=DEVICE)),
    (["rotate", "--angle", "90"], lambda a: imgpu.rotate(a, 90, device=DEVICE)),
    (["resize", "--fit", "37x23", "--filter", "lanczos", "--antialias"],
     lambda a: imgpu.resize(a, fit=(37, 23), filter="lanczos", antialias=True, device=DEVICE)),
    (["resize", "--size", "71x45", "--filter", "bicubic", "--antialias"],
     lambda a: imgpu.resize(a, size=(71, 45), filter="bicubic", antialias=True, device=DEVICE)),
    # op-norm (issue 28): functions generated from the table, keywords '-' -> '_'
    (["normalize"], lambda a: imgpu.normalize(a, device=DEVICE)),
    (["normalize", "--black-clip", "2", "--white-clip", "1", "--mode", "per-channel"],
     lambda a: imgpu.normalize(a, black_clip=2, white_clip=1, mode="per-channel", device=DEVICE)),
    (["autolevel"], lambda a: imgpu.autolevel(a, device=DEVICE)),
    (["autolevel", "--mode", "per-channel"], lambda a: imgpu.autolevel(a, mode="per-channel", device=DEVICE)),
]


@pytest.mark.parametrize("case", range(len(CASES)), ids=[" ".join(c[0]) for c in CASES])
def test_op_equals_cli(layout, case, tmp_path):
    name, a, path = layout
    cli_args, fn = CASES[case]
    out = tmp_path / "cli_out.png"
    run_cli(cli_args[0], path, out, *cli_args[1:], "--device", DEVICE, "--quiet")
    want = imgpu.read(out)
    got = fn(a)
    assert got.dtype == a.dtype
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want), "%s on %s: %d samples differ" % (cli_args, name, int((got != want).sum()))


def test_chain_equals_cli_steps(tmp_path):
    """apply() runs a chain in one call: the same bytes as the CLI's commands one after another."""
    a = LAYOUTS["rgba8"]
    p = tmp_path / "in.png"
    imgpu.write(p, a)
    run_cli("clahe", p, tmp_path / "s1.png", "--clip", "3", "--quiet")
    run_cli("rotate", tmp_path / "s1.png", tmp_path / "s2.png", "--angle", "12", "--filter", "bicubic", "--quiet")
    got = imgpu.apply(a, [imgpu.op("clahe", clip=3), imgpu.op("rotate", angle=12, filter="bicubic")], device=DEVICE)
    assert np.array_equal(got, imgpu.read(tmp_path / "s2.png"))


def _csv_columns(text):
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    return header[1:], np.array([[int(x) for x in r[1:]] for r in body], dtype=np.uint64).T


@pytest.mark.parametrize("name", ["gray8", "rgb8", "rgba8", "gray_alpha8", "gray16", "rgb16"])
def test_histogram_equals_cli_csv(name, tmp_path):
    a = LAYOUTS[name]
    p = tmp_path / "in.png"
    imgpu.write(p, a)
    args = ["histogram", p, "--csv", "--quiet"]
    if a.dtype == np.uint16:
        args += ["--bins", "65536"]
    cols, counts = _csv_columns(run_cli(*args).stdout)
    h = imgpu.histogram(a, device=DEVICE)
    assert h.dtype == np.uint32
    levels = 65536 if a.dtype == np.uint16 else 256
    channels = 1 if a.ndim == 2 else a.shape[2]
    assert h.shape == (channels + (1 if channels >= 3 else 0), levels)
    assert counts.shape == h.shape, (cols, counts.shape, h.shape)
    assert np.array_equal(h, counts)
    assert int(h[0].sum()) == a.shape[0] * a.shape[1]


@pytest.mark.parametrize("ext,opts,py", [
    ("jpg", ["--quality", "80", "--subsampling", "444"], dict(quality=80, subsampling="444")),
    ("jpg", ["--progressive", "--optimize"], dict(progressive=True, optimize=True)),
    ("webp", ["--lossless"], dict(lossless=True)),
    ("webp", ["--quality", "60"], dict(quality=60)),
    ("tif", ["--compression", "lzw"], dict(compression="lzw")),
    ("bmp", [], {}),
])
def test_encode_and_write_equal_cli_bytes(ext, opts, py, tmp_path):
    a = LAYOUTS["rgb8"]
    p = tmp_path / "in.png"
    imgpu.write(p, a)
    cli_out = tmp_path / ("cli." + ext)
    run_cli("equalize", p, cli_out, "--strip", *opts, "--quiet")
    want = cli_out.read_bytes()
    eq = imgpu.equalize(a)
    assert imgpu.encode(eq, ext, **py) == want
    imgpu.write(tmp_path / ("py." + ext), eq, **py)
    assert (tmp_path / ("py." + ext)).read_bytes() == want


def test_depth8_option(tmp_path):
    a = LAYOUTS["rgb16"]
    p = tmp_path / "in.png"
    imgpu.write(p, a)
    run_cli("equalize", p, tmp_path / "cli.png", "--depth", "8", "--quiet")
    imgpu.write(tmp_path / "py.png", imgpu.equalize(a), depth=8)
    got = imgpu.read(tmp_path / "py.png")
    assert got.dtype == np.uint8
    assert np.array_equal(got, imgpu.read(tmp_path / "cli.png"))


@pytest.mark.parametrize("name", ["rocket.jpg", "chelsea16.png", "camera.png"])
def test_info_equals_cli_json(name):
    path = asset(name)
    want = json.loads(run_cli("info", "--json", path).stdout)
    assert imgpu.info(path) == want


def test_read_path_bytes_and_decode_agree():
    path = asset("rocket.jpg")
    a = imgpu.read(path)
    with open(path, "rb") as f:
        data = f.read()
    assert np.array_equal(imgpu.read(data), a)
    assert np.array_equal(imgpu.decode(data), a)
    assert np.array_equal(imgpu.decode(bytearray(data)), a)
    assert np.array_equal(imgpu.decode(memoryview(data)), a)
    assert a.shape == (427, 640, 3) and a.dtype == np.uint8
    assert a.flags.writeable and a.flags.c_contiguous

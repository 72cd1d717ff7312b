"""The module's surface: arrays in (buffer protocol, __array_interface__, __dlpack__, strided and
misaligned views), errors (TypeError, ValueError with the CLI's ranges, FileNotFoundError,
imgpu.Error, CUDA arrays without a GPU), out=, contexts, op objects, signatures and docstrings,
decode_batch / encode_batch, and imgpu.batch against `imgpu batch`."""
import inspect
import os

import numpy as np
import pytest

import imgpu
from conftest import LAYOUTS, asset, run_cli

RGB = LAYOUTS["rgb8"]
RGB16 = LAYOUTS["rgb16"]


# ---- signatures and docstrings from the op table ----------------------------------------------

def test_signatures_and_docs():
    assert set(imgpu.ops) >= {"equalize", "clahe", "rotate", "histogram"}
    s = inspect.signature(imgpu.clahe)
    assert s.parameters["clip"].default == 40.0
    assert s.parameters["tiles"].default == (8, 8)
    assert s.parameters["mode"].default == "luminance"
    assert s.parameters["clip"].kind is inspect.Parameter.KEYWORD_ONLY
    r = inspect.signature(imgpu.rotate)
    assert r.parameters["angle"].default is inspect.Parameter.empty
    assert r.parameters["filter"].default == "bilinear" and r.parameters["expand"].default is True
    assert r.parameters["background"].default is None
    e = inspect.signature(imgpu.equalize)
    assert e.parameters["formula"].default == "opencv"
    doc = imgpu.clahe.__doc__
    assert "default 40.0" in doc and "range 0..1000000" in doc and "range 1..256" in doc
    assert "'nearest' | 'bilinear' | 'bicubic', default 'bilinear'" in imgpu.rotate.__doc__


def test_defaults_are_the_constructors():
    """The signature's defaults, passed explicitly, give what the op gives with none (the C
    side starts from op.h's constructors)."""
    assert np.array_equal(imgpu.clahe(RGB), imgpu._imgpu._run_op("clahe", RGB, {}))
    assert np.array_equal(imgpu.rotate(RGB, 10), imgpu._imgpu._run_op("rotate", RGB, {"angle": 10}))
    assert np.array_equal(imgpu.equalize(RGB), imgpu._imgpu._run_op("equalize", RGB, {}))


# ---- parameter errors: the CLI's ranges -------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: imgpu.clahe(RGB, clip=-1),
    lambda: imgpu.clahe(RGB, clip=1000001),
    lambda: imgpu.clahe(RGB, clip=float("nan")),
    lambda: imgpu.clahe(RGB, tiles=(0, 8)),
    lambda: imgpu.clahe(RGB, tiles=(8, 257)),
    lambda: imgpu.clahe(RGB, tiles=(8, 8, 8)),
    lambda: imgpu.clahe(RGB, mode="lum"),
    lambda: imgpu.equalize(RGB, formula="gimp"),
    lambda: imgpu.rotate(RGB, 10, filter="cubic"),
    lambda: imgpu.rotate(RGB, float("inf")),
    lambda: imgpu.rotate(RGB, 10, background="mauve"),
    lambda: imgpu.rotate(RGB, 10, background=(256, 0, 0)),
    lambda: imgpu.encode(RGB, "jpg", quality=0),
    lambda: imgpu.encode(RGB, "jpg", quality=101),
    lambda: imgpu.encode(RGB, "png", png_level=10),
    lambda: imgpu.encode(RGB, "jpg", subsampling="411"),
    lambda: imgpu.encode(RGB, "tif", compression="zip"),
    lambda: imgpu.encode(RGB, "gif"),
    lambda: imgpu.op("clahe", clip=-5),
    lambda: imgpu.op("sharpen"),
    lambda: imgpu.Context("tpu"),
])
def test_value_errors(call):
    with pytest.raises(ValueError):
        call()


def test_value_error_wording_is_the_clis():
    with pytest.raises(ValueError, match=r"a number 0\.\.1000000; 0 disables clipping"):
        imgpu.clahe(RGB, clip=2e6)
    with pytest.raises(ValueError, match=r"WxH, each 1\.\.256"):
        imgpu.clahe(RGB, tiles=300)
    # the whole message is the CLI's refusal of the same value, after the op's name
    with pytest.raises(ValueError, match=r"^clahe: invalid --clip '2000000\.0' \(a number 0\.\.1000000; 0 disables "
                                         r"clipping\)$"):
        imgpu.clahe(RGB, clip=2e6)
    with pytest.raises(ValueError, match=r"^rotate: invalid --filter 'cubic' \(use nearest, bilinear or bicubic\)$"):
        imgpu.rotate(RGB, 10, filter="cubic")
    with pytest.raises(ValueError, match=r"invalid --quality '101' \(1\.\.100\)"):
        imgpu.encode(RGB, "jpg", quality=101)


@pytest.mark.parametrize("call", [
    lambda: imgpu.clahe(RGB, clip="40"),
    lambda: imgpu.clahe(RGB, tiles=8.0),          # "8x8" is valid since the op table (a SIZE)
    lambda: imgpu.clahe(RGB, sharpness=3),
    lambda: imgpu.rotate(RGB),
    lambda: imgpu.rotate(RGB, "ten"),
    lambda: imgpu.encode(RGB, "jpg", progressive="yes"),
    lambda: imgpu.encode(RGB, "jpg", colour=3),
    lambda: imgpu.op("rotate"),
    lambda: imgpu.equalize(RGB, device=3),
])
def test_type_errors(call):
    with pytest.raises(TypeError):
        call()


# ---- dtypes and layouts ----------------------------------------------------------------------

@pytest.mark.parametrize("bad", [
    RGB.astype(np.float64), RGB.astype(np.float32), RGB.astype(np.int8), RGB.astype(np.int16),
    RGB.astype(np.uint32), RGB > 128, RGB[:, :, 0].ravel(), RGB[None], np.zeros((4, 4, 5), np.uint8),
    RGB16.astype(">u2"), b"not an array", 3.0,
])
def test_unsupported_dtype_or_layout_is_type_error(bad):
    with pytest.raises(TypeError):
        imgpu.equalize(bad)


def test_empty_image_is_value_error():
    with pytest.raises(ValueError):
        imgpu.equalize(np.zeros((0, 5, 3), np.uint8))


@pytest.mark.parametrize("view", [
    lambda a: a[5:70, 10:120],              # padded rows: used in place
    lambda a: a[::2, ::3],                  # column step: copied
    lambda a: a[::-1, ::-1],                # negative strides: copied
    lambda a: np.asfortranarray(a),         # channel-planar memory: copied
    lambda a: a[:, :, ::-1],                # BGR view of RGB: copied
    lambda a: a.transpose(1, 0, 2),         # transposed: copied
])
@pytest.mark.parametrize("name", ["rgb8", "rgb16", "gray16"])
def test_strided_views_give_the_contiguous_result(view, name):
    a = LAYOUTS[name]
    if a.ndim == 2:
        a = a[:, :, None]
    v = view(a)
    want = imgpu.clahe(np.ascontiguousarray(v), clip=3)
    assert np.array_equal(imgpu.clahe(v, clip=3), want)


def test_misaligned_uint16_is_copied():
    a = RGB16
    raw = bytearray(a.nbytes + 1)
    m = np.frombuffer(raw, dtype=np.uint16, count=a.size, offset=1).reshape(a.shape)
    m[...] = a   # numpy writes unaligned fine
    assert m.ctypes.data % 2 == 1
    assert np.array_equal(imgpu.equalize(m), imgpu.equalize(a))


def test_hxwx1_is_gray():
    g = LAYOUTS["gray8"]
    assert np.array_equal(imgpu.equalize(g[:, :, None]), imgpu.equalize(g))
    assert imgpu.equalize(g[:, :, None]).shape == g.shape


def test_input_is_not_written_and_result_is_new():
    a = RGB.copy()
    b = imgpu.rotate(a, 33)
    assert np.array_equal(a, RGB)
    assert not np.shares_memory(a, b)


# ---- other array protocols ---------------------------------------------------------------------

class ArrayInterfaceOnly:
    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


class DLPackOnly:
    def __init__(self, a, device=(1, 0)):
        self.a, self.device = a, device

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("name", ["rgb8", "gray16", "rgba16"])
def test_array_interface_and_dlpack_inputs(name):
    a = LAYOUTS[name]
    want = imgpu.clahe(a)
    assert np.array_equal(imgpu.clahe(ArrayInterfaceOnly(a)), want)
    assert np.array_equal(imgpu.clahe(DLPackOnly(a)), want)
    v = a[3:50, 7:60]                      # strided: rows padded
    assert np.array_equal(imgpu.clahe(ArrayInterfaceOnly(v)), imgpu.clahe(np.ascontiguousarray(v)))
    assert np.array_equal(imgpu.clahe(DLPackOnly(v)), imgpu.clahe(np.ascontiguousarray(v)))


def test_results_go_out_through_dlpack_without_a_copy():
    b = imgpu.equalize(RGB)
    c = np.from_dlpack(b)
    assert c.ctypes.data == b.ctypes.data and np.shares_memory(b, c)
    # the result's memory is imgpu's own, exposed without a copy, and outlives the call
    m = memoryview(b)
    assert m.format == "B" and m.shape == RGB.shape and not m.readonly


class FakeCuda:
    """A __cuda_array_interface__ whose data pointer is NULL."""
    __cuda_array_interface__ = {"shape": (4, 4), "typestr": "|u1", "data": (0, False), "version": 3}


# The rule for CUDA arrays (any object with __cuda_array_interface__, or __dlpack__ with a CUDA
# __dlpack_device__): first whether this imgpu can run CUDA at all, a property of the build and
# the machine; without it, imgpu.Error "CUDA not available" whatever the array holds (nothing of
# it is looked at). With CUDA, the array is checked as a host array is: a NULL data pointer is a
# ValueError (as for __array_interface__), a wrong dtype, shape or device a TypeError.
def test_cuda_arrays_without_cuda_raise_imgpu_error():
    if _cuda_usable():
        pytest.skip("a usable GPU is present (test_invalid_cuda_arrays_are_refused_as_host_arrays)")
    with pytest.raises(imgpu.Error, match="CUDA not available"):
        imgpu.equalize(FakeCuda())
    with pytest.raises(imgpu.Error, match="CUDA not available"):
        imgpu.equalize(DLPackOnly(RGB, device=(2, 0)))   # kDLCUDA


def test_invalid_cuda_arrays_are_refused_as_host_arrays():
    if not _cuda_usable():
        pytest.skip("no usable GPU (test_cuda_arrays_without_cuda_raise_imgpu_error)")
    with pytest.raises(ValueError, match="data pointer is NULL"):
        imgpu.equalize(FakeCuda())
    # claims kDLCUDA but exports a host tensor
    with pytest.raises(TypeError, match="DLPack tensor on device type 1"):
        imgpu.equalize(DLPackOnly(RGB, device=(2, 0)))


def test_null_host_arrays_are_value_errors():
    """The host side of the same rule: a NULL __array_interface__ pointer is a ValueError."""
    class FakeHost:
        __array_interface__ = {"shape": (4, 4), "typestr": "|u1", "data": (0, False), "version": 3}
    with pytest.raises(ValueError, match="data pointer is NULL"):
        imgpu.equalize(FakeHost())


def _cuda_usable():
    try:
        imgpu.Context("cuda").close()
        return True
    except imgpu.Error:
        return False


def test_device_cuda_without_gpu():
    if _cuda_usable():
        pytest.skip("a usable GPU is present")
    with pytest.raises(imgpu.Error, match="CUDA not available"):
        imgpu.equalize(RGB, device="cuda")
    with pytest.raises(imgpu.Error, match="CUDA not available"):
        imgpu.Context(device="cuda")
    with pytest.raises(imgpu.Error, match="CUDA not available"):
        imgpu.decode_batch([b"x"], device="cuda")


# ---- out= ----------------------------------------------------------------------------------

def test_out():
    want = imgpu.rotate(RGB, 20)
    out = np.zeros(want.shape, np.uint8)
    r = imgpu.rotate(RGB, 20, out=out)
    assert r is out and np.array_equal(out, want)
    big = np.zeros((want.shape[0], want.shape[1] + 7, 3), np.uint8)
    imgpu.rotate(RGB, 20, out=big[:, :want.shape[1]])       # padded rows are fine
    assert np.array_equal(big[:, :want.shape[1]], want) and not big[:, want.shape[1]:].any()
    with pytest.raises(ValueError):
        imgpu.rotate(RGB, 20, out=np.zeros((3, 3, 3), np.uint8))
    with pytest.raises(TypeError):
        imgpu.rotate(RGB, 20, out=np.zeros(want.shape, np.uint16))
    ro = np.zeros(want.shape, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(TypeError):
        imgpu.rotate(RGB, 20, out=ro)
    with pytest.raises(TypeError):
        imgpu.rotate(RGB, 20, out=np.zeros(want.shape, np.uint8)[:, ::-1])


# ---- files ----------------------------------------------------------------------------------

def test_file_errors(tmp_path):
    missing = tmp_path / "nope.png"
    with pytest.raises(FileNotFoundError):
        imgpu.read(missing)
    with pytest.raises(FileNotFoundError):
        imgpu.read(str(missing))
    with pytest.raises(FileNotFoundError):
        imgpu.info(missing)
    with pytest.raises(FileNotFoundError):
        imgpu.write(tmp_path / "no_dir" / "x.png", RGB)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    with pytest.raises(imgpu.Error):
        imgpu.read(bad)
    with pytest.raises(imgpu.Error):
        imgpu.decode(b"garbage bytes")
    with pytest.raises(ValueError):
        imgpu.write(tmp_path / "x.unknownext", RGB)
    imgpu.write(tmp_path / "x.unknownext", RGB, format="png")
    assert np.array_equal(imgpu.read(tmp_path / "x.unknownext"), RGB)
    with pytest.raises(TypeError):
        imgpu.decode(str(bad))


def test_failed_write_keeps_the_old_file(tmp_path):
    p = tmp_path / "keep.pnm"
    p.write_bytes(b"old")
    with pytest.raises(imgpu.Error):
        imgpu.write(p, LAYOUTS["rgba8"])     # PNM cannot store alpha: refused
    assert p.read_bytes() == b"old"


# ---- contexts and op objects ----------------------------------------------------------------

def test_context():
    with imgpu.Context("cpu") as ctx:
        assert ctx.device == "cpu" and not ctx.closed
        assert np.array_equal(imgpu.equalize(RGB), imgpu.equalize(RGB, device="cpu"))
        assert np.array_equal(ctx.clahe(RGB), imgpu.clahe(RGB))
    assert ctx.closed
    with pytest.raises(ValueError):
        imgpu.equalize(RGB, device=ctx)
    c = imgpu.Context()
    assert c.device == "auto"
    assert np.array_equal(imgpu.rotate(RGB, 5, device=c), imgpu.rotate(RGB, 5))
    c.close()
    c.close()


def test_op_objects():
    o = imgpu.op("rotate", angle=15, filter="bicubic")
    assert np.array_equal(o(RGB), imgpu.rotate(RGB, 15, filter="bicubic"))
    assert o.cli_args() == ["--rotate", "15.0", "--filter", "bicubic"]
    assert imgpu.op("clahe", tiles=4, mode="per-channel").cli_args() == ["--clahe", "--tiles", "4x4", "--mode",
                                                                          "per-channel"]
    assert imgpu.op("rotate", angle=-3, expand=False, background=(1, 2, 3)).cli_args() == \
        ["--rotate", "-3.0", "--crop", "--background", "1,2,3"]
    chain = imgpu.apply(RGB, ["equalize", imgpu.op("clahe", clip=2)])
    assert np.array_equal(chain, imgpu.clahe(imgpu.equalize(RGB), clip=2))
    assert "imgpu.op('rotate', angle=15" in repr(o)


# ---- decode_batch / encode_batch ----------------------------------------------------------------

def test_decode_and_encode_batch():
    with open(asset("rocket.jpg"), "rb") as f:
        jpg = f.read()
    png = imgpu.encode(LAYOUTS["rgba16"], "png")
    corrupt = jpg[: len(jpg) // 3]
    res = imgpu.decode_batch([png, b"not an image", jpg, corrupt])
    assert np.array_equal(res[0], LAYOUTS["rgba16"])
    assert isinstance(res[1], imgpu.Error)
    assert np.array_equal(res[2], imgpu.decode(jpg))
    assert isinstance(res[3], imgpu.Error)   # a truncated JPEG fails alone
    arrays = [LAYOUTS[k] for k in ("rgb8", "gray8", "rgba8")]
    enc = imgpu.encode_batch(arrays, "jpg", quality=70, threads=2)
    assert enc == [imgpu.encode(a, "jpg", quality=70) for a in arrays]
    assert imgpu.decode_batch([]) == [] and imgpu.encode_batch([], "png") == []
    with pytest.raises(ValueError):
        imgpu.encode_batch(arrays, "jpg", quality=300)


# ---- batch: the `imgpu batch` engine in-process -------------------------------------------------

def test_batch_equals_cli_batch(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for k in ("rgb8", "gray8", "rgba16"):
        imgpu.write(src / (k + ".png"), LAYOUTS[k])
    (src / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    ops = ["equalize", imgpu.op("rotate", angle=15, filter="bicubic")]
    r = imgpu.batch([src], tmp_path / "py", ops=ops, jobs=2)
    assert r["done"] == 3 and r["skipped"] == 0 and len(r["failed"]) == 1, r
    assert r["failed"][0]["path"].endswith("broken.png") and r["failed"][0]["reason"]
    run_cli("batch", "--equalize", "--rotate", "15", "--filter", "bicubic", "-o", tmp_path / "cli", "--jobs", "2",
            "--quiet", src, check=False)
    for k in ("rgb8", "gray8", "rgba16"):
        got = imgpu.read(tmp_path / "py" / (k + ".png"))
        assert np.array_equal(got, imgpu.read(tmp_path / "cli" / (k + ".png"))), k
        assert np.array_equal(got, imgpu.rotate(imgpu.equalize(LAYOUTS[k]), 15, filter="bicubic")), k
    again = imgpu.batch([src], tmp_path / "py", ops=ops, jobs=2)        # outputs exist: skipped
    assert again["done"] == 0 and again["skipped"] == 3 and len(again["failed"]) == 1
    over = imgpu.batch(str(src / "rgb8.png"), tmp_path / "py", ops=ops, overwrite=True, format="jpg", quality=90)
    assert over["done"] == 1 and over["failed"] == []
    missing = imgpu.batch([tmp_path / "nope.png"], tmp_path / "py", ops=ops)
    assert missing["done"] == 0 and missing["failed"][0]["path"].endswith("nope.png")
    with pytest.raises(ValueError):
        imgpu.batch([src], tmp_path / "py", ops=ops, quality=500)
    with pytest.raises(ValueError):
        imgpu.batch([src], tmp_path / "py", ops=ops, frobnicate=True)
    (tmp_path / "afile").write_bytes(b"")
    with pytest.raises(imgpu.Error):
        imgpu.batch([src], tmp_path / "afile", ops=ops)


def test_release_batch_state_without_gpu_state(tmp_path):
    """A CPU batch keeps no GPU state: after one, release_batch_state() frees nothing. What GPU
    batches of earlier tests kept (on the GPU machine, IMGPU_PYTEST_DEVICE=cuda) is released
    first: it is theirs, not this batch's."""
    imgpu.release_batch_state()
    imgpu.write(tmp_path / "a.png", LAYOUTS["rgb8"])
    r = imgpu.batch([tmp_path / "a.png"], tmp_path / "out", ops=["equalize"], device="cpu")
    assert r["done"] == 1 and r["failed"] == [], r
    assert imgpu.release_batch_state() == 0


def test_stubs_name_every_public_function():
    """The shipped .pyi covers the module's public names (a name added without a stub fails)."""
    import ast
    import os
    stub = os.path.join(os.path.dirname(imgpu.__file__), "__init__.pyi")
    tree = ast.parse(open(stub).read())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {t.id for n in tree.body if isinstance(n, (ast.AnnAssign,)) for t in [n.target]}
    assert os.path.exists(os.path.join(os.path.dirname(imgpu.__file__), "py.typed"))
    missing = [n for n in imgpu.__all__ if n not in names]
    assert missing == [], missing


@pytest.mark.parametrize("shape", [(37, 23), (1, 1), (5, 1), (301, 517), (37, 23, 2), (64, 41, 3), (29, 31, 4)])
def test_histogram_8bit_counts_every_plane(shape):
    """8-bit counts against numpy's bincount of each channel, and the luma plane (3 and 4
    channels) against BT.601's Y in OpenCV's 14-bit fixed point computed here: every sample
    counted once, in its own plane, whatever the width (eight-at-a-time loads and their tails)."""
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(0, 256, shape, dtype=np.uint8)
    a.reshape(-1)[: a.size // 3] = 77                      # long runs of one value too
    h = imgpu.histogram(a, device="cpu")
    chans = 1 if a.ndim == 2 else a.shape[2]
    assert h.shape == (chans + (chans >= 3), 256) and h.dtype == np.uint32
    planes = [a] if a.ndim == 2 else [a[:, :, k] for k in range(chans)]
    for k, p in enumerate(planes):
        assert np.array_equal(h[k], np.bincount(p.ravel(), minlength=256)), k
    if chans >= 3:
        r, g, b = (a[:, :, k].astype(np.int64) for k in range(3))
        y = (r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14
        assert np.array_equal(h[chans], np.bincount(y.ravel(), minlength=256))

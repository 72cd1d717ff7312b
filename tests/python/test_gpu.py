"""The GPU side (the GPU machine; skipped where torch.cuda and CuPy are unavailable): ops on CUDA
arrays run on their GPU without a copy and return imgpu.Array; DLPack / CAI round trips keep the
data pointer; stream order; tensors with an offset or strides; out=; a corrupt JPEG in
decode_batch; device memory flat over 10,000 calls; every op's CUDA result equals the CLI's
bytes (IMGPU_PYTEST_DEVICE=cuda runs test_ops_cli.py on CUDA as well)."""
import os

import numpy as np
import pytest

import imgpu
from conftest import LAYOUTS, asset, run_cli

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or not imgpu.built_with_cuda:
    pytest.skip("torch.cuda is not available (the GPU machine runs these)", allow_module_level=True)
try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
except Exception:   # noqa: BLE001 - any import or driver failure means no CuPy here
    cupy = None

CASES = [
    (["equalize"], lambda a: imgpu.equalize(a)),
    (["equalize", "--mode", "per-channel", "--formula", "pil"], lambda a: imgpu.equalize(a, mode="per-channel",
                                                                                          formula="pil")),
    (["clahe", "--clip", "2.5", "--tiles", "4x3"], lambda a: imgpu.clahe(a, clip=2.5, tiles=(4, 3))),
    (["rotate", "--angle", "30"], lambda a: imgpu.rotate(a, 30)),
    (["rotate", "--angle", "-17.5", "--filter", "bicubic", "--crop", "--background", "#336699"],
     lambda a: imgpu.rotate(a, -17.5, filter="bicubic", expand=False, background="#336699")),
    (["rotate", "--angle", "90"], lambda a: imgpu.rotate(a, 90)),
]


def cuda(a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def host(x):
    return torch.from_dlpack(x).cpu().numpy()


@pytest.mark.parametrize("case", range(len(CASES)), ids=[" ".join(c[0]) for c in CASES])
def test_every_op_on_cuda_equals_the_cli(layout, case, tmp_path):
    name, a, path = layout
    args, fn = CASES[case]
    run_cli(args[0], path, tmp_path / "cli.png", *args[1:], "--device", "cuda", "--quiet")
    want = imgpu.read(tmp_path / "cli.png")
    got = fn(cuda(a))
    assert isinstance(got, imgpu.Array) and got.device == "cuda:0"
    assert np.array_equal(host(got), want), "%s on %s" % (args, name)


def test_every_table_op_runs_on_cuda_as_on_the_cpu():
    a = LAYOUTS["rgb8"]
    for name in imgpu.ops:
        if name == "histogram":
            continue
        desc = [d for d in imgpu._imgpu._op_table() if d["name"] == name][0]
        req = [25.0 for p in desc["params"] if p["required"]]
        fn = getattr(imgpu, name)
        assert np.array_equal(host(fn(cuda(a), *req)), fn(a, *req, device="cpu")), name


def test_torch_zero_copy_both_ways():
    t = cuda(LAYOUTS["rgb8"])
    r = imgpu.equalize(t)
    back = torch.from_dlpack(r)
    assert back.data_ptr() == r.data_ptr and back.is_cuda
    assert r.__dlpack_device__() == (2, 0)
    cai = r.__cuda_array_interface__
    assert cai["version"] == 3 and cai["data"][0] == r.data_ptr and cai["shape"] == tuple(t.shape)
    # the input was read in place: an op on a tensor needs no device copy of it (out= shows it)
    out = torch.empty_like(t)
    assert imgpu.equalize(t, out=out) is out
    assert torch.equal(out, back)


@pytest.mark.skipif(cupy is None, reason="CuPy is not available")
def test_cupy_zero_copy_both_ways():
    c = cupy.asarray(LAYOUTS["rgba8"])
    r = imgpu.clahe(c, clip=3)
    back = cupy.asarray(r)
    assert back.data.ptr == r.data_ptr
    assert np.array_equal(cupy.asnumpy(back), imgpu.clahe(LAYOUTS["rgba8"], clip=3))
    v = cupy.from_dlpack(r)
    assert v.data.ptr == r.data_ptr


def test_dlpack_versioned_and_options():
    r = imgpu.equalize(cuda(LAYOUTS["gray8"]))
    cap = r.__dlpack__(stream=1, max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    with pytest.raises(BufferError):
        r.__dlpack__(dl_device=(1, 0))
    c = torch.from_dlpack(r.__dlpack__(copy=True))
    assert c.data_ptr() != r.data_ptr and np.array_equal(c.cpu().numpy(), r.numpy())


def test_stream_order_with_a_producer_on_a_side_stream():
    """A producer writes the input on a side stream; imgpu with that stream must see its data."""
    a = LAYOUTS["rgb8"]
    want = imgpu.equalize(a)
    s = torch.cuda.Stream()
    big = torch.zeros((4096, 4096), device="cuda")
    with torch.cuda.stream(s):
        t = torch.zeros(a.shape, dtype=torch.uint8, device="cuda")
        for _ in range(20):            # keep the side stream busy so a race would show
            big = big @ big.T * 0
        t.copy_(torch.from_numpy(a).cuda(non_blocking=True))
        r = imgpu.equalize(t, stream=s)
        out = torch.from_dlpack(r.__dlpack__(stream=s.cuda_stream))
        res = out.clone()
    s.synchronize()
    assert np.array_equal(res.cpu().numpy(), want)


def test_tensor_with_an_offset_or_strides():
    a = LAYOUTS["rgb16"]
    big = cuda(np.pad(a, ((3, 5), (7, 2), (0, 0))))
    view = big[3:3 + a.shape[0], 7:7 + a.shape[1]]          # an offset and padded rows
    assert view.storage_offset() > 0
    assert np.array_equal(host(imgpu.clahe(view, clip=2)), imgpu.clahe(a, clip=2))
    with pytest.raises(TypeError):
        imgpu.equalize(cuda(LAYOUTS["rgb8"])[:, ::2])        # a column step is not interleaved rows
    with pytest.raises(TypeError):
        imgpu.equalize(cuda(LAYOUTS["rgb8"]).float())


def test_decode_batch_on_the_gpu_with_a_corrupt_jpeg():
    with open(asset("rocket.jpg"), "rb") as f:
        jpg = f.read()
    png = imgpu.encode(LAYOUTS["rgb8"], "png")
    res = imgpu.decode_batch([jpg, jpg[: len(jpg) // 3], b"not an image", png], device="cuda")
    assert isinstance(res[0], imgpu.Array)
    cpu = imgpu.decode(jpg)
    got = res[0].numpy()
    assert got.shape == cpu.shape
    assert np.abs(got.astype(int) - cpu.astype(int)).max() <= 2     # nvJPEG's IDCT vs libjpeg-turbo's
    assert isinstance(res[1], (imgpu.Error, imgpu.Array))           # truncated: refused, or decoded grey
    assert isinstance(res[2], imgpu.Error)
    assert np.array_equal(res[3].numpy(), LAYOUTS["rgb8"])
    enc = imgpu.encode_batch([res[0], res[3]], "jpg", quality=92)
    assert all(isinstance(b, bytes) and b[:2] == b"\xff\xd8" for b in enc)
    assert imgpu.decode(enc[1]).shape == LAYOUTS["rgb8"].shape


def test_device_memory_flat_over_10000_calls():
    t = cuda(LAYOUTS["rgb8"][:32, :32])
    for _ in range(200):
        imgpu.equalize(t)
    torch.cuda.synchronize()
    free0 = torch.cuda.mem_get_info()[0]
    for _ in range(10000):
        r = imgpu.equalize(t)
        del r
    torch.cuda.synchronize()
    free1 = torch.cuda.mem_get_info()[0]
    assert free0 - free1 < 64 << 20, "device memory fell by %d bytes" % (free0 - free1)

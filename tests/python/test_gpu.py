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


def cpu_tolerance(a, filt="bilinear", angle=25.0):
    """Largest per-sample difference the CUDA backend may have from the CPU on a rotation (the
    backend's contract: tests/gpu/test_gpu_ops.c, the golden cases' gpu_tol): 8-bit gray and RGB
    with bilinear or bicubic, within 1 (the texture unit's bilinear filtering); nearest, quarter
    turns, 16 bits and images with alpha (premultiplied, in software), bit for bit."""
    channels = 1 if a.ndim == 2 else a.shape[2]
    exact = a.dtype == np.uint16 or channels in (2, 4) or filt == "nearest" or float(angle) % 90 == 0
    return 0 if exact else 1


def max_diff(x, y):
    assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
    return int(np.abs(x.astype(np.int64) - y.astype(np.int64)).max()) if x.size else 0


def test_every_table_op_runs_on_cuda_as_on_the_cpu():
    """Every op of the table on a CUDA array: the bytes of the same op on the host array with
    device="cuda" (the CLI's GPU path), and the CPU's within the backend's contract (exact but
    for 8-bit bilinear/bicubic rotation of gray and RGB: cpu_tolerance)."""
    a = LAYOUTS["rgb8"]
    for name in imgpu.ops:
        if name == "histogram":
            continue
        desc = [d for d in imgpu._imgpu._op_table() if d["name"] == name][0]
        req = [25.0 for p in desc["params"] if p["required"]]
        fn = getattr(imgpu, name)
        got = host(fn(cuda(a), *req))
        assert np.array_equal(got, fn(a, *req, device="cuda")), name
        tol = cpu_tolerance(a) if name == "rotate" else 0
        assert max_diff(got, fn(a, *req, device="cpu")) <= tol, name


# Rotation of CUDA arrays over every layout (LAYOUTS: odd widths, 8 and 16 bits, gray, gray+alpha,
# RGB, RGBA) and crops whose rows are a multiple of 32 bytes (the texture pitch alignment), which
# the GPU samples in place instead of copying into a CUDA array; each as a contiguous tensor, a
# view one row in (a 16-byte aligned address that is not texture-aligned: read in place by
# imgpu, refused by cudaCreateTextureObject as a pitched texture's base), a view four rows in,
# and a view with padded rows (gathered).
ROTATE_LAYOUTS = dict(LAYOUTS)
ROTATE_LAYOUTS["gray8_w128"] = np.ascontiguousarray(imgpu.read(asset("camera.png"))[60:101, 20:148])
ROTATE_LAYOUTS["gray_alpha8_w64"] = np.ascontiguousarray(LAYOUTS["gray_alpha8"][:, 10:74])
ROTATE_LAYOUTS["rgba8_w32"] = np.ascontiguousarray(LAYOUTS["rgba8"][:, 50:82])
ROTATE_LAYOUTS["rgba16_w16"] = np.ascontiguousarray(LAYOUTS["rgba16"][:, 20:36])
ROTATE_CASES = [(angle, filt, expand, bg)
                for angle in (25.0, -17.5, 123.4, 90.0)
                for filt in ("nearest", "bilinear", "bicubic")
                for expand, bg in ((True, None), (False, "#336699"), (True, "#c0402080"))]


def cuda_forms(a):
    """(name, CUDA tensor) of the same pixels: contiguous, at a row offset of 1 and 4 rows, and
    a view with padded rows."""
    t = cuda(a)
    yield "contiguous", t
    for k in (1, 4):
        big = cuda(np.concatenate([np.zeros((k,) + a.shape[1:], a.dtype), a]))
        view = big[k:]
        assert view.is_contiguous() and view.storage_offset() > 0
        yield "offset %d rows" % k, view
    pad = [(0, 0)] * a.ndim
    pad[1] = (3, 5)
    big = cuda(np.pad(a, pad))
    view = big[:, 3:3 + a.shape[1]]
    assert not view.is_contiguous()
    yield "padded rows", view


@pytest.mark.parametrize("name", sorted(ROTATE_LAYOUTS))
def test_rotate_on_cuda_arrays_equals_the_host_paths(name):
    a = ROTATE_LAYOUTS[name]
    forms = list(cuda_forms(a))
    for angle, filt, expand, bg in ROTATE_CASES:
        kw = dict(filter=filt, expand=expand, background=bg)
        what = "%s rotate %g %s expand=%s background=%s" % (name, angle, filt, expand, bg)
        want_gpu = imgpu.rotate(a, angle, device="cuda", **kw)      # the CLI's GPU path
        want_cpu = imgpu.rotate(a, angle, device="cpu", **kw)
        assert max_diff(want_gpu, want_cpu) <= cpu_tolerance(a, filt, angle), what + ": host arrays, cuda vs cpu"
        for form, t in forms:
            got = imgpu.rotate(t, angle, **kw)
            assert isinstance(got, imgpu.Array) and got.device == "cuda:0"
            got = host(got)
            assert np.array_equal(got, want_gpu), "%s (%s): differs from device='cuda' on the host array, max %d" % (
                what, form, max_diff(got, want_gpu))


def test_rotate_on_cuda_arrays_into_out():
    """out= (a tensor of the result's shape) gets the same bytes as a new result."""
    for name in ("rgb8", "gray_alpha8_w64", "rgba16"):
        a = ROTATE_LAYOUTS[name]
        want = imgpu.rotate(a, 25.0, device="cuda", filter="bicubic", background="#336699")
        out = torch.empty(want.shape, dtype=torch.from_numpy(want).dtype, device="cuda")
        assert imgpu.rotate(cuda(a), 25.0, filter="bicubic", background="#336699", out=out) is out
        assert np.array_equal(out.cpu().numpy(), want), name


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


class CaiV2WithDlpack:
    """A CUDA array that is not a torch tensor, with a version-2 interface (no stream key) and
    DLPack: imgpu knows no current stream of its producer and takes it through DLPack, whose
    __dlpack__(stream=) orders the producer's current stream first (here torch's)."""

    def __init__(self, t):
        self.t = t
        ai = dict(t.__cuda_array_interface__)
        ai.pop("stream", None)
        ai["version"] = 2
        self.__cuda_array_interface__ = ai

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


@pytest.mark.parametrize("where", ["side stream", "default stream", "not torch, DLPack"])
def test_without_stream_the_op_waits_for_the_callers_current_stream(where):
    """No stream=: the op runs after what the caller enqueued on torch's current stream (a side
    stream inside `with torch.cuda.stream(s)`, or the default one). torch's
    __cuda_array_interface__ carries no stream: imgpu asks torch for its current stream; another
    producer with such an interface is taken through DLPack. The result is waited for when torch
    imports it. The producer's stream is kept busy first, so a missing wait would read zeros."""
    a = LAYOUTS["rgb8"]
    want = imgpu.equalize(a)
    s = torch.cuda.Stream() if where == "side stream" else torch.cuda.current_stream()
    big = torch.zeros((4096, 4096), device="cuda")
    t = torch.zeros(a.shape, dtype=torch.uint8, device="cuda")
    src = torch.from_numpy(a).cuda()
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        for _ in range(20):            # keep s busy so a race would show
            big = big @ big.T * 0
        t.copy_(src)
        r = imgpu.equalize(CaiV2WithDlpack(t) if where == "not torch, DLPack" else t)
        res = torch.from_dlpack(r).clone()
    s.synchronize()
    assert np.array_equal(res.cpu().numpy(), want)


class CountingCai:
    """A torch tensor seen through a __cuda_array_interface__ that counts its reads (torch's own
    is a Python property that builds the dict on each read)."""

    def __init__(self, t):
        self.t, self.reads = t, 0

    @property
    def __cuda_array_interface__(self):
        self.reads += 1
        return self.t.__cuda_array_interface__

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_one_call_reads_the_cuda_array_interface_once():
    """Each protocol attribute is read once a call: the op, out=, and histogram."""
    a = LAYOUTS["rgb8"]
    want = imgpu.equalize(a, device="cpu")
    x = CountingCai(cuda(a))
    r = imgpu.equalize(x)
    assert x.reads == 1
    assert np.array_equal(host(r), want)
    o = CountingCai(torch.empty(a.shape, dtype=torch.uint8, device="cuda"))
    assert imgpu.equalize(x, out=o) is o
    assert x.reads == 2 and o.reads == 1
    assert np.array_equal(o.t.cpu().numpy(), want)
    assert np.array_equal(imgpu.histogram(x), imgpu.histogram(a, device="cpu"))
    assert x.reads == 3


def test_imgpu_arrays_as_inputs_wait_for_the_work_that_writes_them():
    """An imgpu.Array (a result) as the input of the next call, on the same context, on another
    context (whose stream must wait for the first one's), with stream= and into out=: each the
    bytes of the same op on the first result's host copy. The first result is a long chain on a
    4K image, so that a second call not ordered after it would read it half written."""
    small = LAYOUTS["rgb8"]
    big = np.ascontiguousarray(np.tile(small, (-(-2160 // small.shape[0]), -(-3840 // small.shape[1]), 1))[:2160, :3840])
    t = cuda(big)
    chain = ["clahe"] * 6 + [imgpu.op("rotate", angle=13)]
    c1, c2 = imgpu.Context("cuda"), imgpu.Context("cuda")
    for ctx in (c1, None, c2):   # the same context; the default one; another one
        first = imgpu.apply(t, chain, device=c1)
        nxt = imgpu.equalize(first, device=ctx)
        want = imgpu.equalize(host(first), device="cpu")
        assert np.array_equal(host(nxt), want), "context %s" % ctx
    s = torch.cuda.Stream()
    first = imgpu.apply(t, chain, device=c1)
    with torch.cuda.stream(s):
        nxt = imgpu.equalize(first, stream=s, device=c2)
        res = torch.from_dlpack(nxt.__dlpack__(stream=s.cuda_stream)).clone()
    s.synchronize()
    assert np.array_equal(res.cpu().numpy(), imgpu.equalize(host(first), device="cpu"))
    first = imgpu.apply(t, chain, device=c1)
    out = torch.empty(first.shape, dtype=torch.uint8, device="cuda")
    assert imgpu.equalize(first, out=out, device=c2) is out
    assert np.array_equal(out.cpu().numpy(), imgpu.equalize(host(first), device="cpu"))


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


def test_decode_batch_inputs_may_change_once_it_returns():
    """decode_batch returns once nvJPEG's engines have their batch (they finish while the caller
    goes on): the inputs are the caller's again on return. Each input is overwritten as soon as
    the call returns, and the decoded images still equal the same files decoded from untouched
    copies, one call apart (a decode still reading the caller's memory would differ)."""
    with open(asset("rocket.jpg"), "rb") as f:
        jpg = f.read()
    big = imgpu.encode(np.ascontiguousarray(np.tile(imgpu.decode(jpg), (4, 4, 1))), "jpg", quality=92)
    gray = imgpu.encode(np.ascontiguousarray(imgpu.decode(jpg)[:, :, 1]), "jpg", quality=90)
    files = [big, jpg, gray, jpg] * 10                      # 40: RGB and gray engine batches, 32 + 8
    want = [r.numpy() for r in imgpu.decode_batch(list(files), device="cuda")]
    bufs = [bytearray(b) for b in files]
    got = imgpu.decode_batch(bufs, device="cuda")
    for b in bufs:
        b[:] = bytes(len(b))                                # the caller reuses its buffers at once
    for i, (g, w) in enumerate(zip(got, want)):
        assert isinstance(g, imgpu.Array), (i, g)
        assert np.array_equal(g.numpy(), w), i


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


def test_encode_batch_with_several_in_flight_equals_one_at_a_time():
    """encode_batch of CUDA arrays keeps several JPEG encodes in flight (one nvJPEG encoder per
    slot, 4 slots): a batch longer than the slots, mixing RGB and gray (nvJPEG's), RGBA and
    16-bit (the CPU encoder's), sizes, and views with padded rows (a pitch wider than the row),
    gives each item the bytes it gets alone; the CPU items equal imgpu.encode's of the same
    pixels, and the GPU items decode to their pixels within JPEG's loss."""
    big = LAYOUTS["rgb8"]
    gray = LAYOUTS["gray8"]
    wide = cuda(np.pad(big, ((0, 0), (0, 11), (0, 0)), constant_values=3))
    items = [cuda(big), cuda(gray), cuda(LAYOUTS["rgba8"]), wide[:, :big.shape[1]], cuda(big[::-1]),
             cuda(LAYOUTS["rgb16"]), cuda(gray[5:]), cuda(np.rot90(big).copy()), cuda(big[:31, :17]),
             cuda(gray), cuda(big)]
    hosts = [host(x) for x in items]
    batch = imgpu.encode_batch(items, "jpg", quality=90)
    alone = [imgpu.encode_batch([x], "jpg", quality=90)[0] for x in items]
    assert len(batch) == len(items)
    for i, (b, a, h) in enumerate(zip(batch, alone, hosts)):
        assert b == a, i
        if h.ndim == 3 and h.shape[2] == 4 or h.dtype == np.uint16:
            assert b == imgpu.encode(h, "jpg", quality=90), i
        else:
            d = imgpu.decode(b)
            assert d.shape == h.shape, i
            assert np.abs(d.astype(int) - h.astype(int)).mean() < 4, i
    # a strided view (padded rows) encodes as its contiguous copy
    assert batch[3] == batch[0]


def test_histogram_of_a_cuda_array_equals_the_cpu_count(layout):
    """imgpu.histogram on a CUDA tensor is counted on its GPU (no host copy of the pixels) and
    equals the CPU backend's count of the same pixels, plane for plane (luma included); a
    view with padded rows (the left part of a wider tensor, whose extra columns hold other
    values) counts only the pixels it shows."""
    name, a, _ = layout
    want = imgpu.histogram(a, device="cpu")
    got = imgpu.histogram(cuda(a))
    assert isinstance(got, np.ndarray) and got.dtype == np.uint32
    assert got.shape == want.shape and np.array_equal(got, want), name
    pad = [(0, 0), (0, 9)] + [(0, 0)] * (a.ndim - 2)
    wide = cuda(np.pad(a, pad, constant_values=7))
    view = wide[:, :a.shape[1]]
    assert not view.is_contiguous()
    got = imgpu.histogram(view)
    assert np.array_equal(got, want), name + " (padded rows)"
    with pytest.raises(ValueError):
        imgpu.histogram(cuda(a), device="cpu")


def test_batch_keeps_its_gpu_state_between_batches(tmp_path, monkeypatch):
    """imgpu.batch on the GPU keeps nvJPEG's state (handles, states, decode pool) for the next
    batch of the process: a batch's JPEGs decoded by a kept module give the bytes a fresh one
    gives; release_batch_state() frees what is kept (then 0 is left), and the batch after it
    sets nvJPEG up again, with the same bytes."""
    monkeypatch.setenv("IMGPU_NVJPEG_CPU_FIRST", "0")     # every JPEG to nvJPEG, even so few
    src = tmp_path / "in"
    src.mkdir()
    with open(asset("rocket.jpg"), "rb") as f:
        jpg = f.read()
    base = imgpu.decode(jpg)
    for k in range(6):
        (src / ("p%d.jpg" % k)).write_bytes(imgpu.encode(np.ascontiguousarray(np.roll(base, 7 * k, axis=1)),
                                                        "jpg", quality=90))
    imgpu.release_batch_state()                          # what earlier tests kept
    outs = []
    for run in range(3):
        out = tmp_path / ("out%d" % run)
        s = imgpu.batch([str(src)], str(out), ops=["equalize"], device="cuda")
        assert s["done"] == 6 and not s["failed"], s
        outs.append({p.name: p.read_bytes() for p in sorted(out.glob("*.jpg"))})
        if run == 1:
            assert imgpu.release_batch_state() >= 1       # run 1 used run 0's module and kept it
            assert imgpu.release_batch_state() == 0
    assert len(outs[0]) == 6 and outs[0] == outs[1] == outs[2]


def test_a_result_outlives_its_closed_context():
    """close() (the end of a `with` block) while a result of the Context is alive: the Context
    takes no new call, its result stays readable, and the context goes with the last result
    (its memory is freed on the context's stream: that stream must still be there). Then a call
    without a Context on the same GPU runs as usual."""
    a = LAYOUTS["rgb8"]
    want = imgpu.equalize(a, device="cpu")
    with imgpu.Context("cuda:0") as c:
        r = imgpu.equalize(cuda(a))
        r2 = imgpu.rotate(cuda(a), angle=90)
    assert c.closed
    with pytest.raises(ValueError, match="closed"):
        imgpu.equalize(a, device=c)
    assert np.array_equal(host(r), want)
    del r2                                   # one of two results: the context stays
    r = imgpu.equalize(cuda(a))              # the last result of c freed as r is rebound
    torch.cuda.synchronize()
    assert np.array_equal(host(r), want)


def test_contexts_on_numbered_devices():
    """Context("cuda:N"): a number past the machine's GPUs is refused with how many there are;
    with two or more GPUs (the 2-GPU machine), a tensor on cuda:1 runs there, with or without a
    Context (the array's own device is used), its result lives on cuda:1 and equals the CPU's;
    a host array with device="cuda:1" gives the CPU's bytes; a tensor on the wrong device for the
    Context given is an error, not a silent copy."""
    n = torch.cuda.device_count()
    with pytest.raises(imgpu.Error, match="has %d CUDA device" % n):
        imgpu.Context("cuda:%d" % n)
    c0 = imgpu.Context("cuda:0")
    assert c0.device == "cuda"
    a = LAYOUTS["rgb8"]
    want = imgpu.equalize(a, device="cpu")
    if n < 2:
        pytest.skip("one GPU here: the cuda:1 half runs on the 2-GPU machine")
    with imgpu.Context("cuda:1") as c1:
        assert c1.device == "cuda:1"
        t = torch.from_numpy(np.ascontiguousarray(a)).to("cuda:1")
        r = imgpu.equalize(t)
        assert r.__dlpack_device__() == (2, 1)
        assert np.array_equal(host(r), want)
        assert np.array_equal(imgpu.equalize(a), want)   # a host array on the context's GPU
        with pytest.raises(imgpu.Error, match="device"):
            imgpu.equalize(cuda(a))                      # on cuda:0, but the context is cuda:1
    t = torch.from_numpy(np.ascontiguousarray(a)).to("cuda:1")
    r = imgpu.equalize(t, device="cuda:1")               # a device name, not a Context: the
    assert np.array_equal(host(r), want)                 # result keeps no Context object
    del r
    assert np.array_equal(host(imgpu.equalize(t, device="cuda:1")), want)
    r = imgpu.equalize(t)                                # no Context: the tensor's own GPU
    assert np.array_equal(r.numpy(), want)               # its own download runs there too
    assert r.__dlpack_device__() == (2, 1) and np.array_equal(host(r), want)
    assert np.array_equal(imgpu.equalize(a, device="cuda:1"), want)
    assert np.array_equal(imgpu.histogram(t), imgpu.histogram(a, device="cpu"))


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
    assert free0 - free1 < 64 << 20, "device memory fell by %d bytes%s" % (free0 - free1, default_pool_state())


def default_pool_state():
    """Where the results live (cudaMallocAsync: the device's default pool): its reserved and used
    bytes, so that a failure says whether the memory is the pool's (used: a result not freed;
    reserved only: freed blocks the pool kept) or outside it (events, streams, other state)."""
    if cupy is None:
        return " (no CuPy: the default pool's state unknown)"
    try:
        rt = cupy.cuda.runtime
        pool = rt.deviceGetDefaultMemPool(torch.cuda.current_device())
        # cudaMemPoolAttr: ReleaseThreshold 4, ReservedMemCurrent 5, UsedMemCurrent 7
        got = [rt.memPoolGetAttribute(pool, a) for a in (4, 5, 7)]
        return "; default pool: release threshold %d, reserved %d, used %d bytes" % tuple(got)
    except Exception as e:   # noqa: BLE001 - a diagnostic only
        return " (the default pool's state unknown: %s)" % e

"""imgpu: GPU-accelerated image processing (CUDA, with a CPU reference backend) for Python.

Arrays are numpy arrays (or anything with the buffer protocol, ``__array_interface__`` or
``__dlpack__``): H x W (gray) or H x W x C (C = 2: gray+alpha, 3: RGB, 4: RGBA), uint8 or
uint16, channels in RGB/RGBA order. Results are new numpy arrays of the same kind, over
imgpu's own memory (no copy). The ops give the same bytes as the ``imgpu`` command line::

    import imgpu
    a = imgpu.read("photo.jpg")                      # H x W x 3 uint8
    b = imgpu.clahe(a, clip=2.0, tiles=(8, 8))
    imgpu.write("out.png", imgpu.rotate(b, 15, filter="bicubic"))
    imgpu.batch(["photos/"], "out/", ops=["equalize", imgpu.op("rotate", angle=15)])

Errors: FileNotFoundError for a missing file, ValueError for a parameter out of its range
(the CLI's ranges), TypeError for an array imgpu cannot take (float64, 1-D, 5 channels,
big-endian), imgpu.Error for everything else (corrupt files, no GPU for device="cuda").
Every call releases the GIL, and calls from many threads run in parallel.

Op functions (equalize, clahe, rotate and every other op of imgpu's op table) are generated at
import from the C library's op table (_imgpu._op_table()), with their signatures, defaults,
ranges and help; imgpu.ops lists them.
"""
import contextvars as _contextvars
import ast as _ast
import os as _os

from . import _imgpu
from ._imgpu import Array, Error, read, info, write, encode, decode_batch, encode_batch, release_batch_state, \
    __version__, built_with_cuda

__all__ = ["Array", "Error", "Context", "Op", "read", "info", "write", "encode", "decode", "decode_batch",
           "encode_batch", "op", "apply", "batch", "release_batch_state", "ops", "tune_allocator", "__version__",
           "built_with_cuda"]


def tune_allocator():
    """Sets this process's malloc (glibc) as `imgpu batch` sets its own: one arena, buffers up
    to 32 MB from the heap, and freed memory kept for reuse rather than given back. A service
    that decodes and encodes batches of large images (decode_batch, encode_batch: megabytes of
    bytes a call) then reuses pages already mapped instead of faulting every page of every
    result in again (bench/encode_slots.py measures it; bench/RESULTS.md). The heap keeps its peak, so call it in processes whose working
    set is bounded (a worker, a service), not in one that holds memory for others. It changes
    the whole process, so imgpu never calls it on import. No effect but on glibc."""
    _imgpu._tune_allocator()

# the Context of the innermost `with imgpu.Context(...)` on this thread / task
_current = _contextvars.ContextVar("imgpu_current_context", default=None)


def _device(device):
    return _current.get() if device is None else device


class Context(_imgpu._Context):
    """Context(device="auto"): a device and the state imgpu keeps there between calls.

    device: "auto" (per job: the CPU for jobs it finishes before a GPU could, else the GPU,
    the CPU when there is none), "cpu", "cuda" (imgpu.Error at once where there is no usable
    GPU) or "cuda:0". The device's state (CUDA context, streams, buffers) is created on first
    use and reused by every call. Pass it as ``device=ctx``, call the ops on it
    (``ctx.equalize(a)``), or make it the default of the calls inside a ``with`` block::

        with imgpu.Context(device="cuda") as ctx:
            b = imgpu.equalize(a)          # runs on ctx
    Leaving the outermost ``with`` closes it; close() does too.
    """

    def __enter__(self):
        if self.closed:
            raise ValueError("the imgpu.Context is closed")
        tokens = self.__dict__.setdefault("_tokens", [])
        tokens.append(_current.set(self))
        return self

    def __exit__(self, *exc):
        tokens = self.__dict__.get("_tokens", [])
        if tokens:
            _current.reset(tokens.pop())
        if not tokens:
            self.close()
        return False

    def __getattr__(self, name):
        fn = _OPS.get(name)
        if fn is None:
            raise AttributeError(name)

        def bound(*args, **kw):
            kw.setdefault("device", self)
            return fn(*args, **kw)
        bound.__name__ = name
        bound.__doc__ = fn.__doc__
        return bound

    def __repr__(self):
        return "imgpu.Context(device=%r%s)" % (self.device, ", closed" if self.closed else "")


class Op:
    """An op with its parameters, checked: made by imgpu.op(name, **params).

    Apply it to an array (``op(a)``), chain several with imgpu.apply(a, [...]), or give a list
    of them (and op names) to imgpu.batch(..., ops=[...])."""
    __slots__ = ("name", "params")

    def __init__(self, name, params):
        _imgpu._check_op(name, params)
        self.name = name
        self.params = dict(params)

    def __call__(self, array, *, device=None, out=None, stream=None):
        return _imgpu._run_op(self.name, array, self.params, _device(device), out, stream)

    def __repr__(self):
        args = "".join(", %s=%r" % kv for kv in self.params.items())
        return "imgpu.op(%r%s)" % (self.name, args)

    def __eq__(self, other):
        return isinstance(other, Op) and (self.name, self.params) == (other.name, other.params)

    def cli_args(self):
        """The op as `imgpu batch` options, e.g. ['--rotate', '15.0', '--filter', 'bicubic']."""
        return _imgpu._cli_args(self.name, self.params)


def op(name, **params):
    """op(name, **params) -> imgpu.Op: the op `name` with its parameters checked now
    (ValueError / TypeError as the op's function would raise)."""
    return Op(name, params)


def _as_op(o):
    if isinstance(o, Op):
        return o
    if isinstance(o, str):
        return Op(o, {})
    raise TypeError("an op is a name or an imgpu.op(...), not %r" % (o,))


def apply(array, ops, *, device=None, out=None, stream=None):
    """apply(array, ops) -> array: the ops (names and imgpu.op(...) objects) applied in order in
    one run: on the GPU the whole chain stays on the device (one upload, one download)."""
    chain = [_as_op(o) for o in ops]
    return _imgpu._run_ops(array, [(o.name, o.params) for o in chain], _device(device), out, stream)


def decode(data, *, auto_orient=True):
    """decode(data) -> array: an image file's bytes (any bytes-like object) decoded."""
    if isinstance(data, (str, _os.PathLike)):
        raise TypeError("decode() takes the file's bytes; use imgpu.read(path) for a path")
    return read(data, auto_orient=auto_orient)


def batch(inputs, outdir, ops=(), **options):
    """batch(inputs, outdir, ops=[...], **options) -> {"done", "skipped", "failed", "stale"}

    `imgpu batch` in this process: the same engine (decode threads, the op stage on the GPU or
    the CPU, encode threads), without its start-up on a second call. inputs: a path, or a list
    of files, folders and quoted globs; outdir: the output folder. ops: op names and imgpu.op()
    objects, applied in order. options: the command's options with _ for -, e.g.
    format="jpg", quality=90, overwrite=True, jobs=4, device="cpu", name="{stem}_eq.{ext}"
    (True: a flag; False and None: left out). A file that fails does not stop the others:
    "failed" lists each as {"path", "reason"}. ValueError for an invalid option."""
    return _imgpu._batch(_batch_argv(inputs, outdir, ops, options))


def _batch_argv(inputs, outdir, ops, options):
    """The `imgpu batch` arguments (after "batch") of batch(inputs, outdir, ops, **options)."""
    if isinstance(inputs, (str, bytes, _os.PathLike)):
        inputs = [inputs]
    argv = []
    for o in ops:
        argv += _as_op(o).cli_args()
    argv += ["-o", _os.fspath(outdir)]
    for key, v in options.items():
        if v is None or v is False:
            continue
        flag = "--" + key.replace("_", "-")
        if v is True:
            argv.append(flag)
        elif isinstance(v, (list, tuple)):
            argv += [flag, ",".join(str(x) for x in v)]
        else:
            argv += [flag, _os.fsdecode(v) if isinstance(v, (bytes, _os.PathLike)) else str(v)]
    argv.append("--")
    argv += [_os.fsdecode(_os.fspath(p)) for p in inputs]
    return argv


# ---- the op functions, generated from the op table ----------------------------------------------
# _imgpu._op_table() is the C library's op table (src/op/op_table.h) as Python sees it: one entry
# per op of the registry, its parameters as keywords (the CLI options with '-' -> '_'), their
# types, defaults, ranges and help. Nothing here names an op: a new op in the registry is a new
# function. histogram is the one function outside the table (a measurement, not an image op).

_TABLE = {d["name"]: d for d in _imgpu._op_table()}
_OPS = {}
_TYPE_WORDS = {"int": "int", "float": "float", "size": "(int, int), 'WxH' or int",
               "color": "str, (R, G, B[, A]) or None", "bool": "bool", "level": "float or 'P%'",
               "rect": "str 'X,Y,W,H', (X, Y, W, H) or None"}
_COMMON = [
    ("device", "None", "'auto', 'cpu', 'cuda' or an imgpu.Context; None: the Context of the enclosing "
                       "`with imgpu.Context(...)`, else 'auto'"),
    ("out", "None", "a preallocated array of the result's shape and dtype to write into (returned)"),
    ("stream", "None", "a CUDA stream (int handle, or an object with __cuda_stream__ or .cuda_stream) "
                       "for device arrays; host arrays run synchronously and need none"),
]


def _num(x):
    return str(int(x)) if float(x).is_integer() else repr(x)


def _range(p):
    lo, hi = p["min"], p["max"]
    if lo is None or (lo == float("-inf") and hi == float("inf")):
        return None
    text = "%s..%s" % (_num(lo) if lo != float("-inf") else "-inf", _num(hi) if hi != float("inf") else "inf")
    return text + (" each" if p["type"] == "size" else "")


def _indent(text):
    return ["    " + line.strip() for line in text.strip().splitlines()]


def _param_doc(p):
    kind = " | ".join(repr(c) for c in p["choices"]) if p["type"] == "choice" else _TYPE_WORDS[p["type"]]
    if p["units"]:
        kind += " (%s)" % p["units"]
    kind += ", required" if p["required"] else ", default %r" % (p["default"],)
    r = _range(p)
    if r:
        kind += ", range " + r
    lines = ["%s : %s" % (p["name"], kind)]
    if p["type"] == "bool" and len(p["cli"]) == 2:
        lines += ["    True (CLI: --%s):" % p["cli"][0]] + ["    " + s for s in _indent(p["help"])]
        lines += ["    False (CLI: --%s):" % p["cli"][1]] + ["    " + s for s in _indent(p["help_false"])]
    else:
        lines += _indent(p["help"])
        cli = "--%s%s" % (p["cli"][0], " " + p["metavar"] if p["metavar"] else "")
        lines.append("    Allowed: %s (CLI: %s)." % (p["hint"], cli) if p["hint"] else "    (CLI: %s)" % cli)
    return lines


def _doc(desc):
    lines = [desc["summary"][:1].upper() + desc["summary"][1:] + ".", ""] + \
        [s.strip() for s in desc["doc"].strip().splitlines()] + \
        ["The same bytes as `imgpu %s`." % desc["name"], "", "Parameters", "----------",
         "array : numpy array (H x W or H x W x C, uint8 or uint16), or a CUDA array"]
    for p in desc["params"]:
        lines += _param_doc(p)
    for name, default, text in _COMMON:
        lines += ["%s : default %s" % (name, default), "    " + text + "."]
    lines += ["", "Returns", "-------",
              "A new array (the same dtype; H x W or H x W x C), or `out`.",
              "", "Raises", "------",
              "ValueError for a parameter outside its range (the CLI's refusal), TypeError for a value "
              "of the wrong type or an array imgpu cannot take, imgpu.Error otherwise."]
    return "\n".join(lines)


def _make(desc):
    """The function of one op: array, the required parameters (positional), then the others
    (keyword-only) with the table's defaults, then device, out, stream."""
    name = desc["name"]
    params = desc["params"]
    positional = [p["name"] for p in params if p["required"]]
    keyword = [p for p in params if not p["required"]]
    defaults = {p["name"]: p["default"] for p in keyword}
    sig = ["array"] + positional + ["*"] + ["%s=_d[%r]" % (p["name"], p["name"]) for p in keyword]
    sig += ["device=None", "out=None", "stream=None"]
    pd = ", ".join("%r: %s" % (n, n) for n in positional + [p["name"] for p in keyword])
    src = "def %s(%s):\n    return _run_op(%r, array, {%s}, _dev(device), out, stream)\n" % (
        name, ", ".join(sig), name, pd)
    ns = {"_d": defaults, "_run_op": _imgpu._run_op, "_dev": _device}
    exec(compile(src, "<imgpu op table: %s>" % name, "exec"), ns)
    fn = ns[name]
    fn.__module__ = __name__
    fn.__qualname__ = name
    fn.__doc__ = _doc(desc)
    return fn


def histogram(array, *, device=None, stream=None):
    """Full-resolution histograms: a uint32 array of shape (planes, levels), on the host.

    levels is 256 (8-bit) or 65536 (16-bit); the planes are the channels in order (gray | R, G,
    B; then alpha) and, for RGB and RGBA images, the luminance Y (BT.601, the Y that equalize
    uses) last: the columns of `imgpu histogram --csv` (with --bins 65536 for 16-bit images).

    Parameters
    ----------
    array : numpy array (H x W or H x W x C, uint8 or uint16), or a CUDA array (torch, CuPy,
        imgpu.Array): counted on its GPU, without a copy to the host; only the counts come back
    device : default None
        'auto', 'cpu', 'cuda' or an imgpu.Context; None: the Context of the enclosing
        `with imgpu.Context(...)`, else 'auto'.
    stream : default None
        for a CUDA array: the stream whose work the count follows (an int handle, or an object
        with __cuda_stream__ or .cuda_stream); None: the array's producer's, else the caller's
        current stream. The counts are complete on return.
    """
    return _imgpu._run_op("histogram", array, None, _device(device), None, stream)


for _d in _TABLE.values():
    _OPS[_d["name"]] = globals()[_d["name"]] = _make(_d)
    __all__.append(_d["name"])
_OPS["histogram"] = histogram
__all__.append("histogram")
ops = tuple(_OPS)   # the op names: the table's, in its order, then histogram
del _d

"""The op functions come from the C library's op table (src/op/op_table.h), with nothing per op
on the Python side: every op of the table is a function whose signature, defaults, ranges and
help are the table's; its keywords are the CLI's options; out-of-range values are refused with
the CLI's own words; and the shipped type stubs are the ones the table generates."""
import ast
import inspect
import os

import numpy as np
import pytest

import imgpu
from imgpu import _stubgen
from conftest import LAYOUTS, run_cli

TABLE = imgpu._imgpu._op_table()
NAMES = [d["name"] for d in TABLE]
SRC = os.path.join(os.path.dirname(__file__), "..", "..")
RGB = LAYOUTS["rgb8"]
P = inspect.Parameter


def _value_in_range(p):
    """A valid value of a parameter that is not its default, from the table alone."""
    t = p["type"]
    if t == "choice":
        return [c for c in p["choices"] if c != p.get("default")][0]
    if t == "bool":
        return not p["default"]
    if t == "color":
        return (10, 200, 30)
    if t == "level":   # a level, or a percentage "P%" (levels' --black / --white)
        return "12.5%" if p.get("default") != "12.5%" else 3.5
    if t == "rect":    # X,Y,W,H (crop's --rect): a small box inside any test image
        return (1, 1, 2, 2)
    lo = p["min"] if p["min"] != float("-inf") else -1e6
    hi = p["max"] if p["max"] != float("inf") else 1e6
    v = min(max(lo, 3), hi)
    if t == "float":
        return float(v) + (0.5 if v + 0.5 <= hi else 0.0)
    if t == "int":
        return int(v)
    return (int(v), int(min(v + 1, hi)))


def test_the_table_is_the_registry():
    assert NAMES and len(set(NAMES)) == len(NAMES)
    assert {"equalize", "clahe", "rotate"} <= set(NAMES)
    assert list(imgpu.ops) == NAMES + ["histogram"]


@pytest.mark.parametrize("desc", TABLE, ids=NAMES)
def test_signature_is_the_tables(desc):
    fn = getattr(imgpu, desc["name"])
    assert fn is imgpu._OPS[desc["name"]] and desc["name"] in imgpu.__all__
    sig = list(inspect.signature(fn).parameters.values())
    assert sig[0].name == "array" and sig[0].kind is P.POSITIONAL_OR_KEYWORD
    want = [(p["name"], P.POSITIONAL_OR_KEYWORD if p["required"] else P.KEYWORD_ONLY,
             P.empty if p["required"] else p["default"]) for p in desc["params"]]
    # the required parameters come first (positional), the others keep the table's order
    want = [w for w in want if w[1] is P.POSITIONAL_OR_KEYWORD] + [w for w in want if w[1] is P.KEYWORD_ONLY]
    want += [("device", P.KEYWORD_ONLY, None), ("out", P.KEYWORD_ONLY, None), ("stream", P.KEYWORD_ONLY, None)]
    assert [(s.name, s.kind, s.default) for s in sig[1:]] == want
    for p in desc["params"]:
        # keywords are the CLI's options, '-' -> '_'
        assert p["name"] == p["cli"][0].replace("-", "_")
        assert p["type"] in ("int", "float", "choice", "size", "color", "bool", "level", "rect")
        if p["type"] == "choice" and not p["required"]:
            assert p["default"] in p["choices"]
        if p["type"] in ("int", "float") and not p["required"]:
            assert p["min"] <= p["default"] <= p["max"]
        if p["type"] == "size":
            assert all(p["min"] <= v <= p["max"] for v in p["default"])
        # help(): each parameter's line says its default and its range
        line = [ln for ln in fn.__doc__.splitlines() if ln.startswith(p["name"] + " : ")]
        assert len(line) == 1, p["name"]
        if not p["required"]:
            assert "default %r" % (p["default"],) in line[0]
        if p["type"] in ("int", "float", "size") and p["max"] != float("inf"):
            assert "range " in line[0]
    # the Context has the same op, bound
    with imgpu.Context("cpu") as ctx:
        assert getattr(ctx, desc["name"]).__doc__ == fn.__doc__


@pytest.mark.parametrize("desc", TABLE, ids=NAMES)
def test_keywords_are_the_cli_options(desc):
    """Each keyword's CLI option(s) appear in `imgpu OP --help` (the op's own help is generated
    from the same table)."""
    text = run_cli(desc["name"], "--help").stdout
    for p in desc["params"]:
        for opt in p["cli"]:
            assert "--" + opt in text, (desc["name"], opt)


def _required(desc):
    return [_value_in_range(p) for p in desc["params"] if p["required"]]


@pytest.mark.parametrize("desc", TABLE, ids=NAMES)
def test_defaults_passed_explicitly_change_nothing(desc):
    fn = getattr(imgpu, desc["name"])
    req = _required(desc)
    base = fn(RGB, *req)
    explicit = {p["name"]: p["default"] for p in desc["params"] if not p["required"]}
    assert np.array_equal(fn(RGB, *req, **explicit), base)
    # and each other valid value is accepted and reaches the op (the CLI gives the same bytes)
    for p in desc["params"]:
        if p["required"]:
            continue
        v = _value_in_range(p)
        try:
            fn(RGB, *req, **{p["name"]: v})
        except imgpu.Error as e:   # a value that needs an op before it (crop's inner: a rotation)
            assert "must follow" in str(e), e


@pytest.mark.parametrize("desc", TABLE, ids=NAMES)
def test_out_of_range_is_the_clis_refusal(desc, tmp_path):
    """Above the maximum (or below the minimum) of every numeric parameter: ValueError whose
    message is the CLI's own refusal of the same value."""
    src = tmp_path / "in.png"
    imgpu.write(src, RGB)
    fn = getattr(imgpu, desc["name"])
    req = _required(desc)
    checked = 0
    for p in desc["params"]:
        bad = []
        if p["type"] == "float":
            bad = [v for v in (p["max"] * 2 + 1, p["min"] * 2 - 1) if abs(v) != float("inf")] + [float("nan")]
        elif p["type"] == "int":
            bad = [int(p["max"]) + 1, int(p["min"]) - 1]
        elif p["type"] == "size":
            bad = [(int(p["min"]), int(p["max"]) + 1)]
        elif p["type"] == "choice":
            bad = ["no-such-" + p["name"]]
        elif p["type"] == "level":
            bad = [p["max"] * 2 + 1, "101%", "-5%"]
        elif p["type"] == "rect":
            bad = [(0, 0, 0, 1), "1,2,3", (-1, 0, 1, 1)]
        for v in bad:
            args = list(req)
            kw = {}
            if p["required"]:
                args[[q["name"] for q in desc["params"] if q["required"]].index(p["name"])] = v
            else:
                kw[p["name"]] = v
            with pytest.raises(ValueError) as e:
                fn(RGB, *args, **kw)
            text = (",".join(map(str, v)) if p["type"] == "rect" else "%sx%s" % v) if isinstance(v, tuple) \
                else repr(v) if isinstance(v, float) else str(v)
            cli = run_cli(desc["name"], src, tmp_path / "out.png", "--" + p["cli"][0], text, check=False)
            assert cli.returncode != 0
            refusal = cli.stderr.splitlines()[0]
            assert refusal.startswith("imgpu: invalid --")
            assert str(e.value) == desc["name"] + ": " + refusal[len("imgpu: "):]
            checked += 1
    assert checked or not [p for p in desc["params"] if p["type"] in ("int", "float", "size", "choice")]


def test_flag_pairs_are_one_bool_and_contradictions_refused():
    """Two flags of one field (rotate's --expand / --crop) are one bool keyword named after the
    default's flag; True and False give the CLI's two flags' results."""
    pairs = [(d, p) for d in TABLE for p in d["params"] if p["type"] == "bool" and len(p["cli"]) == 2]
    assert pairs, "rotate's --expand/--crop at least"
    for d, p in pairs:
        assert p["default"] is True and p["name"] == p["cli"][0].replace("-", "_")
        fn = getattr(imgpu, d["name"])
        req = [17.0 if q["type"] == "float" else _value_in_range(q) for q in d["params"] if q["required"]]
        t = fn(RGB, *req, **{p["name"]: True})
        f = fn(RGB, *req, **{p["name"]: False})
        o = imgpu.op(d["name"], **dict(zip([q["name"] for q in d["params"] if q["required"]], req)),
                     **{p["name"]: False})
        assert "--" + p["cli"][1] in o.cli_args()
        assert np.array_equal(o(RGB), f)
        assert not np.array_equal(t, f) or t.shape != f.shape


def test_size_takes_a_tuple_a_string_or_an_int():
    """SIZE parameters (clahe's tiles): (w, h), the CLI's "WxH", or n for n x n (the "WxH" form is
    new with the op table: it used to be a TypeError)."""
    want = imgpu.clahe(RGB, tiles=(4, 3))
    assert np.array_equal(imgpu.clahe(RGB, tiles="4x3"), want)
    assert np.array_equal(imgpu.clahe(RGB, tiles="4X3"), want)
    assert np.array_equal(imgpu.clahe(RGB, tiles=[4, 3]), want)
    assert np.array_equal(imgpu.clahe(RGB, tiles=np.int64(5)), imgpu.clahe(RGB, tiles=(5, 5)))
    with pytest.raises(ValueError, match=r"invalid --tiles '4x'"):
        imgpu.clahe(RGB, tiles="4x")
    with pytest.raises(TypeError):
        imgpu.clahe(RGB, tiles=(4.0, 3))


def test_color_takes_a_string_or_a_tuple():
    a = imgpu.rotate(RGB, 20, background="#0a141e")
    assert np.array_equal(imgpu.rotate(RGB, 20, background=(10, 20, 30)), a)
    assert np.array_equal(imgpu.rotate(RGB, 20, background="10,20,30"), a)
    assert np.array_equal(imgpu.rotate(RGB, 20, background=None), imgpu.rotate(RGB, 20))
    with pytest.raises(TypeError):
        imgpu.rotate(RGB, 20, background=3)


def test_rect_takes_a_string_or_a_tuple():
    """crop's rect= (the RECT type): 'X,Y,W,H' or (X, Y, W, H); None is not given (a copy);
    the box is numpy's slice [Y:Y+H, X:X+W]; one outside the image is refused."""
    a = imgpu.crop(RGB, rect=(3, 2, 5, 4))
    assert np.array_equal(a, RGB[2:6, 3:8])
    assert np.array_equal(imgpu.crop(RGB, rect="3,2,5,4"), a)
    assert np.array_equal(imgpu.crop(RGB, rect=[np.int64(3), 2, 5, 4]), a)
    assert np.array_equal(imgpu.crop(RGB, rect=None), RGB)
    with pytest.raises(TypeError):
        imgpu.crop(RGB, rect=3)
    with pytest.raises(TypeError):
        imgpu.crop(RGB, rect=(1.5, 0, 1, 1))
    h, w = RGB.shape[:2]
    with pytest.raises(imgpu.Error, match="outside the %dx%d image" % (w, h)):
        imgpu.crop(RGB, rect=(w - 1, 0, 2, 1))


def test_crop_in_a_chain_and_in_batch(tmp_path):
    """crop after a rotation: inner=True in a chain is the expanded rotation cut symmetrically
    (no background: alpha stays opaque); in imgpu.batch a crop at its defaults after a rotation
    stays a crop op (its batch options say so: batch reads a lone --crop after --rotate as the
    rotation's keep-size)."""
    a = np.full((30, 40, 4), 200, np.uint8)
    a[..., :3] = RGB[:30, :40]
    inner = imgpu.apply(a, [imgpu.op("rotate", angle=30), imgpu.op("crop", inner=True)])
    full = imgpu.rotate(a, 30)
    h, w = inner.shape[:2]
    y, x = (full.shape[0] - h) // 2, (full.shape[1] - w) // 2
    assert (full.shape[0] - h) % 2 == 0 and (full.shape[1] - w) % 2 == 0 and 0 < h < 30 and 0 < w < 40
    assert np.array_equal(inner, full[y:y + h, x:x + w]) and inner[..., 3].min() == 200
    with pytest.raises(imgpu.Error, match="must follow an expanding rotation"):
        imgpu.apply(a, [imgpu.op("rotate", angle=30, expand=False), imgpu.op("crop", inner=True)])
    assert imgpu.op("crop").cli_args() == ["--crop", "--gravity", "center"]
    src = tmp_path / "a.png"
    imgpu.write(src, a)
    imgpu.batch([src], tmp_path / "o", ops=[imgpu.op("rotate", angle=30), "crop"], device="cpu")
    assert np.array_equal(imgpu.read(tmp_path / "o" / "a.png"), full)
    imgpu.batch([src], tmp_path / "i", ops=[imgpu.op("rotate", angle=30), imgpu.op("crop", inner=True)], device="cpu")
    assert np.array_equal(imgpu.read(tmp_path / "i" / "a.png"), inner)


def test_numbers_take_numpy_scalars():
    assert np.array_equal(imgpu.clahe(RGB, clip=np.float32(2.5)), imgpu.clahe(RGB, clip=2.5))
    assert np.array_equal(imgpu.rotate(RGB, np.int16(30)), imgpu.rotate(RGB, 30))
    with pytest.raises(TypeError):
        imgpu.clahe(RGB, clip=True)


def test_shipped_stubs_are_the_tables():
    """imgpu/__init__.pyi is generated from the table at build time: it equals what the table
    generates now, and each op's stub has the function's parameters and defaults."""
    stub_path = os.path.join(os.path.dirname(imgpu.__file__), "__init__.pyi")
    with open(os.path.join(SRC, "python", "__init__.pyi.in")) as f:
        template = f.read()
    with open(stub_path) as f:
        shipped = f.read()
    assert shipped == _stubgen.render(template)
    tree = ast.parse(shipped)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    ctx = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Context"][0]
    methods = {n.name: n for n in ctx.body if isinstance(n, ast.FunctionDef)}
    for d in TABLE:
        sig = inspect.signature(getattr(imgpu, d["name"]))
        f = funcs[d["name"]]
        names = [a.arg for a in f.args.args] + [a.arg for a in f.args.kwonlyargs]
        assert names == list(sig.parameters), d["name"]
        kwdefaults = [ast.literal_eval(x) for x in f.args.kw_defaults]
        assert kwdefaults == [p.default for p in sig.parameters.values() if p.kind is P.KEYWORD_ONLY]
        m = methods[d["name"]]
        assert [a.arg for a in m.args.args][1:] + [a.arg for a in m.args.kwonlyargs] == \
            [n for n in sig.parameters if n != "device"]

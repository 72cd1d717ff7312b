"""Writes the type stubs (imgpu/__init__.pyi) from the op table, so that they cannot drift from it.

The build runs it once the extension is built (cmake/python.cmake):
    python3 -m imgpu._stubgen TEMPLATE OUT
TEMPLATE (python/__init__.pyi.in) holds the hand-written stubs; its lines "# @OP_STUBS@" and
"    # @CONTEXT_OP_STUBS@" become one stub per op of the table (the module's functions and the
Context's methods). tests/python checks the shipped .pyi against render()."""
import sys

import imgpu

_TYPES = {"int": "int", "float": "float", "bool": "bool", "size": "_Size", "color": "_Color", "level": "float | str",
          "rect": "_Rect"}


def _annotation(p):
    if p["type"] == "choice":
        return "Literal[%s]" % ", ".join('"%s"' % c for c in p["choices"])
    return _TYPES[p["type"]]


def _default(v):
    if isinstance(v, str):
        return '"%s"' % v
    return repr(v)


def op_stub(desc, method=False):
    """One op's stub: `def name(array: _Array, ...) -> _Image: ...` (method: with self, no device)."""
    args = ["self"] if method else []
    args.append("array: _Array")
    args += ["%s: %s" % (p["name"], _annotation(p)) for p in desc["params"] if p["required"]]
    args.append("*")
    args += ["%s: %s = %s" % (p["name"], _annotation(p), _default(p["default"]))
             for p in desc["params"] if not p["required"]]
    if not method:
        args.append("device: _Device = None")
    args += ["out: _Array | None = None", "stream: _Stream = None"]
    return "def %s(%s) -> _Image: ..." % (desc["name"], ", ".join(args))


def render(template):
    table = imgpu._imgpu._op_table()
    out = []
    for line in template.splitlines():
        if line.strip() == "# @OP_STUBS@":
            out += [op_stub(d) for d in table]
        elif line.strip() == "# @CONTEXT_OP_STUBS@":
            indent = line[:len(line) - len(line.lstrip())]
            out += [indent + op_stub(d, method=True) for d in table]
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: python3 -m imgpu._stubgen TEMPLATE OUT\n")
        return 2
    with open(argv[1]) as f:
        text = render(f.read())
    with open(argv[2] + ".tmp", "w") as f:
        f.write(text)
    import os
    os.replace(argv[2] + ".tmp", argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

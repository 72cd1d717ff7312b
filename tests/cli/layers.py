#!/usr/bin/python3
"""layers.py — the house's floors, checked (issue 26).

    layers.py REPO [BUILD_DIR]

Reads the quoted #include lines of src/, kernels/, include/ and python/ and, with BUILD_DIR,
the symbols of the object files built from them (`nm`: which object defines and which one
uses each imgpu_ / imgpu__ name). Fails (exit 1, one line per finding) on
  (a) a circle of includes between files,
  (b) a circle of calls between source files (object A uses a name object B defines, B one
      that A defines, directly or around a longer ring),
  (c) a lower floor that includes or calls a higher one, or a file on no floor,
  (d) a call into a codec (an object that defines a codec table entry, a data symbol
      imgpu__codec_NAME) from anywhere but the codec table (the object defining
      imgpu__codec_of): the table is the only way into a codec.
The floors, lowest first (a file may include and call its own floor and the ones below):
  core     src/core/     image, error, limits, the op floor's types (op.h)
  op       src/op/       the op table: one file per op, the registry, the plan
  io       src/io/       the codec table, the codecs, reading and writing, metadata
  backend  src/backend/  the dispatcher, the session door, cpu/, cuda/, null/; kernels/
  lib      src/lib/, include/imgpu/   the library's own API (contexts, device images)
  front    src/cli/, src/batch/, src/viewer/, python/   the front ends
Circles are looked for between files, so two front ends may call each other's files only
one way. Calls are read from what the build tree holds: objects whose source no longer
exists (a file moved since the last build) are skipped; the test runs after the build.
"""
import os
import re
import subprocess
import sys

FLOORS = ["core", "op", "io", "backend", "lib", "front"]
RANK = {name: i for i, name in enumerate(FLOORS)}
PLACES = [  # (path prefix, floor); the first match wins
    ("src/core/", "core"),
    ("src/op/", "op"),
    ("src/io/", "io"),
    ("src/backend/", "backend"),
    ("kernels/", "backend"),
    ("src/lib/", "lib"),
    ("include/imgpu/", "lib"),
    ("src/cli/", "front"),
    ("src/batch/", "front"),
    ("src/viewer/", "front"),
    ("python/", "front"),
]
SCANNED = ("src", "kernels", "include", "python")
EXTS = (".c", ".h", ".cu", ".cuh")
# Where a quoted include is looked for after the including file's own folder: the include
# directories the build gives (the public headers' folders, whose copies in
# <build>/include/imgpu/ include each other by bare name).
SEARCH = ["src", "src/core", "src/io", "src/backend", "kernels", "include"]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def floor_of(path):
    for prefix, floor in PLACES:
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return floor
    return None


def files(repo):
    out = []
    for top in SCANNED:
        for root, dirs, names in os.walk(os.path.join(repo, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for n in sorted(names):
                if n.endswith(EXTS):
                    out.append(os.path.relpath(os.path.join(root, n), repo))
    return out


def resolve(repo, known, src, name, angle):
    cands = [] if angle else [os.path.normpath(os.path.join(os.path.dirname(src), name))]
    cands += [os.path.normpath(os.path.join(d, name)) for d in SEARCH]
    for c in cands:
        if c in known:
            return c
    # <imgpu/x.h> and the copies the build makes of src/'s public headers
    if name.startswith("imgpu/"):
        base = os.path.basename(name)
        hits = [k for k in known if os.path.basename(k) == base and k.endswith(".h")]
        if len(hits) == 1:
            return hits[0]
    return None


def include_graph(repo, known):
    g = {f: set() for f in known}
    for f in known:
        with open(os.path.join(repo, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            t = resolve(repo, known, f, m.group(2), m.group(1) == "<")
            if t and t != f:
                g[f].add(t)
    return g


def objects(repo, build):
    """{object path: source path} for the objects in BUILD built from a file that exists."""
    out = {}
    cmf = os.path.join(build, "CMakeFiles")
    for root, dirs, names in os.walk(cmf):
        dirs.sort()
        for n in sorted(names):
            if not n.endswith(".o"):
                continue
            p = os.path.join(root, n)
            rel = os.path.relpath(p, cmf)           # <target>.dir/src/io/io.c.o
            parts = rel.split(os.sep)
            if len(parts) < 3 or not parts[0].endswith(".dir"):
                continue
            src = "/".join(parts[1:])[:-2]
            if src.startswith(SCANNED) and os.path.isfile(os.path.join(repo, src)):
                out[p] = src
    return out


def call_graph(objs):
    defs, uses, data = {}, {}, {}
    paths = sorted(objs)
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        res = subprocess.run(["nm", "-A", "-P"] + chunk, capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"layers: nm failed: {res.stderr.strip()}")
        for line in res.stdout.splitlines():
            head, _, rest = line.rpartition(": ")
            f = rest.split()
            if len(f) < 2 or not head or not f[0].startswith("imgpu_"):
                continue
            src = objs.get(head)
            if src is None:
                continue
            sym, kind = f[0], f[1]
            if kind == "U":
                uses.setdefault(src, set()).add(sym)
            elif kind.isupper() or kind in "vw":
                defs.setdefault(sym, set()).add(src)
                if kind in "DRB":
                    data.setdefault(src, set()).add(sym)
    g = {s: set() for s in set(objs.values())}
    why = {}
    for src, syms in uses.items():
        for sym in sorted(syms):
            for d in sorted(defs.get(sym, ())):
                if d != src:
                    g[src].add(d)
                    why.setdefault((src, d), sym)
    return g, why, defs, data


def circles(g):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(g.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def ring(g, comp):
    """One cycle through comp's first node, for the message."""
    start, members = comp[0], set(comp)
    path, seen = [start], {start}
    while True:
        nxt = [n for n in sorted(g[path[-1]]) if n in members]
        if start in nxt and len(path) > 1:
            return path + [start]
        nxt = [n for n in nxt if n not in seen] or [start]
        if nxt[0] == start:
            return path + [start]
        path.append(nxt[0])
        seen.add(nxt[0])


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    repo = sys.argv[1]
    known = set(files(repo))
    bad = []
    for f in sorted(known):
        if floor_of(f) is None:
            bad.append(f"{f}: on no floor (src/ holds only the floors' folders)")
    inc = include_graph(repo, known)
    for comp in circles(inc):
        bad.append("include circle: " + " -> ".join(ring(inc, comp)))
    for f in sorted(inc):
        for t in sorted(inc[f]):
            a, b = floor_of(f), floor_of(t)
            if a and b and RANK[a] < RANK[b]:
                bad.append(f"{f} ({a}) includes {t} ({b}), a higher floor")
    ncalls = 0
    if len(sys.argv) == 3:
        objs = objects(repo, sys.argv[2])
        if not objs:
            print(f"layers: no object files of src/ under {sys.argv[2]}: build first", file=sys.stderr)
            return 1
        calls, why, defs, data = call_graph(objs)
        codecs = {o for o, syms in data.items()
                  if any(x.startswith("imgpu__codec_") for x in syms)}
        table = defs.get("imgpu__codec_of", set())
        for f in sorted(calls):
            for t in sorted(calls[f] & codecs):
                if f not in table:
                    bad.append(f"{f} calls the codec {t} around the codec table: {why[(f, t)]}")
        ncalls = sum(len(v) for v in calls.values())
        for comp in circles(calls):
            r = ring(calls, comp)
            steps = [f"{a} -[{why[(a, b)]}]-> {b}" for a, b in zip(r, r[1:])]
            bad.append("call circle: " + "; ".join(steps))
        for f in sorted(calls):
            for t in sorted(calls[f]):
                a, b = floor_of(f), floor_of(t)
                if a and b and RANK[a] < RANK[b]:
                    bad.append(f"{f} ({a}) calls {t} ({b}), a higher floor: {why[(f, t)]}")
    for line in bad:
        print("layers: " + line)
    nincl = sum(len(v) for v in inc.values())
    print(f"layers: {len(known)} files, {nincl} includes, {ncalls} calls between files: "
          f"{len(bad)} finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

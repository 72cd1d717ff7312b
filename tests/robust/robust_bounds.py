#!/usr/bin/python3
"""robust_bounds.py BINARY SCRATCH [VIEWER] — every op's result and memory are bounded before
anything is allocated (issue 14, defect 3; label robust).

Each refused run is capped (RLIMIT_AS 2 GiB, or less where stated, and a timeout) so the old
behaviour (17 GiB and 106 s for the first case) fails fast instead of eating the machine:
  - a 100000x1 and a 40000x1 RGBA strip rotated by 33 degrees: exit 1 in < 2 s, "cannot rotate"
    with the result's size and --max-pixels; no output, an existing output untouched;
  - a 1x1 16-bit PNG with `clahe --tiles 256x256` (8 GiB of tile LUTs): exit 1, --max-memory;
  - raising the limits (--max-pixels, --max-memory, IMGPU_MAX_MEMORY) lets a smaller case of
    the same kind run, and lowering them refuses it;
  - an output format that cannot hold the result (a 69998x612 result into .tga / .jpg) is
    refused before the op runs (under a 60 MiB cap the op's 128 MB result could not exist);
  - `imgpu batch`: the refused image fails alone with its file and reason, the others are
    written; malformed --max-memory / IMGPU_MAX_MEMORY are usage errors (exit 2);
  - the viewer (when built): --max-memory is parsed and validated headlessly.
Stdlib only (Debian's /usr/bin/python3)."""
import os, resource, shutil, struct, subprocess, sys, tempfile, time, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

binary = os.path.abspath(sys.argv[1])
scratch = sys.argv[2]
viewer = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 and os.path.exists(sys.argv[3]) else None
t = cc.Checker("robust_bounds")
os.makedirs(scratch, exist_ok=True)
tmp = tempfile.mkdtemp(prefix="robust_bounds.", dir=scratch)
GIB = 1 << 30
# AddressSanitizer reserves terabytes of shadow address space and cannot start under RLIMIT_AS;
# an instrumented build runs without the cap (the timeout and the messages still hold it).
with open(binary, "rb") as f:
    SANITIZED = b"__asan_init" in f.read()


def run(args, env=None, cap=2 * GIB, timeout=20, exe=None):
    """(status, stderr, seconds) of one run under an address-space cap."""
    e = dict(os.environ)
    for k in ("IMGPU_MAX_PIXELS", "IMGPU_MAX_MEMORY"):
        e.pop(k, None)
    e.update(env or {})

    def limit():
        if not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    t0 = time.monotonic()
    try:
        p = subprocess.run([exe or binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=e, preexec_fn=limit, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -999, "timed out", time.monotonic() - t0
    return p.returncode, p.stderr.decode(errors="replace"), time.monotonic() - t0


def png16(path, w, h, value):
    raw = b"".join(b"\x00" + struct.pack(">H", value) * w for _ in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    cc.write(path, b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 0, 0, 0, 0))
             + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png_size(path):
    with open(path, "rb") as f:
        return struct.unpack(">II", f.read(24)[16:24])


def strip(name, w, channels=4):
    path = os.path.join(tmp, name)
    cc.write(path, cc.png_bytes(w, 1, channels, bytes([200]) * (w * channels)))
    return path


OLD = b"old output, must survive"


def refused(label, args, out, needles, cap=2 * GIB, env=None):
    cc.write(out, OLD)
    rc, err, sec = run(args, env=env, cap=cap)
    t.check(rc == 1, f"{label}: exit 1", f"rc={rc} stderr={err!r}")
    t.check(sec < 2.0, f"{label}: refused in < 2 s", f"{sec:.2f} s")
    for n in needles:
        t.check(n in err, f"{label}: message has {n!r}", err)
    t.check(cc.read(out) == OLD, f"{label}: existing output untouched")
    t.check(not [n for n in os.listdir(os.path.dirname(out)) if n.startswith(".")],
            f"{label}: no temp file left")
    os.remove(out)
    rc, err, sec = run(args, env=env, cap=cap)
    t.check(rc == 1 and not os.path.exists(out), f"{label}: no output created", f"rc={rc} {err!r}")


# 1. the reproducers
s100k = strip("s100k.png", 100000)
s40k = strip("s40k.png", 40000)
out = os.path.join(tmp, "out.png")
refused("100000x1 rotate 33", ["rotate", s100k, out, "--angle", "33"], out,
        ["imgpu: cannot rotate '%s'" % s100k, "83868x54465", "Gpixels", "over --max-pixels 268435456",
         "IMGPU_MAX_PIXELS"])
refused("40000x1 rotate 33", ["rotate", s40k, out, "--angle", "33"], out,
        ["cannot rotate", "--max-pixels"])
px16 = os.path.join(tmp, "px16.png")
png16(px16, 1, 1, 1000)
refused("1x1 16-bit clahe 256x256", ["clahe", px16, out, "--tiles", "256x256"], out,
        ["imgpu: cannot apply clahe to '%s'" % px16, "8.00 GiB", "--max-memory", "IMGPU_MAX_MEMORY"])

# 2. the limits can be raised (and lowered): a 3000x1 strip turns into a 2517x1635 result
s3k = strip("s3k.png", 3000)
refused("3000x1 rotate 33 under --max-pixels 4000000",
        ["rotate", s3k, out, "--angle", "33", "--max-pixels", "4000000"], out, ["--max-pixels 4000000"])
refused("3000x1 rotate 33 under IMGPU_MAX_PIXELS=4000000", ["rotate", s3k, out, "--angle", "33"], out,
        ["--max-pixels 4000000"], env={"IMGPU_MAX_PIXELS": "4000000"})
rc, err, _ = run(["rotate", s3k, out, "--angle", "33", "--max-pixels", "5000000"])
t.check(rc == 0 and os.path.exists(out) and png_size(out) == (2517, 1635),
        "3000x1 rotate 33 runs with --max-pixels 5000000", f"rc={rc} {err!r}")
# 16-bit CLAHE 32x32 tiles: 1024 LUTs of 65536 entries = 128 MiB
refused("clahe 32x32 under --max-memory 100M", ["clahe", px16, out, "--tiles", "32x32", "--max-memory", "100M"],
        out, ["--max-memory 100.0 MiB"])
refused("clahe 32x32 under IMGPU_MAX_MEMORY=100M", ["clahe", px16, out, "--tiles", "32x32"], out,
        ["--max-memory"], env={"IMGPU_MAX_MEMORY": "100M"})
for how, args, env in (("--max-memory 200M", ["--max-memory", "200M"], None),
                       ("IMGPU_MAX_MEMORY=200M", [], {"IMGPU_MAX_MEMORY": "200M"}),
                       ("the default", [], None)):
    if os.path.exists(out):
        os.remove(out)
    rc, err, _ = run(["clahe", px16, out, "--tiles", "32x32"] + args, env=env)
    t.check(rc == 0 and os.path.exists(out), f"clahe 32x32 runs with {how}", f"rc={rc} {err!r}")
rc, err, _ = run(["rotate", s3k, out, "--angle", "1", "--max-memory", "junk"])
t.check(rc == 2 and "invalid --max-memory 'junk'" in err, "--max-memory junk: usage error", f"{rc} {err!r}")
rc, err, _ = run(["rotate", s3k, out, "--angle", "1"], env={"IMGPU_MAX_MEMORY": "0"})
t.check(rc == 2 and "IMGPU_MAX_MEMORY" in err, "IMGPU_MAX_MEMORY=0: usage error", f"{rc} {err!r}")
rc, err, _ = run(["clahe", "--help"])
t.check(rc == 0, "clahe --help")
rc, hout, _ = (lambda p: (p.returncode, p.stdout.decode(), 0))(
    subprocess.run([binary, "rotate", "--help"], stdout=subprocess.PIPE))
t.check("--max-memory" in hout, "rotate --help documents --max-memory")

# 3. an encode the format cannot hold is refused before the op: under 60 MiB the 69998x612
#    RGB result (128 MB) could not even be allocated
s70k = strip("s70k.png", 70000, channels=3)
for ext, fmt in ((".tga", "TGA"), (".jpg", "JPEG")):
    o = os.path.join(tmp, "wide" + ext)
    refused(f"69998x612 into {ext}", ["rotate", s70k, o, "--angle", "0.5"], o,
            ["cannot write '%s'" % o, f"{fmt} cannot store images wider or taller than 65535",
             "69998x612"], cap=60 << 20)
# (JPEG flattens alpha onto --background since libjpeg-turbo took over; PNM still refuses it)
o = os.path.join(tmp, "alpha.ppm")
refused("RGBA into .ppm", ["rotate", s3k, o, "--angle", "90"], o, ["PNM cannot store alpha"], cap=60 << 20)

# 4. batch: the refused image fails alone
bin_ = os.path.join(tmp, "bin")
os.makedirs(bin_)
shutil.copy(s100k, os.path.join(bin_, "a_strip.png"))
cc.write(os.path.join(bin_, "b_small.png"), cc.png_bytes(30, 20, 3, bytes(range(200)) * 9))
shutil.copy(px16, os.path.join(bin_, "c_px16.png"))
bout = os.path.join(tmp, "bout")
rc, err, sec = run(["batch", "--rotate", "33", "-o", bout, "--jobs", "2", bin_])
t.check(rc == 1 and sec < 5, "batch rotate 33: exit 1, fast", f"rc={rc} {sec:.2f}s {err!r}")
t.check("failed '%s'" % os.path.join(bin_, "a_strip.png") in err and "--max-pixels" in err,
        "batch: the strip fails with its file and reason", err)
t.check(sorted(cc.listdir_outputs(bout)) == ["b_small.png", "c_px16.png"], "batch: the others are written",
        str(os.listdir(bout) if os.path.isdir(bout) else None))
bout2 = os.path.join(tmp, "bout2")
rc, err, sec = run(["batch", "--clahe", "--tiles", "256x256", "-o", bout2, "--jobs", "2",
                    os.path.join(bin_, "b_small.png"), os.path.join(bin_, "c_px16.png")])
t.check(rc == 1 and sec < 5 and "c_px16.png" in err and "--max-memory" in err,
        "batch clahe 256x256: the 16-bit image fails alone", f"rc={rc} {sec:.2f}s {err!r}")
t.check(os.path.isdir(bout2) and cc.listdir_outputs(bout2) == ["b_small.png"], "batch clahe: the 8-bit image is written")
bout3 = os.path.join(tmp, "bout3")
rc, err, _ = run(["batch", "--clahe", "--tiles", "32x32", "--max-memory", "100M", "-o", bout3,
                  os.path.join(bin_, "c_px16.png")])
t.check(rc == 1 and "--max-memory" in err, "batch --max-memory 100M refuses", f"{rc} {err!r}")
rc, err, _ = run(["batch", "--clahe", "-o", bout3, os.path.join(bin_, "c_px16.png")],
                 env={"IMGPU_MAX_MEMORY": "1K"})
t.check(rc == 1 and "--max-memory" in err, "batch honours IMGPU_MAX_MEMORY", f"{rc} {err!r}")
rc, err, _ = run(["batch", "--clahe", "--max-memory", "x", "-o", bout3, bin_])
t.check(rc == 2 and "invalid --max-memory" in err, "batch --max-memory x: usage error", f"{rc} {err!r}")
rc, hout, _ = (lambda p: (p.returncode, p.stdout.decode(), 0))(
    subprocess.run([binary, "batch", "--help"], stdout=subprocess.PIPE))
t.check("--max-memory" in hout, "batch --help documents --max-memory")

# 5. the viewer's options (no window needed: parsing fails before any GL)
if viewer:
    rc, err, _ = run(["--max-memory", "junk", s3k], exe=viewer)
    t.check(rc == 2 and "invalid --max-memory 'junk'" in err, "view --max-memory junk: usage error", f"{rc} {err!r}")
    rc, err, _ = run([s3k], env={"IMGPU_MAX_MEMORY": "junk"}, exe=viewer)
    t.check(rc == 2 and "IMGPU_MAX_MEMORY" in err, "view IMGPU_MAX_MEMORY=junk: usage error", f"{rc} {err!r}")
    p = subprocess.run([viewer, "--help"], stdout=subprocess.PIPE)
    t.check("--max-memory" in p.stdout.decode(), "view --help documents --max-memory")
else:
    print("note: no imgpu-view built: its option checks skipped")

failed = t.end()
if not failed:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failed else 0)

#!/usr/bin/python3
"""robust_limits.py BINARY SCRATCH — --max-memory and --max-pixels are checked from the header,
before the decode (issue 25; README "Reliability", "Limits"; label robust).

Decompression bombs, each a few bytes to a few MB that declare a huge image, are made here:
  - TIFF: 16384x16384 RGBA 16-bit, deflate, every strip pointing at one compressed strip of
    zeros (10 KB; 2 GiB of pixels);
  - WebP: 16383x16383 lossless whose five prefix codes have one symbol each, so no pixel costs a
    bit (28 bytes; 768 MiB of pixels, and libwebp's own 1 GiB beside them);
  - PNG: 16384x16384 gray zeros (260 KB; 256 MiB);
  - JPEG: 16384x16384 gray progressive, one DC scan of 1-bit codes (512 KB; 256 MiB of pixels
    and 512 MiB of libjpeg's coefficients);
  - TGA: 16384x16384 gray, run-length coded (4 MB; 256 MiB).
Each is run as a child process, whose peak RSS comes from wait4(): under --max-memory 100M
(and IMGPU_MAX_MEMORY), `equalize`, `info` (text and --json), `histogram` and `compare` must
exit 1 with "imgpu: cannot ..." naming --max-memory and IMGPU_MAX_MEMORY, write no output (an
existing one keeps its bytes) and stay well under the bomb's size (peak RSS < 100 MiB, in < 2
s); `batch --max-memory 64M` must fail the bombs alone (each with its file and reason) and
write the small image beside them, under the same bound. A bomb over --max-pixels is refused
the same way. An image that fits the limits still decodes (the check does not refuse what it
should let through). Before the fix the bombs were decoded first: 2.1 GB and 4 s for the TIFF,
1.2 GB for the WebP, 3.8 GB for the batch.

Under AddressSanitizer (an instrumented binary: `__asan_init` in it) the RSS bound is 200 MiB
(its shadow memory and quarantine are its own; a refusal measured 10-17 MiB there).
Stdlib only (Debian's /usr/bin/python3)."""
import json, os, shutil, struct, subprocess, sys, tempfile, time, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

binary, scratch = os.path.abspath(sys.argv[1]), sys.argv[2]
t = cc.Checker("robust_limits")
os.makedirs(scratch, exist_ok=True)
tmp = tempfile.mkdtemp(prefix="robust_limits.", dir=scratch)
with open(binary, "rb") as f:
    SANITIZED = b"__asan_init" in f.read()
MIB = 1 << 20
RSS_MAX = (200 if SANITIZED else 100) * MIB   # a refused bomb: the process and its file, never the image
TIME_MAX = 2.0


def run(args, env=None, timeout=60):
    """(status, stdout, stderr, seconds, peak RSS in bytes) of one imgpu run in a fresh child
    (wait4's rusage is that child's alone); the limits' variables are cleared first."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("IMGPU_MAX_")}
    e.update(env or {})
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary] + args, stdout=fo, stderr=fe, env=e, cwd=tmp)
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                p.kill()
            time.sleep(0.002)
        el = time.monotonic() - t0
        fo.seek(0)
        fe.seek(0)
        return (os.waitstatus_to_exitcode(status), fo.read().decode(errors="replace"),
                fe.read().decode(errors="replace"), el, ru.ru_maxrss * 1024)


def write(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- the bombs -------------------------------------------------------------------------------

def tiff_bomb(w, h, spp=4, bps=16, rows=16):
    """A deflate TIFF whose strips all point at one compressed strip of zeros."""
    blob = zlib.compress(bytes(w * spp * bps // 8 * rows), 9)
    blob += b"\0" * (len(blob) & 1)
    n = (h + rows - 1) // rows
    off_bps = 8 + len(blob)
    off_offs = off_bps + 2 * spp
    off_cnts = off_offs + 4 * n
    off_ifd = off_cnts + 4 * n
    tags = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, spp, off_bps), (259, 3, 1, 8),
            (262, 3, 1, 2), (273, 4, n, off_offs), (277, 3, 1, spp), (278, 4, 1, rows),
            (279, 4, n, off_cnts), (284, 3, 1, 1), (338, 3, 1, 2)]
    ifd = struct.pack("<H", len(tags)) + b"".join(
        struct.pack("<HHII" if typ == 4 or count > 1 else "<HHIHxx", tag, typ, count, v)
        for tag, typ, count, v in tags) + struct.pack("<I", 0)
    return (b"II*\0" + struct.pack("<I", off_ifd) + blob + struct.pack("<%dH" % spp, *[bps] * spp)
            + struct.pack("<%dI" % n, *[8] * n) + struct.pack("<%dI" % n, *[len(blob)] * n) + ifd)


def webp_bomb(w, h):
    """A lossless WebP (VP8L) with no transform, no colour cache, one prefix-code group whose
    five codes each hold one symbol: every pixel is read from no bits at all."""
    bits = n = 0
    for value, k in [(0x2F, 8), (w - 1, 14), (h - 1, 14), (0, 1), (0, 3), (0, 1), (0, 1), (0, 1)] + \
            [(1, 1), (0, 1), (0, 1), (0, 1)] * 5:
        bits |= value << n
        n += k
    data = bits.to_bytes((n + 7) // 8, "little")
    chunk = b"VP8L" + struct.pack("<I", len(data)) + data + b"\0" * (len(data) & 1)
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def png_bomb(w, h):
    z = zlib.compressobj(9)
    rows = bytes((w + 1) * 1024)
    idat = b"".join(z.compress(rows) for _ in range(h // 1024)) + z.compress(bytes((w + 1) * (h % 1024)))
    idat += z.flush()

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def jpeg_bomb(w, h):
    """Progressive gray: one DC scan whose Huffman table has one 1-bit code (category 0), so
    each 8x8 block is one 0 bit; libjpeg keeps the whole image's coefficients for it."""
    dqt = b"\xff\xdb\x00\x43\x00" + b"\x01" * 64
    sof2 = b"\xff\xc2\x00\x0b\x08" + struct.pack(">HH", h, w) + b"\x01\x01\x11\x00"
    dht = b"\xff\xc4\x00\x14\x00" + b"\x01" + b"\x00" * 15 + b"\x00"
    sos = b"\xff\xda\x00\x08\x01\x01\x00\x00\x00\x00"
    blocks = ((w + 7) // 8) * ((h + 7) // 8)
    return b"\xff\xd8" + dqt + sof2 + dht + sos + bytes((blocks + 7) // 8) + b"\xff\xd9"


def tga_bomb(w, h):
    """Gray, run-length coded: runs of 128 zero pixels, 2 bytes each."""
    header = struct.pack("<BBBHHBHHHHBB", 0, 0, 11, 0, 0, 0, 0, 0, w, h, 8, 0x20)
    return header + b"\xff\x00" * (w * h // 128)


K16 = 16384
bombs = {
    "tiff": write("bomb.tif", tiff_bomb(K16, K16)),
    "webp": write("bomb.webp", webp_bomb(16383, 16383)),
    "png": write("bomb.png", png_bomb(K16, K16)),
    "jpeg": write("bomb.jpg", jpeg_bomb(K16, K16)),
    "tga": write("bomb.tga", tga_bomb(K16, K16)),
}
for kind, path in bombs.items():
    print(f"{kind} bomb: {os.path.getsize(path)} bytes")


def bounded(what, rc, out, err, el, rss, needles, want_out=""):
    """The refusal of one bomb: exit 1, one message naming what to raise, no output, fast and
    small."""
    t.check(rc == 1, f"{what}: exit 1", f"rc={rc} {err[:400]}")
    t.check(err.startswith("imgpu: ") and all(n in err for n in needles),
            f"{what}: the message names {needles}", err[:600])
    t.check(out == want_out, f"{what}: nothing on stdout", out[:300])
    t.check(el < TIME_MAX, f"{what}: refused in {el:.2f} s (< {TIME_MAX} s)")
    t.check(rss < RSS_MAX, f"{what}: peak RSS {rss / MIB:.0f} MiB (< {RSS_MAX // MIB} MiB)")


MEM = ("--max-memory", "IMGPU_MAX_MEMORY")
OLD = b"old output, must survive"

# ---- the single commands -------------------------------------------------------------------
for kind, path in bombs.items():
    name = os.path.basename(path)
    out = os.path.join(tmp, "o_" + kind + ".png")
    # equalize: the job's plan from the header (input + result + working buffers)
    if os.path.exists(out):
        os.unlink(out)
    rc, so, se, el, rss = run(["equalize", "--max-memory", "100M", name, out, "--device", "cpu"])
    bounded(f"{kind}: equalize --max-memory 100M", rc, so, se, el, rss,
            (f"cannot equalize '{name}'",) + MEM)
    t.check(not os.path.exists(out), f"{kind}: equalize wrote no output")
    # an existing output keeps its bytes
    with open(out, "wb") as f:
        f.write(OLD)
    rc, so, se, el, rss = run(["rotate", "--angle", "90", name, out, "--device", "cpu"],
                              env={"IMGPU_MAX_MEMORY": "100M"})
    bounded(f"{kind}: IMGPU_MAX_MEMORY=100M rotate", rc, so, se, el, rss, (f"'{name}'",) + MEM)
    with open(out, "rb") as f:
        t.check(f.read() == OLD, f"{kind}: rotate left the existing output as it was")
    # info: the load's own need (file + image + the decoder's buffers), no op
    rc, so, se, el, rss = run(["info", "--max-memory", "100M", name])
    bounded(f"{kind}: info --max-memory 100M", rc, so, se, el, rss,
            (f"cannot read '{name}'", "--max-memory 100.0 MiB", "IMGPU_MAX_MEMORY"))
    rc, so, se, el, rss = run(["info", name], env={"IMGPU_MAX_MEMORY": "100M"})
    bounded(f"{kind}: IMGPU_MAX_MEMORY=100M info", rc, so, se, el, rss,
            (f"cannot read '{name}'",) + MEM)

rc, so, se, el, rss = run(["info", "--json", "--max-memory", "100M", "bomb.tif"])
try:
    obj = json.loads(so)
except ValueError:
    obj = {}
t.check(rc == 1 and obj.get("path") == "bomb.tif" and "--max-memory" in obj.get("error", ""),
        "info --json: the bomb's line is {path, error} naming --max-memory", so + se)
t.check(el < TIME_MAX and rss < RSS_MAX,
        f"info --json: {el:.2f} s, {rss / MIB:.0f} MiB")
rc, so, se, el, rss = run(["histogram", "--max-memory", "100M", "bomb.webp", "--device", "cpu"])
bounded("histogram --max-memory 100M", rc, so, se, el, rss, ("cannot read 'bomb.webp'",) + MEM)
rc, so, se, el, rss = run(["compare", "--max-memory", "100M", "bomb.png", "bomb.png"])
bounded("compare --max-memory 100M", rc, so, se, el, rss, ("cannot read 'bomb.png'",) + MEM)
# --max-pixels: the input from its header, and an op's result (a 45-degree turn of the
# 16383^2 WebP is 23169^2 = 537 Mpixels) before the input is decoded
rc, so, se, el, rss = run(["info", "--max-pixels", "1000000", "bomb.tif"])
bounded("info --max-pixels 1000000", rc, so, se, el, rss,
        ("cannot read 'bomb.tif'", "more than the limit of 1000000", "--max-pixels"))
rc, so, se, el, rss = run(["rotate", "--angle", "45", "bomb.webp", "o45.png", "--device", "cpu"])
bounded("rotate --angle 45 (default limits)", rc, so, se, el, rss,
        ("cannot rotate 'bomb.webp'", "--max-pixels 268435456", "IMGPU_MAX_PIXELS"))
t.check(not os.path.exists(os.path.join(tmp, "o45.png")), "rotate 45: no output")

# ---- batch ---------------------------------------------------------------------------------
indir, outdir = os.path.join(tmp, "in"), os.path.join(tmp, "out")
os.makedirs(indir)
for path in bombs.values():
    shutil.copy(path, indir)
cc.write(os.path.join(indir, "small.png"), cc.png_bytes(64, 48, 3, bytes(range(256)) * 36))
rc, so, se, el, rss = run(["batch", "--equalize", "--max-memory", "64M", "--device", "cpu",
                           "--jobs", "2", "-o", outdir, indir])
t.check(rc == 1, "batch --max-memory 64M: exit 1 (the bombs failed)", f"rc={rc} {se[:600]}")
for path in bombs.values():
    name = os.path.join(indir, os.path.basename(path))
    t.check(f"failed '{name}'" in se and all(n in se for n in MEM) and "64.0 MiB" in se,
            f"batch: {os.path.basename(path)} failed alone, naming --max-memory", se[:1500])
written = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []
t.check([n for n in written if not n.startswith(".")] == ["small.png"],
        "batch: the small image is written, no bomb's output", written)
t.check(el < 3 * TIME_MAX, f"batch: {el:.2f} s")
t.check(rss < RSS_MAX, f"batch: peak RSS {rss / MIB:.0f} MiB (< {RSS_MAX // MIB} MiB)")

# ---- what fits still runs --------------------------------------------------------------------
# a 2000x2000 lossless WebP of the same kind (12 MiB of RGB) under --max-memory 60M: the load
# (file + image + libwebp's 20 MiB) and equalize (input + result + working buffers) both fit
small = write("fits.webp", webp_bomb(2000, 2000))
rc, so, se, el, rss = run(["equalize", "--max-memory", "60M", "fits.webp", "fits.png", "--device", "cpu"])
t.check(rc == 0 and os.path.exists(os.path.join(tmp, "fits.png")),
        "a 2000x2000 image under --max-memory 60M is decoded and equalized", se[:400])
rc, so, se, el, rss = run(["info", "--max-memory", "60M", small])
t.check(rc == 0 and "2000 x 2000" in so, "info --max-memory 60M on it", so + se)

failed = t.end()
cc.cleanup(tmp, failed)
sys.exit(failed)

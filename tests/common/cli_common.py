"""cli_common.py — shared helpers of the scripts that drive imgpu (tests/cli/, batch/, io/,
robust/, viewer/): run the built imgpu binary with a timeout, record failed checks and go on (so
one run reports every broken case), craft tiny image files byte by byte, and watch a directory
for leftovers.

Every script takes: IMGPU_BINARY TMP_ROOT ASSETS_DIR. It makes its own temporary directory
under TMP_ROOT (in the build tree) and removes it at the end unless a check failed and
IMGPU_KEEP_TMP is set.
"""
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

TIMEOUT = 20  # seconds: a hang on hostile input is a failure, not a stuck CI job


class Checker:
    def __init__(self, name):
        self.name = name
        self.failures = 0
        self.checks = 0

    def check(self, cond, what, detail=""):
        self.checks += 1
        if not cond:
            self.failures += 1
            msg = f"FAIL: {what}"
            if detail is not None and not isinstance(detail, str):
                detail = repr(detail)   # a dict, bytes, a tuple: shown, never a TypeError
            if detail:
                msg += "\n      " + detail.replace("\n", "\n      ")
            print(msg, flush=True)
        return cond

    def end(self):
        print(f"{self.name}: {self.checks} checks, {self.failures} failed")
        return 1 if self.failures else 0


class Result:
    def __init__(self, args, rc, out, err, timed_out):
        self.args, self.rc, self.out, self.err, self.timed_out = args, rc, out, err, timed_out

    def __str__(self):
        return (f"imgpu {' '.join(self.args)}\n  rc={self.rc} timed_out={self.timed_out}\n"
                f"  stdout: {self.out[:600]!r}\n  stderr: {self.err[:600]!r}")


def setup(name):
    if len(sys.argv) != 4:
        print(f"usage: {sys.argv[0]} IMGPU_BINARY TMP_ROOT ASSETS_DIR", file=sys.stderr)
        sys.exit(2)
    binary, tmp_root, assets = sys.argv[1:4]
    os.makedirs(tmp_root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=name + ".", dir=tmp_root)
    return os.path.abspath(binary), tmp, os.path.abspath(assets)


def cleanup(tmp, failed):
    if failed and os.environ.get("IMGPU_KEEP_TMP"):
        print(f"kept {tmp}")
        return
    shutil.rmtree(tmp, ignore_errors=True)


def run(binary, args, cwd=None, timeout=TIMEOUT, env=None):
    try:
        p = subprocess.run([binary] + list(args), cwd=cwd, capture_output=True, timeout=timeout,
                           env=env)
        return Result(list(args), p.returncode, p.stdout.decode("utf-8", "replace"),
                      p.stderr.decode("utf-8", "replace"), False)
    except subprocess.TimeoutExpired as e:
        return Result(list(args), None, (e.stdout or b"").decode("utf-8", "replace"),
                      (e.stderr or b"").decode("utf-8", "replace"), True)


class Runner:
    """imgpu commands for a script that runs hundreds of them. Where IMGPU_INPROC names the
    test tool cli_inproc (tests/common/cli_inproc.c: src/cli/main.c's main in a loop), every
    command after the first of its name (the op or command, argv[0]) runs in that one process,
    so CUDA's start-up (0.3 s to seconds under a parallel GPU suite) is paid once, not per
    command; the first of each name runs as an `imgpu` process of its own (the CLI's whole path
    stays covered). Without IMGPU_INPROC: every command a process, as run() (the CPU
    variants). run(args) returns a Result; a command past TIMEOUT is a timed-out Result and
    the next command starts a new cli_inproc."""

    def __init__(self, binary, timeout=TIMEOUT, first_as_process=True):
        self.binary, self.timeout, self.first_as_process = binary, timeout, first_as_process
        self.tool = os.environ.get("IMGPU_INPROC") or None
        self.seen = set()
        self.proc = None
        self.dir = None
        self.inproc_runs = self.process_runs = 0
        self.exit_status = None
        if self.tool:
            import atexit
            atexit.register(self.close)

    def _start(self):
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="cli_inproc.")
        self.proc = subprocess.Popen([self.tool, self.dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, args, process=False):
        args = [str(a) for a in args]
        first = not args or args[0] not in self.seen
        if args:
            self.seen.add(args[0])
        if not self.tool or process or (first and self.first_as_process) or any("\n" in a for a in args):
            self.process_runs += 1
            return run(self.binary, args, timeout=self.timeout)
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.inproc_runs += 1
        ready = []
        req = (f"{len(args)}\n" + "".join(a + "\n" for a in args)).encode()
        try:
            self.proc.stdin.write(req)
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
            line = self.proc.stdout.readline() if ready else b""
        except OSError:
            line = b""
        timed_out = not ready
        if not line.strip():
            self._stop()   # it hung or died: the Result says so, the next command starts anew
            rc = None
        else:
            rc = int(line)

        def text(name):
            try:
                with open(os.path.join(self.dir, name), "rb") as f:
                    return f.read().decode("utf-8", "replace")
            except OSError:
                return ""
        return Result(args, rc, text("out"), text("err"), timed_out)

    def close(self):
        """ends cli_inproc (end of its input); self.exit_status: its exit status (0: it ended
        cleanly, under the sanitizers with no leak report; None: never started)"""
        if self.proc:
            self.proc.stdin.close()
            self.exit_status = self.proc.wait()
            self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if self.tool and self.process_runs + self.inproc_runs:
            print(f"imgpu: {self.process_runs} commands as processes, {self.inproc_runs} in one cli_inproc process")
            self.process_runs = self.inproc_runs = 0


def run_argv(argv, stdin=None, timeout=120):
    """argv run to the end: (exit status, stdout bytes, stderr text). For the scripts that
    check with a plain function (meta_cli, io_jpeg_cv2, webp_check, tiff_crosscheck)."""
    p = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def icc_profile(desc):
    """A small ICC v2 profile with a 'desc' tag (textDescriptionType)."""
    text = desc.encode() + b"\0"
    tag = b"desc" + b"\0" * 4 + struct.pack(">I", len(text)) + text + b"\0" * 12
    tag += b"\0" * ((4 - len(tag) % 4) % 4)
    size = 128 + 4 + 12 + len(tag)
    head = struct.pack(">I", size) + b"none" + bytes([2, 0x10, 0, 0]) + b"mntrRGB XYZ "
    head += b"\0" * (128 - len(head))
    return head + struct.pack(">I", 1) + b"desc" + struct.pack(">II", 144, len(tag)) + tag


def snapshot(directory):
    """Every name under directory (recursively) with its size and content hash."""
    out = {}
    for root, dirs, files in os.walk(directory):
        for f in files + dirs:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, directory)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    out[rel] = zlib.crc32(fh.read())
            else:
                out[rel] = "dir-or-link"
    return out


# imgpu batch's record of what made each output (src/batch/batch_manifest.h): a hidden file that
# every batch OUTDIR has; listings of outputs leave it out.
BATCH_MANIFEST = ".imgpu-batch"


def listdir_outputs(d):
    """os.listdir(d) without batch's manifest."""
    return [n for n in os.listdir(d) if n != BATCH_MANIFEST]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


# ---- tiny encoders (no dependencies, so the bytes are exactly what the test says) ------------

def _chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def png_bytes(width, height, channels, pixels, declared=None):
    """8-bit PNG; pixels is a bytes object of width*height*channels samples, rows top to
    bottom. declared=(w, h) writes other dimensions into IHDR (for lying headers)."""
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    dw, dh = declared or (width, height)
    ihdr = struct.pack(">IIBBBBB", dw, dh, 8, color_type, 0, 0, 0)
    stride = width * channels
    raw = b"".join(b"\x00" + pixels[y * stride:(y + 1) * stride] for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw))
            + _chunk(b"IEND", b""))


def bmp_bytes(width, height, rgb):
    """24-bit bottom-up BMP from top-to-bottom RGB samples."""
    row = (width * 3 + 3) & ~3
    data = bytearray()
    for y in range(height - 1, -1, -1):
        line = bytearray()
        for x in range(width):
            r, g, b = rgb[(y * width + x) * 3:(y * width + x) * 3 + 3]
            line += bytes((b, g, r))
        data += line + b"\x00" * (row - len(line))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(data), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    return header + info + bytes(data)


def tga_bytes(width, height, rgb):
    """Uncompressed 24-bit top-to-bottom TGA (descriptor bit 5 set)."""
    header = struct.pack("<BBBHHBHHHHBB", 0, 0, 2, 0, 0, 0, 0, 0, width, height, 24, 0x20)
    data = bytearray()
    for i in range(width * height):
        r, g, b = rgb[i * 3:i * 3 + 3]
        data += bytes((b, g, r))
    return header + bytes(data)


# A 1x1 GIF89a (the classic transparent pixel).
GIF_1x1 = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c"
                        "00000000010001000002024401003b")

# A 2x1 Radiance HDR, flat (not run-length encoded) RGBE pixels.
HDR_2x1 = (b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 2\n"
           + bytes((128, 64, 32, 129, 10, 20, 30, 128)))


def try_cv2():
    try:
        import cv2  # noqa: F401
        return cv2
    except Exception:
        return None

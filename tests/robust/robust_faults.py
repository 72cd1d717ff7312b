#!/usr/bin/python3
"""robust_faults.py BINARY SCRATCH ASSETS — faults and limits, end to end (label robust).

Writes ("nothing lost"): for each fault the target must hold either its old bytes or the
complete new image, no temp file may be left where the process could clean up, and the exit
status must say what happened (1 with "imgpu: cannot write '<path>': <reason>").
  - /dev/full as the output: ENOSPC reported, exit 1.
  - a file-size rlimit (RLIMIT_FSIZE) smaller than the output: EFBIG reported (imgpu ignores
    SIGXFSZ), exit 1, the old target intact, no temp file.
  - a read-only directory (run as an unprivileged user when the tests run as root, since root
    writes anyway), a missing directory: exit 1, old target intact.
  - SIGKILL at many moments of a slow write: the target is the old file or the complete new
    one (compared with a reference run), never a mix.
Limits: --max-pixels, --max-file-size, --max-decode-time and their IMGPU_MAX_* variables: the
message names the limit and how to raise it; a decompression bomb is refused in milliseconds
with little memory; malformed values are usage errors (exit 2).
GPU (skipped, 77, without a usable GPU; every check needs a CUDA build on a GPU machine):
  CUDA_VISIBLE_DEVICES= (no device), IMGPU_CUDA_MEM_LIMIT (out of device memory) and
  IMGPU_FAULT_INJECT=trap (a sticky fault; not "address": see kernels/fault.cu): --device cuda fails with a clear message,
  auto falls back to the CPU with a notice and writes the CPU's exact bytes.
"""
import os, resource, shutil, signal, stat, struct, subprocess, sys, tempfile, time, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

binary, scratch, assets = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
t = cc.Checker("robust_faults")
os.makedirs(scratch, exist_ok=True)
tmp = tempfile.mkdtemp(prefix="robust_faults.", dir=scratch)
os.chmod(tmp, 0o755)
SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "seeds", "decode")


def run(args, env=None, preexec=None, timeout=120):
    """(exit status, stdout, stderr, seconds, peak RSS in KiB) of one imgpu run; a signal
    gives a negative status."""
    e = dict(os.environ)
    e.update(env or {})
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary] + args, stdout=fo, stderr=fe, env=e, preexec_fn=preexec)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
            time.sleep(0.002)
        el = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        return (p.returncode, fo.read().decode(errors="replace"), fe.read().decode(errors="replace"),
                el, ru.ru_maxrss)


def leftovers(d):
    return [n for n in os.listdir(d) if n.startswith(".")]


def read(p):
    with open(p, "rb") as f:
        return f.read()


src = os.path.join(assets, "camera.png")
ref = os.path.join(tmp, "ref.png")
rc, _, err, _, _ = run(["equalize", src, ref, "--device", "cpu", "--png-level", "9"])
t.check(rc == 0, "reference equalize", err)
ref_bytes = read(ref)
OLD = b"old contents, not an image\n"

# ---- writes -----------------------------------------------------------------------------
full_png = os.path.join(tmp, "full.png")   # the format comes from the name: a link to /dev/full
os.symlink("/dev/full", full_png)
rc, _, err, _, _ = run(["equalize", src, full_png, "--device", "cpu"])
t.check(rc == 1 and f"cannot write '{full_png}'" in err and "No space left" in err,
        "/dev/full: exit 1, ENOSPC named", f"rc={rc} {err}")

d = os.path.join(tmp, "fsize")
os.makedirs(d)
target = os.path.join(d, "out.png")
open(target, "wb").write(OLD)
lim = 4096
rc, _, err, _, _ = run(["equalize", src, target, "--device", "cpu"],
                    preexec=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (lim, lim)))
t.check(rc == 1 and "File too large" in err, "RLIMIT_FSIZE: exit 1 with EFBIG, not a signal",
        f"rc={rc} {err}")
t.check(read(target) == OLD and not leftovers(d), "RLIMIT_FSIZE: old target intact, no temp file",
        str(leftovers(d)))

d = os.path.join(tmp, "missing", "dir")
rc, _, err, _, _ = run(["equalize", src, os.path.join(d, "out.png"), "--device", "cpu"])
t.check(rc == 1 and "No such file or directory" in err, "missing directory: exit 1", err)

# Read-only directory. Root ignores permissions, so as root the run drops to nobody, on
# copies it can read.
d = os.path.join(tmp, "ro")
os.makedirs(d)
target = os.path.join(d, "out.png")
open(target, "wb").write(OLD)
os.chmod(target, 0o666)
src_copy = os.path.join(tmp, "in.png")
shutil.copy(src, src_copy)
os.chmod(src_copy, 0o644)
os.chmod(d, 0o555)
as_root = os.geteuid() == 0
bin_copy = binary
try:
    if as_root:
        bin_copy = os.path.join(tmp, "imgpu")
        shutil.copy(binary, bin_copy)
        os.chmod(bin_copy, 0o755)
    ro_ok = True
except OSError as e:
    ro_ok = False
    print(f"read-only directory check skipped: cannot prepare an unprivileged run here ({e})")


def drop():
    if as_root:
        os.setgid(65534)
        os.setuid(65534)


if ro_ok:
    p = subprocess.run([bin_copy, "equalize", src_copy, target, "--device", "cpu"],
                       capture_output=True, preexec_fn=drop)
    err = p.stderr.decode(errors="replace")
    t.check(p.returncode == 1 and "Permission denied" in err, "read-only directory: exit 1",
            f"rc={p.returncode} {err}")
    t.check(read(target) == OLD and not leftovers(d), "read-only directory: old target intact")
os.chmod(d, 0o755)

# Killed mid-write: a slow save (PNG level 9 of a big rotation), killed at spread-out moments.
big_ref = os.path.join(tmp, "big_ref.png")
args = ["rotate", os.path.join(assets, "astronaut.png"), None, "--angle", "33", "--png-level", "9",
        "--device", "cpu"]
a = list(args)
a[2] = big_ref
rc, _, err, full, _ = run(a)
t.check(rc == 0, "reference rotate", err)
big_bytes = read(big_ref)
d = os.path.join(tmp, "kill")
os.makedirs(d)
target = os.path.join(d, "out.png")
outcomes = {"old": 0, "new": 0}
for i in range(12):
    open(target, "wb").write(OLD)
    a = list(args)
    a[2] = target
    p = subprocess.Popen([binary] + a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(full * (0.15 + 0.08 * i))
    p.send_signal(signal.SIGKILL)
    p.wait()
    got = read(target)
    if got == OLD:
        outcomes["old"] += 1
    elif got == big_bytes:
        outcomes["new"] += 1
    else:
        t.check(False, f"SIGKILL after {0.15 + 0.08 * i:.2f} of the run: target is neither old nor new",
                f"{len(got)} bytes")
    for n in leftovers(d):  # a killed process cannot remove its temp file; that is allowed
        os.unlink(os.path.join(d, n))
t.check(True, f"SIGKILL at 12 moments: old {outcomes['old']}, complete new {outcomes['new']}")
print(f"killed mid-write: {outcomes}")

# ---- limits -------------------------------------------------------------------------------
rc, _, err, _, _ = run(["info", src, "--max-file-size", "1000"])
t.check(rc == 1 and "file is too large" in err and "--max-file-size" in err and
        "IMGPU_MAX_FILE_SIZE" in err, "--max-file-size: refused, names the option", err)
rc, _, err, _, _ = run(["info", src], env={"IMGPU_MAX_FILE_SIZE": "1K"})
t.check(rc == 1 and "the limit is 1024 bytes" in err, "IMGPU_MAX_FILE_SIZE=1K", err)
rc, _, err, _, _ = run(["info", src, "--max-file-size", "1M"], env={"IMGPU_MAX_FILE_SIZE": "1K"})
t.check(rc == 0, "the option wins over the variable", err)
rc, _, err, _, _ = run(["info", src], env={"IMGPU_MAX_PIXELS": "1000"})
t.check(rc == 1 and "more than the limit of 1000" in err, "IMGPU_MAX_PIXELS", err)
for var, val in (("IMGPU_MAX_PIXELS", "x"), ("IMGPU_MAX_FILE_SIZE", "-1"),
                 ("IMGPU_MAX_DECODE_TIME", "nan"), ("IMGPU_MAX_DECODE_TIME", "0")):
    rc, _, err, _, _ = run(["info", src], env={var: val})
    t.check(rc == 2 and var in err, f"malformed {var}={val}: usage error", f"rc={rc} {err}")
for opt, val in (("--max-file-size", "0"), ("--max-file-size", "12Q"), ("--max-decode-time", "-1"),
                 ("--max-decode-time", "inf")):
    rc, _, err, _, _ = run(["info", src, opt, val])
    t.check(rc == 2, f"{opt} {val}: usage error", f"rc={rc} {err}")
# Decode time: a 16384 x 16384 PNG of zeros (257 KB) takes stb well over 1 ms to inflate.
bomb = os.path.join(SEEDS, "png_bomb_16k.png")
if os.path.exists(bomb):
    rc, _, err, el, kb = run(["info", "--decode", bomb, "--max-decode-time", "0.001"])
    t.check(rc == 1 and "decoding took longer than the limit of 0.001 s" in err and
            "--max-decode-time" in err and "IMGPU_MAX_DECODE_TIME" in err,
            "--max-decode-time 0.001 on a 16k x 16k PNG: refused, names the limit", err)
    t.check(el < 5, f"... and gives up quickly ({el:.2f} s)")
    # A bomb beyond --max-pixels costs milliseconds and little memory.
    for f, extra in (("png_bomb_20k_header.png", []), ("png_bomb_16k.png", ["--max-pixels", "1000000"])):
        rc, _, err, el, kb = run(["info", os.path.join(SEEDS, f)] + extra)
        t.check(rc == 1 and "more than the limit" in err and el < 1.0 and kb < 64 * 1024,
                f"{f} {' '.join(extra)}: refused in {el * 1000:.0f} ms, peak RSS {kb} KiB", err)
many = os.path.join(SEEDS, "jpeg_many_scans.jpg")
if os.path.exists(many):
    rc, _, err, _, _ = run(["info", many])
    t.check(rc == 1 and "more than 256 scans" in err, "JPEG with 3000 scans refused", err)

# ---- GPU ----------------------------------------------------------------------------------
rc, out, _, _, _ = run(["--version"])
has_cuda = "CUDA support: yes" in out
gpu = False
if has_cuda:
    rc, _, err, _, _ = run(["equalize", src, os.path.join(tmp, "probe.png"), "--device", "cuda"])
    gpu = rc == 0
if not gpu:
    print("GPU part skipped: no CUDA build or no usable GPU")
else:
    # `auto` sends only jobs the GPU finishes first to CUDA (ops.c's cost rule): a 512x512
    # equalize stays on the CPU, so the fallback is exercised with a job auto gives the GPU,
    # a 3000x3000 image rotated 30 degrees bicubic (~17 Mpixels out, ~440 ms on one core),
    # against its CPU bytes
    big = os.path.join(tmp, "big.png")
    ramp = bytes(range(256)) * 13   # 3328 bytes: every 3000-byte window of it fits
    raw = b"".join(b"\0" + ramp[y % 256:y % 256 + 3000] for y in range(3000))
    with open(big, "wb") as f:
        def chunk(k, b):
            return struct.pack(">I", len(b)) + k + b + struct.pack(">I", zlib.crc32(k + b) & 0xFFFFFFFF)
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 3000, 3000, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))
    big_ref = os.path.join(tmp, "big_ref.png")
    rot = ["--angle", "30", "--filter", "bicubic", "--png-level", "1"]
    rc, _, err, _, _ = run(["rotate", big, big_ref, "--device", "cpu"] + rot)
    t.check(rc == 0, "CPU reference of the big rotation", err)
    big_ref_bytes = read(big_ref) if rc == 0 else b""

    def cuda_case(name, env, want_err):
        o = os.path.join(tmp, f"{name}.cuda.png")
        rc, _, err, _, _ = run(["equalize", src, o, "--device", "cuda", "--png-level", "9"], env=env)
        t.check(rc == 1 and err.startswith("imgpu: ") and want_err in err and not os.path.exists(o),
                f"{name}: --device cuda fails clearly", f"rc={rc} {err}")
        o = os.path.join(tmp, f"{name}.auto.png")
        # one CPU thread: auto's rule divides the CPU's estimate by its threads, and on a
        # 16-core machine even this rotation would stay on the CPU while CUDA still starts
        rc, _, err, _, _ = run(["rotate", big, o] + rot, env=dict(env, IMGPU_CPU_THREADS="1"))
        t.check(rc == 0 and "running on the CPU" in err and os.path.exists(o) and read(o) == big_ref_bytes,
                f"{name}: auto falls back to the CPU, same bytes", f"rc={rc} {err}")
    cuda_case("no-device", {"CUDA_VISIBLE_DEVICES": ""}, "no usable GPU")
    cuda_case("mem-limit", {"IMGPU_CUDA_MEM_LIMIT": "4K"}, "IMGPU_CUDA_MEM_LIMIT")
    cuda_case("sticky-fault", {"IMGPU_FAULT_INJECT": "trap"}, "cudaErrorLaunchFailure")

failed = t.end()
if not failed:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failed else 0)

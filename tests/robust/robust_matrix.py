#!/usr/bin/python3
"""robust_matrix.py BINARY SCRATCH ASSETS — the bad-input matrix (label robust).

Inputs: every valid seed of tests/fuzz/seeds/decode/ (all five formats and their layouts,
progressive and restart-interval JPEGs, interlaced and palette PNGs, RLE TGA, ...) plus two
assets, each truncated at 24 offsets (the first 10 bytes, then evenly spread) and with 16
random bit-flip mutants (1 to 8 flipped bits; random.Random(7), so the cases are fixed), plus
every crafted broken file of that directory as it is. Each case runs
`imgpu equalize CASE out.png --device cpu --max-pixels 16777216` and must end in exit 0 with a
non-empty output or exit 1 with one "imgpu: ..." message naming the input and no output,
within 10 s and a peak RSS of 1 GiB; never a signal, never another status.
"""
import concurrent.futures, os, random, shutil, subprocess, sys, tempfile, time

binary, scratch, assets = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
seeds = os.path.join(here, "..", "fuzz", "seeds", "decode")
os.makedirs(scratch, exist_ok=True)
tmp = tempfile.mkdtemp(prefix="robust_matrix.", dir=scratch)
TIME_LIMIT, RSS_LIMIT_KB = 10.0, 1 << 20

if not os.path.isdir(seeds):
    print("skip: no tests/fuzz/seeds/decode")
    sys.exit(77)

# Which seeds are valid: the ones imgpu decodes.
def decodes(path):
    return subprocess.run([binary, "info", path], capture_output=True).returncode == 0

# tests/fuzz/seeds/valid.txt lists the seeds made as valid images: each must decode (a seed
# that stops decoding is a regression, not a new crafted case). The others are the crafted
# broken files; those of them that decode anyway (a zero-length IDAT, 16-bit) are mutated too.
names = sorted(os.listdir(seeds))
must = set(open(os.path.join(seeds, "..", "valid.txt")).read().split())
broken_valid = [n for n in sorted(must) if not decodes(os.path.join(seeds, n))]
valid = [os.path.join(seeds, n) for n in names if n in must or decodes(os.path.join(seeds, n))]
crafted = [os.path.join(seeds, n) for n in names if os.path.join(seeds, n) not in valid]
valid += [os.path.join(assets, "camera.png"), os.path.join(assets, "rocket.jpg")]

rng = random.Random(7)
cases = []  # (name, bytes)
for path in valid:
    data = open(path, "rb").read()
    base = os.path.basename(path)
    offs = sorted(set(list(range(0, min(10, len(data)))) +
                      [len(data) * k // 14 for k in range(1, 14)] + [len(data) - 1]))
    for o in offs:
        cases.append((f"{base}.trunc{o}", data[:o]))
    for m in range(16):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        cases.append((f"{base}.flip{m}", bytes(b)))
for path in crafted:
    cases.append((os.path.basename(path), open(path, "rb").read()))


def run_case(idx):
    name, data = cases[idx]
    d = os.path.join(tmp, str(idx))
    os.makedirs(d)
    inp = os.path.join(d, "in")
    out = os.path.join(d, "out.png")
    with open(inp, "wb") as f:
        f.write(data)
    with tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary, "equalize", inp, out, "--device", "cpu", "--max-pixels",
                              str(1 << 24), "--quiet"], stdout=subprocess.DEVNULL, stderr=fe)
        killed = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if not killed and time.monotonic() - t0 > TIME_LIMIT:
                p.kill()
                killed = True
            time.sleep(0.001)
        el = time.monotonic() - t0
        fe.seek(0)
        err = fe.read().decode(errors="replace")
    rc = os.waitstatus_to_exitcode(status)
    problems = []
    if killed or el > TIME_LIMIT:
        problems.append(f"took {el:.1f} s")
    if ru.ru_maxrss > RSS_LIMIT_KB:
        problems.append(f"peak RSS {ru.ru_maxrss} KiB")
    if rc == 0:
        if not (os.path.exists(out) and os.path.getsize(out) > 0):
            problems.append("exit 0 without an output")
    elif rc == 1:
        if not (err.startswith("imgpu: ") and inp in err and err.count("\n") == 1):
            problems.append(f"exit 1 without one message naming the input: {err!r}")
        if os.path.exists(out):
            problems.append("exit 1 but an output was written")
    else:
        problems.append(f"status {rc} (negative: a signal): {err[-400:]!r}")
    if problems:
        keep = os.path.join(scratch, "robust_matrix_failures")
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, name), "wb") as f:
            f.write(data)
    shutil.rmtree(d, ignore_errors=True)
    return name, rc, el, problems


t0 = time.monotonic()
failures, ok, refused, slowest = 0, 0, 0, (0.0, "")
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
    for name, rc, el, problems in ex.map(run_case, range(len(cases))):
        if el > slowest[0]:
            slowest = (el, name)
        if problems:
            failures += 1
            print(f"FAIL: {name}: {'; '.join(problems)}")
        elif rc == 0:
            ok += 1
        else:
            refused += 1
print(f"robust_matrix: {len(cases)} cases from {len(valid)} valid and {len(crafted)} crafted files: "
      f"{ok} decoded, {refused} refused cleanly, {failures} failed; slowest {slowest[0]:.2f} s "
      f"({slowest[1]}); total {time.monotonic() - t0:.1f} s")
for n in broken_valid:
    failures += 1
    print(f"FAIL: valid seed {n} does not decode: {subprocess.run([binary, 'info', os.path.join(seeds, n)], capture_output=True).stderr.decode(errors='replace').strip()}")
if failures:
    print(f"failing inputs kept in {os.path.join(scratch, 'robust_matrix_failures')}")
else:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)

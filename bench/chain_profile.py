#!/usr/bin/env python3
"""chain_profile.py — why issue 27's JPEG chain (decode_batch -> equalize -> encode_batch, 4K q92
JPEGs held as bytes, one Python process) runs at about half its slower stage: each stage alone,
the two side by side, the chain and variants of it, with where the time of every thread goes.

    PYTHONPATH=build-gpu/python python3 bench/chain_profile.py [--n 128] [--reps 3] [--secs 1.5]

Parts, in the order they run (one table row each; the inputs are N different 4K q92 JPEGs made by
bench/jpeg_inputs.py with one process per core, cached under $CHAIN_JPEGS or /tmp/chainprof-jpegs;
imgpu.tune_allocator() is called first; four Contexts (D1, D2 decode, E1, E2 encode) are made and
nvJPEG is warmed up on each, apart, before anything is timed):
  dec cC      decode_batch alone, chunks of C = 16, 32, 64, REPS passes over the N files, one
              thread (D1); the arrays are synchronized at the end
  enc cC      encode_batch alone of N pre-decoded, equalized arrays, chunks of C, REPS passes (E1)
  chain ...   the chain as bench/python_bench.py's e2e_imgpu runs it (decode + equalize on D1 in
              one thread, encode on E1 in another, a queue of 4 chunks of 64), REPS passes, and
              variants: chunk 32; 2 decode threads (D1, D2) + 1 encode; equalize moved to the
              encode thread (on E1); both; 1 decode + 2 encode threads (E1, E2)
  both ...    decode (dec) in one thread for SECS seconds while a second thread encodes (enc) a
              fixed set of 64 pre-decoded arrays in a loop, chunks of 64: each stage's rate alone
              (same loop, the other thread idle) and together, as a % of alone; once with the
              decode thread also equalizing (dec+eq)
Columns of each row:
  img/s       images through the row's work (both rows: each stage's own rate)
  wall        seconds of the timed window
  cores       process CPU (getrusage, as os.times but in us: every thread, those that ended
              included) / wall
  gil         mean lateness (ms) of a 2 ms sleep in a probe thread: the time a thread that wants
              the GIL waits for it (~0.05-0.1 ms is the timer alone; ~1 ms and up: the GIL is busy;
              with every core busy it also counts the wait for a core)
  gpu jpg     NVML's GPU-busy and JPEG-engine-busy %, averaged over ~100 ms samples of the window
              (NVML's own sampling is 1/6-1 s: a rough figure; '-' where NVML or the JPEG counter
              is missing; GPU index 0)
  bound       a guess from the figures: CPU(all) (cores >= 85% of the machine), CPU:<thread>
              (one Python thread >= 90% of the wall on its own CPU time), GIL (gil >= 1 ms),
              JPEG (jpg >= 85%), GPU (gpu >= 90%); else wait (the threads wait on the GPU,
              on each other or on a queue)
and under it, per Python thread: its CPU time (time.thread_time) as % of the wall, then where its
wall time went, % (dec = in decode_batch, eq = equalize calls, enc = encode_batch, sync =
Array.synchronize, get / put = waiting on the queue (starved / held back), py = the rest); and
the busiest other (native: imgpu's and nvJPEG's and CUDA's) threads by CPU % of the wall from
/proc/self/task (10 ms ticks), with 'other' = process CPU - the Python threads' CPU - the probe
thread's (threads that ended included).

Budget (one device call, H200 / H100, 16 cores; the whole run ~40-60 s, the gpu_round.sh part
has a 150 s timeout): inputs 128 x ~60 ms / 16 processes ~1 s + each process's first 4K resize
(~2-5 s; 0 when cached); CUDA + nvJPEG set-up on 4 contexts ~2-4 s; 3 + 3 single-stage rows and
6 chain rows of REPS x N = 384 images at >= 400 img/s, <= 1 s each (~12 s); 2 x 3 'both' rows of
SECS = 1.5 s (~10 s); pre-decoding ~1 s. --n 500 --reps 1 costs about the same.
No GPU (or imgpu.Context("cuda") fails): a message, exit 0. bench/mock_imgpu/ holds a stand-in
module to check this script's logic on a machine without a GPU:
    PYTHONPATH=bench/mock_imgpu /usr/bin/python3 bench/chain_profile.py --n 24"""
import argparse
import ctypes
import multiprocessing
import os
import queue
import resource
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICK = os.sysconf("SC_CLK_TCK")


# ---- inputs ----------------------------------------------------------------------------------

def make_inputs(n):
    """N 4K q92 JPEGs as bytes (bench/jpeg_inputs.py's files, made once, one process per core).
    forkserver: the workers do not inherit this process's CUDA state and threads."""
    sys.path.insert(0, HERE)
    import jpeg_inputs
    d = os.environ.get("CHAIN_JPEGS") or "/tmp/chainprof-jpegs"
    os.makedirs(d, exist_ok=True)
    jobs = [(i, d) for i in range(n)]
    with multiprocessing.get_context("forkserver").Pool(os.cpu_count()) as p:
        p.map(jpeg_inputs._make, jobs, chunksize=max(1, n // (4 * (os.cpu_count() or 1))))
    out = []
    for i in range(n):
        with open(os.path.join(d, f"photo_{i:04d}.jpg"), "rb") as f:
            out.append(f.read())
    return out


# ---- measuring a window ----------------------------------------------------------------------

def proc_cpu():
    """User + system CPU seconds of the whole process, threads that ended included (getrusage:
    microseconds, where os.times counts 10 ms ticks)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def task_ticks():
    """{tid: (name, utime + stime ticks)} of this process's live threads."""
    out = {}
    base = "/proc/self/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return out
    for t in tids:
        try:
            with open(f"{base}/{t}/stat") as f:
                s = f.read()
            with open(f"{base}/{t}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()
        out[int(t)] = (name, int(fields[11]) + int(fields[12]))
    return out


class Nvml:
    """GPU-busy and JPEG-engine-busy % from NVML through ctypes; absent pieces give None."""

    class _Util(ctypes.Structure):
        _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]

    def __init__(self):
        self.lib = self.h = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) != 0:
                return
            self.lib, self.h = lib, h
            self.jpg_fn = getattr(lib, "nvmlDeviceGetJpgUtilization", None)
        except (OSError, AttributeError):
            self.lib = None

    def sample(self):
        if not self.lib:
            return None, None
        u = self._Util()
        gpu = u.gpu if self.lib.nvmlDeviceGetUtilizationRates(self.h, ctypes.byref(u)) == 0 else None
        jpg = None
        if self.jpg_fn is not None:
            v, per = ctypes.c_uint(), ctypes.c_uint()
            if self.jpg_fn(self.h, ctypes.byref(v), ctypes.byref(per)) == 0:
                jpg = v.value
        return gpu, jpg


NVML = None


class Window:
    """One timed window: wall, process CPU, per-thread CPU from /proc, a GIL probe and NVML
    samples taken by one helper thread (a 2 ms sleep in a loop; NVML every 50th turn)."""

    def __enter__(self):
        self.stop = threading.Event()
        self.late, self.gpu, self.jpg = [], [], []
        self.probe = threading.Thread(target=self._probe, name="probe", daemon=True)
        self.probe.start()
        self.tasks0 = task_ticks()
        self.cpu0 = proc_cpu()
        self.t0 = time.perf_counter()
        return self

    def _probe(self):
        self.probe_tid = threading.get_native_id()
        c0 = time.thread_time()
        k = 0
        while not self.stop.is_set():
            t = time.perf_counter()
            time.sleep(0.002)
            self.late.append(time.perf_counter() - t - 0.002)
            k += 1
            if NVML is not None and k % 50 == 1:
                g, j = NVML.sample()
                if g is not None:
                    self.gpu.append(g)
                if j is not None:
                    self.jpg.append(j)
        self.probe_cpu = time.thread_time() - c0

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = proc_cpu() - self.cpu0
        self.tasks1 = task_ticks()
        self.stop.set()
        self.probe.join()
        return False

    def native(self, exclude):
        """[(name, CPU s)] of live threads not in exclude, busiest first (same names summed)."""
        by = {}
        for tid, (name, t1) in self.tasks1.items():
            if tid in exclude or tid == getattr(self, "probe_tid", None):
                continue
            t0 = self.tasks0.get(tid, (name, 0))[1]
            by[name] = by.get(name, 0.0) + (t1 - t0) / TICK
        return sorted(by.items(), key=lambda kv: -kv[1])


class Acct:
    """Where one Python thread's wall time goes: buckets of perf_counter time, plus its CPU
    (time.thread_time) from start() to stop()."""

    def __init__(self, name):
        self.name = name
        self.b = {}

    def start(self):
        self.tid = threading.get_native_id()
        self.c0 = time.thread_time()
        self.w0 = time.perf_counter()

    def stop(self):
        self.cpu = time.thread_time() - self.c0
        self.wall = time.perf_counter() - self.w0

    def timed(self, bucket, fn, *a, **kw):
        t = time.perf_counter()
        r = fn(*a, **kw)
        self.b[bucket] = self.b.get(bucket, 0.0) + time.perf_counter() - t
        return r


def run_threads(targets):
    """Start one thread per (Acct, fn(acct)), all released together; join them. The caller's
    Window covers the start and the join."""
    go = threading.Barrier(len(targets) + 1)
    errs = []

    def body(acct, fn):
        go.wait()
        acct.start()
        try:
            fn(acct)
        except BaseException as e:   # noqa: BLE001 - reported by the caller
            errs.append(e)
        finally:
            acct.stop()

    ths = [threading.Thread(target=body, args=t, name=t[0].name) for t in targets]
    for t in ths:
        t.start()
    go.wait()
    for t in ths:
        t.join()
    if errs:
        raise errs[0]


# ---- the table ----------------------------------------------------------------------------------

ROWS = []


def pct(x, wall):
    return 100.0 * x / wall if wall > 0 else 0.0


def report(name, rate, win, accts):
    wall = win.wall
    cores = win.cpu / wall if wall > 0 else 0.0
    gil = 1e3 * sum(win.late) / len(win.late) if win.late else float("nan")
    gpu = "%3.0f" % (sum(win.gpu) / len(win.gpu)) if win.gpu else "  -"
    jpg = "%3.0f" % (sum(win.jpg) / len(win.jpg)) if win.jpg else "  -"
    bound = []
    if cores >= 0.85 * (os.cpu_count() or 1):
        bound.append("CPU(all)")
    for a in accts:
        if pct(a.cpu, wall) >= 90:
            bound.append("CPU:" + a.name)
    if gil >= 1.0:
        bound.append("GIL")
    if win.jpg and sum(win.jpg) / len(win.jpg) >= 85:
        bound.append("JPEG")
    if win.gpu and sum(win.gpu) / len(win.gpu) >= 90:
        bound.append("GPU")
    rate_s = rate if isinstance(rate, str) else "%.0f" % rate
    print("%-24s %15s %6.2f %5.1f %5.2f %3s %3s  %s" % (name, rate_s, wall, cores, gil, gpu, jpg,
                                                       "+".join(bound) or "wait"), flush=True)
    for a in accts:
        spent = sum(a.b.values())
        parts = ["%s %.0f" % (k, pct(v, a.wall)) for k, v in sorted(a.b.items(), key=lambda kv: -kv[1])]
        parts.append("py %.0f" % pct(max(a.wall - spent, 0.0), a.wall))
        print("    %-4s cpu %3.0f%% | %s" % (a.name, pct(a.cpu, wall), " ".join(parts)), flush=True)
    pycpu = sum(a.cpu for a in accts) + win.probe_cpu
    nat = [(n, c) for n, c in win.native({a.tid for a in accts}) if c > 0][:4]
    print("    other cpu %.0f%% | %s" % (pct(max(win.cpu - pycpu, 0.0), wall),
                                        " ".join("%s %.0f" % (n, pct(c, wall)) for n, c in nat) or "-"),
          flush=True)
    ROWS.append((name, rate_s, wall, cores, gil, "+".join(bound) or "wait"))


def header():
    print("%-24s %15s %6s %5s %5s %3s %3s  %s" % ("row", "img/s", "wall", "cores", "gil", "gpu", "jpg",
                                               "bound"))


# ---- the work ------------------------------------------------------------------------------------

def arrays_of(imgpu, items):
    """decode_batch's list without its imgpu.Error items (the chain's count check then fails)."""
    return [a for a in items if isinstance(a, imgpu.Array)]


def chunks(seq, c):
    return [seq[i:i + c] for i in range(0, len(seq), c)]


def dec_alone(imgpu, jpegs, ctx, chunk, reps):
    a = Acct("D1")
    last = []

    def work(acct):
        nonlocal last
        for _ in range(reps):
            for part in chunks(jpegs, chunk):
                last = acct.timed("dec", imgpu.decode_batch, part, device=ctx)
        for x in arrays_of(imgpu, last):
            acct.timed("sync", x.synchronize)

    with Window() as w:
        run_threads([(a, work)])
    report("dec c%d" % chunk, reps * len(jpegs) / w.wall, w, [a])


def enc_alone(imgpu, arrays, ctx, chunk, reps):
    a = Acct("E1")

    def work(acct):
        for _ in range(reps):
            for part in chunks(arrays, chunk):
                acct.timed("enc", imgpu.encode_batch, part, "jpg", quality=92, device=ctx)

    with Window() as w:
        run_threads([(a, work)])
    report("enc c%d" % chunk, reps * len(arrays) / w.wall, w, [a])


def chain(imgpu, jpegs, dctxs, ectxs, chunk=64, eq_on_enc=False, reps=1, qdepth=4, name="chain", enc_chunk=0):
    """decode threads (one per Context in dctxs) take chunks in turn and put them on a queue;
    encode threads (one per ectxs) encode what comes (enc_chunk > 0: in encode_batch calls of
    that many); equalize in the decode threads, as python_bench.py's e2e_imgpu does, or
    (eq_on_enc) in the encode threads on their Contexts."""
    parts = chunks(jpegs, chunk) * reps
    lock = threading.Lock()
    nxt = [0]
    q = queue.Queue(maxsize=qdepth)
    done = [0]
    left = [len(dctxs)]

    def take():
        with lock:
            i = nxt[0]
            nxt[0] += 1
        return parts[i] if i < len(parts) else None

    def decoder(ctx):
        def work(acct):
            try:
                while True:
                    part = take()
                    if part is None:
                        break
                    arrays = acct.timed("dec", imgpu.decode_batch, part, device=ctx)
                    arrays = arrays_of(imgpu, arrays)
                    if not eq_on_enc:
                        arrays = acct.timed("eq", lambda: [imgpu.equalize(a, device=ctx) for a in arrays])
                    acct.timed("put", q.put, arrays)
            finally:
                with lock:
                    left[0] -= 1
                    last = left[0] == 0
                if last:
                    for _ in ectxs:
                        q.put(None)
        return work

    def encoder(ctx):
        def work(acct):
            while True:
                items = acct.timed("get", q.get)
                if items is None:
                    break
                if eq_on_enc:
                    items = acct.timed("eq", lambda: [imgpu.equalize(a, device=ctx) for a in items])
                for sub in (chunks(items, enc_chunk) if enc_chunk > 0 else [items]):
                    out = acct.timed("enc", imgpu.encode_batch, sub, "jpg", quality=92, device=ctx)
                    with lock:
                        done[0] += len(out)
        return work

    targets = [(Acct("D%d" % (i + 1)), decoder(c)) for i, c in enumerate(dctxs)]
    targets += [(Acct("E%d" % (i + 1)), encoder(c)) for i, c in enumerate(ectxs)]
    with Window() as w:
        run_threads(targets)
    total = len(jpegs) * reps
    if done[0] != total:
        raise RuntimeError("%s: %d images encoded, expected %d" % (name, done[0], total))
    report(name, total / w.wall, w, [t[0] for t in targets])


def both(imgpu, jpegs, arrays, dctx, ectx, secs, eq, chunk=64):
    """Decode (with equalize when eq) for SECS in one thread while another encodes a fixed set of
    arrays in a loop: rows for each alone and for the two together."""
    dparts = chunks(jpegs, chunk)
    eparts = chunks(arrays, chunk)
    counts = {}

    def decoder(stop_at):
        def work(acct):
            n, k, last = 0, 0, []
            while time.perf_counter() < stop_at():
                part = dparts[k % len(dparts)]
                k += 1
                last = arrays_of(imgpu, acct.timed("dec", imgpu.decode_batch, part, device=dctx))
                if eq:
                    last = acct.timed("eq", lambda: [imgpu.equalize(a, device=dctx) for a in last])
                n += len(part)
            for x in last:
                acct.timed("sync", x.synchronize)
            counts["dec"] = n / acct_wall(acct)
        return work

    def encoder(stop_at):
        def work(acct):
            n, k = 0, 0
            while time.perf_counter() < stop_at():
                part = eparts[k % len(eparts)]
                k += 1
                acct.timed("enc", imgpu.encode_batch, part, "jpg", quality=92, device=ectx)
                n += len(part)
            counts["enc"] = n / acct_wall(acct)
        return work

    def acct_wall(acct):
        return time.perf_counter() - acct.w0

    tag = "dec+eq" if eq else "dec"
    alone = {}
    for which, mk in (("dec", decoder), ("enc", encoder)):
        end = [0.0]
        a = Acct("D1" if which == "dec" else "E1")
        end[0] = time.perf_counter() + secs
        with Window() as w:
            run_threads([(a, mk(lambda: end[0]))])
        alone[which] = counts[which]
        report("both: %s alone" % (tag if which == "dec" else "enc"), counts[which], w, [a])
    end = [time.perf_counter() + secs]
    ad, ae = Acct("D1"), Acct("E1")
    with Window() as w:
        run_threads([(ad, decoder(lambda: end[0])), (ae, encoder(lambda: end[0]))])
    rate = "%.0f/%.0f" % (counts["dec"], counts["enc"])
    report("both: %s || enc" % tag, rate, w, [ad, ae])
    print("    together vs alone: %s %.0f%%, enc %.0f%%" % (
        tag, pct(counts["dec"], alone["dec"]), pct(counts["enc"], alone["enc"])), flush=True)


# ---- main ------------------------------------------------------------------------------------------

def main():
    global NVML
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=128, help="JPEGs (default 128)")
    ap.add_argument("--reps", type=int, default=3, help="passes over them a counted row (default 3)")
    ap.add_argument("--secs", type=float, default=1.5, help="seconds a 'both' row (default 1.5)")
    args = ap.parse_args()
    if args.n < 64:
        print("chain_profile: --n must be at least 64 (one chunk of 64)", file=sys.stderr)
        return 2
    try:
        import imgpu
    except ImportError as e:
        print("chain_profile: cannot import imgpu (%s): set PYTHONPATH=build-gpu/python" % e, file=sys.stderr)
        return 2
    imgpu.tune_allocator()
    try:
        ctx0 = imgpu.Context("cuda")
    except imgpu.Error as e:
        print("chain_profile: no GPU here, nothing measured (%s)" % e)
        return 0
    t0 = time.perf_counter()
    jpegs = make_inputs(args.n)
    print("inputs: %d JPEGs 3840x2160 q92, %.1f MB, made/read in %.1f s; %d cores; imgpu.tune_allocator() on"
          % (len(jpegs), sum(map(len, jpegs)) / 1e6, time.perf_counter() - t0, os.cpu_count()), flush=True)
    NVML = Nvml()
    if not NVML.lib:
        NVML = None
    t0 = time.perf_counter()
    d1, d2, e1, e2 = ctx0, imgpu.Context("cuda"), imgpu.Context("cuda"), imgpu.Context("cuda")
    for c in (d1, d2, e1, e2):
        warm = arrays_of(imgpu, imgpu.decode_batch(jpegs[:8], device=c))
        imgpu.encode_batch([imgpu.equalize(a, device=c) for a in warm], "jpg", quality=92, device=c)
    print("warm-up: CUDA + nvJPEG set-up, decode + equalize + encode of 8 on each of 4 contexts, apart: %.2f s"
          % (time.perf_counter() - t0), flush=True)
    t0 = time.perf_counter()
    arrays = []
    for part in chunks(jpegs, 64):
        arrays += [imgpu.equalize(a, device=e1) for a in arrays_of(imgpu, imgpu.decode_batch(part, device=e1))]
    for a in arrays:
        a.synchronize()
    print("pre-decoded + equalized %d arrays for the encode rows in %.2f s" % (len(arrays), time.perf_counter() - t0))
    print("NVML: %s" % ("GPU 0" if NVML else "not available (gpu/jpg columns '-')"), flush=True)
    print()
    header()
    steps = [
        lambda: [dec_alone(imgpu, jpegs, d1, c, args.reps) for c in (16, 32, 64)],
        lambda: [enc_alone(imgpu, arrays, e1, c, args.reps) for c in (16, 32, 64)],
        lambda: chain(imgpu, jpegs, [d1], [e1], reps=args.reps, name="chain (python_bench)"),
        lambda: chain(imgpu, jpegs, [d1], [e1], chunk=32, reps=args.reps, name="chain c32"),
        lambda: chain(imgpu, jpegs, [d1, d2], [e1], reps=args.reps, name="chain 2dec"),
        lambda: chain(imgpu, jpegs, [d1], [e1], eq_on_enc=True, reps=args.reps, name="chain eq@enc"),
        lambda: chain(imgpu, jpegs, [d1, d2], [e1], eq_on_enc=True, reps=args.reps, name="chain 2dec eq@enc"),
        lambda: chain(imgpu, jpegs, [d1], [e1, e2], reps=args.reps, name="chain 2enc"),
        # decode's best call size (64: the second sub-batch's walk overlaps the first's nvJPEG
        # host part) with encode's (32), equalize on the encode thread
        lambda: chain(imgpu, jpegs, [d1], [e1], chunk=32, eq_on_enc=True, reps=args.reps, name="chain c32 eq@enc"),
        lambda: chain(imgpu, jpegs, [d1], [e1], chunk=64, eq_on_enc=True, enc_chunk=32, reps=args.reps,
                      name="chain dec64 enc32 eq@enc"),
        lambda: both(imgpu, jpegs, arrays[:64], d1, e1, args.secs, eq=False),
        lambda: both(imgpu, jpegs, arrays[:64], d1, e1, args.secs, eq=True),
    ]
    failed = 0
    for s in steps:
        try:
            s()
        except Exception as e:   # noqa: BLE001 - one row failing does not hide the others
            failed += 1
            print("  failed: %r" % (e,), flush=True)
    print()
    print("summary (img/s; both rows: dec/enc):")
    for name, rate, wall, cores, gil, bound in ROWS:
        print("  %-24s %15s  cores %4.1f  gil %5.2f ms  %s" % (name, rate, cores, gil, bound))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

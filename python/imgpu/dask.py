"""imgpu.dask: `imgpu batch` on a Dask cluster (issue 29).

    from dask.distributed import Client
    import imgpu, imgpu.dask
    client = Client("tcp://scheduler:8786")          # or Client(LocalCluster(...))
    summary = imgpu.dask.batch(client, ["photos/"], "out/", ops=["equalize"], quality=90)
    # {"done": 498, "skipped": 0, "failed": [{"path": ..., "reason": ...}], "stale": 0}

The same inputs, outputs, ops and options as imgpu.batch and `imgpu batch`, and the same files:
each output equals the one `imgpu batch` writes, byte for byte. How the work is split:

- The client plans the run, as `imgpu batch` would (the inputs walked, the output names, the
  resume against OUTDIR's manifest .imgpu-batch), and is the manifest's one writer.
- The files to write go to the workers in tasks (task_size below). A worker runs a task through
  the batch engine in its process (decode threads, the GPU or CPU op stage, encode threads) and
  leaves each output written whole and synced under a temp name beside it,
  "DIR/.NAME.imgpu-dask-<run id>.XXXXXX"; the task's result lists them.
- As each task's result arrives, the client appends each output's manifest line and then
  renames it into place: the order `imgpu batch` keeps, so no output is ever in place without
  its line, and a re-run resumes (skips what is done).
- A worker that dies mid-task loses nothing: Dask runs its task again on another worker, and
  only the result the client receives is put in place. What the dead worker left (temp names
  of this run) is removed when the batch ends. A task that kills workers again and again
  (Dask's distributed.scheduler.allowed-failures, 3 by default) fails its files with the reason.
- A file that fails is in "failed" with its reason, and the batch goes on.

Every worker and the client must see the inputs and OUTDIR at the same paths (a shared file
system, as on a Slurm cluster).

Workers: the first batch registers a worker plugin (ImgpuWorker) on the cluster. Each worker
then keeps one imgpu.Context and the batch engine's device state (CUDA, nvJPEG, buffers) for its
lifetime, so a worker pays imgpu's start-up once, and runs one task at a time (a worker with
several threads runs imgpu's tasks one after another: the engine uses every core itself).
Each GPU worker uses its own GPU (worker_gpu, in ImgpuWorker's help).
"""
import math as _math
import os as _os
import threading as _threading
import uuid as _uuid

from distributed import as_completed as _as_completed, get_worker as _get_worker
from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin

from . import _imgpu, _batch_argv, Context as _Context

__all__ = ["batch", "batch_argv", "task_size", "task_count", "ImgpuWorker", "PLUGIN_NAME"]

PLUGIN_NAME = "imgpu"
# images per task per engine thread of a worker: a task's pipeline fills and drains at its
# ends (about one image per thread idle at each), so a task of 16 x jobs images loses ~6%
MIN_PER_THREAD = 16


def task_count(nfiles, workers, jobs):
    """How many tasks imgpu.dask cuts nfiles into (task_size's rule): a whole multiple of the
    workers, each task of at least MIN_PER_THREAD images per engine thread where there are
    that many."""
    if nfiles <= 0:
        return 0
    workers = max(1, int(workers))
    min_size = MIN_PER_THREAD * max(1, int(jobs))
    return min(nfiles, workers * max(1, nfiles // (workers * min_size)))


def task_size(nfiles, workers, jobs):
    """The images per task (the largest; the tasks differ by one at most): at least
    MIN_PER_THREAD (16) per engine thread of a worker (a task's pipeline fills and drains at its
    ends, about one image per thread: 16 per thread keeps that near 6%), and the tasks a whole
    multiple of the workers (equal workers then finish together instead of one running the last
    task alone). For 500 images, 2 workers of 16 cores: 2 tasks of 250; 1 worker: 1 task of 500;
    a million on 8 workers of 16 cores: 3,904 tasks of 256 or 257 (Dask's per-task cost, about a
    millisecond, is then nothing)."""
    n = task_count(nfiles, workers, jobs)
    return -(-nfiles // n) if n else 1


# On a GPU the plan's first JPEGs go to libjpeg-turbo while nvJPEG sets up (docs/gpu.md's set-up
# rule: 4 per engine thread, or IMGPU_NVJPEG_CPU_FIRST), whichever task holds them, and a 4K one
# costs a worker about this many times an image through the GPU (H200, 16 threads: ~71 ms on one
# thread, ~4.4 ms of the worker's time, against ~1.1 ms at the GPU's ~880 images/s); counting it
# so keeps the first task from holding them all beside its equal share of the rest (2 workers,
# 500 photos: 128 of them in the first task, ~0.57 s of its 16 threads by this estimate, and 2
# workers on two H200s measured no faster than one).
CPU_FIRST_WEIGHT = 4


def _cpu_first_count(jobs):
    """How many of the plan's first JPEGs the workers decode on the CPU on a GPU run."""
    env = _os.environ.get("IMGPU_NVJPEG_CPU_FIRST", "")
    return int(env) if env.isdigit() else 4 * max(1, int(jobs))


def _split_weighted(items, count, weights):
    """items cut into count runs of consecutive items (none empty) whose weights add up as
    evenly as the items allow: each cut at the item boundary nearest its share of the total."""
    n = len(items)
    count = max(1, min(int(count), n))
    cum, t = [], 0
    for w in weights:
        t += w
        cum.append(t)
    bounds, prev = [0], 0
    for k in range(1, count):
        target = t * k / count
        i = prev
        while i < n and cum[i] < target:
            i += 1
        # cut after item i (its sum reaches the target) or before it, whichever is nearer
        below = cum[i - 1] if i > 0 else 0
        cut = i + 1 if i < n and cum[i] - target <= target - below else i
        cut = min(max(cut, prev + 1), n - (count - k))
        bounds.append(cut)
        prev = cut
    bounds.append(n)
    return [items[a:b] for a, b in zip(bounds, bounds[1:])]


def _split(items, count):
    """items cut into count runs of consecutive items whose lengths differ by one at most."""
    q, r = divmod(len(items), count)
    out, at = [], 0
    for k in range(count):
        n = q + (k < r)
        out.append(items[at:at + n])
        at += n
    return out


def _visible_gpus():
    """GPUs this process may use, without starting CUDA: CUDA_VISIBLE_DEVICES's list when set,
    else the NVIDIA driver's /proc/driver/nvidia/gpus entries."""
    vis = _os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        ids = []
        for v in vis.split(","):
            v = v.strip()
            if not v or v.startswith("-"):   # CUDA stops at the first invalid entry
                break
            ids.append(v)
        return len(ids)
    try:
        return len(_os.listdir("/proc/driver/nvidia/gpus"))
    except OSError:
        return 0


_env_gpu = None   # the IMGPU_CUDA_DEVICE an ImgpuWorker set in this process (not the user's)


class ImgpuWorker(_WorkerPlugin):
    """The worker plugin imgpu.dask.batch registers (name "imgpu"): one per worker, for its
    lifetime. It picks the worker's GPU, keeps an imgpu.Context there (and, through the tasks,
    the batch engine's CUDA and nvJPEG state), and runs imgpu's tasks one at a time.

    worker_gpu: which GPU a worker uses, among those it sees (CUDA_VISIBLE_DEVICES):
      "auto" (default): where its CUDA_VISIBLE_DEVICES names one GPU (Slurm's --gpus-per-task,
        dask-cuda), that one; else, on a machine of several, GPU k mod count for the worker
        named k (LocalCluster names its workers 0, 1, ...), else the first;
      "first": the first it sees (deployments that list each worker's own GPU first, as
        dask-cuda's CUDA_VISIBLE_DEVICES rotation does);
      a dict {worker name: GPU index}.
    IMGPU_CUDA_DEVICE in a worker's environment overrides all of these.
    tune_allocator (default True): the worker's malloc set as the `imgpu batch` command sets its
    own (one arena, image buffers reused; batch.h's imgpu_batch_tune_allocator). Dask's nanny
    starts workers with MALLOC_TRIM_THRESHOLD_=65536, which makes glibc map every image buffer
    afresh: a task then took twice as long. False leaves the worker's allocator alone (a
    worker that also runs memory-hungry work of other kinds). The choice becomes the
    worker's IMGPU_CUDA_DEVICE, the engine's default GPU, so options' device="auto" still
    chooses the CPU or the GPU per task as `imgpu batch` does; device="cpu" uses none.
    """
    name = PLUGIN_NAME

    def __init__(self, worker_gpu="auto", device="auto", tune_allocator=True):
        self.worker_gpu = worker_gpu
        self.device = device
        self.tune_allocator = tune_allocator

    def setup(self, worker):
        self.lock = _threading.Lock()
        if self.tune_allocator:
            # the allocator as the `imgpu batch` command sets it: Dask's nanny gives workers
            # MALLOC_TRIM_THRESHOLD_=65536, which maps every image buffer afresh (2x slower)
            _imgpu._tune_allocator()
        self.gpu = None
        global _env_gpu
        n = _visible_gpus() if _imgpu.built_with_cuda and self.device != "cpu" else 0
        env = _os.environ.get("IMGPU_CUDA_DEVICE")
        if n > 0 and (not env or env == _env_gpu):   # not set, or set by an earlier ImgpuWorker
            self.gpu = _pick_gpu(self.worker_gpu, worker.name, n)
            _env_gpu = _os.environ["IMGPU_CUDA_DEVICE"] = str(self.gpu)
        elif n > 0:
            self.gpu = int(env)
        # a GPU worker's context starts CUDA there now, at the worker's start, not in its first
        # task; where that fails the tasks meet the same failure and handle it as `imgpu batch`
        # does (auto: the CPU; cuda: each file fails with the reason)
        self.context, self.error = None, None
        try:
            self.context = _Context(device="cpu" if self.gpu is None else "cuda:%d" % self.gpu)
        except _imgpu.Error as e:
            self.error = str(e)

    def teardown(self, worker):
        ctx = getattr(self, "context", None)
        if ctx is not None:
            ctx.close()


def _pick_gpu(rule, name, n):
    if isinstance(rule, dict):
        return int(rule.get(name, rule.get(str(name), 0))) % n
    if rule == "first":
        return 0
    vis = _os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None and n == 1:
        return 0
    try:
        return int(name) % n
    except (TypeError, ValueError):
        return 0


def _plugin_config():
    """The imgpu plugin's settings on this worker, or None: run on each worker."""
    p = _get_worker().plugins.get(PLUGIN_NAME)
    return None if p is None else (repr(p.worker_gpu), p.device)


def _worker_info():
    """(cores the engine uses, the worker's GPU or None): run on each worker."""
    w = _get_worker()
    p = w.plugins.get(PLUGIN_NAME)
    try:
        cores = len(_os.sched_getaffinity(0))
    except AttributeError:
        cores = _os.cpu_count() or 1
    return cores, getattr(p, "gpu", None)


_fallback_lock = _threading.Lock()


def _stage(argv, pairs, tag, plan_ntodo=0, jpegs_before=0):
    """One task, on a worker: the files staged (imgpu_batch_stage_part); its summary and records.
    plan_ntodo and jpegs_before place the task in the plan, so that on a GPU each JPEG gets the
    decoder the whole run gives it (the same bytes as `imgpu batch`, however the plan is cut)."""
    try:
        p = _get_worker().plugins.get(PLUGIN_NAME)
    except ValueError:   # not on a worker (a synchronous scheduler): one batch at a time here too
        p = None
    with (p.lock if p is not None else _fallback_lock):
        return _imgpu._batch_stage(argv, pairs, tag, plan_ntodo, jpegs_before)


def _options(argv):
    """The options part of `imgpu batch`'s argv: what comes before "--"."""
    return argv[:argv.index("--")] if "--" in argv else argv


def _value(argv, long, short=None):
    """The value of an option with a value (the last one given), or None."""
    opts, v = _options(argv), None
    for i, a in enumerate(opts):
        if (a == long or (short and a == short)) and i + 1 < len(opts):
            v = opts[i + 1]
        elif a.startswith(long + "="):
            v = a[len(long) + 1:]
    return v


def _remove_staged(outs, tag):
    """Every temp file of this run (".NAME.<tag>.XXXXXX") left in the outputs' folders."""
    mark = "." + tag + "."
    removed = 0
    for d in sorted({_os.path.dirname(o) for o in outs}):
        try:
            entries = list(_os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(".") and mark in e.name:
                try:
                    _os.unlink(e.path)
                    removed += 1
                except OSError:
                    pass
    return removed


def batch_argv(client, argv, *, task_size=None, worker_gpu="auto"):
    """batch() with `imgpu batch`'s own arguments (after "batch"), as `python3 -m imgpu batch`
    takes them: ["--equalize", "-o", "out", "--", "photos/"]. With --dry-run only the client's
    plan runs (client may be None) and "done" counts the files it would write."""
    argv = [_os.fsdecode(a) for a in argv]
    outdir = _value(argv, "--output", "-o")
    plan = _imgpu._batch_plan(argv)   # ValueError for a usage error, as imgpu.batch
    todo = plan.pop("todo")
    before = plan.pop("jpegs_before")
    failed = plan["failed"]
    summary = {"done": 0, "skipped": plan["skipped"], "failed": failed, "stale": plan["stale"]}
    if "--dry-run" in _options(argv):
        summary["done"] = plan["done"]   # what it would write, as imgpu.batch(dry_run=True)
        return summary
    if not todo:
        return summary
    device = _value(argv, "--device") or "auto"
    # the plugin, registered once: a worker keeps its context across batches (registering it
    # again would tear it down and set it up anew on every worker)
    want = (repr(worker_gpu), device)
    if any(v != want for v in client.run(_plugin_config).values()) or not client.scheduler_info()["workers"]:
        client.register_worker_plugin(ImgpuWorker(worker_gpu, device), name=PLUGIN_NAME)
    info = client.run(_worker_info)
    workers = max(1, len(info))
    jobs = _value(argv, "--jobs")
    jobs = int(jobs) if jobs and jobs.isdigit() and int(jobs) > 0 else \
        min((c for c, _ in info.values()), default=1)
    count = -(-len(todo) // int(task_size)) if task_size else task_count(len(todo), workers, jobs)
    tag = "imgpu-dask-" + _uuid.uuid4().hex[:16]
    # GPU workers (the rule's count as the workers reckon it: --jobs, else their cores) and the
    # default task size: the plan's CPU-first JPEGs weigh CPU_FIRST_WEIGHT images each
    first = _cpu_first_count(jobs)
    gpu_run = device != "cpu" and any(g is not None for _, g in info.values()) and \
        not (device == "auto" and len(todo) <= 2 * first)
    if gpu_run and not task_size and count > 1 and before[0] < first:
        # item k is a JPEG where the count of JPEGs before the next item grows (before has one
        # entry more than todo: the plan's count after its last item)
        w = [CPU_FIRST_WEIGHT if before[k] < first and before[k + 1] > before[k] else 1
             for k in range(len(todo))]
        chunks = _split_weighted(todo, count, w)
    else:
        chunks = _split(todo, count)
    # argv (its inputs too: a command line may name thousands of files) goes to each worker once
    [argv_f] = client.scatter([argv], broadcast=True, hash=False)
    starts = [0]
    for chunk in chunks[:-1]:
        starts.append(starts[-1] + len(chunk))
    futures = [client.submit(_stage, argv_f, chunk, tag, len(todo), before[at],
                             key="imgpu-batch-%s-%d" % (tag[11:], k), pure=False)
               for k, (chunk, at) in enumerate(zip(chunks, starts))]
    of = {f.key: chunk for f, chunk in zip(futures, chunks)}
    try:
        for fut in _as_completed(futures):
            try:
                res = fut.result()
            except Exception as e:   # KilledWorker, or the task raised: its files failed
                why = "its task failed on the cluster: %s: %s" % (type(e).__name__, e)
                failed += [{"path": i, "reason": why} for i, _ in of[fut.key]]
                continue
            finally:
                fut.release()
            failed += res["failed"]
            if res["staged"]:
                c = _imgpu._batch_commit(outdir, res["staged"])
                summary["done"] += c["done"]
                failed += c["failed"]
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:   # stopped early (an exception, Ctrl-C): no task of this run goes on
            client.cancel(pending)
        argv_f.release()
        _remove_staged([o for _, o in todo], tag)
    return summary


def batch(client, inputs, outdir, ops=(), *, task_size=None, worker_gpu="auto", **options):
    """batch(client, inputs, outdir, ops=[...], **options) -> {"done", "skipped", "failed", "stale"}

    imgpu.batch's run on the Dask cluster of `client` (a distributed.Client): the same inputs
    (a path, or a list of files, folders and quoted globs), outdir, ops (names and imgpu.op()
    objects) and options (`imgpu batch`'s, with _ for -), and the same outputs, manifest and
    summary ("failed": a list of {"path", "reason"}). ValueError for an invalid option.

    task_size: images per task (default: imgpu.dask.task_size's rule). worker_gpu: which GPU
    each worker uses (ImgpuWorker). See the module's help for how the work is split and what
    survives a worker's death."""
    return batch_argv(client, _batch_argv(inputs, outdir, ops, options), task_size=task_size,
                      worker_gpu=worker_gpu)

"""imgpu.dask (issue 29): `imgpu batch` on a Dask LocalCluster of 2 worker processes, against the
imgpu CLI's own `imgpu batch` on the same inputs: the same output bytes, resume, failures with
their reason, and a worker killed (os.kill, SIGKILL) in the middle of a task. On the CPU here; on
CUDA workers on the GPU machine (IMGPU_PYTEST_DEVICE=cuda: both the workers and the reference run
use --device cuda). Registered as python_dask (tests/python/python.cmake), which reports skipped
(77) where dask.distributed does not import."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import imgpu

distributed = pytest.importorskip("distributed")
import imgpu.dask  # noqa: E402  (needs distributed)
from distributed import Client, LocalCluster  # noqa: E402
from distributed.diagnostics.plugin import WorkerPlugin  # noqa: E402

CLI = os.environ.get("IMGPU_CLI")
ASSETS = os.environ.get("IMGPU_ASSETS", os.path.join(os.path.dirname(__file__), "..", "..", "assets"))
DEVICE = os.environ.get("IMGPU_PYTEST_DEVICE", "cpu")
OPS = ["equalize", imgpu.op("rotate", angle=15, filter="bicubic")]
OPTS = dict(device=DEVICE, quality=90, jobs=2)
CLI_OPTS = ["--equalize", "--rotate", "15", "--filter", "bicubic", "--device", DEVICE, "--quality", "90",
            "--jobs", "2", "--quiet"]
N_JPEG = 24


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A folder of 24 small JPEGs, a PNG in a subfolder and a corrupt JPEG."""
    d = tmp_path_factory.mktemp("dask_in")
    a = imgpu.read(os.path.join(ASSETS, "chelsea.png"))
    for i in range(N_JPEG):
        imgpu.write(d / ("p%02d.jpg" % i), imgpu.rotate(a, 3 * i, expand=False), quality=85)
    (d / "sub").mkdir()
    imgpu.write(d / "sub" / "cam.png", imgpu.read(os.path.join(ASSETS, "camera.png")))
    (d / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 40)
    return d


@pytest.fixture(scope="module")
def reference(inputs, tmp_path_factory):
    """`imgpu batch` (the CLI, one process) on the same inputs: output folder and stderr."""
    if not CLI:
        pytest.skip("IMGPU_CLI not set (run through ctest)")
    out = tmp_path_factory.mktemp("dask_ref") / "out"
    r = subprocess.run([CLI, "batch", *CLI_OPTS, "-o", str(out), str(inputs)], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr   # the broken JPEG
    return out


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    # the workers import this module (the killer plugin below): they get its folder on sys.path
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ["PYTHONPATH"] = os.pathsep.join([here] + [p for p in sys.path if p])
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=50)
    c = Client(cluster)
    c.wait_for_workers(2)
    yield c
    c.close()
    cluster.close()


def files(d):
    """{relative path: bytes} of every file under d but the manifest."""
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            if rel != ".imgpu-batch":
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def records(d):
    """The manifest's records as {name: (out size, in size, settings)} (the last line of each)."""
    recs = {}
    with open(os.path.join(d, ".imgpu-batch")) as f:
        for line in f:
            if line.startswith("R "):
                _, name, osize, _, isize, _, settings = line.rstrip("\n").split("\t")
                recs[name] = (osize, isize, settings)
    return recs


def check_same(out, reference):
    got, want = files(out), files(reference)
    assert sorted(got) == sorted(want)
    assert len(want) == N_JPEG + 1
    for name in want:
        assert got[name] == want[name], name
    assert records(out) == records(reference)


def test_outputs_equal_cli(client, inputs, reference, tmp_path):
    out = tmp_path / "out"
    s = imgpu.dask.batch(client, [str(inputs)], str(out), ops=OPS, task_size=5, **OPTS)
    assert s["done"] == N_JPEG + 1 and s["skipped"] == 0 and s["stale"] == 0
    assert [f["path"] for f in s["failed"]] == [str(inputs / "broken.jpg")]
    check_same(out, reference)


def test_resume_skips(client, inputs, reference, tmp_path):
    out = tmp_path / "out"
    first = imgpu.dask.batch(client, [str(inputs)], str(out), ops=OPS, task_size=8, **OPTS)
    assert first["done"] == N_JPEG + 1
    os.unlink(out / "p03.jpg")   # one output lost: the re-run writes that one alone
    again = imgpu.dask.batch(client, [str(inputs)], str(out), ops=OPS, **OPTS)
    assert again["done"] == 1 and again["skipped"] == N_JPEG
    check_same(out, reference)
    # the CLI resumes a folder imgpu.dask wrote (one manifest format, one writer of it)
    r = subprocess.run([CLI, "batch", *[o for o in CLI_OPTS if o != "--quiet"], "-o", str(out), str(inputs)],
                       capture_output=True, text=True)
    assert "0 done, %d skipped" % (N_JPEG + 1) in r.stderr, r.stderr
    # other settings: stale, kept, as `imgpu batch` reports them
    other = imgpu.dask.batch(client, [str(inputs)], str(out), ops=["equalize"], **OPTS)
    assert other["done"] == 0 and other["stale"] == N_JPEG + 1
    assert files(out) == files(reference)


def test_failure_reported_with_reason(client, inputs, tmp_path):
    out = tmp_path / "out"
    s = imgpu.dask.batch(client, [str(inputs / "broken.jpg"), str(inputs / "p00.jpg")], str(out), ops=OPS, **OPTS)
    local = imgpu.batch([str(inputs / "broken.jpg")], str(tmp_path / "local"), ops=OPS, **OPTS)
    assert s["done"] == 1
    assert s["failed"] == local["failed"]
    assert len(s["failed"]) == 1 and s["failed"][0]["path"] == str(inputs / "broken.jpg")
    assert "broken.jpg" in s["failed"][0]["reason"] and s["failed"][0]["reason"]
    assert sorted(os.listdir(out)) == [".imgpu-batch", "p00.jpg"]


def test_usage_error_raises(client, inputs, tmp_path):
    with pytest.raises(ValueError):
        imgpu.dask.batch(client, [str(inputs)], str(tmp_path / "out"), ops=OPS, quality=101)
    assert not (tmp_path / "out").exists()


class Killer(WorkerPlugin):
    """Kills its worker (SIGKILL, once in the whole cluster: the marker file) as soon as the worker
    runs a task while a staged output of imgpu.dask is in `outdir`: a worker killed in the middle
    of a task, with part of the task's outputs written under their temp names."""
    name = "imgpu-test-killer"

    def __init__(self, outdir, marker):
        self.outdir, self.marker = outdir, marker

    def setup(self, worker):
        self.worker = worker
        if not os.path.exists(self.marker):
            threading.Thread(target=self.watch, daemon=True).start()

    def watch(self):
        while not os.path.exists(self.marker):
            try:
                staged = [e.name for e in os.scandir(self.outdir) if ".imgpu-dask-" in e.name]
            except OSError:
                staged = []
            if staged and self.worker.state.executing_count > 0:
                try:
                    fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return
                os.write(fd, "\n".join(staged).encode())
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(0.002)


def test_worker_killed_mid_task(client, inputs, reference, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    marker = str(tmp_path / "killed")
    client.register_worker_plugin(Killer(str(out), marker))
    s = imgpu.dask.batch(client, [str(inputs)], str(out), ops=OPS, task_size=8, **OPTS)
    assert os.path.exists(marker), "no worker was killed"
    with open(marker) as f:
        seen = f.read().split("\n")
    assert seen and all(".imgpu-dask-" in n for n in seen)
    # the batch completed: everything written once, valid, equal to the single machine's
    assert s["done"] == N_JPEG + 1 and s["skipped"] == 0
    assert [f["path"] for f in s["failed"]] == [str(inputs / "broken.jpg")]
    check_same(out, reference)
    for name, data in files(out).items():
        assert imgpu.decode(data).size > 0, name
    # the killed worker's temp files are gone (nothing hidden left but the manifest)
    left = [os.path.join(r, n) for r, _, ns in os.walk(out) for n in ns if n.startswith(".")]
    assert left == [str(out / ".imgpu-batch")]


def test_command_line(client, inputs, reference, tmp_path):
    """python3 -m imgpu batch ... --scheduler ADDRESS: imgpu batch's arguments and exit status."""
    out = tmp_path / "out"
    addr = client.scheduler.address
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "imgpu", "batch", *CLI_OPTS, "-o", str(out), "--scheduler", addr,
                        str(inputs)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1, r.stderr   # the broken JPEG
    assert "imgpu: %s: " % (inputs / "broken.jpg") in r.stderr
    assert "%d done, 0 skipped, 1 failed" % (N_JPEG + 1) in r.stderr
    check_same(out, reference)
    r = subprocess.run([sys.executable, "-m", "imgpu", "batch", *CLI_OPTS, "-o", str(out), "--dry-run", str(inputs)],
                       capture_output=True, text=True, env=env, timeout=300)   # the plan alone, no cluster
    assert r.returncode == 0 and "dry run: 1 to write, %d skipped, 0 failed" % (N_JPEG + 1) in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "imgpu", "batch", "--bogus", "-o", str(out), "--scheduler", addr,
                        str(inputs)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr, r.stderr


def test_task_size_rule():
    """The rule docs/cluster.md states, on its own examples."""
    d = imgpu.dask
    assert (d.task_count(500, 2, 16), d.task_size(500, 2, 16)) == (2, 250)
    assert (d.task_count(500, 1, 16), d.task_size(500, 1, 16)) == (1, 500)
    assert (d.task_count(1_000_000, 8, 16), d.task_size(1_000_000, 8, 16)) == (3904, 257)
    assert (d.task_count(40, 4, 2), d.task_size(40, 4, 2)) == (4, 10)   # few files: one task per worker
    assert d.task_count(3, 4, 2) == 3 and d.task_count(0, 2, 2) == 0
    runs = d._split(list(range(1_000_000)), 3904)
    assert len(runs) == 3904 and {len(r) for r in runs} == {256, 257}
    assert [x for r in runs for x in r] == list(range(1_000_000))   # in order, each once


def test_weighted_split_for_the_cpu_first_jpegs(monkeypatch):
    """On GPU workers the plan's first JPEGs are libjpeg-turbo's and weigh CPU_FIRST_WEIGHT
    images each: the cuts balance the weights, each task non-empty, in order, each item once."""
    d = imgpu.dask
    w = [d.CPU_FIRST_WEIGHT] * 128 + [1] * 372            # 500 photos, 2 workers of 32 threads
    runs = d._split_weighted(list(range(500)), 2, w)
    assert [x for r in runs for x in r] == list(range(500))
    sums = [sum(w[i] for i in r) for r in runs]
    assert len(runs) == 2 and abs(sums[0] - sums[1]) <= d.CPU_FIRST_WEIGHT, sums
    assert len(runs[0]) < 128 < len(runs[1])             # the first task holds fewer files
    for n, count, ws in [(10, 3, [1] * 10), (5, 5, [100, 1, 1, 1, 1]), (6, 3, [1] * 5 + [100]),
                         (7, 7, [1] * 7), (1000, 8, [4] * 256 + [1] * 744)]:
        runs = d._split_weighted(list(range(n)), count, ws)
        assert len(runs) == count and all(runs) and [x for r in runs for x in r] == list(range(n))
        sums = [sum(ws[i] for i in r) for r in runs]
        assert max(sums) - min(sums) <= 2 * max(ws) or max(ws) > sum(ws) / count, (n, count, sums)
    # uniform weights: sizes one apart at most, as _split's
    assert sorted(len(r) for r in d._split_weighted(list(range(10)), 3, [1] * 10)) == [3, 3, 4]
    # the count as the workers reckon it: IMGPU_NVJPEG_CPU_FIRST, else 4 per engine thread
    monkeypatch.delenv("IMGPU_NVJPEG_CPU_FIRST", raising=False)
    assert d._cpu_first_count(16) == 64
    monkeypatch.setenv("IMGPU_NVJPEG_CPU_FIRST", "10")
    assert d._cpu_first_count(16) == 10


def test_worker_gpu_choice(monkeypatch):
    """Which GPU a worker takes (ImgpuWorker's worker_gpu), without a GPU: the rule alone."""
    pick = imgpu.dask._pick_gpu
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert [pick("auto", k, 2) for k in range(4)] == [0, 1, 0, 1]   # LocalCluster's names 0, 1, ...
    assert pick("auto", "tcp://10.0.0.5:4000", 2) == 0               # a name that is no index
    assert pick("first", 3, 4) == 0
    assert pick({"a": 1, 2: 3}, "a", 4) == 1 and pick({"a": 1, 2: 3}, 2, 4) == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")                   # Slurm --gpus-per-task=1
    assert imgpu.dask._visible_gpus() == 1 and pick("auto", 3, 1) == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3,-1,4")           # CUDA stops at an invalid id
    assert imgpu.dask._visible_gpus() == 2


def test_workers_gpus(client):
    """Each worker's GPU (worker_gpu="auto"): worker k takes GPU k mod G where the machine has G
    (LocalCluster's names 0, 1); none on a machine without one. On 2 GPUs the 2 workers differ."""
    g = imgpu.dask._visible_gpus() if imgpu.built_with_cuda and DEVICE != "cpu" else 0
    client.register_worker_plugin(imgpu.dask.ImgpuWorker("auto", DEVICE), name=imgpu.dask.PLUGIN_NAME)
    info = client.run(imgpu.dask._worker_info)
    names = client.run(lambda dask_worker: dask_worker.name)
    gpus = {names[a]: gpu for a, (_, gpu) in info.items()}
    if g == 0:
        assert set(gpus.values()) == {None}
    elif os.environ.get("IMGPU_CUDA_DEVICE"):   # the environment's choice wins
        assert set(gpus.values()) == {int(os.environ["IMGPU_CUDA_DEVICE"])}
    elif "CUDA_VISIBLE_DEVICES" in os.environ and g == 1:
        assert set(gpus.values()) == {0}
    else:
        assert gpus == {k: int(k) % g for k in gpus}, gpus
        if g >= 2:
            assert len(set(gpus.values())) == 2

"""cli_inproc_check.py — the test tool cli_inproc (tests/common/cli_inproc.c: many imgpu commands
in one process, for the .cuda comparison tests) against imgpu's own processes: for each command,
run once as `imgpu ...` and once through cli_inproc, the same exit status, standard output,
standard error and output files, byte for byte; commands that fail, usage errors and a batch
among them, in an order where state left by one (an error message, --quiet, limits, an existing
output) would show in the next.

    cli_inproc_check.py IMGPU TMP_ROOT ASSETS      (IMGPU_INPROC: the cli_inproc binary)
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as C  # noqa: E402

binary, tmp, assets = C.setup("cli_inproc_check")
K = C.Checker("cli_inproc_check")
tool = os.environ.get("IMGPU_INPROC")
if not tool or not os.access(tool, os.X_OK):
    print("SKIP: IMGPU_INPROC does not name the cli_inproc binary")
    sys.exit(77)

cam, chelsea = os.path.join(assets, "camera.png"), os.path.join(assets, "chelsea.png")
o = lambda name: os.path.join(tmp, "o", name)   # noqa: E731
COMMANDS = [
    ["flip", cam, o("a.png"), "--horizontal"],
    ["crop", chelsea, o("b.png"), "--rect", "9999,0,5,5"],                 # exit 1, named file
    ["resize", chelsea, o("c.tif"), "--size", "37x23", "--filter", "lanczos", "--quiet"],
    ["crop", cam, o("d.png"), "--rect", "1,1,5"],                          # usage error, exit 2
    ["flip", cam, o("e.png")],                                             # a notice (no direction)
    ["levels", cam, o("f.png"), "--black", "10", "--white", "240", "--max-pixels", "100"],  # a limit: exit 1
    ["levels", cam, o("g.png"), "--black", "10", "--white", "240"],        # ... not kept for the next
    ["info", "--json", o("c.tif")],
    ["frobnicate", cam],                                                   # unknown command
    ["batch", "--flip", "--vertical", "--rotate", "15", "-o", o("batch"), cam, chelsea],
    ["batch", "--flip", "--vertical", "--rotate", "15", "-o", o("batch"), cam],   # resumed: skipped
    ["batch", "--flip", "--vertical", "-o", o("batch"), cam],              # other settings: stale, exit 1
    ["rotate", cam, o("h.png"), "--angle", "12.5", "--device", "cuda"],    # exit 1 without a GPU, else 0
    ["gamma", cam, o("i.png"), "--gamma", "2.2", "--device", "cpu"],
    ["equalize", os.path.join(tmp, "missing.png"), o("j.png")],            # unreadable input
    ["histogram", cam, "--csv"],
    ["compare", cam, o("a.png")],
    ["crop", "--help"],
]


def outputs():
    """every file under o/ (the batch's manifest too), as bytes"""
    got = {}
    for root, _, files in os.walk(os.path.join(tmp, "o")):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                got[os.path.relpath(p, tmp)] = fh.read()
    return got


def run_all(run):
    shutil.rmtree(os.path.join(tmp, "o"), ignore_errors=True)
    os.makedirs(os.path.join(tmp, "o"))
    return [run(c) for c in COMMANDS], outputs()


procs, files_p = run_all(lambda c: C.run(binary, c, timeout=60))
runner = C.Runner(binary, timeout=60, first_as_process=False)
inproc, files_i = run_all(runner.run)
runner.close()
K.check(runner.inproc_runs == 0 and runner.process_runs == 0, "the counts are printed and reset on close")
K.check(runner.exit_status == 0, f"cli_inproc ends with exit 0 at the end of its input (got {runner.exit_status})")


def manifest_free(text):
    """the batch manifest's records less their checksums and modification times (R SUM, name,
    output size, output mtime, input size, input mtime, settings), in sorted order (a batch's
    threads append them as their files finish)"""
    return sorted((f[1], f[2], f[4], *f[6:]) if f[0].startswith("R ") else tuple(f)
                  for f in (line.split("\t") for line in text.decode().splitlines()))


def untimed(text):
    """batch's summary line less its timings ('in 0.07 s: 29.39 images/s, 5.6 MB/s')"""
    return re.sub(r"in [0-9.]+ s: [0-9.]+ images/s, [0-9.]+ MB/s", "in T", text)


for c, p, i in zip(COMMANDS, procs, inproc):
    what = "imgpu " + " ".join(os.path.relpath(a, tmp) if a.startswith(tmp) else a for a in c)
    K.check(p.rc == i.rc and not i.timed_out, f"{what}: exit {p.rc} both ways", f"{p}\n{i}")
    K.check(p.out == i.out, f"{what}: the same standard output", f"{p}\n{i}")
    K.check(untimed(p.err) == untimed(i.err), f"{what}: the same standard error", f"{p}\n{i}")
K.check(sorted(files_p) == sorted(files_i), "the same files written", f"{sorted(files_p)}\n{sorted(files_i)}")
for name in sorted(set(files_p) & set(files_i)):
    if name.endswith(".imgpu-batch"):
        K.check(manifest_free(files_p[name]) == manifest_free(files_i[name]), f"{name}: the same records")
    else:
        K.check(files_p[name] == files_i[name], f"{name}: the same bytes")
# what the commands did is what they should (so that equal is not equally broken)
rcs = [p.rc for p in procs]
# --device cuda: 0 where the NVIDIA driver lists a GPU (the GPU machine), 1 elsewhere
gpus = "/proc/driver/nvidia/gpus"
has_gpu = os.path.isdir(gpus) and len(os.listdir(gpus)) > 0 and os.environ.get("CUDA_VISIBLE_DEVICES", "0") != ""
K.check(rcs == [0, 1, 0, 2, 0, 1, 0, 0, 2, 0, 0, 1, 0 if has_gpu else 1, 0, 1, 0, 0, 0], f"the exit statuses {rcs}")
K.check(len(files_p) >= 8, "the successful commands wrote their files", str(sorted(files_p)))
rc = K.end()
C.cleanup(tmp, rc != 0)
sys.exit(rc)

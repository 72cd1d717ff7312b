"""cli_no_gpu.py — what imgpu says and does where no GPU can be used (issue 30). Every machine
plays one: CUDA_VISIBLE_DEVICES="" hides every GPU from CUDA, and on a machine without an
NVIDIA driver (CI) there is none anyway.

  - `--device cuda` fails saying that no NVIDIA GPU or driver was found, not CUDA's
    "driver version is insufficient" (which reads like a request to upgrade a driver);
  - `auto` on a job that starts CUDA falls back to the CPU with that notice;
  - a resumed batch (most outputs there already) says why it ran on the CPU: no GPU, not
    "too few images for a GPU's start-up";
  - `imgpu bench` times the CPU backend instead of failing, says why on stderr, and so does
    `imgpu bench --cpu` anywhere; a bad --reps is a usage error.

Usage: cli_no_gpu.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

NO_GPU = "no NVIDIA GPU or driver was found"


def main():
    imgpu, tmp, assets = cc.setup("cli_no_gpu")
    C = cc.Checker("cli_no_gpu")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", IMGPU_CPU_THREADS="1")
    env.pop("IMGPU_DEVICE", None)
    cuda = "CUDA support: yes" in cc.run(imgpu, ["--version"]).out

    if cuda:
        r = cc.run(imgpu, ["equalize", os.path.join(assets, "camera.png"), os.path.join(tmp, "eq.png"),
                           "--device", "cuda"], env=env)
        C.check(r.rc == 1 and NO_GPU in r.err and "insufficient" not in r.err
                and not os.path.exists(os.path.join(tmp, "eq.png")),
                "--device cuda without a GPU: 'no NVIDIA GPU or driver was found', exit 1", str(r))
        # a colour bicubic rotation on one core is a job auto starts CUDA for (auto_start.sh)
        out = os.path.join(tmp, "rot.png")
        r = cc.run(imgpu, ["rotate", os.path.join(assets, "astronaut.png"), out, "--angle", "30",
                           "--filter", "bicubic"], env=env)
        C.check(r.rc == 0 and NO_GPU in r.err and "running on the CPU" in r.err and "insufficient" not in r.err
                and os.path.exists(out), "auto without a GPU: one notice saying so, the CPU's result", str(r))
    else:
        print("note: a build without CUDA: the --device cuda and auto checks are not run")

    # a resumed batch: 3 images done on the CPU, one output removed, run again with auto
    src = os.path.join(tmp, "in")
    os.makedirs(src)
    for n in ("camera.png", "coffee.png", "brick.png"):
        shutil.copy(os.path.join(assets, n), src)
    out = os.path.join(tmp, "out")
    r = cc.run(imgpu, ["batch", "--equalize", "--device", "cpu", "-o", out, src], env=env)
    C.check(r.rc == 0, "batch on the CPU", str(r))
    os.remove(os.path.join(out, "coffee.png"))
    r = cc.run(imgpu, ["batch", "--equalize", "-o", out, src], env=env)
    if cuda:
        C.check(r.rc == 0 and "1 done, 2 skipped" in r.err and "ops on the CPU: no NVIDIA GPU" in r.err
                and "too few images" not in r.err,
                "a resumed batch without a GPU says that is why it ran on the CPU", str(r))
    else:
        C.check(r.rc == 0 and "1 done, 2 skipped" in r.err and "too few images" not in r.err,
                "a resumed batch in a build without CUDA", str(r))

    # bench: the CPU table instead of a failure; OpenCV left out (IMGPU_BENCH_PYTHON empty)
    benv = dict(env, IMGPU_BENCH_PYTHON="")
    row = re.compile(r"^\| 1080p \| gray \| equalize \| ([0-9.]+) \| ([0-9.]+) \| ([0-9]+) \| n/a \|", re.M)
    r = cc.run(imgpu, ["bench", "--sizes", "1080p", "--channels", "1", "--ops", "equalize", "--reps", "3"],
               env=benv, timeout=120)
    if "no imgpu-bench beside this imgpu" in r.err:
        C.check(False, "imgpu-bench is built in every build", str(r))
    else:
        m = row.search(r.out)
        C.check(r.rc == 0 and m and float(m.group(1)) > 0 and "timing the CPU backend instead" in r.err
                and (NO_GPU in r.err or "built without CUDA" in r.err),
                "bench without a GPU times the CPU backend and says why", str(r))
        C.check("OpenCV not timed" in r.err and "IMGPU_BENCH_PYTHON" in r.err,
                "bench without OpenCV says how to add it", str(r))
        rows = [l for l in r.out.splitlines() if l.startswith("| ") and not l.startswith(("| size", "| ---"))]
        C.check(len(rows) == 1, "bench --ops/--sizes/--channels pick the CPU rows", r.out)
        # --cpu anywhere (with a GPU too), CSV
        r = cc.run(imgpu, ["bench", "--cpu", "--csv", "--sizes", "1080p", "--channels", "3", "--ops", "rotate",
                           "--reps", "1"], env=benv, timeout=120)
        lines = r.out.strip().splitlines()
        C.check(r.rc == 0 and lines and lines[0].startswith("size,image,op,imgpu_cpu_median_ms")
                and sorted(l.split(",")[2] for l in lines[1:]) == ["rotate30_bicubic", "rotate30_bilinear", "rotate90"]
                and "timing the CPU backend instead" not in r.err,
                "bench --cpu --csv: the rotation rows of the CPU table", str(r))
        r = cc.run(imgpu, ["bench", "--cpu", "--reps", "0"], env=benv)
        C.check(r.rc == 2 and "--reps" in r.err and not r.out, "bench --reps 0 is a usage error", str(r))
        # OpenCV beside it, where cv2 is there
        py = "/usr/bin/python3"
        if os.path.exists(py) and subprocess.run([py, "-c", "import cv2"], capture_output=True).returncode == 0:
            r = cc.run(imgpu, ["bench", "--cpu", "--sizes", "1080p", "--channels", "1", "--ops", "equalize",
                               "--reps", "1"], env=dict(env, IMGPU_BENCH_PYTHON=py), timeout=120)
            m = re.search(r"^\| 1080p \| gray \| equalize \| [0-9.]+ \| [0-9.]+ \| [0-9]+ \| ([0-9.]+) \|",
                          r.out, re.M)
            C.check(r.rc == 0 and m and float(m.group(1)) > 0 and "OpenCV " in r.out,
                    "bench --cpu times OpenCV's equalizeHist beside imgpu's", str(r))
        else:
            print("note: no /usr/bin/python3 with cv2: the OpenCV column is not checked")

    cc.cleanup(tmp, C.failures)
    return C.end()


if __name__ == "__main__":
    sys.exit(main())

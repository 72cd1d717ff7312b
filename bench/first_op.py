"""bench/first_op.py — issue 27's start-up target, taken apart: the first imgpu GPU op in a fresh
process whose CUDA context CuPy already made, step by step, with CUDA's lazy module loading (the
default) and with eager loading, 3 fresh processes each. Each line: milliseconds of
  ctx      imgpu.Context("cuda") and its device resolved (imgpu_context_cuda_device: stream,
           session, events)
  first    the first imgpu.equalize on a 4K CuPy array, synchronized
  second   the second one (what every later call costs)
  rotate1  the first rotate (its kernels and texture), synchronized
  hist1    the first histogram of a CUDA array
Run on the GPU machine: PYTHONPATH=build-gpu/python python3 bench/first_op.py"""
import os
import subprocess
import sys

CODE = r"""
import time, cupy, imgpu
a = cupy.zeros((2160, 3840, 3), cupy.uint8); a += 7
cupy.cuda.runtime.deviceSynchronize()
def ms(f):
    t = time.perf_counter(); f(); cupy.cuda.runtime.deviceSynchronize(); return (time.perf_counter() - t) * 1e3
ctx = None
def mk():
    global ctx
    ctx = imgpu.Context("cuda"); ctx.__enter__()
r = [ms(mk), ms(lambda: imgpu.equalize(a).synchronize()), ms(lambda: imgpu.equalize(a).synchronize()),
     ms(lambda: imgpu.rotate(a, 15).synchronize()), ms(lambda: imgpu.histogram(a))]
print(" ".join("%.2f" % x for x in r))
"""


def main():
    print("%-6s %8s %8s %8s %8s %8s" % ("load", "ctx", "first", "second", "rotate1", "hist1"))
    for loading in ("LAZY", "EAGER"):
        for _ in range(3):
            env = dict(os.environ, CUDA_MODULE_LOADING=loading)
            r = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env)
            if r.returncode:
                print(loading, "failed:", r.stderr.strip().splitlines()[-1:])
                continue
            print("%-6s %s" % (loading, " ".join("%8s" % x for x in r.stdout.split())))


if __name__ == "__main__":
    main()

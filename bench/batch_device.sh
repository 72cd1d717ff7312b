#!/bin/bash
# batch_device.sh — everything issue 5 needs from one GPU-machine run (see ../shared/GPU.md):
# build (bench/device.sh), the batch tests run directly with a Python that has cv2 (the
# ctest-configured /usr/bin/python3 there has none), compute-sanitizer memcheck on a GPU batch,
# then bench/batch_bench.sh on N 4K PNGs. Logs on stdout; run from the repository root.
N=${1:-200}; RUNS=${2:-2}
PY=$(command -v python3)
bash bench/device.sh || exit 1
. .gpu/device-env.sh >/dev/null 2>&1
nvidia-smi -L; nproc; echo "python: $PY"
cd build-gpu
echo "== unit"; ./tests/test_batch_png | tail -2
echo "== batch_gpu"; time $PY ../tests/batch/batch_gpu.py ./imgpu /tmp/bt ../assets 2>&1 | grep -v libpng | tail -25
[ "${WITH_CLI:-0}" = 1 ] && { echo "== batch_cli"; $PY ../tests/batch/batch_cli.py ./imgpu /tmp/bt ../assets 2>&1 | grep -v libpng | tail -8; }
echo "== memcheck"; compute-sanitizer --tool memcheck --error-exitcode 9 ./imgpu batch --equalize --rotate 30 \
  --devices 0,0 -o /tmp/cs ../assets 2>&1 | tail -4; echo "memcheck rc=${PIPESTATUS[0]}"
cd ..
echo "== bench"; bash bench/batch_bench.sh build-gpu/imgpu "$N" "$RUNS" "$PY" 2>&1 | grep -v libpng
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
  echo "== two GPUs, $N images"
  for d in 0 0,1; do s=$(date +%s.%N); build-gpu/imgpu batch --equalize --devices $d --overwrite -o /tmp/o2 build-gpu/bench-batch/in_n 2>&1 | tail -1; echo "devices $d: $(awk "BEGIN{print $(date +%s.%N) - $s}") s"; done
fi

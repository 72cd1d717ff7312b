#!/usr/bin/env bash
# bench/gpu_round.sh — the benchmark round of issues 25/27/28 on the GPU machine, after
# tests/device.sh built build-gpu (same call, or a warm machine): each part's log under $OUT.
#   decode    bench/decode_profile.sh: nvJPEG's engines vs the scan walk vs decode_batch
#   python    bench/python_bench.py --n N (500): start-up, numpy vs cv2, ops on 4K tensors, the
#             end-to-end JPEG chain against torchvision
#   latency   imgpu-bench's single-op CUDA-event latency of the same ops at 4K (issue 27's
#             "at most that + 20 us" target sets the two side by side)
#   first     bench/first_op.py: the first op after CuPy made the context, step by step
#   oplat     bench/op_latency.py: one synchronized op on a 4K tensor taken apart (protocols,
#             enqueue, sync, torch / CuPy / imgpu.Array inputs, stream=, out=, torchvision)
#   resize    imgpu-bench-resize (kernels vs NPP) and bench/resize_torch.py (vs torchvision)
# BENCH_PARTS (default all of them) picks; BENCH_N the JPEG count.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
. .gpu/device-env.sh > /dev/null 2>&1
export LIBRARY_PATH
parts=${BENCH_PARTS:-decode python latency oplat first resize}
n=${BENCH_N:-500}
for p in $parts; do
  t0=$SECONDS
  case $p in
    decode) timeout 240 bash bench/decode_profile.sh build-gpu 200 > "$OUT/decode.log" 2>&1 ;;
    python) PYTHONPATH=build-gpu/python timeout 300 python3 bench/python_bench.py --n "$n" > "$OUT/python.log" 2>&1 ;;
    latency) timeout 120 build-gpu/imgpu-bench --sizes 4k --channels 3 --contents photo --ops equalize,rotate,clahe \
               > "$OUT/latency.log" 2>&1 ;;
    oplat) PYTHONPATH=build-gpu/python timeout 120 python3 bench/op_latency.py > "$OUT/oplat.log" 2>&1 ;;
    first) PYTHONPATH=build-gpu/python timeout 120 python3 bench/first_op.py > "$OUT/first.log" 2>&1 ;;
    resize) { timeout 120 build-gpu/imgpu-bench-resize;
              PYTHONPATH=build-gpu/python timeout 120 python3 bench/resize_torch.py --n 50; } > "$OUT/resize.log" 2>&1 ;;
  esac
  echo "gpu_round: $p rc $? in $((SECONDS - t0)) s"
done

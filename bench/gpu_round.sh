#!/usr/bin/env bash
# bench/gpu_round.sh — the benchmark round of issues 25/27/28 on the GPU machine, after
# tests/device.sh built build-gpu (same call, or a warm machine): each part's log under $OUT.
#   decode    bench/decode_profile.sh: nvJPEG's engines vs the scan walk vs decode_batch
#   python    bench/python_bench.py --n N (500): start-up, numpy vs cv2, ops on 4K tensors, the
#             end-to-end JPEG chain against torchvision
#   cpu1      python_bench.py's numpy-vs-cv2 rows on one thread each, by thread CPU time: with
#             the python part's all-core rows, tells a per-thread cost from a scaling one
#   latency   imgpu-bench's single-op CUDA-event latency of the same ops at 4K (issue 27's
#             "at most that + 20 us" target sets the two side by side)
#   first     bench/first_op.py: the first op after CuPy made the context, step by step
#   oplat     bench/op_latency.py: one synchronized op on a 4K tensor taken apart (protocols,
#             enqueue, sync, torch / CuPy / imgpu.Array inputs, stream=, out=, torchvision)
#   resize    imgpu-bench-resize (kernels vs NPP) and bench/resize_torch.py (vs torchvision)
#   tone      imgpu-bench --ops tone: levels, normalize (luminance, per channel), autolevel
#             through the CUDA run table beside a device copy of the same buffer, 4K and 8K,
#             gray and RGB, 8 and 16 bits
#   chain     bench/chain_profile.py --n N (128): issue 27's decode -> equalize -> encode chain
#             taken apart (each stage alone, the two side by side, the chain and variants: 2 decode
#             threads, equalize on the encode thread), per-thread CPU, GIL probe, NVML (~60 s)
#   resize_batch  bench/resize_batch.sh: imgpu batch --resize --fit 1920x1080 over BENCH_N 4K
#             JPEGs vs an all-core OpenCV loop and vipsthumbnail (.gpuvips, when carried)
#   dask      bench/dask_bench.py --n BENCH_N --device cuda, 1 worker and one a GPU, 3 runs each,
#             inputs and outputs in /dev/shm (issue 29; Debian's Dask from .gpu, as tests/device.sh
#             links it), then the same with IMGPU_NVJPEG_CPU_FIRST=0
#   auto      bench/auto_single.sh build-gpu/imgpu AUTO_RUNS (31) over AUTO_SIZES (1080p): the
#             small cases of issue 30's `auto` target, with each case's middle half
# BENCH_PARTS (default the first six) picks; BENCH_N the JPEG count (BENCH_CHAIN_N for chain). Issue 28's round, ~3 min
# with the build on a fresh machine (one call, carry [".gpu", ".gpuvips"]):
#   BENCH_PARTS="resize tone resize_batch" bash bench/gpu_round.sh
# build-gpu is configured and built first when it is missing (as tests/device.sh does).
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
. .gpu/device-env.sh > /dev/null 2>&1
export LIBRARY_PATH
t0=$SECONDS
if [ ! -f build-gpu/build.ninja ]; then
  GPU_PREFIX=${GPU_PREFIX:-/tmp/gpu-prefix}
  for d in "$GPU_PREFIX/usr/share/pkgconfig" "$GPU_PREFIX/usr/lib/x86_64-linux-gnu/pkgconfig"; do
    PKG_CONFIG_PATH=$d${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  done
  export PKG_CONFIG_PATH
  cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH="$GPU_PREFIX/usr" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DIMGPU_PYTHON3="$(command -v python3)" > "$OUT/bench-build.log" 2>&1
fi
cmake --build build-gpu >> "$OUT/bench-build.log" 2>&1 || { tail -20 "$OUT/bench-build.log"; echo "gpu_round: build failed"; exit 1; }
echo "gpu_round: build in $((SECONDS - t0)) s"
parts=${BENCH_PARTS:-decode python latency oplat first resize}
n=${BENCH_N:-500}
for p in $parts; do
  t0=$SECONDS
  case $p in
    decode) timeout 240 bash bench/decode_profile.sh build-gpu 200 > "$OUT/decode.log" 2>&1 ;;
    python) PYTHONPATH=build-gpu/python timeout 300 python3 bench/python_bench.py --n "$n" > "$OUT/python.log" 2>&1 ;;
    cpu1) IMGPU_CPU_THREADS=1 PYTHONPATH=build-gpu/python timeout 300 python3 bench/python_bench.py --only cpu \
            --cpu-time > "$OUT/cpu1.log" 2>&1 ;;
    latency) timeout 120 build-gpu/imgpu-bench --sizes 4k --channels 3 --contents photo --ops equalize,rotate,clahe \
               > "$OUT/latency.log" 2>&1 ;;
    oplat) PYTHONPATH=build-gpu/python timeout 120 python3 bench/op_latency.py > "$OUT/oplat.log" 2>&1 ;;
    first) PYTHONPATH=build-gpu/python timeout 120 python3 bench/first_op.py > "$OUT/first.log" 2>&1 ;;
    resize) { timeout 90 build-gpu/imgpu-bench-resize; echo;
              PYTHONPATH=build-gpu/python timeout 120 python3 bench/resize_torch.py; } > "$OUT/resize.log" 2>&1 ;;
    tone) timeout 90 build-gpu/imgpu-bench --ops tone --sizes 4k,8k --channels 1,3 --contents photo --depths 8,16 \
            > "$OUT/tone.log" 2>&1 ;;
    chain) PYTHONPATH=build-gpu/python timeout 150 python3 bench/chain_profile.py --n "${BENCH_CHAIN_N:-128}" \
             > "$OUT/chain.log" 2>&1 ;;
    resize_batch) timeout 150 bash bench/resize_batch.sh build-gpu/imgpu "$n" 3 > "$OUT/resize_batch.log" 2>&1 ;;
    dask) dpp=$(sh tests/python/dask_pythonpath.sh "${GPU_PREFIX:-/tmp/gpu-prefix}/usr/lib/python3/dist-packages" \
                python3 2> "$OUT/dask_path.log")
          ng=$(nvidia-smi -L 2>/dev/null | wc -l); w=1; [ "$ng" -gt 1 ] && w=1,$ng
          for first in default 0; do
            env $([ $first = 0 ] && echo IMGPU_NVJPEG_CPU_FIRST=0) DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False \
              PYTHONPATH="$dpp:build-gpu/python" timeout 200 python3 bench/dask_bench.py --n "$n" --device cuda \
              --workers "$w" --repeat 3 --work /dev/shm/dask > "$OUT/dask_first_$first.log" 2>&1
          done ;;
    auto) SIZES=${AUTO_SIZES:-1080p} timeout 300 bash bench/auto_single.sh build-gpu/imgpu "${AUTO_RUNS:-31}" \
            > "$OUT/auto.log" 2>&1 ;;
    *) echo "gpu_round: unknown part '$p'"; false ;;
  esac
  echo "gpu_round: $p rc $? in $((SECONDS - t0)) s"
done

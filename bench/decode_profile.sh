#!/usr/bin/env bash
# bench/decode_profile.sh [BUILD] [N] — bench/decode_profile.c on the GPU machine: N (200) of
# bench/python_bench.py's 4K q92 JPEGs (written once under $BENCH_DIR, default /tmp/dprof),
# through nvJPEG's engines alone, the issue-25 walk, the route and imgpu_context_decode_batch,
# at batches of 16 and 32 (issue 27: where decode_batch's time goes).
set -eu
build=${1:-build-gpu}; n=${2:-200}
d=${BENCH_DIR:-/tmp/dprof}
here=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
PYTHONPATH="$here" python3 -c 'import sys, python_bench; python_bench.write_jpegs(int(sys.argv[1]), sys.argv[2])' "$n" "$d"
cc -O2 -std=c17 -D_POSIX_C_SOURCE=200809L "$here/decode_profile.c" "$here/../src/io/jpeg_scan.c" -I"$build/include" -I"$here/../src/io" -I"$cuda/include" \
   -L"$build/lib" -limgpu -L"$cuda/lib64" -lnvjpeg -lcudart -Wl,-rpath,"$(cd "$build/lib" && pwd)" \
   -Wl,-rpath,"$cuda/lib64" -Wl,-rpath-link,${GPU_PREFIX:-/tmp/gpu-prefix}/usr/lib/x86_64-linux-gnu -L${GPU_PREFIX:-/tmp/gpu-prefix}/usr/lib/x86_64-linux-gnu -o "$d/decode_profile"
for b in 16 32; do
  "$d/decode_profile" "$b" $(ls "$d"/*.jpg | head -n "$n")
done

#!/usr/bin/env bash
# bench/gpu_scale.sh [IMGPU] [N] — issue 29's 2-GPU question without Dask: does this host run two
# GPUs' batches at twice one's pace? N (500) 4K q92 JPEGs (bench/dask_bench.py's inputs, made once
# under $SCALE_DIR, default /dev/shm/gpuscale: memory, no disk in the way), `imgpu batch --equalize
# --device cuda`, outputs to memory too; wall time of whole commands and the batch's own profile
# (IMGPU_BATCH_PROFILE=1: thread-seconds a stage), each case twice (the second counts; the page
# cache warm):
#   one      one process, GPU 0, every core (--jobs = cores)
#   two      two processes at once, --shard 1/2 on GPU 0 and 2/2 on GPU 1, half the cores each
#   two@0    the same two processes, both on GPU 0 (the host's share of any shortfall)
#   half     one process, --shard 1/2, GPU 0, half the cores (what each of `two` would do alone)
set -u
IMG=$(readlink -f "${1:-build-gpu/imgpu}"); N=${2:-500}
D=${SCALE_DIR:-/dev/shm/gpuscale}; IN=$D/in; mkdir -p "$IN"
HERE=$(cd "$(dirname "$0")" && pwd)
C=$(nproc); H=$((C / 2))
PYTHONPATH=$HERE python3 -c "
import sys, dask_bench
from multiprocessing import Pool
with Pool($C) as p: p.map(dask_bench.make, [(i, '$IN', 3840, 2160) for i in range($N)])" || exit 1
export IMGPU_BATCH_PROFILE=1 IMGPU_NVJPEG_CPU_FIRST=${IMGPU_NVJPEG_CPU_FIRST:-64}
run() {   # run NAME GPU JOBS SHARD -> prints the wall seconds; logs in $D/NAME.log
    local name=$1 gpu=$2 jobs=$3 shard=$4
    rm -rf "$D/out_$name"
    IMGPU_CUDA_DEVICE=$gpu "$IMG" batch --equalize --device cuda --jobs "$jobs" ${shard:+--shard "$shard"} \
        -o "$D/out_$name" "$IN" > "$D/$name.log" 2>&1
}
t() { local s=$(date +%s.%N); "$@"; awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $s}"; }
echo "gpu_scale: $N files; $C cores; $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
for pass in 1 2; do
    one=$(t run one 0 "$C" "")
    half=$(t run half 0 "$H" 1/2)
    two=$(t bash -c "$(declare -f run); D=$D IMG=$IMG IN=$IN; run two_a 0 $H 1/2 & run two_b 1 $H 2/2 & wait")
    two0=$(t bash -c "$(declare -f run); D=$D IMG=$IMG IN=$IN; run two0_a 0 $H 1/2 & run two0_b 0 $H 2/2 & wait")
    echo "pass $pass: one ${one} s ($(awk "BEGIN{printf \"%.0f\", $N / $one}") img/s); half (250 files, GPU 0, $H jobs) ${half} s;" \
         "two GPUs at once ${two} s ($(awk "BEGIN{printf \"%.0f\", $N / $two}") img/s, $(awk "BEGIN{printf \"%.2f\", $one / $two}")x one);" \
         "two on GPU 0 ${two0} s"
done
# in one process (imgpu.batch, the Python module beside IMGPU): the first run pays the start-up,
# the next ones show what a resident context leaves
PYTHONPATH=$(dirname "$IMG")/python python3 - "$IN" "$D/out_py" "$C" <<'PYEOF' 2> "$D/py.log"
import os, shutil, sys, time, imgpu
for r in range(3):
    shutil.rmtree(sys.argv[2], ignore_errors=True)
    t = time.perf_counter()
    s = imgpu.batch([sys.argv[1]], sys.argv[2], ops=["equalize"], device="cuda", jobs=int(sys.argv[3]))
    print("py run %d: imgpu.batch in one process %.2f s (%d done)" % (r + 1, time.perf_counter() - t, len(s["done"]) if isinstance(s["done"], list) else s["done"]))
PYEOF
grep -E "profile" "$D/py.log" | sed 's/^/py: /'
for f in one half two_a two_b two0_a two0_b; do echo "$f: $(grep -E 'done,|profile' "$D/$f.log" | tr '\n' ' ')"; done

#!/bin/bash
# nvjpeg_batch.sh [IMGPU] [N] [PY] — issue 17's batch target on the GPU machine: N (500) different
# 4K q92 4:2:0 JPEG photos -> JPEG, for equalize, CLAHE and equalize + rotate 15, with
#   imgpu batch (default device: the GPU stage, nvJPEG decode and encode where built in),
#   imgpu batch --device cpu (libjpeg-turbo and the CPU backend on every core),
#   an all-core OpenCV loop doing the same work (bench/batch_opencv.py --jpg, one process a core),
# each the wall time of the whole command after a warm-up read of the inputs (page cache), and
# the floor: reading every input and writing the same bytes back (cat), which no tool can beat.
# Inputs are made once under $BENCH_DIR (default /tmp/nvjb): bench/batch_make_inputs.py's 4K
# photos as PNG, then cv2.imwrite q92 (libjpeg-turbo: 4:2:0).
IMG=${1:-build-gpu/imgpu}; N=${2:-500}; PY=${3:-python3}
D=${BENCH_DIR:-/tmp/nvjb}
mkdir -p "$D/png" "$D/jpg"
"$PY" bench/batch_make_inputs.py "$N" "$D/png" || exit 1
"$PY" - "$D/png" "$D/jpg" <<'PYEOF' || exit 1
import os, sys, cv2
from multiprocessing import Pool
src, out = sys.argv[1], sys.argv[2]
def one(f):
    d = os.path.join(out, f[:-4] + ".jpg")
    if not os.path.exists(d):
        cv2.imwrite(d, cv2.imread(os.path.join(src, f)), [cv2.IMWRITE_JPEG_QUALITY, 92])
with Pool(os.cpu_count()) as p:
    p.map(one, sorted(f for f in os.listdir(src) if f.endswith(".png")))
PYEOF
echo "inputs: $(ls "$D/jpg" | wc -l) JPEGs, $(du -sm "$D/jpg" | cut -f1) MB; $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
cat "$D"/jpg/*.jpg > /dev/null
t() { local s; s=$(date +%s.%N); "$@" > "$D/last.log" 2>&1; local rc=$?; awk "BEGIN{printf \"%.3f\", $(date +%s.%N) - $s}"; [ $rc = 0 ] || echo -n " (rc $rc: $(tail -1 "$D/last.log"))"; }
rm -rf "$D/copy"; mkdir -p "$D/copy"
echo "floor (cat in -> out, $N files): $(t sh -c "for f in $D/jpg/*.jpg; do cat \$f > $D/copy/\${f##*/}; done") s"
for c in "equalize|--equalize" "clahe|--clahe" "eqrot|--equalize --rotate 15 --expand"; do
  name=${c%%|*}; ops=${c#*|}
  rm -rf "$D/o_gpu" "$D/o_cpu" "$D/o_cv"
  g=$(IMGPU_BATCH_PROFILE=1 t "$IMG" batch $ops -o "$D/o_gpu" "$D/jpg"); gs=$(grep "JPEG (nvJPEG)\|profile" "$D/last.log")
  cp=$(IMGPU_BATCH_PROFILE=1 t "$IMG" batch $ops --device cpu -o "$D/o_cpu" "$D/jpg"); cs=$(grep "profile" "$D/last.log")
  cv=$(t "$PY" bench/batch_opencv.py "$D/jpg" "$D/o_cv" --jpg --op "$name")
  echo "$name: imgpu (GPU) $g s, imgpu --device cpu $cp s, OpenCV loop $cv s; speed-up vs OpenCV: $(awk "BEGIN{printf \"%.2f\", $cv / $g}")x"
  echo "$gs" | sed 's/^/  GPU: /'; echo "  CPU: $cs"
  # the set-up rule (IMGPU_NVJPEG_CPU_FIRST: JPEGs decoded on the CPU while nvJPEG sets up;
  # default 4 per decode thread); 0 = every JPEG waits for nvJPEG, as before the rule
  for k in ${CPU_FIRST_SWEEP:-0 128 256}; do
    rm -rf "$D/o_gpu"
    echo "  GPU, IMGPU_NVJPEG_CPU_FIRST=$k: $(IMGPU_NVJPEG_CPU_FIRST=$k t "$IMG" batch $ops -o "$D/o_gpu" "$D/jpg") s"
  done
done
# small batches: the first N inputs; below the rule's count nvJPEG is never set up
for n in ${SMALL_BATCHES:-1 16 64}; do
  rm -rf "$D/small" "$D/o_s"; mkdir -p "$D/small" "$D/o_s"
  ls "$D"/jpg/*.jpg | head -n "$n" | xargs -I{} ln {} "$D/small/"
  echo "small batch of $n, equalize: imgpu (GPU, default) $(t "$IMG" batch --equalize -o "$D/o_s/g" "$D/small") s," \
    "IMGPU_NVJPEG_CPU_FIRST=0 $(IMGPU_NVJPEG_CPU_FIRST=0 t "$IMG" batch --equalize -o "$D/o_s/z" "$D/small") s," \
    "--device cpu $(t "$IMG" batch --equalize --device cpu -o "$D/o_s/c" "$D/small") s," \
    "OpenCV loop $(t "$PY" bench/batch_opencv.py "$D/small" "$D/o_s/cv" --jpg --op equalize) s"
done

#!/bin/bash
# nvjpeg_memory.sh [IMGPU] [PY] — issue 17: device and host memory of `imgpu batch --equalize`
# with nvJPEG over 1,000 and 10,000 JPEGs (JPEG -> JPEG). The inputs are hard links to 40
# different photos (1920x1080 q92 4:2:0, and 24 other sizes so nvJPEG's buffers grow and are
# reused), so 10,000 inputs cost no disk. Device memory: nvidia-smi's memory.used every 100 ms
# during the run (the GPU runs nothing else); host: the peak RSS (getrusage of the child). Flat
# means: the peak of the 10,000-image run equals the 1,000-image run's, and the samples of the
# last 90% of the run do not rise.
IMG=${1:-build-gpu/imgpu}; PY=${2:-python3}
D=${BENCH_DIR:-/tmp/nvjm}
rm -rf "$D"; mkdir -p "$D/src"
"$PY" - "$D/src" <<'PYEOF' || exit 1
import sys, cv2, numpy as np
rng = np.random.default_rng(7)
for k in range(40):
    w, h = (1920, 1080) if k < 16 else (int(rng.integers(64, 2400)), int(rng.integers(64, 2400)))
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), ((x * 3 + y + 40 * k) % 256)], -1)
    img = (img.astype(np.float32) * (0.5 + 0.5 * (k % 3) / 2)).astype(np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), 2) + rng.integers(0, 6, img.shape, dtype=np.uint8)
    cv2.imwrite(f"{sys.argv[1]}/p{k:02d}.jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 92])
PYEOF
for n in 1000 10000; do
  rm -rf "$D/in" "$D/out"; mkdir -p "$D/in"
  for i in $(seq 0 $((n - 1))); do ln "$D/src/p$(printf %02d $((i % 40))).jpg" "$D/in/$(printf %05d $i).jpg"; done
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$D/mem_$n.txt" &
  smi=$!
  sleep 0.5
  s=$(date +%s.%N)
  "$PY" -c "import resource, subprocess, sys
r = subprocess.run(sys.argv[1:])
print('peak RSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, 'KB', file=sys.stderr)
sys.exit(r.returncode)" "$IMG" batch --equalize -o "$D/out" "$D/in" > "$D/log_$n.txt" 2>&1
  rc=$?
  e=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $s}")
  sleep 0.3; kill $smi; wait $smi 2>/dev/null
  "$PY" - "$D/mem_$n.txt" "$n" "$e" "$rc" <<'PYEOF'
import sys
v = [int(x) for x in open(sys.argv[1]).read().split() if x.strip().isdigit()]
base = v[0]
run = [x - base for x in v]
k = max(1, len(run) // 10)
peak = max(run)
print(f"{sys.argv[2]} images: rc {sys.argv[4]}, {sys.argv[3]} s; device memory above idle: peak {peak} MiB;"
      f" at 10% of the run {run[k]} MiB, max over the last 90% {max(run[k:])} MiB, at the end of the run"
      f" {run[-4] if len(run) > 4 else run[-1]} MiB ({len(run)} samples)")
PYEOF
  grep -E "peak RSS|imgpu batch: [0-9]+ done|JPEG \(nvJPEG\)" "$D/log_$n.txt" | sed 's/^/  /'
done

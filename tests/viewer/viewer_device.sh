#!/bin/bash
# tests/viewer/viewer_device.sh — the viewer on the GPU machine (../shared/GPU.md), one command:
#   run with carry [".gpux"] (fetch-debs.sh .gpux --with-x: Xvfb and Mesa too):
#   bash tests/viewer/viewer_device.sh
# Builds build-gpu, runs the viewer tests (EGL + CUDA-GL interop; a GLFW window on NVIDIA's GLX
# under Xvfb), times 8K RGB frames with --frames/--stats, checks the 8K snapshot against the
# CLI, runs a snapshot under compute-sanitizer, and leaves logs and pictures in $OUT.
set -u
OUT=${OUT:-/tmp/viewer-out}
mkdir -p "$OUT"
. .gpux/device-env.sh > "$OUT/env.log" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH="$GPU_PREFIX/usr" -DCMAKE_CUDA_ARCHITECTURES=90 \
  > "$OUT/build.log" 2>&1
cmake --build build-gpu >> "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -30; exit 1; }
B=build-gpu
ctest --test-dir $B -L viewer --output-on-failure > "$OUT/ctest_viewer.log" 2>&1
grep -E "Test +#|tests passed|checks" "$OUT/ctest_viewer.log"
python3 - <<'PY'
import cv2
im = cv2.imread("assets/coffee.png")
cv2.imwrite("/tmp/8k.png", cv2.resize(im, (7680, 4320), interpolation=cv2.INTER_CUBIC), [cv2.IMWRITE_PNG_COMPRESSION, 1])
PY
for ops in "--equalize --rotate 30" "--equalize --rotate 30 --histogram" "--equalize --rotate 30 --filter bicubic" \
           "--rotate 30" "--equalize" "" "--equalize --rotate 30 --no-interop"; do
  echo "== 8K RGB: ${ops:-no ops}"
  $B/imgpu-view /tmp/8k.png --snapshot /tmp/8k_snap.png --context egl --frames 200 --stats $ops 2>&1 | grep -v "^display"
done
$B/imgpu equalize /tmp/8k.png /tmp/8k_e.png --quiet && $B/imgpu rotate /tmp/8k_e.png /tmp/8k_r.png --angle 30 --force --quiet &&
  $B/imgpu-view /tmp/8k.png --snapshot /tmp/8k_s.png --equalize --rotate 30 --context egl --stats | head -1 &&
  $B/imgpu compare /tmp/8k_s.png /tmp/8k_r.png --max-abs 0 | grep -E "max abs|differing"
printf 'key e\nkey h\nkey v\nkey ?\nkey q\n' > /tmp/w.txt
$B/imgpu-view assets/chelsea.png --events /tmp/w.txt --window 900x600 --screenshot "$OUT/window_nvidia.png" --stats
$B/imgpu-view assets/coffee.png --snapshot "$OUT/view_egl.png" --size 960x640 --equalize --rotate 20 --histogram --context egl
compute-sanitizer --tool memcheck --leak-check no $B/imgpu-view assets/coffee.png --snapshot /tmp/cs.png --equalize \
  --rotate 17 --histogram --context egl --frames 3 > "$OUT/memcheck.log" 2>&1; tail -3 "$OUT/memcheck.log"

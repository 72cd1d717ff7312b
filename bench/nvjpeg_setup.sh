#!/usr/bin/env bash
# bench/nvjpeg_setup.sh — nvJPEG's fixed start-up, step by step (bench/nvjpeg_setup.c), on the GPU
# machine: each order of creating the handles, 3 fresh processes each, with CUDA's lazy module
# loading (the default) and eager. Usage: bash bench/nvjpeg_setup.sh [OUTDIR]
set -eu
out=${1:-/tmp/nvjpeg-setup}
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
gcc -O2 -std=c17 -I"$cuda/include" "$(dirname "$0")/nvjpeg_setup.c" -L"$cuda/lib64" -lnvjpeg -lcudart \
    -lpthread -Wl,-rpath,"$cuda/lib64" -o "$out/nvjpeg_setup"
python3 -c "
import cv2, numpy as np
rng = np.random.default_rng(1)
y, x = np.mgrid[0:2160, 0:3840]
img = np.stack([(x * 255 // 3839), (y * 255 // 2159), ((x + y) % 256)], -1).astype(np.uint8)
img = cv2.GaussianBlur(img, (0, 0), 3) + rng.integers(0, 8, img.shape, dtype=np.uint8)
cv2.imwrite('$out/4k.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, 92])"
for loading in LAZY EAGER; do
  for mode in serial hw-first parallel; do
    for r in 1 2 3; do
      echo "== $loading $mode run $r"
      CUDA_MODULE_LOADING=$loading "$out/nvjpeg_setup" "$out/4k.jpg" $mode
    done
  done
done

#!/bin/bash
# bench/tune_sweep.sh — the sweeps behind the numbers in kernels/tuning.h, on the GPU machine:
#   bash bench/device.sh bash ../bench/tune_sweep.sh      (runs inside build-gpu)
# Each line is one `imgpu bench` row (throughput us = median of CUDA-event times over inputs
# rotated past the L2) under one setting of the run-time overrides tuning.h names.
set -u
B=./imgpu-bench
sel() { grep -E "$1" | sed 's/^/  /'; }

echo "## rotate 30 bilinear, 8K gray, texture resident: thread layouts"
for bx in 32 16 8; do
  echo "rows layout, IMGPU_ROT_BX=$bx"
  IMGPU_ROT_LAYOUT=0 IMGPU_ROT_BX=$bx $B --sizes 8k --channels 1 --contents photo --ops rotate |
    sel 'rotate 30 bilinear \| imgpu tex2D, (CUDA array|pitched)'
done
for wx in 1 2 4 8; do
  echo "warp-tile layout, IMGPU_ROT_WX=$wx"
  IMGPU_ROT_LAYOUT=1 IMGPU_ROT_WX=$wx $B --sizes 8k --channels 1,3 --contents photo --ops rotate |
    sel 'rotate 30 bilinear \| imgpu tex2D, (CUDA array|pitched)'
done

echo "## fused equalize: on-chip against two-pass (photo and noise, gray and RGB)"
$B --sizes 1080p,4k,8k --channels 1,3 --contents photo,noise --ops equalize | sel 'copy|equalize.*fused'

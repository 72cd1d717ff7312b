#!/usr/bin/env bash
# bench/gpu_agree.sh BUILD OUTDIR — on the GPU machine: does each op's CUDA result equal the CPU
# reference on the bundled photos and a 16-bit RGB image? One line per case (imgpu compare's
# verdict), for the issue-18 viewer checks that found rotate 30 (8-bit RGB) and 16-bit RGB ops
# differing. Rotation is also run with each thread layout (IMGPU_ROT_LAYOUT=0/1).
set -u
b=${1:?usage: gpu_agree.sh BUILD OUTDIR}; o=${2:?}; mkdir -p "$o"
py=$(command -v python3)
$py - "$o" <<'PY'
import sys, numpy as np, cv2
o = sys.argv[1]
y, x = np.mgrid[0:300, 0:420]
img = np.stack([(x * 150 + y * 7) % 65536, (y * 211) % 65536, ((x ^ y) * 97) % 65536], -1).astype(np.uint16)
cv2.imwrite(f"{o}/c16.png", img)
cv2.imwrite(f"{o}/g16.png", img[:, :, 1])
PY
cmp_one() {  # name, args...
  local name=$1; shift
  "$b/imgpu" "$@" "$o/cpu.png" --device cpu --quiet 2>"$o/err" || { echo "$name: cpu failed $(cat "$o/err")"; return; }
  env $ENVV "$b/imgpu" "$@" "$o/gpu.png" --device cuda --quiet 2>"$o/err" || { echo "$name: cuda failed $(cat "$o/err")"; return; }
  echo "$name ${ENVV:-}: $("$b/imgpu" compare "$o/cpu.png" "$o/gpu.png" 2>&1 | tr '\n' ' ')"
}
for img in assets/coffee.png assets/chelsea.png "$o/c16.png" "$o/g16.png"; do
  n=$(basename "$img")
  for ENVV in "" IMGPU_ROT_LAYOUT=0 IMGPU_ROT_LAYOUT=1; do
    for f in bilinear bicubic nearest; do
      cmp_one "$n rotate 30 $f" rotate "$img" --angle 30 --filter $f --force
      cmp_one "$n rotate 17 $f crop" rotate "$img" --angle 17 --filter $f --crop --force
    done
  done
  ENVV=""
  cmp_one "$n equalize" equalize "$img"
  cmp_one "$n equalize per-channel" equalize "$img" --mode per-channel
  cmp_one "$n clahe" clahe "$img"
  cmp_one "$n clahe per-channel" clahe "$img" --mode per-channel --clip 2.5 --tiles 5x3
done

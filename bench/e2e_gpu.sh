#!/bin/bash
# bench/e2e_gpu.sh IMGPU [RUNS] — on the GPU machine: end-to-end `imgpu equalize` of a 4K PNG
# photo (decode, equalize, encode) and the share of its wall time spent in the GPU part
# (pinned staging, upload, kernels, download: IMGPU_STATS=1 prints it). Medians of RUNS.
set -euo pipefail
imgpu=$1; runs=${2:-9}
dir=$(mktemp -d)
here=$(cd "$(dirname "$0")/.." && pwd)
python3 - "$here/assets/astronaut.png" "$dir/photo4k.png" <<'PY'
import sys, cv2
im = cv2.imread(sys.argv[1], cv2.IMREAD_COLOR)
big = cv2.resize(im, (3840, 2160), interpolation=cv2.INTER_CUBIC)
cv2.imwrite(sys.argv[2], big)
PY
for dev in cuda cpu; do
  tot=(); gpu=()
  for i in $(seq "$runs"); do
    s=$(date +%s%N)
    g=$(IMGPU_STATS=1 "$imgpu" equalize "$dir/photo4k.png" "$dir/out_$dev.png" --device $dev 2>&1 | sed -n 's/.*gpu part.*: \([0-9.]*\) ms/\1/p')
    e=$(date +%s%N)
    tot+=($(( (e - s) / 1000 ))); gpu+=("${g:-0}")
  done
  mt=$(printf '%s\n' "${tot[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  mg=$(printf '%s\n' "${gpu[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
  echo "device $dev: end-to-end median $(awk "BEGIN{printf \"%.1f\", $mt/1000}") ms; gpu part median $mg ms ($(awk "BEGIN{printf \"%.2f\", 100*$mg*1000/$mt}")% of wall)"
done
"$imgpu" compare "$dir/out_cuda.png" "$dir/out_cpu.png" --max-abs 0 | head -2
rm -rf "$dir"

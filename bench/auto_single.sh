#!/bin/bash
# bench/auto_single.sh IMGPU [RUNS] [PY] — issue 17's single-image target on the GPU machine:
# `imgpu` with the default `--device auto` against `--device cpu` and `--device cuda`, wall time
# of whole commands (median of RUNS, default 5; the three devices interleaved run by run, after
# one warm-up of each, so drift and the page cache treat them alike; the order turns run by run), for 1080p / 4K / 8K photos (assets/astronaut.png
# scaled up by cv2) as PNG and as q92 JPEG, equalize / CLAHE / rotate 30 bicubic, each written
# to the input's format. Target: auto within 5% of the faster of the other two. Also OpenCV's
# Python one-liner (imread, YCrCb equalizeHist on Y, imwrite q92) on the 4K JPEG.
set -u
IMG=$(readlink -f "${1:-build-gpu/imgpu}"); RUNS=${2:-5}; PY=${3:-python3}
D=${AUTO_BENCH_DIR:-/tmp/autob}; mkdir -p "$D"
HERE=$(cd "$(dirname "$0")/.." && pwd)
"$PY" - "$HERE/assets/astronaut.png" "$D" <<'PYEOF' || exit 1
import sys, cv2
im = cv2.imread(sys.argv[1], cv2.IMREAD_COLOR)
for name, (w, h) in {"1080p": (1920, 1080), "4k": (3840, 2160), "8k": (7680, 4320)}.items():
    big = cv2.resize(im, (w, h), interpolation=cv2.INTER_CUBIC)
    cv2.imwrite(f"{sys.argv[2]}/{name}.png", big)
    cv2.imwrite(f"{sys.argv[2]}/{name}.jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 92])
PYEOF
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# the spread of a case's runs: "q1-q3" (the middle half), to tell a cost from the machine's noise
iqr() { sort -n | awk '{a[NR]=$1} END {q1=a[int((NR+3)/4)]; q3=a[int((3*NR+3)/4)]; printf "%s-%s", q1, q3}'; }
# one run's seconds; a failed run (no GPU for --device cuda) counts as 999, so it never wins
t() { local s; s=$(date +%s.%N); if "$@" > "$D/last.log" 2>&1; then awk "BEGIN{printf \"%.4f\n\", $(date +%s.%N) - $s}"; else echo 999; fi; }
echo "$(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); commit $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null); $(date -u +%F)"
printf "%-6s %-4s %-9s %8s %8s %8s  %s\n" size fmt op auto cpu cuda "auto vs the faster"
worst=0
# SIZES (default "1080p 4k 8k") and FMTS (default "png jpg") pick the cases: e.g. SIZES=1080p
# with RUNS=31 for the small cases, whose 3-5 ms differences need many runs. "paired" is the
# median over the rounds of auto's time / the faster backend's in the same round (the three
# devices run back to back each round), which the machine's drift from round to round leaves out
for size in ${SIZES:-1080p 4k 8k}; do
  for fmt in ${FMTS:-png jpg}; do
    for op in equalize clahe rotate; do
      case $op in
        equalize) args=(equalize);;
        clahe) args=(clahe);;
        rotate) args=(rotate --angle 30 --filter bicubic);;
      esac
      declare -A m=() runs=()
      one() { t "$IMG" "${args[@]:0:1}" "$D/$size.$fmt" "$D/o.$fmt" "${args[@]:1}" --device "$1"; }
      for dev in auto cpu cuda; do one $dev > /dev/null; done   # warm-up
      # the order turns run by run (auto cpu cuda, cpu cuda auto, cuda auto cpu, ...): each device
      # follows each other alike, so none always starts while a --device cuda process before it
      # is still tearing its context down
      order=(auto cpu cuda)
      for r in $(seq "$RUNS"); do
        for k in 0 1 2; do dev=${order[$(( (r + k) % 3 ))]}; runs[$dev]+="$(one $dev) "; done
      done
      for dev in auto cpu cuda; do m[$dev]=$(echo ${runs[$dev]} | tr ' ' '\n' | med); done
      best=$(awk "BEGIN{print (${m[cpu]} < ${m[cuda]}) ? ${m[cpu]} : ${m[cuda]}}")
      ratio=$(awk "BEGIN{printf \"%.3f\", ${m[auto]} / $best}")
      fast=cpu; awk "BEGIN{exit !(${m[cuda]} < ${m[cpu]})}" && fast=cuda
      paired=$(paste <(echo ${runs[auto]} | tr ' ' '\n') <(echo ${runs[$fast]} | tr ' ' '\n') |
               awk 'NF == 2 {printf "%.4f\n", $1 / $2}' | med)
      printf "%-6s %-4s %-9s %8s %8s %8s  %s  paired %sx  (middle half: auto %s, cpu %s)\n" $size $fmt $op ${m[auto]} \
        ${m[cpu]} ${m[cuda]} "${ratio}x" "$paired" "$(echo ${runs[auto]} | tr ' ' '\n' | iqr)" \
        "$(echo ${runs[cpu]} | tr ' ' '\n' | iqr)"
      worst=$(awk "BEGIN{print ($ratio > $worst) ? $ratio : $worst}")
    done
  done
done
echo "worst auto / faster: ${worst}x (target <= 1.05)"
cv=$(for r in $(seq "$RUNS"); do t "$PY" -c "
import cv2, sys
im = cv2.imread('$D/4k.jpg'); y = cv2.cvtColor(im, cv2.COLOR_BGR2YCrCb)
y[:, :, 0] = cv2.equalizeHist(y[:, :, 0])
cv2.imwrite('$D/cv.jpg', cv2.cvtColor(y, cv2.COLOR_YCrCb2BGR), [cv2.IMWRITE_JPEG_QUALITY, 92])"; done | med)
echo "4K JPEG equalize: OpenCV Python one-liner $cv s"

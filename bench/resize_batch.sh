#!/usr/bin/env bash
# bench/resize_batch.sh — issue 28's end-to-end resize ("Speed"): `imgpu batch --resize --fit
# 1920x1080 --filter area` over N 4K q92 4:2:0 JPEGs, against an all-core OpenCV loop
# (bench/batch_opencv.py --op resize: imread, cv2.resize INTER_AREA, imwrite q92, one process a
# core) and vipsthumbnail (-s 1920x1080, Q=92; VIPS_CONCURRENCY=1 processes, one a core, 16 files
# each) over the same files. Wall time of whole commands, median of RUNS; every output folder
# is checked after every run (N files, each 1920x1080, from the JPEG headers).
#   bash bench/resize_batch.sh [IMGPU] [N] [RUNS] [PYTHON]
# Defaults: build-gpu/imgpu if built, else build/imgpu; N 500; RUNS 3; a python3 with cv2 (the
# PATH's if it imports cv2, else /usr/bin/python3). Rows: imgpu --device cuda (when nvidia-smi
# sees a GPU), imgpu --device cpu, the OpenCV loop, vipsthumbnail. vips: the PATH's
# vipsthumbnail, else the Debian packages of .gpuvips/ (bench/fetch_vips.sh), unpacked into
# /tmp/gpuvips (with .gpu's codecs from /tmp/gpu-prefix); a library they still lack is named
# and the row skipped (RESIZE_BATCH_VIPS=carried: use them even where vips is installed).
# Inputs: bench/jpeg_inputs.py make (one process a core, ~60 ms a file on one core) into
# $RESIZE_BATCH_DIR (default /tmp/imgpu-resize-batch)/in, kept for the next call.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BIN=${1:-}
if [ -z "$BIN" ]; then
  if [ -x "$ROOT/build-gpu/imgpu" ]; then BIN=$ROOT/build-gpu/imgpu; else BIN=$ROOT/build/imgpu; fi
fi
BIN=$(readlink -f "$BIN"); N=${2:-500}; RUNS=${3:-3}; PY=${4:-}
if [ -z "$PY" ]; then
  if python3 -c "import cv2" 2>/dev/null; then PY=python3; else PY=/usr/bin/python3; fi
fi
W=${RESIZE_BATCH_DIR:-/tmp/imgpu-resize-batch}
IN=$W/in
CORES=$(nproc)
mkdir -p "$W"
[ -x "$BIN" ] || { echo "resize_batch: $BIN: not built"; exit 1; }

s=$(date +%s.%N)
$PY "$HERE/jpeg_inputs.py" make "$N" "$IN" 2>/dev/null || { echo "resize_batch: making the inputs failed"; exit 1; }
# more files than N from an earlier call with a larger N: keep the first N only
ls "$IN" | sort | tail -n +$((N + 1)) | while read -r f; do rm -f "$IN/$f"; done
$PY "$HERE/jpeg_inputs.py" check "$IN" "$N" 3840 2160 || exit 1
echo "resize_batch: $N inputs (3840x2160 q92 4:2:0, $(du -sb "$IN" | cut -f1) bytes) ready in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $CORES cores; GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "imgpu: $BIN ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)); python: $PY; $(date -u +%F)"

# vips: the PATH's, else the carried Debian packages
VT=$(command -v vipsthumbnail || true)
[ "${RESIZE_BATCH_VIPS:-}" = carried ] && VT=""   # the carried packages even where vips is installed
if [ -z "$VT" ] && ls "$ROOT"/.gpuvips/*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/gpuvips
  for f in "$ROOT"/.gpuvips/*.deb; do dpkg -x "$f" /tmp/gpuvips; done
  cp "$ROOT"/.gpuvips/*.so.* /tmp/gpuvips/usr/lib/x86_64-linux-gnu/ 2>/dev/null   # the ICU stub
  # the codecs come from .gpu's prefix (device-env.sh unpacks it into /tmp/gpu-prefix)
  # only for vips's commands (the ICU stub must not reach cv2 or torch)
  VLP=/tmp/gpuvips/usr/lib/x86_64-linux-gnu:/tmp/gpuvips/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  case ":$VLP:" in *:/tmp/gpu-prefix/usr/lib/x86_64-linux-gnu:*) ;;
    *) VLP=$VLP:/tmp/gpu-prefix/usr/lib/x86_64-linux-gnu:/tmp/gpu-prefix/lib/x86_64-linux-gnu ;; esac
  VT=/tmp/gpuvips/usr/bin/vipsthumbnail
  missing=$(LD_LIBRARY_PATH=$VLP ldd "$VT" 2>&1 | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
  if [ -n "$missing" ]; then
    echo "resize_batch: the carried vips lacks: $missing(row skipped)"
    VT=""
  fi
fi
[ -n "$VT" ] && echo "vips: $VT ($(LD_LIBRARY_PATH=${VLP:-${LD_LIBRARY_PATH:-}} "$VT" --vips-version 2>/dev/null | head -1))"

med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# row NAME OUTDIR CMD...: RUNS runs of CMD (OUTDIR emptied before each, untimed), each checked
row() {
  local name=$1 out=$2; shift 2
  local ts=() r s e rc
  for r in $(seq 1 "$RUNS"); do
    rm -rf "$out"; mkdir -p "$out"
    s=$(date +%s.%N)
    "$@" > "$W/last.log" 2>&1; rc=$?
    e=$(date +%s.%N)
    if [ $rc != 0 ]; then
      echo "| $name | FAILED (rc $rc) | | |"; tail -5 "$W/last.log" | sed 's/^/    /'; return
    fi
    if ! $PY "$HERE/jpeg_inputs.py" check "$out" "$N" 1920 1080; then
      echo "| $name | WRONG OUTPUT | | |"; return
    fi
    ts+=("$(awk "BEGIN{print $e - $s}")")
  done
  local m; m=$(printf '%s\n' "${ts[@]}" | med)
  printf '| %s | %.2f | %.1f | %s |\n' "$name" "$m" "$(awk "BEGIN{print $N / $m}")" "$(printf '%s ' "${ts[@]}")"
}

echo
echo "| command ($N 4K JPEGs -> 1920x1080 q92) | wall s (median of $RUNS) | images/s | runs s |"
echo "|---|---:|---:|---|"
IMG=(batch --resize --fit 1920x1080 --filter area --quality 92 --format jpg --quiet)
if nvidia-smi -L >/dev/null 2>&1; then
  row "imgpu batch --device cuda" "$W/out_cuda" "$BIN" "${IMG[@]}" --device cuda -o "$W/out_cuda" "$IN"
fi
row "imgpu batch --device cpu" "$W/out_cpu" "$BIN" "${IMG[@]}" --device cpu -o "$W/out_cpu" "$IN"
row "OpenCV loop, $CORES processes" "$W/out_cv" $PY "$HERE/batch_opencv.py" "$IN" "$W/out_cv" "$CORES" --jpg --op resize
if [ -n "$VT" ]; then
  vips_all() { find "$IN" -name '*.jpg' | sort | LD_LIBRARY_PATH=${VLP:-${LD_LIBRARY_PATH:-}} VIPS_CONCURRENCY=1 xargs -P "$CORES" -n 16 "$VT" -s 1920x1080 -o "$W/out_vips/%s.jpg[Q=92]"; }
  row "vipsthumbnail, $CORES processes" "$W/out_vips" vips_all
else
  echo "| vipsthumbnail | not available here | | |"
fi

#!/bin/bash
# batch_bench.sh IMGPU N RUNS [PYTHON] — `imgpu batch --equalize` on N 4K PNG photos against its
# peers, wall time, runs interleaved, median of RUNS:
#   imgpu batch (default --device)       the pipeline as a user runs it
#   imgpu batch --stage-copy             the same pipeline with the op stage replaced by a plain
#                                        copy: "GPU hidden" means the first within 10 % of this
#   imgpu batch --device cpu             the ops on the CPU reference instead (decode threads)
#   gpueq / copyeq                       the first two again on equalized inputs (the gpu run's
#                                        outputs): an equalized photo deflates to ~18 % more
#                                        bytes, so --stage-copy on the originals also encodes
#                                        less; on equalized inputs both encode the same content
#   one core (taskset -c 0, --jobs 1, --stage-copy)   the single-thread rate of decode + encode
#                                        (every round, median like the rest)
#   OpenCV loop on every core            bench/batch_opencv.py (PNG level 1 + RLE, like imgpu)
#   ImageMagick mogrify -equalize        where /usr/bin/mogrify-im6.q16 exists (one run: slow)
# Inputs are made once by bench/batch_make_inputs.py into $(dirname IMGPU)/bench-batch/in.
set -u
BIN=$(readlink -f "${1:-build/imgpu}"); N=${2:-40}; RUNS=${3:-3}; PY=${4:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
# BATCH_BENCH_DIR: where inputs and outputs go (a tmpfs such as /dev/shm takes the disk's
# writeback out of the timings); default beside the binary
W=${BATCH_BENCH_DIR:-$(dirname "$BIN")/bench-batch}; IN=$W/in
mkdir -p "$W"
$PY "$HERE/batch_make_inputs.py" "$N" "$IN" || exit 1
ls "$IN"/photo_*.png | sort | head -n "$N" > "$W/list"
rm -rf "$W/in_n"; mkdir -p "$W/in_n"; while read -r f; do ln -s "$f" "$W/in_n/"; done < "$W/list"
MB=$(du -LDcb "$W"/in_n/*.png | tail -1 | cut -f1)
CORES=$(nproc)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $CORES cores; $(nvidia-smi -L 2>/dev/null | head -2 | tr '\n' ' ')"
echo "inputs: $N x 3840x2160 RGB PNG, $((MB / 1000000)) MB; commit $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null)"
calc() { awk "BEGIN { print $* }"; }
t() { local s e; s=$(date +%s.%N); "$@" > "$W/last.log" 2>&1; local rc=$?; e=$(date +%s.%N); calc "$e - $s"; return $rc; }
declare -A T
NQ=$(( (N + 3) / 4 )); [ $NQ -gt 16 ] && NQ=16
names="gpu copy cpu onecore opencv"
# BATCH_BENCH_VARIANTS: a subset of "gpu copy gpueq copyeq cpu opencv" (default all; the one-core
# run always)
V=" ${BATCH_BENCH_VARIANTS:-gpu copy gpueq copyeq cpu opencv} "
if [[ $V == *" gpueq "* || $V == *" copyeq "* ]]; then  # equalized inputs, made once
  [ "$(ls "$W/in_eq" 2>/dev/null | wc -l)" -ge "$N" ] || "$BIN" batch --equalize --quiet -o "$W/in_eq" "$W/in_n" || exit 1
fi
for r in $(seq 1 "$RUNS"); do
  [[ $V == *" gpu "* ]] && T[gpu]+=" $(t "$BIN" batch --equalize --overwrite --quiet -o "$W/o_gpu" "$W/in_n")"
  [[ $V == *" copy "* ]] && T[copy]+=" $(t "$BIN" batch --stage-copy --overwrite --quiet -o "$W/o_copy" "$W/in_n")"
  [[ $V == *" gpueq "* ]] && T[gpueq]+=" $(t "$BIN" batch --equalize --overwrite --quiet -o "$W/o_gpueq" "$W/in_eq")"
  [[ $V == *" copyeq "* ]] && T[copyeq]+=" $(t "$BIN" batch --stage-copy --overwrite --quiet -o "$W/o_copyeq" "$W/in_eq")"
  [[ $V == *" cpu "* ]] && T[cpu]+=" $(t "$BIN" batch --equalize --device cpu --overwrite --quiet -o "$W/o_cpu" "$W/in_n")"
  [[ $V == *" opencv "* ]] && T[opencv]+=" $(t $PY "$HERE/batch_opencv.py" "$W/in_n" "$W/o_cv")"
  # one core, on a quarter (at most 16) of the inputs, every round like the others: the
  # throughput target is a ratio to this rate, and one sample of it moved the ratio by 10 %
  if [ "$r" -le 1 ]; then
    rm -rf "$W/in_q"; mkdir -p "$W/in_q"; head -n $NQ "$W/list" | while read -r f; do ln -s "$f" "$W/in_q/"; done
  fi
  T[onecore]+=" $(t taskset -c 0 "$BIN" batch --stage-copy --jobs 1 --overwrite --quiet -o "$W/o_one" "$W/in_q")"
done
med() { echo "$@" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "%-44s %9s %10s %s\n" "command" "median s" "images/s" "runs (s)"
for k in gpu copy gpueq copyeq cpu opencv onecore; do
  [ -n "${T[$k]:-}" ] || continue
  m=$(med ${T[$k]}); n=$N; [ $k = onecore ] && n=$NQ
  printf "%-44s %9.2f %10.3f %s\n" "$k" "$m" "$(calc "$n / $m")" "${T[$k]}"
done
one=$(calc "$NQ / $(med ${T[onecore]})")
echo "single-core decode+encode rate: $(printf %.3f "$one") images/s; target 0.7 x $CORES x that = $(printf %.3f "$(calc "0.7 * $CORES * $one")") images/s"
[ -n "${T[gpu]:-}" ] && [ -n "${T[copy]:-}" ] && echo "GPU stage hidden: batch / stage-copy = $(printf %.3f "$(calc "$(med ${T[gpu]}) / $(med ${T[copy]})")") (target <= 1.10)"
[ -n "${T[gpueq]:-}" ] && [ -n "${T[copyeq]:-}" ] && echo "same content (equalized inputs): batch / stage-copy = $(printf %.3f "$(calc "$(med ${T[gpueq]}) / $(med ${T[copyeq]})")")"
if [ -x /usr/bin/mogrify-im6.q16 ] && [ "${SKIP_MOGRIFY:-0}" != 1 ]; then
  rm -rf "$W/o_im"; mkdir -p "$W/o_im"
  m=$(t /usr/bin/mogrify-im6.q16 -path "$W/o_im" -equalize "$W"/in_n/*.png)
  printf "%-44s %9.2f %10.3f (one run)\n" "mogrify-im6.q16 -equalize" "$m" "$(calc "$N / $m")"
  [ -n "${T[gpu]:-}" ] && echo "imgpu batch vs mogrify: $(printf %.2f "$(calc "$m / $(med ${T[gpu]})")")x"
fi

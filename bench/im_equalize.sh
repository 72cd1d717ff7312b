#!/usr/bin/env bash
# im_equalize.sh — end-to-end `imgpu equalize` of a 4K PNG photo against ImageMagick's
# `convert in.png -equalize out.png`, side by side in one run: wall time of each whole
# command (decode + equalize + encode), median of N runs, the runs of the two tools
# interleaved so drift hits both alike. A figure, not a test.
#
#   bench/im_equalize.sh [IMGPU] [N]        (defaults: build/imgpu, 7)
#
# The input (3840x2160 RGB, made once by bench/make_4k.py from assets/coffee.png with
# cv2.resize INTER_CUBIC) and the outputs go to build-bench/ (git-ignored).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
imgpu=${1:-$root/build/imgpu}
n=${2:-7}
im=/usr/bin/convert-im6.q16   # the real ImageMagick 6 (Debian); /usr/local/bin/convert may be a stand-in
py=/usr/bin/python3           # Debian's python, with cv2
work=$root/build-bench
mkdir -p "$work"
in=$work/coffee_4k.png
[ -x "$imgpu" ] || { echo "im_equalize.sh: no imgpu at $imgpu (build it first)" >&2; exit 2; }
[ -x "$im" ] || { echo "im_equalize.sh: $im not found (apt-get install imagemagick)" >&2; exit 2; }
[ -f "$in" ] || "$py" "$root/bench/make_4k.py" "$root/assets" "$in"

now() { date +%s.%N; }
# time_cmd VAR CMD...: append the wall time of CMD (seconds) to array VAR.
time_cmd() {
    local -n acc=$1
    shift
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>&1 || { echo "im_equalize.sh: failed: $*" >&2; exit 1; }
    t1=$(now)
    acc+=("$(echo "$t1 - $t0" | bc -l)")
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }
minimum() { printf '%s\n' "$@" | sort -g | head -1 | awk '{printf "%.3f", $1}'; }

declare -a t_lum=() t_pc=() t_pc6=() t_im=()
echo "input: $in ($(stat -c %s "$in") bytes); $n runs each, interleaved; warm-up run first"
"$imgpu" equalize "$in" "$work/out_imgpu.png" --quiet >/dev/null 2>&1 || true
"$im" "$in" -equalize "$work/out_im.png"
for ((i = 0; i < n; i++)); do
    time_cmd t_lum "$imgpu" equalize "$in" "$work/out_imgpu_lum.png" --quiet
    time_cmd t_pc "$imgpu" equalize "$in" "$work/out_imgpu_pc.png" --mode per-channel --quiet
    time_cmd t_pc6 "$imgpu" equalize "$in" "$work/out_imgpu_pc6.png" --mode per-channel --png-level 6 --quiet
    time_cmd t_im "$im" "$in" -equalize "$work/out_im.png"
done

m_im=$(median "${t_im[@]}")
row() {  # row LABEL MEDIAN MIN
    printf '| %-58s | %8s | %8s | %6.2fx |\n' "$1" "$2" "$3" "$(echo "$m_im / $2" | bc -l)"
}
echo
echo "| command | median s | min s | speed-up vs ImageMagick |"
echo "| --- | ---: | ---: | ---: |"
row "imgpu equalize (luminance, PNG level 1 = default)" "$(median "${t_lum[@]}")" "$(minimum "${t_lum[@]}")"
row "imgpu equalize --mode per-channel (PNG level 1)" "$(median "${t_pc[@]}")" "$(minimum "${t_pc[@]}")"
row "imgpu equalize --mode per-channel --png-level 6" "$(median "${t_pc6[@]}")" "$(minimum "${t_pc6[@]}")"
row "convert-im6.q16 in.png -equalize out.png" "$m_im" "$(minimum "${t_im[@]}")"
echo
echo "output sizes: imgpu (level 1) $(stat -c %s "$work/out_imgpu_lum.png") B," \
     "imgpu per-channel level 6 $(stat -c %s "$work/out_imgpu_pc6.png") B," \
     "ImageMagick $(stat -c %s "$work/out_im.png") B"

# imgpu's own split, through the library calls the CLI makes (bench/equalize_split.c,
# compiled here against the build tree next to IMGPU).
bdir=$(dirname "$imgpu")
if [ -f "$bdir/libimgpu_core.a" ]; then
    libs=("$bdir/libimgpu_core.a")
    if [ -f "$bdir/libimgpu_kernels.a" ]; then
        cuda_lib=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")/lib64
        libs+=("$bdir/libimgpu_kernels.a" "$cuda_lib/libcudart_static.a" -lstdc++ -ldl -lrt)
    fi
    cc -O2 -std=c17 -D_POSIX_C_SOURCE=200809L -I"$root/src" "$root/bench/equalize_split.c" \
        "${libs[@]}" -lz -lm -lpthread -o "$work/equalize_split"
    echo
    echo "imgpu equalize split (median of $n runs each, in one process):"
    echo "| stage | median s |"
    echo "| --- | ---: |"
    "$work/equalize_split" "$in" "$work/out_split.png" "$n" luminance
fi

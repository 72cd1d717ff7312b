#!/bin/bash
# bench/info_header.sh IMGPU [RUNS] [PY] — issue 30's `info` speed: `imgpu info` on 12 photos of
# 12 MP (4000 x 3000: 4 JPEG q92 with EXIF orientation 6 and an ICC profile, 4 PNG, 4 TIFF
# deflate; from the images in /work/shared/images, else assets/, scaled up by cv2) against
# `vipsheader` and ImageMagick's `identify` on the same 12 files, whole commands, median of
# RUNS (default 5), interleaved, after one warm-up of each (files in the page cache). Also
# `imgpu info --decode` (the old behaviour: every pixel decoded) for scale.
# Target (issue 30): imgpu info no slower than vipsheader.
set -u
IMG=$(readlink -f "${1:-build/imgpu}"); RUNS=${2:-5}; PY=${3:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
D=${INFO_BENCH_DIR:-/tmp/info_bench}; mkdir -p "$D"
SRC=/work/shared/images; [ -d "$SRC" ] || SRC="$HERE/assets"
VH=$(command -v vipsheader || true)
ID=$(command -v identify-im6.q16 || command -v identify || true)
if [ ! -f "$D/p11.tif" ]; then
  "$PY" - "$SRC" "$D" "$HERE/assets/rocket.jpg" <<'PYEOF' || exit 1
import glob, io, os, sys
import cv2
from PIL import Image
src, d, icc_from = sys.argv[1:4]
names = sorted(glob.glob(os.path.join(src, "*.png")) + glob.glob(os.path.join(src, "*.jpg")))
icc = Image.open(icc_from).info.get("icc_profile")
for i in range(12):
    im = cv2.imread(names[i % len(names)], cv2.IMREAD_COLOR)
    big = cv2.resize(im, (4000, 3000), interpolation=cv2.INTER_CUBIC)
    if i < 4:   # a phone photo: stored sideways, EXIF orientation 6, an ICC profile
        pil = Image.fromarray(cv2.cvtColor(cv2.rotate(big, cv2.ROTATE_90_COUNTERCLOCKWISE), cv2.COLOR_BGR2RGB))
        exif = Image.Exif(); exif[0x0112] = 6; exif[0x010F] = "imgpu"; exif[0x0110] = "bench"
        pil.save(f"{d}/p{i:02d}.jpg", quality=92, exif=exif.tobytes(), icc_profile=icc)
    elif i < 8:
        cv2.imwrite(f"{d}/p{i:02d}.png", big)
    else:
        cv2.imwrite(f"{d}/p{i:02d}.tif", big)
PYEOF
fi
FILES=("$D"/p*.*)
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# one run: "wall,cpu" seconds (cpu: user + system, what the machine's load does not inflate)
t() { /usr/bin/time -f "%e %U %S" -o "$D/time.log" "$@" > "$D/last.log" 2>&1 || { echo "FAILED: $*" >&2; cat "$D/last.log" >&2; }
      awk '{printf "%.3f,%.3f\n", $1, $2 + $3}' "$D/time.log"; }
declare -A CMD=([imgpu_info]="$IMG info" [imgpu_info_json]="$IMG info --json"
                [imgpu_info_decode]="$IMG info --decode")
[ -n "$VH" ] && CMD[vipsheader]="$VH"
[ -n "$ID" ] && CMD[identify]="$ID"
declare -A T=()
for k in "${!CMD[@]}"; do ${CMD[$k]} "${FILES[@]}" > /dev/null 2>&1; done   # warm-up
for r in $(seq "$RUNS"); do
  for k in "${!CMD[@]}"; do T[$k]+="$(t ${CMD[$k]} "${FILES[@]}") "; done
done
echo "$(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p' | head -1); commit $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null); $(date -u +%F)"
echo "12 files: $(cd "$D" && ls p* | sed 's/.*\.//' | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')$(du -ch "${FILES[@]}" | tail -1 | cut -f1) in all; median of $RUNS runs"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-20s %12s %10s %14s\n" command "wall median" "wall min" "CPU (u+s) med"
for k in imgpu_info imgpu_info_json vipsheader identify imgpu_info_decode; do
  [ -n "${T[$k]:-}" ] || continue
  w=$(echo ${T[$k]} | tr ' ' '\n' | cut -d, -f1)
  c=$(echo ${T[$k]} | tr ' ' '\n' | cut -d, -f2 | grep . | med)
  printf "%-20s %12s %10s %14s\n" "$k" "$(echo "$w" | grep . | med)" "$(echo "$w" | grep . | sort -n | head -1)" "$c"
done

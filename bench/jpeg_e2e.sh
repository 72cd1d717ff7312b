#!/bin/bash
# jpeg_e2e.sh IMGPU N RUNS [PYTHON] — issue 16's JPEG targets, wall time of whole commands,
# median of RUNS, every peer in the same run:
#   single 4K JPEG (q92 4:2:0) equalize: imgpu --device cpu, vips hist_equal, ImageMagick
#     -equalize (convert-im6.q16), OpenCV's Python one-liner (imread, YCrCb equalizeHist, imwrite)
#   batch of N such JPEGs -> JPEG q92 4:2:0: imgpu batch --equalize --device cpu against an
#     OpenCV loop on every core (bench/batch_opencv.py with --jpg)
#   output size: imgpu's JPEG of the photo at q92 4:2:0 against cv2.imwrite's of the same pixels
# Inputs: bench/batch_make_inputs.py's 4K photos, re-encoded once as q92 4:2:0 JPEG by cv2.
set -u
BIN=$(readlink -f "${1:-build/imgpu}"); N=${2:-40}; RUNS=${3:-5}; PY=${4:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
W=${JPEG_BENCH_DIR:-$(dirname "$BIN")/bench-jpeg}; mkdir -p "$W"
$PY "$HERE/batch_make_inputs.py" "$N" "$W/png" >/dev/null || exit 1
mkdir -p "$W/jpg"
$PY - "$W/png" "$W/jpg" "$N" <<'PY' || exit 1
import os, sys, cv2
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for f in sorted(os.listdir(src))[:n]:
    out = os.path.join(dst, f[:-4] + ".jpg")
    if not os.path.exists(out):
        # 4:2:0 is libjpeg's default for YCbCr (Debian's cv2 4.6 has no sampling flag)
        cv2.imwrite(out, cv2.imread(os.path.join(src, f)), [cv2.IMWRITE_JPEG_QUALITY, 92])
PY
ONE=$(ls "$W"/jpg/*.jpg | head -1)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; commit $(git -C "$HERE" rev-parse --short HEAD); $(date -u +%F)"
echo "input: $(basename "$ONE") 3840x2160 q92 4:2:0, $(stat -c %s "$ONE") bytes; batch: $N of them, $(du -cb "$W"/jpg/*.jpg | tail -1 | cut -f1) bytes"
calc() { awk "BEGIN { print $* }"; }
t() { local s e; s=$(date +%s.%N); "$@" > "$W/last.log" 2>&1 || { echo "FAILED: $*" >&2; cat "$W/last.log" >&2; }; e=$(date +%s.%N); calc "$e - $s"; }
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A T
VIPS=$(command -v vips); IM=/usr/bin/convert-im6.q16; [ -x $IM ] || IM=
for r in $(seq 1 "$RUNS"); do
  T[imgpu]+="$(t "$BIN" equalize "$ONE" "$W/o_imgpu.jpg" --device cpu --quiet --force) "
  [ -n "$VIPS" ] && T[vips]+="$(t "$VIPS" hist_equal "$ONE" "$W/o_vips.jpg[Q=92]") "
  [ -n "$IM" ] && T[magick]+="$(t "$IM" "$ONE" -equalize -quality 92 "$W/o_im.jpg") "
  T[opencv1]+="$(t $PY -c "import cv2,sys; c=cv2.cvtColor(cv2.imread(sys.argv[1]),cv2.COLOR_BGR2YCrCb); c[:,:,0]=cv2.equalizeHist(c[:,:,0]); cv2.imwrite(sys.argv[2],cv2.cvtColor(c,cv2.COLOR_YCrCb2BGR),[cv2.IMWRITE_JPEG_QUALITY,92])" "$ONE" "$W/o_cv.jpg") "
  rm -rf "$W/b_imgpu" "$W/b_cv"
  T[batch]+="$(t "$BIN" batch --equalize --device cpu --quiet -o "$W/b_imgpu" "$W/jpg") "
  T[batchcv]+="$(t $PY "$HERE/batch_opencv.py" "$W/jpg" "$W/b_cv" "$(nproc)" --jpg) "
done
printf "%-44s %10s\n" "single 4K JPEG equalize (s, median of $RUNS)" ""
for k in imgpu vips magick opencv1; do
  [ -n "${T[$k]:-}" ] && printf "  %-42s %10.3f\n" "$k" "$(echo ${T[$k]} | tr ' ' '\n' | med)"
done
bi=$(echo ${T[batch]} | tr ' ' '\n' | med); bc=$(echo ${T[batchcv]} | tr ' ' '\n' | med)
printf "batch %d JPEG -> JPEG q92 4:2:0 (s): imgpu --device cpu %.3f (%.1f img/s), OpenCV loop %.3f (%.1f img/s): imgpu %.2fx\n" \
  "$N" "$bi" "$(calc "$N / $bi")" "$bc" "$(calc "$N / $bc")" "$(calc "$bc / $bi")"
$PY - "$BIN" "$W" <<'PY'
import os, subprocess, sys, cv2
b, w = sys.argv[1], sys.argv[2]
src = os.path.join(w, "png", sorted(os.listdir(os.path.join(w, "png")))[0])
from PIL import Image
for q, sub in [(92, "420"), (92, "444"), (75, "420")]:
    ours = os.path.join(w, f"size_{q}_{sub}.jpg"); ref = os.path.join(w, f"size_cv_{q}_{sub}.jpg")
    subprocess.run([b, "rotate", src, ours, "--angle", "0", "--quality", str(q), "--subsampling", sub, "--force", "--quiet"], check=True)
    flag = getattr(cv2, f"IMWRITE_JPEG_SAMPLING_FACTOR_{sub}", None)
    if sub == "420" or flag is not None:  # 4:2:0: libjpeg's default
        cv2.imwrite(ref, cv2.imread(src), [cv2.IMWRITE_JPEG_QUALITY, q] + ([cv2.IMWRITE_JPEG_SAMPLING_FACTOR, flag] if flag else []))
        who = "cv2.imwrite"
    else:  # an OpenCV without the flag: PIL through the same libjpeg
        Image.open(src).convert("RGB").save(ref, quality=q, subsampling=0)
        who = "PIL"
    a, c = os.path.getsize(ours), os.path.getsize(ref)
    print(f"size q{q} {sub}: imgpu {a} bytes, {who} {c} bytes: {100.0 * (a - c) / c:+.2f}%")
PY

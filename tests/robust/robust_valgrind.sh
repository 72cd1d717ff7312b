#!/usr/bin/env bash
# robust_valgrind.sh BUILD_DIR — the CPU tests under valgrind memcheck (CI step; docs/reliability.md,
# "Sanitizers"): the C unit tests of the CPU backend, the I/O layer, EXIF and the split batch
# (test_batch_split: imgpu.dask's C half), the fuzz targets'
# replay of the regression corpus and seeds, and imgpu itself on every command with
# --device cpu. Any memcheck error or definite/indirect leak fails (exit 1), naming the run.
# The runs are independent (each its own logs and output names), so they run VALGRIND_JOBS at a
# time (default: the cores; valgrind runs each program's threads on one core), the longest
# first; the results are printed in this file's order. Sized for CI: about a minute on two cores.
set -u
build=${1:?usage: robust_valgrind.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
assets=$here/../../assets
export IMGPU_ASSETS=$assets
command -v valgrind >/dev/null || { echo "robust_valgrind: valgrind not installed (apt-get install valgrind)"; exit 1; }
jobs=${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 1)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg=(valgrind --quiet --error-exitcode=99 --child-silent-after-fork=yes --leak-check=full
    --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect)
runs=0
check() {  # check NAME OK_STATUSES CMD...: start under memcheck; e.g. OK_STATUSES "0" or "0 1"
    local name=$1 okst=" $2 "; shift 2
    runs=$((runs + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    local n=$runs
    (
        t0=$SECONDS
        "${vg[@]}" --log-file="$tmp/$n.vg.log" "$@" > "$tmp/$n.out.log" 2>&1
        rc=$? el=$((SECONDS - t0))
        if [ $rc -eq 99 ] || [[ "$okst" != *" $rc "* ]] || [ -s "$tmp/$n.vg.log" ]; then
            { echo "FAIL: $name (status $rc, ${el} s; rerun with --track-origins=yes for where)"
              tail -30 "$tmp/$n.vg.log"; tail -5 "$tmp/$n.out.log"; } > "$tmp/$n.result"
        else
            echo "ok: $name (${el} s)" > "$tmp/$n.result"
        fi
    ) &
}
# test_io's own 10-second bound and its RLIMIT_FSIZE child check do not hold under valgrind's
# slowdown, so for test_io only memcheck's verdict counts (status 1 allowed); every other
# test must pass as well.
[ -x "$build/tests/test_io" ] && check test_io "0 1" "$build/tests/test_io"
for t in test_cpu_rotate test_cpu_pool test_exif test_orient test_jpeg_meta test_batch_split; do
    [ -x "$build/tests/$t" ] && check "$t" 0 "$build/tests/$t"
done
# all 2^24 colours take a minute under memcheck: 65536 of them there (test_cpu_color: 2^20)
for t in test_cpu_color test_cpu_equalize test_cpu_clahe; do
    [ -x "$build/tests/$t" ] && check "$t --quick" 0 "$build/tests/$t" --quick
done
# the CPU backend's threads (src/cpu/parallel.c): every one joined, every part buffer freed
[ -x "$build/tests/test_cpu_threads" ] && check "test_cpu_threads --quick" 0 "$build/tests/test_cpu_threads" --quick
[ -x "$build/tests/test_cpu_resize" ] && check "test_cpu_resize --quick" 0 "$build/tests/test_cpu_resize" --quick
for t in decode ops cli exif exif_write jpeg webp tiff bmp manifest utf8; do
    # git keeps no empty folder: a target with no failing input yet has no fuzz/regress/<t>
    dirs=()
    for d in "$here/../fuzz/regress/$t" "$here/../fuzz/seeds/$t"; do [ -d "$d" ] && dirs+=("$d"); done
    [ -x "$build/tests/fuzz_${t}_replay" ] && [ ${#dirs[@]} -gt 0 ] &&
        check "fuzz_${t}_replay" 0 "$build/tests/fuzz_${t}_replay" "${dirs[@]}"
done
im=$build/imgpu
check "equalize" 0 "$im" equalize "$assets/coffee.png" "$tmp/a.png" --device cpu
check "equalize jpeg" 0 "$im" equalize "$assets/rocket.jpg" "$tmp/b.jpg" --device cpu --mode per-channel
# libjpeg-turbo: metadata read and written, progressive + optimized; a corrupt file's longjmp
check "equalize jpeg metadata" 0 "$im" equalize "$here/../fuzz/seeds/jpeg/meta_all.jpg" "$tmp/c.jpg" --device cpu --progressive --optimize --subsampling 444
check "corrupt jpeg" 1 "$im" equalize "$here/../fuzz/seeds/jpeg/bad_restart.jpg" "$tmp/d.png" --device cpu
check "rotate bicubic" 0 "$im" rotate "$assets/horse.png" "$tmp/c.tga" --angle 17.5 --filter bicubic --device cpu
check "rotate 90 crop" 0 "$im" rotate "$assets/camera.png" "$tmp/d.bmp" --angle 90 --crop --device cpu
check "histogram plot" 0 "$im" histogram "$assets/chelsea.png" --plot "$tmp/h.png" --device cpu
check "info" 0 "$im" info "$assets/rocket.jpg"
# WebP through libwebp: lossy and lossless writes, metadata through the muxer, the demuxer
# and the incremental decoder on an animation and on a file with ICCP + EXIF + XMP
webp=$here/../fuzz/seeds/webp
check "equalize to webp" 0 "$im" equalize "$assets/coffee.png" "$tmp/e.webp" --device cpu
check "webp lossless" 0 "$im" rotate "$webp/lossy_alpha_12x10.webp" "$tmp/f.webp" --angle 30 --lossless --device cpu
check "webp metadata" 0 "$im" equalize "$webp/meta_icc_exif_xmp.webp" "$tmp/g.webp" --device cpu
check "webp animated" 0 "$im" info "$webp/anim_3_frames.webp"
check "webp refused" 1 "$im" info "$webp/broken_truncated.webp"
# against the golden of the "equalize" run above, not its output: the runs are concurrent
check "compare" 0 "$im" compare "$assets/coffee.png" "$here/../golden/coffee.equalize_luminance.png" --diff "$tmp/diff.png"
check "equalize tiff 16-bit lzw" 0 "$im" equalize "$here/../fuzz/seeds/tiff/g16_lzw_p2.tif" "$tmp/e.tif" --compression lzw --device cpu
# a TIFF's EXIF rebuilt (imgpu_exif_rebuild) and carried into a JPEG (issue 25's nested pointer)
check "tiff exif to jpeg" 0 "$im" equalize "$here/../fuzz/regress/tiff/exif-ifd-nested-exif-pointer-old-offset.tif" "$tmp/n.jpg" --device cpu
check "info tiff page" 0 "$im" info "$here/../fuzz/seeds/tiff/multipage3.tif" --page 1
check "refused tiff" 1 "$im" info "$here/../fuzz/seeds/tiff/f32.tif"
# issue 25: a JPEG strip whose frame is smaller than the strip left heap bytes in the output
check "short jpeg-in-tiff strip" 1 "$im" rotate "$here/../fuzz/regress/tiff/jpeg-strip-frame-8x8-heap-bytes-in-output.tif" "$tmp/s.png" --angle 90 --device cpu
check "refused input" 1 "$im" info "$here/../fuzz/seeds/decode/png_bad_idat_crc.png"
# issue 30: CMYK / YCCK through their profile (lcms2), BMP RLE4 / RLE8, every page of a TIFF
check "cmyk jpeg, lcms2" 0 "$im" equalize "$here/../fuzz/seeds/jpeg/lcms_cmyk_icc.jpg" "$tmp/k.tif" --device cpu
check "ycck jpeg info" 0 "$im" info --json "$here/../fuzz/seeds/jpeg/lcms_ycck_icc.jpg"
check "bmp rle4" 0 "$im" rotate "$here/../fuzz/seeds/bmp/rle4_escapes.bmp" "$tmp/r.png" --angle 90 --device cpu
check "bmp rle8 refused" 1 "$im" info "$here/../fuzz/seeds/bmp/rle8_bad_delta.bmp"
check "tiff --pages all" 0 "$im" rotate "$here/../fuzz/seeds/tiff/multipage3.tif" "$tmp/p.tif" --angle 90 --pages all --device cpu
check "failed write" 1 "$im" equalize "$assets/camera.png" /nonexistent/dir/x.png --device cpu
# issue 25: info on hostile EXIF text (escaped, and \udcXX in JSON); a batch whose manifest holds
# 3 MB of empty lines, a line over the bound and a torn end (read line by line, then appended)
hostile=$here/../fuzz/regress/decode/png-exif-make-model-terminal-escapes-not-utf8.png
check "info hostile text" 0 "$im" info "$hostile"
check "info --json hostile text" 0 "$im" info --json "$hostile"
mkdir -p "$tmp/mf"
{ printf '# imgpu batch manifest 1: what made each output (imgpu batch reads it; do not edit)\n'
  head -c 3000000 /dev/zero | tr '\0' '\n'; head -c 100000 /dev/zero | tr '\0' 'x'; printf '\nR 01'
} > "$tmp/mf/.imgpu-batch"
check "batch damaged manifest" 0 "$im" batch --equalize --device cpu -o "$tmp/mf" "$assets/camera.png"
mkdir -p "$tmp/hl" && echo keep > "$tmp/hl.txt" && ln "$tmp/hl.txt" "$tmp/hl/.imgpu-batch"
check "batch hard-linked manifest" 1 "$im" batch --equalize --device cpu -o "$tmp/hl" "$assets/camera.png"
# a 28-byte lossless WebP of 16383x16383 (robust_limits.py's bomb): refused from its header
# under --max-memory by the load (info) and by the job's plan (equalize), nothing decoded
printf '\122\111\106\106\024\000\000\000\127\105\102\120\126\120\070\114\010\000\000\000\057\376\277\377\017\210\210\010' > "$tmp/bomb.webp"
check "bomb refused: info --max-memory" 1 "$im" info "$tmp/bomb.webp" --max-memory 100M
check "bomb refused: equalize --max-memory" 1 "$im" equalize "$tmp/bomb.webp" "$tmp/bomb.png" --max-memory 100M --device cpu
wait
fails=0
for n in $(seq 1 $runs); do
    if [ -f "$tmp/$n.result" ]; then cat "$tmp/$n.result"; else echo "FAIL: run $n left no result"; fi
    grep -q '^ok: ' "$tmp/$n.result" 2>/dev/null || fails=$((fails + 1))
done
echo "robust_valgrind: $runs runs, $fails failed"
[ $fails -eq 0 ]

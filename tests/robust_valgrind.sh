#!/usr/bin/env bash
# robust_valgrind.sh BUILD_DIR — the CPU tests under valgrind memcheck (CI step; README
# "Reliability"): the C unit tests of the CPU backend and the I/O layer, the fuzz targets'
# replay of the regression corpus and seeds, and imgpu itself on every command with
# --device cpu. Any memcheck error or definite/indirect leak fails (exit 1), naming the run.
# Sized for CI: about two minutes on two cores.
set -u
build=${1:?usage: robust_valgrind.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
assets=$here/../assets
export IMGPU_ASSETS=$assets
command -v valgrind >/dev/null || { echo "robust_valgrind: valgrind not installed (apt-get install valgrind)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg=(valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --track-origins=yes)
fails=0 runs=0
check() {  # check NAME CMD...: run under memcheck; the command's own status must be 0 or 1
    local name=$1; shift
    runs=$((runs + 1))
    "${vg[@]}" --log-file="$tmp/vg.log" "$@" > "$tmp/out.log" 2>&1
    local rc=$?
    if [ $rc -eq 99 ] || { [ $rc -ne 0 ] && [ $rc -ne 1 ]; } || [ -s "$tmp/vg.log" ]; then
        fails=$((fails + 1))
        echo "FAIL: $name (status $rc)"; tail -30 "$tmp/vg.log"; tail -5 "$tmp/out.log"
    else
        echo "ok: $name"
    fi
}
for t in test_io test_cpu_equalize test_cpu_rotate test_cpu_color test_cpu_clahe; do
    [ -x "$build/tests/$t" ] && check "$t" "$build/tests/$t"
done
for t in decode ops cli; do
    [ -x "$build/tests/fuzz_${t}_replay" ] &&
        check "fuzz_${t}_replay" "$build/tests/fuzz_${t}_replay" "$here/fuzz-regress/$t" "$here/fuzz/seeds/$t"
done
im=$build/imgpu
check "equalize" "$im" equalize "$assets/coffee.png" "$tmp/a.png" --device cpu
check "equalize jpeg" "$im" equalize "$assets/rocket.jpg" "$tmp/b.jpg" --device cpu --mode per-channel
check "rotate bicubic" "$im" rotate "$assets/horse.png" "$tmp/c.tga" --angle 17.5 --filter bicubic --device cpu
check "rotate 90 crop" "$im" rotate "$assets/camera.png" "$tmp/d.bmp" --angle 90 --crop --device cpu
check "histogram plot" "$im" histogram "$assets/chelsea.png" --plot "$tmp/h.png" --device cpu
check "info" "$im" info "$assets/rocket.jpg"
check "compare" "$im" compare "$assets/camera.png" "$tmp/d.bmp" --diff "$tmp/diff.png"
check "refused input" "$im" info "$here/fuzz/seeds/decode/png_bad_idat_crc.png"
check "failed write" "$im" equalize "$assets/camera.png" /nonexistent/dir/x.png --device cpu
echo "robust_valgrind: $runs runs, $fails failed"
[ $fails -eq 0 ]

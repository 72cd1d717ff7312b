#!/usr/bin/env bash
# cpu_threads_cli.sh IMGPU TMPDIR ASSETS — IMGPU_CPU_THREADS through the CLI: every CPU
# command on real photos (8- and 16-bit, gray and colour) with IMGPU_CPU_THREADS=1 (the
# single-threaded path) and 3, 4 and a value that is ignored (0: the cores) must write
# byte-identical files. test_cpu_threads covers the odd sizes; this the environment variable.
set -u
im=${1:?usage: cpu_threads_cli.sh IMGPU TMPDIR ASSETS} tmp=${2:?} assets=${3:?}
mkdir -p "$tmp"
fails=0 runs=0
run() {  # run NAME ARGS... (IN and OUT are filled in: ARGS use @IN@ and @OUT@)
    local name=$1; shift
    local ref= before=$fails
    for t in 1 3 4 0; do
        local out="$tmp/threads_${name}_$t.png"
        local args=("${@//@OUT@/$out}")
        if ! IMGPU_CPU_THREADS=$t "$im" "${args[@]}" --device cpu > "$tmp/threads.log" 2>&1; then
            echo "FAIL: $name with IMGPU_CPU_THREADS=$t: $(cat "$tmp/threads.log")"; fails=$((fails + 1)); return
        fi
        runs=$((runs + 1))
        if [ -z "$ref" ]; then
            ref=$out
        elif ! cmp -s "$ref" "$out"; then
            echo "FAIL: $name: IMGPU_CPU_THREADS=$t differs from IMGPU_CPU_THREADS=1"; fails=$((fails + 1))
        fi
    done
    [ $fails -eq $before ] && echo "ok: $name"
}
run eq_lum equalize "$assets/coffee.png" @OUT@
run eq_chan equalize "$assets/chelsea.png" @OUT@ --mode per-channel
run eq_pil16 equalize "$assets/chelsea16.png" @OUT@ --formula pil
run eq_gray16 equalize "$assets/camera16.png" @OUT@ --formula imagemagick
run clahe_lum clahe "$assets/astronaut.png" @OUT@
run clahe_gray clahe "$assets/camera.png" @OUT@ --tiles 5x3 --clip 2
run clahe16 clahe "$assets/chelsea16.png" @OUT@ --tiles 3x3
run rot_bilinear rotate "$assets/horse.png" @OUT@ --angle 30
run rot_bicubic rotate "$assets/coffee.png" @OUT@ --angle 30 --filter bicubic
run rot16 rotate "$assets/camera16.png" @OUT@ --angle -17.5 --filter bicubic --crop
run rot90 rotate "$assets/brick.png" @OUT@ --angle 90 --crop
run normalize normalize "$assets/coffee.png" @OUT@
run normalize16 normalize "$assets/chelsea16.png" @OUT@ --mode per-channel --black-clip 2
run autolevel16 autolevel "$assets/camera16.png" @OUT@
echo "cpu_threads_cli: $runs runs, $fails failed"
[ $fails -eq 0 ]

#!/usr/bin/env bash
# auto_start.sh IMGPU TMPDIR ASSETS — `--device auto` starts CUDA only for a job the GPU could
# win (ops.c, imgpu_backend_prepare_for): a process that begins CUDA's start-up pays for it
# even when the CPU runs the job. Seen through the dynamic loader (LD_DEBUG=libs): CUDA's start
# loads the driver, libcuda.so.1, whether or not a GPU is there. With IMGPU_CPU_THREADS=1 the
# CPU estimates are one core's, so the cases below do not depend on the machine:
#   a 512x512 equalize and histogram (< 1 ms on the CPU) never load it, and write what
#   --device cpu writes; IMGPU_DEVICE=cpu never loads it;
#   a 512x512 colour bicubic rotation by 30 degrees, expanded (~17 ms on one core, against
#   CUDA's 10 ms of first use + 0.9 ms of transfers), and --device cuda do.
# Exit 77 (skipped) for a build without CUDA or where the loader does not report.
set -u
im=${1:?usage: auto_start.sh IMGPU TMPDIR ASSETS} tmp=${2:?} assets=${3:?}
mkdir -p "$tmp"
if ! "$im" --version | grep -q "CUDA support: yes"; then
    echo "skip: imgpu was built without CUDA"; exit 77
fi
if ! LD_DEBUG=libs "$im" --version 2>&1 | grep -q "find library="; then
    echo "skip: the dynamic loader does not report (LD_DEBUG)"; exit 77
fi
fails=0
# loads NAME EXPECT(0|1) ARGS...: whether the command loaded libcuda.so.1
loads() {
    local name=$1 want=$2; shift 2
    IMGPU_CPU_THREADS=1 LD_DEBUG=libs "$@" > "$tmp/out.log" 2>&1
    local got=0
    grep -q "find library=libcuda.so" "$tmp/out.log" && got=1
    if [ "$got" = "$want" ]; then
        echo "ok: $name: CUDA $([ "$want" = 1 ] && echo started || echo 'never started')"
    else
        echo "FAIL: $name: libcuda.so $([ "$got" = 1 ] && echo loaded || echo 'not loaded'), expected the opposite"
        fails=$((fails + 1))
    fi
}
loads "auto, 512x512 equalize" 0 "$im" equalize "$assets/camera.png" "$tmp/eq_auto.png"
"$im" equalize "$assets/camera.png" "$tmp/eq_cpu.png" --device cpu
if cmp -s "$tmp/eq_auto.png" "$tmp/eq_cpu.png"; then echo "ok: auto wrote what --device cpu writes"
else echo "FAIL: auto's output differs from --device cpu's"; fails=$((fails + 1)); fi
loads "auto, 512x512 histogram" 0 "$im" histogram "$assets/camera.png"
loads "auto, 512x512 CLAHE" 0 "$im" clahe "$assets/camera.png" "$tmp/cl.png"
loads "IMGPU_DEVICE=cpu, rotation" 0 env IMGPU_DEVICE=cpu "$im" rotate "$assets/astronaut.png" "$tmp/r0.png" \
    --angle 30 --filter bicubic
loads "auto, 512x512 colour bicubic rotation" 1 "$im" rotate "$assets/astronaut.png" "$tmp/r1.png" \
    --angle 30 --filter bicubic
loads "--device cuda, equalize" 1 "$im" equalize "$assets/camera.png" "$tmp/eq_cuda.png" --device cuda
echo "auto_start: $fails failed"
[ $fails -eq 0 ]

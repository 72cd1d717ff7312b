#!/bin/bash
# bench/device.sh — on the GPU machine (see ../shared/GPU.md): unpack the carried .gpu
# packages, configure and build build-gpu if needed, then run "$@" inside build-gpu.
#   . bench/device.sh            (then work in build-gpu)
#   bash bench/device.sh ctest -L gpu --output-on-failure
. .gpu/device-env.sh >/dev/null 2>&1
if [ ! -f build-gpu/build.ninja ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH="$GPU_PREFIX/usr" -DCMAKE_CUDA_ARCHITECTURES=90 \
    > /tmp/imgpu-configure.log 2>&1 || { tail -30 /tmp/imgpu-configure.log; exit 1; }
fi
cmake --build build-gpu 2>&1 | grep -E "error|FAILED|warning: " | grep -v stb_image | head -30
[ -x build-gpu/imgpu ] || { echo "build failed"; exit 1; }
if [ $# -gt 0 ]; then cd build-gpu && "$@"; fi

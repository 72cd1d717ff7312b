#!/usr/bin/env bash
# cpu_threads.sh BEFORE_BUILD AFTER_BUILD [N] — the CPU backend before and after threading
# (issue 17), against OpenCV's CPU functions, on a 4K photo (gray and RGB): builds
# bench/cpu_ops.c against each build tree's libimgpu_core.a, then runs, one after another,
# the old library, the new one with IMGPU_CPU_THREADS=1, the new one on every core, and
# bench/cpu_opencv.py (OpenCV on every core, setNumThreads(nproc), then on one thread). Inputs: build-bench/
# coffee_4k.png (bench/make_4k.py) and its gray version (cv2 BGR2GRAY).
set -eu
before=${1:?usage: cpu_threads.sh BEFORE_BUILD AFTER_BUILD [N]} after=${2:?} n=${3:-7}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/../src
py=/usr/bin/python3
mkdir -p build-bench
rgb=build-bench/coffee_4k.png gray=build-bench/coffee_4k_gray.png
[ -f "$rgb" ] || $py "$here/make_4k.py" "$here/../assets" "$rgb"
[ -f "$gray" ] || $py -c "import cv2,sys; cv2.imwrite(sys.argv[2], cv2.cvtColor(cv2.imread(sys.argv[1]), cv2.COLOR_BGR2GRAY))" "$rgb" "$gray"
for b in "$before" "$after"; do
    cc -O2 -std=c17 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$src" -I"$src/core" -I"$src/io" -I"$src/backend" "$here/cpu_ops.c" \
       "$b/libimgpu_core.a" -lz -ldeflate -lpthread -lm -o "$b/cpu_ops"
done
echo "## before ($before)";                  "$before/cpu_ops" "$gray" "$rgb" "$n"
echo "## after, IMGPU_CPU_THREADS=1";        IMGPU_CPU_THREADS=1 "$after/cpu_ops" "$gray" "$rgb" "$n"
echo "## after, all cores ($(nproc))";       "$after/cpu_ops" "$gray" "$rgb" "$n"
echo "## OpenCV $($py -c 'import cv2; print(cv2.__version__)'), cv2.setNumThreads($(nproc))"; $py "$here/cpu_opencv.py" "$gray" "$rgb" "$n" "$(nproc)"
echo "## OpenCV, cv2.setNumThreads(1)";      $py "$here/cpu_opencv.py" "$gray" "$rgb" "$n" 1

#!/bin/sh
# run.sh [big] — kernels/resize.cu's kernels run on the host under ASan+UBSan (not in CTest: a
# developer's check where no GPU is). Every buffer is allocated at its exact size (input,
# tables, intermediate, output), so any read or write out of bounds that compute-sanitizer's
# memcheck would report (or one it would miss inside a padded allocation) stops the run. The
# matrix is test_gpu_resize's sizes plus 2x2/3x1/1x3/5x7 and scales 0.1 and 3, every filter,
# --antialias, 8/16 bits, 1-4 channels; "big" adds the 640x427 source and 1280x854 results.
# 2026-11-27: 7200 + 11016 cases clean.
set -e
R=$(cd "$(dirname "$0")/../../.." && pwd)
T=$(mktemp -d)
awk '/^unsigned blocks/{exit} {print}' "$R/kernels/resize.cu" > "$T/resize_body.inc"
echo '} // namespace' >> "$T/resize_body.inc"
cp "$R/tests/gpu/emu/resize_emu.cpp" "$T/emu.cpp"
I="-I$R/src -I$R/src/core -I$R/src/op -I$R/kernels -I/usr/local/cuda/include"
S="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all"
gcc -std=c17 -D_DEFAULT_SOURCE $S $I -c "$R/src/op/resize.c" -o "$T/resize_op.o"
gcc -std=c17 $S $I -c "$R/tests/gpu/emu/stubs.c" -o "$T/stubs.o"
g++ -std=c++17 $S -Wno-attributes $I -c "$T/emu.cpp" -o "$T/emu.o"
g++ $S "$T/emu.o" "$T/resize_op.o" "$T/stubs.o" -o "$T/emu" -lm
"$T/emu" "$@"
rm -rf "$T"

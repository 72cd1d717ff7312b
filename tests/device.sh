#!/usr/bin/env bash
# tests/device.sh — the whole test suite on the GPU machine in one call (../shared/GPU.md):
#   device run, carry [".gpu"] (made once here by: ../shared/gpu/fetch-debs.sh .gpu --with-x):
#   bash tests/device.sh
# Unpacks the carried packages (GLFW, GLEW, stb, libdeflate, Xvfb + Mesa), builds build-gpu with
# the machine's python3 (cv2) for the Python-driven tests, starts Xvfb for the window tests, runs
# the whole suite (ctest -j, default settings) DEVICE_ROUNDS times (default 1), and, with
# DEVICE_SANITIZE=1, the compute-sanitizer runs of tests/robust_gpu.sh, timed apart. Logs go to
# $OUT (default /tmp/device-out): build.log, suite.log (every round, per-test times), slow.txt
# (the 15 slowest tests of the last round), sanitize.log. The last line is the one summary:
#   device.sh: <gpu>: round 1 <P>/<N> passed <S> skipped in <T> s; ... sanitize <rc>
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
start=$SECONDS
. .gpu/device-env.sh > "$OUT/env.log" 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
py=$(command -v python3)
jobs=${DEVICE_JOBS:-$(nproc)}
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH="$GPU_PREFIX/usr" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DIMGPU_PYTHON3="$py" && cmake --build build-gpu
} > "$OUT/build.log" 2>&1 || {
  grep -E "error|FAILED" "$OUT/build.log" | head -30
  echo "device.sh: $gpu: build failed (build.log)"
  exit 1
}
echo "build: $((SECONDS - start)) s" | tee -a "$OUT/build.log"
summary="device.sh: $gpu:"
fail=0
: > "$OUT/suite.log"
for round in $(seq 1 "${DEVICE_ROUNDS:-1}"); do
  t0=$SECONDS
  timeout "${DEVICE_SUITE_BOX:-540}" ctest --test-dir build-gpu -j"$jobs" --output-on-failure \
    > "$OUT/round.log" 2>&1
  rc=$?
  el=$((SECONDS - t0))
  { echo "==== round $round: rc=$rc, $el s"; cat "$OUT/round.log"; } >> "$OUT/suite.log"
  total=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#" "$OUT/round.log")
  passed=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#.* Passed" "$OUT/round.log")
  skipped=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#.*Skipped" "$OUT/round.log")
  [ "$rc" = 0 ] || fail=1
  summary="$summary round $round $passed/$total passed $skipped skipped in $el s (rc $rc);"
  grep -E "^ *[0-9]+/[0-9]+ Test +#" "$OUT/round.log" | awk '{print $(NF-1), $0}' | sort -rn | head -15 \
    > "$OUT/slow.txt"
  grep -E "\*\*\*Failed|Timeout|\(Failed\)" "$OUT/round.log" | head -20
done
if [ "${DEVICE_SANITIZE:-0}" = 1 ]; then
  t0=$SECONDS
  (cd build-gpu && bash ../tests/robust_gpu.sh "$OUT/sanitize") > "$OUT/sanitize.log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || fail=1
  summary="$summary sanitize rc $rc in $((SECONDS - t0)) s;"
fi
echo "$summary total $((SECONDS - start)) s"
exit $fail

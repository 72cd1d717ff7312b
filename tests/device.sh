#!/usr/bin/env bash
# tests/device.sh — the whole test suite on the GPU machine in one call (../shared/GPU.md):
#   device run, carry [".gpu"] (made once here by: ../shared/gpu/fetch-debs.sh .gpu --with-x):
#   bash tests/device.sh
# Unpacks the carried packages (GLFW, GLEW, stb, libdeflate, Xvfb + Mesa), builds build-gpu with
# the machine's python3 (cv2) for the Python-driven tests, starts Xvfb for the window tests, runs
# the whole suite (ctest -j, default settings) DEVICE_ROUNDS times (default 1), and, with
# DEVICE_SANITIZE=1, the compute-sanitizer runs of tests/robust/robust_gpu.sh and of the viewer's interop
# and 16-bit display paths (DEVICE_SANITIZE=viewer: the viewer's only), timed apart, and with
# DEVICE_FLAKE=N, viewer_events N times while GPU tests load the same GPU. Logs go to
# $OUT (default /tmp/device-out): env.log, build.log, suite.log (every round, per-test times), slow.txt
# (the 15 slowest tests of the last round), python_cuda.log (python_module once more with
# IMGPU_PYTEST_DEVICE=cuda), python_dask_cuda.log (python_dask on CUDA workers, where Dask was
# carried), sanitize.log. The last line is the one summary:
#   device.sh: <gpu>: round 1 <P>/<N> passed <S> skipped in <T> s; ... sanitize <rc>
# The window test needs Xvfb and Mesa (~46 MB of packages), which do not fit one call's
# 64 MiB beside .gpu and the tree: fetch them apart (../shared/gpu/fetch-debs.sh /tmp/gx
# --with-x, then copy the .deb files of /tmp/gx/prefix that .gpu/prefix lacks into .gpux/),
# and on a warm machine make two calls back to back, the first carrying [".gpux"]:
#   DEVICE_UNPACK_X=1 bash tests/device.sh     (unpacks them into /tmp/gpu-prefix and stops)
# and the second carrying [".gpu"] as above: device-env.sh then finds Xvfb and starts it.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
start=$SECONDS
if [ "${DEVICE_UNPACK_X:-0}" = 1 ]; then
  mkdir -p /tmp/gpu-prefix
  for f in .gpux/*.deb; do dpkg -x "$f" /tmp/gpu-prefix; done
  echo "device.sh: $(ls .gpux/*.deb | wc -l) X packages unpacked into /tmp/gpu-prefix"
  exit 0
fi
. .gpu/device-env.sh > "$OUT/env.log" 2>&1
# device-env.sh exports PKG_CONFIG_PATH (the prefix's lib/x86_64-linux-gnu/pkgconfig and
# share/pkgconfig) for the codecs' .pc files; set it here too, should an older device-env.sh be
# carried, and CMAKE_PREFIX_PATH for every CMake project the tests configure (lib_install's
# find_package(imgpu) consumer: imgpu::imgpu_static finds JPEG, TIFF, WebP and libdeflate
# there). The .pc files say prefix=/usr: their -I/-L name /usr paths, absent here and harmless;
# CPATH and LIBRARY_PATH (device-env.sh) find the headers and libraries.
for d in "$GPU_PREFIX/usr/share/pkgconfig" "$GPU_PREFIX/usr/lib/x86_64-linux-gnu/pkgconfig"; do
  case ":${PKG_CONFIG_PATH:-}:" in *":$d:"*) ;; *) PKG_CONFIG_PATH=$d${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} ;; esac
done
export PKG_CONFIG_PATH CMAKE_PREFIX_PATH=$GPU_PREFIX/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
env | grep -E '^(GPU_PREFIX|PKG_CONFIG_PATH|CMAKE_PREFIX_PATH|LD_LIBRARY_PATH|CPATH|LIBRARY_PATH)=' | sort >> "$OUT/env.log"
# the test oracles' tools carried in .gpu/prefix (IMGPU_EXTRA_DEBS="libtiff-tools webp libgif7
# libimage-exiftool-perl"): tiffcp, cwebp/dwebp/webpmux/img2webp, exiftool
export PATH=$PATH:$GPU_PREFIX/usr/bin PERL5LIB=$GPU_PREFIX/usr/share/perl5${PERL5LIB:+:$PERL5LIB}
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
# The Python module's CPU-vs-CLI tests again with every op on CUDA (notes/pylib.md): each op of
# test_ops_cli.py etc. runs with device="cuda" against the CLI's --device cuda bytes.
t0=$SECONDS
IMGPU_PYTEST_DEVICE=cuda timeout 300 ctest --test-dir build-gpu -R '^python_module$' --output-on-failure \
  > "$OUT/python_cuda.log" 2>&1
rc=$?
[ "$rc" = 0 ] || { fail=1; tail -40 "$OUT/python_cuda.log"; }
summary="$summary python_module on cuda rc $rc in $((SECONDS - t0)) s;"
# imgpu.dask (python_dask: a LocalCluster of 2 workers against the CLI) with CUDA workers, where
# Debian's Dask was carried (fetch-debs.sh with IMGPU_EXTRA_DEBS, docs/cluster.md): linked for this
# Python by tests/python/dask_pythonpath.sh (only what it lacks). Elsewhere the rounds above show
# python_dask skipped and this step says why.
dask_src=$GPU_PREFIX/usr/lib/python3/dist-packages
if [ -d "$dask_src/distributed" ]; then
  t0=$SECONDS
  dpp=$(sh tests/python/dask_pythonpath.sh "$dask_src" "$py" 2> "$OUT/dask_path.log")
  # Dask 2022.12's GPU diagnostics call .decode() on what this machine's newer pynvml already
  # returns as str (the scheduler does not start): they are turned off, as Dask's config allows
  DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False PYTHONPATH=$dpp IMGPU_PYTEST_DEVICE=cuda timeout 300 \
    ctest --test-dir build-gpu -R '^python_dask$' \
    --output-on-failure > "$OUT/python_dask_cuda.log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || { fail=1; tail -40 "$OUT/python_dask_cuda.log"; }
  grep -q "Skipped" "$OUT/python_dask_cuda.log" && rc="skipped (dask.distributed does not import under $py: dask_path.log)"
  summary="$summary python_dask on cuda rc $rc in $((SECONDS - t0)) s;"
else
  summary="$summary python_dask on cuda: no Dask carried;"
fi
if [ "${DEVICE_SANITIZE:-0}" != 0 ]; then
  # compute-sanitizer: the GPU tests and an imgpu run (robust_gpu.sh; DEVICE_SANITIZE=1), and the
  # viewer's CUDA-GL interop path (8-bit) and its 16-bit display path, each under memcheck,
  # racecheck, synccheck and initcheck (DEVICE_SANITIZE=viewer: the viewer only)
  t0=$SECONDS
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  src=0
  if [ "${DEVICE_SANITIZE}" = 1 ] || [ "${DEVICE_SANITIZE}" = gpu ]; then
    (cd build-gpu && bash ../tests/robust/robust_gpu.sh /tmp/sanitize) > "$OUT/sanitize.log" 2>&1 || src=1
  fi
  [ "${DEVICE_SANITIZE}" = gpu ] || python3 -c "
import cv2, numpy as np
g = np.clip(np.linspace(3160, 10760, 320 * 200).reshape(200, 320), 0, 65535).astype(np.uint16)
cv2.imwrite('/tmp/g16.png', g)"
  tools=(memcheck racecheck synccheck initcheck); [ "${DEVICE_SANITIZE}" = gpu ] && tools=()
  for tool in "${tools[@]}"; do
    for k in interop 16bit; do
      if [ $k = interop ]; then args=(assets/coffee.png --equalize --rotate 17 --histogram);
      else args=(/tmp/g16.png --clahe --rotate 30 --histogram); fi
      timeout 120 "$cs" --tool $tool --error-exitcode 99 build-gpu/imgpu-view "${args[@]}" \
        --snapshot /tmp/cs_$k.png --size 640x400 --context egl --device cuda --frames 3 --stats \
        > /tmp/cs_${tool}_$k.log 2>&1
      r=$?
      [ $r = 0 ] || src=1
      echo "viewer $k $tool: rc=$r $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|display:' /tmp/cs_${tool}_$k.log | tr '\n' ' ')" \
        >> "$OUT/sanitize.log"
    done
  done
  [ "$src" = 0 ] || fail=1
  summary="$summary sanitize rc $src in $((SECONDS - t0)) s;"
fi
if [ "${DEVICE_FLAKE:-0}" -gt 0 ]; then
  # issue 18's flake: viewer_events repeatedly while GPU tests load the same GPU; a failing
  # run keeps its folder (IMGPU_KEEP_TMP) and its log lands in $OUT/flake.log
  t0=$SECONDS
  ( for i in $(seq 1 6); do build-gpu/tests/test_gpu_ops > /dev/null 2>&1; done ) &
  ( for i in $(seq 1 6); do build-gpu/tests/test_gpu_clahe > /dev/null 2>&1; done ) &
  nf=0
  for i in $(seq 1 "$DEVICE_FLAKE"); do
    IMGPU_KEEP_TMP=1 ctest --test-dir build-gpu -R '^viewer_events$' --output-on-failure > /tmp/flake_$i.log 2>&1 ||
      { nf=$((nf + 1)); cat /tmp/flake_$i.log >> "$OUT/flake.log"; }
  done
  kill %1 %2 2>/dev/null; wait 2>/dev/null
  summary="$summary flake $nf/$DEVICE_FLAKE failed in $((SECONDS - t0)) s;"
fi
echo "$summary total $((SECONDS - start)) s"
exit $fail

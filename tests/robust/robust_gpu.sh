#!/usr/bin/env bash
# robust_gpu.sh OUTDIR — the GPU half of issue 7, on the GPU machine, inside build-gpu:
#   bash bench/device.sh bash ../tests/robust/robust_gpu.sh "$OUT"
# Runs the GPU tests, the robustness tests (which include the no-device, device-memory cap and
# injected sticky-fault checks), and the GPU tests under compute-sanitizer memcheck (with leak
# check), racecheck, synccheck and initcheck (IMGPU_TEST_QUICK=1 sizes; test_gpu_clahe with
# IMGPU_TEST_RACE=1), plus one imgpu run per tool and a batch through the session door and
# nvJPEG under memcheck. Logs go to OUTDIR; one summary line per
# step on stdout. Time-boxed: no sanitizer run starts after ROBUST_GPU_BOX seconds (default 420;
# each run is limited to 150 s).
set -u
out=${1:?usage: robust_gpu.sh OUTDIR}
mkdir -p "$out"
start=$SECONDS
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
nvidia-smi -L > "$out/device.txt" 2>&1; head -1 "$out/device.txt"
py=/usr/bin/python3; [ -x $py ] || py=python3
timeout 150 ctest -L gpu -j4 --output-on-failure > "$out/ctest_gpu.log" 2>&1
echo "ctest -L gpu: rc=$? $(grep -E 'tests passed|tests failed' "$out/ctest_gpu.log")"
timeout 150 $py ../tests/robust/robust_faults.py ./imgpu /tmp/rf_tmp ../assets > "$out/robust_faults.log" 2>&1
echo "robust_faults: rc=$? $(tail -1 "$out/robust_faults.log")"; grep -E "FAIL|skipped" "$out/robust_faults.log" | head -5
rm -rf /tmp/rf_tmp
[ -n "$cs" ] || { echo "no compute-sanitizer"; exit 1; }
for tool in memcheck initcheck synccheck racecheck; do
  extra=(); [ $tool = memcheck ] && extra=(--leak-check full)
  for t in tests/test_gpu_ops tests/test_gpu_scan tests/test_gpu_clahe tests/test_gpu_geom tests/test_gpu_tone tests/test_gpu_resize tests/test_gpu_norm "imgpu"; do
    if [ $((SECONDS - start)) -gt "${ROBUST_GPU_BOX:-420}" ]; then echo "$tool $t: not run (time box)"; continue; fi
    name=$(basename "${t%% *}")
    if [ "$t" = imgpu ]; then cmd=(./imgpu rotate ../assets/chelsea.png "$out/r.png" --angle 30 --device cuda); else cmd=(./$t); fi
    # test_gpu_clahe: its small matrix (racecheck takes ~90 s over it on an H100)
    env=(IMGPU_TEST_QUICK=1)
    [ "$name" = test_gpu_clahe ] && env+=(IMGPU_TEST_RACE=1)
    env "${env[@]}" timeout 150 "$cs" --tool $tool "${extra[@]}" --error-exitcode 99 "${cmd[@]}" \
        > "$out/cs_${tool}_$name.log" 2>&1
    echo "$tool $name: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/cs_${tool}_$name.log" | tail -1)"
  done
done
# batch's GPU stage through the session door (sessions, and nvJPEG's decode and encode of the
# assets' JPEGs: IMGPU_NVJPEG_CPU_FIRST=0) under memcheck
if [ $((SECONDS - start)) -gt "${ROBUST_GPU_BOX:-420}" ]; then echo "memcheck batch: not run (time box)"
else
  rm -rf "$out/batch"
  IMGPU_NVJPEG_CPU_FIRST=0 timeout 150 "$cs" --tool memcheck --error-exitcode 99 ./imgpu batch --equalize \
      --device cuda --jobs 4 -o "$out/batch" ../assets > "$out/cs_memcheck_batch.log" 2>&1
  echo "memcheck batch: rc=$? $(grep -E 'ERROR SUMMARY' "$out/cs_memcheck_batch.log" | tail -1) $(grep -E 'done,' "$out/cs_memcheck_batch.log" | tail -1)"
fi
echo "elapsed $((SECONDS - start)) s"

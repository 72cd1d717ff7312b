#!/bin/sh
# run_case.sh — one golden-image test: run an imgpu operation on one backend and compare
# the result with the reviewed expected image through `imgpu compare --max-abs TOL`.
#
#   run_case.sh IMGPU DEVICE TOL EXPECTED WORKDIR NAME INPUT OPERATION [ARGS...]
#
# Runs `IMGPU OPERATION INPUT WORKDIR/NAME.DEVICE.actual.png ARGS... --device DEVICE`.
# Exit 0: within tolerance (the actual output and diff are removed again).
# Exit 1: the operation failed, or the output differs by more than TOL; the actual output
#         and an amplified difference image (`imgpu compare --diff`) stay in WORKDIR and
#         their paths are printed.
# Exit 77 (CTest SKIP_RETURN_CODE): DEVICE is cuda and imgpu said, in so many words, that this
#         machine has no GPU it could use. Only those reasons skip (see NO_GPU below): any
#         other CUDA failure is a real failure and must not hide as a skip.
set -u

if [ $# -lt 8 ]; then
    echo "usage: $0 IMGPU DEVICE TOL EXPECTED WORKDIR NAME INPUT OPERATION [ARGS...]" >&2
    exit 2
fi
imgpu=$1 device=$2 tol=$3 expected=$4 workdir=$5 name=$6 input=$7 op=$8
shift 8

# The reasons for "there is no GPU to run on", as src/backend/ops.c and src/cuda/device.c word them
# (after "no usable GPU: "), with the CUDA runtime's own strings for cudaErrorInsufficientDriver
# and cudaErrorNoDevice. "no usable GPU" alone is not enough: device.c also puts it in front
# of real failures (a probe kernel that fails, a build for the wrong architecture), and those
# must fail, not skip.
NO_GPU='built without CUDA support|no NVIDIA GPU or driver was found|driver version is insufficient|no NVIDIA driver is loaded|no CUDA-capable device|older than this imgpu.s runtime'

mkdir -p "$workdir" || exit 1
actual=$workdir/$name.$device.actual.png
diff=$workdir/$name.$device.diff.png
log=$workdir/$name.$device.log
rm -f "$actual" "$diff" "$log"

echo "+ $imgpu $op $input $actual $* --device $device"
"$imgpu" "$op" "$input" "$actual" "$@" --device "$device" >"$log" 2>&1
rc=$?
cat "$log"
if [ $rc -ne 0 ]; then
    if [ "$device" = cuda ] && [ $rc -eq 1 ] && grep -Eq "$NO_GPU" "$log"; then
        echo "SKIP: no usable GPU"
        rm -f "$log"
        exit 77
    fi
    echo "FAIL: imgpu $op exited with status $rc (log: $log)"
    exit 1
fi
if [ ! -f "$expected" ]; then
    echo "FAIL: expected image $expected is missing (tests/golden/regenerate.sh makes it)"
    echo "      actual output: $actual"
    exit 1
fi

echo "+ $imgpu compare $expected $actual --max-abs $tol --diff $diff"
"$imgpu" compare "$expected" "$actual" --max-abs "$tol" --diff "$diff"
rc=$?
if [ $rc -eq 0 ]; then
    echo "PASS: $name on $device within max-abs $tol"
    rm -f "$actual" "$diff" "$log"
    exit 0
fi
echo "FAIL: $name on $device differs from the golden image by more than max-abs $tol (compare exit $rc)"
echo "      expected: $expected"
echo "      actual:   $actual"
if [ -f "$diff" ]; then
    echo "      diff:     $diff"
else
    echo "      diff:     (not written: the images could not be compared)"
fi
exit 1

#!/bin/sh
# compare_selftest.sh — `imgpu compare` judges every golden test, so check that it can fail:
# identical images pass at --max-abs 0, different images fail at --max-abs 0 and pass at
# --max-abs 255, images of different sizes are refused, and --diff writes a file.
#   compare_selftest.sh IMGPU ASSETS WORKDIR
set -u
imgpu=$1 assets=$2 work=$3
mkdir -p "$work" || exit 1
fail=0
expect() {  # expect STATUS-TEST DESCRIPTION COMMAND...
    want=$1 what=$2
    shift 2
    "$@" >"$work/selftest.out" 2>&1
    rc=$?
    case $want:$rc in zero:0 | nonzero:[1-9]*) ok=1 ;; *) ok=0 ;; esac
    if [ $ok -eq 1 ]; then
        echo "ok   $what (exit $rc)"
    else
        echo "FAIL $what: exit $rc, wanted $want"; cat "$work/selftest.out"; fail=1
    fi
}
expect zero    "identical images, --max-abs 0" "$imgpu" compare "$assets/camera.png" "$assets/camera.png" --max-abs 0
expect nonzero "different images, --max-abs 0" "$imgpu" compare "$assets/camera.png" "$assets/brick.png" --max-abs 0
expect zero    "different images, --max-abs 255" "$imgpu" compare "$assets/camera.png" "$assets/brick.png" --max-abs 255
expect nonzero "different sizes are refused" "$imgpu" compare "$assets/camera.png" "$assets/clock_motion.png"
rm -f "$work/selftest.diff.png"
"$imgpu" compare "$assets/camera.png" "$assets/brick.png" --diff "$work/selftest.diff.png" >/dev/null 2>&1
if [ -s "$work/selftest.diff.png" ]; then echo "ok   --diff writes an image"; else echo "FAIL --diff wrote nothing"; fail=1; fi
rm -f "$work/selftest.out" "$work/selftest.diff.png"
exit $fail

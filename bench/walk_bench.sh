#!/usr/bin/env bash
# bench/walk_bench.sh [BUILD] [N] — the JPEG scan walk (imgpu-bench-walk) on one core over N (12)
# of bench/python_bench.py's 4K q92 JPEGs, written once under $BENCH_DIR (default /tmp/walkbench).
# Needs Debian's python3 with cv2 and numpy (/usr/bin/python3).
set -eu
build=${1:-build}; n=${2:-12}
d=${BENCH_DIR:-/tmp/walkbench}
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$here" /usr/bin/python3 -c 'import sys, python_bench; python_bench.write_jpegs(int(sys.argv[1]), sys.argv[2])' "$n" "$d"
"$build/imgpu-bench-walk" -r "${REPS:-9}" $(ls "$d"/*.jpg | head -n "$n")

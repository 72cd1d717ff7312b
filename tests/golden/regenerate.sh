#!/bin/sh
# regenerate.sh — rewrite the golden images in tests/golden/ from tests/golden/cases.txt.
#
#   tests/golden/regenerate.sh build/imgpu [PATTERN]
#
# PATTERN (a shell glob on case names, default *) picks the cases to rewrite. Never run by
# the test suite or CI: run it by hand when a change to imgpu is *meant* to change an output,
# look at the new images and at `git diff --stat tests/golden`, and commit only reviewed
# changes. Case sources:
#   opencv  the input decoded by OpenCV's imread for a JPEG (libjpeg-turbo, as imgpu decodes
#           it), by stb_image for the other formats (stb_decode.c, built here with the
#           system's libstb-dev headers), then equalized by OpenCV (make_golden.py,
#           opencv_ref.py) under Debian's /usr/bin/python3: independent of imgpu's code.
#   cpu     imgpu's CPU backend: `IMGPU OP INPUT OUT ARGS --device cpu --png-level 9`.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 path/to/imgpu [PATTERN]" >&2
    exit 2
fi
imgpu=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
pattern=${2:-*}
here=$(cd "$(dirname "$0")" && pwd)
assets=$(cd "$here/../../assets" && pwd)
python=${IMGPU_PYTHON3:-/usr/bin/python3}
[ -x "$imgpu" ] || { echo "regenerate.sh: $imgpu is not an executable" >&2; exit 2; }
"$python" -c 'import cv2, numpy' || { echo "regenerate.sh: $python lacks cv2/numpy (apt-get install python3-opencv python3-numpy)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stb_inc=$(for d in /usr/include/stb /usr/local/include/stb /usr/include; do [ -f "$d/stb_image.h" ] && echo "$d" && break; done)
[ -n "$stb_inc" ] || { echo "regenerate.sh: stb_image.h not found (apt-get install libstb-dev)" >&2; exit 2; }
${CC:-cc} -O2 -w -I"$stb_inc" "$here/stb_decode.c" -o "$tmp/stb_decode" -lm

grep -v '^[[:space:]]*#' "$here/cases.txt" | grep -v '^[[:space:]]*$' |
while read -r name source gpu_tol asset op args; do
    case $name in $pattern) ;; *) continue ;; esac
    out=$here/$name.png
    case $source in
    opencv)
        # shellcheck disable=SC2086  # args is a word list by design
        "$python" "$here/make_golden.py" "$tmp/stb_decode" "$assets/$asset" "$out" "$op" $args ;;
    cpu)
        # shellcheck disable=SC2086
        "$imgpu" "$op" "$assets/$asset" "$out" $args --device cpu --png-level 9 ;;
    *)
        echo "regenerate.sh: $name: unknown source '$source'" >&2
        exit 1 ;;
    esac
    printf '%-40s %-6s %8d bytes\n' "$name" "$source" "$(wc -c <"$out")"
done
echo "done; review the images and \`git diff --stat tests/golden\` before committing"
